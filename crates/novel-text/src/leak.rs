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
//!   names, or that the setting knows (a location, faction or item of the state, a term of
//!   `world/`) is shared ground — a chapter may walk through it without leaking anything;
//! - nothing at all from a line that converges with this one in this chapter.
//!
//! [`check_leak`] then finds them and grades the risk:
//!
//! - `none`: no foreign name;
//! - `high`: a foreign POV character or faction in narration, or two or more distinct foreign
//!   names — the chapter is writing another line's story (LS-005 forces a revision);
//! - `low`: otherwise (one memory name, or names only inside dialogue, where characters may
//!   talk about what they have heard, or names that do not stand where a name stands).
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

use std::collections::{BTreeMap, BTreeSet};

use aho_corasick::{AhoCorasick, MatchKind};
use serde::Serialize;

use novel_core::text_sources::LeakSources;

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

/// What may not leak into a chapter of `current`: the entities that belong only to another
/// storyline (see the module note), each once with the strongest kind it has, sorted by name.
/// `converging` are the lines that meet `current` in this chapter; `shared` the names of the
/// characters `current` shares with other lines (`bridges.shared_characters`); `setting` the
/// names the setting knows (places, factions and items of the state, terms of `world/`).
pub fn foreign_entities(
    lines: &[LineNames],
    current: &str,
    converging: &[String],
    shared: &[String],
    setting: &[String],
) -> Vec<ForeignEntity> {
    let key = |s: &str| normalize_str(s);
    let mut allowed: BTreeSet<String> = shared.iter().map(|s| key(s)).collect();
    let own = lines.iter().find(|l| l.id == current);
    if let Some(own) = own {
        allowed.extend(
            own.pov
                .iter()
                .chain(&own.affiliations)
                .chain(&own.memory_people)
                .map(|s| key(s)),
        );
    }
    let own_memory = own.map(|l| key(&l.memory)).unwrap_or_default();
    let setting: BTreeSet<String> = setting.iter().map(|s| key(s)).collect();
    // How many lines are bound to each affiliation.
    let mut bound: BTreeMap<String, usize> = BTreeMap::new();
    for l in lines {
        let mine: BTreeSet<String> = l.affiliations.iter().map(|s| key(s)).collect();
        for a in mine {
            *bound.entry(a).or_default() += 1;
        }
    }
    let exclusive_affiliation = |name: &str| {
        let k = key(name);
        !k.is_empty()
            && bound.get(&k).copied().unwrap_or(0) <= 1
            && !setting.contains(&k)
            && !own_memory.contains(k.as_str())
    };

    let mut foreign: BTreeMap<String, ForeignEntity> = BTreeMap::new();
    let mut add = |name: &str, storyline: &str, kind: EntityKind| {
        if name.trim().is_empty() || allowed.contains(&key(name)) {
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
        for name in l.affiliations.iter().filter(|a| exclusive_affiliation(a)) {
            add(name, &l.id, EntityKind::Faction);
        }
        for name in &l.memory_people {
            add(name, &l.id, EntityKind::MemoryName);
        }
    }
    foreign.into_values().collect()
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
                });
                hits.len() - 1
            });
        let hit = &mut hits[i];
        hit.occurrences.push(span);
        hit.in_narration += usize::from(narration);
        hit.at_boundary += usize::from(bounded);
        hit.narration_at_boundary += usize::from(narration && bounded);
    }
    let strong = hits
        .iter()
        .any(|h| h.entity.kind != EntityKind::MemoryName && h.narration_at_boundary > 0);
    let distinct = hits.iter().filter(|h| h.at_boundary > 0).count();
    let risk = if hits.is_empty() {
        LeakRisk::None
    } else if strong || distinct >= 2 {
        LeakRisk::High
    } else {
        LeakRisk::Low
    };
    LeakReport { risk, hits }
}

/// A foreign name found in the chapter, as reported (`cross_references`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct LeakFinding {
    pub name: String,
    pub storyline: String,
    pub kind: EntityKind,
    pub count: usize,
    pub in_narration: usize,
    pub at_boundary: usize,
    pub evidence: Vec<Evidence>,
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

/// The cross-storyline leak check of one chapter over its sources (see the module note).
pub fn assess(s: &LeakSources) -> LeakAssessment {
    let known = known_names(&s.names);
    let lines = line_names(s, &known);
    let shared = shared_names(s, &known);
    let setting = entity_names(&s.setting);
    let foreign = foreign_entities(&lines, &s.storyline, &s.converging, &shared, &setting);
    // Every name that is not foreign takes part in the longest match, so a foreign name
    // inside one of them (苏婉 in 苏婉儿) is not counted.
    let mut others: Vec<String> = lines
        .iter()
        .flat_map(|l| l.pov.iter().chain(&l.affiliations).chain(&l.memory_people))
        .cloned()
        .collect();
    others.extend(shared);
    others.extend(known.into_iter().map(|k| k.name));
    others.extend(setting);
    others.retain(|o| !foreign.iter().any(|f| f.name == *o));
    others.sort();
    others.dedup();

    let doc = Document::new(&s.text);
    let report = check_leak(&doc, &foreign, &others);
    let cross_references = report
        .hits
        .into_iter()
        .map(|h| LeakFinding {
            count: h.occurrences.len(),
            in_narration: h.in_narration,
            at_boundary: h.at_boundary,
            evidence: h
                .occurrences
                .iter()
                .map(|o| Evidence::of(&doc, *o))
                .collect(),
            name: h.entity.name,
            storyline: h.entity.storyline,
            kind: h.entity.kind,
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
            ("「黑石的老刘说的。」", LeakRisk::High, 2),
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
        foreign_entities(lines, current, &converging, &[], &setting)
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
        let found = foreign_entities(&book(), "main_arc", &[], &["林枫".into()], &[]);
        assert!(found.iter().all(|e| e.name != "林枫"), "{found:?}");
        // The risk a foreign POV character in narration carries is unchanged.
        let foreign = foreign_entities(&book(), "main_arc", &[], &[], &["魔都外城".into()]);
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
}
