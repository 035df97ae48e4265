//! One writer at a time (`docs/orchestration.md` §1, the writers' guard): K = 2 and 8 writers
//! started together on one book — as children of the session that holds the chapter lock (the
//! parallel tool calls and sub-agents of one Claude Code session), and as commands of distinct
//! sessions on a book nobody holds. Whatever order they end up in, every write a writer reports
//! as done is in the files afterwards, `novel validate` and `novel state rebuild` are clean, and
//! the character memories are what the changelog rebuilds.
//!
//! The writers: `chapter commit`, `ops apply --manual`, `ops skip`, `blacklist add`, `prefs add`,
//! `revision apply`, `memory rebuild`, `spec propagate`, `volume close`. `NOVEL_RACE_REPS` repeats
//! every race (default 1) for a longer campaign.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use serde_json::{Value, json};

use crate::support::*;
use crate::test_chapter::{NOW, copy_dir, ok, stage_drafts, stage_eval, writing_project};

/// The revised text the candidate for chapter 2 carries.
pub(crate) const CANDIDATE: &str =
    "# 第2章 风起\n\n陆尘推门而入，桌上一盏马灯，灯罩熏得发黑，照见半张海图。\n";

/// One writer of a race: its command line and how to tell its reported success is on disk.
struct Writer {
    name: &'static str,
    args: Vec<String>,
    check: fn(&Path, &Writer) -> Result<(), String>,
    /// What this instance writes (a marker, a phrase, a preference).
    mark: String,
}

/// The kinds of writer, each made for instance `k` of a race in `root` (`token`: the chapter
/// lock's, for the commit).
const KINDS: [&str; 9] = [
    "commit",
    "apply",
    "skip",
    "blacklist",
    "prefs",
    "revision",
    "memory",
    "propagate",
    "close",
];

fn writer(kind: &str, root: &Path, k: usize, token: &str) -> Writer {
    let s = |v: &[&str]| v.iter().map(|a| a.to_string()).collect::<Vec<_>>();
    match kind {
        "commit" => Writer {
            name: "chapter commit",
            args: s(&["chapter", "commit", "3", "--token", token]),
            check: commit_landed,
            mark: String::new(),
        },
        "apply" => {
            let mark = format!("标记{k}");
            let file = root.join(format!("manual-{k}.json"));
            let version =
                read_json(&root.join("state/current-state.json"))["state_version"].clone();
            write_json(
                &file,
                &json!({"chapter": 3, "base_state_version": version, "storyline_id": "main_arc",
                    "ops": [{"op": "set", "path": format!("world_state.marker_{k}"), "value": mark}]}),
            );
            Writer {
                name: "ops apply --manual",
                args: vec![
                    "ops".into(),
                    "apply".into(),
                    file.to_string_lossy().into_owned(),
                    "--manual".into(),
                ],
                check: apply_landed,
                mark: format!("{k}"),
            }
        }
        "skip" => Writer {
            name: "ops skip",
            args: s(&["ops", "skip", "--chapter", "3", "--reason", "两次解析失败"]),
            check: skip_landed,
            mark: String::new(),
        },
        "blacklist" => {
            let mark = format!("眼底闪过第{k}道光");
            Writer {
                name: "blacklist add",
                args: s(&["blacklist", "add", &mark, "--category", "body_language"]),
                check: phrase_landed,
                mark,
            }
        }
        "prefs" => {
            let mark = format!("对话里少用第{k}种感叹号");
            Writer {
                name: "prefs add",
                args: s(&["prefs", "add", &mark]),
                check: preference_landed,
                mark,
            }
        }
        "revision" => Writer {
            name: "revision apply",
            args: s(&["revision", "apply", "--chapter", "2"]),
            check: revision_landed,
            mark: String::new(),
        },
        "memory" => Writer {
            name: "memory rebuild",
            args: s(&["memory", "rebuild"]),
            // Checked for every race: the memories are what the changelog rebuilds.
            check: |_, _| Ok(()),
            mark: String::new(),
        },
        "propagate" => Writer {
            name: "spec propagate",
            args: s(&["spec", "propagate"]),
            check: propagation_landed,
            mark: String::new(),
        },
        "close" => Writer {
            name: "volume close",
            args: s(&["volume", "close"]),
            check: close_landed,
            mark: String::new(),
        },
        other => panic!("no writer {other}"),
    }
}

fn changelog(root: &Path) -> Vec<Value> {
    std::fs::read_to_string(root.join("state/changelog.jsonl"))
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).expect("a whole changelog line"))
        .collect()
}

fn commit_landed(root: &Path, _: &Writer) -> Result<(), String> {
    let cp = read_json(&root.join(".checkpoint.json"));
    if cp["last_completed_chapter"].as_u64() < Some(3) {
        return Err(format!("checkpoint: {}", cp["last_completed_chapter"]));
    }
    if !root.join("chapters/chapter-003.md").is_file() {
        return Err("chapters/chapter-003.md missing".into());
    }
    let log = changelog(root);
    let Some(line) = log.iter().find(|e| e["chapter"] == 3) else {
        return Err("no changelog line for chapter 3".into());
    };
    // Its delta was applied (not skipped): the chapter's actions are in the memory.
    if line["source"] == "chapter" && !line["applied"].as_array().unwrap().is_empty() {
        let memory = std::fs::read_to_string(root.join("memory/characters/lu-chen.jsonl"))
            .unwrap_or_default();
        if !memory.contains("第3章里陆尘做的事") {
            return Err("chapter 3's memory line is missing".into());
        }
    }
    Ok(())
}

fn apply_landed(root: &Path, w: &Writer) -> Result<(), String> {
    let state = read_json(&root.join("state/current-state.json"));
    let want = format!("标记{}", w.mark);
    match &state["world_state"][format!("marker_{}", w.mark)] {
        Value::String(s) if *s == want => Ok(()),
        other => Err(format!("world_state.marker_{} = {other}", w.mark)),
    }
}

fn skip_landed(root: &Path, _: &Writer) -> Result<(), String> {
    changelog(root)
        .iter()
        .any(|e| e["chapter"] == 3 && e["source"] == "skipped")
        .then_some(())
        .ok_or_else(|| "no skip line for chapter 3".into())
}

fn phrase_landed(root: &Path, w: &Writer) -> Result<(), String> {
    let text = std::fs::read_to_string(root.join("ai-blacklist.json")).unwrap();
    text.contains(&w.mark)
        .then_some(())
        .ok_or_else(|| format!("「{}」 not in ai-blacklist.json", w.mark))
}

fn preference_landed(root: &Path, w: &Writer) -> Result<(), String> {
    let text = std::fs::read_to_string(root.join("memory/preferences.json")).unwrap_or_default();
    text.contains(&w.mark)
        .then_some(())
        .ok_or_else(|| format!("「{}」 not in memory/preferences.json", w.mark))
}

fn revision_landed(root: &Path, _: &Writer) -> Result<(), String> {
    let text = std::fs::read_to_string(root.join("chapters/chapter-002.md")).unwrap();
    if text != CANDIDATE {
        return Err("chapter 2 is not the candidate".into());
    }
    let rec = read_json(&root.join("chapters/chapter-002-revision.json"));
    if rec["status"] != "accepted" || !rec["original"].is_string() {
        return Err(format!(
            "revision record: status {}, original {}",
            rec["status"], rec["original"]
        ));
    }
    Ok(())
}

fn propagation_landed(root: &Path, _: &Writer) -> Result<(), String> {
    let cp = read_json(&root.join(".checkpoint.json"));
    let pending = cp["pending_actions"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    if !pending.iter().any(|a| a["type"] == "spec_propagation") {
        return Err("no spec_propagation pending action".into());
    }
    if root.join("state/.spec-snapshot.json").exists() {
        return Err("the snapshot is still there".into());
    }
    Ok(())
}

fn close_landed(root: &Path, _: &Writer) -> Result<(), String> {
    let cp = read_json(&root.join(".checkpoint.json"));
    if cp["current_volume"] != 2 {
        return Err(format!("current_volume {}", cp["current_volume"]));
    }
    for f in [
        "state/history/vol-01-final-state.json",
        "volumes/vol-01/cleanup.json",
    ] {
        if !root.join(f).is_file() {
            return Err(format!("{f} missing"));
        }
    }
    Ok(())
}

/// The book the races run on: volume 1 = chapters 1–3; chapters 1 and 2 committed with the
/// Summarizer's character actions; chapter 3 judged and let through by its gate (its delta has
/// actions too), locked by this test's session; a revision candidate for chapter 2 saved; a
/// spec snapshot taken and a world rule changed since; the volume review report written.
/// Returns (guard, root, token).
pub(crate) fn race_book() -> (tempfile::TempDir, PathBuf, String) {
    let (tmp, root) = writing_project();
    edit_json(&root.join("volumes/vol-01/storyline-schedule.json"), |s| {
        s["chapter_range"] = json!([1, 3]);
    });
    edit_json(&root.join("novel.json"), |s| {
        s["revision_policy"] = json!("manual_confirm");
    });
    write_json(
        &root.join("characters/active/lu-chen.json"),
        &json!({"id": "lu-chen", "display_name": "陆尘", "aliases": ["小陆"], "role": "protagonist",
            "contracts": []}),
    );
    write_json(
        &root.join("world/rules.json"),
        &json!({"rules": [{"id": "W-001", "rule": "灵石是城中唯一通用货币", "constraint_type": "hard"}]}),
    );
    ok(&root, &["memory", "init"]);
    for n in 1..=2 {
        let token = gated_with_actions(&root, n);
        ok(
            &root,
            &["chapter", "commit", &n.to_string(), "--token", &token],
        );
    }
    // A candidate for chapter 2, from a fix its evaluation carries.
    edit_json(&root.join("evaluations/chapter-002-eval.json"), |e| {
        e["required_fixes"] = json!([{"target": "第 1 段", "instruction": "灯写具体些"}]);
    });
    let candidate = root.join("candidate.md");
    std::fs::write(&candidate, CANDIDATE).unwrap();
    ok(
        &root,
        &[
            "revision",
            "save",
            "--chapter",
            "2",
            candidate.to_str().unwrap(),
        ],
    );
    std::fs::remove_file(&candidate).unwrap();
    ok(&root, &["review", "volume", "1"]);
    ok(&root, &["spec", "snapshot"]);
    write_json(
        &root.join("world/rules.json"),
        &json!({"rules": [{"id": "W-001", "rule": "灵石与银票在城中通用", "constraint_type": "hard"}]}),
    );
    let token = gated_with_actions(&root, 3);
    (tmp, root, token)
}

/// Chapter `n` begun, drafted with character actions in its delta, judged and passed by its
/// gate; returns the lock token.
fn gated_with_actions(root: &Path, n: u32) -> String {
    let token = ok(root, &["chapter", "begin", &n.to_string()])["data"]["token"]
        .as_str()
        .unwrap()
        .to_string();
    stage_drafts(root, n);
    edit_json(
        &root.join(format!("staging/state/chapter-{n:03}-delta.json")),
        |d| {
            d["character_actions"] = json!([{"character": "陆尘", "scene": 1, "action": format!("第{n}章里陆尘做的事")}]);
        },
    );
    ok(root, &["chapter", "stage", "drafted", "--token", &token]);
    ok(root, &["chapter", "stage", "refined", "--token", &token]);
    stage_eval(root, n, 4.2, n == 1 || n == 3);
    ok(root, &["chapter", "stage", "judged", "--token", &token]);
    let gate = ok(
        root,
        &["chapter", "gate", &n.to_string(), "--token", &token],
    );
    assert_eq!(gate["data"]["decision"], "pass", "{gate}");
    token
}

/// How the writers of a race are started.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Sessions {
    /// Children of this test process: the session that holds the chapter lock.
    One,
    /// Each under its own parent (`xargs`, which is not a shell), so each is its own session.
    Distinct,
}

fn spawn(root: &Path, w: &Writer, sessions: Sessions) -> Child {
    let mut c = match sessions {
        Sessions::One => Command::new(bin()),
        Sessions::Distinct => {
            let mut c = Command::new("xargs");
            c.arg("-0").arg(bin());
            c
        }
    };
    c.arg("--json")
        .args(&w.args)
        .current_dir(root)
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .env("NOVEL_NOW", NOW)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn a writer")
}

/// One race: `kinds` started together on a fresh copy of `book`; every success checked.
/// Returns how many writers reported success.
fn race(
    tmp: &Path,
    book: &Path,
    token: &str,
    kinds: &[&str],
    sessions: Sessions,
    tag: &str,
) -> usize {
    let root = tmp.join(tag);
    copy_dir(book, &root);
    let writers: Vec<Writer> = kinds
        .iter()
        .enumerate()
        .map(|(k, kind)| writer(kind, &root, k, token))
        .collect();
    let children: Vec<Child> = writers.iter().map(|w| spawn(&root, w, sessions)).collect();
    let mut succeeded = 0;
    let mut outcomes = Vec::new();
    for (w, child) in writers.iter().zip(children) {
        let out = child.wait_with_output().unwrap();
        let doc: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
            panic!(
                "{tag}: {} printed no JSON ({e}): {}{}",
                w.name,
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            )
        });
        let code = out.status.code().unwrap_or(-1);
        outcomes.push(format!(
            "{}: {code} {}",
            w.name,
            doc["error"]["code"].as_str().unwrap_or("ok")
        ));
        // Never an internal error, an I/O failure, or a journal left by a writer nobody killed.
        let error = doc["error"]["code"].as_str().unwrap_or("");
        assert!(
            !matches!(
                error,
                "E_INTERNAL" | "E_IO" | "E_JOURNAL" | "E_CHANGELOG_SHRANK"
            ),
            "{tag}: {}: {doc}",
            w.name
        );
        if code == 0 {
            assert_eq!(doc["ok"], true, "{tag}: {doc}");
            succeeded += 1;
        }
        if code == 0
            && let Err(why) = (w.check)(&root, w)
        {
            panic!(
                "{tag}: {} reported success, but {why}\n{}",
                w.name,
                outcomes.join("\n")
            );
        }
    }
    let context = outcomes.join("; ");
    assert!(
        !root.join(".novel-commit-journal.json").exists(),
        "{tag}: a journal is left: {context}"
    );
    // Errors only where a refused writer's work is expected to be redone: the chapter in flight
    // (its staged delta may be based on a state another writer moved on).
    let out = crate::test_chapter::run(&root, &["--json", "validate"]);
    let findings = json(&out)["data"]["findings"].clone();
    for f in findings.as_array().into_iter().flatten() {
        let file = f["file"].as_str().unwrap_or("");
        assert!(
            f["severity"] != "error" || file.starts_with("staging/"),
            "{tag}: validate: {f}\n{context}"
        );
        // Nothing the program wrote itself (archives, reports, backups) is unknown to it.
        assert_ne!(f["code"], "E_UNKNOWN_FILE", "{tag}: validate: {f}");
    }
    let out = crate::test_chapter::run(&root, &["--json", "state", "rebuild"]);
    assert_eq!(
        code(&out),
        0,
        "{tag}: state rebuild differs: {}\n{context}",
        stdout(&out)
    );
    memories_rebuild_the_same(&root, &format!("{tag}: {context}"));
    std::fs::remove_dir_all(&root).unwrap();
    succeeded
}

/// The memory files are exactly what `memory rebuild` makes from the changelog: no chapter's
/// actions lost, none twice.
fn memories_rebuild_the_same(root: &Path, context: &str) {
    let copy = root.with_extension("rebuilt");
    copy_dir(root, &copy);
    let out = crate::test_chapter::run(&copy, &["--json", "memory", "rebuild"]);
    assert_eq!(code(&out), 0, "{context}: {}", stdout(&out));
    let dir = "memory/characters";
    for e in std::fs::read_dir(copy.join(dir)).unwrap() {
        let name = e.unwrap().file_name();
        let rebuilt = std::fs::read_to_string(copy.join(dir).join(&name)).unwrap();
        let have = std::fs::read_to_string(root.join(dir).join(&name)).unwrap_or_default();
        assert_eq!(
            have, rebuilt,
            "{context}: {name:?} differs from its rebuild"
        );
    }
    std::fs::remove_dir_all(&copy).unwrap();
}

fn reps() -> usize {
    std::env::var("NOVEL_RACE_REPS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1)
}

/// Every pair of writers (a writer with itself too), then mixes of eight, all children of the
/// session that holds the chapter lock.
#[test]
fn writers_of_one_session_never_lose_an_update() {
    let (tmp, book, token) = race_book();
    let mut runs = 0;
    let mut successes = 0;
    for rep in 0..reps() {
        for (i, a) in KINDS.iter().enumerate() {
            for b in &KINDS[i..] {
                let tag = format!("one-{rep}-{a}-{b}");
                successes += race(tmp.path(), &book, &token, &[a, b], Sessions::One, &tag);
                runs += 1;
            }
        }
        for (m, mix) in mixes().iter().enumerate() {
            let tag = format!("one-{rep}-mix{m}");
            successes += race(tmp.path(), &book, &token, mix, Sessions::One, &tag);
            runs += 1;
        }
    }
    eprintln!("one session: {runs} races, {successes} writes reported and found");
}

/// The same on the book after chapter 3 is committed (VOL_REVIEW, nobody holds the lock), each
/// writer its own session: they take the project lock one after the other.
#[test]
fn writers_of_distinct_sessions_never_lose_an_update() {
    let (tmp, book, token) = race_book();
    ok(&book, &["chapter", "commit", "3", "--token", &token]);
    assert_eq!(
        read_json(&book.join(".checkpoint.json"))["orchestrator_state"],
        "VOL_REVIEW"
    );
    let kinds: Vec<&str> = KINDS.iter().copied().filter(|k| *k != "commit").collect();
    let mut runs = 0;
    let mut successes = 0;
    for rep in 0..reps() {
        for (i, a) in kinds.iter().enumerate() {
            for b in &kinds[i..] {
                let tag = format!("distinct-{rep}-{a}-{b}");
                successes += race(tmp.path(), &book, "", &[a, b], Sessions::Distinct, &tag);
                runs += 1;
            }
        }
        for (m, mix) in mixes().iter().enumerate() {
            let mix: Vec<&str> = mix.iter().copied().filter(|k| *k != "commit").collect();
            let tag = format!("distinct-{rep}-mix{m}");
            successes += race(tmp.path(), &book, "", &mix, Sessions::Distinct, &tag);
            runs += 1;
        }
    }
    eprintln!("distinct sessions: {runs} races, {successes} writes reported and found");
}

/// Races of eight: one kind eight times (the same file eight ways), and the kinds together.
fn mixes() -> Vec<Vec<&'static str>> {
    vec![
        vec!["apply"; 8],
        vec!["blacklist"; 8],
        vec!["prefs"; 8],
        vec![
            "commit",
            "apply",
            "skip",
            "blacklist",
            "prefs",
            "revision",
            "propagate",
            "close",
        ],
        vec![
            "blacklist",
            "prefs",
            "memory",
            "commit",
            "blacklist",
            "prefs",
            "revision",
            "memory",
        ],
    ]
}

/// Eight writers that can all succeed (different phrases, different preferences) all do, in
/// either kind of session: none of them is lost to another.
#[test]
fn eight_writers_of_different_things_all_land() {
    let (tmp, book, token) = race_book();
    // Nobody holds this one: sessions of their own take the project lock in turn.
    let idle = tmp.path().join("idle");
    copy_dir(&book, &idle);
    ok(&idle, &["chapter", "commit", "3", "--token", &token]);
    for (sessions, from) in [(Sessions::One, &book), (Sessions::Distinct, &idle)] {
        for kind in ["blacklist", "prefs"] {
            let tag = format!("all-{kind}-{sessions:?}");
            let landed = race(tmp.path(), from, "", &[kind; 8], sessions, &tag);
            assert_eq!(landed, 8, "{tag}");
        }
    }
}

// ---- Two writers at a known point of each other (debug builds' `NOVEL_PAUSE`) ----------------

/// Starts `args` paused at `point` (it has read and planned, and holds what it holds there);
/// returns the child once it is there, and the file whose removal lets it go on.
fn paused(root: &Path, args: &[&str], point: &str) -> (Child, PathBuf) {
    let gate = root.with_extension(format!("pause-{point}"));
    std::fs::write(&gate, "").unwrap();
    let child = writer_command(root, args)
        .env("NOVEL_PAUSE", format!("{point}:{}", gate.display()))
        .spawn()
        .unwrap();
    let marker = PathBuf::from(format!("{}.paused", gate.display()));
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while !marker.exists() {
        assert!(
            std::time::Instant::now() < deadline,
            "{args:?} never reached pause point {point}"
        );
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    (child, gate)
}

fn started(root: &Path, args: &[&str]) -> Child {
    writer_command(root, args).spawn().unwrap()
}

/// `novel --json ARGS` in `root` with the fixed clock, output captured.
fn writer_command(root: &Path, args: &[&str]) -> Command {
    let mut c = Command::new(bin());
    c.arg("--json")
        .args(args)
        .current_dir(root)
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .env("NOVEL_NOW", NOW)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    c
}

/// The second writer is still waiting after a while (it cannot get past the first one's
/// guard), then both end; returns their (exit code, envelope).
fn second_waits(first: Child, gate: &Path, mut second: Child) -> [(i32, Value); 2] {
    std::thread::sleep(std::time::Duration::from_millis(400));
    assert!(
        second.try_wait().unwrap().is_none(),
        "the second writer ran while the first was between its read and its write"
    );
    std::fs::remove_file(gate).unwrap();
    [first, second].map(|c| {
        let out = c.wait_with_output().unwrap();
        let doc: Value = serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stderr)));
        (out.status.code().unwrap(), doc)
    })
}

/// N1: a commit that has planned its writes, and an `ops apply --manual` of the same session
/// started then: the apply waits, reads the state the commit left, and is refused for its stale
/// base version — the commit's delta is not lost under it (nor the other way round).
#[test]
fn a_commit_and_an_apply_of_one_session_do_not_lose_each_other() {
    let (tmp, book, token) = race_book();
    let manual = |root: &Path| {
        let file = root.join("manual.json");
        write_json(
            &file,
            &json!({"chapter": 3, "base_state_version": 2, "storyline_id": "main_arc",
                "ops": [{"op": "set", "path": "world_state.marker", "value": "作者手改"}]}),
        );
        file.to_string_lossy().into_owned()
    };
    // The commit first.
    let root = tmp.path().join("commit-first");
    copy_dir(&book, &root);
    let file = manual(&root);
    let (commit, gate) = paused(
        &root,
        &["chapter", "commit", "3", "--token", &token],
        "commit-planned",
    );
    let apply = started(&root, &["ops", "apply", &file, "--manual"]);
    let [(c, cdoc), (a, adoc)] = second_waits(commit, &gate, apply);
    assert_eq!(c, 0, "{cdoc}");
    assert_eq!(
        (a, &adoc["error"]["code"]),
        (3, &json!("E_STATE_VERSION")),
        "{adoc}"
    );
    let state = read_json(&root.join("state/current-state.json"));
    assert_eq!(state["state_version"], 3);
    assert_eq!(state["characters"]["lu-chen"]["location"], "第3章的地点");
    // The apply first.
    let root = tmp.path().join("apply-first");
    copy_dir(&book, &root);
    let file = manual(&root);
    let (apply, gate) = paused(&root, &["ops", "apply", &file, "--manual"], "apply-checked");
    let commit = started(&root, &["chapter", "commit", "3", "--token", &token]);
    let [(a, adoc), (c, cdoc)] = second_waits(apply, &gate, commit);
    assert_eq!(a, 0, "{adoc}");
    assert_eq!(
        (c, &cdoc["error"]["code"]),
        (3, &json!("E_STATE_VERSION")),
        "{cdoc}"
    );
    let state = read_json(&root.join("state/current-state.json"));
    assert_eq!(state["world_state"]["marker"], "作者手改");
    assert_eq!(
        read_json(&root.join(".checkpoint.json"))["inflight_chapter"],
        3,
        "the refused commit left chapter 3 in flight"
    );
}

/// N4: two `revision apply` of one committed chapter: the second waits for the first, then
/// finds the candidate decided — the replaced text stays in the record, never `original: null`.
#[test]
fn two_revision_applies_keep_the_replaced_text() {
    let (tmp, book, token) = race_book();
    ok(&book, &["chapter", "commit", "3", "--token", &token]);
    let old = std::fs::read_to_string(book.join("chapters/chapter-002.md")).unwrap();
    let root = tmp.path().join("twice");
    copy_dir(&book, &root);
    let args = ["revision", "apply", "--chapter", "2"];
    let (first, gate) = paused(&root, &args, "revision-read");
    let second = started(&root, &args);
    let [(f, fdoc), (s, sdoc)] = second_waits(first, &gate, second);
    assert_eq!(f, 0, "{fdoc}");
    assert_eq!(
        (s, &sdoc["error"]["code"]),
        (3, &json!("E_REVISION_DECIDED")),
        "{sdoc}"
    );
    let rec = read_json(&root.join("chapters/chapter-002-revision.json"));
    assert_eq!(rec["status"], "accepted");
    assert_eq!(rec["original"], old.as_str(), "the replaced text is kept");
    assert_eq!(
        std::fs::read_to_string(root.join("chapters/chapter-002.md")).unwrap(),
        CANDIDATE
    );
}
