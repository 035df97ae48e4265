//! The project layout (PRD §9.1 with the revisions of `002`/`003`) and its path naming.
//! Every path the engine builds comes from here; ids become path segments only after
//! they are checked to be slugs.
//!
//! Layer: ground — files, paths, errors, the checkpoint, the lock, the journal and its transaction;
//! below everything that reads the book.

use std::path::{Path, PathBuf};

use novel_core::FileKind;
use novel_core::model::is_slug;
use novel_core::naming::{self, number_between};

/// An id that may not become a path segment (not a slug): the store reports it as
/// `StoreError::UnsafePath`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnsafeId {
    pub id: String,
    pub why: &'static str,
}

pub const CHECKPOINT: &str = ".checkpoint.json";
pub const SETTINGS: &str = "novel.json";
pub const BRIEF: &str = "brief.md";
pub const STYLE_PROFILE: &str = "style-profile.json";
pub const AI_BLACKLIST: &str = "ai-blacklist.json";
pub const STYLE_DRIFT: &str = "style-drift.json";
pub const CURRENT_STATE: &str = "state/current-state.json";
pub const CHANGELOG: &str = "state/changelog.jsonl";
pub const WORLD_RULES: &str = "world/rules.json";
pub const RELATIONSHIPS: &str = "characters/relationships.json";
pub const STORYLINES: &str = "storylines/storylines.json";
pub const STORYLINE_SPEC: &str = "storylines/storyline-spec.json";
pub const FORESHADOWING_GLOBAL: &str = "foreshadowing/global.json";
pub const LOCK_DIR: &str = ".novel.lock";
/// Copies of files the engine replaced (rebuilds, retirements): never read back by the engine.
pub const BACKUPS: &str = "state/backups";

/// Directories `novel init` creates (PRD §9.1; staging per `002` §10.4).
pub const DIRS: [&str; 23] = [
    "research",
    "world",
    "characters/active",
    "characters/retired",
    "storylines",
    "volumes/vol-01",
    "volumes/vol-01/chapter-contracts",
    "chapters",
    "staging",
    "staging/chapters",
    "staging/summaries",
    "staging/state",
    "staging/storylines",
    "staging/evaluations",
    "staging/logs",
    "summaries",
    "state",
    "state/history",
    "foreshadowing",
    "evaluations",
    "logs",
    "characters",
    "volumes",
];

pub use novel_core::naming::{
    CHARACTER_MEMORY_DIR, EXTRAS_DIR, PREFERENCES, STAGING_REPAIRS, changes_file,
    chapter_contract_file, chapter_file, chapter_stem, character_memory, evaluation_file, log_file,
    repair_record, repair_review_file, review_chapter_report, review_volume_report, revision_dir,
    revision_file, revision_text, staging_changes, staging_chapter, staging_context, staging_delta,
    staging_draft, staging_edits, staging_evaluation, staging_leak, staging_log, staging_repair,
    staging_repair_review, staging_summary, staging_usage_prefix, summary_file, volume_dir,
};

/// `staging/storylines/<id>/memory.md`, refusing non-slug ids.
pub fn staging_memory(id: &str) -> Result<String, UnsafeId> {
    safe_id(id)?;
    Ok(naming::staging_memory(id))
}

/// The commit journal (hidden; present only while a commit is being applied).
pub const JOURNAL: &str = ".novel-commit-journal.json";

/// `storylines/<id>/memory.md`, refusing ids that are not slugs (no traversal).
pub fn storyline_memory(id: &str) -> Result<String, UnsafeId> {
    safe_id(id)?;
    Ok(naming::storyline_memory(id))
}

/// `characters/active/<slug>.json`, refusing non-slug ids.
pub fn active_character(id: &str) -> Result<String, UnsafeId> {
    safe_id(id)?;
    Ok(format!("characters/active/{id}.json"))
}

/// Checks that an id may become a path segment.
pub fn safe_id(id: &str) -> Result<(), UnsafeId> {
    if is_slug(id) {
        Ok(())
    } else {
        Err(UnsafeId {
            id: id.to_string(),
            why: "不是 slug",
        })
    }
}

/// What a project-relative path holds, read off its name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Entry {
    Json {
        kind: FileKind,
        chapter: Option<u32>,
        volume: Option<u32>,
        slug: Option<String>,
    },
    /// `state/changelog.jsonl`: one [`FileKind::ChangelogEntry`] per line.
    JsonLines(FileKind),
    ChapterText {
        chapter: u32,
    },
    Summary {
        chapter: u32,
    },
    /// A file in a data directory whose name does not follow the layout.
    Misnamed {
        expected: &'static str,
    },
    /// `volumes/vol-NN/outline.md`: PlotArchitect's volume outline, parsed strictly.
    Outline {
        volume: Option<u32>,
    },
    /// What the binary writes for the author to read and keeps as it wrote it — backups under
    /// `state/backups/`, the rounds archived under `logs/revisions/`, review reports under
    /// `logs/reviews/`, a volume's `cleanup.json`, the spec snapshot, the in-flight chapter's
    /// leak check: known, not validated.
    Record,
    /// Anything the engine does not interpret (research notes, world docs, outlines …).
    Other,
}

/// Whether a project path `file` — a file, or one line of a JSONL file (`state/changelog.jsonl:3`)
/// — lies within `rel`: that file, a folder holding it, or the whole project (`rel` empty).
pub fn within(file: &str, rel: &str) -> bool {
    rel.is_empty()
        || file == rel
        || file
            .strip_prefix(rel)
            .is_some_and(|rest| rest.starts_with('/') || rest.starts_with(':'))
}

/// The kind of a JSON or JSONL file outside any project, from the longest tail of its path the
/// layout recognises (`…/state/current-state.json` is a state file wherever it lies).
pub fn kind_by_tail(path: &Path) -> Option<FileKind> {
    let parts: Vec<String> = path
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    (0..parts.len()).find_map(|i| match classify(&parts[i..].join("/")) {
        Entry::Json { kind, .. } | Entry::JsonLines(kind) => Some(kind),
        _ => None,
    })
}

/// Classifies a project-relative path (`/`-separated).
pub fn classify(rel: &str) -> Entry {
    let json = |kind| Entry::Json {
        kind,
        chapter: None,
        volume: None,
        slug: None,
    };
    let parts: Vec<&str> = rel.split('/').collect();
    match parts.as_slice() {
        [".checkpoint.json"] => json(FileKind::Checkpoint),
        ["novel.json"] => json(FileKind::Settings),
        ["style-profile.json"] => json(FileKind::StyleProfile),
        ["ai-blacklist.json"] => json(FileKind::AiBlacklist),
        ["style-drift.json"] => json(FileKind::StyleDrift),
        ["state", "current-state.json"] => json(FileKind::CurrentState),
        ["state", "changelog.jsonl"] => Entry::JsonLines(FileKind::ChangelogEntry),
        ["state", "history", name] if name.ends_with("-final-state.json") => {
            json(FileKind::CurrentState)
        }
        ["state", "backups", ..]
        | ["state", ".spec-snapshot.json"]
        | ["logs", "revisions" | "reviews", ..] => Entry::Record,
        ["world", "rules.json"] => json(FileKind::WorldRules),
        ["characters", "relationships.json"] => json(FileKind::Relationships),
        ["characters", "active" | "retired", name] if name.ends_with(".json") => Entry::Json {
            kind: FileKind::Character,
            chapter: None,
            volume: None,
            slug: name.strip_suffix(".json").map(str::to_string),
        },
        ["storylines", "storylines.json"] => json(FileKind::Storylines),
        ["storylines", "storyline-spec.json"] => json(FileKind::StorylineSpec),
        ["foreshadowing", "global.json"] => json(FileKind::ForeshadowingGlobal),
        ["memory", "preferences.json"] => json(FileKind::Preferences),
        ["memory", "characters", name] if name.ends_with(".jsonl") => {
            Entry::JsonLines(FileKind::MemoryEntry)
        }
        ["chapters", name] if name.ends_with("-revision.json") => classify_revision(name),
        ["volumes", vol, rest @ ..] => classify_volume_file(vol, rest),
        ["evaluations" | "staging", ..] | ["logs", _] | ["chapters", _] | ["summaries", _] => {
            classify_chapter_file(&parts)
        }
        _ => Entry::Other,
    }
}

/// `chapters/chapter-NNN-revision.json`, or a misnamed file there.
fn classify_revision(name: &str) -> Entry {
    match number_between(name, "chapter-", "-revision.json") {
        Some(n) => Entry::Json {
            kind: FileKind::Revision,
            chapter: Some(n),
            volume: None,
            slug: None,
        },
        None => Entry::Misnamed {
            expected: "chapter-NNN-revision.json",
        },
    }
}

/// A file under `volumes/<vol>/`: the schedule, the foreshadowing plan, the outline or a
/// chapter contract.
fn classify_volume_file(vol: &str, rest: &[&str]) -> Entry {
    let volume = naming::volume_in_name(vol);
    match rest {
        ["storyline-schedule.json"] => Entry::Json {
            kind: FileKind::StorylineSchedule,
            chapter: None,
            volume,
            slug: None,
        },
        ["foreshadowing.json"] => Entry::Json {
            kind: FileKind::VolumeForeshadowing,
            chapter: None,
            volume,
            slug: None,
        },
        ["outline.md"] => Entry::Outline { volume },
        ["cleanup.json"] => Entry::Record,
        ["chapter-contracts", name] => match number_between(name, "chapter-", ".json") {
            Some(n) => Entry::Json {
                kind: FileKind::ChapterContract,
                chapter: Some(n),
                volume,
                slug: None,
            },
            None => Entry::Misnamed {
                expected: "chapter-NNN.json",
            },
        },
        _ => Entry::Other,
    }
}

fn eval_chapter(name: &str) -> Option<u32> {
    // chapter-048-eval.json, or chapter-048-eval-<judge>.json for a key chapter's second judge.
    let rest = name.strip_prefix("chapter-")?.strip_suffix(".json")?;
    let (num, tail) = rest.split_once("-eval")?;
    if !(tail.is_empty() || tail.strip_prefix('-').is_some_and(is_slug)) {
        return None;
    }
    number_between(num, "", "")
}

fn classify_chapter_file(parts: &[&str]) -> Entry {
    let (dir, name) = match parts {
        ["staging", dir, name] => (*dir, *name),
        ["staging", "storylines", ..] | ["staging"] => return Entry::Other,
        [dir, name] => (*dir, *name),
        _ => return Entry::Other,
    };
    if name.starts_with('.') {
        return Entry::Other;
    }
    let json = |kind, chapter| Entry::Json {
        kind,
        chapter: Some(chapter),
        volume: None,
        slug: None,
    };
    match dir {
        "chapters" => match number_between(name, "chapter-", ".md") {
            Some(n) => Entry::ChapterText { chapter: n },
            None => Entry::Misnamed {
                expected: "chapter-NNN.md",
            },
        },
        "summaries" => match number_between(name, "chapter-", "-summary.md") {
            Some(n) => Entry::Summary { chapter: n },
            None => Entry::Misnamed {
                expected: "chapter-NNN-summary.md",
            },
        },
        "evaluations" => match (
            eval_chapter(name),
            number_between(name, "chapter-", "-repair.json"),
        ) {
            (Some(n), _) => json(FileKind::Evaluation, n),
            // A local repair's review (`novel_core::repair`).
            (None, Some(n)) => json(FileKind::RepairReview, n),
            (None, None) => Entry::Misnamed {
                expected: "chapter-NNN-eval.json",
            },
        },
        // The in-flight chapter's leak check (`novel check leak`): read by the gate, folded
        // into the pipeline log at commit.
        "logs" if number_between(name, "chapter-", "-leak.json").is_some() => Entry::Record,
        // An agent's usage, recorded by the PostToolUse hook for the next `chapter stage`.
        "logs" if parts[0] == "staging" && novel_core::naming::is_usage_record(name) => {
            Entry::Record
        }
        "logs" if name.ends_with(".json") => match number_between(name, "chapter-", "-log.json") {
            Some(n) => json(FileKind::PipelineLog, n),
            None => Entry::Misnamed {
                expected: "chapter-NNN-log.json",
            },
        },
        "state" => match number_between(name, "chapter-", "-delta.json") {
            Some(n) => json(FileKind::StateDelta, n),
            None => Entry::Misnamed {
                expected: "chapter-NNN-delta.json",
            },
        },
        // `staging/candidates/`: a revision candidate being written, and the delta that
        // rebuilds a revised committed chapter's state (`docs/orchestration.md` §8b).
        "candidates" if parts[0] == "staging" => {
            match number_between(name, "chapter-", "-delta.json") {
                Some(n) => json(FileKind::StateDelta, n),
                None => Entry::Other,
            }
        }
        _ => Entry::Other,
    }
}

/// Joins a project-relative `/` path onto the root.
pub fn join(root: &Path, rel: &str) -> PathBuf {
    rel.split('/')
        .fold(root.to_path_buf(), |p, seg| p.join(seg))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn within_a_path_and_by_tail() {
        assert!(within("state/changelog.jsonl:3", "state/changelog.jsonl"));
        assert!(within("state/changelog.jsonl:3", "state"));
        assert!(within("characters/active/lu-chen.json", ""));
        assert!(!within("state-old/x.json", "state"));
        assert!(!within("state", "state/x.json"));
        assert_eq!(
            kind_by_tail(Path::new("/tmp/copy/state/current-state.json")),
            Some(FileKind::CurrentState)
        );
        assert_eq!(kind_by_tail(Path::new("/tmp/notes.json")), None);
    }

    #[test]
    fn names() {
        assert_eq!(chapter_file(48), "chapters/chapter-048.md");
        assert_eq!(chapter_file(1234), "chapters/chapter-1234.md");
        assert_eq!(
            chapter_contract_file(2, 48),
            "volumes/vol-02/chapter-contracts/chapter-048.json"
        );
        assert!(storyline_memory("../etc").is_err());
        assert!(storyline_memory("主线").is_err());
        assert_eq!(
            storyline_memory("main_arc").unwrap(),
            "storylines/main_arc/memory.md"
        );
    }

    #[test]
    fn classification() {
        assert_eq!(
            classify("volumes/vol-02/chapter-contracts/chapter-048.json"),
            Entry::Json {
                kind: FileKind::ChapterContract,
                chapter: Some(48),
                volume: Some(2),
                slug: None
            }
        );
        assert_eq!(
            classify("chapters/chapter-007.md"),
            Entry::ChapterText { chapter: 7 }
        );
        assert_eq!(
            classify("staging/chapters/chapter-007.md"),
            Entry::ChapterText { chapter: 7 }
        );
        assert!(matches!(
            classify("chapters/chapter-7.md"),
            Entry::Misnamed { .. }
        ));
        assert!(matches!(
            classify("chapters/第七章.md"),
            Entry::Misnamed { .. }
        ));
        assert!(matches!(
            classify("staging/evaluations/chapter-010-eval-secondary.json"),
            Entry::Json {
                kind: FileKind::Evaluation,
                chapter: Some(10),
                ..
            }
        ));
        for review in [
            "staging/evaluations/chapter-010-repair.json",
            "evaluations/chapter-010-repair.json",
        ] {
            assert!(matches!(
                classify(review),
                Entry::Json {
                    kind: FileKind::RepairReview,
                    chapter: Some(10),
                    ..
                }
            ));
        }
        assert!(matches!(
            classify("staging/repairs/chapter-010-ending.md"),
            Entry::Other
        ));
        assert!(matches!(
            classify("staging/state/chapter-003-delta.json"),
            Entry::Json {
                kind: FileKind::StateDelta,
                chapter: Some(3),
                ..
            }
        ));
        assert_eq!(
            classify("volumes/vol-03/outline.md"),
            Entry::Outline { volume: Some(3) }
        );
        assert_eq!(classify("world/geography.md"), Entry::Other);
        assert_eq!(
            classify("staging/storylines/main_arc/memory.md"),
            Entry::Other
        );
    }
}
