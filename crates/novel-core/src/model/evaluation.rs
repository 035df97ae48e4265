//! `evaluations/chapter-NNN-eval.json` — QualityJudge's dual-track verdict (PRD §5.8, §6.5.6, §9.2).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::common::{Extra, GateDecision};

/// The eight scored dimensions with their v5 weights (§6.6.5); they sum to 1.0.
pub const DIMENSIONS: [(&str, f64); 8] = [
    ("plot_logic", 0.18),
    ("character", 0.18),
    ("immersion", 0.15),
    ("foreshadowing", 0.10),
    ("pacing", 0.08),
    ("style_naturalness", 0.15),
    ("emotional_impact", 0.08),
    ("storyline_coherence", 0.08),
];

/// One chapter evaluation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Evaluation {
    #[schemars(range(min = 1))]
    pub chapter: u32,
    /// Track 1 合规检查。
    #[serde(default)]
    pub contract_verification: ContractVerification,
    /// Track 2 八维度评分。
    pub scores: Scores,
    /// 加权均值（门控会按权重重算）。
    #[schemars(range(min = 0, max = 5))]
    pub overall: f64,
    pub recommendation: GateDecision,
    #[serde(default)]
    pub violations: Vec<Violation>,
    #[serde(default)]
    pub risk_flags: Vec<String>,
    #[serde(default)]
    pub required_fixes: Vec<RequiredFix>,
    #[serde(default)]
    pub issues: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub strengths: Vec<String>,
    /// 黑名单里没有、本章反复出现的 AI 套话：裁判的建议（不改黑名单，作者在质量简报里决定）。
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub blacklist_suggestions: Vec<BlacklistSuggestion>,
    /// 修订轮（上一轮被门控退回）的评审：上一轮每条修订指令（资料包 `fix_review` 段的 F1、F2…）
    /// 是否做到，各附正文原句。
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub fix_review: Vec<FixReview>,
    /// primary / secondary（关键章双裁判的第二份）。
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub judge: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    #[serde(flatten)]
    pub extra: Extra,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ContractVerification {
    #[serde(default)]
    pub l1_checks: Vec<ContractCheck>,
    #[serde(default)]
    pub l2_checks: Vec<ContractCheck>,
    #[serde(default)]
    pub l3_checks: Vec<ContractCheck>,
    #[serde(default)]
    pub ls_checks: Vec<ContractCheck>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub has_violations: Option<bool>,
    /// The flat `{"W-001": "pass"}` form of §5.8 lands here and is kept.
    #[serde(flatten)]
    pub extra: Extra,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum CheckStatus {
    Pass,
    Violation,
    Warning,
    NotApplicable,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ContractCheck {
    /// `W-001`, `C-LUCHEN-001`, `OBJ-048-1`, `LS-001`.
    #[schemars(length(min = 1))]
    pub id: String,
    pub status: CheckStatus,
    /// 这一条结论的把握（`violation` 且为 high 的，必须同时写进 `violations`）。
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub confidence: Option<Confidence>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
    #[serde(flatten)]
    pub extra: Extra,
}

/// The eight dimensions, each required.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Scores {
    pub plot_logic: DimensionScore,
    pub character: DimensionScore,
    pub immersion: DimensionScore,
    pub foreshadowing: DimensionScore,
    pub pacing: DimensionScore,
    pub style_naturalness: DimensionScore,
    pub emotional_impact: DimensionScore,
    pub storyline_coherence: DimensionScore,
    #[serde(flatten)]
    pub extra: Extra,
}

impl Scores {
    /// The dimensions in the order of [`DIMENSIONS`].
    pub fn dimensions(&self) -> [(&'static str, &DimensionScore); 8] {
        [
            ("plot_logic", &self.plot_logic),
            ("character", &self.character),
            ("immersion", &self.immersion),
            ("foreshadowing", &self.foreshadowing),
            ("pacing", &self.pacing),
            ("style_naturalness", &self.style_naturalness),
            ("emotional_impact", &self.emotional_impact),
            ("storyline_coherence", &self.storyline_coherence),
        ]
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct DimensionScore {
    #[schemars(range(min = 1, max = 5))]
    pub score: f64,
    #[schemars(range(min = 0, max = 1))]
    pub weight: f64,
    #[serde(default)]
    pub reason: String,
    #[serde(default)]
    pub evidence: String,
    #[serde(flatten)]
    pub extra: Extra,
}

/// Spec layer a violation belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub enum SpecLayer {
    L1,
    L2,
    L3,
    #[serde(rename = "LS")]
    Ls,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Confidence {
    High,
    Medium,
    Low,
}

/// A contract violation. Only `confidence: high` forces a revision (`002` §10.4).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Violation {
    /// 被违反的规则/契约 id。
    #[schemars(length(min = 1))]
    pub rule_id: String,
    pub layer: SpecLayer,
    pub confidence: Confidence,
    #[schemars(length(min = 1))]
    pub description: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub evidence: Option<String>,
    #[serde(flatten)]
    pub extra: Extra,
}

/// A phrase the judge suggests for the AI blacklist.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct BlacklistSuggestion {
    /// 短语。
    #[schemars(length(min = 2))]
    pub phrase: String,
    /// 黑名单类别 slug（如 body_language）。
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub category: Option<String>,
    /// 本章原文。
    #[serde(default)]
    pub evidence: String,
    #[serde(flatten)]
    pub extra: Extra,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RequiredFix {
    /// 段落位置。
    pub target: String,
    /// 修订指令。
    #[schemars(length(min = 1))]
    pub instruction: String,
    /// 阻断性：不做到这一条，门控不会强制通过（高置信违规的修订指令都应标为阻断）。
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub blocking: bool,
    #[serde(flatten)]
    pub extra: Extra,
}

/// How far a revision carried out one fix of the round before.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum FixStatus {
    Done,
    Partly,
    NotDone,
}

impl FixStatus {
    pub fn label(self) -> &'static str {
        match self {
            FixStatus::Done => "已做到",
            FixStatus::Partly => "部分做到",
            FixStatus::NotDone => "没做到",
        }
    }
}

/// The judge's verdict on one fix of the round sent back (`F1` = the first fix of that round).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct FixReview {
    /// 上一轮修订指令的编号（F1、F2…，见资料包 `fix_review` 段）。
    #[schemars(length(min = 1))]
    pub fix: String,
    pub status: FixStatus,
    /// 正文原句：做到了的，引改后的句子；没做到的，可引仍未改的句子。
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub evidence: Option<String>,
    #[serde(flatten)]
    pub extra: Extra,
}

/// The LS rule a cross-storyline leak violates.
pub const LEAK_RULE: &str = "LS-005";
