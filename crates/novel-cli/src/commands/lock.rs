//! `novel lock status|acquire|release|clear`.

use std::time::Duration;

use serde_json::json;

use novel_store::Project;
use novel_store::lock::{self, LockError, LockState};

use crate::cli::{GlobalArgs, LockCommand};
use crate::output::{CliError, Exit, Report};

/// Staleness from the project settings (`novel.json` lock.stale_minutes, default 30); a
/// settings file that does not load is an error, not the default.
pub fn stale_after(project: &Project) -> Result<Duration, CliError> {
    Ok(novel_store::settings::load(project)?.lock.stale_after())
}

pub fn lock_error(e: LockError) -> CliError {
    let code = e.code();
    match e {
        LockError::Held { holder, .. } => CliError::new(
            code,
            format!("项目正被占用：{holder}"),
            "等它完成；若确认那个会话已经不在，运行 novel chapter recover（僵尸锁会被自动清除）或 novel lock clear",
            Exit::Conflict,
        ),
        LockError::NotOwner => CliError::new(
            code,
            e.to_string(),
            "使用 chapter begin / lock acquire 返回的 token；novel lock status 可查看持有者",
            Exit::Conflict,
        ),
        LockError::Busy => CliError::new(code, e.to_string(), "稍后重试", Exit::Conflict),
        LockError::JournalPending { .. } => CliError::new(
            code,
            e.to_string(),
            "先运行 novel chapter recover 补完它，再重试这条命令",
            Exit::Conflict,
        ),
        LockError::NotHeld => CliError::new(code, e.to_string(), "无需释放", Exit::Usage),
        LockError::DeadOwner { .. } => CliError::new(
            code,
            e.to_string(),
            "省略 --owner-pid（默认取当前会话的进程），或给出一个正在运行的进程号",
            Exit::Usage,
        ),
        LockError::Store(s) => s.into(),
    }
}

pub fn run(global: &GlobalArgs, cmd: LockCommand) -> Result<Report, CliError> {
    let project = super::project(global)?;
    let stale = stale_after(&project)?;
    match cmd {
        LockCommand::Status => {
            let state = lock::status(&project, stale);
            let human = match &state {
                LockState::Free => "锁空闲。\n".to_string(),
                LockState::Held { info, .. } => format!("锁被持有：{}\n", lock::describe(info)),
                LockState::Stale { info, why } => format!(
                    "僵尸锁（{why}）{}；下一次 begin/acquire 会自动清除。\n",
                    info.as_ref()
                        .map(|i| format!("：{}", lock::describe(i)))
                        .unwrap_or_default()
                ),
            };
            // Never print the owner's token to others.
            let mut data = serde_json::to_value(&state).expect("serialises");
            if let Some(info) = data.get_mut("info").and_then(|i| i.as_object_mut()) {
                info.remove("token");
            }
            Ok(Report { data, human })
        }
        LockCommand::Acquire(a) => {
            let pid = a.owner_pid.unwrap_or_else(lock::session_pid);
            let got = lock::acquire(&project, a.chapter, pid, stale).map_err(lock_error)?;
            let mut human = format!("已获取锁（令牌 {}）。\n", got.info.token);
            if let Some(b) = &got.broke_stale {
                human.push_str(&format!("先清除了僵尸锁：{b}\n"));
            }
            Ok(Report {
                data: json!({"token": got.info.token, "info": got.info, "broke_stale": got.broke_stale}),
                human,
            })
        }
        LockCommand::Release(a) => {
            let info = lock::release(&project, &a.token).map_err(lock_error)?;
            Ok(Report {
                data: json!({"released": true, "chapter": info.chapter}),
                human: "已释放锁。\n".into(),
            })
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
            Ok(Report {
                data: json!({
                    "removed": removed.is_some(),
                    "info": removed.and_then(|c| c.info).map(|mut i| { i.token.clear(); i }),
                }),
                human,
            })
        }
    }
}
