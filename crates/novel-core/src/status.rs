//! The figures of `novel status` (PRD §2.4; `docs/orchestration.md` §4) that are rules rather
//! than sums: the one-line headline, the score trend, and each storyline's rhythm against its
//! volume schedule. Pure: the store gathers the numbers.
//!
//! Layer: views — what the agents and the author are shown (packets, status, reviews, plan checks,
//! drift, cost); the top.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::model::storyline::{StorylineSchedule, StorylineStatus, Storylines, VolumeRole};

/// 字数 as the headline writes it: `3120字` under 10,000, else `15.2万字` (one decimal).
pub fn format_chars(total: u64) -> String {
    if total < 10_000 {
        format!("{total}字")
    } else {
        format!("{:.1}万字", total as f64 / 10_000.0)
    }
}

/// The first line of `novel status`: `第2卷 第51/50章（超出） 总15.2万字 均分3.7 未回收伏笔3个`.
/// `volume` is `None` when the checkpoint cannot be read (`第?卷`); `end` is the last chapter of
/// the volume's plan (`第M章` alone when unknown; `（超出）` only past it); `last` is the last
/// completed chapter.
pub fn headline(
    volume: Option<u32>,
    last: u32,
    end: Option<u32>,
    total_chars: u64,
    average: Option<f64>,
    open_foreshadowing: usize,
) -> String {
    let volume = volume.map_or("?".to_string(), |v| v.to_string());
    let chapter = match end {
        Some(e) if last > e => format!("第{last}/{e}章（超出）"),
        Some(e) => format!("第{last}/{e}章"),
        None => format!("第{last}章"),
    };
    let score = average.map_or("—".to_string(), crate::gate::score_text);
    format!(
        "第{volume}卷 {chapter} 总{} 均分{score} 未回收伏笔{open_foreshadowing}个",
        format_chars(total_chars)
    )
}

/// Where the recent scores are heading.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Trend {
    Up,
    Down,
    Flat,
}

impl Trend {
    pub fn label(self) -> &'static str {
        match self {
            Trend::Up => "上升",
            Trend::Down => "下降",
            Trend::Flat => "持平",
        }
    }
}

/// A difference of means below this is `flat`.
pub const TREND_EPSILON: f64 = 0.1;

/// The trend of the recent scores (oldest first): the mean of the later half against the mean
/// of the earlier half (the middle score of an odd count is in neither); `None` under two
/// scores.
pub fn trend(recent: &[f64]) -> Option<Trend> {
    let half = recent.len() / 2;
    if half == 0 {
        return None;
    }
    let mean = |s: &[f64]| s.iter().sum::<f64>() / s.len() as f64;
    let diff = mean(&recent[recent.len() - half..]) - mean(&recent[..half]);
    Some(if diff >= TREND_EPSILON {
        Trend::Up
    } else if diff <= -TREND_EPSILON {
        Trend::Down
    } else {
        Trend::Flat
    })
}

/// The number in a schedule's rhythm text (`every_8_chapters`, `每8章` → 8).
pub fn rhythm_number(text: &str) -> Option<u32> {
    let digits: String = text
        .chars()
        .skip_while(|c| !c.is_ascii_digit())
        .take_while(char::is_ascii_digit)
        .collect();
    digits.parse().ok().filter(|n| *n > 0)
}

/// One storyline's rhythm.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct StorylineRhythm {
    pub id: String,
    pub name: String,
    pub status: StorylineStatus,
    /// Its role in the current volume's schedule, when it has one.
    pub volume_role: Option<VolumeRole>,
    /// The last committed chapter on this line.
    pub last_chapter: Option<u32>,
    /// Chapters committed since it last appeared, counted inside the current volume (only for
    /// lines the current schedule lists).
    pub gap: Option<u32>,
    /// The most chapters in a row a secondary line may be absent: `secondary_min_appearance`
    /// `every_N_chapters` allows N − 1.
    pub max_gap: Option<u32>,
    pub over_gap: bool,
    /// The primary line's current run of consecutive chapters (ending at the last completed).
    pub run: Option<u32>,
    /// `primary_max_consecutive`.
    pub max_run: Option<u32>,
    pub over_run: bool,
}

/// Each active storyline (and every line the current schedule lists) with the last chapter it
/// appeared in and its rhythm against the schedule:
/// - a `secondary` line may be absent at most N − 1 chapters in a row when the schedule says
///   `every_N_chapters`; the gap counts from the volume's first chapter at the earliest, so a
///   line is not late the moment a volume opens;
/// - the `primary` line may run at most `primary_max_consecutive` chapters in a row.
///
/// `appearances` maps committed chapters to their storyline; `volume_start` is the first chapter
/// of the current volume when known.
pub fn storyline_rhythm(
    storylines: &Storylines,
    schedule: Option<&StorylineSchedule>,
    appearances: &BTreeMap<u32, String>,
    last: u32,
    volume_start: Option<u32>,
) -> Vec<StorylineRhythm> {
    let pattern = schedule.and_then(|s| s.interleaving_pattern.as_ref());
    let min_appearance = pattern
        .and_then(|p| p.secondary_min_appearance.as_deref())
        .and_then(rhythm_number);
    let max_run = pattern.and_then(|p| p.primary_max_consecutive);
    let role_of = |id: &str| {
        schedule.and_then(|s| {
            s.active_storylines
                .iter()
                .find(|a| a.storyline_id == id)
                .map(|a| a.volume_role)
        })
    };
    let floor = volume_start.map_or(0, |s| s.saturating_sub(1));
    storylines
        .storylines
        .iter()
        .filter(|l| l.status == StorylineStatus::Active || role_of(&l.id).is_some())
        .map(|l| {
            let role = role_of(&l.id);
            let last_chapter = appearances
                .iter()
                .rev()
                .find(|(_, s)| **s == l.id)
                .map(|(c, _)| *c);
            let gap = role.map(|_| last.saturating_sub(last_chapter.unwrap_or(0).max(floor)));
            let max_gap = (role == Some(VolumeRole::Secondary))
                .then(|| min_appearance.map(|n| n - 1))
                .flatten();
            let run = (role == Some(VolumeRole::Primary)).then(|| {
                (floor + 1..=last)
                    .rev()
                    .take_while(|c| appearances.get(c).is_some_and(|s| *s == l.id))
                    .count() as u32
            });
            let max_run = max_run.filter(|_| role == Some(VolumeRole::Primary));
            StorylineRhythm {
                id: l.id.clone(),
                name: l.name.clone(),
                status: l.status,
                volume_role: role,
                last_chapter,
                over_gap: matches!((gap, max_gap), (Some(g), Some(m)) if g > m),
                gap,
                max_gap,
                over_run: matches!((run, max_run), (Some(r), Some(m)) if r > m),
                run,
                max_run,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn headline_has_the_prd_shape_and_its_fallbacks() {
        assert_eq!(
            headline(Some(2), 51, Some(50), 152_000, Some(3.72), 3),
            "第2卷 第51/50章（超出） 总15.2万字 均分3.72 未回收伏笔3个"
        );
        // Cut, never rounded across a pass line of 4.0.
        assert!(headline(Some(1), 3, Some(30), 723, Some(3.9666), 2).contains("均分3.96 "));
        assert_eq!(
            headline(Some(1), 3, Some(50), 3_120, None, 0),
            "第1卷 第3/50章 总3120字 均分— 未回收伏笔0个"
        );
        assert_eq!(
            headline(Some(1), 50, Some(50), 10_000, Some(4.0), 1),
            "第1卷 第50/50章 总1.0万字 均分4.0 未回收伏笔1个"
        );
        assert_eq!(
            headline(None, 7, None, 0, None, 0),
            "第?卷 第7章 总0字 均分— 未回收伏笔0个"
        );
    }

    #[test]
    fn trend_compares_the_later_half_with_the_earlier() {
        assert_eq!(trend(&[]), None);
        assert_eq!(trend(&[3.9]), None);
        assert_eq!(trend(&[3.5, 3.9]), Some(Trend::Up));
        assert_eq!(trend(&[4.2, 4.0, 9.9, 3.8, 3.6]), Some(Trend::Down));
        assert_eq!(trend(&[3.8, 3.85, 3.9, 3.8]), Some(Trend::Flat));
    }

    #[test]
    fn rhythm_numbers_come_from_the_schedule_text() {
        assert_eq!(rhythm_number("every_8_chapters"), Some(8));
        assert_eq!(rhythm_number("每12章至少一次"), Some(12));
        assert_eq!(rhythm_number("often"), None);
        assert_eq!(rhythm_number("every_0_chapters"), None);
    }

    fn lines() -> Storylines {
        serde_json::from_value(json!({"storylines": [
            {"id": "main_arc", "name": "主线", "type": "main_arc", "scope": "novel", "status": "active"},
            {"id": "jinghai_plan", "name": "靖海计划", "type": "conspiracy", "scope": "multi_volume", "status": "active"},
            {"id": "old_feud", "name": "旧怨", "type": "mystery", "scope": "novel", "status": "dormant"},
            {"id": "sect_rivalry", "name": "宗门之争", "type": "faction_conflict", "scope": "multi_volume", "status": "active"}
        ]}))
        .unwrap()
    }

    fn schedule() -> StorylineSchedule {
        serde_json::from_value(json!({"volume": 2, "chapter_range": [31, 60],
            "active_storylines": [
                {"storyline_id": "main_arc", "volume_role": "primary"},
                {"storyline_id": "jinghai_plan", "volume_role": "secondary"},
                {"storyline_id": "old_feud", "volume_role": "seasoning"}],
            "interleaving_pattern": {"primary_max_consecutive": 3, "secondary_min_appearance": "every_8_chapters"},
            "convergence_events": []}))
        .unwrap()
    }

    #[test]
    fn a_secondary_line_absent_eight_chapters_is_over_its_gap() {
        // 靖海计划 last at 40; 41..=48 are all main_arc: eight chapters without it.
        let mut apps: BTreeMap<u32, String> = BTreeMap::new();
        for c in 31..=48 {
            apps.insert(c, if c == 40 { "jinghai_plan" } else { "main_arc" }.into());
        }
        let rows = storyline_rhythm(&lines(), Some(&schedule()), &apps, 48, Some(31));
        let ids: Vec<&str> = rows.iter().map(|r| r.id.as_str()).collect();
        // Active lines and scheduled ones; a dormant line only because the schedule lists it.
        assert_eq!(
            ids,
            ["main_arc", "jinghai_plan", "old_feud", "sect_rivalry"]
        );
        let j = &rows[1];
        assert_eq!(
            (j.last_chapter, j.gap, j.max_gap, j.over_gap),
            (Some(40), Some(8), Some(7), true)
        );
        let at_47 = storyline_rhythm(&lines(), Some(&schedule()), &apps, 47, Some(31));
        assert!(!at_47[1].over_gap, "{:?}", at_47[1]);
        // The primary has run 8 in a row (41..=48), over its limit of 3.
        let m = &rows[0];
        assert_eq!((m.run, m.max_run, m.over_run), (Some(8), Some(3), true));
        // Not in the schedule: no gap is judged.
        assert_eq!((rows[3].gap, rows[3].over_gap), (None, false));
        assert_eq!(rows[3].last_chapter, None);
    }

    #[test]
    fn a_new_volume_does_not_make_a_line_late_at_once() {
        let mut apps: BTreeMap<u32, String> = BTreeMap::new();
        apps.insert(20, "jinghai_plan".into());
        apps.insert(31, "main_arc".into());
        let rows = storyline_rhythm(&lines(), Some(&schedule()), &apps, 31, Some(31));
        assert_eq!((rows[1].gap, rows[1].over_gap), (Some(1), false));
        assert_eq!(rows[1].last_chapter, Some(20));
    }
}
