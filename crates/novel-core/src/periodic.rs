//! The periodic reviews (§8) — 质量简报 every 5 chapters, 一致性检查 every 10, 卷末回顾 in
//! VOL_REVIEW — and which of them the checkpoint calls for. The store marks one due while its
//! report file is missing; the menu and the next step offer it.
//!
//! Layer: model (imports only `model`); `next` and `menu` read it.

use serde::Serialize;

use crate::model::{Checkpoint, OrchestratorState};

/// A periodic review (§8).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ReviewKind {
    /// 质量简报: every 5 chapters.
    Brief,
    /// 一致性检查: every 10 chapters.
    Consistency,
    /// 卷末回顾: in VOL_REVIEW.
    Volume,
}

impl ReviewKind {
    pub fn label(self) -> &'static str {
        match self {
            ReviewKind::Brief => "质量简报",
            ReviewKind::Consistency => "一致性检查",
            ReviewKind::Volume => "卷末回顾",
        }
    }

    pub fn command(self) -> &'static str {
        match self {
            ReviewKind::Brief => "novel review brief",
            ReviewKind::Consistency => "novel review consistency",
            ReviewKind::Volume => "novel review volume",
        }
    }

    /// How many chapters apart a periodic review falls, and how many it looks back over: 5 for
    /// the brief, 10 for the consistency check; `None` for the volume review (once a volume).
    pub const fn every(self) -> Option<u32> {
        match self {
            ReviewKind::Brief => Some(5),
            ReviewKind::Consistency => Some(10),
            ReviewKind::Volume => None,
        }
    }

    /// The chapters a periodic review made after chapter `last` covers: the last
    /// [`every`](Self::every) chapters, from chapter 1 at the earliest (the whole volume for the
    /// volume review, whose range the store finds: `[1, last]` here).
    pub fn window(self, last: u32) -> [u32; 2] {
        let span = self.every().unwrap_or(last);
        [last.saturating_sub(span.saturating_sub(1)).max(1), last]
    }

    /// The contracts a review after chapter `last` checks for continuity: its window and the
    /// next chapter, whose contract the coming chapter is written against.
    pub fn continuity_chapters(self, last: u32) -> [u32; 2] {
        [self.window(last)[0], last.saturating_add(1)]
    }

    /// Whether it can be made after chapter `last`: a periodic review needs a committed
    /// chapter to look back on; the volume review reports on its plan even before one.
    pub fn possible_after(self, last: u32) -> bool {
        last > 0 || self == ReviewKind::Volume
    }

    /// The latest milestone of a periodic review at or before chapter `last` (`0` when none
    /// has been reached, or for the volume review).
    fn milestone(self, last: u32) -> u32 {
        self.every().map_or(0, |n| last - last % n)
    }
}

/// A review the checkpoint calls for; it is due until its report file exists (the store
/// checks, and fills `report`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ReviewDue {
    pub kind: ReviewKind,
    /// The last completed chapter the review covers.
    pub chapter: u32,
    /// The volume (volume reviews only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub volume: Option<u32>,
    pub command: &'static str,
    /// The report file whose absence makes it due (project-relative).
    pub report: String,
}

/// The reviews the checkpoint calls for, before looking for their reports: a brief when the
/// last completed chapter is a multiple of 5, a consistency check at a multiple of 10, the
/// volume review in VOL_REVIEW. `report` is left empty for the store to fill.
pub fn reviews_wanted(cp: &Checkpoint) -> Vec<ReviewDue> {
    let last = cp.last_completed_chapter;
    let mut out = Vec::new();
    let mut want = |kind: ReviewKind, chapter: u32, volume: Option<u32>| {
        out.push(ReviewDue {
            kind,
            chapter,
            volume,
            command: kind.command(),
            report: String::new(),
        })
    };
    // The latest milestone reached: a review stays wanted after the next chapters are written
    // (a batch that ran past chapter 5 still owes its brief) until a report covers it.
    for kind in [ReviewKind::Brief, ReviewKind::Consistency] {
        let milestone = kind.milestone(last);
        if milestone > 0 {
            want(kind, milestone, None);
        }
    }
    if cp.orchestrator_state == OrchestratorState::VolReview {
        want(ReviewKind::Volume, last, Some(cp.current_volume));
    }
    out
}
