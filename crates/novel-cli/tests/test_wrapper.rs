//! `scripts/novel`, the wrapper every skill calls as `"${CLAUDE_PLUGIN_ROOT}/scripts/novel"`:
//! it finds the binary however it is invoked (absolute, relative, through symlinks, from PATH)
//! and passes everything through; without a binary it says how to build one and exits 2.
#![cfg(unix)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../scripts/novel")
        .canonicalize()
        .expect("scripts/novel exists")
}

pub(crate) fn binary() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_novel"))
}

/// `program args` in `cwd` with a clean environment plus `envs`. A relative `program` is
/// resolved against `cwd` (through `sh`, as a skill's Bash call would), a bare name on PATH.
pub(crate) fn run(program: &Path, args: &[&str], cwd: &Path, envs: &[(&str, &Path)]) -> Output {
    let mut cmd = if program.is_absolute() {
        Command::new(program)
    } else {
        let mut sh = Command::new("/bin/sh");
        sh.arg("-c").arg(r#"exec "$0" "$@""#).arg(program);
        sh
    };
    cmd.args(args)
        .current_dir(cwd)
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .env("LANG", "C.UTF-8");
    for (k, v) in envs {
        cmd.env(k, v);
    }
    cmd.output()
        .unwrap_or_else(|e| panic!("run {}: {e}", program.display()))
}

pub(crate) fn text(bytes: &[u8]) -> String {
    String::from_utf8(bytes.to_vec()).expect("UTF-8 output")
}

pub(crate) fn show(o: &Output) -> String {
    format!(
        "exit {:?}\n--- stdout\n{}--- stderr\n{}",
        o.status.code(),
        text(&o.stdout),
        text(&o.stderr)
    )
}

/// Same exit code, stdout and stderr as running the binary directly.
fn assert_same(via: &str, wrapped: &Output, direct: &Output) {
    assert_eq!(
        wrapped.status.code(),
        direct.status.code(),
        "{via}: {}",
        show(wrapped)
    );
    assert_eq!(
        text(&wrapped.stdout),
        text(&direct.stdout),
        "{via}: {}",
        show(wrapped)
    );
    assert_eq!(
        text(&wrapped.stderr),
        text(&direct.stderr),
        "{via}: {}",
        show(wrapped)
    );
}

/// A path to `target` relative to `from` (both absolute): `../` up to `/`, then down.
fn relative_from(from: &Path, target: &Path) -> PathBuf {
    let mut rel = PathBuf::new();
    for _ in from.components().skip(1) {
        rel.push("..");
    }
    rel.join(target.strip_prefix("/").unwrap())
}

#[test]
fn wrapper_passes_through_to_novel_bin_however_invoked() {
    let tmp = tempfile::tempdir().unwrap();
    let tmp_dir = tmp.path().canonicalize().unwrap();
    let home = tmp_dir.join("home");
    std::fs::create_dir(&home).unwrap();
    let bin = binary();
    let envs: &[(&str, &Path)] = &[("NOVEL_BIN", &bin), ("HOME", &home)];

    let direct = run(&bin, &["--version"], &tmp_dir, &[]);
    assert_eq!(direct.status.code(), Some(0), "{}", show(&direct));
    assert!(
        text(&direct.stdout).starts_with("novel "),
        "{}",
        show(&direct)
    );

    // Absolute path, from an unrelated directory.
    let out = run(&script(), &["--version"], &tmp_dir, envs);
    assert_same("absolute path", &out, &direct);

    // Relative paths from other working directories.
    let manifest_dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .canonicalize()
        .unwrap();
    let out = run(
        Path::new("../../scripts/novel"),
        &["--version"],
        &manifest_dir,
        envs,
    );
    assert_same("../../scripts/novel from crates/novel-cli", &out, &direct);
    let rel = relative_from(&tmp_dir, &script());
    let out = run(&rel, &["--version"], &tmp_dir, envs);
    assert_same(
        &format!("{} from the temp dir", rel.display()),
        &out,
        &direct,
    );

    // Through a symlink, and a relative symlink to that symlink, in a temp dir.
    let links = tmp_dir.join("links");
    std::fs::create_dir(&links).unwrap();
    std::os::unix::fs::symlink(script(), links.join("novel")).unwrap();
    std::fs::create_dir(tmp_dir.join("more")).unwrap();
    std::os::unix::fs::symlink("../links/novel", tmp_dir.join("more/nv")).unwrap();
    let out = run(&links.join("novel"), &["--version"], &home, envs);
    assert_same("symlink", &out, &direct);
    let out = run(Path::new("more/nv"), &["--version"], &tmp_dir, envs);
    assert_same("relative symlink chain", &out, &direct);

    // Arguments arrive unchanged (spaces, empty strings, unknown flags): same error as direct.
    let args = ["--json", "help", "没有 这个命令", ""];
    let direct = run(&bin, &args, &tmp_dir, &[]);
    let out = run(&script(), &args, &tmp_dir, envs);
    assert_same("odd arguments", &out, &direct);

    // NOVEL_BIN wins over a build under the plugin root; a NOVEL_BIN that is not executable
    // is ignored with a warning and the search goes on.
    let fake = tmp_dir.join("fake-novel");
    std::fs::write(&fake, "#!/bin/sh\nprintf 'fake:%s|' \"$@\"\n").unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();
    let out = run(
        &script(),
        &["a b", "", "--json"],
        &home,
        &[("NOVEL_BIN", &fake), ("HOME", &home)],
    );
    assert_eq!(
        text(&out.stdout),
        "fake:a b|fake:|fake:--json|",
        "{}",
        show(&out)
    );
    let missing = tmp_dir.join("no-such-novel");
    let out = run(
        &script(),
        &["--version"],
        &home,
        &[("NOVEL_BIN", &missing), ("HOME", &home)],
    );
    assert!(text(&out.stderr).contains("NOVEL_BIN"), "{}", show(&out));
}

/// With `scripts/` first on PATH (and no build beside it), `novel` reaches the wrapper, which
/// skips itself and runs the binary found later on PATH.
#[test]
fn wrapper_on_path_skips_itself_and_finds_the_binary() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().canonicalize().unwrap().join("plugin");
    std::fs::create_dir_all(root.join("scripts")).unwrap();
    std::fs::copy(script(), root.join("scripts/novel")).unwrap();
    let home = tmp.path().join("home");
    std::fs::create_dir(&home).unwrap();
    let bin = binary();
    let bin_dir = bin.parent().unwrap();
    let path = format!(
        "{}:{}:/usr/bin:/bin",
        root.join("scripts").display(),
        bin_dir.display()
    );
    let out = Command::new("/bin/sh")
        .args(["-c", r#"exec novel "$@""#, "sh", "--version"])
        .current_dir(&home)
        .env_clear()
        .env("PATH", &path)
        .env("HOME", &home)
        .output()
        .expect("run novel from PATH");
    let direct = run(&bin, &["--version"], &home, &[]);
    assert_same("wrapper first on PATH", &out, &direct);
}

#[test]
fn wrapper_without_binary_says_how_to_build_it() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().canonicalize().unwrap().join("plugin root");
    std::fs::create_dir_all(root.join("scripts")).unwrap();
    let wrapper = root.join("scripts/novel");
    std::fs::copy(script(), &wrapper).unwrap();
    let home = tmp.path().join("home");
    std::fs::create_dir(&home).unwrap();
    let envs: &[(&str, &Path)] = &[("HOME", &home)];
    let build = format!("\"{}\"", root.join("scripts/install").display());

    let out = run(&wrapper, &["--version"], &home, envs);
    assert_eq!(out.status.code(), Some(2), "{}", show(&out));
    let err = text(&out.stderr);
    assert!(err.contains(&root.display().to_string()), "{err}");
    assert!(err.contains(&build), "{err}");
    // Without the install script beside it the wrapper cannot tell which way an install would
    // go: it promises nothing (test_install.rs checks each way's message).
    assert!(!err.contains("几秒") && !err.contains("rustup"), "{err}");
    assert!(
        out.stdout.is_empty(),
        "no --json, nothing on stdout: {}",
        show(&out)
    );

    for (args, command) in [
        (&["--json", "validate"][..], "validate"),
        (&["status", "--json"][..], "status"),
        (&["--project", "书 稿", "--json", "next"][..], "next"),
        (&["--json=true", "status"][..], "status"),
        (&["--json"][..], ""),
    ] {
        let out = run(&wrapper, args, &home, envs);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", show(&out));
        let stdout = text(&out.stdout);
        let mut docs = serde_json::Deserializer::from_str(&stdout).into_iter::<serde_json::Value>();
        let doc = docs
            .next()
            .unwrap_or_else(|| panic!("{args:?}: no JSON: {}", show(&out)))
            .unwrap_or_else(|e| panic!("{args:?}: not JSON ({e}): {}", show(&out)));
        assert!(
            docs.next().is_none(),
            "{args:?}: more than one document: {stdout}"
        );
        assert_eq!(doc["ok"], false, "{doc}");
        assert_eq!(doc["command"], command, "{doc}");
        assert_eq!(doc["error"]["code"], "E_NO_BINARY", "{doc}");
        assert!(
            !doc["error"]["message"].as_str().unwrap().is_empty(),
            "{doc}"
        );
        assert_eq!(doc["error"]["hint"], build.as_str(), "{doc}");
        assert!(text(&out.stderr).contains(&build), "{}", show(&out));
    }
}

#[test]
fn hook_without_binary_never_fails_the_session() {
    let tmp = tempfile::tempdir().unwrap();
    let base = tmp.path().canonicalize().unwrap();
    let root = base.join("plugin");
    std::fs::create_dir_all(root.join("scripts")).unwrap();
    let wrapper = root.join("scripts/novel");
    std::fs::copy(script(), &wrapper).unwrap();
    let home = base.join("home");
    let book = base.join("书稿");
    let outside = base.join("别处");
    for d in [&home, &book.join("chapters"), &outside] {
        std::fs::create_dir_all(d).unwrap();
    }
    std::fs::write(book.join(".checkpoint.json"), "{}").unwrap();
    let hook = |cwd: &Path, stdin_cwd: &Path| {
        let mut child = Command::new(&wrapper)
            .args(["context", "session-start"])
            .current_dir(cwd)
            .env_clear()
            .env("PATH", "/usr/bin:/bin")
            .env("HOME", &home)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let input = serde_json::json!({"session_id": "s", "cwd": stdin_cwd,
            "hook_event_name": "SessionStart", "source": "startup"});
        use std::io::Write;
        child
            .stdin
            .take()
            .unwrap()
            .write_all(input.to_string().as_bytes())
            .unwrap();
        child.wait_with_output().unwrap()
    };
    let install = format!("\"{}\"", root.join("scripts/install").display());
    // Everywhere: the author is told (systemMessage) how to install it, exit 0; outside a
    // project the model gets nothing.
    let hook_json = |out: &Output| -> serde_json::Value {
        assert_eq!(out.status.code(), Some(0), "{}", show(out));
        assert!(out.stderr.is_empty(), "{}", show(out));
        serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", show(out)))
    };
    let doc = hook_json(&hook(&outside, &outside));
    let message = doc["systemMessage"].as_str().unwrap();
    assert!(
        message.contains("还没有安装") && message.contains(&install),
        "{doc}"
    );
    assert_eq!(doc["hookSpecificOutput"]["hookEventName"], "SessionStart");
    assert_eq!(doc["hookSpecificOutput"]["additionalContext"], "", "{doc}");
    // Inside one (found from the stdin `cwd`, below the project root): one line for the model.
    let doc = hook_json(&hook(&outside, &book.join("chapters")));
    let context = doc["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .unwrap();
    assert_eq!(context.lines().count(), 1, "{doc}");
    assert!(
        context.contains("还没有安装") && context.contains(&install),
        "{doc}"
    );
    // The guard hooks step aside (exit 0, nothing on stdout) rather than block the write.
    for event in ["pre-tool-use", "post-tool-use"] {
        let out = run(&wrapper, &["hook", event], &book, &[("HOME", &home)]);
        assert_eq!(out.status.code(), Some(0), "{event}: {}", show(&out));
        assert!(out.stdout.is_empty(), "{event}: {}", show(&out));
        assert!(text(&out.stderr).contains(&install), "{}", show(&out));
    }
    // Any other command still fails loudly.
    assert_eq!(
        run(&wrapper, &["status"], &book, &[("HOME", &home)])
            .status
            .code(),
        Some(2)
    );
}

/// The fork-free fast path (absolute path, no NOVEL_BIN, a release build beside the wrapper)
/// passes the arguments unchanged, exactly as the resolving path does.
#[test]
fn wrapper_fast_path_passes_arguments_unchanged() {
    use std::os::unix::fs::PermissionsExt;
    let tmp = tempfile::tempdir().unwrap();
    let base = tmp.path().canonicalize().unwrap();
    let root = base.join("plugin dir");
    std::fs::create_dir_all(root.join("scripts")).unwrap();
    std::fs::create_dir_all(root.join("target/release")).unwrap();
    let wrapper = root.join("scripts/novel");
    std::fs::copy(script(), &wrapper).unwrap();
    let fake = root.join("target/release/novel");
    std::fs::write(&fake, "#!/bin/sh\nprintf 'fake:%s|' \"$@\"\n").unwrap();
    std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();
    let args = ["a b", "", "--json", "hook", "pre-tool-use"];
    let want = "fake:a b|fake:|fake:--json|fake:hook|fake:pre-tool-use|";
    let home = base.join("home");
    std::fs::create_dir(&home).unwrap();
    // Absolute path: the fast path.
    let out = run(&wrapper, &args, &base, &[("HOME", &home)]);
    assert_eq!(text(&out.stdout), want, "{}", show(&out));
    // Relative path: the resolving path finds the same build.
    let out = run(
        Path::new("plugin dir/scripts/novel"),
        &args,
        &base,
        &[("HOME", &home)],
    );
    assert_eq!(text(&out.stdout), want, "{}", show(&out));
}

/// A plugin the client installed from a marketplace: the wrapper lives in the client's cache
/// `<home>/.claude/plugins/cache/<marketplace>/novel/<version>/`, without target/.
pub(crate) struct Cached {
    pub(crate) _tmp: tempfile::TempDir,
    pub(crate) home: PathBuf,
    pub(crate) root: PathBuf,
    pub(crate) data: PathBuf,
}

pub(crate) fn cached_plugin(version: &str) -> Cached {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().canonicalize().unwrap().join("home");
    let root = home
        .join(".claude/plugins/cache/novel-marketplace/novel")
        .join(version);
    let data = home.join(".claude/plugins/data/novel-novel-marketplace");
    std::fs::create_dir_all(root.join("scripts")).unwrap();
    std::fs::create_dir_all(root.join(".claude-plugin")).unwrap();
    std::fs::copy(script(), root.join("scripts/novel")).unwrap();
    std::fs::copy(
        script().with_file_name("install"),
        root.join("scripts/install"),
    )
    .unwrap();
    std::fs::write(
        root.join(".claude-plugin/plugin.json"),
        format!(r#"{{"name": "novel", "version": "{version}"}}"#),
    )
    .unwrap();
    Cached {
        _tmp: tmp,
        home,
        root,
        data,
    }
}

/// The binary copied to `at` by `cp`: a copy written from this process would leave its write
/// descriptor, for an instant, in every child another test thread forks meanwhile, and executing
/// the copy then fails with "Text file busy" (ETXTBSY).
pub(crate) fn put_binary(at: &Path) {
    std::fs::create_dir_all(at.parent().unwrap()).unwrap();
    let ok = Command::new("cp")
        .arg(binary())
        .arg(at)
        .status()
        .unwrap()
        .success();
    assert!(ok, "cp {} {}", binary().display(), at.display());
}

pub(crate) fn session_start(wrapper: &Path, home: &Path, cwd: &Path) -> Output {
    use std::io::Write;
    let mut child = Command::new(wrapper)
        .args(["context", "session-start"])
        .current_dir(home)
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .env("HOME", home)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let input = serde_json::json!({"session_id": "s", "cwd": cwd,
        "hook_event_name": "SessionStart", "source": "startup"});
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.to_string().as_bytes())
        .unwrap();
    child.wait_with_output().unwrap()
}

#[test]
fn cached_plugin_finds_its_binary_in_its_data_directory() {
    let c = cached_plugin(env!("CARGO_PKG_VERSION"));
    put_binary(&c.data.join("bin/novel"));
    let wrapper = c.root.join("scripts/novel");
    // No CLAUDE_PLUGIN_DATA (the Bash tool has none): derived from the cache path.
    let out = run(&wrapper, &["--version"], &c.home, &[("HOME", &c.home)]);
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    assert!(text(&out.stdout).contains(env!("CARGO_PKG_VERSION")));
    // With it (as hooks have it), the same binary.
    let out = run(
        &wrapper,
        &["--version"],
        &c.home,
        &[("HOME", &c.home), ("CLAUDE_PLUGIN_DATA", &c.data)],
    );
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    // Same version: the session start says nothing to the author.
    let book = c.home.join("书稿");
    let made = run(&binary(), &["init", "书稿"], &c.home, &[]);
    assert_eq!(made.status.code(), Some(0), "{}", show(&made));
    let out = session_start(&wrapper, &c.home, &book);
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    assert!(
        !text(&out.stdout).contains("systemMessage"),
        "{}",
        show(&out)
    );
}

#[test]
fn a_binary_older_than_the_plugin_is_reported_to_the_author() {
    let c = cached_plugin("99.0.0");
    put_binary(&c.data.join("bin/novel"));
    let book = c.home.join("书稿");
    let made = run(&binary(), &["init", "书稿"], &c.home, &[]);
    assert_eq!(made.status.code(), Some(0), "{}", show(&made));
    let out = session_start(&c.root.join("scripts/novel"), &c.home, &book);
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    let doc: serde_json::Value =
        serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", show(&out)));
    let message = doc["systemMessage"].as_str().unwrap();
    assert!(message.contains("99.0.0"), "{message}");
    assert!(message.contains(env!("CARGO_PKG_VERSION")), "{message}");
    assert!(message.contains("scripts/install"), "{message}");
    // The model still gets the project's facts.
    let context = doc["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .unwrap();
    assert!(context.contains("不一致"), "{context}");
    assert!(context.lines().count() > 2, "{context}");
}
