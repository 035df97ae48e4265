//! `novel retire check|apply SLUG`: character retirement only by explicit action, never while
//! one of the three protections of `003` §8.5 holds (seed `000` step 3).

use clap::{Args, Subcommand};
use serde::Serialize;

use novel_core::spec::retire::RetirementCheck;
use novel_store::spec::{SpecError, retire_apply, retire_check};
use novel_store::time;

use crate::args::GlobalArgs;
use crate::output::{CliError, Report, to_data};

use super::spec_error;

/// The help layout of `cli.rs` (kept in step with it).
use crate::args::HELP_TEMPLATE;

#[derive(Debug, Subcommand)]
pub enum RetireCommand {
    /// 退场保护检查（A 活跃伏笔、B 故事线、C 未来交汇事件），命中任何一条即退出码 1 并给出证据
    #[command(help_template = HELP_TEMPLATE, next_help_heading = "选项")]
    Check(RetireArgs),
    /// 执行退场（先重新检查）：档案移到 characters/retired/、经状态引擎移除状态、关系标记为 ended、记入角色变更记录，全有或全无
    #[command(help_template = HELP_TEMPLATE, next_help_heading = "选项")]
    Apply(RetireArgs),
}

#[derive(Debug, Args)]
pub struct RetireArgs {
    /// 角色 slug（characters/active/<slug>.json 的文件名，如 lin-feng）
    #[arg(value_name = "SLUG", help_heading = "参数")]
    pub slug: String,
}

/// The envelope name of a `retire` subcommand.
pub fn command_name(cmd: &RetireCommand) -> &'static str {
    match cmd {
        RetireCommand::Check(_) => "retire check",
        RetireCommand::Apply(_) => "retire apply",
    }
}

fn render(c: &RetirementCheck) -> String {
    if c.allowed {
        return format!(
            "角色「{}」（{}）未命中任何退场保护，可以退场。\n",
            c.display_name, c.slug
        );
    }
    let mut s = format!(
        "角色「{}」（{}）不可退场，命中 {} 条退场保护：\n",
        c.display_name,
        c.slug,
        c.blocks.len()
    );
    for b in &c.blocks {
        s.push_str(&format!(
            "  {}{}\n      {}\n      {}: {}",
            b.protection.label(),
            if b.certain { "" } else { "（保守判定）" },
            b.reason,
            b.evidence.file,
            if b.evidence.pointer.is_empty() {
                "/"
            } else {
                &b.evidence.pointer
            }
        ));
        if !b.evidence.excerpt.is_empty() {
            s.push_str(&format!("  「{}」", b.evidence.excerpt));
        }
        s.push('\n');
    }
    s
}

/// `novel retire apply`'s `--json` data.
#[derive(Serialize)]
struct Applied<'a> {
    slug: &'a str,
    display_name: &'a str,
    moved: Vec<Move<'a>>,
    state_changed: bool,
    state_version: u64,
    ended_relationships: &'a [String],
    check: &'a RetirementCheck,
}

/// A file moved from `characters/active/` to `characters/retired/`.
#[derive(Serialize)]
struct Move<'a> {
    from: &'a str,
    to: &'a str,
}

fn blocked(check: RetirementCheck) -> CliError {
    let human = render(&check);
    match to_data(&check) {
        Ok(data) => spec_error(SpecError::Blocked(Box::new(check))).with_details(data, human),
        Err(e) => e,
    }
}

pub fn run(global: &GlobalArgs, cmd: RetireCommand) -> Result<Report, CliError> {
    let project = super::project(global)?;
    match cmd {
        RetireCommand::Check(a) => {
            let check = retire_check(&project, &a.slug).map_err(spec_error)?;
            if !check.allowed {
                return Err(blocked(check));
            }
            Report::new(&check, render(&check))
        }
        RetireCommand::Apply(a) => {
            let stale = super::stale_after(&project)?;
            let out = match retire_apply(&project, &a.slug, &time::now_iso(), stale) {
                Ok(out) => out,
                Err(SpecError::Blocked(check)) => return Err(blocked(*check)),
                Err(e) => return Err(spec_error(e)),
            };
            let mut human = format!(
                "角色「{}」（{}）已退场：\n",
                out.check.display_name, out.check.slug
            );
            for (from, to) in &out.moved {
                human.push_str(&format!("  {from} → {to}\n"));
            }
            human.push_str(&if out.state_changed {
                format!(
                    "  已从 state/current-state.json 移除（state_version {}，变更日志 source: retire）\n",
                    out.state_version
                )
            } else {
                "  state/current-state.json 中没有该角色的条目（变更日志仍记录了这次退场）\n".to_string()
            });
            human.push_str(&format!(
                "  characters/relationships.json：{} 条关系标记为 ended\n  已记入 characters/changelog.md\n",
                out.ended_relationships.len()
            ));
            let data = Applied {
                slug: &out.check.slug,
                display_name: &out.check.display_name,
                moved: out
                    .moved
                    .iter()
                    .map(|(from, to)| Move { from, to })
                    .collect(),
                state_changed: out.state_changed,
                state_version: out.state_version,
                ended_relationships: &out.ended_relationships,
                check: &out.check,
            };
            Report::new(&data, human)
        }
    }
}
