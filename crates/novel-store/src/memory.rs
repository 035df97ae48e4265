//! Per-character memory (`004`): `memory/characters/<slug>.jsonl`, one [`MemoryEntry`] per
//! line — first the profile basics the character started with, then what it did, chapter by
//! chapter, as the Summarizer's `character_actions` of each committed chapter say.
//!
//! The memory is derived, never authoritative: every action line comes from a changelog line
//! (the commit copies the delta's `character_actions` into it), so a memory write that fails
//! never blocks a commit — it is reported, and [`record_chapter`] run again for that chapter
//! fills the gap. Appends only (`io::append_at`): a line torn by a crash is cut, never kept.

use std::collections::BTreeMap;
use std::fs;

use serde::Serialize;

use novel_core::model::revision::{CharacterAction, MemoryEntry, MemoryKind};
use novel_core::model::{Character, FileKind, is_slug};
use novel_core::ops::NameIndex;
use novel_core::revision::profile_entry;

use crate::error::StoreError;
use crate::io::{self, read_json_value};
use crate::layout;
use crate::project::Project;

fn line_of(e: &MemoryEntry) -> String {
    // A MemoryEntry is plain data: it always serialises.
    serde_json::to_string(e).unwrap_or_default()
}

/// The active characters, parsed (unreadable files are skipped: `novel validate` reports them).
fn active_characters(project: &Project) -> Vec<Character> {
    let Ok(read) = fs::read_dir(project.path("characters/active")) else {
        return Vec::new();
    };
    let mut out: Vec<Character> = read
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .filter_map(|p| read_json_value(&p).ok())
        .filter_map(|v| serde_json::from_value::<Character>(v).ok())
        .filter(|c| is_slug(&c.id))
        .collect();
    out.sort_by(|a, b| a.id.cmp(&b.id));
    out
}

/// The length of `path` without a torn last line (what an append may start from).
fn clean_len(path: &std::path::Path) -> Result<u64, StoreError> {
    match fs::read(path) {
        Ok(bytes) => Ok(bytes
            .iter()
            .rposition(|b| *b == b'\n')
            .map_or(0, |i| i as u64 + 1)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(0),
        Err(e) => Err(StoreError::io(path, e)),
    }
}

/// Appends `entries` to `slug`'s memory file in one write.
fn append(project: &Project, slug: &str, entries: &[MemoryEntry]) -> Result<(), StoreError> {
    let path = project.path(&layout::character_memory(slug));
    if let Some(dir) = path.parent() {
        io::create_dir_all(dir)?;
    }
    let lines: Vec<String> = entries.iter().map(line_of).collect();
    io::append_at(&path, clean_len(&path)?, &lines.join("\n"))
}

/// What `novel memory init` did.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Initialised {
    /// Characters that got their profile record.
    pub created: Vec<String>,
    /// Characters that already had a memory file.
    pub existing: Vec<String>,
    /// Asked-for slugs that are not active characters.
    pub unknown: Vec<String>,
}

/// `novel memory init [SLUG…]`: the profile record for each active character (all when
/// `only` is empty) that has no memory yet. Idempotent.
pub fn init(project: &Project, only: &[String], now: &str) -> Result<Initialised, StoreError> {
    let active = active_characters(project);
    let mut out = Initialised::default();
    for slug in only {
        if !active.iter().any(|c| &c.id == slug) {
            out.unknown.push(slug.clone());
        }
    }
    for c in active
        .iter()
        .filter(|c| only.is_empty() || only.contains(&c.id))
    {
        if clean_len(&project.path(&layout::character_memory(&c.id)))? > 0 {
            out.existing.push(c.id.clone());
            continue;
        }
        append(project, &c.id, &[profile_entry(c, now)])?;
        out.created.push(c.id.clone());
    }
    Ok(out)
}

/// What [`record_chapter`] did: per character the lines written, and what could not be.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Recorded {
    pub chapter: u32,
    /// slug → action lines appended.
    pub written: BTreeMap<String, usize>,
    /// Characters already recorded for this chapter (a rerun).
    pub already: Vec<String>,
    /// Names that match no character (display name, alias or slug).
    pub unknown: Vec<String>,
    /// `slug: reason` for each file that could not be written.
    pub failed: Vec<String>,
}

/// Appends chapter `n`'s actions to each character's memory (creating the profile record
/// first for a character without memory). A character whose memory already reaches chapter
/// `n` is left alone, so running it again after a crash adds nothing twice. Never fails:
/// what could not be written is in [`Recorded::failed`].
pub fn record_chapter(
    project: &Project,
    n: u32,
    actions: &[CharacterAction],
    names: &NameIndex,
    now: &str,
) -> Recorded {
    let mut out = Recorded {
        chapter: n,
        ..Recorded::default()
    };
    let mut by_slug: BTreeMap<String, Vec<MemoryEntry>> = BTreeMap::new();
    for a in actions {
        let who = a.character.trim();
        let slug = if is_slug(who) && project.path(&character_file(who)).is_file() {
            who.to_string()
        } else if let Some(s) = names.slug_for(who) {
            s.to_string()
        } else {
            if !out.unknown.iter().any(|u| u == who) {
                out.unknown.push(who.to_string());
            }
            continue;
        };
        by_slug.entry(slug.clone()).or_default().push(MemoryEntry {
            kind: MemoryKind::Action,
            character: slug,
            chapter: n,
            scene: a.scene,
            text: a.action.trim().to_string(),
            fields: Default::default(),
            recorded_at: Some(now.to_string()),
            extra: Default::default(),
        });
    }
    let active = active_characters(project);
    for (slug, entries) in by_slug {
        match record_one(project, &slug, n, entries, &active, now) {
            Ok(0) => out.already.push(slug),
            Ok(k) => {
                out.written.insert(slug, k);
            }
            Err(e) => out.failed.push(format!("{slug}: {e}")),
        }
    }
    out
}

fn character_file(slug: &str) -> String {
    format!("characters/active/{slug}.json")
}

fn record_one(
    project: &Project,
    slug: &str,
    n: u32,
    mut entries: Vec<MemoryEntry>,
    active: &[Character],
    now: &str,
) -> Result<usize, StoreError> {
    let existing = read(project, slug)?;
    if existing
        .iter()
        .any(|e| e.kind == MemoryKind::Action && e.chapter >= n)
    {
        return Ok(0);
    }
    let count = entries.len();
    if existing.is_empty()
        && let Some(c) = active.iter().find(|c| c.id == slug)
    {
        entries.insert(0, profile_entry(c, now));
    }
    append(project, slug, &entries)?;
    Ok(count)
}

/// Every entry of `slug`'s memory, in order (none when there is no file). A line that does
/// not parse is an error naming it.
/// The character `query` names — a slug of a character file or of a memory, a display name or
/// an alias — as its slug; else the closest ones ([`novel_core::ops::resolve_entity`]).
pub fn resolve(project: &Project, query: &str) -> Result<String, Vec<String>> {
    let names = crate::state::load_names(project);
    let mut known: Vec<String> = names.pairs().map(|(_, slug)| slug.to_string()).collect();
    if let Ok(dir) = fs::read_dir(project.path(layout::CHARACTER_MEMORY_DIR)) {
        known.extend(dir.filter_map(|e| e.ok()).filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            name.strip_suffix(".jsonl")
                .filter(|s| is_slug(s))
                .map(str::to_string)
        }));
    }
    known.sort();
    known.dedup();
    novel_core::ops::resolve_entity(query.trim(), &known, &names)
}

pub fn read(project: &Project, slug: &str) -> Result<Vec<MemoryEntry>, StoreError> {
    let rel = layout::character_memory(slug);
    let path = project.path(&rel);
    let text = match fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(StoreError::io(&path, e)),
    };
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let entry = serde_json::from_str::<MemoryEntry>(line).map_err(|e| StoreError::Model {
            path: path.clone(),
            what: FileKind::MemoryEntry.label(),
            message: format!("第 {} 行：{e}", i + 1),
        })?;
        out.push(entry);
    }
    Ok(out)
}

/// The profile record and the last `k` action entries of `slug`.
pub fn recent(project: &Project, slug: &str, k: usize) -> Result<Vec<MemoryEntry>, StoreError> {
    let all = read(project, slug)?;
    let profile = all.iter().find(|e| e.kind == MemoryKind::Profile).cloned();
    let actions: Vec<MemoryEntry> = all
        .into_iter()
        .filter(|e| e.kind == MemoryKind::Action)
        .collect();
    let skip = actions.len().saturating_sub(k);
    Ok(profile
        .into_iter()
        .chain(actions.into_iter().skip(skip))
        .collect())
}

/// The character actions a changelog line carries (what the commit copied from the delta).
pub fn actions_of_entry(entry: &novel_core::model::ChangelogEntry) -> Vec<CharacterAction> {
    entry
        .extra
        .get(CHANGELOG_KEY)
        .and_then(|v| serde_json::from_value(v.clone()).ok())
        .unwrap_or_default()
}

/// The changelog key under which a chapter's `character_actions` are kept.
pub const CHANGELOG_KEY: &str = novel_core::ops::CHARACTER_ACTIONS;

/// After the commit of chapter `n`: its changelog line's actions into the memories. The
/// changelog line is the last one when the commit just appended it; a chapter whose delta
/// was skipped has none, and nothing is recorded.
pub fn record_committed(project: &Project, n: u32, now: &str) -> Recorded {
    let entry = match crate::state::changelog_tail(project) {
        Ok(Some(e)) if e.chapter == n => e,
        Ok(_) => {
            return Recorded {
                chapter: n,
                ..Recorded::default()
            };
        }
        Err(e) => {
            return Recorded {
                chapter: n,
                failed: vec![format!("{}: {e}", layout::CHANGELOG)],
                ..Recorded::default()
            };
        }
    };
    let actions = actions_of_entry(&entry);
    if actions.is_empty() {
        return Recorded {
            chapter: n,
            ..Recorded::default()
        };
    }
    record_chapter(
        project,
        n,
        &actions,
        &crate::state::load_names(project),
        now,
    )
}

/// What [`rebuild`] wrote.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Rebuilt {
    /// slug → action lines in the rebuilt file.
    pub characters: BTreeMap<String, usize>,
    /// Names in the changelog's actions that match no character.
    pub unknown: Vec<String>,
}

/// `novel memory rebuild`: every active character's memory made again from the changelog —
/// its profile record (the one on file when it parses, else a new one), then the
/// `character_actions` of every changelog line in order, each stamped with that line's time.
/// A memory a commit failed to write comes back this way. Each file is replaced atomically,
/// under the project lock (a commit appending to the same files waits, or this does).
pub fn rebuild(
    project: &Project,
    now: &str,
    stale_after: std::time::Duration,
) -> Result<Rebuilt, crate::lock::LockError> {
    let _held = crate::lock::Held::take(project, stale_after)?;
    let names = crate::state::load_names(project);
    let active = active_characters(project);
    let mut lines: BTreeMap<String, Vec<MemoryEntry>> = BTreeMap::new();
    for c in &active {
        let kept = read(project, &c.id)
            .ok()
            .and_then(|all| all.into_iter().find(|e| e.kind == MemoryKind::Profile));
        lines.insert(
            c.id.clone(),
            vec![kept.unwrap_or_else(|| profile_entry(c, now))],
        );
    }
    let mut out = Rebuilt::default();
    for entry in crate::state::load_changelog(project)? {
        for a in actions_of_entry(&entry) {
            let who = a.character.trim();
            let slug = if lines.contains_key(who) {
                Some(who.to_string())
            } else {
                names.slug_for(who).map(str::to_string)
            };
            match slug.and_then(|s| lines.get_mut(&s)) {
                Some(list) => list.push(MemoryEntry {
                    kind: MemoryKind::Action,
                    character: list[0].character.clone(),
                    chapter: entry.chapter,
                    scene: a.scene,
                    text: a.action.trim().to_string(),
                    fields: Default::default(),
                    recorded_at: Some(entry.timestamp.clone()),
                    extra: Default::default(),
                }),
                // Retired characters keep the memory they had; unknown names are reported.
                None if !out.unknown.iter().any(|u| u == who) => out.unknown.push(who.to_string()),
                None => {}
            }
        }
    }
    for (slug, entries) in &lines {
        let path = project.path(&layout::character_memory(slug));
        if let Some(dir) = path.parent() {
            io::create_dir_all(dir)?;
        }
        let mut text: String = entries.iter().map(line_of).collect::<Vec<_>>().join("\n");
        text.push('\n');
        io::write_atomic(&path, text.as_bytes())?;
        out.characters.insert(slug.clone(), entries.len() - 1);
    }
    Ok(out)
}
