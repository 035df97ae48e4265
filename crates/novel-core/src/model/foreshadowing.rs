//! `foreshadowing/global.json` (cross-volume threads) and `volumes/vol-NN/foreshadowing.json`
//! (the volume's plan).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::common::{Extra, ForeshadowScope, ForeshadowStatus, SLUG};
use super::storyline::ChapterRange;

/// `foreshadowing/global.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ForeshadowingGlobal {
    pub foreshadowing: Vec<Foreshadowing>,
    #[serde(flatten)]
    pub extra: Extra,
}

/// One tracked foreshadowing thread (伏笔).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Foreshadowing {
    #[schemars(pattern(SLUG))]
    pub id: String,
    #[serde(default)]
    pub description: String,
    pub scope: ForeshadowScope,
    pub status: ForeshadowStatus,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub planted_chapter: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(pattern(SLUG))]
    pub planted_storyline: Option<String>,
    /// 计划回收区间 `[起, 止]`；short 伏笔超过止章仍未回收即为逾期。
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target_resolve_range: Option<ChapterRange>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_updated_chapter: Option<u32>,
    #[serde(default)]
    pub history: Vec<ForeshadowEvent>,
    #[serde(flatten)]
    pub extra: Extra,
}

/// One step of a thread's history; de-duplicated on (chapter, action).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ForeshadowEvent {
    #[schemars(range(min = 1))]
    pub chapter: u32,
    pub action: ForeshadowStatus,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
    #[serde(flatten)]
    pub extra: Extra,
}

/// `volumes/vol-NN/foreshadowing.json`: threads this volume plants, advances or resolves.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct VolumeForeshadowing {
    #[schemars(range(min = 1))]
    pub volume: u32,
    pub foreshadowing: Vec<PlannedForeshadowing>,
    #[serde(flatten)]
    pub extra: Extra,
}

/// A planned thread: new in this volume, or carried over (`carried_over: true`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct PlannedForeshadowing {
    #[schemars(pattern(SLUG))]
    pub id: String,
    pub description: String,
    pub scope: ForeshadowScope,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1))]
    pub plant_chapter: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub advance_chapters: Option<Vec<u32>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target_resolve_range: Option<ChapterRange>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(pattern(SLUG))]
    pub storyline_id: Option<String>,
    #[serde(default, skip_serializing_if = "super::common::is_false")]
    pub carried_over: bool,
    #[serde(flatten)]
    pub extra: Extra,
}
