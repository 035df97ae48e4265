//! `world/rules.json` — L1 world rules (PRD §6.5.2).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::common::{ConstraintType, Extra, WORLD_RULE_ID};

/// `world/rules.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct WorldRules {
    pub rules: Vec<WorldRule>,
    #[serde(flatten)]
    pub extra: Extra,
}

/// One verifiable world rule (L1 世界规则).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct WorldRule {
    /// `W-001`.
    #[schemars(pattern(WORLD_RULE_ID))]
    pub id: String,
    /// magic_system / geography / society …
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub category: Option<String>,
    #[schemars(length(min = 1))]
    pub rule: String,
    pub constraint_type: ConstraintType,
    #[serde(default)]
    pub exceptions: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub introduced_chapter: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_verified: Option<u32>,
    #[serde(flatten)]
    pub extra: Extra,
}
