//! A chapter prepared for analysis: normalised once ([`crate::normalize`]), Markdown marked
//! ([`crate::markdown`]), dialogue found, split into paragraphs and sentences. Every rule family
//! works on a [`Document`]; positions are normalised character indexes, and
//! [`Document::position`] turns one into the 1-based line and column (in characters) of the
//! original file.
//!
//! - Paragraph: a line with prose on it (web-novel chapters are one paragraph per line);
//!   headings, Markdown-only lines and front matter are not paragraphs.
//! - Dialogue: text inside 「」, 『』, “” or ASCII `"…"` (nested ‘’ / 『』 stay dialogue). An
//!   unclosed quote ends with its paragraph, so a missing 」 never turns the rest of the
//!   chapter into dialogue.
//! - Sentence: ends after a run of 。！？… (with the closing quotes and brackets right after
//!   it), after the closing quote of a dialogue, or at the end of the paragraph.
//!
//! Layer: ground — decoding, Markdown, normalisation, 字数, sentences, names; below every check.

use crate::markdown::{self, FRONT, HEADING, MARKUP};
use crate::normalize::normalize;

pub use crate::count::is_text_char;

/// Inside dialogue quotes (the outermost quote marks themselves are [`QUOTE`]).
pub const DIALOGUE: u8 = 8;
/// An outermost dialogue quote mark.
pub const QUOTE: u8 = 16;
/// Any closing quote mark (outermost or nested).
pub const CLOSER: u8 = 32;
/// The closing quote that ends the outermost dialogue.
pub const OUTER_CLOSE: u8 = 64;

/// A `[start, end)` range of normalised character indexes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Span {
    pub start: usize,
    pub end: usize,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sentence {
    pub span: Span,
    /// Index into [`Document::paragraphs`].
    pub paragraph: usize,
    /// Length in text characters (汉字, letters, digits: see [`is_text_char`]).
    pub len: usize,
    /// Text characters inside dialogue quotes.
    pub dialogue_len: usize,
}

impl Sentence {
    /// Mostly dialogue (more than half of its text characters are inside quotes).
    pub fn is_dialogue(&self) -> bool {
        self.dialogue_len * 2 > self.len
    }
}

/// Sentence-ending punctuation (after width folding, so `！？` are `!?`).
pub fn is_terminator(c: char) -> bool {
    matches!(c, '。' | '!' | '?' | '…')
}

/// A prepared chapter. Build with [`Document::new`].
#[derive(Debug, Clone)]
pub struct Document {
    /// The original text, kept only when normalisation changed it (else it is `text`).
    source: Option<String>,
    text: String,
    chars: Vec<char>,
    /// Byte offset in `text` of every normalised character, plus `text.len()`.
    byte_pos: Vec<u32>,
    orig: Option<Vec<u32>>,
    /// (char index, byte offset) in `source` of every line start.
    line_starts: Vec<(usize, usize)>,
    flags: Vec<u8>,
    paragraphs: Vec<Span>,
    sentences: Vec<Sentence>,
    non_whitespace: usize,
}

impl Document {
    pub fn new(source: &str) -> Document {
        let source = source.strip_prefix('\u{feff}').unwrap_or(source);
        let normalized = normalize(source);
        let text = normalized.text;
        let mut chars: Vec<char> = Vec::with_capacity(text.len() / 2);
        let mut byte_pos: Vec<u32> = Vec::with_capacity(text.len() / 2);
        for (b, c) in text.char_indices() {
            chars.push(c);
            byte_pos.push(b as u32);
        }
        byte_pos.push(text.len() as u32);

        // Line starts of the source: count characters between newlines by their leading bytes.
        let mut line_starts = vec![(0, 0)];
        let mut ci = 0;
        let mut from = 0;
        for (bi, b) in source.bytes().enumerate() {
            if b == b'\n' {
                ci += source.as_bytes()[from..bi]
                    .iter()
                    .filter(|&&x| (x as i8) >= -0x40)
                    .count()
                    + 1;
                from = bi + 1;
                line_starts.push((ci, bi + 1));
            }
        }

        let lines = markdown::lines(&chars);
        let mut flags = markdown::scan(&chars, &lines);
        mark_dialogue(&chars, &lines, &mut flags);

        let mut paragraphs = Vec::new();
        let mut non_whitespace = 0;
        for &(s, e) in &lines {
            let mut prose = false;
            for i in s..e {
                let f = flags[i];
                if f & (FRONT | MARKUP | HEADING) == 0 && !chars[i].is_whitespace() {
                    non_whitespace += 1;
                    prose = true;
                }
            }
            if prose {
                paragraphs.push(Span { start: s, end: e });
            }
        }
        let sentences = split_sentences(&chars, &flags, &paragraphs);
        Document {
            source: (text != source).then(|| source.to_string()),
            text,
            chars,
            byte_pos,
            orig: normalized.orig,
            line_starts,
            flags,
            paragraphs,
            sentences,
            non_whitespace,
        }
    }

    fn source(&self) -> &str {
        self.source.as_deref().unwrap_or(&self.text)
    }

    /// 字数 of the body, as `novel count` and the platforms count it ([`crate::count`]).
    pub fn word_count(&self) -> usize {
        crate::count::count(self.source()).chars
    }

    /// The normalised text (what matchers run over).
    pub fn text(&self) -> &str {
        &self.text
    }

    /// The normalised characters.
    pub fn chars(&self) -> &[char] {
        &self.chars
    }

    /// Per-character flags: [`FRONT`], [`MARKUP`], [`HEADING`], [`DIALOGUE`], [`QUOTE`] ….
    pub fn flags(&self) -> &[u8] {
        &self.flags
    }

    pub fn paragraphs(&self) -> &[Span] {
        &self.paragraphs
    }

    pub fn sentences(&self) -> &[Sentence] {
        &self.sentences
    }

    /// The prose paragraphs as the edit measure reads them
    /// ([`novel_core::edits::measure`]): each character without whitespace and Markdown, marked
    /// dialogue (inside quotes, the outermost quote marks included) or narration.
    pub fn segmented(&self) -> novel_core::edits::Segmented {
        let mut out = novel_core::edits::Segmented::default();
        for p in &self.paragraphs {
            let chars: Vec<(char, bool)> = (p.start..p.end)
                .filter(|&i| !self.chars[i].is_whitespace() && !self.is_markup(i))
                .map(|i| (self.chars[i], self.flags[i] & (DIALOGUE | QUOTE) != 0))
                .collect();
            if !chars.is_empty() {
                out.paragraphs.push(chars);
                // What the author wrote (full-width commas, not the matcher's folded ones).
                out.originals.push(self.original(*p).trim().to_string());
            }
        }
        out
    }

    /// True when character `i` is inside dialogue quotes.
    pub fn in_dialogue(&self, i: usize) -> bool {
        self.flags.get(i).is_some_and(|f| f & DIALOGUE != 0)
    }

    /// True when character `i` is front matter or Markdown syntax.
    pub fn is_markup(&self, i: usize) -> bool {
        self.flags.get(i).is_some_and(|f| f & (FRONT | MARKUP) != 0)
    }

    /// Byte offset in [`Document::text`] of normalised character `i`.
    pub fn byte_of(&self, i: usize) -> usize {
        self.byte_pos[i.min(self.chars.len())] as usize
    }

    /// Normalised character index of a byte offset in [`Document::text`].
    pub fn char_of(&self, byte: usize) -> usize {
        self.byte_pos.partition_point(|&b| (b as usize) < byte)
    }

    fn orig_index(&self, i: usize) -> usize {
        match &self.orig {
            Some(map) => map[i.min(map.len() - 1)] as usize,
            None => i,
        }
    }

    /// 1-based line and column (in characters of the original file) of normalised index `i`.
    pub fn position(&self, i: usize) -> (usize, usize) {
        let o = self.orig_index(i);
        let line = self.line_starts.partition_point(|&(c, _)| c <= o);
        let (start, _) = self.line_starts[line - 1];
        (line, o - start + 1)
    }

    /// Characters that count for densities: everything but whitespace, front matter, Markdown
    /// syntax and headings (the chapter title is not linted, nor counted in 字数).
    pub fn non_whitespace_chars(&self) -> usize {
        self.non_whitespace
    }

    /// Text characters of a range (see [`is_text_char`]), outside Markdown syntax.
    pub fn text_len(&self, span: Span) -> usize {
        (span.start..span.end)
            .filter(|&i| self.flags[i] & (FRONT | MARKUP) == 0 && is_text_char(self.chars[i]))
            .count()
    }

    /// The original text of a normalised range.
    pub fn original(&self, span: Span) -> String {
        let (a, b) = (self.orig_index(span.start), self.orig_index(span.end));
        let (line, _) = self.position(span.start);
        let (lc, lb) = self.line_starts[line - 1];
        self.source()[lb..]
            .chars()
            .skip(a - lc)
            .take(b - a)
            .collect()
    }

    /// The original line around a normalised range, at most `context` characters either side,
    /// leading indentation dropped, `…` where cut.
    pub fn excerpt(&self, span: Span, context: usize) -> String {
        let (a, b) = (self.orig_index(span.start), self.orig_index(span.end));
        let (line, _) = self.position(span.start);
        let (lc, lb) = self.line_starts[line - 1];
        // Only as much of the line as the excerpt can show (plus one, to know it was cut).
        let line_text: Vec<char> = self.source()[lb..]
            .chars()
            .take_while(|c| *c != '\n' && *c != '\r')
            .take(b - lc + context + 1)
            .collect();
        let (a, b) = ((a - lc).min(line_text.len()), (b - lc).min(line_text.len()));
        let indent = line_text.iter().take_while(|c| c.is_whitespace()).count();
        let from = a.saturating_sub(context).max(indent.min(a));
        let to = (b + context).min(line_text.len());
        let mut out = String::new();
        if from > indent {
            out.push('…');
        }
        out.extend(&line_text[from..to]);
        if to < line_text.len() {
            out.push('…');
        }
        out
    }
}

fn closer_of(c: char) -> Option<char> {
    match c {
        '「' => Some('」'),
        '『' => Some('』'),
        '“' => Some('”'),
        _ => None,
    }
}

/// Marks dialogue, quote marks and closers, paragraph by paragraph (line by line).
fn mark_dialogue(chars: &[char], lines: &[markdown::Line], flags: &mut [u8]) {
    let mut stack: Vec<char> = Vec::new();
    for &(s, e) in lines {
        stack.clear();
        for i in s..e {
            if flags[i] & (FRONT | MARKUP) != 0 {
                continue;
            }
            let c = chars[i];
            let inside = !stack.is_empty();
            if let Some(close) = closer_of(c) {
                flags[i] |= if inside { DIALOGUE } else { QUOTE };
                stack.push(close);
            } else if c == '‘' && inside {
                flags[i] |= DIALOGUE;
                stack.push('’');
            } else if c == '"' && stack.last() != Some(&'"') {
                flags[i] |= if inside { DIALOGUE } else { QUOTE };
                stack.push('"');
            } else if matches!(c, '」' | '』' | '”' | '’' | '"') && stack.contains(&c) {
                while let Some(top) = stack.pop() {
                    if top == c {
                        break;
                    }
                }
                flags[i] |= CLOSER;
                flags[i] |= if stack.is_empty() {
                    QUOTE | OUTER_CLOSE
                } else {
                    DIALOGUE
                };
            } else if inside {
                flags[i] |= DIALOGUE;
            }
        }
    }
}

fn split_sentences(chars: &[char], flags: &[u8], paragraphs: &[Span]) -> Vec<Sentence> {
    let mut out = Vec::new();
    let skip = FRONT | MARKUP | HEADING;
    for (p, para) in paragraphs.iter().enumerate() {
        let mut start = para.start;
        let mut i = para.start;
        let push = |start: usize, end: usize, out: &mut Vec<Sentence>| {
            // A sentence starts at its first character, not at the paragraph's indentation.
            let start = (start..end)
                .find(|&k| !chars[k].is_whitespace() && flags[k] & (FRONT | MARKUP) == 0)
                .unwrap_or(start);
            let mut len = 0;
            let mut dialogue_len = 0;
            for k in start..end {
                if flags[k] & skip == 0 && is_text_char(chars[k]) {
                    len += 1;
                    if flags[k] & DIALOGUE != 0 {
                        dialogue_len += 1;
                    }
                }
            }
            if len > 0 {
                out.push(Sentence {
                    span: Span { start, end },
                    paragraph: p,
                    len,
                    dialogue_len,
                });
            }
        };
        while i < para.end {
            let c = chars[i];
            let f = flags[i];
            let ends = if f & skip != 0 {
                false
            } else if is_terminator(c) {
                while i + 1 < para.end && is_terminator(chars[i + 1]) {
                    i += 1;
                }
                true
            } else {
                f & OUTER_CLOSE != 0
            };
            if ends {
                // Closing quotes and brackets right after the end belong to this sentence.
                while i + 1 < para.end
                    && (flags[i + 1] & CLOSER != 0 || matches!(chars[i + 1], ')' | '）'))
                {
                    i += 1;
                }
                push(start, i + 1, &mut out);
                start = i + 1;
            }
            i += 1;
        }
        if start < para.end {
            push(start, para.end, &mut out);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dialogue_of(text: &str) -> String {
        let d = Document::new(text);
        d.chars()
            .iter()
            .enumerate()
            .filter(|(i, _)| d.in_dialogue(*i))
            .map(|(_, c)| *c)
            .collect()
    }

    #[test]
    fn dialogue_table() {
        let cases = [
            ("他说：「走吧。」", "走吧。"),
            ("“你来了。”她抬头。", "你来了。"),
            ("『密令』到了", "密令"),
            ("\"英文引号\"也算", "英文引号"),
            ("「他说『快走』就走了」", "他说『快走』就走了"),
            ("“他喊‘停’。”", "他喊‘停’。"),
            // Unclosed quote ends with its paragraph.
            ("「没有收尾\n叙述照常", "没有收尾"),
            // A stray closer is not dialogue.
            ("叙述”继续", ""),
            ("“一”二“三”", "一三"),
            ("全角＂引号＂也算", "引号"),
        ];
        for (input, want) in cases {
            assert_eq!(dialogue_of(input), want, "{input}");
        }
    }

    fn sentences_of(text: &str) -> Vec<String> {
        let d = Document::new(text);
        d.sentences()
            .iter()
            .map(|s| d.chars()[s.span.start..s.span.end].iter().collect())
            .collect()
    }

    #[test]
    fn sentence_table() {
        let cases: [(&str, &[&str]); 8] = [
            ("他来了。她走了！谁？", &["他来了。", "她走了!", "谁?"]),
            ("真的吗？！不会吧……", &["真的吗?!", "不会吧……"]),
            ("“你来了。”她说。", &["“你来了。”", "她说。"]),
            ("“你来了”她说", &["“你来了”", "她说"]),
            ("他想（没错。）于是走了", &["他想(没错。)", "于是走了"]),
            ("没有句号的段落\n第二段。", &["没有句号的段落", "第二段。"]),
            ("# 第一章\n正文。", &["正文。"]),
            ("……\n好。", &["好。"]),
        ];
        for (input, want) in cases {
            assert_eq!(sentences_of(input), want, "{input}");
        }
    }

    #[test]
    fn a_sentence_starts_after_the_indentation() {
        let d = Document::new("　　他来了。  她走了。");
        let starts: Vec<(usize, usize)> = d
            .sentences()
            .iter()
            .map(|s| d.position(s.span.start))
            .collect();
        assert_eq!(starts, [(1, 3), (1, 9)]);
    }

    #[test]
    fn sentence_lengths_count_text_characters_only() {
        let d = Document::new("“走吧，AI。”他说，声音很轻。");
        let lens: Vec<(usize, usize)> = d
            .sentences()
            .iter()
            .map(|s| (s.len, s.dialogue_len))
            .collect();
        assert_eq!(lens, vec![(4, 4), (6, 0)]);
        assert!(d.sentences()[0].is_dialogue());
    }

    #[test]
    fn positions_are_characters_of_the_original() {
        let text = "第一行\n　　他笑了，嘴角微微上扬。";
        let d = Document::new(text);
        let i = d.text().chars().position(|c| c == '嘴').unwrap();
        assert_eq!(d.position(i), (2, 7));
        let span = Span {
            start: i,
            end: i + 6,
        };
        assert_eq!(d.original(span), "嘴角微微上扬");
        assert_eq!(d.excerpt(span, 2), "…了，嘴角微微上扬。");
        // Full-width letters are one character each, before and after folding.
        let d = Document::new("ＡＢＣ嘴角");
        let i = d.text().find('嘴').map(|b| d.char_of(b)).unwrap();
        assert_eq!(d.position(i), (1, 4));
        assert_eq!(d.original(Span { start: 0, end: 3 }), "ＡＢＣ");
        // After an NFC merge the column still counts the original characters.
        let d = Document::new("e\u{301}x嘴");
        let i = d.chars().iter().position(|c| *c == '嘴').unwrap();
        assert_eq!((i, d.position(i)), (2, (1, 4)));
    }

    #[test]
    fn bom_and_crlf() {
        let d = Document::new("\u{feff}他来了。\r\n她走了。");
        assert_eq!(d.sentences().len(), 2);
        let i = d.chars().iter().position(|c| *c == '她').unwrap();
        assert_eq!(d.position(i), (2, 1));
    }
}
