//! Multi-thread narrative files (PRD §6.6): `storylines/storylines.json`,
//! `storylines/storyline-spec.json` (LS) and `volumes/vol-NN/storyline-schedule.json`.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::common::{ConstraintType, Extra, SLUG, STORYLINE_RULE_ID};

/// `storylines/storylines.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Storylines {
    pub storylines: Vec<Storyline>,
    #[serde(default)]
    pub relationships: Vec<StorylineRelationship>,
    /// 允许的故事线类型；为空时使用默认的六种。
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub storyline_types: Vec<String>,
    #[serde(flatten)]
    pub extra: Extra,
}

/// The six storyline types of §6.6.1, used when a file lists none.
pub const DEFAULT_STORYLINE_TYPES: [&str; 6] = [
    "main_arc",
    "faction_conflict",
    "conspiracy",
    "mystery",
    "character_arc",
    "parallel_timeline",
];

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum StorylineScope {
    Novel,
    MultiVolume,
    SingleVolume,
}

/// Life-cycle of a storyline; `dormant`/`planned` lines are frozen in context (§6.6.7).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum StorylineStatus {
    Active,
    Dormant,
    Planned,
    Resolved,
}

/// One storyline (故事线).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Storyline {
    /// slug，也是 `storylines/<id>/memory.md` 的目录名。
    #[schemars(pattern(SLUG))]
    pub id: String,
    #[schemars(length(min = 1))]
    pub name: String,
    #[serde(rename = "type")]
    #[schemars(pattern(SLUG))]
    pub kind: String,
    pub scope: StorylineScope,
    /// POV 角色（显示名或 slug）；可为空（碎片拼凑线）。
    #[serde(default)]
    pub pov_characters: Vec<String>,
    #[serde(default)]
    pub affiliated_factions: Vec<String>,
    /// present / past / future / parallel
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeline: Option<String>,
    pub status: StorylineStatus,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1))]
    pub introduced_volume: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    #[serde(flatten)]
    pub extra: Extra,
}

/// How two storylines touch.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct StorylineRelationship {
    #[schemars(pattern(SLUG))]
    pub from: String,
    #[schemars(pattern(SLUG))]
    pub to: String,
    #[serde(rename = "type")]
    pub kind: String,
    #[serde(default)]
    pub bridges: Bridges,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub convergence_condition: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub narrative_function: Option<String>,
    #[serde(flatten)]
    pub extra: Extra,
}

/// Characters, foreshadowing and events two lines share.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Bridges {
    #[serde(default)]
    pub shared_characters: Vec<String>,
    #[serde(default)]
    pub shared_foreshadowing: Vec<String>,
    #[serde(default)]
    pub shared_events: Vec<String>,
    #[serde(flatten)]
    pub extra: Extra,
}

/// `storylines/storyline-spec.json` — the LS layer (§6.6.4, §6.6.7).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct StorylineSpec {
    #[schemars(range(min = 1))]
    pub spec_version: u32,
    pub rules: Vec<StorylineRule>,
    #[serde(flatten)]
    pub extra: Extra,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct StorylineRule {
    /// `LS-001`.
    #[schemars(pattern(STORYLINE_RULE_ID))]
    pub id: String,
    pub category: String,
    #[schemars(length(min = 1))]
    pub rule: String,
    pub constraint_type: ConstraintType,
    #[serde(flatten)]
    pub extra: Extra,
}

/// `volumes/vol-NN/storyline-schedule.json` — the volume's storyline plan (§6.6.2).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct StorylineSchedule {
    #[schemars(range(min = 1))]
    pub volume: u32,
    /// 本卷章节范围 `[首章, 末章]`；卷末章据此判定（进入 VOL_REVIEW、关键章双裁判）。
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub chapter_range: Option<ChapterRange>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub volume_theme: Option<String>,
    pub active_storylines: Vec<ActiveStoryline>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interleaving_pattern: Option<InterleavingPattern>,
    #[serde(default)]
    pub convergence_events: Vec<ConvergenceEvent>,
    #[serde(default)]
    pub dormant_storylines: Vec<String>,
    #[serde(default)]
    pub newly_activated: Vec<String>,
    #[serde(flatten)]
    pub extra: Extra,
}

/// An inclusive chapter range `[first, last]`.
pub type ChapterRange = [u32; 2];

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum VolumeRole {
    Primary,
    Secondary,
    Seasoning,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ActiveStoryline {
    #[schemars(pattern(SLUG))]
    pub storyline_id: String,
    pub volume_role: VolumeRole,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target_chapters: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arc_goal: Option<String>,
    #[serde(flatten)]
    pub extra: Extra,
}

/// Rhythm constraints, not an exact placement (§6.6.2).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct InterleavingPattern {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub strategy: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1))]
    pub primary_max_consecutive: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub secondary_min_appearance: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seasoning_placement: Option<String>,
    #[serde(flatten)]
    pub extra: Extra,
}

/// A planned convergence of storylines (交汇事件).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ConvergenceEvent {
    pub chapter_range: ChapterRange,
    pub involved_storylines: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trigger: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub aftermath: Option<String>,
    #[serde(flatten)]
    pub extra: Extra,
}
