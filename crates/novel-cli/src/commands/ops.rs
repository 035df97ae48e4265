//! `novel ops validate|apply|skip`: the Summarizer's state delta, checked op by op (§10.6)
//! and merged by the state engine.

use serde::Serialize;
use serde_json::Value;

use novel_core::ops::{self, Accepted, Applied, Rejection};
use novel_store::lock;
use novel_store::state::{
    ApplyError, ApplyRequest, DeltaInputs, Merged, Trust, apply_delta, load_delta_inputs,
    record_skip,
};
use novel_store::{Project, StoreError, io};

use crate::args::{GlobalArgs, OpsCommand, OpsFileArgs};
use crate::output::{CliError, Exit, Report};

use super::{ops_error, with_state_lock};

/// Where a delta file's JSON syntax breaks (the `data` of `E_JSON`).
#[derive(Serialize)]
struct SyntaxError<'a> {
    line: usize,
    column: usize,
    message: &'a str,
}

/// `novel ops validate`'s `--json` data.
#[derive(Serialize)]
struct ValidateData<'a> {
    chapter: u32,
    storyline_id: &'a str,
    base_state_version: u64,
    state_version: u64,
    version_ok: bool,
    last_updated_chapter: u32,
    chapter_order_ok: bool,
    in_step: bool,
    strict: bool,
    would_apply: bool,
    accepted: &'a [Accepted],
    rejected: &'a [Rejection],
}

/// `novel ops apply`'s `data` when every op was rejected and nothing was written.
#[derive(Serialize)]
struct AllRejected<'a> {
    chapter: u32,
    accepted: &'a [Accepted],
    rejected: &'a [Rejection],
    written: bool,
}

/// `novel ops apply`'s `--json` data.
#[derive(Serialize)]
struct ApplyData<'a> {
    chapter: u32,
    storyline_id: &'a str,
    state_version_before: u64,
    state_version: u64,
    accepted: &'a [Accepted],
    rejected: &'a [Rejection],
    skipped_chapters: &'a [u32],
    recommend_rebuild: bool,
}

/// `novel ops skip`'s `--json` data.
#[derive(Serialize)]
struct SkipData<'a> {
    chapter: u32,
    skipped_chapters: &'a [u32],
    recommend_rebuild: bool,
}

/// The envelope name of an `ops` subcommand.
pub fn command_name(cmd: &OpsCommand) -> &'static str {
    match cmd {
        OpsCommand::Validate(_) => "ops validate",
        OpsCommand::Apply(_) => "ops apply",
        OpsCommand::Skip(_) => "ops skip",
    }
}

pub fn run(global: &GlobalArgs, cmd: OpsCommand) -> Result<Report, CliError> {
    let project = super::project(global)?;
    match cmd {
        OpsCommand::Validate(a) => validate(&project, &a),
        OpsCommand::Apply(a) => {
            let resolves: Vec<u32> = a
                .resolves_skipped
                .iter()
                .flat_map(|s| s.chapters())
                .collect();
            apply(&project, &a.file, a.manual, &resolves)
        }
        OpsCommand::Skip(a) => skip(&project, a.chapter, &a.reason),
    }
}

/// What a delta is checked against ([`load_delta_inputs`], schema-checked). A storylines file
/// that cannot be read is said as such (`E_STORYLINES`), never taken as "anything goes".
fn delta_inputs(project: &Project, delta: &Value) -> Result<DeltaInputs, CliError> {
    Ok(load_delta_inputs(project, Trust::Checked, delta)?)
}

/// Reads the delta file; a syntax error is a finding for the Summarizer (exit 1), with line
/// and column, not a project error.
fn read_delta(file: &std::path::Path) -> Result<Value, CliError> {
    match io::read_json_value(file) {
        Ok(v) => Ok(v),
        Err(StoreError::Json { error, .. }) => Err(CliError::new(
            "E_JSON",
            format!("{}：{error}", file.display()),
            "把这条错误原样交给摘要员，让它重新输出 ops 部分（只重试一次；仍失败则 novel ops skip）",
            Exit::Problems,
        )
        .with_report(
            &SyntaxError {
                line: error.line,
                column: error.column,
                message: &error.message,
            },
            String::new(),
        )),
        Err(e) => Err(e.into()),
    }
}

/// One line per op, in the delta's order, accepted or not.
fn describe(accepted: &[Accepted], rejected: &[Rejection]) -> String {
    let mut lines: Vec<(usize, String)> = Vec::new();
    for a in accepted {
        let note = a
            .note
            .as_deref()
            .map(|n| format!("（{n}）"))
            .unwrap_or_default();
        let kind = serde_json::to_value(a.op.op).unwrap_or_default();
        lines.push((
            a.index,
            format!(
                "  ✓ #{} {} {} = {}{note}\n",
                a.index,
                kind.as_str().unwrap_or(""),
                a.op.path,
                a.op.value
            ),
        ));
    }
    for r in rejected {
        lines.push((
            r.index,
            format!(
                "  ✗ #{} [{}] {}\n      修正：{}\n",
                r.index, r.code, r.reason, r.hint
            ),
        ));
    }
    lines.sort_by_key(|(i, _)| *i);
    lines.into_iter().map(|(_, l)| l).collect()
}

fn validate(project: &Project, args: &OpsFileArgs) -> Result<Report, CliError> {
    let delta = read_delta(&args.file)?;
    // The one check `ops apply` and the commit make: the same answer.
    let check = delta_inputs(project, &delta)?
        .check(&delta)
        .map_err(ops_error)?;
    let run = &check.run;
    let current = check.current_version;
    let version_ok = check.version_ok;
    let last = check.last_chapter;
    let chapter_order_ok = check.chapter_order_ok;
    let mut refusal = check.refusal(args.strict);
    if refusal.is_none() {
        // `ops apply`'s own last check: the same ops already merged for this chapter.
        let ops: Vec<novel_core::model::state::StateOp> =
            run.accepted.iter().map(|a| a.op.clone()).collect();
        let log = novel_store::state::load_changelog(project)?;
        refusal = ops::repeated_line(&log, run.header.chapter, &ops).map(|line| {
            ops::OpsError::Repeated {
                chapter: run.header.chapter,
                line,
            }
        });
    }
    let would_apply = refusal.is_none();
    let data = ValidateData {
        chapter: run.header.chapter,
        storyline_id: &run.header.storyline_id,
        base_state_version: run.header.base_state_version,
        state_version: current,
        version_ok,
        last_updated_chapter: last,
        chapter_order_ok,
        in_step: check.in_step,
        strict: args.strict,
        would_apply,
        accepted: &run.accepted,
        rejected: &run.rejected,
    };
    let mut human = format!(
        "第 {} 章增量（故事线 {}）：{} 条通过，{} 条被拒。\n",
        run.header.chapter,
        run.header.storyline_id,
        run.accepted.len(),
        run.rejected.len()
    );
    human.push_str(&describe(&run.accepted, &run.rejected));
    for e in check.refusals() {
        human.push_str(&format!("{e}，apply 会被拒绝。\n"));
    }
    if let Some(e @ ops::OpsError::Repeated { .. }) = &refusal {
        human.push_str(&format!("{e}，apply 会被拒绝。\n"));
    }
    if run.rejected.is_empty() && would_apply {
        return Report::new(&data, human);
    }
    // The refusal `ops apply` would give, else the rejected ops (apply writes the others).
    let (code, message, hint) = match &refusal {
        Some(e) => (e.code(), e.to_string(), e.hint()),
        None => (
            "E_OPS_REJECTED",
            format!("{} 条 op 被拒绝", run.rejected.len()),
            String::new(),
        ),
    };
    Err(CliError::new(code, message, hint, Exit::Problems).with_report(&data, human))
}

/// The standalone path: the author's or a skill's own `ops apply` (a chapter commit calls
/// the same library function inside its own journaled transaction).
fn apply(
    project: &Project,
    args: &OpsFileArgs,
    manual: bool,
    resolves: &[u32],
) -> Result<Report, CliError> {
    let delta = read_delta(&args.file)?;
    with_state_lock(project, |held| {
        apply_locked(project, held, args, manual, resolves, &delta)
    })
}

fn apply_locked(
    project: &Project,
    held: &mut lock::Held<'_>,
    args: &OpsFileArgs,
    manual: bool,
    resolves: &[u32],
    delta: &Value,
) -> Result<Report, CliError> {
    let req = ApplyRequest {
        strict: args.strict,
        manual,
        resolves,
    };
    let merged = apply_delta(project, held, delta, req).map_err(apply_error)?;
    applied_report(&merged)
}

/// Why `ops apply` / `ops skip` wrote nothing, as the CLI says it.
fn apply_error(e: ApplyError) -> CliError {
    match e {
        ApplyError::Store(e) => CliError::from(e),
        ApplyError::Ops(e) => ops_error(e),
        ApplyError::AllRejected(applied) => all_rejected(&applied),
    }
}

/// Every op rejected: nothing would change, and recording a new version for it would only
/// say otherwise.
fn all_rejected(applied: &Applied) -> CliError {
    let data = AllRejected {
        chapter: applied.run.header.chapter,
        accepted: &[],
        rejected: &applied.run.rejected,
        written: false,
    };
    CliError::new(
        "E_OPS_REJECTED",
        format!(
            "{} 条 op 全部被拒绝，没有写入任何文件",
            applied.run.rejected.len()
        ),
        "按 rejected 列表的原因与提示修正这些 op 后重试（novel ops validate 可先检查）",
        Exit::Problems,
    )
    .with_report(
        &data,
        describe(&applied.run.accepted, &applied.run.rejected),
    )
}

/// The merged delta as reported: versions, ops, and the skipped chapters left once the new
/// changelog line is counted.
fn applied_report(merged: &Merged) -> Result<Report, CliError> {
    let (applied, skipped) = (&merged.applied, &merged.skipped);
    let run = &applied.run;
    let data = ApplyData {
        chapter: run.header.chapter,
        storyline_id: &run.header.storyline_id,
        state_version_before: applied.entry.base_state_version,
        state_version: applied.entry.state_version,
        accepted: &run.accepted,
        rejected: &run.rejected,
        skipped_chapters: skipped,
        recommend_rebuild: ops::recommend_rebuild(skipped),
    };
    let mut human = format!(
        "已合并第 {} 章增量：state_version {} → {}，应用 {} 条，拒绝 {} 条（已记入变更日志）。\n",
        run.header.chapter,
        applied.entry.base_state_version,
        applied.entry.state_version,
        run.accepted.len(),
        run.rejected.len()
    );
    human.push_str(&describe(&run.accepted, &run.rejected));
    Report::new(&data, human)
}

fn skip(project: &Project, chapter: u32, reason: &str) -> Result<Report, CliError> {
    with_state_lock(project, |held| skip_locked(project, held, chapter, reason))
}

fn skip_locked(
    project: &Project,
    held: &mut lock::Held<'_>,
    chapter: u32,
    reason: &str,
) -> Result<Report, CliError> {
    let skipped = record_skip(project, held, chapter, reason).map_err(apply_error)?;
    let recommend = ops::recommend_rebuild(&skipped);
    let mut human = format!(
        "已记录：第 {chapter} 章的状态增量被跳过（状态未变）。累计未补的跳过章节：{}。\n",
        skipped
            .iter()
            .map(u32::to_string)
            .collect::<Vec<_>>()
            .join("、")
    );
    if let Some(advice) = ops::rebuild_advice(&skipped) {
        human.push_str(&format!("{advice}\n"));
    }
    let data = SkipData {
        chapter,
        skipped_chapters: &skipped,
        recommend_rebuild: recommend,
    };
    Report::new(&data, human)
}
