//! The hook-only repair through the binary (issue 39): a chapter the gate sends back for its
//! ending alone goes judged → `stage repairing` (the judged text archived with the round's
//! record) → the writer's new paragraphs in `staging/repairs/` → `stage repaired` (spliced into
//! the staged text) → the judge's review → `stage judged` → the gate, which re-runs the craft
//! check on the new text and reads the review. The packets of both agents are the task and the
//! `repair` section only.

use std::path::Path;

use serde_json::{Value, json};

use crate::support::*;
use crate::test_chapter::{stage_drafts, stage_eval, writing_project};

const BODY: &str = "陆尘沿着城北的巷子往废墟里走，雨水顺着斗笠的边沿往下淌，靴子里灌满了泥。\n\n";
const MORAL: &str = "他知道，真正的考验才刚刚开始。";
const HOOK: &str = "废墟深处，有人点起了一盏灯。那盏灯是谁点的？";
const HOOK_2: &str = "灯下坐着一个人，背对着他，肩上落满了灰——那人穿的是他师父下葬时的那件青袍。";

/// `novel --json <args>`: the exit code and the envelope.
fn call(root: &Path, args: &[&str]) -> (i32, Value) {
    let mut full = vec!["--json"];
    full.extend_from_slice(args);
    let out = novel(root, &full);
    (code(&out), json(&out))
}

fn ok(root: &Path, args: &[&str]) -> Value {
    let (rc, v) = call(root, args);
    assert_eq!(rc, 0, "{args:?}: {v}");
    v["data"].clone()
}

fn stage(root: &Path, to: &str, token: &str) -> (i32, Value) {
    call(root, &["chapter", "stage", to, "--token", token])
}

fn packet(root: &Path, agent: &str) -> String {
    let out = novel(root, &["context", agent, "--chapter", "1"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    stdout(&out)
}

fn review(status: &str, evidence: &str) -> Value {
    json!({"chapter": 1, "reviews": [{"part": "ending", "status": status,
        "evidence": evidence, "hook_type": "悬念", "reason": "一句话"}]})
}

/// Chapter 1 (a full-length draft ending on a moral, judged 4.2 by both judges) at its gate:
/// the lock token and the gate's answer.
fn sent_back_for_its_hook(root: &Path) -> (String, Value) {
    let token = ok(root, &["chapter", "begin", "1"])["token"]
        .as_str()
        .unwrap()
        .to_string();
    let gate = judged_draft(root, &token, "", 4.2);
    (token, gate)
}

/// Chapter 1's draft (the agents' files, `added` after its first sentence, a full-length body
/// ending on a moral) through `stage judged` at `score`; the gate's answer.
fn judged_draft(root: &Path, token: &str, added: &str, score: f64) -> Value {
    stage_drafts(root, 1);
    let staged = root.join("staging/chapters/chapter-001.md");
    let text = std::fs::read_to_string(&staged).unwrap().replacen(
        "陆尘推门而入，屋里一灯如豆。",
        &format!("陆尘推门而入，屋里一灯如豆。{added}"),
        1,
    );
    let ending = format!("\n“人呢？”\n\n{}{MORAL}\n", BODY.repeat(30));
    std::fs::write(&staged, text + &ending).unwrap();
    ok(root, &["chapter", "stage", "drafted", "--token", token]);
    ok(root, &["chapter", "stage", "refined", "--token", token]);
    stage_eval(root, 1, score, true);
    ok(root, &["chapter", "stage", "judged", "--token", token]);
    ok(root, &["chapter", "gate", "1", "--token", token])
}

/// A repair after a revision: the evaluations kept from the revision round still review that
/// round's fixes against the text before it (not against the repair's base, which is the text
/// they judged: every quote would look stale).
#[test]
fn a_repair_after_a_revision_keeps_the_revisions_fix_review() {
    let (_t, root) = writing_project();
    let token = ok(&root, &["chapter", "begin", "1"])["token"]
        .as_str()
        .unwrap()
        .to_string();
    let gate = judged_draft(&root, &token, "", 3.2);
    assert_eq!(gate["decision"], "revise", "{gate}");
    assert!(
        gate.get("repair").is_none(),
        "a score revise is a revision: {gate}"
    );
    ok(&root, &["chapter", "stage", "revising", "--token", &token]);
    let gate = judged_draft(&root, &token, "他先把门闩插好，才去看那封信。", 4.2);
    assert_eq!(gate["decision"], "revise", "{gate}");
    assert_eq!(gate["moves"][0]["id"], "repair", "{gate}");
    ok(&root, &["chapter", "stage", "repairing", "--token", &token]);
    std::fs::write(
        root.join("staging/repairs/chapter-001-ending.md"),
        format!("{HOOK}\n"),
    )
    .unwrap();
    ok(&root, &["chapter", "stage", "repaired", "--token", &token]);
    write_json(
        &root.join("staging/evaluations/chapter-001-repair.json"),
        &review("done", HOOK),
    );
    ok(&root, &["chapter", "stage", "judged", "--token", &token]);
    let gate = ok(&root, &["chapter", "gate", "1", "--token", &token]);
    assert_eq!(gate["decision"], "pass", "{gate}");
    ok(&root, &["chapter", "commit", "1", "--token", &token]);
}

#[test]
fn a_chapter_sent_back_for_its_hook_alone_is_repaired_locally() {
    let (_t, root) = writing_project();
    let (token, gate) = sent_back_for_its_hook(&root);
    assert_eq!(gate["decision"], "revise", "{gate}");
    assert_eq!(gate["repair"][0]["part"], "ending", "{gate}");
    assert_eq!(gate["moves"][0]["id"], "repair", "{gate}");
    assert_eq!(gate["moves"][0]["by"], "loop", "{gate}");
    // The loop's way on is the repair: a full revision is the author's choice.
    let (rc, refused) = stage(&root, "revising", &token);
    assert_ne!(rc, 0, "{refused}");
    assert_eq!(refused["error"]["code"], "E_STAGE_ORDER", "{refused}");

    let moved = ok(&root, &["chapter", "stage", "repairing", "--token", &token]);
    assert_eq!(moved["revision_count"], 1, "{moved}");
    let record = read_json(&root.join("logs/revisions/chapter-001/r1/repair.json"));
    assert_eq!(record["parts"][0]["part"], "ending", "{record}");
    let window = record["windows"][0]["text"].as_str().unwrap();
    assert!(window.ends_with(MORAL), "{record}");
    assert!(
        root.join("logs/revisions/chapter-001/r1/chapter-001.md")
            .is_file()
    );
    // The evaluations and the Summarizer's files stay: the rest of the text is judged.
    assert!(
        root.join("staging/evaluations/chapter-001-eval.json")
            .is_file()
    );
    assert!(
        root.join("staging/summaries/chapter-001-summary.md")
            .is_file()
    );

    // The writer's packet: the task and the paragraphs to replace, nothing else.
    let p = packet(&root, "chapter-writer");
    assert!(p.contains("<repair"), "{p}");
    assert!(p.contains(MORAL), "{p}");
    assert!(p.contains("staging/repairs/chapter-001-ending.md"), "{p}");
    for absent in ["<chapter_outline", "<characters", "<style", "<world_rules"] {
        assert!(!p.contains(absent), "{absent} in the repair packet:\n{p}");
    }

    // Nothing written yet; the old ending again; then a real hook.
    let (rc, v) = stage(&root, "repaired", &token);
    assert_ne!(rc, 0, "{v}");
    let repair_file = root.join("staging/repairs/chapter-001-ending.md");
    std::fs::write(&repair_file, format!("{window}\n")).unwrap();
    let (rc, v) = stage(&root, "repaired", &token);
    assert_eq!(rc, 1, "{v}");
    assert_eq!(v["error"]["code"], "E_REPAIR", "{v}");
    assert!(
        v["error"]["message"].as_str().unwrap().contains("一字不差"),
        "{v}"
    );
    std::fs::write(&repair_file, format!("{BODY}{HOOK}\n")).unwrap();
    ok(&root, &["chapter", "stage", "repaired", "--token", &token]);
    let text = std::fs::read_to_string(root.join("staging/chapters/chapter-001.md")).unwrap();
    assert!(text.trim_end().ends_with(HOOK), "{text}");
    assert!(!text.contains(MORAL), "{text}");
    assert!(text.starts_with("# 第1章 风起\n\n陆尘推门而入"), "{text}");
    assert!(!repair_file.exists(), "the repair file is consumed");

    // The judge's packet: the old paragraphs and the new ones.
    let p = packet(&root, "quality-judge");
    assert!(
        p.contains("<repair") && p.contains(HOOK) && p.contains(MORAL),
        "{p}"
    );
    assert!(!p.contains("<chapter_contract"), "{p}");

    // No review; a review quoting the old ending; a review that says it is not done.
    let (rc, v) = stage(&root, "judged", &token);
    assert_ne!(rc, 0, "{v}");
    let review_file = root.join("staging/evaluations/chapter-001-repair.json");
    write_json(&review_file, &review("done", MORAL));
    let (rc, v) = stage(&root, "judged", &token);
    assert_eq!(rc, 1, "{v}");
    assert_eq!(v["error"]["code"], "E_EVALUATION", "{v}");
    assert_eq!(v["data"]["findings"][0]["code"], "E_EVAL_QUOTE", "{v}");
    write_json(&review_file, &review("not_done", HOOK));
    ok(&root, &["chapter", "stage", "judged", "--token", &token]);
    let gate = ok(&root, &["chapter", "gate", "1", "--token", &token]);
    assert_eq!(gate["decision"], "revise", "{gate}");
    assert_eq!(gate["moves"][0]["id"], "repair", "{gate}");
    assert!(
        gate["repair"][0]["reason"]
            .as_str()
            .unwrap()
            .contains("评审复核"),
        "{gate}"
    );

    // Round 2: the judged text is the repaired one; the review done, the gate passes.
    ok(&root, &["chapter", "stage", "repairing", "--token", &token]);
    assert!(!review_file.exists(), "round 1's review is archived");
    assert!(
        root.join("logs/revisions/chapter-001/r2/repair.json")
            .is_file()
    );
    std::fs::write(&repair_file, format!("{HOOK}\n\n{HOOK_2}\n")).unwrap();
    ok(&root, &["chapter", "stage", "repaired", "--token", &token]);
    write_json(&review_file, &review("done", HOOK_2));
    ok(&root, &["chapter", "stage", "judged", "--token", &token]);
    let gate = ok(&root, &["chapter", "gate", "1", "--token", &token]);
    assert_eq!(gate["decision"], "pass", "{gate}");
    ok(&root, &["chapter", "commit", "1", "--token", &token]);
    assert!(root.join("evaluations/chapter-001-repair.json").is_file());
    let text = std::fs::read_to_string(root.join("chapters/chapter-001.md")).unwrap();
    assert!(text.trim_end().ends_with(HOOK_2), "{text}");
    // The pipeline log: the repair rounds' lines say what they replaced.
    let log = read_json(&root.join("logs/chapter-001-log.json"));
    let repaired: Vec<&Value> = log["stages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["name"] == "repaired")
        .collect();
    assert_eq!(repaired.len(), 2, "{log}");
    assert_eq!(repaired[0]["repair"]["parts"][0], "ending", "{log}");
    let (rc, v) = call(&root, &["validate"]);
    assert_eq!(rc, 0, "{v}");
}
