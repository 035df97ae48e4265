//! What the name and leak checks (`novel check names`, `novel check leak`, the reviews) read from
//! a project, as plain values: `novel-store` gathers them from disk (`novel_store::names`,
//! `novel_store::leak`), `novel-text` decides over them (`novel_text::names::known_names`,
//! `novel_text::leak::assess`). Nothing here reads a file or decides anything.

use crate::model::{Character, Storylines, WorldRules};

/// Where the registered names come from: every character file of `characters/active` and
/// `characters/retired` (in path order), and `storylines/storylines.json` when there is one.
#[derive(Debug, Clone, Default)]
pub struct NameSources {
    pub characters: Vec<Character>,
    pub storylines: Option<Storylines>,
}

/// Where the known names of things that are not people come from: the state file, the L1 world
/// rules and the `world/*.md` documents (in path order).
#[derive(Debug, Clone, Default)]
pub struct SettingSources {
    /// `state/current-state.json`, when there is one.
    pub state: Option<serde_json::Value>,
    /// `world/rules.json`, when there is one.
    pub world_rules: Option<WorldRules>,
    /// The text of each `world/*.md`.
    pub world_docs: Vec<String>,
}

/// Everything the cross-storyline leak check of one chapter reads.
#[derive(Debug, Clone)]
pub struct LeakSources {
    pub chapter: u32,
    /// The text checked, relative to the project (committed, else staged).
    pub path: String,
    pub text: String,
    /// The chapter's storyline; one of `storylines`.
    pub storyline: String,
    pub storylines: Storylines,
    /// The text of each storyline's `memory.md` (empty when there is none), in the order of
    /// `storylines.storylines`.
    pub memories: Vec<String>,
    /// The lines that converge with `storyline` in this chapter (per the volume schedules),
    /// sorted, each once.
    pub converging: Vec<String>,
    pub names: NameSources,
    pub setting: SettingSources,
}
