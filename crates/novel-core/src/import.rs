//! `novel import` (导入已有书稿): the plan of an import — what a split manuscript holds, what is
//! wrong with its numbering, and what lands where in the project. Pure: the text is decoded and
//! split by `novel_text::chapters`, the source read and the plan written by `novel-store`.
//!
//! Numbering problems are reported, never guessed: a gap, a duplicated or an out-of-order
//! chapter number refuses the import unless the author asks to number by order of appearance
//! (`--renumber`); an empty chapter (often a table of contents split as chapters) and volumes
//! going backwards refuse it either way. Nothing already in the project is overwritten: a
//! chapter at or below the last completed one, or whose file exists, is skipped and listed.

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
}

/// A volume heading of the manuscript (`第一卷 风起青萍`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct VolumeHeading {
    pub volume: u32,
    pub title: String,
    pub file: String,
    pub line: usize,
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

/// The chapters of one volume that the import writes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct VolumeRange {
    pub volume: u32,
    pub range: [u32; 2],
    /// The volume heading's title, if the manuscript had one.
    pub title: Option<String>,
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
}

impl Plan {
    /// The code that refuses the import, if any: volume problems first (nothing fixes them
    /// but the source), then empty chapters, then numbering (which `--renumber` fixes).
    pub fn refusal(&self) -> Option<&'static str> {
        ["E_IMPORT_VOLUME", "E_IMPORT_EMPTY", "E_IMPORT_ORDER"]
            .into_iter()
            .find(|code| self.problems.iter().any(|p| p.finding.code == *code))
    }
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
    volumes: &[VolumeHeading],
    target: &Target,
    renumber: bool,
) -> Plan {
    let mut problems = content_problems(sections, chars, volumes, target);
    if !renumber {
        problems.extend(numbering_problems(sections));
    }
    let numbers = numbering(sections, target, renumber);
    let mut rows = Vec::with_capacity(sections.len());
    let mut extra_index = 0;
    for ((s, &c), n) in sections.iter().zip(chars).zip(&numbers) {
        let (target_file, skip_reason) = match (s.kind, n) {
            (SectionKind::Chapter, Some(n)) => {
                (crate::naming::chapter_file(*n), chapter_skip(*n, target))
            }
            _ => {
                extra_index += 1;
                let file = extra_target(extra_index, &s.name);
                let exists = file
                    .rsplit('/')
                    .next()
                    .is_some_and(|f| target.extra_files.contains(f));
                let why = exists.then(|| format!("{file} 已存在"));
                (file, why)
            }
        };
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
            action: if skip_reason.is_some() {
                Action::Skip
            } else {
                Action::Import
            },
            target: target_file,
            reason: skip_reason.unwrap_or_default(),
        });
    }
    let imported = chapters_of(&rows, Action::Import);
    // Gaps inside the manuscript are reported once, by the numbering check.
    let numbered_ok = problems.iter().all(|p| p.finding.code != "E_IMPORT_ORDER");
    if numbered_ok && (!renumber || !target.new_project) {
        problems.extend(continuation_problem(&imported, &rows, target));
    }
    let volumes = volume_ranges(&rows, volumes, target);
    Plan {
        skipped: chapters_of(&rows, Action::Skip),
        imported,
        problems,
        volumes,
        source_chars: chars.iter().sum(),
        rows,
    }
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
/// after the project's last chapter.
fn numbering(sections: &[Section], target: &Target, renumber: bool) -> Vec<Option<u32>> {
    let mut next = target.last_completed;
    sections
        .iter()
        .map(|s| match s.kind {
            SectionKind::Chapter if renumber => {
                next += 1;
                Some(next)
            }
            SectionKind::Chapter => s.number,
            _ => None,
        })
        .collect()
}

fn problem(kind: ProblemKind, code: &'static str, s: &Section, message: String) -> Problem {
    Problem::error(kind, code, &s.file, s.line, s.number, message)
}

/// Gaps, duplicates and numbers going backwards, in the manuscript itself.
fn numbering_problems(sections: &[Section]) -> Vec<Problem> {
    let mut out = Vec::new();
    let mut seen: BTreeSet<u32> = BTreeSet::new();
    let mut max: Option<u32> = None;
    for s in sections.iter().filter(|s| s.kind == SectionKind::Chapter) {
        let Some(n) = s.number else { continue };
        if !seen.insert(n) {
            out.push(problem(
                ProblemKind::Duplicate,
                "E_IMPORT_ORDER",
                s,
                format!("第 {n} 章重复出现"),
            ));
            continue;
        }
        match max {
            Some(m) if n < m => out.push(problem(
                ProblemKind::OutOfOrder,
                "E_IMPORT_ORDER",
                s,
                format!("第 {n} 章出现在第 {m} 章之后（顺序颠倒）"),
            )),
            Some(m) if n > m + 1 => out.push(problem(
                ProblemKind::Gap,
                "E_IMPORT_ORDER",
                s,
                format!("缺{}：第 {m} 章之后是第 {n} 章", missing(m + 1, n - 1)),
            )),
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

/// The imported chapters must continue the project: the first is last completed + 1, and
/// none is missing among them.
fn continuation_problem(imported: &[u32], rows: &[Row], target: &Target) -> Option<Problem> {
    let first = *imported.iter().min()?;
    let expected = target.last_completed + 1;
    let mut want = expected;
    for n in imported.iter().copied().collect::<BTreeSet<_>>() {
        if n != want {
            let row = rows.iter().find(|r| r.chapter == Some(n))?;
            let message = if n == first {
                format!(
                    "项目已完成到第 {} 章，导入从第 {first} 章开始：缺{}",
                    target.last_completed,
                    missing(expected, first - 1)
                )
            } else {
                format!("导入的章节不连续：缺{}", missing(want, n - 1))
            };
            return Some(Problem::error(
                ProblemKind::Gap,
                "E_IMPORT_ORDER",
                &row.file,
                row.line,
                Some(n),
                message,
            ));
        }
        want = n + 1;
    }
    None
}

/// Empty chapters; volumes going backwards; and, into an existing project, chapters of a volume
/// before its current one.
fn content_problems(
    sections: &[Section],
    chars: &[usize],
    volumes: &[VolumeHeading],
    target: &Target,
) -> Vec<Problem> {
    let mut out = Vec::new();
    for (s, &c) in sections.iter().zip(chars) {
        if s.kind == SectionKind::Chapter && c == 0 {
            let n = s.number.map(|n| format!("第 {n} 章")).unwrap_or_default();
            out.push(problem(
                ProblemKind::Empty,
                "E_IMPORT_EMPTY",
                s,
                format!("{n}「{}」没有正文", s.title),
            ));
        }
    }
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
        }
    }

    fn run(sections: &[Section], target: &Target, renumber: bool) -> Plan {
        let chars = vec![2; sections.len()];
        plan(sections, &chars, &[], target, renumber)
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
                title: None
            }]
        );
        assert_eq!(p.source_chars, 8);
        assert_eq!(p.refusal(), None);
    }

    #[test]
    fn gap_duplicate_and_order_are_reported_not_guessed() {
        let s = [ch(1, None), ch(3, None), ch(3, None), ch(2, None)];
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
                file: "书.txt".into(),
                line: 1,
            },
            VolumeHeading {
                volume: 1,
                title: String::new(),
                file: "书.txt".into(),
                line: 9,
            },
        ];
        let p = plan(&s, &[0, 3], &vols, &new_project(), true);
        let codes: Vec<_> = p.problems.iter().map(|p| p.finding.code.as_ref()).collect();
        assert_eq!(codes, ["E_IMPORT_EMPTY", "E_IMPORT_VOLUME"]);
        assert_eq!(p.refusal(), Some("E_IMPORT_VOLUME"));
        assert_eq!(
            p.volumes,
            [
                VolumeRange {
                    volume: 2,
                    range: [1, 1],
                    title: Some("风起".into())
                },
                VolumeRange {
                    volume: 1,
                    range: [2, 2],
                    title: None
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
