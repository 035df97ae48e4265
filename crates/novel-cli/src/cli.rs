//! The command tree (clap): the global options and every subcommand, each with its arguments
//! (from [`crate::args`] or the command's own module). All help text is Chinese.
//!
//! Layer: tree — the top: it names every command's arguments.

use clap::{Parser, Subcommand};

use crate::args::{
    ChapterCommand, GlobalArgs, HELP_TEMPLATE, HelpArgs, InitArgs, LockCommand, OpsCommand,
    StateCommand, ValidateArgs, localize_command,
};

#[derive(Debug, Parser)]
#[command(
    name = "novel",
    version,
    help_template = HELP_TEMPLATE,
    term_width = 0,
    disable_help_flag = true,
    disable_version_flag = true,
    disable_help_subcommand = true,
    subcommand_help_heading = "命令",
    subcommand_value_name = "命令",
    next_help_heading = "选项",
    after_help = "用 novel help <命令> 查看某个命令的说明。退出码：0 成功；1 检查发现问题；2 用法或项目错误；3 冲突（锁被占用、版本不符、章节顺序不对）。",
    mut_subcommands = localize_command
)]
pub struct Cli {
    #[command(flatten)]
    pub global: GlobalArgs,
    #[command(subcommand)]
    pub command: Option<Command>,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// 新建小说项目（目录结构、模板、断点、默认故事线与规范）
    #[command(help_template = HELP_TEMPLATE, next_help_heading = "选项")]
    Init(InitArgs),
    /// 校验整个项目或指定文件：格式、必填字段、编号与引用
    #[command(help_template = HELP_TEMPLATE, next_help_heading = "选项")]
    Validate(ValidateArgs),
    /// 状态增量：逐条校验、合并、记录跳过（摘要员的输出由它落盘）
    #[command(subcommand, help_template = HELP_TEMPLATE, subcommand_help_heading = "命令", subcommand_value_name = "命令")]
    Ops(OpsCommand),
    /// 全局状态：从变更日志重建、查看某章时的状态、查看某个实体的变更史
    #[command(subcommand, help_template = HELP_TEMPLATE, subcommand_help_heading = "命令", subcommand_value_name = "命令")]
    State(StateCommand),
    /// 章节事务：开始、推进阶段、质量门控、原子提交、中断恢复
    #[command(subcommand, help_template = HELP_TEMPLATE, subcommand_help_heading = "命令", subcommand_value_name = "命令")]
    Chapter(ChapterCommand),
    /// 项目锁（.novel.lock）：查看、获取、释放、强制清除
    #[command(subcommand, help_template = HELP_TEMPLATE, subcommand_help_heading = "命令", subcommand_value_name = "命令")]
    Lock(LockCommand),
    /// AI 痕迹检查：黑名单套话、结构句式、句式重复，对照阈值给出通过/未通过
    #[command(help_template = HELP_TEMPLATE, next_help_heading = "选项")]
    Lint(crate::commands::lint::LintArgs),
    /// 统计字数（按平台算法），对照章节目标字数区间
    #[command(help_template = HELP_TEMPLATE, next_help_heading = "选项")]
    Count(crate::commands::count::CountArgs),
    /// 文风指标、风格漂移检测、预置风格模板
    #[command(subcommand, help_template = HELP_TEMPLATE, subcommand_help_heading = "命令", subcommand_value_name = "命令")]
    Style(crate::commands::style::StyleCommand),
    /// 维护 AI 用语黑名单：添加、删除、白名单
    #[command(subcommand, help_template = HELP_TEMPLATE, subcommand_help_heading = "命令", subcommand_value_name = "命令")]
    Blacklist(crate::commands::blacklist::BlacklistCommand),
    /// 一致性检查：人名变体、未登记人名、跨故事线串线、章节契约的衔接
    #[command(subcommand, help_template = HELP_TEMPLATE, subcommand_help_heading = "命令", subcommand_value_name = "命令")]
    Check(crate::commands::check::CheckCommand),
    /// 设定变更传播：更新设定前拍快照，更新后找出受影响的角色契约与章节契约
    #[command(subcommand, help_template = HELP_TEMPLATE, subcommand_help_heading = "命令", subcommand_value_name = "命令")]
    Spec(crate::commands::spec::SpecCommand),
    /// 断点中的待处理事项（如设定变更传播）：列出、关闭
    #[command(subcommand, help_template = HELP_TEMPLATE, subcommand_help_heading = "命令", subcommand_value_name = "命令")]
    Pending(crate::commands::pending::PendingCommand),
    /// 修订候选（manual_confirm）：本章的修订意见、保存候选、作者采纳或拒绝
    #[command(subcommand, help_template = HELP_TEMPLATE, subcommand_help_heading = "命令", subcommand_value_name = "命令")]
    Revision(crate::commands::revision::RevisionCommand),
    /// 作者偏好：添加、列出、删除（每章写作资料包都会带上）
    #[command(subcommand, help_template = HELP_TEMPLATE, subcommand_help_heading = "命令", subcommand_value_name = "命令")]
    Prefs(crate::commands::prefs::PrefsCommand),
    /// 放行设置：插件在作者的 Claude Code 用户设置里需要的放行规则，和本书 .claude/settings.local.json 里本书自己的设置（缺哪些；--write 经作者同意后写入）
    #[command(help_template = HELP_TEMPLATE, next_help_heading = "选项", after_help = "规则（写进 ~/.claude/settings.json，一两秒后生效，在任何目录都生效）：Bash(novel:*)（运行 novel 命令）、Read(//<插件目录>/**)（读插件的流程文件与模板）、Edit(//<会话目录>/**)（在启动 Claude Code 的目录里写文件，书就在那里或它的子目录；不放行主目录本身）、Skill(novel:*)（技能之间转交）。技能的 allowed-tools 只管输入斜杠命令的那一轮；作者用一句话接着答时，没有这些规则每一步都要确认（无头模式下被拒）。本书的设置（关掉写书用不到的客户端工具、对话模型、关掉自动记忆）写进书目录的 .claude/settings.local.json，下次启动生效。--write 保留文件里已有的设置，原子写入；文件不是合法的设置时两个文件都不改动（E_SETTINGS_LOCAL）。")]
    Permissions(crate::commands::permissions::PermissionsArgs),
    /// 模型组合：每个环节用哪个模型（novel.json 的 models）；--set 换成标准（设定、润色、重写用 Opus）或经济（全部 Sonnet）
    #[command(help_template = HELP_TEMPLATE, next_help_heading = "选项", after_help = "标准：设定三件（世界观、角色、大纲）、润色、修订与重写、关键章复核用 Opus，其余用 Sonnet。经济：全部 Sonnet，每章约省一半，代价是润色去 AI 味没那么细、关键章复核不再换一个模型、修订不用 Opus。主对话（main）的模型由放行设置写进 .claude/settings.local.json 的 model，下次启动 Claude Code 时生效。")]
    Models(crate::commands::models::ModelsArgs),
    /// 角色记忆：建档记录与逐章行为（章节提交时追加）
    #[command(subcommand, help_template = HELP_TEMPLATE, subcommand_help_heading = "命令", subcommand_value_name = "命令")]
    Memory(crate::commands::memory::MemoryCommand),
    /// 角色退场：三条退场保护检查（A 伏笔 / B 故事线 / C 交汇事件）与执行退场
    #[command(subcommand, help_template = HELP_TEMPLATE, subcommand_help_heading = "命令", subcommand_value_name = "命令")]
    Retire(crate::commands::retire::RetireCommand),
    /// 上下文：SessionStart 钩子、每个 agent 的资料包及其 token 预算
    #[command(subcommand, help_template = HELP_TEMPLATE, subcommand_help_heading = "命令", subcommand_value_name = "命令")]
    Context(crate::commands::context::ContextCommand),
    /// 只读状态：一行总览，状态机与阶段、字数、评分与趋势、故事线节奏、伏笔、待处理事项、锁、费用；文件有问题时列出并以退出码 1 结束
    #[command(help_template = HELP_TEMPLATE, next_help_heading = "选项")]
    Status,
    /// 仪表盘：把进度、评分、故事线、伏笔、角色出场、费用与文风画成一个独立的 HTML 文件（内嵌图表，不联网），用浏览器打开
    #[command(help_template = HELP_TEMPLATE, next_help_heading = "选项")]
    Dashboard(crate::commands::dashboard::DashboardArgs),
    /// 下一步做什么与 /novel:start 的菜单：由断点、锁、staging、待处理事项与待做的回顾推出（项目外也可用）
    #[command(help_template = HELP_TEMPLATE, next_help_heading = "选项")]
    Next,
    /// 快速起步的步骤：查看进度、标记完成（done）或取消标记（undo）
    #[command(help_template = HELP_TEMPLATE, next_help_heading = "选项")]
    Quickstart(crate::commands::quickstart::QuickstartArgs),
    /// 卷的循环：卷规划检查、开卷、收卷（存档最终状态、卷末清理建议）、确认后清理
    #[command(subcommand, help_template = HELP_TEMPLATE, subcommand_help_heading = "命令", subcommand_value_name = "命令")]
    Volume(crate::commands::volume::VolumeCommand),
    /// 定期回顾：每 5 章质量简报、每 10 章一致性检查、卷末回顾，报告写入 logs/reviews/
    #[command(subcommand, help_template = HELP_TEMPLATE, subcommand_help_heading = "命令", subcommand_value_name = "命令")]
    Review(crate::commands::review::ReviewCommand),
    /// 导出已提交的章节：txt（平台发布）、epub（电子书）、md（合并的 Markdown）
    #[command(help_template = HELP_TEMPLATE, next_help_heading = "选项")]
    Export(crate::commands::export::ExportArgs),
    /// 导入已有书稿（一个 txt/md 文件或章节文件夹）：识别编码与章节，先试运行核对，再写成已提交的章节
    #[command(help_template = HELP_TEMPLATE, next_help_heading = "选项")]
    Import(crate::commands::import::ImportArgs),
    /// 示例：把随程序附带的示例书写到一个目录，演示状态、下一步、AI 痕迹检查、人名检查与写作资料包
    #[command(help_template = HELP_TEMPLATE, next_help_heading = "选项")]
    Demo(crate::commands::demo::DemoArgs),
    /// 显示某个命令的说明
    #[command(help_template = HELP_TEMPLATE, next_help_heading = "选项")]
    Help(HelpArgs),
    /// 守护钩子（hooks/hooks.json 调用，不必手动运行）：写文件前拒绝直接改程序维护的文件，写文件后校验刚写入的项目文件
    #[command(subcommand, hide = true, help_template = HELP_TEMPLATE, subcommand_help_heading = "命令", subcommand_value_name = "命令")]
    Hook(crate::commands::hook::HookCommand),
}
