//! Argument definitions (clap), kept apart from the work. All help text is Chinese.

use std::path::PathBuf;

use clap::{ArgAction, Args, Parser, Subcommand};

const HELP_TEMPLATE: &str = "\
{before-help}{about-with-newline}
用法：{usage}

{all-args}{after-help}";

/// novel —— 网文长篇创作插件的确定性助手：状态、校验、事务、统计都由它计算。
#[derive(Debug, Parser)]
#[command(
    name = "novel",
    version,
    help_template = HELP_TEMPLATE,
    disable_help_flag = true,
    disable_version_flag = true,
    disable_help_subcommand = true,
    subcommand_help_heading = "命令",
    subcommand_value_name = "命令",
    next_help_heading = "选项",
    after_help = "用 novel help <命令> 查看某个命令的说明。退出码：0 成功；1 检查发现问题；2 用法或项目错误；3 冲突（锁被占用、版本不符、章节顺序不对）。"
)]
pub struct Cli {
    #[command(flatten)]
    pub global: GlobalArgs,
    #[command(subcommand)]
    pub command: Option<Command>,
}

#[derive(Debug, Args)]
pub struct GlobalArgs {
    /// 输出一个 JSON 文档（供技能解析），错误也不例外
    #[arg(long, global = true)]
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

#[derive(Debug, Subcommand)]
pub enum Command {
    /// 新建小说项目（PRD §9.1 目录结构、模板、断点、默认故事线与规范）
    #[command(help_template = HELP_TEMPLATE, next_help_heading = "选项")]
    Init(InitArgs),
    /// 校验整个项目或指定文件：格式、必填字段、编号与引用
    #[command(help_template = HELP_TEMPLATE, next_help_heading = "选项")]
    Validate(ValidateArgs),
    /// 显示某个命令的说明
    #[command(help_template = HELP_TEMPLATE, next_help_heading = "选项")]
    Help(HelpArgs),
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

/// clap writes a few fixed English words into usage lines; say them in Chinese.
pub fn localize_help(text: &str) -> String {
    text.replace("[OPTIONS]", "[选项]")
        .replace("<COMMAND>", "<命令>")
        .replace("[COMMAND]", "[命令]")
}
