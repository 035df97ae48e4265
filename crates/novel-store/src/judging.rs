//! The inputs of the judge's contract check (`novel_core::judging`) as the project holds them:
//! the staged text the evaluations judged, the chapter's L3 contract, the fixes and the text of
//! the round the gate sent back (archived under `logs/revisions/chapter-NNN/rK/`), the leak
//! check, and the one lister of a chapter's evaluations (the primary judge's and the second
//! judges', `evaluations_in`). Read by `chapter stage judged`, `chapter gate`, `novel
//! validate` and the judge's packet.
//!
//! Layer: facts (reads only), below the packets (`context`) that show them.

use novel_core::diagnostic::Diagnostic;
use novel_core::judging::{self, Judged, NumberedFix};
use novel_core::model::{ChapterContract, Checkpoint};

use novel_core::model::Evaluation;

use crate::error::StoreError;
use crate::io::{json_opt, names_in};
use crate::layout;
use crate::project::Project;

/// The fixes of round `revision_count` (the round the gate sent back last), numbered as the
/// judge's packet shows them, with the blocking fixes of earlier rounds still not done
/// (`novel_core::judging::carried`); empty on a first round. A local repair round
/// (`novel_core::repair`) archives no evaluation — they stay in staging, still about the text
/// outside the repaired paragraphs — so it hands on the fixes of the round before it.
pub fn previous_fixes(project: &Project, n: u32, revision_count: u32) -> Vec<NumberedFix> {
    let mut fixes = Vec::new();
    for round in 1..=revision_count {
        if project.path(&layout::repair_record(n, round)).is_file() {
            continue;
        }
        let dir = layout::revision_dir(n, round);
        let evals = evaluations_in(project, &dir, n, &mut Vec::new());
        let refs: Vec<&novel_core::model::Evaluation> = evals.iter().map(|(_, e)| e).collect();
        fixes = judging::carried(&fixes, &refs);
    }
    fixes
}

/// The last round of chapter `n` up to `revision_count` that the gate sent back for a new text
/// (a revision or a rewrite), not a local repair; `None` before any.
fn sent_back_round(project: &Project, n: u32, revision_count: u32) -> Option<u32> {
    (1..=revision_count)
        .rev()
        .find(|k| !project.path(&layout::repair_record(n, *k)).is_file())
}

/// The in-flight chapter's L3 contract, when it exists and reads.
pub fn contract_of(project: &Project, n: u32, current_volume: u32) -> Option<ChapterContract> {
    let volume = crate::chapter::chapter_volume(project, n, current_volume)
        .map(|v| v.volume)
        .unwrap_or(current_volume.max(1));
    let rel = layout::chapter_contract_file(volume, n);
    let path = project.path(&rel);
    path.is_file()
        .then(|| crate::io::read_json(&path, "章节契约").ok())
        .flatten()
}

/// Every finding about the staged evaluations of chapter `n` (each file that reads as an
/// evaluation; schema problems are `validate`'s and `stage judged`'s own). Nothing when the
/// staged text is missing: there is nothing to hold the quotes against. In a local repair
/// round the evaluations are held to the text they judged (the round's archived base), and the
/// judge's review of the repair to its contract (`novel_core::repair::check_review`).
pub fn check_staged(
    project: &Project,
    cp: &Checkpoint,
    n: u32,
    normalize: &dyn Fn(&str) -> String,
) -> Result<Vec<Diagnostic>, StoreError> {
    let text_file = layout::staging_chapter(n);
    let text = match crate::io::read_text(&project.path(&text_file)) {
        Ok(t) => t,
        Err(StoreError::Io { source, .. }) if source.kind() == std::io::ErrorKind::NotFound => {
            return Ok(Vec::new());
        }
        Err(e) => return Err(e),
    };
    let settings = crate::settings::load(project)?;
    let contract = contract_of(project, n, cp.current_volume);
    let revision_count = if cp.inflight_chapter == Some(n) {
        cp.revision_count
    } else {
        0
    };
    let previous = previous_fixes(project, n, revision_count);
    // The text of the last round sent back for a revision: a repair round's archived text is
    // the one the evaluations judged, not the one before their round.
    let previous_text = sent_back_round(project, n, revision_count)
        .and_then(|k| crate::io::read_text(&project.path(&layout::revision_text(n, k))).ok());
    let digest = novel_core::pipeline::text_digest(text.as_bytes());
    let leak_high = crate::chapter::leak_result(project, n)
        .ok()
        .flatten()
        .is_some_and(|l| {
            l.leak_risk == novel_core::gate::LeakRisk::High
                && l.text_digest.as_deref() == Some(digest.as_str())
        });
    let evals = evaluations_in(project, "staging/evaluations", n, &mut Vec::new());
    let mut out = Vec::new();
    let repair = crate::repair::current(project, cp, n)?;
    let (judged_file, judged_text) = match &repair {
        Some(r) => (r.base.clone(), crate::repair::base(project, r)?),
        None => (text_file.clone(), text.clone()),
    };
    if let Some(r) = &repair {
        out.extend(crate::repair::check_review(project, n, r, normalize)?);
    }
    for (file, e) in &evals {
        let j = Judged {
            file,
            chapter: n,
            text_file: &judged_file,
            text: &judged_text,
            contract: contract.as_ref(),
            previous_fixes: &previous,
            previous_text: previous_text.as_deref(),
            thresholds: &settings.gate,
            leak_high,
        };
        out.extend(judging::check(e, &j, normalize));
    }
    Ok(out)
}

/// [`check_staged`] for the chapter in flight, if any (`novel validate`); a project whose
/// checkpoint does not read has no chapter in flight here (validate reports the checkpoint).
pub fn check_inflight(project: &Project, normalize: &dyn Fn(&str) -> String) -> Vec<Diagnostic> {
    let Ok(cp) = crate::chapter::load_checkpoint(project) else {
        return Vec::new();
    };
    let Some(n) = cp.inflight_chapter else {
        return Vec::new();
    };
    check_staged(project, &cp, n, normalize).unwrap_or_default()
}

/// `chapter-NNN-eval.json` and the second judges' `chapter-NNN-eval-<judge>.json` in `dir`:
/// the primary first, then by name.
pub(crate) fn evaluations_in(
    project: &Project,
    dir: &str,
    chapter: u32,
    w: &mut Vec<String>,
) -> Vec<(String, Evaluation)> {
    let stem = novel_core::naming::evaluation_stem(chapter);
    let mut names: Vec<String> = names_in(project, dir, ".json")
        .into_iter()
        .filter(|n| {
            n.strip_prefix(&stem)
                .and_then(|r| r.strip_suffix(".json"))
                .is_some_and(|mid| mid.is_empty() || mid.starts_with('-'))
        })
        .collect();
    names.sort_by_key(|n| (n.len(), n.clone()));
    names
        .into_iter()
        .filter_map(|n| {
            let rel = format!("{dir}/{n}");
            json_opt::<Evaluation>(project, &rel, w).map(|e| (rel, e))
        })
        .collect()
}
