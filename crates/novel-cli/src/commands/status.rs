//! `novel status` (PRD §2.4; `docs/orchestration.md` §4): the one-line headline, then the
//! state machine and stage, 字数, scores and their trend, storyline rhythm, foreshadowing,
//! pending actions, lock, style drift and cost — computed from the files by
//! [`novel_store::status::gather`]. Never fails on a broken project: it reports every problem
//! and exits 1.

use novel_core::gate::score_text;
use novel_core::model::storyline::{StorylineStatus, VolumeRole};
use novel_store::lock::{self, LockState};
use novel_store::status::{Status, gather};

use crate::args::GlobalArgs;
use crate::output::{CliError, Exit, Report};

fn role_label(r: VolumeRole) -> &'static str {
    match r {
        VolumeRole::Primary => "主线",
        VolumeRole::Secondary => "副线",
        VolumeRole::Seasoning => "点缀",
    }
}

fn line_status_label(s: StorylineStatus) -> &'static str {
    match s {
        StorylineStatus::Active => "活跃",
        StorylineStatus::Dormant => "休眠",
        StorylineStatus::Planned => "计划中",
        StorylineStatus::Resolved => "已完结",
    }
}

fn source_label(s: &str) -> &'static str {
    match s {
        "schedule" => "故事线调度",
        "outline" => "卷大纲",
        "contracts" => "章节契约",
        "settings" => "项目设置",
        _ => "未知来源",
    }
}

/// The human dashboard.
pub fn render(s: &Status) -> String {
    let mut out = format!("{}\n", s.headline);
    if let Some(t) = &s.title {
        out.push_str(&format!("《{t}》\n"));
    }
    out.push_str(&format!(
        "状态：{}；流水线：{}\n",
        s.state_label.unwrap_or("未知（断点文件无法读取）"),
        s.stage_label
    ));
    push_volume(&mut out, s);
    push_inflight(&mut out, s);
    push_chars(&mut out, s);
    push_scores(&mut out, s);
    push_storylines(&mut out, s);
    push_todo(&mut out, s);
    push_lock(&mut out, s);
    push_drift(&mut out, s);
    push_cost(&mut out, s);
    push_problems(&mut out, s);
    out
}

/// The volume, its planned range and where that came from, and how far it is written.
fn push_volume(out: &mut String, s: &Status) {
    if let Some(v) = s.volume.current {
        let mut line = format!("卷：第 {v} 卷");
        match (s.volume.range, s.volume.range_source) {
            (Some([a, b]), Some(src)) => {
                line.push_str(&format!("，计划第 {a}–{b} 章（来自{}）", source_label(src)))
            }
            _ => line.push_str("，章节范围未定"),
        }
        if let Some(last) = s.last_completed_chapter {
            line.push_str(&format!("；已完成到第 {last} 章"));
            if let (true, Some([_, b])) = (s.volume.over_plan, s.volume.range) {
                line.push_str(&format!("，超出计划 {} 章", last - b));
            }
        }
        out.push_str(&line);
        out.push('\n');
    }
}

/// The chapter in flight, and the error waiting for a retry.
fn push_inflight(out: &mut String, s: &Status) {
    match &s.inflight {
        Some(i) => out.push_str(&format!(
            "在写：第 {} 章（{}，已修订 {} 次）\n",
            i.chapter, i.stage_label, i.revision_count
        )),
        None => out.push_str("在写：没有在写的章节\n"),
    }
    if let Some(e) = &s.error {
        out.push_str(&format!(
            "出错待重试：{}{}{}\n",
            e.chapter.map_or(String::new(), |n| format!("第 {n} 章，")),
            e.reason,
            e.at.as_deref()
                .map_or(String::new(), |t| format!("（{t}）"))
        ));
    }
}

/// 字数, in total and per volume.
fn push_chars(out: &mut String, s: &Status) {
    let mut chars = format!("字数：总 {} 字", s.chars.total);
    if !s.chars.per_volume.is_empty() {
        let parts: Vec<String> = s
            .chars
            .per_volume
            .iter()
            .map(|v| format!("第 {} 卷 {} 章 {} 字", v.volume, v.chapters, v.chars))
            .collect();
        chars.push_str(&format!("（{}）", parts.join("；")));
    }
    out.push_str(&chars);
    out.push('\n');
}

/// Scores (average, the recent chapters, the trend), then revisions and forced passes.
fn push_scores(out: &mut String, s: &Status) {
    match s.scores.average {
        Some(a) => {
            let recent: Vec<String> = s
                .scores
                .recent
                .iter()
                .map(|c| {
                    let mut t = format!("第{}章 {}", c.chapter, score_text(c.score));
                    if c.force_passed {
                        t.push_str("（强制通过）");
                    } else if c.revisions > 0 {
                        t.push_str(&format!("（修订 {} 次）", c.revisions));
                    }
                    t
                })
                .collect();
            out.push_str(&format!(
                "评分：均分 {}（{} 章）；最近 {} 章：{}；趋势：{}\n",
                score_text(a),
                s.scores.scored_chapters,
                recent.len(),
                recent.join("、"),
                s.scores.trend.map_or("—", |t| t.label())
            ));
        }
        None => out.push_str("评分：还没有评分\n"),
    }
    let edits: Vec<String> = s
        .scores
        .recent
        .iter()
        .filter_map(|c| {
            c.edit_ratio
                .map(|r| format!("第{}章 {}", c.chapter, novel_core::edits::percent(r)))
        })
        .collect();
    if !edits.is_empty() {
        out.push_str(&format!("润色改动（叙述）：{}\n", edits.join("、")));
    }
    out.push_str(&format!(
        "修订与强制通过：修订 {} 次，强制通过 {} 章\n",
        s.pipeline.revisions, s.pipeline.force_passed
    ));
}

/// Each storyline's rhythm against its schedule.
fn push_storylines(out: &mut String, s: &Status) {
    if s.storylines.is_empty() {
        out.push_str("故事线：没有活跃的故事线\n");
    } else {
        out.push_str("故事线：\n");
        for l in &s.storylines {
            let mut t = format!("  - {}（{}", l.name, l.id);
            if let Some(r) = l.volume_role {
                t.push_str(&format!("，本卷{}", role_label(r)));
            }
            if l.status != StorylineStatus::Active {
                t.push_str(&format!("，{}", line_status_label(l.status)));
            }
            t.push_str("）：");
            t.push_str(&match l.last_chapter {
                Some(c) => format!("最近出现在第 {c} 章"),
                None => "还没有出现".to_string(),
            });
            if let (Some(g), Some(m)) = (l.gap, l.max_gap) {
                t.push_str(&format!("；已隔 {g} 章（最多可隔 {m} 章）"));
                if l.over_gap {
                    t.push_str(" ⚠ 超出调度");
                }
            }
            if let (Some(r @ 1..), Some(m)) = (l.run, l.max_run) {
                t.push_str(&format!("；连续 {r} 章（上限 {m} 章）"));
                if l.over_run {
                    t.push_str(" ⚠ 超出调度");
                }
            }
            out.push_str(&t);
            out.push('\n');
        }
    }
}

/// Foreshadowing, pending actions and the reviews due.
fn push_todo(out: &mut String, s: &Status) {
    out.push_str(&format!(
        "伏笔：未回收 {} 个，逾期 {} 个{}\n",
        s.foreshadowing.open,
        s.foreshadowing.overdue.len(),
        if s.foreshadowing.overdue.is_empty() {
            String::new()
        } else {
            format!("（{}）", s.foreshadowing.overdue.join("、"))
        }
    ));
    if s.pending_actions.is_empty() {
        out.push_str("待处理事项：无\n");
    } else {
        let items: Vec<String> = s
            .pending_actions
            .iter()
            .map(|a| format!("{}（{}）", a.id, a.kind))
            .collect();
        out.push_str(&format!("待处理事项：{}\n", items.join("、")));
    }
    if !s.reviews.due.is_empty() {
        let items: Vec<String> = s
            .reviews
            .due
            .iter()
            .map(|r| format!("{}（第 {} 章，{}）", r.kind.label(), r.chapter, r.command))
            .collect();
        out.push_str(&format!("待做的回顾：{}\n", items.join("、")));
    }
}

/// The lock, and a commit left interrupted.
fn push_lock(out: &mut String, s: &Status) {
    match &s.lock {
        LockState::Free => out.push_str("锁：空闲\n"),
        LockState::Held { info, .. } => {
            out.push_str(&format!("锁：{}\n", lock::describe(info)));
        }
        LockState::Stale { why, .. } => out.push_str(&format!(
            "锁：僵尸锁（{why}），运行 novel chapter recover 清除\n"
        )),
    }
    if let Some(n) = s.interrupted_commit {
        out.push_str(&format!(
            "被中断的提交：第 {n} 章，运行 novel chapter recover 补完\n"
        ));
    }
}

/// The drift metrics as the author reads them: `平均句长 偏离 26%、对话占比 偏离 62%`.
fn drift_metrics(metrics: &[novel_core::model::style::DriftMetric]) -> String {
    let parts: Vec<String> = metrics
        .iter()
        .map(|m| {
            format!(
                "{} 偏离 {:.0}%",
                novel_store::figures::drift::metric_label(&m.name),
                m.deviation * 100.0
            )
        })
        .collect();
    parts.join("、")
}

/// The style drift verdict over the last chapters, and the correction on record.
fn push_drift(out: &mut String, s: &Status) {
    let d = &s.drift;
    let recorded = s.style_drift.as_ref().filter(|r| r.active);
    let line = match (d.status, d.window, recorded) {
        (Some(status), Some([a, b]), _) => {
            let mut t = format!(
                "文风：{}（第 {a}–{b} 章：{}）",
                d.label,
                drift_metrics(&d.metrics)
            );
            if d.correction_active {
                t.push_str("；纠偏指令生效中");
            } else if status == novel_core::drift::DriftStatus::Drifted {
                t.push_str("；运行 novel style drift 写入纠偏指令");
            }
            t
        }
        (_, _, Some(r)) => format!(
            "文风：纠偏生效中（第 {}–{} 章：{}）；现在无法复查：{}",
            r.window[0],
            r.window[1],
            drift_metrics(&r.metrics),
            d.unmeasured.as_deref().unwrap_or("")
        ),
        _ => format!("文风：未检测（{}）", d.unmeasured.as_deref().unwrap_or("")),
    };
    out.push_str(&line);
    out.push('\n');
}

/// Cost, tokens and time, summed from the pipeline logs by the one rule
/// ([`novel_store::figures::PipelineSums`]) the dashboard prints too.
fn push_cost(out: &mut String, s: &Status) {
    let p = &s.pipeline;
    let estimated = if p.estimated_usd <= 0.0 {
        String::new()
    } else if p.estimated_usd >= p.cost_usd {
        "（全部按 token 与价目表估算）".to_string()
    } else {
        format!("（其中 ${:.2} 按 token 与价目表估算）", p.estimated_usd)
    };
    let about = if p.split_tokens > 0 { "约" } else { "" };
    let lower = if p.chapters_without_cost > 0 {
        format!("；{} 章有环节没记下用量，实际更高", p.chapters_without_cost)
    } else {
        String::new()
    };
    out.push_str(&format!(
        "费用：${:.2}{estimated}；共 {} tokens（输入{about} {} / 输出{about} {}），流水线日志 {} 章，耗时 {:.1} 分钟{lower}\n",
        p.cost_usd,
        p.tokens,
        p.input_tokens,
        p.output_tokens,
        p.logs,
        p.duration_ms as f64 / 60000.0,
    ));
}

/// Skipped deltas worth a rebuild, and the problems found.
fn push_problems(out: &mut String, s: &Status) {
    if let Some(advice) = novel_core::ops::rebuild_advice(&s.skipped_chapters) {
        out.push_str(&format!("{advice}\n"));
    }
    if !s.problems.is_empty() {
        out.push_str("问题：\n");
        for p in &s.problems {
            out.push_str(&format!("  - {p}\n"));
        }
    }
}

pub fn run(global: &GlobalArgs) -> Result<Report, CliError> {
    // Status only reads the book: each file once ([`novel_store::io::ReadOnce`]).
    let _once = novel_store::io::ReadOnce::begin();
    let project = super::project(global)?;
    let status = gather(&project, &super::text_rules());
    let mut human = render(&status);
    // The model of every part of the book (`novel models`).
    let models = super::models::of_project(&project);
    human.push_str(&format!("{}\n", models.line()));
    let mut data = crate::output::to_data(&status)?;
    data["models"] = crate::output::to_data(&models)?;
    if !status.problems.is_empty() {
        return Err(CliError::new(
            "E_PROJECT_PROBLEMS",
            format!("项目有 {} 个问题（见上面的列表）", status.problems.len()),
            "",
            Exit::Problems,
        )
        .with_report(&data, human));
    }
    Ok(Report { data, human })
}
