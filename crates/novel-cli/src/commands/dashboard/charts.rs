//! What the seven sections of the dashboard share: a drawn section ([`Drawn`]: its charts, its
//! summary lines, its tables, or why there is nothing to draw), the book as the charts read it
//! ([`Book`]), the marks along the chapter axis (a chapter each, or a run of chapters in a
//! long book), and the small pieces of text every section writes. Each section is its own
//! module beside this one, a pure function of the gathered data.
//!
//! Every value a chart shows on hover (`<title>`) is also in a table the author can read on a
//! phone (a tap opens it): the section's own table, or the chapter table at the end.

use std::collections::BTreeMap;

use novel_store::dashboard::DashboardData;
use novel_store::figures::ChapterFigures;

use super::TextFigures;
use super::svg::{self, Axis, esc};

/// One drawn section: its charts (or why there is none), the summary lines, tables and a
/// legend.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Drawn {
    pub svgs: Vec<String>,
    /// Plain text (escaped by the page).
    pub summary: Vec<String>,
    /// HTML written by the section (tables, lists of chapters), after the charts.
    pub html: Vec<String>,
    /// Why nothing is drawn (Chinese), when nothing is.
    pub empty: Option<String>,
    /// (CSS class of the swatch, label).
    pub legend: Vec<(String, String)>,
}

impl Drawn {
    pub fn empty(why: impl Into<String>) -> Drawn {
        Drawn {
            empty: Some(why.into()),
            ..Drawn::default()
        }
    }

    /// Legend entries from (class, label) pairs.
    pub fn legend_of(entries: &[(&str, &str)]) -> Vec<(String, String)> {
        entries
            .iter()
            .map(|(c, l)| ((*c).to_string(), (*l).to_string()))
            .collect()
    }
}

/// What the charts read.
pub struct Book<'a> {
    pub data: &'a DashboardData,
    /// Per committed chapter whose text could be read.
    pub text: &'a BTreeMap<u32, TextFigures>,
    /// What goes before `chapters/chapter-NNN.md` in a link from the page to a chapter.
    pub chapter_href: &'a str,
}

/// One mark along the chapter axis: a chapter, or a run of chapters in a long book.
pub struct Mark<'a> {
    pub first: u32,
    pub last: u32,
    pub rows: &'a [ChapterFigures],
}

impl Mark<'_> {
    /// `第12章` or `第1–4章`.
    pub fn label(&self) -> String {
        if self.first == self.last {
            format!("第{}章", self.first)
        } else {
            format!("第{}–{}章", self.first, self.last)
        }
    }

    /// The mean of a figure over the mark's chapters that have it, and how many have it.
    pub fn mean(&self, f: impl Fn(&ChapterFigures) -> Option<f64>) -> Option<(f64, usize)> {
        let xs: Vec<f64> = self.rows.iter().filter_map(f).collect();
        (!xs.is_empty()).then(|| (xs.iter().sum::<f64>() / xs.len() as f64, xs.len()))
    }
}

impl Book<'_> {
    pub fn chapters(&self) -> &[ChapterFigures] {
        self.data.chapters()
    }

    /// The committed chapters' axis.
    pub fn axis(&self) -> Option<Axis> {
        let first = self.chapters().first()?.chapter;
        let last = self.chapters().last()?.chapter;
        Some(Axis::new(first, last))
    }

    /// The marks along `axis`: runs of [`Axis::run`] chapters.
    pub fn marks(&self, axis: &Axis) -> Vec<Mark<'_>> {
        self.chapters()
            .chunks(axis.run() as usize)
            .map(|rows| Mark {
                first: rows[0].chapter,
                last: rows[rows.len() - 1].chapter,
                rows,
            })
            .collect()
    }

    /// The link of chapter `n`'s file.
    pub fn href(&self, n: u32) -> String {
        format!(
            "{}{}",
            self.chapter_href,
            novel_store::layout::chapter_file(n)
        )
    }

    /// Where a mark leads: its chapter's file, or (a run) the first chapter's row of the
    /// chapter table.
    pub fn mark_href(&self, m: &Mark<'_>) -> String {
        if m.first == m.last {
            self.href(m.first)
        } else {
            format!("#c{}", m.first)
        }
    }

    /// A mark's drawing wrapped in its link.
    pub fn linked(&self, m: &Mark<'_>, inner: &str) -> String {
        svg::link(&self.mark_href(m), inner)
    }

    /// Chapter numbers as links to their files (`3、5、7`), the list folded away past 40.
    pub fn chapter_links(&self, ns: &[u32], what: &str) -> String {
        let links: Vec<String> = ns
            .iter()
            .map(|n| format!(r#"<a href="{}">{n}</a>"#, esc(&self.href(*n))))
            .collect();
        let list = format!(r#"<p class="chapters">{}</p>"#, links.join("、"));
        if ns.len() > 40 {
            details(&format!("{what}（{} 章，点开看全部）", ns.len()), &list)
        } else {
            format!(r#"<p class="list-title">{}</p>{list}"#, esc(what))
        }
    }
}

pub const NO_CHAPTERS: &str = "还没有写完的章节：第一章提交后，这里会画出来。";

pub fn pct(x: f64) -> String {
    format!("{:+.0}%", x * 100.0)
}

pub fn usd(x: f64) -> String {
    format!("${x:.2}")
}

/// A name cut to `max` characters (with …).
pub fn short(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        s.to_string()
    } else {
        let mut t: String = s.chars().take(max - 1).collect();
        t.push('…');
        t
    }
}

/// A folded block (a tap opens it): `<details>` with its summary line.
pub fn details(summary: &str, inner: &str) -> String {
    format!(
        "<details><summary>{}</summary>{inner}</details>",
        esc(summary)
    )
}

/// Past this many rows a section's table is folded away (a tap opens it).
const OPEN_ROWS: usize = 12;

/// A section's table: open while short, folded away under its caption when long.
pub fn table(caption: &str, head: &[&str], rows: &[Vec<String>]) -> String {
    if rows.len() > OPEN_ROWS {
        folded_table(&format!("{caption}（{} 行）", rows.len()), head, rows)
    } else {
        plain_table(caption, head, rows)
    }
}

/// An HTML table: a caption, the header cells (plain text) and the rows (cells already HTML).
fn plain_table(caption: &str, head: &[&str], rows: &[Vec<String>]) -> String {
    let mut out = format!(
        r#"<div class="table-scroll"><table><caption>{}</caption><thead><tr>"#,
        esc(caption)
    );
    for h in head {
        out.push_str(&format!("<th>{}</th>", esc(h)));
    }
    out.push_str("</tr></thead><tbody>");
    for row in rows {
        out.push_str("<tr>");
        for cell in row {
            out.push_str(&format!("<td>{cell}</td>"));
        }
        out.push_str("</tr>");
    }
    out.push_str("</tbody></table></div>");
    out
}

/// A table folded away under `summary` (a tap opens it).
pub fn folded_table(summary: &str, head: &[&str], rows: &[Vec<String>]) -> String {
    details(summary, &plain_table(summary, head, rows))
}

/// An optional number as a table cell (`—` when unknown).
pub fn cell<T: std::fmt::Display>(x: Option<T>) -> String {
    x.map_or_else(|| "—".to_string(), |v| v.to_string())
}

#[cfg(test)]
pub mod fixtures {
    //! A small book for the sections' tests.

    use super::*;
    use novel_core::model::common::{ForeshadowScope, ForeshadowStatus};
    use novel_core::model::storyline::StorylineStatus;
    use novel_store::dashboard::{CastMember, Lane, Notes, StyleBase, Thread, VolumeRange};
    use novel_store::figures::{
        self, BookFigures, DriftFigure, LogState, Missing, PipelineSums, StageUsage,
    };
    use novel_store::volumes::Volumes;

    fn stage(stage: &str, usd: f64, estimated: bool) -> StageUsage {
        StageUsage {
            stage: stage.into(),
            model: "sonnet",
            tokens: 10_000,
            input: 8_000,
            output: 2_000,
            split: false,
            usd: Some(usd),
            estimated,
            duration_ms: 1000,
            agent: true,
        }
    }

    pub fn row(c: u32) -> ChapterFigures {
        ChapterFigures {
            chapter: c,
            volume: 1,
            chars: Some(3000 + u64::from(c) * 10),
            score: Some(3.5 + f64::from(c % 3) * 0.3),
            dimensions: Some([4.0; 8]),
            decision: None,
            revisions: u32::from(c == 2),
            force_passed: c == 3,
            storyline: Some(if c.is_multiple_of(2) { "b" } else { "a" }.to_string()),
            edit_ratio: None,
            date: Some(format!("2026-01-{:02}", c.div_ceil(2))),
            stages: vec![stage("drafted", 0.13, false), stage("refined", 0.43, true)],
            log: LogState::Read,
            evaluation: LogState::Read,
        }
    }

    fn figures_of(chapters: u32) -> BookFigures {
        let rows: Vec<ChapterFigures> = (1..=chapters).map(row).collect();
        let mut pipeline = PipelineSums::default();
        for r in &rows {
            pipeline.add(&r.stages, r.revisions, r.force_passed);
        }
        BookFigures {
            last_completed: chapters,
            volumes: Volumes {
                current: Some(1),
                spans: Vec::new(),
            },
            chars: figures::summary::chars(&rows, 0),
            scores: figures::summary::scores(&rows, 4.0),
            chapters: rows,
            pipeline: pipeline.rounded(),
            foreshadowing: Default::default(),
            drift: DriftFigure {
                status: None,
                label: "未检测".into(),
                window: None,
                metrics: Vec::new(),
                directives: Vec::new(),
                correction_active: false,
                unmeasured: Some("还没有已提交的章节".into()),
            },
            headline: String::new(),
            missing: Missing::default(),
            problems: Vec::new(),
        }
    }

    fn thread(id: &str, status: ForeshadowStatus, resolved: Option<u32>, overdue: bool) -> Thread {
        Thread {
            id: id.into(),
            description: format!("{id}的描述"),
            scope: ForeshadowScope::Short,
            status,
            planted: Some(1),
            resolved,
            target: Some([2, 3]),
            overdue,
        }
    }

    fn member(id: &str, name: &str, role: &str, retired_at: Option<u32>) -> CastMember {
        CastMember {
            id: id.into(),
            name: name.into(),
            aliases: vec![],
            role: Some(role.into()),
            retired: retired_at.is_some(),
            retired_at,
        }
    }

    pub fn data(chapters: u32) -> DashboardData {
        let lane = |id: &str, name: &str| Lane {
            id: id.into(),
            name: name.into(),
            status: StorylineStatus::Active,
        };
        DashboardData {
            title: Some("书".into()),
            checkpoint: None,
            book: figures_of(chapters),
            volumes: vec![VolumeRange {
                volume: 1,
                range: [1, 50],
                active: vec!["a".into(), "b".into(), "c".into(), "d".into(), "e".into()],
                dormant: vec!["z".into()],
            }],
            length_target: [2500, 3500],
            gate_pass: 4.0,
            gate_polish: 3.5,
            lint_limit: 3.0,
            lanes: vec![lane("a", "主线"), lane("z", "沉睡")],
            convergences: vec![],
            threads: vec![
                thread("late", ForeshadowStatus::Planted, None, true),
                thread("done", ForeshadowStatus::Resolved, Some(4), false),
            ],
            cast: vec![
                member("hero", "陆尘", "protagonist", None),
                member("gone", "老墨", "supporting", Some(3)),
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

    pub fn text(chapters: u32) -> BTreeMap<u32, TextFigures> {
        (1..=chapters)
            .map(|c| {
                (
                    c,
                    TextFigures {
                        nonblank: 3100,
                        blacklist_hits: (c as usize) * 3,
                        style: novel_core::drift::StyleSample {
                            text_chars: 2600,
                            sentences: 100 + c as usize * 10,
                            dialogue: 1000,
                        },
                        presence: vec![c * 2, if c == 5 { 1 } else { u32::from(c < 3) * 4 }],
                    },
                )
            })
            .collect()
    }

    /// The book of `data` and `text`, linking to `chapters/…` beside the page.
    pub fn book<'a>(data: &'a DashboardData, text: &'a BTreeMap<u32, TextFigures>) -> Book<'a> {
        Book {
            data,
            text,
            chapter_href: "",
        }
    }

    pub fn count(svg: &str, needle: &str) -> usize {
        svg.matches(needle).count()
    }
}
