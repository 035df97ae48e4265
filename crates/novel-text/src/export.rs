//! A chapter as a reader sees it, for `novel export`: the title line `第N章 标题` and the plain
//! paragraphs of a chapter file, and the two text layouts built from them.
//!
//! - [`plain_chapter`]: everything [`crate::markdown`] marks as syntax or front matter goes
//!   (heading marks, `**`/`*`/`_` emphasis, `>` quotes, list marks, horizontal rules, HTML
//!   comments and tags, link targets, code); what is left of each line, trimmed (the full-width
//!   space too), is one paragraph; blank lines are dropped. The first heading before any prose is
//!   the chapter title.
//! - [`title_line`]: `第N章 标题` with the file's chapter number, whatever numeral or separator
//!   the heading used, so an importer splits the exported text on exactly this line.
//! - [`txt`]: platforms' layout — the title line, then either one paragraph per line opened by
//!   two full-width spaces (`　　`) or paragraphs between blank lines without indent; a blank line
//!   between chapters.
//! - [`markdown_body`] / [`md`]: the chapter files joined, headings kept, front matter removed.
//! - [`encode`]: a txt in UTF-8, GBK or GB18030 for platforms that still ask for GBK; characters
//!   GBK cannot hold are named, never replaced.

use crate::markdown::{self, FRONT, HEADING, MARKUP};

/// Two full-width spaces: the paragraph indent Chinese platforms expect.
pub const FULLWIDTH_INDENT: &str = "\u{3000}\u{3000}";

/// How paragraphs are set apart in a txt export.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Indent {
    /// Each paragraph on its own line, opened by `　　` (the default).
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

/// A chapter without Markdown: its title line and its paragraphs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlainChapter {
    /// The chapter number (from the file name).
    pub number: u32,
    /// `第N章 标题` (see [`title_line`]).
    pub title: String,
    /// The title alone (`标题`), empty when the chapter has none.
    pub name: String,
    /// Body paragraphs, trimmed, none empty.
    pub paragraphs: Vec<String>,
}

/// Reads chapter `number`'s file text (Markdown allowed) into its title and plain paragraphs.
pub fn plain_chapter(number: u32, text: &str) -> PlainChapter {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let chars: Vec<char> = text.chars().collect();
    let lines = markdown::lines(&chars);
    let flags = markdown::scan(&chars, &lines);
    let mut heading: Option<String> = None;
    let mut paragraphs: Vec<String> = Vec::new();
    for &(s, e) in &lines {
        let kept: String = (s..e)
            .filter(|&i| flags[i] & (FRONT | MARKUP) == 0)
            .map(|i| chars[i])
            .collect();
        let line = kept.trim();
        if line.is_empty() {
            continue;
        }
        let is_heading = (s..e).any(|i| flags[i] & HEADING != 0);
        if is_heading && heading.is_none() && paragraphs.is_empty() {
            heading = Some(line.to_string());
        } else {
            paragraphs.push(line.to_string());
        }
    }
    let name = heading.as_deref().map(heading_name).unwrap_or_default();
    PlainChapter {
        number,
        title: title_line(number, &name),
        name,
        paragraphs,
    }
}

/// `第N章 标题` (or `第N章` when there is no title).
pub fn title_line(number: u32, name: &str) -> String {
    if name.is_empty() {
        format!("第{number}章")
    } else {
        format!("第{number}章 {name}")
    }
}

/// The title in a heading: what follows a leading `第…章` (Arabic, full-width or Chinese
/// numerals) and its separator; the whole heading when it names no chapter number.
pub fn heading_name(heading: &str) -> String {
    let h = heading.trim();
    let Some(rest) = h.strip_prefix('第') else {
        return h.to_string();
    };
    let numeral_end = rest
        .char_indices()
        .find(|(_, c)| !(is_numeral(*c) || c.is_whitespace()))
        .map(|(i, _)| i)
        .unwrap_or(rest.len());
    let (numeral, after) = rest.split_at(numeral_end);
    match after.strip_prefix('章') {
        Some(title) if !numeral.trim().is_empty() => title
            .trim_start_matches(|c: char| c.is_whitespace() || "：:、.-—·|".contains(c))
            .trim_end()
            .to_string(),
        _ => h.to_string(),
    }
}

fn is_numeral(c: char) -> bool {
    novel_core::numerals::arabic_digit(c).is_some() || novel_core::numerals::is_chinese_numeral(c)
}

/// The txt of `chapters` in `indent` layout, UTF-8, `\n` line ends, ending in a newline.
pub fn txt(chapters: &[PlainChapter], indent: Indent) -> String {
    let size: usize = chapters
        .iter()
        .map(|c| c.title.len() + c.paragraphs.iter().map(|p| p.len() + 8).sum::<usize>())
        .sum();
    let mut out = String::with_capacity(size + 2 * chapters.len());
    for (i, chapter) in chapters.iter().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        out.push_str(&chapter.title);
        out.push('\n');
        for p in &chapter.paragraphs {
            match indent {
                Indent::Fullwidth => out.push_str(FULLWIDTH_INDENT),
                Indent::Blank => out.push('\n'),
            }
            out.push_str(p);
            out.push('\n');
        }
    }
    out
}

/// A chapter file for joining: BOM and front matter removed, surrounding blank lines trimmed.
pub fn markdown_body(text: &str) -> &str {
    let body = match novel_core::frontmatter::parse(text) {
        Some(fm) => &text[fm.body_start..],
        None => text.strip_prefix('\u{feff}').unwrap_or(text),
    };
    body.trim_matches(|c| c == '\n' || c == '\r').trim_end()
}

/// Chapter files joined into one Markdown document: one blank line between chapters.
pub fn md<'a>(texts: impl IntoIterator<Item = &'a str>) -> String {
    let mut out = String::new();
    for text in texts {
        let body = markdown_body(text);
        if body.is_empty() {
            continue;
        }
        if !out.is_empty() {
            out.push('\n');
        }
        out.push_str(body);
        out.push('\n');
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
    fn heading_names_table() {
        // (heading, title)
        let cases = [
            ("第1章 旧怀表", "旧怀表"),
            ("第12章：雨夜", "雨夜"),
            ("第一百二十三章　归来", "归来"),
            ("第１２章 全角", "全角"),
            ("第 3 章", ""),
            ("旧怀表", "旧怀表"),
            ("第一卷 风起", "第一卷 风起"),
            ("第章 空", "第章 空"),
        ];
        for (heading, want) in cases {
            assert_eq!(heading_name(heading), want, "{heading}");
        }
        assert_eq!(title_line(7, ""), "第7章");
        assert_eq!(title_line(7, "雨夜"), "第7章 雨夜");
    }

    #[test]
    fn no_markdown_is_left() {
        let text = "\u{feff}---\nchapter: 2\n---\n# 第二章 **雨**夜\n\n　　他说：*走*。\n> 引文_一句_\n\n***\n<!-- 作者注：待改 -->\n- 列表\n看[这里](http://x.cn)吧\n## 小节\n尾声。\n";
        let c = plain_chapter(2, text);
        assert_eq!(c.title, "第2章 雨夜");
        assert_eq!(c.name, "雨夜");
        assert_eq!(
            c.paragraphs,
            [
                "他说：走。",
                "引文一句",
                "列表",
                "看这里吧",
                "小节",
                "尾声。"
            ]
        );
    }

    #[test]
    fn a_chapter_without_heading_gets_its_number() {
        let c = plain_chapter(5, "正文一。\n# 不是标题\n");
        assert_eq!(c.title, "第5章");
        assert_eq!(c.paragraphs, ["正文一。", "不是标题"]);
    }

    #[test]
    fn txt_layouts() {
        let chapters = [
            plain_chapter(1, "# 第1章 起\n\n甲。\n\n乙。\n"),
            plain_chapter(2, "# 第2章 承\n丙。\n"),
        ];
        assert_eq!(
            txt(&chapters, Indent::Fullwidth),
            "第1章 起\n　　甲。\n　　乙。\n\n第2章 承\n　　丙。\n"
        );
        assert_eq!(
            txt(&chapters, Indent::Blank),
            "第1章 起\n\n甲。\n\n乙。\n\n第2章 承\n\n丙。\n"
        );
    }

    #[test]
    fn md_joins_bodies() {
        let joined = md([
            "---\nchapter: 1\n---\n# 第1章 起\n\n甲。\n\n\n",
            "# 第2章 承\n乙。",
        ]);
        assert_eq!(joined, "# 第1章 起\n\n甲。\n\n# 第2章 承\n乙。\n");
    }
}
