//! Change propagation (变更传播, PRD §6.5.5; seed `000` step 4): after a world-rule or
//! character-contract update, which L2 character contracts and which L3 chapter contracts of
//! the current volume and later may now be wrong. Every hit says why, with evidence.
//!
//! World rules changed →
//! - L2: a contract whose `rule` names a changed `W-XXX` (明确引用), or contains one of the key
//!   phrases of a changed rule sentence (最小关键字). The phrases come from the extractor in
//!   [`PropagationInputs::extract_phrases`]: segmenting Chinese is not a rule of this crate, so
//!   the caller supplies it (the CLI: `novel_text::keyphrase::extract_texts`, jieba behind a
//!   feature), and tests can pin propagation with a fake one;
//! - L3: `preconditions.required_world_rules` (or an acceptance criterion) names a changed id, or
//!   `preconditions.character_states` names a character with an affected contract.
//!
//! Character contracts changed → L3: `character_states` names the character, or
//! `acceptance_criteria` / `objectives` mention it (display name, alias, slug, former name).

use std::collections::BTreeSet;
use std::fmt;
use std::sync::OnceLock;

use regex::Regex;
use serde::Serialize;

use super::diff::{CharacterChange, RuleChange};
use super::glossary::{Glossary, TermSource};
use super::names::{Occurrence, find_name, slug_in};
use super::{Evidence, Located};
use crate::diagnostic::pointer_escape as escape;
use crate::model::{ChapterContract, Character};

/// Why a contract is reported.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum HitReason {
    /// The text names a changed rule id (`W-002`).
    RuleReference,
    /// The text contains a key phrase of a changed rule sentence.
    KeyPhrase,
    /// `preconditions.character_states` names an affected character.
    CharacterState,
    /// An objective or acceptance criterion mentions a changed character.
    CharacterMention,
}

impl HitReason {
    pub fn label(self) -> &'static str {
        match self {
            HitReason::RuleReference => "明确引用",
            HitReason::KeyPhrase => "关键短语",
            HitReason::CharacterState => "前置角色状态",
            HitReason::CharacterMention => "提及角色",
        }
    }
}

/// One reason a contract is affected.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Hit {
    pub reason: HitReason,
    /// The changed rule behind the hit, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rule_id: Option<String>,
    /// The affected character behind the hit (slug), if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub character: Option<String>,
    pub evidence: Evidence,
}

/// An L2 contract that may need the CharacterWeaver.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AffectedCharacterContract {
    pub character: String,
    pub display_name: String,
    pub contract_id: String,
    pub file: String,
    pub hits: Vec<Hit>,
}

/// An L3 chapter contract that may need the PlotArchitect.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AffectedChapterContract {
    pub chapter: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub volume: Option<u32>,
    pub file: String,
    pub hits: Vec<Hit>,
}

/// The key phrases of one changed rule.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RulePhrases {
    pub rule_id: String,
    pub phrases: Vec<String>,
}

/// The result of a propagation.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Propagation {
    pub changed_rule_ids: Vec<String>,
    pub rule_changes: Vec<RuleChange>,
    pub key_phrases: Vec<RulePhrases>,
    pub changed_character_ids: Vec<String>,
    pub character_changes: Vec<CharacterChange>,
    /// Characters with an affected L2 contract (slugs).
    pub affected_characters: Vec<String>,
    pub affected_character_contracts: Vec<AffectedCharacterContract>,
    pub affected_chapter_contracts: Vec<AffectedChapterContract>,
    /// What the author should check by hand (Chinese), e.g. a changed rule without key phrases.
    pub warnings: Vec<String>,
}

impl Propagation {
    /// True when the update changed nothing the flow tracks.
    pub fn is_empty(&self) -> bool {
        self.changed_rule_ids.is_empty() && self.changed_character_ids.is_empty()
    }
}

/// What propagation reads besides the diffs.
#[derive(Clone, Copy)]
pub struct PropagationInputs<'a> {
    /// The active characters after the update.
    pub characters: &'a [Located<Character>],
    /// Every chapter contract of every volume (the earlier volumes are filtered out here).
    pub chapter_contracts: &'a [Located<ChapterContract>],
    pub current_volume: u32,
    pub glossary: &'a Glossary,
    /// The 3–5 key phrases of one rule sentence, given the glossary (seed `000` step 4). Called
    /// once per sentence of a changed rule and only then, so a segmenter behind it that loads
    /// its dictionary on first use costs nothing when no rule changed.
    pub extract_phrases: &'a dyn Fn(&str, &Glossary) -> Vec<String>,
}

impl fmt::Debug for PropagationInputs<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PropagationInputs")
            .field("characters", &self.characters)
            .field("chapter_contracts", &self.chapter_contracts)
            .field("current_volume", &self.current_volume)
            .field("glossary", &self.glossary)
            .finish_non_exhaustive()
    }
}

fn rule_refs(text: &str) -> Vec<&str> {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| Regex::new(r"W-[0-9]{3,}").expect("rule id pattern"))
        .find_iter(text)
        .map(|m| m.as_str())
        .collect()
}

fn names_of(c: &Character) -> Vec<String> {
    let mut v = vec![c.display_name.clone()];
    v.extend(c.aliases.iter().cloned());
    v.retain(|n| !n.trim().is_empty());
    v
}

/// True when `text` contains the key phrase `p`. A phrase that is a character name must be
/// written as itself, not inside a longer name (苏婉 is not in 「苏婉儿的玉佩」).
fn has_phrase(text: &str, p: &str, glossary: &Glossary, names: &[String]) -> bool {
    if glossary.source(p) == Some(TermSource::CharacterName) {
        matches!(find_name(text, p, names), Occurrence::At(_))
    } else {
        text.contains(p)
    }
}

/// Runs the propagation for the given changes.
pub fn propagate(
    rule_changes: Vec<RuleChange>,
    character_changes: Vec<CharacterChange>,
    input: PropagationInputs<'_>,
) -> Propagation {
    let changed_rules: BTreeSet<&str> = rule_changes.iter().map(|r| r.id.as_str()).collect();
    let key_phrases = key_phrases(&rule_changes, &input);
    let warnings = phraseless_rule_warnings(&rule_changes, &key_phrases);
    // Every registered name, for longest-match name lookups.
    let all_names: Vec<String> = input
        .characters
        .iter()
        .flat_map(|c| names_of(&c.value))
        .collect();
    let rules = ChangedRules {
        ids: &changed_rules,
        key_phrases: &key_phrases,
    };
    let affected_cc = if changed_rules.is_empty() {
        Vec::new()
    } else {
        affected_character_contracts(&rules, &input, &all_names)
    };
    let mut affected_characters: Vec<String> =
        affected_cc.iter().map(|a| a.character.clone()).collect();
    affected_characters.sort();
    affected_characters.dedup();
    let watch = watch_list(&affected_characters, &character_changes, input.characters);
    let affected_ch = affected_chapter_contracts(&changed_rules, &watch, &input, &all_names);

    let mut changed_character_ids: Vec<String> =
        character_changes.iter().map(|c| c.id.clone()).collect();
    changed_character_ids.sort();
    Propagation {
        changed_rule_ids: changed_rules.iter().map(|s| s.to_string()).collect(),
        rule_changes,
        key_phrases,
        changed_character_ids,
        character_changes,
        affected_characters,
        affected_character_contracts: affected_cc,
        affected_chapter_contracts: affected_ch,
        warnings,
    }
}

/// The key phrases of each changed rule, from all its sentences, first occurrence first.
fn key_phrases(rule_changes: &[RuleChange], input: &PropagationInputs<'_>) -> Vec<RulePhrases> {
    rule_changes
        .iter()
        .map(|r| {
            let mut phrases: Vec<String> = Vec::new();
            for s in r.sentences() {
                for p in (input.extract_phrases)(s, input.glossary) {
                    if !phrases.contains(&p) {
                        phrases.push(p);
                    }
                }
            }
            RulePhrases {
                rule_id: r.id.clone(),
                phrases,
            }
        })
        .collect()
}

/// A warning for each changed rule with sentences but no key phrase: only explicit references
/// to it can be found, so the author checks the rest by hand.
fn phraseless_rule_warnings(
    rule_changes: &[RuleChange],
    key_phrases: &[RulePhrases],
) -> Vec<String> {
    let mut warnings = Vec::new();
    for (r, rp) in rule_changes.iter().zip(key_phrases) {
        if rp.phrases.is_empty() && !r.sentences().is_empty() {
            warnings.push(format!(
                "规则 {} 的句子没有抽出关键短语：只有明确引用 {} 的角色契约会被找到，请人工核对其余角色契约",
                r.id, r.id
            ));
        }
    }
    warnings
}

/// The changed world rules: their ids and their key phrases.
struct ChangedRules<'a> {
    ids: &'a BTreeSet<&'a str>,
    key_phrases: &'a [RulePhrases],
}

/// L2: the character contracts whose rule names a changed rule or contains one of its key
/// phrases.
fn affected_character_contracts(
    rules: &ChangedRules<'_>,
    input: &PropagationInputs<'_>,
    all_names: &[String],
) -> Vec<AffectedCharacterContract> {
    let mut affected = Vec::new();
    for located in input.characters {
        let c = &located.value;
        for (i, k) in c.contracts.iter().enumerate() {
            let pointer = format!("/contracts/{i}/rule");
            let hits =
                contract_rule_hits(&located.file, &pointer, &k.rule, rules, input, all_names);
            if !hits.is_empty() {
                affected.push(AffectedCharacterContract {
                    character: c.id.clone(),
                    display_name: c.display_name.clone(),
                    contract_id: k.id.clone(),
                    file: located.file.clone(),
                    hits,
                });
            }
        }
    }
    affected
}

/// Why one L2 contract `rule` (at `file` `pointer`) is affected: each changed rule id it
/// names, then each key phrase it contains.
fn contract_rule_hits(
    file: &str,
    pointer: &str,
    rule: &str,
    rules: &ChangedRules<'_>,
    input: &PropagationInputs<'_>,
    all_names: &[String],
) -> Vec<Hit> {
    let mut hits = Vec::new();
    for id in rule_refs(rule) {
        if rules.ids.contains(id) {
            hits.push(Hit {
                reason: HitReason::RuleReference,
                rule_id: Some(id.to_string()),
                character: None,
                evidence: Evidence::new(file, pointer, id, rule),
            });
        }
    }
    for rp in rules.key_phrases {
        for p in &rp.phrases {
            if has_phrase(rule, p, input.glossary, all_names) {
                hits.push(Hit {
                    reason: HitReason::KeyPhrase,
                    rule_id: Some(rp.rule_id.clone()),
                    character: None,
                    evidence: Evidence::new(file, pointer, p, rule),
                });
            }
        }
    }
    hits
}

/// A character to look for in chapter contracts.
struct Watched {
    slug: String,
    /// Display name, aliases and former names.
    names: Vec<String>,
    /// Also in free text (objectives, acceptance criteria), not only in `character_states`.
    in_text: bool,
}

/// The characters to look for in chapter contracts: those with an affected L2 contract (in
/// `character_states` only), and the changed ones (also in free text, former names included).
fn watch_list(
    affected_characters: &[String],
    character_changes: &[CharacterChange],
    characters: &[Located<Character>],
) -> Vec<Watched> {
    let mut watch: Vec<Watched> = Vec::new();
    for slug in affected_characters {
        if let Some(c) = characters.iter().find(|c| &c.value.id == slug) {
            watch.push(Watched {
                slug: slug.clone(),
                names: names_of(&c.value),
                in_text: false,
            });
        }
    }
    for change in character_changes {
        let mut names = vec![change.display_name.clone()];
        if let Some(c) = characters.iter().find(|c| c.value.id == change.id) {
            names = names_of(&c.value);
        }
        for n in &change.previous_names {
            if !names.contains(n) {
                names.push(n.clone());
            }
        }
        match watch.iter_mut().find(|w| w.slug == change.id) {
            Some(w) => {
                w.names = names;
                w.in_text = true;
            }
            None => watch.push(Watched {
                slug: change.id.clone(),
                names,
                in_text: true,
            }),
        }
    }
    watch
}

/// L3: the chapter contracts of the current volume and later that name a changed rule or a
/// watched character, by chapter then file.
fn affected_chapter_contracts(
    changed_rules: &BTreeSet<&str>,
    watch: &[Watched],
    input: &PropagationInputs<'_>,
    all_names: &[String],
) -> Vec<AffectedChapterContract> {
    let mut affected = Vec::new();
    for located in input.chapter_contracts {
        if located.volume.is_some_and(|v| v < input.current_volume) {
            continue;
        }
        let c = &located.value;
        let file = located.file.as_str();
        let mut hits = chapter_rule_hits(file, c, changed_rules);
        for w in watch {
            character_hits(file, c, w, all_names, &mut hits);
        }
        if !hits.is_empty() {
            affected.push(AffectedChapterContract {
                chapter: c.chapter,
                volume: located.volume,
                file: file.to_string(),
                hits,
            });
        }
    }
    affected.sort_by(|a, b| (a.chapter, &a.file).cmp(&(b.chapter, &b.file)));
    affected
}

/// The changed rules a chapter contract requires or names in an acceptance criterion.
fn chapter_rule_hits(file: &str, c: &ChapterContract, changed_rules: &BTreeSet<&str>) -> Vec<Hit> {
    let mut hits = Vec::new();
    for (i, id) in c.preconditions.required_world_rules.iter().enumerate() {
        if changed_rules.contains(id.as_str()) {
            hits.push(Hit {
                reason: HitReason::RuleReference,
                rule_id: Some(id.clone()),
                character: None,
                evidence: Evidence::new(
                    file,
                    format!("/preconditions/required_world_rules/{i}"),
                    id,
                    id,
                ),
            });
        }
    }
    for (i, text) in c.acceptance_criteria.iter().enumerate() {
        for id in rule_refs(text) {
            if changed_rules.contains(id) {
                hits.push(Hit {
                    reason: HitReason::RuleReference,
                    rule_id: Some(id.to_string()),
                    character: None,
                    evidence: Evidence::new(file, format!("/acceptance_criteria/{i}"), id, text),
                });
            }
        }
    }
    hits
}

/// Where a chapter contract names the watched character `w`: a `character_states` key, and
/// (when watched in free text) a mention in an acceptance criterion or objective.
fn character_hits(
    file: &str,
    c: &ChapterContract,
    w: &Watched,
    all_names: &[String],
    hits: &mut Vec<Hit>,
) {
    let (slug, names) = (&w.slug, &w.names);
    for key in c.preconditions.character_states.keys() {
        if key == slug || names.iter().any(|n| n == key) {
            hits.push(Hit {
                reason: HitReason::CharacterState,
                rule_id: None,
                character: Some(slug.clone()),
                evidence: Evidence::new(
                    file,
                    format!("/preconditions/character_states/{}", escape(key)),
                    key,
                    key,
                ),
            });
        }
    }
    if !w.in_text {
        return;
    }
    let mut texts: Vec<(String, &str)> = Vec::new();
    for (i, t) in c.acceptance_criteria.iter().enumerate() {
        texts.push((format!("/acceptance_criteria/{i}"), t));
    }
    for (i, o) in c.objectives.iter().enumerate() {
        texts.push((format!("/objectives/{i}/description"), &o.description));
    }
    for (pointer, text) in texts {
        // Longest match: 苏婉 is not mentioned where 苏婉儿 is written.
        let found = names
            .iter()
            .find(|n| matches!(find_name(text, n, all_names), Occurrence::At(_)))
            .or_else(|| slug_in(text, slug).then_some(slug));
        if let Some(n) = found {
            hits.push(Hit {
                reason: HitReason::CharacterMention,
                rule_id: None,
                character: Some(slug.clone()),
                evidence: Evidence::new(file, pointer, n, text),
            });
        }
    }
}
