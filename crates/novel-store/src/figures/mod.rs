//! The book's figures, computed in one place (a derived fact, read-only): per committed
//! chapter its 字数, score, gate figures, storyline, volume, date and what each stage used and
//! cost; for the book the 字数 in total and per volume, the scores (average, recent, trend, per
//! volume, the chapters under the pass line), the cost and tokens, the foreshadowing counts,
//! the style drift verdict and the one-line headline. `novel status`, the dashboard, the
//! reviews and `novel next` read these and compute none of them again, so they never disagree.
//!
//! Layer: facts. It reads the project's files (each once) and writes nothing; it may
//! import the ground (io, layout, settings, project) and the other derived facts
//! ([`crate::volumes`]), never a command that writes and never a view. The chapter texts are
//! measured by the caller's rules ([`TextRules`], `novel-text`'s), so this crate segments no
//! Chinese itself.
//!
//! Tolerant: a file that cannot be read or parsed is a problem (`problems`, and by chapter in
//! [`Missing`]), and the rest is still counted.

mod chapter;
pub mod drift;
pub mod summary;
mod usage;

use novel_core::drift::StyleSample;
use novel_core::model::{Checkpoint, ForeshadowingGlobal, Settings};

pub use chapter::{ChapterFigures, LogState, Missing};
pub use drift::DriftFigure;
pub use summary::{
    Chars, Foreshadowing, RECENT_SCORES, ScoredChapter, Scores, VolumeChars, VolumeScores,
};
pub use usage::{PipelineSums, StageUsage, stage_usage};

use crate::layout;
use crate::project::Project;
use crate::volumes::Volumes;

pub use novel_core::model::pipeline_log::{LOG_ACCEPTED_BY_AUTHOR, LOG_CHARS, LOG_GATE_OVERALL};

/// What the figures need of `novel-text` (the store measures no Chinese itself).
#[derive(Clone, Copy)]
pub struct TextRules<'a> {
    /// 字数 of a chapter text (`novel_text::count`).
    pub count: &'a (dyn Fn(&str) -> usize + Sync),
    /// What the style drift rule reads of a chapter text (`novel_text::metrics::sample`).
    pub style: &'a (dyn Fn(&str) -> StyleSample + Sync),
}

/// What to read beyond what every surface needs.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Wanted {
    /// Every chapter's eight dimension scores (the dashboard's quality chart).
    pub dimensions: bool,
}

/// Everything the surfaces show of the book's figures.
#[derive(Debug, Clone)]
pub struct BookFigures {
    pub last_completed: u32,
    pub volumes: Volumes,
    /// The committed chapters (`chapters/chapter-NNN.md`), in order.
    pub chapters: Vec<ChapterFigures>,
    pub chars: Chars,
    pub scores: Scores,
    pub pipeline: PipelineSums,
    pub foreshadowing: Foreshadowing,
    pub drift: DriftFigure,
    /// `第2卷 第51/50章（超出） 总15.2万字 均分3.7 未回收伏笔3个`.
    pub headline: String,
    pub missing: Missing,
    /// Files that could not be read or parsed (path and why).
    pub problems: Vec<String>,
}

/// Committed chapter numbers (`chapters/chapter-NNN.md`), sorted.
pub fn committed_chapters(project: &Project) -> Vec<u32> {
    let mut out: Vec<u32> = crate::io::dir_names(&project.path("chapters"))
        .map(|names| {
            names
                .iter()
                .filter_map(|name| novel_core::naming::chapter_in_name(name, ".md"))
                .collect()
        })
        .unwrap_or_default();
    out.sort_unstable();
    out
}

/// Chapters' figures and what could not be read of them.
#[derive(Debug, Clone, Default)]
pub struct ChapterSet {
    pub chapters: Vec<ChapterFigures>,
    pub missing: Missing,
    /// Files that could not be read or parsed (path and why).
    pub problems: Vec<String>,
}

/// The figures of `chapters` (committed chapters, in order), read with `settings`; `volumes`
/// places each in its volume.
pub fn chapters_of(
    project: &Project,
    settings: &Settings,
    volumes: &Volumes,
    chapters: &[u32],
    rules: &TextRules<'_>,
    wanted: Wanted,
) -> ChapterSet {
    let reader = chapter::Reader {
        project,
        settings,
        count: rules.count,
        dimensions: wanted.dimensions,
    };
    let mut set = ChapterSet::default();
    set.chapters = chapters
        .iter()
        .map(|&n| reader.chapter(n, volumes.volume_of(n), &mut set.problems, &mut set.missing))
        .collect();
    chapter::fill_storylines(project, &mut set.chapters);
    set
}

/// Gathers the book's figures. `settings` and `checkpoint` are the caller's (read with its
/// own tolerance); a missing checkpoint counts the chapters on disk.
pub fn gather(
    project: &Project,
    settings: &Settings,
    checkpoint: Option<&Checkpoint>,
    rules: &TextRules<'_>,
    wanted: Wanted,
) -> BookFigures {
    let mut problems = Vec::new();
    let committed = committed_chapters(project);
    let last_completed = checkpoint.map_or(committed.last().copied().unwrap_or(0), |c| {
        c.last_completed_chapter
    });
    let volumes = Volumes::load(project, checkpoint.map(Checkpoint::volume), &mut problems);
    let ChapterSet {
        chapters,
        missing,
        problems: unread,
    } = chapters_of(project, settings, &volumes, &committed, rules, wanted);
    problems.extend(unread);
    let mut pipeline = PipelineSums::default();
    for f in chapters.iter().filter(|f| f.log == LogState::Read) {
        pipeline.add(&f.stages, f.revisions, f.force_passed);
    }
    let global = match chapter::load::<ForeshadowingGlobal>(project, layout::FORESHADOWING_GLOBAL) {
        Ok(g) => g,
        Err(p) => {
            problems.push(p);
            None
        }
    };
    let recorded = chapter::load(project, layout::STYLE_DRIFT).ok().flatten();
    let drift = drift::figure(&drift::check(project, rules.style), recorded.as_ref());
    let chars = summary::chars(&chapters, missing.counted_from_text);
    let scores = summary::scores(&chapters, settings.gate.pass);
    let foreshadowing = summary::foreshadowing(global.as_ref(), last_completed);
    let headline = headline(&volumes, last_completed, &chars, &scores, &foreshadowing);
    BookFigures {
        last_completed,
        volumes,
        chapters,
        chars,
        scores,
        pipeline: pipeline.rounded(),
        foreshadowing,
        drift,
        headline,
        missing,
        problems,
    }
}

/// The headline: the volume the last completed chapter belongs to (the current volume before
/// the first chapter) and how far into its plan the book is.
fn headline(
    volumes: &Volumes,
    last: u32,
    chars: &Chars,
    scores: &Scores,
    foreshadowing: &Foreshadowing,
) -> String {
    // An unreadable checkpoint: `第?卷`.
    let volume = volumes.current.map(|current| {
        if last == 0 {
            current
        } else {
            volumes.volume_of(last)
        }
    });
    let end = volume.and_then(|v| volumes.span(v)).map(|s| s.range[1]);
    novel_core::status::headline(
        volume,
        last,
        end,
        chars.total,
        scores.average,
        foreshadowing.open,
    )
}
