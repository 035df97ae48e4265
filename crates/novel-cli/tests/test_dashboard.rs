//! `novel dashboard`: one self-contained HTML file per project. Its bytes for the demo book are
//! pinned (re-bless with `NOVEL_BLESS=1 cargo test -p novel-cli --test runner test_dashboard`);
//! the same project gives the same bytes (the clock fixed with `NOVEL_NOW`: the header says
//! when the page was made); bad input (a corrupt pipeline log, missing evaluations, an empty
//! project) still renders with the affected section saying why, in the author's words.
//!
//! In a real browser: headless Chromium (Debian's `chromium`, installed by `tests/run`) loads
//! the file from disk — for the demo book and for a synthetic 2,000-chapter book, each in a
//! 1440 px desktop window and a 390 px phone — over the DevTools protocol
//! (`tests/e2e/dashboard-check.mjs`, run with node): no console error, no exception, no
//! network request; full-page screenshots are taken (kept in the target directory's
//! `dashboard-screenshots/`, `<book>-<width>.png`), every section's SVG is checked for its
//! data, and what a reader sees is measured from the DOM: the smallest chart text (≥ 11 px on
//! the phone), no two chart labels overlapping, none cut off, every text at WCAG AA contrast.
//! Without chromium or node the browser test fails when `NOVEL_REQUIRE_CLIENT=1` (`tests/run`
//! and CI set it) and otherwise says loudly that it was skipped.
#![cfg(unix)]

use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::support::*;

fn demo(t: &Path) -> PathBuf {
    let book = t.join("book");
    let out = novel(t, &["demo", book.to_str().unwrap()]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    book
}

fn synth(t: &Path, chapters: u32) -> PathBuf {
    let book = t.join("synth");
    let out = novel(
        t,
        &[
            "context",
            "synth",
            book.to_str().unwrap(),
            "--chapters",
            &chapters.to_string(),
            "--history",
        ],
    );
    assert_eq!(code(&out), 0, "{}{}", stdout(&out), stderr(&out));
    book
}

/// The clock of every page these tests make (2026-11-22T05:30:00Z).
const NOW: &str = "1795325400";

/// `novel --json dashboard ARGS` in `book` at [`NOW`]: (exit code, envelope, the file's text).
fn dashboard(book: &Path, args: &[&str]) -> (i32, Value, String) {
    let mut full = vec!["--json", "dashboard"];
    full.extend_from_slice(args);
    let out = Command::new(bin())
        .args(&full)
        .current_dir(book)
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .env("LANG", "C.UTF-8")
        .env("NOVEL_NOW", NOW)
        .output()
        .unwrap();
    let (c, env) = (code(&out), json(&out));
    let file = env["data"]["file"].as_str().unwrap_or("dashboard.html");
    let path = if Path::new(file).is_absolute() {
        PathBuf::from(file)
    } else {
        book.join(file)
    };
    let html = std::fs::read_to_string(&path).unwrap_or_default();
    (c, env, html)
}

fn snapshot() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/snapshots/dashboard/demo.html")
}

fn section<'a>(html: &'a str, id: &str) -> &'a str {
    let start = html
        .find(&format!("<section id=\"{id}\""))
        .unwrap_or_else(|| panic!("no section {id}"));
    let end = html[start..].find("</section>").unwrap() + start;
    &html[start..end]
}

#[test]
fn the_demo_book_dashboard_matches_its_snapshot_and_is_byte_stable() {
    let t = tempfile::tempdir().unwrap();
    let book = demo(t.path());
    let (c, env, html) = dashboard(&book, &[]);
    assert_eq!(c, 0, "{env}");
    assert_eq!(env["data"]["file"], "dashboard.html");
    assert_eq!(env["data"]["bytes"], html.len());
    assert_eq!(env["data"]["chapters"], 3);
    // Same project, same bytes.
    let (_, _, again) = dashboard(&book, &[]);
    assert_eq!(again, html);
    assert!(html.contains("生成于 2026-11-22 05:30（UTC）"));
    // Written one folder down with -o: the same page, its links to the chapters one level up.
    let (c, _, below) = dashboard(&book, &["-o", "reports/copy.html"]);
    assert_eq!(c, 0);
    assert_eq!(
        below,
        html.replace("href=\"chapters/", "href=\"../chapters/")
    );
    assert!(html.contains(r#"<a href="chapters/chapter-001.md">1</a>"#));
    // Self-contained: nothing to fetch.
    for banned in [
        "<script", "http://", "https://", "@import", "url(http", "<link",
    ] {
        let allowed_ns = html.matches("http://www.w3.org/2000/svg").count();
        let found = html.matches(banned).count();
        assert!(
            found == 0 || (banned == "http://" && found == allowed_ns),
            "{banned} in the page"
        );
    }
    assert!(html.contains("default-src 'none'"));
    assert!(html.contains("\"PingFang SC\", \"Hiragino Sans GB\", \"Microsoft YaHei\""));
    let path = snapshot();
    if std::env::var_os("NOVEL_BLESS").is_some() {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, &html).unwrap();
    } else {
        let want = std::fs::read_to_string(&path).unwrap_or_default();
        assert!(
            want == html,
            "the demo book's dashboard changed: review {} after re-blessing with NOVEL_BLESS=1",
            path.display()
        );
    }
}

#[test]
fn a_long_book_gives_the_same_bytes_every_time() {
    // Past 64 chapters the texts are analysed on several threads: the page must not care.
    let t = tempfile::tempdir().unwrap();
    let book = synth(t.path(), 120);
    let (c, env, first) = dashboard(&book, &[]);
    assert_eq!(c, 0, "{env}");
    for _ in 0..3 {
        let (_, _, again) = dashboard(&book, &[]);
        assert!(again == first, "the page changed between two runs");
    }
    assert_eq!(
        section(&first, "progress")
            .matches("<rect class=\"bar")
            .count(),
        120
    );
    // Every chapter has its row, linking to its file.
    assert_eq!(
        section(&first, "chapters").matches("<tr id=\"c").count(),
        120
    );
    // A force-pass every 40 chapters.
    assert_eq!(
        section(&first, "quality")
            .matches("<path class=\"forced\"")
            .count(),
        3
    );
    assert_eq!(
        section(&first, "style")
            .matches("<circle class=\"pt sentence")
            .count(),
        24
    );
}

/// What an author must never read on the page: option names, the PRD, the agents' class
/// names, file paths, the parsers' messages.
const PROGRAM_WORDS: [&str; 16] = [
    "--",
    "PRD",
    "§",
    "Judge",
    "Refiner",
    "Writer",
    "Summarizer",
    "Architect",
    "Analyzer",
    ".json",
    ".md",
    "logs/",
    "evaluations/",
    "chapters/",
    "line ",
    "column",
];

/// The author-facing text of a page: captions, empty states, summaries, notes, legends,
/// table captions and folds (not the links' addresses).
fn author_text(html: &str) -> Vec<String> {
    let mut out = Vec::new();
    for (open, close) in [
        ("<p class=\"caption\">", "</p>"),
        ("<p class=\"empty\">", "</p>"),
        ("<p class=\"summary\">", "</p>"),
        ("<p class=\"note\">", "</p>"),
        ("<li class=\"sw-", "</li>"),
        ("<caption>", "</caption>"),
        ("<summary>", "</summary>"),
        ("<footer>", "</footer>"),
    ] {
        for part in html.split(open).skip(1) {
            let text = part.split(close).next().unwrap();
            let text = text.split_once("\">").map_or(text, |(_, t)| t);
            out.push(text.to_string());
        }
    }
    out
}

#[test]
fn captions_empty_states_and_notes_are_in_the_authors_words() {
    let t = tempfile::tempdir().unwrap();
    // A book with a corrupt log and a corrupt evaluation, a full demo, an empty project.
    let book = demo(t.path());
    std::fs::write(
        book.join("logs/chapter-002-log.json"),
        "{\"chapter\": 2, \"stages\": [",
    )
    .unwrap();
    std::fs::write(book.join("evaluations/chapter-003-eval.json"), "not json").unwrap();
    let (_, _, broken) = dashboard(&book, &[]);
    let (_t, empty_root) = new_project();
    let (_, _, empty) = dashboard(&empty_root, &[]);
    let mut seen = 0;
    for html in [&broken, &empty] {
        for text in author_text(html) {
            seen += 1;
            for word in PROGRAM_WORDS {
                assert!(!text.contains(word), "{word:?} in {text:?}");
            }
        }
    }
    assert!(seen > 40, "{seen} texts read");
    // The notes still say what is missing.
    assert!(
        broken.contains("第 2 章的写作记录读不了"),
        "{}",
        section(&broken, "cost")
    );
    assert!(
        broken.contains("第 3 章的评审结果读不了"),
        "{}",
        section(&broken, "quality")
    );
}

#[test]
fn every_section_of_the_demo_book_has_its_chart_and_caption() {
    let t = tempfile::tempdir().unwrap();
    let book = demo(t.path());
    let (_, env, html) = dashboard(&book, &[]);
    let sections = env["data"]["sections"].as_array().unwrap();
    let ids: Vec<&str> = sections.iter().map(|s| s["id"].as_str().unwrap()).collect();
    assert_eq!(
        ids,
        [
            "progress",
            "quality",
            "storylines",
            "foreshadowing",
            "characters",
            "cost",
            "style"
        ]
    );
    let progress = section(&html, "progress");
    assert_eq!(progress.matches("<rect class=\"bar").count(), 3);
    assert!(progress.contains("第1章 218字"), "{progress}");
    let quality = section(&html, "quality");
    assert_eq!(quality.matches("class=\"dim d").count(), 8);
    assert!(quality.contains("class=\"pass-line\""));
    // The demo's lin_family_debt (short, due by chapter 6) is open, not yet overdue at 3.
    let fs = section(&html, "foreshadowing");
    assert!(
        fs.contains(r#"<g class="thread open" data-thread="lin_family_debt">"#),
        "{fs}"
    );
    let cost = section(&html, "cost");
    assert_eq!(cost.matches("<g class=\"cost-bar").count(), 3);
    // The judge stage has no figures: the cost is a lower bound, and says so.
    assert!(cost.contains("实际费用更高"), "{cost}");
    // Three chapters make the one window the style verdict is taken over, and say it.
    let style = section(&html, "style");
    assert!(style.contains("data-state=\"drawn\""), "{style}");
    assert!(
        style.contains("结论：风格漂移（第1–3章：平均句长偏离 17%，对话占比偏离 44%）"),
        "{style}"
    );
    // The header: the headline, the book's state in words, when the page was made.
    assert!(
        html.contains("<p class=\"headline\">第1卷 第3/30章 总723字 均分3.96 未回收伏笔2个</p>")
    );
    assert!(
        html.contains("状态：快速起步；已写完第 3 章 · 生成于 2026-11-22 05:30（UTC）"),
        "{}",
        &html[..html.find("<nav>").unwrap()]
    );
    for s in sections {
        let id = s["id"].as_str().unwrap();
        let part = section(&html, id);
        assert!(part.contains("<p class=\"caption\">"), "{id}");
        if s["drawn"] == true {
            assert!(part.contains("<svg class=\"chart\""), "{id}");
        } else {
            assert!(part.contains("<p class=\"empty\">"), "{id}");
            assert!(!s["empty"].as_str().unwrap().is_empty(), "{id}");
        }
    }
    // The human report names the file (and would name what could not be drawn: nothing).
    let out = novel(&book, &["dashboard"]);
    assert_eq!(code(&out), 0);
    let text = stdout(&out);
    assert!(
        text.starts_with("已生成仪表盘：dashboard.html（3 章，"),
        "{text}"
    );
    assert_eq!(text.lines().count(), 2, "{text}");
}

#[test]
fn a_corrupt_pipeline_log_still_renders_and_the_cost_section_says_so() {
    let t = tempfile::tempdir().unwrap();
    let book = demo(t.path());
    std::fs::write(
        book.join("logs/chapter-002-log.json"),
        "{\"chapter\": 2, \"stages\": [",
    )
    .unwrap();
    let (c, env, html) = dashboard(&book, &[]);
    assert_eq!(c, 0, "{env}");
    let cost = &env["data"]["sections"][5];
    assert_eq!(cost["id"], "cost");
    assert_eq!(cost["drawn"], true);
    let notes: Vec<&str> = cost["notes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n.as_str().unwrap())
        .collect();
    assert!(
        notes
            .iter()
            .any(|n| n.contains("第 2 章的写作记录读不了，费用没有计入")),
        "{notes:?}"
    );
    let part = section(&html, "cost");
    assert!(part.contains("<p class=\"note\">"), "{part}");
    // Chapter 2 is still a bar of the progress chart, its 字数 counted from the text.
    let progress = section(&html, "progress");
    assert_eq!(progress.matches("<rect class=\"bar").count(), 3);
    assert!(progress.contains("字数改从正文统计"), "{progress}");
    // The chapter's 字数 is its text's, the same figure status counts.
    let (_, status) = run_json(&book, &["status"]);
    assert_eq!(status["data"]["chars"], env["data"]["chars"]);
}

#[test]
fn missing_evaluations_still_render_the_gate_scores_and_say_what_is_missing() {
    let t = tempfile::tempdir().unwrap();
    let book = demo(t.path());
    std::fs::remove_dir_all(book.join("evaluations")).unwrap();
    let (c, env, html) = dashboard(&book, &[]);
    assert_eq!(c, 0, "{env}");
    let quality = section(&html, "quality");
    assert!(quality.contains("还没有任何一章的评审结果"), "{quality}");
    // The gate's own scores (from the pipeline logs) are still drawn.
    assert!(quality.contains("class=\"overall\""), "{quality}");
    assert!(
        !quality.contains("class=\"dim"),
        "no dimension has a bar: {quality}"
    );
    // One evaluation unreadable among readable ones: named.
    let t2 = tempfile::tempdir().unwrap();
    let book = demo(t2.path());
    std::fs::write(book.join("evaluations/chapter-003-eval.json"), "not json").unwrap();
    let (c, env, _) = dashboard(&book, &[]);
    assert_eq!(c, 0);
    let notes = env["data"]["sections"][1]["notes"].to_string();
    assert!(notes.contains("第 3 章的评审结果读不了"), "{notes}");
}

#[test]
fn an_empty_project_renders_every_section_with_the_reason() {
    let (_t, root) = new_project();
    let (c, env, html) = dashboard(&root, &[]);
    assert_eq!(c, 0, "{env}");
    for s in env["data"]["sections"].as_array().unwrap() {
        let id = s["id"].as_str().unwrap();
        // A new book has its storylines (main_arc) but nothing written.
        if id == "storylines" {
            assert!(section(&html, id).contains("还没有写完的章节"), "{id}");
            continue;
        }
        assert_eq!(s["drawn"], false, "{id}: {s}");
        let why = s["empty"].as_str().unwrap();
        assert!(
            why.chars().any(|c| ('\u{4e00}'..='\u{9fff}').contains(&c)),
            "{id}: {why}"
        );
        assert!(section(&html, id).contains("<p class=\"empty\">"), "{id}");
    }
}

#[test]
fn dashboard_outside_a_project_is_a_project_error() {
    let t = tempfile::tempdir().unwrap();
    let (c, env) = run_json(t.path(), &["dashboard"]);
    assert_eq!(c, 2, "{env}");
    assert_eq!(env["error"]["code"], "E_NOT_PROJECT");
}

// ---- the browser -------------------------------------------------------------------------------

/// Chromium and node, or why the browser test cannot run (a failure under
/// `NOVEL_REQUIRE_CLIENT=1`, else a loud skip).
fn browser() -> Option<(PathBuf, PathBuf)> {
    let find = |names: &[&str]| -> Option<PathBuf> {
        let path = std::env::var_os("PATH").unwrap_or_default();
        names.iter().find_map(|n| {
            std::env::split_paths(&path)
                .map(|d| d.join(n))
                .find(|p| p.is_file())
        })
    };
    let chromium = std::env::var_os("NOVEL_CHROMIUM")
        .map(PathBuf::from)
        .or_else(|| find(&["chromium", "chromium-browser"]));
    let node = find(&["node"]);
    let missing = match (&chromium, &node) {
        (Some(_), Some(_)) => return Some((chromium.unwrap(), node.unwrap())),
        (None, _) => "chromium (Debian: apt-get install chromium; tests/run installs it)",
        (_, None) => "node (Node.js 18+, which tests/run needs anyway)",
    };
    let required = std::env::var_os("NOVEL_REQUIRE_CLIENT").is_some_and(|v| v == "1");
    assert!(
        !required,
        "NOVEL_REQUIRE_CLIENT=1 but the dashboard cannot be checked in a browser: {missing} is missing"
    );
    eprintln!(
        "\n==================== SKIPPED: novel dashboard in headless Chromium ====================\n\
         {missing} is missing.\n\
         Run tests/run (it installs Debian's chromium when absent) to load the dashboard in a real browser.\n\
         =======================================================================================\n"
    );
    None
}

/// The check script in its own process group, killed with its browser when dropped.
struct Reaped(Child);

impl Drop for Reaped {
    fn drop(&mut self) {
        if let Ok(None) = self.0.try_wait() {
            let _ = Command::new("kill")
                .args(["-KILL", "--", &format!("-{}", self.0.id())])
                .stderr(Stdio::null())
                .status();
            let _ = self.0.kill();
        }
        let _ = self.0.wait();
    }
}

/// How long one page check may take (loading a 500-chapter dashboard takes a second or two).
const PAGE_TIMEOUT: Duration = Duration::from_secs(90);

/// Loads `file` in Chromium, `width` px wide (a phone's touch screen under 600 px): what the
/// browser saw (see dashboard-check.mjs). The screenshot is `<name>-<width>.png`.
fn load_in_browser(chromium: &Path, node: &Path, file: &Path, name: &str, width: u32) -> Value {
    let work = tempfile::tempdir().unwrap();
    let shots = Path::new(env!("CARGO_TARGET_TMPDIR")).join("dashboard-screenshots");
    std::fs::create_dir_all(&shots).unwrap();
    let name = format!("{name}-{width}");
    let shot = shots.join(format!("{name}.png"));
    let _ = std::fs::remove_file(&shot);
    let checks = json!({
        "counts": {
            "bars": "svg[data-chart=progress] rect.bar",
            "target_band": "svg[data-chart=progress] rect.target-band",
            "dims": "svg[data-chart=dimensions] rect.dim",
            "overall": "svg[data-chart=quality] path.overall",
            "moving": "svg[data-chart=quality] path.moving",
            "vol_means": "svg[data-chart=quality] line.vol-mean",
            "chapter_rows": "#chapters tr[id]",
            "chapter_links": "a[href$='.md']",
            "pass_line": "svg[data-chart=quality] line.pass-line",
            "revised": "svg[data-chart=quality] circle.revised",
            "forced": "svg[data-chart=quality] path.forced",
            "lint_bars": "svg[data-chart=lint] rect.lint-bar",
            "lanes": "svg[data-chart=storylines] g.lane",
            "dormant_lanes": "svg[data-chart=storylines] g.lane.dormant",
            "cells": "svg[data-chart=storylines] rect.cell",
            "convergences": "svg[data-chart=storylines] rect.convergence",
            "active_counts": "svg[data-chart=storylines] rect.active-count",
            "threads": "svg[data-chart=foreshadowing] g.thread",
            "overdue": "svg[data-chart=foreshadowing] g.thread.overdue",
            "resolved": "svg[data-chart=foreshadowing] g.thread.resolved",
            "members": "svg[data-chart=characters] g.member",
            "heat": "svg[data-chart=characters] rect.heat",
            "retired_spans": "svg[data-chart=characters] rect.retired-span",
            "cost_bars": "svg[data-chart=cost] g.cost-bar",
            "prd_lines": "svg[data-chart=cost] line.prd-line",
            "cumulative": "svg[data-chart=cost-cumulative] path.cumulative",
            "prd_cumulative": "svg[data-chart=cost-cumulative] path.prd-cumulative",
            "token_paths": "svg[data-chart=tokens] path.tok",
            "style_points": "svg[data-chart=style] circle.pt",
            "charts": "svg.chart",
        },
        "fills": {
            "overdue": "svg[data-chart=foreshadowing] g.thread.overdue rect.span",
            "open": "svg[data-chart=foreshadowing] g.thread.open rect.span",
            "bars": "svg[data-chart=progress] rect.bar",
        },
        // The marks that carry meaning: 3:1 against the chart's white.
        "marks": {
            "bars": "svg[data-chart=progress] rect.bar",
            "heat_lowest": "svg[data-chart=characters] rect.heat.h1",
            "cells": "svg[data-chart=storylines] rect.cell",
            "lint": "svg[data-chart=lint] rect.lint-bar",
            "spans": "svg[data-chart=foreshadowing] rect.span",
            "dims": "svg[data-chart=dimensions] rect.dim",
            "cost": "svg[data-chart=cost] rect.seg",
        }
    });
    let checks_file = work.path().join("checks.json");
    std::fs::write(&checks_file, checks.to_string()).unwrap();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/e2e/dashboard-check.mjs");
    let out_file = work.path().join("out.json");
    let err_file = work.path().join("err.txt");
    let mut cmd = Command::new(node);
    cmd.arg(&script)
        .arg("--chromium")
        .arg(chromium)
        .arg("--file")
        .arg(file)
        .arg("--screenshot")
        .arg(&shot)
        .arg("--profile")
        .arg(work.path().join("profile"))
        .arg("--checks")
        .arg(&checks_file)
        .args(["--width", &width.to_string()])
        .args(["--mobile", if width < 600 { "1" } else { "0" }])
        .args(["--lifetime", "80"])
        .env("HOME", work.path())
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(&out_file).unwrap())
        .stderr(std::fs::File::create(&err_file).unwrap())
        .process_group(0);
    let mut child = Reaped(cmd.spawn().expect("start node"));
    let start = Instant::now();
    let status = loop {
        if let Some(s) = child.0.try_wait().unwrap() {
            break s;
        }
        assert!(
            start.elapsed() < PAGE_TIMEOUT,
            "the browser check of {name} did not finish in {PAGE_TIMEOUT:?}"
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    drop(child);
    let err = std::fs::read_to_string(&err_file).unwrap_or_default();
    assert!(status.success(), "dashboard-check failed for {name}: {err}");
    let seen: Value = serde_json::from_str(&std::fs::read_to_string(&out_file).unwrap())
        .unwrap_or_else(|e| panic!("no report from dashboard-check ({e}): {err}"));
    // Nothing went wrong and nothing was fetched: the only request is the file itself.
    assert_eq!(seen["console"], json!([]), "{name}: console messages");
    assert_eq!(seen["exceptions"], json!([]), "{name}: exceptions");
    let (errors, others): (Vec<&Value>, Vec<&Value>) = seen["log"]
        .as_array()
        .unwrap()
        .iter()
        .partition(|l| l["level"] == "error");
    assert!(errors.is_empty(), "{name}: browser log: {errors:?}");
    if !others.is_empty() {
        eprintln!("{name}: browser log (not errors): {others:?}");
    }
    let url = seen["url"].as_str().unwrap();
    let requests: Vec<&str> = seen["requests"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r.as_str().unwrap())
        .filter(|r| *r != url)
        .collect();
    assert!(requests.is_empty(), "{name}: network requests {requests:?}");
    assert_eq!(seen["failed"], json!([]), "{name}");
    assert!(
        seen["screenshot"].as_u64().unwrap() > 10_000,
        "{name}: screenshot"
    );
    assert!(shot.is_file());
    assert!(
        seen["font"]
            .as_str()
            .unwrap()
            .starts_with("\"PingFang SC\""),
        "{}",
        seen["font"]
    );
    // The page fits the window's width (the charts scale or scroll in their box, nothing
    // else overflows).
    assert!(
        seen["width"].as_u64().unwrap() <= u64::from(width),
        "{name}: {}",
        seen["width"]
    );
    readable(&seen, &name, width);
    eprintln!(
        "dashboard in Chromium ({name}): {} charts, loaded in {} ms, page {} px high, screenshot {} bytes at {}",
        seen["counts"]["charts"],
        seen["load_ms"],
        seen["height"],
        seen["screenshot"],
        shot.display()
    );
    seen
}

/// What a reader sees, measured in the browser: chart text at least 11 px (12 on a desktop),
/// no two chart labels overlapping, none cut off, every text at WCAG AA contrast, the marks
/// that carry meaning at 3:1.
fn readable(seen: &Value, name: &str, width: u32) {
    let font = seen["chart_font"]["min"].as_f64().unwrap_or(0.0);
    let least = if width < 600 { 11.0 } else { 12.0 };
    assert!(
        font >= least,
        "{name}: chart text of {font:.2} px: {}",
        seen["chart_font"]
    );
    assert_eq!(
        seen["overlap_count"], 0,
        "{name}: overlapping labels {}",
        seen["overlaps"]
    );
    assert_eq!(seen["clipped"], json!([]), "{name}: labels cut off");
    assert_eq!(
        seen["contrast"]["failures"],
        json!([]),
        "{name}: text under WCAG AA contrast"
    );
    // Printed, no section is split across pages.
    let printed = seen["print_break_inside"].as_array().unwrap();
    assert!(
        !printed.is_empty() && printed.iter().all(|b| b == "avoid"),
        "{name}: {printed:?}"
    );
    for (mark, ratio) in seen["marks"].as_object().unwrap() {
        if let Some(r) = ratio.as_f64() {
            assert!(r >= 3.0, "{name}: {mark} marks at {r:.2}:1");
        }
    }
    eprintln!(
        "dashboard in Chromium ({name}): smallest chart text {font:.2} px, lowest text contrast {:.2}:1, no overlapping or cut labels",
        seen["contrast"]["min"].as_f64().unwrap_or(0.0)
    );
}

const RED: &str = "rgb(192, 22, 27)";

/// A synthetic book with a history of `chapters` chapters, one character retired at its end,
/// its dashboard made: (the book, its envelope).
fn retired_synth(t: &Path, chapters: u32) -> (PathBuf, Value) {
    let book = synth(t, chapters);
    let out = novel(&book, &["retire", "apply", "gu-shou"]);
    assert_eq!(code(&out), 0, "{}{}", stdout(&out), stderr(&out));
    let (c, env, html) = dashboard(&book, &[]);
    assert_eq!(c, 0, "{env}");
    assert!(html.len() < 3 * 1024 * 1024, "{} bytes", html.len());
    (book, env)
}

#[test]
fn the_dashboard_in_headless_chromium() {
    let Some((chromium, node)) = browser() else {
        return;
    };
    let t = tempfile::tempdir().unwrap();

    // The demo book, on a desktop and on a phone.
    let book = demo(t.path());
    let (c, _, _) = dashboard(&book, &[]);
    assert_eq!(c, 0);
    for width in [1440, 390] {
        let seen = load_in_browser(
            &chromium,
            &node,
            &book.join("dashboard.html"),
            "demo",
            width,
        );
        let n = &seen["counts"];
        assert_eq!(n["bars"], 3);
        assert_eq!(n["target_band"], 1);
        assert_eq!(n["dims"], 8);
        assert_eq!(n["pass_line"], 1);
        assert_eq!(n["moving"], 1);
        assert_eq!(n["lint_bars"], 3);
        assert_eq!(n["cells"], 3);
        assert_eq!(n["threads"], 2);
        assert_eq!(n["overdue"], 0);
        assert_eq!(n["members"], 3);
        assert_eq!(n["cost_bars"], 3);
        assert_eq!(n["prd_lines"], 2);
        assert_eq!(n["cumulative"], 1);
        // Three chapters: the verdict's one window (chapters 1–3).
        assert_eq!(n["style_points"], 2);
        assert_eq!(n["chapter_rows"], 3);
        // Each chapter from its bars, cell, cost and table row, and the one under the pass line.
        assert_eq!(n["chapter_links"], 3 * 5 + 1);
        for f in seen["fills"]["bars"].as_array().unwrap() {
            assert_ne!(f, RED);
        }
    }

    // A synthetic 2,000-chapter book with a history: every chart in runs of four chapters.
    let (book, _) = retired_synth(t.path(), 2000);
    for width in [1440, 390] {
        let seen = load_in_browser(
            &chromium,
            &node,
            &book.join("dashboard.html"),
            "synth-2000",
            width,
        );
        long_book_counts(&seen);
    }
}

/// The marks of the 2,000-chapter book.
fn long_book_counts(seen: &Value) {
    let n = &seen["counts"];
    // Progress: a bar per run of four chapters; every chapter in the table.
    assert_eq!(n["bars"], 500);
    assert_eq!(n["chapter_rows"], 2000);
    // Quality: the score line, its moving average, the pass line; a force-pass every 40
    // chapters; one revised chapter in 7 that was not forced.
    assert_eq!(n["overall"], 1);
    assert_eq!(n["moving"], 1);
    assert_eq!(n["pass_line"], 1);
    assert_eq!(n["forced"], 50);
    let revised = (1..=2000u32).filter(|c| c % 7 == 0 && c % 40 != 0).count();
    assert_eq!(n["revised"], revised);
    assert_eq!(n["vol_means"], 40);
    assert_eq!(n["dims"], 8);
    assert_eq!(n["lint_bars"], 500);
    // Storylines: five lanes, the dormant one hatched, forty volumes each with its
    // convergence event and its count of active lines.
    assert_eq!(n["lanes"], 5);
    assert_eq!(n["dormant_lanes"], 1);
    assert_eq!(n["convergences"], 40);
    assert_eq!(n["active_counts"], 40);
    // Foreshadowing: sixty rows (of 240 threads), the forty overdue first and red.
    assert_eq!(n["threads"], 60);
    assert_eq!(n["overdue"], 40);
    let overdue = seen["fills"]["overdue"].as_array().unwrap();
    assert!(overdue.iter().all(|f| f == RED), "{overdue:?}");
    assert!(
        seen["fills"]["open"]
            .as_array()
            .unwrap()
            .iter()
            .all(|f| f != RED)
    );
    // Characters: the cast of 24 with the retired one marked from its retirement.
    assert_eq!(n["members"], 24);
    assert!(n["heat"].as_u64().unwrap() > 500, "{}", n["heat"]);
    assert_eq!(n["retired_spans"], 1);
    // Cost: a stacked bar per run, the budget lines, cumulative against the budget's.
    assert_eq!(n["cost_bars"], 500);
    assert_eq!(n["prd_lines"], 2);
    assert_eq!(n["cumulative"], 1);
    assert_eq!(n["prd_cumulative"], 1);
    assert_eq!(n["token_paths"], 4);
    // Style: 400 windows of five chapters, two metrics each.
    assert_eq!(n["style_points"], 800);
    for id in [
        "progress",
        "quality",
        "storylines",
        "foreshadowing",
        "characters",
        "cost",
        "style",
    ] {
        assert_eq!(
            seen["sections"][id]["state"], "drawn",
            "{id}: {}",
            seen["sections"][id]
        );
    }
}
