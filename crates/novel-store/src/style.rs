//! `novel style preset NAME`: one of the preset style profiles `novel init --style` uses
//! ([`crate::init::STYLE_PRESETS`]) written into the project's `style-profile.json`,
//! atomically — never over a profile that already has a `source_type` unless forced. The file
//! it replaces goes to `state/backups/` first.
//!
//! [`drift_sources`]: what `novel style drift` and the reviews compare (风格校准) — the last
//! committed chapters, the profile baseline, the thresholds and the drift already recorded;
//! the comparison is `novel_text::drift::assess`.

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
    // Whatever the author had is kept (the template's placeholder included).
    let backup = match &current {
        Some(t) if t != text => crate::state::backup(project, layout::STYLE_PROFILE, now)?,
        _ => None,
    };
    write_atomic(&path, text.as_bytes())?;
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

/// What the style drift check reads.
#[derive(Debug, Clone)]
pub struct DriftSources {
    pub thresholds: novel_core::model::settings::DriftThresholds,
    /// The committed chapters of the window (the last `style_drift.window` up to the last
    /// completed one) with their text, in order; never empty.
    pub chapters: Vec<(u32, String)>,
    pub profile: novel_core::model::StyleProfile,
    /// `style-drift.json`, when there is one.
    pub existing: Option<novel_core::model::StyleDrift>,
}

/// Why there is nothing to compare.
#[derive(Debug, thiserror::Error)]
pub enum DriftError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("还没有已提交的章节，无法检测风格漂移")]
    NoChapter,
    #[error("没有可比较的风格基线：没有 style-profile.json")]
    NoProfile,
}

impl DriftError {
    pub fn code(&self) -> &'static str {
        match self {
            DriftError::Store(e) => e.code(),
            DriftError::NoChapter => "E_NO_CHAPTER",
            DriftError::NoProfile => "E_NO_BASELINE",
        }
    }

    pub fn hint(&self) -> String {
        match self {
            DriftError::Store(e) => e.hint(),
            DriftError::NoChapter => "提交章节后再运行（流水线每 5 章运行一次）".into(),
            DriftError::NoProfile => NO_BASELINE_HINT.into(),
        }
    }
}

/// How to give the drift check a baseline.
pub const NO_BASELINE_HINT: &str = "先用 novel style metrics 分析风格样章，由文风分析员把 avg_sentence_length 与 dialogue_ratio 写入 style-profile.json";

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

/// The last committed chapters, the baseline and the thresholds of the drift check.
pub fn drift_sources(proj: &Project) -> Result<DriftSources, DriftError> {
    let thresholds = crate::settings::load(proj)?.style_drift.clone();
    let checkpoint: novel_core::model::Checkpoint =
        crate::io::read_json(&proj.path(layout::CHECKPOINT), "断点文件")?;
    let last = checkpoint.last_completed_chapter;
    let first = last.saturating_sub(thresholds.window.max(1) - 1).max(1);
    let window: Vec<(u32, String)> = crate::select::committed_chapters(proj)?
        .into_iter()
        .filter(|(n, _)| (first..=last).contains(n))
        .collect();
    if last == 0 || window.is_empty() {
        return Err(DriftError::NoChapter);
    }
    let profile = crate::select::load_profile(Some(proj))?.ok_or(DriftError::NoProfile)?;
    let mut chapters = Vec::new();
    for (n, rel) in window {
        chapters.push((n, read_text(&proj.path(&rel))?));
    }
    let drift_path = proj.path(layout::STYLE_DRIFT);
    let existing = if drift_path.is_file() {
        Some(crate::io::read_json(&drift_path, "风格漂移")?)
    } else {
        None
    };
    Ok(DriftSources {
        thresholds,
        chapters,
        profile,
        existing,
    })
}
