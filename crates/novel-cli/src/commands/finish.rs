//! When a pipeline agent's work is done (the PostToolUse hook, `novel hook post-tool-use`): the
//! agent writes its files in its first message, the JSON it returns ahead of the writes; once
//! the last of them is written and the program's checks pass, the hook ends the agent
//! (`"continue": false`) and the client hands that JSON to the main conversation — one request
//! per dispatch instead of a second one that only says "done". A check that fails is handed
//! back (`"decision": "block"`) and the agent fixes the file in its next message.
//!
//! What "done" means, per agent, for the chapter in flight:
//!
//! | agent | file | checked |
//! |---|---|---|
//! | chapter-writer | the staged text (drafting, revising) | 字数 in `chapter_length` |
//! | chapter-writer | a local repair's new paragraphs (repairing), one file a part | every part written, and they splice into the judged text (`novel_core::repair`) |
//! | summarizer | summary, delta, storyline memory (drafting, revising) | all three there and valid (the guard's `written`) |
//! | style-refiner | the change list (drafted; judged for a polish) | every item fits the staged text; after `stage drafted`, the edit ratio against the kept draft |
//! | quality-judge | its evaluation (refined) | the judge's contract (checked before, by the guard) |
//! | quality-judge | its review of a local repair (repaired) | the review's contract (checked before, by the guard) |

use std::path::Path;

use novel_core::context::Agent;
use novel_core::model::PipelineStage as S;
use novel_store::guard::Located;
use novel_store::layout;

/// What the hook answers after a pipeline agent's write.
pub enum Verdict {
    /// The agent's work is done: end it (the reason is logged by the client).
    Done(String),
    /// Hand this back to the agent.
    Fix(String),
}

/// The verdict on `file`, just written by `agent_type` (`novel:<agent>`); `None` when the write
/// is not the last of a pipeline agent's work (or not a pipeline agent's at all).
pub fn after_write(agent_type: &str, file: &Path, cwd: Option<&Path>) -> Option<Verdict> {
    let agent = Agent::from_name(agent_type.strip_prefix("novel:")?)?;
    if !agent.per_chapter() {
        return None;
    }
    let l = novel_store::guard::locate(file, cwd).pop()?;
    let cp = novel_store::chapter::load_checkpoint(&l.project).ok()?;
    let n = cp.inflight_chapter?;
    let stage = cp.pipeline_stage;
    let drafting = matches!(stage, None | Some(S::Drafting | S::Revising));
    match agent {
        Agent::ChapterWriter if drafting && l.rel == layout::staging_chapter(n) => {
            Some(writer(&l, n))
        }
        Agent::Summarizer if drafting && summarizer_file(&l.rel, n) => summarizer(&l, n),
        Agent::ChapterWriter
            if stage == Some(S::Repairing) && l.rel.starts_with(layout::STAGING_REPAIRS) =>
        {
            repair_writer(&l, n)
        }
        Agent::QualityJudge
            if stage == Some(S::Repaired)
                && l.rel == layout::staging_repair_review(n)
                && l.path.is_file() =>
        {
            Some(Verdict::Done(format!(
                "novel：第 {n} 章局部修补的复核已写好并通过检查"
            )))
        }
        Agent::StyleRefiner
            if matches!(stage, Some(S::Drafted | S::Judged))
                && l.rel == layout::staging_edits(n) =>
        {
            Some(refiner(&l, n, stage == Some(S::Drafted)))
        }
        Agent::QualityJudge
            if stage == Some(S::Refined)
                && l.rel.starts_with("staging/evaluations/")
                && l.path.is_file() =>
        {
            Some(Verdict::Done(format!(
                "novel：第 {n} 章的评估已写好并通过检查"
            )))
        }
        _ => None,
    }
}

/// ChapterWriter's text: done when its 字数 is within the project's target.
fn writer(l: &Located, n: u32) -> Verdict {
    let Ok(text) = novel_store::io::read_text(&l.path) else {
        return Verdict::Fix(format!("novel：读不到刚写入的 {}，请重新写入", l.rel));
    };
    let target = novel_store::settings::load_or_default(Some(&l.project))
        .map(|s| s.chapter_length)
        .unwrap_or_default();
    let chars = novel_text::count::count(&text).chars;
    let verdict = novel_text::count::LengthVerdict::of(chars, target.min, target.max);
    if verdict != novel_text::count::LengthVerdict::Within {
        let what = if verdict == novel_text::count::LengthVerdict::Short {
            "补写（补的是戏，不是景物和心理独白）"
        } else {
            "删减"
        };
        return Verdict::Fix(format!(
            "novel：第 {n} 章正文 {chars} 字，目标 {}–{} 字：{what}到区间内，再用 Write 整章重写 {}（不必先读）。",
            target.min, target.max, l.rel
        ));
    }
    Verdict::Done(format!("novel：第 {n} 章正文已写好（{chars} 字）"))
}

/// ChapterWriter's local repair: done when every part the round repairs has its file and they
/// splice into the judged text (`stage repaired` will do the same); a part still to write is
/// no verdict yet.
fn repair_writer(l: &Located, n: u32) -> Option<Verdict> {
    let project = &l.project;
    let cp = novel_store::chapter::load_checkpoint(project).ok()?;
    let record = novel_store::repair::current(project, &cp, n).ok()??;
    let all_written = record
        .part_names()
        .into_iter()
        .all(|p| project.path(&layout::staging_repair(n, p)).is_file());
    if !all_written {
        return None;
    }
    Some(match novel_store::repair::splice(project, n, &record) {
        Ok(Ok(_)) => Verdict::Done(format!("novel：第 {n} 章的局部修补已写好，放得进正文")),
        Ok(Err(problems)) => Verdict::Fix(format!(
            "novel：第 {n} 章的局部修补放不进正文：\n{}改好后用 Write 重写 {}（不必先读）。",
            novel_core::repair::describe(&problems),
            l.rel
        )),
        Err(e) => Verdict::Fix(format!("novel：{e}")),
    })
}

fn summarizer_file(rel: &str, n: u32) -> bool {
    rel == layout::staging_summary(n)
        || rel == layout::staging_delta(n)
        || (rel.starts_with("staging/storylines/") && rel.ends_with("/memory.md"))
}

/// Summarizer's three files: done when all are there and pass the guard's checks (each file's
/// own errors were handed back as it was written).
fn summarizer(l: &Located, n: u32) -> Option<Verdict> {
    let project = &l.project;
    let facts = novel_store::chapter::staging_facts(project, n, novel_store::chapter::Facts::Full);
    let memory = facts
        .storyline_id
        .as_deref()
        .and_then(|id| layout::staging_memory(id).ok())?;
    for rel in [layout::staging_summary(n), layout::staging_delta(n), memory] {
        let path = project.path(&rel);
        if !path.is_file() || !novel_store::guard::written(&path, None).is_empty() {
            return None;
        }
    }
    Some(Verdict::Done(format!(
        "novel：第 {n} 章的摘要、状态增量、故事线记忆都已写好并通过校验"
    )))
}

/// StyleRefiner's change list: done when it applies to the staged text and, for the first pass
/// (`first`), stays within the edit-ratio cap against the kept draft.
fn refiner(l: &Located, n: u32, first: bool) -> Verdict {
    let project = &l.project;
    let to = if first { S::Refined } else { S::Polished };
    let applied = match novel_store::stage::apply_edits(project, n, to) {
        Ok(Some(a)) => a,
        Ok(None) => return Verdict::Fix(format!("novel：读不到刚写入的 {}", l.rel)),
        Err(e) => {
            return Verdict::Fix(format!(
                "novel：{e}\n改好后用 Write 重写 {}（不必先读）。",
                l.rel
            ));
        }
    };
    if first && let Ok(draft) = novel_store::io::read_text(&project.path(&layout::staging_draft(n)))
    {
        let segment = |t: &str| novel_text::segment::Document::new(t).segmented();
        let report = novel_core::edits::measure(&segment(&draft), &segment(&applied.text));
        let cap = novel_store::settings::load(project)
            .map(|s| s.refine.max_edit_ratio)
            .unwrap_or(0.15);
        if report.over(cap).is_some() {
            let refused = novel_store::stage::ChapterError::EditRatio {
                chapter: n,
                report: Box::new(report),
                cap,
            };
            return Verdict::Fix(format!(
                "novel：{refused}\n撤掉改得最多的那几条（先撤不在黑名单、句式上的），用 Write 重写 {}（不必先读）。",
                l.rel
            ));
        }
    }
    Verdict::Done(format!("novel：第 {n} 章的修改清单已写好并套得上正文"))
}
