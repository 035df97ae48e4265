//! No lost update: while a journal (commit, retirement, `ops apply`, rebuild) is pending,
//! every other writer refuses, and a writer killed at any step is finished by `chapter
//! recover` with nothing an author applied lost.

use std::path::Path;
use std::process::{Command, Output};

use serde_json::{Value, json};

use crate::support::*;
use crate::test_chapter::{NOW, copy_dir, diff_trees, fail, ok, ready_to_commit, tree};

const JOURNAL: &str = ".novel-commit-journal.json";

fn run_env(root: &Path, args: &[&str], env: &[(&str, &str)]) -> Output {
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
fn other_writer_then_recover(root: &Path, what: &str) {
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
        other_writer_then_recover(&dir, &format!("提交第{step}步"));
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
            other_writer_then_recover(&dir, &format!("{what}第{step}步"));
            assert!(step < 20);
        }
    }
}
