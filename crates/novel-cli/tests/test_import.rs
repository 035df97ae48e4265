//! `novel import`: manuscripts in GBK, UTF-16 and as a folder become committed chapters; bad
//! numbering is reported, not guessed; an existing project is never overwritten; the backfill
//! moves chapter by chapter. After each import `novel validate` is clean and `novel count --all`
//! equals the manuscript's 字数.

use std::path::Path;
use std::process::Command;

use serde_json::{Value, json};

use crate::support::*;

/// 都市 snippets, a few lines each (written for these tests).
const PROLOGUE: &str =
    "　　那年冬天，江城下了三十年来最大的一场雪。\n　　陈默站在天桥上，看着车流像一条发光的河。";
const CH1: &str = "　　早上七点，陈默被闹钟吵醒。\n　　他摸到手机，屏幕上是房东发来的消息：“下个月起，房租涨五百。”\n　　他盯着那行字看了很久。";
const CH2: &str = "　　公司楼下的早餐摊还没收。\n　　“老样子？”摊主问。\n　　“老样子，加个蛋。”陈默说。今天他想对自己好一点。";
const CH3: &str = "　　下午三点，部门经理把他叫进办公室。\n　　“项目砍了，”经理说，“你的岗位……”\n　　窗外的雪又下了起来。";
const CH4: &str = "　　他在江边坐到天黑。\n　　手机亮了一下，是一个陌生号码：“陈先生，您的外公给您留了一样东西。”";
const CH5: &str = "　　律师事务所在老城区。\n　　木盒里只有一把铜钥匙，和一张写着地址的纸条。";

/// The manuscript's 字数: `novel_text::count` on its text without the heading lines (a heading
/// is the chapter's title, counted apart by the platforms and by `novel count`).
fn source_chars(text: &str, headings: &[&str]) -> u64 {
    let body: Vec<&str> = text
        .lines()
        .filter(|l| !headings.contains(&l.trim()))
        .collect();
    novel_text::count::count(&body.join("\n")).chars as u64
}

fn write_bytes(path: &Path, bytes: &[u8]) {
    if let Some(p) = path.parent() {
        std::fs::create_dir_all(p).unwrap();
    }
    std::fs::write(path, bytes).unwrap();
}

fn utf16(text: &str, big_endian: bool, bom: bool) -> Vec<u8> {
    let mut out = Vec::new();
    if bom {
        out.extend_from_slice(if big_endian {
            &[0xFE, 0xFF]
        } else {
            &[0xFF, 0xFE]
        });
    }
    for u in text.encode_utf16() {
        out.extend_from_slice(&if big_endian {
            u.to_be_bytes()
        } else {
            u.to_le_bytes()
        });
    }
    out
}

/// After an import: validate is clean and `count --all` is the manuscript's 字数.
fn assert_clean_and_counted(root: &Path, expected_chars: u64) {
    let out = novel(root, &["validate"]);
    assert_eq!(code(&out), 0, "validate: {}{}", stdout(&out), stderr(&out));
    let (c, count) = run_json(root, &["count", "--all"]);
    assert_eq!(c, 0, "{count}");
    assert_eq!(count["data"]["total"], expected_chars, "{count}");
}

fn import_json(cwd: &Path, args: &[&str]) -> (i32, Value) {
    let mut full = vec!["--json", "import"];
    full.extend_from_slice(args);
    let out = novel(cwd, &full);
    (code(&out), json(&out))
}

fn read(root: &Path, rel: &str) -> String {
    std::fs::read_to_string(root.join(rel)).unwrap()
}

#[test]
fn gbk_manuscript_with_chinese_numerals_and_a_prologue_becomes_committed_chapters() {
    let tmp = tempfile::tempdir().unwrap();
    let heads = ["楔子 雪夜", "第一章 房租", "第二章　早餐", "第三章：裁员"];
    let text = format!(
        "{}\n{PROLOGUE}\n\n{}\n{CH1}\n\n{}\n{CH2}\n\n{}\n{CH3}\n",
        heads[0], heads[1], heads[2], heads[3]
    );
    let (gbk, _, _) = encoding_rs::GBK.encode(&text);
    write_bytes(&tmp.path().join("江城.txt"), &gbk);

    let (c, dry) = import_json(tmp.path(), &["江城.txt", "--into", "book", "--dry-run"]);
    assert_eq!(c, 0, "{dry}");
    assert!(
        !tmp.path().join("book").exists(),
        "a dry run writes nothing"
    );
    let rows: Vec<(Value, Value, Value, Value)> = dry["data"]["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["kind"].clone(),
                r["chapter"].clone(),
                r["title"].clone(),
                r["line"].clone(),
            )
        })
        .collect();
    assert_eq!(
        rows,
        [
            (json!("extra"), Value::Null, json!("雪夜"), json!(1)),
            (json!("chapter"), json!(1), json!("房租"), json!(5)),
            (json!("chapter"), json!(2), json!("早餐"), json!(10)),
            (json!("chapter"), json!(3), json!("裁员"), json!(15)),
        ]
    );
    assert_eq!(dry["data"]["source"]["files"][0]["encoding"], "gb18030");

    let (c, doc) = import_json(tmp.path(), &["江城.txt", "--into", "book"]);
    assert_eq!(c, 0, "{doc}");
    let root = tmp.path().join("book");
    let d = &doc["data"];
    assert_eq!(d["imported"], json!([1, 2, 3]));
    assert_eq!(d["orchestrator_state"], "VOL_REVIEW");
    assert_eq!(
        d["backfill"],
        json!({"id": "import-backfill", "type": "import_backfill", "chapters": [1, 2, 3], "next": 1})
    );
    // The heading as written (第二章, its full-width space); the extra with its place.
    assert_eq!(
        read(&root, "chapters/chapter-002.md"),
        format!("# 第二章　早餐\n\n{CH2}\n")
    );
    assert_eq!(
        read(&root, "extras/01-楔子.md"),
        format!("---\nafter_chapter: 0\nrole: extra\n---\n# 楔子 雪夜\n\n{PROLOGUE}\n")
    );
    assert_eq!(read_json(&root.join("novel.json"))["title"], "江城");
    let log = read_json(&root.join("logs/chapter-003-log.json"));
    assert_eq!(log["chars"], novel_text::count::count(CH3).chars);
    assert_clean_and_counted(&root, source_chars(&text, &heads));

    let (_, status) = run_json(&root, &["status"]);
    assert_eq!(status["data"]["last_completed_chapter"], 3);
    assert_eq!(status["data"]["volume"]["range"], json!([1, 3]));
    let (_, next) = run_json(&root, &["next"]);
    assert_eq!(next["data"]["recommendation"]["action"], "import_backfill");
    assert_eq!(next["data"]["recommended"], "import_backfill");
    assert_eq!(next["data"]["options"][0]["flow"], "import-backfill");
}

#[test]
fn utf16_manuscripts_with_volume_headings_map_to_volumes() {
    let heads = [
        "第一卷 风起",
        "第1章 房租",
        "第2章 早餐",
        "第二卷 潜龙",
        "第3章 裁员",
    ];
    let text = format!(
        "{}\n{}\n{CH1}\n{}\n{CH2}\n{}\n{}\n{CH3}\n",
        heads[0], heads[1], heads[2], heads[3], heads[4]
    );
    for (big, bom) in [(false, true), (true, false)] {
        let tmp = tempfile::tempdir().unwrap();
        write_bytes(&tmp.path().join("江城.txt"), &utf16(&text, big, bom));
        let (c, doc) = import_json(
            tmp.path(),
            &["江城.txt", "--into", "book", "--title", "江城往事"],
        );
        assert_eq!(c, 0, "{doc}");
        let enc = if big { "UTF-16BE" } else { "UTF-16LE" };
        assert_eq!(doc["data"]["source"]["files"][0]["encoding"], enc);
        let root = tmp.path().join("book");
        let vol = |v: &str| read_json(&root.join(format!("volumes/{v}/storyline-schedule.json")));
        assert_eq!(vol("vol-01")["chapter_range"], json!([1, 2]));
        assert_eq!(vol("vol-02")["chapter_range"], json!([3, 3]));
        assert_eq!(vol("vol-02")["volume_title"], "潜龙");
        let cp = read_json(&root.join(".checkpoint.json"));
        assert_eq!(
            (
                cp["current_volume"].clone(),
                cp["last_completed_chapter"].clone()
            ),
            (json!(2), json!(3))
        );
        assert_clean_and_counted(&root, source_chars(&text, &heads));
        let (_, status) = run_json(&root, &["status"]);
        let per: Vec<Value> = status["data"]["chars"]["per_volume"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| json!([v["volume"], v["chapters"]]))
            .collect();
        assert_eq!(per, [json!([1, 2]), json!([2, 1])], "{status}");
    }
}

#[test]
fn a_folder_of_chapter_files_imports_in_number_order() {
    let tmp = tempfile::tempdir().unwrap();
    let src = tmp.path().join("稿子");
    write_bytes(&src.join("002.txt"), format!("{CH2}\n").as_bytes());
    write_bytes(
        &src.join("001.txt"),
        format!("# 房租\n\n{CH1}\n").as_bytes(),
    );
    write_bytes(&src.join("第3章 裁员.md"), CH3.as_bytes());
    write_bytes(&src.join("楔子.txt"), PROLOGUE.as_bytes());
    write_bytes(&src.join(".hidden.txt"), b"not me");
    let (c, doc) = import_json(tmp.path(), &["稿子", "--into", "book"]);
    assert_eq!(c, 0, "{doc}");
    let rows: Vec<(Value, Value, Value)> = doc["data"]["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| (r["chapter"].clone(), r["title"].clone(), r["file"].clone()))
        .collect();
    assert_eq!(
        rows,
        [
            (Value::Null, json!(""), json!("楔子.txt")),
            (json!(1), json!("房租"), json!("001.txt")),
            (json!(2), json!(""), json!("002.txt")),
            (json!(3), json!("裁员"), json!("第3章 裁员.md")),
        ]
    );
    let root = tmp.path().join("book");
    assert_eq!(
        read(&root, "chapters/chapter-001.md"),
        format!("# 第1章 房租\n\n{CH1}\n")
    );
    let all = format!("{PROLOGUE}\n{CH1}\n{CH2}\n{CH3}");
    assert_clean_and_counted(&root, source_chars(&all, &[]));
}

#[test]
fn a_missing_and_a_duplicated_chapter_are_reported_then_renumbered_on_request() {
    let tmp = tempfile::tempdir().unwrap();
    let heads = ["第1章 房租", "第3章 早餐", "第3章 裁员"];
    let text = format!(
        "{}\n{CH1}\n{}\n{CH2}\n{}\n{CH3}\n",
        heads[0], heads[1], heads[2]
    );
    write_bytes(&tmp.path().join("江城.txt"), text.as_bytes());
    for extra in [&["--dry-run"][..], &[]] {
        let mut args = vec!["江城.txt", "--into", "book"];
        args.extend_from_slice(extra);
        let (c, doc) = import_json(tmp.path(), &args);
        assert_eq!(c, 1, "{doc}");
        assert_eq!(doc["error"]["code"], "E_IMPORT_ORDER");
        let problems: Vec<(Value, Value, Value)> = doc["data"]["problems"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| (p["kind"].clone(), p["chapter"].clone(), p["line"].clone()))
            .collect();
        assert_eq!(
            problems,
            [
                (json!("gap"), json!(3), json!(5)),
                (json!("duplicate"), json!(3), json!(9))
            ]
        );
        assert_eq!(doc["data"]["rows"].as_array().unwrap().len(), 3);
        assert!(
            !tmp.path().join("book").exists(),
            "nothing written on a refusal"
        );
    }
    let human = novel(tmp.path(), &["import", "江城.txt", "--into", "book"]);
    assert!(
        stdout(&human)
            .contains("江城.txt:5: E_IMPORT_ORDER[错误]: 缺第 2 章：第 1 章之后是第 3 章"),
        "{}",
        stdout(&human)
    );
    assert!(stderr(&human).contains("--renumber"), "{}", stderr(&human));

    let (c, doc) = import_json(tmp.path(), &["江城.txt", "--into", "book", "--renumber"]);
    assert_eq!(c, 0, "{doc}");
    assert_eq!(doc["data"]["imported"], json!([1, 2, 3]));
    assert_eq!(doc["data"]["rows"][2]["source_number"], 3);
    let root = tmp.path().join("book");
    assert_eq!(
        read(&root, "chapters/chapter-003.md"),
        format!("# 第3章 裁员\n\n{CH3}\n")
    );
    assert_clean_and_counted(&root, source_chars(&text, &heads));
}

#[test]
fn reimport_never_overwrites_says_what_it_skips_and_imports_the_rest() {
    let tmp = tempfile::tempdir().unwrap();
    let heads = [
        "第1章 房租",
        "第2章 早餐",
        "第3章 裁员",
        "第4章 来电",
        "第5章 钥匙",
    ];
    let first = format!(
        "{}\n{CH1}\n{}\n{CH2}\n{}\n{CH3}\n",
        heads[0], heads[1], heads[2]
    );
    write_bytes(&tmp.path().join("上.txt"), first.as_bytes());
    let (c, doc) = import_json(tmp.path(), &["上.txt", "--into", "book"]);
    assert_eq!(c, 0, "{doc}");
    let root = tmp.path().join("book");
    // The author edited chapter 2 since: the re-import must not touch it.
    std::fs::write(
        root.join("chapters/chapter-002.md"),
        format!("# 第2章 早餐\n\n{CH2}改过。\n"),
    )
    .unwrap();
    let edited = read(&root, "chapters/chapter-002.md");
    let whole = format!("{first}{}\n{CH4}\n{}\n{CH5}\n", heads[3], heads[4]);
    write_bytes(&tmp.path().join("全.txt"), whole.as_bytes());

    let (c, dry) = import_json(&root, &["../全.txt", "--dry-run"]);
    assert_eq!(c, 0, "{dry}");
    assert_eq!(
        (
            dry["data"]["skipped"].clone(),
            dry["data"]["imported"].clone()
        ),
        (json!([1, 2, 3]), json!([4, 5]))
    );
    assert_eq!(dry["data"]["rows"][0]["action"], "skip");
    assert_eq!(
        dry["data"]["rows"][0]["reason"],
        "项目已完成到第 3 章，第 1 章已在项目中"
    );
    let human = stdout(&novel(&root, &["import", "../全.txt", "--dry-run"]));
    assert!(
        human.contains("跳过：项目已完成到第 3 章，第 2 章已在项目中"),
        "{human}"
    );

    let (c, doc) = import_json(&root, &["../全.txt"]);
    assert_eq!(c, 0, "{doc}");
    assert_eq!(read(&root, "chapters/chapter-002.md"), edited);
    assert_eq!(
        read(&root, "chapters/chapter-005.md"),
        format!("# 第5章 钥匙\n\n{CH5}\n")
    );
    assert_eq!(doc["data"]["backfill"]["chapters"], json!([1, 2, 3, 4, 5]));
    let edited_chars = novel_text::count::count("改过。").chars as u64;
    assert_clean_and_counted(&root, source_chars(&whole, &heads) + edited_chars);

    // Nothing new: nothing written, still exit 0.
    let (c, again) = import_json(&root, &["../全.txt"]);
    assert_eq!(
        (
            c,
            again["data"]["imported"].clone(),
            again["data"]["written"].clone()
        ),
        (0, json!([]), Value::Null)
    );
}

fn backfill_files(root: &Path, n: u32, base: u64) -> String {
    write_bytes(
        &root.join(format!("summaries/chapter-{n:03}-summary.md")),
        format!("---\nchapter: {n}\nstoryline_id: main_arc\n---\n第 {n} 章摘要。\n").as_bytes(),
    );
    let rel = format!("staging/candidates/chapter-{n:03}-delta.json");
    std::fs::create_dir_all(root.join("staging/candidates")).unwrap();
    write_json(
        &root.join(&rel),
        &json!({"chapter": n, "base_state_version": base, "storyline_id": "main_arc",
            "ops": [{"op": "set", "path": "characters.chen-mo.location", "value": format!("江城{n}")}]}),
    );
    rel
}

#[test]
fn the_backfill_applies_deltas_in_chapter_order_and_moves_on() {
    let tmp = tempfile::tempdir().unwrap();
    let text = format!("第1章 房租\n{CH1}\n第2章 早餐\n{CH2}\n第3章 裁员\n{CH3}\n");
    write_bytes(&tmp.path().join("江城.txt"), text.as_bytes());
    assert_eq!(
        import_json(tmp.path(), &["江城.txt", "--into", "book"]).0,
        0
    );
    let root = tmp.path().join("book");
    // No new chapter before the imported ones have their deltas (their changelog lines must
    // come first).
    let (c, e) = run_json(&root, &["chapter", "begin", "4"]);
    assert_eq!(
        (c, e["error"]["code"].clone()),
        (3, json!("E_BACKFILL_PENDING")),
        "{e}"
    );
    assert!(
        !root.join(".novel.lock").exists(),
        "refused before the lock"
    );

    let (c, b) = run_json(&root, &["import", "backfill"]);
    assert_eq!(c, 0, "{b}");
    assert_eq!(
        (b["data"]["next"].clone(), b["data"]["left"].clone()),
        (json!(1), json!(3))
    );
    assert_eq!(b["data"]["step"]["missing"].as_array().unwrap().len(), 2);
    assert_eq!(
        b["data"]["step"]["delta"],
        "staging/candidates/chapter-001-delta.json"
    );
    let (c, e) = run_json(&root, &["import", "backfill", "--done", "1"]);
    assert_eq!(
        (c, e["error"]["code"].clone()),
        (1, json!("E_BACKFILL_INCOMPLETE"))
    );

    let rel = backfill_files(&root, 1, 0);
    let (c, applied) = run_json(&root, &["ops", "apply", &rel]);
    assert_eq!(c, 0, "{applied}");
    let (c, e) = run_json(&root, &["import", "backfill", "--done", "2"]);
    assert_eq!(
        (c, e["error"]["code"].clone()),
        (3, json!("E_BACKFILL_ORDER"))
    );
    let (c, done) = run_json(&root, &["import", "backfill", "--done", "1"]);
    assert_eq!(c, 0, "{done}");
    assert_eq!(
        done["data"],
        json!({"done": 1, "left": 2, "next": 2, "finished": false})
    );
    let (_, next) = run_json(&root, &["next"]);
    assert_eq!(next["data"]["recommendation"]["chapter"], 2);
    assert_eq!(
        next["data"]["options"][0]["label"],
        "补全导入的章节：第 2 章"
    );

    // Chapter 2 by ops apply, chapter 3 skipped (its delta would not parse): both count.
    let rel = backfill_files(&root, 2, 1);
    assert_eq!(run_json(&root, &["ops", "apply", &rel]).0, 0);
    assert_eq!(run_json(&root, &["import", "backfill", "--done", "2"]).0, 0);
    backfill_files(&root, 3, 2);
    let (c, s) = run_json(
        &root,
        &["ops", "skip", "--chapter", "3", "--reason", "两次解析失败"],
    );
    assert_eq!(c, 0, "{s}");
    let (c, done) = run_json(&root, &["import", "backfill", "--done", "3"]);
    assert_eq!((c, done["data"]["finished"].clone()), (0, json!(true)));
    let cp = read_json(&root.join(".checkpoint.json"));
    assert_eq!(cp["pending_actions"], json!([]));
    let (_, b) = run_json(&root, &["import", "backfill"]);
    assert_eq!(b["data"]["pending"], false);
    let (c, e) = run_json(&root, &["import", "backfill", "--done", "3"]);
    assert_eq!((c, e["error"]["code"].clone()), (2, json!("E_NO_BACKFILL")));
    let (_, next) = run_json(&root, &["next"]);
    assert_ne!(next["data"]["recommendation"]["action"], "import_backfill");
    let out = novel(&root, &["validate"]);
    assert_eq!(code(&out), 0, "{}", stdout(&out));
    let (c, begun) = run_json(&root, &["chapter", "begin", "4"]);
    assert_eq!(c, 0, "{begun}");
}

#[test]
fn an_import_killed_half_way_is_finished_by_recover() {
    let tmp = tempfile::tempdir().unwrap();
    let bodies = [CH1, CH2, CH3, CH4, CH5];
    let heads: Vec<String> = (1..=10).map(|n| format!("第{n}章 江城{n}")).collect();
    let text: String = heads
        .iter()
        .enumerate()
        .map(|(i, h)| format!("{h}\n{}\n", bodies[i % 5]))
        .collect();
    write_bytes(&tmp.path().join("江城.txt"), text.as_bytes());
    assert_eq!(code(&novel(tmp.path(), &["init", "book"])), 0);
    let root = tmp.path().join("book");
    // 10 chapters + 10 logs + a schedule + the checkpoint = 22 writes, written as a batch (temp
    // files, fsyncs side by side, renames in order): stop after the 15th rename.
    let out = Command::new(bin())
        .args(["import", "../江城.txt"])
        .current_dir(&root)
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .env("NOVEL_FAILPOINT", "commit:15")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(99));
    assert_eq!(
        read_json(&root.join(".checkpoint.json"))["last_completed_chapter"],
        0
    );
    assert!(root.join("chapters/chapter-007.md").exists());
    assert!(!root.join("chapters/chapter-009.md").exists());
    let (c, blocked) = run_json(&root, &["import", "../江城.txt"]);
    assert_eq!(
        (c, blocked["error"]["code"].clone()),
        (3, json!("E_JOURNAL"))
    );
    let (c, rec) = run_json(&root, &["chapter", "recover"]);
    assert_eq!(c, 0, "{rec}");
    assert_eq!(
        read_json(&root.join(".checkpoint.json"))["last_completed_chapter"],
        10
    );
    assert_eq!(
        read(&root, "chapters/chapter-010.md"),
        format!("# 第10章 江城10\n\n{CH5}\n")
    );
    let heads: Vec<&str> = heads.iter().map(String::as_str).collect();
    assert_clean_and_counted(&root, source_chars(&text, &heads));
}

// ---- Issue 29: each "Why" bullet, as the author meets it. ----

/// A manuscript of `n` chapters with `heading(i)` headings and a short distinct body each.
fn book(n: u32, heading: impl Fn(u32) -> String) -> String {
    (1..=n)
        .map(|i| format!("{}\n　　第{i}段正文，雨还在下。\n", heading(i)))
        .collect()
}

/// 一, 二 … 一百二十 as old editions write them (一百十, 一百十一, 一百一).
fn old_numeral(n: u32) -> String {
    let digits = ["", "一", "二", "三", "四", "五", "六", "七", "八", "九"];
    let below_100 = |m: u32, after_hundred: bool| -> String {
        match (m / 10, m % 10) {
            (0, u) => digits[u as usize].to_string(),
            (1, u) if !after_hundred => format!("十{}", digits[u as usize]),
            (t, u) => format!(
                "{}十{}",
                if t == 1 { "" } else { digits[t as usize] },
                digits[u as usize]
            ),
        }
    };
    if n < 100 {
        below_100(n, false)
    } else {
        format!("一百{}", below_100(n - 100, true))
    }
}

#[test]
fn one_bad_byte_or_two_encodings_refuse_the_import_naming_where() {
    let tmp = tempfile::tempdir().unwrap();
    let text = book(40, |i| format!("第{i}章 雨夜{i}"));
    let mut bytes = text.clone().into_bytes();
    let at = bytes.len() / 2;
    let at = (at..).find(|i| bytes[*i] >= 0xE0).unwrap();
    bytes[at..at + 3].copy_from_slice(&[0xFF, b'x', b'y']);
    write_bytes(&tmp.path().join("坏.txt"), &bytes);
    let (c, doc) = import_json(tmp.path(), &["坏.txt", "--into", "book"]);
    assert_eq!(
        (c, doc["error"]["code"].as_str()),
        (1, Some("E_IMPORT_ENCODING")),
        "{doc}"
    );
    let line = 1 + bytes[..at].iter().filter(|b| **b == b'\n').count();
    let a = &doc["data"]["attempts"][0];
    assert_eq!(
        (
            a["encoding"].as_str(),
            a["offset"].as_u64(),
            a["line"].as_u64()
        ),
        (Some("UTF-8"), Some(at as u64), Some(line as u64)),
        "{doc}"
    );
    assert!(
        doc["error"]["message"]
            .as_str()
            .unwrap()
            .contains(&format!("第 {line} 行")),
        "{doc}"
    );
    assert!(!tmp.path().join("book").exists(), "nothing written");
    // --lossy imports it and says how many characters were replaced.
    let (c, doc) = import_json(
        tmp.path(),
        &["坏.txt", "--into", "book", "--lossy", "--dry-run"],
    );
    assert_eq!(c, 0, "{doc}");
    let f = &doc["data"]["source"]["files"][0];
    assert_eq!(
        (f["encoding"].as_str(), f["replaced"].as_u64()),
        (Some("UTF-8"), Some(1)),
        "{doc}"
    );

    // Half UTF-8, half GBK: refused, every encoding tried named.
    let (gbk, _, _) = encoding_rs::GBK.encode(&text);
    let mut mixed = text.clone().into_bytes();
    mixed.extend_from_slice(&gbk);
    write_bytes(&tmp.path().join("混.txt"), &mixed);
    let (c, doc) = import_json(tmp.path(), &["混.txt", "--into", "book"]);
    assert_eq!(
        (c, doc["error"]["code"].as_str()),
        (1, Some("E_IMPORT_ENCODING")),
        "{doc}"
    );
    let tried: Vec<&str> = doc["data"]["attempts"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|a| a["encoding"].as_str())
        .collect();
    assert_eq!(tried, ["UTF-8", "gb18030", "Big5"]);
    assert_eq!(
        doc["data"]["attempts"][0]["line"],
        json!(text.lines().count() + 1)
    );

    // The human output names the encoding it read.
    write_bytes(&tmp.path().join("江城.txt"), &gbk);
    let human = stdout(&novel(
        tmp.path(),
        &["import", "江城.txt", "--into", "book", "--dry-run"],
    ));
    assert!(
        human.contains("编码：江城.txt gb18030（自动识别，可信度"),
        "{human}"
    );
}

#[test]
fn prefixed_headings_are_headings_and_no_chapter_at_all_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    for (name, prefix) in [("正文.txt", "正文 "), ("目录.txt", "《江城》目录 ")] {
        let text = book(3, |i| format!("{prefix}第{}回 雨夜", old_numeral(i)));
        write_bytes(&tmp.path().join(name), text.as_bytes());
        let (c, doc) = import_json(tmp.path(), &[name, "--into", "book", "--dry-run"]);
        assert_eq!(c, 0, "{doc}");
        assert_eq!(doc["data"]["imported"], json!([1, 2, 3]), "{name}: {doc}");
        assert_eq!(
            doc["data"]["rows"][0]["heading"],
            format!("{prefix}第一回 雨夜")
        );
        assert_eq!(doc["data"]["furniture"][0]["kind"], "heading_prefix");
    }
    // No heading the splitter can read: refused, naming what it saw first.
    write_bytes(
        &tmp.path().join("散文.txt"),
        "江城的雨\n　　雨下了三天。\n".as_bytes(),
    );
    let (c, doc) = import_json(tmp.path(), &["散文.txt", "--into", "book"]);
    assert_eq!(
        (c, doc["error"]["code"].as_str()),
        (1, Some("E_IMPORT_NO_CHAPTERS")),
        "{doc}"
    );
    assert!(
        doc["error"]["message"]
            .as_str()
            .unwrap()
            .contains("「江城的雨」"),
        "{doc}"
    );
    assert!(!tmp.path().join("book").exists());
}

#[test]
fn short_numerals_of_old_editions_number_every_chapter() {
    let tmp = tempfile::tempdir().unwrap();
    let text = book(120, |i| format!("第{}回 回目{i}", old_numeral(i)));
    assert!(
        text.contains("第一百十回") && text.contains("第一百十一回") && text.contains("第一百一回")
    );
    write_bytes(&tmp.path().join("三国.txt"), text.as_bytes());
    let (c, doc) = import_json(tmp.path(), &["三国.txt", "--into", "book"]);
    assert_eq!(c, 0, "{doc}");
    assert_eq!(doc["data"]["imported"].as_array().unwrap().len(), 120);
    let root = tmp.path().join("book");
    assert!(read(&root, "chapters/chapter-110.md").starts_with("# 第一百十回 回目110\n"));
    assert!(read(&root, "chapters/chapter-111.md").starts_with("# 第一百十一回 回目111\n"));
    // 廿、卅、百 alone.
    let text = "第廿一回 甲\n甲。\n第廿二回 乙\n乙。\n";
    write_bytes(&tmp.path().join("廿.txt"), text.as_bytes());
    let (c, doc) = import_json(
        tmp.path(),
        &["廿.txt", "--into", "x", "--start", "21", "--dry-run"],
    );
    assert_eq!(
        (c, doc["data"]["imported"].clone()),
        (0, json!([21, 22])),
        "{doc}"
    );
    let text = "第九十九章 甲\n甲。\n第百章 乙\n乙。\n";
    write_bytes(&tmp.path().join("百.txt"), text.as_bytes());
    let (c, doc) = import_json(
        tmp.path(),
        &["百.txt", "--into", "x", "--start", "99", "--dry-run"],
    );
    assert_eq!(
        (c, doc["data"]["imported"].clone()),
        (0, json!([99, 100])),
        "{doc}"
    );
    let text = "第廿九回 甲\n甲。\n第卅回 乙\n乙。\n";
    write_bytes(&tmp.path().join("卅.txt"), text.as_bytes());
    let (c, doc) = import_json(
        tmp.path(),
        &["卅.txt", "--into", "x", "--start", "29", "--dry-run"],
    );
    assert_eq!(
        (c, doc["data"]["imported"].clone()),
        (0, json!([29, 30])),
        "{doc}"
    );
}

#[test]
fn a_missing_heading_is_named_and_a_swallowing_chapter_is_flagged() {
    let tmp = tempfile::tempdir().unwrap();
    // Chapter 3's heading reads as prose (回中): a gap, naming that line.
    let body = "　　雨下了三天，江城的河水涨到了桥洞。".repeat(400);
    let text: String = (1..=8)
        .map(|i| {
            let h = if (3..=7).contains(&i) {
                format!("第{}回中秋夜", old_numeral(i))
            } else {
                format!("第{}回 雨夜", old_numeral(i))
            };
            format!("{h}\n{body}\n")
        })
        .collect();
    write_bytes(&tmp.path().join("缺.txt"), text.as_bytes());
    let (c, doc) = import_json(tmp.path(), &["缺.txt", "--into", "book"]);
    assert_eq!(
        (c, doc["error"]["code"].as_str()),
        (1, Some("E_IMPORT_ORDER")),
        "{doc}"
    );
    let gap = doc["data"]["problems"][0]["message"].as_str().unwrap();
    assert!(gap.contains("缺.txt:5「第三回中秋夜」"), "{gap}");
    // Renumbered, the chapter that swallowed five others is flagged.
    let (c, doc) = import_json(
        tmp.path(),
        &["缺.txt", "--into", "book", "--renumber", "--dry-run"],
    );
    assert_eq!(c, 0, "{doc}");
    let long: Vec<&Value> = doc["data"]["problems"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| p["kind"] == "long_chapter")
        .collect();
    assert_eq!(long.len(), 1, "{doc}");
    assert_eq!(long[0]["code"], "import/long_chapter");
}

#[test]
fn prose_that_starts_like_a_heading_stays_prose() {
    let tmp = tempfile::tempdir().unwrap();
    let text = "第一回 起\n　　第四回中既将薛家母子在荣府内寄居等事略已表明，此回则暂不能写矣。\n第二回 承\n　　第三回合，他一拳打出。\n第二节课下课了。\n第三回 转\n　　第二天清晨，他醒来。\n";
    write_bytes(&tmp.path().join("书.txt"), text.as_bytes());
    let (c, doc) = import_json(tmp.path(), &["书.txt", "--into", "book"]);
    assert_eq!(c, 0, "{doc}");
    assert_eq!(doc["data"]["imported"], json!([1, 2, 3]));
    assert_eq!(
        read(&tmp.path().join("book"), "chapters/chapter-002.md"),
        "# 第二回 承\n\n　　第三回合，他一拳打出。\n第二节课下课了。\n"
    );
}

#[test]
fn every_heading_form_of_the_issue_is_read() {
    let tmp = tempfile::tempdir().unwrap();
    let text = "序\n　　写在前面。\n第 1 章 起\n甲。\n【第二章】 承\n乙。\n第三章 转（一）\n丙一。\n第三章 转（二）\n丙二。\n第4章 合\n丁。\n上架感言\n谢谢。\n完本感言\n再见。\n";
    write_bytes(&tmp.path().join("书.txt"), text.as_bytes());
    let (c, doc) = import_json(tmp.path(), &["书.txt", "--into", "book"]);
    assert_eq!(c, 0, "{doc}");
    let rows: Vec<(Value, Value, Value)> = doc["data"]["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["kind"].clone(),
                r["chapter"].clone(),
                r["heading"].clone(),
            )
        })
        .collect();
    assert_eq!(
        rows,
        [
            (json!("extra"), Value::Null, json!("序")),
            (json!("chapter"), json!(1), json!("第 1 章 起")),
            (json!("chapter"), json!(2), json!("【第二章】 承")),
            (json!("chapter"), json!(3), json!("第三章 转（一）")),
            (json!("chapter"), json!(4), json!("第4章 合")),
            (json!("extra"), Value::Null, json!("上架感言")),
            (json!("extra"), Value::Null, json!("完本感言")),
        ]
    );
    // The paged chapter is one chapter with both pages' text.
    assert_eq!(doc["data"]["rows"][3]["merged"], json!([9]));
    assert_eq!(
        read(&tmp.path().join("book"), "chapters/chapter-003.md"),
        "# 第三章 转（一）\n\n丙一。\n第三章 转（二）\n丙二。\n"
    );
    assert_clean_and_counted(
        &tmp.path().join("book"),
        source_chars(
            text,
            &[
                "序",
                "第 1 章 起",
                "【第二章】 承",
                "第三章 转（一）",
                "第4章 合",
                "上架感言",
                "完本感言",
            ],
        ),
    );
}

#[test]
fn a_folder_of_markdown_chapter_files_with_spaced_headings_imports() {
    let tmp = tempfile::tempdir().unwrap();
    let src = tmp.path().join("章节");
    for (i, body) in [CH1, CH2, CH3].iter().enumerate() {
        let n = i + 1;
        write_bytes(
            &src.join(format!("chapter-{n:03}.md")),
            format!("# 第 {n} 章 标题{n}\n\n{body}\n").as_bytes(),
        );
    }
    let (c, doc) = import_json(tmp.path(), &["章节", "--into", "book"]);
    assert_eq!(c, 0, "{doc}");
    assert_eq!(doc["data"]["imported"], json!([1, 2, 3]));
    assert_eq!(
        read(&tmp.path().join("book"), "chapters/chapter-002.md"),
        format!("# 第 2 章 标题2\n\n{CH2}\n")
    );
}

#[test]
fn a_later_part_of_a_book_imports_from_its_own_chapter_number() {
    let tmp = tempfile::tempdir().unwrap();
    let text: String = (108..=112)
        .map(|i| format!("第{}回 回目{i}\n　　正文{i}。\n", old_numeral(i)))
        .collect();
    let text = format!("第二卷 下\n{text}");
    write_bytes(&tmp.path().join("下.txt"), text.as_bytes());
    let (c, doc) = import_json(tmp.path(), &["下.txt", "--into", "book"]);
    assert_eq!(
        (c, doc["error"]["code"].as_str()),
        (1, Some("E_IMPORT_ORDER")),
        "{doc}"
    );
    assert!(
        doc["error"]["hint"]
            .as_str()
            .unwrap()
            .contains("--start 108"),
        "{doc}"
    );
    let (c, doc) = import_json(tmp.path(), &["下.txt", "--into", "book", "--start", "108"]);
    assert_eq!(c, 0, "{doc}");
    assert_eq!(doc["data"]["imported"], json!([108, 109, 110, 111, 112]));
    let root = tmp.path().join("book");
    assert!(read(&root, "chapters/chapter-110.md").starts_with("# 第一百十回 回目110\n"));
    let out = novel(&root, &["validate"]);
    assert_eq!(code(&out), 0, "{}{}", stdout(&out), stderr(&out));
    let (c, status) = run_json(&root, &["status"]);
    assert_eq!(c, 0, "{status}");
    assert_eq!(status["data"]["last_completed_chapter"], 112);
}

#[test]
fn furniture_is_listed_with_lines_and_stripped_only_on_request() {
    let tmp = tempfile::tempdir().unwrap();
    let text = "第1章 起\n　　雨下了。\n本章未完，请点击下一页继续阅读\nhttp://m.example.com/book/1.html\nPS：求月票！\n第2章 承\n　　天亮了。\n上架感言\n　　谢谢大家。\n第3章 转\n　　走了。\n";
    write_bytes(&tmp.path().join("网文.txt"), text.as_bytes());
    let (c, doc) = import_json(tmp.path(), &["网文.txt", "--into", "book", "--dry-run"]);
    assert_eq!(c, 0, "{doc}");
    let lines: Vec<(Value, Value)> = doc["data"]["furniture"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| (f["line"].clone(), f["kind"].clone()))
        .collect();
    assert_eq!(
        lines,
        [
            (json!(3), json!("ad")),
            (json!(4), json!("url")),
            (json!(5), json!("author_note"))
        ]
    );
    let human = stdout(&novel(
        tmp.path(),
        &["import", "网文.txt", "--into", "book", "--dry-run"],
    ));
    assert!(human.contains("网文.txt:3\t广告\t本章未完"), "{human}");
    // 上架感言 is an extra, not chapter 2's text.
    assert_eq!(doc["data"]["rows"][2]["name"], "上架感言");

    let (c, doc) = import_json(
        tmp.path(),
        &["网文.txt", "--into", "book", "--strip-furniture"],
    );
    assert_eq!(c, 0, "{doc}");
    let root = tmp.path().join("book");
    assert_eq!(
        read(&root, "chapters/chapter-001.md"),
        "# 第1章 起\n\n　　雨下了。\n"
    );
    let side = doc["data"]["written"]["furniture_file"].as_str().unwrap();
    assert_eq!(side, "logs/import-furniture-001-003.txt");
    let kept = read(&root, side);
    for l in [
        "网文.txt:3\t广告\t本章未完，请点击下一页继续阅读",
        "网文.txt:5\t作者的话\tPS：求月票！",
    ] {
        assert!(kept.contains(l), "{kept}");
    }
    assert_eq!(doc["data"]["rows"][0]["chars"], json!(4));
    let out = novel(&root, &["validate"]);
    assert_eq!(code(&out), 0, "{}", stdout(&out));
}
