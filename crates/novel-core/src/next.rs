//! The recommended next action (下一步): what the orchestrator should do now, decided from the
//! checkpoint and a few facts about the disk. Used by the SessionStart hook, `novel next` and
//! `novel chapter recover`.
//!
//! Order of precedence:
//! 1. an interrupted commit (journal present) → `novel chapter recover`;
//! 2. the lock held by another live process → wait; a stale lock → `novel chapter recover`
//!    (unless the chapter in flight waits for the author's decision: then step 5 says so,
//!    and the decision flow's `novel chapter begin N` takes the lock back);
//! 3. orchestrator `INIT` → `/novel:start`;
//! 4. a pending `spec_propagation` → review the affected contracts first (`/novel:start`);
//! 5. a chapter in flight → its resume step ([`crate::pipeline::resume_point`], PRD §9.2),
//!    after re-taking the lock with `novel chapter begin N` when nobody holds it;
//! 6. an imported manuscript's backfill pending → `/novel:start` (before any new chapter);
//! 7. `QUICK_START` → `/novel:start` (`/novel:continue` once the set-up is done and a trial
//!    chapter is next); `VOL_PLANNING` → plan the volume; `VOL_REVIEW` → review;
//! 8. writing and the volume's last chapter done → review; else `/novel:continue` for
//!    chapter `last_completed + 1`.
//!
//! Secondary facts (overdue foreshadowing, style drift, other pending actions) ride along as
//! notes; they never change the action.
//!
//! Layer: loop — the chapter loop and its state machine (pipeline, next step, menu, spec
//! propagation, repair); above the rules.

use serde::Serialize;

use crate::model::{Checkpoint, OrchestratorState};
use crate::pipeline::{ResumeStep, StagingFacts, resume_point, stage_name};

/// What `.novel.lock` looks like to this process.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum LockFact {
    Free,
    /// Held by the session this command runs in (resume / clear / compact of the same
    /// session): the pipeline may continue with this token.
    HeldByThisSession {
        chapter: Option<u32>,
        token: String,
    },
    /// Held by another live process.
    HeldByOther {
        chapter: Option<u32>,
        holder: String,
    },
    Stale {
        why: String,
    },
}

/// Facts about the disk the recommendation depends on (the store gathers them cheaply).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DiskFacts {
    /// Staging files of the in-flight chapter (None when no chapter is in flight).
    pub staging: Option<StagingFacts>,
    pub lock: LockFact,
    /// The chapter of an unfinished journal (`.novel-commit-journal.json` exists).
    pub commit_journal: Option<u32>,
    /// A `novel` command holds the writers' guard right now: the journal is being written by a
    /// live writer, not left by an interrupted one.
    #[serde(default)]
    pub journal_live: bool,
    /// Short foreshadowing threads past their range and unresolved.
    pub overdue_foreshadowing: usize,
    pub style_drift_active: bool,
    /// The last chapter of the current volume (`novel_store::next::volume_span`).
    pub volume_end: Option<u32>,
    /// Chapters whose delta was skipped and never applied since (§10.6).
    #[serde(default)]
    pub skipped_deltas: Vec<u32>,
    /// The reviews due ([`crate::periodic::reviews_wanted`] whose report does not exist yet).
    #[serde(default)]
    pub reviews_due: Vec<crate::periodic::ReviewDue>,
    /// In the quick start with nothing in flight, the trial chapter its next step writes
    /// (`trial-1`..`trial-3`): the set-up is done and `/novel:continue` writes on.
    #[serde(default)]
    pub trial_next: Option<u32>,
}

impl DiskFacts {
    /// Nothing in flight, no lock, nothing overdue.
    pub fn quiet() -> Self {
        DiskFacts {
            staging: None,
            lock: LockFact::Free,
            commit_journal: None,
            journal_live: false,
            overdue_foreshadowing: 0,
            style_drift_active: false,
            volume_end: None,
            skipped_deltas: Vec::new(),
            reviews_due: Vec::new(),
            trial_next: None,
        }
    }
}

/// The action, typed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum NextAction {
    /// Finish an interrupted commit / clear a stale lock: `novel chapter recover`.
    Recover,
    /// Another live session holds the lock.
    WaitForLock,
    /// Project set-up (INIT / QUICK_START): `/novel:start`.
    Start,
    /// A spec change must be propagated to contracts before writing on.
    ReviewSpecPropagation,
    PlanVolume,
    ReviewVolume,
    /// In-flight chapter: nobody holds the lock; re-take it with `novel chapter begin N`.
    RetakeLock,
    RunChapterWriter,
    RunSummarizer,
    /// Everything `drafted` needs is staged: `novel chapter stage drafted`.
    MarkDrafted,
    RunStyleRefiner,
    RunQualityJudge,
    RunGate,
    Commit,
    PolishThenCommit,
    ReviseChapter,
    /// The gate asked for a local repair of the opening or the ending (`crate::repair`):
    /// `novel chapter stage repairing` (from judged), then ChapterWriter's 修补.
    RepairChapter,
    /// The repair is written: `novel chapter stage repaired`, then QualityJudge's 复核.
    MarkRepaired,
    /// The repair is in the text: QualityJudge's 复核, then `stage judged` and the gate.
    ReviewRepair,
    /// The gate paused the chapter: the author decides.
    AskAuthor,
    /// Idle in WRITING: `/novel:continue` writes chapter `last_completed + 1`.
    WriteNextChapter,
    /// Idle in WRITING with a periodic review due (the 5-chapter brief, the 10-chapter
    /// consistency check): run it (`novel review …`), then write on.
    RunReviews,
    /// An imported manuscript's chapters still lack summaries and state: `/novel:start`'s
    /// import-backfill flow, from the chapter `novel import backfill` names.
    ImportBackfill,
}

/// The recommendation with its evidence.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Recommendation {
    pub action: NextAction,
    /// The chapter it concerns, if any.
    pub chapter: Option<u32>,
    /// Why, in Chinese.
    pub reason: String,
    /// The exact skill (`/novel:continue`) or command (`novel chapter recover`) to run first.
    pub command: String,
    /// What follows it, in Chinese.
    pub then: String,
    /// Secondary facts worth knowing (never change the action).
    pub notes: Vec<String>,
}

fn rec(
    action: NextAction,
    chapter: Option<u32>,
    reason: String,
    command: impl Into<String>,
    then: impl Into<String>,
) -> Recommendation {
    Recommendation {
        action,
        chapter,
        reason,
        command: command.into(),
        then: then.into(),
        notes: Vec::new(),
    }
}

/// Overdue (逾期): a short thread, unresolved, and the last completed chapter is past the end of
/// its planned range. Medium and long threads are never overdue.
pub fn is_overdue(
    scope: crate::model::common::ForeshadowScope,
    status: crate::model::common::ForeshadowStatus,
    range: Option<[u32; 2]>,
    last_completed: u32,
) -> bool {
    scope == crate::model::common::ForeshadowScope::Short
        && status != crate::model::common::ForeshadowStatus::Resolved
        && range.is_some_and(|[_, end]| last_completed > end)
}

/// `pending_actions` types that block writing until handled.
pub const SPEC_PROPAGATION: &str = "spec_propagation";

/// The in-flight chapter's next step, from the §9.2 resume rule.
fn resume(cp: &Checkpoint, n: u32, facts: &StagingFacts) -> Recommendation {
    let r = resume_point(cp, facts);
    let stage = stage_name(cp.pipeline_stage);
    let reason = format!("第 {n} 章写到一半（阶段 {stage}）：{}", r.message);
    if let Some(to) = r.rewind_to {
        return rec(
            NextAction::Recover,
            Some(n),
            reason,
            "novel chapter recover",
            format!(
                "recover 把阶段退回 {}，然后按它给出的下一步继续",
                stage_name(Some(to))
            ),
        );
    }
    rec(
        step_action(&r.step),
        Some(n),
        reason,
        step_command(cp, &r.step, n),
        step_then(cp, &r.step, n),
    )
}

/// The action of a resume step.
fn step_action(step: &ResumeStep) -> NextAction {
    match step {
        ResumeStep::RunChapterWriter | ResumeStep::Idle => NextAction::RunChapterWriter,
        ResumeStep::RunSummarizer => NextAction::RunSummarizer,
        ResumeStep::MarkDrafted => NextAction::MarkDrafted,
        ResumeStep::RunStyleRefiner => NextAction::RunStyleRefiner,
        ResumeStep::RunQualityJudge => NextAction::RunQualityJudge,
        ResumeStep::RunGate => NextAction::RunGate,
        ResumeStep::Commit => NextAction::Commit,
        ResumeStep::PolishThenCommit => NextAction::PolishThenCommit,
        ResumeStep::ReviseWithFixes => NextAction::ReviseChapter,
        ResumeStep::RepairWithFixes => NextAction::RepairChapter,
        ResumeStep::MarkRepaired => NextAction::MarkRepaired,
        ResumeStep::RunRepairReview => NextAction::ReviewRepair,
        ResumeStep::AskAuthor => NextAction::AskAuthor,
    }
}

/// The command that runs a resume step of chapter `n`.
fn step_command(cp: &Checkpoint, step: &ResumeStep, n: u32) -> String {
    match step {
        ResumeStep::RunChapterWriter | ResumeStep::Idle => {
            format!("novel context chapter-writer --chapter {n}")
        }
        ResumeStep::RunSummarizer => format!("novel context summarizer --chapter {n}"),
        ResumeStep::MarkDrafted => "novel chapter stage drafted".to_string(),
        ResumeStep::RunStyleRefiner | ResumeStep::PolishThenCommit => {
            format!("novel context style-refiner --chapter {n}")
        }
        ResumeStep::RunQualityJudge => format!("novel context quality-judge --chapter {n}"),
        ResumeStep::RunGate => format!("novel chapter gate {n}"),
        ResumeStep::Commit => format!("novel chapter commit {n}"),
        ResumeStep::ReviseWithFixes => {
            if cp.pipeline_stage == Some(crate::model::PipelineStage::Judged) {
                "novel chapter stage revising".to_string()
            } else {
                format!("novel context chapter-writer --chapter {n}")
            }
        }
        ResumeStep::RepairWithFixes => {
            if cp.pipeline_stage == Some(crate::model::PipelineStage::Judged) {
                "novel chapter stage repairing".to_string()
            } else {
                format!("novel context chapter-writer --chapter {n}")
            }
        }
        ResumeStep::MarkRepaired => "novel chapter stage repaired".to_string(),
        ResumeStep::RunRepairReview => format!("novel context quality-judge --chapter {n}"),
        ResumeStep::AskAuthor => "/novel:start".to_string(),
    }
}

/// What follows a resume step of chapter `n`, in Chinese.
fn step_then(cp: &Checkpoint, step: &ResumeStep, n: u32) -> String {
    use crate::naming::{staging_chapter, staging_delta, staging_evaluation, staging_summary};
    match step {
        ResumeStep::RunChapterWriter | ResumeStep::Idle => format!(
            "把资料包交给写手，写入 {}；再运行摘要员",
            staging_chapter(n)
        ),
        ResumeStep::RunSummarizer => format!(
            "摘要员写 {}、{}、staging/storylines/<id>/memory.md，然后 novel chapter stage drafted",
            staging_summary(n),
            staging_delta(n)
        ),
        ResumeStep::MarkDrafted => "然后运行润色编辑".to_string(),
        ResumeStep::RunStyleRefiner => {
            "润色编辑覆盖写回润色稿，然后 novel chapter stage refined".to_string()
        }
        ResumeStep::RunQualityJudge => format!(
            "评审写 {}，然后 novel chapter stage judged",
            staging_evaluation(n)
        ),
        ResumeStep::RunGate => "按门控结论提交、润色或修订".to_string(),
        ResumeStep::Commit => "提交后写下一章".to_string(),
        ResumeStep::PolishThenCommit => {
            format!("润色编辑二次润色后 novel chapter stage polished，再 novel chapter commit {n}")
        }
        ResumeStep::ReviseWithFixes => {
            "写手按 required_fixes 修订，再运行摘要员并 novel chapter stage drafted".to_string()
        }
        ResumeStep::RepairWithFixes => format!(
            "ChapterWriter 只重写门控指出的开篇或最后一两段，写到 {}/，然后 novel chapter stage repaired",
            crate::naming::STAGING_REPAIRS
        ),
        ResumeStep::MarkRepaired => "然后 QualityJudge 复核改过的段落".to_string(),
        ResumeStep::RunRepairReview => format!(
            "QualityJudge 写 {}，然后 novel chapter stage judged 与门控",
            crate::naming::staging_repair_review(n)
        ),
        ResumeStep::AskAuthor if crate::revision::pending_candidate(cp) == Some(n) => format!(
            "作者决定第 {n} 章的修订候选：采纳（候选成为修订稿），或拒绝后按现稿提交、照意见重新修订（在 /novel:start 里选）"
        ),
        ResumeStep::AskAuthor => {
            format!("作者决定第 {n} 章：接受现稿、按意见修订或重写（在 /novel:start 里选）")
        }
    }
}

/// The next action for `cp` and the disk facts (see the module note for the order).
pub fn recommend(cp: &Checkpoint, facts: &DiskFacts) -> Recommendation {
    let mut r = decide(cp, facts);
    if cp.orchestrator_state == OrchestratorState::ErrorRetry {
        r.notes.push(match &cp.error {
            Some(e) => format!(
                "上次出错{}：{}",
                e.chapter
                    .map_or(String::new(), |n| format!("（第 {n} 章）")),
                e.reason
            ),
            None => "上次出错了，但没有记下原因".to_string(),
        });
    }
    if let Some(advice) = crate::ops::rebuild_advice(&facts.skipped_deltas) {
        r.notes.push(advice);
    }
    if facts.overdue_foreshadowing > 0 {
        r.notes.push(format!(
            "有 {} 条短线伏笔已过计划回收区间仍未回收",
            facts.overdue_foreshadowing
        ));
    }
    if facts.style_drift_active {
        r.notes
            .push("风格漂移纠偏生效中（style-drift.json），写作与润色须遵守其中的指令".into());
    }
    for a in &cp.pending_actions {
        if a.kind != SPEC_PROPAGATION || r.action != NextAction::ReviewSpecPropagation {
            r.notes.push(format!("待处理事项：{}（{}）", a.id, a.kind));
        }
    }
    if let LockFact::HeldByThisSession { .. } = &facts.lock {
        r.notes
            .push("项目锁由本会话持有：本会话的 novel 命令不必再给锁令牌".into());
    }
    if let (LockFact::Stale { why }, NextAction::AskAuthor, Some(n)) =
        (&facts.lock, r.action, r.chapter)
    {
        r.notes.push(format!(
            "项目锁已失效（{why}）：novel chapter begin {n} 会清掉它，把锁交给本会话"
        ));
    }
    r
}

fn decide(cp: &Checkpoint, facts: &DiskFacts) -> Recommendation {
    if let Some(r) = interrupted(cp, facts) {
        return r;
    }
    if cp.orchestrator_state == OrchestratorState::Init {
        return rec(
            NextAction::Start,
            None,
            "项目尚未初始化".into(),
            "/novel:start",
            "创建项目并进入快速起步",
        );
    }
    if let Some(a) = cp
        .pending_actions
        .iter()
        .find(|a| a.kind == SPEC_PROPAGATION)
    {
        return rec(
            NextAction::ReviewSpecPropagation,
            cp.inflight_chapter,
            format!("有待处理的设定变更传播（{}）：受影响的契约要先复核", a.id),
            "/novel:start",
            "复核并更新受影响的角色契约与章节契约，再继续写作",
        );
    }
    if let Some(n) = cp.inflight_chapter {
        return inflight(cp, n, facts);
    }
    if let Some((left, n)) = crate::import::backfill_of(cp) {
        // Before any new chapter: the backfill applies each chapter's delta in order, which a
        // later chapter's changelog line would refuse.
        return rec(
            NextAction::ImportBackfill,
            Some(n),
            format!("导入的章节还有 {left} 章没有摘要与状态（下一章第 {n} 章）"),
            "/novel:start",
            "摘要员逐章补全摘要、状态增量与故事线记忆（novel import backfill 查看下一章缺什么）",
        );
    }
    by_state(cp, facts)
}

/// An interrupted commit, or a lock held by another live process or gone stale.
fn interrupted(cp: &Checkpoint, facts: &DiskFacts) -> Option<Recommendation> {
    if let Some(n) = facts.commit_journal
        && facts.journal_live
    {
        return Some(rec(
            NextAction::WaitForLock,
            Some(n),
            format!("另一个 novel 命令正在写入这本书（第 {n} 章），还没有写完"),
            "novel status",
            "稍等几秒再看：它写完就会结束，不要运行 recover",
        ));
    }
    if let Some(n) = facts.commit_journal {
        return Some(rec(
            NextAction::Recover,
            Some(n),
            format!("第 {n} 章的提交被中断，还没有完成"),
            "novel chapter recover",
            "recover 会补完提交并说明从哪一步继续",
        ));
    }
    match &facts.lock {
        LockFact::HeldByOther { chapter, holder } => Some(rec(
            NextAction::WaitForLock,
            *chapter,
            format!("另一个会话正在处理本项目（{holder}）"),
            "novel lock status",
            "等它结束；确认它已不在运行后，用 novel chapter recover 清理",
        )),
        // A chapter paused for the author is decided directly: the decision flow's
        // `novel chapter begin N` clears the stale lock and takes it again (recover folded in).
        LockFact::Stale { .. } if waits_for_author(cp, facts) => None,
        LockFact::Stale { why } => Some(rec(
            NextAction::Recover,
            cp.inflight_chapter,
            format!("项目锁已失效（{why}）"),
            "novel chapter recover",
            "recover 会清除僵尸锁并说明从哪一步继续",
        )),
        _ => None,
    }
}

/// The chapter in flight waits for the author at the gate (paused, or its revision candidate
/// saved), with nothing to rewind: the session that paused it may be gone, the decision is
/// the author's all the same.
pub fn waits_for_author(cp: &Checkpoint, facts: &DiskFacts) -> bool {
    if cp.inflight_chapter.is_none() {
        return false;
    }
    let staging = facts.staging.clone().unwrap_or_else(StagingFacts::nothing);
    let r = resume_point(cp, &staging);
    r.step == ResumeStep::AskAuthor && r.rewind_to.is_none()
}

/// Chapter `n` in flight: its resume step, after re-taking the lock when nobody holds it.
fn inflight(cp: &Checkpoint, n: u32, facts: &DiskFacts) -> Recommendation {
    let staging = facts.staging.clone().unwrap_or_else(StagingFacts::nothing);
    let r = resume(cp, n, &staging);
    // A paused chapter waits for the author whoever holds the lock: the decision flow takes it
    // again itself (`chapter begin N` hands the session its token back).
    if facts.lock != LockFact::Free || r.action == NextAction::AskAuthor {
        return r;
    }
    Recommendation {
        action: NextAction::RetakeLock,
        chapter: Some(n),
        reason: format!("{}；项目锁已释放", r.reason),
        command: format!("novel chapter begin {n}"),
        then: format!("重新取得锁后：{}（{}）", r.command, r.then),
        notes: Vec::new(),
    }
}

/// Nothing in flight or pending: the orchestrator state decides.
fn by_state(cp: &Checkpoint, facts: &DiskFacts) -> Recommendation {
    let v = cp.current_volume;
    match cp.orchestrator_state {
        OrchestratorState::QuickStart if facts.trial_next.is_some() => {
            let k = facts.trial_next.unwrap_or(1);
            rec(
                NextAction::Start,
                Some(k),
                format!("快速起步：设定与前三章大纲已齐，试写第 {k} 章"),
                "/novel:continue",
                format!(
                    "试写第 {k} 章（写作、摘要、润色、评审、门控、提交）；3 章都提交后回到 /novel:start 确认试写"
                ),
            )
        }
        OrchestratorState::Init | OrchestratorState::QuickStart => rec(
            NextAction::Start,
            None,
            format!("快速起步阶段（已完成 {} 章）", cp.last_completed_chapter),
            "/novel:start",
            "设定、风格样本、试写 3 章，确认后进入卷规划",
        ),
        OrchestratorState::VolPlanning => rec(
            NextAction::PlanVolume,
            None,
            format!("第 {v} 卷待规划"),
            "/novel:start",
            format!("大纲策划规划第 {v} 卷（novel context plot-architect）"),
        ),
        OrchestratorState::VolReview => rec(
            NextAction::ReviewVolume,
            None,
            format!("第 {v} 卷已写完，待卷末回顾"),
            "/novel:start",
            "卷末回顾后规划下一卷",
        ),
        OrchestratorState::Writing
        | OrchestratorState::ChapterRewrite
        | OrchestratorState::ErrorRetry => writing(cp, facts),
    }
}

/// Idle while writing: review the volume once its last chapter is done, else the next chapter.
fn writing(cp: &Checkpoint, facts: &DiskFacts) -> Recommendation {
    let last = cp.last_completed_chapter;
    if let Some(end) = facts.volume_end
        && last >= end
    {
        return rec(
            NextAction::ReviewVolume,
            None,
            format!("第 {} 卷的最后一章（第 {end} 章）已完成", cp.current_volume),
            "/novel:start",
            "卷末回顾后规划下一卷",
        );
    }
    let next = last + 1;
    let due: Vec<&crate::periodic::ReviewDue> = facts
        .reviews_due
        .iter()
        .filter(|r| r.kind != crate::periodic::ReviewKind::Volume)
        .collect();
    if let Some(first) = due.first() {
        let what: Vec<String> = due
            .iter()
            .map(|r| format!("第 {} 章起的{}", r.chapter, r.kind.label()))
            .collect();
        return rec(
            NextAction::RunReviews,
            Some(next),
            format!("{}到期（还没有报告）", what.join("、")),
            first.command,
            format!("做完回顾再写第 {next} 章"),
        );
    }
    rec(
        NextAction::WriteNextChapter,
        Some(next),
        format!("可以写第 {next} 章了（已完成 {last} 章，没有在写的章节）"),
        "/novel:continue",
        format!("写第 {next} 章，从 novel chapter begin {next} 开始"),
    )
}
