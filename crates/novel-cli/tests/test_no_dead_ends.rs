//! Issue 42's recoveries and waits (N12, N16, N17, N18, N7): a `begin` killed before its journal,
//! a rebuild from a lost changelog, the build directories of a killed `init`/`import`, a writer
//! waiting on another, locks naming system processes, the chapter's plan checked at `begin`, and
//! committed chapters changed outside `novel`.

use std::path::Path;

use serde_json::{Value, json};

use crate::support::*;
use crate::test_chapter::{
    copy_dir, diff_trees, ok, ready_to_commit, tree, up_to_gate, writing_project,
};
use crate::test_lock::dead_pid;

fn run_env(root: &Path, args: &[&str], env: &[(&str, &str)]) -> std::process::Output {
    crate::test_integrity::run_env(root, args, env)
}

/// The lock's `info.json`, when there is a lock.
fn lock_info(root: &Path) -> Option<Value> {
    std::fs::read_to_string(root.join(".novel.lock/info.json"))
        .ok()
        .map(|t| serde_json::from_str(&t).unwrap())
}

/// N12: a `begin` killed between placing its lock and writing its journal leaves no dead end:
/// the same session's next `begin` goes on with that lock, and `recover` removes it, leaving the
/// book exactly as before.
#[test]
fn a_begin_killed_before_its_journal_is_no_dead_end() {
    let (tmp, root) = writing_project();
    let before = tree(&root);
    let out = run_env(
        &root,
        &["--json", "chapter", "begin", "1"],
        &[("NOVEL_FAILPOINT", "begin:0")],
    );
    assert_eq!(code(&out), 99, "{}", stdout(&out));
    let left = lock_info(&root).expect("the lock was placed");
    assert_eq!(left["chapter"], 1);
    assert!(read_json(&root.join(".checkpoint.json"))["inflight_chapter"].is_null());

    // Recover (another copy): the lock goes, the book is as before.
    let other = tmp.path().join("copy");
    copy_dir(&root, &other);
    let doc = ok(&other, &["chapter", "recover"]);
    let actions = doc["data"]["actions"].to_string();
    assert!(actions.contains("chapter begin"), "{doc}");
    assert!(lock_info(&other).is_none(), "{doc}");
    let mut copied_before = before.clone();
    copied_before.retain(|k, _| !k.starts_with(".novel.lock"));
    assert_eq!(
        diff_trees(&copied_before, &tree(&other)),
        Vec::<String>::new()
    );
    ok(&other, &["chapter", "begin", "1"]);

    // The same session's next begin takes the chapter on with the lock it placed.
    let doc = ok(&root, &["chapter", "begin", "1"]);
    assert_eq!(doc["data"]["token"], left["token"], "{doc}");
    assert_eq!(
        read_json(&root.join(".checkpoint.json"))["inflight_chapter"],
        1
    );
    // A lock for a chapter another session's live begin holds is still that session's.
    let (_t2, busy) = writing_project();
    let alive = Alive::new();
    let out = run(
        &busy,
        &[
            "--json",
            "lock",
            "acquire",
            "--chapter",
            "1",
            "--owner-pid",
            &alive.pid().to_string(),
        ],
    );
    assert_eq!(code(&out), 0, "{}", stdout(&out));
    let doc = ok(&busy, &["chapter", "recover"]);
    assert!(
        lock_info(&busy).is_some(),
        "a lock acquire's lock is not a begin's: {doc}"
    );
}

fn run(root: &Path, args: &[&str]) -> std::process::Output {
    crate::test_chapter::run(root, args)
}

fn committed_book() -> (tempfile::TempDir, std::path::PathBuf) {
    let (t, root) = writing_project();
    let token = up_to_gate(&root, 1, true);
    ok(&root, &["chapter", "commit", "1", "--token", &token]);
    (t, root)
}

/// N18: `state rebuild --write` never writes from a changelog that is missing or empty while
/// the state or the checkpoint says chapters were recorded; `begin` needs a state file.
#[test]
fn a_rebuild_never_wipes_the_state_from_a_lost_changelog() {
    let (_t, root) = committed_book();
    let log = root.join("state/changelog.jsonl");
    for lose in ["empty", "missing", "all of state/"] {
        let book = root.parent().unwrap().join(format!("book-{}", lose.len()));
        copy_dir(&root, &book);
        match lose {
            "empty" => std::fs::write(book.join("state/changelog.jsonl"), "").unwrap(),
            "missing" => std::fs::remove_file(book.join("state/changelog.jsonl")).unwrap(),
            _ => std::fs::remove_dir_all(book.join("state")).unwrap(),
        }
        let before = tree(&book);
        let out = run(&book, &["--json", "state", "rebuild", "--write"]);
        assert_eq!(code(&out), 2, "{lose}: {}", stdout(&out));
        assert_eq!(json(&out)["error"]["code"], "E_CHANGELOG_LOST", "{lose}");
        assert_eq!(
            diff_trees(&before, &tree(&book)),
            Vec::<String>::new(),
            "{lose}"
        );
        if lose == "all of state/" {
            let out = run(&book, &["--json", "chapter", "begin", "2"]);
            assert_eq!(
                json(&out)["error"]["code"],
                "E_STATE_MISSING",
                "{}",
                stdout(&out)
            );
            assert!(lock_info(&book).is_none());
        }
    }
    assert!(log.is_file());
    // A new book (version 0, nothing recorded) rebuilds from its empty changelog as before.
    let (_t, fresh) = writing_project();
    let out = run(&fresh, &["--json", "state", "rebuild", "--write"]);
    assert_eq!(code(&out), 0, "{}", stdout(&out));
}

/// N7: the build directory of a killed `init`/`import` (`.novel-init-<pid>-…`) is swept by
/// `recover` when its writer is gone — from the directory it was run in, where no project is
/// yet, and beside a project; a live writer's is left alone.
#[test]
fn recover_sweeps_the_build_directories_of_killed_writers() {
    let tmp = tempfile::tempdir().unwrap();
    let dead = tmp
        .path()
        .join(format!(".novel-init-{}-20260101T000000Z", dead_pid()));
    std::fs::create_dir_all(dead.join("state")).unwrap();
    std::fs::write(dead.join(".checkpoint.json"), "{}").unwrap();
    let alive = Alive::new();
    let live = tmp
        .path()
        .join(format!(".novel-init-{}-20260101T000000Z", alive.pid()));
    std::fs::create_dir_all(&live).unwrap();
    let out = novel(tmp.path(), &["--json", "chapter", "recover"]);
    assert_eq!(code(&out), 0, "{}{}", stdout(&out), stderr(&out));
    assert!(!dead.exists());
    assert!(live.exists());
    // Nothing to sweep: still not a project.
    let out = novel(tmp.path(), &["--json", "chapter", "recover"]);
    assert_eq!(json(&out)["error"]["code"], "E_NOT_PROJECT");
    // `--project` naming the book the killed import was making: beside it.
    std::fs::create_dir_all(&dead).unwrap();
    let target = tmp.path().join("book");
    let out = novel(
        Path::new("/"),
        &[
            "--json",
            "--project",
            target.to_str().unwrap(),
            "chapter",
            "recover",
        ],
    );
    assert_eq!(code(&out), 0, "{}", stdout(&out));
    assert!(!dead.exists());
}

/// N16: a writer that waits on another says so after about a second, naming the other's
/// command; `lock status` and `validate` tell the story `next` tells while a writer is at work.
#[test]
fn a_waiting_writer_says_so_and_everyone_tells_the_same_story() {
    let (_t, root, token) = ready_to_commit();
    let guard = std::fs::File::open(&root).unwrap();
    guard.lock().unwrap();
    let me = format!("进程 {}", std::process::id());
    let out = run_env(
        &root,
        &["--json", "prefs", "add", "少用感叹号"],
        &[("NOVEL_LOCK_TIMEOUT", "2")],
    );
    assert_eq!(code(&out), 3, "{}", stdout(&out));
    let said = stderr(&out);
    assert!(
        said.contains("正在写入这本书") && said.contains(&me),
        "{said}"
    );
    let doc = ok(&root, &["lock", "status"]);
    assert!(
        doc["data"]["writer"].as_str().unwrap().contains(&me),
        "{doc}"
    );
    let out = run(&root, &["lock", "status"]);
    assert!(stdout(&out).contains("正在写入"), "{}", stdout(&out));
    drop(guard);
    let doc = ok(&root, &["lock", "status"]);
    assert!(doc["data"]["writer"].is_null(), "{doc}");

    // A commit half-way through its journal, its writer still at work (holding the guard).
    let out = run_env(
        &root,
        &["chapter", "commit", "3", "--token", &token],
        &[("NOVEL_FAILPOINT", "commit:1")],
    );
    assert_eq!(code(&out), 99);
    let guard = std::fs::File::open(&root).unwrap();
    guard.lock().unwrap();
    let next = ok(&root, &["next"]);
    assert_eq!(
        next["data"]["recommendation"]["action"], "wait_for_lock",
        "{next}"
    );
    let v = json(&run(&root, &["--json", "validate"]));
    let codes: Vec<&str> = v["data"]["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["code"].as_str().unwrap())
        .collect();
    assert!(
        codes.contains(&"E_WRITER_BUSY") && !codes.contains(&"E_JOURNAL"),
        "{v}"
    );
    drop(guard);
    // The writer is gone: now it is a journal to recover, as `next` says too.
    let v = json(&run(&root, &["--json", "validate"]));
    assert!(v.to_string().contains("E_JOURNAL"), "{v}");
    let next = ok(&root, &["next"]);
    assert_eq!(
        next["data"]["recommendation"]["action"], "recover",
        "{next}"
    );
}

/// N16: a lock naming pid 0, 1 or 2 never had a live holder: it is stale, described for what it
/// says, and cleared by the next taker.
#[test]
fn locks_naming_system_processes_are_stale() {
    let (_t, root) = writing_project();
    let host = json(&novel(&root, &["--json", "lock", "acquire"]))["data"]["info"]["host"]
        .as_str()
        .unwrap()
        .to_string();
    ok(&root, &["lock", "clear"]);
    for pid in [0, 1, 2] {
        std::fs::create_dir_all(root.join(".novel.lock")).unwrap();
        write_json(
            &root.join(".novel.lock/info.json"),
            &json!({"pid": pid, "started": "2026-01-01T00:00:00Z", "chapter": 1, "host": host,
                "token": "t", "heartbeat": 4_000_000_000u64, "started_epoch": 4_000_000_000u64}),
        );
        let doc = ok(&root, &["lock", "status"]);
        assert_eq!(doc["data"]["state"], "stale", "{pid}: {doc}");
        let human = stdout(&run(&root, &["lock", "status"]));
        assert!(!human.contains("还没有 info.json"), "{pid}: {human}");
        assert!(human.contains(&format!("进程号 {pid}")), "{pid}: {human}");
        ok(&root, &["chapter", "begin", "1"]);
        ok(&root, &["lock", "clear"]);
        let mut cp = read_json(&root.join(".checkpoint.json"));
        cp["inflight_chapter"] = Value::Null;
        cp["pipeline_stage"] = Value::Null;
        write_json(&root.join(".checkpoint.json"), &cp);
    }
}

const OUTLINE_OK: &str = "# 第一卷\n\n## 第1章 开端\n- 故事线：main_arc\n- 冲突：陆尘夜探废墟\n\n## 第2章 风起\n- 故事线：jinghai_plan\n";

/// N17: `begin` refuses a chapter whose outline or contract is broken, naming the file and the
/// line, and takes nothing (no lock, no checkpoint change); a sound plan, or none yet, is
/// accepted.
#[test]
fn begin_checks_the_chapters_outline_and_contract() {
    let (_t, root) = writing_project();
    let outline = root.join("volumes/vol-01/outline.md");
    let contract = root.join("volumes/vol-01/chapter-contracts/chapter-001.json");
    let gbk: Vec<u8> = vec![0x23, 0x20, 0xb5, 0xda, 0xd2, 0xbb, 0xbe, 0xed, 0x0a];
    let outlines: Vec<(&str, Vec<u8>, &str)> = vec![
        ("not UTF-8", gbk, "UTF-8"),
        (
            "glued title",
            "## 第1章雨夜\n- 故事线：main_arc\n".into(),
            "第 1 行",
        ),
        (
            "twice",
            "## 第1章 开端\n- 冲突：甲\n## 第1章 又是开端\n- 冲突：乙\n".into(),
            "第 3 行",
        ),
        (
            "no chapter 1",
            "## 第2章 风起\n- 冲突：乙\n".into(),
            "没有第 1 章",
        ),
        (
            "heading only",
            "## 第1章 开端\n\n## 第2章 风起\n- 冲突：乙\n".into(),
            "只有标题",
        ),
        ("empty", "# 第一卷\n\n本卷讲陆尘。\n".into(), "没有任何章节"),
        (
            "bad numeral",
            "## 第十十章 开端\n- 冲突：甲\n".into(),
            "第 1 行",
        ),
        ("zero", "## 第0章 序\n- 冲突：甲\n".into(), "第 1 行"),
    ];
    let contracts: Vec<(&str, &str, &str)> = vec![
        ("not JSON", "{\"chapter\": 1,,}", "E_JSON"),
        ("wrong chapter", "{\"chapter\": 2}", "chapter"),
        ("wrong type", "{\"chapter\": \"一\"}", "chapter"),
        ("not an object", "[1]", "E_SCHEMA"),
        ("empty", "", "E_JSON"),
    ];
    let refused = |what: &str, want: &str| {
        let before = tree(&root);
        let out = run(&root, &["--json", "chapter", "begin", "1"]);
        let doc = json(&out);
        assert_eq!(code(&out), 1, "{what}: {doc}");
        assert_eq!(doc["error"]["code"], "E_CHAPTER_PLAN", "{what}: {doc}");
        let message = doc["error"]["message"].as_str().unwrap();
        assert!(message.contains(want), "{what}: {message}");
        assert_eq!(
            diff_trees(&before, &tree(&root)),
            Vec::<String>::new(),
            "{what}"
        );
    };
    for (what, text, want) in &outlines {
        std::fs::write(&outline, text).unwrap();
        refused(what, want);
    }
    std::fs::write(&outline, OUTLINE_OK).unwrap();
    for (what, text, want) in &contracts {
        std::fs::write(&contract, text).unwrap();
        refused(what, want);
    }
    std::fs::write(&contract, "{\"chapter\": 1}").unwrap();
    ok(&root, &["chapter", "begin", "1"]);
}

/// N17: `validate` reports an empty outline; a packet names a mis-encoded outline as such.
#[test]
fn an_empty_or_mis_encoded_outline_is_named_as_such() {
    let (_t, root) = writing_project();
    let outline = root.join("volumes/vol-01/outline.md");
    std::fs::write(&outline, "# 第一卷\n\n本卷讲陆尘。\n").unwrap();
    let v = json(&run(&root, &["--json", "validate"]));
    assert!(v.to_string().contains("E_OUTLINE_EMPTY"), "{v}");
    std::fs::write(&outline, [0x23, 0x20, 0xb5, 0xda, 0xd2, 0xbb, 0x0a]).unwrap();
    let out = run(
        &root,
        &["--json", "context", "chapter-writer", "--chapter", "1"],
    );
    let doc = json(&out);
    assert_eq!(doc["error"]["code"], "E_OUTLINE_UNREADABLE", "{doc}");
    assert!(
        doc["error"]["message"].as_str().unwrap().contains("UTF-8"),
        "{doc}"
    );
}

/// The author's own hand edits of a committed chapter or evaluation stay possible and are
/// noticed by `validate`, like a hand-edited state.
#[test]
fn validate_notices_committed_files_changed_outside_novel() {
    let (_t, root) = committed_book();
    let edited = |root: &Path| -> Vec<String> {
        let v = json(&run(root, &["--json", "validate"]));
        v["data"]["findings"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|f| f["code"] == "E_CHAPTER_EDITED")
            .map(|f| f["file"].as_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(edited(&root), Vec::<String>::new());
    let text = root.join("chapters/chapter-001.md");
    let mut body = std::fs::read_to_string(&text).unwrap();
    body.push_str("作者补的一句。\n");
    std::fs::write(&text, &body).unwrap();
    assert_eq!(edited(&root), ["chapters/chapter-001.md"]);
    let eval = root.join("evaluations/chapter-001-eval.json");
    edit_json(&eval, |e| e["overall"] = json!(4.9));
    assert_eq!(
        edited(&root),
        [
            "chapters/chapter-001.md",
            "evaluations/chapter-001-eval.json"
        ]
    );
}
