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

/// A directory served over HTTP on 127.0.0.1, the way a release host serves `scripts/install`
/// its files: `GET /a/b` answers `dir/a/b`, or 404. Every request path is logged. It stops when
/// dropped, and by itself after `FileServer::LIFETIME` whatever happens to the test.
pub struct FileServer {
    pub port: u16,
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
    log: std::sync::Arc<std::sync::Mutex<Vec<String>>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl FileServer {
    pub const LIFETIME: std::time::Duration = std::time::Duration::from_secs(120);

    pub fn start(dir: &Path) -> Self {
        use std::sync::atomic::{AtomicBool, Ordering};
        use std::sync::{Arc, Mutex};
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1");
        listener.set_nonblocking(true).unwrap();
        let port = listener.local_addr().unwrap().port();
        let stop = Arc::new(AtomicBool::new(false));
        let log = Arc::new(Mutex::new(Vec::new()));
        let (dir, stop_seen, log_kept) = (dir.to_path_buf(), stop.clone(), log.clone());
        let thread = std::thread::spawn(move || {
            let deadline = std::time::Instant::now() + Self::LIFETIME;
            while !stop_seen.load(Ordering::SeqCst) && std::time::Instant::now() < deadline {
                match listener.accept() {
                    Ok((stream, _)) => serve_one(stream, &dir, &log_kept),
                    Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                        std::thread::sleep(std::time::Duration::from_millis(5));
                    }
                    Err(_) => break,
                }
            }
        });
        FileServer {
            port,
            stop,
            log,
            thread: Some(thread),
        }
    }

    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// The paths requested so far, in order.
    pub fn requests(&self) -> Vec<String> {
        self.log.lock().unwrap().clone()
    }
}

impl Drop for FileServer {
    fn drop(&mut self) {
        self.stop.store(true, std::sync::atomic::Ordering::SeqCst);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

fn serve_one(stream: std::net::TcpStream, dir: &Path, log: &std::sync::Mutex<Vec<String>>) {
    use std::io::{BufRead, Write};
    let _ = stream.set_nonblocking(false);
    let _ = stream.set_read_timeout(Some(std::time::Duration::from_secs(5)));
    let mut reader = std::io::BufReader::new(&stream);
    let mut request = String::new();
    if reader.read_line(&mut request).is_err() {
        return;
    }
    // The headers, up to the empty line; nothing here needs them.
    let mut header = String::new();
    while reader.read_line(&mut header).is_ok_and(|n| n > 0) && header.trim_end() != "" {
        header.clear();
    }
    let path = request.split_whitespace().nth(1).unwrap_or("/").to_string();
    log.lock().unwrap().push(path.clone());
    let file = path
        .trim_start_matches('/')
        .split('/')
        .all(|c| !c.is_empty() && c != "." && c != "..")
        .then(|| dir.join(path.trim_start_matches('/')))
        .filter(|p| p.is_file());
    let mut out = &stream;
    let _ = match file.and_then(|p| std::fs::read(p).ok()) {
        Some(body) => out
            .write_all(
                format!(
                    "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nContent-Type: application/octet-stream\r\nConnection: close\r\n\r\n",
                    body.len()
                )
                .as_bytes(),
            )
            .and_then(|()| out.write_all(&body)),
        None => out.write_all(
            b"HTTP/1.1 404 Not Found\r\nContent-Length: 10\r\nConnection: close\r\n\r\nnot found\n",
        ),
    };
    let _ = out.flush();
}
