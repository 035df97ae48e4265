//! Section 5 — who appears where: a heatmap of each main character's name mentions per
//! chapter (per run of chapters in a long book), retired characters hatched from their
//! retirement and any mention after it outlined in red; a table of every character.

use super::charts::{Book, Drawn, NO_CHAPTERS, folded_table, short};
use super::svg::{self, Axis, esc};
use novel_store::dashboard::CastMember;

/// At most this many characters get a row (the main cast first).
pub const MAX_CAST_ROWS: usize = 30;
const ROW: f64 = 20.0;

fn role_rank(role: Option<&str>) -> u8 {
    match role {
        Some("protagonist") => 0,
        Some("antagonist") => 1,
        Some("supporting") => 2,
        Some("minor") => 4,
        _ => 3,
    }
}

fn role_label(role: Option<&str>) -> &'static str {
    match role {
        Some("protagonist") => "主角",
        Some("antagonist") => "反派",
        Some("supporting") => "配角",
        Some("minor") => "龙套",
        _ => "其他",
    }
}

/// How strongly a chapter shows a character: 1 (1–2 mentions), 2 (3–9), 3 (10 or more).
pub fn heat_level(mentions: f64) -> u8 {
    match mentions {
        m if m <= 0.0 => 0,
        m if m < 3.0 => 1,
        m if m < 10.0 => 2,
        _ => 3,
    }
}

/// Mentions of cast member `i` in chapter `c`.
fn mentions(b: &Book<'_>, i: usize, c: u32) -> u32 {
    b.text
        .get(&c)
        .and_then(|t| t.presence.get(i).copied())
        .unwrap_or(0)
}

/// The cast in row order: protagonist, antagonist, supporting, the rest, minor; then by
/// mentions.
fn order(b: &Book<'_>) -> Vec<(usize, u64)> {
    let cast = &b.data.cast;
    let mut rows: Vec<(usize, u64)> = (0..cast.len())
        .map(|i| {
            let total = b.text.keys().map(|c| u64::from(mentions(b, i, *c))).sum();
            (i, total)
        })
        .collect();
    rows.sort_by(|&(a, ta), &(z, tz)| {
        role_rank(cast[a].role.as_deref())
            .cmp(&role_rank(cast[z].role.as_deref()))
            .then(tz.cmp(&ta))
            .then(cast[a].id.cmp(&cast[z].id))
    });
    rows
}

/// The section.
pub fn characters(b: &Book<'_>) -> Drawn {
    let d = b.data;
    if d.cast.is_empty() {
        return Drawn::empty("还没有登记的角色：角色档案还没有建立。");
    }
    let Some(axis) = b.axis() else {
        return Drawn::empty(NO_CHAPTERS);
    };
    if b.text.is_empty() {
        return Drawn::empty("正文都读不了，看不出角色在哪些章出场。");
    }
    let rows = order(b);
    let shown = &rows[..rows.len().min(MAX_CAST_ROWS)];
    let bottom = ROW * shown.len() as f64 + 2.0;
    let mut s = svg::open("characters", bottom + 34.0, "角色出场");
    let mut reappear = Vec::new();
    for (k, &(i, _)) in shown.iter().enumerate() {
        s.push_str(&member_row(
            b,
            &axis,
            i,
            2.0 + ROW * k as f64,
            &mut reappear,
        ));
    }
    s.push_str(&axis.labels(bottom));
    s.push_str("</svg>");
    let retired = d.cast.iter().filter(|m| m.retired).count();
    let mut summary = vec![format!(
        "{} 个角色（退场 {retired} 个），按主角、反派、配角、龙套排列；颜色越深，这一章提到得越多。",
        d.cast.len()
    )];
    if rows.len() > shown.len() {
        summary.push(format!(
            "另有 {} 个出场较少的角色没有画出（在下面的表里）。",
            rows.len() - shown.len()
        ));
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
        html: vec![cast_table(b, &rows)],
        empty: None,
        legend: Drawn::legend_of(&[
            ("sw-h1", "提到 1–2 次"),
            ("sw-h2", "3–9 次"),
            ("sw-h3", "10 次以上"),
            ("sw-retired", "退场之后"),
        ]),
    }
}

/// One character's row: the retirement hatch, the heat cells (runs of marks at one level
/// merged), the name.
fn member_row(b: &Book<'_>, axis: &Axis, i: usize, y: f64, reappear: &mut Vec<String>) -> String {
    let m = &b.data.cast[i];
    let mut s = format!(
        r#"<g class="member{}" data-character="{}">"#,
        if m.retired { " retired" } else { "" },
        esc(&m.id)
    );
    s.push_str(&svg::rect(
        "row-bg",
        axis.x0,
        y + 1.0,
        axis.x1 - axis.x0,
        ROW - 2.0,
        None,
    ));
    if let Some(at) = m.retired_at.filter(|_| m.retired) {
        let tip = format!("{}：第{at}章退场", m.name);
        let x = axis.x(at);
        s.push_str(&svg::rect(
            "retired-span",
            x,
            y + 1.0,
            axis.x1 - x,
            ROW - 2.0,
            Some(&tip),
        ));
    }
    // Runs of marks in a row with the same heat are one cell: (first, last, level, mentions).
    let mut run: Option<(u32, u32, u8, u32)> = None;
    for mark in b.marks(axis) {
        let total: u32 = mark.rows.iter().map(|r| mentions(b, i, r.chapter)).sum();
        let level = heat_level(f64::from(total) / mark.rows.len() as f64);
        let after = m.retired && m.retired_at.is_some_and(|at| mark.last > at);
        if after && total > 0 && !reappear.contains(&m.name) {
            reappear.push(m.name.clone());
        }
        match &mut run {
            Some((_, z, l, sum)) if level != 0 && *l == level && *z < mark.first => {
                *z = mark.last;
                *sum += total;
            }
            _ => {
                s.push_str(&heat_cell(m, axis, y, run.take()));
                run = (level > 0).then_some((mark.first, mark.last, level, total));
            }
        }
    }
    s.push_str(&heat_cell(m, axis, y, run));
    let label = if m.retired {
        format!("{}·退场", short(&m.name, 4))
    } else {
        short(&m.name, 6)
    };
    s.push_str(&svg::text(
        "member-label",
        axis.x0 - 4.0,
        y + 15.0,
        "end",
        &label,
    ));
    s.push_str("</g>");
    s
}

fn heat_cell(m: &CastMember, axis: &Axis, y: f64, run: Option<(u32, u32, u8, u32)>) -> String {
    let Some((a, z, level, mentions)) = run else {
        return String::new();
    };
    let after = m.retired && m.retired_at.is_some_and(|at| z > at);
    let title = if a == z {
        format!("{} 第{a}章 出现 {mentions} 次", m.name)
    } else {
        format!("{} 第{a}–{z}章 出现 {mentions} 次", m.name)
    };
    svg::rect(
        &format!("heat h{level}{}", if after { " after" } else { "" }),
        axis.x(a),
        y + 3.0,
        axis.x(z + 1) - axis.x(a),
        ROW - 6.0,
        Some(&title),
    )
}

/// Every character: role, chapters and mentions, first and last chapter, retirement.
fn cast_table(b: &Book<'_>, rows: &[(usize, u64)]) -> String {
    let body: Vec<Vec<String>> = rows
        .iter()
        .map(|&(i, total)| {
            let m = &b.data.cast[i];
            let seen: Vec<u32> = b
                .chapters()
                .iter()
                .map(|r| r.chapter)
                .filter(|c| mentions(b, i, *c) > 0)
                .collect();
            vec![
                esc(&m.name),
                role_label(m.role.as_deref()).to_string(),
                seen.len().to_string(),
                total.to_string(),
                seen.first().map_or("—".into(), |c| format!("第{c}章")),
                seen.last().map_or("—".into(), |c| format!("第{c}章")),
                m.retired_at
                    .map_or(if m.retired { "已退场" } else { "" }.to_string(), |c| {
                        format!("第{c}章退场")
                    }),
            ]
        })
        .collect();
    folded_table(
        &format!("全部 {} 个角色的出场", rows.len()),
        &[
            "角色",
            "身份",
            "出场章数",
            "提到次数",
            "首次",
            "最近",
            "退场",
        ],
        &body,
    )
}

#[cfg(test)]
mod tests {
    use super::super::charts::fixtures::{book, count, data, text};
    use super::*;

    #[test]
    fn the_heatmap_merges_runs_and_marks_retirement_and_reappearance() {
        let (d, t) = (data(6), text(6));
        let drawn = characters(&book(&d, &t));
        let svg = &drawn.svgs[0];
        // The hero is mentioned 2, 4, 6, 8, 10, 12 times: runs h1 | h2 h2 h2 | h3 h3.
        assert_eq!(count(svg, r#"<rect class="heat h1" x"#), 1, "{svg}");
        assert!(svg.contains("陆尘 第2–4章 出现 18 次"), "{svg}");
        assert_eq!(count(svg, r#"class="retired-span""#), 1);
        // The retired character is mentioned in chapter 5, after its retirement at 3.
        assert_eq!(count(svg, r#"class="heat h1 after""#), 1, "{svg}");
        assert!(drawn.summary.iter().any(|s| s.contains("老墨")));
        assert!(drawn.html[0].contains("第3章退场"));
    }
}
