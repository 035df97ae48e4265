//! The agents held to their contracts by the binary (issue 30): the judge's evaluation against
//! the staged text and the L3 contract (`stage judged`, the gate, `validate`), the refiner's edit
//! ratio against the draft (`stage refined`), the previous round's blocking fixes (the gate), the
//! judge's packet in a revision round, payoff as data (`volume check`), voice exemplars.
//! Each deliberate mistake is refused with its own code.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::support::*;
use crate::test_chapter::{fail, ok, stage_drafts, up_to_gate, writing_project};

/// Chapter 1 committed; chapter 2 (no key chapter) begun, drafted and refined, with its
/// contract (one required objective). Returns the token.
fn chapter_two(root: &Path) -> String {
    let token = up_to_gate(root, 1, true);
    ok(root, &["chapter", "commit", "1", "--token", &token]);
    write_json(
        &root.join("volumes/vol-01/chapter-contracts/chapter-002.json"),
        &json!({"chapter": 2, "storyline_id": "jinghai_plan",
            "objectives": [{"id": "OBJ-002-1", "type": "plot", "required": true,
                "description": "陆尘推门而入，发现屋里有人"}]}),
    );
    let token = ok(root, &["chapter", "begin", "2"])["data"]["token"]
        .as_str()
        .unwrap()
        .to_string();
    stage_drafts(root, 2);
    ok(root, &["chapter", "stage", "drafted", "--token", &token]);
    ok(root, &["chapter", "stage", "refined", "--token", &token]);
    token
}

/// An evaluation of chapter 2 that keeps its contract: verbatim evidence (a clause of its own
/// for each dimension), the objective's row, a blocking fix when it sends the chapter back.
fn good_eval(score: f64) -> Value {
    let mut e = crate::test_chapter::eval_doc(2, score);
    e["contract_verification"]["l3_checks"] = json!([
        {"id": "OBJ-002-1", "status": "pass", "confidence": "high", "detail": "「陆尘推门而入」"}]);
    if score < 3.5 {
        e["required_fixes"] = json!([{"target": "第 1 段「陆尘推门而入」起",
            "instruction": "先交代屋里的人是谁派来的", "blocking": true}]);
    }
    e
}

fn eval_path(root: &Path) -> PathBuf {
    root.join("staging/evaluations/chapter-002-eval.json")
}

/// `stage judged` refuses `eval` with exactly the finding codes `codes`; `validate` on the file
/// reports the same; the stage does not move, and the refused evaluation is set aside (the judge
/// sent back writes a new one).
fn refused(root: &Path, token: &str, eval: &Value, codes: &[&str]) -> Value {
    write_json(&eval_path(root), eval);
    let (rc, v) = run_json(root, &["validate", eval_path(root).to_str().unwrap()]);
    assert_eq!(rc, 1, "{v}");
    let found: Vec<&str> = v["data"]["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["code"].as_str().unwrap())
        .collect();
    for c in codes {
        assert!(found.contains(c), "validate misses {c}: {v}");
    }
    let doc = fail(
        root,
        &["chapter", "stage", "judged", "--token", token],
        1,
        "E_EVALUATION",
    );
    let got: Vec<&str> = doc["data"]["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["severity"] == "error")
        .map(|f| f["code"].as_str().unwrap())
        .collect();
    assert_eq!(got, codes, "{doc}");
    assert!(
        !eval_path(root).exists(),
        "the refused evaluation left staging"
    );
    assert_eq!(
        read_json(&root.join(".checkpoint.json"))["pipeline_stage"],
        "refined"
    );
    doc
}

#[test]
fn each_broken_promise_of_the_judge_is_refused_with_its_own_code() {
    let (_t, root) = writing_project();
    let token = chapter_two(&root);

    // A quote that is not in the chapter.
    let mut e = good_eval(4.2);
    e["scores"]["plot_logic"]["evidence"] = json!("「陆尘一掌拍碎了桌子」");
    let doc = refused(&root, &token, &e, &["E_EVAL_QUOTE"]);
    let f = &doc["data"]["findings"][0];
    assert_eq!(f["pointer"], "/scores/plot_logic/evidence", "{f}");
    assert!(
        f["message"]
            .as_str()
            .unwrap()
            .contains("「陆尘一掌拍碎了桌子」"),
        "{f}"
    );

    // Issue 40: a name found in the chapter passed as the evidence of all eight dimensions.
    let mut e = good_eval(4.2);
    for dim in e["scores"].as_object_mut().unwrap().values_mut() {
        dim["evidence"] = json!("「陆尘」");
    }
    let mut codes = vec!["E_EVAL_FRAGMENT"; 8];
    codes.push("E_EVAL_REUSED");
    let doc = refused(&root, &token, &e, &codes);
    let f = &doc["data"]["findings"][0];
    assert_eq!(f["pointer"], "/scores/plot_logic/evidence", "{f}");
    assert!(f["message"].as_str().unwrap().contains("「陆尘」"), "{f}");
    // A clause of six 字 is no sentence either; the whole sentence is.
    let mut e = good_eval(4.2);
    e["scores"]["pacing"]["evidence"] = json!("屋里一灯如豆");
    refused(&root, &token, &e, &["E_EVAL_FRAGMENT"]);
    // One sentence for three dimensions.
    let mut e = good_eval(4.2);
    for dim in ["plot_logic", "character", "immersion"] {
        e["scores"][dim]["evidence"] = json!("桌上摊着一封没拆的信，火漆还是湿的。");
    }
    refused(&root, &token, &e, &["E_EVAL_REUSED"]);
    // Issue 40: 3.0 with a pass and one fix 「全章｜改好一点」.
    let mut e = good_eval(3.0);
    e["recommendation"] = json!("pass");
    e["required_fixes"] = json!([{"target": "全章", "instruction": "改好一点"}]);
    let doc = refused(&root, &token, &e, &["E_EVAL_VERDICT"]);
    assert!(
        doc["data"]["findings"][0]["message"]
            .as_str()
            .unwrap()
            .contains("3.0"),
        "{doc}"
    );
    // A fix whose place quotes words the chapter does not have.
    let mut e = good_eval(3.2);
    e["required_fixes"][0]["target"] = json!("第 1 段「陆尘破门而入」起");
    let doc = refused(&root, &token, &e, &["E_EVAL_TARGET"]);
    assert_eq!(
        doc["data"]["findings"][0]["pointer"],
        "/required_fixes/0/target"
    );

    // A high violation kept out of `violations` (the only list the gate reads).
    let mut e = good_eval(4.2);
    e["contract_verification"]["l2_checks"] = json!([{"id": "C-LUCHEN-001", "status": "violation",
        "confidence": "high", "detail": "「陆尘推门而入」：契约说他不进陌生人的屋"}]);
    let doc = refused(&root, &token, &e, &["E_EVAL_HIDDEN"]);
    assert!(
        doc["data"]["findings"][0]["hint"]
            .as_str()
            .unwrap()
            .contains("C-LUCHEN-001"),
        "{doc}"
    );

    // The contract's required objective has no row.
    let mut e = good_eval(4.2);
    e["contract_verification"]["l3_checks"] = json!([]);
    let doc = refused(&root, &token, &e, &["E_EVAL_OBJECTIVE"]);
    assert!(
        doc["data"]["findings"][0]["message"]
            .as_str()
            .unwrap()
            .contains("OBJ-002-1"),
        "{doc}"
    );

    // The guard hook tells the judge as it writes (PostToolUse), before `stage judged` does: a
    // quote not in the chapter, a name for a quote.
    for (evidence, code) in [
        ("「陆尘一掌拍碎了桌子」", "E_EVAL_QUOTE"),
        ("「陆尘」", "E_EVAL_FRAGMENT"),
    ] {
        let mut e = good_eval(4.2);
        e["scores"]["pacing"]["evidence"] = json!(evidence);
        write_json(&eval_path(&root), &e);
        let block = novel_hook(
            &root,
            "post-tool-use",
            "staging/evaluations/chapter-002-eval.json",
        );
        assert!(
            block.contains("\"decision\":\"block\"") && block.contains(code),
            "{block}"
        );
    }
    write_json(&eval_path(&root), &good_eval(4.2));
    let quiet = novel_hook(
        &root,
        "post-tool-use",
        "staging/evaluations/chapter-002-eval.json",
    );
    assert!(quiet.trim().is_empty(), "{quiet}");

    // Revise, but no fixes.
    let mut e = good_eval(3.2);
    e["required_fixes"] = json!([]);
    refused(&root, &token, &e, &["E_EVAL_FIXES"]);

    // Kept, it is judged; the gate sends it back with its fix.
    write_json(&eval_path(&root), &good_eval(3.2));
    ok(&root, &["chapter", "stage", "judged", "--token", &token]);
    let (rc, v) = run_json(&root, &["validate"]);
    assert_eq!(rc, 0, "{v}");
    let gate = ok(&root, &["chapter", "gate", "2", "--token", &token]);
    assert_eq!(gate["data"]["decision"], "revise", "{gate}");

    // Edited after `stage judged`: the gate holds the file to the contract again.
    let mut e = good_eval(3.2);
    e["scores"]["pacing"]["evidence"] = json!("「一句正文里没有的话」");
    write_json(&eval_path(&root), &e);
    fail(
        &root,
        &["chapter", "gate", "2", "--token", &token],
        1,
        "E_EVALUATION",
    );
}

/// A revision round: the judge's packet lists the previous round's fixes as F1…; an
/// evaluation that does not judge them is refused; one that marks the blocking fix not done
/// keeps the chapter from the force pass (the author decides).
#[test]
fn a_blocking_fix_not_done_is_never_force_passed() {
    let (_t, root) = writing_project();
    edit_json(&root.join("novel.json"), |s| {
        s["gate"]["max_revisions"] = json!(1)
    });
    let token = chapter_two(&root);
    write_json(&eval_path(&root), &good_eval(3.2));
    ok(&root, &["chapter", "stage", "judged", "--token", &token]);
    let gate = ok(&root, &["chapter", "gate", "2", "--token", &token]);
    assert_eq!(gate["data"]["decision"], "revise", "{gate}");
    ok(&root, &["chapter", "stage", "revising", "--token", &token]);
    // The revising writer writes the round's text anew (the old one was archived).
    let draft = root.join("staging/chapters/chapter-002.md");
    let text =
        std::fs::read_to_string(root.join("logs/revisions/chapter-002/r1/chapter-002.md")).unwrap();
    std::fs::write(&draft, format!("{text}\n门后的人没有回头。\n")).unwrap();
    stage_drafts_keeping_text(&root, 2);
    ok(&root, &["chapter", "stage", "drafted", "--token", &token]);
    ok(&root, &["chapter", "stage", "refined", "--token", &token]);

    // The judge's packet: the fixes to judge, numbered, the blocking one marked.
    std::fs::write(
        root.join("volumes/vol-01/outline.md"),
        "# 第 1 卷\n\n## 第2章 风起\n- 故事线：jinghai_plan\n",
    )
    .unwrap();
    let out = novel(&root, &["context", "quality-judge", "--chapter", "2"]);
    let packet = stdout(&out);
    assert!(packet.contains("<fix_review"), "{packet}{}", stderr(&out));
    assert!(
        packet.contains("F1〔第 1 段「陆尘推门而入」起〕先交代屋里的人是谁派来的（阻断）"),
        "{packet}"
    );

    // Not judged fix by fix: refused.
    refused(&root, &token, &good_eval(3.2), &["E_EVAL_FIX_REVIEW"]);
    // Issue 40: judged done with the very sentence the round sent back already had.
    let mut e = good_eval(3.2);
    e["fix_review"] =
        json!([{"fix": "F1", "status": "done", "evidence": "「陆尘推门而入，屋里一灯如豆。」"}]);
    let doc = refused(&root, &token, &e, &["E_EVAL_STALE"]);
    assert_eq!(
        doc["data"]["findings"][0]["pointer"],
        "/fix_review/0/evidence"
    );
    // Judged not done: accepted, but the gate does not force the pass.
    let mut e = good_eval(3.2);
    e["fix_review"] =
        json!([{"fix": "F1", "status": "not_done", "evidence": "陆尘推门而入，屋里一灯如豆"}]);
    write_json(&eval_path(&root), &e);
    ok(&root, &["chapter", "stage", "judged", "--token", &token]);
    let gate = ok(&root, &["chapter", "gate", "2", "--token", &token]);
    let g = &gate["data"];
    assert_eq!(g["decision"], "pause", "{gate}");
    assert_eq!(g["force_passed"], false, "{gate}");
    assert_eq!(g["fixes_not_done"][0]["id"], "F1", "{gate}");
    // Done: the same score is force-passed (revisions exhausted, no blocking left).
    let mut e = good_eval(3.2);
    e["fix_review"] = json!([{"fix": "F1", "status": "done", "evidence": "门后的人没有回头"}]);
    write_json(&eval_path(&root), &e);
    ok(&root, &["chapter", "stage", "judged", "--token", &token]);
    let gate = ok(&root, &["chapter", "gate", "2", "--token", &token]);
    assert_eq!(gate["data"]["decision"], "pass", "{gate}");
    assert_eq!(gate["data"]["force_passed"], true, "{gate}");
}

/// The Summarizer's files for chapter `n` as [`stage_drafts`] writes them, the staged text kept.
fn stage_drafts_keeping_text(root: &Path, n: u32) {
    let draft = root.join(format!("staging/chapters/chapter-{n:03}.md"));
    let text = std::fs::read_to_string(&draft).unwrap();
    stage_drafts(root, n);
    std::fs::write(&draft, text).unwrap();
}

/// Ten paragraphs of narration and one of dialogue.
fn long_draft() -> String {
    let mut t = String::from("# 第2章 风起\n\n");
    for i in 1..=10 {
        t.push_str(&format!(
            "第{i}段里陆尘沿着城墙往北走，脚下的青石板湿滑，他数着步子走到第{i}个垛口。\n\n"
        ));
    }
    t.push_str("“你来晚了。”寒山说，“灯都快灭了。”\n");
    t
}

#[test]
fn a_refinement_changing_too_much_of_the_draft_is_refused_with_the_worst_paragraphs() {
    let (_t, root) = writing_project();
    let token = up_to_gate(&root, 1, true);
    ok(&root, &["chapter", "commit", "1", "--token", &token]);
    let token = ok(&root, &["chapter", "begin", "2"])["data"]["token"]
        .as_str()
        .unwrap()
        .to_string();
    stage_drafts(&root, 2);
    let draft = root.join("staging/chapters/chapter-002.md");
    std::fs::write(&draft, long_draft()).unwrap();
    ok(&root, &["chapter", "stage", "drafted", "--token", &token]);
    assert!(root.join("staging/logs/chapter-002-draft.md").is_file());

    // About 30% of the narration rewritten: three paragraphs replaced whole.
    let mut heavy = long_draft();
    for i in [3, 5, 8] {
        heavy = heavy.replace(
            &format!("第{i}段里陆尘沿着城墙往北走，脚下的青石板湿滑，他数着步子走到第{i}个垛口。"),
            &format!("城头风大，火把晃得厉害，巡夜的兵丁缩在角楼里烤火，没人往这边看一眼，夜色像墨泼下来。{i}"),
        );
    }
    std::fs::write(&draft, &heavy).unwrap();
    let doc = fail(
        &root,
        &["chapter", "stage", "refined", "--token", &token],
        1,
        "E_EDIT_RATIO",
    );
    let r = &doc["data"]["edit_ratio"];
    let ratio = r["narration"]["ratio"].as_f64().unwrap();
    assert!((0.25..0.40).contains(&ratio), "{doc}");
    assert_eq!(r["dialogue"]["changed"], 0, "{doc}");
    let worst: Vec<u64> = r["worst"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["paragraph"].as_u64().unwrap())
        .collect();
    assert_eq!(worst, [3, 5, 8], "{doc}");
    let message = doc["error"]["message"].as_str().unwrap();
    assert!(message.contains("第 3 段"), "{message}");
    assert!(message.contains("15%"), "{message}");
    assert!(
        doc["error"]["hint"]
            .as_str()
            .unwrap()
            .contains("staging/logs/chapter-002-draft.md"),
        "{doc}"
    );
    assert_eq!(
        read_json(&root.join(".checkpoint.json"))["pipeline_stage"],
        "drafted"
    );
    // The draft kept is the program's: the guard refuses writing it.
    let hook = novel_hook_pre_write(&root, "staging/logs/chapter-002-draft.md");
    assert!(hook.contains("deny"), "{hook}");

    // One paragraph reworded: within the default cap — but not within a stricter one (the
    // cap is the project's).
    let light = long_draft().replace(
        "脚下的青石板湿滑，他数着步子走到第4个垛口",
        "青石板很滑，他数着步子到了第4个垛口",
    );
    std::fs::write(&draft, &light).unwrap();
    edit_json(&root.join("novel.json"), |s| {
        s["refine"] = json!({"max_edit_ratio": 0.01})
    });
    fail(
        &root,
        &["chapter", "stage", "refined", "--token", &token],
        1,
        "E_EDIT_RATIO",
    );
    edit_json(&root.join("novel.json"), |s| {
        s["refine"] = json!({"max_edit_ratio": 0.15})
    });
    let moved = ok(&root, &["chapter", "stage", "refined", "--token", &token]);
    let narration = moved["data"]["edit_ratio"]["narration"]["ratio"]
        .as_f64()
        .unwrap();
    assert!(narration > 0.01 && narration < 0.15, "{moved}");
    let log = read_json(&root.join("staging/logs/chapter-002-log.json"));
    let line = log["stages"].as_array().unwrap().last().unwrap().clone();
    assert_eq!(line["name"], "refined");
    assert!(
        line["edit_ratio"]["narration"].as_f64().unwrap() > 0.0,
        "{log}"
    );

    // Through the gate and commit: `status` shows it; the draft kept is gone.
    let mut e = good_eval(4.2);
    for (i, dim) in e["scores"]
        .as_object_mut()
        .unwrap()
        .values_mut()
        .enumerate()
    {
        dim["evidence"] = json!(match i + 1 {
            4 => "他数着步子到了第4个垛口".to_string(),
            k => format!("他数着步子走到第{k}个垛口"),
        });
    }
    write_json(&root.join("staging/evaluations/chapter-002-eval.json"), &e);
    ok(&root, &["chapter", "stage", "judged", "--token", &token]);
    ok(&root, &["chapter", "gate", "2", "--token", &token]);
    ok(&root, &["chapter", "commit", "2", "--token", &token]);
    assert!(!root.join("staging/logs/chapter-002-draft.md").exists());
    let status = ok(&root, &["status"]);
    let recent = status["data"]["scores"]["recent"].as_array().unwrap();
    let two = recent.iter().find(|c| c["chapter"] == 2).unwrap();
    assert!(two["edit_ratio"].as_f64().unwrap() > 0.0, "{status}");
    let human = stdout(&novel(&root, &["status"]));
    assert!(
        human.contains("润色改动（叙述）：") && human.contains("第2章 1."),
        "{human}"
    );
}

/// The guard hook's answer to a Write of `rel`.
fn novel_hook_pre_write(root: &Path, rel: &str) -> String {
    novel_hook(root, "pre-tool-use", rel)
}

/// The guard hook `which` (pre-tool-use, post-tool-use) on a Write of `rel`.
fn novel_hook(root: &Path, which: &str, rel: &str) -> String {
    use std::io::Write;
    let input = json!({"tool_name": "Write", "cwd": root,
        "tool_input": {"file_path": root.join(rel), "content": "x"}});
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
    String::from_utf8(child.wait_with_output().unwrap().stdout).unwrap()
}

#[test]
fn payoffs_are_planned_data_and_the_writer_gets_them() {
    let (_t, root) = writing_project();
    edit_json(&root.join("novel.json"), |s| s["genre"] = json!("玄幻"));
    let dir = root.join("volumes/vol-01/chapter-contracts");
    std::fs::create_dir_all(&dir).unwrap();
    for n in 1..=10u32 {
        let mut c = json!({"chapter": n, "storyline_id": "main_arc",
            "objectives": [{"id": format!("OBJ-{n:03}-1"), "type": "plot", "required": true, "description": "推进"}]});
        match n {
            2 => {
                c["payoff"] = json!({"type": "打脸", "delivery_chapter": 4, "setup": "赵天磊当众断言陆尘交不出丹", "delivery": "陆尘当众交出整丹"})
            }
            4 => {
                c["payoff"] = json!({"type": "打脸", "setup_chapter": 2, "delivery": "陆尘当众交出整丹，赵天磊的扇子掉在地上"})
            }
            // A setup nothing delivers.
            5 => {
                c["payoff"] =
                    json!({"type": "身份揭晓", "delivery_chapter": 8, "delivery": "陆尘的来历"})
            }
            // Out of order: set up after it is delivered.
            7 => c["payoff"] = json!({"type": "突破", "setup_chapter": 9, "delivery": "筑基"}),
            _ => {}
        }
        write_json(&dir.join(format!("chapter-{n:03}.json")), &c);
    }
    let (_, doc) = run_json(&root, &["volume", "check", "1"]);
    let findings = doc["data"]["findings"].as_array().unwrap();
    let of = |code: &str| -> Vec<u64> {
        findings
            .iter()
            .filter(|f| f["code"] == code)
            .map(|f| f["chapter"].as_u64().unwrap())
            .collect()
    };
    assert_eq!(of("payoff_undelivered"), [5], "{doc}");
    assert_eq!(of("payoff_order"), [7], "{doc}");
    // 玄幻 readers wait at most 3 chapters: 1–3 and 5–10 deliver nothing (7's is out of order).
    assert_eq!(of("payoff_gap"), [1, 5], "{doc}");
    assert!(
        !findings
            .iter()
            .any(|f| f["code"] == "payoff_undelivered" && f["chapter"] == 2),
        "{doc}"
    );

    // The writer of chapter 4 gets the payoff and how to land it; the judge its row.
    std::fs::write(
        root.join("staging/chapters/chapter-004.md"),
        "# 第4章 交丹\n\n陆尘把整丹放在案上。\n",
    )
    .unwrap();
    std::fs::write(
        root.join("volumes/vol-01/outline.md"),
        "# 第 1 卷\n\n## 第1章 起\n- 故事线：main_arc\n\n## 第4章 交丹\n- 故事线：main_arc\n- POV：陆尘\n- 地点：执事堂\n- 冲突：交丹\n- 弧光：立威\n- 伏笔：无\n- 状态变化：无\n- 爽点：打脸（蓄压自第 2 章）\n",
    )
    .unwrap();
    let packet = stdout(&novel(
        &root,
        &["context", "chapter-writer", "--chapter", "4"],
    ));
    assert!(packet.contains("<payoff"), "{packet}");
    assert!(
        packet.contains("本章兑现的爽点：打脸，蓄压自第 2 章"),
        "{packet}"
    );
    assert!(
        packet.contains("大纲写的爽点：打脸（蓄压自第 2 章）"),
        "{packet}"
    );
    assert!(packet.contains("蓄压→兑现"), "{packet}");
    let judge = stdout(&novel(
        &root,
        &["context", "quality-judge", "--chapter", "4"],
    ));
    assert!(judge.contains("核查行 PAYOFF-004"), "{judge}");
    // Chapter 1 of a 玄幻 book: the golden-three line.
    let first = stdout(&novel(
        &root,
        &["context", "chapter-writer", "--chapter", "1"],
    ));
    assert!(first.contains("【黄金三章 · 玄幻】第1章"), "{first}");
}

#[test]
fn voice_exemplars_reach_the_writer_and_refiner_untrimmed_and_are_capped() {
    let (_t, root) = writing_project();
    let profile = root.join("style-profile.json");
    edit_json(&profile, |p| {
        p["source_type"] = json!("original");
        p["voice_exemplars"] = json!([
            {"text": "“砍得动。”林枫把斧头往肩上一扛。", "shows": "对白短", "source": "samples/a.md"},
            {"text": "刀背拍在腕子上。刀掉了。人还站着。"}]);
    });
    let (rc, v) = run_json(&root, &["validate"]);
    assert_eq!(rc, 0, "{v}");
    std::fs::write(
        root.join("volumes/vol-01/outline.md"),
        "# 第 1 卷\n\n## 第1章 起\n- 故事线：main_arc\n",
    )
    .unwrap();
    let packet = stdout(&novel(
        &root,
        &["context", "chapter-writer", "--chapter", "1"],
    ));
    assert!(
        packet.contains("1.（对白短）“砍得动。”林枫把斧头往肩上一扛。"),
        "{packet}"
    );
    assert!(
        packet.contains("2. 刀背拍在腕子上。刀掉了。人还站着。"),
        "{packet}"
    );
    std::fs::write(
        root.join("staging/chapters/chapter-001.md"),
        "# 第1章 起\n\n陆尘推门而入。\n",
    )
    .unwrap();
    let refiner = stdout(&novel(
        &root,
        &["context", "style-refiner", "--chapter", "1"],
    ));
    assert!(refiner.contains("刀背拍在腕子上"), "{refiner}");
    // Over 2000 tokens together: refused by validate.
    edit_json(&profile, |p| {
        p["voice_exemplars"] = json!([{"text": "字".repeat(1500)}]);
    });
    let (rc, v) = run_json(&root, &["validate"]);
    assert_eq!(rc, 1, "{v}");
    assert!(
        v["data"]["findings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|f| f["code"] == "E_STYLE_EXEMPLARS"),
        "{v}"
    );
}
