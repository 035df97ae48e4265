//! The user's cache folder for what the binary notes between its runs in one client session —
//! which book a session works on (the CLI's session notes), when the client's launch prepared a
//! folder's `.claude/` ([`crate::permissions`]). Never project data: best effort, a note that
//! cannot be written or read only costs a fallback. Ground layer: std only.
//!
//! Layer: ground — files, paths, errors, the checkpoint, the lock, the journal and its transaction;
//! below everything that reads the book.

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

/// How long a note is kept.
pub const KEEP: Duration = Duration::from_secs(7 * 24 * 3600);

/// `$XDG_CACHE_HOME/novel/<what>`, else `~/.cache/novel/<what>`.
pub fn dir(what: &str) -> Option<PathBuf> {
    let cache = std::env::var_os("XDG_CACHE_HOME")
        .filter(|d| !d.is_empty())
        .map(PathBuf::from)
        .or_else(|| {
            std::env::var_os("HOME")
                .filter(|h| !h.is_empty())
                .map(|h| Path::new(&h).join(".cache"))
        })?;
    Some(cache.join("novel").join(what))
}

/// Removes the notes in `dir` older than [`KEEP`].
pub fn prune(dir: &Path) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let now = SystemTime::now();
    for e in entries.flatten() {
        let old = e
            .metadata()
            .and_then(|m| m.modified())
            .is_ok_and(|t| now.duration_since(t).is_ok_and(|age| age > KEEP));
        if old {
            let _ = std::fs::remove_file(e.path());
        }
    }
}

/// Writes `text` as the note `name` in `dir` (made when missing; old notes pruned first), by
/// rename so a reader never sees half of it.
pub fn write(dir: &Path, name: &str, text: &str) {
    if std::fs::create_dir_all(dir).is_err() {
        return;
    }
    prune(dir);
    let tmp = dir.join(format!(".{name}.tmp"));
    if std::fs::write(&tmp, text).is_ok() {
        let _ = std::fs::rename(&tmp, dir.join(name));
    }
}
