//! `novel-text` — Chinese text analytics for the novel engine.
//!
//! What it is (as it lands): sentence and dialogue segmentation, the AI-cliché blacklist scan,
//! repetition, style metrics, 字数 counting, name near-miss detection and keyword extraction —
//! all pure functions over `&str`, counting and slicing by `char`, with positions in characters.
//! The segmenter (jieba) sits behind a feature and is initialised lazily, never on the hook or
//! status path.
//!
//! What it is not: it reads no files and prints nothing; what a finding means for a chapter or
//! a gate is decided in `novel-core`.
//!
//! The crate is empty until the text-analytics work lands; the workspace reserves its place.

#![warn(clippy::print_stdout, clippy::print_stderr)]
