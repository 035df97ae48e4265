//! The volume-end cleanup (`003` §8.5 定期清理; `docs/orchestration.md` §6): which entries of
//! `current-state.json` a closed volume leaves behind — state entries of retired characters,
//! and items and locations nothing refers to any more — proposed in a report for the author to
//! confirm, and the confirmed ones removed through the state engine as one `manual` changelog
//! line (`cleanup_volume`), so `novel state rebuild` reproduces the removal. Nothing is removed
//! without confirmation.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::pointer;
use crate::model::state::{ChangeSource, OpKind, StateOp};
use crate::model::{ChangelogEntry, Extra};
use crate::ops;

pub const RETIRED_CHARACTER: &str = "retired_character";
pub const UNREFERENCED_ITEM: &str = "unreferenced_item";
pub const UNREFERENCED_LOCATION: &str = "unreferenced_location";

/// One proposed removal (`volumes/vol-NN/cleanup.json` `entries[]`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CleanupEntry {
    /// `characters.li-si`, `items.old-sword`, `locations.ruined-fort`: what `--apply` takes.
    pub id: String,
    /// `retired_character` | `unreferenced_item` | `unreferenced_location`.
    pub kind: String,
    pub file: String,
    pub pointer: String,
    /// The entry's name, when it has one (a character's display name, an item's `name`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    pub reason: String,
    /// Removed by `novel volume cleanup`.
    #[serde(default)]
    pub applied: bool,
}

/// One `novel volume cleanup` run recorded in the report.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CleanupRun {
    pub at: String,
    pub ids: Vec<String>,
    /// `state_version` after the run (unchanged when nothing was left to remove).
    pub state_version: u64,
}

/// `volumes/vol-NN/cleanup.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CleanupReport {
    pub volume: u32,
    pub created_at: String,
    pub last_completed_chapter: u32,
    pub state_version: u64,
    pub entries: Vec<CleanupEntry>,
    #[serde(default)]
    pub runs: Vec<CleanupRun>,
    #[serde(flatten)]
    pub extra: Extra,
}

/// A retired character: (slug, display name, its file).
pub type RetiredCharacter<'a> = (&'a str, &'a str, &'a str);

/// What the proposal reads: the state, the retired characters, and every text that can refer
/// to an item or location — unresolved foreshadowing, the storylines, the next volume's
/// contracts and outline, as (file, text).
pub struct CleanupInputs<'a> {
    pub state: &'a Value,
    pub retired: &'a [RetiredCharacter<'a>],
    pub references: &'a [(String, String)],
}

/// The names an entry may be mentioned by: its slug, and for an object its `name`,
/// `display_name` and `aliases` (for a bare string, the string). Two characters at least.
fn needles(slug: &str, value: &Value) -> Vec<String> {
    let mut out = vec![slug.to_string()];
    match value {
        Value::String(s) => out.push(s.clone()),
        Value::Object(o) => {
            for k in ["name", "display_name"] {
                if let Some(s) = o.get(k).and_then(Value::as_str) {
                    out.push(s.to_string());
                }
            }
            if let Some(a) = o.get("aliases").and_then(Value::as_array) {
                out.extend(a.iter().filter_map(Value::as_str).map(str::to_string));
            }
        }
        _ => {}
    }
    out.retain(|n| n.trim().chars().count() >= 2);
    out
}

fn name_of(value: &Value) -> Option<String> {
    match value {
        Value::String(s) => Some(s.clone()),
        Value::Object(o) => ["name", "display_name"]
            .iter()
            .find_map(|k| o.get(*k).and_then(Value::as_str))
            .map(str::to_string),
        _ => None,
    }
}

/// The proposal: retired characters still in the state, then items and locations no
/// reference text mentions (by slug or name) and no character's state names.
pub fn candidates(i: &CleanupInputs<'_>) -> Vec<CleanupEntry> {
    let mut out = Vec::new();
    let state_file = super::continuity::STATE_FILE;
    let chars = i.state.get("characters").and_then(Value::as_object);
    for (slug, display, file) in i.retired {
        if chars.is_some_and(|c| c.contains_key(*slug)) {
            out.push(CleanupEntry {
                id: format!("characters.{slug}"),
                kind: RETIRED_CHARACTER.into(),
                file: state_file.into(),
                pointer: pointer(&["characters", slug]),
                name: Some(display.to_string()),
                reason: format!("「{display}」已退场（{file}），状态里仍留着它的条目"),
                applied: false,
            });
        }
    }
    // Characters' own states count as references (someone is there, someone holds it).
    let character_text = chars.map_or(String::new(), |c| Value::Object(c.clone()).to_string());
    for (root, kind, what) in [
        ("items", UNREFERENCED_ITEM, "物品"),
        ("locations", UNREFERENCED_LOCATION, "地点"),
    ] {
        let Some(map) = i.state.get(root).and_then(Value::as_object) else {
            continue;
        };
        for (slug, value) in map {
            let names = needles(slug, value);
            let mentioned = names.iter().any(|n| {
                character_text.contains(n.as_str())
                    || i.references.iter().any(|(_, t)| t.contains(n.as_str()))
            });
            if mentioned {
                continue;
            }
            out.push(CleanupEntry {
                id: format!("{root}.{slug}"),
                kind: kind.into(),
                file: state_file.into(),
                pointer: pointer(&[root, slug]),
                name: name_of(value),
                reason: format!(
                    "没有未回收的伏笔、故事线、下一卷的大纲或契约、角色状态提到这个{what}"
                ),
                applied: false,
            });
        }
    }
    out
}

/// What removing confirmed entries does to the state.
#[derive(Debug, Clone, PartialEq)]
pub struct CleanupApplied {
    pub state: Value,
    /// `None` when none of the ids was still in the state (nothing to record).
    pub entry: Option<ChangelogEntry>,
    pub removed: Vec<String>,
    /// Ids no longer in the state (removed earlier, by hand or by a retirement).
    pub absent: Vec<String>,
}

/// Removes `ids` (`root.slug`) from `state` with the engine's whole-entity removal, and the
/// changelog line that records it: `source: manual`, `cleanup_volume: volume`, at the chapter
/// after the last completed one (like a retirement, so `state at` the volume's last chapter
/// still shows what the volume ended with).
pub fn apply(
    state: &Value,
    ids: &[String],
    volume: u32,
    last_completed: u32,
    timestamp: &str,
) -> CleanupApplied {
    let chapter = last_completed + 1;
    let base = ops::state_version(state);
    let mut next = state.clone();
    let (mut applied, mut removed, mut absent) = (Vec::new(), Vec::new(), Vec::new());
    for id in ids {
        let op = StateOp {
            op: OpKind::Remove,
            path: id.clone(),
            value: Value::Null,
            detail: Some(format!("第 {volume} 卷卷末清理")),
            extra: Extra::new(),
        };
        if ops::remove_entity(&mut next, &op).unwrap_or(false) {
            applied.push(op);
            removed.push(id.clone());
        } else {
            absent.push(id.clone());
        }
    }
    if applied.is_empty() {
        return CleanupApplied {
            state: state.clone(),
            entry: None,
            removed,
            absent,
        };
    }
    crate::ops::finish_version(&mut next, base + 1, chapter);
    let entry = ChangelogEntry {
        chapter,
        source: ChangeSource::Manual,
        storyline_id: None,
        base_state_version: base,
        state_version: base + 1,
        timestamp: timestamp.to_string(),
        applied,
        rejected: Vec::new(),
        note: Some(format!(
            "第 {volume} 卷卷末清理（作者确认）：移除 {}",
            removed.join("、")
        )),
        resolves_skipped: Vec::new(),
        cleanup_volume: Some(volume),
        written: None,
        extra: Extra::new(),
    };
    CleanupApplied {
        state: next,
        entry: Some(entry),
        removed,
        absent,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn proposes_retired_leftovers_and_unreferenced_entries_only() {
        let state = json!({
            "state_version": 4, "last_updated_chapter": 10,
            "characters": {"lu-chen": {"location": "青云镇"}, "li-si": {"location": "魔都"}},
            "items": {"old-sword": {"name": "锈剑"}, "jade": {"name": "血玉"}},
            "locations": {"qingyun": "青云镇", "ruins": {"name": "城北废墟"}}
        });
        let retired = [("li-si", "李四", "characters/retired/li-si.json")];
        let refs = vec![(
            "foreshadowing/global.json".to_string(),
            "血玉的来历".to_string(),
        )];
        let got = candidates(&CleanupInputs {
            state: &state,
            retired: &retired,
            references: &refs,
        });
        let ids: Vec<&str> = got.iter().map(|e| e.id.as_str()).collect();
        // 青云镇 is where 陆尘 is; 血玉 is in a thread; 锈剑 and 城北废墟 are forgotten.
        assert_eq!(
            ids,
            ["characters.li-si", "items.old-sword", "locations.ruins"]
        );
        let done = apply(
            &state,
            &["items.old-sword".into(), "items.gone".into()],
            1,
            10,
            "t",
        );
        assert_eq!(done.removed, ["items.old-sword"]);
        assert_eq!(done.absent, ["items.gone"]);
        let entry = done.entry.unwrap();
        assert_eq!((entry.chapter, entry.state_version), (11, 5));
        assert_eq!(entry.cleanup_volume, Some(1));
        assert!(done.state["items"].get("old-sword").is_none());
    }
}
