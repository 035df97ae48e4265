//! The periodic reviews as data (PRD §6 Layer 2; `docs/orchestration.md` §8): the quality
//! figures of a window of chapters (average, chapters under the pass threshold and why,
//! recurring low dimensions), the foreshadowing inventory, a volume's foreshadowing
//! completion rate and each storyline's appearances against the volume schedule. Pure: the
//! store gathers scores, evaluations and plans; the CLI adds the text checks it owns (names,
//! leaks, style drift) and writes the report.
//!
//! Layer: views — what the agents and the author are shown (packets, status, reviews, plan checks,
//! drift, cost); the top.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::model::common::{ForeshadowScope, ForeshadowStatus, GateDecision};
use crate::model::settings::GateThresholds;
use crate::model::storyline::{StorylineSchedule, VolumeRole};
use crate::model::{Evaluation, ForeshadowingGlobal, VolumeForeshadowing};
use crate::next::is_overdue;
use crate::status::{Trend, trend};

/// A dimension is low in a chapter when it scores under `gate.polish` (3.5 by default), and
/// recurs when it is low in at least this many chapters of the window.
pub const RECURRING_MIN: usize = 2;

/// Chinese names of the eight dimensions.
pub fn dimension_label(id: &str) -> &'static str {
    match id {
        "plot_logic" => "情节逻辑",
        "character" => "人物塑造",
        "immersion" => "沉浸感",
        "foreshadowing" => "伏笔处理",
        "pacing" => "节奏",
        "style_naturalness" => "文风自然度",
        "emotional_impact" => "情感冲击",
        "storyline_coherence" => "故事线连贯",
        _ => "其他",
    }
}

/// One committed chapter's gate figures.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ChapterScore {
    pub chapter: u32,
    /// The score the gate counted (`null` when the chapter was never scored).
    pub score: Option<f64>,
    pub decision: Option<GateDecision>,
    pub revisions: u32,
    pub force_passed: bool,
}

/// A chapter under the pass threshold, and why (its evaluation).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BelowThreshold {
    pub chapter: u32,
    pub score: f64,
    pub decision: Option<GateDecision>,
    pub issues: Vec<String>,
    pub violations: Vec<String>,
    pub low_dimensions: Vec<String>,
}

/// One dimension over the window.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DimensionSummary {
    pub id: &'static str,
    pub label: &'static str,
    pub average: f64,
    /// Chapters where it scored under the low mark.
    pub low_chapters: Vec<u32>,
}

/// The quality part of every review.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Quality {
    /// `[first, last]` chapter covered.
    pub window: [u32; 2],
    pub chapters: Vec<ChapterScore>,
    pub scored: usize,
    pub average: Option<f64>,
    pub trend: Option<Trend>,
    pub pass_threshold: f64,
    pub low_mark: f64,
    pub below_threshold: Vec<BelowThreshold>,
    pub dimensions: Vec<DimensionSummary>,
    /// Ids of the dimensions low in at least [`RECURRING_MIN`] chapters.
    pub recurring_low: Vec<&'static str>,
    pub revisions: u32,
    pub force_passed: Vec<u32>,
    /// The judges' blacklist suggestions of the window, each phrase once (its first category
    /// and evidence, every chapter that suggested it); the store drops those already listed.
    pub blacklist_suggestions: Vec<SuggestedPhrase>,
}

/// A phrase the judges suggested for the AI blacklist, over the chapters of a review.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SuggestedPhrase {
    pub phrase: String,
    pub category: Option<String>,
    pub chapters: Vec<u32>,
    pub evidence: String,
}

/// The judges' suggestions of `evaluations`, each phrase (trimmed) once, in chapter order.
fn suggestions(evaluations: &BTreeMap<u32, Evaluation>) -> Vec<SuggestedPhrase> {
    let mut out: Vec<SuggestedPhrase> = Vec::new();
    for (n, e) in evaluations {
        for s in &e.blacklist_suggestions {
            let phrase = s.phrase.trim();
            if phrase.chars().count() < 2 {
                continue;
            }
            match out.iter_mut().find(|p| p.phrase == phrase) {
                Some(p) if !p.chapters.contains(n) => p.chapters.push(*n),
                Some(_) => {}
                None => out.push(SuggestedPhrase {
                    phrase: phrase.to_string(),
                    category: s.category.clone(),
                    chapters: vec![*n],
                    evidence: s.evidence.trim().to_string(),
                }),
            }
        }
    }
    out
}

/// The quality figures of `chapters` (in order), with their primary evaluations.
pub fn quality(
    window: [u32; 2],
    chapters: Vec<ChapterScore>,
    evaluations: &BTreeMap<u32, Evaluation>,
    thresholds: &GateThresholds,
) -> Quality {
    let scores: Vec<f64> = chapters.iter().filter_map(|c| c.score).collect();
    let average = (!scores.is_empty()).then(|| scores.iter().sum::<f64>() / scores.len() as f64);
    let low_mark = thresholds.polish;
    let dimensions = dimension_summaries(evaluations, low_mark);
    let recurring_low = dimensions
        .iter()
        .filter(|d| d.low_chapters.len() >= RECURRING_MIN)
        .map(|d| d.id)
        .collect();
    let below_threshold = below(&chapters, evaluations, thresholds);
    Quality {
        window,
        scored: scores.len(),
        average,
        trend: trend(&scores[scores.len().saturating_sub(5)..]),
        pass_threshold: thresholds.pass,
        low_mark,
        below_threshold,
        dimensions,
        recurring_low,
        revisions: chapters.iter().map(|c| c.revisions).sum(),
        blacklist_suggestions: suggestions(evaluations),
        force_passed: chapters
            .iter()
            .filter(|c| c.force_passed)
            .map(|c| c.chapter)
            .collect(),
        chapters,
    }
}

/// Each dimension's mean over the evaluations and the chapters where it was low, in the order
/// of the evaluation model.
fn dimension_summaries(
    evaluations: &BTreeMap<u32, Evaluation>,
    low_mark: f64,
) -> Vec<DimensionSummary> {
    let mut dims: BTreeMap<&'static str, (f64, usize, Vec<u32>)> = BTreeMap::new();
    for (n, e) in evaluations {
        for (id, d) in e.scores.dimensions() {
            let entry = dims.entry(id).or_default();
            entry.0 += d.score;
            entry.1 += 1;
            if d.score < low_mark {
                entry.2.push(*n);
            }
        }
    }
    let order = |id: &str| {
        crate::model::evaluation::DIMENSIONS
            .iter()
            .position(|(d, _)| *d == id)
            .unwrap_or(usize::MAX)
    };
    let mut out: Vec<DimensionSummary> = dims
        .into_iter()
        .map(|(id, (sum, count, low))| DimensionSummary {
            id,
            label: dimension_label(id),
            average: sum / count.max(1) as f64,
            low_chapters: low,
        })
        .collect();
    out.sort_by_key(|d| order(d.id));
    out
}

/// The chapters under the pass threshold, with what their evaluations say.
fn below(
    chapters: &[ChapterScore],
    evaluations: &BTreeMap<u32, Evaluation>,
    thresholds: &GateThresholds,
) -> Vec<BelowThreshold> {
    chapters
        .iter()
        .filter_map(|c| c.score.filter(|s| *s < thresholds.pass).map(|s| (c, s)))
        .map(|(c, score)| {
            let e = evaluations.get(&c.chapter);
            BelowThreshold {
                chapter: c.chapter,
                score,
                decision: c.decision,
                issues: e.map_or_else(Vec::new, |e| e.issues.clone()),
                violations: e.map_or_else(Vec::new, |e| {
                    e.violations
                        .iter()
                        .map(|v| format!("{}：{}", v.rule_id, v.description))
                        .collect()
                }),
                low_dimensions: e.map_or_else(Vec::new, |e| {
                    e.scores
                        .dimensions()
                        .iter()
                        .filter(|(_, d)| d.score < thresholds.polish)
                        .map(|(id, d)| format!("{}（{:.1}）", dimension_label(id), d.score))
                        .collect()
                }),
            }
        })
        .collect()
}

/// An unresolved thread in the inventory.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct OpenThread {
    pub id: String,
    pub description: String,
    pub scope: ForeshadowScope,
    pub status: ForeshadowStatus,
    pub planted_chapter: Option<u32>,
    pub target_resolve_range: Option<[u32; 2]>,
    pub overdue: bool,
}

/// 伏笔盘点.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Inventory {
    pub total: usize,
    pub resolved: usize,
    pub open: Vec<OpenThread>,
    /// Short threads past their range ([`is_overdue`]).
    pub overdue: Vec<String>,
}

pub fn inventory(global: &ForeshadowingGlobal, last_completed: u32) -> Inventory {
    let mut open = Vec::new();
    for t in &global.foreshadowing {
        if t.status == ForeshadowStatus::Resolved {
            continue;
        }
        open.push(OpenThread {
            id: t.id.clone(),
            description: t.description.clone(),
            scope: t.scope,
            status: t.status,
            planted_chapter: t.planted_chapter,
            target_resolve_range: t.target_resolve_range,
            overdue: is_overdue(t.scope, t.status, t.target_resolve_range, last_completed),
        });
    }
    Inventory {
        total: global.foreshadowing.len(),
        resolved: global.foreshadowing.len() - open.len(),
        overdue: open
            .iter()
            .filter(|t| t.overdue)
            .map(|t| t.id.clone())
            .collect(),
        open,
    }
}

/// A volume's foreshadowing completion (伏笔完成率).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Completion {
    /// Threads in the volume's plan.
    pub planned: usize,
    /// Of them, those planned to resolve by the volume's last chapter.
    pub due: usize,
    pub resolved_due: usize,
    /// `resolved_due / due` (`null` when none was due).
    pub rate: Option<f64>,
    /// Planned threads resolved, due or not.
    pub resolved: usize,
    pub unresolved_due: Vec<String>,
}

pub fn completion(
    plan: Option<&VolumeForeshadowing>,
    global: Option<&ForeshadowingGlobal>,
    volume_end: u32,
) -> Completion {
    let resolved = |id: &str| {
        global.is_some_and(|g| {
            g.foreshadowing
                .iter()
                .any(|t| t.id == id && t.status == ForeshadowStatus::Resolved)
        })
    };
    let threads = plan.map_or(&[][..], |p| p.foreshadowing.as_slice());
    let due: Vec<&str> = threads
        .iter()
        .filter(|t| t.target_resolve_range.is_some_and(|[_, e]| e <= volume_end))
        .map(|t| t.id.as_str())
        .collect();
    let resolved_due = due.iter().filter(|id| resolved(id)).count();
    Completion {
        planned: threads.len(),
        due: due.len(),
        resolved_due,
        rate: (!due.is_empty()).then(|| resolved_due as f64 / due.len() as f64),
        resolved: threads.iter().filter(|t| resolved(&t.id)).count(),
        unresolved_due: due
            .iter()
            .filter(|id| !resolved(id))
            .map(|s| s.to_string())
            .collect(),
    }
}

/// One storyline's appearances in a volume against its schedule (故事线节奏).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LineAppearances {
    pub storyline_id: String,
    pub volume_role: Option<VolumeRole>,
    pub target_chapters: Option<u32>,
    pub appearances: u32,
    pub chapters: Vec<u32>,
    /// `appearances − target_chapters`, when there is a target.
    pub versus_target: Option<i64>,
}

/// Every line the schedule lists, then any other line that appeared in `range`.
pub fn line_appearances(
    schedule: Option<&StorylineSchedule>,
    appearances: &BTreeMap<u32, String>,
    range: [u32; 2],
) -> Vec<LineAppearances> {
    let in_range: Vec<(u32, &str)> = appearances
        .range(range[0]..=range[1])
        .map(|(c, l)| (*c, l.as_str()))
        .collect();
    let mut ids: Vec<(String, Option<VolumeRole>, Option<u32>)> = schedule
        .map(|s| {
            s.active_storylines
                .iter()
                .map(|a| {
                    (
                        a.storyline_id.clone(),
                        Some(a.volume_role),
                        a.target_chapters,
                    )
                })
                .collect()
        })
        .unwrap_or_default();
    for (_, l) in &in_range {
        if !ids.iter().any(|(id, _, _)| id == l) {
            ids.push((l.to_string(), None, None));
        }
    }
    ids.into_iter()
        .map(|(id, role, target)| {
            let chapters: Vec<u32> = in_range
                .iter()
                .filter(|(_, l)| *l == id)
                .map(|(c, _)| *c)
                .collect();
            let n = chapters.len() as u32;
            LineAppearances {
                storyline_id: id,
                volume_role: role,
                target_chapters: target,
                appearances: n,
                versus_target: target.map(|t| i64::from(n) - i64::from(t)),
                chapters,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn appearances_against_the_schedule() {
        let schedule: StorylineSchedule = serde_json::from_value(serde_json::json!({
            "volume": 1, "chapter_range": [1, 6], "active_storylines": [
                {"storyline_id": "main_arc", "volume_role": "primary", "target_chapters": 4},
                {"storyline_id": "jinghai_plan", "volume_role": "secondary", "target_chapters": 3}]
        }))
        .unwrap();
        let seen: BTreeMap<u32, String> = [
            (1, "main_arc"),
            (2, "jinghai_plan"),
            (3, "main_arc"),
            (4, "main_arc"),
            (5, "sect_rivalry"),
            (7, "main_arc"),
        ]
        .into_iter()
        .map(|(c, l)| (c, l.to_string()))
        .collect();
        let got = line_appearances(Some(&schedule), &seen, [1, 6]);
        let brief: Vec<(&str, u32, Option<i64>)> = got
            .iter()
            .map(|l| (l.storyline_id.as_str(), l.appearances, l.versus_target))
            .collect();
        assert_eq!(
            brief,
            [
                ("main_arc", 3, Some(-1)),
                ("jinghai_plan", 1, Some(-2)),
                ("sect_rivalry", 1, None)
            ]
        );
    }
}
