//! The gate over its whole grid: score band × violation confidence × revision count × key chapter.

use novel_core::gate::{GateInput, KeyReason, LeakCheck, LeakRisk, decide, key_chapter};
use novel_core::model::Evaluation;
use novel_core::model::common::GateDecision;
use novel_core::model::settings::GateThresholds;
use novel_core::model::storyline::{StorylineSchedule, StorylineSpec};
use serde_json::json;

fn eval(score: f64, violations: serde_json::Value) -> Evaluation {
    let d = |w: f64| json!({"score": score, "weight": w, "reason": "", "evidence": ""});
    serde_json::from_value(json!({
        "chapter": 12, "overall": score, "recommendation": "pass",
        "scores": {"plot_logic": d(0.18), "character": d(0.18), "immersion": d(0.15),
            "foreshadowing": d(0.10), "pacing": d(0.08), "style_naturalness": d(0.15),
            "emotional_impact": d(0.08), "storyline_coherence": d(0.08)},
        "violations": violations,
        "required_fixes": [{"target": "第3段", "instruction": "补上陆尘受伤的因果"}]
    }))
    .unwrap()
}

fn spec() -> StorylineSpec {
    serde_json::from_value(json!({"spec_version": 1, "rules": [
        {"id": "LS-001", "category": "continuity", "rule": "时间线不得矛盾", "constraint_type": "hard"},
        {"id": "LS-002", "category": "transition", "rule": "切线锚点", "constraint_type": "soft"}]}))
    .unwrap()
}

fn violation(layer: &str, id: &str, confidence: &str) -> serde_json::Value {
    json!([{"rule_id": id, "layer": layer, "confidence": confidence, "description": "违规"}])
}

/// The expected decision, written independently of the implementation from `003` §8.2.
fn expected(score: f64, high_blocking: bool, revisions: u32) -> (GateDecision, bool) {
    let exhausted = revisions >= 2;
    if high_blocking {
        return (
            if exhausted {
                GateDecision::Pause
            } else {
                GateDecision::Revise
            },
            false,
        );
    }
    if score >= 4.0 {
        (GateDecision::Pass, false)
    } else if score >= 3.5 {
        (GateDecision::Polish, false)
    } else if score >= 3.0 {
        if exhausted {
            (GateDecision::Pass, true)
        } else {
            (GateDecision::Revise, false)
        }
    } else if exhausted || score >= 2.0 {
        // Out of revisions below 3.0, or 2.0–2.9: the author decides.
        (GateDecision::Pause, false)
    } else {
        (GateDecision::Rewrite, false)
    }
}

fn leak(risk: LeakRisk) -> LeakCheck {
    LeakCheck {
        chapter: 12,
        leak_risk: risk,
        text_digest: None,
        findings: vec![json!({"entity": "许象乾", "storyline": "jinghai_plan"})],
    }
}

#[test]
fn the_whole_grid() {
    let thresholds = GateThresholds::default();
    let spec = spec();
    // On the band edges and just off them: 3.495 and 3.496 are below 3.5, 3.9951 below 4.0.
    let scores: [f64; 21] = [
        1.0, 1.9, 1.995, 2.0, 2.5, 2.9, 2.999, 3.0, 3.2, 3.4, 3.49, 3.495, 3.496, 3.5, 3.7, 3.9,
        3.95, 3.9951, 4.0, 4.5, 5.0,
    ];
    // (violations, whether they force a revision)
    let violation_cases = [
        (json!([]), false),
        (violation("L1", "W-001", "high"), true),
        (violation("L2", "C-LUCHEN-001", "high"), true),
        (violation("L3", "OBJ-012-1", "high"), true),
        (violation("LS", "LS-001", "high"), true),
        (violation("LS", "LS-002", "high"), false),
        (violation("L1", "W-001", "medium"), false),
        (violation("L2", "C-LUCHEN-001", "low"), false),
    ];
    // (leak check, whether it forces a revision): LS-005 is hard, `low` only reports.
    let leaks = [
        (None, false),
        (Some(leak(LeakRisk::None)), false),
        (Some(leak(LeakRisk::Low)), false),
        (Some(leak(LeakRisk::High)), true),
    ];
    let mut cases = 0;
    for &score in &scores {
        for (violations, blocking) in &violation_cases {
            for (leak, leak_blocks) in &leaks {
                for revisions in 0..=3 {
                    // No second judge; a second judge scoring higher; one scoring lower.
                    for key in 0..3 {
                        let (first, second) = match key {
                            2 => ((score + 0.5).min(5.0), score),
                            _ => (score, (score + 0.5).min(5.0)),
                        };
                        let (first_v, second_v) = match key {
                            2 => (json!([]), violations.clone()),
                            _ => (violations.clone(), json!([])),
                        };
                        let primary = eval(first, first_v);
                        let secondary = eval(second, second_v);
                        let evaluations = if key > 0 {
                            vec![&primary, &secondary]
                        } else {
                            vec![&primary]
                        };
                        let input = GateInput {
                            chapter: 12,
                            evaluations,
                            thresholds: &thresholds,
                            revision_count: revisions,
                            key_reasons: if key > 0 {
                                vec![KeyReason::Convergence]
                            } else {
                                vec![]
                            },
                            storyline_spec: Some(&spec),
                            leak: leak.as_ref(),
                            previous_fixes: &[],
                            craft: None,
                        };
                        let got = decide(&input).unwrap();
                        let (want, force) = expected(score, *blocking || *leak_blocks, revisions);
                        assert_eq!(
                            (got.decision, got.force_passed),
                            (want, force),
                            "score {score}, violations {violations}, leak {leak:?}, revisions {revisions}, key {key}: {:?}",
                            got.reasons
                        );
                        assert!((got.overall - score).abs() < 1e-9, "lower score counts");
                        assert_eq!(got.required_fixes.is_empty(), want != GateDecision::Revise);
                        cases += 1;
                    }
                }
            }
        }
    }
    assert_eq!(cases, 21 * 8 * 4 * 4 * 3);
}

#[test]
fn thresholds_come_from_settings_and_must_be_ordered() {
    let e = eval(4.2, json!([]));
    let strict = GateThresholds {
        pass: 4.5,
        polish: 4.0,
        revise: 3.5,
        pause: 2.5,
        max_revisions: 1,
        force_pass_min: 3.5,
        ..GateThresholds::default()
    };
    let input = |t| GateInput {
        chapter: 12,
        evaluations: vec![&e],
        thresholds: t,
        revision_count: 0,
        key_reasons: vec![],
        storyline_spec: None,
        leak: None,
        previous_fixes: &[],
        craft: None,
    };
    assert_eq!(
        decide(&input(&strict)).unwrap().decision,
        GateDecision::Polish
    );
    let inverted = GateThresholds {
        pass: 3.0,
        ..GateThresholds::default()
    };
    let err = decide(&input(&inverted)).unwrap_err();
    assert_eq!(err.code(), "E_SETTINGS");
    let nan = GateThresholds {
        pause: f64::NAN,
        ..GateThresholds::default()
    };
    assert_eq!(decide(&input(&nan)).unwrap_err().code(), "E_SETTINGS");
}

/// One evaluation of an ordinary chapter, first round.
fn single<'a>(e: &'a Evaluation, t: &'a GateThresholds) -> GateInput<'a> {
    GateInput {
        chapter: 12,
        evaluations: vec![e],
        thresholds: t,
        revision_count: 0,
        key_reasons: vec![],
        storyline_spec: None,
        leak: None,
        previous_fixes: &[],
        craft: None,
    }
}

#[test]
fn overall_is_recomputed_with_the_projects_fixed_weights() {
    let mut e = eval(3.0, json!([]));
    e.overall = 4.6; // the judge's arithmetic is wrong
    e.scores.plot_logic.score = 5.0; // 3.0 + 0.18 * 2 = 3.36
    let t = GateThresholds::default();
    let got = decide(&single(&e, &t)).unwrap();
    assert_eq!(got.decision, GateDecision::Revise);
    assert!((got.overall - 3.36).abs() < 1e-9, "{}", got.overall);
    assert!(got.scores[0].mismatch);
    assert!(got.scores[0].weight_mismatch.is_empty());
    // A judge moving weight onto its best dimension (sum still 1) changes nothing but a warning.
    e.scores.plot_logic.weight = 0.50;
    e.scores.character.weight = 0.02;
    e.scores.immersion.weight = 0.01;
    e.overall = 4.0;
    let got = decide(&single(&e, &t)).unwrap();
    assert!((got.overall - 3.36).abs() < 1e-9, "{}", got.overall);
    assert_eq!(got.decision, GateDecision::Revise);
    assert_eq!(
        got.scores[0].weight_mismatch,
        vec!["plot_logic", "character", "immersion"]
    );
    assert!(
        got.reasons
            .iter()
            .any(|r| r.starts_with("警告") && r.contains("plot_logic")),
        "{:?}",
        got.reasons
    );
    // Weights that do not even sum to 1 are not trusted either: warned, not refused.
    e.scores.pacing.weight = 0.9;
    let got = decide(&single(&e, &t)).unwrap();
    assert!((got.overall - 3.36).abs() < 1e-9);
    assert!(got.scores[0].weight_sum > 1.5);
}

#[test]
fn weights_come_from_settings_and_must_sum_to_one() {
    let mut e = eval(3.0, json!([]));
    e.scores.style_naturalness.score = 5.0;
    let mut t = GateThresholds::default();
    // The project weighs style more: 3.0 + 0.35 * 2 = 3.7 → polish.
    t.weights.style_naturalness = 0.35;
    t.weights.plot_logic = 0.08;
    t.weights.character = 0.08;
    let got = decide(&single(&e, &t)).unwrap();
    assert!((got.overall - 3.7).abs() < 1e-9, "{}", got.overall);
    assert_eq!(got.decision, GateDecision::Polish);
    // The file's weights (the defaults) differ from the project's: reported.
    assert_eq!(
        got.scores[0].weight_mismatch,
        vec!["plot_logic", "character", "style_naturalness"]
    );
    t.weights.pacing = 0.3;
    let err = decide(&single(&e, &t)).unwrap_err();
    assert_eq!(err.code(), "E_SETTINGS");
    assert!(err.to_string().contains("gate.weights"), "{err}");
    // The defaults are PRD §6.6.5.
    let d = GateThresholds::default().weights;
    assert_eq!(
        d.values(),
        [
            ("plot_logic", 0.18),
            ("character", 0.18),
            ("immersion", 0.15),
            ("foreshadowing", 0.10),
            ("pacing", 0.08),
            ("style_naturalness", 0.15),
            ("emotional_impact", 0.08),
            ("storyline_coherence", 0.08),
        ]
    );
}

#[test]
fn key_chapters_need_two_judges() {
    let schedule: StorylineSchedule = serde_json::from_value(json!({
        "volume": 1, "chapter_range": [1, 10], "active_storylines": [],
        "convergence_events": [{"chapter_range": [6, 7], "involved_storylines": ["main_arc", "jinghai_plan"]}]
    }))
    .unwrap();
    assert_eq!(
        key_chapter(1, schedule.chapter_range, Some(&schedule)),
        vec![KeyReason::VolumeFirst]
    );
    assert_eq!(
        key_chapter(10, schedule.chapter_range, Some(&schedule)),
        vec![KeyReason::VolumeLast]
    );
    assert_eq!(
        key_chapter(7, schedule.chapter_range, Some(&schedule)),
        vec![KeyReason::Convergence]
    );
    assert!(key_chapter(5, schedule.chapter_range, Some(&schedule)).is_empty());
    let e = eval(4.5, json!([]));
    let t = GateThresholds::default();
    let err = decide(&GateInput {
        chapter: 10,
        evaluations: vec![&e],
        thresholds: &t,
        revision_count: 0,
        key_reasons: key_chapter(10, schedule.chapter_range, Some(&schedule)),
        storyline_spec: None,
        leak: None,
        previous_fixes: &[],
        craft: None,
    })
    .unwrap_err();
    assert_eq!(err.code(), "E_SECOND_JUDGE");
    // Union of violations: the second judge's high L1 violation forces a revision.
    let second = eval(4.8, violation("L1", "W-002", "high"));
    let got = decide(&GateInput {
        chapter: 10,
        evaluations: vec![&e, &second],
        thresholds: &t,
        revision_count: 0,
        key_reasons: key_chapter(10, schedule.chapter_range, Some(&schedule)),
        storyline_spec: None,
        leak: None,
        previous_fixes: &[],
        craft: None,
    })
    .unwrap();
    assert_eq!(got.decision, GateDecision::Revise);
    assert_eq!(got.blocking_violations[0].rule_id, "W-002");
}

/// Issue 30: a blocking fix of the round before that the judge marks not done is never
/// force-passed (nor passed on score), whatever the number of revisions; done, it passes.
#[test]
fn a_blocking_fix_not_done_is_not_force_passed() {
    use novel_core::judging::numbered_fixes;
    let mut before = eval(3.2, json!([]));
    before.required_fixes[0].blocking = true;
    let previous = numbered_fixes([&before]);
    let t = GateThresholds::default();
    let round = |status: &str, score: f64, revisions: u32| {
        let mut e = eval(score, json!([]));
        e.fix_review = serde_json::from_value(
            json!([{"fix": "F1", "status": status, "evidence": "陆尘推门而入"}]),
        )
        .unwrap();
        let input = GateInput {
            revision_count: revisions,
            previous_fixes: &previous,
            craft: None,
            ..single(&e, &t)
        };
        decide(&input).unwrap()
    };
    // Revisions exhausted at 3.2: force-passed when the fix is done …
    let done = round("done", 3.2, 2);
    assert_eq!(
        (done.decision, done.force_passed),
        (GateDecision::Pass, true)
    );
    // … the author decides when it is not.
    let not_done = round("not_done", 3.2, 2);
    assert_eq!(not_done.decision, GateDecision::Pause, "{not_done:?}");
    assert!(!not_done.force_passed);
    assert_eq!(not_done.fixes_not_done[0].id, "F1");
    assert!(
        not_done.reasons.iter().any(|r| r.contains("F1")),
        "{:?}",
        not_done.reasons
    );
    // A good score does not buy it through either: another revision.
    let high = round("not_done", 4.5, 1);
    assert_eq!(high.decision, GateDecision::Revise);
    assert!(high.required_fixes.iter().any(|f| f.blocking));
    // Partly done is not blocking the pass.
    assert_eq!(round("partly", 4.5, 1).decision, GateDecision::Pass);
}

/// A chapter whose opening has no problem or whose ending has no hook goes back for a
/// revision whatever its score, with a blocking fix for each; once revisions are exhausted the
/// score decides and the craft check is reported.
#[test]
fn craft_findings_send_a_passing_chapter_back() {
    let e = eval(4.5, json!([]));
    let t = GateThresholds::default();
    let hook = novel_core::gate::CraftCheck {
        opening: None,
        hook: Some("章末是总结或感悟（才刚刚开始），没有留下悬而未决的事".into()),
    };
    let mut input = single(&e, &t);
    assert_eq!(decide(&input).unwrap().decision, GateDecision::Pass);
    input.craft = Some(&hook);
    let r = decide(&input).unwrap();
    assert_eq!(r.decision, GateDecision::Revise, "{:?}", r.reasons);
    let craft: Vec<_> = r
        .required_fixes
        .iter()
        .filter(|f| f.target == "最后一两段")
        .collect();
    assert_eq!(craft.len(), 1, "{:?}", r.required_fixes);
    assert!(craft[0].blocking);
    assert!(r.reasons.iter().any(|x| x.contains("novel check craft")));
    // Both findings: two fixes, the opening first.
    let both = novel_core::gate::CraftCheck {
        opening: Some("开篇前 300 字只有景物".into()),
        ..hook.clone()
    };
    input.craft = Some(&both);
    let r = decide(&input).unwrap();
    let targets: Vec<&str> = r.required_fixes.iter().map(|f| f.target.as_str()).collect();
    assert!(
        targets.ends_with(&["开篇前 300 字", "最后一两段"]),
        "{targets:?}"
    );
    // Revisions exhausted: the score decides, the finding is reported.
    input.revision_count = t.max_revisions;
    input.craft = Some(&hook);
    let r = decide(&input).unwrap();
    assert_eq!(r.decision, GateDecision::Pass);
    assert!(
        r.reasons.iter().any(|x| x.contains("修订已用完")),
        "{:?}",
        r.reasons
    );
    // A clean craft check changes nothing.
    input.revision_count = 0;
    let clean = novel_core::gate::CraftCheck::default();
    input.craft = Some(&clean);
    assert_eq!(decide(&input).unwrap().decision, GateDecision::Pass);
}

/// When the craft check is the only thing sending a chapter back, the revision is a local
/// repair of the parts that failed (issue 39: the writer rewrites the last one or two
/// paragraphs, the judge re-checks only them); anything else that sends it back — a blocking
/// violation, a score below the pass band — makes it a full revision.
#[test]
fn a_hook_alone_is_a_local_repair_not_a_revision() {
    use novel_core::model::RepairPart;
    let t = GateThresholds::default();
    let hook = novel_core::gate::CraftCheck {
        opening: None,
        hook: Some("章末是总结或感悟，没有留下悬而未决的事".into()),
    };
    let parts = |r: &novel_core::gate::GateResult| -> Vec<RepairPart> {
        r.repair.iter().map(|p| p.part).collect()
    };
    // A passing score, a polish score: the ending alone, with the craft fix only.
    for score in [4.5, 3.7] {
        let e = eval(score, json!([]));
        let mut input = single(&e, &t);
        input.craft = Some(&hook);
        let r = decide(&input).unwrap();
        assert_eq!(r.decision, GateDecision::Revise, "{score}");
        assert_eq!(parts(&r), [RepairPart::Ending], "{score}");
        assert!(r.repair[0].reason.contains("总结或感悟"), "{:?}", r.repair);
        let targets: Vec<&str> = r.required_fixes.iter().map(|f| f.target.as_str()).collect();
        assert_eq!(targets, ["最后一两段"], "{score}: the judge's fixes wait");
        assert!(
            r.reasons.iter().any(|x| x.contains("局部修补")),
            "{:?}",
            r.reasons
        );
    }
    // The opening and the ending both: both repaired, the opening first.
    let both = novel_core::gate::CraftCheck {
        opening: Some("开篇前 300 字只有景物".into()),
        ..hook.clone()
    };
    let e = eval(4.5, json!([]));
    let mut input = single(&e, &t);
    input.craft = Some(&both);
    let r = decide(&input).unwrap();
    assert_eq!(parts(&r), [RepairPart::Opening, RepairPart::Ending]);
    // A blocking violation as well: a full revision.
    let e = eval(4.5, violation("L1", "W-001", "high"));
    let mut input = single(&e, &t);
    input.craft = Some(&hook);
    let r = decide(&input).unwrap();
    assert_eq!(r.decision, GateDecision::Revise);
    assert!(r.repair.is_empty(), "{:?}", r.repair);
    // A revise score as well: a full revision, the craft fix among the judge's.
    let e = eval(3.2, json!([]));
    let mut input = single(&e, &t);
    input.craft = Some(&hook);
    let r = decide(&input).unwrap();
    assert_eq!(r.decision, GateDecision::Revise);
    assert!(r.repair.is_empty(), "{:?}", r.repair);
    assert!(r.required_fixes.len() >= 2, "{:?}", r.required_fixes);
    // Revisions exhausted: no repair, the score decides.
    let e = eval(4.5, json!([]));
    let mut input = single(&e, &t);
    input.craft = Some(&hook);
    input.revision_count = t.max_revisions;
    let r = decide(&input).unwrap();
    assert_eq!(r.decision, GateDecision::Pass);
    assert!(r.repair.is_empty());
    // After a repair: the program's check passes, but the judge's review says the ending is
    // not done — another repair round.
    let reviewed = novel_core::gate::CraftCheck::default().with_review(&[(
        RepairPart::Ending,
        "评审复核结尾没有解决：还是在总结".to_string(),
    )]);
    let mut input = single(&e, &t);
    input.craft = Some(&reviewed);
    input.revision_count = 1;
    let r = decide(&input).unwrap();
    assert_eq!(parts(&r), [RepairPart::Ending]);
    assert!(r.repair[0].reason.contains("还是在总结"), "{:?}", r.repair);
}
