//! What `novel next` (and `novel status`) read beyond the SessionStart facts: where the current
//! volume ends, which periodic reviews are due (their reports missing), the quick start's
//! standing. Tolerant and schema-free like the hook path: a file that cannot be read is a
//! listed problem, never a failure.

use novel_core::context::outline;
use novel_core::context::session::SessionFacts;
use novel_core::menu::{ReviewDue, ReviewKind, reviews_wanted};
use novel_core::model::Checkpoint;
use novel_core::plan;
use novel_core::quickstart::{self, QuickStartStatus};
use serde::Deserialize;

use crate::context::session_facts;
use crate::error::StoreError;
use crate::io::read_text;
use crate::layout;
use crate::project::Project;

pub use novel_core::plan::VolumeSpan;

#[derive(Deserialize)]
struct RangeOnly {
    #[serde(default)]
    chapter_range: Option<[u32; 2]>,
}

/// Reads a text file: `None` when absent; a problem when unreadable.
fn text_opt(project: &Project, rel: &str, problems: &mut Vec<String>) -> Option<String> {
    match read_text(&project.path(rel)) {
        Ok(t) => Some(t),
        Err(StoreError::Io { source, .. }) if source.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => {
            problems.push(format!("{rel}：{e}"));
            None
        }
    }
}

/// Chapter numbers of the contract files `volumes/vol-NN/chapter-contracts/chapter-NNN.json`
/// (canonical names only), sorted.
pub fn contract_chapters(project: &Project, v: u32) -> Vec<u32> {
    let dir = novel_core::naming::contracts_dir(v);
    let mut out: Vec<u32> = std::fs::read_dir(project.path(&dir))
        .map(|r| {
            r.filter_map(|e| e.ok())
                .filter_map(|e| {
                    let name = e.file_name().to_string_lossy().into_owned();
                    match layout::classify(&format!("{dir}/{name}")) {
                        layout::Entry::Json {
                            chapter: Some(n), ..
                        } => Some(n),
                        _ => None,
                    }
                })
                .collect()
        })
        .unwrap_or_default();
    out.sort_unstable();
    out
}

/// Where volume `v` ends (`docs/orchestration.md` §5) — the one place every command asks
/// (commit, next, status, the hook, the gate, reviews, context, volume check): the first of the
/// volume's `storyline-schedule.json` `chapter_range`; the chapter blocks of its `outline.md`
/// (min..max); its contract files (min..max); `novel.json` `chapters_per_volume`, the first
/// chapter following the previous volume's end. A file that cannot be read or parsed is pushed
/// to `problems` and the next source is tried.
pub fn volume_span(project: &Project, v: u32, problems: &mut Vec<String>) -> Option<VolumeSpan> {
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
    if let Some(range) = plan::span_of(contract_chapters(project, v)) {
        return found(range, plan::SOURCE_CONTRACTS);
    }
    let per_volume = match crate::settings::load(project) {
        Ok(s) => s.chapters_per_volume?,
        Err(e) => {
            problems.push(e.to_string());
            return None;
        }
    };
    let previous_end = match v {
        0 | 1 => 0,
        _ => volume_span(project, v - 1, problems)?.range[1],
    };
    found(
        plan::settings_span(previous_end, per_volume)?,
        plan::SOURCE_SETTINGS,
    )
}

/// The reviews the checkpoint calls for whose report does not exist yet (§8), in the order
/// brief, consistency, volume.
pub fn reviews_due(project: &Project, cp: &Checkpoint) -> Vec<ReviewDue> {
    let last = cp.last_completed_chapter;
    reviews_wanted(cp)
        .into_iter()
        .filter_map(|mut r| {
            let done = match r.kind {
                ReviewKind::Brief | ReviewKind::Consistency => {
                    let kind = if r.kind == ReviewKind::Brief {
                        "brief"
                    } else {
                        "consistency"
                    };
                    r.report = layout::review_chapter_report(kind, r.chapter);
                    // Any report from the milestone on covers it (a review run at chapter 7
                    // covers the chapter-5 brief).
                    (r.chapter..=last).any(|c| {
                        project
                            .path(&layout::review_chapter_report(kind, c))
                            .exists()
                    })
                }
                ReviewKind::Volume => {
                    r.report = layout::review_volume_report(r.volume.unwrap_or(cp.current_volume));
                    project.path(&r.report).exists()
                }
            };
            (!done).then_some(r)
        })
        .collect()
}

/// Everything `novel next` decides from.
#[derive(Debug, Clone)]
pub struct NextView {
    pub facts: SessionFacts,
    /// In INIT / QUICK_START only.
    pub quick_start: Option<QuickStartStatus>,
    pub reviews_due: Vec<ReviewDue>,
    /// The current volume's span, when known.
    pub volume: Option<VolumeSpan>,
    /// How far the current volume's outline is written, when it has one.
    pub volume_outline: Option<novel_core::menu::OutlineCover>,
}

/// How much of volume `v` its outline covers: the chapter blocks inside the volume's span, and
/// the chapters it plans when the span comes from something other than the outline itself.
/// None when there is no outline (an unreadable one was reported with the hook's facts).
fn outline_cover(
    project: &Project,
    v: u32,
    span: Option<&VolumeSpan>,
) -> Option<novel_core::menu::OutlineCover> {
    let text = read_text(&project.path(&format!("{}/outline.md", layout::volume_dir(v)))).ok()?;
    let blocks = outline::parse(&text).map_or(0, |o| {
        o.chapters
            .iter()
            .filter(|b| span.is_none_or(|s| (s.range[0]..=s.range[1]).contains(&b.chapter)))
            .count() as u32
    });
    // A span read off the outline itself says nothing of how long the volume should be: then
    // only `chapters_per_volume` does.
    let planned = match span {
        Some(s) if s.range_source != plan::SOURCE_OUTLINE => Some(s.range[1] + 1 - s.range[0]),
        _ => crate::settings::load(project)
            .ok()
            .and_then(|s| s.chapters_per_volume),
    };
    Some(novel_core::menu::OutlineCover { blocks, planned })
}

/// Gathers what `novel next` needs (the hook's facts plus the menu's).
pub fn next_view(project: &Project) -> NextView {
    let facts = session_facts(project, None);
    let (mut quick_start, mut reviews, mut volume, mut volume_outline) =
        (None, Vec::new(), None, None);
    if let Some(cp) = facts.checkpoint.clone() {
        if cp.orchestrator_state.in_quick_start() {
            quick_start = Some(quickstart::status(&cp, &crate::quickstart::files(project)));
        }
        reviews = facts.disk.reviews_due.clone();
        let v = cp.volume();
        // The hook facts already reported an unreadable schedule.
        volume = volume_span(project, v, &mut Vec::new());
        volume_outline = outline_cover(project, v, volume.as_ref());
    }
    NextView {
        facts,
        quick_start,
        reviews_due: reviews,
        volume,
        volume_outline,
    }
}
