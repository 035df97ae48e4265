//! `novel style metrics [FILE…]`: the numbers of `style-profile.json` (PRD §5.6) computed from
//! text, so StyleAnalyzer does not estimate them. `novel style drift`: the last committed
//! chapters against the profile baseline (风格校准); writes or removes `style-drift.json`.
//! `novel style preset NAME [--force]`: a preset profile into `style-profile.json`.

use clap::{Args, Subcommand};
use serde::Serialize;

use novel_core::drift::{DriftAssessment, DriftStatus};
use novel_core::model::style::DriftMetric;
use novel_store::io;
use novel_text::metrics::StyleMetrics;
use novel_text::segment::Document;

use super::resolve_inputs;
use crate::args::{ChapterSelection, GlobalArgs, HELP_TEMPLATE};
use crate::output::{CliError, Exit, Report};

#[derive(Debug, Subcommand)]
pub enum StyleCommand {
    /// 计算文风指标：平均句长、对话占比、段落长度分布、标点密度、高频句首
    #[command(help_template = HELP_TEMPLATE, next_help_heading = "选项", after_help = "chars 是字数，与 novel count 同一算法（汉字、全角标点、一串字母或数字各算 1，不含标题行）：给作者的字数门槛（如样章 2000 字）都按它。句长与段长按字计：汉字、字母、数字，不含标点、空白与 Markdown 记号（其总和为 text_chars）。句子在 。！？… 及其后的引号处、对话的后引号处、段落末尾断开。对话占比 = 「」“”『』 内的字 ÷ 全部字。字段名与 style-profile.json 一致（avg_sentence_length、dialogue_ratio）。多个文件时另给合并结果 combined。")]
    Metrics(MetricsArgs),
    /// 风格漂移检测：最近已提交章节对比 style-profile.json 基线，写入或清除 style-drift.json
    #[command(help_template = HELP_TEMPLATE, next_help_heading = "选项", after_help = "偏离度 = |当前 − 基线| ÷ 基线。平均句长偏离超过 novel.json 的 style_drift.sentence_length（默认 0.20）或对话占比偏离超过 style_drift.dialogue_ratio（默认 0.15）即为漂移，写入 style-drift.json（含给写手、润色编辑的纠偏指令）；两项都低于 style_drift.recovery（默认 0.10）视为回归，删除该文件；介于两者之间时保留已有的漂移记录。窗口为最近 style_drift.window 章（默认 5）。")]
    Drift(DriftArgs),
    /// 用预置风格模板作为本项目的风格指纹（写入 style-profile.json）：qingsong-youmo 轻松幽默、rexue-shaonian 热血少年、xini-yanqing 细腻言情、lengjun-xuanyi 冷峻悬疑、gufeng-quanmou 古风权谋
    #[command(help_template = HELP_TEMPLATE, next_help_heading = "选项", after_help = "与 novel init --style 用的是同一批预设。style-profile.json 的 source_type 已有值（作者样本、仿写或已选的模板）时拒绝覆盖（退出码 1，E_STYLE_SET），加 --force 才覆盖；被替换的文件先备份到 state/backups/。写入是原子的。")]
    Preset(PresetArgs),
}

#[derive(Debug, Args)]
pub struct PresetArgs {
    /// 预设名：qingsong-youmo、rexue-shaonian、xini-yanqing、lengjun-xuanyi、gufeng-quanmou
    #[arg(value_name = "预设", help_heading = "参数")]
    pub name: String,
    /// 覆盖已有来源（source_type 不为空）的风格指纹
    #[arg(long)]
    pub force: bool,
}

#[derive(Debug, Args)]
pub struct MetricsArgs {
    #[command(flatten)]
    pub select: ChapterSelection,
}

#[derive(Debug, Args)]
pub struct DriftArgs {
    /// 只报告，不写入也不删除 style-drift.json
    #[arg(long)]
    pub dry_run: bool,
}

/// The command name in the JSON envelope (`style metrics`, `style drift`).
pub fn command_name(command: &StyleCommand) -> &'static str {
    match command {
        StyleCommand::Metrics(_) => "style metrics",
        StyleCommand::Drift(_) => "style drift",
        StyleCommand::Preset(_) => "style preset",
    }
}

pub fn run(global: &GlobalArgs, command: StyleCommand) -> Result<Report, CliError> {
    match command {
        StyleCommand::Metrics(a) => metrics(global, a),
        StyleCommand::Drift(a) => drift(global, a),
        StyleCommand::Preset(a) => preset(global, &a),
    }
}

pub(crate) fn describe(label: &str, m: &StyleMetrics) -> String {
    let p = &m.punctuation_per_1000;
    let openings: Vec<String> = m
        .top_openings
        .iter()
        .take(5)
        .map(|o| format!("「{}」×{}", o.opening, o.count))
        .collect();
    format!(
        "{label}：{} 字，{} 句，平均句长 {:.1} 字（中位 {}，短句占 {:.0}%），对话占比 {:.1}%，{} 段（平均 {:.1} 字）\n  标点/千字：逗号 {:.1}，句号 {:.1}，感叹 {:.1}，问号 {:.1}，省略号 {:.1}，破折号 {:.1}\n  高频句首：{}\n",
        m.chars,
        m.sentence_count,
        m.avg_sentence_length,
        m.sentence_length.median,
        m.short_sentence_ratio * 100.0,
        m.dialogue_ratio * 100.0,
        m.paragraph_count,
        m.paragraph_length.mean,
        p.comma,
        p.period,
        p.exclamation,
        p.question,
        p.ellipsis,
        p.dash,
        if openings.is_empty() {
            "无".to_string()
        } else {
            openings.join("、")
        }
    )
}

/// `novel style metrics`'s `--json` data.
#[derive(Serialize)]
struct MetricsData<'a> {
    files: Vec<FileMetrics<'a>>,
    combined: StyleMetrics,
}

#[derive(Serialize)]
struct FileMetrics<'a> {
    path: &'a str,
    metrics: StyleMetrics,
}

/// `novel style drift`'s `--json` data.
#[derive(Serialize)]
struct DriftData<'a> {
    status: DriftStatus,
    window: [u32; 2],
    chapters: &'a [u32],
    metrics: &'a [DriftMetric],
    directives: &'a [String],
    action: &'static str,
    dry_run: bool,
    current: &'a StyleMetrics,
}

fn metrics(global: &GlobalArgs, args: MetricsArgs) -> Result<Report, CliError> {
    let (_, inputs) = resolve_inputs(global, &args.select)?;
    let mut docs = Vec::new();
    for input in &inputs {
        docs.push(Document::new(&io::read_text(&input.path)?));
    }
    let mut human = String::new();
    let mut files = Vec::new();
    for (input, doc) in inputs.iter().zip(&docs) {
        let m = StyleMetrics::of(&[doc]);
        human.push_str(&describe(&input.shown, &m));
        files.push(FileMetrics {
            path: &input.shown,
            metrics: m,
        });
    }
    let all: Vec<&Document> = docs.iter().collect();
    let combined = StyleMetrics::of(&all);
    if inputs.len() > 1 {
        human.push_str(&describe(
            &format!("合计（{} 个文件）", inputs.len()),
            &combined,
        ));
    }
    Report::new(&MetricsData { files, combined }, human)
}

fn drift(global: &GlobalArgs, args: DriftArgs) -> Result<Report, CliError> {
    let proj = super::project(global)?;
    let novel_store::figures::drift::DriftCheck {
        sources,
        chapters,
        window,
        assessment,
    } = super::drift_check(&proj)?;
    let docs: Vec<Document> = sources
        .chapters
        .iter()
        .map(|(_, t)| Document::new(t))
        .collect();
    let current = StyleMetrics::of(&docs.iter().collect::<Vec<_>>());
    let existing = sources.existing;
    let action = if args.dry_run {
        "none"
    } else {
        novel_store::style::record_drift(
            &proj,
            assessment
                .drift
                .as_ref()
                .filter(|_| assessment.status.keeps_file()),
            assessment.status.removes_file(),
            existing.as_ref(),
        )?
    };
    let mut human = format!(
        "第 {}–{} 章（{} 章）对比风格基线：\n",
        window[0],
        window[1],
        chapters.len()
    );
    human.push_str(&drift_lines(&assessment, action, args.dry_run));
    let data = DriftData {
        status: assessment.status,
        window,
        chapters: &chapters,
        metrics: &assessment.metrics,
        directives: assessment.drift.as_ref().map_or(&[][..], |d| &d.directives),
        action,
        dry_run: args.dry_run,
        current: &current,
    };
    Report::new(&data, human)
}

/// Each metric against the baseline, the verdict with what was done, and the directives.
fn drift_lines(assessment: &DriftAssessment, action: &str, dry_run: bool) -> String {
    let mut human = String::new();
    for m in &assessment.metrics {
        let name = novel_store::figures::drift::metric_label(&m.name);
        human.push_str(&format!(
            "  {name}：当前 {:.3}，基线 {}，偏离 {:.1}%{}\n",
            m.current,
            m.baseline,
            m.deviation * 100.0,
            if m.drifted { "（漂移）" } else { "" }
        ));
    }
    let verdict = assessment.status.label();
    let effect = match action {
        "written" => "，已写入 style-drift.json",
        "removed" => "，已删除 style-drift.json",
        _ if dry_run => "（--dry-run：未改动文件）",
        _ => "",
    };
    human.push_str(&format!("结论：{verdict}{effect}\n"));
    if let Some(d) = &assessment.drift {
        for line in &d.directives {
            human.push_str(&format!("  纠偏：{line}\n"));
        }
    }
    human
}

fn preset(global: &GlobalArgs, args: &PresetArgs) -> Result<Report, CliError> {
    use novel_store::style::{PresetError, apply_preset, preset_names};
    let proj = super::project(global)?;
    let done = apply_preset(&proj, &args.name, args.force, &novel_store::time::now_iso())
        .map_err(|e| match e {
            PresetError::Store(e) => CliError::from(e),
            PresetError::AlreadySet { .. } | PresetError::Unreadable { .. } => CliError::new(
                "E_STYLE_SET",
                e.to_string(),
                format!(
                    "确认要换成预设就加 --force（原文件会先备份到 state/backups/）：novel style preset {} --force；可选预设：{}",
                    args.name,
                    preset_names().join("、")
                ),
                Exit::Problems,
            ),
        })?;
    let mut human = format!(
        "已把预设 {}{} 写入 {}。\n",
        done.preset,
        done.name
            .as_deref()
            .map_or(String::new(), |n| format!("（{n}）")),
        done.file
    );
    if let Some(st) = &done.replaced_source_type {
        human.push_str(&format!("替换了原有的风格指纹（source_type: {st}）。\n"));
    }
    if let Some(b) = &done.backup {
        human.push_str(&format!("原文件备份在 {b}。\n"));
    }
    Report::new(&done, human)
}
