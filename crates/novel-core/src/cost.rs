//! What a chapter costs (PRD §12.1): the one place that knows the model prices, which model
//! each agent runs on by default, and the PRD's per-chapter lines. The dashboard prices the
//! pipeline logs with it; a cost meter should too, so the two never disagree.
//!
//! Prices are list prices in US dollars per million tokens (Anthropic, Claude 4 family):
//!
//! | model  | input | output |
//! |--------|-------|--------|
//! | Haiku  | $0.80 | $4     |
//! | Sonnet | $3    | $15    |
//! | Opus   | $15   | $75    |
//!
//! Prompt caching: a cache read is billed at [`CACHE_READ_MULTIPLIER`] × the input price, a
//! cache write at [`CACHE_WRITE_MULTIPLIER`] ×. The pipeline logs do not tell cache writes
//! apart, so [`estimate_usd`] bills every input token that is not a cache read as plain input.
//!
//! The PRD's own table checks out against these prices: ChapterWriter 12K in / 4.5K out on
//! Sonnet is $0.10, StyleRefiner 6K / 4.5K on Opus $0.43 — about [`PRD_CHAPTER_USD`] a chapter,
//! [`PRD_AMORTISED_CHAPTER_USD`] with the rewrite budget and the reviews.
//!
//! When a stage recorded only its one token total (`chapter stage --tokens`: what an Agent
//! result gives), [`split_total`] divides it by the input:output ratio of that agent's row of
//! the PRD table (see [`prd_usage`]); an estimate, and labelled so wherever it is shown.
//!
//! Layer: views — what the agents and the author are shown (packets, status, reviews, plan checks,
//! drift, cost); the top.

/// ~$0.60 a chapter: the PRD §12.1 table's sum (four agents, one pass each).
pub const PRD_CHAPTER_USD: f64 = 0.60;
/// ~$0.75 a chapter amortised: the table plus the 15% rewrite budget and ~5% reviews (§12.1).
pub const PRD_AMORTISED_CHAPTER_USD: f64 = 0.75;
/// A cache read costs this share of the input price.
pub const CACHE_READ_MULTIPLIER: f64 = 0.1;
/// A cache write costs this multiple of the input price (not applied by [`estimate_usd`]).
pub const CACHE_WRITE_MULTIPLIER: f64 = 1.25;

/// A model family, as `novel.json` `models` and the pipeline logs name it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Model {
    Haiku,
    Sonnet,
    Opus,
}

/// US dollars per million tokens.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Price {
    pub input: f64,
    pub output: f64,
}

impl Model {
    /// The list price.
    pub fn price(self) -> Price {
        match self {
            Model::Haiku => Price {
                input: 0.80,
                output: 4.0,
            },
            Model::Sonnet => Price {
                input: 3.0,
                output: 15.0,
            },
            Model::Opus => Price {
                input: 15.0,
                output: 75.0,
            },
        }
    }

    /// `sonnet`, `opus`, `haiku`.
    pub fn name(self) -> &'static str {
        match self {
            Model::Haiku => "haiku",
            Model::Sonnet => "sonnet",
            Model::Opus => "opus",
        }
    }

    /// The family a model name belongs to: `sonnet`, `claude-opus-4-1`, `Haiku 3.5` …
    /// (case-insensitive, by the family word in it). `None` for anything else (`inherit`, `-`).
    pub fn from_name(name: &str) -> Option<Model> {
        let n = name.to_ascii_lowercase();
        [Model::Opus, Model::Sonnet, Model::Haiku]
            .into_iter()
            .find(|m| n.contains(m.name()))
    }
}

/// The model an agent runs on when `novel.json` says nothing (PRD §4.3, §12.1; the same as the
/// settings' default `models`): the planners, the refiner and rewrites on Opus, the writer,
/// summarizer, analyst and judge on Sonnet. An agent this table does not know is on Sonnet.
pub fn default_model(agent: &str) -> Model {
    match agent {
        "world-builder" | "character-weaver" | "plot-architect" | "chapter-rewriter"
        | "style-refiner" | "quality-judge-key" => Model::Opus,
        _ => Model::Sonnet,
    }
}

/// The model mixes the author chooses between at set-up (`novel models --set`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mix {
    /// The PRD's mix (§4.3): the planners, the refiner, rewrites and the key chapters' second
    /// judge on Opus, the rest on Sonnet — the settings' default `models`.
    Standard,
    /// Everything on Sonnet: about half the price of a chapter, at the cost of the Opus
    /// refiner's finer de-AI pass, the second judge's independent model on key chapters and
    /// Opus rewrites.
    Economy,
}

impl Mix {
    /// `standard`, `economy` (what `novel models --set` takes, besides 标准 / 经济).
    pub fn name(self) -> &'static str {
        match self {
            Mix::Standard => "standard",
            Mix::Economy => "economy",
        }
    }

    /// The label the author reads.
    pub fn label(self) -> &'static str {
        match self {
            Mix::Standard => "标准（设定、润色、重写、关键章复核用 Opus）",
            Mix::Economy => "经济（全部 Sonnet）",
        }
    }

    pub fn from_name(name: &str) -> Option<Mix> {
        match name.trim() {
            "standard" | "标准" => Some(Mix::Standard),
            "economy" | "经济" => Some(Mix::Economy),
            _ => None,
        }
    }

    /// `novel.json` `models` of this mix.
    pub fn models(self) -> indexmap::IndexMap<String, String> {
        let mut m = crate::model::settings::default_models();
        if self == Mix::Economy {
            for v in m.values_mut() {
                *v = Model::Sonnet.name().to_string();
            }
        }
        m
    }

    /// The mix `models` is, if it is one (the keys a mix does not name are read as its
    /// defaults).
    pub fn of(models: &indexmap::IndexMap<String, String>) -> Option<Mix> {
        [Mix::Standard, Mix::Economy].into_iter().find(|mix| {
            let want = mix.models();
            models
                .iter()
                .all(|(k, v)| want.get(k).is_none_or(|w| w == v))
                && want
                    .iter()
                    .all(|(k, w)| models.get(k).is_none_or(|v| v == w))
        })
    }
}

/// The model `agent` runs on in a project with `models` (`novel.json`): its own entry, else
/// the default ([`default_model`]'s name).
pub fn model_for<'a>(models: &'a indexmap::IndexMap<String, String>, agent: &str) -> &'a str {
    models
        .get(agent)
        .map_or(default_model(agent).name(), String::as_str)
}

/// The PRD §12.1 row of an agent: (input, output) tokens of one run. Agents without a row get
/// the table's total (31K in, 11K out), the mix of a whole chapter.
pub fn prd_usage(agent: &str) -> (u64, u64) {
    match agent {
        "chapter-writer" | "chapter-rewriter" => (12_000, 4_500),
        "summarizer" => (5_000, 1_000),
        "style-refiner" => (6_000, 4_500),
        "quality-judge" | "quality-judge-key" => (8_000, 1_000),
        _ => (31_000, 11_000),
    }
}

/// A token total of `agents`' runs split into (input, output) by the ratio of their PRD rows
/// added together ([`prd_usage`]); the output share is rounded to the nearest token.
pub fn split_total(agents: &[&str], tokens: u64) -> (u64, u64) {
    let (i, o) = if agents.is_empty() {
        prd_usage("")
    } else {
        agents.iter().fold((0, 0), |(i, o), a| {
            let (ai, ao) = prd_usage(a);
            (i + ai, o + ao)
        })
    };
    let output = ((tokens as f64) * (o as f64) / ((i + o) as f64)).round() as u64;
    (tokens - output.min(tokens), output.min(tokens))
}

/// The agents whose runs a pipeline stage's line accounts for (`docs/orchestration.md`: each
/// `chapter stage` carries the usage of the agents dispatched since the previous one):
/// `drafted` the writer and the summarizer, `repaired` the writer of a local repair, `refined`
/// and `polished` the refiner, `judged` the judge. The other stages dispatch nobody.
pub fn stage_agents(stage: &str) -> &'static [&'static str] {
    match stage {
        "drafted" => &["chapter-writer", "summarizer"],
        "repaired" => &["chapter-writer"],
        "refined" | "polished" => &["style-refiner"],
        "judged" => &["quality-judge"],
        _ => &[],
    }
}

/// What `input_tokens` + `output_tokens` cost on `model`, `cached_input_tokens` of the input
/// (at most all of it) being cache reads. US dollars, unrounded.
pub fn estimate_usd(
    model: Model,
    input_tokens: u64,
    output_tokens: u64,
    cached_input_tokens: u64,
) -> f64 {
    let p = model.price();
    let cached = cached_input_tokens.min(input_tokens);
    let plain = input_tokens - cached;
    (plain as f64 * p.input
        + cached as f64 * p.input * CACHE_READ_MULTIPLIER
        + output_tokens as f64 * p.output)
        / 1_000_000.0
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cents(x: f64) -> i64 {
        (x * 100.0).round() as i64
    }

    #[test]
    fn the_prd_table_is_reproduced_by_the_prices() {
        let row = |agent: &str| {
            let (i, o) = prd_usage(agent);
            estimate_usd(default_model(agent), i, o, 0)
        };
        assert_eq!(cents(row("chapter-writer")), 10);
        assert_eq!(cents(row("summarizer")), 3);
        assert_eq!(cents(row("style-refiner")), 43);
        assert_eq!(cents(row("quality-judge")), 4);
        let sum: f64 = [
            "chapter-writer",
            "summarizer",
            "style-refiner",
            "quality-judge",
        ]
        .into_iter()
        .map(row)
        .sum();
        assert_eq!(cents(sum), 60);
        assert_eq!(cents(PRD_CHAPTER_USD), 60);
        // The amortised line adds the 15% rewrite budget and ~5% reviews: about +25%.
        assert_eq!(
            cents(PRD_AMORTISED_CHAPTER_USD / PRD_CHAPTER_USD * 100.0),
            12_500
        );
    }

    #[test]
    fn cache_reads_cost_a_tenth_of_the_input_price() {
        let full = estimate_usd(Model::Sonnet, 1_000_000, 0, 0);
        let cached = estimate_usd(Model::Sonnet, 1_000_000, 0, 1_000_000);
        assert_eq!(full, 3.0);
        assert!((cached - 0.3).abs() < 1e-9);
        // More cached than input is capped at the input.
        assert_eq!(
            estimate_usd(Model::Haiku, 10, 0, 99),
            estimate_usd(Model::Haiku, 10, 0, 10)
        );
        assert_eq!(estimate_usd(Model::Opus, 0, 1_000_000, 0), 75.0);
    }

    #[test]
    fn the_mixes_are_the_defaults_and_all_sonnet() {
        let standard = Mix::Standard.models();
        assert_eq!(standard, crate::model::Settings::default().models);
        assert_eq!(Mix::of(&standard), Some(Mix::Standard));
        let economy = Mix::Economy.models();
        assert!(economy.values().all(|m| m == "sonnet"));
        assert_eq!(Mix::of(&economy), Some(Mix::Economy));
        // A project that changed one agent has its own mix; one that names fewer agents is read
        // with the defaults for the rest.
        let mut own = standard.clone();
        own.insert("style-refiner".into(), "sonnet".into());
        assert_eq!(Mix::of(&own), None);
        let mut fewer = standard.clone();
        fewer.shift_remove("main");
        assert_eq!(Mix::of(&fewer), Some(Mix::Standard));
        assert_eq!(model_for(&fewer, "main"), "sonnet");
        assert_eq!(model_for(&own, "style-refiner"), "sonnet");
        assert_eq!(Mix::from_name("经济"), Some(Mix::Economy));
    }

    #[test]
    fn model_names_are_read_by_family() {
        assert_eq!(Model::from_name("sonnet"), Some(Model::Sonnet));
        assert_eq!(Model::from_name("claude-opus-4-1"), Some(Model::Opus));
        assert_eq!(Model::from_name("Haiku 3.5"), Some(Model::Haiku));
        assert_eq!(Model::from_name("inherit"), None);
        assert_eq!(Model::from_name("-"), None);
    }

    #[test]
    fn default_models_match_the_settings_defaults() {
        let s = crate::model::Settings::default();
        for (agent, model) in &s.models {
            assert_eq!(default_model(agent).name(), model, "{agent}");
        }
    }

    #[test]
    fn a_total_splits_by_the_prd_ratio() {
        // Refiner: 6K in, 4.5K out.
        assert_eq!(split_total(&["style-refiner"], 10_500), (6_000, 4_500));
        // Writer + summarizer: 17K in, 5.5K out.
        assert_eq!(
            split_total(&["chapter-writer", "summarizer"], 22_500),
            (17_000, 5_500)
        );
        assert_eq!(split_total(&[], 0), (0, 0));
        let (i, o) = split_total(&[], 42_000);
        assert_eq!((i, o), (31_000, 11_000));
    }

    #[test]
    fn stages_name_the_agents_they_account_for() {
        assert_eq!(stage_agents("drafted"), ["chapter-writer", "summarizer"]);
        assert_eq!(stage_agents("polished"), ["style-refiner"]);
        assert!(stage_agents("committed").is_empty());
    }
}
