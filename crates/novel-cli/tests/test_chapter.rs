//! The chapter transaction end to end: a 12-chapter fixture on two storylines, out-of-order
//! refusals, fault injection after every commit step, SIGKILL at random points, and racing
//! processes on the lock.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use serde_json::{Value, json};

use crate::support::*;

/// A fixed clock (debug builds only) so two runs produce identical bytes.
pub(crate) const NOW: &str = "1795325400";

pub(crate) fn run(root: &Path, args: &[&str]) -> Output {
    Command::new(bin())
        .args(args)
        .current_dir(root)
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .env("NOVEL_NOW", NOW)
        .output()
        .unwrap()
}

pub(crate) fn ok(root: &Path, args: &[&str]) -> Value {
    let mut full = vec!["--json"];
    full.extend_from_slice(args);
    let out = run(root, &full);
    assert_eq!(code(&out), 0, "{args:?}: {}{}", stdout(&out), stderr(&out));
    json(&out)
}

pub(crate) fn fail(root: &Path, args: &[&str], exit: i32, code_str: &str) -> Value {
    let mut full = vec!["--json"];
    full.extend_from_slice(args);
    let out = run(root, &full);
    assert_eq!(code(&out), exit, "{args:?}: {}", stdout(&out));
    let doc = json(&out);
    assert_eq!(doc["error"]["code"], code_str, "{args:?}: {doc}");
    doc
}

/// A project set up for writing: two storylines, volume 1 = chapters 1–10.
pub(crate) fn writing_project() -> (tempfile::TempDir, PathBuf) {
    let (tmp, root) = new_project();
    let cp_path = root.join(".checkpoint.json");
    let mut cp = read_json(&cp_path);
    cp["orchestrator_state"] = json!("WRITING");
    write_json(&cp_path, &cp);
    let lines_path = root.join("storylines/storylines.json");
    let mut lines = read_json(&lines_path);
    lines["storylines"].as_array_mut().unwrap().push(json!({
        "id": "jinghai_plan", "name": "靖海计划", "type": "conspiracy", "scope": "multi_volume",
        "pov_characters": ["许象乾"], "status": "active", "description": "海权博弈暗线"}));
    write_json(&lines_path, &lines);
    write_json(
        &root.join("volumes/vol-01/storyline-schedule.json"),
        &json!({"volume": 1, "chapter_range": [1, 10], "active_storylines": [
            {"storyline_id": "main_arc", "volume_role": "primary"},
            {"storyline_id": "jinghai_plan", "volume_role": "secondary"}],
            "convergence_events": []}),
    );
    (tmp, root)
}

fn storyline_of(n: u32) -> &'static str {
    if n % 2 == 1 {
        "main_arc"
    } else {
        "jinghai_plan"
    }
}

/// The staged text of every chapter ([`stage_drafts`]) after its heading.
pub(crate) const DRAFT_BODY: &str = "陆尘推门而入，屋里一灯如豆。\n\n桌上摊着一封没拆的信，火漆还是湿的。\n\n窗外的更夫敲了三下，巷子里再没有别的声音。\n\n他在门边站了很久，才伸手去拿那封信。\n";

/// What each dimension of [`eval_doc`] quotes from [`DRAFT_BODY`]: a clause of its own.
const QUOTED: [&str; 8] = [
    "「陆尘推门而入，屋里一灯如豆。」",
    "桌上摊着一封没拆的信",
    "桌上摊着一封没拆的信，火漆还是湿的。",
    "窗外的更夫敲了三下",
    "巷子里再没有别的声音",
    "他在门边站了很久",
    "才伸手去拿那封信",
    "陆尘推门而入，屋里一灯如豆……他在门边站了很久，才伸手去拿那封信",
];

/// A judge's evaluation of chapter `n` at `score` on every dimension, with the recommendation
/// the score gives under the default gate and, when it sends the chapter back, one fix.
pub(crate) fn eval_doc(n: u32, score: f64) -> Value {
    // What quality-judge.md derives from the score under the default gate (`E_EVAL_VERDICT`).
    let recommendation = novel_core::gate::band(score, &Default::default());
    let mut scores = json!({});
    for (i, (name, w)) in novel_core::model::evaluation::DIMENSIONS.iter().enumerate() {
        scores[*name] =
            json!({"score": score, "weight": w, "reason": "节奏紧凑", "evidence": QUOTED[i]});
    }
    json!({"chapter": n, "overall": score, "recommendation": recommendation,
        // The row of the fixtures' one required objective (`E_EVAL_OBJECTIVE`).
        "contract_verification": {"l3_checks": [
            {"id": format!("OBJ-{n:03}-1"), "status": "pass", "confidence": "high"}]},
        "scores": scores,
        "violations": [], "risk_flags": [],
        // A verdict that sends the chapter back carries fixes (`E_EVAL_FIXES`).
        "required_fixes": if score < 3.5 {
            json!([{"target": "第 1 段「陆尘推门而入」起", "instruction": "先交代陆尘为什么夜里来，灯保留"}])
        } else {
            json!([])
        },
        "issues": []})
}

/// The revision round of the chapter in flight (`revision_count` of the checkpoint).
fn revision_round(root: &Path) -> u64 {
    read_json(&root.join(".checkpoint.json"))["revision_count"]
        .as_u64()
        .unwrap_or(0)
}

/// After a round the gate sent back, what the judge reviews F1 (the fix of that round) with: a
/// sentence of the staged text the archived text of that round did not have (partly done), or
/// nothing new (not done) — as QualityJudge must (`E_EVAL_FIX_REVIEW`, `E_EVAL_STALE`).
pub(crate) fn fix_review(root: &Path, n: u32) -> Option<Value> {
    let k = revision_round(root);
    if k == 0 {
        return None;
    }
    let now = std::fs::read_to_string(root.join(format!("staging/chapters/chapter-{n:03}.md")))
        .unwrap_or_default();
    let before = std::fs::read_to_string(root.join(format!(
        "logs/revisions/chapter-{n:03}/r{k}/chapter-{n:03}.md"
    )))
    .unwrap_or_default();
    let fresh = now
        .lines()
        .filter(|l| !l.starts_with('#'))
        .flat_map(|l| l.split_inclusive('。'))
        .map(str::trim)
        .find(|s| s.chars().count() > 8 && !before.contains(s));
    Some(match fresh {
        Some(s) => json!([{"fix": "F1", "status": "partly", "evidence": s}]),
        None => json!([{"fix": "F1", "status": "not_done"}]),
    })
}

/// What the agents would write for chapter n.
pub(crate) fn stage_drafts(root: &Path, n: u32) {
    let line = storyline_of(n);
    std::fs::write(
        root.join(format!("staging/chapters/chapter-{n:03}.md")),
        format!("# 第{n}章 风起\n\n{DRAFT_BODY}"),
    )
    .unwrap();
    std::fs::write(
        root.join(format!("staging/summaries/chapter-{n:03}-summary.md")),
        format!("---\nchapter: {n}\nstoryline_id: {line}\n---\n第{n}章：陆尘夜探城北废墟。\n"),
    )
    .unwrap();
    let version = read_json(&root.join("state/current-state.json"))["state_version"]
        .as_u64()
        .unwrap();
    write_json(
        &root.join(format!("staging/state/chapter-{n:03}-delta.json")),
        &json!({"chapter": n, "base_state_version": version, "storyline_id": line, "ops": [
            {"op": "set", "path": "characters.lu-chen.location", "value": format!("第{n}章的地点")},
            {"op": "add", "path": "characters.lu-chen.inventory", "value": format!("物品{n}")},
            {"op": "foreshadow", "path": "ancient_prophecy", "value": if n < 6 { "planted" } else { "advanced" }, "detail": format!("第{n}章")}
        ]}),
    );
    let mem = root.join(format!("staging/storylines/{line}"));
    std::fs::create_dir_all(&mem).unwrap();
    std::fs::write(
        mem.join("memory.md"),
        format!("# 记忆\n截至第{n}章：陆尘仍在追查密信。\n"),
    )
    .unwrap();
}

pub(crate) fn stage_eval(root: &Path, n: u32, score: f64, second: bool) {
    let review = fix_review(root, n);
    let doc = || {
        let mut e = eval_doc(n, score);
        if let Some(r) = &review {
            e["fix_review"] = r.clone();
        }
        e
    };
    write_json(
        &root.join(format!("staging/evaluations/chapter-{n:03}-eval.json")),
        &doc(),
    );
    if second {
        let mut other = doc();
        other["judge"] = json!("opus");
        write_json(
            &root.join(format!(
                "staging/evaluations/chapter-{n:03}-eval-secondary.json"
            )),
            &other,
        );
    }
}

/// Runs chapter n up to a passed gate; returns the lock token.
pub(crate) fn up_to_gate(root: &Path, n: u32, key: bool) -> String {
    let token = ok(root, &["chapter", "begin", &n.to_string()])["data"]["token"]
        .as_str()
        .unwrap()
        .to_string();
    stage_drafts(root, n);
    ok(
        root,
        &[
            "chapter",
            "stage",
            "drafted",
            "--token",
            &token,
            "--model",
            "sonnet",
            "--duration-ms",
            "45000",
        ],
    );
    ok(root, &["chapter", "stage", "refined", "--token", &token]);
    stage_eval(root, n, 4.2, key);
    ok(root, &["chapter", "stage", "judged", "--token", &token]);
    let gate = ok(
        root,
        &["chapter", "gate", &n.to_string(), "--token", &token],
    );
    assert_eq!(gate["data"]["decision"], "pass", "{gate}");
    token
}

#[test]
fn twelve_chapters_on_two_storylines_with_a_volume_end() {
    let (_t, root) = writing_project();
    for n in 1..=12u32 {
        if n == 11 {
            // The author reviews volume 1 and plans volume 2.
            let cp_path = root.join(".checkpoint.json");
            let mut cp = read_json(&cp_path);
            assert_eq!(
                cp["orchestrator_state"], "VOL_REVIEW",
                "volume ended at chapter 10"
            );
            // (Writing on past the plan is allowed: `chapter begin` from VOL_REVIEW goes back
            // to WRITING — see test_menu. Here the author opens volume 2 first.)
            cp["orchestrator_state"] = json!("WRITING");
            cp["current_volume"] = json!(2);
            write_json(&cp_path, &cp);
            std::fs::create_dir_all(root.join("volumes/vol-02/chapter-contracts")).unwrap();
            write_json(
                &root.join("volumes/vol-02/storyline-schedule.json"),
                &json!({"volume": 2, "chapter_range": [11, 20], "active_storylines": [
                    {"storyline_id": "main_arc", "volume_role": "primary"}], "convergence_events": []}),
            );
        }
        let key = n == 1 || n == 10 || n == 11;
        let token = up_to_gate(&root, n, key);
        let done = ok(
            &root,
            &["chapter", "commit", &n.to_string(), "--token", &token],
        );
        assert_eq!(done["data"]["last_completed_chapter"], n);
        // Committed files in place, staging empty, lock gone.
        assert!(root.join(format!("chapters/chapter-{n:03}.md")).is_file());
        assert!(
            root.join(format!("summaries/chapter-{n:03}-summary.md"))
                .is_file()
        );
        assert!(
            root.join(format!("evaluations/chapter-{n:03}-eval.json"))
                .is_file()
        );
        assert!(root.join(format!("logs/chapter-{n:03}-log.json")).is_file());
        assert!(
            !root
                .join(format!("staging/chapters/chapter-{n:03}.md"))
                .exists()
        );
        assert!(!root.join(".novel.lock").exists());
        let memory =
            std::fs::read_to_string(root.join(format!("storylines/{}/memory.md", storyline_of(n))))
                .unwrap();
        assert!(
            memory.contains(&format!("截至第{n}章")),
            "memory overwritten on every chapter of the line"
        );
    }
    let cp = read_json(&root.join(".checkpoint.json"));
    assert_eq!(cp["last_completed_chapter"], 12);
    assert_eq!(cp["pipeline_stage"], "committed");
    assert!(cp["inflight_chapter"].is_null());
    assert_eq!(
        read_json(&root.join("state/current-state.json"))["state_version"],
        12
    );
    let log = read_json(&root.join("logs/chapter-012-log.json"));
    assert_eq!(log["gate_decision"], "pass");
    assert_eq!(log["stages"][0]["model"], "sonnet");
    assert_eq!(
        log["total_duration_ms"],
        Value::Null,
        "unknown durations stay null, not guessed"
    );
    assert!(
        root.join("evaluations/chapter-010-eval-secondary.json")
            .is_file()
    );
    let out = novel(&root, &["validate"]);
    assert_eq!(code(&out), 0, "{}", stdout(&out));
    assert_eq!(code(&novel(&root, &["state", "rebuild"])), 0);
}

#[test]
fn out_of_order_attempts_are_refused() {
    let (_t, root) = writing_project();
    fail(
        &root,
        &["chapter", "commit", "9", "--token", "x"],
        3,
        "E_NOT_INFLIGHT",
    );
    fail(&root, &["chapter", "begin", "3"], 3, "E_CHAPTER_ORDER");
    let token = ok(&root, &["chapter", "begin", "1"])["data"]["token"]
        .as_str()
        .unwrap()
        .to_string();
    let doc = fail(
        &root,
        &["chapter", "commit", "1", "--token", &token],
        3,
        "E_STAGE_ORDER",
    );
    assert!(
        doc["error"]["message"]
            .as_str()
            .unwrap()
            .contains("初稿生成中")
    );
    fail(&root, &["chapter", "begin", "2"], 3, "E_INFLIGHT");
    // Stages in order only, and only with their files.
    fail(
        &root,
        &["chapter", "stage", "judged", "--token", &token],
        3,
        "E_STAGE_ORDER",
    );
    let doc = fail(
        &root,
        &["chapter", "stage", "drafted", "--token", &token],
        1,
        "E_STAGING",
    );
    assert!(
        doc["error"]["message"]
            .as_str()
            .unwrap()
            .contains("staging/chapters/chapter-001.md")
    );
    fail(
        &root,
        &["chapter", "stage", "drafted", "--token", "wrong"],
        3,
        "E_LOCK_OWNER",
    );
    fail(
        &root,
        &["chapter", "gate", "1", "--token", &token],
        3,
        "E_STAGE_ORDER",
    );
    // Resuming the in-flight chapter: this session gets its token back; another live session
    // is refused while the first run holds the lock.
    let resumed = ok(&root, &["chapter", "begin", "1"]);
    assert_eq!(resumed["data"]["token"], json!(token));
    let other = Alive::new();
    fail(
        &root,
        &[
            "chapter",
            "begin",
            "1",
            "--owner-pid",
            &other.pid().to_string(),
        ],
        3,
        "E_LOCKED",
    );
    // A failed gate cannot be committed.
    stage_drafts(&root, 1);
    ok(&root, &["chapter", "stage", "drafted", "--token", &token]);
    ok(&root, &["chapter", "stage", "refined", "--token", &token]);
    stage_eval(&root, 1, 3.2, true);
    ok(&root, &["chapter", "stage", "judged", "--token", &token]);
    let gate = ok(&root, &["chapter", "gate", "1", "--token", &token]);
    assert_eq!(gate["data"]["decision"], "revise");
    fail(
        &root,
        &["chapter", "commit", "1", "--token", &token],
        1,
        "E_GATE",
    );
    // The revision loop: revising → drafted → refined → judged → gate. The rejected round is
    // archived, so the old evaluation and summary cannot be reused …
    ok(&root, &["chapter", "stage", "revising", "--token", &token]);
    assert!(
        root.join("logs/revisions/chapter-001/r1/chapter-001-eval.json")
            .is_file()
    );
    assert!(
        root.join("logs/revisions/chapter-001/r1/chapter-001.md")
            .is_file()
    );
    assert!(
        !root
            .join("staging/evaluations/chapter-001-eval.json")
            .exists()
    );
    assert!(
        !root
            .join("staging/summaries/chapter-001-summary.md")
            .exists()
    );
    // … and the unrevised text is refused.
    stage_drafts(&root, 1);
    let doc = fail(
        &root,
        &["chapter", "stage", "drafted", "--token", &token],
        1,
        "E_STAGING",
    );
    assert!(
        doc["error"]["message"].as_str().unwrap().contains("退回"),
        "{doc}"
    );
    std::fs::write(
        root.join("staging/chapters/chapter-001.md"),
        format!("# 第1章 风起\n\n{DRAFT_BODY}\n桌上压着半封残信，信角烧焦了。\n"),
    )
    .unwrap();
    ok(&root, &["chapter", "stage", "drafted", "--token", &token]);
    ok(&root, &["chapter", "stage", "refined", "--token", &token]);
    stage_eval(&root, 1, 4.1, true);
    ok(&root, &["chapter", "stage", "judged", "--token", &token]);
    assert_eq!(
        ok(&root, &["chapter", "gate", "1", "--token", &token])["data"]["decision"],
        "pass"
    );
    ok(&root, &["chapter", "commit", "1", "--token", &token]);
    let log = read_json(&root.join("logs/chapter-001-log.json"));
    assert_eq!(log["revisions"], 1);
}

pub(crate) fn tree(root: &Path) -> BTreeMap<String, Option<Vec<u8>>> {
    let mut out = BTreeMap::new();
    for e in walkdir(root) {
        let rel = e.strip_prefix(root).unwrap().to_string_lossy().into_owned();
        out.insert(
            rel,
            if e.is_dir() {
                None
            } else {
                Some(std::fs::read(&e).unwrap())
            },
        );
    }
    out
}

fn walkdir(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        out.push(p.clone());
        if p.is_dir() {
            out.extend(walkdir(&p));
        }
    }
    out
}

pub(crate) fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let p = e.unwrap().path();
        let dest = to.join(p.file_name().unwrap());
        if p.is_dir() {
            copy_dir(&p, &dest);
        } else {
            std::fs::copy(&p, &dest).unwrap();
        }
    }
}

pub(crate) fn diff_trees(
    a: &BTreeMap<String, Option<Vec<u8>>>,
    b: &BTreeMap<String, Option<Vec<u8>>>,
) -> Vec<String> {
    let mut keys: Vec<&String> = a.keys().chain(b.keys()).collect();
    keys.sort();
    keys.dedup();
    keys.into_iter()
        .filter(|k| a.get(*k) != b.get(*k))
        .cloned()
        .collect()
}

/// A project with chapter 3 gated and ready to commit (two committed before it).
pub(crate) fn ready_to_commit() -> (tempfile::TempDir, PathBuf, String) {
    let (t, root) = writing_project();
    for n in 1..=2 {
        let token = up_to_gate(&root, n, n == 1);
        ok(
            &root,
            &["chapter", "commit", &n.to_string(), "--token", &token],
        );
    }
    let token = up_to_gate(&root, 3, false);
    (t, root, token)
}

#[test]
fn commit_interrupted_after_every_step_recovers_to_the_same_bytes() {
    let (tmp, prepared, token) = ready_to_commit();
    let reference = tmp.path().join("reference");
    copy_dir(&prepared, &reference);
    ok(&reference, &["chapter", "commit", "3", "--token", &token]);
    let want = tree(&reference);
    let staged_chapter = std::fs::read(prepared.join("staging/chapters/chapter-003.md")).unwrap();
    let mut step = 0;
    loop {
        let dir = tmp.path().join(format!("crash-{step}"));
        copy_dir(&prepared, &dir);
        let crashed = Command::new(bin())
            .args(["chapter", "commit", "3", "--token", &token])
            .current_dir(&dir)
            .env_clear()
            .env("PATH", "/usr/bin:/bin")
            .env("NOVEL_NOW", NOW)
            .env("NOVEL_FAILPOINT", format!("commit:{step}"))
            .output()
            .unwrap();
        if code(&crashed) == 0 {
            break; // past the last step
        }
        assert_eq!(code(&crashed), 99, "step {step}: {}", stderr(&crashed));
        // Nothing staged is lost mid-way: the chapter text is either still staged or committed.
        let staged = std::fs::read(dir.join("staging/chapters/chapter-003.md")).ok();
        let committed = std::fs::read(dir.join("chapters/chapter-003.md")).ok();
        assert!(
            staged.as_deref() == Some(&staged_chapter[..])
                || committed.as_deref() == Some(&staged_chapter[..])
        );
        let journaled = dir.join(".novel-commit-journal.json").exists();
        let rec = ok(&dir, &["chapter", "recover"]);
        if journaled {
            let first = rec["data"]["actions"][0].as_str().unwrap_or_default();
            assert!(first.contains("补完"), "step {step}: {rec}");
        }
        let again = ok(&dir, &["chapter", "recover"]);
        assert_eq!(again["data"]["actions"], json!([]), "recover is idempotent");
        let got = tree(&dir);
        assert_eq!(diff_trees(&want, &got), Vec::<String>::new(), "step {step}");
        assert_eq!(code(&run(&dir, &["validate"])), 0);
        step += 1;
        assert!(step < 40, "fail points never ran out");
    }
    assert!(step >= 8, "only {step} steps were interrupted");
}

#[test]
fn commit_killed_at_random_points_recovers_to_the_same_bytes() {
    let (tmp, prepared, token) = ready_to_commit();
    let reference = tmp.path().join("reference");
    copy_dir(&prepared, &reference);
    ok(&reference, &["chapter", "commit", "3", "--token", &token]);
    let want = tree(&reference);
    let mut seed: u64 = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos() as u64;
    eprintln!("seed {seed}");
    for i in 0..12 {
        seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let delay_us = (seed >> 33) % 12_000;
        let dir = tmp.path().join(format!("kill-{i}"));
        copy_dir(&prepared, &dir);
        let mut child = Command::new(bin())
            .args(["chapter", "commit", "3", "--token", &token])
            .current_dir(&dir)
            .env_clear()
            .env("PATH", "/usr/bin:/bin")
            .env("NOVEL_NOW", NOW)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(std::time::Duration::from_micros(delay_us));
        let _ = child.kill(); // SIGKILL
        let _ = child.wait();
        ok(&dir, &["chapter", "recover"]);
        if read_json(&dir.join(".checkpoint.json"))["last_completed_chapter"] != 3 {
            // Killed before the journal: nothing happened; the commit simply runs again.
            ok(&dir, &["chapter", "commit", "3", "--token", &token]);
        }
        let got = tree(&dir);
        assert_eq!(
            diff_trees(&want, &got),
            Vec::<String>::new(),
            "kill {i} after {delay_us} µs (seed {seed})"
        );
        let out = run(&dir, &["validate"]);
        assert_eq!(code(&out), 0, "kill {i}: {}", stdout(&out));
    }
}

#[test]
fn racing_begins_let_exactly_one_through() {
    for _ in 0..5 {
        let (_t, root) = writing_project();
        // Two sessions (two live owners) race for the same chapter.
        let owners = [Alive::new(), Alive::new()];
        let spawn = |owner: &Alive| {
            Command::new(bin())
                .args(["--json", "chapter", "begin", "1", "--owner-pid"])
                .arg(owner.pid().to_string())
                .current_dir(&root)
                .env_clear()
                .env("PATH", "/usr/bin:/bin")
                .stdout(Stdio::piped())
                .spawn()
                .unwrap()
        };
        let (a, b) = (spawn(&owners[0]), spawn(&owners[1]));
        let outs = [a.wait_with_output().unwrap(), b.wait_with_output().unwrap()];
        let codes: Vec<i32> = outs.iter().map(code).collect();
        let winners = codes.iter().filter(|c| **c == 0).count();
        assert_eq!(winners, 1, "{codes:?}");
        let loser = outs.iter().position(|o| code(o) != 0).unwrap();
        assert_eq!(code(&outs[loser]), 3);
        let doc = json(&outs[loser]);
        assert_eq!(doc["error"]["code"], "E_LOCKED");
        // The loser names the winner's session.
        assert!(
            doc["error"]["message"]
                .as_str()
                .unwrap()
                .contains(&format!("进程 {}", owners[1 - loser].pid())),
            "names the holder: {doc}"
        );
    }
}

#[test]
fn stale_lock_breaking_races_and_recover() {
    for _ in 0..5 {
        let (_t, root) = writing_project();
        // A lock left by a session that died: its pid is gone.
        let mut dead = Command::new("true").spawn().unwrap();
        let dead_pid = dead.id();
        dead.wait().unwrap();
        let host = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap_or_default();
        std::fs::create_dir(root.join(".novel.lock")).unwrap();
        write_json(
            &root.join(".novel.lock/info.json"),
            &json!({"pid": dead_pid, "started": "2026-11-22T00:00:00Z", "chapter": 1,
                "host": host.trim(), "token": "old", "heartbeat": 1795325000u64, "started_epoch": 1795325000u64}),
        );
        let status = ok(&root, &["lock", "status"]);
        assert_eq!(status["data"]["state"], "stale");
        let spawn = || {
            Command::new(bin())
                .args(["--json", "lock", "acquire", "--chapter", "1"])
                .current_dir(&root)
                .env_clear()
                .env("PATH", "/usr/bin:/bin")
                .stdout(Stdio::piped())
                .spawn()
                .unwrap()
        };
        let (a, b) = (spawn(), spawn());
        let outs = [a.wait_with_output().unwrap(), b.wait_with_output().unwrap()];
        let codes: Vec<i32> = outs.iter().map(code).collect();
        assert_eq!(codes.iter().filter(|c| **c == 0).count(), 1, "{codes:?}");
        assert!(codes.iter().all(|c| *c == 0 || *c == 3), "{codes:?}");
        let loser = json(outs.iter().find(|o| code(o) != 0).unwrap());
        assert!(
            loser["error"]["message"]
                .as_str()
                .unwrap()
                .contains(&format!("进程 {}", std::process::id())),
            "the loser names the winner: {loser}"
        );
        let winner = json(outs.iter().find(|o| code(o) == 0).unwrap());
        let token = winner["data"]["token"].as_str().unwrap();
        fail(
            &root,
            &["lock", "release", "--token", "old"],
            3,
            "E_LOCK_OWNER",
        );
        ok(&root, &["lock", "release", "--token", token]);
        assert!(!root.join(".novel.lock").exists());
    }
    // recover clears a stale lock and says what it removed; clear is the human override.
    let (_t, root) = writing_project();
    std::fs::create_dir(root.join(".novel.lock")).unwrap();
    write_json(
        &root.join(".novel.lock/info.json"),
        &json!({"pid": 424242, "started": "2026-01-01T00:00:00Z", "chapter": 1, "host": "elsewhere", "token": "t", "heartbeat": 1000u64, "started_epoch": 1000u64}),
    );
    let rec = ok(&root, &["chapter", "recover"]);
    assert!(
        rec["data"]["actions"][0]
            .as_str()
            .unwrap()
            .contains("僵尸锁"),
        "{rec}"
    );
    assert!(!root.join(".novel.lock").exists());
    let token = ok(&root, &["lock", "acquire"])["data"]["token"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(!token.is_empty());
    let cleared = ok(&root, &["lock", "clear"]);
    assert_eq!(cleared["data"]["removed"], true);
}

#[test]
fn recover_says_where_to_resume() {
    let (_t, root) = writing_project();
    assert_eq!(
        ok(&root, &["chapter", "recover"])["data"]["resume"]["step"],
        "idle"
    );
    let token = ok(&root, &["chapter", "begin", "1"])["data"]["token"]
        .as_str()
        .unwrap()
        .to_string();
    assert_eq!(
        ok(&root, &["chapter", "recover"])["data"]["resume"]["step"],
        "run_chapter_writer"
    );
    std::fs::write(
        root.join("staging/chapters/chapter-001.md"),
        "# 第1章\n正文",
    )
    .unwrap();
    assert_eq!(
        ok(&root, &["chapter", "recover"])["data"]["resume"]["step"],
        "run_summarizer"
    );
    stage_drafts(&root, 1);
    ok(&root, &["chapter", "stage", "drafted", "--token", &token]);
    assert_eq!(
        ok(&root, &["chapter", "recover"])["data"]["resume"]["step"],
        "run_style_refiner"
    );
    ok(&root, &["chapter", "stage", "refined", "--token", &token]);
    assert_eq!(
        ok(&root, &["chapter", "recover"])["data"]["resume"]["step"],
        "run_quality_judge"
    );
    stage_eval(&root, 1, 4.5, true);
    ok(&root, &["chapter", "stage", "judged", "--token", &token]);
    assert_eq!(
        ok(&root, &["chapter", "recover"])["data"]["resume"]["step"],
        "run_gate"
    );
    ok(&root, &["chapter", "gate", "1", "--token", &token]);
    let rec = ok(&root, &["chapter", "recover"]);
    assert_eq!(rec["data"]["resume"]["step"], "commit");
    // The holder (this test process) is alive, so recover leaves its lock alone.
    assert!(root.join(".novel.lock").exists());
}

#[test]
fn leak_check_of_the_inflight_chapter_lands_in_its_pipeline_log() {
    let (_t, root) = writing_project();
    let token = ok(&root, &["chapter", "begin", "1"])["data"]["token"]
        .as_str()
        .unwrap()
        .to_string();
    stage_drafts(&root, 1);
    ok(&root, &["check", "leak", "--chapter", "1"]);
    let rec = read_json(&root.join("staging/logs/chapter-001-leak.json"));
    assert_eq!(rec["leak_risk"], "none", "{rec}");
    assert_eq!(
        code(&run(&root, &["validate"])),
        0,
        "the record is a known file"
    );
    ok(&root, &["chapter", "stage", "drafted", "--token", &token]);
    ok(&root, &["chapter", "stage", "refined", "--token", &token]);
    stage_eval(&root, 1, 4.2, true);
    ok(&root, &["chapter", "stage", "judged", "--token", &token]);
    ok(&root, &["chapter", "gate", "1", "--token", &token]);
    ok(&root, &["chapter", "commit", "1", "--token", &token]);
    let log = read_json(&root.join("logs/chapter-001-log.json"));
    assert_eq!(
        log["leak_check"]["leak_risk"], "none",
        "kept through the commit: {log}"
    );
    assert!(!root.join("staging/logs/chapter-001-leak.json").exists());
}

/// Begins chapter n and runs it to `judged` with the given score; returns the lock token.
fn to_judged(root: &Path, n: u32, score: f64) -> String {
    let token = ok(root, &["chapter", "begin", &n.to_string()])["data"]["token"]
        .as_str()
        .unwrap()
        .to_string();
    stage_drafts(root, n);
    ok(root, &["chapter", "stage", "drafted", "--token", &token]);
    ok(root, &["chapter", "stage", "refined", "--token", &token]);
    stage_eval(root, n, score, false);
    ok(root, &["chapter", "stage", "judged", "--token", &token]);
    token
}

fn resume_step(root: &Path) -> Value {
    ok(root, &["chapter", "recover"])["data"]["resume"]["step"].clone()
}

#[test]
fn polish_needs_a_second_refiner_pass_or_the_authors_accept() {
    let (_t, root) = writing_project();
    let token = to_judged(&root, 1, 3.7);
    // Chapter 1 is the volume's first chapter: give it its second judge.
    let mut second = eval_doc(1, 3.8);
    second["judge"] = json!("opus");
    write_json(
        &root.join("staging/evaluations/chapter-001-eval-secondary.json"),
        &second,
    );
    let gate = ok(&root, &["chapter", "gate", "1", "--token", &token]);
    assert_eq!(gate["data"]["decision"], "polish", "{gate}");
    assert_eq!(resume_step(&root), "polish_then_commit");
    let doc = fail(
        &root,
        &["chapter", "commit", "1", "--token", &token],
        1,
        "E_GATE",
    );
    assert!(doc["error"]["hint"].as_str().unwrap().contains("polished"));
    // The refiner has not touched the text yet.
    let doc = fail(
        &root,
        &["chapter", "stage", "polished", "--token", &token],
        1,
        "E_STAGING",
    );
    assert!(
        doc["error"]["message"]
            .as_str()
            .unwrap()
            .contains("完全相同")
    );
    std::fs::write(
        root.join("staging/chapters/chapter-001.md"),
        "# 第1章 风起\n\n陆尘推门进去，屋里只点着一盏油灯。\n",
    )
    .unwrap();
    ok(&root, &["chapter", "stage", "polished", "--token", &token]);
    assert_eq!(resume_step(&root), "commit");
    ok(&root, &["chapter", "commit", "1", "--token", &token]);
    let log = read_json(&root.join("logs/chapter-001-log.json"));
    assert_eq!(log["gate_decision"], "polish");
    assert!(
        (log["gate_overall"].as_f64().unwrap() - 3.7).abs() < 1e-9,
        "{log}"
    );
    assert!(
        read_json(&root.join("logs/chapter-001-log.json"))["stages"]
            .as_array()
            .unwrap()
            .iter()
            .any(|s| s["name"] == "polished"),
        "the polish pass is on record"
    );
    // Chapter 2: the author accepts the polish verdict as it stands.
    let token = to_judged(&root, 2, 3.6);
    ok(&root, &["chapter", "gate", "2", "--token", &token]);
    ok(
        &root,
        &["chapter", "commit", "2", "--token", &token, "--accept"],
    );
    let log = read_json(&root.join("logs/chapter-002-log.json"));
    assert_eq!(log["accepted_by_author"], true, "{log}");
    // Status averages the scores the gate counted.
    let status = ok(&root, &["status"]);
    let avg = status["data"]["average_score"].as_f64().unwrap();
    assert!((avg - 3.65).abs() < 1e-9, "{status}");
}

#[test]
fn rewrite_archives_the_round_and_recover_rewinds_lost_stages() {
    let (_t, root) = writing_project();
    let token = to_judged(&root, 1, 1.5);
    let mut second = eval_doc(1, 1.6);
    second["judge"] = json!("opus");
    write_json(
        &root.join("staging/evaluations/chapter-001-eval-secondary.json"),
        &second,
    );
    assert_eq!(
        ok(&root, &["chapter", "gate", "1", "--token", &token])["data"]["decision"],
        "rewrite"
    );
    assert_eq!(resume_step(&root), "ask_author");
    let moved = ok(&root, &["chapter", "stage", "drafting", "--token", &token]);
    assert_eq!(moved["data"]["revision_count"], 1);
    // Everything of the rejected round is kept, nothing of it is left in staging.
    for name in [
        "chapter-001.md",
        "chapter-001-summary.md",
        "chapter-001-delta.json",
        "chapter-001-eval.json",
        "chapter-001-eval-secondary.json",
        "memory-main_arc.md",
    ] {
        assert!(
            root.join("logs/revisions/chapter-001/r1")
                .join(name)
                .is_file(),
            "{name} archived"
        );
    }
    assert!(!root.join("staging/chapters/chapter-001.md").exists());
    assert_eq!(resume_step(&root), "run_chapter_writer");

    // A stage whose files were lost is rewound by recover, never skipped past.
    std::fs::write(
        root.join("staging/chapters/chapter-001.md"),
        "# 第1章 风起\n\n城北的雨下了一夜，陆尘在废墟里找到半块腰牌。\n",
    )
    .unwrap();
    assert_eq!(resume_step(&root), "run_summarizer");
    stage_drafts(&root, 1);
    std::fs::write(
        root.join("staging/chapters/chapter-001.md"),
        "# 第1章 风起\n\n城北的雨下了一夜，陆尘在废墟里找到半块腰牌。\n",
    )
    .unwrap();
    assert_eq!(resume_step(&root), "mark_drafted");
    ok(&root, &["chapter", "stage", "drafted", "--token", &token]);
    ok(&root, &["chapter", "stage", "refined", "--token", &token]);
    std::fs::remove_file(root.join("staging/summaries/chapter-001-summary.md")).unwrap();
    let rec = ok(&root, &["chapter", "recover"]);
    assert_eq!(rec["data"]["resume"]["step"], "run_summarizer", "{rec}");
    assert!(
        rec["data"]["actions"][0].as_str().unwrap().contains("退回"),
        "{rec}"
    );
    assert_eq!(
        read_json(&root.join(".checkpoint.json"))["pipeline_stage"],
        "drafting"
    );
    let again = ok(&root, &["chapter", "recover"]);
    assert_eq!(again["data"]["actions"], json!([]), "idempotent");
}

#[test]
fn skipped_delta_goes_on_without_state_and_three_recommend_a_rebuild() {
    let (_t, root) = writing_project();
    let before = read_json(&root.join("state/current-state.json"))["state_version"].clone();
    for n in 1..=3u32 {
        let token = ok(&root, &["chapter", "begin", &n.to_string()])["data"]["token"]
            .as_str()
            .unwrap()
            .to_string();
        stage_drafts(&root, n);
        // The Summarizer's delta did not parse twice.
        std::fs::write(
            root.join(format!("staging/state/chapter-{n:03}-delta.json")),
            "{\"chapter\": 1, \"ops\": [ 坏",
        )
        .unwrap();
        fail(
            &root,
            &["chapter", "stage", "drafted", "--token", &token],
            1,
            "E_STAGING",
        );
        ok(
            &root,
            &[
                "ops",
                "skip",
                "--chapter",
                &n.to_string(),
                "--reason",
                "两次都无法解析",
            ],
        );
        // §10.6: the pipeline is not blocked.
        ok(&root, &["chapter", "stage", "drafted", "--token", &token]);
        ok(&root, &["chapter", "stage", "refined", "--token", &token]);
        stage_eval(&root, n, 4.2, n == 1);
        ok(&root, &["chapter", "stage", "judged", "--token", &token]);
        ok(
            &root,
            &["chapter", "gate", &n.to_string(), "--token", &token],
        );
        ok(
            &root,
            &["chapter", "commit", &n.to_string(), "--token", &token],
        );
        assert!(
            root.join(format!(
                "logs/revisions/chapter-{n:03}/r0/skipped-delta.json"
            ))
            .is_file(),
            "the unparseable delta is kept"
        );
    }
    assert_eq!(
        read_json(&root.join("state/current-state.json"))["state_version"],
        before,
        "no delta applied, no version bump"
    );
    let status = ok(&root, &["status"]);
    assert_eq!(status["data"]["recommend_rebuild"], true, "{status}");
    let next = ok(&root, &["next"]);
    assert_eq!(next["data"]["recommend_rebuild"], true, "{next}");
    assert!(
        next["data"]["recommendation"]["notes"]
            .as_array()
            .unwrap()
            .iter()
            .any(|n| n.as_str().unwrap().contains("novel state rebuild")),
        "{next}"
    );
    assert_eq!(code(&novel(&root, &["state", "rebuild"])), 0);
    assert_eq!(code(&novel(&root, &["validate"])), 0);

    // The changelog stays in chapter order: a past chapter cannot be skipped any more …
    fail(
        &root,
        &["ops", "skip", "--chapter", "2", "--reason", "晚了"],
        3,
        "E_CHAPTER_ORDER",
    );
    // … and the state those chapters changed is re-recorded by hand, at the current chapter,
    // settling the skips (§10.6: re-extracted from the chapters' text).
    let version = read_json(&root.join("state/current-state.json"))["state_version"].clone();
    let manual = root.join("manual-delta.json");
    write_json(
        &manual,
        &json!({"chapter": 3, "base_state_version": version, "storyline_id": "main_arc",
            "ops": [{"op": "set", "path": "characters.lu-chen.location", "value": "城北废墟"}]}),
    );
    let m = manual.to_str().unwrap();
    fail(
        &root,
        &["ops", "apply", m, "--manual", "--resolves-skipped", "2,7"],
        2,
        "E_NOT_SKIPPED",
    );
    ok(
        &root,
        &["ops", "apply", m, "--manual", "--resolves-skipped", "1,2,3"],
    );
    // Like a commit's, the applied line records the state bytes it left (the foreshadowing
    // file, not rewritten, has no digest: the next reader checks it).
    let line = last_changelog_line(&root);
    let state = root.join("state/current-state.json");
    assert_eq!(line["written"]["state"], file_digest(&state), "{line}");
    assert!(line["written"].get("global").is_none(), "{line}");
    let status = ok(&root, &["status"]);
    assert_eq!(status["data"]["skipped_chapters"], json!([]), "{status}");
    assert_eq!(status["data"]["recommend_rebuild"], false);
    assert_eq!(code(&novel(&root, &["state", "rebuild"])), 0);
}

#[test]
fn gate_reads_settings_and_leaks_and_refuses_a_copied_second_judge() {
    let (_t, root) = writing_project();
    let token = to_judged(&root, 1, 4.2);
    // A second judge that is a copy of the first is not a second judge.
    std::fs::copy(
        root.join("staging/evaluations/chapter-001-eval.json"),
        root.join("staging/evaluations/chapter-001-eval-secondary.json"),
    )
    .unwrap();
    fail(
        &root,
        &["chapter", "gate", "1", "--token", &token],
        1,
        "E_SECOND_JUDGE",
    );
    // An evaluation of another chapter is refused.
    let mut other = eval_doc(7, 4.2);
    other["judge"] = json!("opus");
    write_json(
        &root.join("staging/evaluations/chapter-001-eval-secondary.json"),
        &other,
    );
    let out = run(
        &root,
        &["--json", "chapter", "gate", "1", "--token", &token],
    );
    assert_eq!(code(&out), 2, "{}", stdout(&out));
    assert!(stdout(&out).contains("/chapter"), "{}", stdout(&out));
    let mut second = eval_doc(1, 4.3);
    second["judge"] = json!("opus");
    write_json(
        &root.join("staging/evaluations/chapter-001-eval-secondary.json"),
        &second,
    );
    // Thresholds come from novel.json; a broken file is an error, not the defaults.
    let settings_path = root.join("novel.json");
    let original = std::fs::read_to_string(&settings_path).unwrap();
    let mut settings = read_json(&settings_path);
    settings["gate"]["pass"] = json!(4.5);
    settings["gate"]["polish"] = json!(4.0);
    write_json(&settings_path, &settings);
    // The judges read the same thresholds (quality-judge.md): 4.2 and 4.3 are a polish now.
    for f in ["chapter-001-eval.json", "chapter-001-eval-secondary.json"] {
        edit_json(&root.join("staging/evaluations").join(f), |e| {
            e["recommendation"] = json!("polish")
        });
    }
    assert_eq!(
        ok(&root, &["chapter", "gate", "1", "--token", &token])["data"]["decision"],
        "polish"
    );
    settings["gate"]["pass"] = json!("4.5");
    write_json(&settings_path, &settings);
    let out = run(
        &root,
        &["--json", "chapter", "gate", "1", "--token", &token],
    );
    assert_ne!(code(&out), 0, "{}", stdout(&out));
    settings["gate"]["pass"] = json!(3.0);
    write_json(&settings_path, &settings);
    fail(
        &root,
        &["chapter", "gate", "1", "--token", &token],
        1,
        "E_SETTINGS",
    );
    std::fs::write(&settings_path, original).unwrap();
    for f in ["chapter-001-eval.json", "chapter-001-eval-secondary.json"] {
        edit_json(&root.join("staging/evaluations").join(f), |e| {
            e["recommendation"] = json!("pass")
        });
    }
    // A high leak on the judged text forces a revision under LS-005; a stale one is ignored.
    let digest = novel_core::pipeline::text_digest(
        &std::fs::read(root.join("staging/chapters/chapter-001.md")).unwrap(),
    );
    let leak = |d: &str| {
        json!({"chapter": 1, "leak_risk": "high", "text_digest": d,
            "findings": [{"entity": "许象乾", "storyline": "jinghai_plan"}]})
    };
    write_json(
        &root.join("staging/logs/chapter-001-leak.json"),
        &leak(&digest),
    );
    let gate = ok(&root, &["chapter", "gate", "1", "--token", &token]);
    assert_eq!(gate["data"]["decision"], "revise", "{gate}");
    assert_eq!(gate["data"]["blocking_violations"][0]["rule_id"], "LS-005");
    write_json(
        &root.join("staging/logs/chapter-001-leak.json"),
        &leak("0000000000000000"),
    );
    let gate = ok(&root, &["chapter", "gate", "1", "--token", &token]);
    assert_eq!(gate["data"]["decision"], "pass", "{gate}");
    assert!(
        gate["data"]["reasons"].to_string().contains("旧稿"),
        "{gate}"
    );
}

#[test]
fn status_sums_the_pipeline_logs_and_keeps_unknowns_unknown() {
    let (_t, root) = writing_project();
    for n in 1..=2u32 {
        let token = ok(&root, &["chapter", "begin", &n.to_string()])["data"]["token"]
            .as_str()
            .unwrap()
            .to_string();
        stage_drafts(&root, n);
        let mut drafted = vec![
            "chapter",
            "stage",
            "drafted",
            "--token",
            &token,
            "--model",
            "opus",
            "--input-tokens",
            "21000",
            "--output-tokens",
            "4200",
            "--duration-ms",
            "90000",
        ];
        if n == 1 {
            drafted.extend(["--cost-usd", "0.42"]);
        }
        ok(&root, &drafted);
        ok(
            &root,
            &[
                "chapter",
                "stage",
                "refined",
                "--token",
                &token,
                "--input-tokens",
                "7000",
            ],
        );
        stage_eval(&root, n, 4.4, n == 1);
        ok(&root, &["chapter", "stage", "judged", "--token", &token]);
        ok(
            &root,
            &["chapter", "gate", &n.to_string(), "--token", &token],
        );
        ok(
            &root,
            &["chapter", "commit", &n.to_string(), "--token", &token],
        );
    }
    let p = &ok(&root, &["status"])["data"]["pipeline"];
    assert_eq!(p["logs"], 2, "{p}");
    assert_eq!(p["input_tokens"], 2 * (21000 + 7000));
    assert_eq!(p["output_tokens"], 2 * 4200);
    assert_eq!(p["duration_ms"], 2 * 90000);
    // Only chapter 1's drafting cost is logged ($0.42); the other stages with tokens are priced
    // at list prices (chapter 2's Opus draft $0.63, each refinement's 7,000 input tokens $0.105):
    // the estimate is reported apart, the sum is still a lower bound (the stages without any
    // usage), and the logs' totals stay null, never guessed.
    assert!((p["cost_usd"].as_f64().unwrap() - 1.26).abs() < 1e-9, "{p}");
    assert!(
        (p["estimated_usd"].as_f64().unwrap() - 0.84).abs() < 1e-9,
        "{p}"
    );
    assert_eq!(p["chapters_estimated"], 2, "{p}");
    assert_eq!(p["chapters_without_cost"], 2, "{p}");
    for n in 1..=2 {
        let log = read_json(&root.join(format!("logs/chapter-{n:03}-log.json")));
        assert_eq!(log["total_cost_usd"], Value::Null, "{log}");
    }
}

#[test]
fn a_delta_on_an_unknown_storyline_stops_at_drafted() {
    let (_t, root) = writing_project();
    let token = ok(&root, &["chapter", "begin", "1"])["data"]["token"]
        .as_str()
        .unwrap()
        .to_string();
    stage_drafts(&root, 1);
    let path = root.join("staging/state/chapter-001-delta.json");
    let mut delta = read_json(&path);
    delta["storyline_id"] = json!("ghost_line");
    write_json(&path, &delta);
    let doc = fail(
        &root,
        &["chapter", "stage", "drafted", "--token", &token],
        1,
        "E_STAGING",
    );
    assert!(
        doc["error"]["message"]
            .as_str()
            .unwrap()
            .contains("ghost_line"),
        "{doc}"
    );
}

#[test]
fn an_interrupted_archive_is_finished_by_running_the_stage_again() {
    let (_t, root) = writing_project();
    let token = to_judged(&root, 1, 3.2);
    let mut second = eval_doc(1, 3.3);
    second["judge"] = json!("opus");
    write_json(
        &root.join("staging/evaluations/chapter-001-eval-secondary.json"),
        &second,
    );
    ok(&root, &["chapter", "gate", "1", "--token", &token]);
    // Killed half-way through `stage revising`: the primary evaluation is already archived,
    // nothing else is, and the checkpoint still says judged.
    let archive = root.join("logs/revisions/chapter-001/r1");
    std::fs::create_dir_all(&archive).unwrap();
    std::fs::rename(
        root.join("staging/evaluations/chapter-001-eval.json"),
        archive.join("chapter-001-eval.json"),
    )
    .unwrap();
    let rec = ok(&root, &["chapter", "recover"]);
    assert_eq!(rec["data"]["resume"]["step"], "revise_with_fixes", "{rec}");
    ok(&root, &["chapter", "stage", "revising", "--token", &token]);
    for name in [
        "chapter-001-eval.json",
        "chapter-001-eval-secondary.json",
        "chapter-001-summary.md",
        "chapter-001.md",
    ] {
        assert!(archive.join(name).is_file(), "{name}");
    }
    assert!(
        !root
            .join("staging/evaluations/chapter-001-eval-secondary.json")
            .exists()
    );
    // The text goes too: the revising writer writes the revised text as a new file, from the
    // archived one its packet carries.
    assert!(
        !root.join("staging/chapters/chapter-001.md").exists(),
        "archived for the revising writer"
    );
    assert_eq!(
        read_json(&root.join(".checkpoint.json"))["revision_count"],
        1
    );
}

#[test]
fn begin_says_which_chapters_need_a_second_judge() {
    let (_t, root) = writing_project();
    let first = ok(&root, &["chapter", "begin", "1"]);
    assert_eq!(
        first["data"]["key_chapter"],
        json!(["volume_first"]),
        "{first}"
    );
    let token = first["data"]["token"].as_str().unwrap().to_string();
    stage_drafts(&root, 1);
    ok(&root, &["chapter", "stage", "drafted", "--token", &token]);
    ok(&root, &["chapter", "stage", "refined", "--token", &token]);
    stage_eval(&root, 1, 4.2, true);
    ok(&root, &["chapter", "stage", "judged", "--token", &token]);
    ok(&root, &["chapter", "gate", "1", "--token", &token]);
    ok(&root, &["chapter", "commit", "1", "--token", &token]);
    let second = ok(&root, &["chapter", "begin", "2"]);
    assert_eq!(second["data"]["key_chapter"], json!([]), "{second}");
}

const CORRUPT_LOG: &str = "{\"chapter\": 1, \"stages\": [\n  {\"name\": \"draft\", \"duration_ms\": 45000},\n  坏掉的一行\n";

#[test]
fn a_corrupt_pipeline_log_is_an_error_and_kept() {
    let (_t, root) = writing_project();
    let token = ok(&root, &["chapter", "begin", "1"])["data"]["token"]
        .as_str()
        .unwrap()
        .to_string();
    stage_drafts(&root, 1);
    let log = root.join("staging/logs/chapter-001-log.json");
    std::fs::write(&log, CORRUPT_LOG).unwrap();
    let doc = fail(
        &root,
        &["chapter", "stage", "drafted", "--token", &token],
        2,
        "E_PIPELINE_LOG",
    );
    let message = doc["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("chapter-001-log.json 第 3 行第 3 列"),
        "{doc}"
    );
    assert!(
        doc["error"]["hint"]
            .as_str()
            .unwrap()
            .contains("staging/logs/")
    );
    assert_eq!(std::fs::read_to_string(&log).unwrap(), CORRUPT_LOG);
    assert_eq!(
        read_json(&root.join(".checkpoint.json"))["pipeline_stage"],
        "drafting"
    );

    // Valid JSON of the wrong shape is refused the same way.
    std::fs::write(&log, "{\"chapter\": 1, \"stages\": \"draft\"}\n").unwrap();
    fail(
        &root,
        &["chapter", "stage", "drafted", "--token", &token],
        2,
        "E_PIPELINE_LOG",
    );

    // Repaired by the author, the stage is recorded after what the log already held.
    std::fs::write(
        &log,
        "{\"chapter\": 1, \"stages\": [{\"name\": \"draft\", \"duration_ms\": 45000}]}\n",
    )
    .unwrap();
    ok(&root, &["chapter", "stage", "drafted", "--token", &token]);
    let stages = read_json(&log)["stages"].clone();
    assert_eq!(stages.as_array().unwrap().len(), 2, "{stages}");
    assert_eq!(stages[0]["duration_ms"], 45000);
}

#[test]
fn a_commit_refuses_a_corrupt_pipeline_log_and_keeps_it() {
    let (_t, root, token) = ready_to_commit();
    let log = root.join("staging/logs/chapter-003-log.json");
    std::fs::write(&log, CORRUPT_LOG).unwrap();
    fail(
        &root,
        &["chapter", "commit", "3", "--token", &token],
        2,
        "E_PIPELINE_LOG",
    );
    assert_eq!(std::fs::read_to_string(&log).unwrap(), CORRUPT_LOG);
    assert!(!root.join("logs/chapter-003-log.json").exists());
    assert!(!root.join(".novel-commit-journal.json").exists());
    assert_eq!(
        read_json(&root.join(".checkpoint.json"))["last_completed_chapter"],
        2
    );
}

/// The last changelog line as JSON.
fn last_changelog_line(root: &Path) -> Value {
    let text = std::fs::read_to_string(root.join("state/changelog.jsonl")).unwrap();
    serde_json::from_str(text.lines().last().unwrap()).unwrap()
}

fn file_digest(path: &Path) -> String {
    novel_core::pipeline::text_digest(&std::fs::read(path).unwrap())
}

/// A commit records on its changelog line the digests of the state and foreshadowing files as
/// it left them, and the next commit trusts exactly those bytes without their schema check
/// (what keeps a commit's cost flat as the files grow); bytes edited since are checked again.
#[test]
fn a_commit_trusts_only_the_state_bytes_it_wrote() {
    let (_t, root) = writing_project();
    let state = root.join("state/current-state.json");
    let global = root.join("foreshadowing/global.json");
    for n in 1..=2u32 {
        let token = up_to_gate(&root, n, n == 1);
        ok(
            &root,
            &["chapter", "commit", &n.to_string(), "--token", &token],
        );
        let line = last_changelog_line(&root);
        assert_eq!(line["written"]["state"], file_digest(&state), "{line}");
        assert_eq!(line["written"]["global"], file_digest(&global), "{line}");
    }

    // Edited by hand into something the schema refuses (schema_version ≥ 1): other bytes, so
    // the commit checks them and stops before writing anything.
    let token = up_to_gate(&root, 3, false);
    edit_json(&state, |s| s["schema_version"] = json!(0));
    let before = std::fs::read(&state).unwrap();
    let refused = fail(
        &root,
        &["chapter", "commit", "3", "--token", &token],
        2,
        "E_SCHEMA",
    );
    assert!(
        refused["error"]["message"]
            .as_str()
            .unwrap()
            .contains("schema_version"),
        "{refused}"
    );
    assert_eq!(std::fs::read(&state).unwrap(), before, "nothing written");
    assert_eq!(
        read_json(&root.join(".checkpoint.json"))["last_completed_chapter"],
        2
    );

    // The same bytes, had the binary written them (the line's digest says so), are not checked
    // again: the commit goes through.
    let log = root.join("state/changelog.jsonl");
    let text = std::fs::read_to_string(&log).unwrap();
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    let mut last: Value = serde_json::from_str(lines.last().unwrap()).unwrap();
    last["written"]["state"] = json!(file_digest(&state));
    *lines.last_mut().unwrap() = serde_json::to_string(&last).unwrap();
    std::fs::write(&log, lines.join("\n") + "\n").unwrap();
    ok(&root, &["chapter", "commit", "3", "--token", &token]);
    assert_eq!(last_changelog_line(&root)["chapter"], 3);
}

/// A checkpoint key written as `null` stays when the binary rewrites the checkpoint.
#[test]
fn explicit_nulls_in_the_checkpoint_survive_its_rewrite() {
    let (_t, root) = writing_project();
    let cp_path = root.join(".checkpoint.json");
    let mut cp = read_json(&cp_path);
    cp["error"] = serde_json::Value::Null;
    cp["spec_propagation_seq"] = serde_json::Value::Null;
    write_json(&cp_path, &cp);
    let out = novel(&root, &["--json", "chapter", "begin", "1"]);
    assert_eq!(code(&out), 0, "{}", stdout(&out));
    let cp = read_json(&cp_path);
    assert_eq!(cp["inflight_chapter"], 1, "the begin was written");
    for key in ["error", "spec_propagation_seq"] {
        assert!(
            cp.as_object().unwrap().get(key) == Some(&serde_json::Value::Null),
            "{key}: {cp}"
        );
    }
}

/// Chapter 1 (a key chapter: two evaluations at `score`) staged up to `judged`; its token.
fn judged_at(root: &Path, score: f64) -> String {
    let token = ok(root, &["chapter", "begin", "1"])["data"]["token"]
        .as_str()
        .unwrap()
        .to_string();
    stage_drafts(root, 1);
    ok(root, &["chapter", "stage", "drafted", "--token", &token]);
    ok(root, &["chapter", "stage", "refined", "--token", &token]);
    stage_eval(root, 1, score, true);
    ok(root, &["chapter", "stage", "judged", "--token", &token]);
    token
}

/// `chapter gate --commit`: a pass is committed by the same call (its answer carries what
/// `chapter commit` answers); any other verdict leaves the chapter in staging, `commit` null.
#[test]
fn gate_commit_commits_a_pass_and_only_a_pass() {
    for (score, passes) in [(3.2, false), (4.2, true)] {
        let (_t, root) = writing_project();
        let token = judged_at(&root, score);
        let out = run(
            &root,
            &["chapter", "gate", "1", "--token", &token, "--commit"],
        );
        assert_eq!(code(&out), 0, "{}", stderr(&out));
        let human = stdout(&out);
        let status = ok(&root, &["status"]);
        if passes {
            assert!(human.contains("第 1 章已提交"), "{human}");
            assert!(root.join("chapters/chapter-001.md").is_file());
            assert_eq!(status["data"]["last_completed_chapter"], 1, "{status}");
            assert_eq!(status["data"]["lock"]["state"], "free", "{status}");
            // The committed log is the one `chapter commit` writes.
            let log = read_json(&root.join("logs/chapter-001-log.json"));
            assert_eq!(log["gate_decision"], "pass", "{log}");
        } else {
            assert!(!human.contains("已提交"), "{human}");
            assert!(!root.join("chapters/chapter-001.md").exists());
            assert_eq!(status["data"]["last_completed_chapter"], 0, "{status}");
            assert!(root.join("staging/chapters/chapter-001.md").is_file());
        }
    }
    // The JSON answer: the gate's data with `commit`.
    let (_t, root) = writing_project();
    let token = judged_at(&root, 4.2);
    let gate = ok(
        &root,
        &["chapter", "gate", "1", "--token", &token, "--commit"],
    );
    assert_eq!(gate["data"]["decision"], "pass", "{gate}");
    assert_eq!(gate["data"]["commit"]["chapter"], 1, "{gate}");
    assert_eq!(
        gate["data"]["commit"]["last_completed_chapter"], 1,
        "{gate}"
    );
    assert!(gate["data"]["commit"]["chars"].as_u64().is_some(), "{gate}");
    // Nothing left to commit: a second commit is refused.
    let out = run(
        &root,
        &["--json", "chapter", "commit", "1", "--token", &token],
    );
    assert_ne!(code(&out), 0, "{}", stdout(&out));
}
