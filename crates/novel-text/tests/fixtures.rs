//! The fixture chapters of `tests/fixtures/text/` against the shipped blacklist template:
//! every planted cliché is found where it was planted, nothing else is; the clean control
//! chapter has no finding at all.

use std::path::PathBuf;

use novel_core::model::AiBlacklist;
use novel_core::model::settings::LintThresholds;
use novel_text::lint::{LintReport, Linter};
use novel_text::segment::Document;

fn fixture(name: &str) -> String {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/fixtures/text")
        .join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn lint(name: &str) -> LintReport {
    let list: AiBlacklist =
        serde_json::from_str(include_str!("../../../templates/ai-blacklist.json")).unwrap();
    let linter = Linter::new(&list, &[], LintThresholds::default()).unwrap();
    linter.lint(&Document::new(&fixture(name)))
}

/// (line, column, rule, text of the plant in the excerpt)
const PLANTS: [(usize, usize, &str, &str); 15] = [
    (3, 1, "blacklist/transitions", "然而"),
    (4, 9, "blacklist/body_language", "嘴角微微上扬"),
    (7, 11, "blacklist/descriptions", "空气仿佛"),
    (7, 13, "pattern/as-if-like", "仿佛凝固了一般"),
    (8, 2, "blacklist/body_language", "深吸一口气"),
    (9, 14, "blacklist/body_language", "眼底闪过一丝"),
    (10, 2, "pattern/not-but", "不是普通的仓库，而是"),
    (11, 15, "blacklist/body_language", "骨节分明"),
    (12, 1, "pattern/knows-opener", "他知道，"),
    (14, 1, "pattern/this-moment", "这一刻，"),
    (15, 1, "blacklist/summaries", "或许,这就是"),
    (16, 8, "pattern/em-dash", "——"),
    (17, 12, "blacklist/emotions", "五味杂陈"),
    (19, 7, "blacklist/descriptions", "勾勒出"),
    (20, 1, "repetition/consecutive", "他们躲进"),
];

#[test]
fn every_planted_cliche_is_found_and_nothing_else() {
    let r = lint("planted-cliches.md");
    let got: Vec<(usize, usize, &str)> = r
        .findings
        .iter()
        .map(|f| (f.line.unwrap_or(0), f.col.unwrap_or(0), f.code.as_ref()))
        .collect();
    let want: Vec<(usize, usize, &str)> = PLANTS.iter().map(|p| (p.0, p.1, p.2)).collect();
    assert_eq!(got, want);
    for (f, p) in r.findings.iter().zip(PLANTS) {
        assert!(excerpt(f).contains(p.3), "{f:?} should show {}", p.3);
    }
    // Not found, by design: 命运的齿轮 in the chapter heading (line 1), 嘴角微微上扬 inside “”
    // (line 6), 然而 mid-paragraph (line 13), 安静得可怕 inside 「」 (line 18) — the table
    // above would have them otherwise.
    assert!(!r.summary.pass);
    assert_eq!(r.summary.blacklist.hits, 9);
    // 他们 three times in a row is advice (an opening, not a frame): the blacklist and the
    // patterns fail the chapter, repetition does not.
    assert_eq!(
        (r.summary.repetition.violations, r.summary.repetition.advice),
        (0, 1)
    );
    assert_eq!(
        r.findings[14].severity,
        novel_core::diagnostic::Severity::Warning
    );
    assert!(
        r.summary.failures.iter().all(|f| !f.contains("句式重复")),
        "{:?}",
        r.summary.failures
    );
}

#[test]
fn clean_control_has_no_finding() {
    let r = lint("clean-control.md");
    assert_eq!(r.findings, vec![], "{:?}", r.summary.failures);
    assert!(r.summary.pass);
    assert!(r.summary.chars > 700);
}

fn cast() -> novel_text::names::NameIndex {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/text/cast");
    let mut names = Vec::new();
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    for f in files {
        let c: novel_core::model::Character =
            serde_json::from_str(&std::fs::read_to_string(&f).unwrap()).unwrap();
        for name in std::iter::once(&c.display_name).chain(&c.aliases) {
            names.push(novel_text::names::KnownName {
                name: name.clone(),
                entity: c.id.clone(),
                display: c.display_name.clone(),
            });
        }
    }
    novel_text::names::NameIndex::new(names)
}

#[test]
fn every_planted_name_variant_is_found() {
    use novel_text::names::NameIssueKind::*;
    let doc = Document::new(&fixture("names-planted.md"));
    let issues = cast().check(&doc);
    let got: Vec<(String, String, usize)> = issues
        .iter()
        .map(|i| {
            let kind = match &i.kind {
                NearMiss { of, .. } => format!("near_miss:{of}"),
                SameSurname { like, .. } => format!("same_surname:{like}"),
                Unregistered => "unregistered".to_string(),
            };
            (i.name.clone(), kind, doc.position(i.occurrences[0].start).0)
        })
        .collect();
    let planted = [
        ("林峰", "near_miss:林枫", 6),
        ("苏碗", "near_miss:苏婉", 8),
        ("陆晨", "near_miss:陆尘", 9),
        ("肖炎", "near_miss:萧炎", 12),
        ("林凡", "same_surname:林枫", 14),
        ("赵铁柱", "unregistered", 16),
    ];
    let want: Vec<(String, String, usize)> = planted
        .iter()
        .map(|(a, b, c)| (a.to_string(), b.to_string(), *c))
        .collect();
    // Recall 6/6 and nothing else (aliases 枫哥/小枫 and the word 沉默 are not findings).
    assert_eq!(got, want);
}

#[test]
fn clean_control_has_no_name_finding() {
    let doc = Document::new(&fixture("clean-control.md"));
    assert_eq!(cast().check(&doc), vec![]);
}

fn corpus_cast() -> novel_text::names::NameIndex {
    let cast: Vec<novel_core::model::Character> =
        serde_json::from_str(&fixture("names-corpus-cast.json")).unwrap();
    let names = cast
        .iter()
        .flat_map(|c| {
            std::iter::once(&c.display_name)
                .chain(&c.aliases)
                .map(|name| novel_text::names::KnownName {
                    name: name.clone(),
                    entity: c.id.clone(),
                    display: c.display_name.clone(),
                })
        })
        .collect();
    novel_text::names::NameIndex::new(names)
}

/// Realistic one-character variants planted in `names-corpus.md`, each with the registered
/// name it stands for. The last three are slips the check does not claim to catch (唐山 is
/// not a homophone of 唐三; 凝 and 寒 are not surnames, and a two-character name whose
/// surname changed to a non-surname is too weak to report).
const CORPUS_PLANTS: [(&str, &str); 38] = [
    ("王藤", "王腾"),
    ("顾常歌", "顾长歌"),
    ("林洞", "林动"),
    ("萧焱", "萧炎"),
    ("唐叁", "唐三"),
    ("韩厉", "韩立"),
    ("秦木", "秦牧"),
    ("范贤", "范闲"),
    ("白小醇", "白小纯"),
    ("林风", "林枫"),
    ("方圆", "方源"),
    ("宁阙", "宁缺"),
    ("杨果", "杨过"),
    ("陈平按", "陈平安"),
    ("肖炎", "萧炎"),
    ("叶帆", "叶凡"),
    ("林峰", "林枫"),
    ("苏晓雨", "苏小雨"),
    ("江一明", "江一鸣"),
    ("林天羽", "林天宇"),
    ("王滕", "王腾"),
    ("顾长戈", "顾长歌"),
    ("白晓纯", "白小纯"),
    ("秦沐", "秦牧"),
    ("陈平岸", "陈平安"),
    ("韩丽", "韩立"),
    ("林栋", "林动"),
    ("萧言", "萧炎"),
    ("范娴", "范闲"),
    ("宁雀", "宁缺"),
    ("方元", "方源"),
    ("杨国", "杨过"),
    ("箫炎", "萧炎"),
    ("小鱼", "苏小雨"),
    ("一明", "江一鸣"),
    ("唐山", "唐三"),
    ("凝缺", "宁缺"),
    ("寒立", "韩立"),
];

#[test]
fn name_variant_recall_and_precision_on_the_corpus() {
    use novel_text::names::NameIssueKind::*;
    let doc = Document::new(&fixture("names-corpus.md"));
    let issues = corpus_cast().check(&doc);
    let found: Vec<(String, String)> = issues
        .iter()
        .map(|i| match &i.kind {
            NearMiss { of, .. } => (i.name.clone(), of.clone()),
            SameSurname { like, .. } => (i.name.clone(), format!("同姓:{like}")),
            Unregistered => (i.name.clone(), "未登记".into()),
        })
        .collect();
    let hit = |v: &str, of: &str| found.iter().any(|(n, o)| n == v && o == of);
    let caught = CORPUS_PLANTS.iter().filter(|(v, of)| hit(v, of)).count();
    let false_positives: Vec<&(String, String)> = found
        .iter()
        .filter(|(n, o)| !CORPUS_PLANTS.iter().any(|(v, of)| n == v && o == of))
        .collect();
    let recall = caught as f64 / CORPUS_PLANTS.len() as f64;
    let precision = caught as f64 / found.len() as f64;
    eprintln!(
        "names corpus: recall {caught}/{} = {recall:.2}, precision {caught}/{} = {precision:.2}",
        CORPUS_PLANTS.len(),
        found.len()
    );
    let missed: Vec<&str> = CORPUS_PLANTS
        .iter()
        .filter(|(v, of)| !hit(v, of))
        .map(|p| p.0)
        .collect();
    assert!(recall >= 0.8, "recall {recall:.2}; missed {missed:?}");
    // The misses are the ones the check does not claim to catch, and nothing else. With the
    // segmenter (the binary's build: `cargo test --workspace` unifies the `jieba` feature) 凝缺
    // is caught at its word boundary, while 小鱼 is the dictionary's word for an alias without a
    // surname (issue 43's rule) and jieba reads 一明师兄 as 一/明师/兄 (the candidate crosses a
    // word); without it every character is a word.
    if cfg!(feature = "jieba") {
        assert_eq!(missed, ["小鱼", "一明", "唐山", "寒立"]);
    } else {
        assert_eq!(missed, ["唐山", "凝缺", "寒立"]);
    }
    // Ordinary words in the corpus (天雨路滑, 方圆百里, 一名弟子, 小鱼, 山间林风, 小于, 叶片,
    // 龙族, 一鸣惊人, 天域, 陈旧, 王者, 杨柳, 宁静, 白色, 范围) are not findings.
    assert_eq!(false_positives, Vec::<&(String, String)>::new());
}

/// A passage in the human 网文 register (玄幻 fight, 都市 dialogue) full of conventions that
/// are not LLM tells (沉声道, 话音刚落, 一道身影, 倒吸一口凉气, 全场哗然, 心中暗道, 下一刻,
/// 下意识地, 眼前一亮, 不禁) and of literal look-alikes (忍俊不禁, 弱不禁风, 并不禁止, 抹布,
/// 一只鹰隼, 湖面泛起涟漪, 满满的一碗饭, 浓浓的烟, 承载着万吨重量, 不得不说 and 毫无疑问 in
/// dialogue, 你是不是疯了，而是, 像是一般的庄稼汉): it stays under the blacklist threshold,
/// and no pattern or name check fires.
#[test]
fn genre_control_stays_under_the_threshold() {
    let r = lint("genre-control.md");
    let shown: Vec<String> = r
        .findings
        .iter()
        .map(|f| {
            format!(
                "{}:{} {} {}",
                f.line.unwrap_or(0),
                f.col.unwrap_or(0),
                f.code,
                excerpt(f)
            )
        })
        .collect();
    eprintln!(
        "genre control: {} chars, {} blacklist hits, {:.2}/1000: {shown:#?}",
        r.summary.chars, r.summary.blacklist.hits, r.summary.blacklist.per_1000
    );
    assert!(r.summary.chars >= 1400, "{}", r.summary.chars);
    assert!(r.summary.blacklist.per_1000 < 3.0, "{shown:#?}");
    assert!(r.summary.pass, "{:?}", r.summary.failures);
    assert!(
        r.findings.iter().all(|f| f.code.starts_with("blacklist/")),
        "{shown:#?}"
    );
    let doc = Document::new(&fixture("genre-control.md"));
    // The only findings are true: 秦风 and 赵天霸 are people nobody registered (against the
    // corpus cast 秦风 shares 秦牧's surname). 林家 is a clan, 孙长老 a title; no ordinary word
    // is read as a name, and no near miss is claimed.
    let names = |index: novel_text::names::NameIndex| -> Vec<(String, String)> {
        index
            .check(&doc)
            .into_iter()
            .map(|i| {
                let kind = match i.kind {
                    novel_text::names::NameIssueKind::NearMiss { .. } => "near_miss",
                    novel_text::names::NameIssueKind::SameSurname { .. } => "same_surname",
                    novel_text::names::NameIssueKind::Unregistered => "unregistered",
                };
                (i.name, kind.to_string())
            })
            .collect::<std::collections::BTreeSet<_>>()
            .into_iter()
            .collect()
    };
    let pair = |a: &str, b: &str| (a.to_string(), b.to_string());
    assert_eq!(
        names(cast()),
        [pair("秦风", "unregistered"), pair("赵天霸", "unregistered")]
    );
    assert_eq!(
        names(corpus_cast()),
        [pair("秦风", "same_surname"), pair("赵天霸", "unregistered")]
    );
}

/// The other side: a passage in the 2024–2026 LLM house style (眸底, 骨节分明, 喉间溢出,
/// 尾音上扬, 心照不宣, 石子投入平静的湖面, 按下暂停键, 安静得可怕, 带着几分 …) is far over.
#[test]
fn llm_house_style_is_far_over_the_threshold() {
    let r = lint("llm-style.md");
    let found: Vec<String> = r.findings.iter().map(|f| excerpt(f).to_string()).collect();
    eprintln!(
        "llm style: {} chars, {} blacklist hits, {:.2}/1000",
        r.summary.chars, r.summary.blacklist.hits, r.summary.blacklist.per_1000
    );
    assert!(!r.summary.pass);
    assert!(r.summary.blacklist.per_1000 > 30.0, "{found:#?}");
    for phrase in [
        "空气仿佛",
        "骨节分明",
        "眸底",
        "带着几分",
        "心脏漏跳了一拍",
        "喉间溢出",
        "尾音微微上扬",
        "石子投入平静的湖面",
        "心照不宣",
        "按下了暂停键",
        "安静得可怕",
        "笑意不达眼底",
        "命运的齿轮",
    ] {
        assert!(
            r.findings
                .iter()
                .any(|f| f.code.starts_with("blacklist/") && excerpt(f).contains(phrase)),
            "{phrase} not found: {found:#?}"
        );
    }
}

/// The text a finding quotes.
fn excerpt(f: &novel_core::diagnostic::Diagnostic) -> &str {
    f.excerpt.as_deref().unwrap_or_default()
}
