//! `state/current-state.json`, the Summarizer's state delta and `state/changelog.jsonl`
//! (PRD §9.2; `002` §10.6).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::common::{Extra, SLUG};

/// `state/current-state.json`: the world as it stands after `last_updated_chapter`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct CurrentState {
    #[schemars(range(min = 1))]
    pub schema_version: u32,
    /// +1 per applied delta; a delta's `base_state_version` must equal it.
    pub state_version: u64,
    pub last_updated_chapter: u32,
    /// 角色状态，键为角色 slug（如 `lin-feng`）。
    #[serde(default)]
    pub characters: Map<String, Value>,
    #[serde(default, skip_serializing_if = "Map::is_empty")]
    pub items: Map<String, Value>,
    #[serde(default, skip_serializing_if = "Map::is_empty")]
    pub locations: Map<String, Value>,
    #[serde(default, skip_serializing_if = "Map::is_empty")]
    pub factions: Map<String, Value>,
    #[serde(default)]
    pub world_state: Map<String, Value>,
    /// 活跃伏笔：伏笔 id 列表，或以伏笔 id 为键的对象。
    #[serde(default = "empty_array")]
    pub active_foreshadowing: ActiveForeshadowing,
    #[serde(flatten)]
    pub extra: Extra,
}

fn empty_array() -> ActiveForeshadowing {
    ActiveForeshadowing::Ids(Vec::new())
}

/// PRD §9.2 shows a list of ids; ops paths (`active_foreshadowing.x.y`) need an object. Both load.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum ActiveForeshadowing {
    Ids(Vec<String>),
    Map(Map<String, Value>),
}

impl CurrentState {
    /// The state of a project that has not committed a chapter yet.
    pub fn initial() -> Self {
        CurrentState {
            schema_version: 1,
            state_version: 0,
            last_updated_chapter: 0,
            characters: Map::new(),
            items: Map::new(),
            locations: Map::new(),
            factions: Map::new(),
            world_state: Map::new(),
            active_foreshadowing: empty_array(),
            extra: Extra::new(),
        }
    }

    /// [`initial`](Self::initial) as the JSON value the ops engine works on (what `novel init`
    /// writes): `{schema_version: 1, state_version: 0, last_updated_chapter: 0, characters: {},
    /// world_state: {}, active_foreshadowing: []}`.
    pub fn initial_value() -> Value {
        serde_json::json!({
            "schema_version": 1,
            "state_version": 0,
            "last_updated_chapter": 0,
            "characters": {},
            "world_state": {},
            "active_foreshadowing": [],
        })
    }
}

/// The five op kinds of a state delta.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum OpKind {
    Set,
    Inc,
    Add,
    Remove,
    Foreshadow,
}

/// One op of a state delta: `{"op":"set","path":"characters.lin-feng.location","value":"幽暗森林"}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct StateOp {
    pub op: OpKind,
    /// 点分路径（2–4 段 slug），`foreshadow` 时为伏笔 id。
    #[schemars(length(min = 1))]
    pub path: String,
    pub value: Value,
    /// `foreshadow` 的说明（写入伏笔 history）。
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
    #[serde(flatten)]
    pub extra: Extra,
}

/// `staging/state/chapter-N-delta.json`: what the Summarizer says changed in chapter N.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct StateDelta {
    /// 章节号；0 表示开书前的初始状态（`novel ops apply --manual`）。
    #[schemars(range(max = 99_999))]
    pub chapter: u32,
    pub base_state_version: u64,
    #[schemars(pattern(SLUG))]
    pub storyline_id: String,
    pub ops: Vec<StateOp>,
    /// `004`：本章各角色做了什么（按场景），提交时追加到 `memory/characters/<slug>.jsonl`。
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub character_actions: Vec<super::revision::CharacterAction>,
    #[serde(flatten)]
    pub extra: Extra,
}

/// What produced a changelog line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ChangeSource {
    /// A chapter's Summarizer delta, applied at commit.
    Chapter,
    /// A chapter whose delta could not be parsed twice and was skipped (§10.6).
    Skipped,
    /// A character retired by an explicit CharacterWeaver action.
    Retire,
    /// A manual correction by the author.
    Manual,
}

/// An op that was not applied, kept in the changelog so nothing is silently dropped.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RejectedOp {
    /// Index of the op in the delta.
    pub index: usize,
    /// The op exactly as the delta had it.
    pub op: Value,
    /// Stable reason code, e.g. `E_OP_PATH`.
    pub code: String,
    pub reason: String,
    #[serde(flatten)]
    pub extra: Extra,
}

/// One line of `state/changelog.jsonl`: what was actually applied.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ChangelogEntry {
    pub chapter: u32,
    pub source: ChangeSource,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(pattern(SLUG))]
    pub storyline_id: Option<String>,
    /// `state_version` before the change.
    pub base_state_version: u64,
    /// `state_version` after the change.
    pub state_version: u64,
    /// ISO-8601 time of the change.
    pub timestamp: String,
    pub applied: Vec<StateOp>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub rejected: Vec<RejectedOp>,
    /// Why a chapter was skipped (`source: skipped`), what a manual change was for, or which
    /// applied ops changed nothing (`未产生变化的 op：#序号 原因；…`, e.g. a `remove` that
    /// matched nothing or a foreshadowing downgrade).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// 本行（作者手动补记，`source: manual`）从正文重新提取并补上了这些被跳过章节（§10.6）的
    /// 状态变化：它们不再计入跳过数。
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub resolves_skipped: Vec<u32>,
    /// 本行是第 V 卷的卷末清理（`novel volume cleanup`，`source: manual`）：其中每个 `remove`
    /// op 移除一个整条目（路径为 `根.slug`，如 `items.old-sword`），回放时同样移除。
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1))]
    pub cleanup_volume: Option<u32>,
    /// 本行写入后磁盘上 `state/current-state.json` 与 `foreshadowing/global.json` 的摘要（由
    /// 二进制在提交时记下）：下一次读到同样的字节，就知道它们正是二进制写下并核对过的，可以
    /// 不再逐项校验 schema（提交耗时因此不随状态文件变大而增长）。缺省或不符时照常校验。
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub written: Option<WrittenDigests>,
    #[serde(flatten)]
    pub extra: Extra,
}

/// The digests ([`crate::pipeline::text_digest`]) of the files a changelog line left on disk.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct WrittenDigests {
    /// `state/current-state.json` as written with the line.
    #[schemars(pattern(r"^[0-9a-f]{16}$"))]
    pub state: String,
    /// `foreshadowing/global.json` as it stood after the line; absent when there was no file, or
    /// when the line's writer left the file as it was and did not record it (`ops apply`): the
    /// next reader then checks it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(pattern(r"^[0-9a-f]{16}$"))]
    pub global: Option<String>,
    #[serde(flatten)]
    pub extra: Extra,
}

impl WrittenDigests {
    /// The digests of a state text and, when there is one, a foreshadowing text.
    pub fn of(state_text: &str, global_text: Option<&str>) -> Self {
        use super::common::text_digest;
        WrittenDigests {
            state: text_digest(state_text.as_bytes()),
            global: global_text.map(|t| text_digest(t.as_bytes())),
            extra: Extra::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn initial_value_is_the_initial_state() {
        assert_eq!(
            serde_json::to_value(CurrentState::initial()).unwrap(),
            CurrentState::initial_value()
        );
    }
}
