//! The 更新设定 flow on disk (seed `000` steps 2–5): the pre-update snapshot, loading what the
//! propagation and retirement checks read, the `spec_propagation` pending action, and the
//! all-or-nothing retirement.
//!
//! The snapshot is one hidden file, `state/.spec-snapshot.json`: one pending snapshot at a time
//! (its existence is the flag), written atomically, skipped by `novel validate` like every
//! engine-internal dot file, removed once `spec propagate` has recorded its result.
//!
//! A retirement reuses the commit journal of [`crate::chapter`]: every new file content and the
//! changelog line are decided first, journaled, then applied; a crash at any point is rolled
//! forward by `novel chapter recover`. It holds the project lock from the check to the journal's
//! last step and is refused while a chapter is in flight. The checkpoint writes of `spec
//! propagate` and `pending resolve` take the lock briefly too.
//!
//! Layer: commands — the work behind a command (stages, volumes, spec, reviews, import, export, the
//! guard); the top.

use std::fs;
use std::time::Duration;

use novel_core::FileKind;
use novel_core::model::{
    ChapterContract, Character, Checkpoint, ForeshadowingGlobal, PendingAction, Relationships,
    StorylineSchedule, Storylines, WorldRules,
};
use novel_core::spec::diff::{diff_characters, diff_rules};
use novel_core::spec::glossary::Glossary;
use novel_core::spec::propagate::{Propagation, PropagationInputs, propagate};
use novel_core::spec::retire::{
    RetireInputs, RetirementCheck, changelog_md_entry, check_retirement, end_relationships,
    retire_state,
};
use novel_core::spec::{Loaded, Located};
use novel_core::validate::check_document;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::chapter::{Journal, JournalWrite, load_checkpoint, write_checkpoint};
use crate::error::StoreError;
use crate::io::{read_json_value, read_text, to_json_text, write_atomic};
use crate::layout;
use crate::lock;
use crate::project::Project;

/// The pending snapshot (hidden: engine-internal, never validated as a project file).
pub const SNAPSHOT: &str = "state/.spec-snapshot.json";
/// The character change log the retirement appends to.
pub const CHARACTER_CHANGELOG: &str = "characters/changelog.md";
/// `pending_actions[].type` of a propagation.
pub const PENDING_TYPE: &str = "spec_propagation";
/// The keys of a spec-propagation pending action that list what it affects.
const AFFECTED_CHARACTER_CONTRACTS: &str = "affected_character_contracts";
const AFFECTED_CHAPTER_CONTRACTS: &str = "affected_chapter_contracts";

/// How many character contracts and chapter contracts a spec-propagation pending action
/// affects (`(0, 0)` for any other action).
pub fn affected_counts(a: &novel_core::model::checkpoint::PendingAction) -> (usize, usize) {
    let count = |key| {
        a.extra
            .get(key)
            .and_then(Value::as_array)
            .map_or(0, Vec::len)
    };
    if a.kind != PENDING_TYPE {
        return (0, 0);
    }
    (
        count(AFFECTED_CHARACTER_CONTRACTS),
        count(AFFECTED_CHAPTER_CONTRACTS),
    )
}

/// Why a spec command cannot go on.
#[derive(Debug, thiserror::Error)]
pub enum SpecError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("已有一份未处理的设定快照（{created_at} 创建）")]
    SnapshotExists { created_at: String },
    #[error("没有设定快照：更新设定前需要先运行 novel spec snapshot")]
    NoSnapshot,
    #[error("characters/active/ 中没有角色「{slug}」")]
    UnknownCharacter { slug: String },
    #[error("角色「{slug}」已经退场（在 characters/retired/ 中）")]
    AlreadyRetired { slug: String },
    #[error("角色「{}」不可退场：命中 {} 条退场保护", .0.display_name, .0.blocks.len())]
    Blocked(Box<RetirementCheck>),
    /// The project lock, the writers' guard or a pending journal (the lock's own error, with
    /// its code and hint).
    #[error(transparent)]
    Lock(lock::LockError),
    #[error(
        "第 {chapter} 章正在写作流程中（尚未提交），现在退场角色会让这一章的状态变更与新状态冲突"
    )]
    ChapterInFlight { chapter: u32 },
    #[error("没有 id 为「{id}」的待处理事项")]
    PendingNotFound { id: String },
}

impl SpecError {
    pub fn code(&self) -> &'static str {
        match self {
            SpecError::Store(e) => e.code(),
            SpecError::SnapshotExists { .. } => "E_SNAPSHOT_EXISTS",
            SpecError::NoSnapshot => "E_NO_SNAPSHOT",
            SpecError::UnknownCharacter { .. } => "E_UNKNOWN_CHARACTER",
            SpecError::AlreadyRetired { .. } => "E_ALREADY_RETIRED",
            SpecError::Blocked(_) => "E_RETIRE_BLOCKED",
            SpecError::Lock(e) => e.code(),
            SpecError::ChapterInFlight { .. } => "E_INFLIGHT",
            SpecError::PendingNotFound { .. } => "E_PENDING_NOT_FOUND",
        }
    }

    pub fn hint(&self) -> String {
        match self {
            SpecError::Store(e) => e.hint(),
            SpecError::SnapshotExists { .. } => {
                "先运行 novel spec propagate 处理上一次更新；若上一次更新已放弃，用 novel spec snapshot --replace 重新拍快照".into()
            }
            SpecError::NoSnapshot => {
                "顺序是：novel spec snapshot → 世界观设定师、角色设定师更新 → novel spec propagate".into()
            }
            SpecError::UnknownCharacter { .. } => {
                "参数是角色的 slug（characters/active/<slug>.json 的文件名），如 lin-feng".into()
            }
            SpecError::AlreadyRetired { .. } => "无需再次退场".into(),
            SpecError::Blocked(_) => {
                "按证据处理：回收或改写伏笔、调整故事线或交汇事件之后再试；不要调用角色设定师的退场模式".into()
            }
            SpecError::Lock(e) => e.hint(),
            SpecError::ChapterInFlight { chapter } => format!(
                "先提交第 {chapter} 章（novel chapter commit {chapter}），或在中断后运行 novel chapter recover，再退场角色"
            ),
            SpecError::PendingNotFound { .. } => "用 novel pending list 查看现有 id".into(),
        }
    }

    /// Conflicts (exit 3) as opposed to usage or project errors (exit 2) and checks (exit 1).
    pub fn is_conflict(&self) -> bool {
        matches!(self, SpecError::Lock(e) if e.is_conflict())
            || matches!(
                self,
                SpecError::SnapshotExists { .. } | SpecError::ChapterInFlight { .. }
            )
    }
}

// ------------------------------------------------------------------------------- snapshot

/// A world doc as it was: enough to say that it changed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DocDigest {
    pub path: String,
    pub chars: usize,
    /// FNV-1a 64 of the UTF-8 bytes, hex.
    pub digest: String,
}

/// A JSON file as it was.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SnapshotFile {
    pub path: String,
    pub value: Value,
}

/// What `spec propagate` compares against (seed `000` step 2).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Snapshot {
    /// Unique id (`snap-<time>-<random>`): the propagation records it in its pending action,
    /// so rerunning the same propagation (after a crash before the snapshot was removed) does
    /// not add a second entry, while a new snapshot — even within the same second — does.
    pub id: String,
    pub created_at: String,
    pub last_completed_chapter: u32,
    pub current_volume: u32,
    /// `world/rules.json`; `null` when the project had none.
    pub world_rules: Option<Value>,
    pub world_docs: Vec<DocDigest>,
    /// Every `characters/active/*.json` with its contracts.
    pub characters: Vec<SnapshotFile>,
}

fn fnv1a(bytes: &[u8]) -> String {
    let mut h: u64 = 0xcbf29ce484222325;
    for b in bytes {
        h ^= u64::from(*b);
        h = h.wrapping_mul(0x100000001b3);
    }
    format!("{h:016x}")
}

/// Sorted file names in a project directory with the given extension.
fn list(project: &Project, dir: &str, ext: &str) -> Vec<String> {
    let Ok(read) = fs::read_dir(project.path(dir)) else {
        return Vec::new();
    };
    let mut out: Vec<String> = read
        .filter_map(|e| e.ok())
        .filter(|e| e.path().is_file())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| !n.starts_with('.') && n.ends_with(ext))
        .map(|n| format!("{dir}/{n}"))
        .collect();
    out.sort();
    out
}

fn world_docs(project: &Project) -> Result<Vec<(String, String)>, StoreError> {
    list(project, "world", ".md")
        .into_iter()
        .map(|rel| Ok((rel.clone(), read_text(&project.path(&rel))?)))
        .collect()
}

/// The pending snapshot, if any.
pub fn load_snapshot(project: &Project) -> Result<Option<Snapshot>, StoreError> {
    let path = project.path(SNAPSHOT);
    if !path.exists() {
        return Ok(None);
    }
    let v = read_json_value(&path)?;
    serde_json::from_value(v)
        .map(Some)
        .map_err(|e| StoreError::Model {
            path,
            what: "设定快照",
            message: e.to_string(),
        })
}

/// Takes the snapshot. Refuses when one is pending, unless `replace`.
pub fn take_snapshot(project: &Project, now: &str, replace: bool) -> Result<Snapshot, SpecError> {
    let _guard = crate::lock::guard(project)?;
    if !replace && let Some(s) = load_snapshot(project)? {
        return Err(SpecError::SnapshotExists {
            created_at: s.created_at,
        });
    }
    let cp = load_checkpoint(project)?;
    let rules_path = project.path(layout::WORLD_RULES);
    let world_rules = if rules_path.exists() {
        Some(read_json_value(&rules_path)?)
    } else {
        None
    };
    let docs = world_docs(project)?
        .into_iter()
        .map(|(path, text)| DocDigest {
            path,
            chars: text.chars().count(),
            digest: fnv1a(text.as_bytes()),
        })
        .collect();
    let mut characters = Vec::new();
    for rel in list(project, "characters/active", ".json") {
        characters.push(SnapshotFile {
            value: read_json_value(&project.path(&rel))?,
            path: rel,
        });
    }
    let snapshot = Snapshot {
        id: format!(
            "snap-{}-{}",
            now.replace([':', '-'], ""),
            &lock::new_token()[..8]
        ),
        created_at: now.to_string(),
        last_completed_chapter: cp.last_completed_chapter,
        current_volume: cp.current_volume,
        world_rules,
        world_docs: docs,
        characters,
    };
    write_atomic(&project.path(SNAPSHOT), to_json_text(&snapshot).as_bytes())?;
    Ok(snapshot)
}

/// Removes the pending snapshot; true when there was one.
pub fn discard_snapshot(project: &Project) -> Result<bool, StoreError> {
    let _guard = crate::lock::guard(project)?;
    let path = project.path(SNAPSHOT);
    match fs::remove_file(&path) {
        Ok(()) => Ok(true),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(false),
        Err(e) => Err(StoreError::io(&path, e)),
    }
}

// ------------------------------------------------------------------------------- loading

/// Reads a JSON file and checks it against its kind: absent, parsed, or broken (why).
fn load_kind<T: serde::de::DeserializeOwned>(
    project: &Project,
    rel: &str,
    kind: FileKind,
) -> Loaded<T> {
    let path = project.path(rel);
    if !path.exists() {
        return Loaded::Absent;
    }
    let value = match read_json_value(&path) {
        Ok(v) => v,
        Err(e) => return Loaded::Broken(e.to_string()),
    };
    if let Some(f) = check_document(rel, kind, &value).into_iter().next() {
        return Loaded::Broken(f.brief());
    }
    match serde_json::from_value(value) {
        Ok(t) => Loaded::Parsed(t),
        Err(e) => Loaded::Broken(e.to_string()),
    }
}

/// What the spec checks read from the project as it is now.
#[derive(Debug, Clone)]
pub struct SpecProject {
    pub checkpoint: Checkpoint,
    pub world_rules: Loaded<WorldRules>,
    /// `world/*.md`: (path, text).
    pub world_docs: Vec<(String, String)>,
    pub active: Vec<Located<Character>>,
    pub retired: Vec<Located<Character>>,
    pub chapter_contracts: Vec<Located<ChapterContract>>,
    pub storylines: Loaded<Storylines>,
    /// Files that could not be read or parsed: (path, why). Never silently skipped.
    pub unreadable: Vec<(String, String)>,
}

fn characters_in(
    project: &Project,
    dir: &str,
    unreadable: &mut Vec<(String, String)>,
) -> Vec<Located<Character>> {
    let mut out = Vec::new();
    for rel in list(project, dir, ".json") {
        match load_kind::<Character>(project, &rel, FileKind::Character) {
            Loaded::Parsed(c) => out.push(Located {
                file: rel,
                volume: None,
                value: c,
            }),
            Loaded::Broken(why) => unreadable.push((rel, why)),
            Loaded::Absent => {}
        }
    }
    out
}

/// Loads everything the checks read.
pub fn load_spec_project(project: &Project) -> Result<SpecProject, StoreError> {
    let checkpoint = load_checkpoint(project)?;
    let mut unreadable = Vec::new();
    let active = characters_in(project, "characters/active", &mut unreadable);
    let retired = characters_in(project, "characters/retired", &mut unreadable);
    let mut chapter_contracts = Vec::new();
    let mut vols = list_dirs(project, "volumes");
    vols.sort();
    for vol in vols {
        let volume = vol.strip_prefix("vol-").and_then(|d| d.parse::<u32>().ok());
        for rel in list(
            project,
            &format!("volumes/{vol}/chapter-contracts"),
            ".json",
        ) {
            match load_kind::<ChapterContract>(project, &rel, FileKind::ChapterContract) {
                Loaded::Parsed(c) => chapter_contracts.push(Located {
                    file: rel,
                    volume,
                    value: c,
                }),
                Loaded::Broken(why) => unreadable.push((rel, why)),
                Loaded::Absent => {}
            }
        }
    }
    Ok(SpecProject {
        checkpoint,
        world_rules: load_kind(project, layout::WORLD_RULES, FileKind::WorldRules),
        world_docs: world_docs(project)?,
        active,
        retired,
        chapter_contracts,
        storylines: load_kind(project, layout::STORYLINES, FileKind::Storylines),
        unreadable,
    })
}

fn list_dirs(project: &Project, dir: &str) -> Vec<String> {
    let Ok(read) = fs::read_dir(project.path(dir)) else {
        return Vec::new();
    };
    read.filter_map(|e| e.ok())
        .filter(|e| e.path().is_dir())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect()
}

// ------------------------------------------------------------------------------- propagate

/// What `spec propagate` did.
#[derive(Debug, Clone, Serialize)]
pub struct PropagateOutcome {
    pub snapshot_id: String,
    pub propagation: Propagation,
    /// World docs added, removed or edited since the snapshot.
    pub world_docs_changed: Vec<String>,
    /// The pending action written (None when nothing changed).
    pub pending: Option<PendingAction>,
    /// Files that could not be read: their contracts were not checked.
    pub unreadable: Vec<(String, String)>,
}

/// The next pending id, and records it as handed out.
fn next_pending_id(cp: &mut Checkpoint) -> String {
    let listed = cp
        .pending_actions
        .iter()
        .filter_map(|a| a.id.strip_prefix("spec-propagation-"))
        .filter_map(|d| d.parse::<u64>().ok())
        .max()
        .unwrap_or(0);
    // The checkpoint keeps the last number handed out, so an id is never reused after its
    // entry is resolved.
    let issued = cp.spec_propagation_seq.unwrap_or(0);
    let n = listed.max(issued) + 1;
    cp.spec_propagation_seq = Some(n);
    format!("spec-propagation-{n:03}")
}

/// The project lock for one spec operation ([`lock::Held`]), or who holds it (`E_LOCKED`).
impl From<lock::LockError> for SpecError {
    fn from(e: lock::LockError) -> Self {
        match e {
            lock::LockError::Store(e) => SpecError::Store(e),
            e => SpecError::Lock(e),
        }
    }
}

fn hold(project: &Project, stale_after: Duration) -> Result<lock::Held<'_>, SpecError> {
    Ok(lock::Held::take(project, stale_after)?)
}

/// Compares the project with the pending snapshot, records ONE `spec_propagation` pending
/// action in the checkpoint (atomically) and removes the snapshot, holding the project lock
/// for it (refused with `E_LOCKED` while someone else — e.g. a chapter in the pipeline — holds
/// it). Rerunning after a crash between the two does not add a second entry (the entry carries
/// the snapshot id).
///
/// `extract_phrases` gives the key phrases of one changed rule sentence (see
/// [`PropagationInputs::extract_phrases`]); the store builds the glossary it is given.
pub fn propagate_project(
    project: &Project,
    now: &str,
    stale_after: Duration,
    extract_phrases: &dyn Fn(&str, &Glossary) -> Vec<String>,
) -> Result<PropagateOutcome, SpecError> {
    let _guard = crate::lock::guard(project)?;
    let snapshot = load_snapshot(project)?.ok_or(SpecError::NoSnapshot)?;
    let held = hold(project, stale_after)?;
    let current = load_spec_project(project)?;
    let before_rules = snapshot_rules(project, &snapshot)?;
    let after_rules = current_rules(project, &current)?;
    let before_chars = snapshot_characters(&snapshot);
    let rule_changes = diff_rules(before_rules.as_ref(), after_rules.as_ref());
    let b: Vec<&Character> = before_chars.iter().collect();
    let a: Vec<&Character> = current.active.iter().map(|c| &c.value).collect();
    let character_changes = diff_characters(&b, &a);
    let world_docs_changed = changed_world_docs(&snapshot, &current);
    let glossary = project_glossary(&current, before_rules.iter().chain(after_rules.iter()));
    let propagation = propagate(
        rule_changes,
        character_changes,
        PropagationInputs {
            characters: &current.active,
            chapter_contracts: &current.chapter_contracts,
            current_volume: current.checkpoint.current_volume,
            glossary: &glossary,
            extract_phrases,
        },
    );
    let (pending, checkpoint) = if propagation.is_empty() {
        (None, None)
    } else {
        let (action, cp) = plan_pending(&current, &snapshot, &propagation, now);
        (Some(action), cp)
    };
    // The pending action and the snapshot's removal together: killed in between, neither a
    // snapshot that was already propagated nor a propagation without its entry is left.
    let mut journal = Journal::files(
        current.checkpoint.last_completed_chapter,
        String::new(),
        checkpoint
            .map(|cp| JournalWrite {
                path: layout::CHECKPOINT.to_string(),
                content: crate::io::rewrite_text(&project.path(layout::CHECKPOINT), &cp),
            })
            .into_iter()
            .collect(),
        crate::chapter::JournalKind::Propagation,
    );
    journal.remove = vec![SNAPSHOT.to_string()];
    crate::chapter::commit(project, journal)?;
    drop(held);
    Ok(PropagateOutcome {
        snapshot_id: snapshot.id,
        propagation,
        world_docs_changed,
        pending,
        unreadable: current.unreadable,
    })
}

/// The world rules the snapshot holds (`None` when the project had none).
fn snapshot_rules(project: &Project, snapshot: &Snapshot) -> Result<Option<WorldRules>, SpecError> {
    let Some(v) = &snapshot.world_rules else {
        return Ok(None);
    };
    serde_json::from_value(v.clone()).map(Some).map_err(|e| {
        SpecError::Store(StoreError::Model {
            path: project.path(SNAPSHOT),
            what: FileKind::WorldRules.label(),
            message: e.to_string(),
        })
    })
}

/// The project's world rules now (`None` when absent; broken rules stop the propagation).
fn current_rules(
    project: &Project,
    current: &SpecProject,
) -> Result<Option<WorldRules>, SpecError> {
    match &current.world_rules {
        Loaded::Absent => Ok(None),
        Loaded::Parsed(r) => Ok(Some(r.clone())),
        Loaded::Broken(why) => Err(SpecError::Store(StoreError::Model {
            path: project.path(layout::WORLD_RULES),
            what: FileKind::WorldRules.label(),
            message: why.clone(),
        })),
    }
}

/// The snapshot's characters that parse: a character file that was broken before the update
/// counts as new now.
fn snapshot_characters(snapshot: &Snapshot) -> Vec<Character> {
    snapshot
        .characters
        .iter()
        .filter_map(|f| serde_json::from_value(f.value.clone()).ok())
        .collect()
}

/// World docs added, edited or removed since the snapshot, sorted.
fn changed_world_docs(snapshot: &Snapshot, current: &SpecProject) -> Vec<String> {
    let mut changed = Vec::new();
    for (path, text) in &current.world_docs {
        match snapshot.world_docs.iter().find(|d| &d.path == path) {
            Some(d) if d.digest == fnv1a(text.as_bytes()) => {}
            _ => changed.push(path.clone()),
        }
    }
    for d in &snapshot.world_docs {
        if !current.world_docs.iter().any(|(p, _)| p == &d.path) {
            changed.push(d.path.clone());
        }
    }
    changed.sort();
    changed
}

/// The glossary of the project: the whole cast (active, then retired), the ids of the rules
/// before and after the update (each once, in order), the world docs and the storylines.
fn project_glossary<'a>(
    current: &SpecProject,
    rules: impl Iterator<Item = &'a WorldRules>,
) -> Glossary {
    let cast: Vec<&Character> = current
        .active
        .iter()
        .chain(current.retired.iter())
        .map(|c| &c.value)
        .collect();
    let mut rule_ids: Vec<&str> = Vec::new();
    for r in rules {
        for rule in &r.rules {
            if !rule_ids.contains(&rule.id.as_str()) {
                rule_ids.push(&rule.id);
            }
        }
    }
    let docs: Vec<&str> = current.world_docs.iter().map(|(_, t)| t.as_str()).collect();
    Glossary::from_project(&cast, &rule_ids, &docs, current.storylines.parsed())
}

/// The pending action for this snapshot's propagation: the one already recorded (an older
/// version's rerun after a crash; the checkpoint then stays as it is), else a new one and the
/// checkpoint that carries it.
fn plan_pending(
    current: &SpecProject,
    snapshot: &Snapshot,
    propagation: &Propagation,
    now: &str,
) -> (PendingAction, Option<Checkpoint>) {
    let mut cp = current.checkpoint.clone();
    let existing = cp.pending_actions.iter().find(|p| {
        p.kind == PENDING_TYPE
            && p.extra.get("snapshot_id").and_then(Value::as_str) == Some(snapshot.id.as_str())
    });
    if let Some(p) = existing {
        return (p.clone(), None);
    }
    let action = pending_action(&mut cp, snapshot, propagation, &current.unreadable, now);
    cp.pending_actions.push(action.clone());
    (action, Some(cp))
}

fn pending_action(
    cp: &mut Checkpoint,
    snapshot: &Snapshot,
    p: &Propagation,
    unreadable: &[(String, String)],
    now: &str,
) -> PendingAction {
    let mut extra = serde_json::Map::new();
    if !p.changed_rule_ids.is_empty() {
        extra.insert("changed_rule_ids".into(), json!(p.changed_rule_ids));
    }
    if !p.changed_character_ids.is_empty() {
        extra.insert(
            "changed_character_ids".into(),
            json!(p.changed_character_ids),
        );
    }
    extra.insert(
        AFFECTED_CHARACTER_CONTRACTS.into(),
        json!(p.affected_character_contracts),
    );
    extra.insert(
        AFFECTED_CHAPTER_CONTRACTS.into(),
        json!(p.affected_chapter_contracts),
    );
    if !unreadable.is_empty() {
        extra.insert(
            "unreadable_files".into(),
            json!(unreadable.iter().map(|(f, _)| f).collect::<Vec<_>>()),
        );
    }
    extra.insert("recommended_state".into(), json!("VOL_PLANNING"));
    extra.insert("snapshot_id".into(), json!(snapshot.id));
    PendingAction {
        id: next_pending_id(cp),
        kind: PENDING_TYPE.into(),
        created_at: Some(now.to_string()),
        extra,
    }
}

// ------------------------------------------------------------------------------- pending

/// Removes one pending action by id (atomically, under the project lock) and returns it.
pub fn resolve_pending(
    project: &Project,
    id: &str,
    stale_after: Duration,
) -> Result<PendingAction, SpecError> {
    let _guard = crate::lock::guard(project)?;
    let _held = hold(project, stale_after)?;
    let mut cp = load_checkpoint(project)?;
    let pos = cp
        .pending_actions
        .iter()
        .position(|a| a.id == id)
        .ok_or_else(|| SpecError::PendingNotFound { id: id.to_string() })?;
    let removed = cp.pending_actions.remove(pos);
    write_checkpoint(project, &cp)?;
    Ok(removed)
}

// ------------------------------------------------------------------------------- retire

/// The current volume's schedule path.
pub fn schedule_file(volume: u32) -> String {
    format!("{}/storyline-schedule.json", layout::volume_dir(volume))
}

/// Runs the three protections for `slug`.
pub fn retire_check(project: &Project, slug: &str) -> Result<RetirementCheck, SpecError> {
    layout::safe_id(slug).map_err(StoreError::from)?;
    let sp = load_spec_project(project)?;
    check_loaded(project, &sp, slug)
}

fn check_loaded(
    project: &Project,
    sp: &SpecProject,
    slug: &str,
) -> Result<RetirementCheck, SpecError> {
    let Some(me) = sp.active.iter().find(|c| c.value.id == slug) else {
        if sp.retired.iter().any(|c| c.value.id == slug) {
            return Err(SpecError::AlreadyRetired { slug: slug.into() });
        }
        if let Some((file, why)) = sp
            .unreadable
            .iter()
            .find(|(f, _)| f == &format!("characters/active/{slug}.json"))
        {
            return Err(SpecError::Store(StoreError::Model {
                path: project.path(file),
                what: FileKind::Character.label(),
                message: why.clone(),
            }));
        }
        return Err(SpecError::UnknownCharacter { slug: slug.into() });
    };
    let cast: Vec<&Character> = sp
        .active
        .iter()
        .chain(sp.retired.iter())
        .map(|c| &c.value)
        .collect();
    let foreshadowing: Loaded<ForeshadowingGlobal> = load_kind(
        project,
        layout::FORESHADOWING_GLOBAL,
        FileKind::ForeshadowingGlobal,
    );
    let sched_rel = schedule_file(sp.checkpoint.current_volume);
    let schedule: Loaded<StorylineSchedule> =
        load_kind(project, &sched_rel, FileKind::StorylineSchedule);
    Ok(check_retirement(&RetireInputs {
        character: &me.value,
        cast: &cast,
        foreshadowing: foreshadowing.as_ref(),
        storylines: sp.storylines.as_ref(),
        schedule: schedule.as_ref(),
        schedule_file: &sched_rel,
        last_completed_chapter: sp.checkpoint.last_completed_chapter,
    }))
}

/// What `retire apply` did.
#[derive(Debug, Clone, Serialize)]
pub struct RetireApplied {
    pub check: RetirementCheck,
    /// (from, to) project-relative paths.
    pub moved: Vec<(String, String)>,
    /// True when `current-state.json` had the character and it was removed.
    pub state_changed: bool,
    pub state_version: u64,
    /// Pointers of the relationship edges marked `ended`.
    pub ended_relationships: Vec<String>,
}

/// Retires `slug`: re-checks the protections, then — as one journaled transaction — moves
/// `characters/active/<slug>.*` to `characters/retired/`, removes the character from
/// `current-state.json` through the state engine (a `source: retire` changelog line), marks its
/// relationship edges `ended` and appends to `characters/changelog.md`.
pub fn retire_apply(
    project: &Project,
    slug: &str,
    now: &str,
    stale_after: Duration,
) -> Result<RetireApplied, SpecError> {
    let _guard = crate::lock::guard(project)?;
    layout::safe_id(slug).map_err(StoreError::from)?;
    // The lock is held from the check to the end of the journaled commit.
    let held = hold(project, stale_after)?;
    let sp = load_spec_project(project)?;
    // A chapter in the pipeline was written against the current state version; retiring now
    // would bump it under that chapter's delta.
    if let Some(chapter) = sp.checkpoint.inflight_chapter {
        return Err(SpecError::ChapterInFlight { chapter });
    }
    let check = check_loaded(project, &sp, slug)?;
    if !check.allowed {
        return Err(SpecError::Blocked(Box::new(check)));
    }
    // `check_loaded` found the character among the active ones.
    let Some(me) = sp
        .active
        .iter()
        .find(|c| c.value.id == slug)
        .map(|c| &c.value)
    else {
        return Err(SpecError::UnknownCharacter { slug: slug.into() });
    };
    let last_completed = sp.checkpoint.last_completed_chapter;

    let mut plan = retire_moves(project, slug)?;
    let state = load_state_value(project)?;
    let (next_state, entry) = retire_state(&state, slug, &me.display_name, last_completed, now);
    let state_changed = !entry.applied.is_empty();
    if next_state != state {
        plan.writes.push(JournalWrite {
            path: layout::CURRENT_STATE.into(),
            content: to_json_text(&next_state),
        });
    }
    let ended = end_relationships_of(project, slug, &mut plan.writes)?;
    let moved_to: Vec<String> = plan.moved.iter().map(|(_, to)| to.clone()).collect();
    let entry_md = changelog_md_entry(me, last_completed, now, &moved_to, ended.len());
    plan.writes
        .push(character_changelog_write(project, &entry_md)?);

    // The journal's last step fsyncs `staging/`; a hand-made project may lack it.
    crate::io::create_dir_all(&project.path("staging"))?;
    let journal = Journal {
        chapter: last_completed,
        // From here the lock belongs to the journal: its last step releases it (so does
        // `novel chapter recover` after a crash; a holder that died is stale at once).
        token: held.into_journal_token(),
        writes: plan.writes,
        changelog_line: Some(crate::state::changelog_line(&entry)?),
        changelog_len: None,
        dirs: Vec::new(),
        appends: Vec::new(),
        remove: plan.remove,
        retiring: Some(slug.to_string()),
        kind: None,
        cleanup: None,
    };
    crate::chapter::commit(project, journal)?;
    Ok(RetireApplied {
        check,
        moved: plan.moved,
        state_changed,
        state_version: entry.state_version,
        ended_relationships: ended,
    })
}

/// What a retirement journals: the files to write, in order, and the files to remove.
struct RetirePlan {
    writes: Vec<JournalWrite>,
    remove: Vec<String>,
    /// (from, to) project-relative paths.
    moved: Vec<(String, String)>,
}

/// The moves of `characters/active/<slug>.*` to `characters/retired/`, sorted by name: each a
/// write of the new file and a removal of the old one.
fn retire_moves(project: &Project, slug: &str) -> Result<RetirePlan, SpecError> {
    let Ok(read) = fs::read_dir(project.path("characters/active")) else {
        return Err(SpecError::UnknownCharacter { slug: slug.into() });
    };
    let mut names: Vec<String> = read
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| {
            n.strip_prefix(slug)
                .is_some_and(|rest| rest.starts_with('.') && rest.len() > 1)
        })
        .collect();
    names.sort();
    let mut plan = RetirePlan {
        writes: Vec::new(),
        remove: Vec::new(),
        moved: Vec::new(),
    };
    for name in names {
        let from = format!("characters/active/{name}");
        let to = format!("characters/retired/{name}");
        plan.writes.push(JournalWrite {
            path: to.clone(),
            content: read_text(&project.path(&from))?,
        });
        plan.remove.push(from.clone());
        plan.moved.push((from, to));
    }
    Ok(plan)
}

/// `current-state.json` as a value, checked against its schema (the initial state when the
/// project has none yet).
fn load_state_value(project: &Project) -> Result<Value, SpecError> {
    let state_path = project.path(layout::CURRENT_STATE);
    if !state_path.exists() {
        return Ok(novel_core::model::CurrentState::initial_value());
    }
    let v = read_json_value(&state_path)?;
    if let Some(f) = check_document(layout::CURRENT_STATE, FileKind::CurrentState, &v)
        .into_iter()
        .next()
    {
        return Err(SpecError::Store(StoreError::Model {
            path: state_path,
            what: FileKind::CurrentState.label(),
            message: f.brief(),
        }));
    }
    Ok(v)
}

/// Marks `slug`'s relationship edges `ended` (queuing the new `relationships.json` when any
/// changed) and returns their pointers; a broken file stops the retirement.
fn end_relationships_of(
    project: &Project,
    slug: &str,
    writes: &mut Vec<JournalWrite>,
) -> Result<Vec<String>, SpecError> {
    match load_kind::<Relationships>(project, layout::RELATIONSHIPS, FileKind::Relationships) {
        Loaded::Absent => Ok(Vec::new()),
        Loaded::Broken(why) => Err(SpecError::Store(StoreError::Model {
            path: project.path(layout::RELATIONSHIPS),
            what: FileKind::Relationships.label(),
            message: why,
        })),
        Loaded::Parsed(rels) => {
            let (next, changed) = end_relationships(&rels, slug);
            if !changed.is_empty() {
                writes.push(JournalWrite {
                    path: layout::RELATIONSHIPS.into(),
                    content: crate::io::rewrite_text(&project.path(layout::RELATIONSHIPS), &next),
                });
            }
            Ok(changed)
        }
    }
}

/// `characters/changelog.md` with `entry` appended (started with its heading when absent).
fn character_changelog_write(project: &Project, entry: &str) -> Result<JournalWrite, SpecError> {
    let md_path = project.path(CHARACTER_CHANGELOG);
    let mut md = if md_path.exists() {
        read_text(&md_path)?
    } else {
        "# 角色变更记录\n".to_string()
    };
    md.push_str(entry);
    Ok(JournalWrite {
        path: CHARACTER_CHANGELOG.into(),
        content: md,
    })
}

#[cfg(test)]
mod tests {
    //! The flow on a copy of the fixture novel `tests/fixtures/spec/project`. Key phrases are
    //! the glossary terms of a rule sentence (`glossary_phrases`): the store cannot depend on
    //! novel-text's segmenter, and the flow here does not depend on which extractor it is given.
    use std::path::Path;

    use super::*;
    use novel_core::ops::{self, Context, NameIndex};
    use novel_core::spec::glossary::glossary_phrases;
    use novel_core::spec::retire::Protection;

    use crate::lock::LockState;

    const NOW: &str = "2026-01-03T00:00:00Z";
    const STALE: Duration = Duration::from_secs(1800);

    fn fixtures() -> std::path::PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/spec")
    }

    fn copy_dir(from: &Path, to: &Path) {
        fs::create_dir_all(to).unwrap();
        for e in fs::read_dir(from).unwrap() {
            let e = e.unwrap();
            let target = to.join(e.file_name());
            if e.path().is_dir() {
                copy_dir(&e.path(), &target);
            } else {
                fs::copy(e.path(), &target).unwrap();
            }
        }
    }

    /// A copy of the fixture project with the given overlays applied on top.
    fn project(overlays: &[&str]) -> (tempfile::TempDir, Project) {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("book");
        copy_dir(&fixtures().join("project"), &root);
        for o in overlays {
            copy_dir(&fixtures().join("overlays").join(o), &root);
        }
        (tmp, Project { root })
    }

    fn overlay(p: &Project, name: &str) {
        copy_dir(&fixtures().join("overlays").join(name), &p.root);
    }

    fn errors(p: &Project) -> Vec<String> {
        let view = crate::load::load_project(p);
        novel_core::validate::check_project(&view)
            .into_iter()
            .map(|f| f.render())
            .collect()
    }

    #[test]
    fn fixture_project_is_valid() {
        let (_t, p) = project(&[]);
        assert_eq!(errors(&p), Vec::<String>::new());
    }

    #[test]
    fn one_snapshot_at_a_time_and_validate_ignores_it() {
        let (_t, p) = project(&[]);
        let s = take_snapshot(&p, NOW, false).unwrap();
        assert_eq!(s.characters.len(), 7);
        assert_eq!(s.world_docs.len(), 2);
        assert_eq!(s.current_volume, 2);
        let err = take_snapshot(&p, "2026-01-04T00:00:00Z", false).unwrap_err();
        assert_eq!(err.code(), "E_SNAPSHOT_EXISTS");
        assert!(err.is_conflict());
        assert_eq!(errors(&p), Vec::<String>::new());
        take_snapshot(&p, "2026-01-04T00:00:00Z", true).unwrap();
        assert_eq!(
            load_snapshot(&p).unwrap().unwrap().created_at,
            "2026-01-04T00:00:00Z"
        );
    }

    #[test]
    fn propagate_without_snapshot_says_so() {
        let (_t, p) = project(&[]);
        assert_eq!(
            propagate_project(&p, NOW, STALE, &glossary_phrases)
                .unwrap_err()
                .code(),
            "E_NO_SNAPSHOT"
        );
    }

    #[test]
    fn world_update_writes_one_pending_action_and_consumes_the_snapshot() {
        let (_t, p) = project(&[]);
        take_snapshot(&p, NOW, false).unwrap();
        overlay(&p, "world-update");
        let out = propagate_project(&p, NOW, STALE, &glossary_phrases).unwrap();
        assert_eq!(
            out.propagation.changed_rule_ids,
            ["W-001", "W-002", "W-003", "W-005"]
        );
        assert!(out.world_docs_changed.is_empty());
        assert!(load_snapshot(&p).unwrap().is_none());
        let cp = load_checkpoint(&p).unwrap();
        assert_eq!(cp.pending_actions.len(), 1);
        let a = &cp.pending_actions[0];
        assert_eq!(a.kind, "spec_propagation");
        assert_eq!(a.id, "spec-propagation-001");
        assert_eq!(a.created_at.as_deref(), Some(NOW));
        assert_eq!(
            a.extra["changed_rule_ids"],
            json!(["W-001", "W-002", "W-003", "W-005"])
        );
        assert!(a.extra.get("changed_character_ids").is_none());
        let ccs: Vec<&str> = a.extra["affected_character_contracts"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["contract_id"].as_str().unwrap())
            .collect();
        assert_eq!(ccs, ["C-LUCHEN-001", "C-LUCHEN-003"]);
        let chapters: Vec<u64> = a.extra["affected_chapter_contracts"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["chapter"].as_u64().unwrap())
            .collect();
        assert_eq!(chapters, [34, 36, 61]);
        assert_eq!(a.extra["recommended_state"], "VOL_PLANNING");
        // The checkpoint stays valid; the only findings left are the dangling W-003 references
        // of chapter 61 — exactly what the pending action asks the PlotArchitect to fix.
        let left = errors(&p);
        assert_eq!(left.len(), 2, "{left:?}");
        assert!(left.iter().all(|e| {
            e.starts_with("volumes/vol-03/chapter-contracts/chapter-061.json")
                && e.contains("W-003")
        }));
        // A second propagation needs a new snapshot; resolving removes the entry.
        assert_eq!(
            propagate_project(&p, NOW, STALE, &glossary_phrases)
                .unwrap_err()
                .code(),
            "E_NO_SNAPSHOT"
        );
        let r = resolve_pending(&p, "spec-propagation-001", STALE).unwrap();
        assert_eq!(r.kind, "spec_propagation");
        assert!(load_checkpoint(&p).unwrap().pending_actions.is_empty());
        assert_eq!(
            resolve_pending(&p, "spec-propagation-001", STALE)
                .unwrap_err()
                .code(),
            "E_PENDING_NOT_FOUND"
        );
    }

    #[test]
    fn rerun_after_crash_before_snapshot_removal_adds_no_second_entry() {
        let (_t, p) = project(&[]);
        let snap = take_snapshot(&p, NOW, false).unwrap();
        overlay(&p, "world-update");
        propagate_project(&p, NOW, STALE, &glossary_phrases).unwrap();
        // Simulate a crash between the checkpoint write and the snapshot removal.
        write_atomic(&p.path(SNAPSHOT), to_json_text(&snap).as_bytes()).unwrap();
        let out = propagate_project(&p, "2026-01-05T00:00:00Z", STALE, &glossary_phrases).unwrap();
        assert_eq!(out.pending.unwrap().id, "spec-propagation-001");
        assert_eq!(load_checkpoint(&p).unwrap().pending_actions.len(), 1);
    }

    /// Rewrites 陆尘's first contract (a character update the snapshot will see).
    fn edit_lu_chen(p: &Project, rule: &str) {
        let path = p.path("characters/active/lu-chen.json");
        let mut v = read_json_value(&path).unwrap();
        v["contracts"][0]["rule"] = json!(rule);
        write_atomic(&path, to_json_text(&v).as_bytes()).unwrap();
    }

    fn pending_ids(p: &Project) -> Vec<String> {
        load_checkpoint(p)
            .unwrap()
            .pending_actions
            .iter()
            .map(|a| a.id.clone())
            .collect()
    }

    #[test]
    fn a_second_propagation_within_the_same_second_is_recorded() {
        let (_t, p) = project(&[]);
        let first_snap = take_snapshot(&p, NOW, false).unwrap();
        overlay(&p, "world-update");
        let first = propagate_project(&p, NOW, STALE, &glossary_phrases).unwrap();
        // A new update, snapshot and propagation, all within the same second.
        let second_snap = take_snapshot(&p, NOW, false).unwrap();
        assert_ne!(first_snap.id, second_snap.id);
        overlay(&p, "character-update");
        let second = propagate_project(&p, NOW, STALE, &glossary_phrases).unwrap();
        assert_ne!(first.snapshot_id, second.snapshot_id);
        assert_eq!(
            pending_ids(&p),
            ["spec-propagation-001", "spec-propagation-002"]
        );
        assert_eq!(
            second.pending.unwrap().extra["changed_character_ids"],
            json!(["lu-chen"])
        );
    }

    #[test]
    fn pending_ids_are_never_reused_after_a_resolve() {
        let (_t, p) = project(&[]);
        take_snapshot(&p, NOW, false).unwrap();
        overlay(&p, "world-update");
        propagate_project(&p, NOW, STALE, &glossary_phrases).unwrap();
        take_snapshot(&p, NOW, false).unwrap();
        overlay(&p, "character-update");
        propagate_project(&p, NOW, STALE, &glossary_phrases).unwrap();
        // Resolving the newest entry must not hand its id out again.
        resolve_pending(&p, "spec-propagation-002", STALE).unwrap();
        take_snapshot(&p, NOW, false).unwrap();
        edit_lu_chen(&p, "当前修为：金丹初期");
        propagate_project(&p, NOW, STALE, &glossary_phrases).unwrap();
        assert_eq!(
            pending_ids(&p),
            ["spec-propagation-001", "spec-propagation-003"]
        );
        // Nor when every entry is gone.
        resolve_pending(&p, "spec-propagation-001", STALE).unwrap();
        resolve_pending(&p, "spec-propagation-003", STALE).unwrap();
        take_snapshot(&p, NOW, false).unwrap();
        edit_lu_chen(&p, "当前修为：金丹中期");
        let out = propagate_project(&p, NOW, STALE, &glossary_phrases).unwrap();
        assert_eq!(out.pending.unwrap().id, "spec-propagation-004");
        // The checkpoint with its counter stays valid (the W-003 findings of chapter 61 are
        // the world update's, see above).
        let left = errors(&p);
        assert!(
            !left.iter().any(|e| e.starts_with(".checkpoint")),
            "{left:?}"
        );
    }

    #[test]
    fn propagate_and_resolve_refuse_while_someone_else_holds_the_lock() {
        let (_t, p) = project(&[]);
        take_snapshot(&p, NOW, false).unwrap();
        overlay(&p, "world-update");
        // A live holder: this very test process, as if it were a session writing chapter 34.
        let other = lock::acquire(&p, Some(34), std::process::id(), STALE).unwrap();
        let err = propagate_project(&p, NOW, STALE, &glossary_phrases).unwrap_err();
        assert_eq!(err.code(), "E_LOCKED");
        assert!(err.is_conflict());
        assert!(
            err.to_string()
                .contains(&format!("进程 {}", std::process::id())),
            "{err}"
        );
        // Nothing was consumed: the snapshot is still there, no entry was written.
        assert!(load_snapshot(&p).unwrap().is_some());
        assert!(pending_ids(&p).is_empty());
        lock::release(&p, &other.info.token).unwrap();

        propagate_project(&p, NOW, STALE, &glossary_phrases).unwrap();
        assert_eq!(lock::status(&p, STALE), LockState::Free);
        let other = lock::acquire(&p, None, std::process::id(), STALE).unwrap();
        let err = resolve_pending(&p, "spec-propagation-001", STALE).unwrap_err();
        assert_eq!(err.code(), "E_LOCKED");
        assert_eq!(pending_ids(&p), ["spec-propagation-001"]);
        lock::release(&p, &other.info.token).unwrap();
        resolve_pending(&p, "spec-propagation-001", STALE).unwrap();
        assert_eq!(lock::status(&p, STALE), LockState::Free);
    }

    #[test]
    fn character_update_records_changed_character_ids() {
        let (_t, p) = project(&[]);
        take_snapshot(&p, NOW, false).unwrap();
        overlay(&p, "character-update");
        let out = propagate_project(&p, NOW, STALE, &glossary_phrases).unwrap();
        let a = out.pending.unwrap();
        assert_eq!(a.extra["changed_character_ids"], json!(["lu-chen"]));
        assert!(a.extra.get("changed_rule_ids").is_none());
        let chapters: Vec<u64> = a.extra["affected_chapter_contracts"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["chapter"].as_u64().unwrap())
            .collect();
        assert_eq!(chapters, [35, 36, 61]);
    }

    #[test]
    fn no_change_writes_no_pending_action() {
        let (_t, p) = project(&[]);
        take_snapshot(&p, NOW, false).unwrap();
        let out = propagate_project(&p, NOW, STALE, &glossary_phrases).unwrap();
        assert!(out.propagation.is_empty());
        assert!(out.pending.is_none());
        assert!(load_checkpoint(&p).unwrap().pending_actions.is_empty());
        assert!(load_snapshot(&p).unwrap().is_none());
    }

    #[test]
    fn retire_check_on_disk_evidence() {
        let (_t, p) = project(&[]);
        let c = retire_check(&p, "zhao-qian").unwrap();
        assert!(!c.allowed);
        assert_eq!(c.blocks[0].protection, Protection::A);
        assert_eq!(c.blocks[0].evidence.file, "foreshadowing/global.json");
        assert_eq!(
            c.blocks[0].evidence.pointer,
            "/foreshadowing/0/history/1/detail"
        );
        assert!(retire_check(&p, "li-si").unwrap().allowed);
        assert_eq!(
            retire_check(&p, "nobody").unwrap_err().code(),
            "E_UNKNOWN_CHARACTER"
        );
        assert_eq!(
            retire_check(&p, "../x").unwrap_err().code(),
            "E_UNSAFE_PATH"
        );
    }

    #[test]
    fn unparseable_storylines_block_conservatively() {
        let (_t, p) = project(&["broken-storylines"]);
        let c = retire_check(&p, "li-si").unwrap();
        assert!(!c.allowed);
        assert_eq!(c.blocks[0].protection, Protection::B);
        assert!(!c.blocks[0].certain);
        assert_eq!(c.blocks[0].evidence.file, "storylines/storylines.json");
        let err = retire_apply(&p, "li-si", NOW, STALE).unwrap_err();
        assert_eq!(err.code(), "E_RETIRE_BLOCKED");
        assert!(p.path("characters/active/li-si.json").exists());
    }

    #[test]
    fn blocked_apply_changes_nothing() {
        let (_t, p) = project(&[]);
        let before = fs::read_to_string(p.path(layout::CURRENT_STATE)).unwrap();
        let err = retire_apply(&p, "sun-li", NOW, STALE).unwrap_err();
        let SpecError::Blocked(check) = err else {
            panic!("{err}")
        };
        assert_eq!(check.blocks[0].protection, Protection::C);
        assert_eq!(
            fs::read_to_string(p.path(layout::CURRENT_STATE)).unwrap(),
            before
        );
        assert!(p.path("characters/active/sun-li.json").exists());
    }

    #[test]
    fn retire_apply_moves_files_and_state_rebuild_reproduces_it() {
        let (_t, p) = project(&[]);
        let out = retire_apply(&p, "li-si", NOW, STALE).unwrap();
        assert!(out.state_changed);
        assert_eq!(out.state_version, 3);
        assert_eq!(
            out.moved,
            vec![
                (
                    "characters/active/li-si.json".to_string(),
                    "characters/retired/li-si.json".to_string()
                ),
                (
                    "characters/active/li-si.md".to_string(),
                    "characters/retired/li-si.md".to_string()
                ),
            ]
        );
        assert!(!p.path("characters/active/li-si.json").exists());
        assert!(!p.path("characters/active/li-si.md").exists());
        assert!(p.path("characters/retired/li-si.json").exists());
        assert!(!p.path(layout::JOURNAL).exists());
        assert_eq!(
            out.ended_relationships,
            ["/relationships/0", "/relationships/2"]
        );
        let md = fs::read_to_string(p.path(CHARACTER_CHANGELOG)).unwrap();
        assert!(md.contains("角色退场：李四（li-si）"), "{md}");
        assert!(md.contains("自第 34 章起退场"), "{md}");
        // The lock was held through the commit and released by its last step.
        assert_eq!(lock::status(&p, STALE), LockState::Free);

        // novel validate passes.
        assert_eq!(errors(&p), Vec::<String>::new());
        // novel state rebuild reproduces the state without the character.
        let state = crate::state::load_state(&p).unwrap();
        assert!(state["characters"].get("li-si").is_none());
        let log = crate::state::load_changelog(&p).unwrap();
        assert_eq!(log.len(), 3);
        assert_eq!(
            serde_json::to_value(log[2].source).unwrap(),
            json!("retire")
        );
        // Effective from the chapter after the last completed one (33).
        assert_eq!(log[2].chapter, 34);
        let global = crate::state::load_global(&p).unwrap();
        let names = NameIndex::default();
        let replayed = ops::replay(
            &log,
            None,
            &global,
            Context {
                names: &names,
                plan: &[],
            },
        )
        .unwrap();
        assert_eq!(ops::diff(&replayed.state, &state), vec![]);
        // And a second retirement of the same character says it is done.
        assert_eq!(
            retire_apply(&p, "li-si", NOW, STALE).unwrap_err().code(),
            "E_ALREADY_RETIRED"
        );
    }

    #[test]
    fn retire_apply_refuses_while_a_chapter_is_in_flight() {
        let (_t, p) = project(&[]);
        let mut cp = load_checkpoint(&p).unwrap();
        cp.inflight_chapter = Some(34);
        write_checkpoint(&p, &cp).unwrap();
        let before = fs::read_to_string(p.path(layout::CURRENT_STATE)).unwrap();
        let err = retire_apply(&p, "li-si", NOW, STALE).unwrap_err();
        assert_eq!(err.code(), "E_INFLIGHT");
        assert!(err.is_conflict());
        assert!(err.to_string().contains("第 34 章"), "{err}");
        assert_eq!(
            fs::read_to_string(p.path(layout::CURRENT_STATE)).unwrap(),
            before
        );
        assert!(p.path("characters/active/li-si.json").exists());
        // The lock taken for the attempt is given back.
        assert_eq!(lock::status(&p, STALE), LockState::Free);
    }

    #[test]
    fn retire_apply_refuses_while_someone_else_holds_the_lock() {
        let (_t, p) = project(&[]);
        let other = lock::acquire(&p, Some(34), std::process::id(), STALE).unwrap();
        let err = retire_apply(&p, "li-si", NOW, STALE).unwrap_err();
        assert_eq!(err.code(), "E_LOCKED");
        assert!(err.is_conflict());
        assert!(err.to_string().contains("第 34 章"), "{err}");
        assert!(p.path("characters/active/li-si.json").exists());
        // Still the other holder's lock.
        assert_eq!(lock::verify(&p, &other.info.token).unwrap(), other.info);
    }

    #[test]
    fn retire_apply_refuses_while_a_commit_journal_is_pending() {
        let (_t, p) = project(&[]);
        let journal = Journal {
            chapter: 34,
            token: "t".into(),
            writes: Vec::new(),
            changelog_line: None,
            changelog_len: None,
            dirs: Vec::new(),
            appends: Vec::new(),
            remove: Vec::new(),
            retiring: None,
            kind: None,
            cleanup: None,
        };
        fs::write(
            p.path(layout::JOURNAL),
            serde_json::to_string(&journal).unwrap(),
        )
        .unwrap();
        let err = retire_apply(&p, "li-si", NOW, STALE).unwrap_err();
        assert_eq!(err.code(), "E_JOURNAL");
        assert!(err.is_conflict());
    }
}
