//! The plugin and the binary it runs: the client replaces the plugin at every update, while the
//! binary (installed once into the plugin's data directory) stays until `scripts/install` runs
//! again. The wrapper exports the plugin's root as `NOVEL_PLUGIN_ROOT`; its manifest names the
//! plugin's version. The SessionStart hook tells the author when the two differ, and `novel
//! next` tells `/novel:start`, which offers the install.
//!
//! Layer: ground — below the commands.

use std::path::PathBuf;

use serde::Serialize;
use serde_json::Value;

/// The plugin's and this binary's versions when they differ, and the command that installs
/// the binary of the plugin's version.
#[derive(Debug, Serialize)]
pub struct VersionMismatch {
    pub plugin: String,
    pub binary: &'static str,
    pub install: PathBuf,
}

impl VersionMismatch {
    /// One sentence for the author.
    pub fn sentence(&self) -> String {
        format!(
            "novel 插件已更新到 {}，但它的 novel 程序还是 {}，两者不配套；运行 \"{}\" 更新程序（通常几秒钟下载完成）",
            self.plugin,
            self.binary,
            self.install.display()
        )
    }
}

/// `Some` when the plugin this binary runs for (`NOVEL_PLUGIN_ROOT`) is of another version.
pub fn version_mismatch() -> Option<VersionMismatch> {
    let root = PathBuf::from(std::env::var_os("NOVEL_PLUGIN_ROOT")?);
    let manifest = std::fs::read_to_string(root.join(".claude-plugin/plugin.json")).ok()?;
    let plugin = serde_json::from_str::<Value>(&manifest)
        .ok()?
        .get("version")?
        .as_str()?
        .to_string();
    let binary = env!("CARGO_PKG_VERSION");
    (plugin != binary).then(|| VersionMismatch {
        plugin,
        binary,
        install: root.join("scripts/install"),
    })
}
