//! End to end with the real client: the author's whole journey, from an empty folder to the
//! first chapter of volume 2 (issue 33). The harness is `test_e2e.rs`'s (the pinned client, the
//! plugin from this checkout, a fake Messages API playing a script) and the chapter scripts are
//! `test_e2e_paths.rs`'s [`Book`]: the scripted model follows the Markdown literally — every
//! `novel …` line it runs is copied out of the file the model has in front of it (checked), the
//! agents are dispatched as the skills say and write their files themselves.
//!
//! The journey, one author turn per client run (a new session where an author types a slash
//! command; `--resume` where they answer a question in plain words):
//!
//! 1. `/novel:start 开新书` in an empty folder: genre and the allow rules (放行设置, written with
//!    `novel permissions --write`), then the interview;
//! 2. the answers: `init` in the folder, the brief, WorldBuilder, CharacterWeaver and the opening
//!    delta merged once by the skill, the storyline — one question;
//! 3. the storyline confirmed, the style source — a preset;
//! 4. the preset; PlotArchitect's trial outline, its new character routed to CharacterWeaver;
//! 5. the outline accepted: `/novel:start` hands the trial to `/novel:continue` with the book's
//!    directory; chapters 1–3; the author confirms the trial (QUICK_START → VOL_PLANNING);
//! 6. `/novel:start`: volume 1 planned (PlotArchitect, `volume check`, the author's review,
//!    `volume open`);
//! 7. `/novel:continue 5`: chapter 4; chapter 5 revised once by the gate loop; the 5-chapter
//!    brief; chapter 6; chapter 7 paused — the author is asked;
//! 8. the author's answer: revise along the notes; chapter 7 committed;
//! 9. `/novel:continue`: chapter 8, the volume's last (two judges); VOL_REVIEW;
//! 10. `/novel:start`: the volume review, `volume close`, volume 2 planned and opened;
//! 11. `/novel:continue`: chapter 9, volume 2's first.
//!
//! It runs four times: as an SDK host runs the client (AskUserQuestion offered; the harness
//! answers it, and fails on any other permission request) and as `claude -p` (no
//! AskUserQuestion: every decision is a question in the reply, answered in the next turn) — the
//! latter also in a folder the client never trusted (the allow rules are the author's user
//! settings, honoured there too) and from a folder holding the author's other files (the book
//! made in 「当前目录/书名」, every later session started above it). Both use the default
//! permission mode and only the documented setup: the allow rules the skill writes with the
//! author's consent, and — before those exist — an answer as a slash command. Each run ends with
//! `validate` clean, `state rebuild` agreeing and `status` at volume 2, chapter 9.
#![cfg(unix)]

use std::path::{Path, PathBuf};
use std::time::Instant;

use serde_json::{Value, json};

use crate::support::*;
use crate::test_client::repo;
use crate::test_e2e::{E2e, Line, Run, RunOpts, agent_marker, bash, say, tool, turn};
use crate::test_e2e_paths::{
    Book, CONTINUE, GATE_LOOP, PAUSE, RESUME, answer, assert_no_failures, says,
};

const START: &str = "skills/start/SKILL.md";
const QUICK: &str = "skills/start/references/quick-start.md";
const PLAN: &str = "skills/start/references/vol-planning.md";
const REVIEW: &str = "skills/start/references/vol-review.md";
const TITLE: &str = "灯下密信";

/// A question as AskUserQuestion puts it (labels copied from the Markdown: checked).
struct Question {
    rel: &'static str,
    header: &'static str,
    question: &'static str,
    options: Vec<&'static str>,
}

impl Question {
    fn new(rel: &'static str, header: &'static str, question: &'static str) -> Self {
        Question {
            rel,
            header,
            question,
            options: Vec::new(),
        }
    }

    /// An option whose label the Markdown of `rel` writes (or a label from the binary's menu,
    /// `from_md` false).
    fn option(mut self, label: &'static str, from_md: bool) -> Self {
        if from_md {
            says(self.rel, label.trim_end_matches("（推荐）"));
        }
        self.options.push(label);
        self
    }

    fn tool_input(&self) -> Value {
        json!({"question": self.question, "header": self.header, "multiSelect": false,
            "options": self.options.iter().map(|l| json!({"label": l, "description": format!("{l}。")})).collect::<Vec<_>>()})
    }

    fn as_text(&self) -> String {
        let mut t = format!("【{}】{}\n", self.header, self.question);
        for (i, o) in self.options.iter().enumerate() {
            t.push_str(&format!("{}. {o}\n", i + 1));
        }
        t
    }
}

/// One run of the journey, for the time table.
struct Timed {
    prompt: String,
    secs: f64,
    requests: usize,
    calls: usize,
}

/// The journey's author and scripted model: builds each author turn's script on a [`Book`],
/// runs it, and keeps the runs.
struct Journey {
    e2e: E2e,
    b: Book,
    /// AskUserQuestion offered (an SDK host) or not (`claude -p`).
    sdk: bool,
    /// Where the author runs the client, and whether the folder is trusted.
    place: Place,
    /// The folder the client runs in: the book's, or the folder above it ([`Place::Subfolder`]).
    cwd: PathBuf,
    /// The run being built: its prompt, and the session it resumes.
    prompt: String,
    resume: Option<String>,
    /// The session of the last run.
    session: Option<String>,
    /// AskUserQuestion answers for the run being built.
    answers: Vec<&'static str>,
    runs: Vec<Run>,
    times: Vec<Timed>,
    turn_no: usize,
    /// The phase of the journey the runs being played belong to (the cost table's lines), and
    /// each played run's.
    phase: &'static str,
    phases: Vec<&'static str>,
}

impl Journey {
    fn new(e2e: E2e, cwd: &Path, sdk: bool, place: Place) -> Self {
        let book = match place {
            Place::Subfolder => cwd.join(TITLE),
            Place::Trusted | Place::Untrusted => cwd.to_path_buf(),
        };
        let mut b = Book::new(&book);
        b.at(1, "灯下", true);
        Journey {
            e2e,
            b,
            sdk,
            place,
            cwd: cwd.to_path_buf(),
            prompt: String::new(),
            resume: None,
            session: None,
            answers: Vec::new(),
            runs: Vec::new(),
            times: Vec::new(),
            turn_no: 0,
            phase: "quick start",
            phases: Vec::new(),
        }
    }

    fn d(&self) -> String {
        self.b.d.clone()
    }

    /// A unique name for a scripted turn.
    fn name(&mut self, what: &str) -> String {
        self.turn_no += 1;
        format!("t{}-{what}", self.turn_no)
    }

    /// The author types `prompt` (a slash command of `skill`) in a new session. With the book in
    /// a subfolder, `/novel:continue` carries ` 项目：<DIR>` as the hand-overs tell the author
    /// (SKILL.md 共用规则第 7 条); `/novel:start` finds the book below (`books_below`).
    fn session(&mut self, prompt: &str, skill: &'static str) {
        assert!(self.b.turns.is_empty(), "a script left unplayed");
        self.prompt = prompt.to_string();
        if self.place == Place::Subfolder && skill == "continue" {
            self.prompt.push_str(&format!(" 项目：{}", self.d()));
        }
        self.resume = None;
        self.b.when = json!({"first_user": format!("<command-name>/novel:{skill}</command-name>")});
    }

    /// The author answers in the same conversation (`--resume`) with `words`.
    fn reply(&mut self, words: &str) {
        assert!(self.b.turns.is_empty(), "a script left unplayed");
        self.prompt = words.to_string();
        self.resume = self.session.clone();
    }

    /// The start of a flow that reads the menu in the author's folder (`novel next --json`,
    /// `next`): with the book in a subfolder the menu has no project but names the book below,
    /// and the skill reads it again with `--project` (SKILL.md 第 1 步).
    /// `/novel:continue 项目：<DIR>` typed outside the book: the skill's `!` line found no
    /// project, so it reads `next` for the directory the argument names (continue/SKILL.md §一).
    fn continue_opening(&mut self) {
        if self.place == Place::Subfolder {
            let next = self.cmd(CONTINUE, r#"novel --project "<DIR>" next --json"#, &[]);
            self.run("c-next-dir", &next);
        }
    }

    fn read_menu(&mut self, what: &str, next: &Line) {
        self.run(what, next);
        if self.place == Place::Subfolder {
            let again = self.cmd(START, r#"novel --project "<DIR>" next --json"#, &[]);
            self.run(&format!("{what}-book-below"), &again);
        }
    }

    /// The main conversation runs `l`.
    fn run(&mut self, what: &str, l: &Line) {
        let name = self.name(what);
        self.b.main(&name, vec![bash(&l.run)]);
    }

    fn main(&mut self, what: &str, reply: Vec<Value>) {
        let name = self.name(what);
        self.b.main(&name, reply);
    }

    /// A line of `rel` with the book's values and `extra`.
    fn cmd(&self, rel: &str, markdown: &str, extra: &[(&str, &str)]) -> Line {
        self.b.cmd(rel, markdown, extra)
    }

    /// Plays the script built so far in one client run and checks it: every turn played, no
    /// tool call failed, nothing asked for a permission (an SDK host is asked; `-p` refuses).
    fn play(&mut self) -> &Run {
        let script = self.b.script();
        let cwd = self.cwd.clone();
        let answers = std::mem::take(&mut self.answers);
        let opts = RunOpts {
            resume: self.resume.as_deref(),
            sdk: self.sdk.then_some(&answers[..]),
            ..RunOpts::default()
        };
        let started = Instant::now();
        let run = self.e2e.run_with(&cwd, &self.prompt, &script, &opts);
        run.assert_all_turns_played(&script);
        assert_no_failures(&run, &|_| false);
        assert!(
            run.asked.is_empty(),
            "permission requests in {:?}: {:#?}\n{}",
            self.prompt,
            run.asked,
            run.report()
        );
        let denied = &run.result()["permission_denials"];
        assert!(
            denied.is_null() || denied.as_array().is_some_and(Vec::is_empty),
            "{:?}: permission denials {denied}\n{}",
            self.prompt,
            run.report()
        );
        assert_eq!(
            run.questions.len(),
            answers.len(),
            "AskUserQuestion answers left over in {:?}",
            self.prompt
        );
        if self.resume.is_some() {
            assert_eq!(
                run.session_id(),
                *self.session.as_ref().unwrap(),
                "not the same conversation"
            );
        }
        let offered = run.messages_requests().iter().any(|r| {
            r["tools"]
                .as_array()
                .into_iter()
                .flatten()
                .any(|t| t["name"] == "AskUserQuestion")
        });
        assert_eq!(offered, self.sdk, "AskUserQuestion offered: {offered}");
        self.times.push(Timed {
            prompt: self.prompt.replace('\n', " ").chars().take(24).collect(),
            secs: started.elapsed().as_secs_f64(),
            requests: run.messages_requests().len(),
            calls: run.calls.len(),
        });
        self.session = Some(run.session_id());
        self.runs.push(run);
        self.phases.push(self.phase);
        self.runs.last().unwrap()
    }

    /// A decision point: with AskUserQuestion the host answers `labels`; without it the
    /// question ends the turn (SKILL.md 共用规则第 3 条) and the author answers `words` in the
    /// next — as a slash command when `slash` (no allow rules yet), else in plain words.
    fn ask(&mut self, what: &str, questions: &[Question], labels: &[&'static str], words: &str) {
        says(START, "**没有 AskUserQuestion 工具时**");
        assert_eq!(questions.len(), labels.len());
        if self.sdk {
            let input = json!({"questions": questions.iter().map(Question::tool_input).collect::<Vec<_>>()});
            self.main(what, vec![tool("AskUserQuestion", input)]);
            self.answers.extend_from_slice(labels);
        } else {
            let mut text = String::new();
            for q in questions {
                text.push_str(&q.as_text());
            }
            text.push_str("直接回一句话就行。");
            let name = self.name(what);
            self.b.end(&name, &text);
            self.play();
            self.reply(words);
        }
    }

    /// The main conversation ends the turn with `text` (an open question, or a report).
    fn end(&mut self, what: &str, text: &str) {
        let name = self.name(what);
        self.b.end(&name, text);
        self.play();
    }

    /// An Agent call as SKILL.md 共用规则第 4 条 writes it (no 章节 when the task has none).
    fn dispatch(&self, agent: &str, task: &str, volume: Option<u32>, req: &str) -> Value {
        let mut prompt = format!("项目目录：{}\n任务：{task}\n", self.d());
        if let Some(v) = volume {
            prompt.push_str(&format!("卷：{v}\n"));
        }
        prompt.push_str(&format!("要求：{req}"));
        tool(
            "Agent",
            json!({"subagent_type": format!("novel:{agent}"), "description": task, "prompt": prompt}),
        )
    }

    /// An agent's turn (matched by its body and `任务：task`).
    fn agent(&mut self, agent: &str, task: &str, what: &str, reply: Vec<Value>) {
        let name = self.name(what);
        self.b.turns.push(json!({"name": name,
            "when": {"system": agent_marker(agent), "first_user": format!("任务：{task}\n")},
            "reply": reply}));
    }

    /// CharacterWeaver's writing turn: the state version it read is captured for its delta.
    fn weaver_writes(&mut self, task: &str, what: &str, reply: Vec<Value>) {
        self.agent("character-weaver", task, what, reply);
        let t = self.b.turns.last_mut().unwrap();
        t["capture"] = json!({"cwbase": "\"state_version\": ([0-9]+)"});
    }

    fn agent_done(&self, agent: &str, files: &[&str], data: Value) -> Value {
        say(
            &json!({"status": "completed", "agent": agent, "files": files, "data": data})
                .to_string(),
        )
    }

    /// Read, then Write (the client refuses to overwrite a file not read first).
    fn rewrite(&self, rel: &str, content: &str) -> Vec<Value> {
        vec![self.b.read(rel), self.b.write(rel, content)]
    }
}

// ---- what the agents write ---------------------------------------------------------------------

fn rules_json() -> String {
    serde_json::to_string_pretty(&json!({"rules": [
        {"id": "W-001", "category": "power_system", "rule": "境界自低到高：炼气、筑基、金丹；低一个大境界者正面硬拼必败", "constraint_type": "hard", "exceptions": [], "introduced_chapter": 1, "last_verified": null},
        {"id": "W-002", "category": "golden_finger", "rule": "密信上的字只在灯下显形，每夜只能读一次，读第二次字迹就烧掉", "constraint_type": "hard", "exceptions": [], "introduced_chapter": 1, "last_verified": null},
        {"id": "W-003", "category": "society", "rule": "城北废墟入夜禁行，巡夜人见人即拿", "constraint_type": "soft", "exceptions": ["持巡夜令者"], "introduced_chapter": 1, "last_verified": null}
    ]})).unwrap()
}

fn character(id: &str, name: &str, role: &str, contract: &str) -> String {
    let cid = format!("C-{}-001", id.replace('-', "").to_uppercase());
    let mut v = json!({"id": id, "display_name": name, "aliases": [], "role": role,
        "speech_patterns": "话少，回话只两三个字", "goal": "查清密信是谁写的", "motivation": "信上有父亲的笔迹",
        "inner_conflict": "想活命，又放不下旧案",
        "contracts": [{"id": cid, "type": "personality", "rule": contract, "valid_from_chapter": 1, "valid_until": null}]});
    // A real profile's length (`texts::character_detail`).
    for (k, x) in crate::texts::character_detail(name).as_object().unwrap() {
        v[k] = x.clone();
    }
    serde_json::to_string_pretty(&v).unwrap()
}

/// A character's opening state at chapter `at`, based on the state version the scripted
/// CharacterWeaver read (`{{cwbase}}`, captured from its Read of the state file).
fn opening_delta(at: u32, who: &str, place: &str, item: &str) -> String {
    serde_json::to_string_pretty(&json!({"chapter": at, "base_state_version": "{{cwbase}}", "storyline_id": "main_arc", "ops": [
        {"op": "set", "path": format!("characters.{who}.location"), "value": place},
        {"op": "add", "path": format!("characters.{who}.inventory"), "value": item}]}))
    .unwrap()
    .replace("\"{{cwbase}}\"", "{{cwbase}}")
}

/// Volume `v`'s outline with blocks for `chapters` (every one of the seven fields).
fn outline(v: u32, chapters: std::ops::RangeInclusive<u32>) -> String {
    let mut t = format!("# 第 {v} 卷 · 灯下\n\n本卷主题：陆尘一封一封读完密信，查出写信的人。\n");
    for n in chapters {
        t.push_str(&format!(
            "\n## 第{n}章 灯下{n}\n- 故事线：main_arc\n- POV：陆尘\n- 地点：城北废墟\n{}\
             - 伏笔：无\n- 状态变化：陆尘 拿到第{n}封密信\n",
            crate::texts::outline_lines(n)
        ));
    }
    t.push_str("\n## 卷末钩子\n最后一封密信上写着陆尘自己的名字。\n");
    t
}

fn contract(n: u32) -> String {
    let mut v = json!({"chapter": n, "storyline_id": "main_arc",
        "objectives": [{"id": format!("OBJ-{n:03}-1"), "type": "plot", "required": true,
            "description": format!("陆尘夜探城北废墟，在巡夜人来之前读完第{n}封密信")}],
        "acceptance_criteria": [format!("OBJ-{n:03}-1 在正文中明确体现"), "不违反 W-002".to_string()]});
    // A real contract's length (`texts::contract_detail`).
    for (k, x) in crate::texts::contract_detail(n).as_object().unwrap() {
        match (k.as_str(), v[k].as_array_mut()) {
            ("objectives", Some(objectives)) => {
                objectives.extend(x.as_array().into_iter().flatten().cloned());
            }
            _ => v[k] = x.clone(),
        }
    }
    serde_json::to_string_pretty(&v).unwrap()
}

fn schedule(v: u32, range: [u32; 2]) -> String {
    serde_json::to_string_pretty(
        &json!({"volume": v, "chapter_range": range, "volume_theme": "灯下",
        "active_storylines": [{"storyline_id": "main_arc", "volume_role": "primary",
            "target_chapters": range[1] - range[0] + 1, "arc_goal": "陆尘读完这一卷的密信"}],
        "interleaving_pattern": {"strategy": "primary_dominant", "primary_max_consecutive": 10,
            "secondary_min_appearance": "every_8_chapters"},
        "convergence_events": [], "dormant_storylines": [], "newly_activated": []}),
    )
    .unwrap()
}

fn foreshadowing(v: u32) -> String {
    serde_json::to_string_pretty(&json!({"volume": v, "foreshadowing": []})).unwrap()
}

// ---- the journey ----------------------------------------------------------------------------------

/// Turns 1–5: the quick start, the trial handed to `/novel:continue`, the author's confirmation.
fn quick_start(j: &mut Journey) {
    let d = j.d();
    let ask_genre = || {
        Question::new(QUICK, "题材", "这本书写什么题材？")
            .option("玄幻/仙侠", true)
            .option("都市", true)
            .option("悬疑/灵异", true)
            .option("言情（现言/古言）", true)
    };
    let ask_allow = || {
        Question::new(
            START,
            "放行",
            "把 novel 的命令、插件文件的读取、书目录里的写入加入本目录的放行规则？",
        )
        .option("写入放行设置（推荐）", true)
        .option("不写，每一步都问我", true)
    };
    says(
        QUICK,
        "`next` 的 `cwd_empty` 为 true（作者为这本书开了一个空目录）时就是当前目录 `cwd`",
    );

    // 1. /novel:start 开新书: the menu's create_project (the words map to it), the flow file.
    j.session("/novel:start 开新书", "start");
    let next = j.cmd(START, "novel next --json", &[]);
    j.run("next", &next);
    j.main(
        "read-quick-start",
        vec![tool("Read", json!({"file_path": repo().join(QUICK)}))],
    );
    let allow = j.cmd(START, "novel permissions --write --json", &[]);
    let interview = "开书访谈，请一次答完（答不上来写「待定」）：\n1. 书名\n2. 一句话卖点\n3. 主角\n4. 金手指或力量体系\n5. 黄金三章\n6. 读者和对标\n7. 禁区";
    says(
        QUICK,
        "**再做一次开书访谈**，一条消息列出下面的问题，请作者一次答完",
    );
    let answers = "1. 书名：灯下密信\n2. 卖点：守夜少年陆尘捡到只在灯下显字的密信，一夜读一封，读出一桩旧案。\n3. 主角陆尘，想查清父亲的死，挡在前面的是巡夜人。\n4. 密信每夜只能读一次。\n5. 第 1 章捡信，第 3 章第一次读出真相。\n6. 男频，对标《诡秘之主》。\n7. 不写虐杀。";
    if j.sdk {
        j.ask(
            "ask-genre-allow",
            &[ask_genre(), ask_allow()],
            &["玄幻/仙侠", "写入放行设置（推荐）"],
            "",
        );
        j.run("permissions", &allow);
        j.end("interview", interview);
        let first = &j.runs[0];
        let n = answer(first, &next, "", 0);
        assert_eq!(n["data"]["project"], Value::Null, "{n}");
        assert_eq!(n["data"]["cwd_empty"], j.place != Place::Subfolder, "{n}");
        assert_eq!(
            n["data"]["permissions"]["missing"].as_array().map(Vec::len),
            Some(4),
            "{n}"
        );
        j.reply(answers);
    } else {
        // Without AskUserQuestion the questions (and the open ones) are the reply; before the
        // allow rules exist the author answers with the slash command (README 权限).
        let text = format!(
            "{}{}{interview}",
            ask_genre().as_text(),
            ask_allow().as_text()
        );
        j.end("ask-genre-allow-interview", &text);
        j.reply(&format!("/novel:start 玄幻/仙侠。写入放行设置。{answers}"));
        // SKILL.md 共用规则第 3 条: the answer to the last question; the flow's query again.
        j.run("next-again", &next);
        j.run("permissions", &allow);
    }

    // 2. The answers: the book in this folder, the brief, world, characters, the storyline.
    let init = j.cmd(
        QUICK,
        r#"novel init "<DIR>" --title "<TEXT>" --genre "<TEXT>" --json"#,
        &[("<TEXT>", TITLE), ("<TEXT>", "玄幻")],
    );
    j.run("init", &init);
    if j.place == Place::Subfolder {
        // quick-start.md: the book not in the session's folder gets its own settings too.
        says(
            QUICK,
            "用 SKILL.md「放行设置」的第二行给 `<DIR>` 也写一份本书的设置",
        );
        let own = j.cmd(
            START,
            r#"novel --project "<DIR>" permissions --write --json"#,
            &[],
        );
        j.run("book-settings", &own);
    }
    let brief = format!("{d}/brief.md");
    j.main(
        "read-brief",
        vec![tool("Read", json!({"file_path": brief}))],
    );
    j.main("edit-brief", vec![tool("Edit", json!({"file_path": brief, "old_string": "## 一句话卖点\n",
        "new_string": "## 一句话卖点\n\n守夜少年陆尘捡到只在灯下显字的密信，一夜读一封，读出一桩旧案。\n"}))]);
    // world
    says(QUICK, "任务：轻量");
    j.main(
        "dispatch-world",
        vec![j.dispatch(
            "world-builder",
            "轻量",
            None,
            "依据 brief.md 写核心设定，外加 3–5 条可验证的规则（W-001 起）。",
        )],
    );
    let wb = "agents/world-builder.md";
    let wb_context = j.cmd(
        wb,
        r#"novel --project "<DIR>" context world-builder --chapter <N>"#,
        &[],
    );
    let wb_context = wb_context.run.replace(" --chapter 1", "");
    j.agent(
        "world-builder",
        "轻量",
        "wb-context",
        vec![bash(&wb_context)],
    );
    let mut writes = j.rewrite("world/rules.json", &rules_json());
    writes.extend(j.rewrite("world/rules.md", &crate::texts::world_doc()));
    j.agent("world-builder", "轻量", "wb-write", writes);
    let wb_validate = j.cmd(wb, r#"novel --project "<DIR>" validate "<DIR>/world/rules.json" "<DIR>/storylines/storylines.json" --json"#, &[]);
    j.agent(
        "world-builder",
        "轻量",
        "wb-validate",
        vec![bash(&wb_validate.run)],
    );
    let done = j.agent_done(
        "world-builder",
        &["world/rules.json", "world/rules.md"],
        json!({}),
    );
    j.agent("world-builder", "轻量", "wb-done", vec![done]);
    let world_validate = j.cmd(
        QUICK,
        r#"novel --project "<DIR>" validate "<DIR>/world/rules.json" --json"#,
        &[],
    );
    j.run("validate-world", &world_validate);
    // characters: CharacterWeaver writes the opening delta; the skill merges it, once.
    says(QUICK, "任务：初始化");
    j.main(
        "dispatch-characters",
        vec![j.dispatch(
            "character-weaver",
            "初始化",
            None,
            "主角 + 1 个配角 + 关系。",
        )],
    );
    let cw = "agents/character-weaver.md";
    let cw_context = j
        .cmd(
            cw,
            r#"novel --project "<DIR>" context character-weaver --chapter <N>"#,
            &[],
        )
        .run
        .replace(" --chapter 1", "");
    let opening = "staging/candidates/chapter-000-delta.json";
    j.agent(
        "character-weaver",
        "初始化",
        "cw-context",
        vec![bash(&cw_context), j.b.read("state/current-state.json")],
    );
    let mut writes = vec![
        j.b.write(
            "characters/active/lu-chen.json",
            &character(
                "lu-chen",
                "陆尘",
                "protagonist",
                "自己受辱时当场不发作，事后单独了结",
            ),
        ),
        j.b.write(
            "characters/active/su-wan.json",
            &character("su-wan", "苏婉", "supporting", "嘴硬心软，遇事先护着陆尘"),
        ),
    ];
    writes.extend(j.rewrite("characters/relationships.json", &serde_json::to_string_pretty(&json!({"relationships": [
        {"from": "lu-chen", "to": "su-wan", "type": "青梅", "intensity": 60, "description": "一起长大", "since_chapter": 1, "status": "active"}]})).unwrap()));
    writes.push(j.b.write(
        opening,
        &opening_delta(0, "lu-chen", "城北守夜亭", "守灯钥匙"),
    ));
    j.weaver_writes("初始化", "cw-write", writes);
    let cw_validate = j.cmd(
        cw,
        r#"novel --project "<DIR>" ops validate "<FILE>" --json"#,
        &[("<FILE>", &format!("{d}/{opening}"))],
    );
    let cw_chars = j.cmd(
        cw,
        r#"novel --project "<DIR>" validate "<DIR>/characters" --json"#,
        &[],
    );
    j.agent(
        "character-weaver",
        "初始化",
        "cw-validate",
        vec![bash(&cw_validate.run), bash(&cw_chars.run)],
    );
    let done = j.agent_done(
        "character-weaver",
        &[
            "characters/active/lu-chen.json",
            "characters/active/su-wan.json",
            "characters/relationships.json",
            opening,
        ],
        json!({}),
    );
    j.agent("character-weaver", "初始化", "cw-done", vec![done]);
    let file = format!("{d}/{opening}");
    let merge = [
        j.cmd(
            START,
            r#"novel --project "<DIR>" ops validate "<FILE>" --json"#,
            &[("<FILE>", &file)],
        ),
        j.cmd(
            START,
            r#"novel --project "<DIR>" ops apply "<FILE>" --manual --json"#,
            &[("<FILE>", &file)],
        ),
        j.cmd(START, r#"novel --project "<DIR>" memory init --json"#, &[]),
    ];
    for (k, l) in merge.iter().enumerate() {
        j.run(&format!("merge-{k}"), l);
    }
    // storylines: the slug into pov_characters (only this step writes it).
    says(QUICK, "`pov_characters` 填主角的 slug（只有这一步写它");
    let lines = format!("{d}/storylines/storylines.json");
    j.main(
        "read-storylines",
        vec![tool("Read", json!({"file_path": lines}))],
    );
    j.main("edit-storylines", vec![tool("Edit", json!({"file_path": lines,
        "old_string": "\"pov_characters\": [],", "new_string": "\"pov_characters\": [\"lu-chen\"],"}))]);
    says(QUICK, "然后用文字问作者：开篇只跑这一条主线行不行？");
    j.end("ask-storylines", "开篇只跑这一条主线（陆尘查密信）行不行？");
    {
        let run = j.runs.last().unwrap();
        let made = answer(run, &init, "", 0);
        assert_eq!(
            made["data"]["root"],
            d.as_str(),
            "the book is the empty folder: {made}"
        );
        let merged = answer(run, &merge[1], "", 0);
        assert_eq!(merged["data"]["state_version"], 1, "{merged}");
    }

    // 3. The storyline confirmed; the style source.
    j.reply("行，开篇只跑主线。");
    let validate_lines = j.cmd(
        QUICK,
        r#"novel --project "<DIR>" validate "<DIR>/storylines/storylines.json" --json"#,
        &[],
    );
    j.run("validate-storylines", &validate_lines);
    let mark = j.cmd(
        QUICK,
        r#"novel --project "<DIR>" quickstart done storylines --json"#,
        &[],
    );
    j.run("mark-storylines", &mark);
    let ask_style = || {
        Question::new(QUICK, "文风来源", "文风照什么来？")
            .option("我有自己写的样章（推荐）", false)
            .option("仿照喜欢的作者", false)
            .option("先用预设风格", false)
    };
    says(QUICK, "**我有自己写的样章**（推荐）");
    says(QUICK, "**先用预设风格**");
    says(QUICK, "没有 AskUserQuestion 时，把下面的预设表一并列出");
    if j.sdk {
        j.ask("ask-style", &[ask_style()], &["先用预设风格"], "");
        j.end("ask-preset", "预设：qingsong-youmo、rexue-shaonian、xini-yanqing、lengjun-xuanyi、gufeng-quanmou。推荐 rexue-shaonian，回一个名字就行。");
        j.reply("rexue-shaonian");
    } else {
        j.end("ask-style", &format!("{}或者回一个预设名：rexue-shaonian（推荐）、qingsong-youmo、xini-yanqing、lengjun-xuanyi、gufeng-quanmou。", ask_style().as_text()));
        j.reply("先用预设：rexue-shaonian");
    }

    // 4. The preset; the trial outline, and its new character routed (共用规则第 4 条).
    let preset = j.cmd(
        QUICK,
        r#"novel --project "<DIR>" style preset <SLUG> --json"#,
        &[("<SLUG>", "rexue-shaonian")],
    );
    j.run("preset", &preset);
    let qs = j.cmd(QUICK, r#"novel --project "<DIR>" quickstart --json"#, &[]);
    j.run("quickstart-style", &qs);
    says(QUICK, "任务：试写大纲");
    j.main(
        "dispatch-outline",
        vec![j.dispatch(
            "plot-architect",
            "试写大纲",
            Some(1),
            "只写第 1–3 章的大纲块、对应的 L3 章节契约和最小的故事线调度。",
        )],
    );
    let pa = "agents/plot-architect.md";
    let pa_context = j
        .cmd(
            pa,
            r#"novel --project "<DIR>" context plot-architect --chapter <N> --volume <V>"#,
            &[("<V>", "1")],
        )
        .run
        .replace(" --chapter 1", "");
    j.agent(
        "plot-architect",
        "试写大纲",
        "pa-context",
        vec![bash(&pa_context)],
    );
    let mut writes = vec![j.b.write("volumes/vol-01/outline.md", &outline(1, 1..=3))];
    for n in 1..=3 {
        writes.push(j.b.write(
            &format!("volumes/vol-01/chapter-contracts/chapter-{n:03}.json"),
            &contract(n),
        ));
    }
    writes.push(j.b.write(
        "volumes/vol-01/storyline-schedule.json",
        &schedule(1, [1, 8]),
    ));
    writes.push(j.b.write("volumes/vol-01/foreshadowing.json", &foreshadowing(1)));
    j.agent("plot-architect", "试写大纲", "pa-write", writes);
    let pa_validate = j.cmd(pa, r#"novel --project "<DIR>" validate --json"#, &[]);
    j.agent(
        "plot-architect",
        "试写大纲",
        "pa-validate",
        vec![bash(&pa_validate.run)],
    );
    let done = j.agent_done(
        "plot-architect",
        &["volumes/vol-01/outline.md"],
        json!({"new_characters": ["周衍（巡夜人头目，第 2 章登场）"], "contract_changes": []}),
    );
    j.agent("plot-architect", "试写大纲", "pa-done", vec![done]);
    new_character(
        j,
        "zhou-yan",
        "周衍",
        "周衍（巡夜人头目，第 2 章登场）",
        0,
        "城北巡夜亭",
        "巡夜令",
    );
    says(QUICK, "请他用文字提修改意见，结束这一轮");
    j.end("ask-outline", "第1章 灯下1｜陆尘夜探废墟，巡夜人逼近\n第2章 灯下2｜……\n第3章 灯下3｜……\n有要改的地方请直接说。");

    // 5. The outline accepted: the trial handed to /novel:continue with the book's directory.
    j.phase = "trial (chapters 1-3)";
    j.reply("大纲可以，开始试写。");
    j.run("quickstart-outline", &qs);
    says(QUICK, "参数写章数和书的目录：`3 项目：<DIR>`");
    j.main(
        "hand-over",
        vec![tool(
            "Skill",
            json!({"skill": "novel:continue", "args": format!("3 项目：{d}")}),
        )],
    );
    let cont_next = j.cmd(CONTINUE, r#"novel --project "<DIR>" next --json"#, &[]);
    j.run("continue-next", &cont_next);
    for (n, key) in [(1, true), (2, false), (3, false)] {
        chapter(j, n, key, Gate::Pass);
    }
    let status = j.cmd(QUICK, r#"novel --project "<DIR>" status --json"#, &[]);
    j.run("trial-status", &status);
    let confirm = Question::new(QUICK, "试写确认", "试写的三章怎么样？")
        .option("满意，进入第 1 卷规划（推荐）", true)
        .option("调整文风", true)
        .option("调整设定或大纲", true)
        .option("换个方向重开", true);
    j.ask(
        "ask-confirm",
        &[confirm],
        &["满意，进入第 1 卷规划（推荐）"],
        "满意，进入第 1 卷规划",
    );
    let done = j.cmd(
        QUICK,
        r#"novel --project "<DIR>" quickstart done confirm --json"#,
        &[],
    );
    j.run("confirm", &done);
    let next_dir = j.cmd(START, r#"novel --project "<DIR>" next --json"#, &[]);
    j.run("next-after-confirm", &next_dir);
    j.end(
        "trial-done",
        "试写三章已提交，进入第 1 卷规划：下次输入 /novel:start。",
    );
    let run = j.runs.last().unwrap();
    let cp = read_json(&Path::new(&d).join(".checkpoint.json"));
    assert_eq!(cp["orchestrator_state"], "VOL_PLANNING", "{}", run.report());
    assert_eq!(cp["last_completed_chapter"], 3);
}

/// SKILL.md 共用规则第 4 条 after PlotArchitect named a new character: CharacterWeaver
/// (任务：新增角色) writes the profile and its opening state as a delta at the state's chapter
/// `at`; the skill validates and merges it once, then `memory init`.
fn new_character(
    j: &mut Journey,
    slug: &str,
    name: &str,
    who: &str,
    at: u32,
    place: &str,
    item: &str,
) {
    let d = j.d();
    says(
        START,
        "`data.new_characters` 不为空，派 `novel:character-weaver`\n   `任务：新增角色`",
    );
    j.main(
        &format!("dispatch-{slug}"),
        vec![j.dispatch("character-weaver", "新增角色", None, who)],
    );
    let cw = "agents/character-weaver.md";
    let context = j.cmd(
        cw,
        r#"novel --project "<DIR>" context character-weaver --chapter <N>"#,
        &[],
    );
    let context = context.run.replace(&format!(" --chapter {}", j.b.n), "");
    j.agent(
        "character-weaver",
        "新增角色",
        &format!("{slug}-context"),
        vec![bash(&context), j.b.read("state/current-state.json")],
    );
    let rel = format!("staging/candidates/chapter-{at:03}-delta.json");
    let mut writes = vec![j.b.write(
        &format!("characters/active/{slug}.json"),
        &character(slug, name, "antagonist", "见人先拿，拿了再问"),
    )];
    if j.b.dir.join(&rel).exists() {
        writes.push(j.b.read(&rel));
    }
    writes.push(j.b.write(&rel, &opening_delta(at, slug, place, item)));
    j.weaver_writes("新增角色", &format!("{slug}-write"), writes);
    let file = format!("{d}/{rel}");
    let validate = j.cmd(
        cw,
        r#"novel --project "<DIR>" ops validate "<FILE>" --json"#,
        &[("<FILE>", &file)],
    );
    j.agent(
        "character-weaver",
        "新增角色",
        &format!("{slug}-validate"),
        vec![bash(&validate.run)],
    );
    let done = j.agent_done(
        "character-weaver",
        &[&format!("characters/active/{slug}.json"), &rel],
        json!({}),
    );
    j.agent(
        "character-weaver",
        "新增角色",
        &format!("{slug}-done"),
        vec![done],
    );
    for (k, m) in [
        r#"novel --project "<DIR>" ops validate "<FILE>" --json"#,
        r#"novel --project "<DIR>" ops apply "<FILE>" --manual --json"#,
        r#"novel --project "<DIR>" memory init --json"#,
    ]
    .iter()
    .enumerate()
    {
        let l = j.cmd(START, m, &[("<FILE>", &file)]);
        j.run(&format!("{slug}-merge-{k}"), &l);
    }
}

/// How the gate goes for a chapter.
#[derive(Clone, Copy, PartialEq)]
enum Gate {
    Pass,
    /// Revise once (gate-loop.md 修订), then pass.
    Revise,
    /// Pause (the author decides in the next turn).
    Pause,
}

/// SKILL.md §二 for chapter `n`: begin, the agents, the checks, the gate (and a revision round),
/// commit — or, at a pause, the question (gate-loop.md 暂停, pause-decision.md §2–3).
fn chapter(j: &mut Journey, n: u32, key: bool, gate: Gate) {
    j.b.at(n, &format!("灯下{n}"), key);
    let begin = j.cmd(
        CONTINUE,
        r#"novel --project "<DIR>" chapter begin <N> --json"#,
        &[],
    );
    let tag = format!("c{n}");
    // SKILL.md §二 step 1: begin and the writer in one message.
    let d = j.b.dispatch("chapter-writer", "初稿", None, false);
    j.b.main(&format!("{tag}-begin-writer"), vec![bash(&begin.run), d]);
    j.b.capture_next(json!({"token": "\"token\":\"([0-9a-f]+)\""}));
    j.b.writer("初稿", &tag, 0);
    let first = match gate {
        Gate::Pass => 4.2,
        Gate::Revise => 3.2,
        Gate::Pause => 2.5,
    };
    j.b.steps_3_to_9(&tag, None, ("屋里一灯如豆", "屋里只点着一盏油灯"), first);
    match gate {
        Gate::Pass => {}
        Gate::Revise => revise_once(j, &tag),
        Gate::Pause => pause(j, &tag),
    }
    // A pass is committed by the gate's own call (`--commit`).
}

/// gate-loop.md 修订, one round, to a pass.
fn revise_once(j: &mut Journey, tag: &str) {
    says(CONTINUE, "| `revise` | 读 `gate-loop.md`「修订」");
    j.main(
        &format!("{tag}-read-gate-loop"),
        vec![tool("Read", json!({"file_path": repo().join(GATE_LOOP)}))],
    );
    let notes = j.cmd(
        GATE_LOOP,
        r#"novel --project "<DIR>" revision notes --chapter <N> --json"#,
        &[],
    );
    j.run(&format!("{tag}-notes"), &notes);
    let revising = j.b.stage(GATE_LOOP, "revising");
    let d = j.b.dispatch("chapter-writer", "修订", None, true);
    j.b.main(
        &format!("{tag}-revising-writer"),
        vec![bash(&revising.run), d],
    );
    let r1 = format!("{tag}-r1");
    j.b.writer("修订", &r1, 0);
    j.b.steps_3_to_9(
        &r1,
        Some("这是修订稿，摘要、状态增量、故事线记忆都按新稿重写"),
        ("他又读了一遍，认出了笔迹。", "他又读了一遍，认得这笔迹。"),
        4.2,
    );
}

/// gate-loop.md 暂停 → pause-decision.md §2–3: the draft's length, the menu read, the
/// evaluation read, the question.
fn pause(j: &mut Journey, tag: &str) {
    says(
        CONTINUE,
        "| `pause` | 本批停下，读 gate-loop.md「暂停」问作者。",
    );
    let count = j.cmd(
        CONTINUE,
        r#"novel --project "<DIR>" count --chapter <N> --json"#,
        &[],
    );
    j.run(&format!("{tag}-count"), &count);
    j.main(
        &format!("{tag}-read-gate-loop"),
        vec![tool("Read", json!({"file_path": repo().join(GATE_LOOP)}))],
    );
    j.main(
        &format!("{tag}-read-pause"),
        vec![tool("Read", json!({"file_path": repo().join(PAUSE)}))],
    );
    let eval = j.b.read(&format!(
        "staging/evaluations/chapter-{}-eval.json",
        j.b.nnn()
    ));
    j.main(&format!("{tag}-read-eval"), vec![eval]);
    let menu = Question::new(PAUSE, "暂停章", "第 7 章停在门控之后，怎么办？")
        .option("按意见改写（推荐）", false)
        .option("推倒重写", false)
        .option("接受现稿", false)
        .option("我自己来改", false);
    for o in [
        "**按意见改写**",
        "**推倒重写**",
        "**接受现稿**",
        "**我自己来改**",
    ] {
        says(PAUSE, o);
    }
    says(PAUSE, "有什么想法一并告诉我（可以不说）。");
    if j.sdk {
        j.ask(&format!("{tag}-ask"), &[menu], &["按意见改写（推荐）"], "");
        j.end(
            &format!("{tag}-ask-words"),
            "第7章 2.5 ⏸️暂停。有什么想法一并告诉我（可以不说）。",
        );
    } else {
        let text = format!(
            "第7章 2.5 ⏸️暂停，等你决定：\n{}有什么想法一并告诉我（可以不说）。",
            menu.as_text()
        );
        j.end(&format!("{tag}-ask"), &text);
    }
}

/// Turn 6: `/novel:start` → vol-planning.md for volume `v` (chapters `range`), from the menu (or,
/// after a volume review, from its step 4); ends with the volume open.
fn plan_volume(j: &mut Journey, v: u32, range: [u32; 2], from_menu: bool) {
    let d = j.d();
    let vv = v.to_string();
    if from_menu {
        let next = j.cmd(START, "novel next --json", &[]);
        j.read_menu("plan-next", &next);
        let menu = Question::new(START, "下一步", "第 1 卷待规划，下一步做什么？")
            .option("规划第 1 卷（推荐）", false)
            .option("更新设定", false)
            .option("导入研究资料", false)
            .option("质量回顾", false);
        j.ask(
            "plan-menu",
            &[menu],
            &["规划第 1 卷（推荐）"],
            "规划第 1 卷",
        );
        j.main(
            "read-plan",
            vec![tool("Read", json!({"file_path": repo().join(PLAN)}))],
        );
        let status = j.cmd(PLAN, r#"novel --project "<DIR>" status --json"#, &[]);
        j.run("plan-status", &status);
    } else {
        j.main(
            "read-plan",
            vec![tool("Read", json!({"file_path": repo().join(PLAN)}))],
        );
        let close = j.cmd(PLAN, r#"novel --project "<DIR>" volume close --json"#, &[]);
        j.run("close", &close);
        let next = j.cmd(PLAN, r#"novel --project "<DIR>" next --json"#, &[]);
        j.run("close-next", &next);
    }
    // §2: the material first (the previous volume's review; the brief for volume 1).
    says(
        PLAN,
        "上一卷的 `volumes/vol-NN/review.md`（NN = `<V>` − 1）",
    );
    says(PLAN, "`brief.md` 的核心冲突与卖点（第 1 卷没有上卷回顾");
    let material = if v == 1 {
        j.b.read("brief.md")
    } else {
        j.b.read(&format!("volumes/vol-{:02}/review.md", v - 1))
    };
    j.main("plan-material", vec![material]);
    // §2: what the volume is for.
    let direction = Question::new(PLAN, "本卷方向", "这一卷主要写什么？")
        .option("陆尘读完这一卷的密信，写信的人露面（推荐）", false)
        .option("先写苏婉的家事", false);
    let length = Question::new(PLAN, "篇幅", "这一卷写多长？")
        .option("约 30 章", true)
        .option("约 40 章", true)
        .option("约 50 章", true);
    says(PLAN, "「篇幅」：「约 30 章」/「约 40 章」/「约 50 章」");
    // The author writes their own length (AskUserQuestion's 「其他」, or in words): a short
    // volume keeps the journey's runtime modest.
    let (pages, words): (&'static str, &'static str) = if v == 1 {
        ("8 章", "陆尘读完这一卷的密信，写信的人露面；8 章")
    } else {
        ("2 章", "陆尘读完这一卷的密信，写信的人露面；2 章")
    };
    j.ask(
        "plan-ask",
        &[direction, length],
        &["陆尘读完这一卷的密信，写信的人露面（推荐）", pages],
        words,
    );
    // §3: PlotArchitect.
    says(PLAN, "任务：卷规划");
    let req = if v == 1 {
        "本卷方向：陆尘读完这一卷的密信\n篇幅：8 章\n已完成到第 3 章。\n第 1–3 章已经写完，保留它们的大纲块与章节契约不动，从第 4 章接着排，第 4 章的前置条件接第 3 章的实际结果。"
    } else {
        "本卷方向：写信的人露面\n篇幅：2 章\n上卷的下卷铺垫建议：卷首让写信的人露一次面\n已完成到第 8 章。"
    };
    j.main(
        "plan-dispatch",
        vec![j.dispatch("plot-architect", "卷规划", Some(v), req)],
    );
    let pa = "agents/plot-architect.md";
    let start = range[0];
    let ctx = j.cmd(
        pa,
        r#"novel --project "<DIR>" context plot-architect --chapter <N> --volume <V>"#,
        &[("<V>", &vv), ("<N>", &start.to_string())],
    );
    j.agent(
        "plot-architect",
        "卷规划",
        "plan-pa-context",
        vec![bash(&ctx.run)],
    );
    let vdir = format!("volumes/vol-{v:02}");
    let mut writes = Vec::new();
    let from = if v == 1 { 4 } else { range[0] };
    if v == 1 {
        writes.extend(j.rewrite(&format!("{vdir}/outline.md"), &outline(1, 1..=range[1])));
        writes.extend(j.rewrite(
            &format!("{vdir}/storyline-schedule.json"),
            &schedule(1, range),
        ));
        writes.extend(j.rewrite(&format!("{vdir}/foreshadowing.json"), &foreshadowing(1)));
    } else {
        writes.push(j.b.write(
            &format!("{vdir}/outline.md"),
            &outline(v, range[0]..=range[1]),
        ));
        writes.push(j.b.write(
            &format!("{vdir}/storyline-schedule.json"),
            &schedule(v, range),
        ));
        writes.push(j.b.write(&format!("{vdir}/foreshadowing.json"), &foreshadowing(v)));
    }
    for n in from..=range[1] {
        writes.push(j.b.write(
            &format!("{vdir}/chapter-contracts/chapter-{n:03}.json"),
            &contract(n),
        ));
    }
    j.agent("plot-architect", "卷规划", "plan-pa-write", writes);
    let checks: Vec<Line> = [
        r#"novel --project "<DIR>" volume check <V> --json"#,
        r#"novel --project "<DIR>" check continuity --volume <V> --json"#,
        r#"novel --project "<DIR>" validate --json"#,
    ]
    .iter()
    .map(|m| j.cmd(pa, m, &[("<V>", &vv)]))
    .collect();
    j.agent(
        "plot-architect",
        "卷规划",
        "plan-pa-checks",
        checks.iter().map(|l| bash(&l.run)).collect(),
    );
    // Volume 1 brings a new character (vol-planning.md §3: CharacterWeaver before the check).
    let new_characters = if v == 1 {
        json!(["老墨（卖灯油的老人，第 5 章登场）"])
    } else {
        json!([])
    };
    let ret = json!({"type": "requires_user_decision", "agent": "plot-architect", "recommendation": format!("确认第 {v} 卷规划"),
        "options": ["确认大纲，开始写作", "修改大纲", "调整本卷章数"], "rationale": "volume check、continuity、validate 均通过。",
        "data": {"volume": v, "chapter_range": range, "new_characters": new_characters, "contract_changes": [], "open_issues": []}});
    j.agent(
        "plot-architect",
        "卷规划",
        "plan-pa-done",
        vec![say(&ret.to_string())],
    );
    if v == 1 {
        says(
            PLAN,
            "照 SKILL.md 共用规则第 4 条派 character-weaver、合并它的\n状态增量并 `memory init`",
        );
        new_character(
            j,
            "lao-mo",
            "老墨",
            "老墨（卖灯油的老人，第 5 章登场）",
            3,
            "城北灯油铺",
            "旧灯罩",
        );
    }
    // §4: the self-check, §5: the author's review, §6: open.
    for (k, m) in [
        r#"novel --project "<DIR>" volume check <V> --json"#,
        r#"novel --project "<DIR>" check continuity --volume <V> --json"#,
    ]
    .iter()
    .enumerate()
    {
        let l = j.cmd(PLAN, m, &[("<V>", &vv)]);
        j.run(&format!("plan-check-{k}"), &l);
    }
    says(
        PLAN,
        "读 `volumes/vol-NN/outline.md`、`storyline-schedule.json`、`foreshadowing.json`，按这个顺序摆给作者",
    );
    let reads = [
        "outline.md",
        "storyline-schedule.json",
        "foreshadowing.json",
    ]
    .iter()
    .map(|f| j.b.read(&format!("{vdir}/{f}")))
    .collect();
    j.main("plan-read-plan", reads);
    let review = Question::new(PLAN, "卷纲审核", "卷纲审核：确认开卷？")
        .option("确认开卷（推荐）", true)
        .option("修改大纲", true)
        .option("调整章数", true);
    j.ask("plan-review", &[review], &["确认开卷（推荐）"], "确认开卷");
    let open = j.cmd(
        PLAN,
        r#"novel --project "<DIR>" volume open <V> --json"#,
        &[("<V>", &vv)],
    );
    j.run("open", &open);
    let next = j.cmd(PLAN, r#"novel --project "<DIR>" next --json"#, &[]);
    j.run("plan-next-after", &next);
    j.end(
        "plan-done",
        &format!(
            "第 {v} 卷已开卷，第 {}–{} 章。请用 /novel:continue 开写。",
            range[0], range[1]
        ),
    );
    let cp = read_json(&Path::new(&d).join(".checkpoint.json"));
    assert_eq!(cp["orchestrator_state"], "WRITING", "{cp}");
    assert_eq!(cp["current_volume"], v, "{cp}");
}

/// Turns 7–9: `/novel:continue 5` with a revision and a pause; the author's answer; the
/// volume's last chapter.
fn write_volume_one(j: &mut Journey) {
    j.session("/novel:continue 5", "continue");
    j.continue_opening();
    // The skill's `!` line ran `next` as it loaded (SKILL.md §一): no Bash call for it.
    let next = j.cmd(CONTINUE, "novel next --json", &[]);
    chapter(j, 4, false, Gate::Pass);
    chapter(j, 5, false, Gate::Revise);
    // §五: the 5-chapter brief.
    says(
        CONTINUE,
        "`last_completed_chapter` 是 5 的倍数时先做第五节的回顾",
    );
    let next_dir = j.cmd(CONTINUE, r#"novel --project "<DIR>" next --json"#, &[]);
    j.run("c5-next", &next_dir);
    let brief = j.cmd(
        CONTINUE,
        r#"novel --project "<DIR>" review brief --json"#,
        &[],
    );
    j.run("c5-brief", &brief);
    chapter(j, 6, false, Gate::Pass);
    chapter(j, 7, false, Gate::Pause);
    let paused = j.runs.last().unwrap();
    let n = if j.place == Place::Subfolder {
        // The `!` line ran where the author is (no project there, the book below it); the
        // skill's own `next` for the directory the argument names is the opening's answer.
        let next_dir = j.cmd(CONTINUE, r#"novel --project "<DIR>" next --json"#, &[]);
        let n = crate::test_e2e_paths::skill_next(paused);
        assert_eq!(n["data"]["books_below"][0], j.d().as_str(), "{n}");
        answer(paused, &next_dir, "", 0)
    } else {
        crate::test_e2e_paths::skill_next(paused)
    };
    assert_eq!(
        n["data"]["recommendation"]["action"], "write_next_chapter",
        "{n}"
    );

    // 8. The author's answer in the same conversation: the opening again (SKILL.md 铁律 4),
    // the lock taken back (resume.md), the revision along the notes with the author's words.
    let words = if j.sdk {
        "开头再紧一点，先让巡夜人露面。"
    } else {
        "按意见改写：开头再紧一点，先让巡夜人露面。"
    };
    j.reply(words);
    says(
        CONTINUE,
        "照第一节第 1 步「参数是对上次所提问题的回答」那样办",
    );
    // In the book's folder the skill reads `next` where it is; from the folder above, for the
    // directory it knows.
    let next = if j.place == Place::Subfolder {
        j.cmd(CONTINUE, r#"novel --project "<DIR>" next --json"#, &[])
    } else {
        next
    };
    j.run("a-next", &next);
    j.main(
        "a-read-resume",
        vec![tool("Read", json!({"file_path": repo().join(RESUME)}))],
    );
    let recover = j.cmd(
        RESUME,
        r#"novel --project "<DIR>" chapter recover --json"#,
        &[],
    );
    j.run("a-recover", &recover);
    let begin = j.cmd(
        RESUME,
        r#"novel --project "<DIR>" chapter begin <N> --json"#,
        &[],
    );
    j.run("a-begin", &begin);
    j.b.capture_next(json!({"token": "\"token\":\"([0-9a-f]+)\""}));
    let by_author = j.cmd(
        PAUSE,
        r#"novel --project "<DIR>" chapter stage revising --by-author --note "<TEXT>" --json"#,
        &[("<TEXT>", words)],
    );
    j.run("a-revising", &by_author);
    let d = j.b.dispatch(
        "chapter-writer",
        "修订",
        Some(&format!("作者的意见：{words}")),
        true,
    );
    j.b.main("a-dispatch-writer", vec![d]);
    j.b.writer("修订", "a1", 0);
    j.b.steps_3_to_9(
        "a1",
        Some("这是修订稿，摘要、状态增量、故事线记忆都按新稿重写"),
        ("他又读了一遍，认出了笔迹。", "他又读了一遍，认得这笔迹。"),
        4.2,
    );
    // The pass is committed by the gate's own call; the batch (one chapter: the answer to a
    // question) is done (SKILL.md §四).
    j.end(
        "a-report",
        "第7章 已提交 ✅。本批到此，还剩 1 章：运行 /novel:continue 接着写。",
    );
    let run = j.runs.last().unwrap();
    let n = answer(run, &next, "", 0);
    assert_eq!(n["data"]["recommendation"]["action"], "ask_author", "{n}");
    let token = answer(run, &begin, "", 0)["data"]["token"]
        .as_str()
        .expect("a token")
        .to_string();
    let moved = answer(run, &by_author, &token, 0);
    assert_eq!(moved["ok"], true, "{moved}");

    // 9. The volume's last chapter: two judges; VOL_REVIEW.
    j.session("/novel:continue", "continue");
    j.continue_opening();
    chapter(j, 8, true, Gate::Pass);
    // SKILL.md §四: the batch is done; the commit's own result says VOL_REVIEW.
    j.end(
        "v-report",
        "第 1 卷计划的章节已全部写完，请运行 /novel:start 做卷末回顾。",
    );
    let cp = read_json(&j.b.dir.join(".checkpoint.json"));
    assert_eq!(cp["orchestrator_state"], "VOL_REVIEW", "{cp}");
}

/// Turn 10: `/novel:start` → the volume review → plan volume 2 from its step 4.
fn review_volume(j: &mut Journey) {
    j.session("/novel:start", "start");
    let next = j.cmd(START, "novel next --json", &[]);
    j.read_menu("r-next", &next);
    let menu = Question::new(START, "下一步", "第 1 卷已写完，下一步做什么？")
        .option("卷末回顾（推荐）", false)
        .option("质量回顾", false)
        .option("继续写作", false);
    j.ask("r-menu", &[menu], &["卷末回顾（推荐）"], "卷末回顾");
    j.main(
        "read-review",
        vec![tool("Read", json!({"file_path": repo().join(REVIEW)}))],
    );
    let rv = j.cmd(
        REVIEW,
        r#"novel --project "<DIR>" review volume <V> --json"#,
        &[("<V>", "1")],
    );
    j.run("r-review", &rv);
    let status = j.cmd(REVIEW, r#"novel --project "<DIR>" status --json"#, &[]);
    j.run("r-status", &status);
    j.main(
        "r-write",
        vec![j.b.write("volumes/vol-01/review.md", &crate::texts::review_doc())],
    );
    let step4 = Question::new(REVIEW, "下一步", "回顾写好了，接下来？")
        .option("现在规划第 V+1 卷（推荐）", false)
        .option("先改铺垫建议", true)
        .option("先加角色或改设定", true)
        .option("先不规划", true);
    says(REVIEW, "「现在规划第 V+1 卷（推荐）」");
    j.ask(
        "r-step4",
        &[step4],
        &["现在规划第 V+1 卷（推荐）"],
        "现在规划第 2 卷",
    );
    plan_volume(j, 2, [9, 10], false);
}

/// The book after the journey: `validate` with no finding, `state rebuild` agreeing, `status`
/// at volume 2 with 9 chapters; the book's session settings in the `session` folder.
fn assert_book(dir: &Path, session: &Path) {
    let (rc, doc) = run_json(dir, &["validate"]);
    assert_eq!(rc, 0, "{doc}");
    assert_eq!(doc["data"]["findings"], json!([]), "validate: {doc}");
    let (rc, doc) = run_json(dir, &["state", "rebuild"]);
    assert_eq!(rc, 0, "state rebuild: {doc}");
    let (rc, doc) = run_json(dir, &["status"]);
    assert_eq!(rc, 0, "status: {doc}");
    let d = &doc["data"];
    assert_eq!(d["last_completed_chapter"], 9, "{d}");
    let headline = d["headline"].as_str().unwrap();
    assert!(headline.starts_with("第2卷 第9/10章 总"), "{headline}");
    let chars: u64 = (1..=9)
        .map(|n| {
            let log = read_json(&dir.join(format!("logs/chapter-{n:03}-log.json")));
            log["chars"]
                .as_u64()
                .unwrap_or_else(|| panic!("chapter {n}: {log}"))
        })
        .sum();
    assert_eq!(d["chars"]["total"], chars, "{d}");
    // The opening delta once, the new character's once: 守灯钥匙 held once.
    let state = read_json(&dir.join("state/current-state.json"));
    assert_eq!(
        state["characters"]["lu-chen"]["inventory"][0], "守灯钥匙",
        "{state}"
    );
    let held = state["characters"]["lu-chen"]["inventory"]
        .as_array()
        .unwrap();
    assert_eq!(
        held.iter().filter(|i| *i == "守灯钥匙").count(),
        1,
        "{state}"
    );
    let lines = read_json(&dir.join("storylines/storylines.json"));
    assert_eq!(lines["storylines"][0]["pov_characters"], json!(["lu-chen"]));
    // PlotArchitect's new characters (the trial outline's, volume 1's) have profiles, their
    // opening state and their memory.
    for (slug, item) in [
        ("lu-chen", "守灯钥匙"),
        ("zhou-yan", "巡夜令"),
        ("lao-mo", "旧灯罩"),
    ] {
        assert!(
            dir.join(format!("characters/active/{slug}.json")).is_file(),
            "{slug}"
        );
        assert!(
            dir.join(format!("memory/characters/{slug}.jsonl"))
                .is_file(),
            "{slug}"
        );
        assert_eq!(state["characters"][slug]["inventory"][0], item, "{state}");
    }
    // The book's own settings where the client reads them: the folder the sessions start in,
    // and the book's (a session started there).
    for f in [session, dir] {
        let local = read_json(&f.join(".claude/settings.local.json"));
        assert_eq!(local["model"], "sonnet", "{}: {local}", f.display());
    }
}

/// Where the author starts the client for the book (issue 45).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Place {
    /// An empty folder made for the book, trusted (the trust dialog accepted once).
    Trusted,
    /// An empty folder the client was never told to trust (headless: no trust dialog): the
    /// allow rules, in the user settings, count there too.
    Untrusted,
    /// A trusted folder holding the author's other files: the book goes to 「当前目录/书名」 and
    /// every later session starts in the folder above it.
    Subfolder,
}

/// The folder the author made for the book, trusted as an interactive start's trust dialog
/// records it (the client honours a project's allow rules only in a trusted workspace).
fn trusted_folder(e2e: &mut E2e) -> PathBuf {
    let folder = e2e.path().join("灯下密信");
    trust(e2e, &folder);
    folder
}

/// `folder` made and recorded as trusted in the shared home's client config.
fn trust(e2e: &mut E2e, folder: &Path) {
    e2e.keep_home();
    std::fs::create_dir_all(folder).unwrap();
    let home = e2e.path().join("home");
    // The client's folder, there since the author installed the plugin with it.
    std::fs::create_dir_all(home.join(".claude")).unwrap();
    let config = home.join(".claude.json");
    let mut known = if config.is_file() {
        read_json(&config)
    } else {
        json!({"projects": {}})
    };
    known["projects"][folder.to_str().unwrap()] = json!({"hasTrustDialogAccepted": true});
    write_json(&config, &known);
}

/// The folder the client runs in for `place`, set up as the author would have it.
fn folder_for(e2e: &mut E2e, place: Place) -> PathBuf {
    match place {
        Place::Trusted => trusted_folder(e2e),
        Place::Untrusted => {
            e2e.keep_home();
            let folder = e2e.path().join("没信任过的书");
            std::fs::create_dir_all(&folder).unwrap();
            std::fs::create_dir_all(e2e.path().join("home/.claude")).unwrap();
            folder
        }
        Place::Subfolder => {
            let folder = e2e.path().join("写作");
            trust(e2e, &folder);
            std::fs::write(folder.join("灵感.txt"), "一个守夜人的故事。\n").unwrap();
            folder
        }
    }
}

/// What `novel permissions --write` said about the rules when the skill wrote them (the first
/// time in the journey): the session's standing as the program saw it.
fn permissions_written(j: &Journey) -> Value {
    j.runs
        .iter()
        .flat_map(Run::tool_calls)
        .find(|c| {
            c.name == "Bash"
                && c.input["command"]
                    .as_str()
                    .is_some_and(|cmd| cmd.contains("permissions --write"))
        })
        .map(|c| serde_json::from_str(c.result.trim()).expect("permissions --json"))
        .expect("the rules were written")
}

fn journey(sdk: bool, place: Place) {
    let what = match (sdk, place) {
        (true, Place::Trusted) => "journey (SDK host, AskUserQuestion)",
        (false, Place::Trusted) => "journey (claude -p)",
        (false, Place::Untrusted) => "journey (claude -p, untrusted folder)",
        (false, Place::Subfolder) => "journey (claude -p, book in a subfolder)",
        (true, _) => "journey (SDK host, elsewhere)",
    };
    let Some(mut e2e) = E2e::new(what) else {
        return;
    };
    let started = Instant::now();
    let cwd = folder_for(&mut e2e, place);
    let mut j = Journey::new(e2e, &cwd, sdk, place);
    let folder = j.b.dir.clone();
    quick_start(&mut j);
    // Issue 45: the program told the skill, as the rules were written, that they are in force
    // at once in every place (the user settings, watched since the client started), and opened
    // the writes where the sessions start.
    let written = permissions_written(&j);
    assert_eq!(written["data"]["blocker"], Value::Null, "{written}");
    assert_eq!(written["data"]["in_force"], true, "{written}");
    let edit = format!("Edit(/{}/**)", cwd.display());
    assert!(
        written["data"]["rules"]
            .as_array()
            .is_some_and(|r| r.contains(&json!(edit))),
        "{written}"
    );
    j.phase = "volume planning";
    j.session("/novel:start", "start");
    plan_volume(&mut j, 1, [1, 8], true);
    j.phase = "batch (chapters 4-8)";
    write_volume_one(&mut j);
    j.phase = "volume review (and volume 2 planned)";
    review_volume(&mut j);
    j.phase = "volume 2, chapter 9";
    j.session("/novel:continue", "continue");
    j.continue_opening();
    chapter(&mut j, 9, true, Gate::Pass);
    j.end("w-report", "第9章 已提交 ✅");
    assert_book(&folder, &cwd);

    let mut table = format!(
        "e2e journey ({what}): {} runs, {:.1} s in all\n{:>3} {:>7} {:>5} {:>6}  prompt\n",
        j.times.len(),
        started.elapsed().as_secs_f64(),
        "#",
        "secs",
        "reqs",
        "calls"
    );
    for (i, t) in j.times.iter().enumerate() {
        table.push_str(&format!(
            "{:>3} {:>7.1} {:>5} {:>6}  {}\n",
            i + 1,
            t.secs,
            t.requests,
            t.calls,
            t.prompt
        ));
    }
    let asked: usize = j.runs.iter().map(|r| r.questions.len()).sum();
    table.push_str(&format!("AskUserQuestion questions answered: {asked}\n"));
    eprintln!("{table}");
    let costs = journey_costs(&j, what);
    eprintln!("{costs}");
    // Issue 38: the PRD's model mix everywhere — every request of the conversation on Sonnet
    // (the skills', and the answers given in plain words, through the session's model the
    // 放行设置 wrote); the quick start at most $3, the whole journey at most $9.
    let reqs = journey_requests(&j);
    let off: Vec<&str> = reqs
        .iter()
        .filter(|r| r.who == "main" && !r.model.contains("sonnet"))
        .map(|r| r.model.as_str())
        .collect();
    assert!(
        off.is_empty(),
        "main requests not on Sonnet: {off:?}\n{costs}"
    );
    let quick = crate::meter::phase_cost(&reqs, "quick start");
    assert!(
        quick.billed <= 3.0,
        "quick start ${:.2}\n{costs}",
        quick.billed
    );
    let all: f64 = reqs.iter().map(crate::meter::Metered::billed).sum();
    assert!(all <= 9.0, "the journey ${all:.2}\n{costs}");
    if sdk {
        assert!(asked >= 8, "{table}");
    }
}

/// The journey's runs grouped by phase, in order.
fn phase_groups(j: &Journey) -> Vec<(&'static str, Vec<&Run>)> {
    let mut groups: Vec<(&'static str, Vec<&Run>)> = Vec::new();
    for (run, phase) in j.runs.iter().zip(&j.phases) {
        match groups.last_mut() {
            Some((p, runs)) if p == phase => runs.push(run),
            _ => groups.push((phase, vec![run])),
        }
    }
    groups
}

/// The cost table of the journey, per phase (`meter::phase_table`).
fn journey_costs(j: &Journey, what: &str) -> String {
    let groups = phase_groups(j);
    let phases: Vec<(&str, &[&Run])> = groups.iter().map(|(p, r)| (*p, &r[..])).collect();
    crate::meter::phase_table(&format!("the journey, {what}"), &phases)
}

/// Every request of the journey, measured, by phase.
fn journey_requests(j: &Journey) -> Vec<crate::meter::Metered> {
    let groups = phase_groups(j);
    let phases: Vec<(&str, &[&Run])> = groups.iter().map(|(p, r)| (*p, &r[..])).collect();
    crate::meter::metered_phases(&phases)
}

#[test]
fn the_authors_journey_with_ask_user_question() {
    journey(true, Place::Trusted);
}

#[test]
fn the_authors_journey_without_ask_user_question() {
    journey(false, Place::Trusted);
}

/// Issue 45: a folder the client never trusted ignores the allow rules; the author answers every
/// question as the skills then say (`/novel:start <回答>`, `/novel:continue <回答>`) and no call
/// is refused from the first turn to volume 2.
#[test]
fn the_authors_journey_in_a_folder_never_trusted() {
    journey(false, Place::Untrusted);
}

/// Issue 45: the author's folder holds other files, so the book goes to 「当前目录/书名」; every
/// later session starts in the folder above it and finds the book (`books_below`, ` 项目：<DIR>`).
#[test]
fn the_authors_journey_with_the_book_in_a_subfolder() {
    journey(false, Place::Subfolder);
}

/// Why (issue 33: "Permissions lapse after the first turn"): a skill's `allowed-tools` cover only
/// the turn its slash command was typed in; a turn the author answers in plain words runs on the
/// client's own rules. There, in the default permission mode, the `novel` command, the read of
/// the plugin's reference file and an agent-style write in the book are refused — until the
/// allow rules `novel permissions --write` writes are in the author's user settings, where the
/// client honours them in every folder, trusted or not (issue 45: in a folder's local settings
/// they counted only in a trusted folder).
#[test]
fn the_allow_rules_carry_a_turn_answered_in_plain_words() {
    let Some(mut e2e) = E2e::new("allow rules") else {
        return;
    };
    let trusted = trusted_folder(&mut e2e);
    let untrusted = e2e.path().join("没信任过");
    std::fs::create_dir_all(&untrusted).unwrap();
    let home = e2e.path().join("home");
    let words = "满意，进入第 1 卷规划";
    let script = |dir: &Path| {
        let d = dir.to_str().unwrap();
        let when = json!({"first_user": words});
        json!({"turns": [
            turn("calls", when.clone(), vec![
                bash(&format!("novel --project \"{d}\" next --json")),
                tool("Read", json!({"file_path": repo().join(QUICK)})),
                tool("Write", json!({"file_path": format!("{d}/notes.md"), "content": "记一笔。\n"})),
            ]),
            turn("done", when, vec![say("好的。")]),
        ]})
    };
    let denied = |run: &Run| -> Vec<String> {
        let mut tools: Vec<String> = run.result()["permission_denials"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|d| d["tool_name"].as_str().unwrap_or("?").to_string())
            .collect();
        tools.sort();
        tools
    };
    let novel_in = |dir: &Path, args: &[&str]| {
        let out = std::process::Command::new(bin())
            .args(args)
            .current_dir(dir)
            .env("NOVEL_PLUGIN_ROOT", repo())
            .env("HOME", &home)
            .output()
            .expect("run novel");
        assert_eq!(code(&out), 0, "{args:?}: {}{}", stdout(&out), stderr(&out));
    };
    for dir in [&trusted, &untrusted] {
        novel_in(
            dir,
            &["--json", "init", "--title", TITLE, "--genre", "玄幻"],
        );
    }

    // No allow rules: all three refused, trusted or not.
    for dir in [&trusted, &untrusted] {
        let s = script(dir);
        let run = e2e.run(dir, words, &s);
        run.assert_all_turns_played(&s);
        assert_eq!(denied(&run), ["Bash", "Read", "Write"], "{}", run.report());
    }

    // The rules written (the author agreed, in each book): all three go through in both.
    for dir in [&trusted, &untrusted] {
        novel_in(dir, &["--json", "permissions", "--write"]);
    }
    for dir in [&trusted, &untrusted] {
        let s = script(dir);
        let run = e2e.run(dir, words, &s);
        run.assert_all_turns_played(&s);
        assert_eq!(denied(&run), Vec::<String>::new(), "{}", run.report());
        assert!(dir.join("notes.md").is_file());
        let next = run
            .tool_calls()
            .into_iter()
            .find(|c| c.name == "Bash")
            .expect("the novel call");
        assert!(next.result.contains("\"ok\":true"), "{}", next.result);
        // `next` run by the client knows the rules are in force for this session.
        assert!(
            next.result.contains("\"in_force\":true") && next.result.contains("\"blocker\":null"),
            "{}",
            next.result
        );
    }
}
