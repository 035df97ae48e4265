//! What an update changed: `world/rules.json` aligned by rule `id` (seed `000` step 4: 「按 id
//! 对齐，diff rule/constraint_type/exceptions 等关键字段」) and character files aligned by slug, their
//! contracts by contract id.

use serde::Serialize;
use serde_json::Value;
use similar::{ChangeTag, TextDiff};

use crate::model::Character;
use crate::model::world::{WorldRule, WorldRules};

/// Fields that record bookkeeping, not meaning: a change to them alone is not a rule change
/// (the WorldBuilder bumps `last_verified` on every rule it touches).
const BOOKKEEPING: [&str; 2] = ["id", "last_verified"];

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ChangeKind {
    Added,
    Removed,
    Changed,
}

impl ChangeKind {
    pub fn label(self) -> &'static str {
        match self {
            ChangeKind::Added => "新增",
            ChangeKind::Removed => "删除",
            ChangeKind::Changed => "修改",
        }
    }
}

/// One world rule that an update added, removed or changed.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RuleChange {
    pub id: String,
    pub kind: ChangeKind,
    /// Fields whose value differs (`rule`, `constraint_type`, `exceptions`, …), sorted.
    pub fields: Vec<String>,
    /// Pointer of the rule in the file that has it (the new file unless removed).
    pub pointer: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub before: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub after: Option<String>,
    /// Character-level diff of `rule`: `…浓度 ≥ [-3-]{+5+}级`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub text_diff: Option<String>,
}

impl RuleChange {
    /// The rule sentences key phrases come from: the new text, and the old one when it differs
    /// (a contract written against the old wording is just as affected).
    pub fn sentences(&self) -> Vec<&str> {
        let mut out = Vec::new();
        if let Some(a) = &self.after {
            out.push(a.as_str());
        }
        if let Some(b) = &self.before
            && self.after.as_deref() != Some(b.as_str())
        {
            out.push(b.as_str());
        }
        out
    }
}

fn rule_object(rule: &WorldRule) -> serde_json::Map<String, Value> {
    match serde_json::to_value(rule) {
        Ok(Value::Object(m)) => m,
        _ => serde_json::Map::new(),
    }
}

/// A readable inline diff by characters: deletions as `[-…-]`, insertions as `{+…+}`.
pub fn text_diff(before: &str, after: &str) -> String {
    let diff = TextDiff::from_chars(before, after);
    let mut out = String::new();
    let mut current: Option<ChangeTag> = None;
    let close = |tag: Option<ChangeTag>, out: &mut String| match tag {
        Some(ChangeTag::Delete) => out.push_str("-]"),
        Some(ChangeTag::Insert) => out.push_str("+}"),
        _ => {}
    };
    for change in diff.iter_all_changes() {
        let tag = change.tag();
        if current != Some(tag) {
            close(current, &mut out);
            match tag {
                ChangeTag::Delete => out.push_str("[-"),
                ChangeTag::Insert => out.push_str("{+"),
                ChangeTag::Equal => {}
            }
            current = Some(tag);
        }
        out.push_str(change.value());
    }
    close(current, &mut out);
    out
}

/// Aligns two versions of `world/rules.json` by `id`. `None` = the file did not exist.
/// Result order: the new file's order, then removed rules in the old file's order.
pub fn diff_rules(before: Option<&WorldRules>, after: Option<&WorldRules>) -> Vec<RuleChange> {
    let empty: Vec<WorldRule> = Vec::new();
    let old = before.map_or(&empty, |r| &r.rules);
    let new = after.map_or(&empty, |r| &r.rules);
    let mut out = Vec::new();
    for (i, n) in new.iter().enumerate() {
        let pointer = format!("/rules/{i}");
        match old.iter().find(|o| o.id == n.id) {
            None => out.push(RuleChange {
                id: n.id.clone(),
                kind: ChangeKind::Added,
                fields: Vec::new(),
                pointer,
                before: None,
                after: Some(n.rule.clone()),
                text_diff: None,
            }),
            Some(o) => {
                let (a, b) = (rule_object(o), rule_object(n));
                let mut fields: Vec<String> = a
                    .keys()
                    .chain(b.keys())
                    .filter(|k| !BOOKKEEPING.contains(&k.as_str()))
                    .filter(|k| a.get(*k) != b.get(*k))
                    .cloned()
                    .collect();
                fields.sort();
                fields.dedup();
                if fields.is_empty() {
                    continue;
                }
                let text_diff = (o.rule != n.rule).then(|| text_diff(&o.rule, &n.rule));
                out.push(RuleChange {
                    id: n.id.clone(),
                    kind: ChangeKind::Changed,
                    fields,
                    pointer,
                    before: Some(o.rule.clone()),
                    after: Some(n.rule.clone()),
                    text_diff,
                });
            }
        }
    }
    for (i, o) in old.iter().enumerate() {
        if !new.iter().any(|n| n.id == o.id) {
            out.push(RuleChange {
                id: o.id.clone(),
                kind: ChangeKind::Removed,
                fields: Vec::new(),
                pointer: format!("/rules/{i}"),
                before: Some(o.rule.clone()),
                after: None,
                text_diff: None,
            });
        }
    }
    out
}

/// One contract of a character that changed.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ContractChange {
    pub id: String,
    pub kind: ChangeKind,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub text_diff: Option<String>,
}

/// A character whose file an update added or whose contracts or names it changed.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CharacterChange {
    /// slug（主键）。
    pub id: String,
    pub display_name: String,
    pub kind: ChangeKind,
    /// Display name and aliases before the change (a chapter contract may still use them).
    pub previous_names: Vec<String>,
    pub contracts: Vec<ContractChange>,
    /// True when the display name or aliases changed.
    pub names_changed: bool,
}

/// Aligns character files by slug and their contracts by id. Characters present before and
/// absent after are not reported here: leaving the cast is a retirement (`novel retire`).
pub fn diff_characters(before: &[&Character], after: &[&Character]) -> Vec<CharacterChange> {
    let mut out = Vec::new();
    for n in after {
        let old = before.iter().find(|o| o.id == n.id);
        let empty = Vec::new();
        let old_contracts = old.map_or(&empty, |o| &o.contracts);
        let mut contracts = Vec::new();
        for k in &n.contracts {
            match old_contracts.iter().find(|o| o.id == k.id) {
                None => contracts.push(ContractChange {
                    id: k.id.clone(),
                    kind: ChangeKind::Added,
                    text_diff: None,
                }),
                Some(o) if o != k => contracts.push(ContractChange {
                    id: k.id.clone(),
                    kind: ChangeKind::Changed,
                    text_diff: (o.rule != k.rule).then(|| text_diff(&o.rule, &k.rule)),
                }),
                Some(_) => {}
            }
        }
        for o in old_contracts {
            if !n.contracts.iter().any(|k| k.id == o.id) {
                contracts.push(ContractChange {
                    id: o.id.clone(),
                    kind: ChangeKind::Removed,
                    text_diff: None,
                });
            }
        }
        let names_changed =
            old.is_some_and(|o| o.display_name != n.display_name || o.aliases != n.aliases);
        if old.is_some() && contracts.is_empty() && !names_changed {
            continue;
        }
        let previous_names = old.map_or_else(Vec::new, |o| {
            let mut v = vec![o.display_name.clone()];
            v.extend(o.aliases.iter().cloned());
            v
        });
        out.push(CharacterChange {
            id: n.id.clone(),
            display_name: n.display_name.clone(),
            kind: if old.is_some() {
                ChangeKind::Changed
            } else {
                ChangeKind::Added
            },
            previous_names,
            contracts,
            names_changed,
        });
    }
    out
}
