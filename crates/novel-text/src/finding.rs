//! One finding type for every rule family, rendered by the CLI as `path:line:col: rule: message`
//! or as JSON.

use serde::Serialize;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Severity {
    /// Counted toward a threshold; one alone does not fail the chapter.
    Warning,
    /// Fails the chapter by itself.
    Error,
}

/// A finding at a place in a file. `line` and `col` are 1-based; `col` counts characters.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct Finding {
    pub line: usize,
    pub col: usize,
    /// Stable rule id: `blacklist/<category>`, `pattern/<id>`, `repetition/<kind>` ….
    pub rule: String,
    pub severity: Severity,
    /// Chinese explanation with the fix.
    pub message: String,
    /// The original line around the match.
    pub excerpt: String,
}
