//! What authors and skills read, pinned: the human and the `--json` output of every subcommand
//! on the demo book (`novel demo`), each step run twice — human on one copy, JSON on an identical
//! second copy — so that commands that write (chapter begin → commit, blacklist, spec, quick
//! start…) are snapshotted too. Paths, lock tokens, process ids and the host name are redacted;
//! the clock is fixed with `NOVEL_NOW`.
//!
//! A change of output fails here with a diff; when it is intended, re-bless with
//! `NOVEL_BLESS=1 cargo test -p novel-cli --test runner test_snapshots` and review the diff of
//! crates/novel-cli/tests/snapshots/commands/ (the Markdown that reads a changed `--json` field
//! must change with it).

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::support::*;

const NOW: &str = "1795325400";

/// One run: exit code, stdout, stderr — redacted.
fn run(book: &Path, args: &[String], stdin: Option<&str>) -> String {
    let mut child = Command::new(bin())
        .args(args)
        .current_dir(book)
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .env("LANG", "C.UTF-8")
        .env("NOVEL_NOW", NOW)
        // The author's home (the user settings `permissions --write` writes) beside the books.
        .env("HOME", book.parent().unwrap().join("home"))
        .stdin(if stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    if let Some(text) = stdin {
        child
            .stdin
            .take()
            .unwrap()
            .write_all(text.replace("<BOOK>", book.to_str().unwrap()).as_bytes())
            .unwrap();
    }
    let out = child.wait_with_output().unwrap();
    format!(
        "exit: {}\n--- stdout\n{}--- stderr\n{}",
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// Replaces what differs between runs and machines.
fn redact(text: &str, book: &Path) -> String {
    let home = book.parent().unwrap().join("home");
    let mut t = text
        .replace(home.to_str().unwrap(), "<HOME>")
        .replace(book.to_str().unwrap(), "<BOOK>");
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .or_else(|_| std::fs::read_to_string("/etc/hostname"))
        .unwrap_or_default();
    let host = host.trim();
    let rules: [(&str, &str); 7] = [
        (r"[0-9a-f]{32}", "<TOKEN>"),
        (r#""pid":\d+"#, r#""pid":<PID>"#),
        (r#""pid_start(ed)?":\d+"#, r#""pid_start$1":<PID_START>"#),
        (r"进程 \d+", "进程 <PID>"),
        (r"pid \d+", "pid <PID>"),
        (r"novel-demo-\d+-\d+", "novel-demo-<TMP>"),
        (r"(snap-\d{8}T\d{6}Z)-[0-9a-f]{8}", "$1-<ID>"),
    ];
    for (pattern, with) in rules {
        t = regex::Regex::new(pattern)
            .unwrap()
            .replace_all(&t, with)
            .into_owned();
    }
    if !host.is_empty() {
        t = t
            .replace(&format!("主机 {host}"), "主机 <HOST>")
            .replace(&format!("\"host\":\"{host}\""), "\"host\":\"<HOST>\"");
    }
    t
}

fn snapshot_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/snapshots/commands")
}

/// A step: a name for its snapshot file, the arguments, what goes to stdin, and files written
/// before it (as an agent would).
struct Step {
    name: &'static str,
    args: Vec<String>,
    stdin: Option<&'static str>,
    files: Vec<(&'static str, String)>,
}

fn step(name: &'static str, args: &str) -> Step {
    Step {
        name,
        args: args.split_whitespace().map(String::from).collect(),
        stdin: None,
        files: Vec::new(),
    }
}

/// The judge's evaluation of chapter 4 ([`steps`]' text): each dimension quotes its own line.
fn eval(score: f64) -> String {
    let quotes = [
        "沈砚把账簿拍在林府的八仙桌上",
        "「三千两，七月十五。」",
        "你爹欠的，你来还",
        "林晚舟没有看账簿，只看他手里那只怀表",
        "只看他手里那只怀表",
        "林晚舟没有看账簿",
        "沈砚把账簿拍在林府的八仙桌上……你爹欠的，你来还",
        "「三千两，七月十五。」……只看他手里那只怀表",
    ];
    let d = |i: usize, w: f64| {
        format!(
            r#"{{"score": {score}, "weight": {w}, "reason": "冲突落地，林府对峙有来有回", "evidence": "{}"}}"#,
            quotes[i]
        )
    };
    format!(
        r#"{{"chapter": 4, "overall": {score}, "recommendation": "pass", "contract_verification": {{}},
  "scores": {{"plot_logic": {}, "character": {}, "immersion": {}, "foreshadowing": {}, "pacing": {},
    "style_naturalness": {}, "emotional_impact": {}, "storyline_coherence": {}}},
  "violations": [], "risk_flags": [], "required_fixes": [], "issues": []}}
"#,
        d(0, 0.18),
        d(1, 0.18),
        d(2, 0.15),
        d(3, 0.10),
        d(4, 0.08),
        d(5, 0.15),
        d(6, 0.08),
        d(7, 0.08)
    )
}

/// The script: read-only commands on the demo book, then one chapter written through the
/// transaction, then the commands that change settings and plans.
fn steps() -> Vec<Step> {
    let chapter = "# 第4章 林府\n\n沈砚把账簿拍在林府的八仙桌上。\n\n「三千两，七月十五。」他说，「你爹欠的，你来还。」\n\n林晚舟没有看账簿，只看他手里那只怀表。\n"
        .to_string();
    let summary = "---\nchapter: 4\nstoryline_id: main_arc\n---\n沈砚带着账簿登门，林晚舟不认账，却盯上了怀表。\n".to_string();
    let delta = r#"{"chapter": 4, "base_state_version": 3, "storyline_id": "main_arc", "ops": [
  {"op": "set", "path": "characters.shen-yan.location", "value": "林府"},
  {"op": "foreshadow", "path": "watch_owner_death", "value": "advanced", "detail": "林晚舟认得这只怀表"}]}
"#
    .to_string();
    let mut begin_to_commit = vec![
        step("chapter-begin", "chapter begin 4"),
        step(
            "context-chapter-writer",
            "context chapter-writer --chapter 4",
        ),
        Step {
            files: vec![
                ("staging/chapters/chapter-004.md", chapter),
                ("staging/summaries/chapter-004-summary.md", summary),
                ("staging/state/chapter-004-delta.json", delta),
                (
                    "staging/storylines/main_arc/memory.md",
                    "沈砚登门讨债，林晚舟盯上怀表。\n".to_string(),
                ),
            ],
            ..step(
                "ops-validate",
                "ops validate staging/state/chapter-004-delta.json",
            )
        },
        step(
            "chapter-stage-drafted",
            "chapter stage drafted --token <TOKEN>",
        ),
        step(
            "chapter-stage-refined",
            "chapter stage refined --token <TOKEN>",
        ),
        step("lint-chapter", "lint --chapter 4"),
        step("check-leak", "check leak --chapter 4"),
        Step {
            files: vec![("staging/evaluations/chapter-004-eval.json", eval(4.3))],
            ..step(
                "chapter-stage-judged",
                "chapter stage judged --token <TOKEN>",
            )
        },
        step("chapter-gate", "chapter gate 4 --token <TOKEN>"),
        step("lock-status-held", "lock status"),
        step("chapter-commit", "chapter commit 4 --token <TOKEN>"),
        step("status-after-commit", "status"),
        step("state-history", "state history --entity shen-yan"),
        step("state-at", "state at --chapter 2"),
        step("state-rebuild", "state rebuild"),
        step("chapter-recover", "chapter recover"),
    ];
    let mut all = vec![
        step("help", "help"),
        step("help-chapter", "help chapter"),
        step("version", "--version"),
        step("status", "status"),
        step("next", "next"),
        step("validate", "validate"),
        step("lint-all", "lint --all"),
        step("count-all", "count --all"),
        step("style-metrics", "style metrics chapters/chapter-001.md"),
        step("style-drift", "style drift"),
        step("check-names", "check names --chapters 1..3"),
        step("check-continuity", "check continuity"),
        step("check-craft", "check craft --all"),
        step("context-budget", "context budget"),
        Step {
            stdin: Some(r#"{"cwd":"<BOOK>","source":"startup","hook_event_name":"SessionStart"}"#),
            ..step("context-session-start", "context session-start")
        },
        Step {
            stdin: Some(
                r#"{"cwd":"<BOOK>","agent_type":"novel:quality-judge","hook_event_name":"SubagentStart"}"#,
            ),
            ..step("context-subagent-start", "context subagent-start --part 1")
        },
        step("context-summarizer", "context summarizer --chapter 3"),
        step("context-quality-judge", "context quality-judge --chapter 3"),
        step("context-style-refiner", "context style-refiner --chapter 3"),
        step(
            "context-plot-architect",
            "context plot-architect --volume 1",
        ),
        step("context-world-builder", "context world-builder"),
        step("context-character-weaver", "context character-weaver"),
        step("context-style-analyzer", "context style-analyzer"),
        Step {
            stdin: Some(
                r#"{"tool_name":"Write","cwd":"<BOOK>","tool_input":{"file_path":"<BOOK>/state/current-state.json","content":"{}"}}"#,
            ),
            ..step("hook-pre-tool-use", "hook pre-tool-use")
        },
        Step {
            stdin: Some(
                r#"{"tool_name":"Write","cwd":"<BOOK>","tool_input":{"file_path":"<BOOK>/world/rules.json"}}"#,
            ),
            ..step("hook-post-tool-use", "hook post-tool-use")
        },
        step("quickstart", "quickstart"),
        step("pending-list", "pending list"),
        step("lock-status", "lock status"),
        step("volume-check", "volume check"),
        step("review-brief", "review brief"),
        step("review-consistency", "review consistency"),
        step("retire-check", "retire check zhou-zhanggui"),
        step("export-txt-stdout", "export -o -"),
        step("export-epub", "export --format epub --chapters 2..3"),
        step("dashboard", "dashboard"),
    ];
    all.append(&mut begin_to_commit);
    all.extend([
        step(
            "chapter-fail-idle",
            "chapter fail 5 --token <TOKEN> --reason 测试",
        ),
        step("ops-skip-idle", "ops skip --chapter 5 --reason 测试"),
        step("ops-apply-missing", "ops apply staging/state/nothing.json"),
        step(
            "blacklist-add",
            "blacklist add 眼底划过 --category body_language",
        ),
        step("blacklist-whitelist", "blacklist whitelist 眸底"),
        step("blacklist-remove", "blacklist remove 眼底划过"),
        step("blacklist-upgrade", "blacklist upgrade --dry-run"),
        step("spec-snapshot", "spec snapshot"),
        Step {
            files: vec![(
                "world/rules.json",
                include_str!("../demo/book/world/rules.json")
                    .replace("最多听物三次", "最多听物两次"),
            )],
            ..step("spec-propagate", "spec propagate")
        },
        step("pending-resolve-missing", "pending resolve nothing-here"),
        step("quickstart-undo", "quickstart undo trial-3"),
        step("quickstart-done", "quickstart done trial-3"),
        step("style-preset", "style preset qingsong-youmo"),
        step("retire-apply", "retire apply zhou-zhanggui"),
        step("volume-open", "volume open 1"),
        step("review-volume", "review volume"),
        step("volume-close", "volume close"),
        step("volume-cleanup", "volume cleanup --all"),
        step("lock-acquire", "lock acquire"),
        step("lock-release", "lock release --token <TOKEN>"),
        step("lock-clear", "lock clear"),
        step("prefs-add", "prefs add 对话少用感叹号 --category 文风"),
        step("prefs-list", "prefs list"),
        step("prefs-remove", "prefs remove P-001"),
        step("memory-init", "memory init"),
        step("memory-show", "memory show 沈砚 --last 3"),
        step("memory-rebuild", "memory rebuild"),
        Step {
            files: vec![(
                "evaluations/chapter-004-eval.json",
                eval(4.3).replace(
                    r#""required_fixes": []"#,
                    r#""required_fixes": [{"target": "第 3 段", "instruction": "林晚舟先开口，沈砚后拍账簿", "blocking": true}]"#,
                ),
            )],
            ..step("revision-notes", "revision notes --chapter 4")
        },
        Step {
            files: vec![(
                "candidate.md",
                "# 第4章 林府\n\n「你爹欠的。」林晚舟先开了口。\n\n沈砚这才把账簿拍在八仙桌上：「三千两，七月十五。」\n"
                    .to_string(),
            )],
            ..step("revision-save", "revision save --chapter 4 candidate.md")
        },
        step("revision-reject", "revision reject --chapter 4"),
        step("revision-save-again", "revision save --chapter 4 candidate.md"),
        step("revision-apply", "revision apply --chapter 4"),
        Step {
            files: vec![(
                "manuscript.txt",
                "雾港旧事\n\n楔子 雾起\n港口的雾三天没散。\n\n第一章 船票\n沈砚买了最后一张船票。\n\n第二章 怀表\n怀表停在七点十五分。\n".to_string(),
            )],
            ..step("import-dry-run", "import manuscript.txt --into <BOOK>-imported --dry-run")
        },
        Step {
            files: vec![(
                "gaps.txt",
                "第1章 船票\n正文。\n第3章 怀表\n正文。\n第3章 重复\n正文。\n".to_string(),
            )],
            ..step("import-order", "import gaps.txt --into <BOOK>-gaps --dry-run")
        },
        step("import", "import manuscript.txt --into <BOOK>-imported"),
        step("import-backfill", "import backfill --project <BOOK>-imported"),
        step("models", "models"),
        step("models-set", "models --set 经济"),
        step("permissions", "permissions"),
        step("permissions-write", "permissions --write"),
        step("init", "init <BOOK>-new --title 新书 --genre 玄幻"),
        step("demo", "demo demo-copy"),
    ]);
    all
}

/// The lock token in a run's output, if it printed one.
fn token_in(text: &str) -> Option<String> {
    regex::Regex::new(r"[0-9a-f]{32}")
        .unwrap()
        .find(text)
        .map(|m| m.as_str().to_string())
}

#[test]
fn every_subcommand_output_matches_its_snapshot() {
    let t = tempfile::tempdir().unwrap();
    let human_book = t.path().join("human");
    let json_book = t.path().join("json");
    for b in [&human_book, &json_book] {
        let out = novel(t.path(), &["demo", b.to_str().unwrap()]);
        assert_eq!(code(&out), 0, "{}", stderr(&out));
    }
    let bless = std::env::var_os("NOVEL_BLESS").is_some();
    let dir = snapshot_dir();
    if bless {
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
    }
    let mut tokens = [None::<String>, None::<String>];
    let mut ran: Vec<Vec<String>> = Vec::new();
    let mut failures = Vec::new();
    for s in steps() {
        let mut doc = String::new();
        for (i, book) in [&human_book, &json_book].into_iter().enumerate() {
            for (rel, text) in &s.files {
                let path = book.join(rel);
                std::fs::create_dir_all(path.parent().unwrap()).unwrap();
                std::fs::write(&path, text).unwrap();
            }
            let mut args: Vec<String> = s
                .args
                .iter()
                .map(|a| match (a.as_str(), &tokens[i]) {
                    ("<TOKEN>", Some(tok)) => tok.clone(),
                    _ => a.replace("<BOOK>", book.to_str().unwrap()),
                })
                .collect();
            if i == 1 {
                args.insert(0, "--json".to_string());
            }
            let raw = run(book, &args, s.stdin);
            if let Some(tok) = token_in(&raw) {
                tokens[i] = Some(tok);
            }
            doc.push_str(&redact(
                &format!("$ novel {}\n{}\n", args.join(" "), raw),
                book,
            ));
        }
        ran.push(s.args.clone());
        let file = dir.join(format!("{}.txt", s.name));
        if bless {
            std::fs::write(&file, &doc).unwrap();
            continue;
        }
        let want = std::fs::read_to_string(&file).unwrap_or_default();
        if want != doc {
            failures.push(format!("--- {}\n{}", file.display(), diff(&want, &doc)));
        }
    }
    assert!(
        failures.is_empty(),
        "output changed (NOVEL_BLESS=1 re-blesses after review):\n{}",
        failures.join("\n")
    );
    // Every subcommand the help lists has a snapshot.
    let missing: Vec<String> = crate::test_robust::every_invocation()
        .into_iter()
        .map(|(path, _)| path)
        .filter(|path| {
            let words: Vec<String> = path.split(' ').map(String::from).collect();
            !ran.iter().any(|args| args.starts_with(&words))
        })
        .collect();
    assert!(missing.is_empty(), "no snapshot for: {missing:?}");
}

/// Lines only in one side, for a readable failure.
fn diff(want: &str, got: &str) -> String {
    let mut out = String::new();
    let w: Vec<&str> = want.lines().collect();
    let g: Vec<&str> = got.lines().collect();
    for (i, line) in g.iter().enumerate() {
        if w.get(i) != Some(line) {
            out.push_str(&format!(
                "line {}:\n  want: {}\n  got:  {line}\n",
                i + 1,
                w.get(i).unwrap_or(&"<none>")
            ));
            if out.len() > 2000 {
                break;
            }
        }
    }
    if g.len() < w.len() {
        out.push_str(&format!(
            "  ({} lines missing at the end)\n",
            w.len() - g.len()
        ));
    }
    out
}
