//! Continuity of the L3 contracts (PRD §6.5.5: chapter N's postconditions are N+1's
//! preconditions; `docs/orchestration.md` §7). Four rules:
//!
//! | rule | what |
//! |---|---|
//! | `precondition_vs_state` | contract N's `preconditions.character_states` against the state replayed to chapter N−1 |
//! | `chain_break` | contract N−1's `postconditions.state_changes` against contract N's `preconditions.character_states` |
//! | `unrecorded_change` | a committed chapter whose contract promised a location, status or possession change no applied op recorded |
//! | `retired_required` | a retired (or dead) character named by a later contract |
//!
//! Contracts name characters by display name or alias (sometimes by slug); [`NameIndex`] maps
//! them to the slugs the state uses. A contract field is compared with the state field of the
//! same name, or — for locations, statuses and possessions, which contracts often write in
//! Chinese (`位置`, `状态`, `持有`) — with the state field of the same kind ([`field_kind`]).
//! A field the state does not have is not a contradiction: nothing is reported for it.
//!
//! Severity: `error` for a chapter not yet written (the plan or the text still can change),
//! `warning` for a committed one (history to know about). `unrecorded_change` is always a
//! warning.

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use super::{LoadedContract, pointer};
use crate::diagnostic::{Diagnostic, Severity};
use crate::model::ChangelogEntry;
use crate::model::is_slug;
use crate::model::state::{ChangeSource, OpKind};
use crate::ops::NameIndex;

pub const PRECONDITION_VS_STATE: &str = "precondition_vs_state";
pub const CHAIN_BREAK: &str = "chain_break";
pub const UNRECORDED_CHANGE: &str = "unrecorded_change";
pub const RETIRED_REQUIRED: &str = "retired_required";

/// `state/changelog.jsonl` and `state/current-state.json`, as findings name them.
pub const CHANGELOG_FILE: &str = "state/changelog.jsonl";
pub const STATE_FILE: &str = "state/current-state.json";

/// What kind of fact a contract or state field holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FieldKind {
    Location,
    Status,
    Possession,
    Other,
}

impl FieldKind {
    fn label(self) -> &'static str {
        match self {
            FieldKind::Location => "地点",
            FieldKind::Status => "状态",
            FieldKind::Possession => "持有物",
            FieldKind::Other => "字段",
        }
    }
}

const LOCATION_KEYS: [&str; 6] = ["location", "位置", "地点", "所在", "所在地", "去向"];
const STATUS_KEYS: [&str; 6] = ["status", "life_status", "alive", "状态", "生死", "存活"];
const POSSESSION_KEYS: [&str; 9] = [
    "inventory",
    "possessions",
    "items",
    "equipment",
    "物品",
    "持有",
    "持有物",
    "随身物品",
    "装备",
];
/// Status values that mean the character is dead.
const DEAD: [&str; 8] = [
    "dead", "deceased", "死亡", "已死", "身亡", "阵亡", "陨落", "已故",
];

/// The kind of a field by its key (English state keys and the Chinese a contract may use).
pub fn field_kind(key: &str) -> FieldKind {
    let k = key.trim();
    let lower = k.to_ascii_lowercase();
    let is = |list: &[&str]| list.iter().any(|w| *w == lower || *w == k);
    if is(&LOCATION_KEYS) {
        FieldKind::Location
    } else if is(&STATUS_KEYS) {
        FieldKind::Status
    } else if is(&POSSESSION_KEYS) {
        FieldKind::Possession
    } else {
        FieldKind::Other
    }
}

/// The state field a contract field is compared with: the same key, else the first state key
/// of the same kind (locations, statuses, possessions only).
fn state_field<'v>(character: &'v Map<String, Value>, key: &str) -> Option<(&'v str, &'v Value)> {
    if let Some((k, v)) = character.get_key_value(key) {
        return Some((k.as_str(), v));
    }
    let kind = field_kind(key);
    if kind == FieldKind::Other {
        return None;
    }
    character
        .iter()
        .find(|(k, _)| field_kind(k) == kind)
        .map(|(k, v)| (k.as_str(), v))
}

/// Whether `actual` satisfies what `expected` asks: equal strings (trimmed), a string held in a
/// list, a list all of whose items are held, equal numbers, else equal JSON.
pub fn holds(expected: &Value, actual: &Value) -> bool {
    match (expected, actual) {
        (Value::String(e), Value::String(a)) => e.trim() == a.trim(),
        (Value::String(e), Value::Array(items)) => items
            .iter()
            .any(|x| x.as_str().is_some_and(|s| s.trim() == e.trim())),
        (Value::Array(es), Value::Array(_)) => es.iter().all(|e| holds(e, actual)),
        (Value::Number(e), Value::Number(a)) => e.as_f64() == a.as_f64(),
        _ => expected == actual,
    }
}

/// A value as a message shows it: strings in 「」, the rest as compact JSON.
pub fn shown(v: &Value) -> String {
    match v {
        Value::String(s) => format!("「{s}」"),
        other => {
            let t = other.to_string();
            if t.chars().count() > 60 {
                format!("{}…", t.chars().take(60).collect::<String>())
            } else {
                t
            }
        }
    }
}

/// Whether a character's state says it is dead.
pub fn is_dead(character: &Map<String, Value>) -> bool {
    character.iter().any(|(k, v)| {
        field_kind(k) == FieldKind::Status
            && match v {
                Value::String(s) => DEAD.contains(&s.trim().to_ascii_lowercase().as_str()),
                Value::Bool(alive) => k == "alive" && !alive,
                _ => false,
            }
    })
}

/// A retired character: its file, and the first chapter it is retired for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Retired {
    pub file: String,
    /// The chapter of its `source: retire` changelog line, else the chapter after the last
    /// completed one.
    pub from_chapter: u32,
}

/// Everything the rules read. `states` holds the state before chapter N (after every
/// changelog line of an earlier chapter) for the checked chapters up to the last completed + 1
/// — at least the `characters` entries of those the chapter's contract names.
#[derive(Debug, Clone, Copy)]
pub struct ContinuityInputs<'a> {
    /// The checked chapters' contracts and the ones just before them, by chapter.
    pub contracts: &'a BTreeMap<u32, LoadedContract>,
    /// The chapters to check.
    pub chapters: &'a [u32],
    pub names: &'a NameIndex,
    /// Retired characters by slug.
    pub retired: &'a BTreeMap<String, Retired>,
    pub states: &'a BTreeMap<u32, Value>,
    /// `state/current-state.json`, for chapters beyond the replayed ones.
    pub current_state: Option<&'a Value>,
    pub changelog: &'a [ChangelogEntry],
    pub last_completed: u32,
}

/// Runs the four rules on every chapter of `inputs.chapters` that has a contract.
pub fn check(i: &ContinuityInputs<'_>) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    for &n in i.chapters {
        let Some(c) = i.contracts.get(&n) else {
            continue;
        };
        let before = i.states.get(&n);
        if let Some(state) = before {
            precondition_vs_state(i, c, state, &mut out);
        }
        if let Some(prev) = n.checked_sub(1).and_then(|p| i.contracts.get(&p)) {
            chain_break(i, prev, c, &mut out);
        }
        if n <= i.last_completed {
            unrecorded_change(i, c, before, &mut out);
        }
        retired_required(i, c, before.or(i.current_state), &mut out);
    }
    crate::diagnostic::sort_by_chapter(&mut out);
    out
}

fn severity(i: &ContinuityInputs<'_>, n: u32) -> Severity {
    if n > i.last_completed {
        Severity::Error
    } else {
        Severity::Warning
    }
}

/// The slug a contract names a character by (display name, alias, or the slug itself).
fn slug_of<'n>(names: &'n NameIndex, name: &'n str) -> Option<&'n str> {
    names
        .slug_for(name.trim())
        .or_else(|| is_slug(name).then_some(name))
}

fn character<'s>(state: &'s Value, slug: &str) -> Option<&'s Map<String, Value>> {
    state
        .get("characters")
        .and_then(|c| c.get(slug))
        .and_then(Value::as_object)
}

/// The changelog op that last wrote `characters.<slug>.<key>` (or inside it) before chapter
/// `before`: (line index, op index, chapter).
fn setter(
    log: &[ChangelogEntry],
    before: u32,
    slug: &str,
    key: &str,
) -> Option<(usize, usize, u32)> {
    let path = format!("characters.{slug}.{key}");
    log.iter()
        .enumerate()
        .rev()
        .filter(|(_, e)| e.chapter < before && e.source != ChangeSource::Skipped)
        .find_map(|(li, e)| {
            e.applied
                .iter()
                .enumerate()
                .rev()
                .find(|(_, op)| {
                    op.path == path
                        || op
                            .path
                            .strip_prefix(&path)
                            .is_some_and(|r| r.starts_with('.'))
                })
                .map(|(oi, _)| (li, oi, e.chapter))
        })
}

/// Where a replayed value came from: the changelog op that set it, else the state file.
fn state_source(
    i: &ContinuityInputs<'_>,
    before: u32,
    slug: &str,
    key: &str,
) -> (String, String, String) {
    match setter(i.changelog, before, slug, key) {
        Some((li, oi, ch)) => (
            CHANGELOG_FILE.to_string(),
            format!("/{li}/applied/{oi}"),
            format!("变更日志第 {} 行，第 {ch} 章记录", li + 1),
        ),
        None => (
            STATE_FILE.to_string(),
            pointer(&["characters", slug, key]),
            "状态文件".to_string(),
        ),
    }
}

fn fields(v: &Value) -> Option<&Map<String, Value>> {
    v.as_object()
}

fn precondition_vs_state(
    i: &ContinuityInputs<'_>,
    c: &LoadedContract,
    state: &Value,
    out: &mut Vec<Diagnostic>,
) {
    let n = c.chapter;
    for (name, wanted) in &c.contract.preconditions.character_states {
        let (Some(slug), Some(wanted)) = (slug_of(i.names, name), fields(wanted)) else {
            continue;
        };
        let Some(now) = character(state, slug) else {
            continue;
        };
        for (key, expected) in wanted {
            let Some((state_key, actual)) = state_field(now, key) else {
                continue;
            };
            if holds(expected, actual) {
                continue;
            }
            let (file, ptr, whence) = state_source(i, n, slug, state_key);
            let what = field_kind(key).label();
            out.push(
                Diagnostic::new(
                    PRECONDITION_VS_STATE,
                    severity(i, n),
                    &c.file,
                    format!(
                        "第 {n} 章契约要求「{name}」的{what}（{key}）为 {}，但回放到第 {} 章的状态是 {}（{whence}）",
                        shown(expected),
                        n.saturating_sub(1),
                        shown(actual)
                    ),
                    if n > i.last_completed {
                        format!(
                            "写第 {n} 章时先交代「{name}」如何从 {} 变为 {}，或让大纲策划改契约的前置条件；若是状态漏记，用 novel ops apply --manual 补记",
                            shown(actual),
                            shown(expected)
                        )
                    } else {
                        "这一章已提交：核对正文与状态，状态漏记用 novel ops apply --manual 补记".to_string()
                    },
                ).at_pointer(pointer(&["preconditions", "character_states", name, key]))
                .for_chapter(n)
                .related(file, ptr),
            );
        }
    }
}

fn chain_break(
    i: &ContinuityInputs<'_>,
    prev: &LoadedContract,
    c: &LoadedContract,
    out: &mut Vec<Diagnostic>,
) {
    let n = c.chapter;
    for (post_name, changes) in &prev.contract.postconditions.state_changes {
        let Some(changes) = fields(changes) else {
            continue;
        };
        let who = slug_of(i.names, post_name).unwrap_or(post_name.as_str());
        let Some((pre_name, wanted)) = c
            .contract
            .preconditions
            .character_states
            .iter()
            .find(|(name, _)| slug_of(i.names, name).unwrap_or(name.as_str()) == who)
        else {
            continue;
        };
        let Some(wanted) = fields(wanted) else {
            continue;
        };
        for (key, expected) in wanted {
            let Some((post_key, after)) = changes.get_key_value(key.as_str()).or_else(|| {
                let kind = field_kind(key);
                (kind != FieldKind::Other)
                    .then(|| changes.iter().find(|(k, _)| field_kind(k) == kind))
                    .flatten()
            }) else {
                continue;
            };
            let scalar = |v: &Value| !v.is_array() && !v.is_object();
            if !scalar(expected) || !scalar(after) || holds(expected, after) {
                continue;
            }
            out.push(
                Diagnostic::new(
                    CHAIN_BREAK,
                    severity(i, n),
                    &c.file,
                    format!(
                        "契约链断开：第 {} 章结束时「{post_name}」的{}是 {}，第 {n} 章的前置条件却要求 {}",
                        prev.chapter,
                        field_kind(key).label(),
                        shown(after),
                        shown(expected)
                    ),
                    format!(
                        "让两章契约衔接（第 {} 章的 postconditions 就是第 {n} 章的 preconditions），或在第 {n} 章开头写出这段过渡",
                        prev.chapter
                    ),
                ).at_pointer(pointer(&["preconditions", "character_states", pre_name, key]))
                .for_chapter(n)
                .related(
                    &prev.file,
                    pointer(&["postconditions", "state_changes", post_name, post_key]),
                ),
            );
        }
    }
}

/// Whether op `path`/`value` of a changelog line records a change of `kind` for `slug`.
fn records(path: &str, value: &Value, slug: &str, kind: FieldKind) -> bool {
    let segs: Vec<&str> = path.split('.').collect();
    match segs.as_slice() {
        ["characters", s, field, ..] if *s == slug => field_kind(field) == kind,
        ["items", _, "owner" | "holder"] => {
            kind == FieldKind::Possession && value.as_str() == Some(slug)
        }
        _ => false,
    }
}

fn unrecorded_change(
    i: &ContinuityInputs<'_>,
    c: &LoadedContract,
    before: Option<&Value>,
    out: &mut Vec<Diagnostic>,
) {
    let n = c.chapter;
    let lines: Vec<(usize, &ChangelogEntry)> = i
        .changelog
        .iter()
        .enumerate()
        .filter(|(_, e)| e.chapter == n)
        .collect();
    for (name, changes) in &c.contract.postconditions.state_changes {
        let (Some(slug), Some(changes)) = (slug_of(i.names, name), fields(changes)) else {
            continue;
        };
        for (key, promised) in changes {
            let kind = field_kind(key);
            if kind == FieldKind::Other {
                continue;
            }
            // Already so before the chapter: nothing needed recording.
            let already = before
                .and_then(|s| character(s, slug))
                .and_then(|ch| state_field(ch, key))
                .is_some_and(|(_, v)| holds(promised, v));
            let recorded = lines.iter().any(|(_, e)| {
                e.applied.iter().any(|op| {
                    op.op != OpKind::Foreshadow && records(&op.path, &op.value, slug, kind)
                })
            });
            if already || recorded {
                continue;
            }
            let skipped = lines.iter().any(|(_, e)| e.source == ChangeSource::Skipped);
            let (rel_ptr, whence) = match lines.first() {
                Some((li, _)) => (format!("/{li}"), format!("变更日志第 {} 行", li + 1)),
                None => (String::new(), "变更日志里没有这一章的记录".to_string()),
            };
            out.push(
                Diagnostic::new(
                    UNRECORDED_CHANGE,
                    Severity::Warning,
                    &c.file,
                    format!(
                        "第 {n} 章契约承诺「{name}」的{}变为 {}，但没有任何已应用的 op 记录这一变化（{whence}{}）",
                        kind.label(),
                        shown(promised),
                        if skipped { "；这一章的状态增量被跳过" } else { "" }
                    ),
                    format!(
                        "核对第 {n} 章正文：确有此变化就用 novel ops apply --manual 补记（路径 characters.{slug}.…）；正文没写就在后面的章节补上，或修改契约"
                    ),
                ).at_pointer(pointer(&["postconditions", "state_changes", name, key]))
                .for_chapter(n)
                .related(super::continuity::CHANGELOG_FILE, rel_ptr),
            );
        }
    }
}

fn retired_required(
    i: &ContinuityInputs<'_>,
    c: &LoadedContract,
    state: Option<&Value>,
    out: &mut Vec<Diagnostic>,
) {
    let n = c.chapter;
    let named = c
        .contract
        .preconditions
        .character_states
        .iter()
        .map(|(k, v)| ("preconditions", "character_states", k, v))
        .chain(
            c.contract
                .postconditions
                .state_changes
                .iter()
                .map(|(k, v)| ("postconditions", "state_changes", k, v)),
        );
    let mut seen: Vec<&str> = Vec::new();
    for (part, field, name, v) in named {
        let Some(slug) = slug_of(i.names, name) else {
            continue;
        };
        if seen.contains(&slug) {
            continue;
        }
        let at = pointer(&[part, field, name]);
        if let Some(r) = i.retired.get(slug).filter(|r| n >= r.from_chapter) {
            seen.push(slug);
            out.push(
                Diagnostic::new(
                    RETIRED_REQUIRED,
                    severity(i, n),
                    &c.file,
                    format!(
                        "第 {n} 章契约用到了已退场的角色「{name}」（自第 {} 章起退场）",
                        r.from_chapter
                    ),
                    "从契约中去掉该角色，或改由在场角色承担；确需回归请先让角色设定师处理"
                        .to_string(),
                )
                .at_pointer(at)
                .for_chapter(n)
                .related(&r.file, ""),
            );
            continue;
        }
        // A contract may itself say the character is dead (a funeral, a flashback).
        let says_dead = fields(v).is_some_and(is_dead);
        let dead = state
            .and_then(|s| character(s, slug))
            .is_some_and(|ch| is_dead(ch) && !says_dead);
        if dead {
            seen.push(slug);
            let key = state
                .and_then(|s| character(s, slug))
                .and_then(|ch| ch.keys().find(|k| field_kind(k) == FieldKind::Status))
                .cloned()
                .unwrap_or_else(|| "status".into());
            let (file, ptr, whence) = state_source(i, n, slug, &key);
            out.push(
                Diagnostic::new(
                    RETIRED_REQUIRED,
                    severity(i, n),
                    &c.file,
                    format!("第 {n} 章契约用到了已死亡的角色「{name}」（{whence}）"),
                    "从契约中去掉该角色，或写明是回忆、遗物、传闻等不需要本人在场的形式"
                        .to_string(),
                )
                .at_pointer(at)
                .for_chapter(n)
                .related(file, ptr),
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn field_kinds_and_holding() {
        assert_eq!(field_kind("location"), FieldKind::Location);
        assert_eq!(field_kind("位置"), FieldKind::Location);
        assert_eq!(field_kind("持有"), FieldKind::Possession);
        assert_eq!(field_kind("修为"), FieldKind::Other);
        assert!(holds(&json!("魔都外城 "), &json!("魔都外城")));
        assert!(holds(&json!("玄铁剑"), &json!(["玉佩", "玄铁剑"])));
        assert!(!holds(&json!(["玄铁剑", "铜镜"]), &json!(["玄铁剑"])));
        assert!(holds(&json!(3), &json!(3.0)));
        let dead = json!({"status": "死亡"});
        assert!(is_dead(dead.as_object().unwrap()));
        let alive = json!({"alive": false});
        assert!(is_dead(alive.as_object().unwrap()));
        assert!(!is_dead(json!({"status": "重伤"}).as_object().unwrap()));
    }
}
