//! Section 2 — the gate scores: each chapter's, their moving average and each volume's mean
//! on an axis fitted to the scores, against the pass line, with revisions and force-passes
//! marked and the chapters under the line listed; the eight dimensions' means; the blacklist
//! density per 千字 against its limit.

use std::fmt::Write;

use novel_core::gate::score_text;
use novel_core::model::evaluation::DIMENSIONS;
use novel_core::review::dimension_label;

use super::charts::{Book, Drawn, NO_CHAPTERS, cell, table};
use super::svg::{self, Axis, Scale, esc, n};

/// Chapters the moving average spans: 10, more in a long book (a fortieth of it, up to 50),
/// so that it shows the trend and not each chapter's ups and downs.
pub fn moving_span(chapters: usize) -> usize {
    (chapters / 40).clamp(10, 50) / 5 * 5
}

/// The section.
pub fn quality(b: &Book<'_>) -> Drawn {
    let Some(axis) = b.axis() else {
        return Drawn::empty(NO_CHAPTERS);
    };
    let d = b.data;
    let mut out = Drawn::default();
    let scores = &d.book.scores;
    if scores.scored_chapters == 0 {
        out.summary
            .push("还没有评分：评审打过分的章节会在这里画出来。".to_string());
    } else {
        out.svgs.push(score_chart(b, &axis));
        out.summary.push(score_summary(b));
        out.html.push(b.chapter_links(
            &scores.below_pass,
            &format!("低于通过线 {} 的章节", score_text(d.gate_pass)),
        ));
        out.html.push(volume_table(b));
        out.html.extend(dimension_table(b));
        out.legend = Drawn::legend_of(&[
            ("sw-score", "每章总分"),
            (
                "sw-moving",
                &format!("近 {} 章平均", moving_span(b.chapters().len())),
            ),
            ("sw-volmean", "每卷均分"),
            ("sw-pass", "通过线"),
            ("sw-revised", "修订过"),
            ("sw-forced", "强制通过"),
        ]);
    }
    if let Some(svg) = dimension_chart(b) {
        out.svgs.push(svg);
    }
    if b.text.is_empty() {
        out.summary
            .push("正文都读不了，算不出 AI 套话密度。".to_string());
    } else {
        let (svg, over) = lint_chart(b, &axis);
        out.svgs.push(svg);
        out.summary.push(format!(
            "AI 套话（黑名单）密度：{over} 章达到或超过上限每千字 {} 次。",
            n(d.lint_limit)
        ));
        out.legend
            .push(("sw-lint".into(), "套话密度（每千字）".into()));
        out.legend.push(("sw-lint-over".into(), "达到上限".into()));
    }
    if out.svgs.is_empty() {
        out.empty = Some(out.summary.join(""));
        out.summary.clear();
    }
    out
}

fn score_summary(b: &Book<'_>) -> String {
    let d = b.data;
    let s = &d.book.scores;
    let revised = b
        .chapters()
        .iter()
        .filter(|r| r.revisions > 0 && !r.force_passed)
        .count();
    let forced = b.chapters().iter().filter(|r| r.force_passed).count();
    format!(
        "{} 章有评分，均分 {}；{} 章低于通过线 {}（下面列出）；修订过 {revised} 章，强制通过 {forced} 章。",
        s.scored_chapters,
        s.average.map_or("—".into(), score_text),
        s.below_pass.len(),
        score_text(d.gate_pass)
    )
}

/// The value axis fitted to the scores and the pass line, on half points.
fn fitted(b: &Book<'_>, top: f64, bottom: f64) -> Scale {
    let scores = b.chapters().iter().filter_map(|r| r.score);
    let (lo, hi) = scores.fold((b.data.gate_pass, b.data.gate_pass), |(lo, hi), s| {
        (lo.min(s), hi.max(s))
    });
    let lo = ((lo - 0.1) * 2.0).floor() / 2.0;
    let hi = ((hi + 0.1) * 2.0).ceil() / 2.0;
    Scale {
        lo: lo.max(0.0),
        hi: hi.max(lo + 0.5),
        y_top: top,
        y_bottom: bottom,
    }
}

/// The mean of the `MOVING` scored chapters ending at each scored chapter.
fn moving_average(b: &Book<'_>, axis: &Axis, scale: &Scale) -> Vec<Option<(f64, f64)>> {
    let scored: Vec<(u32, f64)> = b
        .chapters()
        .iter()
        .filter_map(|r| r.score.map(|s| (r.chapter, s)))
        .collect();
    let span = moving_span(b.chapters().len());
    (0..scored.len())
        .map(|i| {
            let from = (i + 1).saturating_sub(span);
            let w = &scored[from..=i];
            let mean = w.iter().map(|(_, s)| s).sum::<f64>() / w.len() as f64;
            Some((axis.mid(scored[i].0), scale.y(mean)))
        })
        .collect()
}

fn score_chart(b: &Book<'_>, axis: &Axis) -> String {
    let d = b.data;
    let (top, bottom) = (28.0, 250.0);
    let scale = fitted(b, top, bottom);
    let mut s = svg::open("quality", bottom + 34.0, "各章评分");
    s.push_str(&svg::panel_title("各章门控总分（纵轴按分数范围放大）"));
    s.push_str(&scale.grid(axis.x0, axis.x1, &|v| format!("{v:.1}")));
    let py = scale.y(d.gate_pass);
    s.push_str(&svg::hline("pass-line", axis.x0, axis.x1, py));
    let points: Vec<Option<(f64, f64)>> = b
        .chapters()
        .iter()
        .map(|r| r.score.map(|v| (axis.mid(r.chapter), scale.y(v))))
        .collect();
    s.push_str(&svg::path("overall", &points, ""));
    s.push_str(&svg::path("moving", &moving_average(b, axis, &scale), ""));
    let mut right = vec![(
        py,
        format!("通过 {}", score_text(d.gate_pass)),
        "line-label pass",
    )];
    s.push_str(&volume_means(b, axis, &scale, &mut right));
    s.push_str(&revision_marks(b, axis, &scale));
    s.push_str(&svg::right_labels(axis.x1, bottom - 2.0, &right));
    s.push_str(&axis.labels(bottom));
    s.push_str("</svg>");
    s
}

/// Each volume's mean as a step across its chapters; the last volume's mean labelled at the
/// right.
fn volume_means(
    b: &Book<'_>,
    axis: &Axis,
    scale: &Scale,
    right: &mut Vec<(f64, String, &'static str)>,
) -> String {
    let mut s = String::new();
    let per = &b.data.book.scores.per_volume;
    for v in per {
        let Some(mean) = v.average else { continue };
        let rows: Vec<u32> = b
            .chapters()
            .iter()
            .filter(|r| r.volume == v.volume)
            .map(|r| r.chapter)
            .collect();
        let (Some(a), Some(z)) = (rows.first(), rows.last()) else {
            continue;
        };
        let y = scale.y(mean);
        let _ = write!(
            s,
            r#"<line class="vol-mean" x1="{}" y1="{y}" x2="{}" y2="{y}"><title>第{}卷 均分 {}（{} 章有评分，{} 章低于通过线）</title></line>"#,
            n(axis.x(*a)),
            n(axis.x(z + 1)),
            v.volume,
            score_text(mean),
            v.scored,
            v.below_pass,
            y = n(y)
        );
    }
    if let Some(v) = per.iter().rev().find(|v| v.average.is_some()) {
        let mean = v.average.unwrap_or(0.0);
        right.push((
            scale.y(mean),
            format!("本卷 {}", score_text(mean)),
            "line-label volmean",
        ));
    }
    s
}

/// Revised chapters (circles) and force-passes (diamonds), each linking to its chapter.
fn revision_marks(b: &Book<'_>, axis: &Axis, scale: &Scale) -> String {
    let mut s = String::new();
    for r in b.chapters() {
        let Some(v) = r.score else { continue };
        let (x, y) = (axis.mid(r.chapter), scale.y(v));
        let what = format!("第{}章 总分 {}", r.chapter, score_text(v));
        let mark = if r.force_passed {
            format!(
                r#"<path class="forced" d="M{} {}l5 5l-5 5l-5 -5z"><title>{}（强制通过）</title></path>"#,
                n(x),
                n(y - 5.0),
                esc(&what)
            )
        } else if r.revisions > 0 {
            format!(
                r#"<circle class="revised" cx="{}" cy="{}" r="3.5"><title>{}（修订 {} 次）</title></circle>"#,
                n(x),
                n(y),
                esc(&what),
                r.revisions
            )
        } else {
            continue;
        };
        s.push_str(&svg::link(&b.href(r.chapter), &mark));
    }
    s
}

/// Per volume: chapters, mean score, chapters under the pass line, revisions, force-passes.
fn volume_table(b: &Book<'_>) -> String {
    let rows: Vec<Vec<String>> = b
        .data
        .book
        .scores
        .per_volume
        .iter()
        .map(|v| {
            let of = || b.chapters().iter().filter(move |r| r.volume == v.volume);
            vec![
                format!("第{}卷", v.volume),
                v.scored.to_string(),
                v.average.map_or("—".into(), score_text),
                v.below_pass.to_string(),
                of().filter(|r| r.revisions > 0).count().to_string(),
                of().filter(|r| r.force_passed).count().to_string(),
            ]
        })
        .collect();
    table(
        "每卷评分",
        &["卷", "有评分", "均分", "低于通过线", "修订过", "强制通过"],
        &rows,
    )
}

/// The eight dimensions' means over the book and over the last volume, as bars against the
/// polish line (a dimension under it is weak); `None` when no evaluation was read.
fn dimension_chart(b: &Book<'_>) -> Option<String> {
    let d = b.data;
    let of = |volume: Option<u32>| -> Vec<&[f64; 8]> {
        b.chapters()
            .iter()
            .filter(|r| volume.is_none_or(|v| r.volume == v))
            .filter_map(|r| r.dimensions.as_ref())
            .collect()
    };
    let all = of(None);
    if all.is_empty() {
        return None;
    }
    let last_volume = b.chapters().last().map_or(1, |r| r.volume);
    let recent = of(Some(last_volume));
    let mean =
        |xs: &[&[f64; 8]], k: usize| xs.iter().map(|x| x[k]).sum::<f64>() / xs.len().max(1) as f64;
    let means: Vec<(f64, f64)> = (0..DIMENSIONS.len())
        .map(|k| (mean(&all, k), mean(&recent, k)))
        .collect();
    let bottom = DIM_TOP + DIM_ROW * DIMENSIONS.len() as f64;
    let mut s = svg::open("dimensions", bottom + 34.0, "八个维度的均分");
    s.push_str(&svg::text(
        "panel-title",
        DIM_LEFT,
        15.0,
        "start",
        &format!(
            "八个维度的均分：全书（深）与第{last_volume}卷（浅），虚线是偏低线 {}",
            score_text(d.gate_polish)
        ),
    ));
    s.push_str(&dimension_rows(&means, last_volume, d.gate_polish));
    let px = dim_x(d.gate_polish);
    let _ = write!(
        s,
        r#"<line class="polish-line" x1="{x}" y1="{}" x2="{x}" y2="{}"/>"#,
        n(DIM_TOP),
        n(bottom),
        x = n(px)
    );
    for v in [1.0, 2.0, 3.0, 4.0, 5.0] {
        let label = format!("{v:.0}");
        s.push_str(&svg::text(
            "tick",
            dim_x(v),
            bottom + 17.0,
            "middle",
            &label,
        ));
    }
    s.push_str("</svg>");
    Some(s)
}

/// The dimensions' means, over the book and per volume.
fn dimension_table(b: &Book<'_>) -> Option<String> {
    let mut volumes: Vec<u32> = b.chapters().iter().map(|r| r.volume).collect();
    volumes.dedup();
    let mean = |k: usize, v: Option<u32>| {
        let xs: Vec<f64> = b
            .chapters()
            .iter()
            .filter(|r| v.is_none_or(|v| r.volume == v))
            .filter_map(|r| r.dimensions.map(|d| d[k]))
            .collect();
        (!xs.is_empty()).then(|| score_text(xs.iter().sum::<f64>() / xs.len() as f64))
    };
    mean(0, None)?;
    let rows: Vec<Vec<String>> = DIMENSIONS
        .iter()
        .enumerate()
        .map(|(k, (key, _))| {
            let mut row = vec![dimension_label(key).to_string(), cell(mean(k, None))];
            row.extend(volumes.iter().map(|v| cell(mean(k, Some(*v)))));
            row
        })
        .collect();
    let heads: Vec<String> = volumes.iter().map(|v| format!("第{v}卷")).collect();
    let mut head = vec!["维度", "全书"];
    head.extend(heads.iter().map(String::as_str));
    Some(table("八个维度的均分", &head, &rows))
}

const DIM_LEFT: f64 = 130.0;
const DIM_TOP: f64 = 30.0;
const DIM_ROW: f64 = 26.0;

/// Where score `v` (1–5) lies on the dimension chart.
fn dim_x(v: f64) -> f64 {
    DIM_LEFT + (v - 1.0) / 4.0 * (svg::WIDTH - svg::RIGHT - DIM_LEFT)
}

/// Each dimension's label and its two bars (the book's mean, the last volume's).
fn dimension_rows(means: &[(f64, f64)], last_volume: u32, polish: f64) -> String {
    let mut s = String::new();
    for (k, ((key, _), (whole, vol))) in DIMENSIONS.iter().zip(means).enumerate() {
        let y = DIM_TOP + DIM_ROW * k as f64;
        let label = dimension_label(key);
        s.push_str(&svg::text(
            "dim-label",
            DIM_LEFT - 6.0,
            y + 15.0,
            "end",
            label,
        ));
        let weak = if *whole < polish { " weak" } else { "" };
        let tip = format!("{label} 全书均分 {}", score_text(*whole));
        let w = dim_x(*whole) - DIM_LEFT;
        s.push_str(&svg::rect(
            &format!("dim d{k}{weak}"),
            DIM_LEFT,
            y + 3.0,
            w,
            9.0,
            Some(&tip),
        ));
        let tip = format!("{label} 第{last_volume}卷均分 {}", score_text(*vol));
        let w = dim_x(*vol) - DIM_LEFT;
        s.push_str(&svg::rect(
            "dim-recent",
            DIM_LEFT,
            y + 13.0,
            w,
            7.0,
            Some(&tip),
        ));
    }
    s
}

/// The blacklist density bars; returns the chart and how many chapters reach the limit.
fn lint_chart(b: &Book<'_>, axis: &Axis) -> (String, usize) {
    let d = b.data;
    let density = |n: u32| b.text.get(&n).map(|t| t.density());
    let over = b
        .chapters()
        .iter()
        .filter(|r| density(r.chapter).is_some_and(|v| v >= d.lint_limit))
        .count();
    let max = b
        .chapters()
        .iter()
        .filter_map(|r| density(r.chapter))
        .fold(d.lint_limit * 1.2, f64::max);
    let (top, bottom) = (28.0, 140.0);
    let scale = Scale::to_round(0.0, max, top, bottom);
    let mut s = svg::open("lint", bottom + 34.0, "AI 套话密度");
    s.push_str(&svg::panel_title("AI 套话密度（每千字几次）"));
    s.push_str(&scale.grid(axis.x0, axis.x1, &|v| n(v)));
    for m in b.marks(axis) {
        let vals: Vec<f64> = m.rows.iter().filter_map(|r| density(r.chapter)).collect();
        let Some(top_v) = vals.iter().copied().reduce(f64::max) else {
            continue;
        };
        let hit = vals.iter().any(|v| *v >= d.lint_limit);
        let (x, w) = axis.mark(m.first, m.last);
        let y = scale.y(top_v);
        let tip = if m.first == m.last {
            format!("{} 套话 {top_v:.2} 次/千字", m.label())
        } else {
            format!("{} 最高 {top_v:.2} 次/千字", m.label())
        };
        let class = if hit { "lint-bar over" } else { "lint-bar" };
        s.push_str(&b.linked(&m, &svg::rect(class, x, y, w, bottom - y, Some(&tip))));
    }
    let ly = scale.y(d.lint_limit);
    s.push_str(&svg::hline("limit-line", axis.x0, axis.x1, ly));
    s.push_str(&svg::right_labels(
        axis.x1,
        bottom - 2.0,
        &[(ly, format!("上限 {}", n(d.lint_limit)), "line-label limit")],
    ));
    s.push_str(&axis.labels(bottom));
    s.push_str("</svg>");
    (s, over)
}

#[cfg(test)]
mod tests {
    use super::super::charts::fixtures::{book, count, data, text};
    use super::*;

    #[test]
    fn quality_marks_revisions_force_passes_the_pass_line_and_the_moving_average() {
        let (d, t) = (data(6), text(6));
        let drawn = quality(&book(&d, &t));
        let svg = &drawn.svgs[0];
        assert_eq!(count(svg, r#"<circle class="revised""#), 1, "{svg}");
        assert_eq!(count(svg, r#"<path class="forced""#), 1);
        assert_eq!(count(svg, r#"class="pass-line""#), 1);
        assert_eq!(count(svg, r#"<path class="moving""#), 1);
        // The pass label sits in the right margin, outside the plot.
        assert!(svg.contains(r#"class="line-label pass" x="928""#), "{svg}");
        // Scores 3.5–4.1 and the pass line 4.0: the axis runs 3.0–4.5, not 1–5.
        assert!(
            svg.contains(">3.0</text>") && svg.contains(">4.5</text>"),
            "{svg}"
        );
        assert!(!svg.contains(">1.0</text>"), "{svg}");
        // Eight dimensions.
        assert_eq!(count(&drawn.svgs[1], r#"<rect class="dim d"#), 8);
        // Density = 3c hits per 3.1 千字: chapters 4 … 6 reach 3.
        let lint = &drawn.svgs[2];
        assert_eq!(count(lint, r#"class="lint-bar"#), 6);
        assert_eq!(count(lint, r#"class="lint-bar over""#), 3);
        // The chapters under the pass line, listed with links.
        let below = drawn.html.join("");
        for c in [1, 3, 4, 6] {
            assert!(
                below.contains(&format!(r#"chapter-{c:03}.md">{c}</a>"#)),
                "{below}"
            );
        }
    }
}
