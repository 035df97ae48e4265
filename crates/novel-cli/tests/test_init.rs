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

#[test]
fn init_into_a_folder_with_other_files_keeps_them() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join("样章.md"), "第一章 样章").unwrap();
    let out = novel(tmp.path(), &["init", "--title", "样书"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(
        std::fs::read_to_string(tmp.path().join("样章.md")).unwrap(),
        "第一章 样章"
    );
    assert_eq!(code(&novel(tmp.path(), &["validate"])), 0);
    let leftovers: Vec<_> = std::fs::read_dir(tmp.path().parent().unwrap())
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().starts_with(".novel-init"))
        .collect();
    assert!(leftovers.is_empty());
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
