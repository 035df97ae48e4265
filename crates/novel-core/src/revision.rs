//! Revision notes and what to do with them (`004`): every issue of a chapter's round that
//! carries a fix instruction, and whether the policy applies them or keeps a candidate.
//!
//! Pure: the evaluations and the leak check arrive as values (`novel-store` loads them).
//!
//! Layer: rules — checks and decisions over the model (judging, ops, validation, the gate,
//! revisions, import); below the loop.

use serde::Serialize;

use crate::gate::{LeakCheck, LeakRisk, leak_fix};
use crate::model::evaluation::{Evaluation, RequiredFix};
use serde_json::Value;

use crate::model::Character;
use crate::model::revision::{MemoryEntry, MemoryKind, RevisionNote};
use crate::model::settings::RevisionPolicy;

/// The pending action a saved candidate leaves (`novel pending list`, `novel next`).
pub const PENDING_CANDIDATE: &str = "revision_candidate";
/// The pending action an applied candidate of a committed chapter leaves.
pub const PENDING_REBUILD: &str = "chapter_rebuild";

/// The chapter of the first pending revision candidate (the `chapter` its pending action
/// records), if any.
pub fn pending_candidate(cp: &crate::model::Checkpoint) -> Option<u32> {
    cp.pending_actions
        .iter()
        .filter(|a| a.kind == PENDING_CANDIDATE)
        .find_map(|a| a.extra.get("chapter").and_then(Value::as_u64))
        .and_then(|n| u32::try_from(n).ok())
}

/// What the notes lead to under the project's policy.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum NotesAction {
    /// No note carries an instruction: the chapter stays as it is.
    None,
    /// `auto_apply`: the revision loop applies them (the gate's `revise`).
    Revise,
    /// `manual_confirm`: the revised chapter is kept as a candidate for the author.
    Candidate,
}

/// The revision notes of a round: each evaluation's `required_fixes` (source `judge:<name>`,
/// the primary judge being `primary`), then the leak check's fix when it found a high risk in
/// the text being judged. Instructions that are empty after trimming are ignored; the same
/// (target, instruction) is kept once, from its first source, blocking when any copy is.
pub fn collect(evaluations: &[(&str, &Evaluation)], leak: Option<&LeakCheck>) -> Vec<RevisionNote> {
    let mut out: Vec<RevisionNote> = Vec::new();
    let mut push = |source: String, f: &RequiredFix| {
        let (target, instruction) = (f.target.trim(), f.instruction.trim());
        if instruction.is_empty() {
            return;
        }
        if let Some(n) = out
            .iter_mut()
            .find(|n| n.target == target && n.instruction == instruction)
        {
            n.blocking |= f.blocking;
            return;
        }
        out.push(RevisionNote {
            source,
            target: target.to_string(),
            instruction: instruction.to_string(),
            blocking: f.blocking,
            extra: Default::default(),
        });
    };
    for (judge, e) in evaluations {
        for f in &e.required_fixes {
            push(format!("judge:{judge}"), f);
        }
    }
    if let Some(l) = leak
        && l.leak_risk == LeakRisk::High
    {
        push("leak".to_string(), &leak_fix());
    }
    out
}

/// What `notes` lead to under `policy`.
pub fn action(policy: RevisionPolicy, notes: &[RevisionNote]) -> NotesAction {
    match (notes.is_empty(), policy) {
        (true, _) => NotesAction::None,
        (false, RevisionPolicy::AutoApply) => NotesAction::Revise,
        (false, RevisionPolicy::ManualConfirm) => NotesAction::Candidate,
    }
}

/// The notes as one block of text, numbered (what the reviser is handed, `004` revision_notes);
/// a blocking note ends with 「（阻断）」, as the writer's and the judge's packets mark it.
pub fn render(notes: &[RevisionNote]) -> String {
    notes
        .iter()
        .enumerate()
        .map(|(i, n)| {
            let blocking = if n.blocking { "（阻断）" } else { "" };
            if n.target.is_empty() {
                format!("{}. {}{blocking}", i + 1, n.instruction)
            } else {
                format!("{}. 【{}】{}{blocking}", i + 1, n.target, n.instruction)
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The profile fields an initial record carries, with their Chinese labels (`004`: name,
/// role, appearance, personality, background, motivation).
const PROFILE_FIELDS: [(&str, &str); 5] = [
    ("role", "定位"),
    ("appearance", "外貌"),
    ("personality", "性格"),
    ("background", "背景"),
    ("motivation", "动机"),
];

/// The initial memory record of `c` (its profile basics; chapter 0).
pub fn profile_entry(c: &Character, now: &str) -> MemoryEntry {
    let mut fields = indexmap::IndexMap::new();
    fields.insert("name".to_string(), c.display_name.clone());
    let mut parts = vec![format!("姓名：{}", c.display_name)];
    for (key, label) in PROFILE_FIELDS {
        let value = match key {
            "role" => c.role.clone(),
            _ => c.extra.get(key).and_then(text_of),
        };
        if let Some(v) = value.filter(|v| !v.trim().is_empty()) {
            parts.push(format!("{label}：{}", v.trim()));
            fields.insert(key.to_string(), v.trim().to_string());
        }
    }
    MemoryEntry {
        kind: MemoryKind::Profile,
        character: c.id.clone(),
        chapter: 0,
        scene: None,
        text: parts.join("；"),
        fields,
        recorded_at: Some(now.to_string()),
        extra: Default::default(),
    }
}

/// A profile field as text: a string, or a list of strings joined (personality is often a
/// list of traits).
fn text_of(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.clone()),
        Value::Array(items) => {
            let parts: Vec<&str> = items.iter().filter_map(Value::as_str).collect();
            (!parts.is_empty()).then(|| parts.join("、"))
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn eval(fixes: &[(&str, &str)]) -> Evaluation {
        let mut v: serde_json::Value = serde_json::from_str(
            r#"{"chapter": 3, "overall": 3.2, "recommendation": "revise", "scores": {
              "plot_logic": {"score": 3, "weight": 0.18}, "character": {"score": 3, "weight": 0.18},
              "immersion": {"score": 3, "weight": 0.15}, "foreshadowing": {"score": 3, "weight": 0.10},
              "pacing": {"score": 3, "weight": 0.08}, "style_naturalness": {"score": 3, "weight": 0.15},
              "emotional_impact": {"score": 3, "weight": 0.08}, "storyline_coherence": {"score": 3, "weight": 0.08}}}"#,
        )
        .unwrap();
        v["required_fixes"] = serde_json::to_value(
            fixes
                .iter()
                .map(|(t, i)| RequiredFix {
                    target: t.to_string(),
                    instruction: i.to_string(),
                    blocking: false,
                    extra: Default::default(),
                })
                .collect::<Vec<_>>(),
        )
        .unwrap();
        serde_json::from_value(v).unwrap()
    }

    #[test]
    fn empty_instructions_are_ignored_and_duplicates_kept_once() {
        let a = eval(&[("第 3 段", "寒山的台词改回反问"), ("第 5 段", "  ")]);
        let b = eval(&[
            ("第 3 段", "寒山的台词改回反问"),
            ("结尾", "钩子落在怀表上"),
        ]);
        let notes = collect(&[("primary", &a), ("secondary", &b)], None);
        let got: Vec<(&str, &str)> = notes
            .iter()
            .map(|n| (n.source.as_str(), n.instruction.as_str()))
            .collect();
        assert_eq!(
            got,
            [
                ("judge:primary", "寒山的台词改回反问"),
                ("judge:secondary", "钩子落在怀表上")
            ]
        );
        assert_eq!(
            action(RevisionPolicy::ManualConfirm, &notes),
            NotesAction::Candidate
        );
        assert_eq!(
            action(RevisionPolicy::AutoApply, &notes),
            NotesAction::Revise
        );
        assert!(render(&notes).starts_with("1. 【第 3 段】寒山"));
    }

    #[test]
    fn no_instruction_means_nothing_to_do() {
        let a = eval(&[("第 1 段", "")]);
        let notes = collect(&[("primary", &a)], None);
        assert!(notes.is_empty());
        assert_eq!(
            action(RevisionPolicy::ManualConfirm, &notes),
            NotesAction::None
        );
    }

    #[test]
    fn a_high_leak_adds_its_fix_a_low_one_does_not() {
        let a = eval(&[]);
        let leak = |risk| LeakCheck {
            chapter: 3,
            leak_risk: risk,
            text_digest: None,
            findings: vec![],
        };
        assert_eq!(
            collect(&[("primary", &a)], Some(&leak(LeakRisk::Low))),
            vec![]
        );
        let notes = collect(&[("primary", &a)], Some(&leak(LeakRisk::High)));
        assert_eq!(notes.len(), 1);
        assert_eq!(notes[0].source, "leak");
        assert!(notes[0].blocking);
    }

    #[test]
    fn a_blocking_fix_stays_blocking_in_the_notes() {
        // Issue 40: 「阻断」 was dropped, and the notes are what a revision candidate is given.
        let mut a = eval(&[("第 7 段「怀里那只怀表」起", "写明沈砚这一次没有听怀表")]);
        a.required_fixes[0].blocking = true;
        let b = eval(&[
            ("第 7 段「怀里那只怀表」起", "写明沈砚这一次没有听怀表"),
            ("第 1 段", "门房一段只留一个动作"),
        ]);
        let notes = collect(&[("secondary", &b), ("primary", &a)], None);
        assert_eq!(notes.len(), 2);
        assert!(notes[0].blocking, "blocking when any judge marks it");
        assert!(!notes[1].blocking);
        assert_eq!(
            render(&notes),
            "1. 【第 7 段「怀里那只怀表」起】写明沈砚这一次没有听怀表（阻断）\n2. 【第 1 段】门房一段只留一个动作"
        );
    }
}
