//! The project glossary (项目词表): the project's own vocabulary — character names and aliases,
//! world-rule ids, terms the world docs highlight, storyline names — built from loaded files.
//!
//! Spec propagation uses it twice: the key-phrase extractor (`novel_text::keyphrase`, which
//! the CLI hands to [`super::propagate`]) keeps its terms whole and ranks them first, and a
//! phrase that is a character name only matches where that name is written as itself. The
//! glossary is data; segmenting a sentence is not this crate's job.

use serde::Serialize;

use crate::model::{Character, Storylines};

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

    /// Where `term` came from, when it is a glossary term.
    pub fn source(&self, term: &str) -> Option<TermSource> {
        let chars: Vec<char> = term.chars().collect();
        self.terms
            .iter()
            .find(|(t, _)| *t == chars)
            .map(|(_, s)| *s)
    }

    /// The length (in characters) of the longest term starting at `chars[i]`: the extractor
    /// cuts these out of a sentence before segmenting the rest.
    pub fn longest_at(&self, chars: &[char], i: usize) -> Option<usize> {
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

/// The glossary terms `sentence` names (longest match, in sentence order, each once): the key
/// phrases a caller without a segmenter can hand to [`super::propagate`]. The binary hands it
/// `novel_text::keyphrase::extract_texts` instead, which ranks these terms first and adds the
/// sentence's other content words.
pub fn glossary_phrases(sentence: &str, glossary: &Glossary) -> Vec<String> {
    let chars: Vec<char> = sentence.chars().collect();
    let mut out: Vec<String> = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        match glossary.longest_at(&chars, i) {
            Some(n) => {
                let term: String = chars[i..i + n].iter().collect();
                if !out.contains(&term) {
                    out.push(term);
                }
                i += n;
            }
            None => i += 1,
        }
    }
    out
}
