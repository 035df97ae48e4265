//! Rendering: human Chinese text or exactly one JSON envelope on stdout, and exit codes.
//!
//! Envelope: `{"said":"…","ok":true,"command":"…","data":…}` on success — `said` is the first line
//! of the human output (at most [`SAID_CHARS`] characters; absent when there is none), put first
//! because the client shows an author the first lines of every command's output, pretty-printed:
//! a sentence there instead of `"ok": true`;
//! `{"ok":false,"command":"…","error":{"code","message","hint"}}` on failure (with `file`, and
//! `pointer` or `line`/`col` in characters, when the error is about a place in a file) — and when
//! a check found problems (exit 1), `data` carries the findings beside `error`.
//!
//! Layer: ground — below the commands.

use std::io::Write;
use std::sync::atomic::{AtomicI32, Ordering};

use serde::Serialize;
use serde_json::{Value, json};

use novel_store::StoreError;
use novel_store::error::Place;

/// The exit code a closed stdout ends the process with: 0 until `finish` knows the result.
static EXIT_ON_CLOSED_STDOUT: AtomicI32 = AtomicI32::new(0);

/// Writes `text` to stdout — every byte the binary prints goes through here (`print!` is
/// disallowed in this crate, see clippy.toml). A reader that went away (`novel lint --all | head`)
/// is not an error: the process ends quietly, with exit 0, or with the code of a result already
/// decided (a failed check piped into `head` still fails). Any other failure to write has no one
/// left to tell and is ignored.
pub fn out(text: &str) {
    let mut stdout = std::io::stdout().lock();
    if let Err(e) = stdout
        .write_all(text.as_bytes())
        .and_then(|()| stdout.flush())
        && e.kind() == std::io::ErrorKind::BrokenPipe
    {
        std::process::exit(EXIT_ON_CLOSED_STDOUT.load(Ordering::Relaxed));
    }
}

/// Writes `text` to stderr; a closed or broken stderr is ignored (never a panic).
pub fn err(text: &str) {
    let mut stderr = std::io::stderr().lock();
    let _ = stderr
        .write_all(text.as_bytes())
        .and_then(|()| stderr.flush());
}

/// Exit codes of DESIGN.md.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    Ok = 0,
    Problems = 1,
    Usage = 2,
    Conflict = 3,
}

/// A failure the CLI reports: stable code, Chinese message, hint, exit code.
#[derive(Debug, Clone)]
pub struct CliError {
    pub code: &'static str,
    pub message: String,
    pub hint: String,
    pub exit: Exit,
    /// The full result of a check that found problems (exit 1).
    pub details: Option<Box<Details>>,
    /// The file (and place in it) the error is about, when known: `error.file`, `pointer`,
    /// `line`, `col` of the envelope, as a finding would say it.
    pub place: Option<Box<Place>>,
}

/// What a failed check still reports: JSON `data` and the human findings list.
#[derive(Debug, Clone)]
pub struct Details {
    pub data: Value,
    pub human: String,
}

impl CliError {
    pub fn new(
        code: &'static str,
        message: impl Into<String>,
        hint: impl Into<String>,
        exit: Exit,
    ) -> Self {
        CliError {
            code,
            message: message.into(),
            hint: hint.into(),
            exit,
            details: None,
            place: None,
        }
    }

    /// Attaches the result of a check that found problems.
    pub fn with_details(mut self, data: Value, human: String) -> Self {
        self.details = Some(Box::new(Details { data, human }));
        self
    }

    /// Attaches a typed check result (see [`Report::new`]); one that cannot be serialised
    /// becomes the `E_INTERNAL` error instead.
    pub fn with_report(self, data: &impl Serialize, human: String) -> Self {
        match to_data(data) {
            Ok(data) => self.with_details(data, human),
            Err(e) => e,
        }
    }
}

impl From<StoreError> for CliError {
    fn from(e: StoreError) -> Self {
        // Every store error is a usage or project problem (exit 2) but the lock's conflicts.
        let exit = if e.is_conflict() {
            Exit::Conflict
        } else {
            Exit::Usage
        };
        let mut err = CliError::new(e.code(), e.to_string(), e.hint(), exit);
        err.place = e.place().map(Box::new);
        err
    }
}

/// What a successful command produced.
pub struct Report {
    pub data: Value,
    pub human: String,
}

impl Report {
    /// A report whose `--json` data is `data` serialised: a typed report struct's field order
    /// is the key order of the JSON.
    pub fn new(data: &impl Serialize, human: impl Into<String>) -> Result<Report, CliError> {
        Ok(Report {
            data: to_data(data)?,
            human: human.into(),
        })
    }
}

/// `data` as a JSON value. A derived report of strings, numbers and string-keyed maps always
/// serialises; a failure is a defect of this program (`E_INTERNAL`), never the author's.
pub fn to_data(data: &impl Serialize) -> Result<Value, CliError> {
    serde_json::to_value(data).map_err(|e| {
        CliError::new(
            "E_INTERNAL",
            format!("结果无法转为 JSON：{e}"),
            "",
            Exit::Usage,
        )
    })
}

/// The longest `said` line of a JSON envelope, in characters.
pub const SAID_CHARS: usize = 60;

/// The first non-empty line of `human`, cut to [`SAID_CHARS`] characters (with 「…」).
fn said(human: &str) -> Option<String> {
    let line = human.lines().map(str::trim).find(|l| !l.is_empty())?;
    if line.starts_with('{') || line.starts_with('[') {
        // A command whose human output is itself JSON (a hook's answer): nothing to say.
        return None;
    }
    let mut out: String = line.chars().take(SAID_CHARS).collect();
    if line.chars().count() > SAID_CHARS {
        out.push('…');
    }
    Some(out)
}

/// Prints the result of `command` and returns the process exit code.
pub fn finish(json_mode: bool, command: &str, result: Result<Report, CliError>) -> i32 {
    let code = match &result {
        Ok(_) => Exit::Ok as i32,
        Err(err) => err.exit as i32,
    };
    EXIT_ON_CLOSED_STDOUT.store(code, Ordering::Relaxed);
    // Every error says how to fix it: a site without a specific hint gets the table's.
    let result = result.map_err(|mut e| {
        if e.hint.is_empty()
            && let Some(doc) = novel_core::codes::lookup(e.code)
        {
            e.hint = doc.hint.to_string();
        }
        e
    });
    match result {
        Ok(report) => {
            if json_mode {
                let doc = match said(&report.human) {
                    Some(said) => {
                        json!({"said": said, "ok": true, "command": command, "data": report.data})
                    }
                    None => json!({"ok": true, "command": command, "data": report.data}),
                };
                out(&format!("{doc}\n"));
            } else if !report.human.is_empty() {
                out(&report.human);
                if !report.human.ends_with('\n') {
                    out("\n");
                }
            }
        }
        Err(e) => {
            if json_mode {
                let mut doc = json!({
                    "ok": false,
                    "command": command,
                    "error": {"code": e.code, "message": e.message, "hint": e.hint},
                });
                if let Some(p) = &e.place {
                    let error = &mut doc["error"];
                    error["file"] = json!(p.file.display().to_string());
                    for (key, v) in [
                        ("pointer", json!(p.pointer)),
                        ("line", json!(p.line)),
                        ("col", json!(p.col)),
                    ] {
                        if !v.is_null() {
                            error[key] = v;
                        }
                    }
                }
                if let Some(details) = &e.details {
                    doc["data"] = details.data.clone();
                }
                out(&format!("{doc}\n"));
            } else {
                // Findings (if any) are the human output of a check; the summary line follows.
                // A check that ran and found something (exit 1 with findings) did not fail: its
                // summary is a result, not an error (the findings say 警告 or 错误 each).
                if let Some(details) = &e.details {
                    out(&details.human);
                }
                let label = if e.details.is_some() && code == Exit::Problems as i32 {
                    "检查结果"
                } else {
                    "错误"
                };
                err(&format!("{label}[{}]：{}\n", e.code, e.message));
                if !e.hint.is_empty() {
                    err(&format!("提示：{}\n", e.hint));
                }
            }
        }
    }
    code
}
