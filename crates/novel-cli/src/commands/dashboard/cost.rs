//! Section 6 — what writing the book cost: per chapter (per run of chapters in a long book)
//! the cost stacked by pipeline step, against the design's budget of about $0.60 a chapter
//! ($0.75 with rewrites and reviews); the cumulative cost against the budget line; the tokens
//! per chapter by step. The totals are the book's figures (`novel_store::figures`), the same
//! `novel status` prints.

use std::fmt::Write;

use novel_core::cost::{PRD_AMORTISED_CHAPTER_USD, PRD_CHAPTER_USD};
use novel_store::figures::{ChapterFigures, LogState};

use super::charts::{Book, Drawn, Mark, NO_CHAPTERS, table, usd};
use super::svg::{self, Axis, Scale, esc, n};

/// The groups of the cost chart: (class, label, the stages it sums).
pub const COST_GROUPS: [(&str, &str, &[&str]); 4] = [
    ("g0", "写作与摘要", &["drafted"]),
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

/// Per group: (usd, tokens); and whether any figure is estimated.
#[derive(Default, Clone, Copy)]
struct Groups {
    usd: [f64; 4],
    tokens: [u64; 4],
    estimated: bool,
}

impl Groups {
    fn of<'a>(rows: impl IntoIterator<Item = &'a ChapterFigures>) -> Groups {
        let mut g = Groups::default();
        for r in rows {
            for st in r.stages.iter().filter(|s| !s.is_idle()) {
                let k = group_of(&st.stage);
                g.usd[k] += st.usd.unwrap_or(0.0);
                g.tokens[k] += st.tokens;
                g.estimated |= st.estimated;
            }
        }
        g
    }

    fn usd(&self) -> f64 {
        self.usd.iter().sum()
    }

    fn tokens(&self) -> u64 {
        self.tokens.iter().sum()
    }

    /// `$0.60（含估算）：写作与摘要 $0.12；润色 $0.41；评审 $0.07；共 51885 tokens` — what
    /// the chapter table says too.
    fn describe(&self) -> String {
        let parts: Vec<String> = COST_GROUPS
            .iter()
            .enumerate()
            .filter(|(k, _)| self.usd[*k] > 0.0)
            .map(|(k, (_, label, _))| format!("{label} {}", usd(self.usd[k])))
            .collect();
        let estimated = if self.estimated {
            "（含估算）"
        } else {
            ""
        };
        format!(
            "{}{estimated}：{}；共 {} tokens",
            usd(self.usd()),
            parts.join("；"),
            self.tokens()
        )
    }

    /// Each group's dollars: `0.12 / 0.41 / 0.07 / 0.00`.
    fn split(&self) -> String {
        let parts: Vec<String> = self.usd.iter().map(|u| format!("{u:.2}")).collect();
        parts.join(" / ")
    }
}

/// A chapter's cost by group for the chapter table: `0.12 / 0.41 / 0.07 / 0.00`.
pub fn split_of(r: &ChapterFigures) -> String {
    Groups::of([r]).split()
}

/// The section.
pub fn cost(b: &Book<'_>) -> Drawn {
    let Some(axis) = b.axis() else {
        return Drawn::empty(NO_CHAPTERS);
    };
    if !b.chapters().iter().any(|r| r.log == LogState::Read) {
        return Drawn::empty("还没有能读的写作记录，画不出用量与费用。");
    }
    if !b
        .chapters()
        .iter()
        .any(|r| r.usd().is_some_and(|u| u > 0.0) || r.tokens() > 0)
    {
        return Drawn::empty(
            "写作记录里还没有用量与费用：以后每写完一章，记下用量，这里就会画出来。",
        );
    }
    let marks = b.marks(&axis);
    let groups: Vec<Groups> = marks.iter().map(|m| Groups::of(m.rows)).collect();
    Drawn {
        svgs: vec![
            per_chapter(b, &axis, &marks, &groups),
            cumulative(b, &axis),
            tokens(&axis, &marks, &groups),
        ],
        summary: summary(b),
        html: vec![volume_table(b)],
        empty: None,
        legend: {
            let mut l: Vec<(String, String)> = COST_GROUPS
                .iter()
                .map(|(c, l, _)| (format!("sw-{c}"), l.to_string()))
                .collect();
            l.push(("sw-prd".into(), "设计预算（每章）".into()));
            l.push(("sw-cumulative".into(), "累计费用".into()));
            l
        },
    }
}

/// The totals: the book's figures, as `novel status` prints them.
fn summary(b: &Book<'_>) -> Vec<String> {
    let p = &b.data.book.pipeline;
    let with_usage = b
        .chapters()
        .iter()
        .filter(|r| r.usd().is_some_and(|u| u > 0.0) || r.tokens() > 0)
        .count();
    let mut out = vec![format!(
        "{with_usage} 章有用量记录：共 {} tokens（输入 {} / 输出 {}），费用 {}，平均每章 {}；设计预算每章约 {}（含返工与回顾约 {}）。",
        p.tokens,
        p.input_tokens,
        p.output_tokens,
        usd(p.cost_usd),
        usd(p.cost_usd / with_usage.max(1) as f64),
        usd(PRD_CHAPTER_USD),
        usd(PRD_AMORTISED_CHAPTER_USD)
    )];
    let all = Groups::of(b.chapters());
    let parts: Vec<String> = COST_GROUPS
        .iter()
        .enumerate()
        .filter(|(k, _)| all.usd[*k] > 0.0 || all.tokens[*k] > 0)
        .map(|(k, (_, label, _))| format!("{label} {} / {} tokens", usd(all.usd[k]), all.tokens[k]))
        .collect();
    out.push(format!("按步骤：{}。", parts.join("；")));
    if p.estimated_usd > 0.0 {
        out.push(format!(
            "其中 {} 是按用量与价目表估算的（这些步骤没有记下费用；只记了 token 总数的，按各步骤通常的输入输出比例拆分）。",
            usd(p.estimated_usd)
        ));
    }
    if p.chapters_without_cost > 0 {
        out.push(format!(
            "{} 章有步骤没记下用量（如评审），实际费用更高。",
            p.chapters_without_cost
        ));
    }
    out
}

/// The cost of each mark stacked by group, against the budget lines.
fn per_chapter(b: &Book<'_>, axis: &Axis, marks: &[Mark<'_>], groups: &[Groups]) -> String {
    let per = |m: &Mark<'_>, g: &Groups| g.usd() / m.rows.len() as f64;
    let max = marks
        .iter()
        .zip(groups)
        .map(|(m, g)| per(m, g))
        .fold(PRD_AMORTISED_CHAPTER_USD * 1.15, f64::max);
    let (top, bottom) = (28.0, 190.0);
    let scale = Scale::to_round(0.0, max, top, bottom);
    let mut s = svg::open("cost", bottom + 34.0, "每章费用");
    s.push_str(&svg::panel_title("每章费用（美元），按步骤叠加"));
    s.push_str(&scale.grid(axis.x0, axis.x1, &|v| format!("${v:.2}")));
    for (m, g) in marks.iter().zip(groups) {
        let k = m.rows.len() as f64;
        let tip = if m.first == m.last {
            format!("{} {}", m.label(), g.describe())
        } else {
            format!(
                "{} 平均每章 {}；合计 {}",
                m.label(),
                usd(g.usd() / k),
                g.describe()
            )
        };
        let _ = write!(
            s,
            r#"<g class="cost-bar{}" data-ch="{}"><title>{}</title>"#,
            if g.estimated { " estimated" } else { "" },
            m.first,
            esc(&tip)
        );
        let (x, w) = axis.mark(m.first, m.last);
        let mut acc = 0.0;
        let mut segs = String::new();
        for (i, (class, _, _)) in COST_GROUPS.iter().enumerate() {
            let v = g.usd[i] / k;
            if v <= 0.0 {
                continue;
            }
            let (y1, y0) = (scale.y(acc + v), scale.y(acc));
            segs.push_str(&svg::rect(&format!("seg {class}"), x, y1, w, y0 - y1, None));
            acc += v;
        }
        s.push_str(&b.linked(m, &segs));
        s.push_str("</g>");
    }
    let lines = [
        (
            PRD_AMORTISED_CHAPTER_USD,
            "prd-line",
            format!("预算 {}", usd(PRD_AMORTISED_CHAPTER_USD)),
        ),
        (
            PRD_CHAPTER_USD,
            "prd-line base",
            format!("单章 {}", usd(PRD_CHAPTER_USD)),
        ),
    ];
    let mut labels = Vec::new();
    for (v, class, label) in lines {
        let y = scale.y(v);
        s.push_str(&svg::hline(class, axis.x0, axis.x1, y));
        labels.push((y, label, "line-label"));
    }
    s.push_str(&svg::right_labels(axis.x1, bottom - 2.0, &labels));
    s.push_str(&axis.labels(bottom));
    s.push_str("</svg>");
    s
}

/// The cumulative cost against $0.75 × chapters.
fn cumulative(b: &Book<'_>, axis: &Axis) -> String {
    let mut cum = 0.0;
    let mut points = Vec::new();
    let mut prd = Vec::new();
    for (i, r) in b.chapters().iter().enumerate() {
        cum += Groups::of([r]).usd();
        points.push((r.chapter, cum));
        prd.push((r.chapter, PRD_AMORTISED_CHAPTER_USD * (i + 1) as f64));
    }
    let max = points.iter().chain(&prd).map(|p| p.1).fold(0.01, f64::max);
    let (top, bottom) = (28.0, 170.0);
    let scale = Scale::to_round(0.0, max, top, bottom);
    let mut c = svg::open("cost-cumulative", bottom + 34.0, "累计费用");
    c.push_str(&svg::panel_title(
        "累计费用（美元）：实线为实际，虚线为每章 0.75 美元的预算",
    ));
    c.push_str(&scale.grid(axis.x0, axis.x1, &|v| format!("${v:.0}")));
    // One point a mark's width at most: the line of a long book stays small.
    let step = axis.run() as usize;
    let line = |pts: &[(u32, f64)]| -> Vec<Option<(f64, f64)>> {
        pts.iter()
            .enumerate()
            .filter(|(i, _)| i % step == step - 1 || *i == pts.len() - 1)
            .map(|(_, (ch, v))| Some((axis.x(ch + 1), scale.y(*v))))
            .collect()
    };
    c.push_str(&svg::path("prd-cumulative", &line(&prd), ""));
    c.push_str(&svg::path("cumulative", &line(&points), ""));
    let (Some(last), Some(budget)) = (points.last(), prd.last()) else {
        return c + "</svg>";
    };
    c.push_str(&svg::right_labels(
        axis.x1,
        bottom - 2.0,
        &[
            (scale.y(last.1), format!("${:.0}", last.1), "line-label cum"),
            (
                scale.y(budget.1),
                format!("预算 ${:.0}", budget.1),
                "line-label",
            ),
        ],
    ));
    c.push_str(&axis.labels(bottom));
    c.push_str("</svg>");
    c
}

/// Tokens per mark by group: one path of bars per group.
fn tokens(axis: &Axis, marks: &[Mark<'_>], groups: &[Groups]) -> String {
    let per = |m: &Mark<'_>, t: u64| t as f64 / m.rows.len() as f64;
    let max = marks
        .iter()
        .zip(groups)
        .map(|(m, g)| per(m, g.tokens()))
        .fold(1.0, f64::max);
    let (top, bottom) = (28.0, 150.0);
    let scale = Scale::to_round(0.0, max, top, bottom);
    let mut t = svg::open("tokens", bottom + 34.0, "每章 token");
    t.push_str(&svg::panel_title("每章 token，按步骤叠加"));
    t.push_str(&scale.grid(axis.x0, axis.x1, &|v| {
        if v >= 1000.0 {
            format!("{:.0}K", v / 1000.0)
        } else {
            format!("{v:.0}")
        }
    }));
    let mut base = vec![0.0; marks.len()];
    for (k, (class, _, _)) in COST_GROUPS.iter().enumerate() {
        let mut d = String::new();
        for (i, (m, g)) in marks.iter().zip(groups).enumerate() {
            let v = per(m, g.tokens[k]);
            if v <= 0.0 {
                continue;
            }
            let (x, w) = axis.mark(m.first, m.last);
            let (y1, y0) = (scale.y(base[i] + v), scale.y(base[i]));
            let _ = write!(d, "M{} {}h{}v{}h{}z", n(x), n(y1), n(w), n(y0 - y1), n(-w));
            base[i] += v;
        }
        if !d.is_empty() {
            let _ = write!(t, r#"<path class="tok {class}" d="{d}"/>"#);
        }
    }
    t.push_str(&axis.labels(bottom));
    t.push_str("</svg>");
    t
}

/// Per volume: chapters, cost, per chapter, tokens, and the book's total.
fn volume_table(b: &Book<'_>) -> String {
    let mut volumes: Vec<u32> = b.chapters().iter().map(|r| r.volume).collect();
    volumes.dedup();
    let row = |label: String, rows: Vec<&ChapterFigures>| {
        let g = Groups::of(rows.iter().copied());
        let mut cells = vec![
            label,
            rows.len().to_string(),
            usd(g.usd()),
            usd(g.usd() / rows.len().max(1) as f64),
        ];
        cells.extend(g.usd.iter().map(|u| usd(*u)));
        cells.push(g.tokens().to_string());
        cells
    };
    let mut rows: Vec<Vec<String>> = volumes
        .iter()
        .map(|v| {
            let of: Vec<&ChapterFigures> = b.chapters().iter().filter(|r| r.volume == *v).collect();
            row(format!("第{v}卷"), of)
        })
        .collect();
    rows.push(row("全书".into(), b.chapters().iter().collect()));
    let mut head = vec!["卷", "章数", "费用", "平均每章"];
    head.extend(COST_GROUPS.iter().map(|(_, label, _)| *label));
    head.push("tokens");
    table("每卷费用", &head, &rows)
}

#[cfg(test)]
mod tests {
    use super::super::charts::fixtures::{book, count, data, text};
    use super::*;

    #[test]
    fn cost_stacks_the_steps_and_draws_the_budget_lines() {
        let (d, t) = (data(5), text(5));
        let drawn = cost(&book(&d, &t));
        assert_eq!(drawn.svgs.len(), 3);
        let svg = &drawn.svgs[0];
        assert_eq!(count(svg, r#"<g class="cost-bar estimated""#), 5);
        assert_eq!(count(svg, r#"class="seg g0""#), 5);
        assert_eq!(count(svg, r#"class="seg g1""#), 5);
        assert_eq!(count(svg, r#"class="prd-line""#), 1);
        // The total is the book's figure.
        assert!(drawn.summary[0].contains("$2.80"), "{:?}", drawn.summary);
        assert!(drawn.svgs[1].contains(r#"class="cumulative""#));
        assert!(drawn.html[0].contains("全书"));
    }
}
