//! The chapter table at the end of the page: every committed chapter's figures in one row —
//! what the charts show on hover, readable on a phone (a tap opens it) and in print. Each row
//! is the target of the chart marks of a long book (`#c123`) and links to the chapter's file.

use std::collections::BTreeMap;
use std::fmt::Write;

use novel_core::gate::score_text;
use novel_store::figures::ChapterFigures;

use super::charts::{Book, details, usd};
use super::svg::esc;

/// At most this many names in a row's cast cell (the most mentioned first).
const CAST_IN_ROW: usize = 4;

/// The table.
pub fn chapter_table(b: &Book<'_>) -> String {
    let chapters = b.chapters();
    if chapters.is_empty() {
        return "<p class=\"empty\">还没有写完的章节。</p>".to_string();
    }
    let lanes: BTreeMap<&str, &str> = b
        .data
        .lanes
        .iter()
        .map(|l| (l.id.as_str(), l.name.as_str()))
        .collect();
    let mut out = String::with_capacity(chapters.len() * 260);
    out.push_str(r#"<div class="table-scroll"><table class="chapter-table"><caption>逐章数据</caption><thead><tr>"#);
    for h in [
        "章",
        "卷",
        "字数",
        "总分",
        "修订",
        "套话/千字",
        "故事线",
        "费用",
        "tokens",
        "日期",
        "出场",
    ] {
        let _ = write!(out, "<th>{h}</th>");
    }
    out.push_str("</tr></thead><tbody>");
    for r in chapters {
        out.push_str(&row(b, r, &lanes));
    }
    out.push_str("</tbody></table></div>");
    details(&format!("打开逐章数据（{} 章）", chapters.len()), &out)
}

/// What a row says of revisions: `2`, `强制通过`, or nothing.
fn revisions(r: &ChapterFigures) -> String {
    if r.force_passed {
        "强制通过".to_string()
    } else if r.revisions > 0 {
        r.revisions.to_string()
    } else {
        String::new()
    }
}

fn row(b: &Book<'_>, r: &ChapterFigures, lanes: &BTreeMap<&str, &str>) -> String {
    let text = b.text.get(&r.chapter);
    let line = r
        .storyline
        .as_deref()
        .map(|l| lanes.get(l).copied().unwrap_or(l))
        .unwrap_or("");
    let cost = r.usd().map_or(String::new(), |u| {
        let estimated = r.stages.iter().any(|s| s.estimated);
        format!("{}{}", if estimated { "约" } else { "" }, usd(u))
    });
    format!(
        r#"<tr id="c{n}"><td><a href="{href}">{n}</a></td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{cost}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>"#,
        r.volume,
        r.chars.map_or("—".into(), |c| c.to_string()),
        r.score.map_or("—".into(), score_text),
        revisions(r),
        text.map_or("—".into(), |t| format!("{:.2}", t.density())),
        esc(line),
        super::cost::split_of(r),
        r.tokens(),
        r.date.as_deref().unwrap_or(""),
        esc(&cast_cell(b, r.chapter)),
        n = r.chapter,
        href = esc(&b.href(r.chapter)),
    )
}

/// `陆尘 12、顾守 3`: who the chapter mentions, the most first.
fn cast_cell(b: &Book<'_>, chapter: u32) -> String {
    let Some(t) = b.text.get(&chapter) else {
        return String::new();
    };
    let mut seen: Vec<(u32, &str)> = t
        .presence
        .iter()
        .enumerate()
        .filter(|(_, k)| **k > 0)
        .map(|(i, k)| (*k, b.data.cast[i].name.as_str()))
        .collect();
    seen.sort_by(|a, z| z.0.cmp(&a.0).then(a.1.cmp(z.1)));
    seen.iter()
        .take(CAST_IN_ROW)
        .map(|(k, name)| format!("{name} {k}"))
        .collect::<Vec<_>>()
        .join("、")
}

#[cfg(test)]
mod tests {
    use super::super::charts::fixtures::{data, text};
    use super::*;

    #[test]
    fn every_chapter_has_a_row_that_links_to_its_file() {
        let (d, t) = (data(6), text(6));
        let html = chapter_table(&Book {
            data: &d,
            text: &t,
            chapter_href: "../",
        });
        assert_eq!(html.matches("<tr id=\"c").count(), 6);
        assert!(
            html.contains(r#"<a href="../chapters/chapter-003.md">3</a>"#),
            "{html}"
        );
        // Chapter 3 was force-passed; its cost has an estimated stage.
        assert!(html.contains("<td>强制通过</td>"), "{html}");
        assert!(html.contains("约$0.56"), "{html}");
        assert!(html.contains("陆尘 6"), "{html}");
    }
}
