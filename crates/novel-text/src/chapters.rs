//! Splitting a manuscript into chapters (`novel import`) by a heading grammar, not a pattern.
//!
//! A heading line is, after its Markdown `#` marks and spaces:
//!
//! ```text
//! [prefix] label [separator title]
//! prefix    正文 | 《书名》 | 《书名》目录 | 书名 | 第一卷 卷名        (words before the label)
//! label     第 N 章|回|节|话          a chapter (N: any numeral novel_core::numerals reads,
//!                                     spaces allowed around it)
//!         | 第 N 卷|部|部分|册|篇 · 卷 N     a volume
//!         | Chapter N                 a chapter
//!         | 序章 楔子 引子 序言 序 前言 …  番外 尾声 后记 完本感言 上架感言 …   an extra
//!         | 【label】 〔label〕 [label] …  the label in brackets
//! ```
//!
//! The title follows a separator (space, `：`, `、`, `.`, `·`, `—` …) or is glued on
//! (`第九章大团圆`). A line is prose, not a heading, when it is longer than
//! [`MAX_HEADING_CHARS`], or when the title is glued on and either the unit and the next
//! character make a word (第三回合、第二节课、第四回中既将…) or the line carries sentence
//! punctuation (，。！？；). Such a line stays text but is remembered ([`Suspect`]): when a chapter
//! is missing, the import names the line that may be its heading.
//!
//! A line that has a label whose number cannot be read or is out of range (第4294967296章,
//! 第一亿章, 第-1章) is an error, never quietly text. Chapter 0 (第零章 楔子) is an extra.
//!
//! Sections: text before the first heading is the preface 「前言」; the text under a volume
//! heading before the next heading is that volume's preface; a run of chapter headings with no
//! text between them whose chapters all come again later is a table of contents and stays text
//! of the section before it; a chapter heading repeating the chapter just before it (paged
//! chapters, 「第七章 血战（二）」) continues that chapter, the repeated heading kept as a line
//! of its text. Nothing is dropped: every line of the source is in exactly one section, a
//! heading line, or (only with `strip_furniture`) the list of furniture taken out.
//!
//! The sections are `novel_core::import::Section`s; numbering problems are judged there.
//!
//! Layer: books — whole chapters and books (splitting, metrics, upkeep, leak, export, craft); the
//! top.

use novel_core::import::{
    Furniture, Problem, ProblemKind, Section, SectionKind, Suspect, VolumeHeading,
};
use novel_core::numerals::{Numeral, arabic_digit, is_chinese_numeral, leading_numeral};

use crate::furniture::{self, FurnitureKind};

/// A heading line is short: a longer one is prose that happens to start like one.
pub const MAX_HEADING_CHARS: usize = 40;

/// Words before a chapter label on its line (a book title, 正文) are at most this long.
const MAX_PREFIX_CHARS: usize = 24;

/// A heading line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Heading {
    Chapter {
        number: u32,
        title: String,
        /// The heading as written, from its label on (prefix excluded).
        text: String,
        /// Words before the label on the line (正文, 《书名》目录), if any.
        prefix: String,
    },
    Volume {
        number: u32,
        title: String,
        text: String,
    },
    Extra {
        name: String,
        title: String,
        text: String,
        /// Read before the chapters (序、楔子、第零章); the others after them.
        front: bool,
    },
}

/// What one line of a manuscript is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Line {
    Text,
    Heading(Heading),
    /// `第一卷 风起 第一章 初入`: a volume and its first chapter on one line.
    VolumeAndChapter(Heading, Heading),
    /// A heading whose number cannot be read or is out of range: refuses the import.
    Unreadable {
        label: String,
        why: String,
    },
    /// Starts like chapter `number`'s heading but reads as prose (kept as text).
    Suspect {
        number: u32,
    },
}

/// The named extras: (name, read before the chapters). Longest first where one name starts
/// another (序章 before 序).
const EXTRAS: &[(&str, bool)] = &[
    ("序章", true),
    ("序言", true),
    ("自序", true),
    ("代序", true),
    ("楔子", true),
    ("引子", true),
    ("引言", true),
    ("前言", true),
    ("题记", true),
    ("目录", true),
    ("序", true),
    ("番外篇", false),
    ("番外", false),
    ("外传", false),
    ("尾声", false),
    ("终章", false),
    ("后记", false),
    ("附录", false),
    ("跋", false),
    // The author's notes to readers: extras, not chapters.
    ("完本感言", false),
    ("完结感言", false),
    ("上架感言", false),
    ("感言", false),
    ("作者的话", false),
    ("作者有话说", false),
    ("请假条", false),
    ("新书预告", false),
];

/// Units after `第N`: chapters, then volumes (部分 before 部).
const CHAPTER_UNITS: &[&str] = &["章", "回", "节", "话"];
const VOLUME_UNITS: &[&str] = &["部分", "卷", "部", "册", "篇"];

/// Characters that make a word with the unit before them (第三回合、第二节课、第四回中):
/// after a glued title these say the line is prose.
fn makes_word(unit: &str, next: char) -> bool {
    let words = match unit {
        "章" => "节程法句回",
        "回" => "合来去家头首答应复归忆报转过中到想味声避顾收击放信话程路国身见看里内外后前时",
        "节" => "课目日奏省约点气拍俭制外操假庆令选车段骨哀",
        "话" => "题语说音筒剧费术里中锋头别柄茬",
        "卷" => "子入起走帘轴曲发土心须宗面首",
        "部" => "队门落长位件手电机下首族署将属众曲作书片剧戏车影小",
        "册" => "子封立页",
        "篇" => "章幅目文论什",
        _ => "",
    };
    words.contains(next)
}

/// Sentence punctuation: with a glued title it makes the line prose.
fn is_sentence_punctuation(c: char) -> bool {
    "，。！？；…,;!?".contains(c)
}

fn is_space(c: char) -> bool {
    c.is_whitespace() || c == '\u{3000}' || c == '\u{feff}'
}

fn is_separator(c: char) -> bool {
    is_space(c) || "：:、.．·・-—–|｜_".contains(c)
}

/// Brackets a label may stand in (【第十二章】), and the closing one.
fn closer(open: char) -> Option<char> {
    let pairs = [
        ('【', '】'),
        ('〔', '〕'),
        ('［', '］'),
        ('[', ']'),
        ('（', '）'),
        ('(', ')'),
        ('「', '」'),
        ('『', '』'),
    ];
    pairs.iter().find(|(o, _)| *o == open).map(|(_, c)| *c)
}

/// The title after a label: separators stripped.
fn title_of(rest: &str) -> String {
    rest.trim_start_matches(is_separator)
        .trim_end_matches(is_space)
        .to_string()
}

/// The rest after a label ends the line or starts with a separator.
fn separated(rest: &str) -> bool {
    rest.chars().next().is_none_or(is_separator)
}

/// What the label at the start of a text is.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Label {
    Chapter { n: u64, unit: &'static str },
    Volume { n: u64, unit: &'static str },
    Extra { name: String, front: bool },
}

/// A label at the start of `t` and where it ends (brackets included); `Err` for a `第…章` whose
/// number cannot be read (why, and where the label ends); `Ok(None)` when `t` does not start
/// with a label.
fn label(t: &str) -> Result<Option<(Label, usize)>, (String, usize)> {
    let Some(first) = t.chars().next() else {
        return Ok(None);
    };
    if let Some(close) = closer(first) {
        let start = first.len_utf8();
        let Some(rel) = t[start..].find(close) else {
            return Ok(None);
        };
        let inner = t[start..start + rel].trim_matches(is_space);
        let end = start + rel + close.len_utf8();
        return match label(inner) {
            Ok(Some((l, len))) if len == inner.len() => Ok(Some((l, end))),
            Err((why, _)) => Err((why, end)),
            _ => Ok(None),
        };
    }
    if let Some(rest) = t.strip_prefix('第') {
        return numbered(t, rest);
    }
    if let Some(rest) = t.strip_prefix('卷')
        && let Some((Numeral::Value(n), len)) = leading_numeral(rest)
        && separated(&rest[len..])
    {
        return Ok(Some((
            Label::Volume { n, unit: "卷" },
            t.len() - rest.len() + len,
        )));
    }
    if let Some(head) = t.get(..7)
        && head.eq_ignore_ascii_case("chapter")
    {
        let rest = t[7..].trim_start_matches(is_space);
        let digits = rest.chars().take_while(char::is_ascii_digit).count();
        if digits > 0 && separated(&rest[digits..]) {
            return match rest[..digits].parse::<u64>() {
                Ok(n) => Ok(Some((
                    Label::Chapter { n, unit: "章" },
                    t.len() - rest.len() + digits,
                ))),
                Err(_) => Err(("章号太大".into(), t.len() - rest.len() + digits)),
            };
        }
        return Ok(None);
    }
    for &(name, front) in EXTRAS {
        if let Some(after) = t.strip_prefix(name) {
            let numbered_len = match leading_numeral(after) {
                Some((Numeral::Value(_), len)) => len,
                _ => 0,
            };
            if separated(&after[numbered_len..]) {
                let end = name.len() + numbered_len;
                return Ok(Some((
                    Label::Extra {
                        name: t[..end].to_string(),
                        front,
                    },
                    end,
                )));
            }
            return Ok(None);
        }
    }
    Ok(None)
}

/// `第 N 章` / `第 N 卷` after the `第` (`rest`).
fn numbered(t: &str, rest: &str) -> Result<Option<(Label, usize)>, (String, usize)> {
    let r = rest.trim_start_matches(is_space);
    let unit_at = |s: &str| -> Option<(&'static str, bool)> {
        let s = s.trim_start_matches(is_space);
        CHAPTER_UNITS
            .iter()
            .map(|u| (*u, true))
            .chain(VOLUME_UNITS.iter().map(|u| (*u, false)))
            .find(|(u, _)| s.starts_with(u))
    };
    if let Some((numeral, len)) = leading_numeral(r) {
        let after = &r[len..];
        if let Some((unit, chapter)) = unit_at(after) {
            let end = t.len() - after.trim_start_matches(is_space).len() + unit.len();
            return match numeral {
                Numeral::Value(n) if chapter => Ok(Some((Label::Chapter { n, unit }, end))),
                Numeral::Value(n) => Ok(Some((Label::Volume { n, unit }, end))),
                Numeral::Unreadable => Err(("读不出这个章号".into(), end)),
            };
        }
    }
    // 第一亿章, 第-1章, 第4.5章: a number-like run, then a unit.
    let mut seen = 0;
    for (i, c) in r.char_indices() {
        if let Some((unit, true)) = unit_at(&r[i..])
            && seen > 0
        {
            let end = t.len() - r.len() + i + unit.len();
            return Err((
                "读不出章号（章号要是 1 以上的整数，如 12 或 十二）".into(),
                end,
            ));
        }
        let numberish = arabic_digit(c).is_some()
            || is_chinese_numeral(c)
            || "亿兆负点-−+.．,，".contains(c)
            || is_space(c);
        if !numberish || seen > 16 {
            break;
        }
        if !is_space(c) {
            seen += 1;
        }
    }
    Ok(None)
}

/// Parses a line (see the module note).
pub fn line(raw: &str) -> Line {
    let t = raw.trim_matches(is_space).trim_start_matches('#');
    let t = t.trim_matches(is_space);
    if t.is_empty() {
        return Line::Text;
    }
    match labelled(t, "") {
        // 第一卷 风起 第一章 初入: a volume heading whose title holds the first chapter's.
        Some(volume @ Line::Heading(Heading::Volume { .. })) => match prefixed(t) {
            Some(both @ Line::VolumeAndChapter(..)) => both,
            _ => volume,
        },
        Some(found) => found,
        None => prefixed(t).unwrap_or(Line::Text),
    }
}

/// The line `t` when it starts with a label (`prefix` the words before it, for a chapter).
fn labelled(t: &str, prefix: &str) -> Option<Line> {
    let long = t.chars().count() > MAX_HEADING_CHARS;
    let (l, end) = match label(t) {
        Ok(Some(found)) => found,
        Ok(None) => return None,
        Err((why, end)) => {
            let rest = &t[end..];
            let prose = long || !separated(rest) && rest.chars().any(is_sentence_punctuation);
            return Some(unreadable_unless_prose(prose, t, why));
        }
    };
    let rest = &t[end..];
    let glued = !separated(rest);
    let text = t.to_string();
    let title = title_of(rest);
    Some(match l {
        Label::Chapter { n, unit } => {
            let prose = long || glued && runs_on(rest, unit);
            let Ok(number) = u32::try_from(n) else {
                return Some(unreadable_unless_prose(prose, t, format!("章号 {n} 太大")));
            };
            if prose {
                Line::Suspect { number }
            } else if number == 0 {
                Line::Heading(Heading::Extra {
                    name: t[..end].trim_end_matches(is_space).to_string(),
                    title,
                    text,
                    front: true,
                })
            } else {
                Line::Heading(Heading::Chapter {
                    number,
                    title,
                    text,
                    prefix: prefix.to_string(),
                })
            }
        }
        Label::Volume { n, unit } => {
            let prose = long || glued && runs_on(rest, unit);
            match u32::try_from(n) {
                Ok(number) if number > 0 && !prose => Line::Heading(Heading::Volume {
                    number,
                    title,
                    text,
                }),
                _ => Line::Text,
            }
        }
        Label::Extra { name, front } => {
            if long || glued {
                Line::Text
            } else {
                Line::Heading(Heading::Extra {
                    name,
                    title,
                    text,
                    front,
                })
            }
        }
    })
}

/// Whether the words glued to a label (`rest`) make it prose: they continue the label's unit
/// into a word (第三章节, 第二回合), or hold a sentence's punctuation.
fn runs_on(rest: &str, unit: &str) -> bool {
    rest.chars().next().is_some_and(|c| makes_word(unit, c))
        || rest.chars().any(is_sentence_punctuation)
}

/// A line that starts like a heading but cannot be read as one: prose when it reads as prose,
/// else unreadable for `why`.
fn unreadable_unless_prose(prose: bool, t: &str, why: String) -> Line {
    if prose {
        Line::Text
    } else {
        Line::Unreadable {
            label: t.to_string(),
            why,
        }
    }
}

/// A chapter label after some words on the line: `正文 第一回 …`, `《书名》目录 第一回 …`,
/// `第一卷 风起 第一章 初入`, `正文第一章`.
fn prefixed(t: &str) -> Option<Line> {
    let mut starts: Vec<usize> = ["正文卷", "正文"]
        .iter()
        .filter_map(|p| t.strip_prefix(p).map(|_| p.len()))
        .collect();
    let mut prev_space = false;
    for (i, c) in t.char_indices() {
        if !is_space(c) && prev_space {
            starts.push(i);
        }
        prev_space = is_space(c);
    }
    for start in starts {
        let prefix = t[..start].trim_end_matches(is_space);
        if prefix.chars().count() > MAX_PREFIX_CHARS || prefix.chars().any(is_sentence_punctuation)
        {
            return None;
        }
        let Some(found) = labelled(&t[start..], prefix) else {
            continue;
        };
        let Line::Heading(chapter @ Heading::Chapter { .. }) = found else {
            // Only a chapter label counts after a prefix (a volume's or an extra's name
            // after other words is prose more often than not).
            if matches!(found, Line::Unreadable { .. }) {
                return Some(found);
            }
            continue;
        };
        if let Some(Line::Heading(volume @ Heading::Volume { .. })) = labelled(prefix, "") {
            let Heading::Chapter {
                number,
                title,
                text,
                ..
            } = chapter
            else {
                unreachable!("matched a chapter above")
            };
            return Some(Line::VolumeAndChapter(
                volume,
                Heading::Chapter {
                    number,
                    title,
                    text,
                    prefix: String::new(),
                },
            ));
        }
        return Some(Line::Heading(chapter));
    }
    None
}

/// The heading a line is, if it is one.
pub fn heading(raw: &str) -> Option<Heading> {
    match line(raw) {
        Line::Heading(h) => Some(h),
        Line::VolumeAndChapter(_, chapter) => Some(chapter),
        _ => None,
    }
}

/// How a manuscript is split.
#[derive(Debug, Clone, Copy, Default)]
pub struct Options {
    /// Take furniture lines (and heading prefixes) out of the sections.
    pub strip_furniture: bool,
}

/// The sections of a manuscript and what the splitter noticed on the way.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Split {
    pub sections: Vec<Section>,
    pub volumes: Vec<VolumeHeading>,
    /// Headings whose number cannot be read (errors).
    pub problems: Vec<Problem>,
    /// Furniture lines, in order (taken out of the sections when stripping).
    pub furniture: Vec<Furniture>,
    /// Lines that start like a chapter heading but read as prose.
    pub suspects: Vec<Suspect>,
}

/// A heading found on a line, with its 0-based line index.
struct Mark {
    at: usize,
    heading: Heading,
    /// A volume heading on the same line before it (第一卷 风起 第一章 …).
    volume: Option<Heading>,
}

/// Splits one text (a whole manuscript, or one file of a folder) at its headings.
pub fn split(text: &str, file: &str, options: Options) -> Split {
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Split::default();
    let (mut marks, keep) = scan(&lines, file, &mut out);
    drop_tables_of_contents(&mut marks, &lines);
    for m in &marks {
        if let Heading::Chapter { prefix, .. } = &m.heading
            && !prefix.is_empty()
        {
            out.furniture.push(furniture_line(
                file,
                m.at,
                FurnitureKind::HeadingPrefix,
                prefix,
            ));
        }
    }
    out.furniture.sort_by_key(|f| f.line);
    let text = Text {
        lines: &lines,
        keep: &keep,
        strip: options.strip_furniture,
        file,
    };
    // The preface: everything before the first heading.
    let first = marks.first().map_or(lines.len(), |m| m.at);
    push_section(
        &mut out.sections,
        preface("前言".into(), None, file, 1, text.body(0, first)),
    );
    sections_at(&text, &marks, &mut out);
    let with_chapters: std::collections::BTreeSet<u32> = out
        .sections
        .iter()
        .filter(|s| s.kind == SectionKind::Chapter)
        .filter_map(|s| s.volume)
        .collect();
    out.sections.retain(|s| {
        !(s.kind == SectionKind::Preface
            && s.body.is_empty()
            && s.volume.is_none_or(|v| with_chapters.contains(&v)))
    });
    out
}

/// Reads every line: the headings found (in order) and what of each other line the text keeps;
/// unreadable headings, suspects and furniture go to `out`.
fn scan(lines: &[&str], file: &str, out: &mut Split) -> (Vec<Mark>, Vec<Keep>) {
    let mut marks: Vec<Mark> = Vec::new();
    let mut keep: Vec<Keep> = vec![Keep::Line; lines.len()];
    for (i, raw) in lines.iter().enumerate() {
        match line(raw) {
            Line::Heading(heading) => marks.push(Mark {
                at: i,
                heading,
                volume: None,
            }),
            Line::VolumeAndChapter(volume, chapter) => marks.push(Mark {
                at: i,
                heading: chapter,
                volume: Some(volume),
            }),
            Line::Unreadable { label, why } => out.problems.push(Problem::error(
                ProblemKind::Unreadable,
                "E_IMPORT_HEADING",
                file,
                i + 1,
                None,
                format!("「{label}」像章节标题，但{why}"),
            )),
            Line::Suspect { number } => out.suspects.push(Suspect {
                file: file.to_string(),
                line: i + 1,
                number,
                text: raw.trim_matches(is_space).chars().take(30).collect(),
            }),
            Line::Text => keep[i] = furniture_of(file, i, raw, &mut out.furniture),
        }
    }
    (marks, keep)
}

/// One text's lines and what of each the sections keep.
struct Text<'a> {
    lines: &'a [&'a str],
    keep: &'a [Keep],
    /// Furniture taken out of the sections.
    strip: bool,
    file: &'a str,
}

impl Text<'_> {
    /// Lines `from..to` as a section's body.
    fn body(&self, from: usize, to: usize) -> String {
        let kept: Vec<&str> = (from..to)
            .filter_map(|i| match &self.keep[i] {
                Keep::Nothing if self.strip => None,
                Keep::Cut(prose) if self.strip => Some(prose.as_str()),
                _ => Some(self.lines[i]),
            })
            .collect();
        trim_blank_lines(&kept)
    }

    /// The heading as the section keeps it: the whole line when furniture is kept and the
    /// heading had a prefix, else the heading's own text.
    fn heading_of(&self, m: &Mark) -> String {
        match &m.heading {
            Heading::Chapter { prefix, .. } if !self.strip && !prefix.is_empty() => self.lines
                [m.at]
                .trim_matches(is_space)
                .trim_start_matches('#')
                .trim_matches(is_space)
                .to_string(),
            Heading::Chapter { text, .. }
            | Heading::Volume { text, .. }
            | Heading::Extra { text, .. } => text.clone(),
        }
    }

    /// The volume heading `h` at line index `at`, if it is one.
    fn volume_heading(&self, h: &Heading, at: usize) -> Option<VolumeHeading> {
        let Heading::Volume {
            number,
            title,
            text,
        } = h
        else {
            return None;
        };
        Some(VolumeHeading {
            volume: *number,
            title: title.clone(),
            heading: text.clone(),
            file: self.file.to_string(),
            line: at + 1,
        })
    }
}

/// The sections from the headings `marks` on: a chapter runs on over the repeated headings of
/// its further pages; a volume heading opens a volume (and keeps its preface).
fn sections_at(text: &Text<'_>, marks: &[Mark], out: &mut Split) {
    let (lines, file) = (text.lines, text.file);
    let mut volume: Option<u32> = None;
    let mut k = 0;
    while k < marks.len() {
        let m = &marks[k];
        let mut end_mark = k + 1;
        let mut merged = Vec::new();
        while let Some(next) = marks.get(end_mark)
            && is_page_of(&marks[end_mark - 1], next, |i| {
                lines[i].chars().all(is_space) || text.keep[i] == Keep::Nothing
            })
        {
            merged.push(next.at + 1);
            end_mark += 1;
        }
        let to = marks.get(end_mark).map_or(lines.len(), |n| n.at);
        for v in [&m.volume, &Some(m.heading.clone())]
            .into_iter()
            .flatten()
            .filter_map(|h| text.volume_heading(h, m.at))
        {
            volume = Some(v.volume);
            out.volumes.push(v);
        }
        let body = text.body(m.at + 1, to);
        let section = |kind, number, name: &str, title: &str, front| Section {
            kind,
            number,
            name: name.to_string(),
            title: title.to_string(),
            heading: text.heading_of(m),
            volume,
            file: file.to_string(),
            line: m.at + 1,
            body: body.clone(),
            merged: merged.clone(),
            front,
        };
        match &m.heading {
            // Kept even without text for now: a volume with no chapter of its own keeps its
            // heading only through this section.
            Heading::Volume { text: heading, .. } => out.sections.push(preface(
                heading.clone(),
                volume,
                file,
                m.at + 1,
                body.clone(),
            )),
            Heading::Chapter { number, title, .. } => push_section(
                &mut out.sections,
                section(SectionKind::Chapter, Some(*number), "", title, false),
            ),
            Heading::Extra {
                name, title, front, ..
            } => push_section(
                &mut out.sections,
                section(SectionKind::Extra, None, name, title, *front),
            ),
        }
        k = end_mark;
    }
}

fn furniture_line(file: &str, i: usize, kind: FurnitureKind, text: &str) -> Furniture {
    Furniture {
        file: file.to_string(),
        line: i + 1,
        kind: kind_name(kind),
        label: kind.label(),
        text: text.trim_matches(is_space).to_string(),
        inline: false,
    }
}

/// The furniture of a text line, listed in `out`; returns what `--strip-furniture` keeps of
/// the line: nothing (a whole furniture line), the prose with the pieces cut out, or the line.
fn furniture_of(file: &str, i: usize, raw: &str, out: &mut Vec<Furniture>) -> Keep {
    match furniture::find(raw) {
        None => Keep::Line,
        Some(furniture::Found::Line(kind)) => {
            out.push(furniture_line(file, i, kind, raw));
            Keep::Nothing
        }
        Some(furniture::Found::Inline(pieces)) => {
            for p in &pieces {
                let mut f = furniture_line(file, i, p.kind, &raw[p.start..p.end]);
                f.inline = true;
                out.push(f);
            }
            Keep::Cut(furniture::cut(raw, &pieces))
        }
    }
}

/// What stripping keeps of a line.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Keep {
    Line,
    Nothing,
    Cut(String),
}

fn kind_name(kind: FurnitureKind) -> &'static str {
    match kind {
        FurnitureKind::Url => "url",
        FurnitureKind::Ad => "ad",
        FurnitureKind::Navigation => "navigation",
        FurnitureKind::Notice => "notice",
        FurnitureKind::AuthorNote => "author_note",
        FurnitureKind::HeadingPrefix => "heading_prefix",
    }
}

fn preface(name: String, volume: Option<u32>, file: &str, line: usize, body: String) -> Section {
    Section {
        kind: SectionKind::Preface,
        number: None,
        name,
        title: String::new(),
        heading: String::new(),
        volume,
        file: file.to_string(),
        line,
        body,
        merged: Vec::new(),
        front: true,
    }
}

/// Keeps a section unless it is a preface with no text (nothing before the first heading).
fn push_section(out: &mut Vec<Section>, s: Section) {
    if s.kind == SectionKind::Preface && s.body.is_empty() {
        return;
    }
    out.push(s);
}

/// Whether the chapter heading `next` continues the chapter of `prev` (the heading before it)
/// as a further page: the same number, the same title once page marks are set aside, and
/// either a page mark on one of them (「第七章 血战（二）」) or nothing of the story between the
/// two headings (`empty(i)`: line `i` is blank or furniture — a site repeating the heading
/// under its navigation). The same heading again after text of its own is a second copy or
/// another chapter under the same number: a duplicate, reported by the plan, never merged.
fn is_page_of(prev: &Mark, next: &Mark, empty: impl Fn(usize) -> bool) -> bool {
    let (
        Heading::Chapter {
            number: a,
            title: ta,
            ..
        },
        Heading::Chapter {
            number: b,
            title: tb,
            ..
        },
    ) = (&prev.heading, &next.heading)
    else {
        return false;
    };
    let marked = |t: &str| page_mark(&squeeze(t)).is_some();
    next.volume.is_none()
        && a == b
        && same_page_title(ta, tb)
        && (marked(ta) || marked(tb) || (prev.at + 1..next.at).all(empty))
}

/// A title without spaces and dashes (how page titles are compared).
fn squeeze(t: &str) -> String {
    t.chars()
        .filter(|c| !is_space(*c) && !"—–-·・：:、.．_".contains(*c))
        .collect()
}

/// Whether two titles of one chapter number are pages of it: the same once page marks
/// (（一）, (2), 〔三〕, 上/中/下), spaces and dashes are set aside, or the later one has none.
fn same_page_title(a: &str, b: &str) -> bool {
    let norm = |t: &str| -> String {
        let mut s = squeeze(t);
        while let Some(at) = page_mark(&s) {
            s.truncate(at);
        }
        s
    };
    let (a, b) = (norm(a), norm(b));
    a == b || b.is_empty()
}

/// Where a trailing page mark starts: （二） (2) 〔三〕 【四】 [5], or a bare 上/中/下 after a
/// title of two characters or more.
fn page_mark(s: &str) -> Option<usize> {
    const PAIRS: [(char, char); 5] = [
        ('（', '）'),
        ('(', ')'),
        ('〔', '〕'),
        ('【', '】'),
        ('[', ']'),
    ];
    let last = s.chars().last()?;
    if let Some((open, _)) = PAIRS.iter().find(|(_, c)| *c == last) {
        let i = s.rfind(*open)?;
        let inner = &s[i + open.len_utf8()..s.len() - last.len_utf8()];
        let mark = !inner.is_empty()
            && inner.chars().all(|c| {
                arabic_digit(c).is_some() || is_chinese_numeral(c) || "上中下完续".contains(c)
            });
        return mark.then_some(i);
    }
    ("上中下".contains(last) && s.chars().count() > 2).then(|| s.len() - last.len_utf8())
}

/// A run of chapter headings with nothing but blank lines between them, whose chapters all
/// come again later, is a table of contents: its lines stay text (of the section before it, or
/// of a 目录 heading that opens it). Linear in the number of headings: a manuscript with a
/// heading on every line is read in one pass.
fn drop_tables_of_contents(marks: &mut Vec<Mark>, lines: &[&str]) {
    use std::collections::HashMap;
    let blank = |from: usize, to: usize| (from..to).all(|i| lines[i].chars().all(is_space));
    let number = |m: &Mark| match m.heading {
        Heading::Chapter { number, .. } => Some(number),
        _ => None,
    };
    // How often each chapter number occurs among the marks not passed yet.
    let mut after: HashMap<u32, usize> = HashMap::new();
    for n in marks.iter().filter_map(number) {
        *after.entry(n).or_default() += 1;
    }
    let mut keep = vec![true; marks.len()];
    let mut i = 0;
    while i < marks.len() {
        let mut j = i;
        while j + 1 < marks.len() && blank(marks[j].at + 1, marks[j + 1].at) {
            j += 1;
        }
        // The run's last heading opens text: that one is a real chapter, not an entry —
        // unless its chapter comes again later too (the table of contents is followed by the
        // book's title, author and blurb lines, which stay text of the section before it).
        let next_at = marks.get(j + 1).map_or(lines.len(), |m| m.at);
        let again = |m: &Mark| {
            number(m).is_some_and(|n| {
                let in_run = marks[i..=j].iter().filter(|r| number(r) == Some(n)).count();
                after.get(&n).is_some_and(|c| *c > in_run)
            })
        };
        let end = if blank(marks[j].at + 1, next_at) || (j > i && again(&marks[j])) {
            j + 1
        } else {
            j
        };
        let mut pass = |m: &Mark| {
            if let Some(n) = number(m)
                && let Some(c) = after.get_mut(&n)
            {
                *c -= 1;
            }
        };
        if end == i {
            // A heading followed by its text.
            pass(&marks[i]);
            i += 1;
            continue;
        }
        marks[i..end].iter().for_each(&mut pass);
        // A 目录 heading opening the run stays a heading; the entries become its text.
        let from = match &marks[i].heading {
            Heading::Extra { .. } => i + 1,
            _ => i,
        };
        let entries = &marks[from..end];
        let chapters: Vec<u32> = entries.iter().filter_map(number).collect();
        let toc = chapters.len() >= 2
            && entries
                .iter()
                .all(|m| !matches!(m.heading, Heading::Extra { .. }))
            && chapters
                .iter()
                .all(|n| after.get(n).is_some_and(|c| *c > 0));
        if toc {
            for k in keep.iter_mut().take(end).skip(from) {
                *k = false;
            }
        }
        i = end;
    }
    let mut n = 0;
    marks.retain(|_| {
        n += 1;
        keep[n - 1]
    });
}

fn trim_blank_lines(lines: &[&str]) -> String {
    let blank = |l: &&str| l.chars().all(is_space);
    let start = lines.iter().position(|l| !blank(l)).unwrap_or(lines.len());
    let end = lines
        .iter()
        .rposition(|l| !blank(l))
        .map_or(start, |e| e + 1);
    lines[start..end].join("\n")
}

/// What a file name of a folder says: `001.txt`, `12.md`, `012-标题.txt`, `第12章 标题.txt`,
/// `Chapter 12.txt`, `chapter-012.md` give a chapter number (and title), `楔子.txt` an extra.
pub fn file_name_heading(stem: &str) -> Option<Heading> {
    if let Some(h) = heading(stem) {
        return Some(h);
    }
    let lower = stem.to_ascii_lowercase();
    let bare = ["chapter", "chap", "ch"]
        .iter()
        .find_map(|p| lower.strip_prefix(p))
        .map(|rest| rest.trim_start_matches([' ', '-', '_', '.']))
        .filter(|rest| rest.starts_with(|c: char| c.is_ascii_digit()))
        .map_or(stem, |rest| &stem[stem.len() - rest.len()..]);
    let digits = bare.chars().take_while(char::is_ascii_digit).count();
    let number: u32 = bare.get(..digits)?.parse().ok()?;
    let rest = &bare[digits..];
    (separated(rest) && number > 0).then(|| Heading::Chapter {
        number,
        title: title_of(rest),
        text: String::new(),
        prefix: String::new(),
    })
}

/// Splits one file of a folder: its own headings when it has chapter headings; else one
/// section named by the file (a `# 标题` first line becomes the title). A file whose name
/// gives nothing is kept as a preface-kind section named after it (the caller warns).
pub fn split_file(text: &str, file: &str, stem: &str, options: Options) -> Split {
    let own = split(text, file, options);
    if own
        .sections
        .iter()
        .any(|s| s.kind == SectionKind::Chapter || s.kind == SectionKind::Extra)
        || !own.problems.is_empty()
    {
        return own;
    }
    let mut lines: Vec<&str> = text.lines().collect();
    let first = lines.iter().position(|l| !l.chars().all(is_space));
    let mut line = 1;
    let mut md_title = String::new();
    if let Some(i) = first
        && lines[i].trim_start().starts_with('#')
    {
        md_title = lines[i]
            .trim_start()
            .trim_start_matches('#')
            .trim()
            .to_string();
        line = i + 1;
        lines.remove(i);
    }
    let body = stripped_body(&lines, options.strip_furniture);
    let (kind, number, name, title, front) = file_section(stem, &md_title);
    let heading = file_heading(kind, number, &name, &title, &md_title);
    let furniture = own.furniture;
    Split {
        sections: vec![Section {
            kind,
            number,
            name,
            title,
            heading,
            volume: None,
            file: file.to_string(),
            line,
            body,
            merged: Vec::new(),
            front,
        }],
        volumes: Vec::new(),
        problems: Vec::new(),
        furniture,
        suspects: own.suspects,
    }
}

/// What a file's name says its one section is: kind, number, name, title (a `# 标题` line,
/// `md_title`, wins over the name's), and whether it is front matter.
fn file_section(stem: &str, md_title: &str) -> (SectionKind, Option<u32>, String, String, bool) {
    let pick = |t: String| {
        if md_title.is_empty() {
            t
        } else {
            md_title.to_string()
        }
    };
    match file_name_heading(stem) {
        Some(Heading::Chapter { number, title, .. }) => (
            SectionKind::Chapter,
            Some(number),
            String::new(),
            pick(title),
            false,
        ),
        Some(Heading::Extra {
            name, title, front, ..
        }) => (SectionKind::Extra, None, name, pick(title), front),
        _ => (
            SectionKind::Preface,
            None,
            stem.to_string(),
            md_title.to_string(),
            false,
        ),
    }
}

/// The heading of a file's one section: the `# 标题` line, or — when that names no chapter —
/// the one the file name gives.
fn file_heading(
    kind: SectionKind,
    number: Option<u32>,
    name: &str,
    title: &str,
    md_title: &str,
) -> String {
    match (kind, number) {
        (SectionKind::Chapter, Some(n))
            if !matches!(heading(md_title), Some(Heading::Chapter { .. })) =>
        {
            if title.is_empty() {
                format!("第{n}章")
            } else {
                format!("第{n}章 {title}")
            }
        }
        (SectionKind::Extra, _) if md_title.is_empty() => {
            if title.is_empty() {
                name.to_string()
            } else {
                format!("{name} {title}")
            }
        }
        _ => md_title.to_string(),
    }
}

/// The lines as a body: with `strip`, furniture lines left out and furniture pieces cut out of
/// the lines of the story.
fn stripped_body(lines: &[&str], strip: bool) -> String {
    let cut: Vec<String> = lines
        .iter()
        .filter_map(|l| match furniture::find(l) {
            _ if !strip => Some(l.to_string()),
            None => Some(l.to_string()),
            Some(furniture::Found::Line(_)) => None,
            Some(furniture::Found::Inline(pieces)) => Some(furniture::cut(l, &pieces)),
        })
        .collect();
    let kept: Vec<&str> = cut.iter().map(String::as_str).collect();
    trim_blank_lines(&kept)
}

/// Where a folder's file goes in the book, by its name: 序章/楔子/引子 first, then by number,
/// then the rest (番外、尾声、unnumbered). Ties keep the order of the caller's secondary key.
pub fn folder_rank(stem: &str) -> (u8, u32) {
    match file_name_heading(stem) {
        Some(Heading::Extra { front: true, .. }) => (0, 0),
        Some(Heading::Chapter { number, .. }) | Some(Heading::Volume { number, .. }) => (1, number),
        _ => (2, 0),
    }
}

/// What an import warns about one file of a folder (split by [`split_file`] into `sections`):
/// no number in its name or its text, or a name that says another chapter than its heading.
pub fn folder_warnings(stem: &str, shown: &str, sections: &[Section]) -> Vec<Problem> {
    let warn = |kind, message: String, line| {
        let hint = match kind {
            ProblemKind::Unnumbered => {
                "要作为正文章节导入，就在文件名或首行标题写上章号（如「第12章 标题」）"
            }
            _ => "标题的章号写错了就改标题，文件名写错了就改文件名，再重新导入",
        };
        Problem::warning(kind, shown, line, message, hint)
    };
    let mut out = Vec::new();
    let chapters: Vec<&Section> = sections
        .iter()
        .filter(|s| s.kind == SectionKind::Chapter)
        .collect();
    if sections.len() == 1 && sections[0].kind == SectionKind::Preface {
        out.push(warn(
            ProblemKind::Unnumbered,
            format!("文件名与内容都没有章号，作为附录「{stem}」导入"),
            1,
        ));
    }
    if let (Some(Heading::Chapter { number, .. }), [one]) =
        (file_name_heading(stem), chapters.as_slice())
        && one.number != Some(number)
    {
        out.push(warn(
            ProblemKind::NameMismatch,
            format!(
                "文件名是第 {number} 章，标题写的是第 {} 章：按标题导入",
                one.number.unwrap_or(0)
            ),
            one.line,
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ch(number: u32, title: &str) -> Option<(u32, String)> {
        Some((number, title.to_string()))
    }

    fn chapter_of(l: &str) -> Option<(u32, String)> {
        match heading(l) {
            Some(Heading::Chapter { number, title, .. }) => Some((number, title)),
            _ => None,
        }
    }

    #[test]
    fn chapter_headings_in_every_common_form() {
        let cases = [
            ("第12章 初入江湖", ch(12, "初入江湖")),
            ("第12章", ch(12, "")),
            ("## 第12章：初入江湖", ch(12, "初入江湖")),
            ("　　第一百二十三章　风起", ch(123, "风起")),
            ("第两千零五章、夜袭", ch(2005, "夜袭")),
            ("第十二回 大闹天宫", ch(12, "大闹天宫")),
            ("第12节.开端", ch(12, "开端")),
            ("第１２章 全角", ch(12, "全角")),
            ("第十章初入江湖", ch(10, "初入江湖")),
            ("Chapter 12: The Gate", ch(12, "The Gate")),
            ("CHAPTER 7", ch(7, "")),
            ("第〇〇七章 代号", ch(7, "代号")),
            // The short forms of old editions, 廿/卅, 百 alone.
            (
                "第一百十回　文鸯单骑退雄兵　姜维背水破大敌",
                ch(110, "文鸯单骑退雄兵　姜维背水破大敌"),
            ),
            ("第一百十一章 归来", ch(111, "归来")),
            ("第一百一回　出陇上诸葛妆神", ch(101, "出陇上诸葛妆神")),
            ("第一一零回  史太君寿终归地府", ch(110, "史太君寿终归地府")),
            ("第廿一回 夜雨", ch(21, "夜雨")),
            ("第卅回", ch(30, "")),
            ("第百章 终局", ch(100, "终局")),
            // Spaces, brackets, prefixes.
            ("第 12 章 标题", ch(12, "标题")),
            ("【第十二章】 风雪", ch(12, "风雪")),
            ("【第十二章】风雪", ch(12, "风雪")),
            ("正文 第一回 宴桃园豪杰三结义", ch(1, "宴桃园豪杰三结义")),
            (
                "《西游记》目录 第一回　灵根育孕源流出",
                ch(1, "灵根育孕源流出"),
            ),
            ("正文第一章 陨落的天才", ch(1, "陨落的天才")),
            ("斗破苍穹 第一章 陨落的天才", ch(1, "陨落的天才")),
            ("第九章大团圆", ch(9, "大团圆")),
            (
                "第三十八回林潇湘魁夺菊花诗薛蘅芜讽和螃蟹咏——",
                ch(38, "林潇湘魁夺菊花诗薛蘅芜讽和螃蟹咏——"),
            ),
            ("第七章 血战（二）", ch(7, "血战（二）")),
            ("第12话 再会", ch(12, "再会")),
        ];
        for (l, want) in cases {
            assert_eq!(chapter_of(l), want, "{l}");
        }
        assert_eq!(
            heading("正文 第一回 宴桃园"),
            Some(Heading::Chapter {
                number: 1,
                title: "宴桃园".into(),
                text: "第一回 宴桃园".into(),
                prefix: "正文".into()
            })
        );
    }

    #[test]
    fn prose_that_starts_like_a_heading_is_prose() {
        for l in [
            "第四回中既将薛家母子在荣府内寄居等事略已表明，此回则暂不能写矣．",
            "第三回合，他一拳打出。",
            "第二节课下课了。",
            "第二天清晨，他醒来。",
            "第一次见面，他就笑了。",
            "第二，立传的通例，开首大抵该是“某，字某，某地人也”",
            "第十二章的故事很长很长很长很长很长很长很长很长很长很长很长很长很长很长很长很长很长",
            "尾声渐近，众人散去。",
            "卷起袖子就干",
            "chapters of life",
            "序幕拉开了。",
            "第一部手机是他送的。",
            "",
        ] {
            assert_eq!(heading(l), None, "{l}");
            assert!(!matches!(line(l), Line::Unreadable { .. }), "{l}");
        }
        assert_eq!(line("第三回合，他一拳打出。"), Line::Suspect { number: 3 });
        assert_eq!(
            line("第四回中既将薛家母子在荣府内寄居等事略已表明，此回则暂不能写矣．"),
            Line::Suspect { number: 4 }
        );
    }

    #[test]
    fn headings_with_unreadable_numbers_are_not_text() {
        for l in [
            "第4294967296章 溢出",
            "第一亿章 太多",
            "第-1章 负数",
            "第十十章 错字",
            "第99999999999999999999999章",
        ] {
            assert!(
                matches!(line(l), Line::Unreadable { .. }),
                "{l}: {:?}",
                line(l)
            );
        }
    }

    #[test]
    fn volumes_and_extras_are_not_chapters() {
        assert_eq!(
            heading("第一卷 风起青萍"),
            Some(Heading::Volume {
                number: 1,
                title: "风起青萍".into(),
                text: "第一卷 风起青萍".into()
            })
        );
        assert!(matches!(
            heading("卷二：潜龙"),
            Some(Heading::Volume { number: 2, .. })
        ));
        assert!(matches!(
            heading("第一部分 起源"),
            Some(Heading::Volume { number: 1, .. })
        ));
        for (l, name, front) in [
            ("番外一 师父", "番外一", false),
            ("楔子", "楔子", true),
            ("序", "序", true),
            ("序言 写在前面", "序言", true),
            ("完本感言", "完本感言", false),
            ("上架感言：谢谢大家", "上架感言", false),
            ("第零章 楔子", "第零章", true),
            ("第0章", "第0章", true),
        ] {
            match heading(l) {
                Some(Heading::Extra {
                    name: n, front: f, ..
                }) => {
                    assert_eq!((n.as_str(), f), (name, front), "{l}")
                }
                other => panic!("{l}: {other:?}"),
            }
        }
        assert!(matches!(
            line("第一卷 风起 第一章 初入"),
            Line::VolumeAndChapter(
                Heading::Volume { number: 1, .. },
                Heading::Chapter { number: 1, .. }
            )
        ));
    }

    type Summary = (
        SectionKind,
        Option<u32>,
        String,
        String,
        Option<u32>,
        usize,
        String,
    );

    fn summary(s: &Split) -> Vec<Summary> {
        s.sections
            .iter()
            .map(|x| {
                (
                    x.kind,
                    x.number,
                    x.name.clone(),
                    x.heading.clone(),
                    x.volume,
                    x.line,
                    x.body.clone(),
                )
            })
            .collect()
    }

    #[test]
    fn a_manuscript_splits_into_preface_extras_volumes_and_chapters() {
        let text = "《青云志》\n作者：某某\n\n楔子 风雪夜\n雪落。\n\n第一卷 风起\n卷首语。\n第一章 初入\n　　他来了。\n\n第二章\n他走了。\n番外一 师父\n往事。\n";
        let s = split(text, "书.txt", Options::default());
        let k = |kind| kind;
        assert_eq!(
            summary(&s),
            [
                (
                    k(SectionKind::Preface),
                    None,
                    "前言".into(),
                    "".into(),
                    None,
                    1,
                    "《青云志》\n作者：某某".into()
                ),
                (
                    SectionKind::Extra,
                    None,
                    "楔子".into(),
                    "楔子 风雪夜".into(),
                    None,
                    4,
                    "雪落。".into()
                ),
                (
                    SectionKind::Preface,
                    None,
                    "第一卷 风起".into(),
                    "".into(),
                    Some(1),
                    7,
                    "卷首语。".into()
                ),
                (
                    SectionKind::Chapter,
                    Some(1),
                    "".into(),
                    "第一章 初入".into(),
                    Some(1),
                    9,
                    "　　他来了。".into()
                ),
                (
                    SectionKind::Chapter,
                    Some(2),
                    "".into(),
                    "第二章".into(),
                    Some(1),
                    12,
                    "他走了。".into()
                ),
                (
                    SectionKind::Extra,
                    None,
                    "番外一".into(),
                    "番外一 师父".into(),
                    Some(1),
                    14,
                    "往事。".into()
                ),
            ]
        );
        assert_eq!(s.volumes.len(), 1);
        assert_eq!(s.volumes[0].heading, "第一卷 风起");
    }

    #[test]
    fn a_volume_without_chapters_keeps_its_heading() {
        let text = "第一卷 风起\n第1章 起\n甲。\n第二卷 番外篇\n番外一 师父\n往事。\n";
        let s = split(text, "书.txt", Options::default());
        let got: Vec<_> = s
            .sections
            .iter()
            .map(|x| (x.kind, x.name.as_str(), x.volume, x.body.as_str()))
            .collect();
        assert_eq!(
            got,
            [
                (SectionKind::Chapter, "", Some(1), "甲。"),
                (SectionKind::Preface, "第二卷 番外篇", Some(2), ""),
                (SectionKind::Extra, "番外一", Some(2), "往事。"),
            ]
        );
    }

    #[test]
    fn a_table_of_contents_stays_text_of_the_preface() {
        let text = "书名\n目录\n第一章 起\n第二章 承\n\n第三章 转\n\n第一章 起\n甲。\n第二章 承\n乙。\n第三章 转\n丙。\n";
        let s = split(text, "书.txt", Options::default());
        let got: Vec<_> = s
            .sections
            .iter()
            .map(|x| (x.kind, x.number, x.line))
            .collect();
        assert_eq!(
            got,
            [
                (SectionKind::Preface, None, 1),
                (SectionKind::Extra, None, 2),
                (SectionKind::Chapter, Some(1), 8),
                (SectionKind::Chapter, Some(2), 10),
                (SectionKind::Chapter, Some(3), 12),
            ]
        );
        assert_eq!(s.sections[1].body, "第一章 起\n第二章 承\n\n第三章 转");
        // A heading on every line with nothing repeated later is no table of contents.
        let s = split("第1章\n第2章\n第3章\n", "x.txt", Options::default());
        assert_eq!(s.sections.len(), 3);
    }

    #[test]
    fn paged_chapters_are_one_chapter_with_every_page_kept() {
        let text = "第七章 血战（一）\n甲。\n第七章 血战（二）\n乙。\n第八章 归来\n丙。\n";
        let s = split(text, "书.txt", Options::default());
        assert_eq!(s.sections.len(), 2);
        assert_eq!(s.sections[0].body, "甲。\n第七章 血战（二）\n乙。");
        assert_eq!(s.sections[0].merged, [3]);
        // The scraped 红楼梦: the heading again after the site's navigation.
        let text = "第三十八回  林潇湘魁夺菊花诗　薛蘅芜讽和螃蟹咏\n\n    回目录\n\n    第三十八回林潇湘魁夺菊花诗薛蘅芜讽和螃蟹咏——\n\n    话说宝钗湘云二人计议已妥。\n";
        let s = split(text, "红楼梦.txt", Options::default());
        assert_eq!(s.sections.len(), 1);
        assert!(s.sections[0].body.contains("话说宝钗"));
        assert_eq!(s.furniture.len(), 1);
        // Two different chapters that share a number are not pages.
        let s = split(
            "第3章 甲\n一。\n第3章 乙\n二。\n",
            "x.txt",
            Options::default(),
        );
        assert_eq!(s.sections.len(), 2);
    }

    #[test]
    fn furniture_is_listed_and_stripped_only_on_request() {
        let text = "正文 第一章 起\n甲。\n本章未完，请点击下一页继续阅读\nPS：求月票！\n乙。\n";
        let s = split(text, "书.txt", Options::default());
        assert_eq!(
            s.sections[0].body,
            "甲。\n本章未完，请点击下一页继续阅读\nPS：求月票！\n乙。"
        );
        assert_eq!(s.sections[0].heading, "正文 第一章 起");
        let lines: Vec<_> = s.furniture.iter().map(|f| (f.line, f.kind)).collect();
        assert_eq!(
            lines,
            [(1, "heading_prefix"), (3, "ad"), (4, "author_note")]
        );
        let s = split(
            text,
            "书.txt",
            Options {
                strip_furniture: true,
            },
        );
        assert_eq!(s.sections[0].body, "甲。\n乙。");
        assert_eq!(s.sections[0].heading, "第一章 起");
    }

    #[test]
    fn unreadable_headings_are_problems_and_prose_is_remembered() {
        let s = split(
            "第1章 起\n甲。\n第4294967296章 溢出\n第三回合，他一拳打出。\n",
            "书.txt",
            Options::default(),
        );
        assert_eq!(s.problems.len(), 1);
        assert_eq!(s.problems[0].finding.line, Some(3));
        assert_eq!(s.problems[0].finding.code, "E_IMPORT_HEADING");
        assert_eq!(s.suspects.len(), 1);
        assert_eq!((s.suspects[0].line, s.suspects[0].number), (4, 3));
        assert!(s.sections[0].body.contains("第4294967296章 溢出"));
    }

    #[test]
    fn folder_files_take_their_number_from_the_name() {
        let s = split_file(
            "# 初入江湖\n\n他来了。\n",
            "001.txt",
            "001",
            Options::default(),
        );
        let x = &s.sections[0];
        assert_eq!(
            (
                x.kind,
                x.number,
                x.title.as_str(),
                x.body.as_str(),
                x.heading.as_str()
            ),
            (
                SectionKind::Chapter,
                Some(1),
                "初入江湖",
                "他来了。",
                "第1章 初入江湖"
            )
        );
        let s = split_file(
            "他走了。",
            "第12章 离别.txt",
            "第12章 离别",
            Options::default(),
        );
        assert_eq!(
            (
                s.sections[0].number,
                s.sections[0].title.as_str(),
                s.sections[0].heading.as_str()
            ),
            (Some(12), "离别", "第12章 离别")
        );
        let s = split_file("第3章 夜\n正文", "x.txt", "x", Options::default());
        assert_eq!(s.sections[0].number, Some(3));
        let s = split_file(
            "# 第 3 章 夜\n\n正文",
            "chapter-003.md",
            "chapter-003",
            Options::default(),
        );
        assert_eq!(
            (s.sections[0].number, s.sections[0].heading.as_str()),
            (Some(3), "第 3 章 夜")
        );
        let s = split_file("笔记", "说明.txt", "说明", Options::default());
        assert_eq!(
            (s.sections[0].kind, s.sections[0].name.as_str()),
            (SectionKind::Preface, "说明")
        );
        assert!(matches!(
            file_name_heading("012-标题"),
            Some(Heading::Chapter { number: 12, .. })
        ));
        assert!(matches!(
            file_name_heading("12"),
            Some(Heading::Chapter { number: 12, .. })
        ));
        assert!(matches!(
            file_name_heading("chapter-012"),
            Some(Heading::Chapter { number: 12, .. })
        ));
        assert!(matches!(
            file_name_heading("ch_7"),
            Some(Heading::Chapter { number: 7, .. })
        ));
    }

    #[test]
    fn a_folder_is_ordered_and_warned_about_by_its_file_names() {
        let mut stems = vec!["番外 雪夜", "010", "楔子", "第2章 归来", "说明"];
        stems.sort_by_key(|s| (folder_rank(s), s.to_string()));
        assert_eq!(stems, ["楔子", "第2章 归来", "010", "番外 雪夜", "说明"]);

        let s = split_file("笔记", "说明.txt", "说明", Options::default());
        let w = folder_warnings("说明", "说明.txt", &s.sections);
        assert_eq!(
            (w.len(), w[0].kind, w[0].finding.line.unwrap_or(0)),
            (1, ProblemKind::Unnumbered, 1)
        );
        let s = split_file("第3章 夜\n正文", "005.txt", "005", Options::default());
        let w = folder_warnings("005", "005.txt", &s.sections);
        assert_eq!(w.len(), 1);
        assert_eq!(w[0].kind, ProblemKind::NameMismatch);
        assert!(
            w[0].finding.message.contains("第 5 章") && w[0].finding.message.contains("第 3 章")
        );
        let s = split_file("正文", "005.txt", "005", Options::default());
        assert!(folder_warnings("005", "005.txt", &s.sections).is_empty());
    }
}
