//! `scripts/install` as an author meets it, in a plugin the client cached from a marketplace:
//! the prebuilt binary of this version downloaded from a release directory (served here on
//! 127.0.0.1), checked against SHA256SUMS and run before it is put in place; a download that
//! does not check out refused with nothing changed; no release (or no network) falling back to
//! cargo, found where rustup puts it even when it is not on PATH; the GitHub release address
//! derived from the client's record of the marketplace.
#![cfg(unix)]

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use crate::support::FileServer;
use crate::test_wrapper::{Cached, binary, cached_plugin, put_binary, run, show, text};

const VERSION: &str = env!("CARGO_PKG_VERSION");

/// The release target `scripts/install` picks on this machine.
fn target() -> String {
    let os = match std::env::consts::OS {
        "linux" => "unknown-linux-musl",
        "macos" => "apple-darwin",
        other => panic!("no release target for {other}"),
    };
    format!("{}-{os}", std::env::consts::ARCH)
}

fn sh(cmd: &mut Command) {
    let out = cmd.output().unwrap();
    assert!(out.status.success(), "{cmd:?}: {}", show(&out));
}

fn sha256(file: &Path) -> String {
    let out = Command::new("sha256sum").arg(file).output().unwrap();
    assert!(out.status.success(), "{}", show(&out));
    text(&out.stdout)
        .split_whitespace()
        .next()
        .unwrap()
        .to_string()
}

/// A release directory `<dir>/v<version>/` holding `novel-<target>.tar.gz` (with `exe` inside
/// as `novel`) and SHA256SUMS as the release workflow writes it, or with `sum` instead of the
/// archive's own checksum.
pub(crate) fn release(dir: &Path, version: &str, exe: &Path, sum: Option<&str>) -> PathBuf {
    let at = dir.join(format!("v{version}"));
    let stage = dir.join("stage");
    std::fs::create_dir_all(&at).unwrap();
    std::fs::create_dir_all(&stage).unwrap();
    std::fs::copy(exe, stage.join("novel")).unwrap();
    let artifact = format!("novel-{}.tar.gz", target());
    sh(Command::new("tar")
        .arg("-czf")
        .arg(at.join(&artifact))
        .arg("-C")
        .arg(&stage)
        .arg("novel"));
    std::fs::remove_dir_all(&stage).unwrap();
    let sum = sum.map_or_else(|| sha256(&at.join(&artifact)), str::to_string);
    // Another platform's line first: the script must pick its own.
    std::fs::write(
        at.join("SHA256SUMS"),
        format!(
            "{}  novel-other-target.tar.gz\n{sum}  {artifact}\n",
            "0".repeat(64)
        ),
    )
    .unwrap();
    at
}

/// A shell script at `path`.
fn script(path: &Path, body: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, format!("#!/bin/sh\n{body}")).unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// A stand-in for cargo: `cargo install … --root R` logs its arguments to `<home>/cargo.log`
/// and leaves R/bin/novel (the test binary), as the real one would after minutes.
fn stand_in_cargo(at: &Path, home: &Path) {
    script(
        at,
        &format!(
            "printf '%s\\n' \"$*\" >> '{log}'\nwhile [ $# -gt 0 ]; do\n  if [ \"$1\" = --root ]; then root=$2; fi\n  shift\ndone\n\
             mkdir -p \"$root/bin\" && cp '{bin}' \"$root/bin/novel\"\n",
            log = home.join("cargo.log").display(),
            bin = binary().display()
        ),
    );
}

/// `scripts/install` of the cached plugin with a clean environment: PATH `path`, HOME, and
/// `envs`.
fn install(c: &Cached, path: &str, envs: &[(&str, &str)]) -> Output {
    let mut cmd = Command::new(c.root.join("scripts/install"));
    cmd.current_dir(&c.home)
        .env_clear()
        .env("PATH", path)
        .env("HOME", &c.home)
        .env("LANG", "C.UTF-8");
    for (k, v) in envs {
        cmd.env(k, v);
    }
    cmd.output().unwrap()
}

/// Nothing half-done beside the binary: no staging directory, no build directory.
fn assert_nothing_left(c: &Cached) {
    let mut names: Vec<String> = Vec::new();
    for dir in [c.data.clone(), c.data.join("bin")] {
        if let Ok(entries) = std::fs::read_dir(&dir) {
            names.extend(entries.map(|e| e.unwrap().file_name().to_string_lossy().into_owned()));
        }
    }
    let left: Vec<&String> = names
        .iter()
        .filter(|n| n.starts_with('.') || *n == "build")
        .collect();
    assert!(left.is_empty(), "left in the data directory: {left:?}");
}

/// What the author reads names no staging or build directory (both are gone by then).
fn assert_no_temp_paths(out: &Output) {
    let said = text(&out.stderr);
    assert!(
        !said.contains(".install.") && !said.contains("/build"),
        "{}",
        show(out)
    );
}

#[test]
fn install_downloads_the_release_of_this_version_without_rust() {
    let c = cached_plugin(VERSION);
    let served = c.home.join("served");
    release(&served, VERSION, &binary(), None);
    let server = FileServer::start(&served);
    // No cargo anywhere: PATH without it, no ~/.cargo. "{version}" is filled in by the script.
    let url = format!("{}/v{{version}}", server.url());
    let out = install(&c, "/usr/bin:/bin", &[("NOVEL_RELEASE_URL", &url)]);
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    let said = text(&out.stderr);
    assert!(
        said.contains("正在下载") && said.contains("已安装"),
        "{said}"
    );
    assert!(!said.contains("cargo"), "{said}");
    assert_no_temp_paths(&out);
    assert_eq!(
        server.requests(),
        vec![
            format!("/v{VERSION}/SHA256SUMS"),
            format!("/v{VERSION}/novel-{}.tar.gz", target())
        ]
    );
    let installed = c.data.join("bin/novel");
    assert_eq!(
        std::fs::read(&installed).unwrap(),
        std::fs::read(binary()).unwrap()
    );
    assert_nothing_left(&c);
    assert!(c.data.join("install.log").is_file());
    // The cached wrapper finds it.
    let out = run(
        &c.root.join("scripts/novel"),
        &["--version"],
        &c.home,
        &[("HOME", &c.home)],
    );
    assert_eq!(
        text(&out.stdout),
        format!("novel {VERSION}\n"),
        "{}",
        show(&out)
    );
}

#[test]
fn install_refuses_a_download_that_does_not_check_out_and_changes_nothing() {
    let c = cached_plugin(VERSION);
    // An older binary in place, which must survive every refusal byte for byte.
    let old = c.home.join("old-novel");
    script(&old, "echo 'novel 0.0.1'\n");
    std::fs::create_dir_all(c.data.join("bin")).unwrap();
    std::fs::copy(&old, c.data.join("bin/novel")).unwrap();
    let before = std::fs::read(c.data.join("bin/novel")).unwrap();
    // cargo is there: a refused download must not silently turn into a build.
    let tools = c.home.join("tools");
    stand_in_cargo(&tools.join("cargo"), &c.home);
    let path = format!("{}:/usr/bin:/bin", tools.display());

    type Make = Box<dyn Fn(&Path)>;
    let cases: [(&str, Make, &str); 3] = [
        (
            "a checksum that does not match",
            Box::new(|dir| {
                release(dir, VERSION, &binary(), Some(&"ab".repeat(32)));
            }),
            "校验值不符",
        ),
        (
            "an archive that matches but holds another version",
            Box::new(|dir| {
                let fake = dir.join("novel-0.0.1");
                script(&fake, "echo 'novel 0.0.1'\n");
                release(dir, VERSION, &fake, None);
            }),
            "版本不对",
        ),
        (
            "an archive that matches but is not an archive",
            Box::new(|dir| {
                let at = release(dir, VERSION, &binary(), None);
                let artifact = at.join(format!("novel-{}.tar.gz", target()));
                std::fs::write(&artifact, b"<html>not found</html>").unwrap();
                let sum = sha256(&artifact);
                let sums = std::fs::read_to_string(at.join("SHA256SUMS")).unwrap();
                let first = sums.lines().next().unwrap();
                std::fs::write(
                    at.join("SHA256SUMS"),
                    format!("{first}\n{sum}  novel-{}.tar.gz\n", target()),
                )
                .unwrap();
            }),
            "解不开",
        ),
    ];
    for (i, (what, make, says)) in cases.iter().enumerate() {
        let served = c.home.join(format!("served-{i}"));
        make(&served);
        let server = FileServer::start(&served);
        let url = format!("{}/v{VERSION}", server.url());
        let out = install(&c, &path, &[("NOVEL_RELEASE_URL", &url)]);
        assert_eq!(out.status.code(), Some(2), "{what}: {}", show(&out));
        let said = text(&out.stderr);
        assert!(said.contains(says), "{what}: {said}");
        assert!(
            said.contains("没有安装任何东西") && said.contains("NOVEL_INSTALL_FROM=cargo"),
            "{what}: {said}"
        );
        assert_no_temp_paths(&out);
        assert_eq!(
            std::fs::read(c.data.join("bin/novel")).unwrap(),
            before,
            "{what}: the installed binary changed"
        );
        assert!(!c.home.join("cargo.log").exists(), "{what}: cargo ran");
        assert_nothing_left(&c);
    }
}

#[test]
fn install_without_a_release_builds_with_cargo_found_where_rustup_puts_it() {
    let c = cached_plugin(VERSION);
    let served = c.home.join("served");
    std::fs::create_dir_all(&served).unwrap();
    let server = FileServer::start(&served); // no release of this version: 404
    let url = format!("{}/v{VERSION}", server.url());

    // No cargo at all: the author is told why there was no download and how to get Rust.
    let out = install(&c, "/usr/bin:/bin", &[("NOVEL_RELEASE_URL", &url)]);
    assert_eq!(out.status.code(), Some(2), "{}", show(&out));
    let said = text(&out.stderr);
    assert!(
        said.contains("SHA256SUMS 失败") && said.contains("rustup"),
        "{said}"
    );
    assert!(!c.data.join("bin/novel").exists());
    assert_nothing_left(&c);

    // cargo in ~/.cargo/bin but not on PATH (how the client often runs): found and used.
    stand_in_cargo(&c.home.join(".cargo/bin/cargo"), &c.home);
    let out = install(&c, "/usr/bin:/bin", &[("NOVEL_RELEASE_URL", &url)]);
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    let said = text(&out.stderr);
    assert!(
        said.contains("改为在本机编译") && said.contains("已安装"),
        "{said}"
    );
    assert_no_temp_paths(&out);
    let calls = std::fs::read_to_string(c.home.join("cargo.log")).unwrap();
    let want = format!(
        "install --locked --force --quiet --path {}/crates/novel-cli --root {}/.install.",
        c.root.display(),
        c.data.display()
    );
    assert!(calls.starts_with(&want), "cargo called as {calls:?}");
    assert!(c.data.join("bin/novel").is_file());
    assert_nothing_left(&c);

    // Only the release allowed: no build, nothing changed.
    std::fs::remove_file(c.home.join("cargo.log")).unwrap();
    let out = install(
        &c,
        "/usr/bin:/bin",
        &[
            ("NOVEL_RELEASE_URL", &url),
            ("NOVEL_INSTALL_FROM", "release"),
        ],
    );
    assert_eq!(out.status.code(), Some(2), "{}", show(&out));
    assert!(!c.home.join("cargo.log").exists());

    // A build directory an older install left behind (hundreds of MB) is removed.
    std::fs::create_dir_all(c.data.join("build/release")).unwrap();
    let out = install(&c, "/usr/bin:/bin", &[("NOVEL_INSTALL_FROM", "cargo")]);
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    assert_nothing_left(&c);
}

#[test]
fn install_downloads_from_the_github_release_of_the_marketplace() {
    // The client's record of where the marketplace came from, in both forms it writes.
    for (record, repo) in [
        (
            r#"{"novel-marketplace": {"source": {"source": "github", "repo": "writer/novel-plugin"},
                "installLocation": "x", "lastUpdated": "y"},
               "other": {"source": {"source": "github", "repo": "someone/else"}}}"#,
            "writer/novel-plugin",
        ),
        (
            r#"{"other": {"source": {"source": "github", "repo": "someone/else"}, "installLocation": "z"},
               "novel-marketplace": {"source": {"source": "git", "url": "https://github.com/writer/novel-git.git"}}}"#,
            "writer/novel-git",
        ),
    ] {
        let c = cached_plugin(VERSION);
        std::fs::write(
            c.home.join(".claude/plugins/known_marketplaces.json"),
            record,
        )
        .unwrap();
        // A stand-in curl logs what it was asked for and fails as on a 404.
        let tools = c.home.join("tools");
        let log = c.home.join("curl.log");
        script(
            &tools.join("curl"),
            &format!(
                "for a; do last=$a; done\nprintf '%s\\n' \"$last\" >> '{}'\nexit 22\n",
                log.display()
            ),
        );
        let out = install(&c, &format!("{}:/usr/bin:/bin", tools.display()), &[]);
        assert_eq!(out.status.code(), Some(2), "{}", show(&out));
        let asked = std::fs::read_to_string(&log).unwrap();
        assert_eq!(
            asked,
            format!("https://github.com/{repo}/releases/download/v{VERSION}/SHA256SUMS\n")
        );
    }

    // A marketplace that is not on GitHub, and no NOVEL_RELEASE_URL: nothing is downloaded and
    // the author is told why.
    let c = cached_plugin(VERSION);
    std::fs::write(
        c.home.join(".claude/plugins/known_marketplaces.json"),
        r#"{"novel-marketplace": {"source": {"source": "git", "url": "https://git.example.org/novel.git"}}}"#,
    )
    .unwrap();
    let out = install(&c, "/usr/bin:/bin", &[]);
    assert_eq!(out.status.code(), Some(2), "{}", show(&out));
    let said = text(&out.stderr);
    assert!(
        said.contains("没有可下载的预编译程序") && said.contains("不在 GitHub 上"),
        "{}",
        show(&out)
    );
    // The log keeps what the author was told.
    let log = std::fs::read_to_string(c.data.join("install.log")).unwrap();
    assert!(log.contains("不在 GitHub 上"), "{log}");
}

/// The hook's message to the author (its `systemMessage`) in a session with this cached copy.
fn first_message(c: &Cached, path: &str) -> String {
    use std::io::Write;
    let mut child = Command::new(c.root.join("scripts/novel"))
        .args(["context", "session-start"])
        .current_dir(&c.home)
        .env_clear()
        .env("PATH", path)
        .env("HOME", &c.home)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(br#"{"session_id":"s","hook_event_name":"SessionStart","source":"startup"}"#)
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    doc["systemMessage"].as_str().unwrap().to_string()
}

#[test]
fn the_first_message_promises_only_what_the_install_can_do() {
    let not_on_github = r#"{"novel-marketplace": {"source": {"source": "git", "url": "https://git.example.org/novel.git"}}}"#;
    // No release to download and no cargo: no promise of seconds, and the two ways out.
    let c = cached_plugin(VERSION);
    std::fs::write(
        c.home.join(".claude/plugins/known_marketplaces.json"),
        not_on_github,
    )
    .unwrap();
    let said = first_message(&c, "/usr/bin:/bin");
    assert!(!said.contains("几秒"), "{said}");
    assert!(
        said.contains("不在 GitHub 上") && said.contains("--mirror"),
        "{said}"
    );
    assert!(said.contains("rustup.rs"), "{said}");
    // The same words when a command is run without the binary.
    let out = run(
        &c.root.join("scripts/novel"),
        &["--json", "status"],
        &c.home,
        &[("HOME", &c.home)],
    );
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let message = doc["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("不在 GitHub 上") && !message.contains("几秒"),
        "{message}"
    );

    // With cargo where rustup puts it: a build, with its time, and no promise of seconds.
    stand_in_cargo(&c.home.join(".cargo/bin/cargo"), &c.home);
    let said = first_message(&c, "/usr/bin:/bin");
    assert!(
        !said.contains("几秒") && said.contains("编译") && said.contains("分钟"),
        "{said}"
    );

    // From GitHub: the download, in seconds.
    let c = cached_plugin(VERSION);
    std::fs::write(
        c.home.join(".claude/plugins/known_marketplaces.json"),
        r#"{"novel-marketplace": {"source": {"source": "github", "repo": "writer/novel-plugin"}}}"#,
    )
    .unwrap();
    let said = first_message(&c, "/usr/bin:/bin");
    assert!(
        said.contains("几秒") && !said.contains("Rust 编译"),
        "{said}"
    );
}

#[test]
fn a_mirror_named_once_is_remembered_for_every_later_install() {
    let c = cached_plugin(VERSION);
    std::fs::write(
        c.home.join(".claude/plugins/known_marketplaces.json"),
        r#"{"novel-marketplace": {"source": {"source": "git", "url": "https://git.example.org/novel.git"}}}"#,
    )
    .unwrap();
    let served = c.home.join("served");
    release(&served, VERSION, &binary(), None);
    let server = FileServer::start(&served);
    let url = format!("{}/v{{version}}", server.url());
    // Named once, on the command line (as /novel:start runs it).
    let mut cmd = Command::new(c.root.join("scripts/install"));
    let out = cmd
        .args(["--mirror", &url])
        .current_dir(&c.home)
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .env("HOME", &c.home)
        .env("LANG", "C.UTF-8")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    assert!(
        text(&out.stderr).contains("已记住镜像地址"),
        "{}",
        show(&out)
    );
    assert_eq!(
        std::fs::read_to_string(c.data.join("release-url")).unwrap(),
        format!("{url}\n")
    );
    // The next session's message and the next install use it without being told again.
    std::fs::remove_file(c.data.join("bin/novel")).unwrap();
    let said = first_message(&c, "/usr/bin:/bin");
    assert!(said.contains("几秒"), "{said}");
    let out = install(&c, "/usr/bin:/bin", &[]);
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    assert!(c.data.join("bin/novel").is_file());
    let asked = server.requests();
    assert_eq!(asked.len(), 4, "{asked:?}");
    assert!(
        asked
            .iter()
            .all(|r| r.starts_with(&format!("/v{VERSION}/"))),
        "{asked:?}"
    );
    assert_nothing_left(&c);
}

#[test]
fn a_session_with_a_binary_of_another_version_offers_the_install() {
    // The binary in place is older than the plugin the client just updated to.
    let c = cached_plugin("99.0.0");
    put_binary(&c.data.join("bin/novel"));
    let book = c.home.join("书稿");
    let made = run(&binary(), &["init", "书稿"], &c.home, &[]);
    assert_eq!(made.status.code(), Some(0), "{}", show(&made));
    // `next --json`, which /novel:start reads first, carries the mismatch and the command.
    let out = run(
        &c.root.join("scripts/novel"),
        &["--json", "next"],
        &book,
        &[("HOME", &c.home)],
    );
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let m = &doc["data"]["version_mismatch"];
    assert_eq!(m["plugin"], "99.0.0", "{doc}");
    assert_eq!(m["binary"], VERSION, "{doc}");
    assert_eq!(
        m["install"],
        c.root.join("scripts/install").to_str().unwrap(),
        "{doc}"
    );
    // In the human form, the first line.
    let out = run(
        &c.root.join("scripts/novel"),
        &["next"],
        &book,
        &[("HOME", &c.home)],
    );
    let first = text(&out.stdout)
        .lines()
        .next()
        .unwrap_or_default()
        .to_string();
    assert!(
        first.starts_with("先更新程序") && first.contains("99.0.0"),
        "{}",
        show(&out)
    );
    // Same version: null.
    let c = cached_plugin(VERSION);
    put_binary(&c.data.join("bin/novel"));
    let out = run(
        &c.root.join("scripts/novel"),
        &["--json", "next"],
        &book,
        &[("HOME", &c.home)],
    );
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(doc["data"]["version_mismatch"].is_null(), "{doc}");
}
