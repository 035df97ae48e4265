//! `novel lint`: the planted fixture chapter fails with every plant reported as
//! `path:line:col: rule: message`; the clean control passes; the default input is the staged
//! chapter; the project's blacklist, whitelist, forbidden words and thresholds are honoured.

use std::path::{Path, PathBuf};

use serde_json::json;

use crate::support::*;

/// `tests/fixtures/text/<name>` of the repository.
pub fn text_fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/fixtures/text")
        .join(name)
}

/// Writes a project-relative file, creating its directory.
pub fn write_text(root: &Path, rel: &str, text: &str) {
    let path = root.join(rel);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// Sets checkpoint fields of a project.
pub fn set_checkpoint(root: &Path, f: impl FnOnce(&mut serde_json::Value)) {
    let path = root.join(".checkpoint.json");
    let mut v = read_json(&path);
    f(&mut v);
    write_json(&path, &v);
}

#[test]
fn planted_chapter_fails_with_every_plant_located() {
    let (_t, root) = new_project();
    std::fs::copy(
        text_fixture("planted-cliches.md"),
        root.join("chapters/chapter-004.md"),
    )
    .unwrap();
    let out = novel(&root, &["lint", "--chapter", "4"]);
    assert_eq!(code(&out), 1, "{}{}", stdout(&out), stderr(&out));
    let text = stdout(&out);
    for want in [
        "chapters/chapter-004.md:3:1: blacklist/transitions[警告]: AI 套话「然而」",
        "chapters/chapter-004.md:4:9: blacklist/body_language[警告]: AI 套话「嘴角微微上扬」",
        "chapters/chapter-004.md:7:11: blacklist/descriptions[警告]: AI 套话「空气仿佛」",
        "chapters/chapter-004.md:9:14: blacklist/body_language[警告]: AI 套话「眼底闪过一丝」",
        "chapters/chapter-004.md:11:15: blacklist/body_language[警告]: AI 套话「骨节分明」",
        "chapters/chapter-004.md:10:2: pattern/not-but[警告]: ",
        "chapters/chapter-004.md:15:1: blacklist/summaries[警告]: AI 套话「或许,这就是」",
        "chapters/chapter-004.md:16:8: pattern/em-dash[警告]: ",
        "chapters/chapter-004.md:20:1: repetition/consecutive[警告]: 连续 3 句句首相同（句首「他们」×3）",
    ] {
        assert!(
            text.lines().any(|l| l.starts_with(want)),
            "missing {want:?} in\n{text}"
        );
    }
    // The chapter heading (line 1: 命运的齿轮), narration-only phrases inside quotes (lines 6
    // and 18) and 然而 mid-paragraph (line 13).
    for line in [":1:", ":6:", ":13:", ":18:"] {
        assert!(!text.contains(&format!("chapter-004.md{line}")), "{text}");
    }
    assert!(stderr(&out).contains("E_LINT"), "{}", stderr(&out));

    let doc = json(&novel(&root, &["--json", "lint", "--chapter", "4"]));
    assert_eq!(doc["ok"], false);
    assert_eq!(doc["command"], "lint");
    assert_eq!(doc["error"]["code"], "E_LINT");
    let findings = doc["data"]["findings"].as_array().unwrap();
    assert_eq!(findings.len(), 15, "{doc}");
    let first = &findings[0];
    let keys: Vec<&str> = first
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(
        keys,
        [
            "code", "severity", "file", "line", "col", "message", "hint", "excerpt"
        ],
        "{first}"
    );
    assert_eq!(first["file"], "chapters/chapter-004.md");
    let summary = &doc["data"]["files"][0]["summary"];
    assert_eq!(summary["blacklist"]["hits"], 9);
    assert_eq!(summary["pass"], false);
    // 他们 ×3 in a row: advice, not a violation.
    assert_eq!(summary["repetition"]["violations"], 0);
    assert_eq!(summary["repetition"]["advice"], 1);
    assert!(
        text.contains("句式重复 0 处（另有句首重复建议 1 处）"),
        "{text}"
    );
}

#[test]
fn clean_control_passes() {
    let out = novel(
        Path::new("/"),
        &["lint", text_fixture("clean-control.md").to_str().unwrap()],
    );
    assert_eq!(code(&out), 0, "{}{}", stdout(&out), stderr(&out));
    assert!(
        stdout(&out).contains("检查通过：1 个文件"),
        "{}",
        stdout(&out)
    );
    let doc = json(&novel(
        Path::new("/"),
        &[
            "--json",
            "lint",
            text_fixture("clean-control.md").to_str().unwrap(),
        ],
    ));
    assert_eq!(doc["data"]["findings"], json!([]));
    assert_eq!(doc["data"]["pass"], true);
    // Outside a project the shipped template is the blacklist.
    assert!(
        doc["data"]["blacklist_source"]
            .as_str()
            .unwrap()
            .contains("内置模板")
    );
}

#[test]
fn default_input_is_the_staged_chapter() {
    let (_t, root) = new_project();
    let out = novel(&root, &["--json", "lint"]);
    assert_eq!(code(&out), 2);
    assert_eq!(json(&out)["error"]["code"], "E_NO_CHAPTER");

    set_checkpoint(&root, |v| v["inflight_chapter"] = json!(3));
    let out = novel(&root, &["lint"]);
    assert_eq!(code(&out), 2, "{}", stderr(&out));
    assert!(
        stderr(&out).contains("staging/chapters/chapter-003.md"),
        "{}",
        stderr(&out)
    );

    write_text(
        &root,
        "staging/chapters/chapter-003.md",
        "# 第三章\n\n他嘴角微微上扬。\n",
    );
    let out = novel(&root, &["lint"]);
    assert_eq!(code(&out), 1);
    assert!(
        stdout(&out)
            .starts_with("staging/chapters/chapter-003.md:3:2: blacklist/body_language[警告]: "),
        "{}",
        stdout(&out)
    );
}

#[test]
fn all_lints_committed_chapters_in_order() {
    let (_t, root) = new_project();
    let clean = std::fs::read_to_string(text_fixture("clean-control.md")).unwrap();
    write_text(&root, "chapters/chapter-010.md", &clean);
    write_text(&root, "chapters/chapter-002.md", &clean);
    write_text(&root, "chapters/notes.md", "不是章节。");
    let doc = json(&novel(&root, &["--json", "lint", "--all"]));
    assert_eq!(doc["ok"], true, "{doc}");
    let paths: Vec<&str> = doc["data"]["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["path"].as_str().unwrap())
        .collect();
    assert_eq!(
        paths,
        ["chapters/chapter-002.md", "chapters/chapter-010.md"]
    );
    let out = novel(&root, &["lint", "--chapter", "7"]);
    assert_eq!(code(&out), 2);
    assert!(stderr(&out).contains("E_NO_CHAPTER"));
}

#[test]
fn project_blacklist_whitelist_forbidden_words_and_thresholds() {
    let (_t, root) = new_project();
    let path = root.join("ai-blacklist.json");
    let mut list = read_json(&path);
    list["entries"]
        .as_array_mut()
        .unwrap()
        .push(json!({"phrase": "灵气翻涌", "category": "descriptions"}));
    list["whitelist"] = json!(["不禁风"]);
    write_json(&path, &list);
    let profile = root.join("style-profile.json");
    let mut p = read_json(&profile);
    p["forbidden_words"] = json!(["恐怖如斯"]);
    write_json(&profile, &p);
    // Full-width letters before the hits: columns count characters, not bytes.
    write_text(
        &root,
        "chapters/chapter-001.md",
        "ＡＢＣ灵气翻涌。\n她弱不禁风。\n恐怖如斯。\n",
    );
    let doc = json(&novel(&root, &["--json", "lint", "--chapter", "1"]));
    let got: Vec<(u64, u64, &str)> = doc["data"]["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["line"].as_u64().unwrap(),
                f["col"].as_u64().unwrap(),
                f["code"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        got,
        [
            (1, 4, "blacklist/descriptions"),
            (3, 1, "blacklist/forbidden_words")
        ]
    );
    // A generous threshold lets the same chapter pass.
    let settings = root.join("novel.json");
    let mut s = read_json(&settings);
    s["lint"]["blacklist_per_1000"] = json!(1000);
    write_json(&settings, &s);
    let out = novel(&root, &["lint", "--chapter", "1"]);
    assert_eq!(code(&out), 0, "{}", stdout(&out));
}

#[test]
fn broken_pattern_regex_is_a_project_error() {
    let (_t, root) = new_project();
    let path = root.join("ai-blacklist.json");
    let mut list = read_json(&path);
    list["patterns"] = json!([{"id": "broken", "name": "坏规则", "regex": "(不是"}]);
    write_json(&path, &list);
    write_text(&root, "chapters/chapter-001.md", "正文。");
    let doc = json(&novel(&root, &["--json", "lint", "--chapter", "1"]));
    assert_eq!(doc["error"]["code"], "E_SCHEMA");
    assert!(doc["error"]["message"].as_str().unwrap().contains("broken"));
}
