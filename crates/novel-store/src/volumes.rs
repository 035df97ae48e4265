//! Where the volumes are (a derived fact, read-only): the one place that says where a volume
//! ends ([`volume_span`], `docs/orchestration.md` §5) and which volume holds a chapter
//! ([`Volumes::volume_of`]) — every command asks here: commit, next, status, the hook, the gate,
//! reviews, context, volume check, the dashboard's figures.
//!
//! Layer: readers. It reads the volume files and `novel.json`; it imports nothing that
//! writes, and no view (status, dashboard, next, context) is imported here.

use novel_core::context::outline;
use novel_core::plan::{self, VolumeSpan};
use serde::Deserialize;

use crate::io::text_opt;
use crate::layout;
use crate::project::Project;

#[derive(Deserialize)]
struct RangeOnly {
    #[serde(default)]
    chapter_range: Option<[u32; 2]>,
}

/// The volume of `chapter` ([`Volumes::volume_of`]), `current` being the checkpoint's volume.
pub fn volume_of(project: &Project, chapter: u32, current: u32) -> u32 {
    Volumes::load(project, Some(current), &mut Vec::new()).volume_of(chapter)
}

/// Volume numbers with a `volumes/vol-NN` directory, sorted.
pub fn volume_numbers(project: &Project) -> Vec<u32> {
    let dir = project.path("volumes");
    let Ok(names) = crate::io::dir_names(&dir) else {
        return Vec::new();
    };
    let mut vols: Vec<u32> = names
        .iter()
        .filter(|n| dir.join(n).is_dir())
        .filter_map(|n| novel_core::naming::volume_in_name(n))
        .collect();
    vols.sort_unstable();
    vols
}

/// Chapter numbers of the contract files `volumes/vol-NN/chapter-contracts/chapter-NNN.json`
/// (canonical names only), sorted.
pub fn contract_chapters(project: &Project, v: u32) -> Vec<u32> {
    let dir = novel_core::naming::contracts_dir(v);
    let mut out: Vec<u32> = crate::io::dir_names(&project.path(&dir))
        .map(|names| {
            names
                .iter()
                .filter_map(|name| match layout::classify(&format!("{dir}/{name}")) {
                    layout::Entry::Json {
                        chapter: Some(n), ..
                    } => Some(n),
                    _ => None,
                })
                .collect()
        })
        .unwrap_or_default();
    out.sort_unstable();
    out
}

/// Volume `v`'s span from its own files: the first of its `storyline-schedule.json`
/// `chapter_range`, the chapter blocks of its `outline.md`, its contract files.
fn span_from_files(project: &Project, v: u32, problems: &mut Vec<String>) -> Option<VolumeSpan> {
    let vdir = layout::volume_dir(v);
    let found = |range: [u32; 2], range_source| {
        Some(VolumeSpan {
            range,
            range_source,
        })
    };
    let rel = format!("{vdir}/storyline-schedule.json");
    if let Some(text) = text_opt(project, &rel, problems) {
        match serde_json::from_str::<RangeOnly>(&text) {
            Ok(r) => {
                if let Some(range) = r.chapter_range.filter(|[a, b]| a <= b) {
                    return found(range, plan::SOURCE_SCHEDULE);
                }
            }
            Err(e) => problems.push(format!("{rel} 无法解析（{e}），已忽略")),
        }
    }
    let rel = format!("{vdir}/outline.md");
    if let Some(text) = text_opt(project, &rel, problems) {
        match outline::parse(&text) {
            Ok(o) => {
                if let Some(range) = plan::span_of(o.chapters.iter().map(|b| b.chapter)) {
                    return found(range, plan::SOURCE_OUTLINE);
                }
            }
            Err(e) => problems.push(format!("{rel}：{e}")),
        }
    }
    plan::span_of(contract_chapters(project, v)).map(|range| VolumeSpan {
        range,
        range_source: plan::SOURCE_CONTRACTS,
    })
}

/// `novel.json` `chapters_per_volume`, or `None` (a settings file that does not load is a
/// problem).
fn per_volume(project: &Project, problems: &mut Vec<String>) -> Option<u32> {
    match crate::settings::load(project) {
        Ok(s) => s.chapters_per_volume,
        Err(e) => {
            problems.push(e.to_string());
            None
        }
    }
}

/// Where volume `v` ends (`docs/orchestration.md` §5): the first of the volume's
/// `storyline-schedule.json` `chapter_range`; the chapter blocks of its `outline.md`
/// (min..max); its contract files (min..max); `novel.json` `chapters_per_volume`, the first
/// chapter following the previous volume's end. A file that cannot be read or parsed is pushed
/// to `problems` and the next source is tried.
pub fn volume_span(project: &Project, v: u32, problems: &mut Vec<String>) -> Option<VolumeSpan> {
    if let Some(s) = span_from_files(project, v, problems) {
        return Some(s);
    }
    let per_volume = per_volume(project, problems)?;
    let previous_end = match v {
        0 | 1 => 0,
        _ => volume_span(project, v - 1, problems)?.range[1],
    };
    Some(VolumeSpan {
        range: plan::settings_span(previous_end, per_volume)?,
        range_source: plan::SOURCE_SETTINGS,
    })
}

/// The known volumes of a book and their spans: volumes 1 up to the current one or the highest
/// `volumes/vol-NN`, those whose span [`volume_span`] finds.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Volumes {
    /// The checkpoint's current volume, when it could be read.
    pub current: Option<u32>,
    /// `(volume, span)` in volume order.
    pub spans: Vec<(u32, VolumeSpan)>,
}

impl Volumes {
    /// Reads the spans (each volume's files once; `novel.json` spans built one after the other).
    pub fn load(project: &Project, current: Option<u32>, problems: &mut Vec<String>) -> Volumes {
        let dirs = volume_numbers(project);
        let up_to = dirs.last().copied().unwrap_or(0).max(current.unwrap_or(0));
        let mut per: Option<Option<u32>> = None;
        let mut spans: Vec<(u32, VolumeSpan)> = Vec::new();
        let mut previous_end = Some(0);
        for v in 1..=up_to {
            let span = span_from_files(project, v, problems).or_else(|| {
                let chapters = *per.get_or_insert_with(|| per_volume(project, problems));
                Some(VolumeSpan {
                    range: plan::settings_span(previous_end?, chapters?)?,
                    range_source: plan::SOURCE_SETTINGS,
                })
            });
            previous_end = span.as_ref().map(|s| s.range[1]);
            if let Some(s) = span {
                spans.push((v, s));
            }
        }
        Volumes { current, spans }
    }

    /// Volume `v`'s span, when known.
    pub fn span(&self, v: u32) -> Option<&VolumeSpan> {
        self.spans.iter().find(|(w, _)| *w == v).map(|(_, s)| s)
    }

    /// The volume whose span holds chapter `c` (the current volume first, then the lowest).
    pub fn holding(&self, c: u32) -> Option<u32> {
        let holds = |s: &VolumeSpan| s.range[0] <= c && c <= s.range[1];
        if let Some(v) = self.current.filter(|v| self.span(*v).is_some_and(holds)) {
            return Some(v);
        }
        self.spans.iter().find(|(_, s)| holds(s)).map(|(v, _)| *v)
    }

    /// The volume of chapter `c`: the one whose span holds it; else (a gap between spans, or
    /// written past the plan) the last volume that starts before it; else the current volume
    /// (1 when unknown).
    pub fn volume_of(&self, c: u32) -> u32 {
        self.holding(c)
            .or_else(|| {
                self.spans
                    .iter()
                    .rev()
                    .find(|(_, s)| s.range[0] <= c)
                    .map(|(v, _)| *v)
            })
            .unwrap_or(self.current.unwrap_or(1).max(1))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn volumes(current: u32, spans: &[(u32, [u32; 2])]) -> Volumes {
        Volumes {
            current: Some(current),
            spans: spans
                .iter()
                .map(|(v, range)| {
                    (
                        *v,
                        VolumeSpan {
                            range: *range,
                            range_source: plan::SOURCE_SCHEDULE,
                        },
                    )
                })
                .collect(),
        }
    }

    #[test]
    fn a_chapter_belongs_to_the_volume_that_holds_it() {
        // The planning of volume 7 has begun: chapter 300 is still volume 6's.
        let v = volumes(7, &[(5, [201, 250]), (6, [251, 300]), (7, [301, 350])]);
        assert_eq!(v.volume_of(300), 6);
        assert_eq!(v.volume_of(301), 7);
        assert_eq!(v.volume_of(201), 5);
    }

    #[test]
    fn past_the_plan_and_in_gaps_the_last_volume_started_counts() {
        let v = volumes(2, &[(1, [1, 50]), (2, [61, 100])]);
        // Written past volume 2's plan.
        assert_eq!(v.volume_of(104), 2);
        // In the gap between volume 1's end and volume 2's start.
        assert_eq!(v.volume_of(55), 1);
        assert_eq!(v.holding(55), None);
        // Overlapping spans: the current volume wins.
        let v = volumes(2, &[(1, [1, 50]), (2, [50, 100])]);
        assert_eq!(v.volume_of(50), 2);
        // Nothing known: the current volume.
        assert_eq!(volumes(3, &[]).volume_of(7), 3);
    }
}
