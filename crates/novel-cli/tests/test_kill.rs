//! No half-done step after a kill (`docs/orchestration.md` §1): every writer is killed at each
//! step of its journal (the `NOVEL_FAILPOINT=commit:K` fail points of debug builds) and with
//! SIGKILL at random moments, then `novel chapter recover` runs; the project is then byte for
//! byte the state before the writer ran or the state after it — temp files included (none may
//! be left) — and a killed commit keeps the chapter's character-memory line.
//!
//! The project lock is compared apart: a writer run inside its session's lock (a chapter in
//! flight) leaves the lock with that session, which is alive; a writer that took the lock for
//! itself and was killed leaves a lock that `recover` clears. `chapter begin` takes the
//! session's lock: recovered to its end, the lock is there; to its start, it is gone.
//!
//! `novel init` and `novel import --into` a new directory are run in a work directory and
//! judged there: the new book is all there or not there at all, and no build directory
//! (`.novel-init-*`) is left once `recover` has run.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::json;

use crate::support::*;
use crate::test_chapter::{NOW, copy_dir, diff_trees, ok, tree};
use crate::test_race::race_book;

type Tree = BTreeMap<String, Option<Vec<u8>>>;

fn run_in(root: &Path, args: &[String], env: &[(&str, &str)]) -> Output {
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    crate::test_integrity::run_env(root, &args, env)
}

/// The project's files, the lock directory left out when `with_lock` is false. A spec snapshot's
/// `id` is random by design: it is left out too.
fn files(root: &Path, with_lock: bool) -> Tree {
    tree(root)
        .into_iter()
        .filter(|(k, _)| with_lock || !k.starts_with(".novel.lock"))
        .map(|(k, v)| {
            if !k.ends_with(".spec-snapshot.json") {
                return (k, v);
            }
            let v = v.map(
                |bytes| match serde_json::from_slice::<serde_json::Value>(&bytes) {
                    Ok(mut doc) => {
                        doc["id"] = serde_json::Value::Null;
                        doc.to_string().into_bytes()
                    }
                    Err(_) => bytes,
                },
            );
            (k, v)
        })
        .collect()
}

/// `novel chapter recover` for case `c` in its copy `dir`: in the book, or — for a writer of
/// a new book — for the book it was making (not there yet: its build directories are swept).
fn recover(dir: &Path, c: &Case) {
    let mut args: Vec<String> = vec!["--json".into()];
    if let Some(new) = c.new_book {
        args.extend([
            "--project".into(),
            dir.join(new).to_string_lossy().into_owned(),
        ]);
    }
    args.extend(["chapter".into(), "recover".into()]);
    let out = run_in(dir, &args, &[]);
    let nothing_there =
        c.new_book.is_some() && code(&out) == 2 && json(&out)["error"]["code"] == "E_NOT_PROJECT";
    assert!(
        code(&out) == 0 || nothing_there,
        "{}: recover: {}",
        c.name,
        stdout(&out)
    );
}

/// One writer on one prepared book.
struct Case {
    name: &'static str,
    book: PathBuf,
    args: Vec<String>,
    /// The session holds the chapter lock on this book: the lock is not compared.
    session_lock: bool,
    /// The writer takes the session's lock (`chapter begin`): after it, the lock is there.
    lock_follows: bool,
    /// More fail points than the journal's steps (`begin:0`).
    failpoints: Vec<&'static str>,
    /// The writer makes a new book in this directory of `book` (a work directory).
    new_book: Option<&'static str>,
}

fn case(name: &'static str, book: &Path, args: &[&str], session_lock: bool) -> Case {
    Case {
        name,
        book: book.to_path_buf(),
        args: args.iter().map(|a| a.to_string()).collect(),
        session_lock,
        lock_follows: false,
        failpoints: Vec::new(),
        new_book: None,
    }
}

/// Checks a recovered tree `have` is the one before or after the writer, and that the lock
/// follows (for `chapter begin`). Returns `true` for after.
fn before_or_after(
    c: &Case,
    dir: &Path,
    have: &Tree,
    (before, after): (&Tree, &Tree),
    when: &str,
) -> bool {
    let is_after = have == after;
    assert!(
        is_after || have == before,
        "{} {when}: neither before ({:?}) nor after ({:?})",
        c.name,
        diff_trees(before, have),
        diff_trees(after, have)
    );
    if c.lock_follows {
        assert_eq!(
            dir.join(".novel.lock").exists(),
            is_after,
            "{} {when}: the lock does not follow the book",
            c.name
        );
    }
    is_after
}

/// The trees before and after `c` runs undisturbed, and how long it took.
fn before_after(tmp: &Path, c: &Case) -> (Tree, Tree, Duration) {
    let before = files(&c.book, !c.session_lock);
    let dir = tmp.join(format!("{}-reference", c.name)).join("book");
    copy_dir(&c.book, &dir);
    let t = Instant::now();
    let out = run_in(&dir, &c.args, &[]);
    let took = t.elapsed();
    assert_eq!(
        code(&out),
        0,
        "{}: {}{}",
        c.name,
        stdout(&out),
        stderr(&out)
    );
    let after = files(&dir, !c.session_lock);
    assert_ne!(before, after, "{}: the writer changed nothing", c.name);
    std::fs::remove_dir_all(&dir).unwrap();
    (before, after, took)
}

/// Killed after each step of its journal: recover finishes it to the bytes of an undisturbed
/// run (a new book: to no book at all). Returns the number of steps.
fn killed_at_every_step(tmp: &Path, c: &Case, (before, after): (&Tree, &Tree)) -> usize {
    for step in 0.. {
        let dir = tmp.join(format!("{}-step-{step}", c.name)).join("book");
        copy_dir(&c.book, &dir);
        let out = run_in(
            &dir,
            &c.args,
            &[("NOVEL_FAILPOINT", &format!("commit:{step}"))],
        );
        if code(&out) == 0 {
            // A writer of one file replaces it atomically and needs no journal (step 0).
            std::fs::remove_dir_all(&dir).unwrap();
            return step;
        }
        assert_eq!(code(&out), 99, "{} step {step}: {}", c.name, stdout(&out));
        recover(&dir, c);
        let have = files(&dir, !c.session_lock);
        // A new book's journal runs in its private build directory: killed there, the book
        // never appeared. Anywhere else the journal is rolled forward to the end.
        let want = if c.new_book.is_some() { before } else { after };
        before_or_after(c, &dir, &have, (want, after), &format!("step {step}"));
        std::fs::remove_dir_all(&dir).unwrap();
        assert!(step < 200, "{}", c.name);
    }
    unreachable!()
}

/// Killed at each of the case's own fail points (before its journal): recover leaves the tree
/// as it was before, or as it is after.
fn killed_at_fail_points(tmp: &Path, c: &Case, trees: (&Tree, &Tree)) {
    for point in &c.failpoints {
        let dir = tmp.join(format!("{}-{point}", c.name)).join("book");
        copy_dir(&c.book, &dir);
        let out = run_in(&dir, &c.args, &[("NOVEL_FAILPOINT", point)]);
        assert_eq!(code(&out), 99, "{} {point}: {}", c.name, stdout(&out));
        recover(&dir, c);
        let have = files(&dir, !c.session_lock);
        before_or_after(c, &dir, &have, trees, point);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}

/// SIGKILL at `kills` moments spread over the writer's run time: recover leaves the tree as it
/// was before or as it is after. Returns (before, after) counts.
fn killed_at_random(
    tmp: &Path,
    c: &Case,
    (before, after): (&Tree, &Tree),
    took: Duration,
    kills: usize,
    seed: &mut u64,
) -> (usize, usize) {
    let mut seen = (0, 0);
    let span = (took.as_micros() as u64).max(1_000) * 6 / 5;
    for i in 0..kills {
        *seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let delay = Duration::from_micros((*seed >> 33) % span);
        let dir = tmp.join(format!("{}-kill-{i}", c.name)).join("book");
        copy_dir(&c.book, &dir);
        let mut child = Command::new(bin())
            .args(&c.args)
            .current_dir(&dir)
            .env_clear()
            .env("PATH", "/usr/bin:/bin")
            .env("NOVEL_NOW", NOW)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(delay);
        let _ = child.kill();
        let _ = child.wait();
        recover(&dir, c);
        let have = files(&dir, !c.session_lock);
        if before_or_after(
            c,
            &dir,
            &have,
            (before, after),
            &format!("killed after {delay:?}"),
        ) {
            seen.1 += 1;
        } else {
            seen.0 += 1;
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }
    seen
}

/// The books: `busy` has chapter 3 judged and let through by its gate (this session holds its
/// lock); `idle` is the same after chapter 3's commit (VOL_REVIEW, no lock), with a character
/// that can retire, a memory that lost its last line, and a state edited by hand in `edited`.
struct Books {
    _tmp: tempfile::TempDir,
    busy: PathBuf,
    token: String,
    idle: PathBuf,
    lost_memory: PathBuf,
    edited: PathBuf,
    newcomer: PathBuf,
    work: PathBuf,
}

fn books() -> Books {
    let (tmp, busy, token) = race_book();
    let idle = tmp.path().join("idle");
    copy_dir(&busy, &idle);
    ok(&idle, &["chapter", "commit", "3", "--token", &token]);
    write_json(
        &idle.join("characters/active/zhang-san.json"),
        &json!({"id": "zhang-san", "display_name": "张三", "role": "minor", "contracts": []}),
    );
    let manual = idle.join("manual.json");
    write_json(
        &manual,
        &json!({"chapter": 3, "base_state_version": 3, "storyline_id": "main_arc",
            "ops": [{"op": "set", "path": "characters.zhang-san.location", "value": "码头"}]}),
    );
    ok(
        &idle,
        &["ops", "apply", manual.to_str().unwrap(), "--manual"],
    );
    ok(&idle, &["memory", "init"]);
    let lost_memory = tmp.path().join("lost-memory");
    copy_dir(&idle, &lost_memory);
    let mem = lost_memory.join("memory/characters/lu-chen.jsonl");
    let text = std::fs::read_to_string(&mem).unwrap();
    let kept: Vec<&str> = text.lines().collect();
    std::fs::write(&mem, format!("{}\n", kept[..kept.len() - 1].join("\n"))).unwrap();
    let edited = tmp.path().join("edited");
    copy_dir(&idle, &edited);
    edit_json(&edited.join("state/current-state.json"), |s| {
        s["characters"]["lu-chen"]["location"] = json!("手改的地点");
    });
    // A work directory with a manuscript, where a new book is made.
    let work = tmp.path().join("work");
    std::fs::create_dir_all(&work).unwrap();
    let manuscript: String = (1..=6)
        .map(|n| format!("第{n}章 江城{n}\n　　第{n}章的正文，雨一直下。\n"))
        .collect();
    std::fs::write(work.join("江城.txt"), manuscript).unwrap();
    let newcomer = tmp.path().join("newcomer");
    copy_dir(&idle, &newcomer);
    write_json(
        &newcomer.join("characters/active/li-si.json"),
        &json!({"id": "li-si", "display_name": "李四", "role": "minor", "contracts": []}),
    );
    Books {
        _tmp: tmp,
        busy,
        token,
        idle,
        lost_memory,
        edited,
        newcomer,
        work,
    }
}

#[test]
fn every_writer_killed_anywhere_is_recovered_to_before_or_after() {
    let b = books();
    let manual = b.idle.join("manual-2.json");
    write_json(
        &manual,
        &json!({"chapter": 3, "base_state_version": 4, "storyline_id": "main_arc",
            "ops": [{"op": "set", "path": "world_state.marker", "value": "作者手改"}]}),
    );
    let manual = manual.to_string_lossy().into_owned();
    let cases = [
        case(
            "commit",
            &b.busy,
            &["chapter", "commit", "3", "--token", &b.token],
            true,
        ),
        case(
            "apply",
            &b.idle,
            &["ops", "apply", &manual, "--manual"],
            false,
        ),
        case(
            "skip",
            &b.idle,
            &["ops", "skip", "--chapter", "4", "--reason", "两次解析失败"],
            false,
        ),
        case(
            "blacklist",
            &b.idle,
            &[
                "blacklist",
                "add",
                "眼底闪过一道光",
                "--category",
                "body_language",
            ],
            false,
        ),
        case("prefs", &b.idle, &["prefs", "add", "对话少用感叹号"], false),
        case(
            "revision-apply",
            &b.idle,
            &["revision", "apply", "--chapter", "2"],
            false,
        ),
        case(
            "revision-reject",
            &b.idle,
            &["revision", "reject", "--chapter", "2"],
            false,
        ),
        case(
            "memory-rebuild",
            &b.lost_memory,
            &["memory", "rebuild"],
            false,
        ),
        case("memory-init", &b.newcomer, &["memory", "init"], false),
        case("propagate", &b.idle, &["spec", "propagate"], false),
        case("close", &b.idle, &["volume", "close"], false),
        case("retire", &b.idle, &["retire", "apply", "zhang-san"], false),
        case(
            "rebuild",
            &b.edited,
            &["state", "rebuild", "--write"],
            false,
        ),
        Case {
            lock_follows: true,
            failpoints: vec!["begin:0"],
            ..case("begin", &b.idle, &["chapter", "begin", "4"], true)
        },
        case(
            "fail",
            &b.busy,
            &[
                "chapter", "fail", "3", "--token", &b.token, "--reason", "断网",
            ],
            true,
        ),
        case(
            "snapshot",
            &b.idle,
            &["spec", "snapshot", "--replace"],
            false,
        ),
        case(
            "blacklist-remove",
            &b.idle,
            &["blacklist", "remove", "一抹弧度"],
            false,
        ),
        case(
            "style-preset",
            &b.idle,
            &["style", "preset", "rexue-shaonian", "--force"],
            false,
        ),
        case("export", &b.idle, &["export", "-o", "全书.txt"], false),
        case("dashboard", &b.idle, &["dashboard"], false),
        Case {
            new_book: Some("new"),
            ..case("init", &b.work, &["init", "new", "--title", "新书"], false)
        },
        Case {
            new_book: Some("new"),
            ..case(
                "import",
                &b.work,
                &["import", "江城.txt", "--into", "new"],
                false,
            )
        },
    ];
    let tmp = tempfile::tempdir().unwrap();
    let mut seed: u64 = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos() as u64;
    eprintln!("seed {seed}");
    let kills: usize = std::env::var("NOVEL_KILLS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(6);
    let mut report = Vec::new();
    for c in &cases {
        let (before, after, took) = before_after(tmp.path(), c);
        let steps = killed_at_every_step(tmp.path(), c, (&before, &after));
        killed_at_fail_points(tmp.path(), c, (&before, &after));
        let seen = killed_at_random(tmp.path(), c, (&before, &after), took, kills, &mut seed);
        report.push(format!(
            "{}: {steps} steps, {kills} kills → {} before / {} after",
            c.name, seen.0, seen.1
        ));
    }
    eprintln!("{}", report.join("\n"));
}

/// The commit's character-memory line is in its journal: killed at any step from the journal on,
/// the recovered memory holds chapter 3's actions exactly once.
#[test]
fn a_killed_commit_keeps_its_memory_line() {
    let b = books();
    let args: Vec<String> = ["chapter", "commit", "3", "--token", &b.token]
        .iter()
        .map(|a| a.to_string())
        .collect();
    let tmp = tempfile::tempdir().unwrap();
    let mut killed = 0;
    for step in 0.. {
        let dir = tmp.path().join(format!("memory-{step}")).join("book");
        copy_dir(&b.busy, &dir);
        let out = run_in(
            &dir,
            &args,
            &[("NOVEL_FAILPOINT", &format!("commit:{step}"))],
        );
        if code(&out) == 0 {
            break;
        }
        assert_eq!(code(&out), 99, "step {step}");
        killed += 1;
        recover(&dir, &case("commit", &b.busy, &[], true));
        let memory = std::fs::read_to_string(dir.join("memory/characters/lu-chen.jsonl")).unwrap();
        assert_eq!(
            memory.matches("第3章里陆尘做的事").count(),
            1,
            "step {step}: {memory}"
        );
    }
    assert!(killed >= 5, "{killed}");
}
