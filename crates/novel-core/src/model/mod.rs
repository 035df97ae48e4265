//! The typed model of every project file. One file kind = one type here; its JSON Schema is
//! generated from the same type (see [`FileKind::schema`]), so types and schemas cannot disagree.
//!
//! Layer: model — the project files' types and what is read straight off them; below every rule.

pub mod blacklist;
pub mod character;
pub mod checkpoint;
pub mod common;
pub mod contract;
pub mod evaluation;
pub mod foreshadowing;
pub mod nulls;
pub mod pipeline_log;
pub mod repair;
pub mod revision;
pub mod settings;
pub mod state;
pub mod storyline;
pub mod style;
pub mod world;

pub use blacklist::AiBlacklist;
pub use character::{Character, Relationships};
pub use checkpoint::{
    Checkpoint, ErrorRecord, OrchestratorState, PendingAction, PipelineStage, QuickStartMarks,
    QuickStartStep,
};
pub use common::{Extra, is_slug};
pub use contract::ChapterContract;
pub use evaluation::Evaluation;
pub use foreshadowing::{ForeshadowingGlobal, VolumeForeshadowing};
pub use pipeline_log::PipelineLog;
pub use repair::{RepairPart, RepairReview};
pub use revision::{MemoryEntry, Preferences, Revision};
pub use settings::Settings;
pub use state::{ChangelogEntry, CurrentState, StateDelta, WrittenDigests};
pub use storyline::{StorylineSchedule, StorylineSpec, Storylines};
pub use style::{StyleDrift, StyleProfile};
pub use world::WorldRules;

use serde_json::Value;
use std::sync::OnceLock;

/// Every kind of JSON file a novel project holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum FileKind {
    Checkpoint,
    Settings,
    CurrentState,
    StateDelta,
    ChangelogEntry,
    WorldRules,
    Character,
    Relationships,
    Storylines,
    StorylineSpec,
    StorylineSchedule,
    ChapterContract,
    ForeshadowingGlobal,
    VolumeForeshadowing,
    Evaluation,
    PipelineLog,
    StyleProfile,
    AiBlacklist,
    StyleDrift,
    Revision,
    Preferences,
    MemoryEntry,
    RepairReview,
}

impl FileKind {
    pub const ALL: [FileKind; 23] = [
        FileKind::Checkpoint,
        FileKind::Settings,
        FileKind::CurrentState,
        FileKind::StateDelta,
        FileKind::ChangelogEntry,
        FileKind::WorldRules,
        FileKind::Character,
        FileKind::Relationships,
        FileKind::Storylines,
        FileKind::StorylineSpec,
        FileKind::StorylineSchedule,
        FileKind::ChapterContract,
        FileKind::ForeshadowingGlobal,
        FileKind::VolumeForeshadowing,
        FileKind::Evaluation,
        FileKind::PipelineLog,
        FileKind::StyleProfile,
        FileKind::AiBlacklist,
        FileKind::StyleDrift,
        FileKind::Revision,
        FileKind::Preferences,
        FileKind::MemoryEntry,
        FileKind::RepairReview,
    ];

    /// Stable kebab-case name: the schema file is `templates/schemas/<name>.schema.json`,
    /// the fixtures live in `tests/schemas/{valid,invalid}/<name>/`.
    pub fn name(self) -> &'static str {
        match self {
            FileKind::Checkpoint => "checkpoint",
            FileKind::Settings => "settings",
            FileKind::CurrentState => "current-state",
            FileKind::StateDelta => "state-delta",
            FileKind::ChangelogEntry => "changelog-entry",
            FileKind::WorldRules => "world-rules",
            FileKind::Character => "character",
            FileKind::Relationships => "relationships",
            FileKind::Storylines => "storylines",
            FileKind::StorylineSpec => "storyline-spec",
            FileKind::StorylineSchedule => "storyline-schedule",
            FileKind::ChapterContract => "chapter-contract",
            FileKind::ForeshadowingGlobal => "foreshadowing-global",
            FileKind::VolumeForeshadowing => "volume-foreshadowing",
            FileKind::Evaluation => "evaluation",
            FileKind::PipelineLog => "pipeline-log",
            FileKind::StyleProfile => "style-profile",
            FileKind::AiBlacklist => "ai-blacklist",
            FileKind::StyleDrift => "style-drift",
            FileKind::Revision => "revision",
            FileKind::Preferences => "preferences",
            FileKind::MemoryEntry => "memory-entry",
            FileKind::RepairReview => "repair-review",
        }
    }

    pub fn from_name(name: &str) -> Option<FileKind> {
        FileKind::ALL.into_iter().find(|k| k.name() == name)
    }

    /// Chinese label for messages.
    pub fn label(self) -> &'static str {
        match self {
            FileKind::Checkpoint => "断点文件",
            FileKind::Settings => "项目设置",
            FileKind::CurrentState => "当前状态",
            FileKind::StateDelta => "状态增量",
            FileKind::ChangelogEntry => "状态变更日志行",
            FileKind::WorldRules => "L1 世界规则",
            FileKind::Character => "角色档案（L2 契约）",
            FileKind::Relationships => "角色关系",
            FileKind::Storylines => "故事线定义",
            FileKind::StorylineSpec => "LS 故事线规范",
            FileKind::StorylineSchedule => "卷故事线调度",
            FileKind::ChapterContract => "L3 章节契约",
            FileKind::ForeshadowingGlobal => "全局伏笔",
            FileKind::VolumeForeshadowing => "本卷伏笔计划",
            FileKind::Evaluation => "章节评估",
            FileKind::PipelineLog => "流水线日志",
            FileKind::StyleProfile => "风格指纹",
            FileKind::AiBlacklist => "AI 用语黑名单",
            FileKind::StyleDrift => "风格漂移",
            FileKind::Revision => "修订候选",
            FileKind::Preferences => "作者偏好",
            FileKind::MemoryEntry => "角色记忆行",
            FileKind::RepairReview => "局部修补复核",
        }
    }

    /// The JSON Schema of this kind, generated from the Rust type (draft 2020-12).
    /// Each kind is generated on its first use only (the guard hook checks one file and must
    /// not pay for the other kinds).
    pub fn schema(self) -> &'static Value {
        static SCHEMAS: [OnceLock<Value>; FileKind::ALL.len()] =
            [const { OnceLock::new() }; FileKind::ALL.len()];
        SCHEMAS[self as usize].get_or_init(|| self.generate_schema())
    }

    fn generate_schema(self) -> Value {
        use schemars::schema_for;
        let schema = match self {
            FileKind::Checkpoint => schema_for!(Checkpoint),
            FileKind::Settings => schema_for!(Settings),
            FileKind::CurrentState => schema_for!(CurrentState),
            FileKind::StateDelta => schema_for!(StateDelta),
            FileKind::ChangelogEntry => schema_for!(ChangelogEntry),
            FileKind::WorldRules => schema_for!(WorldRules),
            FileKind::Character => schema_for!(Character),
            FileKind::Relationships => schema_for!(Relationships),
            FileKind::Storylines => schema_for!(Storylines),
            FileKind::StorylineSpec => schema_for!(StorylineSpec),
            FileKind::StorylineSchedule => schema_for!(StorylineSchedule),
            FileKind::ChapterContract => schema_for!(ChapterContract),
            FileKind::ForeshadowingGlobal => schema_for!(ForeshadowingGlobal),
            FileKind::VolumeForeshadowing => schema_for!(VolumeForeshadowing),
            FileKind::Evaluation => schema_for!(Evaluation),
            FileKind::PipelineLog => schema_for!(PipelineLog),
            FileKind::StyleProfile => schema_for!(StyleProfile),
            FileKind::AiBlacklist => schema_for!(AiBlacklist),
            FileKind::StyleDrift => schema_for!(StyleDrift),
            FileKind::Revision => schema_for!(Revision),
            FileKind::Preferences => schema_for!(Preferences),
            FileKind::MemoryEntry => schema_for!(MemoryEntry),
            FileKind::RepairReview => schema_for!(RepairReview),
        };
        let mut value = schema.to_value();
        if let Some(obj) = value.as_object_mut() {
            // `$id` names the kind so a schema file read on its own says what it is for.
            obj.insert(
                "$id".into(),
                Value::String(format!("novel:{}.schema.json", self.name())),
            );
            obj.insert(
                "description".into(),
                Value::String(format!("{}（{}）", self.label(), self.name())),
            );
        }
        value
    }
}
