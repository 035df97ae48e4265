//! The state files on disk: `state/current-state.json`, `state/changelog.jsonl`,
//! `foreshadowing/global.json`, the volume foreshadowing plans and the character name index.
//! Reads check the schema; writes are atomic; backups go to `state/backups/`.
//!
//! Layer: writers (the state engine's files), above the writers' ground (`journal`,
//! `transaction`) through which its writes are committed.

use std::path::Path;

use novel_core::FileKind;
use novel_core::model::foreshadowing::PlannedForeshadowing;
use novel_core::model::{
    ChangelogEntry, Character, ForeshadowingGlobal, Storylines, VolumeForeshadowing, WrittenDigests,
};
use novel_core::ops::{Context, DeltaCheck, NameIndex, OpsError};
use novel_core::pipeline::text_digest;
use novel_core::validate::{check_document, parse_json};
use serde_json::Value;

use crate::error::StoreError;
use crate::io::{create_dir_all, read_json_value, read_text, to_json_text, typed, write_json};
use crate::journal::{Journal, JournalKind, JournalWrite};
use crate::layout;
use crate::project::Project;
use crate::state_text::Untouched;

/// How a reader trusts a file: `Checked` validates it against its kind's schema (every
/// command); `Typed` only reads it into its type (the guard hook, which compiles no schema but
/// that of the file just written).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Trust {
    Checked,
    Typed,
}

/// Reads a JSON file and checks it against its kind's schema; the first error is reported.
fn read_checked(project: &Project, rel: &str, kind: FileKind) -> Result<Value, StoreError> {
    read_as(project, rel, kind, Trust::Checked)
}

fn read_as(
    project: &Project,
    rel: &str,
    kind: FileKind,
    trust: Trust,
) -> Result<Value, StoreError> {
    let path = project.path(rel);
    let value = read_json_value(&path)?;
    if trust == Trust::Checked {
        schema_checked(&path, rel, kind, &value)?;
    }
    Ok(value)
}

/// The first schema error of `value` (the file at `rel`) as a model error.
fn schema_checked(path: &Path, rel: &str, kind: FileKind, value: &Value) -> Result<(), StoreError> {
    match check_document(rel, kind, value).into_iter().next() {
        None => Ok(()),
        Some(f) => Err(StoreError::Model {
            path: path.to_path_buf(),
            what: kind.label(),
            message: f.brief(),
        }),
    }
}

/// `state/current-state.json` as a JSON value (schema-checked).
pub fn load_state(project: &Project) -> Result<Value, StoreError> {
    read_checked(project, layout::CURRENT_STATE, FileKind::CurrentState)
}

/// `state/current-state.json` as a rebuild sees it: the file a rebuild must be able to repair
/// is exactly the one [`load_state`] refuses.
#[derive(Debug)]
pub enum StateOnDisk {
    /// Present and schema-valid.
    Valid(Value),
    /// No such file.
    Missing,
    /// Present but unreadable, not JSON, or not a valid state: why.
    Unusable(StoreError),
}

pub fn state_on_disk(project: &Project) -> StateOnDisk {
    match load_state(project) {
        Ok(v) => StateOnDisk::Valid(v),
        Err(StoreError::Io { source, .. }) if source.kind() == std::io::ErrorKind::NotFound => {
            StateOnDisk::Missing
        }
        Err(e) => StateOnDisk::Unusable(e),
    }
}

/// The storyline ids of `storylines/storylines.json` (schema-checked), file order.
pub fn load_storyline_ids(project: &Project) -> Result<Vec<String>, StoreError> {
    load_storyline_ids_as(project, Trust::Checked)
}

fn load_storyline_ids_as(project: &Project, trust: Trust) -> Result<Vec<String>, StoreError> {
    let v = read_as(project, layout::STORYLINES, FileKind::Storylines, trust)?;
    let lines: Storylines = typed(project, layout::STORYLINES, FileKind::Storylines, v)?;
    Ok(lines.storylines.into_iter().map(|s| s.id).collect())
}

/// `foreshadowing/global.json`; an absent file is an empty list.
pub fn load_global(project: &Project) -> Result<ForeshadowingGlobal, StoreError> {
    load_global_as(project, Trust::Checked)
}

fn load_global_as(project: &Project, trust: Trust) -> Result<ForeshadowingGlobal, StoreError> {
    if !project.path(layout::FORESHADOWING_GLOBAL).exists() {
        return Ok(empty_global());
    }
    let kind = FileKind::ForeshadowingGlobal;
    let v = read_as(project, layout::FORESHADOWING_GLOBAL, kind, trust)?;
    typed(project, layout::FORESHADOWING_GLOBAL, kind, v)
}

fn empty_global() -> ForeshadowingGlobal {
    ForeshadowingGlobal {
        foreshadowing: Vec::new(),
        extra: Default::default(),
    }
}

/// Every volume's planned threads (`volumes/vol-NN/foreshadowing.json`), volume order.
pub fn load_plan(project: &Project) -> Result<Vec<PlannedForeshadowing>, StoreError> {
    load_plan_as(project, Trust::Checked)
}

/// What a delta is checked against (`novel ops validate`, `novel ops apply`, the chapter
/// commit, the guard hook): the state, the foreshadowing file, the volume plans, the character
/// names, the storyline ids and the changelog's last line.
#[derive(Debug, Clone)]
pub struct DeltaInputs {
    /// The state object. Entries of the entity maps that no op of the delta names may be
    /// `null` in it, their text kept in `untouched` ([`crate::state_text`]): write the state
    /// a run leaves with [`state_text`](Self::state_text), never by serialising it alone.
    pub state: Value,
    untouched: Untouched,
    /// The foreshadowing file; empty when it was not read (`global_read`).
    pub global: ForeshadowingGlobal,
    /// Whether `global` is the file's content. It is read only for a delta with a `foreshadow`
    /// op ([`novel_core::ops::touches_foreshadowing`]): no other op reads or changes it, and a
    /// commit must not pay for every thread of the book.
    pub global_read: bool,
    pub plan: Vec<PlannedForeshadowing>,
    pub names: NameIndex,
    pub storylines: Vec<String>,
    /// The changelog's last line ([`changelog_tail`]: only the end of the file is read).
    pub log_last: Option<ChangelogEntry>,
    /// The book's next chapter ([`next_chapter`]): no delta may be for a later one.
    pub next_chapter: Option<u32>,
    /// The digests of the state and foreshadowing files as read.
    pub read: WrittenDigests,
}

impl DeltaInputs {
    /// What a changelog line written with these inputs records of the files it leaves
    /// ([`ChangelogEntry::written`]): the new state text, and the foreshadowing text when it
    /// changes (else the file as read, which was checked or itself trusted).
    pub fn written(&self, state_text: &str, global_text: Option<&str>) -> WrittenDigests {
        let mut digests = WrittenDigests::of(state_text, global_text);
        if global_text.is_none() {
            digests.global = self.read.global.clone();
        }
        digests
    }

    /// The foreshadowing file a run leaves, when it is to be written: `after` if the file was
    /// read and the run changed it. A file that was not read is never written back.
    pub fn global_change<'a>(
        &self,
        after: &'a ForeshadowingGlobal,
    ) -> Option<&'a ForeshadowingGlobal> {
        (self.global_read && *after != self.global).then_some(after)
    }

    /// The text of `state/current-state.json` for `state`, the state a run of this delta left:
    /// the entries it did not reach written back as they were read.
    pub fn state_text(&self, state: &Value) -> Result<String, StoreError> {
        crate::state_text::to_text(state, &self.untouched).map_err(|e| StoreError::Model {
            path: layout::CURRENT_STATE.into(),
            what: FileKind::CurrentState.label(),
            message: e.to_string(),
        })
    }

    /// The one delta check ([`novel_core::ops::check_delta`]) against these files.
    pub fn check(&self, delta: &Value) -> Result<DeltaCheck, OpsError> {
        self.check_against(self.state.clone(), delta)
    }

    /// [`check`](Self::check) for a writer that goes on to apply the result: the state is
    /// moved into the run instead of copied, and `state` is left `null` — only the digests
    /// and the foreshadowing file are read afterwards ([`written`](Self::written),
    /// [`global_change`](Self::global_change)).
    pub fn check_taking_state(&mut self, delta: &Value) -> Result<DeltaCheck, OpsError> {
        let state = std::mem::take(&mut self.state);
        self.check_against(state, delta)
    }

    fn check_against(&self, state: Value, delta: &Value) -> Result<DeltaCheck, OpsError> {
        novel_core::ops::check_delta(
            state,
            &self.global,
            delta,
            Context {
                names: &self.names,
                plan: &self.plan,
            },
            &self.storylines,
            self.log_last.as_ref(),
            self.next_chapter,
        )
    }
}

/// The book's next chapter as the checkpoint says (its last completed chapter + 1), read
/// without a schema; `None` when the checkpoint cannot be read (the delta check then does not
/// judge how far ahead a delta is).
pub fn next_chapter(project: &Project) -> Option<u32> {
    #[derive(serde::Deserialize)]
    struct Light {
        #[serde(default)]
        last_completed_chapter: u32,
    }
    let text = read_text(&project.path(layout::CHECKPOINT)).ok()?;
    serde_json::from_str::<Light>(&text)
        .ok()
        .map(|c| c.last_completed_chapter.saturating_add(1))
}

/// Loads the [`DeltaInputs`] `delta` is checked against, each file read with `trust`. The
/// foreshadowing file is read only when the delta has a `foreshadow` op, and the volume plans
/// only when it names a thread that file does not hold yet: they serve only to seed such a
/// thread ([`novel_core::ops::merge_foreshadow`]), and a commit must not pay for every past
/// volume's plan or every thread of the book.
pub fn load_delta_inputs(
    project: &Project,
    trust: Trust,
    delta: &Value,
) -> Result<DeltaInputs, StoreError> {
    let log_last = changelog_tail(project)?;
    // The two files the binary alone writes are not schema-checked again when their bytes are
    // the ones the last line recorded (the commit's cost must not grow with them).
    let known = log_last.as_ref().and_then(|e| e.written.as_ref());
    let (state, untouched) =
        read_state_for(project, trust, known.map(|w| w.state.as_str()), delta)?;
    let known_global = known.and_then(|w| w.global.clone());
    let global_read = novel_core::ops::touches_foreshadowing(delta);
    let global = if !global_read {
        None
    } else if project.path(layout::FORESHADOWING_GLOBAL).exists() {
        let kind = FileKind::ForeshadowingGlobal;
        let read = read_known(
            project,
            layout::FORESHADOWING_GLOBAL,
            kind,
            trust,
            known_global.as_deref(),
        )?;
        Some((
            typed(project, layout::FORESHADOWING_GLOBAL, kind, read.value)?,
            Some(read.digest),
        ))
    } else {
        Some((empty_global(), None))
    };
    // Not read: the digest the last line recorded is carried forward — the bytes the binary
    // last wrote, which a later reader compares with the file before it trusts it.
    let (global, global_digest) = global.unwrap_or_else(|| (empty_global(), known_global));
    let plan = if novel_core::ops::seeds_threads(&global, delta) {
        load_plan_as(project, trust)?
    } else {
        Vec::new()
    };
    Ok(DeltaInputs {
        state: state.value,
        untouched,
        global,
        global_read,
        plan,
        // Only to hint at the slug of a display name written in a path.
        names: if novel_core::ops::needs_names(delta) {
            load_names(project)
        } else {
            NameIndex::default()
        },
        storylines: load_storyline_ids_as(project, trust).map_err(|e| StoreError::Storylines {
            source: Box::new(e),
        })?,
        log_last,
        next_chapter: next_chapter(project),
        read: WrittenDigests {
            state: state.digest,
            global: global_digest,
            extra: Default::default(),
        },
    })
}

/// A file's value and the digest of its bytes.
struct Known {
    value: Value,
    digest: String,
}

/// [`read_as`], except that a file whose bytes have the digest `known` (recorded by the binary
/// when it wrote them) is trusted as checked.
fn read_known(
    project: &Project,
    rel: &str,
    kind: FileKind,
    trust: Trust,
    known: Option<&str>,
) -> Result<Known, StoreError> {
    let path = project.path(rel);
    let text = read_text(&path)?;
    let digest = text_digest(text.as_bytes());
    let value = parse_json(&text).map_err(|error| StoreError::Json {
        path: path.clone(),
        error,
    })?;
    if trust == Trust::Checked && known != Some(digest.as_str()) {
        schema_checked(&path, rel, kind, &value)?;
    }
    Ok(Known { value, digest })
}

/// `state/current-state.json` for `delta`. The bytes the last changelog line recorded
/// (`known`), or any bytes for a reader that does not check the schema ([`Trust::Typed`]), are
/// parsed only where the delta reaches ([`crate::state_text`]): what a commit costs then does
/// not grow with the cast. Other bytes are parsed whole and schema-checked.
fn read_state_for(
    project: &Project,
    trust: Trust,
    known: Option<&str>,
    delta: &Value,
) -> Result<(Known, Untouched), StoreError> {
    let path = project.path(layout::CURRENT_STATE);
    let text = read_text(&path)?;
    let digest = text_digest(text.as_bytes());
    if trust == Trust::Typed || known == Some(digest.as_str()) {
        // Not an object, or not JSON: the ordinary parse below says where.
        if let Ok((value, untouched)) = crate::state_text::parse_for(&text, delta) {
            return Ok((Known { value, digest }, untouched));
        }
    }
    let value = parse_json(&text).map_err(|error| StoreError::Json {
        path: path.clone(),
        error,
    })?;
    if trust == Trust::Checked {
        schema_checked(&path, layout::CURRENT_STATE, FileKind::CurrentState, &value)?;
    }
    Ok((Known { value, digest }, Untouched::default()))
}

fn load_plan_as(project: &Project, trust: Trust) -> Result<Vec<PlannedForeshadowing>, StoreError> {
    let mut out = Vec::new();
    let dir = project.path("volumes");
    let Ok(names) = crate::io::dir_names(&dir) else {
        return Ok(out);
    };
    let mut vols: Vec<String> = names
        .into_iter()
        .filter(|n| n.starts_with("vol-"))
        .collect();
    vols.sort();
    for vol in vols {
        let rel = format!("volumes/{vol}/foreshadowing.json");
        if project.path(&rel).exists() {
            let kind = FileKind::VolumeForeshadowing;
            let v = read_as(project, &rel, kind, trust)?;
            let plan: VolumeForeshadowing = typed(project, &rel, kind, v)?;
            out.extend(plan.foreshadowing);
        }
    }
    Ok(out)
}

/// Display names and aliases of every character file → slug. Unreadable files are skipped:
/// the index only improves hints.
pub fn load_names(project: &Project) -> NameIndex {
    let mut names = NameIndex::default();
    for sub in ["characters/active", "characters/retired"] {
        let dir = project.path(sub);
        let Ok(read) = crate::io::dir_names(&dir) else {
            continue;
        };
        for name in read {
            let path = dir.join(name);
            if path.extension().is_none_or(|x| x != "json") {
                continue;
            }
            if let Ok(v) = read_json_value(&path)
                && let Ok(c) = serde_json::from_value::<Character>(v)
            {
                names.insert(&c.display_name, &c.id);
                for a in &c.aliases {
                    names.insert(a, &c.id);
                }
            }
        }
    }
    names
}

/// `state/changelog.jsonl`, every line parsed and schema-checked; a bad line is an error
/// naming it (a torn last line from a crash included).
pub fn load_changelog(project: &Project) -> Result<Vec<ChangelogEntry>, StoreError> {
    let path = project.path(layout::CHANGELOG);
    if !path.exists() {
        return Ok(Vec::new());
    }
    let text = read_text(&path)?;
    parse_changelog(&path, &text)
}

/// The last line of `state/changelog.jsonl` (`None` for an absent or empty file), read from
/// the end of the file so that a commit costs the same at chapter 1,000 as at chapter 30 (in
/// a [`crate::io::ReadOnce`] scope the whole file is read once and shared with the command's
/// other readers of it). The line must parse and be whole: a last line without its newline was
/// torn by a crash (the journal that would cut it is gone, or it was written by hand) and is an
/// error, never used.
pub fn changelog_tail(project: &Project) -> Result<Option<ChangelogEntry>, StoreError> {
    use std::io::{Read, Seek, SeekFrom};
    let path = project.path(layout::CHANGELOG);
    if crate::io::in_scope()
        && let Ok(text) = read_text(&path)
    {
        return last_entry(&path, text.as_bytes());
    }
    let mut f = match std::fs::File::open(&path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(StoreError::io(&path, e)),
    };
    let len = f.metadata().map_err(|e| StoreError::io(&path, e))?.len();
    let mut window: u64 = 16 * 1024;
    loop {
        let start = len.saturating_sub(window);
        let mut bytes = Vec::new();
        f.seek(SeekFrom::Start(start))
            .and_then(|_| f.read_to_end(&mut bytes))
            .map_err(|e| StoreError::io(&path, e))?;
        if start > 0 && !bytes.trim_ascii_end().contains(&b'\n') {
            window *= 4; // a line longer than the window: read further back
            continue;
        }
        return last_entry(&path, &bytes);
    }
}

/// The changelog entry on the last line of `bytes` (the file's end, holding that whole line).
fn last_entry(path: &Path, bytes: &[u8]) -> Result<Option<ChangelogEntry>, StoreError> {
    let body = bytes.trim_ascii_end();
    let line_start = body.iter().rposition(|b| *b == b'\n').map(|i| i + 1);
    let line = &body[line_start.unwrap_or(0)..];
    let line = line.strip_prefix("\u{feff}".as_bytes()).unwrap_or(line);
    if line.is_empty() {
        return Ok(None);
    }
    let torn = !bytes.ends_with(b"\n");
    let bad = |message: String| StoreError::Model {
        path: path.to_path_buf(),
        what: FileKind::ChangelogEntry.label(),
        message,
    };
    let text = std::str::from_utf8(line).map_err(|_| StoreError::NotUtf8 {
        path: path.to_path_buf(),
    })?;
    let parsed = parse_changelog(path, text).map_err(|e| match e {
        // A proper prefix of a one-line JSON object never parses: this is the torn line.
        StoreError::Model { .. } if torn => bad(
            "最后一行不完整（没有换行结尾，是被中断的写入留下的半行）：运行 novel chapter recover；仍在时从 state/backups/ 恢复变更日志".to_string(),
        ),
        StoreError::Model { message, .. } => bad(message.replacen("第 1 行", "最后一行", 1)),
        other => other,
    })?;
    Ok(parsed.into_iter().next_back())
}

fn parse_changelog(path: &Path, text: &str) -> Result<Vec<ChangelogEntry>, StoreError> {
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let bad = |message: String| StoreError::Model {
            path: path.to_path_buf(),
            what: FileKind::ChangelogEntry.label(),
            message: format!("第 {} 行：{message}", i + 1),
        };
        // The engine writes these lines itself: a typed parse is enough on this hot path; only
        // a line that fails it pays for the schema check, to say precisely what is wrong.
        match serde_json::from_str::<ChangelogEntry>(line) {
            Ok(entry) => out.push(entry),
            Err(e) => {
                let value = parse_json(line).map_err(|e| bad(e.to_string()))?;
                let reason = check_document("", FileKind::ChangelogEntry, &value)
                    .into_iter()
                    .next()
                    .map_or(e.to_string(), |f| f.brief());
                return Err(bad(reason));
            }
        }
    }
    Ok(out)
}

pub fn write_state(project: &Project, state: &Value) -> Result<(), StoreError> {
    let path = project.path(layout::CURRENT_STATE);
    if let Some(dir) = path.parent() {
        create_dir_all(dir)?;
    }
    write_json(&path, state)
}

pub fn write_global(project: &Project, global: &ForeshadowingGlobal) -> Result<(), StoreError> {
    let path = project.path(layout::FORESHADOWING_GLOBAL);
    if let Some(dir) = path.parent() {
        create_dir_all(dir)?;
    }
    write_json(&path, global)
}

/// The changelog part of a [`StateWrite`].
pub enum ChangelogWrite<'a> {
    /// One line appended (`ops apply`, `ops skip`): the file is appended to, never rewritten.
    Append(&'a ChangelogEntry),
    /// The file replaced by these entries (`state rebuild --until-chapter N --write`).
    Replace(&'a [ChangelogEntry]),
    /// Left as it is.
    Keep,
}

/// What one state writer outside the chapter commit changes: the state file, the global
/// foreshadowing (when it changed) and the changelog.
pub struct StateWrite<'a> {
    /// The chapter the change is about (for messages).
    pub chapter: u32,
    pub kind: JournalKind,
    /// The new state file's text; `None` leaves it as it is (`ops skip`).
    pub state: Option<String>,
    pub global: Option<&'a ForeshadowingGlobal>,
    pub changelog: ChangelogWrite<'a>,
    /// Backups of the files replaced ([`backup_write`]), written first in the same journal.
    pub backups: Vec<JournalWrite>,
}

/// Applies a [`StateWrite`] all-or-nothing through the commit journal: killed at any point,
/// the project is either untouched or `novel chapter recover` finishes it to the same bytes,
/// and no other writer runs in between (see [`crate::lock::ensure_no_journal`]). `token` is
/// the lock the journal releases at its end (empty when the lock is the session's own).
pub fn commit_state(project: &Project, w: StateWrite<'_>, token: String) -> Result<(), StoreError> {
    let mut writes = w.backups;
    if let ChangelogWrite::Replace(entries) = w.changelog {
        writes.push(JournalWrite {
            path: layout::CHANGELOG.to_string(),
            content: changelog_text(entries)?,
        });
    }
    let global_text = w.global.map(to_json_text);
    let state_text = w.state;
    let changelog_line = match w.changelog {
        ChangelogWrite::Append(entry) => Some(changelog_line(&stamped(
            entry,
            state_text.as_deref(),
            global_text.as_deref(),
        ))?),
        _ => None,
    };
    if let Some(content) = global_text {
        writes.push(JournalWrite {
            path: layout::FORESHADOWING_GLOBAL.to_string(),
            content,
        });
    }
    if let Some(content) = state_text {
        writes.push(JournalWrite {
            path: layout::CURRENT_STATE.to_string(),
            content,
        });
    }
    let mut journal = Journal::files(w.chapter, token, writes, w.kind);
    journal.changelog_line = changelog_line;
    crate::transaction::commit(project, journal).map(drop)
}

/// Why `ops apply` or `ops skip` wrote nothing.
#[derive(Debug, thiserror::Error)]
pub enum ApplyError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    Ops(#[from] OpsError),
    /// Every op was rejected: nothing would change, so nothing was written (the rejections are
    /// in the run).
    #[error("{} 条 op 全部被拒绝，没有写入任何文件", .0.run.rejected.len())]
    AllRejected(Box<novel_core::ops::Applied>),
}

/// How `ops apply` merges a delta.
#[derive(Debug, Clone, Copy, Default)]
pub struct ApplyRequest<'a> {
    /// Any rejected op refuses the whole delta.
    pub strict: bool,
    /// The author's own delta (`--manual`), recorded as such.
    pub manual: bool,
    /// Skipped chapters this delta makes up for (`--resolves-skipped`; only open skips).
    pub resolves: &'a [u32],
}

/// A merged delta, and the chapters whose delta is skipped and not made up once its changelog
/// line is counted.
#[derive(Debug, Clone)]
pub struct Merged {
    pub applied: novel_core::ops::Applied,
    pub skipped: Vec<u32>,
}

/// `novel ops apply`: `delta` checked the one way ([`DeltaInputs::check`], as `ops validate`
/// and the commit) and merged as that check says — the state, the foreshadowing file (when it
/// changed) and the changelog line together through the journal ([`commit_state`]), under
/// `held`, the project lock.
pub fn apply_delta(
    project: &Project,
    held: &mut crate::lock::Held<'_>,
    delta: &Value,
    req: ApplyRequest<'_>,
) -> Result<Merged, ApplyError> {
    use novel_core::ops;
    let mut inputs = load_delta_inputs(project, Trust::Checked, delta)?;
    let mut log = load_changelog(project)?;
    ops::check_resolves(&ops::skipped_chapters(&log), req.resolves)?;
    let check = inputs.check_taking_state(delta)?;
    crate::io::pausepoint("apply-checked");
    let mut applied = ops::apply_checked(check, req.strict, &crate::time::now_iso())?;
    if applied.run.all_rejected() {
        return Err(ApplyError::AllRejected(Box::new(applied)));
    }
    let chapter = applied.run.header.chapter;
    if let Some(line) = ops::repeated_line(&log, chapter, &applied.entry.applied) {
        return Err(OpsError::Repeated { chapter, line }.into());
    }
    if req.manual {
        applied.entry.source = novel_core::model::state::ChangeSource::Manual;
        applied.entry.resolves_skipped = req.resolves.to_vec();
    }
    let write = StateWrite {
        chapter: applied.run.header.chapter,
        kind: JournalKind::OpsApply,
        state: Some(inputs.state_text(&applied.run.state)?),
        global: inputs.global_change(&applied.run.global),
        changelog: ChangelogWrite::Append(&applied.entry),
        backups: Vec::new(),
    };
    commit_state(project, write, held.hand_to_journal())?;
    log.push(applied.entry.clone());
    Ok(Merged {
        skipped: ops::skipped_chapters(&log),
        applied,
    })
}

/// `novel ops skip`: records that chapter `chapter`'s delta could not be used (§10.6) — one
/// changelog line through the journal, the state unchanged — when the state is in step and
/// the changelog has not gone past that chapter ([`novel_core::ops::check_skip`]). Returns the
/// chapters skipped and not made up, this one included.
pub fn record_skip(
    project: &Project,
    held: &mut crate::lock::Held<'_>,
    chapter: u32,
    reason: &str,
) -> Result<Vec<u32>, ApplyError> {
    use novel_core::ops;
    let state = load_state(project)?;
    let mut log = load_changelog(project)?;
    ops::check_skip(&state, log.last(), chapter, next_chapter(project))?;
    let entry = ops::skipped_entry(
        chapter,
        ops::state_version(&state),
        reason,
        &crate::time::now_iso(),
    );
    let write = StateWrite {
        chapter,
        kind: JournalKind::OpsSkip,
        state: None,
        global: None,
        changelog: ChangelogWrite::Append(&entry),
        backups: Vec::new(),
    };
    commit_state(project, write, held.hand_to_journal())?;
    log.push(entry);
    Ok(ops::skipped_chapters(&log))
}

/// `entry` with the digests of the state (and foreshadowing) text written beside it, as the
/// chapter commit records them, so the next commit trusts those bytes
/// ([`ChangelogEntry::written`]). A foreshadowing file left as it is has no digest here (the
/// next reader checks it), and a line that leaves the state as it is records nothing.
fn stamped(entry: &ChangelogEntry, state: Option<&str>, global: Option<&str>) -> ChangelogEntry {
    let mut entry = entry.clone();
    if let Some(state) = state {
        entry.written = Some(WrittenDigests::of(state, global));
    }
    entry
}

/// One changelog line as the engine writes it (no newline). A `ChangelogEntry` is plain data
/// (strings, numbers, JSON values with string keys), so this does not fail in practice; if it
/// ever did, the write is refused rather than an empty line appended.
pub fn changelog_line(entry: &ChangelogEntry) -> Result<String, StoreError> {
    serde_json::to_string(entry).map_err(|e| StoreError::Model {
        path: layout::CHANGELOG.into(),
        what: FileKind::ChangelogEntry.label(),
        message: e.to_string(),
    })
}

fn changelog_text(entries: &[ChangelogEntry]) -> Result<String, StoreError> {
    let mut text = String::new();
    for e in entries {
        text.push_str(&changelog_line(e)?);
        text.push('\n');
    }
    Ok(text)
}

/// The backup of project file `rel` as a write for the journal that replaces the file: to
/// `state/backups/<stamp>-<name>` (a counter added when that name is taken on disk or by an
/// earlier backup of the same journal, `taken`), so a writer killed before its journal leaves
/// no stray backup and one killed after it leaves the backup with the rest. Returns the
/// backup's path and the write; a file that is not UTF-8 text (a torn file) is copied at once,
/// byte for byte, by [`backup`] (the write is then `None`). `None` when the file does not exist.
pub fn backup_write(
    project: &Project,
    rel: &str,
    stamp: &str,
    taken: &[JournalWrite],
) -> Result<Option<(String, Option<JournalWrite>)>, StoreError> {
    let path = project.path(rel);
    let bytes = match std::fs::read(&path) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(StoreError::io(&path, e)),
    };
    let Ok(content) = String::from_utf8(bytes) else {
        return Ok(backup(project, rel, stamp)?.map(|b| (b, None)));
    };
    let name = rel.replace('/', "--");
    let stamp = stamp.replace(':', "");
    for n in 1u32..=10_000 {
        let backup_rel = match n {
            1 => format!("{}/{stamp}-{name}", layout::BACKUPS),
            _ => format!("{}/{stamp}-{n}-{name}", layout::BACKUPS),
        };
        let free = project.path(&backup_rel).symlink_metadata().is_err()
            && !taken.iter().any(|w| w.path == backup_rel);
        if free {
            return Ok(Some((
                backup_rel.clone(),
                Some(JournalWrite {
                    path: backup_rel,
                    content,
                }),
            )));
        }
    }
    Err(StoreError::io(
        project.path(layout::BACKUPS),
        std::io::Error::new(
            std::io::ErrorKind::AlreadyExists,
            format!("{stamp}-N-{name} 的备份名都已被占用"),
        ),
    ))
}

/// Copies a project file, byte for byte (whatever it holds), into
/// `state/backups/<stamp>-<name>` before it is replaced; returns the backup's project-relative
/// path (None when the file does not exist). Never overwrites a backup: when the name is taken
/// (two backups within one second) a counter is added, `<stamp>-2-<name>`, …
pub fn backup(project: &Project, rel: &str, stamp: &str) -> Result<Option<String>, StoreError> {
    let path = project.path(rel);
    let bytes = match std::fs::read(&path) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(StoreError::io(&path, e)),
    };
    let name = rel.replace('/', "--");
    let stamp = stamp.replace(':', "");
    let dir = project.path(layout::BACKUPS);
    create_dir_all(&dir)?;
    // Far more names than backups can be made in one second; the bound only turns a file
    // system that refuses every name into an error instead of an endless loop.
    for n in 1u32..=10_000 {
        let backup_rel = match n {
            1 => format!("{}/{stamp}-{name}", layout::BACKUPS),
            _ => format!("{}/{stamp}-{n}-{name}", layout::BACKUPS),
        };
        // Write it whole under a temporary name, then link it to the free name (a link never
        // replaces an existing file): a backup is complete or absent, never empty.
        if crate::io::write_new(&project.path(&backup_rel), &bytes)? {
            return Ok(Some(backup_rel));
        }
    }
    Err(StoreError::io(
        &dir,
        std::io::Error::new(
            std::io::ErrorKind::AlreadyExists,
            format!("{stamp}-N-{name} 的备份名都已被占用"),
        ),
    ))
}

/// Pretty text of a value as the engine writes it (for diffs and dry runs).
pub fn render(value: &Value) -> String {
    to_json_text(value)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn temp_project() -> (tempfile::TempDir, Project) {
        let dir = tempfile::tempdir().unwrap();
        let project = Project {
            root: dir.path().to_path_buf(),
        };
        (dir, project)
    }

    /// Writes `text` to the project file `rel`, making its folder.
    fn put(project: &Project, rel: &str, text: &str) {
        let path = project.path(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    #[test]
    fn backups_in_the_same_second_never_overwrite_each_other() {
        let dir = tempfile::tempdir().unwrap();
        let project = Project {
            root: dir.path().to_path_buf(),
        };
        let state = project.path(layout::CURRENT_STATE);
        std::fs::create_dir_all(state.parent().unwrap()).unwrap();
        let stamp = "2026-11-22T08:00:00Z";
        let mut made = Vec::new();
        for text in ["{ torn", "第二版", "第三版"] {
            std::fs::write(&state, text).unwrap();
            made.push(
                backup(&project, layout::CURRENT_STATE, stamp)
                    .unwrap()
                    .unwrap(),
            );
        }
        assert_eq!(
            made,
            [
                "state/backups/2026-11-22T080000Z-state--current-state.json",
                "state/backups/2026-11-22T080000Z-2-state--current-state.json",
                "state/backups/2026-11-22T080000Z-3-state--current-state.json",
            ]
        );
        let kept: Vec<String> = made
            .iter()
            .map(|rel| std::fs::read_to_string(project.path(rel)).unwrap())
            .collect();
        assert_eq!(kept, ["{ torn", "第二版", "第三版"], "byte for byte");
        std::fs::remove_file(&state).unwrap();
        assert_eq!(
            backup(&project, layout::CURRENT_STATE, stamp).unwrap(),
            None
        );
    }

    /// The volume plans are read for a delta that seeds a thread, and only then: a commit that
    /// only moves known threads does not read (or stumble on) every past volume's plan.
    #[test]
    fn volume_plans_are_read_only_to_seed_a_new_thread() {
        let (_dir, project) = temp_project();
        let write = |rel: &str, text: &str| put(&project, rel, text);
        write(
            layout::CURRENT_STATE,
            r#"{"schema_version": 1, "state_version": 0, "last_updated_chapter": 0}"#,
        );
        write(
            layout::FORESHADOWING_GLOBAL,
            r#"{"foreshadowing": [{"id": "known", "scope": "long", "status": "planted"}]}"#,
        );
        write(
            layout::STORYLINES,
            r#"{"storylines": [{"id": "main_arc", "name": "主线", "type": "main_arc", "scope": "novel", "status": "active"}]}"#,
        );
        write(
            "volumes/vol-01/foreshadowing.json",
            r#"{"volume": 1, "foreshadowing": [{"id": "planned", "description": "残破玉简的来历", "scope": "short"}]}"#,
        );
        let delta = |id: &str| {
            serde_json::json!({"chapter": 1, "base_state_version": 0, "storyline_id": "main_arc",
                "ops": [{"op": "foreshadow", "path": id, "value": "advanced"}]})
        };
        let seeded = |id: &str| {
            let d = delta(id);
            let inputs = load_delta_inputs(&project, Trust::Checked, &d).unwrap();
            let check = inputs.check(&d).unwrap();
            let thread = check.run.global.foreshadowing.iter().find(|f| f.id == id);
            (inputs.plan.len(), thread.unwrap().description.clone())
        };
        assert_eq!(
            seeded("known"),
            (0, String::new()),
            "no plan read for a known thread"
        );
        assert_eq!(seeded("planned"), (1, "残破玉简的来历".to_string()));
        // A later volume's broken plan: a known thread's delta is not held up by it, a new
        // thread's is (its seed could come from that plan).
        write("volumes/vol-02/foreshadowing.json", "{ torn");
        assert_eq!(seeded("known"), (0, String::new()));
        let d = delta("planned");
        let err = load_delta_inputs(&project, Trust::Checked, &d).unwrap_err();
        assert!(err.to_string().contains("vol-02"), "{err}");
    }

    /// The foreshadowing file is read for a delta with a `foreshadow` op, and only then: a
    /// commit that moves no thread neither reads (nor stumbles on) it nor writes it back, and
    /// its changelog line carries forward the digest of the bytes last written.
    #[test]
    fn foreshadowing_file_is_read_only_for_a_foreshadow_op() {
        let (_dir, project) = temp_project();
        let write = |rel: &str, text: &str| put(&project, rel, text);
        let state = r#"{"schema_version": 1, "state_version": 1, "last_updated_chapter": 1}"#;
        write(layout::CURRENT_STATE, state);
        write(
            layout::STORYLINES,
            r#"{"storylines": [{"id": "main_arc", "name": "主线", "type": "main_arc", "scope": "novel", "status": "active"}]}"#,
        );
        let written = format!(
            r#"{{"state": "{}", "global": "last-written"}}"#,
            novel_core::pipeline::text_digest(state.as_bytes())
        );
        write(
            layout::CHANGELOG,
            &format!(
                r#"{{"chapter": 1, "source": "chapter", "storyline_id": "main_arc", "base_state_version": 0, "state_version": 1, "timestamp": "2026-01-01T00:00:00Z", "applied": [], "written": {written}}}"#
            ),
        );
        write(layout::FORESHADOWING_GLOBAL, "{ torn");
        let delta = |op: serde_json::Value| {
            serde_json::json!({"chapter": 2, "base_state_version": 1, "storyline_id": "main_arc",
                "ops": [op]})
        };
        let set = delta(
            serde_json::json!({"op": "set", "path": "world_state.time_marker", "value": "三日后"}),
        );
        let inputs = load_delta_inputs(&project, Trust::Checked, &set).unwrap();
        assert!(!inputs.global_read);
        assert_eq!(inputs.read.global.as_deref(), Some("last-written"));
        let check = inputs.check(&set).unwrap();
        assert!(check.refusal(false).is_none());
        let mut after = check.run.global.clone();
        after
            .extra
            .insert("changed".into(), serde_json::json!(true));
        assert!(
            inputs.global_change(&after).is_none(),
            "a file not read is never written back"
        );
        assert_eq!(
            inputs.written("{}", None).global.as_deref(),
            Some("last-written")
        );
        let moved =
            delta(serde_json::json!({"op": "foreshadow", "path": "jade", "value": "planted"}));
        let err = load_delta_inputs(&project, Trust::Checked, &moved).unwrap_err();
        assert!(err.to_string().contains("global.json"), "{err}");
    }
}
