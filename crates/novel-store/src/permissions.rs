//! The 放行设置 on disk ([`novel_core::permissions`]): the plugin's allow rules in the author's
//! user settings (`~/.claude/settings.json`, or `$CLAUDE_CONFIG_DIR/settings.json`), and the
//! book's own session settings in its folder's `.claude/settings.local.json` — what is missing,
//! and the missing merged in: the files' other keys kept, written atomically, never over a file
//! that does not parse.
//!
//! Layer: commands — the work behind a command (stages, volumes, spec, reviews, import, export, the
//! guard); the top.

use std::path::{Path, PathBuf};

use novel_core::permissions::{self, SETTINGS_LOCAL, SETTINGS_USER, SettingsShape};
use serde_json::Value;

use crate::error::StoreError;
use crate::io;

/// Why a settings file could not be read or taken.
#[derive(Debug, thiserror::Error)]
pub enum PermissionsError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("{path}：{shape}")]
    Shape { path: PathBuf, shape: SettingsShape },
    /// Neither `CLAUDE_CONFIG_DIR` nor `HOME` says where the user settings are.
    #[error("不知道 Claude Code 的用户设置在哪里（HOME 与 CLAUDE_CONFIG_DIR 都没有设置）")]
    NoUserSettings,
}

/// The rules of the user settings and of a folder's local settings.
#[derive(Debug, Clone)]
pub struct Rules {
    /// The folder's local settings file (the book's model, the tools switched off).
    pub file: PathBuf,
    /// The user settings file (the allow rules); `None` when nothing says where it is.
    pub user_file: Option<PathBuf>,
    /// Every allow rule the plugin wants there.
    pub wanted: Vec<String>,
    /// Those the user settings do not allow yet.
    pub missing: Vec<String>,
    /// The tools of `permissions::SWITCHED_OFF` the local file does not deny yet.
    pub not_off: Vec<String>,
    /// The session settings the local file would get ([`permissions::session_defaults`]: the
    /// book's model, the client's coding memory off), those it has no key for yet.
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

/// The local settings file of `dir`.
pub fn settings_file(dir: &Path) -> PathBuf {
    dir.join(SETTINGS_LOCAL)
}

/// The client's configuration folder: `$CLAUDE_CONFIG_DIR`, else `~/.claude`.
pub fn user_dir() -> Option<PathBuf> {
    let set = |k: &str| std::env::var_os(k).filter(|v| !v.is_empty());
    set("CLAUDE_CONFIG_DIR")
        .map(PathBuf::from)
        .or_else(|| set("HOME").map(|h| Path::new(&h).join(".claude")))
}

/// The user settings file ([`user_dir`]).
pub fn user_settings_file() -> Option<PathBuf> {
    user_dir().map(|d| d.join(SETTINGS_USER))
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

fn shape_of(file: &Path) -> impl Fn(SettingsShape) -> PermissionsError + '_ {
    move |shape| PermissionsError::Shape {
        path: file.to_path_buf(),
        shape,
    }
}

/// The plugin's rules for a book in `dir` whose sessions start in `session`, and which of them
/// the user settings lack; `model` is the book's model for the session (`None`: not managed).
pub fn check(
    dir: &Path,
    session: &Path,
    plugin_root: Option<&str>,
    model: Option<&str>,
) -> Result<Rules, PermissionsError> {
    let file = settings_file(dir);
    let home = std::env::var("HOME").ok().filter(|h| !h.is_empty());
    let folders = permissions::edit_folders(
        &dir.to_string_lossy(),
        &session.to_string_lossy(),
        home.as_deref(),
    );
    let wanted = permissions::wanted(plugin_root, &folders);
    let user_file = user_settings_file();
    let missing = match &user_file {
        Some(f) => {
            let have = load(f)?;
            permissions::merged(have.as_ref(), &[], &[], &[]).map_err(shape_of(f))?;
            permissions::missing(have.as_ref(), &wanted).map_err(shape_of(f))?
        }
        None => wanted.clone(),
    };
    let settings = load(&file)?;
    // The whole shape checked before anything is written to either file.
    permissions::merged(settings.as_ref(), &[], &[], &[]).map_err(shape_of(&file))?;
    let not_off = permissions::not_switched_off(settings.as_ref()).map_err(shape_of(&file))?;
    let session = permissions::unset(settings.as_ref(), permissions::session_defaults(model));
    Ok(Rules {
        file,
        user_file,
        wanted,
        missing,
        not_off,
        session,
    })
}

/// Adds the missing allow rules to the user settings, and the deny rules of the tools a book
/// never uses and the session's model (when the file names none) to `dir`'s local settings
/// (each file created with its folder when absent); returns the rules as they were before.
/// Writes nothing where nothing is missing.
pub fn write(
    dir: &Path,
    session: &Path,
    plugin_root: Option<&str>,
    model: Option<&str>,
) -> Result<Rules, PermissionsError> {
    let rules = check(dir, session, plugin_root, model)?;
    if !rules.missing.is_empty() {
        let user = rules
            .user_file
            .as_deref()
            .ok_or(PermissionsError::NoUserSettings)?;
        merge_into(user, &rules.missing, &[], &[])?;
    }
    if !(rules.not_off.is_empty() && rules.session.is_empty()) {
        merge_into(&rules.file, &[], &rules.not_off, &rules.session)?;
    }
    Ok(rules)
}

/// `file` with the rules and keys merged in ([`permissions::merged`]), written atomically.
fn merge_into(
    file: &Path,
    allow: &[String],
    deny: &[String],
    session: &[(String, Value)],
) -> Result<(), PermissionsError> {
    let settings = load(file)?;
    let merged =
        permissions::merged(settings.as_ref(), allow, deny, session).map_err(shape_of(file))?;
    if let Some(parent) = file.parent() {
        std::fs::create_dir_all(parent).map_err(|e| StoreError::io(parent, e))?;
    }
    io::write_json(file, &merged)?;
    Ok(())
}

/// The client that runs this command (its pid and start, Unix seconds): only inside Claude
/// Code (`CLAUDECODE` is set for its tools; hooks are found the same way), the session's process
/// ([`crate::lock::session_pid`]).
fn client() -> Option<(u32, u64)> {
    let pid = crate::lock::session_pid();
    crate::lock::process_start(pid).map(|start| (pid, start))
}

/// When `dir` was created (Unix seconds), where the filesystem records it.
fn created(dir: &Path) -> Option<u64> {
    let created = std::fs::metadata(dir).ok()?.created().ok()?;
    created
        .duration_since(std::time::UNIX_EPOCH)
        .ok()
        .map(|d| d.as_secs())
}

/// Whether the allow rules are in force for the client this command runs in
/// ([`permissions::InForce`]); `written` says the user settings have every rule. Outside a
/// client the watch is unknown.
pub fn standing(written: bool) -> permissions::InForce {
    let started = std::env::var_os("CLAUDECODE")
        .filter(|v| !v.is_empty())
        .and_then(|_| client())
        .map(|c| c.1);
    let watched = started.and_then(|s| {
        let dir = user_dir()?;
        if !dir.is_dir() {
            return Some(false);
        }
        created(&dir).map(|c| permissions::watched_since_launch(c, s))
    });
    permissions::InForce { written, watched }
}
