//! `novel pending list|resolve ID`: the checkpoint's `pending_actions` (e.g. the
//! `spec_propagation` entries `novel spec propagate` writes).

use clap::{Args, Subcommand};
use serde::Serialize;

use novel_core::model::PendingAction;
use novel_store::chapter::load_checkpoint;
use novel_store::spec::resolve_pending;

use crate::args::GlobalArgs;
use crate::output::{CliError, Report};

use super::spec_error;

/// The help layout of `cli.rs` (kept in step with it).
use crate::args::HELP_TEMPLATE;

#[derive(Debug, Subcommand)]
pub enum PendingCommand {
    /// 列出断点中的待处理事项（如设定变更传播）
    #[command(help_template = HELP_TEMPLATE, next_help_heading = "选项")]
    List,
    /// 处理完毕后关闭一条待处理事项
    #[command(help_template = HELP_TEMPLATE, next_help_heading = "选项")]
    Resolve(PendingResolveArgs),
}

#[derive(Debug, Args)]
pub struct PendingResolveArgs {
    /// 待处理事项的 id（见 novel pending list）
    #[arg(value_name = "ID", help_heading = "参数")]
    pub id: String,
}

/// The envelope name of a `pending` subcommand.
pub fn command_name(cmd: &PendingCommand) -> &'static str {
    match cmd {
        PendingCommand::List => "pending list",
        PendingCommand::Resolve(_) => "pending resolve",
    }
}

/// `novel pending list`'s `--json` data.
#[derive(Serialize)]
struct Listed<'a> {
    pending_actions: &'a [PendingAction],
}

/// `novel pending resolve`'s `--json` data.
#[derive(Serialize)]
struct Resolved<'a> {
    resolved: &'a PendingAction,
}

pub fn run(global: &GlobalArgs, cmd: PendingCommand) -> Result<Report, CliError> {
    let project = super::project(global)?;
    match cmd {
        PendingCommand::List => {
            let cp = load_checkpoint(&project)?;
            let mut human = if cp.pending_actions.is_empty() {
                "没有待处理事项。\n".to_string()
            } else {
                format!("待处理事项 {} 条：\n", cp.pending_actions.len())
            };
            for a in &cp.pending_actions {
                human.push_str(&format!(
                    "  {}  {}  {}",
                    a.id,
                    a.kind,
                    a.created_at.as_deref().unwrap_or("")
                ));
                if a.kind == novel_store::spec::PENDING_TYPE {
                    let (characters, chapters) = novel_store::spec::affected_counts(a);
                    human.push_str(&format!(
                        "  受影响角色契约 {characters} 条、章节契约 {chapters} 个"
                    ));
                }
                human.push('\n');
            }
            let data = Listed {
                pending_actions: &cp.pending_actions,
            };
            Report::new(&data, human)
        }
        PendingCommand::Resolve(a) => {
            let stale = super::stale_after(&project)?;
            let removed = resolve_pending(&project, &a.id, stale).map_err(spec_error)?;
            let human = format!("已关闭待处理事项 {}（{}）。\n", removed.id, removed.kind);
            Report::new(&Resolved { resolved: &removed }, human)
        }
    }
}
