//! What `novel next` (and `novel status`) read beyond the SessionStart facts: where the current
//! volume ends, which periodic reviews are due (their reports missing), the quick start's
//! standing. Tolerant and schema-free like the hook path: a file that cannot be read is a
//! listed problem, never a failure.

use novel_core::context::session::SessionFacts;
use novel_core::menu::{ReviewDue, ReviewKind, reviews_wanted};
use novel_core::model::{Checkpoint, OrchestratorState};
use novel_core::quickstart::{self, QuickStartStatus};
use serde::{Deserialize, Serialize};

use crate::context::session_facts;
use crate::error::StoreError;
use crate::io::read_text;
use crate::layout;
use crate::project::Project;

/// Where a volume's chapters run, and which file said so.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct VolumeSpan {
    /// `[first, last]`, inclusive.
    pub range: [u32; 2],
    /// `schedule` | `outline` | `contracts` | `settings` (`docs/orchestration.md` §5).
    pub range_source: &'static str,
}

#[derive(Deserialize)]
struct RangeOnly {
    #[serde(default)]
    chapter_range: Option<[u32; 2]>,
}

/// Where volume `v` ends, as `next`, `status` and the SessionStart hook see it — the one place
/// they ask. Today: the volume's `storyline-schedule.json` `chapter_range`. (The contract's
/// `volume_range` — schedule → outline → contracts → settings — replaces this body.) A schedule
/// that cannot be read or parsed is pushed to `problems`.
pub fn volume_span(project: &Project, v: u32, problems: &mut Vec<String>) -> Option<VolumeSpan> {
    let rel = format!("{}/storyline-schedule.json", layout::volume_dir(v));
    let text = match read_text(&project.path(&rel)) {
        Ok(t) => t,
        Err(StoreError::Io { source, .. }) if source.kind() == std::io::ErrorKind::NotFound => {
            return None;
        }
        Err(e) => {
            problems.push(format!("{rel}：{e}"));
            return None;
        }
    };
    match serde_json::from_str::<RangeOnly>(&text) {
        Ok(r) => r
            .chapter_range
            .filter(|[a, b]| a <= b)
            .map(|range| VolumeSpan {
                range,
                range_source: "schedule",
            }),
        Err(e) => {
            problems.push(format!("{rel} 无法解析（{e}），已忽略"));
            None
        }
    }
}

/// The reviews the checkpoint calls for whose report does not exist yet (§8), in the order
/// brief, consistency, volume.
pub fn reviews_due(project: &Project, cp: &Checkpoint) -> Vec<ReviewDue> {
    reviews_wanted(cp)
        .into_iter()
        .map(|mut r| {
            r.report = match r.kind {
                ReviewKind::Brief => layout::review_chapter_report("brief", r.chapter),
                ReviewKind::Consistency => layout::review_chapter_report("consistency", r.chapter),
                ReviewKind::Volume => {
                    layout::review_volume_report(r.volume.unwrap_or(cp.current_volume))
                }
            };
            r
        })
        .filter(|r| !project.path(&r.report).exists())
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
    /// The current volume has an outline file.
    pub volume_outline: bool,
}

/// Gathers what `novel next` needs (the hook's facts plus the menu's).
pub fn next_view(project: &Project) -> NextView {
    let facts = session_facts(project, None);
    let (mut quick_start, mut reviews, mut volume, mut volume_outline) =
        (None, Vec::new(), None, false);
    if let Some(cp) = facts.checkpoint.clone() {
        if matches!(
            cp.orchestrator_state,
            OrchestratorState::Init | OrchestratorState::QuickStart
        ) {
            quick_start = Some(quickstart::status(&cp, &crate::quickstart::files(project)));
        }
        reviews = reviews_due(project, &cp);
        let v = cp.current_volume.max(1);
        // The hook facts already reported an unreadable schedule.
        volume = volume_span(project, v, &mut Vec::new());
        volume_outline = project
            .path(&format!("{}/outline.md", layout::volume_dir(v)))
            .is_file();
    }
    NextView {
        facts,
        quick_start,
        reviews_due: reviews,
        volume,
        volume_outline,
    }
}
