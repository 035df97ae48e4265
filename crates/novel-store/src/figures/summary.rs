//! The book's totals from its chapters' figures: 字数 in total and per volume, the scores
//! (average, recent, trend, per volume, the chapters under the pass line), the open and overdue
//! foreshadowing.

use std::collections::BTreeMap;

use novel_core::model::ForeshadowingGlobal;
use novel_core::model::common::{ForeshadowStatus, GateDecision};
use novel_core::next::is_overdue;
use novel_core::status::{Trend, trend};
use serde::Serialize;

use super::chapter::ChapterFigures;

/// How many recent scores `status` shows (and takes the trend of).
pub const RECENT_SCORES: usize = 5;

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct VolumeChars {
    pub volume: u32,
    pub chapters: usize,
    pub chars: u64,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Chars {
    /// Platform 字数 of every committed chapter (the `novel count` rule).
    pub total: u64,
    pub per_volume: Vec<VolumeChars>,
    /// Chapters whose 字数 came from counting their text (their log did not record it).
    pub counted_from_text: usize,
}

/// 字数 in total and per volume.
pub fn chars(chapters: &[ChapterFigures], counted_from_text: usize) -> Chars {
    let mut per_volume: BTreeMap<u32, (usize, u64)> = BTreeMap::new();
    for f in chapters {
        let e = per_volume.entry(f.volume).or_default();
        e.0 += 1;
        e.1 += f.chars.unwrap_or(0);
    }
    Chars {
        total: chapters.iter().map(|f| f.chars.unwrap_or(0)).sum(),
        per_volume: per_volume
            .into_iter()
            .map(|(volume, (chapters, chars))| VolumeChars {
                volume,
                chapters,
                chars,
            })
            .collect(),
        counted_from_text,
    }
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ScoredChapter {
    pub chapter: u32,
    pub score: f64,
    pub decision: Option<GateDecision>,
    pub revisions: u32,
    pub force_passed: bool,
    /// How much of the draft's narration StyleRefiner changed (its last `stage refined`), when
    /// measured.
    pub edit_ratio: Option<f64>,
}

/// One volume's scores.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct VolumeScores {
    pub volume: u32,
    pub scored: usize,
    pub average: Option<f64>,
    /// Chapters under the pass line.
    pub below_pass: usize,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Scores {
    /// Mean of every committed chapter's counted score.
    pub average: Option<f64>,
    pub scored_chapters: usize,
    /// The last [`RECENT_SCORES`], oldest first.
    pub recent: Vec<ScoredChapter>,
    pub trend: Option<Trend>,
    /// `novel.json` `gate.pass`.
    pub pass: f64,
    /// The chapters whose score is under the pass line, in order.
    pub below_pass: Vec<u32>,
    pub per_volume: Vec<VolumeScores>,
}

fn mean(xs: &[f64]) -> Option<f64> {
    (!xs.is_empty()).then(|| xs.iter().sum::<f64>() / xs.len() as f64)
}

/// The scores of the committed chapters.
pub fn scores(chapters: &[ChapterFigures], pass: f64) -> Scores {
    let scored: Vec<ScoredChapter> = chapters
        .iter()
        .filter_map(|f| {
            f.score.map(|score| ScoredChapter {
                chapter: f.chapter,
                score,
                decision: f.decision,
                revisions: f.revisions,
                force_passed: f.force_passed,
                edit_ratio: f.edit_ratio,
            })
        })
        .collect();
    let all: Vec<f64> = scored.iter().map(|s| s.score).collect();
    let recent: Vec<ScoredChapter> = scored[scored.len().saturating_sub(RECENT_SCORES)..].to_vec();
    let mut per_volume: BTreeMap<u32, Vec<f64>> = BTreeMap::new();
    for f in chapters {
        let v = per_volume.entry(f.volume).or_default();
        v.extend(f.score);
    }
    Scores {
        average: mean(&all),
        scored_chapters: scored.len(),
        trend: trend(&recent.iter().map(|s| s.score).collect::<Vec<_>>()),
        recent,
        pass,
        below_pass: scored
            .iter()
            .filter(|s| s.score < pass)
            .map(|s| s.chapter)
            .collect(),
        per_volume: per_volume
            .into_iter()
            .map(|(volume, xs)| VolumeScores {
                volume,
                scored: xs.len(),
                average: mean(&xs),
                below_pass: xs.iter().filter(|s| **s < pass).count(),
            })
            .collect(),
    }
}

#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Foreshadowing {
    /// Not resolved.
    pub open: usize,
    /// Short threads past their range (`novel_core::next::is_overdue`), by id.
    pub overdue: Vec<String>,
}

/// Open foreshadowing, and the ids overdue at chapter `last` (sorted).
pub fn foreshadowing(global: Option<&ForeshadowingGlobal>, last: u32) -> Foreshadowing {
    let mut out = Foreshadowing::default();
    for f in global.map_or(&[][..], |g| &g.foreshadowing) {
        if f.status != ForeshadowStatus::Resolved {
            out.open += 1;
        }
        if is_overdue(f.scope, f.status, f.target_resolve_range, last) {
            out.overdue.push(f.id.clone());
        }
    }
    out.overdue.sort();
    out
}
