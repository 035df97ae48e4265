//! `ai-blacklist.json` — AI-cliché phrases and structural patterns (PRD §7).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::common::{Extra, SLUG, StrMap, is_false};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct AiBlacklist {
    #[schemars(range(min = 1))]
    pub version: u32,
    /// 类别 slug → 中文名。
    #[serde(default)]
    pub categories: StrMap,
    pub entries: Vec<BlacklistEntry>,
    /// 作者确认可用、永不计数的短语。
    #[serde(default)]
    pub whitelist: Vec<String>,
    /// 结构性 AI 痕迹（正则）。
    #[serde(default)]
    pub patterns: Vec<BlacklistPattern>,
    #[serde(flatten)]
    pub extra: Extra,
}

/// Who put a phrase on the list (§7 黑名单维护).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum EntrySource {
    Seed,
    User,
    Judge,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct BlacklistEntry {
    #[schemars(length(min = 1))]
    pub phrase: String,
    #[schemars(pattern(SLUG))]
    pub category: String,
    /// 只在叙述中计数（「」“”『』 内的对话不算）。
    #[serde(default, skip_serializing_if = "is_false")]
    pub narration_only: bool,
    /// 只在段首计数。
    #[serde(default, skip_serializing_if = "is_false")]
    pub paragraph_start_only: bool,
    /// 替换建议。
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub replacements: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<EntrySource>,
    /// 由 QualityJudge 建议加入时的证据（章节与原文）。
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub evidence: Option<String>,
    #[serde(flatten)]
    pub extra: Extra,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct BlacklistPattern {
    #[schemars(pattern(SLUG))]
    pub id: String,
    /// 中文名，如「不是……而是……」。
    #[schemars(length(min = 1))]
    pub name: String,
    /// 正则表达式（Rust regex 语法）。
    #[schemars(length(min = 1))]
    pub regex: String,
    #[serde(default, skip_serializing_if = "is_false")]
    pub narration_only: bool,
    /// 每千字上限；超过即报。
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0))]
    pub max_per_1000: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    #[serde(flatten)]
    pub extra: Extra,
}
