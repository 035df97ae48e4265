//! `novel quickstart [done|undo STEP]`: the quick start's steps (PRD §6 Layer 1), what the
//! files show for each, and the author's marks (`docs/orchestration.md` §3).

use clap::{Args, Subcommand};
use serde::Serialize;

use novel_core::model::{OrchestratorState, QuickStartStep};
use novel_core::quickstart::{self, QuickStartStatus};
use novel_store::chapter::load_checkpoint;
use novel_store::quickstart::{MarkError, files, mark};

use crate::args::{GlobalArgs, HELP_TEMPLATE};
use crate::output::{CliError, Exit, Report};

#[derive(Debug, Args)]
#[command(
    after_help = "步骤依次为：brief 创作纲领、world 世界观规则、characters 主要角色、storylines 故事线、style 风格样本、outline 第 1 卷大纲（第 1–3 章）、trial-1/trial-2/trial-3 试写第 1–3 章、confirm 确认。能从文件判断的步骤（brief、world、characters、style、outline、trial-*）文件齐了就算完成；storylines 与 confirm 只能由作者标记。"
)]
pub struct QuickstartArgs {
    #[command(subcommand)]
    pub command: Option<QuickstartCommand>,
}

#[derive(Debug, Subcommand)]
pub enum QuickstartCommand {
    /// 标记一步已完成（文件能判断的步骤须文件已齐；confirm 须前面各步都完成，并进入卷规划）
    #[command(help_template = HELP_TEMPLATE, next_help_heading = "选项")]
    Done(StepArgs),
    /// 取消一步的标记（不动任何文件）
    #[command(help_template = HELP_TEMPLATE, next_help_heading = "选项")]
    Undo(StepArgs),
}

#[derive(Debug, Args)]
pub struct StepArgs {
    /// 步骤：brief、world、characters、storylines、style、outline、trial-1、trial-2、trial-3、confirm
    #[arg(value_name = "步骤", help_heading = "参数")]
    pub step: String,
}

/// The envelope name.
pub fn command_name(a: &QuickstartArgs) -> &'static str {
    match a.command {
        None => "quickstart",
        Some(QuickstartCommand::Done(_)) => "quickstart done",
        Some(QuickstartCommand::Undo(_)) => "quickstart undo",
    }
}

fn step(id: &str) -> Result<QuickStartStep, CliError> {
    QuickStartStep::from_id(id).ok_or_else(|| {
        CliError::new(
            "E_USAGE",
            format!("没有这个快速起步步骤：{id}"),
            format!(
                "可选：{}",
                QuickStartStep::ALL
                    .iter()
                    .map(|s| s.id())
                    .collect::<Vec<_>>()
                    .join("、")
            ),
            Exit::Usage,
        )
    })
}

/// The step table as text.
fn render(st: &QuickStartStatus) -> String {
    let mut out = String::new();
    for (i, s) in st.steps.iter().enumerate() {
        out.push_str(&format!(
            "  {:>2}. [{}] {}（{}）{}",
            i + 1,
            if s.done { "✓" } else { " " },
            s.label,
            s.id,
            if s.marked { "，已标记" } else { "" }
        ));
        if let Some(e) = &s.evidence {
            out.push_str(&format!("：{e}"));
        }
        out.push('\n');
    }
    match st.next_step() {
        Some(n) => out.push_str(&format!("下一步：{}（{}）\n", n.label(), n.id())),
        None => out.push_str("快速起步的各步都已完成。\n"),
    }
    out
}

fn mark_error(e: MarkError) -> CliError {
    match e {
        MarkError::Refused(r) => {
            let exit = match r.code {
                "E_QUICKSTART_EVIDENCE" | "E_QUICKSTART_INCOMPLETE" => Exit::Problems,
                _ => Exit::Conflict,
            };
            CliError::new(r.code, r.reason, r.hint, exit)
        }
        MarkError::Lock(l) => super::lock_error(l),
        MarkError::Store(s) => s.into(),
    }
}

/// `novel quickstart done|undo`'s `--json` data: the status, then the step marked.
#[derive(Serialize)]
struct Marked<'a> {
    #[serde(flatten)]
    status: &'a QuickStartStatus,
    step: &'static str,
    marked: bool,
    orchestrator_state: OrchestratorState,
}

pub fn run(global: &GlobalArgs, args: QuickstartArgs) -> Result<Report, CliError> {
    let project = super::project(global)?;
    let Some(cmd) = args.command else {
        let cp = load_checkpoint(&project)?;
        let st = quickstart::status(&cp, &files(&project));
        let mut human = if cp.orchestrator_state.in_quick_start() {
            "快速起步：\n".to_string()
        } else {
            "快速起步已结束（已确认进入卷规划）。\n".to_string()
        };
        human.push_str(&render(&st));
        return Report::new(&st, human);
    };
    let (id, done) = match &cmd {
        QuickstartCommand::Done(a) => (a.step.as_str(), true),
        QuickstartCommand::Undo(a) => (a.step.as_str(), false),
    };
    let s = step(id)?;
    let stale = super::stale_after(&project)?;
    let (cp, files) = mark(&project, s, done, stale).map_err(mark_error)?;
    let st = quickstart::status(&cp, &files);
    let mut human = if done {
        format!("已标记完成：{}（{}）。\n", s.label(), s.id())
    } else {
        format!("已取消标记：{}（{}）。\n", s.label(), s.id())
    };
    if !cp.orchestrator_state.in_quick_start() {
        human.push_str(&format!(
            "快速起步完成，进入「{}」：用 /novel:start 规划第 {} 卷。\n",
            novel_core::context::session::state_name(cp.orchestrator_state),
            cp.volume()
        ));
    } else {
        human.push_str(&render(&st));
    }
    let data = Marked {
        status: &st,
        step: s.id(),
        marked: done,
        orchestrator_state: cp.orchestrator_state,
    };
    Report::new(&data, human)
}
