//! Section 7 — the style against its baseline: average sentence length and dialogue ratio per
//! window of `style_drift.window` chapters, as deviations from `style-profile.json`, against
//! the drift thresholds. The windows end at the last chapter, so the last point is the window
//! the verdict is taken over; the verdict itself is the book's figure (`novel_core::drift`, with
//! the correction on record), the same `novel status` and `novel style drift` print.

use std::fmt::Write;

use novel_core::drift::StyleSample;
use novel_store::dashboard::StyleBase;

use super::charts::{Book, Drawn, folded_table, pct};
use super::svg::{self, Axis, Scale, n};

/// A style window: chapters `range`, average sentence length and dialogue ratio.
#[derive(Debug, Clone, PartialEq)]
pub struct Window {
    pub range: [u32; 2],
    pub avg_sentence_length: f64,
    pub dialogue_ratio: f64,
}

/// Windows of `size` chapter numbers ending at the last committed chapter, oldest first; a
/// window is drawn when every committed chapter in it could be read (the first, shorter one
/// of the book is left out). Each is measured as `novel style drift` measures its window.
pub fn windows(b: &Book<'_>, size: u32) -> Vec<Window> {
    let size = size.max(1);
    let Some(last) = b.chapters().last().map(|r| r.chapter) else {
        return Vec::new();
    };
    let first = b.chapters()[0].chapter;
    let mut out = Vec::new();
    // Windows of chapter numbers, newest first, down to the book's first chapter.
    let mut end = last;
    while end >= first {
        let start = end.saturating_sub(size - 1).max(1);
        let rows: Vec<u32> = b
            .chapters()
            .iter()
            .map(|r| r.chapter)
            .filter(|c| (start..=end).contains(c))
            .collect();
        let samples: Vec<&StyleSample> = rows
            .iter()
            .filter_map(|c| b.text.get(c).map(|t| &t.style))
            .collect();
        // The last window is the verdict's even when the book is shorter than a window.
        let whole = end == last || end - start + 1 == size;
        if whole && !samples.is_empty() && samples.len() == rows.len() {
            let w = StyleSample::sum(samples);
            out.push(Window {
                range: [start, end],
                avg_sentence_length: w.avg_sentence_length(),
                dialogue_ratio: w.dialogue_ratio(),
            });
        }
        if start <= 1 {
            break;
        }
        end = start - 1;
    }
    out.reverse();
    out
}

/// One metric of the chart: (class, label, baseline, threshold, the window's value).
type Series = (
    &'static str,
    &'static str,
    Option<f64>,
    f64,
    fn(&Window) -> f64,
);

fn series(st: &StyleBase) -> [Series; 2] {
    [
        (
            "sentence",
            "平均句长",
            st.avg_sentence_length,
            st.sentence_threshold,
            |w| w.avg_sentence_length,
        ),
        (
            "dialogue",
            "对话占比",
            st.dialogue_ratio,
            st.dialogue_threshold,
            |w| w.dialogue_ratio,
        ),
    ]
}

/// The section.
pub fn style(b: &Book<'_>) -> Drawn {
    let st = &b.data.style;
    if st.avg_sentence_length.is_none() && st.dialogue_ratio.is_none() {
        return Drawn::empty(
            "文风档案里还没有平均句长和对话占比的基线：在 /novel:start 里提取或选定文风之后，这里才有对照。",
        );
    }
    let ws = windows(b, st.window);
    if ws.is_empty() {
        return Drawn::empty("正文都读不了，看不出文风的变化。");
    }
    let mut summary = vec![verdict(b)];
    let drifted = ws
        .iter()
        .flat_map(|w| {
            series(st)
                .map(|(_, _, base, thr, get)| base.is_some_and(|b| ((get(w) - b) / b).abs() > thr))
        })
        .filter(|x| *x)
        .count();
    summary.push(format!(
        "{} 个 {} 章的窗口，{drifted} 个点超出阈值（平均句长 ±{:.0}%，对话占比 ±{:.0}%）。",
        ws.len(),
        st.window,
        st.sentence_threshold * 100.0,
        st.dialogue_threshold * 100.0
    ));
    Drawn {
        svgs: vec![chart(b, &ws)],
        summary,
        html: vec![window_table(st, &ws)],
        empty: None,
        legend: Drawn::legend_of(&[
            ("sw-sentence", "平均句长偏离"),
            ("sw-dialogue", "对话占比偏离"),
            ("sw-drifted", "超出阈值"),
        ]),
    }
}

/// The verdict over the last window, as every surface says it.
fn verdict(b: &Book<'_>) -> String {
    let d = &b.data.book.drift;
    let mut line = match (d.status, d.window) {
        (Some(_), Some([a, z])) => {
            let parts: Vec<String> = d
                .metrics
                .iter()
                .map(|m| {
                    let name = novel_store::figures::drift::metric_label(&m.name);
                    format!("{name}偏离 {:.0}%", m.deviation * 100.0)
                })
                .collect();
            format!("结论：{}（第{a}–{z}章：{}）", d.label, parts.join("，"))
        }
        _ => format!(
            "结论：{}（{}）",
            d.label,
            d.unmeasured.as_deref().unwrap_or("")
        ),
    };
    if d.correction_active {
        line.push_str("；纠偏指令生效中，写作与润色会照着它调整。");
    } else {
        line.push('。');
    }
    line
}

fn chart(b: &Book<'_>, ws: &[Window]) -> String {
    let st = &b.data.style;
    let first = b.chapters().first().map_or(1, |r| r.chapter);
    let last = b.chapters().last().map_or(first, |r| r.chapter);
    let axis = Axis::new(first, last);
    let mut max_dev: f64 = 0.3;
    for (_, _, base, thr, get) in series(st) {
        if let Some(base) = base {
            max_dev = max_dev.max(thr * 1.2);
            for w in ws {
                max_dev = max_dev.max(((get(w) - base) / base).abs());
            }
        }
    }
    let lim = svg::nice_step(max_dev / 2.0) * 2.0;
    let lim = if lim < max_dev { lim * 2.0 } else { lim };
    let (top, bottom) = (28.0, 210.0);
    let scale = Scale {
        lo: -lim,
        hi: lim,
        y_top: top,
        y_bottom: bottom,
    };
    let mut s = svg::open("style", bottom + 34.0, "文风漂移");
    s.push_str(&svg::panel_title("相对文风基线的偏离（每个点是一个窗口）"));
    s.push_str(&scale.grid(axis.x0, axis.x1, &|v| format!("{:+.0}%", v * 100.0)));
    s.push_str(&svg::hline("zero-line", axis.x0, axis.x1, scale.y(0.0)));
    let mut labels = Vec::new();
    for series in series(st) {
        s.push_str(&metric(&axis, &scale, ws, series, &mut labels));
    }
    s.push_str(&svg::right_labels(axis.x1, bottom - 2.0, &labels));
    s.push_str(&axis.labels(bottom));
    s.push_str("</svg>");
    s
}

/// One metric's threshold lines, its line through the windows and a point per window.
fn metric(
    axis: &Axis,
    scale: &Scale,
    ws: &[Window],
    (key, label, base, thr, get): Series,
    labels: &mut Vec<(f64, String, &'static str)>,
) -> String {
    let Some(base) = base else {
        return String::new();
    };
    let mut s = String::new();
    for sign in [1.0, -1.0] {
        s.push_str(&svg::hline(
            &format!("threshold {key}"),
            axis.x0,
            axis.x1,
            scale.y(sign * thr),
        ));
    }
    let points: Vec<Option<(f64, f64)>> = ws
        .iter()
        .map(|w| {
            let mid = (axis.x(w.range[0]) + axis.x(w.range[1] + 1)) / 2.0;
            Some((mid, scale.y((get(w) - base) / base)))
        })
        .collect();
    s.push_str(&svg::path(&format!("drift {key}"), &points, ""));
    for (w, (x, y)) in ws.iter().zip(points.iter().flatten()) {
        let dev = (get(w) - base) / base;
        let value = if key == "sentence" {
            format!("{:.1} 字（基线 {} 字）", get(w), n(base))
        } else {
            format!("{:.0}%（基线 {:.0}%）", get(w) * 100.0, base * 100.0)
        };
        let _ = write!(
            s,
            r#"<circle class="pt {key}{}" cx="{}" cy="{}" r="3"><title>第{}–{}章 {label} {value}，偏离 {}</title></circle>"#,
            if dev.abs() > thr { " drifted" } else { "" },
            n(*x),
            n(*y),
            w.range[0],
            w.range[1],
            pct(dev)
        );
    }
    if let Some(w) = ws.last() {
        let dev = (get(w) - base) / base;
        let short = if key == "sentence" {
            "句长"
        } else {
            "对话"
        };
        labels.push((scale.y(dev), format!("{short} {}", pct(dev)), "line-label"));
    }
    s
}

/// Every window with both metrics and their deviations, newest first.
fn window_table(st: &StyleBase, ws: &[Window]) -> String {
    let dev = |v: f64, base: Option<f64>| base.map_or("—".into(), |b| pct((v - b) / b));
    let rows: Vec<Vec<String>> = ws
        .iter()
        .rev()
        .map(|w| {
            vec![
                format!("第{}–{}章", w.range[0], w.range[1]),
                format!("{:.1}", w.avg_sentence_length),
                dev(w.avg_sentence_length, st.avg_sentence_length),
                format!("{:.0}%", w.dialogue_ratio * 100.0),
                dev(w.dialogue_ratio, st.dialogue_ratio),
            ]
        })
        .collect();
    let base = |b: Option<f64>, f: &dyn Fn(f64) -> String| b.map_or("无基线".into(), f);
    let len = format!(
        "平均句长（基线 {}）",
        base(st.avg_sentence_length, &|b| format!("{b:.1}"))
    );
    let ratio = format!(
        "对话占比（基线 {}）",
        base(st.dialogue_ratio, &|b| format!("{:.0}%", b * 100.0))
    );
    folded_table(
        &format!("每个窗口的文风（{} 个，新的在前）", ws.len()),
        &["章节", &len, "偏离", &ratio, "偏离"],
        &rows,
    )
}

#[cfg(test)]
mod tests {
    use super::super::charts::fixtures::{count, data, text};
    use super::*;

    #[test]
    fn style_windows_end_at_the_last_chapter() {
        let (d, t) = (data(12), text(12));
        let b = Book {
            data: &d,
            text: &t,
            chapter_href: "",
        };
        let ws = windows(&b, 5);
        // 8–12 and 3–7; chapters 1–2 make no whole window.
        assert_eq!(ws.len(), 2);
        assert_eq!(ws[1].range, [8, 12]);
        assert_eq!(ws[0].range, [3, 7]);
        // 13,000 text characters in 750 sentences (chapters 3–7: 130 … 170).
        assert_eq!(ws[0].avg_sentence_length, 17.33);
        let drawn = style(&b);
        assert_eq!(count(&drawn.svgs[0], r#"<circle class="pt sentence"#), 2);
        assert!(
            drawn.summary[0].starts_with("结论："),
            "{:?}",
            drawn.summary
        );
    }
}
