//! `novel-text` — Chinese text analytics for the novel engine.
//!
//! What it is: pure functions over `&str` that count and slice by `char` and report positions
//! as 1-based line and column in characters of the original file.
//!
//! - [`normalize`]: the one place text is normalised for matching (NFC, full-width → ASCII),
//!   with a map back to original positions.
//! - [`markdown`]: which characters are Markdown syntax or front matter, not prose.
//! - [`segment`]: a chapter prepared once ([`segment::Document`]): paragraphs (one per line),
//!   dialogue in 「」“”『』 and `""`, sentences split on 。！？… and closing quotes.
//! - [`count`]: 字数 as Chinese platforms count it.
//! - [`export`]: a chapter without Markdown (title line `第N章 标题`, plain paragraphs) and the
//!   txt and joined-Markdown layouts of `novel export`.
//! - [`decode`], [`chapters`]: a manuscript to import — bytes in any common Chinese encoding to
//!   NFC text, and the text split at its chapter, volume and extra headings.
//! - [`blacklist`], [`patterns`], [`repetition`]: the rule families of `novel lint`, combined
//!   with thresholds in [`lint`]; every finding is a [`novel_core::diagnostic::Diagnostic`].
//! - [`maintain`]: the maintenance rules of the blacklist (PRD §7 黑名单维护) that
//!   `novel blacklist` applies to `ai-blacklist.json`.
//! - [`metrics`]: the numbers of `style-profile.json`, and a chapter's
//!   [`novel_core::drift::StyleSample`] for 风格校准 (the rule is `novel_core::drift`).
//! - [`names`]: near-miss variants of registered names and unregistered person-like names;
//!   [`leak`]: names of other storylines in a chapter (防串线), the whole check in
//!   [`leak::assess`] over the sources `novel-store` gathers (`novel_core::text_sources`).
//! - [`keyphrase`]: the 3–5 key phrases of a world-rule sentence for spec propagation (jieba
//!   behind the `jieba` feature, with the project glossary of `novel_core::spec::glossary` and
//!   a genre vocabulary); the CLI hands it to `novel_core::spec::propagate`.
//!
//! What it is not: it reads no files and prints nothing (the CLI does both), and it decides
//! nothing about a chapter's fate beyond pass/fail against the thresholds it is given. Every lint
//! rule works on characters, without a word segmenter, so the hook and status paths never pay
//! for one; the one segmenter, jieba in [`keyphrase`], is compiled only with the `jieba`
//! feature and loads its dictionary on its first call, which only `novel spec propagate`
//! makes. Rules are data where the project keeps data (`ai-blacklist.json`, `novel.json`);
//! the small tables that are code (function characters, surnames, name characters, look-alike
//! characters) say why beside them, and the one generated table, tone-less pinyin for the
//! homophone check, is data in `data/pinyin.txt` with its generator beside it.

#![warn(clippy::print_stdout, clippy::print_stderr)]

pub mod blacklist;
pub mod chapters;
pub mod count;
pub mod craft;
pub mod decode;
pub mod export;
pub mod finding;
pub mod furniture;
pub mod keyphrase;
pub mod leak;
pub mod lint;
pub mod maintain;
pub mod markdown;
pub mod metrics;
pub mod names;
pub mod normalize;
pub mod patterns;
pub mod repetition;
pub mod segment;
