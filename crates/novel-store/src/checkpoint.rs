//! The checkpoint (`.checkpoint.json`, `002` §10.3): where the book stands — the orchestrator
//! state, the volume, the last committed chapter, the one in flight — read schema-checked and
//! written atomically. Every writer and most readers start from it.
//!
//! Layer: ground (above `io`, `layout`, `error`, `project`).

use novel_core::FileKind;
use novel_core::model::Checkpoint;
use novel_core::validate::check_document;

use crate::error::StoreError;
use crate::io::write_atomic;
use crate::layout;
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
    crate::io::typed(project, layout::CHECKPOINT, FileKind::Checkpoint, value)
}

pub fn write_checkpoint(project: &Project, cp: &Checkpoint) -> Result<(), StoreError> {
    let path = project.path(layout::CHECKPOINT);
    write_atomic(&path, crate::io::rewrite_text(&path, cp).as_bytes())
}
