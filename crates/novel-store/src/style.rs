//! `novel style preset NAME`: one of the preset style profiles `novel init --style` uses
//! ([`crate::init::STYLE_PRESETS`]) written into the project's `style-profile.json`,
//! atomically — never over a profile that already has a `source_type` unless forced. The file
//! it replaces goes to `state/backups/` first.
//!
//! [`record_drift`]: what `novel style drift` does with the verdict of [`drift_check`] (the
//! one drift check, [`crate::figures::drift`]): writes or removes `style-drift.json`.
//!
//! Layer: commands — the work behind a command (stages, volumes, spec, reviews, import, export, the
//! guard); the top.

use serde_json::Value;

use crate::error::StoreError;
use crate::init::{STYLE_PRESETS, style_preset};
use crate::io::{read_text, write_atomic};
use crate::layout;
use crate::project::Project;

/// Why the preset was not written.
#[derive(Debug, thiserror::Error)]
pub enum PresetError {
    #[error(transparent)]
    Store(#[from] StoreError),
    /// The profile already says where it came from.
    #[error("style-profile.json 已有风格来源（source_type: {source_type}），不覆盖")]
    AlreadySet { source_type: String },
    /// The profile cannot be read as JSON: whether it is set cannot be told.
    #[error("style-profile.json 无法解析（{why}），不覆盖")]
    Unreadable { why: String },
}

/// What was written.
#[derive(Debug, Clone, serde::Serialize)]
pub struct PresetApplied {
    pub preset: String,
    /// The preset's Chinese name (its `name` field).
    pub name: Option<String>,
    pub file: &'static str,
    /// The previous profile's `source_type`, when it had one (only with `force`).
    pub replaced_source_type: Option<String>,
    /// Where the previous file was kept (`state/backups/…`), when there was one.
    pub backup: Option<String>,
}

/// The preset names, in order.
pub fn preset_names() -> Vec<String> {
    STYLE_PRESETS.iter().map(|(n, _)| n.to_string()).collect()
}

/// Writes preset `name` into `style-profile.json`.
pub fn apply_preset(
    project: &Project,
    name: &str,
    force: bool,
    now: &str,
) -> Result<PresetApplied, PresetError> {
    let _guard = crate::lock::guard(project).map_err(StoreError::from)?;
    let text = style_preset(name).ok_or_else(|| StoreError::UnknownPreset {
        name: name.to_string(),
        known: preset_names(),
    })?;
    let path = project.path(layout::STYLE_PROFILE);
    let current = match read_text(&path) {
        Ok(t) => Some(t),
        Err(StoreError::Io { source, .. }) if source.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => return Err(e.into()),
    };
    let mut replaced_source_type = None;
    if let Some(t) = &current {
        match serde_json::from_str::<Value>(t) {
            Ok(v) => {
                if let Some(st) = v.get("source_type").filter(|s| !s.is_null()) {
                    let shown = st.as_str().map_or_else(|| st.to_string(), str::to_string);
                    if !force {
                        return Err(PresetError::AlreadySet { source_type: shown });
                    }
                    replaced_source_type = Some(shown);
                }
            }
            Err(e) if !force => {
                return Err(PresetError::Unreadable { why: e.to_string() });
            }
            Err(_) => {}
        }
    }
    // Whatever the author had is kept (the template's placeholder included): the backup and
    // the preset together, or neither.
    let mut writes = Vec::new();
    let backup = match &current {
        Some(t) if t != text => {
            crate::state::backup_write(project, layout::STYLE_PROFILE, now, &[])?.map(|(b, w)| {
                writes.extend(w);
                b
            })
        }
        _ => None,
    };
    writes.push(crate::chapter::JournalWrite {
        path: layout::STYLE_PROFILE.to_string(),
        content: text.to_string(),
    });
    if writes.len() == 1 {
        write_atomic(&path, text.as_bytes())?;
    } else {
        let journal = crate::chapter::Journal::files(
            0,
            String::new(),
            writes,
            crate::chapter::JournalKind::StylePreset,
        );
        crate::chapter::commit(project, journal)?;
    }
    let preset_name = serde_json::from_str::<Value>(text)
        .ok()
        .and_then(|v| v.get("name").and_then(Value::as_str).map(str::to_string));
    Ok(PresetApplied {
        preset: name.to_string(),
        name: preset_name,
        file: layout::STYLE_PROFILE,
        replaced_source_type,
        backup,
    })
}

pub use crate::figures::drift::{
    DriftError, DriftSources, NO_BASELINE_HINT, check as drift_check, drift_sources,
};

/// What recording a drift check did to `style-drift.json`: `written`, `removed`, `kept` (an
/// earlier file left as it is) or `none`.
pub fn record_drift(
    proj: &Project,
    write: Option<&novel_core::model::StyleDrift>,
    remove: bool,
    existing: Option<&novel_core::model::StyleDrift>,
) -> Result<&'static str, StoreError> {
    let _guard = crate::lock::guard(proj)?;
    let path = proj.path(layout::STYLE_DRIFT);
    if let Some(drift) = write {
        let mut file = drift.clone();
        file.updated_at = Some(crate::time::now_iso());
        // Keys the engine does not know stay with the file.
        if let Some(old) = existing {
            file.extra = old.extra.clone();
        }
        crate::io::write_json(&path, &file)?;
        return Ok("written");
    }
    if remove && existing.is_some() {
        std::fs::remove_file(&path).map_err(|e| StoreError::io(&path, e))?;
        crate::io::sync_dir(&proj.root)?;
        return Ok("removed");
    }
    Ok(if existing.is_some() { "kept" } else { "none" })
}
