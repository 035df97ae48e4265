//! The packet: tagged sections made of units, each with a token estimate; trimming to a
//! budget by priority; rendering as XML-like text and as JSON.
//!
//! Rendered form (stable; see `docs/context-packets.md`):
//!
//! ```text
//! <context agent="chapter-writer" chapter="48" volume="2" storyline="main_arc" tokens="18234" limit="22000">
//! <storyline title="故事线" tokens="812">
//! …section text…
//! </storyline>
//! …
//! </context>
//! ```
//!
//! Content is not escaped: a section ends at the line `</tag>`. Every section of an agent's
//! packet is always present (a section cut whole by the budget says so in one line), so
//! prompts can refer to sections by tag.

use serde::Serialize;
use serde_json::{Value, json};

use super::Agent;
use super::tokens::estimate;

/// Why and when a unit may be cut: higher `rank` goes first; within a rank, higher `order`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Cut {
    pub rank: u16,
    pub order: u32,
    /// What is lost, for the report (`近期摘要：第 45 章`).
    pub label: String,
}

/// A piece of a section that is kept or cut as a whole.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unit {
    pub text: String,
    pub tokens: u32,
    /// `None` = required: never cut.
    pub cut: Option<Cut>,
    pub removed: bool,
}

/// One tagged section of a packet.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Section {
    /// Stable tag (`storyline`, `chapter_outline` …).
    pub tag: &'static str,
    /// Chinese title shown in the opening tag.
    pub title: &'static str,
    pub units: Vec<Unit>,
}

/// Placeholder width of the `tokens="…"` attributes when estimating the tags themselves.
const NUMBER_PLACEHOLDER: &str = "00000";

impl Section {
    pub fn new(tag: &'static str, title: &'static str) -> Self {
        Section {
            tag,
            title,
            units: Vec::new(),
        }
    }

    /// Adds a unit that is never cut.
    pub fn required(&mut self, text: impl Into<String>) -> &mut Self {
        let text = text.into();
        self.units.push(Unit {
            tokens: estimate(&text),
            text,
            cut: None,
            removed: false,
        });
        self
    }

    /// Adds a unit the budget may cut (see [`Cut`]).
    pub fn optional(
        &mut self,
        text: impl Into<String>,
        rank: u16,
        order: u32,
        label: impl Into<String>,
    ) -> &mut Self {
        let text = text.into();
        self.units.push(Unit {
            tokens: estimate(&text),
            text,
            cut: Some(Cut {
                rank,
                order,
                label: label.into(),
            }),
            removed: false,
        });
        self
    }

    fn kept(&self) -> impl Iterator<Item = &Unit> {
        self.units.iter().filter(|u| !u.removed)
    }

    fn cut_whole(&self) -> bool {
        !self.units.is_empty() && self.units.iter().all(|u| u.removed)
    }

    /// The section's body as rendered.
    pub fn body(&self) -> String {
        if self.cut_whole() {
            return CUT_NOTE.to_string();
        }
        if self.units.is_empty() {
            return EMPTY_NOTE.to_string();
        }
        self.kept()
            .map(|u| u.text.as_str())
            .collect::<Vec<_>>()
            .join("\n")
    }

    fn tag_overhead(&self) -> u32 {
        estimate(&format!(
            "<{} title=\"{}\" tokens=\"{NUMBER_PLACEHOLDER}\">\n</{}>",
            self.tag, self.title, self.tag
        ))
    }

    /// Estimated tokens of the section as rendered (tags included).
    pub fn tokens(&self) -> u32 {
        let body: u32 = if self.cut_whole() {
            estimate(CUT_NOTE)
        } else if self.units.is_empty() {
            estimate(EMPTY_NOTE)
        } else {
            self.kept().map(|u| u.tokens).sum()
        };
        self.tag_overhead() + body
    }
}

const CUT_NOTE: &str = "（本段已按预算整段裁去）";
const EMPTY_NOTE: &str = "（无）";

/// One unit the budget removed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CutRecord {
    pub section: &'static str,
    pub label: String,
    pub tokens: u32,
}

/// Where a packet's budget came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum BudgetSource {
    /// `novel.json` `context_budgets`.
    Settings,
    /// `--budget TOKENS`.
    Flag,
}

/// The budget of one agent call, and what is left for the packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Budget {
    /// Tokens for the whole agent call (`003` §8.4 counts the agent prompt in it).
    pub total: u32,
    /// Reserved for the agent's own prompt ([`Agent::prompt_allowance`]).
    pub prompt_allowance: u32,
    /// Extra room for a chapter text longer than `chapter_length.min` (see
    /// [`crate::context::assemble::budget_for`]).
    pub text_allowance: u32,
    /// What the packet may use: `total − prompt_allowance + text_allowance`.
    pub limit: u32,
    pub source: BudgetSource,
}

impl Budget {
    pub fn new(agent: Agent, total: u32, source: BudgetSource) -> Self {
        let prompt_allowance = agent.prompt_allowance();
        Budget {
            total,
            prompt_allowance,
            text_allowance: 0,
            limit: total.saturating_sub(prompt_allowance),
            source,
        }
    }
}

/// Still over budget after every cuttable unit is gone.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct OverBudget {
    pub tokens: u32,
    pub limit: u32,
    /// Sections by size, largest first: (tag, tokens).
    pub largest: Vec<(&'static str, u32)>,
}

/// An assembled packet.
#[derive(Debug, Clone, PartialEq)]
pub struct Packet {
    pub agent: Agent,
    pub chapter: u32,
    pub volume: u32,
    pub storyline: Option<String>,
    pub convergence: bool,
    /// Why the chapter is a key chapter (关键章: two judges), for the agents that load the
    /// volume schedule (chapter-writer, summarizer, quality-judge); empty otherwise.
    pub key_chapter: Vec<crate::gate::KeyReason>,
    pub sections: Vec<Section>,
    /// Problems met while assembling (unreadable optional files, guessed storyline …).
    pub warnings: Vec<String>,
    pub budget: Option<Budget>,
    pub cut: Vec<CutRecord>,
}

impl Packet {
    fn open_tag(&self, tokens: &str) -> String {
        let mut s = format!(
            "<context agent=\"{}\" chapter=\"{}\" volume=\"{}\"",
            self.agent.name(),
            self.chapter,
            self.volume
        );
        if let Some(id) = &self.storyline {
            s.push_str(&format!(" storyline=\"{id}\""));
        }
        if self.convergence {
            s.push_str(" convergence=\"true\"");
        }
        s.push_str(&format!(" tokens=\"{tokens}\""));
        if let Some(b) = &self.budget {
            s.push_str(&format!(" limit=\"{}\"", b.limit));
        }
        s.push('>');
        s
    }

    /// Estimated tokens of the whole rendered packet.
    pub fn tokens(&self) -> u32 {
        estimate(&self.open_tag(NUMBER_PLACEHOLDER))
            + estimate("</context>")
            + self.sections.iter().map(Section::tokens).sum::<u32>()
    }

    pub fn section(&self, tag: &str) -> Option<&Section> {
        self.sections.iter().find(|s| s.tag == tag)
    }

    /// Removes cuttable units, highest rank first, until the packet fits `limit`. Records what
    /// was cut; an error when it still does not fit.
    pub fn trim_to(&mut self, limit: u32) -> Result<(), OverBudget> {
        let mut candidates: Vec<(u16, u32, usize, usize)> = Vec::new();
        for (si, s) in self.sections.iter().enumerate() {
            for (ui, u) in s.units.iter().enumerate() {
                if let (Some(c), false) = (&u.cut, u.removed) {
                    candidates.push((c.rank, c.order, si, ui));
                }
            }
        }
        // Highest rank first; within a rank the highest order first; then later sections and
        // later units first, so the order is total and the result deterministic.
        candidates.sort_by(|a, b| b.cmp(a));
        let mut total = self.tokens();
        for (_, _, si, ui) in candidates {
            if total <= limit {
                break;
            }
            let section = &mut self.sections[si];
            section.units[ui].removed = true;
            let unit = &section.units[ui];
            self.cut.push(CutRecord {
                section: section.tag,
                label: unit.cut.as_ref().map_or(String::new(), |c| c.label.clone()),
                tokens: unit.tokens,
            });
            total = self.tokens();
        }
        if total > limit {
            let mut largest: Vec<(&'static str, u32)> =
                self.sections.iter().map(|s| (s.tag, s.tokens())).collect();
            largest.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
            largest.truncate(4);
            return Err(OverBudget {
                tokens: total,
                limit,
                largest,
            });
        }
        Ok(())
    }

    /// The packet as the agent receives it.
    pub fn render(&self) -> String {
        let mut out = self.open_tag(&self.tokens().to_string());
        out.push('\n');
        for s in &self.sections {
            out.push_str(&format!(
                "<{} title=\"{}\" tokens=\"{}\">\n",
                s.tag,
                s.title,
                s.tokens()
            ));
            let body = s.body();
            out.push_str(&body);
            if !body.ends_with('\n') {
                out.push('\n');
            }
            out.push_str(&format!("</{}>\n", s.tag));
        }
        out.push_str("</context>\n");
        out
    }

    /// The packet as data (`--json`).
    pub fn to_json(&self) -> Value {
        json!({
            "agent": self.agent.name(),
            "chapter": self.chapter,
            "volume": self.volume,
            "storyline": self.storyline,
            "convergence": self.convergence,
            "key_chapter": self.key_chapter,
            "tokens": self.tokens(),
            "budget": self.budget,
            "sections": self.sections.iter().map(|s| json!({
                "tag": s.tag,
                "title": s.title,
                "tokens": s.tokens(),
                "cut_whole": s.cut_whole(),
                "text": s.body(),
            })).collect::<Vec<_>>(),
            "cut": self.cut,
            "warnings": self.warnings,
            "text": self.render(),
        })
    }

    /// Section sizes, for `novel context budget`.
    pub fn sizes(&self) -> Vec<(&'static str, u32)> {
        self.sections.iter().map(|s| (s.tag, s.tokens())).collect()
    }
}
