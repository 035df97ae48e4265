//! `novel permissions`: the 放行设置 — the plugin's allow rules in the author's user settings
//! (`~/.claude/settings.json`), the book's session settings in its folder's
//! `.claude/settings.local.json` — which are missing, written on request with the files' other
//! settings kept, a file of another shape left alone — and `novel next` telling the skill what
//! is missing, whether the rules are in force, and whether the working directory is an empty
//! folder made for a new book.

use std::path::Path;
use std::process::{Command, Output};

use serde_json::{Value, json};

use crate::support::*;

/// `novel ARGS` in `cwd` as the wrapper runs it: `NOVEL_PLUGIN_ROOT` names the plugin, `home`
/// is the author's home (the user settings under `home/.claude`).
fn run(cwd: &Path, home: &Path, plugin_root: &str, args: &[&str]) -> Output {
    Command::new(bin())
        .args(args)
        .current_dir(cwd)
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .env("HOME", home)
        .env("NOVEL_PLUGIN_ROOT", plugin_root)
        .output()
        .expect("run novel")
}

fn ok(cwd: &Path, home: &Path, plugin_root: &str, args: &[&str]) -> Value {
    let out = run(cwd, home, plugin_root, args);
    assert_eq!(code(&out), 0, "{args:?}: {}{}", stdout(&out), stderr(&out));
    json(&out)
}

const PLUGIN: &str = "/opt/plugins/novel";

/// The allow rules for sessions started in `folder`.
fn rules(folder: &Path) -> Value {
    json!([
        "Bash(novel:*)",
        "Read(//opt/plugins/novel/**)",
        format!("Edit(/{}/**)", folder.display()),
        "Skill(novel:*)"
    ])
}

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
    let home = tmp.path().join("home");
    let folder = tmp.path().join("新书");
    std::fs::create_dir_all(&folder).unwrap();
    std::fs::create_dir_all(&home).unwrap();
    let user = home.join(".claude/settings.json");

    // An empty folder, no project yet: next says so, and what the user settings lack.
    let next = ok(&folder, &home, PLUGIN, &["--json", "next"]);
    let d = &next["data"];
    assert_eq!(d["project"], Value::Null);
    assert_eq!(d["cwd_empty"], true, "{d}");
    assert_eq!(d["cwd"], folder.to_str().unwrap());
    assert_eq!(d["permissions"]["missing"], rules(&folder), "{d}");
    assert_eq!(d["permissions"]["file"], user.to_str().unwrap());

    // Written on request: the allow rules to the user settings, the book's own to the folder.
    let w = ok(
        &folder,
        &home,
        PLUGIN,
        &["--json", "permissions", "--write"],
    );
    assert_eq!(w["data"]["written"], true, "{w}");
    assert_eq!(w["data"]["added"], rules(&folder));
    assert_eq!(w["data"]["missing"], json!([]));
    assert_eq!(w["data"]["off_added"], json!(OFF));
    // The book's conversation on Sonnet (the PRD's mix): the author had chosen no model.
    assert_eq!(w["data"]["model_set"], "sonnet", "{w}");
    assert_eq!(
        read_json(&user),
        json!({"permissions": {"allow": rules(&folder)}})
    );
    let local = folder.join(".claude/settings.local.json");
    assert_eq!(w["data"]["local_file"], local.to_str().unwrap());
    assert_eq!(
        read_json(&local),
        json!({"permissions": {"deny": OFF}, "model": "sonnet",
            "autoMemoryEnabled": false})
    );
    // A dot entry does not make the folder "not empty"; the project made there finds them.
    let next = ok(&folder, &home, PLUGIN, &["--json", "next"]);
    assert_eq!(next["data"]["cwd_empty"], true);
    assert_eq!(next["data"]["permissions"]["missing"], json!([]));
    let init = ok(
        &folder,
        &home,
        PLUGIN,
        &["--json", "init", "--title", "守灯人", "--genre", "悬疑"],
    );
    assert_eq!(init["data"]["root"], folder.to_str().unwrap());
    let next = ok(&folder, &home, PLUGIN, &["--json", "next"]);
    assert_eq!(next["data"]["project"], folder.to_str().unwrap());
    assert_eq!(next["data"]["cwd_empty"], false);
    assert_eq!(next["data"]["permissions"]["missing"], json!([]));

    // Nothing missing: nothing written.
    let again = ok(
        &folder,
        &home,
        PLUGIN,
        &["--json", "permissions", "--write"],
    );
    assert_eq!(again["data"]["written"], false, "{again}");
    assert_eq!(again["data"]["added"], json!([]));

    // The author's own user settings: their keys and rules kept, ours appended.
    write_json(
        &user,
        &json!({"model": "opus", "permissions": {"allow": ["Bash(git status)", "Bash(novel:*)"],
            "deny": ["Read(./.env)"]}}),
    );
    let check = ok(&folder, &home, PLUGIN, &["--json", "permissions"]);
    let mut lacking = rules(&folder);
    lacking.as_array_mut().unwrap().remove(0);
    assert_eq!(check["data"]["missing"], lacking, "{check}");
    assert_eq!(check["data"]["written"], false);
    ok(
        &folder,
        &home,
        PLUGIN,
        &["--json", "permissions", "--write"],
    );
    let mut allow = json!(["Bash(git status)", "Bash(novel:*)"]);
    allow
        .as_array_mut()
        .unwrap()
        .extend(lacking.as_array().unwrap().iter().cloned());
    assert_eq!(
        read_json(&user),
        json!({"model": "opus", "permissions": {"allow": allow, "deny": ["Read(./.env)"]}})
    );
    // A tool the author took back (its deny line deleted) is switched off again only by another
    // `--write`; the allow rules alone decide `missing`.
    let mut settings = read_json(&local);
    settings["permissions"]["deny"] = json!([]);
    write_json(&local, &settings);
    let check = ok(&folder, &home, PLUGIN, &["--json", "permissions"]);
    assert_eq!(check["data"]["missing"], json!([]), "{check}");
}

/// The write rule opens the folder the sessions start in — a book in a subfolder is covered by
/// its parent's — and never the author's home folder: started there, only the book's folder.
#[test]
fn writes_are_opened_where_the_sessions_start_never_in_the_home_folder() {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    std::fs::create_dir_all(&home).unwrap();
    std::fs::write(home.join("购物清单.txt"), "米\n").unwrap();
    // No book yet, in the home folder: no write rule at all.
    let next = ok(&home, &home, PLUGIN, &["--json", "next"]);
    let missing = next["data"]["permissions"]["missing"].to_string();
    assert!(!missing.contains("Edit("), "{missing}");
    // The book made below the home folder: its own folder only.
    let book = home.join("雾港");
    ok(
        &home,
        &home,
        PLUGIN,
        &["--json", "init", book.to_str().unwrap()],
    );
    let w = ok(
        &home,
        &home,
        PLUGIN,
        &[
            "--json",
            "--project",
            book.to_str().unwrap(),
            "permissions",
            "--write",
        ],
    );
    assert_eq!(
        w["data"]["added"][2],
        format!("Edit(/{}/**)", book.display()),
        "{w}"
    );
    assert!(
        !w["data"]["added"]
            .to_string()
            .contains(&format!("Edit(/{}/**)", home.display()))
    );
    // A folder of books: the folder covers each of them.
    let shelf = tmp.path().join("写作");
    std::fs::create_dir_all(&shelf).unwrap();
    let inner = shelf.join("灯下");
    ok(
        &shelf,
        &home,
        PLUGIN,
        &["--json", "init", inner.to_str().unwrap()],
    );
    let check = ok(
        &shelf,
        &home,
        PLUGIN,
        &[
            "--json",
            "--project",
            inner.to_str().unwrap(),
            "permissions",
        ],
    );
    assert_eq!(
        check["data"]["missing"],
        json!([format!("Edit(/{}/**)", shelf.display())]),
        "{check}"
    );
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
        ok(
            cwd,
            home.path(),
            PLUGIN,
            &[
                "--project",
                root.to_str().unwrap(),
                "--json",
                "permissions",
                "--write",
            ],
        )
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
    let user = home.path().join(".claude/settings.json");
    let mut v = read_json(&user);
    v["model"] = json!("opus");
    write_json(&user, &v);
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
    let home = tempfile::tempdir().unwrap();
    let home = home.path();
    for file in [
        root.join(".claude/settings.local.json"),
        home.join(".claude/settings.json"),
    ] {
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        std::fs::write(&file, "{\"permissions\": {\"allow\": \"Bash\"}}").unwrap();
        let out = run(&root, home, PLUGIN, &["--json", "permissions", "--write"]);
        assert_eq!(code(&out), 2, "{}", stdout(&out));
        let doc = json(&out);
        assert_eq!(doc["error"]["code"], "E_SETTINGS_LOCAL", "{doc}");
        assert!(
            doc["error"]["message"]
                .as_str()
                .is_some_and(|m| m.contains(file.to_str().unwrap())),
            "{doc}"
        );
        assert_eq!(
            std::fs::read_to_string(&file).unwrap(),
            "{\"permissions\": {\"allow\": \"Bash\"}}"
        );
        // next still answers, and says why.
        let next = ok(&root, home, PLUGIN, &["--json", "next"]);
        assert!(
            next["data"]["permissions"]["problem"]
                .as_str()
                .is_some_and(|p| p.contains("permissions.allow")),
            "{next}"
        );
        // Not JSON at all: the same, with the place of the syntax error.
        std::fs::write(&file, "{\"permissions\": ").unwrap();
        let out = run(&root, home, PLUGIN, &["--json", "permissions", "--write"]);
        assert_eq!(code(&out), 2, "{}", stdout(&out));
        assert_eq!(json(&out)["error"]["code"], "E_JSON");
        std::fs::remove_file(&file).unwrap();
    }
    // No home at all: nowhere to write the allow rules — said, nothing written.
    let out = Command::new(bin())
        .args(["--json", "permissions", "--write"])
        .current_dir(&root)
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .output()
        .unwrap();
    assert_eq!(code(&out), 2, "{}", stdout(&out));
    assert!(stdout(&out).contains("HOME"), "{}", stdout(&out));
}

/// A plugin installed from a marketplace lives in the client's cache under its version: the
/// read rule covers every version, so an update keeps it good. `--project` and `--dir` pick the
/// directory.
#[test]
fn a_cached_plugin_is_read_across_versions() {
    let (_t, root) = new_project();
    let home = tempfile::tempdir().unwrap();
    let cached = "/home/a/.claude/plugins/cache/novel-marketplace/novel/0.4.1";
    let elsewhere = tempfile::tempdir().unwrap();
    let w = ok(
        elsewhere.path(),
        home.path(),
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
        read_json(&home.path().join(".claude/settings.json"))["permissions"]["allow"].clone();
    assert_eq!(
        allow[1],
        "Read(//home/a/.claude/plugins/cache/novel-marketplace/novel/**)"
    );
    let other = elsewhere.path().join("另一本");
    let w = ok(
        elsewhere.path(),
        home.path(),
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

/// Issue 45 (measured with 2.1.197, interactive and headless): allow rules written into the user
/// settings during a session count a second or two later, in every folder, trusted or not — as
/// long as the user settings' folder was there when the client started. `next --json` says
/// whether they are in force.
#[test]
fn next_says_whether_the_rules_are_in_force_for_the_session() {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    let dir = tmp.path().join("book");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::create_dir_all(home.join(".claude")).unwrap();
    let standing = |v: &Value| v["data"]["permissions"].clone();

    // Outside a client nothing is known but what the file holds.
    let outside = ok(&dir, &home, PLUGIN, &["next", "--json"]);
    let p = standing(&outside);
    assert_eq!(p["in_force"], false, "{p}");
    assert_eq!(p["blocker"], "not_written", "{p}");
    assert_eq!(p["watched"], Value::Null, "{p}");

    // Written, in a folder nobody trusted: in force (the user settings count everywhere).
    ok(&dir, &home, PLUGIN, &["permissions", "--write", "--json"]);
    let p = standing(&in_client(&dir, &home, "", &["next", "--json"]));
    assert_eq!(p["session_dir"], dir.to_string_lossy().as_ref(), "{p}");
    if std::fs::metadata(home.join(".claude"))
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

    // A user settings folder made after the client started (two seconds into its life) is not
    // watched: the rules count from the next launch, and `advice` says how to go on.
    std::fs::remove_dir_all(home.join(".claude")).unwrap();
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
    assert!(
        p["advice"]
            .as_str()
            .is_some_and(|a| a.contains("claude --continue")),
        "{p}"
    );
}
