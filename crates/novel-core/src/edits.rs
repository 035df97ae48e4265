//! How much StyleRefiner changed a draft (PRD §5.7: 修改量控制在原文 15% 以内), measured by
//! `novel chapter stage refined` against the draft `stage drafted` kept, not taken from the
//! refiner's word.
//!
//! The texts arrive segmented ([`Segmented`]: prose paragraphs, each character marked as
//! dialogue or narration — `novel_text` does that, with the project's normalisation).
//! Paragraphs are aligned first ([`similar`], Myers), then the characters of each changed
//! group. A changed stretch counts `max(deleted, inserted)` characters — a word replaced by a
//! longer one counts the longer, a sentence added counts its length — attributed to narration or
//! dialogue by the draft's characters (an insertion by its own), and to the draft paragraph it
//! starts in. Narration and dialogue are measured apart, each against its own size in the draft:
//! the refiner may rework narration, dialogue only where lint points.
//!
//! Layer: ground (the lowest: no file model, no rules).

use serde::Serialize;
use similar::{Algorithm, DiffOp, capture_diff_slices};

/// A paragraph group larger than this (characters, both sides) is not diffed character by
/// character: all of it counts as changed (the bound keeps a rewritten long chapter from taking
/// seconds).
const CHAR_DIFF_LIMIT: usize = 20_000;
/// How many paragraphs the report names.
pub const WORST: usize = 3;
/// Characters of a paragraph shown in the report.
const EXCERPT: usize = 40;

/// A text as the measure reads it: prose paragraphs (headings and blank lines left out), each
/// a list of (character, inside dialogue), whitespace removed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Segmented {
    pub paragraphs: Vec<Vec<(char, bool)>>,
    /// Each paragraph as written (what the report quotes); may be empty, then the compared
    /// characters are quoted.
    pub originals: Vec<String>,
}

impl Segmented {
    /// Paragraph `i` as the report quotes it.
    fn shown(&self, i: usize) -> String {
        match self.originals.get(i) {
            Some(o) => cut(o),
            None => cut(&self.paragraphs[i]
                .iter()
                .map(|(c, _)| *c)
                .collect::<String>()),
        }
    }
}

/// Changed characters against the draft's size, for narration or dialogue.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct Share {
    pub changed: usize,
    pub chars: usize,
    /// `changed / chars`, 0 when the draft has none.
    pub ratio: f64,
}

impl Share {
    fn new(changed: usize, chars: usize) -> Self {
        Share {
            changed,
            chars,
            ratio: if chars == 0 {
                0.0
            } else {
                changed as f64 / chars as f64
            },
        }
    }
}

/// One of the most changed paragraphs (1-based, counted from the first prose paragraph, as the
/// judge's targets count them).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ParagraphEdit {
    pub paragraph: usize,
    pub changed: usize,
    pub chars: usize,
    pub before: String,
    pub after: String,
}

/// The measure of one refinement.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct EditReport {
    pub narration: Share,
    pub dialogue: Share,
    /// Both together.
    pub total: Share,
    /// The most changed paragraphs, most changed first (at most [`WORST`]).
    pub worst: Vec<ParagraphEdit>,
}

impl EditReport {
    /// The share over `cap`, if any (narration first).
    pub fn over(&self, cap: f64) -> Option<(&'static str, Share)> {
        let over = |s: &Share| s.ratio > cap + 1e-9;
        if over(&self.narration) {
            Some(("叙述", self.narration))
        } else if over(&self.dialogue) {
            Some(("对话", self.dialogue))
        } else {
            None
        }
    }
}

/// A ratio as people read it: `12.5%`.
pub fn percent(ratio: f64) -> String {
    let p = (ratio * 1000.0).round() / 10.0;
    if p.fract() == 0.0 {
        format!("{p:.0}%")
    } else {
        format!("{p:.1}%")
    }
}

fn cut(text: &str) -> String {
    let mut s: String = text.chars().take(EXCERPT).collect();
    if text.chars().nth(EXCERPT).is_some() {
        s.push('…');
    }
    s
}

/// What one aligned stretch changed.
#[derive(Default)]
struct Tally {
    narration: usize,
    dialogue: usize,
    per_paragraph: Vec<usize>,
}

impl Tally {
    /// A changed stretch: `deleted` draft characters (with their paragraph), `inserted` new
    /// ones, the paragraph an insertion lands in.
    fn stretch(&mut self, deleted: &[(char, bool, usize)], inserted: &[(char, bool)], at: usize) {
        let (del_d, del_n) = split(deleted.iter().map(|(_, d, _)| *d));
        let (ins_d, ins_n) = split(inserted.iter().map(|(_, d)| *d));
        let (d, n) = (del_d.max(ins_d), del_n.max(ins_n));
        self.dialogue += d;
        self.narration += n;
        let para = deleted.first().map_or(at, |(_, _, p)| *p);
        if let Some(slot) = self.per_paragraph.get_mut(para) {
            *slot += d + n;
        }
    }
}

/// (dialogue, narration) counts of a run of flags.
fn split(flags: impl Iterator<Item = bool>) -> (usize, usize) {
    flags.fold((0, 0), |(d, n), f| if f { (d + 1, n) } else { (d, n + 1) })
}

/// Measures `refined` against `draft`.
pub fn measure(draft: &Segmented, refined: &Segmented) -> EditReport {
    let a = &draft.paragraphs;
    let b = &refined.paragraphs;
    let a_keys: Vec<String> = a
        .iter()
        .map(|p| p.iter().map(|(c, _)| *c).collect())
        .collect();
    let b_keys: Vec<String> = b
        .iter()
        .map(|p| p.iter().map(|(c, _)| *c).collect())
        .collect();
    let mut tally = Tally {
        per_paragraph: vec![0; a.len()],
        ..Tally::default()
    };
    let last = a.len().saturating_sub(1);
    let mut after: Vec<String> = (0..a.len()).map(|i| draft.shown(i)).collect();
    for op in capture_diff_slices(Algorithm::Myers, &a_keys, &b_keys) {
        let Some((old, new)) = changed(op) else {
            continue;
        };
        let old_chars: Vec<(char, bool, usize)> = old
            .clone()
            .flat_map(|i| a[i].iter().map(move |(c, d)| (*c, *d, i)))
            .collect();
        let new_chars: Vec<(char, bool)> = new.clone().flat_map(|i| b[i].iter().copied()).collect();
        let at = old.start.min(last);
        let shown = cut(&new.clone().map(|i| refined.shown(i)).collect::<String>());
        for i in old.clone() {
            after[i] = shown.clone();
        }
        if old_chars.len() + new_chars.len() > CHAR_DIFF_LIMIT
            || old_chars.is_empty()
            || new_chars.is_empty()
        {
            tally.stretch(&old_chars, &new_chars, at);
            continue;
        }
        let ok: Vec<char> = old_chars.iter().map(|(c, _, _)| *c).collect();
        let nk: Vec<char> = new_chars.iter().map(|(c, _)| *c).collect();
        for op in capture_diff_slices(Algorithm::Myers, &ok, &nk) {
            let Some((o, n)) = changed(op) else {
                continue;
            };
            // An insertion lands in the paragraph of the draft character it follows.
            let at = old_chars
                .get(o.start.min(old_chars.len() - 1))
                .map_or(at, |(_, _, p)| *p);
            tally.stretch(&old_chars[o], &new_chars[n], at);
        }
    }
    let (dia, nar) = split(a.iter().flatten().map(|(_, d)| *d));
    EditReport {
        narration: Share::new(tally.narration, nar),
        dialogue: Share::new(tally.dialogue, dia),
        total: Share::new(tally.narration + tally.dialogue, nar + dia),
        worst: worst(&tally.per_paragraph, draft, &after),
    }
}

/// The old and new ranges a diff operation changes (`None`: equal).
fn changed(op: DiffOp) -> Option<(std::ops::Range<usize>, std::ops::Range<usize>)> {
    Some(match op {
        DiffOp::Equal { .. } => return None,
        DiffOp::Delete {
            old_index, old_len, ..
        } => (old_index..old_index + old_len, 0..0),
        DiffOp::Insert {
            old_index,
            new_index,
            new_len,
        } => (old_index..old_index, new_index..new_index + new_len),
        DiffOp::Replace {
            old_index,
            old_len,
            new_index,
            new_len,
        } => (
            old_index..old_index + old_len,
            new_index..new_index + new_len,
        ),
    })
}

/// The [`WORST`] most changed paragraphs of the draft (`changed`: characters changed in each;
/// `after`: what each became), most changed first.
fn worst(changed: &[usize], draft: &Segmented, after: &[String]) -> Vec<ParagraphEdit> {
    let mut worst: Vec<ParagraphEdit> = changed
        .iter()
        .enumerate()
        .filter(|(_, c)| **c > 0)
        .map(|(i, c)| ParagraphEdit {
            paragraph: i + 1,
            changed: *c,
            chars: draft.paragraphs[i].len(),
            before: draft.shown(i),
            after: after[i].clone(),
        })
        .collect();
    worst.sort_by(|x, y| {
        y.changed
            .cmp(&x.changed)
            .then(x.paragraph.cmp(&y.paragraph))
    });
    worst.truncate(WORST);
    worst
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Paragraphs split on `\n`; dialogue inside “”.
    fn seg(text: &str) -> Segmented {
        Segmented {
            originals: Vec::new(),
            paragraphs: text
                .lines()
                .filter(|l| !l.trim().is_empty())
                .map(|l| {
                    let mut inside = false;
                    l.chars()
                        .filter(|c| !c.is_whitespace())
                        .map(|c| {
                            let d = inside || c == '“';
                            if c == '“' {
                                inside = true;
                            } else if c == '”' {
                                inside = false;
                            }
                            (c, d || c == '”')
                        })
                        .collect()
                })
                .collect(),
        }
    }

    #[test]
    fn nothing_changed_is_zero() {
        let t = seg("林枫攥紧残玉。\n“走。”他说。");
        let r = measure(&t, &t);
        assert_eq!(r.total.changed, 0);
        assert!(r.worst.is_empty());
        assert!(r.over(0.15).is_none());
    }

    #[test]
    fn a_replaced_phrase_counts_the_longer_side_in_its_paragraph() {
        let a = seg("第一段不动。\n赵天磊眸底闪过一丝阴鸷。\n第三段不动。");
        let b = seg("第一段不动。\n赵天磊把扇子合上了。\n第三段不动。");
        let r = measure(&a, &b);
        // 「眸底闪过一丝阴鸷」(8) → 「把扇子合上了」(6): 8 changed.
        assert_eq!(r.narration.changed, 8);
        assert_eq!(r.dialogue.changed, 0);
        assert_eq!(r.worst[0].paragraph, 2);
        assert_eq!(r.worst[0].after, "赵天磊把扇子合上了。");
    }

    #[test]
    fn narration_and_dialogue_are_measured_apart() {
        let a = seg("他说：“这买卖亏了，亏大了。”");
        let b = seg("他说：“这买卖赚了，赚大了。”");
        let r = measure(&a, &b);
        assert_eq!(r.narration.changed, 0);
        assert_eq!(r.dialogue.changed, 2);
        assert!(r.dialogue.ratio > 0.15);
        assert_eq!(r.over(0.15).unwrap().0, "对话");
    }

    #[test]
    fn added_and_removed_paragraphs_count_whole() {
        let a = seg("甲乙丙丁。\n戊己庚辛。");
        let b = seg("甲乙丙丁。\n戊己庚辛。\n新加的一段有九个字。");
        let r = measure(&a, &b);
        assert_eq!(r.narration.changed, 10);
        assert_eq!(r.worst[0].paragraph, 2);
        let r = measure(&b, &a);
        assert_eq!(r.narration.changed, 10);
        assert_eq!(r.worst[0].paragraph, 3);
    }

    #[test]
    fn percent_reads_naturally() {
        assert_eq!(percent(0.15), "15%");
        assert_eq!(percent(0.3125), "31.3%");
        assert_eq!(percent(0.0), "0%");
    }
}
