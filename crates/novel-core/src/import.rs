//! `novel import` (导入已有书稿): the plan of an import — what a split manuscript holds, what is
//! wrong with its numbering, and what lands where in the project. Pure: the text is decoded and
//! split by `novel_text::chapters`, the source read and the plan written by `novel-store`.
//!
//! Numbering problems are reported, never guessed: a gap, a duplicated or an out-of-order
//! chapter number refuses the import unless the author asks to number by order of appearance
//! (`--renumber`); a manuscript without a chapter, a heading whose number cannot be read or is
//! out of range, an empty chapter (often a table of contents split as chapters) and volumes
//! going backwards refuse it either way. A gap names the lines that may be the missing
//! chapters' headings (prose that starts like one), and a chapter far longer than the others
//! is flagged. Nothing already in the project is overwritten: a chapter at or below the last
//! completed one, or whose file exists, is skipped and listed. The headings are kept as
//! written (第一回 stays 第一回); an extra records where it stands in the book.
//!
//! Layer: rules — checks and decisions over the model (judging, ops, validation, the gate,
//! revisions, import); below the loop.

use std::collections::BTreeSet;

use serde::Serialize;

use crate::diagnostic::{Diagnostic, Severity};
use crate::model::OrchestratorState;

/// What a section of the manuscript is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SectionKind {
    /// A numbered chapter (`第12章`, `Chapter 12`, `012.txt`).
    Chapter,
    /// A named extra: 序章、楔子、引子、番外、尾声、后记 — kept, never numbered.
    Extra,
    /// Text before the first heading (a book title, an introduction) or between a volume
    /// heading and the next heading: kept as an extra so no text is lost.
    Preface,
}

/// One section of the manuscript, as split.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Section {
    pub kind: SectionKind,
    /// The chapter number as written (chapters only).
    pub number: Option<u32>,
    /// The extra's name (`楔子`, `番外一`, `前言`); empty for chapters.
    pub name: String,
    /// The title after the number or name (may be empty).
    pub title: String,
    /// The volume heading it falls under (`第一卷` → 1), if any.
    pub volume: Option<u32>,
    /// The source file it comes from (as shown to the author).
    pub file: String,
    /// 1-based line of its heading (or of its first line) in that file.
    pub line: usize,
    /// The text under the heading, heading excluded, blank lines at both ends trimmed.
    pub body: String,
    /// The heading line as written (Markdown `#` marks and surrounding spaces removed); empty
    /// for a preface, which has none in the source.
    pub heading: String,
    /// Lines of the further pages' headings of a paged chapter (「第七章（二）」), merged into
    /// it and kept as lines of its text.
    pub merged: Vec<usize>,
    /// An extra read before the chapters (序、楔子、前言) rather than after them.
    pub front: bool,
}

/// A volume heading of the manuscript (`第一卷 风起青萍`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct VolumeHeading {
    pub volume: u32,
    pub title: String,
    /// The heading line as written (`第一卷 风起青萍`).
    pub heading: String,
    pub file: String,
    pub line: usize,
}

/// A line of the manuscript that is not the story (a site's ad, a URL, page navigation, an
/// author's aside; `novel_text::furniture`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Furniture {
    pub file: String,
    pub line: usize,
    /// `url` | `ad` | `navigation` | `notice` | `author_note` | `heading_prefix`.
    pub kind: &'static str,
    /// The kind in Chinese.
    pub label: &'static str,
    pub text: String,
    /// A piece inside a paragraph of the story (an inline link, 「（本章完）」 after the last
    /// sentence): `--strip-furniture` cuts it out of the line and keeps the prose.
    pub inline: bool,
}

/// A line that starts like chapter `number`'s heading but reads as prose (第三回合，…): kept as
/// text, named when that chapter turns out missing.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Suspect {
    pub file: String,
    pub line: usize,
    pub number: u32,
    pub text: String,
}

/// What is wrong with the manuscript's numbering or content.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ProblemKind {
    /// Chapter numbers skip (also: the import does not continue the project's last chapter).
    Gap,
    Duplicate,
    OutOfOrder,
    /// A chapter with no text.
    Empty,
    /// Volume numbers go backwards, or below the project's current volume.
    VolumeOrder,
    /// A chapter heading in a file whose name gives another number (the name wins; a warning).
    NameMismatch,
    /// A file of a folder with no number and no extra name: imported as an extra (a warning).
    Unnumbered,
    /// The manuscript has no chapter heading at all.
    NoChapters,
    /// A heading whose number cannot be read (第一亿章, 第-1章).
    Unreadable,
    /// A chapter number beyond what a project holds (99999).
    NumberRange,
    /// A chapter far longer than the others: a heading may not have been read (a warning).
    LongChapter,
    /// Characters of Unicode's private-use areas (a site's scrambled font): no text anyone can
    /// read, not counted in 字数 (a warning).
    PrivateUse,
}

/// One problem, with where it is: its kind, and the finding (`E_IMPORT_ORDER` — fixed by
/// `--renumber` —, `E_IMPORT_EMPTY`, `E_IMPORT_VOLUME` refuse the import; a warning refuses
/// nothing and has its kind's rule id, `import/name_mismatch`, `import/unnumbered`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Problem {
    pub kind: ProblemKind,
    #[serde(flatten)]
    pub finding: Diagnostic,
}

impl Problem {
    /// A problem that refuses the import, at `file`:`line`.
    pub fn error(
        kind: ProblemKind,
        code: &'static str,
        file: &str,
        line: usize,
        chapter: Option<u32>,
        message: String,
    ) -> Problem {
        let mut finding = Diagnostic::new(code, Severity::Error, file, message, "").at_line(line);
        finding.chapter = chapter;
        Problem { kind, finding }
    }

    /// A warning that refuses nothing, at `file`:`line`.
    pub fn warning(
        kind: ProblemKind,
        file: &str,
        line: usize,
        message: String,
        hint: &str,
    ) -> Problem {
        let code = match kind {
            ProblemKind::NameMismatch => "import/name_mismatch",
            ProblemKind::LongChapter => "import/long_chapter",
            ProblemKind::Duplicate => "import/duplicate",
            ProblemKind::Empty => "import/empty",
            ProblemKind::PrivateUse => "import/private_use",
            _ => "import/unnumbered",
        };
        let finding = Diagnostic::new(code, Severity::Warning, file, message, hint).at_line(line);
        Problem { kind, finding }
    }

    /// Whether it refuses the import.
    pub fn blocking(&self) -> bool {
        self.finding.is_error()
    }
}

/// `novel.json`'s key for the first chapter of a project whose book starts later (an import
/// with `--start N`): the chapters before it belong to the book, not to the project.
pub const FIRST_CHAPTER_KEY: &str = "first_chapter";

/// The project's first chapter: 1, or the `first_chapter` an import with `--start` recorded.
pub fn first_chapter(settings: &crate::model::Settings) -> u32 {
    settings
        .extra
        .get(FIRST_CHAPTER_KEY)
        .and_then(serde_json::Value::as_u64)
        .and_then(|n| u32::try_from(n).ok())
        .filter(|n| *n >= 1)
        .unwrap_or(1)
}

/// The pending action an import leaves (`import-backfill`, type `import_backfill`): the
/// imported chapters still without a summary, a state delta and storyline memory.
pub const BACKFILL_ID: &str = "import-backfill";
pub const BACKFILL_TYPE: &str = "import_backfill";

/// The backfill pending action of a checkpoint, if any.
pub fn backfill_action(cp: &crate::model::Checkpoint) -> Option<&crate::model::PendingAction> {
    cp.pending_actions.iter().find(|a| a.kind == BACKFILL_TYPE)
}

/// The chapters a backfill action still lists, in order.
pub fn backfill_chapters(a: &crate::model::PendingAction) -> Vec<u32> {
    a.extra
        .get("chapters")
        .and_then(serde_json::Value::as_array)
        .map(|v| {
            v.iter()
                .filter_map(|n| n.as_u64().and_then(|n| u32::try_from(n).ok()))
                .collect()
        })
        .unwrap_or_default()
}

/// Records `chapters` as what the backfill action still needs (`chapters`, and `next`, the
/// first of them).
pub fn set_backfill(a: &mut crate::model::PendingAction, chapters: &BTreeSet<u32>) {
    a.extra.insert(
        "chapters".into(),
        serde_json::json!(chapters.iter().collect::<Vec<_>>()),
    );
    a.extra
        .insert("next".into(), serde_json::json!(chapters.iter().next()));
}

/// The backfill still pending in a checkpoint: (chapters left, the next one).
pub fn backfill_of(cp: &crate::model::Checkpoint) -> Option<(usize, u32)> {
    let left = backfill_chapters(backfill_action(cp)?);
    Some((left.len(), *left.first()?))
}

/// What becomes of a section.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Action {
    Import,
    /// Already in the project (at or below its last completed chapter, or the file exists).
    Skip,
    /// A second copy of a chapter, word for word the same as an earlier one: not imported (a
    /// warning names both lines).
    Duplicate,
}

/// One row of the table (`--dry-run` prints it; the import writes the `import` rows).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Row {
    pub kind: SectionKind,
    /// The chapter number it lands as (after `--renumber`); `None` for extras.
    pub chapter: Option<u32>,
    /// The number as written in the source.
    pub source_number: Option<u32>,
    pub name: String,
    pub title: String,
    pub volume: Option<u32>,
    /// 字数 of the body (`novel count`'s rule).
    pub chars: usize,
    pub file: String,
    pub line: usize,
    /// The heading as the chapter file (or extra) keeps it: as written, or `第N章 标题` for a
    /// renumbered chapter; empty for a preface.
    pub heading: String,
    /// Lines of further page headings merged into this chapter.
    pub merged: Vec<usize>,
    /// Extras: the chapter they follow in reading order (one before the first chapter for
    /// those read before it); `None` for chapters.
    pub after_chapter: Option<u32>,
    pub action: Action,
    /// Project-relative file it lands in (or would, for a skipped row).
    pub target: String,
    /// Why it is skipped (Chinese), empty otherwise.
    pub reason: String,
}

/// The project the import goes into.
#[derive(Debug, Clone, Default)]
pub struct Target {
    pub last_completed: u32,
    /// Chapters whose `chapters/chapter-NNN.md` exists.
    pub chapter_files: BTreeSet<u32>,
    /// Files under `extras/` (names).
    pub extra_files: BTreeSet<String>,
    pub current_volume: u32,
    /// A project `novel import` creates (no chapter, no volume yet).
    pub new_project: bool,
}

/// How the author asked to number the chapters.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Numbering {
    /// Number by order of appearance (`--renumber`).
    pub renumber: bool,
    /// The manuscript is a later part of the book starting at this chapter (`--start N`): into
    /// a new project, its chapters keep their numbers from N on.
    pub start: Option<u32>,
}

/// The chapters of one volume that the import writes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct VolumeRange {
    pub volume: u32,
    pub range: [u32; 2],
    /// The volume heading's title, if the manuscript had one.
    pub title: Option<String>,
    /// The volume heading as written (`第一卷 风起`), if the manuscript had one.
    pub heading: Option<String>,
}

/// The whole plan.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Plan {
    pub rows: Vec<Row>,
    pub problems: Vec<Problem>,
    /// Chapters written, in order.
    pub imported: Vec<u32>,
    /// Chapters skipped because the project already has them.
    pub skipped: Vec<u32>,
    pub volumes: Vec<VolumeRange>,
    /// 字数 of every section's body (chapters and extras, skipped ones too).
    pub source_chars: usize,
    /// The project's last completed chapter when the plan was made (the write checks it has
    /// not moved).
    #[serde(skip)]
    pub project_last: u32,
}

impl Plan {
    /// The code that refuses the import, if any: no chapter at all, unreadable headings and
    /// numbers out of range, volume problems (nothing fixes them but the source), then empty
    /// chapters, then numbering (which `--renumber` fixes).
    pub fn refusal(&self) -> Option<&'static str> {
        REFUSALS
            .into_iter()
            .find(|code| self.problems.iter().any(|p| p.finding.code == *code))
    }
}

/// The codes that refuse an import, first found first reported.
pub const REFUSALS: [&str; 6] = [
    "E_IMPORT_NO_CHAPTERS",
    "E_IMPORT_HEADING",
    "E_IMPORT_NUMBER",
    "E_IMPORT_VOLUME",
    "E_IMPORT_EMPTY",
    "E_IMPORT_ORDER",
];

/// What the planner is told besides the sections: the volume headings, the lines that may be
/// missed headings, and the first lines of the manuscript (named when no chapter is found).
#[derive(Debug, Clone, Default)]
pub struct Found<'a> {
    pub volumes: &'a [VolumeHeading],
    pub suspects: &'a [Suspect],
    /// (file, first non-blank lines) of the manuscript, for the no-chapter refusal.
    pub opening: (&'a str, &'a [String]),
}

/// `extras/01-楔子.md`: extras in the order of the manuscript, the name made safe for a file.
pub fn extra_target(index: usize, name: &str) -> String {
    let safe: String = name
        .chars()
        .filter(|c| !c.is_control() && !"/\\:*?\"<>|".contains(*c))
        .take(24)
        .collect();
    let safe = safe.trim();
    let safe = if safe.is_empty() { "番外" } else { safe };
    format!("{}/{index:02}-{safe}.md", crate::naming::EXTRAS_DIR)
}

/// Plans the import of `sections` (in manuscript order) into `target`, with each section's
/// 字数 in `chars` (same order).
pub fn plan(
    sections: &[Section],
    chars: &[usize],
    found: &Found<'_>,
    target: &Target,
    numbering: Numbering,
) -> Plan {
    let renumber = numbering.renumber;
    // The chapter before the first one imported: the project's last, or the one before
    // `--start` in a new project.
    let base = match numbering.start {
        Some(s) if target.new_project => s.saturating_sub(1),
        _ => target.last_completed,
    };
    let mut problems = Vec::new();
    if !sections.iter().any(|s| s.kind == SectionKind::Chapter) {
        problems.push(no_chapters(found));
    }
    let copies = identical_copies(sections);
    problems.extend(copy_notices(sections, &copies));
    problems.extend(content_problems(
        sections,
        chars,
        &copies,
        found.volumes,
        target,
    ));
    if !renumber {
        problems.extend(numbering_problems(sections, &copies, found.suspects));
    }
    let numbers = numbers(sections, &copies, base, renumber);
    problems.extend(range_problem(sections, &numbers));
    problems.extend(long_chapters(sections, chars, found.suspects));
    let rows = rows(sections, chars, &numbers, &copies, target, base);
    let imported = chapters_of(&rows, Action::Import);
    // Gaps inside the manuscript are reported once, by the numbering check.
    let numbered_ok = problems.iter().all(|p| p.finding.code != "E_IMPORT_ORDER");
    if numbered_ok && (!renumber || !target.new_project) {
        problems.extend(continuation_problem(
            &imported, &rows, target, base, numbering,
        ));
    }
    let volumes = volume_ranges(&rows, found.volumes, target);
    Plan {
        skipped: chapters_of(&rows, Action::Skip),
        imported,
        problems,
        volumes,
        source_chars: chars.iter().sum(),
        rows,
        project_last: target.last_completed,
    }
}

/// One row per section: its number (`numbers`), where it lands and what is done with it (a
/// copy of an earlier section, `copies`, is a duplicate); an extra is placed after the chapter
/// before it (`base` before the first).
fn rows(
    sections: &[Section],
    chars: &[usize],
    numbers: &[Option<u32>],
    copies: &[Option<usize>],
    target: &Target,
    base: u32,
) -> Vec<Row> {
    let first = numbers.iter().flatten().next().copied();
    let mut rows = Vec::with_capacity(sections.len());
    let mut extra_index = 0;
    let mut last_chapter: Option<u32> = None;
    for (((s, &c), n), copy) in sections.iter().zip(chars).zip(numbers).zip(copies) {
        let copy_of = copy.map(|k| &sections[k]);
        let (target_file, skip_reason) = landing(s, *n, copy_of, target, &mut extra_index);
        let after_chapter = match s.kind {
            SectionKind::Chapter => None,
            _ => Some(last_chapter.unwrap_or_else(|| first.map_or(base, |f| f.saturating_sub(1)))),
        };
        if let Some(n) = n {
            last_chapter = Some(*n);
        }
        rows.push(Row {
            kind: s.kind,
            chapter: *n,
            source_number: s.number,
            name: s.name.clone(),
            title: s.title.clone(),
            volume: s.volume,
            chars: c,
            file: s.file.clone(),
            line: s.line,
            heading: row_heading(s, *n),
            merged: s.merged.clone(),
            after_chapter,
            action: match (copy, &skip_reason) {
                (Some(_), _) => Action::Duplicate,
                (None, Some(_)) => Action::Skip,
                (None, None) => Action::Import,
            },
            target: target_file,
            reason: skip_reason.unwrap_or_default(),
        });
    }
    rows
}

/// Where a section lands (its file) and why it is not imported, if it is not: a copy of
/// `copy_of`, a chapter the project has, an extra whose file exists.
fn landing(
    s: &Section,
    n: Option<u32>,
    copy_of: Option<&Section>,
    target: &Target,
    extra_index: &mut usize,
) -> (String, Option<String>) {
    match (s.kind, n, copy_of) {
        (_, _, Some(first)) => (
            String::new(),
            Some(format!(
                "与第 {} 行的{}一字不差，只导入那一份",
                first.line,
                chapter_name(first)
            )),
        ),
        (SectionKind::Chapter, Some(n), _) => {
            (crate::naming::chapter_file(n), chapter_skip(n, target))
        }
        _ => {
            *extra_index += 1;
            let file = extra_target(*extra_index, &s.name);
            let exists = file
                .rsplit('/')
                .next()
                .is_some_and(|f| target.extra_files.contains(f));
            let why = exists.then(|| format!("{file} 已存在"));
            (file, why)
        }
    }
}

/// The heading a chapter file (or extra) keeps: as written; `第N章 标题` when the chapter lands
/// under another number than its heading says (renumbered), or when the source had none (a
/// folder's file named by its number).
fn row_heading(s: &Section, n: Option<u32>) -> String {
    match (s.kind, n) {
        (SectionKind::Chapter, Some(n)) if s.number != Some(n) || s.heading.is_empty() => {
            if s.title.is_empty() {
                format!("第{n}章")
            } else {
                format!("第{n}章 {}", s.title)
            }
        }
        _ => s.heading.clone(),
    }
}

/// No chapter heading in the whole manuscript: what its first lines were.
fn no_chapters(found: &Found<'_>) -> Problem {
    let (file, opening) = found.opening;
    let shown: Vec<String> = opening
        .iter()
        .take(5)
        .map(|l| format!("「{}」", l.chars().take(30).collect::<String>()))
        .collect();
    let message = if shown.is_empty() {
        "书稿是空的（没有一个字）".to_string()
    } else {
        format!(
            "书稿里没有认出任何章节标题，全书会变成一篇附录；开头几行是：{}",
            shown.join("")
        )
    };
    let mut p = Problem::error(
        ProblemKind::NoChapters,
        "E_IMPORT_NO_CHAPTERS",
        file,
        1,
        None,
        message,
    );
    p.finding.hint = "章节标题要单独占一行，如「第12章 标题」「第十二回 标题」「Chapter 12」（前面可以有「正文」或书名）；一章一个文件时，文件名写章号（001.txt、第12章 标题.txt）".into();
    p
}

/// Chapter numbers beyond what a project holds: one problem, at the first, with how many.
fn range_problem(sections: &[Section], numbers: &[Option<u32>]) -> Option<Problem> {
    let max = crate::model::common::MAX_CHAPTER;
    let over: Vec<(&Section, u32)> = sections
        .iter()
        .zip(numbers)
        .filter_map(|(s, n)| n.filter(|n| *n > max).map(|n| (s, n)))
        .collect();
    let (s, n) = *over.first()?;
    let more = if over.len() > 1 {
        format!("（共 {} 章超出）", over.len())
    } else {
        String::new()
    };
    let mut p = problem(
        ProblemKind::NumberRange,
        "E_IMPORT_NUMBER",
        s,
        format!("第 {n} 章超出项目能容纳的章号（最大 {max}）{more}"),
    );
    p.finding.chapter = Some(n);
    Some(p)
}

/// Chapters far longer than the others (more than 4 × the median and over 20,000 字): a
/// heading may have been read as prose. Names the suspect lines inside.
fn long_chapters(sections: &[Section], chars: &[usize], suspects: &[Suspect]) -> Vec<Problem> {
    let mut lens: Vec<usize> = sections
        .iter()
        .zip(chars)
        .filter(|(s, _)| s.kind == SectionKind::Chapter)
        .map(|(_, c)| *c)
        .collect();
    if lens.len() < 3 {
        return Vec::new();
    }
    lens.sort_unstable();
    let limit = (lens[lens.len() / 2] * 4).max(20_000);
    let mut out = Vec::new();
    for (i, (s, &c)) in sections.iter().zip(chars).enumerate() {
        if s.kind != SectionKind::Chapter || c <= limit {
            continue;
        }
        let end = sections
            .get(i + 1)
            .filter(|n| n.file == s.file)
            .map_or(usize::MAX, |n| n.line);
        let inside: Vec<String> = suspects
            .iter()
            .filter(|x| x.file == s.file && x.line > s.line && x.line < end)
            .take(3)
            .map(|x| format!("第 {} 行「{}」", x.line, x.text))
            .collect();
        let n = s.number.map(|n| format!("第 {n} 章")).unwrap_or_default();
        let mut message = format!("{n}有 {c} 字，是一般章节的 4 倍以上：可能有章节标题没有认出来");
        if !inside.is_empty() {
            message.push_str(&format!("（像标题的行：{}）", inside.join("、")));
        }
        let mut p = Problem::warning(
            ProblemKind::LongChapter,
            &s.file,
            s.line,
            message,
            "看一看这一章里有没有被当成正文的章节标题；标题单独成行、章号后用空格隔开就能认出",
        );
        p.finding.chapter = s.number;
        out.push(p);
    }
    out
}

fn chapters_of(rows: &[Row], action: Action) -> Vec<u32> {
    rows.iter()
        .filter(|r| r.kind == SectionKind::Chapter && r.action == action)
        .filter_map(|r| r.chapter)
        .collect()
}

fn chapter_skip(n: u32, target: &Target) -> Option<String> {
    if n <= target.last_completed {
        Some(format!(
            "项目已完成到第 {} 章，第 {n} 章已在项目中",
            target.last_completed
        ))
    } else if target.chapter_files.contains(&n) {
        Some(format!("{} 已存在", crate::naming::chapter_file(n)))
    } else {
        None
    }
}

/// The number each section lands as: the source's, or (`--renumber`) the order of appearance
/// after `base` (the project's last chapter, or the one before `--start`). A word-for-word copy
/// of an earlier chapter lands nowhere.
fn numbers(
    sections: &[Section],
    copies: &[Option<usize>],
    base: u32,
    renumber: bool,
) -> Vec<Option<u32>> {
    let mut next = base;
    sections
        .iter()
        .zip(copies)
        .map(|(s, copy)| match s.kind {
            _ if copy.is_some() => None,
            SectionKind::Chapter if renumber => {
                next = next.saturating_add(1);
                Some(next)
            }
            SectionKind::Chapter => s.number,
            _ => None,
        })
        .collect()
}

/// 「第 35 章「标题」」 as the author wrote it (the heading when there is one).
fn chapter_name(s: &Section) -> String {
    if s.heading.is_empty() {
        format!("第 {} 章", s.number.unwrap_or(0))
    } else {
        format!("「{}」", s.heading)
    }
}

/// For each chapter that repeats an earlier chapter's number with the same text (spaces aside),
/// the index of that earlier section: an edition that prints a chapter twice.
pub fn identical_copies(sections: &[Section]) -> Vec<Option<usize>> {
    use std::collections::HashMap;
    let squeeze = |t: &str| -> String { t.chars().filter(|c| !c.is_whitespace()).collect() };
    let mut first: HashMap<(u32, String), usize> = HashMap::new();
    sections
        .iter()
        .enumerate()
        .map(|(i, s)| {
            let n = s.number.filter(|_| s.kind == SectionKind::Chapter)?;
            let body = squeeze(&s.body);
            if body.is_empty() {
                return None;
            }
            match first.entry((n, body)) {
                std::collections::hash_map::Entry::Occupied(e) => Some(*e.get()),
                std::collections::hash_map::Entry::Vacant(v) => {
                    v.insert(i);
                    None
                }
            }
        })
        .collect()
}

/// A notice for each word-for-word copy dropped, naming both lines.
fn copy_notices(sections: &[Section], copies: &[Option<usize>]) -> Vec<Problem> {
    sections
        .iter()
        .zip(copies)
        .filter_map(|(s, copy)| {
            let first = &sections[(*copy)?];
            let mut p = Problem::warning(
                ProblemKind::Duplicate,
                &s.file,
                s.line,
                format!(
                    "第 {} 行的{}与第 {} 行的{}一字不差：是同一章印了两次，只导入第 {} 行那一份",
                    s.line,
                    chapter_name(s),
                    first.line,
                    chapter_name(first),
                    first.line
                ),
                "不是重复的话，检查这两处的章号",
            );
            p.finding.chapter = s.number;
            Some(p)
        })
        .collect()
}

fn problem(kind: ProblemKind, code: &'static str, s: &Section, message: String) -> Problem {
    Problem::error(kind, code, &s.file, s.line, s.number, message)
}

/// Gaps, duplicates and numbers going backwards, in the manuscript itself (word-for-word
/// copies aside: they are dropped). A duplicate names both lines; a gap names the prose lines
/// that start like a missing chapter's heading.
fn numbering_problems(
    sections: &[Section],
    copies: &[Option<usize>],
    suspects: &[Suspect],
) -> Vec<Problem> {
    let mut out = Vec::new();
    let mut seen: std::collections::BTreeMap<u32, &Section> = Default::default();
    let mut max: Option<u32> = None;
    for (s, _) in sections
        .iter()
        .zip(copies)
        .filter(|(s, copy)| s.kind == SectionKind::Chapter && copy.is_none())
    {
        let Some(n) = s.number else { continue };
        if let Some(first) = seen.get(&n) {
            let mut p = problem(
                ProblemKind::Duplicate,
                "E_IMPORT_ORDER",
                s,
                format!(
                    "第 {n} 章出现了两次，内容不同：第 {} 行的{}与第 {} 行的{}",
                    first.line,
                    chapter_name(first),
                    s.line,
                    chapter_name(s)
                ),
            );
            p.finding.hint = "是两章就改正其中一个的章号，或加 --renumber 按出现顺序编号；是同一章的两页，就在后一个标题后加「（二）」".into();
            out.push(p);
            continue;
        }
        seen.insert(n, s);
        match max {
            Some(m) if n < m => out.push(problem(
                ProblemKind::OutOfOrder,
                "E_IMPORT_ORDER",
                s,
                format!("第 {n} 章出现在第 {m} 章之后（顺序颠倒）"),
            )),
            Some(m) if n > m + 1 => {
                let mut message = format!("缺{}：第 {m} 章之后是第 {n} 章", missing(m + 1, n - 1));
                let maybe: Vec<String> = suspects
                    .iter()
                    .filter(|x| (m + 1..n).contains(&x.number))
                    .take(3)
                    .map(|x| format!("{}:{}「{}」", x.file, x.line, x.text))
                    .collect();
                if !maybe.is_empty() {
                    message.push_str(&format!(
                        "；这几行像缺的章节标题，但读成了正文：{}",
                        maybe.join("、")
                    ));
                }
                out.push(problem(ProblemKind::Gap, "E_IMPORT_ORDER", s, message));
            }
            _ => {}
        }
        max = Some(max.map_or(n, |m| m.max(n)));
    }
    out
}

fn missing(a: u32, b: u32) -> String {
    if a == b {
        format!("第 {a} 章")
    } else {
        format!("第 {a}–{b} 章")
    }
}

/// The imported chapters must continue the project: the first is `base` + 1 (the project's
/// last completed chapter, or the one before `--start` in a new project), and none is missing
/// among them.
fn continuation_problem(
    imported: &[u32],
    rows: &[Row],
    target: &Target,
    base: u32,
    numbering: Numbering,
) -> Option<Problem> {
    let first = *imported.iter().min()?;
    let expected = base + 1;
    let mut want = expected;
    for n in imported.iter().copied().collect::<BTreeSet<_>>() {
        if n != want {
            let row = rows.iter().find(|r| r.chapter == Some(n))?;
            let message = if n == first && target.new_project && numbering.start.is_none() {
                format!(
                    "书稿从第 {first} 章开始，新项目要从第 1 章开始：缺{}",
                    missing(expected, first - 1)
                )
            } else if n == first && target.new_project {
                format!("书稿从第 {first} 章开始，与 --start {expected} 不符")
            } else if n == first {
                format!(
                    "项目已完成到第 {} 章，导入从第 {first} 章开始：缺{}",
                    target.last_completed,
                    missing(expected, first - 1)
                )
            } else {
                format!("导入的章节不连续：缺{}", missing(want, n - 1))
            };
            let mut p = Problem::error(
                ProblemKind::Gap,
                "E_IMPORT_ORDER",
                &row.file,
                row.line,
                Some(n),
                message,
            );
            if n == first && target.new_project {
                p.finding.hint = format!(
                    "这是全书的后一部分时加 --start {first}，按书稿的章号导入；或加 --renumber 从第 1 章重新编号"
                );
            }
            return Some(p);
        }
        want = n + 1;
    }
    if let Some(s) = numbering.start
        && !target.new_project
        && s != target.last_completed + 1
    {
        let row = rows.iter().find(|r| r.chapter == Some(first))?;
        let mut p = Problem::error(
            ProblemKind::Gap,
            "E_IMPORT_ORDER",
            &row.file,
            row.line,
            Some(first),
            format!(
                "项目已完成到第 {} 章，--start 只能是 {}",
                target.last_completed,
                target.last_completed + 1
            ),
        );
        p.finding.hint = "导入到已有项目时章号接着项目的最后一章：去掉 --start".into();
        return Some(p);
    }
    None
}

/// Empty chapters: one whose number comes again later (a table of contents taken for
/// chapters) refuses the import, and so does every one when no chapter has text; any other is
/// imported empty with a warning (the chapter keeps its number; `validate` lists it until it is
/// written).
fn empty_chapters(sections: &[Section], chars: &[usize], copies: &[Option<usize>]) -> Vec<Problem> {
    let mut out = Vec::new();
    // Not one chapter with text: a table of contents, not a book.
    let none_written = sections
        .iter()
        .zip(chars)
        .all(|(s, &c)| s.kind != SectionKind::Chapter || c == 0);
    for (i, (s, &c)) in sections.iter().zip(chars).enumerate() {
        if s.kind != SectionKind::Chapter || c != 0 || copies[i].is_some() {
            continue;
        }
        let n = s.number.map(|n| format!("第 {n} 章")).unwrap_or_default();
        let again = sections[i + 1..]
            .iter()
            .find(|l| l.kind == SectionKind::Chapter && l.number == s.number);
        let refusal = match again {
            Some(later) => format!(
                "{n}「{}」没有正文，第 {} 行又是{n}：目录被当成了章节",
                s.title, later.line
            ),
            None if none_written => {
                format!(
                    "{n}「{}」没有正文：书稿里没有一章有正文，多半只是一份目录",
                    s.title
                )
            }
            None => {
                let mut p = Problem::warning(
                    ProblemKind::Empty,
                    &s.file,
                    s.line,
                    format!("{n}「{}」没有正文：照样导入为空章，章号不变", s.title),
                    "之后补写这一章（novel validate 会一直列出它），或在书稿里删去这个标题重新导入",
                );
                p.finding.chapter = s.number;
                out.push(p);
                continue;
            }
        };
        out.push(problem(ProblemKind::Empty, "E_IMPORT_EMPTY", s, refusal));
    }
    out
}

/// Empty chapters ([`empty_chapters`]); volumes going backwards; and, into an existing project,
/// chapters of a volume before its current one.
fn content_problems(
    sections: &[Section],
    chars: &[usize],
    copies: &[Option<usize>],
    volumes: &[VolumeHeading],
    target: &Target,
) -> Vec<Problem> {
    let mut out = empty_chapters(sections, chars, copies);
    for w in volumes.windows(2) {
        if w[1].volume <= w[0].volume {
            out.push(Problem::error(
                ProblemKind::VolumeOrder,
                "E_IMPORT_VOLUME",
                &w[1].file,
                w[1].line,
                None,
                format!("第 {} 卷出现在第 {} 卷之后", w[1].volume, w[0].volume),
            ));
        }
    }
    if !target.new_project
        && let Some(v) = volumes.iter().find(|v| v.volume < target.current_volume)
        && sections.iter().any(|s| {
            s.kind == SectionKind::Chapter
                && s.volume == Some(v.volume)
                && s.number.is_some_and(|n| n > target.last_completed)
        })
    {
        out.push(Problem::error(
            ProblemKind::VolumeOrder,
            "E_IMPORT_VOLUME",
            &v.file,
            v.line,
            None,
            format!(
                "第 {} 卷的新章节早于项目当前的第 {} 卷",
                v.volume, target.current_volume
            ),
        ));
    }
    out
}

/// The volume each imported chapter lands in — its heading's, else the one before it (the
/// project's current volume, or 1 in a new project) — grouped into ranges.
fn volume_ranges(rows: &[Row], headings: &[VolumeHeading], target: &Target) -> Vec<VolumeRange> {
    let mut out: Vec<VolumeRange> = Vec::new();
    let mut current = target.current_volume.max(1);
    for r in rows {
        if let Some(v) = r.volume {
            current = v;
        }
        let (SectionKind::Chapter, Action::Import, Some(n)) = (r.kind, r.action, r.chapter) else {
            continue;
        };
        match out.last_mut() {
            Some(last) if last.volume == current => last.range[1] = n,
            _ => out.push(VolumeRange {
                volume: current,
                range: [n, n],
                title: headings
                    .iter()
                    .find(|h| h.volume == current)
                    .map(|h| h.title.clone())
                    .filter(|t| !t.is_empty()),
                heading: headings
                    .iter()
                    .find(|h| h.volume == current)
                    .map(|h| h.heading.clone()),
            }),
        }
    }
    out
}

/// The quick start's trial chapters (试写 3 章, `docs/orchestration.md` §3).
const TRIAL_CHAPTERS: u32 = 3;

/// The orchestrator state after an import: what committing the chapters one by one would have
/// given. A new project past the quick start's three trial chapters is in VOL_REVIEW of its
/// last volume (that volume's range ends at the last imported chapter, so its last chapter is
/// committed: the next step is the volume review and planning the next volume, or writing on
/// past the plan); a shorter one stays in QUICK_START (its trial chapters count as written).
/// An existing project keeps its state, except that WRITING reaching the volume's end moves
/// to VOL_REVIEW as a commit would.
pub fn state_after(
    before: OrchestratorState,
    new_project: bool,
    last: u32,
    volume_end: Option<u32>,
) -> OrchestratorState {
    use OrchestratorState as S;
    match before {
        S::Init | S::QuickStart if new_project && last >= TRIAL_CHAPTERS => S::VolReview,
        S::Writing | S::ChapterRewrite if volume_end.is_some_and(|e| last >= e) => S::VolReview,
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ch(n: u32, vol: Option<u32>) -> Section {
        Section {
            kind: SectionKind::Chapter,
            number: Some(n),
            name: String::new(),
            title: format!("标题{n}"),
            volume: vol,
            file: "书.txt".into(),
            line: n as usize * 10,
            body: "正文".into(),
            heading: format!("第{n}回 标题{n}"),
            merged: Vec::new(),
            front: false,
        }
    }

    fn extra(name: &str) -> Section {
        Section {
            kind: SectionKind::Extra,
            number: None,
            name: name.into(),
            title: String::new(),
            volume: None,
            file: "书.txt".into(),
            line: 1,
            body: "风雪夜".into(),
            heading: name.into(),
            merged: Vec::new(),
            front: true,
        }
    }

    fn run(sections: &[Section], target: &Target, renumber: bool) -> Plan {
        let chars = vec![2; sections.len()];
        let numbering = Numbering {
            renumber,
            start: None,
        };
        plan(sections, &chars, &Found::default(), target, numbering)
    }

    fn new_project() -> Target {
        Target {
            new_project: true,
            current_volume: 1,
            ..Target::default()
        }
    }

    #[test]
    fn a_clean_manuscript_imports_whole_with_its_extras() {
        let s = [extra("楔子"), ch(1, None), ch(2, None), ch(3, None)];
        let p = run(&s, &new_project(), false);
        assert!(p.problems.is_empty(), "{:?}", p.problems);
        assert_eq!(p.imported, [1, 2, 3]);
        assert_eq!(p.rows[0].target, "extras/01-楔子.md");
        assert_eq!(p.rows[3].target, "chapters/chapter-003.md");
        assert_eq!(
            p.volumes,
            [VolumeRange {
                volume: 1,
                range: [1, 3],
                title: None,
                heading: None,
            }]
        );
        assert_eq!(p.source_chars, 8);
        assert_eq!(p.refusal(), None);
        // The headings as written; the extra before the first chapter.
        assert_eq!(p.rows[1].heading, "第1回 标题1");
        assert_eq!(p.rows[0].after_chapter, Some(0));
        assert_eq!(p.rows[1].after_chapter, None);
    }

    #[test]
    fn a_manuscript_without_a_chapter_names_its_first_lines() {
        let lines = vec!["《书》".to_string(), "正文 第一回…".to_string()];
        let found = Found {
            opening: ("书.txt", &lines),
            ..Found::default()
        };
        let p = plan(
            &[extra("前言")],
            &[3],
            &found,
            &new_project(),
            Numbering::default(),
        );
        assert_eq!(p.refusal(), Some("E_IMPORT_NO_CHAPTERS"));
        assert!(
            p.problems[0]
                .finding
                .message
                .contains("「《书》」「正文 第一回…」")
        );
        let p = plan(
            &[],
            &[],
            &Found::default(),
            &new_project(),
            Numbering::default(),
        );
        assert!(p.problems[0].finding.message.contains("空的"));
    }

    #[test]
    fn a_later_part_of_a_book_starts_where_it_says() {
        let s = [extra("楔子"), ch(108, Some(2)), ch(109, Some(2))];
        let p = run(&s, &new_project(), false);
        assert_eq!(p.refusal(), Some("E_IMPORT_ORDER"));
        assert!(p.problems[0].finding.hint.contains("--start 108"));
        let numbering = Numbering {
            renumber: false,
            start: Some(108),
        };
        let p = plan(&s, &[2, 2, 2], &Found::default(), &new_project(), numbering);
        assert!(p.problems.is_empty(), "{:?}", p.problems);
        assert_eq!(p.imported, [108, 109]);
        assert_eq!(p.rows[0].after_chapter, Some(107));
        assert_eq!(p.rows[1].heading, "第108回 标题108");
        // Renumbered, the heading says the new number.
        let r = run(&s, &new_project(), true);
        assert_eq!(r.rows[1].heading, "第1章 标题108");
    }

    #[test]
    fn a_gap_names_the_prose_line_that_may_be_the_missing_heading() {
        let s = [ch(1, None), ch(3, None)];
        let suspects = [Suspect {
            file: "书.txt".into(),
            line: 15,
            number: 2,
            text: "第二回中…".into(),
        }];
        let found = Found {
            suspects: &suspects,
            ..Found::default()
        };
        let p = plan(&s, &[2, 2], &found, &new_project(), Numbering::default());
        assert!(
            p.problems[0]
                .finding
                .message
                .contains("书.txt:15「第二回中…」"),
            "{:?}",
            p.problems
        );
    }

    #[test]
    fn numbers_beyond_the_project_and_overlong_chapters_are_named() {
        let s = [ch(99_999, None), ch(100_000, None), ch(100_001, None)];
        let numbering = Numbering {
            renumber: false,
            start: Some(99_999),
        };
        let p = plan(&s, &[2, 2, 2], &Found::default(), &new_project(), numbering);
        assert_eq!(p.refusal(), Some("E_IMPORT_NUMBER"));
        assert!(p.problems[0].finding.message.contains("共 2 章"));
        let s = [ch(1, None), ch(2, None), ch(3, None), ch(4, None)];
        let p = plan(
            &s,
            &[3000, 3100, 46_586, 2900],
            &Found::default(),
            &new_project(),
            Numbering::default(),
        );
        assert_eq!(p.refusal(), None);
        assert_eq!(p.problems.len(), 1);
        assert_eq!(
            (p.problems[0].kind, p.problems[0].finding.chapter),
            (ProblemKind::LongChapter, Some(3))
        );
    }

    #[test]
    fn gap_duplicate_and_order_are_reported_not_guessed() {
        let mut other = ch(3, None);
        other.body = "另一章的正文".into();
        let s = [ch(1, None), ch(3, None), other, ch(2, None)];
        let p = run(&s, &new_project(), false);
        let kinds: Vec<_> = p
            .problems
            .iter()
            .map(|p| (p.kind, p.finding.chapter))
            .collect();
        assert_eq!(
            kinds,
            [
                (ProblemKind::Gap, Some(3)),
                (ProblemKind::Duplicate, Some(3)),
                (ProblemKind::OutOfOrder, Some(2))
            ]
        );
        assert_eq!(
            p.problems[0].finding.message,
            "缺第 2 章：第 1 章之后是第 3 章"
        );
        assert_eq!(p.refusal(), Some("E_IMPORT_ORDER"));
        let r = run(&s, &new_project(), true);
        assert_eq!(r.imported, [1, 2, 3, 4]);
        assert_eq!(r.rows[3].source_number, Some(2));
        assert_eq!(r.refusal(), None);
    }

    #[test]
    fn an_existing_project_keeps_its_chapters_and_the_rest_must_continue_it() {
        let target = Target {
            last_completed: 2,
            chapter_files: [1, 2].into(),
            extra_files: ["01-楔子.md".to_string()].into(),
            current_volume: 1,
            new_project: false,
        };
        let s = [extra("楔子"), ch(1, None), ch(2, None), ch(3, None)];
        let p = run(&s, &target, false);
        assert_eq!(
            (p.imported.clone(), p.skipped.clone()),
            (vec![3], vec![1, 2])
        );
        assert_eq!(p.rows[0].action, Action::Skip);
        assert_eq!(p.rows[1].reason, "项目已完成到第 2 章，第 1 章已在项目中");
        assert!(p.problems.is_empty());
        let later = run(&[ch(5, None)], &target, false);
        assert_eq!(
            later.problems[0].finding.message,
            "项目已完成到第 2 章，导入从第 5 章开始：缺第 3–4 章"
        );
        let renum = run(&[ch(5, None), ch(9, None)], &target, true);
        assert_eq!(renum.imported, [3, 4]);
        assert!(renum.problems.is_empty());
    }

    #[test]
    fn empty_chapters_and_backward_volumes_refuse_even_renumbered() {
        let s = [ch(1, Some(2)), ch(2, Some(1))];
        let vols = [
            VolumeHeading {
                volume: 2,
                title: "风起".into(),
                heading: "第二卷 风起".into(),
                file: "书.txt".into(),
                line: 1,
            },
            VolumeHeading {
                volume: 1,
                title: String::new(),
                heading: "第一卷".into(),
                file: "书.txt".into(),
                line: 9,
            },
        ];
        let found = Found {
            volumes: &vols,
            ..Found::default()
        };
        let numbering = Numbering {
            renumber: true,
            start: None,
        };
        let p = plan(&s, &[0, 3], &found, &new_project(), numbering);
        let codes: Vec<_> = p.problems.iter().map(|p| p.finding.code.as_ref()).collect();
        // One empty chapter, not repeated: imported empty under its number, with a warning.
        assert_eq!(codes, ["import/empty", "E_IMPORT_VOLUME"]);
        // An empty chapter whose number comes again (a table of contents) refuses, renumbered
        // or not.
        let mut toc = [ch(1, None), ch(1, None)];
        toc[0].body = String::new();
        let q = plan(&toc, &[0, 3], &Found::default(), &new_project(), numbering);
        assert_eq!(q.refusal(), Some("E_IMPORT_EMPTY"));
        assert_eq!(p.refusal(), Some("E_IMPORT_VOLUME"));
        assert_eq!(
            p.volumes,
            [
                VolumeRange {
                    volume: 2,
                    range: [1, 1],
                    title: Some("风起".into()),
                    heading: Some("第二卷 风起".into()),
                },
                VolumeRange {
                    volume: 1,
                    range: [2, 2],
                    title: None,
                    heading: Some("第一卷".into()),
                }
            ]
        );
    }

    #[test]
    fn volumes_follow_their_headings() {
        let s = [ch(1, Some(1)), ch(2, Some(1)), ch(3, Some(2))];
        let p = run(&s, &new_project(), false);
        let ranges: Vec<_> = p.volumes.iter().map(|v| (v.volume, v.range)).collect();
        assert_eq!(ranges, [(1, [1, 2]), (2, [3, 3])]);
    }

    #[test]
    fn the_state_after_is_what_commits_would_give() {
        use OrchestratorState as S;
        assert_eq!(
            state_after(S::QuickStart, true, 300, Some(300)),
            S::VolReview
        );
        assert_eq!(state_after(S::QuickStart, true, 2, Some(2)), S::QuickStart);
        assert_eq!(state_after(S::Writing, false, 40, Some(50)), S::Writing);
        assert_eq!(state_after(S::Writing, false, 50, Some(50)), S::VolReview);
        assert_eq!(
            state_after(S::VolPlanning, false, 50, Some(50)),
            S::VolPlanning
        );
    }

    #[test]
    fn extra_names_become_safe_file_names() {
        assert_eq!(extra_target(2, "番外/一"), "extras/02-番外一.md");
        assert_eq!(extra_target(12, " "), "extras/12-番外.md");
    }
}
