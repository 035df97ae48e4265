//! One finding type for every rule family, rendered by the CLI as `path:line:col: rule: message`
//! or as JSON.

use serde::Serialize;

/// The one severity of every finding in the workspace (`novel validate`, plans, text checks):
/// for the text checks, a warning counts toward a threshold and one alone does not fail the
/// chapter; an error fails it by itself.
pub use novel_core::validate::Severity;

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

/// Where a match stands, as evidence in a report: 1-based line and column in characters of the
/// original file, and the excerpt around it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Evidence {
    pub line: usize,
    pub col: usize,
    pub excerpt: String,
}

impl Evidence {
    /// The evidence of `span` in `doc`, with 12 characters of context on each side.
    pub fn of(doc: &crate::segment::Document, span: crate::segment::Span) -> Evidence {
        let (line, col) = doc.position(span.start);
        Evidence {
            line,
            col,
            excerpt: doc.excerpt(span, 12),
        }
    }
}
