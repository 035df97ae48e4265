//! Finding the project: walk up from a directory to `.checkpoint.json`, or take `--project DIR`.
//!
//! Layer: ground — files, paths, errors, the checkpoint, the lock, the journal and its transaction;
//! below everything that reads the book.

use std::path::{Path, PathBuf};

use crate::error::StoreError;
use crate::layout;

/// An opened project: its root directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Project {
    pub root: PathBuf,
}

impl Project {
    /// Walks up from `start` to the first directory holding `.checkpoint.json`.
    pub fn discover(start: &Path) -> Result<Project, StoreError> {
        let start = absolute(start);
        let mut dir = start.as_path();
        loop {
            if dir.join(layout::CHECKPOINT).is_file() {
                return Ok(Project {
                    root: dir.to_path_buf(),
                });
            }
            match dir.parent() {
                Some(p) => dir = p,
                None => return Err(StoreError::NotAProject { start }),
            }
        }
    }

    /// `--project DIR`: DIR itself must be a project root.
    pub fn open(dir: &Path) -> Result<Project, StoreError> {
        let root = absolute(dir);
        if root.join(layout::CHECKPOINT).is_file() {
            Ok(Project { root })
        } else {
            Err(StoreError::NotAProject { start: root })
        }
    }

    /// Absolute path of a project-relative `/` path.
    pub fn path(&self, rel: &str) -> PathBuf {
        layout::join(&self.root, rel)
    }

    /// The project-relative `/` form of a path inside the project, if it is inside.
    pub fn relative(&self, path: &Path) -> Option<String> {
        let abs = absolute(path);
        let rel = abs.strip_prefix(&self.root).ok()?;
        let parts: Vec<String> = rel
            .components()
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .collect();
        Some(parts.join("/"))
    }
}

/// Absolute, lexically normalised (no `.`/`..`), without resolving symlinks.
pub fn absolute(p: &Path) -> PathBuf {
    let joined = if p.is_absolute() {
        p.to_path_buf()
    } else {
        std::env::current_dir().unwrap_or_default().join(p)
    };
    let mut out = PathBuf::new();
    for c in joined.components() {
        match c {
            std::path::Component::CurDir => {}
            std::path::Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}
