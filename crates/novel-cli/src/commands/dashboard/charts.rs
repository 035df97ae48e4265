//! The seven charts of the dashboard, each a pure function of the gathered data: SVG text with
//! a class on every mark that carries data (`bar`, `cell`, `thread overdue` …, see the page's
//! stylesheet), a tooltip (`<title>`) on the marks an author hovers, and the one-line summaries
//! printed above the chart. A chart with nothing to draw says why instead.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write;

use novel_core::cost::{PRD_AMORTISED_CHAPTER_USD, PRD_CHAPTER_USD};
use novel_core::model::common::ForeshadowStatus;
use novel_core::model::evaluation::DIMENSIONS;
use novel_core::model::storyline::StorylineStatus;
use novel_core::review::dimension_label;
use novel_core::status::format_chars;
use novel_store::dashboard::{ChapterRow, DashboardData, LogState};

use super::TextFigures;
use super::svg::{self, Axis, Scale, esc, n};

/// One drawn section: its charts (or why there is none), the summary lines and a legend.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Drawn {
    pub svgs: Vec<String>,
    /// Plain text (escaped by the page).
    pub summary: Vec<String>,
    /// Why nothing is drawn (Chinese), when nothing is.
    pub empty: Option<String>,
    /// (CSS class of the swatch, label).
    pub legend: Vec<(String, String)>,
}

impl Drawn {
    fn empty(why: impl Into<String>) -> Drawn {
        Drawn {
            empty: Some(why.into()),
            ..Drawn::default()
        }
    }
}

/// What the charts read.
pub struct Book<'a> {
    pub data: &'a DashboardData,
    /// Per committed chapter whose text could be read.
    pub text: &'a BTreeMap<u32, TextFigures>,
}

impl Book<'_> {
    /// The committed chapters' axis.
    fn axis(&self) -> Option<Axis> {
        let first = self.data.chapters.first()?.chapter;
        let last = self.data.chapters.last()?.chapter;
        Some(Axis::new(first, last))
    }

    /// A chapter's 字数: its log's, else its text counted.
    fn chars(&self, r: &ChapterRow) -> Option<u64> {
        r.chars
            .or_else(|| self.text.get(&r.chapter).map(|t| t.chars as u64))
    }
}

const NO_CHAPTERS: &str = "还没有已提交的章节：写完并提交第一章后，这里会画出来。";

fn pct(x: f64) -> String {
    format!("{:+.0}%", x * 100.0)
}

/// Section 1 — 字数 per chapter against the target band, by volume; the total and the daily pace.
pub fn progress(b: &Book<'_>) -> Drawn {
    let d = b.data;
    let Some(axis) = b.axis() else {
        return Drawn::empty(NO_CHAPTERS);
    };
    let [tmin, tmax] = d.length_target;
    let chars: Vec<Option<u64>> = d.chapters.iter().map(|r| b.chars(r)).collect();
    let max = chars
        .iter()
        .flatten()
        .copied()
        .max()
        .unwrap_or(0)
        .max(u64::from(tmax)) as f64;
    let (top, bottom) = (22.0, 190.0);
    let scale = Scale::to_round(0.0, max * 1.05, top, bottom);
    let mut s = svg::open("progress", bottom + 32.0, "每章字数");
    // Volumes as alternating bands, labelled at the top.
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
        s.push_str(&svg::rect(
            cls,
            axis.x(a),
            top,
            axis.x(z + 1) - axis.x(a),
            bottom - top,
            None,
        ));
        s.push_str(&svg::text(
            "vol-label",
            axis.x(a) + 3.0,
            top - 6.0,
            "start",
            &format!("第{}卷", v.volume),
        ));
    }
    s.push_str(&svg::rect(
        "target-band",
        axis.x0,
        scale.y(f64::from(tmax)),
        axis.x1 - axis.x0,
        scale.y(f64::from(tmin)) - scale.y(f64::from(tmax)),
        Some(&format!("目标字数 {tmin}–{tmax} 字")),
    ));
    s.push_str(&scale.grid(axis.x0, axis.x1, &|v| format!("{v:.0}")));
    let mut off = 0;
    let bw = axis.bar();
    for (r, c) in d.chapters.iter().zip(&chars) {
        let x = axis.x(r.chapter) + (axis.slot() - bw) / 2.0;
        match c {
            Some(c) => {
                let outside = *c < u64::from(tmin) || *c > u64::from(tmax);
                off += usize::from(outside);
                let y = scale.y(*c as f64);
                s.push_str(&svg::rect(
                    if outside { "bar off" } else { "bar" },
                    x,
                    y,
                    bw,
                    bottom - y,
                    Some(&format!("第{}章 {c}字（第{}卷）", r.chapter, r.volume)),
                ));
            }
            None => s.push_str(&svg::rect(
                "bar unknown",
                x,
                bottom - 2.0,
                bw,
                2.0,
                Some(&format!("第{}章 字数未知（正文读不了）", r.chapter)),
            )),
        }
    }
    s.push_str(&axis.labels(bottom));
    s.push_str("</svg>");
    let total: u64 = chars.iter().flatten().sum();
    let mut summary = vec![format!(
        "已提交 {} 章，总 {}（{total} 字）；每章目标 {tmin}–{tmax} 字，{off} 章在目标之外。",
        d.chapters.len(),
        format_chars(total)
    )];
    let mut per_volume: BTreeMap<u32, (usize, u64)> = BTreeMap::new();
    for (r, c) in d.chapters.iter().zip(&chars) {
        let e = per_volume.entry(r.volume).or_default();
        e.0 += 1;
        e.1 += c.unwrap_or(0);
    }
    if !per_volume.is_empty() {
        let parts: Vec<String> = per_volume
            .iter()
            .map(|(v, (k, c))| format!("第{v}卷 {k} 章 {}", format_chars(*c)))
            .collect();
        summary.push(format!("分卷：{}。", parts.join("；")));
    }
    summary.push(pace(d, &chars));
    Drawn {
        svgs: vec![s],
        summary,
        empty: None,
        legend: vec![
            ("sw-bar".into(), "每章字数".into()),
            ("sw-off".into(), "在目标区间之外".into()),
            ("sw-target".into(), "目标区间".into()),
        ],
    }
}

/// The daily pace from the pipeline logs' dates.
fn pace(d: &DashboardData, chars: &[Option<u64>]) -> String {
    let mut by_day: BTreeMap<&str, u64> = BTreeMap::new();
    for (r, c) in d.chapters.iter().zip(chars) {
        if let Some(day) = r.date.as_deref() {
            *by_day.entry(day).or_default() += c.unwrap_or(0);
        }
    }
    let (Some((first, _)), Some((last, _))) = (by_day.first_key_value(), by_day.last_key_value())
    else {
        return "流水线日志里没有日期，算不出每日进度。".to_string();
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

/// Days from `a` to `b` inclusive (`YYYY-MM-DD`).
fn calendar_days(a: &str, b: &str) -> Option<u64> {
    let day = |s: &str| -> Option<i64> {
        let y: i64 = s.get(0..4)?.parse().ok()?;
        let m: i64 = s.get(5..7)?.parse().ok()?;
        let d: i64 = s.get(8..10)?.parse().ok()?;
        // Days from civil (proleptic Gregorian), Howard Hinnant's algorithm.
        let y = if m <= 2 { y - 1 } else { y };
        let era = y.div_euclid(400);
        let yoe = y - era * 400;
        let mp = (m + 9) % 12;
        let doy = (153 * mp + 2) / 5 + d - 1;
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
        Some(era * 146_097 + doe)
    };
    let diff = day(b)? - day(a)?;
    u64::try_from(diff + 1).ok()
}

/// Section 2 — The gate score and the eight dimensions per chapter with the pass line, revisions and
/// force-passes marked; then the blacklist density per 千字 against its limit.
pub fn quality(b: &Book<'_>) -> Drawn {
    let d = b.data;
    let Some(axis) = b.axis() else {
        return Drawn::empty(NO_CHAPTERS);
    };
    let mut out = Drawn::default();
    let scored = d
        .chapters
        .iter()
        .filter(|r| r.score.is_some() || r.dimensions.is_some())
        .count();
    if scored == 0 {
        out.summary
            .push("还没有评分：评审评完的章节会在这里画出总分与八个维度。".to_string());
    } else {
        out.svgs.push(score_chart(d, axis));
        let scores: Vec<f64> = d.chapters.iter().filter_map(|r| r.score).collect();
        let mean = scores.iter().sum::<f64>() / scores.len().max(1) as f64;
        let below = scores.iter().filter(|s| **s < d.gate_pass).count();
        let revised = d
            .chapters
            .iter()
            .filter(|r| r.revisions > 0 && !r.force_passed)
            .count();
        let forced = d.chapters.iter().filter(|r| r.force_passed).count();
        out.summary.push(format!(
            "{} 章有评分，均分 {}；{below} 章低于通过线 {}；修订过 {revised} 章，强制通过 {forced} 章。",
            scores.len(),
            novel_core::gate::score_text(mean),
            novel_core::gate::score_text(d.gate_pass)
        ));
        out.legend.push(("sw-overall".into(), "门控总分".into()));
        for (i, (key, _)) in DIMENSIONS.iter().enumerate() {
            out.legend
                .push((format!("sw-d{i}"), dimension_label(key).to_string()));
        }
        out.legend.push(("sw-pass".into(), "通过线".into()));
        out.legend.push(("sw-revised".into(), "修订过".into()));
        out.legend.push(("sw-forced".into(), "强制通过".into()));
    }
    if b.text.is_empty() {
        out.summary
            .push("正文都读不了，算不出 AI 套话密度。".to_string());
    } else {
        let (svg, over) = lint_chart(b, axis);
        out.svgs.push(svg);
        out.summary.push(format!(
            "AI 套话（黑名单）密度：{over} 章达到或超过上限 {} 次/千字。",
            n(d.lint_limit)
        ));
        out.legend
            .push(("sw-lint".into(), "套话密度（次/千字）".into()));
        out.legend.push(("sw-lint-over".into(), "达到上限".into()));
    }
    if out.svgs.is_empty() {
        out.empty = Some(out.summary.join(""));
        out.summary.clear();
    }
    out
}

/// Past this many chapters the dimension lines are drawn fainter.
const MANY_CHAPTERS: usize = 120;

fn score_chart(d: &DashboardData, axis: Axis) -> String {
    let (top, bottom) = (24.0, 244.0);
    let scale = Scale {
        lo: 1.0,
        hi: 5.0,
        y_top: top,
        y_bottom: bottom,
    };
    let mut s = svg::open("quality", bottom + 32.0, "各章评分");
    s.push_str(&svg::panel_title("各章评分（1–5 分）"));
    if d.chapters.len() > MANY_CHAPTERS {
        // Eight lines over hundreds of chapters: fainter, so the gate score stands out.
        s = s.replacen(r#"class="chart""#, r#"class="chart many""#, 1);
    }
    s.push_str(&scale.grid(axis.x0, axis.x1, &|v| format!("{v:.0}")));
    for k in 0..DIMENSIONS.len() {
        let points: Vec<Option<(f64, f64)>> = d
            .chapters
            .iter()
            .map(|r| {
                r.dimensions
                    .map(|dims| (axis.mid(r.chapter), scale.y(dims[k])))
            })
            .collect();
        if points.iter().all(Option::is_none) {
            continue;
        }
        s.push_str(&svg::path(
            &format!("dim d{k}"),
            &points,
            &format!(r#" data-dim="{}""#, DIMENSIONS[k].0),
        ));
    }
    let points: Vec<Option<(f64, f64)>> = d
        .chapters
        .iter()
        .map(|r| r.score.map(|v| (axis.mid(r.chapter), scale.y(v))))
        .collect();
    s.push_str(&svg::path("overall", &points, ""));
    let py = scale.y(d.gate_pass);
    s.push_str(&svg::hline("pass-line", axis.x0, axis.x1, py));
    s.push_str(&svg::text(
        "line-label",
        axis.x1 - 2.0,
        py - 4.0,
        "end",
        &format!("通过线 {}", novel_core::gate::score_text(d.gate_pass)),
    ));
    for r in &d.chapters {
        let Some(v) = r.score else { continue };
        let (x, y) = (axis.mid(r.chapter), scale.y(v));
        let what = format!("第{}章 总分 {}", r.chapter, novel_core::gate::score_text(v));
        if r.force_passed {
            let _ = write!(
                s,
                r#"<path class="forced" d="M{} {}l5 5l-5 5l-5 -5z"><title>{}（强制通过）</title></path>"#,
                n(x),
                n(y - 5.0),
                esc(&what)
            );
        } else if r.revisions > 0 {
            let _ = write!(
                s,
                r#"<circle class="revised" cx="{}" cy="{}" r="3.5"><title>{}（修订 {} 次）</title></circle>"#,
                n(x),
                n(y),
                esc(&what),
                r.revisions
            );
        }
    }
    s.push_str(&axis.labels(bottom));
    s.push_str("</svg>");
    s
}

/// The blacklist density bars; returns the chart and how many chapters reach the limit.
fn lint_chart(b: &Book<'_>, axis: Axis) -> (String, usize) {
    let d = b.data;
    let density: Vec<(u32, f64)> = d
        .chapters
        .iter()
        .filter_map(|r| b.text.get(&r.chapter).map(|t| (r.chapter, t.density())))
        .collect();
    let max = density
        .iter()
        .map(|(_, v)| *v)
        .fold(d.lint_limit * 1.2, f64::max);
    let (top, bottom) = (24.0, 134.0);
    let scale = Scale::to_round(0.0, max, top, bottom);
    let mut s = svg::open("lint", bottom + 32.0, "AI 套话密度");
    s.push_str(&svg::panel_title("AI 套话密度（次/千字）"));
    s.push_str(&scale.grid(axis.x0, axis.x1, &|v| n(v)));
    let bw = axis.bar();
    let mut over = 0;
    for (c, v) in &density {
        let is_over = *v >= d.lint_limit;
        over += usize::from(is_over);
        let y = scale.y(*v);
        s.push_str(&svg::rect(
            if is_over { "lint-bar over" } else { "lint-bar" },
            axis.x(*c) + (axis.slot() - bw) / 2.0,
            y,
            bw,
            bottom - y,
            Some(&format!("第{c}章 套话 {v:.2} 次/千字")),
        ));
    }
    let ly = scale.y(d.lint_limit);
    s.push_str(&svg::hline("limit-line", axis.x0, axis.x1, ly));
    s.push_str(&svg::text(
        "line-label",
        axis.x1 - 2.0,
        ly - 4.0,
        "end",
        &format!("上限 {} 次/千字", n(d.lint_limit)),
    ));
    s.push_str(&axis.labels(bottom));
    s.push_str("</svg>");
    (s, over)
}

/// How many storylines the ≤ 4 rule allows active at once (PRD §6.6).
pub const MAX_ACTIVE_STORYLINES: usize = 4;

/// A name cut to `max` characters (with …).
fn short(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        s.to_string()
    } else {
        let mut t: String = s.chars().take(max - 1).collect();
        t.push('…');
        t
    }
}

/// Section 3 — One lane per storyline, chapters as cells; convergence events, dormant lines and the
/// number of active lines per volume against the limit of four.
pub fn storylines(b: &Book<'_>) -> Drawn {
    let d = b.data;
    let mut lanes: Vec<(String, String, bool)> = d
        .lanes
        .iter()
        .map(|l| {
            let dormant = l.status == StorylineStatus::Dormant
                || d.volumes
                    .iter()
                    .find(|v| Some(v.volume) == d.current_volume)
                    .is_some_and(|v| v.dormant.contains(&l.id));
            (l.id.clone(), l.name.clone(), dormant)
        })
        .collect();
    let known: BTreeSet<String> = lanes.iter().map(|l| l.0.clone()).collect();
    let unlisted: BTreeSet<&str> = d
        .chapters
        .iter()
        .filter_map(|r| r.storyline.as_deref())
        .filter(|s| !known.contains(*s))
        .collect();
    for id in unlisted {
        lanes.push((id.to_string(), id.to_string(), false));
    }
    if lanes.is_empty() {
        return Drawn::empty(
            "还没有故事线：storylines/storylines.json 里没有故事线，章节也没有标注所属故事线。",
        );
    }
    let first = d.chapters.first().map_or(1, |r| r.chapter);
    let last = d.chapters.last().map_or(first, |r| r.chapter);
    let axis = Axis::new(first, last);
    let (strip, lane_h) = (26.0, 22.0);
    let bottom = strip + lane_h * lanes.len() as f64;
    let mut s = svg::open("storylines", bottom + 32.0, "故事线泳道");
    // The ≤ 4 rule, per volume: the lines its schedule activates (else the lines it used).
    let mut over_volumes = Vec::new();
    for v in &d.volumes {
        let (a, z) = (v.range[0].max(axis.first), v.range[1].min(axis.last));
        if a > z {
            continue;
        }
        let k = if v.active.is_empty() {
            d.chapters
                .iter()
                .filter(|r| (v.range[0]..=v.range[1]).contains(&r.chapter))
                .filter_map(|r| r.storyline.as_deref())
                .collect::<BTreeSet<_>>()
                .len()
        } else {
            v.active.len()
        };
        let over = k > MAX_ACTIVE_STORYLINES;
        if over {
            over_volumes.push(v.volume);
        }
        s.push_str(&svg::rect(
            if over {
                "active-count over"
            } else {
                "active-count"
            },
            axis.x(a),
            2.0,
            axis.x(z + 1) - axis.x(a),
            strip - 8.0,
            Some(&format!(
                "第{}卷：活跃故事线 {k} 条（上限 {MAX_ACTIVE_STORYLINES} 条）",
                v.volume
            )),
        ));
        s.push_str(&svg::text(
            "count-label",
            axis.x(a) + 3.0,
            strip - 10.0,
            "start",
            &format!("第{}卷 活跃{k}/{MAX_ACTIVE_STORYLINES}", v.volume),
        ));
    }
    let row_of: BTreeMap<&str, usize> = lanes
        .iter()
        .enumerate()
        .map(|(i, l)| (l.0.as_str(), i))
        .collect();
    for (i, (id, name, dormant)) in lanes.iter().enumerate() {
        let y = strip + lane_h * i as f64;
        let label = if *dormant {
            format!("{}·休眠", short(name, 4))
        } else {
            short(name, 6)
        };
        let _ = write!(
            s,
            r#"<g class="lane{}" data-storyline="{}">"#,
            if *dormant { " dormant" } else { "" },
            esc(id)
        );
        s.push_str(&svg::rect(
            "lane-bg",
            axis.x0,
            y + 1.0,
            axis.x1 - axis.x0,
            lane_h - 2.0,
            Some(&format!(
                "{name}（{id}）{}",
                if *dormant { "：休眠" } else { "" }
            )),
        ));
        s.push_str(&svg::text(
            "lane-label",
            axis.x0 - 4.0,
            y + 15.0,
            "end",
            &label,
        ));
        s.push_str("</g>");
    }
    for r in &d.chapters {
        let Some(line) = r.storyline.as_deref() else {
            continue;
        };
        let i = row_of[line];
        let y = strip + lane_h * i as f64;
        s.push_str(&svg::rect(
            "cell",
            axis.x(r.chapter),
            y + 4.0,
            axis.slot().max(1.0),
            lane_h - 8.0,
            Some(&format!("第{}章 {}", r.chapter, lanes[i].1)),
        ));
    }
    for c in d.convergences.iter().filter(|c| c.range[0] <= axis.last) {
        let rows: Vec<usize> = c
            .storylines
            .iter()
            .filter_map(|l| row_of.get(l.as_str()).copied())
            .collect();
        let (Some(lo), Some(hi)) = (rows.iter().min(), rows.iter().max()) else {
            continue;
        };
        let names: Vec<&str> = rows.iter().map(|i| lanes[*i].1.as_str()).collect();
        s.push_str(&svg::rect(
            "convergence",
            axis.x(c.range[0]),
            strip + lane_h * *lo as f64,
            axis.x(c.range[1] + 1) - axis.x(c.range[0]),
            lane_h * (hi - lo + 1) as f64,
            Some(&format!(
                "交汇事件：第{}–{}章（{}）",
                c.range[0],
                c.range[1],
                names.join("、")
            )),
        ));
    }
    s.push_str(&axis.labels(bottom));
    s.push_str("</svg>");
    let dormant: Vec<&str> = lanes.iter().filter(|l| l.2).map(|l| l.1.as_str()).collect();
    let mut summary = vec![format!(
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
    )];
    if !over_volumes.is_empty() {
        let list: Vec<String> = over_volumes.iter().map(u32::to_string).collect();
        summary.push(format!(
            "第 {} 卷同时活跃的故事线超过 {MAX_ACTIVE_STORYLINES} 条。",
            list.join("、")
        ));
    }
    if d.chapters.is_empty() {
        summary.push(NO_CHAPTERS.to_string());
    }
    Drawn {
        svgs: vec![s],
        summary,
        empty: None,
        legend: vec![
            ("sw-cell".into(), "本章所在故事线".into()),
            ("sw-convergence".into(), "交汇事件".into()),
            ("sw-dormant".into(), "休眠的故事线".into()),
            ("sw-over".into(), "活跃超过 4 条".into()),
        ],
    }
}

fn status_label(s: ForeshadowStatus) -> &'static str {
    match s {
        ForeshadowStatus::Planted => "已埋下",
        ForeshadowStatus::Advanced => "推进中",
        ForeshadowStatus::Resolved => "已回收",
    }
}

/// Section 4 — Each thread from planted to resolved (or still open, red when overdue), with its planned
/// range.
pub fn foreshadowing(b: &Book<'_>) -> Drawn {
    let d = b.data;
    if d.threads.is_empty() {
        return Drawn::empty("还没有伏笔：foreshadowing/global.json 里没有登记的伏笔。");
    }
    let last = d.last_completed.max(1);
    let end = d
        .threads
        .iter()
        .flat_map(|t| [t.planted, t.resolved, t.target.map(|r| r[1])])
        .flatten()
        .fold(last, u32::max);
    let axis = Axis::new(1, end);
    let row = 14.0;
    let top = 4.0;
    let bottom = top + row * d.threads.len() as f64;
    let mut s = svg::open("foreshadowing", bottom + 32.0, "伏笔");
    s.push_str(&svg::rect(
        "now",
        axis.x(last + 1) - 1.0,
        top,
        1.5,
        bottom - top,
        Some(&format!("已完成到第{last}章")),
    ));
    for (i, t) in d.threads.iter().enumerate() {
        let y = top + row * i as f64;
        let state = if t.resolved.is_some() {
            "resolved"
        } else if t.overdue {
            "overdue"
        } else {
            "open"
        };
        let mut tip = format!("{}：{}（{}", t.id, t.description, status_label(t.status));
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
        let _ = write!(
            s,
            r#"<g class="thread {state}" data-thread="{}"><title>{}</title>"#,
            esc(&t.id),
            esc(&tip)
        );
        if let Some([a, z]) = t.target {
            s.push_str(&svg::rect(
                "target",
                axis.x(a),
                y + 2.0,
                axis.x(z + 1) - axis.x(a),
                row - 4.0,
                None,
            ));
        }
        let from = t.planted.unwrap_or(1);
        let to = t.resolved.unwrap_or(last).max(from);
        s.push_str(&svg::rect(
            "span",
            axis.x(from),
            y + 5.0,
            axis.x(to + 1) - axis.x(from),
            4.0,
            None,
        ));
        if let Some(p) = t.planted {
            let _ = write!(
                s,
                r#"<circle class="plant" cx="{}" cy="{}" r="3"/>"#,
                n(axis.mid(p)),
                n(y + 7.0)
            );
        }
        if let Some(r) = t.resolved {
            let _ = write!(
                s,
                r#"<circle class="resolve" cx="{}" cy="{}" r="3"/>"#,
                n(axis.mid(r)),
                n(y + 7.0)
            );
        }
        s.push_str(&svg::text(
            "thread-label",
            axis.x0 - 4.0,
            y + 11.0,
            "end",
            &short(&t.id, 14),
        ));
        s.push_str("</g>");
    }
    s.push_str(&axis.labels(bottom));
    s.push_str("</svg>");
    let resolved = d.threads.iter().filter(|t| t.resolved.is_some()).count();
    let overdue: Vec<&str> = d
        .threads
        .iter()
        .filter(|t| t.overdue)
        .map(|t| t.id.as_str())
        .collect();
    let mut summary = vec![format!(
        "{} 个伏笔：已回收 {resolved} 个，未回收 {} 个，逾期 {} 个。",
        d.threads.len(),
        d.threads.len() - resolved,
        overdue.len()
    )];
    if !overdue.is_empty() {
        summary.push(format!("逾期（红色）：{}。", overdue.join("、")));
    }
    Drawn {
        svgs: vec![s],
        summary,
        empty: None,
        legend: vec![
            ("sw-open".into(), "未回收".into()),
            ("sw-resolved".into(), "已回收".into()),
            ("sw-overdue".into(), "逾期".into()),
            ("sw-range".into(), "计划回收区间".into()),
        ],
    }
}

/// At most this many characters get a row (the main cast first).
pub const MAX_CAST_ROWS: usize = 30;

fn role_rank(role: Option<&str>) -> u8 {
    match role {
        Some("protagonist") => 0,
        Some("antagonist") => 1,
        Some("supporting") => 2,
        Some("minor") => 4,
        _ => 3,
    }
}

/// How strongly a chapter shows a character: 1 (1–2 mentions), 2 (3–9), 3 (10 or more).
pub fn heat_level(mentions: u32) -> u8 {
    match mentions {
        0 => 0,
        1..=2 => 1,
        3..=9 => 2,
        _ => 3,
    }
}

/// Section 5 — Who appears in which chapter (a heatmap of name mentions) for the main cast; retired
/// characters marked from their retirement chapter.
pub fn characters(b: &Book<'_>) -> Drawn {
    let d = b.data;
    if d.cast.is_empty() {
        return Drawn::empty("还没有登记的角色：characters/active/ 里没有角色档案。");
    }
    let Some(axis) = b.axis() else {
        return Drawn::empty(NO_CHAPTERS);
    };
    if b.text.is_empty() {
        return Drawn::empty("正文都读不了，看不出角色在哪些章出场。");
    }
    let totals: Vec<u64> = (0..d.cast.len())
        .map(|i| {
            b.text
                .values()
                .map(|t| u64::from(t.presence.get(i).copied().unwrap_or(0)))
                .sum()
        })
        .collect();
    let mut order: Vec<usize> = (0..d.cast.len()).collect();
    order.sort_by(|&a, &z| {
        let (ca, cz) = (&d.cast[a], &d.cast[z]);
        role_rank(ca.role.as_deref())
            .cmp(&role_rank(cz.role.as_deref()))
            .then(totals[z].cmp(&totals[a]))
            .then(ca.id.cmp(&cz.id))
    });
    let hidden = order.len().saturating_sub(MAX_CAST_ROWS);
    order.truncate(MAX_CAST_ROWS);
    let row = 18.0;
    let bottom = row * order.len() as f64 + 2.0;
    let mut s = svg::open("characters", bottom + 32.0, "角色出场");
    let mut reappear = Vec::new();
    for (k, &i) in order.iter().enumerate() {
        let m = &d.cast[i];
        let y = 2.0 + row * k as f64;
        let _ = write!(
            s,
            r#"<g class="member{}" data-character="{}">"#,
            if m.retired { " retired" } else { "" },
            esc(&m.id)
        );
        s.push_str(&svg::rect(
            "row-bg",
            axis.x0,
            y + 1.0,
            axis.x1 - axis.x0,
            row - 2.0,
            None,
        ));
        if let Some(at) = m.retired_at.filter(|_| m.retired) {
            s.push_str(&svg::rect(
                "retired-span",
                axis.x(at),
                y + 1.0,
                axis.x1 - axis.x(at),
                row - 2.0,
                Some(&format!("{}：第{at}章退场", m.name)),
            ));
        }
        // Runs of chapters in a row with the same heat are one cell.
        let mut run: Option<(u32, u32, u8, u32)> = None;
        let mut cells = String::new();
        let flush = |run: Option<(u32, u32, u8, u32)>, cells: &mut String| {
            if let Some((a, z, level, mentions)) = run {
                let after = m.retired && m.retired_at.is_some_and(|at| z > at);
                let title = if a == z {
                    format!("{} 第{a}章 出现 {mentions} 次", m.name)
                } else {
                    format!("{} 第{a}–{z}章 出现 {mentions} 次", m.name)
                };
                cells.push_str(&svg::rect(
                    &format!("heat h{level}{}", if after { " after" } else { "" }),
                    axis.x(a),
                    y + 3.0,
                    axis.x(z + 1) - axis.x(a),
                    row - 6.0,
                    Some(&title),
                ));
            }
        };
        for r in &d.chapters {
            let mentions = b
                .text
                .get(&r.chapter)
                .and_then(|t| t.presence.get(i).copied())
                .unwrap_or(0);
            let level = heat_level(mentions);
            match (&mut run, level) {
                (_, 0) => {
                    flush(run.take(), &mut cells);
                }
                (Some((_, z, l, total)), _) if *z + 1 == r.chapter && *l == level => {
                    *z = r.chapter;
                    *total += mentions;
                }
                _ => {
                    flush(run.take(), &mut cells);
                    run = Some((r.chapter, r.chapter, level, mentions));
                }
            }
            if m.retired
                && mentions > 0
                && m.retired_at.is_some_and(|at| r.chapter > at)
                && !reappear.contains(&m.name)
            {
                reappear.push(m.name.clone());
            }
        }
        flush(run.take(), &mut cells);
        s.push_str(&cells);
        let label = if m.retired {
            format!("{}·退场", short(&m.name, 4))
        } else {
            short(&m.name, 6)
        };
        s.push_str(&svg::text(
            "member-label",
            axis.x0 - 4.0,
            y + 13.0,
            "end",
            &label,
        ));
        s.push_str("</g>");
    }
    s.push_str(&axis.labels(bottom));
    s.push_str("</svg>");
    let retired = d.cast.iter().filter(|m| m.retired).count();
    let mut summary = vec![format!(
        "{} 个角色（退场 {retired} 个），按主角、反派、配角、龙套排列；颜色越深，本章提到得越多。",
        d.cast.len()
    )];
    if hidden > 0 {
        summary.push(format!("另有 {hidden} 个出场较少的角色未列出。"));
    }
    if !reappear.is_empty() {
        summary.push(format!(
            "退场后又在正文里出现（红框）：{}。",
            reappear.join("、")
        ));
    }
    Drawn {
        svgs: vec![s],
        summary,
        empty: None,
        legend: vec![
            ("sw-h1".into(), "提到 1–2 次".into()),
            ("sw-h2".into(), "3–9 次".into()),
            ("sw-h3".into(), "10 次以上".into()),
            ("sw-retired".into(), "退场之后".into()),
        ],
    }
}

/// The agent groups of the cost chart: (class, label, the stages it sums).
pub const COST_GROUPS: [(&str, &str, &[&str]); 4] = [
    ("g0", "写手 + 摘要", &["drafted"]),
    ("g1", "润色", &["refined", "polished"]),
    ("g2", "评审", &["judged"]),
    ("g3", "其他", &[]),
];

fn group_of(stage: &str) -> usize {
    COST_GROUPS
        .iter()
        .position(|(_, _, stages)| stages.contains(&stage))
        .unwrap_or(3)
}

/// Per chapter: (usd, tokens) of each group, and whether any figure is estimated.
fn chapter_groups(r: &ChapterRow) -> ([f64; 4], [u64; 4], bool) {
    let mut usd = [0.0; 4];
    let mut tokens = [0u64; 4];
    let mut estimated = false;
    for st in &r.stages {
        let g = group_of(&st.stage);
        usd[g] += st.usd.unwrap_or(0.0);
        tokens[g] += st.input + st.output;
        estimated |= st.estimated;
    }
    (usd, tokens, estimated)
}

fn usd(x: f64) -> String {
    format!("${x:.2}")
}

/// Section 6 — Tokens and cost per chapter by agent from the pipeline logs, cumulative, against the
/// PRD's ~$0.75 a chapter.
pub fn cost(b: &Book<'_>) -> Drawn {
    let d = b.data;
    let Some(axis) = b.axis() else {
        return Drawn::empty(NO_CHAPTERS);
    };
    let read = d
        .chapters
        .iter()
        .filter(|r| r.log == LogState::Read)
        .count();
    let with_usage: Vec<&ChapterRow> = d
        .chapters
        .iter()
        .filter(|r| r.usd().is_some() || r.tokens() > 0)
        .collect();
    if read == 0 {
        return Drawn::empty(
            "没有能读的流水线日志（logs/chapter-NNN-log.json），画不出用量与费用。",
        );
    }
    if with_usage.is_empty() {
        return Drawn::empty(
            "流水线日志里还没有 token 与费用记录（每个 chapter stage 带上 --tokens 后才有）。",
        );
    }
    let groups: Vec<([f64; 4], [u64; 4], bool)> = d.chapters.iter().map(chapter_groups).collect();
    // Per chapter cost, stacked.
    let max_usd = groups
        .iter()
        .map(|g| g.0.iter().sum::<f64>())
        .fold(PRD_AMORTISED_CHAPTER_USD * 1.15, f64::max);
    let (top, bottom) = (24.0, 184.0);
    let scale = Scale::to_round(0.0, max_usd, top, bottom);
    let mut s = svg::open("cost", bottom + 32.0, "每章费用");
    s.push_str(&svg::panel_title("每章费用（美元），按 agent 叠加"));
    s.push_str(&scale.grid(axis.x0, axis.x1, &|v| format!("${v:.2}")));
    let bw = axis.bar();
    for (r, (g_usd, g_tok, est)) in d.chapters.iter().zip(&groups) {
        let total: f64 = g_usd.iter().sum();
        let tokens: u64 = g_tok.iter().sum();
        let mut tip = format!(
            "第{}章 {}{}，{tokens} tokens",
            r.chapter,
            usd(total),
            if *est { "（含估算）" } else { "" }
        );
        for (k, (_, label, _)) in COST_GROUPS.iter().enumerate() {
            if g_usd[k] > 0.0 || g_tok[k] > 0 {
                let _ = write!(tip, "；{label} {} / {} tokens", usd(g_usd[k]), g_tok[k]);
            }
        }
        let _ = write!(
            s,
            r#"<g class="cost-bar{}" data-ch="{}"><title>{}</title>"#,
            if *est { " estimated" } else { "" },
            r.chapter,
            esc(&tip)
        );
        let x = axis.x(r.chapter) + (axis.slot() - bw) / 2.0;
        let mut acc = 0.0;
        for (k, (class, _, _)) in COST_GROUPS.iter().enumerate() {
            if g_usd[k] <= 0.0 {
                continue;
            }
            let (y1, y0) = (scale.y(acc + g_usd[k]), scale.y(acc));
            s.push_str(&svg::rect(
                &format!("seg {class}"),
                x,
                y1,
                bw,
                y0 - y1,
                None,
            ));
            acc += g_usd[k];
        }
        s.push_str("</g>");
    }
    for (v, class, label) in [
        (
            PRD_AMORTISED_CHAPTER_USD,
            "prd-line",
            format!("PRD 均摊 {}/章", usd(PRD_AMORTISED_CHAPTER_USD)),
        ),
        (
            PRD_CHAPTER_USD,
            "prd-line base",
            format!("PRD 单章 {}", usd(PRD_CHAPTER_USD)),
        ),
    ] {
        let y = scale.y(v);
        s.push_str(&svg::hline(class, axis.x0, axis.x1, y));
        s.push_str(&svg::text(
            "line-label",
            axis.x1 - 2.0,
            y - 3.0,
            "end",
            &label,
        ));
    }
    s.push_str(&axis.labels(bottom));
    s.push_str("</svg>");

    // Cumulative cost against the PRD line.
    let mut cum = 0.0;
    let mut points = Vec::new();
    let mut prd = Vec::new();
    for (i, (r, g)) in d.chapters.iter().zip(&groups).enumerate() {
        cum += g.0.iter().sum::<f64>();
        points.push((r.chapter, cum));
        prd.push((r.chapter, PRD_AMORTISED_CHAPTER_USD * (i + 1) as f64));
    }
    let max_cum = points.iter().chain(&prd).map(|p| p.1).fold(0.01, f64::max);
    let (ctop, cbottom) = (24.0, 164.0);
    let cscale = Scale::to_round(0.0, max_cum, ctop, cbottom);
    let mut c = svg::open("cost-cumulative", cbottom + 32.0, "累计费用");
    c.push_str(&svg::panel_title(
        "累计费用（美元）：实线为实际，虚线为 PRD 每章 0.75 美元",
    ));
    c.push_str(&cscale.grid(axis.x0, axis.x1, &|v| format!("${v:.0}")));
    let line = |pts: &[(u32, f64)]| -> Vec<Option<(f64, f64)>> {
        pts.iter()
            .map(|(ch, v)| Some((axis.x(ch + 1), cscale.y(*v))))
            .collect()
    };
    c.push_str(&svg::path("prd-cumulative", &line(&prd), ""));
    c.push_str(&svg::path("cumulative", &line(&points), ""));
    c.push_str(&axis.labels(cbottom));
    c.push_str("</svg>");

    // Tokens per chapter by group: one path of bars per group.
    let max_tok = groups
        .iter()
        .map(|g| g.1.iter().sum::<u64>())
        .max()
        .unwrap_or(0)
        .max(1) as f64;
    let (ttop, tbottom) = (24.0, 144.0);
    let tscale = Scale::to_round(0.0, max_tok, ttop, tbottom);
    let mut t = svg::open("tokens", tbottom + 32.0, "每章 token");
    t.push_str(&svg::panel_title("每章 token，按 agent 叠加"));
    t.push_str(&tscale.grid(axis.x0, axis.x1, &|v| {
        if v >= 1000.0 {
            format!("{:.0}K", v / 1000.0)
        } else {
            format!("{v:.0}")
        }
    }));
    let mut base = vec![0u64; d.chapters.len()];
    for (k, (class, _, _)) in COST_GROUPS.iter().enumerate() {
        let mut dpath = String::new();
        for (i, (r, g)) in d.chapters.iter().zip(&groups).enumerate() {
            if g.1[k] == 0 {
                continue;
            }
            let x = axis.x(r.chapter) + (axis.slot() - bw) / 2.0;
            let (y1, y0) = (
                tscale.y((base[i] + g.1[k]) as f64),
                tscale.y(base[i] as f64),
            );
            let _ = write!(
                dpath,
                "M{} {}h{}v{}h{}z",
                n(x),
                n(y1),
                n(bw),
                n(y0 - y1),
                n(-bw)
            );
            base[i] += g.1[k];
        }
        if !dpath.is_empty() {
            let _ = write!(t, r#"<path class="tok {class}" d="{dpath}"/>"#);
        }
    }
    t.push_str(&axis.labels(tbottom));
    t.push_str("</svg>");

    let total_usd: f64 = groups.iter().map(|g| g.0.iter().sum::<f64>()).sum();
    let (mut input, mut output) = (0u64, 0u64);
    let mut estimated_usd = 0.0;
    let mut without = 0;
    for r in &d.chapters {
        for st in &r.stages {
            input += st.input;
            output += st.output;
            if st.estimated {
                estimated_usd += st.usd.unwrap_or(0.0);
            }
        }
        if r.log == LogState::Read && r.stages.iter().any(|s| s.usd.is_none()) {
            without += 1;
        }
    }
    let per_chapter = total_usd / with_usage.len() as f64;
    let mut summary = vec![format!(
        "{} 章有用量记录：共 {} tokens（输入 {input} / 输出 {output}），费用 {}，平均每章 {}（PRD 约 {}/章，均摊 {}/章）。",
        with_usage.len(),
        input + output,
        usd(total_usd),
        usd(per_chapter),
        usd(PRD_CHAPTER_USD),
        usd(PRD_AMORTISED_CHAPTER_USD)
    )];
    let by_group: Vec<String> = COST_GROUPS
        .iter()
        .enumerate()
        .filter_map(|(k, (_, label, _))| {
            let u: f64 = groups.iter().map(|g| g.0[k]).sum();
            let tk: u64 = groups.iter().map(|g| g.1[k]).sum();
            (u > 0.0 || tk > 0).then(|| format!("{label} {} / {tk} tokens", usd(u)))
        })
        .collect();
    summary.push(format!("按 agent：{}。", by_group.join("；")));
    if estimated_usd > 0.0 {
        summary.push(format!(
            "其中 {} 是按价目表估算的（日志没记费用的阶段；只记了 token 总数的按 PRD §12.1 各 agent 的输入输出比例拆分）。",
            usd(estimated_usd)
        ));
    }
    if without > 0 {
        summary.push(format!(
            "{without} 章有阶段没有用量记录（如评审），实际费用更高。"
        ));
    }
    let mut legend: Vec<(String, String)> = COST_GROUPS
        .iter()
        .map(|(c, l, _)| (format!("sw-{c}"), l.to_string()))
        .collect();
    legend.push(("sw-prd".into(), "PRD 每章费用线".into()));
    legend.push(("sw-cumulative".into(), "累计费用".into()));
    Drawn {
        svgs: vec![s, c, t],
        summary,
        empty: None,
        legend,
    }
}

/// A style window: chapters `range`, average sentence length and dialogue ratio.
#[derive(Debug, Clone, PartialEq)]
pub struct Window {
    pub range: [u32; 2],
    pub avg_sentence_length: f64,
    pub dialogue_ratio: f64,
}

/// The committed chapters in consecutive windows of `size` (the last, shorter one left out),
/// each measured the way `novel style drift` measures its window.
pub fn windows(b: &Book<'_>, size: u32) -> Vec<Window> {
    let size = size.max(1) as usize;
    let mut out = Vec::new();
    for chunk in b.data.chapters.chunks(size) {
        if chunk.len() < size {
            break;
        }
        let figures: Vec<&TextFigures> = chunk
            .iter()
            .filter_map(|r| b.text.get(&r.chapter))
            .collect();
        if figures.len() < size {
            continue;
        }
        let chars: usize = figures.iter().map(|t| t.text_chars).sum();
        let sentences: usize = figures.iter().map(|t| t.sentences).sum();
        let dialogue: usize = figures.iter().map(|t| t.dialogue).sum();
        let ratio = |a: usize, b: usize| if b == 0 { 0.0 } else { a as f64 / b as f64 };
        out.push(Window {
            range: [chunk[0].chapter, chunk[chunk.len() - 1].chapter],
            avg_sentence_length: (ratio(chars, sentences) * 100.0).round() / 100.0,
            dialogue_ratio: (ratio(dialogue, chars) * 1000.0).round() / 1000.0,
        });
    }
    out
}

/// One metric of the style chart: (class, label, baseline, threshold, the window's value).
type Series = (
    &'static str,
    &'static str,
    Option<f64>,
    f64,
    fn(&Window) -> f64,
);

/// Section 7 — Average sentence length and dialogue ratio per window of chapters, as deviations from
/// the style profile's baseline, against the drift thresholds.
pub fn style(b: &Book<'_>) -> Drawn {
    let d = b.data;
    let st = &d.style;
    if st.avg_sentence_length.is_none() && st.dialogue_ratio.is_none() {
        return Drawn::empty(
            "风格指纹没有基线（style-profile.json 的 avg_sentence_length、dialogue_ratio）：在 /novel:start 提取或选定文风后才有对照。",
        );
    }
    let ws = windows(b, st.window);
    if ws.is_empty() {
        return Drawn::empty(format!(
            "已提交（且能读到正文）的章节不足 {} 章，还没有一个完整的窗口。",
            st.window
        ));
    }
    let first = d.chapters.first().map_or(1, |r| r.chapter);
    let last = d.chapters.last().map_or(first, |r| r.chapter);
    let axis = Axis::new(first, last);
    let series: [Series; 2] = [
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
    ];
    let mut max_dev: f64 = 0.3;
    for (_, _, base, thr, get) in &series {
        if let Some(base) = base {
            max_dev = max_dev.max(*thr * 1.2);
            for w in &ws {
                max_dev = max_dev.max(((get(w) - base) / base).abs());
            }
        }
    }
    let lim = svg::nice_step(max_dev / 2.0) * 2.0;
    let lim = if lim < max_dev { lim * 2.0 } else { lim };
    let (top, bottom) = (24.0, 204.0);
    let scale = Scale {
        lo: -lim,
        hi: lim,
        y_top: top,
        y_bottom: bottom,
    };
    let mut s = svg::open("style", bottom + 32.0, "文风漂移");
    s.push_str(&svg::panel_title("相对风格基线的偏离（每个点是一个窗口）"));
    s.push_str(&scale.grid(axis.x0, axis.x1, &|v| format!("{:+.0}%", v * 100.0)));
    s.push_str(&svg::hline("zero-line", axis.x0, axis.x1, scale.y(0.0)));
    let mut drifted = 0;
    let mut latest = Vec::new();
    for (key, label, base, thr, get) in &series {
        let Some(base) = base else { continue };
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
        for (w, p) in ws.iter().zip(&points) {
            let Some((x, y)) = p else { continue };
            let dev = (get(w) - base) / base;
            let over = dev.abs() > *thr;
            drifted += usize::from(over);
            let value = if *key == "sentence" {
                format!("{:.1} 字（基线 {} 字）", get(w), n(*base))
            } else {
                format!("{:.0}%（基线 {:.0}%）", get(w) * 100.0, base * 100.0)
            };
            let _ = write!(
                s,
                r#"<circle class="pt {key}{}" cx="{}" cy="{}" r="3"><title>第{}–{}章 {label} {value}，偏离 {}</title></circle>"#,
                if over { " drifted" } else { "" },
                n(*x),
                n(*y),
                w.range[0],
                w.range[1],
                pct(dev)
            );
        }
        if let Some(w) = ws.last() {
            latest.push(format!("{label} {}", pct((get(w) - base) / base)));
        }
    }
    s.push_str(&axis.labels(bottom));
    s.push_str("</svg>");
    let last_w = &ws[ws.len() - 1];
    let summary = vec![
        format!(
            "{} 个 {} 章窗口，{drifted} 个点超出阈值（平均句长 ±{:.0}%，对话占比 ±{:.0}%）。",
            ws.len(),
            st.window,
            st.sentence_threshold * 100.0,
            st.dialogue_threshold * 100.0
        ),
        format!(
            "最近一个窗口（第{}–{}章）对比基线：{}。",
            last_w.range[0],
            last_w.range[1],
            latest.join("，")
        ),
    ];
    Drawn {
        svgs: vec![s],
        summary,
        empty: None,
        legend: vec![
            ("sw-sentence".into(), "平均句长偏离".into()),
            ("sw-dialogue".into(), "对话占比偏离".into()),
            ("sw-drifted".into(), "超出阈值".into()),
        ],
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use novel_core::model::common::ForeshadowScope;
    use novel_store::dashboard::{
        CastMember, Lane, Notes, StageCost, StyleBase, Thread, VolumeRange,
    };

    fn row(c: u32) -> ChapterRow {
        ChapterRow {
            chapter: c,
            volume: 1,
            chars: Some(3000 + u64::from(c) * 10),
            date: Some(format!("2026-01-{:02}", c.div_ceil(2))),
            score: Some(3.5 + f64::from(c % 3) * 0.3),
            dimensions: Some([4.0; 8]),
            decision: None,
            revisions: u32::from(c == 2),
            force_passed: c == 3,
            storyline: Some(if c.is_multiple_of(2) { "b" } else { "a" }.to_string()),
            stages: vec![
                StageCost {
                    stage: "drafted".into(),
                    input: 17_000,
                    output: 5_000,
                    usd: Some(0.13),
                    estimated: false,
                },
                StageCost {
                    stage: "refined".into(),
                    input: 6_000,
                    output: 4_500,
                    usd: Some(0.43),
                    estimated: true,
                },
            ],
            log: LogState::Read,
        }
    }

    fn data(chapters: u32) -> DashboardData {
        DashboardData {
            title: Some("书".into()),
            last_completed: chapters,
            current_volume: Some(1),
            chapters: (1..=chapters).map(row).collect(),
            volumes: vec![VolumeRange {
                volume: 1,
                range: [1, 50],
                active: vec!["a".into(), "b".into(), "c".into(), "d".into(), "e".into()],
                dormant: vec!["z".into()],
            }],
            length_target: [2500, 3500],
            gate_pass: 4.0,
            lint_limit: 3.0,
            lanes: vec![
                Lane {
                    id: "a".into(),
                    name: "主线".into(),
                    status: StorylineStatus::Active,
                },
                Lane {
                    id: "z".into(),
                    name: "沉睡".into(),
                    status: StorylineStatus::Active,
                },
            ],
            convergences: vec![],
            threads: vec![
                Thread {
                    id: "late".into(),
                    description: "d".into(),
                    scope: ForeshadowScope::Short,
                    status: ForeshadowStatus::Planted,
                    planted: Some(1),
                    resolved: None,
                    target: Some([2, 3]),
                    overdue: true,
                },
                Thread {
                    id: "done".into(),
                    description: "d".into(),
                    scope: ForeshadowScope::Medium,
                    status: ForeshadowStatus::Resolved,
                    planted: Some(1),
                    resolved: Some(4),
                    target: Some([3, 8]),
                    overdue: false,
                },
            ],
            cast: vec![
                CastMember {
                    id: "hero".into(),
                    name: "陆尘".into(),
                    aliases: vec![],
                    role: Some("protagonist".into()),
                    retired: false,
                    retired_at: None,
                },
                CastMember {
                    id: "gone".into(),
                    name: "老墨".into(),
                    aliases: vec![],
                    role: Some("supporting".into()),
                    retired: true,
                    retired_at: Some(3),
                },
            ],
            style: StyleBase {
                avg_sentence_length: Some(18.0),
                dialogue_ratio: Some(0.4),
                sentence_threshold: 0.2,
                dialogue_threshold: 0.15,
                window: 5,
            },
            notes: Notes::default(),
        }
    }

    fn text(chapters: u32) -> BTreeMap<u32, TextFigures> {
        (1..=chapters)
            .map(|c| {
                (
                    c,
                    TextFigures {
                        chars: 3000,
                        nonblank: 3100,
                        blacklist_hits: (c as usize) * 3,
                        text_chars: 2600,
                        sentences: 100 + c as usize * 10,
                        dialogue: 1000,
                        presence: vec![c * 2, if c == 5 { 1 } else { u32::from(c < 3) * 4 }],
                    },
                )
            })
            .collect()
    }

    fn count(svg: &str, needle: &str) -> usize {
        svg.matches(needle).count()
    }

    #[test]
    fn progress_draws_one_bar_per_chapter_and_the_target_band() {
        let (d, t) = (data(12), text(12));
        let drawn = progress(&Book { data: &d, text: &t });
        let svg = &drawn.svgs[0];
        assert_eq!(count(svg, r#"<rect class="bar"#), 12);
        assert_eq!(count(svg, r#"class="target-band""#), 1);
        assert!(svg.contains("第12章 3120字（第1卷）"), "{svg}");
        assert!(
            drawn.summary[0].starts_with("已提交 12 章"),
            "{:?}",
            drawn.summary
        );
        // Two chapters a day over six days.
        assert!(
            drawn.summary[2].contains("2026-01-01 至 2026-01-06"),
            "{:?}",
            drawn.summary
        );
    }

    #[test]
    fn quality_marks_revisions_force_passes_and_the_pass_line() {
        let (d, t) = (data(6), text(6));
        let drawn = quality(&Book { data: &d, text: &t });
        let svg = &drawn.svgs[0];
        assert_eq!(count(svg, r#"class="dim d"#), 8);
        assert_eq!(count(svg, r#"<circle class="revised""#), 1);
        assert_eq!(count(svg, r#"<path class="forced""#), 1);
        assert_eq!(count(svg, r#"class="pass-line""#), 1);
        // Density = 3c hits per 3.1 千字: chapters 4 … 6 reach 3.
        let lint = &drawn.svgs[1];
        assert_eq!(count(lint, r#"class="lint-bar"#), 6);
        assert_eq!(count(lint, r#"class="lint-bar over""#), 3);
    }

    #[test]
    fn storylines_highlight_dormant_lines_and_the_limit_of_four() {
        let (d, t) = (data(4), text(4));
        let drawn = storylines(&Book { data: &d, text: &t });
        let svg = &drawn.svgs[0];
        // Lanes a, z (listed) and b (only in the chapters).
        assert_eq!(count(svg, "<g class=\"lane"), 3);
        assert_eq!(
            count(svg, r#"<g class="lane dormant" data-storyline="z">"#),
            1
        );
        assert_eq!(count(svg, r#"<rect class="cell""#), 4);
        assert_eq!(count(svg, r#"class="active-count over""#), 1);
        assert!(drawn.summary.iter().any(|s| s.contains("超过 4 条")));
    }

    #[test]
    fn overdue_threads_are_marked_and_resolved_ones_end_at_their_chapter() {
        let (d, t) = (data(4), text(4));
        let drawn = foreshadowing(&Book { data: &d, text: &t });
        let svg = &drawn.svgs[0];
        assert_eq!(
            count(svg, r#"<g class="thread overdue" data-thread="late">"#),
            1
        );
        assert_eq!(
            count(svg, r#"<g class="thread resolved" data-thread="done">"#),
            1
        );
        assert_eq!(count(svg, r#"class="resolve""#), 1);
        assert!(drawn.summary[1].contains("late"));
    }

    #[test]
    fn the_heatmap_merges_runs_and_marks_retirement_and_reappearance() {
        let (d, t) = (data(6), text(6));
        let drawn = characters(&Book { data: &d, text: &t });
        let svg = &drawn.svgs[0];
        // The hero is mentioned 2, 4, 6, 8, 10, 12 times: runs h1 | h2 h2 h2 | h3 h3.
        assert_eq!(count(svg, r#"<rect class="heat h1" x"#), 1, "{svg}");
        assert!(svg.contains("陆尘 第2–4章 出现 18 次"), "{svg}");
        assert_eq!(count(svg, r#"class="retired-span""#), 1);
        // The retired character is mentioned in chapter 5, after its retirement at 3.
        assert_eq!(count(svg, r#"class="heat h1 after""#), 1, "{svg}");
        assert!(drawn.summary.iter().any(|s| s.contains("老墨")));
    }

    #[test]
    fn cost_stacks_the_agents_and_draws_the_prd_lines() {
        let (d, t) = (data(5), text(5));
        let drawn = cost(&Book { data: &d, text: &t });
        assert_eq!(drawn.svgs.len(), 3);
        let svg = &drawn.svgs[0];
        assert_eq!(count(svg, r#"<g class="cost-bar estimated""#), 5);
        assert_eq!(count(svg, r#"class="seg g0""#), 5);
        assert_eq!(count(svg, r#"class="seg g1""#), 5);
        assert_eq!(count(svg, r#"class="prd-line""#), 1);
        assert!(drawn.summary[0].contains("$2.80"), "{:?}", drawn.summary);
        assert!(drawn.svgs[1].contains(r#"class="cumulative""#));
    }

    #[test]
    fn style_windows_are_full_windows_of_five() {
        let (d, t) = (data(12), text(12));
        let b = Book { data: &d, text: &t };
        let ws = windows(&b, 5);
        assert_eq!(ws.len(), 2);
        assert_eq!(ws[0].range, [1, 5]);
        // 13,000 text characters in 650 sentences.
        assert_eq!(ws[0].avg_sentence_length, 20.0);
        let drawn = style(&b);
        assert_eq!(count(&drawn.svgs[0], r#"<circle class="pt sentence"#), 2);
    }

    #[test]
    fn empty_sections_say_why() {
        let mut d = data(0);
        d.threads.clear();
        d.cast.clear();
        d.lanes.clear();
        let t = BTreeMap::new();
        let b = Book { data: &d, text: &t };
        for drawn in [
            progress(&b),
            quality(&b),
            storylines(&b),
            foreshadowing(&b),
            characters(&b),
            cost(&b),
            style(&b),
        ] {
            assert!(drawn.svgs.is_empty(), "{drawn:?}");
            assert!(drawn.empty.as_deref().is_some_and(|w| !w.is_empty()));
        }
    }

    #[test]
    fn calendar_days_count_both_ends() {
        assert_eq!(calendar_days("2026-01-30", "2026-02-02"), Some(4));
        assert_eq!(calendar_days("2024-02-28", "2024-03-01"), Some(3));
    }
}
