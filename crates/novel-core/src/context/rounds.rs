//! The sections that hand a gate round back to the agent who acts on it:
//!
//! - `revision` — ChapterWriter after `stage revising` (gate `revise`, or the author's choice
//!   after `pause`): the fixes, violations and issues of **every** evaluation of the round
//!   (a key chapter has two judges; the gate took the lower score and the union of violations)
//!   and the overall the gate used.
//! - `rewrite` — ChapterWriter after `stage drafting` following a gate `rewrite` or `pause`:
//!   why the chapter was sent back and where its draft is archived, never the old text.
//! - `polish` — StyleRefiner after a gate `polish`: the judges' notes, labelled, with the
//!   style dimension first.
//! - `repair` — a local repair (`crate::repair`; the gate sent the chapter back for its opening
//!   or its ending alone): for ChapterWriter (`repairing`) why, the paragraphs to replace and
//!   the text around them, the next chapter's outline; for QualityJudge (`repaired`) why, the
//!   old paragraphs and the new. Their packets are this section and the task only.
//!
//! Which of these applies is read from the checkpoint alone ([`pass_of`]), so the store knows
//! what to load and the assembler what to render.

use super::Agent;
use super::packet::Section;
use super::text::cut_chars;
use crate::model::checkpoint::GateRecord;
use crate::model::common::GateDecision;
use crate::model::{Checkpoint, Evaluation, PipelineStage};

use super::inputs::Inputs;

/// A judge's note is cut to this many characters.
const NOTE_MAX_CHARS: usize = 300;
/// Notes listed in a `polish` section (StyleRefiner's budget is small).
const POLISH_NOTES: usize = 15;

/// Which pass of the chapter a packet is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pass {
    /// A first draft, refinement, summary or judgement.
    Normal,
    /// ChapterWriter revising the draft in place (`pipeline_stage: revising`).
    Revising,
    /// ChapterWriter writing the chapter again after the gate sent the round back
    /// (`pipeline_stage: drafting` with `revision_count` ≥ 1).
    Rewrite,
    /// StyleRefiner's second pass after a gate `polish`.
    Polish,
    /// ChapterWriter rewriting only the opening or the ending (`pipeline_stage: repairing`).
    Repair,
    /// QualityJudge re-checking a local repair (`pipeline_stage: repaired`).
    RepairReview,
}

/// The pass `agent` works on for `chapter`, from the checkpoint.
pub fn pass_of(agent: Agent, cp: Option<&Checkpoint>, chapter: u32) -> Pass {
    let Some(cp) = cp.filter(|c| c.inflight_chapter == Some(chapter)) else {
        return Pass::Normal;
    };
    match (agent, cp.pipeline_stage) {
        (Agent::ChapterWriter, Some(PipelineStage::Revising)) => Pass::Revising,
        (Agent::ChapterWriter, Some(PipelineStage::Repairing)) => Pass::Repair,
        (Agent::QualityJudge, Some(PipelineStage::Repaired)) => Pass::RepairReview,
        (Agent::ChapterWriter, Some(PipelineStage::Drafting)) if cp.revision_count > 0 => {
            Pass::Rewrite
        }
        (Agent::StyleRefiner, Some(PipelineStage::Judged | PipelineStage::Polished))
            if crate::pipeline::current_gate(cp, chapter)
                .is_some_and(|g| g.decision == GateDecision::Polish) =>
        {
            Pass::Polish
        }
        _ => Pass::Normal,
    }
}

/// The gate verdict the pass refers to: the current round's for a polish, the round sent back
/// (one revision earlier) for a revision or a rewrite.
fn gate_of(inputs: &Inputs, pass: Pass) -> Option<&GateRecord> {
    let cp = inputs.checkpoint.as_ref()?;
    let g = cp.gate.as_ref().filter(|g| g.chapter == inputs.chapter)?;
    let wanted = match pass {
        Pass::Polish => cp.revision_count,
        _ => cp.revision_count.checked_sub(1)?,
    };
    (g.revision == wanted).then_some(g)
}

/// `chapter-048-eval.json` → 主裁判; `…-eval-secondary.json` → 第二裁判; `…-eval-x.json` →
/// 裁判 x.
fn judge_label(path: &str) -> String {
    let name = path.rsplit('/').next().unwrap_or(path);
    let stem = name.strip_suffix(".json").unwrap_or(name);
    match stem.split_once("-eval") {
        Some((_, "")) | None => "主裁判".to_string(),
        Some((_, "-secondary")) => "第二裁判".to_string(),
        Some((_, judge)) => format!("裁判 {}", judge.trim_start_matches('-')),
    }
}

/// "门控结论「修订 revise」，总分 3.12（关键章双裁判：主裁判 3.40、第二裁判 3.12，取较低分）".
/// Each judge's score is recomputed with the project's weights, as the gate does; the overall is
/// the gate's own when its verdict is on record.
fn score_line(inputs: &Inputs, gate: Option<&GateRecord>) -> String {
    let weights = &inputs.settings.gate.weights;
    let scores: Vec<(String, f64)> = inputs
        .evaluations
        .iter()
        .map(|(p, e)| (judge_label(p), crate::gate::weighted_overall(e, weights)))
        .collect();
    let lowest = scores.iter().map(|(_, s)| *s).fold(f64::INFINITY, f64::min);
    let mut t = match gate {
        Some(g) => format!(
            "门控结论「{}」，总分 {}",
            g.decision.label(),
            crate::gate::score_text(g.overall)
        ),
        None if lowest.is_finite() => format!(
            "评估总分 {}（按项目权重重算）",
            crate::gate::score_text(lowest)
        ),
        None => "评估总分未知".to_string(),
    };
    if scores.len() > 1 {
        t.push_str(&format!(
            "（关键章双裁判：{}，取较低分）",
            scores
                .iter()
                .map(|(j, s)| format!("{j} {}", crate::gate::score_text(*s)))
                .collect::<Vec<_>>()
                .join("、")
        ));
    }
    t.push('。');
    t
}

/// The round's required fixes, violations (when asked) and issues, an item raised by several
/// judges listed once; each labelled with its judge(s) when there is more than one judge.
fn notes(evaluations: &[(String, Evaluation)], violations: bool) -> Vec<String> {
    let mut items: Vec<(String, Vec<String>)> = Vec::new();
    let mut add = |text: String, judge: &str| {
        let text = cut_chars(&text, NOTE_MAX_CHARS);
        match items.iter_mut().find(|(t, _)| *t == text) {
            Some((_, judges)) if !judges.iter().any(|j| j == judge) => judges.push(judge.into()),
            Some(_) => {}
            None => items.push((text, vec![judge.into()])),
        }
    };
    let label = |p: &String| judge_label(p);
    for (p, e) in evaluations {
        for f in &e.required_fixes {
            let blocking = if f.blocking {
                "（阻断：必须做到）"
            } else {
                ""
            };
            add(
                format!("- 〔{}〕{}{blocking}", f.target, f.instruction),
                &label(p),
            );
        }
    }
    if violations {
        for (p, e) in evaluations {
            for v in &e.violations {
                let confidence = match v.confidence {
                    crate::model::evaluation::Confidence::High => "high",
                    crate::model::evaluation::Confidence::Medium => "medium",
                    crate::model::evaluation::Confidence::Low => "low",
                };
                add(
                    format!("- 违反 {}（{confidence}）：{}", v.rule_id, v.description),
                    &label(p),
                );
            }
        }
    }
    for (p, e) in evaluations {
        for issue in &e.issues {
            add(format!("- 问题：{issue}"), &label(p));
        }
    }
    let several = evaluations.len() > 1;
    items
        .into_iter()
        .map(|(t, judges)| {
            if several {
                format!("{t}（{}）", judges.join("、"))
            } else {
                t
            }
        })
        .collect()
}

/// `fix_review`: QualityJudge after a round the gate sent back — that round's fixes, numbered,
/// to be judged one by one in the evaluation's `fix_review`.
pub fn fix_review_section(inputs: &Inputs) -> Section {
    let mut s = Section::new("fix_review", "上一轮的修订指令");
    let mut lines = vec![
        "这一稿是按下面的指令改过的。逐条在评估的 fix_review 里判定：{\"fix\": \"F1\", \"status\": \"done|partly|not_done\", \"evidence\": 正文原句}；做到的引改后的句子，引不出就是没做到。标了阻断的没做到，门控不会放行。".to_string(),
    ];
    for f in &inputs.previous_fixes {
        lines.push(format!(
            "- {}〔{}〕{}{}",
            f.id,
            f.fix.target,
            cut_chars(&f.fix.instruction, NOTE_MAX_CHARS),
            if f.fix.blocking { "（阻断）" } else { "" }
        ));
    }
    s.required(lines.join("\n"));
    s
}

/// Blocking fixes of an earlier round still not done that the round's judges did not restate.
fn carried_lines(inputs: &Inputs) -> Vec<String> {
    let restated = |f: &crate::judging::NumberedFix| {
        inputs.evaluations.iter().any(|(_, e)| {
            e.required_fixes
                .iter()
                .any(|r| r.target == f.fix.target && r.instruction == f.fix.instruction)
        })
    };
    inputs
        .previous_fixes
        .iter()
        .filter(|f| !restated(f))
        .map(|f| {
            format!(
                "- 〔{}〕{}（阻断：前几轮一直没做到，必须做到）",
                f.fix.target,
                cut_chars(&f.fix.instruction, NOTE_MAX_CHARS)
            )
        })
        .collect()
}

/// `revision`: what ChapterWriter must change in the draft.
pub fn revision_section(inputs: &Inputs) -> Section {
    let mut s = Section::new("revision", "修订指令");
    if inputs.evaluations.is_empty() {
        s.required("（没有找到本章的评估结果：按门控结论修订）");
        return s;
    }
    let mut lines = notes(&inputs.evaluations, true);
    lines.extend(carried_lines(inputs));
    if lines.is_empty() {
        lines.push("（评估没有给出具体修订指令）".into());
    }
    let both = if inputs.evaluations.len() > 1 {
        "两位裁判的意见都要处理。"
    } else {
        ""
    };
    s.required(format!(
        "{}{both}\n{}",
        score_line(inputs, gate_of(inputs, Pass::Revising)),
        lines.join("\n")
    ));
    s
}

/// `rewrite`: why the chapter is written again, and where the old draft is kept.
pub fn rewrite_section(inputs: &Inputs) -> Section {
    let mut s = Section::new("rewrite", "重写说明");
    let gate = gate_of(inputs, Pass::Rewrite);
    let round = inputs.checkpoint.as_ref().map_or(0, |c| c.revision_count);
    // `revision_count` counts every round sent back (revisions and rewrites alike).
    let mut head = format!("这是重写：上一稿被门控退回（本章第 {round} 次退回）。");
    if !inputs.evaluations.is_empty() || gate.is_some() {
        head.push_str(&score_line(inputs, gate));
    }
    s.required(head);
    s.required(match &inputs.archived_draft {
        Some(p) => format!(
            "旧稿已存档：{p}。资料包不附旧稿正文；只有任务的「要求」让你参照旧稿时才用 Read 读取，否则按大纲与契约整章重写，不沿用旧稿的结构。"
        ),
        None => "旧稿没有存档（或已不在）：按大纲与契约整章重写。".to_string(),
    });
    let mut lines = notes(&inputs.evaluations, true);
    lines.extend(carried_lines(inputs));
    if lines.is_empty() {
        s.required("（没有找到上一稿的评估意见）");
    } else {
        s.required(format!(
            "上一稿的问题（重写时都要避开）：\n{}",
            lines.join("\n")
        ));
    }
    s
}

/// `polish`: the judges' notes for StyleRefiner's second pass.
pub fn polish_section(inputs: &Inputs) -> Section {
    let mut s = Section::new("polish", "二次润色要点");
    s.required(format!(
        "{}在现稿上再润色一遍，比第一遍轻，但稿子必须有改动；只改措辞、句式与节奏，不动情节、对话内容与角色行为。",
        score_line(inputs, gate_of(inputs, Pass::Polish))
    ));
    let several = inputs.evaluations.len() > 1;
    for (p, e) in &inputs.evaluations {
        let d = &e.scores.style_naturalness;
        let mut t = format!("文风（style_naturalness）{:.1} 分", d.score);
        if several {
            t.push_str(&format!("（{}）", judge_label(p)));
        }
        if !d.reason.trim().is_empty() {
            t.push_str(&format!("：{}", cut_chars(d.reason.trim(), NOTE_MAX_CHARS)));
        }
        if !d.evidence.trim().is_empty() {
            t.push_str(&format!(
                "｜原文：{}",
                cut_chars(d.evidence.trim(), NOTE_MAX_CHARS)
            ));
        }
        s.required(t);
    }
    let lines = notes(&inputs.evaluations, false);
    if lines.is_empty() {
        s.required("（评估没有列出具体问题：按风格指纹与黑名单润色）");
        return s;
    }
    let listed = lines.len().min(POLISH_NOTES);
    let mut t = format!(
        "评审意见（文字表达上的照改；涉及情节、人物安排的只作参考，不在润色范围内）：\n{}",
        lines[..listed].join("\n")
    );
    if lines.len() > listed {
        t.push_str(&format!("\n（另有 {} 条未列出）", lines.len() - listed));
    }
    s.required(t);
    s
}

/// Of the text before a repaired ending, this many characters are shown (the voice and the
/// scene the new paragraphs go on from).
const REPAIR_CONTEXT_CHARS: usize = 800;

/// `repair`: the paragraphs a local repair replaces and why — for ChapterWriter with the text
/// around them and the next chapter's outline, for QualityJudge with what the writer wrote.
pub fn repair_section(inputs: &Inputs, judge: bool) -> Section {
    let mut s = Section::new("repair", "局部修补");
    let Some(r) = &inputs.repair else {
        s.required("（没有找到本轮局部修补的记录：按门控结论处理）");
        return s;
    };
    let rec = &r.record;
    let why: Vec<String> = rec
        .parts
        .iter()
        .map(|p| format!("- {}：{}", p.part.label(), p.reason))
        .collect();
    s.required(format!(
        "第 {} 章被门控退回（第 {} 轮），原因只有：\n{}\n其余正文已经评过、不动。",
        rec.chapter,
        rec.round,
        why.join("\n")
    ));
    for w in &rec.windows {
        s.required(if judge {
            format!(
                "〔{}〕原来的 {} 段（{} 字）：\n{}",
                w.part.label(),
                w.paragraphs,
                w.chars,
                w.text
            )
        } else {
            window_for_writer(w, &r.base)
        });
    }
    if judge {
        let now = inputs.chapter_text.as_ref().map_or("", |(_, t)| t.as_str());
        let written = crate::repair::new_text(&r.base, now);
        s.required(format!(
            "修补写的新段落（evidence 只从这里引）：\n{}",
            if written.is_empty() {
                "（没有新段落）"
            } else {
                written.as_str()
            }
        ));
    }
    if let Some(prev) = &r.prev_ending {
        s.required(format!(
            "上一章的结尾（它的钩子；开篇要接住它，新钩子别和它同一个套路）：\n{prev}"
        ));
    }
    if rec.repairs(crate::model::RepairPart::Ending) {
        s.required(match &r.next_outline {
            Some(b) => format!("下一章大纲（钩子要把读者引向这里，但不剧透）：\n{b}"),
            None => "下一章大纲还没有：钩子停在本章没落地的事上。".to_string(),
        });
    }
    s
}

/// The whole paragraphs of `lines` nearest the window (the last ones when `before`), up to
/// [`REPAIR_CONTEXT_CHARS`] (at least one), headings left out.
fn nearby(lines: &[&str], before: bool) -> String {
    let mut picked: Vec<&str> = Vec::new();
    let mut chars = 0;
    let prose = lines
        .iter()
        .map(|l| l.trim_end())
        .filter(|l| !l.trim().is_empty() && !l.trim_start().starts_with('#'));
    let ordered: Vec<&str> = if before {
        prose.rev().collect()
    } else {
        prose.collect()
    };
    for l in ordered {
        if !picked.is_empty() && chars + l.chars().count() > REPAIR_CONTEXT_CHARS {
            break;
        }
        chars += l.chars().count();
        picked.push(l);
    }
    if before {
        picked.reverse();
    }
    picked.join("\n")
}

/// One window as the writer sees it: the text next to it (kept as is), then the paragraphs it
/// replaces and how long the new ones may be.
fn window_for_writer(w: &crate::repair::Window, base: &str) -> String {
    let lines: Vec<&str> = base.lines().collect();
    let (around, label) = match w.part {
        crate::model::RepairPart::Ending => (
            nearby(&lines[..w.lines[0].min(lines.len())], true),
            "前文（到这里为止不动）",
        ),
        crate::model::RepairPart::Opening => (
            nearby(&lines[w.lines[1].min(lines.len())..], false),
            "后文（从这里起不动）",
        ),
    };
    format!(
        "〔{part}〕{label}：\n{around}\n\n〔{part}〕要整体替换的 {n} 段（{chars} 字；新写的不超过 {max} 字）：\n{text}",
        part = w.part.label(),
        n = w.paragraphs,
        chars = w.chars,
        max = crate::repair::max_chars(w.chars),
        text = w.text
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn judges_are_named_after_their_files() {
        assert_eq!(
            judge_label("logs/revisions/chapter-048/r1/chapter-048-eval.json"),
            "主裁判"
        );
        assert_eq!(
            judge_label("staging/evaluations/chapter-048-eval-secondary.json"),
            "第二裁判"
        );
        assert_eq!(judge_label("chapter-048-eval-opus.json"), "裁判 opus");
    }
}
