//! The volume cycle (`docs/orchestration.md` §1, §5, §6) on the fixture novel
//! `tests/fixtures/volume`: where a volume ends, `volume check` rule by rule, `volume open`,
//! `volume close` with its archive and cleanup report, and `volume cleanup` through the state
//! engine.

use std::collections::BTreeSet;
use std::path::Path;

use serde_json::{Value, json};

use crate::support::*;

fn rules(doc: &Value) -> BTreeSet<String> {
    doc["data"]["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["code"].as_str().unwrap().to_string())
        .collect()
}

fn state(root: &Path) -> String {
    read_json(&root.join(".checkpoint.json"))["orchestrator_state"]
        .as_str()
        .unwrap()
        .to_string()
}

#[test]
fn volume_check_is_silent_on_the_clean_volume() {
    let (_t, root) = fixture("volume", &[]);
    let (exit, doc) = run_json(&root, &["volume", "check", "2"]);
    assert_eq!(exit, 0, "{doc}");
    assert_eq!(doc["data"]["findings"], json!([]));
    assert_eq!(doc["data"]["range"], json!([4, 8]));
    assert_eq!(doc["data"]["range_source"], "schedule");
    assert_eq!(
        (
            &doc["data"]["chapters"],
            &doc["data"]["contracts"],
            &doc["data"]["outline_blocks"]
        ),
        (&json!(5), &json!(5), &json!(5))
    );
    // Default: the current volume.
    let (exit, doc) = run_json(&root, &["volume", "check"]);
    assert_eq!((exit, &doc["data"]["volume"]), (0, &json!(2)));
    let out = novel(&root, &["volume", "check", "2"]);
    assert!(stdout(&out).contains("检查通过"), "{}", stdout(&out));
}

#[test]
fn volume_check_reports_each_problem_of_the_broken_volume() {
    let (_t, root) = fixture("volume", &["broken"]);
    let (exit, doc) = run_json(&root, &["volume", "check", "2"]);
    assert_eq!(exit, 1, "{doc}");
    assert_eq!(doc["error"]["code"], "E_VOLUME_CHECK");
    assert_eq!(
        rules(&doc),
        [
            "chain_break",
            "convergence_outside",
            "precondition_vs_state",
            "too_many_storylines"
        ]
        .map(String::from)
        .into(),
    );
    let by_rule = |r: &str| -> Value {
        doc["data"]["findings"]
            .as_array()
            .unwrap()
            .iter()
            .find(|f| f["code"] == r)
            .cloned()
            .unwrap()
    };
    let f = by_rule("too_many_storylines");
    assert_eq!(
        (&f["file"], &f["pointer"], &f["severity"]),
        (
            &json!("volumes/vol-02/storyline-schedule.json"),
            &json!("/active_storylines"),
            &json!("error")
        )
    );
    let f = by_rule("convergence_outside");
    assert_eq!(f["pointer"], "/convergence_events/0/chapter_range");
    assert!(f["message"].as_str().unwrap().contains("第 9–10 章"), "{f}");
    assert_eq!(doc["data"]["counts"], json!({"error": 4, "warning": 0}));
}

#[test]
fn outline_field_missing_and_contract_missing() {
    let (_t, root) = fixture("volume", &[]);
    let outline = root.join("volumes/vol-02/outline.md");
    let text = std::fs::read_to_string(&outline).unwrap();
    std::fs::write(&outline, text.replace("- 弧光：由决转痛\n", "")).unwrap();
    std::fs::remove_file(root.join("volumes/vol-02/chapter-contracts/chapter-008.json")).unwrap();
    let (exit, doc) = run_json(&root, &["volume", "check", "2"]);
    assert_eq!(exit, 1, "{doc}");
    let found = doc["data"]["findings"].as_array().unwrap();
    let field = found
        .iter()
        .find(|f| f["code"] == "outline_field_missing")
        .unwrap();
    assert_eq!(field["chapter"], 7);
    assert_eq!(field["file"], "volumes/vol-02/outline.md");
    assert!(field["line"].as_u64().unwrap() > 1);
    assert!(field["message"].as_str().unwrap().contains("弧光"));
    let missing = found
        .iter()
        .find(|f| f["code"] == "contract_missing")
        .unwrap();
    assert_eq!(missing["chapter"], 8);
    assert_eq!(
        missing["file"],
        "volumes/vol-02/chapter-contracts/chapter-008.json"
    );
}

/// The outline of `overlays/handwritten/`: the same plan written as authors write it (no
/// bullets, numbered items, `**bold**` and `【】` labels, English labels, 状态变更 /
/// StateChanges, values with 「：」 in them, an empty 状态变化 with sub-bullets).
#[test]
fn a_handwritten_outline_reads_every_field() {
    let (_t, root) = fixture("volume", &["handwritten"]);
    let (exit, doc) = run_json(&root, &["volume", "check", "2"]);
    assert_eq!(exit, 0, "{doc}");
    assert_eq!(doc["data"]["findings"], json!([]));
    // A field truly missing is still reported, at its chapter's heading, with the line the
    // check could not read.
    let outline = root.join("volumes/vol-02/outline.md");
    let text = std::fs::read_to_string(&outline).unwrap();
    std::fs::write(&outline, text.replace("弧光：由信转疑\n", "")).unwrap();
    let (exit, doc) = run_json(&root, &["volume", "check", "2"]);
    assert_eq!(exit, 1, "{doc}");
    let found = doc["data"]["findings"].as_array().unwrap();
    assert_eq!(found.len(), 1, "{doc}");
    let f = &found[0];
    assert_eq!(
        (&f["code"], &f["chapter"], &f["line"]),
        (&json!("outline_field_missing"), &json!(4), &json!(5))
    );
    let message = f["message"].as_str().unwrap();
    assert!(
        message.contains("缺少字段：弧光（读不出字段名的行：第 11 行「备注："),
        "{message}"
    );
}

#[test]
fn unknown_reference_names_what_does_not_exist() {
    let (_t, root) = fixture("volume", &[]);
    edit_json(
        &root.join("volumes/vol-02/chapter-contracts/chapter-005.json"),
        |c| {
            c["storyline_id"] = json!("pirate_line");
            c["preconditions"]["required_world_rules"] = json!(["W-009"]);
            c["preconditions"]["character_states"]["白无常"] = json!({"location": "佑国驿馆"});
        },
    );
    let (exit, doc) = run_json(&root, &["volume", "check", "2"]);
    assert_eq!(exit, 1, "{doc}");
    let pointers: BTreeSet<String> = doc["data"]["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["code"] == "unknown_reference")
        .map(|f| f["pointer"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(
        pointers,
        [
            "/preconditions/character_states/白无常",
            "/preconditions/required_world_rules/0",
            "/storyline_id"
        ]
        .map(String::from)
        .into()
    );
}

#[test]
fn volume_span_falls_back_from_schedule_to_outline_contracts_and_settings() {
    let (_t, root) = fixture("volume", &[]);
    let range = |root: &Path| {
        let (_, doc) = run_json(root, &["status"]);
        (
            doc["data"]["volume"]["range"].clone(),
            doc["data"]["volume"]["range_source"].clone(),
        )
    };
    assert_eq!(range(&root), (json!([4, 8]), json!("schedule")));
    edit_json(&root.join("volumes/vol-02/storyline-schedule.json"), |s| {
        s.as_object_mut().unwrap().remove("chapter_range");
    });
    assert_eq!(range(&root), (json!([4, 8]), json!("outline")));
    std::fs::remove_file(root.join("volumes/vol-02/outline.md")).unwrap();
    std::fs::remove_file(root.join("volumes/vol-02/chapter-contracts/chapter-008.json")).unwrap();
    assert_eq!(range(&root), (json!([4, 7]), json!("contracts")));
    for c in 4..=7 {
        std::fs::remove_file(root.join(format!(
            "volumes/vol-02/chapter-contracts/chapter-{c:03}.json"
        )))
        .unwrap();
    }
    assert_eq!(range(&root), (Value::Null, Value::Null));
    // Settings: the first chapter follows volume 1's end (its schedule says 3).
    edit_json(&root.join("novel.json"), |s| {
        s["chapters_per_volume"] = json!(40)
    });
    assert_eq!(range(&root), (json!([4, 43]), json!("settings")));
    let out = novel(&root, &["validate", "novel.json"]);
    assert_eq!(code(&out), 0, "{}", stdout(&out));
}

#[test]
fn volume_open_refuses_a_failing_check_or_another_volume_then_opens() {
    let (_t, root) = fixture("volume", &["broken"]);
    let (exit, doc) = run_json(&root, &["volume", "open", "2"]);
    assert_eq!(exit, 1, "{doc}");
    assert_eq!(doc["error"]["code"], "E_VOLUME_CHECK");
    assert_eq!(doc["data"]["counts"]["error"], 4);
    assert_eq!(state(&root), "VOL_PLANNING");
    let (exit, doc) = run_json(&root, &["volume", "open", "3"]);
    assert_eq!((exit, &doc["error"]["code"]), (3, &json!("E_VOLUME")));

    let (_t, root) = fixture("volume", &[]);
    let (exit, doc) = run_json(&root, &["volume", "open", "2"]);
    assert_eq!(exit, 0, "{doc}");
    assert_eq!(doc["data"]["orchestrator_state"], "WRITING");
    assert_eq!(state(&root), "WRITING");
    assert!(!root.join(".novel.lock").exists(), "the lock is released");
    let (exit, doc) = run_json(&root, &["volume", "open", "2"]);
    assert_eq!((exit, &doc["error"]["code"]), (3, &json!("E_STATE")));
}

#[test]
fn volume_commands_wait_for_another_sessions_lock() {
    let (_t, root) = fixture("volume", &[]);
    let holder = Alive::new();
    let host = novel_store::lock::host_name();
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    std::fs::create_dir(root.join(".novel.lock")).unwrap();
    write_json(
        &root.join(".novel.lock/info.json"),
        &json!({"pid": holder.pid(), "started": "2026-01-01T00:00:00Z", "chapter": null,
                "host": host, "token": "t0", "heartbeat": now, "started_epoch": now}),
    );
    let (exit, doc) = run_json(&root, &["volume", "open", "2"]);
    assert_eq!((exit, &doc["error"]["code"]), (3, &json!("E_LOCKED")));
    assert_eq!(state(&root), "VOL_PLANNING");
}

/// The fixture with volume 1 written and its review pending (VOL_REVIEW).
fn reviewing() -> (tempfile::TempDir, std::path::PathBuf) {
    let (t, root) = fixture("volume", &[]);
    edit_json(&root.join(".checkpoint.json"), |cp| {
        cp["orchestrator_state"] = json!("VOL_REVIEW");
        cp["current_volume"] = json!(1);
    });
    (t, root)
}

#[test]
fn volume_close_needs_the_review_then_archives_and_proposes_a_cleanup() {
    let (_t, root) = reviewing();
    // 苏婉 retired by hand: her state entry is a leftover.
    std::fs::create_dir_all(root.join("characters/retired")).unwrap();
    std::fs::rename(
        root.join("characters/active/su-wan.json"),
        root.join("characters/retired/su-wan.json"),
    )
    .unwrap();
    let (exit, doc) = run_json(&root, &["volume", "close"]);
    assert_eq!(
        (exit, &doc["error"]["code"]),
        (3, &json!("E_REVIEW_MISSING"))
    );
    assert!(
        doc["error"]["hint"]
            .as_str()
            .unwrap()
            .contains("novel review volume 1")
    );
    let before = std::fs::read(root.join("state/current-state.json")).unwrap();
    let (exit, doc) = run_json(&root, &["review", "volume", "1"]);
    assert_eq!(exit, 0, "{doc}");
    let (exit, doc) = run_json(&root, &["volume", "close"]);
    assert_eq!(exit, 0, "{doc}");
    let d = &doc["data"];
    assert_eq!((&d["volume"], &d["next_volume"]), (&json!(1), &json!(2)));
    let cp = read_json(&root.join(".checkpoint.json"));
    assert_eq!(
        (&cp["orchestrator_state"], &cp["current_volume"]),
        (&json!("VOL_PLANNING"), &json!(2))
    );
    assert_eq!(d["archived"], "state/history/vol-01-final-state.json");
    assert_eq!(
        std::fs::read(root.join("state/history/vol-01-final-state.json")).unwrap(),
        before,
        "the state archived as it was"
    );
    let ids: Vec<&str> = d["cleanup"]["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["id"].as_str().unwrap())
        .collect();
    // 青铜残片 is in 陆尘's inventory; 破灯笼 and 山神庙 nothing mentions.
    assert_eq!(
        ids,
        [
            "characters.su-wan",
            "items.old-lantern",
            "locations.ruined-temple"
        ]
    );
    assert_eq!(d["cleanup"]["entries"][0]["kind"], "retired_character");
    assert_eq!(
        read_json(&root.join("volumes/vol-01/cleanup.json")),
        d["cleanup"]
    );
    // Nothing is deleted by closing.
    assert_eq!(
        std::fs::read(root.join("state/current-state.json")).unwrap(),
        before
    );
    assert!(root.join("volumes/vol-02/chapter-contracts").is_dir());
    let out = novel(&root, &["validate"]);
    assert_eq!(code(&out), 0, "{}", stdout(&out));
    // Closing twice is refused: the state machine moved on.
    let (exit, doc) = run_json(&root, &["volume", "close"]);
    assert_eq!((exit, &doc["error"]["code"]), (3, &json!("E_STATE")));
}

#[test]
fn volume_cleanup_goes_through_the_state_engine_and_rebuild_reproduces_it() {
    let (_t, root) = reviewing();
    run_json(&root, &["review", "volume", "1"]);
    let (exit, doc) = run_json(&root, &["volume", "close"]);
    assert_eq!(exit, 0, "{doc}");
    let (exit, doc) = run_json(&root, &["volume", "cleanup", "--apply", "items.nope"]);
    assert_eq!((exit, &doc["error"]["code"]), (2, &json!("E_USAGE")));
    assert!(
        doc["error"]["hint"]
            .as_str()
            .unwrap()
            .contains("items.old-lantern")
    );

    let (exit, doc) = run_json(
        &root,
        &["volume", "cleanup", "--apply", "items.old-lantern"],
    );
    assert_eq!(exit, 0, "{doc}");
    assert_eq!(doc["data"]["removed"], json!(["items.old-lantern"]));
    assert_eq!(doc["data"]["state_version"], 5);
    let st = read_json(&root.join("state/current-state.json"));
    assert!(st["items"].get("old-lantern").is_none());
    assert!(st["items"].get("bronze-shard").is_some());
    let log = std::fs::read_to_string(root.join("state/changelog.jsonl")).unwrap();
    let last: Value = serde_json::from_str(log.lines().last().unwrap()).unwrap();
    assert_eq!(
        (&last["source"], &last["cleanup_volume"], &last["chapter"]),
        (&json!("manual"), &json!(1), &json!(4))
    );
    // The rebuild replays the removal; the volume's last chapter still had the lantern.
    let out = novel(&root, &["state", "rebuild"]);
    assert_eq!(code(&out), 0, "{}", stdout(&out));
    let (_, at) = run_json(&root, &["state", "at", "--chapter", "3"]);
    assert!(at["data"]["state"]["items"].get("old-lantern").is_some());
    let report = read_json(&root.join("volumes/vol-01/cleanup.json"));
    assert_eq!(report["entries"][0]["applied"], true);
    assert_eq!(report["runs"][0]["ids"], json!(["items.old-lantern"]));

    // The rest, then again: nothing more to do, no second line.
    let (exit, doc) = run_json(&root, &["volume", "cleanup", "--all"]);
    assert_eq!(exit, 0, "{doc}");
    assert_eq!(doc["data"]["removed"], json!(["locations.ruined-temple"]));
    assert_eq!(doc["data"]["already_applied"], json!(["items.old-lantern"]));
    let lines = std::fs::read_to_string(root.join("state/changelog.jsonl"))
        .unwrap()
        .lines()
        .count();
    let (exit, doc) = run_json(&root, &["volume", "cleanup", "--all"]);
    assert_eq!(exit, 0, "{doc}");
    assert_eq!(doc["data"]["removed"], json!([]));
    assert_eq!(doc["data"]["changelog_line"], false);
    assert_eq!(
        std::fs::read_to_string(root.join("state/changelog.jsonl"))
            .unwrap()
            .lines()
            .count(),
        lines
    );
    let out = novel(&root, &["state", "rebuild"]);
    assert_eq!(code(&out), 0, "{}", stdout(&out));
    let out = novel(&root, &["validate"]);
    assert_eq!(code(&out), 0, "{}", stdout(&out));
    // No report for a volume that was never closed.
    let (exit, doc) = run_json(&root, &["volume", "cleanup", "--all", "--volume", "2"]);
    assert_eq!(
        (exit, &doc["error"]["code"]),
        (2, &json!("E_NO_CLEANUP_REPORT"))
    );
    // --apply or --all is required.
    let (exit, _) = run_json(&root, &["volume", "cleanup"]);
    assert_eq!(exit, 2);
}

/// A volume whose last planned chapter was done outside `chapter commit` (imported, applied by
/// hand) stays in WRITING: `next` recommends the volume review, and `volume close` closes it
/// as it would from VOL_REVIEW — no dead end.
#[test]
fn a_volume_finished_outside_commit_still_closes() {
    let (_t, root) = crate::test_chapter::writing_project();
    edit_json(&root.join("volumes/vol-01/storyline-schedule.json"), |s| {
        s["chapter_range"] = serde_json::json!([1, 3]);
    });
    edit_json(&root.join(".checkpoint.json"), |cp| {
        cp["last_completed_chapter"] = serde_json::json!(3);
    });
    let next = crate::test_chapter::ok(&root, &["next"]);
    assert_eq!(
        next["data"]["recommendation"]["action"], "review_volume",
        "{next}"
    );
    assert_eq!(next["data"]["recommended"], "review_volume", "{next}");
    let (code, doc) = run_json(&root, &["volume", "close"]);
    assert_eq!(
        (code, &doc["error"]["code"]),
        (3, &serde_json::json!("E_REVIEW_MISSING")),
        "{doc}"
    );
    crate::test_chapter::ok(&root, &["review", "volume", "1"]);
    let closed = crate::test_chapter::ok(&root, &["volume", "close"]);
    assert_eq!(closed["data"]["next_volume"], 2, "{closed}");
    let cp = read_json(&root.join(".checkpoint.json"));
    assert_eq!(cp["orchestrator_state"], "VOL_PLANNING");
    assert_eq!(cp["current_volume"], 2);
}
