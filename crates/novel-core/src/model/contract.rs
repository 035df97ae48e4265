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
    /// 本章的爽点：本章兑现（`delivery_chapter` 缺省或等于本章）或为后面的章节蓄压。
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub payoff: Option<Payoff>,
    #[serde(flatten)]
    pub extra: Extra,
}

/// 爽点 / 期待感 as data: what the reader is promised (蓄压, from `setup_chapter`) and what they
/// get (兑现, in `delivery_chapter`, this chapter when absent).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Payoff {
    /// 爽点类型：打脸、逆袭、突破、揭秘、反转、甜宠……
    #[serde(rename = "type")]
    #[schemars(length(min = 1))]
    pub kind: String,
    /// 从哪一章开始蓄压（铺垫、让对手把话说满、信息差）。
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1))]
    pub setup_chapter: Option<u32>,
    /// 在哪一章兑现；缺省为本章。
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1))]
    pub delivery_chapter: Option<u32>,
    /// 蓄压：读者被许诺了什么、压在谁身上。
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub setup: Option<String>,
    /// 兑现：读者最后得到的那一下，落到具体的人和反应上。
    #[schemars(length(min = 1))]
    pub delivery: String,
    #[serde(flatten)]
    pub extra: Extra,
}

impl Payoff {
    /// The chapter that delivers it (`chapter` is the contract's own).
    pub fn delivered_in(&self, chapter: u32) -> u32 {
        self.delivery_chapter.unwrap_or(chapter)
    }

    /// The check row id the judge writes for a payoff delivered in `chapter` (`PAYOFF-012`).
    pub fn row_id(chapter: u32) -> String {
        format!("PAYOFF-{chapter:03}")
    }
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
