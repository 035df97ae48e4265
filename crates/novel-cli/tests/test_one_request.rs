//! Every pipeline agent in one request (issue 38): what the binary does so that an agent can
//! write its files in its first message and be done — the PostToolUse hook ends it once its
//! files are there and checked (or hands the problem back); StyleRefiner's change list, applied
//! by `stage refined|polished`; a round sent back, and a refused evaluation or change list, moved
//! out of staging so that the agent sent back writes a new file without reading the old one
//! first; the packets carrying what the agent used to fetch or measure itself.

use std::path::Path;

use serde_json::{Value, json};

use crate::support::*;
use crate::test_chapter::{fail, ok, stage_drafts, up_to_gate, writing_project};

/// Chapter 1 committed, chapter 2 begun with a draft of `text` and the Summarizer's files, and
/// moved to `drafted`. Returns the token.
fn drafted_two(root: &Path, text: &str) -> String {
    let token = up_to_gate(root, 1, true);
    ok(root, &["chapter", "commit", "1", "--token", &token]);
    let token = ok(root, &["chapter", "begin", "2"])["data"]["token"]
        .as_str()
        .unwrap()
        .to_string();
    stage_drafts(root, 2);
    std::fs::write(root.join("staging/chapters/chapter-002.md"), text).unwrap();
    ok(root, &["chapter", "stage", "drafted", "--token", &token]);
    // The chapter's outline block (the writer's and the judge's packets need it).
    std::fs::write(
        root.join("volumes/vol-01/outline.md"),
        "# 第 1 卷\n\n## 第2章 风起\n- 故事线：jinghai_plan\n",
    )
    .unwrap();
    token
}

/// A draft of ten narration paragraphs (each names its number) and a line of dialogue.
fn draft() -> String {
    let mut t = String::from("# 第2章 风起\n\n");
    for i in 1..=10 {
        t.push_str(&format!(
            "第{i}段里陆尘沿着城墙往北走，脚下的青石板湿滑，他数着步子走到第{i}个垛口。他的嘴角勾起一抹意味深长的弧度{i}。\n\n"
        ));
    }
    t.push_str("“你来晚了。”寒山说，“灯都快灭了。”\n");
    t
}

/// The hook `which` (`pre-tool-use`, `post-tool-use`) on a Write of `rel`, made by `agent`
/// (`None`: the main conversation). Its stdout, parsed (`Null` when it printed nothing).
fn hook(root: &Path, which: &str, rel: &str, agent: Option<&str>) -> Value {
    use std::io::Write;
    let mut input = json!({"tool_name": "Write", "cwd": root,
        "tool_input": {"file_path": root.join(rel), "content": "x"}});
    if let Some(a) = agent {
        input["agent_type"] = json!(a);
        input["agent_id"] = json!("a0123456789abcdef");
    }
    let mut child = std::process::Command::new(bin())
        .args(["hook", which])
        .current_dir(root)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.to_string().as_bytes())
        .unwrap();
    let out = String::from_utf8(child.wait_with_output().unwrap().stdout).unwrap();
    if out.trim().is_empty() {
        Value::Null
    } else {
        serde_json::from_str(out.trim()).unwrap_or_else(|e| panic!("{e}: {out}"))
    }
}

/// An evaluation of [`draft`] at `score` (its quotes are clauses of the draft, each standing for
/// two dimensions at most; a fix's target quotes the draft).
fn eval_for_draft(score: f64) -> Value {
    let mut e = crate::test_chapter::eval_doc(2, score);
    for (i, d) in e["scores"]
        .as_object_mut()
        .unwrap()
        .values_mut()
        .enumerate()
    {
        d["evidence"] = json!(format!("他数着步子走到第{}个垛口", 1 + 2 * (i / 2)));
    }
    if let Some(fixes) = e["required_fixes"].as_array_mut() {
        for f in fixes {
            f["target"] = json!("第 1 段「他数着步子走到第1个垛口」起");
        }
    }
    e["fix_review"] = json!([]);
    e
}

fn stopped(answer: &Value) -> bool {
    answer["continue"] == json!(false)
}

fn blocked(answer: &Value) -> &str {
    assert_eq!(answer["decision"], "block", "{answer}");
    answer["reason"].as_str().unwrap()
}

const EDITS: &str = "staging/logs/chapter-002-edits.md";

#[test]
fn the_refiner_writes_a_change_list_the_program_checks_and_applies() {
    let (_t, root) = writing_project();
    let token = drafted_two(&root, &draft());
    let refiner = Some("novel:style-refiner");
    // `stage drafted` kept the refiner's packet for it to read when the hook cannot hand it over
    // (the refiner has Read, not Bash).
    let kept =
        std::fs::read_to_string(root.join("staging/logs/chapter-002-style-refiner-context.md"))
            .unwrap();
    assert!(
        kept.contains("<context agent=\"style-refiner\"") && kept.contains("<checks"),
        "{kept}"
    );

    // An item that is nowhere in the text, one that is in it ten times: handed back, by number.
    std::fs::write(
        root.join(EDITS),
        "- 原：陆尘一掌拍碎了桌子。\n  改：陆尘拍了拍桌子。\n  因：风格\n- 原：他的嘴角勾起一抹意味深长的弧度\n  改：他笑了一下\n  因：黑名单\n",
    )
    .unwrap();
    let a = hook(&root, "post-tool-use", EDITS, refiner);
    let reason = blocked(&a);
    assert!(
        reason.contains("第 1 条") && reason.contains("找不到"),
        "{reason}"
    );
    assert!(
        reason.contains("第 2 条") && reason.contains("不止一处"),
        "{reason}"
    );
    // `stage refined` refuses the same list, and moves nothing.
    let doc = fail(
        &root,
        &["chapter", "stage", "refined", "--token", &token],
        1,
        "E_CHANGE_LIST",
    );
    assert!(
        doc["error"]["message"]
            .as_str()
            .unwrap()
            .contains("第 1 条"),
        "{doc}"
    );
    assert!(root.join(EDITS).is_file());

    // A list that fits (each 原 once): the hook ends the agent; the text is untouched until the
    // stage applies it.
    let list = "# 修改清单\n\n- 原：他的嘴角勾起一抹意味深长的弧度3。\n  改：他笑了一下。\n  因：黑名单\n- 原：他的嘴角勾起一抹意味深长的弧度7。\n  改：（删去）\n  因：黑名单\n";
    std::fs::write(root.join(EDITS), list).unwrap();
    let a = hook(&root, "post-tool-use", EDITS, refiner);
    assert!(stopped(&a), "{a}");
    // Not for the main conversation, nor for another agent.
    assert_eq!(hook(&root, "post-tool-use", EDITS, None), Value::Null);
    assert_eq!(
        hook(&root, "post-tool-use", EDITS, Some("novel:quality-judge")),
        Value::Null
    );
    let staged = root.join("staging/chapters/chapter-002.md");
    assert_eq!(std::fs::read_to_string(&staged).unwrap(), draft());
    let moved = ok(&root, &["chapter", "stage", "refined", "--token", &token]);
    assert!(
        root.join("staging/logs/chapter-002-quality-judge-context.md")
            .is_file()
    );
    let text = std::fs::read_to_string(&staged).unwrap();
    assert!(text.contains("走到第3个垛口。他笑了一下。"), "{text}");
    assert!(!text.contains("弧度7"), "{text}");
    assert!(text.contains("弧度5"), "{text}");
    assert!(
        moved["data"]["edit_ratio"]["narration"]["ratio"]
            .as_f64()
            .unwrap()
            > 0.0
    );
    assert!(
        !root.join(EDITS).exists(),
        "the list applied leaves staging"
    );
    let record = std::fs::read_to_string(root.join("staging/logs/chapter-002-changes.md")).unwrap();
    assert!(
        record.contains("## 润色") && record.contains("弧度3"),
        "{record}"
    );

    // Judged at polish: a second list, applied by `stage polished` (the text changed, so no
    // E_STAGING), added to the record; committed with the chapter.
    let mut e = eval_for_draft(3.8);
    e["recommendation"] = json!("polish");
    e["issues"] = json!(["第 5 段的表情写法还是套话"]);
    write_json(&root.join("staging/evaluations/chapter-002-eval.json"), &e);
    ok(&root, &["chapter", "stage", "judged", "--token", &token]);
    let gate = ok(&root, &["chapter", "gate", "2", "--token", &token]);
    assert_eq!(gate["data"]["decision"], "polish", "{gate}");
    std::fs::write(
        root.join(EDITS),
        "- 原：他的嘴角勾起一抹意味深长的弧度5。\n  改：他没吭声。\n  因：黑名单\n",
    )
    .unwrap();
    assert!(stopped(&hook(&root, "post-tool-use", EDITS, refiner)));
    ok(&root, &["chapter", "stage", "polished", "--token", &token]);
    ok(&root, &["chapter", "commit", "2", "--token", &token]);
    for agent in ["style-refiner", "quality-judge"] {
        let rel = format!("staging/logs/chapter-002-{agent}-context.md");
        assert!(!root.join(&rel).exists(), "{rel} left after the commit");
    }
    let committed = std::fs::read_to_string(root.join("chapters/chapter-002.md")).unwrap();
    assert!(committed.contains("第5个垛口。他没吭声。"), "{committed}");
    let kept = std::fs::read_to_string(root.join("logs/chapter-002-changes.md")).unwrap();
    assert!(
        kept.contains("## 润色") && kept.contains("## 二次润色"),
        "{kept}"
    );
    assert!(!root.join(EDITS).exists());
    let (rc, v) = run_json(&root, &["validate"]);
    assert_eq!(rc, 0, "{v}");
}

#[test]
fn a_list_over_the_cap_is_handed_back_and_a_refused_one_set_aside() {
    let (_t, root) = writing_project();
    let token = drafted_two(&root, &draft());
    // Four of ten paragraphs rewritten whole: about 40 % of the narration.
    let mut list = String::new();
    for i in [2, 4, 6, 8] {
        list.push_str(&format!(
            "- 原：第{i}段里陆尘沿着城墙往北走，脚下的青石板湿滑，他数着步子走到第{i}个垛口。\n  改：城头风大，火把晃得厉害，巡夜的兵丁缩在角楼里烤火，没人往这边看一眼{i}。\n  因：风格\n"
        ));
    }
    std::fs::write(root.join(EDITS), &list).unwrap();
    let reason = blocked(&hook(
        &root,
        "post-tool-use",
        EDITS,
        Some("novel:style-refiner"),
    ))
    .to_string();
    assert!(
        reason.contains("15%") && reason.contains("第 2 段"),
        "{reason}"
    );
    // Run anyway: refused, and the list moved out of staging (the refiner sent back writes a
    // new one without a Read).
    let doc = fail(
        &root,
        &["chapter", "stage", "refined", "--token", &token],
        1,
        "E_EDIT_RATIO",
    );
    assert!(!root.join(EDITS).exists(), "{doc}");
    let aside = root.join("logs/revisions/chapter-002/refused-1-chapter-002-edits.md");
    assert_eq!(std::fs::read_to_string(&aside).unwrap(), list);
    assert_eq!(
        read_json(&root.join(".checkpoint.json"))["pipeline_stage"],
        "drafted"
    );
    let (rc, v) = run_json(&root, &["validate"]);
    assert_eq!(rc, 0, "{v}");
}

#[test]
fn a_refused_evaluation_is_set_aside_for_a_new_one() {
    let (_t, root) = writing_project();
    let token = drafted_two(&root, &draft());
    ok(&root, &["chapter", "stage", "refined", "--token", &token]);
    let eval = root.join("staging/evaluations/chapter-002-eval.json");
    let mut e = eval_for_draft(4.2);
    e["scores"]["plot_logic"]["evidence"] = json!("「陆尘一掌拍碎了桌子」");
    write_json(&eval, &e);
    let judge = Some("novel:quality-judge");
    // The hook hands it back as it is written (the judge's contract) …
    let a = hook(
        &root,
        "post-tool-use",
        "staging/evaluations/chapter-002-eval.json",
        judge,
    );
    assert!(blocked(&a).contains("E_EVAL_QUOTE"), "{a}");
    // … and `stage judged` refuses it and moves it out of staging.
    fail(
        &root,
        &["chapter", "stage", "judged", "--token", &token],
        1,
        "E_EVALUATION",
    );
    assert!(!eval.exists());
    assert!(
        root.join("logs/revisions/chapter-002/refused-1-chapter-002-eval.json")
            .is_file()
    );
    // The judge sent back writes a new one: the hook ends it; the stage takes it.
    write_json(&eval, &eval_for_draft(4.2));
    let a = hook(
        &root,
        "post-tool-use",
        "staging/evaluations/chapter-002-eval.json",
        judge,
    );
    assert!(stopped(&a), "{a}");
    ok(&root, &["chapter", "stage", "judged", "--token", &token]);
    // A second refusal goes to refused-2.
    let (rc, v) = run_json(&root, &["validate"]);
    assert_eq!(rc, 0, "{v}");
}

#[test]
fn the_writer_and_the_summarizer_are_done_when_their_files_are() {
    let (_t, root) = writing_project();
    let token = up_to_gate(&root, 1, true);
    ok(&root, &["chapter", "commit", "1", "--token", &token]);
    ok(&root, &["chapter", "begin", "2"]);
    let writer = Some("novel:chapter-writer");
    let chapter = "staging/chapters/chapter-002.md";
    // Too short for the 2,500–3,500 字 target: handed back with the figure.
    std::fs::write(root.join(chapter), "# 第2章 风起\n\n陆尘推门而入。\n").unwrap();
    let reason = blocked(&hook(&root, "post-tool-use", chapter, writer)).to_string();
    assert!(
        reason.contains("2500–3500") && reason.contains("补写"),
        "{reason}"
    );
    let text = format!(
        "# 第2章 风起\n\n{}",
        "陆尘推门而入，屋里一灯如豆。\n\n".repeat(220)
    );
    std::fs::write(root.join(chapter), &text).unwrap();
    assert!(stopped(&hook(&root, "post-tool-use", chapter, writer)));
    // The Summarizer: done only with all three files there.
    let summarizer = Some("novel:summarizer");
    stage_drafts(&root, 2);
    std::fs::write(root.join(chapter), &text).unwrap();
    let memory = "staging/storylines/jinghai_plan/memory.md";
    let kept = std::fs::read_to_string(root.join(memory)).unwrap();
    std::fs::remove_file(root.join(memory)).unwrap();
    let summary = "staging/summaries/chapter-002-summary.md";
    assert_eq!(
        hook(&root, "post-tool-use", summary, summarizer),
        Value::Null
    );
    std::fs::write(root.join(memory), kept).unwrap();
    assert!(stopped(&hook(&root, "post-tool-use", memory, summarizer)));
    // A delta the ops check rejects is handed back, never "done".
    let delta = "staging/state/chapter-002-delta.json";
    edit_json(&root.join(delta), |d| {
        d["ops"][0]["path"] = json!("characters.陆尘.location")
    });
    let a = hook(&root, "post-tool-use", delta, summarizer);
    assert_eq!(a["decision"], "block", "{a}");
}

#[test]
fn a_revision_round_leaves_staging_to_the_writer_and_hands_it_the_text() {
    let (_t, root) = writing_project();
    let token = drafted_two(&root, &draft());
    ok(&root, &["chapter", "stage", "refined", "--token", &token]);
    write_json(
        &root.join("staging/evaluations/chapter-002-eval.json"),
        &eval_for_draft(3.2),
    );
    ok(&root, &["chapter", "stage", "judged", "--token", &token]);
    let gate = ok(&root, &["chapter", "gate", "2", "--token", &token]);
    assert_eq!(gate["data"]["decision"], "revise", "{gate}");
    ok(&root, &["chapter", "stage", "revising", "--token", &token]);
    // Nothing of the round is left in staging: every agent of the next round writes anew.
    for rel in [
        "staging/chapters/chapter-002.md",
        "staging/summaries/chapter-002-summary.md",
        "staging/evaluations/chapter-002-eval.json",
    ] {
        assert!(!root.join(rel).exists(), "{rel}");
    }
    assert!(
        root.join("logs/revisions/chapter-002/r1/chapter-002.md")
            .is_file()
    );
    // The writer's packet carries the archived text to revise.
    let packet = stdout(&novel(
        &root,
        &["context", "chapter-writer", "--chapter", "2"],
    ));
    assert!(
        packet.contains("logs/revisions/chapter-002/r1/chapter-002.md"),
        "{packet}"
    );
    assert!(packet.contains("第7段里陆尘沿着城墙往北走"), "{packet}");
    // `next` sends the chapter to the writer.
    let next = ok(&root, &["next"]);
    assert_eq!(
        next["data"]["recommendation"]["action"], "revise_chapter",
        "{next}"
    );
}

#[test]
fn the_packets_carry_what_the_agents_used_to_fetch() {
    let (_t, root) = writing_project();
    let token = drafted_two(&root, &draft());
    // The refiner: the lint findings and the style figures of the staged text.
    let refiner = stdout(&novel(
        &root,
        &["context", "style-refiner", "--chapter", "2"],
    ));
    assert!(refiner.contains("<checks title="), "{refiner}");
    assert!(refiner.contains("嘴角勾起一抹"), "{refiner}");
    assert!(refiner.contains(EDITS), "{refiner}");
    // The Summarizer: the leak check, to copy into its return.
    let summarizer = stdout(&novel(&root, &["context", "summarizer", "--chapter", "2"]));
    assert!(summarizer.contains("\"leak_risk\": "), "{summarizer}");
    // The judge: the project's gate thresholds (it read novel.json itself before).
    edit_json(&root.join("novel.json"), |s| s["gate"]["pass"] = json!(4.3));
    ok(&root, &["chapter", "stage", "refined", "--token", &token]);
    let judge = stdout(&novel(
        &root,
        &["context", "quality-judge", "--chapter", "2"],
    ));
    assert!(judge.contains("≥ 4.3 pass"), "{judge}");
}
