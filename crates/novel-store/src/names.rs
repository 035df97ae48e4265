//! The sources of the name checks on disk: the registered names (characters, storylines) and the
//! known names of things that are not people (state, world). What counts as a name, and which of
//! these are terms, is `novel_text::names`' to decide; this module only says which files.
//!
//! Layer: commands — the work behind a command (stages, volumes, spec, reviews, import, export, the
//! guard); the top.

use std::path::{Path, PathBuf};

use novel_core::model::{Character, Storylines, WorldRules};
use novel_core::text_sources::{NameSources, SettingSources};

use crate::{Project, StoreError, io, layout};

/// The files of `dir` with extension `ext`, sorted; none when the directory cannot be read.
pub(crate) fn files_with_ext(dir: &Path, ext: &str) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut files: Vec<_> = entries
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == ext))
        .collect();
    files.sort();
    files
}

/// Every character file (active, then retired) and `storylines.json` when there is one.
pub fn name_sources(proj: &Project) -> Result<NameSources, StoreError> {
    let mut characters = Vec::new();
    for dir in ["characters/active", "characters/retired"] {
        for f in files_with_ext(&proj.path(dir), "json") {
            let c: Character = io::read_json(&f, "角色档案")?;
            characters.push(c);
        }
    }
    let path = proj.path(layout::STORYLINES);
    let storylines = if path.is_file() {
        Some(io::read_json::<Storylines>(&path, "故事线定义")?)
    } else {
        None
    };
    Ok(NameSources {
        characters,
        storylines,
    })
}

/// The state file, the L1 world rules and the `world/*.md` documents, each when there is one.
pub fn setting_sources(proj: &Project) -> Result<SettingSources, StoreError> {
    let path = proj.path(layout::CURRENT_STATE);
    let state = if path.is_file() {
        Some(io::read_json_value(&path)?)
    } else {
        None
    };
    let world = proj.path("world");
    let rules = world.join("rules.json");
    let world_rules = if rules.is_file() {
        Some(io::read_json::<WorldRules>(&rules, "L1 世界规则")?)
    } else {
        None
    };
    let mut world_docs = Vec::new();
    for f in files_with_ext(&world, "md") {
        world_docs.push(io::read_text(&f)?);
    }
    Ok(SettingSources {
        state,
        world_rules,
        world_docs,
    })
}
