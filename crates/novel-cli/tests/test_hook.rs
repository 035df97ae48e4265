//! The guard hooks (`docs/orchestration.md` §9), run exactly as Claude Code runs them: the
//! command of the real `hooks/hooks.json` through `sh -c`, the hook JSON on stdin.
//!
//! `pre-tool-use`: a table of paths (owned files, staging files, author files, paths outside any
//! project, symlink and `..` tricks) and the expected allow/deny. `post-tool-use`: valid and
//! invalid files of several kinds, and the errors handed back.

use std::io::Write;
use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use serde_json::{Value, json};

use crate::support::{bin, new_project, read_json, stderr, stdout};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The command of `hooks/hooks.json` for `event`, checked to be the guard of the write tools.
fn hook_command(event: &str) -> String {
    let hooks = read_json(&repo().join("hooks/hooks.json"));
    let entries = hooks["hooks"][event].as_array().unwrap_or_else(|| {
        panic!("hooks/hooks.json has no {event}");
    });
    assert_eq!(entries.len(), 1, "{event}");
    // Before a call the guard also reads Bash command lines; after one, written files and what
    // an agent spent.
    let matcher = if event == "PreToolUse" {
        "Write|Edit|MultiEdit|NotebookEdit|Bash"
    } else {
        "Write|Edit|MultiEdit|NotebookEdit|Agent|Task"
    };
    assert_eq!(entries[0]["matcher"], matcher);
    let hook = &entries[0]["hooks"][0];
    assert_eq!(hook["type"], "command");
    let command = hook["command"].as_str().unwrap().to_string();
    assert!(
        command.starts_with("\"${CLAUDE_PLUGIN_ROOT}/scripts/novel\" hook "),
        "{command}"
    );
    command
}

/// Runs the `event` hook with `stdin` (raw) as Claude Code would.
fn run_raw(event: &str, stdin: &str) -> Output {
    let mut child = Command::new("sh")
        .args(["-c", &hook_command(event)])
        .current_dir("/")
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .env("LANG", "C.UTF-8")
        .env("CLAUDE_PLUGIN_ROOT", repo())
        .env("NOVEL_BIN", bin())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run the hook");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(stdin.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0), "a hook always exits 0");
    out
}

fn call(tool: &str, key: &str, file: &Path, cwd: &Path) -> String {
    json!({
        "session_id": "s1",
        "transcript_path": "/tmp/t.jsonl",
        "cwd": cwd,
        "hook_event_name": "PreToolUse",
        "tool_name": tool,
        "tool_input": {key: file, "content": "x", "old_string": "a", "new_string": "b"},
    })
    .to_string()
}

/// The hook's answer: `None` when it said nothing.
fn answer(out: &Output) -> Option<Value> {
    let text = stdout(out);
    if text.trim().is_empty() {
        return None;
    }
    Some(serde_json::from_str(&text).unwrap_or_else(|e| panic!("not JSON ({e}): {text}")))
}

/// The reason of a `deny`, or `None` when the write is allowed.
fn pre(tool: &str, key: &str, file: &Path, cwd: &Path) -> Option<String> {
    let out = run_raw("PreToolUse", &call(tool, key, file, cwd));
    assert!(stderr(&out).is_empty(), "{}", stderr(&out));
    let doc = answer(&out)?;
    let o = &doc["hookSpecificOutput"];
    assert_eq!(o["hookEventName"], "PreToolUse", "{doc}");
    assert_eq!(o["permissionDecision"], "deny", "{doc}");
    Some(o["permissionDecisionReason"].as_str().unwrap().to_string())
}

/// The reason of a `block`, or `None` when the file passed (or is not judged).
fn post(file: &Path) -> Option<String> {
    let input = call("Write", "file_path", file, Path::new("/"));
    let out = run_raw("PostToolUse", &input);
    assert!(stderr(&out).is_empty(), "{}", stderr(&out));
    let doc = answer(&out)?;
    assert_eq!(doc["decision"], "block", "{doc}");
    Some(doc["reason"].as_str().unwrap().to_string())
}

#[test]
fn pre_tool_use_refuses_exactly_the_owned_files() {
    let (tmp, root) = new_project();
    let base = tmp.path().canonicalize().unwrap();
    let root = root.canonicalize().unwrap();
    let outside = base.join("别处");
    std::fs::create_dir_all(outside.join("state")).unwrap();
    // Symlink tricks, set up before the table.
    symlink(root.join(".checkpoint.json"), root.join("notes.json")).unwrap();
    symlink(root.join("state"), root.join("mystate")).unwrap();
    symlink(root.join("state"), outside.join("link")).unwrap();
    symlink(
        "state/history/vol-01-final-state.json",
        root.join("dangling.md"),
    )
    .unwrap();
    symlink("..", root.join("chapters/up")).unwrap();
    symlink(&outside, root.join("away")).unwrap();
    std::fs::create_dir_all(root.join(".novel.lock")).unwrap();
    std::fs::create_dir_all(root.join("state/backups")).unwrap();

    let deny = |rel: &str| (root.join(rel), true);
    let allow = |rel: &str| (root.join(rel), false);
    let cases: Vec<(PathBuf, bool)> = vec![
        // The files the binary owns.
        deny(".checkpoint.json"),
        deny("state/current-state.json"),
        deny("state/changelog.jsonl"),
        deny("state/history/vol-01-final-state.json"),
        deny("state/backups/current-state-20250101.json"),
        deny("state/.spec-snapshot.json"),
        deny("foreshadowing/global.json"),
        deny(".novel.lock/info.json"),
        deny(".novel.lock"),
        deny(".novel.lock.removed-0a1b/info.json"),
        deny(".novel-commit-journal.json"),
        // `..` tricks (existing and not-yet-existing directories).
        deny("chapters/../state/current-state.json"),
        deny("no-such-dir/../.checkpoint.json"),
        deny("staging/./state/../../foreshadowing/global.json"),
        // Symlink tricks: a file link, directory links inside and from outside the project, a
        // dangling link whose target is owned, a link to the root, and `..` after a link.
        deny("notes.json"),
        deny("mystate/current-state.json"),
        (outside.join("link/changelog.jsonl"), true),
        deny("dangling.md"),
        deny("chapters/up/foreshadowing/global.json"),
        deny("away/../state/current-state.json"),
        // Staging files, author files, the agents' outputs: allowed.
        allow("staging/state/chapter-001-delta.json"),
        allow("staging/chapters/chapter-001.md"),
        allow("staging/evaluations/chapter-001-eval.json"),
        allow("staging/summaries/chapter-001-summary.md"),
        allow("staging/storylines/main_arc/memory.md"),
        // Committed chapters and their evaluations: the revision-candidate flow changes them.
        deny("chapters/chapter-001.md"),
        deny("chapters/chapter-120.md"),
        deny("evaluations/chapter-001-eval.json"),
        deny("evaluations/chapter-001-eval-secondary.json"),
        allow("brief.md"),
        allow("chapters/brief.md"),
        allow("chapters/notes.md"),
        allow("world/rules.json"),
        allow("characters/active/lin-feng.json"),
        allow("volumes/vol-01/outline.md"),
        allow("volumes/vol-01/chapter-contracts/chapter-001.json"),
        allow("style-profile.json"),
        allow("novel.json"),
        allow("state/notes.md"),
        allow("state/current-state.json.md"),
        allow("foreshadowing/notes.md"),
        allow(".novel.lockfile"),
        allow("away/state/current-state.json"),
        // Outside any project.
        (outside.join("state/current-state.json"), false),
        (outside.join(".checkpoint.json"), false),
        (base.join("x/.novel.lock/info.json"), false),
        (PathBuf::from("/etc/hosts-novel-test"), false),
    ];
    let mut failures = Vec::new();
    for (path, want_deny) in &cases {
        let reason = pre("Write", "file_path", path, &base);
        if reason.is_some() != *want_deny {
            failures.push(format!(
                "{}: expected {}, got {reason:?}",
                path.display(),
                if *want_deny { "deny" } else { "allow" }
            ));
        }
        if let Some(r) = reason {
            assert!(r.contains("novel "), "the reason names a command: {r}");
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn pre_tool_use_reads_every_write_tool_and_relative_paths() {
    let (tmp, root) = new_project();
    let base = tmp.path().canonicalize().unwrap();
    let root = root.canonicalize().unwrap();
    let state = root.join("state/current-state.json");
    for tool in ["Write", "Edit", "MultiEdit"] {
        let reason = pre(tool, "file_path", &state, &base).expect(tool);
        assert!(reason.contains("state/current-state.json"), "{reason}");
        assert!(
            reason.contains("novel ops apply") && reason.contains("novel state rebuild"),
            "{reason}"
        );
    }
    let nb = root.join("state/backups/notes.ipynb");
    assert!(pre("NotebookEdit", "notebook_path", &nb, &base).is_some());
    // Relative to the hook's `cwd`.
    assert!(
        pre(
            "Write",
            "file_path",
            Path::new("book/.checkpoint.json"),
            &base
        )
        .is_some()
    );
    assert!(
        pre(
            "Edit",
            "file_path",
            Path::new("state/changelog.jsonl"),
            &root
        )
        .is_some()
    );
    assert!(pre("Write", "file_path", Path::new("brief.md"), &root).is_none());
    // The reasons name the right command.
    let lock = pre(
        "Write",
        "file_path",
        &root.join(".novel.lock/info.json"),
        &base,
    )
    .unwrap();
    assert!(lock.contains("novel lock clear"), "{lock}");
    let journal = pre(
        "Write",
        "file_path",
        &root.join(".novel-commit-journal.json"),
        &base,
    )
    .unwrap();
    assert!(journal.contains("novel chapter recover"), "{journal}");
    // Other tools, and stdin that is empty or not JSON: silence.
    assert!(pre("Read", "file_path", &state, &base).is_none());
    for stdin in [
        "",
        "not json",
        "{}",
        "[]",
        r#"{"tool_input":{"file_path":42}}"#,
    ] {
        let out = run_raw("PreToolUse", stdin);
        assert!(stdout(&out).is_empty(), "{stdin:?}: {}", stdout(&out));
    }
}

fn write(root: &Path, rel: &str, text: &str) -> PathBuf {
    let p = root.join(rel);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(&p, text).unwrap();
    p
}

fn fixture(kind: &str, name: &str) -> String {
    std::fs::read_to_string(repo().join(format!("tests/schemas/valid/{kind}/{name}.json"))).unwrap()
}

#[test]
fn post_tool_use_hands_back_the_errors_of_the_file_just_written() {
    let (_tmp, root) = new_project();
    let delta = "staging/state/chapter-001-delta.json";

    // State delta: valid; schema error; op rejected by the engine; wrong base version; unknown
    // storyline; not JSON at all.
    let ok = json!({"chapter": 1, "base_state_version": 0, "storyline_id": "main_arc",
        "ops": [{"op": "set", "path": "characters.lin-feng.location", "value": "青云镇"}]});
    assert_eq!(post(&write(&root, delta, &ok.to_string())), None);
    let r = post(&write(
        &root,
        delta,
        r#"{"chapter": 1, "storyline_id": "main_arc"}"#,
    ))
    .unwrap();
    assert!(
        r.contains(&format!("{delta}: ")) && r.contains("ops"),
        "{r}"
    );
    let bad_op = json!({"chapter": 1, "base_state_version": 0, "storyline_id": "main_arc",
        "ops": [{"op": "set", "path": "characters.林风.location", "value": "青云镇"}]});
    let r = post(&write(&root, delta, &bad_op.to_string())).unwrap();
    assert!(r.contains(&format!("{delta}: /ops/0: ")), "{r}");
    assert!(r.contains("slug"), "{r}");
    let stale =
        json!({"chapter": 1, "base_state_version": 7, "storyline_id": "main_arc", "ops": []});
    let r = post(&write(&root, delta, &stale.to_string())).unwrap();
    assert!(
        r.contains(&format!("{delta}: /base_state_version: ")) && r.contains("应为 0"),
        "{r}"
    );
    let lost =
        json!({"chapter": 1, "base_state_version": 0, "storyline_id": "side_arc", "ops": []});
    let r = post(&write(&root, delta, &lost.to_string())).unwrap();
    assert!(r.contains("side_arc") && r.contains("main_arc"), "{r}");
    let r = post(&write(&root, delta, "{\"chapter\": 1,\n  \"ops\": [,]\n}")).unwrap();
    assert!(
        r.contains(&format!("{delta}:2:11: E_JSON[错误]: JSON 格式错误")),
        "{r}"
    );
    // A delta whose name is off the layout is said too.
    let r = post(&write(
        &root,
        "staging/state/chapter-1-delta.json",
        &ok.to_string(),
    ))
    .unwrap();
    assert!(r.contains("chapter-NNN-delta.json"), "{r}");

    // Evaluation: valid; weights that do not sum to 1 (a check beyond the schema); schema error.
    let eval = "staging/evaluations/chapter-001-eval.json";
    let good = fixture("evaluation", "minimal");
    assert_eq!(post(&write(&root, eval, &good)), None);
    let mut heavy: Value = serde_json::from_str(&good).unwrap();
    heavy["scores"]["pacing"]["weight"] = json!(0.5);
    let r = post(&write(&root, eval, &heavy.to_string())).unwrap();
    assert!(r.contains(&format!("{eval}: /scores: ")), "{r}");
    let mut wrong: Value = serde_json::from_str(&good).unwrap();
    wrong["recommendation"] = json!("maybe");
    let r = post(&write(&root, eval, &wrong.to_string())).unwrap();
    assert!(r.contains(&format!("{eval}: /recommendation: ")), "{r}");
    // The second judge's file is an evaluation too.
    let second = "staging/evaluations/chapter-001-eval-secondary.json";
    assert!(post(&write(&root, second, &wrong.to_string())).is_some());

    // Character: valid; id that does not match the file name; schema error.
    let character = "characters/active/xiao-han.json";
    assert_eq!(
        post(&write(&root, character, &fixture("character", "minimal"))),
        None
    );
    let r = post(&write(
        &root,
        "characters/active/lin-feng.json",
        &fixture("character", "minimal"),
    ))
    .unwrap();
    assert!(r.contains("characters/active/lin-feng.json: /id: "), "{r}");
    let r = post(&write(
        &root,
        character,
        r#"{"id": "xiao-han", "display_name": 3}"#,
    ))
    .unwrap();
    assert!(r.contains(&format!("{character}: /display_name: ")), "{r}");

    // Other kinds found by the same layout table: world rules, the outline, a summary.
    let r = post(&write(
        &root,
        "world/rules.json",
        r#"{"rules": [{"id": "W1"}]}"#,
    ))
    .unwrap();
    assert!(r.contains("world/rules.json: /rules/0"), "{r}");
    let outline = "volumes/vol-01/outline.md";
    assert_eq!(
        post(&write(
            &root,
            outline,
            "# 第一卷\n\n## 第1章 开端\n- 故事线：main_arc\n"
        )),
        None
    );
    let r = post(&write(
        &root,
        outline,
        "# 第一卷\n\n## 第1章 开端\n## 第1章 又是开端\n",
    ))
    .unwrap();
    assert!(r.contains(outline) && r.contains("第 4 行"), "{r}");
    let summary = "staging/summaries/chapter-002-summary.md";
    let r = post(&write(
        &root,
        summary,
        "---\nchapter: 3\nstoryline_id: main_arc\n---\n\n摘要。\n",
    ))
    .unwrap();
    assert!(r.contains(&format!("{summary}: /chapter: ")), "{r}");

    // Files the layout does not interpret, and files outside any project: silence.
    assert_eq!(post(&write(&root, "world/geography.md", "# 地理\n")), None);
    assert_eq!(
        post(&write(&root, "chapters/chapter-001.md", "# 第1章\n")),
        None
    );
    let elsewhere = tempfile::tempdir().unwrap();
    assert_eq!(
        post(&write(
            elsewhere.path(),
            "staging/state/chapter-001-delta.json",
            "{}"
        )),
        None
    );
}

/// The hook binary prints nothing but its answer, and never an error envelope, even with
/// `--json` on the line.
#[test]
fn hooks_answer_in_claude_codes_json_only() {
    let (tmp, root) = new_project();
    let input = call(
        "Write",
        "file_path",
        &root.join(".checkpoint.json"),
        tmp.path(),
    );
    let mut child = Command::new(bin())
        .args(["--json", "hook", "pre-tool-use"])
        .env_clear()
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    let doc = answer(&out).unwrap();
    assert!(doc.get("ok").is_none(), "{doc}");
    assert_eq!(doc["hookSpecificOutput"]["permissionDecision"], "deny");
}

// ---- The guards fail closed, see hard links, and read Bash command lines --------------------

/// Runs the `event` hook in `cwd` with raw bytes on stdin.
fn run_bytes(event: &str, stdin: &[u8], cwd: &Path) -> Output {
    let mut child = Command::new("sh")
        .args(["-c", &hook_command(event)])
        .current_dir(cwd)
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .env("LANG", "C.UTF-8")
        .env("CLAUDE_PLUGIN_ROOT", repo())
        .env("NOVEL_BIN", bin())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run the hook");
    let mut stdin_pipe = child.stdin.take().unwrap();
    let bytes = stdin.to_vec();
    // Written from a thread: the hook may answer before it has read every byte.
    let writer = std::thread::spawn(move || {
        let _ = stdin_pipe.write_all(&bytes);
    });
    let out = child.wait_with_output().unwrap();
    let _ = writer.join();
    assert_eq!(out.status.code(), Some(0), "a hook always exits 0");
    out
}

fn denied(out: &Output) -> Option<String> {
    let doc = answer(out)?;
    assert_eq!(
        doc["hookSpecificOutput"]["permissionDecision"], "deny",
        "{doc}"
    );
    Some(
        doc["hookSpecificOutput"]["permissionDecisionReason"]
            .as_str()
            .unwrap()
            .to_string(),
    )
}

/// Input the guard used to let through silently: over 16 MiB, with a BOM, in UTF-16, with bytes
/// after the JSON. Each still names the owned file, and each is refused.
#[test]
fn odd_hook_input_naming_an_owned_file_is_still_refused() {
    let (_t, root) = new_project();
    let state = root.join("state/current-state.json");
    let plain = call("Write", "file_path", &state, &root);
    let big = json!({"cwd": root, "hook_event_name": "PreToolUse", "tool_name": "Write",
        "tool_input": {"file_path": state, "content": "字".repeat(6 << 20)}})
    .to_string();
    assert!(big.len() > 17 << 20);
    let mut bom = vec![0xEF, 0xBB, 0xBF];
    bom.extend_from_slice(plain.as_bytes());
    let mut utf16 = vec![0xFF, 0xFE];
    for u in plain.encode_utf16() {
        utf16.extend_from_slice(&u.to_le_bytes());
    }
    let trailing = format!("{plain}\n{{\"garbage\"");
    for (what, input) in [
        ("over 16 MiB", big.into_bytes()),
        ("BOM", bom),
        ("UTF-16", utf16),
        ("trailing bytes", trailing.into_bytes()),
        ("cut short", plain.as_bytes()[..plain.len() - 3].to_vec()),
    ] {
        let out = run_bytes("PreToolUse", &input, Path::new("/"));
        let reason = denied(&out).unwrap_or_else(|| panic!("{what}: allowed"));
        assert!(
            reason.contains("state/current-state.json"),
            "{what}: {reason}"
        );
    }
}

/// Input the guard cannot read at all: inside a project the write is refused with the reason
/// (never a silent allow); outside any project nothing is said.
#[test]
fn unreadable_hook_input_fails_closed_inside_a_project() {
    let (tmp, root) = new_project();
    let out = run_bytes("PreToolUse", b"\x00\x01 not json at all", &root);
    let reason = denied(&out).expect("refused inside the project");
    assert!(reason.contains("读不懂"), "{reason}");
    let out = run_bytes("PreToolUse", b"\x00\x01 not json at all", tmp.path());
    assert!(answer(&out).is_none(), "{}", stdout(&out));
    // After the write there is nothing to refuse: silent, one line on stderr.
    let out = run_bytes("PostToolUse", b"\x00\x01 not json at all", &root);
    assert!(answer(&out).is_none());
}

/// A hard link is the file it links to: a write to a second name of an owned file is refused,
/// wherever the name is.
#[test]
fn a_hard_link_to_an_owned_file_is_refused() {
    let (tmp, root) = new_project();
    let inside = root.join("notes/state-copy.json");
    std::fs::create_dir_all(inside.parent().unwrap()).unwrap();
    std::fs::hard_link(root.join("state/current-state.json"), &inside).unwrap();
    let outside = tmp.path().join("elsewhere.json");
    std::fs::hard_link(root.join(".checkpoint.json"), &outside).unwrap();
    let reason = pre("Write", "file_path", &inside, &root).expect("inside: refused");
    assert!(reason.contains("state/current-state.json"), "{reason}");
    let reason = pre("Edit", "file_path", &outside, &root).expect("outside: refused");
    assert!(reason.contains(".checkpoint.json"), "{reason}");
    // A plain copy is another file.
    std::fs::copy(root.join(".checkpoint.json"), tmp.path().join("copy.json")).unwrap();
    assert_eq!(
        pre("Write", "file_path", &tmp.path().join("copy.json"), &root),
        None
    );
}

/// The Bash guard: a command line that visibly writes, moves or removes an owned file is refused;
/// reading, the binary's own commands and everything it cannot see are allowed.
#[test]
fn bash_command_lines_that_write_owned_files_are_refused() {
    let (tmp, root) = new_project();
    let bash = |command: &str, cwd: &Path| {
        let input = json!({"cwd": cwd, "hook_event_name": "PreToolUse", "tool_name": "Bash",
            "tool_input": {"command": command, "description": "x"}})
        .to_string();
        denied(&run_raw("PreToolUse", &input))
    };
    for command in [
        "echo '{}' > state/current-state.json",
        "echo x >> state/changelog.jsonl",
        "cat new.json | tee .checkpoint.json >/dev/null",
        "cp /tmp/x.json foreshadowing/global.json",
        "mv state/current-state.json /tmp/old.json",
        "rm -rf .novel.lock",
        "sed -i 's/3/4/' state/current-state.json",
        "truncate -s 0 state/changelog.jsonl",
        "rm state/*.json",
        "cd state && echo x > current-state.json",
        "bash -c 'jq . x > .checkpoint.json'",
        "true && (echo x > memory/preferences.json)",
    ] {
        let reason = bash(command, &root).unwrap_or_else(|| panic!("allowed: {command}"));
        assert!(reason.contains("novel"), "{command}: {reason}");
    }
    // From outside the project, by absolute path.
    let abs = format!(
        "echo x > {}",
        root.join("state/current-state.json").display()
    );
    assert!(bash(&abs, tmp.path()).is_some(), "{abs}");
    for command in [
        "cat state/current-state.json",
        "novel --project . ops apply staging/state/chapter-001-delta.json --json",
        "\"$HOME/bin/novel\" state rebuild --write",
        "echo x > staging/chapters/chapter-001.md",
        "cp state/current-state.json /tmp/look.json",
        "jq . state/current-state.json > /tmp/pretty.json",
        "echo x > $TARGET",
        "grep -r 陆尘 chapters/ | head",
        "if [[ -f x ]]; then echo; fi",
    ] {
        assert_eq!(bash(command, &root), None, "{command}");
    }
    // Outside any project nothing is decided.
    assert_eq!(bash("echo x > state/current-state.json", tmp.path()), None);
}

/// Runs the Bash guard on `command` from `cwd`: the refusal, or `None`.
fn bash_guard(command: &str, cwd: &Path) -> Option<String> {
    let input = json!({"cwd": cwd, "hook_event_name": "PreToolUse", "tool_name": "Bash",
        "tool_input": {"command": command, "description": "x"}})
    .to_string();
    denied(&run_raw("PreToolUse", &input))
}

/// `bash -c '…'` around `line`, `depth` times.
fn nested_bash(line: &str, depth: usize) -> String {
    let mut line = line.to_string();
    for _ in 0..depth {
        line = format!("bash -c '{}'", line.replace('\'', "'\\''"));
    }
    line
}

/// The campaign of issue 42 (N13–N15): bash-only syntax, directories that hold owned files,
/// every way of changing directory, nesting, the lock directory — each line refused, naming the
/// owned file; a line the guard cannot parse is refused when it names one, allowed otherwise.
#[test]
fn the_bash_guard_cannot_be_walked_around() {
    let (tmp, root) = new_project();
    std::fs::create_dir_all(tmp.path().join("x/state")).unwrap();
    let deep = nested_bash("echo x > state/current-state.json", 6);
    let lines: Vec<(&str, &str)> = vec![
        // N13: one bash-only construct used to turn the guard off for the whole line.
        (
            "echo x > state/current-state.json; cat <<< y",
            "state/current-state.json",
        ),
        (
            "echo x |& tee state/changelog.jsonl",
            "state/changelog.jsonl",
        ),
        (
            "diff <(ls) <(ls chapters) > .checkpoint.json",
            ".checkpoint.json",
        ),
        (
            "x=A; echo ${x,,} > state/current-state.json",
            "state/current-state.json",
        ),
        (
            "a=(1 2); echo ${a[@]} >> state/changelog.jsonl",
            "state/changelog.jsonl",
        ),
        (
            "case y in y) echo > foreshadowing/global.json ;& n) true ;; esac",
            "foreshadowing/global.json",
        ),
        ("echo ${#a[@]}; rm -f .checkpoint.json", ".checkpoint.json"),
        (
            "echo x > >(tee memory/preferences.json)",
            "memory/preferences.json",
        ),
        (
            "[[ $(wc -l < state/changelog.jsonl) -gt 0 ]] && : > state/changelog.jsonl",
            "state/changelog.jsonl",
        ),
        // N14: directory operands that hold owned files.
        ("rm -rf state", "state/"),
        ("rm -r memory", "memory/"),
        ("mv state /tmp/novel-guard-test-state", "state/"),
        ("cp -r ../x/state .", "state/"),
        ("rm -rf *", "chapters/"),
        ("find . -delete", ".checkpoint.json"),
        ("find state -name '*.json' -exec rm -f {} +", "state/"),
        ("rm -rf ../book", ".checkpoint.json"),
        ("rsync -a --delete /tmp/ ./", ".checkpoint.json"),
        ("git checkout -- state", "state/"),
        // N15: directory changes, nesting, the lock directory.
        (
            "cd -P state && echo x > current-state.json",
            "state/current-state.json",
        ),
        (
            "cd -- state; echo x > current-state.json",
            "state/current-state.json",
        ),
        (
            "pushd state >/dev/null; echo x > current-state.json",
            "state/current-state.json",
        ),
        (
            "pushd chapters; popd; echo x > .checkpoint.json",
            ".checkpoint.json",
        ),
        (
            "test -d state && cd state; truncate -s 0 changelog.jsonl",
            "state/changelog.jsonl",
        ),
        (&deep, "state/current-state.json"),
        ("eval 'echo x > .checkpoint.json'", ".checkpoint.json"),
        (
            "bash <<'EOF'\necho x > .checkpoint.json\nEOF",
            ".checkpoint.json",
        ),
        ("mkdir .novel.lock", ".novel.lock"),
        ("mkdir -p .novel.lock && sleep 60", ".novel.lock"),
        (
            "touch .novel-commit-journal.json",
            ".novel-commit-journal.json",
        ),
        (
            "echo > state/{current-state.json,x.json}",
            "state/current-state.json",
        ),
        // Committed chapters and evaluations.
        (
            "sed -i 's/林峰/林枫/' chapters/chapter-001.md",
            "chapters/chapter-001.md",
        ),
        ("rm evaluations/*.json", "evaluations/"),
        // Lines the guard cannot parse, naming an owned file or a directory holding one.
        (
            "echo 'x > state/current-state.json",
            "state/current-state.json",
        ),
        ("rm -rf state \"", "state/"),
        ("cat <(echo) > .checkpoint.json )", ".checkpoint.json"),
    ];
    std::fs::write(root.join("chapters/chapter-001.md"), "# 第1章\n").unwrap();
    std::fs::create_dir_all(root.join("memory/characters")).unwrap();
    std::fs::write(root.join("memory/characters/lin-feng.jsonl"), "").unwrap();
    std::fs::create_dir_all(root.join("evaluations")).unwrap();
    std::fs::write(root.join("evaluations/chapter-001-eval.json"), "{}").unwrap();
    let mut failures = Vec::new();
    for (line, names) in &lines {
        match bash_guard(line, &root) {
            None => failures.push(format!("allowed: {line}")),
            Some(r) if !r.contains(names.trim_end_matches('/')) || !r.contains("novel") => {
                failures.push(format!("{line}: the refusal does not name {names}: {r}"))
            }
            Some(_) => {}
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    let blind = bash_guard("echo 'x > state/current-state.json", &root).unwrap();
    assert!(
        blind.contains("解析不了") && blind.contains("novel"),
        "{blind}"
    );
    let dir = bash_guard("rm -rf state", &root).unwrap();
    assert!(dir.contains("目录 state"), "{dir}");
    // Nothing was written by the checks themselves.
    assert!(!root.join(".novel.lock").exists());
    // From the directory above the project, the project itself is a directory holding them.
    assert!(bash_guard("rm -rf book", tmp.path()).is_some());
    assert!(bash_guard("mv book book2", tmp.path()).is_some());
}

/// What the guard must keep allowing: `novel` calls, reads, writes outside the project and in
/// staging, lines it cannot parse that name nothing owned — and every shell line our own agents
/// and skills write in their Markdown.
#[test]
fn ordinary_lines_stay_allowed() {
    let (tmp, root) = new_project();
    std::fs::write(root.join("chapters/chapter-001.md"), "# 第1章\n").unwrap();
    let outside = tmp.path().join("别处");
    std::fs::create_dir_all(&outside).unwrap();
    let mut lines: Vec<String> = [
        "novel --project . chapter commit 3 --token abc --json",
        "novel export -o state/current-state.json",
        "cat state/current-state.json | jq '.characters | keys'",
        "grep -rn 林枫 chapters/ | head -n 20",
        "wc -m chapters/*.md",
        "ls -la state/ .novel.lock 2>/dev/null || true",
        "head -c 2000 chapters/chapter-001.md",
        "find . -name '*.md' -newer brief.md | sort",
        "find chapters -maxdepth 1 -name 'chapter-*.md' | wc -l",
        "diff <(ls chapters) <(ls summaries)",
        "cat <<< \"$(jq -r .title novel.json)\"",
        "for f in chapters/*.md; do wc -m \"$f\"; done",
        "x=${1,,}; echo ${x:-none}",
        "git status --short && git diff --stat",
        "git log --oneline -5 -- state/changelog.jsonl",
        "cp state/current-state.json /tmp/look.json",
        "cp -r state /tmp/state-copy",
        "jq . state/current-state.json > /tmp/pretty.json",
        "echo x > staging/chapters/chapter-002.md",
        "mkdir -p staging/candidates && cp chapters/chapter-001.md staging/candidates/chapter-001.md",
        "rm -f staging/candidates/chapter-001.md",
        "mv staging/summaries/a.md staging/summaries/b.md",
        "cd staging && rm -rf candidates",
        "tar -czf /tmp/backup.tgz .",
        "rm -rf /tmp/novel-guard-test-nothing",
        "echo x > $TARGET",
        "if [[ -f x ]]; then echo; fi",
        "echo 'unterminated quote about the plot",
        "python3 -c 'print(1)' | tee /tmp/out.txt",
        "stat -c %s .checkpoint.json",
        "du -sh state evaluations chapters",
        "sort -u chapters/chapter-001.md | wc -l",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    lines.push(format!(
        "echo x > {}",
        outside.join("state/current-state.json").display()
    ));
    lines.push(format!("rm -rf {}", outside.display()));
    // Every shell line of the agents' and skills' Markdown.
    let md = markdown_shell_lines(&root);
    assert!(md.len() > 100, "{}", md.len());
    let total = lines.len() + md.len();
    lines.extend(md);
    let refused: Vec<String> = lines
        .iter()
        .filter_map(|l| bash_guard(l, &root).map(|r| format!("{l}\n  → {r}")))
        .collect();
    assert!(
        refused.is_empty(),
        "{} of {total} refused:\n{}",
        refused.len(),
        refused.join("\n")
    );
}

/// The shell lines of `skills/` and `agents/` Markdown: the fenced `bash` blocks and the inline
/// `` `novel …` `` spans, placeholders filled in for `root`.
fn markdown_shell_lines(root: &Path) -> Vec<String> {
    fn md_files(dir: &Path, out: &mut Vec<PathBuf>) {
        for e in std::fs::read_dir(dir).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                md_files(&p, out);
            } else if p.extension().is_some_and(|x| x == "md") {
                out.push(p);
            }
        }
    }
    let mut files = Vec::new();
    for dir in ["skills", "agents"] {
        md_files(&repo().join(dir), &mut files);
    }
    let fill = |l: &str| {
        let mut out = l.replace("<DIR>", &root.display().to_string());
        while let (Some(a), Some(b)) = (out.find('<'), out.find('>')) {
            if b <= a || out[a + 1..b].contains(' ') {
                break;
            }
            out.replace_range(a..=b, "3");
        }
        out
    };
    let mut lines = Vec::new();
    for f in files {
        let text = std::fs::read_to_string(&f).unwrap();
        let mut in_block = false;
        for l in text.lines() {
            let t = l.trim();
            if t.starts_with("```") {
                in_block = !in_block && (t == "```bash" || t == "```sh");
                continue;
            }
            if in_block && !t.is_empty() && !t.starts_with('#') {
                lines.push(fill(t));
            }
            for span in t.split('`').skip(1).step_by(2) {
                if span.starts_with("novel ") {
                    lines.push(fill(span));
                }
            }
        }
    }
    lines.sort();
    lines.dedup();
    lines
}

// ---- What the agents spent (the Agent tool's PostToolUse) ---------------------------------

/// The PostToolUse input the client 2.1.197 sends when an Agent call ends (as dumped from the
/// real client: `tool_response` with `totalTokens`, `totalDurationMs`, `resolvedModel`, and the
/// last request's `usage`).
fn agent_done(
    id: &str,
    agent: &str,
    root: &Path,
    n: u32,
    tokens: u64,
    ms: u64,
    model: Option<&str>,
) -> String {
    let mut input = json!({"description": format!("第{n}章"), "subagent_type": format!("novel:{agent}"),
        "prompt": format!("项目目录：{}\n任务：初稿\n章节：{n}", root.display())});
    if let Some(m) = model {
        input["model"] = json!(m);
    }
    json!({"session_id": "s1", "transcript_path": "/tmp/t.jsonl", "cwd": "/",
        "hook_event_name": "PostToolUse", "tool_name": "Agent", "tool_use_id": id,
        "tool_input": input,
        "tool_response": {"status": "completed", "agentId": "a1", "agentType": format!("novel:{agent}"),
            "content": [{"type": "text", "text": "{}"}], "resolvedModel": "claude-sonnet-5",
            "totalDurationMs": ms, "totalTokens": tokens, "totalToolUseCount": 2,
            "usage": {"input_tokens": 100, "output_tokens": 20}},
        "duration_ms": ms})
    .to_string()
}

fn usage_records(root: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(root.join("staging/logs"))
        .unwrap()
        .flatten()
        .map(|e| e.file_name().into_string().unwrap())
        .filter(|n| n.contains("-usage-"))
        .collect();
    names.sort();
    names
}

/// The hook records each pipeline agent's usage for the chapter in flight, silently; `chapter
/// stage` without usage flags logs their sum (the model a dispatch passed with it) and removes
/// the records; flags win over records; nothing is recorded for another chapter, another
/// agent, outside a chapter, or from input it cannot read — and the hook never answers or fails.
#[test]
fn the_agent_hook_records_what_the_stage_then_logs() {
    use crate::test_chapter::{ok, stage_drafts, stage_eval, writing_project};
    let (_t, root) = writing_project();
    let quiet = |input: &str| {
        let out = run_raw("PostToolUse", input);
        assert!(
            stdout(&out).is_empty() && stderr(&out).is_empty(),
            "{}{}",
            stdout(&out),
            stderr(&out)
        );
    };
    // No chapter in flight: nothing.
    quiet(&agent_done(
        "toolu_0",
        "chapter-writer",
        &root,
        1,
        999,
        9,
        None,
    ));
    ok(&root, &["chapter", "begin", "1"]);
    assert!(usage_records(&root).is_empty());
    quiet(&agent_done(
        "toolu_1",
        "chapter-writer",
        &root,
        1,
        1200,
        40_000,
        None,
    ));
    quiet(&agent_done(
        "toolu_2",
        "summarizer",
        &root,
        1,
        300,
        5_000,
        None,
    ));
    // Not the chapter in flight, not a pipeline agent, not a book, not JSON: nothing.
    quiet(&agent_done("toolu_3", "summarizer", &root, 2, 7, 7, None));
    quiet(&agent_done(
        "toolu_4",
        "world-builder",
        &root,
        1,
        7,
        7,
        None,
    ));
    quiet(&agent_done(
        "toolu_5",
        "summarizer",
        Path::new("/nonexistent/书"),
        1,
        7,
        7,
        None,
    ));
    // (Input it cannot read leaves its one line on stderr, as for a Write.)
    for broken in [
        "{\"tool_name\": \"Agent\", \"tool_response\": 5",
        "not json at all",
    ] {
        assert!(stdout(&run_raw("PostToolUse", broken)).is_empty());
    }
    assert_eq!(
        usage_records(&root),
        [
            "chapter-001-usage-toolu_1.json",
            "chapter-001-usage-toolu_2.json"
        ]
    );
    stage_drafts(&root, 1);
    // A record in staging is the program's own file: validate knows it.
    let v = ok(&root, &["validate"]);
    assert!(!v.to_string().contains("usage"), "{v}");
    ok(&root, &["chapter", "stage", "drafted"]);
    assert!(
        usage_records(&root).is_empty(),
        "{:?}",
        usage_records(&root)
    );
    let stage = |name: &str| {
        let log = read_json(&root.join("staging/logs/chapter-001-log.json"));
        log["stages"]
            .as_array()
            .unwrap()
            .iter()
            .rev()
            .find(|s| s["name"] == name)
            .unwrap_or_else(|| panic!("{log}"))
            .clone()
    };
    let drafted = stage("drafted");
    assert_eq!(
        (
            &drafted["tokens"],
            &drafted["duration_ms"],
            &drafted["model"]
        ),
        (&json!(1500), &json!(45_000), &Value::Null),
        "{drafted}"
    );
    // Flags win over what was recorded, which goes all the same.
    quiet(&agent_done(
        "toolu_6",
        "style-refiner",
        &root,
        1,
        800,
        9_000,
        None,
    ));
    ok(
        &root,
        &[
            "chapter",
            "stage",
            "refined",
            "--tokens",
            "5",
            "--duration-ms",
            "6",
        ],
    );
    let refined = stage("refined");
    assert_eq!(
        (&refined["tokens"], &refined["duration_ms"]),
        (&json!(5), &json!(6)),
        "{refined}"
    );
    assert!(usage_records(&root).is_empty());
    // Two judges in one message (their own records): summed, logged as opus.
    stage_eval(&root, 1, 4.2, true);
    quiet(&agent_done(
        "toolu_7",
        "quality-judge",
        &root,
        1,
        1000,
        3_000,
        None,
    ));
    quiet(&agent_done(
        "toolu_8",
        "quality-judge",
        &root,
        1,
        1100,
        4_000,
        Some("opus"),
    ));
    ok(&root, &["chapter", "stage", "judged"]);
    let judged = stage("judged");
    assert_eq!(
        (&judged["tokens"], &judged["duration_ms"], &judged["model"]),
        (&json!(2100), &json!(7_000), &json!("opus")),
        "{judged}"
    );
    // Left over at commit (an agent after the last stage): removed with the chapter's staging.
    quiet(&agent_done(
        "toolu_9",
        "style-refiner",
        &root,
        1,
        10,
        10,
        None,
    ));
    let gate = ok(&root, &["chapter", "gate", "1", "--commit"]);
    assert_eq!(gate["data"]["decision"], "pass", "{gate}");
    assert!(
        usage_records(&root).is_empty(),
        "{:?}",
        usage_records(&root)
    );
    // `status` counts them as it counted the flags.
    let status = ok(&root, &["status"]);
    assert!(status.to_string().contains("3605"), "{status}");
}
