//! `novel import` on disk: reading the manuscript's bytes, the facts of the project it goes
//! into, and writing the plan (`novel_core::import`) all or nothing — every chapter, its
//! pipeline log, the extras, the volume ranges and the checkpoint go through one commit journal
//! under the project lock, so an import killed half-way is finished by `novel chapter recover`
//! and never left half done. Then the backfill: the pending action `import-backfill` lists the
//! imported chapters that still need a summary, a state delta and storyline memory; the
//! Summarizer fills them chapter by chapter and `novel import backfill --done N` moves it on.
//!
//! Layer: commands — the work behind a command (stages, volumes, spec, reviews, import, export, the
//! guard); the top.

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::json;

use novel_core::import::{
    Action, Furniture, Plan, Row, Section, SectionKind, Target, VolumeRange, backfill_chapters,
    set_backfill,
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
    #[error("{path} 不是普通文件（是设备、管道或套接字），不能当书稿读")]
    NotAFile { path: PathBuf },
    #[error("书稿 {path} 有 {size} 字节，超过导入的上限 {limit} 字节（约 2000 万字）")]
    TooLarge {
        path: PathBuf,
        size: u64,
        limit: u64,
    },
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
            ImportError::EmptyFolder { .. }
            | ImportError::NotAFile { .. }
            | ImportError::TooLarge { .. } => "E_IMPORT_SOURCE",
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
            ImportError::EmptyFolder { .. } | ImportError::NotAFile { .. } => {
                "给出一个 .txt/.md 文件，或放着章节文件（001.txt、第12章 标题.txt …）的文件夹"
                    .into()
            }
            ImportError::TooLarge { .. } => {
                "把书稿按卷拆成几个文件，依次导入（后一个文件的章号接着前一个）".into()
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
                "摘要员写出 summaries/ 下的摘要，状态增量用 novel ops apply 合并（解析不了时 novel ops skip --chapter {chapter} --reason …），再标记"
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
    /// A `.md` file (its text is Markdown: backslash escapes are read).
    pub markdown: bool,
    pub bytes: Vec<u8>,
}

/// The most a manuscript (a file, or all files of a folder together) may weigh: 64 MiB, some
/// 20 million 字 in UTF-8, well past the longest web novels. A bigger file is refused before
/// it is read (`/dev/zero` would never end), so an import's memory stays bounded.
pub const MAX_SOURCE_BYTES: u64 = 64 << 20;

/// Reads one regular file of at most `budget` bytes (more is refused, also for a file that
/// grows while it is read).
fn read_file(path: &Path, shown: String, budget: &mut u64) -> Result<SourceFile, ImportError> {
    use std::io::Read;
    let meta = fs::metadata(path).map_err(|e| StoreError::io(path, e))?;
    if !meta.is_file() {
        return Err(ImportError::NotAFile {
            path: path.to_path_buf(),
        });
    }
    let too_large = |size| ImportError::TooLarge {
        path: path.to_path_buf(),
        size,
        limit: MAX_SOURCE_BYTES,
    };
    if meta.len() > *budget {
        return Err(too_large(meta.len() + MAX_SOURCE_BYTES - *budget));
    }
    let file = fs::File::open(path).map_err(|e| StoreError::io(path, e))?;
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    file.take(*budget + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| StoreError::io(path, e))?;
    if bytes.len() as u64 > *budget {
        return Err(too_large(bytes.len() as u64 + MAX_SOURCE_BYTES - *budget));
    }
    *budget -= bytes.len() as u64;
    let markdown = path
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("md") || e.eq_ignore_ascii_case("markdown"));
    Ok(SourceFile {
        shown,
        stem: path
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default(),
        markdown,
        bytes,
    })
}

/// The manuscript's files: the file itself, or every `.txt`/`.md` file of a folder (not
/// hidden, not in subfolders, regular files only), by name. Refused: a device, a pipe, more
/// than [`MAX_SOURCE_BYTES`].
pub fn read_source(path: &Path) -> Result<Vec<SourceFile>, ImportError> {
    let mut budget = MAX_SOURCE_BYTES;
    let meta = fs::metadata(path).map_err(|e| StoreError::io(path, e))?;
    if !meta.is_dir() {
        return Ok(vec![read_file(
            path,
            path.display().to_string(),
            &mut budget,
        )?]);
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
    names
        .into_iter()
        .map(|n| read_file(&path.join(&n), n, &mut budget))
        .collect()
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

/// `# 第一回 标题` (the heading as the plan keeps it) and the body: a committed chapter's text.
pub fn chapter_text(heading: &str, body: &str) -> String {
    if body.is_empty() {
        // An empty chapter keeps its number and heading (`validate` lists it until written).
        return format!("# {heading}\n");
    }
    format!("# {heading}\n\n{body}\n")
}

/// What an extra is on export: `preface` (text before the first heading, no heading of its
/// own), `volume` (a volume heading's own text, no heading of its own), `extra` (楔子、番外 …,
/// with its heading).
pub fn extra_role(kind: SectionKind, heading: &str, volume: Option<u32>) -> &'static str {
    match (kind, heading.is_empty(), volume) {
        (SectionKind::Preface, true, Some(_)) => "volume",
        (_, true, _) => "preface",
        _ => "extra",
    }
}

/// An extra's file: front matter saying where it stands in the book (`after_chapter`, its
/// `volume`, its `role`), then its heading as written (none for a preface or a volume's own
/// text), then its text.
pub fn extra_text(row: &Row, s: &Section) -> String {
    let role = extra_role(s.kind, &row.heading, s.volume);
    let mut out = format!("---\nafter_chapter: {}\n", row.after_chapter.unwrap_or(0));
    if let Some(v) = s.volume {
        out.push_str(&format!("volume: {v}\n"));
    }
    out.push_str(&format!("role: {role}\n"));
    if role == "volume" {
        // The volume's heading travels with its text: a volume with no chapter of its own
        // (a last volume of 番外) has no schedule to keep it.
        out.push_str(&format!("volume_heading: \"{}\"\n", s.name));
    }
    out.push_str("---\n");
    if role == "extra" {
        out.push_str(&format!("# {}\n\n", row.heading));
    }
    out.push_str(&s.body);
    out.push('\n');
    out
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
    stripped: &[Furniture],
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
        if plan.rows.iter().all(|r| r.action != Action::Import) {
            return Ok(None);
        }
        return write_extras_only(project, plan, sections, stripped, held, on_file);
    };
    if cp.last_completed_chapter != plan.project_last {
        return Err(ImportError::Changed {
            planned: plan.project_last,
            now: cp.last_completed_chapter,
        });
    }
    let mut writes = file_writes(plan, sections, stripped, on_file);
    // A later part of a book into a new project (`--start N`): the project starts at N.
    if let Some(&first) = plan.imported.first()
        && plan.project_last == 0
        && first > 1
    {
        let path = project.path(layout::SETTINGS);
        let mut settings = crate::io::read_json_value(&path).map_err(ImportError::Store)?;
        settings[novel_core::import::FIRST_CHAPTER_KEY] = json!(first);
        writes.push(JournalWrite {
            path: layout::SETTINGS.to_string(),
            content: to_json_text(&settings),
        });
    }
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
    stripped: &[Furniture],
    held: lock::Held<'_>,
    on_file: &dyn Fn(),
) -> Result<Option<Written>, ImportError> {
    let cp = load_checkpoint(project)?;
    let writes = file_writes(plan, sections, stripped, on_file);
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

/// Where the furniture lines taken out by `--strip-furniture` are kept: beside the pipeline
/// logs, named by the chapters imported (`logs/import-furniture-001-120.txt`).
pub fn furniture_file(plan: &Plan) -> String {
    let first = plan.imported.first().copied().unwrap_or(plan.project_last);
    let last = plan.imported.last().copied().unwrap_or(plan.project_last);
    format!("logs/import-furniture-{first:03}-{last:03}.txt")
}

/// The side file's text: one line per furniture line taken out, `文件:行<TAB>种类<TAB>原文`.
fn furniture_text(stripped: &[Furniture]) -> String {
    let mut out =
        String::from("# novel import --strip-furniture 从书稿中拿掉的行（文件:行、种类、原文）\n");
    for f in stripped {
        let inside = if f.inline { "（段内）" } else { "" };
        out.push_str(&format!(
            "{}:{}\t{}{inside}\t{}\n",
            f.file, f.line, f.label, f.text
        ));
    }
    out
}

/// The chapter texts, their logs and the extras of the `import` rows, and the furniture
/// taken out.
fn file_writes(
    plan: &Plan,
    sections: &[Section],
    stripped: &[Furniture],
    on_file: &dyn Fn(),
) -> Vec<JournalWrite> {
    let mut writes = Vec::new();
    if !stripped.is_empty() {
        writes.push(JournalWrite {
            path: furniture_file(plan),
            content: furniture_text(stripped),
        });
    }
    for (row, s) in plan.rows.iter().zip(sections) {
        if row.action != Action::Import {
            continue;
        }
        match (row.kind, row.chapter) {
            (SectionKind::Chapter, Some(n)) => {
                writes.push(JournalWrite {
                    path: row.target.clone(),
                    content: chapter_text(&row.heading, &s.body),
                });
                writes.push(JournalWrite {
                    path: layout::log_file(n),
                    content: import_log(n, row.chars, s),
                });
            }
            _ => writes.push(JournalWrite {
                path: row.target.clone(),
                content: extra_text(row, s),
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
        if let Some(h) = &v.heading {
            schedule["volume_heading"] = json!(h);
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
            "变更日志中没有第 {n} 章（状态增量未用 novel ops apply 合并，也未用 novel ops skip 记为跳过）"
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
