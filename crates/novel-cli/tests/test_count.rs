//! `novel count`: 字数 per file and in total by the documented rule, verdicts against the
//! target range of `novel.json`, and `--check`.

use serde_json::json;

use crate::support::*;
use crate::test_lint::{text_fixture, write_text};

/// A chapter of exactly `n` 字: a title, then lines of Han characters and full-width commas.
fn chapter_of(n: usize) -> String {
    let unit = "雨下了一整夜，";
    let body: String = unit.chars().cycle().take(n).collect();
    // Markdown, whitespace and a Latin word make no difference beyond the documented rule.
    format!("---\nchapter: 1\n---\n# 第一章 夜雨\n\n　　{body}\n\n**\n")
}

#[test]
fn counts_by_the_platform_rule_and_reports_verdicts() {
    let (_t, root) = new_project();
    write_text(&root, "chapters/chapter-001.md", &chapter_of(2499));
    write_text(&root, "chapters/chapter-002.md", &chapter_of(2500));
    write_text(&root, "chapters/chapter-003.md", &chapter_of(3501));
    let doc = json(&novel(&root, &["--json", "count", "--all"]));
    assert_eq!(doc["ok"], true, "{doc}");
    let files = doc["data"]["files"].as_array().unwrap();
    let got: Vec<(u64, &str)> = files
        .iter()
        .map(|f| (f["chars"].as_u64().unwrap(), f["verdict"].as_str().unwrap()))
        .collect();
    assert_eq!(got, [(2499, "short"), (2500, "within"), (3501, "long")]);
    assert_eq!(files[0]["heading_chars"], 5);
    assert_eq!(doc["data"]["total"], 2499 + 2500 + 3501);
    assert_eq!(doc["data"]["target"], json!({"min": 2500, "max": 3500}));

    let out = novel(&root, &["count", "--chapter", "2"]);
    assert_eq!(code(&out), 0);
    assert_eq!(
        stdout(&out),
        "chapters/chapter-002.md：2500 字（达标，目标 2500–3500）\n"
    );
    // --check fails when a chapter is outside the range.
    let out = novel(&root, &["count", "--all", "--check"]);
    assert_eq!(code(&out), 1);
    assert!(stderr(&out).contains("E_LENGTH"));
    assert!(
        stdout(&out).contains("合计：3 个文件，8500 字"),
        "{}",
        stdout(&out)
    );
}

#[test]
fn target_range_comes_from_settings() {
    let (_t, root) = new_project();
    let settings = root.join("novel.json");
    let mut s = read_json(&settings);
    s["chapter_length"] = json!({"min": 2000, "max": 2400});
    write_json(&settings, &s);
    write_text(&root, "chapters/chapter-001.md", &chapter_of(2499));
    let doc = json(&novel(
        &root,
        &["--json", "count", "--chapter", "1", "--check"],
    ));
    assert_eq!(doc["error"]["code"], "E_LENGTH");
    assert_eq!(doc["data"]["files"][0]["verdict"], "long");
}

#[test]
fn fixture_count_and_parts() {
    let out = novel(
        std::path::Path::new("/"),
        &[
            "--json",
            "count",
            text_fixture("planted-cliches.md").to_str().unwrap(),
        ],
    );
    let f = &json(&out)["data"]["files"][0];
    // 字数 = 汉字 + 全角标点 (the fixture has no Latin words or numbers).
    assert_eq!(
        f["chars"].as_u64().unwrap(),
        f["han"].as_u64().unwrap() + f["punctuation"].as_u64().unwrap()
    );
    assert_eq!(f["heading_chars"], 8, "第四章 命运的齿轮");
    assert!(f["chars"].as_u64().unwrap() > 300);
}

#[test]
fn missing_file_is_a_usage_error() {
    let out = novel(
        std::path::Path::new("/"),
        &["--json", "count", "/nonexistent/第一章.md"],
    );
    assert_eq!(code(&out), 2);
    assert_eq!(json(&out)["error"]["code"], "E_IO");
}

#[test]
fn an_opening_scene_break_is_not_front_matter() {
    let (_t, root) = new_project();
    crate::test_lint::write_text(
        &root,
        "chapters/chapter-001.md",
        "---\n雨停了。\n---\n天亮了。\n",
    );
    let doc = json(&novel(&root, &["--json", "count", "--chapter", "1"]));
    assert_eq!(doc["data"]["files"][0]["chars"], 8, "{doc}");
    crate::test_lint::write_text(
        &root,
        "chapters/chapter-001.md",
        "---\nchapter: 1\n---\n天亮了。\n",
    );
    let doc = json(&novel(&root, &["--json", "count", "--chapter", "1"]));
    assert_eq!(doc["data"]["files"][0]["chars"], 4, "{doc}");
}
