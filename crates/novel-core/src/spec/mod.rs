//! The spec engine of the 更新设定 flow (seed `000` steps 2–5, PRD §6.5, `003` §8.5):
//! what a world-rule or character-contract change propagates to, and whether a character may
//! retire.
//!
//! Every function here is pure: it takes loaded values (the store reads the files) and returns
//! a decision with its evidence — the file, the JSON pointer and the text that matched — so a
//! skill can show the author exactly why, and a test can pin it.
//!
//! - [`glossary`]: the project's own vocabulary (character names and aliases, rule ids, world-doc
//!   terms, storyline names) that key phrases are ranked and matched by.
//! - [`diff`]: `world/rules.json` aligned by `id` and character contracts aligned by contract id.
//! - [`propagate`]: which L2 character contracts and L3 chapter contracts a change touches. The
//!   key phrases of a changed rule sentence come from an extractor the caller passes in
//!   (the CLI passes `novel_text::keyphrase`, jieba behind a feature): no segmenter here.
//! - [`retire`]: the three retirement protections (退场保护 A/B/C) and the pure pieces of a
//!   retirement (state removal through the state engine, relationship edges, changelog text).
//! - [`names`]: how a character's names are found in lists and in free text (longest match over
//!   every registered name), including the conservative case where one name is a substring of
//!   another.
//!
//! Layer: loop — the chapter loop and its state machine (pipeline, next step, menu, spec
//! propagation, repair); above the rules.

pub mod diff;
pub mod glossary;
pub mod names;
pub mod propagate;
pub mod retire;

use serde::Serialize;

/// Where a decision came from: a file, a JSON pointer inside it, the text that matched.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct Evidence {
    /// Project-relative path (`foreshadowing/global.json`).
    pub file: String,
    /// RFC 6901 pointer into that file (`/foreshadowing/2/history/0/detail`).
    pub pointer: String,
    /// The exact text that matched (a name, a rule id, a key phrase).
    pub matched: String,
    /// The field's text (shortened to 80 characters), for the author to read.
    pub excerpt: String,
}

impl Evidence {
    pub fn new(file: &str, pointer: impl Into<String>, matched: &str, text: &str) -> Self {
        Evidence {
            file: file.to_string(),
            pointer: pointer.into(),
            matched: matched.to_string(),
            excerpt: excerpt(text),
        }
    }
}

/// At most 80 characters (counted in `char`s, never bytes), with an ellipsis when cut.
pub fn excerpt(text: &str) -> String {
    const MAX: usize = 80;
    if text.chars().count() <= MAX {
        text.to_string()
    } else {
        let mut s: String = text.chars().take(MAX).collect();
        s.push('…');
        s
    }
}

/// A file an input may come from: absent, parsed, or present but unusable (with why).
#[derive(Debug, Clone, PartialEq)]
pub enum Loaded<T> {
    Absent,
    Parsed(T),
    Broken(String),
}

impl<T> Loaded<T> {
    pub fn as_ref(&self) -> Loaded<&T> {
        match self {
            Loaded::Absent => Loaded::Absent,
            Loaded::Parsed(t) => Loaded::Parsed(t),
            Loaded::Broken(why) => Loaded::Broken(why.clone()),
        }
    }

    pub fn parsed(&self) -> Option<&T> {
        match self {
            Loaded::Parsed(t) => Some(t),
            _ => None,
        }
    }
}

/// A value read from a project file, with the file's project-relative path.
#[derive(Debug, Clone, PartialEq)]
pub struct Located<T> {
    pub file: String,
    /// The volume the path claims (`volumes/vol-02/…` → 2), when it claims one.
    pub volume: Option<u32>,
    pub value: T,
}
