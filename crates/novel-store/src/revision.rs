//! Revision candidates on disk (`004`, `docs/orchestration.md` §8b): the notes of a chapter's
//! round, the candidate kept next to the chapter under `revision_policy: manual_confirm`
//! (`chapters/chapter-NNN-revision.json`), and the author's decision.
//!
//! A candidate revises either the chapter in flight (its staged text) or a committed one.
//! Applying to the staged text is a revision round the author chose (`chapter stage revising`
//! first, then the candidate becomes the draft the Summarizer and the judge see again);
//! applying to a committed chapter replaces its text through the commit journal and leaves a
//! `chapter_rebuild` pending action: its summary and state delta were made from the old text.
//!
//! Layer: commands — the work behind a command (stages, volumes, spec, reviews, import, export, the
//! guard); the top.

use std::time::Duration;

use serde::Serialize;

use novel_core::model::checkpoint::PendingAction;
use novel_core::model::revision::{Revision, RevisionNote, RevisionStatus, RevisionTarget};
use novel_core::model::settings::RevisionPolicy;
use novel_core::model::{Checkpoint, FileKind, PipelineStage};
use novel_core::pipeline::text_digest;
use novel_core::revision::{self as rules, NotesAction};

use crate::chapter::{self, Journal, JournalKind, JournalWrite, load_checkpoint};
use crate::error::StoreError;
use crate::io::{self, read_text, to_json_text};
use crate::layout;
use crate::lock::{self, LockError};
use crate::project::Project;

pub use novel_core::revision::{PENDING_CANDIDATE, PENDING_REBUILD};

/// Why a revision command refuses.
#[derive(Debug, thiserror::Error)]
pub enum RevisionError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    Lock(#[from] LockError),
    #[error("第 {chapter} 章既没有提交，也不在写")]
    NoChapter { chapter: u32 },
    #[error("还没有任何章节（没有在写的，也没有提交的）")]
    NothingYet,
    #[error("第 {chapter} 章这一轮没有带修订指令的意见，不保存候选，章节保持不变")]
    NoNotes { chapter: u32 },
    #[error("候选与第 {chapter} 章现在的正文完全相同")]
    Same { chapter: u32 },
    #[error("第 {chapter} 章没有修订候选（{file}）")]
    NoCandidate { chapter: u32, file: String },
    #[error("第 {chapter} 章的修订候选已经{status}，不能再处理")]
    Decided { chapter: u32, status: &'static str },
    #[error("第 {chapter} 章的正文在候选生成之后改过（{file}），候选已过时")]
    Stale { chapter: u32, file: String },
    #[error("第 {inflight} 章正在写，不能改已提交的第 {chapter} 章")]
    InFlight { chapter: u32, inflight: u32 },
    /// Moving the chapter in flight into its revision round failed.
    #[error("{0}")]
    Chapter(Box<crate::stage::ChapterError>, u32),
    #[error("第 {chapter} 章处于 {stage}，{wanted}")]
    StageOrder {
        chapter: u32,
        stage: &'static str,
        wanted: &'static str,
    },
}

impl RevisionError {
    pub fn code(&self) -> &'static str {
        match self {
            RevisionError::Store(e) => e.code(),
            RevisionError::Lock(e) => e.code(),
            RevisionError::NoChapter { .. } | RevisionError::NothingYet => "E_NO_CHAPTER",
            RevisionError::NoNotes { .. } => "E_NO_REVISION_NOTES",
            RevisionError::Same { .. } => "E_REVISION_SAME",
            RevisionError::NoCandidate { .. } => "E_NO_REVISION",
            RevisionError::Decided { .. } => "E_REVISION_DECIDED",
            RevisionError::Stale { .. } => "E_REVISION_STALE",
            RevisionError::InFlight { .. } => "E_INFLIGHT",
            RevisionError::StageOrder { .. } => "E_STAGE_ORDER",
            RevisionError::Chapter(e, _) => e.code(),
        }
    }

    /// Exit 3 (the pipeline or the lock is in the way) as opposed to 1 (nothing to do) and
    /// 2 (usage or project).
    pub fn is_conflict(&self) -> bool {
        matches!(self, RevisionError::Store(e) if e.is_conflict())
            || matches!(
                self,
                RevisionError::Lock(_)
                    | RevisionError::Decided { .. }
                    | RevisionError::Chapter(..)
                    | RevisionError::Stale { .. }
                    | RevisionError::InFlight { .. }
                    | RevisionError::StageOrder { .. }
            )
    }

    /// Exit 1: the command had nothing to act on.
    pub fn is_nothing(&self) -> bool {
        matches!(
            self,
            RevisionError::NoNotes { .. } | RevisionError::Same { .. }
        )
    }

    pub fn hint(&self) -> String {
        match self {
            RevisionError::Store(e) => e.hint(),
            RevisionError::Lock(e) => e.hint(),
            RevisionError::NoChapter { .. } | RevisionError::NothingYet => {
                "给出已提交或正在写的章节：--chapter N".to_string()
            }
            RevisionError::NoNotes { chapter } => format!(
                "novel revision notes --chapter {chapter} 列出这一轮的修订意见；作者自己要改的地方用 --note \"改什么\" 写明再保存；都没有就照常继续"
            ),
            RevisionError::Same { .. } => {
                "候选应是按修订意见改过的整章；确认写手写出的是修订稿".to_string()
            }
            RevisionError::NoCandidate { chapter, .. } => {
                format!("先按意见生成修订稿，再 novel revision save --chapter {chapter} 文件")
            }
            RevisionError::Decided { chapter, .. } => {
                format!("要再修订，重新生成修订稿并 novel revision save --chapter {chapter} 文件")
            }
            RevisionError::Stale { chapter, .. } => format!(
                "按现在的正文重新生成修订稿并 novel revision save --chapter {chapter}，或 novel revision reject --chapter {chapter}"
            ),
            RevisionError::InFlight { inflight, .. } => format!(
                "先写完并提交第 {inflight} 章（或 novel chapter recover 看从哪继续），再处理已提交章节的修订"
            ),
            RevisionError::StageOrder { .. } => {
                "novel chapter recover 会告诉你从哪一步继续".to_string()
            }
            RevisionError::Chapter(e, n) => e.hint(*n),
        }
    }
}

/// Where the chapter a revision is about lives now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Place {
    Staged,
    Committed,
}

impl Place {
    fn target(self) -> RevisionTarget {
        match self {
            Place::Staged => RevisionTarget::Staged,
            Place::Committed => RevisionTarget::Committed,
        }
    }

    fn text_file(self, n: u32) -> String {
        match self {
            Place::Staged => layout::staging_chapter(n),
            Place::Committed => layout::chapter_file(n),
        }
    }
}

fn place_of(project: &Project, cp: &Checkpoint, n: u32) -> Result<Place, RevisionError> {
    if cp.inflight_chapter == Some(n) && project.path(&layout::staging_chapter(n)).is_file() {
        return Ok(Place::Staged);
    }
    if n <= cp.last_completed_chapter && project.path(&layout::chapter_file(n)).is_file() {
        return Ok(Place::Committed);
    }
    Err(RevisionError::NoChapter { chapter: n })
}

/// The chapter `novel revision notes` looks at by default: the one in flight, else the last
/// committed.
pub fn default_chapter(cp: &Checkpoint) -> Result<u32, RevisionError> {
    match (cp.inflight_chapter, cp.last_completed_chapter) {
        (Some(n), _) => Ok(n),
        (None, 0) => Err(RevisionError::NothingYet),
        (None, n) => Ok(n),
    }
}

/// `novel revision notes`: the notes of the chapter's current round and what they lead to.
#[derive(Debug, Clone, Serialize)]
pub struct NotesReport {
    pub chapter: u32,
    pub target: RevisionTarget,
    pub policy: RevisionPolicy,
    pub action: NotesAction,
    pub notes: Vec<RevisionNote>,
    /// The notes as one numbered block (what the reviser is handed).
    pub text: String,
    /// The evaluations read, project-relative.
    pub evaluations: Vec<String>,
    /// The candidate file, when there is one, and its status.
    pub candidate: Option<CandidateInfo>,
}

#[derive(Debug, Clone, Serialize)]
pub struct CandidateInfo {
    pub file: String,
    pub status: RevisionStatus,
}

/// The evaluations of chapter `n` where it lives, each with its judge's name.
fn evaluations_of(
    project: &Project,
    place: Place,
    n: u32,
) -> Result<Vec<(String, String, novel_core::model::Evaluation)>, StoreError> {
    let found = match place {
        Place::Staged => chapter::staged_evaluations(project, n)?,
        Place::Committed => committed_evaluations(project, n)?,
    };
    let stem = novel_core::naming::evaluation_stem(n);
    Ok(found
        .into_iter()
        .map(|(rel, e)| {
            let name = rel.rsplit('/').next().unwrap_or_default();
            let judge = name
                .strip_prefix(&stem)
                .and_then(|t| t.strip_suffix(".json"))
                .and_then(|t| t.strip_prefix('-'))
                .map_or_else(|| "primary".to_string(), str::to_string);
            (rel, judge, e)
        })
        .collect())
}

fn committed_evaluations(
    project: &Project,
    n: u32,
) -> Result<Vec<(String, novel_core::model::Evaluation)>, StoreError> {
    let stem = novel_core::naming::evaluation_stem(n);
    let mut names: Vec<String> = match std::fs::read_dir(project.path("evaluations")) {
        Ok(entries) => entries
            .filter_map(Result::ok)
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|name| {
                name.strip_prefix(&stem)
                    .and_then(|t| t.strip_suffix(".json"))
                    .is_some_and(|t| t.is_empty() || t.starts_with('-'))
            })
            .collect(),
        Err(_) => Vec::new(),
    };
    names.sort_by_key(|n| (n.len(), n.clone()));
    let mut out = Vec::new();
    for name in names {
        let rel = format!("evaluations/{name}");
        out.push((
            rel.clone(),
            read_model(project, &rel, FileKind::Evaluation)?,
        ));
    }
    Ok(out)
}

/// Reads a project file as its model type, schema-checked (the first problem is the error).
fn read_model<T: serde::de::DeserializeOwned>(
    project: &Project,
    rel: &str,
    kind: FileKind,
) -> Result<T, StoreError> {
    let value = io::read_json_value(&project.path(rel))?;
    if let Some(f) = novel_core::validate::check_document(rel, kind, &value)
        .into_iter()
        .next()
    {
        return Err(StoreError::Model {
            path: project.path(rel),
            what: kind.label(),
            message: f.brief(),
        });
    }
    serde_json::from_value(value).map_err(|e| StoreError::Model {
        path: project.path(rel),
        what: kind.label(),
        message: e.to_string(),
    })
}

/// The leak check of the text as it is now (a result about an older draft does not count).
fn leak_of(
    project: &Project,
    place: Place,
    n: u32,
    text: &str,
) -> Result<Option<novel_core::gate::LeakCheck>, StoreError> {
    let found = match place {
        Place::Staged => chapter::leak_result(project, n)?,
        Place::Committed => {
            let path = project.path(&layout::log_file(n));
            if !path.is_file() {
                return Ok(None);
            }
            io::read_json_value(&path)?
                .get("leak_check")
                .and_then(|v| serde_json::from_value(v.clone()).ok())
        }
    };
    let digest = text_digest(text.as_bytes());
    Ok(found.filter(|l| l.text_digest.as_deref().is_none_or(|d| d == digest)))
}

/// The revision file of chapter `n`, if there is one.
pub fn load(project: &Project, n: u32) -> Result<Option<Revision>, StoreError> {
    let rel = layout::revision_file(n);
    if !project.path(&rel).exists() {
        return Ok(None);
    }
    read_model(project, &rel, FileKind::Revision).map(Some)
}

fn gather_notes(
    project: &Project,
    place: Place,
    n: u32,
) -> Result<(Vec<RevisionNote>, Vec<String>), StoreError> {
    let text = read_text(&project.path(&place.text_file(n)))?;
    let evals = evaluations_of(project, place, n)?;
    let leak = leak_of(project, place, n, &text)?;
    let labelled: Vec<(&str, &novel_core::model::Evaluation)> =
        evals.iter().map(|(_, j, e)| (j.as_str(), e)).collect();
    let notes = rules::collect(&labelled, leak.as_ref());
    Ok((notes, evals.into_iter().map(|(rel, _, _)| rel).collect()))
}

/// `novel revision notes [--chapter N]`.
pub fn notes(project: &Project, chapter: Option<u32>) -> Result<NotesReport, RevisionError> {
    let cp = load_checkpoint(project)?;
    let n = match chapter {
        Some(n) => n,
        None => default_chapter(&cp)?,
    };
    let place = place_of(project, &cp, n)?;
    let policy = crate::settings::load(project)?.revision_policy;
    let (notes, evaluations) = gather_notes(project, place, n)?;
    let candidate = load(project, n)?.map(|r| CandidateInfo {
        file: layout::revision_file(n),
        status: r.status,
    });
    Ok(NotesReport {
        chapter: n,
        target: place.target(),
        policy,
        action: rules::action(policy, &notes),
        text: rules::render(&notes),
        notes,
        evaluations,
        candidate,
    })
}

/// What `novel revision save` did.
#[derive(Debug, Clone, Serialize)]
pub struct Saved {
    pub chapter: u32,
    pub file: String,
    pub target: RevisionTarget,
    pub notes: usize,
    /// A pending candidate this one replaced.
    pub replaced: bool,
    pub pending_action: String,
}

fn pending_id(n: u32) -> String {
    format!("revision-{}", layout::chapter_stem(n))
}

fn rebuild_id(n: u32) -> String {
    format!("rebuild-{}", layout::chapter_stem(n))
}

/// `novel revision save --chapter N FILE`: keeps `candidate` (the revised chapter) with the
/// notes that produced it and marks the chapter pending; the chapter itself is not touched.
/// For the chapter in flight `token` must be the lock's; the checkpoint is written under the
/// project lock either way.
pub fn save(
    project: &Project,
    n: u32,
    candidate: &str,
    author_notes: &[String],
    token: Option<&str>,
    stale_after: Duration,
) -> Result<Saved, RevisionError> {
    let _guard = lock::guard(project)?;
    let cp = load_checkpoint(project)?;
    let place = place_of(project, &cp, n)?;
    if place == Place::Staged {
        lock::heartbeat(project, token.unwrap_or_default())?;
        if cp.pipeline_stage != Some(PipelineStage::Judged) {
            return Err(RevisionError::StageOrder {
                chapter: n,
                stage: novel_core::pipeline::stage_name(cp.pipeline_stage),
                wanted: "修订候选要在评审与门控之后（judged）保存",
            });
        }
    }
    let (mut notes, _) = gather_notes(project, place, n)?;
    // What the author asked for (a misspelt name, a sentence to cut): the candidate's reason
    // when no judge asked.
    notes.extend(
        author_notes
            .iter()
            .filter(|t| !t.trim().is_empty())
            .map(|t| RevisionNote {
                source: AUTHOR_NOTE.to_string(),
                target: String::new(),
                instruction: t.trim().to_string(),
                blocking: false,
                extra: Default::default(),
            }),
    );
    if notes.is_empty() {
        return Err(RevisionError::NoNotes { chapter: n });
    }
    let text = read_text(&project.path(&place.text_file(n)))?;
    if text == candidate {
        return Err(RevisionError::Same { chapter: n });
    }
    let _held = lock::Held::take(project, stale_after)?;
    let mut cp = load_checkpoint(project)?;
    let replaced = load(project, n)
        .ok()
        .flatten()
        .is_some_and(|r| r.status == RevisionStatus::Pending);
    let record = Revision {
        schema_version: 1,
        chapter: n,
        status: RevisionStatus::Pending,
        target: place.target(),
        created_at: crate::time::now_iso(),
        decided_at: None,
        base_digest: text_digest(text.as_bytes()),
        notes: notes.clone(),
        candidate: candidate.to_string(),
        original: None,
        extra: Default::default(),
    };
    let file = layout::revision_file(n);
    let id = pending_id(n);
    cp.pending_actions.retain(|a| a.id != id);
    cp.pending_actions
        .push(candidate_action(&record, &id, &file, notes.len()));
    // The record and the pending action together (a crash between them would leave a
    // candidate nobody is asked about).
    write_with_checkpoint(project, &record, &cp)?;
    Ok(Saved {
        chapter: n,
        file,
        target: place.target(),
        notes: notes.len(),
        replaced,
        pending_action: id,
    })
}

/// The checkpoint's pending action `id` for the candidate `record` kept in `file`.
fn candidate_action(record: &Revision, id: &str, file: &str, notes: usize) -> PendingAction {
    let mut action = PendingAction {
        id: id.to_string(),
        kind: PENDING_CANDIDATE.to_string(),
        created_at: Some(record.created_at.clone()),
        extra: Default::default(),
    };
    action
        .extra
        .insert("chapter".into(), serde_json::json!(record.chapter));
    action.extra.insert("file".into(), serde_json::json!(file));
    action
        .extra
        .insert("notes".into(), serde_json::json!(notes));
    action
}

/// The `source` of a revision note the author gave (`revision save --note`).
pub const AUTHOR_NOTE: &str = "author";

/// Where ChapterWriter writes a candidate (`任务：修订候选`): `staging/candidates/chapter-NNN.md`.
pub fn candidate_draft(n: u32) -> String {
    format!("staging/candidates/{}.md", layout::chapter_stem(n))
}

/// `novel revision save --chapter N FILE`: [`save`] with the candidate read from `file`; a
/// file at [`candidate_draft`] is removed once the candidate is kept (it lives on in the
/// revision file), so nothing is left behind in staging.
pub fn save_file(
    project: &Project,
    n: u32,
    file: &std::path::Path,
    author_notes: &[String],
    token: Option<&str>,
    stale_after: Duration,
) -> Result<Saved, RevisionError> {
    let _guard = lock::guard(project)?;
    let text = read_text(file)?;
    let saved = save(project, n, &text, author_notes, token, stale_after)?;
    let draft = project.path(&candidate_draft(n));
    if let (Ok(a), Ok(b)) = (std::fs::canonicalize(file), std::fs::canonicalize(&draft))
        && a == b
    {
        // Best effort: a leftover draft is harmless (the next save replaces it).
        let _ = std::fs::remove_file(&draft);
    }
    Ok(saved)
}

/// The pending candidate of chapter `n`.
fn pending(project: &Project, n: u32) -> Result<Revision, RevisionError> {
    let rec = load(project, n)?.ok_or_else(|| RevisionError::NoCandidate {
        chapter: n,
        file: layout::revision_file(n),
    })?;
    match rec.status {
        RevisionStatus::Pending => Ok(rec),
        RevisionStatus::Accepted => Err(RevisionError::Decided {
            chapter: n,
            status: "采纳",
        }),
        RevisionStatus::Rejected => Err(RevisionError::Decided {
            chapter: n,
            status: "拒绝",
        }),
    }
}

/// What `novel revision apply` did.
#[derive(Debug, Clone, Serialize)]
pub struct Applied {
    pub chapter: u32,
    pub target: RevisionTarget,
    /// The chapter file the candidate replaced.
    pub file: String,
    pub chars: usize,
    /// What must be made again from the new text (a committed chapter only).
    pub rebuild: Option<Rebuild>,
}

/// What a committed chapter's new text invalidates, and how to redo it.
#[derive(Debug, Clone, Serialize)]
pub struct Rebuild {
    pub chapter: u32,
    pub summary: String,
    pub last_completed_chapter: u32,
    /// The chapter is the last committed one: its changelog line can be replaced.
    pub is_last: bool,
    pub steps: Vec<String>,
    pub pending_action: String,
}

/// `novel revision apply --chapter N`.
pub fn apply(
    project: &Project,
    n: u32,
    token: Option<&str>,
    stale_after: Duration,
    count: &dyn Fn(&str) -> usize,
) -> Result<Applied, RevisionError> {
    let _guard = lock::guard(project)?;
    lock::ensure_no_journal(project)?;
    let cp = load_checkpoint(project)?;
    let place = place_of(project, &cp, n)?;
    let rec = pending(project, n)?;
    crate::io::pausepoint("revision-read");
    match place {
        Place::Staged => apply_staged(project, &cp, n, rec, token, count),
        Place::Committed => {
            if let Some(i) = cp.inflight_chapter {
                return Err(RevisionError::InFlight {
                    chapter: n,
                    inflight: i,
                });
            }
            apply_committed(project, n, rec, stale_after, count)
        }
    }
}

/// The text the candidate replaces, checked to be the one it was made from (a rerun after a
/// crash finds the candidate itself there, and the original already kept).
fn check_base(
    project: &Project,
    place: Place,
    n: u32,
    rec: &Revision,
) -> Result<Option<String>, RevisionError> {
    let file = place.text_file(n);
    let text = read_text(&project.path(&file))?;
    if text_digest(text.as_bytes()) == rec.base_digest {
        return Ok(Some(text));
    }
    if text == rec.candidate {
        return Ok(rec.original.clone());
    }
    Err(RevisionError::Stale { chapter: n, file })
}

fn decided(mut rec: Revision, status: RevisionStatus) -> Revision {
    rec.status = status;
    rec.decided_at = Some(crate::time::now_iso());
    rec
}

fn apply_staged(
    project: &Project,
    cp: &Checkpoint,
    n: u32,
    rec: Revision,
    token: Option<&str>,
    count: &dyn Fn(&str) -> usize,
) -> Result<Applied, RevisionError> {
    let token = token.unwrap_or_default();
    lock::heartbeat(project, token)?;
    let mut rec = rec;
    // Fail before any move when the text changed since the candidate was made.
    check_base(project, Place::Staged, n, &rec)?;
    match cp.pipeline_stage {
        // Taking the candidate is a revision round the author chose: the round sent back is
        // archived and counted, as `chapter stage revising` does.
        Some(PipelineStage::Judged) => {
            let figures = crate::stage::StageFigures::default();
            crate::stage::advance(
                project,
                PipelineStage::Revising,
                token,
                &figures,
                &crate::stage::TextTools::plain(),
            )
            .map_err(|e| RevisionError::Chapter(Box::new(e), n))?;
        }
        // Already in the round (an earlier apply was interrupted after the move).
        Some(PipelineStage::Revising) => {}
        _ => {
            return Err(RevisionError::StageOrder {
                chapter: n,
                stage: novel_core::pipeline::stage_name(cp.pipeline_stage),
                wanted: "在写章节的修订候选只能在评审与门控之后采纳",
            });
        }
    }
    // `stage revising` moved the round's text to its archive (the writer of a round writes a new
    // file): the original is read there until the candidate is in place.
    rec.original = if project.path(&layout::staging_chapter(n)).is_file() {
        check_base(project, Place::Staged, n, &rec)?
    } else {
        let round = load_checkpoint(project)?.revision_count;
        let file = format!(
            "{}/{}.md",
            layout::revision_dir(n, round),
            layout::chapter_stem(n)
        );
        let text = read_text(&project.path(&file))?;
        if text_digest(text.as_bytes()) != rec.base_digest {
            return Err(RevisionError::Stale { chapter: n, file });
        }
        Some(text)
    };
    // The original is kept in the revision file before the text is replaced, so a crash in
    // between loses nothing; running apply again finds the candidate in place and finishes.
    io::write_json(&project.path(&layout::revision_file(n)), &rec)?;
    let file = layout::staging_chapter(n);
    io::write_atomic(&project.path(&file), rec.candidate.as_bytes())?;
    let chars = count(&rec.candidate);
    io::write_json(
        &project.path(&layout::revision_file(n)),
        &decided(rec, RevisionStatus::Accepted),
    )?;
    let mut cp = load_checkpoint(project)?;
    cp.pending_actions.retain(|a| a.id != pending_id(n));
    chapter::write_checkpoint(project, &cp)?;
    Ok(Applied {
        chapter: n,
        target: RevisionTarget::Staged,
        file,
        chars,
        rebuild: None,
    })
}

fn rebuild_steps(n: u32, last: u32) -> Vec<String> {
    let summary = layout::summary_file(n);
    if n == last {
        vec![
            format!("摘要员按新正文重写 {summary}，并写出第 {n} 章的状态增量"),
            format!(
                "novel state rebuild --until-chapter {} --write（退回第 {n} 章之前的状态）",
                n - 1
            ),
            format!("novel ops apply <第 {n} 章的新增量>"),
            format!("novel pending resolve {}", rebuild_id(n)),
        ]
    } else {
        vec![
            format!("摘要员按新正文重写 {summary}"),
            format!(
                "新正文改变了人物、物品、地点或伏笔时：把差异写成一份第 {last} 章的修正增量，novel ops apply --manual <文件>（后面各章的状态不动）"
            ),
            format!("novel pending resolve {}", rebuild_id(n)),
        ]
    }
}

fn apply_committed(
    project: &Project,
    n: u32,
    rec: Revision,
    stale_after: Duration,
    count: &dyn Fn(&str) -> usize,
) -> Result<Applied, RevisionError> {
    let mut held = lock::Held::take(project, stale_after)?;
    let mut rec = rec;
    rec.original = check_base(project, Place::Committed, n, &rec)?;
    let mut cp = load_checkpoint(project)?;
    let file = layout::chapter_file(n);
    let chars = count(&rec.candidate);
    let mut writes = vec![JournalWrite {
        path: file.clone(),
        content: rec.candidate.clone(),
    }];
    let log_rel = layout::log_file(n);
    if project.path(&log_rel).is_file()
        && let Ok(mut log) = io::read_json_value(&project.path(&log_rel))
        && let Some(obj) = log.as_object_mut()
    {
        obj.insert(crate::status::LOG_CHARS.into(), serde_json::json!(chars));
        crate::chapter::record_committed(obj, &[(file.as_str(), rec.candidate.as_str())]);
        writes.push(JournalWrite {
            path: log_rel,
            content: to_json_text(&log),
        });
    }
    let last = cp.last_completed_chapter;
    let steps = rebuild_steps(n, last);
    let accepted = decided(rec, RevisionStatus::Accepted);
    writes.push(JournalWrite {
        path: layout::revision_file(n),
        content: to_json_text(&accepted),
    });
    cp.pending_actions
        .retain(|a| a.id != pending_id(n) && a.id != rebuild_id(n));
    let mut action = PendingAction {
        id: rebuild_id(n),
        kind: PENDING_REBUILD.to_string(),
        created_at: accepted.decided_at.clone(),
        extra: Default::default(),
    };
    action.extra.insert("chapter".into(), serde_json::json!(n));
    action
        .extra
        .insert("steps".into(), serde_json::json!(steps));
    cp.pending_actions.push(action);
    writes.push(JournalWrite {
        path: layout::CHECKPOINT.to_string(),
        content: crate::io::rewrite_text(&project.path(layout::CHECKPOINT), &cp),
    });
    let journal = Journal::files(n, held.hand_to_journal(), writes, JournalKind::Revision);
    chapter::commit(project, journal)?;
    Ok(Applied {
        chapter: n,
        target: RevisionTarget::Committed,
        file,
        chars,
        rebuild: Some(Rebuild {
            chapter: n,
            summary: layout::summary_file(n),
            last_completed_chapter: last,
            is_last: n == last,
            steps,
            pending_action: rebuild_id(n),
        }),
    })
}

/// `novel revision reject --chapter N`: the candidate is kept, marked rejected; the chapter
/// is untouched.
pub fn reject(project: &Project, n: u32, stale_after: Duration) -> Result<Revision, RevisionError> {
    let _guard = lock::guard(project)?;
    let _held = lock::Held::take(project, stale_after)?;
    let rec = decided(pending(project, n)?, RevisionStatus::Rejected);
    let mut cp = load_checkpoint(project)?;
    cp.pending_actions.retain(|a| a.id != pending_id(n));
    write_with_checkpoint(project, &rec, &cp)?;
    Ok(rec)
}

/// The revision record of its chapter and the checkpoint, all or nothing (through the journal).
fn write_with_checkpoint(
    project: &Project,
    rec: &Revision,
    cp: &Checkpoint,
) -> Result<(), StoreError> {
    let writes = vec![
        JournalWrite {
            path: layout::revision_file(rec.chapter),
            content: to_json_text(rec),
        },
        JournalWrite {
            path: layout::CHECKPOINT.to_string(),
            content: crate::io::rewrite_text(&project.path(layout::CHECKPOINT), cp),
        },
    ];
    let journal = Journal::files(rec.chapter, String::new(), writes, JournalKind::Revision);
    chapter::commit(project, journal).map(drop)
}
