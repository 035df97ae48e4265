//! The project lock (`002` §10.7): compatibility with a bare `{pid, started, chapter}` lock,
//! a live holder on this host is never stolen, a reused pid is not the holder, `clear` says
//! what it removed, and a losing racer names the winner.

use std::path::Path;
use std::process::{Command, Stdio};

use serde_json::{Value, json};

use crate::support::*;

fn run_json(root: &Path, args: &[&str]) -> (i32, Value) {
    let mut full = vec!["--json"];
    full.extend_from_slice(args);
    let out = novel(root, &full);
    (code(&out), json(&out))
}

fn host() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .unwrap_or_default()
        .trim()
        .to_string()
}

fn now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs()
}

fn iso(secs: u64) -> String {
    novel_store::time::format_utc(secs)
}

fn put_lock(root: &Path, info: Value) {
    std::fs::create_dir(root.join(".novel.lock")).unwrap();
    write_json(&root.join(".novel.lock/info.json"), &info);
}

fn lock_state(root: &Path) -> String {
    let (c, doc) = run_json(root, &["lock", "status"]);
    assert_eq!(c, 0, "{doc}");
    doc["data"]["state"].as_str().unwrap().to_string()
}

#[test]
fn bare_seed_lock_ages_by_its_started_time() {
    // A §10.7 lock written by another tool: only {pid, started, chapter}, no host.
    let (_t, root) = new_project();
    put_lock(
        &root,
        json!({"pid": 424242, "started": iso(now() - 60), "chapter": 3}),
    );
    assert_eq!(lock_state(&root), "held", "one minute old: still held");
    let (c, doc) = run_json(&root, &["lock", "acquire"]);
    assert_eq!(c, 3, "{doc}");
    assert_eq!(doc["error"]["code"], "E_LOCKED");
    assert!(
        doc["error"]["message"].as_str().unwrap().contains("424242"),
        "{doc}"
    );

    std::fs::remove_dir_all(root.join(".novel.lock")).unwrap();
    put_lock(
        &root,
        json!({"pid": 424242, "started": iso(now() - 31 * 60), "chapter": 3}),
    );
    assert_eq!(lock_state(&root), "stale", "31 minutes old: stale");
    let (c, doc) = run_json(&root, &["lock", "acquire"]);
    assert_eq!(c, 0, "{doc}");
    assert!(
        doc["data"]["broke_stale"]
            .as_str()
            .unwrap()
            .contains("424242")
    );
}

#[test]
fn live_holder_on_this_host_is_never_stolen() {
    let (_t, root) = new_project();
    let alive = Alive::new();
    let long_ago = now() - 3 * 3600;
    put_lock(
        &root,
        json!({"pid": alive.pid(), "started": iso(long_ago), "chapter": 1, "host": host(),
            "token": "t-live", "heartbeat": long_ago, "started_epoch": long_ago}),
    );
    assert_eq!(
        lock_state(&root),
        "held",
        "three hours without a heartbeat, but the holder runs here"
    );
    let (c, doc) = run_json(&root, &["lock", "acquire"]);
    assert_eq!(c, 3, "{doc}");
    let (_, rec) = run_json(&root, &["chapter", "recover"]);
    assert_eq!(rec["data"]["actions"], json!([]), "{rec}");
    assert!(root.join(".novel.lock/info.json").exists());

    // The same pid recorded with another process start time: the pid was reused.
    std::fs::remove_dir_all(root.join(".novel.lock")).unwrap();
    put_lock(
        &root,
        json!({"pid": alive.pid(), "started": iso(now()), "chapter": 1, "host": host(),
            "token": "t-reused", "heartbeat": now(), "started_epoch": now(), "pid_started": 1}),
    );
    assert_eq!(lock_state(&root), "stale");

    // A holder on another machine goes stale by heartbeat age only.
    std::fs::remove_dir_all(root.join(".novel.lock")).unwrap();
    put_lock(
        &root,
        json!({"pid": alive.pid(), "started": iso(long_ago), "chapter": 1, "host": "另一台机器",
            "token": "t-remote", "heartbeat": long_ago, "started_epoch": long_ago}),
    );
    assert_eq!(lock_state(&root), "stale");
}

#[test]
fn acquire_records_the_holder_process_start() {
    let (_t, root) = new_project();
    let alive = Alive::new();
    let pid = alive.pid().to_string();
    let (c, doc) = run_json(&root, &["lock", "acquire", "--owner-pid", &pid]);
    assert_eq!(c, 0, "{doc}");
    let info = read_json(&root.join(".novel.lock/info.json"));
    assert_eq!(info["pid"], alive.pid());
    let started = info["pid_started"].as_u64().expect("pid_started");
    assert!(started.abs_diff(now()) < 120, "{info}");
    assert_eq!(lock_state(&root), "held");
    drop(alive);
    assert_eq!(lock_state(&root), "stale", "the holder is gone");
}

/// The token is the holder's alone: `lock status`, `status` and `lock clear` show who holds
/// the lock, never the secret that lets a session commit or release it.
#[test]
fn the_holders_token_is_shown_to_no_one_else() {
    let (_t, root) = new_project();
    let alive = Alive::new();
    let pid = alive.pid().to_string();
    let (c, doc) = run_json(&root, &["lock", "acquire", "--owner-pid", &pid]);
    assert_eq!(c, 0, "{doc}");
    let token = doc["data"]["token"].as_str().unwrap().to_string();
    assert!(token.len() >= 16, "{doc}");
    for args in [
        &["lock", "status"][..],
        &["--json", "lock", "status"],
        &["status"],
        &["--json", "status"],
        &["lock", "clear"],
    ] {
        let out = novel(&root, args);
        assert_eq!(code(&out), 0, "{args:?}");
        let text = stdout(&out);
        assert!(!text.contains(&token), "{args:?} printed the token: {text}");
        // The holder is still named.
        let doc = (args[0] == "--json").then(|| json(&out));
        match args {
            ["--json", "lock", "status"] => {
                assert_eq!(doc.unwrap()["data"]["info"]["pid"], alive.pid(), "{text}")
            }
            ["--json", "status"] => {
                assert_eq!(
                    doc.unwrap()["data"]["lock"]["info"]["pid"],
                    alive.pid(),
                    "{text}"
                )
            }
            _ => {}
        }
    }
    let (c, doc) = run_json(&root, &["lock", "acquire", "--owner-pid", &pid]);
    assert_eq!(c, 0, "{doc}");
    let token = doc["data"]["token"].as_str().unwrap().to_string();
    let (c, doc) = run_json(&root, &["lock", "clear"]);
    assert_eq!(c, 0, "{doc}");
    assert_eq!(doc["data"]["info"]["pid"], alive.pid(), "{doc}");
    assert!(!doc.to_string().contains(&token), "{doc}");
}

#[test]
fn clear_says_what_it_removed_even_without_info() {
    let (_t, root) = new_project();
    let (_, doc) = run_json(&root, &["lock", "clear"]);
    assert_eq!(doc["data"]["removed"], false);
    std::fs::create_dir(root.join(".novel.lock")).unwrap();
    std::fs::write(root.join(".novel.lock/info.json"), "{ 坏掉的").unwrap();
    let out = novel(&root, &["lock", "clear"]);
    assert_eq!(code(&out), 0);
    assert!(stdout(&out).contains("已强制清除锁"), "{}", stdout(&out));
    assert!(!root.join(".novel.lock").exists());
    std::fs::create_dir(root.join(".novel.lock")).unwrap();
    let (c, doc) = run_json(&root, &["lock", "clear"]);
    assert_eq!(c, 0);
    assert_eq!(doc["data"]["removed"], true, "{doc}");
    assert_eq!(doc["data"]["info"], Value::Null);
}

#[test]
fn losing_racer_names_the_winner() {
    for _ in 0..10 {
        let (_t, root) = new_project();
        let alive = Alive::new();
        let pid = alive.pid().to_string();
        let spawn = || {
            Command::new(bin())
                .args(["--json", "lock", "acquire", "--owner-pid", &pid])
                .current_dir(&root)
                .env_clear()
                .env("PATH", "/usr/bin:/bin")
                .stdout(Stdio::piped())
                .spawn()
                .unwrap()
        };
        let (a, b) = (spawn(), spawn());
        let outs = [a.wait_with_output().unwrap(), b.wait_with_output().unwrap()];
        let loser = outs.iter().find(|o| code(o) != 0).expect("one loses");
        let doc = json(loser);
        assert_eq!(doc["error"]["code"], "E_LOCKED", "{doc}");
        let message = doc["error"]["message"].as_str().unwrap();
        assert!(
            message.contains(&format!("进程 {pid}")),
            "names the winner's pid {pid}: {message}"
        );
    }
}

#[test]
fn a_lock_written_before_pid_started_keeps_its_live_holder() {
    // The previous version recorded `pid_start` in clock ticks after boot: not comparable with
    // a start time in seconds, so the pid alone decides (a live holder is never stolen).
    let (_t, root) = new_project();
    let alive = Alive::new();
    put_lock(
        &root,
        json!({"pid": alive.pid(), "started": iso(now()), "chapter": 1, "host": host(),
            "token": "t-old", "heartbeat": now(), "started_epoch": now(), "pid_start": 123456}),
    );
    assert_eq!(lock_state(&root), "held");
    let (c, doc) = run_json(&root, &["lock", "acquire"]);
    assert_eq!(c, 3, "{doc}");
    drop(alive);
    assert_eq!(lock_state(&root), "stale", "the holder is gone");
}

pub(crate) fn dead_pid() -> u32 {
    let mut dead = Command::new("true").spawn().unwrap();
    let pid = dead.id();
    dead.wait().unwrap();
    pid
}

#[test]
fn an_owner_pid_that_does_not_run_is_refused() {
    let (_t, root) = crate::test_chapter::writing_project();
    let checkpoint = std::fs::read(root.join(".checkpoint.json")).unwrap();
    for pid in [dead_pid().to_string(), "0".to_string()] {
        for args in [
            vec!["lock", "acquire", "--owner-pid", &pid],
            vec!["chapter", "begin", "1", "--owner-pid", &pid],
        ] {
            let (c, doc) = run_json(&root, &args);
            assert_eq!(c, 2, "{args:?}: {doc}");
            assert_eq!(doc["error"]["code"], "E_OWNER_PID", "{doc}");
            let message = doc["error"]["message"].as_str().unwrap();
            assert!(
                message.contains(&format!("进程 {pid} 没有在本机运行")),
                "{doc}"
            );
            assert!(
                doc["error"]["hint"]
                    .as_str()
                    .unwrap()
                    .contains("--owner-pid"),
                "{doc}"
            );
            assert!(
                !root.join(".novel.lock").exists(),
                "{args:?}: no lock taken"
            );
            assert_eq!(
                std::fs::read(root.join(".checkpoint.json")).unwrap(),
                checkpoint,
                "{args:?}: checkpoint untouched"
            );
        }
    }
    // A running owner is accepted.
    let alive = Alive::new();
    let pid = alive.pid().to_string();
    let (c, doc) = run_json(&root, &["chapter", "begin", "1", "--owner-pid", &pid]);
    assert_eq!(c, 0, "{doc}");
}

#[test]
fn settings_that_do_not_load_are_an_error_not_thirty_minutes() {
    let (_t, root) = new_project();
    let settings = root.join("novel.json");
    // A string where the minutes go: every command that judges staleness refuses, naming the
    // file, the line and the field, instead of silently using 30 minutes.
    std::fs::write(
        &settings,
        "{\n  \"lock\": {\n    \"stale_minutes\": \"5\"\n  }\n}\n",
    )
    .unwrap();
    for args in [
        &["lock", "status"][..],
        &["lock", "acquire"],
        &["chapter", "begin", "1"],
    ] {
        let (c, v) = run_json(&root, args);
        assert_eq!(c, 2, "{args:?}: {v}");
        assert_eq!(v["error"]["code"], "E_SCHEMA", "{args:?}: {v}");
        let message = v["error"]["message"].as_str().unwrap();
        assert!(message.contains("novel.json 第 3 行"), "{message}");
        assert!(message.contains("/lock/stale_minutes"), "{message}");
        assert!(
            v["error"]["hint"]
                .as_str()
                .unwrap()
                .contains("/lock/stale_minutes")
        );
    }
    assert!(!root.join(".novel.lock").exists());
    // Broken JSON: the line and column.
    std::fs::write(&settings, "{\n  \"lock\": {\"stale_minutes\": 5,}\n}\n").unwrap();
    let (c, v) = run_json(&root, &["lock", "status"]);
    assert_eq!((c, v["error"]["code"].as_str()), (2, Some("E_JSON")), "{v}");
    assert!(
        v["error"]["message"].as_str().unwrap().contains("第 2 行"),
        "{v}"
    );
    // The read-only overviews still answer, and say why the defaults stand in.
    let out = novel(&root, &["context", "session-start"]);
    assert_eq!(code(&out), 0);
    assert!(stdout(&out).contains("novel.json"), "{}", stdout(&out));
    let (c, v) = run_json(&root, &["status"]);
    assert_eq!(c, 1, "{v}");
    assert!(v.to_string().contains("novel.json"), "{v}");
    // No file at all: the documented defaults, no error.
    std::fs::remove_file(&settings).unwrap();
    let (c, v) = run_json(&root, &["lock", "status"]);
    assert_eq!(c, 0, "{v}");
}

/// A lock owned by a process that outlives every session would never go stale: pids 0–2 and the
/// session's own ancestors (here: whoever started this test binary) are refused as owners; the
/// session itself and a process it started are taken.
#[test]
fn owners_that_outlive_the_session_are_refused() {
    let (_t, root) = new_project();
    let ancestor = std::os::unix::process::parent_id().to_string();
    for pid in ["1", "2", &ancestor] {
        let (code, doc) = run_json(&root, &["lock", "acquire", "--owner-pid", pid]);
        assert_eq!(
            (code, &doc["error"]["code"]),
            (2, &json!("E_OWNER_PID")),
            "{pid}: {doc}"
        );
        assert!(!root.join(".novel.lock").exists(), "{pid}");
        let (code, doc) = run_json(&root, &["chapter", "begin", "1", "--owner-pid", pid]);
        assert_eq!(code, 2, "{pid}: {doc}");
    }
    let child = Alive::new();
    for pid in [std::process::id().to_string(), child.pid().to_string()] {
        let (code, doc) = run_json(&root, &["lock", "acquire", "--owner-pid", &pid]);
        assert_eq!(code, 0, "{pid}: {doc}");
        let token = doc["data"]["token"].as_str().unwrap().to_string();
        let (code, _) = run_json(&root, &["lock", "release", "--token", &token]);
        assert_eq!(code, 0);
    }
}

/// A delta (or a skip) for a chapter past the book's next one is refused with a hint, instead of
/// recording a line that would hold back every real chapter after it.
#[test]
fn a_delta_far_ahead_of_the_book_is_refused() {
    let (_t, root) = new_project();
    let delta = root.join("far.json");
    write_json(
        &delta,
        &json!({"chapter": 99999, "base_state_version": 0, "storyline_id": "main_arc",
            "ops": [{"op": "set", "path": "world_state.weather", "value": "雨"}]}),
    );
    let file = delta.to_str().unwrap();
    for args in [
        vec!["ops", "apply", file, "--manual"],
        vec!["ops", "validate", file],
        vec!["ops", "skip", "--chapter", "99999", "--reason", "测试"],
    ] {
        let (code, doc) = run_json(&root, &args);
        assert_eq!(doc["error"]["code"], "E_CHAPTER_AHEAD", "{args:?}: {doc}");
        assert_eq!(code, 1, "{args:?}");
        assert!(
            doc["error"]["hint"].as_str().unwrap().contains("第 1 章"),
            "{doc}"
        );
    }
    assert_eq!(
        std::fs::read_to_string(root.join("state/changelog.jsonl")).unwrap(),
        ""
    );
    // The next chapter itself is fine.
    edit_json(&delta, |d| d["chapter"] = json!(1));
    let (code, doc) = run_json(&root, &["ops", "apply", file, "--manual"]);
    assert_eq!(code, 0, "{doc}");
}

/// Without `--token`, the chapter commands act for the session that began the chapter (this
/// test process: `novel` is its child, as a Bash call is the client's) — every command that
/// takes a token, from the first stage to the commit, and `lock release`.
#[test]
fn the_session_that_began_the_chapter_needs_no_token() {
    use crate::test_chapter::{ok, stage_drafts, stage_eval, writing_project};
    let (_t, root) = writing_project();
    let began = ok(&root, &["chapter", "begin", "1"]);
    // The token is still given (scripts, other processes), last in the reply.
    let data = began["data"].as_object().unwrap();
    assert_eq!(data.keys().next_back().map(String::as_str), Some("token"));
    stage_drafts(&root, 1);
    ok(&root, &["chapter", "stage", "drafted"]);
    ok(&root, &["chapter", "stage", "refined"]);
    stage_eval(&root, 1, 4.2, true);
    ok(&root, &["chapter", "stage", "judged"]);
    let gate = ok(&root, &["chapter", "gate", "1", "--commit"]);
    assert_eq!(gate["data"]["decision"], "pass", "{gate}");
    assert_eq!(gate["data"]["commit"]["chapter"], 1, "{gate}");
    for m in ["chapter commit", "--token"] {
        assert!(
            !gate.to_string().contains(&format!("{m} <TOKEN>")),
            "{gate}"
        );
    }
    assert_eq!(lock_state(&root), "free");

    // `chapter fail` and `lock release` the same way.
    ok(&root, &["chapter", "begin", "2"]);
    let failed = ok(&root, &["chapter", "fail", "2", "--reason", "写手两次超时"]);
    assert_eq!(failed["data"]["lock_released"], true, "{failed}");
    ok(&root, &["lock", "acquire"]);
    ok(&root, &["lock", "release"]);
    assert_eq!(lock_state(&root), "free");
    let (c, doc) = run_json(&root, &["lock", "release"]);
    assert_eq!(
        (c, doc["error"]["code"].as_str()),
        (2, Some("E_NOT_LOCKED"))
    );
}

/// The token's fence holds without it: a session whose lock was broken and taken by another
/// session (another process) is refused — by no lock, by the new holder, by a holder that
/// reuses its pid — with what happened and what to do, in Chinese; `--token` still works as
/// before.
#[test]
fn without_a_token_only_the_holding_session_acts() {
    use crate::test_chapter::{fail, ok, stage_drafts, writing_project};
    let (_t, root) = writing_project();
    let token = ok(&root, &["chapter", "begin", "1"])["data"]["token"]
        .as_str()
        .unwrap()
        .to_string();
    stage_drafts(&root, 1);

    // The lock cleared (the author's override): no chapter is begun for anyone.
    ok(&root, &["lock", "clear"]);
    let doc = fail(&root, &["chapter", "stage", "drafted"], 2, "E_NOT_LOCKED");
    let msg = doc["error"]["message"].as_str().unwrap();
    assert!(msg.contains("没有在写的章节"), "{doc}");
    assert!(
        doc["error"]["hint"]
            .as_str()
            .unwrap()
            .contains("novel chapter begin"),
        "{doc}"
    );

    // Another session takes it: this one is refused, with and without its old token.
    let other = Alive::new();
    let pid = other.pid().to_string();
    let mine = ok(&root, &["chapter", "begin", "1", "--owner-pid", &pid]);
    let theirs = mine["data"]["token"].as_str().unwrap().to_string();
    for args in [
        vec!["chapter", "stage", "drafted"],
        vec!["chapter", "gate", "1", "--commit"],
        vec!["chapter", "commit", "1"],
        vec!["chapter", "fail", "1", "--reason", "超时"],
    ] {
        let doc = fail(&root, &args, 3, "E_LOCK_OWNER");
        let msg = doc["error"]["message"].as_str().unwrap();
        assert!(
            msg.contains("项目锁不在本会话手里") && msg.contains(&pid),
            "{args:?}: {doc}"
        );
        assert!(
            !doc.to_string().contains(&theirs),
            "the holder's token leaked: {doc}"
        );
    }
    fail(
        &root,
        &["chapter", "stage", "drafted", "--token", &token],
        3,
        "E_LOCK_OWNER",
    );
    // The holder's token works from any process, as before.
    ok(&root, &["chapter", "stage", "drafted", "--token", &theirs]);
    drop(other);

    // A lock naming this session's pid but a process started at another time is another
    // session's (a reused pid): refused without a token.
    ok(&root, &["lock", "clear"]);
    ok(&root, &["chapter", "begin", "1"]);
    let path = root.join(".novel.lock/info.json");
    let mut info = read_json(&path);
    info["pid_started"] = json!(info["pid_started"].as_u64().unwrap() - 3600);
    write_json(&path, &info);
    fail(&root, &["chapter", "stage", "refined"], 3, "E_LOCK_OWNER");
}
