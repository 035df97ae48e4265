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
