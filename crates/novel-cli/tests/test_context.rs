//! `novel context`: the SessionStart hook and the agent packets, on synthetic projects of
//! 30, 100 and 500 chapters (`novel_store::synth`).

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use novel_core::context::{self, Agent, Packet};
use novel_store::Project;
use novel_store::context::load_inputs;
use novel_store::synth::{SynthOptions, synth_project};
use serde_json::json;

use crate::support::*;

fn synth(chapters: u32) -> (tempfile::TempDir, PathBuf) {
    synth_with(SynthOptions {
        chapters,
        chapter_chars: 600,
        ..SynthOptions::default()
    })
}

fn synth_with(opts: SynthOptions) -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let r = synth_project(&tmp.path().join("book"), &opts).expect("synth");
    (tmp, r.root)
}

fn packet(root: &Path, agent: Agent, chapter: Option<u32>) -> Packet {
    let project = Project {
        root: root.to_path_buf(),
    };
    let inputs = load_inputs(&project, agent, chapter, None).unwrap();
    context::build(agent, &inputs, None).unwrap_or_else(|e| panic!("{agent:?}: {e}"))
}

fn set_checkpoint(root: &Path, f: impl FnOnce(&mut serde_json::Value)) {
    let p = root.join(".checkpoint.json");
    let mut cp = read_json(&p);
    f(&mut cp);
    write_json(&p, &cp);
}

/// The memory fact lines of a storyline in the synthetic project (everything but its first
/// sentence, which is its one-sentence state).
fn memory_facts(line: &str) -> String {
    format!("记忆事实〔{line}·")
}

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Runs the command of the real `hooks/hooks.json` through `sh -c`, as Claude Code does, with
/// `stdin` as the hook's stdin (None: no stdin at all).
fn run_hook(cwd: &Path, stdin: Option<&str>) -> Output {
    let hooks = read_json(&repo().join("hooks/hooks.json"));
    let entry = &hooks["hooks"]["SessionStart"][0];
    assert_eq!(entry["matcher"], "startup|resume|clear|compact");
    let hook = &entry["hooks"][0];
    assert_eq!(hook["type"], "command");
    assert_eq!(hook["timeout"], 10);
    let command = hook["command"].as_str().unwrap();
    assert!(
        command.starts_with("\"${CLAUDE_PLUGIN_ROOT}/scripts/novel\""),
        "the plugin root is quoted: {command}"
    );
    sh_hook(cwd, command, stdin)
}

/// `command` of `hooks/hooks.json` run through `sh -c` in `cwd` as the client runs it (the
/// plugin root set, a bare environment), `stdin` as its stdin (None: no stdin at all).
fn sh_hook(cwd: &Path, command: &str, stdin: Option<&str>) -> Output {
    let mut child = Command::new("sh")
        .args(["-c", command])
        .current_dir(cwd)
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .env("LANG", "C.UTF-8")
        .env("CLAUDE_PLUGIN_ROOT", repo())
        .env("NOVEL_BIN", bin())
        .stdin(if stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run the hook");
    if let Some(s) = stdin {
        child.stdin.take().unwrap().write_all(s.as_bytes()).unwrap();
    }
    child.wait_with_output().unwrap()
}

fn hook_stdin(cwd: &Path, source: &str) -> String {
    json!({
        "session_id": "abc123",
        "transcript_path": "/tmp/transcript.jsonl",
        "cwd": cwd,
        "hook_event_name": "SessionStart",
        "source": source
    })
    .to_string()
}

#[test]
fn synthetic_project_validates_and_its_changelog_rebuilds_the_state() {
    let (_t, root) = synth(60);
    let v = novel(&root, &["validate"]);
    assert_eq!(code(&v), 0, "{}{}", stdout(&v), stderr(&v));
    let r = novel(&root, &["state", "rebuild"]);
    assert_eq!(code(&r), 0, "{}{}", stdout(&r), stderr(&r));
}

#[test]
fn chapter_writer_packet_stays_in_budget_and_flat_from_30_to_500_chapters() {
    let mut sizes = Vec::new();
    for n in [30, 100, 500] {
        let (_t, root) = synth(n);
        let p = packet(&root, Agent::ChapterWriter, None);
        assert_eq!(p.chapter, n + 1);
        let b = p.budget.expect("ChapterWriter has a default budget");
        assert_eq!(
            b.total,
            novel_core::model::settings::ContextBudgets::default().chapter_writer
        );
        assert!(
            p.tokens() <= b.limit,
            "chapter {}: {} > {}",
            n + 1,
            p.tokens(),
            b.limit
        );
        assert!(p.cut.is_empty(), "nothing needs cutting: {:?}", p.cut);
        sizes.push((n, p.tokens()));
    }
    let (_, at30) = sizes[0];
    let (_, at500) = sizes[2];
    assert!(
        f64::from(at500) <= f64::from(at30) * 1.10,
        "the packet grew more than 10% from chapter 31 to 501: {sizes:?}"
    );
}

/// Cost per chapter stays flat (issue 27): each agent a chapter dispatches gets a packet at
/// chapter 300 no more than 10 % larger than at chapter 3 of the same book.
#[test]
fn every_chapter_agents_packet_is_flat_from_chapter_3_to_300() {
    let (_t, root) = synth(300);
    for agent in [
        Agent::ChapterWriter,
        Agent::Summarizer,
        Agent::StyleRefiner,
        Agent::QualityJudge,
    ] {
        let early = packet(&root, agent, Some(3)).tokens();
        let late = packet(&root, agent, Some(300)).tokens();
        assert!(
            f64::from(late) <= f64::from(early) * 1.10,
            "{agent:?}: {early} tokens at chapter 3, {late} at chapter 300"
        );
        eprintln!("{agent:?}: chapter 3 {early} tokens, chapter 300 {late}");
    }
}

#[test]
fn a_non_convergence_chapter_of_one_line_carries_no_memory_of_another() {
    let (_t, root) = synth(30);
    // Chapter 31: main_arc, and chapter 32 is main_arc too (no hand-over).
    let p = packet(&root, Agent::ChapterWriter, Some(31));
    assert_eq!(p.storyline.as_deref(), Some("main_arc"));
    assert!(!p.convergence);
    let text = p.render();
    let storyline = p.section("storyline").unwrap().body();
    assert!(
        storyline.starts_with("当前故事线：陆尘证道（main_arc）"),
        "{storyline}"
    );
    assert!(text.contains(&memory_facts("main_arc")));
    for other in ["jinghai_plan", "sect_rivalry", "zhonggu_secret"] {
        assert!(
            !text.contains(&memory_facts(other)),
            "memory of {other} leaked into a main_arc chapter"
        );
    }
    // The active storyline's material comes first in the packet.
    assert_eq!(p.sections[0].tag, "storyline");
    // Recent summaries are of this line only.
    let summaries = p.section("recent_summaries").unwrap().body();
    assert!(!summaries.contains("（jinghai_plan）") && !summaries.contains("（sect_rivalry）"));
    assert!(summaries.contains("（main_arc）"));
}

#[test]
fn a_frozen_line_contributes_only_its_one_sentence_state() {
    let (_t, root) = synth(30);
    let p = packet(&root, Agent::ChapterWriter, Some(31));
    let storyline = p.section("storyline").unwrap().body();
    let frozen: Vec<&str> = storyline
        .lines()
        .filter(|l| l.contains("zhonggu_secret"))
        .collect();
    assert_eq!(frozen.len(), 1, "{storyline}");
    assert!(frozen[0].contains("冻结线"), "{}", frozen[0]);
    // The memory's first sentence (its one-sentence state), nothing more.
    assert!(frozen[0].contains("龙君此刻正在"), "{}", frozen[0]);
    assert!(!p.render().contains(&memory_facts("zhonggu_secret")));
}

#[test]
fn the_adjacent_line_memory_comes_in_for_the_hand_over() {
    let (_t, root) = synth(30);
    // Chapter 34 is on jinghai_plan and hands over to main_arc (chapter 35).
    let p = packet(&root, Agent::ChapterWriter, Some(34));
    assert_eq!(p.storyline.as_deref(), Some("jinghai_plan"));
    let text = p.render();
    let own = text
        .find(&memory_facts("jinghai_plan"))
        .expect("own memory");
    let adjacent = text
        .find(&memory_facts("main_arc"))
        .expect("adjacent memory");
    assert!(own < adjacent, "the chapter's own line comes first");
    assert!(text.contains("【切线提示】本章结尾过渡到 main_arc"));
    assert!(!text.contains(&memory_facts("sect_rivalry")));
}

#[test]
fn a_convergence_chapter_includes_the_memory_of_every_involved_line() {
    let (_t, root) = synth(30);
    // Chapters 25–28 of volume 1: main_arc and jinghai_plan converge.
    let p = packet(&root, Agent::ChapterWriter, Some(26));
    assert!(p.convergence);
    let b = p.budget.unwrap();
    assert_eq!(
        b.total,
        novel_core::model::settings::ContextBudgets::default().chapter_writer_convergence,
        "convergence chapters get the larger budget"
    );
    let text = p.render();
    assert!(text.contains("convergence=\"true\""));
    assert!(text.contains(&memory_facts("main_arc")));
    assert!(text.contains(&memory_facts("jinghai_plan")));
    assert!(!text.contains(&memory_facts("sect_rivalry")));
    assert!(text.contains("本章是交汇章"));
}

#[test]
fn packet_sections_carry_token_estimates_that_add_up() {
    let (_t, root) = synth(30);
    let p = packet(&root, Agent::ChapterWriter, None);
    let sum: u32 = p.sizes().iter().map(|(_, t)| t).sum();
    assert!(
        sum <= p.tokens() && p.tokens() <= sum + 40,
        "{sum} vs {}",
        p.tokens()
    );
    let text = p.render();
    for (tag, tokens) in p.sizes() {
        assert!(
            text.contains(&format!("<{tag} title="))
                && text.contains(&format!("tokens=\"{tokens}\">")),
            "{tag}"
        );
        assert!(text.contains(&format!("</{tag}>")));
    }
    // L1 hard rules as prohibitions; L2 contracts of the characters the contract names.
    let rules = p.section("world_rules").unwrap().body();
    assert!(
        rules.starts_with("【硬约束 · 违反以下规则的内容将被自动拒绝】"),
        "{rules}"
    );
    let characters = p.section("characters").unwrap().body();
    assert!(
        characters.contains("由章节契约与本章大纲点名（3 位）"),
        "{characters}"
    );
    assert!(characters.contains("L2 契约："));
    assert!(p.section("user_preferences").is_some());
    assert!(
        p.section("style")
            .unwrap()
            .body()
            .contains("【禁用的 AI 高频用语（10 类各举一例")
    );
}

#[test]
fn budget_flag_trims_by_priority_and_reports_what_was_cut() {
    let (_t, root) = synth(30);
    let project = Project { root: root.clone() };
    let inputs = load_inputs(&project, Agent::ChapterWriter, None, None).unwrap();
    let full = context::assemble(Agent::ChapterWriter, &inputs)
        .unwrap()
        .tokens();
    // Just under the full size: the volume overview (rank 90) goes first.
    let reserve = Agent::ChapterWriter.prompt_allowance();
    let p = context::build(Agent::ChapterWriter, &inputs, Some(full + reserve - 30)).unwrap();
    assert!(!p.cut.is_empty());
    assert_eq!(p.cut[0].section, "volume_outline", "{:?}", p.cut);
    assert!(p.tokens() <= p.budget.unwrap().limit);
    // Tighter: summaries and profiles go, but the chapter's own material stays.
    let tight =
        context::build(Agent::ChapterWriter, &inputs, Some(full * 3 / 4 + reserve)).unwrap();
    let text = tight.render();
    assert!(tight.tokens() <= tight.budget.unwrap().limit);
    assert!(text.contains(&memory_facts("main_arc")));
    assert!(text.contains("## 第31章"));
    assert!(text.contains("OBJ-031-1"));
    assert!(text.contains("禁止违反 W-001"));
    // Impossible: an error naming the budget, never a silent overflow.
    let err = context::build(Agent::ChapterWriter, &inputs, Some(reserve + 500)).unwrap_err();
    assert_eq!(err.code(), "E_CONTEXT_BUDGET");
    assert!(err.to_string().contains("超出上限"), "{err}");
}

#[test]
fn every_agent_packet_assembles_for_a_chapter_in_flight() {
    let (_t, root) = synth(30);
    std::fs::write(
        root.join("staging/chapters/chapter-031.md"),
        "# 第31章 魔都外城夜话\n\n寒山推开门。「你来晚了。」\n",
    )
    .unwrap();
    set_checkpoint(&root, |cp| {
        cp["inflight_chapter"] = json!(31);
        cp["pipeline_stage"] = json!("drafting");
    });
    for agent in Agent::ALL {
        let p = packet(&root, agent, None);
        assert_eq!(p.chapter, 31, "{agent:?}");
        let tags: Vec<&str> = p.sections.iter().map(|s| s.tag).collect();
        assert_eq!(
            tags,
            context::assemble::sections_of(agent, false),
            "{agent:?}"
        );
    }
    let s = packet(&root, Agent::Summarizer, None);
    let task = s.section("task").unwrap().body();
    assert!(task.contains("\"base_state_version\": 31"), "{task}");
    assert!(task.contains("staging/storylines/main_arc/memory.md"));
    assert!(
        s.section("entity_map")
            .unwrap()
            .body()
            .contains("陆尘 / 小尘 → lu-chen")
    );
    let r = packet(&root, Agent::StyleRefiner, None);
    assert!(
        r.section("chapter_text")
            .unwrap()
            .body()
            .contains("你来晚了")
    );
    assert!(
        r.section("style")
            .unwrap()
            .body()
            .contains("按改法分组，命中的一律照改法替换")
    );
    let pa = packet(&root, Agent::PlotArchitect, None);
    assert!(
        pa.section("outline_format")
            .unwrap()
            .body()
            .contains("## 第48章 章节标题")
    );
    // The planner gets the book's 黄金三章 (the synthetic book is 玄幻).
    assert!(
        pa.section("outline_format")
            .unwrap()
            .body()
            .contains("【黄金三章 · 玄幻】")
    );
}

#[test]
fn revising_hands_chapter_writer_the_draft_and_the_required_fixes() {
    let (_t, root) = synth(30);
    std::fs::write(
        root.join("staging/chapters/chapter-031.md"),
        "# 第31章\n\n初稿正文。\n",
    )
    .unwrap();
    let mut eval = json!({
        "chapter": 31,
        "scores": {},
        "overall": 3.2,
        "recommendation": "revise",
        "required_fixes": [{"target": "第 3 段", "instruction": "寒山的台词改回他惯用的反问"}],
        "issues": ["结尾仓促"]
    });
    for (dim, w) in novel_core::model::evaluation::DIMENSIONS {
        eval["scores"][dim] = json!({"score": 3, "weight": w, "reason": "…", "evidence": "…"});
    }
    // Where `novel chapter stage revising` archived the rejected round's evaluation.
    let archive = root.join("logs/revisions/chapter-031/r1");
    std::fs::create_dir_all(&archive).unwrap();
    write_json(&archive.join("chapter-031-eval.json"), &eval);
    set_checkpoint(&root, |cp| {
        cp["inflight_chapter"] = json!(31);
        cp["pipeline_stage"] = json!("revising");
        cp["revision_count"] = json!(1);
    });
    let p = packet(&root, Agent::ChapterWriter, None);
    let revision = p.section("revision").expect("revision section").body();
    assert!(
        revision.contains("〔第 3 段〕寒山的台词改回他惯用的反问"),
        "{revision}"
    );
    assert!(
        p.section("chapter_text")
            .unwrap()
            .body()
            .contains("初稿正文")
    );
    assert!(p.section("task").unwrap().body().contains("这是修订"));
}

#[test]
fn outline_problems_name_the_chapter_and_the_line() {
    let (_t, root) = synth(30);
    let outline = root.join("volumes/vol-01/outline.md");
    let text = std::fs::read_to_string(&outline).unwrap();
    // Chapter 31 missing.
    let start = text.find("## 第31章").unwrap();
    let end = text.find("## 第32章").unwrap();
    std::fs::write(&outline, format!("{}{}", &text[..start], &text[end..])).unwrap();
    let out = novel(
        &root,
        &["--json", "context", "chapter-writer", "--chapter", "31"],
    );
    assert_eq!(code(&out), 2);
    let doc = json(&out);
    assert_eq!(doc["error"]["code"], "E_OUTLINE_CHAPTER");
    let msg = doc["error"]["message"].as_str().unwrap();
    assert!(
        msg.contains("没有第 31 章") && msg.contains("1–30、32–50"),
        "{msg}"
    );
    // A heading that names a chapter but cannot be read (the title glued to it) is a format
    // error naming its line and the shapes that are read.
    std::fs::write(&outline, text.replace("## 第31章 ", "## 第31章")).unwrap();
    let out = novel(
        &root,
        &["--json", "context", "chapter-writer", "--chapter", "31"],
    );
    let doc = json(&out);
    assert_eq!(doc["error"]["code"], "E_OUTLINE_FORMAT");
    let msg = doc["error"]["message"].as_str().unwrap();
    let line = text[..text.find("## 第31章").unwrap()].lines().count() + 1;
    assert!(
        msg.contains(&format!("第 {line} 行")) && msg.contains("空格或冒号"),
        "{msg}"
    );
    assert!(msg.contains("### 第 48 章：标题"), "{msg}");
    assert!(
        doc["error"]["hint"]
            .as_str()
            .unwrap()
            .contains("## 第48章 章节标题")
    );
}

#[test]
fn outline_heading_with_spaces_and_a_colon_is_read() {
    let (_t, root) = synth(30);
    let outline = root.join("volumes/vol-01/outline.md");
    let text = std::fs::read_to_string(&outline).unwrap();
    let title = text[text.find("## 第31章 ").unwrap() + "## 第31章 ".len()..]
        .lines()
        .next()
        .unwrap()
        .to_string();
    for (from, to) in [
        ("## 第31章 ", "### 第 31 章: "),
        ("## 第31章 ", "## 第三十一章："),
    ] {
        std::fs::write(&outline, text.replace(from, to)).unwrap();
        let out = novel(
            &root,
            &["--json", "context", "chapter-writer", "--chapter", "31"],
        );
        assert_eq!(code(&out), 0, "{to}: {}", stdout(&out));
        let p = packet(&root, Agent::ChapterWriter, Some(31));
        let block = p
            .section("chapter_outline")
            .expect("chapter_outline")
            .body();
        assert!(block.contains(&title), "{to}: {block}");
        assert!(block.contains("- 故事线："), "{to}: {block}");
    }
}

#[test]
fn cli_packet_and_budget_commands() {
    let (_t, root) = synth(30);
    let out = novel(&root, &["context", "chapter-writer"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let text = stdout(&out);
    assert!(
        text.starts_with("<context agent=\"chapter-writer\" chapter=\"31\""),
        "{text}"
    );
    assert!(text.trim_end().ends_with("</context>"));

    let out = novel(
        &root,
        &["--json", "context", "chapter-writer", "--budget", "13000"],
    );
    assert_eq!(code(&out), 0, "{}", stdout(&out));
    let doc = json(&out);
    assert_eq!(doc["command"], "context chapter-writer");
    assert!(!doc["data"]["cut"].as_array().unwrap().is_empty());
    assert!(doc["data"]["tokens"].as_u64().unwrap() <= 5_500);
    assert_eq!(doc["data"]["budget"]["limit"], 5_500);
    let out = novel(&root, &["context", "chapter-writer", "--budget", "13000"]);
    assert!(stderr(&out).contains("为符合预算裁去"), "{}", stderr(&out));

    let out = novel(
        &root,
        &["--json", "context", "chapter-writer", "--budget", "8000"],
    );
    assert_eq!(code(&out), 1);
    assert_eq!(json(&out)["error"]["code"], "E_CONTEXT_BUDGET");

    let out = novel(&root, &["--json", "context", "budget"]);
    assert_eq!(code(&out), 0, "{}", stdout(&out));
    let doc = json(&out);
    let agents = doc["data"]["agents"].as_array().unwrap();
    assert_eq!(agents.len(), 8);
    assert_eq!(agents[0]["agent"], "chapter-writer");
    assert_eq!(agents[0]["within_budget"], true);
    assert!(!agents[0]["sections"].as_array().unwrap().is_empty());
    // No chapter text yet for chapter 31: said, not failed.
    assert_eq!(agents[1]["ok"], false);
    assert_eq!(agents[1]["error"]["code"], "E_CHAPTER_TEXT");
    let human = stdout(&novel(&root, &["context", "budget"]));
    assert!(
        human.contains("ChapterWriter") && human.contains("storyline"),
        "{human}"
    );

    let help = stdout(&novel(&root, &["help", "context"]));
    assert!(
        help.contains("session-start") && help.contains("chapter-writer"),
        "{help}"
    );
    assert!(!help.contains("synth"), "the generator is hidden: {help}");
}

#[test]
fn hook_in_a_project_with_a_chapter_in_flight() {
    let (_t, root) = synth_with(SynthOptions {
        chapters: 60,
        chapter_chars: 300,
        style_drift: true,
        ..SynthOptions::default()
    });
    std::fs::write(
        root.join("staging/chapters/chapter-061.md"),
        "# 第61章\n\n初稿。\n",
    )
    .unwrap();
    set_checkpoint(&root, |cp| {
        cp["inflight_chapter"] = json!(61);
        cp["pipeline_stage"] = json!("drafting");
        cp["current_volume"] = json!(2);
    });
    let sub = root.join("chapters");
    let out = run_hook(&sub, Some(&hook_stdin(&sub, "startup")));
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let text = String::from_utf8(out.stdout.clone()).expect("valid UTF-8");
    assert!(
        text.chars().count() <= 10_000,
        "{} chars",
        text.chars().count()
    );
    assert!(text.contains("⚠ 第 61 章写到一半"), "{text}");
    assert!(text.contains("从摘要员继续"), "{text}");
    assert!(
        text.contains("novel chapter begin 61"),
        "lock was released: {text}"
    );
    assert!(text.contains("风格漂移纠偏生效中"), "{text}");
    assert!(text.contains("条短线伏笔已过计划回收区间"), "{text}");
    assert!(
        text.contains("第 60 章：") && text.contains("第 58 章："),
        "{text}"
    );
    assert!(text.contains("《合成测试小说》"));
}

#[test]
fn hook_outside_a_project_is_silent() {
    let tmp = tempfile::tempdir().unwrap();
    let out = run_hook(tmp.path(), Some(&hook_stdin(tmp.path(), "startup")));
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert!(out.stdout.is_empty(), "{}", stdout(&out));
    // A cwd that does not exist, garbage, empty and absent stdin: still silent, still 0.
    let gone = tmp.path().join("gone");
    for stdin in [
        Some(hook_stdin(&gone, "resume")),
        Some("not json {".to_string()),
        Some(String::new()),
        None,
    ] {
        let out = run_hook(tmp.path(), stdin.as_deref());
        assert_eq!(code(&out), 0);
        assert!(out.stdout.is_empty(), "{}", stdout(&out));
    }
}

#[test]
fn hook_without_stdin_uses_the_working_directory() {
    let (_t, root) = synth(30);
    for stdin in [None, Some(""), Some("\u{0}\u{1}garbage")] {
        let out = run_hook(&root, stdin);
        assert_eq!(code(&out), 0);
        let text = stdout(&out);
        assert!(text.contains("已完成 30 章"), "{text}");
        // At chapter 30 the brief and the consistency check are due: reviewed first, then on.
        assert!(
            text.contains("下一步是：novel review brief（做完回顾再写第 31 章）"),
            "{text}"
        );
    }
}

#[test]
fn hook_never_fails_and_stays_under_the_cap() {
    let (_t, root) = synth(30);
    // Huge summaries are cut at character boundaries.
    for n in 28..=30 {
        let rel = format!("summaries/chapter-{n:03}-summary.md");
        std::fs::write(
            root.join(rel),
            format!("---\nchapter: {n}\n---\n{}", "陆尘拔剑。".repeat(4_000)),
        )
        .unwrap();
    }
    let out = novel(&root, &["context", "session-start"]);
    assert_eq!(code(&out), 0);
    let text = stdout(&out);
    assert!(text.chars().count() <= 10_000, "{}", text.chars().count());
    assert!(text.contains("…"));
    // A 20,000-character title is cut; the progress line and the summaries still come.
    let settings_path = root.join("novel.json");
    let mut settings = read_json(&settings_path);
    settings["title"] = json!("长".repeat(20_000));
    write_json(&settings_path, &settings);
    let text = stdout(&novel(&root, &["context", "session-start"]));
    assert!(text.chars().count() <= 10_000);
    assert!(text.contains("- 进度："), "{text}");
    assert!(text.contains("第 30 章"), "{text}");
    // A broken checkpoint: still exit 0, and it says so.
    std::fs::write(root.join(".checkpoint.json"), "{ not json").unwrap();
    let out = novel(&root, &["context", "session-start"]);
    assert_eq!(code(&out), 0);
    assert!(stdout(&out).contains("断点文件"), "{}", stdout(&out));
    // An unreadable project directory given explicitly: silent or one line, never an error.
    let out = novel(
        &root,
        &["context", "session-start", "--project", "/nonexistent/dir"],
    );
    assert_eq!(code(&out), 0);
    assert!(stdout(&out).lines().count() <= 1);
}

#[test]
fn hook_reports_locks_journals_and_spec_propagation() {
    let (_t, root) = synth(30);
    // A lock held by a live process that is not this session.
    std::fs::create_dir(root.join(".novel.lock")).unwrap();
    let alive = Alive::new();
    let host = novel_store::lock::host_name();
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    write_json(
        &root.join(".novel.lock/info.json"),
        &json!({"pid": alive.pid(), "started": "2026-01-01T00:00:00Z", "chapter": 31, "host": host,
                "token": "t0", "heartbeat": now, "started_epoch": now}),
    );
    let text = stdout(&novel(&root, &["context", "session-start"]));
    assert!(text.contains("项目锁被另一个会话持有"), "{text}");
    assert!(text.contains("novel lock status"), "{text}");
    // Stale: no heartbeat for hours.
    write_json(
        &root.join(".novel.lock/info.json"),
        &json!({"pid": 424242, "started": "2026-01-01T00:00:00Z", "chapter": 31, "host": "elsewhere",
                "token": "t0", "heartbeat": 1000, "started_epoch": 1000}),
    );
    let text = stdout(&novel(&root, &["context", "session-start"]));
    assert!(
        text.contains("僵尸锁") && text.contains("novel chapter recover"),
        "{text}"
    );
    std::fs::remove_dir_all(root.join(".novel.lock")).unwrap();
    // A pending spec propagation comes before writing on.
    set_checkpoint(&root, |cp| {
        cp["pending_actions"] = json!([{"id": "sp-001", "type": "spec_propagation"}]);
    });
    let out = novel(&root, &["--json", "context", "session-start"]);
    let doc = json(&out);
    assert_eq!(
        doc["data"]["recommendation"]["action"],
        "review_spec_propagation"
    );
    assert!(doc["data"]["text"].as_str().unwrap().contains("sp-001"));
    // An interrupted commit comes before everything.
    write_json(
        &root.join(".novel-commit-journal.json"),
        &json!({"chapter": 31}),
    );
    let doc = json(&novel(&root, &["--json", "context", "session-start"]));
    assert_eq!(doc["data"]["recommendation"]["action"], "recover");
    assert_eq!(
        doc["data"]["recommendation"]["command"],
        "novel chapter recover"
    );
}

#[test]
fn a_long_chapter_never_breaks_the_style_refiner_budget() {
    let (_t, root) = synth(30);
    set_checkpoint(&root, |cp| {
        cp["inflight_chapter"] = json!(31);
        cp["pipeline_stage"] = json!("drafted");
    });
    // The default target is 2,500–3,500 字; 6,000 字 is far past it.
    for chars in [2_400usize, 3_000, 3_500, 4_000, 6_000] {
        let body: String = "夜色压着城北的废墟，陆尘踩着碎瓦往里走，风里有一股铁锈味。"
            .chars()
            .cycle()
            .take(chars)
            .collect();
        std::fs::write(
            root.join("staging/chapters/chapter-031.md"),
            format!("# 第31章 夜探\n\n{body}\n"),
        )
        .unwrap();
        let p = packet(&root, Agent::StyleRefiner, Some(31));
        let text = p.section("chapter_text").unwrap().body();
        assert!(text.contains(&body), "{chars} 字: the chapter is never cut");
        let b = p.budget.unwrap();
        assert_eq!(b.text_allowance > 0, chars > 2_500, "{chars} 字: {b:?}");
        assert!(p.tokens() <= b.limit, "{chars} 字");
    }
}

// ---- packets after the gate: revision, rewrite, polish; the key chapter as data ------------

fn cli(root: &Path, args: &[&str]) -> serde_json::Value {
    let mut full = vec!["--json"];
    full.extend_from_slice(args);
    let out = novel(root, &full);
    assert_eq!(code(&out), 0, "{args:?}: {}{}", stdout(&out), stderr(&out));
    json(&out)
}

/// The text of a section of `novel context AGENT --chapter 1 --json`.
fn section_text(doc: &serde_json::Value, tag: &str) -> Option<String> {
    doc["data"]["sections"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["tag"] == tag)
        .map(|s| s["text"].as_str().unwrap().to_string())
}

/// A judge's evaluation of chapter 1 with every dimension at `score`.
fn judged(score: f64, fix: &str, issue: &str) -> serde_json::Value {
    let mut e = crate::test_chapter::eval_doc(1, score);
    e["required_fixes"] = json!([{"target": "第 2 段", "instruction": fix}]);
    e["issues"] = json!([issue]);
    e
}

/// Chapter 1 of a two-line project (the volume's first chapter: two judges) judged with the
/// given scores; returns the lock token.
fn chapter_one_judged(root: &Path, first: f64, second: f64) -> String {
    let token = cli(root, &["chapter", "begin", "1"])["data"]["token"]
        .as_str()
        .unwrap()
        .to_string();
    crate::test_chapter::stage_drafts(root, 1);
    cli(root, &["chapter", "stage", "drafted", "--token", &token]);
    cli(root, &["chapter", "stage", "refined", "--token", &token]);
    let dir = root.join("staging/evaluations");
    write_json(
        &dir.join("chapter-001-eval.json"),
        &judged(first, "寒山的台词改回他惯用的反问", "开场交代过多"),
    );
    let mut other = judged(second, "补上陆尘受伤的因果", "开场交代过多");
    other["violations"] = json!([{"rule_id": "W-001", "layer": "L1", "confidence": "medium",
        "description": "灵气等级交代含糊"}]);
    write_json(&dir.join("chapter-001-eval-secondary.json"), &other);
    cli(root, &["chapter", "stage", "judged", "--token", &token]);
    token
}

fn two_line_project() -> (tempfile::TempDir, PathBuf) {
    let (t, root) = crate::test_chapter::writing_project();
    std::fs::write(
        root.join("volumes/vol-01/outline.md"),
        "# 第 1 卷 · 风起\n\n## 第1章 风起\n- 故事线：main_arc\n\n## 第2章 暗潮\n- 故事线：jinghai_plan\n",
    )
    .unwrap();
    (t, root)
}

#[test]
fn quality_judge_packet_says_up_front_that_the_chapter_is_key() {
    let (_t, root) = two_line_project();
    crate::test_chapter::stage_drafts(&root, 1);
    let doc = cli(&root, &["context", "quality-judge", "--chapter", "1"]);
    assert_eq!(doc["data"]["key_chapter"], json!(["volume_first"]), "{doc}");
    assert!(section_text(&doc, "foreshadowing").is_some());
    crate::test_chapter::stage_drafts(&root, 2);
    let doc = cli(&root, &["context", "quality-judge", "--chapter", "2"]);
    assert_eq!(doc["data"]["key_chapter"], json!([]));
    let doc = cli(&root, &["context", "world-builder"]);
    assert_eq!(doc["data"]["key_chapter"], json!([]));
}

#[test]
fn revising_after_a_pause_hands_the_writer_both_judges_notes() {
    let (_t, root) = two_line_project();
    let token = chapter_one_judged(&root, 2.8, 2.5);
    let gate = cli(&root, &["chapter", "gate", "1", "--token", &token]);
    assert_eq!(gate["data"]["decision"], "pause", "{gate}");
    // The author chose "revise along the notes": allowed, and counted as a revision.
    let moved = cli(
        &root,
        &[
            "chapter",
            "stage",
            "revising",
            "--by-author",
            "--token",
            &token,
        ],
    );
    assert_eq!(moved["data"]["revision_count"], 1);
    assert!(
        root.join("logs/revisions/chapter-001/r1/chapter-001-eval-secondary.json")
            .is_file()
    );
    let doc = cli(&root, &["context", "chapter-writer", "--chapter", "1"]);
    let r = section_text(&doc, "revision").expect("revision section");
    assert!(
        r.starts_with("门控结论「暂停，等作者决定 pause」，总分 2.5（关键章双裁判：主裁判 2.8、第二裁判 2.5，取较低分）。"),
        "{r}"
    );
    assert!(
        r.contains("〔第 2 段〕寒山的台词改回他惯用的反问（主裁判）"),
        "{r}"
    );
    assert!(
        r.contains("〔第 2 段〕补上陆尘受伤的因果（第二裁判）"),
        "{r}"
    );
    assert!(
        r.contains("违反 W-001（medium）：灵气等级交代含糊（第二裁判）"),
        "{r}"
    );
    assert!(r.contains("问题：开场交代过多（主裁判、第二裁判）"), "{r}");
    assert!(
        section_text(&doc, "chapter_text")
            .unwrap()
            .contains("一灯如豆")
    );
}

#[test]
fn rewrite_names_the_archived_draft_and_polish_hands_the_refiner_the_notes() {
    let (_t, root) = two_line_project();
    let token = chapter_one_judged(&root, 1.6, 1.5);
    let gate = cli(&root, &["chapter", "gate", "1", "--token", &token]);
    assert_eq!(gate["data"]["decision"], "rewrite", "{gate}");
    cli(&root, &["chapter", "stage", "drafting", "--token", &token]);
    let doc = cli(&root, &["context", "chapter-writer", "--chapter", "1"]);
    let r = section_text(&doc, "rewrite").expect("rewrite section");
    assert!(
        r.contains("旧稿已存档：logs/revisions/chapter-001/r1/chapter-001.md"),
        "{r}"
    );
    assert!(r.contains("总分 1.5（"), "{r}");
    assert!(r.contains("补上陆尘受伤的因果"), "{r}");
    let text = doc["data"]["text"].as_str().unwrap();
    assert!(!text.contains("一灯如豆"), "never the old text: {text}");
    assert!(section_text(&doc, "revision").is_none());

    // The second round scores 3.7: polish. The refiner gets the judges' notes.
    crate::test_chapter::stage_drafts(&root, 1);
    std::fs::write(
        root.join("staging/chapters/chapter-001.md"),
        "# 第1章 风起\n\n城北的雨下了一夜，陆尘在废墟里找到半块腰牌。\n\n腰牌背面刻着一个残缺的字。\n\n他把腰牌揣进怀里，踩着积水往回走。\n\n巷口的灯笼被风吹灭了一盏。\n",
    )
    .unwrap();
    cli(&root, &["chapter", "stage", "drafted", "--token", &token]);
    cli(&root, &["chapter", "stage", "refined", "--token", &token]);
    let dir = root.join("staging/evaluations");
    // The new draft's own words, and the round before's fixes judged one by one.
    let quotes = [
        "陆尘在废墟里找到半块腰牌",
        "城北的雨下了一夜，陆尘在废墟里找到半块腰牌",
        "腰牌背面刻着一个残缺的字",
        "他把腰牌揣进怀里",
        "他把腰牌揣进怀里，踩着积水往回走",
        "巷口的灯笼被风吹灭了一盏",
        "腰牌背面刻着一个残缺的字……巷口的灯笼被风吹灭了一盏",
        "陆尘在废墟里找到半块腰牌……他把腰牌揣进怀里",
    ];
    let second_round = |mut e: serde_json::Value| {
        for (dim, q) in e["scores"]
            .as_object_mut()
            .unwrap()
            .values_mut()
            .zip(quotes)
        {
            dim["evidence"] = json!(q);
        }
        e["fix_review"] = json!([
            {"fix": "F1", "status": "not_done"},
            {"fix": "F2", "status": "partly", "evidence": "城北的雨下了一夜，陆尘在废墟里找到半块腰牌"}]);
        e
    };
    write_json(
        &dir.join("chapter-001-eval.json"),
        &second_round(judged(3.7, "雨夜的环境描写压到两句", "四字词堆叠")),
    );
    write_json(
        &dir.join("chapter-001-eval-secondary.json"),
        &second_round(judged(3.8, "腰牌出场前加一处伏笔", "句式单一")),
    );
    cli(&root, &["chapter", "stage", "judged", "--token", &token]);
    let gate = cli(&root, &["chapter", "gate", "1", "--token", &token]);
    assert_eq!(gate["data"]["decision"], "polish", "{gate}");
    let doc = cli(&root, &["context", "style-refiner", "--chapter", "1"]);
    let p = section_text(&doc, "polish").expect("polish section");
    assert!(
        p.contains("门控结论「二次润色后通过 polish」，总分 3.7（"),
        "{p}"
    );
    assert!(p.contains("问题：四字词堆叠（主裁判）"), "{p}");
    assert!(p.contains("问题：句式单一（第二裁判）"), "{p}");
    assert!(
        p.contains("文风（style_naturalness）3.7 分（主裁判）"),
        "{p}"
    );
}

/// Issue 30 item 7: each agent's prompt reserve is its body as measured, with little room to
/// spare. Fails when a body outgrows its reserve (the packet at its budget's edge would
/// overshoot the call) or the reserve drifts far above the body (packets squeezed for nothing).
#[test]
fn prompt_reserves_are_the_measured_agent_bodies() {
    let root = crate::test_client::repo();
    let mut report = Vec::new();
    for agent in Agent::ALL {
        let text =
            std::fs::read_to_string(root.join(format!("agents/{}.md", agent.name()))).unwrap();
        // The system prompt is the body after the front matter.
        let body = text
            .strip_prefix("---\n")
            .and_then(|rest| rest.split_once("\n---\n"))
            .map_or(text.as_str(), |(_, body)| body);
        let tokens = context::tokens::estimate(body);
        let reserve = agent.prompt_allowance();
        report.push(format!("{} {tokens}/{reserve}", agent.name()));
        assert!(
            tokens <= reserve,
            "agents/{}.md is {tokens} tokens, over its reserve {reserve}: trim the body or raise Agent::prompt_allowance (and the default budget with it)",
            agent.name()
        );
        assert!(
            reserve - tokens <= 1_200,
            "agents/{}.md is {tokens} tokens, its reserve {reserve}: lower Agent::prompt_allowance to the measured size",
            agent.name()
        );
    }
    eprintln!("agent bodies / reserves: {}", report.join(", "));
    // Every default budget leaves its agent at least the packet room §8.4 planned.
    let b = novel_core::model::settings::ContextBudgets::default();
    for (agent, total, room) in [
        (Agent::ChapterWriter, b.chapter_writer, 22_000),
        (Agent::Summarizer, b.summarizer, 10_500),
        (Agent::StyleRefiner, b.style_refiner, 8_500),
        (Agent::QualityJudge, b.quality_judge, 14_000),
    ] {
        assert!(
            total - agent.prompt_allowance() >= room,
            "{agent:?}: budget {total} leaves less than {room} for the packet"
        );
    }
}

/// Runs the SubagentStart commands of the real `hooks/hooks.json` (one per part) through
/// `sh -c` with the hook's stdin for `agent_type` in `cwd`; returns each part's
/// `additionalContext` (None: the part printed nothing).
fn subagent_parts(cwd: &Path, agent_type: &str) -> Vec<Option<String>> {
    let hooks = read_json(&repo().join("hooks/hooks.json"));
    let entry = &hooks["hooks"]["SubagentStart"][0];
    assert_eq!(
        entry["matcher"],
        "novel:chapter-writer|novel:summarizer|novel:style-refiner|novel:quality-judge"
    );
    let stdin = json!({"session_id": "s", "cwd": cwd, "agent_id": "a1",
        "agent_type": agent_type, "hook_event_name": "SubagentStart"})
    .to_string();
    let mut parts = Vec::new();
    for (k, hook) in entry["hooks"].as_array().unwrap().iter().enumerate() {
        let command = hook["command"].as_str().unwrap();
        assert!(command.ends_with(&format!("--part {}", k + 1)), "{command}");
        let out = sh_hook(cwd, command, Some(&stdin));
        assert_eq!(code(&out), 0, "{}", stderr(&out));
        let text = stdout(&out);
        parts.push((!text.trim().is_empty()).then(|| {
            let v: serde_json::Value = serde_json::from_str(text.trim()).unwrap();
            assert_eq!(v["hookSpecificOutput"]["hookEventName"], "SubagentStart");
            v["hookSpecificOutput"]["additionalContext"]
                .as_str()
                .unwrap()
                .to_string()
        }));
    }
    parts
}

/// The SubagentStart hook hands a pipeline agent the packet of the chapter in flight, cut into
/// parts the client takes whole (at most 10,000 characters each; a longer hook output reaches
/// the agent as a 2 KB preview and a file path, verified with 2.1.197): the parts put together
/// are `novel context <agent>` for that chapter. Agents dispatched before their stage are told
/// to return; other agents and directories get nothing.
#[test]
fn subagent_start_hands_over_the_packet_in_parts() {
    let (_t, root) = synth_with(SynthOptions {
        chapters: 30,
        chapter_chars: 6_000,
        ..SynthOptions::default()
    });
    let outside = tempfile::tempdir().unwrap();
    assert_eq!(
        subagent_parts(outside.path(), "novel:chapter-writer"),
        [None, None, None]
    );
    assert_eq!(subagent_parts(&root, "general-purpose"), [None, None, None]);
    assert_eq!(
        subagent_parts(&root, "novel:plot-architect"),
        [None, None, None]
    );
    // Nothing in flight: the writer is told what that means for its task; the Summarizer (its
    // 回填 and 重建摘要 run so) fetches its own packet.
    let writer = subagent_parts(&root, "novel:chapter-writer");
    assert!(
        writer[0].as_deref().unwrap().contains("修订候选"),
        "{writer:?}"
    );
    assert_eq!(writer[1..], [None, None]);
    assert_eq!(
        subagent_parts(&root, "novel:summarizer"),
        [None, None, None]
    );
    assert!(
        subagent_parts(&root, "novel:quality-judge")[0]
            .as_deref()
            .unwrap()
            .contains("没有在写的章节")
    );

    let begun = run_json(&root, &["chapter", "begin", "31"]).1;
    assert_eq!(begun["ok"], true, "{begun}");
    let writer = subagent_parts(&root, "novel:chapter-writer");
    let first = writer[0].as_deref().unwrap();
    assert!(first.starts_with("【novel 资料包 第 1/"), "{first}");
    assert!(
        first.contains("｜ChapterWriter 第 31 章｜项目目录 "),
        "{first}"
    );
    // The refiner and the judge are too early while the chapter is drafting.
    let refiner = subagent_parts(&root, "novel:style-refiner");
    assert!(
        refiner[0]
            .as_deref()
            .unwrap()
            .contains("还轮不到 StyleRefiner"),
        "{refiner:?}"
    );
    let judge = subagent_parts(&root, "novel:quality-judge");
    assert!(
        judge[0]
            .as_deref()
            .unwrap()
            .contains("还轮不到 QualityJudge"),
        "{judge:?}"
    );

    // A long draft: the Summarizer's packet (it carries the text) takes several parts.
    let line = "陆尘推门而入，屋里只点着一盏油灯，他在墙缝里摸到一封密信，信上只有一行字。\n";
    std::fs::write(
        root.join("staging/chapters/chapter-031.md"),
        format!("# 第31章 长夜\n\n{}", line.repeat(200)),
    )
    .unwrap();
    let parts = subagent_parts(&root, "novel:summarizer");
    let given: Vec<&str> = parts.iter().flatten().map(String::as_str).collect();
    assert!(given.len() >= 2, "{parts:?}");
    let mut whole = String::new();
    for (k, p) in given.iter().enumerate() {
        assert!(
            p.chars().count() <= 10_000,
            "part {k}: {} chars",
            p.chars().count()
        );
        let header = format!(
            "【novel 资料包 第 {}/{} 段｜Summarizer 第 31 章｜",
            k + 1,
            given.len()
        );
        assert!(p.starts_with(&header), "{}", &p[..80]);
        whole.push_str(p.split_once('\n').unwrap().1);
    }
    let fetched = stdout(&novel(&root, &["context", "summarizer", "--chapter", "31"]));
    assert_eq!(whole, fetched);
}

/// Issue 40, on the spec fixture (青云志异, chapter 34 next): 赵乾 is registered and named only
/// in an objective of chapter 34's contract (its preconditions name 苏婉 alone). The writer's
/// and the judge's packets used to leave him out (「本章在场角色由章节契约指定（1 位）」): no 语癖,
/// no L2 limits, and the judge could not tell his name from an unregistered one. Both packets
/// now carry him with his 语癖 and contract, the names → slugs of everyone registered, and the
/// people rule.
#[test]
fn a_character_named_only_in_an_objective_is_in_the_writer_and_judge_packets() {
    let (_t, root) = fixture("spec", &[]);
    edit_json(&root.join("characters/active/zhao-qian.json"), |c| {
        c["speech_patterns"] = json!(["张口先谈价钱", "爱说「规矩就是规矩」"]);
    });
    edit_json(
        &root.join("volumes/vol-02/chapter-contracts/chapter-034.json"),
        |c| {
            c["objectives"]
                .as_array_mut()
                .unwrap()
                .push(json!({"id": "OBJ-034-2",
                "type": "plot", "required": true,
                "description": "赵乾在密室里把聚灵阵的阵图卖给苏婉"}));
        },
    );
    std::fs::write(
        root.join("volumes/vol-02/outline.md"),
        "# 第 2 卷\n\n## 第34章 聚灵\n- 故事线：main_arc\n- 冲突：苏婉要赶在天黑前布下聚灵阵，阵图却在别人手里\n",
    )
    .unwrap();
    let token = json(&novel(&root, &["--json", "chapter", "begin", "34"]))["data"]["token"]
        .as_str()
        .expect("chapter 34 begun")
        .to_string();
    assert!(!token.is_empty());
    std::fs::write(
        root.join("staging/chapters/chapter-034.md"),
        "# 第34章 聚灵\n\n密室里只点着一盏灯。赵乾把阵图推过桌面，先报了价钱。\n",
    )
    .unwrap();
    for agent in ["chapter-writer", "quality-judge"] {
        let out = novel(&root, &["context", agent, "--chapter", "34"]);
        assert_eq!(code(&out), 0, "{agent}: {}{}", stdout(&out), stderr(&out));
        let p = stdout(&out);
        let chars = p
            .split("<characters")
            .nth(1)
            .and_then(|s| s.split("</characters>").next())
            .unwrap_or_else(|| panic!("{agent}: no characters section\n{p}"));
        for want in [
            "### 赵乾（zhao-qian）",
            "语癖：张口先谈价钱；爱说「规矩就是规矩」",
            "C-ZHAOQIAN-001〔behavior〕只在密室中与人交易",
            "### 苏婉（su-wan）",
            "- 赵乾 → zhao-qian",
            "- 苏婉儿 → su-wan-er",
            "- 李四 → li-si",
            "人物规则",
        ] {
            assert!(chars.contains(want), "{agent} misses {want}:\n{chars}");
        }
        assert!(
            chars.contains("点名（2 位）") && !chars.contains("### 苏婉儿"),
            "{agent}:\n{chars}"
        );
    }
}

/// The paths read more than once from disk in `once`'s scope, and how often each path was asked
/// for (what the scope saved).
fn reread(once: &novel_store::io::ReadOnce) -> (Vec<String>, u32) {
    let reads = once.reads();
    let twice = reads
        .iter()
        .filter(|(_, r)| r.disk > 1)
        .map(|(p, r)| format!("{} ×{}", p.display(), r.disk))
        .collect();
    let saved = reads.iter().map(|(_, r)| r.asked - r.disk).sum();
    (twice, saved)
}

/// One read of the book per command (issue 44): the writer's packet for chapter 301 of a
/// 300-chapter book reads each file and lists each directory once, though its parts ask for
/// several of them again (the volume's schedule and contract, the checkpoint, the cast).
#[test]
fn the_writers_packet_reads_each_file_of_the_book_once() {
    let (_tmp, root) = synth(300);
    let once = novel_store::io::ReadOnce::begin();
    let p = packet(&root, Agent::ChapterWriter, Some(301));
    let (twice, saved) = reread(&once);
    assert!(twice.is_empty(), "read again from disk: {twice:?}");
    assert!(saved >= 20, "the packet's parts share their reads: {saved}");
    let asked = |rel: &str| {
        let path = root.join(rel);
        once.reads()
            .iter()
            .find(|(p, _)| *p == path)
            .map_or(0, |(_, r)| r.asked)
    };
    assert!(asked("volumes/vol-07/storyline-schedule.json") > 1);
    assert!(asked(".checkpoint.json") > 1);
    drop(once);
    // The same packet as without the scope.
    assert_eq!(
        p.to_json(),
        packet(&root, Agent::ChapterWriter, Some(301)).to_json()
    );
}
