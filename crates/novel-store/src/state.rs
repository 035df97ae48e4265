//! The state files on disk: `state/current-state.json`, `state/changelog.jsonl`,
//! `foreshadowing/global.json`, the volume foreshadowing plans and the character name index.
//! Reads check the schema; writes are atomic; backups go to `state/backups/`.

use std::path::Path;

use novel_core::FileKind;
use novel_core::model::foreshadowing::PlannedForeshadowing;
use novel_core::model::{
    ChangelogEntry, Character, ForeshadowingGlobal, Storylines, VolumeForeshadowing,
};
use novel_core::ops::NameIndex;
use novel_core::validate::{check_document, parse_json};
use serde_json::Value;

use crate::chapter::{Journal, JournalKind, JournalWrite};
use crate::error::StoreError;
use crate::io::{
    create_dir_all, read_json_value, read_text, to_json_text, write_atomic, write_json,
};
use crate::layout;
use crate::project::Project;

/// How a reader trusts a file: `Checked` validates it against its kind's schema (every
/// command); `Typed` only reads it into its type (the guard hook, which compiles no schema but
/// that of the file just written).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Trust {
    Checked,
    Typed,
}

/// Reads a JSON file and checks it against its kind's schema; the first error is reported.
fn read_checked(project: &Project, rel: &str, kind: FileKind) -> Result<Value, StoreError> {
    read_as(project, rel, kind, Trust::Checked)
}

fn read_as(
    project: &Project,
    rel: &str,
    kind: FileKind,
    trust: Trust,
) -> Result<Value, StoreError> {
    let path = project.path(rel);
    let value = read_json_value(&path)?;
    if trust == Trust::Typed {
        return Ok(value);
    }
    if let Some(f) = check_document(rel, kind, &value).into_iter().next() {
        return Err(StoreError::Model {
            path,
            what: kind.label(),
            message: format!(
                "{}: {}",
                if f.pointer.is_empty() {
                    "/"
                } else {
                    &f.pointer
                },
                f.message
            ),
        });
    }
    Ok(value)
}

/// `state/current-state.json` as a JSON value (schema-checked).
pub fn load_state(project: &Project) -> Result<Value, StoreError> {
    read_checked(project, layout::CURRENT_STATE, FileKind::CurrentState)
}

/// `state/current-state.json` as a rebuild sees it: the file a rebuild must be able to repair
/// is exactly the one [`load_state`] refuses.
#[derive(Debug)]
pub enum StateOnDisk {
    /// Present and schema-valid.
    Valid(Value),
    /// No such file.
    Missing,
    /// Present but unreadable, not JSON, or not a valid state: why.
    Unusable(StoreError),
}

pub fn state_on_disk(project: &Project) -> StateOnDisk {
    match load_state(project) {
        Ok(v) => StateOnDisk::Valid(v),
        Err(StoreError::Io { source, .. }) if source.kind() == std::io::ErrorKind::NotFound => {
            StateOnDisk::Missing
        }
        Err(e) => StateOnDisk::Unusable(e),
    }
}

/// A value read with [`Trust::Typed`] into its type; with [`Trust::Checked`] the schema has
/// already passed, so this cannot fail then.
fn typed<T: serde::de::DeserializeOwned>(
    project: &Project,
    rel: &str,
    kind: FileKind,
    v: Value,
) -> Result<T, StoreError> {
    serde_json::from_value(v).map_err(|e| StoreError::Model {
        path: project.path(rel),
        what: kind.label(),
        message: e.to_string(),
    })
}

/// The storyline ids of `storylines/storylines.json` (schema-checked), file order.
pub fn load_storyline_ids(project: &Project) -> Result<Vec<String>, StoreError> {
    load_storyline_ids_as(project, Trust::Checked)
}

fn load_storyline_ids_as(project: &Project, trust: Trust) -> Result<Vec<String>, StoreError> {
    let v = read_as(project, layout::STORYLINES, FileKind::Storylines, trust)?;
    let lines: Storylines = typed(project, layout::STORYLINES, FileKind::Storylines, v)?;
    Ok(lines.storylines.into_iter().map(|s| s.id).collect())
}

/// `foreshadowing/global.json`; an absent file is an empty list.
pub fn load_global(project: &Project) -> Result<ForeshadowingGlobal, StoreError> {
    load_global_as(project, Trust::Checked)
}

fn load_global_as(project: &Project, trust: Trust) -> Result<ForeshadowingGlobal, StoreError> {
    if !project.path(layout::FORESHADOWING_GLOBAL).exists() {
        return Ok(ForeshadowingGlobal {
            foreshadowing: Vec::new(),
            extra: Default::default(),
        });
    }
    let kind = FileKind::ForeshadowingGlobal;
    let v = read_as(project, layout::FORESHADOWING_GLOBAL, kind, trust)?;
    typed(project, layout::FORESHADOWING_GLOBAL, kind, v)
}

/// Every volume's planned threads (`volumes/vol-NN/foreshadowing.json`), volume order.
pub fn load_plan(project: &Project) -> Result<Vec<PlannedForeshadowing>, StoreError> {
    load_plan_as(project, Trust::Checked)
}

/// What a delta is checked against (`novel ops validate`, the guard hook): the state, the
/// foreshadowing file, the volume plans, the character names and the storyline ids.
#[derive(Debug, Clone)]
pub struct DeltaInputs {
    pub state: Value,
    pub global: ForeshadowingGlobal,
    pub plan: Vec<PlannedForeshadowing>,
    pub names: NameIndex,
    pub storylines: Vec<String>,
}

/// Loads the [`DeltaInputs`], each file read with `trust`.
pub fn load_delta_inputs(project: &Project, trust: Trust) -> Result<DeltaInputs, StoreError> {
    Ok(DeltaInputs {
        state: read_as(
            project,
            layout::CURRENT_STATE,
            FileKind::CurrentState,
            trust,
        )?,
        global: load_global_as(project, trust)?,
        plan: load_plan_as(project, trust)?,
        names: load_names(project),
        storylines: load_storyline_ids_as(project, trust)?,
    })
}

fn load_plan_as(project: &Project, trust: Trust) -> Result<Vec<PlannedForeshadowing>, StoreError> {
    let mut out = Vec::new();
    let dir = project.path("volumes");
    let Ok(read) = std::fs::read_dir(&dir) else {
        return Ok(out);
    };
    let mut vols: Vec<String> = read
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("vol-"))
        .collect();
    vols.sort();
    for vol in vols {
        let rel = format!("volumes/{vol}/foreshadowing.json");
        if project.path(&rel).exists() {
            let kind = FileKind::VolumeForeshadowing;
            let v = read_as(project, &rel, kind, trust)?;
            let plan: VolumeForeshadowing = typed(project, &rel, kind, v)?;
            out.extend(plan.foreshadowing);
        }
    }
    Ok(out)
}

/// Display names and aliases of every character file → slug. Unreadable files are skipped:
/// the index only improves hints.
pub fn load_names(project: &Project) -> NameIndex {
    let mut names = NameIndex::default();
    for sub in ["characters/active", "characters/retired"] {
        let Ok(read) = std::fs::read_dir(project.path(sub)) else {
            continue;
        };
        for e in read.filter_map(|e| e.ok()) {
            let path = e.path();
            if path.extension().is_none_or(|x| x != "json") {
                continue;
            }
            if let Ok(v) = read_json_value(&path)
                && let Ok(c) = serde_json::from_value::<Character>(v)
            {
                names.insert(&c.display_name, &c.id);
                for a in &c.aliases {
                    names.insert(a, &c.id);
                }
            }
        }
    }
    names
}

/// `state/changelog.jsonl`, every line parsed and schema-checked; a bad line is an error
/// naming it (a torn last line from a crash included).
pub fn load_changelog(project: &Project) -> Result<Vec<ChangelogEntry>, StoreError> {
    let path = project.path(layout::CHANGELOG);
    if !path.exists() {
        return Ok(Vec::new());
    }
    let text = read_text(&path)?;
    parse_changelog(&path, &text)
}

fn parse_changelog(path: &Path, text: &str) -> Result<Vec<ChangelogEntry>, StoreError> {
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let bad = |message: String| StoreError::Model {
            path: path.to_path_buf(),
            what: FileKind::ChangelogEntry.label(),
            message: format!("第 {} 行：{message}", i + 1),
        };
        // The engine writes these lines itself: a typed parse is enough on this hot path; only
        // a line that fails it pays for the schema check, to say precisely what is wrong.
        match serde_json::from_str::<ChangelogEntry>(line) {
            Ok(entry) => out.push(entry),
            Err(e) => {
                let value = parse_json(line).map_err(|e| bad(e.to_string()))?;
                let reason = check_document("", FileKind::ChangelogEntry, &value)
                    .into_iter()
                    .next()
                    .map_or(e.to_string(), |f| format!("{} {}", f.pointer, f.message));
                return Err(bad(reason));
            }
        }
    }
    Ok(out)
}

/// Appends one line to the changelog (the whole file is rewritten atomically).
pub fn append_changelog(project: &Project, entry: &ChangelogEntry) -> Result<(), StoreError> {
    let path = project.path(layout::CHANGELOG);
    let mut text = if path.exists() {
        read_text(&path)?
    } else {
        String::new()
    };
    if !text.is_empty() && !text.ends_with('\n') {
        text.push('\n');
    }
    text.push_str(&serde_json::to_string(entry).expect("entries serialise"));
    text.push('\n');
    write_atomic(&path, text.as_bytes())
}

/// Replaces the changelog with `entries` (atomically).
pub fn write_changelog(project: &Project, entries: &[ChangelogEntry]) -> Result<(), StoreError> {
    write_atomic(
        &project.path(layout::CHANGELOG),
        changelog_text(entries).as_bytes(),
    )
}

pub fn write_state(project: &Project, state: &Value) -> Result<(), StoreError> {
    let path = project.path(layout::CURRENT_STATE);
    if let Some(dir) = path.parent() {
        create_dir_all(dir)?;
    }
    write_json(&path, state)
}

pub fn write_global(project: &Project, global: &ForeshadowingGlobal) -> Result<(), StoreError> {
    let path = project.path(layout::FORESHADOWING_GLOBAL);
    if let Some(dir) = path.parent() {
        create_dir_all(dir)?;
    }
    write_json(&path, global)
}

/// The changelog part of a [`StateWrite`].
pub enum ChangelogWrite<'a> {
    /// One line appended (`ops apply`).
    Append(&'a ChangelogEntry),
    /// The file replaced by these entries (`state rebuild --until-chapter N --write`).
    Replace(&'a [ChangelogEntry]),
    /// Left as it is.
    Keep,
}

/// What one state writer outside the chapter commit changes: the state file, the global
/// foreshadowing (when it changed) and the changelog.
pub struct StateWrite<'a> {
    /// The chapter the change is about (for messages).
    pub chapter: u32,
    pub kind: JournalKind,
    pub state: &'a Value,
    pub global: Option<&'a ForeshadowingGlobal>,
    pub changelog: ChangelogWrite<'a>,
}

/// Applies a [`StateWrite`] all-or-nothing through the commit journal: killed at any point,
/// the project is either untouched or `novel chapter recover` finishes it to the same bytes,
/// and no other writer runs in between (see [`crate::lock::ensure_no_journal`]). `token` is
/// the lock the journal releases at its end (empty when the lock is the session's own).
pub fn commit_state(project: &Project, w: StateWrite<'_>, token: String) -> Result<(), StoreError> {
    let mut writes = Vec::new();
    if let ChangelogWrite::Replace(entries) = w.changelog {
        writes.push(JournalWrite {
            path: layout::CHANGELOG.to_string(),
            content: changelog_text(entries),
        });
    }
    if let Some(global) = w.global {
        writes.push(JournalWrite {
            path: layout::FORESHADOWING_GLOBAL.to_string(),
            content: to_json_text(global),
        });
    }
    writes.push(JournalWrite {
        path: layout::CURRENT_STATE.to_string(),
        content: to_json_text(w.state),
    });
    let changelog_line = match w.changelog {
        ChangelogWrite::Append(entry) => {
            Some(serde_json::to_string(entry).expect("entries serialise"))
        }
        _ => None,
    };
    let journal = Journal {
        chapter: w.chapter,
        token,
        writes,
        changelog_line,
        remove: Vec::new(),
        retiring: None,
        cleanup: None,
        kind: Some(w.kind),
    };
    crate::chapter::commit(project, &journal)
}

fn changelog_text(entries: &[ChangelogEntry]) -> String {
    let mut text = String::new();
    for e in entries {
        text.push_str(&serde_json::to_string(e).expect("entries serialise"));
        text.push('\n');
    }
    text
}

/// Copies a project file, byte for byte (whatever it holds), into
/// `state/backups/<stamp>-<name>` before it is replaced; returns the backup's project-relative
/// path (None when the file does not exist). Never overwrites a backup: when the name is taken
/// (two backups within one second) a counter is added, `<stamp>-2-<name>`, …
pub fn backup(project: &Project, rel: &str, stamp: &str) -> Result<Option<String>, StoreError> {
    let path = project.path(rel);
    let bytes = match std::fs::read(&path) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(StoreError::io(&path, e)),
    };
    let name = rel.replace('/', "--");
    let stamp = stamp.replace(':', "");
    let dir = project.path(layout::BACKUPS);
    create_dir_all(&dir)?;
    for n in 1u32.. {
        let backup_rel = match n {
            1 => format!("{}/{stamp}-{name}", layout::BACKUPS),
            _ => format!("{}/{stamp}-{n}-{name}", layout::BACKUPS),
        };
        // Write it whole under a temporary name, then link it to the free name (a link never
        // replaces an existing file): a backup is complete or absent, never empty.
        if crate::io::write_new(&project.path(&backup_rel), &bytes)? {
            return Ok(Some(backup_rel));
        }
    }
    unreachable!("some counter value names a free file")
}

/// Pretty text of a value as the engine writes it (for diffs and dry runs).
pub fn render(value: &Value) -> String {
    to_json_text(value)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backups_in_the_same_second_never_overwrite_each_other() {
        let dir = tempfile::tempdir().unwrap();
        let project = Project {
            root: dir.path().to_path_buf(),
        };
        let state = project.path(layout::CURRENT_STATE);
        std::fs::create_dir_all(state.parent().unwrap()).unwrap();
        let stamp = "2026-11-22T08:00:00Z";
        let mut made = Vec::new();
        for text in ["{ torn", "第二版", "第三版"] {
            std::fs::write(&state, text).unwrap();
            made.push(
                backup(&project, layout::CURRENT_STATE, stamp)
                    .unwrap()
                    .unwrap(),
            );
        }
        assert_eq!(
            made,
            [
                "state/backups/2026-11-22T080000Z-state--current-state.json",
                "state/backups/2026-11-22T080000Z-2-state--current-state.json",
                "state/backups/2026-11-22T080000Z-3-state--current-state.json",
            ]
        );
        let kept: Vec<String> = made
            .iter()
            .map(|rel| std::fs::read_to_string(project.path(rel)).unwrap())
            .collect();
        assert_eq!(kept, ["{ torn", "第二版", "第三版"], "byte for byte");
        std::fs::remove_file(&state).unwrap();
        assert_eq!(
            backup(&project, layout::CURRENT_STATE, stamp).unwrap(),
            None
        );
    }
}
