//! Every message an author can read is Chinese and in the author's words: for every subcommand
//! (found from the help screens, as `test_robust` does), run outside a project, in a fresh
//! project, in the demo book and with a missing file, what it prints for a person (human mode, and
//! the `message` of a JSON error, which the skills pass on) holds no English sentence (an OS or
//! parser message) and no internal name (checkpoint fields, state names, pipeline stages, agent
//! class names, the PRD). Commands (`novel …`, `/novel:…`), flags inside a command, paths, file
//! names and error codes are the author's to type or to quote, and are left alone.

use std::path::Path;
use std::process::{Command, Stdio};

use crate::support::*;
use crate::test_robust::every_invocation;

/// Words of the program that mean nothing to an author (matched as whole ASCII words).
const PROGRAM_WORDS: &[&str] = &[
    "inflight_chapter",
    "pipeline_stage",
    "orchestrator_state",
    "last_completed_chapter",
    "QUICK_START",
    "VOL_PLANNING",
    "VOL_REVIEW",
    "WRITING",
    "ERROR_RETRY",
    "INIT",
    "committed",
    "drafting",
    "drafted",
    "refined",
    "judged",
    "polished",
    "revising",
    "PlotArchitect",
    "ChapterWriter",
    "QualityJudge",
    "StyleRefiner",
    "StyleAnalyzer",
    "WorldBuilder",
    "CharacterWeaver",
    "Summarizer",
    "PRD",
];

/// ASCII words an author does read: product and format names, units, the models' names.
const AUTHOR_WORDS: &[&str] = &[
    "Claude",
    "Code",
    "JSON",
    "HTML",
    "EPUB",
    "txt",
    "md",
    "epub",
    "html",
    "json",
    "UTF",
    "BOM",
    "GB18030",
    "GBK",
    "Big5",
    "AI",
    "token",
    "tokens",
    "Opus",
    "Sonnet",
    "Haiku",
    "OK",
    "id",
    "ID",
    "vs",
    "Markdown",
    "git",
    "GitHub",
    "Rust",
    "cargo",
    "Chromium",
    "Windows",
    "macOS",
    "Linux",
    "SHA256SUMS",
];

/// The text with what an author types or quotes taken out: commands, paths, codes, URLs,
/// permission rules. Tokens are split at spaces and at Chinese punctuation.
fn prose(text: &str) -> String {
    const BREAKS: &[char] = &[
        '、', '，', '。', '：', '；', '（', '）', '「', '」', '“', '”',
    ];
    let mut out = String::new();
    for line in text.lines() {
        let mut kept = String::new();
        let mut in_command = false;
        let mut token = String::new();
        for ch in line.chars().chain(std::iter::once('\n')) {
            if ch != ' ' && ch != '\n' && !BREAKS.contains(&ch) {
                token.push(ch);
                continue;
            }
            let t = std::mem::take(&mut token);
            let ascii_only = t.is_ascii();
            let bare = t.trim_matches(|c: char| !c.is_ascii_alphanumeric() && c != '_');
            if t == "novel" || t.ends_with("/novel") || t.contains("/novel:") {
                // A command runs from `novel` (or a slash command) while its words are ASCII.
                in_command = true;
            } else if in_command && ascii_only && ch == ' ' {
                // still inside the command
            } else if in_command && ascii_only {
                in_command = false;
            } else {
                in_command = false;
                let code_like = t.contains('/')
                    || t.contains('\\')
                    || t.contains('(')
                    || bare.starts_with("E_")
                    || bare.contains('.')
                    || t.contains("--")
                    || t.starts_with('$');
                if !(code_like && ascii_only) {
                    kept.push_str(&t);
                }
            }
            if ch != '\n' {
                kept.push(ch);
            }
        }
        out.push_str(&kept);
        out.push('\n');
    }
    out
}

/// The words of `text` an author should not meet: runs of two or more English words, and the
/// program's own names.
fn offending(text: &str) -> Vec<String> {
    let text = prose(text);
    let mut found = Vec::new();
    for line in text.lines() {
        // Split into ASCII-word runs separated by non-ASCII text.
        let mut run: Vec<String> = Vec::new();
        let mut word = String::new();
        let flush_run = |run: &mut Vec<String>, found: &mut Vec<String>| {
            let english: Vec<&String> = run
                .iter()
                .filter(|w| w.len() >= 2 && !AUTHOR_WORDS.contains(&w.as_str()))
                .collect();
            if english.len() >= 2 {
                found.push(run.join(" "));
            }
            run.clear();
        };
        for ch in line.chars().chain(std::iter::once('。')) {
            if ch.is_ascii_alphanumeric() || ch == '_' || (ch == '-' && !word.is_empty()) {
                word.push(ch);
                continue;
            }
            if !word.is_empty() {
                let w = std::mem::take(&mut word);
                if PROGRAM_WORDS.contains(&w.as_str()) {
                    found.push(w.clone());
                }
                // An identifier (`lin-feng`, `range_unknown`) is a value to type, not prose.
                let identifier = w.contains('-') || w.contains('_');
                if w.chars().any(|c| c.is_ascii_alphabetic()) && !identifier {
                    run.push(w);
                } else {
                    flush_run(&mut run, &mut found);
                }
            }
            // ASCII spaces and light punctuation keep an English run going; CJK ends it.
            if !(ch == ' ' || ch == ',' || ch == '\'' || ch == '-' || ch == '(' || ch == ')') {
                flush_run(&mut run, &mut found);
            }
        }
    }
    found
}

fn run(dir: &Path, args: &[String]) -> (String, Option<String>) {
    let out = Command::new(bin())
        .args(args)
        .current_dir(dir)
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .env("LANG", "C.UTF-8")
        .env("TMPDIR", dir.parent().unwrap_or(dir))
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let human = format!("{}{}", stdout(&out), stderr(&out));
    let mut with_json = vec!["--json".to_string()];
    with_json.extend(args.iter().cloned());
    let out = Command::new(bin())
        .args(&with_json)
        .current_dir(dir)
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .env("LANG", "C.UTF-8")
        .env("TMPDIR", dir.parent().unwrap_or(dir))
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let message = serde_json::from_slice::<serde_json::Value>(&out.stdout)
        .ok()
        .and_then(|d| d["error"]["message"].as_str().map(str::to_string));
    (human, message)
}

/// Subcommands whose output is for the model or an agent, not for a person.
fn for_the_model(args: &[String]) -> bool {
    let first = args.first().map(String::as_str);
    first == Some("hook") || first == Some("context")
}

#[test]
fn the_detector_sees_english_and_program_words_and_spares_commands() {
    for bad in [
        "错误[E_IO]：读写 nope.md 失败：entity not found",
        "读写 x 失败：No such file or directory (os error 2)",
        "现在没有正在写的章节（断点中 inflight_chapter 为空）",
        "状态：WRITING（卷内写作）；流水线：committed",
        "按 PRD §12.1 估算",
        "派 PlotArchitect 重写大纲",
    ] {
        assert!(!offending(bad).is_empty(), "not caught: {bad}");
    }
    for good in [
        "提示：运行 novel chapter recover --json 再继续",
        "用 /novel:continue 3 接着写",
        "读写 chapters/chapter-001.md 失败：文件不存在",
        "费用 $0.42（Sonnet），共 12,000 tokens",
        "错误[E_NO_CHAPTER]：还没有已提交的章节",
        "导出为 EPUB，已写入 book.epub",
        "设 NOVEL_RELEASE_URL 指向镜像",
    ] {
        assert_eq!(offending(good), Vec::<String>::new(), "{good}");
    }
}

#[test]
fn every_subcommand_speaks_to_the_author_in_chinese() {
    let t = tempfile::tempdir().unwrap();
    let outside = t.path().join("outside");
    std::fs::create_dir(&outside).unwrap();
    let fresh = t.path().join("fresh");
    let out = novel(
        t.path(),
        &["init", "fresh", "--title", "青云志异", "--genre", "玄幻"],
    );
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let demo = t.path().join("demo");
    let out = novel(t.path(), &["demo", demo.to_str().unwrap()]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));

    let mut problems = Vec::new();
    for (path, args) in every_invocation() {
        if for_the_model(&args) || path == "init" || path == "demo" {
            continue;
        }
        for (place, dir) in [("项目外", &outside), ("新项目", &fresh), ("示例书", &demo)] {
            let (human, message) = run(dir, &args);
            for w in offending(&human) {
                problems.push(format!(
                    "novel {} ({place}) 屏幕上：{w}\n    {}",
                    args.join(" "),
                    human.lines().take(3).collect::<Vec<_>>().join(" / ")
                ));
            }
            if let Some(m) = message {
                for w in offending(&m) {
                    problems.push(format!(
                        "novel --json {} ({place}) message：{w}\n    {m}",
                        args.join(" ")
                    ));
                }
            }
        }
    }
    // A missing file, a mistyped path: the operating system's words never reach the author.
    for args in [
        vec!["lint", "不存在.md"],
        vec!["count", "不存在.md"],
        vec!["import", "不存在.txt"],
        vec!["style", "metrics", "不存在.md"],
        vec!["validate", "不存在.json"],
        vec!["ops", "validate", "不存在.json"],
    ] {
        let args: Vec<String> = args.into_iter().map(String::from).collect();
        let (human, message) = run(&fresh, &args);
        for w in offending(&human)
            .into_iter()
            .chain(message.iter().flat_map(|m| offending(m)))
        {
            problems.push(format!(
                "novel {} (缺文件)：{w}\n    {human}",
                args.join(" ")
            ));
        }
    }
    problems.sort();
    problems.dedup();
    assert!(
        problems.is_empty(),
        "{} messages an author would meet in English or program words:\n{}",
        problems.len(),
        problems.join("\n")
    );
}

/// The `$ novel …` blocks of a snapshot file: (command line, stdout + stderr).
fn snapshot_blocks(text: &str) -> Vec<(String, String)> {
    let mut blocks = Vec::new();
    for block in text.split("\n$ ").map(|b| b.trim_start_matches("$ ")) {
        let Some((line, rest)) = block.split_once('\n') else {
            continue;
        };
        let body = rest.replace("--- stdout\n", "").replace("--- stderr\n", "");
        let body = body
            .lines()
            .filter(|l| !l.starts_with("exit: "))
            .collect::<Vec<_>>()
            .join("\n");
        blocks.push((line.to_string(), body));
    }
    blocks
}

/// What the skills pass on from a JSON reply: its messages, reasons, labels and notes.
fn relayed_strings(v: &serde_json::Value, key: &str, out: &mut Vec<String>) {
    const RELAYED: &[&str] = &[
        "message", "reason", "why", "label", "then", "notes", "headline",
    ];
    match v {
        serde_json::Value::String(s) if RELAYED.contains(&key) => out.push(s.clone()),
        serde_json::Value::Array(items) => {
            for i in items {
                relayed_strings(i, key, out);
            }
        }
        serde_json::Value::Object(map) => {
            for (k, i) in map {
                relayed_strings(i, k, out);
            }
        }
        _ => {}
    }
}

#[test]
fn the_pinned_outputs_speak_to_the_author_in_chinese() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/snapshots/commands");
    let mut problems = Vec::new();
    let mut seen = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        let text = std::fs::read_to_string(&path).unwrap();
        for (line, body) in snapshot_blocks(&text) {
            let words: Vec<&str> = line.split_whitespace().collect();
            let sub = words.iter().find(|w| !w.starts_with('-') && **w != "novel");
            if matches!(sub, Some(&"context") | Some(&"hook") | Some(&"demo")) {
                continue;
            }
            seen += 1;
            let said: Vec<String> = if line.contains("--json") {
                let mut out = Vec::new();
                for doc in body.lines().filter_map(|l| serde_json::from_str(l).ok()) {
                    relayed_strings(&doc, "", &mut out);
                }
                out
            } else {
                vec![body]
            };
            for s in said {
                for w in offending(&s) {
                    problems.push(format!(
                        "{}: $ {line}: {w}",
                        path.file_name().unwrap().to_string_lossy()
                    ));
                }
            }
        }
    }
    assert!(seen > 100, "only {seen} blocks read from {}", dir.display());
    problems.sort();
    problems.dedup();
    assert!(
        problems.is_empty(),
        "{} pinned outputs an author would read in English or program words:\n{}",
        problems.len(),
        problems.join("\n")
    );
}
