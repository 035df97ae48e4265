//! `novel check names`: the planted name variants of the fixture chapter against the fixture
//! cast registered in a project; aliases are never findings; the clean control passes.

use std::path::Path;

use crate::support::*;
use crate::test_lint::{text_fixture, write_text};

fn project_with_cast() -> (tempfile::TempDir, std::path::PathBuf) {
    let (t, root) = new_project();
    let cast = text_fixture("cast");
    for entry in std::fs::read_dir(&cast).unwrap() {
        let path = entry.unwrap().path();
        std::fs::copy(
            &path,
            root.join("characters/active")
                .join(path.file_name().unwrap()),
        )
        .unwrap();
    }
    assert_eq!(
        code(&novel(&root, &["validate"])),
        0,
        "the cast fixtures are schema-valid"
    );
    (t, root)
}

fn copy_chapter(root: &Path, fixture: &str, n: u32) {
    let text = std::fs::read_to_string(text_fixture(fixture)).unwrap();
    write_text(root, &format!("chapters/chapter-{n:03}.md"), &text);
}

#[test]
fn planted_name_variants_are_found_with_evidence() {
    let (_t, root) = project_with_cast();
    copy_chapter(&root, "names-planted.md", 5);
    let out = novel(&root, &["check", "names", "--chapter", "5"]);
    assert_eq!(code(&out), 1, "{}{}", stdout(&out), stderr(&out));
    let text = stdout(&out);
    for want in [
        "chapters/chapter-005.md:6:1: names/near-miss: 「林峰」疑似「林枫」的同音误写",
        "chapters/chapter-005.md:8:10: names/near-miss: 「苏碗」疑似「苏婉」的同音误写",
        "chapters/chapter-005.md:9:11: names/near-miss: 「陆晨」疑似「陆尘」的同音误写",
        "chapters/chapter-005.md:12:9: names/near-miss: 「肖炎」疑似「萧炎」的同音误写",
        "chapters/chapter-005.md:14:2: names/same-surname: 「林凡」与「林枫」同姓不同名（2 次：第 14、15 行）",
        "chapters/chapter-005.md:16:1: names/unregistered: 未登记的人名「赵铁柱」（3 次：第 16、17、18 行）",
    ] {
        assert!(
            text.lines().any(|l| l.starts_with(want)),
            "missing {want:?} in\n{text}"
        );
    }
    assert_eq!(text.lines().count(), 6, "{text}");

    let doc = json(&novel(
        &root,
        &["--json", "check", "names", "--chapters", "1..9"],
    ));
    assert_eq!(doc["command"], "check names");
    assert_eq!(doc["error"]["code"], "E_NAMES");
    let findings = doc["data"]["findings"].as_array().unwrap();
    assert_eq!(findings.len(), 6);
    let first = &findings[0];
    assert_eq!(
        (
            first["kind"].as_str(),
            first["of"].as_str(),
            first["entity"].as_str()
        ),
        (Some("near_miss"), Some("林枫"), Some("lin-feng"))
    );
    assert!(
        first["evidence"][0]["excerpt"]
            .as_str()
            .unwrap()
            .contains("林峰点点头")
    );
}

#[test]
fn registering_an_alias_clears_the_finding() {
    let (_t, root) = project_with_cast();
    copy_chapter(&root, "names-planted.md", 5);
    let path = root.join("characters/active/lin-feng.json");
    let mut c = read_json(&path);
    c["aliases"].as_array_mut().unwrap().push("林峰".into());
    write_json(&path, &c);
    let doc = json(&novel(
        &root,
        &["--json", "check", "names", "--chapter", "5"],
    ));
    let names: Vec<&str> = doc["data"]["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["name"].as_str().unwrap())
        .collect();
    assert!(!names.contains(&"林峰"), "{names:?}");
    assert_eq!(names.len(), 5);
}

#[test]
fn clean_control_passes() {
    let (_t, root) = project_with_cast();
    copy_chapter(&root, "clean-control.md", 3);
    let out = novel(&root, &["check", "names", "--all"]);
    assert_eq!(code(&out), 0, "{}", stdout(&out));
    assert!(stdout(&out).contains("人名检查通过"));
    let out = novel(&root, &["--json", "check", "names", "--chapters", "9..1"]);
    assert_eq!(code(&out), 2);
}

/// Two storylines: `main_arc` (陈默, with 陆尘 in its memory) and `jiangwang` (POV 林枫,
/// faction 青云门, 苏婉 in its memory); chapter 3 belongs to `main_arc` by its contract.
fn two_lines(chapter_text: &str) -> (tempfile::TempDir, std::path::PathBuf) {
    let (t, root) = project_with_cast();
    write_json(
        &root.join("storylines/storylines.json"),
        &serde_json::json!({
            "storylines": [
                {"id": "main_arc", "name": "主线", "type": "main_arc", "scope": "novel",
                 "pov_characters": ["chen-mo"], "affiliated_factions": [], "status": "active"},
                {"id": "jiangwang", "name": "江湖线", "type": "faction_conflict", "scope": "novel",
                 "pov_characters": ["lin-feng"], "affiliated_factions": ["青云门"], "status": "active"}
            ],
            "relationships": []
        }),
    );
    write_text(
        &root,
        "storylines/main_arc/memory.md",
        "陈默在查父亲的旧账，陆尘在帮他。\n",
    );
    write_text(
        &root,
        "storylines/jiangwang/memory.md",
        "林枫拜入青云门，苏婉是他师姐。\n",
    );
    write_json(
        &root.join("volumes/vol-01/chapter-contracts/chapter-003.json"),
        &serde_json::json!({"chapter": 3, "storyline_id": "main_arc"}),
    );
    write_text(&root, "chapters/chapter-003.md", chapter_text);
    assert_eq!(
        code(&novel(&root, &["validate"])),
        0,
        "{}",
        stdout(&novel(&root, &["validate"]))
    );
    (t, root)
}

#[test]
fn leak_risk_is_graded_with_evidence() {
    // (text, leak_risk, exit code)
    let cases = [
        ("陈默推开门。陆尘跟在后面。\n", "none", 0),
        ("“听说苏婉回来了。”陆尘说。\n", "low", 0),
        ("陈默推开门，枫哥站在院子里。\n", "high", 1),
        ("他认出那是青云门的人，苏婉也在。\n", "high", 1),
    ];
    for (text, risk, exit) in cases {
        let (_t, root) = two_lines(text);
        let out = novel(&root, &["--json", "check", "leak", "--chapter", "3"]);
        assert_eq!(code(&out), exit, "{text}: {}", stdout(&out));
        let doc = json(&out);
        assert_eq!(doc["command"], "check leak");
        assert_eq!(doc["data"]["leak_risk"], risk, "{text}: {doc}");
        assert_eq!(doc["data"]["storyline_id"], "main_arc");
    }
    let (_t, root) = two_lines("陈默推开门，枫哥站在院子里。\n");
    let out = novel(&root, &["check", "leak", "--chapter", "3"]);
    assert!(
        stdout(&out).contains(
            "chapters/chapter-003.md:1:7: leak/pov-character: 「枫哥」是故事线 jiangwang 的POV 角色"
        ),
        "{}",
        stdout(&out)
    );
}

#[test]
fn convergence_chapters_and_shared_characters_are_not_leaks() {
    let (_t, root) = two_lines("陈默推开门，林枫站在院子里。\n");
    write_json(
        &root.join("volumes/vol-01/storyline-schedule.json"),
        &serde_json::json!({
            "volume": 1,
            "active_storylines": [
                {"storyline_id": "main_arc", "volume_role": "primary"},
                {"storyline_id": "jiangwang", "volume_role": "secondary"}
            ],
            "convergence_events": [
                {"chapter_range": [3, 4], "involved_storylines": ["main_arc", "jiangwang"]}
            ]
        }),
    );
    let doc = json(&novel(
        &root,
        &["--json", "check", "leak", "--chapter", "3"],
    ));
    assert_eq!(doc["data"]["leak_risk"], "none", "{doc}");
    assert_eq!(
        doc["data"]["converging_with"],
        serde_json::json!(["jiangwang"])
    );

    let (_t, root) = two_lines("陈默推开门，林枫站在院子里。\n");
    let path = root.join("storylines/storylines.json");
    let mut s = read_json(&path);
    s["relationships"] = serde_json::json!([{"from": "main_arc", "to": "jiangwang", "type": "parallel",
        "bridges": {"shared_characters": ["lin-feng"]}}]);
    write_json(&path, &s);
    let doc = json(&novel(
        &root,
        &["--json", "check", "leak", "--chapter", "3"],
    ));
    assert_eq!(doc["data"]["leak_risk"], "none", "{doc}");
}

#[test]
fn leak_needs_a_storyline() {
    let (_t, root) = project_with_cast();
    write_text(&root, "chapters/chapter-002.md", "正文。\n");
    let doc = json(&novel(
        &root,
        &["--json", "check", "leak", "--chapter", "2"],
    ));
    assert_eq!(doc["error"]["code"], "E_NO_STORYLINE");
    let doc = json(&novel(
        &root,
        &[
            "--json",
            "check",
            "leak",
            "--chapter",
            "2",
            "--storyline",
            "main_arc",
        ],
    ));
    assert_eq!(doc["data"]["leak_risk"], "none");
}
