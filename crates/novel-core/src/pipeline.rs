//! The chapter pipeline's stage machine (PRD §8.2, §9.2; `002` §10.4): which stage may follow
//! which, what must be in `staging/` before a stage can be declared, and where an interrupted
//! chapter resumes. Pure: the store reports what it found in `staging/` as [`StagingFacts`].
//!
//! Layer: loop — the chapter loop and its state machine (pipeline, next step, menu, spec
//! propagation, repair); above the rules.

use serde::Serialize;

pub use crate::gate::GateMove;
use crate::model::checkpoint::GateRecord;
use crate::model::common::GateDecision;
pub use crate::model::common::text_digest;
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
    /// [`text_digest`] of the staged chapter text, when there is one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text_digest: Option<String>,
    /// The chapter's delta was recorded as skipped (`novel ops skip`, §10.6: unparseable
    /// twice) and no delta was applied for it since: the pipeline goes on without one.
    #[serde(default)]
    pub delta_skipped: bool,
    /// In a repair round (`crate::repair`): what the round has staged so far.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repair: Option<RepairFacts>,
}

/// What a repair round has in staging.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RepairFacts {
    /// The writer's work is there: a repair file for every part, or the chapter file changed
    /// from the judged text.
    pub written: bool,
    /// The judge's review (`staging/evaluations/chapter-NNN-repair.json`).
    pub review: FileFact,
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
            text_digest: None,
            delta_skipped: false,
            repair: None,
        }
    }

    /// The Summarizer's outputs are there: summary, a usable (or skipped) delta, and the
    /// storyline memory of the delta's storyline.
    pub fn summarized(&self) -> bool {
        self.summary.ok()
            && (self.delta.ok() || self.delta_skipped)
            && (self.storyline_id.is_none() || self.memory.ok())
    }
}

/// The gate verdict of the current round of chapter `n` (same revision count), if any.
pub fn current_gate(cp: &Checkpoint, n: u32) -> Option<&GateRecord> {
    cp.gate
        .as_ref()
        .filter(|g| g.chapter == n && g.revision == cp.revision_count)
}

/// The digest of the text an earlier round's gate rejected (a revision must change it).
pub fn rejected_digest(cp: &Checkpoint, n: u32) -> Option<&str> {
    cp.gate
        .as_ref()
        .filter(|g| g.chapter == n && g.revision < cp.revision_count)
        .and_then(|g| g.text_digest.as_deref())
}

/// Whether the current gate lets chapter `n` be committed from `judged` (`accept` = the
/// author accepts a paused, polish-pending or revise-pending chapter as it is — the last
/// when, under `manual_confirm`, they rejected the revision candidate).
pub fn commit_allowed(cp: &Checkpoint, n: u32, accept: bool) -> bool {
    let Some(g) = current_gate(cp, n) else {
        return false;
    };
    match cp.pipeline_stage {
        Some(PipelineStage::Polished) => g.decision == GateDecision::Polish,
        Some(PipelineStage::Judged) => {
            g.decision == GateDecision::Pass
                || g.force_passed
                || g.accepted_by_author
                || (accept
                    && matches!(
                        g.decision,
                        GateDecision::Pause | GateDecision::Polish | GateDecision::Revise
                    ))
        }
        _ => false,
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

/// The stage as the author reads it (「润色完成」; 「空闲」 when no chapter is in flight).
pub fn stage_name(s: Option<PipelineStage>) -> &'static str {
    match s {
        None => "空闲",
        Some(PipelineStage::Drafting) => "初稿生成中",
        Some(PipelineStage::Drafted) => "初稿与摘要已生成",
        Some(PipelineStage::Refined) => "润色完成",
        Some(PipelineStage::Judged) => "评估完成",
        Some(PipelineStage::Revising) => "修订中",
        Some(PipelineStage::Polished) => "二次润色完成",
        Some(PipelineStage::Committed) => "已提交",
        Some(PipelineStage::Repairing) => "局部修补中",
        Some(PipelineStage::Repaired) => "局部修补完成",
    }
}

/// The stage as the model reads it in the session text: the checkpoint's code, which
/// `novel chapter stage` takes, and the author's word (「refined（润色完成）」).
pub fn stage_code_name(s: Option<PipelineStage>) -> String {
    match s {
        None => stage_name(None).to_string(),
        Some(stage) => format!("{}（{}）", stage.name(), stage_name(s)),
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

/// The orchestrator state `novel chapter begin` leaves behind: ERROR_RETRY returns to the state
/// before the error (`error.previous_state`; WRITING when it is not recorded), VOL_REVIEW goes
/// back to WRITING (the author writes on past the volume's plan), the rest stay.
pub fn state_after_begin(cp: &Checkpoint) -> OrchestratorState {
    match cp.orchestrator_state {
        OrchestratorState::ErrorRetry => cp
            .error
            .as_ref()
            .map(|e| e.previous_state)
            .filter(|s| *s != OrchestratorState::ErrorRetry)
            .unwrap_or(OrchestratorState::Writing),
        OrchestratorState::VolReview => OrchestratorState::Writing,
        s => s,
    }
}

/// Checks `novel chapter begin n`.
pub fn check_begin(cp: &Checkpoint, n: u32) -> Result<(), StageRefusal> {
    if let Some(inflight) = cp.inflight_chapter {
        if inflight == n {
            return Ok(()); // resuming the in-flight chapter (after an error too)
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
    let next = cp.next_chapter();
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
    if !writing_allowed(state_after_begin(cp)) {
        return Err(refuse(
            "E_STATE",
            format!(
                "这本书现在处于「{}」，不能写章节",
                crate::model::checkpoint::state_name(cp.orchestrator_state)
            ),
            "用 /novel:start 完成快速起步或卷规划后再续写",
        ));
    }
    // A new chapter's delta must come after the imported chapters' (the changelog is kept in
    // chapter order), so none is begun while their backfill is pending.
    if let Some((left, first)) = crate::import::backfill_of(cp) {
        return Err(refuse(
            "E_BACKFILL_PENDING",
            format!(
                "导入的章节还有 {left} 章没有补全摘要与状态（从第 {first} 章起），不能开始第 {n} 章"
            ),
            "先用 /novel:start 选「补全导入的章节」补完（补不了的章用 novel ops skip 跳过状态），再续写新章",
        ));
    }
    Ok(())
}

/// Checks `novel chapter fail n`: only the chapter in flight can fail.
pub fn check_fail(cp: &Checkpoint, n: u32) -> Result<(), StageRefusal> {
    match cp.inflight_chapter {
        Some(i) if i == n => Ok(()),
        Some(i) => Err(refuse(
            "E_NOT_INFLIGHT",
            format!("在写的是第 {i} 章，不是第 {n} 章"),
            "只有在写的章节能记为出错",
        )),
        None => Err(refuse(
            "E_NOT_INFLIGHT",
            format!("第 {n} 章没有在写"),
            "只有在写的章节能记为出错",
        )),
    }
}

/// The ways on after verdict `decision` for chapter `n`, the loop's own first: pass → commit;
/// polish → second polish, or the author accepts; revise → revise (or, by the author, rewrite
/// or accept); a revise for the craft alone (`repair`) → the local repair (or, by the author,
/// a full revision, a rewrite or accept); rewrite → rewrite (or, by the author, revise or
/// accept); pause → the author revises, rewrites, accepts, or edits and accepts. A round back
/// by the author is unavailable once `author_rounds` reached `max_author_rounds`.
pub fn gate_moves(
    decision: GateDecision,
    repair: bool,
    n: u32,
    author_rounds: u32,
    max_author_rounds: u32,
) -> Vec<GateMove> {
    let cmd = |rest: &str| format!("novel --project \"<DIR>\" chapter {rest} --json");
    let limit = (author_rounds >= max_author_rounds).then(|| {
        format!("作者决定的修订或重写已有 {author_rounds} 次，到了上限（gate.max_author_revisions = {max_author_rounds}）")
    });
    let mv = |id, by, command: String, unavailable: Option<String>| GateMove {
        id,
        by,
        command,
        unavailable,
    };
    let commit = || mv("commit", "loop", cmd(&format!("commit {n}")), None);
    let accept = || {
        mv(
            "accept",
            "author",
            cmd(&format!("commit {n} --accept")),
            None,
        )
    };
    let revise_loop = || mv("revise", "loop", cmd("stage revising"), None);
    let rewrite_loop = || mv("rewrite", "loop", cmd("stage drafting"), None);
    let revise_author = || {
        mv(
            "revise",
            "author",
            cmd("stage revising --by-author"),
            limit.clone(),
        )
    };
    let rewrite_author = || {
        mv(
            "rewrite",
            "author",
            cmd("stage drafting --by-author"),
            limit.clone(),
        )
    };
    match decision {
        GateDecision::Pass => vec![commit()],
        GateDecision::Polish => vec![mv("polish", "loop", cmd("stage polished"), None), accept()],
        GateDecision::Revise if repair => vec![
            mv("repair", "loop", cmd("stage repairing"), None),
            revise_author(),
            rewrite_author(),
            accept(),
        ],
        GateDecision::Revise => vec![revise_loop(), rewrite_author(), accept()],
        GateDecision::Rewrite => vec![rewrite_loop(), revise_author(), accept()],
        GateDecision::Pause => vec![
            revise_author(),
            rewrite_author(),
            accept(),
            mv("edit", "author", cmd(&format!("commit {n} --accept")), None),
        ],
    }
}

/// Who sends a chapter back for another round (`chapter stage revising|drafting`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct RoundChoice {
    /// The author chose it (`--by-author`): after a pause, or instead of what the gate said.
    pub by_author: bool,
    /// Rounds the author has already chosen for this chapter (the pipeline log's records).
    pub author_rounds: u32,
    /// How many the project allows (`gate.max_author_revisions`).
    pub max_author_rounds: u32,
}

/// Checks `novel chapter stage to` for chapter `n`. A round the gate asked for (revise →
/// `revising`, rewrite → `drafting`) is the loop's own; any other way back — after a pause, a
/// revision instead of a rewrite, a rewrite instead of a revision — is the author's
/// ([`RoundChoice::by_author`]), counted and capped.
pub fn check_stage(
    cp: &Checkpoint,
    n: u32,
    to: PipelineStage,
    facts: &StagingFacts,
    choice: RoundChoice,
) -> Result<(), StageRefusal> {
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
    let record = current_gate(cp, n);
    let gate = record.map(|g| g.decision);
    let repair = record.is_some_and(|g| !g.repair.is_empty());
    if !transition_allowed(from, to, gate, repair, choice.by_author) {
        return Err(refuse(
            "E_STAGE_ORDER",
            transition_refusal(from, to, gate, repair, choice.by_author),
            if gate == Some(GateDecision::Pause) && !choice.by_author {
                "暂停的章节只能由作者决定怎么办：作者选了按意见改写或重写，就加 --by-author 再运行"
            } else if repair && to == PipelineStage::Revising {
                "门控要的是局部修补：novel chapter stage repairing；作者决定整章修订时加 --by-author"
            } else {
                "顺序为 drafting → drafted → refined → judged →（门控）→ commit，局部修补为 judged → repairing → repaired → judged；novel chapter recover 会告诉你从哪里继续"
            },
        ));
    }
    if choice.by_author
        && matches!(to, PipelineStage::Revising | PipelineStage::Drafting)
        && choice.author_rounds >= choice.max_author_rounds
    {
        return Err(refuse(
            "E_REVISION_LIMIT",
            format!(
                "第 {n} 章已修订 {} 次，其中作者决定的 {} 次已到上限（novel.json 的 gate.max_author_revisions = {}）",
                cp.revision_count, choice.author_rounds, choice.max_author_rounds
            ),
            "接受现稿（novel chapter commit N --accept）、作者亲手改稿后再接受，或提高 gate.max_author_revisions",
        ));
    }
    let mut missing = staged_files_missing(n, to, facts);
    missing.extend(unchanged_text(cp, n, to, facts));
    if !missing.is_empty() {
        return Err(refuse(
            "E_STAGING",
            format!("不能进入 {}：{}", stage_name(Some(to)), missing.join("；")),
            "先让对应的 agent 写出这些文件",
        ));
    }
    Ok(())
}

/// Whether the stage may move from `from` to `to` under the current gate decision: the gate's
/// own round (revise → revising, or repairing when the gate asks for a local `repair`; rewrite
/// → drafting), or any round back the author chose after a verdict that did not let the
/// chapter through (revise, rewrite, pause). A repair round goes repairing → repaired → judged.
fn transition_allowed(
    from: Option<PipelineStage>,
    to: PipelineStage,
    gate: Option<GateDecision>,
    repair: bool,
    by_author: bool,
) -> bool {
    use PipelineStage as S;
    let sent_back = matches!(
        gate,
        Some(GateDecision::Revise | GateDecision::Rewrite | GateDecision::Pause)
    );
    match to {
        S::Drafted => matches!(from, Some(S::Drafting | S::Revising | S::Drafted)),
        S::Refined => matches!(from, Some(S::Drafted | S::Refined)),
        S::Judged => matches!(from, Some(S::Refined | S::Judged | S::Repaired)),
        S::Revising => {
            from == Some(S::Judged)
                && (gate == Some(GateDecision::Revise) && !repair || by_author && sent_back)
        }
        S::Repairing => {
            from == Some(S::Judged) && gate == Some(GateDecision::Revise) && repair && !by_author
        }
        S::Repaired => matches!(from, Some(S::Repairing | S::Repaired)),
        S::Drafting => {
            from == Some(S::Judged)
                && (gate == Some(GateDecision::Rewrite) || by_author && sent_back)
        }
        S::Polished => {
            matches!(from, Some(S::Judged | S::Polished)) && gate == Some(GateDecision::Polish)
        }
        S::Committed => false,
    }
}

/// The gate's verdict as the author reads it, or that there is none yet.
fn gate_name(gate: Option<GateDecision>) -> &'static str {
    gate.map_or("还没有门控结论", GateDecision::label)
}

/// Why [`transition_allowed`] refused.
fn transition_refusal(
    from: Option<PipelineStage>,
    to: PipelineStage,
    gate: Option<GateDecision>,
    repair: bool,
    by_author: bool,
) -> String {
    use PipelineStage as S;
    let who = if by_author { "（作者决定）" } else { "" };
    match to {
        S::Committed => "「已提交」只能由 novel chapter commit 设置".to_string(),
        S::Revising if repair && !by_author && from == Some(S::Judged) => {
            "门控只因开篇或章末退回，要的是局部修补（repairing），不是整章修订".to_string()
        }
        S::Revising => format!(
            "只有门控结论为 revise，或门控没有放行（revise、rewrite、pause）后作者决定按意见修订时才能进入修订{who}（当前阶段 {}，门控 {}）",
            stage_name(from),
            gate_name(gate)
        ),
        S::Repairing => format!(
            "只有门控因开篇或章末（且只因它们）判 revise 时才能进入局部修补{who}（当前阶段 {}，门控 {}）",
            stage_name(from),
            gate_name(gate)
        ),
        S::Drafting => format!(
            "只有门控结论为 rewrite，或门控没有放行后作者决定重写时才能回到初稿阶段{who}（当前阶段 {}，门控 {}）",
            stage_name(from),
            gate_name(gate)
        ),
        S::Polished => format!(
            "只有门控结论为 polish 时才能标记二次润色完成（当前阶段 {}，门控 {}）",
            stage_name(from),
            gate_name(gate)
        ),
        _ => format!("不能从 {} 进入 {}", stage_name(from), stage_name(Some(to))),
    }
}

/// The staged files stage `to` needs that are missing, empty or invalid.
fn staged_files_missing(n: u32, to: PipelineStage, facts: &StagingFacts) -> Vec<String> {
    use crate::naming;
    use PipelineStage as S;
    let mut missing = Vec::new();
    let draft = naming::staging_chapter(n);
    match to {
        S::Drafted => {
            need(&facts.chapter_text, "章节初稿", &draft, &mut missing);
            let summary = naming::staging_summary(n);
            need(&facts.summary, "章节摘要", &summary, &mut missing);
            if !facts.delta_skipped {
                let delta = naming::staging_delta(n);
                need(&facts.delta, "状态增量", &delta, &mut missing);
            }
            if let Some(id) = &facts.storyline_id {
                let memory = naming::staging_memory(id);
                need(&facts.memory, "故事线记忆", &memory, &mut missing);
            }
        }
        S::Refined => need(&facts.chapter_text, "润色后的章节", &draft, &mut missing),
        S::Judged => {
            let evaluation = naming::staging_evaluation(n);
            need(&facts.evaluation, "评估结果", &evaluation, &mut missing);
            if let Some(r) = &facts.repair {
                let review = naming::staging_repair_review(n);
                need(&r.review, "局部修补的复核", &review, &mut missing);
            }
        }
        S::Repaired => {
            need(&facts.chapter_text, "章节正文", &draft, &mut missing);
            if facts.repair.as_ref().is_some_and(|r| !r.written) {
                missing.push(format!(
                    "局部修补还没有写：{} 里没有修补稿，正文也没改",
                    naming::STAGING_REPAIRS
                ));
            }
        }
        S::Polished => need(
            &facts.chapter_text,
            "二次润色后的章节",
            &draft,
            &mut missing,
        ),
        _ => {}
    }
    missing
}

/// A staged text that should have changed and did not: a polish identical to the judged text,
/// or a redraft identical to the text an earlier gate rejected.
fn unchanged_text(
    cp: &Checkpoint,
    n: u32,
    to: PipelineStage,
    facts: &StagingFacts,
) -> Option<String> {
    if !facts.chapter_text.ok() {
        return None;
    }
    let draft = crate::naming::staging_chapter(n);
    let staged = facts.text_digest.as_deref();
    match to {
        PipelineStage::Polished => {
            let judged = current_gate(cp, n).and_then(|g| g.text_digest.as_deref());
            (judged.is_some() && staged == judged)
                .then(|| format!("{draft} 与门控评估时的稿子完全相同：润色编辑还没有二次润色"))
        }
        PipelineStage::Drafted => {
            let rejected = rejected_digest(cp, n);
            (rejected.is_some() && staged == rejected)
                .then(|| format!("{draft} 与上一轮门控退回的稿子完全相同：还没有按修订指令修改"))
        }
        _ => None,
    }
}

/// Where an interrupted chapter resumes (§9.2), as the step the skill runs next.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ResumeStep {
    /// Nothing in flight.
    Idle,
    RunChapterWriter,
    RunSummarizer,
    /// Everything `drafted` needs is staged: `novel chapter stage drafted`.
    MarkDrafted,
    RunStyleRefiner,
    RunQualityJudge,
    RunGate,
    /// Gate passed: commit.
    Commit,
    /// Gate said polish: one StyleRefiner pass, `novel chapter stage polished`, then commit.
    PolishThenCommit,
    ReviseWithFixes,
    /// Gate revise for the opening or the ending alone: `novel chapter stage repairing` (from
    /// judged), then ChapterWriter rewrites only those paragraphs.
    RepairWithFixes,
    /// The repair is written: `novel chapter stage repaired`.
    MarkRepaired,
    /// The repair is spliced in: QualityJudge re-checks it, then `novel chapter stage judged`.
    RunRepairReview,
    /// Gate paused: the author decides.
    AskAuthor,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Resume {
    pub chapter: Option<u32>,
    pub stage: Option<PipelineStage>,
    pub step: ResumeStep,
    pub message: String,
    /// The checkpoint's stage is ahead of what `staging/` still holds (a file was lost):
    /// `novel chapter recover` moves the stage back here before the step can run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rewind_to: Option<PipelineStage>,
}

/// The §9.2 recovery rule for the checkpoint and what is in staging: the earliest step whose
/// inputs are missing, never a step ahead of what the files support.
pub fn resume_point(cp: &Checkpoint, facts: &StagingFacts) -> Resume {
    let Some(n) = cp.inflight_chapter else {
        return Resume {
            chapter: None,
            stage: cp.pipeline_stage,
            step: ResumeStep::Idle,
            message: format!("没有在写的章节；下一章是第 {} 章", cp.next_chapter()),
            rewind_to: None,
        };
    };
    let stage = cp.pipeline_stage;
    let rejected = rejected_digest(cp, n);
    let staged = Staged {
        no_text: !facts.chapter_text.ok(),
        text_rejected: rejected.is_some() && facts.text_digest.as_deref() == rejected,
        summarized: facts.summarized(),
        evaluation: facts.evaluation.ok(),
        repair: facts.repair.as_ref().map(|r| (r.written, r.review.ok())),
    };
    let (step, message, rewind_to) = staged.step(cp, n, stage);
    Resume {
        chapter: Some(n),
        stage,
        step,
        message: if rewind_to.is_some() {
            format!("staging 缺少本阶段应有的文件（novel chapter recover 会把阶段退回）；{message}")
        } else {
            message
        },
        rewind_to,
    }
}

/// The step to run next, its message, and the stage to move back to first (if any).
type Step = (ResumeStep, String, Option<PipelineStage>);

fn step(step: ResumeStep, message: &str) -> Step {
    (step, message.to_string(), None)
}

fn back(to: PipelineStage, step: ResumeStep, message: &str) -> Step {
    (step, message.to_string(), Some(to))
}

/// What `staging/` holds for the chapter in flight, as the resume rule needs it.
struct Staged {
    no_text: bool,
    /// The staged text is the one an earlier gate rejected.
    text_rejected: bool,
    summarized: bool,
    evaluation: bool,
    /// In a repair round: (the repair is written, the judge's review is there).
    repair: Option<(bool, bool)>,
}

impl Staged {
    /// The step for the checkpoint's stage, given what is staged.
    fn step(&self, cp: &Checkpoint, n: u32, stage: Option<PipelineStage>) -> Step {
        use PipelineStage as S;
        use ResumeStep as R;
        let drafts_lost = self.no_text || !self.summarized;
        match stage {
            None | Some(S::Drafting) | Some(S::Committed) => self.drafting_step(stage),
            Some(S::Revising) => self.revising_step(),
            Some(S::Drafted) if drafts_lost => self.drafting_step(stage),
            Some(S::Drafted) => step(
                R::RunStyleRefiner,
                "初稿与摘要已就绪：从润色编辑继续，然后 novel chapter stage refined",
            ),
            Some(S::Refined) if drafts_lost => self.drafting_step(stage),
            Some(S::Refined) => step(
                R::RunQualityJudge,
                "润色已完成：从评审继续，然后 novel chapter stage judged",
            ),
            Some(S::Judged) => self.judged_step(cp, n),
            Some(S::Polished) if self.no_text => back(
                S::Judged,
                R::PolishThenCommit,
                "二次润色稿不在 staging：重新运行润色编辑，再 novel chapter stage polished",
            ),
            Some(S::Polished) => (
                R::Commit,
                format!("二次润色已完成：运行 novel chapter commit {n}"),
                None,
            ),
            Some(S::Repairing | S::Repaired) if drafts_lost => self.drafting_step(stage),
            Some(S::Repairing) if self.repair.is_some_and(|(written, _)| written) => step(
                R::MarkRepaired,
                "局部修补已写好：运行 novel chapter stage repaired（程序把新段落放进正文），再让 QualityJudge 复核",
            ),
            Some(S::Repairing) => step(
                R::RepairWithFixes,
                "局部修补中：ChapterWriter 只重写门控指出的开篇或最后一两段，写到 staging/repairs/，然后 novel chapter stage repaired",
            ),
            Some(S::Repaired) => step(
                R::RunRepairReview,
                "局部修补已放进正文：QualityJudge 只复核改过的段落，然后 novel chapter stage judged 与门控",
            ),
        }
    }

    /// Steps before the gate, for a stage whose files are (partly) lost: back to drafting
    /// unless already there.
    fn drafting_step(&self, in_stage: Option<PipelineStage>) -> Step {
        use ResumeStep as R;
        let rewind = (in_stage != Some(PipelineStage::Drafting)).then_some(PipelineStage::Drafting);
        if self.no_text || self.text_rejected {
            (
                R::RunChapterWriter,
                "还没有（新的）初稿：重新运行写手写整章".to_string(),
                rewind,
            )
        } else if !self.summarized {
            (
                R::RunSummarizer,
                "初稿已在 staging：从摘要员继续（摘要、状态增量、故事线记忆），然后 novel chapter stage drafted".to_string(),
                rewind,
            )
        } else {
            (
                R::MarkDrafted,
                "初稿与摘要员的产出都已就绪：运行 novel chapter stage drafted".to_string(),
                rewind,
            )
        }
    }

    fn revising_step(&self) -> Step {
        use ResumeStep as R;
        if self.no_text || self.text_rejected {
            step(
                R::ReviseWithFixes,
                "修订中，staging 里还是被退回的稿子：按 required_fixes 运行写手修订",
            )
        } else if !self.summarized {
            step(
                R::RunSummarizer,
                "修订稿已在 staging：重新运行摘要员，然后 novel chapter stage drafted",
            )
        } else {
            step(
                R::MarkDrafted,
                "修订稿与新的摘要、状态增量都已就绪：运行 novel chapter stage drafted",
            )
        }
    }

    /// Judged: the gate's verdict decides, unless it calls for the author or the files the
    /// verdict was made on are lost.
    fn judged_step(&self, cp: &Checkpoint, n: u32) -> Step {
        use ResumeStep as R;
        let gate = current_gate(cp, n);
        if let Some(asked) = gate.and_then(|g| verdict_step(cp, n, g)) {
            return asked;
        }
        if self.no_text || !self.summarized {
            return self.drafting_step(Some(PipelineStage::Judged));
        }
        if !self.evaluation {
            return back(
                PipelineStage::Refined,
                R::RunQualityJudge,
                "评估结果不在 staging：重新运行评审，然后 novel chapter stage judged",
            );
        }
        if gate.is_none() && self.repair.is_some_and(|(_, review)| !review) {
            return back(
                PipelineStage::Repaired,
                R::RunRepairReview,
                "局部修补的复核不在 staging：QualityJudge 重新复核，然后 novel chapter stage judged",
            );
        }
        match gate {
            None => (
                R::RunGate,
                format!("评估已完成：运行 novel chapter gate {n}"),
                None,
            ),
            Some(g) if g.decision == GateDecision::Polish && !g.accepted_by_author => (
                R::PolishThenCommit,
                format!(
                    "门控判二次润色：润色编辑二次润色，novel chapter stage polished，再 novel chapter commit {n}"
                ),
                None,
            ),
            Some(_) => (
                R::Commit,
                format!("门控已通过：运行 novel chapter commit {n}"),
                None,
            ),
        }
    }
}

/// A gate verdict that comes before any file check: a revision to make (or its candidate for
/// the author to decide), or a pause for the author.
fn verdict_step(cp: &Checkpoint, n: u32, g: &GateRecord) -> Option<Step> {
    use ResumeStep as R;
    let revise = g.decision == GateDecision::Revise && !g.force_passed;
    if revise && crate::revision::pending_candidate(cp) == Some(n) {
        return Some(step(
            R::AskAuthor,
            "门控判修订，修订候选已保存：等作者决定采纳（候选成为修订稿）还是拒绝（再按现稿提交，或照意见重新修订）",
        ));
    }
    if revise && !g.repair.is_empty() {
        return Some(step(
            R::RepairWithFixes,
            "门控只因开篇或章末判 revise：novel chapter stage repairing，再让 ChapterWriter 只重写那几段（局部修补，不整章修订）",
        ));
    }
    if revise {
        return Some(step(
            R::ReviseWithFixes,
            "门控判修订：novel chapter stage revising，再按评审的修订指令修订（作者要先过目修订稿时，先用 novel revision notes 生成修订候选）",
        ));
    }
    if matches!(g.decision, GateDecision::Pause | GateDecision::Rewrite) && !g.accepted_by_author {
        return Some(step(
            R::AskAuthor,
            "门控暂停：等作者决定接受现稿、按意见修订还是重写",
        ));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::ErrorRecord;

    fn cp(state: OrchestratorState, last: u32, inflight: Option<u32>) -> Checkpoint {
        serde_json::from_value(serde_json::json!({
            "last_completed_chapter": last, "current_volume": 1,
            "orchestrator_state": state, "inflight_chapter": inflight,
            "pipeline_stage": inflight.map(|_| "drafted"),
        }))
        .unwrap()
    }

    fn error(previous: OrchestratorState) -> Option<ErrorRecord> {
        Some(ErrorRecord {
            previous_state: previous,
            reason: "写手超时".into(),
            at: None,
            chapter: Some(5),
            extra: Default::default(),
        })
    }

    #[test]
    fn begin_is_refused_while_planning_and_allowed_past_the_plan() {
        use OrchestratorState as S;
        for (state, ok) in [
            (S::Init, false),
            (S::QuickStart, true),
            (S::VolPlanning, false),
            (S::Writing, true),
            (S::ChapterRewrite, true),
            (S::VolReview, true),
            (S::ErrorRetry, true),
        ] {
            let r = check_begin(&cp(state, 4, None), 5);
            assert_eq!(r.is_ok(), ok, "{state:?}: {r:?}");
            if let Err(e) = r {
                assert_eq!(e.code, "E_STATE");
                assert!(!e.reason.contains(&format!("{state:?}")), "{}", e.reason);
            }
        }
        assert_eq!(state_after_begin(&cp(S::VolReview, 50, None)), S::Writing);
    }

    #[test]
    fn begin_after_an_error_returns_to_the_state_before_it() {
        use OrchestratorState as S;
        let mut c = cp(S::ErrorRetry, 4, Some(5));
        c.error = error(S::QuickStart);
        assert!(check_begin(&c, 5).is_ok());
        assert_eq!(state_after_begin(&c), S::QuickStart);
        c.error = error(S::ChapterRewrite);
        assert_eq!(state_after_begin(&c), S::ChapterRewrite);
        c.error = None;
        assert_eq!(state_after_begin(&c), S::Writing);
        // Another chapter than the failed one is still refused.
        assert_eq!(check_begin(&c, 6).unwrap_err().code, "E_INFLIGHT");
        // Failed while planning (a hand-made checkpoint): begin stays refused.
        let mut idle = cp(S::ErrorRetry, 4, None);
        idle.error = error(S::VolPlanning);
        assert_eq!(check_begin(&idle, 5).unwrap_err().code, "E_STATE");
    }

    #[test]
    fn only_the_inflight_chapter_can_fail() {
        use OrchestratorState as S;
        assert!(check_fail(&cp(S::Writing, 4, Some(5)), 5).is_ok());
        assert_eq!(
            check_fail(&cp(S::Writing, 4, Some(5)), 4).unwrap_err().code,
            "E_NOT_INFLIGHT"
        );
        assert_eq!(
            check_fail(&cp(S::Writing, 4, None), 5).unwrap_err().code,
            "E_NOT_INFLIGHT"
        );
    }

    /// Chapter 5 judged, the gate's `decision` recorded (with the parts of a local repair).
    fn judged(decision: GateDecision, repair: Vec<crate::model::repair::PartReason>) -> Checkpoint {
        let mut c = cp(OrchestratorState::Writing, 4, Some(5));
        c.pipeline_stage = Some(PipelineStage::Judged);
        c.gate = Some(GateRecord {
            chapter: 5,
            decision,
            overall: 2.6,
            force_passed: false,
            revision: 0,
            text_digest: None,
            accepted_by_author: false,
            staged: Default::default(),
            repair,
            extra: Default::default(),
        });
        c
    }

    #[test]
    fn after_a_pause_the_author_may_revise_or_rewrite() {
        use GateDecision as G;
        use PipelineStage as S;
        let judged = |decision: G| judged(decision, Vec::new());
        let facts = StagingFacts::nothing();
        let auto = RoundChoice {
            max_author_rounds: 3,
            ..RoundChoice::default()
        };
        let author = RoundChoice {
            by_author: true,
            ..auto
        };
        // (verdict, the loop's own round: revising, drafting; the author's: revising, drafting)
        for (decision, revising, drafting, a_revising, a_drafting) in [
            (G::Revise, true, false, true, true),
            (G::Pause, false, false, true, true),
            (G::Rewrite, false, true, true, true),
            (G::Polish, false, false, false, false),
            (G::Pass, false, false, false, false),
        ] {
            let c = judged(decision);
            for (choice, want_r, want_d) in
                [(auto, revising, drafting), (author, a_revising, a_drafting)]
            {
                let r = check_stage(&c, 5, S::Revising, &facts, choice);
                assert_eq!(
                    r.is_ok(),
                    want_r,
                    "{decision:?} {choice:?} → revising: {r:?}"
                );
                if let Err(e) = r {
                    assert_eq!(e.code, "E_STAGE_ORDER");
                }
                let d = check_stage(&c, 5, S::Drafting, &facts, choice);
                assert_eq!(
                    d.is_ok(),
                    want_d,
                    "{decision:?} {choice:?} → drafting: {d:?}"
                );
            }
        }
        // The author's rounds are capped.
        let capped = RoundChoice {
            author_rounds: 3,
            ..author
        };
        let e = check_stage(&judged(G::Pause), 5, S::Revising, &facts, capped).unwrap_err();
        assert_eq!(e.code, "E_REVISION_LIMIT", "{e:?}");
        assert!(e.reason.contains("gate.max_author_revisions"), "{e:?}");
        // The pause's message names all three ways on, in the author's words (the commands
        // are in the recommendation's `then`).
        let resume = resume_point(&judged(G::Pause), &facts);
        assert_eq!(resume.step, ResumeStep::AskAuthor);
        for way in ["接受现稿", "按意见修订", "重写"] {
            assert!(resume.message.contains(way), "{}", resume.message);
        }
        assert!(!resume.message.contains("--"), "{}", resume.message);
    }

    /// A revise for the craft alone goes judged → repairing → repaired → judged; a full
    /// revision is the author's choice then, and the moves say so.
    #[test]
    fn a_repair_round_has_its_own_stages() {
        use crate::model::repair::{PartReason, RepairPart};
        use PipelineStage as S;
        let c = judged(
            GateDecision::Revise,
            vec![PartReason {
                part: RepairPart::Ending,
                reason: "章末是总结".into(),
            }],
        );
        let facts = StagingFacts::nothing();
        let auto = RoundChoice {
            max_author_rounds: 3,
            ..RoundChoice::default()
        };
        let author = RoundChoice {
            by_author: true,
            ..auto
        };
        assert!(check_stage(&c, 5, S::Repairing, &facts, auto).is_ok());
        let e = check_stage(&c, 5, S::Revising, &facts, auto).unwrap_err();
        assert!(e.reason.contains("局部修补"), "{e:?}");
        assert!(check_stage(&c, 5, S::Revising, &facts, author).is_ok());
        assert!(check_stage(&c, 5, S::Repaired, &facts, auto).is_err());
        let mut judged = StagingFacts::nothing();
        judged.chapter_text = FileFact::Ok;
        judged.summary = FileFact::Ok;
        judged.delta = FileFact::Ok;
        judged.memory = FileFact::Ok;
        judged.evaluation = FileFact::Ok;
        judged.storyline_id = Some("main_arc".into());
        assert_eq!(resume_point(&c, &judged).step, ResumeStep::RepairWithFixes);
        let moves: Vec<&str> = gate_moves(GateDecision::Revise, true, 5, 0, 3)
            .iter()
            .map(|m| m.id)
            .collect();
        assert_eq!(moves, ["repair", "revise", "rewrite", "accept"]);
        // Repairing: the writer's new paragraphs, then repaired; repaired: the judge's review,
        // then judged (with the review there).
        let mut r = c.clone();
        r.pipeline_stage = Some(S::Repairing);
        let mut staged = judged.clone();
        staged.evaluation = FileFact::Missing;
        staged.repair = Some(RepairFacts {
            written: false,
            review: FileFact::Missing,
        });
        assert_eq!(resume_point(&r, &staged).step, ResumeStep::RepairWithFixes);
        let e = check_stage(&r, 5, S::Repaired, &staged, auto).unwrap_err();
        assert!(e.reason.contains("局部修补还没有写"), "{e:?}");
        staged.repair = Some(RepairFacts {
            written: true,
            review: FileFact::Missing,
        });
        assert_eq!(resume_point(&r, &staged).step, ResumeStep::MarkRepaired);
        assert!(check_stage(&r, 5, S::Repaired, &staged, auto).is_ok());
        r.pipeline_stage = Some(S::Repaired);
        assert_eq!(resume_point(&r, &staged).step, ResumeStep::RunRepairReview);
        staged.evaluation = FileFact::Ok;
        let e = check_stage(&r, 5, S::Judged, &staged, auto).unwrap_err();
        assert!(e.reason.contains("局部修补的复核"), "{e:?}");
        staged.repair = Some(RepairFacts {
            written: true,
            review: FileFact::Ok,
        });
        assert!(check_stage(&r, 5, S::Judged, &staged, auto).is_ok());
    }

    #[test]
    fn text_digest_is_fnv1a64() {
        assert_eq!(text_digest(b""), "cbf29ce484222325");
        assert_eq!(text_digest(b"a"), "af63dc4c8601ec8c");
        assert_ne!(
            text_digest("林枫".as_bytes()),
            text_digest("林峰".as_bytes())
        );
    }
}
