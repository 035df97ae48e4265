//! `novel check craft` (issue 39) through the binary: lint's shape of findings (file:line:col in
//! characters, code, message, hint, JSON), a chapter read with the committed chapters before
//! it, the thresholds of `novel.json`, and the judge's packet carrying the result.

use std::path::Path;

use serde_json::Value;

use crate::support::*;

/// A weather-and-time opening (over 300 字 before anyone acts) and a closing moral.
const AI_LIKE: &str = concat!(
    "# 第1章 雨夜\n\n清晨，天色灰蒙蒙的。\n\n",
    "秋雨下了一整夜，屋檐还在滴水，院子里的梧桐落了一地黄叶。远处的山隐在云里，只露出一道青灰色的山脊。\n\n",
    "街上没有什么行人，炊烟从几户人家的屋顶升起来，被风一吹就散了。河面上浮着一层薄雾，几只白鹭贴着水面飞过，翅膀扫起细细的涟漪。\n\n",
    "镇口的老槐树下积了一洼雨水，倒映着灰白的天空。青石板路湿漉漉的，缝隙里长出几茎嫩草。远处的钟楼敲了六下，声音在雨后的空气里传得很远。\n\n",
    "雨后的镇子安安静静，屋瓦上的青苔吸饱了水，颜色深了一层。巷子尽头的茶铺卸下了门板，铜壶里的水咕嘟咕嘟地响，热气贴着门框往上飘，和檐下的雾混在一起，分不清哪是水汽哪是云。\n\n",
    "林默推开门，走进雨里。\n\n他知道，真正的考验才刚刚开始。\n"
);

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
        (
            opening["file"].as_str(),
            opening["line"].as_u64(),
            opening["col"].as_u64()
        ),
        (Some("ai.md"), Some(3), Some(1)),
        "{opening}"
    );
    assert_eq!(opening["severity"], "error");
    assert!(opening["hint"].as_str().unwrap().contains("问题"));
    let hook = findings.iter().find(|f| f["code"] == "craft/hook").unwrap();
    assert_eq!(hook["line"], AI_LIKE.lines().count());
    assert!(
        hook["message"].as_str().unwrap().contains("才刚刚开始"),
        "{hook}"
    );
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
    let surprise =
        "# 第4章 门\n\n“谁？”\n\n忽然有人敲门。他忽然站起来，忽然又坐下。\n\n门外那个人是谁？\n";
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
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("demo");
    let out = novel(tmp.path(), &["demo", root.to_str().unwrap()]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    std::fs::write(root.join("chapters/chapter-001.md"), AI_LIKE).unwrap();
    let out = novel(&root, &["context", "quality-judge", "--chapter", "1"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let text = stdout(&out);
    assert!(text.contains("<checks"), "{text}");
    let at = format!(
        "chapters/chapter-001.md:{}:1: craft/hook[错误]",
        AI_LIKE.lines().count()
    );
    assert!(text.contains(&at), "{text}");
    assert!(text.contains("章末没有钩子"), "{text}");
}

/// The gate sends a chapter of full length that would pass (4.2) back for revision when its
/// ending is a moral, with a blocking fix for the last paragraphs; the same chapter with a hook
/// passes; a short draft is not held to it (the windows overlap).
#[test]
fn the_gate_sends_back_a_chapter_without_a_hook() {
    use crate::test_chapter::{stage_drafts, stage_eval, writing_project};
    let body = "陆尘沿着城北的巷子往废墟里走，雨水顺着斗笠的边沿往下淌，靴子里灌满了泥。\n\n";
    for (ending, revise) in [
        ("他知道，真正的考验才刚刚开始。", true),
        ("废墟深处，有人点起了一盏灯。那盏灯是谁点的？", false),
        ("", false),
    ] {
        let (_t, root) = writing_project();
        let token = ok_data(&root, &["chapter", "begin", "1"])["token"]
            .as_str()
            .unwrap()
            .to_string();
        stage_drafts(&root, 1);
        let staged = root.join("staging/chapters/chapter-001.md");
        let mut text = std::fs::read_to_string(&staged).unwrap();
        if !ending.is_empty() {
            text.push_str(&format!("\n“人呢？”\n\n{}{ending}\n", body.repeat(30)));
        }
        std::fs::write(&staged, text).unwrap();
        ok_data(&root, &["chapter", "stage", "drafted", "--token", &token]);
        ok_data(&root, &["chapter", "stage", "refined", "--token", &token]);
        stage_eval(&root, 1, 4.2, true);
        ok_data(&root, &["chapter", "stage", "judged", "--token", &token]);
        let gate = ok_data(&root, &["chapter", "gate", "1", "--token", &token]);
        if revise {
            assert_eq!(gate["decision"], "revise", "{gate}");
            let fixes = gate["required_fixes"].as_array().unwrap();
            assert!(
                fixes
                    .iter()
                    .any(|f| f["target"] == "最后一两段" && f["blocking"] == true),
                "{gate}"
            );
        } else {
            assert_eq!(gate["decision"], "pass", "{ending}: {gate}");
        }
    }
}

fn ok_data(root: &Path, args: &[&str]) -> Value {
    let mut full = vec!["--json"];
    full.extend_from_slice(args);
    let out = novel(root, &full);
    assert_eq!(code(&out), 0, "{args:?}: {}{}", stdout(&out), stderr(&out));
    json(&out)["data"].clone()
}

/// The refiner replaces every blacklisted phrase, so its packet carries the whole list — for a
/// chapter of 3,000 字 at the default budget — one line per way of fixing.
#[test]
fn the_refiners_packet_carries_the_whole_blacklist() {
    let (_t, root) = new_project();
    let para = "陆尘沿着城北的巷子往废墟里走，雨水顺着斗笠的边沿往下淌，靴子里灌满了泥。\n\n";
    let text = format!("# 第1章 风起\n\n“人呢？”\n\n{}", para.repeat(85));
    assert!(novel_text_count(&text) >= 3000);
    std::fs::write(root.join("chapters/chapter-001.md"), &text).unwrap();
    let out = novel(
        &root,
        &["--json", "context", "style-refiner", "--chapter", "1"],
    );
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let doc = json(&out);
    let style = doc["data"]["sections"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["tag"] == "style")
        .expect("a style section");
    let body = style["text"].as_str().unwrap();
    let list = read_json(&root.join("ai-blacklist.json"));
    let entries = list["entries"].as_array().unwrap();
    assert!(entries.len() > 250);
    let missing: Vec<&str> = entries
        .iter()
        .map(|e| e["phrase"].as_str().unwrap())
        .filter(|p| !body.contains(p))
        .collect();
    assert!(missing.is_empty(), "missing from the packet: {missing:?}");
    assert!(
        body.contains(&format!("全部 {} 条", entries.len())),
        "{body}"
    );
    // Grouped: a way of fixing heads each line, its phrases after it.
    assert!(
        body.contains("- 笑了笑：嘴角勾起一抹*、勾起一抹弧度*"),
        "{body}"
    );
    assert_eq!(
        doc["data"]["cut"],
        serde_json::json!([]),
        "{}",
        doc["data"]["cut"]
    );
}

/// 字数 as the platforms count it, without the binary: Han characters and full-width marks.
fn novel_text_count(text: &str) -> usize {
    text.lines()
        .filter(|l| !l.starts_with('#'))
        .flat_map(str::chars)
        .filter(|c| !c.is_whitespace())
        .count()
}
