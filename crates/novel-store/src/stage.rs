//! `novel chapter stage STAGE`: moving the chapter in flight along the pipeline (PRD §9.2,
//! `docs/orchestration.md` §1) — the order and file checks (`novel_core::pipeline::check_stage`),
//! the archive of a round the gate sent back, the checkpoint, and the stage's line in the
//! pipeline log.

use serde::Serialize;

use novel_core::model::{Checkpoint, OrchestratorState, PipelineStage};
use novel_core::pipeline::{self, StageRefusal};

use crate::chapter::{
    Facts, archive_rejected, load_checkpoint, record_stage, staged_digests, staging_facts,
    write_checkpoint,
};
use crate::error::StoreError;
use crate::lock::{self, LockError};
use crate::project::Project;

/// Why the stage did not move.
#[derive(Debug, thiserror::Error)]
pub enum StageError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    Lock(#[from] LockError),
    /// The order or the staged files say no (`check_stage`).
    #[error("{}", .0.reason)]
    Refused(StageRefusal),
    #[error("没有在写的章节")]
    NothingInFlight,
    #[error("第 {chapter} 章处于出错待重试（ERROR_RETRY）")]
    Failed { chapter: u32 },
}

/// The chapter the pipeline waits to resume after `chapter fail`, if it is in ERROR_RETRY.
pub fn failed_chapter(cp: &Checkpoint) -> Option<u32> {
    (cp.orchestrator_state == OrchestratorState::ErrorRetry)
        .then(|| cp.inflight_chapter.unwrap_or(cp.last_completed_chapter + 1))
}

/// What `chapter stage` did. Field order is the `--json` order.
#[derive(Debug, Clone, Serialize)]
pub struct Moved {
    pub chapter: u32,
    pub from: Option<PipelineStage>,
    pub stage: PipelineStage,
    pub revision_count: u32,
    /// Files of the round sent back, now under `logs/revisions/chapter-NNN/rK/`.
    pub archived: Vec<String>,
}

/// Moves the chapter in flight to `to`. `entry` is the stage's line for the pipeline log (the
/// figures the skill knows). The lock's heartbeat is refreshed with `token`.
pub fn advance(
    project: &Project,
    to: PipelineStage,
    token: &str,
    entry: serde_json::Value,
) -> Result<Moved, StageError> {
    let mut cp = load_checkpoint(project)?;
    if let Some(chapter) = failed_chapter(&cp) {
        return Err(StageError::Failed { chapter });
    }
    let n = cp.inflight_chapter.ok_or(StageError::NothingInFlight)?;
    lock::heartbeat(project, token)?;
    let facts = staging_facts(project, n, Facts::Full);
    pipeline::check_stage(&cp, n, to, &facts).map_err(StageError::Refused)?;
    let from = cp.pipeline_stage;
    let mut archived = Vec::new();
    if matches!(to, PipelineStage::Revising | PipelineStage::Drafting) {
        // The round the gate sent back: its evaluation and Summarizer outputs (and, for a
        // rewrite, the text) go to logs/revisions/ before the checkpoint moves on, so the
        // next round cannot reuse them; re-running this finishes an interrupted archive.
        let round = cp.revision_count + 1;
        archived = archive_rejected(project, n, round, to == PipelineStage::Revising)?;
        cp.revision_count = round;
        if cp.orchestrator_state == OrchestratorState::Writing {
            cp.orchestrator_state = OrchestratorState::ChapterRewrite;
        }
    }
    if to == PipelineStage::Judged && pipeline::current_gate(&cp, n).is_some() {
        // A new evaluation: the verdict on the old one no longer holds.
        cp.gate = None;
    }
    if to == PipelineStage::Polished
        && let Some(g) = cp.gate.as_mut()
    {
        // The second polish is what gets committed: take its files as the approved ones.
        g.staged = staged_digests(project, n)?;
    }
    cp.pipeline_stage = Some(to);
    record_stage(project, n, entry)?;
    cp.last_checkpoint_time = Some(crate::time::now_iso());
    write_checkpoint(project, &cp)?;
    Ok(Moved {
        chapter: n,
        from,
        stage: to,
        revision_count: cp.revision_count,
        archived,
    })
}
