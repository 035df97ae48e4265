//! The book's `.claude/settings.local.json` and the plugin's allow rules in it
//! ([`novel_core::permissions`]): what is missing, and the rules merged in — the file's other
//! keys kept, written atomically, never over a file that does not parse.

use std::path::{Path, PathBuf};

use novel_core::permissions::{self, SETTINGS_LOCAL, SettingsShape};
use serde_json::Value;

use crate::error::StoreError;
use crate::io;

/// Why the settings file could not be read or taken.
#[derive(Debug, thiserror::Error)]
pub enum PermissionsError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("{path}：{shape}")]
    Shape { path: PathBuf, shape: SettingsShape },
}

/// The rules of a directory's settings file.
#[derive(Debug, Clone)]
pub struct Rules {
    /// The settings file.
    pub file: PathBuf,
    /// Every rule the plugin wants there.
    pub wanted: Vec<String>,
    /// Those the file does not allow yet.
    pub missing: Vec<String>,
    /// The tools of `permissions::SWITCHED_OFF` the file does not deny yet.
    pub not_off: Vec<String>,
    /// The session settings the file would get ([`permissions::session_defaults`]: the book's
    /// model, the client's coding memory off), those it has no key for yet.
    pub session: Vec<(String, serde_json::Value)>,
}

impl Rules {
    /// The model the file gets for the session, if it names none yet.
    pub fn model(&self) -> Option<&str> {
        self.session
            .iter()
            .find(|(k, _)| k == "model")
            .and_then(|(_, v)| v.as_str())
    }
}

/// The settings file of `dir`.
pub fn settings_file(dir: &Path) -> PathBuf {
    dir.join(SETTINGS_LOCAL)
}

fn load(file: &Path) -> Result<Option<Value>, StoreError> {
    match io::read_json_value(file) {
        Ok(v) => Ok(Some(v)),
        Err(StoreError::Io { source, .. }) if source.kind() == std::io::ErrorKind::NotFound => {
            Ok(None)
        }
        Err(e) => Err(e),
    }
}

/// The plugin's rules and which of them `dir`'s settings file lacks; `model` is the book's
/// model for the session (`None`: not managed).
pub fn check(
    dir: &Path,
    plugin_root: Option<&str>,
    model: Option<&str>,
) -> Result<Rules, PermissionsError> {
    let file = settings_file(dir);
    let wanted = permissions::wanted(plugin_root);
    let settings = load(&file)?;
    let shape = |shape| PermissionsError::Shape {
        path: file.clone(),
        shape,
    };
    let missing = permissions::missing(settings.as_ref(), &wanted).map_err(shape)?;
    let not_off = permissions::not_switched_off(settings.as_ref()).map_err(shape)?;
    let session = permissions::unset(settings.as_ref(), permissions::session_defaults(model));
    Ok(Rules {
        file,
        wanted,
        missing,
        not_off,
        session,
    })
}

/// Adds the missing rules (the deny rules of the tools a book never uses, and the session's
/// model when the file names none) to `dir`'s settings file (created with its `.claude/`
/// directory when absent); returns the rules as they were before. Writes nothing when none is
/// missing.
pub fn write(
    dir: &Path,
    plugin_root: Option<&str>,
    model: Option<&str>,
) -> Result<Rules, PermissionsError> {
    let rules = check(dir, plugin_root, model)?;
    if rules.missing.is_empty() && rules.not_off.is_empty() && rules.session.is_empty() {
        return Ok(rules);
    }
    let settings = load(&rules.file)?;
    let merged = permissions::merged(
        settings.as_ref(),
        &rules.missing,
        &rules.not_off,
        &rules.session,
    )
    .map_err(|shape| PermissionsError::Shape {
        path: rules.file.clone(),
        shape,
    })?;
    if let Some(parent) = rules.file.parent() {
        std::fs::create_dir_all(parent).map_err(|e| StoreError::io(parent, e))?;
    }
    io::write_json(&rules.file, &merged)?;
    Ok(rules)
}
