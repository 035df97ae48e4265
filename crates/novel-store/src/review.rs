//! What the periodic reviews read (`docs/orchestration.md` §8) and where their reports go:
//! the gate figures of a window of chapters ([`crate::figures`]' per-chapter figures, the
//! same status and the dashboard show), their
//! evaluations, the foreshadowing inventory, a volume's foreshadowing completion and storyline
//! appearances. The figures are `novel_core::review`'s; the CLI adds the text checks and writes
//! the report with [`write_report`].
//!
//! Layer: commands — the work behind a command (stages, volumes, spec, reviews, import, export, the
//! guard); the top.

use std::collections::BTreeMap;

use novel_core::model::{
    Evaluation, ForeshadowingGlobal, Settings, StorylineSchedule, VolumeForeshadowing,
};
use novel_core::review::{self, ChapterScore, Completion, Inventory, LineAppearances, Quality};
use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::error::StoreError;
use crate::figures::{ChapterSet, TextRules, Wanted, chapters_of, committed_chapters};
use crate::io::{create_dir_all, read_text, write_json};
use crate::layout;
use crate::project::Project;
use crate::volumes::Volumes;

/// A file parsed with serde: `None` when absent or unreadable (then a problem is listed).
fn load<T: DeserializeOwned>(
    project: &Project,
    rel: &str,
    problems: &mut Vec<String>,
) -> Option<T> {
    match read_text(&project.path(rel)) {
        Ok(t) => match serde_json::from_str(&t) {
            Ok(v) => Some(v),
            Err(e) => {
                problems.push(format!("{rel} 无法解析：{e}"));
                None
            }
        },
        Err(StoreError::Io { source, .. }) if source.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => {
            problems.push(format!("{rel} 无法读取：{e}"));
            None
        }
    }
}

/// The quality part of a review over `[first, last]` (committed chapters only), with the
/// files that could not be read.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct QualityPart {
    pub quality: Quality,
    pub problems: Vec<String>,
}

/// The committed chapters of `[first, last]`.
pub fn committed_in(project: &Project, range: [u32; 2]) -> Vec<u32> {
    committed_chapters(project)
        .into_iter()
        .filter(|c| range[0] <= *c && *c <= range[1])
        .collect()
}

/// The figures of the committed chapters of `range` ([`crate::figures`]), with the settings
/// they were read with.
fn figures_in(project: &Project, range: [u32; 2], rules: &TextRules<'_>) -> (Settings, ChapterSet) {
    let mut settings_problem = None;
    let settings = crate::settings::load(project).unwrap_or_else(|e| {
        settings_problem = Some(e.to_string());
        Settings::default()
    });
    let chapters = committed_in(project, range);
    let volumes = Volumes::load(project, None, &mut Vec::new());
    let mut set = chapters_of(
        project,
        &settings,
        &volumes,
        &chapters,
        rules,
        Wanted::default(),
    );
    set.problems.extend(settings_problem);
    (settings, set)
}

/// Scores, chapters under the pass threshold and why, recurring low dimensions over `range`.
/// `rules` measure a chapter text (only for chapters whose log lacks its 字数).
pub fn quality(project: &Project, range: [u32; 2], rules: &TextRules<'_>) -> QualityPart {
    let (settings, set) = figures_in(project, range, rules);
    let mut problems = set.problems;
    let mut evaluations: BTreeMap<u32, Evaluation> = BTreeMap::new();
    for n in set.chapters.iter().map(|f| f.chapter) {
        if let Some(e) = load(project, &layout::evaluation_file(n), &mut problems) {
            evaluations.insert(n, e);
        }
    }
    let scores: Vec<ChapterScore> = set
        .chapters
        .iter()
        .map(|f| ChapterScore {
            chapter: f.chapter,
            score: f.score,
            decision: f.decision,
            revisions: f.revisions,
            force_passed: f.force_passed,
        })
        .collect();
    let mut quality = review::quality(range, scores, &evaluations, &settings.gate);
    // A suggestion already on the list (or whitelisted) is nothing to decide.
    if let Ok((list, _)) = crate::select::load_blacklist(Some(project)) {
        quality.blacklist_suggestions.retain(|s| {
            !list.entries.iter().any(|e| e.phrase.trim() == s.phrase)
                && !list.whitelist.iter().any(|w| w.trim() == s.phrase)
        });
    }
    QualityPart { quality, problems }
}

/// 伏笔盘点 at the last completed chapter.
pub fn inventory(project: &Project, last: u32, problems: &mut Vec<String>) -> Inventory {
    let global: ForeshadowingGlobal = load(project, layout::FORESHADOWING_GLOBAL, problems)
        .unwrap_or(ForeshadowingGlobal {
            foreshadowing: Vec::new(),
            extra: Default::default(),
        });
    review::inventory(&global, last)
}

/// A volume's foreshadowing completion and its storylines' appearances against its schedule.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct VolumePart {
    pub foreshadowing_completion: Completion,
    pub storyline_rhythm: Vec<LineAppearances>,
}

pub fn volume_part(
    project: &Project,
    v: u32,
    range: [u32; 2],
    rules: &TextRules<'_>,
    problems: &mut Vec<String>,
) -> VolumePart {
    let vdir = layout::volume_dir(v);
    let plan: Option<VolumeForeshadowing> =
        load(project, &format!("{vdir}/foreshadowing.json"), problems);
    let global: Option<ForeshadowingGlobal> = load(project, layout::FORESHADOWING_GLOBAL, problems);
    let schedule: Option<StorylineSchedule> = load(
        project,
        &format!("{vdir}/storyline-schedule.json"),
        problems,
    );
    let (_, set) = figures_in(project, range, rules);
    problems.extend(set.problems);
    let appearances: BTreeMap<u32, String> = set
        .chapters
        .into_iter()
        .filter_map(|f| f.storyline.map(|l| (f.chapter, l)))
        .collect();
    VolumePart {
        foreshadowing_completion: review::completion(plan.as_ref(), global.as_ref(), range[1]),
        storyline_rhythm: review::line_appearances(schedule.as_ref(), &appearances, range),
    }
}

/// Writes a review report (`logs/reviews/…`) atomically.
pub fn write_report<T: Serialize>(
    project: &Project,
    rel: &str,
    report: &T,
) -> Result<(), StoreError> {
    let _guard = crate::lock::guard(project)?;
    let path = project.path(rel);
    if let Some(dir) = path.parent() {
        create_dir_all(dir)?;
    }
    write_json(&path, report)
}
