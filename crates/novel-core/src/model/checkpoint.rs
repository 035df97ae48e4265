//! `.checkpoint.json` — the orchestrator's recovery point (PRD §9.2, §8.2; `002` §10.4).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::common::{Extra, GateDecision, SLUG};

/// The volume-loop state machine of PRD §8.2.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum OrchestratorState {
    Init,
    QuickStart,
    VolPlanning,
    Writing,
    ChapterRewrite,
    VolReview,
    ErrorRetry,
}

impl OrchestratorState {
    /// Before the author confirmed the quick start (INIT or QUICK_START): the quick-start steps
    /// are still open.
    pub fn in_quick_start(self) -> bool {
        matches!(
            self,
            OrchestratorState::Init | OrchestratorState::QuickStart
        )
    }
}

/// Where the in-flight chapter stands in the staging pipeline (`null` = idle).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum PipelineStage {
    Drafting,
    Drafted,
    Refined,
    Judged,
    Revising,
    // After a `polish` verdict, StyleRefiner has made its second pass (commit follows).
    Polished,
    Committed,
    // The gate sent the chapter back for its opening or its ending alone: ChapterWriter
    // rewrites only those paragraphs (`crate::repair`).
    Repairing,
    // The repaired paragraphs are spliced in: QualityJudge re-checks only them.
    Repaired,
}

impl PipelineStage {
    pub const ALL: [PipelineStage; 9] = [
        PipelineStage::Drafting,
        PipelineStage::Drafted,
        PipelineStage::Refined,
        PipelineStage::Judged,
        PipelineStage::Revising,
        PipelineStage::Polished,
        PipelineStage::Committed,
        PipelineStage::Repairing,
        PipelineStage::Repaired,
    ];

    /// The stage's name in the checkpoint and on the command line (`drafted`, …).
    pub fn name(self) -> &'static str {
        match self {
            PipelineStage::Drafting => "drafting",
            PipelineStage::Drafted => "drafted",
            PipelineStage::Refined => "refined",
            PipelineStage::Judged => "judged",
            PipelineStage::Revising => "revising",
            PipelineStage::Polished => "polished",
            PipelineStage::Committed => "committed",
            PipelineStage::Repairing => "repairing",
            PipelineStage::Repaired => "repaired",
        }
    }

    /// Whether `novel chapter stage` moves a chapter to it (`committed` is the commit's alone).
    pub fn set_by_stage_command(self) -> bool {
        self != PipelineStage::Committed
    }

    /// The stage named `name` ([`PipelineStage::name`]).
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|s| s.name() == name)
    }
}

/// `.checkpoint.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Checkpoint {
    /// 最后完成的章节号（0 = 尚未完成任何章节）。
    #[schemars(range(max = 99_999))]
    pub last_completed_chapter: u32,
    /// 当前卷号（从 1 开始）。
    #[schemars(range(min = 1))]
    pub current_volume: u32,
    pub orchestrator_state: OrchestratorState,
    /// 流水线阶段；`null` 表示空闲。
    #[serde(default)]
    pub pipeline_stage: Option<PipelineStage>,
    /// 正在处理的章节号；`null` 表示没有在写的章节。
    #[serde(default)]
    #[schemars(range(min = 1, max = 99_999))]
    pub inflight_chapter: Option<u32>,
    /// 本章已做的修订次数（门控最多 2 次）。
    #[serde(default)]
    pub revision_count: u32,
    /// 待处理事项（如设定变更传播）。
    #[serde(default)]
    pub pending_actions: Vec<PendingAction>,
    /// ISO-8601 时间。
    #[serde(default)]
    pub last_checkpoint_time: Option<String>,
    /// 在写章节最近一次门控的结论（提交时据此放行）。
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gate: Option<GateRecord>,
    /// 快速起步中作者确认过的步骤（`novel quickstart done STEP`）。
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub quick_start: Option<QuickStartMarks>,
    /// 进入 ERROR_RETRY 时记录的错误（`novel chapter fail`）；恢复后清除。
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<ErrorRecord>,
    /// 已发出的最大设定传播编号（`spec-propagation-NNN`）：事项关闭后编号也不再复用。
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spec_propagation_seq: Option<u64>,
    #[serde(flatten)]
    pub extra: Extra,
}

/// The steps of the quick start (PRD §6 Layer 1), in order.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, JsonSchema,
)]
pub enum QuickStartStep {
    #[serde(rename = "brief")]
    Brief,
    #[serde(rename = "world")]
    World,
    #[serde(rename = "characters")]
    Characters,
    #[serde(rename = "storylines")]
    Storylines,
    #[serde(rename = "style")]
    Style,
    #[serde(rename = "outline")]
    Outline,
    #[serde(rename = "trial-1")]
    Trial1,
    #[serde(rename = "trial-2")]
    Trial2,
    #[serde(rename = "trial-3")]
    Trial3,
    #[serde(rename = "confirm")]
    Confirm,
}

/// `quick_start` in the checkpoint: the steps the author marked done.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct QuickStartMarks {
    /// 已标记完成的步骤（按步骤顺序，不重复）。
    #[serde(default)]
    pub done: Vec<QuickStartStep>,
    #[serde(flatten)]
    pub extra: Extra,
}

/// Why the orchestrator is in ERROR_RETRY, and where it returns.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ErrorRecord {
    /// 出错前的编排状态（`chapter begin` 恢复时回到它）。
    pub previous_state: OrchestratorState,
    /// 出错原因（作者可读）。
    #[schemars(length(min = 1))]
    pub reason: String,
    /// ISO-8601 时间。
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub at: Option<String>,
    /// 出错的章节。
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1))]
    pub chapter: Option<u32>,
    #[serde(flatten)]
    pub extra: Extra,
}

/// One entry of `pending_actions`, e.g. `type: "spec_propagation"`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct PendingAction {
    #[schemars(length(min = 1))]
    pub id: String,
    #[serde(rename = "type")]
    #[schemars(pattern(SLUG))]
    pub kind: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub created_at: Option<String>,
    #[serde(flatten)]
    pub extra: Extra,
}

/// The last gate verdict of the in-flight chapter.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct GateRecord {
    #[schemars(range(min = 1))]
    pub chapter: u32,
    pub decision: GateDecision,
    pub overall: f64,
    #[serde(default)]
    pub force_passed: bool,
    /// 门控时的修订轮次（`revision_count`）；轮次变了，这条结论就只是上一轮的记录。
    #[serde(default)]
    pub revision: u32,
    /// 门控时 staging 章节正文的摘要值：修订稿、二次润色稿必须与它不同。
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text_digest: Option<String>,
    /// 作者明确接受了暂停中的章节（novel chapter commit --accept）。
    #[serde(default, skip_serializing_if = "super::common::is_false")]
    pub accepted_by_author: bool,
    /// 门控（或二次润色完成）时提交会带走的每个 staging 文件的摘要值：提交时逐个核对，
    /// 之后被改动、替换或删除的文件会让提交被拒。
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub staged: std::collections::BTreeMap<String, String>,
    /// 结论是 revise 且只因开篇或章末：局部修补这几处（novel chapter stage repairing），不整章修订。
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub repair: Vec<super::repair::PartReason>,
    #[serde(flatten)]
    pub extra: Extra,
}

impl Checkpoint {
    /// The volume being planned or written: `current_volume`, and 1 for a checkpoint that says
    /// 0 (written by hand, or before the first volume was set).
    pub fn volume(&self) -> u32 {
        self.current_volume.max(1)
    }

    /// The chapter to write next: the one after the last completed.
    pub fn next_chapter(&self) -> u32 {
        self.last_completed_chapter + 1
    }

    /// The chapter at hand: the one in flight, else [`next_chapter`](Self::next_chapter).
    pub fn chapter_at_hand(&self) -> u32 {
        self.inflight_chapter.unwrap_or(self.next_chapter())
    }
}

/// The state as the author reads it (「卷内写作」).
pub fn state_name(s: OrchestratorState) -> &'static str {
    match s {
        OrchestratorState::Init => "未初始化",
        OrchestratorState::QuickStart => "快速起步",
        OrchestratorState::VolPlanning => "卷规划",
        OrchestratorState::Writing => "卷内写作",
        OrchestratorState::ChapterRewrite => "章节修订",
        OrchestratorState::VolReview => "卷末回顾",
        OrchestratorState::ErrorRetry => "出错待重试",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A stage's name is the one serde writes in the checkpoint, and reads back.
    #[test]
    fn stage_names_are_the_checkpoint_names() {
        for s in PipelineStage::ALL {
            assert_eq!(serde_json::to_value(s).unwrap(), s.name());
            assert_eq!(PipelineStage::from_name(s.name()), Some(s));
        }
        assert_eq!(PipelineStage::from_name("Drafted"), None);
        assert!(OrchestratorState::QuickStart.in_quick_start());
        assert!(!OrchestratorState::VolPlanning.in_quick_start());
    }
}
