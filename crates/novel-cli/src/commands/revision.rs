//! `novel revision notes|save|apply|reject` (`004`): the revision notes of a chapter's round,
//! the candidate kept under `revision_policy: manual_confirm`, and the author's decision. The
//! rules are `novel_core::revision`; the files and the lock, `novel_store::revision`.

use std::path::PathBuf;

use clap::{Args, Subcommand};
use serde::Serialize;

use novel_core::model::revision::{RevisionStatus, RevisionTarget};
use novel_core::revision::NotesAction;
use novel_store::lock;
use novel_store::revision::{self as rev, RevisionError};

use crate::args::{GlobalArgs, HELP_TEMPLATE};
use crate::output::{CliError, Exit, Report};

#[derive(Debug, Subcommand)]
pub enum RevisionCommand {
    /// 本章这一轮带修订指令的意见（评审的 required_fixes、串线检查），以及按修订策略该做什么
    #[command(help_template = HELP_TEMPLATE, next_help_heading = "选项")]
    Notes(NotesArgs),
    /// 保存修订候选（manual_confirm）：候选与产生它的意见存到 chapters/chapter-NNN-revision.json，章节标为待确认，正文不动
    #[command(help_template = HELP_TEMPLATE, next_help_heading = "选项")]
    Save(SaveArgs),
    /// 采纳修订候选：用候选覆盖章节正文（已提交的章节经提交日志写入，并列出要重建的摘要与状态）
    #[command(help_template = HELP_TEMPLATE, next_help_heading = "选项")]
    Apply(DecideArgs),
    /// 拒绝修订候选：候选标为 rejected，章节不动
    #[command(help_template = HELP_TEMPLATE, next_help_heading = "选项")]
    Reject(DecideArgs),
}

#[derive(Debug, Args)]
pub struct NotesArgs {
    /// 章节号（默认在写的章节，否则最后提交的章节）
    #[arg(long, value_name = "N", value_parser = crate::args::chapter_number)]
    pub chapter: Option<u32>,
}

#[derive(Debug, Args)]
pub struct SaveArgs {
    /// 章节号
    #[arg(long, value_name = "N", value_parser = crate::args::chapter_number)]
    pub chapter: u32,
    /// 修订后的整章正文（Markdown 文件）
    #[arg(value_name = "文件", help_heading = "参数")]
    pub file: PathBuf,
    /// 锁令牌（候选针对正在写的章节时需要；省略时用本会话持有的锁）
    #[arg(long, value_name = "T")]
    pub token: Option<String>,
    /// 作者要求的修改（可重复）：评审没有提出、作者自己要改的地方（错别字、人名、删一句），作为这份候选的修订意见
    #[arg(long = "note", value_name = "意见")]
    pub notes: Vec<String>,
}

#[derive(Debug, Args)]
pub struct DecideArgs {
    /// 章节号
    #[arg(long, value_name = "N", value_parser = crate::args::chapter_number)]
    pub chapter: u32,
    /// 锁令牌（候选针对正在写的章节时需要；省略时用本会话持有的锁）
    #[arg(long, value_name = "T")]
    pub token: Option<String>,
}

/// The envelope name of a `revision` subcommand.
pub fn command_name(cmd: &RevisionCommand) -> &'static str {
    match cmd {
        RevisionCommand::Notes(_) => "revision notes",
        RevisionCommand::Save(_) => "revision save",
        RevisionCommand::Apply(_) => "revision apply",
        RevisionCommand::Reject(_) => "revision reject",
    }
}

fn revision_error(e: RevisionError) -> CliError {
    let exit = if e.is_conflict() {
        Exit::Conflict
    } else if e.is_nothing() {
        Exit::Problems
    } else {
        Exit::Usage
    };
    CliError::new(e.code(), e.to_string(), e.hint(), exit)
}

/// `novel revision reject`'s `--json` data.
#[derive(Serialize)]
struct Rejected<'a> {
    chapter: u32,
    status: &'a RevisionStatus,
    target: &'a RevisionTarget,
    decided_at: &'a Option<String>,
    file: String,
}

pub fn run(global: &GlobalArgs, cmd: RevisionCommand) -> Result<Report, CliError> {
    let project = super::project(global)?;
    let stale = super::stale_after(&project)?;
    match cmd {
        RevisionCommand::Notes(a) => notes(&project, a.chapter),
        RevisionCommand::Save(a) => {
            let saved = rev::save_file(
                &project,
                a.chapter,
                &a.file,
                &a.notes,
                lock::session_token_if_held(&project, a.token.as_deref()).as_deref(),
                stale,
            )
            .map_err(revision_error)?;
            let human = format!(
                "第 {} 章的修订候选已保存到 {}（{} 条意见{}），等作者决定：novel revision apply --chapter {} 或 reject。正文未改动。\n",
                saved.chapter,
                saved.file,
                saved.notes,
                if saved.replaced {
                    "，替换了之前待确认的候选"
                } else {
                    ""
                },
                saved.chapter
            );
            Report::new(&saved, human)
        }
        RevisionCommand::Apply(a) => {
            let count = |t: &str| novel_text::count::count(t).chars;
            let token = lock::session_token_if_held(&project, a.token.as_deref());
            let applied = rev::apply(&project, a.chapter, token.as_deref(), stale, &count)
                .map_err(revision_error)?;
            let mut human = format!(
                "已采纳第 {} 章的修订候选：{} 已替换（{}字）。\n",
                applied.chapter, applied.file, applied.chars
            );
            match &applied.rebuild {
                Some(r) => {
                    human.push_str("正文变了，这一章的摘要与状态要按新正文重建：\n");
                    for (i, s) in r.steps.iter().enumerate() {
                        human.push_str(&format!("  {}. {s}\n", i + 1));
                    }
                }
                None => human.push_str(
                    "候选成为修订稿：接着运行摘要员，再 novel chapter stage drafted（之后照常润色、评审、门控）。\n",
                ),
            }
            Report::new(&applied, human)
        }
        RevisionCommand::Reject(a) => {
            let rec = rev::reject(&project, a.chapter, stale).map_err(revision_error)?;
            let human = format!("已拒绝第 {} 章的修订候选，章节正文不变。\n", rec.chapter);
            let data = Rejected {
                chapter: rec.chapter,
                status: &rec.status,
                target: &rec.target,
                decided_at: &rec.decided_at,
                file: novel_store::layout::revision_file(rec.chapter),
            };
            Report::new(&data, human)
        }
    }
}

fn notes(project: &novel_store::Project, chapter: Option<u32>) -> Result<Report, CliError> {
    let r = rev::notes(project, chapter).map_err(revision_error)?;
    let mut human = format!(
        "第 {} 章（{}）修订意见 {} 条，修订策略 {}：{}\n",
        r.chapter,
        match r.target {
            novel_core::model::revision::RevisionTarget::Staged => "在写",
            novel_core::model::revision::RevisionTarget::Committed => "已提交",
        },
        r.notes.len(),
        match r.policy {
            novel_core::model::settings::RevisionPolicy::AutoApply => "auto_apply",
            novel_core::model::settings::RevisionPolicy::ManualConfirm => "manual_confirm",
        },
        match r.action {
            NotesAction::None => "没有需要修订的地方，章节保持不变",
            NotesAction::Revise => "按意见自动修订（门控 revise 时进入修订轮）",
            NotesAction::Candidate => "生成修订候选，保存后等作者确认",
        }
    );
    if !r.text.is_empty() {
        human.push_str(&r.text);
        human.push('\n');
    }
    if let Some(c) = &r.candidate {
        human.push_str(&format!(
            "已有修订候选：{}（{}）\n",
            c.file,
            match c.status {
                novel_core::model::revision::RevisionStatus::Pending => "待确认",
                novel_core::model::revision::RevisionStatus::Accepted => "已采纳",
                novel_core::model::revision::RevisionStatus::Rejected => "已拒绝",
            }
        ));
    }
    Report::new(&r, human)
}
