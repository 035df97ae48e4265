//! Which book a Claude Code session works on, for its hooks. A hook learns the session's
//! directory (`cwd`), and finds the book there or above it; a book given as `项目：<DIR>`, or one
//! in a subfolder of the session's directory, is found only by the `--project` the skill's
//! commands carry. So every command run with `--project` inside a session (the client sets
//! `CLAUDE_CODE_SESSION_ID` for the Bash tool) notes the book for that session, and the
//! SubagentStart hook reads the note when the session's directory holds no book.
//!
//! The note is one line (the book's directory) in the user's cache directory
//! (`$XDG_CACHE_HOME/novel/sessions/<session>`, else `~/.cache/novel/sessions/<session>`);
//! notes older than a week are pruned when one is written. Best effort: a note that cannot be
//! written or read only costs the agent a fetch of its packet.
//!
//! Layer: ground — below the commands.

use std::path::{Path, PathBuf};

/// The session's id as the client gives it, when it is one (letters, digits, dashes).
fn valid(id: &str) -> Option<&str> {
    let id = id.trim();
    (!id.is_empty() && id.len() <= 128 && id.chars().all(|c| c.is_ascii_alphanumeric() || c == '-'))
        .then_some(id)
}

fn notes_dir() -> Option<PathBuf> {
    novel_store::cache::dir("sessions")
}

/// Notes `root` as the book of the session this command runs in (none outside a session), when
/// the note does not say so already.
pub fn remember(root: &Path) {
    let Some(id) = std::env::var("CLAUDE_CODE_SESSION_ID")
        .ok()
        .and_then(|s| valid(&s).map(str::to_string))
    else {
        return;
    };
    let Some(dir) = notes_dir() else {
        return;
    };
    let file = dir.join(&id);
    let line = root.to_string_lossy();
    if std::fs::read_to_string(&file).is_ok_and(|t| t.trim_end() == line) {
        return;
    }
    novel_store::cache::write(&dir, &id, &format!("{line}\n"));
}

/// The book noted for session `id`.
pub fn recall(id: &str) -> Option<PathBuf> {
    let file = notes_dir()?.join(valid(id)?);
    let text = std::fs::read_to_string(file).ok()?;
    let root = PathBuf::from(text.trim_end());
    root.is_dir().then_some(root)
}
