//! `novel status` (PRD §2.4; `docs/orchestration.md` §4): where the book stands, gathered
//! from the files and never guessed. Tolerant: every file that cannot be read or parsed, and
//! every disagreement between the checkpoint and the chapters on disk, is a listed problem —
//! status is what an author runs when something is wrong, so it never stops at the first.
//!
//! Fast on a long book: each committed chapter's 字数, score, gate decision and storyline come
//! from its pipeline log (one small file per chapter, written at commit); only chapters whose
//! log lacks a figure have their text counted (with the caller's platform counter), their
//! evaluation read, or the changelog / summary consulted. Files are parsed with serde, no JSON
//! Schema is compiled.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;

use novel_core::context::session::state_name;
use novel_core::context::text::summary_parts;
use novel_core::menu::ReviewDue;
use novel_core::model::common::{ForeshadowStatus, GateDecision};
use novel_core::model::settings::DimensionWeights;
use novel_core::model::style::StyleDrift;
use novel_core::model::{
    Checkpoint, CurrentState, ErrorRecord, Evaluation, ForeshadowingGlobal, PendingAction,
    PipelineLog, PipelineStage, Settings, StorylineSchedule, Storylines,
};
use novel_core::next::is_overdue;
use novel_core::pipeline::stage_name;
use novel_core::status::{StorylineRhythm, Trend, headline, storyline_rhythm, trend};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::chapter as tx;
use crate::context::volume_numbers;
use crate::error::StoreError;
use crate::io::read_text;
use crate::layout;
use crate::lock::{self, LockState};
use crate::next::{VolumeSpan, reviews_due, volume_span};
use crate::project::Project;

/// The key of a pipeline log that records the committed chapter's 字数 (written at commit).
pub const LOG_CHARS: &str = "chars";
/// The key of a pipeline log with the score the gate counted.
pub const LOG_GATE_OVERALL: &str = "gate_overall";
/// The key of a pipeline log that says the author accepted the chapter as it was (`--accept`).
pub const LOG_ACCEPTED_BY_AUTHOR: &str = "accepted_by_author";
/// How many recent scores `status` shows (and takes the trend of).
pub const RECENT_SCORES: usize = 5;

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
pub struct VolumeChars {
    pub volume: u32,
    pub chapters: usize,
    pub chars: u64,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Chars {
    /// Platform 字数 of every committed chapter (the `novel count` rule).
    pub total: u64,
    pub per_volume: Vec<VolumeChars>,
    /// Chapters whose 字数 came from counting their text (their log did not record it).
    pub counted_from_text: usize,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ScoredChapter {
    pub chapter: u32,
    pub score: f64,
    pub decision: Option<GateDecision>,
    pub revisions: u32,
    pub force_passed: bool,
    /// How much of the draft's narration StyleRefiner changed (its last `stage refined`), when
    /// measured.
    pub edit_ratio: Option<f64>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Scores {
    /// Mean of every committed chapter's counted score.
    pub average: Option<f64>,
    pub scored_chapters: usize,
    /// The last [`RECENT_SCORES`], oldest first.
    pub recent: Vec<ScoredChapter>,
    pub trend: Option<Trend>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Foreshadowing {
    /// Not resolved.
    pub open: usize,
    /// Short threads past their range (`novel_core::next::is_overdue`), by id.
    pub overdue: Vec<String>,
}

/// The pipeline logs summed; unknown figures stay unknown.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct PipelineSums {
    pub logs: usize,
    pub revisions: u32,
    pub force_passed: usize,
    pub input_tokens: u64,
    pub output_tokens: u64,
    /// Every stage's tokens: its one total (`chapter stage --tokens`, what an Agent result
    /// gives), else its input and output added.
    pub tokens: u64,
    pub duration_ms: u64,
    pub cost_usd: f64,
    /// Chapters with at least one stage whose cost is unknown (the sum is a lower bound).
    pub chapters_without_cost: usize,
    /// What the stages that logged tokens but no cost would bill (`dashboard::estimated_stage_usd`:
    /// PRD prices, a lone total split by the PRD's input:output ratio, no cache reads).
    pub estimated_usd: f64,
    /// Of `chapters_without_cost`, those whose every unknown cost was estimated from tokens.
    pub chapters_estimated: usize,
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
    pub style_drift: Option<StyleDrift>,
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

/// Chapter numbers of `dir/chapter-NNN<suffix>` files, sorted.
fn chapter_numbers(project: &Project, dir: &str, suffix: &str) -> Vec<u32> {
    let mut out: Vec<u32> = fs::read_dir(project.path(dir))
        .map(|r| {
            r.filter_map(|e| e.ok())
                .filter_map(|e| {
                    let name = e.file_name().to_string_lossy().into_owned();
                    novel_core::naming::chapter_in_name(&name, suffix)
                })
                .collect()
        })
        .unwrap_or_default();
    out.sort_unstable();
    out
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

/// What the status (and the reviews) read of one committed chapter.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ChapterFigures {
    pub chars: Option<u64>,
    /// The score the gate counted (the pipeline log's `gate_overall`, else the evaluation's
    /// weighted mean).
    pub score: Option<f64>,
    pub decision: Option<GateDecision>,
    pub revisions: u32,
    pub force_passed: bool,
    pub storyline: Option<String>,
    /// The narration share StyleRefiner changed at its last `stage refined` (the pipeline log's
    /// `edit_ratio`).
    pub edit_ratio: Option<f64>,
}

#[derive(serde::Deserialize)]
struct LightEntry {
    chapter: u32,
    #[serde(default)]
    storyline_id: Option<String>,
}

/// Per committed chapter (`committed`, sorted), its figures and the pipeline logs summed.
pub struct Figures {
    pub chapters: BTreeMap<u32, ChapterFigures>,
    pub pipeline: PipelineSums,
    /// Chapters whose 字数 came from counting their text.
    pub counted_from_text: usize,
}

/// The figures the pipeline logs of `chapters` record (a chapter without a log is skipped), and
/// their sums.
fn log_figures(
    project: &Project,
    chapters: &[u32],
    problems: &mut Problems,
    pricing: Option<&Settings>,
) -> (BTreeMap<u32, ChapterFigures>, PipelineSums) {
    let mut figures = BTreeMap::new();
    let mut pipeline = PipelineSums::default();
    for &n in chapters {
        let Some(log) = load::<PipelineLog>(project, &layout::log_file(n), problems) else {
            continue;
        };
        pipeline.logs += 1;
        pipeline.revisions += log.revisions;
        pipeline.force_passed += usize::from(log.force_passed);
        let mut cost_known = !log.stages.is_empty();
        let mut all_estimated = true;
        for s in &log.stages {
            pipeline.input_tokens += s.input_tokens.unwrap_or(0);
            pipeline.output_tokens += s.output_tokens.unwrap_or(0);
            pipeline.tokens += s
                .extra
                .get(crate::stage::TOTAL_TOKENS)
                .and_then(Value::as_u64)
                .unwrap_or(s.input_tokens.unwrap_or(0) + s.output_tokens.unwrap_or(0));
            pipeline.duration_ms += s.duration_ms.unwrap_or(0);
            match s.extra.get("cost_usd").and_then(Value::as_f64) {
                Some(c) => pipeline.cost_usd += c,
                // A step no agent ran (the gate, a round sent back) that logged nothing costs
                // nothing.
                None if novel_core::cost::stage_agents(&s.name).is_empty()
                    && s.input_tokens.is_none()
                    && s.output_tokens.is_none()
                    && !s.extra.contains_key(crate::stage::TOTAL_TOKENS) => {}
                None => {
                    cost_known = false;
                    match pricing.and_then(|p| crate::dashboard::estimated_stage_usd(s, p)) {
                        Some(e) => pipeline.estimated_usd += e,
                        None => all_estimated = false,
                    }
                }
            }
        }
        pipeline.chapters_without_cost += usize::from(!cost_known);
        pipeline.chapters_estimated += usize::from(!cost_known && all_estimated);
        figures.insert(
            n,
            ChapterFigures {
                chars: log.extra.get(LOG_CHARS).and_then(Value::as_u64),
                score: log.extra.get(LOG_GATE_OVERALL).and_then(Value::as_f64),
                decision: log.gate_decision,
                revisions: log.revisions,
                force_passed: log.force_passed,
                storyline: log.storyline_id.clone(),
                edit_ratio: log
                    .stages
                    .iter()
                    .rev()
                    .find_map(|s| s.extra.get(crate::stage::EDIT_RATIO))
                    .and_then(|r| r.get("narration"))
                    .and_then(Value::as_f64),
            },
        );
    }
    (figures, pipeline)
}

/// Reads each committed chapter's figures: its pipeline log first (written at commit; with
/// `all_logs` every log is read and summed, else only those of `committed`), then
/// for what the log lacks the chapter text (`count`: the platform 字数), its evaluation, the
/// changelog and its summary. Unreadable files become problems.
fn chapter_figures(
    project: &Project,
    committed: &[u32],
    count: &dyn Fn(&str) -> usize,
    problems: &mut Problems,
    all_logs: bool,
    weights: &DimensionWeights,
    pricing: Option<&Settings>,
) -> Figures {
    let committed_set: BTreeSet<u32> = committed.iter().copied().collect();
    // The pipeline logs first; status sums every log, a review reads only its chapters'.
    let logs = if all_logs {
        chapter_numbers(project, "logs", "-log.json")
    } else {
        committed.to_vec()
    };
    let (mut figures, pipeline) = log_figures(project, &logs, problems, pricing);
    let mut counted_from_text = 0usize;
    // Then, for committed chapters whose log lacks a figure, the files themselves.
    let mut needs_storyline = Vec::new();
    for &n in committed {
        let f = figures.entry(n).or_default();
        if f.chars.is_none() {
            match read_text(&project.path(&layout::chapter_file(n))) {
                Ok(t) => {
                    f.chars = Some(count(&t) as u64);
                    counted_from_text += 1;
                }
                Err(e) => problems.push(format!("{} 无法读取：{e}", layout::chapter_file(n))),
            }
        }
        if f.score.is_none() {
            let rel = layout::evaluation_file(n);
            if let Some(e) = load::<Evaluation>(project, &rel, problems) {
                f.score = Some(novel_core::gate::weighted_overall(&e, weights));
            }
        }
        if f.storyline.is_none() {
            needs_storyline.push(n);
        }
    }
    if !needs_storyline.is_empty() {
        if let Ok(text) = read_text(&project.path(layout::CHANGELOG)) {
            for line in text.lines().filter(|l| !l.trim().is_empty()) {
                if let Ok(e) = serde_json::from_str::<LightEntry>(line)
                    && let Some(f) = figures.get_mut(&e.chapter)
                    && f.storyline.is_none()
                    && committed_set.contains(&e.chapter)
                {
                    f.storyline = e.storyline_id;
                }
            }
        }
        for n in needs_storyline {
            let f = figures.entry(n).or_default();
            if f.storyline.is_none()
                && let Ok(t) = read_text(&project.path(&layout::summary_file(n)))
            {
                f.storyline = summary_parts(&t).storyline;
            }
        }
    }

    Figures {
        chapters: figures,
        pipeline,
        counted_from_text,
    }
}

/// `chapter_figures` for the reviews: the chapters of `committed`, problems listed.
pub fn figures_of(
    project: &Project,
    committed: &[u32],
    count: &dyn Fn(&str) -> usize,
    weights: &DimensionWeights,
) -> (BTreeMap<u32, ChapterFigures>, Vec<String>) {
    let mut problems = Problems::default();
    // The reviews read no cost: nothing is priced.
    let f = chapter_figures(
        project,
        committed,
        count,
        &mut problems,
        false,
        weights,
        None,
    );
    (f.chapters, problems.0)
}

/// Committed chapter numbers (`chapters/chapter-NNN.md`), sorted.
pub fn committed_chapters(project: &Project) -> Vec<u32> {
    chapter_numbers(project, "chapters", ".md")
}

/// Gathers the status. `count` is the platform 字数 of a chapter's text (`novel_text::count`).
pub fn gather(project: &Project, count: &dyn Fn(&str) -> usize) -> Status {
    let mut problems = Problems::default();
    let settings = load_settings(project, &mut problems);
    let cp = read_checkpoint(project, &mut problems);
    let committed = chapter_numbers(project, "chapters", ".md");
    let journal = interrupted_commit(project, &mut problems);
    let last = cp
        .as_ref()
        .map_or(committed.last().copied().unwrap_or(0), |c| {
            c.last_completed_chapter
        });
    if let Some(c) = &cp {
        let first = novel_core::import::first_chapter(&settings);
        checkpoint_against_chapters(c, first, &committed, journal.is_some(), &mut problems);
    }
    current_state_check(project, &mut problems);
    let weights = &settings.gate.weights;
    let figures = chapter_figures(
        project,
        &committed,
        count,
        &mut problems,
        true,
        weights,
        Some(&settings),
    );
    let current = cp.as_ref().map(|c| c.volume());
    let spans = volume_spans(project, current, &mut problems);
    let span = current.and_then(|v| spans.iter().find(|(w, _)| *w == v).map(|(_, s)| s.clone()));
    let chars = chars_per_volume(&spans, current, &committed, &figures);
    let scores = score_summary(&committed, &figures.chapters);
    let span_start = span.as_ref().map(|s| s.range[0]);
    let rhythm = storyline_status(
        project,
        current,
        &committed,
        &figures,
        last,
        span_start,
        &mut problems,
    );
    let foreshadowing = foreshadowing_summary(project, last, &mut problems);
    let skipped = skipped_chapters(project, &mut problems);
    let lock = lock::status(project, settings.lock.stale_after()).redacted();
    let style_drift = load::<StyleDrift>(project, layout::STYLE_DRIFT, &mut problems);
    let due = cp
        .as_ref()
        .map_or_else(Vec::new, |c| reviews_due(project, c));
    let span_end = span.as_ref().map(|s| s.range[1]);
    let open = foreshadowing.open;
    Status {
        headline: headline(current, last, span_end, chars.total, scores.average, open),
        title: settings.title.clone(),
        state: cp.as_ref().map(|c| c.orchestrator_state),
        state_label: cp.as_ref().map(|c| state_name(c.orchestrator_state)),
        stage: cp.as_ref().and_then(|c| c.pipeline_stage),
        stage_label: stage_name(cp.as_ref().and_then(|c| c.pipeline_stage)),
        volume: volume_status(current, span.as_ref(), last),
        last_completed_chapter: cp.as_ref().map(|c| c.last_completed_chapter),
        inflight: cp.as_ref().and_then(inflight_of),
        error: cp.as_ref().and_then(|c| c.error.clone()),
        chars,
        average_score: scores.average,
        scores,
        storylines: rhythm,
        foreshadowing,
        pending_actions: cp
            .as_ref()
            .map(|c| c.pending_actions.clone())
            .unwrap_or_default(),
        lock,
        interrupted_commit: journal,
        style_drift,
        pipeline: figures.pipeline,
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

/// The span of every known volume (and of the `current` one even without a directory), for
/// the current volume's range and 字数 per volume.
fn volume_spans(
    project: &Project,
    current: Option<u32>,
    problems: &mut Problems,
) -> Vec<(u32, VolumeSpan)> {
    let mut span_problems = Vec::new();
    let mut spans: Vec<(u32, VolumeSpan)> = Vec::new();
    let mut vols = volume_numbers(project);
    if let Some(v) = current
        && !vols.contains(&v)
    {
        vols.push(v);
        vols.sort_unstable();
    }
    for v in vols {
        if let Some(s) = volume_span(project, v, &mut span_problems) {
            spans.push((v, s));
        }
    }
    problems.extend(span_problems);
    spans
}

/// 字数 in total and per volume (a chapter belongs to the last volume starting at or before
/// it).
fn chars_per_volume(
    spans: &[(u32, VolumeSpan)],
    current: Option<u32>,
    committed: &[u32],
    figures: &Figures,
) -> Chars {
    let volume_of = |c: u32| -> u32 {
        spans
            .iter()
            .rev()
            .find(|(_, s)| s.range[0] <= c)
            .map(|(v, _)| *v)
            .unwrap_or(if spans.is_empty() {
                current.unwrap_or(1)
            } else {
                1
            })
    };
    let mut per_volume: BTreeMap<u32, (usize, u64)> = BTreeMap::new();
    let mut total = 0u64;
    for &n in committed {
        let f = &figures.chapters[&n];
        let chars = f.chars.unwrap_or(0);
        total += chars;
        let e = per_volume.entry(volume_of(n)).or_default();
        e.0 += 1;
        e.1 += chars;
    }
    let per_volume: Vec<VolumeChars> = per_volume
        .into_iter()
        .map(|(volume, (chapters, chars))| VolumeChars {
            volume,
            chapters,
            chars,
        })
        .collect();
    Chars {
        total,
        per_volume,
        counted_from_text: figures.counted_from_text,
    }
}

/// The scores of the committed chapters: average, the recent ones and their trend.
fn score_summary(committed: &[u32], figures: &BTreeMap<u32, ChapterFigures>) -> Scores {
    let scored: Vec<ScoredChapter> = committed
        .iter()
        .filter_map(|n| {
            let f = &figures[n];
            f.score.map(|score| ScoredChapter {
                chapter: *n,
                score,
                decision: f.decision,
                revisions: f.revisions,
                force_passed: f.force_passed,
                edit_ratio: f.edit_ratio,
            })
        })
        .collect();
    let average = (!scored.is_empty())
        .then(|| scored.iter().map(|s| s.score).sum::<f64>() / scored.len() as f64);
    let recent: Vec<ScoredChapter> = scored
        .iter()
        .skip(scored.len().saturating_sub(RECENT_SCORES))
        .cloned()
        .collect();
    Scores {
        average,
        scored_chapters: scored.len(),
        trend: trend(&recent.iter().map(|s| s.score).collect::<Vec<_>>()),
        recent,
    }
}

/// Storylines and their rhythm against the current volume's schedule (`span_start` = the
/// volume's first chapter).
fn storyline_status(
    project: &Project,
    current: Option<u32>,
    committed: &[u32],
    figures: &Figures,
    last: u32,
    span_start: Option<u32>,
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
    let appearances: BTreeMap<u32, String> = committed
        .iter()
        .filter_map(|n| figures.chapters[n].storyline.clone().map(|s| (*n, s)))
        .collect();
    storylines.as_ref().map_or_else(Vec::new, |s| {
        storyline_rhythm(s, schedule.as_ref(), &appearances, last, span_start)
    })
}

/// Open foreshadowing, and the ids overdue at chapter `last` (sorted).
fn foreshadowing_summary(project: &Project, last: u32, problems: &mut Problems) -> Foreshadowing {
    let mut foreshadowing = Foreshadowing {
        open: 0,
        overdue: Vec::new(),
    };
    if let Some(g) = load::<ForeshadowingGlobal>(project, layout::FORESHADOWING_GLOBAL, problems) {
        for f in &g.foreshadowing {
            if f.status != ForeshadowStatus::Resolved {
                foreshadowing.open += 1;
            }
            if is_overdue(f.scope, f.status, f.target_resolve_range, last) {
                foreshadowing.overdue.push(f.id.clone());
            }
        }
        foreshadowing.overdue.sort();
    }
    foreshadowing
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
