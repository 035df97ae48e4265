//! `novel-store` — the novel project on disk.
//!
//! What it is: the layout of PRD §9.1 (its file names are `novel_core::naming`'s, re-exported by `layout`), project
//! discovery, safe paths (ids are slugs before they become path segments), BOM-tolerant reads,
//! atomic writes (unique temp file + fsync + rename + directory fsync), `novel init`,
//! loading a whole project for validation, the one reader of `novel.json` (`settings`), the
//! `.novel.lock` (and the `process` facts it needs), the commit journal and recovery,
//! and the guard hooks' decisions (`guard`: the one table of files the binary owns). For the text
//! checks it says which files are read (`select`: chapter selections, the blacklist, the style
//! profile; `names`, `leak`: the sources of the name and leak checks, and the leak record), and
//! `novel export`'s reading of committed chapters and its EPUB package (`export`, `epub`).
//! The book's figures are derived facts computed in one place and only read by the views:
//! `volumes` (where a volume ends, which volume holds a chapter) and `figures` (字数, scores,
//! cost and tokens, the style drift verdict, the headline), which `status`, `dashboard`,
//! `review` and `next` show.
//!
//! What it is not: it decides nothing about content (that is `novel-core`) and never prints.

#![warn(clippy::print_stdout, clippy::print_stderr)]

pub mod agent_usage;
pub mod blacklist;
pub mod cache;
pub mod chapter;
pub mod checkpoint;
pub mod context;
pub mod dashboard;
pub mod epub;
pub mod error;
pub mod export;
pub mod figures;
pub mod guard;
pub mod import;
pub mod init;
pub mod io;
pub mod journal;
pub mod judging;
pub mod layout;
pub mod leak;
pub mod load;
pub mod lock;
pub mod lockfile;
pub mod memory;
pub mod names;
pub mod next;
pub mod periodic;
pub mod permissions;
pub mod plan;
pub mod prefs;
pub mod process;
pub mod project;
pub mod quickstart;
pub mod rebuild;
pub mod repair;
pub mod review;
pub mod revision;
pub mod select;
pub mod settings;
pub mod shell;
pub mod spec;
pub mod stage;
pub mod state;
pub mod state_text;
pub mod status;
pub mod style;
pub mod synth;
pub mod time;
pub mod transaction;
pub mod volume;
pub mod volumes;

pub use error::StoreError;
pub use project::Project;
