//! `novel-core` — the typed model of every novel-project file and the pure rules over it.
//!
//! What it is: serde types for each file kind of PRD §9 (with their JSON Schemas generated from
//! the same types), and the functions that decide — validation of a loaded project today; the
//! ops engine, gate, spec diff, retirement protection and context selection as they land.
//! Every decision takes values and returns values with evidence.
//! The names of project files (`chapter-NNN`, `vol-NN`, summaries, evaluations, deltas,
//! contracts) are spelled in one place, [`naming`]. The style drift verdict (风格校准) is
//! [`drift`]: a window's figures (measured by `novel-text`) against the profile's baseline.
//!
//! What it is not: it never touches the file system and never prints. Reading, writing and
//! locking live in `novel-store`; rendering lives in `novel-cli`. It segments no Chinese text:
//! spec propagation takes the key phrases of a rule sentence from an extractor its caller
//! passes in (`novel-text`'s jieba extractor in the binary), so the rules stay pure and testable
//! with fixed phrases, and nothing that depends on this crate pays for a dictionary.

#![warn(clippy::print_stdout, clippy::print_stderr)]

pub mod changes;
pub mod codes;
pub mod context;
pub mod cost;
pub mod diagnostic;
pub mod drift;
pub mod edits;
pub mod frontmatter;
pub mod gate;
pub mod genre;
pub mod import;
pub mod judging;
pub mod menu;
pub mod model;
pub mod naming;
pub mod next;
pub mod numerals;
pub mod ops;
pub mod periodic;
pub mod permissions;
pub mod pipeline;
pub mod plan;
pub mod quickstart;
pub mod repair;
pub mod review;
pub mod revision;
pub mod score;
pub mod spec;
pub mod status;
pub mod text_sources;
pub mod tokens;
pub mod validate;

pub use model::FileKind;
