//! Per-character memory (`004`): `memory/characters/<slug>.jsonl`, one [`MemoryEntry`] per
//! line — first the profile basics the character started with, then what it did, chapter by
//! chapter, as the Summarizer's `character_actions` of each committed chapter say.
//!
//! The memory is derived, never authoritative: every action line comes from a changelog line
//! (the commit copies the delta's `character_actions` into it). The commit plans the lines
//! ([`plan_chapter`]) and appends them through its own journal, so a commit killed at any
//! point keeps them (`novel chapter recover` finishes the append); a memory file that cannot be
//! read never blocks a commit — it is reported, and `novel memory rebuild` makes it again.
//! Appends only (`io::append_at` at a length measured under the writers' guard): a line torn
//! by a crash is cut, never kept. `memory init` and `memory rebuild` write through a journal too.
//!
//! Layer: writers (character memory), above the writers' ground (`journal`, `transaction`) and
//! below the chapter commit (`chapter`) that records it.

use std::collections::BTreeMap;
use std::fs;

use serde::Serialize;

use novel_core::model::revision::{CharacterAction, MemoryEntry, MemoryKind};
use novel_core::model::{Character, FileKind, is_slug};
use novel_core::ops::NameIndex;
use novel_core::revision::profile_entry;

use crate::error::StoreError;
use crate::io::read_json_value;
use crate::journal::{Journal, JournalAppend, JournalKind, JournalWrite};
use crate::layout;
use crate::project::Project;

fn line_of(e: &MemoryEntry) -> String {
    // A MemoryEntry is plain data: it always serialises.
    serde_json::to_string(e).unwrap_or_default()
}

/// The active characters, parsed (unreadable files are skipped: `novel validate` reports them).
fn active_characters(project: &Project) -> Vec<Character> {
    let dir = project.path("characters/active");
    let Ok(names) = crate::io::dir_names(&dir) else {
        return Vec::new();
    };
    let mut out: Vec<Character> = names
        .iter()
        .map(|n| dir.join(n))
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

/// The journal append that adds `entries` to `slug`'s memory file (its base is measured when
/// the journal is written, under the guard).
fn append_of(slug: &str, entries: &[MemoryEntry]) -> JournalAppend {
    JournalAppend {
        path: layout::character_memory(slug),
        base: 0,
        text: entries.iter().map(line_of).collect::<Vec<_>>().join("\n"),
    }
}

/// Writes `appends` all-or-nothing through the journal (`kind` says what wrote it).
fn commit_appends(
    project: &Project,
    appends: Vec<JournalAppend>,
    kind: JournalKind,
) -> Result<(), StoreError> {
    if appends.is_empty() {
        return Ok(());
    }
    let mut journal = Journal::files(0, String::new(), Vec::new(), kind);
    journal.appends = appends;
    crate::transaction::commit(project, journal).map(drop)
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
    let _guard = crate::lock::guard(project)?;
    let active = active_characters(project);
    let mut appends = Vec::new();
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
        appends.push(append_of(&c.id, &[profile_entry(c, now)]));
        out.created.push(c.id.clone());
    }
    commit_appends(project, appends, JournalKind::Memory)?;
    Ok(out)
}

/// What a commit does to the memories: per character the lines it appends, and what could
/// not be planned.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Recorded {
    pub chapter: u32,
    /// slug → action lines appended.
    pub written: BTreeMap<String, usize>,
    /// Characters already recorded for this chapter (a rerun).
    pub already: Vec<String>,
    /// Names that match no character (display name, alias or slug).
    pub unknown: Vec<String>,
    /// `slug: reason` for each memory file that could not be read (it is left as it is;
    /// `novel memory rebuild` makes it again).
    pub failed: Vec<String>,
}

/// Chapter `n`'s actions as lines to append to each character's memory (with the profile
/// record first for a character without memory), for the commit's journal. A character whose
/// memory already reaches chapter `n` gets nothing, so a rerun adds nothing twice. Never
/// fails: a memory that cannot be read is in [`Recorded::failed`].
pub fn plan_chapter(
    project: &Project,
    n: u32,
    actions: &[CharacterAction],
    names: &NameIndex,
    now: &str,
) -> (Vec<JournalAppend>, Recorded) {
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
    let active = if by_slug.is_empty() {
        Vec::new()
    } else {
        active_characters(project)
    };
    let mut appends = Vec::new();
    for (slug, entries) in by_slug {
        match plan_one(project, &slug, n, entries, &active, now) {
            Ok(None) => out.already.push(slug),
            Ok(Some((count, append))) => {
                appends.push(append);
                out.written.insert(slug, count);
            }
            Err(e) => out.failed.push(format!("{slug}: {e}")),
        }
    }
    (appends, out)
}

fn character_file(slug: &str) -> String {
    format!("characters/active/{slug}.json")
}

/// One character's lines for chapter `n` (and how many are actions), or `None` when its
/// memory already reaches chapter `n`.
fn plan_one(
    project: &Project,
    slug: &str,
    n: u32,
    mut entries: Vec<MemoryEntry>,
    active: &[Character],
    now: &str,
) -> Result<Option<(usize, JournalAppend)>, StoreError> {
    // Lines are appended in chapter order: the last one says how far the memory reaches (the
    // commit must not pay for every earlier chapter of the character).
    let last = last_entry(project, slug)?;
    if last
        .as_ref()
        .is_some_and(|e| e.kind == MemoryKind::Action && e.chapter >= n)
    {
        return Ok(None);
    }
    let count = entries.len();
    if last.is_none()
        && let Some(c) = active.iter().find(|c| c.id == slug)
    {
        entries.insert(0, profile_entry(c, now));
    }
    Ok(Some((count, append_of(slug, &entries))))
}

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

/// The last entry of `slug`'s memory (none when there is no file or no line); a last line that
/// does not parse is an error naming it.
fn last_entry(project: &Project, slug: &str) -> Result<Option<MemoryEntry>, StoreError> {
    let path = project.path(&layout::character_memory(slug));
    let text = match fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(StoreError::io(&path, e)),
    };
    let Some((i, line)) = text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .last()
    else {
        return Ok(None);
    };
    serde_json::from_str::<MemoryEntry>(line)
        .map(Some)
        .map_err(|e| StoreError::Model {
            path,
            what: FileKind::MemoryEntry.label(),
            message: format!("第 {} 行：{e}", i + 1),
        })
}

/// Every entry of `slug`'s memory, in order (none when there is no file). A line that does
/// not parse is an error naming it.
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
    let mut writes = Vec::new();
    for (slug, entries) in &lines {
        let mut text: String = entries.iter().map(line_of).collect::<Vec<_>>().join("\n");
        text.push('\n');
        writes.push(JournalWrite {
            path: layout::character_memory(slug),
            content: text,
        });
        out.characters.insert(slug.clone(), entries.len() - 1);
    }
    if !writes.is_empty() {
        let journal = Journal::files(0, String::new(), writes, JournalKind::Memory);
        crate::transaction::commit(project, journal)?;
    }
    Ok(out)
}
