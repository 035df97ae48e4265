//! `ai-blacklist.json` changed by the author's commands (`novel blacklist add|remove|whitelist|
//! upgrade`): read, changed and written back under the project lock, so two sessions never
//! lose each other's edits; atomically, with the keys the author wrote as `null` kept; a file
//! about to be replaced wholesale (an upgrade) backed up to `state/backups/` first. What an edit
//! does is the caller's (`novel_text::maintain`'s rules); this is the transaction around it.
//!
//! Layer: commands — the work behind a command (stages, volumes, spec, reviews, import, export, the
//! guard); the top.

use std::time::Duration;

use novel_core::model::AiBlacklist;

use crate::error::StoreError;
use crate::lock::{self, LockError};
use crate::project::Project;
use crate::{io, layout};

/// Whether an edit's result is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Write {
    /// Nothing changed: the file is left as it is.
    No,
    Yes,
    /// Written, the file as it was backed up first.
    WithBackup,
}

/// Why an edit wrote nothing.
#[derive(Debug, thiserror::Error)]
pub enum EditFailure<E> {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    Lock(#[from] LockError),
    /// The edit itself refused (a duplicate phrase …).
    #[error("黑名单没有改动")]
    Refused(E),
}

/// What an edit left.
#[derive(Debug)]
pub struct Edited<R> {
    pub result: R,
    /// The list as it now is (as written, or unchanged).
    pub list: AiBlacklist,
    /// Where the replaced file was backed up (`Write::WithBackup`).
    pub backup: Option<String>,
}

/// Applies `edit` to the project's blacklist (the shipped seed when the project has none yet)
/// under the project lock and writes the list back as `edit` says.
pub fn edit<R, E>(
    project: &Project,
    stale_after: Duration,
    now: &str,
    edit: impl FnOnce(&mut AiBlacklist) -> Result<(R, Write), E>,
) -> Result<Edited<R>, EditFailure<E>> {
    let _guard = crate::lock::guard(project)?;
    let _held = lock::Held::take(project, stale_after)?;
    let (mut list, _) = crate::select::load_blacklist(Some(project))?;
    let (result, write) = edit(&mut list).map_err(EditFailure::Refused)?;
    let mut writes = Vec::new();
    let backup = match write {
        Write::WithBackup => {
            match crate::state::backup_write(project, layout::AI_BLACKLIST, now, &[])? {
                Some((rel, w)) => {
                    writes.extend(w);
                    Some(rel)
                }
                None => None,
            }
        }
        Write::No | Write::Yes => None,
    };
    if write != Write::No {
        let path = project.path(layout::AI_BLACKLIST);
        writes.push(crate::chapter::JournalWrite {
            path: layout::AI_BLACKLIST.to_string(),
            content: io::rewrite_text(&path, &list),
        });
    }
    match writes.len() {
        0 => {}
        // One file: an atomic write is all or nothing already.
        1 => io::write_atomic(&project.path(&writes[0].path), writes[0].content.as_bytes())?,
        // The backup and the list together.
        _ => {
            let journal = crate::chapter::Journal::files(
                0,
                String::new(),
                writes,
                crate::chapter::JournalKind::Blacklist,
            );
            crate::chapter::commit(project, journal)?;
        }
    }
    Ok(Edited {
        result,
        list,
        backup,
    })
}
