//! Reads that tolerate a UTF-8 BOM, and writes that are atomic and durable:
//! a uniquely named temp file in the same directory, fsync, rename over the target,
//! fsync of the directory. A crash leaves either the old file or the new one, never half.
//!
//! Layer: ground (the lowest modules of `crates/novel-cli/tests/test_layers.rs`'s order):
//! imports only `error` and `project`. Also the tolerant readers of the views (`text_opt`,
//! `json_opt`, `names_in`: absent is `None`, unreadable a warning).

use std::fs::{self, File, OpenOptions};
use std::io::Write;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::error::StoreError;
use crate::project::Project;
use novel_core::validate::{parse_json, strip_bom};

/// Reads a UTF-8 text file; a leading BOM is dropped. Inside a [`ReadOnce`] scope a file is
/// read from disk once and its text handed out again afterwards.
pub fn read_text(path: &Path) -> Result<String, StoreError> {
    if !memo::in_scope() {
        return text_of(path, fs::read(path).map_err(|e| StoreError::io(path, e))?);
    }
    if let Some(text) = memo::text(path) {
        return Ok(text);
    }
    let (meta, bytes) = read_with_metadata(path).map_err(|e| StoreError::io(path, e))?;
    let text = text_of(path, bytes)?;
    memo::keep_text(path, &meta, &text);
    Ok(text)
}

/// Reads a text file: `None` when absent; a problem when unreadable.
pub(crate) fn text_opt(project: &Project, rel: &str, problems: &mut Vec<String>) -> Option<String> {
    match read_text(&project.path(rel)) {
        Ok(t) => Some(t),
        Err(StoreError::Io { source, .. }) if source.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => {
            problems.push(format!("{rel}：{e}"));
            None
        }
    }
}

/// Reads and parses a JSON file with serde: `None` when absent; a warning when it does not
/// parse into `T`.
pub(crate) fn json_opt<T: DeserializeOwned>(
    project: &Project,
    rel: &str,
    warnings: &mut Vec<String>,
) -> Option<T> {
    let text = text_opt(project, rel, warnings)?;
    match serde_json::from_str(&text) {
        Ok(v) => Some(v),
        Err(e) => {
            warnings.push(format!("{rel} 无法解析（{e}），已忽略"));
            None
        }
    }
}

/// File names in a project directory with the given suffix, sorted.
pub(crate) fn names_in(project: &Project, dir: &str, suffix: &str) -> Vec<String> {
    let dir = project.path(dir);
    let Ok(names) = crate::io::dir_names(&dir) else {
        return Vec::new();
    };
    let mut names: Vec<String> = names
        .into_iter()
        .filter(|n| n.ends_with(suffix) && !n.starts_with('.'))
        .filter(|n| dir.join(n).is_file())
        .collect();
    names.sort();
    names
}

/// [`read_text`] then `parse`; inside a [`ReadOnce`] scope a file is parsed once, and what
/// the parse gave is handed out again to the command's other readers of it.
pub fn read_parsed<T: Clone + 'static>(
    path: &Path,
    parse: impl FnOnce(&str) -> Result<T, StoreError>,
) -> Result<T, StoreError> {
    if !memo::in_scope() {
        return parse(&read_text(path)?);
    }
    if let Some(value) = memo::parsed::<T>(path) {
        return Ok(value);
    }
    let value = parse(&read_text(path)?)?;
    memo::keep_parsed(path, &value);
    Ok(value)
}

/// [`read_text`] for a file no other part of the command reads (each chapter's own pipeline
/// log, evaluation and text in the book's figures): served from a [`ReadOnce`] scope's memo
/// when it is there, else read without keeping a copy in it.
pub fn read_text_alone(path: &Path) -> Result<String, StoreError> {
    if let Some(text) = memo::text(path) {
        return Ok(text);
    }
    text_of(path, fs::read(path).map_err(|e| StoreError::io(path, e))?)
}

fn text_of(path: &Path, bytes: Vec<u8>) -> Result<String, StoreError> {
    let mut text = String::from_utf8(bytes).map_err(|_| StoreError::NotUtf8 {
        path: path.to_path_buf(),
    })?;
    let bom = text.len() - strip_bom(&text).len();
    text.drain(..bom);
    Ok(text)
}

/// The file's metadata (taken on the open file, before its bytes) and its bytes.
fn read_with_metadata(path: &Path) -> std::io::Result<(fs::Metadata, Vec<u8>)> {
    use std::io::Read;
    let mut f = File::open(path)?;
    let meta = f.metadata()?;
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    f.read_to_end(&mut bytes)?;
    Ok((meta, bytes))
}

/// The names of the entries of directory `dir` (lossy UTF-8, in the order the system lists
/// them). Inside a [`ReadOnce`] scope a directory is listed once.
pub fn dir_names(dir: &Path) -> std::io::Result<Vec<String>> {
    let list = || -> std::io::Result<Vec<String>> {
        Ok(fs::read_dir(dir)?
            .filter_map(Result::ok)
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect())
    };
    if !memo::in_scope() {
        return list();
    }
    if let Some(names) = memo::names(dir) {
        return Ok(names);
    }
    let meta = fs::metadata(dir)?;
    let names = list()?;
    memo::keep_names(dir, &meta, &names);
    Ok(names)
}

mod memo;

pub use memo::{ReadOnce, Reads, in_scope};

/// Reads and parses a JSON file (BOM tolerated); syntax errors carry line and character column.
pub fn read_json_value(path: &Path) -> Result<Value, StoreError> {
    let text = read_text(path)?;
    parse_json(&text).map_err(|error| StoreError::Json {
        path: path.to_path_buf(),
        error,
    })
}

/// Reads a JSON file into a model type.
pub fn read_json<T: DeserializeOwned>(path: &Path, what: &'static str) -> Result<T, StoreError> {
    let value = read_json_value(path)?;
    serde_json::from_value(value).map_err(|e| StoreError::Model {
        path: path.to_path_buf(),
        what,
        message: e.to_string(),
    })
}

/// Pretty JSON with a trailing newline, Chinese unescaped, key order kept.
pub fn to_json_text<T: Serialize>(value: &T) -> String {
    let mut s = serde_json::to_string_pretty(value).expect("model values always serialise");
    s.push('\n');
    s
}

/// The text of `value` as it replaces the JSON file at `path`: pretty JSON (as
/// [`to_json_text`]) with the keys the file's author wrote as `null` kept, where the typed
/// model would drop them ([`novel_core::model::nulls`]). A file that is absent or does not parse
/// has none to keep.
pub fn rewrite_text<T: Serialize>(path: &Path, value: &T) -> String {
    let Ok(original) = read_json_value(path) else {
        return to_json_text(value);
    };
    match serde_json::to_value(value) {
        Ok(mut v) => {
            novel_core::model::nulls::restore(&original, &mut v);
            to_json_text(&v)
        }
        Err(_) => to_json_text(value),
    }
}

/// Writes `value` as pretty JSON, atomically.
pub fn write_json<T: Serialize>(path: &Path, value: &T) -> Result<(), StoreError> {
    write_atomic(path, to_json_text(value).as_bytes())
}

static COUNTER: AtomicU64 = AtomicU64::new(0);

/// Atomically replaces `path` with `bytes` (temp + fsync + rename + dir fsync).
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), StoreError> {
    write_atomic_inner(path, bytes, true)
}

/// Like [`write_atomic`] but leaves the directory fsync to the caller, who syncs each
/// touched directory once (a batch of writes, as in a commit) before declaring them durable.
pub fn write_atomic_unsynced_dir(path: &Path, bytes: &[u8]) -> Result<(), StoreError> {
    write_atomic_inner(path, bytes, false)
}

fn write_atomic_inner(path: &Path, bytes: &[u8], sync_parent: bool) -> Result<(), StoreError> {
    let (tmp, f) = write_temp(path, bytes)?;
    let result = (|| {
        f.sync_all().map_err(|e| StoreError::io(&tmp, e))?;
        drop(f);
        fs::rename(&tmp, path).map_err(|e| StoreError::io(path, e))?;
        if sync_parent {
            sync_dir(parent_dir(path))
        } else {
            Ok(())
        }
    })();
    if result.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    result
}

/// The directory `path` is in (`.` for a bare file name).
fn parent_dir(path: &Path) -> &Path {
    match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    }
}

/// A new, uniquely named temp file beside `path` holding `bytes`, not yet synced: its path and
/// open handle. A temp whose write fails is removed again.
fn write_temp(path: &Path, bytes: &[u8]) -> Result<(std::path::PathBuf, File), StoreError> {
    let tmp = temp_name(parent_dir(path), path);
    let mut f = OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&tmp)
        .map_err(|e| StoreError::io(&tmp, e))?;
    if let Err(e) = f.write_all(bytes) {
        drop(f);
        let _ = fs::remove_file(&tmp);
        return Err(StoreError::io(&tmp, e));
    }
    Ok((tmp, f))
}

/// [`write_atomic_unsynced_dir`] for many files at once, in chunks: each chunk's temp files are
/// written, fsynced by a few threads side by side through the handles already open (the file
/// system commits them together), then renamed into place in order, `on_renamed(i)` after
/// each. A crash leaves whole files or the old ones (plus temp files that
/// [`crate::chapter::sweep_leftovers`] removes); the caller fsyncs the directories.
pub fn write_atomic_batch(
    items: &[(std::path::PathBuf, &[u8])],
    on_renamed: &mut dyn FnMut(usize),
) -> Result<(), StoreError> {
    let mut done = 0;
    for chunk in items.chunks(BATCH_CHUNK) {
        let mut open: Vec<(std::path::PathBuf, File)> = Vec::with_capacity(chunk.len());
        let result = (|| {
            for (path, bytes) in chunk {
                open.push(write_temp(path, bytes)?);
            }
            sync_files(&open)?;
            for ((path, _), (tmp, _)) in chunk.iter().zip(&open) {
                fs::rename(tmp, path).map_err(|e| StoreError::io(path, e))?;
                on_renamed(done);
                done += 1;
            }
            Ok(())
        })();
        if result.is_err() {
            for (tmp, _) in &open {
                let _ = fs::remove_file(tmp);
            }
            return result;
        }
    }
    Ok(())
}

/// Files written and fsynced together (bounded so the open handles stay few).
const BATCH_CHUNK: usize = 768;

/// fsyncs open files with up to 16 threads.
fn sync_files(files: &[(std::path::PathBuf, File)]) -> Result<(), StoreError> {
    if files.is_empty() {
        return Ok(());
    }
    let per = files.len().div_ceil(16);
    std::thread::scope(|scope| {
        let workers: Vec<_> = files
            .chunks(per)
            .map(|chunk| {
                scope.spawn(move || {
                    chunk
                        .iter()
                        .try_for_each(|(p, f)| f.sync_all().map_err(|e| StoreError::io(p, e)))
                })
            })
            .collect();
        workers.into_iter().try_for_each(|w| {
            w.join().unwrap_or_else(|_| {
                Err(StoreError::io(
                    &files[0].0,
                    std::io::Error::other("fsync 线程异常结束"),
                ))
            })
        })
    })
}

/// Debug builds only: `NOVEL_FAILPOINT=<name>:<K>` exits the process (code 99, no cleanup)
/// at step K of `<name>` (`commit` — any journal —, `write_new`), to test recovery. Release
/// builds never read it.
pub fn failpoint(name: &str, step: usize) {
    if failpoint_armed(name, step) {
        std::process::exit(99);
    }
}

/// Debug builds only: `NOVEL_PAUSE=<name>:<file>` stops the process at pause point `<name>`
/// (`commit-planned`, `apply-checked`, `revision-read`: a writer that has read and planned,
/// holding whatever it holds there): it creates `<file>.paused`, then waits until `<file>` is
/// gone (30 seconds at most). For tests that must put two writers at a known point of each
/// other. Release builds never read it.
pub fn pausepoint(name: &str) {
    #[cfg(debug_assertions)]
    {
        let Ok(v) = std::env::var("NOVEL_PAUSE") else {
            return;
        };
        let Some((point, file)) = v.split_once(':') else {
            return;
        };
        if point != name {
            return;
        }
        let file = Path::new(file);
        let _ = fs::write(format!("{}.paused", file.display()), b"");
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
        while file.exists() && std::time::Instant::now() < deadline {
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
    }
    #[cfg(not(debug_assertions))]
    {
        let _ = name;
    }
}

/// Whether `NOVEL_FAILPOINT` names step `step` of `name` (debug builds only), for a fail point
/// that must do something before it exits (write half a line).
fn failpoint_armed(name: &str, step: usize) -> bool {
    #[cfg(debug_assertions)]
    {
        std::env::var("NOVEL_FAILPOINT").is_ok_and(|v| {
            v.split_once(':')
                .is_some_and(|(n, k)| n == name && k.parse::<usize>().ok() == Some(step))
        })
    }
    #[cfg(not(debug_assertions))]
    {
        let _ = (name, step);
        false
    }
}

/// Makes `path` its first `base` bytes followed by `line` and a newline, appending (never
/// rewriting what comes before): the file is cut back to `base` (a line torn by a crash, or
/// this very line from an earlier run, goes), the line is appended in one `write`, and the file
/// is fsynced (its directory too when the file is new). Idempotent: running it again gives the
/// same bytes. A file shorter than `base` was changed by someone else since `base` was
/// measured and is refused, never padded. Fail points `append:0` (cut, nothing appended),
/// `append:1` (half the line written: a torn line) and `append:2` (written, not yet fsynced).
pub fn append_at(path: &Path, base: u64, line: &str) -> Result<(), StoreError> {
    let existed = path.exists();
    let mut f = OpenOptions::new()
        .read(true)
        .append(true)
        .create(true)
        .open(path)
        .map_err(|e| StoreError::io(path, e))?;
    let len = f.metadata().map_err(|e| StoreError::io(path, e))?.len();
    if len < base {
        return Err(StoreError::Shrank {
            path: path.to_path_buf(),
            expected: base,
            actual: len,
        });
    }
    // A file that does not end its last line (written by hand, or by an older version) gets
    // one: the appended line is never glued onto another.
    let mut buf = Vec::with_capacity(line.len() + 2);
    if base > 0 && last_byte(&mut f, base).map_err(|e| StoreError::io(path, e))? != b'\n' {
        buf.push(b'\n');
    }
    buf.extend_from_slice(line.as_bytes());
    buf.push(b'\n');
    if len != base {
        f.set_len(base).map_err(|e| StoreError::io(path, e))?;
    }
    failpoint("append", 0);
    if failpoint_armed("append", 1) {
        let _ = f.write_all(&buf[..buf.len() / 2]);
        let _ = f.sync_all();
        std::process::exit(99);
    }
    f.write_all(&buf).map_err(|e| StoreError::io(path, e))?;
    failpoint("append", 2);
    f.sync_all().map_err(|e| StoreError::io(path, e))?;
    if !existed {
        sync_dir(parent_dir(path))?;
    }
    Ok(())
}

/// The byte at offset `end - 1`.
fn last_byte(f: &mut File, end: u64) -> std::io::Result<u8> {
    use std::io::{Read, Seek, SeekFrom};
    let mut b = [0u8; 1];
    f.seek(SeekFrom::Start(end - 1))?;
    f.read_exact(&mut b)?;
    Ok(b[0])
}

/// Creates `path` with `bytes` unless it already exists (then `Ok(false)`, nothing written):
/// temp + fsync, then a hard link to the name (atomic and never replacing), then the temp goes.
/// A crash leaves either nothing or the whole file, plus at most a temp that
/// [`crate::chapter::sweep_leftovers`] removes.
pub fn write_new(path: &Path, bytes: &[u8]) -> Result<bool, StoreError> {
    let dir = parent_dir(path);
    let (tmp, f) = write_temp(path, bytes)?;
    let written = f.sync_all().map_err(|e| StoreError::io(&tmp, e));
    drop(f);
    failpoint("write_new", 0);
    let linked = written.and_then(|()| match fs::hard_link(&tmp, path) {
        Ok(()) => Ok(true),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(false),
        Err(e) => Err(StoreError::io(path, e)),
    });
    let _ = fs::remove_file(&tmp);
    let created = linked?;
    if created {
        sync_dir(dir)?;
    }
    Ok(created)
}

fn temp_name(dir: &Path, path: &Path) -> std::path::PathBuf {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0);
    dir.join(format!(
        ".{name}.tmp-{}-{}-{nanos}",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    ))
}

/// fsyncs a directory so a rename or create inside it is durable.
pub fn sync_dir(dir: &Path) -> Result<(), StoreError> {
    File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(|e| StoreError::io(dir, e))
}

/// fsyncs several directories, side by side (each fsync waits on the disk, not the CPU: a
/// commit touches half a dozen directories, one after the other they cost milliseconds).
pub fn sync_dirs(dirs: &[std::path::PathBuf]) -> Result<(), StoreError> {
    match dirs {
        [] => Ok(()),
        [one] => sync_dir(one),
        // The first on this thread, the rest on small helper threads (an fsync needs little
        // stack; a thread's default 2 MiB costs more to map than the call itself).
        [first, rest @ ..] => std::thread::scope(|scope| {
            let workers: Vec<_> = rest
                .iter()
                .map(|d| {
                    std::thread::Builder::new()
                        .stack_size(64 << 10)
                        .spawn_scoped(scope, move || sync_dir(d))
                })
                .collect();
            let mut result = sync_dir(first);
            for w in workers {
                let done = match w {
                    Ok(handle) => handle.join().unwrap_or_else(|_| {
                        Err(StoreError::io(
                            first,
                            std::io::Error::other("fsync 线程异常结束"),
                        ))
                    }),
                    Err(e) => Err(StoreError::io(first, e)),
                };
                result = result.and(done);
            }
            result
        }),
    }
}

/// Creates a directory and its parents (idempotent).
/// Creates `dir` and its missing parents, and fsyncs each new directory's entry in its parent,
/// so a file written into it afterwards cannot vanish with its directory in a crash.
pub fn create_dir_all(dir: &Path) -> Result<(), StoreError> {
    let missing: Vec<&Path> = dir.ancestors().take_while(|d| !d.exists()).collect();
    if missing.is_empty() {
        return Ok(());
    }
    fs::create_dir_all(dir).map_err(|e| StoreError::io(dir, e))?;
    for d in missing.iter().rev() {
        if let Some(parent) = d.parent().filter(|p| !p.as_os_str().is_empty()) {
            sync_dir(parent)?;
        }
    }
    Ok(())
}

/// A value read with `Trust::Typed` (`crate::state`) into its type; after the schema has passed
/// (`Trust::Checked`) this fails only where the schema and the type disagree — an error, not
/// a panic, all the same.
pub(crate) fn typed<T: serde::de::DeserializeOwned>(
    project: &Project,
    rel: &str,
    kind: novel_core::FileKind,
    v: Value,
) -> Result<T, StoreError> {
    serde_json::from_value(v).map_err(|e| StoreError::Model {
        path: project.path(rel),
        what: kind.label(),
        message: e.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Rewrites `p` in place with `text` of the same length, keeping its modification time:
    /// a change only a new read can see.
    fn overwrite_unseen(p: &Path, text: &str) {
        let mtime = fs::metadata(p).unwrap().modified().unwrap();
        let mut f = OpenOptions::new().write(true).open(p).unwrap();
        f.write_all(text.as_bytes()).unwrap();
        f.set_modified(mtime).unwrap();
    }

    #[test]
    fn a_read_once_scope_reads_a_file_from_disk_once() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("a.md");
        fs::write(&p, "\u{feff}第一版").unwrap();
        {
            let once = ReadOnce::begin();
            assert_eq!(read_text(&p).unwrap(), "第一版");
            overwrite_unseen(&p, "\u{feff}第二版");
            // Served from the memo: the disk now holds another text.
            assert_eq!(read_text(&p).unwrap(), "第一版");
            let nested = ReadOnce::begin();
            assert_eq!(read_text(&p).unwrap(), "第一版");
            drop(nested);
            assert_eq!(read_text(&p).unwrap(), "第一版");
            let reads = once.reads();
            assert_eq!(reads, vec![(p.clone(), Reads { disk: 1, asked: 4 })]);
        }
        // Outside a scope nothing is kept.
        assert_eq!(read_text(&p).unwrap(), "第二版");
        assert_eq!(ReadOnce::begin().reads(), vec![]);
    }

    #[test]
    fn a_file_written_inside_a_scope_is_read_again() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("a.json");
        let _once = ReadOnce::begin();
        let q = dir.path().join("b.json");
        write_atomic(&p, "旧".as_bytes()).unwrap();
        assert_eq!(read_text(&p).unwrap(), "旧");
        write_atomic(&p, "新".as_bytes()).unwrap(); // same length, a new file renamed over
        assert_eq!(read_text(&p).unwrap(), "新");
        write_json(&p, &serde_json::json!({"v": 2})).unwrap();
        assert_eq!(read_json_value(&p).unwrap()["v"], 2);
        let names = |d: &Path| {
            let mut n = dir_names(d).unwrap();
            n.sort();
            n
        };
        assert_eq!(names(dir.path()), ["a.json"]);
        write_atomic(&q, b"{}").unwrap();
        assert_eq!(names(dir.path()), ["a.json", "b.json"]);
        fs::remove_file(&q).unwrap();
        assert_eq!(names(dir.path()), ["a.json"]);
        // An unreadable file is an error each time, never kept.
        let gone = dir.path().join("gone.md");
        assert!(read_text(&gone).is_err());
        fs::write(&gone, "在").unwrap();
        assert_eq!(read_text(&gone).unwrap(), "在");
    }

    #[test]
    fn atomic_write_replaces_and_leaves_no_temp() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("a.json");
        write_atomic(&p, "旧".as_bytes()).unwrap();
        write_atomic(&p, "新内容".as_bytes()).unwrap();
        assert_eq!(fs::read_to_string(&p).unwrap(), "新内容");
        let names: Vec<_> = fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names.len(), 1, "{names:?}");
    }

    #[test]
    fn failed_write_keeps_old_file() {
        let dir = tempfile::tempdir().unwrap();
        // Target is a non-empty directory: rename must fail, and the temp file must go.
        let p = dir.path().join("target");
        fs::create_dir(&p).unwrap();
        fs::write(p.join("keep"), "x").unwrap();
        assert!(write_atomic(&p, b"data").is_err());
        let names: Vec<_> = fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names.len(), 1, "{names:?}");
        assert_eq!(fs::read_to_string(p.join("keep")).unwrap(), "x");
    }

    #[test]
    fn bom_json_reads() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("b.json");
        fs::write(&p, "\u{feff}{\"章\": 1}").unwrap();
        assert_eq!(read_json_value(&p).unwrap()["章"], 1);
    }
}
