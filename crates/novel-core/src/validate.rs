//! Validation: JSON syntax (with line/column in characters), schema errors rendered in Chinese
//! with their JSON pointer, and the project-wide checks a schema cannot express (file names vs
//! `chapter` fields, slug ids, storyline / `W-` / `C-` / `LS-` references, weights, checkpoint
//! coherence). Pure: the caller loads the files into a [`ProjectView`].
//!
//! Layer: rules — checks and decisions over the model (judging, ops, validation, the gate,
//! revisions, import); below the loop.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::OnceLock;

use regex::Regex;
use serde_json::Value;

use crate::diagnostic::Diagnostic;
use crate::model::common::is_slug;
use crate::model::storyline::DEFAULT_STORYLINE_TYPES;
use crate::model::{self, FileKind};

use crate::diagnostic::pointer_escape as escape;

/// A JSON syntax error with a 1-based line and a 1-based column counted in characters.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JsonSyntaxError {
    pub line: usize,
    pub column: usize,
    pub message: String,
}

impl std::fmt::Display for JsonSyntaxError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "JSON 格式错误（第 {} 行第 {} 列）：{}",
            self.line, self.column, self.message
        )
    }
}

/// Drops a leading UTF-8 byte-order mark.
pub fn strip_bom(text: &str) -> &str {
    text.strip_prefix('\u{feff}').unwrap_or(text)
}

/// Parses JSON text (BOM tolerated). Errors carry line and character column.
pub fn parse_json(text: &str) -> Result<Value, JsonSyntaxError> {
    let text = strip_bom(text);
    serde_json::from_str(text).map_err(|e| {
        let line = e.line();
        // serde_json counts the column in bytes; authors count characters.
        let column = text
            .lines()
            .nth(line.saturating_sub(1))
            .map(|l| {
                let byte_col = e.column().min(l.len());
                let mut cut = byte_col;
                while cut > 0 && !l.is_char_boundary(cut) {
                    cut -= 1;
                }
                l[..cut].chars().count() + usize::from(cut < byte_col || byte_col == 0)
            })
            .unwrap_or(e.column());
        JsonSyntaxError {
            line,
            column: column.max(1),
            message: json_error_zh(&e),
        }
    })
}

fn json_error_zh(e: &serde_json::Error) -> String {
    let raw = e.to_string();
    // Keep serde_json's detail, prefixed by a Chinese reading of the common cases.
    let detail = raw.split(" at line ").next().unwrap_or(&raw);
    let zh = if detail.contains("EOF while parsing") {
        "文件在 JSON 结束前就结束了（括号或引号没有闭合）"
    } else if detail.contains("trailing comma") {
        "多余的逗号（JSON 不允许末尾逗号）"
    } else if detail.contains("key must be a string") {
        "对象的键必须是带双引号的字符串"
    } else if detail.contains("expected `,` or `}`") {
        "缺少逗号或右花括号 }"
    } else if detail.contains("expected `,` or `]`") {
        "缺少逗号或右方括号 ]"
    } else if detail.contains("expected `:`") {
        "键后面缺少冒号"
    } else if detail.contains("expected value") || detail.contains("expected ident") {
        "这里应当是一个 JSON 值（字符串要用英文双引号）"
    } else if detail.contains("trailing characters") {
        "JSON 结束后还有多余内容"
    } else if detail.contains("control character") {
        "字符串里有未转义的控制字符（如换行）"
    } else {
        "无法解析"
    };
    format!("{zh}（{detail}）")
}

/// Schema errors of one document, as (JSON pointer, Chinese message), sorted by pointer.
/// Without the `schema` feature (a build that never validates files, e.g. `novel-text` on its
/// own) there is no validator and this finds nothing; the typed check of [`check_document`]
/// still runs.
pub fn schema_errors(kind: FileKind, value: &Value) -> Vec<(String, String)> {
    #[cfg(feature = "schema")]
    {
        schema::errors(kind, value)
    }
    #[cfg(not(feature = "schema"))]
    {
        let _ = (kind, value);
        Vec::new()
    }
}

#[cfg(feature = "schema")]
mod schema;

/// Validates one document of a known kind: schema errors, then typed deserialisation.
pub fn check_document(file: &str, kind: FileKind, value: &Value) -> Vec<Diagnostic> {
    let errors = schema_errors(kind, value);
    if !errors.is_empty() {
        return errors
            .into_iter()
            .map(|(p, m)| Diagnostic::error("E_SCHEMA", file, p, m))
            .collect();
    }
    // What JSON Schema cannot say: `47.0` is an "integer" to it but not a chapter number,
    // and numbers beyond u32. Report them at their pointer like any schema error.
    if let Err((pointer, e)) = deserialize_as(kind, value) {
        let message = if e.contains("invalid type: floating point") {
            format!("应为整数，不能写成小数（{e}）")
        } else if e.contains("invalid value: integer") {
            format!("数值超出范围（{e}）")
        } else {
            format!("无法按类型读取：{e}")
        };
        return vec![Diagnostic::error("E_SCHEMA", file, pointer, message)];
    }
    Vec::new()
}

/// Everything that can be said about one document on its own: [`check_document`], then what
/// its schema cannot express (an evaluation's weights sum to 1). `novel validate --kind KIND
/// FILE` runs this; [`check_project`] runs the same on each document of the project.
pub fn check_file(file: &str, kind: FileKind, value: &Value) -> Vec<Diagnostic> {
    let mut found = check_document(file, kind, value);
    if found.is_empty()
        && kind == FileKind::Evaluation
        && let Ok(e) = serde_json::from_value::<model::Evaluation>(value.clone())
    {
        evaluation_weights(file, &e, &mut found);
    }
    if found.is_empty()
        && kind == FileKind::StyleProfile
        && let Ok(p) = serde_json::from_value::<model::StyleProfile>(value.clone())
    {
        style_exemplars(file, &p, &mut found);
    }
    found
}

/// The voice exemplars go into ChapterWriter's and StyleRefiner's packets untrimmed: together
/// at most [`model::style::EXEMPLAR_TOKENS`] (PRD §5.9: few-shot ≤ 2K).
fn style_exemplars(file: &str, p: &model::StyleProfile, out: &mut Vec<Diagnostic>) {
    let tokens: u32 = p
        .voice_exemplars
        .iter()
        .map(|x| crate::tokens::estimate(&x.text))
        .sum();
    if tokens > model::style::EXEMPLAR_TOKENS {
        out.push(Diagnostic::error(
            "E_STYLE_EXEMPLARS",
            file,
            "/voice_exemplars",
            format!(
                "{} 段作者原文示例合计约 {tokens} token，超过 {}：它们每章都原样进写手与润色的资料包",
                p.voice_exemplars.len(),
                model::style::EXEMPLAR_TOKENS
            ),
        ));
    }
}

/// The eight weights written in an evaluation must sum to 1 (the gate uses the project's own
/// weights, but a file whose weights are off was not scored by the rubric).
fn evaluation_weights(file: &str, e: &model::Evaluation, out: &mut Vec<Diagnostic>) {
    let sum: f64 = e.scores.dimensions().iter().map(|(_, d)| d.weight).sum();
    if (sum - 1.0).abs() > 0.005 {
        out.push(Diagnostic::error(
            "E_WEIGHTS",
            file,
            "/scores",
            format!("8 个维度的权重之和为 {sum:.3}，应为 1.0"),
        ));
    }
}

/// Deserialises `value` into `T`; on failure the JSON pointer of the offending value and
/// serde's message.
pub fn typed_at<T: serde::de::DeserializeOwned>(value: &Value) -> Result<T, (String, String)> {
    serde_path_to_error::deserialize::<_, T>(value).map_err(|e| {
        let mut pointer = String::new();
        for seg in e.path().iter() {
            use serde_path_to_error::Segment;
            match seg {
                Segment::Seq { index } => pointer.push_str(&format!("/{index}")),
                Segment::Map { key } => pointer.push_str(&format!("/{}", escape(key))),
                Segment::Enum { .. } | Segment::Unknown => {}
            }
        }
        (pointer, e.into_inner().to_string())
    })
}

/// The 1-based line of the value a JSON pointer names in `text` (BOM tolerated), so an error
/// found on the parsed value can say where to look; `None` when the text does not parse or the
/// pointer names nothing. The whole document (`""`) is line 1.
pub fn pointer_line(text: &str, pointer: &str) -> Option<usize> {
    let text = strip_bom(text);
    let mut offset = value_offset(text, 0)?;
    for raw in pointer.split('/').skip(1) {
        let segment = raw.replace("~1", "/").replace("~0", "~");
        offset = child_offset(text, offset, &segment)?;
    }
    Some(text[..offset].matches('\n').count() + 1)
}

/// Byte offset of the first non-whitespace character at or after `from`.
fn value_offset(text: &str, from: usize) -> Option<usize> {
    text.get(from..)?
        .find(|c: char| !c.is_whitespace())
        .map(|i| from + i)
}

/// Byte offset just past the JSON value starting at `at` (which must be valid JSON).
fn value_end(text: &str, at: usize) -> Option<usize> {
    let mut de = serde_json::Deserializer::from_str(text.get(at..)?).into_iter::<Value>();
    de.next()?.ok()?;
    Some(at + de.byte_offset())
}

/// Byte offset of the member `segment` (object key or array index) of the container at `at`.
fn child_offset(text: &str, at: usize, segment: &str) -> Option<usize> {
    let open = text[at..].chars().next()?;
    let is_object = match open {
        '{' => true,
        '[' => false,
        _ => return None,
    };
    let index: Option<usize> = if is_object {
        None
    } else {
        segment.parse().ok()
    };
    let mut pos = value_offset(text, at + 1)?;
    let mut i = 0usize;
    loop {
        if text[pos..].starts_with(['}', ']']) {
            return None;
        }
        if is_object {
            let key_end = value_end(text, pos)?;
            let key: String = serde_json::from_str(&text[pos..key_end]).ok()?;
            let colon = value_offset(text, key_end)?;
            pos = value_offset(text, colon + 1)?;
            if key == segment {
                return Some(pos);
            }
        } else if index == Some(i) {
            return Some(pos);
        }
        let end = value_end(text, pos)?;
        let sep = value_offset(text, end)?;
        if !text[sep..].starts_with(',') {
            return None;
        }
        pos = value_offset(text, sep + 1)?;
        i += 1;
    }
}

fn deserialize_as(kind: FileKind, value: &Value) -> Result<(), (String, String)> {
    fn de<T: serde::de::DeserializeOwned>(v: &Value) -> Result<(), (String, String)> {
        typed_at::<T>(v).map(drop)
    }
    let v = value;
    match kind {
        FileKind::Checkpoint => de::<model::Checkpoint>(v),
        FileKind::Settings => de::<model::Settings>(v),
        FileKind::CurrentState => de::<model::CurrentState>(v),
        FileKind::StateDelta => de::<model::StateDelta>(v),
        FileKind::ChangelogEntry => de::<model::ChangelogEntry>(v),
        FileKind::WorldRules => de::<model::WorldRules>(v),
        FileKind::Character => de::<model::Character>(v),
        FileKind::Relationships => de::<model::Relationships>(v),
        FileKind::Storylines => de::<model::Storylines>(v),
        FileKind::StorylineSpec => de::<model::StorylineSpec>(v),
        FileKind::StorylineSchedule => de::<model::StorylineSchedule>(v),
        FileKind::ChapterContract => de::<model::ChapterContract>(v),
        FileKind::ForeshadowingGlobal => de::<model::ForeshadowingGlobal>(v),
        FileKind::VolumeForeshadowing => de::<model::VolumeForeshadowing>(v),
        FileKind::Evaluation => de::<model::Evaluation>(v),
        FileKind::PipelineLog => de::<model::PipelineLog>(v),
        FileKind::StyleProfile => de::<model::StyleProfile>(v),
        FileKind::AiBlacklist => de::<model::AiBlacklist>(v),
        FileKind::StyleDrift => de::<model::StyleDrift>(v),
        FileKind::Revision => de::<model::Revision>(v),
        FileKind::Preferences => de::<model::Preferences>(v),
        FileKind::MemoryEntry => de::<model::MemoryEntry>(v),
        FileKind::RepairReview => de::<model::RepairReview>(v),
    }
}

/// A JSON document of the project, as the store found it.
#[derive(Debug, Clone)]
pub struct JsonDoc {
    /// Project-relative path.
    pub file: String,
    /// The 1-based line of a JSONL file's document (each line is one); `None` for a JSON file.
    pub line: Option<usize>,
    pub kind: FileKind,
    pub value: Value,
    /// The chapter number the file name claims (`chapter-048.json` → 48).
    pub chapter_in_name: Option<u32>,
    /// The volume the path claims (`volumes/vol-02/…` → 2).
    pub volume_in_path: Option<u32>,
    /// The slug the file name claims (`characters/active/lin-feng.json` → `lin-feng`).
    pub slug_in_name: Option<String>,
}

impl JsonDoc {
    /// A document whose path claims no chapter, volume or slug (a JSONL line, a file outside
    /// any project).
    pub fn new(file: impl Into<String>, line: Option<usize>, kind: FileKind, value: Value) -> Self {
        JsonDoc {
            file: file.into(),
            line,
            kind,
            value,
            chapter_in_name: None,
            volume_in_path: None,
            slug_in_name: None,
        }
    }

    /// A finding about this document put at its line (a JSONL file's line).
    pub fn place(&self, f: Diagnostic) -> Diagnostic {
        match self.line {
            Some(l) => f.at_line(l),
            None => f,
        }
    }
}

/// A Markdown file whose name or head says which chapter it is.
#[derive(Debug, Clone)]
pub struct MarkdownDoc {
    pub file: String,
    pub chapter_in_name: Option<u32>,
    /// The first few lines (enough for a heading or front matter).
    pub head: String,
    pub is_summary: bool,
}

/// A file of a known kind that the store could not turn into a [`JsonDoc`]: absent (a required
/// file), unreadable, not UTF-8, or not JSON. Its own finding is in `preexisting`; here it only
/// marks its kind as broken so that references into it are not judged (no cascade).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FailedDoc {
    pub file: String,
    pub kind: FileKind,
}

/// Everything `check_project` looks at. Files the store could not read or parse arrive as
/// findings already (`preexisting`), and by kind in `failed`.
#[derive(Debug, Clone, Default)]
pub struct ProjectView {
    pub docs: Vec<JsonDoc>,
    pub markdown: Vec<MarkdownDoc>,
    /// `storylines/<dir>/` directory names.
    pub storyline_dirs: Vec<String>,
    /// Volume outlines read (their parse errors are in `preexisting`).
    pub outlines: Vec<String>,
    pub preexisting: Vec<Diagnostic>,
    pub failed: Vec<FailedDoc>,
}

fn typed<T: serde::de::DeserializeOwned>(doc: &JsonDoc) -> Option<T> {
    serde_json::from_value(doc.value.clone()).ok()
}

static W_REF: OnceLock<Regex> = OnceLock::new();
static C_REF: OnceLock<Regex> = OnceLock::new();
static LS_REF: OnceLock<Regex> = OnceLock::new();

fn refs<'t>(re: &'static OnceLock<Regex>, pat: &str, text: &'t str) -> Vec<&'t str> {
    let re = re.get_or_init(|| Regex::new(pat).expect("reference pattern"));
    re.find_iter(text).map(|m| m.as_str()).collect()
}

/// Runs every document check and every cross-file check; returns the findings sorted.
pub fn check_project(view: &ProjectView) -> Vec<Diagnostic> {
    let mut out = view.preexisting.clone();
    let valid = schema_checked(view, &mut out);
    let broken = broken_kinds(view, &valid);
    let registries = Registries::collect(&valid, &broken, &mut out);
    for doc in &valid {
        chapter_name_check(doc, &mut out);
        document_cross_checks(doc, &registries, &mut out);
    }
    storyline_dir_check(
        &view.storyline_dirs,
        registries.storylines.as_ref(),
        &mut out,
    );
    for md in &view.markdown {
        markdown_check(md, registries.storylines.as_ref(), &mut out);
    }
    if !broken.contains(&FileKind::ChangelogEntry) {
        state_follows_changelog(&valid, &mut out);
    }
    staged_deltas_apply(&valid, &broken, &mut out);

    out.sort();
    out.dedup();
    out
}

/// Checks each document against its schema; returns the documents that passed (the only ones
/// the cross-file checks read) and adds the others' findings to `out`.
fn schema_checked<'v>(view: &'v ProjectView, out: &mut Vec<Diagnostic>) -> Vec<&'v JsonDoc> {
    let mut valid: Vec<&JsonDoc> = Vec::new();
    for doc in &view.docs {
        let found = check_document(&doc.file, doc.kind, &doc.value);
        if found.is_empty() {
            valid.push(doc);
        }
        out.extend(found.into_iter().map(|f| doc.place(f)));
    }
    valid
}

/// Which kinds could not be loaded (so references into them cannot be judged): documents that
/// failed their schema, and files that are missing, unreadable or not JSON at all.
fn broken_kinds(view: &ProjectView, valid: &[&JsonDoc]) -> BTreeSet<FileKind> {
    view.docs
        .iter()
        .filter(|d| !valid.iter().any(|v| std::ptr::eq(*v, *d)))
        .map(|d| d.kind)
        .chain(view.failed.iter().map(|f| f.kind))
        .collect()
}

/// Registries of what exists (from documents that passed their schema), for the reference
/// checks. `None` = the registry file is broken: references into it cannot be judged.
struct Registries {
    storylines: Option<BTreeSet<String>>,
    world_rules: Option<BTreeSet<String>>,
    storyline_spec: Option<BTreeSet<String>>,
    contracts: Option<BTreeSet<String>>,
}

impl Registries {
    /// Reads the ids each registry document declares, reporting duplicates (and a character
    /// file whose name is not its id) into `out`.
    fn collect(valid: &[&JsonDoc], broken: &BTreeSet<FileKind>, out: &mut Vec<Diagnostic>) -> Self {
        let mut storylines: Option<BTreeSet<String>> = None;
        let mut world_rules: Option<BTreeSet<String>> = None;
        let mut storyline_spec: Option<BTreeSet<String>> = None;
        let mut contracts: BTreeSet<String> = BTreeSet::new();
        for doc in valid {
            match doc.kind {
                FileKind::Storylines => {
                    if let Some(s) = typed::<model::Storylines>(doc) {
                        storylines = Some(storyline_registry(&doc.file, &s, out));
                    }
                }
                FileKind::WorldRules => {
                    if let Some(r) = typed::<model::WorldRules>(doc) {
                        let ids = r.rules.iter().map(|rule| rule.id.as_str());
                        world_rules = Some(unique_ids(&doc.file, ids, "世界规则编号", out));
                    }
                }
                FileKind::StorylineSpec => {
                    if let Some(s) = typed::<model::StorylineSpec>(doc) {
                        let ids = s.rules.iter().map(|rule| rule.id.as_str());
                        storyline_spec = Some(unique_ids(&doc.file, ids, "故事线规范编号", out));
                    }
                }
                FileKind::Character => {
                    if let Some(c) = typed::<model::Character>(doc) {
                        character_registry(doc, &c, &mut contracts, out);
                    }
                }
                _ => {}
            }
        }
        // An absent registry file means nothing can be referenced; a broken one means we
        // cannot tell.
        let or_empty = |set: Option<BTreeSet<String>>, kind: FileKind| match set {
            None if broken.contains(&kind) => None,
            None => Some(BTreeSet::new()),
            some => some,
        };
        Registries {
            storylines: or_empty(storylines, FileKind::Storylines),
            world_rules: or_empty(world_rules, FileKind::WorldRules),
            storyline_spec: or_empty(storyline_spec, FileKind::StorylineSpec),
            contracts: (!broken.contains(&FileKind::Character)).then_some(contracts),
        }
    }
}

/// The storyline ids of `storylines.json`; reports duplicate ids and types outside
/// `storyline_types` (the defaults when that list is empty).
fn storyline_registry(
    file: &str,
    s: &model::Storylines,
    out: &mut Vec<Diagnostic>,
) -> BTreeSet<String> {
    let mut ids = BTreeSet::new();
    let types: Vec<String> = if s.storyline_types.is_empty() {
        DEFAULT_STORYLINE_TYPES
            .iter()
            .map(|t| t.to_string())
            .collect()
    } else {
        s.storyline_types.clone()
    };
    for (i, line) in s.storylines.iter().enumerate() {
        if !ids.insert(line.id.clone()) {
            out.push(Diagnostic::error(
                "E_DUPLICATE_ID",
                file,
                format!("/storylines/{i}/id"),
                format!("故事线 id「{}」重复", line.id),
            ));
        }
        if !types.contains(&line.kind) {
            out.push(Diagnostic::error(
                "E_STORYLINE_TYPE",
                file,
                format!("/storylines/{i}/type"),
                format!(
                    "故事线类型「{}」不在 storyline_types 中（可选：{}）",
                    line.kind,
                    types.join("、")
                ),
            ));
        }
    }
    ids
}

/// The ids of a `rules` list (world rules, storyline spec); reports each repeated id at its
/// `/rules/<i>/id`, naming it as `what`.
fn unique_ids<'a>(
    file: &str,
    ids: impl Iterator<Item = &'a str>,
    what: &str,
    out: &mut Vec<Diagnostic>,
) -> BTreeSet<String> {
    let mut seen = BTreeSet::new();
    for (i, id) in ids.enumerate() {
        if !seen.insert(id.to_string()) {
            out.push(Diagnostic::error(
                "E_DUPLICATE_ID",
                file,
                format!("/rules/{i}/id"),
                format!("{what}「{id}」重复"),
            ));
        }
    }
    seen
}

/// Checks a character file's name against its id and adds its contract ids to the
/// project-wide set `contracts`, reporting ids already taken.
fn character_registry(
    doc: &JsonDoc,
    c: &model::Character,
    contracts: &mut BTreeSet<String>,
    out: &mut Vec<Diagnostic>,
) {
    if let Some(stem) = &doc.slug_in_name
        && stem != &c.id
    {
        out.push(Diagnostic::error(
            "E_FILE_NAME",
            &doc.file,
            "/id",
            format!("角色 id「{}」与文件名「{stem}.json」不一致", c.id),
        ));
    }
    for (i, k) in c.contracts.iter().enumerate() {
        if !contracts.insert(k.id.clone()) {
            out.push(Diagnostic::error(
                "E_DUPLICATE_ID",
                &doc.file,
                format!("/contracts/{i}/id"),
                format!("角色契约编号「{}」在项目中重复", k.id),
            ));
        }
    }
}

/// Checks storyline ids referenced from one file: each must be a slug and (when the registry
/// could be read) a storyline of `storylines.json`.
struct StorylineRefs<'a> {
    file: &'a str,
    known: Option<&'a BTreeSet<String>>,
}

impl StorylineRefs<'_> {
    /// Reports `id` at `pointer` if it is not a slug or not a known storyline.
    fn check(&self, pointer: String, id: &str, out: &mut Vec<Diagnostic>) {
        if !is_slug(id) {
            out.push(Diagnostic::error(
                "E_SLUG",
                self.file,
                pointer,
                format!("故事线 id「{id}」不是 slug（小写英文、数字、- 或 _）"),
            ));
        } else if let Some(ids) = self.known
            && !ids.contains(id)
        {
            out.push(Diagnostic::error(
                "E_REF_STORYLINE",
                self.file,
                pointer,
                format!("引用了不存在的故事线「{id}」（storylines/storylines.json 中没有）"),
            ));
        }
    }
}

/// The cross checks of one schema-valid document, by kind: its references and the
/// constraints between its own fields that the schema cannot express.
fn document_cross_checks(doc: &JsonDoc, reg: &Registries, out: &mut Vec<Diagnostic>) {
    let file = doc.file.as_str();
    let refs = StorylineRefs {
        file,
        known: reg.storylines.as_ref(),
    };
    match doc.kind {
        FileKind::Storylines => {
            if let Some(s) = typed::<model::Storylines>(doc) {
                for (i, r) in s.relationships.iter().enumerate() {
                    refs.check(format!("/relationships/{i}/from"), &r.from, out);
                    refs.check(format!("/relationships/{i}/to"), &r.to, out);
                }
            }
        }
        FileKind::StorylineSchedule => {
            if let Some(s) = typed::<model::StorylineSchedule>(doc) {
                schedule_check(doc, &s, &refs, out);
            }
        }
        FileKind::ChapterContract => {
            if let Some(c) = typed::<model::ChapterContract>(doc) {
                contract_storyline_refs(&c, &refs, out);
                contract_refs(
                    doc,
                    &c,
                    reg.world_rules.as_ref(),
                    reg.storyline_spec.as_ref(),
                    reg.contracts.as_ref(),
                    out,
                );
            }
        }
        FileKind::StateDelta => {
            if let Some(d) = typed::<model::StateDelta>(doc) {
                refs.check("/storyline_id".into(), &d.storyline_id, out);
            }
        }
        FileKind::ForeshadowingGlobal => {
            if let Some(f) = typed::<model::ForeshadowingGlobal>(doc) {
                global_foreshadowing_check(&f, &refs, out);
            }
        }
        FileKind::VolumeForeshadowing => {
            if let Some(f) = typed::<model::VolumeForeshadowing>(doc) {
                volume_foreshadowing_check(doc, &f, &refs, out);
            }
        }
        FileKind::CurrentState => state_keys_check(doc, out),
        FileKind::Evaluation => {
            if let Some(e) = typed::<model::Evaluation>(doc) {
                evaluation_weights(file, &e, out);
            }
        }
        FileKind::StyleProfile => {
            if let Some(p) = typed::<model::StyleProfile>(doc) {
                style_exemplars(file, &p, out);
            }
        }
        FileKind::Checkpoint => {
            if let Some(c) = typed::<model::Checkpoint>(doc) {
                checkpoint_coherence(file, &c, out);
            }
        }
        FileKind::Settings => {
            if let Some(s) = typed::<model::Settings>(doc) {
                settings_check(file, &s, out);
            }
        }
        _ => {}
    }
}

/// A `volume` field must match the `vol-NN` directory the file sits in.
fn volume_matches_dir(doc: &JsonDoc, volume: u32, out: &mut Vec<Diagnostic>) {
    if let Some(v) = doc.volume_in_path
        && v != volume
    {
        out.push(Diagnostic::error(
            "E_FILE_NAME",
            &doc.file,
            "/volume",
            format!("volume 为 {volume}，但文件位于第 {v} 卷目录"),
        ));
    }
}

/// A storyline schedule: its volume, its chapter ranges and every storyline it names.
fn schedule_check(
    doc: &JsonDoc,
    s: &model::StorylineSchedule,
    refs: &StorylineRefs<'_>,
    out: &mut Vec<Diagnostic>,
) {
    let file = doc.file.as_str();
    volume_matches_dir(doc, s.volume, out);
    if let Some([a, b]) = s.chapter_range
        && a > b
    {
        out.push(Diagnostic::error(
            "E_RANGE",
            file,
            "/chapter_range",
            format!("章节范围 [{a}, {b}] 起点大于终点"),
        ));
    }
    for (i, a) in s.active_storylines.iter().enumerate() {
        refs.check(
            format!("/active_storylines/{i}/storyline_id"),
            &a.storyline_id,
            out,
        );
    }
    for (i, e) in s.convergence_events.iter().enumerate() {
        let [a, b] = e.chapter_range;
        if a > b {
            out.push(Diagnostic::error(
                "E_RANGE",
                file,
                format!("/convergence_events/{i}/chapter_range"),
                format!("交汇事件章节范围 [{a}, {b}] 起点大于终点"),
            ));
        }
        for (j, id) in e.involved_storylines.iter().enumerate() {
            refs.check(
                format!("/convergence_events/{i}/involved_storylines/{j}"),
                id,
                out,
            );
        }
    }
    for (j, id) in s.dormant_storylines.iter().enumerate() {
        refs.check(format!("/dormant_storylines/{j}"), id, out);
    }
    for (j, id) in s.newly_activated.iter().enumerate() {
        refs.check(format!("/newly_activated/{j}"), id, out);
    }
}

/// The storylines a chapter contract names: its own, the next one it hints at, and the keys
/// of its concurrent state.
fn contract_storyline_refs(
    c: &model::ChapterContract,
    refs: &StorylineRefs<'_>,
    out: &mut Vec<Diagnostic>,
) {
    if let Some(id) = &c.storyline_id {
        refs.check("/storyline_id".into(), id, out);
    }
    if let Some(h) = &c.transition_hint
        && let Some(id) = &h.next_storyline
    {
        refs.check("/transition_hint/next_storyline".into(), id, out);
    }
    if let Some(ctx) = &c.storyline_context {
        for key in ctx.concurrent_state.keys() {
            refs.check(
                format!("/storyline_context/concurrent_state/{}", escape(key)),
                key,
                out,
            );
        }
    }
}

/// The global foreshadowing list: unique ids, and known storylines where planted.
fn global_foreshadowing_check(
    f: &model::ForeshadowingGlobal,
    refs: &StorylineRefs<'_>,
    out: &mut Vec<Diagnostic>,
) {
    let mut seen = BTreeSet::new();
    for (i, item) in f.foreshadowing.iter().enumerate() {
        if !seen.insert(item.id.clone()) {
            out.push(Diagnostic::error(
                "E_DUPLICATE_ID",
                refs.file,
                format!("/foreshadowing/{i}/id"),
                format!("伏笔 id「{}」重复", item.id),
            ));
        }
        if let Some(id) = &item.planted_storyline {
            refs.check(format!("/foreshadowing/{i}/planted_storyline"), id, out);
        }
    }
}

/// A volume's foreshadowing plan: its volume, and the storylines its items belong to.
fn volume_foreshadowing_check(
    doc: &JsonDoc,
    f: &model::VolumeForeshadowing,
    refs: &StorylineRefs<'_>,
    out: &mut Vec<Diagnostic>,
) {
    volume_matches_dir(doc, f.volume, out);
    for (i, item) in f.foreshadowing.iter().enumerate() {
        if let Some(id) = &item.storyline_id {
            refs.check(format!("/foreshadowing/{i}/storyline_id"), id, out);
        }
    }
}

/// The entity keys of the state file must be slugs (display names live in the character
/// files).
fn state_keys_check(doc: &JsonDoc, out: &mut Vec<Diagnostic>) {
    for section in ["characters", "items", "locations", "factions"] {
        if let Some(map) = doc.value.get(section).and_then(Value::as_object) {
            for key in map.keys() {
                if !is_slug(key) {
                    out.push(Diagnostic::error(
                        "E_SLUG",
                        &doc.file,
                        format!("/{section}/{}", escape(key)),
                        format!(
                            "「{key}」不是 slug：state 的实体键必须用 slug（如 lin-feng），显示名写在角色档案里"
                        ),
                    ));
                }
            }
        }
    }
}

/// The settings' ranges: chapter length, ordered gate thresholds, weights summing to 1.
fn settings_check(file: &str, s: &model::Settings, out: &mut Vec<Diagnostic>) {
    if s.chapter_length.min > s.chapter_length.max {
        out.push(Diagnostic::error(
            "E_RANGE",
            file,
            "/chapter_length",
            "chapter_length.min 大于 max".to_string(),
        ));
    }
    let g = &s.gate;
    if !(g.pass >= g.polish && g.polish >= g.revise && g.revise >= g.pause) {
        out.push(Diagnostic::error(
            "E_RANGE",
            file,
            "/gate",
            "门控阈值应满足 pass ≥ polish ≥ revise ≥ pause".to_string(),
        ));
    }
    let sum = g.weights.sum();
    if (sum - 1.0).abs() > 0.005 {
        out.push(Diagnostic::error(
            "E_WEIGHTS",
            file,
            "/gate/weights",
            format!("8 个维度的权重之和为 {sum:.3}，应为 1.0"),
        ));
    }
}

/// Storyline memory directories must be slugs and known storylines.
fn storyline_dir_check(
    dirs: &[String],
    storylines: Option<&BTreeSet<String>>,
    out: &mut Vec<Diagnostic>,
) {
    for dir in dirs {
        let file = format!("storylines/{dir}/");
        if !is_slug(dir) {
            out.push(Diagnostic::error(
                "E_SLUG",
                &file,
                "",
                format!("故事线目录名「{dir}」不是 slug"),
            ));
        } else if let Some(ids) = storylines
            && !ids.contains(dir)
        {
            out.push(Diagnostic::warning(
                "E_REF_STORYLINE",
                &file,
                "",
                format!("目录「{dir}」不对应 storylines.json 中的任何故事线"),
            ));
        }
    }
}

/// A line of the project's `state/changelog.jsonl`.
fn is_changelog_line(d: &JsonDoc) -> bool {
    d.kind == FileKind::ChangelogEntry && d.file == "state/changelog.jsonl"
}

/// The state file is what its changelog replays to: its `state_version` is the last line's
/// (0 with an empty changelog). A state ahead of or behind its log cannot be rebuilt.
fn state_follows_changelog(valid: &[&JsonDoc], out: &mut Vec<Diagnostic>) {
    const STATE: &str = "state/current-state.json";
    let Some(state) = valid.iter().find(|d| d.file == STATE) else {
        return;
    };
    let version = state
        .value
        .get("state_version")
        .and_then(Value::as_u64)
        .unwrap_or(0);
    let last = valid.iter().rfind(|d| is_changelog_line(d));
    let logged = last
        .and_then(|d| d.value.get("state_version"))
        .and_then(Value::as_u64)
        .unwrap_or(0);
    if version != logged {
        out.push(Diagnostic::error(
            "E_STATE_DIVERGED",
            STATE,
            "/state_version",
            match last {
                Some(d) => format!(
                    "state_version 为 {version}，但变更日志最后一行（{}:{}）记到 {logged}：状态文件与变更日志不一致。运行 novel state rebuild 查看差异",
                    d.file,
                    d.line.unwrap_or(0)
                ),
                None => format!(
                    "state_version 为 {version}，但变更日志是空的：这些版本没有任何记录可以重建。运行 novel state rebuild 查看差异"
                ),
            },
        ));
    }
}

/// The in-flight chapter's staged delta (the one its commit will apply) is judged as `novel
/// ops validate` and the commit judge it ([`crate::ops::check_delta`], one answer): rejected
/// ops, version, chapter order, state and changelog in step. Only when every file it is
/// checked against passed its schema (their own findings say what is wrong otherwise); a delta
/// that cannot be run at all is already reported by its schema and storyline checks. (Other
/// deltas lying in `staging/state/` are nobody's to apply.)
fn staged_deltas_apply(valid: &[&JsonDoc], broken: &BTreeSet<FileKind>, out: &mut Vec<Diagnostic>) {
    use crate::ops::{Context, NameIndex, check_delta};
    let needed = [
        FileKind::CurrentState,
        FileKind::ForeshadowingGlobal,
        FileKind::VolumeForeshadowing,
        FileKind::Storylines,
        FileKind::ChangelogEntry,
    ];
    let inflight = valid
        .iter()
        .find(|d| d.kind == FileKind::Checkpoint)
        .and_then(|d| typed::<model::Checkpoint>(d))
        .and_then(|cp| cp.inflight_chapter);
    let deltas: Vec<&&JsonDoc> = valid
        .iter()
        .filter(|d| {
            d.kind == FileKind::StateDelta
                && d.file.starts_with("staging/state/")
                && inflight.is_some()
                && d.chapter_in_name == inflight
        })
        .collect();
    if deltas.is_empty() || needed.iter().any(|k| broken.contains(k)) {
        return;
    }
    let Some(state) = valid.iter().find(|d| d.file == "state/current-state.json") else {
        return;
    };
    let of = |kind: FileKind| valid.iter().filter(move |d| d.kind == kind);
    let global = of(FileKind::ForeshadowingGlobal)
        .find_map(|d| typed::<model::ForeshadowingGlobal>(d))
        .unwrap_or_else(|| model::ForeshadowingGlobal {
            foreshadowing: Vec::new(),
            extra: Default::default(),
        });
    let plan: Vec<_> = of(FileKind::VolumeForeshadowing)
        .filter_map(|d| typed::<model::VolumeForeshadowing>(d))
        .flat_map(|v| v.foreshadowing)
        .collect();
    let mut names = NameIndex::default();
    for c in of(FileKind::Character).filter_map(|d| typed::<model::Character>(d)) {
        names.insert(&c.display_name, &c.id);
        for a in &c.aliases {
            names.insert(a, &c.id);
        }
    }
    let storylines: Vec<String> = of(FileKind::Storylines)
        .filter_map(|d| typed::<model::Storylines>(d))
        .flat_map(|s| s.storylines.into_iter().map(|l| l.id))
        .collect();
    let log_last = valid
        .iter()
        .rfind(|d| is_changelog_line(d))
        .and_then(|d| typed::<model::ChangelogEntry>(d));
    let next_chapter = of(FileKind::Checkpoint)
        .filter_map(|d| typed::<model::Checkpoint>(d))
        .map(|c| c.last_completed_chapter.saturating_add(1))
        .next();
    let ctx = Context {
        names: &names,
        plan: &plan,
    };
    for d in deltas {
        if let Ok(check) = check_delta(
            state.value.clone(),
            &global,
            &d.value,
            ctx,
            &storylines,
            log_last.as_ref(),
            next_chapter,
        ) {
            out.extend(check.findings(&d.file));
        }
    }
}

/// The checks of [`check_project`] that the files of `view` pass or fail on their own (the
/// guard hook, after one file was written): schema, typed reading, the file name against the
/// content, ids and duplicates inside the file. References into files of other kinds are not
/// judged: loading those would mean compiling their schemas too.
pub fn check_alone(mut view: ProjectView) -> Vec<Diagnostic> {
    let own: BTreeSet<FileKind> = view.docs.iter().map(|d| d.kind).collect();
    for kind in FileKind::ALL {
        if !own.contains(&kind) {
            // Marked as not loaded, so references into them are left unjudged.
            view.failed.push(FailedDoc {
                file: String::new(),
                kind,
            });
        }
    }
    check_project(&view)
}

fn chapter_name_check(doc: &JsonDoc, out: &mut Vec<Diagnostic>) {
    let Some(named) = doc.chapter_in_name else {
        return;
    };
    let Some(chapter) = doc.value.get("chapter").and_then(Value::as_u64) else {
        return;
    };
    if chapter != u64::from(named) {
        out.push(Diagnostic::error(
            "E_FILE_NAME",
            &doc.file,
            "/chapter",
            format!("chapter 为 {chapter}，但文件名表示第 {named} 章"),
        ));
    }
}

fn contract_refs(
    doc: &JsonDoc,
    c: &model::ChapterContract,
    world: Option<&BTreeSet<String>>,
    ls: Option<&BTreeSet<String>>,
    contracts: Option<&BTreeSet<String>>,
    out: &mut Vec<Diagnostic>,
) {
    let file = doc.file.as_str();
    // `None` = the registry file is broken (its own errors are reported; refs cannot be judged).
    let check = |pointer: String, id: &str, out: &mut Vec<Diagnostic>| {
        let (known, what, home) = if id.starts_with("W-") {
            (world, "世界规则", "world/rules.json")
        } else if id.starts_with("LS-") {
            (ls, "故事线规范", "storylines/storyline-spec.json")
        } else {
            (
                contracts,
                "角色契约",
                "characters/active/*.json 的 contracts",
            )
        };
        if let Some(set) = known
            && !set.contains(id)
        {
            out.push(Diagnostic::error(
                "E_REF_SPEC",
                file,
                pointer,
                format!("引用了不存在的{what}「{id}」（{home} 中没有）"),
            ));
        }
    };
    for (i, id) in c.preconditions.required_world_rules.iter().enumerate() {
        check(format!("/preconditions/required_world_rules/{i}"), id, out);
    }
    let mut texts: Vec<(String, &str)> = Vec::new();
    for (i, t) in c.acceptance_criteria.iter().enumerate() {
        texts.push((format!("/acceptance_criteria/{i}"), t.as_str()));
    }
    for (i, o) in c.objectives.iter().enumerate() {
        texts.push((
            format!("/objectives/{i}/description"),
            o.description.as_str(),
        ));
    }
    for (pointer, text) in texts {
        for id in refs(&W_REF, r"W-[0-9]{3,}", text) {
            check(pointer.clone(), id, out);
        }
        for id in refs(&LS_REF, r"LS-[0-9]{3,}", text) {
            check(pointer.clone(), id, out);
        }
        for id in refs(&C_REF, r"C-[A-Z0-9]+(?:-[A-Z0-9]+)*-[0-9]{3,}", text) {
            check(pointer.clone(), id, out);
        }
    }
}

fn checkpoint_coherence(file: &str, c: &model::Checkpoint, out: &mut Vec<Diagnostic>) {
    use model::PipelineStage as S;
    let busy = matches!(
        c.pipeline_stage,
        Some(S::Drafting | S::Drafted | S::Refined | S::Judged | S::Revising)
    );
    match (busy, c.inflight_chapter) {
        (true, None) => out.push(Diagnostic::error(
            "E_CHECKPOINT",
            file,
            "/inflight_chapter",
            "pipeline_stage 表示有章节在写，但 inflight_chapter 为 null".to_string(),
        )),
        (_, Some(n)) if n != c.next_chapter() => out.push(Diagnostic::error(
            "E_CHECKPOINT",
            file,
            "/inflight_chapter",
            format!(
                "在写章节为第 {n} 章，但最后完成的是第 {} 章（应为第 {} 章）",
                c.last_completed_chapter,
                c.next_chapter()
            ),
        )),
        (false, Some(n)) => out.push(Diagnostic::warning(
            "E_CHECKPOINT",
            file,
            "/inflight_chapter",
            format!("inflight_chapter 为 {n}，但 pipeline_stage 不是进行中的阶段"),
        )),
        _ => {}
    }
    let mut ids = BTreeMap::new();
    for (i, a) in c.pending_actions.iter().enumerate() {
        if let Some(prev) = ids.insert(a.id.clone(), i) {
            out.push(Diagnostic::error(
                "E_DUPLICATE_ID",
                file,
                format!("/pending_actions/{i}/id"),
                format!("待处理事项 id「{}」与第 {prev} 项重复", a.id),
            ));
        }
    }
}

/// Parses `第48章` / `第四十八章` / `第一百零二章` (any numeral [`crate::numerals`] reads) in a
/// heading.
pub fn chapter_in_heading(line: &str) -> Option<u32> {
    let start = line.find('第')? + '第'.len_utf8();
    let rest = line[start..].trim_start();
    let (n, len) = crate::numerals::leading_u32(rest)?;
    rest[len..].trim_start().starts_with('章').then_some(n)
}

fn markdown_check(
    md: &MarkdownDoc,
    storylines: Option<&BTreeSet<String>>,
    out: &mut Vec<Diagnostic>,
) {
    let Some(named) = md.chapter_in_name else {
        return;
    };
    if md.is_summary {
        let fm = crate::frontmatter::parse(&md.head);
        let fm = |key: &str| fm.as_ref().and_then(|f| f.get(key));
        if let Some(ch) = fm("chapter") {
            match ch.parse::<u32>() {
                Ok(n) if n == named => {}
                Ok(n) => out.push(Diagnostic::error(
                    "E_FILE_NAME",
                    &md.file,
                    "/chapter",
                    format!("摘要 front matter 中 chapter 为 {n}，但文件名表示第 {named} 章"),
                )),
                Err(_) => out.push(Diagnostic::error(
                    "E_SCHEMA",
                    &md.file,
                    "/chapter",
                    format!("摘要 front matter 中 chapter「{ch}」不是整数"),
                )),
            }
        }
        if let Some(id) = fm("storyline_id") {
            if !is_slug(id) {
                out.push(Diagnostic::error(
                    "E_SLUG",
                    &md.file,
                    "/storyline_id",
                    format!("摘要的 storyline_id「{id}」不是 slug"),
                ));
            } else if let Some(ids) = storylines
                && !ids.contains(id)
            {
                out.push(Diagnostic::error(
                    "E_REF_STORYLINE",
                    &md.file,
                    "/storyline_id",
                    format!("摘要引用了不存在的故事线「{id}」"),
                ));
            }
        }
    } else if let Some(first) = md.head.lines().find(|l| l.trim_start().starts_with('#'))
        && let Some(n) = chapter_in_heading(first)
        && n != named
    {
        out.push(Diagnostic::error(
            "E_FILE_NAME",
            &md.file,
            "",
            format!(
                "标题「{}」是第 {n} 章，但文件名表示第 {named} 章",
                first.trim()
            ),
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pointer_line_finds_the_value() {
        let text = "\u{feff}{\n  \"title\": \"青云\",\n  \"gate\": {\n    \"pass\": \"4.5\",\n    \"w\": [1, {\"a/b\": 2}]\n  }\n}\n";
        // (pointer, line)
        let cases = [
            ("", Some(1)),
            ("/title", Some(2)),
            ("/gate", Some(3)),
            ("/gate/pass", Some(4)),
            ("/gate/w/1/a~1b", Some(5)),
            ("/gate/missing", None),
            ("/gate/w/7", None),
            ("/title/x", None),
        ];
        for (pointer, line) in cases {
            assert_eq!(pointer_line(text, pointer), line, "{pointer}");
        }
        // A value that only looks like the key does not count; CRLF lines count once.
        let text = "{\r\n\"note\": \"\\\"pass\\\": 1\",\r\n\"pass\": 2\r\n}";
        assert_eq!(pointer_line(text, "/pass"), Some(3));
        assert_eq!(pointer_line("{ not json", "/a"), None);
    }

    #[test]
    fn typed_at_names_the_pointer() {
        let v: Value = serde_json::json!({"gate": {"pass": "4.5"}});
        let (pointer, _) = typed_at::<model::Settings>(&v).unwrap_err();
        assert_eq!(pointer, "/gate/pass");
    }

    #[test]
    fn chinese_chapter_numbers() {
        for (s, n) in [
            ("# 第48章 密信", 48),
            ("# 第四十八章 密信", 48),
            ("# 第十章", 10),
            ("## 第一百零二章 归来", 102),
            ("第一千二百三十四章", 1234),
            ("第两百章", 200),
        ] {
            assert_eq!(chapter_in_heading(s), Some(n), "{s}");
        }
        assert_eq!(chapter_in_heading("# 序章"), None);
        assert_eq!(chapter_in_heading("# 第X章"), None);
    }

    #[test]
    fn json_error_column_counts_characters() {
        // The error sits after five CJK characters (15 bytes) and the opening quote.
        let err = parse_json("{\"名字\": \"陆尘陆尘陆\" x}").unwrap_err();
        assert_eq!(err.line, 1);
        assert_eq!(err.column, 16, "{err}");
        assert!(err.message.contains("缺少逗号"), "{err}");
    }

    #[test]
    fn nullable_enum_typo_names_the_options() {
        let v = serde_json::json!({
            "last_completed_chapter": 0, "current_volume": 1,
            "orchestrator_state": "WRITING", "pipeline_stage": "drafing"
        });
        let errs = schema_errors(FileKind::Checkpoint, &v);
        assert_eq!(errs.len(), 1, "{errs:?}");
        assert_eq!(errs[0].0, "/pipeline_stage");
        assert!(errs[0].1.contains("drafting"), "{errs:?}");
    }

    #[test]
    fn chinese_display_name_as_slug_gets_a_hint() {
        let v = serde_json::json!({"id": "陆尘", "display_name": "陆尘"});
        let errs = schema_errors(FileKind::Character, &v);
        assert_eq!(errs[0].0, "/id");
        assert!(
            errs[0].1.contains("slug") && errs[0].1.contains("中文"),
            "{errs:?}"
        );
    }

    #[test]
    fn bom_is_tolerated() {
        let v = parse_json("\u{feff}{\"a\": 1}").unwrap();
        assert_eq!(v["a"], 1);
    }
}
