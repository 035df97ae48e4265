//! The judge held to its contract: an evaluation is checked against the text it judged and the
//! chapter's contract before the gate reads it (`novel chapter stage judged`, `novel chapter
//! gate`, `novel validate`). Each failure is its own finding, worded so that QualityJudge can
//! fix its file from the message alone:
//!
//! - `E_EVAL_QUOTE` — an evidence fragment does not occur in the judged text (after the
//!   caller's normalisation, whitespace and quotation marks ignored);
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

use serde::Serialize;

use crate::diagnostic::{Diagnostic, Severity};
use crate::model::ChapterContract;
use crate::model::Evaluation;
use crate::model::common::GateDecision;
use crate::model::contract::Payoff;
use crate::model::evaluation::{CheckStatus, Confidence, FixStatus, RequiredFix};
use crate::model::settings::GateThresholds;

pub const QUOTE: &str = "E_EVAL_QUOTE";
pub const HIDDEN: &str = "E_EVAL_HIDDEN";
pub const OBJECTIVE: &str = "E_EVAL_OBJECTIVE";
pub const FIXES: &str = "E_EVAL_FIXES";
pub const FIX_REVIEW: &str = "E_EVAL_FIX_REVIEW";

/// A fragment of evidence is checked when it has at least this many Han characters, letters
/// or digits: shorter ones (「是」, a pattern's 「不是」) prove nothing either way.
const MIN_FRAGMENT: usize = 4;

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
    quotes(e, j, normalize, &mut out);
    hidden(e, j, &mut out);
    objectives(e, j, &mut out);
    fixes(e, j, &mut out);
    fix_review(e, j, &mut out);
    for d in &mut out {
        d.chapter = Some(j.chapter);
    }
    out
}

/// The text as quotes are compared: normalised, without whitespace or quotation marks.
fn canon(s: &str, normalize: &dyn Fn(&str) -> String) -> String {
    normalize(s)
        .chars()
        .filter(|c| !c.is_whitespace() && !is_quote_mark(*c))
        .collect()
}

fn is_quote_mark(c: char) -> bool {
    matches!(
        c,
        '“' | '”'
            | '「'
            | '」'
            | '『'
            | '』'
            | '‘'
            | '’'
            | '"'
            | '\''
            | '﹁'
            | '﹂'
            | '﹃'
            | '﹄'
    )
}

/// Trimmed at both ends of a fragment: marks a quotation starts or ends with.
fn is_edge(c: char) -> bool {
    c.is_whitespace()
        || is_quote_mark(c)
        || matches!(
            c,
            '。' | '，'
                | '！'
                | '？'
                | '；'
                | '：'
                | '、'
                | ','
                | '.'
                | '!'
                | '?'
                | ';'
                | ':'
                | '（'
                | '）'
                | '('
                | ')'
        )
}

/// The quoted fragments of an evidence string: split at ellipses (`……`, `…`, `...`), trimmed of
/// quotation marks and edge punctuation, the meaningful ones only.
pub fn fragments(evidence: &str) -> Vec<String> {
    evidence
        .replace("...", "…")
        .replace('⋯', "…")
        .split('…')
        .map(|f| f.trim_matches(is_edge).to_string())
        .filter(|f| {
            f.chars()
                .filter(|c| c.is_alphanumeric() && !c.is_ascii_punctuation())
                .count()
                >= MIN_FRAGMENT
        })
        .collect()
}

fn cut(s: &str, n: usize) -> String {
    let mut out: String = s.chars().take(n).collect();
    if s.chars().nth(n).is_some() {
        out.push('…');
    }
    out
}

/// Every evidence fragment occurs in the judged text.
fn quotes(
    e: &Evaluation,
    j: &Judged<'_>,
    normalize: &dyn Fn(&str) -> String,
    out: &mut Vec<Diagnostic>,
) {
    let text = j.text;
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
    for (pointer, evidence) in places {
        let missing = missing_quotes(evidence, &text, normalize);
        if !missing.is_empty() {
            out.push(quote_finding(j.file, &missing, j.text_file, &pointer));
        }
    }
}

/// The fragments of `evidence` ([`fragments`]) that do not occur in `text` (whitespace and
/// quotation marks ignored, after `normalize`).
pub fn missing_quotes(
    evidence: &str,
    text: &str,
    normalize: &dyn Fn(&str) -> String,
) -> Vec<String> {
    let text = canon(text, normalize);
    fragments(evidence)
        .into_iter()
        .filter(|f| !text.contains(&canon(f, normalize)))
        .collect()
}

/// The `E_EVAL_QUOTE` finding of `file` at `pointer`: `missing` fragments are not in `what`.
pub fn quote_finding(file: &str, missing: &[String], what: &str, pointer: &str) -> Diagnostic {
    let shown: Vec<String> = missing
        .iter()
        .map(|f| format!("「{}」", cut(f, 30)))
        .collect();
    Diagnostic::new(
        QUOTE,
        Severity::Error,
        file,
        format!(
            "引文 {} 在被评的正文（{what}）里找不到：evidence 必须一字不改地摘自正文",
            shown.join("、"),
        ),
        "从正文复制原句（多处用「……」隔开，每处原样）；引不出原文的判断写进 reason 或 detail，不写进 evidence",
    )
    .at_pointer(pointer)
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
            if j.leak_high && row.id == crate::gate::LEAK_RULE {
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
    let overall = crate::gate::weighted_overall(e, &j.thresholds.weights);
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
            crate::gate::score_text(overall),
            crate::gate::score_text(j.thresholds.polish)
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

    const TEXT: &str = "# 第12章 半枚丹\n\n谷口的雾是灰的，贴着石头往下淌。\n\n“废物，”赵天磊拿扇子敲了敲他肩膀，“一枚丹也揣这么紧？”\n";

    fn eval(extra: serde_json::Value) -> Evaluation {
        let d =
            |w: f64| json!({"score": 4, "weight": w, "reason": "好", "evidence": "谷口的雾是灰的"});
        let mut v = json!({"chapter": 12, "overall": 4.0, "recommendation": "pass",
            "scores": {"plot_logic": d(0.18), "character": d(0.18), "immersion": d(0.15),
                "foreshadowing": d(0.10), "pacing": d(0.08), "style_naturalness": d(0.15),
                "emotional_impact": d(0.08), "storyline_coherence": d(0.08)}});
        for (k, val) in extra.as_object().unwrap() {
            v[k] = val.clone();
        }
        serde_json::from_value(v).unwrap()
    }

    fn codes(
        e: &Evaluation,
        contract: Option<&ChapterContract>,
        prev: &[NumberedFix],
    ) -> Vec<String> {
        let t = GateThresholds::default();
        let j = Judged {
            file: "staging/evaluations/chapter-012-eval.json",
            chapter: 12,
            text_file: "staging/chapters/chapter-012.md",
            text: TEXT,
            contract,
            previous_fixes: prev,
            thresholds: &t,
            leak_high: false,
        };
        check(e, &j, &plain)
            .into_iter()
            .filter(|d| d.severity == Severity::Error)
            .map(|d| d.code.to_string())
            .collect()
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
            "description": "x", "evidence": "谷口的雾是灰的……林枫掌心青光暴涨"}]}),
        );
        assert_eq!(codes(&made_up, None, &[]), [QUOTE]);
        // Too short to prove anything: not checked.
        assert!(fragments("「不是……而是」").is_empty());
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
    fn sending_back_needs_fixes() {
        let e = eval(json!({"recommendation": "revise"}));
        assert_eq!(codes(&e, None, &[]), [FIXES]);
        // A pass recommendation with a score below polish is sent back by the gate anyway.
        let mut low = eval(json!({}));
        low.scores.plot_logic.score = 1.0;
        low.scores.character.score = 1.0;
        low.scores.immersion.score = 1.0;
        assert_eq!(codes(&low, None, &[]), [FIXES]);
    }

    #[test]
    fn revision_rounds_review_every_previous_fix() {
        let prev = numbered_fixes([&eval(json!({"required_fixes": [
            {"target": "第 2 段", "instruction": "删去气劲", "blocking": true},
            {"target": "第 3 段", "instruction": "加一句口头禅"}]}))]);
        assert_eq!(prev[1].id, "F2");
        assert_eq!(codes(&eval(json!({})), None, &prev), [FIX_REVIEW]);
        let reviewed = eval(json!({"fix_review": [
            {"fix": "F1", "status": "not_done"},
            {"fix": "F2", "status": "done", "evidence": "谷口的雾是灰的"}]}));
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
        assert_eq!(codes(&no_evidence, None, &prev), [FIX_REVIEW, FIX_REVIEW]);
    }
}
