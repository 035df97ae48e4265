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
}

/// `.checkpoint.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Checkpoint {
    /// 最后完成的章节号（0 = 尚未完成任何章节）。
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
    #[schemars(range(min = 1))]
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
    #[serde(flatten)]
    pub extra: Extra,
}
