//! All CLI integration tests, in one test binary (fast to build on two cores).
// Tests talk to the test runner, not to an author: the print macros are fine here
// (crates/novel-cli/clippy.toml disallows them for the binary).
#![allow(clippy::disallowed_macros)]

mod support;
mod test_author_words;
mod test_blacklist;
mod test_chapter;
mod test_check;
mod test_cli;
mod test_client;
mod test_codes;
mod test_context;
mod test_continuity;
mod test_contracts;
mod test_count;
mod test_craft;
mod test_dashboard;
mod test_e2e;
mod test_e2e_cost;
mod test_e2e_journey;
mod test_e2e_paths;
mod test_envelope;
mod test_evidence;
mod test_export;
mod test_figures;
mod test_gate_loop;
mod test_hook;
mod test_import;
mod test_import_books;
mod test_import_hostile;
mod test_import_web;
mod test_init;
mod test_install;
mod test_integrity;
mod test_kill;
mod test_lint;
mod test_lock;
mod test_md_commands;
mod test_menu;
mod test_no_dead_ends;
mod test_permissions;
mod test_plugin;
mod test_race;
mod test_release;
mod test_retire;
mod test_review;
mod test_revision;
mod test_robust;
mod test_snapshots;
mod test_spec;
mod test_state;
mod test_status;
mod test_style;
mod test_validate;
mod test_volume;
mod test_wrapper;
