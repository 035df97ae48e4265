//! `novel dashboard [-o FILE] [--open]`: the book at a glance, as one self-contained HTML file
//! with inline SVG charts — progress, quality, storylines, foreshadowing, characters, cost and
//! style — and a table of every chapter. The project files are read by
//! [`novel_store::dashboard::gather`], whose figures (字数, scores, cost, tokens, the drift
//! verdict, the headline) are the book's one set ([`novel_store::figures`]) that `novel status`
//! prints too; the chapter texts are analysed here with `novel-text` (blacklist density, each
//! chapter's style sample, name mentions); each section is drawn by its own module and laid out
//! by [`page`]. The same project gives the same bytes, but for the time in the header.
//!
//! Why hand-written SVG and not a charting crate: the charts are bars, rectangles and lines on
//! a chapter axis; what matters is that every mark carries its meaning (a class, a tooltip) for
//! the author and for the browser test, that CJK labels are laid out by the browser's fonts
//! (plotters, the obvious candidate, measures text with a bundled font or not at all), and that
//! the output is small and byte-stable. A few hundred lines do that with no dependency.

mod characters;
mod charts;
mod cost;
mod data_table;
mod foreshadowing;
mod page;
mod progress;
mod quality;
mod storylines;
mod style;
mod svg;

use std::collections::BTreeMap;
use std::path::PathBuf;

use aho_corasick::{AhoCorasick, MatchKind};
use clap::Args;
use serde::Serialize;

use novel_core::drift::StyleSample;
use novel_store::dashboard::{DashboardData, Section, gather};
use novel_store::figures::{Chars, DriftFigure, PipelineSums, Scores};
use novel_store::select::{load_blacklist, load_profile};
use novel_store::{Project, io};
use novel_text::blacklist::Blacklist;
use novel_text::segment::Document;

use crate::args::GlobalArgs;
use crate::output::{self, CliError, Report};

#[derive(Debug, Args)]
#[command(
    after_help = "仪表盘是一个独立的 HTML 文件：图表是内嵌的 SVG，不引用任何外部脚本、字体或网址，用浏览器直接打开即可（不联网、不需要服务器），手机上图表可以左右滑动；中文用电脑自带的字体显示（苹方、微软雅黑、思源黑体、文泉驿等）。七个部分：进度（每章字数与目标区间、分卷、每天写了多少）、质量（每章总分、近 10 章平均与每卷均分、通过线与低于它的章节、八个维度、每千字 AI 套话次数）、故事线（泳道、交汇事件、休眠的线、每卷活跃不超过 4 条）、伏笔（按描述列出，逾期的在前并标红）、角色（主要角色每章出场热度，退场标记）、费用（每章写作、润色、评审的用量与费用、累计，对照每章约 0.75 美元的预算）、文风（每 5 章平均句长与对话占比相对基线的偏离，和现在的结论），最后是逐章数据表；图上的数字在表里都有，点章号打开正文。\
总字数、评分、费用、token 与文风结论和 novel status 用的是同一套计算，两边的数字总是一致。读不了的文件（如损坏的写作记录、缺少的评审结果）不会让命令失败：受影响的部分写明缺了什么，其余照常画出。费用：记下了费用的照用；没记的按 Sonnet 输入 3 / 输出 15、Opus 15 / 75、Haiku 0.8 / 4 美元每百万 token 估算，只记了 token 总数的按各步骤通常的输入输出比例拆分（估算的在图上注明）。同一个项目总是生成同样的文件（页头的生成时间除外）。"
)]
pub struct DashboardArgs {
    /// 输出文件（默认项目根目录的 dashboard.html）
    #[arg(short = 'o', long, value_name = "文件")]
    pub output: Option<PathBuf>,
    /// 生成后用系统默认的浏览器打开
    #[arg(long)]
    pub open: bool,
}

/// What the dashboard reads from one chapter's text.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TextFigures {
    /// Non-whitespace characters: the base of the lint density.
    pub nonblank: usize,
    pub blacklist_hits: usize,
    /// What the drift rule reads of the chapter (`novel_text::metrics::sample`).
    pub style: StyleSample,
    /// Mentions of each cast member (by the order of `DashboardData::cast`).
    pub presence: Vec<u32>,
}

impl TextFigures {
    /// Blacklist hits per 千字, as `novel lint` computes it.
    pub fn density(&self) -> f64 {
        novel_text::lint::per_1000(self.blacklist_hits, self.nonblank)
    }
}

/// The `--json` data. `headline`, `chars`, `scores`, `pipeline` and `drift` are the book's
/// figures, the same objects `novel status --json` carries under the same keys.
#[derive(Serialize)]
struct DashboardJson<'a> {
    file: &'a str,
    bytes: usize,
    chapters: usize,
    headline: &'a str,
    chars: &'a Chars,
    scores: &'a Scores,
    pipeline: &'a PipelineSums,
    drift: &'a DriftFigure,
    sections: Vec<SectionJson<'a>>,
}

#[derive(Serialize)]
struct SectionJson<'a> {
    id: &'static str,
    title: &'static str,
    drawn: bool,
    /// Why nothing is drawn, when nothing is.
    empty: Option<&'a str>,
    notes: &'a [String],
}

/// The name matcher of the cast: every display name and alias (2 characters or more), the
/// longest first, each mapped to its cast member.
struct Names {
    automaton: Option<AhoCorasick>,
    owner: Vec<usize>,
    cast: usize,
}

impl Names {
    fn new(data: &DashboardData) -> Names {
        let mut patterns: Vec<(String, usize)> = Vec::new();
        for (i, m) in data.cast.iter().enumerate() {
            for name in std::iter::once(&m.name).chain(&m.aliases) {
                if name.chars().count() >= 2 && !patterns.iter().any(|(p, _)| p == name) {
                    patterns.push((name.clone(), i));
                }
            }
        }
        let automaton = (!patterns.is_empty())
            .then(|| {
                AhoCorasick::builder()
                    .match_kind(MatchKind::LeftmostLongest)
                    .build(patterns.iter().map(|(p, _)| p))
                    .ok()
            })
            .flatten();
        Names {
            automaton,
            owner: patterns.iter().map(|(_, i)| *i).collect(),
            cast: data.cast.len(),
        }
    }

    fn mentions(&self, text: &str) -> Vec<u32> {
        let mut out = vec![0u32; self.cast];
        if let Some(a) = &self.automaton {
            for m in a.find_iter(text) {
                out[self.owner[m.pattern().as_usize()]] += 1;
            }
        }
        out
    }
}

/// From this many chapters on, the texts are analysed on several threads.
const PARALLEL_FROM: usize = 64;

/// Reads and analyses every committed chapter's text; unreadable texts are notes of the
/// sections that need them.
fn text_figures(
    project: &Project,
    data: &mut DashboardData,
) -> Result<BTreeMap<u32, TextFigures>, CliError> {
    let (list, _) = load_blacklist(Some(project))?;
    let forbidden = load_profile(Some(project))
        .ok()
        .flatten()
        .map(|p| p.forbidden_words)
        .unwrap_or_default();
    let blacklist = Blacklist::new(&list, &forbidden);
    let names = Names::new(data);
    let jobs: Vec<u32> = data.chapters().iter().map(|r| r.chapter).collect();
    let analyse = |&n: &u32| -> (u32, Option<TextFigures>) {
        let Ok(text) = io::read_text(&project.path(&novel_store::layout::chapter_file(n))) else {
            return (n, None);
        };
        let doc = Document::new(&text);
        let figures = TextFigures {
            nonblank: doc.non_whitespace_chars(),
            blacklist_hits: blacklist.scan(&doc).len(),
            style: novel_text::metrics::sample(&doc),
            presence: names.mentions(&text),
        };
        (n, Some(figures))
    };
    // The chapters are independent: a long book is analysed on the machine's cores (at most
    // four threads), each taking one run of chapters; the results are merged in chapter order.
    let threads = std::thread::available_parallelism()
        .map_or(1, std::num::NonZero::get)
        .min(4);
    let results: Vec<(u32, Option<TextFigures>)> = if threads < 2 || jobs.len() < PARALLEL_FROM {
        jobs.iter().map(analyse).collect()
    } else {
        let analyse = &analyse;
        std::thread::scope(|scope| {
            let handles: Vec<_> = jobs
                .chunks(jobs.len().div_ceil(threads))
                .map(|run| scope.spawn(move || run.iter().map(analyse).collect::<Vec<_>>()))
                .collect();
            handles
                .into_iter()
                .flat_map(|h| h.join().unwrap_or_else(|e| std::panic::resume_unwind(e)))
                .collect()
        })
    };
    let mut out = BTreeMap::new();
    let mut unreadable = Vec::new();
    for (n, figures) in results {
        match figures {
            Some(f) => {
                out.insert(n, f);
            }
            None => unreadable.push(n),
        }
    }
    if !unreadable.is_empty() {
        let list = novel_store::dashboard::chapter_list(&unreadable);
        for s in [Section::Quality, Section::Characters, Section::Style] {
            data.notes
                .push(s, format!("{list}的正文读不了，这几章不计入"));
        }
    }
    Ok(out)
}

/// A built dashboard: the page, the data it was drawn from, and each section as drawn.
struct Built {
    html: String,
    data: DashboardData,
    sections: Vec<(Section, charts::Drawn)>,
}

/// Each section drawn.
fn draw(book: &charts::Book<'_>) -> Vec<(Section, charts::Drawn)> {
    Section::ALL
        .into_iter()
        .map(|s| {
            let drawn = match s {
                Section::Progress => progress::progress(book),
                Section::Quality => quality::quality(book),
                Section::Storylines => storylines::storylines(book),
                Section::Foreshadowing => foreshadowing::foreshadowing(book),
                Section::Characters => characters::characters(book),
                Section::Cost => cost::cost(book),
                Section::Style => style::style(book),
            };
            (s, drawn)
        })
        .collect()
}

/// The page of a project; `chapter_href` leads from the page to the project's root.
fn build(project: &Project, chapter_href: &str) -> Result<Built, CliError> {
    let mut data = gather(project, &super::text_rules());
    let text = text_figures(project, &mut data)?;
    let book = charts::Book {
        data: &data,
        text: &text,
        chapter_href,
    };
    let sections = draw(&book);
    let table = data_table::chapter_table(&book);
    let made_at = novel_store::time::minute_utc(novel_store::time::now_secs());
    let html = page::render(&data, &sections, &table, &made_at);
    Ok(Built {
        html,
        data,
        sections,
    })
}

/// How the page links to the project's files: relative when it is written inside the project
/// (`../` per folder below the root), else by the project's absolute `file://` address.
fn chapter_href(project: &Project, page: &std::path::Path) -> String {
    let dir = page.parent().unwrap_or(page);
    match dir.strip_prefix(&project.root) {
        Ok(rel) => "../".repeat(rel.components().count()),
        Err(_) => {
            let root = project.root.to_string_lossy().replace('\\', "/");
            let sep = if root.starts_with('/') { "" } else { "/" };
            format!("file://{sep}{}/", root.trim_end_matches('/'))
        }
    }
}

pub fn run(global: &GlobalArgs, args: DashboardArgs) -> Result<Report, CliError> {
    let project = super::project(global)?;
    let (path, shown) = match &args.output {
        Some(p) => {
            let path = novel_store::project::absolute(p);
            let shown = match project.relative(&path) {
                Some(rel) if !rel.is_empty() => rel,
                _ => p.display().to_string(),
            };
            (path, shown)
        }
        None => (project.path(DEFAULT_FILE), DEFAULT_FILE.to_string()),
    };
    let Built {
        html,
        data,
        sections,
    } = build(&project, &chapter_href(&project, &path))?;
    novel_store::export::write(&path, html.as_bytes())?;
    let json = DashboardJson {
        file: &shown,
        bytes: html.len(),
        chapters: data.chapters().len(),
        headline: &data.book.headline,
        chars: &data.book.chars,
        scores: &data.book.scores,
        pipeline: &data.book.pipeline,
        drift: &data.book.drift,
        sections: sections
            .iter()
            .map(|(s, d)| SectionJson {
                id: s.id(),
                title: page::heading(*s).0,
                drawn: !d.svgs.is_empty(),
                empty: d.empty.as_deref(),
                notes: data.notes.of(*s),
            })
            .collect(),
    };
    let mut human = format!(
        "已生成仪表盘：{shown}（{} 章，{} KB）\n用浏览器打开这个文件即可（不联网，不需要服务器）{}。\n",
        data.chapters().len(),
        html.len().div_ceil(1024),
        if args.open {
            ""
        } else {
            "；加 --open 直接打开"
        }
    );
    for (s, d) in &sections {
        let (title, _) = page::heading(*s);
        if let Some(why) = &d.empty {
            human.push_str(&format!("  {title}：{why}\n"));
        }
        for note in data.notes.of(*s) {
            human.push_str(&format!("  {title}：{note}\n"));
        }
    }
    if args.open {
        open_in_browser(&path);
    }
    Report::new(&json, human)
}

/// The default file, at the project root.
pub const DEFAULT_FILE: &str = "dashboard.html";

/// Hands the file to the platform's opener; a failure is a warning, the file is written.
fn open_in_browser(path: &std::path::Path) {
    let mut cmd = if cfg!(target_os = "macos") {
        std::process::Command::new("open")
    } else if cfg!(windows) {
        let mut c = std::process::Command::new("cmd");
        c.args(["/C", "start", ""]);
        c
    } else {
        std::process::Command::new("xdg-open")
    };
    let spawned = cmd
        .arg(path)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn();
    if let Err(e) = spawned {
        output::err(&format!(
            "注意：没能打开浏览器（{e}），请手动打开 {}\n",
            path.display()
        ));
    }
}
