//! `novel memory init|show` (`004`): per-character memory (`novel_store::memory`). The
//! commit appends each chapter's character actions; `init` writes the profile record of
//! characters CharacterWeaver just created.

use clap::{Args, Subcommand};
use serde::Serialize;

use novel_core::model::MemoryEntry;
use novel_core::model::revision::MemoryKind;
use novel_store::memory::{self, Recorded};

use crate::args::{GlobalArgs, HELP_TEMPLATE};
use crate::output::{CliError, Exit, Report};

#[derive(Debug, Subcommand)]
pub enum MemoryCommand {
    /// 为还没有记忆的在场角色写入建档记录（姓名、定位、外貌、性格、背景、动机）；可重复运行
    #[command(help_template = HELP_TEMPLATE, next_help_heading = "选项")]
    Init(InitArgs),
    /// 查看一个角色的记忆：建档记录与逐章行为
    #[command(help_template = HELP_TEMPLATE, next_help_heading = "选项")]
    Show(ShowArgs),
    /// 从变更日志重建全部在场角色的记忆（补上提交时没写成的）
    #[command(help_template = HELP_TEMPLATE, next_help_heading = "选项")]
    Rebuild,
}

#[derive(Debug, Args)]
pub struct InitArgs {
    /// 只处理这些角色（slug；默认全部在场角色）
    #[arg(value_name = "SLUG", help_heading = "参数")]
    pub slugs: Vec<String>,
}

#[derive(Debug, Args)]
pub struct ShowArgs {
    /// 角色（slug、显示名或别名）
    #[arg(value_name = "角色", help_heading = "参数")]
    pub character: String,
    /// 只显示最近 K 条行为
    #[arg(long, value_name = "K")]
    pub last: Option<usize>,
}

pub fn command_name(cmd: &MemoryCommand) -> &'static str {
    match cmd {
        MemoryCommand::Init(_) => "memory init",
        MemoryCommand::Show(_) => "memory show",
        MemoryCommand::Rebuild => "memory rebuild",
    }
}

/// One line for the commit's human output when the memory write had something to say.
pub fn render_recorded(r: &Recorded) -> String {
    let mut out = String::new();
    if !r.written.is_empty() {
        out.push_str(&format!(
            "角色记忆：{}。\n",
            r.written
                .iter()
                .map(|(s, k)| format!("{s} +{k}"))
                .collect::<Vec<_>>()
                .join("、")
        ));
    }
    if !r.unknown.is_empty() {
        out.push_str(&format!(
            "角色记忆：这些名字对不上任何角色，没有记录：{}\n",
            r.unknown.join("、")
        ));
    }
    if !r.failed.is_empty() {
        out.push_str(&format!(
            "警告：角色记忆没有写成（章节已提交，不受影响）：{}\n",
            r.failed.join("；")
        ));
    }
    out
}

pub fn run(global: &GlobalArgs, cmd: MemoryCommand) -> Result<Report, CliError> {
    let project = super::project(global)?;
    match cmd {
        MemoryCommand::Init(a) => {
            let now = novel_store::time::now_iso();
            let done = memory::init(&project, &a.slugs, &now)?;
            let mut human = format!(
                "角色记忆建档：新建 {} 个，已有 {} 个。\n",
                done.created.len(),
                done.existing.len()
            );
            if !done.created.is_empty() {
                human.push_str(&format!("  新建：{}\n", done.created.join("、")));
            }
            if !done.unknown.is_empty() {
                return Err(CliError::new(
                    "E_NO_ENTITY",
                    format!("这些不是在场角色：{}", done.unknown.join("、")),
                    "用 characters/active/ 中角色档案的文件名（slug）；其余角色已处理",
                    Exit::Problems,
                )
                .with_report(&done, human));
            }
            Report::new(&done, human)
        }
        MemoryCommand::Show(a) => show(&project, &a),
        MemoryCommand::Rebuild => {
            let stale = super::stale_after(&project)?;
            let done = memory::rebuild(&project, &novel_store::time::now_iso(), stale)
                .map_err(super::lock_error)?;
            let mut human = format!(
                "已从变更日志重建 {} 个角色的记忆（共 {} 条行为）。\n",
                done.characters.len(),
                done.characters.values().sum::<usize>()
            );
            if !done.unknown.is_empty() {
                human.push_str(&format!(
                    "这些名字对不上在场角色，没有记录：{}\n",
                    done.unknown.join("、")
                ));
            }
            Report::new(&done, human)
        }
    }
}

/// `novel memory show`'s `--json` data.
#[derive(Serialize)]
struct Shown<'a> {
    character: &'a str,
    file: String,
    entries: &'a [MemoryEntry],
}

fn show(project: &novel_store::Project, a: &ShowArgs) -> Result<Report, CliError> {
    let slug = memory::resolve(project, &a.character).map_err(|close| {
        let who = a.character.trim();
        CliError::new(
            "E_NO_ENTITY",
            format!("没有叫「{who}」的角色"),
            if close.is_empty() {
                "用角色的 slug、显示名或别名；characters/ 中有全部角色档案".to_string()
            } else {
                format!("是不是：{}？", close.join("、"))
            },
            Exit::Problems,
        )
    })?;
    let entries = match a.last {
        Some(k) => memory::recent(project, &slug, k)?,
        None => memory::read(project, &slug)?,
    };
    let mut human = format!("{slug} 的角色记忆（{} 条）：\n", entries.len());
    if entries.is_empty() {
        human.push_str("  （还没有记忆：novel memory init 建档，章节提交时追加行为）\n");
    }
    for e in &entries {
        match e.kind {
            MemoryKind::Profile => human.push_str(&format!("  建档  {}\n", e.text)),
            MemoryKind::Action => human.push_str(&format!(
                "  第{}章{}  {}\n",
                e.chapter,
                e.scene.map(|s| format!(" 场景{s}")).unwrap_or_default(),
                e.text
            )),
        }
    }
    let data = Shown {
        character: &slug,
        file: novel_store::layout::character_memory(&slug),
        entries: &entries,
    };
    Report::new(&data, human)
}
