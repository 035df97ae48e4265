//! The plugin manifests follow the conventions verified against the real client
//! (see the project's research notes): author is an object, hooks are not listed, the
//! marketplace points at `./`, and the plugin version is the binary's version.

use std::path::{Path, PathBuf};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn read(rel: &str) -> serde_json::Value {
    let text = std::fs::read_to_string(repo().join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

#[test]
fn plugin_manifest_is_valid() {
    let p = read(".claude-plugin/plugin.json");
    assert_eq!(p["name"], "novel");
    assert_eq!(
        p["version"],
        env!("CARGO_PKG_VERSION"),
        "plugin and binary versions agree"
    );
    assert!(p["author"].is_object(), "author must be an object");
    assert!(p["author"]["name"].is_string());
    assert!(
        p.get("hooks").is_none(),
        "hooks/hooks.json is loaded automatically; listing it duplicates it"
    );
    assert!(p["description"].as_str().is_some_and(|d| !d.is_empty()));
    assert!(
        !repo().join("CLAUDE.md").exists(),
        "a root CLAUDE.md breaks `plugin validate --strict`"
    );
}

#[test]
fn marketplace_lists_the_plugin_at_the_root() {
    let m = read(".claude-plugin/marketplace.json");
    assert!(m["name"].is_string());
    assert!(m["owner"]["name"].is_string());
    let plugins = m["plugins"].as_array().unwrap();
    assert_eq!(plugins.len(), 1);
    assert_eq!(plugins[0]["name"], "novel");
    assert_eq!(plugins[0]["source"], "./");
}

#[test]
fn wrapper_is_executable() {
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(repo().join("scripts/novel"))
        .unwrap()
        .permissions()
        .mode();
    assert!(mode & 0o111 != 0, "scripts/novel must be executable");
}
