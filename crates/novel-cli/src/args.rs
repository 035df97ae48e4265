//! The clap arguments the subcommands take — the global options, the chapter selection, the
//! argument types of the commands defined in `main.rs` — and the Chinese help frame. The
//! command tree itself (`crate::cli`) is built from these and from each command's own
//! arguments. All help text is Chinese.
//!
//! Layer: ground — below the commands.

use std::path::PathBuf;

use clap::builder::BoolishValueParser;
use clap::{ArgAction, Args, Command as ClapCommand, Subcommand};

pub(crate) const HELP_TEMPLATE: &str = "\
{before-help}{about-with-newline}
用法：{usage}

{all-args}{after-help}";

/// novel —— 网文长篇创作插件的确定性助手：状态、校验、事务、统计都由它计算。
#[derive(Debug, Args)]
pub struct GlobalArgs {
    /// 输出一个 JSON 文档（供技能解析），错误也不例外
    #[arg(
        long,
        global = true,
        value_name = "是否",
        num_args = 0..=1,
        require_equals = true,
        default_value = "false",
        default_missing_value = "true",
        value_parser = BoolishValueParser::new(),
        action = ArgAction::Set,
        hide_default_value = true,
        hide_possible_values = true
    )]
    pub json: bool,
    /// 项目目录（默认从当前目录向上查找 .checkpoint.json）
    #[arg(long, global = true, value_name = "目录")]
    pub project: Option<PathBuf>,
    /// 显示帮助
    #[arg(short = 'h', long, action = ArgAction::Help, global = true)]
    pub help: Option<bool>,
    /// 显示版本
    #[arg(short = 'V', long, action = ArgAction::Version)]
    pub version: Option<bool>,
}

/// Which chapter files a text command reads.
#[derive(Debug, Clone, Default, Args)]
pub struct ChapterSelection {
    /// 章节文件（默认：正在写的章节，即 staging/chapters/ 中断点 inflight_chapter 那一章）
    #[arg(value_name = "文件", help_heading = "参数")]
    pub files: Vec<PathBuf>,
    /// 第 N 章（chapters/chapter-NNN.md；未提交时用 staging 中的稿子）
    #[arg(long, value_name = "N", conflicts_with_all = ["files", "all"])]
    pub chapter: Option<u32>,
    /// 全部已提交章节（chapters/ 下的 chapter-NNN.md）
    #[arg(long, conflicts_with = "files")]
    pub all: bool,
}

impl ChapterSelection {
    /// The store's selection: files, else `--chapter`, else `--all`, else the chapter in flight.
    pub fn selection(&self) -> novel_store::select::Selection<'_> {
        use novel_store::select::Selection;
        if !self.files.is_empty() {
            Selection::Files(&self.files)
        } else if let Some(n) = self.chapter {
            Selection::Chapter(n)
        } else if self.all {
            Selection::All
        } else {
            Selection::InFlight
        }
    }
}

#[derive(Debug, Args)]
pub struct InitArgs {
    /// 项目目录（默认当前目录；不存在则创建，已有项目则拒绝）
    #[arg(value_name = "目录", help_heading = "参数")]
    pub dir: Option<PathBuf>,
    /// 书名
    #[arg(long, value_name = "书名")]
    pub title: Option<String>,
    /// 题材（如 玄幻、都市、悬疑）
    #[arg(long, value_name = "题材")]
    pub genre: Option<String>,
    /// 以预置风格模板作为初始风格指纹：qingsong-youmo 轻松幽默、rexue-shaonian 热血少年、xini-yanqing 细腻言情、lengjun-xuanyi 冷峻悬疑、gufeng-quanmou 古风权谋
    #[arg(long, value_name = "预设")]
    pub style: Option<String>,
}

#[derive(Debug, Args)]
pub struct ValidateArgs {
    /// 只校验这些文件或目录（默认整个项目）
    #[arg(value_name = "路径", help_heading = "参数")]
    pub paths: Vec<PathBuf>,
    /// 文件不在项目中时，按此类型校验（如 state-delta、chapter-contract）
    #[arg(long, value_name = "类型")]
    pub kind: Option<String>,
}

#[derive(Debug, Args)]
pub struct HelpArgs {
    /// 命令名（省略则显示总览）
    #[arg(value_name = "命令", help_heading = "参数")]
    pub command: Vec<String>,
}

/// clap writes a few fixed English words into usage lines and value notes; say them in
/// Chinese. A value note may be wrapped right after its colon (`[default:` at a line's end, the
/// value on the next line) when the help text before it fills the line.
pub fn localize_help(text: &str) -> String {
    // clap ends a section heading with an ASCII colon; the rest of the help uses full-width.
    let text: String = text
        .split_inclusive('\n')
        .map(|line| match line.trim_end() {
            "命令:" | "选项:" | "参数:" => line.replacen(':', "：", 1),
            _ => line.to_string(),
        })
        .collect();
    let mut out = text
        .replace("[OPTIONS]", "[选项]")
        .replace("<COMMAND>", "<命令>")
        .replace("[COMMAND]", "[命令]");
    for (en, zh) in [
        ("[default:", "[默认："),
        ("[possible values:", "[可选值："),
        ("[aliases:", "[别名："),
        ("[env:", "[环境变量："),
    ] {
        out = out
            .replace(&format!("{en} "), zh)
            .replace(&format!("{en}\n"), &format!("{zh}\n"));
    }
    out
}

/// Gives a subcommand, and every subcommand below it, the Chinese help frame: the template,
/// the section headings, and a heading for every argument that lacks one. Applied to the whole
/// tree from [`Cli`](crate::cli::Cli), so a command added (or hidden) without the attributes is Chinese too.
pub fn localize_command(cmd: ClapCommand) -> ClapCommand {
    // No wrapping: clap breaks lines only at spaces, which Chinese text has one of at most, so
    // its wrapping cuts a sentence at an arbitrary word. The terminal wraps by character.
    cmd.help_template(HELP_TEMPLATE)
        .term_width(0)
        .subcommand_help_heading("命令")
        .subcommand_value_name("命令")
        .mut_args(|arg| {
            if arg.get_help_heading().is_some() {
                arg
            } else if arg.is_positional() {
                arg.help_heading("参数")
            } else {
                arg.help_heading("选项")
            }
        })
        .mut_subcommands(localize_command)
}

#[derive(Debug, Subcommand)]
pub enum OpsCommand {
    /// 逐条校验摘要员的状态增量（不写任何文件）；有被拒的 op 时退出码 1
    #[command(help_template = HELP_TEMPLATE, next_help_heading = "选项")]
    Validate(OpsFileArgs),
    /// 合并状态增量：校验版本、应用通过的 op、合并伏笔、state_version +1、追加一行变更日志
    #[command(help_template = HELP_TEMPLATE, next_help_heading = "选项")]
    Apply(OpsApplyArgs),
    /// 记录某章的增量因两次无法解析而跳过；累计 3 章以上建议重建状态
    #[command(help_template = HELP_TEMPLATE, next_help_heading = "选项")]
    Skip(OpsSkipArgs),
}

#[derive(Debug, Args)]
pub struct OpsFileArgs {
    /// 增量文件（如 staging/state/chapter-048-delta.json）
    #[arg(value_name = "文件", help_heading = "参数")]
    pub file: PathBuf,
    /// 严格模式：任何一条 op 被拒，整个增量都不应用
    #[arg(long)]
    pub strict: bool,
}

#[derive(Debug, Args)]
pub struct OpsApplyArgs {
    #[command(flatten)]
    pub file: OpsFileArgs,
    /// 记为作者手动修改（source: manual），如第 0 章的初始角色状态
    #[arg(long)]
    pub manual: bool,
    /// 这份手动增量从正文重新提取、补上了哪些被跳过章节的状态变化（逗号分隔，可写范围，如 5,6,7 或 5..7）：
    /// 它们不再计入跳过数；需与 --manual 同用
    #[arg(long, value_name = "章,…", value_delimiter = ',', requires = "manual", value_parser = chapter_span)]
    pub resolves_skipped: Vec<ChapterSpan>,
}

#[derive(Debug, Args)]
pub struct OpsSkipArgs {
    /// 被跳过的章节号
    #[arg(long, value_name = "章", value_parser = chapter_number)]
    pub chapter: u32,
    /// 跳过原因（如两次解析失败的错误信息）
    #[arg(long, value_name = "原因", value_parser = reason_text)]
    pub reason: String,
}

#[derive(Debug, Subcommand)]
pub enum StateCommand {
    /// 从 state/changelog.jsonl 回放重建 current-state.json 与伏笔状态，并报告与磁盘的差异
    #[command(help_template = HELP_TEMPLATE, next_help_heading = "选项")]
    Rebuild(RebuildArgs),
    /// 某章完成后的状态（可只看一个实体）
    #[command(help_template = HELP_TEMPLATE, next_help_heading = "选项")]
    At(StateAtArgs),
    /// 一个角色/物品/地点/伏笔逐章的变更记录
    #[command(help_template = HELP_TEMPLATE, next_help_heading = "选项")]
    History(StateHistoryArgs),
}

#[derive(Debug, Args)]
pub struct RebuildArgs {
    /// 只回放到第 N 章（含）：用于改稿后从该章之前重新应用
    #[arg(long, value_name = "章", value_parser = chapter_number)]
    pub until_chapter: Option<u32>,
    /// 用重建结果替换磁盘文件（旧文件先备份到 state/backups/）；配合 --until-chapter 时，变更日志也截到第 N 章
    #[arg(long)]
    pub write: bool,
}

#[derive(Debug, Args)]
pub struct StateAtArgs {
    /// 章节号
    #[arg(long, value_name = "章", value_parser = chapter_number)]
    pub chapter: u32,
    /// 实体：slug（如 lin-feng），或角色的显示名、别名（如 林枫）
    #[arg(long, value_name = "实体")]
    pub entity: Option<String>,
}

#[derive(Debug, Args)]
pub struct StateHistoryArgs {
    /// 实体：slug（如 lin-feng）、角色的显示名或别名（如 林枫），或伏笔 id
    #[arg(long, value_name = "实体")]
    pub entity: String,
}

#[derive(Debug, Subcommand)]
pub enum ChapterCommand {
    /// 开始（或恢复）第 N 章：只能是下一章或在写的章节；取得项目锁，进入写初稿阶段
    #[command(help_template = HELP_TEMPLATE, next_help_heading = "选项")]
    Begin(ChapterBeginArgs),
    /// 推进流水线阶段（初稿完成、润色完成、评估完成、二次润色完成，或转入修订、重写），先检查 staging 文件
    #[command(help_template = HELP_TEMPLATE, next_help_heading = "选项")]
    Stage(ChapterStageArgs),
    /// 质量门控：按权重重算总分，双轨判定 pass/polish/revise/pause/rewrite
    #[command(help_template = HELP_TEMPLATE, next_help_heading = "选项")]
    Gate(ChapterGateArgs),
    /// 原子提交第 N 章（先写日志再落盘，任何时刻中断都可由 recover 补完）
    #[command(help_template = HELP_TEMPLATE, next_help_heading = "选项")]
    Commit(ChapterCommitArgs),
    /// 中断后恢复：补完未完成的提交、清理僵尸锁，并说明从哪一步继续
    #[command(help_template = HELP_TEMPLATE, next_help_heading = "选项")]
    Recover,
    /// 在写的章节出错：记下原因，进入「出错待重试」并释放锁（staging 不动）；之后 novel chapter begin N 从出错处继续
    #[command(help_template = HELP_TEMPLATE, next_help_heading = "选项")]
    Fail(ChapterFailArgs),
}

#[derive(Debug, Args)]
pub struct ChapterFailArgs {
    /// 章节号（必须是在写的章节）
    #[arg(value_name = "章", help_heading = "参数", value_parser = chapter_number)]
    pub chapter: u32,
    /// chapter begin 给出的锁令牌（省略时用本会话持有的锁：只有开始这一章的会话能推进它）
    #[arg(long, value_name = "令牌")]
    pub token: Option<String>,
    /// 出错原因（作者可读，如「润色编辑两次超时」）
    #[arg(long, value_name = "原因", value_parser = reason_text)]
    pub reason: String,
}

#[derive(Debug, Args)]
pub struct ChapterBeginArgs {
    /// 章节号
    #[arg(value_name = "章", help_heading = "参数", value_parser = chapter_number)]
    pub chapter: u32,
    /// 流水线所属进程（默认：调用者所在的会话进程）
    #[arg(long, value_name = "PID")]
    pub owner_pid: Option<u32>,
}

#[derive(Debug, Args)]
pub struct ChapterStageArgs {
    /// 目标阶段：drafted、refined、judged、polished（门控 polish 后二次润色完成）、revising（门控 revise）、drafting（重写）、repairing（门控只因开篇或章末退回：局部修补）、repaired（修补稿已写好，程序把它放进正文）
    #[arg(value_name = "阶段", help_heading = "参数")]
    pub stage: String,
    /// chapter begin 给出的锁令牌（省略时用本会话持有的锁：只有开始这一章的会话能推进它）
    #[arg(long, value_name = "令牌")]
    pub token: Option<String>,
    /// 本阶段所用模型（写入流水线日志）
    #[arg(long, value_name = "模型")]
    pub model: Option<String>,
    /// 本阶段输入 token 数
    #[arg(long, value_name = "数")]
    pub input_tokens: Option<u64>,
    /// 本阶段输出 token 数
    #[arg(long, value_name = "数")]
    pub output_tokens: Option<u64>,
    /// 本阶段耗时（毫秒）
    #[arg(long, value_name = "毫秒")]
    pub duration_ms: Option<u64>,
    /// 本阶段费用（美元）
    #[arg(long, value_name = "美元")]
    pub cost_usd: Option<f64>,
    /// 本阶段用掉的 token 总数（Agent 结果只给一个总数时用它，不必拆成输入与输出）
    #[arg(long, value_name = "数")]
    pub tokens: Option<u64>,
    /// 这一轮修订或重写是作者的决定（门控暂停后，或作者不按门控的结论另选）：记进流水线日志，受 gate.max_author_revisions 限制
    #[arg(long)]
    pub by_author: bool,
    /// 作者的话（随 --by-author 记进流水线日志）
    #[arg(long, value_name = "文本", requires = "by_author")]
    pub note: Option<String>,
}

#[derive(Debug, Args)]
pub struct ChapterGateArgs {
    /// 章节号
    #[arg(value_name = "章", help_heading = "参数", value_parser = chapter_number)]
    pub chapter: u32,
    /// chapter begin 给出的锁令牌（省略时用本会话持有的锁：只有开始这一章的会话能推进它）
    #[arg(long, value_name = "令牌")]
    pub token: Option<String>,
    /// 门控结论为 pass（含强制通过）时紧接着原子提交本章，省去单独一次 chapter commit；其他结论照常只给结论
    #[arg(long)]
    pub commit: bool,
}

#[derive(Debug, Args)]
pub struct ChapterCommitArgs {
    /// 章节号
    #[arg(value_name = "章", help_heading = "参数", value_parser = chapter_number)]
    pub chapter: u32,
    /// chapter begin 给出的锁令牌（省略时用本会话持有的锁：只有开始这一章的会话能推进它）
    #[arg(long, value_name = "令牌")]
    pub token: Option<String>,
    /// 作者明确接受门控暂停（pause）或待二次润色（polish）的章节，按现稿提交
    #[arg(long)]
    pub accept: bool,
}

#[derive(Debug, Subcommand)]
pub enum LockCommand {
    /// 查看锁的状态（空闲、被持有、僵尸锁）
    #[command(help_template = HELP_TEMPLATE, next_help_heading = "选项")]
    Status,
    /// 获取锁（僵尸锁会先被安全清除）
    #[command(help_template = HELP_TEMPLATE, next_help_heading = "选项")]
    Acquire(LockAcquireArgs),
    /// 释放锁（只有持有者的令牌可以）
    #[command(help_template = HELP_TEMPLATE, next_help_heading = "选项")]
    Release(LockReleaseArgs),
    /// 作者强制清除锁，并说明清除了什么
    #[command(help_template = HELP_TEMPLATE, next_help_heading = "选项")]
    Clear,
}

#[derive(Debug, Args)]
pub struct LockAcquireArgs {
    /// 锁对应的章节号
    #[arg(long, value_name = "章", value_parser = chapter_number)]
    pub chapter: Option<u32>,
    /// 持有进程（默认：调用者所在的会话进程）
    #[arg(long, value_name = "PID")]
    pub owner_pid: Option<u32>,
}

#[derive(Debug, Args)]
pub struct LockReleaseArgs {
    /// 获取锁时得到的令牌（省略时释放本会话持有的锁）
    #[arg(long, value_name = "令牌")]
    pub token: Option<String>,
}

/// A chapter number on the command line: 0 ..= `MAX_CHAPTER`.
pub(crate) fn chapter_number(s: &str) -> Result<u32, String> {
    let max = novel_core::model::common::MAX_CHAPTER;
    let t = s.trim();
    if t.is_empty() || !t.bytes().all(|b| b.is_ascii_digit()) {
        return Err(format!("章节号应为 0–{max} 的整数，而不是「{s}」"));
    }
    match t.parse::<u32>() {
        Ok(n) if n <= max => Ok(n),
        _ => Err(format!("章节号「{s}」超出范围：应为 0–{max} 的整数")),
    }
}

/// A reason the author will read later (`chapter fail`, `ops skip`): not blank, trimmed.
pub(crate) fn reason_text(s: &str) -> Result<String, String> {
    match s.trim() {
        "" => Err("原因不能为空：写明出了什么错，如「润色编辑两次超时」".to_string()),
        t => Ok(t.to_string()),
    }
}

/// One chapter (`5`) or an inclusive range (`5..7`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ChapterSpan(pub u32, pub u32);

impl ChapterSpan {
    pub fn chapters(self) -> std::ops::RangeInclusive<u32> {
        self.0..=self.1
    }
}

pub(crate) fn chapter_span(s: &str) -> Result<ChapterSpan, String> {
    match s.split_once("..") {
        None => chapter_number(s).map(|n| ChapterSpan(n, n)),
        Some((a, b)) => {
            let (a, b) = (chapter_number(a)?, chapter_number(b)?);
            if a > b {
                return Err(format!("章节范围「{s}」的起点大于终点"));
            }
            Ok(ChapterSpan(a, b))
        }
    }
}
