//! `foreshadowing/global.json` (cross-volume threads) and `volumes/vol-NN/foreshadowing.json`
//! (the volume's plan).
//!
//! The engine rewrites these files (every commit merges foreshadowing), so a thread keeps the
//! author's explicit `null`s and `false`s: the typed fields cannot tell "absent" from "null",
//! so such a key is remembered in `extra` under its own name and written back in its place
//! (see `wire`). Setting the field replaces the remembered value.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::common::{Extra, ForeshadowScope, ForeshadowStatus};
use super::storyline::ChapterRange;

/// `foreshadowing/global.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ForeshadowingGlobal {
    pub foreshadowing: Vec<Foreshadowing>,
    #[serde(flatten)]
    pub extra: Extra,
}

/// One tracked foreshadowing thread (伏笔).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(from = "wire::Foreshadowing", into = "wire::Foreshadowing")]
pub struct Foreshadowing {
    pub id: String,
    pub description: String,
    pub scope: ForeshadowScope,
    pub status: ForeshadowStatus,
    pub planted_chapter: Option<u32>,
    pub planted_storyline: Option<String>,
    /// 计划回收区间 `[起, 止]`；short 伏笔超过止章仍未回收即为逾期。
    pub target_resolve_range: Option<ChapterRange>,
    pub last_updated_chapter: Option<u32>,
    pub history: Vec<ForeshadowEvent>,
    /// Unknown keys, and optional keys the author wrote as `null`.
    pub extra: Extra,
}

/// One step of a thread's history; de-duplicated on (chapter, action).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(from = "wire::ForeshadowEvent", into = "wire::ForeshadowEvent")]
pub struct ForeshadowEvent {
    pub chapter: u32,
    pub action: ForeshadowStatus,
    pub detail: Option<String>,
    /// Unknown keys, and `detail` when the author wrote it as `null`.
    pub extra: Extra,
}

/// `volumes/vol-NN/foreshadowing.json`: threads this volume plants, advances or resolves.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct VolumeForeshadowing {
    #[schemars(range(min = 1))]
    pub volume: u32,
    pub foreshadowing: Vec<PlannedForeshadowing>,
    #[serde(flatten)]
    pub extra: Extra,
}

/// A planned thread: new in this volume, or carried over (`carried_over: true`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(
    from = "wire::PlannedForeshadowing",
    into = "wire::PlannedForeshadowing"
)]
pub struct PlannedForeshadowing {
    pub id: String,
    pub description: String,
    pub scope: ForeshadowScope,
    pub plant_chapter: Option<u32>,
    pub advance_chapters: Option<Vec<u32>>,
    pub target_resolve_range: Option<ChapterRange>,
    pub storyline_id: Option<String>,
    pub carried_over: bool,
    /// Unknown keys, optional keys written as `null`, and `carried_over` written as `false`.
    pub extra: Extra,
}

/// An optional key as read: `Some(None)` = written as `null`, which `extra` remembers.
fn read_opt<T>(value: Option<Option<T>>, key: &str, extra: &mut Extra) -> Option<T> {
    match value {
        Some(Some(v)) => Some(v),
        Some(None) => {
            extra.insert(key.to_string(), Value::Null);
            None
        }
        None => None,
    }
}

/// An optional key to write: its value, else the remembered `null`, else nothing. The
/// remembered entry leaves `extra` either way, so a key is never written twice.
fn write_opt<T>(value: Option<T>, key: &str, extra: &mut Extra) -> Option<Option<T>> {
    let remembered = extra.shift_remove(key);
    match value {
        Some(v) => Some(Some(v)),
        None if remembered.as_ref().is_some_and(Value::is_null) => Some(None),
        None => None,
    }
}

/// The on-disk shapes: every optional key three-state (absent / `null` / value), so a
/// read/write round trip keeps what the author wrote. These also define the JSON Schema.
mod wire {
    use schemars::JsonSchema;
    use serde::{Deserialize, Serialize};
    use serde_json::Value;

    use super::{read_opt, write_opt};
    use crate::model::common::{Extra, ForeshadowScope, ForeshadowStatus, SLUG, double_option};
    use crate::model::storyline::ChapterRange;

    /// One tracked foreshadowing thread (伏笔).
    #[derive(Serialize, Deserialize, JsonSchema)]
    pub struct Foreshadowing {
        #[schemars(pattern(SLUG))]
        id: String,
        #[serde(default)]
        description: String,
        scope: ForeshadowScope,
        status: ForeshadowStatus,
        #[serde(
            default,
            skip_serializing_if = "Option::is_none",
            with = "double_option"
        )]
        #[schemars(with = "Option<u32>")]
        planted_chapter: Option<Option<u32>>,
        #[serde(
            default,
            skip_serializing_if = "Option::is_none",
            with = "double_option"
        )]
        #[schemars(with = "Option<String>", pattern(SLUG))]
        planted_storyline: Option<Option<String>>,
        /// 计划回收区间 `[起, 止]`；short 伏笔超过止章仍未回收即为逾期。
        #[serde(
            default,
            skip_serializing_if = "Option::is_none",
            with = "double_option"
        )]
        #[schemars(with = "Option<ChapterRange>")]
        target_resolve_range: Option<Option<ChapterRange>>,
        #[serde(
            default,
            skip_serializing_if = "Option::is_none",
            with = "double_option"
        )]
        #[schemars(with = "Option<u32>")]
        last_updated_chapter: Option<Option<u32>>,
        #[serde(default)]
        history: Vec<super::ForeshadowEvent>,
        #[serde(flatten)]
        extra: Extra,
    }

    impl From<Foreshadowing> for super::Foreshadowing {
        fn from(w: Foreshadowing) -> Self {
            let mut extra = w.extra;
            super::Foreshadowing {
                id: w.id,
                description: w.description,
                scope: w.scope,
                status: w.status,
                planted_chapter: read_opt(w.planted_chapter, "planted_chapter", &mut extra),
                planted_storyline: read_opt(w.planted_storyline, "planted_storyline", &mut extra),
                target_resolve_range: read_opt(
                    w.target_resolve_range,
                    "target_resolve_range",
                    &mut extra,
                ),
                last_updated_chapter: read_opt(
                    w.last_updated_chapter,
                    "last_updated_chapter",
                    &mut extra,
                ),
                history: w.history,
                extra,
            }
        }
    }

    impl From<super::Foreshadowing> for Foreshadowing {
        fn from(f: super::Foreshadowing) -> Self {
            let mut extra = f.extra;
            Foreshadowing {
                id: f.id,
                description: f.description,
                scope: f.scope,
                status: f.status,
                planted_chapter: write_opt(f.planted_chapter, "planted_chapter", &mut extra),
                planted_storyline: write_opt(f.planted_storyline, "planted_storyline", &mut extra),
                target_resolve_range: write_opt(
                    f.target_resolve_range,
                    "target_resolve_range",
                    &mut extra,
                ),
                last_updated_chapter: write_opt(
                    f.last_updated_chapter,
                    "last_updated_chapter",
                    &mut extra,
                ),
                history: f.history,
                extra,
            }
        }
    }

    /// One step of a thread's history; de-duplicated on (chapter, action).
    #[derive(Serialize, Deserialize, JsonSchema)]
    pub struct ForeshadowEvent {
        #[schemars(range(min = 1))]
        chapter: u32,
        action: ForeshadowStatus,
        #[serde(
            default,
            skip_serializing_if = "Option::is_none",
            with = "double_option"
        )]
        #[schemars(with = "Option<String>")]
        detail: Option<Option<String>>,
        #[serde(flatten)]
        extra: Extra,
    }

    impl From<ForeshadowEvent> for super::ForeshadowEvent {
        fn from(w: ForeshadowEvent) -> Self {
            let mut extra = w.extra;
            super::ForeshadowEvent {
                chapter: w.chapter,
                action: w.action,
                detail: read_opt(w.detail, "detail", &mut extra),
                extra,
            }
        }
    }

    impl From<super::ForeshadowEvent> for ForeshadowEvent {
        fn from(e: super::ForeshadowEvent) -> Self {
            let mut extra = e.extra;
            ForeshadowEvent {
                chapter: e.chapter,
                action: e.action,
                detail: write_opt(e.detail, "detail", &mut extra),
                extra,
            }
        }
    }

    /// A planned thread: new in this volume, or carried over (`carried_over: true`).
    #[derive(Serialize, Deserialize, JsonSchema)]
    pub struct PlannedForeshadowing {
        #[schemars(pattern(SLUG))]
        id: String,
        description: String,
        scope: ForeshadowScope,
        #[serde(
            default,
            skip_serializing_if = "Option::is_none",
            with = "double_option"
        )]
        #[schemars(with = "Option<u32>", range(min = 1))]
        plant_chapter: Option<Option<u32>>,
        #[serde(
            default,
            skip_serializing_if = "Option::is_none",
            with = "double_option"
        )]
        #[schemars(with = "Option<Vec<u32>>")]
        advance_chapters: Option<Option<Vec<u32>>>,
        #[serde(
            default,
            skip_serializing_if = "Option::is_none",
            with = "double_option"
        )]
        #[schemars(with = "Option<ChapterRange>")]
        target_resolve_range: Option<Option<ChapterRange>>,
        #[serde(
            default,
            skip_serializing_if = "Option::is_none",
            with = "double_option"
        )]
        #[schemars(with = "Option<String>", pattern(SLUG))]
        storyline_id: Option<Option<String>>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[schemars(with = "bool")]
        carried_over: Option<bool>,
        #[serde(flatten)]
        extra: Extra,
    }

    impl From<PlannedForeshadowing> for super::PlannedForeshadowing {
        fn from(w: PlannedForeshadowing) -> Self {
            let mut extra = w.extra;
            if w.carried_over == Some(false) {
                extra.insert("carried_over".into(), Value::Bool(false));
            }
            super::PlannedForeshadowing {
                id: w.id,
                description: w.description,
                scope: w.scope,
                plant_chapter: read_opt(w.plant_chapter, "plant_chapter", &mut extra),
                advance_chapters: read_opt(w.advance_chapters, "advance_chapters", &mut extra),
                target_resolve_range: read_opt(
                    w.target_resolve_range,
                    "target_resolve_range",
                    &mut extra,
                ),
                storyline_id: read_opt(w.storyline_id, "storyline_id", &mut extra),
                carried_over: w.carried_over.unwrap_or(false),
                extra,
            }
        }
    }

    impl From<super::PlannedForeshadowing> for PlannedForeshadowing {
        fn from(p: super::PlannedForeshadowing) -> Self {
            let mut extra = p.extra;
            let written_false = extra.shift_remove("carried_over") == Some(Value::Bool(false));
            PlannedForeshadowing {
                id: p.id,
                description: p.description,
                scope: p.scope,
                plant_chapter: write_opt(p.plant_chapter, "plant_chapter", &mut extra),
                advance_chapters: write_opt(p.advance_chapters, "advance_chapters", &mut extra),
                target_resolve_range: write_opt(
                    p.target_resolve_range,
                    "target_resolve_range",
                    &mut extra,
                ),
                storyline_id: write_opt(p.storyline_id, "storyline_id", &mut extra),
                carried_over: (p.carried_over || written_false).then_some(p.carried_over),
                extra,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn explicit_null_is_kept_in_place_until_the_field_is_set() {
        let authored = json!({"id": "jade", "scope": "short", "status": "planted",
            "planted_chapter": null, "last_updated_chapter": null, "备注": "留着", "history": []});
        let mut f: Foreshadowing = serde_json::from_value(authored.clone()).unwrap();
        assert_eq!(f.planted_chapter, None);
        let back = serde_json::to_value(&f).unwrap();
        let keys: Vec<&str> = back
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        assert_eq!(
            keys,
            [
                "id",
                "description",
                "scope",
                "status",
                "planted_chapter",
                "last_updated_chapter",
                "history",
                "备注"
            ]
        );
        assert!(back["planted_chapter"].is_null() && back["last_updated_chapter"].is_null());

        // The engine sets a field: its value replaces the null, written once.
        f.planted_chapter = Some(12);
        let text = serde_json::to_string(&f).unwrap();
        assert_eq!(text.matches("planted_chapter").count(), 1, "{text}");
        let back: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(back["planted_chapter"], 12);
        assert!(back["last_updated_chapter"].is_null());
        // A key never written stays unwritten.
        assert!(back.get("planted_storyline").is_none());
    }

    #[test]
    fn carried_over_false_is_kept_and_absent_stays_absent() {
        let plan: VolumeForeshadowing =
            serde_json::from_value(json!({"volume": 2, "foreshadowing": [
            {"id": "a", "description": "甲", "scope": "long", "carried_over": false},
            {"id": "b", "description": "乙", "scope": "long"},
            {"id": "c", "description": "丙", "scope": "long", "carried_over": true}]}))
            .unwrap();
        assert!(!plan.foreshadowing[0].carried_over && plan.foreshadowing[2].carried_over);
        let back = serde_json::to_value(&plan).unwrap();
        assert_eq!(back["foreshadowing"][0]["carried_over"], false);
        assert!(back["foreshadowing"][1].get("carried_over").is_none());
        assert_eq!(back["foreshadowing"][2]["carried_over"], true);
    }
}
