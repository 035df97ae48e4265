//! The volume plan (PRD §6.5.4–6.5.5, §6.6.2; `docs/orchestration.md` §5–§7) checked against
//! itself and against the story so far: where a volume ends ([`VolumeSpan`]), the L3 contract
//! chain and the contracts against the replayed state ([`continuity`]), the volume check
//! before a volume opens ([`volume`]), and the volume-end cleanup ([`cleanup`]).
//!
//! Pure: the store loads the files and hands them in; every rule returns
//! [`Diagnostic`](crate::diagnostic::Diagnostic)s that name the file and JSON pointer they are
//! about and, where two files disagree, the other one.
//!
//! Layer: views — what the agents and the author are shown (packets, status, reviews, plan checks,
//! drift, cost); the top.

pub mod cleanup;
pub mod continuity;
pub mod volume;

use serde::Serialize;

use crate::diagnostic::pointer_escape as escape;
use crate::model::ChapterContract;

/// Where a volume's chapters run, and which file said so (`docs/orchestration.md` §5).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct VolumeSpan {
    /// `[first, last]`, inclusive.
    pub range: [u32; 2],
    /// `schedule` | `outline` | `contracts` | `settings`.
    pub range_source: &'static str,
}

impl VolumeSpan {
    /// The chapters a volume review covers: the span, and for the volume being written
    /// (`current`) up to chapter `last` when it was written past its plan (第51/50章).
    pub fn reviewed(&self, current: bool, last: u32) -> [u32; 2] {
        let end = if current {
            self.range[1].max(last)
        } else {
            self.range[1]
        };
        [self.range[0], end]
    }
}

/// `range_source` values, in the order they are tried.
pub const SOURCE_SCHEDULE: &str = "schedule";
pub const SOURCE_OUTLINE: &str = "outline";
pub const SOURCE_CONTRACTS: &str = "contracts";
pub const SOURCE_SETTINGS: &str = "settings";

/// `[min, max]` of some chapter numbers (an outline's blocks, the contract files), `None` when
/// there are none.
pub fn span_of(chapters: impl IntoIterator<Item = u32>) -> Option<[u32; 2]> {
    chapters.into_iter().fold(None, |acc, c| match acc {
        None => Some([c, c]),
        Some([a, b]) => Some([a.min(c), b.max(c)]),
    })
}

/// The span `novel.json`'s `chapters_per_volume` gives a volume whose previous volume ends at
/// `previous_end` (0 for the first volume).
pub fn settings_span(previous_end: u32, per_volume: u32) -> Option<[u32; 2]> {
    let first = previous_end.checked_add(1)?;
    let last = previous_end.checked_add(per_volume.max(1))?;
    Some([first, last])
}

/// A JSON pointer from unescaped segments.
pub fn pointer(segments: &[&str]) -> String {
    segments.iter().map(|s| format!("/{}", escape(s))).collect()
}

/// A chapter contract as loaded, with its project-relative file.
#[derive(Debug, Clone, PartialEq)]
pub struct LoadedContract {
    pub chapter: u32,
    pub file: String,
    pub contract: ChapterContract,
}

/// Chapters as compact runs (`31–47、49`), for messages.
pub fn runs(chapters: &[u32]) -> String {
    let mut sorted = chapters.to_vec();
    sorted.sort_unstable();
    sorted.dedup();
    let mut parts: Vec<String> = Vec::new();
    let mut i = 0;
    while i < sorted.len() {
        let start = sorted[i];
        let mut end = start;
        while i + 1 < sorted.len() && sorted[i + 1] == end + 1 {
            i += 1;
            end = sorted[i];
        }
        parts.push(if start == end {
            start.to_string()
        } else {
            format!("{start}–{end}")
        });
        i += 1;
    }
    parts.join("、")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spans_and_pointers() {
        assert_eq!(span_of([12, 3, 7]), Some([3, 12]));
        assert_eq!(span_of(std::iter::empty()), None);
        assert_eq!(settings_span(0, 40), Some([1, 40]));
        assert_eq!(settings_span(40, 40), Some([41, 80]));
        assert_eq!(
            pointer(&["preconditions", "character_states", "陆尘", "a/b"]),
            "/preconditions/character_states/陆尘/a~1b"
        );
        assert_eq!(runs(&[5, 3, 4, 9]), "3–5、9");
    }

    #[test]
    fn the_volume_being_written_is_reviewed_up_to_its_last_chapter() {
        let span = VolumeSpan {
            range: [51, 100],
            range_source: SOURCE_SCHEDULE,
        };
        assert_eq!(span.reviewed(true, 103), [51, 103]);
        assert_eq!(span.reviewed(true, 90), [51, 100]);
        assert_eq!(span.reviewed(false, 130), [51, 100]);
    }
}
