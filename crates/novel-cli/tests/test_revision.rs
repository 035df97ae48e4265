//! `004`: revision notes and candidates (auto_apply, manual_confirm, nothing to revise;
//! apply and reject on a staged and on a committed chapter, then the state rebuilt), author
//! preferences in the ChapterWriter packet, and per-character memory from committed chapters.

use std::path::Path;

use serde_json::{Value, json};

use crate::support::*;
use crate::test_chapter::{fail, ok, run, stage_drafts, stage_eval, up_to_gate, writing_project};

fn set_policy(root: &Path, policy: &str) {
    edit_json(&root.join("novel.json"), |s| {
        s["revision_policy"] = json!(policy)
    });
}

/// The staged evaluation of chapter n with this score and these fixes.
fn eval_with(root: &Path, n: u32, score: f64, fixes: &[(&str, &str)]) {
    // Chapter 1 opens the volume: a key chapter, with a second judge (who passes it, so has
    // no fixes).
    stage_eval(root, n, score, n == 1);
    if n == 1 {
        let mut second = crate::test_chapter::eval_doc(n, 4.2);
        second["judge"] = json!("secondary");
        if let Some(r) = crate::test_chapter::fix_review(root, n) {
            second["fix_review"] = r;
        }
        write_json(
            &root.join(format!(
                "staging/evaluations/chapter-{n:03}-eval-secondary.json"
            )),
            &second,
        );
    }
    edit_json(
        &root.join(format!("staging/evaluations/chapter-{n:03}-eval.json")),
        |e| {
            e["recommendation"] = json!(if score >= 4.0 { "pass" } else { "revise" });
            e["required_fixes"] = json!(
                fixes
                    .iter()
                    .map(|(t, i)| json!({"target": t, "instruction": i}))
                    .collect::<Vec<_>>()
            );
        },
    );
}

/// Begins chapter n and takes it through drafted and refined; returns the token.
fn drafted(root: &Path, n: u32) -> String {
    let token = ok(root, &["chapter", "begin", &n.to_string()])["data"]["token"]
        .as_str()
        .unwrap()
        .to_string();
    stage_drafts(root, n);
    ok(root, &["chapter", "stage", "drafted", "--token", &token]);
    ok(root, &["chapter", "stage", "refined", "--token", &token]);
    token
}

/// Chapter n judged with these fixes and gated; returns (token, gate decision).
fn judged(root: &Path, n: u32, score: f64, fixes: &[(&str, &str)]) -> (String, Value) {
    let token = drafted(root, n);
    eval_with(root, n, score, fixes);
    ok(root, &["chapter", "stage", "judged", "--token", &token]);
    let gate = ok(
        root,
        &["chapter", "gate", &n.to_string(), "--token", &token],
    );
    (token, gate["data"]["decision"].clone())
}

fn staged_text(root: &Path, n: u32) -> String {
    std::fs::read_to_string(root.join(format!("staging/chapters/chapter-{n:03}.md"))).unwrap()
}

fn write_candidate(root: &Path, text: &str) -> String {
    let path = root.join("candidate.md");
    std::fs::write(&path, text).unwrap();
    path.to_string_lossy().into_owned()
}

/// One fix, and one whose instruction is blank (the schema wants a character; a space is one).
const FIXES: [(&str, &str); 2] = [
    ("第 1 段", "陆尘推门前先停一拍，听屋里的动静"),
    ("结尾", "  "),
];

#[test]
fn auto_apply_turns_fixes_into_the_revision_loop() {
    let (_t, root) = writing_project();
    let (_token, decision) = judged(&root, 1, 3.2, &FIXES);
    assert_eq!(decision, "revise");
    let notes = ok(&root, &["revision", "notes"])["data"].clone();
    assert_eq!(notes["chapter"], 1);
    assert_eq!(notes["target"], "staged");
    assert_eq!(notes["policy"], "auto_apply");
    assert_eq!(notes["action"], "revise");
    // The empty instruction is ignored; the other one is there, with its source.
    assert_eq!(
        notes["notes"],
        json!([{"source": "judge:primary", "target": "第 1 段",
                "instruction": "陆尘推门前先停一拍，听屋里的动静"}])
    );
    assert_eq!(
        notes["text"],
        "1. 【第 1 段】陆尘推门前先停一拍，听屋里的动静"
    );
    // The resume step is the revision loop, as before.
    let next = ok(&root, &["next"])["data"].clone();
    assert_eq!(next["recommendation"]["action"], "revise_chapter", "{next}");
}

#[test]
fn manual_confirm_keeps_a_candidate_until_the_author_applies_it() {
    let (_t, root) = writing_project();
    set_policy(&root, "manual_confirm");
    let (token, decision) = judged(&root, 1, 3.2, &FIXES);
    assert_eq!(decision, "revise");
    assert_eq!(
        ok(&root, &["revision", "notes"])["data"]["action"],
        "candidate"
    );
    let draft = staged_text(&root, 1);
    let revised = format!("{draft}\n陆尘在门外停了一拍，屋里有人翻纸。\n");
    // Where ChapterWriter writes a candidate; the save takes it out of staging.
    let draft_path = root.join("staging/candidates/chapter-001.md");
    std::fs::create_dir_all(draft_path.parent().unwrap()).unwrap();
    std::fs::write(&draft_path, &revised).unwrap();
    let file = draft_path.to_string_lossy().into_owned();
    // The in-flight chapter's candidate needs the lock: a token that is not the lock's is
    // refused (without one, the session holding the lock acts: `test_lock`).
    fail(
        &root,
        &[
            "revision",
            "save",
            "--chapter",
            "1",
            &file,
            "--token",
            "0000",
        ],
        3,
        "E_LOCK_OWNER",
    );
    let saved = ok(
        &root,
        &[
            "revision",
            "save",
            "--chapter",
            "1",
            &file,
            "--token",
            &token,
        ],
    )["data"]
        .clone();
    assert_eq!(saved["file"], "chapters/chapter-001-revision.json");
    assert_eq!(saved["target"], "staged");
    assert_eq!(saved["notes"], 1);
    assert!(!draft_path.exists(), "the candidate draft stays in staging");
    // Nothing overwrote the chapter; the candidate is pending, and so is the chapter.
    assert_eq!(staged_text(&root, 1), draft);
    let rec = read_json(&root.join("chapters/chapter-001-revision.json"));
    assert_eq!(rec["status"], "pending");
    assert_eq!(rec["candidate"], revised.as_str());
    assert_eq!(
        rec["notes"][0]["instruction"],
        "陆尘推门前先停一拍，听屋里的动静"
    );
    let cp = read_json(&root.join(".checkpoint.json"));
    assert_eq!(cp["pending_actions"][0]["type"], "revision_candidate");
    assert_eq!(cp["pending_actions"][0]["chapter"], 1);
    // `next` asks the author, and the menu's first option is the decision.
    let next = ok(&root, &["next"])["data"].clone();
    assert_eq!(next["recommendation"]["action"], "ask_author", "{next}");
    assert!(
        next["recommendation"]["then"]
            .as_str()
            .unwrap()
            .contains("采纳（候选成为修订稿）"),
        "{next}"
    );
    let recover = ok(&root, &["chapter", "recover"])["data"].clone();
    assert_eq!(recover["resume"]["step"], "ask_author", "{recover}");
    assert_eq!(next["options"][0]["id"], "decide_revision", "{next}");
    assert_eq!(next["options"][0]["flow"], "revision-decision");
    // The file is the binary's: the guard refuses a direct write.
    let hook = novel_hook(
        &root,
        &json!({"tool_name": "Write", "cwd": root, "tool_input": {
            "file_path": root.join("chapters/chapter-001-revision.json"), "content": "{}"}}),
    );
    assert!(hook.contains("\"deny\""), "{hook}");
    // Applying to the staged text is a revision round the author chose: apply moves the
    // chapter to `revising` itself (the round is archived and counted).
    let applied = ok(
        &root,
        &["revision", "apply", "--chapter", "1", "--token", &token],
    )["data"]
        .clone();
    let cp = read_json(&root.join(".checkpoint.json"));
    assert_eq!(cp["pipeline_stage"], "revising");
    assert_eq!(cp["revision_count"], 1);
    assert!(
        root.join("logs/revisions/chapter-001/r1/chapter-001-eval.json")
            .is_file()
    );
    assert_eq!(applied["target"], "staged");
    assert!(applied["rebuild"].is_null());
    assert_eq!(staged_text(&root, 1), revised);
    let rec = read_json(&root.join("chapters/chapter-001-revision.json"));
    assert_eq!(rec["status"], "accepted");
    assert!(rec["decided_at"].is_string());
    assert_eq!(
        rec["original"],
        draft.as_str(),
        "the replaced draft is kept"
    );
    let cp = read_json(&root.join(".checkpoint.json"));
    assert_eq!(cp["pending_actions"], json!([]));
    // Decided once: a second apply is refused.
    fail(
        &root,
        &["revision", "apply", "--chapter", "1", "--token", &token],
        3,
        "E_REVISION_DECIDED",
    );
    // The pipeline goes on from the revised draft: Summarizer, judge, gate, commit.
    let summary = root.join("staging/summaries/chapter-001-summary.md");
    std::fs::write(
        &summary,
        "---\nchapter: 1\nstoryline_id: main_arc\n---\n第1章：陆尘在门外停了一拍。\n",
    )
    .unwrap();
    stage_drafts_keep_text(&root, 1);
    ok(&root, &["chapter", "stage", "drafted", "--token", &token]);
    ok(&root, &["chapter", "stage", "refined", "--token", &token]);
    eval_with(&root, 1, 4.2, &[]);
    ok(&root, &["chapter", "stage", "judged", "--token", &token]);
    ok(&root, &["chapter", "gate", "1", "--token", &token]);
    ok(&root, &["chapter", "commit", "1", "--token", &token]);
    let committed = std::fs::read_to_string(root.join("chapters/chapter-001.md")).unwrap();
    assert_eq!(committed, revised);
    ok(&root, &["validate"]);
}

/// The Summarizer's delta, summary and memory again (the chapter text is left as it is).
fn stage_drafts_keep_text(root: &Path, n: u32) {
    let text = staged_text(root, n);
    stage_drafts(root, n);
    std::fs::write(
        root.join(format!("staging/chapters/chapter-{n:03}.md")),
        text,
    )
    .unwrap();
}

fn novel_hook(root: &Path, input: &Value) -> String {
    use std::io::Write;
    let mut child = std::process::Command::new(bin())
        .args(["hook", "pre-tool-use"])
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
fn no_fix_instruction_means_no_candidate_and_the_chapter_untouched() {
    let (_t, root) = writing_project();
    set_policy(&root, "manual_confirm");
    let (token, decision) = judged(&root, 1, 4.2, &[("第 2 段", " "), ("结尾", "   ")]);
    assert_eq!(decision, "pass");
    let notes = ok(&root, &["revision", "notes"])["data"].clone();
    assert_eq!(notes["action"], "none");
    assert_eq!(notes["notes"], json!([]));
    let draft = staged_text(&root, 1);
    let file = write_candidate(&root, "# 第1章 风起\n\n别的写法。\n");
    let refused = fail(
        &root,
        &[
            "revision",
            "save",
            "--chapter",
            "1",
            &file,
            "--token",
            &token,
        ],
        1,
        "E_NO_REVISION_NOTES",
    );
    assert!(
        refused["error"]["message"]
            .as_str()
            .unwrap()
            .contains("章节保持不变")
    );
    assert!(!root.join("chapters/chapter-001-revision.json").exists());
    assert_eq!(staged_text(&root, 1), draft);
    ok(&root, &["chapter", "commit", "1", "--token", &token]);
    assert_eq!(
        std::fs::read_to_string(root.join("chapters/chapter-001.md")).unwrap(),
        draft
    );
}

#[test]
fn rejected_candidate_leaves_the_chapter_and_the_author_may_accept_it() {
    let (_t, root) = writing_project();
    set_policy(&root, "manual_confirm");
    let (token, _) = judged(&root, 1, 3.2, &FIXES);
    let draft = staged_text(&root, 1);
    let file = write_candidate(&root, &format!("{draft}\n改过的一句。\n"));
    ok(
        &root,
        &[
            "revision",
            "save",
            "--chapter",
            "1",
            &file,
            "--token",
            &token,
        ],
    );
    // A revise verdict cannot be committed as it is …
    fail(
        &root,
        &["chapter", "commit", "1", "--token", &token],
        1,
        "E_GATE",
    );
    let rejected = ok(&root, &["revision", "reject", "--chapter", "1"])["data"].clone();
    assert_eq!(rejected["status"], "rejected");
    assert_eq!(staged_text(&root, 1), draft);
    let cp = read_json(&root.join(".checkpoint.json"));
    assert_eq!(cp["pending_actions"], json!([]));
    // … unless the author accepts it.
    ok(
        &root,
        &["chapter", "commit", "1", "--token", &token, "--accept"],
    );
    assert_eq!(
        std::fs::read_to_string(root.join("chapters/chapter-001.md")).unwrap(),
        draft
    );
    let log = read_json(&root.join("logs/chapter-001-log.json"));
    assert_eq!(log["accepted_by_author"], true);
    fail(
        &root,
        &["revision", "reject", "--chapter", "1"],
        3,
        "E_REVISION_DECIDED",
    );
}

/// Commits chapter n with a passing evaluation that still carries one fix.
fn commit_with_fix(root: &Path, n: u32) {
    let (token, decision) = judged(root, n, 4.2, &[("第 1 段", "屋里一灯如豆改成具体的灯")]);
    assert_eq!(decision, "pass");
    ok(
        root,
        &["chapter", "commit", &n.to_string(), "--token", &token],
    );
}

#[test]
fn apply_on_a_committed_chapter_then_the_state_is_rebuilt() {
    let (_t, root) = writing_project();
    set_policy(&root, "manual_confirm");
    commit_with_fix(&root, 1);
    commit_with_fix(&root, 2);
    let notes = ok(&root, &["revision", "notes", "--chapter", "2"])["data"].clone();
    assert_eq!(notes["target"], "committed");
    assert_eq!(
        notes["evaluations"],
        json!(["evaluations/chapter-002-eval.json"])
    );
    assert_eq!(notes["action"], "candidate");
    let chapter = root.join("chapters/chapter-002.md");
    let old = std::fs::read_to_string(&chapter).unwrap();
    let revised = "# 第2章 风起\n\n陆尘推门而入，桌上一盏马灯，灯罩熏得发黑，照见半张海图。\n";
    let file = write_candidate(&root, revised);
    let saved = ok(&root, &["revision", "save", "--chapter", "2", &file])["data"].clone();
    assert_eq!(saved["target"], "committed");
    assert_eq!(std::fs::read_to_string(&chapter).unwrap(), old);
    let applied = ok(&root, &["revision", "apply", "--chapter", "2"])["data"].clone();
    assert_eq!(std::fs::read_to_string(&chapter).unwrap(), revised);
    let rebuild = &applied["rebuild"];
    assert_eq!(rebuild["chapter"], 2);
    assert_eq!(rebuild["is_last"], true);
    assert_eq!(rebuild["summary"], "summaries/chapter-002-summary.md");
    assert!(
        rebuild["steps"]
            .to_string()
            .contains("state rebuild --until-chapter 1 --write"),
        "{rebuild}"
    );
    // The log's 字数 follows the new text; the revision is accepted; a rebuild is pending.
    let log = read_json(&root.join("logs/chapter-002-log.json"));
    assert_eq!(log["chars"], applied["chars"]);
    let rec = read_json(&root.join("chapters/chapter-002-revision.json"));
    assert_eq!(rec["status"], "accepted");
    assert_eq!(rec["original"], old.as_str(), "the replaced text is kept");
    let cp = read_json(&root.join(".checkpoint.json"));
    assert_eq!(cp["pending_actions"][0]["type"], "chapter_rebuild");
    assert_eq!(cp["pending_actions"][0]["id"], "rebuild-chapter-002");
    assert!(!root.join(".novel-commit-journal.json").exists());
    // The rebuild the report asks for: back to chapter 1, then chapter 2's new delta.
    ok(
        &root,
        &["state", "rebuild", "--until-chapter", "1", "--write"],
    );
    let state = read_json(&root.join("state/current-state.json"));
    assert_eq!(state["characters"]["lu-chen"]["location"], "第1章的地点");
    let version = state["state_version"].as_u64().unwrap();
    let delta = root.join("new-delta.json");
    write_json(
        &delta,
        &json!({"chapter": 2, "base_state_version": version, "storyline_id": "jinghai_plan",
            "ops": [{"op": "set", "path": "characters.lu-chen.location", "value": "海图室"}]}),
    );
    ok(&root, &["ops", "apply", delta.to_str().unwrap()]);
    let state = read_json(&root.join("state/current-state.json"));
    assert_eq!(state["characters"]["lu-chen"]["location"], "海图室");
    // The state replays from its changelog to the same thing, and the project is clean.
    let (code, rebuilt) = run_json(&root, &["state", "rebuild"]);
    assert_eq!(code, 0, "{rebuilt}");
    ok(&root, &["pending", "resolve", "rebuild-chapter-002"]);
    ok(&root, &["validate"]);
}

#[test]
fn a_candidate_made_from_an_older_text_is_refused() {
    let (_t, root) = writing_project();
    commit_with_fix(&root, 1);
    let file = write_candidate(&root, "# 第1章 风起\n\n候选。\n");
    ok(&root, &["revision", "save", "--chapter", "1", &file]);
    std::fs::write(
        root.join("chapters/chapter-001.md"),
        "# 第1章 风起\n\n作者自己改过。\n",
    )
    .unwrap();
    fail(
        &root,
        &["revision", "apply", "--chapter", "1"],
        3,
        "E_REVISION_STALE",
    );
    assert_eq!(
        std::fs::read_to_string(root.join("chapters/chapter-001.md")).unwrap(),
        "# 第1章 风起\n\n作者自己改过。\n"
    );
    // While another chapter is in flight, a committed one is not touched.
    let file = write_candidate(&root, "# 第1章 风起\n\n候选二。\n");
    ok(&root, &["revision", "save", "--chapter", "1", &file]);
    let _token = drafted(&root, 2);
    fail(
        &root,
        &["revision", "apply", "--chapter", "1"],
        3,
        "E_INFLIGHT",
    );
}

/// A volume outline with chapters 1–6, so the ChapterWriter packet can be made.
fn outline(root: &Path) {
    let mut t = String::from("# 第 1 卷\n\n陆尘追查密信。\n");
    for c in 1..=6 {
        t.push_str(&format!(
            "\n## 第{c}章 风起\n- 故事线：main_arc\n- POV：陆尘\n- 地点：城北\n- 冲突：夜探\n- 弧光：起疑\n- 伏笔：无\n- 状态变化：无\n"
        ));
    }
    std::fs::write(root.join("volumes/vol-01/outline.md"), t).unwrap();
}

fn packet_section(root: &Path, tag: &str) -> (String, Value) {
    outline(root);
    let out = run(
        root,
        &["--json", "context", "chapter-writer", "--chapter", "1"],
    );
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let doc = json(&out);
    let section = doc["data"]["sections"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["tag"] == tag)
        .unwrap_or_else(|| panic!("no {tag} section: {doc}"))
        .clone();
    (
        format!("{}{}", stderr(&out), doc["data"]["warnings"]),
        section,
    )
}

#[test]
fn preferences_present_absent_and_corrupt() {
    let (_t, root) = writing_project();
    // Absent: the section is there and empty.
    let (_, s) = packet_section(&root, "user_preferences");
    assert_eq!(s["text"], "");
    let added = ok(
        &root,
        &["prefs", "add", "对话少用感叹号", "--category", "文风"],
    );
    assert_eq!(added["data"]["added"]["id"], "P-001");
    assert!(
        added["data"]["added"]["user_id"]
            .as_str()
            .unwrap()
            .starts_with("author_")
    );
    ok(&root, &["prefs", "add", "配角不写内心独白"]);
    fail(
        &root,
        &["prefs", "add", "配角不写内心独白"],
        1,
        "E_PREF_EXISTS",
    );
    let (_, s) = packet_section(&root, "user_preferences");
    assert_eq!(s["text"], "- [文风] 对话少用感叹号\n- 配角不写内心独白");
    // Removed ids are never reused.
    ok(&root, &["prefs", "remove", "P-002"]);
    fail(&root, &["prefs", "remove", "P-002"], 2, "E_NO_PREFERENCE");
    let again = ok(&root, &["prefs", "add", "每章结尾留钩子"]);
    assert_eq!(again["data"]["added"]["id"], "P-003");
    // Corrupt: an empty section and a warning on stderr, the packet still made.
    std::fs::write(root.join("memory/preferences.json"), "{\"preferences\": [").unwrap();
    let (err, s) = packet_section(&root, "user_preferences");
    assert_eq!(s["text"], "");
    assert!(err.contains("作者偏好读不了"), "{err}");
    let human = run(&root, &["context", "chapter-writer", "--chapter", "1"]);
    assert_eq!(code(&human), 0);
    assert!(
        stderr(&human).contains("作者偏好读不了"),
        "{}",
        stderr(&human)
    );
    fail(&root, &["prefs", "list"], 2, "E_JSON");
}

fn add_character(root: &Path) {
    write_json(
        &root.join("characters/active/lu-chen.json"),
        &json!({"id": "lu-chen", "display_name": "陆尘", "aliases": ["小陆"], "role": "protagonist",
            "appearance": "瘦高，右手虎口有茧", "background": "城北铁匠之子", "motivation": "查清父亲的死因",
            "contracts": []}),
    );
}

/// Chapter n committed with the Summarizer's character actions in its delta.
fn commit_with_actions(root: &Path, n: u32, actions: Value) {
    let token = ok(root, &["chapter", "begin", &n.to_string()])["data"]["token"]
        .as_str()
        .unwrap()
        .to_string();
    stage_drafts(root, n);
    edit_json(
        &root.join(format!("staging/state/chapter-{n:03}-delta.json")),
        |d| d["character_actions"] = actions,
    );
    ok(
        root,
        &[
            "ops",
            "validate",
            &format!("staging/state/chapter-{n:03}-delta.json"),
        ],
    );
    ok(root, &["chapter", "stage", "drafted", "--token", &token]);
    ok(root, &["chapter", "stage", "refined", "--token", &token]);
    stage_eval(root, n, 4.2, n == 1);
    ok(root, &["chapter", "stage", "judged", "--token", &token]);
    ok(
        root,
        &["chapter", "gate", &n.to_string(), "--token", &token],
    );
    let done = ok(
        root,
        &["chapter", "commit", &n.to_string(), "--token", &token],
    );
    assert_eq!(done["data"]["memory"]["failed"], json!([]), "{done}");
}

#[test]
fn three_committed_chapters_give_three_memories_in_order() {
    let (_t, root) = writing_project();
    add_character(&root);
    let init = ok(&root, &["memory", "init"])["data"].clone();
    assert_eq!(init["created"], json!(["lu-chen"]));
    // Idempotent.
    assert_eq!(
        ok(&root, &["memory", "init"])["data"]["existing"],
        json!(["lu-chen"])
    );
    for n in 1..=4u32 {
        commit_with_actions(
            &root,
            n,
            json!([{"character": if n % 2 == 0 { "小陆" } else { "陆尘" }, "scene": 1,
                    "action": format!("第{n}章里陆尘做的事")},
                   {"character": "无名氏", "action": "路过"}]),
        );
    }
    let shown = ok(&root, &["memory", "show", "陆尘"])["data"].clone();
    let entries = shown["entries"].as_array().unwrap();
    assert_eq!(entries.len(), 5, "{shown}");
    assert_eq!(entries[0]["kind"], "profile");
    assert!(entries[0]["text"].as_str().unwrap().contains("外貌：瘦高"));
    let chapters: Vec<u64> = entries[1..]
        .iter()
        .map(|e| e["chapter"].as_u64().unwrap())
        .collect();
    assert_eq!(chapters, [1, 2, 3, 4]);
    let last = ok(&root, &["memory", "show", "lu-chen", "--last", "2"])["data"].clone();
    assert_eq!(last["entries"].as_array().unwrap().len(), 3);
    // A slug-shaped name of nobody is not a character; the closest one is offered.
    let out = novel(&root, &["--json", "memory", "show", "lu-chan"]);
    assert_eq!(code(&out), 1, "{}", stdout(&out));
    let doc = json(&out);
    assert_eq!(doc["error"]["code"], "E_NO_ENTITY");
    assert!(
        doc["error"]["hint"].as_str().unwrap().contains("lu-chen"),
        "{doc}"
    );
    // The changelog keeps the actions, so memory can be made again from it — byte for byte.
    let log = std::fs::read_to_string(root.join("state/changelog.jsonl")).unwrap();
    assert!(log.lines().last().unwrap().contains("第4章里陆尘做的事"));
    let file = root.join("memory/characters/lu-chen.jsonl");
    let before = std::fs::read_to_string(&file).unwrap();
    let lines: Vec<&str> = before.lines().collect();
    std::fs::write(&file, format!("{}\n", lines[..2].join("\n"))).unwrap();
    let rebuilt = ok(&root, &["memory", "rebuild"])["data"].clone();
    assert_eq!(rebuilt["characters"]["lu-chen"], 4, "{rebuilt}");
    assert_eq!(rebuilt["unknown"], json!(["无名氏"]));
    assert_eq!(std::fs::read_to_string(&file).unwrap(), before);
    // The ChapterWriter packet carries the last three actions of the characters in play.
    outline(&root);
    let out = run(
        &root,
        &["--json", "context", "chapter-writer", "--chapter", "5"],
    );
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let doc = json(&out);
    let memory = doc["data"]["sections"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["tag"] == "character_memory")
        .unwrap()["text"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(!memory.contains("第1章里"), "{memory}");
    for n in 2..=4 {
        assert!(memory.contains(&format!("第{n}章里陆尘做的事")), "{memory}");
    }
}

#[test]
fn a_failed_memory_write_does_not_block_the_commit() {
    let (_t, root) = writing_project();
    add_character(&root);
    // A directory where the memory file should be: the append fails.
    std::fs::create_dir_all(root.join("memory/characters/lu-chen.jsonl")).unwrap();
    let token = ok(&root, &["chapter", "begin", "1"])["data"]["token"]
        .as_str()
        .unwrap()
        .to_string();
    stage_drafts(&root, 1);
    edit_json(&root.join("staging/state/chapter-001-delta.json"), |d| {
        d["character_actions"] = json!([{"character": "陆尘", "action": "推门"}])
    });
    ok(&root, &["chapter", "stage", "drafted", "--token", &token]);
    ok(&root, &["chapter", "stage", "refined", "--token", &token]);
    stage_eval(&root, 1, 4.2, true);
    ok(&root, &["chapter", "stage", "judged", "--token", &token]);
    ok(&root, &["chapter", "gate", "1", "--token", &token]);
    let out = run(&root, &["chapter", "commit", "1", "--token", &token]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert!(
        stdout(&out).contains("角色记忆没有写成"),
        "{}",
        stdout(&out)
    );
    assert!(root.join("chapters/chapter-001.md").is_file());
    assert_eq!(
        read_json(&root.join(".checkpoint.json"))["last_completed_chapter"],
        1
    );
}

#[test]
fn up_to_gate_still_passes_with_the_new_fields() {
    // The delta schema accepts character_actions; a bad one is reported where it is.
    let (_t, root) = writing_project();
    let token = up_to_gate(&root, 1, true);
    ok(&root, &["chapter", "commit", "1", "--token", &token]);
    let bad = root.join("bad-delta.json");
    write_json(
        &bad,
        &json!({"chapter": 2, "base_state_version": 1, "storyline_id": "main_arc", "ops": [],
            "character_actions": [{"character": "陆尘", "action": ""}]}),
    );
    let out = run(
        &root,
        &[
            "--json",
            "validate",
            bad.to_str().unwrap(),
            "--kind",
            "state-delta",
        ],
    );
    assert_eq!(code(&out), 1, "{}", stdout(&out));
    assert!(
        stdout(&out).contains("/character_actions/0/action"),
        "{}",
        stdout(&out)
    );
}

/// A delta merged by `ops apply` (the import backfill's path, not a commit) keeps its
/// `character_actions` on the changelog line too, so `memory rebuild` finds them.
#[test]
fn ops_apply_keeps_character_actions_for_the_memory() {
    let (_t, root) = writing_project();
    add_character(&root);
    let version = read_json(&root.join("state/current-state.json"))["state_version"].clone();
    let delta = root.join("delta.json");
    write_json(
        &delta,
        &json!({"chapter": 1, "base_state_version": version, "storyline_id": "main_arc",
            "ops": [{"op": "set", "path": "characters.lu-chen.location", "value": "城北"}],
            "character_actions": [{"character": "陆尘", "scene": 1, "action": "夜探城北废墟"}]}),
    );
    ok(&root, &["ops", "apply", delta.to_str().unwrap()]);
    let log = std::fs::read_to_string(root.join("state/changelog.jsonl")).unwrap();
    assert!(
        log.lines().last().unwrap().contains("夜探城北废墟"),
        "{log}"
    );
    ok(&root, &["memory", "rebuild"]);
    let shown = ok(&root, &["memory", "show", "lu-chen"])["data"].clone();
    assert_eq!(shown["entries"][1]["text"], "夜探城北废墟", "{shown}");
    assert_eq!(shown["entries"][1]["chapter"], 1);
}
