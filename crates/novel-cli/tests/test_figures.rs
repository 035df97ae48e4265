//! One set of figures (`novel_store::figures`): every surface that shows a figure of the book
//! — `novel status`, the dashboard, the reviews, `novel next` — shows the same number, on the
//! demo book and on a 300-chapter book with a history (dated logs whose judge logged only a
//! token total, evaluations, force-passes, a style far from its baseline): the cost and tokens,
//! the style drift verdict, the scores, the 字数 in total and per volume, the volume a chapter
//! belongs to and the headline.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::support::*;

fn demo(t: &Path) -> PathBuf {
    let book = t.join("demo");
    let out = novel(t, &["demo", book.to_str().unwrap()]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    book
}

fn synth(t: &Path, chapters: u32) -> PathBuf {
    let book = t.join("synth");
    let n = chapters.to_string();
    let out = novel(
        t,
        &[
            "context",
            "synth",
            book.to_str().unwrap(),
            "--chapters",
            &n,
            "--history",
        ],
    );
    assert_eq!(code(&out), 0, "{}{}", stdout(&out), stderr(&out));
    book
}

/// `novel --json ARGS` in `book`: its `data`, whatever the exit code (status exits 1 on a
/// problem, and a book may have one).
fn data(book: &Path, args: &[&str]) -> Value {
    let (_, env) = run_json(book, args);
    assert!(env["data"].is_object(), "{args:?}: {env}");
    env["data"].clone()
}

/// What every surface shows of one book, checked against `novel status`.
fn surfaces_agree(book: &Path) -> Value {
    let status = data(book, &["status"]);
    let next = data(book, &["next"]);
    let dash = data(book, &["dashboard"]);
    // Status and the dashboard: the same objects, key by key.
    for key in ["headline", "chars", "scores", "pipeline", "drift"] {
        assert_eq!(
            status[key], dash[key],
            "{key} differs between status and dashboard"
        );
    }
    let page = std::fs::read_to_string(book.join("dashboard.html")).unwrap();
    let headline = status["headline"].as_str().unwrap();
    assert!(
        page.contains(headline),
        "the page's headline is not {headline}"
    );
    let cost = format!(
        "费用 ${:.2}",
        status["pipeline"]["cost_usd"].as_f64().unwrap()
    );
    assert!(page.contains(&cost), "the page does not say {cost}");
    let human = stdout(&novel(book, &["status"]));
    assert!(
        human.contains(&format!(
            "费用：${:.2}",
            status["pipeline"]["cost_usd"].as_f64().unwrap()
        )),
        "{human}"
    );
    // `novel next`: the same volume and the same reviews due.
    assert_eq!(next["volume"]["range"], status["volume"]["range"]);
    assert_eq!(next["reviews"]["due"], status["reviews"]["due"]);
    // The quality brief: the last chapters' scores are status's recent scores.
    let brief = data(book, &["review", "brief"]);
    let scores = |v: &Value| -> Vec<(u64, f64)> {
        v.as_array()
            .unwrap()
            .iter()
            .map(|c| (c["chapter"].as_u64().unwrap(), c["score"].as_f64().unwrap()))
            .collect()
    };
    assert_eq!(
        scores(&brief["quality"]["chapters"]),
        scores(&status["scores"]["recent"])
    );
    // The consistency check: the same drift verdict over the same window.
    let consistency = data(book, &["review", "consistency"]);
    let drift = &consistency["style_drift"];
    assert_eq!(drift["status"], status["drift"]["status"]);
    assert_eq!(drift["window"], status["drift"]["window"]);
    assert_eq!(drift["metrics"], status["drift"]["metrics"]);
    status
}

/// The volume review of volume `v`: its mean score and chapters are the figures' per volume.
fn volume_review_agrees(book: &Path, status: &Value, v: u32) {
    let review = data(book, &["review", "volume", &v.to_string()]);
    let per = status["scores"]["per_volume"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["volume"] == v)
        .unwrap_or_else(|| panic!("no volume {v} in {}", status["scores"]));
    assert_eq!(review["quality"]["scored"], per["scored"]);
    let (a, b) = (
        review["quality"]["average"].as_f64().unwrap(),
        per["average"].as_f64().unwrap(),
    );
    assert!((a - b).abs() < 1e-9, "volume {v}: review {a}, figures {b}");
}

#[test]
fn the_demo_book_shows_one_set_of_figures_everywhere() {
    let t = tempfile::tempdir().unwrap();
    let book = demo(t.path());
    let status = surfaces_agree(&book);
    // The logs carry tokens but no cost: the cost is their estimate, and the judge's stage,
    // which logged nothing, makes it a lower bound.
    let p = &status["pipeline"];
    assert_eq!(p["cost_usd"], 1.5);
    assert_eq!(p["estimated_usd"], 1.5);
    assert_eq!(p["chapters_without_cost"], 3);
    // The dialogue is 44% under the baseline over chapters 1–3: drifted, as `style drift` says.
    assert_eq!(status["drift"]["status"], "drifted");
    assert_eq!(status["drift"]["window"], serde_json::json!([1, 3]));
    let (_, drift) = run_json(&book, &["style", "drift", "--dry-run"]);
    assert_eq!(drift["data"]["status"], "drifted");
    assert_eq!(drift["data"]["metrics"], status["drift"]["metrics"]);
    let human = stdout(&novel(&book, &["status"]));
    assert!(
        human.contains("文风：风格漂移（第 1–3 章：平均句长 偏离 17%、对话占比 偏离 44%）"),
        "{human}"
    );
    volume_review_agrees(&book, &status, 1);
}

#[test]
fn a_300_chapter_book_shows_one_set_of_figures_everywhere() {
    let t = tempfile::tempdir().unwrap();
    let book = synth(t.path(), 300);
    let status = surfaces_agree(&book);
    // Logged costs (writer, refiner: $0.53 a chapter) plus the judge's estimate from its one
    // token total, on every surface.
    let p = &status["pipeline"];
    assert_eq!(p["cost_usd"], 179.79);
    assert_eq!(p["estimated_usd"], 20.79);
    assert_eq!(p["chapters_without_cost"], 0);
    assert_eq!(p["tokens"], 15_565_500);
    // Chapter 300 ends volume 6; the checkpoint already points at volume 7 (being planned).
    assert_eq!(
        status["headline"],
        "第6卷 第300/300章 总89.0万字 均分3.95 未回收伏笔24个"
    );
    assert_eq!(status["volume"]["current"], 7);
    let per_volume = status["chars"]["per_volume"].as_array().unwrap();
    assert_eq!(per_volume.len(), 6);
    assert!(per_volume.iter().all(|v| v["chapters"] == 50));
    assert_eq!(status["drift"]["status"], "drifted");
    assert_eq!(status["drift"]["window"], serde_json::json!([296, 300]));
    // The chapters under the pass line are listed, the same on the page.
    let below = status["scores"]["below_pass"].as_array().unwrap();
    assert_eq!(below.len(), 165);
    let page = std::fs::read_to_string(book.join("dashboard.html")).unwrap();
    assert!(page.contains("165 章低于通过线 4.0"), "the page's count");
    volume_review_agrees(&book, &status, 6);
}
