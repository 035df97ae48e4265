//! The chapter pipeline's stage machine (PRD §8.2, §9.2; `002` §10.4): which stage may follow
//! which, what must be in `staging/` before a stage can be declared, and where an interrupted
//! chapter resumes. Pure: the store reports what it found in `staging/` as [`StagingFacts`].

use serde::Serialize;

use crate::model::common::GateDecision;
use crate::model::{Checkpoint, OrchestratorState, PipelineStage};

/// What one staged file looks like.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "state", content = "detail", rename_all = "snake_case")]
pub enum FileFact {
    Missing,
    Empty,
    /// Present but does not parse or does not validate (the reason).
    Invalid(String),
    Ok,
}

impl FileFact {
    pub fn ok(&self) -> bool {
        *self == FileFact::Ok
    }
}

/// The staging files of the in-flight chapter.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct StagingFacts {
    pub chapter_text: FileFact,
    pub summary: FileFact,
    pub delta: FileFact,
    /// The storyline the delta names, when it parses.
    pub storyline_id: Option<String>,
    /// `staging/storylines/<storyline_id>/memory.md`.
    pub memory: FileFact,
    pub evaluation: FileFact,
}

impl StagingFacts {
    /// Nothing staged (no chapter in flight).
    pub fn nothing() -> Self {
        StagingFacts {
            chapter_text: FileFact::Missing,
            summary: FileFact::Missing,
            delta: FileFact::Missing,
            storyline_id: None,
            memory: FileFact::Missing,
            evaluation: FileFact::Missing,
        }
    }
}

/// Why a stage change is refused.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, thiserror::Error)]
#[error("{reason}")]
pub struct StageRefusal {
    pub code: &'static str,
    pub reason: String,
    pub hint: String,
}

fn refuse(code: &'static str, reason: String, hint: &str) -> StageRefusal {
    StageRefusal {
        code,
        reason,
        hint: hint.to_string(),
    }
}

pub fn stage_name(s: Option<PipelineStage>) -> &'static str {
    match s {
        None => "空闲",
        Some(PipelineStage::Drafting) => "drafting（初稿生成中）",
        Some(PipelineStage::Drafted) => "drafted（初稿与摘要已生成）",
        Some(PipelineStage::Refined) => "refined（润色完成）",
        Some(PipelineStage::Judged) => "judged（评估完成）",
        Some(PipelineStage::Revising) => "revising（修订中）",
        Some(PipelineStage::Committed) => "committed（已提交）",
    }
}

fn need(fact: &FileFact, what: &str, path: &str, missing: &mut Vec<String>) {
    match fact {
        FileFact::Ok => {}
        FileFact::Missing => missing.push(format!("{what}（{path}）不存在")),
        FileFact::Empty => missing.push(format!("{what}（{path}）是空的")),
        FileFact::Invalid(why) => missing.push(format!("{what}（{path}）无效：{why}")),
    }
}

/// States in which chapters may be written: the trial chapters of QUICK_START, the WRITING
/// loop and its revision sub-state.
pub fn writing_allowed(state: OrchestratorState) -> bool {
    matches!(
        state,
        OrchestratorState::QuickStart
            | OrchestratorState::Writing
            | OrchestratorState::ChapterRewrite
    )
}

/// Checks `novel chapter begin n`.
pub fn check_begin(cp: &Checkpoint, n: u32) -> Result<(), StageRefusal> {
    if let Some(inflight) = cp.inflight_chapter {
        if inflight == n {
            return Ok(()); // resuming the in-flight chapter
        }
        return Err(refuse(
            "E_INFLIGHT",
            format!(
                "第 {inflight} 章还在写（阶段 {}），不能开始第 {n} 章",
                stage_name(cp.pipeline_stage)
            ),
            "先完成或恢复在写的章节：novel chapter recover",
        ));
    }
    let next = cp.last_completed_chapter + 1;
    if n != next {
        return Err(refuse(
            "E_CHAPTER_ORDER",
            format!(
                "只能开始第 {next} 章（已完成到第 {} 章），不能开始第 {n} 章",
                cp.last_completed_chapter
            ),
            "章节必须按顺序写",
        ));
    }
    if !writing_allowed(cp.orchestrator_state) {
        return Err(refuse(
            "E_STATE",
            format!("当前状态是 {:?}，不能写章节", cp.orchestrator_state),
            "用 /novel:start 完成卷规划或卷末回顾后再续写",
        ));
    }
    Ok(())
}

/// Checks `novel chapter stage to` for chapter `n`.
pub fn check_stage(
    cp: &Checkpoint,
    n: u32,
    to: PipelineStage,
    facts: &StagingFacts,
) -> Result<(), StageRefusal> {
    use PipelineStage as S;
    if cp.inflight_chapter != Some(n) {
        return Err(refuse(
            "E_NOT_INFLIGHT",
            match cp.inflight_chapter {
                Some(i) => format!("在写的是第 {i} 章，不是第 {n} 章"),
                None => format!("第 {n} 章没有在写"),
            },
            "先 novel chapter begin N",
        ));
    }
    let from = cp.pipeline_stage;
    let gate = cp
        .gate
        .as_ref()
        .filter(|g| g.chapter == n)
        .map(|g| g.decision);
    let allowed = match to {
        S::Drafted => matches!(from, Some(S::Drafting | S::Revising | S::Drafted)),
        S::Refined => matches!(from, Some(S::Drafted | S::Refined)),
        S::Judged => matches!(from, Some(S::Refined | S::Judged)),
        S::Revising => from == Some(S::Judged) && gate == Some(GateDecision::Revise),
        S::Drafting => {
            from == Some(S::Judged)
                && matches!(gate, Some(GateDecision::Rewrite | GateDecision::Pause))
        }
        S::Committed => false,
    };
    if !allowed {
        let reason = match to {
            S::Committed => "committed 只能由 novel chapter commit 设置".to_string(),
            S::Revising => format!(
                "只有门控结论为 revise 时才能进入修订（当前阶段 {}，门控 {:?}）",
                stage_name(from),
                gate
            ),
            S::Drafting => format!(
                "只有门控结论为 rewrite 或作者决定重写（pause）时才能回到 drafting（当前阶段 {}）",
                stage_name(from)
            ),
            _ => format!("不能从 {} 进入 {}", stage_name(from), stage_name(Some(to))),
        };
        return Err(refuse(
            "E_STAGE_ORDER",
            reason,
            "顺序为 drafting → drafted → refined → judged →（门控）→ commit；novel chapter recover 会告诉你从哪里继续",
        ));
    }
    let mut missing = Vec::new();
    let stem = format!("chapter-{n:03}");
    match to {
        S::Drafted => {
            need(
                &facts.chapter_text,
                "章节初稿",
                &format!("staging/chapters/{stem}.md"),
                &mut missing,
            );
            need(
                &facts.summary,
                "章节摘要",
                &format!("staging/summaries/{stem}-summary.md"),
                &mut missing,
            );
            need(
                &facts.delta,
                "状态增量",
                &format!("staging/state/{stem}-delta.json"),
                &mut missing,
            );
            if let Some(id) = &facts.storyline_id {
                need(
                    &facts.memory,
                    "故事线记忆",
                    &format!("staging/storylines/{id}/memory.md"),
                    &mut missing,
                );
            }
        }
        S::Refined => {
            need(
                &facts.chapter_text,
                "润色后的章节",
                &format!("staging/chapters/{stem}.md"),
                &mut missing,
            );
        }
        S::Judged => {
            need(
                &facts.evaluation,
                "评估结果",
                &format!("staging/evaluations/{stem}-eval.json"),
                &mut missing,
            );
        }
        _ => {}
    }
    if !missing.is_empty() {
        return Err(refuse(
            "E_STAGING",
            format!("不能进入 {}：{}", stage_name(Some(to)), missing.join("；")),
            "先让对应的 agent 写出这些文件",
        ));
    }
    Ok(())
}

/// Where an interrupted chapter resumes (§9.2), as the step the skill runs next.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ResumeStep {
    /// Nothing in flight.
    Idle,
    RunChapterWriter,
    RunSummarizer,
    RunStyleRefiner,
    RunQualityJudge,
    RunGate,
    /// Gate passed: commit.
    Commit,
    /// Gate said polish: one StyleRefiner pass, then commit.
    PolishThenCommit,
    ReviseWithFixes,
    /// Gate paused: the author decides.
    AskAuthor,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Resume {
    pub chapter: Option<u32>,
    pub stage: Option<PipelineStage>,
    pub step: ResumeStep,
    pub message: String,
}

/// The §9.2 recovery rule for the checkpoint and what is in staging.
pub fn resume_point(cp: &Checkpoint, facts: &StagingFacts) -> Resume {
    use PipelineStage as S;
    let Some(n) = cp.inflight_chapter else {
        return Resume {
            chapter: None,
            stage: cp.pipeline_stage,
            step: ResumeStep::Idle,
            message: format!(
                "没有在写的章节；下一章是第 {} 章",
                cp.last_completed_chapter + 1
            ),
        };
    };
    let gate = cp.gate.as_ref().filter(|g| g.chapter == n);
    let (step, message) = match cp.pipeline_stage {
        Some(S::Drafting) | None | Some(S::Committed) if !facts.chapter_text.ok() => (
            ResumeStep::RunChapterWriter,
            "还没有初稿：重新运行 ChapterWriter 写整章".to_string(),
        ),
        Some(S::Drafting) | None | Some(S::Committed) => (
            ResumeStep::RunSummarizer,
            "初稿已在 staging：从 Summarizer 继续（摘要、状态增量、故事线记忆），然后 novel chapter stage drafted".to_string(),
        ),
        Some(S::Revising) if !facts.chapter_text.ok() => (
            ResumeStep::ReviseWithFixes,
            "修订中且没有修订稿：按 required_fixes 重新运行 ChapterWriter 修订".to_string(),
        ),
        Some(S::Revising) => (
            ResumeStep::RunSummarizer,
            "修订稿已在 staging：重新运行 Summarizer，然后 novel chapter stage drafted".to_string(),
        ),
        Some(S::Drafted) => (
            ResumeStep::RunStyleRefiner,
            "初稿与摘要已就绪：从 StyleRefiner 继续，然后 novel chapter stage refined".to_string(),
        ),
        Some(S::Refined) => (
            ResumeStep::RunQualityJudge,
            "润色已完成：从 QualityJudge 继续，然后 novel chapter stage judged".to_string(),
        ),
        Some(S::Judged) => match gate.map(|g| (g.decision, g.force_passed, g.accepted_by_author)) {
            None => (ResumeStep::RunGate, format!("评估已完成：运行 novel chapter gate {n}")),
            Some((GateDecision::Pass, _, _)) | Some((_, true, _)) | Some((_, _, true)) => {
                (ResumeStep::Commit, format!("门控已通过：运行 novel chapter commit {n}"))
            }
            Some((GateDecision::Polish, _, _)) => (
                ResumeStep::PolishThenCommit,
                format!("门控结论 polish：StyleRefiner 二次润色后 novel chapter commit {n}"),
            ),
            Some((GateDecision::Revise, _, _)) => (
                ResumeStep::ReviseWithFixes,
                "门控结论 revise：novel chapter stage revising，再按 required_fixes 修订".to_string(),
            ),
            Some((GateDecision::Pause | GateDecision::Rewrite, _, _)) => (
                ResumeStep::AskAuthor,
                "门控暂停：请作者决定（接受 commit --accept，或 stage drafting 重写）".to_string(),
            ),
        },
    };
    Resume {
        chapter: Some(n),
        stage: cp.pipeline_stage,
        step,
        message,
    }
}
