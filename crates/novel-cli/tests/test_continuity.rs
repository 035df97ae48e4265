//! `novel check continuity` (`docs/orchestration.md` §7) on the fixture novel
//! `tests/fixtures/volume`: each rule on a case of its own, nothing on the clean volume, and the
//! findings of the chapter about to be written in `chapter begin` and the ChapterWriter packet.

use serde_json::{Value, json};

use crate::support::*;

fn findings(doc: &Value) -> Vec<Value> {
    doc["data"]["findings"]
        .as_array()
        .cloned()
        .unwrap_or_default()
}

fn only<'a>(found: &'a [Value], rule: &str) -> Vec<&'a Value> {
    found.iter().filter(|f| f["code"] == rule).collect()
}

#[test]
fn continuity_is_silent_on_the_clean_volume() {
    let (_t, root) = fixture("volume", &[]);
    for args in [
        vec!["check", "continuity", "--volume", "2"],
        vec!["check", "continuity", "--volume", "1"],
        vec!["check", "continuity"],
        vec!["check", "continuity", "--chapter", "4"],
    ] {
        let (exit, doc) = run_json(&root, &args);
        assert_eq!(exit, 0, "{args:?}: {doc}");
        assert_eq!(findings(&doc), Vec::<Value>::new(), "{args:?}");
    }
    // The default is the next chapter's volume.
    let (_, doc) = run_json(&root, &["check", "continuity"]);
    assert_eq!(doc["data"]["volume"], 2);
    assert_eq!(doc["data"]["range"], json!([4, 8]));
    assert_eq!(doc["data"]["contracts_checked"], json!([4, 5, 6, 7, 8]));
}

#[test]
fn precondition_vs_state_names_the_contract_and_the_changelog_line() {
    let (_t, root) = fixture("volume", &["broken"]);
    let (exit, doc) = run_json(&root, &["check", "continuity", "--volume", "2"]);
    assert_eq!(exit, 1, "{doc}");
    assert_eq!(doc["error"]["code"], "E_CONTINUITY");
    let found = findings(&doc);
    let hits = only(&found, "precondition_vs_state");
    assert_eq!(hits.len(), 1, "{found:?}");
    let f = hits[0];
    assert_eq!(f["severity"], "error");
    assert_eq!(f["chapter"], 4);
    assert_eq!(
        f["file"],
        "volumes/vol-02/chapter-contracts/chapter-004.json"
    );
    assert_eq!(f["pointer"], "/preconditions/character_states/陆尘/持有");
    // The state's value came from chapter 1's line (line 2 of the changelog).
    assert_eq!(
        f["related"],
        json!({"file": "state/changelog.jsonl", "pointer": "/1/applied/0"})
    );
    let msg = f["message"].as_str().unwrap();
    assert!(msg.contains("玄铁剑") && msg.contains("青铜残片"), "{msg}");
    assert!(!f["hint"].as_str().unwrap().is_empty());
}

#[test]
fn chain_break_names_both_contracts() {
    let (_t, root) = fixture("volume", &["broken"]);
    let (_, doc) = run_json(&root, &["check", "continuity", "--volume", "2"]);
    let found = findings(&doc);
    let hits = only(&found, "chain_break");
    assert_eq!(hits.len(), 1, "{found:?}");
    let f = hits[0];
    assert_eq!(f["chapter"], 6);
    assert_eq!(
        f["file"],
        "volumes/vol-02/chapter-contracts/chapter-006.json"
    );
    assert_eq!(
        f["pointer"],
        "/preconditions/character_states/许象乾/location"
    );
    assert_eq!(
        f["related"],
        json!({"file": "volumes/vol-02/chapter-contracts/chapter-005.json",
               "pointer": "/postconditions/state_changes/许象乾/location"})
    );
    // Exactly the two contract problems of the overlay: the schedule's are volume check's.
    assert_eq!(found.len(), 2, "{found:?}");
    // One chapter alone: only its own finding.
    let (exit, doc) = run_json(&root, &["check", "continuity", "--chapter", "6"]);
    assert_eq!(exit, 1);
    assert_eq!(findings(&doc).len(), 1);
    let (exit, doc) = run_json(&root, &["check", "continuity", "--chapter", "5"]);
    assert_eq!((exit, findings(&doc).len()), (0, 0), "{doc}");
}

#[test]
fn unrecorded_change_when_no_op_recorded_the_promised_move() {
    let (_t, root) = fixture("volume", &[]);
    // Chapter 3's contract promises 苏婉 goes to 落霞谷; its changelog line never moved her.
    edit_json(
        &root.join("volumes/vol-01/chapter-contracts/chapter-003.json"),
        |c| c["postconditions"]["state_changes"]["苏婉"] = json!({"位置": "落霞谷"}),
    );
    let (exit, doc) = run_json(&root, &["check", "continuity", "--volume", "1"]);
    // A committed chapter: a warning, not an error.
    assert_eq!(exit, 0, "{doc}");
    let found = findings(&doc);
    let hits = only(&found, "unrecorded_change");
    assert_eq!(hits.len(), 1, "{found:?}");
    let f = hits[0];
    assert_eq!(f["severity"], "warning");
    assert_eq!(f["chapter"], 3);
    assert_eq!(f["pointer"], "/postconditions/state_changes/苏婉/位置");
    assert_eq!(
        f["related"],
        json!({"file": "state/changelog.jsonl", "pointer": "/3"})
    );
    assert_eq!(doc["data"]["counts"], json!({"error": 0, "warning": 1}));
    // Recording the move settles it.
    std::fs::write(
        root.join("d.json"),
        r#"{"chapter": 3, "base_state_version": 4, "storyline_id": "main_arc",
            "ops": [{"op": "set", "path": "characters.su-wan.location", "value": "落霞谷"}]}"#,
    )
    .unwrap();
    let (exit, out) = run_json(&root, &["ops", "apply", "d.json", "--manual"]);
    assert_eq!(exit, 0, "{out}");
    let (_, doc) = run_json(&root, &["check", "continuity", "--volume", "1"]);
    assert_eq!(findings(&doc), Vec::<Value>::new());
}

#[test]
fn retired_required_by_a_later_contract() {
    let (_t, root) = fixture("volume", &[]);
    std::fs::create_dir_all(root.join("characters/retired")).unwrap();
    std::fs::rename(
        root.join("characters/active/xu-xiangqian.json"),
        root.join("characters/retired/xu-xiangqian.json"),
    )
    .unwrap();
    let (exit, doc) = run_json(&root, &["check", "continuity", "--volume", "2"]);
    assert_eq!(exit, 1, "{doc}");
    let found = findings(&doc);
    let hits = only(&found, "retired_required");
    let chapters: Vec<u64> = hits
        .iter()
        .map(|f| f["chapter"].as_u64().unwrap())
        .collect();
    assert_eq!(chapters, [5, 6, 7], "{found:?}");
    assert_eq!(
        hits[0]["related"],
        json!({"file": "characters/retired/xu-xiangqian.json", "pointer": ""})
    );
    assert_eq!(hits[0]["pointer"], "/preconditions/character_states/许象乾");
}

#[test]
fn retired_required_when_the_state_says_the_character_died() {
    let (_t, root) = fixture("volume", &[]);
    std::fs::write(
        root.join("d.json"),
        r#"{"chapter": 3, "base_state_version": 4, "storyline_id": "main_arc",
            "ops": [{"op": "set", "path": "characters.xu-xiangqian.status", "value": "死亡"}]}"#,
    )
    .unwrap();
    let (exit, out) = run_json(&root, &["ops", "apply", "d.json", "--manual"]);
    assert_eq!(exit, 0, "{out}");
    let (exit, doc) = run_json(&root, &["check", "continuity", "--volume", "2"]);
    assert_eq!(exit, 1, "{doc}");
    let found = findings(&doc);
    let hits = only(&found, "retired_required");
    assert_eq!(hits.len(), 3, "{found:?}");
    assert!(hits[0]["message"].as_str().unwrap().contains("已死亡"));
    // The line that recorded the death.
    assert_eq!(
        hits[0]["related"],
        json!({"file": "state/changelog.jsonl", "pointer": "/4/applied/0"})
    );
}

#[test]
fn chapter_begin_and_the_writer_packet_carry_the_chapters_findings() {
    let (_t, root) = fixture("volume", &["broken"]);
    edit_json(&root.join(".checkpoint.json"), |cp| {
        cp["orchestrator_state"] = json!("WRITING")
    });
    let (exit, doc) = run_json(&root, &["chapter", "begin", "4"]);
    assert_eq!(exit, 0, "{doc}");
    let c = doc["data"]["continuity"].as_array().unwrap();
    assert_eq!(c.len(), 1, "{doc}");
    assert_eq!(c[0]["code"], "precondition_vs_state");
    let (exit, doc) = run_json(&root, &["context", "chapter-writer", "--chapter", "4"]);
    assert_eq!(exit, 0, "{doc}");
    let sections = doc["data"]["sections"].as_array().unwrap();
    let tags: Vec<&str> = sections
        .iter()
        .map(|s| s["tag"].as_str().unwrap())
        .collect();
    let at = tags
        .iter()
        .position(|t| *t == "continuity")
        .expect("continuity section");
    assert_eq!(tags[at - 2..at], ["chapter_contract", "payoff"], "{tags:?}");
    let text = sections[at]["text"].as_str().unwrap();
    assert!(text.contains("玄铁剑") && text.contains("处理："), "{text}");
    // A chapter without gaps says so in one line.
    let (_, doc) = run_json(&root, &["context", "chapter-writer", "--chapter", "5"]);
    let sections = doc["data"]["sections"].as_array().unwrap();
    let text = sections.iter().find(|s| s["tag"] == "continuity").unwrap()["text"]
        .as_str()
        .unwrap();
    assert!(text.contains("衔接一致"), "{text}");
}
