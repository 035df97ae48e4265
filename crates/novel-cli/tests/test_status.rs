//! `novel status` (PRD §2.4; `docs/orchestration.md` §4): the dashboard of a small fixture as
//! a snapshot, the broken project that is reported and never panics, and 字数 that agrees with
//! `novel count` whether it comes from the pipeline logs or from the text.
//!
//! Re-bless the snapshot with `NOVEL_BLESS=1 cargo test -p novel-cli --test runner test_status`.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::support::*;

fn snapshot_path(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/snapshots")
        .join(name)
}

/// Compares `text` with the stored snapshot (or rewrites it under `NOVEL_BLESS`).
fn assert_snapshot(name: &str, text: &str) {
    let path = snapshot_path(name);
    if std::env::var_os("NOVEL_BLESS").is_some() {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, text).unwrap();
        return;
    }
    let want = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!(
            "{}: {e}; run with NOVEL_BLESS=1 to create it",
            path.display()
        )
    });
    assert!(
        want == text,
        "status output differs from {}:\n--- want\n{want}\n--- got\n{text}",
        path.display()
    );
}

fn set_cp(root: &Path, f: impl FnOnce(&mut Value)) {
    let p = root.join(".checkpoint.json");
    let mut cp = read_json(&p);
    f(&mut cp);
    write_json(&p, &cp);
}

fn eval_doc(n: u32, score: f64) -> Value {
    let d = |w: f64| json!({"score": score, "weight": w, "reason": "节奏紧凑", "evidence": "「陆尘推门而入」"});
    json!({"chapter": n, "overall": score, "recommendation": "pass",
        "scores": {"plot_logic": d(0.18), "character": d(0.18), "immersion": d(0.15),
            "foreshadowing": d(0.10), "pacing": d(0.08), "style_naturalness": d(0.15),
            "emotional_impact": d(0.08), "storyline_coherence": d(0.08)},
        "violations": [], "risk_flags": [], "required_fixes": [], "issues": []})
}

const LINES: [&str; 5] = [
    "main_arc",
    "jinghai_plan",
    "main_arc",
    "main_arc",
    "main_arc",
];

/// Five committed chapters on two storylines in volume 1 (chapters 1–10): logs with figures
/// for 1–3, a log without 字数 for 4, no log at all for 5 (its score from the evaluation, its
/// storyline from the summary); an overdue short thread, a pending propagation, an active
/// style drift.
fn small_book() -> (tempfile::TempDir, PathBuf) {
    let (tmp, root) = new_project();
    set_cp(&root, |cp| {
        cp["orchestrator_state"] = json!("WRITING");
        cp["last_completed_chapter"] = json!(5);
        cp["pipeline_stage"] = json!("committed");
        cp["pending_actions"] = json!([{"id": "spec-propagation-001", "type": "spec_propagation"}]);
    });
    let lines_path = root.join("storylines/storylines.json");
    let mut lines = read_json(&lines_path);
    lines["storylines"].as_array_mut().unwrap().push(json!({
        "id": "jinghai_plan", "name": "靖海计划", "type": "conspiracy", "scope": "multi_volume",
        "pov_characters": ["许象乾"], "status": "active", "description": "海权博弈暗线"}));
    write_json(&lines_path, &lines);
    write_json(
        &root.join("volumes/vol-01/storyline-schedule.json"),
        &json!({"volume": 1, "chapter_range": [1, 10], "active_storylines": [
            {"storyline_id": "main_arc", "volume_role": "primary"},
            {"storyline_id": "jinghai_plan", "volume_role": "secondary"}],
            "interleaving_pattern": {"primary_max_consecutive": 3, "secondary_min_appearance": "every_3_chapters"},
            "convergence_events": []}),
    );
    for n in 1..=5u32 {
        let line = LINES[n as usize - 1];
        std::fs::write(
            root.join(format!("chapters/chapter-{n:03}.md")),
            format!(
                "# 第{n}章 风起\n\n{}\n",
                "陆尘推门而入，屋里一灯如豆。".repeat(n as usize * 10)
            ),
        )
        .unwrap();
        std::fs::write(
            root.join(format!("summaries/chapter-{n:03}-summary.md")),
            format!("---\nchapter: {n}\nstoryline_id: {line}\n---\n第{n}章摘要。\n"),
        )
        .unwrap();
        if n <= 4 {
            let score = [3.6, 3.9, 4.2, 3.1][n as usize - 1];
            let mut log = json!({"chapter": n, "storyline_id": line, "stages": [
                {"name": "drafted", "model": "sonnet", "input_tokens": 1000, "output_tokens": 400,
                 "duration_ms": 60000, "cost_usd": 0.1},
                {"name": "judged", "model": "sonnet", "input_tokens": 500, "output_tokens": 100,
                 "duration_ms": 30000, "cost_usd": 0.05}],
                "gate_decision": if n == 4 { "revise" } else { "pass" },
                "revisions": if n == 4 { 2 } else { 0 }, "force_passed": n == 4,
                "gate_overall": score});
            if n <= 3 {
                // What the commit records: the platform count of the chapter.
                log["chars"] = json!(n * 10 * 14);
            }
            write_json(&root.join(format!("logs/chapter-{n:03}-log.json")), &log);
        }
    }
    write_json(
        &root.join("evaluations/chapter-005-eval.json"),
        &eval_doc(5, 3.5),
    );
    write_json(
        &root.join("foreshadowing/global.json"),
        &json!({"foreshadowing": [
            {"id": "bronze_token", "description": "铜牌", "scope": "short", "status": "planted",
             "planted_chapter": 1, "target_resolve_range": [2, 4]},
            {"id": "ancient_prophecy", "description": "古老预言", "scope": "long", "status": "advanced"},
            {"id": "old_debt", "description": "旧债", "scope": "short", "status": "resolved",
             "target_resolve_range": [1, 3]}]}),
    );
    write_json(
        &root.join("style-drift.json"),
        &json!({"active": true, "detected_chapter": 5, "window": [1, 5],
            "metrics": [{"name": "avg_sentence_length", "baseline": 18, "current": 23.4, "deviation": 0.3, "drifted": true}],
            "directives": ["动作场面改用短句"]}),
    );
    (tmp, root)
}

#[test]
fn status_dashboard_of_a_small_book() {
    let (_t, root) = small_book();
    let out = novel(&root, &["status"]);
    assert_eq!(code(&out), 0, "{}{}", stdout(&out), stderr(&out));
    let text = stdout(&out);
    assert_eq!(
        text.lines().next().unwrap(),
        "第1卷 第5/10章 总2100字 均分3.66 未回收伏笔2个"
    );
    assert!(!text.contains(root.to_str().unwrap()), "no machine paths");
    assert_snapshot("status_small.txt", &text);
}

#[test]
fn status_json_has_the_contract_fields() {
    let (_t, root) = small_book();
    let d = json(&novel(&root, &["--json", "status"]))["data"].clone();
    assert_eq!(
        d["headline"],
        "第1卷 第5/10章 总2100字 均分3.66 未回收伏笔2个"
    );
    assert_eq!(d["state"], "WRITING");
    assert_eq!(d["state_label"], "卷内写作");
    assert_eq!(d["stage"], "committed");
    assert_eq!(d["stage_label"], "已提交");
    assert_eq!(
        d["volume"],
        json!({"current": 1, "range": [1, 10], "range_source": "schedule", "over_plan": false})
    );
    assert_eq!(d["last_completed_chapter"], 5);
    assert_eq!(d["inflight"], Value::Null);
    // 字数: chapters 1–3 from their logs, 4 and 5 counted from the text.
    assert_eq!(d["chars"]["total"], 2100);
    assert_eq!(d["chars"]["counted_from_text"], 2);
    assert_eq!(
        d["chars"]["per_volume"],
        json!([{"volume": 1, "chapters": 5, "chars": 2100}])
    );
    let recent: Vec<(u64, f64)> = d["scores"]["recent"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| (s["chapter"].as_u64().unwrap(), s["score"].as_f64().unwrap()))
        .collect();
    assert_eq!(recent, [(1, 3.6), (2, 3.9), (3, 4.2), (4, 3.1), (5, 3.5)]);
    assert_eq!(d["scores"]["recent"][3]["force_passed"], true);
    assert_eq!(d["scores"]["recent"][3]["decision"], "revise");
    assert_eq!(d["scores"]["trend"], "down");
    let lines: Vec<(String, Value, Value, Value, Value)> = d["storylines"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| {
            (
                l["id"].as_str().unwrap().to_string(),
                l["last_chapter"].clone(),
                l["gap"].clone(),
                l["max_gap"].clone(),
                l["over_gap"].clone(),
            )
        })
        .collect();
    assert_eq!(
        lines,
        [
            (
                "main_arc".into(),
                json!(5),
                json!(0),
                Value::Null,
                json!(false)
            ),
            (
                "jinghai_plan".into(),
                json!(2),
                json!(3),
                json!(2),
                json!(true)
            ),
        ]
    );
    assert_eq!(
        d["foreshadowing"],
        json!({"open": 2, "overdue": ["bronze_token"]})
    );
    assert_eq!(d["pending_actions"][0]["id"], "spec-propagation-001");
    assert_eq!(d["lock"]["state"], "free");
    assert_eq!(d["interrupted_commit"], Value::Null);
    assert_eq!(d["style_drift"]["active"], true);
    assert_eq!(d["pipeline"]["logs"], 4);
    assert_eq!(d["pipeline"]["force_passed"], 1);
    assert_eq!(d["reviews"]["due"][0]["kind"], "brief");
    assert_eq!(d["problems"], json!([]));
}

#[test]
fn status_reports_a_broken_project_and_exits_1() {
    let (_t, root) = small_book();
    std::fs::write(root.join("state/current-state.json"), "{ 坏掉的").unwrap();
    std::fs::write(root.join("logs/chapter-002-log.json"), "[1, 2").unwrap();
    // The checkpoint is ahead of the chapters on disk.
    set_cp(&root, |cp| cp["last_completed_chapter"] = json!(7));
    let out = novel(&root, &["--json", "status"]);
    assert_eq!(code(&out), 1, "{}", stdout(&out));
    let doc = json(&out);
    assert_eq!(doc["ok"], false);
    assert_eq!(doc["error"]["code"], "E_PROJECT_PROBLEMS");
    let problems: Vec<&str> = doc["data"]["problems"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p.as_str().unwrap())
        .collect();
    assert!(
        problems
            .iter()
            .any(|p| p.contains("已完成到第 7 章") && p.contains("第 6、7 章")),
        "{problems:?}"
    );
    assert!(
        problems
            .iter()
            .any(|p| p.contains("state/current-state.json")),
        "{problems:?}"
    );
    assert!(
        problems
            .iter()
            .any(|p| p.contains("logs/chapter-002-log.json")),
        "{problems:?}"
    );
    // Everything else is still reported.
    assert_eq!(doc["data"]["chars"]["total"], 2100);
    assert!(
        doc["data"]["headline"]
            .as_str()
            .unwrap()
            .starts_with("第1卷 第7/10章")
    );
    // Human: the dashboard, the problems, then the error line.
    let out = novel(&root, &["status"]);
    assert_eq!(code(&out), 1);
    assert!(stdout(&out).contains("问题：\n  - "), "{}", stdout(&out));
    assert!(
        stderr(&out).contains("E_PROJECT_PROBLEMS"),
        "{}",
        stderr(&out)
    );

    // An unreadable checkpoint: still a dashboard, from the chapters on disk.
    std::fs::write(
        root.join(".checkpoint.json"),
        "{\"last_completed_chapter\": ",
    )
    .unwrap();
    let out = novel(&root, &["--json", "status"]);
    assert_eq!(code(&out), 1, "{}", stdout(&out));
    let d = json(&out)["data"].clone();
    // (Chapter 2's log is still broken: its score is unknown.)
    assert_eq!(d["headline"], "第?卷 第5章 总2100字 均分3.6 未回收伏笔2个");
    assert_eq!(d["state"], Value::Null);
    assert!(
        d["problems"][0]
            .as_str()
            .unwrap()
            .contains(".checkpoint.json"),
        "{d}"
    );
}

#[test]
fn status_counts_like_novel_count_from_logs_or_text() {
    let tmp = tempfile::tempdir().unwrap();
    let r = novel_store::synth::synth_project(
        &tmp.path().join("book"),
        &novel_store::synth::SynthOptions {
            chapters: 12,
            per_volume: 10,
            chapter_chars: 400,
            ..Default::default()
        },
    )
    .unwrap();
    let counted = json(&novel(&r.root, &["--json", "count", "--all"]))["data"]["total"].clone();
    let status = || json(&novel(&r.root, &["--json", "status"]))["data"].clone();
    let d = status();
    assert_eq!(d["chars"]["total"], counted, "from the logs");
    assert_eq!(d["chars"]["counted_from_text"], 0);
    let per: Vec<(u64, u64)> = d["chars"]["per_volume"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| {
            (
                v["volume"].as_u64().unwrap(),
                v["chapters"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(per, [(1, 10), (2, 2)]);
    // Without the logs' figure, the text is counted: the same total.
    for n in 1..=12u32 {
        let p = r.root.join(format!("logs/chapter-{n:03}-log.json"));
        let mut log = read_json(&p);
        log.as_object_mut().unwrap().remove("chars");
        write_json(&p, &log);
    }
    let d = status();
    assert_eq!(d["chars"]["total"], counted, "from the text");
    assert_eq!(d["chars"]["counted_from_text"], 12);
}

/// One read of the book per command (issue 44): `novel status` on a 300-chapter book reads
/// each file and lists each directory once (settings, checkpoint and schedule were read two or
/// three times), and shows the same figures as without the shared reads.
#[test]
fn status_reads_each_file_of_the_book_once() {
    let tmp = tempfile::tempdir().unwrap();
    let r = novel_store::synth::synth_project(
        &tmp.path().join("book"),
        &novel_store::synth::SynthOptions {
            chapters: 300,
            chapter_chars: 300,
            ..Default::default()
        },
    )
    .unwrap();
    let project = novel_store::Project {
        root: r.root.clone(),
    };
    let count = |t: &str| novel_text::count::count(t).chars;
    let style = |t: &str| novel_text::metrics::sample(&novel_text::segment::Document::new(t));
    let rules = novel_store::figures::TextRules {
        count: &count,
        style: &style,
    };
    let once = novel_store::io::ReadOnce::begin();
    let shared = novel_store::status::gather(&project, &rules);
    let reads = once.reads();
    let twice: Vec<_> = reads.iter().filter(|(_, r)| r.disk > 1).collect();
    assert!(twice.is_empty(), "read again from disk: {twice:?}");
    let asked = |rel: &str| {
        let path = r.root.join(rel);
        reads
            .iter()
            .find(|(p, _)| *p == path)
            .map_or(0, |(_, r)| r.asked)
    };
    assert!(asked("novel.json") > 1 && asked(".checkpoint.json") > 1);
    drop(once);
    let alone = novel_store::status::gather(&project, &rules);
    assert_eq!(
        serde_json::to_value(&shared).unwrap(),
        serde_json::to_value(&alone).unwrap()
    );
}
