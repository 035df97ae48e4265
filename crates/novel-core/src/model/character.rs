//! `characters/{active,retired}/SLUG.json` (L2 contracts, PRD §6.5.3) and
//! `characters/relationships.json`.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::common::{CONTRACT_ID, Extra, SLUG};

/// A character file. Its name must be `<id>.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Character {
    /// slug，如 `lu-chen`；与文件名一致。
    #[schemars(pattern(SLUG))]
    pub id: String,
    /// 正文中使用的名字，如「陆尘」。
    #[schemars(length(min = 1))]
    pub display_name: String,
    /// 登记过的别名、称号（别名不算错名）。
    #[serde(default)]
    pub aliases: Vec<String>,
    /// protagonist / antagonist / supporting / minor
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub role: Option<String>,
    #[serde(default)]
    pub contracts: Vec<CharacterContract>,
    #[serde(flatten)]
    pub extra: Extra,
}

/// One L2 contract (角色契约): a verifiable behaviour boundary.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct CharacterContract {
    /// `C-LUCHEN-001`.
    #[schemars(pattern(CONTRACT_ID))]
    pub id: String,
    /// capability / personality / relationship / knowledge …
    #[serde(rename = "type")]
    #[schemars(length(min = 1))]
    pub kind: String,
    #[schemars(length(min = 1))]
    pub rule: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub valid_from_chapter: Option<u32>,
    /// `null` = 仍然有效。
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        with = "super::common::double_option"
    )]
    #[schemars(with = "Option<u32>")]
    pub valid_until: Option<Option<u32>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub update_requires: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub exceptions: Vec<String>,
    #[serde(flatten)]
    pub extra: Extra,
}

/// `characters/relationships.json`: a directed graph between character slugs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Relationships {
    pub relationships: Vec<Relationship>,
    #[serde(flatten)]
    pub extra: Extra,
}

/// One directed edge.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Relationship {
    #[schemars(pattern(SLUG))]
    pub from: String,
    #[schemars(pattern(SLUG))]
    pub to: String,
    /// 师徒 / 宿敌 / mentor …
    #[serde(rename = "type")]
    #[schemars(length(min = 1))]
    pub kind: String,
    /// 好感度 −100..100。
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = -100, max = 100))]
    pub intensity: Option<i32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub since_chapter: Option<u32>,
    /// `active` or `ended` (e.g. after a retirement).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<RelationshipStatus>,
    #[serde(flatten)]
    pub extra: Extra,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum RelationshipStatus {
    Active,
    Ended,
}
