//! The book as a reader gets it, for `novel export`: its pieces — volume headings, chapters,
//! extras — in reading order, and the txt and Markdown layouts built from them.
//!
//! Lossless: a chapter's text is plain text, never rendered as Markdown. A chapter file is
//! its heading line (`# 第一回 …`, kept as written: the title line) and its body, every line
//! as stored; only front matter (metadata) and the blank lines around the body are left out.
//!
//! - [`read_chapter`] / [`read_extra`]: a stored file to a [`Piece`].
//! - [`txt`]: the pieces, a blank line between them; the body as stored
//!   ([`Indent::Keep`], so importing the export gives back the same chapters byte for byte), or
//!   re-indented for a platform (each paragraph opened by `　　`, or set apart by blank lines:
//!   only leading and trailing spaces and blank lines change).
//! - [`md`]: the same pieces as Markdown that shows the text as it is: headings `#`/`##`,
//!   every character Markdown would take for syntax escaped ([`escape_markdown`]), and read
//!   back by [`unescape_markdown`].
//! - [`encode`]: a txt in UTF-8, GBK or GB18030 for platforms that still ask for GBK; characters
//!   GBK cannot hold are named, never replaced.
//!
//! Layer: books — whole chapters and books (splitting, metrics, upkeep, leak, export, craft); the
//! top.

use crate::chapters::{Heading, heading};

/// Two full-width spaces: the paragraph indent Chinese platforms expect.
pub const FULLWIDTH_INDENT: &str = "\u{3000}\u{3000}";

/// How paragraphs are laid out in a txt export.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Indent {
    /// The text as stored, every line and blank line (the default).
    Keep,
    /// Each paragraph on its own line, opened by `　　`; no blank lines.
    Fullwidth,
    /// Paragraphs separated by a blank line, no indent.
    Blank,
}

/// The character encoding of a txt export.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TextEncoding {
    Utf8,
    /// GBK (Windows code page 936): most Chinese text, but not emoji or the rarer characters.
    Gbk,
    /// GB18030: every Unicode character, GBK-compatible for those GBK has.
    Gb18030,
}

/// `text` in `encoding`; or, when the encoding cannot hold some of its characters, each such
/// character once, in the order they first appear (nothing is replaced or dropped silently).
pub fn encode(text: &str, encoding: TextEncoding) -> Result<Vec<u8>, Vec<char>> {
    use encoding_rs::EncoderResult;
    let target = match encoding {
        TextEncoding::Utf8 => return Ok(text.as_bytes().to_vec()),
        TextEncoding::Gbk => encoding_rs::GBK,
        TextEncoding::Gb18030 => encoding_rs::GB18030,
    };
    let mut encoder = target.new_encoder();
    let mut out = Vec::with_capacity(text.len());
    let mut missing: Vec<char> = Vec::new();
    let mut rest = text;
    loop {
        let (result, read) =
            encoder.encode_from_utf8_to_vec_without_replacement(rest, &mut out, true);
        rest = &rest[read..];
        match result {
            EncoderResult::InputEmpty => break,
            EncoderResult::OutputFull => out.reserve(rest.len() + 16),
            EncoderResult::Unmappable(c) => {
                if !missing.contains(&c) {
                    missing.push(c);
                }
            }
        }
    }
    if missing.is_empty() {
        Ok(out)
    } else {
        Err(missing)
    }
}

/// What a piece of the book is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PieceKind {
    /// A volume heading (no body).
    Volume,
    Chapter,
    /// An extra: 楔子、番外、the preface, a volume's own text.
    Extra,
}

/// One piece of the book in reading order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Piece {
    pub kind: PieceKind,
    /// The heading line as written (`第一回 甄士隐梦幻识通灵`); `None` for text without one (the
    /// preface, a volume's own text).
    pub heading: Option<String>,
    /// The text, lines as stored, blank lines at both ends trimmed.
    pub body: String,
    /// The chapter number (chapters).
    pub number: Option<u32>,
    /// The volume it falls in, when known.
    pub volume: Option<u32>,
    /// An extra's name (`楔子`, `前言`: its file name without the number); empty otherwise.
    pub name: String,
}

/// The text of a stored file without its BOM and front matter.
fn without_front_matter(text: &str) -> &str {
    match novel_core::frontmatter::parse(text) {
        Some(fm) => &text[fm.body_start..],
        None => text.strip_prefix('\u{feff}').unwrap_or(text),
    }
}

/// The Markdown heading at the top of a stored file (its first non-blank line when it starts
/// with `#`), and the rest.
fn split_heading(text: &str) -> (Option<&str>, &str) {
    let trimmed = text.trim_start_matches(['\n', '\r']);
    let first = trimmed.split('\n').next().unwrap_or("");
    if first.trim_start().starts_with('#') {
        let heading = first
            .trim()
            .trim_start_matches('#')
            .trim_matches(|c: char| c.is_whitespace() || c == '\u{3000}');
        let rest = trimmed.get(first.len() + 1..).unwrap_or("");
        (Some(heading), rest)
    } else {
        (None, trimmed)
    }
}

/// Blank lines at both ends removed (a blank line: only spaces, full-width ones too).
fn trim_blank(text: &str) -> &str {
    let blank = |l: &str| l.chars().all(|c| c.is_whitespace() || c == '\u{3000}');
    let lines: Vec<&str> = text.split('\n').collect();
    let Some(start) = lines.iter().position(|l| !blank(l)) else {
        return "";
    };
    let end = lines.iter().rposition(|l| !blank(l)).unwrap_or(start);
    let from: usize = lines[..start].iter().map(|l| l.len() + 1).sum();
    let to: usize = lines[..=end].iter().map(|l| l.len() + 1).sum::<usize>() - 1;
    let body = &text[from..to];
    body.strip_suffix('\r').unwrap_or(body)
}

/// Chapter `number`'s stored file as a piece: the title line is its heading as written when it
/// names this chapter (第一回 stays 第一回); `第N章 标题` when it names none or another number;
/// `第N章` without a heading. The body is every line after the heading.
pub fn read_chapter(number: u32, text: &str, volume: Option<u32>) -> Piece {
    let (head, rest) = split_heading(without_front_matter(text));
    let title = match head.map(|h| (h, heading(h))) {
        Some((h, Some(Heading::Chapter { number: n, .. }))) if n == number => h.to_string(),
        Some((_, Some(Heading::Chapter { title, .. }))) => title_line(number, &title),
        Some((h, _)) if !h.is_empty() => title_line(number, h),
        _ => title_line(number, ""),
    };
    Piece {
        kind: PieceKind::Chapter,
        heading: Some(title),
        body: trim_blank(rest).to_string(),
        number: Some(number),
        volume,
        name: String::new(),
    }
}

/// An extra's stored file as a piece: `headless` (a preface or a volume's own text, stored
/// without a heading) keeps every line as body.
pub fn read_extra(text: &str, headless: bool, volume: Option<u32>) -> Piece {
    let text = without_front_matter(text);
    let (head, rest) = if headless {
        (None, text)
    } else {
        split_heading(text)
    };
    Piece {
        kind: PieceKind::Extra,
        heading: head.filter(|h| !h.is_empty()).map(str::to_string),
        body: trim_blank(rest).to_string(),
        number: None,
        volume,
        name: String::new(),
    }
}

/// A committed chapter handed to [`pieces`].
#[derive(Debug, Clone, Copy)]
pub struct ChapterIn<'a> {
    pub number: u32,
    pub text: &'a str,
    pub volume: Option<u32>,
}

/// An extra handed to [`pieces`]: its file name without `.md` (`01-楔子`) and its text.
#[derive(Debug, Clone, Copy)]
pub struct ExtraIn<'a> {
    pub stem: &'a str,
    pub text: &'a str,
}

/// What the project knows of a volume's heading.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct VolumeIn {
    /// As written (imported), or `第N卷 标题` from a planned volume's title.
    pub heading: Option<String>,
    /// A planned volume: a plain `第N卷` is printed when the export spans several volumes.
    pub generic: bool,
}

/// Which extras go with the chapters exported.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// The whole book: every extra.
    All,
    /// A run of chapters: the extras between them, and the book's front (back) matter when the
    /// run starts (ends) the book.
    Chapters,
    /// One volume: its extras (its own text first), and the book's front or back matter when
    /// it starts or ends the book.
    Volume(u32),
}

/// The book to lay out.
#[derive(Debug, Clone)]
pub struct Book<'a> {
    /// The chapters exported, in order.
    pub chapters: Vec<ChapterIn<'a>>,
    /// Every extra of the book, in file-name order.
    pub extras: Vec<ExtraIn<'a>>,
    pub volumes: &'a std::collections::BTreeMap<u32, VolumeIn>,
    /// The first and last committed chapters of the whole book.
    pub first: u32,
    pub last: u32,
    pub scope: Scope,
    /// Leave the extras out (`--no-extras`).
    pub without_extras: bool,
}

/// The names of extras read before the chapters when the file does not say where it goes (an
/// extra written before extras recorded their place, or by hand).
const FRONT_NAMES: &[&str] = &[
    "序",
    "楔子",
    "引子",
    "引言",
    "前言",
    "题记",
    "目录",
    "自序",
    "代序",
    "第零章",
    "第0章",
];

/// Where an extra stands: after which chapter, in which volume, its role, and a volume heading
/// it carries (a volume with no chapter of its own).
struct Placed<'a> {
    name: &'a str,
    after: u32,
    volume: Option<u32>,
    headless: bool,
    volume_heading: Option<&'a str>,
}

fn place<'a>(e: &ExtraIn<'a>, first: u32, last: u32) -> Placed<'a> {
    let fm = novel_core::frontmatter::parse(e.text);
    let get = |k: &str| fm.as_ref().and_then(|f| f.get(k));
    let role = get("role");
    let name = e
        .stem
        .split_once('-')
        .filter(|(nn, _)| nn.chars().all(|c| c.is_ascii_digit()))
        .map_or(e.stem, |(_, n)| n);
    let after = get("after_chapter")
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| {
            if FRONT_NAMES.iter().any(|f| name.starts_with(f)) || name == "前言" {
                first.saturating_sub(1)
            } else {
                last
            }
        });
    let headless = match role {
        Some("preface" | "volume") => true,
        Some(_) => false,
        None => {
            let (head, _) = split_heading(without_front_matter(e.text));
            head.is_none()
        }
    };
    Placed {
        name,
        after,
        volume: get("volume").and_then(|v| v.parse().ok()),
        headless,
        volume_heading: get("volume_heading").filter(|h| !h.is_empty()),
    }
}

/// A piece with its place in reading order (after chapter, chapter or extra, file order) and
/// the volume heading it carries.
type Item<'a> = ((u32, u8, usize), Piece, Option<&'a str>);

/// The pieces of `book` in reading order: each extra where its file says it stands (after
/// chapter N; one without a place: 序、楔子 before the first chapter, the rest after the last),
/// each volume's heading before its first piece.
pub fn pieces(book: &Book<'_>) -> Vec<Piece> {
    let (a, b) = match (book.chapters.first(), book.chapters.last()) {
        (Some(f), Some(l)) => (f.number, l.number),
        _ => (book.first, book.last),
    };
    // (after chapter, order, piece): chapters sort before the extras that follow them.
    let mut items: Vec<Item<'_>> = book
        .chapters
        .iter()
        .map(|c| {
            (
                (c.number, 0, 0),
                read_chapter(c.number, c.text, c.volume),
                None,
            )
        })
        .collect();
    if !book.without_extras {
        for (i, e) in book.extras.iter().enumerate() {
            let p = place(e, book.first, book.last);
            let front = p.after < a;
            let back = p.after >= b;
            let keep = match book.scope {
                Scope::All => true,
                Scope::Chapters => {
                    (p.after >= a && p.after < b)
                        || (front && p.after + 1 == a && a == book.first)
                        || (back && p.after == b && b == book.last)
                }
                Scope::Volume(v) => {
                    (p.volume == Some(v) && p.after + 1 >= a && p.after <= b)
                        || (p.volume.is_none()
                            && ((front && p.after + 1 == a && a == book.first)
                                || (back && p.after == b && b == book.last)))
                }
            };
            if keep {
                let mut piece = read_extra(e.text, p.headless, p.volume);
                piece.name = p.name.to_string();
                items.push(((p.after, 1, i), piece, p.volume_heading));
            }
        }
    }
    items.sort_by_key(|(k, _, _)| *k);
    let spans_volumes = items
        .iter()
        .filter_map(|(_, p, _)| p.volume)
        .collect::<std::collections::BTreeSet<_>>()
        .len()
        > 1;
    let mut out = Vec::with_capacity(items.len() + 8);
    let mut current: Option<u32> = None;
    for (_, piece, carried) in items {
        if let Some(v) = piece.volume
            && current != Some(v)
        {
            current = Some(v);
            let facts = book.volumes.get(&v).cloned().unwrap_or_default();
            let heading = facts
                .heading
                .or_else(|| carried.map(str::to_string))
                .or_else(|| (facts.generic && spans_volumes).then(|| format!("第{v}卷")));
            out.push(Piece {
                kind: PieceKind::Volume,
                heading,
                body: String::new(),
                number: None,
                volume: Some(v),
                name: String::new(),
            });
        }
        out.push(piece);
    }
    out
}

/// `第N章 标题` (or `第N章` when there is no title).
pub fn title_line(number: u32, name: &str) -> String {
    if name.is_empty() {
        format!("第{number}章")
    } else {
        format!("第{number}章 {name}")
    }
}

fn is_indent(c: char) -> bool {
    c == ' ' || c == '\t' || c == '\u{3000}'
}

/// The body's lines laid out for `indent`.
fn laid_out(body: &str, indent: Indent) -> Vec<String> {
    match indent {
        Indent::Keep => body.split('\n').map(str::to_string).collect(),
        Indent::Fullwidth => body
            .split('\n')
            .map(|l| l.trim_matches(is_indent))
            .filter(|l| !l.is_empty())
            .map(|l| format!("{FULLWIDTH_INDENT}{l}"))
            .collect(),
        Indent::Blank => {
            let mut out = Vec::new();
            for l in body
                .split('\n')
                .map(|l| l.trim_matches(is_indent))
                .filter(|l| !l.is_empty())
            {
                if !out.is_empty() {
                    out.push(String::new());
                }
                out.push(l.to_string());
            }
            out
        }
    }
}

/// The txt of `pieces` in `indent` layout, `\n` line ends, a blank line between pieces, ending
/// in a newline.
pub fn txt(pieces: &[Piece], indent: Indent) -> String {
    let size: usize = pieces
        .iter()
        .map(|p| p.heading.as_ref().map_or(0, String::len) + p.body.len() * 11 / 10 + 4)
        .sum();
    let mut out = String::with_capacity(size);
    for p in pieces {
        if p.heading.is_none() && p.body.is_empty() {
            continue;
        }
        if !out.is_empty() {
            out.push('\n');
        }
        if let Some(h) = &p.heading {
            out.push_str(h);
            out.push('\n');
            if indent == Indent::Blank && !p.body.is_empty() {
                out.push('\n');
            }
        }
        if !p.body.is_empty() {
            for line in laid_out(&p.body, indent) {
                out.push_str(&line);
                out.push('\n');
            }
        }
    }
    out
}

/// The Markdown of `pieces`: volume headings `#`, chapters and extras `##` (`#` when the book
/// has no volume heading), every line of text escaped so it shows as written.
pub fn md(pieces: &[Piece]) -> String {
    let volumes = pieces.iter().any(|p| p.kind == PieceKind::Volume);
    let mut out = String::new();
    for p in pieces {
        if p.heading.is_none() && p.body.is_empty() {
            continue;
        }
        if !out.is_empty() {
            out.push('\n');
        }
        if let Some(h) = &p.heading {
            let marks = if p.kind == PieceKind::Volume || !volumes {
                "#"
            } else {
                "##"
            };
            out.push_str(marks);
            out.push(' ');
            out.push_str(&escape_markdown(h));
            out.push('\n');
            if !p.body.is_empty() {
                out.push('\n');
            }
        }
        if !p.body.is_empty() {
            for line in p.body.split('\n') {
                out.push_str(&escape_markdown(line));
                out.push('\n');
            }
        }
    }
    out
}

/// One line of text as Markdown that renders as exactly this text: ASCII punctuation Markdown
/// reads as syntax is backslash-escaped (`*2` → `\*2`, a line-start `1.` → `1\.`), and spaces
/// opening the line become `&#32;` (four of them would start a code block).
pub fn escape_markdown(line: &str) -> String {
    let mut out = String::with_capacity(line.len() + 8);
    let mut chars = line.chars().peekable();
    while let Some(&c) = chars.peek()
        && (c == ' ' || c == '\t')
    {
        out.push_str(if c == ' ' { "&#32;" } else { "&#9;" });
        chars.next();
    }
    // A line-start list number: `12.` / `12)`.
    let rest: String = chars.collect();
    let digits = rest.chars().take_while(char::is_ascii_digit).count();
    let numbered = digits > 0 && rest[digits..].starts_with(['.', ')']);
    for (i, c) in rest.chars().enumerate() {
        let line_start = i == 0;
        let escape = match c {
            '\\' | '*' | '_' | '`' | '[' | ']' | '<' | '>' | '&' | '|' | '~' | '#' | '!' => true,
            '-' | '+' | '=' => line_start,
            '.' | ')' => numbered && i == digits,
            _ => false,
        };
        if escape {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// A line of Markdown as the text it shows: backslash escapes of ASCII punctuation and the
/// `&#32;` / `&#9;` of [`escape_markdown`] undone; everything else as it is. An imported `.md`
/// manuscript is read through it line by line before it is split, so an export in Markdown
/// imports back to the same text.
pub fn unescape_markdown(line: &str) -> std::borrow::Cow<'_, str> {
    if !line.contains('\\') && !line.contains("&#") {
        return std::borrow::Cow::Borrowed(line);
    }
    let mut out = String::with_capacity(line.len());
    let mut rest = line;
    while let Some(c) = rest.chars().next() {
        if c == '\\'
            && let Some(n) = rest[1..].chars().next()
            && n.is_ascii_punctuation()
        {
            out.push(n);
            rest = &rest[1 + n.len_utf8()..];
            continue;
        }
        if c == '&' {
            if let Some(r) = rest.strip_prefix("&#32;") {
                out.push(' ');
                rest = r;
                continue;
            }
            if let Some(r) = rest.strip_prefix("&#9;") {
                out.push('\t');
                rest = r;
                continue;
            }
        }
        out.push(c);
        rest = &rest[c.len_utf8()..];
    }
    std::borrow::Cow::Owned(out)
}

/// A Markdown manuscript's text with every line read through [`unescape_markdown`].
pub fn unescape_markdown_text(text: &str) -> String {
    if !text.contains('\\') && !text.contains("&#") {
        return text.to_string();
    }
    let mut out = String::with_capacity(text.len());
    for (i, line) in text.split('\n').enumerate() {
        if i > 0 {
            out.push('\n');
        }
        out.push_str(&unescape_markdown(line));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gbk_holds_common_text_and_names_what_it_cannot() {
        let text = "第1章 雨夜\n　　陆沉推门，「走吧」——€ 二〇二六年。\n";
        let gbk = encode(text, TextEncoding::Gbk).unwrap();
        let (back, _, bad) = encoding_rs::GBK.decode(&gbk);
        assert!(!bad);
        assert_eq!(back, text);
        assert_eq!(encode(text, TextEncoding::Utf8).unwrap(), text.as_bytes());

        let rare = "他叫𠀀，笑了😀，又叫𠀀。";
        assert_eq!(encode(rare, TextEncoding::Gbk), Err(vec!['𠀀', '😀']));
        let all = encode(rare, TextEncoding::Gb18030).unwrap();
        let (back, _, bad) = encoding_rs::GB18030.decode(&all);
        assert!(!bad);
        assert_eq!(back, rare);
    }

    #[test]
    fn a_chapter_keeps_its_heading_and_every_character() {
        let text = "\u{feff}---\nchapter: 2\n---\n# 第二回 **雨**夜\n\n　　他说：*走*。攻击力*2\n> 引文_一句_\n\n***\n<!-- 作者注 -->\n- 列表\n1. 第一\n#话题\n";
        let c = read_chapter(2, text, Some(1));
        assert_eq!(c.heading.as_deref(), Some("第二回 **雨**夜"));
        assert_eq!(
            c.body,
            "　　他说：*走*。攻击力*2\n> 引文_一句_\n\n***\n<!-- 作者注 -->\n- 列表\n1. 第一\n#话题"
        );
        // A heading naming another chapter, or none.
        assert_eq!(
            read_chapter(5, "# 第2章 雨夜\n正文", None)
                .heading
                .as_deref(),
            Some("第5章 雨夜")
        );
        assert_eq!(
            read_chapter(5, "# 旧怀表\n正文", None).heading.as_deref(),
            Some("第5章 旧怀表")
        );
        assert_eq!(
            read_chapter(5, "正文一。\n", None).heading.as_deref(),
            Some("第5章")
        );
    }

    #[test]
    fn txt_layouts() {
        let pieces = [
            read_extra("---\nrole: preface\n---\n# 书名\n作者\n", true, None),
            Piece {
                kind: PieceKind::Volume,
                heading: Some("第一卷 风起".into()),
                body: String::new(),
                number: None,
                volume: Some(1),
                name: String::new(),
            },
            read_chapter(1, "# 第1章 起\n\n甲。\n\n　　乙*2。\n", Some(1)),
            read_chapter(2, "# 第二章 承\n丙。\n", Some(1)),
        ];
        assert_eq!(
            txt(&pieces, Indent::Keep),
            "# 书名\n作者\n\n第一卷 风起\n\n第1章 起\n甲。\n\n　　乙*2。\n\n第二章 承\n丙。\n"
        );
        assert_eq!(
            txt(&pieces[2..], Indent::Fullwidth),
            "第1章 起\n　　甲。\n　　乙*2。\n\n第二章 承\n　　丙。\n"
        );
        assert_eq!(
            txt(&pieces[2..], Indent::Blank),
            "第1章 起\n\n甲。\n\n乙*2。\n\n第二章 承\n\n丙。\n"
        );
    }

    #[test]
    fn markdown_shows_the_text_as_written_and_reads_back() {
        for line in [
            "攻击力*2，审查**处",
            "- 不是列表",
            "1. 不是编号",
            "> 不是引用",
            "# 不是标题",
            "    四个空格",
            "a_b `c` [d](e) <f> & g | h ~ i \\ j",
            "---",
            "===",
            "　　全角缩进",
            "&#32; 字面的实体",
        ] {
            let md = escape_markdown(line);
            assert_eq!(unescape_markdown(&md), line, "{line} -> {md}");
            assert!(
                !md.starts_with("    ") && !md.starts_with('-') && !md.starts_with('#'),
                "{md}"
            );
        }
        let pieces = [
            Piece {
                kind: PieceKind::Volume,
                heading: Some("第一卷 风起".into()),
                body: String::new(),
                number: None,
                volume: Some(1),
                name: String::new(),
            },
            read_chapter(1, "# 第1章 *起*\n\n- 甲\n", Some(1)),
        ];
        assert_eq!(
            md(&pieces),
            "# 第一卷 风起\n\n## 第1章 \\*起\\*\n\n\\- 甲\n"
        );
    }
}
