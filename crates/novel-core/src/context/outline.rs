//! `volumes/vol-NN/outline.md` — the volume outline PlotArchitect writes, parsed so a chapter's
//! block can be cut out of it.
//!
//! The format (also in `docs/context-packets.md`):
//!
//! ```text
//! # 第 2 卷 · 海上风云            ← optional title; everything outside chapter blocks is the
//! 本卷主题……                      ← volume overview
//!
//! ## 第48章 密信                  ← a chapter heading (the shape PlotArchitect is told to write)
//! - 故事线：main_arc
//! - POV：陆尘
//! - 地点：魔都外城
//! - 冲突：……
//! - 弧光：……
//! - 伏笔：ancient_prophecy 推进
//! - 状态变化：……
//!
//! ## 第49章 废墟
//! ……
//! ```
//!
//! Chapter headings are read in the shapes people write them ([`HEADING_SHAPES`]): any level
//! `#` … `######`; `第`, the number in Arabic (half- or full-width) or Chinese numerals
//! (第十二章, 第一百零三章), `章`, with or without spaces around the number; then nothing, or
//! the title after a space, a colon (`:` `：`) or a dash or dot (`-` `—` `·`); `**bold**` is
//! ignored. A chapter block runs from its heading to the next chapter heading, the next
//! heading of the same level or higher (`##` ends a `##` chapter; a `###` chapter is ended by
//! `###`, `##` or `#`), or the end of the file; deeper headings belong to the block. Field
//! lines `- 键：值` (or `- Key: value`) are read leniently; the block is handed to agents
//! verbatim.
//!
//! Strict where a mistake would silently lose a chapter: any heading that names a chapter
//! (`第…章`) but cannot be read as one (第12章雨夜 with the title glued on, 卷一 第12章, 第十十章,
//! 第0章) is an error naming its line and the shapes expected, and a chapter may appear only
//! once. Headings inside fenced code blocks are ignored.

use crate::numerals::{Numeral, arabic_digit, is_chinese_numeral, leading_numeral};

/// One chapter's block.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChapterBlock {
    pub chapter: u32,
    pub title: Option<String>,
    /// 1-based line of the heading.
    pub line: usize,
    /// The block verbatim, heading included, trailing blank lines dropped.
    pub text: String,
    /// `- 键：值` lines, in order.
    pub fields: Vec<(String, String)>,
}

impl ChapterBlock {
    /// The first field whose key is one of `keys` (compared without case for ASCII).
    pub fn field(&self, keys: &[&str]) -> Option<&str> {
        self.fields
            .iter()
            .find(|(k, _)| keys.iter().any(|want| k.eq_ignore_ascii_case(want)))
            .map(|(_, v)| v.as_str())
    }

    /// The `故事线` / `Storyline` field, when it is a slug.
    pub fn storyline(&self) -> Option<&str> {
        self.field(&["故事线", "storyline", "storyline_id"])
            .map(|v| v.split_whitespace().next().unwrap_or(""))
            .filter(|v| crate::model::is_slug(v))
    }
}

/// A parsed volume outline.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Outline {
    pub chapters: Vec<ChapterBlock>,
    /// Everything outside chapter blocks (the volume's overview and closing notes), trimmed.
    pub overview: String,
}

impl Outline {
    pub fn block(&self, chapter: u32) -> Option<&ChapterBlock> {
        self.chapters.iter().find(|b| b.chapter == chapter)
    }

    /// The chapters present, as compact ranges (`31–47、49–50`), for error messages.
    pub fn ranges(&self) -> String {
        let mut nums: Vec<u32> = self.chapters.iter().map(|b| b.chapter).collect();
        nums.sort_unstable();
        let mut parts: Vec<String> = Vec::new();
        let mut i = 0;
        while i < nums.len() {
            let start = nums[i];
            let mut end = start;
            while i + 1 < nums.len() && nums[i + 1] == end + 1 {
                i += 1;
                end = nums[i];
            }
            parts.push(if start == end {
                start.to_string()
            } else {
                format!("{start}–{end}")
            });
            i += 1;
        }
        if parts.is_empty() {
            "无".to_string()
        } else {
            parts.join("、")
        }
    }
}

/// Why an outline does not parse.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum OutlineError {
    #[error(
        "第 {line} 行「{text}」像章节标题，但读不出来：{why}；可用的写法：{}",
        HEADING_SHAPES
    )]
    Heading {
        line: usize,
        text: String,
        why: &'static str,
    },
    #[error("第 {chapter} 章在大纲中出现了两次（第 {first} 行与第 {line} 行）")]
    Duplicate {
        chapter: u32,
        first: usize,
        line: usize,
    },
}

/// The canonical heading, the one PlotArchitect is told to write.
pub const HEADING_FORMAT: &str = "## 第48章 章节标题";

/// The heading shapes the parser reads, for messages.
pub const HEADING_SHAPES: &str =
    "「## 第48章 标题」「### 第 48 章：标题」「## 第四十八章 标题」「## 第48章」（# 的个数不限）";

enum Heading {
    /// A heading that is not a chapter, with its level: ends a chapter block of the same level
    /// or deeper, belongs to a block of a higher level.
    Other(usize),
    Chapter {
        n: u32,
        title: Option<String>,
        level: usize,
    },
}

/// Separators between `第N章` and its title.
fn is_title_separator(c: char) -> bool {
    c.is_whitespace()
        || matches!(
            c,
            ':' | '：' | '·' | '・' | '-' | '—' | '–' | '|' | '｜' | '、'
        )
}

/// Reads `第N章…` at the start of a heading's text: `Ok((n, title))`, or why it cannot.
fn chapter_heading(body: &str) -> Result<(u32, Option<String>), &'static str> {
    let Some(after) = body.strip_prefix('第') else {
        return Err("章节标题要以「第N章」开头");
    };
    let after = after.trim_start();
    let unreadable = "读不出章号（用阿拉伯数字如 48，或中文数字如 四十八）";
    let (n, len) = match leading_numeral(after) {
        Some((Numeral::Value(n), len)) => (n, len),
        _ => return Err(unreadable),
    };
    let n = u32::try_from(n).map_err(|_| unreadable)?;
    // Arabic and Chinese digits mixed (第一2章): the reader stops where the kind changes.
    if after[len..]
        .chars()
        .next()
        .is_some_and(|c| arabic_digit(c).is_some() || is_chinese_numeral(c))
    {
        return Err(unreadable);
    }
    let Some(tail) = after[len..].trim_start().strip_prefix('章') else {
        return Err("章号后要接「章」");
    };
    if n == 0 {
        return Err("章号从 1 开始");
    }
    if !tail.is_empty() && !tail.starts_with(is_title_separator) {
        return Err("「第N章」与标题之间要用空格或冒号隔开");
    }
    let title = tail.trim_start_matches(is_title_separator).trim();
    Ok((n, (!title.is_empty()).then(|| title.to_string())))
}

fn heading(line: &str, no: usize) -> Result<Option<Heading>, OutlineError> {
    let trimmed = line.trim();
    let level = trimmed.chars().take_while(|c| *c == '#').count();
    if level == 0 || level > 6 {
        return Ok(None);
    }
    let rest = &trimmed[level..];
    if !names_chapter(rest) {
        // `#tag` without a space is not a Markdown heading at all.
        if !rest.is_empty() && !rest.starts_with(char::is_whitespace) {
            return Ok(None);
        }
        return Ok(Some(Heading::Other(level)));
    }
    // A heading that names a chapter is read even without the space (##第48章).
    let body = rest.replace("**", "");
    match chapter_heading(body.trim()) {
        Ok((n, title)) => Ok(Some(Heading::Chapter { n, title, level })),
        Err(why) => Err(OutlineError::Heading {
            line: no,
            text: trimmed.to_string(),
            why,
        }),
    }
}

/// True when `s` contains `第<number>章` (Arabic or Chinese numerals, spaces allowed).
fn names_chapter(s: &str) -> bool {
    let numeral = |c: char| arabic_digit(c).is_some() || is_chinese_numeral(c);
    s.match_indices('第').any(|(i, _)| {
        let rest = s[i + '第'.len_utf8()..].trim_start();
        let digits = rest.chars().take_while(|c| numeral(*c)).count();
        digits > 0 && rest.chars().skip(digits).find(|c| !c.is_whitespace()) == Some('章')
    })
}

fn field_of(line: &str) -> Option<(String, String)> {
    let item = line
        .trim_start()
        .strip_prefix("- ")
        .or_else(|| line.trim_start().strip_prefix("* "))?;
    let (k, v) = item.split_once('：').or_else(|| item.split_once(':'))?;
    let k = k.trim().trim_matches('*').trim();
    let v = v.trim();
    (!k.is_empty() && k.chars().count() <= 20).then(|| (k.to_string(), v.to_string()))
}

/// Parses an outline (see the module note).
pub fn parse(text: &str) -> Result<Outline, OutlineError> {
    let text = crate::validate::strip_bom(text);
    let mut chapters: Vec<ChapterBlock> = Vec::new();
    let mut overview: Vec<&str> = Vec::new();
    // The open chapter: its block, its lines and its heading's level.
    let mut current: Option<(ChapterBlock, Vec<&str>, usize)> = None;
    let mut fenced = false;
    let close = |cur: Option<(ChapterBlock, Vec<&str>, usize)>, out: &mut Vec<ChapterBlock>| {
        if let Some((mut block, lines, _)) = cur {
            let mut end = lines.len();
            while end > 0 && lines[end - 1].trim().is_empty() {
                end -= 1;
            }
            block.text = lines[..end].join("\n");
            out.push(block);
        }
    };
    for (i, line) in text.lines().enumerate() {
        let no = i + 1;
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
        }
        let h = if fenced || line.trim_start().starts_with("```") {
            None
        } else {
            heading(line, no)?
        };
        // A heading of the open chapter's level or higher ends its block.
        let ends_block = |level: usize, cur: &Option<(ChapterBlock, Vec<&str>, usize)>| {
            cur.as_ref().is_none_or(|c| level <= c.2)
        };
        match h {
            Some(Heading::Chapter { n, title, level }) => {
                close(current.take(), &mut chapters);
                if let Some(prev) = chapters.iter().find(|b| b.chapter == n) {
                    return Err(OutlineError::Duplicate {
                        chapter: n,
                        first: prev.line,
                        line: no,
                    });
                }
                current = Some((
                    ChapterBlock {
                        chapter: n,
                        title,
                        line: no,
                        text: String::new(),
                        fields: Vec::new(),
                    },
                    vec![line],
                    level,
                ));
            }
            Some(Heading::Other(level)) if ends_block(level, &current) => {
                close(current.take(), &mut chapters);
                overview.push(line);
            }
            _ => match &mut current {
                Some((block, lines, _)) => {
                    if let Some(f) = field_of(line) {
                        block.fields.push(f);
                    }
                    lines.push(line);
                }
                None => overview.push(line),
            },
        }
    }
    close(current.take(), &mut chapters);
    Ok(Outline {
        chapters,
        overview: overview.join("\n").trim().to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_and_fields() {
        let text = "# 第 2 卷 · 海上风云\n本卷主题：出海。\n\n## 第48章 密信\n- 故事线：main_arc\n- POV: 陆尘\n### 场景一\n正文提示\n\n## 第49章\n- 故事线：jinghai_plan\n\n## 卷末钩子\n留下悬念。\n";
        let o = parse(text).unwrap();
        assert_eq!(o.chapters.len(), 2);
        let b = o.block(48).unwrap();
        assert_eq!(b.title.as_deref(), Some("密信"));
        assert_eq!(b.storyline(), Some("main_arc"));
        assert_eq!(b.field(&["pov"]), Some("陆尘"));
        assert!(b.text.ends_with("正文提示"), "{:?}", b.text);
        assert_eq!(o.block(49).unwrap().title, None);
        assert!(o.overview.contains("本卷主题") && o.overview.contains("留下悬念"));
        assert!(!o.overview.contains("正文提示"));
        assert_eq!(o.ranges(), "48–49");
    }
}
