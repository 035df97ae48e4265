//! `novel import` on disk: reading the manuscript's bytes, the facts of the project it goes
//! into, and writing the plan (`novel_core::import`) all or nothing — every chapter, its
//! pipeline log, the extras, the volume ranges and the checkpoint go through one commit journal
//! under the project lock, so an import killed half-way is finished by `novel chapter recover`
//! and never left half done. Then the backfill: the pending action `import-backfill` lists the
//! imported chapters that still need a summary, a state delta and storyline memory; the
//! Summarizer fills them chapter by chapter and `novel import backfill --done N` moves it on.

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::json;

use novel_core::import::{
    Action, Plan, Section, SectionKind, Target, VolumeRange, backfill_chapters, set_backfill,
};
use novel_core::model::{ChangelogEntry, Checkpoint, PendingAction};

use crate::chapter::{Journal, JournalKind, JournalWrite, load_checkpoint};
use crate::io::{read_text, to_json_text};
use crate::layout;
use crate::lock::{self, LockError};
use crate::{Project, StoreError};

pub use novel_core::import::{BACKFILL_ID, BACKFILL_TYPE};

/// Why an import or a backfill step cannot go on.
#[derive(Debug, thiserror::Error)]
pub enum ImportError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    Lock(#[from] LockError),
    #[error("{path} 中没有 .txt 或 .md 文件")]
    EmptyFolder { path: PathBuf },
    #[error("第 {chapter} 章正在写（阶段未完成），现在不能导入")]
    InFlight { chapter: u32 },
    #[error("项目在读取之后变了（最后完成的章节由第 {planned} 章变为第 {now} 章）")]
    Changed { planned: u32, now: u32 },
    #[error("没有待补全的导入章节（断点中没有 import-backfill 待处理事项）")]
    NoBackfill,
    #[error("第 {chapter} 章不是下一个待补全的章节（下一个是第 {next} 章）")]
    NotNext { chapter: u32, next: u32 },
    #[error("第 {chapter} 章还不能标记为补全：{}", missing.join("；"))]
    NotDone { chapter: u32, missing: Vec<String> },
}

impl ImportError {
    pub fn code(&self) -> &'static str {
        match self {
            ImportError::Store(e) => e.code(),
            ImportError::Lock(e) => e.code(),
            ImportError::EmptyFolder { .. } => "E_IMPORT_SOURCE",
            ImportError::InFlight { .. } => "E_INFLIGHT",
            ImportError::Changed { .. } => "E_IMPORT_CHANGED",
            ImportError::NoBackfill => "E_NO_BACKFILL",
            ImportError::NotNext { .. } => "E_BACKFILL_ORDER",
            ImportError::NotDone { .. } => "E_BACKFILL_INCOMPLETE",
        }
    }

    pub fn hint(&self) -> String {
        match self {
            ImportError::Store(e) => e.hint(),
            ImportError::Lock(e) => e.hint(),
            ImportError::EmptyFolder { .. } => {
                "给出一个 .txt/.md 文件，或放着章节文件（001.txt、第12章 标题.txt …）的文件夹"
                    .into()
            }
            ImportError::InFlight { chapter } => format!(
                "先写完并提交第 {chapter} 章（/novel:continue），或用 novel chapter recover 查看从哪一步继续"
            ),
            ImportError::Changed { .. } => "重新运行这条导入命令".into(),
            ImportError::NoBackfill => {
                "导入书稿后才有补全；novel pending list 查看待处理事项".into()
            }
            ImportError::NotNext { next, .. } => {
                format!("按顺序补全：先补第 {next} 章（novel import backfill 查看）")
            }
            ImportError::NotDone { chapter, .. } => format!(
                "Summarizer 写出 summaries/ 下的摘要，状态增量用 novel ops apply 合并（解析不了时 novel ops skip --chapter {chapter} --reason …），再标记"
            ),
        }
    }

    /// Conflicts exit 3; a step not done yet exits 1; the rest 2.
    pub fn exit_kind(&self) -> u8 {
        match self {
            ImportError::Store(e) if e.is_conflict() => 3,
            ImportError::Lock(LockError::Store(_)) | ImportError::Store(_) => 2,
            ImportError::Lock(_)
            | ImportError::InFlight { .. }
            | ImportError::Changed { .. }
            | ImportError::NotNext { .. } => 3,
            ImportError::NotDone { .. } => 1,
            _ => 2,
        }
    }
}

/// One file of the manuscript.
#[derive(Debug, Clone)]
pub struct SourceFile {
    /// As shown to the author: the file name (inside a folder) or the path given.
    pub shown: String,
    /// The file name without its extension.
    pub stem: String,
    pub bytes: Vec<u8>,
}

/// The manuscript's files: the file itself, or every `.txt`/`.md` file of a folder (not
/// hidden, not in subfolders), by name.
pub fn read_source(path: &Path) -> Result<Vec<SourceFile>, ImportError> {
    let read = |p: &Path, shown: String| -> Result<SourceFile, ImportError> {
        Ok(SourceFile {
            shown,
            stem: p
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default(),
            bytes: fs::read(p).map_err(|e| StoreError::io(p, e))?,
        })
    };
    let meta = fs::metadata(path).map_err(|e| StoreError::io(path, e))?;
    if !meta.is_dir() {
        return Ok(vec![read(path, path.display().to_string())?]);
    }
    let mut names: Vec<String> = fs::read_dir(path)
        .map_err(|e| StoreError::io(path, e))?
        .filter_map(|e| e.ok())
        .filter(|e| e.path().is_file())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| {
            let lower = n.to_lowercase();
            !n.starts_with('.') && (lower.ends_with(".txt") || lower.ends_with(".md"))
        })
        .collect();
    names.sort();
    if names.is_empty() {
        return Err(ImportError::EmptyFolder {
            path: path.to_path_buf(),
        });
    }
    names.into_iter().map(|n| read(&path.join(&n), n)).collect()
}

/// What the plan needs to know about where it imports: `None` (no project yet: one is made,
/// volume 1), or an existing project — taken as new when it has no chapter yet (just made by
/// `novel init`), else imported into after its last chapter.
pub fn target_for(project: Option<&Project>) -> Result<Target, ImportError> {
    let Some(project) = project else {
        return Ok(Target {
            new_project: true,
            current_volume: 1,
            ..Default::default()
        });
    };
    let target = target(project)?;
    let fresh = target.last_completed == 0 && target.chapter_files.is_empty();
    Ok(Target {
        new_project: fresh,
        ..target
    })
}

/// What the plan needs to know about the project.
fn target(project: &Project) -> Result<Target, ImportError> {
    // An interrupted write (an import among them) is finished before anything is planned.
    lock::ensure_no_journal(project)?;
    let cp = load_checkpoint(project)?;
    if let Some(n) = cp.inflight_chapter {
        return Err(ImportError::InFlight { chapter: n });
    }
    let chapter_files = crate::select::committed_chapters(project)?
        .into_iter()
        .map(|(n, _)| n)
        .collect();
    let extra_files = fs::read_dir(project.path(layout::EXTRAS_DIR))
        .map(|r| {
            r.filter_map(|e| e.ok())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    Ok(Target {
        last_completed: cp.last_completed_chapter,
        chapter_files,
        extra_files,
        current_volume: cp.current_volume,
        new_project: false,
    })
}

/// What the import wrote.
#[derive(Debug, Clone)]
pub struct Written {
    pub files: usize,
    /// Volume ranges written as `volumes/vol-NN/storyline-schedule.json`.
    pub schedules: Vec<u32>,
    /// Volumes whose range the project already knew (left as they are).
    pub kept: Vec<u32>,
    pub checkpoint: Checkpoint,
}

/// `# 第12章 标题` and the body: a committed chapter's text.
pub fn chapter_text(n: u32, title: &str, body: &str) -> String {
    let head = if title.is_empty() {
        format!("# 第{n}章")
    } else {
        format!("# 第{n}章 {title}")
    };
    format!("{head}\n\n{body}\n")
}

fn extra_text(s: &Section) -> String {
    let head = match (s.name.as_str(), s.title.as_str()) {
        (name, "") => name.to_string(),
        ("", title) => title.to_string(),
        (name, title) => format!("{name} {title}"),
    };
    format!("# {head}\n\n{}\n", s.body)
}

fn import_log(n: u32, chars: usize, s: &Section) -> String {
    let log = json!({
        "chapter": n,
        "stages": [{"name": "import", "model": null, "input_tokens": null,
                    "output_tokens": null, "duration_ms": null}],
        "gate_decision": null,
        "revisions": 0,
        "force_passed": false,
        "total_duration_ms": null,
        "total_cost_usd": null,
        crate::status::LOG_CHARS: chars,
        "imported": {"file": s.file, "line": s.line, "source_number": s.number},
    });
    to_json_text(&log)
}

/// Writes the plan (its `import` rows; `sections` in the same order) into the project, all or
/// nothing, under the project lock. `new_project`: the import created the project (its state
/// then follows [`novel_core::import::state_after`]). `on_file` is called once per file prepared (a progress
/// bar). Nothing to import writes nothing.
pub fn write(
    project: &Project,
    plan: &Plan,
    sections: &[Section],
    new_project: bool,
    stale_after: Duration,
    on_file: &dyn Fn(),
) -> Result<Option<Written>, ImportError> {
    let held = lock::Held::take(project, stale_after)?;
    let mut cp = load_checkpoint(project)?;
    if let Some(n) = cp.inflight_chapter {
        return Err(ImportError::InFlight { chapter: n });
    }
    let Some(&last) = plan.imported.last() else {
        if plan.rows.iter().all(|r| r.action == Action::Skip) {
            return Ok(None);
        }
        return write_extras_only(project, plan, sections, held, on_file);
    };
    let first = plan.imported[0];
    if first != cp.next_chapter() {
        return Err(ImportError::Changed {
            planned: first - 1,
            now: cp.last_completed_chapter,
        });
    }
    let mut writes = file_writes(plan, sections, on_file);
    let (schedules, kept, volume_end) = schedule_writes(project, &plan.volumes, &mut writes);
    let files = writes.len();
    let before = cp.orchestrator_state;
    cp.orchestrator_state = novel_core::import::state_after(before, new_project, last, volume_end);
    cp.last_completed_chapter = last;
    if let Some(v) = plan.volumes.last() {
        cp.current_volume = cp.current_volume.max(v.volume);
    }
    cp.last_checkpoint_time = Some(crate::time::now_iso());
    add_backfill(&mut cp, &plan.imported);
    writes.push(JournalWrite {
        path: layout::CHECKPOINT.to_string(),
        content: crate::io::rewrite_text(&project.path(layout::CHECKPOINT), &cp),
    });
    let journal = Journal::files(last, held.into_journal_token(), writes, JournalKind::Import);
    crate::chapter::commit(project, journal)?;
    Ok(Some(Written {
        files,
        schedules,
        kept,
        checkpoint: cp,
    }))
}

/// Extras only (every chapter skipped): the extras through a journal as well.
fn write_extras_only(
    project: &Project,
    plan: &Plan,
    sections: &[Section],
    held: lock::Held<'_>,
    on_file: &dyn Fn(),
) -> Result<Option<Written>, ImportError> {
    let cp = load_checkpoint(project)?;
    let writes = file_writes(plan, sections, on_file);
    let files = writes.len();
    let journal = Journal::files(
        cp.last_completed_chapter,
        held.into_journal_token(),
        writes,
        JournalKind::Import,
    );
    crate::chapter::commit(project, journal)?;
    Ok(Some(Written {
        files,
        schedules: Vec::new(),
        kept: Vec::new(),
        checkpoint: cp,
    }))
}

/// The chapter texts, their logs and the extras of the `import` rows.
fn file_writes(plan: &Plan, sections: &[Section], on_file: &dyn Fn()) -> Vec<JournalWrite> {
    let mut writes = Vec::new();
    for (row, s) in plan.rows.iter().zip(sections) {
        if row.action != Action::Import {
            continue;
        }
        match (row.kind, row.chapter) {
            (SectionKind::Chapter, Some(n)) => {
                writes.push(JournalWrite {
                    path: row.target.clone(),
                    content: chapter_text(n, &s.title, &s.body),
                });
                writes.push(JournalWrite {
                    path: layout::log_file(n),
                    content: import_log(n, row.chars, s),
                });
            }
            _ => writes.push(JournalWrite {
                path: row.target.clone(),
                content: extra_text(s),
            }),
        }
        on_file();
    }
    writes
}

/// A `storyline-schedule.json` with the imported range for each volume whose range the project
/// does not know yet (no schedule file and no other source of `docs/orchestration.md` §5);
/// the others are kept as they are. Returns (written, kept, the last volume's end).
fn schedule_writes(
    project: &Project,
    volumes: &[VolumeRange],
    writes: &mut Vec<JournalWrite>,
) -> (Vec<u32>, Vec<u32>, Option<u32>) {
    let (mut written, mut kept, mut end) = (Vec::new(), Vec::new(), None);
    for v in volumes {
        let rel = format!("{}/storyline-schedule.json", layout::volume_dir(v.volume));
        let mut problems = Vec::new();
        let known = crate::next::volume_span(project, v.volume, &mut problems);
        if project.path(&rel).exists() || known.is_some() {
            kept.push(v.volume);
            end = known.map(|k| k.range[1]);
            continue;
        }
        let mut schedule = json!({
            "volume": v.volume,
            "chapter_range": v.range,
            "active_storylines": [],
        });
        if let Some(t) = &v.title {
            schedule["volume_title"] = json!(t);
        }
        schedule["imported"] = json!(true);
        writes.push(JournalWrite {
            path: rel,
            content: to_json_text(&schedule),
        });
        written.push(v.volume);
        end = Some(v.range[1]);
    }
    (written, kept, end)
}

/// Adds the imported chapters to the pending action (one per project, merged).
fn add_backfill(cp: &mut Checkpoint, chapters: &[u32]) {
    let mut all: BTreeSet<u32> = BTreeSet::new();
    if let Some(a) = cp.pending_actions.iter().find(|a| a.id == BACKFILL_ID) {
        all.extend(backfill_chapters(a));
    }
    all.extend(chapters.iter().copied());
    cp.pending_actions.retain(|a| a.id != BACKFILL_ID);
    let mut action = PendingAction {
        id: BACKFILL_ID.to_string(),
        kind: BACKFILL_TYPE.to_string(),
        created_at: Some(crate::time::now_iso()),
        extra: Default::default(),
    };
    set_backfill(&mut action, &all);
    cp.pending_actions.push(action);
}

/// Where one chapter's backfill stands.
#[derive(Debug, Clone, serde::Serialize)]
pub struct BackfillStep {
    pub chapter: u32,
    /// `summaries/chapter-NNN-summary.md`.
    pub summary: String,
    pub summary_exists: bool,
    /// The changelog has a line for the chapter (`ops apply` or `ops skip`).
    pub state_recorded: bool,
    /// Where the Summarizer writes the delta to apply (`staging/candidates/…`, a state-delta
    /// file the guard hook validates).
    pub delta: String,
    /// What is still missing, in Chinese.
    pub missing: Vec<String>,
}

/// The backfill's standing: the chapters left and the next one's step; `None` when there is
/// no backfill pending.
pub fn backfill_status(project: &Project) -> Result<Option<(Vec<u32>, BackfillStep)>, ImportError> {
    let cp = load_checkpoint(project)?;
    let Some(a) = cp.pending_actions.iter().find(|a| a.id == BACKFILL_ID) else {
        return Ok(None);
    };
    let left = backfill_chapters(a);
    let Some(&next) = left.first() else {
        return Ok(None);
    };
    Ok(Some((left, step(project, next)?)))
}

fn step(project: &Project, n: u32) -> Result<BackfillStep, ImportError> {
    let summary = layout::summary_file(n);
    let summary_exists = project.path(&summary).is_file();
    let state_recorded = changelog_has(project, n)?;
    let mut missing = Vec::new();
    if !summary_exists {
        missing.push(format!("摘要 {summary} 不存在"));
    }
    if !state_recorded {
        missing.push(format!(
            "变更日志中没有第 {n} 章（状态增量未用 ops apply 合并，也未用 ops skip 记为跳过）"
        ));
    }
    Ok(BackfillStep {
        chapter: n,
        summary,
        summary_exists,
        state_recorded,
        delta: format!("staging/candidates/{}-delta.json", layout::chapter_stem(n)),
        missing,
    })
}

/// Whether `state/changelog.jsonl` has a line for chapter `n` (read from the end: the
/// backfill's chapter is among the last lines).
fn changelog_has(project: &Project, n: u32) -> Result<bool, ImportError> {
    let path = project.path(layout::CHANGELOG);
    let text = match read_text(&path) {
        Ok(t) => t,
        Err(StoreError::Io { source, .. }) if source.kind() == std::io::ErrorKind::NotFound => {
            return Ok(false);
        }
        Err(e) => return Err(e.into()),
    };
    Ok(text
        .lines()
        .rev()
        .any(|l| serde_json::from_str::<ChangelogEntry>(l).is_ok_and(|e| e.chapter == n)))
}

/// `novel import backfill --done N`: N must be the next chapter and complete; it leaves the
/// list (the action goes with the last one). Under the project lock. Returns the chapters
/// left.
pub fn backfill_done(
    project: &Project,
    n: u32,
    stale_after: Duration,
) -> Result<Vec<u32>, ImportError> {
    let _guard = crate::lock::guard(project)?;
    let held = lock::Held::take(project, stale_after)?;
    let mut cp = load_checkpoint(project)?;
    let Some(i) = cp.pending_actions.iter().position(|a| a.id == BACKFILL_ID) else {
        return Err(ImportError::NoBackfill);
    };
    let left = backfill_chapters(&cp.pending_actions[i]);
    match left.first() {
        Some(&next) if next != n => return Err(ImportError::NotNext { chapter: n, next }),
        None => return Err(ImportError::NoBackfill),
        _ => {}
    }
    let s = step(project, n)?;
    if !s.missing.is_empty() {
        return Err(ImportError::NotDone {
            chapter: n,
            missing: s.missing,
        });
    }
    let rest: BTreeSet<u32> = left.into_iter().skip(1).collect();
    if rest.is_empty() {
        cp.pending_actions.remove(i);
    } else {
        set_backfill(&mut cp.pending_actions[i], &rest);
    }
    crate::chapter::write_checkpoint(project, &cp)?;
    held.release()?;
    Ok(rest.into_iter().collect())
}
