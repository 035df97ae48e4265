//! The quality gate (质量门控): PRD §6 and §6.5.6 as revised by `003` §8.2.
//!
//! Track 1 (contract verification): a `confidence: high` violation of L1/L2/L3, or of an LS
//! rule whose `constraint_type` is hard, forces a revision whatever the score; other
//! violations are reported only. Track 2 (score): `overall` is recomputed from the eight
//! dimension scores and the project's fixed weights (`novel.json` `gate.weights`, else §6.6.5;
//! weights written in the evaluation file are reported when they differ, never used), then ≥ pass → pass, ≥ polish → polish (one more StyleRefiner
//! pass, then commit), ≥ revise → revise, ≥ pause → pause for the author, below → forced
//! rewrite. After `max_revisions` revisions a chapter ≥ `force_pass_min` without a high
//! violation is force-passed and marked; below that the author decides (pause).
//! Key chapters (first/last of the volume, inside a convergence range) need a second
//! evaluation; the lower score and the union of violations count.
//! A `leak_risk: high` from `novel check leak` (§6.6.7 Layer 3) is a high-confidence LS-005
//! violation; `low` is reported only.
//! Scores are compared exactly (after removing float noise below 1e-6): 3.496 is below 3.5.
//! The craft check of the text (`novel check craft`, [`CraftCheck`]) sends a chapter back for
//! two things an editor never lets through, whatever the score: an opening without the
//! chapter's problem and an ending without a hook. They are fixable findings — a blocking fix
//! each, a revision — and, unlike a contract violation, once revisions are exhausted they are
//! reported and the score decides. When they are the only thing that sends the chapter back
//! (no blocking violation, no blocking fix of a judge or of the round before), the revision is
//! a local repair of those paragraphs ([`GateResult::repair`], `crate::repair`): the writer
//! rewrites the opening or the last one or two paragraphs, the judge re-checks only them.
//!
//! Layer: rules — checks and decisions over the model (judging, ops, validation, the gate,
//! revisions, import); below the loop.

use serde::Serialize;

pub use crate::model::evaluation::LEAK_RULE;
pub use crate::score::{band, score_text, thresholds_problem, weighted_overall, weights_differing};

use crate::model::Evaluation;
use crate::model::common::{ConstraintType, GateDecision};
use crate::model::evaluation::{Confidence, RequiredFix, SpecLayer, Violation};
use crate::model::repair::{PartReason, RepairPart};
use crate::model::settings::GateThresholds;
use crate::model::storyline::{StorylineSchedule, StorylineSpec};

/// Why a chapter is a key chapter (关键章).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum KeyReason {
    VolumeFirst,
    VolumeLast,
    Convergence,
}

/// Key-chapter reasons of chapter `n`: the first or last chapter of its volume (`range`, the
/// volume's span as `novel_store::next::volume_span` finds it), or inside a convergence event
/// of the volume's schedule.
pub fn key_chapter(
    n: u32,
    range: Option<[u32; 2]>,
    schedule: Option<&StorylineSchedule>,
) -> Vec<KeyReason> {
    let mut out = Vec::new();
    if let Some([first, last]) = range {
        if n == first {
            out.push(KeyReason::VolumeFirst);
        }
        if n == last {
            out.push(KeyReason::VolumeLast);
        }
    }
    if schedule.is_some_and(|s| {
        s.convergence_events
            .iter()
            .any(|e| e.chapter_range[0] <= n && n <= e.chapter_range[1])
    }) {
        out.push(KeyReason::Convergence);
    }
    out
}

/// A violation that forces a revision.
fn is_blocking(v: &Violation, spec: Option<&StorylineSpec>) -> bool {
    if v.confidence != Confidence::High {
        return false;
    }
    match v.layer {
        SpecLayer::L1 | SpecLayer::L2 | SpecLayer::L3 => true,
        // LS soft rules only report (§6.6.4); an LS id we cannot find is treated as hard.
        SpecLayer::Ls => spec
            .and_then(|s| s.rules.iter().find(|r| r.id == v.rule_id))
            .is_none_or(|r| r.constraint_type == ConstraintType::Hard),
    }
}

/// The cross-storyline leak check of the chapter (`staging/logs/chapter-NNN-leak.json`,
/// written by `novel check leak`).
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize)]
pub struct LeakCheck {
    pub chapter: u32,
    pub leak_risk: LeakRisk,
    /// Digest of the staged text that was checked (`pipeline::text_digest`).
    #[serde(default)]
    pub text_digest: Option<String>,
    #[serde(default)]
    pub findings: Vec<serde_json::Value>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LeakRisk {
    None,
    Low,
    High,
}

/// The fix a cross-storyline leak asks for (the gate's and the revision notes' one wording).
pub fn leak_fix() -> RequiredFix {
    RequiredFix {
        target: "全章".into(),
        instruction: "删去或改写仅属于其他故事线的实体（角色、势力、地点、事件），本章不是交汇章"
            .into(),
        blocking: true,
        extra: Default::default(),
    }
}

/// The craft check of the text being judged: the message of each failed rule the gate acts
/// on (`craft/opening`, `craft/hook`), `None` when it holds.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct CraftCheck {
    pub opening: Option<String>,
    pub hook: Option<String>,
}

impl CraftCheck {
    /// The fixes it asks for, blocking: the opening and the last paragraphs.
    pub fn fixes(&self) -> Vec<RequiredFix> {
        let fix = |target: &str, why: &str, what: &str| RequiredFix {
            target: target.into(),
            instruction: format!("{why}。{what}"),
            blocking: true,
            extra: Default::default(),
        };
        let mut out = Vec::new();
        if let Some(why) = &self.opening {
            out.push(fix(
                RepairPart::Opening.target(),
                why,
                "让人物带着本章的问题出场（想要什么、被什么逼着、哪里不对劲），并接住上一章的钩子；景物与时间最多一句",
            ));
        }
        if let Some(why) = &self.hook {
            out.push(fix(
                RepairPart::Ending.target(),
                why,
                "改写最后一两段，停在一件没落地的事上（危险逼近、没揭开的答案、反转、约好的对决、一句让人想翻页的台词），删去总结与升华；前文一字不动",
            ));
        }
        out
    }

    /// The parts that failed, opening first, with why.
    pub fn parts(&self) -> Vec<PartReason> {
        [
            (RepairPart::Opening, &self.opening),
            (RepairPart::Ending, &self.hook),
        ]
        .into_iter()
        .filter_map(|(part, why)| {
            why.as_ref().map(|reason| PartReason {
                part,
                reason: reason.clone(),
            })
        })
        .collect()
    }

    /// The check with the judge's review of a repair added: a part the review does not call
    /// done fails even when the program's check holds ([`crate::repair::not_done`]).
    pub fn with_review(mut self, not_done: &[(RepairPart, String)]) -> Self {
        for (part, why) in not_done {
            let slot = match part {
                RepairPart::Opening => &mut self.opening,
                RepairPart::Ending => &mut self.hook,
            };
            if slot.is_none() {
                *slot = Some(why.clone());
            }
        }
        self
    }
}

/// Everything the gate decides on.
#[derive(Debug, Clone)]
pub struct GateInput<'a> {
    pub chapter: u32,
    /// The primary evaluation, and the second one for key chapters (if present).
    pub evaluations: Vec<&'a Evaluation>,
    pub thresholds: &'a GateThresholds,
    /// Revisions already made to this chapter.
    pub revision_count: u32,
    pub key_reasons: Vec<KeyReason>,
    pub storyline_spec: Option<&'a StorylineSpec>,
    /// The leak check of the text being judged (a stale one is the caller's to drop).
    pub leak: Option<&'a LeakCheck>,
    /// The fixes of the round sent back ([`crate::judging::numbered_fixes`]; empty on a first
    /// round): a blocking one the judges mark not done keeps the chapter from passing.
    pub previous_fixes: &'a [crate::judging::NumberedFix],
    /// The craft check of the text being judged (None: not run).
    pub craft: Option<&'a CraftCheck>,
}

/// The gate's verdict with its evidence.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct GateResult {
    pub chapter: u32,
    pub decision: GateDecision,
    /// True when the chapter passes only because revisions are exhausted.
    pub force_passed: bool,
    /// The score that counts (lowest recomputed overall among the evaluations).
    pub overall: f64,
    /// `overall` as it is printed ([`score_text`]): what the skills report to the author.
    pub overall_text: String,
    /// Each evaluation's own `overall` and the recomputed one.
    pub scores: Vec<ScoreCheck>,
    pub blocking_violations: Vec<Violation>,
    pub reported_violations: Vec<Violation>,
    /// Blocking fixes of the round before that a judge marks not done (or none reviewed).
    pub fixes_not_done: Vec<crate::judging::NumberedFix>,
    pub required_fixes: Vec<RequiredFix>,
    /// A revise for the craft check alone: the parts to repair locally (`crate::repair`), not
    /// a full revision, with why. Empty otherwise.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub repair: Vec<PartReason>,
    pub key_reasons: Vec<KeyReason>,
    pub reasons: Vec<String>,
    /// What may follow this verdict ([`crate::pipeline::gate_moves`]; filled by the caller, who
    /// knows the author's rounds so far).
    pub moves: Vec<GateMove>,
}

/// One way on after a gate verdict: what it is, whose choice it is, the command that takes it
/// (as the skills write it), and, when the author cannot take it any more, why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct GateMove {
    /// `commit`, `polish`, `revise`, `repair` (the local repair of a revise for the craft
    /// alone), `rewrite`, `accept`, `edit` (the author changes the staged text, then accepts it).
    pub id: &'static str,
    /// `loop` (what the gate itself asks for, done without asking) or `author`.
    pub by: &'static str,
    /// The command, with `<DIR>` for the skill to fill in; for `polish`, the one
    /// after StyleRefiner's second pass.
    pub command: String,
    /// Why the author cannot take it now (the round limit), when so.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unavailable: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ScoreCheck {
    pub judge_overall: f64,
    /// The overall with the project's fixed weights ([`weighted_overall`]).
    pub recomputed: f64,
    /// The sum of the weights written in the evaluation file (not used for the score).
    pub weight_sum: f64,
    /// The judge's `overall` differs from the recomputed one by more than 0.05.
    pub mismatch: bool,
    /// Dimensions whose weight in the file differs from the project's: reported, not used.
    pub weight_mismatch: Vec<&'static str>,
}

/// Why the gate cannot decide yet.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum GateError {
    #[error("第 {chapter} 章是关键章（{reasons}），需要第二份评估（双裁判），但只有 {have} 份")]
    SecondJudgeMissing {
        chapter: u32,
        reasons: String,
        have: usize,
    },
    #[error("没有评估结果")]
    NoEvaluation,
    #[error("门控设置不对：{detail}")]
    Thresholds { detail: String },
}

impl GateError {
    pub fn code(&self) -> &'static str {
        match self {
            GateError::SecondJudgeMissing { .. } => "E_SECOND_JUDGE",
            GateError::NoEvaluation => "E_NO_EVALUATION",
            GateError::Thresholds { .. } => "E_SETTINGS",
        }
    }
}

fn key_label(r: &KeyReason) -> &'static str {
    match r {
        KeyReason::VolumeFirst => "卷首章",
        KeyReason::VolumeLast => "卷尾章",
        KeyReason::Convergence => "交汇事件章",
    }
}

/// The thresholds must make bands ([`thresholds_problem`] says why when they do not).
pub fn check_thresholds(t: &GateThresholds) -> Result<(), GateError> {
    match thresholds_problem(t) {
        Some(detail) => Err(GateError::Thresholds { detail }),
        None => Ok(()),
    }
}

/// Each evaluation's overall recomputed with the project's weights; differences from what the
/// file says (its overall, its weights) become reasons.
fn score_checks(input: &GateInput<'_>, reasons: &mut Vec<String>) -> Vec<ScoreCheck> {
    let mut scores = Vec::new();
    let weights = &input.thresholds.weights;
    for e in &input.evaluations {
        let recomputed = weighted_overall(e, weights);
        let weight_sum: f64 = e.scores.dimensions().iter().map(|(_, d)| d.weight).sum();
        let weight_mismatch = weights_differing(e, weights);
        if !weight_mismatch.is_empty() {
            reasons.push(format!(
                "警告：评估文件里 {} 的权重与项目规定不同，已按规定权重计算",
                weight_mismatch.join("、")
            ));
        }
        let mismatch = (recomputed - e.overall).abs() > 0.05;
        if mismatch {
            reasons.push(format!(
                "评审给出的 overall {:.2} 与按权重重算的 {:.2} 不符，以重算值为准",
                e.overall, recomputed
            ));
        }
        scores.push(ScoreCheck {
            judge_overall: e.overall,
            recomputed,
            weight_sum,
            mismatch,
            weight_mismatch,
        });
    }
    scores
}

/// Decides. Pure: the caller loads the evaluations, settings, schedule and spec.
pub fn decide(input: &GateInput<'_>) -> Result<GateResult, GateError> {
    check_input(input)?;
    let mut reasons = Vec::new();
    let scores = score_checks(input, &mut reasons);
    let overall = crate::score::denoise(
        scores
            .iter()
            .map(|s| s.recomputed)
            .fold(f64::INFINITY, f64::min),
    );
    if input.evaluations.len() > 1 {
        reasons.push(format!(
            "关键章（{}）双裁判：取较低分 {}",
            key_labels(&input.key_reasons),
            score_text(overall)
        ));
    }
    let mut found = gather_violations(input);
    if let Some(v) = input.leak.and_then(|l| leak_violation(l, input.chapter)) {
        found.add_leak(v, input.storyline_spec);
    }
    let not_done: Vec<crate::judging::NumberedFix> =
        crate::judging::unresolved(input.previous_fixes, &input.evaluations)
            .into_iter()
            .cloned()
            .collect();
    for f in &not_done {
        push_new(&mut found.fixes, f.fix.clone());
    }
    let mut verdict = verdict(input, overall, &found.blocking, &not_done);
    let repair = apply_craft(input, &mut verdict, &mut found.fixes, &mut reasons);
    reasons.push(verdict.reason);
    for v in &found.reported {
        reasons.push(format!(
            "仅报告：{} {}（置信度 {:?}）",
            v.rule_id, v.description, v.confidence
        ));
    }
    Ok(GateResult {
        chapter: input.chapter,
        decision: verdict.decision,
        force_passed: verdict.force_passed,
        overall,
        overall_text: score_text(overall),
        scores,
        blocking_violations: found.blocking,
        reported_violations: found.reported,
        fixes_not_done: not_done,
        required_fixes: if verdict.decision == GateDecision::Revise {
            found.fixes
        } else {
            Vec::new()
        },
        repair,
        key_reasons: input.key_reasons.clone(),
        reasons,
        moves: Vec::new(),
    })
}

/// Adds `fix` to `fixes` unless it is there already.
fn push_new(fixes: &mut Vec<RequiredFix>, fix: RequiredFix) {
    if !fixes.contains(&fix) {
        fixes.push(fix);
    }
}

/// The craft check's part of the verdict: its fixes join the judges'; when it alone sends the
/// chapter back (no blocking fix of a judge), the repair of its parts replaces the revision
/// (returned; empty otherwise).
fn apply_craft(
    input: &GateInput<'_>,
    verdict: &mut Verdict,
    fixes: &mut Vec<RequiredFix>,
    reasons: &mut Vec<String>,
) -> Vec<PartReason> {
    let craft_fixes = input.craft.map(CraftCheck::fixes).unwrap_or_default();
    if craft_fixes.is_empty() {
        return Vec::new();
    }
    let mut repair = Vec::new();
    let sent_back = craft_verdict(input, verdict, &craft_fixes, reasons);
    if sent_back && !fixes.iter().any(|f| f.blocking) {
        // Nothing else holds the chapter: only the craft's paragraphs are redone.
        repair = input.craft.map(CraftCheck::parts).unwrap_or_default();
        fixes.clear();
        verdict.reason.push_str(&format!(
            "；只有{}不合格：局部修补这几段，不整章修订",
            repair
                .iter()
                .map(|p| p.part.label())
                .collect::<Vec<_>>()
                .join("和")
        ));
    }
    for f in craft_fixes {
        push_new(fixes, f);
    }
    repair
}

/// The gate cannot decide on bad thresholds, no evaluation, or a key chapter with one judge.
fn check_input(input: &GateInput<'_>) -> Result<(), GateError> {
    check_thresholds(input.thresholds)?;
    if input.evaluations.is_empty() {
        return Err(GateError::NoEvaluation);
    }
    if !input.key_reasons.is_empty() && input.evaluations.len() < 2 {
        return Err(GateError::SecondJudgeMissing {
            chapter: input.chapter,
            reasons: key_labels(&input.key_reasons),
            have: input.evaluations.len(),
        });
    }
    Ok(())
}

/// The key-chapter reasons in Chinese, joined with「、」.
fn key_labels(reasons: &[KeyReason]) -> String {
    reasons.iter().map(key_label).collect::<Vec<_>>().join("、")
}

/// The violations of all evaluations, split into blocking and reported (each kept once per
/// rule and description), and their required fixes (each once).
struct Violations {
    blocking: Vec<Violation>,
    reported: Vec<Violation>,
    fixes: Vec<RequiredFix>,
}

impl Violations {
    /// The leak violation goes after the judges' ones; a blocking leak adds its fix.
    fn add_leak(&mut self, v: Violation, spec: Option<&StorylineSpec>) {
        if is_blocking(&v, spec) {
            self.fixes.push(leak_fix());
            self.blocking.push(v);
        } else {
            self.reported.push(v);
        }
    }
}

fn gather_violations(input: &GateInput<'_>) -> Violations {
    let mut found = Violations {
        blocking: Vec::new(),
        reported: Vec::new(),
        fixes: Vec::new(),
    };
    for e in &input.evaluations {
        for v in &e.violations {
            let bucket = if is_blocking(v, input.storyline_spec) {
                &mut found.blocking
            } else {
                &mut found.reported
            };
            if !bucket
                .iter()
                .any(|x| x.rule_id == v.rule_id && x.description == v.description)
            {
                bucket.push(v.clone());
            }
        }
        for f in &e.required_fixes {
            if !found.fixes.contains(f) {
                found.fixes.push(f.clone());
            }
        }
    }
    found
}

/// A leak check with risk `low` or `high` as an LS-005 violation (high confidence when high).
fn leak_violation(leak: &LeakCheck, chapter: u32) -> Option<Violation> {
    if leak.leak_risk == LeakRisk::None {
        return None;
    }
    let high = leak.leak_risk == LeakRisk::High;
    Some(Violation {
        rule_id: LEAK_RULE.to_string(),
        layer: SpecLayer::Ls,
        confidence: if high {
            Confidence::High
        } else {
            Confidence::Medium
        },
        description: format!(
            "跨故事线实体泄漏（leak_risk {}，{} 处，见 novel check leak --chapter {}）",
            if high { "high" } else { "low" },
            leak.findings.len(),
            chapter
        ),
        evidence: None,
        extra: Default::default(),
    })
}

/// The decision and the one reason that states it.
struct Verdict {
    decision: GateDecision,
    force_passed: bool,
    reason: String,
}

fn verdict(
    input: &GateInput<'_>,
    overall: f64,
    blocking: &[Violation],
    not_done: &[crate::judging::NumberedFix],
) -> Verdict {
    let exhausted = input.revision_count >= input.thresholds.max_revisions;
    if blocking.is_empty() && not_done.is_empty() {
        return score_verdict(input, overall, exhausted);
    }
    let (decision, reason) = if blocking.is_empty() {
        fixes_verdict(input.revision_count, not_done, exhausted)
    } else {
        blocking_verdict(input.revision_count, blocking, exhausted)
    };
    Verdict {
        decision,
        force_passed: false,
        reason,
    }
}

/// The craft check sends back a chapter the score would let through (pass, polish) while
/// revisions are left; once they are exhausted it is reported and the score decides. True when
/// it sent the chapter back.
fn craft_verdict(
    input: &GateInput<'_>,
    verdict: &mut Verdict,
    fixes: &[RequiredFix],
    reasons: &mut Vec<String>,
) -> bool {
    let what: Vec<&str> = fixes.iter().map(|f| f.target.as_str()).collect();
    let exhausted = input.revision_count >= input.thresholds.max_revisions;
    let lets_through = matches!(verdict.decision, GateDecision::Pass | GateDecision::Polish);
    if lets_through && !exhausted {
        *verdict = Verdict {
            decision: GateDecision::Revise,
            force_passed: false,
            reason: format!(
                "章法检查（novel check craft）：{} 不合格，编辑不会放过——不论分数，修订",
                what.join("、")
            ),
        };
        return true;
    }
    if lets_through {
        reasons.push(format!(
            "章法检查：{} 仍不合格，修订已用完，按分数放行",
            what.join("、")
        ));
    }
    false
}

/// Track 1: a blocking violation forces a revision, or a pause once revisions are exhausted.
fn blocking_verdict(
    revision_count: u32,
    blocking: &[Violation],
    exhausted: bool,
) -> (GateDecision, String) {
    let ids: Vec<&str> = blocking.iter().map(|v| v.rule_id.as_str()).collect();
    if exhausted {
        (
            GateDecision::Pause,
            format!(
                "高置信违规（{}）在 {} 次修订后仍在，需作者决定",
                ids.join("、"),
                revision_count
            ),
        )
    } else {
        (
            GateDecision::Revise,
            format!("高置信违规（{}）：不论分数，强制修订", ids.join("、")),
        )
    }
}

/// A blocking fix of the round before is not done: never a pass (forced or not) — another
/// revision, or the author once revisions are exhausted.
fn fixes_verdict(
    revision_count: u32,
    not_done: &[crate::judging::NumberedFix],
    exhausted: bool,
) -> (GateDecision, String) {
    let ids: Vec<String> = not_done
        .iter()
        .map(|f| format!("{}〔{}〕", f.id, f.fix.target))
        .collect();
    if exhausted {
        (
            GateDecision::Pause,
            format!(
                "阻断性修订指令 {} 在 {} 次修订后仍没做到：不强制通过，需作者决定",
                ids.join("、"),
                revision_count
            ),
        )
    } else {
        (
            GateDecision::Revise,
            format!(
                "阻断性修订指令 {} 评审判为没做到：不论分数，继续修订",
                ids.join("、")
            ),
        )
    }
}

/// Track 2: the score's band, with the force pass after exhausted revisions.
fn score_verdict(input: &GateInput<'_>, overall: f64, exhausted: bool) -> Verdict {
    let t = input.thresholds;
    let s = score_text(overall);
    let th = score_text;
    let n = input.revision_count;
    let plain = |decision, reason| Verdict {
        decision,
        force_passed: false,
        reason,
    };
    match band(overall, t) {
        GateDecision::Pass => plain(
            GateDecision::Pass,
            format!("{s} ≥ {}：直接通过", th(t.pass)),
        ),
        GateDecision::Polish => plain(
            GateDecision::Polish,
            format!(
                "{s} 在 {}–{}：润色编辑二次润色后通过",
                th(t.polish),
                th(t.pass)
            ),
        ),
        _ if exhausted && overall >= t.force_pass_min => Verdict {
            decision: GateDecision::Pass,
            force_passed: true,
            reason: format!(
                "已修订 {n} 次，{s} ≥ {}：强制通过并标记 force_passed",
                th(t.force_pass_min)
            ),
        },
        GateDecision::Revise => plain(
            GateDecision::Revise,
            format!("{s} 在 {}–{}：自动修订", th(t.revise), th(t.polish)),
        ),
        _ if exhausted => plain(
            GateDecision::Pause,
            format!("已修订 {n} 次仍只有 {s}：通知作者，暂停"),
        ),
        GateDecision::Pause => plain(
            GateDecision::Pause,
            format!(
                "{s} 在 {}–{}：通知作者人工审核，暂停",
                th(t.pause),
                th(t.revise)
            ),
        ),
        _ => plain(
            GateDecision::Rewrite,
            format!("{s} < {}：强制全章重写", th(t.pause)),
        ),
    }
}
