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
