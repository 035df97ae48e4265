//! What a packet is assembled from: every input as a loaded value ([`Inputs`]), which the store
//! fills and the assembly ([`assemble`](mod@super::assemble)) and the rounds' sections
//! ([`super::rounds`]) read.

use std::collections::BTreeMap;

use serde_json::Value;

use crate::model::character::Character;
use crate::model::{
    AiBlacklist, ChapterContract, Checkpoint, Evaluation, ForeshadowingGlobal, Relationships,
    Settings, StorylineSchedule, StorylineSpec, Storylines, StyleDrift, StyleProfile,
    VolumeForeshadowing, WorldRules,
};

/// A chapter summary found on disk.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Summary {
    pub chapter: u32,
    pub storyline: Option<String>,
    pub body: String,
}

/// Project-relative paths the packets name (the store fills them from its layout).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Paths {
    pub outline: String,
    pub contract: String,
    pub staging_chapter: String,
    pub staging_summary: String,
    pub staging_delta: String,
    pub staging_evaluation: String,
    /// `staging/storylines` (memories go to `<this>/<id>/memory.md`).
    pub staging_storylines: String,
    /// `volumes/vol-NN`.
    pub volume_dir: String,
}

/// Everything an agent's packet may draw on, as loaded values. Absent files are `None` or
/// empty; files that could not be read are named in `warnings`.
#[derive(Debug, Clone, Default)]
pub struct Inputs {
    pub chapter: u32,
    pub volume: u32,
    /// The volume's span (`novel_store::next::volume_span`: schedule → outline → contracts →
    /// settings), when known.
    pub volume_range: Option<[u32; 2]>,
    pub paths: Paths,
    pub checkpoint: Option<Checkpoint>,
    pub settings: Settings,
    pub brief: Option<String>,
    pub style_profile: Option<StyleProfile>,
    pub blacklist: Option<AiBlacklist>,
    pub style_drift: Option<StyleDrift>,
    pub world_rules: Option<WorldRules>,
    /// `world/*.md` as (file name, text), name order.
    pub world_docs: Vec<(String, String)>,
    /// `characters/active/*.json`, file name order.
    pub characters: Vec<Character>,
    pub retired: Vec<Character>,
    pub relationships: Option<Relationships>,
    /// Character slug → last chapter whose committed state change touched it.
    pub last_seen: BTreeMap<String, u32>,
    pub storylines: Option<Storylines>,
    pub storyline_spec: Option<StorylineSpec>,
    pub schedule: Option<StorylineSchedule>,
    /// The volume outline's text (`paths.outline`).
    pub outline: Option<String>,
    /// Why the outline file is there but could not be read (not UTF-8, …).
    pub outline_unreadable: Option<String>,
    pub contract: Option<ChapterContract>,
    /// Storyline id → `storylines/<id>/memory.md`.
    pub memories: BTreeMap<String, String>,
    pub current_state: Option<Value>,
    pub foreshadowing: Option<ForeshadowingGlobal>,
    pub volume_plan: Option<VolumeForeshadowing>,
    /// Summaries before the chapter, most recent first (the store may pre-filter by line).
    pub summaries: Vec<Summary>,
    /// The chapter's text as (path, text): staging first, else committed.
    pub chapter_text: Option<(String, String)>,
    /// Where the chapter text was looked for (for the error).
    pub chapter_text_tried: Vec<String>,
    /// The evaluations a revision, rewrite or polish refers back to ([`Pass`](super::rounds::Pass)), as
    /// (path, evaluation): the primary first, then second judges.
    pub evaluations: Vec<(String, Evaluation)>,
    /// Where the draft of the round sent back is archived (a rewrite; never its text).
    pub archived_draft: Option<String>,
    /// QualityJudge after a round the gate sent back: that round's fixes, numbered as the
    /// judge reviews them (`crate::judging::numbered_fixes`).
    pub previous_fixes: Vec<crate::judging::NumberedFix>,
    /// A local repair round (ChapterWriter repairing, QualityJudge re-checking).
    pub repair: Option<RepairInputs>,
    pub prev_volume_review: Option<String>,
    /// `research/*.md` file names.
    pub research: Vec<String>,
    /// Continuity findings of the chapter's contract (`novel check continuity --chapter N`):
    /// gaps the writer bridges in the text.
    pub continuity: Vec<crate::diagnostic::Diagnostic>,
    /// `004`: the author's preferences, rendered (`novel_store::prefs`); empty when there are
    /// none or the store could not be read.
    pub user_preferences: String,
    /// `004`: per-character memory of the cast — slug → the profile record and the last
    /// [`MEMORY_LAST`](super::assemble::MEMORY_LAST) actions (the store loads it for
    /// [`cast_ids`](super::assemble::cast_ids)).
    pub character_memory: BTreeMap<String, Vec<crate::model::revision::MemoryEntry>>,
    pub warnings: Vec<String>,
}

/// What a local repair's packets draw on (`crate::repair`).
#[derive(Debug, Clone)]
pub struct RepairInputs {
    pub record: crate::repair::RepairRecord,
    /// The judged text the repair starts from.
    pub base: String,
    /// The next chapter's outline block, when the volume outline has it.
    pub next_outline: Option<String>,
    /// The last paragraphs of the previous chapter (its hook), when it is committed.
    pub prev_ending: Option<String>,
}
