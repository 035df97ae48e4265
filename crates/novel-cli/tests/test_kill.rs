//! No half-done step after a kill (`docs/orchestration.md` §1): every writer is killed at each
//! step of its journal (the `NOVEL_FAILPOINT=commit:K` fail points of debug builds) and with
//! SIGKILL at random moments, then `novel chapter recover` runs; the project is then byte for
//! byte the state before the writer ran or the state after it — temp files included (none may
//! be left) — and a killed commit keeps the chapter's character-memory line.
//!
//! The project lock is compared apart: a writer run inside its session's lock (a chapter in
//! flight) leaves the lock with that session, which is alive; a writer that took the lock for
//! itself and was killed leaves a lock that `recover` clears.

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

/// The project's files, the lock directory left out when `with_lock` is false.
fn files(root: &Path, with_lock: bool) -> Tree {
    tree(root)
        .into_iter()
        .filter(|(k, _)| with_lock || !k.starts_with(".novel.lock"))
        .collect()
}

fn recover(root: &Path, what: &str) {
    let out = run_in(
        root,
        &["--json".into(), "chapter".into(), "recover".into()],
        &[],
    );
    assert_eq!(code(&out), 0, "{what}: recover: {}", stdout(&out));
}

/// One writer on one prepared book.
struct Case {
    name: &'static str,
    book: PathBuf,
    args: Vec<String>,
    /// The session holds the chapter lock on this book: the lock is not compared.
    session_lock: bool,
}

fn case(name: &'static str, book: &Path, args: &[&str], session_lock: bool) -> Case {
    Case {
        name,
        book: book.to_path_buf(),
        args: args.iter().map(|a| a.to_string()).collect(),
        session_lock,
    }
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
/// run. Returns the number of steps.
fn killed_at_every_step(tmp: &Path, c: &Case, after: &Tree) -> usize {
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
        recover(&dir, c.name);
        let have = files(&dir, !c.session_lock);
        assert_eq!(
            diff_trees(after, &have),
            Vec::<String>::new(),
            "{} killed after journal step {step}: not the finished state",
            c.name
        );
        std::fs::remove_dir_all(&dir).unwrap();
        assert!(step < 200, "{}", c.name);
    }
    unreachable!()
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
        recover(&dir, c.name);
        let have = files(&dir, !c.session_lock);
        if have == *before {
            seen.0 += 1;
        } else if have == *after {
            seen.1 += 1;
        } else {
            panic!(
                "{} killed after {delay:?}: neither before ({:?}) nor after ({:?})",
                c.name,
                diff_trees(before, &have),
                diff_trees(after, &have)
            );
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
        let steps = killed_at_every_step(tmp.path(), c, &after);
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
        recover(&dir, "commit");
        let memory = std::fs::read_to_string(dir.join("memory/characters/lu-chen.jsonl")).unwrap();
        assert_eq!(
            memory.matches("第3章里陆尘做的事").count(),
            1,
            "step {step}: {memory}"
        );
    }
    assert!(killed >= 5, "{killed}");
}
