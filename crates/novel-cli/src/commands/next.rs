//! `novel next`: the recommended next step — the same decision the SessionStart hook
//! announces ([`novel_core::next::recommend`]), for skills to obey between steps — and the menu
//! of `/novel:start` ([`novel_core::menu`], `docs/orchestration.md` §2). Outside a project it
//! succeeds with `project: null` and the no-project menu.

use std::path::Path;

use serde::Serialize;

use novel_core::menu::{self, Menu, MenuFacts, MenuOption, OptionId, ReviewDue};
use novel_core::next::Recommendation;
use novel_core::quickstart::QuickStartStatus;
use novel_store::next::next_view;
use novel_store::{Project, StoreError};

use crate::args::GlobalArgs;
use crate::installed::{VersionMismatch, version_mismatch};
use crate::output::{CliError, Exit, Report, to_data};

/// `novel next`'s `--json` data (`project` null outside a project).
#[derive(Serialize)]
struct NextData<'a> {
    project: Option<String>,
    recommendation: &'a Recommendation,
    options: &'a [MenuOption],
    recommended: OptionId,
    quick_start: Option<&'a QuickStartStatus>,
    reviews: Reviews<'a>,
    volume: Option<VolumeData>,
    skipped_deltas: &'a [u32],
    recommend_rebuild: bool,
    problems: &'a [String],
    /// The plugin's allow rules in the book's (outside a project: the working directory's)
    /// `.claude/settings.local.json` (`novel permissions`).
    permissions: PermissionsState,
    /// The working directory, and whether it holds nothing but dot entries (`.claude/`, `.git`):
    /// a folder made for a new book, which `novel init` can take as the book's directory.
    cwd: String,
    cwd_empty: bool,
    /// Outside a project: the books in the working directory's direct subfolders (a book made
    /// in 「当前目录/书名」), so a session started one folder up still finds it.
    books_below: Vec<String>,
    /// The plugin was updated and this binary was not (null when they agree).
    version_mismatch: Option<&'a VersionMismatch>,
    /// The model of every part of the book (`novel models`; null outside a project): each
    /// agent is dispatched with its own.
    models: Option<indexmap::IndexMap<String, String>>,
}

/// The direct subfolders of `dir` that are books (hold `.checkpoint.json`), sorted.
fn books_below(dir: &Path) -> Vec<String> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut books: Vec<String> = entries
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.join(novel_store::layout::CHECKPOINT).is_file())
        .map(|p| p.to_string_lossy().into_owned())
        .collect();
    books.sort();
    books
}

/// Nothing in `dir` but entries whose names start with a dot.
fn only_dot_entries(dir: &Path) -> bool {
    std::fs::read_dir(dir).is_ok_and(|entries| {
        entries
            .filter_map(Result::ok)
            .all(|e| e.file_name().to_string_lossy().starts_with('.'))
    })
}

/// Which allow rules the user settings lack, and whether the rules are in force for the
/// session (`docs/orchestration.md` §2).
#[derive(Serialize)]
struct PermissionsState {
    /// The user settings file the allow rules go to.
    file: String,
    missing: Vec<String>,
    /// Why a settings file could not be read as settings (then nothing is written to it).
    #[serde(skip_serializing_if = "Option::is_none")]
    problem: Option<String>,
    /// The session's folder (where the client was started): the write rule covers it.
    session_dir: String,
    /// Every rule is in the user settings and the client takes them now.
    in_force: bool,
    /// The user settings' folder existed when the client started; null outside a client or
    /// where the filesystem records no creation time.
    watched: Option<bool>,
    /// What keeps the rules out: `not_written`, `not_watched` (null: in force).
    blocker: Option<novel_core::permissions::Blocker>,
    /// What to tell the author then (the one way that works now).
    advice: Option<&'static str>,
}

fn permissions_state(dir: &Path) -> PermissionsState {
    let session = super::permissions::session_dir();
    let (file, missing, problem) = match super::permissions::missing_rules(dir, &session) {
        Ok(rules) => (rules.user_file.unwrap_or_default(), rules.missing, None),
        Err(e) => (
            novel_store::permissions::user_settings_file().unwrap_or_default(),
            novel_core::permissions::wanted(super::permissions::plugin_root().as_deref(), &[]),
            Some(e.message),
        ),
    };
    let standing = novel_store::permissions::standing(problem.is_none() && missing.is_empty());
    PermissionsState {
        file: file.to_string_lossy().into_owned(),
        missing,
        problem,
        session_dir: session.to_string_lossy().into_owned(),
        in_force: standing.in_force(),
        watched: standing.watched,
        blocker: standing.blocker(),
        advice: standing
            .blocker()
            .map(novel_core::permissions::Blocker::advice),
    }
}

/// The periodic reviews due.
#[derive(Serialize)]
struct Reviews<'a> {
    due: &'a [ReviewDue],
}

/// The current volume and its planned range, with where that came from.
#[derive(Serialize)]
struct VolumeData {
    current: u32,
    range: Option<[u32; 2]>,
    range_source: Option<&'static str>,
}

fn human(
    r: &Recommendation,
    m: &Menu,
    problems: &[String],
    mismatch: Option<&VersionMismatch>,
) -> String {
    let mut out = String::new();
    if let Some(v) = mismatch {
        out.push_str(&format!("先更新程序：{}。\n", v.sentence()));
    }
    out.push_str(&format!(
        "下一步：{}\n原因：{}\n之后：{}\n",
        r.command, r.reason, r.then
    ));
    for n in &r.notes {
        out.push_str(&format!("注意：{n}\n"));
    }
    out.push_str(&menu::render(m));
    for p in problems {
        out.push_str(&format!("文件问题：{p}\n"));
    }
    out
}

fn no_project(cwd: &Path, mismatch: Option<&VersionMismatch>) -> Result<Report, CliError> {
    let r = menu::no_project_recommendation();
    let m = menu::no_project_menu();
    let data = NextData {
        project: None,
        recommendation: &r,
        options: &m.options,
        recommended: m.recommended,
        quick_start: None,
        reviews: Reviews { due: &[] },
        volume: None,
        skipped_deltas: &[],
        recommend_rebuild: false,
        problems: &[],
        permissions: permissions_state(cwd),
        cwd: cwd.to_string_lossy().into_owned(),
        cwd_empty: only_dot_entries(cwd),
        books_below: books_below(cwd),
        version_mismatch: mismatch,
        models: None,
    };
    Ok(Report {
        data: to_data(&data)?,
        human: human(&r, &m, &[], mismatch),
    })
}

pub fn run(global: &GlobalArgs) -> Result<Report, CliError> {
    let cwd = std::env::current_dir().unwrap_or_else(|_| Path::new(".").into());
    let mismatch = version_mismatch();
    let found = match &global.project {
        Some(dir) => Project::open(dir),
        None => Project::discover(&cwd),
    };
    let project = match found {
        Ok(p) => p,
        Err(StoreError::NotAProject { .. }) => return no_project(&cwd, mismatch.as_ref()),
        Err(e) => return Err(e.into()),
    };
    let view = next_view(&project);
    let facts = &view.facts;
    let Some(cp) = facts.checkpoint.as_ref() else {
        return Err(CliError::new(
            "E_CHECKPOINT",
            format!(
                ".checkpoint.json 无法读取：{}",
                facts.checkpoint_problem.as_deref().unwrap_or("未知原因")
            ),
            "运行 novel validate 查看问题；断点文件损坏时按提示修复后再继续",
            Exit::Usage,
        ));
    };
    let mut r = novel_core::next::recommend(cp, &facts.disk);
    // In the quick start, what is left comes from its steps, not a fixed sentence.
    if r.action == novel_core::next::NextAction::Start
        && let Some(q) = &view.quick_start
    {
        r.then = q.remaining();
    }
    let m = menu::menu(&MenuFacts {
        checkpoint: cp,
        disk: &facts.disk,
        quick_start: view.quick_start.as_ref(),
        reviews_due: &view.reviews_due,
        volume_outline: view.volume_outline,
        volume_start: view.volume.as_ref().map(|s| s.range[0]),
    });
    let data = NextData {
        project: Some(project.root.to_string_lossy().into_owned()),
        recommendation: &r,
        options: &m.options,
        recommended: m.recommended,
        quick_start: view.quick_start.as_ref(),
        reviews: Reviews {
            due: &view.reviews_due,
        },
        volume: Some(VolumeData {
            current: cp.current_volume,
            range: view.volume.as_ref().map(|s| s.range),
            range_source: view.volume.as_ref().map(|s| s.range_source),
        }),
        skipped_deltas: &facts.disk.skipped_deltas,
        recommend_rebuild: novel_core::ops::recommend_rebuild(&facts.disk.skipped_deltas),
        problems: &facts.problems,
        permissions: permissions_state(&project.root),
        cwd: cwd.to_string_lossy().into_owned(),
        cwd_empty: only_dot_entries(&cwd),
        books_below: Vec::new(),
        version_mismatch: mismatch.as_ref(),
        models: Some(super::models::of_project(&project).models),
    };
    Ok(Report {
        data: to_data(&data)?,
        human: human(&r, &m, &facts.problems, mismatch.as_ref()),
    })
}
