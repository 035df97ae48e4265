//! Timings (not tests): `cargo bench -p novel-text`. Lint of a 3,000-字 chapter (target < 5 ms)
//! and of a generated 3,000,000-字 novel (target < 300 ms), release build; plus 字数 counting
//! and style metrics of the large text. Each figure is the median of several runs.

#![allow(clippy::print_stdout)]

use std::time::{Duration, Instant};

use novel_core::model::AiBlacklist;
use novel_core::model::settings::LintThresholds;
use novel_text::count::count;
use novel_text::lint::Linter;
use novel_text::metrics::StyleMetrics;
use novel_text::segment::Document;

const CLEAN: &str = include_str!("../../../tests/fixtures/text/clean-control.md");
const PLANTED: &str = include_str!("../../../tests/fixtures/text/planted-cliches.md");

/// Body paragraphs of the fixtures (headings dropped), repeated until `target` 字; with the
/// planted chapter the text holds ~15 findings per 1000 字 (far more than a real novel).
fn text_of(target: usize, planted: bool) -> String {
    let paragraphs: Vec<&str> = CLEAN
        .lines()
        .chain(PLANTED.lines().filter(|_| planted))
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .collect();
    let mut out = String::from("# 第一章 生成的长文\n\n");
    let mut n = 0;
    let mut i = 0;
    while n < target {
        let p = paragraphs[i % paragraphs.len()];
        out.push_str(p);
        out.push_str("\n\n");
        n += count(p).chars;
        i += 1;
    }
    out
}

fn median(mut runs: Vec<Duration>) -> Duration {
    runs.sort();
    runs[runs.len() / 2]
}

fn time<T>(runs: usize, mut f: impl FnMut() -> T) -> (Duration, T) {
    let mut times = Vec::new();
    let mut last = None;
    for _ in 0..runs {
        let t = Instant::now();
        last = Some(f());
        times.push(t.elapsed());
    }
    (median(times), last.unwrap())
}

fn main() {
    let list: AiBlacklist =
        serde_json::from_str(include_str!("../../../templates/ai-blacklist.json")).unwrap();
    let (build, linter) = time(5, || {
        Linter::new(&list, &[], LintThresholds::default()).unwrap()
    });
    println!(
        "compile blacklist + patterns: {:>9.3} ms",
        build.as_secs_f64() * 1e3
    );

    for (label, target, runs, planted) in [
        ("3,000-字 chapter, clean + planted", 3_000, 51, true),
        ("3,000,000-字 novel, clean + planted", 3_000_000, 5, true),
        ("3,000,000-字 novel, clean text only", 3_000_000, 5, false),
    ] {
        let text = text_of(target, planted);
        let zi = count(&text).chars;
        let (t_doc, doc) = time(runs, || Document::new(&text));
        let (t_lint, report) = time(runs, || linter.lint(&doc));
        let (t_all, _) = time(runs, || linter.lint(&Document::new(&text)));
        let (t_count, _) = time(runs, || count(&text));
        let (t_metrics, _) = time(runs, || StyleMetrics::of(&[&doc]));
        println!(
            "{label} ({zi} 字, {} findings): lint total {:.3} ms (prepare {:.3} ms + rules {:.3} ms); count {:.3} ms; style metrics {:.3} ms",
            report.findings.len(),
            t_all.as_secs_f64() * 1e3,
            t_doc.as_secs_f64() * 1e3,
            t_lint.as_secs_f64() * 1e3,
            t_count.as_secs_f64() * 1e3,
            t_metrics.as_secs_f64() * 1e3,
        );
    }
}
