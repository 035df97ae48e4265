//! `novel.json` — project settings the PRD has no home for (DESIGN.md): chapter length,
//! revision policy, gate thresholds, lint thresholds, context budgets, model choices.
//! Every field has the seed's value as its default, so `{}` is a valid settings file.

use indexmap::IndexMap;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::common::Extra;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Settings {
    #[serde(default = "one")]
    #[schemars(range(min = 1))]
    pub schema_version: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub genre: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub created_at: Option<String>,
    /// 每卷章数：卷的大纲、调度与契约都没给出章节范围时，按它推算（首章 = 上一卷末章 + 1）。
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1))]
    pub chapters_per_volume: Option<u32>,
    #[serde(default)]
    pub chapter_length: ChapterLength,
    #[serde(default)]
    pub revision_policy: RevisionPolicy,
    #[serde(default)]
    pub gate: GateThresholds,
    #[serde(default)]
    pub lint: LintThresholds,
    /// 章法检查（`novel check craft`）的门槛。
    #[serde(default)]
    pub craft: CraftThresholds,
    #[serde(default)]
    pub style_drift: DriftThresholds,
    #[serde(default)]
    pub refine: RefineSettings,
    #[serde(default)]
    pub context_budgets: ContextBudgets,
    #[serde(default)]
    pub lock: LockSettings,
    /// agent → 模型（sonnet / opus / haiku / inherit）。
    #[serde(default = "default_models")]
    pub models: IndexMap<String, String>,
    #[serde(flatten)]
    pub extra: Extra,
}

fn one() -> u32 {
    1
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            schema_version: 1,
            title: None,
            genre: None,
            created_at: None,
            chapters_per_volume: None,
            chapter_length: ChapterLength::default(),
            revision_policy: RevisionPolicy::default(),
            gate: GateThresholds::default(),
            lint: LintThresholds::default(),
            craft: CraftThresholds::default(),
            style_drift: DriftThresholds::default(),
            refine: RefineSettings::default(),
            context_budgets: ContextBudgets::default(),
            lock: LockSettings::default(),
            models: default_models(),
            extra: Extra::new(),
        }
    }
}

/// PRD §4.3 model strategy (`main`: the conversation that runs the skills, the orchestration).
pub fn default_models() -> IndexMap<String, String> {
    [
        ("main", "sonnet"),
        ("world-builder", "opus"),
        ("character-weaver", "opus"),
        ("plot-architect", "opus"),
        ("chapter-writer", "sonnet"),
        ("chapter-rewriter", "opus"),
        ("summarizer", "sonnet"),
        ("style-analyzer", "sonnet"),
        ("style-refiner", "opus"),
        ("quality-judge", "sonnet"),
        ("quality-judge-key", "opus"),
    ]
    .into_iter()
    .map(|(a, m)| (a.to_string(), m.to_string()))
    .collect()
}

/// 字数 target of ChapterWriter (§5.4: 2500–3500).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default)]
pub struct ChapterLength {
    #[schemars(range(min = 1))]
    pub min: u32,
    #[schemars(range(min = 1))]
    pub max: u32,
    #[serde(flatten)]
    pub extra: Extra,
}

impl Default for ChapterLength {
    fn default() -> Self {
        ChapterLength {
            min: 2500,
            max: 3500,
            extra: Extra::new(),
        }
    }
}

/// `004`: apply fixes automatically, or keep a revision candidate for the author.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum RevisionPolicy {
    #[default]
    AutoApply,
    ManualConfirm,
}

/// Gate thresholds of `003` §8.2.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default)]
pub struct GateThresholds {
    /// ≥ pass → 直接通过。
    #[schemars(range(min = 1, max = 5))]
    pub pass: f64,
    /// ≥ polish → StyleRefiner 二次润色后通过。
    #[schemars(range(min = 1, max = 5))]
    pub polish: f64,
    /// ≥ revise → 自动修订。
    #[schemars(range(min = 1, max = 5))]
    pub revise: f64,
    /// ≥ pause → 暂停等作者决定；低于它强制重写。
    #[schemars(range(min = 1, max = 5))]
    pub pause: f64,
    /// 自动修订的次数上限（重写也算一次）。
    #[schemars(range(max = 10))]
    pub max_revisions: u32,
    /// 作者决定的修订或重写（门控暂停后、或作者不按门控的结论另选）的次数上限：到了就只能接受现稿或亲手改。
    #[schemars(range(max = 20))]
    pub max_author_revisions: u32,
    /// 修订用尽后，≥ 此分且无高置信违规则强制通过（force_passed）。
    #[schemars(range(min = 1, max = 5))]
    pub force_pass_min: f64,
    /// 八个维度的权重（和为 1）：门控按它们重算总分，不采用评估文件里写的权重。
    pub weights: DimensionWeights,
    /// 评审引文每一段至少几个字（汉字、字母、数字）；更短的必须是正文里完整的一句，否则不算证据。
    #[schemars(range(min = 1, max = 60))]
    pub quote_min_chars: u32,
    #[serde(flatten)]
    pub extra: Extra,
}

impl Default for GateThresholds {
    fn default() -> Self {
        GateThresholds {
            pass: 4.0,
            polish: 3.5,
            revise: 3.0,
            pause: 2.0,
            max_revisions: 2,
            max_author_revisions: 3,
            force_pass_min: 3.0,
            weights: DimensionWeights::default(),
            quote_min_chars: 8,
            extra: Extra::new(),
        }
    }
}

/// The project's fixed weights of the eight scored dimensions (PRD §6.6.5 by default). The
/// gate weighs the judges' scores with these: a judge cannot move weight between dimensions.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default)]
pub struct DimensionWeights {
    #[schemars(range(min = 0, max = 1))]
    pub plot_logic: f64,
    #[schemars(range(min = 0, max = 1))]
    pub character: f64,
    #[schemars(range(min = 0, max = 1))]
    pub immersion: f64,
    #[schemars(range(min = 0, max = 1))]
    pub foreshadowing: f64,
    #[schemars(range(min = 0, max = 1))]
    pub pacing: f64,
    #[schemars(range(min = 0, max = 1))]
    pub style_naturalness: f64,
    #[schemars(range(min = 0, max = 1))]
    pub emotional_impact: f64,
    #[schemars(range(min = 0, max = 1))]
    pub storyline_coherence: f64,
    #[serde(flatten)]
    pub extra: Extra,
}

impl DimensionWeights {
    /// The weights in the order of [`super::evaluation::DIMENSIONS`].
    pub fn values(&self) -> [(&'static str, f64); 8] {
        [
            ("plot_logic", self.plot_logic),
            ("character", self.character),
            ("immersion", self.immersion),
            ("foreshadowing", self.foreshadowing),
            ("pacing", self.pacing),
            ("style_naturalness", self.style_naturalness),
            ("emotional_impact", self.emotional_impact),
            ("storyline_coherence", self.storyline_coherence),
        ]
    }

    pub fn sum(&self) -> f64 {
        self.values().iter().map(|(_, w)| w).sum()
    }
}

impl Default for DimensionWeights {
    fn default() -> Self {
        // One source of truth: the table of §6.6.5, in its order.
        let d = super::evaluation::DIMENSIONS;
        DimensionWeights {
            plot_logic: d[0].1,
            character: d[1].1,
            immersion: d[2].1,
            foreshadowing: d[3].1,
            pacing: d[4].1,
            style_naturalness: d[5].1,
            emotional_impact: d[6].1,
            storyline_coherence: d[7].1,
            extra: Extra::new(),
        }
    }
}

/// §7 Layer 4 metrics.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default)]
pub struct LintThresholds {
    /// 黑名单命中上限（次/千字，不含）。
    #[schemars(range(min = 0, max = 1000))]
    pub blacklist_per_1000: f64,
    /// 相邻句窗口大小。
    #[schemars(range(min = 2, max = 50))]
    pub repetition_window: u32,
    /// 窗口内同句式重复上限（不含）。
    #[schemars(range(min = 1, max = 50))]
    pub repetition_max: u32,
    #[serde(flatten)]
    pub extra: Extra,
}

impl Default for LintThresholds {
    fn default() -> Self {
        LintThresholds {
            blacklist_per_1000: 3.0,
            repetition_window: 5,
            repetition_max: 2,
            extra: Extra::new(),
        }
    }
}

/// 章法检查（`novel check craft`）: where the opening, the ending and the take-up of the last
/// hook are read, how many chapters the variety checks look back, and the caps of the rhythm
/// tells. A cap is per 3,000 字 and scales with the chapter's 字数, and one use is always
/// allowed (a short chapter never fails on a single 仿佛).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default)]
pub struct CraftThresholds {
    /// 开篇看前多少字：这些字里要有本章的问题（有人想要什么、有什么不对）。
    #[schemars(range(min = 50, max = 5000))]
    pub opening_chars: u32,
    /// 开篇在有人动起来、开口之前，景物与时间最多写多少字。
    #[schemars(range(min = 0, max = 5000))]
    pub opening_scenery_chars: u32,
    /// 章末看最后多少字：钩子在不在、是哪一类。
    #[schemars(range(min = 20, max = 2000))]
    pub ending_chars: u32,
    /// 上一章的钩子要在本章前多少字里接住。
    #[schemars(range(min = 100, max = 10000))]
    pub takeup_chars: u32,
    /// 钩子类型看最近几章（含本章）：全是同一类时提示。
    #[schemars(range(min = 2, max = 20))]
    pub hook_variety_window: u32,
    /// 同一意象看最近几章（含本章）：每章都是它时提示。
    #[schemars(range(min = 2, max = 20))]
    pub image_window: u32,
    /// 门控只对不少于这么多字的章节按章法退回（开篇 300 字与章末 200 字在更短的稿子里重叠，量不出章法）。
    #[schemars(range(min = 0, max = 100000))]
    pub gate_min_chars: u32,
    /// 惊讶标记（仿佛、忽然、突然、竟然、猛地、不禁、宛如……，叙述中）上限，次/3000 字。
    #[schemars(range(min = 0, max = 1000))]
    pub surprise_per_3000: f64,
    /// 比喻（像、仿佛、如同、宛如、犹如、似的……，叙述中）上限，次/3000 字。
    #[schemars(range(min = 0, max = 1000))]
    pub simile_per_3000: f64,
    /// 叠字修饰（微微、缓缓、淡淡、轻轻、静静、默默……，叙述中）上限，次/3000 字。
    #[schemars(range(min = 0, max = 1000))]
    pub modifier_per_3000: f64,
    /// 「他知道，」「他想，」这类替人物总结心理的句首上限，次/3000 字。
    #[schemars(range(min = 0, max = 1000))]
    pub thought_opener_per_3000: f64,
    #[serde(flatten)]
    pub extra: Extra,
}

impl Default for CraftThresholds {
    fn default() -> Self {
        CraftThresholds {
            opening_chars: 300,
            opening_scenery_chars: 200,
            ending_chars: 200,
            takeup_chars: 1000,
            hook_variety_window: 4,
            image_window: 4,
            gate_min_chars: 1000,
            surprise_per_3000: 20.0,
            simile_per_3000: 18.0,
            modifier_per_3000: 10.0,
            thought_opener_per_3000: 2.0,
            extra: Extra::new(),
        }
    }
}

/// Style-drift thresholds (relative deviation from the profile baseline).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default)]
pub struct DriftThresholds {
    #[schemars(range(min = 1))]
    pub every_chapters: u32,
    #[schemars(range(min = 1))]
    pub window: u32,
    #[schemars(range(min = 0, max = 1))]
    pub sentence_length: f64,
    #[schemars(range(min = 0, max = 1))]
    pub dialogue_ratio: f64,
    #[schemars(range(min = 0, max = 1))]
    pub recovery: f64,
    #[serde(flatten)]
    pub extra: Extra,
}

impl Default for DriftThresholds {
    fn default() -> Self {
        DriftThresholds {
            every_chapters: 5,
            window: 5,
            sentence_length: 0.20,
            dialogue_ratio: 0.15,
            recovery: 0.10,
            extra: Extra::new(),
        }
    }
}

/// StyleRefiner's limits, measured by `novel chapter stage refined` against the draft.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default)]
pub struct RefineSettings {
    /// 润色改动量上限（改动的字 ÷ 初稿的字，叙述与对话分开算）：超过时 `stage refined` 拒绝。
    #[schemars(range(min = 0, max = 1))]
    pub max_edit_ratio: f64,
    #[serde(flatten)]
    pub extra: Extra,
}

impl Default for RefineSettings {
    fn default() -> Self {
        RefineSettings {
            max_edit_ratio: 0.15,
            extra: Extra::new(),
        }
    }
}

/// Per-agent context budgets in tokens (`003` §8.4, upper ends).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default)]
pub struct ContextBudgets {
    #[schemars(range(min = 1000))]
    pub chapter_writer: u32,
    #[schemars(range(min = 1000))]
    pub chapter_writer_convergence: u32,
    #[schemars(range(min = 1000))]
    pub summarizer: u32,
    #[schemars(range(min = 1000))]
    pub style_refiner: u32,
    #[schemars(range(min = 1000))]
    pub quality_judge: u32,
    #[serde(flatten)]
    pub extra: Extra,
}

impl Default for ContextBudgets {
    /// The packet limits of `003` §8.4 (22K, 28K, 10.5K, 8.5K, 14K) plus each agent's measured
    /// prompt (`novel_core::context::Agent::prompt_allowance`); StyleRefiner's 11K, not 8.5K,
    /// because it carries the whole blacklist beside a 3,000-字 chapter (issue 39).
    fn default() -> Self {
        ContextBudgets {
            chapter_writer: 29_500,
            chapter_writer_convergence: 35_500,
            summarizer: 17_000,
            style_refiner: 16_000,
            quality_judge: 24_000,
            extra: Extra::new(),
        }
    }
}

/// The defaults `novel init` wrote before the prompt reserves were measured: a project still
/// at one of them gets today's default for it (the same packet room), not a packet squeezed by
/// the larger reserve.
const LEGACY_BUDGETS: [u32; 5] = [24_000, 30_000, 12_000, 8_000, 16_000];
/// StyleRefiner's default before it carried the whole blacklist.
const LEGACY_REFINER: u32 = 13_500;

impl ContextBudgets {
    /// The budgets in force: each still at the default an older `novel init` wrote (24000,
    /// 30000, 12000, 8000 or 13500, 16000) read as today's.
    pub fn current(&self) -> ContextBudgets {
        let now = ContextBudgets::default();
        let pick = |value: u32, legacy: u32, current: u32| {
            if value == legacy { current } else { value }
        };
        ContextBudgets {
            chapter_writer: pick(self.chapter_writer, LEGACY_BUDGETS[0], now.chapter_writer),
            chapter_writer_convergence: pick(
                self.chapter_writer_convergence,
                LEGACY_BUDGETS[1],
                now.chapter_writer_convergence,
            ),
            summarizer: pick(self.summarizer, LEGACY_BUDGETS[2], now.summarizer),
            style_refiner: pick(
                pick(self.style_refiner, LEGACY_REFINER, now.style_refiner),
                LEGACY_BUDGETS[3],
                now.style_refiner,
            ),
            quality_judge: pick(self.quality_judge, LEGACY_BUDGETS[4], now.quality_judge),
            extra: self.extra.clone(),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default)]
pub struct LockSettings {
    /// 多久没有心跳视为僵尸锁（分钟）。
    #[schemars(range(min = 1))]
    pub stale_minutes: u32,
    #[serde(flatten)]
    pub extra: Extra,
}

impl LockSettings {
    /// How long without a heartbeat makes a lock stale (at least one minute).
    pub fn stale_after(&self) -> std::time::Duration {
        std::time::Duration::from_secs(u64::from(self.stale_minutes.max(1)) * 60)
    }
}

impl Default for LockSettings {
    fn default() -> Self {
        LockSettings {
            stale_minutes: 30,
            extra: Extra::new(),
        }
    }
}
