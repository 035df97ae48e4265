//! The cross-storyline leak check on disk (PRD §6.6.7 Layer 3): which text is checked, which
//! storyline it belongs to, what each storyline's memory says and which lines converge —
//! gathered by [`sources`] for `novel_text::leak::assess` — and the record the gate reads,
//! written by [`record`]. What is a leak is `novel-text`'s to decide.
//!
//! Layer: commands — the work behind a command (stages, volumes, spec, reviews, import, export, the
//! guard); the top.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use serde::Serialize;

use novel_core::gate::LeakRisk;
use novel_core::model::{ChapterContract, Character, StorylineSchedule, Storylines};
use novel_core::text_sources::{LeakSources, PlanText, json_text};

use crate::{Project, StoreError, io, layout};

/// Version of the leak record's shape (`staging/logs/chapter-NNN-leak.json`).
pub const LEAK_RECORD_VERSION: u32 = 1;

/// Why the leak check of a chapter cannot run.
#[derive(Debug, thiserror::Error)]
pub enum LeakError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("找不到第 {chapter} 章：{committed} 不存在，staging 中也没有")]
    NoChapter { chapter: u32, committed: String },
    #[error("不知道第 {chapter} 章属于哪条故事线：章节契约与摘要里都没有 storyline_id")]
    NoStoryline { chapter: u32 },
    #[error("storylines.json 中没有故事线「{id}」")]
    UnknownStoryline { id: String, known: Vec<String> },
}

impl LeakError {
    pub fn code(&self) -> &'static str {
        match self {
            LeakError::Store(e) => e.code(),
            LeakError::NoChapter { .. } => "E_NO_CHAPTER",
            LeakError::NoStoryline { .. } => "E_NO_STORYLINE",
            LeakError::UnknownStoryline { .. } => "E_USAGE",
        }
    }

    pub fn hint(&self) -> String {
        match self {
            LeakError::Store(e) => e.hint(),
            LeakError::NoChapter { .. } => "检查章节号".into(),
            LeakError::NoStoryline { .. } => {
                "用 --storyline ID 指定，或在章节契约中写上 storyline_id".into()
            }
            LeakError::UnknownStoryline { known, .. } => format!("可选：{}", known.join("、")),
        }
    }
}

/// Volume directories of the project (`volumes/vol-NN`), in order.
fn volume_dirs(proj: &Project) -> Vec<PathBuf> {
    let mut dirs: Vec<_> = std::fs::read_dir(proj.path("volumes"))
        .map(|it| {
            it.flatten()
                .map(|e| e.path())
                .filter(|p| p.is_dir())
                .collect()
        })
        .unwrap_or_default();
    dirs.sort();
    dirs
}

/// The storyline of chapter `n`: its contract, else its summary's front matter (committed,
/// else staged).
pub fn storyline_of(proj: &Project, n: u32) -> Result<Option<String>, StoreError> {
    for dir in volume_dirs(proj) {
        let path = dir
            .join("chapter-contracts")
            .join(novel_core::naming::contract_name(n));
        if path.is_file() {
            let c: ChapterContract = io::read_json(&path, "L3 章节契约")?;
            if c.storyline_id.is_some() {
                return Ok(c.storyline_id);
            }
        }
    }
    let summary = layout::summary_file(n);
    for rel in [summary.clone(), format!("staging/{summary}")] {
        let path = proj.path(&rel);
        if !path.is_file() {
            continue;
        }
        let text = io::read_text(&path)?;
        if let Some(id) = novel_core::context::text::summary_parts(&text).storyline {
            return Ok(Some(id));
        }
    }
    Ok(None)
}

/// The lines that converge with `current` in chapter `n`, per the volume schedules.
fn converging_lines(proj: &Project, n: u32, current: &str) -> Result<Vec<String>, StoreError> {
    let mut converging: BTreeSet<String> = BTreeSet::new();
    for dir in volume_dirs(proj) {
        let path = dir.join("storyline-schedule.json");
        if !path.is_file() {
            continue;
        }
        let schedule: StorylineSchedule = io::read_json(&path, "卷故事线调度")?;
        for ev in &schedule.convergence_events {
            if (ev.chapter_range[0]..=ev.chapter_range[1]).contains(&n)
                && ev.involved_storylines.iter().any(|s| s == current)
            {
                converging.extend(
                    ev.involved_storylines
                        .iter()
                        .filter(|s| *s != current)
                        .cloned(),
                );
            }
        }
    }
    Ok(converging.into_iter().collect())
}

/// The text of storyline `id`'s `memory.md`, empty when there is none.
fn memory_of(proj: &Project, id: &str) -> Result<String, StoreError> {
    let Ok(rel) = layout::storyline_memory(id) else {
        return Ok(String::new());
    };
    let path = proj.path(&rel);
    if !path.is_file() {
        return Ok(String::new());
    }
    io::read_text(&path)
}

/// Everything the leak check of chapter `n` (committed, else staged) reads; `storyline`
/// overrides the chapter's own (contract, else summary).
pub fn sources(
    proj: &Project,
    n: u32,
    storyline: Option<String>,
) -> Result<LeakSources, LeakError> {
    let committed = layout::chapter_file(n);
    let path = [committed.clone(), format!("staging/{committed}")]
        .into_iter()
        .find(|rel| proj.path(rel).is_file())
        .ok_or_else(|| LeakError::NoChapter {
            chapter: n,
            committed: committed.clone(),
        })?;
    let current = match storyline {
        Some(s) => s,
        None => storyline_of(proj, n)?.ok_or(LeakError::NoStoryline { chapter: n })?,
    };
    let lines: Storylines = io::read_json(&proj.path(layout::STORYLINES), "故事线定义")?;
    if !lines.storylines.iter().any(|s| s.id == current) {
        return Err(LeakError::UnknownStoryline {
            id: current,
            known: lines.storylines.iter().map(|s| s.id.clone()).collect(),
        });
    }
    let names = crate::names::name_sources(proj)?;
    let converging = converging_lines(proj, n, &current)?;
    let mut memories = Vec::new();
    for s in &lines.storylines {
        memories.push(memory_of(proj, &s.id)?);
    }
    let setting = crate::names::setting_sources(proj)?;
    let text = io::read_text(&proj.path(&path))?;
    let (mut plan, line_plans) = plans(proj, n, &current)?;
    plan.extend(characters_planned(
        proj,
        &plan,
        &names.characters,
        setting.state.as_ref(),
    ));
    Ok(LeakSources {
        chapter: n,
        path,
        text,
        storyline: current,
        storylines: lines,
        memories,
        converging,
        names,
        setting,
        plan,
        line_plans,
    })
}

/// The plan of chapter `n` (its contract, its outline block, the schedule's entries for it)
/// and the plans of every other chapter (contracts and outline blocks), by storyline. A file
/// that does not parse is left out: `novel validate` reports it.
fn plans(
    proj: &Project,
    n: u32,
    current: &str,
) -> Result<(Vec<PlanText>, Vec<PlanText>), StoreError> {
    let mut own = Vec::new();
    let mut others = Vec::new();
    for dir in volume_dirs(proj) {
        let rel_dir = proj.relative(&dir).unwrap_or_default();
        let mut pieces = outline_plans(&dir, &rel_dir)?;
        pieces.extend(contract_plans(&dir, &rel_dir));
        for piece in pieces {
            if piece.chapter == Some(n) {
                own.push(piece)
            } else {
                others.push(piece)
            }
        }
        let schedule = dir.join("storyline-schedule.json");
        if schedule.is_file()
            && let Ok(s) = io::read_json::<StorylineSchedule>(&schedule, "卷故事线调度")
        {
            let file = format!("{rel_dir}/storyline-schedule.json");
            own.extend(schedule_plans(&s, &file, n, current));
        }
    }
    Ok((own, others))
}

/// The chapter blocks of a volume's outline (`outline.md`), every chapter's; none when the
/// outline is missing or does not parse.
fn outline_plans(dir: &Path, rel_dir: &str) -> Result<Vec<PlanText>, StoreError> {
    let outline = dir.join("outline.md");
    if !outline.is_file() {
        return Ok(Vec::new());
    }
    let Ok(parsed) = novel_core::context::outline::parse(&io::read_text(&outline)?) else {
        return Ok(Vec::new());
    };
    Ok(parsed
        .chapters
        .into_iter()
        .map(|b| PlanText {
            file: format!("{rel_dir}/outline.md"),
            line: Some(b.line),
            pointer: None,
            chapter: Some(b.chapter),
            storyline: b.storyline().map(str::to_string),
            text: b.text,
        })
        .collect())
}

/// The chapter contracts of a volume, every chapter's (a file that does not parse left out).
fn contract_plans(dir: &Path, rel_dir: &str) -> Vec<PlanText> {
    let mut out = Vec::new();
    for f in crate::names::files_with_ext(&dir.join("chapter-contracts"), "json") {
        let Ok(value) = io::read_json_value(&f) else {
            continue;
        };
        out.push(PlanText {
            file: format!(
                "{rel_dir}/chapter-contracts/{}",
                f.file_name()
                    .map(|x| x.to_string_lossy().to_string())
                    .unwrap_or_default()
            ),
            line: None,
            pointer: Some(String::new()),
            chapter: value
                .get("chapter")
                .and_then(serde_json::Value::as_u64)
                .map(|c| c as u32),
            storyline: value
                .get("storyline_id")
                .and_then(serde_json::Value::as_str)
                .map(str::to_string),
            text: json_text(&value),
        });
    }
    out
}

/// What a volume's storyline schedule (`file`) plans for chapter `n` of storyline `current`:
/// the convergence events it falls in that involve the line, and the line's arc goal when the
/// chapter is in the volume.
fn schedule_plans(s: &StorylineSchedule, file: &str, n: u32, current: &str) -> Vec<PlanText> {
    let mut out = Vec::new();
    for (i, ev) in s.convergence_events.iter().enumerate() {
        if (ev.chapter_range[0]..=ev.chapter_range[1]).contains(&n)
            && ev.involved_storylines.iter().any(|l| l == current)
        {
            out.push(PlanText {
                file: file.to_string(),
                pointer: Some(format!("/convergence_events/{i}")),
                chapter: Some(n),
                storyline: Some(current.to_string()),
                text: [ev.trigger.as_deref(), ev.aftermath.as_deref()]
                    .into_iter()
                    .flatten()
                    .collect::<Vec<_>>()
                    .join("\n"),
                ..PlanText::default()
            });
        }
    }
    let in_volume = s
        .chapter_range
        .as_ref()
        .is_some_and(|r| (r[0]..=r[1]).contains(&n));
    for (i, a) in s.active_storylines.iter().enumerate() {
        if in_volume
            && a.storyline_id == current
            && let Some(goal) = &a.arc_goal
        {
            out.push(PlanText {
                file: file.to_string(),
                pointer: Some(format!("/active_storylines/{i}")),
                chapter: None,
                storyline: Some(current.to_string()),
                text: goal.clone(),
                ..PlanText::default()
            });
        }
    }
    out
}

/// The files of the characters the chapter's plan names (display name or alias): their
/// character file and their entry in the state — where the factions they belong to are.
fn characters_planned(
    proj: &Project,
    plan: &[PlanText],
    characters: &[Character],
    state: Option<&serde_json::Value>,
) -> Vec<PlanText> {
    let mut out = Vec::new();
    for c in characters {
        let named = std::iter::once(&c.display_name)
            .chain(&c.aliases)
            .filter(|n| n.chars().count() >= 2)
            .any(|n| plan.iter().any(|p| p.text.contains(n.as_str())));
        if !named {
            continue;
        }
        let file = ["characters/active", "characters/retired"]
            .iter()
            .map(|d| format!("{d}/{}.json", c.id))
            .find(|rel| proj.path(rel).is_file())
            .unwrap_or_else(|| format!("characters/active/{}.json", c.id));
        out.push(PlanText {
            file,
            pointer: Some(String::new()),
            text: serde_json::to_value(c)
                .map(|v| json_text(&v))
                .unwrap_or_default(),
            ..PlanText::default()
        });
        let entry = state
            .and_then(|s| s.get("characters"))
            .and_then(serde_json::Value::as_object)
            .and_then(|m| {
                [c.id.as_str(), c.display_name.as_str()]
                    .into_iter()
                    .find_map(|k| m.get(k).map(|v| (k, v)))
            });
        if let Some((key, v)) = entry {
            out.push(PlanText {
                file: layout::CURRENT_STATE.to_string(),
                pointer: Some(format!("/characters/{key}")),
                text: json_text(v),
                ..PlanText::default()
            });
        }
    }
    out
}

/// Keeps the result where the gate sees it: for the in-flight chapter, in its own file
/// `staging/logs/chapter-NNN-leak.json` (atomic; rewritten by every check), read as
/// [`novel_core::gate::LeakCheck`]:
///
/// ```json
/// {"version": 1, "chapter": 3, "storyline_id": "main_arc", "path": "staging/chapters/chapter-003.md",
///  "text_digest": "…16 hex digits…", "leak_risk": "none|low|high", "checked_at": "…",
///  "converging_with": [], "findings": [ /* the cross_references of the JSON report */ ]}
/// ```
///
/// `text_digest` ([`novel_core::pipeline::text_digest`] of the text checked) lets the gate
/// ignore a result from before a revision; the commit folds the record into the chapter's
/// pipeline log as `leak_check`. Another chapter than the one in flight (or no checkpoint)
/// writes nothing.
pub fn record<F: Serialize>(
    project: &Project,
    checked: &LeakSources,
    risk: LeakRisk,
    findings: &F,
) -> Result<(), StoreError> {
    let _guard = crate::lock::guard(project)?;
    let n = checked.chapter;
    let Ok(cp) = crate::chapter::load_checkpoint(project) else {
        return Ok(());
    };
    if cp.inflight_chapter != Some(n) {
        return Ok(());
    }
    let record = serde_json::json!({
        "version": LEAK_RECORD_VERSION,
        "chapter": n,
        "storyline_id": checked.storyline,
        "path": checked.path,
        "text_digest": novel_core::pipeline::text_digest(checked.text.as_bytes()),
        "leak_risk": risk,
        "checked_at": crate::time::now_iso(),
        "converging_with": checked.converging,
        "findings": findings,
    });
    let path = project.path(&layout::staging_leak(n));
    if let Some(dir) = path.parent() {
        io::create_dir_all(dir)?;
    }
    io::write_json(&path, &record)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sources_need_a_chapter_and_a_known_storyline_and_record_only_the_chapter_in_flight() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("book");
        crate::init::init_project(&root, &crate::init::InitOptions::default()).unwrap();
        let p = Project::open(&root).unwrap();
        let code = |r: Result<LeakSources, LeakError>| r.map(|_| ()).unwrap_err().code();
        assert_eq!(code(sources(&p, 1, None)), "E_NO_CHAPTER");
        std::fs::write(p.path(&layout::chapter_file(1)), "陈默推开门。").unwrap();
        assert_eq!(code(sources(&p, 1, None)), "E_NO_STORYLINE");
        assert_eq!(code(sources(&p, 1, Some("nope".into()))), "E_USAGE");
        let lines: Storylines = io::read_json(&p.path(layout::STORYLINES), "故事线定义").unwrap();
        let id = lines.storylines[0].id.clone();
        let s = sources(&p, 1, Some(id.clone())).unwrap();
        assert_eq!(
            (s.path.as_str(), s.storyline.as_str()),
            ("chapters/chapter-001.md", id.as_str())
        );
        assert_eq!(s.memories.len(), lines.storylines.len());
        // No chapter in flight: nothing is written for the gate.
        record(&p, &s, LeakRisk::None, &Vec::<String>::new()).unwrap();
        assert!(!p.path(&layout::staging_leak(1)).exists());
    }
}
