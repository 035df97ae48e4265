//! `novel chapter stage STAGE`: moving the chapter in flight along the pipeline (PRD §9.2,
//! `docs/orchestration.md` §1) — the order and file checks (`novel_core::pipeline::check_stage`),
//! the archive of a round the gate sent back, the checkpoint, and the stage's line in the
//! pipeline log.
//!
//! Layer: commands (the pipeline stages), above the commit transaction and the figures.

use serde::Serialize;

use novel_core::model::{Checkpoint, OrchestratorState, PipelineStage};
use novel_core::pipeline::{self, StageRefusal};

use crate::chapter::{
    Facts, Journal, JournalKind, JournalWrite, load_checkpoint, staged_digests, staging_facts,
    write_checkpoint,
};
use crate::error::StoreError;
use crate::lock::{self, LockError};
use crate::project::Project;

/// Why a step of the chapter transaction (begin, stage, gate, commit, fail) refuses: one
/// type for the whole module, with its stable code, its hint and whether it is a conflict.
#[derive(Debug, thiserror::Error)]
pub enum ChapterError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    Lock(#[from] LockError),
    #[error(transparent)]
    Plan(#[from] crate::chapter::PlanError),
    /// The gate's own refusal (weights, thresholds, the second judge missing).
    #[error(transparent)]
    Decide(#[from] novel_core::gate::GateError),
    /// The order or the staged files say no (`check_begin`, `check_stage`, `check_fail`).
    #[error("{}", .0.reason)]
    Refused(StageRefusal),
    #[error("没有在写的章节")]
    NothingInFlight,
    #[error("第 {chapter} 章处于出错待重试（ERROR_RETRY）")]
    Failed { chapter: u32 },
    #[error("{}", match .inflight {
        Some(i) => format!("在写的是第 {i} 章，不能提交第 {chapter} 章"),
        None => format!("第 {chapter} 章没有在写（已完成到第 {last} 章），不能提交"),
    })]
    NotInFlight {
        chapter: u32,
        inflight: Option<u32>,
        last: u32,
    },
    #[error(
        "第 {chapter} 章现在是「{stage}」，只有评估完成且门控通过（或门控判二次润色、已润色完）才能提交"
    )]
    CommitStage { chapter: u32, stage: &'static str },
    #[error(
        "门控需要第 {chapter} 章评估完成（现在{}，阶段「{stage}」）",
        inflight.map_or("没有在写的章节".to_string(), |n| format!("在写第 {n} 章"))
    )]
    GateStage {
        chapter: u32,
        inflight: Option<u32>,
        stage: &'static str,
    },
    #[error("{file} 与主评估完全相同，不是独立的第二份评估")]
    CopiedSecondJudge { file: String },
    /// The gate does not let it through (`None`: no verdict this round).
    #[error("{}", gate_refusal(*.chapter, .gate.as_deref()))]
    Gate {
        chapter: u32,
        gate: Option<Box<novel_core::model::checkpoint::GateRecord>>,
    },
    /// `stage judged` / the gate: an evaluation breaks the judge's contract
    /// (`novel_core::judging`); the findings say what to fix.
    #[error("{}", evaluation_refusal(.findings))]
    Evaluation {
        findings: Vec<novel_core::diagnostic::Diagnostic>,
    },
    /// `stage refined`: StyleRefiner changed more of the draft than the project allows.
    #[error("{}", edit_refusal(.report, *.cap))]
    EditRatio {
        chapter: u32,
        report: Box<novel_core::edits::EditReport>,
        cap: f64,
    },
    /// `stage repaired`: the local repair cannot go in as written (`novel_core::repair`).
    #[error("第 {chapter} 章的局部修补不能放进正文：\n{}", novel_core::repair::describe(.problems).trim_end())]
    Repair {
        chapter: u32,
        problems: Vec<novel_core::repair::Problem>,
    },
    /// `stage refined|polished`: StyleRefiner's change list does not fit the staged text.
    #[error("润色编辑的修改清单（{}）有 {} 条套不上正文：\n{}", novel_core::naming::staging_edits(*.chapter), .problems.len(), novel_core::changes::describe(.problems).trim_end())]
    ChangeList {
        chapter: u32,
        problems: Vec<novel_core::changes::Problem>,
    },
    /// `recover`: an unfinished journal while another live session holds the lock.
    #[error("{what}没有完成，而项目锁仍被占用：{holder}；它可能正在写入，不能替它补完")]
    JournalHeld { what: String, holder: String },
}

impl ChapterError {
    pub fn code(&self) -> &'static str {
        match self {
            ChapterError::Store(e) => e.code(),
            ChapterError::Lock(e) => e.code(),
            ChapterError::Plan(crate::chapter::PlanError::Store(e)) => e.code(),
            ChapterError::Plan(crate::chapter::PlanError::Ops(e)) => e.code(),
            ChapterError::Plan(crate::chapter::PlanError::ChangedSinceGate { .. }) => {
                "E_STAGING_CHANGED"
            }
            ChapterError::Decide(e) => e.code(),
            ChapterError::Refused(r) => r.code,
            ChapterError::NothingInFlight | ChapterError::NotInFlight { .. } => "E_NOT_INFLIGHT",
            ChapterError::Failed { .. } => "E_STATE",
            ChapterError::CommitStage { .. } | ChapterError::GateStage { .. } => "E_STAGE_ORDER",
            ChapterError::CopiedSecondJudge { .. } => "E_SECOND_JUDGE",
            ChapterError::Gate { .. } => "E_GATE",
            ChapterError::Evaluation { .. } => "E_EVALUATION",
            ChapterError::EditRatio { .. } => "E_EDIT_RATIO",
            ChapterError::Repair { .. } => "E_REPAIR",
            ChapterError::ChangeList { .. } => "E_CHANGE_LIST",
            ChapterError::JournalHeld { .. } => "E_LOCKED",
        }
    }

    /// Exit 1 (the work is not good enough yet: the gate, the judges, the staged files) as
    /// opposed to 3 (the pipeline's order, the lock) and 2 (usage or project).
    pub fn is_problem(&self) -> bool {
        matches!(
            self,
            ChapterError::Decide(_)
                | ChapterError::CopiedSecondJudge { .. }
                | ChapterError::Gate { .. }
                | ChapterError::Evaluation { .. }
                | ChapterError::EditRatio { .. }
                | ChapterError::Repair { .. }
                | ChapterError::ChangeList { .. }
        ) || matches!(self, ChapterError::Refused(r) if r.code == "E_STAGING" || r.code == "E_CHAPTER_PLAN")
    }

    pub fn is_conflict(&self) -> bool {
        !self.is_problem()
            && !matches!(
                self,
                ChapterError::Store(_)
                    | ChapterError::Plan(crate::chapter::PlanError::Store(_))
                    | ChapterError::Plan(crate::chapter::PlanError::Ops(_))
            )
            && !matches!(self, ChapterError::Refused(r) if r.code == "E_STATE_MISSING")
    }

    /// How to fix it; `n` is the chapter of the command. Empty for the lock and the ops,
    /// whose own mappings say it.
    pub fn hint(&self, n: u32) -> String {
        use novel_core::gate::GateError as G;
        use novel_core::model::common::GateDecision as D;
        match self {
            ChapterError::Store(e) => e.hint(),
            ChapterError::Lock(_) | ChapterError::Plan(crate::chapter::PlanError::Ops(_)) => {
                String::new()
            }
            ChapterError::Plan(crate::chapter::PlanError::Store(e)) => e.hint(),
            ChapterError::Plan(crate::chapter::PlanError::ChangedSinceGate { .. }) => "提交的只能是评审过的稿件：改动是有意的就重新运行 novel chapter stage judged 并重新评审、门控；否则恢复这些文件".into(),
            ChapterError::Refused(r) => r.hint.clone(),
            ChapterError::NothingInFlight => "先 novel chapter begin N".into(),
            ChapterError::Failed { chapter } => {
                format!("先运行 novel chapter begin {chapter} 从出错处恢复")
            }
            ChapterError::NotInFlight { .. } => {
                "按顺序：novel chapter begin N → … → novel chapter commit N".into()
            }
            ChapterError::CommitStage { .. } => "novel chapter recover 会告诉你从哪一步继续".into(),
            ChapterError::GateStage { .. } => "先完成评审并 novel chapter stage judged".into(),
            ChapterError::JournalHeld { .. } => "让持有锁的会话自己运行 novel chapter recover；确认那个会话已经不在后，先运行 novel lock clear，再运行 novel chapter recover".into(),
            ChapterError::Evaluation { .. } => "把 data.findings 逐条（位置、说明、处理）交回评审重写评估文件（被退回的那份已移到 logs/revisions/ 下，重写不必先读），再运行 novel chapter stage judged".into(),
            ChapterError::EditRatio { chapter, .. } => format!(
                "初稿在 {}：上面这些段落回到初稿的说法，只留黑名单与句式的必要替换（修改清单撤掉对应的条目；被退回的清单已移走，重写一份即可），再运行 novel chapter stage refined",
                novel_core::naming::staging_draft(*chapter)
            ),
            ChapterError::Repair { .. } => format!(
                "把上面每一条交回 ChapterWriter（任务：修补）：只重写 {}/ 下的修补稿（正文文件不动），再运行 novel chapter stage repaired",
                novel_core::naming::STAGING_REPAIRS
            ),
            ChapterError::ChangeList { chapter, .. } => format!(
                "把上面每一条交回润色编辑改好 {}（「原：」从正文一字不改地抄，只对得上一处），再运行同一条 stage 命令",
                novel_core::naming::staging_edits(*chapter)
            ),
            ChapterError::CopiedSecondJudge { .. } => {
                "关键章要由另一位裁判（另一个模型或一次独立评估）重新打分".into()
            }
            ChapterError::Decide(G::SecondJudgeMissing { .. }) => format!(
                "用 Opus 再评一次，写到 {}，然后重新运行门控",
                novel_core::naming::staging_second_evaluation(n, "secondary")
            ),
            ChapterError::Decide(G::Thresholds { .. }) => {
                "在 novel.json 的 gate 中按 pass ≥ polish ≥ revise ≥ pause 设置阈值".into()
            }
            ChapterError::Decide(_) => "让评审按 8 个维度与规定权重重新评估".into(),
            ChapterError::Gate { chapter, gate } => match gate.as_ref().map(|g| g.decision) {
                Some(D::Pause) => "作者决定接受时用 --accept；作者决定按意见修订或重写时 novel chapter stage revising|drafting --by-author".into(),
                Some(D::Revise) => format!(
                    "按意见修订：novel chapter stage revising；作者决定按现稿接受时用 --accept（manual_confirm 下先处理修订候选：novel revision notes --chapter {chapter}）"
                ),
                Some(D::Polish) => "润色编辑二次润色后 novel chapter stage polished；作者要按现稿提交时用 --accept".into(),
                _ => format!("运行 novel chapter gate {chapter}，按结论处理"),
            },
        }
    }
}

fn evaluation_refusal(findings: &[novel_core::diagnostic::Diagnostic]) -> String {
    let errors: Vec<&novel_core::diagnostic::Diagnostic> =
        findings.iter().filter(|f| f.is_error()).collect();
    let mut codes: Vec<&str> = errors.iter().map(|f| f.code.as_ref()).collect();
    codes.dedup();
    format!(
        "评估没有守住评审的约定（{} 处：{}）：\n{}",
        errors.len(),
        codes.join("、"),
        novel_core::diagnostic::render_all(findings).trim_end()
    )
}

fn edit_refusal(r: &novel_core::edits::EditReport, cap: f64) -> String {
    use novel_core::edits::percent;
    let (what, share) = r.over(cap).unwrap_or(("叙述", r.narration));
    let mut t = format!(
        "润色改动了初稿{what}的 {}（{}/{} 字；叙述 {}，对话 {}），超过上限 {}（novel.json 的 refine.max_edit_ratio）。改动最多的段落：",
        percent(share.ratio),
        share.changed,
        share.chars,
        percent(r.narration.ratio),
        percent(r.dialogue.ratio),
        percent(cap)
    );
    for p in &r.worst {
        t.push_str(&format!(
            "\n- 第 {} 段（原 {} 字，改动 {} 字）：「{}」→「{}」",
            p.paragraph, p.chars, p.changed, p.before, p.after
        ));
    }
    t
}

fn gate_refusal(n: u32, gate: Option<&novel_core::model::checkpoint::GateRecord>) -> String {
    use novel_core::model::common::GateDecision as D;
    match gate {
        None => format!("第 {n} 章这一轮还没有过门控"),
        Some(g) if g.decision == D::Polish => format!(
            "第 {n} 章的门控结论是 {}：还没有二次润色",
            g.decision.label()
        ),
        Some(g) => format!("第 {n} 章的门控结论是 {}，不能提交", g.decision.label()),
    }
}

/// The chapter the pipeline waits to resume after `chapter fail`, if it is in ERROR_RETRY.
pub fn failed_chapter(cp: &Checkpoint) -> Option<u32> {
    (cp.orchestrator_state == OrchestratorState::ErrorRetry).then(|| cp.chapter_at_hand())
}

/// What `chapter stage` did. Field order is the `--json` order.
#[derive(Debug, Clone, Serialize)]
pub struct Moved {
    pub chapter: u32,
    pub from: Option<PipelineStage>,
    pub stage: PipelineStage,
    pub revision_count: u32,
    /// Files of the round sent back, now under `logs/revisions/chapter-NNN/rK/`.
    pub archived: Vec<String>,
    /// `refined`: how much StyleRefiner changed the draft (absent when no draft was kept).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub edit_ratio: Option<novel_core::edits::EditReport>,
}

pub use novel_core::model::pipeline_log::{EDIT_RATIO, TOTAL_TOKENS};
/// A stage line's key saying who chose the round (`author`), absent for the loop's own rounds.
pub const DECIDED_BY: &str = "decided_by";
const AUTHOR: &str = "author";

/// The rounds back the author chose for chapter `n` so far (its pipeline log's records).
fn author_rounds(project: &Project, n: u32) -> Result<u32, ChapterError> {
    let Some((_, log)) = crate::chapter::read_staging_log(project, n)? else {
        return Ok(0);
    };
    let rounds = log
        .get("stages")
        .and_then(serde_json::Value::as_array)
        .map_or(0, |stages| {
            stages
                .iter()
                .filter(|s| s.get(DECIDED_BY).and_then(serde_json::Value::as_str) == Some(AUTHOR))
                .count()
        });
    Ok(u32::try_from(rounds).unwrap_or(u32::MAX))
}

/// What the skill knows of a stage it ran (`novel chapter stage … --model … --input-tokens …`):
/// unknown figures stay `None` (`null` in the log), never guessed.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct StageFigures {
    pub model: Option<String>,
    pub input_tokens: Option<u64>,
    pub output_tokens: Option<u64>,
    /// The one total the Agent result gives (`subagent_tokens`), when input and output are not
    /// known apart.
    pub tokens: Option<u64>,
    pub duration_ms: Option<u64>,
    pub cost_usd: Option<f64>,
    /// The author chose this round back (`--by-author`), with their words (`--note`).
    pub by_author: bool,
    pub note: Option<String>,
}

impl StageFigures {
    /// These figures, or — when no usage was given (no token, time or cost figure) — the
    /// usage the Agent hook recorded for the stage's agents
    /// ([`crate::agent_usage`]), the model the dispatches passed included unless one was given.
    pub fn with_recorded(&self, calls: &[crate::agent_usage::Staged]) -> StageFigures {
        let mut out = self.clone();
        let given = self.tokens.is_some()
            || self.input_tokens.is_some()
            || self.output_tokens.is_some()
            || self.duration_ms.is_some()
            || self.cost_usd.is_some();
        if let (false, Some((tokens, ms, model))) = (given, crate::agent_usage::fold(calls)) {
            out.tokens = Some(tokens);
            out.duration_ms = Some(ms);
            out.model = self.model.clone().or(model);
        }
        out
    }

    /// The stage's line of the pipeline log: the stage, the figures (`null` when unknown), and
    /// when; the cost only when known.
    fn entry(&self, to: PipelineStage) -> serde_json::Value {
        use serde_json::Value;
        let mut line = serde_json::Map::new();
        line.insert("name".into(), Value::from(to.name()));
        line.insert("model".into(), Value::from(self.model.clone()));
        line.insert("input_tokens".into(), Value::from(self.input_tokens));
        line.insert("output_tokens".into(), Value::from(self.output_tokens));
        line.insert("duration_ms".into(), Value::from(self.duration_ms));
        line.insert("at".into(), Value::from(crate::time::now_iso()));
        if let Some(t) = self.tokens {
            line.insert(TOTAL_TOKENS.into(), Value::from(t));
        }
        if self.by_author {
            line.insert(DECIDED_BY.into(), Value::from(AUTHOR));
            if let Some(n) = self
                .note
                .as_deref()
                .map(str::trim)
                .filter(|n| !n.is_empty())
            {
                line.insert("note".into(), Value::from(n));
            }
        }
        if let Some(c) = self.cost_usd {
            line.insert("cost_usd".into(), Value::from(c));
        }
        Value::Object(line)
    }
}

/// What the stages need of `novel-text` (the store segments no Chinese itself): the project's
/// normalisation, for the judge's quotes, and the segmentation the edit measure reads.
pub struct TextTools<'a> {
    pub normalize: &'a dyn Fn(&str) -> String,
    pub segment: &'a dyn Fn(&str) -> novel_core::edits::Segmented,
}

fn plain_normalize(s: &str) -> String {
    s.to_string()
}

/// Paragraphs by line, no dialogue marked.
fn plain_segment(s: &str) -> novel_core::edits::Segmented {
    novel_core::edits::Segmented {
        originals: Vec::new(),
        paragraphs: s
            .lines()
            .filter(|l| !l.trim_start().starts_with('#'))
            .map(|l| {
                l.chars()
                    .filter(|c| !c.is_whitespace())
                    .map(|c| (c, false))
                    .collect::<Vec<_>>()
            })
            .filter(|p| !p.is_empty())
            .collect(),
    }
}

impl TextTools<'static> {
    /// No normalisation, paragraphs by line: for callers moving to a stage that reads neither
    /// (`revision`'s `stage revising`).
    pub fn plain() -> Self {
        TextTools {
            normalize: &plain_normalize,
            segment: &plain_segment,
        }
    }
}

/// What `stage refined` measured (`None`: no draft kept to measure against).
fn measure_refinement(
    project: &Project,
    n: u32,
    tools: &TextTools<'_>,
    applied: Option<&Applied>,
) -> Result<Option<novel_core::edits::EditReport>, ChapterError> {
    let draft_rel = crate::layout::staging_draft(n);
    let draft = match crate::io::read_text(&project.path(&draft_rel)) {
        Ok(t) => t,
        Err(StoreError::Io { source, .. }) if source.kind() == std::io::ErrorKind::NotFound => {
            return Ok(None);
        }
        Err(e) => return Err(e.into()),
    };
    let refined = match applied {
        Some(a) => a.text.clone(),
        None => crate::chapter::read_staged(project, &crate::layout::staging_chapter(n))?,
    };
    Ok(Some(novel_core::edits::measure(
        &(tools.segment)(&draft),
        &(tools.segment)(&refined),
    )))
}

/// StyleRefiner's change list applied to the staged text (`stage refined|polished`): the new
/// text, and the record of changes with this list added.
pub struct Applied {
    pub text: String,
    record: String,
}

/// The staged change list of chapter `n` applied to its staged text (`None`: the refiner wrote
/// no list — it edited the file itself, or changed nothing).
pub fn apply_edits(
    project: &Project,
    n: u32,
    to: PipelineStage,
) -> Result<Option<Applied>, ChapterError> {
    let rel = crate::layout::staging_edits(n);
    let list = match crate::io::read_text(&project.path(&rel)) {
        Ok(t) => t,
        Err(StoreError::Io { source, .. }) if source.kind() == std::io::ErrorKind::NotFound => {
            return Ok(None);
        }
        Err(e) => return Err(e.into()),
    };
    let refused = |problems| ChapterError::ChangeList {
        chapter: n,
        problems,
    };
    let changes = novel_core::changes::parse(&list).map_err(refused)?;
    let staged = crate::chapter::read_staged(project, &crate::layout::staging_chapter(n))?;
    let text = novel_core::changes::apply(&staged, &changes).map_err(refused)?;
    let mut record = match crate::io::read_text(&project.path(&crate::layout::staging_changes(n))) {
        Ok(t) => format!("{}\n\n", t.trim_end()),
        Err(_) => String::new(),
    };
    let pass = if to == PipelineStage::Polished {
        "二次润色"
    } else {
        "润色"
    };
    record.push_str(&format!("## {pass}\n\n{}\n", list.trim()));
    Ok(Some(Applied { text, record }))
}

/// Moves the staged files `rels` of chapter `n` out of staging, to
/// `logs/revisions/chapter-NNN/refused-K-<name>` (a refused evaluation or change list: the agent
/// sent back writes a new file, which the client lets it do without reading the old one
/// first). Returns where each went.
fn set_aside(project: &Project, n: u32, rels: &[String]) -> Result<Vec<String>, StoreError> {
    let dir = format!("logs/revisions/{}", crate::layout::chapter_stem(n));
    let taken = |k: usize| {
        rels.iter().any(|rel| {
            let name = rel.rsplit('/').next().unwrap_or(rel);
            project.path(&format!("{dir}/refused-{k}-{name}")).exists()
        })
    };
    let k = (1..).find(|k| !taken(*k)).unwrap_or(1);
    let mut writes = Vec::new();
    let mut remove = Vec::new();
    let mut moved = Vec::new();
    for rel in rels {
        let Ok(content) = crate::io::read_text(&project.path(rel)) else {
            continue;
        };
        let name = rel.rsplit('/').next().unwrap_or(rel);
        let to = format!("{dir}/refused-{k}-{name}");
        writes.push(crate::chapter::JournalWrite {
            path: to.clone(),
            content,
        });
        remove.push(rel.clone());
        moved.push(to);
    }
    if !writes.is_empty() {
        let mut journal = Journal::files(n, String::new(), writes, JournalKind::Stage);
        journal.remove = remove;
        crate::chapter::commit(project, journal)?;
    }
    Ok(moved)
}

/// Moves the chapter in flight to `to`, the stage's line with `figures` added to the pipeline
/// log. The lock's heartbeat is refreshed with `token`. Moving to `drafted` keeps the draft for
/// `refined` to measure StyleRefiner against (over `refine.max_edit_ratio` is refused, the
/// figure goes into the stage's line); moving to `judged` holds each evaluation to the judge's
/// contract (`novel_core::judging`).
pub fn advance(
    project: &Project,
    to: PipelineStage,
    token: &str,
    figures: &StageFigures,
    tools: &TextTools<'_>,
) -> Result<Moved, ChapterError> {
    let _guard = lock::guard(project)?;
    let mut cp = load_checkpoint(project)?;
    if let Some(chapter) = failed_chapter(&cp) {
        return Err(ChapterError::Failed { chapter });
    }
    let n = cp.inflight_chapter.ok_or(ChapterError::NothingInFlight)?;
    lock::heartbeat(project, token)?;
    // What the agents since the last stage spent, as the Agent hook recorded it.
    let (recorded, records) = crate::agent_usage::staged(project, n);
    let figures = &figures.with_recorded(&recorded);
    let mut facts = staging_facts(project, n, Facts::Full);
    // StyleRefiner's change list, applied (in the journal below) before the stage is checked:
    // the text it makes is the one the stage judges.
    let applied = if matches!(to, PipelineStage::Refined | PipelineStage::Polished) {
        apply_edits(project, n, to)
    } else {
        Ok(None)
    };
    if let Ok(Some(a)) = &applied {
        facts.text_digest = Some(novel_core::pipeline::text_digest(a.text.as_bytes()));
    }
    let settings = crate::settings::load(project)?;
    let choice = pipeline::RoundChoice {
        by_author: figures.by_author,
        author_rounds: author_rounds(project, n)?,
        max_author_rounds: settings.gate.max_author_revisions,
    };
    pipeline::check_stage(&cp, n, to, &facts, choice).map_err(ChapterError::Refused)?;
    let applied = applied?;
    let mut edit_ratio = match to {
        PipelineStage::Refined => check_refinement(project, n, tools, applied.as_ref(), &settings)?,
        PipelineStage::Judged => check_evaluations(project, &cp, n, tools).map(|()| None)?,
        _ => None,
    };
    let from = cp.pipeline_stage;
    let (archive, repair_line) = plan_round(project, &mut cp, n, to, &settings)?;
    if to == PipelineStage::Judged && pipeline::current_gate(&cp, n).is_some() {
        // A new evaluation: the verdict on the old one no longer holds.
        cp.gate = None;
    }
    if to == PipelineStage::Polished {
        approve_polished(project, &mut cp, n, applied.as_ref())?;
    }
    cp.pipeline_stage = Some(to);
    cp.last_checkpoint_time = Some(crate::time::now_iso());
    let entry = stage_entry(figures, to, edit_ratio.as_ref(), repair_line);
    let mut journal = Journal::files(n, String::new(), archive.writes, JournalKind::Stage);
    journal.remove = archive.remove;
    journal.remove.extend(records);
    journal
        .writes
        .push(crate::chapter::log_with_stage(project, n, entry)?);
    stage_texts(project, n, to, applied, &mut journal)?;
    journal.writes.push(checkpoint_write(project, &cp));
    // The archive, the stage's line in the pipeline log and the checkpoint, all or nothing.
    crate::chapter::commit(project, journal)?;
    // The paragraphs that changed most explain a refusal; on the way through only the figures
    // go back to the main conversation, which keeps every answer it reads.
    if let Some(r) = edit_ratio.as_mut() {
        r.worst.clear();
    }
    Ok(Moved {
        chapter: n,
        from,
        stage: to,
        revision_count: cp.revision_count,
        archived: archive.archived,
        edit_ratio,
    })
}

/// The stage's line in the pipeline log: its figures, the edit ratio StyleRefiner's pass
/// measured and what a local repair changed, when there are.
fn stage_entry(
    figures: &StageFigures,
    to: PipelineStage,
    edit_ratio: Option<&novel_core::edits::EditReport>,
    repair_line: Option<serde_json::Value>,
) -> serde_json::Value {
    let mut entry = figures.entry(to);
    if let (Some(r), Some(line)) = (edit_ratio, entry.as_object_mut()) {
        line.insert(EDIT_RATIO.into(), edit_ratio_value(r));
    }
    if let (Some(r), Some(line)) = (repair_line, entry.as_object_mut()) {
        line.insert(REPAIR.into(), r);
    }
    entry
}

/// `stage refined`: StyleRefiner's edits measured against the draft (`None`: no draft kept);
/// over `refine.max_edit_ratio` the change list is set aside and the stage refused.
fn check_refinement(
    project: &Project,
    n: u32,
    tools: &TextTools<'_>,
    applied: Option<&Applied>,
    settings: &novel_core::model::Settings,
) -> Result<Option<novel_core::edits::EditReport>, ChapterError> {
    let Some(report) = measure_refinement(project, n, tools, applied)? else {
        return Ok(None);
    };
    let cap = settings.refine.max_edit_ratio;
    if report.over(cap).is_some() {
        if applied.is_some() {
            set_aside(project, n, &[crate::layout::staging_edits(n)])?;
        }
        return Err(ChapterError::EditRatio {
            chapter: n,
            report: Box::new(report),
            cap,
        });
    }
    Ok(Some(report))
}

/// `stage judged`: each evaluation held to the judge's contract; the ones with an error are set
/// aside (the judge writes them again) and the stage refused with the findings.
fn check_evaluations(
    project: &Project,
    cp: &Checkpoint,
    n: u32,
    tools: &TextTools<'_>,
) -> Result<(), ChapterError> {
    let findings = crate::judging::check_staged(project, cp, n, tools.normalize)?;
    if !findings
        .iter()
        .any(novel_core::diagnostic::Diagnostic::is_error)
    {
        return Ok(());
    }
    let mut refused: Vec<String> = findings
        .iter()
        .filter(|f| f.is_error() && f.file.starts_with("staging/evaluations/"))
        .map(|f| f.file.clone())
        .collect();
    refused.sort();
    refused.dedup();
    set_aside(project, n, &refused)?;
    Err(ChapterError::Evaluation { findings })
}

/// `stage polished`: the second polish is what gets committed, so its files become the
/// approved ones (as the stage's journal leaves them, with the change list applied).
fn approve_polished(
    project: &Project,
    cp: &mut Checkpoint,
    n: u32,
    applied: Option<&Applied>,
) -> Result<(), ChapterError> {
    let Some(g) = cp.gate.as_mut() else {
        return Ok(());
    };
    g.staged = staged_digests(project, n)?;
    if let Some(a) = applied {
        let digest = |t: &str| novel_core::pipeline::text_digest(t.as_bytes());
        g.staged
            .insert(crate::layout::staging_chapter(n), digest(&a.text));
        g.staged
            .insert(crate::layout::staging_changes(n), digest(&a.record));
    }
    Ok(())
}

/// The texts a stage writes in its journal: StyleRefiner's change list applied (the new text
/// and the record; the list itself removed), and at `drafted` the draft StyleRefiner will be
/// measured against.
fn stage_texts(
    project: &Project,
    n: u32,
    to: PipelineStage,
    applied: Option<Applied>,
    journal: &mut Journal,
) -> Result<(), ChapterError> {
    if let Some(a) = applied {
        journal.writes.push(JournalWrite {
            path: crate::layout::staging_chapter(n),
            content: a.text,
        });
        journal.writes.push(JournalWrite {
            path: crate::layout::staging_changes(n),
            content: a.record,
        });
        journal.remove.push(crate::layout::staging_edits(n));
    }
    if to == PipelineStage::Drafted {
        journal.writes.push(JournalWrite {
            path: crate::layout::staging_draft(n),
            content: crate::chapter::read_staged(project, &crate::layout::staging_chapter(n))?,
        });
    }
    Ok(())
}

/// What moving to `to` does to the rounds, planned for the stage's journal: a round the gate
/// sent back (`revising`, `drafting`) archives its evaluation and Summarizer outputs (and, for a
/// rewrite, the text) to `logs/revisions/` so the next round cannot reuse them; a local repair
/// (`repairing`) keeps them and archives the judged text with its record; `repaired` splices
/// the writer's new paragraphs into the text (the pipeline log's line says how much).
fn plan_round(
    project: &Project,
    cp: &mut Checkpoint,
    n: u32,
    to: PipelineStage,
    settings: &novel_core::model::Settings,
) -> Result<(crate::chapter::Archive, Option<serde_json::Value>), ChapterError> {
    let round = cp.revision_count + 1;
    let archive = match to {
        PipelineStage::Revising | PipelineStage::Drafting => {
            crate::chapter::plan_archive(project, n, round)?
        }
        PipelineStage::Repairing => plan_repairing(project, cp, n, round, settings)?,
        PipelineStage::Repaired => return plan_repaired(project, cp, n),
        _ => return Ok((crate::chapter::Archive::default(), None)),
    };
    cp.revision_count = round;
    if cp.orchestrator_state == OrchestratorState::Writing {
        cp.orchestrator_state = OrchestratorState::ChapterRewrite;
    }
    Ok((archive, None))
}

/// `stage repairing`: round `round` is a local repair of the parts the gate named. The judged
/// text is archived with the round's record (`novel_core::repair::RepairRecord`); the
/// evaluations and Summarizer outputs stay in staging (the rest of the text is unchanged); a
/// review of an earlier repair and leftover repair files go.
fn plan_repairing(
    project: &Project,
    cp: &Checkpoint,
    n: u32,
    round: u32,
    settings: &novel_core::model::Settings,
) -> Result<crate::chapter::Archive, ChapterError> {
    let parts = pipeline::current_gate(cp, n)
        .map(|g| g.repair.clone())
        .unwrap_or_default();
    let text = crate::chapter::read_staged(project, &crate::layout::staging_chapter(n))?;
    let record = crate::repair::new_record(n, round, &parts, &text, &settings.craft);
    crate::io::create_dir_all(&project.path(crate::layout::STAGING_REPAIRS))?;
    let mut out = crate::chapter::Archive::default();
    let review = crate::layout::staging_repair_review(n);
    if let Ok(content) = crate::chapter::read_staged(project, &review) {
        let to = format!(
            "{}/{}",
            crate::layout::revision_dir(n, round),
            novel_core::naming::repair_review_name(n)
        );
        out.writes.push(JournalWrite {
            path: to.clone(),
            content,
        });
        out.remove.push(review);
        out.archived.push(to);
    }
    for part in novel_core::model::RepairPart::ALL {
        let rel = crate::layout::staging_repair(n, part);
        if project.path(&rel).exists() {
            out.remove.push(rel);
        }
    }
    out.archived.push(record.base.clone());
    out.writes.push(JournalWrite {
        path: record.base.clone(),
        content: text,
    });
    let rel = crate::layout::repair_record(n, round);
    out.archived.push(rel.clone());
    out.writes.push(JournalWrite {
        path: rel,
        content: crate::io::to_json_text(&record),
    });
    Ok(out)
}

/// `stage repaired`: the writer's new paragraphs put in place of the round's windows (or its
/// own edit of the chapter file held to them), the repair files consumed.
fn plan_repaired(
    project: &Project,
    cp: &Checkpoint,
    n: u32,
) -> Result<(crate::chapter::Archive, Option<serde_json::Value>), ChapterError> {
    let Some(record) = crate::repair::current(project, cp, n)? else {
        return Err(ChapterError::Refused(StageRefusal {
            code: "E_STAGING",
            reason: format!("第 {n} 章这一轮不是局部修补：没有修补记录"),
            hint: "novel chapter recover 会告诉你从哪一步继续".into(),
        }));
    };
    let spliced =
        crate::repair::splice(project, n, &record)?.map_err(|problems| ChapterError::Repair {
            chapter: n,
            problems,
        })?;
    let line = serde_json::json!({
        "round": record.round,
        "parts": record.parts.iter().map(|p| p.part.name()).collect::<Vec<_>>(),
        "replaced_chars": record.windows.iter().map(|w| w.chars).sum::<usize>(),
        "written_chars": spliced.written.iter().map(|(_, c)| c).sum::<usize>(),
    });
    let mut out = crate::chapter::Archive::default();
    out.writes.push(JournalWrite {
        path: crate::layout::staging_chapter(n),
        content: spliced.text,
    });
    out.remove = spliced.consumed;
    Ok((out, Some(line)))
}

/// A stage line's key for a local repair's figures (`stage repaired`).
pub const REPAIR: &str = "repair";

/// The stage line's record of a measure: the two ratios and the total (no paragraphs).
fn edit_ratio_value(r: &novel_core::edits::EditReport) -> serde_json::Value {
    let round = |x: f64| (x * 10_000.0).round() / 10_000.0;
    serde_json::json!({
        "narration": round(r.narration.ratio),
        "dialogue": round(r.dialogue.ratio),
        "total": round(r.total.ratio),
        "changed_chars": r.total.changed,
    })
}

/// What `chapter commit` did.
#[derive(Debug, Clone)]
pub struct Committed {
    pub checkpoint: Checkpoint,
    pub journal: crate::chapter::Journal,
    pub gate: Option<novel_core::model::checkpoint::GateRecord>,
    /// `004`: the chapter's character actions in the memories (never blocks the commit).
    pub memory: crate::memory::Recorded,
}

/// What the skill reports of a committed chapter, as its pipeline log records it.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
pub struct CommitFigures {
    /// 字数 (`novel count`'s rule).
    pub chars: Option<u64>,
    /// The score the gate counted.
    pub gate_overall: Option<f64>,
    /// That score as it is printed (`novel_core::gate::score_text`).
    pub gate_overall_text: Option<String>,
    pub gate_decision: Option<novel_core::model::common::GateDecision>,
    pub revisions: u32,
    pub accepted_by_author: bool,
}

impl Committed {
    /// The figures of chapter `n`'s committed pipeline log (`logs/chapter-NNN-log.json`, as
    /// the journal wrote it); all empty if the journal had none.
    pub fn figures(&self, n: u32) -> CommitFigures {
        let rel = crate::layout::log_file(n);
        let Some(log) = self
            .journal
            .writes
            .iter()
            .find(|w| w.path == rel)
            .and_then(|w| serde_json::from_str::<novel_core::model::PipelineLog>(&w.content).ok())
        else {
            return CommitFigures::default();
        };
        let extra = |k: &str| log.extra.get(k);
        CommitFigures {
            chars: extra(crate::status::LOG_CHARS).and_then(serde_json::Value::as_u64),
            gate_overall: extra(crate::status::LOG_GATE_OVERALL)
                .and_then(serde_json::Value::as_f64),
            gate_overall_text: extra(crate::status::LOG_GATE_OVERALL)
                .and_then(serde_json::Value::as_f64)
                .map(novel_core::gate::score_text),
            gate_decision: log.gate_decision,
            revisions: log.revisions,
            accepted_by_author: extra(crate::status::LOG_ACCEPTED_BY_AUTHOR)
                .and_then(serde_json::Value::as_bool)
                .unwrap_or(false),
        }
    }
}

/// `novel chapter commit N`: the in-flight chapter `n`, judged and let through by its gate
/// (`accept`: the author takes a paused, polish-pending or revise-pending chapter as it is —
/// the staged files as they are now), committed all-or-nothing through the journal; then the
/// character actions into the memories.
pub fn commit(
    project: &Project,
    n: u32,
    token: &str,
    accept: bool,
    count: &dyn Fn(&str) -> usize,
) -> Result<Committed, ChapterError> {
    let _guard = lock::guard(project)?;
    use novel_core::model::common::GateDecision as D;
    lock::ensure_no_journal(project)?;
    let mut cp = load_checkpoint(project)?;
    if let Some(chapter) = failed_chapter(&cp) {
        return Err(ChapterError::Failed { chapter });
    }
    if cp.inflight_chapter != Some(n) {
        return Err(ChapterError::NotInFlight {
            chapter: n,
            inflight: cp.inflight_chapter,
            last: cp.last_completed_chapter,
        });
    }
    if !matches!(
        cp.pipeline_stage,
        Some(PipelineStage::Judged | PipelineStage::Polished)
    ) {
        return Err(ChapterError::CommitStage {
            chapter: n,
            stage: pipeline::stage_name(cp.pipeline_stage),
        });
    }
    let gate = pipeline::current_gate(&cp, n).cloned();
    if !pipeline::commit_allowed(&cp, n, accept) {
        return Err(ChapterError::Gate {
            chapter: n,
            gate: gate.map(Box::new),
        });
    }
    lock::heartbeat(project, token)?;
    if accept
        && cp.pipeline_stage == Some(PipelineStage::Judged)
        && let Some(g) = cp.gate.as_mut()
        && matches!(g.decision, D::Pause | D::Polish | D::Revise)
    {
        g.accepted_by_author = true;
        g.staged = staged_digests(project, n)?;
    }
    let now = crate::time::now_iso();
    let plan = crate::chapter::plan_commit(project, &cp, n, token, &now, count)?;
    crate::io::pausepoint("commit-planned");
    let journal = crate::chapter::commit(project, plan.journal)?;
    let memory = plan.memory;
    Ok(Committed {
        checkpoint: load_checkpoint(project)?,
        journal,
        gate,
        memory,
    })
}

/// The craft check of a staged text with the project's thresholds (`novel_text::craft`, which
/// the store does not know: the CLI hands it in, as it hands in the normaliser).
pub type CraftFn =
    dyn Fn(&str, &novel_core::model::settings::CraftThresholds) -> novel_core::gate::CraftCheck;

/// `novel chapter gate N`: the gate's verdict on the in-flight chapter's evaluations (with
/// the project's thresholds and weights, the key-chapter rule, the storyline spec and the
/// leak check of the current text), recorded in the checkpoint with the digests of the staged
/// files it approves. Reasons the gate could not check something are added to the result.
pub fn gate(
    project: &Project,
    n: u32,
    token: &str,
    normalize: &dyn Fn(&str) -> String,
    craft: &CraftFn,
) -> Result<novel_core::gate::GateResult, ChapterError> {
    let _guard = lock::guard(project)?;
    let mut cp = load_checkpoint(project)?;
    if let Some(chapter) = failed_chapter(&cp) {
        return Err(ChapterError::Failed { chapter });
    }
    if cp.inflight_chapter != Some(n) || cp.pipeline_stage != Some(PipelineStage::Judged) {
        return Err(ChapterError::GateStage {
            chapter: n,
            inflight: cp.inflight_chapter,
            stage: pipeline::stage_name(cp.pipeline_stage),
        });
    }
    lock::heartbeat(project, token)?;
    let evals = gated_evaluations(project, &cp, n, normalize)?;
    let previous_fixes = crate::judging::previous_fixes(project, n, cp.revision_count);
    let settings = crate::settings::load(project)?;
    let vol = crate::chapter::chapter_volume(project, n, cp.current_volume)?;
    let spec: Option<novel_core::model::StorylineSpec> = crate::io::read_json(
        &project.path(crate::layout::STORYLINE_SPEC),
        "LS 故事线规范",
    )
    .ok();
    let leak = crate::chapter::leak_result(project, n)?;
    let facts = staging_facts(project, n, Facts::Full);
    let text = crate::io::read_text(&project.path(&novel_core::naming::staging_chapter(n)))?;
    let mut craft_check = craft(&text, &settings.craft);
    if let Some(r) = crate::repair::current(project, &cp, n)? {
        // A local repair: the judge's review counts with the program's check of the new text.
        craft_check = craft_check.with_review(&crate::repair::not_done(project, n, &r)?);
    }
    let input = novel_core::gate::GateInput {
        chapter: n,
        evaluations: evals.iter().map(|(_, e)| e).collect(),
        thresholds: &settings.gate,
        revision_count: cp.revision_count,
        key_reasons: vol.key_reasons(n),
        storyline_spec: spec.as_ref(),
        leak: leak.as_ref().filter(|l| l.text_digest == facts.text_digest),
        previous_fixes: &previous_fixes,
        craft: Some(&craft_check),
    };
    let mut result = novel_core::gate::decide(&input)?;
    result
        .reasons
        .extend(unchecked(n, &vol, leak.is_some(), input.leak.is_some()));
    result.moves = pipeline::gate_moves(
        result.decision,
        !result.repair.is_empty(),
        n,
        author_rounds(project, n)?,
        settings.gate.max_author_revisions,
    );
    cp.gate = Some(novel_core::model::checkpoint::GateRecord {
        chapter: n,
        decision: result.decision,
        overall: result.overall,
        force_passed: result.force_passed,
        revision: cp.revision_count,
        text_digest: facts.text_digest.clone(),
        accepted_by_author: false,
        staged: staged_digests(project, n)?,
        repair: result.repair.clone(),
        extra: Default::default(),
    });
    cp.last_checkpoint_time = Some(crate::time::now_iso());
    write_checkpoint(project, &cp)?;
    Ok(result)
}

/// The staged evaluations the gate may weigh: no second judge copied from the first, and every
/// one still held to the judge's contract (they may have changed since `stage judged`).
fn gated_evaluations(
    project: &Project,
    cp: &Checkpoint,
    n: u32,
    normalize: &dyn Fn(&str) -> String,
) -> Result<Vec<(String, novel_core::model::Evaluation)>, ChapterError> {
    let evals = crate::chapter::staged_evaluations(project, n)?;
    if let [(_, first), rest @ ..] = evals.as_slice()
        && let Some((rel, _)) = rest.iter().find(|(_, e)| e == first)
    {
        return Err(ChapterError::CopiedSecondJudge { file: rel.clone() });
    }
    let findings = crate::judging::check_staged(project, cp, n, normalize)?;
    if findings
        .iter()
        .any(novel_core::diagnostic::Diagnostic::is_error)
    {
        return Err(ChapterError::Evaluation { findings });
    }
    Ok(evals)
}

/// What the gate could not check: the volume's span or schedule, the leak check.
fn unchecked(
    n: u32,
    vol: &crate::chapter::ChapterVolume,
    leak_found: bool,
    leak_current: bool,
) -> Vec<String> {
    let mut out = Vec::new();
    let dir = crate::layout::volume_dir(vol.volume);
    match (vol.range, &vol.schedule) {
        (None, None) => out.push(format!(
            "第 {} 卷的章节范围未知、也没有 {dir}/storyline-schedule.json：无法判断卷首、卷尾与交汇事件章，未要求双裁判",
            vol.volume
        )),
        (Some(_), None) => out.push(format!(
            "没有 {dir}/storyline-schedule.json：无法判断交汇事件章"
        )),
        _ => {}
    }
    match (leak_found, leak_current) {
        (false, _) => out.push(format!(
            "没有串线检查结果：门控前运行 novel check leak --chapter {n}"
        )),
        (true, false) => out.push(format!(
            "串线检查结果是针对旧稿的：门控前重新运行 novel check leak --chapter {n}"
        )),
        _ => {}
    }
    out
}

/// What `chapter begin` did.
#[derive(Debug, Clone)]
pub struct Begun {
    pub checkpoint: Checkpoint,
    pub lock: lock::Acquired,
    /// The chapter was already in flight: its stage is kept.
    pub resuming: bool,
    pub from_state: OrchestratorState,
    /// The error record cleared when the chapter was in ERROR_RETRY.
    pub recovered: Option<novel_core::model::checkpoint::ErrorRecord>,
    /// Why the chapter is a key chapter (two judges), as the gate will decide it — known up
    /// front so both judges can be sent at once. Empty when its volume's plan cannot be read
    /// (the gate reports that).
    pub key_reasons: Vec<novel_core::gate::KeyReason>,
}

/// `novel chapter begin N`: takes the project lock for `owner` (this session's process when
/// it already holds it for chapter `n` — e.g. after the conversation lost the token — hands
/// the same token back), re-reads the checkpoint under it, and sets the chapter in flight
/// (`drafting`, a fresh pipeline log) or resumes it; ERROR_RETRY and VOL_REVIEW go back to the
/// state before. Whatever fails after the lock was taken releases it again.
pub fn begin(
    project: &Project,
    n: u32,
    owner: u32,
    stale_after: std::time::Duration,
) -> Result<Begun, ChapterError> {
    let _guard = lock::guard(project)?;
    lock::ensure_no_journal(project)?;
    let before = load_checkpoint(project)?;
    pipeline::check_begin(&before, n).map_err(ChapterError::Refused)?;
    if before.inflight_chapter != Some(n) {
        state_present(project)?;
        crate::plan::check_chapter_plan(project, n, before.current_volume)
            .map_err(ChapterError::Refused)?;
    }
    let (got, took) =
        match lock::acquire_for(project, Some(n), owner, stale_after, Some(lock::BEGIN)) {
            Ok(got) => (got, true),
            // This session's own lock for the chapter: the chapter is in flight, or an earlier
            // begin of it was killed before its journal.
            Err(LockError::Held { info, .. })
                if info.pid == owner
                    && info.host == lock::host_name()
                    && (before.inflight_chapter == Some(n)
                        || info.chapter == Some(n)
                            && info.command.as_deref() == Some(lock::BEGIN)) =>
            {
                let acquired = lock::Acquired {
                    info: *info,
                    broke_stale: None,
                };
                (acquired, false)
            }
            Err(e) => return Err(e.into()),
        };
    // The lock is placed, the journal not yet written (`NOVEL_FAILPOINT=begin:0`).
    crate::io::failpoint("begin", 0);
    let started = start_locked(project, n).inspect_err(|_| {
        if took {
            let _ = lock::release(project, &got.info.token);
        }
    })?;
    let key_reasons = crate::chapter::chapter_volume(project, n, started.checkpoint.current_volume)
        .map(|v| v.key_reasons(n))
        .unwrap_or_default();
    Ok(Begun {
        checkpoint: started.checkpoint,
        lock: got,
        resuming: started.resuming,
        from_state: started.from_state,
        recovered: started.recovered,
        key_reasons,
    })
}

/// A new chapter starts only on a state file: its delta is checked and merged against it (a
/// book whose `state/` was removed must get it back first — from a backup, or rebuilt from its
/// changelog).
fn state_present(project: &Project) -> Result<(), ChapterError> {
    if std::fs::symlink_metadata(project.path(crate::layout::CURRENT_STATE)).is_ok() {
        return Ok(());
    }
    Err(ChapterError::Refused(pipeline::StageRefusal {
        code: "E_STATE_MISSING",
        reason: format!("状态文件 {} 不存在，不能开始新的一章", crate::layout::CURRENT_STATE),
        hint: "从 state/backups/ 或版本库找回 state/ 目录；只丢了状态文件而变更日志还在时，运行 novel state rebuild --write 按变更日志重建".into(),
    }))
}

/// What the locked part of `begin` did.
struct Started {
    checkpoint: Checkpoint,
    resuming: bool,
    from_state: OrchestratorState,
    recovered: Option<novel_core::model::checkpoint::ErrorRecord>,
}

/// The part of `begin` done under the lock: re-read the checkpoint (another session may have
/// moved the book on meanwhile), set the chapter in flight, make sure staging is there.
fn start_locked(project: &Project, n: u32) -> Result<Started, ChapterError> {
    let mut cp = load_checkpoint(project)?;
    pipeline::check_begin(&cp, n).map_err(ChapterError::Refused)?;
    let resuming = cp.inflight_chapter == Some(n);
    let from_state = cp.orchestrator_state;
    let next_state = pipeline::state_after_begin(&cp);
    let recovered = if from_state == OrchestratorState::ErrorRetry {
        cp.error.take()
    } else {
        None
    };
    cp.orchestrator_state = next_state;
    crate::chapter::ensure_staging_dirs(project)?;
    let mut writes = Vec::new();
    if !resuming {
        cp.inflight_chapter = Some(n);
        cp.pipeline_stage = Some(PipelineStage::Drafting);
        cp.revision_count = 0;
        cp.gate = None;
        // A fresh pipeline log for the chapter.
        let log =
            serde_json::json!({"chapter": n, "started_at": crate::time::now_iso(), "stages": []});
        writes.push(JournalWrite {
            path: crate::layout::staging_log(n),
            content: crate::io::to_json_text(&log),
        });
    }
    cp.last_checkpoint_time = Some(crate::time::now_iso());
    // The fresh log and the checkpoint together.
    writes.push(checkpoint_write(project, &cp));
    crate::chapter::commit(
        project,
        Journal::files(n, String::new(), writes, JournalKind::Stage),
    )?;
    Ok(Started {
        checkpoint: cp,
        resuming,
        from_state,
        recovered,
    })
}

/// `novel chapter fail N --reason R`: the chapter in flight recorded as failed (ERROR_RETRY,
/// the state before kept for `begin` to return to), the lock released, staging untouched.
/// The reason must not be empty (the caller checks the argument).
pub fn fail(
    project: &Project,
    n: u32,
    token: &str,
    reason: &str,
) -> Result<Checkpoint, ChapterError> {
    let _guard = lock::guard(project)?;
    lock::ensure_no_journal(project)?;
    let mut cp = load_checkpoint(project)?;
    pipeline::check_fail(&cp, n).map_err(ChapterError::Refused)?;
    lock::verify(project, token)?;
    let previous = match (&cp.orchestrator_state, &cp.error) {
        (OrchestratorState::ErrorRetry, Some(e)) => e.previous_state,
        (OrchestratorState::ErrorRetry, None) => OrchestratorState::Writing,
        (s, _) => *s,
    };
    let now = crate::time::now_iso();
    cp.error = Some(novel_core::model::ErrorRecord {
        previous_state: previous,
        reason: reason.to_string(),
        at: Some(now.clone()),
        chapter: Some(n),
        extra: Default::default(),
    });
    cp.orchestrator_state = OrchestratorState::ErrorRetry;
    cp.last_checkpoint_time = Some(now);
    write_checkpoint(project, &cp)?;
    lock::release(project, token)?;
    Ok(cp)
}

/// What `novel chapter recover` did, and where the pipeline resumes (`data` of its JSON, in
/// this key order).
#[derive(Debug, Serialize)]
pub struct Recovered {
    /// What was repaired, one sentence each (a journal finished, a stale lock cleared, temp
    /// files swept, the stage moved back).
    pub actions: Vec<String>,
    /// Who holds the lock when a live session does.
    pub lock: Option<String>,
    pub resume: pipeline::Resume,
    /// The in-flight chapter's staging facts.
    pub staging: Option<pipeline::StagingFacts>,
    pub last_completed_chapter: u32,
}

/// `novel chapter recover`: finishes an interrupted journal (never under a live holder's
/// feet), clears a stale lock, sweeps temp files, moves the stage back when staging lacks what
/// it needs, and says where to resume.
pub fn recover(project: &Project, stale: std::time::Duration) -> Result<Recovered, ChapterError> {
    let _guard = lock::guard(project)?;
    use crate::chapter as tx;
    let mut actions = Vec::new();
    match tx::recover_journal(project, stale) {
        Ok(Some(journal)) => actions.push(format!("补完了中断的{}", journal.describe())),
        Ok(None) => {}
        Err(LockError::Held { holder, .. }) => {
            let what = tx::read_journal(project)
                .ok()
                .flatten()
                .map_or_else(|| "一次写入".to_string(), |j| j.describe());
            return Err(ChapterError::JournalHeld { what, holder });
        }
        Err(e) => return Err(e.into()),
    }
    if let Some(b) = lock::break_stale(project, stale)? {
        actions.push(match &b.info {
            Some(info) => format!("清除了僵尸锁（{}）：{}", b.why, lock::describe(info)),
            None => format!("清除了僵尸锁（{}）", b.why),
        });
    }
    let inflight = load_checkpoint(project)?.inflight_chapter;
    if let Some(info) = lock::break_unused_begin(project, inflight, stale)? {
        actions.push(format!(
            "清除了没有开始成功的 chapter begin 留下的锁（它在写下断点之前被打断）：{}",
            lock::describe(&info)
        ));
    }
    let lock_note = match lock::status(project, stale) {
        lock::LockState::Held { info, .. } => Some(format!(
            "锁由 {} 持有，它可能还在工作",
            lock::describe(&info)
        )),
        _ => None,
    };
    for left in tx::sweep_leftovers(project) {
        actions.push(format!("清理了中断留下的临时文件 {left}"));
    }
    let mut cp = load_checkpoint(project)?;
    let facts = cp
        .inflight_chapter
        .map(|n| staging_facts(project, n, Facts::Full));
    let nothing = pipeline::StagingFacts::nothing();
    let mut resume = pipeline::resume_point(&cp, facts.as_ref().unwrap_or(&nothing));
    if let Some(to) = resume.rewind_to {
        // The stage is ahead of what staging still holds: move it back so the step can run.
        let from = cp.pipeline_stage;
        cp.pipeline_stage = Some(to);
        cp.last_checkpoint_time = Some(crate::time::now_iso());
        write_checkpoint(project, &cp)?;
        actions.push(format!(
            "staging 缺少文件，阶段从 {} 退回 {}",
            pipeline::stage_name(from),
            pipeline::stage_name(Some(to))
        ));
        resume = pipeline::resume_point(&cp, facts.as_ref().unwrap_or(&nothing));
    }
    Ok(Recovered {
        actions,
        lock: lock_note,
        resume,
        staging: facts,
        last_completed_chapter: cp.last_completed_chapter,
    })
}

/// The checkpoint's new text as a journal write (the author's `null` keys kept).
fn checkpoint_write(project: &Project, cp: &Checkpoint) -> JournalWrite {
    JournalWrite {
        path: crate::layout::CHECKPOINT.to_string(),
        content: crate::io::rewrite_text(&project.path(crate::layout::CHECKPOINT), cp),
    }
}
