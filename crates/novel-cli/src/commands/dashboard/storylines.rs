//! Section 3 — one lane per storyline, a cell per chapter (per run of chapters in a long book)
//! on the lane it was written on; convergence events framed, dormant lines hatched, and per
//! volume the number of active lines against the limit of four.

use std::collections::{BTreeMap, BTreeSet};

use novel_core::model::storyline::StorylineStatus;
use novel_store::dashboard::{DashboardData, VolumeRange};

use super::charts::{Book, Drawn, NO_CHAPTERS, short, table};
use super::svg::{self, Axis, esc};

/// How many storylines the ≤ 4 rule allows active at once (PRD §6.6).
pub const MAX_ACTIVE_STORYLINES: usize = 4;

const STRIP: f64 = 30.0;
const LANE: f64 = 24.0;

/// A lane: (id, name, dormant).
type LaneRow = (String, String, bool);

/// The lanes: `storylines.json`'s in its order, then any a chapter names that it does not.
fn lanes(d: &DashboardData) -> Vec<LaneRow> {
    let current = d
        .volumes
        .iter()
        .find(|v| Some(v.volume) == d.current_volume());
    let mut lanes: Vec<LaneRow> = d
        .lanes
        .iter()
        .map(|l| {
            let dormant = l.status == StorylineStatus::Dormant
                || current.is_some_and(|v| v.dormant.contains(&l.id));
            (l.id.clone(), l.name.clone(), dormant)
        })
        .collect();
    let known: BTreeSet<String> = lanes.iter().map(|l| l.0.clone()).collect();
    let unlisted: BTreeSet<&str> = d
        .chapters()
        .iter()
        .filter_map(|r| r.storyline.as_deref())
        .filter(|s| !known.contains(*s))
        .collect();
    for id in unlisted {
        lanes.push((id.to_string(), id.to_string(), false));
    }
    lanes
}

/// A volume's active lines: its schedule's, else the lines its chapters used.
fn active_in(d: &DashboardData, v: &VolumeRange) -> usize {
    if !v.active.is_empty() {
        return v.active.len();
    }
    d.chapters()
        .iter()
        .filter(|r| r.volume == v.volume)
        .filter_map(|r| r.storyline.as_deref())
        .collect::<BTreeSet<_>>()
        .len()
}

/// The section.
pub fn storylines(b: &Book<'_>) -> Drawn {
    let d = b.data;
    let lanes = lanes(d);
    if lanes.is_empty() {
        return Drawn::empty(
            "还没有故事线：故事线设置里没有登记故事线，写完的章节也没有标明属于哪条线。",
        );
    }
    let first = b.chapters().first().map_or(1, |r| r.chapter);
    let last = b.chapters().last().map_or(first, |r| r.chapter);
    let axis = Axis::new(first, last);
    let bottom = STRIP + LANE * lanes.len() as f64;
    let mut s = svg::open("storylines", bottom + 34.0, "故事线泳道");
    s.push_str(&active_strip(d, &axis));
    s.push_str(&lane_rows(&lanes, &axis));
    s.push_str(&cells(b, &lanes, &axis));
    s.push_str(&convergences(d, &lanes, &axis));
    s.push_str(&axis.labels(bottom));
    s.push_str("</svg>");
    let over: Vec<String> = d
        .volumes
        .iter()
        .filter(|v| active_in(d, v) > MAX_ACTIVE_STORYLINES)
        .map(|v| v.volume.to_string())
        .collect();
    let mut summary = vec![lane_summary(d, &lanes, &axis)];
    if !over.is_empty() {
        summary.push(format!(
            "第 {} 卷同时活跃的故事线超过 {MAX_ACTIVE_STORYLINES} 条。",
            over.join("、")
        ));
    }
    if d.chapters().is_empty() {
        summary.push(NO_CHAPTERS.to_string());
    }
    Drawn {
        svgs: vec![s],
        summary,
        html: vec![lane_table(b, &lanes), volume_table(d)],
        empty: None,
        legend: Drawn::legend_of(&[
            ("sw-cell", "本章所在故事线"),
            ("sw-convergence", "交汇事件"),
            ("sw-dormant", "休眠的故事线"),
            ("sw-over", "活跃超过 4 条"),
        ]),
    }
}

fn lane_summary(d: &DashboardData, lanes: &[LaneRow], axis: &Axis) -> String {
    let dormant: Vec<&str> = lanes.iter().filter(|l| l.2).map(|l| l.1.as_str()).collect();
    format!(
        "{} 条故事线，{} 个交汇事件；休眠：{}。",
        lanes.len(),
        d.convergences
            .iter()
            .filter(|c| c.range[0] <= axis.last)
            .count(),
        if dormant.is_empty() {
            "无".to_string()
        } else {
            dormant.join("、")
        }
    )
}

/// Per volume its count of active lines, red over the limit; labelled where the label fits.
fn active_strip(d: &DashboardData, axis: &Axis) -> String {
    let mut s = String::new();
    let mut labels = Vec::new();
    for v in &d.volumes {
        let (a, z) = (v.range[0].max(axis.first), v.range[1].min(axis.last));
        if a > z {
            continue;
        }
        let k = active_in(d, v);
        let over = k > MAX_ACTIVE_STORYLINES;
        let x = axis.x(a);
        s.push_str(&svg::rect(
            if over {
                "active-count over"
            } else {
                "active-count"
            },
            x,
            2.0,
            axis.x(z + 1) - x,
            STRIP - 8.0,
            Some(&format!(
                "第{}卷：活跃故事线 {k} 条（上限 {MAX_ACTIVE_STORYLINES} 条）",
                v.volume
            )),
        ));
        labels.push((x + 3.0, format!("第{}卷 {k}条", v.volume)));
    }
    let boxes: Vec<(f64, f64)> = labels
        .iter()
        .map(|(x, t)| (*x, svg::text_width(t)))
        .collect();
    for ((x, t), keep) in labels.iter().zip(svg::thin(&boxes)) {
        if keep {
            s.push_str(&svg::text("count-label", *x, STRIP - 11.0, "start", t));
        }
    }
    s
}

fn lane_rows(lanes: &[LaneRow], axis: &Axis) -> String {
    let mut s = String::new();
    for (i, (id, name, dormant)) in lanes.iter().enumerate() {
        let y = STRIP + LANE * i as f64;
        let label = if *dormant {
            format!("{}·休眠", short(name, 4))
        } else {
            short(name, 6)
        };
        s.push_str(&format!(
            r#"<g class="lane{}" data-storyline="{}">"#,
            if *dormant { " dormant" } else { "" },
            esc(id)
        ));
        s.push_str(&svg::rect(
            "lane-bg",
            axis.x0,
            y + 1.0,
            axis.x1 - axis.x0,
            LANE - 2.0,
            Some(&format!("{name}{}", if *dormant { "：休眠" } else { "" })),
        ));
        s.push_str(&svg::text(
            "lane-label",
            axis.x0 - 4.0,
            y + 16.0,
            "end",
            &label,
        ));
        s.push_str("</g>");
    }
    s
}

/// A cell per mark and lane: the chapters of the mark written on that lane.
fn cells(b: &Book<'_>, lanes: &[LaneRow], axis: &Axis) -> String {
    let row_of: BTreeMap<&str, usize> = lanes
        .iter()
        .enumerate()
        .map(|(i, l)| (l.0.as_str(), i))
        .collect();
    let mut s = String::new();
    for m in b.marks(axis) {
        let mut on: BTreeMap<usize, usize> = BTreeMap::new();
        for r in m.rows {
            if let Some(i) = r.storyline.as_deref().and_then(|l| row_of.get(l)) {
                *on.entry(*i).or_default() += 1;
            }
        }
        let (x, w) = (axis.x(m.first), axis.x(m.last + 1) - axis.x(m.first));
        for (i, k) in on {
            let y = STRIP + LANE * i as f64;
            let tip = if m.first == m.last {
                format!("{} {}", m.label(), lanes[i].1)
            } else {
                format!("{} {}：{k} 章", m.label(), lanes[i].1)
            };
            let rect = svg::rect("cell", x, y + 5.0, w.max(1.0), LANE - 10.0, Some(&tip));
            s.push_str(&b.linked(&m, &rect));
        }
    }
    s
}

fn convergences(d: &DashboardData, lanes: &[LaneRow], axis: &Axis) -> String {
    let row_of = |id: &str| lanes.iter().position(|l| l.0 == id);
    let mut s = String::new();
    for c in d.convergences.iter().filter(|c| c.range[0] <= axis.last) {
        let rows: Vec<usize> = c.storylines.iter().filter_map(|l| row_of(l)).collect();
        let (Some(lo), Some(hi)) = (rows.iter().min(), rows.iter().max()) else {
            continue;
        };
        let names: Vec<&str> = rows.iter().map(|i| lanes[*i].1.as_str()).collect();
        s.push_str(&svg::rect(
            "convergence",
            axis.x(c.range[0]),
            STRIP + LANE * *lo as f64,
            axis.x(c.range[1] + 1) - axis.x(c.range[0]),
            LANE * (hi - lo + 1) as f64,
            Some(&format!(
                "交汇事件：第{}–{}章（{}）",
                c.range[0],
                c.range[1],
                names.join("、")
            )),
        ));
    }
    s
}

/// Per storyline: chapters written on it, the last one, dormant or not.
fn lane_table(b: &Book<'_>, lanes: &[LaneRow]) -> String {
    let rows: Vec<Vec<String>> = lanes
        .iter()
        .map(|(id, name, dormant)| {
            let on: Vec<u32> = b
                .chapters()
                .iter()
                .filter(|r| r.storyline.as_deref() == Some(id.as_str()))
                .map(|r| r.chapter)
                .collect();
            vec![
                esc(name),
                on.len().to_string(),
                on.last().map_or("—".into(), |c| format!("第{c}章")),
                if *dormant { "休眠" } else { "" }.to_string(),
            ]
        })
        .collect();
    table("各条故事线", &["故事线", "章数", "最近一章", "状态"], &rows)
}

/// Per volume: active lines and convergence events.
fn volume_table(d: &DashboardData) -> String {
    let rows: Vec<Vec<String>> = d
        .volumes
        .iter()
        .map(|v| {
            let events: Vec<String> = d
                .convergences
                .iter()
                .filter(|c| c.range[0] >= v.range[0] && c.range[0] <= v.range[1])
                .map(|c| format!("第{}–{}章", c.range[0], c.range[1]))
                .collect();
            vec![
                format!("第{}卷", v.volume),
                format!("第{}–{}章", v.range[0], v.range[1]),
                active_in(d, v).to_string(),
                esc(&events.join("、")),
            ]
        })
        .collect();
    table(
        "每卷活跃的故事线（上限 4 条）",
        &["卷", "章节", "活跃", "交汇事件"],
        &rows,
    )
}

#[cfg(test)]
mod tests {
    use super::super::charts::fixtures::{book, count, data, text};
    use super::*;

    #[test]
    fn storylines_highlight_dormant_lines_and_the_limit_of_four() {
        let (d, t) = (data(4), text(4));
        let drawn = storylines(&book(&d, &t));
        let svg = &drawn.svgs[0];
        // Lanes a, z (listed) and b (only in the chapters).
        assert_eq!(count(svg, "<g class=\"lane"), 3);
        // z is dormant in the current volume's schedule.
        assert_eq!(
            count(svg, r#"<g class="lane dormant" data-storyline="z">"#),
            1
        );
        assert_eq!(count(svg, r#"<rect class="cell""#), 4);
        assert_eq!(count(svg, r#"class="active-count over""#), 1);
        assert!(drawn.summary.iter().any(|s| s.contains("超过 4 条")));
    }
}
