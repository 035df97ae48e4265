//! The gate loop as one state machine (`docs/orchestration.md` §3): every way on the skills
//! offer after a verdict is a move the binary lists (`chapter gate`'s `data.moves`) and accepts;
//! rounds back the author chooses are recorded (who, when, which round, their words) and capped
//! by `gate.max_author_revisions`; a rewrite verdict has a way forward by revision.

use std::path::Path;

use serde_json::Value;

use crate::support::*;
use crate::test_chapter::{fail, ok, stage_drafts, stage_eval, writing_project};

/// Drafted, refined and judged at `score` (chapter 1 opens the volume: two judges); returns the
/// gate's data. `round` makes each draft differ from the one sent back.
fn judged_at(root: &Path, token: &str, score: f64, round: u32) -> Value {
    stage_drafts(root, 1);
    let draft = root.join("staging/chapters/chapter-001.md");
    let text = std::fs::read_to_string(&draft).unwrap();
    std::fs::write(&draft, format!("{text}\n第 {round} 稿。\n")).unwrap();
    ok(root, &["chapter", "stage", "drafted", "--token", token]);
    ok(root, &["chapter", "stage", "refined", "--token", token]);
    stage_eval(root, 1, score, true);
    ok(root, &["chapter", "stage", "judged", "--token", token]);
    ok(root, &["chapter", "gate", "1", "--token", token])["data"].clone()
}

fn move_of<'a>(gate: &'a Value, id: &str, by: &str) -> &'a Value {
    gate["moves"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["id"] == id && m["by"] == by)
        .unwrap_or_else(|| panic!("no move {id} by {by}: {gate}"))
}

/// The command of a move, filled in as the skill would, without `novel --project "<DIR>"`.
fn args_of(m: &Value, token: &str) -> Vec<String> {
    let command = m["command"].as_str().unwrap();
    let rest = command
        .strip_prefix("novel --project \"<DIR>\" ")
        .unwrap_or_else(|| panic!("{command}"));
    rest.replace("<TOKEN>", token)
        .split(' ')
        .filter(|w| *w != "--json")
        .map(str::to_string)
        .collect()
}

fn run_move(root: &Path, m: &Value, token: &str) -> Value {
    let args = args_of(m, token);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    ok(root, &args)
}

#[test]
fn the_author_revises_after_a_pause_recorded_and_capped() {
    let (_t, root) = writing_project();
    let token = ok(&root, &["chapter", "begin", "1"])["data"]["token"]
        .as_str()
        .unwrap()
        .to_string();
    let mut gate = judged_at(&root, &token, 2.5, 0);
    assert_eq!(gate["decision"], "pause", "{gate}");
    assert_eq!(gate["overall_text"], "2.5");
    // Not without the author's word.
    let refused = fail(
        &root,
        &["chapter", "stage", "revising", "--token", &token],
        3,
        "E_STAGE_ORDER",
    );
    assert!(
        refused["error"]["hint"]
            .as_str()
            .unwrap()
            .contains("--by-author"),
        "{refused}"
    );
    // Three rounds the author chose, each recorded; the gate keeps pausing.
    for round in 1..=3u32 {
        let m = move_of(&gate, "revise", "author");
        assert!(m.get("unavailable").is_none(), "round {round}: {m}");
        let mut args = args_of(m, &token);
        args.extend([
            "--note".to_string(),
            format!("作者：第 {round} 次，结尾收紧"),
        ]);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let moved = ok(&root, &args);
        assert_eq!(moved["data"]["revision_count"], round, "{moved}");
        gate = judged_at(&root, &token, 2.5, round);
        assert_eq!(gate["decision"], "pause", "round {round}: {gate}");
    }
    // The fourth is over the cap: listed as unavailable, and refused.
    let m = move_of(&gate, "revise", "author");
    assert!(
        m["unavailable"]
            .as_str()
            .unwrap()
            .contains("gate.max_author_revisions"),
        "{m}"
    );
    fail(
        &root,
        &[
            "chapter",
            "stage",
            "revising",
            "--by-author",
            "--token",
            &token,
        ],
        3,
        "E_REVISION_LIMIT",
    );
    fail(
        &root,
        &[
            "chapter",
            "stage",
            "drafting",
            "--by-author",
            "--token",
            &token,
        ],
        3,
        "E_REVISION_LIMIT",
    );
    // Accepting is always there.
    let done = run_move(&root, move_of(&gate, "accept", "author"), &token);
    assert_eq!(done["data"]["accepted_by_author"], true, "{done}");
    assert_eq!(done["data"]["gate_overall_text"], "2.5", "{done}");
    // Who, when, which round and what the author said, in the committed pipeline log.
    let log = read_json(&root.join("logs/chapter-001-log.json"));
    let chosen: Vec<&Value> = log["stages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["decided_by"] == "author")
        .collect();
    assert_eq!(chosen.len(), 3, "{log}");
    for (i, s) in chosen.iter().enumerate() {
        assert_eq!(s["name"], "revising");
        assert!(s["at"].is_string());
        assert_eq!(s["note"], format!("作者：第 {} 次，结尾收紧", i + 1));
    }
    assert_eq!(log["revisions"], 3);
}

#[test]
fn a_rewrite_verdict_has_a_way_forward_by_revision() {
    let (_t, root) = writing_project();
    let token = ok(&root, &["chapter", "begin", "1"])["data"]["token"]
        .as_str()
        .unwrap()
        .to_string();
    let gate = judged_at(&root, &token, 1.5, 0);
    assert_eq!(gate["decision"], "rewrite", "{gate}");
    // The loop's own rewrite, once.
    run_move(&root, move_of(&gate, "rewrite", "loop"), &token);
    let gate = judged_at(&root, &token, 1.5, 1);
    assert_eq!(gate["decision"], "rewrite", "{gate}");
    // The author chooses to revise along the notes instead of another rewrite.
    let moved = run_move(&root, move_of(&gate, "revise", "author"), &token);
    assert_eq!(moved["data"]["stage"], "revising", "{moved}");
    let gate = judged_at(&root, &token, 3.6, 2);
    assert_eq!(gate["decision"], "polish", "{gate}");
    assert_eq!(gate["moves"][0]["id"], "polish");
}

/// Every verdict lists its moves, the loop's own first; each listed command parses.
#[test]
fn every_verdict_lists_moves_that_parse() {
    for (score, decision, first) in [
        (4.2, "pass", "commit"),
        (3.7, "polish", "polish"),
        (3.2, "revise", "revise"),
        (2.5, "pause", "revise"),
        (1.5, "rewrite", "rewrite"),
    ] {
        let (_t, root) = writing_project();
        let token = ok(&root, &["chapter", "begin", "1"])["data"]["token"]
            .as_str()
            .unwrap()
            .to_string();
        let gate = judged_at(&root, &token, score, 0);
        assert_eq!(gate["decision"], decision, "{gate}");
        let moves = gate["moves"].as_array().unwrap();
        assert_eq!(moves[0]["id"], first, "{gate}");
        assert_eq!(
            moves[0]["by"],
            if decision == "pause" {
                "author"
            } else {
                "loop"
            },
            "{gate}"
        );
        for m in moves {
            let args = args_of(m, &token);
            let mut full: Vec<&str> = vec!["--project", "."];
            full.extend(args.iter().map(String::as_str));
            let out = std::process::Command::new(bin())
                .args(&full)
                .current_dir(&root)
                .env_clear()
                .env("PATH", "/usr/bin:/bin")
                .env("NOVEL_PARSE_ONLY", "1")
                .output()
                .unwrap();
            assert_eq!(code(&out), 0, "{m}: {}", stderr(&out));
        }
    }
}

/// StyleRefiner's change list is a file, kept with its round: archived when the round is sent
/// back, moved to `logs/` with the chapter at commit.
#[test]
fn the_refiners_change_list_goes_with_its_round() {
    let (_t, root) = writing_project();
    let token = ok(&root, &["chapter", "begin", "1"])["data"]["token"]
        .as_str()
        .unwrap()
        .to_string();
    let changes = root.join("staging/logs/chapter-001-changes.md");
    std::fs::write(&changes, "- 原：一灯如豆\n  改：一盏油灯\n  因：黑名单\n").unwrap();
    // The refiner wrote it before the judge: part of what the gate approves.
    let gate = judged_at(&root, &token, 3.2, 0);
    assert_eq!(gate["decision"], "revise");
    run_move(&root, move_of(&gate, "revise", "loop"), &token);
    assert!(!changes.exists());
    assert!(
        root.join("logs/revisions/chapter-001/r1/chapter-001-changes.md")
            .is_file()
    );
    std::fs::write(&changes, "- 原：推门而入\n  改：推开门\n  因：风格\n").unwrap();
    let gate = judged_at(&root, &token, 4.2, 1);
    run_move(&root, move_of(&gate, "commit", "loop"), &token);
    assert_eq!(
        std::fs::read_to_string(root.join("logs/chapter-001-changes.md")).unwrap(),
        "- 原：推门而入\n  改：推开门\n  因：风格\n"
    );
    assert!(!changes.exists());
    let out = novel(&root, &["--json", "validate"]);
    assert_eq!(code(&out), 0, "{}", stdout(&out));
}
