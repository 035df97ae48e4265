//! Helpers shared by the CLI tests: a hermetic `novel` command and a fresh project.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The binary under test: this build's, or the one `NOVEL_TEST_BIN` names (to run a test
/// against another build, e.g. to see a new test fail on the code before a fix).
pub fn bin() -> PathBuf {
    std::env::var_os("NOVEL_TEST_BIN")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_BIN_EXE_novel")))
}

/// `novel` with a clean environment, run in `cwd`.
pub fn novel(cwd: &Path, args: &[&str]) -> Output {
    Command::new(bin())
        .args(args)
        .current_dir(cwd)
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .env("LANG", "C.UTF-8")
        .output()
        .expect("run novel")
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8(o.stdout.clone()).expect("stdout is UTF-8")
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8(o.stderr.clone()).expect("stderr is UTF-8")
}

pub fn code(o: &Output) -> i32 {
    o.status.code().expect("exit code")
}

/// Parses stdout as exactly one JSON document.
pub fn json(o: &Output) -> serde_json::Value {
    let text = stdout(o);
    let mut stream = serde_json::Deserializer::from_str(&text).into_iter::<serde_json::Value>();
    let doc = stream
        .next()
        .unwrap_or_else(|| panic!("no JSON on stdout; stderr: {}", stderr(o)))
        .unwrap_or_else(|e| panic!("stdout is not JSON ({e}): {text}"));
    assert!(
        stream.next().is_none(),
        "more than one JSON document: {text}"
    );
    doc
}

/// A fresh project in a temp dir: (guard, project root).
pub fn new_project() -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("book");
    let out = novel(
        tmp.path(),
        &["init", "book", "--title", "青云志异", "--genre", "玄幻"],
    );
    assert_eq!(
        code(&out),
        0,
        "init failed: {}{}",
        stdout(&out),
        stderr(&out)
    );
    (tmp, root)
}

pub fn read_json(path: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

pub fn write_json(path: &Path, v: &serde_json::Value) {
    std::fs::write(path, serde_json::to_string_pretty(v).unwrap()).unwrap();
}

/// A process that stays alive while this value lives: a lock holder that is neither dead nor
/// the caller's own session.
pub struct Alive(std::process::Child);

impl Alive {
    pub fn new() -> Self {
        Alive(
            Command::new("sleep")
                .arg("120")
                .stdout(std::process::Stdio::null())
                .spawn()
                .expect("spawn sleep"),
        )
    }

    pub fn pid(&self) -> u32 {
        self.0.id()
    }
}

impl Drop for Alive {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let target = to.join(e.file_name());
        if e.path().is_dir() {
            copy_tree(&e.path(), &target);
        } else {
            std::fs::copy(e.path(), &target).unwrap();
        }
    }
}

/// A copy of the fixture project `tests/fixtures/<name>/project` with the named overlays of
/// `tests/fixtures/<name>/overlays/` laid over it: (guard, project root).
pub fn fixture(name: &str, overlays: &[&str]) -> (tempfile::TempDir, PathBuf) {
    let base = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/fixtures")
        .join(name);
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("book");
    copy_tree(&base.join("project"), &root);
    for o in overlays {
        copy_tree(&base.join("overlays").join(o), &root);
    }
    (tmp, root)
}

/// `novel --json ARGS` in `root`: (exit code, the envelope).
pub fn run_json(root: &Path, args: &[&str]) -> (i32, serde_json::Value) {
    let mut full = vec!["--json"];
    full.extend_from_slice(args);
    let out = novel(root, &full);
    (code(&out), json(&out))
}

/// Edits a JSON file in place.
pub fn edit_json(path: &Path, f: impl FnOnce(&mut serde_json::Value)) {
    let mut v = read_json(path);
    f(&mut v);
    write_json(path, &v);
}
