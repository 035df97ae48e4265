//! `novel blacklist add|remove|whitelist|upgrade` on the project's `ai-blacklist.json`: the
//! maintenance rules of PRD §7 (黑名单维护) are `novel_text::maintain`'s, the upgrade is
//! `AiBlacklist::upgrade_from`; this reads the file, applies one, and writes it back atomically
//! (keys the engine does not know are kept).

use clap::{Args, Subcommand, ValueEnum};
use serde::Serialize;

use novel_core::model::AiBlacklist;
use novel_core::model::blacklist::{EntrySource, Upgrade};
use novel_store::blacklist::{self as store_blacklist, EditFailure, Write};
use novel_store::time::now_iso;
use novel_store::{Project, layout};
use novel_text::maintain::{self, Edit, EditError, NewEntry};

use crate::args::{GlobalArgs, HELP_TEMPLATE};
use crate::output::{CliError, Exit, Report};

#[derive(Debug, Subcommand)]
pub enum BlacklistCommand {
    /// 加入一个 AI 套话短语（裁判建议的须附 --evidence）
    #[command(help_template = HELP_TEMPLATE, next_help_heading = "选项")]
    Add(AddArgs),
    /// 从黑名单删除一个短语
    #[command(help_template = HELP_TEMPLATE, next_help_heading = "选项")]
    Remove(RemoveArgs),
    /// 把作者确认可用的短语加入白名单（--remove 移出）；白名单短语及包含它的上下文永不计数
    #[command(help_template = HELP_TEMPLATE, next_help_heading = "选项")]
    Whitelist(WhitelistArgs),
    /// 把项目黑名单升级到程序自带的最新种子：去掉种子已不再收录的短语，补上新短语与句式；作者和裁判加的、白名单都不动
    #[command(help_template = HELP_TEMPLATE, next_help_heading = "选项")]
    Upgrade(UpgradeArgs),
}

#[derive(Debug, Args)]
pub struct UpgradeArgs {
    /// 只列出会怎样改，不写文件
    #[arg(long)]
    pub dry_run: bool,
}

/// Who proposes the phrase.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum SourceArg {
    /// 作者
    User,
    /// 评审（须附证据）
    Judge,
}

#[derive(Debug, Args)]
pub struct AddArgs {
    /// 短语（如 嘴角微微上扬）
    #[arg(value_name = "短语", help_heading = "参数")]
    pub phrase: String,
    /// 类别 slug（如 body_language）；须是已有类别，或同时用 --category-name 新建
    #[arg(long, value_name = "类别")]
    pub category: String,
    /// 新建类别时的中文名
    #[arg(long, value_name = "中文名")]
    pub category_name: Option<String>,
    /// 只在叙述中计数（「」“”『』 对话内不算）
    #[arg(long)]
    pub narration_only: bool,
    /// 只在段首计数
    #[arg(long)]
    pub paragraph_start_only: bool,
    /// 替换建议（可多次给出）
    #[arg(long = "replacement", value_name = "替换")]
    pub replacements: Vec<String>,
    /// 来源：user 作者（默认）或 judge 裁判
    #[arg(
        long,
        value_enum,
        default_value = "user",
        value_name = "来源",
        hide_default_value = true,
        hide_possible_values = true
    )]
    pub source: SourceArg,
    /// 证据：章节与原文（--source judge 时必填），如「第 12 章：他嘴角微微上扬……」
    #[arg(long, value_name = "证据")]
    pub evidence: Option<String>,
}

#[derive(Debug, Args)]
pub struct RemoveArgs {
    /// 要删除的短语
    #[arg(value_name = "短语", help_heading = "参数")]
    pub phrase: String,
}

#[derive(Debug, Args)]
pub struct WhitelistArgs {
    /// 短语
    #[arg(value_name = "短语", help_heading = "参数")]
    pub phrase: String,
    /// 从白名单移出
    #[arg(long)]
    pub remove: bool,
}

/// The command name in the JSON envelope (`blacklist add` …).
pub fn command_name(command: &BlacklistCommand) -> &'static str {
    match command {
        BlacklistCommand::Add(_) => "blacklist add",
        BlacklistCommand::Remove(_) => "blacklist remove",
        BlacklistCommand::Whitelist(_) => "blacklist whitelist",
        BlacklistCommand::Upgrade(_) => "blacklist upgrade",
    }
}

/// One edit of `novel_text::maintain`, as the store's transaction runs it.
type EditFn = Box<dyn FnOnce(&mut AiBlacklist) -> Result<Edit, EditError>>;

pub fn run(global: &GlobalArgs, command: BlacklistCommand) -> Result<Report, CliError> {
    let proj = super::project(global)?;
    let apply: EditFn = match command {
        BlacklistCommand::Upgrade(a) => return upgrade(&proj, a.dry_run),
        BlacklistCommand::Add(a) => {
            let entry = new_entry(a);
            Box::new(move |l| maintain::add(l, entry))
        }
        BlacklistCommand::Remove(a) => Box::new(move |l| maintain::remove(l, &a.phrase)),
        BlacklistCommand::Whitelist(a) if a.remove => {
            Box::new(move |l| maintain::unwhitelist(l, &a.phrase))
        }
        BlacklistCommand::Whitelist(a) => Box::new(move |l| maintain::whitelist(l, &a.phrase)),
    };
    let edit = |list: &mut AiBlacklist| apply(list).map(|e| (e, Write::Yes));
    let done = store_blacklist::edit(&proj, super::stale_after(&proj)?, &now_iso(), edit)
        .map_err(failure)?;
    let (
        list,
        Edit {
            action,
            phrase,
            message,
        },
    ) = (done.list, done.result);
    let data = Edited {
        action,
        phrase: &phrase,
        file: layout::AI_BLACKLIST,
        entries: list.entries.len(),
        whitelist: list.whitelist.len(),
    };
    Report::new(
        &data,
        format!(
            "{message}（{}：{} 条短语，白名单 {} 条）\n",
            layout::AI_BLACKLIST,
            list.entries.len(),
            list.whitelist.len()
        ),
    )
}

/// `novel blacklist add|remove|whitelist`'s `--json` data.
#[derive(Serialize)]
struct Edited<'a> {
    action: &'static str,
    phrase: &'a str,
    file: &'static str,
    entries: usize,
    whitelist: usize,
}

/// `novel blacklist upgrade`'s `--json` data.
#[derive(Serialize)]
struct Upgraded<'a> {
    dry_run: bool,
    written: bool,
    backup: Option<String>,
    file: &'static str,
    upgrade: &'a Upgrade,
    entries: usize,
}

/// `novel blacklist upgrade`: the project's list brought up to the shipped seed; the file it
/// replaces goes to `state/backups/` first. `--dry-run` reads only.
fn upgrade(proj: &Project, dry_run: bool) -> Result<Report, CliError> {
    let seed = novel_store::select::seed_blacklist()?;
    let (list, report, backup) = if dry_run {
        let (mut list, _) = novel_store::select::load_blacklist(Some(proj))?;
        let report = list.upgrade_from(&seed);
        (list, report, None)
    } else {
        let done = store_blacklist::edit(proj, super::stale_after(proj)?, &now_iso(), |l| {
            let report = l.upgrade_from(&seed);
            let write = if report.is_empty() {
                Write::No
            } else {
                Write::WithBackup
            };
            Ok::<_, EditError>((report, write))
        })
        .map_err(failure)?;
        (done.list, done.result, done.backup)
    };
    let mut human = if report.is_empty() {
        "黑名单已是最新的种子，无需升级。\n".to_string()
    } else {
        format!(
            "{}黑名单升级：新增 {} 条、移除 {} 条种子短语，新增句式 {} 条。\n",
            if dry_run { "（预览）" } else { "" },
            report.added.len(),
            report.removed.len(),
            report.patterns_added.len()
        )
    };
    for (label, items) in [
        ("新增", &report.added),
        ("移除（种子已不再收录）", &report.removed),
        ("新增句式", &report.patterns_added),
        ("在白名单中、没有加入", &report.kept_out_by_whitelist),
    ] {
        if !items.is_empty() {
            human.push_str(&format!("  {label}：{}\n", items.join("、")));
        }
    }
    if let Some(b) = &backup {
        human.push_str(&format!("原文件备份在 {b}。\n"));
    }
    let data = Upgraded {
        dry_run,
        written: !dry_run && !report.is_empty(),
        backup,
        file: layout::AI_BLACKLIST,
        upgrade: &report,
        entries: list.entries.len(),
    };
    Report::new(&data, human)
}

fn new_entry(a: AddArgs) -> NewEntry {
    NewEntry {
        phrase: a.phrase,
        category: a.category,
        category_name: a.category_name,
        narration_only: a.narration_only,
        paragraph_start_only: a.paragraph_start_only,
        replacements: a.replacements,
        source: match a.source {
            SourceArg::User => EntrySource::User,
            SourceArg::Judge => EntrySource::Judge,
        },
        evidence: a.evidence,
    }
}

fn failure(e: EditFailure<EditError>) -> CliError {
    match e {
        EditFailure::Store(e) => e.into(),
        EditFailure::Lock(e) => super::lock_error(e),
        EditFailure::Refused(e) => CliError::new(e.code, e.message, e.hint, Exit::Usage),
    }
}
