//! Finding a character by name: in a list of names (`pov_characters`, `shared_characters`) and in
//! free text (a foreshadowing description, a convergence trigger).
//!
//! A name that is part of another character's name cannot be decided reliably: 「苏婉」 inside
//! 「苏婉儿的玉佩」 most likely means 苏婉儿. Such a hit is reported as [`NameMatch::Ambiguous`] so
//! that retirement protection can block conservatively and say why (seed `000` step 3), while
//! change propagation, which looks for the character itself, does not count it: at any place
//! the longest registered name written there is the one meant ([`find_name`]).

use crate::model::Character;

/// The names one character goes by.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NameSet {
    pub slug: String,
    /// Display name first, then the registered aliases (empty ones dropped).
    pub names: Vec<String>,
}

impl NameSet {
    pub fn of(c: &Character) -> Self {
        let mut names = vec![c.display_name.trim().to_string()];
        for a in &c.aliases {
            let a = a.trim();
            if !a.is_empty() && !names.iter().any(|n| n == a) {
                names.push(a.to_string());
            }
        }
        names.retain(|n| !n.is_empty());
        NameSet {
            slug: c.id.clone(),
            names,
        }
    }

    /// Every name of every *other* character (for the substring check).
    pub fn others(me: &str, cast: &[&Character]) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        for c in cast.iter().filter(|c| c.id != me) {
            for n in NameSet::of(c).names {
                if !out.contains(&n) {
                    out.push(n);
                }
            }
        }
        out
    }
}

/// The outcome of looking for a character.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NameMatch {
    None,
    /// The character is named: `matched` is the name (or slug) found.
    Certain {
        matched: String,
    },
    /// A name of the character occurs only inside a longer text that is (or may be) someone
    /// else: `within` is that longer name or list entry.
    Ambiguous {
        matched: String,
        within: String,
    },
}

impl NameMatch {
    pub fn is_none(&self) -> bool {
        matches!(self, NameMatch::None)
    }
}

fn slug_char(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'-' || b == b'_'
}

/// True when the ASCII slug occurs in `text` as a whole token (not inside `lu-chenxi`).
pub fn slug_in(text: &str, slug: &str) -> bool {
    let bytes = text.as_bytes();
    text.match_indices(slug).any(|(i, _)| {
        let before = i.checked_sub(1).map(|j| bytes[j]);
        let after = bytes.get(i + slug.len()).copied();
        !before.is_some_and(slug_char) && !after.is_some_and(slug_char)
    })
}

/// Where a name occurs in a text, by longest match over every registered name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Occurrence<'a> {
    None,
    /// Written as itself at this byte offset.
    At(usize),
    /// Written only as part of this longer registered name (苏婉 inside 苏婉儿).
    Within(&'a str),
}

/// Finds `name` in `text` where the longest registered name at that place is `name` itself:
/// an occurrence inside a longer name of `known` that is written there (苏婉儿 for 苏婉) is not
/// the name, and is reported as [`Occurrence::Within`] only when no other occurrence is.
pub fn find_name<'a>(text: &str, name: &str, known: &'a [String]) -> Occurrence<'a> {
    if name.is_empty() {
        return Occurrence::None;
    }
    let longer: Vec<&'a String> = known
        .iter()
        .filter(|o| o.len() > name.len() && o.contains(name))
        .collect();
    let mut within = None;
    for (start, _) in text.match_indices(name) {
        let end = start + name.len();
        let cover = longer.iter().find(|o| {
            text.match_indices(o.as_str())
                .any(|(s, m)| s <= start && end <= s + m.len())
        });
        match cover {
            None => return Occurrence::At(start),
            Some(o) => {
                within.get_or_insert(o.as_str());
            }
        }
    }
    within.map_or(Occurrence::None, Occurrence::Within)
}

/// Looks for the character in free text.
pub fn in_text(text: &str, me: &NameSet, others: &[String]) -> NameMatch {
    let mut ambiguous: Option<NameMatch> = None;
    for name in &me.names {
        match find_name(text, name, others) {
            Occurrence::At(_) => {
                return NameMatch::Certain {
                    matched: name.clone(),
                };
            }
            Occurrence::Within(o) if ambiguous.is_none() => {
                ambiguous = Some(NameMatch::Ambiguous {
                    matched: name.clone(),
                    within: o.to_string(),
                });
            }
            _ => {}
        }
    }
    if slug_in(text, &me.slug) {
        return NameMatch::Certain {
            matched: me.slug.clone(),
        };
    }
    ambiguous.unwrap_or(NameMatch::None)
}

/// Looks for the character in one entry of a list of names.
pub fn in_entry(entry: &str, me: &NameSet, others: &[String]) -> NameMatch {
    let entry = entry.trim();
    if entry == me.slug || me.names.iter().any(|n| n == entry) {
        return NameMatch::Certain {
            matched: entry.to_string(),
        };
    }
    if others.iter().any(|o| o == entry) {
        return NameMatch::None;
    }
    // An entry that is nobody's exact name but contains one of ours («苏婉（化名）»), or one
    // of ours only inside a longer name («苏婉儿（化名）»): unsure either way.
    for name in &me.names {
        match find_name(entry, name, others) {
            Occurrence::None => {}
            Occurrence::At(_) => {
                return NameMatch::Ambiguous {
                    matched: name.clone(),
                    within: entry.to_string(),
                };
            }
            Occurrence::Within(o) => {
                return NameMatch::Ambiguous {
                    matched: name.clone(),
                    within: o.to_string(),
                };
            }
        }
    }
    if slug_in(entry, &me.slug) {
        return NameMatch::Ambiguous {
            matched: me.slug.clone(),
            within: entry.to_string(),
        };
    }
    NameMatch::None
}
