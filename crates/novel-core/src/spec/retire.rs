//! Character retirement (角色退场, `003` §8.5; seed `000` step 3): only by an explicit action,
//! never because a character has been absent for N chapters, and never while one of the three
//! protections (退场保护) holds:
//!
//! - **A 活跃伏笔引用**: a `medium`/`long` thread of `foreshadowing/global.json` that is not
//!   `resolved` names the character in `description` or a `history[].detail`;
//! - **B 故事线关联**: a storyline that is active, dormant or planned has the character in
//!   `pov_characters`, or a storyline relationship has it in `bridges.shared_characters`;
//! - **C 未来交汇事件**: a convergence event of the current volume's schedule whose chapter range
//!   is still ahead of `last_completed_chapter` involves one of the character's storylines, or
//!   names the character in `trigger`/`aftermath`.
//!
//! When a link cannot be decided (a file that does not parse, a name inside another name), the
//! protection blocks conservatively and says why. Every block carries its evidence.

use serde::Serialize;
use serde_json::Value;

use super::names::{NameMatch, NameSet, in_entry, in_text};
use super::{Evidence, Loaded};
use crate::model::character::RelationshipStatus;
use crate::model::common::{ForeshadowScope, ForeshadowStatus};
use crate::model::state::{ChangeSource, ChangelogEntry, OpKind, StateOp};
use crate::model::storyline::{ConvergenceEvent, StorylineStatus};
use crate::model::{
    Character, Extra, ForeshadowingGlobal, Relationships, StorylineSchedule, Storylines,
};
use crate::ops;

/// The three protections.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub enum Protection {
    /// 活跃伏笔引用
    A,
    /// 故事线关联
    B,
    /// 未来交汇事件
    C,
}

impl Protection {
    pub fn label(self) -> &'static str {
        match self {
            Protection::A => "保护条件 A：活跃伏笔引用",
            Protection::B => "保护条件 B：故事线关联",
            Protection::C => "保护条件 C：未来交汇事件",
        }
    }
}

/// One reason a character may not retire (退场保护命中).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RetirementBlock {
    pub protection: Protection,
    /// False when the link could not be decided and the block is conservative (保守策略).
    pub certain: bool,
    /// A Chinese sentence saying what was found.
    pub reason: String,
    pub evidence: Evidence,
}

/// The decision of `novel retire check`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RetirementCheck {
    pub slug: String,
    pub display_name: String,
    pub allowed: bool,
    /// Storylines the character is linked to (pov or bridge), sorted.
    pub linked_storylines: Vec<String>,
    pub blocks: Vec<RetirementBlock>,
}

/// Everything the protections look at, loaded by the store.
#[derive(Debug, Clone)]
pub struct RetireInputs<'a> {
    pub character: &'a Character,
    /// Every other character (active and retired), for the name-inside-a-name check.
    pub cast: &'a [&'a Character],
    pub foreshadowing: Loaded<&'a ForeshadowingGlobal>,
    pub storylines: Loaded<&'a Storylines>,
    /// The current volume's schedule and its project-relative path.
    pub schedule: Loaded<&'a StorylineSchedule>,
    pub schedule_file: &'a str,
    pub last_completed_chapter: u32,
}

pub const FORESHADOWING_FILE: &str = "foreshadowing/global.json";
pub const STORYLINES_FILE: &str = "storylines/storylines.json";

fn block(
    protection: Protection,
    found: &NameMatch,
    file: &str,
    pointer: String,
    text: &str,
    what: &str,
) -> Option<RetirementBlock> {
    match found {
        NameMatch::None => None,
        NameMatch::Certain { matched } => Some(RetirementBlock {
            protection,
            certain: true,
            reason: format!("{what}提到「{matched}」"),
            evidence: Evidence::new(file, pointer, matched, text),
        }),
        NameMatch::Ambiguous { matched, within } => Some(RetirementBlock {
            protection,
            certain: false,
            reason: format!(
                "{what}中的「{matched}」出现在「{within}」里，无法确定是否指本角色，按保守策略视为有关联"
            ),
            evidence: Evidence::new(file, pointer, within, text),
        }),
    }
}

fn broken(protection: Protection, file: &str, why: &str) -> RetirementBlock {
    RetirementBlock {
        protection,
        certain: false,
        reason: format!("{file} 无法解析（{why}），无法确定角色关联，按保守策略阻止退场"),
        evidence: Evidence::new(file, "", "", why),
    }
}

/// The storylines a character is linked to, each with whether the link is certain.
#[derive(Default)]
struct Linked(Vec<(String, bool)>);

impl Linked {
    fn add(&mut self, id: &str, found: &NameMatch) {
        let certain = matches!(found, NameMatch::Certain { .. });
        match self.0.iter_mut().find(|(l, _)| l == id) {
            Some((_, c)) => *c |= certain,
            None => self.0.push((id.to_string(), certain)),
        }
    }

    fn certainty(&self, id: &str) -> Option<bool> {
        self.0.iter().find(|(l, _)| l == id).map(|(_, c)| *c)
    }

    fn ids(&self) -> Vec<String> {
        let mut v: Vec<String> = self.0.iter().map(|(l, _)| l.clone()).collect();
        v.sort();
        v
    }
}

/// The names the protections look for: the character's own, and every other character's
/// (a name found inside another name is an unsure match).
struct Who {
    me: NameSet,
    others: Vec<String>,
}

impl Who {
    fn in_text(&self, text: &str) -> NameMatch {
        in_text(text, &self.me, &self.others)
    }

    fn in_entry(&self, entry: &str) -> NameMatch {
        in_entry(entry, &self.me, &self.others)
    }
}

/// Runs the three protections.
pub fn check_retirement(input: &RetireInputs<'_>) -> RetirementCheck {
    let me = NameSet::of(input.character);
    let others = NameSet::others(&me.slug, input.cast);
    let who = Who { me, others };
    let mut blocks = protection_a(&input.foreshadowing, &who);
    let (b_blocks, linked) = protection_b(&input.storylines, &who);
    blocks.extend(b_blocks);
    blocks.extend(protection_c(input, &who, linked.as_ref()));
    sort_blocks(&mut blocks);
    RetirementCheck {
        slug: who.me.slug.clone(),
        display_name: input.character.display_name.clone(),
        allowed: blocks.is_empty(),
        linked_storylines: linked.map(|l| l.ids()).unwrap_or_default(),
        blocks,
    }
}

/// By protection, then file, then JSON pointer.
fn sort_blocks(blocks: &mut [RetirementBlock]) {
    blocks.sort_by(|a, b| {
        (a.protection, &a.evidence.file, &a.evidence.pointer).cmp(&(
            b.protection,
            &b.evidence.file,
            &b.evidence.pointer,
        ))
    });
}

/// A — active medium/long foreshadowing that mentions the character.
fn protection_a(foreshadowing: &Loaded<&ForeshadowingGlobal>, who: &Who) -> Vec<RetirementBlock> {
    let g = match foreshadowing {
        Loaded::Absent => return Vec::new(),
        Loaded::Broken(why) => return vec![broken(Protection::A, FORESHADOWING_FILE, why)],
        Loaded::Parsed(g) => g,
    };
    let mut blocks = Vec::new();
    for (i, f) in g.foreshadowing.iter().enumerate() {
        if f.scope == ForeshadowScope::Short || f.status == ForeshadowStatus::Resolved {
            continue;
        }
        let what = format!("未回收的伏笔「{}」", f.id);
        let mut texts = vec![(format!("/foreshadowing/{i}/description"), &f.description)];
        for (j, h) in f.history.iter().enumerate() {
            if let Some(d) = &h.detail {
                texts.push((format!("/foreshadowing/{i}/history/{j}/detail"), d));
            }
        }
        for (pointer, text) in texts {
            let found = who.in_text(text);
            blocks.extend(block(
                Protection::A,
                &found,
                FORESHADOWING_FILE,
                pointer,
                text,
                &what,
            ));
        }
    }
    blocks
}

/// B — storylines, and the storylines the character is linked to, which C needs (`None` when
/// the storylines file does not parse). A link found only through an unsure name match (苏婉
/// inside «苏婉儿（化名）») stays unsure for C as well.
fn protection_b(
    storylines: &Loaded<&Storylines>,
    who: &Who,
) -> (Vec<RetirementBlock>, Option<Linked>) {
    let mut linked = Linked::default();
    let s = match storylines {
        Loaded::Absent => return (Vec::new(), Some(linked)),
        Loaded::Broken(why) => return (vec![broken(Protection::B, STORYLINES_FILE, why)], None),
        Loaded::Parsed(s) => s,
    };
    let mut blocks = pov_blocks(s, who, &mut linked);
    blocks.extend(bridge_blocks(s, who, &mut linked));
    (blocks, Some(linked))
}

/// B through `pov_characters`: every storyline links; only unresolved ones protect.
fn pov_blocks(s: &Storylines, who: &Who, linked: &mut Linked) -> Vec<RetirementBlock> {
    let mut blocks = Vec::new();
    for (i, line) in s.storylines.iter().enumerate() {
        let protects = line.status != StorylineStatus::Resolved;
        for (j, entry) in line.pov_characters.iter().enumerate() {
            let found = who.in_entry(entry);
            if found.is_none() {
                continue;
            }
            linked.add(&line.id, &found);
            if protects {
                blocks.extend(block(
                    Protection::B,
                    &found,
                    STORYLINES_FILE,
                    format!("/storylines/{i}/pov_characters/{j}"),
                    entry,
                    &format!("故事线「{}」（{}）的 POV 角色", line.name, line.id),
                ));
            }
        }
    }
    blocks
}

/// B through `bridges.shared_characters`: links both ends; protects unless both are resolved.
fn bridge_blocks(s: &Storylines, who: &Who, linked: &mut Linked) -> Vec<RetirementBlock> {
    let mut blocks = Vec::new();
    for (i, rel) in s.relationships.iter().enumerate() {
        let ends_resolved = [&rel.from, &rel.to].iter().all(|id| {
            s.storylines
                .iter()
                .any(|l| &l.id == *id && l.status == StorylineStatus::Resolved)
        });
        for (j, entry) in rel.bridges.shared_characters.iter().enumerate() {
            let found = who.in_entry(entry);
            if found.is_none() {
                continue;
            }
            linked.add(&rel.from, &found);
            linked.add(&rel.to, &found);
            if !ends_resolved {
                blocks.extend(block(
                    Protection::B,
                    &found,
                    STORYLINES_FILE,
                    format!("/relationships/{i}/bridges/shared_characters/{j}"),
                    entry,
                    &format!("故事线关系 {} → {} 的共享角色", rel.from, rel.to),
                ));
            }
        }
    }
    blocks
}

/// C — future convergence events of the current volume. `linked` is `None` when the
/// storylines are unknown (their file does not parse).
fn protection_c(
    input: &RetireInputs<'_>,
    who: &Who,
    linked: Option<&Linked>,
) -> Vec<RetirementBlock> {
    let file = input.schedule_file;
    let sched = match &input.schedule {
        Loaded::Absent => return Vec::new(),
        Loaded::Broken(why) => return vec![broken(Protection::C, file, why)],
        Loaded::Parsed(sched) => sched,
    };
    let mut blocks = Vec::new();
    for (i, e) in sched.convergence_events.iter().enumerate() {
        let [first, last] = e.chapter_range;
        if last <= input.last_completed_chapter {
            continue;
        }
        let what = format!("第 {first}–{last} 章的交汇事件");
        match linked {
            Some(linked) => blocks.extend(linked_storyline_blocks(file, i, e, &what, linked)),
            None => blocks.extend(unknown_storylines_block(file, i, e, &what)),
        }
        for (field, text) in [("trigger", &e.trigger), ("aftermath", &e.aftermath)] {
            if let Some(text) = text {
                let found = who.in_text(text);
                blocks.extend(block(
                    Protection::C,
                    &found,
                    file,
                    format!("/convergence_events/{i}/{field}"),
                    text,
                    &what,
                ));
            }
        }
    }
    blocks
}

/// C through the event's storylines the character is linked to (unsure when the link is).
fn linked_storyline_blocks(
    file: &str,
    i: usize,
    e: &ConvergenceEvent,
    what: &str,
    linked: &Linked,
) -> Vec<RetirementBlock> {
    let mut blocks = Vec::new();
    for (j, id) in e.involved_storylines.iter().enumerate() {
        if let Some(certain) = linked.certainty(id) {
            blocks.push(RetirementBlock {
                protection: Protection::C,
                certain,
                reason: if certain {
                    format!("{what}涉及角色所在的故事线「{id}」")
                } else {
                    format!(
                        "{what}涉及故事线「{id}」，角色与它的关联无法确定（见保护条件 B），按保守策略视为有关联"
                    )
                },
                evidence: Evidence::new(
                    file,
                    format!("/convergence_events/{i}/involved_storylines/{j}"),
                    id,
                    id,
                ),
            });
        }
    }
    blocks
}

/// C when the storylines file does not parse: any event with storylines blocks conservatively.
fn unknown_storylines_block(
    file: &str,
    i: usize,
    e: &ConvergenceEvent,
    what: &str,
) -> Option<RetirementBlock> {
    if e.involved_storylines.is_empty() {
        return None;
    }
    Some(RetirementBlock {
        protection: Protection::C,
        certain: false,
        reason: format!(
            "{what}涉及故事线 {}，而 {STORYLINES_FILE} 无法解析、无法确定角色所在的故事线，按保守策略视为有关联",
            e.involved_storylines.join("、")
        ),
        evidence: Evidence::new(
            file,
            format!("/convergence_events/{i}/involved_storylines"),
            &e.involved_storylines.join(","),
            &e.involved_storylines.join("、"),
        ),
    })
}

/// The state after retiring `slug`, and the changelog line (`source: retire`) that records it.
/// The removal goes through [`ops::remove_entity`], the function `ops::replay` uses, so
/// `novel state rebuild` reproduces it. When the state has no entry for the character the
/// line still records the retirement, with no op and no version change (the state only moves
/// its `last_updated_chapter`, as replaying the line does).
///
/// The line is stamped with the chapter the retirement takes effect from: the one after the
/// last completed chapter. `novel state at --chapter N` replays the lines up to chapter N, so
/// the state at the last completed chapter still has the character, as it had when that
/// chapter was written.
pub fn retire_state(
    state: &Value,
    slug: &str,
    display_name: &str,
    last_completed_chapter: u32,
    timestamp: &str,
) -> (Value, ChangelogEntry) {
    let chapter = effective_chapter(last_completed_chapter);
    let base = ops::state_version(state);
    let present = state.get("characters").and_then(|c| c.get(slug)).is_some();
    let op = StateOp {
        op: OpKind::Remove,
        path: format!("characters.{slug}"),
        value: Value::Null,
        detail: Some(format!("角色退场：{display_name}")),
        extra: Extra::new(),
    };
    let mut next = state.clone();
    let mut applied = Vec::new();
    let mut version = base;
    if present && ops::remove_entity(&mut next, &op).unwrap_or(false) {
        applied.push(op);
        version = base + 1;
    }
    // What replaying the line does (even one without ops): the version, and the chapter the
    // state is updated to.
    crate::ops::finish_version(&mut next, version, chapter);
    let entry = ChangelogEntry {
        chapter,
        source: ChangeSource::Retire,
        storyline_id: None,
        base_state_version: base,
        state_version: version,
        timestamp: timestamp.to_string(),
        applied,
        rejected: Vec::new(),
        note: Some(if present {
            format!("角色「{display_name}」（{slug}）退场")
        } else {
            format!("角色「{display_name}」（{slug}）退场（当前状态中没有该角色的条目）")
        }),
        resolves_skipped: Vec::new(),
        cleanup_volume: None,
        written: None,
        extra: Extra::new(),
    };
    (next, entry)
}

/// The chapter a retirement decided after `last_completed_chapter` takes effect from.
pub fn effective_chapter(last_completed_chapter: u32) -> u32 {
    last_completed_chapter + 1
}

/// Marks every edge that touches `slug` as `ended` (kept for history, not deleted); returns the
/// new file and the pointers of the edges it changed.
pub fn end_relationships(rels: &Relationships, slug: &str) -> (Relationships, Vec<String>) {
    let mut out = rels.clone();
    let mut changed = Vec::new();
    for (i, r) in out.relationships.iter_mut().enumerate() {
        if (r.from == slug || r.to == slug) && r.status != Some(RelationshipStatus::Ended) {
            r.status = Some(RelationshipStatus::Ended);
            changed.push(format!("/relationships/{i}"));
        }
    }
    (out, changed)
}

/// The entry appended to `characters/changelog.md`.
pub fn changelog_md_entry(
    c: &Character,
    last_completed_chapter: u32,
    timestamp: &str,
    moved: &[String],
    ended_edges: usize,
) -> String {
    format!(
        "\n## {timestamp} 角色退场：{}（{}）\n\n- 最后完成章节：第 {last_completed_chapter} 章；自第 {} 章起退场\n- 移至 characters/retired/：{}\n- 关系边标记为 ended：{ended_edges} 条\n- 从 state/current-state.json 移除（变更日志 source: retire）\n",
        c.display_name,
        c.id,
        effective_chapter(last_completed_chapter),
        moved.join("、"),
    )
}
