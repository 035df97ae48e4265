//! `novel init`: the full PRD §9.1 layout, valid from the start, never overwriting anything.

use crate::support::*;

#[test]
fn init_creates_the_layout_and_validates() {
    let (_tmp, root) = new_project();
    for dir in [
        "research",
        "prompts",
        "world",
        "characters/active",
        "characters/retired",
        "storylines",
        "volumes/vol-01/chapter-contracts",
        "chapters",
        "staging/chapters",
        "staging/summaries",
        "staging/state",
        "staging/storylines",
        "staging/evaluations",
        "summaries",
        "state/history",
        "foreshadowing",
        "evaluations",
        "logs",
    ] {
        assert!(root.join(dir).is_dir(), "missing dir {dir}");
    }
    for file in [
        ".checkpoint.json",
        "novel.json",
        "brief.md",
        "style-profile.json",
        "ai-blacklist.json",
        "world/rules.json",
        "world/geography.md",
        "world/history.md",
        "world/rules.md",
        "world/changelog.md",
        "characters/relationships.json",
        "characters/changelog.md",
        "storylines/storylines.json",
        "storylines/storyline-spec.json",
        "storylines/main_arc/memory.md",
        "state/current-state.json",
        "state/changelog.jsonl",
        "foreshadowing/global.json",
    ] {
        assert!(root.join(file).is_file(), "missing file {file}");
    }
    let cp = read_json(&root.join(".checkpoint.json"));
    assert_eq!(cp["orchestrator_state"], "QUICK_START");
    assert_eq!(cp["last_completed_chapter"], 0);
    assert!(cp["pipeline_stage"].is_null() && cp["inflight_chapter"].is_null());
    assert_eq!(
        read_json(&root.join("state/current-state.json"))["state_version"],
        0
    );
    let lines = read_json(&root.join("storylines/storylines.json"));
    assert_eq!(lines["storylines"].as_array().unwrap().len(), 1);
    assert_eq!(lines["storylines"][0]["type"], "main_arc");
    let spec = read_json(&root.join("storylines/storyline-spec.json"));
    let ids: Vec<&str> = spec["rules"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["LS-001", "LS-002", "LS-003", "LS-004", "LS-005"]);
    let settings = read_json(&root.join("novel.json"));
    assert_eq!(settings["title"], "青云志异");
    assert_eq!(settings["gate"]["pass"], 4.0);
    let brief = std::fs::read_to_string(root.join("brief.md")).unwrap();
    assert!(
        brief.contains("青云志异") && brief.contains("玄幻") && !brief.contains("{{"),
        "{brief}"
    );
    // The templates are copies: the project never points back at the plugin.
    let blacklist = std::fs::read_to_string(root.join("ai-blacklist.json")).unwrap();
    assert_eq!(
        blacklist,
        include_str!("../../../templates/ai-blacklist.json")
    );

    let out = novel(&root, &["validate"]);
    assert_eq!(code(&out), 0, "{}{}", stdout(&out), stderr(&out));
    let doc = json(&novel(&root, &["--json", "validate"]));
    assert_eq!(doc["ok"], true);
    assert_eq!(doc["data"]["errors"], 0);
    assert_eq!(doc["data"]["warnings"], 0, "{doc}");
    // No temp directory left beside the project.
    let leftovers: Vec<_> = std::fs::read_dir(root.parent().unwrap())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.starts_with(".novel-init"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}

#[test]
fn init_refuses_an_existing_project() {
    let (tmp, root) = new_project();
    let before = std::fs::read_to_string(root.join(".checkpoint.json")).unwrap();
    let out = novel(tmp.path(), &["init", "book"]);
    assert_eq!(code(&out), 2);
    assert!(
        stderr(&out).contains("E_PROJECT_EXISTS"),
        "{}",
        stderr(&out)
    );
    assert!(stderr(&out).contains("拒绝覆盖"), "{}", stderr(&out));
    assert_eq!(
        std::fs::read_to_string(root.join(".checkpoint.json")).unwrap(),
        before
    );
    // Nor inside one.
    let out = novel(&root, &["init", "chapters/sub"]);
    assert_eq!(code(&out), 2, "{}", stderr(&out));
    assert!(!root.join("chapters/sub").exists());
}

#[test]
fn init_never_overwrites_an_authors_file() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join("brief.md"), "我自己的纲领").unwrap();
    let out = novel(tmp.path(), &["--json", "init", "."]);
    assert_eq!(code(&out), 2);
    let doc = json(&out);
    assert_eq!(doc["error"]["code"], "E_PROJECT_EXISTS");
    assert!(
        doc["error"]["message"]
            .as_str()
            .unwrap()
            .contains("brief.md")
    );
    assert_eq!(
        std::fs::read_to_string(tmp.path().join("brief.md")).unwrap(),
        "我自己的纲领"
    );
    assert!(!tmp.path().join(".checkpoint.json").exists());
}

/// The files of the folder (names, and each file's bytes), to compare before and after.
fn tree(dir: &std::path::Path) -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    for e in walk(dir) {
        let rel = e.strip_prefix(dir).unwrap().to_string_lossy().into_owned();
        out.push((rel, std::fs::read(&e).unwrap_or_default()));
    }
    out.sort();
    out
}

fn walk(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out = vec![dir.to_path_buf()];
    if dir.is_dir() {
        for e in std::fs::read_dir(dir).unwrap() {
            out.extend(walk(&e.unwrap().path()));
        }
    }
    out
}

#[test]
fn init_into_a_folder_with_the_authors_own_files_asks_for_a_subfolder() {
    let tmp = tempfile::tempdir().unwrap();
    let mine = tmp.path().join("我的文件夹");
    std::fs::create_dir(&mine).unwrap();
    std::fs::write(mine.join("样章.md"), "第一章 样章").unwrap();
    std::fs::create_dir(mine.join("照片")).unwrap();
    let before = tree(&mine);
    for args in [vec!["init", "--title", "样书"], vec!["init", "."]] {
        let out = novel(&mine, &args);
        assert_eq!(code(&out), 2, "{args:?}: {}", stderr(&out));
        let err = stderr(&out);
        assert!(err.contains("E_FOLDER_NOT_EMPTY"), "{err}");
        assert!(err.contains("样章.md") && err.contains("照片"), "{err}");
        assert!(
            err.contains("子目录") && err.contains("novel init"),
            "{err}"
        );
        assert_eq!(tree(&mine), before, "{args:?} changed the author's folder");
    }
    let out = novel(&mine, &["--json", "init"]);
    assert_eq!(json(&out)["error"]["code"], "E_FOLDER_NOT_EMPTY");
    // The subfolder the hint names works, and leaves the author's files where they were.
    let out = novel(&mine, &["init", "青云志异", "--title", "青云志异"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert!(mine.join("青云志异/.checkpoint.json").is_file());
    assert!(!mine.join(".checkpoint.json").exists());
    assert_eq!(
        std::fs::read_to_string(mine.join("样章.md")).unwrap(),
        "第一章 样章"
    );
    let leftovers: Vec<_> = std::fs::read_dir(&mine)
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().starts_with(".novel-init"))
        .collect();
    assert!(leftovers.is_empty());
}

#[test]
fn init_dot_fills_the_folder_the_author_stands_in() {
    use std::os::unix::fs::MetadataExt;
    let tmp = tempfile::tempdir().unwrap();
    let here = tmp.path().join("新书");
    std::fs::create_dir(&here).unwrap();
    // What `novel permissions --write` and git leave before the book exists does not count.
    std::fs::create_dir_all(here.join(".claude")).unwrap();
    std::fs::write(here.join(".claude/settings.local.json"), "{}").unwrap();
    std::fs::create_dir(here.join(".git")).unwrap();
    let inode = std::fs::metadata(&here).unwrap().ino();
    // The author's shell stands in the folder: after `novel init .` it still sees the book.
    let out = std::process::Command::new("/bin/sh")
        .args(["-c", "\"$0\" init . --title 新书 >/dev/null && ls -A"])
        .arg(bin())
        .current_dir(&here)
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .env("LANG", "C.UTF-8")
        .output()
        .unwrap();
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let listed = stdout(&out);
    assert!(listed.lines().any(|l| l == ".checkpoint.json"), "{listed}");
    assert!(listed.lines().any(|l| l == "chapters"), "{listed}");
    assert_eq!(
        std::fs::metadata(&here).unwrap().ino(),
        inode,
        "the folder was replaced"
    );
    assert_eq!(
        std::fs::read_to_string(here.join(".claude/settings.local.json")).unwrap(),
        "{}"
    );
    assert_eq!(code(&novel(&here, &["validate"])), 0);
}

#[test]
fn init_with_a_style_preset() {
    let tmp = tempfile::tempdir().unwrap();
    let out = novel(tmp.path(), &["init", "a", "--style", "rexue-shaonian"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let profile = read_json(&tmp.path().join("a/style-profile.json"));
    assert_eq!(profile["source_type"], "template");
    assert_eq!(profile["name"], "热血少年");
    assert_eq!(code(&novel(&tmp.path().join("a"), &["validate"])), 0);
    let out = novel(tmp.path(), &["--json", "init", "b", "--style", "赛博朋克"]);
    assert_eq!(code(&out), 2);
    let doc = json(&out);
    assert!(
        doc["error"]["message"]
            .as_str()
            .unwrap()
            .contains("qingsong-youmo"),
        "{doc}"
    );
    assert!(
        !tmp.path().join("b").exists(),
        "nothing created on a bad preset"
    );
}

#[test]
fn demo_writes_a_valid_sample_book_and_shows_the_tools_on_it() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("示例");
    let out = novel(tmp.path(), &["demo", dir.to_str().unwrap()]);
    assert_eq!(code(&out), 0, "{}{}", stdout(&out), stderr(&out));
    let said = stdout(&out);
    for want in [
        "第1卷 第3/30章 总723字",
        "继续快速起步：确认并进入卷规划（推荐）",
        "chapters/chapter-002.md:5:45: blacklist/",
        "「林晚州」疑似「林晚舟」",
        "<context agent=\"chapter-writer\" chapter=\"4\"",
    ] {
        assert!(said.contains(want), "missing {want:?} in:\n{said}");
    }
    // The book itself is a sound project: it validates and its changelog rebuilds its state.
    assert_eq!(code(&novel(&dir, &["validate"])), 0);
    assert_eq!(code(&novel(&dir, &["state", "rebuild"])), 0);
    // A directory in use is never written over.
    let again = novel(tmp.path(), &["--json", "demo", dir.to_str().unwrap()]);
    assert_eq!(code(&again), 2);
    assert_eq!(json(&again)["error"]["code"], "E_PROJECT_EXISTS");
}
