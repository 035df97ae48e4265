//! The periodic reviews (`docs/orchestration.md` §8): each writes its report where `novel next`
//! looks for it, so a review stops being due once it is done.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::support::*;

/// A synthetic project of `chapters` chapters (`novel context synth`).
fn synth(chapters: u32) -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("book");
    let out = novel(
        tmp.path(),
        &[
            "context",
            "synth",
            "book",
            "--chapters",
            &chapters.to_string(),
        ],
    );
    assert_eq!(code(&out), 0, "{}{}", stdout(&out), stderr(&out));
    (tmp, root)
}

fn due(root: &Path) -> Vec<String> {
    let (_, doc) = run_json(root, &["next"]);
    doc["data"]["reviews"]["due"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["kind"].as_str().unwrap().to_string())
        .collect()
}

/// An evaluation of chapter `n`: every dimension 4.0 except pacing.
fn evaluation(n: u32, pacing: f64, issues: &[&str]) -> Value {
    let dims = [
        ("plot_logic", 0.18),
        ("character", 0.18),
        ("immersion", 0.15),
        ("foreshadowing", 0.10),
        ("pacing", 0.08),
        ("style_naturalness", 0.15),
        ("emotional_impact", 0.08),
        ("storyline_coherence", 0.08),
    ];
    let scores: serde_json::Map<String, Value> = dims
        .iter()
        .map(|(d, w)| {
            let s = if *d == "pacing" { pacing } else { 4.0 };
            (
                d.to_string(),
                json!({"score": s, "weight": w, "reason": "—"}),
            )
        })
        .collect();
    json!({"chapter": n, "scores": scores, "overall": 3.9, "recommendation": "polish",
           "issues": issues})
}

#[test]
fn review_brief_lists_low_chapters_with_their_reasons_and_recurring_dimensions() {
    let (_t, root) = synth(10);
    write_json(
        &root.join("evaluations/chapter-007-eval.json"),
        &evaluation(7, 2.8, &["中段打斗拖沓"]),
    );
    write_json(
        &root.join("evaluations/chapter-009-eval.json"),
        &evaluation(9, 3.0, &[]),
    );
    assert_eq!(due(&root), ["brief", "consistency"]);
    let (exit, doc) = run_json(&root, &["review", "brief"]);
    assert_eq!(exit, 0, "{doc}");
    let d = &doc["data"];
    assert_eq!(d["kind"], "brief");
    assert_eq!(d["chapter"], 10);
    assert_eq!(d["report"], "logs/reviews/brief-chapter-010.json");
    assert_eq!(
        read_json(&root.join("logs/reviews/brief-chapter-010.json")),
        *d
    );
    let q = &d["quality"];
    assert_eq!(q["window"], json!([6, 10]));
    assert_eq!(q["scored"], 5);
    let below: Vec<u64> = q["below_threshold"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["chapter"].as_u64().unwrap())
        .collect();
    // The synthetic gate scores of chapters 6–10: 4.7, 3.9, 4.6, 3.8, 4.5.
    assert_eq!(below, [7, 9]);
    assert_eq!(q["below_threshold"][0]["issues"], json!(["中段打斗拖沓"]));
    assert!(
        q["below_threshold"][0]["low_dimensions"][0]
            .as_str()
            .unwrap()
            .contains("节奏")
    );
    assert_eq!(q["recurring_low"], json!(["pacing"]));
    assert!((q["average"].as_f64().unwrap() - 4.3).abs() < 1e-9, "{q}");
    // Done: `next` stops listing it.
    assert_eq!(due(&root), ["consistency"]);
}

#[test]
fn review_consistency_gathers_names_leaks_continuity_foreshadowing_and_drift() {
    let (_t, root) = synth(10);
    let (exit, doc) = run_json(&root, &["review", "consistency"]);
    assert_eq!(exit, 0, "{doc}");
    let d = &doc["data"];
    assert_eq!(d["kind"], "consistency");
    assert_eq!(d["window"], json!([1, 10]));
    assert!(
        root.join("logs/reviews/consistency-chapter-010.json")
            .is_file()
    );
    assert_eq!(d["leaks"]["chapters"].as_array().unwrap().len(), 10);
    assert!(d["names"]["findings"].is_array());
    assert_eq!(d["continuity"]["scope"], "chapters");
    assert_eq!(d["continuity"]["range"], json!([1, 11]));
    assert!(d["foreshadowing"]["total"].as_u64().unwrap() > 0);
    assert!(d["foreshadowing"]["overdue"].is_array());
    assert!(
        d["style_drift"]["status"].is_string(),
        "{}",
        d["style_drift"]
    );
    // The review only reports: style-drift.json is not written by it.
    assert!(!root.join("style-drift.json").exists());
    assert_eq!(due(&root), ["brief"]);
}

#[test]
fn review_volume_reports_completion_and_rhythm() {
    let (_t, root) = fixture("volume", &[]);
    edit_json(&root.join(".checkpoint.json"), |cp| {
        cp["orchestrator_state"] = json!("VOL_REVIEW");
        cp["current_volume"] = json!(1);
    });
    assert!(due(&root).contains(&"volume".to_string()));
    let (exit, doc) = run_json(&root, &["review", "volume"]);
    assert_eq!(exit, 0, "{doc}");
    let d = &doc["data"];
    assert_eq!(
        (&d["kind"], &d["volume"], &d["range"], &d["range_source"]),
        (
            &json!("volume"),
            &json!(1),
            &json!([1, 3]),
            &json!("schedule")
        )
    );
    assert_eq!(d["report"], "logs/reviews/volume-01.json");
    let rhythm: Vec<(String, u64, Value)> = d["storyline_rhythm"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| {
            (
                l["storyline_id"].as_str().unwrap().to_string(),
                l["appearances"].as_u64().unwrap(),
                l["versus_target"].clone(),
            )
        })
        .collect();
    assert_eq!(
        rhythm,
        [
            ("main_arc".to_string(), 2, json!(0)),
            ("jinghai_plan".to_string(), 1, json!(0))
        ]
    );
    let c = &d["foreshadowing_completion"];
    assert_eq!(
        (&c["planned"], &c["due"], &c["rate"]),
        (&json!(1), &json!(0), &Value::Null)
    );
    assert_eq!(d["continuity"]["findings"], json!([]));
    assert!(!due(&root).contains(&"volume".to_string()));
    // Human output names the report.
    let out = novel(&root, &["review", "volume", "1"]);
    assert!(stdout(&out).contains("logs/reviews/volume-01.json"));
}

#[test]
fn reviews_need_a_committed_chapter() {
    let (_t, root) = new_project();
    let (exit, doc) = run_json(&root, &["review", "brief"]);
    assert_eq!((exit, &doc["error"]["code"]), (2, &json!("E_NO_CHAPTER")));
}

#[test]
fn a_review_stays_due_after_the_next_chapters_until_a_report_covers_it() {
    // Chapter 12: the brief and the consistency check of chapter 10 were never run.
    let (_t, root) = synth(12);
    assert_eq!(due(&root), ["brief", "consistency"]);
    let (_, doc) = run_json(&root, &["next"]);
    assert_eq!(doc["data"]["reviews"]["due"][0]["chapter"], 10, "{doc}");
    // A brief run now (covering chapters 8–12) settles the chapter-10 milestone.
    let (exit, doc) = run_json(&root, &["review", "brief"]);
    assert_eq!(exit, 0, "{doc}");
    assert_eq!(doc["data"]["report"], "logs/reviews/brief-chapter-012.json");
    assert_eq!(due(&root), ["consistency"]);
}

/// The judges' blacklist suggestions, stored in their evaluations, come back in the 5-chapter
/// brief for the author to decide: each phrase once with every chapter that suggested it, and
/// none that the list (or its whitelist) already holds.
#[test]
fn review_brief_gathers_the_judges_blacklist_suggestions() {
    let (_t, root) = synth(10);
    let with = |n: u32, phrases: &[&str]| {
        let mut e = evaluation(n, 4.0, &[]);
        e["blacklist_suggestions"] = json!(
            phrases
                .iter()
                .map(|p| json!({"phrase": p, "category": "summaries", "evidence": format!("第{n}章：……{p}……")}))
                .collect::<Vec<_>>()
        );
        write_json(
            &root.join(format!("evaluations/chapter-{n:03}-eval.json")),
            &e,
        );
    };
    with(7, &["某种联系", "眼底闪过一丝"]);
    with(9, &["某种联系"]);
    with(8, &["一股莫名的力量"]);
    let (exit, doc) = run_json(&root, &["review", "brief"]);
    assert_eq!(exit, 0, "{doc}");
    let s = &doc["data"]["quality"]["blacklist_suggestions"];
    // 「眼底闪过一丝」 is on the seed list already.
    assert_eq!(
        s,
        &json!([
            {"phrase": "某种联系", "category": "summaries", "chapters": [7, 9], "evidence": "第7章：……某种联系……"},
            {"phrase": "一股莫名的力量", "category": "summaries", "chapters": [8], "evidence": "第8章：……一股莫名的力量……"}
        ]),
        "{doc}"
    );
    let out = novel(&root, &["review", "brief"]);
    assert!(
        stdout(&out).contains("裁判建议加入黑名单"),
        "{}",
        stdout(&out)
    );
    assert!(
        stdout(&out).contains("「某种联系」 summaries（第 7、9 章）"),
        "{}",
        stdout(&out)
    );
}
