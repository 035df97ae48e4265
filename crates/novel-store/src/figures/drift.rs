//! The style drift verdict (风格校准), computed in one place: the last `style_drift.window`
//! committed chapters up to the last completed one, measured by the caller's text rule
//! ([`novel_core::drift::StyleSample`] per chapter), against the `style-profile.json` baseline
//! and the drift on record, by [`novel_core::drift::assess`]. `novel style drift` records it,
//! the reviews report it, status and the dashboard print it.

use novel_core::drift::{DriftAssessment, DriftStatus, StyleSample};
use novel_core::model::style::{DriftMetric, StyleDrift, StyleProfile};
use serde::Serialize;

use crate::error::StoreError;
use crate::io::read_text;
use crate::layout;
use crate::project::Project;

/// What the style drift check reads.
#[derive(Debug, Clone)]
pub struct DriftSources {
    pub thresholds: novel_core::model::settings::DriftThresholds,
    /// The committed chapters of the window (the last `style_drift.window` up to the last
    /// completed one) with their text, in order; never empty.
    pub chapters: Vec<(u32, String)>,
    pub profile: StyleProfile,
    /// `style-drift.json`, when there is one.
    pub existing: Option<StyleDrift>,
}

/// Why there is nothing to compare.
#[derive(Debug, thiserror::Error)]
pub enum DriftError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("还没有已提交的章节，无法检测风格漂移")]
    NoChapter,
    #[error("没有可比较的风格基线：没有 style-profile.json")]
    NoProfile,
    #[error(
        "没有可比较的风格基线：style-profile.json 中 avg_sentence_length 与 dialogue_ratio 都为空或为 0"
    )]
    NoBaseline,
}

impl DriftError {
    pub fn code(&self) -> &'static str {
        match self {
            DriftError::Store(e) => e.code(),
            DriftError::NoChapter => "E_NO_CHAPTER",
            DriftError::NoProfile | DriftError::NoBaseline => "E_NO_BASELINE",
        }
    }

    pub fn hint(&self) -> String {
        match self {
            DriftError::Store(e) => e.hint(),
            DriftError::NoChapter => "提交章节后再运行（流水线每 5 章运行一次）".into(),
            DriftError::NoProfile | DriftError::NoBaseline => NO_BASELINE_HINT.into(),
        }
    }

    /// Why there is no verdict, in the author's words.
    pub fn plain(&self) -> &'static str {
        match self {
            DriftError::Store(_) => "最近几章的正文或设置读不了",
            DriftError::NoChapter => "还没有已提交的章节",
            DriftError::NoProfile | DriftError::NoBaseline => {
                "文风档案里还没有平均句长和对话占比的基线"
            }
        }
    }
}

/// How to give the drift check a baseline.
pub const NO_BASELINE_HINT: &str = "先用 novel style metrics 分析风格样章，由文风分析员把 avg_sentence_length 与 dialogue_ratio 写入 style-profile.json";

/// The last committed chapters, the baseline and the thresholds of the drift check.
pub fn drift_sources(proj: &Project) -> Result<DriftSources, DriftError> {
    let thresholds = crate::settings::load(proj)?.style_drift.clone();
    let checkpoint: novel_core::model::Checkpoint =
        crate::io::read_json(&proj.path(layout::CHECKPOINT), "断点文件")?;
    let last = checkpoint.last_completed_chapter;
    let first = last.saturating_sub(thresholds.window.max(1) - 1).max(1);
    let window: Vec<(u32, String)> = crate::select::committed_chapters(proj)?
        .into_iter()
        .filter(|(n, _)| (first..=last).contains(n))
        .collect();
    if last == 0 || window.is_empty() {
        return Err(DriftError::NoChapter);
    }
    let profile = crate::select::load_profile(Some(proj))?.ok_or(DriftError::NoProfile)?;
    let mut chapters = Vec::new();
    for (n, rel) in window {
        chapters.push((n, read_text(&proj.path(&rel))?));
    }
    let drift_path = proj.path(layout::STYLE_DRIFT);
    let existing = if drift_path.is_file() {
        Some(crate::io::read_json(&drift_path, "风格漂移")?)
    } else {
        None
    };
    Ok(DriftSources {
        thresholds,
        chapters,
        profile,
        existing,
    })
}

/// The drift check of a book: what was read and the verdict.
#[derive(Debug, Clone)]
pub struct DriftCheck {
    pub sources: DriftSources,
    /// The window's chapters and their first and last.
    pub chapters: Vec<u32>,
    pub window: [u32; 2],
    pub assessment: DriftAssessment,
}

/// The verdict over the last committed chapters; `style` measures one chapter text.
pub fn check(
    project: &Project,
    style: &(dyn Fn(&str) -> StyleSample + Sync),
) -> Result<DriftCheck, DriftError> {
    let sources = drift_sources(project)?;
    let samples: Vec<StyleSample> = sources.chapters.iter().map(|(_, t)| style(t)).collect();
    let chapters: Vec<u32> = sources.chapters.iter().map(|(n, _)| *n).collect();
    let window = [chapters[0], chapters[chapters.len() - 1]];
    let recorded = sources.existing.as_ref().is_some_and(|d| d.active);
    let assessment = novel_core::drift::assess(
        &sources.profile,
        &StyleSample::sum(&samples),
        &sources.thresholds,
        window,
        recorded,
    )
    .map_err(|_| DriftError::NoBaseline)?;
    Ok(DriftCheck {
        sources,
        chapters,
        window,
        assessment,
    })
}

/// The verdict as every surface shows it (`novel status`'s and the dashboard's `drift`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DriftFigure {
    /// `drifted` | `holding` | `recovered` | `stable`; `null` when it could not be measured.
    pub status: Option<DriftStatus>,
    /// The verdict in Chinese.
    pub label: String,
    pub window: Option<[u32; 2]>,
    pub metrics: Vec<DriftMetric>,
    pub directives: Vec<String>,
    /// A correction is on record (`style-drift.json` with `active: true`): the writer and
    /// the refiner follow its directives.
    pub correction_active: bool,
    /// Why there is no verdict (the author's words).
    pub unmeasured: Option<String>,
}

/// The verdict of a check (or why there is none), with the drift on record.
pub fn figure(
    check: &Result<DriftCheck, DriftError>,
    recorded: Option<&StyleDrift>,
) -> DriftFigure {
    let correction_active = recorded.is_some_and(|d| d.active);
    match check {
        Ok(c) => DriftFigure {
            status: Some(c.assessment.status),
            label: c.assessment.status.label().to_string(),
            window: Some(c.window),
            metrics: c.assessment.metrics.clone(),
            directives: c
                .assessment
                .drift
                .as_ref()
                .map_or_else(Vec::new, |d| d.directives.clone()),
            correction_active,
            unmeasured: None,
        },
        Err(e) => DriftFigure {
            status: None,
            label: "未检测".to_string(),
            window: None,
            metrics: Vec::new(),
            directives: Vec::new(),
            correction_active,
            unmeasured: Some(e.plain().to_string()),
        },
    }
}

/// A drift metric's name in the author's words.
pub fn metric_label(name: &str) -> &str {
    match name {
        "avg_sentence_length" => "平均句长",
        "dialogue_ratio" => "对话占比",
        other => other,
    }
}
