//! `novel volume check|open|close|cleanup`: the volume cycle (`docs/orchestration.md` §1, §6).
//! The checks are `novel_core::plan`'s, the writes `novel_store::volume`'s; this module parses
//! the arguments and renders.

use clap::{ArgGroup, Args, Subcommand};
use serde::Serialize;

use novel_core::plan::cleanup::CleanupReport;
use novel_store::plan::{VolumeCheckReport, volume_check};
use novel_store::volume::{self, Selection, VolumeError};
use novel_store::{Project, time};

use novel_core::context::session::state_name;
use novel_core::diagnostic::render_all;

use super::plan_error;
use crate::args::{GlobalArgs, HELP_TEMPLATE};
use crate::output::{CliError, Exit, Report};

#[derive(Debug, Subcommand)]
pub enum VolumeCommand {
    /// 卷规划检查：每章有带全字段的大纲与 L3 契约，契约链衔接，活跃故事线 ≤ 4 条、交汇事件在本卷内，伏笔在本卷内埋设，引用的故事线、角色、规则、伏笔都存在
    #[command(help_template = HELP_TEMPLATE, next_help_heading = "选项", after_help = "本卷范围依次取自：storyline-schedule.json 的 chapter_range → 大纲的章节（最小..最大）→ 章节契约文件 → novel.json 的 chapters_per_volume。规则：range_unknown、outline_missing、outline_format、outline_block_missing、outline_field_missing（故事线、POV、地点、冲突、弧光、伏笔、状态变化）、contract_missing、outside_range、schedule_missing、too_many_storylines、convergence_outside、foreshadowing_outside、unknown_reference、unreadable，以及 novel check continuity 的四条规则。每条给出文件与 JSON 指针（大纲给行号）。有 error 时退出码 1。")]
    Check(VolumeCheckArgs),
    /// 开卷：VOL_PLANNING → WRITING（V 须是当前卷，且卷规划检查没有 error）
    #[command(help_template = HELP_TEMPLATE, next_help_heading = "选项")]
    Open(VolumeOpenArgs),
    /// 收卷：VOL_REVIEW → 下一卷的 VOL_PLANNING（须已有卷末回顾报告）；存档最终状态，写出卷末清理建议（不删除任何内容）
    #[command(help_template = HELP_TEMPLATE, next_help_heading = "选项", after_help = "写入 state/history/vol-NN-final-state.json（当时的 current-state.json 原样存档）与 volumes/vol-NN/cleanup.json：已退场角色在状态里的残留条目，以及没有未回收伏笔、故事线、下一卷大纲或契约、任何角色状态提到的物品与地点。作者确认后用 novel volume cleanup 清理。")]
    Close,
    /// 卷末清理：移除作者确认的条目（经状态引擎，记一行 manual 变更日志，state rebuild 可重现）
    #[command(help_template = HELP_TEMPLATE, next_help_heading = "选项", group(ArgGroup::new("which").required(true).args(["apply", "all"])))]
    Cleanup(VolumeCleanupArgs),
}

#[derive(Debug, Args)]
pub struct VolumeCheckArgs {
    /// 卷号（默认：当前卷）
    #[arg(value_name = "卷", help_heading = "参数", value_parser = clap::value_parser!(u32).range(1..))]
    pub volume: Option<u32>,
}

#[derive(Debug, Args)]
pub struct VolumeOpenArgs {
    /// 卷号（须是当前卷）
    #[arg(value_name = "卷", help_heading = "参数", value_parser = clap::value_parser!(u32).range(1..))]
    pub volume: u32,
}

#[derive(Debug, Args)]
pub struct VolumeCleanupArgs {
    /// 要清理的条目 id（清理报告中的 id，逗号分隔，如 items.old-sword,characters.li-si）
    #[arg(long, value_name = "ID,…", value_delimiter = ',', num_args = 1..)]
    pub apply: Vec<String>,
    /// 清理报告中的全部条目
    #[arg(long)]
    pub all: bool,
    /// 哪一卷的清理报告（默认：当前卷及以前最近的一份）
    #[arg(long, value_name = "卷", value_parser = clap::value_parser!(u32).range(1..))]
    pub volume: Option<u32>,
}

/// The envelope name of a `volume` subcommand.
/// `novel volume open`'s `--json` data.
#[derive(Serialize)]
struct Opened<'a> {
    volume: u32,
    orchestrator_state: novel_core::model::OrchestratorState,
    check: &'a VolumeCheckReport,
}

/// `novel volume close`'s `--json` data.
#[derive(Serialize)]
struct Closed<'a> {
    volume: u32,
    next_volume: u32,
    orchestrator_state: novel_core::model::OrchestratorState,
    archived: &'a str,
    cleanup_file: &'a str,
    cleanup: &'a CleanupReport,
}

pub fn command_name(cmd: &VolumeCommand) -> &'static str {
    match cmd {
        VolumeCommand::Check(_) => "volume check",
        VolumeCommand::Open(_) => "volume open",
        VolumeCommand::Close => "volume close",
        VolumeCommand::Cleanup(_) => "volume cleanup",
    }
}

pub fn run(global: &GlobalArgs, cmd: VolumeCommand) -> Result<Report, CliError> {
    let project = super::project(global)?;
    let stale = super::stale_after(&project)?;
    let now = time::now_iso();
    match cmd {
        VolumeCommand::Check(a) => check(&project, a.volume),
        VolumeCommand::Open(a) => {
            let done = volume::open(&project, a.volume, &now, stale).map_err(volume_error)?;
            let mut human = format!(
                "已开第 {} 卷，进入「{}」{}。\n",
                done.volume,
                state_name(done.orchestrator_state),
                range_text(&done.check)
            );
            human.push_str(&render_all(&done.check.findings));
            human.push_str("下一步：/novel:continue 写本卷第一章。\n");
            let data = Opened {
                volume: done.volume,
                orchestrator_state: done.orchestrator_state,
                check: &done.check,
            };
            Report::new(&data, human)
        }
        VolumeCommand::Close => close(&project, &now, stale),
        VolumeCommand::Cleanup(a) => cleanup(&project, &a, &now, stale),
    }
}

fn range_text(r: &VolumeCheckReport) -> String {
    match (r.range, r.range_source) {
        (Some([a, b]), Some(src)) => format!("（第 {a}–{b} 章，范围取自 {src}）"),
        _ => String::new(),
    }
}

/// Maps a refusal to its exit code: the check's errors are problems (1) with the findings as
/// `data`; the state machine, the lock and an unfinished commit are conflicts (3); the rest are
/// usage or project errors (2).
fn volume_error(e: VolumeError) -> CliError {
    let hint = e.hint();
    match e {
        VolumeError::CheckFailed(report) => {
            let human = render_all(&report.findings);
            let msg = format!(
                "第 {} 卷的检查有 {} 个错误，不能开卷",
                report.volume, report.counts.error
            );
            CliError::new("E_VOLUME_CHECK", msg, hint, Exit::Problems).with_report(&*report, human)
        }
        VolumeError::Plan(p) => plan_error(p),
        other => {
            let exit = if other.is_conflict() {
                Exit::Conflict
            } else {
                Exit::Usage
            };
            CliError::new(other.code(), other.to_string(), hint, exit)
        }
    }
}

fn check(project: &Project, volume: Option<u32>) -> Result<Report, CliError> {
    let v = match volume {
        Some(v) => v,
        None => novel_store::plan::light_checkpoint(project)?.volume(),
    };
    let report = volume_check(project, v).map_err(plan_error)?;
    let mut human = render_all(&report.findings);
    let summary = format!(
        "第 {v} 卷{}：{} 章，大纲 {} 节，契约 {} 份；错误 {}，提醒 {}。\n",
        range_text(&report),
        report.chapters,
        report.outline_blocks,
        report.contracts,
        report.counts.error,
        report.counts.warning
    );
    if report.has_errors() {
        human.push_str(&summary);
        return Err(CliError::new(
            "E_VOLUME_CHECK",
            format!("第 {v} 卷的规划有 {} 个错误", report.counts.error),
            "",
            Exit::Problems,
        )
        .with_report(&report, human));
    }
    human.push_str(&summary);
    human.push_str(&format!("检查通过：可以开卷（novel volume open {v}）。\n"));
    Report::new(&report, human)
}

fn close(project: &Project, now: &str, stale: std::time::Duration) -> Result<Report, CliError> {
    let done = volume::close(project, now, stale).map_err(volume_error)?;
    let mut human = format!(
        "第 {} 卷已收卷，进入「{}」（第 {} 卷）。\n最终状态存档：{}\n",
        done.volume,
        state_name(done.orchestrator_state),
        done.next_volume,
        done.archived
    );
    if done.cleanup.entries.is_empty() {
        human.push_str(&format!(
            "卷末清理：没有需要清理的条目（{}）。\n",
            done.cleanup_file
        ));
    } else {
        human.push_str(&format!(
            "卷末清理建议（{} 条，写在 {}，尚未删除任何内容）：\n",
            done.cleanup.entries.len(),
            done.cleanup_file
        ));
        for e in &done.cleanup.entries {
            human.push_str(&format!(
                "  - {}{}：{}\n",
                e.id,
                e.name
                    .as_deref()
                    .map_or(String::new(), |n| format!("（{n}）")),
                e.reason
            ));
        }
        human.push_str(
            "请作者确认后运行 novel volume cleanup --apply ID,…（或 --all）；不想清理就不用管。\n",
        );
    }
    let data = Closed {
        volume: done.volume,
        next_volume: done.next_volume,
        orchestrator_state: done.orchestrator_state,
        archived: &done.archived,
        cleanup_file: &done.cleanup_file,
        cleanup: &done.cleanup,
    };
    Report::new(&data, human)
}

fn cleanup(
    project: &Project,
    a: &VolumeCleanupArgs,
    now: &str,
    stale: std::time::Duration,
) -> Result<Report, CliError> {
    let selection = if a.all {
        Selection::All
    } else {
        Selection::ids(&a.apply).ok_or_else(|| {
            CliError::new(
                "E_USAGE",
                "--apply 没有给出条目 id",
                "写成 --apply items.old-sword,characters.li-si，或用 --all",
                Exit::Usage,
            )
        })?
    };
    let done =
        volume::cleanup_apply(project, a.volume, &selection, now, stale).map_err(volume_error)?;
    let mut human = if done.removed.is_empty() {
        format!("第 {} 卷卷末清理：没有需要移除的条目。\n", done.volume)
    } else {
        format!(
            "第 {} 卷卷末清理：已从状态中移除 {}（state_version {}，记入变更日志一行，novel state rebuild 可重现）。\n",
            done.volume,
            done.removed.join("、"),
            done.state_version
        )
    };
    if !done.absent.is_empty() {
        human.push_str(&format!(
            "已不在状态里（无需移除）：{}\n",
            done.absent.join("、")
        ));
    }
    if !done.already_applied.is_empty() {
        human.push_str(&format!(
            "之前已经清理过：{}\n",
            done.already_applied.join("、")
        ));
    }
    Report::new(&done, human)
}
