//! 局部修补（hook-only repair）的文件：门控只因开篇或章末退回时，写手只重写那几段，裁判只复核那几段
//! （`crate::repair`）。裁判的复核写在 `staging/evaluations/chapter-NNN-repair.json`，提交时随评估进
//! `evaluations/`。

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::common::Extra;
use super::evaluation::FixStatus;

/// 局部修补改哪一处：开篇（前 300 字所在的几段）或结尾（最后一两段）。
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum RepairPart {
    Opening,
    Ending,
}

impl RepairPart {
    pub const ALL: [RepairPart; 2] = [RepairPart::Opening, RepairPart::Ending];

    /// `opening` / `ending`: the part's name in files and on the command line.
    pub fn name(self) -> &'static str {
        match self {
            RepairPart::Opening => "opening",
            RepairPart::Ending => "ending",
        }
    }

    /// 开篇 / 结尾.
    pub fn label(self) -> &'static str {
        match self {
            RepairPart::Opening => "开篇",
            RepairPart::Ending => "结尾",
        }
    }

    /// Where a fix of this part points (`RequiredFix::target`): the gate's craft fixes and the
    /// packets say it the same way.
    pub fn target(self) -> &'static str {
        match self {
            RepairPart::Opening => "开篇前 300 字",
            RepairPart::Ending => "最后一两段",
        }
    }
}

/// 局部修补的一处，和为什么修（门控的章法检查，或裁判复核没通过）。
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct PartReason {
    pub part: RepairPart,
    pub reason: String,
}

/// 裁判对局部修补的复核（`staging/evaluations/chapter-NNN-repair.json`）：只看改过的那几段，不重评
/// 8 个维度。
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RepairReview {
    #[schemars(range(min = 1))]
    pub chapter: u32,
    /// 每一处修补一条（资料包 repair 段列出的几处都要有）。
    #[schemars(length(min = 1))]
    pub reviews: Vec<PartReview>,
    /// 复核的总体说明（可省略）。
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub notes: String,
    #[serde(flatten)]
    pub extra: Extra,
}

/// 一处修补的复核。
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct PartReview {
    pub part: RepairPart,
    /// done：问题解决了（开篇有了本章的问题 / 章末停在没落地的事上）；partly、not_done：没解决。
    pub status: FixStatus,
    /// 新段落的原句（一字不改；多处用「……」隔开）。
    #[schemars(length(min = 1))]
    pub evidence: String,
    /// 章末钩子的类型（悬念、危机、反转、期待、情绪），结尾才写。
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hook_type: Option<String>,
    /// 为什么这样判。
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub reason: String,
    #[serde(flatten)]
    pub extra: Extra,
}
