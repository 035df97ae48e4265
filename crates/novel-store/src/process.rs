//! What this host can tell the project lock about a process: whether it runs, when it
//! started (so a pid reused after the holder died is not taken for the holder), its parent and
//! name (to find the session a command runs in), and the host's name.
//!
//! On Linux and macOS through `sysinfo`, refreshing only the pids asked about, never the whole
//! process table. Elsewhere (Windows) nothing is known: [`Probe::lookup`] answers
//! [`Lookup::Unknown`] and the lock falls back to its heartbeat rule.
//!
//! Layer: ground — files, paths, errors, the checkpoint, the lock, the journal and its transaction;
//! below everything that reads the book.

/// A running process as the OS reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProcessInfo {
    /// Unix seconds the process started.
    pub started: u64,
    pub parent: Option<u32>,
    /// The executable's short name (`bash`, `node`, `claude`).
    pub name: String,
}

/// The answer about one pid.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Lookup {
    Running(ProcessInfo),
    /// No such process (or only its zombie) on this host.
    Gone,
    /// This platform cannot tell.
    Unknown,
}

/// Start times read at different moments may differ by a second (Linux derives them from the
/// boot time, which it recomputes from the wall clock). A pid reused by another process
/// started after the holder died, so a small tolerance cannot mistake it for the holder.
pub const START_TOLERANCE_SECS: u64 = 2;

/// Whether two start times of a pid name the same process.
pub fn same_start(recorded: u64, now: u64) -> bool {
    recorded.abs_diff(now) <= START_TOLERANCE_SECS
}

/// Looks processes up; keeps its state between lookups (a parent walk reuses it).
pub struct Probe {
    #[cfg(any(target_os = "linux", target_os = "macos"))]
    system: sysinfo::System,
}

impl Default for Probe {
    fn default() -> Self {
        Self::new()
    }
}

#[cfg(any(target_os = "linux", target_os = "macos"))]
impl Probe {
    pub fn new() -> Self {
        Probe {
            system: sysinfo::System::new(),
        }
    }

    /// What the OS says about `pid` now.
    pub fn lookup(&mut self, pid: u32) -> Lookup {
        use sysinfo::{Pid, ProcessRefreshKind, ProcessStatus, ProcessesToUpdate};
        let pid = Pid::from_u32(pid);
        // Only this pid is read; `true` drops it from the cache when it is gone.
        self.system.refresh_processes_specifics(
            ProcessesToUpdate::Some(&[pid]),
            true,
            ProcessRefreshKind::nothing(),
        );
        match self.system.process(pid) {
            None => Lookup::Gone,
            Some(p) if matches!(p.status(), ProcessStatus::Zombie | ProcessStatus::Dead) => {
                Lookup::Gone
            }
            Some(p) => Lookup::Running(ProcessInfo {
                started: p.start_time(),
                parent: p.parent().map(|pp| pp.as_u32()),
                name: p.name().to_string_lossy().into_owned(),
            }),
        }
    }
}

#[cfg(not(any(target_os = "linux", target_os = "macos")))]
impl Probe {
    pub fn new() -> Self {
        Probe {}
    }

    /// This platform cannot tell.
    pub fn lookup(&mut self, _pid: u32) -> Lookup {
        Lookup::Unknown
    }
}

/// What the OS says about `pid` now (see [`Probe::lookup`]).
pub fn lookup(pid: u32) -> Lookup {
    Probe::new().lookup(pid)
}

/// This machine's name (for "same host" liveness checks).
pub fn host_name() -> String {
    #[cfg(any(target_os = "linux", target_os = "macos"))]
    if let Some(name) = sysinfo::System::host_name().filter(|n| !n.trim().is_empty()) {
        return name.trim().to_string();
    }
    ["HOSTNAME", "COMPUTERNAME"]
        .iter()
        .find_map(|v| std::env::var(v).ok().filter(|n| !n.trim().is_empty()))
        .map(|n| n.trim().to_string())
        .unwrap_or_default()
}

/// The parent of this process, where the platform tells it without a lookup.
pub fn parent_of_self() -> Option<u32> {
    #[cfg(unix)]
    {
        Some(std::os::unix::process::parent_id())
    }
    #[cfg(not(unix))]
    {
        None
    }
}

/// The process holding a `flock` on the file with device `dev` and inode `ino`, where the
/// host tells it (Linux: `/proc/locks`); `None` elsewhere or when nobody holds one.
pub fn flock_holder(dev: u64, ino: u64) -> Option<u32> {
    #[cfg(target_os = "linux")]
    {
        // glibc's gnu_dev_major/minor: the kernel writes them in hex, `MAJ:MIN:INODE`.
        let major = ((dev >> 8) & 0xfff) | ((dev >> 32) & !0xfff);
        let minor = (dev & 0xff) | ((dev >> 12) & !0xff);
        let want = format!("{major:02x}:{minor:02x}:{ino}");
        let text = std::fs::read_to_string("/proc/locks").ok()?;
        text.lines().find_map(|line| {
            // `1: FLOCK  ADVISORY  WRITE 1234 08:01:5678 0 EOF`; a waiter's line has `->`.
            let fields: Vec<&str> = line.split_whitespace().collect();
            (fields.get(1) == Some(&"FLOCK")
                && !line.contains("->")
                && fields.get(5) == Some(&want.as_str()))
            .then(|| fields.get(4)?.parse().ok())
            .flatten()
        })
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = (dev, ino);
        None
    }
}

/// The arguments process `pid` was started with, where the host tells them (Linux).
pub fn command_line(pid: u32) -> Option<Vec<String>> {
    #[cfg(target_os = "linux")]
    {
        let bytes = std::fs::read(format!("/proc/{pid}/cmdline")).ok()?;
        let args: Vec<String> = bytes
            .split(|b| *b == 0)
            .filter(|a| !a.is_empty())
            .map(|a| String::from_utf8_lossy(a).into_owned())
            .collect();
        (!args.is_empty()).then_some(args)
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = pid;
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The lock's view of a process through the crate's API, as on macOS: a live child is
    /// running with a start time and this process as parent, then gone once reaped.
    #[cfg(any(target_os = "linux", target_os = "macos"))]
    #[test]
    fn a_child_runs_then_is_gone() {
        let mut child = std::process::Command::new("sleep")
            .arg("30")
            .spawn()
            .expect("spawn sleep");
        let pid = child.id();
        let mut probe = Probe::new();
        let Lookup::Running(info) = probe.lookup(pid) else {
            panic!("a live child must be running");
        };
        assert_eq!(info.parent, Some(std::process::id()));
        assert_eq!(info.name, "sleep");
        let now = crate::time::now_secs();
        assert!(info.started <= now + START_TOLERANCE_SECS && info.started + 60 > now);
        // Asked again, the same start time: the lock's pid-reuse check relies on it.
        let Lookup::Running(again) = probe.lookup(pid) else {
            panic!("still running");
        };
        assert!(same_start(info.started, again.started));
        child.kill().expect("kill");
        // Not reaped yet: a zombie is not a live holder.
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
        while probe.lookup(pid) != Lookup::Gone && std::time::Instant::now() < deadline {
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        assert_eq!(probe.lookup(pid), Lookup::Gone, "zombie");
        child.wait().expect("reap");
        assert_eq!(lookup(pid), Lookup::Gone);
    }

    #[cfg(any(target_os = "linux", target_os = "macos"))]
    #[test]
    fn this_host_has_a_name_and_this_process_a_parent() {
        assert!(!host_name().is_empty());
        let me = lookup(std::process::id());
        let Lookup::Running(info) = me else {
            panic!("this process runs: {me:?}");
        };
        assert_eq!(info.parent, parent_of_self());
    }

    #[test]
    fn start_times_match_within_the_tolerance_only() {
        assert!(same_start(1_000, 1_000));
        assert!(same_start(1_000, 1_000 + START_TOLERANCE_SECS));
        assert!(same_start(1_000 + START_TOLERANCE_SECS, 1_000));
        assert!(!same_start(1_000, 1_000 + START_TOLERANCE_SECS + 1));
    }
}
