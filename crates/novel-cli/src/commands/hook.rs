//! `novel hook pre-tool-use|post-tool-use`: the guard hooks of `hooks/hooks.json`
//! (`docs/orchestration.md` §9). The decisions are `novel_store::guard`'s; this module reads
//! the hook's stdin JSON and prints Claude Code's hook answer.
//!
//! A hook never fails the model's turn: outside a novel project, for a file it does not judge,
//! and on any internal error (a panic included) it prints nothing on stdout and exits 0 (an
//! internal error leaves one line on stderr). It loads no segmenter and compiles at most the
//! schema of the one file written.

use std::io::{IsTerminal, Read};

use clap::Subcommand;
use serde::Serialize;
use serde_json::Value;

use novel_store::guard::{self, ToolCall};

use crate::cli::HELP_TEMPLATE;

/// `novel hook …`.
#[derive(Debug, Clone, Copy, Subcommand)]
pub enum HookCommand {
    /// PreToolUse 钩子（Write|Edit|MultiEdit|NotebookEdit）：读取钩子的 stdin JSON；在小说项目内直接写程序维护的文件（.checkpoint.json、state/ 下的状态与变更日志、foreshadowing/global.json、项目锁、提交日志等）时拒绝，并说明该用哪条 novel 命令；其他情况不输出，退出码 0
    #[command(help_template = HELP_TEMPLATE, next_help_heading = "选项")]
    PreToolUse,
    /// PostToolUse 钩子（同上四种工具）：读取钩子的 stdin JSON；刚写入的项目文件（含 staging 中的状态增量、评估等）按 novel validate 的规则单独校验，状态增量再按 novel ops validate 检查；有错误时把每条错误（文件、位置、代码、说明）与处理办法交还模型当场修正；通过或不认识的文件不输出，退出码 0
    #[command(help_template = HELP_TEMPLATE, next_help_heading = "选项")]
    PostToolUse,
}

/// Claude Code's answer to a hook: deny the write before it happens, or block after it and
/// hand the reason back to the model.
#[derive(Serialize)]
#[serde(untagged)]
enum Answer {
    Deny {
        #[serde(rename = "hookSpecificOutput")]
        hook_specific_output: Denial,
    },
    Block {
        decision: &'static str,
        reason: String,
    },
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Denial {
    hook_event_name: &'static str,
    permission_decision: &'static str,
    permission_decision_reason: String,
}

/// Runs the hook and returns the exit code (always 0).
pub fn run(cmd: HookCommand) -> i32 {
    // A panic must not reach the model's turn: one line on stderr, nothing on stdout.
    std::panic::set_hook(Box::new(|_| {
        crate::output::err("novel hook：内部错误，已跳过本次检查\n");
    }));
    if let Ok(Some(answer)) = std::panic::catch_unwind(|| answer(cmd))
        && let Ok(text) = serde_json::to_string(&answer)
    {
        crate::output::out(&format!("{text}\n"));
    }
    0
}

/// The hook's JSON answer, if it has one.
fn answer(cmd: HookCommand) -> Option<Answer> {
    let call = ToolCall::from_json(&read_stdin()?);
    if !call.writes() {
        return None;
    }
    let cwd = call.cwd.as_deref();
    match cmd {
        HookCommand::PreToolUse => call.files.iter().find_map(|file| {
            let reason = guard::before_write(file, cwd).reason()?;
            Some(Answer::Deny {
                hook_specific_output: Denial {
                    hook_event_name: "PreToolUse",
                    permission_decision: "deny",
                    permission_decision_reason: reason,
                },
            })
        }),
        HookCommand::PostToolUse => call.files.iter().find_map(|file| {
            let reason = guard::block_reason(&guard::written(file, cwd))?;
            Some(Answer::Block {
                decision: "block",
                reason,
            })
        }),
    }
}

/// The hook's stdin JSON; no stdin, a terminal, or garbage is `None`. Read on the main thread:
/// Claude Code closes stdin after writing the JSON, and a helper thread (as the SessionStart
/// hook uses) costs a thread and a malloc arena on every Write/Edit; a stdin never closed
/// is ended by the hook's own `timeout` in `hooks/hooks.json`.
fn read_stdin() -> Option<Value> {
    let stdin = std::io::stdin();
    if stdin.is_terminal() {
        return None;
    }
    let mut bytes = Vec::new();
    if let Err(e) = stdin.lock().take(MAX_STDIN).read_to_end(&mut bytes) {
        crate::output::err(&format!(
            "novel hook：无法读取 stdin（{e}），已跳过本次检查\n"
        ));
        return None;
    }
    match serde_json::from_slice(&bytes) {
        Ok(v) => Some(v),
        Err(e) => {
            if !bytes.iter().all(u8::is_ascii_whitespace) {
                crate::output::err(&format!(
                    "novel hook：stdin 不是 JSON（{e}），已跳过本次检查\n"
                ));
            }
            None
        }
    }
}

/// The most stdin read (a Write's `content` carries the whole file).
const MAX_STDIN: u64 = 16 << 20;
