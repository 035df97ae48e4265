//! End to end with the real client: the Claude Code version pinned in `tests/e2e/package.json`
//! loads the plugin (`--plugin-dir`, never `--bare`) and talks to a fake Messages API
//! (`tests/e2e/fake-api.mjs`) that plays a script of turns — the model's part — while the
//! client does everything else for real: the SessionStart hook, skill expansion with its
//! `` !`…` `` lines, the Agent tool with the plugin's agents, Bash, Read/Write/Edit and the guard
//! hooks. Each scenario asserts on the client's stream-json events, on the requests it sent the
//! fake, on the calls that reached the binary, and on the project files afterwards.
//!
//! The binary every skill, agent and hook reaches through `scripts/novel` is this test's own
//! build: `NOVEL_BIN` points at a small shim that logs each call and how long it took. The model's
//! Bash calls are written `novel …` as the Markdown writes them: the client appends the plugin's
//! `bin/` to the Bash tool's PATH (there is no `CLAUDE_PLUGIN_ROOT` there), and `bin/novel` hands
//! over to `scripts/novel`. Runs use the default permission mode with no `--allowedTools` unless a
//! scenario needs what the README's permissions section documents. The last
//! scenario installs the plugin the way an author does instead — from a marketplace in a git
//! repository served on 127.0.0.1 (`tests/e2e/git-http.mjs`) — and lets it find its binary itself.
//!
//! Each child has a timeout and is killed by PID (with its process group) when its guard drops,
//! on panic too. Without the client installed the tests fail when `NOVEL_REQUIRE_CLIENT=1`
//! (`tests/run` and CI set it) and otherwise say loudly that they were skipped.
#![cfg(unix)]

use std::io::{BufRead, BufReader};
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::meter::{chapter_cost, metered, token_table};
use crate::support::*;
use crate::test_client::{client, repo};

/// How long one client run may take (a scenario takes a few seconds).
const CLIENT_TIMEOUT: Duration = Duration::from_secs(90);
/// The fake API ends by itself after this many seconds, whatever happens to the test.
const FAKE_LIFETIME_SECS: u64 = 150;
/// The 8 agents of the plugin, as the client names them.
pub(crate) const AGENTS: [&str; 8] = [
    "chapter-writer",
    "character-weaver",
    "plot-architect",
    "quality-judge",
    "style-analyzer",
    "style-refiner",
    "summarizer",
    "world-builder",
];

// ---- processes ---------------------------------------------------------------------------------

/// A child in its own process group: killed (the group first, then the child by PID) and reaped
/// when dropped, unless it has already ended.
struct Reaped(Child);

impl Reaped {
    fn spawn(cmd: &mut Command, what: &str) -> Self {
        cmd.process_group(0);
        Reaped(
            cmd.spawn()
                .unwrap_or_else(|e| panic!("cannot start {what}: {e}")),
        )
    }

    /// Waits up to `limit`; None when the child is still running then.
    fn wait_for(&mut self, limit: Duration) -> Option<std::process::ExitStatus> {
        let start = Instant::now();
        loop {
            if let Some(status) = self.0.try_wait().expect("try_wait") {
                return Some(status);
            }
            if start.elapsed() > limit {
                return None;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Reaped {
    fn drop(&mut self) {
        if let Ok(None) = self.0.try_wait() {
            // Not reaped yet, so the PID (and group id) still belongs to this child.
            let _ = Command::new("kill")
                .args(["-KILL", "--", &format!("-{}", self.0.id())])
                .stderr(Stdio::null())
                .status();
            let _ = self.0.kill();
        }
        let _ = self.0.wait();
    }
}

/// The fake Messages API on 127.0.0.1, playing `script`; returns the guard and the port.
/// The fake Messages API playing `script`, for a client started some other way (the
/// interactive terminal): the guard that stops it, and its port. Requests go to
/// `dir/requests.jsonl`.
pub(crate) fn start_fake_api(dir: &Path, script: &Value) -> (impl Drop + use<>, u16) {
    start_fake(dir, script)
}

fn start_fake(dir: &Path, script: &Value) -> (Reaped, u16) {
    let script_path = dir.join("script.json");
    std::fs::write(&script_path, serde_json::to_string_pretty(script).unwrap()).unwrap();
    let log = dir.join("requests.jsonl");
    let args = [
        "--script".as_ref(),
        script_path.as_os_str(),
        "--log".as_ref(),
        log.as_os_str(),
    ];
    start_server(dir, "fake-api", &args)
}

/// `node tests/e2e/NAME.mjs ARGS --lifetime …` (a server on 127.0.0.1 that prints `{"port":N}`
/// once it listens, its stderr in DIR/NAME.stderr); returns the guard and the port.
fn start_server(dir: &Path, name: &str, args: &[&std::ffi::OsStr]) -> (Reaped, u16) {
    let stderr_path = dir.join(format!("{name}.stderr"));
    let mut server = Reaped::spawn(
        Command::new("node")
            .arg(repo().join(format!("tests/e2e/{name}.mjs")))
            .args(args)
            .arg("--lifetime")
            .arg(FAKE_LIFETIME_SECS.to_string())
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(std::fs::File::create(&stderr_path).unwrap()),
        &format!("node tests/e2e/{name}.mjs (is Node.js on PATH?)"),
    );
    let stdout = server.0.stdout.take().unwrap();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut line = String::new();
        let _ = BufReader::new(stdout).read_line(&mut line);
        let _ = tx.send(line);
    });
    let line = rx
        .recv_timeout(Duration::from_secs(20))
        .unwrap_or_else(|_| panic!("{name} printed no port within 20 s"));
    let port = serde_json::from_str::<Value>(&line)
        .ok()
        .and_then(|v| v["port"].as_u64())
        .unwrap_or_else(|| {
            panic!(
                "{name} did not start: {line:?}; stderr: {}",
                std::fs::read_to_string(&stderr_path).unwrap_or_default()
            )
        });
    (server, port as u16)
}

// ---- one client run ------------------------------------------------------------------------------

/// One scenario's scratch space: everything (HOME, TMPDIR, logs, projects) lives under one temp
/// dir, deleted at the end.
pub(crate) struct E2e {
    client: PathBuf,
    tmp: tempfile::TempDir,
    runs: usize,
    /// Set when the plugin is installed from a marketplace into this HOME: runs then use it (no
    /// `--plugin-dir`) and reach the binary the way an author's client does (no `NOVEL_BIN`).
    installed_home: Option<PathBuf>,
    /// `--allowedTools` for the next runs. None, as an author runs a slash command headless
    /// (`claude -p "/novel:continue 1"`): the skill's `allowed-tools` grant what its flow and
    /// its agents use. `Skill` when the prompt is free text and the model loads a skill itself
    /// (the README's permissions section).
    allowed_tools: Option<&'static str>,
    /// One HOME for every run of the scenario (set by [`E2e::keep_home`]): a later run can
    /// `--resume` the session an earlier one left there.
    shared_home: Option<PathBuf>,
}

/// How a run differs from a plain `claude -p PROMPT`.
#[derive(Default)]
pub(crate) struct RunOpts<'a> {
    /// `--resume SESSION`: the author's next message in a conversation an earlier run ended.
    pub(crate) resume: Option<&'a str>,
    /// Kill the client (SIGKILL, by PID) once the fake has received the request it plays this
    /// turn for; the turn should `hold` (never answered), so nothing runs after it.
    pub(crate) kill_at: Option<&'a str>,
    /// Run the client as an SDK host does (`--input-format stream-json` with the prompt on
    /// stdin, `--permission-prompt-tool stdio`): AskUserQuestion is then offered, and the
    /// harness answers each of its questions with the next of these labels (the author's
    /// choices, in order). Any other permission request is denied and kept in `Run::asked`: in
    /// the default permission mode with the documented setup, nothing else should ask.
    pub(crate) sdk: Option<&'a [&'a str]>,
}

/// What one `claude -p` run left behind.
pub(crate) struct Run {
    /// The stream-json events.
    pub(crate) events: Vec<Value>,
    /// Every request the client sent the fake: `{seq, method, url, turn, body, reply}`.
    pub(crate) requests: Vec<Value>,
    /// Every call that reached the binary (arguments joined by spaces).
    pub(crate) calls: Vec<String>,
    /// How long each of those calls took in the binary, in ms (same order).
    call_ms: Vec<f64>,
    /// The client's debug log (hook and tool timings).
    debug: String,
    stderr: String,
    /// What the fake said on stderr (a capture that found nothing, say).
    fake_stderr: String,
    /// SDK runs: the permission requests the host was asked other than AskUserQuestion's
    /// (`tool: input`), each denied.
    pub(crate) asked: Vec<String>,
    /// SDK runs: the questions AskUserQuestion put, with the answer the host gave.
    pub(crate) questions: Vec<(Value, String)>,
}

/// `PATH` without any directory that holds a `novel`: the plugin must find its binary itself.
pub(crate) fn clean_path() -> String {
    let path = std::env::var_os("PATH").unwrap_or_default();
    let dirs: Vec<PathBuf> = std::env::split_paths(&path)
        .filter(|d| !d.join("novel").exists())
        .collect();
    std::env::join_paths(dirs)
        .unwrap()
        .to_string_lossy()
        .into_owned()
}

/// The environment every client process gets: nothing from the test's own but `PATH`.
fn client_env(cmd: &mut Command, home: &Path) {
    cmd.env_clear()
        .env("PATH", clean_path())
        .env("HOME", home)
        .env("LANG", "C.UTF-8")
        .env("DISABLE_AUTOUPDATER", "1")
        .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
        .env("DISABLE_TELEMETRY", "1")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .stdin(Stdio::null());
}

impl E2e {
    pub(crate) fn new(what: &str) -> Option<Self> {
        let client = client(&format!("end-to-end with the real client: {what}"))?;
        Some(E2e {
            client,
            tmp: tempfile::tempdir().unwrap(),
            runs: 0,
            installed_home: None,
            allowed_tools: None,
            shared_home: None,
        })
    }

    /// Every later run of this scenario uses one HOME, so that `--resume` finds the sessions.
    pub(crate) fn keep_home(&mut self) {
        self.shared_home = Some(self.path().join("home"));
    }

    pub(crate) fn path(&self) -> &Path {
        self.tmp.path()
    }

    /// `claude ARGS` (no model involved: `plugin …`) with HOME = `home`; panics unless it ends
    /// with 0 within the time limit. Returns its stdout and stderr.
    fn cli(&self, home: &Path, args: &[&str]) -> String {
        let out_path = self.path().join("cli.out");
        let mut cmd = Command::new(&self.client);
        cmd.args(args).current_dir(home);
        client_env(&mut cmd, home);
        cmd.stdout(std::fs::File::create(&out_path).unwrap())
            .stderr(Stdio::from(
                std::fs::OpenOptions::new()
                    .append(true)
                    .open(&out_path)
                    .unwrap(),
            ));
        let mut child = Reaped::spawn(&mut cmd, "claude");
        let status = child.wait_for(CLIENT_TIMEOUT);
        drop(child);
        let out = std::fs::read_to_string(&out_path).unwrap_or_default();
        assert!(
            status.is_some_and(|s| s.success()),
            "claude {args:?} failed ({status:?}):\n{out}"
        );
        out
    }

    /// `claude -p PROMPT` in `cwd` against a fresh fake playing `script`: with a fresh HOME and
    /// the plugin from this checkout (`--plugin-dir`), or in the HOME the plugin was installed in.
    pub(crate) fn run(&mut self, cwd: &Path, prompt: &str, script: &Value) -> Run {
        self.run_with(cwd, prompt, script, &RunOpts::default())
    }

    /// [`E2e::run`], resumed or killed as `opts` says. A killed run is returned as it is (its
    /// exit status not checked): the caller looks at what it left behind.
    pub(crate) fn run_with(
        &mut self,
        cwd: &Path,
        prompt: &str,
        script: &Value,
        opts: &RunOpts<'_>,
    ) -> Run {
        self.runs += 1;
        let dir = self.path().join(format!("run-{}", self.runs));
        let home = match (&self.installed_home, &self.shared_home) {
            (Some(home), _) | (None, Some(home)) => home.clone(),
            (None, None) => dir.join("home"),
        };
        let tmpdir = dir.join("tmp");
        std::fs::create_dir_all(&home).unwrap();
        std::fs::create_dir_all(&tmpdir).unwrap();
        // The binary as the plugin reaches it: this test's build, each call logged with the time
        // it took (bash's clock: no process started to read it).
        let calls = dir.join("novel-calls.log");
        let shim = dir.join("novel-shim");
        std::fs::write(
            &shim,
            format!(
                "#!/usr/bin/env bash\ns=$EPOCHREALTIME\n'{}' \"$@\"\nrc=$?\n\
                 printf '%s\\t%s\\t%s\\n' \"$s\" \"$EPOCHREALTIME\" \"$*\" >> '{}'\nexit $rc\n",
                bin().display(),
                calls.display(),
            ),
        )
        .unwrap();
        std::fs::set_permissions(&shim, std::fs::Permissions::from_mode(0o755)).unwrap();

        let (fake, port) = start_fake(&dir, script);
        let stream = dir.join("stream.jsonl");
        let stderr = dir.join("client.stderr");
        let debug = dir.join("client-debug.log");
        let started = Instant::now();
        let mut cmd = Command::new(&self.client);
        if opts.sdk.is_some() {
            cmd.args([
                "--input-format",
                "stream-json",
                "--permission-prompt-tool",
                "stdio",
            ]);
        } else {
            cmd.arg("-p").arg(prompt);
        }
        if let Some(session) = opts.resume {
            cmd.arg("--resume").arg(session);
        }
        client_env(&mut cmd, &home);
        if self.installed_home.is_none() {
            cmd.arg("--plugin-dir").arg(repo()).env("NOVEL_BIN", &shim);
        }
        cmd.args(["--output-format", "stream-json", "--verbose"])
            .args(
                self.allowed_tools
                    .iter()
                    .flat_map(|tools| ["--allowedTools", tools]),
            )
            .arg("--debug-file")
            .arg(&debug)
            .current_dir(cwd)
            .env("TMPDIR", &tmpdir)
            .env("ANTHROPIC_BASE_URL", format!("http://127.0.0.1:{port}"))
            .env("ANTHROPIC_API_KEY", "dummy")
            .stderr(std::fs::File::create(&stderr).unwrap());
        if opts.sdk.is_some() {
            cmd.stdin(Stdio::piped()).stdout(Stdio::piped());
        } else {
            cmd.stdout(std::fs::File::create(&stream).unwrap());
        }
        let mut child = Reaped::spawn(&mut cmd, "claude");
        let host = opts.sdk.map(|answers| {
            let stdin = child.0.stdin.take().expect("stdin");
            let stdout = child.0.stdout.take().expect("stdout");
            let answers: Vec<String> = answers.iter().map(|a| a.to_string()).collect();
            let stream = stream.clone();
            let prompt = prompt.to_string();
            std::thread::spawn(move || sdk_host(stdin, stdout, &prompt, answers, &stream))
        });
        let requests_log = dir.join("requests.jsonl");
        let status = match opts.kill_at {
            None => child.wait_for(CLIENT_TIMEOUT),
            Some(at) => {
                kill_when_requested(&mut child, &requests_log, at);
                None
            }
        };
        drop(child);
        drop(fake);
        let (asked, questions) = host
            .map(|h| h.join().expect("the SDK host thread"))
            .unwrap_or_default();
        let read = |p: &Path| std::fs::read_to_string(p).unwrap_or_default();
        let mut call_args = Vec::new();
        let mut call_ms = Vec::new();
        for l in read(&calls).lines() {
            let mut f = l.splitn(3, '\t');
            let (Some(a), Some(b), Some(args)) = (f.next(), f.next(), f.next()) else {
                panic!("shim log line {l:?}");
            };
            let secs = |t: &str| t.parse::<f64>().unwrap_or_else(|_| panic!("time {t:?}"));
            call_args.push(args.to_string());
            call_ms.push((secs(b) - secs(a)) * 1000.0);
        }
        if let Some(keep) = std::env::var_os("NOVEL_E2E_KEEP") {
            // A copy of the run's requests and stream for a look by hand (not used by tests).
            let to = Path::new(&keep).join(format!("{}-run-{}", std::process::id(), self.runs));
            if std::fs::create_dir_all(&to).is_ok() {
                for f in ["requests.jsonl", "stream.jsonl", "novel-calls.log"] {
                    let _ = std::fs::copy(dir.join(f), to.join(f));
                }
            }
        }
        let run = Run {
            events: jsonl(&read(&stream)),
            requests: jsonl(&read(&requests_log)),
            calls: call_args,
            call_ms,
            debug: read(&debug),
            stderr: read(&stderr),
            fake_stderr: read(&dir.join("fake-api.stderr")),
            asked,
            questions,
        };
        eprintln!(
            "e2e: claude -p {prompt:?} took {:.1} s ({} requests, {} binary calls){}",
            started.elapsed().as_secs_f64(),
            run.requests.len(),
            run.calls.len(),
            run.timings()
        );
        if opts.resume.is_some() {
            // The client rebuilds a resumed conversation from its transcript; a tool call whose
            // result it lost is sent as this placeholder (seen when two fakes gave the same ids).
            let lost = run
                .messages_requests()
                .iter()
                .any(|b| b["messages"].to_string().contains("[Tool use interrupted]"));
            assert!(
                !lost,
                "the resumed conversation lost tool results\n{}",
                run.report()
            );
        }
        if opts.kill_at.is_some() {
            return run;
        }
        let Some(status) = status else {
            panic!(
                "claude -p {prompt:?} did not finish within {CLIENT_TIMEOUT:?}\n{}",
                run.report()
            );
        };
        assert!(
            status.success(),
            "claude -p {prompt:?} exited with {status}\n{}",
            run.report()
        );
        run
    }
}

/// The SDK host's side of a run: sends the prompt as the first stream-json user message, copies
/// every line the client prints to `stream`, answers each `can_use_tool` control request —
/// AskUserQuestion with the next of `answers` for each question, anything else denied (and
/// recorded) — and closes stdin once the result arrives, which ends the client. Returns the
/// requests it denied and the questions it answered.
#[allow(clippy::type_complexity)]
fn sdk_host(
    mut stdin: std::process::ChildStdin,
    stdout: std::process::ChildStdout,
    prompt: &str,
    answers: Vec<String>,
    stream: &Path,
) -> (Vec<String>, Vec<(Value, String)>) {
    use std::io::Write;
    let mut out = std::fs::File::create(stream).unwrap();
    let mut stdin = Some({
        let user = json!({"type": "user", "message": {"role": "user", "content": prompt}});
        let _ = writeln!(stdin, "{user}");
        stdin
    });
    let mut answers = answers.into_iter();
    let (mut asked, mut questions) = (Vec::new(), Vec::new());
    for line in BufReader::new(stdout).lines() {
        let Ok(line) = line else { break };
        let _ = writeln!(out, "{line}");
        let Ok(event) = serde_json::from_str::<Value>(&line) else {
            continue;
        };
        if event["type"] == "result" {
            stdin = None;
            continue;
        }
        if event["type"] != "control_request" {
            continue;
        }
        let req = &event["request"];
        let response = if req["subtype"] == "can_use_tool" && req["tool_name"] == "AskUserQuestion"
        {
            let mut given = serde_json::Map::new();
            for q in req["input"]["questions"].as_array().into_iter().flatten() {
                let answer = answers.next().unwrap_or_else(|| {
                    asked.push(format!("AskUserQuestion with no answer left: {q}"));
                    String::new()
                });
                questions.push((q.clone(), answer.clone()));
                given.insert(
                    q["question"].as_str().unwrap_or("").to_string(),
                    json!(answer),
                );
            }
            let mut input = req["input"].clone();
            input["answers"] = Value::Object(given);
            json!({"subtype": "success", "request_id": event["request_id"],
                "response": {"behavior": "allow", "updatedInput": input}})
        } else if req["subtype"] == "can_use_tool" {
            asked.push(format!("{}: {}", req["tool_name"], req["input"]));
            json!({"subtype": "success", "request_id": event["request_id"],
                "response": {"behavior": "deny", "message": "the test's author was asked"}})
        } else {
            asked.push(format!("control request {}", req["subtype"]));
            json!({"subtype": "error", "request_id": event["request_id"], "error": "unsupported"})
        };
        if let Some(s) = stdin.as_mut() {
            let _ = writeln!(
                s,
                "{}",
                json!({"type": "control_response", "response": response})
            );
        }
    }
    drop(stdin);
    (asked, questions)
}

/// Waits until the fake has logged a request for `turn`, then kills the client with SIGKILL by
/// its PID, as a crash or a closed terminal would, and reaps it (whatever it started goes with
/// its process group). Panics when the client ends first or the request never comes.
fn kill_when_requested(child: &mut Reaped, requests: &Path, turn: &str) {
    let start = Instant::now();
    let marker = format!("\"turn\":{}", json!(turn));
    loop {
        if let Some(status) = child.0.try_wait().expect("try_wait") {
            panic!("the client ended ({status}) before the fake saw turn {turn}");
        }
        let seen = std::fs::read_to_string(requests)
            .unwrap_or_default()
            .lines()
            .any(|l| l.contains(&marker));
        if seen {
            break;
        }
        assert!(
            start.elapsed() < CLIENT_TIMEOUT,
            "the fake never saw turn {turn} within {CLIENT_TIMEOUT:?}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let pid = child.0.id().to_string();
    // The client alone (not reaped yet, so the PID is still its own), then anything left in
    // its process group.
    let _ = Command::new("kill").args(["-KILL", &pid]).status();
    let _ = Command::new("kill")
        .args(["-KILL", "--", &format!("-{pid}")])
        .stderr(Stdio::null())
        .status();
    let _ = child.0.wait();
}

/// `n calls, median X ms, max Y ms`.
fn summary(ms: &[f64]) -> String {
    let mut v = ms.to_vec();
    v.sort_by(f64::total_cmp);
    format!(
        "{} calls, median {:.1} ms, max {:.1} ms",
        v.len(),
        v[v.len() / 2],
        v[v.len() - 1]
    )
}

pub(crate) fn jsonl(text: &str) -> Vec<Value> {
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}")))
        .collect()
}

/// The text of a message content: a string, or blocks (text, tool results, nested content).
pub(crate) fn text_of(content: &Value) -> String {
    match content {
        Value::String(s) => s.clone(),
        Value::Array(items) => items.iter().map(text_of).collect::<Vec<_>>().join("\n"),
        Value::Object(o) => match o.get("text") {
            Some(Value::String(s)) => s.clone(),
            _ => o.get("content").map(text_of).unwrap_or_default(),
        },
        _ => String::new(),
    }
}

/// A tool call the model made and what came back.
pub(crate) struct ToolCall {
    pub(crate) name: String,
    pub(crate) input: Value,
    /// The Agent call this one ran inside, if any.
    pub(crate) parent: Option<String>,
    pub(crate) result: String,
    pub(crate) is_error: bool,
}

impl Run {
    pub(crate) fn init(&self) -> &Value {
        self.events
            .iter()
            .find(|e| e["type"] == "system" && e["subtype"] == "init")
            .unwrap_or_else(|| panic!("no init event\n{}", self.report()))
    }

    /// The session the run was in (what `--resume` takes).
    pub(crate) fn session_id(&self) -> String {
        self.init()["session_id"]
            .as_str()
            .unwrap_or_else(|| panic!("no session_id in init\n{}", self.report()))
            .to_string()
    }

    pub(crate) fn result(&self) -> &Value {
        self.events
            .iter()
            .rev()
            .find(|e| e["type"] == "result")
            .unwrap_or_else(|| panic!("no result event\n{}", self.report()))
    }

    /// The POST /v1/messages bodies, in order.
    pub(crate) fn messages_requests(&self) -> Vec<&Value> {
        self.requests
            .iter()
            .filter(|r| {
                r["method"] == "POST"
                    && r["url"].as_str().unwrap_or("").starts_with("/v1/messages?")
            })
            .map(|r| &r["body"])
            .collect()
    }

    /// Every tool call of the run (main thread and agents), with its result.
    pub(crate) fn tool_calls(&self) -> Vec<ToolCall> {
        let mut calls: Vec<(String, ToolCall)> = Vec::new();
        for e in &self.events {
            let parent = e["parent_tool_use_id"].as_str().map(str::to_string);
            let Some(blocks) = e["message"]["content"].as_array() else {
                continue;
            };
            for b in blocks {
                if e["type"] == "assistant" && b["type"] == "tool_use" {
                    calls.push((
                        b["id"].as_str().unwrap_or_default().to_string(),
                        ToolCall {
                            name: b["name"].as_str().unwrap_or_default().to_string(),
                            input: b["input"].clone(),
                            parent: parent.clone(),
                            result: String::new(),
                            is_error: false,
                        },
                    ));
                } else if e["type"] == "user" && b["type"] == "tool_result" {
                    let id = b["tool_use_id"].as_str().unwrap_or_default();
                    if let Some((_, call)) = calls.iter_mut().find(|(i, _)| i == id) {
                        call.result = text_of(&b["content"]);
                        call.is_error = b["is_error"] == true;
                    }
                }
            }
        }
        calls.into_iter().map(|(_, c)| c).collect()
    }

    /// Hook timings, for the log: the binary's own time per hook call (from the shim), the
    /// client's SessionStart span (hook started → output parsed) and, per tool, the client's
    /// `permissionDecisionMs` (the PreToolUse hook runs inside it) from its debug log.
    fn timings(&self) -> String {
        let mut out = String::new();
        let mut kinds: Vec<(&str, Vec<f64>)> = Vec::new();
        for (call, ms) in self.calls.iter().zip(&self.call_ms) {
            let kind = match call.as_str() {
                "context session-start" => "session-start",
                "hook pre-tool-use" => "pre-tool-use",
                "hook post-tool-use" => "post-tool-use",
                _ => continue,
            };
            match kinds.iter_mut().find(|(k, _)| *k == kind) {
                Some((_, v)) => v.push(*ms),
                None => kinds.push((kind, vec![*ms])),
            }
        }
        for (kind, ms) in &kinds {
            out.push_str(&format!("\n  binary {kind}: {}", summary(ms)));
        }
        let clock = |line: &str| -> Option<f64> {
            // 2026-11-25T03:46:15.009Z [DEBUG] …
            let t = line.get(11..23)?;
            let mut parts = t.split(':');
            let (h, m, s) = (parts.next()?, parts.next()?, parts.next()?);
            Some(
                (h.parse::<f64>().ok()? * 3600.0
                    + m.parse::<f64>().ok()? * 60.0
                    + s.parse::<f64>().ok()?)
                    * 1000.0,
            )
        };
        let lines: Vec<&str> = self.debug.lines().collect();
        let start = lines
            .iter()
            .find(|l| l.contains("hook_execution_start"))
            .and_then(|l| clock(l));
        let end = lines
            .iter()
            .find(|l| l.contains("Hook SessionStart:"))
            .and_then(|l| clock(l));
        if let (Some(a), Some(b)) = (start, end) {
            out.push_str(&format!("\n  client SessionStart hook: {:.0} ms", b - a));
        }
        let mut tools: Vec<(String, Vec<f64>)> = Vec::new();
        for l in &lines {
            let Some(rest) = l.split("tool_dispatch_start tool=").nth(1) else {
                continue;
            };
            let tool = rest
                .split_whitespace()
                .next()
                .unwrap_or_default()
                .to_string();
            let Some(ms) = rest
                .split("permissionDecisionMs=")
                .nth(1)
                .and_then(|v| v.split_whitespace().next())
                .and_then(|v| v.parse::<f64>().ok())
            else {
                continue;
            };
            match tools.iter_mut().find(|(t, _)| *t == tool) {
                Some((_, v)) => v.push(ms),
                None => tools.push((tool, vec![ms])),
            }
        }
        for (tool, ms) in &tools {
            out.push_str(&format!(
                "\n  client permission decision {tool}: {}",
                summary(ms)
            ));
        }
        out
    }

    /// The scripted turns the fake played, in request order.
    pub(crate) fn turns_played(&self) -> Vec<String> {
        self.requests
            .iter()
            .filter_map(|r| r["turn"].as_str().map(str::to_string))
            .collect()
    }

    /// A readable account of the run for failure messages.
    pub(crate) fn report(&self) -> String {
        let mut out = String::from("--- tool calls\n");
        for c in self.tool_calls() {
            let input = match c.input["command"].as_str() {
                Some(cmd) => cmd.to_string(),
                None => c.input.to_string(),
            };
            let mut result: String = c.result.chars().take(400).collect();
            if result.len() < c.result.len() {
                result.push('…');
            }
            out.push_str(&format!(
                "{}{} {}\n    -> {}{}\n",
                if c.parent.is_some() { "  [agent] " } else { "" },
                c.name,
                input.chars().take(300).collect::<String>(),
                if c.is_error { "ERROR " } else { "" },
                result
            ));
        }
        out.push_str(&format!("--- turns played: {:?}\n", self.turns_played()));
        out.push_str(&format!("--- binary calls: {:#?}\n", self.calls));
        if let Some(r) = self.events.iter().rev().find(|e| e["type"] == "result") {
            out.push_str(&format!("--- result: {}\n", r["result"]));
        }
        out.push_str(&format!(
            "--- fake API stderr:\n{}",
            self.fake_stderr.chars().take(2000).collect::<String>()
        ));
        out.push_str(&format!(
            "--- client stderr:\n{}",
            self.stderr.chars().take(2000).collect::<String>()
        ));
        out
    }

    /// Every turn of the script was played (the client did not stop early).
    pub(crate) fn assert_all_turns_played(&self, script: &Value) {
        let played = self.turns_played();
        for t in script["turns"].as_array().unwrap() {
            let name = t["name"].as_str().unwrap();
            assert!(
                played.iter().any(|p| p == name),
                "scripted turn {name} was never played\n{}",
                self.report()
            );
        }
        let result = self.result();
        assert_eq!(result["subtype"], "success", "{}", self.report());
    }
}

// ---- tokens and cost -----------------------------------------------------------------------------

// ---- scripts -------------------------------------------------------------------------------------

pub(crate) fn turn(name: &str, when: Value, reply: Vec<Value>) -> Value {
    json!({"name": name, "when": when, "reply": reply})
}

pub(crate) fn say(text: &str) -> Value {
    json!({"text": text})
}

pub(crate) fn tool(name: &str, input: Value) -> Value {
    json!({"tool": name, "input": input})
}

/// What the scripted model runs to see how the Bash tool finds `novel`: the variable the Bash
/// tool does not have, and the path `novel` resolves to.
const WHERE: &str = r#"echo "root=[${CLAUDE_PLUGIN_ROOT:-}]"; command -v novel"#;

pub(crate) fn bash(command: &str) -> Value {
    tool("Bash", json!({"command": command, "description": "novel"}))
}

/// A call to the binary as the Markdown writes it (`novel …` with placeholders): that text, the
/// line the model sees in a skill or agent body (anything the client substitutes substituted,
/// placeholders kept) and the command it runs (placeholders replaced). The Bash tool finds
/// `novel` in the plugin's `bin/`, which the client appends to its PATH.
pub(crate) struct Line {
    pub(crate) markdown: String,
    pub(crate) seen: String,
    pub(crate) run: String,
}

pub(crate) fn line(markdown: &str, values: &[(&str, &str)]) -> Line {
    let seen = markdown.replace("${CLAUDE_PLUGIN_ROOT}", repo().to_str().unwrap());
    let mut run = seen.clone();
    for (i, (k, v)) in values.iter().enumerate() {
        // A placeholder given more than once (`--title "<TEXT>" --genre "<TEXT>"`) takes its
        // values in order.
        if values[i + 1..].iter().any(|(later, _)| later == k) {
            run = run.replacen(k, v, 1);
        } else {
            run = run.replace(k, v);
        }
    }
    assert!(
        !run.contains('<'),
        "placeholder left in {run} (values {values:?})"
    );
    Line {
        markdown: markdown.to_string(),
        seen,
        run,
    }
}

/// An agent's Markdown body (frontmatter removed, plugin root substituted) and its tools.
pub(crate) fn agent_file(name: &str) -> (String, Vec<String>) {
    let path = repo().join(format!("agents/{name}.md"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let rest = text.strip_prefix("---\n").expect("frontmatter");
    let end = rest.find("\n---\n").expect("end of frontmatter");
    let tools = rest[..end]
        .lines()
        .find_map(|l| l.strip_prefix("tools:"))
        .map(|t| t.split(',').map(|s| s.trim().to_string()).collect())
        .unwrap_or_default();
    let body = rest[end + 5..]
        .trim()
        .replace("${CLAUDE_PLUGIN_ROOT}", repo().to_str().unwrap());
    (body, tools)
}

/// The first line of an agent's body: what the fake matches its requests by.
/// The PRD's name of an agent (`ChapterWriter`), as the packet's header gives it.
pub(crate) fn agent_label(name: &str) -> String {
    name.split('-')
        .map(|w| {
            let mut c = w.chars();
            c.next()
                .map_or(String::new(), |f| f.to_uppercase().chain(c).collect())
        })
        .collect()
}

pub(crate) fn read_md_text(rel: &str) -> String {
    std::fs::read_to_string(repo().join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

pub(crate) fn agent_marker(name: &str) -> String {
    let (body, _) = agent_file(name);
    body.lines()
        .find(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .unwrap()
        .chars()
        .take(40)
        .collect()
}

pub(crate) fn system_text(body: &Value) -> String {
    text_of(&body["system"])
}

pub(crate) fn first_user_text(body: &Value) -> String {
    body["messages"]
        .as_array()
        .and_then(|m| m.iter().find(|m| m["role"] == "user"))
        .map(|m| text_of(&m["content"]))
        .unwrap_or_default()
}

pub(crate) fn all_messages_text(body: &Value) -> String {
    body["messages"]
        .as_array()
        .map(|m| {
            m.iter()
                .map(|m| text_of(&m["content"]))
                .collect::<Vec<_>>()
                .join("\n")
        })
        .unwrap_or_default()
}

fn first_line(text: &str) -> &str {
    text.lines().next().unwrap_or_default()
}

// ---- scenarios -----------------------------------------------------------------------------------

#[test]
fn session_start_loads_the_plugin_and_tells_the_model_where_the_book_stands() {
    let Some(mut e2e) = E2e::new("session start") else {
        return;
    };
    let (_t, book) = new_project();

    // In a novel project; the model then loads /novel:status itself with the Skill tool, which a
    // free-text prompt run headless needs allowed.
    e2e.allowed_tools = Some("Skill");
    let main = json!({"first_user": "看看进度"});
    let script = json!({"turns": [
        turn("skill", main.clone(), vec![tool("Skill", json!({"skill": "novel:status"}))]),
        turn("done", main, vec![say("好的。")]),
    ]});
    let run = e2e.run(&book, "看看进度", &script);
    run.assert_all_turns_played(&script);

    let init = run.init();
    let plugins = init["plugins"].as_array().expect("plugins");
    assert!(
        plugins
            .iter()
            .any(|p| p["name"] == "novel" && p["path"] == repo().to_str().unwrap()),
        "plugin not loaded: {plugins:?}"
    );
    let errors = &init["plugin_errors"];
    assert!(
        errors.is_null() || errors.as_array().is_some_and(Vec::is_empty),
        "plugin_errors: {errors}"
    );
    let listed = |key: &str| -> Vec<String> {
        init[key]
            .as_array()
            .unwrap_or_else(|| panic!("init has no {key}"))
            .iter()
            .filter_map(|v| v.as_str().map(str::to_string))
            .collect()
    };
    let skills = listed("skills");
    for s in ["novel:start", "novel:continue", "novel:status"] {
        assert!(
            skills.contains(&s.to_string()),
            "{s} missing from {skills:?}"
        );
    }
    let agents = listed("agents");
    for a in AGENTS {
        assert!(
            agents.contains(&format!("novel:{a}")),
            "novel:{a} missing from init agents {agents:?}"
        );
    }
    let ours: Vec<_> = agents.iter().filter(|a| a.starts_with("novel:")).collect();
    assert_eq!(ours.len(), AGENTS.len(), "{ours:?}");

    // The hook ran through scripts/novel to this build and said something in Chinese.
    let (said, _) = session_start_json(&run);
    let said = said.as_str();
    assert!(said.starts_with("【novel 小说项目】《青云志异》"), "{said}");
    assert!(
        run.calls.iter().any(|c| c == "context session-start"),
        "{:?}",
        run.calls
    );

    // The first request carries the hook output, the knowledge skill and the agents.
    let requests = run.messages_requests();
    let first = requests.first().expect("no request");
    let context = all_messages_text(first);
    assert!(
        context.contains(&format!(
            "SessionStart:startup hook success: {}",
            said.trim_end()
        )),
        "hook output not in the first request: {}",
        context.chars().take(3000).collect::<String>()
    );
    assert!(
        context.contains("- novel:novel-writing: "),
        "knowledge skill not listed"
    );
    for a in AGENTS {
        assert!(
            context.contains(&format!("- novel:{a}: ")),
            "novel:{a} not listed"
        );
    }

    // The Skill tool expanded /novel:status with the binary's numbers.
    let headline = stdout(&novel(&book, &["status"]));
    let headline = first_line(&headline);
    let after = requests.get(1).expect("no request after the Skill call");
    let text = all_messages_text(after);
    assert!(
        text.contains(&format!(
            "Base directory for this skill: {}",
            repo().join("skills/status").display()
        )) && text.contains(headline),
        "status skill body with {headline:?} not sent: {}",
        text.chars().take(3000).collect::<String>()
    );

    // Outside a novel project the hook adds nothing.
    let empty = e2e.path().join("elsewhere");
    std::fs::create_dir_all(&empty).unwrap();
    let quiet =
        json!({"turns": [turn("hello", json!({"first_user": "你好"}), vec![say("你好。")])]});
    let run = e2e.run(&empty, "你好", &quiet);
    run.assert_all_turns_played(&quiet);
    let (said, _) = session_start_json(&run);
    assert_eq!(said, "");
    let first = run.messages_requests()[0].clone();
    let context = all_messages_text(&first);
    assert!(
        !context.contains("SessionStart:startup hook success") && !context.contains("【novel"),
        "{}",
        context.chars().take(2000).collect::<String>()
    );
}

#[test]
fn status_skill_body_carries_the_computed_numbers() {
    let Some(mut e2e) = E2e::new("/novel:status") else {
        return;
    };
    // A project with chapter 1 committed (a key chapter: two judges).
    let (_t, book) = crate::test_chapter::writing_project();
    let token = crate::test_chapter::up_to_gate(&book, 1, true);
    crate::test_chapter::ok(&book, &["chapter", "commit", "1", "--token", &token]);
    let status = stdout(&novel(&book, &["status"]));
    let headline = first_line(&status);
    assert!(headline.starts_with("第1卷 第1/10章 "), "{headline}");

    let script = json!({"turns": [
        turn("read", json!({"first_user": "<command-name>/novel:status</command-name>"}), vec![say("第1卷 写到第 1 章。")]),
    ]});
    let run = e2e.run(&book, "/novel:status", &script);
    run.assert_all_turns_played(&script);

    let first = run.messages_requests()[0].clone();
    let body = first_user_text(&first);
    assert!(
        body.contains("# /novel:status —— 看看这本书现在怎么样"),
        "skill body not expanded: {body}"
    );
    assert!(
        body.contains(headline),
        "headline {headline:?} not in: {body}"
    );
    assert!(
        body.contains("下一步：/novel:continue"),
        "next not inlined: {body}"
    );
    assert!(
        !body.contains("${CLAUDE_PLUGIN_ROOT}") && !body.contains("!`"),
        "{body}"
    );
    // The skill's two `!` lines run concurrently: any order.
    let mut calls = run.calls.clone();
    calls.sort();
    assert_eq!(calls, ["context session-start", "next", "status"]);
}

#[test]
fn start_in_an_empty_directory_creates_a_valid_project() {
    let Some(mut e2e) = E2e::new("/novel:start") else {
        return;
    };
    let cwd = e2e.path().join("writing");
    std::fs::create_dir_all(&cwd).unwrap();
    let dir = cwd.join("青云志异");
    let d = dir.to_str().unwrap();
    let root = repo();
    let flow = root.join("skills/start/references/quick-start.md");

    let next = line(r#"novel next --json"#, &[]);
    let init = line(
        r#"novel init "<DIR>" --title "<TEXT>" --genre "<TEXT>" --json"#,
        &[("<DIR>", d), ("<TEXT>", "青云志异"), ("<TEXT>", "玄幻")],
    );
    let init_run = init.run.clone();
    let quickstart = line(
        r#"novel --project "<DIR>" quickstart --json"#,
        &[("<DIR>", d)],
    );
    let brief = format!("{d}/brief.md");
    let main = json!({"first_user": "<command-name>/novel:start</command-name>"});
    let script = json!({"turns": [
        turn("next", main.clone(), vec![bash(&next.run)]),
        turn("read-flow", main.clone(), vec![tool("Read", json!({"file_path": flow}))]),
        turn("init", main.clone(), vec![bash(&init_run)]),
        turn("read-brief", main.clone(), vec![tool("Read", json!({"file_path": brief}))]),
        turn("edit-brief", main.clone(), vec![tool("Edit", json!({"file_path": brief,
            "old_string": "## 一句话卖点\n",
            "new_string": "## 一句话卖点\n\n落第书生陆尘捡到一枚能听见亡者遗言的玉佩，靠死人的秘密在宗门夹缝里翻身。\n"}))]),
        turn("quickstart", main.clone(), vec![bash(&quickstart.run)]),
        turn("done", main, vec![say("《青云志异》建好了，纲领已写，下一步是核心设定。")]),
    ]});
    let run = e2e.run(&cwd, "/novel:start 开新书", &script);
    run.assert_all_turns_played(&script);

    // The commands run are the ones the skill and its flow file show the model.
    let requests = run.messages_requests();
    let skill = first_user_text(requests[0]);
    assert!(skill.contains("# /novel:start：状态感知入口"), "{skill}");
    assert!(
        skill.contains(&next.seen),
        "{} not in the skill body",
        next.seen
    );
    let calls = run.tool_calls();
    for c in &calls {
        assert!(!c.is_error, "{} failed\n{}", c.name, run.report());
    }
    let flow_text = &calls
        .iter()
        .find(|c| c.name == "Read" && c.input["file_path"] == flow.to_str().unwrap())
        .expect("flow read")
        .result;
    // A file read with Read is not substituted: the model runs its commands exactly as written
    // there, `novel …` from the plugin's bin/ on the Bash tool's PATH.
    for l in [&init, &quickstart] {
        assert!(
            flow_text.contains(&l.markdown),
            "{} not in quick-start.md",
            l.markdown
        );
    }
    let bash_result = |cmd: &str| -> Value {
        let c = calls
            .iter()
            .find(|c| c.name == "Bash" && c.input["command"] == cmd)
            .unwrap_or_else(|| panic!("no Bash {cmd}\n{}", run.report()));
        serde_json::from_str(c.result.trim())
            .unwrap_or_else(|e| panic!("{cmd}: not JSON ({e}): {}", c.result))
    };
    assert_eq!(bash_result(&next.run)["data"]["project"], Value::Null);
    let made = bash_result(&init_run);
    assert_eq!(made["data"]["orchestrator_state"], "QUICK_START", "{made}");
    let qs = bash_result(&quickstart.run);
    assert_eq!(qs["data"]["steps"][0]["id"], "brief");
    assert_eq!(qs["data"]["steps"][0]["done"], true, "{qs}");
    assert_eq!(qs["data"]["next"], "world", "{qs}");

    // The project on disk is valid, and the brief carries the author's line.
    let out = novel(&dir, &["validate"]);
    assert_eq!(code(&out), 0, "{}{}", stdout(&out), stderr(&out));
    let text = std::fs::read_to_string(dir.join("brief.md")).unwrap();
    assert!(text.contains("- **书名**：青云志异") && text.contains("能听见亡者遗言的玉佩"));
    // The write guard runs before every Bash call (it reads the command line) and every Write.
    let expected = [
        "context session-start",
        "hook pre-tool-use",
        "next --json",
        "hook pre-tool-use",
        &format!("init {d} --title 青云志异 --genre 玄幻 --json"),
        "hook pre-tool-use",
        "hook post-tool-use",
        "hook pre-tool-use",
        &format!("--project {d} quickstart --json"),
    ];
    assert_eq!(run.calls, expected);
}

/// Chapter 1 ready to write: two storylines, volume 1 = chapters 1–10, chapter 1's outline and
/// L3 contract.
pub(crate) fn chapter_one_project() -> (tempfile::TempDir, PathBuf) {
    let (t, book) = crate::test_chapter::writing_project();
    std::fs::write(
        book.join("volumes/vol-01/outline.md"),
        "# 第 1 卷 · 风起\n\n## 第1章 风起\n- 故事线：main_arc\n- 地点：城北废墟\n- 冲突：陆尘夜探废墟，找到密信\n",
    )
    .unwrap();
    write_json(
        &book.join("volumes/vol-01/chapter-contracts/chapter-001.json"),
        &json!({"chapter": 1, "storyline_id": "main_arc",
            "objectives": [{"id": "OBJ-001-1", "type": "plot", "required": true,
                "description": "陆尘夜探城北废墟，找到密信"}],
            "acceptance_criteria": ["OBJ-001-1 在正文中明确体现", "不违反 LS-001"]}),
    );
    let out = novel(&book, &["validate"]);
    assert_eq!(code(&out), 0, "fixture: {}", stdout(&out));
    (t, book)
}

#[test]
fn continue_writes_and_commits_a_chapter_through_the_agents() {
    use crate::test_e2e_paths::{Book, CONTINUE, GATED, answer, gates_of, skill_next};
    let Some(mut e2e) = E2e::new("/novel:continue") else {
        return;
    };
    let (_t, book) = chapter_one_project();
    let d = book.to_str().unwrap();
    let mut b = Book::new(&book);
    // Chapter 1 opens volume 1: a key chapter, two judges.
    b.at(1, "风起", true);
    b.opening();
    // The plugin's `novel` is on the Bash tool's PATH, in the main conversation as in an agent
    // (the probe rides along in messages that run anyway).
    let first = b
        .turns
        .iter_mut()
        .find(|t| t["name"] == "begin-writer")
        .unwrap();
    first["reply"].as_array_mut().unwrap().insert(
        0,
        json!({"tool": "Bash", "input": {"command": WHERE, "description": "novel"}}),
    );
    let writer = b
        .turns
        .iter_mut()
        .find(|t| t["name"] == "r0-writer-0")
        .unwrap();
    writer["reply"]
        .as_array_mut()
        .unwrap()
        .push(json!({"tool": "Bash", "input": {"command": WHERE, "description": "novel"}}));
    b.steps_3_to_9("r0", None, ("屋里一灯如豆", "屋里只点着一盏油灯"), 4.2);
    b.capture_next(json!({"chars": "\"chars\":([0-9]+)"}));
    b.end("report", "第1章 {{chars}}字 4.2（双裁判） ✅");
    let script = b.script();
    let run = e2e.run(&book, "/novel:continue 1", &script);
    run.assert_all_turns_played(&script);

    // The skill as the model got it: arguments substituted, `next` already answered.
    let requests = run.messages_requests();
    let skill = first_user_text(requests[0]);
    assert!(skill.contains("# /novel:continue —— 续写"), "{skill}");
    assert!(skill.contains("「1」"), "arguments not substituted");
    let next = skill_next(&run);
    assert_eq!(
        next["data"]["recommendation"]["action"], "write_next_chapter",
        "{next}"
    );
    for (name, task) in [
        ("chapter-writer", "初稿"),
        ("summarizer", "摘要"),
        ("style-refiner", "润色"),
        ("quality-judge", "评审"),
    ] {
        assert!(
            skill.contains(&format!("`novel:{name}`，`任务：{task}`")),
            "the continue skill does not dispatch novel:{name} with 任务：{task}"
        );
    }

    // Each agent got its own body as system prompt, its own tools, and its packet from the
    // SubagentStart hook in its first request: no agent fetched it.
    for name in [
        "chapter-writer",
        "summarizer",
        "style-refiner",
        "quality-judge",
    ] {
        let (body, tools) = agent_file(name);
        let req = requests
            .iter()
            .find(|r| system_text(r).contains(&agent_marker(name)))
            .unwrap_or_else(|| panic!("no request from novel:{name}\n{}", run.report()));
        assert!(
            system_text(req).contains(&body),
            "novel:{name}: body not in its system prompt"
        );
        let mut offered: Vec<String> = req["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["name"].as_str().unwrap().to_string())
            .collect();
        offered.sort();
        let mut tools = tools;
        tools.sort();
        assert_eq!(offered, tools, "novel:{name} tools");
        let first = all_messages_text(req);
        let label = crate::test_e2e::agent_label(name);
        assert!(
            first.contains(&format!("｜{label} 第 1 章｜项目目录 {d}】"))
                && first.contains("<context agent="),
            "novel:{name}: no packet in its first request\n{first}"
        );
        if name == "quality-judge" {
            assert!(
                first.contains("<checks title=\"机检（程序量的数字）\">"),
                "{first}"
            );
            assert!(first.contains("串线检查：leak_risk"), "{first}");
        }
    }
    assert!(
        !run.calls
            .iter()
            .any(|c| c.contains(" context chapter-writer")
                || c.contains(" context summarizer")
                || c.contains(" context style-refiner")
                || c.contains(" context quality-judge")),
        "an agent fetched its packet: {:?}",
        run.calls
    );
    let handed = run
        .calls
        .iter()
        .filter(|c| c.starts_with("context subagent-start --part "))
        .count();
    assert_eq!(
        handed, 15,
        "three parts for each of five dispatches: {:?}",
        run.calls
    );

    // Every tool call succeeded; every Bash call was `novel …` (or the probe) and reached this
    // build through the plugin's bin/novel.
    let calls = run.tool_calls();
    for c in &calls {
        assert!(
            !c.is_error,
            "{} {} failed\n{}",
            c.name,
            c.input,
            run.report()
        );
    }
    let wheres: Vec<&ToolCall> = calls
        .iter()
        .filter(|c| c.name == "Bash" && c.input["command"] == WHERE)
        .collect();
    assert_eq!(wheres.len(), 2, "{}", run.report());
    assert!(wheres[0].parent.is_none() && wheres[1].parent.is_some());
    for w in &wheres {
        assert_eq!(
            w.result.trim(),
            format!("root=[]\n{}", repo().join("bin/novel").display()),
            "{}",
            run.report()
        );
    }
    for c in calls.iter().filter(|c| c.name == "Bash") {
        let cmd = c.input["command"].as_str().unwrap();
        assert!(cmd == WHERE || cmd.starts_with("novel "), "{cmd}");
        assert!(!cmd.contains("{{"), "unsubstituted: {cmd}");
    }

    let token = crate::test_e2e_paths::token_of(&run, &b);
    let began = answer(&run, &b.skill(crate::test_e2e_paths::BEGIN), "", 0);
    assert_eq!(
        began["data"]["key_chapter"],
        json!(["volume_first"]),
        "{began}"
    );
    let g = gates_of(&run, &b.gate_line(), &token);
    let bash_chars: usize = calls
        .iter()
        .filter(|c| c.name == "Bash" && c.input["command"] != WHERE)
        .map(|c| c.input["command"].as_str().unwrap().chars().count())
        .sum();
    let bash_calls = calls
        .iter()
        .filter(|c| c.name == "Bash" && c.input["command"] != WHERE)
        .count();
    eprintln!("chapter 1: {bash_calls} Bash calls, {bash_chars} characters of command lines");
    assert_eq!(g.len(), 1, "{g:?}");
    assert_eq!(g[0]["decision"], "pass", "{}", g[0]);
    assert_eq!(g[0]["commit"]["last_completed_chapter"], 1, "{}", g[0]);
    let chars = g[0]["commit"]["chars"].as_u64().unwrap();
    assert_eq!(
        run.result()["result"].as_str().unwrap(),
        format!("第1章 {chars}字 4.2（双裁判） ✅")
    );
    assert!(read_md_text(CONTINUE).contains(GATED));

    // Every stage of the pipeline log carries the usage of the agents before it, as their Agent
    // results gave it — recorded by the Agent hook, no figure on any command line: drafted the
    // writer's and the Summarizer's, refined the refiner's, judged both judges' (opus: the
    // second judge was dispatched with it).
    let usage = |agent: &str, nth: usize, key: &str| -> u64 {
        let result = &calls
            .iter()
            .filter(|c| c.name == "Agent" && c.input["subagent_type"] == format!("novel:{agent}"))
            .nth(nth)
            .unwrap_or_else(|| panic!("no Agent call #{nth} of {agent}"))
            .result;
        let at = result
            .find(key)
            .unwrap_or_else(|| panic!("no {key} in {result}"));
        result[at + key.len()..]
            .chars()
            .skip_while(|c| !c.is_ascii_digit())
            .take_while(char::is_ascii_digit)
            .collect::<String>()
            .parse()
            .unwrap()
    };
    let log = read_json(&book.join("logs/chapter-001-log.json"));
    let stage = |name: &str| {
        log["stages"]
            .as_array()
            .and_then(|s| s.iter().find(|s| s["name"] == name))
            .unwrap_or_else(|| panic!("no {name} stage in {log}"))
            .clone()
    };
    let t = "subagent_tokens:";
    assert_eq!(
        stage("drafted")["tokens"],
        usage("chapter-writer", 0, t) + usage("summarizer", 0, t),
        "{log}"
    );
    assert_eq!(
        stage("refined")["tokens"],
        usage("style-refiner", 0, t),
        "{log}"
    );
    assert_eq!(
        stage("refined")["duration_ms"],
        usage("style-refiner", 0, "duration_ms:"),
        "{log}"
    );
    assert_eq!(
        stage("judged")["tokens"],
        usage("quality-judge", 0, t) + usage("quality-judge", 1, t),
        "{log}"
    );
    assert_eq!(
        stage("drafted")["duration_ms"],
        usage("chapter-writer", 0, "duration_ms:") + usage("summarizer", 0, "duration_ms:"),
        "{log}"
    );
    assert_eq!(stage("drafted")["model"], Value::Null, "{log}");
    assert!(
        std::fs::read_dir(book.join("staging/logs"))
            .map(|d| d.count())
            .unwrap_or(0)
            == 0,
        "usage records left behind"
    );
    // `status` counts them: the chapter's tokens are the five dispatches' totals.
    let billed: u64 = [
        ("chapter-writer", 0),
        ("summarizer", 0),
        ("style-refiner", 0),
        ("quality-judge", 0),
        ("quality-judge", 1),
    ]
    .iter()
    .map(|(a, k)| usage(a, *k, t))
    .sum();
    let st = crate::test_chapter::ok(&book, &["status"]);
    assert_eq!(st["data"]["pipeline"]["tokens"], billed, "{st}");
    // No command line of the chapter carries a token or a usage figure.
    for c in calls.iter().filter(|c| c.name == "Bash") {
        let cmd = c.input["command"].as_str().unwrap();
        for flag in ["--token", "--tokens", "--duration-ms", "--model"] {
            assert!(!cmd.contains(flag), "{cmd}");
        }
    }
    assert_eq!(stage("judged")["model"], "opus", "{log}");
    assert_eq!(stage("refined")["input_tokens"], Value::Null, "{log}");

    // The binary saw the skill's sequence: the `!` line's `next`, then `begin`, and the step that
    // ends the chapter last (guard and packet hooks around them).
    let non_hook: Vec<&String> = run
        .calls
        .iter()
        .filter(|c| !c.starts_with("hook ") && !c.starts_with("context subagent-start"))
        .collect();
    assert_eq!(non_hook[0], "context session-start");
    assert_eq!(non_hook[1], "next --json");
    assert_eq!(
        *non_hook[2],
        format!("--project {d} chapter begin 1 --json")
    );
    let tail = non_hook[non_hook.len() - 2..].to_vec();
    assert_eq!(
        *tail[0],
        format!("--project {d} chapter stage judged --json"),
        "{tail:?}"
    );
    assert_eq!(
        *tail[1],
        format!("--project {d} chapter gate 1 --commit --json")
    );
    let guarded = calls
        .iter()
        .filter(|c| matches!(c.name.as_str(), "Write" | "Edit" | "Bash"))
        .count();
    let hooks = run
        .calls
        .iter()
        .filter(|c| c.starts_with("hook pre-tool-use"))
        .count();
    assert_eq!(
        hooks, guarded,
        "one guard call per Write/Edit/Bash: {:?}",
        run.calls
    );

    // On disk: the refined chapter committed, staging empty, status right.
    let text = std::fs::read_to_string(book.join("chapters/chapter-001.md")).unwrap();
    assert!(
        text.contains("屋里只点着一盏油灯") && !text.contains("一灯如豆"),
        "{text}"
    );
    assert!(book.join("evaluations/chapter-001-eval.json").is_file());
    assert!(
        book.join("evaluations/chapter-001-eval-secondary.json")
            .is_file()
    );
    let status = crate::test_chapter::ok(&book, &["status"]);
    assert_eq!(status["data"]["last_completed_chapter"], 1, "{status}");
    assert_eq!(status["data"]["inflight"], Value::Null, "{status}");
    assert_eq!(status["data"]["lock"]["state"], "free", "{status}");
    let headline = status["data"]["headline"].as_str().unwrap();
    assert!(headline.starts_with("第1卷 第1/10章 "), "{headline}");
    b.assert_valid();

    // The cost of a key chapter (two judges): the issue's bounds for a chapter, judged with one
    // more dispatch.
    let table = token_table("chapter 1 (key chapter, two judges): 4.2 pass", &[&run]);
    eprintln!("{table}");
    let cost = chapter_cost(&metered(&[&run]), 1, 1);
    assert!(cost.main_requests <= 6, "{cost:?}\n{table}");
    assert!(cost.max_per_dispatch <= 3, "{cost:?}\n{table}");
}

#[test]
fn guard_hook_blocks_a_direct_write_to_the_state() {
    let Some(mut e2e) = E2e::new("guard hook") else {
        return;
    };
    let (_t, book) = new_project();
    let target = book.join("state/current-state.json");
    let before = std::fs::read(&target).unwrap();
    let path = target.to_str().unwrap();
    let main = json!({"first_user": "把状态清零"});
    let script = json!({"turns": [
        // The client refuses to overwrite a file it has not read, before any hook runs.
        turn("read", main.clone(), vec![tool("Read", json!({"file_path": path}))]),
        turn("write", main.clone(), vec![tool("Write", json!({"file_path": path,
            "content": "{\"schema_version\":1,\"state_version\":9,\"last_updated_chapter\":0,\"characters\":{},\"world_state\":{},\"active_foreshadowing\":[]}\n"}))]),
        // Then through the shell: the guard reads the command line.
        turn("shell", main.clone(), vec![bash("echo '{}' > state/current-state.json")]),
        turn("done", main, vec![say("状态文件不能直接改。")]),
    ]});
    let run = e2e.run(&book, "把状态清零", &script);
    run.assert_all_turns_played(&script);

    let calls = run.tool_calls();
    let write = calls
        .iter()
        .find(|c| c.name == "Write")
        .expect("a Write call");
    assert!(write.is_error, "the Write went through\n{}", run.report());
    assert!(
        write.result.contains("state/current-state.json") && write.result.contains("novel"),
        "{}",
        write.result
    );
    let denials = &run.result()["permission_denials"];
    assert!(
        denials
            .as_array()
            .is_some_and(|d| d.iter().any(|d| d["tool_name"] == "Write")),
        "{denials}"
    );
    let shell = calls
        .iter()
        .find(|c| c.name == "Bash")
        .expect("a Bash call");
    assert!(
        shell.is_error,
        "the Bash write went through\n{}",
        run.report()
    );
    assert!(
        shell.result.contains("state/current-state.json") && shell.result.contains("novel"),
        "{}",
        shell.result
    );
    assert_eq!(std::fs::read(&target).unwrap(), before, "the state changed");
    assert!(
        run.calls.iter().any(|c| c == "hook pre-tool-use"),
        "{:?}",
        run.calls
    );
    assert!(
        !run.calls.iter().any(|c| c == "hook post-tool-use"),
        "{:?}",
        run.calls
    );
    // The model was told why, in the next request.
    let last = run.messages_requests().last().cloned().unwrap();
    assert!(all_messages_text(last).contains(&write.result));
}

// ---- install from a marketplace ------------------------------------------------------------------

/// `git ARGS` in `dir`, isolated from the machine's git configuration; panics unless it succeeds.
fn git(dir: &Path, home: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .args([
            "-c",
            "user.name=novel e2e",
            "-c",
            "user.email=e2e@example.invalid",
        ])
        .args([
            "-c",
            "init.defaultBranch=main",
            "-c",
            "commit.gpgsign=false",
        ])
        .args(args)
        .current_dir(dir)
        .env("HOME", home)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env_remove("GIT_DIR")
        .env_remove("GIT_WORK_TREE")
        .output()
        .expect("run git");
    assert!(
        out.status.success(),
        "git {args:?} in {}: {}",
        dir.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The plugin's version in a copy of the repository.
fn plugin_version(root: &Path) -> String {
    read_json(&root.join(".claude-plugin/plugin.json"))["version"]
        .as_str()
        .expect("plugin.json has a version")
        .to_string()
}

/// The SessionStart hook's answer in a run, as JSON (the hook prints JSON when it has something
/// for the author) or None when it printed plain text for the model.
fn session_start_json(run: &Run) -> (String, Option<Value>) {
    let hook = run
        .events
        .iter()
        .find(|e| e["subtype"] == "hook_response" && e["hook_event"] == "SessionStart")
        .unwrap_or_else(|| panic!("no SessionStart hook_response\n{}", run.report()));
    assert_eq!(hook["exit_code"], 0, "{hook}");
    let stdout = hook["stdout"].as_str().unwrap().to_string();
    assert!(
        !stdout.contains('\u{fffd}'),
        "hook output is not clean UTF-8: {stdout}"
    );
    let parsed = serde_json::from_str(stdout.trim()).ok();
    (stdout, parsed)
}

/// The installed plugin the client loaded: its path, with no plugin errors.
fn loaded_from(run: &Run) -> String {
    let init = run.init();
    let errors = &init["plugin_errors"];
    assert!(
        errors.is_null() || errors.as_array().is_some_and(Vec::is_empty),
        "plugin_errors: {errors}"
    );
    let plugin = init["plugins"]
        .as_array()
        .and_then(|p| p.iter().find(|p| p["name"] == "novel"))
        .unwrap_or_else(|| panic!("plugin not loaded: {}", init["plugins"]));
    assert_eq!(plugin["source"], "novel@novel-marketplace", "{plugin}");
    plugin["path"].as_str().unwrap().to_string()
}

#[test]
fn marketplace_install_from_git_finds_the_binary_across_an_update() {
    let Some(mut e2e) = E2e::new("install from a marketplace") else {
        return;
    };
    let base = e2e.path().to_path_buf();
    let home = base.join("home");
    std::fs::create_dir_all(&home).unwrap();

    // The repository as its publisher pushes it: this checkout's files (tracked and new, nothing
    // ignored, so no target/ and no node_modules/) in one commit, in a bare repository served
    // over smart HTTP on 127.0.0.1 (the client clones shallowly).
    let src = base.join("src");
    let listed = git(
        &repo(),
        &home,
        &[
            "ls-files",
            "-z",
            "--cached",
            "--others",
            "--exclude-standard",
        ],
    );
    for rel in listed.split('\0').filter(|r| !r.is_empty()) {
        let from = repo().join(rel);
        if !from.is_file() {
            continue; // deleted in the working tree
        }
        let to = src.join(rel);
        std::fs::create_dir_all(to.parent().unwrap()).unwrap();
        std::fs::copy(&from, &to).unwrap(); // keeps the mode: scripts stay executable
    }
    git(&src, &home, &["init", "-q"]);
    git(&src, &home, &["add", "-A"]);
    git(&src, &home, &["commit", "-q", "-m", "novel as published"]);
    let served = base.join("served");
    std::fs::create_dir_all(&served).unwrap();
    git(
        &served,
        &home,
        &["clone", "-q", "--bare", src.to_str().unwrap(), "novel.git"],
    );
    let (_server, port) = start_server(&base, "git-http", &["--root".as_ref(), served.as_os_str()]);
    let url = format!("http://127.0.0.1:{port}/novel.git");

    let version = plugin_version(&src);
    e2e.cli(&home, &["plugin", "marketplace", "add", &url]);
    let out = e2e.cli(&home, &["plugin", "install", "novel@novel-marketplace"]);
    assert!(out.contains("novel@novel-marketplace"), "{out}");
    let cache = home
        .join(".claude/plugins/cache/novel-marketplace/novel")
        .join(&version);
    assert!(
        cache.join("scripts/novel").is_file(),
        "no cached copy at {}",
        cache.display()
    );
    assert!(
        !cache.join("target").exists(),
        "the cached copy has a target/"
    );
    e2e.installed_home = Some(home.clone());

    // A session in a novel project: no binary yet, and the author is told the exact command.
    let (_t, book) = new_project();
    let hello =
        json!({"turns": [turn("hello", json!({"first_user": "你好"}), vec![say("你好。")])]});
    let run = e2e.run(&book, "你好", &hello);
    run.assert_all_turns_played(&hello);
    assert_eq!(Path::new(&loaded_from(&run)), cache);
    let install = cache.join("scripts/install");
    let (said, answer) = session_start_json(&run);
    let answer = answer.unwrap_or_else(|| panic!("the hook told only the model: {said}"));
    let message = answer["systemMessage"].as_str().unwrap_or_default();
    assert!(
        message.contains("还没有安装") && message.contains(install.to_str().unwrap()),
        "{answer}"
    );
    let context = answer["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .unwrap_or_default();
    assert!(context.contains("还没有安装"), "{answer}");

    // The author runs the command, from a terminal (no CLAUDE_PLUGIN_DATA): the binary goes to
    // the data directory the client gives this plugin. By default it is downloaded from a
    // release directory served on 127.0.0.1 (this test's build, packed and summed as the release
    // workflow does), with no cargo anywhere; NOVEL_E2E_REAL_CARGO=1 builds it with the real
    // cargo instead (a release build takes minutes on 2 cores).
    let real = std::env::var_os("NOVEL_E2E_REAL_CARGO").is_some_and(|v| v == "1");
    let releases = base.join("releases");
    crate::test_install::release(&releases, &version, &bin(), None);
    let release_server = FileServer::start(&releases);
    let mut cmd = Command::new(&install);
    client_env(&mut cmd, &home);
    if real {
        cmd.env("NOVEL_INSTALL_FROM", "cargo");
        for key in ["CARGO_HOME", "RUSTUP_HOME"] {
            if let Some(v) = std::env::var_os(key) {
                cmd.env(key, v);
            }
        }
    } else {
        // No cargo anywhere: not on PATH, and no ~/.cargo in the fresh HOME.
        let path = clean_path();
        let no_cargo: Vec<&str> = path
            .split(':')
            .filter(|d| !Path::new(d).join("cargo").exists())
            .collect();
        cmd.env("PATH", no_cargo.join(":"));
        cmd.env(
            "NOVEL_RELEASE_URL",
            format!("{}/v{{version}}", release_server.url()),
        );
    }
    let started = Instant::now();
    let out = cmd
        .current_dir(&home)
        .output()
        .expect("run scripts/install");
    eprintln!(
        "e2e: scripts/install ({}) took {:.2} s",
        if real { "real cargo" } else { "download" },
        started.elapsed().as_secs_f64()
    );
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success() && said.contains("已安装"),
        "scripts/install: {said}"
    );
    let data = home.join(".claude/plugins/data/novel-novel-marketplace");
    assert!(data.join("bin/novel").is_file(), "{said}");
    if !real {
        assert!(said.contains("正在下载"), "{said}");
        assert_eq!(
            release_server.requests().len(),
            2,
            "{:?}",
            release_server.requests()
        );
    }
    drop(release_server);

    // The next session finds it: the hook reports the book, and /novel:status expands with the
    // numbers the installed binary computed.
    let status = json!({"turns": [
        turn("read", json!({"first_user": "<command-name>/novel:status</command-name>"}), vec![say("还没开写。")]),
    ]});
    let run = e2e.run(&book, "/novel:status", &status);
    run.assert_all_turns_played(&status);
    let (said, answer) = session_start_json(&run);
    assert!(
        answer.is_none() && said.starts_with("【novel 小说项目】《青云志异》"),
        "{said}"
    );
    let headline = stdout(&novel(&book, &["status"]));
    let body = first_user_text(run.messages_requests()[0]);
    assert!(
        body.contains("# /novel:status") && body.contains(first_line(&headline)),
        "{body}"
    );

    // The publisher releases a new version; the author updates. The new cached copy still
    // finds the binary, and the author is told it is of the old version.
    let mut manifest = read_json(&src.join(".claude-plugin/plugin.json"));
    let mut parts: Vec<u64> = version.split('.').map(|p| p.parse().unwrap()).collect();
    *parts.last_mut().unwrap() += 1;
    let newer = parts
        .iter()
        .map(u64::to_string)
        .collect::<Vec<_>>()
        .join(".");
    manifest["version"] = json!(newer);
    write_json(&src.join(".claude-plugin/plugin.json"), &manifest);
    git(&src, &home, &["commit", "-q", "-am", "release"]);
    git(
        &src,
        &home,
        &[
            "push",
            "-q",
            served.join("novel.git").to_str().unwrap(),
            "HEAD",
        ],
    );
    e2e.cli(
        &home,
        &["plugin", "marketplace", "update", "novel-marketplace"],
    );
    let out = e2e.cli(&home, &["plugin", "update", "novel@novel-marketplace"]);
    assert!(out.contains(&newer), "{out}");
    let updated = home
        .join(".claude/plugins/cache/novel-marketplace/novel")
        .join(&newer);
    let run = e2e.run(&book, "你好", &hello);
    assert_eq!(Path::new(&loaded_from(&run)), updated);
    let (said, answer) = session_start_json(&run);
    let answer = answer.unwrap_or_else(|| panic!("no message for the author: {said}"));
    let message = answer["systemMessage"].as_str().unwrap_or_default();
    assert!(
        message.contains(&newer)
            && message.contains(&version)
            && message.contains(updated.join("scripts/install").to_str().unwrap()),
        "{answer}"
    );
    let context = answer["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .unwrap_or_default();
    assert!(
        context.starts_with("【novel 小说项目】《青云志异》"),
        "the binary was not found: {answer}"
    );
}
