//! `novel init`: lay down a new project (PRD §9.1) from the plugin's templates.
//!
//! The templates are compiled into the binary from `templates/`, so a project never refers
//! back to the plugin. The project is first built in a hidden sibling directory and then
//! moved into place, `.checkpoint.json` last: an interrupted init never looks like a project,
//! and nothing that already exists is ever overwritten.
//!
//! Layer: writers — the state, the memory, the preferences and the chapter commit, written through
//! the journal; above the readers.

use std::fs;
use std::path::{Path, PathBuf};

use novel_core::model::checkpoint::{Checkpoint, OrchestratorState};
use novel_core::model::storyline::{Storyline, StorylineScope, StorylineStatus, Storylines};
use novel_core::model::{CurrentState, Extra, Settings};
use serde_json::json;

use crate::error::StoreError;
use crate::io::{create_dir_all, sync_dir, to_json_text};
use crate::layout;
use crate::time::now_iso;

pub const BRIEF_TEMPLATE: &str = include_str!("../../../templates/brief-template.md");
pub const STYLE_PROFILE_TEMPLATE: &str =
    include_str!("../../../templates/style-profile-template.json");
pub const AI_BLACKLIST_TEMPLATE: &str = include_str!("../../../templates/ai-blacklist.json");
pub const STORYLINE_SPEC_TEMPLATE: &str = include_str!("../../../templates/storyline-spec.json");

/// The style presets of PRD §7 (预置模板), by file stem.
pub const STYLE_PRESETS: [(&str, &str); 5] = [
    (
        "qingsong-youmo",
        include_str!("../../../templates/style-presets/qingsong-youmo.json"),
    ),
    (
        "rexue-shaonian",
        include_str!("../../../templates/style-presets/rexue-shaonian.json"),
    ),
    (
        "xini-yanqing",
        include_str!("../../../templates/style-presets/xini-yanqing.json"),
    ),
    (
        "lengjun-xuanyi",
        include_str!("../../../templates/style-presets/lengjun-xuanyi.json"),
    ),
    (
        "gufeng-quanmou",
        include_str!("../../../templates/style-presets/gufeng-quanmou.json"),
    ),
];

/// The preset's text, if `name` is one.
pub fn style_preset(name: &str) -> Option<&'static str> {
    STYLE_PRESETS
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, t)| *t)
}

/// PRD §9.1 directories beyond the engine's own [`layout::DIRS`]: places for the author's
/// material that the engine never reads (`prompts/`: the author's prompt templates).
const AUTHOR_DIRS: [&str; 1] = ["prompts"];

/// Every directory a new project starts with.
fn project_dirs() -> impl Iterator<Item = &'static str> {
    layout::DIRS.iter().chain(AUTHOR_DIRS.iter()).copied()
}

/// The id of the one storyline a new project starts with (PRD §6 Layer 1, step 1c).
pub const MAIN_STORYLINE: &str = "main_arc";

#[derive(Debug, Clone, Default)]
pub struct InitOptions {
    pub title: Option<String>,
    pub genre: Option<String>,
    /// A style preset (file stem in `templates/style-presets/`) to start `style-profile.json` from.
    pub style: Option<String>,
}

/// What was created, for the report.
#[derive(Debug, Clone)]
pub struct InitReport {
    pub root: PathBuf,
    /// The state the new project starts in (QUICK_START).
    pub orchestrator_state: OrchestratorState,
    pub files: Vec<String>,
    pub dirs: Vec<String>,
}

/// Every file of a new project, as (relative path, content).
pub fn project_files(opts: &InitOptions, now: &str) -> Vec<(String, String)> {
    let title = opts
        .title
        .clone()
        .unwrap_or_else(|| "未命名小说".to_string());
    let genre = opts.genre.clone().unwrap_or_else(|| "待定".to_string());
    let mut files = author_files(opts, &title, &genre, now);
    files.extend(world_and_cast_files());
    files.extend(storyline_files());
    files.extend(state_files());
    // Last: its presence is what makes the directory a project.
    files.push((
        layout::CHECKPOINT.into(),
        to_json_text(&initial_checkpoint(now)),
    ));
    files
}

/// A Markdown file that is only a heading and a note on what goes in it.
fn placeholder_doc(heading: &str, note: &str) -> String {
    format!("# {heading}\n\n<!-- {note} -->\n")
}

/// `novel.json`, the brief, the style profile (from the preset, if any) and the AI blacklist.
fn author_files(opts: &InitOptions, title: &str, genre: &str, now: &str) -> Vec<(String, String)> {
    let settings = Settings {
        title: Some(title.to_string()),
        genre: Some(genre.to_string()),
        created_at: Some(now.to_string()),
        ..Settings::default()
    };
    // The 题材预设 the genre chooses, written out so the author sees it and can change it.
    let preset = novel_core::genre::preset_for_book(None, Some(genre)).name;
    let brief = BRIEF_TEMPLATE
        .replace("{{title}}", title)
        .replace("{{genre}}", genre)
        .replace("{{preset}}", preset);
    let style = opts
        .style
        .as_deref()
        .and_then(style_preset)
        .unwrap_or(STYLE_PROFILE_TEMPLATE);
    vec![
        (layout::SETTINGS.into(), to_json_text(&settings)),
        (layout::BRIEF.into(), brief),
        (layout::STYLE_PROFILE.into(), style.to_string()),
        (
            layout::AI_BLACKLIST.into(),
            AI_BLACKLIST_TEMPLATE.to_string(),
        ),
    ]
}

/// The world documents, the (empty) world rules and relationships, and the character change
/// log.
fn world_and_cast_files() -> Vec<(String, String)> {
    vec![
        (
            "world/geography.md".into(),
            placeholder_doc("地理", "世界观设定师维护：地域、势力分布、重要地点"),
        ),
        (
            "world/history.md".into(),
            placeholder_doc("历史", "世界观设定师维护：纪年、重大事件、传说"),
        ),
        (
            "world/rules.md".into(),
            placeholder_doc(
                "世界规则（叙述版）",
                "可验证的规则同时抽取到 world/rules.json（L1）",
            ),
        ),
        (
            "world/changelog.md".into(),
            placeholder_doc(
                "世界观变更记录",
                "每次增量更新追加一条：日期、变更内容、原因",
            ),
        ),
        (
            layout::WORLD_RULES.into(),
            to_json_text(&json!({"rules": []})),
        ),
        (
            layout::RELATIONSHIPS.into(),
            to_json_text(&json!({"relationships": []})),
        ),
        (
            "characters/changelog.md".into(),
            placeholder_doc("角色变更记录", "新增、更新、退场角色时追加一条"),
        ),
    ]
}

/// The storylines (the main arc only), the storyline spec and the main arc's memory.
fn storyline_files() -> Vec<(String, String)> {
    vec![
        (
            layout::STORYLINES.into(),
            to_json_text(&initial_storylines()),
        ),
        (
            layout::STORYLINE_SPEC.into(),
            STORYLINE_SPEC_TEMPLATE.to_string(),
        ),
        (
            format!("storylines/{MAIN_STORYLINE}/memory.md"),
            "# 主线 · 故事线记忆\n\n<!-- ≤500 字关键事实，摘要员每章更新 -->\n".to_string(),
        ),
    ]
}

/// The initial state, an empty state changelog and the (empty) global foreshadowing.
fn state_files() -> Vec<(String, String)> {
    vec![
        (
            layout::CURRENT_STATE.into(),
            to_json_text(&CurrentState::initial_value()),
        ),
        (layout::CHANGELOG.into(), String::new()),
        (
            layout::FORESHADOWING_GLOBAL.into(),
            to_json_text(&json!({"foreshadowing": []})),
        ),
    ]
}

/// The checkpoint of a new project: quick start, volume 1, nothing written.
fn initial_checkpoint(now: &str) -> Checkpoint {
    Checkpoint {
        last_completed_chapter: 0,
        current_volume: 1,
        orchestrator_state: OrchestratorState::QuickStart,
        pipeline_stage: None,
        inflight_chapter: None,
        revision_count: 0,
        pending_actions: Vec::new(),
        last_checkpoint_time: Some(now.to_string()),
        gate: None,
        quick_start: None,
        error: None,
        spec_propagation_seq: None,
        extra: Extra::new(),
    }
}

/// The one storyline a new project starts with, [`MAIN_STORYLINE`], and the default types.
fn initial_storylines() -> Storylines {
    Storylines {
        storylines: vec![Storyline {
            id: MAIN_STORYLINE.to_string(),
            name: "主线".to_string(),
            kind: "main_arc".to_string(),
            scope: StorylineScope::Novel,
            pov_characters: Vec::new(),
            affiliated_factions: Vec::new(),
            timeline: Some("present".to_string()),
            status: StorylineStatus::Active,
            introduced_volume: Some(1),
            description: Some(
                "核心成长线（快速起步时默认创建，后续卷规划可增加副线/暗线）".to_string(),
            ),
            extra: Extra::new(),
        }],
        relationships: Vec::new(),
        storyline_types: novel_core::model::storyline::DEFAULT_STORYLINE_TYPES
            .iter()
            .map(|s| s.to_string())
            .collect(),
        extra: Extra::new(),
    }
}

/// The top-level names a new project occupies.
fn top_level_names(files: &[(String, String)]) -> Vec<String> {
    let mut names: Vec<String> = files
        .iter()
        .map(|(p, _)| p.as_str())
        .chain(project_dirs().map(|d| -> &str { d }))
        .map(|p| p.split('/').next().unwrap_or(p).to_string())
        .collect();
    names.sort();
    names.dedup();
    names
}

/// Why `root` cannot take a new project: a name the project needs is taken, `root` is inside a
/// project already, or `root` holds the author's own files (hidden entries such as `.claude/`,
/// written by `novel permissions --write` before the book exists, do not count).
fn refuse_occupied(root: &Path, names: &[String]) -> Result<(), StoreError> {
    let mut conflicts: Vec<String> = names
        .iter()
        .filter(|n| root.join(n).symlink_metadata().is_ok())
        .cloned()
        .collect();
    if conflicts.is_empty()
        && let Ok(outer) = crate::project::Project::discover(root)
    {
        conflicts.push(format!("上级目录已是项目：{}", outer.root.display()));
    }
    if !conflicts.is_empty() {
        return Err(StoreError::ProjectExists {
            dir: root.to_path_buf(),
            conflicts,
        });
    }
    let mut own: Vec<String> = match fs::read_dir(root) {
        Ok(entries) => entries
            .filter_map(Result::ok)
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| !n.starts_with('.'))
            .collect(),
        Err(_) => Vec::new(),
    };
    if own.is_empty() {
        return Ok(());
    }
    own.sort();
    let more = own.len().saturating_sub(5);
    own.truncate(5);
    if more > 0 {
        own.push(format!("等共 {} 项", own.len() + more));
    }
    Err(StoreError::FolderNotEmpty {
        dir: root.to_path_buf(),
        entries: own,
    })
}

/// Creates a new project in `dir` (created if missing). Refuses if anything it would create
/// already exists there, if `dir` is already inside a project, or if `dir` holds other files.
pub fn init_project(dir: &Path, opts: &InitOptions) -> Result<InitReport, StoreError> {
    init_then(dir, opts, |_| Ok::<(), StoreError>(())).map(|(report, ())| report)
}

/// [`init_project`], with `fill` run on the new project while it is still private — built in
/// `.novel-init-<pid>-…` beside `dir` — so the book appears with everything `fill` wrote, or
/// not at all (`novel import` into a new directory). A writer killed before the move leaves
/// only that build directory, which `novel chapter recover` sweeps
/// (`crate::chapter::sweep_build_dirs`).
pub fn init_then<T, E: From<StoreError>>(
    dir: &Path,
    opts: &InitOptions,
    fill: impl FnOnce(&crate::project::Project) -> Result<T, E>,
) -> Result<(InitReport, T), E> {
    let root = crate::project::absolute(dir);
    if let Some(name) = &opts.style
        && style_preset(name).is_none()
    {
        return Err(StoreError::UnknownPreset {
            name: name.clone(),
            known: STYLE_PRESETS.iter().map(|(n, _)| n.to_string()).collect(),
        }
        .into());
    }
    let now = now_iso();
    let files = project_files(opts, &now);
    refuse_occupied(&root, &top_level_names(&files))?;
    let parent = root.parent().unwrap_or(&root).to_path_buf();
    create_dir_all(&parent)?;
    let tmp = parent.join(format!(
        ".novel-init-{}-{}",
        std::process::id(),
        now.replace([':', '-'], "")
    ));
    let filled = build_tree(&tmp, &files)
        .map_err(E::from)
        .and_then(|()| fill(&crate::project::Project { root: tmp.clone() }));
    let moved = filled.and_then(|t| {
        let names = entries(&tmp).map_err(E::from)?;
        move_into_place(&tmp, &root, &names).map_err(E::from)?;
        Ok(t)
    });
    if tmp.exists() {
        let _ = fs::remove_dir_all(&tmp);
    }
    let filled = moved?;
    let mut dirs: Vec<String> = project_dirs().map(str::to_string).collect();
    dirs.sort();
    let report = InitReport {
        root,
        orchestrator_state: initial_checkpoint("").orchestrator_state,
        files: files.into_iter().map(|(p, _)| p).collect(),
        dirs,
    };
    Ok((report, filled))
}

/// The names directly in `dir`, sorted.
fn entries(dir: &Path) -> Result<Vec<String>, StoreError> {
    let mut names: Vec<String> = fs::read_dir(dir)
        .map_err(|e| StoreError::io(dir, e))?
        .filter_map(Result::ok)
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    Ok(names)
}

fn build_tree(tmp: &Path, files: &[(String, String)]) -> Result<(), StoreError> {
    for d in project_dirs() {
        create_dir_all(&layout::join(tmp, d))?;
    }
    for (rel, content) in files {
        let path = layout::join(tmp, rel);
        if let Some(p) = path.parent() {
            create_dir_all(p)?;
        }
        // Fresh files in a private directory: plain write + fsync; the move makes them visible.
        fs::write(&path, content).map_err(|e| StoreError::io(&path, e))?;
        fs::File::open(&path)
            .and_then(|f| f.sync_all())
            .map_err(|e| StoreError::io(&path, e))?;
    }
    Ok(())
}

fn move_into_place(tmp: &Path, root: &Path, names: &[String]) -> Result<(), StoreError> {
    // A missing target directory is the whole tree, in one rename. An existing one (empty, or
    // holding only hidden entries) is kept — the author's shell may stand in it — and filled
    // entry by entry, the checkpoint last (a folder is a project only once it is there).
    if !root.exists() && fs::rename(tmp, root).is_ok() {
        return sync_dir(root.parent().unwrap_or(root));
    }
    create_dir_all(root)?;
    let mut ordered: Vec<&String> = names.iter().filter(|n| *n != layout::CHECKPOINT).collect();
    ordered.extend(names.iter().filter(|n| *n == layout::CHECKPOINT));
    let mut moved: Vec<&String> = Vec::new();
    for name in ordered {
        let (from, to) = (tmp.join(name), root.join(name));
        let step = if to.symlink_metadata().is_ok() {
            Err(StoreError::ProjectExists {
                dir: root.to_path_buf(),
                conflicts: vec![name.clone()],
            })
        } else {
            fs::rename(&from, &to).map_err(|e| StoreError::io(&to, e))
        };
        if let Err(e) = step {
            // All or nothing: what was moved goes back, so the folder is as the author left it.
            for done in moved.iter().rev() {
                let _ = fs::rename(root.join(done), tmp.join(done));
            }
            return Err(e);
        }
        moved.push(name);
    }
    sync_dir(root)
}
