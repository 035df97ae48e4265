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
use novel_core::model::PipelineStage;
use novel_core::next::Recommendation;
use novel_core::pipeline;
use novel_store::context::{load_inputs, session_start};
use novel_store::synth::{SynthOptions, synth_project};
use novel_store::{Project, StoreError};

use crate::args::GlobalArgs;
use crate::installed::VersionMismatch;
use crate::output::{CliError, Exit, Report, to_data};

use crate::args::HELP_TEMPLATE;

/// `novel context …`.
#[derive(Debug, Subcommand)]
pub enum ContextCommand {
    /// SessionStart 钩子：项目进度、需要先处理的事项、最近 3 章摘要与建议的下一步（读取钩子的 stdin JSON；不在小说项目中时不输出；出错也只输出一行说明，退出码 0）
    #[command(help_template = HELP_TEMPLATE, next_help_heading = "选项")]
    SessionStart,
    /// SubagentStart 钩子：派出章节流水线的 agent（写手、摘要、润色、评审）时，把在写章节的资料包放进它的第一轮上下文，省去它自己取包的一轮；资料包按 9,000 字一段切开，`--part K` 输出第 K 段（钩子输出上限 10,000 字）；没有在写的章节、不是这四个 agent、或不在小说项目中时不输出，出错也只输出一行说明，退出码 0
    #[command(help_template = HELP_TEMPLATE, next_help_heading = "选项")]
    SubagentStart(SubagentArgs),
    /// 列出每个 agent 资料包各段的估算 token、预算与裁剪结果
    #[command(help_template = HELP_TEMPLATE, next_help_heading = "选项")]
    Budget(BudgetArgs),
    /// 写手（chapter-writer）的资料包：当前故事线记忆在前，本章大纲、L3 契约、L1 禁止项、在场角色的 L2 契约、伏笔任务、近 3 章摘要、状态、风格与黑名单、作者偏好
    #[command(help_template = HELP_TEMPLATE, next_help_heading = "选项")]
    ChapterWriter(PacketArgs),
    /// 摘要员（summarizer）的资料包：本线记忆、章节正文、实体 id 对照、伏笔任务、在场角色的当前状态与 state_version
    #[command(help_template = HELP_TEMPLATE, next_help_heading = "选项")]
    Summarizer(PacketArgs),
    /// 润色编辑（style-refiner）的资料包：初稿、风格指纹、漂移纠偏指令、完整的 AI 用语黑名单
    #[command(help_template = HELP_TEMPLATE, next_help_heading = "选项")]
    StyleRefiner(PacketArgs),
    /// 评审（quality-judge）的资料包：正文、本章大纲、L1/L2/L3 与 LS 规范、本卷调度、前一章摘要、风格
    #[command(help_template = HELP_TEMPLATE, next_help_heading = "选项")]
    QualityJudge(PacketArgs),
    /// 大纲策划（plot-architect）的资料包：大纲格式、创作纲领、故事线、全局伏笔、上卷回顾、世界观与角色
    #[command(help_template = HELP_TEMPLATE, next_help_heading = "选项")]
    PlotArchitect(PacketArgs),
    /// 世界观设定师（world-builder）的资料包：创作纲领、L1 规则、世界观文档、故事线、研究资料清单
    #[command(help_template = HELP_TEMPLATE, next_help_heading = "选项")]
    WorldBuilder(PacketArgs),
    /// 角色设定师（character-weaver）的资料包：世界观、全部活跃角色档案、关系、已退场角色、故事线
    #[command(help_template = HELP_TEMPLATE, next_help_heading = "选项")]
    CharacterWeaver(PacketArgs),
    /// 文风分析员（style-analyzer）的资料包：现有风格指纹、黑名单类别、创作纲领
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
            ContextCommand::SubagentStart(_) => "context subagent-start",
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
pub struct SubagentArgs {
    /// 输出资料包的第几段（1–3；hooks.json 为每段注册一条钩子命令）
    #[arg(long, value_name = "K", default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=3))]
    pub part: u32,
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
    /// What the author is shown at launch (the hook's `systemMessage`), when the book was left
    /// unfinished.
    author_line: Option<&'a str>,
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

/// The packets only read the book, and their parts ask for the same files (settings,
/// checkpoint, the volume's schedule and contract, the cast): each is read once
/// ([`novel_store::io::ReadOnce`]). Not `synth` (it writes a book), nor `session-start`,
/// which reads each of its files once anyway (`crates/novel-store/benches/opens.sh`): a
/// memo would only cost it.
pub fn run(global: &GlobalArgs, cmd: ContextCommand) -> Result<Report, CliError> {
    let reads_again = !matches!(cmd, ContextCommand::Synth(_) | ContextCommand::SessionStart);
    let _once = reads_again.then(novel_store::io::ReadOnce::begin);
    let (agent, args) = match cmd {
        ContextCommand::SessionStart => return Ok(session_start_guarded(global)),
        ContextCommand::SubagentStart(a) => return Ok(subagent_start_guarded(global, a.part)),
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
    let (packet, human) = packet_text(&project, agent, args.chapter, args.volume, args.budget)?;
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
        human,
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
    let Some(v) = hook_input() else {
        return (None, None);
    };
    (hook_cwd(&v), hook_field(&v, "source"))
}

/// The hook's stdin as JSON, read with a time limit; `None` without one.
fn hook_input() -> Option<Value> {
    let stdin = std::io::stdin();
    if stdin.is_terminal() {
        return None;
    }
    // Read on a helper thread so a stdin that is never closed cannot hang the session.
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut bytes = Vec::new();
        let _ = std::io::stdin().take(1 << 20).read_to_end(&mut bytes);
        let _ = tx.send(bytes);
    });
    let bytes = rx.recv_timeout(Duration::from_millis(500)).ok()?;
    serde_json::from_slice::<Value>(&bytes).ok()
}

fn hook_cwd(v: &Value) -> Option<PathBuf> {
    v.get("cwd")
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
        .map(PathBuf::from)
}

/// A short string field of the hook's input (at most 40 characters are kept).
fn hook_field(v: &Value, key: &str) -> Option<String> {
    v.get(key)
        .and_then(Value::as_str)
        .map(|s| s.chars().take(40).collect())
}

/// The project a hook works in: `--project`, else the session's directory and its parents,
/// else the book the session's commands named with `--project` (`crate::session`: a book given
/// as `项目：<DIR>`, or in a subfolder of the session's directory).
fn hook_project(global: &GlobalArgs, input: &Value) -> Result<Project, StoreError> {
    if let Some(dir) = &global.project {
        return Project::open(dir);
    }
    let start = hook_cwd(input)
        .or_else(|| std::env::var_os("CLAUDE_PROJECT_DIR").map(PathBuf::from))
        .or_else(|| std::env::current_dir().ok())
        .unwrap_or_else(|| Path::new(".").to_path_buf());
    Project::discover(&start).or_else(|e| {
        let session = input
            .get("session_id")
            .and_then(Value::as_str)
            .map(str::to_string)
            .or_else(|| std::env::var("CLAUDE_CODE_SESSION_ID").ok());
        session
            .and_then(|id| crate::session::recall(&id))
            .map_or(Err(e), |root| Project::open(&root))
    })
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
    let mismatch = crate::installed::version_mismatch();
    let line = report.data["author_line"].as_str().map(str::to_string);
    if mismatch.is_none() && line.is_none() {
        return report;
    }
    tell_the_author(report, mismatch.as_ref(), line)
}

/// The hook's output when the author must be told something: a `systemMessage` shown to the
/// author (a version mismatch, a chapter left unfinished), the facts for the model as
/// `additionalContext` (Claude Code's hook JSON).
fn tell_the_author(report: Report, m: Option<&VersionMismatch>, line: Option<String>) -> Report {
    let mut message: Vec<String> = line.into_iter().collect();
    let mut context = report.human.clone();
    let mut data = report.data;
    if let Some(m) = m {
        message.push(format!(
            "{}，或输入 /novel:start 让我来运行。",
            m.sentence()
        ));
        context.push_str(&format!(
            "\n【novel】程序版本 {} 与插件版本 {} 不一致：结果可能与技能说明不符，先请作者更新程序。",
            m.binary, m.plugin
        ));
        data["version_mismatch"] = infallible(m);
    }
    let message = message.join("\n");
    let out = HookOutput {
        system_message: &message,
        hook_specific_output: HookSpecificOutput {
            hook_event_name: "SessionStart",
            additional_context: context.trim(),
        },
    };
    Report {
        data,
        human: serde_json::to_string(&out).unwrap_or_default(),
    }
}

fn session_start_inner(global: &GlobalArgs) -> Report {
    let (cwd, source) = hook_stdin();
    let input = cwd
        .as_ref()
        .map_or(Value::Null, |c| serde_json::json!({ "cwd": c }));
    let found = hook_project(global, &input);
    let project = match found {
        Ok(p) => p,
        Err(StoreError::NotAProject { .. }) => return silent(),
        Err(e) => return failure(&e.to_string()),
    };
    let s = session_start(&project, source);
    let author_line = session::author_line(&s.facts, s.recommendation.as_ref());
    let data = SessionData {
        project: &project.root,
        text: &s.text,
        author_line: author_line.as_deref(),
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

// ---- SubagentStart ------------------------------------------------------------------------

/// The most characters one SubagentStart hook hands over: the client (2.1.197) replaces a hook
/// output over 10,000 characters by a 2 KB preview and the path of a file the agent would have
/// to read, so a packet goes in parts, one hook command each (`hooks/hooks.json`).
const PART_CHARS: usize = 9_000;
/// The parts `hooks/hooks.json` registers (`--part 1` … `--part 3`).
const PARTS: usize = 3;

/// Claude Code's SubagentStart hook output.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct SubagentOutput<'a> {
    hook_specific_output: HookSpecificOutput<'a>,
}

/// `subagent-start`'s `--json` data: the part handed over (`null`: nothing to hand over).
#[derive(Serialize)]
struct SubagentData<'a> {
    part: u32,
    text: Option<&'a str>,
}

fn subagent_start_guarded(global: &GlobalArgs, part: u32) -> Report {
    std::panic::set_hook(Box::new(|_| {}));
    let text = std::panic::catch_unwind(|| subagent_context(global, part)).unwrap_or_else(|_| {
        (part == 1).then(|| {
            "【novel 资料包】没有送到（程序内部错误）：照你的说明自己取资料包。".to_string()
        })
    });
    let data = infallible(&SubagentData {
        part,
        text: text.as_deref(),
    });
    let human = text.as_deref().map_or_else(String::new, |t| {
        let out = SubagentOutput {
            hook_specific_output: HookSpecificOutput {
                hook_event_name: "SubagentStart",
                additional_context: t,
            },
        };
        serde_json::to_string(&out).unwrap_or_default() + "\n"
    });
    Report { data, human }
}

/// Part `part` of the packet of the agent the hook starts, for the chapter in flight; `None`
/// when there is nothing to hand over (another agent, no project, no chapter in flight, a part
/// past the last).
fn subagent_context(global: &GlobalArgs, part: u32) -> Option<String> {
    let input = hook_input()?;
    let agent_type = input.get("agent_type").and_then(Value::as_str)?;
    let agent = Agent::from_name(agent_type.strip_prefix("novel:")?)?;
    if !agent.per_chapter() {
        return None;
    }
    let project = hook_project(global, &input).ok()?;
    let cp = novel_store::chapter::load_checkpoint(&project).ok()?;
    let Some(n) = cp.inflight_chapter else {
        return (part == 1).then(|| nothing_in_flight(agent)).flatten();
    };
    if let Some(early) = too_early(agent, cp.pipeline_stage) {
        return (part == 1).then(|| {
            format!(
                "【novel】第 {n} 章现在是 {}：{early}，还轮不到 {}。不要改任何文件，直接返回 {{\"status\":\"failed\",\"agent\":\"{}\",\"chapter\":{n},\"detail\":\"阶段不对：{}\"}}。",
                pipeline::stage_name(cp.pipeline_stage),
                agent.label(),
                agent.name(),
                pipeline::stage_name(cp.pipeline_stage)
            )
        });
    }
    let fetch = format!(
        "novel --project \"{}\" context {} --chapter {n}",
        project.root.display(),
        agent.name()
    );
    let text = match packet_text(&project, agent, Some(n), None, None) {
        Ok((_, text)) => text,
        Err(e) => {
            return (part == 1).then(|| {
                format!(
                    "【novel 资料包】第 {n} 章 {} 的资料包组装失败：{}。运行 `{fetch}` 看完整的报错。",
                    agent.label(),
                    e.message
                )
            });
        }
    };
    let parts = split_parts(&text, PART_CHARS);
    if parts.len() > PARTS {
        // The refiner and the judge have no Bash: the stage before them kept their packet.
        let kept = novel_store::layout::staging_context(n, agent.name());
        let how = if matches!(agent, Agent::StyleRefiner | Agent::QualityJudge) {
            format!("用 Read 读 {}", project.path(&kept).display())
        } else {
            format!("运行 `{fetch}` 取全文")
        };
        return (part == 1).then(|| {
            format!(
                "【novel 资料包】第 {n} 章 {} 的资料包有 {} 段，钩子只送得下 {PARTS} 段：{how}。",
                agent.label(),
                parts.len()
            )
        });
    }
    let body = parts.get(part as usize - 1)?;
    Some(format!(
        "【novel 资料包 第 {part}/{} 段｜{} 第 {n} 章｜项目目录 {}】\n{body}",
        parts.len(),
        agent.label(),
        project.root.display()
    ))
}

/// What an agent started with no chapter in flight is told. Summarizer's tasks without one
/// (回填, 重建摘要) fetch their own packet: it is told nothing. ChapterWriter's revision
/// candidate of a committed chapter does the same; its pipeline tasks mean `chapter begin` did
/// not succeed (the skill dispatches the writer in the message that begins the chapter).
fn nothing_in_flight(agent: Agent) -> Option<String> {
    let failed = format!(
        "{{\"status\":\"failed\",\"agent\":\"{}\",\"detail\":\"没有在写的章节\"}}",
        agent.name()
    );
    match agent {
        Agent::ChapterWriter => Some(format!(
            "【novel】现在没有在写的章节。任务是「修订候选」时照你的说明自己取资料包；是「初稿」「修订」「重写」时说明 chapter begin 没有成功：不写任何文件，直接返回 {failed}。"
        )),
        Agent::StyleRefiner | Agent::QualityJudge => Some(format!(
            "【novel】现在没有在写的章节（chapter begin 没有成功，或本章已提交）：不写任何文件，直接返回 {failed}。"
        )),
        _ => None,
    }
}

/// Why `agent` is dispatched before its stage: StyleRefiner before the draft was marked
/// (`chapter stage drafted` failed or was not run), QualityJudge before the refinement was.
fn too_early(agent: Agent, stage: Option<PipelineStage>) -> Option<&'static str> {
    use PipelineStage as S;
    match (agent, stage) {
        (Agent::StyleRefiner, Some(S::Drafting | S::Revising)) => {
            Some("初稿还没有标记完成（chapter stage drafted）")
        }
        (Agent::QualityJudge, Some(S::Drafting | S::Revising | S::Drafted)) => {
            Some("润色还没有标记完成（chapter stage refined）")
        }
        (Agent::QualityJudge, Some(S::Repairing)) => {
            Some("局部修补还没有放进正文（chapter stage repaired）")
        }
        _ => None,
    }
}

/// `text` cut at line ends into parts of at most `max` characters (a longer line is cut
/// inside).
fn split_parts(text: &str, max: usize) -> Vec<String> {
    let mut parts: Vec<String> = Vec::new();
    let mut current = String::new();
    let mut len = 0;
    for line in text.split_inclusive('\n') {
        let mut line = line;
        loop {
            let chars = line.chars().count();
            if len + chars <= max {
                current.push_str(line);
                len += chars;
                break;
            }
            if len > 0 {
                parts.push(std::mem::take(&mut current));
                len = 0;
                continue;
            }
            // One line longer than a part: its first `max` characters make a part.
            let cut = line.char_indices().nth(max).map_or(line.len(), |(i, _)| i);
            parts.push(line[..cut].to_string());
            line = &line[cut..];
        }
    }
    if !current.is_empty() {
        parts.push(current);
    }
    parts
}

/// An agent's packet and its rendering as the agent reads it, ending with what the program
/// measured for it: QualityJudge's and StyleRefiner's the lint, style metrics (and for the judge
/// the leak check) of the staged text (`judge_checks`), Summarizer's the leak check
/// (`summarizer_checks`) — so each can write its files in its first message.
pub(crate) fn packet_text(
    project: &Project,
    agent: Agent,
    chapter: Option<u32>,
    volume: Option<u32>,
    budget: Option<u32>,
) -> Result<(context::Packet, String), CliError> {
    let inputs = load_inputs(project, agent, chapter, volume)?;
    let packet = context::build(agent, &inputs, budget).map_err(context_error)?;
    let mut text = packet.render();
    match agent {
        // A repair's re-check: the program's craft check of the new text, in one line.
        Agent::QualityJudge if inputs.repair.is_some() => {
            text.push_str(&repair_checks(project, packet.chapter));
        }
        Agent::QualityJudge => text.push_str(&judge_checks(project, packet.chapter, true)),
        Agent::StyleRefiner => text.push_str(&judge_checks(project, packet.chapter, false)),
        Agent::Summarizer => text.push_str(&summarizer_checks(project, packet.chapter)),
        _ => {}
    }
    Ok((packet, text))
}

/// Summarizer's measurement: the leak check of the staged text (`novel check leak`, not
/// recorded: step 4 of the chapter records it for the gate), the cross references as JSON to
/// copy into its return.
fn summarizer_checks(project: &Project, n: u32) -> String {
    let mut out = String::from("<checks title=\"机检（程序量的数字）\">\n");
    match novel_store::leak::sources(project, n, None) {
        Ok(sources) => {
            let a = novel_text::leak::assess(&sources);
            out.push_str("串线检查（check leak）：");
            out.push_str(&super::check::render_leak(&a));
            let refs: Vec<Value> = a
                .cross_references
                .iter()
                .map(|f| {
                    serde_json::json!({"name": f.name, "storyline": f.storyline,
                        "evidence": f.evidence.first().map(|e| e.excerpt.clone())})
                })
                .collect();
            out.push_str(&format!(
                "返回值照抄：\"leak_risk\": {}, \"cross_references\": {}\n",
                serde_json::to_string(&a.leak_risk).unwrap_or_default(),
                serde_json::to_string(&refs).unwrap_or_default()
            ));
        }
        Err(e) => out.push_str(&format!("串线检查没有完成：{e}\n")),
    }
    out.push_str("</checks>\n");
    out
}

/// The measurements QualityJudge scores with (and StyleRefiner works from), taken by the program
/// on the staged chapter: the lint summary and its findings, the craft check (opening, hook,
/// rhythm), the style metrics, the 字数, and
/// for the judge (`leak`) the leak check when it was run.
/// The `checks` of QualityJudge's re-check of a local repair: the craft check's summary line of
/// the repaired text (opening, hook and its type, take-up).
fn repair_checks(project: &Project, n: u32) -> String {
    let rel = novel_core::naming::staging_chapter(n);
    let line = match novel_store::io::read_text(&project.path(&rel)) {
        Ok(text) => super::craft::craft_one(project, n, &text, &rel, false),
        Err(e) => format!("读不到 {rel}：{e}\n"),
    };
    format!("<checks title=\"机检（修补后的章法检查）\">\n{line}</checks>\n")
}

fn judge_checks(project: &Project, n: u32, leak: bool) -> String {
    // The staged text of the chapter in flight, else the committed one (a packet asked for by
    // chapter number).
    let staged = novel_core::naming::staging_chapter(n);
    let rel = if project.path(&staged).exists() {
        staged
    } else {
        novel_store::layout::chapter_file(n)
    };
    let path = project.path(&rel);
    let mut out = String::from("<checks title=\"机检（程序量的数字）\">\n");
    match novel_store::io::read_text(&path) {
        Ok(text) => {
            match super::lint::lint_one(project, &text, &rel) {
                Ok(lines) => out.push_str(&lines),
                Err(e) => out.push_str(&format!("lint 没有完成：{}\n", e.message)),
            }
            out.push_str(&super::craft::craft_one(project, n, &text, &rel, true));
            out.push_str(&super::style::describe(
                "风格数字",
                &novel_text::metrics::StyleMetrics::of(&[&novel_text::segment::Document::new(
                    &text,
                )]),
            ));
        }
        Err(e) => out.push_str(&format!("读不到 {rel}：{e}\n")),
    }
    if !leak {
        out.push_str("</checks>\n");
        return out;
    }
    match novel_store::chapter::leak_result(project, n) {
        Ok(Some(leak)) => out.push_str(&format!(
            "串线检查：leak_risk {}，{} 条发现\n",
            serde_json::to_value(leak.leak_risk)
                .ok()
                .and_then(|v| v.as_str().map(str::to_string))
                .unwrap_or_default(),
            leak.findings.len()
        )),
        Ok(None) => out.push_str("串线检查：还没有运行\n"),
        Err(e) => out.push_str(&format!("串线检查结果读不出：{e}\n")),
    }
    out.push_str("</checks>\n");
    out
}
