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
//! `###`, `##` or `#`), or the end of the file; deeper headings belong to the block. The block
//! is handed to agents verbatim.
//!
//! Field lines are read the way authors write them ([`field_of`]): `- 键：值`, `键：值` without a
//! bullet, `* `/`+ `/`• `/`1. `/`1、` bullets, `**键**：值`, `【键】值`; the key ends at the first
//! colon, full-width or half-width, whichever comes first (so a value may hold colons of
//! its own: `- Conflict: 他问：为什么`). Labels are compared without case, spaces, `_` or `-`
//! and in either width (`StateChanges` = `state_changes`), and a label may name several
//! (`地点/场景`). [`FIELDS`] lists the §5.3 fields with the labels each is known by. A field
//! with nothing after its colon takes the lines under it (sub-bullets or plain lines) up to
//! the next field, heading or blank line. Field-like lines whose label is none of these are
//! kept with their line numbers ([`ChapterBlock::unread`]) so a check can say what it could not
//! read.
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
    /// The field lines, in order.
    pub fields: Vec<Field>,
    /// Lines that look like a field but whose label is none of [`FIELDS`]: (line, the line
    /// trimmed and cut to [`EXCERPT_CHARS`] characters).
    pub unread: Vec<(usize, String)>,
}

/// One field line of a chapter block.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Field {
    /// The label as written (bullets, bold and brackets removed).
    pub key: String,
    pub value: String,
    /// 1-based line of the label.
    pub line: usize,
}

/// The §5.3 fields of a chapter's outline block: (name, the labels authors write for it, in
/// Chinese and English). Compared by [`label_key`].
pub const FIELDS: [(&str, &[&str]); 7] = [
    (
        "故事线",
        &[
            "故事线",
            "故事线id",
            "所属故事线",
            "storyline",
            "storyline_id",
            "line",
        ],
    ),
    (
        "POV",
        &[
            "POV",
            "视角",
            "视点",
            "视角人物",
            "POV角色",
            "主视角",
            "point_of_view",
        ],
    ),
    (
        "地点",
        &[
            "地点",
            "场景",
            "场所",
            "地点场景",
            "location",
            "locations",
            "setting",
            "scene",
            "place",
        ],
    ),
    (
        "冲突",
        &[
            "冲突",
            "核心冲突",
            "主要冲突",
            "矛盾",
            "conflict",
            "conflicts",
        ],
    ),
    (
        "弧光",
        &[
            "弧光",
            "人物弧光",
            "角色弧光",
            "人物成长",
            "arc",
            "character_arc",
            "arcs",
        ],
    ),
    (
        "伏笔",
        &[
            "伏笔",
            "伏笔推进",
            "伏笔线",
            "foreshadowing",
            "foreshadow",
            "foreshadows",
        ],
    ),
    (
        "状态变化",
        &[
            "状态变化",
            "状态变更",
            "状态改变",
            "状态更新",
            "state_changes",
            "state_change",
            "state",
            "changes",
        ],
    ),
];

/// The labels of the optional `爽点` field of a chapter block (its payoff as the outline states
/// it; the structured one is the contract's `payoff`): read like a §5.3 field, never required.
pub const PAYOFF_LABELS: &[&str] = &["爽点", "爽点类型", "payoff", "期待感", "兑现"];

/// Characters of a line kept in a message (a 1 MB line is not repeated back whole).
pub const EXCERPT_CHARS: usize = 40;

/// A line cut to [`EXCERPT_CHARS`] characters, `…` where cut.
pub fn excerpt(line: &str) -> String {
    let t = line.trim();
    let mut out: String = t.chars().take(EXCERPT_CHARS).collect();
    if t.chars().nth(EXCERPT_CHARS).is_some() {
        out.push('…');
    }
    out
}

/// A label as compared: ASCII-folded (full-width letters and digits), lower case, without
/// whitespace, `_`, `-`, `·` or `*`.
pub fn label_key(label: &str) -> String {
    label
        .chars()
        .map(|c| match c {
            '\u{FF01}'..='\u{FF5E}' => char::from_u32(c as u32 - 0xFEE0).unwrap_or(c),
            _ => c,
        })
        .filter(|c| !c.is_whitespace() && !matches!(c, '_' | '-' | '·' | '*'))
        .flat_map(char::to_lowercase)
        .collect()
}

/// The name of the §5.3 field `label` is written for, if any (`StateChanges` → 状态变化);
/// a label naming two (`地点/场景`) is the first it names.
pub fn field_name(label: &str) -> Option<&'static str> {
    label.split(['/', '／', '、', '|', '｜']).find_map(|part| {
        let k = label_key(part);
        field_keys()
            .iter()
            .find(|(_, keys)| keys.contains(&k))
            .map(|(name, _)| *name)
    })
}

/// [`FIELDS`] with every label already in [`label_key`] form: an outline line is matched
/// against all of them, and the SessionStart hook reads the next chapter's outline block.
fn field_keys() -> &'static [(&'static str, Vec<String>)] {
    static KEYS: std::sync::OnceLock<Vec<(&'static str, Vec<String>)>> = std::sync::OnceLock::new();
    KEYS.get_or_init(|| {
        FIELDS
            .iter()
            .map(|(name, labels)| (*name, labels.iter().map(|l| label_key(l)).collect()))
            .collect()
    })
}

impl ChapterBlock {
    /// The first field whose label is one of `keys` (compared by [`label_key`], any of the
    /// parts of a label such as `地点/场景`).
    pub fn field(&self, keys: &[&str]) -> Option<&str> {
        let wanted: Vec<String> = keys.iter().map(|k| label_key(k)).collect();
        self.fields
            .iter()
            .find(|f| {
                f.key
                    .split(['/', '／', '、', '|', '｜'])
                    .any(|part| wanted.contains(&label_key(part)))
            })
            .map(|f| f.value.as_str())
    }

    /// The §5.3 field `name` (one of [`FIELDS`]) under any of its labels.
    pub fn named(&self, name: &str) -> Option<&Field> {
        self.fields
            .iter()
            .find(|f| field_name(&f.key) == Some(name))
    }

    /// The `故事线` / `Storyline` field, when it is a slug.
    pub fn storyline(&self) -> Option<&str> {
        self.named("故事线")
            .map(|f| f.value.split_whitespace().next().unwrap_or(""))
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
            text: excerpt(trimmed),
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

/// A list marker at the start of a line: `- ` `* ` `+ ` `• ` `· ` `1. ` `1、` `(1) ` `（1）`.
fn strip_marker(line: &str) -> &str {
    let t = line.trim_start();
    for m in ["- ", "* ", "+ ", "• ", "· ", "・", "•", "·"] {
        if let Some(rest) = t.strip_prefix(m) {
            return rest.trim_start();
        }
    }
    let digits = t.chars().take_while(|c| c.is_ascii_digit()).count();
    if digits > 0 && digits <= 3 {
        let rest = &t[digits..];
        for m in [". ", "、", ".", ")", "）"] {
            if let Some(rest) = rest.strip_prefix(m) {
                return rest.trim_start();
            }
        }
    }
    for (open, close) in [('(', ')'), ('（', '）')] {
        if let Some(rest) = t.strip_prefix(open)
            && let Some((n, rest)) = rest.split_once(close)
            && !n.is_empty()
            && n.chars().count() <= 3
            && n.chars()
                .all(|c| c.is_ascii_digit() || "一二三四五六七八九十".contains(c))
        {
            return rest.trim_start();
        }
    }
    t
}

/// Reads a field line (see the module note): `(label, value)`. The label is at most 20
/// characters with no sentence punctuation in it, so a line of prose with a colon in it
/// (他说：走。) is not a field unless its first words are short enough to be a label.
pub fn field_of(line: &str) -> Option<(String, String)> {
    let item = strip_marker(line);
    // 【地点】魔都外城 (with or without a colon after the bracket).
    if let Some(rest) = item.strip_prefix('【')
        && let Some((k, v)) = rest.split_once('】')
    {
        let v = v.trim_start_matches([':', '：']).trim();
        return label_ok(k).then(|| (k.trim().to_string(), clean_value(v)));
    }
    let at = item.find(['：', ':'])?;
    let colon = item[at..].chars().next().map_or(1, char::len_utf8);
    let k = item[..at].trim().trim_matches('*').trim();
    let v = &item[at + colon..];
    label_ok(k).then(|| (k.to_string(), clean_value(v)))
}

/// A value without the bold marks that closed over the colon (`**地点：** 魔都`).
fn clean_value(v: &str) -> String {
    v.trim().trim_start_matches('*').trim().to_string()
}

fn label_ok(k: &str) -> bool {
    let n = k.chars().count();
    (1..=20).contains(&n) && !k.contains(['。', '，', '！', '？', ',', '!', '?', '「', '“', '"'])
}

/// A line that starts another part of a block: a heading or a blank line.
fn ends_continuation(line: &str) -> bool {
    let t = line.trim();
    t.is_empty() || t.starts_with('#')
}

/// One line of a chapter block: a field, the continuation of a field left empty on its own
/// line (`collecting`: the indentation of that field while it takes the lines under it), a
/// field-like line whose label none of [`FIELDS`] knows, or prose.
fn read_field_line(
    block: &mut ChapterBlock,
    line: &str,
    no: usize,
    collecting: &mut Option<usize>,
) {
    if ends_continuation(line) {
        *collecting = None;
        return;
    }
    let field = field_of(line);
    let indent = line.len() - line.trim_start().len();
    // A sub-item, or a line that is no field, continues the empty field above it.
    let continues = collecting.is_some_and(|at| field.is_none() || indent > at);
    if continues && let Some(last) = block.fields.last_mut() {
        if !last.value.is_empty() {
            last.value.push('；');
        }
        last.value.push_str(strip_marker(line).trim());
        return;
    }
    *collecting = None;
    if let Some((key, value)) = field {
        let known = field_name(&key).is_some()
            || key.split(['/', '／', '、', '|', '｜']).any(|part| {
                PAYOFF_LABELS
                    .iter()
                    .any(|l| label_key(l) == label_key(part))
            });
        if !known {
            block.unread.push((no, excerpt(line)));
        }
        if known && value.is_empty() {
            *collecting = Some(indent);
        }
        block.fields.push(Field {
            key,
            value,
            line: no,
        });
    }
}

/// Parses an outline (see the module note).
pub fn parse(text: &str) -> Result<Outline, OutlineError> {
    let text = crate::validate::strip_bom(text);
    let mut chapters: Vec<ChapterBlock> = Vec::new();
    let mut overview: Vec<&str> = Vec::new();
    // The open chapter: its block, its lines and its heading's level.
    let mut current: Option<(ChapterBlock, Vec<&str>, usize)> = None;
    // The open chapter's last field takes the lines under it.
    let mut collecting: Option<usize> = None;
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
                collecting = None;
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
                        unread: Vec::new(),
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
                    read_field_line(block, line, no, &mut collecting);
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

    #[test]
    fn field_lines_as_authors_write_them() {
        // (line, label, value)
        let cases: [(&str, &str, &str); 14] = [
            ("- 地点：魔都外城", "地点", "魔都外城"),
            ("地点：魔都外城", "地点", "魔都外城"),
            ("* POV: 陆尘", "POV", "陆尘"),
            ("+ 冲突:他问：为什么", "冲突", "他问：为什么"),
            ("- Conflict: 他问：为什么", "Conflict", "他问：为什么"),
            (
                "冲突：老乞丐说：「别往北走。」",
                "冲突",
                "老乞丐说：「别往北走。」",
            ),
            ("**地点**：城北废墟", "地点", "城北废墟"),
            ("- **故事线：** main_arc", "故事线", "main_arc"),
            ("【POV】许象乾", "POV", "许象乾"),
            ("【地点】：佑国驿馆", "地点", "佑国驿馆"),
            ("1. 故事线：main_arc", "故事线", "main_arc"),
            ("3、地点：青云镇", "地点", "青云镇"),
            ("（2）视角：陆尘", "视角", "陆尘"),
            ("- 冲突 ： 驿馆夜袭", "冲突", "驿馆夜袭"),
        ];
        for (line, key, value) in cases {
            assert_eq!(
                field_of(line),
                Some((key.to_string(), value.to_string())),
                "{line}"
            );
        }
        // Prose with a colon in it is not a field.
        assert_eq!(field_of("他看了看四周，低声说：走。"), None);
        assert_eq!(field_of("没有冒号的一行"), None);
    }

    #[test]
    fn labels_in_either_language_width_and_case() {
        let cases: [(&str, Option<&str>); 11] = [
            ("状态变化", Some("状态变化")),
            ("状态变更", Some("状态变化")),
            ("StateChanges", Some("状态变化")),
            ("State changes", Some("状态变化")),
            ("state_changes", Some("状态变化")),
            ("ＰＯＶ", Some("POV")),
            ("视角", Some("POV")),
            ("地点/场景", Some("地点")),
            ("Storyline", Some("故事线")),
            ("人物弧光", Some("弧光")),
            ("备注", None),
        ];
        for (label, want) in cases {
            assert_eq!(field_name(label), want, "{label}");
        }
    }

    #[test]
    fn an_empty_field_takes_the_lines_under_it_and_unknown_labels_are_kept() {
        let text = "## 第7章 夜袭\n- 故事线：jinghai_plan\n- 状态变化：\n  - 许象乾重伤\n  - 海图落入陆尘手中\n- 备忘：记得写雨\n\n正文提示\n";
        let o = parse(text).unwrap();
        let b = o.block(7).unwrap();
        assert_eq!(
            b.named("状态变化").map(|f| (f.value.as_str(), f.line)),
            Some(("许象乾重伤；海图落入陆尘手中", 3))
        );
        assert_eq!(b.unread, [(6, "- 备忘：记得写雨".to_string())]);
        // The blank line ended the field: the prose under it is not part of it.
        assert!(!b.named("状态变化").unwrap().value.contains("正文提示"));
    }

    #[test]
    fn a_one_megabyte_line_is_read_without_repeating_it() {
        // A heading with the title glued on, one million characters long: the error names the
        // line and quotes only its start.
        let line = format!("## 第12章{}", "雨".repeat(1_000_000));
        let e = parse(&line).unwrap_err();
        let shown = e.to_string();
        assert!(
            shown.contains("第 1 行"),
            "{}",
            &shown[..200.min(shown.len())]
        );
        assert!(
            shown.chars().count() < 400,
            "{} chars",
            shown.chars().count()
        );
        // A field line of a million characters is one field.
        let text = format!("## 第1章 长\n- 冲突：{}\n", "打".repeat(1_000_000));
        let o = parse(&text).unwrap();
        assert_eq!(
            o.block(1)
                .unwrap()
                .named("冲突")
                .unwrap()
                .value
                .chars()
                .count(),
            1_000_000
        );
    }
}
