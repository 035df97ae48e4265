//! What a chapter costs through `/novel:continue` with the real client (the cost issue): the
//! scripted model follows the skill's five messages per chapter (SKILL.md §二), the agents get
//! their packets from the SubagentStart hook, and every request the client sends is measured
//! (`test_e2e::metered`: estimated tokens, the share a prompt cache would read, the billed
//! estimate at the PRD's prices). The book is set up as an author who accepted the skill's
//! 放行设置 has it: the allow rules and the switched-off tools in `.claude/settings.local.json`
//! of a trusted folder.
//!
//! Bounds, per chapter: at most 6 requests of the main conversation, at most 3 per agent
//! dispatch, at most 200K estimated input tokens and $0.60 billed for a plain chapter (PRD
//! §12.1), and chapter 3 of a batch within 10 % of chapter 1. The scripted agents write a few
//! sentences where real ones write 3,000 characters: outputs, and so the billed figure, are below
//! a real run's (the note of the issue gives the PRD's output budget on top).
#![cfg(unix)]

use std::path::Path;

use serde_json::json;

use crate::meter::{chapter_cost, metered, token_table};
use crate::support::*;
use crate::test_client::repo;
use crate::test_e2e::{E2e, chapter_one_project, say};
use crate::test_e2e_paths::{Book, chapter_two_project, gates_of, token_of, usage_flags};

/// The book's folder trusted by the client (its HOME kept across runs) and the plugin's
/// settings written there by the binary, as `/novel:start`'s 放行设置 does.
fn settle(e2e: &mut E2e, dir: &Path) {
    e2e.keep_home();
    let home = e2e.path().join("home");
    std::fs::create_dir_all(&home).unwrap();
    write_json(
        &home.join(".claude.json"),
        &json!({"projects": {dir.to_str().unwrap(): {"hasTrustDialogAccepted": true}}}),
    );
    let out = std::process::Command::new(bin())
        .args([
            "--project",
            dir.to_str().unwrap(),
            "permissions",
            "--write",
            "--json",
        ])
        .env("NOVEL_PLUGIN_ROOT", repo())
        .output()
        .unwrap();
    assert_eq!(code(&out), 0, "{}", stdout(&out));
    let settings = read_json(&dir.join(".claude/settings.local.json"));
    assert!(
        settings["permissions"]["deny"]
            .as_array()
            .is_some_and(|d| d.contains(&json!("Workflow"))),
        "{settings}"
    );
}

/// Chapters `from..=to` outlined and contracted after those the fixture has.
fn outline(dir: &Path, from: u32, to: u32) {
    let path = dir.join("volumes/vol-01/outline.md");
    let mut text = std::fs::read_to_string(&path).unwrap();
    for n in from..=to {
        text.push_str(&format!(
            "\n## 第{n}章 灯下{n}\n- 故事线：main_arc\n- 地点：城北破庙\n- 冲突：陆尘循着密信追查第{n}条线索\n"
        ));
        write_json(
            &dir.join(format!(
                "volumes/vol-01/chapter-contracts/chapter-{n:03}.json"
            )),
            &json!({"chapter": n, "storyline_id": "main_arc",
                "objectives": [{"id": format!("OBJ-{n:03}-1"), "type": "plot", "required": true,
                    "description": format!("陆尘追查第{n}条线索")}],
                "acceptance_criteria": [format!("OBJ-{n:03}-1 在正文中明确体现")]}),
        );
    }
    std::fs::write(&path, text).unwrap();
}

/// The scripted model's part of chapters `chapters` written in one batch, each passing at 4.2
/// (`revise`: the first chapter goes 3.2 → revise → 4.2). The report line of a chapter and the
/// first message of the next share a turn (SKILL.md §二 step 6).
fn batch(b: &mut Book, chapters: &[(u32, bool)], revise: bool) {
    let refine = ("屋里一灯如豆", "屋里只点着一盏油灯");
    for (i, &(n, key)) in chapters.iter().enumerate() {
        b.at(n, &format!("灯下{n}"), key);
        let tag = format!("c{n}");
        let begin = b.skill(crate::test_e2e_paths::BEGIN);
        let writer = b.dispatch("chapter-writer", "初稿", None, false);
        let mut first = vec![bash(&begin.run), writer];
        if i > 0 {
            first.insert(0, say(&format!("第{}章 已提交 ✅", chapters[i - 1].0)));
        }
        b.main(&format!("{tag}-begin-writer"), first);
        b.capture_next(json!({"token": "\"token\":\"([0-9a-f]+)\""}));
        b.writer("初稿", &tag, 0);
        let first_score = if revise && i == 0 { 3.2 } else { 4.2 };
        b.steps_3_to_9(&tag, None, false, refine, first_score);
        if revise && i == 0 {
            let notes = b.cmd(
                crate::test_e2e_paths::GATE_LOOP,
                r#"novel --project "<DIR>" revision notes --chapter <N> --json"#,
                &[],
            );
            b.main(
                &format!("{tag}-read-gate-loop"),
                vec![crate::test_e2e::tool(
                    "Read",
                    json!({"file_path": repo().join(crate::test_e2e_paths::GATE_LOOP)}),
                )],
            );
            b.main(&format!("{tag}-notes"), vec![bash(&notes.run)]);
            let revising = b.stage(crate::test_e2e_paths::GATE_LOOP, "revising");
            let d = b.dispatch("chapter-writer", "修订", None, true);
            b.main(
                &format!("{tag}-revising-writer"),
                vec![bash(&revising.run), d],
            );
            let r1 = format!("{tag}-r1");
            b.writer("修订", &r1, 0);
            b.steps_3_to_9(
                &r1,
                Some("这是修订稿，摘要、状态增量、故事线记忆都按新稿重写"),
                true,
                ("他又读了一遍，认出了笔迹。", "他又读了一遍，认得这笔迹。"),
                4.2,
            );
        }
    }
    let last = chapters.last().unwrap().0;
    b.end("report", &format!("第{last}章 已提交 ✅"));
}

fn bash(command: &str) -> serde_json::Value {
    crate::test_e2e::bash(command)
}

/// Runs `chapters` as `/novel:continue <count>` and checks every gate passed and committed.
fn run_batch(
    e2e: &mut E2e,
    dir: &Path,
    chapters: &[(u32, bool)],
    revise: bool,
) -> crate::test_e2e::Run {
    let mut b = Book::new(dir);
    batch(&mut b, chapters, revise);
    let script = b.script();
    let run = e2e.run(dir, &format!("/novel:continue {}", chapters.len()), &script);
    run.assert_all_turns_played(&script);
    for c in run.tool_calls() {
        assert!(
            !c.is_error,
            "{} {} failed: {}\n{}",
            c.name,
            c.input,
            c.result,
            run.report()
        );
    }
    for &(n, key) in chapters {
        b.at(n, &format!("灯下{n}"), key);
        let token = token_of_chapter(&run, &b, n);
        let g = gates_of(&run, &b.gate_line(&usage_flags("j", key)), &token);
        let last = g
            .last()
            .unwrap_or_else(|| panic!("no gate for chapter {n}\n{}", run.report()));
        assert_eq!(last["decision"], "pass", "{last}");
        assert_eq!(last["commit"]["chapter"], n, "{last}");
    }
    b.assert_valid();
    run
}

/// The token `chapter begin <n>` gave in `run`.
fn token_of_chapter(run: &crate::test_e2e::Run, b: &Book, n: u32) -> String {
    if n == 2 || n == 1 {
        return token_of(run, b);
    }
    let begin = b.skill(crate::test_e2e_paths::BEGIN);
    crate::test_e2e_paths::answer(run, &begin, "", 0)["data"]["token"]
        .as_str()
        .expect("a token")
        .to_string()
}

/// A plain chapter (no key chapter, one judge, a pass): the issue's bounds.
#[test]
fn a_plain_chapter_costs_what_the_prd_budgets() {
    let Some(mut e2e) = E2e::new("/novel:continue: the cost of a plain chapter") else {
        return;
    };
    let (_t, dir) = chapter_two_project();
    settle(&mut e2e, &dir);
    let run = run_batch(&mut e2e, &dir, &[(2, false)], false);
    let table = token_table("a plain chapter (chapter 2, one judge): 4.2 pass", &[&run]);
    eprintln!("{table}");
    let c = chapter_cost(&metered(&[&run]), 2, 2);
    assert!(c.main_requests <= 6, "{c:?}\n{table}");
    assert!(c.max_per_dispatch <= 2, "{c:?}\n{table}");
    assert!(c.input <= 200_000, "{c:?}\n{table}");
    assert!(c.billed <= 0.60, "{c:?}\n{table}");
    // Every stage line carries its agents' usage.
    let log = read_json(&dir.join("logs/chapter-002-log.json"));
    for stage in ["drafted", "refined", "judged"] {
        let line = log["stages"]
            .as_array()
            .and_then(|s| s.iter().find(|s| s["name"] == stage))
            .unwrap_or_else(|| panic!("no {stage} in {log}"));
        assert!(line["tokens"].as_u64().is_some_and(|t| t > 0), "{line}");
    }
}

/// `/novel:continue 3`: the third chapter costs no more than the first (+10 %).
#[test]
fn a_batch_stays_flat() {
    let Some(mut e2e) = E2e::new("/novel:continue 3: the cost of chapter 3 against chapter 1")
    else {
        return;
    };
    let (_t, dir) = chapter_two_project();
    outline(&dir, 3, 4);
    settle(&mut e2e, &dir);
    let run = run_batch(&mut e2e, &dir, &[(2, false), (3, false), (4, false)], false);
    let table = token_table("/novel:continue 3 (chapters 2-4, one judge each)", &[&run]);
    eprintln!("{table}");
    let reqs = metered(&[&run]);
    let (first, third) = (chapter_cost(&reqs, 2, 2), chapter_cost(&reqs, 4, 2));
    for c in [&first, &third] {
        assert!(c.main_requests <= 6, "{c:?}\n{table}");
        assert!(c.max_per_dispatch <= 2, "{c:?}\n{table}");
    }
    assert!(
        third.billed <= first.billed * 1.1,
        "{first:?}\n{third:?}\n{table}"
    );
    assert!(
        third.input <= first.input * 11 / 10,
        "{first:?}\n{third:?}\n{table}"
    );
}

/// A chapter with one revision round (3.2 → revise → 4.2) and a key chapter (two judges): their
/// tables, the per-dispatch bound.
#[test]
fn a_revision_and_a_key_chapter_cost() {
    let Some(mut e2e) = E2e::new("/novel:continue: the cost of a revision round") else {
        return;
    };
    let (_t, dir) = chapter_two_project();
    settle(&mut e2e, &dir);
    let run = run_batch(&mut e2e, &dir, &[(2, false)], true);
    let table = token_table("chapter 2 with one revision: 3.2 -> revise -> 4.2", &[&run]);
    eprintln!("{table}");
    let c = chapter_cost(&metered(&[&run]), 2, 2);
    assert!(c.max_per_dispatch <= 2, "{c:?}\n{table}");

    let Some(mut e2e) = E2e::new("/novel:continue: the cost of a key chapter") else {
        return;
    };
    let (_t1, dir) = chapter_one_project();
    settle(&mut e2e, &dir);
    let run = run_batch(&mut e2e, &dir, &[(1, true)], false);
    let table = token_table("chapter 1, a key chapter (two judges): 4.2", &[&run]);
    eprintln!("{table}");
    let c = chapter_cost(&metered(&[&run]), 1, 1);
    assert!(c.main_requests <= 6, "{c:?}\n{table}");
    assert!(c.max_per_dispatch <= 2, "{c:?}\n{table}");
}

/// Issue 38: a book given as `项目：<DIR>` — from a folder that has nothing to do with it, and
/// from its parent folder — gets its packets like one in the session's folder: the skill's
/// first `novel --project` command notes the book for the session, and the SubagentStart hook
/// finds it there. Every agent's first request holds its packet; no agent fetches it.
#[test]
fn a_book_given_by_its_directory_gets_its_packets() {
    let Some(mut e2e) = E2e::new("/novel:continue 1 项目：<DIR> from another folder") else {
        return;
    };
    let (_t, dir) = chapter_two_project();
    let elsewhere = tempfile::tempdir().unwrap();
    let parent = dir.parent().unwrap().to_path_buf();
    for (cwd, n, what) in [
        (elsewhere.path().to_path_buf(), 2u32, "another folder"),
        (parent, 3, "the parent folder"),
    ] {
        if n == 3 {
            outline(&dir, 3, 3);
        }
        let mut b = Book::new(&dir);
        b.at(n, &format!("灯下{n}"), false);
        if n == 2 {
            b.at(2, "夜雨", false);
        }
        // SKILL.md §一 step 2: the book's own `next` first (the `!` line ran in the session's
        // folder, which holds no book).
        crate::test_e2e_paths::says(
            crate::test_e2e_paths::CONTINUE,
            "参数里有「项目：<DIR>」（`/novel:start` 转交时写明），或上面的 `data.project` 为 null，就运行",
        );
        let next = b.skill(r#"novel --project "<DIR>" next --json"#);
        b.main("next", vec![bash(&next.run)]);
        let tag = format!("c{n}");
        let begin = b.skill(crate::test_e2e_paths::BEGIN);
        let writer = b.dispatch("chapter-writer", "初稿", None, false);
        b.main(
            &format!("{tag}-begin-writer"),
            vec![bash(&begin.run), writer],
        );
        b.capture_next(json!({"token": "\"token\":\"([0-9a-f]+)\""}));
        b.writer("初稿", &tag, 0);
        b.steps_3_to_9(
            &tag,
            None,
            false,
            ("屋里一灯如豆", "屋里只点着一盏油灯"),
            4.2,
        );
        b.end("report", &format!("第{n}章 已提交 ✅"));
        let script = b.script();
        let prompt = format!("/novel:continue 1 项目：{}", dir.display());
        let run = e2e.run(&cwd, &prompt, &script);
        run.assert_all_turns_played(&script);
        crate::test_e2e_paths::assert_no_failures(&run, &|_| false);
        let table = token_table(&format!("chapter {n}, the book given from {what}"), &[&run]);
        eprintln!("{table}");
        let mut agents = 0;
        for body in run.messages_requests() {
            let first = crate::test_e2e::first_user_text(body);
            // An agent's first request: its prompt names the book (`项目目录：<DIR>`), and it
            // has not answered yet.
            let agent_prompt = first.contains(&format!("项目目录：{}", dir.display()));
            let answered = body["messages"]
                .as_array()
                .unwrap()
                .iter()
                .any(|m| m["role"] == "assistant");
            if !agent_prompt || answered {
                continue;
            }
            agents += 1;
            let all = crate::test_e2e::all_messages_text(body);
            assert!(
                all.contains("【novel 资料包 第 1/") && all.contains("<context agent="),
                "{what}: an agent's first request without its packet:\n{first}"
            );
        }
        assert_eq!(agents, 4, "{what}: four dispatches");
        assert!(
            !run.calls
                .iter()
                .any(|c| c.starts_with("--project") && c.contains(" context ")),
            "{what}: an agent fetched its packet: {:?}",
            run.calls
        );
        let c = chapter_cost(&metered(&[&run]), n, n);
        assert!(c.max_per_dispatch <= 2, "{c:?}\n{table}");
    }
    let (rc, v) = crate::support::run_json(&dir, &["validate"]);
    assert_eq!(rc, 0, "{v}");
}
