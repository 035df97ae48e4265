//! What each pipeline stage used and cost, and the book's sums: the one rule for tokens and
//! dollars that `novel status` and the dashboard both print.
//!
//! A stage's tokens are its one total when it logged one (`chapter stage --tokens`: what an
//! Agent result gives, cache included), else its input and output added. Its input and output
//! are as logged, else the total split by the PRD ratio of its agents
//! ([`cost::split_total`], an estimate). Its cost is its logged `cost_usd`, else what its tokens
//! bill at list prices ([`cost::estimate_usd`], an estimate); a stage that dispatched no agent
//! and logged nothing cost nothing; an agent's stage that logged nothing at all has no known
//! cost (the book's sum is then a lower bound, and says so).

use novel_core::cost::{self, Model};
use novel_core::model::Settings;
use novel_core::model::pipeline_log::StageLog;
use serde::Serialize;
use serde_json::Value;

use novel_core::model::pipeline_log::TOTAL_TOKENS;

/// One pipeline stage's usage and cost.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StageUsage {
    /// `drafted`, `refined`, `judged`, `polished`, `committed` …
    pub stage: String,
    /// The model it ran on (as logged, else the project's model of its first agent).
    pub model: &'static str,
    pub tokens: u64,
    pub input: u64,
    pub output: u64,
    /// `input`/`output` were split from a lone total (an estimate).
    pub split: bool,
    /// US dollars: as logged, else estimated from the tokens; `None` when unknown.
    pub usd: Option<f64>,
    /// `usd` is an estimate.
    pub estimated: bool,
    pub duration_ms: u64,
    /// The stage dispatched an agent (its cost matters even when it logged none).
    pub agent: bool,
}

impl StageUsage {
    /// Nothing to show: no agent, no tokens, no cost.
    pub fn is_idle(&self) -> bool {
        !self.agent && self.tokens == 0 && self.usd.unwrap_or(0.0) == 0.0
    }
}

/// The model a stage ran on: its logged name, else the project's model of its first agent,
/// else the PRD default.
fn stage_model(name: Option<&str>, agents: &[&str], settings: &Settings) -> Model {
    name.and_then(Model::from_name).unwrap_or_else(|| {
        agents.first().map_or(Model::Sonnet, |a| {
            settings
                .models
                .get(*a)
                .and_then(|m| Model::from_name(m))
                .unwrap_or_else(|| cost::default_model(a))
        })
    })
}

/// The usage and cost of one stage line.
pub fn stage_usage(s: &StageLog, settings: &Settings) -> StageUsage {
    let agents = cost::stage_agents(&s.name);
    let total = s.extra.get(TOTAL_TOKENS).and_then(Value::as_u64);
    let (input, output, split) = match (s.input_tokens, s.output_tokens, total) {
        (Some(i), Some(o), _) => (i, o, false),
        (_, _, Some(t)) => {
            let (i, o) = cost::split_total(agents, t);
            (i, o, true)
        }
        (i, o, None) => (i.unwrap_or(0), o.unwrap_or(0), false),
    };
    let known = s.input_tokens.is_some() || s.output_tokens.is_some() || total.is_some();
    let model = stage_model(s.model.as_deref(), agents, settings);
    let (usd, estimated) = match s.extra.get("cost_usd").and_then(Value::as_f64) {
        Some(c) => (Some(c), false),
        None if known => (Some(cost::estimate_usd(model, input, output, 0)), true),
        None if agents.is_empty() => (Some(0.0), false),
        None => (None, false),
    };
    StageUsage {
        stage: s.name.clone(),
        model: model.name(),
        tokens: total.unwrap_or(input + output),
        input,
        output,
        split,
        usd,
        estimated,
        duration_ms: s.duration_ms.unwrap_or(0),
        agent: !agents.is_empty(),
    }
}

/// The pipeline logs of the committed chapters, summed (`novel status`'s `pipeline`, the
/// dashboard's cost section).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct PipelineSums {
    /// Chapters whose pipeline log was read.
    pub logs: usize,
    pub revisions: u32,
    pub force_passed: usize,
    /// Every stage's tokens (its one total, else input + output).
    pub tokens: u64,
    /// Input and output tokens, as logged or split from a lone total.
    pub input_tokens: u64,
    pub output_tokens: u64,
    /// Of `tokens`, those whose input/output split is an estimate.
    pub split_tokens: u64,
    pub duration_ms: u64,
    /// The cost in US dollars: logged costs plus the estimates of stages that logged tokens
    /// but no cost.
    pub cost_usd: f64,
    /// Of `cost_usd`, the estimated part.
    pub estimated_usd: f64,
    /// Chapters with at least one estimated stage.
    pub chapters_estimated: usize,
    /// Chapters with an agent's stage that logged neither tokens nor cost: `cost_usd` is a
    /// lower bound.
    pub chapters_without_cost: usize,
}

impl PipelineSums {
    /// Adds one chapter's log: its stages, revisions and force-pass.
    pub fn add(&mut self, stages: &[StageUsage], revisions: u32, force_passed: bool) {
        self.logs += 1;
        self.revisions += revisions;
        self.force_passed += usize::from(force_passed);
        let mut estimated = false;
        let mut unknown = false;
        for s in stages {
            self.tokens += s.tokens;
            self.input_tokens += s.input;
            self.output_tokens += s.output;
            self.split_tokens += if s.split { s.tokens } else { 0 };
            self.duration_ms += s.duration_ms;
            self.cost_usd += s.usd.unwrap_or(0.0);
            if s.estimated {
                self.estimated_usd += s.usd.unwrap_or(0.0);
            }
            estimated |= s.estimated;
            unknown |= s.usd.is_none();
        }
        self.chapters_estimated += usize::from(estimated);
        self.chapters_without_cost += usize::from(unknown);
    }

    /// Rounds the dollar sums to the cent, so every surface prints and compares the same
    /// number (sums of many floats differ in their last bits with the order of addition).
    pub fn rounded(mut self) -> PipelineSums {
        self.cost_usd = cents(self.cost_usd);
        self.estimated_usd = cents(self.estimated_usd);
        self
    }
}

fn cents(x: f64) -> f64 {
    (x * 100.0).round() / 100.0
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stage(json: serde_json::Value) -> StageLog {
        serde_json::from_value(json).unwrap()
    }

    #[test]
    fn a_logged_cost_stands_and_tokens_alone_are_priced() {
        let settings = Settings::default();
        let logged = stage_usage(
            &stage(serde_json::json!({"name": "drafted", "model": "sonnet",
                "input_tokens": 18000, "output_tokens": 4600, "cost_usd": 0.12})),
            &settings,
        );
        assert_eq!(
            (logged.usd, logged.estimated, logged.tokens),
            (Some(0.12), false, 22600)
        );
        // The judge's one total: split by its PRD ratio (8:1), priced on Sonnet.
        let judged = stage_usage(
            &stage(serde_json::json!({"name": "judged", "tokens": 9000})),
            &settings,
        );
        assert_eq!(
            (judged.input, judged.output, judged.split),
            (8000, 1000, true)
        );
        assert!(judged.estimated);
        assert!((judged.usd.unwrap() - 0.039).abs() < 1e-9);
        // An agent's stage with nothing logged: unknown; a bookkeeping stage: free.
        let nothing = stage_usage(&stage(serde_json::json!({"name": "refined"})), &settings);
        assert_eq!(nothing.usd, None);
        let commit = stage_usage(&stage(serde_json::json!({"name": "committed"})), &settings);
        assert_eq!(commit.usd, Some(0.0));
        assert!(commit.is_idle());
        let mut sums = PipelineSums::default();
        sums.add(&[logged, judged, nothing, commit], 1, false);
        let sums = sums.rounded();
        assert_eq!(sums.cost_usd, 0.16);
        assert_eq!(sums.estimated_usd, 0.04);
        assert_eq!(sums.tokens, 31600);
        assert_eq!(sums.split_tokens, 9000);
        assert_eq!(
            (sums.chapters_estimated, sums.chapters_without_cost),
            (1, 1)
        );
    }
}
