//! A score and its band, as every reader of a score sees them (the gate, the judging table,
//! the reviews, `status`, the dashboard): the overall recomputed with the project's fixed
//! weights, the printed score, the band under the thresholds and whether the thresholds make
//! bands at all. The gate ([`crate::gate`]) decides with them; it re-exports them.
//!
//! Layer: model — the scoring ground of novel-core (imports only `model`).

use crate::model::Evaluation;
use crate::model::common::GateDecision;
use crate::model::settings::{DimensionWeights, GateThresholds};

/// The overall score of an evaluation: its eight dimension scores weighed with the project's
/// fixed weights (`novel.json` `gate.weights`, else §6.6.5) — never with the weights the
/// evaluation file carries, so a judge cannot shift weight between dimensions.
pub fn weighted_overall(e: &Evaluation, weights: &DimensionWeights) -> f64 {
    e.scores
        .dimensions()
        .iter()
        .zip(weights.values())
        .map(|((_, d), (_, w))| d.score * w)
        .sum()
}

/// Dimensions whose weight in the evaluation file differs from the project's fixed weight.
pub fn weights_differing(e: &Evaluation, weights: &DimensionWeights) -> Vec<&'static str> {
    e.scores
        .dimensions()
        .iter()
        .zip(weights.values())
        .filter(|((_, d), (_, w))| (d.weight - w).abs() > 1e-6)
        .map(|((name, _), _)| *name)
        .collect()
}

/// What is wrong with the thresholds, if anything. They must be ordered pass ≥ polish ≥ revise ≥ pause, with the force-pass floor
/// no higher than pass: otherwise a band is empty or inverted and scores land in the wrong one.
/// The dimension weights must be within 0–1 and sum to 1.
pub fn thresholds_problem(t: &GateThresholds) -> Option<String> {
    let ordered = t.pass >= t.polish && t.polish >= t.revise && t.revise >= t.pause;
    let values_ok = [t.pass, t.polish, t.revise, t.pause, t.force_pass_min]
        .iter()
        .all(|v| v.is_finite());
    if !ordered || !values_ok || t.force_pass_min > t.pass {
        return Some(format!(
            "阈值应满足 pass ≥ polish ≥ revise ≥ pause 且 force_pass_min ≤ pass（现为 pass {} / polish {} / revise {} / pause {} / force_pass_min {}）",
            t.pass, t.polish, t.revise, t.pause, t.force_pass_min
        ));
    }
    let w = &t.weights;
    let weights_ok = w
        .values()
        .iter()
        .all(|(_, v)| v.is_finite() && (0.0..=1.0).contains(v));
    if !weights_ok || (w.sum() - 1.0).abs() > 0.005 {
        return Some(format!(
            "gate.weights 的 8 个维度权重应在 0–1 之间且和为 1.0（现为 {:.3}）",
            w.sum()
        ));
    }
    None
}

/// Removes float noise (3.4999999999 from weights like 0.18) without moving real values:
/// 3.496 stays 3.496.
pub(crate) fn denoise(x: f64) -> f64 {
    (x * 1e6).round() / 1e6
}

/// A score as it is printed everywhere — the gate, the commit, `status`, the reviews, the
/// skills' one-line reports: cut (never rounded) to two decimals, at least one shown (`4.1`,
/// `3.96`, `4.0`). Cutting never crosses a threshold of two decimals (3.996 is `3.99`, below a
/// pass line of 4.0, as the gate judged it; rounding would print `4.0`).
pub fn score_text(x: f64) -> String {
    if !x.is_finite() {
        return "—".to_string();
    }
    // The small epsilon keeps a score stored as 3.2499999… from showing as 3.24.
    let cut = (x * 100.0 + 1e-7).floor() / 100.0;
    let text = format!("{cut:.2}");
    match text.strip_suffix('0') {
        Some(one) if !one.ends_with('.') => one.to_string(),
        _ => text,
    }
}

/// The band of a score under the thresholds — pass, polish, revise, pause or rewrite — what the
/// score alone says, before high violations, the fixes of the round before and exhausted
/// revisions (`crate::gate::decide` adds those). QualityJudge's recommendation is held to it
/// (`crate::judging`).
pub fn band(overall: f64, t: &GateThresholds) -> GateDecision {
    let o = denoise(overall);
    if o >= t.pass {
        GateDecision::Pass
    } else if o >= t.polish {
        GateDecision::Polish
    } else if o >= t.revise {
        GateDecision::Revise
    } else if o >= t.pause {
        GateDecision::Pause
    } else {
        GateDecision::Rewrite
    }
}
