//! `novel status`: where the book stands, computed from the files (never guessed), and the
//! pipeline logs summed. Tolerant: an unreadable file is reported, not fatal — status is what
//! an author runs when something is wrong.

use std::time::Duration;

use serde_json::{Value, json};

use novel_core::model::PipelineLog;
use novel_core::model::common::{ForeshadowScope, ForeshadowStatus};
use novel_core::ops::SKIPPED_REBUILD_THRESHOLD;
use novel_store::lock::{self, LockState};
use novel_store::{Project, chapter as tx, io, layout, state};

use crate::cli::GlobalArgs;
use crate::output::{CliError, Report};

fn chapter_numbers(project: &Project, dir: &str, suffix: &str) -> Vec<u32> {
    let mut out: Vec<u32> = std::fs::read_dir(project.path(dir))
        .map(|r| {
            r.filter_map(|e| e.ok())
                .filter_map(|e| {
                    let name = e.file_name().to_string_lossy().into_owned();
                    name.strip_prefix("chapter-")?
                        .strip_suffix(suffix)?
                        .parse()
                        .ok()
                })
                .collect()
        })
        .unwrap_or_default();
    out.sort_unstable();
    out
}

pub fn run(global: &GlobalArgs) -> Result<Report, CliError> {
    let project = super::project(global)?;
    let mut problems: Vec<String> = Vec::new();
    let cp = match tx::load_checkpoint(&project) {
        Ok(cp) => Some(cp),
        Err(e) => {
            problems.push(format!("断点文件有问题：{e}"));
            None
        }
    };
    let settings: novel_core::model::Settings =
        io::read_json(&project.path(layout::SETTINGS), "项目设置").unwrap_or_default();
    let committed = chapter_numbers(&project, "chapters", ".md");

    // Pipeline logs summed; unknown figures stay unknown.
    let mut gate_scores = std::collections::BTreeMap::new();
    let (mut input_tokens, mut output_tokens, mut duration_ms, mut cost) = (0u64, 0u64, 0u64, 0f64);
    let (mut logs, mut revisions, mut forced, mut unknown_cost) = (0usize, 0u32, 0usize, 0usize);
    for n in chapter_numbers(&project, "logs", "-log.json") {
        let Ok(log) =
            io::read_json::<PipelineLog>(&project.path(&layout::log_file(n)), "流水线日志")
        else {
            problems.push(format!("{} 无法读取", layout::log_file(n)));
            continue;
        };
        logs += 1;
        if let Some(o) = log.extra.get("gate_overall").and_then(Value::as_f64) {
            gate_scores.insert(n, o);
        }
        revisions += log.revisions;
        forced += usize::from(log.force_passed);
        // Known figures are summed stage by stage; a chapter with any stage's cost unknown is
        // counted, so the author knows the sum is a lower bound.
        let mut cost_known = !log.stages.is_empty();
        for s in &log.stages {
            input_tokens += s.input_tokens.unwrap_or(0);
            output_tokens += s.output_tokens.unwrap_or(0);
            duration_ms += s.duration_ms.unwrap_or(0);
            match s.extra.get("cost_usd").and_then(Value::as_f64) {
                Some(c) => cost += c,
                None => cost_known = false,
            }
        }
        unknown_cost += usize::from(!cost_known);
    }

    // Scores: the score the gate counted (the log's `gate_overall`: recomputed from the
    // weights, the lower of two judges); for older logs, recomputed from the evaluation.
    let mut scores = Vec::new();
    for n in &committed {
        let score = gate_scores.get(n).copied().or_else(|| {
            io::read_json::<novel_core::model::Evaluation>(
                &project.path(&layout::evaluation_file(*n)),
                "评估",
            )
            .ok()
            .map(|e| novel_core::gate::weighted_overall(&e).0)
        });
        if let Some(o) = score {
            scores.push((*n, o));
        }
    }
    let average = (!scores.is_empty())
        .then(|| scores.iter().map(|(_, s)| s).sum::<f64>() / scores.len() as f64);

    // Foreshadowing: open threads and overdue short ones.
    let last = cp.as_ref().map_or(0, |c| c.last_completed_chapter);
    let (mut open, mut overdue) = (0usize, Vec::new());
    match state::load_global(&project) {
        Ok(g) => {
            for f in &g.foreshadowing {
                if f.status != ForeshadowStatus::Resolved {
                    open += 1;
                    if f.scope == ForeshadowScope::Short
                        && f.target_resolve_range.is_some_and(|[_, end]| last > end)
                    {
                        overdue.push(f.id.clone());
                    }
                }
            }
        }
        Err(e) => problems.push(format!("伏笔文件有问题：{e}")),
    }
    let skipped = tx::skipped_deltas(&project).unwrap_or_else(|e| {
        problems.push(format!("变更日志有问题：{e}"));
        Vec::new()
    });
    let lock_state = lock::status(
        &project,
        Duration::from_secs(u64::from(settings.lock.stale_minutes) * 60),
    );
    let journal = tx::read_journal(&project).ok().flatten().map(|j| j.chapter);

    let mut human = String::new();
    if let Some(t) = &settings.title {
        human.push_str(&format!("《{t}》\n"));
    }
    if let Some(c) = &cp {
        human.push_str(&format!(
            "第 {} 卷，已完成 {} 章，状态 {:?}{}\n",
            c.current_volume,
            c.last_completed_chapter,
            c.orchestrator_state,
            match c.inflight_chapter {
                Some(n) => format!(
                    "，第 {n} 章在写（{}）",
                    novel_core::pipeline::stage_name(c.pipeline_stage)
                ),
                None => String::new(),
            }
        ));
    }
    match average {
        Some(a) => human.push_str(&format!("评分均值 {a:.2}（{} 章）", scores.len())),
        None => human.push_str("还没有评分"),
    }
    human.push_str(&format!(
        "；未回收伏笔 {open} 个，逾期 {} 个\n",
        overdue.len()
    ));
    human.push_str(&format!(
        "流水线日志 {logs} 章：修订 {revisions} 次，强制通过 {forced} 章，输入 {input_tokens} / 输出 {output_tokens} tokens，耗时 {:.1} 分钟，费用 ${cost:.2}{}\n",
        duration_ms as f64 / 60000.0,
        if unknown_cost > 0 { format!("（{unknown_cost} 章有阶段费用未知，实际更高）") } else { String::new() }
    ));
    match &lock_state {
        LockState::Held { info, .. } => human.push_str(&format!("锁：{}\n", lock::describe(info))),
        LockState::Stale { why, .. } => human.push_str(&format!(
            "锁：僵尸锁（{why}），运行 novel chapter recover\n"
        )),
        LockState::Free => {}
    }
    if let Some(n) = journal {
        human.push_str(&format!(
            "第 {n} 章的提交被中断：运行 novel chapter recover 补完\n"
        ));
    }
    if skipped.len() >= SKIPPED_REBUILD_THRESHOLD {
        human.push_str(&format!(
            "已有 {} 章状态增量被跳过：建议重新提取这些章的增量并运行 novel state rebuild\n",
            skipped.len()
        ));
    }
    for p in &problems {
        human.push_str(&format!("问题：{p}\n"));
    }
    let mut lock_json = serde_json::to_value(&lock_state).unwrap_or_default();
    if let Some(info) = lock_json.get_mut("info").and_then(Value::as_object_mut) {
        info.remove("token");
    }
    Ok(Report {
        data: json!({
            "title": settings.title,
            "checkpoint": cp,
            "chapters_committed": committed.len(),
            "average_score": average,
            "foreshadowing": {"open": open, "overdue": overdue},
            "pipeline": {"logs": logs, "revisions": revisions, "force_passed": forced,
                "input_tokens": input_tokens, "output_tokens": output_tokens,
                "duration_ms": duration_ms, "cost_usd": cost, "chapters_without_cost": unknown_cost},
            "lock": lock_json,
            "interrupted_commit": journal,
            "skipped_chapters": skipped,
            "recommend_rebuild": skipped.len() >= SKIPPED_REBUILD_THRESHOLD,
            "problems": problems,
        }),
        human,
    })
}
