//! Every command a model reads runs as written in the Bash tool.
//!
//! The client substitutes `${CLAUDE_PLUGIN_ROOT}` (and `$ARGUMENTS`, `${CLAUDE_PLUGIN_DATA}`,
//! `${CLAUDE_SKILL_DIR}`) in the body of a `SKILL.md` and of an agent only; a reference file the
//! model opens with Read reaches it raw, and the Bash tool has no such variable. The plugin's
//! `bin/` is appended to the Bash tool's PATH, so a command written `novel …` runs everywhere.
//!
//! This test extracts every command line from every Markdown file a model may read
//! (`skills/**/*.md`, `agents/*.md`): each line of a ```` ```bash ```` fence (comments and blank
//! lines skipped, `\` continuations joined), each inline code span that starts with the command
//! (`novel …`, or the old `"${CLAUDE_PLUGIN_ROOT}/scripts/novel" …`), and each `` !`…` `` line
//! (run by the client before the skill body is sent). It substitutes what the client substitutes
//! in that file and the placeholders of `docs/orchestration.md` §10 (the table of `test_plugin`),
//! then runs each line as the Bash tool would: `bash -c LINE`, in an environment without
//! `CLAUDE_PLUGIN_ROOT`, PATH = system directories + the plugin's `bin/`, `NOVEL_PARSE_ONLY=1`
//! (the binary only parses its arguments: `ok` and exit 0, or exit 2) and `NOVEL_BIN` = this
//! test's build. A line that calls the binary must exit 0 and print `ok`; any other line's
//! program must exist (it is not run). Every problem is reported as `file:line`, and so is a
//! `${CLAUDE_PLUGIN_ROOT}` anywhere in a file the client does not substitute.
//!
//! `markdown_token_estimate` (CJK characters × 0.7 + other characters ÷ 4) bounds the body of
//! the entry skills: the client re-attaches an invoked skill after compaction cut to 5,000
//! tokens (by its own measure, characters ÷ 4, which is checked too).
#![cfg(unix)]

use std::path::Path;
use std::process::Command;

use crate::support::bin;
use crate::test_plugin::{
    Doc, PLACEHOLDERS, assert_none, fence_marker, frontmatter, plugin_docs, repo,
};

/// Who runs a command line.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Via {
    /// The model, with the Bash tool (a line of a ```` ```bash ```` fence, an inline code span).
    Bash,
    /// The client, before the skill body is sent (a `` !`…` `` line of a SKILL.md).
    Client,
}

/// A command line found in a Markdown file.
#[derive(Debug, Clone, PartialEq)]
struct CommandLine {
    /// 1-based line of the file.
    line: usize,
    text: String,
    via: Via,
}

/// The old form of a call of the binary, valid only where the client substitutes it.
const OLD_MARKER: &str = "\"${CLAUDE_PLUGIN_ROOT}/scripts/novel\"";

/// Whether the client substitutes `${CLAUDE_PLUGIN_ROOT}` & co. in this file (a skill's
/// `SKILL.md` or an agent), as opposed to a file the model opens with Read.
fn substituted(rel: &str) -> bool {
    let parts: Vec<&str> = rel.split('/').collect();
    matches!(parts.as_slice(), ["skills", _, "SKILL.md"] | ["agents", _])
}

/// The inline code spans of a line (a run of N backticks closed by a run of N).
fn code_spans(line: &str) -> Vec<&str> {
    let b = line.as_bytes();
    let run = |at: usize| b[at..].iter().take_while(|c| **c == b'`').count();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        if b[i] != b'`' {
            i += 1;
            continue;
        }
        let n = run(i);
        let open_end = i + n;
        let mut j = open_end;
        let mut close = None;
        while j < b.len() {
            if b[j] == b'`' {
                let m = run(j);
                if m == n {
                    close = Some(j);
                    break;
                }
                j += m;
            } else {
                j += 1;
            }
        }
        match close {
            Some(j) => {
                out.push(&line[open_end..j]);
                i = j + n;
            }
            None => i = open_end,
        }
    }
    out
}

/// Whether an inline code span is a command to run (rather than a mention).
fn is_command_span(span: &str) -> bool {
    let s = span.trim();
    s.starts_with("novel ") || s.starts_with(OLD_MARKER)
}

/// Every command line of `text` (its frontmatter skipped).
fn command_lines(text: &str) -> Vec<CommandLine> {
    let start = frontmatter(text).map(|(_, next)| next).unwrap_or(0);
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::new();
    // The open fence: marker, length, and whether it holds shell commands.
    let mut open: Option<(char, usize, bool)> = None;
    let mut i = start;
    while i < lines.len() {
        let line = lines[i];
        let no = i + 1;
        i += 1;
        match (open, fence_marker(line)) {
            (None, Some((c, n, info))) => {
                let lang = info.split_whitespace().next().unwrap_or("");
                open = Some((c, n, matches!(lang, "bash" | "sh" | "shell")));
                continue;
            }
            (Some((c, n, _)), Some((c2, n2, info))) if c == c2 && n2 >= n && info.is_empty() => {
                open = None;
                continue;
            }
            _ => {}
        }
        match open {
            Some((_, _, true)) => {
                let mut joined = line.trim().to_string();
                while joined.ends_with('\\') && i < lines.len() {
                    joined.pop();
                    joined = format!("{} {}", joined.trim_end(), lines[i].trim());
                    i += 1;
                }
                if !joined.is_empty() && !joined.starts_with('#') {
                    out.push(CommandLine {
                        line: no,
                        text: joined,
                        via: Via::Bash,
                    });
                }
            }
            Some(_) => {}
            None => {
                let spans = code_spans(line);
                if line.trim_start().starts_with("!`") {
                    if let Some(first) = spans.first() {
                        out.push(CommandLine {
                            line: no,
                            text: first.trim().to_string(),
                            via: Via::Client,
                        });
                    }
                    continue;
                }
                for span in spans.into_iter().filter(|s| is_command_span(s)) {
                    out.push(CommandLine {
                        line: no,
                        text: span.trim().to_string(),
                        via: Via::Bash,
                    });
                }
            }
        }
    }
    out
}

/// The first `<WORD>` of `s` that is not a placeholder of the vocabulary (after substitution
/// every placeholder is gone, so any `<…>` without whitespace inside is one).
fn unknown_placeholder(s: &str) -> Option<String> {
    let mut rest = s;
    while let Some(open) = rest.find('<') {
        let after = &rest[open + 1..];
        match after.find('>') {
            Some(close) if close > 0 && !after[..close].contains(char::is_whitespace) => {
                return Some(after[..close].to_string());
            }
            _ => rest = after,
        }
    }
    None
}

/// The sandbox a line runs in: its working directory, HOME and the plugin data directory.
struct Sandbox {
    tmp: tempfile::TempDir,
}

impl Sandbox {
    fn new() -> Self {
        let tmp = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(tmp.path().join("home")).unwrap();
        std::fs::create_dir_all(tmp.path().join("data")).unwrap();
        Sandbox { tmp }
    }

    fn dir(&self) -> &Path {
        self.tmp.path()
    }

    /// `bash -c SCRIPT ARGS…` the way the Bash tool runs a command: no CLAUDE_PLUGIN_ROOT,
    /// PATH = system directories + the plugin's `bin/` (at the end, as the client appends it),
    /// parse-only, the test build as NOVEL_BIN.
    fn bash(&self, script: &str, args: &[&str]) -> std::process::Output {
        Command::new("bash")
            .arg("-c")
            .arg(script)
            .arg("bash")
            .args(args)
            .env_clear()
            .env(
                "PATH",
                format!("/usr/bin:/bin:{}", repo().join("bin").display()),
            )
            .env("HOME", self.dir().join("home"))
            .env("LANG", "C.UTF-8")
            .env("NOVEL_PARSE_ONLY", "1")
            .env("NOVEL_BIN", bin())
            .current_dir(self.dir())
            .output()
            .expect("run bash")
    }
}

/// `text` as the shell sees it: what the client substitutes in `rel`, then the placeholders.
fn prepared(rel: &str, text: &str, sandbox: &Sandbox) -> String {
    let mut s = text.to_string();
    if substituted(rel) {
        let skill_dir = match rel.split('/').collect::<Vec<_>>().as_slice() {
            ["skills", dir, ..] => repo().join("skills").join(dir),
            _ => repo(),
        };
        s = s
            .replace("${CLAUDE_PLUGIN_ROOT}", &repo().to_string_lossy())
            .replace("${CLAUDE_SKILL_DIR}", &skill_dir.to_string_lossy())
            .replace(
                "${CLAUDE_PLUGIN_DATA}",
                &sandbox.dir().join("data").to_string_lossy(),
            );
    }
    for (p, v) in PLACEHOLDERS {
        if p == "$ARGUMENTS" && !substituted(rel) {
            continue;
        }
        s = s.replace(p, v);
    }
    s
}

/// Whether the program of a prepared line is the binary (by the name the Markdown calls it).
fn calls_the_binary(program: &str) -> bool {
    program == "novel" || program.ends_with("/scripts/novel") || program.ends_with("/bin/novel")
}

/// The first line of an output, for a report.
fn first_line(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes)
        .lines()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("")
        .to_string()
}

/// Why `cmd` of `doc` does not run as written, if it does not.
fn run_problem(doc: &Doc, cmd: &CommandLine, sandbox: &Sandbox) -> Option<String> {
    if cmd.via == Via::Client && !substituted(&doc.rel) {
        return Some("a `!` line runs only in a SKILL.md".into());
    }
    let line = prepared(&doc.rel, &cmd.text, sandbox);
    if let Some(p) = unknown_placeholder(&line) {
        return Some(format!(
            "placeholder <{p}> is not in the vocabulary of docs/orchestration.md §10"
        ));
    }
    let Some(words) = shlex::split(&line) else {
        return Some("unbalanced quotes".into());
    };
    let program = words.first().map(String::as_str).unwrap_or("");
    if calls_the_binary(program) {
        let out = sandbox.bash(&line, &[]);
        let said_ok = String::from_utf8_lossy(&out.stdout)
            .lines()
            .any(|l| l.trim() == "ok");
        if out.status.code() == Some(0) && said_ok {
            return None;
        }
        let why = match first_line(&out.stderr) {
            e if !e.is_empty() => e,
            _ => first_line(&out.stdout),
        };
        return Some(format!("exit {:?}: {why}", out.status.code()));
    }
    // Another program (a script of the plugin, grep …): it must exist; it is not run.
    let out = sandbox.bash(r#"command -v -- "$1""#, &[program]);
    if out.status.success() {
        None
    } else {
        Some(format!("`{program}`: command not found"))
    }
}

/// Problems of every command line of `docs`, and how many command lines there were.
fn command_problems(docs: &[Doc]) -> (Vec<String>, usize) {
    let sandbox = Sandbox::new();
    let mut out = Vec::new();
    let mut count = 0;
    for doc in docs {
        if !substituted(&doc.rel) {
            for (no, line) in doc.text.lines().enumerate() {
                if line.contains("${CLAUDE_PLUGIN_ROOT}") {
                    out.push(format!(
                        "{}:{}: ${{CLAUDE_PLUGIN_ROOT}} is not substituted in a file opened with Read, and the Bash tool has no such variable\n    {}",
                        doc.rel,
                        no + 1,
                        line.trim()
                    ));
                }
            }
        }
        for cmd in command_lines(&doc.text) {
            count += 1;
            if let Some(why) = run_problem(doc, &cmd, &sandbox) {
                out.push(format!("{}:{}: {why}\n    {}", doc.rel, cmd.line, cmd.text));
            }
        }
    }
    (out, count)
}

#[test]
fn every_command_a_model_reads_runs_in_the_bash_tool() {
    let docs = plugin_docs(&repo());
    let (problems, count) = command_problems(&docs);
    eprintln!(
        "ran {count} command line(s) of {} Markdown file(s) as the Bash tool would",
        docs.len()
    );
    assert!(count >= 100, "only {count} command lines found");
    assert_none("command line", problems);
}

fn fake(rel: &str, text: &str) -> Doc {
    Doc {
        rel: rel.into(),
        text: text.into(),
    }
}

/// The extraction and the runner catch what the real client would trip over.
#[test]
fn command_check_catches_lines_that_do_not_run() {
    let reference = fake(
        "skills/continue/references/x.md",
        "# 参考\n\n\
         照下面运行：\n\n\
         ```bash\n\
         novel --project \"<DIR>\" chapter begin <N> --json\n\
         \"${CLAUDE_PLUGIN_ROOT}/scripts/novel\" --project \"<DIR>\" next --json\n\
         novel --project \"<DIR>\" chapter gate --json\n\
         # a comment\n\
         novel --project \"<DIR>\" \\\n  status --json | head -n 3\n\
         novel --project \"<DIR>\" ops validate <CHAPTER_FILE> --json\n\
         nosuchprogram --flag\n\
         ```\n\n\
         表格里 `novel --project \"<DIR>\" lint --chapter <N>` 与提到的 `chapter gate`、```` ```json ```` 。\n\
         读 `${CLAUDE_PLUGIN_ROOT}/docs/errors.md`。\n",
    );
    let found = command_lines(&reference.text);
    assert_eq!(
        found.iter().map(|c| c.line).collect::<Vec<_>>(),
        vec![6, 7, 8, 10, 12, 13, 16],
        "{found:#?}"
    );
    assert_eq!(
        found[3].text,
        "novel --project \"<DIR>\" status --json | head -n 3"
    );
    let (problems, count) = command_problems(std::slice::from_ref(&reference));
    assert_eq!(count, 7);
    let at: Vec<&str> = problems
        .iter()
        .map(|p| p.split(": ").next().unwrap())
        .collect();
    assert_eq!(
        at,
        [
            "skills/continue/references/x.md:7",
            "skills/continue/references/x.md:17",
            "skills/continue/references/x.md:7",
            "skills/continue/references/x.md:8",
            "skills/continue/references/x.md:12",
            "skills/continue/references/x.md:13",
        ],
        "{problems:#?}"
    );
    assert!(problems[2].contains("exit Some(127)"), "{}", problems[2]);
    assert!(problems[3].contains("exit Some(2)"), "{}", problems[3]);
    assert!(problems[4].contains("<CHAPTER_FILE>"), "{}", problems[4]);
    assert!(problems[5].contains("nosuchprogram"), "{}", problems[5]);

    // In a SKILL.md or an agent body the client substitutes the plugin root, so the old form
    // runs there; `!` lines run there too, and nowhere else.
    let skill = fake(
        "skills/status/SKILL.md",
        "---\nname: status\n---\n!`\"${CLAUDE_PLUGIN_ROOT}/scripts/novel\" status 2>&1 || true`\n\
         运行 `\"${CLAUDE_PLUGIN_ROOT}/scripts/novel\" --project \"<DIR>\" next --json`。\n\
         ```bash\n\"${CLAUDE_PLUGIN_ROOT}/scripts/install\" \"${CLAUDE_PLUGIN_DATA}\"\n```\n",
    );
    let (problems, count) = command_problems(std::slice::from_ref(&skill));
    assert_eq!(count, 3);
    assert_none("a SKILL.md", problems);
    let misplaced = fake(
        "skills/status/references/y.md",
        "!`novel status 2>&1 || true`\n",
    );
    let (problems, _) = command_problems(std::slice::from_ref(&misplaced));
    assert_eq!(problems.len(), 1, "{problems:#?}");

    // A line that masks its exit code still fails when the binary never said `ok`.
    let masked = fake(
        "agents/fake.md",
        "---\nname: fake\n---\n```bash\nnovel chapter begin 2>&1 || true\n```\n",
    );
    let (problems, _) = command_problems(std::slice::from_ref(&masked));
    assert_eq!(problems.len(), 1, "{problems:#?}");
}

/// `novel` is found only through the plugin's `bin/`: without it the same line is exit 127.
#[test]
fn novel_runs_through_the_plugins_bin_only() {
    let sandbox = Sandbox::new();
    let out = sandbox.bash(
        "command -v novel && novel --project /tmp/p next --json",
        &[],
    );
    let said = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{said}");
    let mut lines = said.lines();
    assert_eq!(
        lines.next(),
        Some(repo().join("bin/novel").to_string_lossy().as_ref())
    );
    assert_eq!(lines.next(), Some("ok"));
    let without = Command::new("bash")
        .args(["-c", "novel --version"])
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .env("NOVEL_BIN", bin())
        .output()
        .unwrap();
    assert_eq!(without.status.code(), Some(127));
}

// ---- Size of a skill's body --------------------------------------------------------------------

/// The tokens the client keeps of an invoked skill after compaction.
pub(crate) const SKILL_TOKEN_LIMIT: usize = 5000;

/// A token estimate for Chinese Markdown: CJK characters (ideographs, CJK punctuation,
/// full-width forms) × 0.7 + other characters ÷ 4, rounded.
pub(crate) fn markdown_token_estimate(text: &str) -> usize {
    let cjk = |c: char| {
        matches!(c as u32,
            0x3000..=0x303F | 0x3400..=0x4DBF | 0x4E00..=0x9FFF | 0xF900..=0xFAFF
            | 0xFF00..=0xFFEF | 0x20000..=0x2FFFF)
    };
    let (mut wide, mut other) = (0usize, 0usize);
    for c in text.chars() {
        if cjk(c) {
            wide += 1;
        } else {
            other += 1;
        }
    }
    ((wide as f64) * 0.7 + (other as f64) / 4.0).round() as usize
}

/// The body the client sends for a skill (frontmatter removed).
fn skill_body(rel: &str) -> String {
    let text = std::fs::read_to_string(repo().join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"));
    let start = frontmatter(&text).map(|(_, next)| next).unwrap_or(0);
    text.lines().skip(start).collect::<Vec<_>>().join("\n")
}

/// The client's own measure when it re-attaches an invoked skill after compaction (2.1.197:
/// the body as sent, UTF-16 length ÷ 4, cut beyond 5,000). The plugin root is substituted: a
/// cached plugin's root is some 70 characters long.
fn client_token_measure(body: &str) -> usize {
    let sent = body.replace("${CLAUDE_PLUGIN_ROOT}", &"x".repeat(80));
    (sent.encode_utf16().count() as f64 / 4.0).round() as usize
}

#[test]
fn entry_skills_fit_what_the_client_keeps_after_compaction() {
    let mut problems = Vec::new();
    for rel in ["skills/continue/SKILL.md", "skills/start/SKILL.md"] {
        let body = skill_body(rel);
        let tokens = markdown_token_estimate(&body);
        let client = client_token_measure(&body);
        eprintln!("{rel}: ~{tokens} tokens (the client's own measure: {client})");
        for (what, n) in [("estimated", tokens), ("by the client's measure", client)] {
            if n > SKILL_TOKEN_LIMIT {
                problems.push(format!(
                    "{rel}: {n} tokens {what}, over the {SKILL_TOKEN_LIMIT} the client keeps after compaction: move detail to a reference"
                ));
            }
        }
    }
    assert_none("skill size", problems);
}

#[test]
fn token_estimate_counts_cjk_and_the_rest() {
    assert_eq!(markdown_token_estimate("abcd"), 1);
    assert_eq!(markdown_token_estimate("写作，"), 2);
    assert_eq!(markdown_token_estimate(&"章".repeat(7200)), 5040);
    assert!(markdown_token_estimate(&"章".repeat(7200)) > SKILL_TOKEN_LIMIT);
    assert_eq!(client_token_measure(&"章".repeat(7200)), 1800);
    assert!(client_token_measure(&"a".repeat(20_004)) > SKILL_TOKEN_LIMIT);
}

/// `bin/novel` is an executable file (not a symlink: a marketplace install copies from git) that
/// finds `scripts/novel` however it is called — by PATH, by a relative path, through a symlink —
/// and carries the marker that keeps `scripts/novel` from taking it for the binary.
#[test]
fn bin_novel_hands_over_to_scripts_novel() {
    use std::os::unix::fs::PermissionsExt;
    let file = repo().join("bin/novel");
    let meta = std::fs::symlink_metadata(&file).expect("bin/novel exists");
    assert!(meta.file_type().is_file(), "bin/novel must be a file");
    assert!(
        meta.permissions().mode() & 0o111 != 0,
        "bin/novel must be executable"
    );
    let head: Vec<u8> = std::fs::read(&file)
        .unwrap()
        .into_iter()
        .take(128)
        .collect();
    assert!(
        String::from_utf8_lossy(&head).contains("novel-plugin-wrapper"),
        "bin/novel needs the wrapper marker in its first 128 bytes"
    );
    let tmp = tempfile::tempdir().unwrap();
    let link = tmp.path().join("novel-link");
    std::os::unix::fs::symlink(&file, &link).unwrap();
    let version = format!("novel {}", env!("CARGO_PKG_VERSION"));
    for (how, cwd, program) in [
        (
            "a symlink",
            tmp.path().to_path_buf(),
            link.to_string_lossy().into_owned(),
        ),
        ("a relative path", repo(), "bin/novel".to_string()),
        ("./novel in bin/", repo().join("bin"), "./novel".to_string()),
    ] {
        let out = Command::new("bash")
            .args(["-c", &format!("{program} --version")])
            .env_clear()
            .env("PATH", "/usr/bin:/bin")
            .env("NOVEL_BIN", bin())
            .current_dir(&cwd)
            .output()
            .unwrap();
        assert_eq!(
            String::from_utf8_lossy(&out.stdout).trim(),
            version,
            "through {how}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}
