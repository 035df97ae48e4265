//! `novel ops` and `novel state` on a small Chinese fixture novel.

use std::path::Path;

use serde_json::{Value, json};

use crate::support::*;

fn delta(root: &Path, chapter: u32, base: u64, ops: Value) -> String {
    let rel = format!("staging/state/chapter-{chapter:03}-delta.json");
    write_json(
        &root.join(&rel),
        &json!({"chapter": chapter, "base_state_version": base, "storyline_id": "main_arc", "ops": ops}),
    );
    rel
}

fn apply(root: &Path, rel: &str) -> Value {
    let out = novel(root, &["--json", "ops", "apply", rel]);
    assert_eq!(code(&out), 0, "{}", stdout(&out));
    json(&out)
}

fn chapter1() -> Value {
    json!([
        {"op": "set", "path": "characters.lu-chen.location", "value": "青云镇"},
        {"op": "add", "path": "characters.lu-chen.inventory", "value": "破碎魔杖"},
        {"op": "foreshadow", "path": "ancient_prophecy", "value": "planted", "detail": "梦见预言碎片"}
    ])
}

fn chapter2() -> Value {
    json!([
        {"op": "set", "path": "characters.lu-chen.location", "value": "魔都外城"},
        {"op": "add", "path": "characters.lu-chen.inventory", "value": "密信"},
        {"op": "inc", "path": "characters.lu-chen.relationships.su-wan", "value": 10}
    ])
}

fn chapter3() -> Value {
    json!([
        {"op": "remove", "path": "characters.lu-chen.inventory", "value": "破碎魔杖"},
        {"op": "inc", "path": "characters.lu-chen.relationships.su-wan", "value": 5},
        {"op": "foreshadow", "path": "ancient_prophecy", "value": "advanced", "detail": "废墟中的符文"}
    ])
}

#[test]
fn three_chapters_then_an_edit_of_chapter_two_replayed() {
    let (_t, root) = new_project();
    let d1 = delta(&root, 1, 0, chapter1());
    let d2 = delta(&root, 2, 1, chapter2());
    let d3 = delta(&root, 3, 2, chapter3());
    for d in [&d1, &d2, &d3] {
        apply(&root, d);
    }
    let state = read_json(&root.join("state/current-state.json"));
    assert_eq!(state["state_version"], 3);
    assert_eq!(state["characters"]["lu-chen"]["inventory"], json!(["密信"]));
    assert_eq!(
        state["characters"]["lu-chen"]["relationships"]["su-wan"],
        15
    );
    let global = read_json(&root.join("foreshadowing/global.json"));
    assert_eq!(global["foreshadowing"][0]["status"], "advanced");
    assert_eq!(
        global["foreshadowing"][0]["history"]
            .as_array()
            .unwrap()
            .len(),
        2
    );
    assert_eq!(
        code(&novel(&root, &["state", "rebuild"])),
        0,
        "log and state agree"
    );
    assert_eq!(
        code(&novel(&root, &["validate"])),
        0,
        "{}",
        stdout(&novel(&root, &["validate"]))
    );

    // The author rewrote chapter 2: 陆尘 now goes to 城北废墟 and picks up a 玉佩 instead.
    let d2b = delta(
        &root,
        2,
        1,
        json!([
            {"op": "set", "path": "characters.lu-chen.location", "value": "城北废墟"},
            {"op": "add", "path": "characters.lu-chen.inventory", "value": "玉佩"},
            {"op": "inc", "path": "characters.lu-chen.relationships.su-wan", "value": 20}
        ]),
    );
    // Dry run shows the difference and exits 1 without touching anything.
    let before = std::fs::read_to_string(root.join("state/current-state.json")).unwrap();
    let dry = novel(
        &root,
        &["--json", "state", "rebuild", "--until-chapter", "1"],
    );
    assert_eq!(code(&dry), 1);
    assert_eq!(json(&dry)["error"]["code"], "E_STATE_DIFFERS");
    assert_eq!(
        std::fs::read_to_string(root.join("state/current-state.json")).unwrap(),
        before
    );

    let out = novel(
        &root,
        &[
            "--json",
            "state",
            "rebuild",
            "--until-chapter",
            "1",
            "--write",
        ],
    );
    assert_eq!(code(&out), 0, "{}", stdout(&out));
    let doc = json(&out);
    assert_eq!(doc["data"]["changelog_truncated"], true);
    assert_eq!(doc["data"]["backups"].as_array().unwrap().len(), 3);
    let state = read_json(&root.join("state/current-state.json"));
    assert_eq!(state["state_version"], 1);
    assert_eq!(state["characters"]["lu-chen"]["location"], "青云镇");
    let global = read_json(&root.join("foreshadowing/global.json"));
    assert_eq!(
        global["foreshadowing"][0]["status"], "planted",
        "advance of chapter 3 undone"
    );

    apply(&root, &d2b);
    // Chapter 3's delta was based on version 2, which it still is.
    apply(&root, &d3);
    let state = read_json(&root.join("state/current-state.json"));
    assert_eq!(state["state_version"], 3);
    assert_eq!(state["characters"]["lu-chen"]["location"], "城北废墟");
    assert_eq!(state["characters"]["lu-chen"]["inventory"], json!(["玉佩"]));
    assert_eq!(
        state["characters"]["lu-chen"]["relationships"]["su-wan"],
        25
    );
    assert_eq!(code(&novel(&root, &["state", "rebuild"])), 0);
    assert_eq!(code(&novel(&root, &["validate"])), 0);

    // History and state-at see the new chapter 2.
    let h = json(&novel(
        &root,
        &["--json", "state", "history", "--entity", "lu-chen"],
    ));
    let chapters: Vec<u64> = h["data"]["changes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["chapter"].as_u64().unwrap())
        .collect();
    assert_eq!(chapters, [1, 1, 2, 2, 2, 3, 3]);
    let at = json(&novel(
        &root,
        &[
            "--json",
            "state",
            "at",
            "--chapter",
            "2",
            "--entity",
            "lu-chen",
        ],
    ));
    assert_eq!(
        at["data"]["state"]["characters"]["inventory"],
        json!(["破碎魔杖", "玉佩"])
    );
    let text = stdout(&novel(
        &root,
        &["state", "history", "--entity", "ancient_prophecy"],
    ));
    assert!(
        text.contains("第 3 章") && text.contains("废墟中的符文"),
        "{text}"
    );
}

#[test]
fn ops_validate_reports_each_rejected_op_and_writes_nothing() {
    let (_t, root) = new_project();
    write_json(
        &root.join("characters/active/lu-chen.json"),
        &json!({"id": "lu-chen", "display_name": "陆尘", "aliases": ["小陆"], "contracts": []}),
    );
    let rel = delta(
        &root,
        1,
        0,
        json!([
            {"op": "set", "path": "characters.lu-chen.location", "value": "青云镇"},
            {"op": "set", "path": "characters.陆尘.location", "value": "青云镇"},
            {"op": "inc", "path": "characters.lu-chen.location", "value": 1},
            {"op": "foreshadow", "path": "ancient_prophecy", "value": "forgotten"}
        ]),
    );
    let before = std::fs::read_to_string(root.join("state/current-state.json")).unwrap();
    let out = novel(&root, &["--json", "ops", "validate", &rel]);
    assert_eq!(code(&out), 1);
    let doc = json(&out);
    assert_eq!(doc["error"]["code"], "E_OPS_REJECTED");
    let rejected = doc["data"]["rejected"].as_array().unwrap();
    let got: Vec<(u64, &str)> = rejected
        .iter()
        .map(|r| (r["index"].as_u64().unwrap(), r["code"].as_str().unwrap()))
        .collect();
    assert_eq!(
        got,
        [
            (1, "E_OP_SEGMENT"),
            (2, "E_OP_TYPE_CONFLICT"),
            (3, "E_FORESHADOW_VALUE")
        ]
    );
    assert!(rejected[0]["hint"].as_str().unwrap().contains("lu-chen"));
    assert_eq!(doc["data"]["accepted"].as_array().unwrap().len(), 1);
    assert_eq!(
        std::fs::read_to_string(root.join("state/current-state.json")).unwrap(),
        before
    );
    assert_eq!(
        std::fs::read_to_string(root.join("state/changelog.jsonl")).unwrap(),
        ""
    );

    // --strict: apply refuses the whole delta.
    let out = novel(&root, &["--json", "ops", "apply", "--strict", &rel]);
    assert_eq!(code(&out), 1);
    assert_eq!(json(&out)["error"]["code"], "E_STRICT");
    assert_eq!(
        std::fs::read_to_string(root.join("state/current-state.json")).unwrap(),
        before
    );
}

#[test]
fn version_mismatch_bom_and_bad_json() {
    let (_t, root) = new_project();
    let rel = delta(&root, 1, 5, chapter1());
    let out = novel(&root, &["--json", "ops", "apply", &rel]);
    assert_eq!(code(&out), 3);
    assert_eq!(json(&out)["error"]["code"], "E_STATE_VERSION");

    // A BOM-prefixed delta is read fine.
    let rel = "staging/state/chapter-001-delta.json";
    let text = serde_json::to_string(&json!({"chapter": 1, "base_state_version": 0, "storyline_id": "main_arc", "ops": chapter1()})).unwrap();
    std::fs::write(root.join(rel), format!("\u{feff}{text}")).unwrap();
    assert_eq!(apply(&root, rel)["data"]["state_version"], 1);

    // Unparseable JSON: exit 1 with line and column for the Summarizer's retry.
    std::fs::write(
        root.join("staging/state/chapter-002-delta.json"),
        "{\"chapter\": 2,\n \"ops\": [}",
    )
    .unwrap();
    let out = novel(
        &root,
        &[
            "--json",
            "ops",
            "validate",
            "staging/state/chapter-002-delta.json",
        ],
    );
    assert_eq!(code(&out), 1);
    let doc = json(&out);
    assert_eq!(doc["error"]["code"], "E_JSON");
    assert_eq!(doc["data"]["line"], 2);
}

#[test]
fn skipped_deltas_are_counted_and_recommend_a_rebuild() {
    let (_t, root) = new_project();
    for ch in 1..=2 {
        let out = json(&novel(
            &root,
            &[
                "--json",
                "ops",
                "skip",
                "--chapter",
                &ch.to_string(),
                "--reason",
                "两次解析失败",
            ],
        ));
        assert_eq!(out["data"]["recommend_rebuild"], false);
    }
    let out = json(&novel(
        &root,
        &[
            "--json",
            "ops",
            "skip",
            "--chapter",
            "3",
            "--reason",
            "两次解析失败",
        ],
    ));
    assert_eq!(out["data"]["skipped_chapters"], json!([1, 2, 3]));
    assert_eq!(out["data"]["recommend_rebuild"], true);
    assert_eq!(
        read_json(&root.join("state/current-state.json"))["state_version"],
        0,
        "a skip changes no state"
    );
    assert_eq!(code(&novel(&root, &["validate"])), 0);
}

#[test]
fn state_ahead_of_changelog_is_refused() {
    let (_t, root) = new_project();
    let path = root.join("state/current-state.json");
    let mut s = read_json(&path);
    s["state_version"] = json!(2);
    write_json(&path, &s);
    let rel = delta(&root, 1, 2, chapter1());
    let out = novel(&root, &["--json", "ops", "apply", &rel]);
    assert_eq!(code(&out), 3);
    assert_eq!(json(&out)["error"]["code"], "E_STATE_DIVERGED");
    let out = novel(&root, &["--json", "state", "rebuild", "--write"]);
    assert_eq!(code(&out), 0);
    assert_eq!(read_json(&path)["state_version"], 0);
}
