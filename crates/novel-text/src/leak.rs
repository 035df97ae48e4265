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
//!   talk about what they have heard).

use aho_corasick::{AhoCorasick, MatchKind};
use serde::Serialize;

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
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LeakReport {
    pub risk: LeakRisk,
    pub hits: Vec<LeakHit>,
}

/// Finds the foreign names in `doc` (longest name first, each occurrence once) and grades the risk.
pub fn check_leak(doc: &Document, foreign: &[ForeignEntity]) -> LeakReport {
    let keys: Vec<String> = foreign.iter().map(|e| normalize_str(&e.name)).collect();
    let usable: Vec<usize> = (0..keys.len())
        .filter(|&i| keys[i].chars().count() >= 2)
        .collect();
    let mut hits: Vec<LeakHit> = Vec::new();
    if !usable.is_empty() {
        let ac = AhoCorasick::builder()
            .match_kind(MatchKind::LeftmostLongest)
            .build(usable.iter().map(|&i| &keys[i]))
            .expect("names are short literals");
        for m in ac.find_iter(doc.text()) {
            let e = usable[m.pattern().as_usize()];
            let start = doc.char_of(m.start());
            if doc.is_markup(start) {
                continue;
            }
            let span = Span {
                start,
                end: doc.char_of(m.end()),
            };
            let narration = usize::from(!doc.in_dialogue(start));
            match hits.iter_mut().find(|h| h.entity == foreign[e]) {
                Some(h) => {
                    h.occurrences.push(span);
                    h.in_narration += narration;
                }
                None => hits.push(LeakHit {
                    entity: foreign[e].clone(),
                    occurrences: vec![span],
                    in_narration: narration,
                }),
            }
        }
    }
    let strong = hits
        .iter()
        .any(|h| h.entity.kind != EntityKind::MemoryName && h.in_narration > 0);
    let risk = if hits.is_empty() {
        LeakRisk::None
    } else if strong || hits.len() >= 2 {
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
            let r = check_leak(&Document::new(text), &foreign());
            assert_eq!((r.risk, r.hits.len()), (risk, n), "{text}");
        }
    }
}
