//! Rendering: human Chinese text or exactly one JSON envelope on stdout, and exit codes.
//!
//! Envelope: `{"ok":true,"command":"…","data":…}` on success;
//! `{"ok":false,"command":"…","error":{"code","message","hint"}}` on failure — and when a
//! check found problems (exit 1), `data` carries the findings beside `error`.

use serde_json::{Value, json};

use novel_store::StoreError;

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
        }
    }

    /// Attaches the result of a check that found problems.
    pub fn with_details(mut self, data: Value, human: String) -> Self {
        self.details = Some(Box::new(Details { data, human }));
        self
    }
}

impl From<StoreError> for CliError {
    fn from(e: StoreError) -> Self {
        // Every store error is a usage or project problem (exit 2); conflicts come from the lock.
        CliError::new(e.code(), e.to_string(), e.hint(), Exit::Usage)
    }
}

/// What a successful command produced.
pub struct Report {
    pub data: Value,
    pub human: String,
}

/// Prints the result of `command` and returns the process exit code.
pub fn finish(json_mode: bool, command: &str, result: Result<Report, CliError>) -> i32 {
    match result {
        Ok(report) => {
            if json_mode {
                println!(
                    "{}",
                    json!({"ok": true, "command": command, "data": report.data})
                );
            } else if !report.human.is_empty() {
                print!("{}", report.human);
                if !report.human.ends_with('\n') {
                    println!();
                }
            }
            Exit::Ok as i32
        }
        Err(err) => {
            if json_mode {
                let mut doc = json!({
                    "ok": false,
                    "command": command,
                    "error": {"code": err.code, "message": err.message, "hint": err.hint},
                });
                if let Some(details) = &err.details {
                    doc["data"] = details.data.clone();
                }
                println!("{doc}");
            } else {
                // Findings (if any) are the human output of a check; the error line follows.
                if let Some(details) = &err.details {
                    print!("{}", details.human);
                }
                eprintln!("错误[{}]：{}", err.code, err.message);
                if !err.hint.is_empty() {
                    eprintln!("提示：{}", err.hint);
                }
            }
            err.exit as i32
        }
    }
}
