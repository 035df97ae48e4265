//! Cross-storyline entity leaks (PRD §6.6.7 Layer 3, 防串线): names that belong only to other
//! storylines appearing in a chapter of this one.
//!
//! Which names are foreign is decided by [`foreign_entities`] from what each storyline names: a
//! leak is an entity that belongs only to another line —
//!
//! - its POV characters and the people its `memory.md` names, unless this line has them too
//!   (its POV, its memory, the characters it shares with the other line through `bridges`);
//! - its `affiliated_factions` (factions and places, §6.6.1), but only those nothing else
//!   refers to: an affiliation is a binding, not ownership, so a faction or place that this
//!   line is affiliated with, that a third line is affiliated with, that this line's memory
//!   names, that the plans of this line or of a third line name (their chapter contracts and
//!   outline blocks), or that the setting knows (a location, faction or item of the state, a
//!   term of `world/`) is shared ground — a chapter may walk through it without leaking
//!   anything;
//! - nothing at all from a line that converges with this one in this chapter;
//! - nothing this chapter's own plan names: its contract, its outline block, the schedule's
//!   entries for it, the files of the characters that plan names. A city the POV character
//!   travels to in the contract is this chapter's place; the outer court of a sect the
//!   chapter's characters belong to (青云门外门, when the plan names 青云门) is this
//!   chapter's ground.
//!
//! [`check_leak`] then finds them and grades each one:
//!
//! - `high`: another line's POV character, or a faction or place only it is bound to, in
//!   narration where a name stands; or two or more distinct foreign people in narration — the
//!   chapter is writing another line's story (LS-005 forces a revision);
//! - `low`: otherwise (one memory name, names only inside dialogue, where characters may
//!   talk about what they have heard, or names that do not stand where a name stands).
//!
//! The chapter's `leak_risk` is its highest finding's (`none` without any): only a high
//! finding blocks the gate. Each finding says which storyline owns the entity, where that is
//! written (`defined_in`) and where that line plans it (`planned_in`).
//!
//! Substrings are not names: the caller also passes every other name it knows (this line's
//! own people, all registered names); they take part in the longest-match scan and win over a
//! foreign name inside them (苏婉儿 is not 苏婉), then are dropped. A two-character foreign
//! name must stand at a name boundary (see [`crate::names::at_name_boundary`]: 林枫 in
//! 山林枫树 does not); one that does not is still reported, but only ever as `low`.
//!
//! [`assess`] is the whole check over what `novel_store::leak::sources` gathered: it turns
//! slugs into names, reads the people out of each memory, and returns the report of
//! `novel check leak` with its evidence.
//!
//! Layer: books — whole chapters and books (splitting, metrics, upkeep, leak, export, craft); the
//! top.

use std::collections::{BTreeMap, BTreeSet};

use aho_corasick::{AhoCorasick, MatchKind};
use serde::Serialize;

use novel_core::text_sources::{LeakSources, PlanText};

use crate::finding::Evidence;
use crate::names::{KnownName, at_name_boundary, entity_names, known_names};
use crate::normalize::normalize_str;
use crate::segment::{Document, Span};

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum EntityKind {
    /// A POV character of the other line (or one of its aliases).
    PovCharacter,
    /// A faction or place affiliated with the other line and with nothing else.
    Faction,
    /// A registered name found in the other line's `memory.md`.
    MemoryName,
}

impl EntityKind {
    /// The finding's rule id, as `novel check leak` reports it.
    pub fn rule(self) -> &'static str {
        match self {
            EntityKind::PovCharacter => "leak/pov-character",
            EntityKind::Faction => "leak/faction",
            EntityKind::MemoryName => "leak/memory-name",
        }
    }
}

/// A name that belongs to another storyline.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ForeignEntity {
    pub name: String,
    pub storyline: String,
    pub kind: EntityKind,
}

/// What one storyline names, as the leak check reads it (the caller has turned slugs into
/// names and read the memory file).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LineNames {
    pub id: String,
    /// Names of its POV characters (display names and aliases).
    pub pov: Vec<String>,
    /// Its `affiliated_factions`: the factions and places it is bound to.
    pub affiliations: Vec<String>,
    /// Registered people named in its `storylines/<id>/memory.md`.
    pub memory_people: Vec<String>,
    /// The text of that memory (an affiliation named there is the line's own ground too).
    pub memory: String,
}

/// What a chapter's plans say, normalised: this chapter's own plan, and every other chapter's
/// plan with its storyline.
#[derive(Debug, Clone, Default)]
pub struct Plans {
    /// This chapter's contract, outline block, schedule entries and planned characters' files.
    pub own: String,
    /// (storyline, text) of every other chapter's contract and outline block.
    pub lines: Vec<(Option<String>, String)>,
}

impl Plans {
    pub fn of(own: &[PlanText], lines: &[PlanText]) -> Plans {
        Plans {
            own: own
                .iter()
                .map(|p| normalize_str(&p.text))
                .collect::<Vec<_>>()
                .join("\n"),
            lines: lines
                .iter()
                .map(|p| (p.storyline.clone(), normalize_str(&p.text)))
                .collect(),
        }
    }

    /// Whether a plan of a line other than `owner` names `key` (normalised).
    fn other_line_names(&self, owner: &str, key: &str) -> bool {
        self.lines
            .iter()
            .any(|(line, text)| line.as_deref().is_some_and(|l| l != owner) && text.contains(key))
    }
}

/// What may not leak into a chapter of `current`: the entities that belong only to another
/// storyline (see the module note), each once with the strongest kind it has, sorted by name.
/// `converging` are the lines that meet `current` in this chapter; `shared` the names of the
/// characters `current` shares with other lines (`bridges.shared_characters`); `setting` the
/// names the setting knows (places, factions and items of the state, terms of `world/`);
/// `plans` what the chapter's own plan and the other chapters' plans name.
pub fn foreign_entities(
    lines: &[LineNames],
    current: &str,
    converging: &[String],
    shared: &[String],
    setting: &[String],
    plans: &Plans,
) -> Vec<ForeignEntity> {
    let key = |s: &str| normalize_str(s);
    let own = lines.iter().find(|l| l.id == current);
    let allowed = allowed_names(own, shared);
    let own_memory = own.map(|l| key(&l.memory)).unwrap_or_default();
    let setting: BTreeSet<String> = setting.iter().map(|s| key(s)).collect();
    let bound = bound_lines(lines);
    let places = place_names(lines, &setting);
    let planned_here = |k: &str| !k.is_empty() && plans.own.contains(k);
    // 青云门外门 when the plan names 青云门: a part of a place this chapter goes to.
    let part_of_planned = |k: &str| {
        let chars: Vec<char> = k.chars().collect();
        (2..chars.len()).any(|n| {
            let prefix: String = chars[..n].iter().collect();
            places.contains(&prefix) && (planned_here(&prefix) || allowed.contains(&prefix))
        })
    };
    let exclusive_affiliation = |name: &str, owner: &str| {
        let k = key(name);
        !k.is_empty()
            && bound.get(&k).copied().unwrap_or(0) <= 1
            && !setting.contains(&k)
            && !own_memory.contains(k.as_str())
            && !plans.other_line_names(owner, &k)
            && !part_of_planned(&k)
    };

    let mut foreign: BTreeMap<String, ForeignEntity> = BTreeMap::new();
    let mut add = |name: &str, storyline: &str, kind: EntityKind| {
        let k = key(name);
        if name.trim().is_empty() || allowed.contains(&k) || planned_here(&k) {
            return;
        }
        let e = foreign
            .entry(name.to_string())
            .or_insert_with(|| ForeignEntity {
                name: name.to_string(),
                storyline: storyline.to_string(),
                kind,
            });
        if kind < e.kind {
            e.kind = kind;
            e.storyline = storyline.to_string();
        }
    };
    for l in lines
        .iter()
        .filter(|l| l.id != current && !converging.contains(&l.id))
    {
        for name in &l.pov {
            add(name, &l.id, EntityKind::PovCharacter);
        }
        for name in l
            .affiliations
            .iter()
            .filter(|a| exclusive_affiliation(a, &l.id))
        {
            add(name, &l.id, EntityKind::Faction);
        }
        for name in &l.memory_people {
            add(name, &l.id, EntityKind::MemoryName);
        }
    }
    foreign.into_values().collect()
}

/// The names a chapter of the line `own` may use freely (normalized): the characters it shares
/// with other lines, and its own POV characters, affiliations and remembered people.
fn allowed_names(own: Option<&LineNames>, shared: &[String]) -> BTreeSet<String> {
    let mut allowed: BTreeSet<String> = shared.iter().map(|s| normalize_str(s)).collect();
    if let Some(own) = own {
        allowed.extend(
            own.pov
                .iter()
                .chain(&own.affiliations)
                .chain(&own.memory_people)
                .map(|s| normalize_str(s)),
        );
    }
    allowed
}

/// How many lines are bound to each affiliation (normalized).
fn bound_lines(lines: &[LineNames]) -> BTreeMap<String, usize> {
    let mut bound: BTreeMap<String, usize> = BTreeMap::new();
    for l in lines {
        let mine: BTreeSet<String> = l.affiliations.iter().map(|s| normalize_str(s)).collect();
        for a in mine {
            *bound.entry(a).or_default() += 1;
        }
    }
    bound
}

/// Places and factions any line names, and the setting's (`setting`, normalized): what a larger
/// place is part of.
fn place_names(lines: &[LineNames], setting: &BTreeSet<String>) -> BTreeSet<String> {
    lines
        .iter()
        .flat_map(|l| &l.affiliations)
        .map(|s| normalize_str(s))
        .chain(setting.iter().cloned())
        .filter(|k| k.chars().count() >= 2)
        .collect()
}

/// The grade of a chapter's leaks: the gate's own type, so the record it reads says the same.
pub use novel_core::gate::LeakRisk;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LeakHit {
    pub entity: ForeignEntity,
    pub occurrences: Vec<Span>,
    /// Occurrences outside dialogue quotes.
    pub in_narration: usize,
    /// Occurrences standing where a name stands (all of them for names of 3+ characters).
    pub at_boundary: usize,
    /// Occurrences both outside dialogue and at a name boundary.
    pub narration_at_boundary: usize,
    /// This finding's grade (see the module note).
    pub risk: LeakRisk,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LeakReport {
    pub risk: LeakRisk,
    pub hits: Vec<LeakHit>,
}

/// Leftmost-longest matches of `names` in `text` that stand where a name stands, each name
/// once, in order of first appearance. For reading names out of a memory file: 苏婉儿 there
/// is 苏婉儿, not 苏婉.
pub fn names_in(text: &str, names: &[String]) -> Vec<String> {
    let doc = Document::new(text);
    let keys: Vec<String> = names.iter().map(|n| normalize_str(n)).collect();
    let mut found: Vec<String> = Vec::new();
    for (k, span) in scan(&doc, &keys) {
        if !found.contains(&names[k]) && at_boundary(&doc, span) {
            found.push(names[k].clone());
        }
    }
    found
}

/// Leftmost-longest matches (names of 2+ characters), as (key index, span), outside markup.
fn scan(doc: &Document, keys: &[String]) -> Vec<(usize, Span)> {
    let usable: Vec<usize> = (0..keys.len())
        .filter(|&i| keys[i].chars().count() >= 2)
        .collect();
    if usable.is_empty() {
        return Vec::new();
    }
    let ac = AhoCorasick::builder()
        .match_kind(MatchKind::LeftmostLongest)
        .build(usable.iter().map(|&i| &keys[i]))
        .expect("names are short literals");
    ac.find_iter(doc.text())
        .filter_map(|m| {
            let start = doc.char_of(m.start());
            (!doc.is_markup(start)).then(|| {
                (
                    usable[m.pattern().as_usize()],
                    Span {
                        start,
                        end: doc.char_of(m.end()),
                    },
                )
            })
        })
        .collect()
}

fn at_boundary(doc: &Document, span: Span) -> bool {
    span.end - span.start >= 3 || at_name_boundary(doc.chars(), span.start, span.end)
}

/// Finds the foreign names in `doc` (longest name first, each occurrence once) and grades the
/// risk. `others` are the names that are not foreign (this line's own, every registered
/// name): a foreign name inside one of them is not an occurrence.
pub fn check_leak(doc: &Document, foreign: &[ForeignEntity], others: &[String]) -> LeakReport {
    let mut keys: Vec<String> = foreign.iter().map(|e| normalize_str(&e.name)).collect();
    for o in others {
        let k = normalize_str(o);
        if !keys.contains(&k) {
            keys.push(k);
        }
    }
    let mut hits: Vec<LeakHit> = Vec::new();
    for (k, span) in scan(doc, &keys) {
        let Some(entity) = foreign.get(k) else {
            continue; // a name that is not foreign won the match
        };
        let narration = !doc.in_dialogue(span.start);
        let bounded = at_boundary(doc, span);
        let i = hits
            .iter()
            .position(|h| h.entity == *entity)
            .unwrap_or_else(|| {
                hits.push(LeakHit {
                    entity: entity.clone(),
                    occurrences: Vec::new(),
                    in_narration: 0,
                    at_boundary: 0,
                    narration_at_boundary: 0,
                    risk: LeakRisk::Low,
                });
                hits.len() - 1
            });
        let hit = &mut hits[i];
        hit.occurrences.push(span);
        hit.in_narration += usize::from(narration);
        hit.at_boundary += usize::from(bounded);
        hit.narration_at_boundary += usize::from(narration && bounded);
    }
    // In narration where a name stands: another line's POV character or its own faction is
    // high on its own; its people are high when two or more of them are there.
    let in_story = |h: &LeakHit| h.narration_at_boundary > 0;
    let people = hits
        .iter()
        .filter(|h| h.entity.kind != EntityKind::Faction && in_story(h))
        .count();
    for h in &mut hits {
        let high = in_story(h) && (h.entity.kind != EntityKind::MemoryName || people >= 2);
        h.risk = if high { LeakRisk::High } else { LeakRisk::Low };
    }
    let risk = hits
        .iter()
        .map(|h| h.risk)
        .max_by_key(|r| *r as u8)
        .unwrap_or(LeakRisk::None);
    LeakReport { risk, hits }
}

/// A foreign name found in the chapter, as reported (`cross_references`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct LeakFinding {
    pub name: String,
    /// The storyline the entity belongs to.
    pub storyline: String,
    pub kind: EntityKind,
    /// This finding's grade: only `high` blocks the gate.
    pub risk: LeakRisk,
    pub count: usize,
    pub in_narration: usize,
    pub at_boundary: usize,
    /// Where the entity is made that line's: its entry in `storylines/storylines.json`
    /// (`pov_characters`, `affiliated_factions`) or the line of its `memory.md`.
    pub defined_in: PlanRef,
    /// The first chapter plan of that line that names it (contract or outline block), if any.
    pub planned_in: Option<PlanRef>,
    pub evidence: Vec<Evidence>,
}

/// A place in a project file: a JSON pointer or a line.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PlanRef {
    pub file: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pointer: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub chapter: Option<u32>,
}

impl PlanRef {
    fn of(p: &PlanText) -> PlanRef {
        PlanRef {
            file: p.file.clone(),
            pointer: p.pointer.clone(),
            line: p.line,
            chapter: p.chapter,
        }
    }

    /// `file:line`, `file /pointer`, with the chapter: for people.
    pub fn shown(&self) -> String {
        let mut s = match (self.line, &self.pointer) {
            (Some(l), _) => format!("{}:{l}", self.file),
            (None, Some(p)) if !p.is_empty() => format!("{} {p}", self.file),
            _ => self.file.clone(),
        };
        if let Some(c) = self.chapter {
            s.push_str(&format!("（第 {c} 章）"));
        }
        s
    }
}

/// The leak check of one chapter (the `--json` data of `novel check leak`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LeakAssessment {
    pub chapter: u32,
    pub path: String,
    pub storyline_id: String,
    pub converging_with: Vec<String>,
    pub leak_risk: LeakRisk,
    pub cross_references: Vec<LeakFinding>,
    /// How many names were foreign to this chapter's line.
    pub foreign_entities: usize,
}

/// The leak checks of a range of chapters (the reviews): the chapters at high and at low risk,
/// and each chapter's assessment in brief.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct LeakSummary {
    pub high: Vec<u32>,
    pub low: Vec<u32>,
    pub chapters: Vec<ChapterLeak>,
}

/// One chapter of a [`LeakSummary`].
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ChapterLeak {
    pub chapter: u32,
    pub storyline_id: String,
    pub leak_risk: LeakRisk,
    pub cross_references: Vec<LeakFinding>,
}

impl LeakSummary {
    /// Counts chapter `a.chapter` in by its risk.
    pub fn push(&mut self, a: LeakAssessment) {
        match a.leak_risk {
            LeakRisk::High => self.high.push(a.chapter),
            LeakRisk::Low => self.low.push(a.chapter),
            LeakRisk::None => {}
        }
        self.chapters.push(ChapterLeak {
            chapter: a.chapter,
            storyline_id: a.storyline_id,
            leak_risk: a.leak_risk,
            cross_references: a.cross_references,
        });
    }
}

/// The names of `who` (a character slug, display name or alias, or a bare Chinese name): every
/// name of the characters it denotes.
fn names_of(known: &[KnownName], who: &str) -> Vec<String> {
    let ids: BTreeSet<&str> = known
        .iter()
        .filter(|k| k.entity == who || k.display == who || k.name == who)
        .map(|k| k.entity.as_str())
        .collect();
    let mut out: Vec<String> = known
        .iter()
        .filter(|k| ids.contains(k.entity.as_str()) && !k.entity.starts_with("storyline:"))
        .map(|k| k.name.clone())
        .collect();
    if out.is_empty() && !novel_core::model::is_slug(who) {
        out.push(who.to_string());
    }
    out
}

/// What each storyline names: its POV characters' names, its affiliations, and the registered
/// people its memory names (longest match first: 苏婉儿 in a memory is not 苏婉).
fn line_names(s: &LeakSources, known: &[KnownName]) -> Vec<LineNames> {
    let people: Vec<String> = known
        .iter()
        .filter(|k| !k.entity.starts_with("storyline:"))
        .map(|k| k.name.clone())
        .collect();
    s.storylines
        .storylines
        .iter()
        .zip(s.memories.iter().chain(std::iter::repeat(&String::new())))
        .map(|(line, memory)| LineNames {
            id: line.id.clone(),
            pov: line
                .pov_characters
                .iter()
                .flat_map(|who| names_of(known, who))
                .collect(),
            affiliations: line.affiliated_factions.clone(),
            memory_people: names_in(memory, &people),
            memory: memory.clone(),
        })
        .collect()
}

/// The names of the characters this chapter's line shares with others (`bridges`).
fn shared_names(s: &LeakSources, known: &[KnownName]) -> Vec<String> {
    let mut shared = Vec::new();
    for r in &s.storylines.relationships {
        if r.from == s.storyline || r.to == s.storyline {
            for who in &r.bridges.shared_characters {
                shared.extend(names_of(known, who));
            }
        }
    }
    shared
}

/// Where entity `e` is made its line's: the `storylines.json` entry, or the memory line.
fn defined_in(s: &LeakSources, known: &[KnownName], e: &ForeignEntity) -> PlanRef {
    let at = |pointer: String| PlanRef {
        file: "storylines/storylines.json".to_string(),
        pointer: Some(pointer),
        line: None,
        chapter: None,
    };
    let Some((i, line)) = s
        .storylines
        .storylines
        .iter()
        .enumerate()
        .find(|(_, l)| l.id == e.storyline)
    else {
        return at(String::new());
    };
    match e.kind {
        EntityKind::PovCharacter => {
            let j = line
                .pov_characters
                .iter()
                .position(|who| names_of(known, who).contains(&e.name))
                .unwrap_or(0);
            at(format!("/storylines/{i}/pov_characters/{j}"))
        }
        EntityKind::Faction => {
            let j = line
                .affiliated_factions
                .iter()
                .position(|a| *a == e.name)
                .unwrap_or(0);
            at(format!("/storylines/{i}/affiliated_factions/{j}"))
        }
        EntityKind::MemoryName => {
            let memory = s.memories.get(i).map(String::as_str).unwrap_or("");
            let line_no = memory
                .find(e.name.as_str())
                .map(|b| memory[..b].matches('\n').count() + 1);
            PlanRef {
                file: format!("storylines/{}/memory.md", e.storyline),
                pointer: None,
                line: line_no,
                chapter: None,
            }
        }
    }
}

/// The cross-storyline leak check of one chapter over its sources (see the module note).
pub fn assess(s: &LeakSources) -> LeakAssessment {
    let known = known_names(&s.names);
    let lines = line_names(s, &known);
    let shared = shared_names(s, &known);
    let setting = entity_names(&s.setting);
    let plans = Plans::of(&s.plan, &s.line_plans);
    let foreign = foreign_entities(
        &lines,
        &s.storyline,
        &s.converging,
        &shared,
        &setting,
        &plans,
    );
    // Every name that is not foreign takes part in the longest match, so a foreign name
    // inside one of them (苏婉 in 苏婉儿) is not counted.
    let mut others: Vec<String> = lines
        .iter()
        .flat_map(|l| l.pov.iter().chain(&l.affiliations).chain(&l.memory_people))
        .cloned()
        .collect();
    others.extend(shared);
    others.extend(known.iter().map(|k| k.name.clone()));
    others.extend(setting);
    others.retain(|o| !foreign.iter().any(|f| f.name == *o));
    others.sort();
    others.dedup();

    let doc = Document::new(&s.text);
    let report = check_leak(&doc, &foreign, &others);
    let cross_references = report
        .hits
        .into_iter()
        .map(|h| {
            let k = normalize_str(&h.entity.name);
            let planned_in = s
                .line_plans
                .iter()
                .find(|p| {
                    p.storyline.as_deref() == Some(h.entity.storyline.as_str())
                        && normalize_str(&p.text).contains(k.as_str())
                })
                .map(PlanRef::of);
            LeakFinding {
                count: h.occurrences.len(),
                in_narration: h.in_narration,
                at_boundary: h.at_boundary,
                risk: h.risk,
                defined_in: defined_in(s, &known, &h.entity),
                planned_in,
                evidence: h
                    .occurrences
                    .iter()
                    .map(|o| Evidence::of(&doc, *o))
                    .collect(),
                name: h.entity.name,
                storyline: h.entity.storyline,
                kind: h.entity.kind,
            }
        })
        .collect();
    LeakAssessment {
        chapter: s.chapter,
        path: s.path.clone(),
        storyline_id: s.storyline.clone(),
        converging_with: s.converging.clone(),
        leak_risk: report.risk,
        cross_references,
        foreign_entities: foreign.len(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two lines: 陈默 (main) and 姜望 (jiang, 青云门), 苏婉 shared through `bridges`.
    fn sources(text: &str, converging: &[&str]) -> LeakSources {
        let line = |id: &str, pov: &str, factions: &[&str]| {
            serde_json::json!({"id": id, "name": id, "type": "main_arc", "scope": "novel",
                "status": "active", "pov_characters": [pov], "affiliated_factions": factions})
        };
        let storylines = serde_json::from_value(serde_json::json!({
            "storylines": [line("main", "chen-mo", &[]), line("jiang", "jiang-wang", &["青云门"])],
            "relationships": [{"from": "main", "to": "jiang", "type": "parallel",
                "bridges": {"shared_characters": ["su-wan"]}}],
        }))
        .unwrap();
        let character = |id: &str, name: &str| {
            serde_json::from_value(serde_json::json!({"id": id, "display_name": name})).unwrap()
        };
        LeakSources {
            chapter: 3,
            path: "chapters/chapter-003.md".into(),
            text: text.into(),
            storyline: "main".into(),
            storylines,
            memories: vec![String::new(), "苏婉来过。".into()],
            converging: converging.iter().map(|s| s.to_string()).collect(),
            names: novel_core::text_sources::NameSources {
                characters: vec![
                    character("chen-mo", "陈默"),
                    character("jiang-wang", "姜望"),
                    character("su-wan", "苏婉"),
                ],
                storylines: None,
            },
            setting: Default::default(),
            plan: Vec::new(),
            line_plans: Vec::new(),
        }
    }

    #[test]
    fn assess_reports_another_lines_pov_in_narration_as_high() {
        let a = assess(&sources("陈默推开门。姜望站在门外。", &[]));
        assert_eq!(a.leak_risk, LeakRisk::High);
        assert_eq!(a.cross_references.len(), 1);
        let f = &a.cross_references[0];
        assert_eq!(
            (f.name.as_str(), f.kind, f.count),
            ("姜望", EntityKind::PovCharacter, 1)
        );
        assert_eq!((f.evidence[0].line, f.evidence[0].col), (1, 7));
    }

    #[test]
    fn assess_spares_shared_characters_and_converging_lines() {
        let shared = assess(&sources("苏婉站在门外。", &[]));
        assert_eq!(shared.leak_risk, LeakRisk::None);
        let converging = assess(&sources("姜望站在门外，青云门的人也来了。", &["jiang"]));
        assert_eq!(converging.leak_risk, LeakRisk::None);
        assert_eq!(converging.converging_with, vec!["jiang".to_string()]);
        assert_eq!(converging.foreign_entities, 0);
    }

    fn foreign() -> Vec<ForeignEntity> {
        let e = |name: &str, kind| ForeignEntity {
            name: name.into(),
            storyline: "jiangwang".into(),
            kind,
        };
        vec![
            e("姜望", EntityKind::PovCharacter),
            e("青云门", EntityKind::Faction),
            e("黑石", EntityKind::MemoryName),
            e("老刘", EntityKind::MemoryName),
        ]
    }

    #[test]
    fn leak_table() {
        let cases = [
            ("陈默推开门，屋里没人。", LeakRisk::None, 0),
            ("「听说黑石那边出事了。」", LeakRisk::Low, 1),
            ("黑石镇的雨还没停。", LeakRisk::Low, 1),
            ("「姜望也来了？」", LeakRisk::Low, 1),
            ("姜望站在门外。", LeakRisk::High, 1),
            ("他认出那是青云门的人。", LeakRisk::High, 1),
            // Two of its people, but only in dialogue: talk about the other line, not a leak.
            ("「黑石的老刘说的。」", LeakRisk::Low, 2),
            ("黑石和老刘都来了。", LeakRisk::High, 2),
            ("ＡＢ姜望", LeakRisk::High, 1),
        ];
        for (text, risk, n) in cases {
            let r = check_leak(&Document::new(text), &foreign(), &[]);
            assert_eq!((r.risk, r.hits.len()), (risk, n), "{text}");
        }
    }

    #[test]
    fn substrings_are_not_leaks() {
        let e = |name: &str, kind| ForeignEntity {
            name: name.into(),
            storyline: "jiangwang".into(),
            kind,
        };
        let foreign = vec![
            e("林枫", EntityKind::PovCharacter),
            e("苏婉", EntityKind::MemoryName),
        ];
        // This line's POV 苏婉儿 and a registered 林枫树 someone else owns.
        let others = ["苏婉儿".to_string(), "陈默".to_string()];
        // (text, risk, hits, why)
        let cases: [(&str, LeakRisk, usize, &str); 7] = [
            (
                "陈默走在前面，苏婉儿跟在后面，看着山林枫树。",
                LeakRisk::Low,
                1,
                "苏婉儿 是本线的人；山林枫树 中的林枫不在名字位置，只算 low",
            ),
            ("苏婉儿跟在后面。", LeakRisk::None, 0, "更长的本线名字胜出"),
            ("山林枫树。", LeakRisk::Low, 1, "无边界的命中只算 low"),
            ("林枫站在门外。", LeakRisk::High, 1, "外线 POV 在叙述中"),
            (
                "他看了林枫一眼。",
                LeakRisk::High,
                1,
                "前接「了」后接「一」",
            ),
            ("「苏婉呢？」", LeakRisk::Low, 1, "对话中的记忆名字"),
            (
                "苏婉说完，林枫点了点头。",
                LeakRisk::High,
                2,
                "两个有边界的外线名字",
            ),
        ];
        for (text, risk, n, why) in cases {
            let r = check_leak(&Document::new(text), &foreign, &others);
            assert_eq!((r.risk, r.hits.len()), (risk, n), "{text}: {why}");
        }
    }

    /// Two lines as a hand-written book sets them up: 陈默's main line and 林枫's sect line,
    /// bound to 青云门 and to the city 魔都外城 where both lines live.
    fn book() -> Vec<LineNames> {
        let v = |xs: &[&str]| xs.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        vec![
            LineNames {
                id: "main_arc".into(),
                pov: v(&["陈默"]),
                affiliations: v(&["城南派出所"]),
                memory_people: v(&["陆尘"]),
                memory: "陈默在查父亲的旧账，陆尘在帮他。".into(),
            },
            LineNames {
                id: "jiangwang".into(),
                pov: v(&["林枫", "枫哥"]),
                affiliations: v(&["青云门", "魔都外城", "黑石镇"]),
                memory_people: v(&["苏婉", "陆尘"]),
                memory: "林枫拜入青云门，苏婉是他师姐。".into(),
            },
            LineNames {
                id: "haizu".into(),
                pov: v(&["敖青"]),
                affiliations: v(&["黑石镇"]),
                memory_people: Vec::new(),
                memory: String::new(),
            },
        ]
    }

    /// (name, kind) of what may not leak into `current`.
    fn foreign_of(
        lines: &[LineNames],
        current: &str,
        converging: &[&str],
        setting: &[&str],
    ) -> Vec<(String, EntityKind)> {
        let converging: Vec<String> = converging.iter().map(|s| s.to_string()).collect();
        let setting: Vec<String> = setting.iter().map(|s| s.to_string()).collect();
        foreign_entities(
            lines,
            current,
            &converging,
            &[],
            &setting,
            &Plans::default(),
        )
        .into_iter()
        .map(|e| (e.name, e.kind))
        .collect()
    }

    #[test]
    fn affiliation_shared_with_anything_else_is_not_foreign() {
        use EntityKind::*;
        let own = |xs: &[(&str, EntityKind)]| -> Vec<(String, EntityKind)> {
            xs.iter().map(|(n, k)| (n.to_string(), *k)).collect()
        };
        // 黑石镇 is bound to two lines: shared ground, never foreign.
        // 魔都外城 is a place the world documents describe: shared ground.
        assert_eq!(
            foreign_of(&book(), "main_arc", &[], &["魔都外城"]),
            own(&[
                ("敖青", PovCharacter),
                ("林枫", PovCharacter),
                ("枫哥", PovCharacter),
                ("苏婉", MemoryName),
                ("青云门", Faction),
            ]),
            "陆尘 is in this line's memory too; 黑石镇 and 魔都外城 are shared"
        );
        // Nothing else refers to 魔都外城: it is the sect line's alone.
        let names: Vec<String> = foreign_of(&book(), "main_arc", &[], &[])
            .into_iter()
            .map(|(n, _)| n)
            .collect();
        assert!(names.contains(&"魔都外城".to_string()), "{names:?}");
        assert!(!names.contains(&"黑石镇".to_string()), "{names:?}");
        // This line's memory names 青云门: it is this line's ground too.
        let mut lines = book();
        lines[0].memory.push_str("陆尘早年在青云门学过剑。");
        let names: Vec<String> = foreign_of(&lines, "main_arc", &[], &["魔都外城"])
            .into_iter()
            .map(|(n, _)| n)
            .collect();
        assert!(!names.contains(&"青云门".to_string()), "{names:?}");
        // This line's own affiliation is never foreign, whoever else is bound to it.
        lines[0].affiliations.push("青云门".into());
        lines[0].memory.clear();
        let names: Vec<String> = foreign_of(&lines, "main_arc", &[], &[])
            .into_iter()
            .map(|(n, _)| n)
            .collect();
        assert!(!names.contains(&"青云门".to_string()), "{names:?}");
    }

    #[test]
    fn exclusive_people_of_another_line_are_foreign() {
        use EntityKind::*;
        let found = foreign_of(&book(), "main_arc", &[], &["魔都外城", "青云门"]);
        assert_eq!(
            found,
            [
                ("敖青".to_string(), PovCharacter),
                ("林枫".to_string(), PovCharacter),
                ("枫哥".to_string(), PovCharacter),
                ("苏婉".to_string(), MemoryName),
            ],
            "another line's POV (and alias) and the people only its memory names stay foreign"
        );
        // A converging line brings its people in; the third line's POV stays foreign.
        assert_eq!(
            foreign_of(&book(), "main_arc", &["jiangwang"], &["魔都外城", "青云门"]),
            [("敖青".to_string(), PovCharacter)]
        );
        // Characters shared through a bridge are not foreign.
        let found = foreign_entities(
            &book(),
            "main_arc",
            &[],
            &["林枫".into()],
            &[],
            &Plans::default(),
        );
        assert!(found.iter().all(|e| e.name != "林枫"), "{found:?}");
        // The risk a foreign POV character in narration carries is unchanged.
        let foreign = foreign_entities(
            &book(),
            "main_arc",
            &[],
            &[],
            &["魔都外城".into()],
            &Plans::default(),
        );
        let r = check_leak(
            &Document::new("陈默走进魔都外城，林枫站在城门下。"),
            &foreign,
            &["魔都外城".into()],
        );
        assert_eq!((r.risk, r.hits.len()), (LeakRisk::High, 1));
        assert_eq!(r.hits[0].entity.name, "林枫");
    }

    #[test]
    fn names_in_memory_are_read_longest_first() {
        let names: Vec<String> = ["苏婉", "苏婉儿", "林枫", "青云门"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        assert_eq!(
            names_in("苏婉儿拜入青云门。山林枫树。", &names),
            ["苏婉儿", "青云门"]
        );
        assert_eq!(
            names_in("苏婉是师姐，林枫是师弟。", &names),
            ["苏婉", "林枫"]
        );
    }

    /// A plan piece of `line` for chapter `chapter` in `file`.
    fn plan(file: &str, chapter: u32, line: &str, text: &str) -> PlanText {
        PlanText {
            file: file.into(),
            line: Some(5),
            chapter: Some(chapter),
            storyline: Some(line.into()),
            text: text.into(),
            ..PlanText::default()
        }
    }

    /// (name, kind) of what may not leak into a main_arc chapter with `plans`.
    fn foreign_with(plans: &Plans) -> Vec<String> {
        foreign_entities(&book(), "main_arc", &[], &[], &[], plans)
            .into_iter()
            .map(|e| e.name)
            .collect()
    }

    #[test]
    fn what_the_chapters_own_plan_names_is_not_foreign() {
        let none = foreign_with(&Plans::default());
        assert!(none.contains(&"魔都外城".to_string()), "{none:?}");
        assert!(none.contains(&"青云门".to_string()), "{none:?}");
        assert!(none.contains(&"林枫".to_string()), "{none:?}");
        // The contract sends 陈默 to 魔都外城 and has him meet 林枫: both are this chapter's.
        let plans = Plans::of(
            &[plan(
                "volumes/vol-01/chapter-contracts/chapter-003.json",
                3,
                "main_arc",
                "character_states\n陈默\nlocation\n魔都外城\n陈默在城门下撞见林枫",
            )],
            &[],
        );
        let found = foreign_with(&plans);
        assert!(!found.contains(&"魔都外城".to_string()), "{found:?}");
        assert!(!found.contains(&"林枫".to_string()), "{found:?}");
        assert!(
            found.contains(&"枫哥".to_string()),
            "an alias the plan does not name: {found:?}"
        );
        // The planned characters' files name their sect: its outer court is theirs too.
        let mut lines = book();
        lines[1].affiliations.push("青云门外门".into());
        let plans = Plans::of(
            &[plan(
                "characters/active/chen-mo.json",
                3,
                "main_arc",
                "faction\n青云门",
            )],
            &[],
        );
        let found: Vec<String> = foreign_entities(&lines, "main_arc", &[], &[], &[], &plans)
            .into_iter()
            .map(|e| e.name)
            .collect();
        assert!(!found.contains(&"青云门".to_string()), "{found:?}");
        assert!(!found.contains(&"青云门外门".to_string()), "{found:?}");
        assert!(found.contains(&"林枫".to_string()), "{found:?}");
    }

    #[test]
    fn a_place_other_lines_plan_is_shared_ground() {
        // A third line's outline plans a chapter in 魔都外城: shared, never foreign. The sect
        // line's own outline naming 青云门 does not make it shared.
        let plans = Plans {
            own: String::new(),
            lines: vec![
                (Some("haizu".into()), "地点：魔都外城".into()),
                (Some("jiangwang".into()), "地点：青云门".into()),
            ],
        };
        let found = foreign_with(&plans);
        assert!(!found.contains(&"魔都外城".to_string()), "{found:?}");
        assert!(found.contains(&"青云门".to_string()), "{found:?}");
        // This line's other chapters plan 青云门: this line's ground too.
        let plans = Plans {
            own: String::new(),
            lines: vec![(Some("main_arc".into()), "地点：青云门山下".into())],
        };
        assert!(!foreign_with(&plans).contains(&"青云门".to_string()));
    }

    #[test]
    fn each_finding_says_its_risk_owner_and_where_it_was_planned() {
        let mut src = sources("陈默推开门。姜望站在门外。「青云门的人呢？」", &[]);
        src.line_plans = vec![plan(
            "volumes/vol-01/outline.md",
            4,
            "jiang",
            "## 第4章 下山\n- POV：姜望\n- 地点：青云门",
        )];
        let a = assess(&src);
        assert_eq!(a.leak_risk, LeakRisk::High);
        let by_name = |n: &str| a.cross_references.iter().find(|f| f.name == n).unwrap();
        let jiang = by_name("姜望");
        assert_eq!(jiang.risk, LeakRisk::High);
        assert_eq!(jiang.storyline, "jiang");
        assert_eq!(
            jiang.defined_in.pointer.as_deref(),
            Some("/storylines/1/pov_characters/0")
        );
        assert_eq!(
            jiang.planned_in.as_ref().map(PlanRef::shown).as_deref(),
            Some("volumes/vol-01/outline.md:5（第 4 章）")
        );
        // The sect only in dialogue: low, and it does not raise the chapter on its own.
        let sect = by_name("青云门");
        assert_eq!(sect.risk, LeakRisk::Low);
        assert_eq!(
            sect.defined_in.pointer.as_deref(),
            Some("/storylines/1/affiliated_factions/0")
        );
        let a = assess(&sources("「青云门的人呢？」「姜望也来了？」", &[]));
        assert_eq!(a.leak_risk, LeakRisk::Low, "{:?}", a.cross_references);
        // The same chapter, once its contract plans the meeting: nothing is foreign.
        let mut src = sources("陈默推开门。姜望站在门外。", &[]);
        src.plan = vec![plan(
            "volumes/vol-01/chapter-contracts/chapter-003.json",
            3,
            "main",
            "陈默在门外遇见姜望",
        )];
        assert_eq!(assess(&src).leak_risk, LeakRisk::None);
    }
}
