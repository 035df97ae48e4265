//! Cross-storyline entity leaks (PRD §6.6.7 Layer 3, 防串线): names that belong only to other
//! storylines appearing in a chapter of this one.
//!
//! The caller says which names are foreign (the POV characters, affiliated factions and memory
//! names of the other lines, minus what this line shares with them and minus the lines that
//! converge in this chapter); this module finds them and grades the risk:
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

use aho_corasick::{AhoCorasick, MatchKind};
use serde::Serialize;

use crate::names::at_name_boundary;
use crate::normalize::normalize_str;
use crate::segment::{Document, Span};

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum EntityKind {
    /// A POV character of the other line (or one of its aliases).
    PovCharacter,
    /// A faction affiliated with the other line.
    Faction,
    /// A registered name found in the other line's `memory.md`.
    MemoryName,
}

/// A name that belongs to another storyline.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ForeignEntity {
    pub name: String,
    pub storyline: String,
    pub kind: EntityKind,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum LeakRisk {
    None,
    Low,
    High,
}

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
        let hit = match hits.iter().position(|h| h.entity == *entity) {
            Some(i) => &mut hits[i],
            None => {
                hits.push(LeakHit {
                    entity: entity.clone(),
                    occurrences: Vec::new(),
                    in_narration: 0,
                    at_boundary: 0,
                    narration_at_boundary: 0,
                });
                hits.last_mut().expect("just pushed")
            }
        };
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

#[cfg(test)]
mod tests {
    use super::*;

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
