//! The author's first session in the real client's interactive terminal (issue 45), driven in
//! tmux as an author would: an empty folder, the trust dialog accepted, `/novel:start 开新书`,
//! the 放行设置 accepted in the first question, then the interview answered in plain words and
//! the next question too. The model is the fake Messages API playing a script of the quick
//! start's first turns (the commands the Markdown writes; WorldBuilder and CharacterWeaver
//! writing their files); every permission prompt the client puts on the screen is counted and
//! answered 「Yes」.
//!
//! Measured before (2.1.197, the rules in the book's `.claude/settings.local.json`): 34 prompts
//! in the interview turn and 3 in the next. The rules now go to the author's user settings, which
//! the client reads again a second or two after they change: at most 2 in the interview turn,
//! none after it.
#![cfg(unix)]

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::support::*;
use crate::test_client::{client, repo};
use crate::test_e2e::{agent_marker, bash, say, start_fake_api, tool, turn};

/// A tmux server of this test's own (its socket named after the process), killed when dropped.
struct Tmux {
    socket: String,
}

impl Tmux {
    /// `tmux` is on PATH; under `NOVEL_REQUIRE_CLIENT=1` (tests/run, CI) its absence fails.
    fn available() -> bool {
        let found = Command::new("tmux")
            .arg("-V")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        let required = std::env::var_os("NOVEL_REQUIRE_CLIENT").is_some_and(|v| v == "1");
        assert!(
            found || !required,
            "NOVEL_REQUIRE_CLIENT=1 but tmux is missing: tests/run installs it with apt-get"
        );
        if !found {
            eprintln!("SKIPPED: the interactive client test needs tmux");
        }
        found
    }

    /// A session of 160×50 running `line` (a shell command line) in `cwd`.
    fn start(cwd: &Path, line: &str) -> Tmux {
        let t = Tmux {
            socket: format!("novel-e2e-{}", std::process::id()),
        };
        let status = Command::new("tmux")
            .args([
                "-L",
                &t.socket,
                "new-session",
                "-d",
                "-s",
                "a",
                "-x",
                "160",
                "-y",
                "50",
            ])
            .arg("-c")
            .arg(cwd)
            .arg(line)
            .status()
            .expect("tmux");
        assert!(status.success(), "tmux new-session");
        t
    }

    fn screen(&self) -> String {
        let out = Command::new("tmux")
            .args(["-L", &self.socket, "capture-pane", "-p", "-t", "a"])
            .output()
            .expect("tmux capture-pane");
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    fn keys(&self, keys: &[&str]) {
        let status = Command::new("tmux")
            .args(["-L", &self.socket, "send-keys", "-t", "a"])
            .args(keys)
            .status()
            .expect("tmux send-keys");
        assert!(status.success());
    }

    /// Types `text` as it is, then Enter.
    fn type_line(&self, text: &str) {
        self.keys(&["-l", text]);
        std::thread::sleep(Duration::from_millis(700));
        self.keys(&["Enter"]);
    }

    /// Waits (at most a minute) until the screen shows `what`.
    fn wait_for(&self, what: &str) {
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let s = self.screen();
            if s.contains(what) {
                return;
            }
            assert!(Instant::now() < deadline, "no {what:?} on the screen:\n{s}");
            std::thread::sleep(Duration::from_millis(300));
        }
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = Command::new("tmux")
            .args(["-L", &self.socket, "kill-server"])
            .stderr(Stdio::null())
            .status();
    }
}

/// A permission prompt of the client (Bash: "Do you want to proceed?", Write: "Do you want to
/// create …?", Edit: "Do you want to make this edit …?").
const PROMPT: &str = "Do you want to";

/// The turn names the fake API answered so far.
fn played(log: &Path) -> Vec<String> {
    std::fs::read_to_string(log)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter_map(|r| r["turn"].as_str().map(str::to_string))
        .collect()
}

/// Plays one author turn: answers every permission prompt 「Yes」 (and each AskUserQuestion with
/// its first, recommended option) until the fake API has played `last` and the client waits for
/// the author again. Returns the prompts' headers.
fn author_turn(t: &Tmux, log: &Path, last: &str) -> Vec<String> {
    let deadline = Instant::now() + Duration::from_secs(120);
    let mut prompts = Vec::new();
    loop {
        let s = t.screen();
        if s.contains(PROMPT) {
            let header: String = s
                .lines()
                .skip_while(|l| !l.starts_with('─'))
                .skip(1)
                .find(|l| !l.trim().is_empty())
                .unwrap_or_default()
                .trim()
                .to_string();
            prompts.push(header);
            t.keys(&["Enter"]);
            // The same prompt stays until the client has taken the answer.
            let gone = Instant::now() + Duration::from_secs(10);
            while t.screen() == s && Instant::now() < gone {
                std::thread::sleep(Duration::from_millis(200));
            }
            continue;
        }
        if s.contains("写入放行设置（推荐）") && s.contains("Enter to select") {
            t.keys(&["Enter"]);
            std::thread::sleep(Duration::from_millis(800));
            continue;
        }
        if s.contains("Submit answers") {
            t.keys(&["Enter"]);
            std::thread::sleep(Duration::from_millis(800));
            continue;
        }
        let done = played(log).iter().any(|n| n == last);
        if done && s.contains("for shortcuts") && !s.contains("esc to interrupt") {
            return prompts;
        }
        assert!(
            Instant::now() < deadline,
            "turn {last} not played; played {:?}\n{s}",
            played(log)
        );
        std::thread::sleep(Duration::from_millis(300));
    }
}

/// The script: the quick start's first three turns as the Markdown writes them.
fn script(d: &str) -> Value {
    let main = |name: &str, reply: Vec<Value>| {
        turn(
            name,
            json!({"first_user": "<command-name>/novel:start</command-name>", "tool": "Bash",
                "no_tool": "SendMessage-never"}),
            reply,
        )
    };
    let agent = |agent: &str, task: &str, name: &str, reply: Vec<Value>| {
        turn(
            name,
            json!({"system": agent_marker(agent), "first_user": format!("任务：{task}")}),
            reply,
        )
    };
    let dispatch = |agent: &str, task: &str| {
        tool(
            "Agent",
            json!({"subagent_type": format!("novel:{agent}"), "description": task,
                "prompt": format!("项目目录：{d}\n任务：{task}\n要求：依据 brief.md。")}),
        )
    };
    let quick = repo().join("skills/start/references/quick-start.md");
    let rules = json!({"rules": [{"id": "W-001", "category": "golden_finger",
        "rule": "密信上的字只在灯下显形，每夜只能读一次", "constraint_type": "hard",
        "exceptions": [], "introduced_chapter": 1, "last_verified": null}]});
    json!({"turns": [
        // 1. `/novel:start 开新书`: the menu, the flow file, the 放行 question.
        main("t1-next", vec![bash("novel next --json"),
            tool("Read", json!({"file_path": quick}))]),
        main("t1-ask", vec![tool("AskUserQuestion", json!({"questions": [{
            "question": "把 novel 的命令、插件文件的读取、当前目录里的写入加入你的放行规则？",
            "header": "放行", "multiSelect": false, "options": [
                {"label": "写入放行设置（推荐）", "description": "之后直接回话就行。"},
                {"label": "不写，每一步都问我", "description": "每一步都要确认。"}]}]}))]),
        main("t1-permissions", vec![bash("novel permissions --write --json")]),
        main("t1-interview", vec![say("开书访谈，请一次答完：1. 书名 2. 一句话卖点 3. 主角")]),
        // 2. The answers: the book, the brief, the world, the characters.
        main("t2-init", vec![bash(&format!(
            "novel init \"{d}\" --title \"灯下密信\" --genre \"玄幻\" --json"))]),
        main("t2-read-brief", vec![tool("Read", json!({"file_path": format!("{d}/brief.md")}))]),
        main("t2-edit-brief", vec![tool("Edit", json!({"file_path": format!("{d}/brief.md"),
            "old_string": "## 一句话卖点\n",
            "new_string": "## 一句话卖点\n\n守夜少年陆尘捡到只在灯下显字的密信。\n"}))]),
        main("t2-world", vec![dispatch("world-builder", "轻量")]),
        agent("world-builder", "轻量", "wb-context",
            vec![bash(&format!("novel --project \"{d}\" context world-builder"))]),
        agent("world-builder", "轻量", "wb-read",
            vec![tool("Read", json!({"file_path": format!("{d}/world/rules.json")}))]),
        agent("world-builder", "轻量", "wb-write", vec![
            tool("Write", json!({"file_path": format!("{d}/world/rules.json"),
                "content": serde_json::to_string_pretty(&rules).unwrap()})),
            tool("Write", json!({"file_path": format!("{d}/world/rules.md"),
                "content": "# 世界观\n\n密信只在灯下显字。\n"}))]),
        agent("world-builder", "轻量", "wb-done",
            vec![say(r#"{"status":"completed","agent":"world-builder","files":["world/rules.json","world/rules.md"]}"#)]),
        main("t2-validate", vec![bash(&format!(
            "novel --project \"{d}\" validate \"{d}/world/rules.json\" --json"))]),
        main("t2-characters", vec![dispatch("character-weaver", "初始化")]),
        agent("character-weaver", "初始化", "cw-context",
            vec![bash(&format!("novel --project \"{d}\" context character-weaver"))]),
        agent("character-weaver", "初始化", "cw-write", vec![
            tool("Write", json!({"file_path": format!("{d}/characters/active/lu-chen.md"),
                "content": "# 陆尘\n\n守夜少年，想查清父亲的死。\n"}))]),
        agent("character-weaver", "初始化", "cw-done",
            vec![say(r#"{"status":"completed","agent":"character-weaver","files":["characters/active/lu-chen.md"]}"#)]),
        main("t2-ask", vec![say("开篇只跑这一条主线（陆尘查密信）行不行？")]),
        // 3. The storyline confirmed: the next step of the flow.
        main("t3-mark", vec![
            bash(&format!("novel --project \"{d}\" validate \"{d}/storylines/storylines.json\" --json")),
            bash(&format!("novel --project \"{d}\" quickstart done storylines --json"))]),
        main("t3-read", vec![tool("Read", json!({"file_path": format!("{d}/brief.md")}))]),
        main("t3-edit", vec![tool("Edit", json!({"file_path": format!("{d}/brief.md"),
            "old_string": "守夜少年陆尘捡到只在灯下显字的密信。\n",
            "new_string": "守夜少年陆尘捡到只在灯下显字的密信，一夜读一封。\n"}))]),
        main("t3-ask", vec![say("文风照什么来？")]),
    ]})
}

#[test]
fn the_first_interactive_session_asks_at_most_twice_in_the_interview_and_never_after() {
    let Some(claude) = client("the first session in the interactive terminal") else {
        return;
    };
    if !Tmux::available() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    let folder = tmp.path().join("灯下密信");
    std::fs::create_dir_all(&folder).unwrap();
    // The client as an author has it after installing the plugin with it (`~/.claude/`) and
    // its first-run questions answered; the folder never trusted.
    std::fs::create_dir_all(home.join(".claude")).unwrap();
    write_json(
        &home.join(".claude.json"),
        &json!({"hasCompletedOnboarding": true, "theme": "dark",
            "customApiKeyResponses": {"approved": ["dummy"], "rejected": []}}),
    );
    let d = folder.to_str().unwrap().to_string();
    let run = tmp.path().join("run");
    std::fs::create_dir_all(&run).unwrap();
    let (fake, port) = start_fake_api(&run, &script(&d));
    let log = run.join("requests.jsonl");
    let path = crate::test_e2e::clean_path();
    let q = |p: &Path| format!("'{}'", p.display());
    let line = format!(
        "env -i PATH='{path}' HOME={} LANG=C.UTF-8 TERM=xterm-256color DISABLE_AUTOUPDATER=1 \
         CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1 DISABLE_TELEMETRY=1 \
         ANTHROPIC_BASE_URL=http://127.0.0.1:{port} ANTHROPIC_API_KEY=dummy NOVEL_BIN={} \
         {} --plugin-dir {}",
        q(&home),
        q(&bin()),
        q(&claude),
        q(&repo()),
    );
    let t = Tmux::start(&folder, &line);
    t.wait_for("trust this folder");
    t.keys(&["Enter"]);
    t.wait_for("for shortcuts");
    t.type_line("/novel:start 开新书");
    let first = author_turn(&t, &log, "t1-interview");
    // An author reads the questions and types the answers: seconds at the very least.
    std::thread::sleep(Duration::from_secs(3));
    t.type_line("书名：灯下密信。卖点：守夜少年陆尘捡到只在灯下显字的密信。主角陆尘。");
    let interview = author_turn(&t, &log, "t2-ask");
    std::thread::sleep(Duration::from_secs(3));
    t.type_line("行，开篇只跑主线。");
    let after = author_turn(&t, &log, "t3-ask");
    let screen = t.screen();
    drop(t);
    drop(fake);

    eprintln!(
        "interactive first session: prompts {} (slash turn), {} (interview), {} (after)",
        first.len(),
        interview.len(),
        after.len()
    );
    assert!(first.is_empty(), "the slash command's turn: {first:?}");
    assert!(
        interview.len() <= 2,
        "the interview turn asked {} times: {interview:?}",
        interview.len()
    );
    assert!(after.is_empty(), "after the interview: {after:?}\n{screen}");
    // Every scripted step ran: the book, the agents' files, the step marked.
    assert!(folder.join("world/rules.md").is_file(), "{screen}");
    assert!(folder.join("characters/active/lu-chen.md").is_file());
    let brief = std::fs::read_to_string(folder.join("brief.md")).unwrap();
    assert!(brief.contains("一夜读一封"), "{brief}");
    let user = read_json(&home.join(".claude/settings.json"));
    assert!(
        user["permissions"]["allow"]
            .as_array()
            .is_some_and(|a| a.contains(&json!(format!("Edit(/{d}/**)")))),
        "{user}"
    );
}
