//! Per-agent packet assembly (PRD §8.3 with the budgets of `003` §8.4 and the trimming of
//! `003` §8.5).
//!
//! # What each agent gets, in order
//!
//! | agent | sections |
//! |---|---|
//! | chapter-writer | storyline, task, revision (revising only), chapter_text (revising only), rewrite (rewrite only), chapter_outline, chapter_contract, continuity, world_rules, characters, character_memory, foreshadowing, recent_summaries, current_state, volume_outline, style, brief, user_preferences |
//! | summarizer | storyline, task, chapter_text, entity_map, foreshadowing, current_state |
//! | style-refiner | task, polish (after a gate polish only), chapter_text, style |
//! | quality-judge | storyline, task, chapter_text, chapter_outline, chapter_contract, world_rules, characters, foreshadowing, recent_summaries, storyline_spec, storyline_schedule, style |
//! | plot-architect | task, outline_format, brief, storylines, storyline_spec, foreshadowing, prev_volume_review, recent_summaries, world_rules, world_docs, characters |
//! | world-builder | task, brief, world_rules, world_docs, storylines, research |
//! | character-weaver | task, brief, world_rules, world_docs, characters, relationships, retired_characters, storylines |
//! | style-analyzer | task, style, brief |
//!
//! # Trimming ranks (higher is cut first; required units are never cut)
//!
//! | rank | what |
//! |---|---|
//! | 90 | volume overview paragraphs, last paragraph first |
//! | 85 | the project brief |
//! | 84 | world documents, last file first |
//! | 80 | items / locations / factions in the current state |
//! | 70 | older recent summaries, oldest first (the latest is required) |
//! | 62 | character memory (`004`), last cast member first |
//! | 60 | character profile details (beyond name, state, speech, contracts), least recently seen first |
//! | 55 | whole characters NOT named by the chapter contract, least recently seen first |
//! | 50 | blacklist examples beyond the first five (StyleRefiner gets the whole list, required) |
//! | 46 | open threads of the chapter's lines not yet in their resolve range |
//! | 45 | soft world rules the contract does not require |
//! | 40 | one-sentence states of frozen lines |
//! | 38 | one-sentence states of other active lines |
//! | 35 | the adjacent line's memory |
//!
//! Required: the current line's memory (and in a convergence chapter every involved line's),
//! the chapter outline block, the chapter contract, its continuity findings, hard world rules, characters named by the
//! contract, foreshadowing tasks, style directives and drift directives, the latest summary,
//! chapter text, task.

use serde_json::Value;

pub use super::inputs::{Inputs, Paths, RepairInputs, Summary};
use super::lines::{self, LineEntry, LinePlan, LineRole};
use super::outline::{self, ChapterBlock, Outline};
use super::packet::{Budget, BudgetSource, Packet, Section};
use super::rounds::{self, Pass};
use super::text::{compact, compact_tail, cut_chars, memory_body, scalar};
use super::{Agent, ContextError};
use crate::model::blacklist::{BlacklistEntry, EntrySource};
use crate::model::character::Character;
use crate::model::common::{ConstraintType, ForeshadowScope, ForeshadowStatus};
use crate::model::contract::{ForeshadowAction, StorylineContext};
use crate::model::foreshadowing::Foreshadowing;
use crate::model::style::StyleSource;
use crate::model::{AiBlacklist, PipelineStage, StyleDrift, StyleProfile, VolumeForeshadowing};
use crate::spec::names::{NameMatch, NameSet, in_text};

const R_OVERVIEW: u16 = 90;
const R_BRIEF: u16 = 85;
const R_WORLD_DOCS: u16 = 84;
const R_STATE_EXTRA: u16 = 80;
const R_SUMMARY_OLD: u16 = 70;
const R_MEMORY: u16 = 62;
const R_PROFILE: u16 = 60;
const R_CHARACTER: u16 = 55;
const R_BLACKLIST_TAIL: u16 = 50;
const R_NOT_DUE: u16 = 46;
const R_SOFT_RULE: u16 = 45;
const R_FROZEN: u16 = 40;
const R_CONCURRENT: u16 = 38;
const R_ADJACENT: u16 = 35;

/// Characters loaded when the contract names none (`003` §8.5).
pub const MAX_UNNAMED_CHARACTERS: usize = 15;
/// Recent summaries of ChapterWriter (§8.3).
pub const RECENT_SUMMARIES: usize = 3;
/// A memory longer than this is cut (the seed caps memories at 500 字).
pub const MEMORY_MAX_CHARS: usize = 1_000;
/// A summary longer than this is cut (the seed asks for ~300 字).
pub const SUMMARY_MAX_CHARS: usize = 800;
/// Blacklist phrases in a ChapterWriter / QualityJudge packet (`003` §8.4 "top10").
pub const BLACKLIST_TOP: usize = 10;
/// Overdue threads listed by name (the rest are counted).
pub const OVERDUE_LISTED: usize = 3;
/// Threads not yet due listed by name (nearest range first; the rest are counted).
pub const NOT_DUE_LISTED: usize = 5;
/// Elements of a `world_state` array shown (the most recent ones).
pub const STATE_ARRAY_TAIL: usize = 8;

/// How many of a character's latest actions the ChapterWriter packet carries.
pub const MEMORY_LAST: usize = 3;

/// The characters the packet puts in play (§8.5, `select_characters`): whose memory the
/// store loads.
pub fn cast_ids(inputs: &Inputs) -> Vec<String> {
    let block = inputs
        .outline
        .as_deref()
        .and_then(|t| outline::parse(t).ok())
        .and_then(|o| o.block(inputs.chapter).cloned());
    select_characters(inputs, block.as_ref())
        .members
        .iter()
        .map(|(c, _)| c.id.clone())
        .collect()
}

/// What the store must load for an agent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Needs {
    pub outline: bool,
    pub contract: bool,
    pub characters: bool,
    pub last_seen: bool,
    pub memories: bool,
    pub state: bool,
    pub foreshadowing: bool,
    /// How many recent summaries (0 = none).
    pub summaries: usize,
    /// Only summaries on the chapter's storylines (else the latest, whatever the line).
    pub summaries_on_line: bool,
    pub chapter_text: bool,
    pub style: bool,
    pub brief: bool,
    pub world_rules: bool,
    pub world_docs: bool,
    pub storylines: bool,
    pub schedule: bool,
    pub spec: bool,
    pub relationships: bool,
    pub retired: bool,
    pub prev_volume_review: bool,
    pub research: bool,
    /// The chapter's continuity findings.
    pub continuity: bool,
    /// `004`: the author's preferences and the cast's memory.
    pub author_memory: bool,
}

/// Nothing to load: the base the agents' [`Needs`] add to.
const NO_NEEDS: Needs = Needs {
    outline: false,
    contract: false,
    characters: false,
    last_seen: false,
    memories: false,
    state: false,
    foreshadowing: false,
    summaries: 0,
    summaries_on_line: false,
    chapter_text: false,
    style: false,
    brief: false,
    world_rules: false,
    world_docs: false,
    storylines: false,
    schedule: false,
    spec: false,
    relationships: false,
    retired: false,
    prev_volume_review: false,
    research: false,
    continuity: false,
    author_memory: false,
};

const WRITER_NEEDS: Needs = Needs {
    outline: true,
    contract: true,
    characters: true,
    last_seen: true,
    memories: true,
    state: true,
    foreshadowing: true,
    summaries: RECENT_SUMMARIES,
    summaries_on_line: true,
    style: true,
    brief: true,
    world_rules: true,
    storylines: true,
    schedule: true,
    continuity: true,
    author_memory: true,
    retired: true,
    ..NO_NEEDS
};

const SUMMARIZER_NEEDS: Needs = Needs {
    outline: true,
    contract: true,
    characters: true,
    last_seen: true,
    memories: true,
    state: true,
    foreshadowing: true,
    chapter_text: true,
    storylines: true,
    schedule: true,
    ..NO_NEEDS
};

const REFINER_NEEDS: Needs = Needs {
    chapter_text: true,
    style: true,
    ..NO_NEEDS
};

const JUDGE_NEEDS: Needs = Needs {
    outline: true,
    contract: true,
    characters: true,
    last_seen: true,
    memories: true,
    state: true,
    foreshadowing: true,
    summaries: 1,
    summaries_on_line: false,
    chapter_text: true,
    style: true,
    world_rules: true,
    storylines: true,
    schedule: true,
    spec: true,
    retired: true,
    ..NO_NEEDS
};

const ARCHITECT_NEEDS: Needs = Needs {
    characters: true,
    foreshadowing: true,
    summaries: RECENT_SUMMARIES,
    brief: true,
    world_rules: true,
    world_docs: true,
    storylines: true,
    spec: true,
    prev_volume_review: true,
    ..NO_NEEDS
};

const WORLD_BUILDER_NEEDS: Needs = Needs {
    brief: true,
    world_rules: true,
    world_docs: true,
    storylines: true,
    research: true,
    ..NO_NEEDS
};

const CHARACTER_WEAVER_NEEDS: Needs = Needs {
    characters: true,
    brief: true,
    world_rules: true,
    world_docs: true,
    storylines: true,
    relationships: true,
    retired: true,
    ..NO_NEEDS
};

const STYLE_ANALYZER_NEEDS: Needs = Needs {
    style: true,
    brief: true,
    ..NO_NEEDS
};

impl Agent {
    /// The inputs this agent's packet draws on.
    pub fn needs(self) -> Needs {
        match self {
            Agent::ChapterWriter => WRITER_NEEDS,
            Agent::Summarizer => SUMMARIZER_NEEDS,
            Agent::StyleRefiner => REFINER_NEEDS,
            Agent::QualityJudge => JUDGE_NEEDS,
            Agent::PlotArchitect => ARCHITECT_NEEDS,
            Agent::WorldBuilder => WORLD_BUILDER_NEEDS,
            Agent::CharacterWeaver => CHARACTER_WEAVER_NEEDS,
            Agent::StyleAnalyzer => STYLE_ANALYZER_NEEDS,
        }
    }
}

/// ChapterWriter's sections before the revision ones.
const WRITER_HEAD: &[&str] = &["storyline", "task"];
/// ChapterWriter's extra sections when revising.
const WRITER_REVISION: &[&str] = &["revision", "chapter_text"];
const WRITER_BODY: &[&str] = &[
    "chapter_outline",
    "chapter_contract",
    "payoff",
    "continuity",
    "world_rules",
    "characters",
    "character_memory",
    "foreshadowing",
    "recent_summaries",
    "current_state",
    "volume_outline",
    "style",
    "brief",
    "user_preferences",
];
const SUMMARIZER_SECTIONS: &[&str] = &[
    "storyline",
    "task",
    "chapter_text",
    "entity_map",
    "foreshadowing",
    "current_state",
];
const REFINER_SECTIONS: &[&str] = &["task", "chapter_text", "style"];
const JUDGE_SECTIONS: &[&str] = &[
    "storyline",
    "task",
    "chapter_text",
    "chapter_outline",
    "chapter_contract",
    "payoff",
    "world_rules",
    "characters",
    "foreshadowing",
    "recent_summaries",
    "storyline_spec",
    "storyline_schedule",
    "style",
];
const ARCHITECT_SECTIONS: &[&str] = &[
    "task",
    "outline_format",
    "brief",
    "storylines",
    "storyline_spec",
    "foreshadowing",
    "prev_volume_review",
    "recent_summaries",
    "world_rules",
    "world_docs",
    "characters",
];
const WORLD_BUILDER_SECTIONS: &[&str] = &[
    "task",
    "brief",
    "world_rules",
    "world_docs",
    "storylines",
    "research",
];
const CHARACTER_WEAVER_SECTIONS: &[&str] = &[
    "task",
    "brief",
    "world_rules",
    "world_docs",
    "characters",
    "relationships",
    "retired_characters",
    "storylines",
];
const STYLE_ANALYZER_SECTIONS: &[&str] = &["task", "style", "brief"];

/// The section tags of an agent's packet, in order (see the module table).
pub fn sections_of(agent: Agent, revising: bool) -> Vec<&'static str> {
    let tags: &[&'static str] = match agent {
        Agent::ChapterWriter => {
            let mut v = WRITER_HEAD.to_vec();
            if revising {
                v.extend_from_slice(WRITER_REVISION);
            }
            v.extend_from_slice(WRITER_BODY);
            return v;
        }
        Agent::Summarizer => SUMMARIZER_SECTIONS,
        Agent::StyleRefiner => REFINER_SECTIONS,
        Agent::QualityJudge => JUDGE_SECTIONS,
        Agent::PlotArchitect => ARCHITECT_SECTIONS,
        Agent::WorldBuilder => WORLD_BUILDER_SECTIONS,
        Agent::CharacterWeaver => CHARACTER_WEAVER_SECTIONS,
        Agent::StyleAnalyzer => STYLE_ANALYZER_SECTIONS,
    };
    tags.to_vec()
}

/// The section tags of an agent's packet for a pass of the chapter: [`sections_of`], with the
/// `rewrite` (ChapterWriter) or `polish` (StyleRefiner) section right after the task; a local
/// repair (ChapterWriter's or QualityJudge's) is the task and the `repair` section only.
pub fn sections_for(agent: Agent, pass: Pass) -> Vec<&'static str> {
    if matches!(pass, Pass::Repair | Pass::RepairReview) {
        return vec!["task", "repair"];
    }
    let mut v = sections_of(agent, pass == Pass::Revising);
    let extra = match pass {
        Pass::Rewrite if agent == Agent::ChapterWriter => Some("rewrite"),
        Pass::Polish if agent == Agent::StyleRefiner => Some("polish"),
        _ => None,
    };
    if let Some(tag) = extra
        && let Some(i) = v.iter().position(|t| *t == "task")
    {
        v.insert(i + 1, tag);
    }
    v
}

/// Whether the chapter is being revised (ChapterWriter then gets the draft and the fixes).
pub fn revising(inputs: &Inputs) -> bool {
    inputs.checkpoint.as_ref().is_some_and(|cp| {
        cp.inflight_chapter == Some(inputs.chapter)
            && cp.pipeline_stage == Some(PipelineStage::Revising)
    })
}

/// The pass `agent` works on for the chapter of `inputs` ([`rounds::pass_of`]).
pub fn pass(agent: Agent, inputs: &Inputs) -> Pass {
    rounds::pass_of(agent, inputs.checkpoint.as_ref(), inputs.chapter)
}

/// The outline block and overview, for agents that need them (`required`: a missing outline
/// or chapter is an error; otherwise problems become warnings).
fn outline_of(
    inputs: &Inputs,
    required: bool,
    warnings: &mut Vec<String>,
) -> Result<(Option<ChapterBlock>, Option<String>), ContextError> {
    let path = inputs.paths.outline.clone();
    let Some(text) = &inputs.outline else {
        if let (Some(why), true) = (&inputs.outline_unreadable, required) {
            return Err(ContextError::OutlineUnreadable {
                chapter: inputs.chapter,
                path,
                why: why.clone(),
            });
        }
        if required {
            return Err(ContextError::OutlineMissing {
                volume: inputs.volume,
                chapter: inputs.chapter,
                path,
            });
        }
        return Ok((None, None));
    };
    let parsed: Outline = match outline::parse(text) {
        Ok(o) => o,
        Err(error) if required => return Err(ContextError::OutlineFormat { path, error }),
        Err(error) => {
            warnings.push(format!("{path}：{error}"));
            return Ok((None, None));
        }
    };
    let block = parsed.block(inputs.chapter).cloned();
    if block.is_none() && required {
        return Err(ContextError::OutlineChapter {
            chapter: inputs.chapter,
            path,
            found: parsed.ranges(),
        });
    }
    Ok((block, Some(parsed.overview)))
}

/// Assembles an agent's packet without a budget (see [`build`]).
pub fn assemble(agent: Agent, inputs: &Inputs) -> Result<Packet, ContextError> {
    let mut warnings = inputs.warnings.clone();
    // A local repair's packet is its `repair` section alone: the next chapter's outline there
    // is optional.
    let needs_outline_block =
        matches!(agent, Agent::ChapterWriter | Agent::QualityJudge) && inputs.repair.is_none();
    let (block, overview) = if agent.needs().outline {
        outline_of(inputs, needs_outline_block, &mut warnings)?
    } else {
        (None, None)
    };
    let plan = lines::plan(
        inputs.chapter,
        inputs.contract.as_ref(),
        block.as_ref().and_then(ChapterBlock::storyline),
        inputs.storylines.as_ref(),
        inputs.schedule.as_ref(),
    );
    if agent.per_chapter() && agent != Agent::StyleRefiner {
        warnings.extend(line_warning(inputs.chapter, &plan));
    }
    check_chapter_text(agent, inputs)?;
    let a = Assembler {
        agent,
        inputs,
        plan: &plan,
        block: block.as_ref(),
        overview: overview.as_deref(),
        cast: select_characters(inputs, block.as_ref()),
    };
    let this_pass = pass(agent, inputs);
    let mut tags = sections_for(agent, this_pass);
    if agent == Agent::QualityJudge
        && this_pass == Pass::Normal
        && !inputs.previous_fixes.is_empty()
        && let Some(i) = tags.iter().position(|t| *t == "task")
    {
        // A round after the gate sent the chapter back: the fixes to judge come right after
        // the task.
        tags.insert(i + 1, "fix_review");
    }
    let sections = tags.into_iter().map(|tag| a.section(tag)).collect();
    Ok(Packet {
        agent,
        chapter: inputs.chapter,
        volume: inputs.volume,
        storyline: if agent.per_chapter() {
            plan.current.clone()
        } else {
            None
        },
        convergence: agent.per_chapter() && plan.is_convergence(),
        key_chapter: if agent.needs().schedule {
            crate::gate::key_chapter(
                inputs.chapter,
                inputs.volume_range,
                inputs.schedule.as_ref(),
            )
        } else {
            Vec::new()
        },
        sections,
        warnings,
        budget: None,
        cut: Vec::new(),
    })
}

/// The warning when the chapter's storyline is unknown or only guessed (neither the contract
/// nor the outline names it).
fn line_warning(chapter: u32, plan: &LinePlan) -> Option<String> {
    let guessed_from = match plan.current_source {
        lines::CurrentSource::Unknown => {
            return Some(format!(
                "无法确定第 {chapter} 章的故事线（章节契约与大纲都没有写明）"
            ));
        }
        lines::CurrentSource::SchedulePrimary => "本卷调度的主推进线",
        lines::CurrentSource::OnlyActiveLine => "唯一的活跃故事线",
        _ => return None,
    };
    Some(format!(
        "第 {chapter} 章的故事线取自{guessed_from}：章节契约与大纲都没有写明"
    ))
}

/// The agents that read the chapter text (ChapterWriter only when revising) cannot do
/// without it.
fn check_chapter_text(agent: Agent, inputs: &Inputs) -> Result<(), ContextError> {
    let needs_text = matches!(
        agent,
        Agent::Summarizer | Agent::StyleRefiner | Agent::QualityJudge
    ) || (agent == Agent::ChapterWriter && revising(inputs));
    if needs_text && inputs.chapter_text.is_none() {
        return Err(ContextError::ChapterText {
            chapter: inputs.chapter,
            tried: inputs.chapter_text_tried.join("、"),
        });
    }
    Ok(())
}

/// The budget of `packet`: `flag` (`--budget`) when given, else the agent's default from
/// `novel.json`. The §8.4 budgets are sized for a chapter at the low end of the target length;
/// a chapter text longer than `chapter_length.min` raises the limit by its excess: the text is
/// the agent's work and is never cut, and its length is the author's choice (`novel count`
/// checks it), so it must not squeeze out the rest of the packet.
pub fn budget_for(
    agent: Agent,
    inputs: &Inputs,
    packet: &Packet,
    flag: Option<u32>,
) -> Option<Budget> {
    let mut b = match flag {
        Some(total) => Budget::new(agent, total, BudgetSource::Flag),
        None => agent
            .default_budget(&inputs.settings.context_budgets, packet.convergence)
            .map(|total| Budget::new(agent, total, BudgetSource::Settings))?,
    };
    let expected = u64::from(inputs.settings.chapter_length.min) * super::tokens::HAN_TENTHS;
    let expected = u32::try_from(expected.div_ceil(10)).unwrap_or(u32::MAX);
    let text = packet.section("chapter_text").map_or(0, Section::tokens);
    b.text_allowance = text.saturating_sub(expected);
    b.limit = b.limit.saturating_add(b.text_allowance);
    Some(b)
}

/// Assembles and trims to the budget ([`budget_for`]). Over the limit after trimming is an
/// error.
pub fn build(agent: Agent, inputs: &Inputs, budget: Option<u32>) -> Result<Packet, ContextError> {
    let mut packet = assemble(agent, inputs)?;
    let budget = budget_for(agent, inputs, &packet, budget);
    packet.budget = budget;
    if let Some(b) = budget
        && let Err(over) = packet.trim_to(b.limit)
    {
        return Err(ContextError::OverBudget {
            agent: agent.label(),
            tokens: over.tokens,
            limit: over.limit,
            total: b.total,
            allowance: b.prompt_allowance,
            largest: over.largest,
        });
    }
    Ok(packet)
}

/// ChapterWriter's task in a local repair: the new paragraphs of each part, to its own file.
fn repair_task(i: &Inputs) -> String {
    let n = i.chapter;
    let parts: Vec<crate::model::RepairPart> = i
        .repair
        .as_ref()
        .map_or(vec![crate::model::RepairPart::Ending], |r| {
            r.record.part_names()
        });
    let files: Vec<String> = parts
        .iter()
        .map(|p| format!("{}写入 {}", p.label(), crate::naming::staging_repair(n, *p)))
        .collect();
    format!(
        "局部修补第 {n} 章：只重写 <repair> 里标出的段落，{}（只写替换那几段的新正文：不写标题，不抄前后文，字数不超过 <repair> 给的上限）。正文文件不要动，程序会把新段落放进去。\n新段落接得上前文的语气和场面。结尾停在一件没落地的事上（危险逼近、没揭开的答案、反转、约好的对决、一句让人想翻页的台词），不总结、不升华，钩子别和上一章结尾同一个套路；开篇让人物带着本章的问题出场，接住上一章的结尾。不改前文已经发生的事，不新增死伤、得失、位置变化（状态增量不会重算）。",
        files.join("，")
    )
}

/// QualityJudge's task in a local repair: re-check only the new paragraphs, write the review.
fn repair_review_task(n: u32) -> String {
    format!(
        "复核第 {n} 章的局部修补：只看 <repair> 里的新段落，判断退回的问题解决了没有（结尾：停在没落地的事上，不是总结、感悟、收束，钩子不和上一章结尾同一个套路；开篇：前 300 字里有本章的问题，接住了上一章的结尾），新段落有没有和前文矛盾、有没有新增死伤得失。写入 {}：{{\"chapter\": {n}, \"reviews\": [{{\"part\": \"ending\", \"status\": \"done|partly|not_done\", \"evidence\": \"新段落原句\", \"hook_type\": \"悬念|危机|反转|期待|情绪\", \"reason\": \"一句话\"}}]}}，<repair> 里的每一处各一条；evidence 一字不改地引新段落（引旧段落会被退回），hook_type 只在结尾写。不是 done 的，门控按没修好处理。不重评 8 个维度，不改原来的评估文件。",
        crate::naming::staging_repair_review(n)
    )
}

/// A character in play, and whether the chapter contract names it (then it is never cut).
#[derive(Debug, Clone)]
struct Cast<'a> {
    members: Vec<(&'a Character, bool)>,
    note: String,
}

fn names_of(c: &Character) -> impl Iterator<Item = &str> {
    std::iter::once(c.id.as_str())
        .chain(std::iter::once(c.display_name.as_str()))
        .chain(c.aliases.iter().map(String::as_str))
}

/// The registered characters a text of the plan names (display name or alias, the longest
/// registered name at each place: 苏婉 inside 苏婉儿 is 苏婉儿), in the order of `characters`.
fn named_in<'a>(characters: &'a [Character], texts: &[&str]) -> Vec<&'a Character> {
    let all: Vec<&Character> = characters.iter().collect();
    characters
        .iter()
        .filter(|c| {
            let me = NameSet::of(c);
            let others = NameSet::others(&c.id, &all);
            texts
                .iter()
                .any(|t| matches!(in_text(t, &me, &others), NameMatch::Certain { .. }))
        })
        .collect()
}

/// §8.5, and what the plan names: the characters of the contract's pre- and postconditions
/// (display name, alias or slug), the registered characters the outline block, the objectives
/// or the acceptance criteria name, and those whose L2 contract ids the contract's texts cite;
/// without any, the active characters most recently seen, at most 15.
fn select_characters<'a>(inputs: &'a Inputs, block: Option<&ChapterBlock>) -> Cast<'a> {
    let mut named: Vec<&Character> = Vec::new();
    let mut add = |ch: &'a Character| {
        if !named.iter().any(|x| x.id == ch.id) {
            named.push(ch);
        }
    };
    let mut texts: Vec<&str> = block.map(|b| b.text.as_str()).into_iter().collect();
    if let Some(c) = &inputs.contract {
        let mentions = c
            .preconditions
            .character_states
            .keys()
            .chain(c.postconditions.state_changes.keys());
        for m in mentions {
            if let Some(ch) = inputs
                .characters
                .iter()
                .find(|ch| names_of(ch).any(|n| n == m.as_str()))
            {
                add(ch);
            }
        }
        texts.extend(c.objectives.iter().map(|o| o.description.as_str()));
        texts.extend(c.acceptance_criteria.iter().map(String::as_str));
        for ch in &inputs.characters {
            let cited = ch
                .contracts
                .iter()
                .any(|k| texts.iter().any(|t| t.contains(k.id.as_str())));
            if cited {
                add(ch);
            }
        }
    }
    for ch in named_in(&inputs.characters, &texts) {
        add(ch);
    }
    if !named.is_empty() {
        let n = named.len();
        return Cast {
            members: named.into_iter().map(|c| (c, true)).collect(),
            note: format!("本章在场角色由章节契约与本章大纲点名（{n} 位）。"),
        };
    }
    let mut all: Vec<&Character> = inputs.characters.iter().collect();
    // Most recently seen first; never-seen last; ties in file order (stable sort).
    all.sort_by_key(|c| std::cmp::Reverse(inputs.last_seen.get(&c.id).copied().unwrap_or(0)));
    let total = all.len();
    all.truncate(MAX_UNNAMED_CHARACTERS);
    Cast {
        note: if total > all.len() {
            format!(
                "章节契约与大纲没有点名角色：按最近出场取前 {} 位（共 {total} 位活跃角色）。",
                all.len()
            )
        } else {
            format!("章节契约与大纲没有点名角色：列出全部 {total} 位活跃角色，最近出场的在前。")
        },
        members: all.into_iter().map(|c| (c, false)).collect(),
    }
}

/// The people rule — registered people by name, the others by a description, new ones reported
/// once in the return for CharacterWeaver — is written once, in the novel-writing skill between
/// its markers, and put as it is at the head of the writer's, the planner's and the judge's
/// `characters` and of the Summarizer's `entity_map`.
pub fn people_rule() -> &'static str {
    const SKILL: &str = include_str!("../../../../skills/novel-writing/SKILL.md");
    SKILL
        .split_once("<!-- novel:people-rule -->")
        .and_then(|(_, rest)| rest.split_once("<!-- /novel:people-rule -->"))
        .map_or("", |(rule, _)| rule.trim())
}

/// Every registered character as `- 名字 / 别名 → slug`, one a line.
fn roster(characters: &[Character]) -> Vec<String> {
    characters
        .iter()
        .map(|c| {
            let mut names = vec![c.display_name.clone()];
            names.extend(c.aliases.iter().cloned());
            format!("- {} → {}", names.join(" / "), c.id)
        })
        .collect()
}

/// The character-file fields that hold a character's 语癖 (CharacterWeaver writes
/// `speech_patterns`); they go to the 语癖 line, not to the details.
const SPEECH_FIELDS: [&str; 2] = ["speech_patterns", "speech_pattern"];

/// A character file's own 语癖: a string, a list of strings, or an object of labelled strings.
fn file_speech(c: &Character) -> Option<String> {
    let v = SPEECH_FIELDS.iter().find_map(|k| c.extra.get(*k))?;
    let text = match v {
        Value::String(s) => s.trim().to_string(),
        Value::Array(items) => items
            .iter()
            .map(scalar)
            .map(|s| s.trim().to_string())
            .filter(|s| !s.is_empty())
            .collect::<Vec<_>>()
            .join("；"),
        Value::Object(map) => map
            .iter()
            .map(|(k, v)| format!("{k}：{}", scalar(v)))
            .collect::<Vec<_>>()
            .join("；"),
        Value::Null => String::new(),
        other => scalar(other),
    };
    (!text.is_empty()).then(|| cut_chars(&text, 200))
}

fn contract_valid_at(k: &crate::model::character::CharacterContract, n: u32) -> bool {
    k.valid_from_chapter.is_none_or(|f| f <= n)
        && match k.valid_until {
            Some(Some(u)) => n <= u,
            _ => true,
        }
}

struct Assembler<'a> {
    agent: Agent,
    inputs: &'a Inputs,
    plan: &'a LinePlan,
    block: Option<&'a ChapterBlock>,
    overview: Option<&'a str>,
    cast: Cast<'a>,
}

impl Assembler<'_> {
    fn section(&self, tag: &'static str) -> Section {
        match tag {
            "storyline" => self.storyline(),
            "task" => self.task(),
            "revision" => rounds::revision_section(self.inputs),
            "fix_review" => rounds::fix_review_section(self.inputs),
            "payoff" => self.payoff(),
            "rewrite" => rounds::rewrite_section(self.inputs),
            "repair" => rounds::repair_section(self.inputs, self.agent == Agent::QualityJudge),
            "polish" => rounds::polish_section(self.inputs),
            "chapter_text" => self.chapter_text(),
            "chapter_outline" => self.chapter_outline(),
            "chapter_contract" => self.chapter_contract(),
            "continuity" => self.continuity(),
            "world_rules" => self.world_rules(),
            "characters" => self.characters(),
            "foreshadowing" => self.foreshadowing(),
            "recent_summaries" => self.recent_summaries(),
            "current_state" => self.current_state(),
            "entity_map" => self.entity_map(),
            "volume_outline" => self.volume_outline(),
            "style" => self.style(),
            "brief" => self.brief(),
            "user_preferences" => self.user_preferences(),
            "character_memory" => self.character_memory(),
            "storyline_spec" => self.storyline_spec(),
            "storyline_schedule" => self.storyline_schedule(),
            "storylines" => self.storylines(),
            "world_docs" => self.world_docs(),
            "prev_volume_review" => self.prev_volume_review(),
            "relationships" => self.relationships(),
            "retired_characters" => self.retired_characters(),
            "research" => self.research(),
            "outline_format" => {
                let mut s = Section::new("outline_format", "大纲格式");
                s.required(OUTLINE_FORMAT_TEXT);
                // The trial chapters are planned by the book's 黄金三章 (`crate::genre`).
                let g = crate::genre::preset_for_book(
                    self.inputs.brief.as_deref(),
                    self.inputs.settings.genre.as_deref(),
                );
                s.required(format!(
                    "第 1–3 章（试写）照这本书的黄金三章排：\n{}",
                    crate::genre::golden_three_lines(g)
                ));
                s
            }
            other => {
                let mut s = Section::new(other, "未知");
                s.required("（无）");
                s
            }
        }
    }

    /// `004`: the section is there even when empty (an empty string, never a placeholder the
    /// writer might take for a preference).
    fn user_preferences(&self) -> Section {
        let mut s = Section::new("user_preferences", "作者偏好");
        s.required(self.inputs.user_preferences.clone());
        s
    }

    fn prev_volume_review(&self) -> Section {
        let mut s = Section::new("prev_volume_review", "上卷回顾");
        match &self.inputs.prev_volume_review {
            Some(t) if !t.trim().is_empty() => s.required(t.trim()),
            _ => s.required("（没有上卷回顾）"),
        };
        s
    }

    fn retired_characters(&self) -> Section {
        let mut s = Section::new("retired_characters", "已退场角色");
        if self.inputs.retired.is_empty() {
            s.required("（没有已退场角色）");
        } else {
            s.required(
                self.inputs
                    .retired
                    .iter()
                    .map(|c| format!("- {}（{}）", c.display_name, c.id))
                    .collect::<Vec<_>>()
                    .join("\n"),
            );
        }
        s
    }

    fn research(&self) -> Section {
        let mut s = Section::new("research", "研究资料");
        if self.inputs.research.is_empty() {
            s.required("（research/ 中没有资料）");
        } else {
            s.required(format!(
                "research/ 中的资料（需要时用 Read 读取）：\n{}",
                self.inputs
                    .research
                    .iter()
                    .map(|f| format!("- research/{f}"))
                    .collect::<Vec<_>>()
                    .join("\n")
            ));
        }
        s
    }

    fn memory_of(&self, id: &str) -> Option<String> {
        self.inputs
            .memories
            .get(id)
            .map(|m| memory_body(m))
            .filter(|m| !m.is_empty())
    }

    fn storyline(&self) -> Section {
        let mut s = Section::new("storyline", "故事线");
        let ctx = self
            .inputs
            .contract
            .as_ref()
            .and_then(|c| c.storyline_context.as_ref());
        let Some(current) = self.plan.lines.iter().find(|l| l.role == LineRole::Current) else {
            s.required("（无法确定本章的故事线）");
            return s;
        };
        s.required(self.storyline_head(current, ctx));
        self.line_memories(&mut s);
        if matches!(self.agent, Agent::ChapterWriter | Agent::QualityJudge) {
            self.other_lines(&mut s, ctx);
        }
        if self.agent == Agent::ChapterWriter {
            self.line_handover(&mut s);
        }
        s
    }

    /// The current line, its volume goal, the convergence event and the contract's progress
    /// notes.
    fn storyline_head(&self, current: &LineEntry, ctx: Option<&StorylineContext>) -> String {
        let mut head = format!("当前故事线：{}（{}）", current.name, current.id);
        if let Some(r) = current.volume_role {
            head.push_str(&format!("，本卷定位 {}", volume_role(r)));
        }
        if let Some(g) = &current.arc_goal {
            head.push_str(&format!("，本卷目标：{g}"));
        }
        if let Some(c) = &self.plan.convergence {
            head.push_str(&format!(
                "\n本章是交汇章：第 {}–{} 章交汇事件，涉及 {}{}{}",
                c.range[0],
                c.range[1],
                c.lines.join("、"),
                c.trigger
                    .as_deref()
                    .map_or(String::new(), |t| format!("；触发：{t}")),
                c.aftermath
                    .as_deref()
                    .map_or(String::new(), |t| format!("；余波：{t}"))
            ));
        }
        let Some(ctx) = ctx else {
            return head;
        };
        let mut progress = Vec::new();
        if let Some(l) = ctx.last_chapter_on_this_line {
            progress.push(format!("本线上次写到第 {l} 章"));
        }
        if let Some(d) = ctx.chapters_since_last {
            progress.push(format!("相隔 {d} 章"));
        }
        if let Some(pr) = &ctx.line_arc_progress {
            progress.push(format!("本线进度 {pr}"));
        }
        if !progress.is_empty() {
            head.push_str(&format!("\n{}", progress.join("，")));
        }
        if let Some(last) = &ctx.last_chapter_summary {
            head.push_str(&format!("\n本线上次：{}", cut_chars(last, 300)));
        }
        head
    }

    /// The memory of each line that gets one (the adjacent line's for ChapterWriter only, and
    /// cuttable).
    fn line_memories(&self, s: &mut Section) {
        let with_adjacent = self.agent == Agent::ChapterWriter;
        for (i, l) in self.plan.memory_lines().enumerate() {
            if l.role == LineRole::Adjacent && !with_adjacent {
                continue;
            }
            let title = match l.role {
                LineRole::Current => format!("【当前线记忆 · {}（{}）】", l.name, l.id),
                LineRole::Convergence => format!("【交汇线记忆 · {}（{}）】", l.name, l.id),
                _ => format!(
                    "【相邻线记忆 · {}（{}）：本章结尾将切到此线】",
                    l.name, l.id
                ),
            };
            let body = match self.memory_of(&l.id) {
                Some(m) => cut_chars(&m, MEMORY_MAX_CHARS),
                None => format!("（没有记忆：storylines/{}/memory.md 不存在或为空）", l.id),
            };
            let text = format!("{title}\n{body}");
            if l.role == LineRole::Adjacent {
                s.optional(text, R_ADJACENT, i as u32, format!("相邻线记忆：{}", l.id));
            } else {
                s.required(text);
            }
        }
    }

    /// 其他线此刻: one cuttable sentence per line without memory in the packet.
    fn other_lines(&self, s: &mut Section, ctx: Option<&StorylineContext>) {
        let with_adjacent = self.agent == Agent::ChapterWriter;
        let others: Vec<_> = self
            .plan
            .lines
            .iter()
            .filter(|l| !l.role.gets_memory() || (l.role == LineRole::Adjacent && !with_adjacent))
            .collect();
        if others.is_empty() {
            return;
        }
        s.required("【其他线此刻（各一句）】");
        for (i, l) in others.iter().enumerate() {
            let concurrent = ctx.and_then(|c| c.concurrent_state.get(&l.id).map(String::as_str));
            let sentence = lines::one_sentence(
                concurrent,
                self.inputs.memories.get(&l.id).map(String::as_str),
                80,
            );
            let text = format!("- {}（{}，{}）：{sentence}", l.name, l.id, l.role.label());
            let rank = if l.role == LineRole::Frozen {
                R_FROZEN
            } else {
                R_CONCURRENT
            };
            s.optional(text, rank, i as u32, format!("一句话现状：{}", l.id));
        }
    }

    /// ChapterWriter's 切线提示 and 线边界.
    fn line_handover(&self, s: &mut Section) {
        if let Some(h) = self
            .inputs
            .contract
            .as_ref()
            .and_then(|c| c.transition_hint.as_ref())
            && (h.next_storyline.is_some() || h.bridge.is_some())
        {
            s.required(format!(
                "【切线提示】本章结尾过渡到 {}：{}",
                h.next_storyline.as_deref().unwrap_or("下一条线"),
                h.bridge.as_deref().unwrap_or("（未写明过渡方式）")
            ));
        }
        s.required(if self.plan.is_convergence() {
            "【线边界】本章是交汇章：上述交汇线的人物可以同场，但各线已有的事实不得改写；未列为交汇线的线只作暗示。"
        } else {
            "【线边界】只使用当前线的角色、地点和事件；当前 POV 角色不知道其他线角色的行动和发现；跨线信息只能经由信使、书信、偶遇等合理途径传递。"
        });
    }

    fn task(&self) -> Section {
        let mut s = Section::new("task", "本次任务");
        let i = self.inputs;
        let n = i.chapter;
        let p = &i.paths;
        let text = match self.agent {
            Agent::ChapterWriter => self.writer_task(),
            Agent::Summarizer => self.summarizer_task(),
            Agent::StyleRefiner if pass(self.agent, i) == Pass::Polish => format!(
                "二次润色第 {n} 章（门控结论 polish）：按 <polish> 的要点修改 <chapter_text> 的现稿，比第一遍轻，但稿子必须有改动（与门控评估时完全相同的稿子过不了 novel chapter stage polished）。修改清单写入 {}，程序按清单改进 {}。不改情节、对话内容、角色行为，保留伏笔与状态变化的细节。",
                crate::naming::staging_edits(n),
                p.staging_chapter
            ),
            Agent::StyleRefiner => format!(
                "润色第 {n} 章初稿（<chapter_text>），去 AI 化：替换命中黑名单的用语，句式贴近风格指纹。修改清单写入 {}，程序按清单改进 {}。修改量控制在原文 {}% 以内；不改情节、对话内容、角色行为，保留伏笔与状态变化的细节。",
                crate::naming::staging_edits(n),
                p.staging_chapter,
                (i.settings.refine.max_edit_ratio * 100.0).round()
            ),
            Agent::QualityJudge if pass(self.agent, i) == Pass::RepairReview => {
                repair_review_task(n)
            }
            Agent::QualityJudge => self.judge_task(),
            Agent::PlotArchitect => {
                let start = i.volume_range.map_or(n, |r| r[0]);
                format!(
                    "规划第 {} 卷（自第 {start} 章起）：写 {dir}/outline.md（章节标题格式见 <outline_format>）、{dir}/storyline-schedule.json（含 chapter_range）、{dir}/foreshadowing.json，以及每章的 {dir}/chapter-contracts/chapter-NNN.json。",
                    i.volume,
                    dir = p.volume_dir
                )
            }
            Agent::WorldBuilder => "更新世界观：叙述文档在 world/*.md；可验证的规则抽取到 world/rules.json（编号 W-NNN，constraint_type 为 hard 或 soft），新增规则不得与已有规则矛盾。".to_string(),
            Agent::CharacterWeaver => "管理角色：档案为 characters/active/<slug>.json（含 L2 contracts，编号 C-<姓名拼音大写>-NNN）；退场角色移到 characters/retired/；关系写入 characters/relationships.json。".to_string(),
            Agent::StyleAnalyzer => "从作者提供的样章提取风格指纹，写入 style-profile.json：avg_sentence_length、dialogue_ratio、rhetoric_preferences、forbidden_words、character_speech_patterns、writing_directives、source_type。".to_string(),
        };
        s.required(text);
        s
    }

    /// The storyline id the task names.
    fn task_line(&self) -> &str {
        self.plan.current.as_deref().unwrap_or("（未知）")
    }

    /// ChapterWriter's task: the chapter, its length, where the text goes, and whether this is
    /// a revision or a rewrite.
    fn writer_task(&self) -> String {
        let i = self.inputs;
        let len = &i.settings.chapter_length;
        let mut t = format!(
            "写第 {} 章（第 {} 卷），故事线 {}。字数 {}–{} 字。正文写入 {}。",
            i.chapter,
            i.volume,
            self.task_line(),
            len.min,
            len.max,
            i.paths.staging_chapter
        );
        match pass(self.agent, i) {
            Pass::Repair => return repair_task(i),
            Pass::Revising => t.push_str("\n这是修订：按 <revision> 中的修订指令修改 <chapter_text> 里的现稿（上一轮的稿子，程序已存档），只改指出的地方，改好的整章写到上面的输出文件。"),
            Pass::Rewrite => t.push_str("\n这是重写：上一稿被门控退回，原因见 <rewrite>；整章重新写，正文写入同一文件。"),
            _ => {}
        }
        t
    }

    /// Summarizer's task: the three files it writes and their shape.
    fn summarizer_task(&self) -> String {
        let i = self.inputs;
        let n = i.chapter;
        let line = self.task_line();
        let p = &i.paths;
        let version = i
            .current_state
            .as_ref()
            .map_or(0, crate::ops::state_version);
        format!(
            "为第 {n} 章写摘要、状态增量和故事线记忆（故事线 {line}）。\n- 摘要写入 {}：开头为 front matter（---、chapter: {n}、storyline_id: {line}、---），正文约 300 字，保留关键情节、对话与转折。\n- 状态增量写入 {}：{{\"chapter\": {n}, \"base_state_version\": {version}, \"storyline_id\": \"{line}\", \"ops\": […]}}；op 为 set/inc/add/remove/foreshadow，路径用 <entity_map> 中的 slug。\n- 故事线记忆写入 {}/{line}/memory.md：≤500 字关键事实，第一句写本线此刻的一句话现状。",
            p.staging_summary, p.staging_delta, p.staging_storylines
        )
    }

    /// QualityJudge's task: where the evaluation goes, whether a second judge is needed (a key
    /// chapter), and the project's dimension weights when not the default.
    fn judge_task(&self) -> String {
        let i = self.inputs;
        let n = i.chapter;
        let key = crate::gate::key_chapter(n, i.volume_range, i.schedule.as_ref());
        let mut t = format!(
            "评估第 {n} 章（故事线 {}）：先逐条核查 L1/L2/L3/LS（violations 写明 confidence），再按 8 个维度评分，结果写入 {}。",
            self.task_line(),
            i.paths.staging_evaluation
        );
        if !key.is_empty() {
            t.push_str(&format!(
                "\n本章是关键章（{}）：需要第二位裁判，第二份评估写入 {}。",
                key.iter()
                    .map(|k| match k {
                        crate::gate::KeyReason::VolumeFirst => "卷首章",
                        crate::gate::KeyReason::VolumeLast => "卷尾章",
                        crate::gate::KeyReason::Convergence => "交汇章",
                    })
                    .collect::<Vec<_>>()
                    .join("、"),
                crate::naming::staging_second_evaluation(n, "secondary")
            ));
        }
        if !i.previous_fixes.is_empty() {
            t.push_str(&format!(
                "\n这是被门控退回后的一轮：<fix_review> 的 {} 条修订指令逐条写进评估的 fix_review。",
                i.previous_fixes.len()
            ));
        }
        if let Some(p) = i.contract.as_ref().and_then(|c| c.payoff.as_ref())
            && p.delivered_in(n) == n
        {
            t.push_str(&format!(
                "\n契约写了本章兑现的爽点：l3_checks 加一行 {}。",
                crate::model::contract::Payoff::row_id(n)
            ));
        }
        let g = &i.settings.gate;
        t.push_str(&format!(
            "\n门槛（novel.json gate，recommendation 照此写）：有 high 违规写 revise；否则总分 ≥ {} pass，≥ {} polish，≥ {} revise，≥ {} pause，再低 rewrite。",
            g.pass, g.polish, g.revise, g.pause
        ));
        let weights = &i.settings.gate.weights;
        if *weights != crate::model::settings::DimensionWeights::default() {
            t.push_str(&format!(
                "\n本项目的维度权重（novel.json gate.weights，评估文件照此填写 weight）：{}。",
                weights
                    .values()
                    .iter()
                    .map(|(d, w)| format!("{d} {w}"))
                    .collect::<Vec<_>>()
                    .join("、")
            ));
        }
        t
    }

    fn chapter_text(&self) -> Section {
        let mut s = Section::new("chapter_text", "章节正文");
        match &self.inputs.chapter_text {
            Some((path, text)) => s.required(format!("（{path}）\n{}", text.trim())),
            None => s.required("（没有正文）"),
        };
        s
    }

    fn chapter_outline(&self) -> Section {
        let mut s = Section::new("chapter_outline", "本章大纲");
        match self.block {
            Some(b) => s.required(b.text.clone()),
            None => s.required("（大纲中没有本章）"),
        };
        s
    }

    /// `payoff` (蓄压→兑现): the contract's payoff and the outline's, the genre's payoffs and
    /// its 黄金三章 line for chapters 1–3; for QualityJudge, the row it checks them under and the
    /// padding it looks for.
    fn payoff(&self) -> Section {
        let mut s = Section::new("payoff", "蓄压→兑现");
        let i = self.inputs;
        let n = i.chapter;
        let judge = self.agent == Agent::QualityJudge;
        let mut out = Vec::new();
        match i.contract.as_ref().and_then(|c| c.payoff.as_ref()) {
            Some(p) if p.delivered_in(n) == n => {
                let from = p
                    .setup_chapter
                    .filter(|c| *c < n)
                    .map_or(String::new(), |c| format!("，蓄压自第 {c} 章"));
                let row = if judge {
                    format!("（核查行 {}）", crate::model::contract::Payoff::row_id(n))
                } else {
                    String::new()
                };
                out.push(format!("本章兑现的爽点{row}：{}{from}", p.kind));
                if let Some(setup) = &p.setup {
                    out.push(format!("- 蓄压：{setup}"));
                }
                out.push(format!("- 兑现：{}", p.delivery));
            }
            Some(p) => {
                out.push(format!(
                    "本章为第 {} 章的爽点蓄压（{}）：只加压，不兑现。",
                    p.delivered_in(n),
                    p.kind
                ));
                if let Some(setup) = &p.setup {
                    out.push(format!("- 蓄压：{setup}"));
                }
                out.push(format!("- 将来兑现：{}", p.delivery));
            }
            None => out.push("（本章契约没有写爽点 payoff）".to_string()),
        }
        if let Some(v) = self
            .block
            .and_then(|b| b.field(crate::context::outline::PAYOFF_LABELS))
            .filter(|v| !v.trim().is_empty())
        {
            out.push(format!("大纲写的爽点：{v}"));
        }
        let g = crate::genre::preset_for_book(i.brief.as_deref(), i.settings.genre.as_deref());
        let gap = g.payoff_gap.map_or(String::new(), |k| {
            format!("；连续 {k} 章没有兑现读者就会走")
        });
        out.push(format!(
            "题材预设「{}」的读者追的爽点：{}{gap}。",
            g.name,
            g.payoff_types.join("、")
        ));
        if (1..=3).contains(&n) {
            out.push(format!(
                "【黄金三章 · {}】{}",
                g.name,
                g.golden_three[(n - 1) as usize]
            ));
        }
        if judge {
            out.push("评审：有兑现的，看它有没有先蓄压、落没落到具体的人和反应上（emotional_impact）；没兑现或兑现落空，l3 记 violation 并进 risk_flags payoff_missing。注水（车轱辘话、重复交代已知信息、与冲突无关的景物和心理独白）在 pacing 扣分，risk_flags 记 padding，required_fixes 点出段落。".to_string());
        } else {
            out.push(crate::genre::PAYOFF_CRAFT.to_string());
        }
        s.required(out.join("\n"));
        s
    }

    fn continuity(&self) -> Section {
        let mut s = Section::new("continuity", "衔接提醒");
        let found = &self.inputs.continuity;
        if found.is_empty() {
            s.required("（本章契约与前文状态、上一章契约衔接一致，无需额外过渡）");
            return s;
        }
        let mut out = vec![
            "本章契约与前文有出入：正文要把缺口接上（先交代过渡，再推进本章目标），不要无视前文的状态。"
                .to_string(),
        ];
        for f in found {
            out.push(format!("- {}\n  处理：{}", f.message, f.hint));
        }
        s.required(out.join("\n"));
        s
    }

    fn chapter_contract(&self) -> Section {
        let mut s = Section::new("chapter_contract", "章节契约（L3）");
        let Some(c) = &self.inputs.contract else {
            s.required(format!(
                "（本章没有章节契约：{} 不存在）",
                self.inputs.paths.contract
            ));
            return s;
        };
        let mut out = Vec::new();
        let pre = &c.preconditions;
        if !pre.character_states.is_empty() {
            out.push("前置条件 · 角色状态：".to_string());
            for (k, v) in &pre.character_states {
                out.push(format!("- {k}：{}", compact(v, 300)));
            }
        }
        if !pre.required_world_rules.is_empty() {
            out.push(format!(
                "前置条件 · 须遵守的世界规则：{}",
                pre.required_world_rules.join("、")
            ));
        }
        if !c.objectives.is_empty() {
            out.push("目标：".to_string());
            for o in &c.objectives {
                let mut head = format!("- {}〔{}", o.id, o.kind);
                if o.required == Some(true) {
                    head.push_str("·必须");
                }
                if let Some(a) = o.action {
                    head.push_str(&format!("·{}", foreshadow_action(a)));
                }
                if let Some(t) = &o.target {
                    head.push_str(&format!("→{t}"));
                }
                out.push(format!("{head}〕{}", o.description));
            }
        }
        let post = &c.postconditions;
        if !post.state_changes.is_empty() {
            out.push("后置条件 · 状态变化：".to_string());
            for (k, v) in &post.state_changes {
                out.push(format!("- {k}：{}", compact(v, 300)));
            }
        }
        if !post.foreshadowing_updates.is_empty() {
            out.push(format!(
                "后置条件 · 伏笔：{}",
                post.foreshadowing_updates
                    .iter()
                    .map(|(k, v)| format!("{k} → {}", crate::ops::status_name(*v)))
                    .collect::<Vec<_>>()
                    .join("、")
            ));
        }
        if !c.acceptance_criteria.is_empty() {
            out.push("验收标准：".to_string());
            for a in &c.acceptance_criteria {
                out.push(format!("- {a}"));
            }
        }
        if out.is_empty() {
            out.push("（契约为空）".to_string());
        }
        s.required(out.join("\n"));
        s
    }

    fn world_rules(&self) -> Section {
        let mut s = Section::new("world_rules", "世界规则（L1）");
        let Some(r) = &self.inputs.world_rules else {
            s.required("（没有 world/rules.json）");
            return s;
        };
        let required: Vec<&str> = self
            .inputs
            .contract
            .as_ref()
            .map(|c| {
                c.preconditions
                    .required_world_rules
                    .iter()
                    .map(String::as_str)
                    .collect()
            })
            .unwrap_or_default();
        let line = |rule: &crate::model::world::WorldRule, hard: bool| {
            let mut t = format!(
                "- {}{}{}：{}",
                if hard { "禁止违反 " } else { "" },
                rule.id,
                rule.category
                    .as_deref()
                    .map_or(String::new(), |c| format!("（{c}）")),
                rule.rule
            );
            if !rule.exceptions.is_empty() {
                t.push_str(&format!("｜例外：{}", rule.exceptions.join("；")));
            }
            if required.contains(&rule.id.as_str()) {
                t.push_str("〔本章涉及〕");
            }
            t
        };
        let hard: Vec<String> = r
            .rules
            .iter()
            .filter(|x| x.constraint_type == ConstraintType::Hard)
            .map(|x| line(x, self.agent == Agent::ChapterWriter))
            .collect();
        let soft: Vec<&crate::model::world::WorldRule> = r
            .rules
            .iter()
            .filter(|x| x.constraint_type == ConstraintType::Soft)
            .collect();
        if hard.is_empty() && soft.is_empty() {
            s.required("（还没有世界规则）");
            return s;
        }
        if !hard.is_empty() {
            let head = if self.agent == Agent::ChapterWriter {
                "【硬约束 · 违反以下规则的内容将被自动拒绝】"
            } else {
                "【硬约束（hard）· 逐条核查】"
            };
            s.required(format!("{head}\n{}", hard.join("\n")));
        }
        if !soft.is_empty() {
            s.required("【软约束（soft）· 可有例外，但须在正文中交代原因】");
            for (i, rule) in soft.iter().enumerate() {
                if required.contains(&rule.id.as_str()) || !self.agent.per_chapter() {
                    s.required(line(rule, false));
                } else {
                    s.optional(
                        line(rule, false),
                        R_SOFT_RULE,
                        i as u32,
                        format!("软约束 {}", rule.id),
                    );
                }
            }
        }
        s
    }

    fn character_state(&self, id: &str) -> Option<&Value> {
        self.inputs
            .current_state
            .as_ref()
            .and_then(|s| s.get("characters"))
            .and_then(|c| c.get(id))
    }

    /// 语癖: the style profile's `character_speech_patterns` entry and the character file's
    /// own `speech_patterns`, both when they say different things.
    fn speech(&self, c: &Character) -> Option<String> {
        let profile = self.inputs.style_profile.as_ref().and_then(|p| {
            names_of(c).find_map(|n| p.character_speech_patterns.get(n).map(|s| s.trim()))
        });
        let own = file_speech(c);
        let parts: Vec<&str> = [profile, own.as_deref()]
            .into_iter()
            .flatten()
            .filter(|s| !s.is_empty())
            .collect();
        match parts.as_slice() {
            [] => None,
            [a, b] if a != b => Some(format!("{a}；{b}")),
            [a, ..] => Some((*a).to_string()),
        }
    }

    fn character_core(&self, c: &Character, n: u32) -> String {
        let mut t = format!("### {}（{}）", c.display_name, c.id);
        if let Some(r) = &c.role {
            t.push_str(&format!(" · {r}"));
        }
        if !c.aliases.is_empty() {
            t.push_str(&format!(" · 别名：{}", c.aliases.join("、")));
        }
        if let Some(st) = self.character_state(&c.id) {
            t.push_str(&format!(
                "\n当前状态：{}",
                compact_tail(st, STATE_ARRAY_TAIL, 300)
            ));
        }
        if let Some(sp) = self.speech(c) {
            t.push_str(&format!("\n语癖：{sp}"));
        }
        let valid: Vec<_> = c
            .contracts
            .iter()
            .filter(|k| contract_valid_at(k, n))
            .collect();
        if !valid.is_empty() {
            t.push_str("\nL2 契约：");
            for k in valid {
                t.push_str(&format!("\n- {}〔{}〕{}", k.id, k.kind, k.rule));
                if !k.exceptions.is_empty() {
                    t.push_str(&format!("｜例外：{}", k.exceptions.join("；")));
                }
            }
        }
        t
    }

    fn character_profile(c: &Character, max_chars: usize) -> Option<String> {
        let fields: Vec<String> = c
            .extra
            .iter()
            .filter(|(k, v)| !v.is_null() && !SPEECH_FIELDS.contains(&k.as_str()))
            .map(|(k, v)| format!("{k}：{}", cut_chars(&scalar(v), 200)))
            .collect();
        (!fields.is_empty()).then(|| cut_chars(&format!("档案：{}", fields.join("；")), max_chars))
    }

    fn characters(&self) -> Section {
        let mut s = Section::new("characters", "角色（L2 契约）");
        let n = self.inputs.chapter;
        match self.agent {
            Agent::PlotArchitect => {
                s.required(people_rule());
                if self.inputs.characters.is_empty() {
                    s.required("（还没有活跃角色）");
                }
                for c in &self.inputs.characters {
                    let ids: Vec<&str> = c.contracts.iter().map(|k| k.id.as_str()).collect();
                    s.required(format!(
                        "- {}（{}{}）{}",
                        c.display_name,
                        c.id,
                        c.role
                            .as_deref()
                            .map_or(String::new(), |r| format!("，{r}")),
                        if ids.is_empty() {
                            String::new()
                        } else {
                            format!("：契约 {}", ids.join("、"))
                        }
                    ));
                }
                return s;
            }
            Agent::CharacterWeaver => {
                if self.inputs.characters.is_empty() {
                    s.required("（还没有活跃角色）");
                }
                for c in &self.inputs.characters {
                    s.required(format!(
                        "### characters/active/{}.json\n{}",
                        c.id,
                        serde_json::to_string_pretty(c).unwrap_or_default()
                    ));
                }
                return s;
            }
            _ => {}
        }
        s.required(people_rule());
        s.required(self.registered());
        if self.cast.members.is_empty() {
            s.required("（还没有活跃角色）");
            return s;
        }
        s.required(self.cast.note.clone());
        let count = self.cast.members.len() as u32;
        for (i, (c, named)) in self.cast.members.iter().enumerate() {
            // Later in the list = less recently seen = cut first.
            let order = i as u32;
            let core = self.character_core(c, n);
            if *named {
                s.required(core);
            } else {
                s.optional(
                    core,
                    R_CHARACTER,
                    order,
                    format!("角色：{}", c.display_name),
                );
            }
            if let Some(p) = Self::character_profile(c, 400) {
                s.optional(
                    p,
                    R_PROFILE,
                    order + count,
                    format!("角色档案细节：{}", c.display_name),
                );
            }
        }
        s
    }

    /// Who is registered (writer and judge): every active character's names → slug, and the
    /// retired ones.
    fn registered(&self) -> String {
        let mut lines = vec!["已登记的人（正文里的名字 / 别名 → slug）：".to_string()];
        lines.extend(roster(&self.inputs.characters));
        if self.inputs.characters.is_empty() {
            lines.push("（还没有）".into());
        }
        if !self.inputs.retired.is_empty() {
            lines.push(format!(
                "已退场：{}",
                self.inputs
                    .retired
                    .iter()
                    .map(|c| format!("{}（{}）", c.display_name, c.id))
                    .collect::<Vec<_>>()
                    .join("、")
            ));
        }
        lines.join("\n")
    }

    /// `004`: what each character in play did lately (its memory's last actions, after its
    /// profile basics). Cut before the characters' own profiles, least recently seen first.
    fn character_memory(&self) -> Section {
        let mut s = Section::new("character_memory", "角色记忆");
        let mut any = false;
        for (i, (c, _)) in self.cast.members.iter().enumerate() {
            let Some(entries) = self.inputs.character_memory.get(&c.id) else {
                continue;
            };
            let lines: Vec<String> = entries
                .iter()
                .filter(|e| e.kind == crate::model::revision::MemoryKind::Action)
                .map(|e| {
                    format!(
                        "  - 第{}章{}：{}",
                        e.chapter,
                        e.scene.map(|x| format!("·场景{x}")).unwrap_or_default(),
                        cut_chars(&e.text, 160)
                    )
                })
                .collect();
            if lines.is_empty() {
                continue;
            }
            any = true;
            s.optional(
                format!(
                    "- {}（{}）最近：\n{}",
                    c.display_name,
                    c.id,
                    lines.join("\n")
                ),
                R_MEMORY,
                i as u32,
                format!("角色记忆：{}", c.display_name),
            );
        }
        if !any {
            s.required("（在场角色还没有记忆：章节提交时按 Summarizer 的 character_actions 追加）");
        }
        s
    }

    fn foreshadowing(&self) -> Section {
        let mut s = Section::new("foreshadowing", "伏笔");
        let threads = self
            .inputs
            .foreshadowing
            .as_ref()
            .map(|g| g.foreshadowing.as_slice())
            .unwrap_or(&[]);
        if self.agent == Agent::PlotArchitect {
            s.required(foreshadowing_overview(threads));
            return s;
        }
        let tasks = self.foreshadow_tasks(threads);
        let buckets = self.thread_buckets(threads, &tasks);
        if !tasks.lines.is_empty() {
            s.required(format!("【本章伏笔任务】\n{}", tasks.lines.join("\n")));
        }
        if !buckets.due.is_empty() {
            s.required(format!(
                "【可在本章回收（在计划区间内）】\n{}",
                buckets.due.join("\n")
            ));
        }
        if let Some(t) = buckets.overdue_unit() {
            s.required(t);
        }
        if s.units.is_empty() {
            s.required("（本章没有伏笔任务）");
        }
        if let Some(t) = buckets.not_due_unit() {
            s.optional(t, R_NOT_DUE, 0, "未到回收区间的伏笔");
        }
        s
    }

    /// The chapter's foreshadowing tasks: what the volume plan schedules for the chapter, then
    /// what the contract's objectives and postconditions ask.
    fn foreshadow_tasks<'a>(&'a self, threads: &'a [Foreshadowing]) -> ForeshadowTasks<'a> {
        let i = self.inputs;
        let n = i.chapter;
        let mut tasks = ForeshadowTasks {
            threads,
            plan: i.volume_plan.as_ref(),
            lines: Vec::new(),
            seen: Vec::new(),
        };
        if let Some(plan) = &i.volume_plan {
            for t in &plan.foreshadowing {
                if t.plant_chapter == Some(n) {
                    let range = t.target_resolve_range.map_or(String::new(), |r| {
                        format!("（计划第 {}–{} 章回收）", r[0], r[1])
                    });
                    tasks.add(&t.id, "埋设", range);
                }
                if t.advance_chapters.as_ref().is_some_and(|a| a.contains(&n)) {
                    tasks.add(&t.id, "推进", String::new());
                }
            }
        }
        if let Some(c) = &i.contract {
            for o in &c.objectives {
                if let (Some(a), Some(t)) = (o.action, &o.target) {
                    tasks.add(t, foreshadow_action(a), format!("（{}）", o.id));
                }
            }
            for (id, st) in &c.postconditions.foreshadowing_updates {
                let what = match st {
                    ForeshadowStatus::Planted => "埋设",
                    ForeshadowStatus::Advanced => "推进",
                    ForeshadowStatus::Resolved => "回收",
                };
                tasks.add(id, what, String::new());
            }
        }
        tasks
    }

    /// Sorts the open threads with a resolve range that are not already tasks: due now, overdue
    /// (on the chapter's lines or elsewhere), or not yet due.
    fn thread_buckets(
        &self,
        threads: &[Foreshadowing],
        tasks: &ForeshadowTasks<'_>,
    ) -> ThreadBuckets {
        let i = self.inputs;
        let n = i.chapter;
        let on_line = |line: Option<&str>| {
            line.is_none_or(|l| self.plan.summary_lines().iter().any(|x| x == l))
        };
        let last_completed = i
            .checkpoint
            .as_ref()
            .map_or(n.saturating_sub(1), |c| c.last_completed_chapter);
        let mut b = ThreadBuckets::default();
        for t in threads
            .iter()
            .filter(|t| t.status != ForeshadowStatus::Resolved)
        {
            let Some([a, z]) = t.target_resolve_range else {
                continue;
            };
            let here = on_line(t.planted_storyline.as_deref());
            if a <= n && n <= z {
                if here && !tasks.has(&t.id) {
                    b.due.push(format!(
                        "- {}（{}，计划第 {a}–{z} 章回收）：{}",
                        t.id,
                        crate::ops::status_name(t.status),
                        t.description
                    ));
                }
            } else if crate::next::is_overdue(
                t.scope,
                t.status,
                t.target_resolve_range,
                last_completed,
            ) {
                if here {
                    b.overdue.push(format!(
                        "- {}（应在第 {z} 章前回收）：{}",
                        t.id,
                        cut_chars(&t.description, 40)
                    ));
                } else {
                    b.overdue_elsewhere += 1;
                }
            } else if a > n && here && !tasks.has(&t.id) {
                b.not_due.push((
                    a,
                    format!(
                        "- {}（计划第 {a}–{z} 章回收）：{}",
                        t.id,
                        cut_chars(&t.description, 40)
                    ),
                ));
            }
        }
        b
    }

    fn recent_summaries(&self) -> Section {
        let mut s = Section::new("recent_summaries", "近期摘要");
        let want = match self.agent {
            Agent::QualityJudge => 1,
            _ => RECENT_SUMMARIES,
        };
        let lines = self.plan.summary_lines();
        let on_line = self.agent == Agent::ChapterWriter;
        let chosen: Vec<&Summary> = self
            .inputs
            .summaries
            .iter()
            .filter(|x| x.chapter < self.inputs.chapter || !self.agent.per_chapter())
            .filter(|x| {
                !on_line
                    || lines.is_empty()
                    || x.storyline.as_ref().is_none_or(|l| lines.contains(l))
            })
            .take(want)
            .collect();
        if chosen.is_empty() {
            s.required("（还没有摘要）");
            return s;
        }
        for (i, x) in chosen.iter().enumerate() {
            let text = format!(
                "第 {} 章{}：{}",
                x.chapter,
                x.storyline
                    .as_deref()
                    .map_or(String::new(), |l| format!("（{l}）")),
                cut_chars(&x.body, SUMMARY_MAX_CHARS)
            );
            if i == 0 {
                s.required(text);
            } else {
                s.optional(
                    text,
                    R_SUMMARY_OLD,
                    i as u32,
                    format!("近期摘要：第 {} 章", x.chapter),
                );
            }
        }
        s
    }

    fn current_state(&self) -> Section {
        let mut s = Section::new("current_state", "当前状态");
        let Some(state) = &self.inputs.current_state else {
            s.required("（没有 state/current-state.json）");
            return s;
        };
        s.required(format!(
            "state_version {}，更新到第 {} 章。",
            crate::ops::state_version(state),
            state
                .get("last_updated_chapter")
                .and_then(Value::as_u64)
                .unwrap_or(0)
        ));
        let cast: Vec<&str> = self
            .cast
            .members
            .iter()
            .map(|(c, _)| c.id.as_str())
            .collect();
        if self.agent == Agent::Summarizer {
            s.required(cast_states(state, &cast));
        }
        if let Some(t) = world_state(state) {
            s.required(t);
        }
        // Items, locations, factions that mention a character in play (§8.5: the L2 selection
        // controls how much state goes in).
        for (i, (section, label)) in [
            ("items", "物品"),
            ("locations", "地点"),
            ("factions", "势力"),
        ]
        .into_iter()
        .enumerate()
        {
            if let Some(related) = related_to_cast(state, section, &cast) {
                s.optional(
                    format!("与在场角色相关的{label}（{section}）：\n{related}"),
                    R_STATE_EXTRA,
                    i as u32,
                    format!("当前状态：{label}"),
                );
            }
        }
        s
    }

    fn entity_map(&self) -> Section {
        let mut s = Section::new("entity_map", "实体 id 对照");
        let mut lines = vec![
            people_rule().to_string(),
            "角色（正文中的名字 → state 路径用的 slug）：".to_string(),
        ];
        lines.extend(roster(&self.inputs.characters));
        if self.inputs.characters.is_empty() {
            lines.push("（还没有角色档案）".into());
        }
        if let Some(sl) = &self.inputs.storylines {
            lines.push(format!(
                "故事线：{}",
                sl.storylines
                    .iter()
                    .map(|l| format!("{}（{}）", l.id, l.name))
                    .collect::<Vec<_>>()
                    .join("、")
            ));
        }
        let on = self.plan.summary_lines();
        let mut open: Vec<_> = self
            .inputs
            .foreshadowing
            .as_ref()
            .map(|g| {
                g.foreshadowing
                    .iter()
                    .filter(|t| t.status != ForeshadowStatus::Resolved)
                    .collect()
            })
            .unwrap_or_default();
        open.retain(|t| t.planted_storyline.as_ref().is_none_or(|l| on.contains(l)));
        open.sort_by_key(|t| std::cmp::Reverse(t.last_updated_chapter.unwrap_or(0)));
        open.truncate(30);
        if !open.is_empty() {
            lines.push("未回收的伏笔 id（本线）：".into());
            for t in open {
                lines.push(format!("- {}：{}", t.id, cut_chars(&t.description, 60)));
            }
        }
        lines.push(format!(
            "state 路径的顶层：{}",
            crate::ops::ROOTS.join("、")
        ));
        s.required(lines.join("\n"));
        s
    }

    fn volume_outline(&self) -> Section {
        let mut s = Section::new("volume_outline", "本卷大纲概述");
        match self.overview {
            Some(o) if !o.is_empty() => {
                for (i, para) in o
                    .split("\n\n")
                    .map(str::trim)
                    .filter(|p| !p.is_empty())
                    .enumerate()
                {
                    s.optional(
                        para.to_string(),
                        R_OVERVIEW,
                        i as u32,
                        format!("卷大纲概述第 {} 段", i + 1),
                    );
                }
            }
            _ => {
                s.required("（大纲没有本卷概述）");
            }
        }
        s
    }

    fn style(&self) -> Section {
        let mut s = Section::new("style", "风格");
        let i = self.inputs;
        match &i.style_profile {
            Some(p) if self.agent == Agent::StyleAnalyzer => s.required(format!(
                "现有的风格指纹（style-profile.json）：\n{}",
                serde_json::to_string_pretty(p).unwrap_or_default()
            )),
            Some(p) => s.required(self.style_fingerprint(p)),
            None => s.required("（没有 style-profile.json）"),
        };
        if let Some(d) = &i.style_drift
            && d.active
            && self.agent != Agent::StyleAnalyzer
        {
            s.required(drift_directives(d));
        }
        if let Some(b) = &i.blacklist {
            self.blacklist(&mut s, b);
        }
        s
    }

    /// The style profile as directives: source, numbers, rhetoric, words the author avoids,
    /// writing directives (and the speech patterns for StyleRefiner).
    fn style_fingerprint(&self, p: &StyleProfile) -> String {
        let mut lines = Vec::new();
        if let Some(src) = p.source_type {
            lines.push(format!("风格来源：{}", style_source(src, p)));
        }
        let mut nums = Vec::new();
        if let Some(v) = p.avg_sentence_length {
            nums.push(format!("平均句长 {v:.0} 字"));
        }
        if let Some(v) = p.dialogue_ratio {
            nums.push(format!("对话占比 {:.0}%", v * 100.0));
        }
        if !nums.is_empty() {
            lines.push(nums.join("，"));
        }
        if !p.rhetoric_preferences.is_empty() {
            lines.push(format!("修辞偏好：{}", p.rhetoric_preferences.join("、")));
        }
        if !p.forbidden_words.is_empty() {
            let shown: Vec<&str> = p
                .forbidden_words
                .iter()
                .take(40)
                .map(String::as_str)
                .collect();
            lines.push(format!("作者不用的词：{}", shown.join("、")));
        }
        if !p.writing_directives.is_empty() {
            lines.push(format!(
                "写作指令：\n{}",
                p.writing_directives
                    .iter()
                    .map(|d| format!("- {d}"))
                    .collect::<Vec<_>>()
                    .join("\n")
            ));
        }
        if self.agent == Agent::StyleRefiner && !p.character_speech_patterns.is_empty() {
            lines.push(format!(
                "角色语癖（润色时保留）：\n{}",
                p.character_speech_patterns
                    .iter()
                    .map(|(k, v)| format!("- {k}：{v}"))
                    .collect::<Vec<_>>()
                    .join("\n")
            ));
        }
        if matches!(self.agent, Agent::ChapterWriter | Agent::StyleRefiner)
            && !p.voice_exemplars.is_empty()
        {
            // PRD §5.9: few-shot from the author's own samples, never trimmed (≤ 2K, checked by
            // `novel validate`).
            let shots: Vec<String> = p
                .voice_exemplars
                .iter()
                .enumerate()
                .map(|(k, x)| match &x.shows {
                    Some(what) => format!("{}.（{what}）{}", k + 1, x.text.trim()),
                    None => format!("{}. {}", k + 1, x.text.trim()),
                })
                .collect();
            let head = if p.source_type == Some(StyleSource::Template) {
                "【预设文风示例：照它的语气、节奏和句法写；这是示范段落，里面的人名、情节不搬进本书】"
            } else {
                "【作者原文示例：照它的语气、节奏和句法写；里面的人名、情节、设定是作者旧稿的，不搬进本书】"
            };
            lines.push(format!("{head}\n{}", shots.join("\n")));
        }
        if lines.is_empty() {
            lines.push("（风格指纹还是空的）".into());
        }
        lines.join("\n")
    }

    fn blacklist(&self, s: &mut Section, b: &AiBlacklist) {
        if self.agent == Agent::StyleAnalyzer {
            if !b.categories.is_empty() {
                s.required(format!(
                    "AI 用语黑名单的类别：{}",
                    b.categories
                        .values()
                        .cloned()
                        .collect::<Vec<_>>()
                        .join("、")
                ));
            }
            return;
        }
        let entries = ranked_entries(b);
        let groups = hint_groups(&entries);
        if self.agent == Agent::StyleRefiner {
            // The refiner replaces every hit, so it gets the whole list: one line per way of
            // fixing, never trimmed (a 3,000-字 chapter's packet carries all of it).
            let lines: Vec<String> = groups.iter().map(|g| g.line()).collect();
            s.required(format!(
                "【AI 用语黑名单：全部 {} 条，按改法分组，命中的一律照改法替换（* 只在叙述中算，^ 只在段首算；改法是方向，不是标准答案）】\n{}",
                entries.len(),
                lines.join("\n")
            ));
        } else {
            // The others see one phrase of each way of fixing, the most common ways first: the
            // spread of the list, not ten variants of one smile.
            let firsts: Vec<&BlacklistEntry> = groups.iter().map(|g| g.entries[0]).collect();
            let top = BLACKLIST_TOP.min(firsts.len());
            let req: Vec<String> = firsts
                .iter()
                .take(5.min(top))
                .map(|e| blacklist_phrase(e))
                .collect();
            s.required(format!(
                "【禁用的 AI 高频用语（{top} 类各举一例，共 {} 条，由 novel lint 全部检查）】\n{}",
                entries.len(),
                req.join("、")
            ));
            let rest: Vec<String> = firsts
                .iter()
                .take(top)
                .skip(5.min(top))
                .map(|e| blacklist_phrase(e))
                .collect();
            if !rest.is_empty() {
                s.optional(rest.join("、"), R_BLACKLIST_TAIL, 0, "黑名单：其余各类");
            }
        }
        if self.agent == Agent::StyleRefiner && !b.patterns.is_empty() {
            s.required(blacklist_patterns(b));
        }
    }

    fn brief(&self) -> Section {
        let mut s = Section::new("brief", "创作纲领");
        match self.inputs.brief.as_deref().map(memory_body) {
            Some(b) if !b.is_empty() => {
                let text = cut_chars(&b, 3_000);
                if self.agent == Agent::ChapterWriter {
                    s.optional(text, R_BRIEF, 0, "创作纲领");
                } else {
                    s.required(text);
                }
            }
            _ => {
                s.required("（brief.md 为空）");
            }
        }
        s
    }

    fn storyline_spec(&self) -> Section {
        let mut s = Section::new("storyline_spec", "故事线规范（LS）");
        match &self.inputs.storyline_spec {
            Some(spec) if !spec.rules.is_empty() => s.required(
                spec.rules
                    .iter()
                    .map(|r| {
                        format!(
                            "- {}〔{}·{}〕{}",
                            r.id,
                            match r.constraint_type {
                                ConstraintType::Hard => "hard",
                                ConstraintType::Soft => "soft",
                            },
                            r.category,
                            r.rule
                        )
                    })
                    .collect::<Vec<_>>()
                    .join("\n"),
            ),
            _ => s.required("（没有故事线规范）"),
        };
        s
    }

    fn storyline_schedule(&self) -> Section {
        let mut s = Section::new("storyline_schedule", "本卷故事线调度");
        let Some(sch) = &self.inputs.schedule else {
            s.required("（本卷没有 storyline-schedule.json）");
            return s;
        };
        let mut lines = vec![format!(
            "第 {} 卷{}{}",
            sch.volume,
            sch.chapter_range
                .map_or(String::new(), |r| format!("（第 {}–{} 章）", r[0], r[1])),
            sch.volume_theme
                .as_deref()
                .map_or(String::new(), |t| format!("，主题：{t}"))
        )];
        for a in &sch.active_storylines {
            lines.push(format!(
                "- {} {}{}{}",
                a.storyline_id,
                volume_role(a.volume_role),
                a.target_chapters
                    .map_or(String::new(), |n| format!("，目标 {n} 章")),
                a.arc_goal
                    .as_deref()
                    .map_or(String::new(), |g| format!("：{g}"))
            ));
        }
        for e in &sch.convergence_events {
            lines.push(format!(
                "- 交汇事件 第 {}–{} 章：{}{}",
                e.chapter_range[0],
                e.chapter_range[1],
                e.involved_storylines.join(" + "),
                e.trigger
                    .as_deref()
                    .map_or(String::new(), |t| format!("（{t}）"))
            ));
        }
        if !sch.dormant_storylines.is_empty() {
            lines.push(format!("- 休眠线：{}", sch.dormant_storylines.join("、")));
        }
        s.required(lines.join("\n"));
        s
    }

    fn storylines(&self) -> Section {
        let mut s = Section::new("storylines", "故事线定义");
        let Some(sl) = &self.inputs.storylines else {
            s.required("（没有 storylines/storylines.json）");
            return s;
        };
        let mut lines = Vec::new();
        for l in &sl.storylines {
            lines.push(format!(
                "- {}（{}）〔{}·{:?}·{:?}〕{}{}",
                l.name,
                l.id,
                l.kind,
                l.scope,
                l.status,
                if l.pov_characters.is_empty() {
                    String::new()
                } else {
                    format!("POV：{}；", l.pov_characters.join("、"))
                },
                l.description.as_deref().unwrap_or("")
            ));
        }
        for r in &sl.relationships {
            lines.push(format!(
                "- 关系 {} → {}（{}）{}",
                r.from,
                r.to,
                r.kind,
                r.convergence_condition
                    .as_deref()
                    .map_or(String::new(), |c| format!("：{c}"))
            ));
        }
        if lines.is_empty() {
            lines.push("（没有故事线）".into());
        }
        s.required(lines.join("\n"));
        s
    }

    fn world_docs(&self) -> Section {
        let mut s = Section::new("world_docs", "世界观文档");
        if self.inputs.world_docs.is_empty() {
            s.required("（world/ 中没有文档）");
        }
        let n = self.inputs.world_docs.len() as u32;
        for (i, (name, text)) in self.inputs.world_docs.iter().enumerate() {
            let body = memory_body(text);
            let t = format!(
                "## world/{name}\n{}",
                if body.is_empty() {
                    "（空）".to_string()
                } else {
                    cut_chars(&body, 4_000)
                }
            );
            s.optional(
                t,
                R_WORLD_DOCS,
                n - i as u32,
                format!("世界观文档 world/{name}"),
            );
        }
        s
    }

    fn relationships(&self) -> Section {
        let mut s = Section::new("relationships", "角色关系");
        match &self.inputs.relationships {
            Some(r) if !r.relationships.is_empty() => s.required(
                r.relationships
                    .iter()
                    .map(|e| {
                        format!(
                            "- {} → {}：{}{}{}",
                            e.from,
                            e.to,
                            e.kind,
                            e.intensity.map_or(String::new(), |v| format!("（{v:+}）")),
                            e.description
                                .as_deref()
                                .map_or(String::new(), |d| format!("，{d}"))
                        )
                    })
                    .collect::<Vec<_>>()
                    .join("\n"),
            ),
            _ => s.required("（还没有角色关系）"),
        };
        s
    }
}

/// PlotArchitect's view of the foreshadowing: counts, then every open thread.
fn foreshadowing_overview(threads: &[Foreshadowing]) -> String {
    let open: Vec<_> = threads
        .iter()
        .filter(|t| t.status != ForeshadowStatus::Resolved)
        .collect();
    let resolved = threads.len() - open.len();
    let mut lines = vec![format!("未回收 {} 条，已回收 {resolved} 条。", open.len())];
    for t in open {
        lines.push(format!(
            "- {}〔{}·{}〕{}{}{}",
            t.id,
            scope_name(t.scope),
            crate::ops::status_name(t.status),
            t.description,
            t.target_resolve_range.map_or(String::new(), |r| format!(
                "（计划第 {}–{} 章回收）",
                r[0], r[1]
            )),
            t.planted_storyline
                .as_deref()
                .map_or(String::new(), |l| format!("（{l}）"))
        ));
    }
    lines.join("\n")
}

/// 本章伏笔任务: one line per (thread, action), in the order first asked.
struct ForeshadowTasks<'a> {
    threads: &'a [Foreshadowing],
    plan: Option<&'a VolumeForeshadowing>,
    lines: Vec<String>,
    seen: Vec<(String, &'static str)>,
}

impl ForeshadowTasks<'_> {
    fn add(&mut self, id: &str, what: &'static str, extra: String) {
        if self.seen.iter().any(|(x, w)| x == id && *w == what) {
            return;
        }
        self.seen.push((id.to_string(), what));
        let d = self.description(id);
        self.lines.push(format!(
            "- {what} {id}{}{extra}",
            if d.is_empty() {
                String::new()
            } else {
                format!("：{d}")
            }
        ));
    }

    /// Whether the thread is already a task (with any action).
    fn has(&self, id: &str) -> bool {
        self.seen.iter().any(|(x, _)| x == id)
    }

    /// The thread's description: the global file's, else the volume plan's, else empty.
    fn description(&self, id: &str) -> String {
        self.threads
            .iter()
            .find(|t| t.id == id)
            .map(|t| t.description.clone())
            .filter(|d| !d.is_empty())
            .or_else(|| {
                self.plan.and_then(|p| {
                    p.foreshadowing
                        .iter()
                        .find(|t| t.id == id)
                        .map(|t| t.description.clone())
                })
            })
            .unwrap_or_default()
    }
}

/// The open threads that are not tasks of the chapter, by where the chapter lies in their
/// resolve range.
#[derive(Default)]
struct ThreadBuckets {
    due: Vec<String>,
    /// Overdue threads on the chapter's lines (listed).
    overdue: Vec<String>,
    /// Overdue threads on other lines (counted).
    overdue_elsewhere: usize,
    /// (range start, line) of threads not yet due.
    not_due: Vec<(u32, String)>,
}

impl ThreadBuckets {
    /// 已逾期的短线伏笔: the first [`OVERDUE_LISTED`], the rest counted.
    fn overdue_unit(&self) -> Option<String> {
        if self.overdue.is_empty() && self.overdue_elsewhere == 0 {
            return None;
        }
        let listed = self.overdue.len().min(OVERDUE_LISTED);
        let mut t = format!(
            "【已逾期的短线伏笔】\n{}",
            self.overdue[..listed].join("\n")
        );
        let more = self.overdue.len() - listed + self.overdue_elsewhere;
        if more > 0 {
            if listed > 0 {
                t.push('\n');
            }
            t.push_str(&format!(
                "（另有 {more} 条逾期伏笔不在本章的故事线上，未列出）"
            ));
        }
        Some(t)
    }

    /// 未到回收区间: nearest range first (what a chapter is most tempted to pay off early),
    /// the first [`NOT_DUE_LISTED`], the rest counted.
    fn not_due_unit(&self) -> Option<String> {
        if self.not_due.is_empty() {
            return None;
        }
        let mut not_due: Vec<&(u32, String)> = self.not_due.iter().collect();
        not_due.sort_by_key(|(a, _)| *a);
        let listed = not_due.len().min(NOT_DUE_LISTED);
        let mut t = format!(
            "【未到回收区间（本章不应回收）】\n{}",
            not_due[..listed]
                .iter()
                .map(|(_, l)| l.as_str())
                .collect::<Vec<_>>()
                .join("\n")
        );
        if not_due.len() > listed {
            t.push_str(&format!("\n（另有 {} 条，未列出）", not_due.len() - listed));
        }
        Some(t)
    }
}

/// The state of each character in play (`characters.<slug>`), as JSON (Summarizer writes
/// the deltas against it).
fn cast_states(state: &Value, cast: &[&str]) -> String {
    let mut lines = vec!["在场角色的状态（characters.<slug>）：".to_string()];
    for id in cast {
        if let Some(v) = state.get("characters").and_then(|c| c.get(*id)) {
            lines.push(format!(
                "- {id}：{}",
                serde_json::to_string(v).unwrap_or_default()
            ));
        }
    }
    lines.join("\n")
}

/// `world_state`, each key on a line, long arrays cut to their latest
/// [`STATE_ARRAY_TAIL`] elements; `None` when there is none.
fn world_state(state: &Value) -> Option<String> {
    let ws = state.get("world_state").and_then(Value::as_object)?;
    if ws.is_empty() {
        return None;
    }
    let mut lines = vec!["世界状态（world_state）：".to_string()];
    for (k, v) in ws {
        let shown = match v {
            Value::Array(items) if items.len() > STATE_ARRAY_TAIL => format!(
                "{}（另有 {} 条较早的）",
                scalar(&Value::Array(
                    items[items.len() - STATE_ARRAY_TAIL..].to_vec()
                )),
                items.len() - STATE_ARRAY_TAIL
            ),
            other => scalar(other),
        };
        lines.push(format!("- {k}：{}", cut_chars(&shown, 300)));
    }
    Some(lines.join("\n"))
}

/// The first ten entries of a state section (`items`, `locations`, `factions`) that mention a
/// character in play by slug, one per line; `None` when there are none.
fn related_to_cast(state: &Value, section: &str, cast: &[&str]) -> Option<String> {
    let map = state.get(section).and_then(Value::as_object)?;
    let related: Vec<String> = map
        .iter()
        .filter(|(_, v)| {
            let t = v.to_string();
            cast.iter().any(|id| t.contains(&format!("\"{id}\"")))
        })
        .take(10)
        .map(|(k, v)| format!("- {k}：{}", compact(v, 200)))
        .collect();
    (!related.is_empty()).then(|| related.join("\n"))
}

/// Where the style profile comes from, in words.
fn style_source(src: StyleSource, p: &StyleProfile) -> String {
    match src {
        StyleSource::Original => "作者自己的样本".to_string(),
        StyleSource::Reference => format!(
            "参考作者{}（仿写）",
            p.reference_author
                .as_deref()
                .map_or(String::new(), |a| format!("「{a}」"))
        ),
        StyleSource::Template => "预置风格模板".to_string(),
        StyleSource::WriteFirst => "先写后提".to_string(),
    }
}

/// 风格漂移纠偏: the drifted metrics and the directives that correct them.
fn drift_directives(d: &StyleDrift) -> String {
    let mut t = format!(
        "【风格漂移纠偏（第 {}–{} 章偏离基线）】",
        d.window[0], d.window[1]
    );
    for m in d.metrics.iter().filter(|m| m.drifted) {
        t.push_str(&format!(
            "\n- {}：基线 {:.2}，当前 {:.2}（偏离 {:.0}%）",
            m.name,
            m.baseline,
            m.current,
            m.deviation * 100.0
        ));
    }
    for dir in &d.directives {
        t.push_str(&format!("\n- {dir}"));
    }
    t
}

/// The blacklist minus the whitelist, "top" first: the author's own additions, then the
/// judge's, then the seed list; file order within each.
fn ranked_entries(b: &AiBlacklist) -> Vec<&BlacklistEntry> {
    let mut entries: Vec<&BlacklistEntry> = b
        .entries
        .iter()
        .filter(|e| !b.whitelist.contains(&e.phrase))
        .collect();
    entries.sort_by_key(|e| match e.source {
        Some(EntrySource::User) => 0,
        Some(EntrySource::Judge) => 1,
        _ => 2,
    });
    entries
}

/// Blacklist phrases that share a way of fixing (their first replacement), in list order.
struct HintGroup<'a> {
    hint: String,
    entries: Vec<&'a BlacklistEntry>,
}

impl HintGroup<'_> {
    /// `改法：短语*、短语^、短语`.
    fn line(&self) -> String {
        let phrases: Vec<String> = self
            .entries
            .iter()
            .map(|e| {
                let mut t = e.phrase.clone();
                if e.narration_only {
                    t.push('*');
                }
                if e.paragraph_start_only {
                    t.push('^');
                }
                t
            })
            .collect();
        format!("- {}：{}", self.hint, phrases.join("、"))
    }
}

/// The entries grouped by their way of fixing, in the order the groups first appear.
fn hint_groups<'a>(entries: &[&'a BlacklistEntry]) -> Vec<HintGroup<'a>> {
    let mut groups: Vec<HintGroup<'a>> = Vec::new();
    for e in entries {
        // The first replacement is the direction; the others only vary it.
        let hint = e
            .replacements
            .first()
            .map_or("删去，或换成具体的动作、细节", String::as_str)
            .to_string();
        match groups.iter_mut().find(|g| g.hint == hint) {
            Some(g) => g.entries.push(e),
            None => groups.push(HintGroup {
                hint,
                entries: vec![e],
            }),
        }
    }
    groups
}

/// A blacklist phrase with where it applies.
fn blacklist_phrase(e: &BlacklistEntry) -> String {
    let mut t = e.phrase.clone();
    if e.narration_only {
        t.push_str("（叙述中）");
    }
    if e.paragraph_start_only {
        t.push_str("（段首）");
    }
    t
}

/// 结构性套路: the blacklist's structural patterns.
fn blacklist_patterns(b: &AiBlacklist) -> String {
    format!(
        "【结构性套路】\n{}",
        b.patterns
            .iter()
            .map(|p| format!(
                "- {}{}",
                p.name,
                p.description
                    .as_deref()
                    .map_or(String::new(), |d| format!("：{d}"))
            ))
            .collect::<Vec<_>>()
            .join("\n")
    )
}

fn volume_role(r: crate::model::storyline::VolumeRole) -> &'static str {
    match r {
        crate::model::storyline::VolumeRole::Primary => "主推进（primary）",
        crate::model::storyline::VolumeRole::Secondary => "穿插（secondary）",
        crate::model::storyline::VolumeRole::Seasoning => "点缀（seasoning）",
    }
}

fn foreshadow_action(a: ForeshadowAction) -> &'static str {
    match a {
        ForeshadowAction::Plant => "埋设",
        ForeshadowAction::Advance => "推进",
        ForeshadowAction::Resolve => "回收",
    }
}

fn scope_name(s: ForeshadowScope) -> &'static str {
    match s {
        ForeshadowScope::Short => "short",
        ForeshadowScope::Medium => "medium",
        ForeshadowScope::Long => "long",
    }
}

/// The outline format, handed to PlotArchitect (same text as `docs/context-packets.md`).
pub const OUTLINE_FORMAT_TEXT: &str = "volumes/vol-NN/outline.md 的格式（程序按此解析）：
- 卷概述写在第一个章节标题之前（可有一级标题「# 第 N 卷 · 卷名」）。
- 每章一节，标题统一写成二级标题「## 第48章 章节标题」——两个 #、一个空格、「第」、阿拉伯数字、「章」，再空格接标题（标题可省略）。程序也读得懂「### 第 48 章：标题」「## 第四十八章 标题」这类常见写法，但同一份大纲请只用一种。
- 每章只出现一次；一节从标题开始，到下一个章节标题或同级、更高级的标题为止，更低级的标题属于本节。
- 每节用列表写字段：「- 故事线：<storyline_id>」「- POV：」「- 地点：」「- 冲突：」「- 弧光：」「- 伏笔：」「- 状态变化：」。故事线写 storylines.json 中的 id。";
