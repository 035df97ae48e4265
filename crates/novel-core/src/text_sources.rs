//! What the name and leak checks (`novel check names`, `novel check leak`, the reviews) read from
//! a project, as plain values: `novel-store` gathers them from disk (`novel_store::names`,
//! `novel_store::leak`), `novel-text` decides over them (`novel_text::names::known_names`,
//! `novel_text::leak::assess`). Nothing here reads a file or decides anything.
//!
//! Layer: views — what the agents and the author are shown (packets, status, reviews, plan checks,
//! drift, cost); the top.

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
    /// What this chapter's own plan says: its L3 contract, its outline block, the volume
    /// schedule's entries for it (the convergence events it is in, its line's `arc_goal`), and
    /// the files of the characters that plan names (their character file, their entry in the
    /// state). An entity any of these names is not foreign to the chapter.
    pub plan: Vec<PlanText>,
    /// The plans of the other chapters of the book (their contracts and outline blocks), each
    /// with its storyline: where another line planned an entity, and which places more than
    /// one line plans.
    pub line_plans: Vec<PlanText>,
}

/// One piece of a plan and where it is.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PlanText {
    /// Project-relative file.
    pub file: String,
    /// 1-based line in a text file (an outline block's heading).
    pub line: Option<usize>,
    /// JSON pointer in a JSON file (`""`: the whole file).
    pub pointer: Option<String>,
    /// The chapter it plans, when it plans one.
    pub chapter: Option<u32>,
    /// The storyline it belongs to, when known.
    pub storyline: Option<String>,
    /// Its text: every string of a JSON file (keys and values, one a line), or the block.
    pub text: String,
}

/// Every key and string of a JSON value, one a line, in document order: the text an entity
/// name is looked for in.
pub fn json_text(value: &serde_json::Value) -> String {
    fn walk(v: &serde_json::Value, out: &mut String) {
        match v {
            serde_json::Value::String(s) => {
                out.push_str(s);
                out.push('\n');
            }
            serde_json::Value::Array(a) => a.iter().for_each(|x| walk(x, out)),
            serde_json::Value::Object(o) => {
                for (k, x) in o {
                    out.push_str(k);
                    out.push('\n');
                    walk(x, out);
                }
            }
            _ => {}
        }
    }
    let mut out = String::new();
    walk(value, &mut out);
    out
}
