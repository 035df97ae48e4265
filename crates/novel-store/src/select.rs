//! Which files the text commands (`lint`, `count`, `style metrics`, `check names`, the reviews)
//! read, and the project data they share: the blacklist and the style profile.
//!
//! Layer: facts (reads only), below the figures and the views.

use std::path::{Path, PathBuf};

use novel_core::model::{AiBlacklist, Checkpoint, StyleProfile};

use crate::layout::{self, Entry};
use crate::{Project, StoreError, io};

/// A chapter file to read: where it is and how to show it (relative to the project when it is
/// inside one).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Input {
    pub path: PathBuf,
    pub shown: String,
    /// An extra of an imported manuscript (楔子、番外, [`extra_inputs`]): part of the book's
    /// 字数, but with no chapter-length target.
    pub extra: bool,
}

/// What the author asked for.
#[derive(Debug, Clone, Copy)]
pub enum Selection<'a> {
    /// These files (inside or outside a project).
    Files(&'a [PathBuf]),
    /// Chapter `n`: committed, else staged.
    Chapter(u32),
    /// Every committed chapter.
    All,
    /// The committed chapters of `[a, b]`; at least one must exist.
    Committed([u32; 2]),
    /// The staged text of the chapter in flight.
    InFlight,
}

/// Why a selection names no file.
#[derive(Debug, thiserror::Error)]
pub enum SelectError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("找不到第 {chapter} 章：{committed} 不存在，staging 中也没有")]
    NoChapter { chapter: u32, committed: String },
    #[error("chapters/ 中还没有已提交的章节")]
    NoneCommitted,
    #[error("第 {}–{} 章中没有已提交的章节", range[0], range[1])]
    NoneInRange { range: [u32; 2] },
    #[error("现在没有正在写的章节")]
    NoneInFlight,
    #[error("第 {chapter} 章的暂存稿 {rel} 还不存在")]
    NotDrafted { chapter: u32, rel: String },
}

impl SelectError {
    pub fn code(&self) -> &'static str {
        match self {
            SelectError::Store(e) => e.code(),
            _ => "E_NO_CHAPTER",
        }
    }

    pub fn hint(&self) -> String {
        match self {
            SelectError::Store(e) => return e.hint(),
            SelectError::NoChapter { .. } => "检查章节号；novel lint --all 检查全部已提交章节",
            SelectError::NoneCommitted => "章节提交后再检查，或直接指定文件",
            SelectError::NoneInRange { .. } => "检查区间，或不带参数检查正在写的章节",
            SelectError::NoneInFlight => "指定文件，或用 --chapter N、--all 检查已提交的章节",
            SelectError::NotDrafted { .. } => {
                "等写手写出初稿后再检查，或用 --chapter N 指定其他章节"
            }
        }
        .into()
    }
}

/// Resolves a selection to files, in chapter order for the committed ones. Every selection but
/// [`Selection::Files`] needs the project.
pub fn resolve(
    project: Option<&Project>,
    select: Selection<'_>,
) -> Result<Vec<Input>, SelectError> {
    if let Selection::Files(files) = select {
        return given_files(project, files);
    }
    let Some(proj) = project else {
        return Err(StoreError::NotAProject { start: ".".into() }.into());
    };
    let input = |rel: String| Input {
        path: proj.path(&rel),
        shown: rel,
        extra: false,
    };
    match select {
        Selection::Files(_) => Ok(Vec::new()),
        Selection::Chapter(n) => {
            let committed = layout::chapter_file(n);
            let rel = [committed.clone(), format!("staging/{committed}")]
                .into_iter()
                .find(|rel| proj.path(rel).is_file())
                .ok_or(SelectError::NoChapter {
                    chapter: n,
                    committed,
                })?;
            Ok(vec![input(rel)])
        }
        Selection::All => {
            let files = committed_chapters(proj)?;
            if files.is_empty() {
                return Err(SelectError::NoneCommitted);
            }
            Ok(files.into_iter().map(|(_, rel)| input(rel)).collect())
        }
        Selection::Committed(range) => {
            let inputs = committed_inputs(proj, range)?;
            if inputs.is_empty() {
                return Err(SelectError::NoneInRange { range });
            }
            Ok(inputs)
        }
        Selection::InFlight => {
            let checkpoint: Checkpoint = io::read_json(&proj.path(layout::CHECKPOINT), "断点文件")?;
            let Some(n) = checkpoint.inflight_chapter else {
                return Err(SelectError::NoneInFlight);
            };
            let rel = format!("staging/{}", layout::chapter_file(n));
            if !proj.path(&rel).is_file() {
                return Err(SelectError::NotDrafted { chapter: n, rel });
            }
            Ok(vec![input(rel)])
        }
    }
}

/// The files as given, each of which must exist.
fn given_files(project: Option<&Project>, files: &[PathBuf]) -> Result<Vec<Input>, SelectError> {
    let shown_of = |path: &Path| match project.and_then(|p| p.relative(path)) {
        Some(rel) if !rel.is_empty() => rel,
        _ => path.display().to_string(),
    };
    let mut inputs = Vec::new();
    for f in files {
        if !f.is_file() {
            return Err(
                StoreError::io(f, std::io::Error::from(std::io::ErrorKind::NotFound)).into(),
            );
        }
        inputs.push(Input {
            path: f.clone(),
            shown: shown_of(f),
            extra: false,
        });
    }
    Ok(inputs)
}

/// `chapters/chapter-NNN.md` files of the project as (chapter, relative path), in order.
pub fn committed_chapters(proj: &Project) -> Result<Vec<(u32, String)>, StoreError> {
    let dir = proj.path("chapters");
    let mut out = Vec::new();
    let names = match crate::io::dir_names(&dir) {
        Ok(names) => names,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(out),
        Err(e) => return Err(StoreError::io(&dir, e)),
    };
    for name in names {
        let rel = format!("chapters/{name}");
        if let Entry::ChapterText { chapter } = layout::classify(&rel) {
            out.push((chapter, rel));
        }
    }
    out.sort();
    Ok(out)
}

/// The extras of an imported manuscript (`extras/NN-名称.md`: 楔子、番外 …), in name order —
/// `novel count --all` counts them with the chapters.
pub fn extra_inputs(proj: &Project) -> Result<Vec<Input>, StoreError> {
    let dir = proj.path(layout::EXTRAS_DIR);
    let entries = match std::fs::read_dir(&dir) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(StoreError::io(&dir, e)),
    };
    let mut names: Vec<String> = entries
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| !n.starts_with('.') && n.ends_with(".md"))
        .collect();
    names.sort();
    Ok(names
        .into_iter()
        .map(|n| {
            let rel = format!("{}/{n}", layout::EXTRAS_DIR);
            Input {
                path: proj.path(&rel),
                shown: rel,
                extra: true,
            }
        })
        .collect())
}

/// The committed chapters of `[a, b]` as inputs (none is not an error here).
pub fn committed_inputs(proj: &Project, range: [u32; 2]) -> Result<Vec<Input>, StoreError> {
    Ok(committed_chapters(proj)?
        .into_iter()
        .filter(|(n, _)| (range[0]..=range[1]).contains(n))
        .map(|(_, rel)| Input {
            path: proj.path(&rel),
            shown: rel,
            extra: false,
        })
        .collect())
}

/// The project's `ai-blacklist.json` and where it came from, or the shipped template outside a
/// project.
pub fn load_blacklist(project: Option<&Project>) -> Result<(AiBlacklist, String), StoreError> {
    match project {
        Some(p) if p.path(layout::AI_BLACKLIST).is_file() => Ok((
            io::read_json(&p.path(layout::AI_BLACKLIST), "AI 用语黑名单")?,
            layout::AI_BLACKLIST.to_string(),
        )),
        _ => Ok((
            seed_blacklist()?,
            "内置模板 templates/ai-blacklist.json".to_string(),
        )),
    }
}

/// The blacklist shipped with the program (what `novel init` writes, and what
/// `novel blacklist upgrade` brings a project's list up to).
pub fn seed_blacklist() -> Result<AiBlacklist, StoreError> {
    serde_json::from_str(crate::init::AI_BLACKLIST_TEMPLATE).map_err(|e| StoreError::Model {
        path: "templates/ai-blacklist.json".into(),
        what: "AI 用语黑名单",
        message: e.to_string(),
    })
}

/// The project's `style-profile.json`, if there is one.
pub fn load_profile(project: Option<&Project>) -> Result<Option<StyleProfile>, StoreError> {
    match project {
        Some(p) if p.path(layout::STYLE_PROFILE).is_file() => Ok(Some(io::read_json(
            &p.path(layout::STYLE_PROFILE),
            "风格指纹",
        )?)),
        _ => Ok(None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn project() -> (tempfile::TempDir, Project) {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("book");
        crate::init::init_project(&root, &crate::init::InitOptions::default()).unwrap();
        (tmp, Project::open(&root).unwrap())
    }

    #[test]
    fn chapters_resolve_committed_first_in_order_and_say_what_is_missing() {
        let (_t, p) = project();
        assert!(matches!(
            resolve(Some(&p), Selection::All),
            Err(SelectError::NoneCommitted)
        ));
        assert!(matches!(
            resolve(Some(&p), Selection::InFlight),
            Err(SelectError::NoneInFlight)
        ));
        for n in [10, 2] {
            std::fs::write(p.path(&layout::chapter_file(n)), "正文").unwrap();
        }
        let shown = |sel| -> Vec<String> {
            resolve(Some(&p), sel)
                .unwrap()
                .into_iter()
                .map(|i| i.shown)
                .collect()
        };
        assert_eq!(
            shown(Selection::All),
            ["chapters/chapter-002.md", "chapters/chapter-010.md"]
        );
        assert_eq!(
            shown(Selection::Committed([3, 10])),
            ["chapters/chapter-010.md"]
        );
        assert!(matches!(
            resolve(Some(&p), Selection::Committed([3, 9])),
            Err(SelectError::NoneInRange { range: [3, 9] })
        ));
        let e = resolve(Some(&p), Selection::Chapter(4)).unwrap_err();
        assert_eq!(
            (e.code(), e.to_string().as_str()),
            (
                "E_NO_CHAPTER",
                "找不到第 4 章：chapters/chapter-004.md 不存在，staging 中也没有"
            )
        );
    }

    #[test]
    fn the_shipped_blacklist_stands_in_outside_a_project() {
        let (list, source) = load_blacklist(None).unwrap();
        assert!(!list.entries.is_empty());
        assert_eq!(source, "内置模板 templates/ai-blacklist.json");
        assert!(load_profile(None).unwrap().is_none());
    }
}
