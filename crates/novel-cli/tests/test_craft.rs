//! `novel check craft` (issue 39) through the binary: lint's shape of findings (file:line:col in
//! characters, code, message, hint, JSON), a chapter read with the committed chapters before
//! it, the thresholds of `novel.json`, and the judge's packet carrying the result.

use std::path::Path;

use serde_json::Value;

use crate::support::*;

/// A weather-and-time opening and a closing moral.
const AI_LIKE: &str = "# 第1章 雨夜\n\n清晨，天色灰蒙蒙的。\n\n秋雨下了一整夜，屋檐还在滴水，院子里的梧桐落了一地黄叶。远处的山隐在云里，只露出一道青灰色的山脊。\n\n街上没有什么行人，炊烟从几户人家的屋顶升起来，被风一吹就散了。\n\n林默推开门，走进雨里。\n\n他知道，真正的考验才刚刚开始。\n";

/// A 回 that ends on its formula.
const CHAPTER_FORMULA: &str = "# 第2回 林默夜走青石镇\n\n话说林默推开门，雨里站着一个披蓑衣的汉子，手里提着一盏青铜灯笼，拦住去路。\n\n“你要往哪里去？”那汉子问。\n\n林默不答，只把包袱往背上紧了一紧。那汉子冷笑一声，将灯笼往地上一放。\n\n毕竟林默性命如何，且听下回分解。\n";

/// A chapter that never touches the previous ending (the lantern, the man in the rain).
const DROPPED: &str = "# 第3章 三年\n\n“房钱还差多少？”\n\n三年后，京城。林默在茶馆里数着铜板，算这个月的房钱还差多少。掌柜在柜台后面拨算盘，拨一下看他一眼。\n\n门外有人喊他的名字。\n";

fn run(root: &Path, args: &[&str]) -> (i32, Value) {
    let mut full = vec!["--json", "check", "craft"];
    full.extend_from_slice(args);
    let out = novel(root, &full);
    (code(&out), json(&out))
}

fn files(v: &Value) -> &Vec<Value> {
    v["data"]["files"].as_array().expect("files")
}

#[test]
fn craft_findings_have_lints_shape_and_fail_the_check() {
    let (_t, root) = new_project();
    std::fs::write(root.join("ai.md"), AI_LIKE).unwrap();
    let (c, v) = run(&root, &["ai.md"]);
    assert_eq!(c, 1, "{v}");
    assert_eq!(v["error"]["code"], "E_CRAFT");
    let findings = v["data"]["findings"].as_array().unwrap();
    let opening = findings
        .iter()
        .find(|f| f["code"] == "craft/opening")
        .expect("an opening finding");
    assert_eq!(
        (opening["file"].as_str(), opening["line"].as_u64(), opening["col"].as_u64()),
        (Some("ai.md"), Some(3), Some(1)),
        "{opening}"
    );
    assert_eq!(opening["severity"], "error");
    assert!(opening["hint"].as_str().unwrap().contains("问题"));
    let hook = findings.iter().find(|f| f["code"] == "craft/hook").unwrap();
    assert_eq!(hook["line"], 13);
    assert!(hook["message"].as_str().unwrap().contains("才刚刚开始"), "{hook}");
    let s = &files(&v)[0]["summary"];
    assert_eq!(s["opening_problem"], false);
    assert_eq!(s["ending"]["hook"], false);
    assert_eq!(s["ending"]["missing"], "summary");
    // Human output: lint's lines.
    let out = novel(&root, &["check", "craft", "ai.md"]);
    let text = stdout(&out);
    assert!(text.contains("ai.md:3:1: craft/opening[错误]"), "{text}");
    assert!(text.contains("处理："), "{text}");
}

#[test]
fn chapters_are_read_with_the_ones_before_and_novel_json_sets_the_caps() {
    let (_t, root) = new_project();
    let ch = root.join("chapters");
    std::fs::write(ch.join("chapter-001.md"), AI_LIKE).unwrap();
    std::fs::write(ch.join("chapter-002.md"), CHAPTER_FORMULA).unwrap();
    std::fs::write(ch.join("chapter-003.md"), DROPPED).unwrap();
    let (c, v) = run(&root, &["--all"]);
    assert_eq!(c, 1, "{v}");
    let f = files(&v);
    assert_eq!(f.len(), 3);
    // The 回 ends on a hook, a 悬念.
    assert_eq!(f[1]["summary"]["ending"]["kind"], "suspense", "{}", f[1]);
    assert_eq!(f[1]["pass"], true, "{}", f[1]);
    // Chapter 3 drops it: a take-up warning, read with chapter 2 before it.
    assert_eq!(f[2]["summary"]["takeup"], false, "{}", f[2]);
    let takeup = v["data"]["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|x| x["code"] == "craft/takeup")
        .expect("a take-up finding");
    assert_eq!(takeup["chapter"], 3);
    assert_eq!(takeup["severity"], "warning");
    // One chapter alone is read with the committed ones before it, too.
    let (_, one) = run(&root, &["--chapter", "3"]);
    assert_eq!(files(&one)[0]["summary"]["takeup"], false);
    assert_eq!(
        files(&one)[0]["summary"]["recent_hooks"],
        serde_json::json!([null, "suspense", null])
    );
    // The caps come from novel.json: a cap of 0 allows one use only.
    let surprise = "# 第4章 门\n\n“谁？”\n\n忽然有人敲门。他忽然站起来，忽然又坐下。\n\n门外那个人是谁？\n";
    std::fs::write(ch.join("chapter-004.md"), surprise).unwrap();
    let (_, before) = run(&root, &["--chapter", "4"]);
    assert_eq!(files(&before)[0]["summary"]["rhythm"][0]["allowed"], 1);
    assert_eq!(files(&before)[0]["summary"]["rhythm"][0]["hits"], 3);
    edit_json(&root.join("novel.json"), |s| {
        s["craft"] = serde_json::json!({"surprise_per_3000": 1000});
    });
    let (_, after) = run(&root, &["--chapter", "4"]);
    let r = &files(&after)[0]["summary"]["rhythm"][0];
    assert!(r["allowed"].as_u64().unwrap() >= 3, "{r}");
    assert_eq!(r["pass"], true);
}

#[test]
fn the_judges_packet_carries_the_craft_check() {
    let (_t, root) = new_project();
    std::fs::write(root.join("chapters/chapter-001.md"), AI_LIKE).unwrap();
    let out = novel(&root, &["context", "quality-judge", "--chapter", "1"]);
    let text = stdout(&out);
    assert!(text.contains("<checks"), "{text}");
    assert!(
        text.contains("chapters/chapter-001.md:13:1: craft/hook[错误]"),
        "{text}"
    );
    assert!(text.contains("章末没有钩子"), "{text}");
}
