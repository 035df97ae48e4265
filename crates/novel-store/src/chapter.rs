//! The chapter transaction on disk (`002` §10.3–10.4, §10.7): staging facts, the checkpoint,
//! and the journaled all-or-nothing commit with its roll-forward recovery.
//!
//! A commit is planned in memory first (every file's new content, the changelog line, the
//! staging files to remove), written as one fsynced journal, then applied step by step with
//! atomic writes. Every step is idempotent, so after a crash at any point `recover` re-applies
//! the journal and the project ends byte-identical to an uninterrupted commit.
//!
//! Layer: writers (the commit transaction); its back edges to `memory`, and the ones `lock` and
//! `state` make to it, are listed with their reasons in `crates/novel-cli/tests/test_layers.rs`.

use std::collections::BTreeMap;
use std::fs;

use novel_core::FileKind;
use novel_core::model::Checkpoint;
use novel_core::pipeline::{FileFact, StagingFacts};
use novel_core::validate::{check_document, parse_json};
use serde::{Deserialize, Serialize};

use crate::error::StoreError;
use crate::io::{read_text, sync_dir, to_json_text, write_atomic};
use crate::layout;
use crate::lock;
use crate::project::Project;

/// `.checkpoint.json`, schema-checked.
pub fn load_checkpoint(project: &Project) -> Result<Checkpoint, StoreError> {
    let path = project.path(layout::CHECKPOINT);
    let value = crate::io::read_json_value(&path)?;
    if let Some(f) = check_document(layout::CHECKPOINT, FileKind::Checkpoint, &value)
        .into_iter()
        .next()
    {
        return Err(StoreError::Model {
            path,
            what: FileKind::Checkpoint.label(),
            message: f.brief(),
        });
    }
    crate::state::typed(project, layout::CHECKPOINT, FileKind::Checkpoint, value)
}

pub fn write_checkpoint(project: &Project, cp: &Checkpoint) -> Result<(), StoreError> {
    let path = project.path(layout::CHECKPOINT);
    write_atomic(&path, crate::io::rewrite_text(&path, cp).as_bytes())
}

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

/// One file the commit writes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JournalWrite {
    pub path: String,
    /// The file's text. In the journal file it follows the header line as it is, never inside
    /// a JSON string (see [`encode_journal`]); a journal of an older version has it here.
    #[serde(default, skip_serializing)]
    pub content: String,
}

/// The commit journal: everything the commit will do, decided before it starts.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Journal {
    pub chapter: u32,
    /// The lock token to release at the end.
    pub token: String,
    /// Files to write, in order; the checkpoint is last.
    pub writes: Vec<JournalWrite>,
    /// The changelog line to append; none for a chapter whose delta was skipped (§10.6: its
    /// skip line is already there).
    #[serde(default)]
    pub changelog_line: Option<String>,
    /// The changelog's length in bytes before the line is appended, measured by [`commit`]
    /// when it writes the journal: applying the journal cuts the file back to it and appends
    /// the line, so a rerun never appends twice and a line torn by a crash never stays. (A
    /// journal without it, from an older version, appends unless the line is already last.)
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub changelog_len: Option<u64>,
    /// Directories to create (empty ones a step leaves for what comes next: the next volume's
    /// contract folder at `volume close`), before the writes.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub dirs: Vec<String>,
    /// Lines appended to append-only files besides the changelog (a commit's character
    /// memories, `memory/characters/<slug>.jsonl`), after the changelog line.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub appends: Vec<JournalAppend>,
    /// Staging files to remove once everything is in place.
    pub remove: Vec<String>,
    /// The character whose retirement this journal carries (`retire apply`), when it is not
    /// a chapter commit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retiring: Option<String>,
    /// The volume whose end-of-volume cleanup this journal carries (`volume cleanup`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cleanup: Option<u32>,
    /// What wrote the journal when it is not a chapter commit, a retirement or a cleanup.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<JournalKind>,
}

/// Lines a journal appends to one append-only file: applying it cuts the file back to `base`
/// and appends `text` (one or more lines, no final newline), so a rerun never appends twice and
/// a line torn by a crash never stays.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JournalAppend {
    pub path: String,
    /// The file's length up to its last whole line, measured by [`commit`] under the guard.
    #[serde(default)]
    pub base: u64,
    pub text: String,
}

/// The writers besides the chapter commit and the retirement that go through a journal.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum JournalKind {
    /// `novel ops apply`: the state, the foreshadowing and one changelog line.
    OpsApply,
    /// `novel state rebuild --write`: the replayed state (and a truncated changelog).
    Rebuild,
    /// `novel ops skip`: one changelog line, the state unchanged.
    OpsSkip,
    /// `novel revision save` / `reject` (the revision file and the checkpoint), and `revision
    /// apply` on a committed chapter (its text, the revision file, its pipeline log and the
    /// checkpoint).
    Revision,
    /// `novel import`: the chapters, their logs, the extras, volume ranges and the checkpoint.
    Import,
    /// `novel memory init` / `memory rebuild`: character memory files.
    Memory,
    /// `novel volume close`: the volume's final state, its cleanup report and the checkpoint.
    VolumeClose,
    /// `novel chapter begin` / `chapter stage`: the chapter's pipeline log, the round archived
    /// for a revision or rewrite, and the checkpoint.
    Stage,
    /// `novel blacklist upgrade`: the list's backup and the new list.
    Blacklist,
    /// `novel spec propagate`: the pending action in the checkpoint, the snapshot removed.
    Propagation,
    /// `novel style preset`: the profile's backup and the preset.
    StylePreset,
}

impl Journal {
    /// A journal that only writes files (`revision apply`, `import`): no changelog line, no
    /// staging to remove.
    pub fn files(
        chapter: u32,
        token: String,
        writes: Vec<JournalWrite>,
        kind: JournalKind,
    ) -> Self {
        Journal {
            chapter,
            token,
            writes,
            changelog_line: None,
            changelog_len: None,
            dirs: Vec::new(),
            appends: Vec::new(),
            remove: Vec::new(),
            retiring: None,
            cleanup: None,
            kind: Some(kind),
        }
    }

    /// What the journal carries, for messages (`补完了中断的…`, `…没有完成`).
    pub fn describe(&self) -> String {
        if let Some(v) = self.cleanup {
            return format!("第 {v} 卷的卷末清理");
        }
        match (&self.retiring, self.kind) {
            (Some(slug), _) => format!("角色 {slug} 的退场"),
            (None, Some(JournalKind::OpsApply)) => {
                format!("第 {} 章状态增量的合并（ops apply）", self.chapter)
            }
            (None, Some(JournalKind::Rebuild)) => "状态重建（state rebuild --write）".to_string(),
            (None, Some(JournalKind::OpsSkip)) => {
                format!("第 {} 章增量跳过的记录（ops skip）", self.chapter)
            }
            (None, Some(JournalKind::Revision)) => {
                format!("第 {} 章修订候选的保存或决定（revision）", self.chapter)
            }
            (None, Some(JournalKind::Import)) => {
                format!("书稿导入（到第 {} 章）", self.chapter)
            }
            (None, Some(JournalKind::Memory)) => {
                "角色记忆的写入（memory init / rebuild）".to_string()
            }
            (None, Some(JournalKind::VolumeClose)) => {
                format!("第 {} 卷的收卷（volume close）", self.chapter)
            }
            (None, Some(JournalKind::Stage)) => {
                format!("第 {} 章的阶段推进（chapter begin / stage）", self.chapter)
            }
            (None, Some(JournalKind::Blacklist)) => "黑名单的升级（blacklist upgrade）".to_string(),
            (None, Some(JournalKind::Propagation)) => {
                "设定变更传播的记录（spec propagate）".to_string()
            }
            (None, Some(JournalKind::StylePreset)) => "风格预设的写入（style preset）".to_string(),
            (None, None) => format!("第 {} 章的提交", self.chapter),
        }
    }
}

/// The journal file's first line: the journal without the contents of its writes, and the
/// byte length of each; the contents follow it, one after the other, as they are.
#[derive(Serialize, Deserialize)]
struct JournalHeader<J> {
    /// 2 for this layout. A journal of an older version has neither this nor `lens`: it is one
    /// JSON document with the contents inside.
    #[serde(default)]
    journal_format: u32,
    #[serde(default)]
    lens: Vec<usize>,
    #[serde(flatten)]
    journal: J,
}

const JOURNAL_FORMAT: u32 = 2;

/// The bytes of the journal file: a JSON header line (the journal without its contents, and
/// each content's length), then the contents one after the other. Chapter texts and the state
/// go in as they are: escaping them into JSON strings cost the commit time in proportion to
/// the state's size.
pub fn encode_journal(journal: &Journal) -> Result<Vec<u8>, serde_json::Error> {
    let header = JournalHeader {
        journal_format: JOURNAL_FORMAT,
        lens: journal.writes.iter().map(|w| w.content.len()).collect(),
        journal,
    };
    let mut bytes = serde_json::to_vec(&header)?;
    bytes.push(b'\n');
    for w in &journal.writes {
        bytes.extend_from_slice(w.content.as_bytes());
    }
    Ok(bytes)
}

/// How [`encode_journal`]'s bytes begin (the header's first field).
const JOURNAL_PREFIX: &[u8] = b"{\"journal_format\":";

/// The header line and the contents after it, or `None` for an older version's journal: one
/// JSON document, contents inside.
fn split_journal(bytes: &[u8]) -> Option<(&[u8], &[u8])> {
    if !bytes.starts_with(JOURNAL_PREFIX) {
        return None;
    }
    let i = bytes
        .iter()
        .position(|b| *b == b'\n')
        .unwrap_or(bytes.len());
    Some((&bytes[..i], bytes.get(i + 1..).unwrap_or_default()))
}

/// The journal of [`encode_journal`]'s bytes, or of an older version's single JSON document.
fn decode_journal(bytes: &[u8]) -> Result<Journal, String> {
    let Some((line, rest)) = split_journal(bytes) else {
        let text = std::str::from_utf8(bytes).map_err(|e| e.to_string())?;
        return serde_json::from_str(novel_core::validate::strip_bom(text))
            .map_err(|e| e.to_string());
    };
    let header: JournalHeader<Journal> = serde_json::from_slice(line).map_err(|e| e.to_string())?;
    let mut journal = header.journal;
    if header.journal_format != JOURNAL_FORMAT {
        return Err(format!(
            "提交日志的格式 {} 不是这个版本能读的（{JOURNAL_FORMAT}）：用写下它的版本运行 novel chapter recover",
            header.journal_format
        ));
    }
    let total = header
        .lens
        .iter()
        .try_fold(0usize, |sum, len| sum.checked_add(*len));
    if header.lens.len() != journal.writes.len() || total != Some(rest.len()) {
        return Err(format!(
            "内容长度与记录不符（记录 {} 个文件共 {} 字节，实际 {} 字节）",
            header.lens.len(),
            total.map_or("过多".to_string(), |t| t.to_string()),
            rest.len()
        ));
    }
    let mut at = 0;
    for (w, len) in journal.writes.iter_mut().zip(&header.lens) {
        let content = &rest[at..at + len];
        at += len;
        w.content = String::from_utf8(content.to_vec())
            .map_err(|_| format!("{} 的内容不是 UTF-8 文本", w.path))?;
    }
    Ok(journal)
}

/// The chapter of an unfinished journal (its header line only): for the cold-start summary.
pub fn journal_chapter(project: &Project) -> Option<u32> {
    #[derive(Deserialize)]
    struct Light {
        chapter: u32,
    }
    let bytes = fs::read(project.path(layout::JOURNAL)).ok()?;
    let light = match split_journal(&bytes) {
        Some((line, _)) => serde_json::from_slice::<Light>(line),
        None => serde_json::from_str(novel_core::validate::strip_bom(
            std::str::from_utf8(&bytes).ok()?,
        )),
    };
    light.ok().map(|l| l.chapter)
}

/// The journal of an interrupted commit, if any.
pub fn read_journal(project: &Project) -> Result<Option<Journal>, StoreError> {
    let path = project.path(layout::JOURNAL);
    let bytes = match fs::read(&path) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(StoreError::io(&path, e)),
    };
    decode_journal(&bytes)
        .map(Some)
        .map_err(|message| StoreError::Model {
            path,
            what: "提交日志",
            message,
        })
}

fn failpoint(step: usize) {
    crate::io::failpoint("commit", step);
}

/// Number of steps of a journal (for fail-point tests): journal, each write, the changelog,
/// each append, staging removal, lock release, journal removal.
pub fn step_count(journal: &Journal) -> usize {
    journal.writes.len() + journal.appends.len() + 5
}

/// Writes the journal, then applies it. On return the commit is complete. Both happen under
/// the writers' guard (taken here if the caller does not hold it already — every writer
/// does, from its first read), so [`recover_journal`] never rolls forward a journal its writer
/// is still applying. A journal already on disk is never overwritten: it belongs to a writer
/// that was interrupted, and `novel chapter recover` must finish it first. The changelog's
/// length is recorded in the journal here, under the guard, just before anything is written,
/// so recovery can cut a torn append back to it. Returns the journal as it was written.
pub fn commit(project: &Project, journal: Journal) -> Result<Journal, StoreError> {
    let mut journal = journal;
    lock::with_guard(project, || -> Result<(), lock::LockError> {
        lock::ensure_no_journal(project)?;
        if journal.changelog_line.is_some() {
            journal.changelog_len = Some(file_len(project, layout::CHANGELOG)?);
        }
        for a in &mut journal.appends {
            a.base = file_len_clean(project, &a.path)?;
        }
        let bytes = encode_journal(&journal).map_err(|e| {
            StoreError::io(
                project.path(layout::JOURNAL),
                std::io::Error::new(std::io::ErrorKind::InvalidData, e),
            )
        })?;
        write_atomic(&project.path(layout::JOURNAL), &bytes)?;
        failpoint(0);
        Ok(apply_guarded(project, &journal, true)?)
    })?;
    Ok(journal)
}

/// The length of a project file in bytes (0 when it does not exist).
fn file_len(project: &Project, rel: &str) -> Result<u64, StoreError> {
    let path = project.path(rel);
    match fs::metadata(&path) {
        Ok(m) => Ok(m.len()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(0),
        Err(e) => Err(StoreError::io(&path, e)),
    }
}

/// The length of a JSONL file up to the end of its last whole line (0 when it does not
/// exist): where an append starts, so a line torn by an earlier crash is cut, never glued to.
fn file_len_clean(project: &Project, rel: &str) -> Result<u64, StoreError> {
    let path = project.path(rel);
    match fs::read(&path) {
        Ok(bytes) => Ok(bytes
            .iter()
            .rposition(|b| *b == b'\n')
            .map_or(0, |i| i as u64 + 1)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(0),
        Err(e) => Err(StoreError::io(&path, e)),
    }
}

/// Rolls an interrupted journal forward (`novel chapter recover`) once its writer is surely
/// gone: under the lock's guard (a writer half-way through holds it, so this waits for it or
/// gives up with `Busy`), and only while the lock is free, stale or this session's own. A
/// live holder elsewhere is a conflict naming it: that session may be about to finish the
/// journal itself, and rolling it forward would release its lock under it. `None` when there
/// was no journal.
pub fn recover_journal(
    project: &Project,
    stale_after: std::time::Duration,
) -> Result<Option<Journal>, lock::LockError> {
    if !project.path(layout::JOURNAL).exists() {
        return Ok(None);
    }
    lock::with_guard(project, || {
        let Some(journal) = read_journal(project)? else {
            return Ok(None); // finished meanwhile
        };
        if let lock::LockState::Held { info, .. } = lock::status(project, stale_after)
            && !lock::held_by_this_session(&info)
        {
            return Err(lock::LockError::Held {
                holder: lock::describe(&info),
                info: Box::new(info),
            });
        }
        apply_guarded(project, &journal, false)?;
        Ok(Some(journal))
    })
}

/// A journal with more writes than this writes them as a batch ([`crate::io::write_atomic_batch`]).
const BATCH_WRITES: usize = 16;

/// Applies a journal (again), under the guard. Idempotent.
fn apply_guarded(project: &Project, journal: &Journal, failpoints: bool) -> Result<(), StoreError> {
    let mut steps = Steps { n: 0, failpoints };
    apply_writes(project, journal, &mut steps)?;
    apply_changelog(project, journal)?;
    steps.done();
    for a in &journal.appends {
        let path = project.path(&a.path);
        if let Some(dir) = path.parent() {
            crate::io::create_dir_all(dir)?;
        }
        crate::io::append_at(&path, a.base, &a.text)?;
        steps.done();
    }
    apply_removals(project, journal)?;
    steps.done();
    lock::release_if_owner_guarded(project, &journal.token)?;
    steps.done();
    let jpath = project.path(layout::JOURNAL);
    match fs::remove_file(&jpath) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(StoreError::io(&jpath, e)),
    }
    sync_dir(&project.root)?;
    steps.done();
    Ok(())
}

/// The steps of a journal's application, numbered for the crash tests' failpoints.
struct Steps {
    n: usize,
    failpoints: bool,
}

impl Steps {
    fn done(&mut self) {
        self.n += 1;
        if self.failpoints {
            failpoint(self.n);
        }
    }
}

/// The journal's file writes, each atomic and fsynced, then their directories fsynced once.
fn apply_writes(project: &Project, journal: &Journal, steps: &mut Steps) -> Result<(), StoreError> {
    for d in &journal.dirs {
        crate::io::create_dir_all(&project.path(d))?;
    }
    let mut touched: Vec<std::path::PathBuf> = Vec::new();
    let mut pending: Vec<(std::path::PathBuf, &[u8])> = Vec::new();
    for w in &journal.writes {
        let path = project.path(&w.path);
        if let Some(dir) = path.parent() {
            crate::io::create_dir_all(dir)?;
            if !touched.iter().any(|t| t == dir) {
                touched.push(dir.to_path_buf());
            }
        }
        // Skip a write whose content is already in place (a rerun after a crash). Each file
        // is fsynced; the directories are fsynced once below, before the journal can go.
        // (A file that is not there needs no reading: an import's thousand new files.)
        let in_place = path.symlink_metadata().is_ok()
            && fs::read(&path).ok().as_deref() == Some(w.content.as_bytes());
        if !in_place {
            if journal.writes.len() > BATCH_WRITES {
                pending.push((path, w.content.as_bytes()));
                continue;
            }
            crate::io::write_atomic_unsynced_dir(&path, w.content.as_bytes())?;
        }
        steps.done();
    }
    // Many files (an import): the same temp + fsync + rename for each, the fsyncs run side by
    // side (one by one, a thousand chapters take seconds).
    crate::io::write_atomic_batch(&pending, &mut |_| steps.done())?;
    crate::io::sync_dirs(&touched)
}

/// The journal's changelog line, appended (at the recorded length, when the journal has one:
/// a torn line from a crash is cut first).
fn apply_changelog(project: &Project, journal: &Journal) -> Result<(), StoreError> {
    match (&journal.changelog_line, journal.changelog_len) {
        (Some(line), Some(base)) => {
            let path = project.path(layout::CHANGELOG);
            if let Some(dir) = path.parent() {
                crate::io::create_dir_all(dir)?;
            }
            crate::io::append_at(&path, base, line)
        }
        (Some(line), None) => append_line(project, layout::CHANGELOG, line),
        (None, _) => Ok(()),
    }
}

/// The journal's removals (staged files moved into place), and the staging directory synced.
fn apply_removals(project: &Project, journal: &Journal) -> Result<(), StoreError> {
    for rel in &journal.remove {
        let path = project.path(rel);
        match fs::remove_file(&path) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(StoreError::io(&path, e)),
        }
        if let Some(dir) = path.parent() {
            // Per-storyline staging directories go once empty.
            if dir
                .parent()
                .is_some_and(|p| p.ends_with("staging/storylines"))
            {
                let _ = fs::remove_dir(dir);
            }
        }
    }
    let mut dirs: Vec<std::path::PathBuf> = journal
        .remove
        .iter()
        .filter_map(|rel| project.path(rel).parent().map(std::path::Path::to_path_buf))
        .collect();
    // A storyline's staging folder that went empty is removed: its parent changed too.
    if journal
        .remove
        .iter()
        .any(|r| r.starts_with("staging/storylines/"))
    {
        dirs.push(project.path("staging/storylines"));
    }
    dirs.sort();
    dirs.dedup();
    dirs.retain(|d| d.is_dir());
    crate::io::sync_dirs(&dirs)
}

/// Appends `line` to a JSONL file unless it is already its last line (atomic rewrite): how a
/// journal written by an older version, without the changelog's length, is finished.
fn append_line(project: &Project, rel: &str, line: &str) -> Result<(), StoreError> {
    let path = project.path(rel);
    let mut text = if path.exists() {
        read_text(&path)?
    } else {
        String::new()
    };
    if text.lines().next_back() == Some(line) {
        return Ok(());
    }
    if !text.is_empty() && !text.ends_with('\n') {
        text.push('\n');
    }
    text.push_str(line);
    text.push('\n');
    write_atomic(&path, text.as_bytes())
}

/// Removes what a process killed mid-write leaves behind, wherever in the project the program
/// writes: temp files (and temp lock directories) of atomic writes whose writer is gone —
/// `.<name>.tmp-<pid>-…` in any directory of the project —, lock directories set aside for
/// removal, and a `novel init`/`import` build directory `.novel-init-<pid>-…` beside the
/// project whose writer is gone. Returns what it removed (project-relative; the build
/// directory as `../<name>`).
pub fn sweep_leftovers(project: &Project) -> Vec<String> {
    let mut removed = Vec::new();
    let mut debris: Vec<std::path::PathBuf> = Vec::new();
    let mut walk = walkdir::WalkDir::new(&project.root)
        .min_depth(1)
        .sort_by_file_name()
        .into_iter();
    while let Some(entry) = walk.next() {
        let Ok(e) = entry else { continue };
        if is_debris(e.file_name(), e.depth() == 1) {
            debris.push(e.path().to_path_buf());
            if e.file_type().is_dir() {
                // Removed whole below: nothing inside needs looking at.
                walk.skip_current_dir();
            }
        }
    }
    for p in debris {
        let gone = if p.is_dir() {
            fs::remove_dir_all(&p)
        } else {
            fs::remove_file(&p)
        };
        if gone.is_ok()
            && let Ok(rel) = p.strip_prefix(&project.root)
        {
            removed.push(rel.to_string_lossy().replace('\\', "/"));
        }
    }
    if let Some(parent) = project.root.parent() {
        removed.extend(
            sweep_build_dirs(parent)
                .into_iter()
                .map(|n| format!("../{n}")),
        );
    }
    removed.sort();
    removed
}

/// Removes the `novel init`/`import` build directories `.novel-init-<pid>-…` directly in
/// `dir` whose writer is gone (a new project's files are built there and moved into place;
/// a writer killed before the move leaves it, with no project yet to recover in). Returns the
/// names removed.
pub fn sweep_build_dirs(dir: &std::path::Path) -> Vec<String> {
    let mut removed = Vec::new();
    let Ok(read) = fs::read_dir(dir) else {
        return removed;
    };
    for e in read.filter_map(Result::ok) {
        let name = e.file_name().to_string_lossy().into_owned();
        let dead = name
            .strip_prefix(".novel-init-")
            .and_then(|rest| rest.split('-').next())
            .and_then(|pid| pid.parse::<u32>().ok())
            .is_some_and(|pid| pid != std::process::id() && !lock::process_alive(pid));
        if dead && fs::remove_dir_all(e.path()).is_ok() {
            removed.push(name);
        }
    }
    removed.sort();
    removed
}

/// Whether a file or directory named `name` is what a killed writer leaves: a temp of an atomic
/// write (`.<name>.tmp-<pid>-…`, also the lock's `.novel.lock.tmp-<pid>-…`) whose process is
/// gone, or (at the project's top level) a lock directory set aside for removal.
fn is_debris(name: &std::ffi::OsStr, top: bool) -> bool {
    let name = name.to_string_lossy();
    if top && name.starts_with(".novel.lock.removed-") {
        return true;
    }
    name.starts_with('.')
        && name
            .split_once(".tmp-")
            .and_then(|(_, rest)| rest.split('-').next())
            .and_then(|pid| pid.parse::<u32>().ok())
            .is_some_and(|pid| pid != std::process::id() && !lock::process_alive(pid))
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
        range: crate::next::volume_span(project, volume, &mut Vec::new()).map(|s| s.range),
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
        let evaluation = crate::state::typed(project, &rel, FileKind::Evaluation, value)?;
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
    // The draft kept for `stage refined`'s measure has served its purpose; a change list never
    // applied (the author accepted the text as it was) goes with it.
    for rel in [
        layout::staging_draft(n),
        layout::staging_edits(n),
        layout::staging_context(n, "style-refiner"),
        layout::staging_context(n, "quality-judge"),
    ] {
        if fs::symlink_metadata(project.path(&rel)).is_ok() {
            plan.remove.push(rel);
        }
    }
    // Agents' usage no stage folded (an agent dispatched after the last stage) goes too.
    if let Ok(entries) = fs::read_dir(project.path("staging/logs")) {
        for name in entries
            .flatten()
            .filter_map(|e| e.file_name().into_string().ok())
        {
            if novel_core::naming::is_usage_record(&name) {
                plan.remove.push(format!("staging/logs/{name}"));
            }
        }
    }
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
        crate::next::volume_span(project, cp.volume(), &mut Vec::new()).map(|s| s.range[1]);
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

    fn sample() -> Journal {
        Journal {
            chapter: 31,
            token: "t".into(),
            writes: vec![
                JournalWrite {
                    path: "chapters/chapter-031.md".into(),
                    content: "# 第31章 回声\n\n「他说：\"走。\"」\n\t\u{1f600}\n".into(),
                },
                JournalWrite {
                    path: "state/current-state.json".into(),
                    content: "{\n  \"state_version\": 3\n}\n".into(),
                },
                JournalWrite {
                    path: "empty.md".into(),
                    content: String::new(),
                },
            ],
            changelog_line: Some("{\"chapter\":31}".into()),
            changelog_len: Some(120),
            dirs: Vec::new(),
            appends: vec![JournalAppend {
                path: "memory/characters/lu-chen.jsonl".into(),
                base: 7,
                text: "{\"chapter\":31}".into(),
            }],
            remove: vec!["staging/chapters/chapter-031.md".into()],
            retiring: None,
            cleanup: None,
            kind: None,
        }
    }

    /// N5: a journal on disk belongs to a writer that was interrupted; a new journal never
    /// replaces it (`recover` must finish it first), whoever asks.
    #[test]
    fn a_pending_journal_is_never_overwritten() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("book");
        crate::init::init_project(&root, &crate::init::InitOptions::default()).unwrap();
        let p = Project::open(&root).unwrap();
        let pending = encode_journal(&sample()).unwrap();
        std::fs::write(p.path(layout::JOURNAL), &pending).unwrap();
        let other = Journal::files(
            1,
            String::new(),
            vec![JournalWrite {
                path: "notes.md".into(),
                content: "新的".into(),
            }],
            JournalKind::Revision,
        );
        let err = commit(&p, other).unwrap_err();
        assert_eq!(err.code(), "E_JOURNAL", "{err}");
        assert!(err.to_string().contains("第 31 章的提交"), "{err}");
        assert_eq!(std::fs::read(p.path(layout::JOURNAL)).unwrap(), pending);
        assert!(!p.path("notes.md").exists());
    }

    #[test]
    fn journal_contents_follow_the_header_as_they_are() {
        let j = sample();
        let bytes = encode_journal(&j).unwrap();
        let (line, rest) = split_journal(&bytes).unwrap();
        assert!(!line.contains(&b'\n'));
        assert_eq!(
            rest,
            [
                j.writes[0].content.as_bytes(),
                j.writes[1].content.as_bytes()
            ]
            .concat()
        );
        assert_eq!(decode_journal(&bytes).unwrap(), j);
    }

    #[test]
    fn an_older_journal_is_still_read() {
        let j = sample();
        let mut v = serde_json::to_value(&j).unwrap();
        for (w, orig) in v["writes"]
            .as_array_mut()
            .unwrap()
            .iter_mut()
            .zip(&j.writes)
        {
            w["content"] = serde_json::json!(orig.content);
        }
        for text in [v.to_string(), serde_json::to_string_pretty(&v).unwrap()] {
            assert_eq!(decode_journal(text.as_bytes()).unwrap(), j);
        }
    }

    #[test]
    fn a_journal_whose_contents_do_not_add_up_is_an_error() {
        let bytes = encode_journal(&sample()).unwrap();
        for cut in [1, 5] {
            let err = decode_journal(&bytes[..bytes.len() - cut]).unwrap_err();
            assert!(err.contains("长度"), "{err}");
        }
        let mut longer = bytes.clone();
        longer.push(b'x');
        assert!(decode_journal(&longer).is_err());
        // Contents that are not UTF-8 text.
        let mut bad = encode_journal(&sample()).unwrap();
        let at = bad.len() - 3;
        bad[at] = 0xff;
        assert!(decode_journal(&bad).unwrap_err().contains("UTF-8"));
        // Lengths that overflow when added up are an error, not a panic.
        let text = String::from_utf8(encode_journal(&sample()).unwrap()).unwrap();
        let start = text.find("\"lens\":[").unwrap() + 8;
        let end = start + text[start..].find(']').unwrap();
        let huge = format!("{}{},2,0{}", &text[..start], usize::MAX, &text[end..]);
        assert!(
            decode_journal(huge.as_bytes())
                .unwrap_err()
                .contains("长度")
        );
    }
}
