//! The volume cycle on disk (`docs/orchestration.md` §1, §6): `volume open` (VOL_PLANNING →
//! WRITING once the volume check passes), `volume close` (VOL_REVIEW → VOL_PLANNING of the next
//! volume, archiving the final state and writing the cleanup report) and `volume cleanup`
//! (removing the entries the author confirmed, through the state engine).
//!
//! Each holds the project lock ([`lock::Held`]) from its checks to its last write. Writes are
//! atomic; `close` writes the checkpoint last, so an interrupted close is simply run again;
//! `cleanup` goes through the commit journal like a retirement, so `novel chapter recover`
//! finishes an interrupted one.
//!
//! Layer: commands (the volume commands), above the commit transaction and the derived facts.

use std::time::Duration;

use novel_core::model::common::ForeshadowStatus;
use novel_core::model::{Character, Checkpoint, ForeshadowingGlobal, OrchestratorState};
use novel_core::ops::{self, OpsError};
use novel_core::plan::cleanup::{self, CleanupEntry, CleanupInputs, CleanupReport, CleanupRun};
use serde::Serialize;

use crate::chapter::{Journal, JournalWrite, load_checkpoint, write_checkpoint};
use crate::error::StoreError;
use crate::io::{create_dir_all, read_text, to_json_text, write_atomic};
use crate::layout;
use crate::lock::{self, LockError};
use crate::plan::{PlanError, VolumeCheckReport, volume_check};
use crate::project::Project;

/// Why a volume command refuses.
#[derive(Debug, thiserror::Error)]
pub enum VolumeError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    Plan(#[from] PlanError),
    #[error(transparent)]
    Ops(#[from] OpsError),
    /// The project lock, the writers' guard or a pending journal (the lock's own error, with
    /// its code and hint).
    #[error(transparent)]
    Lock(LockError),
    #[error("这本书现在处于「{state}」，novel {command} 只能在「{wanted}」时运行")]
    State {
        state: &'static str,
        wanted: &'static str,
        command: &'static str,
    },
    #[error("当前卷是第 {current} 卷，不能开第 {asked} 卷")]
    WrongVolume { asked: u32, current: u32 },
    #[error("第 {} 卷的检查有 {} 个错误，不能开卷", .0.volume, .0.counts.error)]
    CheckFailed(Box<VolumeCheckReport>),
    #[error("第 {volume} 卷还没有卷末回顾报告（{report}）")]
    ReviewMissing { volume: u32, report: String },
    #[error("第 {chapter} 章还在写作流程中（尚未提交）")]
    ChapterInFlight { chapter: u32 },
    #[error("没有卷末清理报告：{searched}")]
    NoCleanupReport { searched: String },
    #[error("清理报告 {report} 里没有这些条目：{}", ids.join("、"))]
    UnknownEntries {
        report: String,
        ids: Vec<String>,
        known: Vec<String>,
    },
    #[error("状态文件（state_version {state}）与变更日志（最后记录到 {logged}）不一致")]
    Diverged { state: u64, logged: u64 },
}

impl VolumeError {
    pub fn code(&self) -> &'static str {
        match self {
            VolumeError::Store(e) => e.code(),
            VolumeError::Plan(e) => e.code(),
            VolumeError::Ops(e) => e.code(),
            VolumeError::Lock(e) => e.code(),
            VolumeError::State { .. } => "E_STATE",
            VolumeError::WrongVolume { .. } => "E_VOLUME",
            VolumeError::CheckFailed(_) => "E_VOLUME_CHECK",
            VolumeError::ReviewMissing { .. } => "E_REVIEW_MISSING",
            VolumeError::ChapterInFlight { .. } => "E_INFLIGHT",
            VolumeError::NoCleanupReport { .. } => "E_NO_CLEANUP_REPORT",
            VolumeError::UnknownEntries { .. } => "E_USAGE",
            VolumeError::Diverged { .. } => "E_STATE_DIVERGED",
        }
    }

    /// Exit 3 (conflict: the state machine, the lock, an unfinished commit) as opposed to 1
    /// (the check found errors) and 2 (usage or project).
    pub fn is_conflict(&self) -> bool {
        matches!(self, VolumeError::Lock(e) if e.is_conflict())
            || matches!(
                self,
                VolumeError::State { .. }
                    | VolumeError::WrongVolume { .. }
                    | VolumeError::ReviewMissing { .. }
                    | VolumeError::ChapterInFlight { .. }
                    | VolumeError::Diverged { .. }
            )
            || matches!(self, VolumeError::Ops(e) if e.code() == "E_CHAPTER_ORDER")
    }

    pub fn hint(&self) -> String {
        match self {
            VolumeError::Store(e) => e.hint(),
            VolumeError::Plan(e) => e.hint(),
            VolumeError::Ops(e) => e.hint(),
            VolumeError::Lock(e) => e.hint(),
            VolumeError::State { command, .. } => match *command {
                "volume open" => "先完成卷规划（novel next 会说明当前该做什么）".into(),
                _ => "本卷计划的最后一章完成后再收卷（卷的末章见 novel status；没有章节在写）；novel next 会说明当前该做什么".into(),
            },
            VolumeError::WrongVolume { current, .. } => {
                format!("开当前卷：novel volume open {current}")
            }
            VolumeError::CheckFailed(r) => format!(
                "按 novel volume check {} 列出的问题修改大纲、调度与契约后再开卷",
                r.volume
            ),
            VolumeError::ReviewMissing { volume, .. } => {
                format!("先运行 novel review volume {volume}，和作者一起看完回顾再收卷")
            }
            VolumeError::ChapterInFlight { chapter } => {
                format!("先提交第 {chapter} 章，或运行 novel chapter recover")
            }
            VolumeError::NoCleanupReport { .. } => {
                "卷末清理报告由 novel volume close 写出；用 --volume V 指定别的卷".into()
            }
            VolumeError::UnknownEntries { known, .. } if known.is_empty() => {
                "报告里没有待清理的条目".into()
            }
            VolumeError::UnknownEntries { known, .. } => {
                format!("可用的 id：{}（或用 --all）", known.join("、"))
            }
            VolumeError::Diverged { .. } => {
                "先运行 novel state rebuild 核对并修复状态，再清理".into()
            }
        }
    }
}

impl From<LockError> for VolumeError {
    fn from(e: LockError) -> Self {
        match e {
            LockError::Store(e) => VolumeError::Store(e),
            e => VolumeError::Lock(e),
        }
    }
}

fn hold(project: &Project, stale: Duration) -> Result<lock::Held<'_>, VolumeError> {
    Ok(lock::Held::take(project, stale)?)
}

/// The checkpoint of a volume command: no unfinished commit, schema-checked.
fn checkpoint(project: &Project) -> Result<Checkpoint, VolumeError> {
    lock::ensure_no_journal(project)?;
    Ok(load_checkpoint(project)?)
}

fn want_state(
    cp: &Checkpoint,
    wanted: OrchestratorState,
    command: &'static str,
) -> Result<(), VolumeError> {
    if cp.orchestrator_state == wanted {
        return Ok(());
    }
    Err(VolumeError::State {
        state: novel_core::context::session::state_name(cp.orchestrator_state),
        wanted: novel_core::context::session::state_name(wanted),
        command,
    })
}

/// What `volume open` did.
#[derive(Debug, Clone, Serialize)]
pub struct Opened {
    pub volume: u32,
    pub check: VolumeCheckReport,
    /// The state the checkpoint was left in (WRITING).
    pub orchestrator_state: OrchestratorState,
}

/// `novel volume open V`: VOL_PLANNING → WRITING, when `V` is the current volume and its check
/// has no error.
pub fn open(project: &Project, v: u32, now: &str, stale: Duration) -> Result<Opened, VolumeError> {
    let held = hold(project, stale)?;
    let mut cp = checkpoint(project)?;
    want_state(&cp, OrchestratorState::VolPlanning, "volume open")?;
    if v != cp.current_volume {
        return Err(VolumeError::WrongVolume {
            asked: v,
            current: cp.current_volume,
        });
    }
    let check = volume_check(project, v)?;
    if check.has_errors() {
        return Err(VolumeError::CheckFailed(Box::new(check)));
    }
    cp.orchestrator_state = OrchestratorState::Writing;
    cp.last_checkpoint_time = Some(now.to_string());
    write_checkpoint(project, &cp)?;
    held.release()?;
    Ok(Opened {
        volume: v,
        check,
        orchestrator_state: cp.orchestrator_state,
    })
}

pub use novel_core::naming::final_state_file;

/// `volumes/vol-NN/cleanup.json`.
pub fn cleanup_file(v: u32) -> String {
    format!("{}/cleanup.json", layout::volume_dir(v))
}

/// What `volume close` did.
#[derive(Debug, Clone, Serialize)]
pub struct Closed {
    pub volume: u32,
    pub next_volume: u32,
    /// The state the checkpoint was left in (VOL_PLANNING).
    pub orchestrator_state: OrchestratorState,
    /// The archived final state.
    pub archived: String,
    /// The cleanup report written.
    pub cleanup_file: String,
    pub cleanup: CleanupReport,
}

/// Every text that can keep an item or location alive: unresolved threads, the storylines,
/// the next volume's outline and contracts.
fn references(project: &Project, next: u32) -> Result<Vec<(String, String)>, StoreError> {
    let mut out = Vec::new();
    let global_path = project.path(layout::FORESHADOWING_GLOBAL);
    if global_path.exists() {
        let g: ForeshadowingGlobal = crate::io::read_json(&global_path, "全局伏笔")?;
        for t in g
            .foreshadowing
            .iter()
            .filter(|t| t.status != ForeshadowStatus::Resolved)
        {
            out.push((
                layout::FORESHADOWING_GLOBAL.to_string(),
                serde_json::to_string(t).unwrap_or_default(),
            ));
        }
    }
    let mut files = vec![
        layout::STORYLINES.to_string(),
        format!("{}/outline.md", layout::volume_dir(next)),
    ];
    files.extend(
        crate::next::contract_chapters(project, next)
            .into_iter()
            .map(|c| layout::chapter_contract_file(next, c)),
    );
    for rel in files {
        match read_text(&project.path(&rel)) {
            Ok(t) => out.push((rel, t)),
            Err(StoreError::Io { source, .. }) if source.kind() == std::io::ErrorKind::NotFound => {
            }
            Err(e) => return Err(e),
        }
    }
    Ok(out)
}

/// Retired characters as (slug, display name, file); an unreadable file keeps its slug.
fn retired_characters(project: &Project) -> Vec<(String, String, String)> {
    let mut out = Vec::new();
    let dir = project.path("characters/retired");
    let Ok(names) = crate::io::dir_names(&dir) else {
        return out;
    };
    for name in names {
        let Some(slug) = name
            .strip_suffix(".json")
            .filter(|_| !name.starts_with('.'))
        else {
            continue;
        };
        let rel = format!("characters/retired/{name}");
        let display = crate::io::read_json::<Character>(&dir.join(&name), "角色档案")
            .map_or_else(|_| slug.to_string(), |c| c.display_name);
        out.push((slug.to_string(), display, rel));
    }
    out.sort();
    out
}

/// The cleanup proposal for the state as it is now.
fn propose(
    project: &Project,
    v: u32,
    cp: &Checkpoint,
    state: &serde_json::Value,
    now: &str,
) -> Result<CleanupReport, StoreError> {
    let retired = retired_characters(project);
    let retired_refs: Vec<(&str, &str, &str)> = retired
        .iter()
        .map(|(s, d, f)| (s.as_str(), d.as_str(), f.as_str()))
        .collect();
    let refs = references(project, v + 1)?;
    let entries = cleanup::candidates(&CleanupInputs {
        state,
        retired: &retired_refs,
        references: &refs,
    });
    Ok(CleanupReport {
        volume: v,
        created_at: now.to_string(),
        last_completed_chapter: cp.last_completed_chapter,
        state_version: ops::state_version(state),
        entries,
        runs: Vec::new(),
        extra: Default::default(),
    })
}

/// `novel volume close`: VOL_REVIEW → VOL_PLANNING of the next volume, once the volume review
/// report exists. Archives the state, writes the cleanup report (nothing is removed).
pub fn close(project: &Project, now: &str, stale: Duration) -> Result<Closed, VolumeError> {
    let mut held = hold(project, stale)?;
    let mut cp = checkpoint(project)?;
    // The volume's last planned chapter is done, however it got there (committed, imported,
    // applied by hand): WRITING with nothing in flight is the review's state too.
    let end =
        crate::next::volume_span(project, cp.current_volume, &mut Vec::new()).map(|s| s.range[1]);
    if cp.orchestrator_state == OrchestratorState::Writing
        && cp.inflight_chapter.is_none()
        && end.is_some_and(|e| cp.last_completed_chapter >= e)
    {
        cp.orchestrator_state = OrchestratorState::VolReview;
    }
    want_state(&cp, OrchestratorState::VolReview, "volume close")?;
    if let Some(chapter) = cp.inflight_chapter {
        return Err(VolumeError::ChapterInFlight { chapter });
    }
    let v = cp.current_volume;
    let report = layout::review_volume_report(v);
    if !project.path(&report).is_file() {
        return Err(VolumeError::ReviewMissing { volume: v, report });
    }
    let state = crate::state::load_state(project)?;
    let state_text = read_text(&project.path(layout::CURRENT_STATE))?;
    let proposal = propose(project, v, &cp, &state, now)?;
    let archived = final_state_file(v);
    let cleanup_rel = cleanup_file(v);
    cp.current_volume = v + 1;
    cp.orchestrator_state = OrchestratorState::VolPlanning;
    cp.last_checkpoint_time = Some(now.to_string());
    // The archive, the report and the checkpoint all-or-nothing: a close killed half-way is
    // finished by `novel chapter recover`, never left with the volume half-closed.
    let writes = vec![
        JournalWrite {
            path: archived.clone(),
            content: state_text,
        },
        JournalWrite {
            path: cleanup_rel.clone(),
            content: to_json_text(&proposal),
        },
        JournalWrite {
            path: layout::CHECKPOINT.to_string(),
            content: crate::io::rewrite_text(&project.path(layout::CHECKPOINT), &cp),
        },
    ];
    let mut journal = Journal::files(
        v,
        held.hand_to_journal(),
        writes,
        crate::chapter::JournalKind::VolumeClose,
    );
    journal.dirs = vec![novel_core::naming::contracts_dir(v + 1)];
    crate::chapter::commit(project, journal)?;
    held.release()?;
    Ok(Closed {
        volume: v,
        next_volume: v + 1,
        orchestrator_state: cp.orchestrator_state,
        archived,
        cleanup_file: cleanup_rel,
        cleanup: proposal,
    })
}

/// Which entries `volume cleanup` removes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Selection {
    All,
    Ids(Vec<String>),
}

impl Selection {
    /// The ids the author typed (`--apply a,b`): trimmed, blanks dropped, each once in the
    /// order given; `None` when none is left.
    pub fn ids(typed: &[String]) -> Option<Selection> {
        let mut ids: Vec<String> = Vec::new();
        for id in typed.iter().map(|s| s.trim()).filter(|s| !s.is_empty()) {
            if !ids.iter().any(|x| x == id) {
                ids.push(id.to_string());
            }
        }
        (!ids.is_empty()).then_some(Selection::Ids(ids))
    }
}

/// What `volume cleanup` did.
#[derive(Debug, Clone, Serialize)]
pub struct Cleaned {
    pub volume: u32,
    pub report: String,
    pub removed: Vec<String>,
    /// Confirmed ids no longer in the state (nothing to remove).
    pub absent: Vec<String>,
    /// Ids a previous run already applied.
    pub already_applied: Vec<String>,
    /// `state_version` after the run.
    pub state_version: u64,
    /// Whether a changelog line was written (something was removed).
    pub changelog_line: bool,
    pub entries: Vec<CleanupEntry>,
}

/// The report to clean from: `volume`, else the latest report at or before the current volume.
fn report_volume(
    project: &Project,
    cp: &Checkpoint,
    volume: Option<u32>,
) -> Result<u32, VolumeError> {
    if let Some(v) = volume {
        return if project.path(&cleanup_file(v)).is_file() {
            Ok(v)
        } else {
            Err(VolumeError::NoCleanupReport {
                searched: cleanup_file(v),
            })
        };
    }
    (1..=cp.volume())
        .rev()
        .find(|v| project.path(&cleanup_file(*v)).is_file())
        .ok_or_else(|| VolumeError::NoCleanupReport {
            searched: format!(
                "volumes/vol-01..{}/cleanup.json",
                novel_core::naming::volume_stem(cp.current_volume)
            ),
        })
}

/// `novel volume cleanup`: removes the confirmed entries of a cleanup report through the state
/// engine (one `manual` changelog line with `cleanup_volume`), journaled; marks them applied.
pub fn cleanup_apply(
    project: &Project,
    volume: Option<u32>,
    selection: &Selection,
    now: &str,
    stale: Duration,
) -> Result<Cleaned, VolumeError> {
    let held = hold(project, stale)?;
    let cp = checkpoint(project)?;
    if let Some(chapter) = cp.inflight_chapter {
        return Err(VolumeError::ChapterInFlight { chapter });
    }
    let v = report_volume(project, &cp, volume)?;
    let report_rel = cleanup_file(v);
    let mut report: CleanupReport =
        crate::io::read_json(&project.path(&report_rel), "卷末清理报告")?;
    let (already, todo) = selected(&report, &report_rel, selection)?;
    let state = crate::state::load_state(project)?;
    let log = crate::state::load_changelog(project)?;
    let logged = log.last().map_or(0, |e| e.state_version);
    if logged != ops::state_version(&state) {
        return Err(VolumeError::Diverged {
            state: ops::state_version(&state),
            logged,
        });
    }
    let done = cleanup::apply(&state, &todo, v, cp.last_completed_chapter, now);
    if let Some(entry) = &done.entry {
        ops::check_changelog_order(entry.chapter, &log)?;
    }
    for e in report.entries.iter_mut() {
        if todo.contains(&e.id) {
            e.applied = true;
        }
    }
    if !todo.is_empty() {
        report.runs.push(CleanupRun {
            at: now.to_string(),
            ids: todo.clone(),
            state_version: ops::state_version(&done.state),
        });
    }
    write_cleanup(
        project,
        held,
        cp.last_completed_chapter,
        v,
        &report_rel,
        &report,
        &done,
    )?;
    Ok(Cleaned {
        volume: v,
        report: report_rel,
        removed: done.removed,
        absent: done.absent,
        already_applied: already,
        state_version: ops::state_version(&done.state),
        changelog_line: done.entry.is_some(),
        entries: report.entries,
    })
}

/// Writes a cleanup run: the report alone when nothing was removed, else the state, the report
/// and the changelog line as one journaled transaction (the journal releases the lock).
fn write_cleanup(
    project: &Project,
    held: lock::Held<'_>,
    last_completed: u32,
    v: u32,
    report_rel: &str,
    report: &CleanupReport,
    done: &cleanup::CleanupApplied,
) -> Result<(), VolumeError> {
    let report_text = to_json_text(report);
    let Some(entry) = &done.entry else {
        write_atomic(&project.path(report_rel), report_text.as_bytes())?;
        return Ok(held.release()?);
    };
    // The journal's last step fsyncs `staging/`; a hand-made project may lack it.
    create_dir_all(&project.path("staging"))?;
    let journal = Journal {
        chapter: last_completed,
        token: held.into_journal_token(),
        writes: vec![
            JournalWrite {
                path: layout::CURRENT_STATE.into(),
                content: to_json_text(&done.state),
            },
            JournalWrite {
                path: report_rel.to_string(),
                content: report_text,
            },
        ],
        changelog_line: Some(crate::state::changelog_line(entry)?),
        changelog_len: None,
        dirs: Vec::new(),
        appends: Vec::new(),
        remove: Vec::new(),
        retiring: None,
        cleanup: Some(v),
        kind: None,
    };
    crate::chapter::commit(project, journal)?;
    Ok(())
}

/// The ids a selection names, split into those applied before and those to apply now; an id
/// the report does not have is refused.
fn selected(
    report: &CleanupReport,
    report_rel: &str,
    selection: &Selection,
) -> Result<(Vec<String>, Vec<String>), VolumeError> {
    let wanted: Vec<String> = match selection {
        Selection::All => report.entries.iter().map(|e| e.id.clone()).collect(),
        Selection::Ids(ids) => {
            let unknown: Vec<String> = ids
                .iter()
                .filter(|id| !report.entries.iter().any(|e| &e.id == *id))
                .cloned()
                .collect();
            if !unknown.is_empty() {
                return Err(VolumeError::UnknownEntries {
                    report: report_rel.to_string(),
                    ids: unknown,
                    known: report
                        .entries
                        .iter()
                        .filter(|e| !e.applied)
                        .map(|e| e.id.clone())
                        .collect(),
                });
            }
            ids.clone()
        }
    };
    Ok(wanted
        .into_iter()
        .partition(|id| report.entries.iter().any(|e| &e.id == id && e.applied)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn typed_ids_are_trimmed_and_taken_once() {
        let typed: Vec<String> = [" items.a", "", "characters.b", "items.a ", "  "]
            .iter()
            .map(|s| s.to_string())
            .collect();
        match Selection::ids(&typed) {
            Some(Selection::Ids(ids)) => assert_eq!(ids, ["items.a", "characters.b"]),
            other => panic!("{other:?}"),
        }
        assert!(Selection::ids(&[" ".to_string()]).is_none());
    }
}
