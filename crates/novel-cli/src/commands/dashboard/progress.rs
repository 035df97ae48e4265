//! Section 1 — 字数 per chapter against the target band, by volume; the total, per volume and
//! the daily pace.

use std::collections::BTreeMap;

use novel_core::status::format_chars;
use novel_store::dashboard::DashboardData;

use super::charts::{Book, Drawn, Mark, NO_CHAPTERS, table};
use super::svg::{self, Axis, Scale};

const TOP: f64 = 30.0;
const BOTTOM: f64 = 200.0;

/// The section.
pub fn progress(b: &Book<'_>) -> Drawn {
    let Some(axis) = b.axis() else {
        return Drawn::empty(NO_CHAPTERS);
    };
    let d = b.data;
    let [tmin, tmax] = d.length_target;
    let off = b
        .chapters()
        .iter()
        .filter(|r| r.chars.is_some_and(|c| !in_target(c, d)))
        .count();
    let chars = &d.book.chars;
    let mut summary = vec![format!(
        "已写完 {} 章，总 {}（{} 字）；每章目标 {tmin}–{tmax} 字，{off} 章在目标之外。",
        b.chapters().len(),
        format_chars(chars.total),
        chars.total
    )];
    summary.push(pace(d));
    Drawn {
        svgs: vec![chart(b, &axis)],
        summary,
        html: vec![volume_table(d)],
        empty: None,
        legend: Drawn::legend_of(&[
            ("sw-bar", "每章字数"),
            ("sw-off", "在目标区间之外"),
            ("sw-target", "目标区间"),
            ("sw-vol", "分卷"),
        ]),
    }
}

fn in_target(c: u64, d: &DashboardData) -> bool {
    let [tmin, tmax] = d.length_target;
    c >= u64::from(tmin) && c <= u64::from(tmax)
}

/// The bars over the target band and the volumes.
fn chart(b: &Book<'_>, axis: &Axis) -> String {
    let d = b.data;
    let [tmin, tmax] = d.length_target;
    let max = b
        .chapters()
        .iter()
        .filter_map(|r| r.chars)
        .max()
        .unwrap_or(0)
        .max(u64::from(tmax)) as f64;
    let scale = Scale::to_round(0.0, max * 1.05, TOP, BOTTOM);
    let mut s = svg::open("progress", BOTTOM + 34.0, "每章字数");
    s.push_str(&volume_bands(d, axis));
    let (hi, lo) = (scale.y(f64::from(tmax)), scale.y(f64::from(tmin)));
    s.push_str(&svg::rect(
        "target-band",
        axis.x0,
        hi,
        axis.x1 - axis.x0,
        lo - hi,
        Some(&format!("目标字数 {tmin}–{tmax} 字")),
    ));
    s.push_str(&svg::hline("target-edge", axis.x0, axis.x1, hi));
    s.push_str(&svg::hline("target-edge", axis.x0, axis.x1, lo));
    s.push_str(&scale.grid(axis.x0, axis.x1, &|v| format!("{v:.0}")));
    for m in b.marks(axis) {
        s.push_str(&bar(b, axis, &scale, &m));
    }
    s.push_str(&svg::right_labels(
        axis.x1,
        BOTTOM - 2.0,
        &[
            (hi, format!("{tmax}"), "line-label target"),
            (lo, format!("{tmin}"), "line-label target"),
        ],
    ));
    s.push_str(&axis.labels(BOTTOM));
    s.push_str("</svg>");
    s
}

/// One mark: its chapter's 字数 (a run's mean), orange when outside the target.
fn bar(b: &Book<'_>, axis: &Axis, scale: &Scale, m: &Mark<'_>) -> String {
    let d = b.data;
    let (x, w) = axis.mark(m.first, m.last);
    let Some((mean, _)) = m.mean(|r| r.chars.map(|c| c as f64)) else {
        let tip = format!("{} 字数未知（正文读不了）", m.label());
        return b.linked(
            m,
            &svg::rect("bar unknown", x, BOTTOM - 2.0, w, 2.0, Some(&tip)),
        );
    };
    let off = m
        .rows
        .iter()
        .filter(|r| r.chars.is_some_and(|c| !in_target(c, d)))
        .count();
    let tip = if m.first == m.last {
        format!("{} {mean:.0}字（第{}卷）", m.label(), m.rows[0].volume)
    } else {
        format!("{} 平均 {mean:.0} 字，{off} 章在目标之外", m.label())
    };
    let y = scale.y(mean);
    let class = if off > 0 { "bar off" } else { "bar" };
    b.linked(m, &svg::rect(class, x, y, w, BOTTOM - y, Some(&tip)))
}

/// Volumes as alternating bands with a line at each start, labelled at the top where the
/// label fits (every volume is in the table below).
fn volume_bands(d: &DashboardData, axis: &Axis) -> String {
    let mut s = String::new();
    let mut labels = Vec::new();
    for (i, v) in d.volumes.iter().enumerate() {
        let (a, z) = (v.range[0].max(axis.first), v.range[1].min(axis.last));
        if a > z {
            continue;
        }
        let cls = if i % 2 == 0 {
            "vol-band"
        } else {
            "vol-band alt"
        };
        let (x, w) = (axis.x(a), axis.x(z + 1) - axis.x(a));
        s.push_str(&svg::rect(cls, x, TOP, w, BOTTOM - TOP, None));
        if a > axis.first {
            s.push_str(&format!(
                r#"<line class="vol-line" x1="{x}" y1="{}" x2="{x}" y2="{}"/>"#,
                svg::n(TOP),
                svg::n(BOTTOM),
                x = svg::n(x)
            ));
        }
        labels.push((x + 3.0, format!("第{}卷", v.volume)));
    }
    let boxes: Vec<(f64, f64)> = labels
        .iter()
        .map(|(x, t)| (*x, svg::text_width(t)))
        .collect();
    for ((x, t), keep) in labels.iter().zip(svg::thin(&boxes)) {
        if keep {
            s.push_str(&svg::text("vol-label", *x, TOP - 8.0, "start", t));
        }
    }
    s
}

/// 字数 per volume (every volume, whatever the chart could label).
fn volume_table(d: &DashboardData) -> String {
    let [tmin, tmax] = d.length_target;
    let rows: Vec<Vec<String>> = d
        .book
        .chars
        .per_volume
        .iter()
        .map(|v| {
            let off = d
                .chapters()
                .iter()
                .filter(|r| r.volume == v.volume)
                .filter(|r| r.chars.is_some_and(|c| !in_target(c, d)))
                .count();
            vec![
                format!("第{}卷", v.volume),
                v.chapters.to_string(),
                format_chars(v.chars),
                (v.chars / v.chapters.max(1) as u64).to_string(),
                off.to_string(),
            ]
        })
        .collect();
    table(
        &format!("分卷字数（目标每章 {tmin}–{tmax} 字）"),
        &["卷", "章数", "字数", "平均每章", "目标之外"],
        &rows,
    )
}

/// The daily pace from the pipeline logs' dates.
fn pace(d: &DashboardData) -> String {
    let mut by_day: BTreeMap<&str, u64> = BTreeMap::new();
    for r in d.chapters() {
        if let Some(day) = r.date.as_deref() {
            *by_day.entry(day).or_default() += r.chars.unwrap_or(0);
        }
    }
    let (Some((first, _)), Some((last, _))) = (by_day.first_key_value(), by_day.last_key_value())
    else {
        return "写作记录里没有日期，算不出每天写了多少。".to_string();
    };
    let written: u64 = by_day.values().sum();
    let days = by_day.len() as u64;
    let calendar = calendar_days(first, last).unwrap_or(days).max(1);
    format!(
        "写作日期 {first} 至 {last}：有提交的 {days} 天，平均每天 {} 字；按日历 {calendar} 天算，平均每天 {} 字。",
        written / days.max(1),
        written / calendar
    )
}

/// Days from `a` to `b` inclusive (`YYYY-MM-DD`), by the store's calendar
/// ([`novel_store::time::parse_iso`]).
fn calendar_days(a: &str, b: &str) -> Option<u64> {
    let day = |s: &str| novel_store::time::parse_iso(&format!("{}T00:00:00Z", s.get(0..10)?));
    let diff = day(b)?.checked_sub(day(a)?)? / 86_400;
    Some(diff + 1)
}

#[cfg(test)]
mod tests {
    use super::super::charts::fixtures::{book, count, data, text};
    use super::*;

    #[test]
    fn progress_draws_one_bar_per_chapter_and_the_target_band() {
        let (d, t) = (data(12), text(12));
        let drawn = progress(&book(&d, &t));
        let svg = &drawn.svgs[0];
        assert_eq!(count(svg, r#"<rect class="bar"#), 12);
        assert_eq!(count(svg, r#"class="target-band""#), 1);
        assert_eq!(count(svg, r#"<a href="chapters/chapter-012.md">"#), 1);
        assert!(svg.contains("第12章 3120字（第1卷）"), "{svg}");
        assert!(
            drawn.summary[0].starts_with("已写完 12 章"),
            "{:?}",
            drawn.summary
        );
        // Two chapters a day over six days.
        assert!(
            drawn.summary[1].contains("2026-01-01 至 2026-01-06"),
            "{:?}",
            drawn.summary
        );
    }

    #[test]
    fn a_long_book_is_drawn_in_runs_of_chapters() {
        let (d, t) = (data(1200), text(0));
        let drawn = progress(&book(&d, &t));
        let svg = &drawn.svgs[0];
        // 1,200 chapters in runs of 3: 400 marks, each linking to its first chapter's row.
        assert_eq!(count(svg, r#"<rect class="bar"#), 400);
        assert!(svg.contains(r##"<a href="#c1198">"##), "{svg}");
        assert!(svg.contains("第1198–1200章 平均"), "{svg}");
    }

    #[test]
    fn calendar_days_count_both_ends() {
        assert_eq!(calendar_days("2026-01-30", "2026-02-02"), Some(4));
        assert_eq!(calendar_days("2024-02-28", "2024-03-01"), Some(3));
    }
}
