//! The JSON Schema half of validation (feature `schema`): the checked-in schemas
//! (`templates/schemas/`, exactly what the Rust types generate: `tests/schemas.rs`) compiled into
//! Rust at build time, and their errors in Chinese with the precise pointer.
//!
//! Compiled at build time rather than at run time: generating a schema from its type and
//! compiling it was a third of the PostToolUse guard hook's instructions (it checks one file,
//! once per process, so nothing amortised it). A checked-in schema that drifts from its type
//! fails `tests/schemas.rs`; a changed schema file rebuilds this crate.

use jsonschema::error::{TypeKind, ValidationErrorKind};
use serde_json::Value;

use crate::model::{self, FileKind};

/// One validator type per kind, generated from its schema file, and the dispatch over them.
macro_rules! compiled {
    ($($kind:ident: $ty:ident = $path:tt;)*) => {
        $(
            #[jsonschema::validator(path = $path, draft = Draft202012)]
            struct $ty;
        )*

        /// Every schema error of `value` as a document of `kind`.
        fn iter_errors(kind: FileKind, value: &Value) -> jsonschema::ErrorIterator<'_> {
            match kind {
                $(FileKind::$kind => $ty::iter_errors(value),)*
            }
        }
    };
}

compiled! {
    Checkpoint: CheckpointSchema = "../../templates/schemas/checkpoint.schema.json";
    Settings: SettingsSchema = "../../templates/schemas/settings.schema.json";
    CurrentState: CurrentStateSchema = "../../templates/schemas/current-state.schema.json";
    StateDelta: StateDeltaSchema = "../../templates/schemas/state-delta.schema.json";
    ChangelogEntry: ChangelogEntrySchema = "../../templates/schemas/changelog-entry.schema.json";
    WorldRules: WorldRulesSchema = "../../templates/schemas/world-rules.schema.json";
    Character: CharacterSchema = "../../templates/schemas/character.schema.json";
    Relationships: RelationshipsSchema = "../../templates/schemas/relationships.schema.json";
    Storylines: StorylinesSchema = "../../templates/schemas/storylines.schema.json";
    StorylineSpec: StorylineSpecSchema = "../../templates/schemas/storyline-spec.schema.json";
    StorylineSchedule: StorylineScheduleSchema = "../../templates/schemas/storyline-schedule.schema.json";
    ChapterContract: ChapterContractSchema = "../../templates/schemas/chapter-contract.schema.json";
    ForeshadowingGlobal: ForeshadowingGlobalSchema = "../../templates/schemas/foreshadowing-global.schema.json";
    VolumeForeshadowing: VolumeForeshadowingSchema = "../../templates/schemas/volume-foreshadowing.schema.json";
    Evaluation: EvaluationSchema = "../../templates/schemas/evaluation.schema.json";
    PipelineLog: PipelineLogSchema = "../../templates/schemas/pipeline-log.schema.json";
    StyleProfile: StyleProfileSchema = "../../templates/schemas/style-profile.schema.json";
    AiBlacklist: AiBlacklistSchema = "../../templates/schemas/ai-blacklist.schema.json";
    StyleDrift: StyleDriftSchema = "../../templates/schemas/style-drift.schema.json";
    Revision: RevisionSchema = "../../templates/schemas/revision.schema.json";
    Preferences: PreferencesSchema = "../../templates/schemas/preferences.schema.json";
    MemoryEntry: MemoryEntrySchema = "../../templates/schemas/memory-entry.schema.json";
    RepairReview: RepairReviewSchema = "../../templates/schemas/repair-review.schema.json";
}

/// Schema errors of one document, as (JSON pointer, Chinese message), sorted by pointer.
pub(super) fn errors(kind: FileKind, value: &Value) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for err in iter_errors(kind, value) {
        collect(&err, &mut out);
    }
    out.sort();
    out.dedup();
    out
}

/// A branch of `anyOf`/`oneOf` that failed only because the value is not `null`.
fn only_null_mismatch(branch: &[jsonschema::ValidationError<'static>]) -> bool {
    branch.iter().all(|e| {
        matches!(e.kind(), ValidationErrorKind::Type { kind: TypeKind::Single(t) } if t.to_string() == "null")
    })
}

/// Flattens an error: `Option<T>` becomes `anyOf [T, null]`, so the real reason (and the
/// precise pointer) is inside the non-null branch.
fn collect(err: &jsonschema::ValidationError<'_>, out: &mut Vec<(String, String)>) {
    use ValidationErrorKind as K;
    if let K::AnyOf { context } | K::OneOfNotValid { context } = err.kind() {
        let informative: Vec<_> = context.iter().filter(|b| !only_null_mismatch(b)).collect();
        // Unit-enum variants with doc comments become `oneOf [{const}, …]`: list the options.
        let consts: Vec<String> = informative
            .iter()
            .filter_map(|b| match b.as_slice() {
                [e] => match e.kind() {
                    K::Constant { expected_value } => Some(expected_value.to_string()),
                    _ => None,
                },
                _ => None,
            })
            .collect();
        if !consts.is_empty() && consts.len() == informative.len() {
            out.push((
                err.instance_path().as_str().to_string(),
                format!(
                    "取值 {} 不在允许范围内，可选：{}",
                    short(err.instance()),
                    consts.join("、")
                ),
            ));
            return;
        }
        if let [branch] = informative.as_slice()
            && !branch.is_empty()
        {
            for e in branch.iter() {
                collect(e, out);
            }
            return;
        }
    }
    out.push((
        err.instance_path().as_str().to_string(),
        message_zh(err.kind(), err.instance()),
    ));
}

fn type_zh(t: &str) -> &'static str {
    match t {
        "string" => "字符串",
        "integer" => "整数",
        "number" => "数字",
        "boolean" => "布尔值（true/false）",
        "array" => "数组",
        "object" => "对象",
        "null" => "null",
        _ => "其他类型",
    }
}

fn value_type_zh(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "布尔值",
        Value::Number(n) if n.is_i64() || n.is_u64() => "整数",
        Value::Number(_) => "数字",
        Value::String(_) => "字符串",
        Value::Array(_) => "数组",
        Value::Object(_) => "对象",
    }
}

fn short(v: &Value) -> String {
    let s = v.to_string();
    let mut out: String = s.chars().take(40).collect();
    if s.chars().count() > 40 {
        out.push('…');
    }
    out
}

fn message_zh(kind: &ValidationErrorKind, instance: &Value) -> String {
    use ValidationErrorKind as K;
    match kind {
        K::Required { property } => format!("缺少必填字段 {property}"),
        K::Type { kind } => {
            let expected = match kind {
                TypeKind::Single(t) => type_zh(&t.to_string()).to_string(),
                TypeKind::Multiple(set) => set
                    .iter()
                    .map(|t| type_zh(&t.to_string()))
                    .collect::<Vec<_>>()
                    .join(" 或 "),
            };
            format!(
                "类型错误：应为{expected}，实际是{}（{}）",
                value_type_zh(instance),
                short(instance)
            )
        }
        K::Enum { options } => format!("取值 {} 不在允许范围内，可选：{options}", short(instance)),
        K::Constant { expected_value } => format!("取值应为 {expected_value}"),
        K::Pattern { pattern } => {
            let hint = if pattern == model::common::SLUG {
                "应为 slug（小写英文字母、数字，用 - 或 _ 连接，如 lin-feng），不能用中文显示名"
            } else if pattern == model::common::WORLD_RULE_ID {
                "应为世界规则编号，如 W-001"
            } else if pattern == model::common::CONTRACT_ID {
                "应为角色契约编号，如 C-LUCHEN-001"
            } else if pattern == model::common::STORYLINE_RULE_ID {
                "应为故事线规范编号，如 LS-001"
            } else {
                "格式不符"
            };
            format!("{} {hint}（规则：{pattern}）", short(instance))
        }
        K::Minimum { limit } => format!("{} 小于最小值 {limit}", short(instance)),
        K::Maximum { limit } => format!("{} 大于最大值 {limit}", short(instance)),
        K::ExclusiveMinimum { limit } => format!("{} 必须大于 {limit}", short(instance)),
        K::ExclusiveMaximum { limit } => format!("{} 必须小于 {limit}", short(instance)),
        K::MinLength { limit } => format!("字符串至少需要 {limit} 个字符"),
        K::MaxLength { limit } => format!("字符串最多 {limit} 个字符"),
        K::MinItems { limit } => format!("数组至少需要 {limit} 项"),
        K::MaxItems { limit } => format!("数组最多 {limit} 项"),
        K::AdditionalItems { limit } => format!("数组最多 {limit} 项"),
        K::AdditionalProperties { unexpected } => {
            format!("不允许的字段：{}", unexpected.join("、"))
        }
        K::UniqueItems => "数组中有重复项".to_string(),
        K::AnyOf { .. } | K::OneOfNotValid { .. } => {
            format!("{} 不符合任何一种允许的形式", short(instance))
        }
        K::OneOfMultipleValid { .. } => "同时符合多种形式，含义不明确".to_string(),
        other => format!("不符合规范（{}）", other.keyword()),
    }
}
