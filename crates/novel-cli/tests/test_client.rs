//! The real client: `claude plugin validate --strict` on the plugin manifest and on the
//! marketplace, with the Claude Code version pinned in `tests/e2e/package.json` (installed by
//! `tests/run` with `npm ci --prefix tests/e2e`).
//!
//! Run in a clean environment (fresh HOME, no auto-update, no telemetry, no traffic beyond the
//! check). Without the client installed the test fails when `NOVEL_REQUIRE_CLIENT=1` (CI and
//! `tests/run` set it) and otherwise says loudly that it was skipped.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

pub(crate) fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .expect("repository root")
}

/// The pinned client, if `npm ci --prefix tests/e2e` has installed it; `what` names the check
/// that is skipped without it.
pub(crate) fn client(what: &str) -> Option<PathBuf> {
    let bin = repo().join("tests/e2e/node_modules/.bin/claude");
    if bin.exists() {
        return Some(bin);
    }
    let required = std::env::var_os("NOVEL_REQUIRE_CLIENT").is_some_and(|v| v == "1");
    assert!(
        !required,
        "NOVEL_REQUIRE_CLIENT=1 but {} is missing: run `npm ci --prefix tests/e2e` (tests/run does)",
        bin.display()
    );
    eprintln!(
        "\n==================== SKIPPED: {what} ====================\n\
         The pinned Claude Code client is not installed ({}).\n\
         Run tests/run (or `npm ci --prefix tests/e2e`) to check the plugin with the real client.\n\
         ==========================================================================\n",
        bin.display()
    );
    None
}

fn validate(client: &Path, target: &Path, home: &Path) -> Output {
    let path = std::env::var_os("PATH").unwrap_or_default();
    Command::new(client)
        .args(["plugin", "validate"])
        .arg(target)
        .arg("--strict")
        .env_clear()
        .env("PATH", path)
        .env("HOME", home)
        .env("LANG", "C.UTF-8")
        .env("DISABLE_AUTOUPDATER", "1")
        .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
        .env("DISABLE_TELEMETRY", "1")
        .current_dir(home)
        .output()
        .expect("run claude")
}

#[test]
fn claude_plugin_validate_strict_passes_for_plugin_and_marketplace() {
    let Some(client) = client("claude plugin validate") else {
        return;
    };
    let home = tempfile::tempdir().unwrap();
    let root = repo();
    for (what, target) in [
        ("plugin", root.join(".claude-plugin/plugin.json")),
        ("marketplace", root.clone()),
    ] {
        let out = validate(&client, &target, home.path());
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(
            out.status.code(),
            Some(0),
            "claude plugin validate {} --strict ({what}) failed:\n{text}",
            target.display()
        );
        assert!(text.contains("Validation passed"), "{what}: {text}");
    }
}
