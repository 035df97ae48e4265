//! `novel prefs add|list|remove` (`004`): the author's preferences, which every ChapterWriter
//! packet carries as its `user_preferences` section (`novel_store::prefs`).

use clap::{Args, Subcommand};
use serde::Serialize;

use novel_core::model::revision::Preference;
use novel_store::prefs::{self, PrefsError};

use crate::args::{GlobalArgs, HELP_TEMPLATE};
use crate::output::{CliError, Exit, Report};

#[derive(Debug, Subcommand)]
pub enum PrefsCommand {
    /// 记下一条作者偏好（每章写作时都会带上）
    #[command(help_template = HELP_TEMPLATE, next_help_heading = "选项")]
    Add(AddArgs),
    /// 列出作者偏好
    #[command(help_template = HELP_TEMPLATE, next_help_heading = "选项")]
    List,
    /// 删除一条作者偏好（id 不再复用）
    #[command(help_template = HELP_TEMPLATE, next_help_heading = "选项")]
    Remove(RemoveArgs),
}

#[derive(Debug, Args)]
pub struct AddArgs {
    /// 偏好内容，如「对话少用感叹号」
    #[arg(value_name = "内容", help_heading = "参数")]
    pub text: String,
    /// 类别（如 文风、节奏、人物、禁忌）
    #[arg(long, value_name = "类别")]
    pub category: Option<String>,
}

#[derive(Debug, Args)]
pub struct RemoveArgs {
    /// 偏好 id（见 novel prefs list）
    #[arg(value_name = "ID", help_heading = "参数")]
    pub id: String,
}

pub fn command_name(cmd: &PrefsCommand) -> &'static str {
    match cmd {
        PrefsCommand::Add(_) => "prefs add",
        PrefsCommand::List => "prefs list",
        PrefsCommand::Remove(_) => "prefs remove",
    }
}

fn prefs_error(e: PrefsError) -> CliError {
    let exit = if e.is_conflict() {
        Exit::Conflict
    } else if matches!(e, PrefsError::Exists { .. }) {
        Exit::Problems
    } else {
        Exit::Usage
    };
    CliError::new(e.code(), e.to_string(), e.hint(), exit)
}

/// `novel prefs add`'s `--json` data.
#[derive(Serialize)]
struct Added<'a> {
    added: &'a Preference,
}

/// `novel prefs list`'s `--json` data.
#[derive(Serialize)]
struct Listed<'a> {
    user_id: String,
    preferences: &'a [Preference],
}

/// `novel prefs remove`'s `--json` data.
#[derive(Serialize)]
struct Removed<'a> {
    removed: &'a Preference,
}

pub fn run(global: &GlobalArgs, cmd: PrefsCommand) -> Result<Report, CliError> {
    let project = super::project(global)?;
    match cmd {
        PrefsCommand::Add(a) => {
            let stale = super::stale_after(&project)?;
            let now = novel_store::time::now_iso();
            let p = prefs::add(&project, &a.text, a.category.as_deref(), &now, stale)
                .map_err(prefs_error)?;
            let human = format!("已记下作者偏好 {}：{}\n", p.id, p.text);
            Report::new(&Added { added: &p }, human)
        }
        PrefsCommand::List => {
            let all = prefs::load(&project)?;
            let human = if all.preferences.is_empty() {
                "还没有作者偏好（novel prefs add \"…\" 添加）。\n".to_string()
            } else {
                let mut h = format!("作者偏好 {} 条：\n", all.preferences.len());
                for p in &all.preferences {
                    h.push_str(&format!(
                        "  {}  {}{}\n",
                        p.id,
                        p.category
                            .as_deref()
                            .map(|c| format!("[{c}] "))
                            .unwrap_or_default(),
                        p.text
                    ));
                }
                h
            };
            let data = Listed {
                user_id: prefs::user_id(&project),
                preferences: &all.preferences,
            };
            Report::new(&data, human)
        }
        PrefsCommand::Remove(a) => {
            let stale = super::stale_after(&project)?;
            let p = prefs::remove(&project, &a.id, stale).map_err(prefs_error)?;
            let human = format!("已删除作者偏好 {}：{}\n", p.id, p.text);
            Report::new(&Removed { removed: &p }, human)
        }
    }
}
