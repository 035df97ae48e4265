//! One subcommand = one module. Each `run` takes parsed arguments and returns a report or an
//! error; printing and exit codes are `output`'s job.
//!
//! What several commands share lives here, not in one of them: finding the project, resolving a
//! [`ChapterSelection`] through the store, mapping store errors, and the renderings shown by
//! more than one command (the names check).
//!
//! Layer: commands — the subcommands, each with its own arguments; below the command tree
//! (`cli`).

pub mod blacklist;
pub mod chapter;
pub mod check;
pub mod context;
pub mod count;
pub mod craft;
pub mod dashboard;
pub mod demo;
pub mod export;
pub mod finish;
pub mod help;
pub mod hook;
pub mod import;
pub mod init;
pub mod lint;
pub mod lock;
pub mod memory;
pub mod models;
pub mod next;
pub mod ops;
pub mod pending;
pub mod permissions;
pub mod prefs;
pub mod quickstart;
pub mod retire;
pub mod review;
pub mod revision;
pub mod spec;
pub mod state;
pub mod status;
pub mod style;
pub mod validate;
pub mod volume;

use std::path::Path;
use std::time::Duration;

use serde::Serialize;

use novel_core::diagnostic::Diagnostic;
use novel_core::ops::OpsError;
use novel_store::Project;
use novel_store::lock::LockError;
use novel_store::select::{Input, SelectError};
use novel_store::spec::SpecError;
use novel_text::finding::Evidence;
use novel_text::names::{NameIndex, NameIssueKind};
use novel_text::segment::Document;

use crate::args::{ChapterSelection, GlobalArgs};
use crate::output::{CliError, Exit};

/// The project of this invocation: `--project DIR`, or found from the working directory.
pub fn project(global: &GlobalArgs) -> Result<Project, CliError> {
    let found = match &global.project {
        Some(dir) => Project::open(dir),
        None => {
            Project::discover(&std::env::current_dir().unwrap_or_else(|_| Path::new(".").into()))
        }
    };
    Ok(found?)
}

/// The project of this invocation, if there is one (`--project` must be one).
pub(crate) fn find_project(global: &GlobalArgs) -> Result<Option<Project>, CliError> {
    match &global.project {
        Some(_) => project(global).map(Some),
        None => Ok(std::env::current_dir()
            .ok()
            .and_then(|cwd| Project::discover(&cwd).ok())),
    }
}

/// A selection that names no file (exit 2).
pub(crate) fn select_error(e: SelectError) -> CliError {
    CliError::new(e.code(), e.to_string(), e.hint(), Exit::Usage)
}

/// The files of a text command: given files (inside or outside a project), else chapters of the
/// project, which must then be found.
pub(crate) fn resolve_inputs(
    global: &GlobalArgs,
    select: &ChapterSelection,
) -> Result<(Option<Project>, Vec<Input>), CliError> {
    let mut found = find_project(global)?;
    if select.files.is_empty() && found.is_none() {
        found = Some(project(global)?);
    }
    let inputs =
        novel_store::select::resolve(found.as_ref(), select.selection()).map_err(select_error)?;
    Ok((found, inputs))
}

/// A plan check that could not run (exit 2: an unreadable changelog or checkpoint).
pub(crate) fn plan_error(e: novel_store::plan::PlanError) -> CliError {
    CliError::new(e.code(), e.to_string(), e.hint(), Exit::Usage)
}

/// The names check's `--json` data.
#[derive(Serialize)]
pub(crate) struct NamesReport {
    pub known_names: usize,
    pub known_entities: usize,
    pub files: Vec<String>,
    pub findings: Vec<NameFinding>,
}

/// One suspicious name where it is first seen: the finding, then the name as written, every
/// place it occurs, and the issue's kind (`kind`, and `of`/`like`, `entity`, `why`).
#[derive(Serialize)]
pub(crate) struct NameFinding {
    #[serde(flatten)]
    finding: Diagnostic,
    name: String,
    evidence: Vec<Evidence>,
    #[serde(flatten)]
    kind: NameIssueKind,
    /// How sure the finding is (`high`, `medium`, `low`).
    confidence: novel_text::names::Confidence,
}

/// The names check of `inputs` against the project's registered and setting names: the
/// `--json` data and the human lines. Shared by `check names` and the reviews.
pub(crate) fn names_report(
    project: Option<&Project>,
    inputs: &[Input],
) -> Result<(NamesReport, String), CliError> {
    let index = match project {
        Some(p) => NameIndex::with_entities(
            novel_text::names::known_names(&novel_store::names::name_sources(p)?),
            novel_text::names::entity_names(&novel_store::names::setting_sources(p)?),
        ),
        None => NameIndex::with_entities(Vec::new(), Vec::new()),
    };
    let mut human = String::new();
    let mut findings = Vec::new();
    for input in inputs {
        let doc = Document::new(&novel_store::io::read_text(&input.path)?);
        for issue in index.check(&doc) {
            let finding = issue.diagnostic(&doc).in_file(&input.shown);
            human.push_str(&finding.render());
            let evidence: Vec<Evidence> = issue
                .occurrences
                .iter()
                .map(|s| Evidence::of(&doc, *s))
                .collect();
            findings.push(NameFinding {
                finding,
                name: issue.name,
                evidence,
                kind: issue.kind,
                confidence: issue.confidence,
            });
        }
    }
    let data = NamesReport {
        known_names: index.names().len(),
        known_entities: index.entities().len(),
        files: inputs.iter().map(|i| i.shown.clone()).collect(),
        findings,
    };
    Ok((data, human))
}

fn count_chars(text: &str) -> usize {
    novel_text::count::count(text).chars
}

fn style_sample(text: &str) -> novel_core::drift::StyleSample {
    novel_text::metrics::sample(&Document::new(text))
}

/// The text rules the store's figures are measured with (`novel-text`'s 字数 and style
/// sample): every command that shows a figure of the book passes these.
pub(crate) fn text_rules() -> novel_store::figures::TextRules<'static> {
    novel_store::figures::TextRules {
        count: &count_chars,
        style: &style_sample,
    }
}

/// The style drift check ([`novel_store::figures::drift::check`], the one verdict status, the
/// dashboard, the reviews and `style drift` show), or why it could not run.
pub(crate) fn drift_check(
    proj: &Project,
) -> Result<novel_store::figures::drift::DriftCheck, CliError> {
    novel_store::figures::drift::check(proj, text_rules().style)
        .map_err(|e| CliError::new(e.code(), e.to_string(), e.hint(), Exit::Usage))
}

/// Staleness from the project settings (`novel.json` lock.stale_minutes, default 30); a
/// settings file that does not load is an error, not the default.
pub(crate) fn stale_after(project: &Project) -> Result<Duration, CliError> {
    Ok(novel_store::settings::load(project)?.lock.stale_after())
}

/// A lock that cannot be taken, kept or released (exit 3 for a conflict, else 2).
pub(crate) fn lock_error(e: LockError) -> CliError {
    if let LockError::Store(s) = e {
        return s.into();
    }
    let exit = if e.is_conflict() {
        Exit::Conflict
    } else {
        Exit::Usage
    };
    CliError::new(e.code(), e.to_string(), e.hint(), exit)
}

/// An ops-engine refusal (order, version, a delta that does not apply).
pub(crate) fn ops_error(e: OpsError) -> CliError {
    let exit = match e {
        OpsError::StateVersion { .. }
        | OpsError::ChapterOrder { .. }
        | OpsError::SkipOrder { .. }
        | OpsError::Diverged { .. }
        | OpsError::Repeated { .. } => Exit::Conflict,
        OpsError::Replay { .. } | OpsError::NotSkipped { .. } => Exit::Usage,
        OpsError::Delta { .. }
        | OpsError::Strict { .. }
        | OpsError::UnknownStoryline { .. }
        | OpsError::ChapterAhead { .. } => Exit::Problems,
    };
    CliError::new(e.code(), e.to_string(), e.hint(), exit)
}

/// Runs a standalone read-check-write of the state files under the project lock, so two of
/// them cannot both pass the version check. The lock is taken for this process and released
/// afterwards; when this session already holds it (a chapter pipeline), `f` runs inside that
/// lock. A lock held by anyone else is a conflict (exit 3, `E_LOCKED`) naming the holder.
pub(crate) fn with_state_lock<T>(
    project: &Project,
    f: impl FnOnce(&mut novel_store::lock::Held<'_>) -> Result<T, CliError>,
) -> Result<T, CliError> {
    let mut held =
        novel_store::lock::Held::take(project, stale_after(project)?).map_err(lock_error)?;
    let value = f(&mut held)?;
    held.release().map_err(lock_error)?;
    Ok(value)
}

/// Maps a store spec error to the CLI error shape and exit code.
pub(crate) fn spec_error(e: SpecError) -> CliError {
    let exit = if e.is_conflict() {
        Exit::Conflict
    } else if matches!(e, SpecError::Blocked(_)) {
        Exit::Problems
    } else {
        Exit::Usage
    };
    CliError::new(e.code(), e.to_string(), e.hint(), exit)
}
