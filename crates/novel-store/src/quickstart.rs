//! The quick start's file evidence and its marks in the checkpoint (`novel quickstart`;
//! `docs/orchestration.md` §3). The rules are `novel_core::quickstart`'s; this module reads
//! the files (serde only, no schema compiled) and writes the checkpoint under the project lock.
//!
//! Layer: writers — the state, the memory, the preferences and the chapter commit, written through
//! the journal; above the readers.

use std::fs;
use std::time::Duration;

use novel_core::context::outline;
use novel_core::model::character::Character;
use novel_core::model::style::StyleProfile;
use novel_core::model::world::WorldRules;
use novel_core::model::{Checkpoint, QuickStartStep};
use novel_core::quickstart::{self, Evidence, MarkRefusal, QuickStartFiles};
use serde::de::DeserializeOwned;

use crate::checkpoint::{load_checkpoint, write_checkpoint};
use crate::error::StoreError;
use crate::io::read_text;
use crate::lock::{self, LockError};
use crate::project::Project;
use crate::{layout, time};

/// The first volume's outline, which the quick start plans chapters 1–3 in.
pub const FIRST_OUTLINE: &str = "volumes/vol-01/outline.md";

/// A file's text: `Ok(None)` when absent.
fn text(project: &Project, rel: &str) -> Result<Option<String>, String> {
    match read_text(&project.path(rel)) {
        Ok(t) => Ok(Some(t)),
        Err(StoreError::Io { source, .. }) if source.kind() == std::io::ErrorKind::NotFound => {
            Ok(None)
        }
        Err(e) => Err(e.to_string()),
    }
}

fn parsed<T: DeserializeOwned>(project: &Project, rel: &str) -> Result<Option<T>, String> {
    match text(project, rel)? {
        None => Ok(None),
        Some(t) => serde_json::from_str(&t)
            .map(Some)
            .map_err(|e| format!("{rel} 无法解析：{e}")),
    }
}

fn brief(project: &Project) -> Evidence {
    match text(project, layout::BRIEF) {
        Err(e) => Evidence::Missing(e),
        Ok(None) => Evidence::Missing("brief.md 不存在".into()),
        Ok(Some(t)) if quickstart::brief_has_author_text(&t) => {
            Evidence::Found("brief.md 已写了一句话卖点或主角与核心冲突".into())
        }
        Ok(Some(_)) => Evidence::Missing(
            "brief.md 的「一句话卖点」「主角与核心冲突」还只有模板，没有作者写的内容".into(),
        ),
    }
}

fn world(project: &Project) -> Evidence {
    match parsed::<WorldRules>(project, layout::WORLD_RULES) {
        Err(e) => Evidence::Missing(e),
        Ok(None) => Evidence::Missing("world/rules.json 不存在".into()),
        Ok(Some(w)) if w.rules.is_empty() => {
            Evidence::Missing("world/rules.json 还没有规则".into())
        }
        Ok(Some(w)) => Evidence::Found(format!("world/rules.json 有 {} 条规则", w.rules.len())),
    }
}

fn characters(project: &Project) -> Evidence {
    let mut names: Vec<String> = fs::read_dir(project.path("characters/active"))
        .map(|r| {
            r.filter_map(|e| e.ok())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| n.ends_with(".json") && !n.starts_with('.'))
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    let mut ok = 0;
    let mut bad = Vec::new();
    for n in &names {
        match parsed::<Character>(project, &format!("characters/active/{n}")) {
            Ok(Some(_)) => ok += 1,
            _ => bad.push(n.clone()),
        }
    }
    let bad_note = if bad.is_empty() {
        String::new()
    } else {
        format!("（{} 无法解析）", bad.join("、"))
    };
    if ok == 0 {
        Evidence::Missing(format!(
            "characters/active/ 还没有能解析的角色档案{bad_note}"
        ))
    } else {
        Evidence::Found(format!("characters/active/ 有 {ok} 个角色档案{bad_note}"))
    }
}

fn style(project: &Project) -> Evidence {
    match parsed::<StyleProfile>(project, layout::STYLE_PROFILE) {
        Err(e) => Evidence::Missing(e),
        Ok(None) => Evidence::Missing("style-profile.json 不存在".into()),
        Ok(Some(p)) => match p.source_type {
            Some(s) => Evidence::Found(format!(
                "style-profile.json 的 source_type 为 {}",
                serde_json::to_value(s)
                    .ok()
                    .and_then(|v| v.as_str().map(str::to_string))
                    .unwrap_or_default()
            )),
            None => Evidence::Missing(
                "style-profile.json 的 source_type 还是 null（还没有风格样本）".into(),
            ),
        },
    }
}

fn first_outline(project: &Project) -> Evidence {
    match text(project, FIRST_OUTLINE) {
        Err(e) => Evidence::Missing(e),
        Ok(None) => Evidence::Missing(format!("{FIRST_OUTLINE} 不存在")),
        Ok(Some(t)) => match outline::parse(&t) {
            Err(e) => Evidence::Missing(format!("{FIRST_OUTLINE} 无法解析：{e}")),
            Ok(o) => {
                let missing: Vec<String> = (1..=3)
                    .filter(|c| o.block(*c).is_none())
                    .map(|c| c.to_string())
                    .collect();
                if missing.is_empty() {
                    Evidence::Found(format!("{FIRST_OUTLINE} 有第 1–3 章的章节块"))
                } else {
                    Evidence::Missing(format!(
                        "{FIRST_OUTLINE} 缺第 {} 章的章节块",
                        missing.join("、")
                    ))
                }
            }
        },
    }
}

/// What the files show for each checkable quick-start step.
pub fn files(project: &Project) -> QuickStartFiles {
    QuickStartFiles {
        brief: brief(project),
        world: world(project),
        characters: characters(project),
        style: style(project),
        outline: first_outline(project),
    }
}

/// Why a mark could not be recorded.
#[derive(Debug, thiserror::Error)]
pub enum MarkError {
    #[error(transparent)]
    Refused(#[from] MarkRefusal),
    #[error(transparent)]
    Lock(#[from] LockError),
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// `novel quickstart done|undo STEP`: re-reads the checkpoint under the project lock, applies
/// the rule and writes it back (atomically) when it changed. Returns the new checkpoint and
/// the files' evidence it was judged on.
pub fn mark(
    project: &Project,
    step: QuickStartStep,
    done: bool,
    stale_after: Duration,
) -> Result<(Checkpoint, QuickStartFiles), MarkError> {
    let _guard = crate::lock::guard(project)?;
    let held = lock::Held::take(project, stale_after)?;
    let cp = load_checkpoint(project)?;
    let files = files(project);
    let mut next = if done {
        quickstart::mark_done(&cp, &files, step)?
    } else {
        quickstart::mark_undo(&cp, step)?
    };
    if next != cp {
        next.last_checkpoint_time = Some(time::now_iso());
        write_checkpoint(project, &next)?;
    }
    held.release()?;
    Ok((next, files))
}
