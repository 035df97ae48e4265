//! `style-profile.json` (the author's style fingerprint, PRD §5.6, §7 Layer 1) and
//! `style-drift.json` (§6 Layer 3 风格校准).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::common::{Extra, StrMap};

/// Where the fingerprint came from (§7: 风格样本降级方案).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum StyleSource {
    /// 作者自己的样本。
    Original,
    /// 仿写：参考作者的公开章节。
    Reference,
    /// 预置风格模板。
    Template,
    /// 先写后提：工具辅助写的第一章。
    WriteFirst,
}

/// `style-profile.json`. Numbers are `null` until StyleAnalyzer (with `novel style metrics`) fills them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct StyleProfile {
    #[serde(default)]
    pub source_type: Option<StyleSource>,
    /// 仿写模式下的参考作者。
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reference_author: Option<String>,
    /// 平均句长（字）。
    #[serde(default)]
    #[schemars(range(min = 0))]
    pub avg_sentence_length: Option<f64>,
    /// 对话字数 / 全部字数，0–1。
    #[serde(default)]
    #[schemars(range(min = 0, max = 1))]
    pub dialogue_ratio: Option<f64>,
    #[serde(default)]
    pub rhetoric_preferences: Vec<String>,
    /// 作者不会用的词。
    #[serde(default)]
    pub forbidden_words: Vec<String>,
    /// 角色 → 语癖描述。
    #[serde(default)]
    pub character_speech_patterns: StrMap,
    /// 正向写作指令，直接注入 ChapterWriter。
    #[serde(default)]
    pub writing_directives: Vec<String>,
    /// 作者自己样本里的 3–5 段原文（合计不超过 2000 token）：ChapterWriter 与 StyleRefiner 的语气参照。
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = 5))]
    pub voice_exemplars: Vec<VoiceExemplar>,
    #[serde(flatten)]
    pub extra: Extra,
}

/// Most voice exemplars a profile holds, and their token ceiling (PRD §5.9: few-shot ≤ 2K).
pub const MAX_EXEMPLARS: usize = 5;
pub const EXEMPLAR_TOKENS: u32 = 2_000;

/// One passage of the author's own samples, quoted as it is.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct VoiceExemplar {
    /// 原文，一字不改（一两百字）。
    #[schemars(length(min = 1))]
    pub text: String,
    /// 这段示范什么（对话节奏、打斗短句、情绪落到动作上……）。
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shows: Option<String>,
    /// 出自哪个样本文件。
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    #[serde(flatten)]
    pub extra: Extra,
}

/// `style-drift.json`: written when the last chapters drift from the profile, cleared on recovery.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct StyleDrift {
    pub active: bool,
    /// 检测时的最后完成章节。
    #[schemars(range(min = 1))]
    pub detected_chapter: u32,
    /// 参与比较的章节区间 `[起, 止]`。
    pub window: [u32; 2],
    pub metrics: Vec<DriftMetric>,
    /// 给 ChapterWriter / StyleRefiner 的纠偏指令。
    pub directives: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub updated_at: Option<String>,
    #[serde(flatten)]
    pub extra: Extra,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct DriftMetric {
    /// avg_sentence_length / dialogue_ratio …
    #[schemars(length(min = 1))]
    pub name: String,
    pub baseline: f64,
    pub current: f64,
    /// |current − baseline| / baseline.
    #[schemars(range(min = 0))]
    pub deviation: f64,
    pub drifted: bool,
    #[serde(flatten)]
    pub extra: Extra,
}
