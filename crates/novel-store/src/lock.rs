//! The project lock (`002` §10.7): a directory `.novel.lock` created with `mkdir` (atomic:
//! exactly one creator wins) holding `info.json` `{pid, started, chapter}` plus `host`, a random
//! owner `token` and a `heartbeat`.
//!
//! Stale = no heartbeat for `stale_minutes` (default 30), or at once when the holder is on this
//! host and its process is gone (or its pid now belongs to a process started at another time).
//! Whether a process runs, when it started and who its parent is come from [`crate::process`]
//! (Linux, macOS); where the platform cannot tell (Windows), the heartbeat rule alone applies.
//! Breaking a stale lock and releasing one happen under a short-lived guard (an exclusive
//! `flock` on the project directory), so two breakers cannot both win and a breaker never
//! removes a lock someone else just took; a journal is written and rolled forward under the
//! same guard. Release needs the owner's token; `clear` is the author's override.
//!
//! Layer: ground — files, paths, errors, the checkpoint, the lock, the journal and its transaction;
//! below everything that reads the book.

use std::fs;
use std::path::PathBuf;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use serde::Serialize;

pub use crate::error::LockError;
pub use crate::lockfile::{BEGIN, LockInfo, TIMEOUT_VAR};

use crate::error::StoreError;
use crate::io::{read_text, write_atomic};
use crate::layout;
use crate::process::{self, Lookup};
use crate::project::Project;
use crate::time::{format_utc, now_secs};

/// What the lock looks like from outside.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum LockState {
    Free,
    Held { info: LockInfo, age_secs: u64 },
    Stale { info: Option<LockInfo>, why: String },
}

impl LockState {
    /// This state with the holder's token removed ([`LockInfo::redacted`]).
    pub fn redacted(self) -> Self {
        match self {
            LockState::Free => LockState::Free,
            LockState::Held { info, age_secs } => LockState::Held {
                info: info.redacted(),
                age_secs,
            },
            LockState::Stale { info, why } => LockState::Stale {
                info: info.map(LockInfo::redacted),
                why,
            },
        }
    }
}

fn lock_dir(project: &Project) -> PathBuf {
    project.path(layout::LOCK_DIR)
}

/// This machine's name (for "same host" liveness checks).
pub fn host_name() -> String {
    process::host_name()
}

/// A random hex token (from the OS; falls back to time and pid).
pub fn new_token() -> String {
    let mut bytes = [0u8; 16];
    let ok = fs::File::open("/dev/urandom")
        .and_then(|mut f| std::io::Read::read_exact(&mut f, &mut bytes))
        .is_ok();
    if !ok {
        let t = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap_or_default()
            .as_nanos();
        bytes[..16].copy_from_slice(&(t ^ u128::from(std::process::id()) << 64).to_le_bytes());
    }
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Whether `pid` runs on this host. Where the platform cannot tell, it says "alive" (a
/// caller then never treats a live process as gone).
pub fn process_alive(pid: u32) -> bool {
    !matches!(process::lookup(pid), Lookup::Gone)
}

/// When process `pid` started (Unix seconds), if this host can tell.
pub fn process_start(pid: u32) -> Option<u64> {
    match process::lookup(pid) {
        Lookup::Running(p) => Some(p.started),
        Lookup::Gone | Lookup::Unknown => None,
    }
}

/// Whether the holder recorded in `info` is a live process on this host: same host, pid
/// running, and (when recorded) the same process start time. `None` when this host cannot
/// tell (another machine, a lock without a host, a platform without a process probe).
fn holder_alive_here(info: &LockInfo) -> Option<bool> {
    if info.host.is_empty() || info.host != host_name() || info.pid == 0 {
        return None;
    }
    match process::lookup(info.pid) {
        Lookup::Unknown => None,
        Lookup::Gone => Some(false),
        // A lock written before `pid_started` (its `pid_start` counted clock ticks) is
        // judged by the pid alone.
        Lookup::Running(p) => Some(
            info.pid_started
                .is_none_or(|recorded| process::same_start(recorded, p.started)),
        ),
    }
}

/// The process that owns the pipeline: the nearest ancestor that is not a shell or a
/// wrapper (the Bash tool runs each command in a fresh shell; its parent is the session).
/// Where the platform cannot walk the parents, this process itself (then the heartbeat rule
/// alone judges the lock).
pub fn session_pid() -> u32 {
    let Some(mut pid) = process::parent_of_self() else {
        return std::process::id();
    };
    let mut probe = process::Probe::new();
    for _ in 0..8 {
        let Lookup::Running(p) = probe.lookup(pid) else {
            return pid;
        };
        let wrapper = matches!(
            p.name.as_str(),
            "sh" | "bash" | "dash" | "zsh" | "fish" | "env" | "timeout" | "novel" | "nice"
        );
        if !wrapper {
            return pid;
        }
        match p.parent {
            Some(ppid) if ppid > 1 => pid = ppid,
            _ => return pid,
        }
    }
    pid
}

fn read_info(project: &Project) -> Option<LockInfo> {
    let text = read_text(&lock_dir(project).join("info.json")).ok()?;
    serde_json::from_str(&text).ok()
}

/// Seconds a freshly created lock directory may exist without `info.json` before it is stale.
const CREATING_GRACE_SECS: u64 = 60;

/// Inspects the lock.
pub fn status(project: &Project, stale_after: Duration) -> LockState {
    let dir = lock_dir(project);
    let Ok(meta) = fs::metadata(&dir) else {
        return LockState::Free;
    };
    let now = now_secs();
    match read_info(project) {
        None => {
            let age = dir_mtime(&meta).map_or(0, |m| now.saturating_sub(m));
            if age > CREATING_GRACE_SECS {
                LockState::Stale {
                    info: None,
                    why: "锁目录里没有可读的 info.json".into(),
                }
            } else {
                // Being created right now by someone else.
                LockState::Held {
                    info: LockInfo::nobody(now),
                    age_secs: age,
                }
            }
        }
        // No session runs as the kernel's or the system's first processes: a lock naming one
        // (written by hand or by another tool) never had a live holder.
        Some(info) if info.pid <= 2 => LockState::Stale {
            why: "锁里记的不是一个写作会话".to_string(),
            info: Some(info),
        },
        Some(info) => {
            // A §10.7 lock written by another tool has only `{pid, started, chapter}`: its
            // age comes from `started`, else from the directory's modification time.
            let beat = match info.heartbeat.max(info.started_epoch) {
                0 => crate::time::parse_iso(&info.started)
                    .or_else(|| dir_mtime(&meta))
                    .unwrap_or(0),
                b => b,
            };
            let idle = now.saturating_sub(beat);
            match holder_alive_here(&info) {
                Some(false) => LockState::Stale {
                    why: "拿着锁的那个会话已经结束".to_string(),
                    info: Some(info),
                },
                // A live holder on this host is never stale, however long since its last
                // heartbeat (a step may take longer than the staleness window).
                Some(true) => LockState::Held {
                    age_secs: now.saturating_sub(info.started_epoch.max(beat)),
                    info,
                },
                None if idle > stale_after.as_secs() => LockState::Stale {
                    why: format!("已经 {} 分钟没有动静", idle / 60),
                    info: Some(info),
                },
                None => LockState::Held {
                    age_secs: now.saturating_sub(info.started_epoch.max(beat)),
                    info,
                },
            }
        }
    }
}

fn dir_mtime(meta: &fs::Metadata) -> Option<u64> {
    meta.modified()
        .ok()
        .and_then(|m| m.duration_since(UNIX_EPOCH).ok())
        .map(|d| d.as_secs())
}

/// Human description of a holder.
pub fn describe(info: &LockInfo) -> String {
    if info.pid == 0 && info.started.is_empty() && info.host.is_empty() {
        // The lock directory exists but names nobody (yet): its creator is writing info.json
        // right now, or was killed before it could.
        return format!(
            "持有者未知（锁目录里还没有 info.json：另一个进程可能正在创建它，或创建它的进程已被终止；{CREATING_GRACE_SECS} 秒后仍没有即视为僵尸锁）"
        );
    }
    format!(
        "进程 {}（主机 {}）自 {} 起持有，第 {} 章",
        info.pid,
        if info.host.is_empty() {
            "未知"
        } else {
            &info.host
        },
        if info.started.is_empty() {
            "刚才"
        } else {
            &info.started
        },
        info.chapter.map_or("-".to_string(), |c| c.to_string())
    )
}

/// How long a writer waits for the guard by default ([`guard_wait`]).
const GUARD_WAIT: Duration = Duration::from_secs(30);

/// How long a writer waits for another writer to finish: `NOVEL_LOCK_TIMEOUT` seconds (a
/// number ≥ 0, fractions allowed), else 30 seconds.
fn guard_wait() -> Duration {
    std::env::var(TIMEOUT_VAR)
        .ok()
        .and_then(|v| v.trim().parse::<f64>().ok())
        .filter(|s| s.is_finite() && *s >= 0.0)
        .map_or(GUARD_WAIT, |s| Duration::from_secs_f64(s.min(86_400.0)))
}

/// The writers' guard: an exclusive `flock` on the project directory, held by a writer from
/// the moment it reads what it needs until everything it wrote is in place (read → check →
/// plan → journal → apply). Every command that writes the project takes it — whoever holds the
/// project lock, this session, another one or nobody — so two writers never interleave, not
/// even two parallel tool calls of one session inside that session's lock. The kernel drops
/// it when its holder exits, however it exits, so a killed writer never leaves it behind; and
/// while it is held nobody else can be half-way through a journal, so a journal found under it
/// was interrupted.
///
/// Reentrant within this process: a writer that calls another writer's function (a commit
/// releasing the lock, a rollback of its journal) takes it again for free; it is released
/// when the outermost [`Guard`] is dropped. Readers (`status`, `next`, the hooks) never take
/// it; [`writer_running`] tells them whether a writer is at work.
#[must_use = "the guard is released when this value is dropped"]
pub struct Guard {
    key: GuardKey,
}

/// Which directory a guard is on: its device and inode where the platform has them (two
/// spellings of one directory are one guard), else its path.
#[derive(Debug, Clone, PartialEq, Eq)]
enum GuardKey {
    #[cfg_attr(not(unix), allow(dead_code))]
    Inode(u64, u64),
    #[cfg_attr(unix, allow(dead_code))]
    Path(PathBuf),
}

/// The guards this process holds: the open descriptor that carries the `flock`, and how many
/// [`Guard`]s share it.
struct HeldGuard {
    key: GuardKey,
    _file: fs::File,
    depth: usize,
}

static HELD: std::sync::Mutex<Vec<HeldGuard>> = std::sync::Mutex::new(Vec::new());

fn held_guards() -> std::sync::MutexGuard<'static, Vec<HeldGuard>> {
    // A panic while the list was locked leaves it consistent (each change is one push, one
    // decrement or one removal): keep using it.
    HELD.lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

fn guard_key(target: &std::path::Path, file: &fs::File) -> GuardKey {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        if let Ok(m) = file.metadata() {
            return GuardKey::Inode(m.dev(), m.ino());
        }
    }
    let _ = file;
    GuardKey::Path(target.to_path_buf())
}

impl Drop for Guard {
    fn drop(&mut self) {
        let mut held = held_guards();
        if let Some(i) = held.iter().position(|h| h.key == self.key) {
            held[i].depth -= 1;
            if held[i].depth == 0 {
                // Closing the descriptor releases the flock.
                held.remove(i);
            }
        }
    }
}

/// What a writer says when it has waited [`NOTICE_AFTER`] for another one (set by the binary:
/// this library never prints).
static WAIT_NOTICE: std::sync::OnceLock<fn(&str)> = std::sync::OnceLock::new();

/// How long a writer waits for the guard in silence.
pub const NOTICE_AFTER: Duration = Duration::from_secs(1);

/// Sets how a writer waiting on the guard tells the author ([`NOTICE_AFTER`]); the first call
/// wins.
pub fn set_wait_notice(notice: fn(&str)) {
    let _ = WAIT_NOTICE.set(notice);
}

/// Takes the writers' guard on `project` (see [`Guard`]), waiting up to `NOVEL_LOCK_TIMEOUT`
/// seconds (default 30) for a writer that holds it — saying so, with that writer's command,
/// after [`NOTICE_AFTER`] — then [`LockError::Busy`], naming that writer where the host can
/// tell.
pub fn guard(project: &Project) -> Result<Guard, LockError> {
    let target = guard_target(project);
    let file = open_guard(&target).map_err(|e| LockError::from(StoreError::io(&target, e)))?;
    let key = guard_key(&target, &file);
    if let Some(h) = held_guards().iter_mut().find(|h| h.key == key) {
        h.depth += 1;
        return Ok(Guard { key });
    }
    let wait = guard_wait();
    let start = Instant::now();
    let deadline = start + wait;
    let mut pause = Duration::from_millis(2);
    let mut told = false;
    loop {
        match file.try_lock() {
            Ok(()) => break,
            Err(fs::TryLockError::WouldBlock) if Instant::now() < deadline => {
                if !told && start.elapsed() >= NOTICE_AFTER {
                    told = true;
                    tell_waiting(&file, deadline);
                }
                std::thread::sleep(pause.min(deadline.saturating_duration_since(Instant::now())));
                pause = (pause * 2).min(Duration::from_millis(50));
            }
            Err(fs::TryLockError::WouldBlock) => {
                return Err(LockError::Busy {
                    writer: running_writer(&file),
                    waited_secs: wait.as_secs_f64(),
                });
            }
            Err(fs::TryLockError::Error(e)) => {
                return Err(LockError::from(StoreError::io(&target, e)));
            }
        }
    }
    held_guards().push(HeldGuard {
        key: key.clone(),
        _file: file,
        depth: 1,
    });
    Ok(Guard { key })
}

/// Tells the author (through [`set_wait_notice`]'s function) that this command waits for the
/// writer holding the guard on `file`'s directory.
fn tell_waiting(file: &fs::File, deadline: Instant) {
    if let Some(notice) = WAIT_NOTICE.get() {
        let writer = running_writer(file).unwrap_or_else(|| "本机查不到是哪个进程".into());
        let left = deadline.saturating_duration_since(Instant::now()).as_secs();
        notice(&format!(
            "另一个 novel 命令正在写入这本书（{writer}），等它写完再继续（最多再等 {left} 秒）……\n"
        ));
    }
}

/// Runs `f` while holding the writers' guard ([`guard`]).
pub(crate) fn with_guard<T, E: From<LockError>>(
    project: &Project,
    f: impl FnOnce() -> Result<T, E>,
) -> Result<T, E> {
    let _guard = guard(project)?;
    f()
}

/// Whether a writer holds the guard right now (for readers that find a journal: a writer at
/// work, or one that was interrupted). This process's own guard counts. Where the guard cannot
/// be probed, `false`.
pub fn writer_running(project: &Project) -> bool {
    let target = guard_target(project);
    let Ok(file) = open_guard(&target) else {
        return false;
    };
    if held_guards()
        .iter()
        .any(|h| h.key == guard_key(&target, &file))
    {
        return true;
    }
    // A shared probe: it conflicts with a writer's exclusive guard only, and is dropped at once.
    match file.try_lock_shared() {
        Ok(()) => false,
        Err(fs::TryLockError::WouldBlock) => true,
        Err(fs::TryLockError::Error(_)) => false,
    }
}

/// The writer at work on `project` (holding the guard) other than this process, as
/// `进程 PID：novel …` where the host tells it, else a plain sentence; `None` when no writer
/// is at work.
pub fn busy_writer(project: &Project) -> Option<String> {
    let target = guard_target(project);
    let file = open_guard(&target).ok()?;
    if held_guards()
        .iter()
        .any(|h| h.key == guard_key(&target, &file))
    {
        return None;
    }
    match file.try_lock_shared() {
        Err(fs::TryLockError::WouldBlock) => {
            Some(running_writer(&file).unwrap_or_else(|| "另一个 novel 命令".into()))
        }
        _ => None,
    }
}

/// The writer holding the guard on `file`'s directory, as `进程 PID：novel …` (its arguments, the
/// lock token left out), where the host tells it.
fn running_writer(file: &fs::File) -> Option<String> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        let m = file.metadata().ok()?;
        let pid = process::flock_holder(m.dev(), m.ino())?;
        let args = process::command_line(pid).unwrap_or_default();
        Some(describe_command(pid, &args))
    }
    #[cfg(not(unix))]
    {
        let _ = file;
        None
    }
}

/// `进程 PID：novel ARGS` for a writer's command line: the program's file name, then its
/// arguments with every `--token` value (a lock's secret) replaced by `…`.
fn describe_command(pid: u32, args: &[String]) -> String {
    let mut shown: Vec<String> = Vec::new();
    let mut secret = false;
    for (i, a) in args.iter().enumerate() {
        if i == 0 {
            shown.push(
                std::path::Path::new(a)
                    .file_name()
                    .map_or_else(|| a.clone(), |n| n.to_string_lossy().into_owned()),
            );
        } else if secret {
            shown.push("…".into());
            secret = false;
        } else if a == "--token" {
            shown.push(a.clone());
            secret = true;
        } else if a.starts_with("--token=") {
            shown.push("--token=…".into());
        } else {
            shown.push(a.clone());
        }
    }
    if shown.is_empty() {
        format!("进程 {pid}")
    } else {
        format!("进程 {pid}：{}", shown.join(" "))
    }
}

/// What the guard locks: the project directory where a directory can be opened (Unix);
/// elsewhere a file beside the lock (named like the lock's set-aside copies, which the guard
/// hook already protects).
fn guard_target(project: &Project) -> PathBuf {
    if cfg!(unix) {
        project.root.clone()
    } else {
        project.path(".novel.lock.guard")
    }
}

fn open_guard(target: &std::path::Path) -> std::io::Result<fs::File> {
    if cfg!(unix) {
        fs::File::open(target)
    } else {
        fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(target)
    }
}

/// Removes the lock directory (rename aside first, so the path is free atomically).
fn remove_lock(project: &Project) -> Result<(), LockError> {
    let dir = lock_dir(project);
    let aside = project.path(&format!(".novel.lock.removed-{}", new_token()));
    fs::rename(&dir, &aside).map_err(|e| StoreError::io(&dir, e))?;
    let _ = fs::remove_dir_all(&aside);
    crate::io::sync_dir(&project.root)?;
    Ok(())
}

/// The outcome of [`acquire`].
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Acquired {
    pub info: LockInfo,
    /// What a stale lock that had to be broken looked like.
    pub broke_stale: Option<String>,
}

/// A stale lock this process removed.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Broken {
    pub info: Option<LockInfo>,
    pub why: String,
}

/// Removes the lock if it is stale, re-checked under the guard so that two breakers cannot
/// both win and a lock someone took in the meantime is left alone. `Some` only when this call
/// removed it.
pub fn break_stale(project: &Project, stale_after: Duration) -> Result<Option<Broken>, LockError> {
    let LockState::Stale { info, .. } = status(project, stale_after) else {
        return Ok(None);
    };
    let token = info.map(|i| i.token);
    with_guard(project, || match status(project, stale_after) {
        LockState::Stale { info, why } if info.as_ref().map(|i| i.token.clone()) == token => {
            remove_lock(project)?;
            Ok(Some(Broken { info, why }))
        }
        _ => Ok(None),
    })
}

/// Removes a lock a `chapter begin` took and never used: it names a chapter the checkpoint
/// does not have in flight (`inflight`), and no journal is pending — the begin was killed
/// between placing the lock and writing its journal (or its journal was rolled back). For
/// a caller that holds the guard (so no begin is half-way now). The removed lock's holder.
pub fn break_unused_begin(
    project: &Project,
    inflight: Option<u32>,
    stale_after: Duration,
) -> Result<Option<LockInfo>, LockError> {
    let _guard = guard(project)?;
    if project.path(layout::JOURNAL).exists() {
        return Ok(None);
    }
    match status(project, stale_after) {
        LockState::Held { info, .. }
            if info.command.as_deref() == Some(BEGIN)
                && info.chapter.is_some()
                && info.chapter != inflight =>
        {
            remove_lock(project)?;
            Ok(Some(info))
        }
        _ => Ok(None),
    }
}

/// Refuses while a journal is pending (see [`LockError::JournalPending`]). Every path by which
/// a writer gets the lock — [`acquire`], [`Held::take`], [`heartbeat`] — goes through here, so
/// no writer can run between a crash and the roll-forward that would overwrite its work.
pub fn ensure_no_journal(project: &Project) -> Result<(), LockError> {
    let path = project.path(layout::JOURNAL);
    if !path.exists() {
        return Ok(());
    }
    let what = match crate::journal::read_journal(project) {
        Ok(Some(j)) => j.describe(),
        _ => "一次写入".to_string(),
    };
    Err(LockError::JournalPending { what })
}

/// Takes the lock for `chapter`. A stale lock is broken first (race-free); a live one is a
/// conflict naming its holder. Refused while a journal is pending, and for an owner that does
/// not run on this host (where the host can tell).
pub fn acquire(
    project: &Project,
    chapter: Option<u32>,
    owner_pid: u32,
    stale_after: Duration,
) -> Result<Acquired, LockError> {
    acquire_for(project, chapter, owner_pid, stale_after, None)
}

/// [`acquire`], recording the `command` that takes the lock ([`LockInfo::command`]).
pub fn acquire_for(
    project: &Project,
    chapter: Option<u32>,
    owner_pid: u32,
    stale_after: Duration,
    command: Option<&str>,
) -> Result<Acquired, LockError> {
    let owner = process::lookup(owner_pid);
    if owner_pid == 0 || owner == Lookup::Gone {
        return Err(LockError::DeadOwner { pid: owner_pid });
    }
    if let Some(why) = unfit_owner(owner_pid) {
        return Err(LockError::UnfitOwner {
            pid: owner_pid,
            why,
        });
    }
    // Under the guard from the journal check on: a journal found here was interrupted, and no
    // other writer can break, take or fill the lock in between.
    let _guard = guard(project)?;
    ensure_no_journal(project)?;
    let broke = break_stale(project, stale_after)?.map(|b| match b.info {
        Some(i) => format!("{}；{}", describe(&i), b.why),
        None => b.why,
    });
    let dir = lock_dir(project);
    let now = now_secs();
    let info = LockInfo {
        pid: owner_pid,
        started: format_utc(now),
        chapter,
        host: host_name(),
        token: new_token(),
        heartbeat: now,
        started_epoch: now,
        pid_started: match owner {
            Lookup::Running(p) => Some(p.started),
            Lookup::Gone | Lookup::Unknown => None,
        },
        pid_start: None,
        command: command.map(str::to_string),
    };
    // The lock appears with its info.json already inside: built under a temporary name, then
    // renamed into place (atomic; refused when the lock exists). A process killed half-way
    // leaves only a temporary directory, never a lock that names nobody.
    if dir.symlink_metadata().is_ok() {
        // Held (a rename would even replace an empty lock directory someone is filling).
        let info = winner_info(project);
        return Err(LockError::Held {
            holder: describe(&info),
            info: Box::new(info),
        });
    }
    let placed = place(project, &info);
    if !placed? {
        let info = winner_info(project);
        return Err(LockError::Held {
            holder: describe(&info),
            info: Box::new(info),
        });
    }
    crate::io::sync_dir(&project.root)?;
    Ok(Acquired {
        info,
        broke_stale: broke,
    })
}

/// Puts the lock directory in place with `info` inside: built under a temporary name, then
/// renamed (refused when a lock is there: `false`). A temporary directory left by a failure
/// is removed; one left by a killed process is swept by `chapter recover`.
fn place(project: &Project, info: &LockInfo) -> Result<bool, StoreError> {
    let dir = lock_dir(project);
    let tmp = project.path(&format!(
        ".novel.lock.tmp-{}-{}",
        std::process::id(),
        new_token()
    ));
    fs::create_dir(&tmp).map_err(|e| StoreError::io(&tmp, e))?;
    let placed = write_atomic(
        &tmp.join("info.json"),
        crate::io::to_json_text(info).as_bytes(),
    )
    .and_then(|()| match fs::rename(&tmp, &dir) {
        Ok(()) => Ok(true),
        Err(e)
            if matches!(
                e.kind(),
                std::io::ErrorKind::AlreadyExists | std::io::ErrorKind::DirectoryNotEmpty
            ) =>
        {
            Ok(false)
        }
        Err(e) => Err(StoreError::io(&dir, e)),
    });
    if !matches!(placed, Ok(true)) {
        let _ = fs::remove_dir_all(&tmp);
    }
    placed
}

/// The holder of a lock someone else just created: its `info.json` may lag the `mkdir` by a
/// moment, so wait briefly for it to name the holder.
fn winner_info(project: &Project) -> LockInfo {
    let deadline = Instant::now() + Duration::from_millis(500);
    loop {
        if let Some(info) = read_info(project) {
            return info;
        }
        if Instant::now() >= deadline || !lock_dir(project).exists() {
            return LockInfo::nobody(0);
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// Checks that `token` owns the lock and returns its info.
pub fn verify(project: &Project, token: &str) -> Result<LockInfo, LockError> {
    if !lock_dir(project).exists() {
        return Err(LockError::NotHeld);
    }
    match read_info(project) {
        Some(info) if !token.is_empty() && info.token == token => Ok(info),
        _ => Err(LockError::NotOwner),
    }
}

/// Refreshes the heartbeat (owner only).
pub fn heartbeat(project: &Project, token: &str) -> Result<LockInfo, LockError> {
    // Under the guard: a breaker cannot replace the lock between the check and the write.
    with_guard(project, || {
        ensure_no_journal(project)?;
        let mut info = verify(project, token)?;
        info.heartbeat = now_secs();
        write_atomic(
            &lock_dir(project).join("info.json"),
            crate::io::to_json_text(&info).as_bytes(),
        )?;
        Ok(info)
    })
}

/// Releases the lock; only its owner may.
pub fn release(project: &Project, token: &str) -> Result<LockInfo, LockError> {
    with_guard(project, || release_guarded(project, token))
}

/// [`release`] for a caller that already holds the guard.
fn release_guarded(project: &Project, token: &str) -> Result<LockInfo, LockError> {
    let info = verify(project, token)?;
    remove_lock(project)?;
    Ok(info)
}

/// Releases the lock if `token` still owns it; a lock that is gone or someone else's is left.
/// For a caller that already holds the guard (a journal being rolled forward).
pub(crate) fn release_if_owner_guarded(project: &Project, token: &str) -> Result<bool, LockError> {
    match release_guarded(project, token) {
        Ok(_) => Ok(true),
        Err(LockError::NotHeld | LockError::NotOwner) => Ok(false),
        Err(e) => Err(e),
    }
}

/// What `clear` removed: the holder, when its `info.json` could be read.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Cleared {
    pub info: Option<LockInfo>,
}

/// The author's override: removes whatever lock there is and says what it was (`None` when
/// there was no lock).
pub fn clear(project: &Project) -> Result<Option<Cleared>, LockError> {
    if !lock_dir(project).exists() {
        return Ok(None);
    }
    with_guard(project, || {
        let info = read_info(project);
        if !lock_dir(project).exists() {
            return Ok(None);
        }
        remove_lock(project)?;
        Ok(Some(Cleared { info }))
    })
}

/// Why `pid` cannot own the lock, if it cannot: pids 0–2 (the kernel's and the system's first
/// processes) and the ancestors of this command's session (its terminal, the login shell, …)
/// outlive every session, so a lock they own would never be stale.
fn unfit_owner(pid: u32) -> Option<&'static str> {
    if pid <= 2 {
        return Some("是系统进程");
    }
    let session = session_pid();
    if pid == session {
        return None;
    }
    let mut probe = process::Probe::new();
    let mut at = session;
    for _ in 0..64 {
        let Lookup::Running(p) = probe.lookup(at) else {
            return None;
        };
        match p.parent {
            Some(parent) if parent == pid => return Some("是本会话的上级进程"),
            Some(parent) if parent > 1 && parent != at => at = parent,
            _ => return None,
        }
    }
    None
}

/// Whether `info` is the lock of the session this command runs in (same host, its owner is
/// this process's session — see [`session_pid`] — and, where the lock recorded it, that
/// process's start time: a session that reuses the pid of a dead holder is another session).
pub fn held_by_this_session(info: &LockInfo) -> bool {
    info.pid != 0
        && info.host == host_name()
        && info.pid == session_pid()
        && holder_alive_here(info) != Some(false)
}

/// The token a command acts with: `given` (`--token`) as it is, or else the lock's own when the
/// session this command runs in holds it ([`held_by_this_session`]). The token is the fence:
/// read here once, it is verified again under the guard by the command's own write, so a lock
/// broken and retaken by another session in between is refused there too. Without `--token`,
/// no lock is [`LockError::NoSessionLock`] and another session's is
/// [`LockError::OtherSession`].
pub fn token_or_session(project: &Project, given: Option<&str>) -> Result<String, LockError> {
    if let Some(t) = given {
        return Ok(t.to_string());
    }
    if !lock_dir(project).exists() {
        return Err(LockError::NoSessionLock);
    }
    match read_info(project) {
        Some(info) if held_by_this_session(&info) && !info.token.is_empty() => Ok(info.token),
        Some(info) => Err(LockError::OtherSession {
            holder: describe(&info),
        }),
        None => Err(LockError::OtherSession {
            holder: "一个还没写完锁信息的进程".to_string(),
        }),
    }
}

/// [`token_or_session`] where a token is needed only for the chapter in flight (`revision
/// save|apply`): the session's token when it holds the lock, else `given` (possibly none).
pub fn session_token_if_held(project: &Project, given: Option<&str>) -> Option<String> {
    token_or_session(project, given).ok()
}

/// The lock held for one short operation (`ops apply`, `state rebuild --write`, `spec
/// propagate`, `pending resolve`, `retire apply`). When the session this command runs in
/// already holds the lock, the operation runs inside it and leaves it alone; otherwise it is
/// taken for this process — so if the process dies the lock is stale at once — and released
/// when this is dropped, unless it was handed to a commit journal.
///
/// It holds the writers' [`Guard`] from [`take`](Held::take) until it is dropped, so the
/// operation's reads, checks and writes are one step no other writer can come between — not
/// even another command of the same session, which the project lock alone lets through.
pub struct Held<'a> {
    project: &'a Project,
    /// `Some` when this process took the lock (and must release it).
    token: Option<String>,
    /// Dropped after the lock is released (fields drop after [`Drop::drop`]).
    _guard: Guard,
}

impl<'a> Held<'a> {
    pub fn take(project: &'a Project, stale_after: Duration) -> Result<Self, LockError> {
        let guard = guard(project)?;
        ensure_no_journal(project)?;
        if let LockState::Held { info, .. } = status(project, stale_after)
            && held_by_this_session(&info)
        {
            return Ok(Held {
                project,
                token: None,
                _guard: guard,
            });
        }
        let got = acquire(project, None, std::process::id(), stale_after)?;
        Ok(Held {
            project,
            token: Some(got.info.token),
            _guard: guard,
        })
    }

    /// Hands the lock to a commit journal, whose last step (or `novel chapter recover` after a
    /// crash) releases it. Empty when the lock is the session's own: the journal leaves it.
    pub fn into_journal_token(mut self) -> String {
        self.hand_to_journal()
    }

    /// Like [`Held::into_journal_token`] for a holder that is kept (and released, now a no-op,
    /// by its owner afterwards).
    pub fn hand_to_journal(&mut self) -> String {
        self.token.take().unwrap_or_default()
    }

    /// Releases now, reporting a failure (dropping releases too, silently).
    pub fn release(mut self) -> Result<(), LockError> {
        match self.token.take() {
            Some(token) => release(self.project, &token).map(|_| ()),
            None => Ok(()),
        }
    }
}

impl Drop for Held<'_> {
    fn drop(&mut self) {
        if let Some(token) = self.token.take() {
            let _ = release(self.project, &token);
        }
    }
}
