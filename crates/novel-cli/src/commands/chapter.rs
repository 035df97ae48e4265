//! `novel chapter begin|stage|gate|commit|recover`: the chapter transaction.

use novel_store::stage::{CommitFigures, StageFigures};
use serde::Serialize;

use novel_core::context::Agent;
use novel_core::diagnostic::Diagnostic;
use novel_core::gate::KeyReason;
use novel_core::model::checkpoint::ErrorRecord;
use novel_core::model::{OrchestratorState, PipelineStage};
use novel_core::pipeline;
use novel_store::lock;
use novel_store::{Project, layout};

use super::{lock_error, stale_after};
use crate::args::{
    ChapterCommand, ChapterCommitArgs, ChapterFailArgs, ChapterStageArgs, GlobalArgs,
};
use crate::output::{CliError, Exit, Report};

/// `novel chapter begin`'s `--json` data.
#[derive(Serialize)]
struct BeginData<'a> {
    chapter: u32,
    resumed: bool,
    continuity: &'a [Diagnostic],
    key_chapter: &'a [KeyReason],
    stage: Option<PipelineStage>,
    broke_stale_lock: &'a Option<String>,
    orchestrator_state: OrchestratorState,
    recovered_error: &'a Option<ErrorRecord>,
    paths: StagingPaths,
    /// Last: the client shows the head of a tool's output, and the session that began the
    /// chapter needs no token (only a script acting from another process does).
    token: &'a str,
}

/// The in-flight chapter's staging files.
#[derive(Serialize)]
struct StagingPaths {
    chapter: String,
    summary: String,
    delta: String,
    evaluation: String,
}

/// `novel chapter commit`'s `--json` data: the figures the skill reports per chapter.
#[derive(Serialize)]
struct CommitData<'a> {
    chapter: u32,
    last_completed_chapter: u32,
    orchestrator_state: OrchestratorState,
    files: Vec<&'a str>,
    force_passed: bool,
    #[serde(flatten)]
    figures: &'a CommitFigures,
    memory: &'a novel_store::memory::Recorded,
}

/// `novel chapter fail`'s `--json` data.
#[derive(Serialize)]
struct FailData<'a> {
    chapter: u32,
    orchestrator_state: OrchestratorState,
    error: &'a Option<ErrorRecord>,
    stage: Option<PipelineStage>,
    lock_released: bool,
}

/// The envelope name of a `chapter` subcommand.
pub fn command_name(cmd: &ChapterCommand) -> &'static str {
    match cmd {
        ChapterCommand::Begin(_) => "chapter begin",
        ChapterCommand::Stage(_) => "chapter stage",
        ChapterCommand::Gate(_) => "chapter gate",
        ChapterCommand::Commit(_) => "chapter commit",
        ChapterCommand::Recover => "chapter recover",
        ChapterCommand::Fail(_) => "chapter fail",
    }
}

pub fn run(global: &GlobalArgs, cmd: ChapterCommand) -> Result<Report, CliError> {
    let project = match super::project(global) {
        Ok(p) => p,
        Err(e) if matches!(cmd, ChapterCommand::Recover) => return recover_unbuilt(global, e),
        Err(e) => return Err(e),
    };
    match cmd {
        ChapterCommand::Begin(a) => begin(&project, a.chapter, a.owner_pid),
        ChapterCommand::Stage(a) => stage(&project, &a),
        ChapterCommand::Gate(a) => {
            let token = session_token(&project, a.token.as_deref())?;
            gate_cmd(&project, a.chapter, &token, a.commit)
        }
        ChapterCommand::Commit(a) => commit(&project, &a),
        ChapterCommand::Recover => recover(&project),
        ChapterCommand::Fail(a) => fail(&project, &a),
    }
}

/// The lock token a chapter command acts with: `--token`, or this session's lock
/// (`novel_store::lock::token_or_session`).
fn session_token(project: &Project, given: Option<&str>) -> Result<String, CliError> {
    lock::token_or_session(project, given).map_err(lock_error)
}

/// One mapping for every refusal of the chapter transaction (`novel_store::stage`).
fn chapter_error(e: novel_store::stage::ChapterError, n: u32) -> CliError {
    use novel_store::chapter::PlanError;
    use novel_store::stage::ChapterError as E;
    match e {
        E::Lock(l) => lock_error(l),
        E::Store(s) | E::Plan(PlanError::Store(s)) if s.is_conflict() => CliError::from(s),
        E::Plan(PlanError::Ops(o)) => super::ops_error(o),
        e @ (E::Evaluation { .. } | E::EditRatio { .. }) => {
            // The findings, or the measure, go with the refusal: the skill hands them back.
            let human = e.to_string();
            let data = match &e {
                E::Evaluation { findings } => serde_json::json!({ "findings": findings }),
                E::EditRatio {
                    chapter,
                    report,
                    cap,
                } => serde_json::json!({
                    "chapter": chapter,
                    "max_edit_ratio": cap,
                    "edit_ratio": report,
                    "draft": layout::staging_draft(*chapter),
                }),
                _ => serde_json::Value::Null,
            };
            // The message says it all: no separate human report (it would print twice).
            CliError::new(e.code(), human, e.hint(n), Exit::Problems)
                .with_report(&data, String::new())
        }
        e => {
            let exit = if e.is_problem() {
                Exit::Problems
            } else if e.is_conflict() {
                Exit::Conflict
            } else {
                Exit::Usage
            };
            CliError::new(e.code(), e.to_string(), e.hint(n), exit)
        }
    }
}

fn begin(project: &Project, n: u32, owner: Option<u32>) -> Result<Report, CliError> {
    let pid = owner.unwrap_or_else(lock::session_pid);
    let begun = novel_store::stage::begin(project, n, pid, stale_after(project)?)
        .map_err(|e| chapter_error(e, n))?;
    let novel_store::stage::Begun {
        checkpoint: cp,
        lock: got,
        resuming,
        from_state,
        recovered,
        key_reasons: key_chapter,
    } = begun;
    let mut human = if resuming {
        format!(
            "继续第 {n} 章（阶段 {}）。\n",
            pipeline::stage_name(cp.pipeline_stage)
        )
    } else {
        format!("开始第 {n} 章：写初稿，已取得项目锁。\n")
    };
    human.push_str(&format!(
        "本会话的命令不必再给锁令牌；从别的进程推进时用 --token {}\n",
        got.info.token
    ));
    if let Some(b) = &got.broke_stale {
        human.push_str(&format!("已清除僵尸锁：{b}\n"));
    }
    if let Some(e) = &recovered {
        human.push_str(&format!(
            "从出错处恢复（上次原因：{}），编排状态回到 {}。\n",
            e.reason,
            novel_core::context::session::state_name(cp.orchestrator_state)
        ));
    } else if from_state == OrchestratorState::VolReview {
        human.push_str(&format!(
            "本卷计划的章节已写完，第 {n} 章超出计划继续写；编排状态回到 {}。\n",
            novel_core::context::session::state_name(cp.orchestrator_state)
        ));
    }
    let continuity = continuity_of(project, n, &mut human);
    if !key_chapter.is_empty() {
        human.push_str("本章是关键章：评审需要第二位裁判。\n");
    }
    let data = BeginData {
        chapter: n,
        token: &got.info.token,
        resumed: resuming,
        continuity: &continuity,
        key_chapter: &key_chapter,
        stage: cp.pipeline_stage,
        broke_stale_lock: &got.broke_stale,
        orchestrator_state: cp.orchestrator_state,
        recovered_error: &recovered,
        paths: StagingPaths {
            chapter: layout::staging_chapter(n),
            summary: layout::staging_summary(n),
            delta: layout::staging_delta(n),
            evaluation: layout::staging_evaluation(n),
        },
    };
    Report::new(&data, human)
}

/// The contract's gaps the writer bridges (`check continuity --chapter N`), told in `human`; a
/// check that cannot run never stops the chapter from starting.
fn continuity_of(project: &Project, n: u32, human: &mut String) -> Vec<Diagnostic> {
    let found = match novel_store::plan::continuity(project, novel_store::plan::Scope::Chapter(n)) {
        Ok(r) => r.findings,
        Err(e) => {
            human.push_str(&format!("（衔接检查没有完成：{e}）\n"));
            Vec::new()
        }
    };
    if !found.is_empty() {
        human.push_str(&format!(
            "第 {n} 章契约与前文有 {} 处出入，写作时要在正文里衔接：\n",
            found.len()
        ));
        human.push_str(&novel_core::diagnostic::render_all(&found));
    }
    found
}

fn parse_stage(s: &str) -> Result<PipelineStage, CliError> {
    PipelineStage::from_name(s)
        .filter(|st| st.set_by_stage_command())
        .ok_or_else(|| {
            let names: Vec<&str> = PipelineStage::ALL
                .into_iter()
                .filter(|st| st.set_by_stage_command())
                .map(PipelineStage::name)
                .collect();
            CliError::new(
                "E_USAGE",
                format!("没有这个阶段：{s}"),
                format!(
                    "可选的阶段：novel chapter stage {} （提交用 novel chapter commit）",
                    names.join(" | ")
                ),
                Exit::Usage,
            )
        })
}

fn stage(project: &Project, a: &ChapterStageArgs) -> Result<Report, CliError> {
    let to = parse_stage(&a.stage)?;
    let figures = StageFigures {
        model: a.model.clone(),
        input_tokens: a.input_tokens,
        output_tokens: a.output_tokens,
        tokens: a.tokens,
        duration_ms: a.duration_ms,
        cost_usd: a.cost_usd,
        by_author: a.by_author,
        note: a.note.clone(),
    };
    let token = session_token(project, a.token.as_deref())?;
    let moved = novel_store::stage::advance(project, to, &token, &figures, &text_tools())
        .map_err(|e| chapter_error(e, 0))?;
    match moved.stage {
        PipelineStage::Drafted => keep_packet(project, moved.chapter, Agent::StyleRefiner),
        PipelineStage::Refined | PipelineStage::Repaired => {
            keep_packet(project, moved.chapter, Agent::QualityJudge)
        }
        _ => {}
    }
    let mut human = format!(
        "第 {} 章：{} → {}（修订次数 {}）。\n",
        moved.chapter,
        pipeline::stage_name(moved.from),
        pipeline::stage_name(Some(moved.stage)),
        moved.revision_count
    );
    if let Some(r) = &moved.edit_ratio {
        use novel_core::edits::percent;
        human.push_str(&format!(
            "润色改动：叙述 {}、对话 {}（共改 {} 字）。\n",
            percent(r.narration.ratio),
            percent(r.dialogue.ratio),
            r.total.changed
        ));
    }
    if !moved.archived.is_empty() {
        human.push_str(&format!(
            "上一轮的稿件与评估已存档到 {}。\n",
            layout::revision_dir(moved.chapter, moved.revision_count)
        ));
    }
    Report::new(&moved, human)
}

/// The packet of the agent the stage just reached dispatches (the refiner after `drafted` or a
/// polish verdict, the judge after `refined` or, for its re-check, after `repaired`), kept in `staging/logs/` for the agent to read
/// when the SubagentStart hook could not hand it over (those agents have Read, not Bash).
/// Best effort: a packet that cannot be assembled is the hook's to report.
fn keep_packet(project: &Project, n: u32, agent: Agent) {
    if let Ok((_, text)) = super::context::packet_text(project, agent, Some(n), None, None) {
        let rel = layout::staging_context(n, agent.name());
        let _ = novel_store::io::write_atomic(&project.path(&rel), text.as_bytes());
    }
}

/// What the stages need of `novel-text`: the normalisation of the judge's quotes, the
/// segmentation of the edit measure.
fn text_tools() -> novel_store::stage::TextTools<'static> {
    novel_store::stage::TextTools {
        normalize: &novel_text::normalize::normalize_str,
        segment: &segment,
    }
}

fn segment(text: &str) -> novel_core::edits::Segmented {
    novel_text::segment::Document::new(text).segmented()
}

fn gate_cmd(project: &Project, n: u32, token: &str, then_commit: bool) -> Result<Report, CliError> {
    let result = novel_store::stage::gate(
        project,
        n,
        token,
        &novel_text::normalize::normalize_str,
        &super::craft::gate_check,
    )
    .map_err(|e| chapter_error(e, n))?;
    let passed = result.decision == novel_core::model::common::GateDecision::Pass;
    if result.decision == novel_core::model::common::GateDecision::Polish {
        keep_packet(project, n, Agent::StyleRefiner);
    }
    let mut human = format!(
        "第 {n} 章门控：{}（总分 {}{}）\n",
        result.decision.label(),
        result.overall_text,
        if result.force_passed {
            "，强制通过 force_passed"
        } else {
            ""
        }
    );
    for r in &result.reasons {
        human.push_str(&format!("  · {r}\n"));
    }
    for f in &result.fixes_not_done {
        human.push_str(&format!(
            "  未做到的阻断性修订：{}〔{}〕{}\n",
            f.id, f.fix.target, f.fix.instruction
        ));
    }
    for f in &result.required_fixes {
        human.push_str(&format!("  修订：[{}] {}\n", f.target, f.instruction));
    }
    if !then_commit {
        return Report::new(&result, human);
    }
    // `--commit`: a pass is committed by the same call (its own journal, after the gate's:
    // interrupted in between, the chapter resumes at `commit`). `data.commit` is what
    // `chapter commit` would have answered, `null` when the verdict was not a pass.
    let mut data = crate::output::to_data(&result)?;
    data["commit"] = serde_json::Value::Null;
    if passed {
        let committed = commit(
            project,
            &ChapterCommitArgs {
                chapter: n,
                token: Some(token.to_string()),
                accept: false,
            },
        )?;
        data["commit"] = committed.data;
        // Done: the ways on from the verdict (a commit) are spent, and the main conversation
        // keeps every answer it reads (issue 38: nothing it does not need).
        data["moves"] = serde_json::json!([]);
        human.push_str(&committed.human);
    }
    Ok(Report { data, human })
}

fn commit(project: &Project, a: &ChapterCommitArgs) -> Result<Report, CliError> {
    let n = a.chapter;
    let count = |t: &str| novel_text::count::count(t).chars;
    let token = session_token(project, a.token.as_deref())?;
    let done = novel_store::stage::commit(project, n, &token, a.accept, &count)
        .map_err(|e| chapter_error(e, n))?;
    let (cp, journal, memory) = (&done.checkpoint, &done.journal, &done.memory);
    // The figures the skill reports per chapter, as the pipeline log records them.
    let figures = done.figures(n);
    let data = CommitData {
        chapter: n,
        last_completed_chapter: cp.last_completed_chapter,
        orchestrator_state: cp.orchestrator_state,
        files: journal.writes.iter().map(|w| w.path.as_str()).collect(),
        force_passed: done.gate.as_ref().is_some_and(|g| g.force_passed),
        figures: &figures,
        memory,
    };
    Report::new(
        &data,
        format!(
            "第 {n} 章已提交（{}字，{} 个文件），锁已释放。{}\n{}",
            figures.chars.map_or("?".to_string(), |c| c.to_string()),
            journal.writes.len(),
            if cp.orchestrator_state == novel_core::model::OrchestratorState::VolReview {
                "本卷最后一章完成，进入卷末回顾（VOL_REVIEW）。"
            } else {
                ""
            },
            super::memory::render_recorded(memory)
        ),
    )
}

fn fail(project: &Project, a: &ChapterFailArgs) -> Result<Report, CliError> {
    let n = a.chapter;
    let reason = a.reason.as_str();
    let token = session_token(project, a.token.as_deref())?;
    let cp =
        novel_store::stage::fail(project, n, &token, reason).map_err(|e| chapter_error(e, n))?;
    let data = FailData {
        chapter: n,
        orchestrator_state: cp.orchestrator_state,
        error: &cp.error,
        stage: cp.pipeline_stage,
        lock_released: true,
    };
    Report::new(
        &data,
        format!(
            "第 {n} 章记为出错（{reason}），等待重试，锁已释放；staging 保持原样。\n之后运行 novel chapter begin {n} 从 {} 继续。\n",
            pipeline::stage_name(cp.pipeline_stage)
        ),
    )
}

/// `chapter recover` where there is no project (yet): the build directories a killed `novel
/// init`/`import` left in the directory (`--project DIR`: beside DIR, and in it) are removed;
/// with none, the directory is simply not a project (`not_a_project`).
fn recover_unbuilt(global: &GlobalArgs, not_a_project: CliError) -> Result<Report, CliError> {
    let here = std::env::current_dir().unwrap_or_default();
    let dirs: Vec<std::path::PathBuf> = match &global.project {
        Some(d) => {
            let d = novel_store::project::absolute(d);
            d.parent()
                .map(|p| p.to_path_buf())
                .into_iter()
                .chain([d])
                .collect()
        }
        None => vec![here],
    };
    let mut actions = Vec::new();
    for d in &dirs {
        for name in novel_store::chapter::sweep_build_dirs(d) {
            actions.push(format!(
                "清理了中断的 novel init/import 留下的临时目录 {}",
                d.join(name).display()
            ));
        }
    }
    if actions.is_empty() {
        return Err(not_a_project);
    }
    let mut human: String = actions.iter().map(|a| format!("{a}。\n")).collect();
    human.push_str("这里还没有小说项目：重新运行中断的那条 novel init 或 novel import 即可。\n");
    let data = serde_json::json!({
        "actions": actions,
        "lock": null,
        "resume": null,
        "staging": null,
        "last_completed_chapter": 0,
    });
    Report::new(&data, human)
}

fn recover(project: &Project) -> Result<Report, CliError> {
    let r = novel_store::stage::recover(project, stale_after(project)?)
        .map_err(|e| chapter_error(e, 0))?;
    let mut human = String::new();
    for a in &r.actions {
        human.push_str(&format!("{a}。\n"));
    }
    if let Some(n) = &r.lock {
        human.push_str(&format!("{n}。\n"));
    }
    human.push_str(&format!("下一步：{}\n", r.resume.message));
    Report::new(&r, human)
}
