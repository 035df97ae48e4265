//! What the project lock records (`.novel.lock/info.json`, [`LockInfo`]) and how long a writer
//! waits for the guard: what the lock ([`crate::lock`]) and the store's errors
//! ([`crate::error::LockError`]) both name.
//!
//! Layer: ground (imports nothing of the crate).

use serde::{Deserialize, Serialize};

/// `.novel.lock/info.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LockInfo {
    /// The process that owns the pipeline (the session), not the short-lived `novel` call.
    pub pid: u32,
    /// ISO-8601 time the lock was taken (§10.7 field).
    pub started: String,
    pub chapter: Option<u32>,
    #[serde(default)]
    pub host: String,
    /// The holder's secret: only it stages, commits or releases. Empty in a
    /// [`redacted`](LockInfo::redacted) copy, and then not serialised.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub token: String,
    /// Unix seconds of the last heartbeat (`chapter stage` refreshes it).
    #[serde(default)]
    pub heartbeat: u64,
    #[serde(default)]
    pub started_epoch: u64,
    /// Start time of `pid` (Unix seconds, as the OS reports it), so a pid reused by another
    /// process after the holder died is not taken for the holder.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pid_started: Option<u64>,
    /// What locks written before `pid_started` recorded (clock ticks after boot on Linux):
    /// kept when read back, no longer compared or written.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pid_start: Option<u64>,
    /// The command that took the lock, when it is one whose work a recovery must know about
    /// ([`BEGIN`]: a `chapter begin` killed before its journal left only this lock).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
}

/// [`LockInfo::command`] of the lock `novel chapter begin` takes.
pub const BEGIN: &str = "chapter begin";

impl LockInfo {
    /// The stand-in for a lock directory without a readable `info.json`.
    pub(crate) fn nobody(now: u64) -> LockInfo {
        LockInfo {
            pid: 0,
            started: String::new(),
            chapter: None,
            host: String::new(),
            token: String::new(),
            heartbeat: now,
            started_epoch: now,
            pid_started: None,
            pid_start: None,
            command: None,
        }
    }

    /// The lock as shown to anyone but its holder (`lock status`, `lock clear`, `status`):
    /// without the token, which is never printed to others.
    pub fn redacted(mut self) -> Self {
        self.token.clear();
        self
    }
}

/// The environment variable that sets how long a writer waits for the guard, in seconds.
pub const TIMEOUT_VAR: &str = "NOVEL_LOCK_TIMEOUT";
