//! Key phrases of a Chinese rule sentence (seed `000` step 4: 「从变更规则 rule 句子中抽取 3-5 个关键短语」).
//!
//! A deterministic, glossary-driven segmenter rather than jieba:
//! - **deterministic**: the same sentence and project always give the same phrases, so the
//!   pending entry and the tests are stable (no dictionary version, no HMM guesses);
//! - **cheap**: nothing to initialise (jieba's dictionary load is ~130 ms per process; this
//!   binary runs once per skill step);
//! - **the glossary is what matters**: the phrases worth matching in a contract are the
//!   project's own terms — character names and aliases, world-rule ids, terms the world docs
//!   highlight, storyline names — which no general dictionary knows.
//!
//! How a sentence is cut:
//! 1. At each position the longest glossary term wins (it is a phrase, scored first).
//! 2. Otherwise the longest stop word (function words such as 需要、可以、的、了 and generic verbs
//!    such as 突破、使用) ends the current run and is dropped.
//! 3. Punctuation, whitespace, ASCII letters and digits, comparison signs end the run too.
//! 4. Runs of CJK characters between cuts are candidate phrases; runs longer than 4 are cut
//!    into pieces of 4 (3 + 2 for five), single characters are dropped.
//!
//! Scoring: glossary hits first (in sentence order, at most 5); other candidates, longest first
//! then in sentence order, only top up to 3 — non-glossary chunks are weaker evidence, and every
//! extra one widens the net of "possibly affected" contracts.

use std::collections::BTreeSet;

use serde::Serialize;

use crate::model::{Character, Storylines};

/// Most phrases kept per sentence.
pub const MAX_PHRASES: usize = 5;
/// Non-glossary chunks only top the list up to this many.
pub const MIN_PHRASES: usize = 3;

/// Function words and generic verbs: never key phrases, always cut points. Multi-character
/// entries are matched before single characters (longest match). Single characters are kept
/// few, because many of them also live inside real words (能力, 存在, 和平).
pub const STOP_WORDS: &[&str] = &[
    // modal and logical words
    "需要",
    "可以",
    "必须",
    "不能",
    "无法",
    "不得",
    "不可",
    "禁止",
    "应当",
    "应该",
    "能够",
    "只能",
    "只有",
    "除非",
    "否则",
    "如果",
    "假如",
    "一旦",
    "因为",
    "所以",
    "因此",
    "但是",
    "然而",
    "而且",
    "并且",
    "或者",
    "以及",
    "以上",
    "以下",
    "之间",
    "其中",
    "已经",
    "正在",
    "将会",
    "不会",
    "不是",
    "就是",
    "可能",
    "时候",
    "所有",
    "一切",
    "任何",
    "每个",
    "一个",
    "这个",
    "那个",
    "这些",
    "那些",
    "没有",
    "进行",
    "通过",
    "至少",
    "最多",
    "超过",
    "达到",
    "低于",
    "高于",
    "等于",
    "不超过",
    "之一",
    // generic verbs
    "突破",
    "使用",
    "进入",
    "离开",
    "获得",
    "拥有",
    "成为",
    "发现",
    "保护",
    "面对",
    "倾向",
    "出现",
    "发生",
    "导致",
    "影响",
    "需",
    "须",
    // single function characters
    "的",
    "了",
    "在",
    "和",
    "与",
    "或",
    "被",
    "把",
    "将",
    "会",
    "能",
    "要",
    "是",
    "及",
    "并",
    "而",
    "则",
    "其",
    "于",
    "都",
    "也",
    "又",
    "就",
    "才",
    "均",
    "皆",
    "着",
    "过",
    "即",
];

/// Where a glossary term came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum TermSource {
    CharacterName,
    WorldRuleId,
    WorldDoc,
    StorylineName,
    Extra,
}

/// The project's own vocabulary, longest terms first.
#[derive(Debug, Clone, Default)]
pub struct Glossary {
    /// (term as chars, source), sorted by length descending then term.
    terms: Vec<(Vec<char>, TermSource)>,
}

impl Glossary {
    /// A glossary from explicit terms (tests, extra vocabulary).
    pub fn from_terms<'a>(terms: impl IntoIterator<Item = &'a str>) -> Self {
        let mut g = Glossary::default();
        for t in terms {
            g.insert(t, TermSource::Extra);
        }
        g
    }

    /// Adds a term (trimmed; 2–12 characters; duplicates ignored).
    pub fn insert(&mut self, term: &str, source: TermSource) {
        let chars: Vec<char> = term.trim().chars().collect();
        if !(2..=12).contains(&chars.len()) || chars.iter().any(|c| c.is_whitespace()) {
            return;
        }
        if self.terms.iter().any(|(t, _)| *t == chars) {
            return;
        }
        self.terms.push((chars, source));
        self.terms
            .sort_by(|a, b| b.0.len().cmp(&a.0.len()).then_with(|| a.0.cmp(&b.0)));
    }

    pub fn len(&self) -> usize {
        self.terms.len()
    }

    pub fn is_empty(&self) -> bool {
        self.terms.is_empty()
    }

    pub fn contains(&self, term: &str) -> bool {
        let chars: Vec<char> = term.chars().collect();
        self.terms.iter().any(|(t, _)| *t == chars)
    }

    /// The longest term starting at `chars[i]`.
    fn longest_at(&self, chars: &[char], i: usize) -> Option<usize> {
        self.terms
            .iter()
            .find(|(t, _)| chars[i..].starts_with(t))
            .map(|(t, _)| t.len())
    }

    /// The project glossary: character display names and aliases, world-rule ids, terms from
    /// the world docs (headings, `**bold**`, 「quoted」), storyline names.
    pub fn from_project(
        characters: &[&Character],
        rule_ids: &[&str],
        world_docs: &[&str],
        storylines: Option<&Storylines>,
    ) -> Self {
        let mut g = Glossary::default();
        for c in characters {
            g.insert(&c.display_name, TermSource::CharacterName);
            for a in &c.aliases {
                g.insert(a, TermSource::CharacterName);
            }
        }
        for id in rule_ids {
            g.insert(id, TermSource::WorldRuleId);
        }
        for doc in world_docs {
            for term in doc_terms(doc) {
                g.insert(&term, TermSource::WorldDoc);
            }
        }
        if let Some(s) = storylines {
            for line in &s.storylines {
                g.insert(&line.name, TermSource::StorylineName);
            }
        }
        g
    }
}

/// Terms a world doc highlights: Markdown headings, `**bold**` spans and 「」/『』 quotes.
pub fn doc_terms(doc: &str) -> Vec<String> {
    let mut out = Vec::new();
    for line in doc.lines() {
        let t = line.trim_start();
        if t.starts_with('#') {
            let heading = t.trim_start_matches('#').trim();
            // "一、修炼体系" / "1. 境界" → the words after the numbering.
            let heading = heading
                .trim_start_matches(|c: char| {
                    c.is_ascii_digit() || "一二三四五六七八九十、.．）) ".contains(c)
                })
                .trim();
            out.push(heading.to_string());
        }
    }
    for (open, close) in [("**", "**"), ("「", "」"), ("『", "』")] {
        let mut rest = doc;
        while let Some(start) = rest.find(open) {
            let after = &rest[start + open.len()..];
            let Some(end) = after.find(close) else {
                break;
            };
            out.push(after[..end].trim().to_string());
            rest = &after[end + close.len()..];
        }
    }
    out
}

/// One extracted phrase.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct KeyPhrase {
    pub text: String,
    /// True when the phrase is a glossary term.
    pub glossary: bool,
}

fn is_cjk(c: char) -> bool {
    matches!(c as u32,
        0x3400..=0x4DBF | 0x4E00..=0x9FFF | 0xF900..=0xFAFF | 0x20000..=0x2FA1F)
}

fn stop_at(chars: &[char], i: usize) -> Option<usize> {
    STOP_WORDS
        .iter()
        .map(|w| w.chars().collect::<Vec<char>>())
        .filter(|w| chars[i..].starts_with(w))
        .map(|w| w.len())
        .max()
}

/// Cuts a run of CJK characters into pieces of at most 4 (five → 3 + 2).
fn cut_run(run: &[char], start: usize, out: &mut Vec<(usize, String)>) {
    let mut i = 0;
    while run.len() - i > 4 {
        let take = if run.len() - i == 5 { 3 } else { 4 };
        out.push((start + i, run[i..i + take].iter().collect()));
        i += take;
    }
    if run.len() - i >= 2 {
        out.push((start + i, run[i..].iter().collect()));
    }
}

/// The 3–5 key phrases of `sentence` (fewer only when the sentence has fewer candidates).
pub fn extract(sentence: &str, glossary: &Glossary) -> Vec<KeyPhrase> {
    let chars: Vec<char> = sentence.chars().collect();
    let mut hits: Vec<String> = Vec::new();
    let mut chunks: Vec<(usize, String)> = Vec::new();
    let mut run: Vec<char> = Vec::new();
    let mut run_start = 0;
    let mut i = 0;
    let flush = |run: &mut Vec<char>, start: usize, chunks: &mut Vec<(usize, String)>| {
        cut_run(run, start, chunks);
        run.clear();
    };
    while i < chars.len() {
        if let Some(n) = glossary.longest_at(&chars, i) {
            flush(&mut run, run_start, &mut chunks);
            hits.push(chars[i..i + n].iter().collect());
            i += n;
            continue;
        }
        if !is_cjk(chars[i]) {
            flush(&mut run, run_start, &mut chunks);
            i += 1;
            continue;
        }
        if let Some(n) = stop_at(&chars, i) {
            flush(&mut run, run_start, &mut chunks);
            i += n;
            continue;
        }
        if run.is_empty() {
            run_start = i;
        }
        run.push(chars[i]);
        i += 1;
    }
    flush(&mut run, run_start, &mut chunks);

    let mut seen = BTreeSet::new();
    let mut out: Vec<KeyPhrase> = Vec::new();
    for h in hits {
        if out.len() == MAX_PHRASES {
            break;
        }
        if seen.insert(h.clone()) {
            out.push(KeyPhrase {
                text: h,
                glossary: true,
            });
        }
    }
    // Longest first, then sentence order (stable sort keeps position order among equals).
    chunks.sort_by(|a, b| {
        b.1.chars()
            .count()
            .cmp(&a.1.chars().count())
            .then(a.0.cmp(&b.0))
    });
    for (_, c) in chunks {
        if out.len() >= MIN_PHRASES {
            break;
        }
        if seen.insert(c.clone()) {
            out.push(KeyPhrase {
                text: c,
                glossary: false,
            });
        }
    }
    out
}

/// Just the phrase texts.
pub fn extract_texts(sentence: &str, glossary: &Glossary) -> Vec<String> {
    extract(sentence, glossary)
        .into_iter()
        .map(|p| p.text)
        .collect()
}
