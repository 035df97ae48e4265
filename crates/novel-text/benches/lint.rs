//! Timings (not tests): `cargo bench -p novel-text --features jieba` (the CLI's build: the
//! names check reads word boundaries with the segmenter). Lint of a 3,000-字 chapter (target
//! < 5 ms) and of a generated 3,000,000-字 novel (target < 300 ms), release build; plus 字数
//! counting and style metrics of the large text. Each figure is the median of several runs.
//!
//! Then the bad inputs, each of which must give an answer in time that grows with its size,
//! not with its square: a 200,000-字 chapter without a single punctuation mark (lint and names
//! check), a cast of 10,000 aliases (names check of a chapter), an outline of one 1 MB line.
//!
//! With `NOVEL_BENCH_BOOK=<book.txt>` (a whole novel with 第N回/第N章 headings, e.g. a
//! 120-回 classic) and optionally `NOVEL_BENCH_CAST=<cast.json>` (a JSON array of
//! `{"display_name", "aliases"}`), it also times the names check over every chapter of that
//! book, as `novel check names --all` runs it.

#![allow(clippy::print_stdout)]

use std::time::{Duration, Instant};

use novel_core::model::AiBlacklist;
use novel_core::model::settings::LintThresholds;
use novel_text::count::count;
use novel_text::lint::Linter;
use novel_text::metrics::StyleMetrics;
use novel_text::names::{KnownName, NameIndex};
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
    bad_inputs(&linter);
    book();
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

/// A cast of `n` registered people, each with a display name and one alias.
fn cast(n: usize) -> NameIndex {
    const SURNAMES: &str = "王李张刘陈杨黄赵吴周徐孙马朱胡郭何林罗高郑梁谢宋唐许韩冯邓曹";
    const GIVEN: &str = "伟刚勇毅俊峰强军平保东文辉力明永健世广志义兴良海山仁波宁贵福生龙元";
    let s: Vec<char> = SURNAMES.chars().collect();
    let g: Vec<char> = GIVEN.chars().collect();
    let mut names = Vec::new();
    for i in 0..n / 2 {
        let display = format!(
            "{}{}{}",
            s[i % s.len()],
            g[(i / s.len()) % g.len()],
            g[(i / (s.len() * g.len()) + i) % g.len()]
        );
        let alias = format!("阿{}{}", g[i % g.len()], g[(i / g.len()) % g.len()]);
        for name in [display.clone(), alias] {
            names.push(KnownName {
                name,
                entity: format!("c{i}"),
                display: display.clone(),
            });
        }
    }
    NameIndex::new(names)
}

fn bad_inputs(linter: &Linter) {
    // One paragraph of 200,000 字, no punctuation: one sentence, one paragraph.
    let body: String = CLEAN
        .chars()
        .filter(|c| novel_text::count::is_han(*c))
        .cycle()
        .take(200_000)
        .collect();
    for (label, zi) in [("100,000", 100_000), ("200,000", 200_000)] {
        let text: String = body.chars().take(zi).collect();
        let (t_lint, r) = time(3, || linter.lint(&Document::new(&text)));
        let index = cast(60);
        let (t_names, issues) = time(3, || index.check(&Document::new(&text)));
        println!(
            "bad input: {label} 字 without punctuation: lint {:.1} ms (pass: {}), names check {:.1} ms ({} findings)",
            ms(t_lint),
            r.summary.pass,
            ms(t_names),
            issues.len()
        );
    }
    // A cast of 10,000 aliases against a 3,000-字 chapter.
    let chapter = text_of(3_000, true);
    for n in [1_000, 10_000] {
        let (t_index, index) = time(3, || cast(n));
        let doc = Document::new(&chapter);
        let (t_check, issues) = time(5, || index.check(&doc));
        println!(
            "bad input: {n} registered names: index {:.1} ms, names check of a 3,000-字 chapter {:.1} ms ({} findings)",
            ms(t_index),
            ms(t_check),
            issues.len()
        );
    }
    // An outline that is one 1 MB line (and one of 0.5 MB, to see the growth).
    for size in [500_000, 1_000_000] {
        let mut line = String::new();
        while line.len() < size {
            line.push_str("- 地点：青云山，第1章 状态变化：林枫受伤；");
        }
        let text = format!("# 第 1 卷\n\n## 第1章 开端\n{line}\n");
        let (t, parsed) = time(3, || novel_core::context::outline::parse(&text));
        println!(
            "bad input: outline of one {} KB line: parse {:.1} ms ({})",
            text.len() / 1000,
            ms(t),
            match parsed {
                Ok(o) => format!("{} chapters", o.chapters.len()),
                Err(e) => format!("error: {e}"),
            }
        );
    }
}

/// The names check over every chapter of `NOVEL_BENCH_BOOK`, with `NOVEL_BENCH_CAST`.
fn book() {
    let Ok(path) = std::env::var("NOVEL_BENCH_BOOK") else {
        println!(
            "names on a whole book: set NOVEL_BENCH_BOOK=<book.txt> (and NOVEL_BENCH_CAST=<cast.json>)"
        );
        return;
    };
    let text = std::fs::read_to_string(&path)
        .unwrap()
        .replace("\r\n", "\n");
    let split = novel_text::chapters::split(&text, &path, Default::default());
    let chapters: Vec<&str> = split
        .sections
        .iter()
        .filter(|s| s.number.is_some())
        .map(|s| s.body.as_str())
        .collect();
    let mut names = Vec::new();
    if let Ok(cast) = std::env::var("NOVEL_BENCH_CAST") {
        let list: Vec<serde_json::Value> =
            serde_json::from_str(&std::fs::read_to_string(cast).unwrap()).unwrap();
        for c in list {
            let display = c["display_name"].as_str().unwrap().to_string();
            let aliases = c["aliases"].as_array().cloned().unwrap_or_default();
            for name in std::iter::once(display.clone()).chain(
                aliases
                    .iter()
                    .filter_map(|a| a.as_str().map(str::to_string)),
            ) {
                names.push(KnownName {
                    name,
                    entity: display.clone(),
                    display: display.clone(),
                });
            }
        }
    }
    let index = NameIndex::new(names);
    let zi: usize = chapters.iter().map(|c| count(c).chars).sum();
    let (t, found) = time(3, || {
        chapters
            .iter()
            .map(|c| index.check(&Document::new(c)).len())
            .sum::<usize>()
    });
    println!(
        "names check of {} chapters ({zi} 字, {} registered names, segmenter: {}): {:.0} ms ({found} findings)",
        chapters.len(),
        index.names().len(),
        if cfg!(feature = "jieba") {
            "jieba"
        } else {
            "none"
        },
        ms(t)
    );
}
