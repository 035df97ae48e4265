//! One committed chapter's figures, read once: its pipeline log (written at commit: 字数, the
//! gate's score and decision, revisions, storyline, dates, each stage's usage), then for what
//! the log lacks its text (字数 counted by the caller's rule), its evaluation (the score the gate
//! would count; the eight dimensions when wanted), the changelog and its summary (storyline).

use std::collections::{BTreeMap, BTreeSet};

use novel_core::model::common::GateDecision;
use novel_core::model::{Evaluation, PipelineLog, Settings};
use serde::de::DeserializeOwned;
use serde_json::Value;

use super::usage::{StageUsage, stage_usage};
use super::{LOG_CHARS, LOG_GATE_OVERALL};
use crate::error::StoreError;
use crate::io::{read_text, read_text_alone};
use crate::layout;
use crate::project::Project;

/// Whether a chapter's pipeline log (or evaluation) could be used.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LogState {
    Read,
    Missing,
    Unreadable,
}

/// One committed chapter.
#[derive(Debug, Clone, PartialEq)]
pub struct ChapterFigures {
    pub chapter: u32,
    /// [`crate::volumes::Volumes::volume_of`].
    pub volume: u32,
    /// 字数: the log's, else the text counted; `None` when neither could be read.
    pub chars: Option<u64>,
    /// The score the gate counted (the log's `gate_overall`, else the evaluation's weighted
    /// mean).
    pub score: Option<f64>,
    /// The evaluation's eight scores in the order of `DIMENSIONS` (only when asked for).
    pub dimensions: Option<[f64; 8]>,
    pub decision: Option<GateDecision>,
    pub revisions: u32,
    pub force_passed: bool,
    pub storyline: Option<String>,
    /// The narration share StyleRefiner changed at its last `stage refined`.
    pub edit_ratio: Option<f64>,
    /// `YYYY-MM-DD` of the last dated line of its pipeline log.
    pub date: Option<String>,
    pub stages: Vec<StageUsage>,
    pub log: LogState,
    pub evaluation: LogState,
}

impl ChapterFigures {
    fn new(chapter: u32, volume: u32) -> ChapterFigures {
        ChapterFigures {
            chapter,
            volume,
            chars: None,
            score: None,
            dimensions: None,
            decision: None,
            revisions: 0,
            force_passed: false,
            storyline: None,
            edit_ratio: None,
            date: None,
            stages: Vec::new(),
            log: LogState::Missing,
            evaluation: LogState::Missing,
        }
    }

    /// The chapter's cost: its stages' sum, `None` when no stage has a cost.
    pub fn usd(&self) -> Option<f64> {
        let known: Vec<f64> = self.stages.iter().filter_map(|s| s.usd).collect();
        (!known.is_empty()).then(|| known.iter().sum())
    }

    /// The chapter's tokens (every stage's).
    pub fn tokens(&self) -> u64 {
        self.stages.iter().map(|s| s.tokens).sum()
    }
}

/// A file: `Ok(None)` when absent; `Err(problem)` when unreadable or not `T`.
pub(super) fn load<T: DeserializeOwned>(project: &Project, rel: &str) -> Result<Option<T>, String> {
    load_with(project, rel, read_text)
}

/// [`load`] with `read` (a chapter's own files, which no other part of a command reads, are
/// read with [`read_text_alone`]).
fn load_with<T: DeserializeOwned>(
    project: &Project,
    rel: &str,
    read: fn(&std::path::Path) -> Result<String, StoreError>,
) -> Result<Option<T>, String> {
    let text = match read(&project.path(rel)) {
        Ok(t) => t,
        Err(StoreError::Io { source, .. }) if source.kind() == std::io::ErrorKind::NotFound => {
            return Ok(None);
        }
        Err(e) => return Err(format!("{rel} 无法读取：{e}")),
    };
    serde_json::from_str(&text)
        .map(Some)
        .map_err(|e| format!("{rel} 无法解析：{e}"))
}

/// The date part of an ISO timestamp (`2026-01-05T…` → `2026-01-05`).
pub(super) fn date_of(ts: &str) -> Option<String> {
    let d = ts.get(..10)?;
    let ok = d.bytes().enumerate().all(|(i, b)| {
        if i == 4 || i == 7 {
            b == b'-'
        } else {
            b.is_ascii_digit()
        }
    });
    ok.then(|| d.to_string())
}

/// The last dated line of a log (a stage's `at`, else `started_at`).
fn log_date(log: &PipelineLog) -> Option<String> {
    log.stages
        .iter()
        .rev()
        .filter_map(|s| s.extra.get("at").and_then(Value::as_str))
        .find_map(date_of)
        .or_else(|| log.started_at.as_deref().and_then(date_of))
}

/// What a pipeline log records of its chapter.
fn from_log(f: &mut ChapterFigures, log: &PipelineLog, settings: &Settings) {
    f.log = LogState::Read;
    f.chars = log.extra.get(LOG_CHARS).and_then(Value::as_u64);
    f.score = log.extra.get(LOG_GATE_OVERALL).and_then(Value::as_f64);
    f.decision = log.gate_decision;
    f.revisions = log.revisions;
    f.force_passed = log.force_passed;
    f.storyline = log.storyline_id.clone();
    f.date = log_date(log);
    f.edit_ratio = log
        .stages
        .iter()
        .rev()
        .find_map(|s| s.extra.get(novel_core::model::pipeline_log::EDIT_RATIO))
        .and_then(|r| r.get("narration"))
        .and_then(Value::as_f64);
    f.stages = log
        .stages
        .iter()
        .map(|s| stage_usage(s, settings))
        .collect();
}

/// Chapters whose files could not be used, for the views to say so.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Missing {
    pub logs: Vec<u32>,
    pub unreadable_logs: Vec<u32>,
    pub evaluations: Vec<u32>,
    pub unreadable_evaluations: Vec<u32>,
    pub texts: Vec<u32>,
    /// Chapters whose 字数 was counted from the text (their log did not record it).
    pub counted_from_text: usize,
}

/// What reading a chapter needs.
pub(super) struct Reader<'a> {
    pub project: &'a Project,
    pub settings: &'a Settings,
    pub count: &'a (dyn Fn(&str) -> usize + Sync),
    /// Read every evaluation (for the dimensions), not only those of chapters whose log has
    /// no score.
    pub dimensions: bool,
}

impl Reader<'_> {
    /// Chapter `n` of volume `volume`; what could not be read goes to `problems` and `missing`.
    pub fn chapter(
        &self,
        n: u32,
        volume: u32,
        problems: &mut Vec<String>,
        missing: &mut Missing,
    ) -> ChapterFigures {
        let mut f = ChapterFigures::new(n, volume);
        match load_with::<PipelineLog>(self.project, &layout::log_file(n), read_text_alone) {
            Ok(Some(log)) => from_log(&mut f, &log, self.settings),
            Ok(None) => missing.logs.push(n),
            Err(p) => {
                problems.push(p);
                f.log = LogState::Unreadable;
                missing.unreadable_logs.push(n);
            }
        }
        if f.chars.is_none() {
            self.count_text(&mut f, problems, missing);
        }
        if self.dimensions || f.score.is_none() {
            self.evaluation(&mut f, problems, missing);
        }
        f
    }

    fn count_text(&self, f: &mut ChapterFigures, problems: &mut Vec<String>, m: &mut Missing) {
        let rel = layout::chapter_file(f.chapter);
        match read_text_alone(&self.project.path(&rel)) {
            Ok(t) => {
                f.chars = Some((self.count)(&t) as u64);
                m.counted_from_text += 1;
            }
            Err(e) => {
                problems.push(format!("{rel} 无法读取：{e}"));
                m.texts.push(f.chapter);
            }
        }
    }

    fn evaluation(&self, f: &mut ChapterFigures, problems: &mut Vec<String>, m: &mut Missing) {
        let rel = layout::evaluation_file(f.chapter);
        match load_with::<Evaluation>(self.project, &rel, read_text_alone) {
            Ok(Some(e)) => {
                f.evaluation = LogState::Read;
                if self.dimensions {
                    let d = e.scores.dimensions();
                    f.dimensions = Some(std::array::from_fn(|i| d[i].1.score));
                }
                if f.score.is_none() {
                    let weights = &self.settings.gate.weights;
                    f.score = Some(novel_core::gate::weighted_overall(&e, weights));
                }
            }
            Ok(None) => m.evaluations.push(f.chapter),
            Err(p) => {
                problems.push(p);
                f.evaluation = LogState::Unreadable;
                m.unreadable_evaluations.push(f.chapter);
            }
        }
    }
}

#[derive(serde::Deserialize)]
struct LightEntry {
    chapter: u32,
    #[serde(default)]
    storyline_id: Option<String>,
}

/// Chapters whose log did not name their storyline: the changelog's line, else the summary's
/// front matter.
pub(super) fn fill_storylines(project: &Project, chapters: &mut [ChapterFigures]) {
    let wanted: BTreeSet<u32> = chapters
        .iter()
        .filter(|f| f.storyline.is_none())
        .map(|f| f.chapter)
        .collect();
    if wanted.is_empty() {
        return;
    }
    let mut found: BTreeMap<u32, String> = BTreeMap::new();
    if let Ok(text) = read_text(&project.path(layout::CHANGELOG)) {
        for line in text.lines().filter(|l| !l.trim().is_empty()) {
            if let Ok(e) = serde_json::from_str::<LightEntry>(line)
                && wanted.contains(&e.chapter)
                && let Some(s) = e.storyline_id
            {
                found.entry(e.chapter).or_insert(s);
            }
        }
    }
    for f in chapters.iter_mut().filter(|f| f.storyline.is_none()) {
        f.storyline = found.remove(&f.chapter).or_else(|| {
            read_text(&project.path(&layout::summary_file(f.chapter)))
                .ok()
                .and_then(|t| novel_core::context::text::summary_parts(&t).storyline)
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_are_read_from_iso_timestamps_only() {
        assert_eq!(
            date_of("2026-01-05T10:00:00Z").as_deref(),
            Some("2026-01-05")
        );
        assert_eq!(date_of("2026-1-5"), None);
        assert_eq!(date_of("yesterday!"), None);
    }
}
