//! `logs/chapter-NNN-log.json` — per-chapter pipeline log (PRD §9.2).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::common::{Extra, GateDecision, SLUG};

/// The key of a pipeline log that records the committed chapter's 字数 (written at commit).
pub const LOG_CHARS: &str = "chars";
/// The key of a pipeline log with the score the gate counted.
pub const LOG_GATE_OVERALL: &str = "gate_overall";
/// The key of a pipeline log that says the author accepted the chapter as it was (`--accept`).
pub const LOG_ACCEPTED_BY_AUTHOR: &str = "accepted_by_author";
/// A stage line's key for the one token total of an agent's run.
pub const TOTAL_TOKENS: &str = "tokens";
/// A stage line's key for StyleRefiner's measured edit ratio (`stage refined`).
pub const EDIT_RATIO: &str = "edit_ratio";

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct PipelineLog {
    #[schemars(range(min = 1))]
    pub chapter: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(pattern(SLUG))]
    pub storyline_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub started_at: Option<String>,
    pub stages: Vec<StageLog>,
    #[serde(default)]
    pub gate_decision: Option<GateDecision>,
    #[serde(default)]
    pub revisions: u32,
    #[serde(default)]
    pub force_passed: bool,
    #[serde(default)]
    pub total_duration_ms: Option<u64>,
    #[serde(default)]
    #[schemars(range(min = 0))]
    pub total_cost_usd: Option<f64>,
    #[serde(flatten)]
    pub extra: Extra,
}

/// One stage; unknown figures are `null`, never guessed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct StageLog {
    /// draft / summarize / refine / judge / revise …
    #[schemars(length(min = 1))]
    pub name: String,
    #[serde(default)]
    pub model: Option<String>,
    #[serde(default)]
    pub input_tokens: Option<u64>,
    #[serde(default)]
    pub output_tokens: Option<u64>,
    #[serde(default)]
    pub duration_ms: Option<u64>,
    #[serde(flatten)]
    pub extra: Extra,
}
