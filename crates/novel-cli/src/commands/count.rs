//! `novel count [FILE…] [--chapter N | --all] [--check]`: 字数 per chapter and in total, and
//! each chapter against the ChapterWriter target (`novel.json` → `chapter_length`, 2500–3500).

use clap::Args;
use serde::Serialize;

use novel_store::io;
use novel_text::count::{LengthVerdict, count};

use super::resolve_inputs;
use crate::args::{ChapterSelection, GlobalArgs};
use crate::output::{CliError, Exit, Report};

/// `novel count`'s `--json` data.
#[derive(Serialize)]
struct CountData<'a> {
    target: Target,
    files: Vec<FileCount<'a>>,
    /// Chapters and extras (`--all`): the whole book.
    total: usize,
    /// The chapters alone: what `novel status` sums (extras are no chapter).
    chapters_total: usize,
    outside_target: usize,
}

/// The chapter-length target (`novel.json` → `chapter_length`).
#[derive(Serialize)]
struct Target {
    min: u32,
    max: u32,
}

/// One file's 字数, by kind, against the target.
#[derive(Serialize)]
struct FileCount<'a> {
    path: &'a str,
    chars: usize,
    han: usize,
    punctuation: usize,
    latin_words: usize,
    numbers: usize,
    heading_chars: usize,
    /// Against the chapter-length target; `null` for an extra (楔子、番外 …), which is no
    /// chapter and is not judged by a chapter's length.
    verdict: Option<LengthVerdict>,
    /// An extra of an imported manuscript (`--all`).
    extra: bool,
}

#[derive(Debug, Args)]
#[command(
    after_help = "字数按国内平台（与 Word「字数」）的算法：每个汉字（含日文假名、韩文）算 1；每个全角或中文标点算 1（……、—— 各算 2）；一串连续的英文字母或数字算 1（AI、2024、AK47、3.14、1,000 各算 1，全角字母数字按半角算；只有半角的 ' - . , _ 连成一串，全角标点夹在数字间照样各算 1：「4，5，6，7」是 7 字）。不计：空白（含全角空格）、半角标点与符号、表情符号、Markdown 记号（#、**、列表与引用记号、链接地址、HTML 标签与注释、代码）、文件开头的 front matter。标题行（# 开头）是章节名，平台单独计，不算正文字数，另列为 heading_chars。目标区间取 novel.json 的 chapter_length（默认 2500–3500，含两端）。--all 还包括导入书稿时保留的附录 extras/*.md（楔子、番外等），合计即全书字数。"
)]
pub struct CountArgs {
    #[command(flatten)]
    pub select: ChapterSelection,
    /// 有章节不在目标字数区间内时以退出码 1 结束
    #[arg(long)]
    pub check: bool,
}

pub fn run(global: &GlobalArgs, args: CountArgs) -> Result<Report, CliError> {
    let (project, mut inputs) = resolve_inputs(global, &args.select)?;
    if args.select.all
        && let Some(p) = &project
    {
        // An imported manuscript's extras (楔子、番外 …) are part of the book's 字数.
        inputs.extend(novel_store::select::extra_inputs(p)?);
    }
    let target = novel_store::settings::load_or_default(project.as_ref())?.chapter_length;
    let mut files = Vec::new();
    let mut human = String::new();
    let mut total = 0;
    let mut chapters_total = 0;
    let mut outside = 0;
    for input in &inputs {
        let c = count(&io::read_text(&input.path)?);
        let verdict = (!input.extra).then(|| LengthVerdict::of(c.chars, target.min, target.max));
        if verdict.is_some_and(|v| v != LengthVerdict::Within) {
            outside += 1;
        }
        total += c.chars;
        if !input.extra {
            chapters_total += c.chars;
        }
        let judged = match verdict {
            Some(v) => format!("{}，目标 {}–{}", v.label(), target.min, target.max),
            None => "附录，不按章节字数判定".to_string(),
        };
        human.push_str(&format!("{}：{} 字（{judged}）\n", input.shown, c.chars));
        files.push(FileCount {
            path: &input.shown,
            chars: c.chars,
            han: c.han,
            punctuation: c.punctuation,
            latin_words: c.latin_words,
            numbers: c.numbers,
            heading_chars: c.heading_chars,
            verdict,
            extra: input.extra,
        });
    }
    if inputs.len() > 1 {
        human.push_str(&format!("合计：{} 个文件，{total} 字", inputs.len()));
        if total != chapters_total {
            human.push_str(&format!(
                "（正文章节 {chapters_total} 字，附录 {} 字）",
                total - chapters_total
            ));
        }
        human.push('\n');
    }
    let data = CountData {
        target: Target {
            min: target.min,
            max: target.max,
        },
        files,
        total,
        chapters_total,
        outside_target: outside,
    };
    if args.check && outside > 0 {
        let err = CliError::new(
            "E_LENGTH",
            format!(
                "{outside} 个章节不在目标字数 {}–{} 之内",
                target.min, target.max
            ),
            "",
            Exit::Problems,
        );
        return Err(err.with_report(&data, human));
    }
    Report::new(&data, human)
}
