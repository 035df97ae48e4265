//! The chapter transaction (`002` §10.3–10.4, §10.7): the staging facts of the chapter in
//! flight, and its commit planned — every file's new content, the changelog line, the character
//! memory, the staging files to remove — as one journal ([`crate::journal`]), which
//! [`crate::transaction`] writes, fsyncs and applies step by step (and rolls forward after a
//! crash, so the project ends byte-identical to an uninterrupted commit). The checkpoint, the
//! journal and the transaction are re-exported here for the commands.
//!
//! Layer: writers (the chapter commit), above the state engine (`state`) and the character
//! memory (`memory`) it records; below the stages (`stage`) and the views.

use std::collections::BTreeMap;
use std::fs;

use novel_core::FileKind;
use novel_core::model::Checkpoint;
use novel_core::pipeline::{FileFact, StagingFacts};
use novel_core::validate::{check_document, parse_json};
use serde::Deserialize;

use crate::error::StoreError;
use crate::io::{read_text, to_json_text};
use crate::layout;
use crate::project::Project;

pub use crate::checkpoint::{load_checkpoint, write_checkpoint};
pub use crate::journal::{
    Journal, JournalAppend, JournalKind, JournalWrite, encode_journal, journal_chapter,
    read_journal,
};
pub use crate::transaction::{
    commit, recover_journal, step_count, sweep_build_dirs, sweep_leftovers,
};

/// Creates the staging directories that are missing (a hand-tidied project may lack some), so
/// no stage fails half-way for want of one.
pub fn ensure_staging_dirs(project: &Project) -> Result<(), StoreError> {
    for d in layout::DIRS.iter().filter(|d| d.starts_with("staging/")) {
        crate::io::create_dir_all(&project.path(d))?;
    }
    Ok(())
}

/// Whether a staged text file is there and non-empty, and its digest when it is.
pub(crate) fn text_fact_digest(project: &Project, rel: &str) -> (FileFact, Option<String>) {
    match read_text(&project.path(rel)) {
        Ok(t) if t.trim().is_empty() => (FileFact::Empty, None),
        Ok(t) => (
            FileFact::Ok,
            Some(novel_core::pipeline::text_digest(t.as_bytes())),
        ),
        Err(StoreError::Io { source, .. }) if source.kind() == std::io::ErrorKind::NotFound => {
            (FileFact::Missing, None)
        }
        Err(e) => (FileFact::Invalid(e.to_string()), None),
    }
}

/// Chapters whose delta was skipped (§10.6) and never applied since. Cheap on the hook path:
/// only the changelog lines from the first `skipped` mention on are parsed (earlier lines
/// cannot clear a skip that comes after them).
pub fn skipped_deltas(project: &Project) -> Result<Vec<u32>, StoreError> {
    let path = project.path(layout::CHANGELOG);
    let text = match read_text(&path) {
        Ok(t) => t,
        Err(StoreError::Io { source, .. }) if source.kind() == std::io::ErrorKind::NotFound => {
            return Ok(Vec::new());
        }
        Err(e) => return Err(e),
    };
    let Some(at) = text.find("\"skipped\"") else {
        return Ok(Vec::new());
    };
    let start = text[..at].rfind('\n').map_or(0, |i| i + 1);
    let mut entries = Vec::new();
    for (i, line) in text[start..].lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let entry = serde_json::from_str(line).map_err(|e| StoreError::Model {
            path: path.clone(),
            what: FileKind::ChangelogEntry.label(),
            message: format!("第 {} 行：{e}", text[..start].lines().count() + i + 1),
        })?;
        entries.push(entry);
    }
    Ok(novel_core::ops::skipped_chapters(&entries))
}

/// Whether a staged text file is there and non-empty.
pub(crate) fn text_fact(project: &Project, rel: &str) -> FileFact {
    text_fact_digest(project, rel).0
}

fn json_fact(
    project: &Project,
    rel: &str,
    kind: FileKind,
    chapter: u32,
) -> (FileFact, Option<serde_json::Value>) {
    match text_fact(project, rel) {
        FileFact::Ok => {}
        other => return (other, None),
    }
    let text = match read_text(&project.path(rel)) {
        Ok(t) => t,
        Err(e) => return (FileFact::Invalid(e.to_string()), None),
    };
    let value = match parse_json(&text) {
        Ok(v) => v,
        Err(e) => return (FileFact::Invalid(e.to_string()), None),
    };
    if let Some(f) = check_document(rel, kind, &value).into_iter().next() {
        return (FileFact::Invalid(f.brief()), Some(value));
    }
    if value.get("chapter").and_then(serde_json::Value::as_u64) != Some(u64::from(chapter)) {
        return (
            FileFact::Invalid(format!("chapter 字段不是 {chapter}")),
            Some(value),
        );
    }
    (FileFact::Ok, Some(value))
}

/// How closely [`staging_facts`] looks at the staged files.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Facts {
    /// Presence, non-emptiness and the delta's JSON syntax only — no schema is compiled: the
    /// session-start hook, which must stay in milliseconds (`novel chapter stage` validates
    /// when it matters).
    Light,
    /// The delta and the evaluation checked against their schemas and their `chapter` field,
    /// the delta's storyline against the project's: the pipeline (`next`, gate, commit).
    Full,
}

#[derive(Deserialize)]
struct LightDelta {
    #[serde(default)]
    storyline_id: Option<String>,
}

/// The staged delta's fact and its storyline (a slug), read without a schema.
fn light_delta(project: &Project, n: u32) -> (FileFact, Option<String>) {
    match read_text(&project.path(&layout::staging_delta(n))) {
        Ok(t) if t.trim().is_empty() => (FileFact::Empty, None),
        Ok(t) => match serde_json::from_str::<LightDelta>(&t) {
            Ok(d) => (
                FileFact::Ok,
                d.storyline_id.filter(|s| novel_core::model::is_slug(s)),
            ),
            Err(e) => (FileFact::Invalid(e.to_string()), None),
        },
        Err(StoreError::Io { source, .. }) if source.kind() == std::io::ErrorKind::NotFound => {
            (FileFact::Missing, None)
        }
        Err(e) => (FileFact::Invalid(e.to_string()), None),
    }
}

/// The staged delta's fact (schema, chapter, known storyline) and its storyline (a slug).
fn full_delta(project: &Project, n: u32) -> (FileFact, Option<String>) {
    let (mut delta, delta_value) =
        json_fact(project, &layout::staging_delta(n), FileKind::StateDelta, n);
    let named = delta_value
        .as_ref()
        .and_then(|v| v.get("storyline_id"))
        .and_then(serde_json::Value::as_str);
    // A delta on a storyline the project does not have would fail at commit: say so now.
    if delta.ok()
        && let Some(id) = named
    {
        match crate::state::load_storyline_ids(project) {
            Ok(known) => {
                if let Err(e) = novel_core::ops::check_storyline(id, &known) {
                    delta = FileFact::Invalid(e.to_string());
                }
            }
            Err(e) => delta = FileFact::Invalid(e.to_string()),
        }
    }
    let storyline_id = named
        .filter(|id| novel_core::model::is_slug(id))
        .map(str::to_string);
    (delta, storyline_id)
}

/// What `staging/` holds for chapter `n`, checked as closely as `mode` says.
pub fn staging_facts(project: &Project, n: u32, mode: Facts) -> StagingFacts {
    let (delta, storyline_id) = match mode {
        Facts::Light => light_delta(project, n),
        Facts::Full => full_delta(project, n),
    };
    let memory = match &storyline_id {
        Some(id) => {
            layout::staging_memory(id).map_or(FileFact::Missing, |rel| text_fact(project, &rel))
        }
        None => FileFact::Missing,
    };
    let (chapter_text, text_digest) = text_fact_digest(project, &layout::staging_chapter(n));
    // An unreadable changelog cannot vouch for a skip: the delta is then simply required.
    let delta_skipped =
        !delta.ok() && skipped_deltas(project).is_ok_and(|skipped| skipped.contains(&n));
    let evaluation_rel = layout::staging_evaluation(n);
    let evaluation = match mode {
        Facts::Light => text_fact(project, &evaluation_rel),
        Facts::Full => json_fact(project, &evaluation_rel, FileKind::Evaluation, n).0,
    };
    StagingFacts {
        chapter_text,
        summary: text_fact(project, &layout::staging_summary(n)),
        delta,
        storyline_id,
        memory,
        evaluation,
        text_digest,
        delta_skipped,
        repair: repair_facts(project, n, mode),
    }
}

/// What a repair round of chapter `n` has staged (`None` when the round it is in — read from
/// the checkpoint — is no repair).
fn repair_facts(
    project: &Project,
    n: u32,
    mode: Facts,
) -> Option<novel_core::pipeline::RepairFacts> {
    let cp = load_checkpoint(project).ok()?;
    let record = crate::repair::current(project, &cp, n).ok().flatten()?;
    let rel = layout::staging_repair_review(n);
    let review = match mode {
        Facts::Light => text_fact(project, &rel),
        Facts::Full => json_fact(project, &rel, FileKind::RepairReview, n).0,
    };
    Some(crate::repair::facts(project, n, &record, review))
}

/// The files of a round the gate sent back (`revise`, `rewrite`, or the author's round after
/// `pause`) go to `logs/revisions/chapter-NNN/rK/`: the text, the evaluations, the Summarizer's
/// outputs and the refiner's change lists. Staging is left without them, so every agent of the
/// next round writes new files (which the client lets it do without reading the old ones
/// first); a revision's packet carries the archived text (`context::load_chapter_text`).
/// Planned here, written by the caller's journal: the copies are writes, the staged files that
/// go are removals, so a stage killed half-way is finished by `recover` and nothing is deleted
/// before its copy is durable.
pub fn plan_archive(project: &Project, n: u32, round: u32) -> Result<Archive, StoreError> {
    let dir = layout::revision_dir(n, round);
    let mut files: Vec<String> = vec![
        layout::staging_chapter(n),
        layout::staging_summary(n),
        layout::staging_delta(n),
        // StyleRefiner's change lists describe the round sent back.
        layout::staging_changes(n),
        layout::staging_edits(n),
        layout::staging_context(n, "style-refiner"),
        layout::staging_context(n, "quality-judge"),
    ];
    for (rel, _) in staged_evaluation_names(project, n) {
        files.push(rel);
    }
    // A local repair's review judged the round sent back too.
    files.push(layout::staging_repair_review(n));
    for id in staged_memory_ids(project) {
        if let Ok(rel) = layout::staging_memory(&id) {
            files.push(rel);
        }
    }
    let mut out = Archive::default();
    for rel in files {
        let content = match read_text(&project.path(&rel)) {
            Ok(t) => t,
            Err(StoreError::Io { source, .. }) if source.kind() == std::io::ErrorKind::NotFound => {
                continue;
            }
            Err(e) => return Err(e),
        };
        // staging/storylines/<id>/memory.md → memory-<id>.md; the rest keep their names.
        let name = match rel.strip_prefix("staging/storylines/") {
            Some(rest) => format!("memory-{}.md", rest.split('/').next().unwrap_or("line")),
            None => rel.rsplit('/').next().unwrap_or(&rel).to_string(),
        };
        let to = format!("{dir}/{name}");
        out.writes.push(JournalWrite {
            path: to.clone(),
            content,
        });
        out.remove.push(rel);
        out.archived.push(to);
    }
    Ok(out)
}

/// What [`plan_archive`] puts in a journal.
#[derive(Debug, Clone, Default)]
pub struct Archive {
    pub writes: Vec<JournalWrite>,
    pub remove: Vec<String>,
    /// Where each file goes (project-relative), in order.
    pub archived: Vec<String>,
}

/// Storyline ids with a staged memory file.
fn staged_memory_ids(project: &Project) -> Vec<String> {
    let mut ids: Vec<String> = fs::read_dir(project.path("staging/storylines"))
        .map(|r| {
            r.filter_map(|e| e.ok())
                .filter(|e| e.path().join("memory.md").is_file())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    ids.sort();
    ids
}

/// The in-flight chapter's pipeline log (`staging/logs/chapter-NNN-log.json`), typed and as
/// written (so a rewrite keeps what the type does not know); `None` when there is none yet. A
/// log that does not read or parse is an error naming the file, line and column
/// ([`StoreError::PipelineLog`]), never a fresh log: it holds the stages' figures.
pub fn read_staging_log(
    project: &Project,
    n: u32,
) -> Result<Option<(novel_core::model::PipelineLog, serde_json::Value)>, StoreError> {
    let path = project.path(&layout::staging_log(n));
    let text = match read_text(&path) {
        Ok(t) => t,
        Err(StoreError::Io { source, .. }) if source.kind() == std::io::ErrorKind::NotFound => {
            return Ok(None);
        }
        Err(e) => return Err(e),
    };
    let corrupt = |line: usize, column: usize, message: String| StoreError::PipelineLog {
        path: path.clone(),
        line,
        column,
        message,
    };
    let value = parse_json(&text).map_err(|e| corrupt(e.line, e.column, e.message))?;
    let log = serde_json::from_str(&text).map_err(|e| {
        let column = char_column(&text, e.line(), e.column());
        corrupt(e.line(), column, e.to_string())
    })?;
    Ok(Some((log, value)))
}

/// serde_json's column (bytes, 1-based) on `line` (1-based) as a column in characters.
fn char_column(text: &str, line: usize, byte_col: usize) -> usize {
    text.lines()
        .nth(line.saturating_sub(1))
        .map_or(byte_col, |l| {
            let mut end = byte_col.saturating_sub(1).min(l.len());
            while !l.is_char_boundary(end) {
                end -= 1;
            }
            l[..end].chars().count() + 1
        })
}

/// The in-flight chapter's pipeline log with one stage added (`chapter stage`), created when
/// there is none: its new text, for the stage's journal. A corrupt log is an error and stays
/// as it is.
pub fn log_with_stage(
    project: &Project,
    n: u32,
    entry: serde_json::Value,
) -> Result<JournalWrite, StoreError> {
    let mut log = match read_staging_log(project, n)? {
        Some((_, value)) => value,
        None => serde_json::json!({"chapter": n, "stages": []}),
    };
    // The typed read vouched for `stages` being an array.
    if let Some(stages) = log.get_mut("stages").and_then(|s| s.as_array_mut()) {
        stages.push(entry);
    }
    Ok(JournalWrite {
        path: layout::staging_log(n),
        content: to_json_text(&log),
    })
}

/// The current volume's storyline schedule, if it exists and parses.
pub fn load_schedule(
    project: &Project,
    volume: u32,
) -> Result<Option<novel_core::model::StorylineSchedule>, StoreError> {
    let rel = format!("{}/storyline-schedule.json", layout::volume_dir(volume));
    let path = project.path(&rel);
    if !path.exists() {
        return Ok(None);
    }
    crate::io::read_json(&path, FileKind::StorylineSchedule.label()).map(Some)
}

/// The volume a chapter belongs to, as the gate and `chapter begin` see it: the volume whose
/// span holds it (the current one first), that span, and its storyline schedule.
pub struct ChapterVolume {
    pub volume: u32,
    pub range: Option<[u32; 2]>,
    pub schedule: Option<novel_core::model::StorylineSchedule>,
}

impl ChapterVolume {
    /// Why chapter `n` needs a second judge (first/last of the volume, a convergence event).
    pub fn key_reasons(&self, n: u32) -> Vec<novel_core::gate::KeyReason> {
        novel_core::gate::key_chapter(n, self.range, self.schedule.as_ref())
    }
}

pub fn chapter_volume(
    project: &Project,
    n: u32,
    current_volume: u32,
) -> Result<ChapterVolume, StoreError> {
    let volume = crate::volumes::volume_of(project, n, current_volume.max(1));
    Ok(ChapterVolume {
        volume,
        range: crate::volumes::volume_span(project, volume, &mut Vec::new()).map(|s| s.range),
        schedule: load_schedule(project, volume)?,
    })
}

/// Staged evaluation files of chapter `n` (`chapter-NNN-eval.json`, then second judges'
/// `chapter-NNN-eval-<judge>.json` by name), as (relative path, judge suffix).
fn staged_evaluation_names(project: &Project, n: u32) -> Vec<(String, String)> {
    let stem = novel_core::naming::evaluation_stem(n);
    let mut names: Vec<(String, String)> = fs::read_dir(project.path("staging/evaluations"))
        .map(|r| {
            r.filter_map(|e| e.ok())
                .filter_map(|e| {
                    let name = e.file_name().to_string_lossy().into_owned();
                    let mid = name.strip_prefix(&stem)?.strip_suffix(".json")?.to_string();
                    (mid.is_empty() || mid.starts_with('-'))
                        .then(|| (format!("staging/evaluations/{name}"), mid))
                })
                .collect()
        })
        .unwrap_or_default();
    names.sort_by_key(|(rel, _)| (rel.len(), rel.clone()));
    names
}

/// Staged evaluations of chapter `n`: the primary first, then second judges by name. Each
/// must be schema-valid and about chapter `n`.
pub fn staged_evaluations(
    project: &Project,
    n: u32,
) -> Result<Vec<(String, novel_core::model::Evaluation)>, StoreError> {
    let mut out = Vec::new();
    for (rel, _) in staged_evaluation_names(project, n) {
        let value = crate::io::read_json_value(&project.path(&rel))?;
        let problem = check_document(&rel, FileKind::Evaluation, &value)
            .into_iter()
            .next()
            .map(|f| f.brief())
            .or_else(|| {
                (value.get("chapter").and_then(serde_json::Value::as_u64) != Some(u64::from(n)))
                    .then(|| format!("/chapter 不是 {n}（评估的是另一章？）"))
            });
        if let Some(message) = problem {
            return Err(StoreError::Model {
                path: project.path(&rel),
                what: FileKind::Evaluation.label(),
                message,
            });
        }
        let evaluation = crate::io::typed(project, &rel, FileKind::Evaluation, value)?;
        out.push((rel, evaluation));
    }
    Ok(out)
}

/// `staging/logs/chapter-NNN-leak.json`, the in-flight chapter's leak check, if it was run.
pub fn leak_result(
    project: &Project,
    n: u32,
) -> Result<Option<novel_core::gate::LeakCheck>, StoreError> {
    let path = project.path(&layout::staging_leak(n));
    if !path.exists() {
        return Ok(None);
    }
    crate::io::read_json(&path, "串线检查结果").map(Some)
}

/// Why a commit cannot be planned.
#[derive(Debug, thiserror::Error)]
pub enum PlanError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    Ops(#[from] novel_core::ops::OpsError),
    #[error("staging 中的文件在门控之后被改动过：{}", files.join("、"))]
    ChangedSinceGate { files: Vec<String> },
}

/// A staged file the commit moves: from where, to where, with what content.
pub struct Staged {
    pub from: String,
    pub to: String,
    pub content: String,
}

/// Reads a staged file as the commit takes it: a regular file only. A symlink (or anything
/// else) is refused, so nothing from outside the project is ever committed.
pub fn read_staged(project: &Project, rel: &str) -> Result<String, StoreError> {
    let path = project.path(rel);
    let meta = fs::symlink_metadata(&path).map_err(|e| StoreError::io(&path, e))?;
    if !meta.file_type().is_file() {
        return Err(StoreError::NotARegularFile { path });
    }
    read_text(&path)
}

/// The files a commit of chapter `n` moves out of staging, in commit order: the chapter text
/// (always first), the summary, the evaluations, the storyline memories (which overwrite the
/// committed ones, as the seed says). The state delta is not among them: it goes through the
/// state engine.
pub fn staged_for_commit(project: &Project, n: u32) -> Result<Vec<Staged>, StoreError> {
    let mut out = Vec::new();
    let mut take = |from: String, to: String| -> Result<(), StoreError> {
        let content = read_staged(project, &from)?;
        out.push(Staged { from, to, content });
        Ok(())
    };
    take(layout::staging_chapter(n), layout::chapter_file(n))?;
    take(layout::staging_summary(n), layout::summary_file(n))?;
    // StyleRefiner's change list, when it wrote one, is kept with the chapter.
    let changes = layout::staging_changes(n);
    if fs::symlink_metadata(project.path(&changes)).is_ok() {
        take(changes, layout::changes_file(n))?;
    }
    for (rel, _) in staged_evaluations(project, n)? {
        let name = rel.rsplit_once('/').map_or(rel.as_str(), |(_, name)| name);
        take(rel.clone(), format!("evaluations/{name}"))?;
    }
    // A local repair's review goes with the evaluations it completes.
    let review = layout::staging_repair_review(n);
    if fs::symlink_metadata(project.path(&review)).is_ok() {
        take(review, layout::repair_review_file(n))?;
    }
    if let Ok(entries) = fs::read_dir(project.path("staging/storylines")) {
        let mut ids: Vec<String> = entries
            .filter_map(|e| e.ok())
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        ids.sort();
        for id in ids {
            let Ok(from) = layout::staging_memory(&id) else {
                continue;
            };
            if fs::symlink_metadata(project.path(&from)).is_ok() {
                let to = layout::storyline_memory(&id)?;
                take(from, to)?;
            }
        }
    }
    Ok(out)
}

/// The digest of every staged file a commit of chapter `n` would take (the delta included),
/// keyed by its project-relative path: recorded by the gate, compared again at commit.
pub fn staged_digests(project: &Project, n: u32) -> Result<BTreeMap<String, String>, StoreError> {
    let staged = staged_for_commit(project, n)?;
    let delta_rel = layout::staging_delta(n);
    let delta = match read_staged(project, &delta_rel) {
        Ok(t) => Some(t),
        Err(StoreError::Io { source, .. }) if source.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => return Err(e),
    };
    Ok(digests(&staged, &delta_rel, delta.as_deref()))
}

fn digests(staged: &[Staged], delta_rel: &str, delta: Option<&str>) -> BTreeMap<String, String> {
    let digest = |t: &str| novel_core::pipeline::text_digest(t.as_bytes());
    let mut out: BTreeMap<String, String> = staged
        .iter()
        .map(|f| (f.from.clone(), digest(&f.content)))
        .collect();
    if let Some(t) = delta {
        out.insert(delta_rel.to_string(), digest(t));
    }
    out
}

/// Files whose digest differs, that appeared or that went, between two digest maps.
fn changed_files(judged: &BTreeMap<String, String>, now: &BTreeMap<String, String>) -> Vec<String> {
    let mut out: Vec<String> = judged
        .keys()
        .chain(now.keys())
        .filter(|k| judged.get(*k) != now.get(*k))
        .cloned()
        .collect();
    out.sort();
    out.dedup();
    out
}

/// A planned commit: its journal, and what it does to the character memories.
pub struct CommitPlan {
    pub journal: Journal,
    pub memory: crate::memory::Recorded,
}

/// Plans the commit of chapter `n`: every new file content, decided up front — the character
/// memories' new lines included, so they are in the journal. `count` is the platform 字数 of
/// a chapter text (`novel_text::count`); the chapter's count goes into its pipeline log so
/// `novel status` need not count the text again.
pub fn plan_commit(
    project: &Project,
    cp: &Checkpoint,
    n: u32,
    token: &str,
    now: &str,
    count: &dyn Fn(&str) -> usize,
) -> Result<CommitPlan, PlanError> {
    let mut plan = Planned::default();
    let delta_rel = layout::staging_delta(n);
    let delta_text = match read_staged(project, &delta_rel) {
        Ok(t) => Some(t),
        Err(StoreError::Io { source, .. }) if source.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => return Err(e.into()),
    };
    let delta = (delta_rel.as_str(), delta_text.as_deref());
    let chars = plan_staged_files(project, cp, n, delta, count, &mut plan)?;
    let skipped = staging_facts(project, n, Facts::Full).delta_skipped;
    let (changelog_line, storyline_id) = if skipped {
        plan_skipped_delta(project, n, delta_rel, delta_text, &mut plan)?
    } else {
        plan_delta(project, delta_rel, delta_text, now, &mut plan)?
    };
    let log = LogFacts {
        storyline_id,
        skipped,
        chars,
    };
    plan_pipeline_log(project, cp, n, log, &mut plan)?;
    // The checkpoint, last.
    plan.writes.push(JournalWrite {
        path: layout::CHECKPOINT.to_string(),
        content: crate::io::rewrite_text(
            &project.path(layout::CHECKPOINT),
            &committed_checkpoint(project, cp, n, now),
        ),
    });
    let journal = Journal {
        chapter: n,
        token: token.to_string(),
        writes: plan.writes,
        changelog_line,
        changelog_len: None,
        dirs: Vec::new(),
        appends: plan.appends,
        remove: plan.remove,
        retiring: None,
        kind: None,
        cleanup: None,
    };
    Ok(CommitPlan {
        journal,
        memory: plan.memory.unwrap_or_else(|| crate::memory::Recorded {
            chapter: n,
            ..Default::default()
        }),
    })
}

/// What a commit plan writes and removes, in order.
#[derive(Default)]
struct Planned {
    writes: Vec<JournalWrite>,
    appends: Vec<JournalAppend>,
    remove: Vec<String>,
    /// The memories' part, when the delta has character actions.
    memory: Option<crate::memory::Recorded>,
}

/// The changelog line and the storyline a commit's delta gives (both `None` when skipped).
type DeltaOutcome = (Option<String>, Option<String>);

/// The staged chapter, summary and memory files moved to their places — exactly as they were
/// judged (at the gate, or after the second polish), not whatever was put there since. Returns
/// the chapter's 字数 (`count` of the first staged file, the chapter text).
fn plan_staged_files(
    project: &Project,
    cp: &Checkpoint,
    n: u32,
    (delta_rel, delta_text): (&str, Option<&str>),
    count: &dyn Fn(&str) -> usize,
    plan: &mut Planned,
) -> Result<usize, PlanError> {
    let staged = staged_for_commit(project, n)?;
    if let Some(judged) = novel_core::pipeline::current_gate(cp, n).map(|g| &g.staged)
        && !judged.is_empty()
    {
        let now_digests = digests(&staged, delta_rel, delta_text);
        let changed = changed_files(judged, &now_digests);
        if !changed.is_empty() {
            return Err(PlanError::ChangedSinceGate { files: changed });
        }
    }
    let chars = staged.first().map_or(0, |f| count(&f.content));
    for f in staged {
        plan.writes.push(JournalWrite {
            path: f.to,
            content: f.content,
        });
        plan.remove.push(f.from);
    }
    Ok(chars)
}

/// A skipped delta (§10.6): the state does not move, but it must still be the one its
/// changelog replays to; whatever delta was staged is kept in the chapter's revision logs.
fn plan_skipped_delta(
    project: &Project,
    n: u32,
    delta_rel: String,
    delta_text: Option<String>,
    plan: &mut Planned,
) -> Result<DeltaOutcome, PlanError> {
    let state = crate::state::load_state(project)?;
    novel_core::ops::check_in_step(&state, crate::state::changelog_tail(project)?.as_ref())?;
    if let Some(text) = delta_text {
        plan.writes.push(JournalWrite {
            path: format!("{}/skipped-delta.json", layout::revision_dir(n, 0)),
            content: text,
        });
        plan.remove.push(delta_rel);
    }
    Ok((None, None))
}

/// The state delta through the state engine: the new state (and foreshadowing file when it
/// changes) and the changelog line.
fn plan_delta(
    project: &Project,
    delta_rel: String,
    delta_text: Option<String>,
    now: &str,
    plan: &mut Planned,
) -> Result<DeltaOutcome, PlanError> {
    let Some(text) = delta_text else {
        return Err(StoreError::io(
            project.path(&delta_rel),
            std::io::Error::from(std::io::ErrorKind::NotFound),
        )
        .into());
    };
    let delta = novel_core::validate::parse_json(&text).map_err(|error| StoreError::Json {
        path: project.path(&delta_rel),
        error,
    })?;
    // The one delta check `ops validate` and `ops apply` make. Only the changelog's last line
    // is read, the foreshadowing file only for a delta that moves a thread, and neither it nor
    // the state is schema-checked again when they are the bytes that line recorded (`written`,
    // stamped below): what still grows with the book is reading and writing the state (and the
    // foreshadowing file when a thread moves).
    let mut inputs =
        crate::state::load_delta_inputs(project, crate::state::Trust::Checked, &delta)?;
    // The changelog line carries the delta's `character_actions` (`004`), as every applied
    // delta's does (`ops::record`).
    let check = inputs.check_taking_state(&delta)?;
    let mut applied = novel_core::ops::apply_checked(check, false, now)?;
    plan.remove.push(delta_rel);
    let state_text = inputs.state_text(&applied.run.state)?;
    let global_text = inputs.global_change(&applied.run.global).map(to_json_text);
    applied.entry.written = Some(inputs.written(&state_text, global_text.as_deref()));
    // The memories: the actions the changelog line carries (`004`), appended in this journal.
    let actions = crate::memory::actions_of_entry(&applied.entry);
    if !actions.is_empty() {
        let (appends, recorded) = crate::memory::plan_chapter(
            project,
            applied.entry.chapter,
            &actions,
            &crate::state::load_names(project),
            now,
        );
        plan.appends = appends;
        plan.memory = Some(recorded);
    }
    plan.writes.push(JournalWrite {
        path: layout::CURRENT_STATE.to_string(),
        content: state_text,
    });
    if let Some(text) = global_text {
        plan.writes.push(JournalWrite {
            path: layout::FORESHADOWING_GLOBAL.to_string(),
            content: text,
        });
    }
    Ok((
        Some(crate::state::changelog_line(&applied.entry)?),
        Some(applied.run.header.storyline_id.clone()),
    ))
}

/// What the pipeline log takes from the rest of the plan.
struct LogFacts {
    storyline_id: Option<String>,
    skipped: bool,
    chars: usize,
}

/// The chapter's pipeline log: what the stages recorded, plus the gate's outcome, the 字数,
/// the leak check and the totals.
fn plan_pipeline_log(
    project: &Project,
    cp: &Checkpoint,
    n: u32,
    facts: LogFacts,
    plan: &mut Planned,
) -> Result<(), PlanError> {
    let gate = novel_core::pipeline::current_gate(cp, n);
    let mut plog = match read_staging_log(project, n)? {
        Some((log, _)) => {
            plan.remove.push(layout::staging_log(n));
            log
        }
        None => empty_log(n),
    };
    plog.storyline_id = facts.storyline_id.or(plog.storyline_id);
    plog.gate_decision = gate.map(|g| g.decision);
    if let Some(g) = gate {
        // The score that counted (recomputed, the lower of two judges), for `novel status`.
        plog.extra
            .insert("gate_overall".into(), serde_json::json!(g.overall));
        if g.accepted_by_author {
            plog.extra.insert(
                novel_core::model::pipeline_log::LOG_ACCEPTED_BY_AUTHOR.into(),
                serde_json::json!(true),
            );
        }
    }
    if facts.skipped {
        plog.extra
            .insert("delta_skipped".into(), serde_json::json!(true));
    }
    plog.extra.insert(
        novel_core::model::pipeline_log::LOG_CHARS.into(),
        serde_json::json!(facts.chars),
    );
    plan.remove.extend(served_staging(project, n));
    let leak_rel = layout::staging_leak(n);
    if let Ok(text) = read_text(&project.path(&leak_rel)) {
        if let Ok(v) = serde_json::from_str::<serde_json::Value>(&text) {
            plog.extra.insert("leak_check".into(), v);
        }
        plan.remove.push(leak_rel);
    }
    let committed: Vec<(&str, &str)> = plan
        .writes
        .iter()
        .filter(|w| w.path == layout::chapter_file(n) || w.path.starts_with("evaluations/"))
        .map(|w| (w.path.as_str(), w.content.as_str()))
        .collect();
    record_committed(&mut plog.extra, &committed);
    plog.revisions = cp.revision_count;
    plog.force_passed = gate.is_some_and(|g| g.force_passed);
    add_totals(&mut plog);
    plan.writes.push(JournalWrite {
        path: layout::log_file(n),
        content: to_json_text(&plog),
    });
    Ok(())
}

/// The staging files that have served their purpose once chapter `n` is committed: the draft
/// kept for `stage refined`'s measure, a change list never applied (the author accepted the
/// text as it was), the refiner's and the judge's packets, and the agents' usage no stage
/// folded (an agent dispatched after the last stage).
fn served_staging(project: &Project, n: u32) -> Vec<String> {
    let mut out: Vec<String> = [
        layout::staging_draft(n),
        layout::staging_edits(n),
        layout::staging_context(n, "style-refiner"),
        layout::staging_context(n, "quality-judge"),
    ]
    .into_iter()
    .filter(|rel| fs::symlink_metadata(project.path(rel)).is_ok())
    .collect();
    if let Ok(entries) = fs::read_dir(project.path("staging/logs")) {
        out.extend(
            entries
                .flatten()
                .filter_map(|e| e.file_name().into_string().ok())
                .filter(|name| novel_core::naming::is_usage_record(name))
                .map(|name| format!("staging/logs/{name}")),
        );
    }
    out
}

/// The key of a committed pipeline log that records the digest of each file the commit put
/// in place for good (the chapter text, its evaluations): `novel validate` names a file that
/// no longer has it (changed outside `novel`).
pub const COMMITTED_DIGESTS: &str = "committed_digests";

/// Records `files` (project-relative path, content) in a pipeline log's
/// [`COMMITTED_DIGESTS`], replacing what it recorded for those paths.
pub fn record_committed(
    log: &mut serde_json::Map<String, serde_json::Value>,
    files: &[(&str, &str)],
) {
    let entry = log
        .entry(COMMITTED_DIGESTS)
        .or_insert_with(|| serde_json::json!({}));
    if !entry.is_object() {
        *entry = serde_json::json!({});
    }
    if let Some(map) = entry.as_object_mut() {
        for (rel, content) in files {
            let digest = novel_core::pipeline::text_digest(content.as_bytes());
            map.insert((*rel).to_string(), serde_json::json!(digest));
        }
    }
}

/// The stages' total duration and cost (when every stage has one).
fn add_totals(plog: &mut novel_core::model::PipelineLog) {
    plog.total_duration_ms = plog
        .stages
        .iter()
        .map(|s| s.duration_ms)
        .sum::<Option<u64>>()
        .filter(|_| !plog.stages.is_empty());
    let costs: Option<f64> = plog
        .stages
        .iter()
        .map(|s| s.extra.get("cost_usd").and_then(serde_json::Value::as_f64))
        .sum();
    plog.total_cost_usd = costs.filter(|_| !plog.stages.is_empty());
}

/// The checkpoint after chapter `n` is committed: the volume's last chapter hands over to the
/// volume review (its end from whatever the plan gives, `docs/orchestration.md` §5; an
/// unreadable plan file only means the end is not known here), a rewrite goes back to writing.
fn committed_checkpoint(project: &Project, cp: &Checkpoint, n: u32, now: &str) -> Checkpoint {
    use novel_core::model::{OrchestratorState, PipelineStage};
    let volume_end =
        crate::volumes::volume_span(project, cp.volume(), &mut Vec::new()).map(|s| s.range[1]);
    let mut next = cp.clone();
    next.last_completed_chapter = n;
    next.pipeline_stage = Some(PipelineStage::Committed);
    next.inflight_chapter = None;
    next.revision_count = 0;
    next.gate = None;
    next.last_checkpoint_time = Some(now.to_string());
    let writing = matches!(
        next.orchestrator_state,
        OrchestratorState::Writing | OrchestratorState::ChapterRewrite
    );
    next.orchestrator_state = if writing && volume_end.is_some_and(|end| n >= end) {
        OrchestratorState::VolReview
    } else if next.orchestrator_state == OrchestratorState::ChapterRewrite {
        OrchestratorState::Writing
    } else {
        next.orchestrator_state
    };
    next
}

fn empty_log(n: u32) -> novel_core::model::PipelineLog {
    novel_core::model::PipelineLog {
        chapter: n,
        storyline_id: None,
        started_at: None,
        stages: Vec::new(),
        gate_decision: None,
        revisions: 0,
        force_passed: false,
        total_duration_ms: None,
        total_cost_usd: None,
        extra: Default::default(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn light_facts_see_presence_full_facts_check_the_schema() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("book");
        crate::init::init_project(&root, &crate::init::InitOptions::default()).unwrap();
        let p = Project::open(&root).unwrap();
        ensure_staging_dirs(&p).unwrap();
        // Parses, names a storyline, but is neither a delta nor an evaluation.
        std::fs::write(
            p.path(&layout::staging_delta(1)),
            r#"{"storyline_id": "x-line"}"#,
        )
        .unwrap();
        std::fs::write(p.path(&layout::staging_evaluation(1)), "{}").unwrap();
        let light = staging_facts(&p, 1, Facts::Light);
        assert_eq!(
            (&light.delta, &light.evaluation),
            (&FileFact::Ok, &FileFact::Ok)
        );
        assert_eq!(light.storyline_id.as_deref(), Some("x-line"));
        let full = staging_facts(&p, 1, Facts::Full);
        assert!(
            matches!(full.delta, FileFact::Invalid(_)),
            "{:?}",
            full.delta
        );
        assert!(
            matches!(full.evaluation, FileFact::Invalid(_)),
            "{:?}",
            full.evaluation
        );
        assert_eq!(full.storyline_id.as_deref(), Some("x-line"));
        assert_eq!(full.chapter_text, FileFact::Missing);
    }
}
