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

use crate::args::HELP_TEMPLATE;

/// `novel hook …`.
#[derive(Debug, Clone, Copy, Subcommand)]
pub enum HookCommand {
    /// PreToolUse 钩子（Write|Edit|MultiEdit|NotebookEdit|Bash）：读取钩子的 stdin JSON；在小说项目内直接写（或用 Bash 命令改写、删除含有它们的目录）程序维护的文件（.checkpoint.json、state/ 下的状态与变更日志、foreshadowing/global.json、项目锁、提交日志、已提交的正文与评估等）时拒绝；解析不了的 Bash 命令行提到这些文件时也拒绝，并说明该用哪条 novel 命令；其他情况不输出，退出码 0
    #[command(help_template = HELP_TEMPLATE, next_help_heading = "选项")]
    PreToolUse,
    /// PostToolUse 钩子（Write|Edit|MultiEdit|NotebookEdit|Agent|Task）：读取钩子的 stdin JSON；流水线 agent（写手、摘要、润色、评审）结束时，把它用掉的 token 与时间记进在写章节的 staging（staging/logs/chapter-NNN-usage-*.json），下一次 novel chapter stage 没给用量参数时计入这一阶段；刚写入的项目文件（含 staging 中的状态增量、评估等）按 novel validate 的规则单独校验，状态增量再按 novel ops validate 检查；有错误时把每条错误（文件、位置、代码、说明）与处理办法交还模型当场修正。章节流水线的 agent 写完它这一步的最后一个文件、程序的检查（字数、三份摘要文件、修改清单套得上正文且改动比例在上限内、评估）都通过时，结束这个 agent（continue: false），它写在文件前面的返回 JSON 就是结果；检查不过时把问题交还它。其余情况不输出，退出码 0
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
    /// A pipeline agent's work is done (`finish`): the client ends the agent after this tool
    /// call, and its return is the JSON it wrote ahead of its files.
    Stop {
        #[serde(rename = "continue")]
        go_on: bool,
        #[serde(rename = "stopReason")]
        stop_reason: String,
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
    let (call, whole) = match read_stdin()? {
        Input::Call(call, whole) => (call, whole),
        Input::Unreadable(why) => return unreadable(cmd, &why),
    };
    let cwd = call.cwd.as_deref();
    match cmd {
        HookCommand::PostToolUse if matches!(call.tool_name.as_deref(), Some("Agent" | "Task")) => {
            record_usage(&whole?);
            None
        }
        HookCommand::PreToolUse if call.is_bash() => {
            let command = call.command.as_deref().unwrap_or_default();
            let denial = guard::before_bash(command, cwd)?;
            Some(deny(denial.reason()))
        }
        HookCommand::PreToolUse if call.writes() => call.files.iter().find_map(|file| {
            let reason = guard::before_write(file, cwd).reason()?;
            Some(deny(reason))
        }),
        HookCommand::PostToolUse if call.writes() => call.files.iter().find_map(|file| {
            let found = guard::written_judged(file, cwd, &novel_text::normalize::normalize_str);
            let reason = match guard::block_reason(&found) {
                Some(reason) => reason,
                None => match super::finish::after_write(call.agent.as_deref()?, file, cwd)? {
                    super::finish::Verdict::Done(why) => {
                        return Some(Answer::Stop {
                            go_on: false,
                            stop_reason: why,
                        });
                    }
                    super::finish::Verdict::Fix(reason) => reason,
                },
            };
            Some(Answer::Block {
                decision: "block",
                reason,
            })
        }),
        _ => None,
    }
}

/// A pipeline agent's usage, recorded for the chapter in flight's next `chapter stage`
/// (`novel_store::agent_usage`). Silent whatever happens: the hook never stands in the tool's way.
fn record_usage(whole: &Value) {
    let Some((dir, id, usage)) = novel_store::agent_usage::from_hook(whole) else {
        return;
    };
    if let Ok(project) = novel_store::Project::open(&dir) {
        let _ = novel_store::agent_usage::record(&project, &id, &usage);
    }
}

fn deny(reason: String) -> Answer {
    Answer::Deny {
        hook_specific_output: Denial {
            hook_event_name: "PreToolUse",
            permission_decision: "deny",
            permission_decision_reason: reason,
        },
    }
}

/// Input the guards cannot read: before a write inside a novel project it is refused (a guard
/// that cannot see the file must not let it through); after a write there is nothing to undo.
fn unreadable(cmd: HookCommand, why: &str) -> Option<Answer> {
    crate::output::err(&format!("novel hook：{why}\n"));
    if !matches!(cmd, HookCommand::PreToolUse) {
        return None;
    }
    let here = std::env::current_dir().ok();
    let project_dir = std::env::var_os("CLAUDE_PROJECT_DIR").map(std::path::PathBuf::from);
    let dirs: Vec<&std::path::Path> = [here.as_deref(), project_dir.as_deref()]
        .into_iter()
        .flatten()
        .collect();
    guard::unreadable_input(why, &dirs).map(deny)
}

/// What the hook's stdin holds.
enum Input {
    /// The call, and the whole JSON document when it was one.
    Call(ToolCall, Option<Value>),
    /// Input that is there but cannot be read as a tool call (why, in Chinese).
    Unreadable(String),
}

/// The hook's stdin as a tool call; `None` for no stdin or a terminal. Read on the main thread:
/// Claude Code closes stdin after writing the JSON, and a helper thread (as the SessionStart
/// hook uses) costs a thread and a malloc arena on every Write/Edit; a stdin never closed is
/// ended by the hook's own `timeout` in `hooks/hooks.json`. Decoded whatever the encoding
/// (UTF-8 with or without a BOM, UTF-16 with a BOM); one JSON document is taken even with bytes
/// after it; input cut short or otherwise broken is read for the keys the guards need
/// ([`ToolCall::from_fragments`]), and is [`Input::Unreadable`] only when not even those are
/// there.
fn read_stdin() -> Option<Input> {
    let stdin = std::io::stdin();
    if stdin.is_terminal() {
        return None;
    }
    let mut bytes = Vec::new();
    let cut = match stdin.lock().take(MAX_STDIN + 1).read_to_end(&mut bytes) {
        Ok(_) => bytes.len() as u64 > MAX_STDIN,
        Err(e) => return Some(Input::Unreadable(format!("无法读取 stdin：{e}"))),
    };
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return None;
    }
    let text = decode(&bytes);
    let mut stream = serde_json::Deserializer::from_str(text.trim_start()).into_iter::<Value>();
    if !cut && let Some(Ok(v)) = stream.next() {
        return Some(Input::Call(ToolCall::from_json(&v), Some(v)));
    }
    let call = ToolCall::from_fragments(&text);
    if call.files.is_empty() && call.command.is_none() {
        let why = if cut {
            format!("输入超过 {} MiB，且其中找不到要写的文件", MAX_STDIN >> 20)
        } else {
            "输入不是 JSON，且其中找不到要写的文件".to_string()
        };
        return Some(Input::Unreadable(why));
    }
    Some(Input::Call(call, None))
}

/// The input's text: UTF-16 (either byte order) when it starts with that BOM, else UTF-8 with a
/// BOM dropped and anything invalid replaced.
fn decode(bytes: &[u8]) -> String {
    let utf16 = |le: bool| {
        let units: Vec<u16> = bytes[2..]
            .chunks_exact(2)
            .map(|c| {
                if le {
                    u16::from_le_bytes([c[0], c[1]])
                } else {
                    u16::from_be_bytes([c[0], c[1]])
                }
            })
            .collect();
        String::from_utf16_lossy(&units)
    };
    match bytes {
        [0xFF, 0xFE, ..] => utf16(true),
        [0xFE, 0xFF, ..] => utf16(false),
        [0xEF, 0xBB, 0xBF, rest @ ..] => String::from_utf8_lossy(rest).into_owned(),
        _ => String::from_utf8_lossy(bytes).into_owned(),
    }
}

/// The most stdin read whole (a Write's `content` carries the whole file); past it, only the
/// keys before the content are read.
const MAX_STDIN: u64 = 256 << 20;
