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

/// The client that runs this command (its pid and start, Unix seconds): only inside Claude
/// Code (`CLAUDECODE` is set for its tools; hooks are found the same way), the session's process
/// ([`crate::lock::session_pid`]).
fn client() -> Option<(u32, u64)> {
    let pid = crate::lock::session_pid();
    crate::lock::process_start(pid).map(|start| (pid, start))
}

/// The note of a client's launch: written by the SessionStart hook at `startup`/`resume`
/// ([`prepare_session_dir`]); its time is when the launch looked at the folder.
fn launch_note(client: (u32, u64)) -> Option<PathBuf> {
    Some(crate::cache::dir("launches")?.join(format!("{}-{}", client.0, client.1)))
}

/// When the client this command runs in started its session (Unix seconds): the launch hook's
/// note, else the process's start.
fn launched(client: (u32, u64)) -> u64 {
    launch_note(client)
        .and_then(|f| std::fs::metadata(f).ok()?.modified().ok())
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map_or(client.1, |d| d.as_secs())
}

/// The client's global config: `$CLAUDE_CONFIG_DIR/.claude.json`, else `~/.claude.json`.
fn client_config() -> Option<Value> {
    let file = std::env::var_os("CLAUDE_CONFIG_DIR")
        .filter(|d| !d.is_empty())
        .map(|d| Path::new(&d).join(".claude.json"))
        .or_else(|| {
            std::env::var_os("HOME")
                .filter(|h| !h.is_empty())
                .map(|h| Path::new(&h).join(".claude.json"))
        })?;
    io::read_json_value(&file).ok()
}

/// The git work tree `dir` is in (the folder holding `.git`), if any.
fn git_root(dir: &Path) -> Option<PathBuf> {
    dir.ancestors()
        .find(|d| d.join(".git").symlink_metadata().is_ok())
        .map(Path::to_path_buf)
}

/// Whether the client takes `dir`'s local settings (as 2.1.197 decides): the trust dialog
/// accepted for the folder (its git root inside a repository), or a git work tree whose
/// `.claude/` is neither a link nor a repository of its own (a tracked settings file is not
/// looked for: the plugin writes it, nobody commits it).
fn trusted(dir: &Path) -> bool {
    let root = git_root(dir);
    let key = root.as_deref().unwrap_or(dir);
    let config = client_config();
    let recorded = |p: &Path| permissions::trust_recorded(config.as_ref(), &p.to_string_lossy());
    if recorded(key) || std::fs::canonicalize(key).is_ok_and(|c| recorded(&c)) {
        return true;
    }
    let claude = dir.join(".claude");
    let linked = |p: &Path| {
        p.symlink_metadata()
            .is_ok_and(|m| m.file_type().is_symlink())
    };
    root.is_some()
        && !linked(&claude)
        && !linked(&settings_file(dir))
        && claude.join(".git").symlink_metadata().is_err()
}

/// When `dir/.claude` was created (Unix seconds), where the filesystem records it.
fn claude_dir_created(dir: &Path) -> Option<u64> {
    let created = std::fs::metadata(dir.join(".claude"))
        .ok()?
        .created()
        .ok()?;
    created
        .duration_since(std::time::UNIX_EPOCH)
        .ok()
        .map(|d| d.as_secs())
}

/// Whether `dir`'s allow rules are in force for the client this command runs in
/// ([`permissions::InForce`]); `written` says the file has every rule. Outside a client the
/// trust and the watch are unknown.
pub fn standing(dir: &Path, written: bool) -> permissions::InForce {
    let started = std::env::var_os("CLAUDECODE")
        .filter(|v| !v.is_empty())
        .and_then(|_| client())
        .map(launched);
    let watched = started.and_then(|s| {
        if !dir.join(".claude").is_dir() {
            return Some(false);
        }
        claude_dir_created(dir).map(|c| permissions::watched_since_launch(c, s))
    });
    permissions::InForce {
        written,
        trusted: started.map(|_| trusted(dir)),
        watched,
    }
}

/// The SessionStart hook's preparation (at the client's launch): a `.claude/` in the session's
/// folder when that folder is a book, holds a book, or is empty (a folder made for a new book),
/// so the client watches it from the start and the 放行设置 written later in the session take
/// effect at once. `in_book`: the caller found `cwd` inside a book already. Best effort, never
/// an error; nothing anywhere else.
pub fn prepare_session_dir(cwd: &Path, in_book: bool) {
    let claude = cwd.join(".claude");
    if claude.symlink_metadata().is_ok() {
        note_launch(cwd);
        return;
    }
    let book = |d: &Path| d.join(crate::layout::CHECKPOINT).is_file();
    let Ok(entries) = std::fs::read_dir(cwd) else {
        note_launch(cwd);
        return;
    };
    let mut empty = true;
    let mut holds_book = false;
    for e in entries.flatten() {
        let name = e.file_name();
        if name.to_string_lossy().starts_with('.') {
            continue;
        }
        empty = false;
        if !holds_book && e.file_type().is_ok_and(|t| t.is_dir()) && book(&e.path()) {
            holds_book = true;
        }
    }
    if empty || holds_book || in_book {
        let _ = std::fs::create_dir(&claude);
    }
    note_launch(cwd);
}

/// Notes this client's launch (after `.claude/` was made): what `.claude/` existed by then is
/// watched.
fn note_launch(cwd: &Path) {
    let Some(note) = client().and_then(launch_note) else {
        return;
    };
    if let (Some(dir), Some(name)) = (note.parent(), note.file_name()) {
        crate::cache::write(
            dir,
            &name.to_string_lossy(),
            &format!("{}\n", cwd.display()),
        );
    }
}
