//! `novel state rebuild [--until-chapter N] [--write]`: the state and the foreshadowing file
//! replayed from the changelog (`novel_core::ops::rebuild`), compared with what is on disk, and
//! — with the project lock — written back through the commit journal, the old files backed up
//! first. A state or foreshadowing file that is missing, does not parse or does not fit its
//! schema is what a rebuild repairs: the whole file is one difference.
//!
//! Layer: commands — the work behind a command (stages, volumes, spec, reviews, import, export, the
//! guard); the top.

use serde::Serialize;
use serde_json::Value;

use novel_core::model::foreshadowing::PlannedForeshadowing;
use novel_core::model::{ChangelogEntry, ForeshadowingGlobal};
use novel_core::ops::{self, Context, Difference, NameIndex, OpsError, Replayed, diff};

use crate::chapter::JournalKind;
use crate::error::StoreError;
use crate::io::to_json_text;
use crate::layout;
use crate::lock::Held;
use crate::project::Project;
use crate::state::{
    ChangelogWrite, StateOnDisk, StateWrite, backup_write, commit_state, load_changelog,
    load_global, load_names, load_plan, state_on_disk,
};

/// Why a rebuild could not run.
#[derive(Debug, thiserror::Error)]
pub enum RebuildError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    Ops(#[from] OpsError),
    /// `--write` from a changelog that is missing or empty while the book says chapters were
    /// recorded: the replay would be an empty state, wiping everything.
    #[error(
        "变更日志 {} 不存在或是空的，而{evidence}：按它重建会把状态清空，拒绝写入",
        layout::CHANGELOG
    )]
    ChangelogLost { evidence: String },
}

/// What a rebuild found (and did). Field order is the `--json` order.
#[derive(Debug, Clone, Serialize)]
pub struct RebuildReport {
    pub until_chapter: Option<u32>,
    pub entries_replayed: usize,
    pub entries_total: usize,
    pub state_version: u64,
    /// `ok`, `missing` or `unusable`.
    pub state_file: &'static str,
    pub state_file_problem: Option<String>,
    /// `ok` or `unusable`.
    pub foreshadowing_file: &'static str,
    pub foreshadowing_file_problem: Option<String>,
    pub state_differences: Vec<Difference>,
    pub foreshadowing_differences: Vec<Difference>,
    pub dropped_threads: Vec<String>,
    pub changelog_truncated: bool,
    pub written: bool,
    pub backups: Vec<String>,
    /// The replay stops before the changelog's end (`--until-chapter`): it must be cut.
    #[serde(skip)]
    pub truncate: bool,
}

impl RebuildReport {
    /// Whether the disk differs from the replay (then `--write` writes).
    pub fn differs(&self) -> bool {
        !self.state_differences.is_empty()
            || !self.foreshadowing_differences.is_empty()
            || self.truncate
    }
}

/// The whole-file difference of a file that could not be used.
fn whole(expected: &Value) -> Vec<Difference> {
    vec![Difference {
        pointer: String::new(),
        expected: Some(expected.clone()),
        actual: None,
    }]
}

/// What an unusable foreshadowing file (does not parse or fit its schema) means to a replay.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UnusableGlobal {
    /// Replay over an empty file and say why (`state rebuild`: the file is repaired).
    Repair,
    /// The error stands (`state at`: looking back repairs nothing).
    Refuse,
}

/// What a replay of the changelog reads: the changelog, the authored foreshadowing file, the
/// volume plans, the character names and the state file as it is on disk. One loader for
/// `state rebuild` and `state at`.
pub struct Replay {
    pub log: Vec<ChangelogEntry>,
    pub authored: ForeshadowingGlobal,
    /// Why the foreshadowing file could not be used ([`UnusableGlobal::Repair`] only).
    pub global_problem: Option<String>,
    pub plan: Vec<PlannedForeshadowing>,
    pub names: NameIndex,
    pub disk: StateOnDisk,
}

impl Replay {
    pub fn load(project: &Project, unusable: UnusableGlobal) -> Result<Self, StoreError> {
        let log = load_changelog(project)?;
        let (authored, global_problem) = match (load_global(project), unusable) {
            (Ok(g), _) => (g, None),
            (
                Err(
                    e @ (StoreError::Json { .. }
                    | StoreError::Model { .. }
                    | StoreError::Field { .. }),
                ),
                UnusableGlobal::Repair,
            ) => (
                ForeshadowingGlobal {
                    foreshadowing: Vec::new(),
                    extra: Default::default(),
                },
                Some(e.to_string()),
            ),
            (Err(e), _) => return Err(e),
        };
        Ok(Self {
            log,
            authored,
            global_problem,
            plan: load_plan(project)?,
            names: load_names(project),
            disk: state_on_disk(project),
        })
    }

    /// The state file on disk when it is usable.
    pub fn on_disk(&self) -> Option<&Value> {
        match &self.disk {
            StateOnDisk::Valid(v) => Some(v),
            _ => None,
        }
    }

    /// The state and foreshadowing file replayed up to `until` (the whole changelog by default).
    pub fn run(&self, until: Option<u32>) -> Result<Replayed, OpsError> {
        let ctx = Context {
            names: &self.names,
            plan: &self.plan,
        };
        ops::rebuild(&self.log, until, self.on_disk(), &self.authored, ctx)
    }

    /// Every entity id the changelog, the state and the foreshadowing file know
    /// ([`ops::known_entities`]), for resolving what the author typed.
    pub fn known_entities(&self) -> Vec<String> {
        ops::known_entities(&self.log, self.on_disk(), Some(&self.authored), &self.names)
    }
}

/// Replays and compares; with `held` (the project lock, `--write`) and a difference, backs up
/// and writes the replay all-or-nothing through the journal.
pub fn rebuild(
    project: &Project,
    until: Option<u32>,
    held: Option<&mut Held<'_>>,
) -> Result<RebuildReport, RebuildError> {
    let replay = Replay::load(project, UnusableGlobal::Repair)?;
    let replayed = replay.run(until)?;
    let disk_version = replay.on_disk().map_or(0, ops::state_version);
    let (log, authored, global_problem) = (&replay.log, &replay.authored, replay.global_problem);
    let (on_disk, state_file, problem) = match &replay.disk {
        StateOnDisk::Valid(v) => (Some(v), "ok", None),
        StateOnDisk::Missing => (None, "missing", Some("文件不存在".to_string())),
        StateOnDisk::Unusable(e) => (None, "unusable", Some(e.to_string())),
    };
    let state_differences = match on_disk {
        Some(v) => diff(&replayed.state, v),
        None => whole(&replayed.state),
    };
    let global_value = to_value(&replayed.global);
    let foreshadowing_differences = match &global_problem {
        None => diff(&global_value, &to_value(authored)),
        Some(_) => whole(&global_value),
    };
    let mut report = RebuildReport {
        until_chapter: until,
        entries_replayed: replayed.entries_used,
        entries_total: log.len(),
        state_version: ops::state_version(&replayed.state),
        state_file,
        state_file_problem: problem,
        foreshadowing_file: if global_problem.is_some() {
            "unusable"
        } else {
            "ok"
        },
        foreshadowing_file_problem: global_problem,
        state_differences,
        foreshadowing_differences,
        dropped_threads: replayed.dropped_threads.clone(),
        changelog_truncated: false,
        written: false,
        backups: Vec::new(),
        truncate: until.is_some() && replayed.entries_used < log.len(),
    };
    if let (Some(held), true) = (held, report.differs()) {
        if log.is_empty()
            && let Some(evidence) = recorded_elsewhere(project, disk_version)
        {
            return Err(RebuildError::ChangelogLost { evidence });
        }
        write(project, &mut report, &replayed, log, held)?;
    }
    Ok(report)
}

/// What says chapters were recorded when the changelog has no line: the state file's version,
/// or the checkpoint's completed chapters (the state file may be gone too).
fn recorded_elsewhere(project: &Project, version: u64) -> Option<String> {
    if version > 0 {
        return Some(format!("状态文件记着第 {version} 版"));
    }
    let done = crate::chapter::load_checkpoint(project).map_or(0, |cp| cp.last_completed_chapter);
    (done > 0).then(|| format!("断点记着已完成 {done} 章"))
}

fn to_value(g: &ForeshadowingGlobal) -> Value {
    // A ForeshadowingGlobal is plain data: it always serialises.
    serde_json::to_value(g).unwrap_or(Value::Null)
}

/// Backs up the three files, then writes the replay (and the cut changelog) all together or
/// not at all (§10.8: replay-to-before-an-edit keeps the prefix; later lines live on in the
/// backup only).
fn write(
    project: &Project,
    report: &mut RebuildReport,
    replayed: &Replayed,
    log: &[novel_core::model::ChangelogEntry],
    held: &mut Held<'_>,
) -> Result<(), StoreError> {
    let stamp = crate::time::now_iso();
    let mut backups = Vec::new();
    for rel in [
        layout::CURRENT_STATE,
        layout::FORESHADOWING_GLOBAL,
        layout::CHANGELOG,
    ] {
        if let Some((b, write)) = backup_write(project, rel, &stamp, &backups)? {
            report.backups.push(b);
            backups.extend(write);
        }
    }
    let w = StateWrite {
        chapter: report.until_chapter.unwrap_or(0),
        kind: JournalKind::Rebuild,
        state: Some(to_json_text(&replayed.state)),
        global: (!report.foreshadowing_differences.is_empty()).then_some(&replayed.global),
        changelog: if report.truncate {
            ChangelogWrite::Replace(&log[..replayed.entries_used])
        } else {
            ChangelogWrite::Keep
        },
        backups,
    };
    commit_state(project, w, held.hand_to_journal())?;
    report.written = true;
    report.changelog_truncated = report.truncate;
    Ok(())
}
