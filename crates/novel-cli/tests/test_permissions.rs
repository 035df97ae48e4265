//! `novel permissions`: the plugin's allow rules in a book's `.claude/settings.local.json`
//! (放行设置) — which are missing, written on request with the file's other settings kept, a
//! file of another shape left alone — and `novel next` telling the skill what is missing and
//! whether the working directory is an empty folder made for a new book.

use std::path::Path;
use std::process::{Command, Output};

use serde_json::{Value, json};

use crate::support::*;

/// `novel ARGS` in `cwd` as the wrapper runs it: `NOVEL_PLUGIN_ROOT` names the plugin.
fn run(cwd: &Path, plugin_root: &str, args: &[&str]) -> Output {
    Command::new(bin())
        .args(args)
        .current_dir(cwd)
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .env("NOVEL_PLUGIN_ROOT", plugin_root)
        .output()
        .expect("run novel")
}

fn ok(cwd: &Path, plugin_root: &str, args: &[&str]) -> Value {
    let out = run(cwd, plugin_root, args);
    assert_eq!(code(&out), 0, "{args:?}: {}{}", stdout(&out), stderr(&out));
    json(&out)
}

const PLUGIN: &str = "/opt/plugins/novel";
const RULES: [&str; 4] = [
    "Bash(novel:*)",
    "Read(//opt/plugins/novel/**)",
    "Edit(/**)",
    "Skill(novel:*)",
];
/// The client's tools a book never uses, switched off with the rules.
const OFF: [&str; 16] = [
    "Workflow",
    "CronCreate",
    "CronDelete",
    "CronList",
    "ScheduleWakeup",
    "EnterWorktree",
    "ExitWorktree",
    "TaskCreate",
    "TaskGet",
    "TaskList",
    "TaskUpdate",
    "TaskOutput",
    "TaskStop",
    "NotebookEdit",
    "SendMessage",
    "ReportFindings",
];

#[test]
fn rules_are_listed_written_once_and_other_settings_kept() {
    let tmp = tempfile::tempdir().unwrap();
    let folder = tmp.path().join("新书");
    std::fs::create_dir(&folder).unwrap();

    // An empty folder, no project yet: next says so, and what the folder's settings lack.
    let next = ok(&folder, PLUGIN, &["--json", "next"]);
    let d = &next["data"];
    assert_eq!(d["project"], Value::Null);
    assert_eq!(d["cwd_empty"], true, "{d}");
    assert_eq!(d["cwd"], folder.to_str().unwrap());
    assert_eq!(d["permissions"]["missing"], json!(RULES), "{d}");
    let file = folder.join(".claude/settings.local.json");
    assert_eq!(d["permissions"]["file"], file.to_str().unwrap());

    // Written on request, into the working directory (the book goes there).
    let w = ok(&folder, PLUGIN, &["--json", "permissions", "--write"]);
    assert_eq!(w["data"]["written"], true, "{w}");
    assert_eq!(w["data"]["added"], json!(RULES));
    assert_eq!(w["data"]["missing"], json!([]));
    assert_eq!(w["data"]["off_added"], json!(OFF));
    // The book's conversation on Sonnet (the PRD's mix): the author had chosen no model.
    assert_eq!(w["data"]["model_set"], "sonnet", "{w}");
    assert_eq!(
        read_json(&file),
        json!({"permissions": {"allow": RULES, "deny": OFF}, "model": "sonnet",
            "autoMemoryEnabled": false})
    );
    // A dot entry does not make the folder "not empty"; the project made there finds them.
    let next = ok(&folder, PLUGIN, &["--json", "next"]);
    assert_eq!(next["data"]["cwd_empty"], true);
    assert_eq!(next["data"]["permissions"]["missing"], json!([]));
    let init = ok(
        &folder,
        PLUGIN,
        &["--json", "init", "--title", "守灯人", "--genre", "悬疑"],
    );
    assert_eq!(init["data"]["root"], folder.to_str().unwrap());
    let next = ok(&folder, PLUGIN, &["--json", "next"]);
    assert_eq!(next["data"]["project"], folder.to_str().unwrap());
    assert_eq!(next["data"]["cwd_empty"], false);
    assert_eq!(next["data"]["permissions"]["missing"], json!([]));

    // Nothing missing: nothing written.
    let again = ok(&folder, PLUGIN, &["--json", "permissions", "--write"]);
    assert_eq!(again["data"]["written"], false, "{again}");
    assert_eq!(again["data"]["added"], json!([]));

    // A settings file of the author's own: its keys and rules kept, ours appended.
    write_json(
        &file,
        &json!({"model": "opus", "permissions": {"allow": ["Bash(git status)", "Edit(/**)"],
            "deny": ["Read(./.env)"]}}),
    );
    let check = ok(&folder, PLUGIN, &["--json", "permissions"]);
    assert_eq!(
        check["data"]["missing"],
        json!([
            "Bash(novel:*)",
            "Read(//opt/plugins/novel/**)",
            "Skill(novel:*)"
        ])
    );
    assert_eq!(check["data"]["written"], false);
    ok(&folder, PLUGIN, &["--json", "permissions", "--write"]);
    let mut deny = vec!["Read(./.env)"];
    deny.extend(OFF);
    assert_eq!(
        read_json(&file),
        json!({"model": "opus", "permissions": {"allow": ["Bash(git status)", "Edit(/**)",
            "Bash(novel:*)", "Read(//opt/plugins/novel/**)", "Skill(novel:*)"],
            "deny": deny}, "autoMemoryEnabled": false})
    );
    // A tool the author took back (its deny line deleted) is switched off again only by another
    // `--write`; the allow rules alone decide `missing`.
    let mut settings = read_json(&file);
    settings["permissions"]["deny"] = json!(["Read(./.env)"]);
    write_json(&file, &settings);
    let check = ok(&folder, PLUGIN, &["--json", "permissions"]);
    assert_eq!(check["data"]["missing"], json!([]), "{check}");
}

/// Issue 38: the session's model. The book's own (`novel.json` `models.main`, `novel models`)
/// goes into a settings file that names none; a model the author chose for every session
/// (`~/.claude/settings.json`) stands. A session started in the folder above the book (the book
/// opened from its parent) reads that folder's settings: `--write` writes the same there.
#[test]
fn the_session_gets_the_books_model_and_its_parent_folder_the_same_settings() {
    let (_t, root) = new_project();
    let home = tempfile::tempdir().unwrap();
    let write = |cwd: &Path| {
        let out = Command::new(bin())
            .args([
                "--project",
                root.to_str().unwrap(),
                "--json",
                "permissions",
                "--write",
            ])
            .current_dir(cwd)
            .env_clear()
            .env("PATH", "/usr/bin:/bin")
            .env("HOME", home.path())
            .env("NOVEL_PLUGIN_ROOT", PLUGIN)
            .output()
            .unwrap();
        assert_eq!(code(&out), 0, "{}", stdout(&out));
        json(&out)
    };
    // The economy mix: the conversation on Sonnet too; from the parent folder, both files.
    crate::test_chapter::ok(&root, &["models", "--set", "economy"]);
    edit_json(&root.join("novel.json"), |s| {
        s["models"]["main"] = json!("haiku")
    });
    let parent = root.parent().unwrap();
    let w = write(parent);
    assert_eq!(w["data"]["model_set"], "haiku", "{w}");
    let session = parent.join(".claude/settings.local.json");
    assert_eq!(w["data"]["session_file"], session.to_str().unwrap(), "{w}");
    for f in [root.join(".claude/settings.local.json"), session.clone()] {
        let v = read_json(&f);
        assert_eq!(v["model"], "haiku", "{}", f.display());
        assert_eq!(v["permissions"]["deny"], json!(OFF), "{}", f.display());
    }
    // From the book's own folder: only the book's file (the parent is not the session's).
    std::fs::remove_file(&session).unwrap();
    std::fs::remove_file(root.join(".claude/settings.local.json")).unwrap();
    let w = write(&root);
    assert_eq!(w["data"]["session_file"], Value::Null, "{w}");
    assert!(!session.exists());
    // The author's own model for every session stands.
    std::fs::remove_file(root.join(".claude/settings.local.json")).unwrap();
    std::fs::create_dir_all(home.path().join(".claude")).unwrap();
    write_json(
        &home.path().join(".claude/settings.json"),
        &json!({"model": "opus"}),
    );
    let w = write(&root);
    assert_eq!(w["data"]["model_set"], Value::Null, "{w}");
    assert!(
        read_json(&root.join(".claude/settings.local.json"))
            .get("model")
            .is_none()
    );
}

#[test]
fn a_settings_file_of_another_shape_is_left_alone() {
    let (_t, root) = new_project();
    let file = root.join(".claude/settings.local.json");
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    std::fs::write(&file, "{\"permissions\": {\"allow\": \"Bash\"}}").unwrap();
    let out = run(&root, PLUGIN, &["--json", "permissions", "--write"]);
    assert_eq!(code(&out), 2, "{}", stdout(&out));
    let doc = json(&out);
    assert_eq!(doc["error"]["code"], "E_SETTINGS_LOCAL", "{doc}");
    assert_eq!(
        std::fs::read_to_string(&file).unwrap(),
        "{\"permissions\": {\"allow\": \"Bash\"}}"
    );
    // next still answers, and says why.
    let next = ok(&root, PLUGIN, &["--json", "next"]);
    assert!(
        next["data"]["permissions"]["problem"]
            .as_str()
            .is_some_and(|p| p.contains("permissions.allow")),
        "{next}"
    );
    // Not JSON at all: the same, with the place of the syntax error.
    std::fs::write(&file, "{\"permissions\": ").unwrap();
    let out = run(&root, PLUGIN, &["--json", "permissions", "--write"]);
    assert_eq!(code(&out), 2, "{}", stdout(&out));
    assert_eq!(json(&out)["error"]["code"], "E_JSON");
}

/// A plugin installed from a marketplace lives in the client's cache under its version: the
/// read rule covers every version, so an update keeps it good. `--project` and `--dir` pick the
/// directory.
#[test]
fn a_cached_plugin_is_read_across_versions() {
    let (_t, root) = new_project();
    let cached = "/home/a/.claude/plugins/cache/novel-marketplace/novel/0.4.1";
    let elsewhere = tempfile::tempdir().unwrap();
    let w = ok(
        elsewhere.path(),
        cached,
        &[
            "--json",
            "--project",
            root.to_str().unwrap(),
            "permissions",
            "--write",
        ],
    );
    assert_eq!(
        w["data"]["plugin_root"],
        "/home/a/.claude/plugins/cache/novel-marketplace/novel"
    );
    let allow =
        read_json(&root.join(".claude/settings.local.json"))["permissions"]["allow"].clone();
    assert_eq!(
        allow[1],
        "Read(//home/a/.claude/plugins/cache/novel-marketplace/novel/**)"
    );
    let other = elsewhere.path().join("另一本");
    let w = ok(
        elsewhere.path(),
        cached,
        &[
            "--json",
            "permissions",
            "--dir",
            other.to_str().unwrap(),
            "--write",
        ],
    );
    assert_eq!(w["data"]["dir"], other.to_str().unwrap());
    assert!(other.join(".claude/settings.local.json").is_file());
}

/// `novel ARGS` in `cwd` as a tool of a client session runs it (`CLAUDECODE` set, the client's
/// config under `home`), the session's client being `client`: the command's nearest ancestor
/// that is not a shell. `prefix` is a shell line run first (in `cwd`).
fn in_client(cwd: &Path, home: &Path, prefix: &str, args: &[&str]) -> Value {
    // xargs (not a shell, so the session's process) starts, runs `sh -c` (a wrapper) which runs
    // the prefix, then novel.
    let line = format!("{prefix} exec \"$0\" \"$@\"");
    let mut all = vec!["sh".to_string(), "-c".to_string(), line];
    all.push(bin().to_string_lossy().into_owned());
    all.extend(args.iter().map(|a| a.to_string()));
    let out = Command::new("xargs")
        .args(&all)
        .current_dir(cwd)
        .stdin(std::process::Stdio::null())
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .env("HOME", home)
        .env("CLAUDECODE", "1")
        .env("NOVEL_PLUGIN_ROOT", PLUGIN)
        .output()
        .expect("run novel in a client");
    assert_eq!(code(&out), 0, "{args:?}: {}{}", stdout(&out), stderr(&out));
    json(&out)
}

fn trust(home: &Path, dir: &Path) {
    let key = dir.to_string_lossy().into_owned();
    std::fs::create_dir_all(home).unwrap();
    write_json(
        &home.join(".claude.json"),
        &json!({"projects": {key: {"hasTrustDialogAccepted": true}}}),
    );
}

/// Issue 45: the 放行设置 work only in a folder the client trusts, and only when its `.claude/`
/// was there when the client started (measured with 2.1.197: rules written into a `.claude/`
/// made mid-session asked at every step until `claude --continue`). `next --json` says which.
#[test]
fn next_says_whether_the_rules_are_in_force_for_the_session() {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    let dir = tmp.path().join("book");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::create_dir_all(&home).unwrap();
    let standing = |v: &Value| v["data"]["permissions"].clone();

    // Outside a client nothing is known but what the file holds.
    let outside = ok(&dir, PLUGIN, &["next", "--json"]);
    let p = standing(&outside);
    assert_eq!(p["in_force"], false, "{p}");
    assert_eq!(p["blocker"], "not_written", "{p}");
    assert_eq!(p["trusted"], Value::Null, "{p}");

    // Written, in a folder nobody trusted and no repository: the client drops the rules.
    ok(&dir, PLUGIN, &["permissions", "--write", "--json"]);
    let p = standing(&in_client(&dir, &home, "", &["next", "--json"]));
    assert_eq!(p["trusted"], false, "{p}");
    assert_eq!(p["blocker"], "untrusted", "{p}");
    assert_eq!(p["in_force"], false, "{p}");
    assert_eq!(p["session_dir"], dir.to_string_lossy().as_ref(), "{p}");

    // Trusted, and `.claude/` older than the client: in force.
    trust(&home, &dir);
    let p = standing(&in_client(&dir, &home, "", &["next", "--json"]));
    assert_eq!(p["trusted"], true, "{p}");
    if std::fs::metadata(dir.join(".claude"))
        .and_then(|m| m.created())
        .is_err()
    {
        eprintln!("no creation times on this filesystem: the watch is not measured");
        assert_eq!(p["watched"], Value::Null, "{p}");
        return;
    }
    assert_eq!(p["watched"], true, "{p}");
    assert_eq!(p["in_force"], true, "{p}");
    assert_eq!(p["blocker"], Value::Null, "{p}");

    // A `.claude/` made after the client started (two seconds into its life) is not watched.
    std::fs::remove_dir_all(dir.join(".claude")).unwrap();
    let p = standing(&in_client(
        &dir,
        &home,
        &format!(
            "sleep 2.2; \"{}\" permissions --write --json >/dev/null;",
            bin().display()
        ),
        &["next", "--json"],
    ));
    assert_eq!(p["watched"], false, "{p}");
    assert_eq!(p["blocker"], "not_watched", "{p}");
    assert_eq!(p["in_force"], false, "{p}");
}

/// A git work tree that does not track the settings file needs no trust dialog (the client
/// takes its local settings), and the trust dialog counts for the repository's root.
#[test]
fn a_repository_needs_no_trust_dialog() {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    let repo = tmp.path().join("repo");
    let dir = repo.join("book");
    std::fs::create_dir_all(dir.join(".claude")).unwrap();
    std::fs::create_dir_all(repo.join(".git")).unwrap();
    std::fs::create_dir_all(&home).unwrap();
    ok(&dir, PLUGIN, &["permissions", "--write", "--json"]);
    let p = in_client(&dir, &home, "", &["next", "--json"])["data"]["permissions"].clone();
    assert_eq!(p["trusted"], true, "{p}");
    // `.claude/` as a repository of its own is the one the client refuses.
    std::fs::create_dir_all(dir.join(".claude/.git")).unwrap();
    let p = in_client(&dir, &home, "", &["next", "--json"])["data"]["permissions"].clone();
    assert_eq!(p["trusted"], false, "{p}");
    trust(&home, &repo);
    let p = in_client(&dir, &home, "", &["next", "--json"])["data"]["permissions"].clone();
    assert_eq!(p["trusted"], true, "{p}");
}

/// The SessionStart hook at the client's launch makes the `.claude/` the client then watches —
/// in a book, in a folder holding a book, in an empty folder — and nowhere else, and not after
/// `/clear` or a compaction (too late to be watched).
#[test]
fn the_launch_hook_prepares_the_settings_folder_of_a_book_only() {
    let tmp = tempfile::tempdir().unwrap();
    let hook = |cwd: &Path, source: &str| {
        let mut child = Command::new(bin())
            .args(["context", "session-start"])
            .current_dir(tmp.path())
            // The launch note goes to this home's cache, not the developer's.
            .env("HOME", tmp.path())
            .env_remove("XDG_CACHE_HOME")
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        use std::io::Write as _;
        let input = json!({"cwd": cwd, "source": source, "hook_event_name": "SessionStart"});
        child
            .stdin
            .take()
            .unwrap()
            .write_all(input.to_string().as_bytes())
            .unwrap();
        assert!(child.wait_with_output().unwrap().status.success());
        cwd.join(".claude").is_dir()
    };
    let empty = tmp.path().join("empty");
    std::fs::create_dir_all(&empty).unwrap();
    assert!(!hook(&empty, "clear"), "after /clear nothing is made");
    assert!(hook(&empty, "startup"), "an empty folder made for a book");

    let code_dir = tmp.path().join("code");
    std::fs::create_dir_all(&code_dir).unwrap();
    std::fs::write(code_dir.join("main.rs"), "fn main() {}\n").unwrap();
    assert!(!hook(&code_dir, "startup"), "someone's code is left alone");

    let shelf = tmp.path().join("shelf");
    let init = novel(
        tmp.path(),
        &["init", shelf.join("雾港").to_str().unwrap(), "--json"],
    );
    assert_eq!(code(&init), 0, "{}", stderr(&init));
    std::fs::write(shelf.join("notes.txt"), "作者的笔记\n").unwrap();
    assert!(hook(&shelf, "resume"), "a folder holding a book");
    let book = shelf.join("雾港");
    assert!(hook(&book, "startup"), "the book itself");
    // Nothing else was written: the folders hold what they held, plus `.claude/`.
    assert_eq!(std::fs::read_dir(empty.join(".claude")).unwrap().count(), 0);
}
