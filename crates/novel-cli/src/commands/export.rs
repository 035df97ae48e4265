//! `novel export [--format txt|epub|md] [--chapters A..B | --volume V] [-o FILE]
//! [--indent fullwidth|blank] [--author 作者]`: the committed chapters as one file for a
//! platform (txt), an e-reader (EPUB 3) or the author (joined Markdown). See
//! `docs/orchestration.md` §8d for the JSON.

use std::path::PathBuf;

use clap::{Args, ValueEnum};
use serde::Serialize;

use novel_store::Project;
use novel_store::epub::{EpubBook, EpubChapter};
use novel_store::export::{ExportError, Gathered, Range};
use novel_text::export::{Indent, TextEncoding, encode, md, plain_chapter, txt};

use crate::cli::{ChapterSpan, GlobalArgs, chapter_span};
use crate::output::{self, CliError, Exit, Report};

/// `novel export`'s `--json` data; `text` (the export itself) only when written to stdout.
#[derive(Serialize)]
struct ExportData<'a> {
    format: &'static str,
    encoding: &'static str,
    file: &'a str,
    chapters: [u32; 2],
    count: usize,
    chars: usize,
    volumes: Vec<u32>,
    missing: &'a [u32],
    #[serde(skip_serializing_if = "Option::is_none")]
    text: Option<&'a str>,
}

/// The `data` of `E_EXPORT_ENCODING`.
#[derive(Serialize)]
struct UnmappableData {
    encoding: &'static str,
    unmappable: Vec<novel_store::export::Located>,
}

#[derive(Debug, Args)]
#[command(
    after_help = "只导出已提交的章节（chapters/chapter-NNN.md，到断点的 last_completed_chapter 为止），从不导出 staging 中的稿子。\
txt：每章一行标题「第N章 标题」（取自章节的 # 标题，章号按文件），其后是正文段落；Markdown 记号（标题井号、**加粗**、*斜体*、> 引用、分隔线、HTML 注释、front matter）全部去掉；章与章之间空一行；默认 UTF-8 编码（--encoding gbk / gb18030 可选；GBK 里没有的字逐个列出位置、拒绝导出，从不替换）、\\n 换行。\
md：各章原文依次拼接（保留标题，去掉 front matter），章与章之间空一行。\
epub：EPUB 3，书名取 novel.json 的 title（没有则为项目目录名），作者取 --author、novel.json 的 author，都没有则为「佚名」，语言 zh-CN；目录按卷（已知章节范围的卷为「第N卷」一级条目）与章；样式不写死宽度，横排、竖排阅读器都可用。\
卷的章节范围与 novel status 同一来源（storyline-schedule.json、大纲、契约、novel.json 的 chapters_per_volume）。"
)]
pub struct ExportArgs {
    /// 格式：txt 纯文本（默认，供平台发布）、epub 电子书、md 合并的 Markdown
    #[arg(long, value_enum, default_value = "txt", value_name = "格式")]
    pub format: Format,
    /// 只导出这些章：A..B 或单章 N
    #[arg(long, value_name = "A..B", value_parser = chapter_span, conflicts_with = "volume")]
    pub chapters: Option<ChapterSpan>,
    /// 只导出第 V 卷
    #[arg(long, value_name = "卷", value_parser = clap::value_parser!(u32).range(1..))]
    pub volume: Option<u32>,
    /// 输出文件（默认项目内的 export/<书名>-<范围>.<扩展名>）；txt 与 md 可写 - 输出到标准输出
    #[arg(short = 'o', long, value_name = "文件")]
    pub output: Option<PathBuf>,
    /// txt 的分段方式：fullwidth 每段一行、段首两个全角空格（默认）；blank 段与段之间空一行、不缩进
    #[arg(long, value_enum, default_value = "fullwidth", value_name = "方式")]
    pub indent: IndentArg,
    /// txt 的编码：utf8（默认）；gbk 给只收 GBK 的平台（GBK 里没有的字会逐个列出、拒绝导出，不会被替换）；gb18030 能表示所有字
    #[arg(long, value_enum, default_value = "utf8", value_name = "编码")]
    pub encoding: EncodingArg,
    /// EPUB 的作者（默认 novel.json 的 author，没有则为「佚名」）
    #[arg(long, value_name = "作者")]
    pub author: Option<String>,
}

/// The export format (no doc comments on the variants: clap would show them in English-framed
/// long help; the argument's help names each value).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    Txt,
    Epub,
    Md,
}

impl Format {
    fn ext(self) -> &'static str {
        match self {
            Format::Txt => "txt",
            Format::Epub => "epub",
            Format::Md => "md",
        }
    }
}

/// The txt paragraph layout.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum IndentArg {
    Fullwidth,
    Blank,
}

/// The txt encoding.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum EncodingArg {
    Utf8,
    Gbk,
    Gb18030,
}

impl EncodingArg {
    fn text(self) -> TextEncoding {
        match self {
            EncodingArg::Utf8 => TextEncoding::Utf8,
            EncodingArg::Gbk => TextEncoding::Gbk,
            EncodingArg::Gb18030 => TextEncoding::Gb18030,
        }
    }

    fn label(self) -> &'static str {
        match self {
            EncodingArg::Utf8 => "UTF-8",
            EncodingArg::Gbk => "GBK",
            EncodingArg::Gb18030 => "GB18030",
        }
    }
}

/// Characters the asked encoding cannot hold, with where each first appears (exit 1: the text
/// is the author's to change, or the encoding).
fn unmappable(encoding: EncodingArg, chars: &[char], g: &Gathered) -> CliError {
    let places = novel_store::export::locate(chars, &g.chapters);
    let shown: Vec<String> = places
        .iter()
        .take(10)
        .map(|p| format!("「{}」{}:{}:{}", p.character, p.file, p.line, p.column))
        .collect();
    let more = if places.len() > shown.len() {
        format!("……另有 {} 个", places.len() - shown.len())
    } else {
        String::new()
    };
    CliError::new(
        "E_EXPORT_ENCODING",
        format!(
            "有 {} 个字 {} 编码里没有，无法导出：{}{more}",
            chars.len(),
            encoding.label(),
            shown.join("、")
        ),
        "改用 --encoding gb18030（能表示所有字，多数要求 GBK 的平台也接受）或默认的 UTF-8；也可以在正文里换掉这些字",
        Exit::Problems,
    )
    .with_report(
        &UnmappableData {
            encoding: encoding.label(),
            unmappable: places,
        },
        String::new(),
    )
}

fn export_error(e: ExportError) -> CliError {
    CliError::new(e.code(), e.to_string(), e.hint(), Exit::Usage)
}

/// Where the export goes: stdout (`-o -`), the path given, or the project's `export/` file.
enum Target {
    Stdout,
    File { path: PathBuf, shown: String },
}

fn target(project: &Project, args: &ExportArgs, g: &Gathered) -> Result<Target, CliError> {
    let (first, last) = span(g);
    match &args.output {
        Some(p) if p.as_os_str() == "-" => {
            if args.format == Format::Epub {
                return Err(CliError::new(
                    "E_USAGE",
                    "EPUB 是二进制文件，不能输出到标准输出（-o -）",
                    "用 -o 书名.epub 指定文件，或不写 -o，导出到项目的 export/ 目录",
                    Exit::Usage,
                ));
            }
            if args.encoding != EncodingArg::Utf8 {
                return Err(CliError::new(
                    "E_USAGE",
                    format!(
                        "{} 编码的文本不能输出到标准输出（-o -）",
                        args.encoding.label()
                    ),
                    "用 -o 书名.txt 指定文件，或不写 -o，导出到项目的 export/ 目录",
                    Exit::Usage,
                ));
            }
            Ok(Target::Stdout)
        }
        Some(p) => {
            let path = novel_store::project::absolute(p);
            let shown = match project.relative(&path) {
                Some(rel) if !rel.is_empty() => rel,
                _ => p.display().to_string(),
            };
            Ok(Target::File { path, shown })
        }
        None => {
            let rel = novel_store::export::default_file(
                &g.title,
                g.volume,
                first,
                last,
                args.format.ext(),
            );
            Ok(Target::File {
                path: project.path(&rel),
                shown: rel,
            })
        }
    }
}

fn span(g: &Gathered) -> (u32, u32) {
    let first = g.chapters.first().map_or(0, |c| c.number);
    let last = g.chapters.last().map_or(0, |c| c.number);
    (first, last)
}

/// The exported bytes of `g` in the asked format.
fn render(g: &Gathered, args: &ExportArgs) -> Result<Vec<u8>, CliError> {
    Ok(match args.format {
        Format::Md => md(g.chapters.iter().map(|c| c.text.as_str())).into_bytes(),
        Format::Txt => {
            let indent = match args.indent {
                IndentArg::Fullwidth => Indent::Fullwidth,
                IndentArg::Blank => Indent::Blank,
            };
            let plain: Vec<_> = g
                .chapters
                .iter()
                .map(|c| plain_chapter(c.number, &c.text))
                .collect();
            encode(&txt(&plain, indent), args.encoding.text())
                .map_err(|chars| unmappable(args.encoding, &chars, g))?
        }
        Format::Epub => {
            let author = g.author_or(args.author.as_deref());
            let chapters = g
                .chapters
                .iter()
                .map(|c| {
                    let p = plain_chapter(c.number, &c.text);
                    EpubChapter {
                        number: c.number,
                        title: p.title,
                        paragraphs: p.paragraphs,
                        volume: c.volume,
                    }
                })
                .collect();
            let book = EpubBook {
                title: g.title.clone(),
                author,
                dated: g.dated,
                chapters,
            };
            novel_store::epub::build(&book).map_err(export_error)?
        }
    })
}

pub fn run(global: &GlobalArgs, args: ExportArgs) -> Result<Report, CliError> {
    let project = super::project(global)?;
    let range = match (args.chapters, args.volume) {
        (Some(ChapterSpan(a, b)), _) => Range::Chapters([a, b]),
        (None, Some(v)) => Range::Volume(v),
        (None, None) => Range::All,
    };
    if args.encoding != EncodingArg::Utf8 && args.format != Format::Txt {
        return Err(CliError::new(
            "E_USAGE",
            format!("--encoding {} 只用于 txt", args.encoding.label()),
            "Markdown 与 EPUB 总是 UTF-8：去掉 --encoding，或改用 --format txt",
            Exit::Usage,
        ));
    }
    let g = novel_store::export::gather(&project, range).map_err(export_error)?;
    let to = target(&project, &args, &g)?;
    let bytes = render(&g, &args)?;
    warn(&g);
    let (first, last) = span(&g);
    let chars: usize = g
        .chapters
        .iter()
        .map(|c| novel_text::count::count(&c.text).chars)
        .sum();
    let mut volumes: Vec<u32> = g.chapters.iter().filter_map(|c| c.volume).collect();
    volumes.dedup();
    // Written first: the report names where the export went.
    let (file, text) = match to {
        Target::Stdout => (
            "-".to_string(),
            Some(String::from_utf8_lossy(&bytes).into_owned()),
        ),
        Target::File { path, shown } => {
            novel_store::export::write(&path, &bytes)?;
            (shown, None)
        }
    };
    let data = ExportData {
        format: args.format.ext(),
        encoding: if args.format == Format::Txt {
            args.encoding.label()
        } else {
            "UTF-8"
        },
        file: &file,
        chapters: [first, last],
        count: g.chapters.len(),
        chars,
        volumes,
        missing: &g.missing,
        text: text.as_deref(),
    };
    let human = match &text {
        Some(text) => text.clone(),
        None => summary(&g, &args, chars, &file),
    };
    Report::new(&data, human)
}

/// Chapters missing from the range and files that could not be read, on stderr.
fn warn(g: &Gathered) {
    if !g.missing.is_empty() {
        let list: Vec<String> = g.missing.iter().map(u32::to_string).collect();
        output::err(&format!(
            "注意：第 {} 章没有已提交的正文（chapters/ 中缺少文件），已跳过\n",
            list.join("、")
        ));
    }
    for p in &g.problems {
        output::err(&format!("注意：{p}\n"));
    }
}

fn summary(g: &Gathered, args: &ExportArgs, chars: usize, shown: &str) -> String {
    let (first, last) = span(g);
    let range = match g.volume {
        Some(v) => format!("第{v}卷（第{first}–{last}章）"),
        None if first == last => format!("第{first}章"),
        None => format!("第{first}–{last}章"),
    };
    format!(
        "已导出《{}》{range}，共 {} 章、{chars} 字（{}）\n文件：{shown}\n",
        g.title,
        g.chapters.len(),
        match args.format {
            Format::Txt => format!("txt，{}", args.encoding.label()),
            Format::Epub => "EPUB 3".to_string(),
            Format::Md => "Markdown".to_string(),
        }
    )
}
