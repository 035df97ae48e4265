//! Pieces shared by every file kind: the extra-keys bag, id patterns, small enums.

use indexmap::IndexMap;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// Keys the model does not know. Author-edited files keep them across a rewrite.
pub type Extra = Map<String, Value>;

/// An ordered string map (keeps the author's key order on rewrite).
pub type StrMap = IndexMap<String, String>;

/// Slug ids: `lin-feng`, `jiangwang_dao`, `ancient_prophecy`. ASCII lowercase, digits, `-`/`_`,
/// at most 64 characters (ids name files). The length cap is a lookahead: JSON Schema patterns
/// are ECMA-262 regular expressions, which have it (the `regex` crate does not). It counts the
/// slug's own characters, not `.`: the same strings match (the rest of the pattern allows
/// nothing else), and a Unicode `.{1,64}` would compile to a large automaton on every hook call.
pub const SLUG: &str = r"^(?=[a-z0-9_-]{1,64}$)[a-z0-9]+(?:[-_][a-z0-9]+)*$";
/// The longest slug [`is_slug`] and [`SLUG`] accept.
pub const SLUG_MAX_LEN: usize = 64;
/// The highest chapter number a project may use (a 500-万字 book has ~1,700 chapters). Far
/// below `u32::MAX`, so `last + 1` never wraps and every chapter still names a file.
pub const MAX_CHAPTER: u32 = 99_999;
/// L1 world-rule ids: `W-001`.
pub const WORLD_RULE_ID: &str = r"^W-[0-9]{3,}$";
/// L2 character-contract ids: `C-LUCHEN-001`.
pub const CONTRACT_ID: &str = r"^C-[A-Z0-9]+(?:-[A-Z0-9]+)*-[0-9]{3,}$";
/// LS storyline-spec ids: `LS-001`.
pub const STORYLINE_RULE_ID: &str = r"^LS-[0-9]{3,}$";

/// True when `s` is a slug id (see [`SLUG`]).
pub fn is_slug(s: &str) -> bool {
    let mut prev_sep = true;
    if s.is_empty() || s.len() > SLUG_MAX_LEN {
        return false;
    }
    for c in s.chars() {
        match c {
            'a'..='z' | '0'..='9' => prev_sep = false,
            '-' | '_' if !prev_sep => prev_sep = true,
            _ => return false,
        }
    }
    !prev_sep
}

/// `hard` rules cannot be broken; `soft` ones may, with a reason (PRD §6.5.2, §6.6.4).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ConstraintType {
    Hard,
    Soft,
}

/// Foreshadowing status; it only moves forward (planted < advanced < resolved).
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum ForeshadowStatus {
    Planted,
    Advanced,
    Resolved,
}

/// Foreshadowing scope (伏笔跨度): short ones are due inside their range; long never overdue.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ForeshadowScope {
    Short,
    Medium,
    Long,
}

/// The gate's decision (质量门控): §8.2 as revised by `003`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum GateDecision {
    Pass,
    Polish,
    Revise,
    Pause,
    Rewrite,
}

impl GateDecision {
    /// The verdict as the author and the agents read it (`修订 revise` …): one wording for the
    /// CLI, the gate's refusals and the rounds in a packet.
    pub fn label(self) -> &'static str {
        match self {
            GateDecision::Pass => "通过 pass",
            GateDecision::Polish => "二次润色后通过 polish",
            GateDecision::Revise => "修订 revise",
            GateDecision::Pause => "暂停，等作者决定 pause",
            GateDecision::Rewrite => "强制重写 rewrite",
        }
    }
}

/// Keeps "absent" and "explicitly null" apart, so a rewrite does not add or drop a `null`.
pub(crate) mod double_option {
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    pub fn serialize<T: Serialize, S: Serializer>(
        v: &Option<Option<T>>,
        s: S,
    ) -> Result<S::Ok, S::Error> {
        match v {
            Some(inner) => inner.serialize(s),
            None => s.serialize_none(),
        }
    }

    pub fn deserialize<'de, T: Deserialize<'de>, D: Deserializer<'de>>(
        d: D,
    ) -> Result<Option<Option<T>>, D::Error> {
        Option::<T>::deserialize(d).map(Some)
    }
}

pub(crate) fn is_false(b: &bool) -> bool {
    !*b
}

/// A short, stable digest of a staged text (FNV-1a, 64 bits, hex): enough to tell whether a
/// revision or a polish pass changed the chapter — not a security measure.
pub fn text_digest(bytes: &[u8]) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in bytes {
        h ^= u64::from(*b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    format!("{h:016x}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slug_rules() {
        for ok in ["lin-feng", "jiangwang_dao", "a", "main-arc-2", "x9"] {
            assert!(is_slug(ok), "{ok}");
        }
        for bad in [
            "",
            "林枫",
            "Lin",
            "-a",
            "a-",
            "a--b",
            "a b",
            "__proto__",
            "a.b",
            "../x",
        ] {
            assert!(!is_slug(bad), "{bad}");
        }
        // The schema pattern as the validator runs it agrees with the function, at the
        // length cap too.
        let schema = serde_json::json!({"type": "string", "pattern": SLUG});
        let validator = jsonschema::validator_for(&schema).unwrap();
        let longest = "a".repeat(SLUG_MAX_LEN);
        let too_long = "a".repeat(SLUG_MAX_LEN + 1);
        let long_dashed = format!("{}-b", "a".repeat(SLUG_MAX_LEN - 1));
        for s in [
            "lin-feng",
            "a--b",
            "林枫",
            "__proto__",
            "x_9",
            "",
            "a\nb",
            "ab\n",
            longest.as_str(),
            too_long.as_str(),
            long_dashed.as_str(),
        ] {
            let by_pattern = validator.is_valid(&serde_json::json!(s));
            assert_eq!(by_pattern, is_slug(s), "pattern and fn disagree on {s}");
        }
        assert!(is_slug(&longest) && !is_slug(&too_long) && !is_slug(&long_dashed));
    }
}
