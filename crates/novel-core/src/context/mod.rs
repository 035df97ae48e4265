//! Context packets (PRD §8.1, §8.3; `003` §8.4–8.5; §6.6.3, §6.6.7, §6.5.2, §7): exactly
//! what each agent is handed, assembled from loaded project values, with a token estimate
//! per section and trimming to the agent's budget.
//!
//! # Format
//!
//! A packet is a sequence of sections with stable tags, rendered XML-like:
//!
//! ```text
//! <context agent="chapter-writer" chapter="48" volume="2" storyline="main_arc" tokens="18234" limit="22000">
//! <storyline title="故事线" tokens="812">
//! …
//! </storyline>
//! <task title="本次任务" tokens="96">
//! …
//! </task>
//! …
//! </context>
//! ```
//!
//! Tags in use: `storyline`, `task`, `revision`, `rewrite`, `polish`, `chapter_text`,
//! `chapter_outline`, `chapter_contract`, `continuity`, `world_rules`, `characters`,
//! `foreshadowing`, `recent_summaries`,
//! `character_memory`, `current_state`, `entity_map`, `volume_outline`, `style`, `brief`,
//! `user_preferences`,
//! `storyline_spec`, `storyline_schedule`, `storylines`, `world_docs`, `prev_volume_review`,
//! `relationships`, `retired_characters`, `research`, `outline_format`. Which agent gets which,
//! in which order, is [`assemble::sections_for`]; the active storyline's material always comes
//! first (§6.6.7: the start of a context is recalled best). `docs/context-packets.md` is the
//! author-facing description.
//!
//! # Budgets
//!
//! An agent call's budget (`novel.json` `context_budgets`, or `--budget`) includes the agent's
//! own prompt, as in `003` §8.4; the packet may use the budget minus
//! [`Agent::prompt_allowance`]. Over it, units are cut by rank ([`mod@assemble`] documents the
//! ranks, which follow §8.5: characters named by the chapter contract are never cut, other
//! characters go least recently seen first); still over it is an error, never a silent
//! overflow. Tokens are estimated by [`tokens::estimate`].
//!
//! Pure: everything arrives as values ([`assemble::Inputs`]); `novel-store` loads them.
//!
//! Layer: views — what the agents and the author are shown (packets, status, reviews, plan checks,
//! drift, cost); the top.

pub mod assemble;
pub mod inputs;
pub mod lines;
pub mod outline;
pub mod packet;
pub mod rounds;
pub mod session;
pub mod text;
pub use crate::tokens;

use serde::Serialize;

use crate::model::settings::ContextBudgets;

pub use assemble::{Inputs, assemble, build};
pub use packet::{Budget, BudgetSource, OverBudget, Packet, Section};

/// The eight agents of PRD §4.1 that receive a packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Agent {
    ChapterWriter,
    Summarizer,
    StyleRefiner,
    QualityJudge,
    PlotArchitect,
    WorldBuilder,
    CharacterWeaver,
    StyleAnalyzer,
}

impl Agent {
    pub const ALL: [Agent; 8] = [
        Agent::ChapterWriter,
        Agent::Summarizer,
        Agent::StyleRefiner,
        Agent::QualityJudge,
        Agent::PlotArchitect,
        Agent::WorldBuilder,
        Agent::CharacterWeaver,
        Agent::StyleAnalyzer,
    ];

    /// The subcommand / agent file name (`chapter-writer`).
    pub fn name(self) -> &'static str {
        match self {
            Agent::ChapterWriter => "chapter-writer",
            Agent::Summarizer => "summarizer",
            Agent::StyleRefiner => "style-refiner",
            Agent::QualityJudge => "quality-judge",
            Agent::PlotArchitect => "plot-architect",
            Agent::WorldBuilder => "world-builder",
            Agent::CharacterWeaver => "character-weaver",
            Agent::StyleAnalyzer => "style-analyzer",
        }
    }

    /// The PRD's name (`ChapterWriter`).
    pub fn label(self) -> &'static str {
        match self {
            Agent::ChapterWriter => "ChapterWriter",
            Agent::Summarizer => "Summarizer",
            Agent::StyleRefiner => "StyleRefiner",
            Agent::QualityJudge => "QualityJudge",
            Agent::PlotArchitect => "PlotArchitect",
            Agent::WorldBuilder => "WorldBuilder",
            Agent::CharacterWeaver => "CharacterWeaver",
            Agent::StyleAnalyzer => "StyleAnalyzer",
        }
    }

    pub fn from_name(name: &str) -> Option<Agent> {
        Agent::ALL.into_iter().find(|a| a.name() == name)
    }

    /// Tokens reserved for the agent's own prompt inside its budget: its body
    /// (`agents/<name>.md` without the front matter, [`tokens::estimate`]d) as measured, rounded
    /// up with a little room. `003` §8.4 guessed ~1.5–2K; the bodies are 4–9.5K, so a packet at
    /// its budget's edge overshot the call by that much. A test in `novel-cli` fails when a body
    /// outgrows its reserve (or the reserve is far above the body).
    pub fn prompt_allowance(self) -> u32 {
        match self {
            Agent::ChapterWriter => 7_500,
            Agent::Summarizer => 6_500,
            Agent::StyleRefiner => 5_000,
            Agent::QualityJudge => 10_000,
            Agent::PlotArchitect => 7_500,
            Agent::WorldBuilder => 5_000,
            Agent::CharacterWeaver => 6_000,
            Agent::StyleAnalyzer => 4_500,
        }
    }

    /// The budget `novel.json` gives this agent (`None`: the planning agents have none and
    /// are trimmed only with `--budget`). ChapterWriter gets the larger convergence budget in
    /// convergence chapters.
    pub fn default_budget(self, budgets: &ContextBudgets, convergence: bool) -> Option<u32> {
        let b = budgets.current();
        match self {
            Agent::ChapterWriter if convergence => Some(b.chapter_writer_convergence),
            Agent::ChapterWriter => Some(b.chapter_writer),
            Agent::Summarizer => Some(b.summarizer),
            Agent::StyleRefiner => Some(b.style_refiner),
            Agent::QualityJudge => Some(b.quality_judge),
            _ => None,
        }
    }

    /// Whether the agent works on one chapter (and so needs its outline block or text).
    pub fn per_chapter(self) -> bool {
        matches!(
            self,
            Agent::ChapterWriter | Agent::Summarizer | Agent::StyleRefiner | Agent::QualityJudge
        )
    }
}

/// Why a packet cannot be assembled.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ContextError {
    #[error("第 {volume} 卷大纲 {path} 不存在，无法取出第 {chapter} 章的大纲")]
    OutlineMissing {
        volume: u32,
        chapter: u32,
        path: String,
    },
    #[error("大纲 {path} 读不出来（{why}），无法取出第 {chapter} 章的大纲")]
    OutlineUnreadable {
        chapter: u32,
        path: String,
        why: String,
    },
    #[error("{path} 中没有第 {chapter} 章（大纲里有：{found}）")]
    OutlineChapter {
        chapter: u32,
        path: String,
        found: String,
    },
    #[error("{path}：{error}")]
    OutlineFormat {
        path: String,
        error: outline::OutlineError,
    },
    #[error("第 {chapter} 章正文不存在（{tried}）")]
    ChapterText { chapter: u32, tried: String },
    #[error(
        "{agent} 的资料包裁剪后仍有约 {tokens} token，超出上限 {limit}（预算 {total}，其中 agent 提示词预留 {allowance}）"
    )]
    OverBudget {
        agent: &'static str,
        tokens: u32,
        limit: u32,
        total: u32,
        allowance: u32,
        largest: Vec<(&'static str, u32)>,
    },
}

impl ContextError {
    pub fn code(&self) -> &'static str {
        match self {
            ContextError::OutlineMissing { .. } => "E_OUTLINE_MISSING",
            ContextError::OutlineUnreadable { .. } => "E_OUTLINE_UNREADABLE",
            ContextError::OutlineChapter { .. } => "E_OUTLINE_CHAPTER",
            ContextError::OutlineFormat { .. } => "E_OUTLINE_FORMAT",
            ContextError::ChapterText { .. } => "E_CHAPTER_TEXT",
            ContextError::OverBudget { .. } => "E_CONTEXT_BUDGET",
        }
    }

    pub fn hint(&self) -> String {
        match self {
            ContextError::OutlineMissing { .. } => {
                "先用 /novel:start 规划本卷（PlotArchitect 写 outline.md）".into()
            }
            ContextError::OutlineUnreadable { .. } => {
                "把大纲另存为 UTF-8 编码（多半是用 GBK 之类的编码保存了），再重试".into()
            }
            ContextError::OutlineChapter { chapter, .. } => format!(
                "让 PlotArchitect 在大纲中补上「## 第{chapter}章 标题」一节，或用 --volume 指定所在的卷"
            ),
            ContextError::OutlineFormat { .. } => format!(
                "章节标题写成 {}，每章只出现一次；推荐统一用「{}」",
                outline::HEADING_SHAPES,
                outline::HEADING_FORMAT
            ),
            ContextError::ChapterText { .. } => {
                "先让对应的 agent 写出正文；novel context session-start 或 novel chapter recover 会说明当前该做哪一步".into()
            }
            ContextError::OverBudget { largest, .. } => format!(
                "最大的几段：{}；精简这些文件，或在 novel.json 的 context_budgets 中调高预算，或用 --budget 指定",
                largest
                    .iter()
                    .map(|(t, n)| format!("{t} {n}"))
                    .collect::<Vec<_>>()
                    .join("、")
            ),
        }
    }
}

/// One agent's line of `novel context budget`: its packet's size against its budget, section
/// by section — or why it cannot be assembled (`data.agents[]` of the JSON, in this key order).
#[derive(Debug, Clone, Serialize)]
#[serde(untagged)]
pub enum BudgetRow {
    Sized(SizedPacket),
    Failed {
        agent: &'static str,
        /// Always `false`.
        ok: bool,
        error: RowError,
    },
}

/// Why a packet could not be assembled.
#[derive(Debug, Clone, Serialize)]
pub struct RowError {
    pub code: &'static str,
    pub message: String,
}

/// A packet's size against its budget.
#[derive(Debug, Clone, Serialize)]
pub struct SizedPacket {
    pub agent: &'static str,
    /// Always `true`.
    pub ok: bool,
    pub chapter: u32,
    pub volume: u32,
    pub convergence: bool,
    /// The whole packet before any trimming.
    pub tokens: u32,
    /// `None`: the agent has no default budget.
    pub budget: Option<Budget>,
    pub within_budget: bool,
    /// After trimming to the budget (`None` when it cannot fit).
    pub tokens_after_trim: Option<u32>,
    pub units_cut: usize,
    pub over_budget_after_trim: bool,
    pub sections: Vec<SectionSize>,
}

/// One section's estimated tokens.
#[derive(Debug, Clone, Serialize)]
pub struct SectionSize {
    pub tag: &'static str,
    pub tokens: u32,
}

/// [`BudgetRow`] of `agent` for `inputs`, with the agent's default budget.
pub fn budget_row(agent: Agent, inputs: &Inputs) -> BudgetRow {
    let assembled = match assemble(agent, inputs) {
        Ok(p) => p,
        Err(e) => {
            return BudgetRow::Failed {
                agent: agent.name(),
                ok: false,
                error: RowError {
                    code: e.code(),
                    message: e.to_string(),
                },
            };
        }
    };
    let tokens = assembled.tokens();
    let budget = assemble::budget_for(agent, inputs, &assembled, None);
    let (tokens_after_trim, units_cut, over) = match build(agent, inputs, None) {
        Ok(p) => (Some(p.tokens()), p.cut.len(), false),
        Err(_) => (None, 0, true),
    };
    BudgetRow::Sized(SizedPacket {
        agent: agent.name(),
        ok: true,
        chapter: assembled.chapter,
        volume: assembled.volume,
        convergence: assembled.convergence,
        tokens,
        budget,
        within_budget: budget.is_none_or(|b| tokens <= b.limit),
        tokens_after_trim,
        units_cut,
        over_budget_after_trim: over,
        sections: assembled
            .sizes()
            .into_iter()
            .map(|(tag, tokens)| SectionSize { tag, tokens })
            .collect(),
    })
}
