//! `novel next` as the menu of `/novel:start` (`docs/orchestration.md` §2) over a matrix of
//! situations, the quick start's tracked steps (§3), and `chapter fail` / resume (§1).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::{Value, json};

use crate::support::*;

/// A fixed clock (debug builds only) so recorded times are stable.
const NOW: &str = "1795325400";

fn run(root: &Path, args: &[&str]) -> Output {
    Command::new(bin())
        .args(args)
        .current_dir(root)
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .env("NOVEL_NOW", NOW)
        .output()
        .unwrap()
}

fn ok(root: &Path, args: &[&str]) -> Value {
    let mut full = vec!["--json"];
    full.extend_from_slice(args);
    let out = run(root, &full);
    assert_eq!(code(&out), 0, "{args:?}: {}{}", stdout(&out), stderr(&out));
    json(&out)
}

fn refused(root: &Path, args: &[&str], exit: i32, code_str: &str) -> Value {
    let mut full = vec!["--json"];
    full.extend_from_slice(args);
    let out = run(root, &full);
    assert_eq!(code(&out), exit, "{args:?}: {}", stdout(&out));
    let doc = json(&out);
    assert_eq!(doc["error"]["code"], code_str, "{args:?}: {doc}");
    doc
}

fn set_cp(root: &Path, f: impl FnOnce(&mut Value)) {
    let p = root.join(".checkpoint.json");
    let mut cp = read_json(&p);
    f(&mut cp);
    write_json(&p, &cp);
}

/// `novel next --json` data, after checking the menu's invariants: 2–4 options, exactly one
/// recommended and it is first and named by `recommended`, each leading to exactly one of a
/// flow or a command, labels and reasons present. Also: the same files give the same answer.
fn next(root: &Path) -> Value {
    let doc = ok(root, &["next"]);
    assert_eq!(doc, ok(root, &["next"]), "deterministic");
    let d = doc["data"].clone();
    let options = d["options"].as_array().expect("options");
    assert!((2..=4).contains(&options.len()), "{d}");
    let recommended: Vec<&Value> = options
        .iter()
        .filter(|o| o["recommended"] == true)
        .collect();
    assert_eq!(recommended.len(), 1, "{d}");
    assert_eq!(options[0]["recommended"], true, "{d}");
    assert_eq!(d["recommended"], options[0]["id"], "{d}");
    for o in options {
        assert!(
            o["flow"].is_null() != o["command"].is_null(),
            "one of flow/command: {o}"
        );
        assert!(!o["label"].as_str().unwrap().is_empty(), "{o}");
        assert!(!o["why"].as_str().unwrap().is_empty(), "{o}");
    }
    d
}

fn ids(d: &Value) -> Vec<String> {
    d["options"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["id"].as_str().unwrap().to_string())
        .collect()
}

fn first(d: &Value) -> &Value {
    &d["options"][0]
}

// ---- fixtures ---------------------------------------------------------------------------------

fn outline(chapters: std::ops::RangeInclusive<u32>) -> String {
    let mut t = "# 第 1 卷 · 风起\n\n本卷概述。\n".to_string();
    for c in chapters {
        t.push_str(&format!(
            "\n## 第{c}章 标题{c}\n- 故事线：main_arc\n- POV：陆尘\n"
        ));
    }
    t
}

fn fill_brief(root: &Path) {
    let p = root.join("brief.md");
    let t = std::fs::read_to_string(&p).unwrap().replace(
        "## 一句话卖点\n",
        "## 一句话卖点\n\n渔村少年捡到一枚会说话的铜钱，从此卷进东海的百年旧案。\n",
    );
    std::fs::write(p, t).unwrap();
}

fn add_world_rule(root: &Path) {
    write_json(
        &root.join("world/rules.json"),
        &json!({"rules": [{"id": "W-001", "rule": "灵石是修真界唯一通用货币", "constraint_type": "hard"}]}),
    );
}

fn add_character(root: &Path) {
    write_json(
        &root.join("characters/active/lu-chen.json"),
        &json!({"id": "lu-chen", "display_name": "陆尘"}),
    );
}

fn set_style_source(root: &Path) {
    let p = root.join("style-profile.json");
    let mut v = read_json(&p);
    v["source_type"] = json!("original");
    write_json(&p, &v);
}

/// `last` chapters "committed": their files on disk and the checkpoint says so.
fn committed(root: &Path, last: u32) {
    for n in 1..=last {
        std::fs::write(
            root.join(format!("chapters/chapter-{n:03}.md")),
            format!("# 第{n}章\n\n陆尘推门而入。\n"),
        )
        .unwrap();
    }
    set_cp(root, |cp| {
        cp["last_completed_chapter"] = json!(last);
        cp["pipeline_stage"] = if last > 0 {
            json!("committed")
        } else {
            Value::Null
        };
    });
}

/// A project in WRITING with volume 1 planned as chapters 1–`end`, `last` chapters done.
fn writing(last: u32, end: u32) -> (tempfile::TempDir, PathBuf) {
    let (tmp, root) = new_project();
    write_json(
        &root.join("volumes/vol-01/storyline-schedule.json"),
        &json!({"volume": 1, "chapter_range": [1, end], "active_storylines": [
            {"storyline_id": "main_arc", "volume_role": "primary"}], "convergence_events": []}),
    );
    std::fs::write(root.join("volumes/vol-01/outline.md"), outline(1..=end)).unwrap();
    committed(&root, last);
    set_cp(&root, |cp| cp["orchestrator_state"] = json!("WRITING"));
    (tmp, root)
}

fn host() -> String {
    novel_store::lock::host_name()
}

fn epoch() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs()
}

// ---- the matrix -------------------------------------------------------------------------------

#[test]
fn next_outside_a_project_offers_to_create_one() {
    let tmp = tempfile::tempdir().unwrap();
    let d = next(tmp.path());
    assert_eq!(d["project"], Value::Null);
    assert_eq!(
        ids(&d),
        ["create_project", "import_manuscript", "show_help"]
    );
    assert_eq!(first(&d)["flow"], "quick-start");
    assert_eq!(d["options"][1]["flow"], "import-manuscript");
    assert_eq!(d["options"][2]["command"], "novel help");
    assert_eq!(d["recommendation"]["command"], "/novel:start");
    // `--project` naming a directory that is not a project: the same.
    let d = ok(
        tmp.path(),
        &["next", "--project", tmp.path().to_str().unwrap()],
    );
    assert_eq!(d["data"]["recommended"], "create_project");
    // Human output: the recommendation, then a numbered menu.
    let text = stdout(&run(tmp.path(), &["next"]));
    assert!(text.contains("1. 创建新项目（推荐）"), "{text}");
    assert!(text.contains("2. 导入已有书稿"), "{text}");
    assert!(text.contains("3. 查看帮助"), "{text}");
}

#[test]
fn next_resumes_the_quick_start_at_the_first_missing_step() {
    let (_t, root) = new_project();
    let expect = |root: &Path, step: &str, label: &str| {
        let d = next(root);
        assert_eq!(
            ids(&d),
            ["continue_quick_start", "import_research", "show_status"],
            "{step}"
        );
        assert_eq!(first(&d)["label"], format!("继续快速起步：{label}"), "{d}");
        assert_eq!(first(&d)["flow"], "quick-start");
        assert_eq!(d["quick_start"]["next"], step, "{d}");
        assert_eq!(d["quick_start"]["complete"], false);
        assert_eq!(d["volume"]["current"], 1);
    };
    expect(&root, "brief", "创作纲领");
    fill_brief(&root);
    expect(&root, "world", "世界观规则");
    add_world_rule(&root);
    expect(&root, "characters", "主要角色");
    add_character(&root);
    expect(&root, "storylines", "故事线");
    ok(&root, &["quickstart", "done", "storylines"]);
    expect(&root, "style", "风格样本");
    set_style_source(&root);
    expect(&root, "outline", "第 1 卷大纲");
    std::fs::write(root.join("volumes/vol-01/outline.md"), outline(1..=3)).unwrap();
    expect(&root, "trial-1", "试写第 1 章");
    committed(&root, 1);
    expect(&root, "trial-2", "试写第 2 章");
    committed(&root, 2);
    expect(&root, "trial-3", "试写第 3 章");
    committed(&root, 3);
    expect(&root, "confirm", "确认并进入卷规划");
    // Confirmed: the volume is planned next, and quick_start is no longer carried.
    ok(&root, &["quickstart", "done", "confirm"]);
    let d = next(&root);
    assert_eq!(d["quick_start"], Value::Null);
    assert_eq!(d["recommended"], "plan_volume");
}

#[test]
fn next_while_planning_a_volume() {
    let (_t, root) = new_project();
    set_cp(&root, |cp| cp["orchestrator_state"] = json!("VOL_PLANNING"));
    let d = next(&root);
    assert_eq!(
        ids(&d),
        [
            "plan_volume",
            "update_spec",
            "import_research",
            "quality_review"
        ]
    );
    assert_eq!(first(&d)["label"], "规划第 1 卷");
    assert_eq!(first(&d)["flow"], "vol-planning");
    assert!(
        first(&d)["why"].as_str().unwrap().contains("大纲策划"),
        "{d}"
    );
    // An outline with no other plan: how long the volume is is not decided yet.
    std::fs::write(root.join("volumes/vol-01/outline.md"), outline(1..=10)).unwrap();
    let d = next(&root);
    assert_eq!(d["recommended"], "plan_volume");
    let why = first(&d)["why"].as_str().unwrap().to_string();
    assert!(why.contains("写多少章还没定"), "{why}");
    assert!(!why.contains("检查通过后开卷（novel volume check"), "{why}");
    // The settings plan 40 chapters a volume and the outline holds the trial's 3: not ready.
    let settings = root.join("novel.json");
    let mut set = read_json(&settings);
    set["chapters_per_volume"] = json!(40);
    write_json(&settings, &set);
    std::fs::write(root.join("volumes/vol-01/outline.md"), outline(1..=3)).unwrap();
    let why = first(&next(&root))["why"].as_str().unwrap().to_string();
    assert!(why.contains("只写了 3 章（本卷计划 40 章）"), "{why}");
    assert!(!why.contains("novel volume open"), "{why}");
    // Planned whole, not yet checked and opened: the reason says what is left.
    std::fs::write(root.join("volumes/vol-01/outline.md"), outline(1..=40)).unwrap();
    let why = first(&next(&root))["why"].as_str().unwrap().to_string();
    assert!(why.contains("已写好 40 章"), "{why}");
    assert!(why.contains("novel volume check 1"), "{why}");
}

#[test]
fn next_while_writing_and_when_a_review_is_due() {
    let (_t, root) = writing(3, 20);
    let d = next(&root);
    assert_eq!(
        ids(&d),
        [
            "continue_writing",
            "quality_review",
            "import_research",
            "update_spec"
        ]
    );
    assert_eq!(first(&d)["command"], "/novel:continue");
    assert!(
        first(&d)["why"].as_str().unwrap().contains("下一章第 4 章"),
        "{d}"
    );
    assert_eq!(d["reviews"]["due"], json!([]));
    assert_eq!(
        d["volume"],
        json!({"current": 1, "range": [1, 20], "range_source": "schedule"})
    );

    // Chapter 5 just committed: the quality brief is due.
    committed(&root, 5);
    let d = next(&root);
    assert_eq!(
        ids(&d),
        [
            "quality_review",
            "continue_writing",
            "update_spec",
            "import_research"
        ]
    );
    assert!(
        first(&d)["why"]
            .as_str()
            .unwrap()
            .contains("第 5 章后的质量简报"),
        "{d}"
    );
    assert_eq!(
        d["reviews"]["due"],
        json!([{"kind": "brief", "chapter": 5, "command": "novel review brief",
                "report": "logs/reviews/brief-chapter-005.json"}])
    );
    // One answer: the recommendation is the review too, then the next chapter.
    assert_eq!(d["recommendation"]["action"], "run_reviews", "{d}");
    assert_eq!(d["recommendation"]["command"], "novel review brief", "{d}");
    assert_eq!(d["recommendation"]["chapter"], 6, "{d}");
    // Done once its report exists.
    std::fs::create_dir_all(root.join("logs/reviews")).unwrap();
    std::fs::write(root.join("logs/reviews/brief-chapter-005.json"), "{}").unwrap();
    assert_eq!(next(&root)["recommended"], "continue_writing");
    assert_eq!(
        next(&root)["recommendation"]["action"],
        "write_next_chapter"
    );

    // Chapter 10: the brief and the consistency check.
    committed(&root, 10);
    let d = next(&root);
    assert_eq!(d["recommended"], "quality_review");
    let kinds: Vec<&str> = d["reviews"]["due"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["kind"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["brief", "consistency"]);
    let why = first(&d)["why"].as_str().unwrap();
    assert!(
        why.contains("质量简报") && why.contains("一致性检查"),
        "{why}"
    );
}

#[test]
fn next_when_the_volumes_last_chapter_is_committed() {
    // Still WRITING (the commit did not know the end) or already VOL_REVIEW: plan the next.
    let (_t, root) = writing(10, 10);
    for state in ["WRITING", "VOL_REVIEW"] {
        set_cp(&root, |cp| cp["orchestrator_state"] = json!(state));
        let d = next(&root);
        assert_eq!(
            ids(&d),
            ["review_volume", "quality_review", "continue_writing"],
            "{state}"
        );
        assert_eq!(first(&d)["flow"], "vol-review");
        assert_eq!(d["recommendation"]["action"], "review_volume", "{state}");
        let why = first(&d)["why"].as_str().unwrap();
        assert!(why.contains("卷末回顾") && why.contains("第 2 卷"), "{why}");
        assert!(
            d["options"][2]["why"]
                .as_str()
                .unwrap()
                .contains("超出本卷计划"),
            "{d}"
        );
    }
    // In VOL_REVIEW the volume review is due until its report exists.
    let d = next(&root);
    assert!(
        d["reviews"]["due"]
            .as_array()
            .unwrap()
            .iter()
            .any(|r| r["kind"] == "volume" && r["report"] == "logs/reviews/volume-01.json"),
        "{d}"
    );
    std::fs::create_dir_all(root.join("logs/reviews")).unwrap();
    std::fs::write(root.join("logs/reviews/volume-01.json"), "{}").unwrap();
    let d = next(&root);
    assert!(
        first(&d)["why"]
            .as_str()
            .unwrap()
            .contains("卷末回顾已完成"),
        "{d}"
    );
}

#[test]
fn next_when_a_volume_is_planned_but_not_checked_then_opened() {
    // The fixture novel: volume 1 written, volume 2 planned (outline, schedule, contracts).
    let (_t, root) = fixture("volume", &[]);
    let d = next(&root);
    assert_eq!(
        ids(&d),
        [
            "plan_volume",
            "update_spec",
            "import_research",
            "quality_review"
        ]
    );
    assert_eq!(first(&d)["label"], "规划第 2 卷");
    assert!(
        first(&d)["why"]
            .as_str()
            .unwrap()
            .contains("novel volume check 2"),
        "{d}"
    );
    assert_eq!(
        d["volume"],
        json!({"current": 2, "range": [4, 8], "range_source": "schedule"})
    );
    // Checked and opened: write its first chapter.
    ok(&root, &["volume", "check", "2"]);
    ok(&root, &["volume", "open", "2"]);
    let d = next(&root);
    assert_eq!(
        ids(&d),
        [
            "continue_writing",
            "quality_review",
            "import_research",
            "update_spec"
        ]
    );
    assert!(
        first(&d)["why"]
            .as_str()
            .unwrap()
            .contains("第 2 卷从第 4 章开始"),
        "{d}"
    );
    assert_eq!(d["recommendation"]["chapter"], 4);
}

#[test]
fn next_after_the_last_chapter_when_the_range_comes_from_the_outline_only() {
    let (_t, root) = crate::test_chapter::writing_project();
    // The schedule gives no chapter_range: the outline's blocks say the volume is 1–2.
    let sched = root.join("volumes/vol-01/storyline-schedule.json");
    let mut s = read_json(&sched);
    s.as_object_mut().unwrap().remove("chapter_range");
    write_json(&sched, &s);
    std::fs::write(root.join("volumes/vol-01/outline.md"), outline(1..=2)).unwrap();
    for n in 1..=2u32 {
        // Both are key chapters (first and last of the volume): two judges.
        let token = crate::test_chapter::up_to_gate(&root, n, true);
        ok(
            &root,
            &["chapter", "commit", &n.to_string(), "--token", &token],
        );
        let state = read_json(&root.join(".checkpoint.json"))["orchestrator_state"].clone();
        assert_eq!(
            state,
            if n == 2 { "VOL_REVIEW" } else { "WRITING" },
            "after chapter {n}"
        );
    }
    let d = next(&root);
    assert_eq!(
        ids(&d),
        ["review_volume", "quality_review", "continue_writing"]
    );
    assert_eq!(
        d["volume"],
        json!({"current": 1, "range": [1, 2], "range_source": "outline"})
    );
    assert!(
        d["reviews"]["due"]
            .as_array()
            .unwrap()
            .iter()
            .any(|r| r["kind"] == "volume"),
        "{d}"
    );
}

#[test]
fn next_with_a_chapter_in_flight_at_each_stage() {
    let (_t, root) = writing(3, 20);
    for stage in [
        "drafting", "drafted", "refined", "judged", "revising", "polished",
    ] {
        set_cp(&root, |cp| {
            cp["inflight_chapter"] = json!(4);
            cp["pipeline_stage"] = json!(stage);
        });
        let d = next(&root);
        assert_eq!(
            ids(&d),
            ["continue_writing", "quality_review", "show_status"],
            "{stage}"
        );
        assert_eq!(first(&d)["label"], "继续第 4 章", "{stage}");
        let word = match stage {
            "drafting" => "初稿生成中",
            "drafted" => "初稿与摘要已生成",
            "refined" => "润色完成",
            "judged" => "评估完成",
            "revising" => "修订中",
            _ => "二次润色完成",
        };
        assert!(
            first(&d)["why"].as_str().unwrap().contains(word),
            "{stage}: {d}"
        );
        // The author sees one line at launch, not only the model.
        let hook: Value = serde_json::from_str(&stdout(&run(&root, &["context", "session-start"])))
            .unwrap_or_else(|e| panic!("{stage}: the hook printed no JSON ({e})"));
        let said = hook["systemMessage"].as_str().unwrap();
        assert!(
            said.contains("第 4 章上次写到一半")
                && said.contains(word)
                && said.contains("/novel:continue"),
            "{stage}: {said}"
        );
        assert!(
            hook["hookSpecificOutput"]["additionalContext"]
                .as_str()
                .unwrap()
                .contains("第 4 章写到一半"),
            "{hook}"
        );
    }
    // The gate paused it: the author decides.
    set_cp(&root, |cp| {
        cp["pipeline_stage"] = json!("judged");
        cp["gate"] = json!({"chapter": 4, "decision": "pause", "overall": 2.5, "revision": 0});
    });
    let d = next(&root);
    assert_eq!(
        ids(&d),
        ["decide_paused_chapter", "quality_review", "show_status"]
    );
    assert_eq!(first(&d)["label"], "处理暂停的第 4 章");
    assert_eq!(first(&d)["flow"], "pause-decision");
    assert!(first(&d)["why"].as_str().unwrap().contains("2.5）"), "{d}");
    assert_eq!(d["recommendation"]["action"], "ask_author", "{d}");
    let hook: Value =
        serde_json::from_str(&stdout(&run(&root, &["context", "session-start"]))).unwrap();
    let said = hook["systemMessage"].as_str().unwrap();
    assert!(
        said.contains("被质量门控暂停") && said.contains("/novel:start"),
        "{said}"
    );
    // Nothing left unfinished: the model alone is told, in plain text; after a compaction the
    // author is not interrupted either.
    set_cp(&root, |cp| {
        cp["inflight_chapter"] = json!(null);
        cp["pipeline_stage"] = json!(null);
        cp.as_object_mut().unwrap().remove("gate");
    });
    let text = stdout(&run(&root, &["context", "session-start"]));
    assert!(serde_json::from_str::<Value>(&text).is_err(), "{text}");
}

#[test]
fn next_puts_recovery_first_after_a_crash_or_a_stale_lock() {
    let (_t, root) = writing(3, 20);
    // A journaled commit that did not finish.
    write_json(
        &root.join(".novel-commit-journal.json"),
        &json!({"chapter": 4}),
    );
    let d = next(&root);
    assert_eq!(ids(&d), ["recover", "show_status"]);
    assert_eq!(first(&d)["flow"], "recovery");
    assert!(first(&d)["why"].as_str().unwrap().contains("第 4 章的提交"));
    std::fs::remove_file(root.join(".novel-commit-journal.json")).unwrap();

    // A stale lock (another machine, no heartbeat for hours).
    std::fs::create_dir(root.join(".novel.lock")).unwrap();
    write_json(
        &root.join(".novel.lock/info.json"),
        &json!({"pid": 424242, "started": "2026-01-01T00:00:00Z", "chapter": 4, "host": "elsewhere",
                "token": "t0", "heartbeat": 1000, "started_epoch": 1000}),
    );
    let d = next(&root);
    assert_eq!(ids(&d), ["recover", "show_status"]);
    assert!(first(&d)["why"].as_str().unwrap().contains("项目锁已失效"));

    // Held by another live process on this host: wait, recover only if it is gone.
    let alive = Alive::new();
    write_json(
        &root.join(".novel.lock/info.json"),
        &json!({"pid": alive.pid(), "started": "2026-01-01T00:00:00Z", "chapter": 4, "host": host(),
                "token": "t0", "heartbeat": epoch(), "started_epoch": epoch()}),
    );
    let d = next(&root);
    assert_eq!(ids(&d), ["wait_lock", "recover", "show_status"]);
    assert_eq!(first(&d)["command"], "novel lock status");
}

/// A headless session paused chapter 4 at the gate and ended: its lock is stale. The next
/// session used to be offered recovery only, and the pause decision appeared only after
/// `chapter recover`. Now the menu offers the decision directly (recover folded in): the
/// decision flow's `chapter begin 4` clears the stale lock and hands out a new token.
#[test]
fn a_chapter_paused_in_a_session_now_gone_is_decided_directly() {
    let (_t, root) = writing(3, 20);
    set_cp(&root, |cp| {
        cp["inflight_chapter"] = json!(4);
        cp["pipeline_stage"] = json!("judged");
        cp["gate"] = json!({"chapter": 4, "decision": "pause", "overall": 2.5, "revision": 0});
    });
    std::fs::create_dir(root.join(".novel.lock")).unwrap();
    write_json(
        &root.join(".novel.lock/info.json"),
        &json!({"pid": 424242, "started": "2026-01-01T00:00:00Z", "chapter": 4, "host": "elsewhere",
                "token": "t0", "heartbeat": 1000, "started_epoch": 1000}),
    );
    let d = next(&root);
    assert_eq!(
        ids(&d),
        ["decide_paused_chapter", "quality_review", "show_status"],
        "{d}"
    );
    assert_eq!(first(&d)["flow"], "pause-decision");
    assert_eq!(d["recommendation"]["action"], "ask_author", "{d}");
    assert_eq!(d["recommendation"]["chapter"], 4, "{d}");
    let notes = d["recommendation"]["notes"].to_string();
    assert!(
        notes.contains("项目锁已失效") && notes.contains("novel chapter begin 4"),
        "{d}"
    );
    // The hook says the same.
    let hook = stdout(&run(&root, &["context", "session-start"]));
    assert!(hook.contains("下一步是：/novel:start"), "{hook}");
    // pause-decision.md §1: `chapter begin 4` takes the lock back, no recover needed.
    let began = ok(&root, &["chapter", "begin", "4"]);
    assert_eq!(began["data"]["resumed"], true, "{began}");
    assert_eq!(began["data"]["stage"], "judged", "{began}");
    let d = next(&root);
    assert_eq!(d["recommendation"]["action"], "ask_author", "{d}");

    // Anything else in flight under a stale lock still goes through recovery first.
    let (_t2, other) = writing(3, 20);
    set_cp(&other, |cp| {
        cp["inflight_chapter"] = json!(4);
        cp["pipeline_stage"] = json!("refined");
    });
    std::fs::create_dir(other.join(".novel.lock")).unwrap();
    write_json(
        &other.join(".novel.lock/info.json"),
        &json!({"pid": 424242, "started": "2026-01-01T00:00:00Z", "chapter": 4, "host": "elsewhere",
                "token": "t0", "heartbeat": 1000, "started_epoch": 1000}),
    );
    assert_eq!(ids(&next(&other)), ["recover", "show_status"]);
}

/// The trial chapters are written by `/novel:continue`: once the set-up is done and a trial
/// chapter is next, `next` and the SessionStart hook say `/novel:continue` (the hook used to
/// say 「下一步是：/novel:start」 while the trial was being written), with the chapter; the
/// menu still leads `/novel:start` to the quick-start flow, which hands over.
#[test]
fn the_trial_is_announced_as_continue() {
    let (_t, root) = new_project();
    fill_brief(&root);
    add_world_rule(&root);
    add_character(&root);
    ok(&root, &["quickstart", "done", "storylines"]);
    set_style_source(&root);
    let hook = |root: &Path| stdout(&run(root, &["context", "session-start"]));
    assert!(hook(&root).contains("下一步是：/novel:start"));
    std::fs::write(root.join("volumes/vol-01/outline.md"), outline(1..=3)).unwrap();
    for k in 1..=3u32 {
        let d = next(&root);
        assert_eq!(d["quick_start"]["next"], format!("trial-{k}"), "{d}");
        assert_eq!(d["recommendation"]["action"], "start", "{d}");
        assert_eq!(d["recommendation"]["command"], "/novel:continue", "{d}");
        assert_eq!(d["recommendation"]["chapter"], k, "{d}");
        assert_eq!(first(&d)["id"], "continue_quick_start", "{d}");
        let text = hook(&root);
        assert!(
            text.contains(&format!("下一步是：/novel:continue（试写第 {k} 章")),
            "{text}"
        );
        committed(&root, k);
    }
    // Confirming is the author's, in /novel:start.
    let d = next(&root);
    assert_eq!(d["quick_start"]["next"], "confirm", "{d}");
    assert_eq!(d["recommendation"]["command"], "/novel:start", "{d}");
}

#[test]
fn next_sends_a_pending_spec_propagation_to_review_first() {
    let (_t, root) = writing(3, 20);
    set_cp(&root, |cp| {
        cp["pending_actions"] = json!([{"id": "spec-propagation-001", "type": "spec_propagation"}]);
    });
    let d = next(&root);
    assert_eq!(
        ids(&d),
        ["review_propagation", "continue_writing", "show_status"]
    );
    assert_eq!(first(&d)["flow"], "update-spec");
    assert!(
        first(&d)["why"]
            .as_str()
            .unwrap()
            .contains("spec-propagation-001")
    );
    assert_eq!(d["recommendation"]["action"], "review_spec_propagation");
}

#[test]
fn next_in_error_retry_names_the_error() {
    let (_t, root) = writing(3, 20);
    set_cp(&root, |cp| {
        cp["orchestrator_state"] = json!("ERROR_RETRY");
        cp["inflight_chapter"] = json!(4);
        cp["pipeline_stage"] = json!("drafted");
        cp["error"] =
            json!({"previous_state": "WRITING", "reason": "StyleRefiner 两次超时", "chapter": 4});
    });
    let d = next(&root);
    assert_eq!(ids(&d), ["continue_writing", "recover", "show_status"]);
    assert_eq!(first(&d)["label"], "继续第 4 章");
    assert!(
        first(&d)["why"]
            .as_str()
            .unwrap()
            .contains("StyleRefiner 两次超时"),
        "{d}"
    );
    // The recommendation: re-take the lock with `chapter begin`, which resumes.
    assert_eq!(d["recommendation"]["action"], "retake_lock");
    assert_eq!(d["recommendation"]["command"], "novel chapter begin 4");
    assert!(
        d["recommendation"]["notes"]
            .as_array()
            .unwrap()
            .iter()
            .any(|n| n.as_str().unwrap().contains("StyleRefiner 两次超时")),
        "{d}"
    );
}

// ---- quick start ------------------------------------------------------------------------------

#[test]
fn quickstart_lists_the_steps_with_their_evidence() {
    let (_t, root) = new_project();
    let d = ok(&root, &["quickstart"])["data"].clone();
    let steps: Vec<&str> = d["steps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["id"].as_str().unwrap())
        .collect();
    assert_eq!(
        steps,
        [
            "brief",
            "world",
            "characters",
            "storylines",
            "style",
            "outline",
            "trial-1",
            "trial-2",
            "trial-3",
            "confirm"
        ]
    );
    assert_eq!(d["next"], "brief");
    assert_eq!(d["complete"], false);
    // A freshly initialised brief is only the template (its 书名/题材 lines filled).
    assert_eq!(d["steps"][0]["done"], false);
    assert!(
        d["steps"][0]["evidence"].as_str().unwrap().contains("模板"),
        "{d}"
    );
    assert_eq!(
        d["steps"][3]["evidence"],
        Value::Null,
        "storylines: mark only"
    );
    fill_brief(&root);
    add_world_rule(&root);
    let d = ok(&root, &["quickstart"])["data"].clone();
    assert_eq!(
        (&d["steps"][0]["done"], &d["steps"][0]["marked"]),
        (&json!(true), &json!(false))
    );
    assert_eq!(d["steps"][1]["evidence"], "world/rules.json 有 1 条规则");
    assert_eq!(d["next"], "characters");
}

#[test]
fn quickstart_marks_need_their_evidence_and_confirm_needs_every_step() {
    let (_t, root) = new_project();
    set_cp(&root, |cp| cp["author_note"] = json!("作者自己加的键"));
    // A checkable step without its files is refused and says what is missing.
    let doc = refused(
        &root,
        &["quickstart", "done", "world"],
        1,
        "E_QUICKSTART_EVIDENCE",
    );
    assert!(
        doc["error"]["message"]
            .as_str()
            .unwrap()
            .contains("world/rules.json"),
        "{doc}"
    );
    refused(
        &root,
        &["quickstart", "done", "trial-1"],
        1,
        "E_QUICKSTART_EVIDENCE",
    );
    refused(&root, &["quickstart", "done", "trial-4"], 2, "E_USAGE");
    // A mark-only step is recorded in the checkpoint; unknown keys survive.
    let d = ok(&root, &["quickstart", "done", "storylines"])["data"].clone();
    assert_eq!(d["steps"][3]["marked"], true);
    let cp = read_json(&root.join(".checkpoint.json"));
    assert_eq!(cp["quick_start"], json!({"done": ["storylines"]}));
    assert_eq!(cp["author_note"], "作者自己加的键");
    // Marking twice keeps one mark; undo clears it and touches no file.
    ok(&root, &["quickstart", "done", "storylines"]);
    assert_eq!(
        read_json(&root.join(".checkpoint.json"))["quick_start"]["done"],
        json!(["storylines"])
    );
    let brief = std::fs::read(root.join("brief.md")).unwrap();
    ok(&root, &["quickstart", "undo", "storylines"]);
    assert_eq!(
        read_json(&root.join(".checkpoint.json"))["quick_start"]["done"],
        json!([])
    );
    assert_eq!(std::fs::read(root.join("brief.md")).unwrap(), brief);
    // Confirm names every step still missing.
    let doc = refused(
        &root,
        &["quickstart", "done", "confirm"],
        1,
        "E_QUICKSTART_INCOMPLETE",
    );
    let msg = doc["error"]["message"].as_str().unwrap();
    assert!(
        msg.contains("storylines") && msg.contains("trial-3") && !msg.contains("confirm"),
        "{msg}"
    );
    assert_eq!(
        read_json(&root.join(".checkpoint.json"))["orchestrator_state"],
        "QUICK_START"
    );
    // Every step done: confirm moves QUICK_START → VOL_PLANNING.
    fill_brief(&root);
    add_world_rule(&root);
    add_character(&root);
    set_style_source(&root);
    std::fs::write(root.join("volumes/vol-01/outline.md"), outline(1..=3)).unwrap();
    committed(&root, 3);
    ok(&root, &["quickstart", "done", "style"]);
    ok(&root, &["quickstart", "done", "storylines"]);
    let d = ok(&root, &["quickstart", "done", "confirm"])["data"].clone();
    assert_eq!(d["orchestrator_state"], "VOL_PLANNING");
    assert_eq!(d["complete"], true);
    let cp = read_json(&root.join(".checkpoint.json"));
    assert_eq!(cp["orchestrator_state"], "VOL_PLANNING");
    assert_eq!(
        cp["quick_start"]["done"],
        json!(["storylines", "style", "confirm"])
    );
    // Past the quick start, marks are refused.
    refused(&root, &["quickstart", "done", "brief"], 3, "E_STATE");
    refused(&root, &["quickstart", "undo", "style"], 3, "E_STATE");
    // The checkpoint the marks wrote is schema-valid.
    let out = run(&root, &["validate", ".checkpoint.json"]);
    assert_eq!(code(&out), 0, "{}{}", stdout(&out), stderr(&out));
}

#[test]
fn quickstart_marks_wait_for_another_sessions_lock() {
    let (_t, root) = new_project();
    std::fs::create_dir(root.join(".novel.lock")).unwrap();
    let alive = Alive::new();
    write_json(
        &root.join(".novel.lock/info.json"),
        &json!({"pid": alive.pid(), "started": "2026-01-01T00:00:00Z", "chapter": null, "host": host(),
                "token": "t0", "heartbeat": epoch(), "started_epoch": epoch()}),
    );
    refused(&root, &["quickstart", "done", "storylines"], 3, "E_LOCKED");
    assert!(read_json(&root.join(".checkpoint.json"))["quick_start"].is_null());
}

// ---- ERROR_RETRY --------------------------------------------------------------------------------

#[test]
fn chapter_fail_keeps_staging_releases_the_lock_and_begin_resumes() {
    let (_t, root) = writing(3, 20);
    let token = ok(&root, &["chapter", "begin", "4"])["data"]["token"]
        .as_str()
        .unwrap()
        .to_string();
    let draft = root.join("staging/chapters/chapter-004.md");
    std::fs::write(&draft, "# 第4章\n\n陆尘推门而入。\n").unwrap();
    refused(
        &root,
        &[
            "chapter", "fail", "5", "--token", &token, "--reason", "超时",
        ],
        3,
        "E_NOT_INFLIGHT",
    );
    refused(
        &root,
        &[
            "chapter", "fail", "4", "--token", "wrong", "--reason", "超时",
        ],
        3,
        "E_LOCK_OWNER",
    );
    refused(
        &root,
        &["chapter", "fail", "4", "--token", &token, "--reason", "  "],
        2,
        "E_USAGE",
    );
    let d = ok(
        &root,
        &[
            "chapter",
            "fail",
            "4",
            "--token",
            &token,
            "--reason",
            "StyleRefiner 两次超时",
        ],
    )["data"]
        .clone();
    assert_eq!(d["orchestrator_state"], "ERROR_RETRY");
    let cp = read_json(&root.join(".checkpoint.json"));
    assert_eq!(cp["orchestrator_state"], "ERROR_RETRY");
    assert_eq!(cp["inflight_chapter"], 4);
    assert_eq!(cp["pipeline_stage"], "drafting");
    assert_eq!(
        cp["error"],
        json!({"previous_state": "WRITING", "reason": "StyleRefiner 两次超时",
               "at": novel_store::time::format_utc(NOW.parse().unwrap()), "chapter": 4})
    );
    assert!(!root.join(".novel.lock").exists(), "lock released");
    assert!(draft.is_file(), "staging untouched");
    // The pipeline waits for the resume: no stage, gate or commit meanwhile.
    let held = ok(&root, &["lock", "acquire"])["data"]["token"]
        .as_str()
        .unwrap()
        .to_string();
    refused(
        &root,
        &["chapter", "stage", "drafted", "--token", &held],
        3,
        "E_STATE",
    );
    refused(
        &root,
        &["chapter", "commit", "4", "--token", &held],
        3,
        "E_STATE",
    );
    ok(&root, &["lock", "release", "--token", &held]);
    // The hook and status say what went wrong.
    let hook = stdout(&run(&root, &["context", "session-start"]));
    assert!(hook.contains("StyleRefiner 两次超时"), "{hook}");
    let s = ok(&root, &["status"])["data"].clone();
    assert_eq!(s["state"], "ERROR_RETRY");
    assert_eq!(s["state_label"], "出错待重试");
    assert_eq!(s["error"]["reason"], "StyleRefiner 两次超时");
    // Only the failed chapter can be begun; begin resumes and restores the state.
    refused(&root, &["chapter", "begin", "5"], 3, "E_INFLIGHT");
    let d = ok(&root, &["chapter", "begin", "4"])["data"].clone();
    assert_eq!(d["resumed"], true);
    assert_eq!(d["orchestrator_state"], "WRITING");
    assert_eq!(d["recovered_error"]["reason"], "StyleRefiner 两次超时");
    let cp = read_json(&root.join(".checkpoint.json"));
    assert_eq!(cp["orchestrator_state"], "WRITING");
    assert!(cp.get("error").is_none(), "{cp}");
    assert_eq!(cp["pipeline_stage"], "drafting");
    assert!(draft.is_file());
}

#[test]
fn a_failed_trial_chapter_returns_to_the_quick_start() {
    let (_t, root) = new_project();
    let token = ok(&root, &["chapter", "begin", "1"])["data"]["token"]
        .as_str()
        .unwrap()
        .to_string();
    ok(
        &root,
        &[
            "chapter",
            "fail",
            "1",
            "--token",
            &token,
            "--reason",
            "写作中断",
        ],
    );
    assert_eq!(
        read_json(&root.join(".checkpoint.json"))["error"]["previous_state"],
        "QUICK_START"
    );
    let d = ok(&root, &["chapter", "begin", "1"])["data"].clone();
    assert_eq!(d["orchestrator_state"], "QUICK_START");
}

#[test]
fn writing_past_the_plan_goes_from_vol_review_back_to_writing() {
    let (_t, root) = writing(10, 10);
    set_cp(&root, |cp| cp["orchestrator_state"] = json!("VOL_REVIEW"));
    let out = run(&root, &["chapter", "begin", "11"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert!(stdout(&out).contains("超出计划"), "{}", stdout(&out));
    let cp = read_json(&root.join(".checkpoint.json"));
    assert_eq!(cp["orchestrator_state"], "WRITING");
    assert_eq!(cp["inflight_chapter"], 11);
    // Planning a volume still refuses to write.
    let (_t2, planning) = writing(10, 10);
    set_cp(&planning, |cp| {
        cp["orchestrator_state"] = json!("VOL_PLANNING")
    });
    let doc = refused(&planning, &["chapter", "begin", "11"], 3, "E_STATE");
    assert!(
        doc["error"]["message"]
            .as_str()
            .unwrap()
            .contains("「卷规划」"),
        "{doc}"
    );
}

#[test]
fn a_failed_chapter_resumes_and_its_commit_records_the_count() {
    use crate::test_chapter::{stage_drafts, stage_eval, writing_project};
    let (_t, root) = writing_project();
    let token = ok(&root, &["chapter", "begin", "1"])["data"]["token"]
        .as_str()
        .unwrap()
        .to_string();
    stage_drafts(&root, 1);
    ok(&root, &["chapter", "stage", "drafted", "--token", &token]);
    ok(
        &root,
        &[
            "chapter",
            "fail",
            "1",
            "--token",
            &token,
            "--reason",
            "润色超时",
        ],
    );
    // Resumed where it failed: the stage is still `drafted`.
    let d = ok(&root, &["chapter", "begin", "1"])["data"].clone();
    assert_eq!(
        (&d["resumed"], &d["stage"]),
        (&json!(true), &json!("drafted"))
    );
    let token = d["token"].as_str().unwrap().to_string();
    ok(&root, &["chapter", "stage", "refined", "--token", &token]);
    stage_eval(&root, 1, 4.2, true);
    ok(&root, &["chapter", "stage", "judged", "--token", &token]);
    ok(&root, &["chapter", "gate", "1", "--token", &token]);
    ok(&root, &["chapter", "commit", "1", "--token", &token]);
    let counted = ok(&root, &["count", "--chapter", "1"])["data"]["total"].clone();
    let log = read_json(&root.join("logs/chapter-001-log.json"));
    assert_eq!(log["chars"], counted, "{log}");
    assert!(counted.as_u64().unwrap() > 0);
    assert_eq!(
        read_json(&root.join(".checkpoint.json"))["orchestrator_state"],
        "WRITING"
    );
}
