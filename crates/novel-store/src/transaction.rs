//! Applying a journal ([`crate::journal`]): the commit — the journal written and fsynced,
//! then each step applied with atomic writes, under the writers' guard — and the roll-forward
//! of one a crash left behind. Every step is idempotent, so a recovered project ends
//! byte-identical to an uninterrupted commit. Also the sweep of debris a killed writer leaves.
//!
//! Layer: ground of the writers (above `lock` and `journal`; `state`, `memory` and `chapter` commit
//! through it).

use std::fs;

use crate::error::StoreError;
use crate::io::{read_text, sync_dir, write_atomic};
use crate::journal::{Journal, encode_journal, read_journal};
use crate::layout;
use crate::lock;
use crate::project::Project;

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
