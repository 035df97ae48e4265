//! `novel permissions [--dir DIR] [--write]`: the 放行设置 ([`novel_core::permissions`]) — the
//! plugin's allow rules in the author's user settings (`~/.claude/settings.json`) and the book's
//! session settings in its folder's `.claude/settings.local.json`: which are missing, and with
//! `--write` (the author agreed) merged in. The directory is `--dir`, else the project
//! (`--project`, or found from the working directory), else the working directory.

use std::path::{Path, PathBuf};

use clap::Args;
use serde::Serialize;
use serde_json::Value;

use novel_core::permissions::Blocker;
use novel_store::permissions::{self, PermissionsError, Rules};
use novel_store::{Project, StoreError};

use crate::args::GlobalArgs;
use crate::output::{CliError, Exit, Report, to_data};

#[derive(Debug, Args)]
pub struct PermissionsArgs {
    /// 哪本书的目录（默认：项目目录；不在项目里时为当前目录）：放行这个目录里的写入，本书的设置写进它的 .claude/settings.local.json
    #[arg(long, value_name = "目录")]
    pub dir: Option<PathBuf>,
    /// 把缺少的规则写进去（保留文件里已有的设置；作者同意之后才用）
    #[arg(long)]
    pub write: bool,
}

/// `novel permissions`' `--json` data.
#[derive(Serialize)]
struct PermissionsData<'a> {
    dir: String,
    /// The user settings file the allow rules go to.
    file: String,
    /// The folder's local settings file (the book's model, the tools switched off).
    local_file: String,
    rules: &'a [String],
    /// Rules the file lacks now (after `--write`: none).
    missing: &'a [String],
    /// Rules `--write` added.
    added: &'a [String],
    /// The client's tools switched off in the book (`permissions.deny`), and those this call
    /// switched off.
    switched_off: &'a [&'static str],
    off_added: &'a [String],
    written: bool,
    /// The plugin directory the read rule covers (absent when the wrapper did not say).
    plugin_root: Option<String>,
    /// The session's model this call set (`novel.json` `models.main`; null: the file had one
    /// already, the author's, or nothing was written).
    model_set: Option<String>,
    /// The session's folder when it holds the book in a subfolder: `--write` writes the same
    /// there (a session started in that folder reads its settings, not the book's).
    session_file: Option<String>,
}

/// The directory whose settings file is meant.
fn target_dir(global: &GlobalArgs, args: &PermissionsArgs) -> Result<PathBuf, CliError> {
    if let Some(dir) = &args.dir {
        return Ok(novel_store::project::absolute(dir));
    }
    let cwd = std::env::current_dir().unwrap_or_else(|_| Path::new(".").into());
    let found = match &global.project {
        Some(dir) => Project::open(dir),
        None => Project::discover(&cwd),
    };
    match found {
        Ok(p) => Ok(p.root),
        Err(StoreError::NotAProject { .. }) if global.project.is_none() => Ok(cwd),
        Err(e) => Err(e.into()),
    }
}

/// The plugin's root as the wrapper exports it.
pub(crate) fn plugin_root() -> Option<String> {
    std::env::var("NOVEL_PLUGIN_ROOT")
        .ok()
        .filter(|r| !r.trim().is_empty())
}

pub(crate) fn permissions_error(e: PermissionsError) -> CliError {
    match e {
        PermissionsError::Store(e) => e.into(),
        PermissionsError::Shape { path, shape } => CliError::new(
            "E_SETTINGS_LOCAL",
            format!("{}：{shape}，没有改动它", path.display()),
            "这个文件是 Claude Code 的设置：修正它（permissions.allow 是字符串数组）或删掉后重试",
            Exit::Usage,
        ),
        PermissionsError::NoUserSettings => CliError::new(
            "E_SETTINGS_LOCAL",
            PermissionsError::NoUserSettings.to_string(),
            "在 Claude Code 里运行这条命令，或者设置 HOME 后重试",
            Exit::Usage,
        ),
    }
}

/// The rules for a book in `dir` with the session in `session`, and which the settings lack
/// (for `novel next`).
pub(crate) fn missing_rules(dir: &Path, session: &Path) -> Result<Rules, CliError> {
    permissions::check(dir, session, plugin_root().as_deref(), None).map_err(permissions_error)
}

/// The book's model for the session (`novel.json` `models.main`; Sonnet before there is a
/// book, or when its settings cannot be read) — `None` when the author chose one for every
/// session (`model` in `~/.claude/settings.json`): that choice stands.
fn main_model(dir: &Path) -> Option<String> {
    let chosen = std::env::var_os("HOME")
        .filter(|h| !h.is_empty())
        .and_then(|home| {
            novel_store::io::read_json_value(&Path::new(&home).join(".claude/settings.json")).ok()
        })
        .is_some_and(|v| v.get("model").is_some());
    if chosen {
        return None;
    }
    Some(
        Project::open(dir)
            .ok()
            .and_then(|p| novel_store::settings::load(&p).ok())
            .map_or_else(
                || novel_core::cost::Model::Sonnet.name().to_string(),
                |s| novel_core::cost::model_for(&s.models, "main").to_string(),
            ),
    )
}

/// The session's folder when it is a parent of the book's `dir` (a session started there reads
/// that folder's settings, not the book's).
fn parent_session_dir(dir: &Path) -> Option<PathBuf> {
    let cwd = std::env::current_dir().ok()?;
    let cwd = novel_store::project::absolute(&cwd);
    (dir != cwd && dir.starts_with(&cwd)).then_some(cwd)
}

pub fn run(global: &GlobalArgs, args: PermissionsArgs) -> Result<Report, CliError> {
    let dir = target_dir(global, &args)?;
    let session = session_dir();
    let root = plugin_root();
    let model = main_model(&dir);
    let before = if args.write {
        permissions::write(&dir, &session, root.as_deref(), model.as_deref())
    } else {
        permissions::check(&dir, &session, root.as_deref(), model.as_deref())
    }
    .map_err(permissions_error)?;
    let session_file = match parent_session_dir(&dir).filter(|_| args.write && args.dir.is_none()) {
        Some(parent) => {
            permissions::write(&parent, &session, root.as_deref(), model.as_deref())
                .map_err(permissions_error)?;
            Some(
                permissions::settings_file(&parent)
                    .to_string_lossy()
                    .into_owned(),
            )
        }
        None => None,
    };
    let written = args.write
        && !(before.missing.is_empty() && before.not_off.is_empty() && before.session.is_empty());
    let off_added: &[String] = if args.write { &before.not_off } else { &[] };
    let (missing, added): (&[String], &[String]) = if args.write {
        (&[], &before.missing)
    } else {
        (&before.missing, &[])
    };
    let data = PermissionsData {
        dir: dir.to_string_lossy().into_owned(),
        file: before
            .user_file
            .as_deref()
            .map(|f| f.to_string_lossy().into_owned())
            .unwrap_or_default(),
        local_file: before.file.to_string_lossy().into_owned(),
        rules: &before.wanted,
        missing,
        added,
        switched_off: &novel_core::permissions::SWITCHED_OFF,
        off_added,
        written,
        plugin_root: root.as_deref().map(novel_core::permissions::read_root),
        model_set: before.model().map(str::to_string).filter(|_| args.write),
        session_file: session_file.clone(),
    };
    let standing = permissions::standing(missing.is_empty());
    let human = human_text(&before, &data, &standing);
    let mut data = to_data(&data)?;
    data["in_force"] = Value::Bool(standing.in_force());
    data["blocker"] = to_data(&standing.blocker())?;
    data["advice"] = to_data(&standing.blocker().map(Blocker::advice))?;
    Ok(Report { data, human })
}

/// The folder the client session runs in: `CLAUDE_PROJECT_DIR` (set for hooks and tools), else
/// the working directory.
pub(crate) fn session_dir() -> PathBuf {
    std::env::var_os("CLAUDE_PROJECT_DIR")
        .filter(|d| !d.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::current_dir().ok())
        .map_or_else(
            || PathBuf::from("."),
            |d| novel_store::project::absolute(&d),
        )
}

/// The human answer: what was written (or is missing), then what keeps the rules out.
fn human_text(
    before: &Rules,
    data: &PermissionsData<'_>,
    standing: &novel_core::permissions::InForce,
) -> String {
    let (file, local, added, off_added, missing) = (
        &data.file,
        &data.local_file,
        data.added,
        data.off_added,
        data.missing,
    );
    let mut human = String::new();
    if !added.is_empty() {
        human.push_str(&format!(
            "已写入你的 Claude Code 用户设置 {file}：放行 {}。\n",
            added.join("、")
        ));
    } else if missing.is_empty() {
        human.push_str(&format!("{file} 已有全部放行规则。\n"));
    } else {
        human.push_str(&format!(
            "{file} 还缺这些放行规则：{}。作者同意后运行 novel permissions --write 写入。\n",
            missing.join("、")
        ));
    }
    let mut local_parts = Vec::new();
    if !off_added.is_empty() {
        local_parts.push(format!(
            "关掉写书用不到的 {} 个客户端工具（{}），每次请求少发它们的说明",
            off_added.len(),
            off_added.join("、")
        ));
    }
    if data.written {
        if let Some(m) = before.model() {
            local_parts.push(format!(
                "这本书的对话默认用 {m}（model，下次启动 Claude Code 时生效；想换就改这一行）"
            ));
        }
        if before.session.iter().any(|(k, _)| k == "autoMemoryEnabled") {
            local_parts.push(
                "关掉客户端为写代码准备的自动记忆（autoMemoryEnabled，书的记忆归 novel prefs）"
                    .to_string(),
            );
        }
    }
    if !local_parts.is_empty() {
        human.push_str(&format!(
            "已写入这本书的 {local}：{}。\n",
            local_parts.join("；")
        ));
    }
    if let Some(f) = &data.session_file {
        human.push_str(&format!("同样写入了会话所在目录的 {f}。\n"));
    }
    match standing.blocker() {
        Some(b) if b != novel_core::permissions::Blocker::NotWritten || data.written => {
            human.push_str(b.advice());
            human.push('\n');
        }
        // Known only inside a client.
        None if standing.watched.is_some() && !added.is_empty() => {
            human.push_str("一两秒后就生效，不用重启。\n");
        }
        _ => {}
    }
    human
}
