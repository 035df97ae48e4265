//! `novel retire check|apply` on the fixture novel `tests/fixtures/spec/project`.

use std::path::{Path, PathBuf};

use crate::support::*;

pub fn fixture_copy(overlays: &[&str]) -> (tempfile::TempDir, PathBuf) {
    fn copy_dir(from: &Path, to: &Path) {
        std::fs::create_dir_all(to).unwrap();
        for e in std::fs::read_dir(from).unwrap() {
            let e = e.unwrap();
            let target = to.join(e.file_name());
            if e.path().is_dir() {
                copy_dir(&e.path(), &target);
            } else {
                std::fs::copy(e.path(), &target).unwrap();
            }
        }
    }
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/spec");
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("book");
    copy_dir(&fixtures.join("project"), &root);
    for o in overlays {
        copy_dir(&fixtures.join("overlays").join(o), &root);
    }
    (tmp, root)
}

#[test]
fn retire_check_blocked_by_each_protection_with_evidence() {
    let (_t, root) = fixture_copy(&[]);
    for (slug, protection, file, pointer) in [
        (
            "zhao-qian",
            "A",
            "foreshadowing/global.json",
            "/foreshadowing/0/history/1/detail",
        ),
        (
            "qian-lao",
            "B",
            "storylines/storylines.json",
            "/storylines/2/pov_characters/0",
        ),
        (
            "sun-li",
            "C",
            "volumes/vol-02/storyline-schedule.json",
            "/convergence_events/1/trigger",
        ),
    ] {
        let out = novel(&root, &["--json", "retire", "check", slug]);
        assert_eq!(code(&out), 1, "{slug}: {}", stdout(&out));
        let doc = json(&out);
        assert_eq!(doc["ok"], false);
        assert_eq!(doc["error"]["code"], "E_RETIRE_BLOCKED");
        let b = &doc["data"]["blocks"][0];
        assert_eq!(b["protection"], protection, "{slug}");
        assert_eq!(b["evidence"]["file"], file, "{slug}");
        assert_eq!(b["evidence"]["pointer"], pointer, "{slug}");
    }
}

#[test]
fn retire_check_human_output_names_the_protection() {
    let (_t, root) = fixture_copy(&[]);
    let out = novel(&root, &["retire", "check", "su-wan"]);
    assert_eq!(code(&out), 1);
    let text = stdout(&out);
    assert!(text.contains("保护条件 A"), "{text}");
    assert!(text.contains("保守"), "{text}");
    assert!(stderr(&out).contains("E_RETIRE_BLOCKED"));
}

#[test]
fn retire_check_conservative_when_storylines_do_not_parse() {
    let (_t, root) = fixture_copy(&["broken-storylines"]);
    let out = novel(&root, &["--json", "retire", "check", "li-si"]);
    assert_eq!(code(&out), 1);
    let doc = json(&out);
    assert_eq!(doc["data"]["blocks"][0]["protection"], "B");
    assert_eq!(doc["data"]["blocks"][0]["certain"], false);
}

#[test]
fn retire_apply_then_validate_and_rebuild_agree() {
    let (_t, root) = fixture_copy(&[]);
    // The author wrote some optional keys as null: the rewrite keeps them.
    let rels = root.join("characters/relationships.json");
    let mut r = read_json(&rels);
    r["relationships"][0]["description"] = serde_json::Value::Null;
    r["relationships"][1]["since_chapter"] = serde_json::Value::Null;
    write_json(&rels, &r);
    let out = novel(&root, &["--json", "retire", "check", "li-si"]);
    assert_eq!(code(&out), 0, "{}", stdout(&out));
    let out = novel(&root, &["--json", "retire", "apply", "li-si"]);
    assert_eq!(code(&out), 0, "{}", stdout(&out));
    assert_eq!(json(&out)["data"]["state_version"], 3);
    assert!(root.join("characters/retired/li-si.json").exists());
    assert!(!root.join("characters/active/li-si.json").exists());
    let out = novel(&root, &["validate"]);
    assert_eq!(code(&out), 0, "{}", stdout(&out));
    let out = novel(&root, &["state", "rebuild"]);
    assert_eq!(code(&out), 0, "{}", stdout(&out));
    let state = read_json(&root.join("state/current-state.json"));
    assert!(state["characters"].get("li-si").is_none());
    let r = read_json(&rels);
    assert_eq!(r["relationships"][0]["status"], "ended", "{r}");
    assert!(r["relationships"][0]["description"].is_null(), "{r}");
    assert!(
        r["relationships"][0]
            .as_object()
            .unwrap()
            .contains_key("description"),
        "{r}"
    );
    assert!(
        r["relationships"][1]
            .as_object()
            .unwrap()
            .contains_key("since_chapter"),
        "{r}"
    );
}

#[test]
fn retire_apply_blocked_changes_nothing_and_unknown_slug_is_usage() {
    let (_t, root) = fixture_copy(&[]);
    let out = novel(&root, &["retire", "apply", "sun-li"]);
    assert_eq!(code(&out), 1);
    assert!(root.join("characters/active/sun-li.json").exists());
    let out = novel(&root, &["--json", "retire", "check", "nobody"]);
    assert_eq!(code(&out), 2);
    assert_eq!(json(&out)["error"]["code"], "E_UNKNOWN_CHARACTER");
}

fn set_inflight(root: &Path, chapter: u32) {
    let mut cp = read_json(&root.join(".checkpoint.json"));
    cp["inflight_chapter"] = serde_json::json!(chapter);
    cp["pipeline_stage"] = serde_json::json!("drafting");
    write_json(&root.join(".checkpoint.json"), &cp);
}

#[test]
fn retire_apply_refuses_while_a_chapter_is_in_flight() {
    let (_t, root) = fixture_copy(&[]);
    set_inflight(&root, 34);
    let state_before = std::fs::read_to_string(root.join("state/current-state.json")).unwrap();
    let out = novel(&root, &["retire", "apply", "li-si"]);
    assert_eq!(code(&out), 3, "{}", stdout(&out));
    let err = stderr(&out);
    assert!(err.contains("E_INFLIGHT"), "{err}");
    assert!(err.contains("第 34 章正在写作流程中"), "{err}");
    assert!(root.join("characters/active/li-si.json").exists());
    assert_eq!(
        std::fs::read_to_string(root.join("state/current-state.json")).unwrap(),
        state_before
    );
    // The check alone is still allowed (it changes nothing).
    assert_eq!(code(&novel(&root, &["retire", "check", "li-si"])), 0);
    let out = novel(&root, &["--json", "lock", "status"]);
    assert_eq!(json(&out)["data"]["state"], "free", "{}", stdout(&out));
}

#[test]
fn retire_apply_refuses_while_someone_else_holds_the_lock() {
    let (_t, root) = fixture_copy(&[]);
    // Another live session holds the lock.
    let other = Alive::new();
    let pid = other.pid().to_string();
    let out = novel(
        &root,
        &[
            "--json",
            "lock",
            "acquire",
            "--chapter",
            "34",
            "--owner-pid",
            &pid,
        ],
    );
    assert_eq!(code(&out), 0, "{}", stdout(&out));
    let out = novel(&root, &["--json", "retire", "apply", "li-si"]);
    assert_eq!(code(&out), 3, "{}", stdout(&out));
    let doc = json(&out);
    assert_eq!(doc["error"]["code"], "E_LOCKED");
    let message = doc["error"]["message"].as_str().unwrap();
    assert!(message.contains(&format!("进程 {pid}")), "{message}");
    assert!(root.join("characters/active/li-si.json").exists());
}

#[test]
fn retirement_shows_from_the_next_chapter_in_state_at_and_history() {
    let (_t, root) = fixture_copy(&[]);
    let out = novel(&root, &["retire", "apply", "li-si"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    // 33 is the last completed chapter: it was written with 李四 in the state.
    let out = novel(
        &root,
        &[
            "--json",
            "state",
            "at",
            "--chapter",
            "33",
            "--entity",
            "li-si",
        ],
    );
    assert_eq!(code(&out), 0, "{}", stdout(&out));
    let out = novel(
        &root,
        &[
            "--json",
            "state",
            "at",
            "--chapter",
            "34",
            "--entity",
            "li-si",
        ],
    );
    assert_eq!(code(&out), 1, "{}", stdout(&out));
    assert_eq!(json(&out)["error"]["code"], "E_NO_ENTITY");
    let out = novel(&root, &["--json", "state", "history", "--entity", "li-si"]);
    let changes = json(&out)["data"]["changes"].clone();
    let last = changes.as_array().unwrap().last().unwrap().clone();
    assert_eq!(last["chapter"], 34, "{changes}");
    assert_eq!(last["source"], "retire");
    // `state at` the next chapter and a full rebuild agree with the file on disk.
    let at_34 = json(&novel(&root, &["--json", "state", "at", "--chapter", "34"]));
    let on_disk = read_json(&root.join("state/current-state.json"));
    assert_eq!(at_34["data"]["state"], on_disk);
    let out = novel(&root, &["state", "rebuild"]);
    assert_eq!(code(&out), 0, "{}{}", stdout(&out), stderr(&out));
    let out = novel(&root, &["validate"]);
    assert_eq!(code(&out), 0, "{}", stdout(&out));
}

#[test]
fn retire_apply_killed_mid_commit_keeps_the_lock_until_recover() {
    let (_t, root) = fixture_copy(&[]);
    // Exit right after the second journal step: the lock must still be held (by the dead
    // process), so no chapter can begin until the retirement is rolled forward.
    let out = crate::test_spec::novel_env(
        &root,
        &["retire", "apply", "li-si"],
        &[("NOVEL_FAILPOINT", "commit:2")],
    );
    assert_eq!(code(&out), 99, "{}{}", stdout(&out), stderr(&out));
    assert!(root.join(".novel.lock").exists());
    // The journal's first line is its JSON header; the files' contents follow it.
    let bytes = std::fs::read(root.join(".novel-commit-journal.json")).unwrap();
    let header = bytes.split(|b| *b == b'\n').next().unwrap();
    let journal: serde_json::Value = serde_json::from_slice(header).unwrap();
    assert!(!journal["token"].as_str().unwrap().is_empty());
    assert_eq!(journal["retiring"], "li-si");
    let out = novel(&root, &["chapter", "recover"]);
    assert_eq!(code(&out), 0, "{}{}", stdout(&out), stderr(&out));
    assert!(
        stdout(&out).contains("补完了中断的角色 li-si 的退场"),
        "{}",
        stdout(&out)
    );
    assert!(!root.join(".novel.lock").exists());
    assert!(root.join("characters/retired/li-si.json").exists());
    assert!(!root.join("characters/active/li-si.json").exists());
    let out = novel(&root, &["state", "rebuild"]);
    assert_eq!(code(&out), 0, "{}{}", stdout(&out), stderr(&out));
}
