//! The state engine (PRD §9.2; `002` §10.6): check a Summarizer delta op by op, apply the
//! accepted ops to `current-state.json` and merge `foreshadow` ops into
//! `foreshadowing/global.json`, produce the one changelog line that records what was actually
//! applied, and replay the changelog to rebuild either file or to see the state at any chapter.
//!
//! Pure: values in, values out. Apply and replay share [`apply_op`], so a rebuild always
//! reproduces what was applied; the changelog is kept in chapter order, so the state after
//! chapter N is the replay of a prefix of it.
//!
//! Layer: rules — checks and decisions over the model (judging, ops, validation, the gate,
//! revisions, import); below the loop.

use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::{Map, Value, json};

use crate::diagnostic::{Diagnostic, Severity};
use crate::model::common::{ForeshadowScope, ForeshadowStatus, is_slug};
use crate::model::foreshadowing::{ForeshadowEvent, Foreshadowing, PlannedForeshadowing};
use crate::model::state::{
    ChangeSource, ChangelogEntry, CurrentState, OpKind, RejectedOp, StateOp,
};
use crate::model::{Extra, ForeshadowingGlobal};

/// The first segment of a non-foreshadow path (§10.6).
pub const ROOTS: [&str; 6] = [
    "characters",
    "items",
    "locations",
    "factions",
    "world_state",
    "active_foreshadowing",
];

/// Why a whole delta (not one op) cannot be used.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum OpsError {
    #[error("状态增量的格式不对：{pointer} {message}")]
    Delta { pointer: String, message: String },
    #[error("状态版本不符：增量基于 state_version {base}，当前为 {current}")]
    StateVersion { base: u64, current: u64 },
    #[error("严格模式：{rejected} 条 op 被拒绝，整个增量未应用")]
    Strict { rejected: usize },
    #[error("变更日志第 {line} 行无法回放：{message}")]
    Replay { line: usize, message: String },
    #[error("增量属于第 {chapter} 章，但状态已更新到第 {last} 章：不能把更早章节的增量接在后面")]
    ChapterOrder { chapter: u32, last: u32 },
    /// A chapter past the book's next one: its line would hold back every real chapter after
    /// it (the changelog stays in chapter order).
    #[error("第 {chapter} 章还没写到（这本书的下一章是第 {next} 章）：不能先记录它的状态变更")]
    ChapterAhead {
        chapter: u32,
        next: u32,
        recorded: u32,
    },
    #[error("状态增量的格式不对：/storyline_id 故事线「{id}」不在 storylines/storylines.json 中")]
    UnknownStoryline { id: String, known: Vec<String> },
    #[error("状态文件（state_version {state}）与变更日志（最后记录到 {logged}）不一致")]
    Diverged { state: u64, logged: u64 },
    #[error("变更日志已记录到第 {last} 章，不能再记录第 {chapter} 章的增量被跳过")]
    SkipOrder { chapter: u32, last: u32 },
    #[error("第 {chapter} 章不在被跳过的章节里，不能记为已补")]
    NotSkipped { chapter: u32, open: Vec<u32> },
    /// The same ops for the same chapter are on a changelog line already: merging them again
    /// would repeat every `add` and `inc` (an item held twice) while the state still replays.
    #[error("这份增量已经合并过：变更日志第 {line} 行（第 {chapter} 章）记着完全相同的 op")]
    Repeated { chapter: u32, line: usize },
}

impl OpsError {
    pub fn code(&self) -> &'static str {
        match self {
            OpsError::Delta { .. } => "E_DELTA",
            OpsError::StateVersion { .. } => "E_STATE_VERSION",
            OpsError::Strict { .. } => "E_STRICT",
            OpsError::Replay { .. } => "E_REPLAY",
            OpsError::ChapterOrder { .. } => "E_CHAPTER_ORDER",
            OpsError::ChapterAhead { .. } => "E_CHAPTER_AHEAD",
            OpsError::UnknownStoryline { .. } => "E_DELTA",
            OpsError::Diverged { .. } => "E_STATE_DIVERGED",
            OpsError::SkipOrder { .. } => "E_CHAPTER_ORDER",
            OpsError::NotSkipped { .. } => "E_NOT_SKIPPED",
            OpsError::Repeated { .. } => "E_DELTA_REPEATED",
        }
    }

    pub fn hint(&self) -> String {
        match self {
            OpsError::Delta { .. } => {
                "增量需要 chapter（整数）、base_state_version（整数）、storyline_id（slug）和 ops（数组）".into()
            }
            OpsError::StateVersion { .. } => {
                "让摘要员以当前 state_version 重新生成增量；若状态文件本身有问题，运行 novel state rebuild".into()
            }
            OpsError::Strict { .. } => "按 rejected 列表修正这些 op 后重试，或去掉 --strict".into(),
            OpsError::Replay { .. } => {
                "变更日志与状态不一致：检查该行，或从备份恢复 state/changelog.jsonl".into()
            }
            OpsError::ChapterOrder { chapter, last } => format!(
                "改写第 {chapter} 章请先 novel state rebuild --until-chapter {} --write 回退，再按章节顺序重新应用；手动修正请把 chapter 写成 {last} 或更晚",
                chapter.saturating_sub(1)
            ),
            OpsError::ChapterAhead { next, recorded, .. } => format!(
                "把 chapter 写成下一章（第 {next} 章）或变更日志已记录到的那一章（第 {recorded} 章）；还没写到的章节不能先记状态"
            ),
            OpsError::UnknownStoryline { known, .. } if known.is_empty() => {
                "storylines/storylines.json 里还没有任何故事线：先在其中登记，再应用增量".into()
            }
            OpsError::UnknownStoryline { known, .. } => {
                format!("storyline_id 应为已登记的故事线之一：{}", known.join("、"))
            }
            OpsError::Diverged { .. } => {
                "先运行 novel state rebuild 查看差异，确认后 novel state rebuild --write".into()
            }
            OpsError::SkipOrder { .. } => {
                "只能为正在写的章节记录跳过；已过去的章节要补记状态，用 novel ops apply --manual --resolves-skipped".into()
            }
            OpsError::Repeated { .. } => {
                "不要再合并它：状态里已经有这些变化。要改状态，另写一份只含改动的增量（novel state at 查看现状）".into()
            }
            OpsError::NotSkipped { open, .. } => format!(
                "目前被跳过、尚未补记的章节：{}",
                if open.is_empty() {
                    "无".to_string()
                } else {
                    open.iter()
                        .map(u32::to_string)
                        .collect::<Vec<_>>()
                        .join("、")
                }
            ),
        }
    }
}

/// The changelog line (1-based) that already records exactly `ops` for `chapter`, if any: a
/// delta merged a second time (re-based on the new version, or written again from the same
/// notes) would repeat each `add` and `inc`, and nothing downstream could tell.
pub fn repeated_line(log: &[ChangelogEntry], chapter: u32, ops: &[StateOp]) -> Option<usize> {
    if ops.is_empty() {
        return None;
    }
    log.iter()
        .position(|e| e.chapter == chapter && e.applied == ops)
        .map(|i| i + 1)
}

/// Display names and aliases → slug, so a Chinese name in a path gets a useful hint.
#[derive(Debug, Clone, Default)]
pub struct NameIndex {
    names: BTreeMap<String, String>,
}

impl NameIndex {
    pub fn insert(&mut self, name: &str, slug: &str) {
        self.names.insert(name.to_string(), slug.to_string());
    }

    pub fn slug_for(&self, name: &str) -> Option<&str> {
        self.names.get(name).map(String::as_str)
    }

    /// (display name or alias, slug) pairs, sorted by name.
    pub fn pairs(&self) -> impl Iterator<Item = (&str, &str)> {
        self.names.iter().map(|(n, s)| (n.as_str(), s.as_str()))
    }
}

/// Refuses a delta whose `storyline_id` is not one of the project's storylines (`known`, from
/// `storylines/storylines.json`): the engine must not write a changelog line `novel validate`
/// would then reject.
pub fn check_storyline(storyline_id: &str, known: &[String]) -> Result<(), OpsError> {
    if known.iter().any(|k| k == storyline_id) {
        return Ok(());
    }
    Err(OpsError::UnknownStoryline {
        id: storyline_id.to_string(),
        known: known.to_vec(),
    })
}

/// The one answer to "would this delta apply?", given by [`check_delta`] and used by every
/// place that asks: `novel ops validate`, `novel ops apply`, the chapter commit, `novel
/// validate` (staged deltas) and the guard hook. [`apply_checked`] applies exactly what it
/// accepts, so a delta `ops validate` passes is never refused by `apply`.
#[derive(Debug, Clone)]
pub struct DeltaCheck {
    pub run: DeltaRun,
    /// The state's `state_version` the delta must be based on.
    pub current_version: u64,
    pub version_ok: bool,
    /// The chapter a new changelog line may not go below: the later of the state's
    /// `last_updated_chapter` and the changelog's last line (a skipped chapter's line moves
    /// only the changelog, §10.6).
    pub last_chapter: u32,
    pub chapter_order_ok: bool,
    /// The changelog's last `state_version` (0 when it is empty).
    pub logged_version: u64,
    /// The book's next chapter (the checkpoint's last completed + 1), when known: a delta may
    /// not be for a later chapter than that (or than the last one recorded).
    pub next_chapter: Option<u32>,
    pub chapter_ahead_ok: bool,
    /// The state file is the one its changelog replays to (`state_version` equal).
    pub in_step: bool,
}

impl DeltaCheck {
    /// Everything that keeps `apply` from taking the delta as written, as findings of `file`
    /// (rejected ops at `/ops/<i>` with their fix hints, then the version and the order).
    pub fn findings(&self, file: &str) -> Vec<Diagnostic> {
        let error = |pointer: &str, code: &'static str, message: String, hint: String| {
            Diagnostic::new(code, Severity::Error, file, message, hint).at_pointer(pointer)
        };
        let mut out: Vec<Diagnostic> = self
            .run
            .rejected
            .iter()
            .map(|r| {
                error(
                    &format!("/ops/{}", r.index),
                    r.code,
                    r.reason.clone(),
                    r.hint.clone(),
                )
            })
            .collect();
        for e in self.refusals() {
            let (pointer, hint) = match &e {
                OpsError::StateVersion { current, .. } => (
                    "/base_state_version",
                    format!("base_state_version 应为 {current}"),
                ),
                OpsError::ChapterOrder { .. } | OpsError::ChapterAhead { .. } => {
                    ("/chapter", e.hint())
                }
                _ => ("", e.hint()),
            };
            out.push(error(pointer, e.code(), e.to_string(), hint));
        }
        out
    }

    /// Every reason the delta as a whole does not apply, whatever `--strict` says: the state
    /// out of step with its changelog, the version, the chapter order — in the order
    /// [`refusal`](Self::refusal) weighs them.
    pub fn refusals(&self) -> Vec<OpsError> {
        let mut out = Vec::new();
        if !self.in_step {
            out.push(OpsError::Diverged {
                state: self.current_version,
                logged: self.logged_version,
            });
        }
        if !self.version_ok {
            out.push(OpsError::StateVersion {
                base: self.run.header.base_state_version,
                current: self.current_version,
            });
        }
        if !self.chapter_order_ok {
            out.push(OpsError::ChapterOrder {
                chapter: self.run.header.chapter,
                last: self.last_chapter,
            });
        }
        if !self.chapter_ahead_ok {
            out.push(OpsError::ChapterAhead {
                chapter: self.run.header.chapter,
                next: self.next_chapter.unwrap_or(0),
                recorded: self.last_chapter,
            });
        }
        out
    }

    /// Why `apply` refuses the delta as a whole, first reason first (the state out of step
    /// with its changelog, the version, `strict` with rejected ops, the chapter order); `None`
    /// when it applies. (Every op rejected is not a refusal here: `ops apply` then writes
    /// nothing, the commit records the rejections.)
    pub fn refusal(&self, strict: bool) -> Option<OpsError> {
        let strict_refusal =
            (strict && !self.run.rejected.is_empty()).then_some(OpsError::Strict {
                rejected: self.run.rejected.len(),
            });
        match self.refusals().into_iter().next() {
            // `--strict` weighs before the order, after the state and the version.
            Some(OpsError::ChapterOrder { .. } | OpsError::ChapterAhead { .. })
                if strict_refusal.is_some() =>
            {
                strict_refusal
            }
            Some(e) => Some(e),
            None => strict_refusal,
        }
    }
}

/// The chapter a new changelog line may not go below, and the changelog's last version: from
/// the state and the changelog's last line (`None`: empty changelog).
pub fn log_position(state: &Value, log_last: Option<&ChangelogEntry>) -> (u32, u64) {
    let last = last_updated_chapter(state).max(log_last.map_or(0, |e| e.chapter));
    (last, log_last.map_or(0, |e| e.state_version))
}

/// Whether a new changelog line may be for `chapter`: not past the book's next chapter
/// (`next_chapter`, when known) unless the changelog already records that far (`last`).
pub fn chapter_not_ahead(chapter: u32, last: u32, next_chapter: Option<u32>) -> bool {
    next_chapter.is_none_or(|next| chapter <= next.max(last))
}

/// The state and its changelog agree (`state_version` equal to the last line's): nothing may
/// be appended otherwise.
pub fn check_in_step(state: &Value, log_last: Option<&ChangelogEntry>) -> Result<(), OpsError> {
    let (_, logged) = log_position(state, log_last);
    let current = state_version(state);
    if current != logged {
        return Err(OpsError::Diverged {
            state: current,
            logged,
        });
    }
    Ok(())
}

/// Runs `delta` against the state (nothing written) and checks everything `apply` checks:
/// the storyline is known, the state is in step with its changelog (`log_last`, the
/// changelog's last line), the delta is based on the current state version, and its chapter
/// is not before the state's or the changelog's last chapter, nor after the book's next one
/// (`next_chapter`, when known). See [`DeltaCheck`].
/// The state is the caller's to give up: a writer moves it into the run, a reader passes a copy.
pub fn check_delta(
    state: Value,
    global: &ForeshadowingGlobal,
    delta: &Value,
    ctx: Context<'_>,
    storylines: &[String],
    log_last: Option<&ChangelogEntry>,
    next_chapter: Option<u32>,
) -> Result<DeltaCheck, OpsError> {
    let current_version = state_version(&state);
    let (last_chapter, logged_version) = log_position(&state, log_last);
    let run = run_delta_owned(state, global, delta, ctx)?;
    check_storyline(&run.header.storyline_id, storylines)?;
    Ok(DeltaCheck {
        version_ok: run.header.base_state_version == current_version,
        chapter_order_ok: run.header.chapter >= last_chapter,
        chapter_ahead_ok: chapter_not_ahead(run.header.chapter, last_chapter, next_chapter),
        next_chapter,
        in_step: current_version == logged_version,
        current_version,
        last_chapter,
        logged_version,
        run,
    })
}

/// Applies a checked delta: refused for exactly the [`DeltaCheck::refusal`] reasons, else the
/// new state, foreshadowing and changelog line (as [`apply_delta`] makes them).
pub fn apply_checked(
    check: DeltaCheck,
    strict: bool,
    timestamp: &str,
) -> Result<Applied, OpsError> {
    if let Some(e) = check.refusal(strict) {
        return Err(e);
    }
    Ok(record(check.run, check.current_version, timestamp))
}

/// Up to `limit` of `candidates` closest to `query` (edit distance in characters, at most a
/// quarter of the longer string, or one contains the other; ties by code point), for "did you
/// mean" hints.
pub fn closest<'c>(query: &str, candidates: &'c [String], limit: usize) -> Vec<&'c str> {
    let q: Vec<char> = query.chars().collect();
    let mut scored: Vec<(usize, &str)> = candidates
        .iter()
        .filter_map(|c| {
            let cs: Vec<char> = c.chars().collect();
            let d = edit_distance(&q, &cs);
            let contains = !query.is_empty() && (c.contains(query) || query.contains(c.as_str()));
            (d <= q.len().max(cs.len()).div_ceil(4) || contains).then_some((d, c.as_str()))
        })
        .collect();
    scored.sort();
    scored.dedup_by(|a, b| a.1 == b.1);
    scored.into_iter().take(limit).map(|(_, c)| c).collect()
}

fn edit_distance(a: &[char], b: &[char]) -> usize {
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.iter().enumerate() {
        let mut diag = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let next = (diag + usize::from(ca != cb))
                .min(row[j] + 1)
                .min(row[j + 1] + 1);
            diag = row[j + 1];
            row[j + 1] = next;
        }
    }
    row[b.len()]
}

/// An op that was not applied, with a reason and a fix hint for the Summarizer.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Rejection {
    pub index: usize,
    pub op: Value,
    pub code: &'static str,
    pub reason: String,
    pub hint: String,
}

/// An op that was (or would be) applied, with a note when it changed nothing.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Accepted {
    pub index: usize,
    pub op: StateOp,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// The envelope of a delta.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DeltaHeader {
    pub chapter: u32,
    pub base_state_version: u64,
    pub storyline_id: String,
}

/// The result of running a delta against a state (nothing written).
#[derive(Debug, Clone)]
pub struct DeltaRun {
    pub header: DeltaHeader,
    pub state: Value,
    pub global: ForeshadowingGlobal,
    pub accepted: Vec<Accepted>,
    pub rejected: Vec<Rejection>,
    /// `004`: the delta's `character_actions`, as written (none when absent or empty). The
    /// changelog line keeps them so per-character memory can be made again from it.
    pub character_actions: Option<Value>,
}

impl DeltaRun {
    /// Every op rejected: applying it would change nothing, so `ops apply` writes nothing (a
    /// new version would only say otherwise). A chapter commit still records the rejections.
    pub fn all_rejected(&self) -> bool {
        self.accepted.is_empty() && !self.rejected.is_empty()
    }
}

/// The changelog key (and delta key) of a chapter's character actions (`004`).
pub const CHARACTER_ACTIONS: &str = "character_actions";

/// Everything an op may consult besides the state and the foreshadowing file.
#[derive(Debug, Clone, Copy)]
pub struct Context<'a> {
    pub names: &'a NameIndex,
    /// Planned threads of the volume plans, to seed ids the merge creates.
    pub plan: &'a [PlannedForeshadowing],
}

fn header(delta: &Value) -> Result<(DeltaHeader, &Vec<Value>), OpsError> {
    let bad = |pointer: &str, message: &str| OpsError::Delta {
        pointer: pointer.to_string(),
        message: message.to_string(),
    };
    let obj = delta.as_object().ok_or_else(|| bad("", "应为 JSON 对象"))?;
    let chapter = obj
        .get("chapter")
        .and_then(Value::as_u64)
        .and_then(|n| u32::try_from(n).ok())
        .ok_or_else(|| bad("/chapter", "缺失或不是非负整数"))?;
    if chapter > crate::model::common::MAX_CHAPTER {
        return Err(bad(
            "/chapter",
            &format!(
                "章节号 {chapter} 超出上限 {}",
                crate::model::common::MAX_CHAPTER
            ),
        ));
    }
    let base = obj
        .get("base_state_version")
        .and_then(Value::as_u64)
        .ok_or_else(|| bad("/base_state_version", "缺失或不是非负整数"))?;
    let storyline_id = obj
        .get("storyline_id")
        .and_then(Value::as_str)
        .ok_or_else(|| bad("/storyline_id", "缺失或不是字符串"))?;
    if !is_slug(storyline_id) {
        return Err(bad("/storyline_id", "不是 slug（如 main_arc）"));
    }
    let ops = obj
        .get("ops")
        .and_then(Value::as_array)
        .ok_or_else(|| bad("/ops", "缺失或不是数组"))?;
    Ok((
        DeltaHeader {
            chapter,
            base_state_version: base,
            storyline_id: storyline_id.to_string(),
        },
        ops,
    ))
}

/// Runs every op of `delta` in order against `state` and `global`: each op is checked against
/// the state as the ops before it left it. Rejected ops change nothing.
pub fn run_delta(
    state: &Value,
    global: &ForeshadowingGlobal,
    delta: &Value,
    ctx: Context<'_>,
) -> Result<DeltaRun, OpsError> {
    run_delta_owned(state.clone(), global, delta, ctx)
}

/// [`run_delta`] on a state the caller gives up: no copy of it is made.
pub fn run_delta_owned(
    mut state: Value,
    global: &ForeshadowingGlobal,
    delta: &Value,
    ctx: Context<'_>,
) -> Result<DeltaRun, OpsError> {
    let (header, ops) = header(delta)?;
    let mut global = global.clone();
    let mut accepted = Vec::new();
    let mut rejected = Vec::new();
    for (index, raw) in ops.iter().enumerate() {
        let reject = |code, reason: String, hint: String| Rejection {
            index,
            op: raw.clone(),
            code,
            reason,
            hint,
        };
        let op = match parse_op(raw, ctx.names) {
            Ok(op) => op,
            Err((code, reason, hint)) => {
                rejected.push(reject(code, reason, hint));
                continue;
            }
        };
        // Chapter 0 is the state before the book starts (a `--manual` delta); a thread's
        // history counts chapters from 1.
        if op.op == OpKind::Foreshadow && header.chapter == 0 {
            rejected.push(reject(
                "E_FORESHADOW_CHAPTER",
                format!("第 0 章（开书前的初始状态）不能记录伏笔 {} 的进展", op.path),
                "伏笔在正文章节里埋设、推进、回收；开书前就有的伏笔写进卷伏笔计划或 foreshadowing/global.json".into(),
            ));
            continue;
        }
        match apply_op(
            &mut state,
            &mut global,
            &op,
            header.chapter,
            &header.storyline_id,
            ctx,
        ) {
            Ok(note) => accepted.push(Accepted { index, op, note }),
            Err((code, reason, hint)) => rejected.push(reject(code, reason, hint)),
        }
    }
    Ok(DeltaRun {
        header,
        state,
        global,
        accepted,
        rejected,
        character_actions: delta
            .get(CHARACTER_ACTIONS)
            .filter(|v| v.as_array().is_some_and(|a| !a.is_empty()))
            .cloned(),
    })
}

type OpFailure = (&'static str, String, String);

fn op_name(kind: OpKind) -> &'static str {
    match kind {
        OpKind::Set => "set",
        OpKind::Inc => "inc",
        OpKind::Add => "add",
        OpKind::Remove => "remove",
        OpKind::Foreshadow => "foreshadow",
    }
}

/// Checks the shape of one op (everything that does not depend on the state).
pub fn parse_op(raw: &Value, names: &NameIndex) -> Result<StateOp, OpFailure> {
    let Some(obj) = raw.as_object() else {
        return Err((
            "E_OP_SHAPE",
            "op 不是 JSON 对象".into(),
            "每个 op 形如 {\"op\":\"set\",\"path\":\"characters.lin-feng.location\",\"value\":\"…\"}".into(),
        ));
    };
    let kind = parse_kind(obj.get("op"))?;
    let Some(path) = obj.get("path").and_then(Value::as_str) else {
        return Err((
            "E_OP_PATH",
            "缺少 path 或 path 不是字符串".into(),
            "path 是点分路径，如 characters.lin-feng.location".into(),
        ));
    };
    let value = obj.get("value").cloned();
    let detail = parse_detail(obj.get("detail"))?;
    let value = if kind == OpKind::Foreshadow {
        check_foreshadow_id(path)?;
        foreshadow_status(value)?
    } else {
        check_state_path(path, names)?;
        state_value(kind, value)?
    };
    Ok(StateOp {
        op: kind,
        path: path.to_string(),
        value,
        detail,
        extra: Extra::new(),
    })
}

fn parse_kind(op: Option<&Value>) -> Result<OpKind, OpFailure> {
    match op.and_then(Value::as_str) {
        Some("set") => Ok(OpKind::Set),
        Some("inc") => Ok(OpKind::Inc),
        Some("add") => Ok(OpKind::Add),
        Some("remove") => Ok(OpKind::Remove),
        Some("foreshadow") => Ok(OpKind::Foreshadow),
        other => Err((
            "E_OP_KIND",
            format!(
                "op 「{}」不是合法操作",
                other.map_or("（缺失）".to_string(), str::to_string)
            ),
            "op 只能是 set、inc、add、remove、foreshadow 之一".into(),
        )),
    }
}

/// `detail`: absent, null or a string.
fn parse_detail(detail: Option<&Value>) -> Result<Option<String>, OpFailure> {
    match detail {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(_) => Err((
            "E_OP_DETAIL",
            "detail 不是字符串".into(),
            "detail 写一句中文说明，如「主角梦见预言碎片」".into(),
        )),
    }
}

/// A foreshadow op's path is one thread id, a slug.
fn check_foreshadow_id(path: &str) -> Result<(), OpFailure> {
    if is_slug(path) {
        return Ok(());
    }
    let hint = if path.contains('.') {
        "foreshadow 的 path 是单个伏笔 id（如 ancient_prophecy），不带层级".to_string()
    } else {
        "伏笔 id 用 slug（小写英文、数字、- 或 _），如 ancient_prophecy".to_string()
    };
    Err(("E_FORESHADOW_ID", format!("伏笔 id「{path}」不合法"), hint))
}

/// A foreshadow op's value is `planted`, `advanced` or `resolved`.
fn foreshadow_status(value: Option<Value>) -> Result<Value, OpFailure> {
    match value.as_ref().and_then(Value::as_str) {
        Some("planted") | Some("advanced") | Some("resolved") => Ok(value.unwrap_or_default()),
        _ => Err((
            "E_FORESHADOW_VALUE",
            format!(
                "foreshadow 的 value 为 {}，不是 planted/advanced/resolved",
                value
                    .as_ref()
                    .map_or("（缺失）".to_string(), Value::to_string)
            ),
            "value 写 planted（埋设）、advanced（推进）或 resolved（回收）".into(),
        )),
    }
}

/// A state path: 2–4 segments, a known root, then slugs (a display name gets its slug as hint).
fn check_state_path(path: &str, names: &NameIndex) -> Result<(), OpFailure> {
    let segments: Vec<&str> = path.split('.').collect();
    if !(2..=4).contains(&segments.len()) {
        return Err((
            "E_OP_PATH_DEPTH",
            format!("path「{path}」有 {} 段，应为 2–4 段", segments.len()),
            "如 characters.lin-feng.location 或 characters.lin-feng.relationships.chen-lao".into(),
        ));
    }
    if !ROOTS.contains(&segments[0]) {
        return Err((
            "E_OP_ROOT",
            format!("path 的第一段「{}」不在允许范围内", segments[0]),
            format!("第一段只能是 {}", ROOTS.join("、")),
        ));
    }
    match segments[1..].iter().find(|seg| !is_slug(seg)) {
        Some(seg) => Err((
            "E_OP_SEGMENT",
            format!("path「{path}」中的「{seg}」不是 slug"),
            segment_hint(seg, names),
        )),
        None => Ok(()),
    }
}

/// Whether checking `delta` consults the character names: only to give the slug of a path
/// segment that is not one ([`parse_op`]). A delta whose paths are all slugs is checked
/// alike without them, so the guard hook and the commit need not read every character file.
pub fn needs_names(delta: &Value) -> bool {
    let ops = delta.get("ops").and_then(Value::as_array);
    ops.into_iter().flatten().any(|op| {
        op.get("path")
            .and_then(Value::as_str)
            .is_some_and(|p| p.split('.').any(|seg| !is_slug(seg)))
    })
}

fn segment_hint(seg: &str, names: &NameIndex) -> String {
    match names.slug_for(seg) {
        Some(slug) => format!("「{seg}」是显示名，path 里应写 slug「{slug}」"),
        None if !seg.is_ascii() => {
            format!("「{seg}」像是中文显示名：path 里只能用实体的 slug（如 lin-feng）")
        }
        None => "每段只能用小写英文字母、数字和 - / _（如 lin-feng）".to_string(),
    }
}

/// A state op needs a value; `inc` a finite number.
fn state_value(kind: OpKind, value: Option<Value>) -> Result<Value, OpFailure> {
    let Some(value) = value else {
        return Err((
            "E_OP_VALUE",
            format!("{} op 缺少 value", op_name(kind)),
            "补上 value".into(),
        ));
    };
    if kind == OpKind::Inc && !value.as_f64().is_some_and(f64::is_finite) {
        return Err((
            "E_OP_INC_VALUE",
            format!("inc 的 value 为 {value}，不是有限数字"),
            "inc 的 value 写数字增量，如 10 或 -5".into(),
        ));
    }
    Ok(value)
}

/// Applies one parsed op. On error nothing was changed.
pub fn apply_op(
    state: &mut Value,
    global: &mut ForeshadowingGlobal,
    op: &StateOp,
    chapter: u32,
    storyline: &str,
    ctx: Context<'_>,
) -> Result<Option<String>, OpFailure> {
    if op.op == OpKind::Foreshadow {
        return apply_foreshadow(state, global, op, chapter, storyline, ctx);
    }
    if !state.is_object() {
        return Err((
            "E_STATE_SHAPE",
            "当前状态不是 JSON 对象".into(),
            "运行 novel validate 检查 state/current-state.json".into(),
        ));
    }
    let segments: Vec<&str> = op.path.split('.').collect();
    let Some((last, parents)) = segments.split_last() else {
        return Err(("E_OP_PATH", "path 为空".into(), "写出完整路径".into()));
    };
    check_parents(state, &segments, &op.path)?;
    // Decide first, mutate after: a rejected op never changes the state.
    let current = parents
        .iter()
        .try_fold(&*state, |v, seg| v.get(seg))
        .and_then(|p| p.get(last));
    let change = match op.op {
        OpKind::Set => Change::Put(op.value.clone()),
        OpKind::Inc => inc_change(op, current)?,
        OpKind::Add => add_change(op, current)?,
        OpKind::Remove => remove_change(op, current)?,
        OpKind::Foreshadow => return Err(not_a_state_path(op)),
    };
    if let Change::Nothing(note) = change {
        return Ok(Some(note));
    }
    write_change(state, parents, last, change, &op.path)?;
    Ok(None)
}

/// A `foreshadow` op: merged into the foreshadowing file, and mirrored in the state's
/// `active_foreshadowing`.
fn apply_foreshadow(
    state: &mut Value,
    global: &mut ForeshadowingGlobal,
    op: &StateOp,
    chapter: u32,
    storyline: &str,
    ctx: Context<'_>,
) -> Result<Option<String>, OpFailure> {
    let Some(status) = status_of(&op.value) else {
        return Err((
            "E_FORESHADOW_VALUE",
            "foreshadow 的 value 不合法".into(),
            "planted/advanced/resolved".into(),
        ));
    };
    let (effective, note) = merge_foreshadow(
        global,
        ctx.plan,
        &op.path,
        status,
        chapter,
        storyline,
        op.detail.as_deref(),
    );
    track_active(state, &op.path, effective);
    Ok(note)
}

/// `apply_op` sends foreshadow ops to [`apply_foreshadow`]; one never reaches a state path.
fn not_a_state_path(op: &StateOp) -> OpFailure {
    (
        "E_OP_KIND",
        format!("foreshadow op 不能写入状态路径 {}", op.path),
        "foreshadow 只更新伏笔记录".into(),
    )
}

/// Every intermediate segment of the path that exists must be an object (the missing ones are
/// created when the op is written).
fn check_parents(state: &Value, segments: &[&str], path: &str) -> Result<(), OpFailure> {
    let parents = &segments[..segments.len().saturating_sub(1)];
    let mut probe: &Value = state;
    for (i, seg) in parents.iter().enumerate() {
        match probe.get(seg) {
            None => break,
            Some(v) if v.is_object() => probe = v,
            Some(v) => {
                let at = segments[..=i].join(".");
                return Err((
                    "E_OP_TYPE_CONFLICT",
                    format!("「{at}」当前是 {}，不是对象，无法写入 {path}", kind_zh(v)),
                    "检查 path 是否写错层级".into(),
                ));
            }
        }
    }
    Ok(())
}

/// What an accepted path op does to the value at its path.
enum Change {
    Put(Value),
    Push(Value),
    RemoveAt(usize),
    /// Nothing to do, with the note that says so.
    Nothing(String),
}

/// `inc`: the current number (missing or null counts as 0) plus the op's value.
fn inc_change(op: &StateOp, current: Option<&Value>) -> Result<Change, OpFailure> {
    let previous = match current {
        None | Some(Value::Null) => None,
        Some(Value::Number(n)) => Some(n),
        Some(v) => {
            return Err((
                "E_OP_TYPE_CONFLICT",
                format!("inc 的目标 {} 当前是 {}，不是数字", op.path, kind_zh(v)),
                "对非数字字段请用 set".into(),
            ));
        }
    };
    // JSON has no infinity, and an integer past i64/u64 would silently become a float.
    let Some(sum) = inc_number(previous, &op.value) else {
        return Err((
            "E_OP_INC_VALUE",
            format!("inc 之后 {} 的值溢出（超出可表示的数字范围）", op.path),
            "检查增量是否写错数量级；确需大数请用 set 写入具体值".into(),
        ));
    };
    Ok(Change::Put(sum))
}

/// `add`: append to the array, or start one.
fn add_change(op: &StateOp, current: Option<&Value>) -> Result<Change, OpFailure> {
    match current {
        None | Some(Value::Null) => Ok(Change::Put(Value::Array(vec![op.value.clone()]))),
        Some(Value::Array(_)) => Ok(Change::Push(op.value.clone())),
        Some(v) => Err((
            "E_OP_NOT_ARRAY",
            format!("add 的目标 {} 当前是 {}，不是数组", op.path, kind_zh(v)),
            "add/remove 只用于数组字段（如 inventory）；单值字段用 set".into(),
        )),
    }
}

/// `remove`: the first equal element of the array; a missing array or element is a note.
fn remove_change(op: &StateOp, current: Option<&Value>) -> Result<Change, OpFailure> {
    match current {
        None | Some(Value::Null) => Ok(Change::Nothing(format!(
            "{} 不存在，remove 没有可删除的元素",
            op.path
        ))),
        Some(Value::Array(items)) => Ok(match items.iter().position(|x| *x == op.value) {
            Some(pos) => Change::RemoveAt(pos),
            None => Change::Nothing(format!(
                "{} 中没有与 {} 相等的元素，未删除任何内容",
                op.path, op.value
            )),
        }),
        Some(v) => Err((
            "E_OP_NOT_ARRAY",
            format!("remove 的目标 {} 当前是 {}，不是数组", op.path, kind_zh(v)),
            "add/remove 只用于数组字段；单值字段用 set".into(),
        )),
    }
}

/// Writes a decided change, creating the missing intermediate objects. The checks before
/// (the state and every existing parent are objects) make the error unreachable.
fn write_change(
    state: &mut Value,
    parents: &[&str],
    last: &str,
    change: Change,
    path: &str,
) -> Result<(), OpFailure> {
    let not_object = || {
        (
            "E_OP_TYPE_CONFLICT",
            format!("{path} 的上层不是对象，无法写入"),
            "检查 path 是否写错层级".to_string(),
        )
    };
    let mut target = state;
    for seg in parents {
        let obj = target.as_object_mut().ok_or_else(not_object)?;
        target = obj
            .entry((*seg).to_string())
            .or_insert_with(|| Value::Object(Map::new()));
    }
    let parent = target.as_object_mut().ok_or_else(not_object)?;
    match change {
        Change::Put(v) => {
            parent.insert(last.to_string(), v);
        }
        Change::Push(v) => {
            if let Some(Value::Array(items)) = parent.get_mut(last) {
                items.push(v);
            }
        }
        Change::RemoveAt(pos) => {
            if let Some(Value::Array(items)) = parent.get_mut(last) {
                items.remove(pos);
            }
        }
        Change::Nothing(_) => {}
    }
    Ok(())
}

/// Removes a whole entity (`characters.<slug>`: exactly two segments, a known root) — the one
/// op of a `source: retire` changelog line (`003` §8.5) and the ops of a volume-end cleanup
/// line (`cleanup_volume`). Deltas cannot do this; only a retirement or a confirmed cleanup
/// can, and replay uses this same function. Removing an absent entity is a no-op.
pub fn remove_entity(state: &mut Value, op: &StateOp) -> Result<bool, OpFailure> {
    let segments: Vec<&str> = op.path.split('.').collect();
    let [root, slug] = segments.as_slice() else {
        return Err((
            "E_RETIRE_PATH",
            format!(
                "整条目移除（退场或卷末清理）的 path「{}」应为两段（如 characters.lin-feng）",
                op.path
            ),
            "退场与卷末清理只移除整个条目".into(),
        ));
    };
    if op.op != OpKind::Remove || !ROOTS.contains(root) || !is_slug(slug) {
        return Err((
            "E_RETIRE_PATH",
            format!(
                "整条目移除（退场或卷末清理）的 op 应为 remove 且 path 为 <根>.<slug>，实为 {} {}",
                op_name(op.op),
                op.path
            ),
            "退场与卷末清理只移除整个条目".into(),
        ));
    }
    Ok(state
        .get_mut(*root)
        .and_then(Value::as_object_mut)
        .and_then(|m| m.shift_remove(*slug))
        .is_some())
}

/// Keeps integers integers: 3 + 2 is `5`, not `5.0`.
/// `current + by`: exact integer arithmetic when both are integers (`None` past the range of
/// i64/u64), otherwise a float (`None` when not finite). A missing value counts as 0.
fn inc_number(current: Option<&serde_json::Number>, by: &Value) -> Option<Value> {
    let int = |n: &serde_json::Number| {
        n.as_i64()
            .map(i128::from)
            .or_else(|| n.as_u64().map(i128::from))
    };
    let Value::Number(by_n) = by else {
        return None;
    };
    if let (Some(b), Some(c)) = (int(by_n), current.map_or(Some(0), int)) {
        let sum = c + b; // both fit in 65 bits: no i128 overflow
        return i64::try_from(sum)
            .map(Value::from)
            .ok()
            .or_else(|| u64::try_from(sum).ok().map(Value::from));
    }
    let sum = current.map_or(0.0, |n| n.as_f64().unwrap_or(0.0)) + by_n.as_f64()?;
    sum.is_finite().then(|| json!(sum))
}

fn kind_zh(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "布尔值",
        Value::Number(_) => "数字",
        Value::String(_) => "字符串",
        Value::Array(_) => "数组",
        Value::Object(_) => "对象",
    }
}

/// Keeps `active_foreshadowing` in the state in step with the thread's effective status.
fn track_active(state: &mut Value, id: &str, status: ForeshadowStatus) {
    let Some(obj) = state.as_object_mut() else {
        return;
    };
    let active = obj
        .entry("active_foreshadowing")
        .or_insert_with(|| Value::Array(Vec::new()));
    let open = status != ForeshadowStatus::Resolved;
    match active {
        Value::Array(ids) => {
            let pos = ids.iter().position(|x| x.as_str() == Some(id));
            match (open, pos) {
                (true, None) => ids.push(Value::String(id.to_string())),
                (false, Some(p)) => {
                    ids.remove(p);
                }
                _ => {}
            }
        }
        Value::Object(map) => {
            if open {
                map.insert(id.to_string(), json!({"status": status_name(status)}));
            } else {
                map.remove(id);
            }
        }
        _ => {}
    }
}

pub fn status_name(s: ForeshadowStatus) -> &'static str {
    match s {
        ForeshadowStatus::Planted => "planted",
        ForeshadowStatus::Advanced => "advanced",
        ForeshadowStatus::Resolved => "resolved",
    }
}

/// Merges one `foreshadow` op: status only moves forward, history is de-duplicated on
/// (chapter, action), `last_updated_chapter` is the max, unknown ids are created (seeded from
/// the volume plan when it has them). A downgrade is a no-op. Returns the thread's status
/// afterwards and, for a downgrade, a note saying so.
pub fn merge_foreshadow(
    global: &mut ForeshadowingGlobal,
    plan: &[PlannedForeshadowing],
    id: &str,
    status: ForeshadowStatus,
    chapter: u32,
    storyline: &str,
    detail: Option<&str>,
) -> (ForeshadowStatus, Option<String>) {
    let pos = match global.foreshadowing.iter().position(|f| f.id == id) {
        Some(p) => p,
        None => {
            global
                .foreshadowing
                .push(seed(plan, id, status, chapter, storyline));
            global.foreshadowing.len() - 1
        }
    };
    let entry = &mut global.foreshadowing[pos];
    if status < entry.status {
        // A downgrade changes nothing: no status, no history event, no last update.
        let note = format!(
            "伏笔 {id} 已是 {}，不回退到 {}（状态只前进，未记入 history）",
            status_name(entry.status),
            status_name(status)
        );
        return (entry.status, Some(note));
    }
    entry.status = status;
    if !entry
        .history
        .iter()
        .any(|h| h.chapter == chapter && h.action == status)
    {
        entry.history.push(ForeshadowEvent {
            chapter,
            action: status,
            detail: detail.map(str::to_string),
            extra: Extra::new(),
        });
    }
    entry.last_updated_chapter = Some(
        entry
            .last_updated_chapter
            .map_or(chapter, |c| c.max(chapter)),
    );
    if entry.planted_chapter.is_none() && status == ForeshadowStatus::Planted {
        entry.planted_chapter = Some(chapter);
    }
    (entry.status, None)
}

/// The `path` of each `foreshadow` op in `delta` (`None` for one without a string path). Shape
/// errors are the delta check's to report; an op that is not an object is not one of these.
fn foreshadow_paths(delta: &Value) -> impl Iterator<Item = Option<&str>> {
    let ops = delta.get("ops").and_then(Value::as_array);
    ops.into_iter()
        .flatten()
        .filter(|op| op.get("op").and_then(Value::as_str) == Some(op_name(OpKind::Foreshadow)))
        .map(|op| op.get("path").and_then(Value::as_str))
}

/// Whether `delta` has a `foreshadow` op — the only ops that read or change
/// `foreshadowing/global.json` ([`apply_op`]); a delta without one is checked and applied the
/// same against any foreshadowing file.
pub fn touches_foreshadowing(delta: &Value) -> bool {
    foreshadow_paths(delta).next().is_some()
}

/// Whether `delta` has a `foreshadow` op on a thread `global` does not hold yet — the only case
/// in which the merge consults the volume plans ([`merge_foreshadow`] seeds the new thread from
/// them). An op with no string `path` seeds nothing.
pub fn seeds_threads(global: &ForeshadowingGlobal, delta: &Value) -> bool {
    foreshadow_paths(delta)
        .flatten()
        .any(|id| !global.foreshadowing.iter().any(|f| f.id == id))
}

fn seed(
    plan: &[PlannedForeshadowing],
    id: &str,
    status: ForeshadowStatus,
    chapter: u32,
    storyline: &str,
) -> Foreshadowing {
    let planned = plan.iter().find(|p| p.id == id);
    Foreshadowing {
        id: id.to_string(),
        description: planned.map(|p| p.description.clone()).unwrap_or_default(),
        scope: planned.map_or(ForeshadowScope::Medium, |p| p.scope),
        status,
        planted_chapter: (status == ForeshadowStatus::Planted).then_some(chapter),
        planted_storyline: Some(
            planned
                .and_then(|p| p.storyline_id.clone())
                .unwrap_or_else(|| storyline.to_string()),
        ),
        target_resolve_range: planned.and_then(|p| p.target_resolve_range),
        last_updated_chapter: Some(chapter),
        history: Vec::new(),
        extra: Extra::new(),
    }
}

/// The outcome of applying a delta: new files and the changelog line.
#[derive(Debug, Clone)]
pub struct Applied {
    pub run: DeltaRun,
    pub entry: ChangelogEntry,
}

/// Applies a delta: refuses on a version mismatch, on a chapter before the state's
/// `last_updated_chapter` (the changelog stays in chapter order, so "the state after chapter N"
/// is a prefix of it), or on any rejection under `strict`; bumps `state_version` by one, sets
/// `last_updated_chapter`, and returns the changelog line that records the applied ops (those
/// that changed nothing named in its `note`) and the rejected ones, marked as such.
pub fn apply_delta(
    state: &Value,
    global: &ForeshadowingGlobal,
    delta: &Value,
    ctx: Context<'_>,
    strict: bool,
    timestamp: &str,
) -> Result<Applied, OpsError> {
    let current = state_version(state);
    let run = run_delta(state, global, delta, ctx)?;
    if run.header.base_state_version != current {
        return Err(OpsError::StateVersion {
            base: run.header.base_state_version,
            current,
        });
    }
    if strict && !run.rejected.is_empty() {
        return Err(OpsError::Strict {
            rejected: run.rejected.len(),
        });
    }
    let last = last_updated_chapter(state);
    if run.header.chapter < last {
        return Err(OpsError::ChapterOrder {
            chapter: run.header.chapter,
            last,
        });
    }
    Ok(record(run, current, timestamp))
}

/// The applied run's new version and its changelog line.
fn record(mut run: DeltaRun, current: u64, timestamp: &str) -> Applied {
    let chapter = run.header.chapter;
    finish_version(&mut run.state, current + 1, chapter);
    // Ops that changed nothing stay in `applied` (replay repeats them as the same no-op), and
    // the line says which they were.
    let noops: Vec<String> = run
        .accepted
        .iter()
        .filter_map(|a| a.note.as_ref().map(|n| format!("#{} {n}", a.index)))
        .collect();
    let entry = ChangelogEntry {
        chapter,
        source: ChangeSource::Chapter,
        storyline_id: Some(run.header.storyline_id.clone()),
        base_state_version: current,
        state_version: current + 1,
        timestamp: timestamp.to_string(),
        applied: run.accepted.iter().map(|a| a.op.clone()).collect(),
        rejected: run
            .rejected
            .iter()
            .map(|r| RejectedOp {
                index: r.index,
                op: r.op.clone(),
                code: r.code.to_string(),
                reason: r.reason.clone(),
                extra: Extra::new(),
            })
            .collect(),
        note: (!noops.is_empty()).then(|| format!("{NOOP_NOTE}{}", noops.join("；"))),
        resolves_skipped: Vec::new(),
        cleanup_volume: None,
        written: None,
        extra: run
            .character_actions
            .iter()
            .map(|a| (CHARACTER_ACTIONS.to_string(), a.clone()))
            .collect(),
    };
    Applied { run, entry }
}

/// The changelog stays in chapter order (so `state at` and `--until-chapter` read a prefix): a
/// new line's chapter may not be below the last line's. (`apply_delta` checks the state's
/// `last_updated_chapter` itself; a skipped chapter's line moves only the changelog.)
pub fn check_changelog_order(chapter: u32, log: &[ChangelogEntry]) -> Result<(), OpsError> {
    match log.last() {
        Some(e) if chapter < e.chapter => Err(OpsError::ChapterOrder {
            chapter,
            last: e.chapter,
        }),
        _ => Ok(()),
    }
}

/// How a changelog line's `note` starts when some applied ops changed nothing.
pub const NOOP_NOTE: &str = "未产生变化的 op：";

pub fn last_updated_chapter(state: &Value) -> u32 {
    state
        .get("last_updated_chapter")
        .and_then(Value::as_u64)
        .map_or(0, |c| u32::try_from(c).unwrap_or(u32::MAX))
}

pub fn state_version(state: &Value) -> u64 {
    state
        .get("state_version")
        .and_then(Value::as_u64)
        .unwrap_or(0)
}

/// What replaying a changelog line does to the state besides its ops: the version, and the
/// chapter the state is updated to (never back).
pub(crate) fn finish_version(state: &mut Value, version: u64, chapter: u32) {
    if let Some(obj) = state.as_object_mut() {
        let last = obj
            .get("last_updated_chapter")
            .and_then(Value::as_u64)
            .unwrap_or(0)
            .max(u64::from(chapter));
        obj.insert("state_version".into(), json!(version));
        obj.insert("last_updated_chapter".into(), json!(last));
    }
}

/// A skip may be recorded for chapter `chapter` only when the state is in step with its
/// changelog, the changelog has not gone past that chapter (it stays in chapter order, so
/// `state at` and `--until-chapter` read a prefix of it) and the chapter is not past the
/// book's next one (`next_chapter`, when known).
pub fn check_skip(
    state: &Value,
    log_last: Option<&ChangelogEntry>,
    chapter: u32,
    next_chapter: Option<u32>,
) -> Result<(), OpsError> {
    check_in_step(state, log_last)?;
    let (last, _) = log_position(state, log_last);
    if chapter < last {
        return Err(OpsError::SkipOrder { chapter, last });
    }
    if !chapter_not_ahead(chapter, last, next_chapter) {
        return Err(OpsError::ChapterAhead {
            chapter,
            next: next_chapter.unwrap_or(0),
            recorded: last,
        });
    }
    Ok(())
}

/// `--resolves-skipped` may name only chapters whose delta was skipped and not yet made up
/// (`open_skips`, [`skipped_chapters`]).
pub fn check_resolves(open_skips: &[u32], resolves: &[u32]) -> Result<(), OpsError> {
    match resolves.iter().find(|n| !open_skips.contains(n)) {
        Some(&chapter) => Err(OpsError::NotSkipped {
            chapter,
            open: open_skips.to_vec(),
        }),
        None => Ok(()),
    }
}

/// The changelog line for a chapter whose delta could not be parsed twice (§10.6): nothing is
/// applied and the version does not move, but the skip is on record.
pub fn skipped_entry(
    chapter: u32,
    state_version: u64,
    reason: &str,
    timestamp: &str,
) -> ChangelogEntry {
    ChangelogEntry {
        chapter,
        source: ChangeSource::Skipped,
        storyline_id: None,
        base_state_version: state_version,
        state_version,
        timestamp: timestamp.to_string(),
        applied: Vec::new(),
        rejected: Vec::new(),
        note: Some(reason.to_string()),
        resolves_skipped: Vec::new(),
        cleanup_volume: None,
        written: None,
        extra: Extra::new(),
    }
}

/// Chapters whose delta was skipped and never re-applied since (the §10.6 counter): a skip
/// ends with a `chapter` line for the same chapter, or with a manual line that lists it in
/// `resolves_skipped`.
pub fn skipped_chapters(entries: &[ChangelogEntry]) -> Vec<u32> {
    let mut out: Vec<u32> = Vec::new();
    for e in entries {
        match e.source {
            ChangeSource::Skipped if !out.contains(&e.chapter) => out.push(e.chapter),
            ChangeSource::Chapter => out.retain(|c| *c != e.chapter),
            _ => {}
        }
        // A manual line that re-records skipped chapters from their text settles them.
        out.retain(|c| !e.resolves_skipped.contains(c));
    }
    out
}

/// §10.6: recommend `novel state rebuild` when this many chapters were skipped.
pub const SKIPPED_REBUILD_THRESHOLD: usize = 3;

/// Whether so many chapters have their delta skipped (and not made up) that the state should be
/// rebuilt from their texts: [`SKIPPED_REBUILD_THRESHOLD`] or more.
pub fn recommend_rebuild(skipped: &[u32]) -> bool {
    skipped.len() >= SKIPPED_REBUILD_THRESHOLD
}

/// What to tell the author when [`recommend_rebuild`] says so (`next`, `status`, `ops skip`).
pub fn rebuild_advice(skipped: &[u32]) -> Option<String> {
    recommend_rebuild(skipped).then(|| {
        format!(
            "已有 {} 章的状态增量被跳过（第 {} 章），状态可能缺了这些章的变化：建议先运行 novel state rebuild 核对，再按这些章的正文补记状态（novel ops apply --manual --resolves-skipped 章,…）",
            skipped.len(),
            skipped
                .iter()
                .map(u32::to_string)
                .collect::<Vec<_>>()
                .join("、")
        )
    })
}

/// The result of replaying a changelog.
#[derive(Debug, Clone)]
pub struct Replayed {
    pub state: Value,
    pub global: ForeshadowingGlobal,
    /// How many changelog lines were replayed: the prefix before the first line past `until`.
    pub entries_used: usize,
    /// Authored threads the replay does not reach: only ops after `until` create them and the
    /// authored file records nothing about them at or before `until`. They are not in
    /// `global`, and neither are their authored fields (description, extra keys).
    pub dropped_threads: Vec<String>,
}

/// [`rebuild`] without an on-disk state: the state starts from [`CurrentState::initial`].
pub fn replay(
    entries: &[ChangelogEntry],
    until: Option<u32>,
    authored: &ForeshadowingGlobal,
    ctx: Context<'_>,
) -> Result<Replayed, OpsError> {
    rebuild(entries, until, None, authored, ctx)
}

/// Rebuilds `current-state.json` and `foreshadowing/global.json` from the changelog: replays
/// its prefix up to the first line whose chapter is past `until` (the changelog is in chapter
/// order, see [`apply_delta`]).
///
/// The state starts from the initial state plus every key of `on_disk` that no op can write
/// (all but the six roots, `state_version` and `last_updated_chapter`: `schema_version`, the
/// author's own keys); the result keeps the on-disk key order.
///
/// Foreshadowing: a thread the changelog never mentions is kept exactly as authored. One it
/// mentions starts from its authored base (`thread_base`) and the ops are merged with
/// [`merge_foreshadow`], the function apply uses, so rebuilding right after applying changes
/// nothing. A thread the ops create takes its descriptive fields from the authored file when
/// that has it. The authored order of threads is kept; new ones go at the end.
pub fn rebuild(
    entries: &[ChangelogEntry],
    until: Option<u32>,
    on_disk: Option<&Value>,
    authored: &ForeshadowingGlobal,
    ctx: Context<'_>,
) -> Result<Replayed, OpsError> {
    let mut state = start_state(on_disk);
    // Per thread the changelog mentions: the highest status any of its ops asks for.
    let mut asked: BTreeMap<&str, ForeshadowStatus> = BTreeMap::new();
    for op in entries
        .iter()
        .flat_map(|e| &e.applied)
        .filter(|op| op.op == OpKind::Foreshadow)
    {
        let s = status_of(&op.value).unwrap_or(ForeshadowStatus::Planted);
        let m = asked.entry(op.path.as_str()).or_insert(s);
        *m = (*m).max(s);
    }
    let mut global = ForeshadowingGlobal {
        foreshadowing: authored
            .foreshadowing
            .iter()
            .filter_map(|a| match asked.get(a.id.as_str()) {
                None => Some(a.clone()),
                Some(&ops_max) => thread_base(a, until, ops_max),
            })
            .collect(),
        extra: authored.extra.clone(),
    };
    let based: std::collections::BTreeSet<String> =
        global.foreshadowing.iter().map(|t| t.id.clone()).collect();
    let mut used = 0;
    for (i, entry) in entries.iter().enumerate() {
        if until.is_some_and(|u| entry.chapter > u) {
            break;
        }
        used += 1;
        replay_entry(&mut state, &mut global, entry, i + 1, ctx)?;
    }
    let within = |c: u32| until.is_none_or(|u| c <= u);
    for t in &mut global.foreshadowing {
        if based.contains(&t.id) {
            continue;
        }
        if let Some(a) = authored.foreshadowing.iter().find(|a| a.id == t.id) {
            t.description = a.description.clone();
            t.scope = a.scope;
            t.target_resolve_range = a.target_resolve_range;
            t.planted_storyline = a.planted_storyline.clone();
            t.extra = a.extra.clone();
            if let Some(p) = a.planted_chapter.filter(|p| within(*p)) {
                t.planted_chapter = Some(p);
            }
        }
    }
    let rank = |id: &str| {
        authored
            .foreshadowing
            .iter()
            .position(|a| a.id == id)
            .unwrap_or(usize::MAX)
    };
    global.foreshadowing.sort_by_key(|t| rank(&t.id));
    let dropped_threads = authored
        .foreshadowing
        .iter()
        .filter(|a| !global.foreshadowing.iter().any(|t| t.id == a.id))
        .map(|a| a.id.clone())
        .collect();
    Ok(Replayed {
        state: in_disk_order(state, on_disk),
        global,
        entries_used: used,
        dropped_threads,
    })
}

/// Replays one changelog line (`line`: its 1-based number, for errors) onto `state` and
/// `global`: the one step [`rebuild`] and [`states_before`] share.
fn replay_entry(
    state: &mut Value,
    global: &mut ForeshadowingGlobal,
    entry: &ChangelogEntry,
    line: usize,
    ctx: Context<'_>,
) -> Result<(), OpsError> {
    if entry.source == ChangeSource::Skipped {
        return Ok(());
    }
    let current = state_version(state);
    if entry.base_state_version != current {
        return Err(OpsError::Replay {
            line,
            message: format!(
                "记录的 base_state_version 为 {}，回放到此处的版本为 {current}（中间缺了记录？）",
                entry.base_state_version
            ),
        });
    }
    let storyline = entry.storyline_id.as_deref().unwrap_or("main_arc");
    // A retirement and a volume-end cleanup remove whole entities, which no delta op may do.
    let removes_entities = entry.source == ChangeSource::Retire || entry.cleanup_volume.is_some();
    for op in &entry.applied {
        let result = if removes_entities {
            remove_entity(state, op).map(|_| None)
        } else {
            apply_op(state, global, op, entry.chapter, storyline, ctx)
        };
        result.map_err(|(code, reason, _)| OpsError::Replay {
            line,
            message: format!("{code}：{reason}"),
        })?;
    }
    finish_version(state, entry.state_version, entry.chapter);
    Ok(())
}

/// The state before each chapter of `chapters` (that is, after every changelog line of an
/// earlier chapter — what `novel state at --chapter N-1` shows), in one pass over the
/// changelog, keyed by the chapter and passed through `snapshot` (which keeps only what its
/// caller reads: a whole state is large). The entity roots are exactly as [`rebuild`] has
/// them; `active_foreshadowing` is merged from an empty foreshadowing file, so it may differ
/// where the author's file seeds a thread.
pub fn states_before<T>(
    entries: &[ChangelogEntry],
    chapters: &[u32],
    ctx: Context<'_>,
    mut snapshot: impl FnMut(u32, &Value) -> T,
) -> Result<BTreeMap<u32, T>, OpsError> {
    let mut wanted: Vec<u32> = chapters.to_vec();
    wanted.sort_unstable();
    wanted.dedup();
    let mut state = start_state(None);
    let mut global = ForeshadowingGlobal {
        foreshadowing: Vec::new(),
        extra: Extra::new(),
    };
    let mut out = BTreeMap::new();
    let mut next = wanted.iter().peekable();
    for (i, entry) in entries.iter().enumerate() {
        while let Some(&&c) = next.peek() {
            if entry.chapter < c {
                break;
            }
            out.insert(c, snapshot(c, &state));
            next.next();
        }
        if next.peek().is_none() {
            return Ok(out);
        }
        replay_entry(&mut state, &mut global, entry, i + 1, ctx)?;
    }
    for &c in next {
        out.insert(c, snapshot(c, &state));
    }
    Ok(out)
}

fn status_of(value: &Value) -> Option<ForeshadowStatus> {
    match value.as_str()? {
        "planted" => Some(ForeshadowStatus::Planted),
        "advanced" => Some(ForeshadowStatus::Advanced),
        "resolved" => Some(ForeshadowStatus::Resolved),
        _ => None,
    }
}

/// Keys of `current-state.json` that ops and the version bump write; every other key (such as
/// `schema_version` or a note the author added) only the author writes.
fn reachable(key: &str) -> bool {
    ROOTS.contains(&key) || key == "state_version" || key == "last_updated_chapter"
}

/// The state a rebuild starts from: the initial state with the unreachable keys of the
/// on-disk state carried over.
fn start_state(on_disk: Option<&Value>) -> Value {
    let mut state = CurrentState::initial_value();
    if let (Some(obj), Some(Value::Object(disk))) = (state.as_object_mut(), on_disk) {
        for (k, v) in disk.iter().filter(|(k, _)| !reachable(k)) {
            obj.insert(k.clone(), v.clone());
        }
    }
    state
}

/// The rebuilt state's keys in the on-disk order (keys the disk lacks at the end), so writing
/// it back keeps the file diff-friendly.
fn in_disk_order(state: Value, on_disk: Option<&Value>) -> Value {
    match (state, on_disk) {
        (Value::Object(mut rebuilt), Some(Value::Object(disk))) => {
            let mut out = Map::new();
            for k in disk.keys() {
                if let Some(v) = rebuilt.shift_remove(k) {
                    out.insert(k.clone(), v);
                }
            }
            out.extend(rebuilt);
            Value::Object(out)
        }
        (state, _) => state,
    }
}

/// Where a rebuild starts an authored thread that the changelog mentions (`ops_max`: the
/// highest status its ops ask for): what the authored file records at or before `until`.
///
/// - history: the authored entries at or before `until` (entries the ops made too: merging
///   an op again finds its entry and changes nothing, and keeps the order the file has);
/// - status: the highest action of that history — or, when the authored status is higher
///   than anything the ops and the whole authored history explain, so the author set it by
///   hand, the authored status, with the authored last update, whatever `until` (a timeless
///   manual floor);
/// - `last_updated_chapter` (unless a manual floor), `planted_chapter`: the authored ones at
///   or before `until`.
///
/// Re-deriving the history entries an op also made, instead of keeping them, would lose their
/// authored `detail` and could turn a downgrade that apply skipped into an event; keeping them
/// is what makes apply-then-rebuild the identity (see the property test).
///
/// None when that leaves nothing: the thread then exists only once an op creates it. A manual
/// status that a later op also reaches is indistinguishable from that op's doing, so it is not
/// a floor: rebuilding to before that op forgets it.
fn thread_base(
    a: &Foreshadowing,
    until: Option<u32>,
    ops_max: ForeshadowStatus,
) -> Option<Foreshadowing> {
    let within = |c: u32| until.is_none_or(|u| c <= u);
    let history: Vec<ForeshadowEvent> = a
        .history
        .iter()
        .filter(|h| within(h.chapter))
        .cloned()
        .collect();
    let explained = a
        .history
        .iter()
        .map(|h| h.action)
        .fold(ops_max, ForeshadowStatus::max);
    let manual = a.status > explained;
    let status = if manual {
        a.status
    } else {
        history.iter().map(|h| h.action).max()?
    };
    let last_updated_chapter = history
        .iter()
        .map(|h| h.chapter)
        .chain(a.last_updated_chapter.filter(|c| manual || within(*c)))
        .max();
    Some(Foreshadowing {
        status,
        last_updated_chapter,
        planted_chapter: a.planted_chapter.filter(|c| within(*c)),
        history,
        ..a.clone()
    })
}

/// One change to one entity, for `novel state history`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct EntityChange {
    pub chapter: u32,
    pub state_version: u64,
    pub source: ChangeSource,
    pub op: StateOp,
}

/// The entity an op touches: the second path segment, or the foreshadow id.
fn entity_of(op: &StateOp) -> Option<&str> {
    if op.op == OpKind::Foreshadow {
        Some(op.path.as_str())
    } else {
        op.path.split('.').nth(1)
    }
}

/// Every entity id the changelog's applied ops touch, sorted.
pub fn changelog_entities(entries: &[ChangelogEntry]) -> Vec<String> {
    let ids: std::collections::BTreeSet<&str> = entries
        .iter()
        .flat_map(|e| &e.applied)
        .filter_map(entity_of)
        .collect();
    ids.into_iter().map(str::to_string).collect()
}

/// Every id the project knows an entity by: the changelog's, the state's, the foreshadowing
/// file's and the character files', sorted, each once.
pub fn known_entities(
    log: &[ChangelogEntry],
    state: Option<&Value>,
    global: Option<&ForeshadowingGlobal>,
    names: &NameIndex,
) -> Vec<String> {
    let mut ids = changelog_entities(log);
    if let Some(state) = state {
        for root in ROOTS {
            if let Some(map) = state.get(root).and_then(Value::as_object) {
                ids.extend(map.keys().cloned());
            }
        }
    }
    if let Some(g) = global {
        ids.extend(g.foreshadowing.iter().map(|t| t.id.clone()));
    }
    ids.extend(names.pairs().map(|(_, slug)| slug.to_string()));
    ids.sort();
    ids.dedup();
    ids
}

/// What the author typed — a known id, or a character's display name or alias — as its slug;
/// else up to five of the closest ids and names ([`closest`]), a name shown as `slug（名字）`.
pub fn resolve_entity(
    query: &str,
    known: &[String],
    names: &NameIndex,
) -> Result<String, Vec<String>> {
    if known.iter().any(|k| k == query) {
        return Ok(query.to_string());
    }
    if let Some(slug) = names.slug_for(query) {
        return Ok(slug.to_string());
    }
    let mut candidates: Vec<String> = known.to_vec();
    candidates.extend(names.pairs().map(|(name, _)| name.to_string()));
    let mut close: Vec<String> = Vec::new();
    for hit in closest(query, &candidates, 5) {
        let shown = match names.slug_for(hit) {
            Some(slug) => format!("{slug}（{hit}）"),
            None => hit.to_string(),
        };
        if !close.contains(&shown) {
            close.push(shown);
        }
    }
    Err(close)
}

/// Every applied op that touches `slug` (as the second path segment, or a foreshadow id).
pub fn entity_history(entries: &[ChangelogEntry], slug: &str) -> Vec<EntityChange> {
    let mut out = Vec::new();
    for e in entries {
        for op in &e.applied {
            if entity_of(op) == Some(slug) {
                out.push(EntityChange {
                    chapter: e.chapter,
                    state_version: e.state_version,
                    source: e.source,
                    op: op.clone(),
                });
            }
        }
    }
    out
}

/// The entity `slug` inside a state, wherever it lives (`characters`, `items`, …).
pub fn find_entity<'v>(state: &'v Value, slug: &str) -> Vec<(&'static str, &'v Value)> {
    ROOTS
        .iter()
        .filter_map(|root| {
            state
                .get(root)
                .and_then(|r| r.get(slug))
                .map(|v| (*root, v))
        })
        .collect()
}

/// A difference between two JSON documents, by pointer.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Difference {
    pub pointer: String,
    pub expected: Option<Value>,
    pub actual: Option<Value>,
}

/// Leaf-level differences between `expected` (rebuilt) and `actual` (on disk).
pub fn diff(expected: &Value, actual: &Value) -> Vec<Difference> {
    let mut out = Vec::new();
    diff_into(String::new(), Some(expected), Some(actual), &mut out);
    out
}

fn diff_into(pointer: String, a: Option<&Value>, b: Option<&Value>, out: &mut Vec<Difference>) {
    match (a, b) {
        (Some(Value::Object(x)), Some(Value::Object(y))) => {
            let mut keys: Vec<&String> = x.keys().chain(y.keys()).collect();
            keys.sort();
            keys.dedup();
            for k in keys {
                diff_into(
                    format!("{pointer}/{}", crate::diagnostic::pointer_escape(k)),
                    x.get(k),
                    y.get(k),
                    out,
                );
            }
        }
        (x, y) if x == y => {}
        (x, y) => out.push(Difference {
            pointer,
            expected: x.cloned(),
            actual: y.cloned(),
        }),
    }
}
