//! `novel ops` and `novel state` on a small Chinese fixture novel.

use std::path::Path;

use serde_json::{Value, json};

use crate::support::*;

/// Moves the checkpoint on so that `chapter` is the book's next chapter (or an earlier one): a
/// delta or a skip may not run ahead of the chapters written (`E_CHAPTER_AHEAD`).
fn writing(root: &Path, chapter: u32) {
    edit_json(&root.join(".checkpoint.json"), |cp| {
        let done = cp["last_completed_chapter"].as_u64().unwrap_or(0);
        cp["last_completed_chapter"] = json!(done.max(u64::from(chapter.saturating_sub(1))));
    });
}

/// Chapter `chapter`'s delta, staged, with the book at that chapter ([`writing`]).
fn delta(root: &Path, chapter: u32, base: u64, ops: Value) -> String {
    writing(root, chapter);
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
        writing(&root, ch);
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
    writing(&root, 3);
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
    // An empty changelog against a state that says version 2: no rebuild wipes it (N18); with
    // the mistaken state file moved away, the book's nothing-recorded state is written.
    let out = novel(&root, &["--json", "state", "rebuild", "--write"]);
    assert_eq!(code(&out), 2);
    assert_eq!(json(&out)["error"]["code"], "E_CHANGELOG_LOST");
    assert_eq!(read_json(&path)["state_version"], 2);
    std::fs::rename(&path, root.join("state-mistaken.json")).unwrap();
    let out = novel(&root, &["--json", "state", "rebuild", "--write"]);
    assert_eq!(code(&out), 0, "{}", stdout(&out));
    assert_eq!(read_json(&path)["state_version"], 0);
}

fn three_chapters(root: &Path) {
    let d1 = delta(root, 1, 0, chapter1());
    let d2 = delta(root, 2, 1, chapter2());
    let d3 = delta(root, 3, 2, chapter3());
    for d in [&d1, &d2, &d3] {
        apply(root, d);
    }
}

fn backups(root: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(root.join("state/backups"))
        .map(|r| {
            r.map(|e| e.unwrap().file_name().into_string().unwrap())
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names
}

#[test]
fn rebuild_write_repairs_a_torn_or_missing_state_file() {
    let (_t, root) = new_project();
    three_chapters(&root);
    let path = root.join("state/current-state.json");
    let good = std::fs::read_to_string(&path).unwrap();

    std::fs::write(&path, "{ torn").unwrap();
    let dry = novel(&root, &["--json", "state", "rebuild"]);
    assert_eq!(code(&dry), 1, "{}", stdout(&dry));
    let doc = json(&dry);
    assert_eq!(doc["error"]["code"], "E_STATE_DIFFERS");
    assert_eq!(doc["data"]["state_file"], "unusable");
    assert_eq!(doc["data"]["state_differences"][0]["pointer"], "");
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "{ torn", "dry run");

    let out = novel(&root, &["--json", "state", "rebuild", "--write"]);
    assert_eq!(code(&out), 0, "{}", stdout(&out));
    assert_eq!(
        read_json(&path),
        serde_json::from_str::<Value>(&good).unwrap()
    );
    let doc = json(&out);
    let saved = doc["data"]["backups"]
        .as_array()
        .unwrap()
        .iter()
        .find(|b| b.as_str().unwrap().ends_with("state--current-state.json"))
        .expect("the torn file is backed up")
        .as_str()
        .unwrap()
        .to_string();
    assert_eq!(std::fs::read_to_string(root.join(saved)).unwrap(), "{ torn");

    std::fs::remove_file(&path).unwrap();
    let human = novel(&root, &["state", "rebuild"]);
    assert_eq!(code(&human), 1);
    assert!(stdout(&human).contains("文件不存在"), "{}", stdout(&human));
    let out = novel(&root, &["--json", "state", "rebuild", "--write"]);
    assert_eq!(code(&out), 0, "{}", stdout(&out));
    assert_eq!(json(&out)["data"]["state_file"], "missing");
    assert_eq!(
        read_json(&path),
        serde_json::from_str::<Value>(&good).unwrap()
    );
    assert_eq!(code(&novel(&root, &["state", "rebuild"])), 0);
    assert_eq!(code(&novel(&root, &["validate"])), 0);
}

#[test]
fn rebuild_keeps_author_keys_and_authored_thread_history() {
    let (_t, root) = new_project();
    // The author's own key in the state file, and a thread they track by hand: advanced in
    // chapter 1 with a note, and an extra key.
    let path = root.join("state/current-state.json");
    let mut s = read_json(&path);
    s["作者备注"] = json!("第三卷再回收预言");
    write_json(&path, &s);
    write_json(
        &root.join("foreshadowing/global.json"),
        &json!({"foreshadowing": [
            {"id": "ancient_prophecy", "description": "上古预言", "scope": "long", "status": "advanced",
             "planted_chapter": 1, "last_updated_chapter": 1, "作者备注": "主线核心",
             "history": [{"chapter": 1, "action": "advanced", "detail": "作者手记"}]}
        ]}),
    );
    three_chapters(&root);
    let global = read_json(&root.join("foreshadowing/global.json"));
    let thread = &global["foreshadowing"][0];
    assert_eq!(thread["status"], "advanced", "planted does not go back");
    let actions: Vec<(u64, &str)> = thread["history"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| {
            (
                h["chapter"].as_u64().unwrap(),
                h["action"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(actions, [(1, "advanced"), (3, "advanced")]);
    let out = novel(&root, &["--json", "state", "rebuild"]);
    assert_eq!(code(&out), 0, "{}", stdout(&out));
    assert_eq!(read_json(&path)["作者备注"], "第三卷再回收预言");
    // The changelog says the chapter-1 planted op changed nothing.
    let log = std::fs::read_to_string(root.join("state/changelog.jsonl")).unwrap();
    let first: Value = serde_json::from_str(log.lines().next().unwrap()).unwrap();
    assert!(
        first["note"].as_str().unwrap().contains("不回退"),
        "{first}"
    );
    assert_eq!(code(&novel(&root, &["validate"])), 0);
}

#[test]
fn changelog_stays_in_chapter_order_and_state_at_reads_a_prefix() {
    let (_t, root) = new_project();
    three_chapters(&root);
    // A manual correction filed under chapter 2 after chapter 3 is refused…
    let fix = |chapter: u32| {
        let rel = format!("staging/state/manual-{chapter}.json");
        write_json(
            &root.join(&rel),
            &json!({"chapter": chapter, "base_state_version": 3, "storyline_id": "main_arc",
                "ops": [{"op": "set", "path": "characters.lu-chen.location", "value": "幽暗森林"}]}),
        );
        rel
    };
    let out = novel(&root, &["--json", "ops", "apply", "--manual", &fix(2)]);
    assert_eq!(code(&out), 3, "{}", stdout(&out));
    assert_eq!(json(&out)["error"]["code"], "E_CHAPTER_ORDER");
    let out = novel(&root, &["--json", "ops", "validate", &fix(2)]);
    assert_eq!(code(&out), 1);
    assert_eq!(json(&out)["data"]["chapter_order_ok"], false);
    assert_eq!(
        read_json(&root.join("state/current-state.json"))["state_version"],
        3
    );
    // …one at the current chapter is fine, and the state after chapter 2 is still there.
    let out = novel(&root, &["--json", "ops", "apply", "--manual", &fix(3)]);
    assert_eq!(code(&out), 0, "{}", stdout(&out));
    let at = novel(&root, &["--json", "state", "at", "--chapter", "2"]);
    assert_eq!(code(&at), 0, "{}", stdout(&at));
    assert_eq!(json(&at)["data"]["state"]["state_version"], 2);

    // A changelog an older engine wrote, with a line for chapter 2 after chapter 3: the state
    // after chapter 2 is the prefix before the first later line.
    let log_path = root.join("state/changelog.jsonl");
    let log = std::fs::read_to_string(&log_path).unwrap();
    let mut lines: Vec<Value> = log
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    lines[3]["chapter"] = json!(2);
    let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    std::fs::write(&log_path, text).unwrap();
    let at = novel(&root, &["--json", "state", "at", "--chapter", "2"]);
    assert_eq!(code(&at), 0, "{}", stdout(&at));
    assert_eq!(
        json(&at)["data"]["state"]["characters"]["lu-chen"]["location"],
        "魔都外城"
    );
    let out = novel(
        &root,
        &[
            "--json",
            "state",
            "rebuild",
            "--until-chapter",
            "2",
            "--write",
        ],
    );
    assert_eq!(code(&out), 0, "{}", stdout(&out));
    assert_eq!(json(&out)["data"]["entries_replayed"], 2);
    assert_eq!(
        std::fs::read_to_string(&log_path).unwrap().lines().count(),
        2,
        "the changelog is cut at the first later line"
    );
    assert_eq!(code(&novel(&root, &["state", "rebuild"])), 0);
}

#[test]
fn rebuild_to_before_a_thread_was_created_names_it() {
    let (_t, root) = new_project();
    three_chapters(&root);
    let d4 = delta(
        &root,
        4,
        3,
        json!([{"op": "foreshadow", "path": "black_cat", "value": "planted", "detail": "黑猫现身"}]),
    );
    apply(&root, &d4);
    let gpath = root.join("foreshadowing/global.json");
    let mut g = read_json(&gpath);
    g["foreshadowing"][1]["description"] = json!("作者写的：黑猫是师父的化身");
    write_json(&gpath, &g);
    let out = novel(
        &root,
        &["--json", "state", "rebuild", "--until-chapter", "3"],
    );
    assert_eq!(code(&out), 1);
    let doc = json(&out);
    assert_eq!(doc["data"]["dropped_threads"], json!(["black_cat"]));
    let text = stdout(&novel(&root, &["state", "rebuild", "--until-chapter", "3"]));
    assert!(
        text.contains("black_cat") && text.contains("卷伏笔计划"),
        "{text}"
    );
    let out = novel(
        &root,
        &[
            "--json",
            "state",
            "rebuild",
            "--until-chapter",
            "3",
            "--write",
        ],
    );
    assert_eq!(code(&out), 0);
    let backed_up = json(&out)["data"]["backups"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b.as_str().unwrap().to_string())
        .find(|b| b.ends_with("foreshadowing--global.json"))
        .unwrap();
    let old = std::fs::read_to_string(root.join(backed_up)).unwrap();
    assert!(old.contains("黑猫是师父的化身"), "the backup keeps it");
}

#[test]
fn a_delta_on_an_unknown_storyline_is_refused() {
    let (_t, root) = new_project();
    let rel = "staging/state/chapter-001-delta.json";
    write_json(
        &root.join(rel),
        &json!({"chapter": 1, "base_state_version": 0, "storyline_id": "side_arc", "ops": chapter1()}),
    );
    for cmd in ["validate", "apply"] {
        let out = novel(&root, &["--json", "ops", cmd, rel]);
        assert_eq!(code(&out), 1, "{cmd}: {}", stdout(&out));
        let doc = json(&out);
        assert_eq!(doc["error"]["code"], "E_DELTA");
        assert!(
            doc["error"]["message"]
                .as_str()
                .unwrap()
                .contains("/storyline_id")
        );
        assert!(
            doc["error"]["hint"].as_str().unwrap().contains("main_arc"),
            "{doc}"
        );
    }
    assert_eq!(
        std::fs::read_to_string(root.join("state/changelog.jsonl")).unwrap(),
        ""
    );
    // Without a readable storylines file the check cannot be made: said, not skipped.
    std::fs::write(root.join("storylines/storylines.json"), "{ torn").unwrap();
    let ok = delta(&root, 1, 0, chapter1());
    let out = novel(&root, &["--json", "ops", "apply", &ok]);
    assert_eq!(code(&out), 2, "{}", stdout(&out));
    assert_eq!(json(&out)["error"]["code"], "E_STORYLINES");
    assert_eq!(
        read_json(&root.join("state/current-state.json"))["state_version"],
        0
    );
}

#[test]
fn ops_apply_waits_for_no_one_and_takes_the_lock() {
    let (_t, root) = new_project();
    // Someone else (a live process that is not this session) holds the project.
    let other = Alive::new();
    let pid = other.pid().to_string();
    let held = novel(&root, &["--json", "lock", "acquire", "--owner-pid", &pid]);
    assert_eq!(code(&held), 0, "{}", stdout(&held));
    let token = json(&held)["data"]["token"].as_str().unwrap().to_string();
    let d1 = delta(&root, 1, 0, chapter1());
    let out = novel(&root, &["--json", "ops", "apply", &d1]);
    assert_eq!(code(&out), 3, "{}", stdout(&out));
    let doc = json(&out);
    assert_eq!(doc["error"]["code"], "E_LOCKED");
    assert!(
        doc["error"]["message"]
            .as_str()
            .unwrap()
            .contains(&format!("进程 {pid}")),
        "{doc}"
    );
    assert_eq!(
        read_json(&root.join("state/current-state.json"))["state_version"],
        0
    );
    let out = novel(&root, &["--json", "state", "rebuild", "--write"]);
    assert_eq!(code(&out), 3, "rebuild --write takes the lock too");
    assert_eq!(json(&out)["error"]["code"], "E_LOCKED");
    assert_eq!(
        code(&novel(&root, &["lock", "release", "--token", &token])),
        0
    );
    apply(&root, &d1);
    let status = json(&novel(&root, &["--json", "lock", "status"]));
    assert_eq!(status["data"]["state"], "free", "released after the write");
}

#[test]
fn entities_by_display_name_and_unknown_ones_alike() {
    let (_t, root) = new_project();
    write_json(
        &root.join("characters/active/lu-chen.json"),
        &json!({"id": "lu-chen", "display_name": "陆尘", "aliases": ["小陆"], "contracts": []}),
    );
    three_chapters(&root);
    let at = novel(
        &root,
        &[
            "--json",
            "state",
            "at",
            "--chapter",
            "2",
            "--entity",
            "陆尘",
        ],
    );
    assert_eq!(code(&at), 0, "{}", stdout(&at));
    let doc = json(&at);
    assert_eq!(doc["data"]["entity"], "lu-chen");
    assert_eq!(doc["data"]["state"]["characters"]["location"], "魔都外城");
    let h = novel(&root, &["--json", "state", "history", "--entity", "小陆"]);
    assert_eq!(code(&h), 0);
    assert_eq!(json(&h)["data"]["entity"], "lu-chen");
    assert_eq!(json(&h)["data"]["changes"].as_array().unwrap().len(), 7);
    // Unknown: the same exit code from both, with the close ids named.
    for args in [
        vec!["--json", "state", "history", "--entity", "lu-chan"],
        vec![
            "--json",
            "state",
            "at",
            "--chapter",
            "3",
            "--entity",
            "lu-chan",
        ],
    ] {
        let out = novel(&root, &args);
        assert_eq!(code(&out), 1, "{args:?}: {}", stdout(&out));
        let doc = json(&out);
        assert_eq!(doc["error"]["code"], "E_NO_ENTITY");
        assert!(
            doc["error"]["hint"].as_str().unwrap().contains("lu-chen"),
            "{doc}"
        );
    }
    let out = novel(&root, &["--json", "state", "history", "--entity", "陆晨"]);
    assert_eq!(code(&out), 1);
    assert!(
        json(&out)["error"]["hint"]
            .as_str()
            .unwrap()
            .contains("lu-chen（陆尘）")
    );
    assert_eq!(
        code(&novel(&root, &["state", "history", "--entity", "nobody"])),
        1
    );
}

#[test]
fn two_rebuild_writes_in_a_row_keep_every_backup() {
    let (_t, root) = new_project();
    three_chapters(&root);
    let path = root.join("state/current-state.json");
    for broken in ["{ torn", "{ torn again"] {
        std::fs::write(&path, broken).unwrap();
        let out = novel(&root, &["state", "rebuild", "--write"]);
        assert_eq!(code(&out), 0, "{}", stdout(&out));
    }
    let states: Vec<String> = backups(&root)
        .into_iter()
        .filter(|b| b.ends_with("state--current-state.json"))
        .map(|b| std::fs::read_to_string(root.join("state/backups").join(b)).unwrap())
        .collect();
    assert!(
        states.contains(&"{ torn".to_string()) && states.contains(&"{ torn again".to_string()),
        "{states:?}"
    );
}

#[test]
fn a_chapter_zero_delta_applies_and_validates() {
    let (_t, root) = new_project();
    let rel = "staging/state/chapter-000-delta.json";
    write_json(
        &root.join(rel),
        &json!({"chapter": 0, "base_state_version": 0, "storyline_id": "main_arc", "ops": [
            {"op": "set", "path": "characters.lu-chen.location", "value": "青云镇"}
        ]}),
    );
    let out = novel(&root, &["--json", "ops", "apply", "--manual", rel]);
    assert_eq!(code(&out), 0, "{}", stdout(&out));
    let v = novel(&root, &["--json", "validate"]);
    assert_eq!(code(&v), 0, "{}", stdout(&v));
}

/// The opening delta merged twice — once by whoever merged it first, then again from a copy
/// re-based on the new version (what a skill does on `E_STATE_VERSION`) — used to be accepted:
/// the inventory held 守灯钥匙 twice while `validate` and `state rebuild` stayed clean. The same
/// ops for the same chapter already on a changelog line are refused (`E_DELTA_REPEATED`, exit
/// 3) by `ops apply` and named by `ops validate`; a different opening delta (a new character's)
/// still goes in.
#[test]
fn the_same_opening_delta_is_not_merged_twice() {
    let (_t, root) = new_project();
    let opening = json!([
        {"op": "set", "path": "characters.lu-chen.location", "value": "守灯塔"},
        {"op": "add", "path": "characters.lu-chen.inventory", "value": "守灯钥匙"}
    ]);
    std::fs::create_dir_all(root.join("staging/candidates")).unwrap();
    let write = |rel: &str, base: u64, ops: &Value| {
        write_json(
            &root.join(rel),
            &json!({"chapter": 0, "base_state_version": base, "storyline_id": "main_arc", "ops": ops}),
        );
    };
    let first = "staging/candidates/chapter-000-delta.json";
    write(first, 0, &opening);
    let out = novel(&root, &["--json", "ops", "apply", "--manual", first]);
    assert_eq!(code(&out), 0, "{}", stdout(&out));

    // The same ops on the new version.
    let again = "staging/candidates/chapter-000-delta-again.json";
    write(again, 1, &opening);
    let checked = novel(&root, &["--json", "ops", "validate", again]);
    assert_eq!(code(&checked), 1, "{}", stdout(&checked));
    let doc = json(&checked);
    assert_eq!(doc["error"]["code"], "E_DELTA_REPEATED", "{doc}");
    assert_eq!(doc["data"]["would_apply"], false, "{doc}");
    let out = novel(&root, &["--json", "ops", "apply", "--manual", again]);
    assert_eq!(code(&out), 3, "{}", stdout(&out));
    let doc = json(&out);
    assert_eq!(doc["error"]["code"], "E_DELTA_REPEATED", "{doc}");
    assert!(
        doc["error"]["message"]
            .as_str()
            .unwrap()
            .contains("变更日志第 1 行"),
        "{doc}"
    );
    let state = read_json(&root.join("state/current-state.json"));
    assert_eq!(
        state["characters"]["lu-chen"]["inventory"],
        json!(["守灯钥匙"])
    );
    assert_eq!(state["state_version"], 1);

    // A new character's opening delta is not a repeat.
    let other = "staging/candidates/chapter-000-delta-su.json";
    write(
        other,
        1,
        &json!([{"op": "add", "path": "characters.su-wan.inventory", "value": "守灯钥匙"}]),
    );
    let out = novel(&root, &["--json", "ops", "apply", "--manual", other]);
    assert_eq!(code(&out), 0, "{}", stdout(&out));
    let v = novel(&root, &["--json", "validate"]);
    assert_eq!(code(&v), 0, "{}", stdout(&v));
}

/// `ops validate --strict` names the refusal `ops apply --strict` gives (one `refusal`, one
/// order): a rejected op under `--strict` is `E_STRICT`, before an out-of-order chapter — it
/// used to say `E_OPS_REJECTED`, or `E_CHAPTER_ORDER`, picking its own order.
#[test]
fn strict_validate_and_apply_refuse_with_the_same_code() {
    let (_t, root) = new_project();
    let d1 = delta(&root, 1, 0, chapter1());
    apply(&root, &d1);
    std::fs::remove_file(root.join(&d1)).unwrap();
    let mut ops = chapter2();
    ops.as_array_mut()
        .unwrap()
        .push(json!({"op": "set", "path": "characters.陆沉.location", "value": "魔都"}));
    for (chapter, why) in [(2, "in order"), (0, "before the last chapter")] {
        let d = delta(&root, chapter, 1, ops.clone());
        let validated = novel(&root, &["--json", "ops", "validate", &d, "--strict"]);
        let applied = novel(&root, &["--json", "ops", "apply", &d, "--strict"]);
        let (v, a) = (json(&validated), json(&applied));
        assert_eq!(a["error"]["code"], "E_STRICT", "{why}: {a}");
        assert_eq!(v["error"]["code"], a["error"]["code"], "{why}: {v}");
        assert_eq!(v["data"]["would_apply"], false, "{why}: {v}");
        assert_eq!(code(&validated), 1, "{why}");
        std::fs::remove_file(root.join(&d)).unwrap();
    }
}

/// One answer (issue 15): after `ops skip` records a later chapter, the delta of the chapter
/// before it is refused alike by `ops validate`, `ops apply`, `novel validate` (as the in-flight
/// chapter's staged delta) and the guard hook — the changelog stays in chapter order. (`ops
/// validate` used to say `chapter_order_ok: true`, looking at the state only.)
#[test]
fn after_a_skip_ops_validate_and_apply_give_the_same_answer() {
    let (_t, root) = new_project();
    let d1 = delta(&root, 1, 0, chapter1());
    apply(&root, &d1);
    std::fs::remove_file(root.join(&d1)).unwrap();
    writing(&root, 3);
    let out = novel(
        &root,
        &["ops", "skip", "--chapter", "3", "--reason", "两次解析失败"],
    );
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let d2 = delta(&root, 2, 1, chapter2());
    let before = std::fs::read(root.join("state/current-state.json")).unwrap();

    let validated = novel(&root, &["--json", "ops", "validate", &d2]);
    let v = json(&validated);
    let applied = novel(&root, &["--json", "ops", "apply", &d2]);
    let a = json(&applied);
    assert_eq!(a["error"]["code"], "E_CHAPTER_ORDER", "{a}");
    assert_eq!(v["error"]["code"], a["error"]["code"], "{v}");
    assert_eq!(v["data"]["chapter_order_ok"], false, "{v}");
    assert_eq!(v["data"]["would_apply"], false, "{v}");
    assert_eq!(v["data"]["version_ok"], true, "{v}");
    assert_eq!(v["data"]["last_updated_chapter"], 3, "{v}");
    assert_eq!(code(&validated), 1);
    assert_eq!(code(&applied), 3);
    assert_eq!(
        std::fs::read(root.join("state/current-state.json")).unwrap(),
        before,
        "nothing applied"
    );

    // `novel validate` judges the in-flight chapter's staged delta the same way …
    edit_json(&root.join(".checkpoint.json"), |cp| {
        cp["inflight_chapter"] = json!(2);
    });
    let (c, doc) = run_json(&root, &["validate"]);
    assert_eq!(c, 1, "{doc}");
    let findings = doc["data"]["findings"].as_array().unwrap();
    assert!(
        findings
            .iter()
            .any(|f| f["file"] == d2.as_str() && f["code"] == "E_CHAPTER_ORDER"),
        "{doc}"
    );
    // … and so does the guard hook when the Summarizer writes it.
    let input = json!({"hook_event_name": "PostToolUse", "tool_name": "Write",
        "cwd": root.to_str().unwrap(),
        "tool_input": {"file_path": root.join(&d2).to_str().unwrap(), "content": "{}"}});
    let mut child = std::process::Command::new(bin())
        .args(["hook", "post-tool-use"])
        .current_dir(&root)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write;
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.to_string().as_bytes())
        .unwrap();
    let hook = child.wait_with_output().unwrap();
    let said = stdout(&hook);
    assert!(
        said.contains("\"block\"") && said.contains("第 3 章"),
        "{said}"
    );
}

/// A torn `foreshadowing/global.json` is repaired by a rebuild like a torn state file: the
/// whole file is a difference, `--write` replays it from the changelog and keeps the torn
/// bytes in a backup.
#[test]
fn rebuild_repairs_a_torn_foreshadowing_file() {
    let (_t, root) = new_project();
    three_chapters(&root);
    let path = root.join("foreshadowing/global.json");
    let good = std::fs::read_to_string(&path).unwrap();
    std::fs::write(&path, "{ torn").unwrap();
    let out = novel(&root, &["--json", "state", "rebuild"]);
    assert_eq!(code(&out), 1, "{}", stdout(&out));
    let data = json(&out)["data"].clone();
    assert_eq!(data["foreshadowing_file"], "unusable", "{data}");
    assert_eq!(data["foreshadowing_differences"][0]["pointer"], "");
    let out = novel(&root, &["--json", "state", "rebuild", "--write"]);
    assert_eq!(code(&out), 0, "{}", stdout(&out));
    let repaired = read_json(&path);
    let before: serde_json::Value = serde_json::from_str(&good).unwrap();
    // Every thread the changelog mentions is back, with the status it had.
    let threads = before["foreshadowing"].as_array().unwrap();
    assert!(!threads.is_empty(), "the fixture has threads: {before}");
    for t in threads {
        let id = &t["id"];
        let back = repaired["foreshadowing"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| &r["id"] == id)
            .unwrap_or_else(|| panic!("{id} lost: {repaired}"));
        assert_eq!(back["status"], t["status"], "{id}");
    }
    assert!(
        backups(&root)
            .iter()
            .any(|b| b.ends_with("foreshadowing--global.json")
                && std::fs::read_to_string(root.join("state/backups").join(b)).unwrap()
                    == "{ torn")
    );
    assert_eq!(code(&novel(&root, &["validate"])), 0);
}
