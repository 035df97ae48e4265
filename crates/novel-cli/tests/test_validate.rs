//! `novel validate`: corrupt one file of a fresh project at a time and the report names
//! that file and pointer (exit 1); a BOM file passes; bad JSON gets line and column.

use std::path::Path;

use serde_json::json;

use crate::support::*;

fn expect_error(root: &Path, file: &str, pointer: &str) {
    let out = novel(root, &["validate"]);
    let text = stdout(&out);
    assert_eq!(code(&out), 1, "{text}{}", stderr(&out));
    let line = if pointer.is_empty() {
        format!("{file}: ")
    } else {
        format!("{file}: {pointer}: ")
    };
    assert!(
        text.lines().any(|l| l.starts_with(&line)),
        "want a line starting {line:?} in:\n{text}"
    );
    let doc = json(&novel(root, &["--json", "validate"]));
    assert_eq!(doc["ok"], false);
    assert_eq!(doc["error"]["code"], "E_VALIDATION");
    let findings = doc["data"]["findings"].as_array().unwrap();
    assert!(
        findings.iter().any(|f| f["file"] == file
            && f["pointer"].as_str().unwrap_or_default() == pointer
            && f["severity"] == "error"),
        "{doc}"
    );
}

fn edit(root: &Path, file: &str, f: impl FnOnce(&mut serde_json::Value)) {
    let path = root.join(file);
    let mut v = read_json(&path);
    f(&mut v);
    write_json(&path, &v);
}

#[test]
fn wrong_type_is_reported_with_pointer() {
    let (_t, root) = new_project();
    edit(&root, ".checkpoint.json", |v| {
        v["last_completed_chapter"] = json!("四十七")
    });
    expect_error(&root, ".checkpoint.json", "/last_completed_chapter");
    let text = stdout(&novel(&root, &["validate"]));
    assert!(text.contains("类型错误") && text.contains("整数"), "{text}");
}

#[test]
fn missing_required_field_is_reported() {
    let (_t, root) = new_project();
    edit(&root, "state/current-state.json", |v| {
        v.as_object_mut().unwrap().remove("state_version");
    });
    expect_error(&root, "state/current-state.json", "");
    assert!(stdout(&novel(&root, &["validate"])).contains("缺少必填字段 \"state_version\""));
}

#[test]
fn non_slug_storyline_id_is_reported() {
    let (_t, root) = new_project();
    edit(&root, "storylines/storylines.json", |v| {
        v["storylines"][0]["id"] = json!("主线")
    });
    expect_error(&root, "storylines/storylines.json", "/storylines/0/id");
    assert!(stdout(&novel(&root, &["validate"])).contains("slug"));
}

#[test]
fn contract_naming_a_missing_world_rule_is_reported() {
    let (_t, root) = new_project();
    edit(&root, "world/rules.json", |v| {
        v["rules"] = json!([{"id": "W-001", "category": "magic_system",
            "rule": "修炼者突破金丹期需要天地灵气浓度 ≥ 3级", "constraint_type": "hard",
            "exceptions": [], "introduced_chapter": 1}]);
    });
    let contract = root.join("volumes/vol-01/chapter-contracts/chapter-001.json");
    write_json(
        &contract,
        &json!({
            "chapter": 1,
            "storyline_id": "main_arc",
            "preconditions": {"character_states": {"陆尘": {"location": "青云镇"}}, "required_world_rules": ["W-001", "W-002"]},
            "objectives": [{"id": "OBJ-001-1", "type": "plot", "required": true, "description": "陆尘在后山发现灵脉"}],
            "postconditions": {"state_changes": {}, "foreshadowing_updates": {}},
            "acceptance_criteria": ["OBJ-001-1 在正文中明确体现", "不违反 W-001", "不违反 LS-009"]
        }),
    );
    expect_error(
        &root,
        "volumes/vol-01/chapter-contracts/chapter-001.json",
        "/preconditions/required_world_rules/1",
    );
    expect_error(
        &root,
        "volumes/vol-01/chapter-contracts/chapter-001.json",
        "/acceptance_criteria/2",
    );
    let text = stdout(&novel(&root, &["validate"]));
    assert!(
        text.contains("W-002") && !text.contains("「W-001」"),
        "{text}"
    );
    // Fixing the reference makes the project valid again.
    edit(
        &root,
        "volumes/vol-01/chapter-contracts/chapter-001.json",
        |v| {
            v["preconditions"]["required_world_rules"] = json!(["W-001"]);
            v["acceptance_criteria"] = json!(["不违反 W-001", "不违反 LS-001"]);
        },
    );
    assert_eq!(code(&novel(&root, &["validate"])), 0);
}

#[test]
fn unknown_storyline_and_file_name_mismatch_are_reported() {
    let (_t, root) = new_project();
    write_json(
        &root.join("volumes/vol-01/chapter-contracts/chapter-002.json"),
        &json!({"chapter": 3, "storyline_id": "jinghai_plan"}),
    );
    expect_error(
        &root,
        "volumes/vol-01/chapter-contracts/chapter-002.json",
        "/chapter",
    );
    expect_error(
        &root,
        "volumes/vol-01/chapter-contracts/chapter-002.json",
        "/storyline_id",
    );
    std::fs::write(root.join("chapters/第一章.md"), "# 第一章").unwrap();
    expect_error(&root, "chapters/第一章.md", "");
}

#[test]
fn bom_file_validates_and_bad_json_has_line_and_column() {
    let (_t, root) = new_project();
    let cp = root.join(".checkpoint.json");
    let text = std::fs::read_to_string(&cp).unwrap();
    std::fs::write(&cp, format!("\u{feff}{text}")).unwrap();
    let out = novel(&root, &["validate"]);
    assert_eq!(code(&out), 0, "{}", stdout(&out));

    std::fs::write(
        root.join("world/rules.json"),
        "{\n  \"rules\": [\n    {\"id\": \"W-001\", \"rule\": \"灵气\" \"x\"}\n  ]\n}\n",
    )
    .unwrap();
    let out = novel(&root, &["validate"]);
    assert_eq!(code(&out), 1);
    let text = stdout(&out);
    // Line 3; the stray string starts at character 34 of that line.
    assert!(
        text.contains("world/rules.json:3:34: E_JSON[错误]: JSON 格式错误"),
        "{text}"
    );
}

#[test]
fn validate_given_paths_and_standalone_files() {
    let (tmp, root) = new_project();
    edit(
        &root,
        "world/rules.json",
        |v| v["rules"] = json!([{"id": "W-1", "rule": "x", "constraint_type": "hard"}]),
    );
    // Only the given file is reported on; another file is fine.
    let out = novel(&root, &["validate", "storylines/storylines.json"]);
    assert_eq!(code(&out), 0, "{}", stdout(&out));
    let out = novel(&root, &["validate", "world"]);
    assert_eq!(code(&out), 1);
    assert!(
        stdout(&out).contains("world/rules.json: /rules/0/id: "),
        "{}",
        stdout(&out)
    );

    // A delta outside any project, kind from --kind or from its name.
    let delta = tmp.path().join("chapter-048-delta.json");
    write_json(
        &delta,
        &json!({"chapter": 48, "base_state_version": 47, "storyline_id": "main_arc",
        "ops": [{"op": "teleport", "path": "characters.lu-chen.location", "value": "魔都"}]}),
    );
    let out = novel(
        tmp.path(),
        &["validate", "--kind", "state-delta", delta.to_str().unwrap()],
    );
    assert_eq!(code(&out), 1);
    assert!(stdout(&out).contains("/ops/0/op"), "{}", stdout(&out));
    let out = novel(tmp.path(), &["--json", "validate", delta.to_str().unwrap()]);
    assert_eq!(code(&out), 2, "no kind from a bare name: {}", stdout(&out));
    assert_eq!(json(&out)["error"]["code"], "E_USAGE");
}

/// A chapter contract that refers into every registry (storylines, W-, LS-, C-): valid in a
/// fresh project once `world/rules.json` and a character carry the ids.
fn project_with_references() -> (tempfile::TempDir, std::path::PathBuf) {
    let (t, root) = new_project();
    edit(&root, "world/rules.json", |v| {
        v["rules"] = json!([{"id": "W-001", "rule": "灵气", "constraint_type": "hard"}]);
    });
    write_json(
        &root.join("characters/active/lu-chen.json"),
        &json!({"id": "lu-chen", "display_name": "陆尘", "contracts": [
            {"id": "C-LUCHEN-001", "type": "capability", "rule": "筑基后期"}]}),
    );
    write_json(
        &root.join("volumes/vol-01/chapter-contracts/chapter-001.json"),
        &json!({"chapter": 1, "storyline_id": "main_arc",
            "preconditions": {"required_world_rules": ["W-001"]},
            "acceptance_criteria": ["不违反 C-LUCHEN-001", "不违反 LS-001"]}),
    );
    write_json(
        &root.join("volumes/vol-01/storyline-schedule.json"),
        &json!({"volume": 1, "active_storylines": [{"storyline_id": "main_arc", "volume_role": "primary"}]}),
    );
    write_json(
        &root.join("volumes/vol-01/foreshadowing.json"),
        &json!({"volume": 1, "foreshadowing": [{"id": "jade", "description": "玉佩", "scope": "long", "storyline_id": "main_arc"}]}),
    );
    let out = novel(&root, &["validate"]);
    assert_eq!(code(&out), 0, "{}", stdout(&out));
    (t, root)
}

/// The findings of `novel --json validate` as (file, code).
fn findings(root: &Path) -> Vec<(String, String)> {
    let doc = json(&novel(root, &["--json", "validate"]));
    doc["data"]["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["file"].as_str().unwrap().to_string(),
                f["code"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

#[test]
fn an_unparseable_registry_is_reported_once_without_a_cascade() {
    let cases: &[(&str, &[u8], &str)] = &[
        ("storylines/storylines.json", b"{\n", "E_JSON"),
        ("world/rules.json", b"{\"rules\": [}", "E_JSON"),
        ("world/rules.json", b"", "E_JSON"),
        ("world/rules.json", b"{\"rules\": [\"\xff\"]}", "E_NOT_UTF8"),
        (
            "storylines/storyline-spec.json",
            b"{\"rules\": [,]}",
            "E_JSON",
        ),
        (
            "characters/active/lu-chen.json",
            b"{\"id\": \"lu-chen\",",
            "E_JSON",
        ),
    ];
    for (file, content, want) in cases {
        let (_t, root) = project_with_references();
        std::fs::write(root.join(file), content).unwrap();
        let out = novel(&root, &["validate"]);
        assert_eq!(code(&out), 1, "{file}: {}", stdout(&out));
        let found = findings(&root);
        assert_eq!(
            found,
            vec![(file.to_string(), want.to_string())],
            "{file} {content:?}: only the file's own error, no reference cascade"
        );
        let text = stdout(&out);
        if *want == "E_JSON" {
            assert!(
                text.contains(&format!("{file}:")) && text.contains(": E_JSON[错误]: "),
                "line and column: {text}"
            );
        } else {
            assert!(
                text.contains("UTF-8") && !text.contains(root.to_str().unwrap()),
                "{text}"
            );
        }
    }
}

#[test]
fn missing_required_files_are_reported_with_a_way_back() {
    for file in [
        "state/current-state.json",
        "novel.json",
        "ai-blacklist.json",
        "style-profile.json",
        "brief.md",
        "state/changelog.jsonl",
        "foreshadowing/global.json",
        "characters/relationships.json",
        "storylines/storyline-spec.json",
        "storylines/storylines.json",
        "world/rules.json",
    ] {
        let (_t, root) = project_with_references();
        std::fs::remove_file(root.join(file)).unwrap();
        let out = novel(&root, &["validate"]);
        assert_eq!(code(&out), 1, "rm {file}: {}", stdout(&out));
        assert_eq!(
            findings(&root),
            vec![(file.to_string(), "E_MISSING".to_string())],
            "rm {file}"
        );
        let text = stdout(&out);
        assert!(
            text.contains(&format!("{file}: E_MISSING[错误]: 缺少必需的文件"))
                && text.contains("    处理："),
            "{text}"
        );
    }
    // The way back that the hint gives for the state files works.
    let (_t, root) = project_with_references();
    std::fs::remove_file(root.join("state/current-state.json")).unwrap();
    std::fs::remove_file(root.join("foreshadowing/global.json")).unwrap();
    write_json(
        &root.join("state/current-state.json"),
        &json!({"schema_version": 1, "state_version": 0, "last_updated_chapter": 0}),
    );
    write_json(
        &root.join("foreshadowing/global.json"),
        &json!({"foreshadowing": []}),
    );
    let out = novel(&root, &["state", "rebuild", "--write"]);
    assert_eq!(code(&out), 0, "{}{}", stdout(&out), stderr(&out));
    assert_eq!(code(&novel(&root, &["validate"])), 0);

    // Optional files stay optional.
    let (_t, root) = project_with_references();
    for file in [
        "world/geography.md",
        "characters/changelog.md",
        "storylines/main_arc/memory.md",
    ] {
        std::fs::remove_file(root.join(file)).unwrap();
    }
    assert_eq!(code(&novel(&root, &["validate"])), 0);
}

#[test]
fn an_evaluation_gets_the_same_checks_by_project_path_and_by_kind() {
    let (tmp, root) = new_project();
    let d = |w: f64| json!({"score": 4, "weight": w, "reason": "", "evidence": ""});
    // Weights summing to 1.10: valid by its schema, wrong for the rubric.
    let eval = json!({"chapter": 1, "overall": 4.0, "recommendation": "pass",
        "scores": {"plot_logic": d(0.28), "character": d(0.18), "immersion": d(0.15),
            "foreshadowing": d(0.10), "pacing": d(0.08), "style_naturalness": d(0.15),
            "emotional_impact": d(0.08), "storyline_coherence": d(0.08)}});
    let rel = "staging/evaluations/chapter-001-eval.json";
    write_json(&root.join(rel), &eval);
    let outside = tmp.path().join("judge-output.json");
    write_json(&outside, &eval);
    let by_path = json(&novel(&root, &["--json", "validate", rel]));
    let by_kind = json(&novel(
        &root,
        &["--json", "validate", "--kind", "evaluation", rel],
    ));
    let standalone = json(&novel(
        tmp.path(),
        &[
            "--json",
            "validate",
            "--kind",
            "evaluation",
            outside.to_str().unwrap(),
        ],
    ));
    for doc in [&by_path, &by_kind, &standalone] {
        assert_eq!(doc["error"]["code"], "E_VALIDATION", "{doc}");
        let f = &doc["data"]["findings"][0];
        assert_eq!(f["code"], "E_WEIGHTS", "{doc}");
        assert_eq!(f["pointer"], "/scores", "{doc}");
        assert!(f["message"].as_str().unwrap().contains("1.100"), "{doc}");
    }
}

/// A state file changed outside `novel` passes the schema and even keeps its version; `validate`
/// still says it is not the one the program last wrote (the changelog records its digest). The
/// program's own archives and reports are never "unknown files".
#[test]
fn a_state_edited_by_hand_is_reported_and_the_programs_own_files_are_known() {
    let (_t, root, token) = crate::test_chapter::ready_to_commit();
    crate::test_chapter::ok(&root, &["chapter", "commit", "3", "--token", &token]);
    crate::test_chapter::ok(&root, &["review", "brief"]);
    let clean = novel(&root, &["--json", "validate"]);
    assert_eq!(code(&clean), 0, "{}", stdout(&clean));
    let findings = json(&clean)["data"]["findings"].clone();
    assert_eq!(findings, json!([]), "{findings}");
    edit(&root, "state/current-state.json", |s| {
        s["characters"]["lu-chen"]["location"] = json!("手改的地点");
    });
    let out = novel(&root, &["--json", "validate"]);
    assert_eq!(code(&out), 0, "a warning: {}", stdout(&out));
    let findings = json(&out)["data"]["findings"].clone();
    assert_eq!(findings[0]["code"], "E_STATE_EDITED", "{findings}");
    assert_eq!(findings[0]["severity"], "warning", "{findings}");
    assert_eq!(findings[0]["file"], "state/current-state.json");
    // Put back by the program: clean again.
    crate::test_chapter::ok(&root, &["state", "rebuild", "--write"]);
    let out = novel(&root, &["--json", "validate"]);
    let findings = json(&out)["data"]["findings"].clone();
    assert!(
        findings
            .as_array()
            .unwrap()
            .iter()
            .all(|f| f["code"] != "E_STATE_EDITED" && f["code"] != "E_UNKNOWN_FILE"),
        "{findings}"
    );
}
