//! What `novel next` (and `novel status`) read beyond the SessionStart facts: where the current
//! volume ends, which periodic reviews are due (their reports missing), the quick start's
//! standing. Tolerant and schema-free like the hook path: a file that cannot be read is a
//! listed problem, never a failure.
//!
//! Layer: views — what the agents and the author are shown (packets, next, status, dashboard; reads
//! only); no view imports another.

use crate::context::session_facts;
use crate::io::read_text;
use crate::layout;
use crate::project::Project;
use novel_core::context::outline;
use novel_core::context::session::SessionFacts;
use novel_core::periodic::ReviewDue;
use novel_core::plan;
use novel_core::quickstart::{self, QuickStartStatus};

pub use crate::periodic::reviews_due;
pub use crate::volumes::{contract_chapters, volume_span};
pub use novel_core::plan::VolumeSpan;

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
