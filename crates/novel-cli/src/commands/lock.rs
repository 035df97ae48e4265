//! `novel lock status|acquire|release|clear`.

use serde::Serialize;

use novel_store::lock::{self, LockState};

use super::{lock_error, stale_after};
use crate::args::{GlobalArgs, LockCommand};
use crate::output::{CliError, Report};

/// `novel lock acquire`'s `--json` data.
#[derive(Serialize)]
struct Acquired<'a> {
    token: &'a str,
    info: &'a lock::LockInfo,
    broke_stale: &'a Option<String>,
}

/// `novel lock status`'s `--json` data: the lock, and the writer at work when one holds the
/// writers' guard.
#[derive(Serialize)]
struct Status<'a> {
    #[serde(flatten)]
    state: &'a LockState,
    writer: Option<&'a str>,
}

/// `novel lock release`'s `--json` data.
#[derive(Serialize)]
struct Released {
    released: bool,
    chapter: Option<u32>,
}

/// `novel lock clear`'s `--json` data: the owner of the lock removed, without its token.
#[derive(Serialize)]
struct Cleared {
    removed: bool,
    info: Option<lock::LockInfo>,
}

/// The envelope name of a `lock` subcommand.
pub fn command_name(cmd: &LockCommand) -> &'static str {
    match cmd {
        LockCommand::Status => "lock status",
        LockCommand::Acquire(_) => "lock acquire",
        LockCommand::Release(_) => "lock release",
        LockCommand::Clear => "lock clear",
    }
}

pub fn run(global: &GlobalArgs, cmd: LockCommand) -> Result<Report, CliError> {
    let project = super::project(global)?;
    let stale = stale_after(&project)?;
    match cmd {
        LockCommand::Status => {
            let state = lock::status(&project, stale).redacted();
            // A writer at work holds the guard before (and after) it holds the lock.
            let writer = lock::busy_writer(&project);
            let mut human = match &state {
                LockState::Free => "锁空闲。\n".to_string(),
                LockState::Held { info, .. } => format!("锁被持有：{}\n", lock::describe(info)),
                LockState::Stale { info, why } => format!(
                    "僵尸锁（{why}）{}；下一次 begin/acquire 会自动清除。\n",
                    info.as_ref()
                        .map(|i| format!("：{}", lock::describe(i)))
                        .unwrap_or_default()
                ),
            };
            if let Some(w) = &writer {
                human.push_str(&format!(
                    "另一个 novel 命令正在写入这本书（{w}），还没有写完：稍等几秒再看，不要运行 recover 或 lock clear。\n"
                ));
            }
            let data = Status {
                state: &state,
                writer: writer.as_deref(),
            };
            Report::new(&data, human)
        }
        LockCommand::Acquire(a) => {
            let pid = a.owner_pid.unwrap_or_else(lock::session_pid);
            let got = lock::acquire(&project, a.chapter, pid, stale).map_err(lock_error)?;
            let mut human = format!("已获取锁（令牌 {}）。\n", got.info.token);
            if let Some(b) = &got.broke_stale {
                human.push_str(&format!("先清除了僵尸锁：{b}\n"));
            }
            let data = Acquired {
                token: &got.info.token,
                info: &got.info,
                broke_stale: &got.broke_stale,
            };
            Report::new(&data, human)
        }
        LockCommand::Release(a) => {
            // Without `--token`: this session's lock (no lock at all is nothing to release).
            let token = match lock::token_or_session(&project, a.token.as_deref()) {
                Err(lock::LockError::NoSessionLock) => Err(lock::LockError::NotHeld),
                other => other,
            }
            .map_err(lock_error)?;
            let info = lock::release(&project, &token).map_err(lock_error)?;
            let data = Released {
                released: true,
                chapter: info.chapter,
            };
            Report::new(&data, "已释放锁。\n")
        }
        LockCommand::Clear => {
            let removed = lock::clear(&project).map_err(lock_error)?;
            let human = match &removed {
                Some(lock::Cleared { info: Some(info) }) => {
                    format!("已强制清除锁：{}\n", lock::describe(info))
                }
                Some(lock::Cleared { info: None }) => {
                    "已强制清除锁（锁目录里没有可读的 info.json，持有者不明）。\n".to_string()
                }
                None => "没有锁需要清除。\n".to_string(),
            };
            let data = Cleared {
                removed: removed.is_some(),
                info: removed.and_then(|c| c.info).map(lock::LockInfo::redacted),
            };
            Report::new(&data, human)
        }
    }
}
