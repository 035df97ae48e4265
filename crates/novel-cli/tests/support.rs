//! Helpers shared by the CLI tests: a hermetic `novel` command and a fresh project.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

pub fn bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_novel"))
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
