//! The judge held to its contract: an evaluation is checked against the text it judged and the
//! chapter's contract before the gate reads it (`novel chapter stage judged`, `novel chapter
//! gate`, `novel validate`). Each failure is its own finding, worded so that QualityJudge can
//! fix its file from the message alone:
//!
//! - `E_EVAL_QUOTE` — an evidence fragment does not occur in the judged text (after the
//!   caller's normalisation, whitespace and quotation marks ignored; [`evidence`]);
//! - `E_EVAL_FRAGMENT` — an evidence fragment is no clause: shorter than `gate.quote_min_chars`
//!   and not a whole sentence of the text (a name, a word), or a dimension quotes nothing;
//! - `E_EVAL_REUSED` — one fragment stands as the evidence of three dimensions or more;
//! - `E_EVAL_TARGET` — a `required_fixes[].target` quotes words the text does not have;
//! - `E_EVAL_VERDICT` — the recommendation is not what the recomputed score (the project's
//!   weights) and the gate thresholds give, or a pass/polish with a high violation;
//! - `E_EVAL_STALE` — a fix reviewed `done`/`partly` is proved by a quote the previous round's
//!   text (archived when the gate sent it back) already had;
//! - `E_EVAL_HIDDEN` — a check row says `violation` with `confidence: high`, but `violations`
//!   (the only list the gate reads) does not carry it as high;
//! - `E_EVAL_OBJECTIVE` — a required objective of the L3 contract (or its declared payoff) has
//!   no row in `l3_checks`;
//! - `E_EVAL_FIXES` — the verdict sends the chapter back (revise, pause, rewrite, a score below
//!   `gate.polish` with the project's weights, a high violation) but `required_fixes` is empty;
//! - `E_EVAL_FIX_REVIEW` — a revision round's judge did not say, fix by fix, whether the previous
//!   round's `required_fixes` were done.
//!
//! The previous round's fixes are numbered `F1`, `F2`… in one order ([`numbered_fixes`]), the
//! one the judge's packet shows and the gate counts.
//!
//! Pure: the caller passes the text, the contract, the fixes and a normaliser
//! (`novel_text::normalize::normalize_str` in the binary).
//!
//! Layer: rules — checks and decisions over the model (judging, ops, validation, the gate,
//! revisions, import); below the loop.

pub mod evidence;

use serde::Serialize;

use crate::diagnostic::{Diagnostic, Severity};
use crate::model::ChapterContract;
use crate::model::Evaluation;
use crate::model::common::GateDecision;
use crate::model::contract::Payoff;
use crate::model::evaluation::{CheckStatus, Confidence, FixStatus, RequiredFix};
use crate::model::settings::GateThresholds;
use evidence::Source;

pub const QUOTE: &str = "E_EVAL_QUOTE";
pub const HIDDEN: &str = "E_EVAL_HIDDEN";
pub const OBJECTIVE: &str = "E_EVAL_OBJECTIVE";
pub const FIXES: &str = "E_EVAL_FIXES";
pub const FIX_REVIEW: &str = "E_EVAL_FIX_REVIEW";
pub const FRAGMENT: &str = "E_EVAL_FRAGMENT";
pub const REUSED: &str = "E_EVAL_REUSED";
pub const TARGET: &str = "E_EVAL_TARGET";
pub const VERDICT: &str = "E_EVAL_VERDICT";
pub const STALE: &str = "E_EVAL_STALE";

/// A fragment quoted by this many dimensions or more is refused: a fault is marked down in the
/// dimension it belongs to and at most one more (quality-judge.md), so three is no judgment.
pub const MAX_SHARED: usize = 3;

/// How far the recomputed score may sit from a threshold for the band on its other side to be
/// taken as the recommendation (the judge's own total, rounded to two decimals).
const VERDICT_SLACK: f64 = 0.05;

/// One fix of the round sent back, with its number (`F1`…).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct NumberedFix {
    pub id: String,
    #[serde(flatten)]
    pub fix: RequiredFix,
}

/// The required fixes of a round's evaluations (the primary first), each once, numbered
/// `F1`, `F2`… in that order. Blank instructions are skipped; a fix given by two judges is one
/// fix (blocking when either marks it so).
pub fn numbered_fixes<'e>(
    evaluations: impl IntoIterator<Item = &'e Evaluation>,
) -> Vec<NumberedFix> {
    number(
        evaluations
            .into_iter()
            .flat_map(|e| e.required_fixes.iter()),
    )
}

/// Fixes numbered `F1`, `F2`… in order, each once (blocking when any copy is).
pub fn number<'f>(fixes: impl IntoIterator<Item = &'f RequiredFix>) -> Vec<NumberedFix> {
    let mut out: Vec<NumberedFix> = Vec::new();
    for f in fixes {
        if f.instruction.trim().is_empty() {
            continue;
        }
        match out
            .iter_mut()
            .find(|n| n.fix.target == f.target && n.fix.instruction == f.instruction)
        {
            Some(n) => n.fix.blocking |= f.blocking,
            None => out.push(NumberedFix {
                id: format!("F{}", out.len() + 1),
                fix: f.clone(),
            }),
        }
    }
    out
}

/// The fixes a round hands to the next: its evaluations' own, then the blocking fixes of the
/// round before (`earlier`) that it left not done — so a blocking fix is judged round after
/// round until it is done, even when a judge forgets to restate it.
pub fn carried(earlier: &[NumberedFix], evaluations: &[&Evaluation]) -> Vec<NumberedFix> {
    let left = unresolved(earlier, evaluations);
    number(
        evaluations
            .iter()
            .flat_map(|e| e.required_fixes.iter())
            .chain(left.into_iter().map(|f| &f.fix)),
    )
}

/// What an evaluation is checked against.
pub struct Judged<'a> {
    /// The evaluation file, project-relative (the findings' file).
    pub file: &'a str,
    pub chapter: u32,
    /// The judged text and where it is.
    pub text_file: &'a str,
    pub text: &'a str,
    pub contract: Option<&'a ChapterContract>,
    /// The fixes of the round the gate sent back (empty on a first round).
    pub previous_fixes: &'a [NumberedFix],
    /// The text of the round the gate sent back, as archived then (`None` on a first round, or
    /// when the archive has no text).
    pub previous_text: Option<&'a str>,
    pub thresholds: &'a GateThresholds,
    /// `novel check leak` judged the current text `high`: the gate adds the LS-005 violation
    /// itself, so an LS-005 row without a matching violation is not hidden.
    pub leak_high: bool,
}

/// Every finding about `e` (errors unless said otherwise).
pub fn check(
    e: &Evaluation,
    j: &Judged<'_>,
    normalize: &dyn Fn(&str) -> String,
) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    let body = Source::new(j.text, normalize, false);
    quotes(e, j, &body, normalize, &mut out);
    reused(e, j, &body, normalize, &mut out);
    targets(e, j, normalize, &mut out);
    hidden(e, j, &mut out);
    objectives(e, j, &mut out);
    fixes(e, j, &mut out);
    verdict(e, j, &mut out);
    fix_review(e, j, &mut out);
    stale(e, j, &body, normalize, &mut out);
    for d in &mut out {
        d.chapter = Some(j.chapter);
    }
    out
}

fn cut(s: &str, n: usize) -> String {
    let mut out: String = s.chars().take(n).collect();
    if s.chars().nth(n).is_some() {
        out.push('…');
    }
    out
}

/// Where an evaluation quotes the text: (JSON pointer, evidence), the dimensions first.
fn evidence_places(e: &Evaluation) -> Vec<(String, &str)> {
    let mut places: Vec<(String, &str)> = Vec::new();
    for (name, d) in e.scores.dimensions() {
        places.push((format!("/scores/{name}/evidence"), d.evidence.as_str()));
    }
    for (i, v) in e.violations.iter().enumerate() {
        if let Some(ev) = &v.evidence {
            places.push((format!("/violations/{i}/evidence"), ev.as_str()));
        }
    }
    for (i, r) in e.fix_review.iter().enumerate() {
        if let Some(ev) = &r.evidence {
            places.push((format!("/fix_review/{i}/evidence"), ev.as_str()));
        }
    }
    for (i, b) in e.blacklist_suggestions.iter().enumerate() {
        places.push((
            format!("/blacklist_suggestions/{i}/evidence"),
            b.evidence.as_str(),
        ));
    }
    places
}

fn shown(fragments: &[String]) -> String {
    fragments
        .iter()
        .map(|f| format!("「{}」", cut(f, 30)))
        .collect::<Vec<_>>()
        .join("、")
}

/// The fragments of `evidence` ([`evidence::fragments`]) that `text` does not hold (headings
/// left out, after `normalize`, whitespace and quotation marks ignored).
pub fn missing_quotes(
    evidence: &str,
    text: &str,
    normalize: &dyn Fn(&str) -> String,
) -> Vec<String> {
    let body = Source::new(text, normalize, false);
    evidence::fragments(evidence, &body, normalize)
        .into_iter()
        .filter(|f| !body.contains(&Source::canon(f, normalize)))
        .collect()
}

/// The `E_EVAL_QUOTE` finding of `file` at `pointer`: the `missing` fragments are not in the
/// judged text (`what` names it).
pub fn quote_finding(file: &str, missing: &[String], what: &str, pointer: &str) -> Diagnostic {
    Diagnostic::new(
        QUOTE,
        Severity::Error,
        file,
        format!(
            "引文 {} 在被评的正文（{what}）里找不到：evidence 必须一字不改地摘自正文",
            shown(missing)
        ),
        "从正文复制原句（多处用「……」隔开，每处原样）；引不出原文的判断写进 reason 或 detail，不写进 evidence",
    )
    .at_pointer(pointer)
}

/// Every evidence fragment occurs in the judged text (`E_EVAL_QUOTE`) and is a clause
/// (`E_EVAL_FRAGMENT`); every dimension quotes something.
fn quotes(
    e: &Evaluation,
    j: &Judged<'_>,
    body: &Source,
    normalize: &dyn Fn(&str) -> String,
    out: &mut Vec<Diagnostic>,
) {
    let min = j.thresholds.quote_min_chars as usize;
    for (pointer, evidence) in evidence_places(e) {
        let (mut missing, mut short) = (Vec::new(), Vec::new());
        for f in evidence::fragments(evidence, body, normalize) {
            let c = Source::canon(&f, normalize);
            if !body.contains(&c) {
                missing.push(f);
            } else if evidence::zi(&f) < min && !body.whole_sentence(&c) {
                short.push(f);
            }
        }
        if !missing.is_empty() {
            let what = format!("{}，标题不算", j.text_file);
            out.push(quote_finding(j.file, &missing, &what, &pointer));
        }
        if !short.is_empty() {
            out.push(Diagnostic::new(
                FRAGMENT,
                Severity::Error,
                j.file,
                format!(
                    "引文 {} 只是几个字，不是一句话：不足 {min} 字的引文必须是正文里完整的一句（gate.quote_min_chars），人名、词语证明不了判断",
                    shown(&short)
                ),
                format!("引出包含它的整句（到「。！？」为止），或至少 {min} 个字的一段原文，让读评估的人不翻正文也看得出你凭什么这样判"),
            ).at_pointer(pointer));
        }
    }
    for (name, d) in e.scores.dimensions() {
        if evidence::fragments(&d.evidence, body, normalize).is_empty() {
            out.push(
                Diagnostic::new(
                    FRAGMENT,
                    Severity::Error,
                    j.file,
                    format!("{name} 的 evidence 没有引正文：每个维度的分数都要有原文为据"),
                    "从正文复制撑得起这个分数的一两句（得分处或扣分处）",
                )
                .at_pointer(format!("/scores/{name}/evidence")),
            );
        }
    }
}

/// No fragment is the evidence of [`MAX_SHARED`] dimensions or more.
fn reused(
    e: &Evaluation,
    j: &Judged<'_>,
    body: &Source,
    normalize: &dyn Fn(&str) -> String,
    out: &mut Vec<Diagnostic>,
) {
    // (canonical fragment, as quoted, the dimensions quoting it), first quoted first.
    let mut seen: Vec<(String, String, Vec<&str>)> = Vec::new();
    for (name, d) in e.scores.dimensions() {
        for f in evidence::fragments(&d.evidence, body, normalize) {
            let c = Source::canon(&f, normalize);
            match seen.iter_mut().find(|(k, _, _)| *k == c) {
                Some((_, _, dims)) if !dims.contains(&name) => dims.push(name),
                Some(_) => {}
                None => seen.push((c, f, vec![name])),
            }
        }
    }
    for (_, f, dims) in seen.into_iter().filter(|(_, _, d)| d.len() >= MAX_SHARED) {
        out.push(
            Diagnostic::new(
                REUSED,
                Severity::Error,
                j.file,
                format!(
                    "同一段引文「{}」是 {} 共 {} 个维度的证据：一个毛病只在它主要属于的维度扣分，最多再牵连一个",
                    cut(&f, 30),
                    dims.join("、"),
                    dims.len()
                ),
                "每个维度引它自己的依据：情节引因果的那一句，人物引台词或选择，文风引 lint 命中的句子……",
            )
            .at_pointer("/scores"),
        );
    }
}

/// The quoted words of a fix's `target` (「林枫侧身」 in 「第 14 段「林枫侧身」起」): what is
/// inside each outermost pair of quotation marks.
fn target_quotes(target: &str) -> Vec<String> {
    let pairs = [('「', '」'), ('『', '』'), ('“', '”'), ('"', '"')];
    let mut out = Vec::new();
    let mut open: Option<(char, usize)> = None;
    let mut inner = String::new();
    for c in target.chars() {
        match open {
            None => {
                if let Some((_, close)) = pairs.iter().find(|(o, _)| *o == c) {
                    open = Some((*close, 0));
                    inner.clear();
                }
            }
            Some((close, depth)) => {
                if c == close && depth == 0 {
                    out.push(std::mem::take(&mut inner));
                    open = None;
                    continue;
                }
                let opener = pairs.iter().find(|(_, cl)| *cl == close).map(|(o, _)| *o);
                if opener == Some(c) && c != close {
                    open = Some((close, depth + 1));
                } else if c == close {
                    open = Some((close, depth - 1));
                }
                inner.push(c);
            }
        }
    }
    out
}

/// The words a fix's target quotes are in the text (its title included).
fn targets(
    e: &Evaluation,
    j: &Judged<'_>,
    normalize: &dyn Fn(&str) -> String,
    out: &mut Vec<Diagnostic>,
) {
    let whole = Source::new(j.text, normalize, true);
    for (i, f) in e.required_fixes.iter().enumerate() {
        let missing: Vec<String> = target_quotes(&f.target)
            .iter()
            .flat_map(|q| evidence::fragments(q, &whole, normalize))
            .filter(|q| !whole.contains(&Source::canon(q, normalize)))
            .collect();
        if missing.is_empty() {
            continue;
        }
        out.push(
            Diagnostic::new(
                TARGET,
                Severity::Error,
                j.file,
                format!(
                    "修订指令的位置 {} 在正文（{}）里找不到：写手照它找不到要改的地方",
                    shown(&missing),
                    j.text_file
                ),
                "target 里引号中的字从正文原样复制（「第 14 段「林枫侧身」起」）；说不出原文就只写段落号",
            )
            .at_pointer(format!("/required_fixes/{i}/target")),
        );
    }
}

fn layer_label(array: &str) -> &'static str {
    match array {
        "l1_checks" => "L1",
        "l2_checks" => "L2",
        "l3_checks" => "L3",
        _ => "LS",
    }
}

/// A high-confidence violation in a check row is in `violations`, as high.
fn hidden(e: &Evaluation, j: &Judged<'_>, out: &mut Vec<Diagnostic>) {
    let cv = &e.contract_verification;
    let arrays = [
        ("l1_checks", &cv.l1_checks),
        ("l2_checks", &cv.l2_checks),
        ("l3_checks", &cv.l3_checks),
        ("ls_checks", &cv.ls_checks),
    ];
    for (name, rows) in arrays {
        for (i, row) in rows.iter().enumerate() {
            if row.status != CheckStatus::Violation || row.confidence != Some(Confidence::High) {
                continue;
            }
            if j.leak_high && row.id == crate::model::evaluation::LEAK_RULE {
                continue;
            }
            let listed = e
                .violations
                .iter()
                .find(|v| v.rule_id == row.id)
                .map(|v| v.confidence);
            if listed == Some(Confidence::High) {
                continue;
            }
            let layer = layer_label(name);
            let why = match listed {
                Some(_) => "violations 里的同一条却不是 high",
                None => "violations 里没有这一条",
            };
            out.push(
                Diagnostic::new(
                    HIDDEN,
                    Severity::Error,
                    j.file,
                    format!(
                        "{name} 的 {} 记为高置信违规，{why}：门控只读 violations，这条违规会被漏掉",
                        row.id
                    ),
                    format!(
                        "在 violations 写一条 {{\"rule_id\": \"{}\", \"layer\": \"{layer}\", \"confidence\": \"high\", \"description\": …, \"evidence\": 正文原句}}，并配一条 \"blocking\": true 的 required_fixes；并不确凿时把这一行的 confidence 改为 medium",
                        row.id
                    ),
                )
                .at_pointer(format!("/contract_verification/{name}/{i}")),
            );
        }
    }
}

/// Every required objective of the contract, and a payoff it delivers, has an `l3_checks` row.
fn objectives(e: &Evaluation, j: &Judged<'_>, out: &mut Vec<Diagnostic>) {
    let Some(c) = j.contract else {
        return;
    };
    let rows = &e.contract_verification.l3_checks;
    let has = |id: &str| rows.iter().any(|r| r.id == id);
    let mut missing: Vec<String> = c
        .objectives
        .iter()
        .filter(|o| o.required == Some(true) && !has(&o.id))
        .map(|o| format!("{}（{}）", o.id, cut(&o.description, 24)))
        .collect();
    if let Some(p) = &c.payoff
        && p.delivered_in(c.chapter) == j.chapter
    {
        let id = Payoff::row_id(j.chapter);
        if !has(&id) {
            missing.push(format!("{id}（爽点·{}：{}）", p.kind, cut(&p.delivery, 24)));
        }
    }
    if missing.is_empty() {
        return;
    }
    out.push(
        Diagnostic::new(
            OBJECTIVE,
            Severity::Error,
            j.file,
            format!(
                "章节契约要求的 {} 在 l3_checks 里没有对应的一行",
                missing.join("、")
            ),
            "每个必须目标（和本章兑现的爽点 PAYOFF-NNN）各写一行 {\"id\", \"status\", \"confidence\", \"detail\"}：写出来了记 pass 并在 detail 引原文，没写出来记 violation",
        )
        .at_pointer("/contract_verification/l3_checks"),
    );
}

/// A verdict that sends the chapter back carries fixes.
fn fixes(e: &Evaluation, j: &Judged<'_>, out: &mut Vec<Diagnostic>) {
    if e.required_fixes
        .iter()
        .any(|f| !f.instruction.trim().is_empty())
    {
        return;
    }
    let overall = crate::score::weighted_overall(e, &j.thresholds.weights);
    let high = e
        .violations
        .iter()
        .any(|v| v.confidence == Confidence::High);
    let why = if matches!(
        e.recommendation,
        GateDecision::Revise | GateDecision::Rewrite | GateDecision::Pause
    ) {
        format!("建议是 {}", e.recommendation.label())
    } else if high {
        "有高置信违规".to_string()
    } else if overall < j.thresholds.polish {
        format!(
            "按项目权重重算的总分 {} 低于 gate.polish {}（门控会退回）",
            crate::score::score_text(overall),
            crate::score::score_text(j.thresholds.polish)
        )
    } else {
        return;
    };
    out.push(
        Diagnostic::new(
            FIXES,
            Severity::Error,
            j.file,
            format!("{why}，但 required_fixes 是空的：写手不知道改哪里"),
            "给出 3–6 条 {\"target\": \"第 N 段「……」起\", \"instruction\": 错在哪、改成什么样、怎样算改好}；高置信违规的那条加 \"blocking\": true",
        )
        .at_pointer("/required_fixes"),
    );
}

/// The recommendation is what the recomputed score and the thresholds give (quality-judge.md:
/// a high violation → revise whatever the score; else the score's band), give or take a
/// score within [`VERDICT_SLACK`] of the threshold between two bands.
fn verdict(e: &Evaluation, j: &Judged<'_>, out: &mut Vec<Diagnostic>) {
    let t = j.thresholds;
    if crate::score::thresholds_problem(t).is_some() {
        // No bands to hold it to: the gate reports the settings (`E_SETTINGS`).
        return;
    }
    let overall = crate::score::weighted_overall(e, &t.weights);
    let near: Vec<GateDecision> = [overall - VERDICT_SLACK, overall, overall + VERDICT_SLACK]
        .iter()
        .map(|o| crate::score::band(*o, t))
        .collect();
    let high = e
        .violations
        .iter()
        .any(|v| v.confidence == Confidence::High);
    let allowed: Vec<GateDecision> = if high {
        // Revise, or worse when the score says so.
        std::iter::once(GateDecision::Revise)
            .chain(
                near.iter()
                    .copied()
                    .filter(|d| matches!(d, GateDecision::Pause | GateDecision::Rewrite)),
            )
            .collect()
    } else {
        near
    };
    if allowed.contains(&e.recommendation) {
        return;
    }
    let s = crate::score::score_text(overall);
    let expected = if high {
        format!("有高置信违规，应写 revise（总分 {s}）")
    } else {
        format!(
            "这个分数对应 {}（gate：pass {}、polish {}、revise {}、pause {}）",
            crate::score::band(overall, t).label(),
            crate::score::score_text(t.pass),
            crate::score::score_text(t.polish),
            crate::score::score_text(t.revise),
            crate::score::score_text(t.pause)
        )
    };
    out.push(
        Diagnostic::new(
            VERDICT,
            Severity::Error,
            j.file,
            format!(
                "建议是 {}，可按项目权重重算的总分是 {s}：{expected}",
                e.recommendation.label()
            ),
            "建议照门槛从分数推出，不另凭印象：觉得这章该过，就回头看哪一维的扣分没有依据；觉得该退回，就把毛病落到它所属维度的分数上，再写建议",
        )
        .at_pointer("/recommendation"),
    );
}

/// A fix reviewed done or partly is proved by text the round before did not have: a quote the
/// previous round's text (archived when the gate sent it back) already held proves nothing
/// was changed.
fn stale(
    e: &Evaluation,
    j: &Judged<'_>,
    body: &Source,
    normalize: &dyn Fn(&str) -> String,
    out: &mut Vec<Diagnostic>,
) {
    let Some(previous) = j.previous_text else {
        return;
    };
    let before = Source::new(previous, normalize, false);
    for (i, r) in e.fix_review.iter().enumerate() {
        if r.status == FixStatus::NotDone || !j.previous_fixes.iter().any(|f| f.id == r.fix) {
            continue;
        }
        let quoted: Vec<String> = r
            .evidence
            .as_deref()
            .map(|ev| evidence::fragments(ev, body, normalize))
            .unwrap_or_default();
        let canon: Vec<String> = quoted.iter().map(|f| Source::canon(f, normalize)).collect();
        if canon.is_empty() || !canon.iter().all(|c| body.contains(c) && before.contains(c)) {
            continue;
        }
        out.push(
            Diagnostic::new(
                STALE,
                Severity::Error,
                j.file,
                format!(
                    "fix_review 判 {} {}，引的 {} 上一轮被退回的稿子里原样就有：这证明不了改过",
                    r.fix,
                    r.status.label(),
                    shown(&quoted)
                ),
                "引这一轮改出来的句子（上一稿没有的）；删除类的修订，把删除处前后现在相接的文字连着引（中间不加……）；找不到改过的原文就判 not_done",
            )
            .at_pointer(format!("/fix_review/{i}/evidence")),
        );
    }
}

/// A revision round's judge says of every previous fix whether it was done, with evidence.
fn fix_review(e: &Evaluation, j: &Judged<'_>, out: &mut Vec<Diagnostic>) {
    let known = |id: &str| j.previous_fixes.iter().any(|f| f.id == id);
    for (i, r) in e.fix_review.iter().enumerate() {
        if !known(&r.fix) {
            out.push(
                Diagnostic::new(
                    FIX_REVIEW,
                    Severity::Warning,
                    j.file,
                    format!("fix_review 的 {} 不是上一轮的修订指令", r.fix),
                    "只判定资料包 <fix_review> 段列出的 F1、F2…",
                )
                .at_pointer(format!("/fix_review/{i}/fix")),
            );
        } else if r.status != FixStatus::NotDone
            && r.evidence.as_deref().is_none_or(|s| s.trim().is_empty())
        {
            out.push(
                Diagnostic::new(
                    FIX_REVIEW,
                    Severity::Error,
                    j.file,
                    format!(
                        "fix_review 判 {} {}，却没有引正文为证",
                        r.fix,
                        r.status.label()
                    ),
                    "evidence 写改后的正文原句；没有能引的句子就是没做到（not_done）",
                )
                .at_pointer(format!("/fix_review/{i}/evidence")),
            );
        }
    }
    let missing: Vec<&str> = j
        .previous_fixes
        .iter()
        .filter(|f| !e.fix_review.iter().any(|r| r.fix == f.id))
        .map(|f| f.id.as_str())
        .collect();
    if missing.is_empty() {
        return;
    }
    out.push(
        Diagnostic::new(
            FIX_REVIEW,
            Severity::Error,
            j.file,
            format!(
                "这是修订后的一轮：上一轮的修订指令 {} 没有在 fix_review 里逐条判定",
                missing.join("、")
            ),
            "fix_review 每条写 {\"fix\": \"F1\", \"status\": \"done|partly|not_done\", \"evidence\": 正文原句}，编号见资料包 <fix_review> 段",
        )
        .at_pointer("/fix_review"),
    );
}

/// The blocking fixes of the previous round that an evaluation marks not done, or that no
/// evaluation reviews: the gate will not let the chapter through while any is left.
pub fn unresolved<'f>(
    previous: &'f [NumberedFix],
    evaluations: &[&Evaluation],
) -> Vec<&'f NumberedFix> {
    previous
        .iter()
        .filter(|f| f.fix.blocking)
        .filter(|f| {
            let reviews: Vec<FixStatus> = evaluations
                .iter()
                .flat_map(|e| e.fix_review.iter())
                .filter(|r| r.fix == f.id)
                .map(|r| r.status)
                .collect();
            reviews.is_empty() || reviews.contains(&FixStatus::NotDone)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn plain(s: &str) -> String {
        s.to_string()
    }

    const TEXT: &str = "# 第12章 半枚丹\n\n谷口的雾是灰的，贴着石头往下淌。\n\n“废物，”赵天磊拿扇子敲了敲他肩膀，“一枚丹也揣这么紧？”\n\n林枫没有答话，左臂硬接了一掌，骨头响的那一声他自己都听见了。\n\n他弯腰捡起那半枚丹，连血带泥攥在手里。\n\n天快黑了。瘴气要上来了。\n\n谷中段方向传来一声兽吼，震得崖壁上的碎石簌簌往下掉。\n";

    /// Each dimension quotes its own line of [`TEXT`].
    const QUOTED: [&str; 8] = [
        "林枫没有答话，左臂硬接了一掌",
        "一枚丹也揣这么紧",
        "谷口的雾是灰的，贴着石头往下淌",
        "他弯腰捡起那半枚丹",
        "天快黑了。瘴气要上来了",
        "骨头响的那一声他自己都听见了",
        "连血带泥攥在手里",
        "谷中段方向传来一声兽吼",
    ];

    fn eval(extra: serde_json::Value) -> Evaluation {
        let mut scores = json!({});
        for (i, (name, w)) in crate::model::evaluation::DIMENSIONS.iter().enumerate() {
            scores[*name] = json!({"score": 4, "weight": w, "reason": "好", "evidence": QUOTED[i]});
        }
        let mut v =
            json!({"chapter": 12, "overall": 4.0, "recommendation": "pass", "scores": scores});
        for (k, val) in extra.as_object().unwrap() {
            v[k] = val.clone();
        }
        serde_json::from_value(v).unwrap()
    }

    fn each_dimension(
        e: &mut Evaluation,
        f: impl Fn(&mut crate::model::evaluation::DimensionScore),
    ) {
        let s = &mut e.scores;
        for d in [
            &mut s.plot_logic,
            &mut s.character,
            &mut s.immersion,
            &mut s.foreshadowing,
            &mut s.pacing,
            &mut s.style_naturalness,
            &mut s.emotional_impact,
            &mut s.storyline_coherence,
        ] {
            f(d);
        }
    }

    fn all_quote(e: &mut Evaluation, evidence: &str) {
        each_dimension(e, |d| d.evidence = evidence.to_string());
    }

    fn set_scores(e: &mut Evaluation, score: f64) {
        each_dimension(e, |d| d.score = score);
    }

    #[derive(Default)]
    struct Case<'a> {
        contract: Option<&'a ChapterContract>,
        prev: &'a [NumberedFix],
        previous_text: Option<&'a str>,
        thresholds: GateThresholds,
    }

    fn findings(e: &Evaluation, c: &Case<'_>) -> Vec<Diagnostic> {
        let j = Judged {
            file: "staging/evaluations/chapter-012-eval.json",
            chapter: 12,
            text_file: "staging/chapters/chapter-012.md",
            text: TEXT,
            contract: c.contract,
            previous_fixes: c.prev,
            previous_text: c.previous_text,
            thresholds: &c.thresholds,
            leak_high: false,
        };
        check(e, &j, &plain)
            .into_iter()
            .filter(|d| d.severity == Severity::Error)
            .collect()
    }

    fn codes_in(e: &Evaluation, c: &Case<'_>) -> Vec<String> {
        let mut out: Vec<String> = findings(e, c)
            .into_iter()
            .map(|d| d.code.to_string())
            .collect();
        out.dedup();
        out
    }

    fn codes(
        e: &Evaluation,
        contract: Option<&ChapterContract>,
        prev: &[NumberedFix],
    ) -> Vec<String> {
        codes_in(
            e,
            &Case {
                contract,
                prev,
                ..Case::default()
            },
        )
    }

    #[test]
    fn an_honest_evaluation_passes() {
        assert!(codes(&eval(json!({})), None, &[]).is_empty());
    }

    #[test]
    fn quotes_are_found_across_quote_styles_and_ellipses() {
        let ok = eval(
            json!({"violations": [{"rule_id": "C-1", "layer": "L2", "confidence": "medium",
            "description": "x", "evidence": "「废物，」赵天磊拿扇子敲了敲他肩膀……一枚丹也揣这么紧"}]}),
        );
        assert!(codes(&ok, None, &[]).is_empty());
        let made_up = eval(
            json!({"violations": [{"rule_id": "C-1", "layer": "L2", "confidence": "medium",
            "description": "x", "evidence": "谷口的雾是灰的，贴着石头往下淌……林枫掌心青光暴涨"}]}),
        );
        assert_eq!(codes(&made_up, None, &[]), [QUOTE]);
        // The title is no evidence.
        let mut title = eval(json!({}));
        title.scores.pacing.evidence = "第12章 半枚丹".into();
        assert_eq!(codes(&title, None, &[]), [QUOTE]);
    }

    #[test]
    fn a_name_or_a_word_is_no_evidence_a_short_whole_sentence_is() {
        // Issue 40: a two-字 name passed for all eight dimensions.
        let mut name = eval(json!({}));
        all_quote(&mut name, "「林枫」");
        let found = findings(&name, &Case::default());
        assert_eq!(
            found.iter().filter(|d| d.code == FRAGMENT).count(),
            8,
            "{found:?}"
        );
        assert!(found.iter().any(|d| d.code == REUSED));
        assert!(
            found[0].message.contains("「林枫」"),
            "{}",
            found[0].message
        );
        // A clause of a few 字 is not a sentence either; a pattern's words neither.
        for short in ["谷口的雾", "「左臂……一掌」", "骨头响的那一声"] {
            let mut e = eval(json!({}));
            e.scores.immersion.evidence = short.into();
            assert_eq!(codes(&e, None, &[]), [FRAGMENT], "{short}");
        }
        // Short whole sentences are evidence: narration, a line of dialogue.
        for whole in ["天快黑了。", "「废物，」", "瘴气要上来了"] {
            let mut e = eval(json!({}));
            e.scores.pacing.evidence = whole.into();
            assert!(codes(&e, None, &[]).is_empty(), "{whole}");
        }
        // Nothing quoted at all.
        let mut empty = eval(json!({}));
        empty.scores.character.evidence = "  ".into();
        let found = findings(&empty, &Case::default());
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].code, FRAGMENT);
        assert_eq!(
            found[0].pointer.as_deref(),
            Some("/scores/character/evidence")
        );
    }

    #[test]
    fn the_shortest_clause_is_configurable() {
        let mut e = eval(json!({}));
        e.scores.immersion.evidence = "谷口的雾".into();
        assert_eq!(codes(&e, None, &[]), [FRAGMENT]);
        let lenient = Case {
            thresholds: GateThresholds {
                quote_min_chars: 4,
                ..GateThresholds::default()
            },
            ..Case::default()
        };
        assert!(codes_in(&e, &lenient).is_empty());
    }

    #[test]
    fn one_quote_for_three_dimensions_is_refused_two_is_fine() {
        let mut e = eval(json!({}));
        e.scores.character.evidence = QUOTED[0].into();
        assert!(codes(&e, None, &[]).is_empty());
        e.scores.immersion.evidence = format!("{}……天快黑了", QUOTED[0]);
        let found = findings(&e, &Case::default());
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].code, REUSED);
        assert!(
            found[0]
                .message
                .contains("plot_logic、character、immersion"),
            "{}",
            found[0].message
        );
    }

    #[test]
    fn fix_targets_quote_the_text() {
        let fix = |target: &str| {
            eval(json!({"recommendation": "revise",
                "required_fixes": [{"target": target, "instruction": "删去解释，只留动作"}]}))
        };
        let mut ok = fix("第 2 段「赵天磊拿扇子」起");
        set_scores(&mut ok, 3.0);
        assert!(codes(&ok, None, &[]).is_empty());
        let mut title = fix("标题「半枚丹」");
        set_scores(&mut title, 3.0);
        assert!(codes(&title, None, &[]).is_empty());
        let mut made_up = fix("第 2 段「赵天磊拔刀」起到“谷口的雾”");
        set_scores(&mut made_up, 3.0);
        let found = findings(&made_up, &Case::default());
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].code, TARGET);
        assert_eq!(
            found[0].pointer.as_deref(),
            Some("/required_fixes/0/target")
        );
        assert!(found[0].message.contains("赵天磊拔刀") && !found[0].message.contains("谷口的雾"));
        assert_eq!(
            target_quotes("『他说“走”』与「天黑」"),
            ["他说“走”", "天黑"]
        );
    }

    #[test]
    fn the_recommendation_follows_the_score_and_the_thresholds() {
        // Issue 40: 3.0 with pass and one vague fix.
        let mut lazy =
            eval(json!({"required_fixes": [{"target": "全章", "instruction": "改好一点"}]}));
        set_scores(&mut lazy, 3.0);
        let found = findings(&lazy, &Case::default());
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].code, VERDICT);
        assert!(found[0].message.contains("3.0"), "{}", found[0].message);
        // Revise on a 4.0 with no high violation contradicts the score too.
        let strict = eval(json!({"recommendation": "revise",
            "required_fixes": [{"target": "全章", "instruction": "再紧一点"}]}));
        assert_eq!(codes(&strict, None, &[]), [VERDICT]);
        // A hair under a threshold: either side.
        let mut edge = eval(json!({}));
        edge.scores.pacing.score = 3.5;
        assert!(crate::score::weighted_overall(&edge, &Default::default()) < 4.0);
        assert!(codes(&edge, None, &[]).is_empty());
        // A high violation: revise whatever the score, or worse when the score says so.
        let high = |rec: &str, score: f64| {
            let mut e = eval(json!({"recommendation": rec,
                "violations": [{"rule_id": "W-001", "layer": "L1", "confidence": "high",
                    "description": "x", "evidence": "左臂硬接了一掌，骨头响的那一声他自己都听见了"}],
                "required_fixes": [{"target": "第 3 段", "instruction": "改成肉身硬接", "blocking": true}]}));
            set_scores(&mut e, score);
            codes(&e, None, &[])
        };
        assert_eq!(high("pass", 4.5), [VERDICT]);
        assert!(high("revise", 4.5).is_empty());
        assert!(high("rewrite", 1.5).is_empty());
        assert!(high("revise", 1.5).is_empty());
        // The project's weights, not the file's.
        let mut weighted = eval(json!({}));
        weighted.scores.plot_logic.score = 1.0;
        weighted.scores.plot_logic.weight = 0.0;
        assert!(codes(&weighted, None, &[]).contains(&VERDICT.to_string()));
    }

    #[test]
    fn required_objectives_and_payoff_need_rows() {
        let c: ChapterContract = serde_json::from_value(json!({"chapter": 12,
            "objectives": [{"id": "OBJ-012-1", "type": "plot", "required": true, "description": "夺回半枚丹"},
                {"id": "OBJ-012-2", "type": "plot", "description": "可选"}],
            "payoff": {"type": "打脸", "setup_chapter": 10, "delivery": "赵天磊当众认输"}}))
        .unwrap();
        assert_eq!(codes(&eval(json!({})), Some(&c), &[]), [OBJECTIVE]);
        let rows = eval(json!({"contract_verification": {"l3_checks": [
            {"id": "OBJ-012-1", "status": "pass"}, {"id": "PAYOFF-012", "status": "pass"}]}}));
        assert!(codes(&rows, Some(&c), &[]).is_empty());
    }

    #[test]
    fn a_high_row_must_be_a_high_violation() {
        let e = eval(json!({"contract_verification": {"l2_checks": [
            {"id": "C-ZHAO-001", "status": "violation", "confidence": "high", "detail": "x"}]}}));
        assert_eq!(codes(&e, None, &[]), [HIDDEN]);
        let listed = eval(json!({"contract_verification": {"l2_checks": [
            {"id": "C-ZHAO-001", "status": "violation", "confidence": "high"}]},
            "recommendation": "revise",
            "violations": [{"rule_id": "C-ZHAO-001", "layer": "L2", "confidence": "high", "description": "x"}],
            "required_fixes": [{"target": "第 2 段", "instruction": "改", "blocking": true}]}));
        assert!(codes(&listed, None, &[]).is_empty());
    }

    #[test]
    fn sending_back_needs_fixes() {
        let mut e = eval(json!({"recommendation": "revise"}));
        set_scores(&mut e, 3.0);
        assert_eq!(codes(&e, None, &[]), [FIXES]);
        // A pass recommendation with a score below polish is sent back by the gate anyway (and
        // contradicts the score).
        let mut low = eval(json!({}));
        low.scores.plot_logic.score = 1.0;
        low.scores.character.score = 1.0;
        low.scores.immersion.score = 1.0;
        assert_eq!(codes(&low, None, &[]), [FIXES, VERDICT]);
    }

    fn previous() -> Vec<NumberedFix> {
        numbered_fixes([&eval(json!({"required_fixes": [
            {"target": "第 2 段", "instruction": "删去气劲", "blocking": true},
            {"target": "第 3 段", "instruction": "加一句口头禅"}]}))])
    }

    #[test]
    fn revision_rounds_review_every_previous_fix() {
        let prev = previous();
        assert_eq!(prev[1].id, "F2");
        assert_eq!(codes(&eval(json!({})), None, &prev), [FIX_REVIEW]);
        let reviewed = eval(json!({"fix_review": [
            {"fix": "F1", "status": "not_done"},
            {"fix": "F2", "status": "done", "evidence": "一枚丹也揣这么紧"}]}));
        assert!(codes(&reviewed, None, &prev).is_empty());
        let unresolved = unresolved(&prev, &[&reviewed]);
        assert_eq!(unresolved.len(), 1);
        assert_eq!(unresolved[0].id, "F1");
        // Round 2: the judge marks F1 not done but does not restate it: F1 is carried on and
        // is judged (and held) in round 3 too.
        let round_two = eval(json!({"fix_review": [
            {"fix": "F1", "status": "not_done"}, {"fix": "F2", "status": "not_done"}]}));
        let next = carried(&prev, &[&round_two]);
        assert_eq!(next.len(), 1, "{next:?}");
        assert_eq!(next[0].fix.instruction, "删去气劲");
        assert!(next[0].fix.blocking);
        let no_evidence = eval(json!({"fix_review": [
            {"fix": "F1", "status": "done"}, {"fix": "F2", "status": "partly"}]}));
        assert_eq!(
            findings(
                &no_evidence,
                &Case {
                    prev: &prev,
                    ..Case::default()
                }
            )
            .iter()
            .filter(|d| d.code == FIX_REVIEW)
            .count(),
            2
        );
    }

    #[test]
    fn a_fix_is_proved_done_by_text_the_round_before_did_not_have() {
        let prev = previous();
        // The round sent back: paragraph 3 had an explanation the writer has since cut, and
        // paragraph 2 is unchanged.
        let before = TEXT.replace(
            "林枫没有答话，左臂硬接了一掌，",
            "林枫没有答话，拳风带起一道淡白的气劲。他左臂硬接了一掌，",
        );
        let case = Case {
            prev: &prev,
            previous_text: Some(&before),
            ..Case::default()
        };
        let review = |f1: &str, f2: &str| {
            eval(json!({"fix_review": [
                {"fix": "F1", "status": "done", "evidence": f1},
                {"fix": "F2", "status": "partly", "evidence": f2}]}))
        };
        // Issue 40: done, proved by the very sentence that was there before.
        let same = review("林枫没有答话，左臂硬接了一掌", "一枚丹也揣这么紧");
        let found = findings(&same, &case);
        assert_eq!(
            found.iter().map(|d| d.code.as_ref()).collect::<Vec<_>>(),
            [STALE],
            "{found:?}"
        );
        assert_eq!(found[0].pointer.as_deref(), Some("/fix_review/1/evidence"));
        // F1 quotes where the cut closed up: text the round before did not have.
        assert!(
            findings(
                &review(
                    "林枫没有答话，左臂硬接了一掌",
                    "天快黑了……他弯腰捡起那半枚丹"
                ),
                &case
            )
            .iter()
            .any(|d| d.code == STALE)
        );
        // Not done needs no new text; nor does a round with no archived text.
        let not_done = eval(json!({"fix_review": [
            {"fix": "F1", "status": "not_done", "evidence": "一枚丹也揣这么紧"},
            {"fix": "F2", "status": "not_done"}]}));
        assert!(findings(&not_done, &case).is_empty());
        let unarchived = Case {
            prev: &prev,
            ..Case::default()
        };
        assert!(findings(&same, &unarchived).is_empty());
    }
}
