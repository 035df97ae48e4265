//! The spec engine on the Chinese fixture novel `tests/fixtures/spec/project` (青云志异, 第 2 卷,
//! 已完成第 33 章): the glossary, rule diff, change propagation, retirement protection.

use std::cell::RefCell;
use std::path::{Path, PathBuf};

use novel_core::model::{
    ChangelogEntry, ChapterContract, Character, ForeshadowingGlobal, Relationships,
    StorylineSchedule, Storylines, WorldRules,
};
use novel_core::ops::{self, Context, NameIndex};
use novel_core::spec::diff::{ChangeKind, diff_characters, diff_rules, text_diff};
use novel_core::spec::glossary::{Glossary, TermSource, doc_terms, glossary_phrases};
use novel_core::spec::names::{NameMatch, NameSet, in_entry, in_text};
use novel_core::spec::propagate::{HitReason, Propagation, PropagationInputs, propagate};
use novel_core::spec::retire::{
    Protection, RetireInputs, RetirementCheck, check_retirement, end_relationships, retire_state,
};
use novel_core::spec::{Loaded, Located};
use serde_json::{Value, json};

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/spec")
}

fn read(rel: &str) -> String {
    std::fs::read_to_string(fixtures().join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

fn load<T: serde::de::DeserializeOwned>(rel: &str) -> T {
    serde_json::from_str(&read(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

const SLUGS: [&str; 7] = [
    "lu-chen",
    "zhao-qian",
    "qian-lao",
    "sun-li",
    "li-si",
    "su-wan",
    "su-wan-er",
];

fn characters() -> Vec<Located<Character>> {
    SLUGS
        .iter()
        .map(|s| {
            let file = format!("characters/active/{s}.json");
            Located {
                value: load(&format!("project/{file}")),
                file,
                volume: None,
            }
        })
        .collect()
}

fn chapter_contracts() -> Vec<Located<ChapterContract>> {
    [(1, 10), (2, 34), (2, 35), (2, 36), (3, 61)]
        .iter()
        .map(|(v, n)| {
            let file = format!("volumes/vol-{v:02}/chapter-contracts/chapter-{n:03}.json");
            Located {
                value: load(&format!("project/{file}")),
                file,
                volume: Some(*v),
            }
        })
        .collect()
}

fn glossary(chars: &[Located<Character>], rules: &WorldRules) -> Glossary {
    let cs: Vec<&Character> = chars.iter().map(|c| &c.value).collect();
    let ids: Vec<&str> = rules.rules.iter().map(|r| r.id.as_str()).collect();
    let docs = [
        read("project/world/magic.md"),
        read("project/world/geography.md"),
    ];
    let docs: Vec<&str> = docs.iter().map(String::as_str).collect();
    let storylines: Storylines = load("project/storylines/storylines.json");
    Glossary::from_project(&cs, &ids, &docs, Some(&storylines))
}

/// Words of the fixture's rule sentences that novel-text's segmenter finds besides the
/// glossary (修炼者、浓度、藏经阁 …): what the fake extractor knows, so the propagation tests see
/// the same phrases as the binary does.
#[rustfmt::skip]
const VOCABULARY: &[&str] = &[
    "修炼者", "金丹期", "天地灵气", "浓度", "护法", "魔都", "御剑飞行", "夜间", "凡人", "踏入",
    "封印", "法术", "失效", "藏经阁", "出入",
];

/// Stands in for novel-text's key-phrase extractor (core never segments): the glossary terms
/// and [`VOCABULARY`] words of the sentence, longest match, in sentence order.
fn phrases(sentence: &str, g: &Glossary) -> Vec<String> {
    let mut known = g.clone();
    for w in VOCABULARY {
        known.insert(w, TermSource::Extra);
    }
    glossary_phrases(sentence, &known)
}

// ---------------------------------------------------------------- glossary

#[test]
fn glossary_phrases_are_whole_terms_in_sentence_order() {
    let g = Glossary::from_terms(["魔都", "魔都外城", "御剑飞行", "夜间"]);
    assert_eq!(
        glossary_phrases("魔都外城夜间禁止御剑飞行，违者逐出魔都外城", &g),
        ["魔都外城", "夜间", "御剑飞行"]
    );
    assert!(glossary_phrases("如果可以，因为所以", &g).is_empty());
}

#[test]
fn glossary_from_world_docs_headings_bold_and_quotes() {
    let terms = doc_terms(&read("project/world/magic.md"));
    for t in ["修炼体系", "境界", "金丹期", "天地灵气", "护法", "封印之地"] {
        assert!(terms.iter().any(|x| x == t), "{t} not in {terms:?}");
    }
    let rules: WorldRules = load("project/world/rules.json");
    let g = glossary(&characters(), &rules);
    for t in [
        "陆尘",
        "小陆",
        "钱长老",
        "W-002",
        "魔都外城",
        "靖海计划",
        "宗门禁地",
    ] {
        assert!(g.contains(t), "{t}");
    }
}

// ---------------------------------------------------------------- rule diff

#[test]
fn text_diff_marks_changed_characters() {
    assert_eq!(
        text_diff("浓度 ≥ 3级", "浓度 ≥ 5级，须有护法"),
        "浓度 ≥ [-3-]{+5+}级{+，须有护法+}"
    );
}

#[test]
fn rule_diff_by_text_constraint_type_added_and_removed() {
    let before: WorldRules = load("project/world/rules.json");
    let after: WorldRules = load("overlays/world-update/world/rules.json");
    let d = diff_rules(Some(&before), Some(&after));
    let summary: Vec<(&str, ChangeKind, Vec<&str>)> = d
        .iter()
        .map(|c| {
            (
                c.id.as_str(),
                c.kind,
                c.fields.iter().map(String::as_str).collect(),
            )
        })
        .collect();
    assert_eq!(
        summary,
        vec![
            ("W-001", ChangeKind::Changed, vec!["rule"]),
            (
                "W-002",
                ChangeKind::Changed,
                vec!["constraint_type", "exceptions"]
            ),
            ("W-005", ChangeKind::Added, vec![]),
            ("W-003", ChangeKind::Removed, vec![]),
        ],
        "W-004 only had last_verified bumped and is not a change"
    );
    assert_eq!(
        d[0].text_diff.as_deref(),
        Some("修炼者突破金丹期需要天地灵气浓度 ≥ [-3-]{+5+}级{+，且须有护法在侧+}")
    );
    assert_eq!(d[1].text_diff, None);
    assert_eq!(d[3].pointer, "/rules/2");
    // A first rules.json: everything is added.
    assert!(
        diff_rules(None, Some(&after))
            .iter()
            .all(|c| c.kind == ChangeKind::Added)
    );
}

// ---------------------------------------------------------------- propagation

fn world_propagation() -> Propagation {
    let before: WorldRules = load("project/world/rules.json");
    let after: WorldRules = load("overlays/world-update/world/rules.json");
    let chars = characters();
    let contracts = chapter_contracts();
    let g = glossary(&chars, &after);
    propagate(
        diff_rules(Some(&before), Some(&after)),
        Vec::new(),
        PropagationInputs {
            characters: &chars,
            chapter_contracts: &contracts,
            current_volume: 2,
            glossary: &g,
            extract_phrases: &phrases,
        },
    )
}

#[test]
fn world_change_finds_explicit_and_key_phrase_contracts_but_not_unrelated() {
    let p = world_propagation();
    assert_eq!(p.changed_rule_ids, ["W-001", "W-002", "W-003", "W-005"]);
    let ids: Vec<&str> = p
        .affected_character_contracts
        .iter()
        .map(|a| a.contract_id.as_str())
        .collect();
    assert_eq!(ids, ["C-LUCHEN-001", "C-LUCHEN-003"]);
    // C-LUCHEN-001 only by key phrase (金丹期 of W-001), with its evidence.
    let k1 = &p.affected_character_contracts[0];
    assert!(k1.hits.iter().all(|h| h.reason == HitReason::KeyPhrase));
    let h = &k1.hits[0];
    assert_eq!(h.rule_id.as_deref(), Some("W-001"));
    assert_eq!(h.evidence.matched, "金丹期");
    assert_eq!(h.evidence.file, "characters/active/lu-chen.json");
    assert_eq!(h.evidence.pointer, "/contracts/0/rule");
    // C-LUCHEN-003 names W-002 explicitly.
    let k3 = &p.affected_character_contracts[1];
    assert_eq!(k3.hits[0].reason, HitReason::RuleReference);
    assert_eq!(k3.hits[0].evidence.matched, "W-002");
    assert_eq!(k3.hits[0].evidence.pointer, "/contracts/2/rule");
    // C-LUCHEN-002 (智取而非硬碰) and the other characters' contracts must not match.
    assert_eq!(p.affected_characters, ["lu-chen"]);
    let phrases = &p.key_phrases[0];
    assert_eq!(phrases.rule_id, "W-001");
    assert!(phrases.phrases.contains(&"金丹期".to_string()));
    assert!(!phrases.phrases.contains(&"需要".to_string()));
}

#[test]
fn world_change_reports_chapter_contracts_of_current_volume_and_later_only() {
    let p = world_propagation();
    let chapters: Vec<u32> = p
        .affected_chapter_contracts
        .iter()
        .map(|c| c.chapter)
        .collect();
    // 010 is in volume 1 (before the current volume) although it requires W-002 and 陆尘;
    // 035 requires only the unchanged W-004 and 赵乾.
    assert_eq!(chapters, [34, 36, 61]);
    let c34 = &p.affected_chapter_contracts[0];
    assert_eq!(
        c34.file,
        "volumes/vol-02/chapter-contracts/chapter-034.json"
    );
    assert_eq!(c34.hits[0].reason, HitReason::RuleReference);
    assert_eq!(
        c34.hits[0].evidence.pointer,
        "/preconditions/required_world_rules/0"
    );
    let c36 = &p.affected_chapter_contracts[1];
    assert_eq!(c36.hits.len(), 1);
    assert_eq!(c36.hits[0].reason, HitReason::CharacterState);
    assert_eq!(c36.hits[0].character.as_deref(), Some("lu-chen"));
    assert_eq!(
        c36.hits[0].evidence.pointer,
        "/preconditions/character_states/陆尘"
    );
    let c61 = &p.affected_chapter_contracts[2];
    assert_eq!(c61.hits[0].rule_id.as_deref(), Some("W-003"));
}

#[test]
fn character_change_reports_chapters_that_name_the_character() {
    let before = characters();
    let mut after = characters();
    after[0].value = load("overlays/character-update/characters/active/lu-chen.json");
    let b: Vec<&Character> = before.iter().map(|c| &c.value).collect();
    let a: Vec<&Character> = after.iter().map(|c| &c.value).collect();
    let changes = diff_characters(&b, &a);
    assert_eq!(changes.len(), 1);
    assert_eq!(changes[0].id, "lu-chen");
    assert_eq!(changes[0].contracts[0].id, "C-LUCHEN-001");
    assert_eq!(changes[0].contracts[0].kind, ChangeKind::Changed);
    let contracts = chapter_contracts();
    let g = Glossary::default();
    let p = propagate(
        Vec::new(),
        changes,
        PropagationInputs {
            characters: &after,
            chapter_contracts: &contracts,
            current_volume: 2,
            glossary: &g,
            extract_phrases: &phrases,
        },
    );
    assert_eq!(p.changed_character_ids, ["lu-chen"]);
    assert!(p.affected_character_contracts.is_empty());
    let got: Vec<(u32, HitReason, &str)> = p
        .affected_chapter_contracts
        .iter()
        .flat_map(|c| {
            c.hits
                .iter()
                .map(move |h| (c.chapter, h.reason, h.evidence.pointer.as_str()))
        })
        .collect();
    assert_eq!(
        got,
        vec![
            (35, HitReason::CharacterMention, "/objectives/0/description"),
            (
                36,
                HitReason::CharacterState,
                "/preconditions/character_states/陆尘"
            ),
            (36, HitReason::CharacterMention, "/objectives/0/description"),
            (61, HitReason::CharacterMention, "/objectives/0/description"),
        ]
    );
}

/// The fixture's chapter contracts with chapter 35's objective rewritten.
fn contracts_with_objective(text: &str) -> Vec<Located<ChapterContract>> {
    let mut contracts = chapter_contracts();
    let c35 = contracts
        .iter_mut()
        .find(|c| c.value.chapter == 35)
        .unwrap();
    c35.value.objectives[0].description = text.to_string();
    contracts
}

fn su_wan_changed(after: &[Located<Character>]) -> Vec<novel_core::spec::diff::CharacterChange> {
    let before = characters();
    let b: Vec<&Character> = before.iter().map(|c| &c.value).collect();
    let a: Vec<&Character> = after.iter().map(|c| &c.value).collect();
    diff_characters(&b, &a)
}

#[test]
fn character_change_does_not_count_the_name_inside_a_longer_name() {
    let mut after = characters();
    let su_wan = after.iter_mut().find(|c| c.value.id == "su-wan").unwrap();
    su_wan.value.contracts[0].rule = "精通阵法，近身武技也已小成".into();
    let changes = su_wan_changed(&after);
    assert_eq!(changes.len(), 1);
    let g = Glossary::default();
    let run = |text: &str| {
        let contracts = contracts_with_objective(text);
        let p = propagate(
            Vec::new(),
            su_wan_changed(&after),
            PropagationInputs {
                characters: &after,
                chapter_contracts: &contracts,
                current_volume: 2,
                glossary: &g,
                extract_phrases: &phrases,
            },
        );
        // Chapter 34 names 苏婉 in its own right; chapter 35 is the one under test.
        p.affected_chapter_contracts
            .iter()
            .filter(|c| c.chapter == 35)
            .flat_map(|c| {
                c.hits
                    .iter()
                    .map(move |h| (c.chapter, h.evidence.matched.clone()))
            })
            .collect::<Vec<_>>()
    };
    // 苏婉儿 is another character: 苏婉 is not mentioned there.
    assert_eq!(run("苏婉儿取回玉佩"), vec![]);
    // Written as itself it is, also next to the longer name.
    assert_eq!(run("苏婉布阵困住敌人"), vec![(35, "苏婉".to_string())]);
    assert_eq!(run("苏婉儿与苏婉同行"), vec![(35, "苏婉".to_string())]);
    // A slug inside a longer slug is not the character either.
    assert_eq!(run("见 su-wan-er 的档案"), vec![]);
}

fn rules(json: Value) -> WorldRules {
    serde_json::from_value(json).unwrap()
}

fn rule(id: &str, text: &str) -> Value {
    json!({"id": id, "category": "society", "rule": text, "constraint_type": "hard",
           "exceptions": [], "introduced_chapter": 1, "last_verified": 30})
}

#[test]
fn key_phrase_that_is_a_name_does_not_match_inside_a_longer_name() {
    let before = rules(json!({"rules": [rule("W-009", "苏婉可以随意出入藏经阁")]}));
    let after = rules(json!({"rules": [rule("W-009", "苏婉不得离开藏经阁")]}));
    let mut chars = characters();
    let su_wan_er = chars
        .iter_mut()
        .find(|c| c.value.id == "su-wan-er")
        .unwrap();
    su_wan_er.value.contracts = serde_json::from_value(json!([
        {"id": "C-SUWANER-001", "type": "behavior", "rule": "苏婉儿只在夜里出门"}
    ]))
    .unwrap();
    let su_wan = chars.iter_mut().find(|c| c.value.id == "su-wan").unwrap();
    su_wan.value.contracts[0].rule = "苏婉每日午后在藏经阁抄经".into();
    let g = glossary(&chars, &after);
    let p = propagate(
        diff_rules(Some(&before), Some(&after)),
        Vec::new(),
        PropagationInputs {
            characters: &chars,
            chapter_contracts: &[],
            current_volume: 2,
            glossary: &g,
            extract_phrases: &phrases,
        },
    );
    assert!(p.key_phrases[0].phrases.contains(&"苏婉".to_string()));
    let hits: Vec<(&str, &str)> = p
        .affected_character_contracts
        .iter()
        .flat_map(|a| {
            a.hits
                .iter()
                .map(move |h| (a.contract_id.as_str(), h.evidence.matched.as_str()))
        })
        .collect();
    assert!(hits.contains(&("C-SUWAN-001", "苏婉")), "{hits:?}");
    assert!(hits.contains(&("C-SUWAN-001", "藏经阁")), "{hits:?}");
    assert!(
        !hits.iter().any(|(id, _)| *id == "C-SUWANER-001"),
        "苏婉 matched inside 苏婉儿: {hits:?}"
    );
}

#[test]
fn a_changed_rule_without_key_phrases_is_warned_about() {
    let before = rules(json!({"rules": [rule("W-001", "修炼者突破金丹期需要天地灵气浓度 ≥ 3级")]}));
    let after = rules(json!({"rules": [
        rule("W-001", "修炼者突破金丹期需要天地灵气浓度 ≥ 5级"),
        rule("W-007", "如果可以，因为所以"),
    ]}));
    let chars = characters();
    let g = Glossary::default();
    let p = propagate(
        diff_rules(Some(&before), Some(&after)),
        Vec::new(),
        PropagationInputs {
            characters: &chars,
            chapter_contracts: &[],
            current_volume: 2,
            glossary: &g,
            extract_phrases: &phrases,
        },
    );
    assert_eq!(p.changed_rule_ids, ["W-001", "W-007"]);
    assert!(!p.key_phrases[0].phrases.is_empty());
    assert!(p.key_phrases[1].phrases.is_empty());
    assert_eq!(p.warnings.len(), 1, "{:?}", p.warnings);
    assert!(p.warnings[0].contains("W-007"), "{}", p.warnings[0]);
    assert!(p.warnings[0].contains("没有抽出关键短语"));
}

#[test]
fn propagation_asks_the_extractor_only_for_sentences_of_changed_rules() {
    let before = rules(json!({"rules": [
        rule("W-001", "凡人不得踏入宗门禁地"),
        rule("W-002", "丹药每日服用不得超过三枚"),
    ]}));
    let after = rules(json!({"rules": [
        rule("W-001", "凡人不得踏入宗门禁地与藏经阁"),
        rule("W-002", "丹药每日服用不得超过三枚"),
    ]}));
    let asked = RefCell::new(Vec::new());
    let extract = |sentence: &str, _: &Glossary| {
        asked.borrow_mut().push(sentence.to_string());
        vec!["宗门禁地".to_string()]
    };
    let chars = characters();
    let g = Glossary::default();
    let input = PropagationInputs {
        characters: &chars,
        chapter_contracts: &[],
        current_volume: 2,
        glossary: &g,
        extract_phrases: &extract,
    };
    let p = propagate(diff_rules(Some(&before), Some(&after)), Vec::new(), input);
    // The rule after the update, then before it; the unchanged W-002 is not asked about.
    assert_eq!(
        *asked.borrow(),
        ["凡人不得踏入宗门禁地与藏经阁", "凡人不得踏入宗门禁地"]
    );
    assert_eq!(p.key_phrases[0].phrases, ["宗门禁地"], "each phrase once");
    // Nothing changed: the extractor (and a segmenter behind it) is never called.
    asked.borrow_mut().clear();
    let p = propagate(Vec::new(), Vec::new(), input);
    assert!(p.is_empty());
    assert!(asked.borrow().is_empty());
}

#[test]
fn unchanged_characters_are_not_changes() {
    let cs = characters();
    let v: Vec<&Character> = cs.iter().map(|c| &c.value).collect();
    assert!(diff_characters(&v, &v).is_empty());
}

// ---------------------------------------------------------------- names

#[test]
fn name_inside_another_name_is_ambiguous() {
    let cs = characters();
    let cast: Vec<&Character> = cs.iter().map(|c| &c.value).collect();
    let su_wan = NameSet::of(cast.iter().find(|c| c.id == "su-wan").unwrap());
    let others = NameSet::others("su-wan", &cast);
    assert_eq!(
        in_text("苏婉儿的玉佩", &su_wan, &others),
        NameMatch::Ambiguous {
            matched: "苏婉".into(),
            within: "苏婉儿".into()
        }
    );
    assert_eq!(
        in_text("苏婉儿与苏婉同行", &su_wan, &others),
        NameMatch::Certain {
            matched: "苏婉".into()
        }
    );
    assert_eq!(in_entry("苏婉儿", &su_wan, &others), NameMatch::None);
    assert!(matches!(
        in_entry("苏婉（化名）", &su_wan, &others),
        NameMatch::Ambiguous { .. }
    ));
    assert!(matches!(
        in_text("见 su-wan 档案", &su_wan, &others),
        NameMatch::Certain { .. }
    ));
    assert_eq!(
        in_text("su-wan-er 的档案", &su_wan, &others),
        NameMatch::None
    );
}

// ---------------------------------------------------------------- retirement protection

struct World {
    cast: Vec<Located<Character>>,
    global: ForeshadowingGlobal,
    storylines: Loaded<Storylines>,
    schedule: StorylineSchedule,
}

fn world() -> World {
    World {
        cast: characters(),
        global: load("project/foreshadowing/global.json"),
        storylines: Loaded::Parsed(load("project/storylines/storylines.json")),
        schedule: load("project/volumes/vol-02/storyline-schedule.json"),
    }
}

const SCHEDULE: &str = "volumes/vol-02/storyline-schedule.json";

fn check(w: &World, slug: &str) -> RetirementCheck {
    let cast: Vec<&Character> = w.cast.iter().map(|c| &c.value).collect();
    let me = cast.iter().find(|c| c.id == slug).unwrap();
    check_retirement(&RetireInputs {
        character: me,
        cast: &cast,
        foreshadowing: Loaded::Parsed(&w.global),
        storylines: w.storylines.as_ref(),
        schedule: Loaded::Parsed(&w.schedule),
        schedule_file: SCHEDULE,
        last_completed_chapter: 33,
    })
}

fn protections(c: &RetirementCheck) -> Vec<(Protection, bool, &str, &str)> {
    c.blocks
        .iter()
        .map(|b| {
            (
                b.protection,
                b.certain,
                b.evidence.file.as_str(),
                b.evidence.pointer.as_str(),
            )
        })
        .collect()
}

#[test]
fn retire_blocked_by_long_foreshadow_mention() {
    let c = check(&world(), "zhao-qian");
    assert!(!c.allowed);
    assert_eq!(
        protections(&c),
        vec![(
            Protection::A,
            true,
            "foreshadowing/global.json",
            "/foreshadowing/0/history/1/detail"
        )]
    );
    assert_eq!(c.blocks[0].evidence.matched, "赵乾");
    assert!(c.blocks[0].evidence.excerpt.contains("拍卖会"));
}

#[test]
fn retire_blocked_by_dormant_storyline_pov_alias() {
    let c = check(&world(), "qian-lao");
    assert_eq!(
        protections(&c),
        vec![(
            Protection::B,
            true,
            "storylines/storylines.json",
            "/storylines/2/pov_characters/0"
        )]
    );
    assert_eq!(c.blocks[0].evidence.matched, "钱长老");
    assert_eq!(c.linked_storylines, ["qianlao_past"]);
}

#[test]
fn retire_blocked_by_future_convergence_trigger() {
    let c = check(&world(), "sun-li");
    assert_eq!(
        protections(&c),
        vec![(
            Protection::C,
            true,
            SCHEDULE,
            "/convergence_events/1/trigger"
        )]
    );
    assert_eq!(c.blocks[0].evidence.matched, "孙立");
}

#[test]
fn retire_allowed_when_only_short_resolved_or_past_links() {
    // 李四: a short thread, a resolved long thread, a resolved storyline, a convergence
    // event that ended at chapter 33 — none of them protects.
    let c = check(&world(), "li-si");
    assert!(c.allowed, "{:#?}", c.blocks);
    assert!(c.blocks.is_empty());
    assert_eq!(c.linked_storylines, ["lisi_line"]);
}

#[test]
fn protagonist_is_protected_by_storylines_and_convergence() {
    let c = check(&world(), "lu-chen");
    let got = protections(&c);
    assert!(got.contains(&(
        Protection::B,
        true,
        "storylines/storylines.json",
        "/storylines/0/pov_characters/0"
    )));
    assert!(got.contains(&(
        Protection::B,
        true,
        "storylines/storylines.json",
        "/relationships/0/bridges/shared_characters/0"
    )));
    assert!(got.contains(&(
        Protection::C,
        true,
        SCHEDULE,
        "/convergence_events/1/involved_storylines/0"
    )));
    assert!(got.contains(&(
        Protection::C,
        true,
        SCHEDULE,
        "/convergence_events/1/aftermath"
    )));
    assert_eq!(c.linked_storylines, ["jinghai_plan", "main_arc"]);
}

#[test]
fn retire_blocked_conservatively_when_name_is_inside_another_name() {
    let c = check(&world(), "su-wan");
    assert_eq!(
        protections(&c),
        vec![(
            Protection::A,
            false,
            "foreshadowing/global.json",
            "/foreshadowing/3/description"
        )]
    );
    assert!(
        c.blocks[0].reason.contains("苏婉儿"),
        "{}",
        c.blocks[0].reason
    );
    assert!(c.blocks[0].reason.contains("保守"));
    // The longer name itself is a certain hit.
    let c = check(&world(), "su-wan-er");
    assert!(protections(&c)[0].1);
}

#[test]
fn convergence_block_is_unsure_when_the_storyline_link_is_unsure() {
    // The dormant 靖海计划 line lists «苏婉儿（化名）»: for 苏婉 that is 苏婉儿's name, so both
    // the storyline block (B) and the convergence block it leads to (C) are conservative.
    let mut w = world();
    let Loaded::Parsed(s) = &mut w.storylines else {
        unreachable!()
    };
    s.storylines[1].pov_characters = vec!["苏婉儿（化名）".into()];
    let c = check(&w, "su-wan");
    let got = protections(&c);
    assert!(
        got.contains(&(
            Protection::B,
            false,
            "storylines/storylines.json",
            "/storylines/1/pov_characters/0"
        )),
        "{got:?}"
    );
    assert!(
        got.contains(&(
            Protection::C,
            false,
            SCHEDULE,
            "/convergence_events/1/involved_storylines/1"
        )),
        "{got:?}"
    );
    assert!(got.iter().all(|(_, certain, _, _)| !certain), "{got:?}");
    let b = c
        .blocks
        .iter()
        .find(|b| b.protection == Protection::B)
        .unwrap();
    assert_eq!(b.evidence.matched, "苏婉儿");
}

#[test]
fn retire_blocked_conservatively_when_storylines_do_not_parse() {
    let mut w = world();
    w.storylines = Loaded::Broken("第 3 行第 48 列：JSON 不完整".into());
    let c = check(&w, "li-si");
    assert!(!c.allowed);
    let got = protections(&c);
    assert_eq!(
        got,
        vec![
            (Protection::B, false, "storylines/storylines.json", ""),
            (
                Protection::C,
                false,
                SCHEDULE,
                "/convergence_events/1/involved_storylines"
            ),
        ]
    );
    assert!(c.blocks[0].reason.contains("无法解析"));
}

// ---------------------------------------------------------------- retirement through the state engine

fn changelog() -> Vec<ChangelogEntry> {
    read("project/state/changelog.jsonl")
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[test]
fn retirement_is_a_changelog_entry_that_replay_reproduces() {
    let state: Value = load("project/state/current-state.json");
    let (next, entry) = retire_state(&state, "li-si", "李四", 33, "2026-01-03T00:00:00Z");
    assert!(next["characters"].get("li-si").is_none());
    assert_eq!(
        next["characters"]["lu-chen"],
        state["characters"]["lu-chen"]
    );
    assert_eq!(next["state_version"], 3);
    assert_eq!(entry.base_state_version, 2);
    assert_eq!(entry.state_version, 3);
    assert_eq!(serde_json::to_value(entry.source).unwrap(), json!("retire"));
    assert_eq!(entry.applied[0].path, "characters.li-si");
    // The line validates as a changelog entry.
    let line = serde_json::to_value(&entry).unwrap();
    assert!(
        novel_core::validate::check_document("x", novel_core::FileKind::ChangelogEntry, &line)
            .is_empty()
    );

    let mut log = changelog();
    log.push(entry);
    let global: ForeshadowingGlobal = load("project/foreshadowing/global.json");
    let names = NameIndex::default();
    let replayed = ops::replay(
        &log,
        None,
        &global,
        Context {
            names: &names,
            plan: &[],
        },
    )
    .unwrap();
    assert_eq!(ops::diff(&replayed.state, &next), vec![]);
    // Replaying up to before the retirement still has the character.
    let earlier = ops::replay(
        &log[..2],
        None,
        &global,
        Context {
            names: &names,
            plan: &[],
        },
    )
    .unwrap();
    assert!(earlier.state["characters"].get("li-si").is_some());
}

#[test]
fn retirement_takes_effect_from_the_chapter_after_the_last_completed_one() {
    // Chapter 33 is the last completed chapter: the state at 33 is the state chapter 33 was
    // written against, so it still has 李四; the retirement shows from chapter 34 on.
    let state: Value = load("project/state/current-state.json");
    let (next, entry) = retire_state(&state, "li-si", "李四", 33, "t");
    assert_eq!(entry.chapter, 34);
    let mut log = changelog();
    log.push(entry);
    let global: ForeshadowingGlobal = load("project/foreshadowing/global.json");
    let names = NameIndex::default();
    let ctx = Context {
        names: &names,
        plan: &[],
    };
    let at_33 = ops::replay(&log, Some(33), &global, ctx).unwrap();
    assert!(at_33.state["characters"].get("li-si").is_some());
    assert_eq!(ops::state_version(&at_33.state), 2);
    let at_34 = ops::replay(&log, Some(34), &global, ctx).unwrap();
    assert!(at_34.state["characters"].get("li-si").is_none());
    // `state rebuild` (no bound) and `state at` the next chapter agree with the retired state.
    let all = ops::replay(&log, None, &global, ctx).unwrap();
    assert_eq!(ops::diff(&all.state, &next), vec![]);
    assert_eq!(ops::diff(&at_34.state, &next), vec![]);
    // `state history` lists the removal under chapter 34.
    let history = ops::entity_history(&log, "li-si");
    let last = history.last().unwrap();
    assert_eq!((last.chapter, last.state_version), (34, 3));
}

#[test]
fn retiring_a_character_absent_from_the_state_records_the_line_without_a_version_bump() {
    let state: Value = load("project/state/current-state.json");
    let (next, entry) = retire_state(&state, "sun-li", "孙立", 33, "t");
    assert_eq!(next["characters"], state["characters"]);
    assert_eq!(next["state_version"], state["state_version"]);
    assert_eq!(next["last_updated_chapter"], 34);
    assert!(entry.applied.is_empty());
    assert_eq!((entry.base_state_version, entry.state_version), (2, 2));
    let mut log = changelog();
    log.push(entry);
    let global: ForeshadowingGlobal = load("project/foreshadowing/global.json");
    let names = NameIndex::default();
    let replayed = ops::replay(
        &log,
        None,
        &global,
        Context {
            names: &names,
            plan: &[],
        },
    )
    .unwrap();
    assert_eq!(ops::diff(&replayed.state, &next), vec![]);
}

#[test]
fn replay_rejects_a_retire_line_that_is_not_a_whole_entity() {
    let mut log = changelog();
    let mut bad: ChangelogEntry = serde_json::from_value(json!({
        "chapter": 33, "source": "retire", "base_state_version": 2, "state_version": 3,
        "timestamp": "t", "applied": [{"op": "remove", "path": "characters.li-si.location", "value": null}]
    }))
    .unwrap();
    log.push(bad.clone());
    let global: ForeshadowingGlobal = load("project/foreshadowing/global.json");
    let names = NameIndex::default();
    let err = ops::replay(
        &log,
        None,
        &global,
        Context {
            names: &names,
            plan: &[],
        },
    )
    .unwrap_err();
    assert!(err.to_string().contains("E_RETIRE_PATH"), "{err}");
    bad.applied[0].path = "characters.li-si".into();
    *log.last_mut().unwrap() = bad;
    assert!(
        ops::replay(
            &log,
            None,
            &global,
            Context {
                names: &names,
                plan: &[]
            }
        )
        .is_ok()
    );
}

#[test]
fn retirement_ends_relationship_edges() {
    let rels: Relationships = load("project/characters/relationships.json");
    let (next, changed) = end_relationships(&rels, "li-si");
    assert_eq!(changed, ["/relationships/0", "/relationships/2"]);
    let v = serde_json::to_value(&next).unwrap();
    assert_eq!(v["relationships"][0]["status"], "ended");
    assert!(v["relationships"][1].get("status").is_none());
    assert_eq!(v["relationships"][2]["status"], "ended");
}
