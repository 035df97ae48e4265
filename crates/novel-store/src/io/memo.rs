//! One read of the book per command: inside a [`ReadOnce`] scope, [`super::read_text`] and
//! [`super::dir_names`] read each file and list each directory from disk once and hand out
//! what they read again afterwards, so the services a command calls (settings, checkpoint,
//! volume spans, contracts, cast, state, logs) may each ask for the file they need without a
//! second open. A file or directory that changed since it was read (its length, modification
//! time or inode differ: every store writer renames a new file over the old one) is read again,
//! so a command that writes inside the scope still reads what it wrote. Outside a scope nothing
//! is kept. Ground layer: std only.

use std::any::Any;
use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::ffi::OsString;
use std::fs::Metadata;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

/// What tells a file's version apart without reading it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Stamp {
    len: u64,
    modified: Option<SystemTime>,
    inode: u64,
}

impl Stamp {
    fn of(m: &Metadata) -> Stamp {
        #[cfg(unix)]
        let inode = std::os::unix::fs::MetadataExt::ino(m);
        #[cfg(not(unix))]
        let inode = 0;
        Stamp {
            len: m.len(),
            modified: m.modified().ok(),
            inode,
        }
    }

    fn now(path: &Path) -> Option<Stamp> {
        std::fs::metadata(path).ok().map(|m| Stamp::of(&m))
    }
}

/// What a scope read of one path.
enum Kept {
    Text(String),
    Names(Vec<String>),
}

struct Entry {
    stamp: Stamp,
    kept: Kept,
    /// What a typed reader made of the text ([`super::read_parsed`]).
    parsed: Option<Box<dyn Any>>,
    reads: Reads,
}

#[derive(Default)]
struct Memo {
    /// By the path's bytes (a `Path`'s own hash walks its components, and costs more than the
    /// read it saves on a small file).
    entries: HashMap<OsString, Entry>,
}

/// How a path was read in a [`ReadOnce`] scope.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Reads {
    /// Reads from disk (a file opened, a directory listed).
    pub disk: u32,
    /// Times a reader asked for it (from disk or from the memo).
    pub asked: u32,
}

thread_local! {
    /// Open scopes ([`ReadOnce`] guards alive); the memo is kept while this is above 0. Apart
    /// from the memo, so that a read outside any scope (a guard hook) costs no set-up of it.
    static DEPTH: Cell<usize> = const { Cell::new(0) };
    static MEMO: RefCell<Memo> = RefCell::new(Memo::default());
}

/// A scope in which the book is read once (see the module doc). Scopes nest; what was read
/// is dropped when the outermost one ends.
#[must_use = "the memo lasts as long as the guard"]
pub struct ReadOnce(());

/// Whether a scope is open on this thread (a reader may then prefer the whole file it shares
/// with the rest of the command to a partial read of it).
pub fn in_scope() -> bool {
    DEPTH.with(|d| d.get() > 0)
}

impl ReadOnce {
    /// Opens a scope on this thread.
    pub fn begin() -> ReadOnce {
        DEPTH.with(|d| d.set(d.get() + 1));
        ReadOnce(())
    }

    /// Every path read through the memo in this thread's scope so far, sorted (for the
    /// benches and tests that check a command reads the book once).
    pub fn reads(&self) -> Vec<(PathBuf, Reads)> {
        let mut out: Vec<(PathBuf, Reads)> = MEMO.with(|m| {
            let m = m.borrow();
            m.entries
                .iter()
                .map(|(p, e)| (PathBuf::from(p), e.reads))
                .collect()
        });
        out.sort_by(|a, b| a.0.cmp(&b.0));
        out
    }
}

impl Drop for ReadOnce {
    fn drop(&mut self) {
        let depth = DEPTH.with(|d| {
            d.set(d.get() - 1);
            d.get()
        });
        if depth == 0 {
            MEMO.with(|m| m.borrow_mut().entries.clear());
        }
    }
}

/// What was kept of `path` in this scope, if anything and if it has not changed since; counts
/// the ask.
fn kept<T>(path: &Path, take: impl FnOnce(&Kept) -> Option<T>) -> Option<T> {
    MEMO.with(|m| {
        let mut m = m.borrow_mut();
        let entry = m.entries.get_mut(path.as_os_str())?;
        if Stamp::now(path) != Some(entry.stamp) {
            return None;
        }
        let value = take(&entry.kept)?;
        entry.reads.asked += 1;
        Some(value)
    })
}

/// Keeps what was read of `path` from disk, whose metadata (taken before the read) was `meta`.
fn keep(path: &Path, meta: &Metadata, kept: Kept) {
    if !in_scope() {
        return;
    }
    MEMO.with(|m| {
        let mut m = m.borrow_mut();
        let stamp = Stamp::of(meta);
        let entry = m
            .entries
            .entry(path.as_os_str().to_owned())
            .or_insert(Entry {
                stamp,
                kept: Kept::Names(Vec::new()),
                parsed: None,
                reads: Reads::default(),
            });
        entry.stamp = stamp;
        entry.parsed = None;
        entry.kept = kept;
        entry.reads.disk += 1;
        entry.reads.asked += 1;
    });
}

/// The text read of `path` in this scope, if the file has not changed since.
pub(super) fn text(path: &Path) -> Option<String> {
    kept(path, |k| match k {
        Kept::Text(t) => Some(t.clone()),
        Kept::Names(_) => None,
    })
}

/// Keeps `text`, read from `path` whose metadata (taken before the read) was `meta`.
pub(super) fn keep_text(path: &Path, meta: &Metadata, text: &str) {
    keep(path, meta, Kept::Text(text.to_string()));
}

/// The entry names listed of directory `dir` in this scope, if it has not changed since.
pub(super) fn names(dir: &Path) -> Option<Vec<String>> {
    kept(dir, |k| match k {
        Kept::Names(n) => Some(n.clone()),
        Kept::Text(_) => None,
    })
}

/// Keeps the entry names of `dir`, listed after its metadata `meta` was taken.
pub(super) fn keep_names(dir: &Path, meta: &Metadata, names: &[String]) {
    keep(dir, meta, Kept::Names(names.to_vec()));
}

/// What a typed reader made of `path`'s text in this scope, if the file has not changed since.
pub(super) fn parsed<T: Clone + 'static>(path: &Path) -> Option<T> {
    MEMO.with(|m| {
        let mut m = m.borrow_mut();
        let entry = m.entries.get_mut(path.as_os_str())?;
        if Stamp::now(path) != Some(entry.stamp) {
            return None;
        }
        let value = entry.parsed.as_ref()?.downcast_ref::<T>()?.clone();
        entry.reads.asked += 1;
        Some(value)
    })
}

/// Keeps `value`, made of the text of `path` kept in this scope.
pub(super) fn keep_parsed<T: Clone + 'static>(path: &Path, value: &T) {
    MEMO.with(|m| {
        if let Some(entry) = m.borrow_mut().entries.get_mut(path.as_os_str()) {
            entry.parsed = Some(Box::new(value.clone()));
        }
    });
}
