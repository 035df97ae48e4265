//! `novel review brief|consistency|volume`: the periodic reviews as data (`docs/orchestration.md`
//! §8). Each gathers its figures (the store's, `novel_core::review`'s), runs the text checks this
//! crate owns (names, leaks, style drift — the same functions as `novel check` and `novel style
//! drift`, which here only report), writes its report under `logs/reviews/` for the skill to
//! present, and exits 0: a review reports, it does not judge. `novel next` stops listing a review
//! as due once its report exists.

use clap::{Args, Subcommand};
use novel_core::gate::score_text;
use serde::Serialize;

use novel_core::drift::DriftStatus;
use novel_core::menu::ReviewKind;
use novel_core::model::style::DriftMetric;
use novel_core::review::{Completion, Inventory, LineAppearances, Quality};
use novel_store::plan::{ContinuityReport, Scope, continuity, light_checkpoint};
use novel_store::review::{committed_in, inventory, quality, volume_part, write_report};
use novel_store::{Project, layout, time};
use novel_text::leak::LeakSummary;

use super::{NameFinding, drift_check, names_report, plan_error};
use crate::args::{GlobalArgs, HELP_TEMPLATE};
use crate::output::{CliError, Exit, Report};

#[derive(Debug, Subcommand)]
pub enum ReviewCommand {
    /// 质量简报（每 5 章）：最近 5 章的均分与趋势、低于通过线的章节及原因、反复偏低的维度；写入 logs/reviews/brief-chapter-NNN.json
    #[command(help_template = HELP_TEMPLATE, next_help_heading = "选项", after_help = "NNN 是最后完成的章节。分数取门控实际采用的分（流水线日志的 gate_overall，否则按评估重算）；低于 novel.json gate.pass 的章节列出评估里的 issues、violations 与偏低的维度；某一维度在 2 章以上低于 gate.polish 即为反复偏低。报告写出后 novel next 不再把它列为待做。")]
    Brief,
    /// 一致性检查（每 10 章）：人名、串线、契约衔接、伏笔盘点（含逾期）、风格漂移；写入 logs/reviews/consistency-chapter-NNN.json
    #[command(help_template = HELP_TEMPLATE, next_help_heading = "选项", after_help = "范围是最近 10 章（契约衔接另含下一章）。人名与串线同 novel check names / novel check leak（不写 staging），契约衔接同 novel check continuity，风格漂移同 novel style drift --dry-run（不改 style-drift.json；要写入纠偏指令请运行 novel style drift）。")]
    Consistency,
    /// 卷末回顾：全卷的质量与一致性，加伏笔完成率与故事线节奏（各线出场次数对照本卷调度）；写入 logs/reviews/volume-NN.json
    #[command(help_template = HELP_TEMPLATE, next_help_heading = "选项")]
    Volume(ReviewVolumeArgs),
}

#[derive(Debug, Args)]
pub struct ReviewVolumeArgs {
    /// 卷号（默认：当前卷）
    #[arg(value_name = "卷", help_heading = "参数", value_parser = clap::value_parser!(u32).range(1..))]
    pub volume: Option<u32>,
}

/// The envelope name of a `review` subcommand.
pub fn command_name(cmd: &ReviewCommand) -> &'static str {
    match cmd {
        ReviewCommand::Brief => "review brief",
        ReviewCommand::Consistency => "review consistency",
        ReviewCommand::Volume(_) => "review volume",
    }
}

/// `logs/reviews/brief-chapter-NNN.json`, also the `--json` data.
#[derive(Serialize)]
struct BriefReport<'a> {
    kind: &'static str,
    chapter: u32,
    report: &'a str,
    created_at: String,
    quality: &'a Quality,
    problems: &'a [String],
}

/// `logs/reviews/consistency-chapter-NNN.json`, also the `--json` data.
#[derive(Serialize)]
struct ConsistencyReport<'a> {
    kind: &'static str,
    chapter: u32,
    window: [u32; 2],
    report: &'a str,
    created_at: String,
    names: NamesPart<'a>,
    leaks: &'a LeakSummary,
    continuity: &'a ContinuityReport,
    foreshadowing: &'a Inventory,
    style_drift: &'a Option<StyleDriftPart>,
    problems: &'a [String],
}

/// `logs/reviews/volume-NN.json`, also the `--json` data.
#[derive(Serialize)]
struct VolumeReport<'a> {
    kind: &'static str,
    volume: u32,
    chapter: u32,
    range: [u32; 2],
    range_source: &'static str,
    report: &'a str,
    created_at: String,
    quality: &'a Quality,
    names: NamesPart<'a>,
    leaks: &'a LeakSummary,
    continuity: &'a ContinuityReport,
    foreshadowing: &'a Inventory,
    foreshadowing_completion: &'a Completion,
    storyline_rhythm: &'a [LineAppearances],
    style_drift: &'a Option<StyleDriftPart>,
    problems: &'a [String],
}

/// The names check of a review.
#[derive(Serialize)]
struct NamesPart<'a> {
    files: &'a [String],
    count: usize,
    findings: &'a [NameFinding],
}

/// Style drift as a review reports it (`null` when it could not be checked).
#[derive(Serialize)]
struct StyleDriftPart {
    status: DriftStatus,
    window: [u32; 2],
    metrics: Vec<DriftMetric>,
    directives: Vec<String>,
}

pub fn run(global: &GlobalArgs, cmd: ReviewCommand) -> Result<Report, CliError> {
    let project = super::project(global)?;
    let cp = light_checkpoint(&project)?;
    let last = cp.last_completed_chapter;
    let kind = match cmd {
        ReviewCommand::Brief => ReviewKind::Brief,
        ReviewCommand::Consistency => ReviewKind::Consistency,
        ReviewCommand::Volume(_) => ReviewKind::Volume,
    };
    if !kind.possible_after(last) {
        return Err(CliError::new(
            "E_NO_CHAPTER",
            "还没有已提交的章节，没有可回顾的内容",
            "提交章节后再运行（每 5 章质量简报，每 10 章一致性检查）",
            Exit::Usage,
        ));
    }
    match cmd {
        ReviewCommand::Brief => brief(&project, last),
        ReviewCommand::Consistency => consistency(&project, last),
        ReviewCommand::Volume(a) => {
            let v = a.volume.unwrap_or(cp.volume());
            volume(&project, v, cp.current_volume, last)
        }
    }
}

fn quality_lines(q: &Quality) -> String {
    let mut out = format!(
        "第 {}–{} 章：已评分 {} 章，均分 {}{}；修订 {} 次{}\n",
        q.window[0],
        q.window[1],
        q.scored,
        q.average.map_or("—".into(), score_text),
        q.trend
            .map_or(String::new(), |t| format!("，趋势{}", t.label())),
        q.revisions,
        if q.force_passed.is_empty() {
            String::new()
        } else {
            format!(
                "，强制通过：第 {} 章",
                novel_core::plan::runs(&q.force_passed)
            )
        }
    );
    for b in &q.below_threshold {
        out.push_str(&format!(
            "  第 {} 章 {} 分（低于 {}）",
            b.chapter,
            score_text(b.score),
            score_text(q.pass_threshold)
        ));
        let why: Vec<String> = b
            .issues
            .iter()
            .chain(&b.violations)
            .chain(&b.low_dimensions)
            .cloned()
            .collect();
        if !why.is_empty() {
            out.push_str(&format!("：{}", why.join("；")));
        }
        out.push('\n');
    }
    let recurring: Vec<String> = q
        .dimensions
        .iter()
        .filter(|d| q.recurring_low.contains(&d.id))
        .map(|d| {
            format!(
                "{}（第 {} 章偏低，均分 {}）",
                d.label,
                novel_core::plan::runs(&d.low_chapters),
                score_text(d.average)
            )
        })
        .collect();
    if !recurring.is_empty() {
        out.push_str(&format!("  反复偏低的维度：{}\n", recurring.join("、")));
    }
    if !q.blacklist_suggestions.is_empty() {
        out.push_str("  裁判建议加入黑名单（作者决定；加入用 novel blacklist add 短语 --category 类别 --source judge --evidence 原文）：\n");
        for s in &q.blacklist_suggestions {
            out.push_str(&format!(
                "    「{}」{}（第 {} 章）{}\n",
                s.phrase,
                s.category
                    .as_deref()
                    .map_or(String::new(), |c| format!(" {c}")),
                novel_core::plan::runs(&s.chapters),
                if s.evidence.is_empty() {
                    String::new()
                } else {
                    format!("：{}", s.evidence)
                }
            ));
        }
    }
    out
}

fn write(
    project: &Project,
    rel: &str,
    report: &impl Serialize,
    mut human: String,
) -> Result<Report, CliError> {
    write_report(project, rel, report)?;
    human.push_str(&format!("报告已写入 {rel}\n"));
    Report::new(report, human)
}

fn brief(project: &Project, last: u32) -> Result<Report, CliError> {
    let window = ReviewKind::Brief.window(last);
    let q = quality(project, window, &super::text_rules());
    let rel = layout::review_chapter_report("brief", last);
    let human = format!("质量简报（第 {last} 章）\n{}", quality_lines(&q.quality));
    let report = BriefReport {
        kind: "brief",
        chapter: last,
        report: &rel,
        created_at: time::now_iso(),
        quality: &q.quality,
        problems: &q.problems,
    };
    write(project, &rel, &report, human)
}

/// The text checks over committed chapters `[a, b]`: names, leaks, and style drift (`None`
/// when it could not be checked; why is in the problems).
struct TextChecks {
    names: super::NamesReport,
    leaks: LeakSummary,
    style_drift: Option<StyleDriftPart>,
}

impl TextChecks {
    fn names(&self) -> NamesPart<'_> {
        NamesPart {
            files: &self.names.files,
            count: self.names.findings.len(),
            findings: &self.names.findings,
        }
    }

    /// The human lines: names, leaks, style.
    fn lines(&self) -> String {
        let high = &self.leaks.high;
        let mut out = format!(
            "人名：{} 处可疑\n串线：high {} 章{}，low {} 章\n",
            self.names.findings.len(),
            high.len(),
            if high.is_empty() {
                String::new()
            } else {
                format!("（第 {} 章）", novel_core::plan::runs(high))
            },
            self.leaks.low.len()
        );
        if let Some(d) = &self.style_drift {
            out.push_str(&format!(
                "文风：{}{}\n",
                d.status.label(),
                if d.status == DriftStatus::Drifted {
                    "（运行 novel style drift 写入纠偏指令）"
                } else {
                    ""
                }
            ));
        }
        out
    }
}

fn text_checks(
    project: &Project,
    range: [u32; 2],
    problems: &mut Vec<String>,
) -> Result<TextChecks, CliError> {
    let inputs = novel_store::select::committed_inputs(project, range)?;
    let (names, _) = names_report(Some(project), &inputs)?;
    let mut leaks = LeakSummary::default();
    for n in committed_in(project, range) {
        match novel_store::leak::sources(project, n, None) {
            Ok(s) => leaks.push(novel_text::leak::assess(&s)),
            Err(e) => problems.push(format!("第 {n} 章的串线检查没有完成：{e}")),
        }
    }
    let style_drift = match drift_check(project) {
        Ok(d) => Some(StyleDriftPart {
            status: d.assessment.status,
            window: d.window,
            metrics: d.assessment.metrics,
            directives: d.assessment.drift.map(|x| x.directives).unwrap_or_default(),
        }),
        Err(e) => {
            problems.push(format!("风格漂移没有检测：{}", e.message));
            None
        }
    };
    Ok(TextChecks {
        names,
        leaks,
        style_drift,
    })
}

fn continuity_lines(c: &ContinuityReport) -> String {
    format!(
        "契约衔接：错误 {}，提醒 {}（{} 份契约）\n",
        c.counts.error,
        c.counts.warning,
        c.contracts_checked.len()
    )
}

fn consistency(project: &Project, last: u32) -> Result<Report, CliError> {
    let window = ReviewKind::Consistency.window(last);
    let mut problems = Vec::new();
    let text = text_checks(project, window, &mut problems)?;
    let scope = Scope::Chapters(ReviewKind::Consistency.continuity_chapters(last));
    let cont = continuity(project, scope).map_err(plan_error)?;
    let inv = inventory(project, last, &mut problems);
    let rel = layout::review_chapter_report("consistency", last);
    let mut human = format!(
        "一致性检查（第 {}–{} 章）\n{}",
        window[0],
        last,
        text.lines()
    );
    human.push_str(&continuity_lines(&cont));
    human.push_str(&format!(
        "伏笔：未回收 {} 条，逾期 {} 条{}\n",
        inv.open.len(),
        inv.overdue.len(),
        if inv.overdue.is_empty() {
            String::new()
        } else {
            format!("（{}）", inv.overdue.join("、"))
        }
    ));
    let report = ConsistencyReport {
        kind: "consistency",
        chapter: last,
        window,
        report: &rel,
        created_at: time::now_iso(),
        names: text.names(),
        leaks: &text.leaks,
        continuity: &cont,
        foreshadowing: &inv,
        style_drift: &text.style_drift,
        problems: &problems,
    };
    write(project, &rel, &report, human)
}

fn volume(project: &Project, v: u32, current: u32, last: u32) -> Result<Report, CliError> {
    let span = novel_store::next::volume_span(project, v, &mut Vec::new()).ok_or_else(|| {
        CliError::new(
            "E_VOLUME_RANGE",
            format!("不知道第 {v} 卷从哪一章到哪一章"),
            "",
            Exit::Usage,
        )
    })?;
    let range = span.reviewed(v == current, last);
    let q = quality(project, range, &super::text_rules());
    let mut problems = q.problems.clone();
    let text = text_checks(project, range, &mut problems)?;
    let cont = continuity(project, Scope::Volume(v)).map_err(plan_error)?;
    let inv = inventory(project, last, &mut problems);
    let vp = volume_part(project, v, range, &super::text_rules(), &mut problems);
    let rel = layout::review_volume_report(v);
    let mut human = format!(
        "第 {v} 卷回顾（第 {}–{} 章，范围取自 {}）\n{}{}",
        range[0],
        range[1],
        span.range_source,
        quality_lines(&q.quality),
        text.lines()
    );
    human.push_str(&continuity_lines(&cont));
    let c = &vp.foreshadowing_completion;
    human.push_str(&format!(
        "伏笔完成率：{}（本卷计划 {} 条，应在卷内回收 {} 条，已回收 {} 条）\n",
        c.rate.map_or("—".into(), |r| format!("{:.0}%", r * 100.0)),
        c.planned,
        c.due,
        c.resolved_due
    ));
    for l in &vp.storyline_rhythm {
        human.push_str(&format!(
            "  故事线 {}：出场 {} 章{}\n",
            l.storyline_id,
            l.appearances,
            l.target_chapters
                .map_or(String::new(), |t| format!("（计划 {t} 章）"))
        ));
    }
    let report = VolumeReport {
        kind: "volume",
        volume: v,
        chapter: last,
        range,
        range_source: span.range_source,
        report: &rel,
        created_at: time::now_iso(),
        quality: &q.quality,
        names: text.names(),
        leaks: &text.leaks,
        continuity: &cont,
        foreshadowing: &inv,
        foreshadowing_completion: &vp.foreshadowing_completion,
        storyline_rhythm: &vp.storyline_rhythm,
        style_drift: &text.style_drift,
        problems: &problems,
    };
    write(project, &rel, &report, human)
}
