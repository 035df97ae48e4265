//! Author preferences (`004`): `memory/preferences.json`, one record per preference with the
//! seed's `user_id` (`author_<项目目录名>`). Only the author adds them (`novel prefs add`);
//! revisions never become preferences. The ChapterWriter packet carries them as its
//! `user_preferences` section — empty, with a warning, when the file cannot be read: a
//! broken preference store never stops a chapter.
//!
//! Layer: writers — the state, the memory, the preferences and the chapter commit, written through
//! the journal; above the readers.

use std::time::Duration;

use serde::Serialize;

use novel_core::model::FileKind;
use novel_core::model::revision::{Preference, Preferences};

use crate::error::StoreError;
use crate::io;
use crate::layout;
use crate::lock::{self, LockError};
use crate::project::Project;

/// Why a preference command refuses.
#[derive(Debug, thiserror::Error)]
pub enum PrefsError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    Lock(#[from] LockError),
    #[error("偏好内容为空")]
    Empty,
    #[error("已有同样的偏好：{id}「{text}」")]
    Exists { id: String, text: String },
    #[error("没有 id 为 {id} 的偏好")]
    NotFound { id: String, known: Vec<String> },
}

impl PrefsError {
    pub fn code(&self) -> &'static str {
        match self {
            PrefsError::Store(e) => e.code(),
            PrefsError::Lock(e) => e.code(),
            PrefsError::Empty => "E_USAGE",
            PrefsError::Exists { .. } => "E_PREF_EXISTS",
            PrefsError::NotFound { .. } => "E_NO_PREFERENCE",
        }
    }

    pub fn is_conflict(&self) -> bool {
        matches!(self, PrefsError::Lock(_))
            || matches!(self, PrefsError::Store(e) if e.is_conflict())
    }

    pub fn hint(&self) -> String {
        match self {
            PrefsError::Store(e) => e.hint(),
            PrefsError::Lock(e) => e.hint(),
            PrefsError::Empty => {
                "写一句作者希望每章都遵守的话，如：novel prefs add \"对话少用感叹号\"".into()
            }
            PrefsError::Exists { .. } => {
                "不必重复添加；要改写就先 novel prefs remove ID 再添加".into()
            }
            PrefsError::NotFound { known, .. } if known.is_empty() => {
                "还没有任何偏好；novel prefs list 查看".into()
            }
            PrefsError::NotFound { known, .. } => format!("已有的偏好：{}", known.join("、")),
        }
    }
}

/// `author_<项目目录名>`, the seed's user id.
pub fn user_id(project: &Project) -> String {
    let name = project
        .root
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    format!("author_{name}")
}

/// The preferences (none when the file does not exist); a file that does not parse or does
/// not fit the schema is an error naming it.
pub fn load(project: &Project) -> Result<Preferences, StoreError> {
    let path = project.path(layout::PREFERENCES);
    if !path.exists() {
        return Ok(Preferences::default());
    }
    let value = io::read_json_value(&path)?;
    if let Some(f) =
        novel_core::validate::check_document(layout::PREFERENCES, FileKind::Preferences, &value)
            .into_iter()
            .next()
    {
        return Err(StoreError::Model {
            path,
            what: FileKind::Preferences.label(),
            message: f.brief(),
        });
    }
    serde_json::from_value(value).map_err(|e| StoreError::Model {
        path,
        what: FileKind::Preferences.label(),
        message: e.to_string(),
    })
}

/// The highest number an id ever had: ids are never reused, so the file keeps it
/// (`last_id`) even after the preference with that id is removed.
fn last_number(p: &Preferences) -> u32 {
    let kept = p
        .extra
        .get("last_id")
        .and_then(serde_json::Value::as_u64)
        .and_then(|n| u32::try_from(n).ok())
        .unwrap_or(0);
    p.preferences
        .iter()
        .filter_map(|x| x.id.strip_prefix("P-").and_then(|n| n.parse::<u32>().ok()))
        .fold(kept, u32::max)
}

fn save(project: &Project, p: &Preferences) -> Result<(), StoreError> {
    let path = project.path(layout::PREFERENCES);
    if let Some(dir) = path.parent() {
        io::create_dir_all(dir)?;
    }
    io::write_json(&path, p)
}

/// `novel prefs add TEXT [--category C]`.
pub fn add(
    project: &Project,
    text: &str,
    category: Option<&str>,
    now: &str,
    stale_after: Duration,
) -> Result<Preference, PrefsError> {
    let _guard = crate::lock::guard(project)?;
    let text = text.trim();
    if text.is_empty() {
        return Err(PrefsError::Empty);
    }
    let _held = lock::Held::take(project, stale_after)?;
    let mut all = load(project)?;
    if let Some(p) = all.preferences.iter().find(|p| p.text == text) {
        return Err(PrefsError::Exists {
            id: p.id.clone(),
            text: p.text.clone(),
        });
    }
    let number = last_number(&all) + 1;
    let pref = Preference {
        id: format!("P-{number:03}"),
        text: text.to_string(),
        category: category
            .map(str::trim)
            .filter(|c| !c.is_empty())
            .map(str::to_string),
        user_id: user_id(project),
        created_at: Some(now.to_string()),
        extra: Default::default(),
    };
    all.preferences.push(pref.clone());
    all.extra
        .insert("last_id".into(), serde_json::json!(number));
    save(project, &all)?;
    Ok(pref)
}

/// `novel prefs remove ID`.
pub fn remove(
    project: &Project,
    id: &str,
    stale_after: Duration,
) -> Result<Preference, PrefsError> {
    let _guard = crate::lock::guard(project)?;
    let _held = lock::Held::take(project, stale_after)?;
    let mut all = load(project)?;
    let Some(pos) = all.preferences.iter().position(|p| p.id == id) else {
        return Err(PrefsError::NotFound {
            id: id.to_string(),
            known: all.preferences.iter().map(|p| p.id.clone()).collect(),
        });
    };
    let number = last_number(&all);
    let removed = all.preferences.remove(pos);
    all.extra
        .insert("last_id".into(), serde_json::json!(number));
    save(project, &all)?;
    Ok(removed)
}

/// The `user_preferences` section text: one line per preference (`- [类别] 内容`), or empty.
pub fn render(p: &Preferences) -> String {
    p.preferences
        .iter()
        .map(|x| match &x.category {
            Some(c) => format!("- [{c}] {}", x.text),
            None => format!("- {}", x.text),
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// What the packet gets: the rendered preferences, or an empty string and a warning when the
/// store cannot be read.
#[derive(Debug, Clone, Default, Serialize)]
pub struct ForPacket {
    pub text: String,
    pub warning: Option<String>,
}

pub fn for_packet(project: &Project) -> ForPacket {
    match load(project) {
        Ok(p) => ForPacket {
            text: render(&p),
            warning: None,
        },
        Err(e) => ForPacket {
            text: String::new(),
            warning: Some(format!(
                "作者偏好读不了，本次资料包不带偏好（{e}）；修好 {} 或删掉它重建",
                layout::PREFERENCES
            )),
        },
    }
}
