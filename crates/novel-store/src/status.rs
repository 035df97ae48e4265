//! `novel status` (PRD §2.4; `docs/orchestration.md` §4): where the book stands, gathered
//! from the files and never guessed. Tolerant: every file that cannot be read or parsed, and
//! every disagreement between the checkpoint and the chapters on disk, is a listed problem —
//! status is what an author runs when something is wrong, so it never stops at the first.
//!
//! The book's figures (字数, scores, cost and tokens, foreshadowing counts, the style drift
//! verdict, the headline) are [`crate::figures`]'s, the same the dashboard, the reviews and
//! `novel next` read; this module adds what only status shows (the state machine, the lock,
//! the storyline rhythm, the problems). Files are parsed with serde, no JSON Schema is compiled.
//!
//! Layer: views (read only). It imports the derived facts, never another view.

use std::collections::{BTreeMap, BTreeSet};

use novel_core::context::session::state_name;
use novel_core::menu::ReviewDue;
use novel_core::model::style::StyleDrift;
use novel_core::model::{
    Checkpoint, CurrentState, ErrorRecord, PendingAction, PipelineStage, Settings,
    StorylineSchedule, Storylines,
};
use novel_core::pipeline::stage_name;
use novel_core::status::{StorylineRhythm, storyline_rhythm};
use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::chapter as tx;
use crate::error::StoreError;
use crate::figures::{self, BookFigures, DriftFigure, TextRules, Wanted};
use crate::io::read_text;
use crate::layout;
use crate::lock::{self, LockState};
use crate::periodic::reviews_due;
use crate::project::Project;
use novel_core::plan::VolumeSpan;

pub use crate::figures::{
    Chars, Foreshadowing, LOG_ACCEPTED_BY_AUTHOR, LOG_CHARS, LOG_GATE_OVERALL, PipelineSums,
    RECENT_SCORES, ScoredChapter, Scores, VolumeChars,
};

/// The current volume as status sees it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct VolumeStatus {
    pub current: Option<u32>,
    pub range: Option<[u32; 2]>,
    pub range_source: Option<&'static str>,
    /// The last completed chapter is past the volume's planned end (`第51/50章（超出）`).
    pub over_plan: bool,
}

/// The chapter in flight.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Inflight {
    pub chapter: u32,
    pub stage: Option<PipelineStage>,
    pub stage_label: &'static str,
    pub revision_count: u32,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Reviews {
    pub due: Vec<ReviewDue>,
}

/// Everything `novel status` reports (its `--json` `data`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Status {
    pub headline: String,
    pub title: Option<String>,
    pub state: Option<novel_core::model::OrchestratorState>,
    pub state_label: Option<&'static str>,
    pub stage: Option<PipelineStage>,
    pub stage_label: &'static str,
    pub volume: VolumeStatus,
    pub last_completed_chapter: Option<u32>,
    pub inflight: Option<Inflight>,
    /// Why the orchestrator is in ERROR_RETRY.
    pub error: Option<ErrorRecord>,
    pub chars: Chars,
    pub scores: Scores,
    pub storylines: Vec<StorylineRhythm>,
    pub foreshadowing: Foreshadowing,
    pub pending_actions: Vec<PendingAction>,
    /// The lock (`state` free | held | stale), its token removed ([`LockState::redacted`]).
    pub lock: LockState,
    pub interrupted_commit: Option<u32>,
    /// `style-drift.json` as recorded (the correction the writer follows).
    pub style_drift: Option<StyleDrift>,
    /// The style drift verdict over the last chapters ([`crate::figures::drift`]).
    pub drift: DriftFigure,
    pub pipeline: PipelineSums,
    pub reviews: Reviews,
    pub skipped_chapters: Vec<u32>,
    pub recommend_rebuild: bool,
    /// Chapters on disk (`chapters/chapter-NNN.md`).
    pub chapters_committed: usize,
    /// Same as `scores.average` (kept for older readers).
    pub average_score: Option<f64>,
    pub checkpoint: Option<Checkpoint>,
    /// Files that could not be read or parsed, and disagreements between them.
    pub problems: Vec<String>,
}

/// Problems, each once, in the order found.
#[derive(Default)]
struct Problems(Vec<String>);

impl Problems {
    fn push(&mut self, p: String) {
        if !self.0.contains(&p) {
            self.0.push(p);
        }
    }

    fn extend(&mut self, ps: Vec<String>) {
        for p in ps {
            self.push(p);
        }
    }
}

/// A file: `None` when absent; a problem when unreadable or not `T`.
fn load<T: DeserializeOwned>(project: &Project, rel: &str, problems: &mut Problems) -> Option<T> {
    let text = match read_text(&project.path(rel)) {
        Ok(t) => t,
        Err(StoreError::Io { source, .. }) if source.kind() == std::io::ErrorKind::NotFound => {
            return None;
        }
        Err(e) => {
            problems.push(format!("{rel} 无法读取：{e}"));
            return None;
        }
    };
    match serde_json::from_str(&text) {
        Ok(v) => Some(v),
        Err(e) => {
            problems.push(format!("{rel} 无法解析：{e}"));
            None
        }
    }
}

/// "第 3、5、7 章" with at most ten numbers shown.
fn chapter_list(ns: &[u32]) -> String {
    let shown: Vec<String> = ns.iter().take(10).map(u32::to_string).collect();
    if ns.len() > 10 {
        format!("第 {} 等 {} 章", shown.join("、"), ns.len())
    } else {
        format!("第 {} 章", shown.join("、"))
    }
}

/// Committed chapter numbers (`chapters/chapter-NNN.md`), sorted.
pub fn committed_chapters(project: &Project) -> Vec<u32> {
    crate::figures::committed_chapters(project)
}

/// Gathers the status; `rules` measure the chapter texts (`novel-text`'s).
pub fn gather(project: &Project, rules: &TextRules<'_>) -> Status {
    let mut problems = Problems::default();
    let settings = load_settings(project, &mut problems);
    let cp = read_checkpoint(project, &mut problems);
    let journal = interrupted_commit(project, &mut problems);
    let book = figures::gather(project, &settings, cp.as_ref(), rules, Wanted::default());
    let committed: Vec<u32> = book.chapters.iter().map(|f| f.chapter).collect();
    if let Some(c) = &cp {
        let first = novel_core::import::first_chapter(&settings);
        checkpoint_against_chapters(c, first, &committed, journal.is_some(), &mut problems);
    }
    current_state_check(project, &mut problems);
    problems.extend(book.problems.clone());
    let current = cp.as_ref().map(|c| c.volume());
    let span = current.and_then(|v| book.volumes.span(v).cloned());
    let rhythm = storyline_status(project, current, &book, span.as_ref(), &mut problems);
    let skipped = skipped_chapters(project, &mut problems);
    let lock = lock::status(project, settings.lock.stale_after()).redacted();
    let style_drift = load::<StyleDrift>(project, layout::STYLE_DRIFT, &mut problems);
    let due = cp
        .as_ref()
        .map_or_else(Vec::new, |c| reviews_due(project, c));
    Status {
        headline: book.headline,
        title: settings.title.clone(),
        state: cp.as_ref().map(|c| c.orchestrator_state),
        state_label: cp.as_ref().map(|c| state_name(c.orchestrator_state)),
        stage: cp.as_ref().and_then(|c| c.pipeline_stage),
        stage_label: stage_name(cp.as_ref().and_then(|c| c.pipeline_stage)),
        volume: volume_status(current, span.as_ref(), book.last_completed),
        last_completed_chapter: cp.as_ref().map(|c| c.last_completed_chapter),
        inflight: cp.as_ref().and_then(inflight_of),
        error: cp.as_ref().and_then(|c| c.error.clone()),
        chars: book.chars,
        average_score: book.scores.average,
        scores: book.scores,
        storylines: rhythm,
        foreshadowing: book.foreshadowing,
        pending_actions: cp
            .as_ref()
            .map(|c| c.pending_actions.clone())
            .unwrap_or_default(),
        lock,
        interrupted_commit: journal,
        style_drift,
        drift: book.drift,
        pipeline: book.pipeline,
        reviews: Reviews { due },
        recommend_rebuild: novel_core::ops::recommend_rebuild(&skipped),
        skipped_chapters: skipped,
        chapters_committed: committed.len(),
        checkpoint: cp,
        problems: problems.0,
    }
}

/// The settings, or the defaults (with a problem) when they cannot be loaded.
fn load_settings(project: &Project, problems: &mut Problems) -> Settings {
    crate::settings::load(project).unwrap_or_else(|e| {
        problems.push(e.to_string());
        Settings::default()
    })
}

/// The checkpoint, or `None` (with a problem) when it cannot be read or parsed.
fn read_checkpoint(project: &Project, problems: &mut Problems) -> Option<Checkpoint> {
    match read_text(&project.path(layout::CHECKPOINT)) {
        Ok(t) => match serde_json::from_str(&t) {
            Ok(cp) => Some(cp),
            Err(e) => {
                problems.push(format!("断点文件 .checkpoint.json 无法解析：{e}"));
                None
            }
        },
        Err(e) => {
            problems.push(format!("断点文件 .checkpoint.json 无法读取：{e}"));
            None
        }
    }
}

/// The chapter of an interrupted commit (the journal's), if any.
fn interrupted_commit(project: &Project, problems: &mut Problems) -> Option<u32> {
    match tx::read_journal(project) {
        Ok(j) => j.map(|j| j.chapter),
        Err(e) => {
            problems.push(format!("提交日志无法读取：{e}"));
            None
        }
    }
}

/// The checkpoint against the chapters on disk: chapters it counts as done but missing (from
/// the project's first chapter: 1, or where an imported later part of a book starts), and
/// chapters beyond it (expected only while a commit is interrupted).
fn checkpoint_against_chapters(
    c: &Checkpoint,
    first: u32,
    committed: &[u32],
    interrupted: bool,
    problems: &mut Problems,
) {
    let committed_set: BTreeSet<u32> = committed.iter().copied().collect();
    let missing: Vec<u32> = (first..=c.last_completed_chapter)
        .filter(|n| !committed_set.contains(n))
        .collect();
    let recover = if interrupted {
        "（有被中断的提交：先运行 novel chapter recover）"
    } else {
        ""
    };
    if !missing.is_empty() {
        problems.push(format!(
            "断点记录已完成到第 {} 章，但 chapters/ 里没有{}{recover}",
            c.last_completed_chapter,
            chapter_list(&missing)
        ));
    }
    let extra: Vec<u32> = committed
        .iter()
        .copied()
        .filter(|n| *n > c.last_completed_chapter)
        .collect();
    if !extra.is_empty() && !interrupted {
        problems.push(format!(
            "chapters/ 里有{}，但断点只记录到第 {} 章",
            chapter_list(&extra),
            c.last_completed_chapter
        ));
    }
}

/// The state file must be readable and parse.
fn current_state_check(project: &Project, problems: &mut Problems) {
    if let Err(e) = read_text(&project.path(layout::CURRENT_STATE))
        .map_err(|e| e.to_string())
        .and_then(|t| {
            serde_json::from_str::<CurrentState>(&t).map_err(|e| format!("无法解析：{e}"))
        })
    {
        problems.push(format!("状态文件 {} {e}", layout::CURRENT_STATE));
    }
}

/// Storylines and their rhythm against the current volume's schedule (from its first chapter).
fn storyline_status(
    project: &Project,
    current: Option<u32>,
    book: &BookFigures,
    span: Option<&VolumeSpan>,
    problems: &mut Problems,
) -> Vec<StorylineRhythm> {
    let storylines = load::<Storylines>(project, layout::STORYLINES, problems);
    let schedule = current.and_then(|v| {
        load::<StorylineSchedule>(
            project,
            &format!("{}/storyline-schedule.json", layout::volume_dir(v)),
            problems,
        )
    });
    let appearances: BTreeMap<u32, String> = book
        .chapters
        .iter()
        .filter_map(|f| f.storyline.clone().map(|s| (f.chapter, s)))
        .collect();
    storylines.as_ref().map_or_else(Vec::new, |s| {
        storyline_rhythm(
            s,
            schedule.as_ref(),
            &appearances,
            book.last_completed,
            span.map(|s| s.range[0]),
        )
    })
}

/// The chapters whose deltas were skipped (the changelog says which).
fn skipped_chapters(project: &Project, problems: &mut Problems) -> Vec<u32> {
    tx::skipped_deltas(project).unwrap_or_else(|e| {
        problems.push(format!("变更日志有问题：{e}"));
        Vec::new()
    })
}

/// The current volume, its span and whether the book has written past it.
fn volume_status(current: Option<u32>, span: Option<&VolumeSpan>, last: u32) -> VolumeStatus {
    VolumeStatus {
        current,
        range: span.map(|s| s.range),
        range_source: span.map(|s| s.range_source),
        over_plan: span.is_some_and(|s| last > s.range[1]),
    }
}

/// The chapter in flight, as the checkpoint records it.
fn inflight_of(c: &Checkpoint) -> Option<Inflight> {
    c.inflight_chapter.map(|n| Inflight {
        chapter: n,
        stage: c.pipeline_stage,
        stage_label: stage_name(c.pipeline_stage),
        revision_count: c.revision_count,
    })
}
