//! The names of project files (PRD §9.1, `002` §10.4): the one place `chapter-NNN`, `vol-NN`
//! and the summary / evaluation / delta / contract / log names are spelled, and read back.
//! Pure strings, project-relative and `/`-separated; `novel-store`'s layout re-exports them
//! and adds what needs checking (ids become path segments only as slugs).
//!
//! Layer: model — the project files' types and what is read straight off them; below every rule.

/// `chapter-048` (3 digits, more when needed).
pub fn chapter_stem(n: u32) -> String {
    format!("chapter-{n:03}")
}

/// `vol-02`.
pub fn volume_stem(v: u32) -> String {
    format!("vol-{v:02}")
}

/// `volumes/vol-02`.
pub fn volume_dir(v: u32) -> String {
    format!("volumes/{}", volume_stem(v))
}

/// `chapters/chapter-048.md`.
pub fn chapter_file(n: u32) -> String {
    format!("chapters/{}.md", chapter_stem(n))
}

/// `chapters/chapter-048-revision.json`: the revision candidate of chapter 48 (`004`).
pub fn revision_file(n: u32) -> String {
    format!("chapters/{}-revision.json", chapter_stem(n))
}

/// `extras/`: the named extras of an imported manuscript (楔子、番外 …, `novel import`), one
/// `NN-名称.md` each; `novel count --all` counts them with the chapters.
pub const EXTRAS_DIR: &str = "extras";

/// `memory/preferences.json`: the author's preferences (`004`).
pub const PREFERENCES: &str = "memory/preferences.json";

/// `memory/characters`: one `<slug>.jsonl` per character (`004` per-character memory).
pub const CHARACTER_MEMORY_DIR: &str = "memory/characters";

/// `memory/characters/lin-feng.jsonl` (`slug` must already be checked).
pub fn character_memory(slug: &str) -> String {
    format!("{CHARACTER_MEMORY_DIR}/{slug}.jsonl")
}

/// `chapter-048-summary.md`.
pub fn summary_name(n: u32) -> String {
    format!("{}-summary.md", chapter_stem(n))
}

pub fn summary_file(n: u32) -> String {
    format!("summaries/{}", summary_name(n))
}

/// `chapter-048-eval`: the primary judge's evaluation is `<this>.json`, a second judge's
/// `<this>-<judge>.json`.
pub fn evaluation_stem(n: u32) -> String {
    format!("{}-eval", chapter_stem(n))
}

/// `chapter-048-eval.json`.
pub fn evaluation_name(n: u32) -> String {
    format!("{}.json", evaluation_stem(n))
}

pub fn evaluation_file(n: u32) -> String {
    format!("evaluations/{}", evaluation_name(n))
}

/// `chapter-048-delta.json`.
pub fn delta_name(n: u32) -> String {
    format!("{}-delta.json", chapter_stem(n))
}

pub fn log_file(n: u32) -> String {
    format!("logs/{}-log.json", chapter_stem(n))
}

/// The reports of the periodic reviews (`docs/orchestration.md` §8): a review is due until
/// its report exists. `logs/reviews/brief-chapter-NNN.json`,
/// `logs/reviews/consistency-chapter-NNN.json` (NNN = the last completed chapter covered).
pub fn review_chapter_report(kind: &str, n: u32) -> String {
    format!("logs/reviews/{kind}-{}.json", chapter_stem(n))
}

/// `logs/reviews/volume-NN.json`.
pub fn review_volume_report(v: u32) -> String {
    format!("logs/reviews/volume-{v:02}.json")
}

/// The in-flight chapter's cross-storyline leak check (`novel check leak`).
pub fn staging_leak(n: u32) -> String {
    format!("staging/logs/{}-leak.json", chapter_stem(n))
}

/// Where the files of round `round` that the gate sent back are kept:
/// `logs/revisions/chapter-NNN/rK`.
pub fn revision_dir(n: u32, round: u32) -> String {
    format!("logs/revisions/{}/r{round}", chapter_stem(n))
}

/// The text of round `round` as the gate sent it back: `logs/revisions/chapter-NNN/rK/
/// chapter-NNN.md`.
pub fn revision_text(n: u32, round: u32) -> String {
    format!("{}/{}.md", revision_dir(n, round), chapter_stem(n))
}

/// `chapter-048.json`, the L3 contract's name in `volumes/vol-NN/chapter-contracts/`.
pub fn contract_name(n: u32) -> String {
    format!("{}.json", chapter_stem(n))
}

/// `volumes/vol-NN/chapter-contracts`.
pub fn contracts_dir(volume: u32) -> String {
    format!("{}/chapter-contracts", volume_dir(volume))
}

pub fn chapter_contract_file(volume: u32, n: u32) -> String {
    format!("{}/{}", contracts_dir(volume), contract_name(n))
}

/// `state/history/vol-NN-final-state.json`.
pub fn final_state_file(v: u32) -> String {
    format!("state/history/{}-final-state.json", volume_stem(v))
}

/// Staging paths of chapter `n` (`002` §10.4).
pub fn staging_chapter(n: u32) -> String {
    format!("staging/chapters/{}.md", chapter_stem(n))
}

pub fn staging_summary(n: u32) -> String {
    format!("staging/summaries/{}", summary_name(n))
}

pub fn staging_delta(n: u32) -> String {
    format!("staging/state/{}", delta_name(n))
}

pub fn staging_evaluation(n: u32) -> String {
    format!("staging/evaluations/{}", evaluation_name(n))
}

/// A second judge's staged evaluation: `staging/evaluations/chapter-NNN-eval-<judge>.json`.
pub fn staging_second_evaluation(n: u32, judge: &str) -> String {
    format!("staging/evaluations/{}-{judge}.json", evaluation_stem(n))
}

pub fn staging_log(n: u32) -> String {
    format!("staging/logs/{}-log.json", chapter_stem(n))
}

/// The record of what StyleRefiner changed in chapter `n` (`staging/logs/chapter-NNN-changes.md`):
/// each change list `stage refined|polished` applied ([`staging_edits`]), kept with the chapter
/// at commit ([`changes_file`]).
pub fn staging_changes(n: u32) -> String {
    format!("staging/logs/{}-changes.md", chapter_stem(n))
}

/// StyleRefiner's change list for chapter `n` (`staging/logs/chapter-NNN-edits.md`,
/// [`crate::changes`]): written by the agent, applied to the staged text by `novel chapter stage
/// refined|polished`, which then moves it into [`staging_changes`].
pub fn staging_edits(n: u32) -> String {
    format!("staging/logs/{}-edits.md", chapter_stem(n))
}

/// The packet of `agent` for chapter `n` as the stage before it left it
/// (`staging/logs/chapter-NNN-<agent>-context.md`: the refiner's after `stage drafted` or a
/// polish verdict, the judge's after `stage refined`): what the agent reads when the
/// SubagentStart hook could not hand it over. Dropped at commit.
pub fn staging_context(n: u32, agent: &str) -> String {
    format!("staging/logs/{}-{agent}-context.md", chapter_stem(n))
}

/// The start of the names of chapter `n`'s agent usage records in `staging/logs/`
/// (`chapter-NNN-usage-<call id>.json`, written by the PostToolUse hook on the Agent tool and
/// folded into the next `chapter stage`).
pub fn staging_usage_prefix(n: u32) -> String {
    format!("{}-usage-", chapter_stem(n))
}

/// Whether `name` (a file in `staging/logs/`) is an agent usage record
/// ([`staging_usage_prefix`]).
pub fn is_usage_record(name: &str) -> bool {
    name.strip_prefix("chapter-")
        .and_then(|rest| rest.split_once("-usage-"))
        .is_some_and(|(num, id)| {
            !num.is_empty()
                && num.bytes().all(|b| b.is_ascii_digit())
                && id.strip_suffix(".json").is_some_and(|id| !id.is_empty())
        })
}

/// The draft as `novel chapter stage drafted` found it (`staging/logs/chapter-NNN-draft.md`):
/// what `stage refined` measures StyleRefiner's changes against; dropped at commit.
pub fn staging_draft(n: u32) -> String {
    format!("staging/logs/{}-draft.md", chapter_stem(n))
}

/// Where a committed chapter's refiner change list is kept (`logs/chapter-NNN-changes.md`).
pub fn changes_file(n: u32) -> String {
    format!("logs/{}-changes.md", chapter_stem(n))
}

/// Where ChapterWriter writes the new paragraphs of a local repair (`crate::repair`).
pub const STAGING_REPAIRS: &str = "staging/repairs";

/// The new paragraphs of one part of chapter `n`'s repair:
/// `staging/repairs/chapter-048-ending.md` (`-opening.md`).
pub fn staging_repair(n: u32, part: crate::model::RepairPart) -> String {
    format!("{STAGING_REPAIRS}/{}-{}.md", chapter_stem(n), part.name())
}

/// `chapter-048-repair.json`: QualityJudge's review of a local repair.
pub fn repair_review_name(n: u32) -> String {
    format!("{}-repair.json", chapter_stem(n))
}

/// `staging/evaluations/chapter-048-repair.json`.
pub fn staging_repair_review(n: u32) -> String {
    format!("staging/evaluations/{}", repair_review_name(n))
}

/// `evaluations/chapter-048-repair.json`: the review, committed with the evaluations.
pub fn repair_review_file(n: u32) -> String {
    format!("evaluations/{}", repair_review_name(n))
}

/// `logs/revisions/chapter-048/rK/repair.json`: what a repair round repairs
/// (`crate::repair::RepairRecord`).
pub fn repair_record(n: u32, round: u32) -> String {
    format!("{}/repair.json", revision_dir(n, round))
}

/// `staging/storylines/<id>/memory.md` (the store checks `id` is a slug before using it as
/// a path).
pub fn staging_memory(id: &str) -> String {
    format!("staging/storylines/{id}/memory.md")
}

/// `storylines/<id>/memory.md` (the store checks `id` is a slug before using it as a path).
pub fn storyline_memory(id: &str) -> String {
    format!("storylines/{id}/memory.md")
}

/// The chapter number of `<prefix>NNN<suffix>`, only in its canonical spelling (`007`, `048`,
/// `1234`), so two names never mean one chapter.
pub fn number_between(name: &str, prefix: &str, suffix: &str) -> Option<u32> {
    let digits = name.strip_prefix(prefix)?.strip_suffix(suffix)?;
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let n: u32 = digits.parse().ok()?;
    (format!("{n:03}") == digits).then_some(n)
}

/// The chapter of `chapter-NNN<suffix>` (`chapter_in_name("chapter-048.md", ".md")` = 48).
pub fn chapter_in_name(name: &str, suffix: &str) -> Option<u32> {
    number_between(name, "chapter-", suffix)
}

/// The volume of a `vol-NN` directory name, canonical spelling only.
pub fn volume_in_name(segment: &str) -> Option<u32> {
    let digits = segment.strip_prefix("vol-")?;
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let n: u32 = digits.parse().ok()?;
    (volume_stem(n) == segment).then_some(n)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        assert_eq!(chapter_stem(7), "chapter-007");
        assert_eq!(chapter_stem(1234), "chapter-1234");
        assert_eq!(volume_dir(2), "volumes/vol-02");
        assert_eq!(summary_file(48), "summaries/chapter-048-summary.md");
        assert_eq!(staging_delta(48), "staging/state/chapter-048-delta.json");
        assert_eq!(
            staging_second_evaluation(48, "secondary"),
            "staging/evaluations/chapter-048-eval-secondary.json"
        );
        assert_eq!(
            chapter_contract_file(1, 3),
            "volumes/vol-01/chapter-contracts/chapter-003.json"
        );
        assert_eq!(final_state_file(3), "state/history/vol-03-final-state.json");
        for n in [1, 48, 999, 1000, 12345] {
            assert_eq!(
                chapter_in_name(&format!("{}.md", chapter_stem(n)), ".md"),
                Some(n)
            );
            assert_eq!(volume_in_name(&volume_stem(n)), Some(n));
        }
        // Only canonical spellings.
        for name in [
            "chapter-48.md",
            "chapter-0048.md",
            "chapter-.md",
            "chapter-+48.md",
        ] {
            assert_eq!(chapter_in_name(name, ".md"), None, "{name}");
        }
        for seg in ["vol-2", "vol-002", "vol-", "vol-+2"] {
            assert_eq!(volume_in_name(seg), None, "{seg}");
        }
    }
}
