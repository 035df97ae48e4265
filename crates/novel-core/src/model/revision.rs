//! `004`: revision candidates, author preferences and per-character memory.
//!
//! - `chapters/chapter-NNN-revision.json` ([`Revision`]): a revised chapter kept for the
//!   author under `revision_policy: manual_confirm`, with the notes that produced it.
//! - `memory/preferences.json` ([`Preferences`]): what the author asked every chapter to keep
//!   to, one record per preference.
//! - `memory/characters/<slug>.jsonl` ([`MemoryEntry`] per line): what a character did,
//!   chapter by chapter, after the profile basics it started with.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::common::{Extra, SLUG};

/// Where a revision note came from (`judge:primary`, `judge:secondary`, `leak`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct RevisionNote {
    #[schemars(length(min = 1))]
    pub source: String,
    /// 位置（段落、句子）；可以为空。
    #[serde(default)]
    pub target: String,
    /// 修订指令（非空）。
    #[schemars(length(min = 1))]
    pub instruction: String,
    /// 阻断性：评审标了阻断（或串线），不做到门控不放行。
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub blocking: bool,
    #[serde(flatten)]
    pub extra: Extra,
}

/// What the author decided about a candidate.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum RevisionStatus {
    Pending,
    Accepted,
    Rejected,
}

/// Whether the candidate revises a committed chapter or the one in flight.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum RevisionTarget {
    Committed,
    Staged,
}

/// `chapters/chapter-NNN-revision.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Revision {
    #[serde(default = "one")]
    #[schemars(range(min = 1))]
    pub schema_version: u32,
    #[schemars(range(min = 1, max = 99_999))]
    pub chapter: u32,
    pub status: RevisionStatus,
    pub target: RevisionTarget,
    /// ISO-8601 时间。
    pub created_at: String,
    /// 作者采纳或拒绝的时间。
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decided_at: Option<String>,
    /// 候选据以修订的那份正文的摘要值：正文此后改过，候选就过时了，不能再采纳。
    #[schemars(length(min = 1))]
    pub base_digest: String,
    /// 产生这份候选的修订意见。
    #[schemars(length(min = 1))]
    pub notes: Vec<RevisionNote>,
    /// 修订后的整章正文（Markdown）。
    #[schemars(length(min = 1))]
    pub candidate: String,
    /// 采纳时被候选替换掉的原稿（留档，什么都不丢）。
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub original: Option<String>,
    #[serde(flatten)]
    pub extra: Extra,
}

/// The pattern of a preference id.
pub const PREFERENCE_ID: &str = r"^P-[0-9]{3,}$";

fn one() -> u32 {
    1
}

/// One preference of the author.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Preference {
    /// `P-001` …（不重复使用）。
    #[schemars(pattern(PREFERENCE_ID))]
    pub id: String,
    #[schemars(length(min = 1))]
    pub text: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub category: Option<String>,
    /// `author_<项目>`（与 `004` 的偏好存储保持兼容）。
    #[schemars(length(min = 1))]
    pub user_id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub created_at: Option<String>,
    #[serde(flatten)]
    pub extra: Extra,
}

/// `memory/preferences.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Preferences {
    #[serde(default = "one")]
    #[schemars(range(min = 1))]
    pub schema_version: u32,
    #[serde(default)]
    pub preferences: Vec<Preference>,
    #[serde(flatten)]
    pub extra: Extra,
}

impl Default for Preferences {
    fn default() -> Self {
        Preferences {
            schema_version: 1,
            preferences: Vec::new(),
            extra: Extra::new(),
        }
    }
}

/// What one memory line records.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum MemoryKind {
    /// 角色建档时的基础属性（第一行）。
    Profile,
    /// 某章里角色做了什么（Summarizer 的 `character_actions`）。
    Action,
}

/// One line of `memory/characters/<slug>.jsonl`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct MemoryEntry {
    pub kind: MemoryKind,
    #[schemars(pattern(SLUG))]
    pub character: String,
    /// 章节号；建档记录为 0。
    #[schemars(range(max = 99_999))]
    pub chapter: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1))]
    pub scene: Option<u32>,
    /// 行为摘要（action）或基础属性的一段文字（profile）。
    #[schemars(length(min = 1))]
    pub text: String,
    /// 建档记录的字段：name、role、appearance、personality、background、motivation。
    #[serde(default, skip_serializing_if = "indexmap::IndexMap::is_empty")]
    pub fields: indexmap::IndexMap<String, String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recorded_at: Option<String>,
    #[serde(flatten)]
    pub extra: Extra,
}

/// One entry of a delta's `character_actions`: what a character did in the chapter.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct CharacterAction {
    /// 角色 slug、显示名或别名。
    #[schemars(length(min = 1))]
    pub character: String,
    /// 场景序号（从 1 起）。
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1))]
    pub scene: Option<u32>,
    /// 这个角色在本章（本场景）做了什么，一两句。
    #[schemars(length(min = 1))]
    pub action: String,
    #[serde(flatten)]
    pub extra: Extra,
}
