//! `volumes/vol-NN/chapter-contracts/chapter-NNN.json` — L3 chapter contracts
//! (PRD §6.5.4, with the storyline context of §6.6.3).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::common::{Extra, ForeshadowStatus, SLUG, StrMap, WORLD_RULE_ID};

/// One chapter's contract (章节契约).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ChapterContract {
    #[schemars(range(min = 1))]
    pub chapter: u32,
    /// 本章所属故事线 id。
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(pattern(SLUG))]
    pub storyline_id: Option<String>,
    #[serde(default)]
    pub preconditions: Preconditions,
    #[serde(default)]
    pub objectives: Vec<Objective>,
    #[serde(default)]
    pub postconditions: Postconditions,
    #[serde(default)]
    pub acceptance_criteria: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub storyline_context: Option<StorylineContext>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transition_hint: Option<TransitionHint>,
    #[serde(flatten)]
    pub extra: Extra,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Preconditions {
    /// 角色（显示名）→ 状态字段。
    #[serde(default)]
    pub character_states: Map<String, Value>,
    /// 本章必须遵守的 L1 规则 id。
    #[serde(default)]
    #[schemars(inner(pattern(WORLD_RULE_ID)))]
    pub required_world_rules: Vec<String>,
    #[serde(flatten)]
    pub extra: Extra,
}

/// plant / advance / resolve — what an objective does to a foreshadowing thread.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ForeshadowAction {
    Plant,
    Advance,
    Resolve,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Objective {
    /// `OBJ-048-1`.
    #[schemars(length(min = 1))]
    pub id: String,
    /// plot / foreshadowing / character / storyline …
    #[serde(rename = "type")]
    pub kind: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub required: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub action: Option<ForeshadowAction>,
    /// 伏笔 id 等目标。
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target: Option<String>,
    #[schemars(length(min = 1))]
    pub description: String,
    #[serde(flatten)]
    pub extra: Extra,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Postconditions {
    #[serde(default)]
    pub state_changes: Map<String, Value>,
    /// 伏笔 id → 本章结束时应达到的状态。
    #[serde(default)]
    pub foreshadowing_updates: indexmap::IndexMap<String, ForeshadowStatus>,
    #[serde(flatten)]
    pub extra: Extra,
}

/// §6.6.3: where this chapter's storyline stands and what the others are doing.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct StorylineContext {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_chapter_on_this_line: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_chapter_summary: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub chapters_since_last: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub line_arc_progress: Option<String>,
    /// 其他活跃线此刻的一句话进展（故事线 id → 文本）。
    #[serde(default)]
    pub concurrent_state: StrMap,
    #[serde(flatten)]
    pub extra: Extra,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct TransitionHint {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(pattern(SLUG))]
    pub next_storyline: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bridge: Option<String>,
    #[serde(flatten)]
    pub extra: Extra,
}
