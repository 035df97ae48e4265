//! 局部修补 on disk (`novel_core::repair`): a repair round's record and judged text under
//! `logs/revisions/chapter-NNN/rK/` (`repair.json`, `chapter-NNN.md`), the writer's new
//! paragraphs in `staging/repairs/`, the judge's review in `staging/evaluations/`. Reads and
//! plans only: `chapter stage repairing|repaired` (`crate::stage`) writes through the journal.
//! Below the chapter transaction: it knows the files, not the pipeline.
//!
//! Layer: writers — the state, the memory, the preferences and the chapter commit, written through
//! the journal; above the readers.

use novel_core::diagnostic::Diagnostic;
use novel_core::model::{Checkpoint, FileKind, RepairPart, RepairReview};
use novel_core::pipeline::{FileFact, RepairFacts};
use novel_core::repair::{PartReason, Problem, RepairRecord};

use crate::error::StoreError;
use crate::io::read_text;
use crate::layout;
use crate::project::Project;

/// `None` for a file that is not there; its text otherwise.
fn text_if_any(project: &Project, rel: &str) -> Result<Option<String>, StoreError> {
    match read_text(&project.path(rel)) {
        Ok(t) => Ok(Some(t)),
        Err(StoreError::Io { source, .. }) if source.kind() == std::io::ErrorKind::NotFound => {
            Ok(None)
        }
        Err(e) => Err(e),
    }
}

/// The record of round `round` of chapter `n`, when that round is a repair.
pub fn record(project: &Project, n: u32, round: u32) -> Result<Option<RepairRecord>, StoreError> {
    if round == 0 {
        return Ok(None);
    }
    let rel = layout::repair_record(n, round);
    let path = project.path(&rel);
    if !path.is_file() {
        return Ok(None);
    }
    crate::io::read_json(&path, "局部修补记录").map(Some)
}

/// The record of the round chapter `n` is in, when it is in flight and that round is a repair.
pub fn current(
    project: &Project,
    cp: &Checkpoint,
    n: u32,
) -> Result<Option<RepairRecord>, StoreError> {
    if cp.inflight_chapter != Some(n) {
        return Ok(None);
    }
    record(project, n, cp.revision_count)
}

/// The judged text a repair starts from.
pub fn base(project: &Project, r: &RepairRecord) -> Result<String, StoreError> {
    read_text(&project.path(&r.base))
}

/// What the repair round `r` of chapter `n` has staged: the writer's work (a repair file for
/// every part, or the chapter file changed from the judged text) and the judge's review
/// (`review`, as the caller checked it).
pub fn facts(project: &Project, n: u32, r: &RepairRecord, review: FileFact) -> RepairFacts {
    let files = r.part_names().into_iter().all(|p| {
        matches!(text_if_any(project, &layout::staging_repair(n, p)), Ok(Some(t)) if !t.trim().is_empty())
    });
    let staged = text_if_any(project, &layout::staging_chapter(n))
        .ok()
        .flatten();
    let edited =
        staged.is_some_and(|t| novel_core::pipeline::text_digest(t.as_bytes()) != r.base_digest);
    RepairFacts {
        written: files || edited,
        review,
    }
}

/// The record of a new repair round `round` of chapter `n`: `parts` of `text` (the judged
/// text), its windows by the project's craft thresholds.
pub fn new_record(
    n: u32,
    round: u32,
    parts: &[PartReason],
    text: &str,
    craft: &novel_core::model::settings::CraftThresholds,
) -> RepairRecord {
    let names: Vec<RepairPart> = parts.iter().map(|p| p.part).collect();
    RepairRecord {
        chapter: n,
        round,
        parts: parts.to_vec(),
        windows: novel_core::repair::windows(text, &names, craft),
        base: layout::revision_text(n, round),
        base_digest: novel_core::pipeline::text_digest(text.as_bytes()),
    }
}

/// What `stage repaired` puts in place: the new text, and the repair files it consumed.
pub struct Spliced {
    pub text: String,
    pub consumed: Vec<String>,
    /// 字 of the new paragraphs, per part.
    pub written: Vec<(RepairPart, usize)>,
}

/// The repaired text of chapter `n`: the writer's repair files spliced into the judged text,
/// or the chapter file as the writer edited it (then nothing outside the windows may differ).
/// `Err` lists what is wrong; `Ok(None)`: nothing was written yet.
pub fn splice(
    project: &Project,
    n: u32,
    r: &RepairRecord,
) -> Result<Result<Spliced, Vec<Problem>>, StoreError> {
    let base = base(project, r)?;
    let staged = text_if_any(project, &layout::staging_chapter(n))?.unwrap_or_default();
    let mut files = Vec::new();
    for part in r.part_names() {
        let rel = layout::staging_repair(n, part);
        if let Some(t) = text_if_any(project, &rel)? {
            files.push((part, t, rel));
        }
    }
    let edited = novel_core::pipeline::text_digest(staged.as_bytes()) != r.base_digest;
    if files.is_empty() {
        return Ok(
            novel_core::repair::direct_edit(&base, &staged, &r.windows).map(|()| Spliced {
                written: vec![(
                    r.parts.first().map_or(RepairPart::Ending, |p| p.part),
                    novel_core::repair::new_text(&base, &staged)
                        .chars()
                        .filter(|c| !c.is_whitespace())
                        .count(),
                )],
                text: staged,
                consumed: Vec::new(),
            }),
        );
    }
    if edited {
        return Ok(Err(vec![Problem {
            part: None,
            message: format!(
                "{} 被直接改过，又写了修补稿：修补只写 {}/ 下的修补稿，正文由程序拼",
                layout::staging_chapter(n),
                layout::STAGING_REPAIRS
            ),
        }]));
    }
    let new: Vec<(RepairPart, String)> = files.iter().map(|(p, t, _)| (*p, t.clone())).collect();
    Ok(
        novel_core::repair::splice(&base, &r.windows, &new).map(|text| Spliced {
            written: new
                .iter()
                .map(|(p, t)| (*p, t.chars().filter(|c| !c.is_whitespace()).count()))
                .collect(),
            text,
            consumed: files.into_iter().map(|(_, _, rel)| rel).collect(),
        }),
    )
}

/// The staged review of chapter `n`'s repair, when it reads.
fn staged_review(project: &Project, n: u32) -> Result<Option<RepairReview>, StoreError> {
    let rel = layout::staging_repair_review(n);
    let path = project.path(&rel);
    if !path.is_file() {
        return Ok(None);
    }
    let value = crate::io::read_json_value(&path)?;
    serde_json::from_value(value)
        .map(Some)
        .map_err(|e| StoreError::Model {
            path,
            what: FileKind::RepairReview.label(),
            message: e.to_string(),
        })
}

/// Every finding about the judge's review of the repair `r` (none when it is not written yet:
/// `stage judged` asks for the file).
pub fn check_review(
    project: &Project,
    n: u32,
    r: &RepairRecord,
    normalize: &dyn Fn(&str) -> String,
) -> Result<Vec<Diagnostic>, StoreError> {
    let Some(review) = staged_review(project, n)? else {
        return Ok(Vec::new());
    };
    let now = text_if_any(project, &layout::staging_chapter(n))?.unwrap_or_default();
    let written = novel_core::repair::new_text(&base(project, r)?, &now);
    Ok(novel_core::repair::check_review(
        &review,
        r,
        &layout::staging_repair_review(n),
        &written,
        normalize,
    ))
}

/// The parts of the repair `r` the judge's review does not call done (all of them when there
/// is no review).
pub fn not_done(
    project: &Project,
    n: u32,
    r: &RepairRecord,
) -> Result<Vec<(RepairPart, String)>, StoreError> {
    Ok(match staged_review(project, n)? {
        Some(review) => novel_core::repair::not_done(&review, &r.part_names()),
        None => r
            .part_names()
            .into_iter()
            .map(|p| (p, format!("{}没有复核", p.label())))
            .collect(),
    })
}
