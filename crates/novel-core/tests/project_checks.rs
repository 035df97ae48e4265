//! Cross-file checks of `check_project`, on small hand-built projects.

use novel_core::FileKind;
use novel_core::diagnostic::Severity;
use novel_core::validate::{FailedDoc, JsonDoc, MarkdownDoc, ProjectView, check_project};
use serde_json::{Value, json};

fn doc(file: &str, kind: FileKind, value: Value) -> JsonDoc {
    JsonDoc::new(file, None, kind, value)
}

fn storylines() -> JsonDoc {
    doc(
        "storylines/storylines.json",
        FileKind::Storylines,
        json!({"storylines": [
            {"id": "main_arc", "name": "主线", "type": "main_arc", "scope": "novel", "status": "active"},
            {"id": "jinghai_plan", "name": "靖海计划", "type": "conspiracy", "scope": "multi_volume", "status": "dormant"}
        ], "relationships": []}),
    )
}

fn errors_at(view: &ProjectView) -> Vec<(String, String, &'static str)> {
    check_project(view)
        .into_iter()
        .filter(|f| f.severity == Severity::Error)
        .map(|f| {
            // Every code validate reports is one of the table's.
            let code = novel_core::codes::lookup(&f.code).map_or("?", |d| d.code);
            (f.file, f.pointer.unwrap_or_default(), code)
        })
        .collect()
}

#[test]
fn schedule_referencing_an_unknown_storyline() {
    let mut schedule = doc(
        "volumes/vol-03/storyline-schedule.json",
        FileKind::StorylineSchedule,
        json!({"volume": 3, "active_storylines": [
            {"storyline_id": "main_arc", "volume_role": "primary"},
            {"storyline_id": "zhonggu_secret", "volume_role": "seasoning"}],
          "convergence_events": [{"chapter_range": [28, 25], "involved_storylines": ["main_arc", "jinghai_plan"]}]}),
    );
    schedule.volume_in_path = Some(2);
    let view = ProjectView {
        docs: vec![storylines(), schedule],
        ..Default::default()
    };
    let errs = errors_at(&view);
    let f = "volumes/vol-03/storyline-schedule.json".to_string();
    assert!(
        errs.contains(&(
            f.clone(),
            "/active_storylines/1/storyline_id".into(),
            "E_REF_STORYLINE"
        )),
        "{errs:?}"
    );
    assert!(
        errs.contains(&(f.clone(), "/volume".into(), "E_FILE_NAME")),
        "{errs:?}"
    );
    assert!(
        errs.contains(&(
            f.clone(),
            "/convergence_events/0/chapter_range".into(),
            "E_RANGE"
        )),
        "{errs:?}"
    );
    assert_eq!(errs.len(), 3, "{errs:?}");
}

#[test]
fn chapter_contract_refs_need_their_registries() {
    let contract = || {
        let mut d = doc(
            "volumes/vol-02/chapter-contracts/chapter-048.json",
            FileKind::ChapterContract,
            json!({"chapter": 48, "storyline_id": "main_arc",
                "preconditions": {"required_world_rules": ["W-001"]},
                "acceptance_criteria": ["不违反 C-LUCHEN-001", "不违反 C-LUCHEN-002"]}),
        );
        d.chapter_in_name = Some(48);
        d.volume_in_path = Some(2);
        d
    };
    let character = doc(
        "characters/active/lu-chen.json",
        FileKind::Character,
        json!({"id": "lu-chen", "display_name": "陆尘", "contracts": [
            {"id": "C-LUCHEN-001", "type": "capability", "rule": "筑基后期"}]}),
    );
    let rules = doc(
        "world/rules.json",
        FileKind::WorldRules,
        json!({"rules": [{"id": "W-001", "rule": "灵气", "constraint_type": "hard"}]}),
    );
    let view = ProjectView {
        docs: vec![storylines(), contract(), character.clone(), rules],
        ..Default::default()
    };
    let errs = errors_at(&view);
    assert_eq!(
        errs,
        vec![(
            "volumes/vol-02/chapter-contracts/chapter-048.json".into(),
            "/acceptance_criteria/1".into(),
            "E_REF_SPEC"
        )]
    );
    // With no world/rules.json at all, W-001 cannot exist.
    let view = ProjectView {
        docs: vec![storylines(), contract(), character.clone()],
        ..Default::default()
    };
    assert!(
        errors_at(&view)
            .iter()
            .any(|e| e.1 == "/preconditions/required_world_rules/0")
    );
    // With a broken world/rules.json, the reference cannot be judged: only the schema error.
    let broken = doc(
        "world/rules.json",
        FileKind::WorldRules,
        json!({"rules": "坏了"}),
    );
    let view = ProjectView {
        docs: vec![storylines(), contract(), character, broken],
        ..Default::default()
    };
    let errs = errors_at(&view);
    assert!(
        !errs
            .iter()
            .any(|e| e.1 == "/preconditions/required_world_rules/0"),
        "{errs:?}"
    );
    assert!(
        errs.iter()
            .any(|e| e.0 == "world/rules.json" && e.2 == "E_SCHEMA")
    );
}

#[test]
fn character_file_name_and_duplicate_contracts() {
    let mut a = doc(
        "characters/active/lin-feng.json",
        FileKind::Character,
        json!({"id": "lin-feng", "display_name": "林枫", "contracts": [
            {"id": "C-LINFENG-001", "type": "capability", "rule": "炼气三层"}]}),
    );
    a.slug_in_name = Some("lin-feng".into());
    let mut b = doc(
        "characters/active/linfeng.json",
        FileKind::Character,
        json!({"id": "lin-feng2", "display_name": "林峰", "contracts": [
            {"id": "C-LINFENG-001", "type": "capability", "rule": "炼气五层"}]}),
    );
    b.slug_in_name = Some("linfeng".into());
    let errs = errors_at(&ProjectView {
        docs: vec![a, b],
        ..Default::default()
    });
    assert!(
        errs.contains(&(
            "characters/active/linfeng.json".into(),
            "/id".into(),
            "E_FILE_NAME"
        )),
        "{errs:?}"
    );
    assert!(
        errs.iter()
            .any(|e| e.2 == "E_DUPLICATE_ID" && e.1 == "/contracts/0/id"),
        "{errs:?}"
    );
}

#[test]
fn checkpoint_coherence_and_state_keys() {
    let cp = doc(
        ".checkpoint.json",
        FileKind::Checkpoint,
        json!({"last_completed_chapter": 47, "current_volume": 2, "orchestrator_state": "WRITING",
            "pipeline_stage": "drafted", "inflight_chapter": 50}),
    );
    let state = doc(
        "state/current-state.json",
        FileKind::CurrentState,
        json!({"schema_version": 1, "state_version": 47, "last_updated_chapter": 47,
            "characters": {"陆尘": {"location": "魔都"}, "lu-chen": {}}}),
    );
    let errs = errors_at(&ProjectView {
        docs: vec![cp, state],
        ..Default::default()
    });
    assert!(
        errs.contains(&(
            ".checkpoint.json".into(),
            "/inflight_chapter".into(),
            "E_CHECKPOINT"
        )),
        "{errs:?}"
    );
    assert!(
        errs.contains(&(
            "state/current-state.json".into(),
            "/characters/陆尘".into(),
            "E_SLUG"
        )),
        "{errs:?}"
    );
}

#[test]
fn evaluation_weights_and_summary_front_matter() {
    let dim = |w: f64| json!({"score": 4, "weight": w, "reason": "", "evidence": ""});
    let mut eval = doc(
        "evaluations/chapter-047-eval.json",
        FileKind::Evaluation,
        json!({"chapter": 47, "overall": 4.0, "recommendation": "pass", "scores": {
            "plot_logic": dim(0.2), "character": dim(0.2), "immersion": dim(0.15), "foreshadowing": dim(0.1),
            "pacing": dim(0.1), "style_naturalness": dim(0.15), "emotional_impact": dim(0.1),
            "storyline_coherence": dim(0.08)}}),
    );
    eval.chapter_in_name = Some(47);
    let summary = MarkdownDoc {
        file: "summaries/chapter-047-summary.md".into(),
        chapter_in_name: Some(47),
        head: "---\nchapter: 46\nstoryline_id: nowhere\n---\n陆尘……".into(),
        is_summary: true,
    };
    let chapter = MarkdownDoc {
        file: "chapters/chapter-047.md".into(),
        chapter_in_name: Some(47),
        head: "# 第四十八章 夜探\n\n正文".into(),
        is_summary: false,
    };
    let errs = errors_at(&ProjectView {
        docs: vec![storylines(), eval],
        markdown: vec![summary, chapter],
        ..Default::default()
    });
    assert!(
        errs.contains(&(
            "evaluations/chapter-047-eval.json".into(),
            "/scores".into(),
            "E_WEIGHTS"
        )),
        "{errs:?}"
    );
    assert!(
        errs.contains(&(
            "summaries/chapter-047-summary.md".into(),
            "/chapter".into(),
            "E_FILE_NAME"
        )),
        "{errs:?}"
    );
    assert!(
        errs.contains(&(
            "summaries/chapter-047-summary.md".into(),
            "/storyline_id".into(),
            "E_REF_STORYLINE"
        )),
        "{errs:?}"
    );
    assert!(
        errs.contains(&("chapters/chapter-047.md".into(), "".into(), "E_FILE_NAME")),
        "{errs:?}"
    );
}

#[test]
fn registries_that_failed_to_load_do_not_cascade() {
    let mut contract = doc(
        "volumes/vol-01/chapter-contracts/chapter-001.json",
        FileKind::ChapterContract,
        json!({"chapter": 1, "storyline_id": "main_arc",
            "preconditions": {"required_world_rules": ["W-001"]},
            "acceptance_criteria": ["不违反 C-LUCHEN-001", "不违反 LS-001"]}),
    );
    contract.chapter_in_name = Some(1);
    let schedule = doc(
        "volumes/vol-01/storyline-schedule.json",
        FileKind::StorylineSchedule,
        json!({"volume": 1, "active_storylines": [{"storyline_id": "main_arc", "volume_role": "primary"}]}),
    );
    let failed = |file: &str, kind| FailedDoc {
        file: file.into(),
        kind,
    };
    // Every registry is unreadable (its own finding came from the store): nothing to judge.
    let view = ProjectView {
        docs: vec![contract.clone(), schedule.clone()],
        storyline_dirs: vec!["main_arc".into()],
        failed: vec![
            failed("storylines/storylines.json", FileKind::Storylines),
            failed("world/rules.json", FileKind::WorldRules),
            failed("storylines/storyline-spec.json", FileKind::StorylineSpec),
            failed("characters/active/lu-chen.json", FileKind::Character),
        ],
        ..Default::default()
    };
    assert_eq!(check_project(&view), vec![]);
    // Without the failure record the same view is a cascade of reference errors.
    let view = ProjectView {
        docs: vec![contract, schedule],
        storyline_dirs: vec!["main_arc".into()],
        ..Default::default()
    };
    let codes: Vec<_> = check_project(&view).into_iter().map(|f| f.code).collect();
    assert!(
        codes.iter().any(|c| c == "E_REF_STORYLINE") && codes.iter().any(|c| c == "E_REF_SPEC"),
        "{codes:?}"
    );
}
