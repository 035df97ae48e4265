//! Structural AI tells (「不是……而是……」, 破折号滥用, 「仿佛……一般」 …): the regex
//! `patterns` of `ai-blacklist.json`, each with its own density limit (`max_per_1000`).
//!
//! The regexes run over the normalised text (their sources are normalised the same way, see
//! [`normalize_regex`]) in multi-line mode, so `^` is a paragraph start; `narration_only`
//! patterns skip matches that start inside dialogue quotes. The Rust regex engine has no
//! look-around: a rule that must look at a character before its match (不是 but not 是不是)
//! matches it and names the part to report `(?P<hit>…)`.
//!
//! Layer: checks — the checks of a text (blacklist, repetition, patterns, lint) and their findings;
//! above the ground.

use regex::{Regex, RegexBuilder};

use novel_core::model::AiBlacklist;

use crate::markdown::{FRONT, HEADING, MARKUP};
use crate::normalize::{normalize_regex, normalize_str};
use crate::segment::{DIALOGUE, Document, Span};

/// A compiled pattern rule.
#[derive(Debug, Clone)]
pub struct PatternRule {
    pub id: String,
    pub name: String,
    pub description: Option<String>,
    pub narration_only: bool,
    pub max_per_1000: Option<f64>,
    /// Characters (normalised) that, right before a match, make it not count.
    not_after: Vec<char>,
    regex: Regex,
    /// Index of the `hit` group, when the rule names the part to report.
    hit_group: Option<usize>,
}

/// A pattern whose regex does not compile.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PatternError {
    pub id: String,
    pub message: String,
}

impl std::fmt::Display for PatternError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "句式规则 {} 的正则表达式无效：{}", self.id, self.message)
    }
}

impl std::error::Error for PatternError {}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PatternHit {
    /// Index into [`Patterns::rules`].
    pub rule: usize,
    pub span: Span,
}

#[derive(Debug, Clone, Default)]
pub struct Patterns {
    rules: Vec<PatternRule>,
}

impl Patterns {
    pub fn new(list: &AiBlacklist) -> Result<Patterns, PatternError> {
        let rules = list
            .patterns
            .iter()
            .map(|p| {
                let regex = RegexBuilder::new(&normalize_regex(&p.regex))
                    .multi_line(true)
                    .crlf(true)
                    .build()
                    .map_err(|e| PatternError {
                        id: p.id.clone(),
                        message: e
                            .to_string()
                            .lines()
                            .last()
                            .unwrap_or("")
                            .trim()
                            .to_string(),
                    })?;
                let hit_group = regex.capture_names().position(|n| n == Some("hit"));
                Ok(PatternRule {
                    hit_group,
                    id: p.id.clone(),
                    name: p.name.clone(),
                    description: p.description.clone(),
                    narration_only: p.narration_only,
                    max_per_1000: p.max_per_1000,
                    not_after: p
                        .not_after
                        .as_deref()
                        .map(|s| normalize_str(s).chars().collect())
                        .unwrap_or_default(),
                    regex,
                })
            })
            .collect::<Result<_, _>>()?;
        Ok(Patterns { rules })
    }

    pub fn rules(&self) -> &[PatternRule] {
        &self.rules
    }

    /// Every match of every rule, rule by rule, in text order.
    pub fn scan(&self, doc: &Document) -> Vec<PatternHit> {
        let flags = doc.flags();
        let mut hits = Vec::new();
        for (r, rule) in self.rules.iter().enumerate() {
            let matches: Box<dyn Iterator<Item = regex::Match<'_>>> = match rule.hit_group {
                Some(g) => Box::new(
                    rule.regex
                        .captures_iter(doc.text())
                        .filter_map(move |c| c.get(g)),
                ),
                None => Box::new(rule.regex.find_iter(doc.text())),
            };
            for m in matches {
                if m.as_str().is_empty() {
                    continue;
                }
                let start = doc.char_of(m.start());
                let f = flags.get(start).copied().unwrap_or(0);
                if f & (FRONT | MARKUP | HEADING) != 0 || (rule.narration_only && f & DIALOGUE != 0)
                {
                    continue;
                }
                if start > 0 && rule.not_after.contains(&doc.chars()[start - 1]) {
                    continue;
                }
                hits.push(PatternHit {
                    rule: r,
                    span: Span {
                        start,
                        end: doc.char_of(m.end()),
                    },
                });
            }
        }
        hits
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn template() -> Patterns {
        let list: AiBlacklist =
            serde_json::from_str(include_str!("../../../templates/ai-blacklist.json")).unwrap();
        Patterns::new(&list).unwrap()
    }

    fn ids(p: &Patterns, text: &str) -> Vec<String> {
        let doc = Document::new(text);
        p.scan(&doc)
            .iter()
            .map(|h| p.rules()[h.rule].id.clone())
            .collect()
    }

    #[test]
    fn template_pattern_table() {
        let p = template();
        // (text, rule ids found, why)
        let cases: [(&str, &[&str], &str); 36] = [
            ("这不是退缩，而是等待。", &["not-but"], "不是……而是……"),
            ("他并非不想，而是不能。", &["not-but"], "并非……而是……"),
            ("不是他。而是她。", &[], "跨句不算"),
            (
                "你是不是疯了，而是要我陪你送死？",
                &[],
                "「是不是」不是否定",
            ),
            (
                "要不是你拦着，而是换了别人，早打起来了。",
                &[],
                "「要不是」是假设",
            ),
            ("「不是我，是他！」", &[], "省略版对举在对话里很自然"),
            ("不是害怕，是愤怒。", &["not-is"], "省略版对举"),
            ("不是害怕,是愤怒。", &["not-is"], "半角逗号"),
            ("他说不是，转身走了。", &[], "逗号后不是「是」"),
            ("他仿佛一头困兽一般。", &["as-if-like"], "仿佛……一般"),
            ("他像是一般的庄稼汉。", &[], "「一般的」是普通"),
            ("他仿佛不是一般人。", &[], "「不是一般人」"),
            ("他宛如野兽般扑了上去。", &["as-if-like"], "宛如……般"),
            ("「你像是见了鬼似的。」", &[], "对话里不算"),
            ("他——停住了。", &["em-dash"], "叙述中的破折号"),
            ("「我——」", &[], "对话里的打断不算"),
            ("——他停住了。", &["em-dash"], "段首的破折号"),
            (
                "干苦工的人们——拉车的也在内——虽然不会欢迎战争。",
                &["em-dash"],
                "一句里成对夹着插说的两个破折号算一处（老舍）",
            ),
            (
                "他——停住了。她——转过身。",
                &["em-dash", "em-dash"],
                "跨句的两个破折号不成对",
            ),
            (
                "他想起来了——案发现场少了一个桶——还有那件雨衣——都不见了。",
                &["em-dash", "em-dash"],
                "三个破折号：前两个成对，第三个单算",
            ),
            (
                "这是二十多年前的事，——现在每碗要涨到十文。",
                &[],
                "标点后的破折号是白话文惯例（鲁迅）",
            ),
            ("他终于明白了。——那是她。", &[], "句号后的破折号"),
            (
                "一种疲惫，一种释然，一种空。",
                &["triple-yizhong"],
                "三连一种",
            ),
            ("一种疲惫涌上来。", &[], "一个一种"),
            ("是责任，是担当，更是信念。", &["triple-shi"], "三连是"),
            (
                "没有犹豫，没有退缩，只有向前。",
                &["none-but"],
                "没有……只有",
            ),
            ("他知道，这一战避不开。", &["knows-opener"], "段首他知道，"),
            (
                "前一段。\n　　她明白，躲不过了。",
                &["knows-opener"],
                "第二段段首（多行模式）",
            ),
            ("可他知道，这一战避不开。", &[], "不在段首"),
            ("这一刻，他懂了。", &["this-moment"], "这一刻，"),
            ("这一刻他懂了。", &[], "没有逗号"),
            ("一道冰冷的声音响起。", &["voice-rang"], "声音响起"),
            ("这，就是江湖。", &["this-is"], "这，就是"),
            ("这就是江湖。", &[], "没有逗号"),
            (
                "它不仅仅是一把剑，更是一段记忆。",
                &["not-only"],
                "不仅仅是……更是",
            ),
            (
                "声音不大，却清晰地传进每个人耳中。",
                &["quiet-but-clear"],
                "声音不大，却",
            ),
        ];
        for (text, want, why) in cases {
            assert_eq!(ids(&p, text), want, "{text}: {why}");
        }
    }

    #[test]
    fn a_hit_group_sets_the_reported_span() {
        let p = template();
        let doc = Document::new("他这不是退缩，而是等待。");
        let hits = p.scan(&doc);
        assert_eq!(hits.len(), 1);
        assert_eq!(doc.original(hits[0].span), "不是退缩，而是");
    }

    #[test]
    fn bad_regex_names_the_pattern() {
        let list: AiBlacklist = serde_json::from_value(serde_json::json!({
            "version": 1, "entries": [],
            "patterns": [{"id": "broken", "name": "坏", "regex": "(不是"}]
        }))
        .unwrap();
        let err = Patterns::new(&list).unwrap_err();
        assert_eq!(err.id, "broken");
    }

    #[test]
    fn full_width_bracket_in_a_user_regex_stays_literal() {
        let list: AiBlacklist = serde_json::from_value(serde_json::json!({
            "version": 1, "entries": [],
            "patterns": [{"id": "laugh", "name": "（笑）", "regex": "（笑）"}]
        }))
        .unwrap();
        let p = Patterns::new(&list).unwrap();
        assert_eq!(ids(&p, "他说完（笑）。"), ["laugh"]);
        assert_eq!(ids(&p, "他说完笑。"), Vec::<String>::new());
    }
}
