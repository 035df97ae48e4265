//! `ai-blacklist.json` — AI-cliché phrases and structural patterns (PRD §7).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::common::{Extra, SLUG, StrMap, is_false};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct AiBlacklist {
    #[schemars(range(min = 1))]
    pub version: u32,
    /// 类别 slug → 中文名。
    #[serde(default)]
    pub categories: StrMap,
    pub entries: Vec<BlacklistEntry>,
    /// 作者确认可用、永不计数的短语。
    #[serde(default)]
    pub whitelist: Vec<String>,
    /// 结构性 AI 痕迹（正则）。
    #[serde(default)]
    pub patterns: Vec<BlacklistPattern>,
    #[serde(flatten)]
    pub extra: Extra,
}

/// Who put a phrase on the list (§7 黑名单维护).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum EntrySource {
    Seed,
    User,
    Judge,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct BlacklistEntry {
    #[schemars(length(min = 1))]
    pub phrase: String,
    #[schemars(pattern(SLUG))]
    pub category: String,
    /// 只在叙述中计数（「」“”『』 内的对话不算）。
    #[serde(default, skip_serializing_if = "is_false")]
    pub narration_only: bool,
    /// 只在段首计数。
    #[serde(default, skip_serializing_if = "is_false")]
    pub paragraph_start_only: bool,
    /// 替换建议。
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub replacements: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<EntrySource>,
    /// 由 QualityJudge 建议加入时的证据（章节与原文）。
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub evidence: Option<String>,
    #[serde(flatten)]
    pub extra: Extra,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct BlacklistPattern {
    #[schemars(pattern(SLUG))]
    pub id: String,
    /// 中文名，如「不是……而是……」。
    #[schemars(length(min = 1))]
    pub name: String,
    /// 正则表达式（Rust regex 语法）。
    #[schemars(length(min = 1))]
    pub regex: String,
    #[serde(default, skip_serializing_if = "is_false")]
    pub narration_only: bool,
    /// 紧挨在命中之前出现这些字符之一时不计（如破折号前的「，。」：「，——」是白话文的惯例写法）。
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub not_after: Option<String>,
    /// 每千字上限；超过即报。
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0))]
    pub max_per_1000: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    #[serde(flatten)]
    pub extra: Extra,
}

/// What [`AiBlacklist::upgrade_from`] changed.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Upgrade {
    /// Phrases of the current seed the project did not have.
    pub added: Vec<String>,
    /// Seed phrases the project still had that the current seed dropped (usually human 网文
    /// habits an older seed counted as AI).
    pub removed: Vec<String>,
    /// Pattern ids of the current seed the project did not have.
    pub patterns_added: Vec<String>,
    /// Category slugs added for the new phrases.
    pub categories_added: Vec<String>,
    /// Seed phrases not added because the author whitelisted them.
    pub kept_out_by_whitelist: Vec<String>,
}

impl Upgrade {
    pub fn is_empty(&self) -> bool {
        self.added.is_empty()
            && self.removed.is_empty()
            && self.patterns_added.is_empty()
            && self.categories_added.is_empty()
    }
}

impl AiBlacklist {
    /// Brings a project's list up to the current seed (`novel blacklist upgrade`): seed
    /// phrases the seed no longer has go, the seed's new phrases, patterns and categories come
    /// in; what the author or the judge added, the whitelist, and keys the engine does not know
    /// stay as they are. A seed phrase the author whitelisted is not added. Phrases compare as
    /// written (the seed's are canonical).
    pub fn upgrade_from(&mut self, seed: &AiBlacklist) -> Upgrade {
        let mut report = Upgrade::default();
        let in_seed = |p: &str| seed.entries.iter().any(|e| e.phrase == p);
        self.entries.retain(|e| {
            let dropped = e.source == Some(EntrySource::Seed) && !in_seed(&e.phrase);
            if dropped {
                report.removed.push(e.phrase.clone());
            }
            !dropped
        });
        for e in &seed.entries {
            if self.entries.iter().any(|x| x.phrase == e.phrase) {
                continue;
            }
            if self.whitelist.iter().any(|w| w == &e.phrase) {
                report.kept_out_by_whitelist.push(e.phrase.clone());
                continue;
            }
            if !self.categories.contains_key(&e.category)
                && let Some(name) = seed.categories.get(&e.category)
            {
                self.categories.insert(e.category.clone(), name.clone());
                report.categories_added.push(e.category.clone());
            }
            self.entries.push(e.clone());
            report.added.push(e.phrase.clone());
        }
        for p in &seed.patterns {
            if !self.patterns.iter().any(|x| x.id == p.id) {
                self.patterns.push(p.clone());
                report.patterns_added.push(p.id.clone());
            }
        }
        report
    }
}

#[cfg(test)]
mod upgrade_tests {
    use super::*;

    fn list(v: serde_json::Value) -> AiBlacklist {
        serde_json::from_value(v).unwrap()
    }

    #[test]
    fn old_seed_phrases_go_new_ones_come_the_authors_stay() {
        let seed = list(serde_json::json!({"version": 1,
            "categories": {"body_language": "微表情套路", "summaries": "总结升华"},
            "entries": [
                {"phrase": "嘴角勾起一抹", "category": "body_language", "source": "seed"},
                {"phrase": "眸底", "category": "body_language", "source": "seed"},
                {"phrase": "这一刻，他终于明白", "category": "summaries", "source": "seed"}],
            "patterns": [{"id": "not-but", "name": "不是……而是……", "regex": "不是.{1,20}而是"}]}));
        let mut project = list(serde_json::json!({"version": 1, "x-作者备注": "保留",
            "categories": {"body_language": "微表情套路"},
            "entries": [
                {"phrase": "嘴角勾起一抹", "category": "body_language", "source": "seed"},
                {"phrase": "沉声道", "category": "body_language", "source": "seed"},
                {"phrase": "不由得", "category": "body_language", "source": "user"}],
            "whitelist": ["眸底"]}));
        let r = project.upgrade_from(&seed);
        assert_eq!(r.removed, ["沉声道"]);
        assert_eq!(r.added, ["这一刻，他终于明白"]);
        assert_eq!(r.kept_out_by_whitelist, ["眸底"]);
        assert_eq!(r.categories_added, ["summaries"]);
        assert_eq!(r.patterns_added, ["not-but"]);
        let phrases: Vec<&str> = project.entries.iter().map(|e| e.phrase.as_str()).collect();
        assert_eq!(phrases, ["嘴角勾起一抹", "不由得", "这一刻，他终于明白"]);
        assert_eq!(project.extra["x-作者备注"], "保留");
        // Twice changes nothing more.
        assert!(project.upgrade_from(&seed).is_empty());
    }
}
