//! Which periodic reviews (§8) are due: those the checkpoint calls for
//! ([`novel_core::periodic::reviews_wanted`]) whose report file is missing. Read by the
//! session facts, `next` and `status`.
//!
//! Layer: readers (above `layout` and `project`).

use novel_core::model::Checkpoint;
use novel_core::periodic::{ReviewDue, ReviewKind, reviews_wanted};

use crate::layout;
use crate::project::Project;

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
