//! No lost update: while a journal (commit, retirement, `ops apply`, rebuild) is pending,
//! every other writer refuses, and a writer killed at any step is finished by `chapter
//! recover` with nothing an author applied lost.

use std::path::Path;
use std::process::{Command, Output};

use serde_json::{Value, json};

use crate::support::*;
use crate::test_chapter::{NOW, copy_dir, diff_trees, fail, ok, ready_to_commit, tree};

const JOURNAL: &str = ".novel-commit-journal.json";

pub(crate) fn run_env(root: &Path, args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut c = Command::new(bin());
    c.args(args)
        .current_dir(root)
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .env("NOVEL_NOW", NOW);
    for (k, v) in env {
        c.env(k, v);
    }
    c.output().unwrap()
}

fn dead_pid() -> u32 {
    let mut dead = Command::new("true").spawn().unwrap();
    let pid = dead.id();
    dead.wait().unwrap();
    pid
}

/// Makes the lock look like its owner (the session) died.
fn kill_lock_owner(root: &Path) {
    let path = root.join(".novel.lock/info.json");
    let mut info = read_json(&path);
    info["pid"] = json!(dead_pid());
    info["pid_start"] = Value::Null;
    write_json(&path, &info);
}

fn version(root: &Path) -> u64 {
    read_json(&root.join("state/current-state.json"))["state_version"]
        .as_u64()
        .unwrap()
}

/// A manual delta for `chapter` that sets one recognisable value.
fn manual_delta(root: &Path, chapter: u32, value: &str) -> std::path::PathBuf {
    let file = root.join(format!("manual-{value}.json"));
    write_json(
        &file,
        &json!({"chapter": chapter, "base_state_version": version(root), "storyline_id": "main_arc",
            "ops": [{"op": "set", "path": "world_state.marker", "value": value}]}),
    );
    file
}

#[test]
fn writers_refuse_while_a_commit_journal_is_pending() {
    let (tmp, root, token) = ready_to_commit();
    let reference = tmp.path().join("reference");
    copy_dir(&root, &reference);
    ok(&reference, &["chapter", "commit", "3", "--token", &token]);
    let want = tree(&reference);

    let crashed = run_env(
        &root,
        &["chapter", "commit", "3", "--token", &token],
        &[("NOVEL_FAILPOINT", "commit:2")],
    );
    assert_eq!(code(&crashed), 99, "{}", stderr(&crashed));
    assert!(root.join(JOURNAL).exists());
    let delta = manual_delta(&root, 3, "作者手改");
    let delta = delta.to_str().unwrap();

    // The session that holds the lock is alive (this test process) …
    for owner_dead in [false, true] {
        if owner_dead {
            // … and then it died: its lock is stale, which must not let a writer in either.
            kill_lock_owner(&root);
        }
        fail(&root, &["ops", "apply", delta, "--manual"], 3, "E_JOURNAL");
        fail(&root, &["state", "rebuild", "--write"], 3, "E_JOURNAL");
        fail(&root, &["lock", "acquire"], 3, "E_JOURNAL");
        fail(&root, &["chapter", "begin", "4"], 3, "E_JOURNAL");
        fail(
            &root,
            &["chapter", "stage", "judged", "--token", &token],
            3,
            "E_JOURNAL",
        );
        fail(
            &root,
            &["chapter", "commit", "3", "--token", &token],
            3,
            "E_JOURNAL",
        );
        fail(
            &root,
            &[
                "chapter", "fail", "3", "--token", &token, "--reason", "测试",
            ],
            3,
            "E_JOURNAL",
        );
    }
    let rec = ok(&root, &["chapter", "recover"]);
    assert!(
        rec["data"]["actions"][0]
            .as_str()
            .unwrap()
            .contains("补完了中断的第 3 章的提交"),
        "{rec}"
    );
    std::fs::remove_file(root.join("manual-作者手改.json")).unwrap();
    assert_eq!(diff_trees(&want, &tree(&root)), Vec::<String>::new());
    assert_eq!(code(&run_env(&root, &["state", "rebuild"], &[])), 0);
    assert_eq!(code(&run_env(&root, &["validate"], &[])), 0);
}

/// Runs `args` with the fail point after journal step `step`; true when it crashed there.
fn crash_at(root: &Path, args: &[&str], step: usize) -> bool {
    let out = run_env(
        root,
        args,
        &[("NOVEL_FAILPOINT", &format!("commit:{step}"))],
    );
    match code(&out) {
        99 => true,
        0 => false,
        c => panic!(
            "{args:?} at step {step}: exit {c}: {}{}",
            stdout(&out),
            stderr(&out)
        ),
    }
}

/// After a crash of one writer: another writer tries (it must either refuse with E_JOURNAL or
/// apply fully), then `recover`; the project validates, a rebuild shows no difference, and
/// what the other writer applied is still there.
fn other_writer_then_recover(root: &Path, what: &str, rerun: &[&str]) {
    let pending = root.join(JOURNAL).exists();
    let last = read_json(&root.join(".checkpoint.json"))["last_completed_chapter"]
        .as_u64()
        .unwrap() as u32;
    let changelog_last = std::fs::read_to_string(root.join("state/changelog.jsonl"))
        .unwrap()
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter_map(|e| e["chapter"].as_u64())
        .max()
        .unwrap_or(0) as u32;
    let marker = format!("{what}之后");
    let delta = manual_delta(root, last.max(changelog_last), &marker);
    let out = run_env(
        root,
        &[
            "--json",
            "ops",
            "apply",
            delta.to_str().unwrap(),
            "--manual",
        ],
        &[],
    );
    std::fs::remove_file(&delta).unwrap();
    let applied = match code(&out) {
        0 => {
            assert!(!pending, "{what}: a writer ran while a journal was pending");
            true
        }
        3 => {
            assert!(
                pending,
                "{what}: refused without a journal: {}",
                stdout(&out)
            );
            assert_eq!(json(&out)["error"]["code"], "E_JOURNAL", "{what}");
            false
        }
        c => panic!("{what}: ops apply exit {c}: {}", stdout(&out)),
    };
    let out = run_env(root, &["--json", "chapter", "recover"], &[]);
    assert_eq!(code(&out), 0, "{what}: {}", stdout(&out));
    assert!(!root.join(JOURNAL).exists(), "{what}");
    if !rerun.is_empty() {
        // A writer killed before its journal did nothing: the author runs it again.
        let out = run_env(root, rerun, &[]);
        assert_eq!(
            code(&out),
            0,
            "{what}: rerun: {}{}",
            stdout(&out),
            stderr(&out)
        );
    }
    let out = run_env(root, &["state", "rebuild"], &[]);
    assert_eq!(code(&out), 0, "{what}: rebuild differs: {}", stdout(&out));
    let out = run_env(root, &["validate"], &[]);
    assert_eq!(code(&out), 0, "{what}: {}", stdout(&out));
    let state = read_json(&root.join("state/current-state.json"));
    if applied {
        assert_eq!(
            state["world_state"]["marker"],
            json!(marker),
            "{what}: lost"
        );
    }
    for entry in std::fs::read_dir(root.join("state/backups"))
        .into_iter()
        .flatten()
        .flatten()
    {
        assert!(
            entry.metadata().unwrap().len() > 0,
            "{what}: empty backup {:?}",
            entry.file_name()
        );
    }
}

#[test]
fn every_journaled_writer_killed_at_every_step_loses_nothing() {
    // The chapter commit.
    let (tmp, prepared, token) = ready_to_commit();
    for step in 0.. {
        let dir = tmp.path().join(format!("commit-{step}"));
        copy_dir(&prepared, &dir);
        kill_lock_owner(&dir);
        if !crash_at(&dir, &["chapter", "commit", "3", "--token", &token], step) {
            break;
        }
        other_writer_then_recover(&dir, &format!("提交第{step}步"), &[]);
        assert!(step < 40);
    }
    // Retirement, ops apply and rebuild on the spec fixture.
    let (tmp, prepared) = crate::test_retire::fixture_copy(&[]);
    let manual = prepared.join("manual.json");
    write_json(
        &manual,
        &json!({"chapter": 33, "base_state_version": 2, "storyline_id": "main_arc",
            "ops": [{"op": "set", "path": "characters.lu-chen.location", "value": "天机阁"}]}),
    );
    // A state file that differs from its changelog, for `rebuild --write` to repair.
    let broken = tmp.path().join("broken");
    copy_dir(&prepared, &broken);
    let mut state = read_json(&broken.join("state/current-state.json"));
    state["characters"]["lu-chen"]["location"] = json!("手改的地点");
    write_json(&broken.join("state/current-state.json"), &state);
    let writers: [(&str, &Path, Vec<&str>); 3] = [
        ("退场", &prepared, vec!["retire", "apply", "li-si"]),
        (
            "合并",
            &prepared,
            vec!["ops", "apply", "manual.json", "--manual"],
        ),
        ("重建", &broken, vec!["state", "rebuild", "--write"]),
    ];
    for (what, from, args) in writers {
        for step in 0.. {
            let dir = tmp.path().join(format!("{what}-{step}"));
            copy_dir(from, &dir);
            if !crash_at(&dir, &args, step) {
                break;
            }
            other_writer_then_recover(&dir, &format!("{what}第{step}步"), &[]);
            assert!(step < 20);
        }
    }
}

/// The changelog lines of a project.
fn changelog(root: &Path) -> String {
    std::fs::read_to_string(root.join("state/changelog.jsonl")).unwrap()
}

/// Killed inside the changelog append — cut back, half the line written (a torn line), written
/// but not fsynced —: `recover` cuts the torn half and appends the line whole, once, and the
/// project ends byte-identical to an uninterrupted run.
#[test]
fn every_writer_killed_inside_the_changelog_append_leaves_no_torn_line() {
    let (tmp, prepared, token) = ready_to_commit();
    let commit = ["chapter", "commit", "3", "--token", &token];
    let (spec_tmp, spec) = crate::test_retire::fixture_copy(&[]);
    write_json(
        &spec.join("manual.json"),
        &json!({"chapter": 33, "base_state_version": 2, "storyline_id": "main_arc",
            "ops": [{"op": "set", "path": "characters.lu-chen.location", "value": "天机阁"}]}),
    );
    let writers: [(&str, &Path, &[&str]); 4] = [
        ("提交", &prepared, &commit),
        ("合并", &spec, &["ops", "apply", "manual.json", "--manual"]),
        (
            "跳过",
            &spec,
            &["ops", "skip", "--chapter", "33", "--reason", "解析失败"],
        ),
        ("退场", &spec, &["retire", "apply", "li-si"]),
    ];
    for (what, from, args) in writers {
        let reference = tmp.path().join(format!("{what}-reference"));
        copy_dir(from, &reference);
        let done = run_env(&reference, args, &[]);
        assert_eq!(code(&done), 0, "{what}: {}{}", stdout(&done), stderr(&done));
        let before = changelog(from);
        assert_eq!(
            changelog(&reference).lines().count(),
            before.lines().count() + 1,
            "{what}"
        );
        for step in 0..3 {
            let dir = spec_tmp.path().join(format!("{what}-append-{step}"));
            copy_dir(from, &dir);
            kill_lock_owner_if_any(&dir);
            let out = run_env(
                &dir,
                args,
                &[("NOVEL_FAILPOINT", &format!("append:{step}"))],
            );
            assert_eq!(code(&out), 99, "{what} append:{step}: {}", stderr(&out));
            assert!(dir.join(JOURNAL).exists(), "{what}");
            let torn = changelog(&dir);
            if step == 1 {
                assert!(!torn.ends_with('\n'), "{what}: half a line was written");
                // Nothing reads the torn half as a line: the next commit or apply refuses.
                let out = run_env(&dir, &["--json", "validate"], &[]);
                assert_eq!(code(&out), 1, "{what}: {}", stdout(&out));
            }
            other_writer_then_recover(&dir, &format!("{what} append:{step}"), &[]);
            let recovered = changelog(&dir);
            assert!(recovered.ends_with('\n'), "{what} append:{step}");
            assert_eq!(recovered, changelog(&reference), "{what} append:{step}");
            assert_eq!(
                diff_trees(&tree(&reference), &tree(&dir)),
                Vec::<String>::new(),
                "{what} append:{step}"
            );
        }
    }
}

/// [`kill_lock_owner`] when the project is locked.
fn kill_lock_owner_if_any(root: &Path) {
    if root.join(".novel.lock/info.json").exists() {
        kill_lock_owner(root);
    }
}

// ---- Commit what was judged ----------------------------------------------------------------

#[test]
fn commit_refuses_staged_files_changed_after_the_gate() {
    let (tmp, root) = crate::test_chapter::writing_project();
    let token = crate::test_chapter::up_to_gate(&root, 1, true);
    let chapter = root.join("staging/chapters/chapter-001.md");
    let judged = std::fs::read(&chapter).unwrap();
    // Emptied after the gate.
    std::fs::write(&chapter, "").unwrap();
    let doc = fail(
        &root,
        &["chapter", "commit", "1", "--token", &token],
        3,
        "E_STAGING_CHANGED",
    );
    assert!(
        doc["error"]["message"]
            .as_str()
            .unwrap()
            .contains("staging/chapters/chapter-001.md"),
        "{doc}"
    );
    // Replaced by another text.
    std::fs::write(&chapter, "# 第1章 风起\n\n换了一章没评审过的稿子。\n").unwrap();
    fail(
        &root,
        &["chapter", "commit", "1", "--token", &token],
        3,
        "E_STAGING_CHANGED",
    );
    // The summary too, and a staged file that appeared after the gate.
    std::fs::write(&chapter, &judged).unwrap();
    let summary = root.join("staging/summaries/chapter-001-summary.md");
    let summary_judged = std::fs::read(&summary).unwrap();
    std::fs::write(
        &summary,
        "---\nchapter: 1\nstoryline_id: main_arc\n---\n改过\n",
    )
    .unwrap();
    fail(
        &root,
        &["chapter", "commit", "1", "--token", &token],
        3,
        "E_STAGING_CHANGED",
    );
    std::fs::write(&summary, &summary_judged).unwrap();
    // A symlink to a file outside the project, even with the judged bytes, is never followed.
    let outside = tmp.path().join("outside.md");
    std::fs::write(&outside, &judged).unwrap();
    std::fs::remove_file(&chapter).unwrap();
    std::os::unix::fs::symlink(&outside, &chapter).unwrap();
    let doc = fail(
        &root,
        &["chapter", "commit", "1", "--token", &token],
        2,
        "E_NOT_REGULAR_FILE",
    );
    assert!(!root.join("chapters/chapter-001.md").exists(), "{doc}");
    // Restored: the judged files commit, and the commit reports its figures.
    std::fs::remove_file(&chapter).unwrap();
    std::fs::write(&chapter, &judged).unwrap();
    let done = ok(&root, &["chapter", "commit", "1", "--token", &token]);
    assert_eq!(done["data"]["chars"], json!(71), "{done}");
    assert_eq!(done["data"]["gate_overall"], json!(4.2), "{done}");
    assert_eq!(done["data"]["gate_decision"], "pass", "{done}");
    assert_eq!(done["data"]["revisions"], json!(0), "{done}");
    assert_eq!(
        std::fs::read(root.join("chapters/chapter-001.md")).unwrap(),
        judged
    );
}

#[test]
fn a_symlinked_staged_file_is_refused_at_the_gate() {
    let (tmp, root) = crate::test_chapter::writing_project();
    let token = ok(&root, &["chapter", "begin", "1"])["data"]["token"]
        .as_str()
        .unwrap()
        .to_string();
    crate::test_chapter::stage_drafts(&root, 1);
    ok(&root, &["chapter", "stage", "drafted", "--token", &token]);
    ok(&root, &["chapter", "stage", "refined", "--token", &token]);
    crate::test_chapter::stage_eval(&root, 1, 4.2, true);
    ok(&root, &["chapter", "stage", "judged", "--token", &token]);
    let memory = root.join("staging/storylines/main_arc/memory.md");
    let outside = tmp.path().join("secret.md");
    std::fs::write(&outside, "项目外的文件").unwrap();
    std::fs::remove_file(&memory).unwrap();
    std::os::unix::fs::symlink(&outside, &memory).unwrap();
    fail(
        &root,
        &["chapter", "gate", "1", "--token", &token],
        2,
        "E_NOT_REGULAR_FILE",
    );
}

// ---- Numbers, all-rejected deltas ---------------------------------------------------------

#[test]
fn chapter_numbers_near_u32_max_are_refused_everywhere() {
    let (_t, root) = crate::test_chapter::writing_project();
    let huge = u32::MAX.to_string();
    let delta = root.join("huge.json");
    write_json(
        &delta,
        &json!({"chapter": u32::MAX, "base_state_version": 0, "storyline_id": "main_arc",
            "ops": [{"op": "set", "path": "world_state.x", "value": 1}]}),
    );
    let d = delta.to_str().unwrap();
    fail(&root, &["ops", "validate", d], 1, "E_DELTA");
    fail(&root, &["ops", "apply", d, "--manual"], 1, "E_DELTA");
    for args in [
        vec!["ops", "skip", "--chapter", &huge, "--reason", "x"],
        vec!["chapter", "begin", &huge],
        vec!["state", "at", "--chapter", &huge],
        vec!["lock", "acquire", "--chapter", &huge],
    ] {
        let out = run_env(&root, &args, &[]);
        assert_eq!(code(&out), 2, "{args:?}: {}", stderr(&out));
        assert!(stderr(&out).contains("超出范围：应为 0–99999"), "{args:?}");
    }
    let cp_path = root.join(".checkpoint.json");
    let mut cp = read_json(&cp_path);
    cp["last_completed_chapter"] = json!(u32::MAX);
    write_json(&cp_path, &cp);
    let out = run_env(&root, &["--json", "validate"], &[]);
    assert_eq!(code(&out), 1);
    let findings = json(&out)["data"]["findings"].to_string();
    assert!(findings.contains("/last_completed_chapter"), "{findings}");
}

#[test]
fn ops_apply_with_every_op_rejected_writes_nothing() {
    let (_t, root) = crate::test_chapter::writing_project();
    let before_state = std::fs::read(root.join("state/current-state.json")).unwrap();
    let before_log = std::fs::read(root.join("state/changelog.jsonl")).ok();
    let delta = root.join("bad.json");
    write_json(
        &delta,
        &json!({"chapter": 0, "base_state_version": 0, "storyline_id": "main_arc",
            "ops": [{"op": "set", "path": "characters.陆尘.location", "value": "青云镇"},
                    {"op": "inc", "path": "characters.lu-chen.hp", "value": "十"}]}),
    );
    let doc = fail(
        &root,
        &["ops", "apply", delta.to_str().unwrap(), "--manual"],
        1,
        "E_OPS_REJECTED",
    );
    assert_eq!(doc["data"]["rejected"].as_array().unwrap().len(), 2);
    assert_eq!(
        std::fs::read(root.join("state/current-state.json")).unwrap(),
        before_state
    );
    assert_eq!(
        std::fs::read(root.join("state/changelog.jsonl")).ok(),
        before_log
    );
}

#[test]
fn resolves_skipped_takes_ranges() {
    let (_t, root) = crate::test_chapter::writing_project();
    for n in 1..=3 {
        // Chapter n is the one being written (a skip may not run ahead of the book).
        edit_json(&root.join(".checkpoint.json"), |cp| {
            cp["last_completed_chapter"] = json!(n - 1);
        });
        ok(
            &root,
            &[
                "ops",
                "skip",
                "--chapter",
                &n.to_string(),
                "--reason",
                "两次解析失败",
            ],
        );
    }
    let delta = manual_delta(&root, 3, "补记");
    let applied = ok(
        &root,
        &[
            "ops",
            "apply",
            delta.to_str().unwrap(),
            "--manual",
            "--resolves-skipped",
            "1..2,3",
        ],
    );
    assert_eq!(applied["data"]["skipped_chapters"], json!([]), "{applied}");
    let out = run_env(
        &root,
        &[
            "ops",
            "apply",
            "x.json",
            "--manual",
            "--resolves-skipped",
            "3..1",
        ],
        &[],
    );
    assert_eq!(code(&out), 2);
}

// ---- The lock around `chapter begin` -------------------------------------------------------

#[test]
fn begin_that_fails_after_taking_the_lock_releases_it() {
    let (_t, root) = crate::test_chapter::writing_project();
    // A missing staging directory is simply created again …
    std::fs::remove_dir_all(root.join("staging/logs")).unwrap();
    let token = ok(&root, &["chapter", "begin", "1"])["data"]["token"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(root.join("staging/logs/chapter-001-log.json").exists());
    ok(&root, &["lock", "release", "--token", &token]);
    // … and one that cannot be made fails the begin without leaving the lock behind.
    let (_t2, root) = crate::test_chapter::writing_project();
    std::fs::remove_dir_all(root.join("staging/logs")).unwrap();
    std::fs::write(root.join("staging/logs"), "不是目录").unwrap();
    let out = run_env(&root, &["--json", "chapter", "begin", "1"], &[]);
    assert_eq!(code(&out), 2, "{}", stdout(&out));
    assert!(!root.join(".novel.lock").exists(), "the lock was left held");
    assert_eq!(
        read_json(&root.join(".checkpoint.json"))["inflight_chapter"],
        Value::Null
    );
}

#[test]
fn the_session_that_holds_the_lock_resumes_its_chapter_with_the_same_token() {
    let (_t, root) = crate::test_chapter::writing_project();
    let first = ok(&root, &["chapter", "begin", "1"]);
    let token = first["data"]["token"].as_str().unwrap();
    let again = ok(&root, &["chapter", "begin", "1"]);
    assert_eq!(again["data"]["token"], json!(token));
    assert_eq!(again["data"]["resumed"], true);
    // Someone else's session still cannot.
    let other = crate::support::Alive::new();
    let out = run_env(
        &root,
        &[
            "--json",
            "chapter",
            "begin",
            "1",
            "--owner-pid",
            &other.pid().to_string(),
        ],
        &[],
    );
    assert_eq!(code(&out), 3);
    assert_eq!(json(&out)["error"]["code"], "E_LOCKED");
}

#[test]
fn a_lock_without_its_info_names_no_process_0() {
    let (_t, root) = new_project();
    std::fs::create_dir(root.join(".novel.lock")).unwrap();
    let out = run_env(&root, &["--json", "lock", "acquire"], &[]);
    assert_eq!(code(&out), 3);
    let message = json(&out)["error"]["message"].as_str().unwrap().to_string();
    assert!(!message.contains("进程 0"), "{message}");
    assert!(message.contains("持有者未知"), "{message}");
}

// ---- Backups --------------------------------------------------------------------------------

/// The backups of `state rebuild --write` are writes of its journal: killed before the journal,
/// no backup is left behind; killed after any step of it, `recover` finishes the backups with
/// the rest — never an empty or a half one.
#[test]
fn a_rebuild_killed_mid_backup_leaves_no_empty_backup() {
    let (tmp, prepared) = crate::test_retire::fixture_copy(&[]);
    let mut state = read_json(&prepared.join("state/current-state.json"));
    state["characters"]["lu-chen"]["location"] = json!("手改的地点");
    write_json(&prepared.join("state/current-state.json"), &state);
    let names = |root: &Path| -> Vec<(String, u64)> {
        let mut out: Vec<(String, u64)> = std::fs::read_dir(root.join("state/backups"))
            .into_iter()
            .flatten()
            .flatten()
            .map(|e| {
                (
                    e.file_name().to_string_lossy().into_owned(),
                    e.metadata().unwrap().len(),
                )
            })
            .collect();
        out.sort();
        out
    };
    let reference = tmp.path().join("reference");
    copy_dir(&prepared, &reference);
    ok(&reference, &["state", "rebuild", "--write"]);
    let want = names(&reference);
    assert!(
        want.len() >= 2 && want.iter().all(|(_, len)| *len > 0),
        "{want:?}"
    );
    for step in 0.. {
        let root = tmp.path().join(format!("step-{step}"));
        copy_dir(&prepared, &root);
        if !crash_at(&root, &["state", "rebuild", "--write"], step) {
            break;
        }
        ok(&root, &["chapter", "recover"]);
        assert_eq!(names(&root), want, "step {step}");
        assert!(step < 20);
    }
}

// ---- validate says what every other command would say ---------------------------------------

fn validate_findings(root: &Path) -> (i32, Vec<Value>) {
    let out = run_env(root, &["--json", "validate"], &[]);
    let doc = json(&out);
    (
        code(&out),
        doc["data"]["findings"]
            .as_array()
            .cloned()
            .unwrap_or_default(),
    )
}

/// Whether a finding has `code` at `place` (`file`, or `file:line`).
fn has(findings: &[Value], code: &str, place: &str) -> bool {
    findings.iter().any(|f| {
        let mut at = f["file"].as_str().unwrap_or_default().to_string();
        if let Some(line) = f["line"].as_u64() {
            at.push_str(&format!(":{line}"));
        }
        f["code"] == code && at.starts_with(place)
    })
}

#[test]
fn validate_rejects_an_outline_the_packets_reject() {
    let (_t, root) = crate::test_chapter::writing_project();
    std::fs::write(
        root.join("volumes/vol-01/outline.md"),
        "# 第一卷\n\n## 第1章 风起\n- 故事线：main_arc\n\n## 第1章 又是第一章\n- 故事线：main_arc\n",
    )
    .unwrap();
    let context = run_env(&root, &["context", "chapter-writer", "--chapter", "1"], &[]);
    assert_ne!(code(&context), 0, "the packet refuses this outline");
    let (c, findings) = validate_findings(&root);
    assert_eq!(c, 1, "{findings:?}");
    assert!(
        has(&findings, "E_OUTLINE", "volumes/vol-01/outline.md:6"),
        "{findings:?}"
    );
    // By path, too.
    let out = run_env(&root, &["validate", "volumes/vol-01/outline.md"], &[]);
    assert_eq!(code(&out), 1, "{}", stdout(&out));
}

#[test]
fn validate_rejects_a_state_its_changelog_cannot_rebuild() {
    let (_t, root) = crate::test_chapter::writing_project();
    let path = root.join("state/current-state.json");
    let mut state = read_json(&path);
    state["state_version"] = json!(12);
    write_json(&path, &state);
    std::fs::write(root.join("state/changelog.jsonl"), "").unwrap();
    let (c, findings) = validate_findings(&root);
    assert_eq!(c, 1);
    assert!(
        has(&findings, "E_STATE_DIVERGED", "state/current-state.json"),
        "{findings:?}"
    );
}

#[test]
fn validate_rejects_a_half_applied_commit() {
    let (_t, root, token) = ready_to_commit();
    let crashed = run_env(
        &root,
        &["chapter", "commit", "3", "--token", &token],
        &[("NOVEL_FAILPOINT", "commit:3")],
    );
    assert_eq!(code(&crashed), 99);
    let (c, findings) = validate_findings(&root);
    assert_eq!(c, 1);
    assert!(has(&findings, "E_JOURNAL", JOURNAL), "{findings:?}");
    ok(&root, &["chapter", "recover"]);
    assert_eq!(validate_findings(&root).0, 0);
}

#[test]
fn validate_of_a_path_it_cannot_check_is_not_a_pass() {
    let (_t, root) = crate::test_chapter::writing_project();
    std::fs::write(root.join("notes.txt"), "随手记").unwrap();
    let out = run_env(&root, &["--json", "validate", "notes.txt"], &[]);
    assert_eq!(code(&out), 2, "{}", stdout(&out));
    assert_eq!(json(&out)["error"]["code"], "E_USAGE");
}

/// SIGKILL at random moments (not only at the journal's steps): before the journal, inside
/// a backup, between two renames.
#[test]
fn every_writer_sigkilled_at_random_points_loses_nothing() {
    let (tmp, prepared) = crate::test_retire::fixture_copy(&[]);
    write_json(
        &prepared.join("manual.json"),
        &json!({"chapter": 33, "base_state_version": 2, "storyline_id": "main_arc",
            "ops": [{"op": "set", "path": "characters.lu-chen.location", "value": "天机阁"}]}),
    );
    let broken = tmp.path().join("broken");
    copy_dir(&prepared, &broken);
    let mut state = read_json(&broken.join("state/current-state.json"));
    state["characters"]["lu-chen"]["location"] = json!("手改的地点");
    write_json(&broken.join("state/current-state.json"), &state);
    let mut seed: u64 = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos() as u64;
    eprintln!("seed {seed}");
    let writers: [(&str, &Path, &[&str]); 3] = [
        ("退场", &prepared, &["retire", "apply", "li-si"]),
        (
            "合并",
            &prepared,
            &["ops", "apply", "manual.json", "--manual"],
        ),
        ("重建", &broken, &["state", "rebuild", "--write"]),
    ];
    for (what, from, args) in writers {
        for i in 0..8 {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let delay_us = (seed >> 33) % 15_000;
            let dir = tmp.path().join(format!("kill-{what}-{i}"));
            copy_dir(from, &dir);
            let mut child = Command::new(bin())
                .args(args)
                .current_dir(&dir)
                .env_clear()
                .env("PATH", "/usr/bin:/bin")
                .env("NOVEL_NOW", NOW)
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::null())
                .spawn()
                .unwrap();
            std::thread::sleep(std::time::Duration::from_micros(delay_us));
            let _ = child.kill();
            let _ = child.wait();
            // Only the rebuild can simply be run again (retire and apply would apply twice).
            let rerun: &[&str] = if what == "重建" { args } else { &[] };
            other_writer_then_recover(&dir, &format!("{what} kill {i} after {delay_us} µs"), rerun);
        }
    }
}

#[test]
fn the_author_accepting_a_paused_chapter_takes_their_own_touch_ups() {
    let (_t, root) = crate::test_chapter::writing_project();
    let token = ok(&root, &["chapter", "begin", "1"])["data"]["token"]
        .as_str()
        .unwrap()
        .to_string();
    crate::test_chapter::stage_drafts(&root, 1);
    ok(&root, &["chapter", "stage", "drafted", "--token", &token]);
    ok(&root, &["chapter", "stage", "refined", "--token", &token]);
    crate::test_chapter::stage_eval(&root, 1, 2.5, true);
    ok(&root, &["chapter", "stage", "judged", "--token", &token]);
    let gate = ok(&root, &["chapter", "gate", "1", "--token", &token]);
    assert_eq!(gate["data"]["decision"], "pause");
    let edited = "# 第1章 风起\n\n陆尘推门而入，屋里一灯如豆，窗纸上有道新裂口。\n";
    std::fs::write(root.join("staging/chapters/chapter-001.md"), edited).unwrap();
    // Without the author's word a paused chapter does not commit at all.
    fail(
        &root,
        &["chapter", "commit", "1", "--token", &token],
        1,
        "E_GATE",
    );
    let done = ok(
        &root,
        &["chapter", "commit", "1", "--token", &token, "--accept"],
    );
    assert_eq!(done["data"]["accepted_by_author"], true);
    assert_eq!(
        std::fs::read_to_string(root.join("chapters/chapter-001.md")).unwrap(),
        edited
    );
}

/// Makes the lock name another session on this host, alive while `other` runs.
fn hand_lock_to(root: &Path, other: &Alive) {
    let path = root.join(".novel.lock/info.json");
    let mut info = read_json(&path);
    info["pid"] = json!(other.pid());
    info["pid_started"] = Value::Null;
    write_json(&path, &info);
}

#[test]
fn recover_leaves_the_journal_of_a_live_holder_alone() {
    let (_t, root, token) = ready_to_commit();
    assert!(crash_at(
        &root,
        &["chapter", "commit", "3", "--token", &token],
        2
    ));
    let journal = std::fs::read(root.join(JOURNAL)).unwrap();
    let other = Alive::new();
    hand_lock_to(&root, &other);
    let before = tree(&root);

    let doc = fail(&root, &["chapter", "recover"], 3, "E_LOCKED");
    let message = doc["error"]["message"].as_str().unwrap();
    assert!(message.contains("第 3 章的提交没有完成"), "{doc}");
    assert!(message.contains(&format!("进程 {}", other.pid())), "{doc}");
    assert!(
        doc["error"]["hint"]
            .as_str()
            .unwrap()
            .contains("novel lock clear"),
        "{doc}"
    );
    assert_eq!(std::fs::read(root.join(JOURNAL)).unwrap(), journal);
    assert_eq!(diff_trees(&before, &tree(&root)), Vec::<String>::new());

    // That session is gone: its lock is stale and the journal is rolled forward.
    drop(other);
    let rec = ok(&root, &["chapter", "recover"]);
    assert!(
        rec["data"]["actions"][0]
            .as_str()
            .unwrap()
            .contains("补完了中断的第 3 章的提交"),
        "{rec}"
    );
    assert!(!root.join(JOURNAL).exists());
    assert!(
        !root.join(".novel.lock").exists(),
        "the journal released its lock"
    );
    assert_eq!(
        read_json(&root.join(".checkpoint.json"))["last_completed_chapter"],
        3
    );
}

#[test]
fn recover_waits_for_the_guard_a_writer_holds() {
    let (_t, root, token) = ready_to_commit();
    assert!(crash_at(
        &root,
        &["chapter", "commit", "3", "--token", &token],
        2
    ));
    let journal = std::fs::read(root.join(JOURNAL)).unwrap();
    // A writer half-way through a journal holds the guard (the flock on the project
    // directory): recover must not roll forward under it.
    let guard = std::fs::File::open(&root).unwrap();
    guard.lock().unwrap();
    let out = run_env(
        &root,
        &["--json", "chapter", "recover"],
        &[("NOVEL_LOCK_TIMEOUT", "0.3")],
    );
    assert_eq!(code(&out), 3, "{}", stdout(&out));
    let doc = json(&out);
    assert_eq!(doc["error"]["code"], "E_LOCKED", "{doc}");
    // It names the writer that holds the guard (this test process) and the knob to turn.
    let message = doc["error"]["message"].as_str().unwrap();
    assert!(
        message.contains(&format!("进程 {}", std::process::id())),
        "{doc}"
    );
    assert!(
        doc["error"]["hint"]
            .as_str()
            .unwrap()
            .contains("NOVEL_LOCK_TIMEOUT"),
        "{doc}"
    );
    assert_eq!(std::fs::read(root.join(JOURNAL)).unwrap(), journal);
    drop(guard);
    ok(&root, &["chapter", "recover"]);
    assert!(!root.join(JOURNAL).exists());
}
