//! `volumes/vol-NN/outline.md` — the volume outline PlotArchitect writes, parsed strictly so a
//! chapter's block can be cut out of it.
//!
//! The format (also in `docs/context-packets.md`):
//!
//! ```text
//! # 第 2 卷 · 海上风云            ← optional title; everything outside chapter blocks is the
//! 本卷主题……                      ← volume overview
//!
//! ## 第48章 密信                  ← a chapter heading: exactly `## 第<阿拉伯数字>章`, then
//! - 故事线：main_arc                 optionally one or more spaces and a title
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
//! A chapter block runs from its heading to the next level-1 or level-2 heading (`#`/`##`) or
//! the end of the file; `###` and deeper belong to the block. Field lines `- 键：值` (or
//! `- Key: value`) are read leniently; the block is handed to agents verbatim.
//!
//! Strict: any heading line (`#` … `######`) that names a chapter (`第…章`) must be exactly a
//! level-2 heading with Arabic digits — `### 第48章`, `## 第四十八章`, `##第48章` and
//! `## 第48章：密信` are errors naming the line — and a chapter may appear only once. Headings
//! inside fenced code blocks are ignored.

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
    #[error("第 {line} 行「{text}」不符合章节标题格式：{why}")]
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

/// The heading format, for hints.
pub const HEADING_FORMAT: &str = "## 第48章 章节标题";

enum Heading {
    /// `#`/`##` that is not a chapter: ends a block.
    Section,
    Chapter(u32, Option<String>),
    /// `###` and deeper, not naming a chapter: part of a block.
    Minor,
}

fn heading(line: &str, no: usize) -> Result<Option<Heading>, OutlineError> {
    let trimmed = line.trim_end();
    let hashes = trimmed.chars().take_while(|c| *c == '#').count();
    if hashes == 0 || hashes > 6 {
        return Ok(None);
    }
    let rest = &trimmed[hashes..];
    let names_chapter = names_chapter(rest);
    let err = |why| OutlineError::Heading {
        line: no,
        text: trimmed.to_string(),
        why,
    };
    if !names_chapter {
        // `#tag` without a space is not a Markdown heading at all.
        if !rest.is_empty() && !rest.starts_with([' ', '\t']) {
            return Ok(None);
        }
        return Ok(Some(if hashes <= 2 {
            Heading::Section
        } else {
            Heading::Minor
        }));
    }
    if hashes != 2 {
        return Err(err("章节标题必须是二级标题（## 开头）"));
    }
    let Some(body) = rest.strip_prefix(' ') else {
        return Err(err("## 后要有一个空格"));
    };
    let Some(after) = body.strip_prefix('第') else {
        return Err(err("标题要以「第N章」开头"));
    };
    if after.starts_with(char::is_whitespace) {
        return Err(err("「第」「章」与章号之间不要空格（如 第48章）"));
    }
    let digits: String = after.chars().take_while(char::is_ascii_digit).collect();
    if digits.is_empty() {
        return Err(err("章号要用阿拉伯数字（如 第48章）"));
    }
    let after_digits = &after[digits.len()..];
    let Some(tail) = after_digits.strip_prefix('章') else {
        return Err(err("章号后要紧跟「章」，中间不要空格"));
    };
    let title = if tail.is_empty() {
        None
    } else if tail.starts_with([' ', '\t', '\u{3000}']) {
        let t = tail.trim();
        (!t.is_empty()).then(|| t.to_string())
    } else {
        return Err(err("「第N章」与标题之间用空格分隔，不要用冒号或其他符号"));
    };
    let n: u32 = digits.parse().map_err(|_| err("章号超出范围"))?;
    if n == 0 {
        return Err(err("章号从 1 开始"));
    }
    Ok(Some(Heading::Chapter(n, title)))
}

/// True when `s` contains `第<number>章` (Arabic or Chinese numerals, spaces allowed).
fn names_chapter(s: &str) -> bool {
    let numeral = |c: char| c.is_ascii_digit() || "零〇一二两三四五六七八九十百千万".contains(c);
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

/// Parses an outline strictly (see the module note).
pub fn parse(text: &str) -> Result<Outline, OutlineError> {
    let text = crate::validate::strip_bom(text);
    let mut chapters: Vec<ChapterBlock> = Vec::new();
    let mut overview: Vec<&str> = Vec::new();
    let mut current: Option<(ChapterBlock, Vec<&str>)> = None;
    let mut fenced = false;
    let close = |cur: Option<(ChapterBlock, Vec<&str>)>, out: &mut Vec<ChapterBlock>| {
        if let Some((mut block, lines)) = cur {
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
        match h {
            Some(Heading::Chapter(n, title)) => {
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
                ));
            }
            Some(Heading::Section) => {
                close(current.take(), &mut chapters);
                overview.push(line);
            }
            _ => match &mut current {
                Some((block, lines)) => {
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
