//! `novel dashboard [-o FILE] [--open]`: the book at a glance, as one self-contained HTML file
//! with inline SVG charts — progress, quality, storylines, foreshadowing, characters, cost and
//! style (issue 32). The project files are read by [`novel_store::dashboard::gather`]; the
//! chapter texts are analysed here with `novel-text` (blacklist density, the style windows'
//! sentence and dialogue figures, name mentions); the charts are drawn by [`charts`] and laid
//! out by [`page`]. The same project gives the same bytes.
//!
//! Why hand-written SVG and not a charting crate: the charts are bars, rectangles and lines on
//! a chapter axis; what matters is that every mark carries its meaning (a class, a tooltip) for
//! the author and for the browser test, that CJK labels are laid out by the browser's fonts
//! (plotters, the obvious candidate, measures text with a bundled font or not at all), and that
//! the output is small and byte-stable. A few hundred lines do that with no dependency.

mod charts;
mod page;
mod svg;

use std::collections::BTreeMap;
use std::path::PathBuf;

use aho_corasick::{AhoCorasick, MatchKind};
use clap::Args;
use serde::Serialize;

use novel_store::dashboard::{DashboardData, Section, gather};
use novel_store::select::{load_blacklist, load_profile};
use novel_store::{Project, io};
use novel_text::blacklist::Blacklist;
use novel_text::segment::Document;

use crate::cli::GlobalArgs;
use crate::output::{self, CliError, Report};

#[derive(Debug, Args)]
#[command(
    after_help = "仪表盘是一个独立的 HTML 文件：图表是内嵌的 SVG，不引用任何外部脚本、字体或网址，用浏览器直接打开即可（不联网、不需要服务器）；中文用电脑自带的字体显示（苹方、微软雅黑、思源黑体、文泉驿等）。七个部分：进度（每章字数与目标区间、分卷、每天写了多少）、质量（门控总分与八个维度、通过线、修订与强制通过、每千字 AI 套话次数）、故事线（泳道、交汇事件、休眠的线、每卷活跃不超过 4 条）、伏笔（埋下到回收，逾期标红）、角色（主要角色每章出场热度，退场标记）、费用（每章各 agent 的 token 与费用、累计，对照 PRD 约 0.75 美元/章）、文风（每 5 章平均句长与对话占比相对基线的偏离）。\
读不了的文件（如损坏的流水线日志、缺少的评估）不会让命令失败：受影响的部分写明缺了什么，其余照常画出。费用：日志记了 cost_usd 的照用；没记的按 Sonnet 输入 3 / 输出 15、Opus 15 / 75、Haiku 0.8 / 4 美元每百万 token 估算，只记了 token 总数的按 PRD §12.1 各 agent 的输入输出比例拆分（估算的在图上注明）。同一个项目总是生成同样的文件（不含生成时间）。"
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
    /// 字数 by the platform rule (`novel count`).
    pub chars: usize,
    /// Non-whitespace characters: the base of the lint density.
    pub nonblank: usize,
    pub blacklist_hits: usize,
    /// Text characters in sentences, sentences, and those inside dialogue (the style metrics').
    pub text_chars: usize,
    pub sentences: usize,
    pub dialogue: usize,
    /// Mentions of each cast member (by the order of `DashboardData::cast`).
    pub presence: Vec<u32>,
}

impl TextFigures {
    /// Blacklist hits per 千字, as `novel lint` computes it.
    pub fn density(&self) -> f64 {
        novel_text::lint::per_1000(self.blacklist_hits, self.nonblank)
    }
}

/// The `--json` data.
#[derive(Serialize)]
struct DashboardJson<'a> {
    file: &'a str,
    bytes: usize,
    chapters: usize,
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
    let jobs: Vec<(u32, bool)> = data
        .chapters
        .iter()
        .map(|r| (r.chapter, r.chars.is_none()))
        .collect();
    let analyse = |&(n, count): &(u32, bool)| -> (u32, Option<TextFigures>) {
        let Ok(text) = io::read_text(&project.path(&novel_store::layout::chapter_file(n))) else {
            return (n, None);
        };
        let doc = Document::new(&text);
        let (mut text_chars, mut dialogue) = (0, 0);
        for s in doc.sentences() {
            text_chars += s.len;
            dialogue += s.dialogue_len;
        }
        let figures = TextFigures {
            chars: if count {
                novel_text::count::count(&text).chars
            } else {
                0
            },
            nonblank: doc.non_whitespace_chars(),
            blacklist_hits: blacklist.scan(&doc).len(),
            text_chars,
            sentences: doc.sentences().len(),
            dialogue,
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
                .push(s, format!("{list}的正文读不了（chapters/），这几章不计入"));
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

/// The page of a project.
fn build(project: &Project) -> Result<Built, CliError> {
    let mut data = gather(project);
    let text = text_figures(project, &mut data)?;
    let book = charts::Book {
        data: &data,
        text: &text,
    };
    let sections: Vec<(Section, charts::Drawn)> = Section::ALL
        .into_iter()
        .map(|s| {
            let drawn = match s {
                Section::Progress => charts::progress(&book),
                Section::Quality => charts::quality(&book),
                Section::Storylines => charts::storylines(&book),
                Section::Foreshadowing => charts::foreshadowing(&book),
                Section::Characters => charts::characters(&book),
                Section::Cost => charts::cost(&book),
                Section::Style => charts::style(&book),
            };
            (s, drawn)
        })
        .collect();
    let total: u64 = data
        .chapters
        .iter()
        .map(|r| {
            r.chars
                .or_else(|| text.get(&r.chapter).map(|t| t.chars as u64))
                .unwrap_or(0)
        })
        .sum();
    let scores: Vec<f64> = data.chapters.iter().filter_map(|r| r.score).collect();
    let average = (!scores.is_empty()).then(|| scores.iter().sum::<f64>() / scores.len() as f64);
    let open = data.threads.iter().filter(|t| t.resolved.is_none()).count();
    let end = data
        .volumes
        .iter()
        .find(|v| Some(v.volume) == data.current_volume)
        .map(|v| v.range[1]);
    let headline = novel_core::status::headline(
        data.current_volume,
        data.last_completed,
        end,
        total,
        average,
        open,
    );
    let html = page::render(&data, &headline, &sections);
    Ok(Built {
        html,
        data,
        sections,
    })
}

pub fn run(global: &GlobalArgs, args: DashboardArgs) -> Result<Report, CliError> {
    let project = super::project(global)?;
    let Built {
        html,
        data,
        sections,
    } = build(&project)?;
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
    novel_store::export::write(&path, html.as_bytes())?;
    let json = DashboardJson {
        file: &shown,
        bytes: html.len(),
        chapters: data.chapters.len(),
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
        data.chapters.len(),
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
