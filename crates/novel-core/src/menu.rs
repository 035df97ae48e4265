//! The menu of `/novel:start` (PRD §2.2; `docs/orchestration.md` §2): 2–4 options for the
//! author, exactly one recommended and listed first, each with a one-line reason and the skill
//! flow or command it leads to — decided from the checkpoint and a few disk facts, in the same
//! order of precedence as [`crate::next::recommend`] (journal, lock, propagation, the chapter in
//! flight, then the orchestrator state). The menu goes one step further than the
//! recommendation in one place: when idle in WRITING with a periodic review due, it recommends
//! the review (the recommendation still names the next chapter — the hook shares its rules).
//! Also: which periodic reviews are due (§8).
//!
//! Layer: loop — the chapter loop and its state machine (pipeline, next step, menu, spec
//! propagation, repair); above the rules.

use serde::Serialize;

use crate::model::{Checkpoint, OrchestratorState};
use crate::next::{DiskFacts, LockFact, NextAction, Recommendation, SPEC_PROPAGATION};
use crate::pipeline::{ResumeStep, StagingFacts, current_gate, resume_point, stage_name};
use crate::quickstart::QuickStartStatus;

pub use crate::periodic::{ReviewDue, ReviewKind, reviews_wanted};

/// The stable option ids of the contract.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum OptionId {
    CreateProject,
    ShowHelp,
    ContinueQuickStart,
    ContinueWriting,
    DecidePausedChapter,
    DecideRevision,
    QualityReview,
    ImportResearch,
    UpdateSpec,
    ReviewPropagation,
    PlanVolume,
    ReviewVolume,
    Recover,
    WaitLock,
    ShowStatus,
    ImportBackfill,
    ImportManuscript,
}

impl OptionId {
    /// Every option, in declaration order.
    pub const ALL: [OptionId; 17] = [
        OptionId::CreateProject,
        OptionId::ShowHelp,
        OptionId::ContinueQuickStart,
        OptionId::ContinueWriting,
        OptionId::DecidePausedChapter,
        OptionId::DecideRevision,
        OptionId::QualityReview,
        OptionId::ImportResearch,
        OptionId::UpdateSpec,
        OptionId::ReviewPropagation,
        OptionId::PlanVolume,
        OptionId::ReviewVolume,
        OptionId::Recover,
        OptionId::WaitLock,
        OptionId::ShowStatus,
        OptionId::ImportBackfill,
        OptionId::ImportManuscript,
    ];

    /// The `/novel:start` flow the option leads to (`skills/start/references/<flow>.md`), if
    /// it leads to a flow rather than a command.
    pub fn flow(self) -> Option<&'static str> {
        self.lead().1
    }

    pub fn as_str(self) -> &'static str {
        match self {
            OptionId::CreateProject => "create_project",
            OptionId::ShowHelp => "show_help",
            OptionId::ContinueQuickStart => "continue_quick_start",
            OptionId::ContinueWriting => "continue_writing",
            OptionId::DecidePausedChapter => "decide_paused_chapter",
            OptionId::DecideRevision => "decide_revision",
            OptionId::QualityReview => "quality_review",
            OptionId::ImportResearch => "import_research",
            OptionId::UpdateSpec => "update_spec",
            OptionId::ReviewPropagation => "review_propagation",
            OptionId::PlanVolume => "plan_volume",
            OptionId::ReviewVolume => "review_volume",
            OptionId::Recover => "recover",
            OptionId::WaitLock => "wait_lock",
            OptionId::ShowStatus => "show_status",
            OptionId::ImportBackfill => "import_backfill",
            OptionId::ImportManuscript => "import_manuscript",
        }
    }

    /// The default label and where the option leads: (label, flow, command).
    fn lead(self) -> (&'static str, Option<&'static str>, Option<&'static str>) {
        match self {
            OptionId::CreateProject => ("创建新项目", Some("quick-start"), None),
            OptionId::ShowHelp => ("查看帮助", None, Some("novel help")),
            OptionId::ContinueQuickStart => ("继续快速起步", Some("quick-start"), None),
            OptionId::ContinueWriting => ("继续写作", None, Some("/novel:continue")),
            OptionId::DecidePausedChapter => ("处理暂停的章节", Some("pause-decision"), None),
            OptionId::DecideRevision => ("处理修订候选", Some("revision-decision"), None),
            OptionId::QualityReview => ("质量回顾", Some("quality-review"), None),
            OptionId::ImportResearch => ("导入研究资料", Some("import-research"), None),
            OptionId::UpdateSpec => ("更新设定", Some("update-spec"), None),
            OptionId::ReviewPropagation => ("处理设定变更传播", Some("update-spec"), None),
            OptionId::PlanVolume => ("规划新卷", Some("vol-planning"), None),
            OptionId::ReviewVolume => ("卷末回顾", Some("vol-review"), None),
            OptionId::Recover => ("恢复中断的工作", Some("recovery"), None),
            OptionId::WaitLock => ("等待另一个会话", None, Some("novel lock status")),
            OptionId::ShowStatus => ("查看状态", None, Some("/novel:status")),
            OptionId::ImportBackfill => ("补全导入的章节", Some("import-backfill"), None),
            OptionId::ImportManuscript => ("导入已有书稿", Some("import-manuscript"), None),
        }
    }
}

/// One menu entry. Exactly one of `flow` and `command` is set.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct MenuOption {
    pub id: OptionId,
    /// Shown to the author as is (the skill appends「（推荐）」to the recommended one).
    pub label: String,
    /// One line, Chinese.
    pub why: String,
    /// `skills/start/references/<flow>.md`.
    pub flow: Option<&'static str>,
    /// A skill (`/novel:continue`) or a binary command.
    pub command: Option<&'static str>,
    pub recommended: bool,
}

/// The menu: options (recommended first) and the recommended id.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Menu {
    pub options: Vec<MenuOption>,
    pub recommended: OptionId,
}

/// What the menu is decided from, besides the checkpoint's own fields.
#[derive(Debug, Clone, Copy)]
pub struct MenuFacts<'a> {
    pub checkpoint: &'a Checkpoint,
    pub disk: &'a DiskFacts,
    /// The quick start's standing (in INIT / QUICK_START).
    pub quick_start: Option<&'a QuickStartStatus>,
    /// Reviews due (their reports missing).
    pub reviews_due: &'a [ReviewDue],
    /// How far the current volume's outline (`volumes/vol-NN/outline.md`) is written, when it
    /// exists.
    pub volume_outline: Option<OutlineCover>,
    /// The first chapter of the current volume, when known (its end is `disk.volume_end`).
    pub volume_start: Option<u32>,
}

/// How much of a volume the outline covers: its chapter blocks, and the chapters the volume
/// plans when a plan other than the outline itself says (the schedule's range, the contracts,
/// `chapters_per_volume`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OutlineCover {
    pub blocks: u32,
    pub planned: Option<u32>,
}

fn opt(id: OptionId, why: impl Into<String>) -> MenuOption {
    let (label, flow, command) = id.lead();
    MenuOption {
        id,
        label: label.to_string(),
        why: why.into(),
        flow,
        command,
        recommended: false,
    }
}

fn labelled(id: OptionId, label: impl Into<String>, why: impl Into<String>) -> MenuOption {
    MenuOption {
        label: label.into(),
        ..opt(id, why)
    }
}

/// The first option is the recommended one; at most four (an empty list, which no rule
/// builds, offers the status overview).
fn build(mut options: Vec<MenuOption>) -> Menu {
    if options.is_empty() {
        options.push(show_status());
    }
    options.truncate(4);
    for (i, o) in options.iter_mut().enumerate() {
        o.recommended = i == 0;
    }
    Menu {
        recommended: options.first().map_or(OptionId::ShowStatus, |o| o.id),
        options,
    }
}

fn show_status() -> MenuOption {
    opt(
        OptionId::ShowStatus,
        "进度、字数、评分、伏笔与待处理事项一览",
    )
}

fn import_research() -> MenuOption {
    opt(
        OptionId::ImportResearch,
        "把参考资料整理进 research/，供设定与写作引用",
    )
}

fn update_spec() -> MenuOption {
    opt(
        OptionId::UpdateSpec,
        "修改世界观、角色或故事线设定，并找出受影响的契约",
    )
}

fn quality_review(f: &MenuFacts<'_>) -> MenuOption {
    let due: Vec<&ReviewDue> = f
        .reviews_due
        .iter()
        .filter(|r| r.kind != ReviewKind::Volume)
        .collect();
    let mut why = match due.first() {
        Some(first) => format!(
            "第 {} 章后的{}还没做",
            first.chapter,
            due.iter()
                .map(|r| r.kind.label())
                .collect::<Vec<_>>()
                .join("、")
        ),
        None => "质量简报、一致性检查、伏笔盘点与风格漂移".to_string(),
    };
    if f.disk.overdue_foreshadowing > 0 {
        why.push_str(&format!(
            "（{} 条短线伏笔已逾期）",
            f.disk.overdue_foreshadowing
        ));
    }
    opt(OptionId::QualityReview, why)
}

fn error_why(cp: &Checkpoint, n: Option<u32>) -> String {
    let what = n.map_or("上一步".to_string(), |n| format!("第 {n} 章"));
    match &cp.error {
        Some(e) => format!("{what}出错待重试：{}；从出错的地方继续", e.reason),
        None => format!("{what}出错待重试；从出错的地方继续"),
    }
}

/// The no-project menu (no `.checkpoint.json` up the tree).
pub fn no_project_menu() -> Menu {
    build(vec![
        opt(
            OptionId::CreateProject,
            "当前目录不是小说项目：新建项目，进入快速起步",
        ),
        opt(
            OptionId::ImportManuscript,
            "已经写了一些章节（txt 或一章一个文件）：导入成这本书的已提交章节，再补全摘要与状态",
        ),
        opt(OptionId::ShowHelp, "看看 novel 能做什么、各命令怎么用"),
    ])
}

/// The recommendation outside a project.
pub fn no_project_recommendation() -> Recommendation {
    Recommendation {
        action: NextAction::Start,
        chapter: None,
        reason: "当前目录不在小说项目中".into(),
        command: "/novel:start".into(),
        then: "创建新项目并进入快速起步".into(),
        notes: Vec::new(),
    }
}

fn quick_start_menu(f: &MenuFacts<'_>) -> Menu {
    let (label, why) = match f.quick_start.and_then(|q| q.next_step().map(|s| (q, s))) {
        Some((q, step)) => {
            let done = q.steps.iter().filter(|s| s.done).count();
            let evidence = q
                .steps
                .iter()
                .find(|s| s.id == step.id())
                .and_then(|s| s.evidence.clone());
            (
                format!("继续快速起步：{}", step.label()),
                match evidence {
                    Some(e) => format!("已完成 {done}/{} 步；下一步：{e}", q.steps.len()),
                    None => format!(
                        "已完成 {done}/{} 步；下一步：{}",
                        q.steps.len(),
                        step.label()
                    ),
                },
            )
        }
        None => (
            "继续快速起步".to_string(),
            "设定、角色、风格样本、试写 3 章，确认后进入卷规划".to_string(),
        ),
    };
    build(vec![
        labelled(OptionId::ContinueQuickStart, label, why),
        import_research(),
        show_status(),
    ])
}

/// The volume is written: plan the next one (the flow runs the volume review first when it is
/// not done).
fn volume_done_menu(f: &MenuFacts<'_>, end: Option<u32>) -> Menu {
    let cp = f.checkpoint;
    let v = cp.current_volume;
    let written = match end {
        Some(e) if cp.last_completed_chapter > e => format!(
            "第 {v} 卷已写完（计划到第 {e} 章，已写到第 {} 章）",
            cp.last_completed_chapter
        ),
        Some(e) => format!("第 {v} 卷已写完（到第 {e} 章）"),
        None => format!("第 {v} 卷已写完"),
    };
    let review_due = f.reviews_due.iter().any(|r| r.kind == ReviewKind::Volume)
        || cp.orchestrator_state != OrchestratorState::VolReview;
    let why = if review_due {
        format!(
            "{written}：卷末回顾（全卷一致性、伏笔、节奏）后收卷，再规划第 {} 卷",
            v + 1
        )
    } else {
        format!("{written}，卷末回顾已完成：收卷后规划第 {} 卷", v + 1)
    };
    let next = cp.next_chapter();
    build(vec![
        opt(OptionId::ReviewVolume, why),
        quality_review(f),
        opt(
            OptionId::ContinueWriting,
            format!("不开新卷，接着写第 {next} 章（超出本卷计划）"),
        ),
    ])
}

/// The menu for a project (see the module note for the order).
pub fn menu(f: &MenuFacts<'_>) -> Menu {
    align(
        menu_by_state(f),
        &crate::next::recommend(f.checkpoint, f.disk),
    )
}

/// Whether a recommendation and a menu option say the same thing.
pub(crate) fn agrees(a: crate::next::NextAction, o: OptionId) -> bool {
    use crate::next::NextAction as A;
    use OptionId as O;
    match a {
        A::Recover => o == O::Recover,
        A::WaitForLock => o == O::WaitLock,
        A::Start => o == O::ContinueQuickStart,
        A::ReviewSpecPropagation => o == O::ReviewPropagation,
        A::PlanVolume => o == O::PlanVolume,
        A::ReviewVolume => o == O::ReviewVolume,
        A::AskAuthor => matches!(o, O::DecidePausedChapter | O::DecideRevision),
        A::RunReviews => o == O::QualityReview,
        A::ImportBackfill => o == O::ImportBackfill,
        A::WriteNextChapter
        | A::RetakeLock
        | A::RunChapterWriter
        | A::RunSummarizer
        | A::MarkDrafted
        | A::RunStyleRefiner
        | A::RunQualityJudge
        | A::RunGate
        | A::Commit
        | A::PolishThenCommit
        | A::ReviseChapter
        | A::RepairChapter
        | A::MarkRepaired
        | A::ReviewRepair => o == O::ContinueWriting,
    }
}

/// The menu with the option that says what `recommendation` says first and recommended (one
/// answer: `novel next`'s recommendation and its recommended option never differ); when no
/// option says it, one is made for it.
fn align(m: Menu, r: &crate::next::Recommendation) -> Menu {
    if agrees(r.action, m.recommended) {
        return m;
    }
    let mut options = m.options;
    let first = match options.iter().position(|o| agrees(r.action, o.id)) {
        Some(i) => options.remove(i),
        None => opt(option_for(r.action), r.reason.clone()),
    };
    options.insert(0, first);
    build(options)
}

/// The option that carries out `action`.
fn option_for(action: crate::next::NextAction) -> OptionId {
    OptionId::ALL
        .into_iter()
        .find(|o| agrees(action, *o))
        .unwrap_or(OptionId::ShowStatus)
}

/// The menu as the project's situation builds it (before [`align`]).
fn menu_by_state(f: &MenuFacts<'_>) -> Menu {
    let cp = f.checkpoint;
    if let Some(m) = interrupted_menu(f.disk)
        && !(matches!(f.disk.lock, LockFact::Stale { .. })
            && f.disk.commit_journal.is_none()
            && crate::next::waits_for_author(cp, f.disk))
    {
        return m;
    }
    if cp.orchestrator_state == OrchestratorState::Init {
        return quick_start_menu(f);
    }
    if let Some(m) = propagation_menu(cp) {
        return m;
    }
    if let Some(m) = revision_menu(cp) {
        return m;
    }
    if let Some(n) = cp.inflight_chapter {
        return inflight_menu(f, n);
    }
    if let Some(m) = backfill_menu(cp) {
        return m;
    }
    state_menu(f)
}

/// An interrupted commit (its journal is on disk) or a lock that is stale or held by another
/// session: these come before anything else.
fn interrupted_menu(d: &DiskFacts) -> Option<Menu> {
    if let Some(n) = d.commit_journal
        && d.journal_live
    {
        return Some(build(vec![
            opt(
                OptionId::WaitLock,
                format!("另一个 novel 命令正在写入这本书（第 {n} 章）：稍等几秒，它写完就会结束"),
            ),
            show_status(),
        ]));
    }
    if let Some(n) = d.commit_journal {
        return Some(build(vec![
            opt(
                OptionId::Recover,
                format!("第 {n} 章的提交被中断：先补完它，再说从哪一步继续"),
            ),
            show_status(),
        ]));
    }
    match &d.lock {
        LockFact::Stale { why } => Some(build(vec![
            opt(
                OptionId::Recover,
                format!("项目锁已失效（{why}）：清理后从中断处继续"),
            ),
            show_status(),
        ])),
        LockFact::HeldByOther { holder, .. } => Some(build(vec![
            opt(
                OptionId::WaitLock,
                format!("另一个会话正在处理本项目（{holder}）：等它结束"),
            ),
            opt(
                OptionId::Recover,
                "只有确认那个会话已经不在运行时才选：清除锁并恢复",
            ),
            show_status(),
        ])),
        _ => None,
    }
}

/// A pending spec propagation: its affected contracts are reviewed first.
fn propagation_menu(cp: &Checkpoint) -> Option<Menu> {
    let a = cp
        .pending_actions
        .iter()
        .find(|a| a.kind == SPEC_PROPAGATION)?;
    Some(build(vec![
        opt(
            OptionId::ReviewPropagation,
            format!("有待处理的设定变更传播（{}）：受影响的契约要先复核", a.id),
        ),
        opt(
            OptionId::ContinueWriting,
            "暂不复核、继续写作：受影响的章节可能与新设定矛盾",
        ),
        show_status(),
    ]))
}

/// A revision candidate waiting for the author's confirmation.
fn revision_menu(cp: &Checkpoint) -> Option<Menu> {
    let c = crate::revision::pending_candidate(cp)?;
    let mut options = vec![labelled(
        OptionId::DecideRevision,
        format!("处理第 {c} 章的修订候选"),
        format!("第 {c} 章按评审意见改出的修订稿在等你确认（manual_confirm）：采纳或拒绝"),
    )];
    if cp.inflight_chapter.is_none_or(|n| n != c) {
        options.push(opt(
            OptionId::ContinueWriting,
            "先不处理、继续写作：候选留着，随时可以处理",
        ));
    }
    options.push(show_status());
    Some(build(options))
}

/// Chapter `n` is in flight: retry after an error, decide a paused chapter, or resume it.
fn inflight_menu(f: &MenuFacts<'_>, n: u32) -> Menu {
    let cp = f.checkpoint;
    if cp.orchestrator_state == OrchestratorState::ErrorRetry {
        return build(vec![
            labelled(
                OptionId::ContinueWriting,
                format!("继续第 {n} 章"),
                error_why(cp, Some(n)),
            ),
            opt(
                OptionId::Recover,
                "检查中断留下的文件与锁，说明从哪一步继续",
            ),
            show_status(),
        ]);
    }
    let staging = f.disk.staging.clone().unwrap_or_else(StagingFacts::nothing);
    if resume_point(cp, &staging).step == ResumeStep::AskAuthor {
        let score = current_gate(cp, n)
            .map(|g| format!("（总分 {}）", crate::gate::score_text(g.overall)))
            .unwrap_or_default();
        return build(vec![
            labelled(
                OptionId::DecidePausedChapter,
                format!("处理暂停的第 {n} 章"),
                format!("第 {n} 章被质量门控暂停{score}：接受现稿还是重写，由你决定"),
            ),
            quality_review(f),
            show_status(),
        ]);
    }
    build(vec![
        labelled(
            OptionId::ContinueWriting,
            format!("继续第 {n} 章"),
            format!(
                "第 {n} 章写到一半（阶段 {}），从断点继续",
                stage_name(cp.pipeline_stage)
            ),
        ),
        quality_review(f),
        show_status(),
    ])
}

/// Imported chapters still missing their summaries, state and storyline memory.
fn backfill_menu(cp: &Checkpoint) -> Option<Menu> {
    let (left, n) = crate::import::backfill_of(cp)?;
    Some(build(vec![
        labelled(
            OptionId::ImportBackfill,
            format!("补全导入的章节：第 {n} 章"),
            format!(
                "导入的章节还有 {left} 章缺摘要、状态与故事线记忆：从第 {n} 章起逐章补全，之后才能接着写"
            ),
        ),
        show_status(),
    ]))
}

/// Nothing in flight or pending: the menu follows the orchestrator state.
fn state_menu(f: &MenuFacts<'_>) -> Menu {
    let cp = f.checkpoint;
    match cp.orchestrator_state {
        OrchestratorState::Init | OrchestratorState::QuickStart => quick_start_menu(f),
        OrchestratorState::ErrorRetry => build(vec![
            opt(
                OptionId::ContinueWriting,
                error_why(cp, cp.error.as_ref().and_then(|e| e.chapter)),
            ),
            opt(
                OptionId::Recover,
                "检查中断留下的文件与锁，说明从哪一步继续",
            ),
            show_status(),
        ]),
        OrchestratorState::VolPlanning => vol_planning_menu(f),
        OrchestratorState::VolReview => volume_done_menu(f, f.disk.volume_end),
        OrchestratorState::Writing | OrchestratorState::ChapterRewrite => writing_menu(f),
    }
}

/// Planning the current volume: check and open its outline when there is one.
fn vol_planning_menu(f: &MenuFacts<'_>) -> Menu {
    let v = f.checkpoint.current_volume;
    let why = match f.volume_outline {
        None => format!("大纲策划规划第 {v} 卷：大纲、故事线节奏、伏笔与章节契约"),
        Some(OutlineCover {
            blocks,
            planned: Some(p),
        }) if blocks >= p => format!(
            "第 {v} 卷大纲已写好 {blocks} 章：检查通过后开卷（novel volume check {v}，再 novel volume open {v}）"
        ),
        Some(OutlineCover {
            blocks,
            planned: Some(p),
        }) => format!(
            "第 {v} 卷大纲只写了 {blocks} 章（本卷计划 {p} 章）：大纲策划补全大纲、故事线节奏、伏笔与章节契约，检查通过后开卷"
        ),
        Some(OutlineCover {
            blocks,
            planned: None,
        }) => format!(
            "第 {v} 卷大纲有 {blocks} 章，本卷写多少章还没定：大纲策划排出全卷大纲、故事线节奏、伏笔与章节契约，检查通过后开卷"
        ),
    };
    build(vec![
        labelled(OptionId::PlanVolume, format!("规划第 {v} 卷"), why),
        update_spec(),
        import_research(),
        quality_review(f),
    ])
}

/// Idle while writing: the next chapter, or a due review first, or the volume is done.
fn writing_menu(f: &MenuFacts<'_>) -> Menu {
    let cp = f.checkpoint;
    let last = cp.last_completed_chapter;
    let v = cp.current_volume;
    if let Some(end) = f.disk.volume_end
        && last >= end
    {
        return volume_done_menu(f, Some(end));
    }
    let written = if last == 0 || f.volume_start == Some(last + 1) {
        format!("第 {v} 卷从第 {} 章开始", last + 1)
    } else {
        format!("第 {v} 卷写到第 {last} 章，下一章第 {} 章", last + 1)
    };
    if f.reviews_due.iter().any(|r| r.kind != ReviewKind::Volume) {
        build(vec![
            quality_review(f),
            opt(
                OptionId::ContinueWriting,
                format!("{written}（回顾可以稍后再做）"),
            ),
            update_spec(),
            import_research(),
        ])
    } else {
        build(vec![
            opt(OptionId::ContinueWriting, written),
            quality_review(f),
            import_research(),
            update_spec(),
        ])
    }
}

/// One line per option for the human output (`1. 继续写作（推荐）— 为什么`).
pub fn render(menu: &Menu) -> String {
    let mut out = String::from("可选：\n");
    for (i, o) in menu.options.iter().enumerate() {
        out.push_str(&format!(
            "  {}. {}{} — {}\n",
            i + 1,
            o.label,
            if o.recommended { "（推荐）" } else { "" },
            o.why
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn review_scopes() {
        assert_eq!(ReviewKind::Consistency.continuity_chapters(20), [11, 21]);
        assert_eq!(ReviewKind::Consistency.continuity_chapters(4), [1, 5]);
        assert!(!ReviewKind::Brief.possible_after(0));
        assert!(!ReviewKind::Consistency.possible_after(0));
        assert!(ReviewKind::Volume.possible_after(0));
        assert!(ReviewKind::Brief.possible_after(1));
    }
    use crate::model::PipelineStage;

    fn cp(state: OrchestratorState, last: u32) -> Checkpoint {
        serde_json::from_value(serde_json::json!({
            "last_completed_chapter": last, "current_volume": 2,
            "orchestrator_state": state,
        }))
        .unwrap()
    }

    /// A review looks back over as many chapters as it is apart, never before chapter 1.
    #[test]
    fn a_periodic_review_covers_the_chapters_since_the_last() {
        assert_eq!(ReviewKind::Brief.window(5), [1, 5]);
        assert_eq!(ReviewKind::Brief.window(12), [8, 12]);
        assert_eq!(ReviewKind::Brief.window(3), [1, 3]);
        assert_eq!(ReviewKind::Consistency.window(20), [11, 20]);
        assert_eq!(ReviewKind::Consistency.window(7), [1, 7]);
        assert_eq!(ReviewKind::Volume.window(40), [1, 40]);
    }

    #[test]
    fn reviews_are_wanted_every_five_and_ten_chapters_and_at_the_volume_end() {
        let kinds = |c: &Checkpoint| -> Vec<(ReviewKind, u32, Option<u32>)> {
            reviews_wanted(c)
                .iter()
                .map(|r| (r.kind, r.chapter, r.volume))
                .collect()
        };
        assert_eq!(kinds(&cp(OrchestratorState::Writing, 0)), []);
        assert_eq!(kinds(&cp(OrchestratorState::Writing, 4)), []);
        // Chapter 7: the brief of chapter 5 is still wanted (done when a report covers it).
        assert_eq!(
            kinds(&cp(OrchestratorState::Writing, 7)),
            [(ReviewKind::Brief, 5, None)]
        );
        // Chapter 15: its brief, and the consistency check of chapter 10 unless a report
        // covers it (the store looks).
        assert_eq!(
            kinds(&cp(OrchestratorState::Writing, 15)),
            [
                (ReviewKind::Brief, 15, None),
                (ReviewKind::Consistency, 10, None)
            ]
        );
        assert_eq!(
            kinds(&cp(OrchestratorState::VolReview, 40)),
            [
                (ReviewKind::Brief, 40, None),
                (ReviewKind::Consistency, 40, None),
                (ReviewKind::Volume, 40, Some(2))
            ]
        );
    }

    /// Every combination of state, chapter in flight, stage, lock, journal, propagation and
    /// due reviews gives 2–4 options, exactly one recommended and first, each leading to
    /// exactly one of a flow or a command, no id twice.
    #[test]
    fn every_situation_gives_a_well_formed_menu() {
        use OrchestratorState as S;
        let locks = [
            LockFact::Free,
            LockFact::Stale {
                why: "久无心跳".into(),
            },
            LockFact::HeldByOther {
                chapter: Some(41),
                holder: "进程 9".into(),
            },
            LockFact::HeldByThisSession {
                chapter: Some(41),
                token: "t".into(),
            },
        ];
        let due = [ReviewDue {
            kind: ReviewKind::Brief,
            chapter: 40,
            volume: None,
            command: ReviewKind::Brief.command(),
            report: "logs/reviews/brief-chapter-040.json".into(),
        }];
        let mut checkpoints = Vec::new();
        for state in [
            S::Init,
            S::QuickStart,
            S::VolPlanning,
            S::Writing,
            S::ChapterRewrite,
            S::VolReview,
            S::ErrorRetry,
        ] {
            for inflight in [None, Some(41)] {
                for stage in [
                    None,
                    Some(PipelineStage::Drafted),
                    Some(PipelineStage::Judged),
                ] {
                    for pending in [false, true] {
                        let mut c = cp(state, 40);
                        c.inflight_chapter = inflight;
                        c.pipeline_stage = stage;
                        if pending {
                            c.pending_actions.push(
                                serde_json::from_value(
                                    serde_json::json!({"id": "sp-1", "type": SPEC_PROPAGATION}),
                                )
                                .unwrap(),
                            );
                        }
                        checkpoints.push(c);
                    }
                }
            }
        }
        let mut disks = Vec::new();
        for lock in &locks {
            for (journal, live) in [(None, false), (Some(41), false), (Some(41), true)] {
                for end in [None, Some(40), Some(50)] {
                    disks.push(DiskFacts {
                        lock: lock.clone(),
                        commit_journal: journal,
                        journal_live: live,
                        volume_end: end,
                        ..DiskFacts::quiet()
                    });
                }
            }
        }
        let mut seen = 0;
        for c in &checkpoints {
            for disk in &disks {
                for reviews in [&due[..0], &due[..]] {
                    let disk = &DiskFacts {
                        reviews_due: reviews.to_vec(),
                        ..disk.clone()
                    };
                    let m = menu(&MenuFacts {
                        checkpoint: c,
                        disk,
                        quick_start: None,
                        reviews_due: reviews,
                        volume_outline: None,
                        volume_start: Some(31),
                    });
                    // One answer: `next`'s recommendation is the menu's recommended option.
                    let r = crate::next::recommend(c, disk);
                    assert!(
                        agrees(r.action, m.recommended),
                        "recommendation {:?} vs option {:?}: {c:?} {disk:?}",
                        r.action,
                        m.recommended
                    );
                    let ctx = format!("{c:?} {disk:?} {}", reviews.len());
                    assert!((2..=4).contains(&m.options.len()), "{ctx}");
                    assert!(m.options[0].recommended, "{ctx}");
                    assert_eq!(m.recommended, m.options[0].id, "{ctx}");
                    assert_eq!(
                        m.options.iter().filter(|o| o.recommended).count(),
                        1,
                        "{ctx}"
                    );
                    for o in &m.options {
                        assert!(o.flow.is_some() != o.command.is_some(), "{ctx}");
                        assert!(!o.why.is_empty() && !o.label.is_empty(), "{ctx}");
                    }
                    let mut ids: Vec<&str> = m.options.iter().map(|o| o.id.as_str()).collect();
                    ids.sort_unstable();
                    ids.dedup();
                    assert_eq!(ids.len(), m.options.len(), "{ctx}");
                    // A journal a live writer is writing: wait, never recover under it. An
                    // interrupted commit and a stale lock always come first.
                    if disk.commit_journal.is_some() && disk.journal_live {
                        assert_eq!(m.recommended, OptionId::WaitLock, "{ctx}");
                        assert!(m.options.iter().all(|o| o.id != OptionId::Recover), "{ctx}");
                    } else if disk.commit_journal.is_some()
                        || matches!(disk.lock, LockFact::Stale { .. })
                    {
                        assert_eq!(m.recommended, OptionId::Recover, "{ctx}");
                    }
                    seen += 1;
                }
            }
        }
        assert_eq!(seen, (7 * 2 * 3 * 2) * (4 * 3 * 3) * 2);
    }

    #[test]
    fn option_ids_serialise_as_the_contract_names() {
        for id in OptionId::ALL {
            assert_eq!(serde_json::to_value(id).unwrap(), id.as_str());
        }
    }
}
