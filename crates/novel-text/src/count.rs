//! 字数 as Chinese platforms (and Word's 「字数」) count it.
//!
//! - Each Han character, kana or hangul syllable counts 1.
//! - Each full-width or CJK punctuation mark counts 1: `，。！？；：、“”‘’「」『』（）《》【】…—·～`
//!   and the rest of the CJK-symbol, general-punctuation and full-width-form blocks
//!   (`……` is two marks, `——` two).
//! - A run of Latin letters and/or digits counts 1 (`AI` = 1, `2024` = 1, `AK47` = 1, `3.14` = 1,
//!   `1,000` = 1, `don't` = 1); full-width letters and digits are read as their ASCII forms
//!   (`ＡＩ` = 1). Only a half-width `'` `-` `.` `,` `_` (and `’` between two letters) joins a
//!   run: a full-width mark between digits is punctuation and counts 1 (`4，5，6，7` = 7).
//! - Not counted: whitespace (including the full-width space 　), half-width ASCII punctuation
//!   and symbols, emoji, private-use characters (a site's scrambled font; the import lists them), Markdown syntax (`#`, `**`, `- `, `1. `, `>`, link targets, HTML tags
//!   and comments, code), and YAML front matter.
//! - Heading lines (`# 第一章 …`) are the chapter title, which platforms keep apart from the
//!   body: their characters are reported as `heading_chars`, not in `chars`.
//!
//! Layer: ground — decoding, Markdown, normalisation, 字数, sentences, names; below every check.

use serde::Serialize;

use crate::markdown::{self, FRONT, HEADING, MARKUP};
use crate::normalize::fold_width;

/// The 字数 of a text and its parts.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct WordCount {
    /// 正文字数 = `han + punctuation + latin_words + numbers`.
    pub chars: usize,
    /// Han characters, kana, hangul.
    pub han: usize,
    /// Full-width / CJK punctuation marks.
    pub punctuation: usize,
    /// Runs of Latin letters (with or without digits).
    pub latin_words: usize,
    /// Runs of digits only.
    pub numbers: usize,
    /// 字数 of heading lines (the chapter title), counted by the same rules.
    pub heading_chars: usize,
}

/// How a chapter's 字数 compares with the target range.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum LengthVerdict {
    Short,
    Within,
    Long,
}

impl LengthVerdict {
    /// `chars < min` is short, `chars > max` is long; the bounds are inside the range.
    pub fn of(chars: usize, min: u32, max: u32) -> LengthVerdict {
        if chars < min as usize {
            LengthVerdict::Short
        } else if chars > max as usize {
            LengthVerdict::Long
        } else {
            LengthVerdict::Within
        }
    }

    pub fn label(self) -> &'static str {
        match self {
            LengthVerdict::Short => "偏短",
            LengthVerdict::Within => "达标",
            LengthVerdict::Long => "偏长",
        }
    }
}

/// Characters that carry content: Han characters, kana, letters and digits — not punctuation,
/// symbols or whitespace. Sentence and paragraph lengths and the dialogue ratio count these.
pub fn is_text_char(c: char) -> bool {
    // Fast paths for what Chinese prose is made of; the Unicode tables for the rest.
    match c as u32 {
        0x4E00..=0x9FFF => true,
        0..=0x7F => c.is_ascii_alphanumeric(),
        0x2010..=0x2027 | 0x3000..=0x3004 | 0x3008..=0x303F => false,
        _ => c.is_alphanumeric(),
    }
}

/// Han characters (all CJK unified blocks and compatibility ideographs), 〇, kana, hangul.
pub fn is_han(c: char) -> bool {
    matches!(c as u32,
        0x3007
        | 0x3040..=0x30FF
        | 0x3400..=0x4DBF
        | 0x4E00..=0x9FFF
        | 0xAC00..=0xD7AF
        | 0xF900..=0xFAFF
        | 0x20000..=0x2FA1F
        | 0x30000..=0x323AF)
}

/// A character of Unicode's private-use areas (U+E000–F8FF, planes 15–16): sites that scramble
/// their text with a font of their own put these in place of Han characters. Nobody else can
/// read them; they count 0, and the import lists where they are ([`private_use_lines`]).
pub fn is_private_use(c: char) -> bool {
    matches!(c as u32, 0xE000..=0xF8FF | 0xF0000..=0xFFFFD | 0x100000..=0x10FFFD)
}

/// How many private-use characters `text` holds, and the 1-based lines they are on.
pub fn private_use_lines(text: &str) -> (usize, Vec<usize>) {
    let mut n = 0;
    let mut lines = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let here = line.chars().filter(|c| is_private_use(*c)).count();
        if here > 0 {
            n += here;
            lines.push(i + 1);
        }
    }
    (n, lines)
}

/// Full-width or CJK punctuation (each counts 1).
pub fn is_wide_punctuation(c: char) -> bool {
    match c as u32 {
        0x3000 => false, // ideographic space
        0x3001..=0x303F => true,
        0x2010..=0x2027 | 0x2030..=0x205E => true, // — … “” ‘’ ‧ ‰ ※ …
        0x00B7 => true,                            // · in foreign names
        0xFE10..=0xFE1F | 0xFE30..=0xFE4F => true, // vertical and compatibility forms
        0xFF01..=0xFF65 => !fold_width(c).is_ascii_alphanumeric(),
        0xFFE0..=0xFFEE => true,
        _ => false,
    }
}

/// Counts the 字数 of a chapter file (Markdown allowed).
pub fn count(text: &str) -> WordCount {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let chars: Vec<char> = text.chars().collect();
    let lines = markdown::lines(&chars);
    let flags = markdown::scan(&chars, &lines);
    let mut body = Tally::default();
    let mut heading = Tally::default();
    for (i, &c) in chars.iter().enumerate() {
        let f = flags[i];
        if f & (FRONT | MARKUP) != 0 {
            body.end_run();
            heading.end_run();
            continue;
        }
        let next = chars.get(i + 1).copied();
        if f & HEADING != 0 {
            body.end_run();
            heading.add(c, next);
        } else {
            heading.end_run();
            body.add(c, next);
        }
    }
    body.end_run();
    heading.end_run();
    WordCount {
        chars: body.total(),
        han: body.han,
        punctuation: body.punctuation,
        latin_words: body.words,
        numbers: body.numbers,
        heading_chars: heading.total(),
    }
}

#[derive(Default)]
struct Tally {
    han: usize,
    punctuation: usize,
    words: usize,
    numbers: usize,
    run: Option<bool>, // Some(has_letter) while inside a Latin/digit run
}

impl Tally {
    fn total(&self) -> usize {
        self.han + self.punctuation + self.words + self.numbers
    }

    fn end_run(&mut self) {
        match self.run.take() {
            Some(true) => self.words += 1,
            Some(false) => self.numbers += 1,
            None => {}
        }
    }

    fn add(&mut self, c: char, next: Option<char>) {
        let folded = fold_width(c);
        let alnum = !is_han(c) && is_text_char(folded);
        if alnum {
            let letter = !folded.is_numeric();
            self.run = Some(self.run.unwrap_or(false) || letter);
            return;
        }
        // A half-width `'`, `-`, `.`, `,`, `_` between two alphanumerics stays inside the run,
        // and so does `’` between two letters (don’t); a full-width mark never does (4，5).
        let next_alnum = next.is_some_and(|n| !is_han(n) && is_text_char(fold_width(n)));
        let next_letter = next.is_some_and(|n| fold_width(n).is_alphabetic() && !is_han(n));
        let joiner = matches!(c, '\'' | '-' | '.' | ',' | '_') && next_alnum
            || c == '’' && self.run == Some(true) && next_letter;
        if joiner && self.run.is_some() {
            return;
        }
        self.end_run();
        if is_han(c) {
            self.han += 1;
        } else if is_wide_punctuation(c) {
            self.punctuation += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counting_table() {
        // (text, 字数, why)
        let cases = [
            ("他来了。", 4, "三个汉字加一个句号"),
            ("“走吧！”他说。", 8, "引号、感叹号、句号都是全角标点"),
            ("等等……", 4, "省略号是两个字符"),
            ("他——停住了", 6, "破折号是两个字符"),
            ("这是AI写的", 5, "一串字母算 1"),
            ("ＡＩ也是", 3, "全角字母按半角算，一串算 1"),
            ("2024年", 2, "一串数字算 1"),
            ("AK47步枪", 3, "字母数字混合串算 1"),
            ("圆周率3.14", 4, "小数算 1"),
            ("don't panic", 2, "撇号连着的是一个词"),
            ("don’t", 1, "弯撇号夹在字母中间也是一个词"),
            ("4，5，6，7", 7, "全角逗号是标点，各算 1，数字各算 1"),
            ("1,000元", 2, "半角千分位逗号连着的是一个数"),
            ("3．14", 3, "全角句点是标点"),
            ("‘AI’来了", 5, "引号不连字母"),
            ("半角,标点.不算", 6, "半角标点不计"),
            ("　　缩进 与 空格", 5, "空白不计"),
            ("**加粗**和_斜体_", 5, "强调记号不计"),
            ("- 列表\n1. 第二项", 5, "列表记号不计"),
            ("见[地图](http://map.example/a.png)", 3, "链接地址不计"),
            ("前<!-- 作者备注 -->后", 2, "HTML 注释不计"),
            ("---\nchapter: 1\n---\n正文", 2, "front matter 不计"),
            ("# 第一章 风起\n正文。", 3, "标题另计"),
            ("艾伦·沃克", 5, "间隔号算 1"),
            ("好啊😀", 2, "表情符号不计"),
            ("他\u{e3a1}了", 2, "私用区字符（网站的防盗字体）不计"),
            ("", 0, "空文本"),
        ];
        for (text, want, why) in cases {
            assert_eq!(count(text).chars, want, "{text}: {why}");
        }
    }

    #[test]
    fn parts_and_heading() {
        let c = count("# 第一章 风起\n他用了AI，花了200块。");
        assert_eq!(c.heading_chars, 5);
        assert_eq!(
            (c.han, c.punctuation, c.latin_words, c.numbers),
            (6, 2, 1, 1)
        );
        assert_eq!(c.chars, 10);
    }

    #[test]
    fn verdict_bounds_are_inclusive() {
        assert_eq!(LengthVerdict::of(2499, 2500, 3500), LengthVerdict::Short);
        assert_eq!(LengthVerdict::of(2500, 2500, 3500), LengthVerdict::Within);
        assert_eq!(LengthVerdict::of(3500, 2500, 3500), LengthVerdict::Within);
        assert_eq!(LengthVerdict::of(3501, 2500, 3500), LengthVerdict::Long);
    }
}
