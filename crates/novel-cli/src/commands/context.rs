//! `novel context session-start|budget|<agent>`: the SessionStart hook and the packet each agent
//! is handed (see `docs/context-packets.md`).
//!
//! `session-start` never fails the session: outside a novel project it prints nothing; any
//! error becomes one Chinese line on stdout with exit 0; it works with stdin absent, empty
//! or garbage; it loads no segmenter and compiles no JSON Schema.

use std::io::{IsTerminal, Read};
use std::path::{Path, PathBuf};
use std::time::Duration;

use clap::{Args, Subcommand};
use serde::Serialize;
use serde_json::Value;

use novel_core::context::session::SessionFacts;
use novel_core::context::{self, Agent, BudgetRow, ContextError, session};
use novel_core::next::Recommendation;
use novel_store::context::{load_inputs, session_start};
use novel_store::synth::{SynthOptions, synth_project};
use novel_store::{Project, StoreError};

use crate::cli::GlobalArgs;
use crate::installed::VersionMismatch;
use crate::output::{CliError, Exit, Report, to_data};

use crate::cli::HELP_TEMPLATE;

/// `novel context …`.
#[derive(Debug, Subcommand)]
pub enum ContextCommand {
    /// SessionStart 钩子：项目进度、需要先处理的事项、最近 3 章摘要与建议的下一步（读取钩子的 stdin JSON；不在小说项目中时不输出；出错也只输出一行说明，退出码 0）
    #[command(help_template = HELP_TEMPLATE, next_help_heading = "选项")]
    SessionStart,
    /// 列出每个 agent 资料包各段的估算 token、预算与裁剪结果
    #[command(help_template = HELP_TEMPLATE, next_help_heading = "选项")]
    Budget(BudgetArgs),
    /// ChapterWriter 的资料包：当前故事线记忆在前，本章大纲、L3 契约、L1 禁止项、在场角色的 L2 契约、伏笔任务、近 3 章摘要、状态、风格与黑名单、作者偏好
    #[command(help_template = HELP_TEMPLATE, next_help_heading = "选项")]
    ChapterWriter(PacketArgs),
    /// Summarizer 的资料包：本线记忆、章节正文、实体 id 对照、伏笔任务、在场角色的当前状态与 state_version
    #[command(help_template = HELP_TEMPLATE, next_help_heading = "选项")]
    Summarizer(PacketArgs),
    /// StyleRefiner 的资料包：初稿、风格指纹、漂移纠偏指令、完整的 AI 用语黑名单
    #[command(help_template = HELP_TEMPLATE, next_help_heading = "选项")]
    StyleRefiner(PacketArgs),
    /// QualityJudge 的资料包：正文、本章大纲、L1/L2/L3 与 LS 规范、本卷调度、前一章摘要、风格
    #[command(help_template = HELP_TEMPLATE, next_help_heading = "选项")]
    QualityJudge(PacketArgs),
    /// PlotArchitect 的资料包：大纲格式、创作纲领、故事线、全局伏笔、上卷回顾、世界观与角色
    #[command(help_template = HELP_TEMPLATE, next_help_heading = "选项")]
    PlotArchitect(PacketArgs),
    /// WorldBuilder 的资料包：创作纲领、L1 规则、世界观文档、故事线、研究资料清单
    #[command(help_template = HELP_TEMPLATE, next_help_heading = "选项")]
    WorldBuilder(PacketArgs),
    /// CharacterWeaver 的资料包：世界观、全部活跃角色档案、关系、已退场角色、故事线
    #[command(help_template = HELP_TEMPLATE, next_help_heading = "选项")]
    CharacterWeaver(PacketArgs),
    /// StyleAnalyzer 的资料包：现有风格指纹、黑名单类别、创作纲领
    #[command(help_template = HELP_TEMPLATE, next_help_heading = "选项")]
    StyleAnalyzer(PacketArgs),
    /// （开发用）生成一个 N 章的合成项目
    #[command(hide = true)]
    Synth(SynthArgs),
}

impl ContextCommand {
    /// The command name for the JSON envelope.
    pub fn name(&self) -> &'static str {
        match self {
            ContextCommand::SessionStart => "context session-start",
            ContextCommand::Budget(_) => "context budget",
            ContextCommand::ChapterWriter(_) => "context chapter-writer",
            ContextCommand::Summarizer(_) => "context summarizer",
            ContextCommand::StyleRefiner(_) => "context style-refiner",
            ContextCommand::QualityJudge(_) => "context quality-judge",
            ContextCommand::PlotArchitect(_) => "context plot-architect",
            ContextCommand::WorldBuilder(_) => "context world-builder",
            ContextCommand::CharacterWeaver(_) => "context character-weaver",
            ContextCommand::StyleAnalyzer(_) => "context style-analyzer",
            ContextCommand::Synth(_) => "context synth",
        }
    }
}

#[derive(Debug, Args)]
pub struct PacketArgs {
    /// 章节号（默认：在写的章节，否则下一章）
    #[arg(long, value_name = "章", value_parser = clap::value_parser!(u32).range(1..))]
    pub chapter: Option<u32>,
    /// 卷号（默认：本卷调度的章节范围包含该章的卷，否则当前卷）
    #[arg(long, value_name = "卷", value_parser = clap::value_parser!(u32).range(1..))]
    pub volume: Option<u32>,
    /// 本次 agent 调用的总预算（token，含 agent 提示词预留）；默认取 novel.json 的 context_budgets
    #[arg(long, value_name = "TOKENS")]
    pub budget: Option<u32>,
}

#[derive(Debug, Args)]
pub struct BudgetArgs {
    /// 章节号（默认：在写的章节，否则下一章）
    #[arg(long, value_name = "章", value_parser = clap::value_parser!(u32).range(1..))]
    pub chapter: Option<u32>,
    /// 卷号（默认同上）
    #[arg(long, value_name = "卷", value_parser = clap::value_parser!(u32).range(1..))]
    pub volume: Option<u32>,
}

#[derive(Debug, Args)]
pub struct SynthArgs {
    /// 目标目录（不能已是项目）
    #[arg(value_name = "目录")]
    pub dir: PathBuf,
    /// 已完成的章数
    #[arg(long, value_name = "章", default_value_t = 30)]
    pub chapters: u32,
    /// 每卷章数
    #[arg(long, value_name = "章", default_value_t = 50)]
    pub per_volume: u32,
    /// 每章正文字数
    #[arg(long, value_name = "字", default_value_t = 3000)]
    pub chapter_chars: usize,
    /// 写入生效中的风格漂移
    #[arg(long)]
    pub style_drift: bool,
    /// 写入仪表盘用的写作历史：每章评估、按天推进的日期、正文里点到出场角色
    #[arg(long)]
    pub history: bool,
}

/// `novel context budget`'s `--json` data.
#[derive(Serialize)]
struct BudgetData<'a> {
    agents: &'a [BudgetRow],
}

/// `novel context synth`'s `--json` data.
#[derive(Serialize)]
struct SynthData<'a> {
    root: &'a Path,
    chapters: u32,
    next_chapter: u32,
    volume: u32,
}

/// `novel context session-start`'s `--json` data in a project.
#[derive(Serialize)]
struct SessionData<'a> {
    project: &'a Path,
    text: &'a str,
    recommendation: &'a Option<Recommendation>,
    facts: &'a SessionFacts,
}

/// `session-start`'s `--json` data outside a project (`project` null), and, with the one
/// line shown instead, when it failed.
#[derive(Serialize)]
struct SessionFailure<'a> {
    project: Option<&'a Path>,
    #[serde(skip_serializing_if = "Option::is_none")]
    text: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<&'a str>,
}

/// Claude Code's SessionStart hook output.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct HookOutput<'a> {
    system_message: &'a str,
    hook_specific_output: HookSpecificOutput<'a>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct HookSpecificOutput<'a> {
    hook_event_name: &'a str,
    additional_context: &'a str,
}

pub fn run(global: &GlobalArgs, cmd: ContextCommand) -> Result<Report, CliError> {
    let (agent, args) = match cmd {
        ContextCommand::SessionStart => return Ok(session_start_guarded(global)),
        ContextCommand::Budget(a) => return budget(global, &a),
        ContextCommand::Synth(a) => return synth(&a),
        ContextCommand::ChapterWriter(a) => (Agent::ChapterWriter, a),
        ContextCommand::Summarizer(a) => (Agent::Summarizer, a),
        ContextCommand::StyleRefiner(a) => (Agent::StyleRefiner, a),
        ContextCommand::QualityJudge(a) => (Agent::QualityJudge, a),
        ContextCommand::PlotArchitect(a) => (Agent::PlotArchitect, a),
        ContextCommand::WorldBuilder(a) => (Agent::WorldBuilder, a),
        ContextCommand::CharacterWeaver(a) => (Agent::CharacterWeaver, a),
        ContextCommand::StyleAnalyzer(a) => (Agent::StyleAnalyzer, a),
    };
    packet(global, agent, &args)
}

fn context_error(e: ContextError) -> CliError {
    let exit = match e {
        ContextError::OverBudget { .. } => Exit::Problems,
        _ => Exit::Usage,
    };
    CliError::new(e.code(), e.to_string(), e.hint(), exit)
}

fn packet(global: &GlobalArgs, agent: Agent, args: &PacketArgs) -> Result<Report, CliError> {
    let project = super::project(global)?;
    let inputs = load_inputs(&project, agent, args.chapter, args.volume)?;
    let packet = context::build(agent, &inputs, args.budget).map_err(context_error)?;
    if !global.json {
        for w in &packet.warnings {
            crate::output::err(&format!("提示：{w}\n"));
        }
        if !packet.cut.is_empty() {
            crate::output::err(&format!(
                "提示：为符合预算裁去 {} 项：{}\n",
                packet.cut.len(),
                packet
                    .cut
                    .iter()
                    .map(|c| format!("{}（{} token）", c.label, c.tokens))
                    .collect::<Vec<_>>()
                    .join("、")
            ));
        }
    }
    Ok(Report {
        data: packet.to_json(),
        human: packet.render(),
    })
}

fn budget(global: &GlobalArgs, args: &BudgetArgs) -> Result<Report, CliError> {
    let project = super::project(global)?;
    let mut rows = Vec::new();
    let mut human = String::new();
    let mut header_done = false;
    for agent in Agent::ALL {
        let inputs = load_inputs(&project, agent, args.chapter, args.volume)?;
        if !header_done && agent.per_chapter() {
            human.push_str(&format!(
                "第 {} 章（第 {} 卷）各 agent 资料包的估算 token：\n",
                inputs.chapter, inputs.volume
            ));
            header_done = true;
        }
        let row = context::budget_row(agent, &inputs);
        human.push_str(&budget_line(agent, &row));
        rows.push(row);
    }
    Report::new(&BudgetData { agents: &rows }, human)
}

/// One agent's lines of `novel context budget`.
fn budget_line(agent: Agent, row: &context::BudgetRow) -> String {
    let p = match row {
        context::BudgetRow::Failed { error, .. } => {
            return format!("\n{:<16}无法组装：{}\n", agent.label(), error.message);
        }
        context::BudgetRow::Sized(p) => p,
    };
    let mut line = format!("\n{:<16}合计 {}", agent.label(), p.tokens);
    match &p.budget {
        Some(b) => {
            line.push_str(&format!(
                "｜上限 {}（预算 {} − 提示词预留 {}{}）",
                b.limit,
                b.total,
                b.prompt_allowance,
                if b.text_allowance > 0 {
                    format!(" ＋ 超出目标字数的正文 {}", b.text_allowance)
                } else {
                    String::new()
                }
            ));
            line.push_str(&if p.over_budget_after_trim {
                "｜裁剪后仍超出".to_string()
            } else if p.units_cut > 0 {
                format!(
                    "｜裁去 {} 项后 {}",
                    p.units_cut,
                    p.tokens_after_trim.unwrap_or(p.tokens)
                )
            } else {
                "｜在预算内".to_string()
            });
        }
        None => line.push_str("｜无默认预算"),
    }
    if p.convergence {
        line.push_str("｜交汇章");
    }
    line.push('\n');
    for s in &p.sections {
        line.push_str(&format!("  {:<20}{:>7}\n", s.tag, s.tokens));
    }
    line
}

fn synth(a: &SynthArgs) -> Result<Report, CliError> {
    let r = synth_project(
        &a.dir,
        &SynthOptions {
            chapters: a.chapters,
            per_volume: a.per_volume,
            chapter_chars: a.chapter_chars,
            style_drift: a.style_drift,
            history: a.history,
        },
    )?;
    let data = SynthData {
        root: &r.root,
        chapters: r.chapters,
        next_chapter: r.next_chapter,
        volume: r.volume,
    };
    Report::new(
        &data,
        format!(
            "已生成 {} 章的合成项目：{}（下一章第 {} 章，第 {} 卷）\n",
            r.chapters,
            r.root.display(),
            r.next_chapter,
            r.volume
        ),
    )
}

// ---- SessionStart -------------------------------------------------------------------------

/// The hook's stdin JSON, when there is one: (`cwd`, `source`).
fn hook_stdin() -> (Option<PathBuf>, Option<String>) {
    let stdin = std::io::stdin();
    if stdin.is_terminal() {
        return (None, None);
    }
    // Read on a helper thread so a stdin that is never closed cannot hang the session.
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut bytes = Vec::new();
        let _ = std::io::stdin().take(1 << 20).read_to_end(&mut bytes);
        let _ = tx.send(bytes);
    });
    let Ok(bytes) = rx.recv_timeout(Duration::from_millis(500)) else {
        return (None, None);
    };
    let Ok(v) = serde_json::from_slice::<Value>(&bytes) else {
        return (None, None);
    };
    let cwd = v
        .get("cwd")
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
        .map(PathBuf::from);
    let source = v
        .get("source")
        .and_then(Value::as_str)
        .map(|s| s.chars().take(20).collect());
    (cwd, source)
}

/// `session-start`'s data where it must not fail: a report of two strings always serialises
/// (the `null` fallback is never taken).
fn infallible(data: &impl Serialize) -> Value {
    to_data(data).unwrap_or_default()
}

fn silent() -> Report {
    let data = SessionFailure {
        project: None,
        text: None,
        error: None,
    };
    Report {
        data: infallible(&data),
        human: String::new(),
    }
}

fn failure(why: &str) -> Report {
    let line = session::failure_line(why);
    let data = SessionFailure {
        project: None,
        text: Some(&line),
        error: Some(why),
    };
    Report {
        data: infallible(&data),
        human: line,
    }
}

fn session_start_guarded(global: &GlobalArgs) -> Report {
    // A panic must not fail the session either: no panic message, one line instead.
    std::panic::set_hook(Box::new(|_| {}));
    let report = match std::panic::catch_unwind(|| session_start_inner(global)) {
        Ok(r) => r,
        Err(_) => failure("内部错误"),
    };
    match crate::installed::version_mismatch() {
        Some(m) => tell_the_author(report, &m),
        None => report,
    }
}

/// The hook's output when the author must be told something: a `systemMessage` shown to the
/// author, the facts for the model as `additionalContext` (Claude Code's hook JSON).
fn tell_the_author(report: Report, m: &VersionMismatch) -> Report {
    let message = format!("{}，或输入 /novel:start 让我来运行。", m.sentence());
    let mut context = report.human.clone();
    context.push_str(&format!(
        "\n【novel】程序版本 {} 与插件版本 {} 不一致：结果可能与技能说明不符，先请作者更新程序。",
        m.binary, m.plugin
    ));
    let out = HookOutput {
        system_message: &message,
        hook_specific_output: HookSpecificOutput {
            hook_event_name: "SessionStart",
            additional_context: context.trim(),
        },
    };
    let mut data = report.data;
    data["version_mismatch"] = infallible(m);
    Report {
        data,
        human: serde_json::to_string(&out).unwrap_or_default(),
    }
}

fn session_start_inner(global: &GlobalArgs) -> Report {
    let (cwd, source) = hook_stdin();
    let found = match &global.project {
        Some(dir) => Project::open(dir),
        None => {
            let start = cwd
                .or_else(|| std::env::var_os("CLAUDE_PROJECT_DIR").map(PathBuf::from))
                .or_else(|| std::env::current_dir().ok())
                .unwrap_or_else(|| Path::new(".").to_path_buf());
            Project::discover(&start)
        }
    };
    let project = match found {
        Ok(p) => p,
        Err(StoreError::NotAProject { .. }) => return silent(),
        Err(e) => return failure(&e.to_string()),
    };
    let s = session_start(&project, source);
    let data = SessionData {
        project: &project.root,
        text: &s.text,
        recommendation: &s.recommendation,
        facts: &s.facts,
    };
    match to_data(&data) {
        Ok(data) => Report {
            data,
            human: s.text,
        },
        Err(e) => failure(&e.message),
    }
}
