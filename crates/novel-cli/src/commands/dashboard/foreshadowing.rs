//! Section 4 — each thread by its description, from planted to resolved (or to the current
//! chapter while open), over its planned range: overdue threads first and red, then the open
//! ones, then the resolved. Every thread is in the table below the chart.

use std::fmt::Write;

use novel_core::model::common::ForeshadowStatus;
use novel_store::dashboard::Thread;

use super::charts::{Book, Drawn, cell, folded_table, short};
use super::svg::{self, Axis, esc, n};

/// At most this many threads get a row of the chart (overdue and open ones first).
pub const MAX_THREAD_ROWS: usize = 60;
/// At most this many overdue threads are named in the summary.
const MAX_NAMED: usize = 8;
/// Room on the left for a description.
const LEFT: f64 = 236.0;
const ROW: f64 = 20.0;
const TOP: f64 = 6.0;

fn status_label(s: ForeshadowStatus) -> &'static str {
    match s {
        ForeshadowStatus::Planted => "已埋下",
        ForeshadowStatus::Advanced => "推进中",
        ForeshadowStatus::Resolved => "已回收",
    }
}

fn state(t: &Thread) -> &'static str {
    if t.resolved.is_some() {
        "resolved"
    } else if t.overdue {
        "overdue"
    } else {
        "open"
    }
}

/// A thread in words: `铜牌的来历（已埋下，第3章埋下，计划第5–8章回收，已逾期）`.
fn describe(t: &Thread) -> String {
    let mut tip = format!("{}（{}", t.description, status_label(t.status));
    if let Some(p) = t.planted {
        let _ = write!(tip, "，第{p}章埋下");
    }
    if let Some([a, z]) = t.target {
        let _ = write!(tip, "，计划第{a}–{z}章回收");
    }
    match (t.resolved, t.overdue) {
        (Some(r), _) => {
            let _ = write!(tip, "，第{r}章回收");
        }
        (None, true) => tip.push_str("，已逾期"),
        _ => {}
    }
    tip.push('）');
    tip
}

/// The section.
pub fn foreshadowing(b: &Book<'_>) -> Drawn {
    let d = b.data;
    if d.threads.is_empty() {
        return Drawn::empty("还没有伏笔：伏笔记录里还没有登记任何伏笔。");
    }
    let shown = &d.threads[..d.threads.len().min(MAX_THREAD_ROWS)];
    let resolved = d.threads.iter().filter(|t| t.resolved.is_some()).count();
    let overdue: Vec<&str> = d
        .threads
        .iter()
        .filter(|t| t.overdue)
        .map(|t| t.description.as_str())
        .collect();
    let mut summary = vec![format!(
        "{} 个伏笔：已回收 {resolved} 个，未回收 {} 个，逾期 {} 个（逾期的排在最前、标红）。",
        d.threads.len(),
        d.threads.len() - resolved,
        overdue.len()
    )];
    if !overdue.is_empty() {
        let more = if overdue.len() > MAX_NAMED {
            format!(" 等 {} 个（都在下面的表里）", overdue.len())
        } else {
            String::new()
        };
        let named = &overdue[..overdue.len().min(MAX_NAMED)];
        summary.push(format!("逾期：{}{more}。", named.join("；")));
    }
    if shown.len() < d.threads.len() {
        summary.push(format!(
            "图里画出前 {} 个，全部 {} 个在下面的表里。",
            shown.len(),
            d.threads.len()
        ));
    }
    Drawn {
        svgs: vec![chart(b, shown)],
        summary,
        html: vec![thread_table(d.threads.as_slice())],
        empty: None,
        legend: Drawn::legend_of(&[
            ("sw-open", "未回收"),
            ("sw-resolved", "已回收"),
            ("sw-overdue", "逾期"),
            ("sw-range", "计划回收区间"),
        ]),
    }
}

fn chart(b: &Book<'_>, threads: &[Thread]) -> String {
    let last = b.data.last_completed().max(1);
    let end = threads
        .iter()
        .flat_map(|t| [t.planted, t.resolved, t.target.map(|r| r[1])])
        .flatten()
        .fold(last, u32::max);
    let axis = Axis::with_left(1, end, LEFT);
    let bottom = TOP + ROW * threads.len() as f64;
    let mut s = svg::open("foreshadowing", bottom + 34.0, "伏笔");
    s.push_str(&svg::rect(
        "now",
        axis.x(last + 1) - 1.0,
        TOP,
        1.5,
        bottom - TOP,
        Some(&format!("已写到第{last}章")),
    ));
    for (i, t) in threads.iter().enumerate() {
        s.push_str(&row(t, &axis, TOP + ROW * i as f64, last));
    }
    s.push_str(&axis.labels(bottom));
    s.push_str("</svg>");
    s
}

/// One thread's row at `y`: its planned range, its span, the plant and resolve marks and its
/// description on the left.
fn row(t: &Thread, axis: &Axis, y: f64, last: u32) -> String {
    let mut s = format!(
        r#"<g class="thread {}" data-thread="{}"><title>{}</title>"#,
        state(t),
        esc(&t.id),
        esc(&describe(t))
    );
    if let Some([a, z]) = t.target {
        s.push_str(&svg::rect(
            "target",
            axis.x(a),
            y + 3.0,
            axis.x(z + 1) - axis.x(a),
            ROW - 6.0,
            None,
        ));
    }
    let from = t.planted.unwrap_or(1);
    let to = t.resolved.unwrap_or(last).max(from);
    s.push_str(&svg::rect(
        "span",
        axis.x(from),
        y + 7.0,
        axis.x(to + 1) - axis.x(from),
        6.0,
        None,
    ));
    for (class, at) in [("plant", t.planted), ("resolve", t.resolved)] {
        if let Some(c) = at {
            let _ = write!(
                s,
                r#"<circle class="{class}" cx="{}" cy="{}" r="3.5"/>"#,
                n(axis.mid(c)),
                n(y + 10.0)
            );
        }
    }
    let label = short(&t.description, 17);
    s.push_str(&svg::text(
        "thread-label",
        axis.x0 - 6.0,
        y + 14.0,
        "end",
        &label,
    ));
    s.push_str("</g>");
    s
}

/// Every thread, in the chart's order.
fn thread_table(threads: &[Thread]) -> String {
    let rows: Vec<Vec<String>> = threads
        .iter()
        .map(|t| {
            let status = if t.overdue {
                r#"<span class="overdue">已逾期</span>"#.to_string()
            } else {
                status_label(t.status).to_string()
            };
            vec![
                esc(&t.description),
                status,
                cell(t.planted),
                t.target.map_or("—".into(), |[a, z]| format!("{a}–{z}")),
                cell(t.resolved),
            ]
        })
        .collect();
    folded_table(
        &format!("全部 {} 个伏笔（逾期的在前）", threads.len()),
        &["伏笔", "状态", "埋下（章）", "计划回收（章）", "回收（章）"],
        &rows,
    )
}

#[cfg(test)]
mod tests {
    use super::super::charts::fixtures::{book, count, data, text};
    use super::*;

    #[test]
    fn threads_are_labelled_by_description_and_overdue_ones_come_first_in_red() {
        let (d, t) = (data(4), text(4));
        let drawn = foreshadowing(&book(&d, &t));
        let svg = &drawn.svgs[0];
        assert_eq!(
            count(svg, r#"<g class="thread overdue" data-thread="late">"#),
            1
        );
        assert_eq!(
            count(svg, r#"<g class="thread resolved" data-thread="done">"#),
            1
        );
        assert!(svg.find("late的描述").unwrap() < svg.find("done的描述").unwrap());
        assert!(
            !svg.contains(">late<"),
            "labelled by description, not id: {svg}"
        );
        assert_eq!(count(svg, r#"class="resolve""#), 1);
        assert!(drawn.summary[1].contains("late的描述"));
        assert!(drawn.html[0].contains("已逾期"));
    }
}
