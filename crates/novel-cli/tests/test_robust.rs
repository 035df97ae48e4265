//! No panic reaches the author, for every subcommand: a reader that goes away (`novel … | head`)
//! ends the output quietly, and a panic inside any command (injected in debug builds with
//! `NOVEL_FAILPOINT=panic:0`) becomes the JSON error envelope or one Chinese line, exit 2 — or,
//! for the hooks, nothing on stdout and exit 0 (a hook never blocks the author on our bug).
//!
//! The subcommands are found the way an author finds them, from the help screens, and each gets
//! the first argument line that parses (checked with `NOVEL_PARSE_ONLY=1`).

use std::path::Path;
use std::process::{Command, Output, Stdio};

use crate::support::*;

/// Every leaf subcommand path (`["chapter", "begin"]`…), from `novel [path] --help`.
fn leaves(path: &[String], out: &mut Vec<Vec<String>>) {
    let help = Command::new(bin())
        .args(path)
        .arg("--help")
        .output()
        .unwrap();
    let text = String::from_utf8(help.stdout).unwrap();
    let mut subs = Vec::new();
    let mut in_commands = false;
    for line in text.lines() {
        if line.starts_with("命令") {
            in_commands = true;
            continue;
        }
        if in_commands {
            if line.is_empty() || !line.starts_with(' ') {
                in_commands = false;
                continue;
            }
            // "  name   description"; continuation lines are indented further.
            if line.starts_with("  ") && !line.starts_with("   ") {
                let name = line.split_whitespace().next().unwrap().to_string();
                if name != "help" {
                    subs.push(name);
                }
            }
        }
    }
    if subs.is_empty() {
        out.push(path.to_vec());
    }
    for s in subs {
        let mut p = path.to_vec();
        p.push(s);
        leaves(&p, out);
    }
}

fn parses(args: &[String]) -> bool {
    Command::new(bin())
        .args(args)
        .env("NOVEL_PARSE_ONLY", "1")
        .output()
        .unwrap()
        .status
        .success()
}

/// The subcommand with values for its required arguments (`<值>` in its usage line), the first
/// combination that parses.
fn invocation(path: &[String]) -> Vec<String> {
    let help = Command::new(bin())
        .args(path)
        .arg("--help")
        .output()
        .unwrap();
    let text = String::from_utf8(help.stdout).unwrap();
    let usage = text
        .lines()
        .find(|l| l.starts_with("用法："))
        .unwrap_or_else(|| panic!("no usage line for {path:?}:\n{text}"));
    let usage = first_alternatives(usage);
    // Required parts: what is outside [ ] — `<章>`, `--token <令牌>`.
    let mut required = Vec::new();
    let mut depth = 0;
    let mut word = String::new();
    for ch in usage.chars().chain(std::iter::once(' ')) {
        match ch {
            '[' => depth += 1,
            ']' => depth -= 1,
            c if c.is_whitespace() => {
                if depth == 0 && (word.starts_with('<') || word.starts_with("--")) {
                    required.push(word.clone());
                }
                word.clear();
            }
            c if depth == 0 => word.push(c),
            _ => {}
        }
    }
    let candidates = [
        "1",
        "1..2",
        "x.json",
        "brief",
        "pending",
        "chapter-writer",
        "W-001",
    ];
    let slots = required.iter().filter(|w| w.starts_with('<')).count();
    let mut choice = vec![0usize; slots];
    loop {
        let mut args = path.to_vec();
        let mut k = 0;
        for w in &required {
            if w.starts_with('<') {
                args.push(candidates[choice[k]].to_string());
                k += 1;
            } else {
                args.push(w.clone());
            }
        }
        if parses(&args) {
            return args;
        }
        // Next combination (odometer).
        let mut i = 0;
        loop {
            if i == slots {
                panic!("no argument line parses for {path:?} (usage: {usage})");
            }
            choice[i] += 1;
            if choice[i] < candidates.len() {
                break;
            }
            choice[i] = 0;
            i += 1;
        }
    }
}

/// A required group of alternatives (`<--apply <ID,…>...|--all>`) becomes its last one (`--all`).
fn first_alternatives(usage: &str) -> String {
    let chars: Vec<char> = usage.chars().collect();
    let mut out = String::new();
    let mut i = 0;
    while i < chars.len() {
        if chars[i] == '<' && chars.get(i + 1) == Some(&'-') {
            // Find the matching '>' and the '|' at this group's own depth.
            let (mut depth, mut j, mut bar) = (0, i, None);
            while j < chars.len() {
                match chars[j] {
                    '<' => depth += 1,
                    '>' => {
                        depth -= 1;
                        if depth == 0 {
                            break;
                        }
                    }
                    '|' if depth == 1 => bar = Some(j),
                    _ => {}
                }
                j += 1;
            }
            if let Some(bar) = bar {
                out.extend(&chars[bar + 1..j]);
                i = j + 1;
                continue;
            }
        }
        out.push(chars[i]);
        i += 1;
    }
    out
}

/// Every leaf subcommand: its path and an argument line for it.
pub(crate) fn every_invocation() -> Vec<(String, Vec<String>)> {
    let mut paths = Vec::new();
    leaves(&[], &mut paths);
    // `hook` is hidden from the help screen (Claude Code calls it, not the author).
    leaves(&["hook".to_string()], &mut paths);
    assert!(
        paths.len() > 40,
        "only {} subcommands found: {paths:?}",
        paths.len()
    );
    for must in [
        ["chapter", "commit"],
        ["hook", "pre-tool-use"],
        ["context", "session-start"],
    ] {
        assert!(
            paths.iter().any(|p| p == &must),
            "{must:?} not found in {paths:?}"
        );
    }
    paths.iter().map(|p| (p.join(" "), invocation(p))).collect()
}

fn run_in(dir: &Path, args: &[String], env: &[(&str, &str)], stdout: Stdio) -> Output {
    let mut cmd = Command::new(bin());
    // `demo` without a directory writes a book into the temp directory: the test's own, so a
    // run leaves nothing behind.
    cmd.args(args)
        .current_dir(dir)
        .env("TMPDIR", dir.parent().unwrap_or(dir))
        .stdin(Stdio::null())
        .stdout(stdout)
        .stderr(Stdio::piped());
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.output().unwrap()
}

#[test]
fn a_panic_in_any_subcommand_is_one_clean_error() {
    let t = tempfile::tempdir().unwrap();
    let book = t.path().join("book");
    let out = novel(t.path(), &["demo", book.to_str().unwrap()]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let panic = [("NOVEL_FAILPOINT", "panic:0")];
    for (path, args) in every_invocation() {
        let hook = args[0] == "hook"
            || args.starts_with(&["context".to_string(), "session-start".to_string()])
            || args.starts_with(&["context".to_string(), "subagent-start".to_string()]);
        // Human.
        let out = run_in(&book, &args, &panic, Stdio::piped());
        let err = stderr(&out);
        assert!(!err.contains("panicked"), "{args:?}: {err}");
        if hook {
            assert_eq!(code(&out), 0, "{args:?}: {err}");
            assert_eq!(stdout(&out), "", "{args:?}");
            assert!(err.contains("内部错误"), "{args:?}: {err}");
            continue;
        }
        assert_eq!(code(&out), 2, "{args:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
        assert!(
            err.starts_with("错误[E_INTERNAL]：novel 程序内部出错"),
            "{args:?}: {err}"
        );
        assert!(err.contains("novel validate"), "{args:?}: {err}");
        // JSON.
        let mut with_json = vec!["--json".to_string()];
        with_json.extend(args.iter().cloned());
        let out = run_in(&book, &with_json, &panic, Stdio::piped());
        assert_eq!(code(&out), 2, "{with_json:?}: {}", stderr(&out));
        assert_eq!(stderr(&out), "", "{with_json:?}");
        let doc = json(&out);
        assert_eq!(doc["ok"], false, "{doc}");
        assert_eq!(doc["error"]["code"], "E_INTERNAL", "{doc}");
        assert_eq!(doc["command"], path, "{doc}");
        assert!(!doc["error"]["hint"].as_str().unwrap().is_empty(), "{doc}");
    }
}

#[test]
fn a_closed_stdout_ends_every_subcommand_quietly() {
    let t = tempfile::tempdir().unwrap();
    let book = t.path().join("book");
    let out = novel(t.path(), &["demo", book.to_str().unwrap()]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    for (_, args) in every_invocation() {
        for json_mode in [false, true] {
            let mut line = if json_mode {
                vec!["--json".to_string()]
            } else {
                vec![]
            };
            line.extend(args.iter().cloned());
            // A pipe whose reader is already gone: the first write fails with EPIPE.
            let (reader, writer) = std::io::pipe().unwrap();
            drop(reader);
            let out = run_in(&book, &line, &[], Stdio::from(writer));
            let err = stderr(&out);
            assert!(
                !err.contains("panicked") && !err.contains("Broken pipe"),
                "{line:?}: {err}"
            );
            assert!(
                matches!(code(&out), 0..=3),
                "{line:?} exited {}: {err}",
                code(&out)
            );
        }
    }
    // Where the answer is a success, the quiet end is exit 0 (like `rg … | head`).
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    let out = run_in(&book, &["status".to_string()], &[], Stdio::from(writer));
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(stderr(&out), "");
}

#[test]
fn a_failed_check_piped_into_head_keeps_its_exit_code() {
    let t = tempfile::tempdir().unwrap();
    let book = t.path().join("book");
    novel(t.path(), &["demo", book.to_str().unwrap()]);
    // The demo book has a planted cliché: lint --all fails (exit 1) whether or not anyone reads.
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    let args: Vec<String> = ["--json", "lint", "--all"].map(String::from).to_vec();
    let out = run_in(&book, &args, &[], Stdio::from(writer));
    assert_eq!(code(&out), 1, "{}", stderr(&out));
    assert_eq!(stderr(&out), "");
}
