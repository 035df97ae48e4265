//! Evidence of a text finding: where a match stands. The findings themselves are
//! [`novel_core::diagnostic::Diagnostic`]s, the one finding type of the workspace.
//!
//! Layer: checks — the checks of a text (blacklist, repetition, patterns, lint) and their findings;
//! above the ground.

use serde::Serialize;

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
