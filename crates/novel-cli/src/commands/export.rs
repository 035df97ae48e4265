//! `novel export [--format txt|epub|md] [--chapters A..B | --volume V] [-o FILE]
//! [--indent keep|fullwidth|blank] [--no-extras] [--author 作者]`: the committed chapters, with
//! the book's extras and volume headings in reading order, as one file for a platform (txt), an
//! e-reader (EPUB 3) or the author (Markdown). Lossless: the text is never rendered as
//! Markdown; txt is the stored text itself. See `docs/orchestration.md` §8d for the JSON.

use std::path::PathBuf;

use clap::{Args, ValueEnum};
use serde::Serialize;

use novel_store::Project;
use novel_store::epub::{EpubBook, EpubPage, PageKind};
use novel_store::export::{ExportError, Gathered, Range};
use novel_text::export::{
    Book, ChapterIn, ExtraIn, Indent, Piece, PieceKind, Scope, TextEncoding, VolumeIn, encode, md,
    pieces, txt,
};

use crate::args::{ChapterSpan, GlobalArgs, chapter_span};
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
    /// Extras exported with the chapters (楔子、番外, the preface …).
    extras: usize,
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
    after_help = "只导出已提交的章节（chapters/chapter-NNN.md，到断点的 last_completed_chapter 为止），从不导出 staging 中的稿子；导入时保留的附录（楔子、序、番外、后记、前言……extras/）按原来的位置一起导出，--no-extras 不要附录。\
一个字都不改：正文是纯文本，从不当 Markdown 渲染（*、**、_、行首的 - 1. > # 都原样保留）；标题照原文（第一回 还是 第一回）；有卷标题的书，卷标题单独一行（EPUB 里是目录的一级）。\
txt：各章（与附录）之间空一行；默认 --indent keep 与项目里保存的正文逐字节相同，导出再导入得到同样的章节；fullwidth 每段一行、段首两个全角空格；blank 段与段之间空一行、不缩进。默认 UTF-8 编码（--encoding gbk / gb18030 可选；GBK 里没有的字逐个列出位置、拒绝导出，从不替换）、\\n 换行。\
md：同样的内容写成 Markdown，卷标题 #、章 ##，会被当成记号的字符都加了转义，显示出来与原文相同；导入这个 .md 得到同样的章节。\
epub：EPUB 3，书名取 novel.json 的 title（没有则为项目目录名），作者取 --author、novel.json 的 author，都没有则为「佚名」，语言 zh-CN；目录按卷与章（附录在原位）；样式不写死宽度，横排、竖排阅读器都可用。\
卷的章节范围与 novel status 同一来源（storyline-schedule.json、大纲、契约、novel.json 的 chapters_per_volume）。"
)]
pub struct ExportArgs {
    /// 格式：txt 纯文本（默认，供平台发布）、epub 电子书、md Markdown
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
    /// txt 的分段方式：keep 与保存的正文完全相同（默认）；fullwidth 每段一行、段首两个全角空格；blank 段与段之间空一行、不缩进
    #[arg(long, value_enum, default_value = "keep", value_name = "方式")]
    pub indent: IndentArg,
    /// 不导出附录（楔子、序、番外、后记、前言等），只导出正文章节
    #[arg(long)]
    pub no_extras: bool,
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
    Keep,
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

/// The book's pieces for the export: the chapters of the range, the extras that go with them
/// and the volume headings, in reading order.
fn book_pieces(g: &Gathered, args: &ExportArgs, range: Range) -> Vec<Piece> {
    let volumes: std::collections::BTreeMap<u32, VolumeIn> = g
        .volumes
        .iter()
        .map(|(v, f)| {
            (
                *v,
                VolumeIn {
                    heading: f.heading.clone(),
                    generic: f.generic,
                },
            )
        })
        .collect();
    let book = Book {
        chapters: g
            .chapters
            .iter()
            .map(|c| ChapterIn {
                number: c.number,
                text: &c.text,
                volume: c.volume,
            })
            .collect(),
        extras: g
            .extras
            .iter()
            .map(|e| ExtraIn {
                stem: &e.stem,
                text: &e.text,
            })
            .collect(),
        volumes: &volumes,
        first: g.book[0],
        last: g.book[1],
        scope: match range {
            Range::All => Scope::All,
            Range::Chapters(_) => Scope::Chapters,
            Range::Volume(v) => Scope::Volume(v),
        },
        without_extras: args.no_extras,
    };
    pieces(&book)
}

/// The EPUB pages of the pieces: a volume's own text goes on its divider page.
fn epub_pages(pieces: &[Piece]) -> Vec<EpubPage> {
    let mut pages: Vec<EpubPage> = Vec::with_capacity(pieces.len());
    let lines = |body: &str| -> Vec<String> {
        if body.is_empty() {
            Vec::new()
        } else {
            body.split('\n').map(str::to_string).collect()
        }
    };
    for p in pieces {
        match p.kind {
            PieceKind::Volume => pages.push(EpubPage {
                kind: PageKind::Volume,
                title: p
                    .heading
                    .clone()
                    .unwrap_or_else(|| format!("第{}卷", p.volume.unwrap_or_default())),
                lines: Vec::new(),
                number: None,
                volume: p.volume,
            }),
            PieceKind::Extra
                if p.heading.is_none()
                    && p.volume.is_some()
                    && pages
                        .last()
                        .is_some_and(|l| l.kind == PageKind::Volume && l.volume == p.volume) =>
            {
                if let Some(last) = pages.last_mut() {
                    last.lines.extend(lines(&p.body));
                }
            }
            kind => pages.push(EpubPage {
                kind: if kind == PieceKind::Chapter {
                    PageKind::Chapter
                } else {
                    PageKind::Extra
                },
                title: p.heading.clone().unwrap_or_else(|| {
                    if p.name.is_empty() {
                        "前言".to_string()
                    } else {
                        p.name.clone()
                    }
                }),
                lines: lines(&p.body),
                number: p.number,
                volume: p.volume,
            }),
        }
    }
    pages
}

/// The exported bytes of `pieces` in the asked format.
fn render(g: &Gathered, args: &ExportArgs, pieces: &[Piece]) -> Result<Vec<u8>, CliError> {
    Ok(match args.format {
        Format::Md => md(pieces).into_bytes(),
        Format::Txt => {
            let indent = match args.indent {
                IndentArg::Keep => Indent::Keep,
                IndentArg::Fullwidth => Indent::Fullwidth,
                IndentArg::Blank => Indent::Blank,
            };
            encode(&txt(pieces, indent), args.encoding.text())
                .map_err(|chars| unmappable(args.encoding, &chars, g))?
        }
        Format::Epub => {
            let book = EpubBook {
                title: g.title.clone(),
                author: g.author_or(args.author.as_deref()),
                dated: g.dated,
                pages: epub_pages(pieces),
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
    let pieces = book_pieces(&g, &args, range);
    let bytes = render(&g, &args, &pieces)?;
    let extras = pieces.iter().filter(|p| p.kind == PieceKind::Extra).count();
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
        extras,
        volumes,
        missing: &g.missing,
        text: text.as_deref(),
    };
    let human = match &text {
        Some(text) => text.clone(),
        None => summary(&g, &args, chars, extras, &file),
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

fn summary(g: &Gathered, args: &ExportArgs, chars: usize, extras: usize, shown: &str) -> String {
    let (first, last) = span(g);
    let range = match g.volume {
        Some(v) => format!("第{v}卷（第{first}–{last}章）"),
        None if first == last => format!("第{first}章"),
        None => format!("第{first}–{last}章"),
    };
    let extras = if extras > 0 {
        format!("、{extras} 篇附录")
    } else {
        String::new()
    };
    format!(
        "已导出《{}》{range}，共 {} 章{extras}、正文 {chars} 字（{}）\n文件：{shown}\n",
        g.title,
        g.chapters.len(),
        match args.format {
            Format::Txt => format!("txt，{}", args.encoding.label()),
            Format::Epub => "EPUB 3".to_string(),
            Format::Md => "Markdown".to_string(),
        }
    )
}
