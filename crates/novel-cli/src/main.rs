//! `novel` — the deterministic helper of the novel plugin. This crate only parses arguments,
//! wires `novel-store` and `novel-core` together and renders the result (Chinese text or one
//! JSON envelope). See DESIGN.md for the exit codes and the envelope.

// The doc comments of the argument types are clap's help text, written for authors (Chinese,
// with paths like `characters/active/<slug>.json`), not rustdoc.
#![allow(rustdoc::invalid_html_tags)]

mod args;
mod cli;
mod commands;
mod installed;
mod output;
mod session;

use std::ffi::OsString;
use std::panic::AssertUnwindSafe;
use std::sync::Mutex;

use clap::error::{ContextKind, ContextValue, ErrorKind};
use clap::{CommandFactory, Parser};
use serde::Serialize;
use serde_json::json;

use args::{GlobalArgs, localize_help};
use cli::{Cli, Command};
use commands::context::ContextCommand;
use commands::hook::HookCommand;
use output::{CliError, Exit, Report, finish};

fn main() {
    // `args_os`: an argument that is not UTF-8 must become a usage error, not a panic.
    let args: Vec<OsString> = std::env::args_os().collect();
    std::process::exit(guarded(args));
}

/// Where and why the last panic happened, kept by the panic hook for [`guarded`].
static PANIC_SITE: Mutex<Option<String>> = Mutex::new(None);

/// Runs the command so that no panic reaches the author as a Rust backtrace: the default panic
/// message is replaced by a record of where it happened, and a caught panic becomes the JSON
/// error envelope (`E_INTERNAL`) or one Chinese line, exit 2. Files are never left half-written
/// by a panic (every write is a whole-file rename or goes through the commit journal), which the
/// message tells the author how to check.
fn guarded(args: Vec<OsString>) -> i32 {
    let text = lossy(&args);
    std::panic::set_hook(Box::new(|info| {
        let site = match info.location() {
            Some(l) => format!("{}:{}", l.file(), l.line()),
            None => "未知位置".to_string(),
        };
        if let Ok(mut slot) = PANIC_SITE.lock() {
            *slot = Some(site);
        }
    }));
    let payload = match std::panic::catch_unwind(AssertUnwindSafe(|| run(args))) {
        Ok(code) => return code,
        Err(payload) => payload,
    };
    let what = payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "未知原因".to_string());
    let site = PANIC_SITE
        .lock()
        .ok()
        .and_then(|mut slot| slot.take())
        .unwrap_or_else(|| "未知位置".to_string());
    let (command, _) = command_path(&text);
    if command.starts_with("hook ")
        || command == "context session-start"
        || command == "context subagent-start"
    {
        // A hook must never block the author's turn on a bug of ours: nothing for the model,
        // one line on stderr, exit 0 (exit 2 would deny the tool call or show an error).
        output::err(&format!(
            "novel {command}：内部错误（{what}，位于 {site}），已跳过\n"
        ));
        return Exit::Ok as i32;
    }
    let message =
        format!("novel 程序内部出错（{what}，位于 {site}），这是程序的缺陷，不是你的操作问题");
    let hint = "项目文件不会被写到一半：运行 novel validate 检查，提示有中断的提交时运行 novel chapter recover；请把这一行报告给插件维护者";
    if json_requested(&text) {
        output::out(&format!(
            "{}\n",
            json!({"ok": false, "command": command,
                "error": {"code": "E_INTERNAL", "message": message, "hint": hint}})
        ));
    } else {
        output::err(&format!("错误[E_INTERNAL]：{message}；{hint}\n"));
    }
    Exit::Usage as i32
}

/// Debug builds only: `NOVEL_FAILPOINT=panic:0` panics once the command line has parsed, inside
/// the command's dispatch, to test [`guarded`]. Release builds never read it.
fn injected_panic() {
    #[cfg(debug_assertions)]
    if std::env::var_os("NOVEL_FAILPOINT").is_some_and(|v| v == "panic:0") {
        panic!("NOVEL_FAILPOINT=panic:0");
    }
}

/// The arguments as text, for the frame's own reading (JSON mode, command name, messages).
fn lossy(args: &[OsString]) -> Vec<String> {
    args.iter()
        .map(|a| a.to_string_lossy().into_owned())
        .collect()
}

/// Whether `--json` is on, read the way clap reads it (`--json`, `--json=true|false|yes|no|1|0…`;
/// before `--`; the last one wins), for when the rest of the line does not parse. A value clap
/// would reject still asks for JSON.
fn json_requested(args: &[String]) -> bool {
    let mut on = false;
    for a in args.iter().skip(1).take_while(|a| *a != "--") {
        if a == "--json" {
            on = true;
        } else if let Some(value) = a.strip_prefix("--json=") {
            on = !matches!(
                value.to_ascii_lowercase().as_str(),
                "n" | "no" | "f" | "false" | "off" | "0"
            );
        }
    }
    on
}

/// The subcommand path as written (`chapter commit`), for the envelope, even when parsing
/// fails: follows the words that name subcommands, skipping the values of options. An unknown
/// first word is still named (it is what was asked for), but it is not `known`.
fn command_path(args: &[String]) -> (String, bool) {
    let mut cmd = Cli::command();
    cmd.build();
    let mut current = &cmd;
    let mut names: Vec<String> = Vec::new();
    let mut rest = args.iter().skip(1).take_while(|a| *a != "--");
    while let Some(a) = rest.next() {
        if let Some(long) = a.strip_prefix("--") {
            let takes_value = !long.contains('=')
                && current.get_arguments().any(|arg| {
                    arg.get_long() == Some(long)
                        && arg.get_action().takes_values()
                        && !arg.is_require_equals_set()
                });
            if takes_value {
                rest.next();
            }
        } else if a.starts_with('-') && a.len() > 1 {
            // Short flags (-h, -V) take no value.
        } else if let Some(sub) = current.find_subcommand(a) {
            names.push(sub.get_name().to_string());
            current = sub;
        } else if names.is_empty() {
            return (a.clone(), false);
        } else {
            break;
        }
    }
    (names.join(" "), true)
}

/// Parse-only mode (`NOVEL_PARSE_ONLY=1`, hidden): the command line is parsed with the real
/// argument definitions and nothing runs. A line that parses prints `ok` and exits 0; one that
/// does not fails exactly as it would otherwise (exit 2, the usual Chinese usage error; `--help`
/// still prints help). The plugin test uses it to check every `novel …` invocation written in the
/// skills and agents without touching any project.
fn parse_only() -> bool {
    std::env::var_os("NOVEL_PARSE_ONLY").is_some_and(|v| v == "1")
}

fn run(args: Vec<OsString>) -> i32 {
    if !parse_only()
        && let Some(code) = fixed_line(&args)
    {
        return code;
    }
    let cli = match Cli::try_parse_from(&args) {
        Ok(cli) => cli,
        // `--json` is honoured even when the rest of the line does not parse.
        Err(e) => return clap_failure(json_requested(&lossy(&args)), &args, e),
    };
    if parse_only() {
        output::out("ok\n");
        return 0;
    }
    injected_panic();
    if let Some(dir) = &cli.global.project
        && !matches!(cli.command, Some(Command::Hook(_)))
        && let Ok(p) = novel_store::Project::open(dir)
    {
        session::remember(&p.root);
    }
    // A writer that waits for another one says so on stderr (stdout stays the answer).
    novel_store::lock::set_wait_notice(output::err);
    let json_mode = cli.global.json;
    let Some(command) = cli.command else {
        let text = localize_help(&Cli::command().render_help().to_string());
        return finish(
            json_mode,
            "help",
            Report::new(&HelpText { text: &text }, &*text),
        );
    };
    match dispatch(&cli.global, command) {
        Ran::Envelope(name, result) => finish(json_mode, name, result),
        Ran::Hook(code) => code,
    }
}

/// The lines the client runs on every tool call and session start (exactly as
/// `hooks/hooks.json` writes them), and `--version` (the wrapper's version check), answered
/// before clap builds its parser of every command, which is a third of a guard hook's
/// instructions. Only these exact words: any other line, even one meaning the same (a global
/// option, `--json`), goes through clap, so the two readings cannot disagree.
fn fixed_line(args: &[OsString]) -> Option<i32> {
    let words: Vec<&str> = args
        .iter()
        .skip(1)
        .map(|a| a.to_str())
        .collect::<Option<_>>()?;
    if matches!(words.as_slice(), ["hook", _] | ["context", "session-start"]) {
        injected_panic();
    }
    match words.as_slice() {
        ["hook", "pre-tool-use"] => Some(commands::hook::run(HookCommand::PreToolUse)),
        ["hook", "post-tool-use"] => Some(commands::hook::run(HookCommand::PostToolUse)),
        ["context", "session-start"] => {
            let global = GlobalArgs {
                json: false,
                project: None,
                help: None,
                version: None,
            };
            let command = ContextCommand::SessionStart;
            let name = command.name();
            Some(finish(
                false,
                name,
                commands::context::run(&global, command),
            ))
        }
        ["--version"] | ["-V"] => Some(version(false)),
        _ => None,
    }
}

/// `novel --version`: `novel X.Y.Z`, or its envelope.
fn version(json_mode: bool) -> i32 {
    let version = env!("CARGO_PKG_VERSION");
    finish(
        json_mode,
        "version",
        Report::new(&Version { version }, format!("novel {version}\n")),
    )
}

/// `--json` data of the tool's help (no subcommand, `--help`).
#[derive(Serialize)]
struct HelpText<'a> {
    text: &'a str,
}

/// `--json` data of `--version`.
#[derive(Serialize)]
struct Version {
    version: &'static str,
}

/// A command run: its envelope name and result, or a hook's exit code (a hook answers in
/// Claude Code's own JSON, or not at all, never in the envelope).
enum Ran {
    Envelope(&'static str, Result<Report, CliError>),
    Hook(i32),
}

/// Runs the parsed subcommand.
fn dispatch(global: &GlobalArgs, command: Command) -> Ran {
    use commands::*;
    let (name, result) = match command {
        Command::Hook(c) => return Ran::Hook(hook::run(c)),
        Command::Init(a) => ("init", init::run(global, a)),
        Command::Validate(a) => ("validate", validate::run(global, a)),
        Command::Ops(c) => (ops::command_name(&c), ops::run(global, c)),
        Command::State(c) => (state::command_name(&c), state::run(global, c)),
        Command::Chapter(c) => (chapter::command_name(&c), chapter::run(global, c)),
        Command::Lock(c) => (lock::command_name(&c), lock::run(global, c)),
        Command::Lint(a) => ("lint", lint::run(global, a)),
        Command::Count(a) => ("count", count::run(global, a)),
        Command::Style(c) => (style::command_name(&c), style::run(global, c)),
        Command::Blacklist(c) => (blacklist::command_name(&c), blacklist::run(global, c)),
        Command::Check(c) => (check::command_name(&c), check::run(global, c)),
        Command::Spec(c) => (spec::command_name(&c), spec::run(global, c)),
        Command::Pending(c) => (pending::command_name(&c), pending::run(global, c)),
        Command::Revision(c) => (revision::command_name(&c), revision::run(global, c)),
        Command::Prefs(c) => (prefs::command_name(&c), prefs::run(global, c)),
        Command::Permissions(a) => ("permissions", permissions::run(global, a)),
        Command::Models(a) => ("models", models::run(global, a)),
        Command::Memory(c) => (memory::command_name(&c), memory::run(global, c)),
        Command::Retire(c) => (retire::command_name(&c), retire::run(global, c)),
        Command::Context(c) => (c.name(), context::run(global, c)),
        Command::Status => ("status", status::run(global)),
        Command::Dashboard(a) => ("dashboard", dashboard::run(global, a)),
        Command::Next => ("next", next::run(global)),
        Command::Quickstart(a) => (quickstart::command_name(&a), quickstart::run(global, a)),
        Command::Volume(c) => (volume::command_name(&c), volume::run(global, c)),
        Command::Review(c) => (review::command_name(&c), review::run(global, c)),
        Command::Export(a) => ("export", export::run(global, a)),
        Command::Import(a) => (import::command_name(&a), import::run(global, a)),
        Command::Demo(a) => ("demo", demo::run(global, &a)),
        Command::Help(a) => ("help", help::run(Cli::command(), &a.command)),
    };
    Ran::Envelope(name, result)
}

fn clap_failure(json_mode: bool, args: &[OsString], e: clap::Error) -> i32 {
    let (command, known) = command_path(&lossy(args));
    let command = command.as_str();
    match e.kind() {
        ErrorKind::DisplayHelp | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => {
            let text = localize_help(&e.render().to_string());
            finish(
                json_mode,
                if command.is_empty() { "help" } else { command },
                Report::new(&HelpText { text: &text }, &*text),
            )
        }
        ErrorKind::DisplayVersion => version(json_mode),
        _ => {
            let garbled: Vec<String> = args
                .iter()
                .skip(1)
                .filter(|a| a.to_str().is_none())
                .map(|a| a.to_string_lossy().into_owned())
                .collect();
            let mut message = usage_message(&e);
            if e.kind() == ErrorKind::InvalidUtf8 && !garbled.is_empty() {
                message = format!("参数 {} 不是有效的 UTF-8 文本", garbled.join("、"));
            } else if !garbled.is_empty() {
                message.push_str(&format!(
                    "（参数 {} 含有不是 UTF-8 的字节）",
                    garbled.join("、")
                ));
            }
            let hint = if command.is_empty() || !known {
                "运行 novel help 查看全部命令".to_string()
            } else {
                format!("运行 novel help {command} 查看用法")
            };
            finish(
                json_mode,
                command,
                Err(CliError::new("E_USAGE", message, hint, Exit::Usage)),
            )
        }
    }
}

/// The names of the hidden subcommands, at any level.
fn hidden_commands() -> Vec<String> {
    fn walk(cmd: &clap::Command, out: &mut Vec<String>) {
        for sub in cmd.get_subcommands() {
            if sub.is_hide_set() {
                out.push(sub.get_name().to_string());
            }
            walk(sub, out);
        }
    }
    let mut out = Vec::new();
    walk(&Cli::command(), &mut out);
    out
}

/// A value of a clap error's context as text (a list joined with 「、」).
fn context_of(e: &clap::Error, kind: ContextKind) -> Option<String> {
    match e.get(kind) {
        Some(ContextValue::String(s)) => Some(s.clone()),
        Some(ContextValue::Strings(v)) if !v.is_empty() => Some(v.join("、")),
        Some(ContextValue::Number(n)) => Some(n.to_string()),
        Some(ContextValue::StyledStr(s)) => Some(s.to_string()),
        _ => None,
    }
}

/// 「（是不是想用 …？）」 for the command, argument or value clap suggests — never a hidden
/// command (the hooks' `hook` is for the client, not a person); empty without a suggestion.
fn suggestion_of(e: &clap::Error) -> String {
    let shown_subcommand = match e.get(ContextKind::SuggestedSubcommand) {
        Some(ContextValue::String(s)) if !hidden_commands().contains(s) => Some(s.clone()),
        Some(ContextValue::Strings(v)) => {
            let hidden = hidden_commands();
            let shown: Vec<String> = v.iter().filter(|s| !hidden.contains(*s)).cloned().collect();
            (!shown.is_empty()).then(|| shown.join("、"))
        }
        _ => None,
    };
    shown_subcommand
        .or_else(|| context_of(e, ContextKind::SuggestedArg))
        .or_else(|| context_of(e, ContextKind::SuggestedValue))
        .map(|s| format!("（是不是想用 {s}？）"))
        .unwrap_or_default()
}

/// A clap parse error in Chinese, naming the argument(s) and value(s) from the error's context
/// (clap's own text is English).
fn usage_message(e: &clap::Error) -> String {
    let context = |kind| context_of(e, kind);
    let arg = context(ContextKind::InvalidArg).unwrap_or_default();
    let value = context(ContextKind::InvalidValue).unwrap_or_default();
    let suggestion = suggestion_of(e);
    let first_line = || {
        let text = e.render().to_string();
        text.lines()
            .next()
            .unwrap_or("")
            .trim_start_matches("error: ")
            .to_string()
    };
    match e.kind() {
        ErrorKind::InvalidSubcommand => format!(
            "没有这个命令：{}{suggestion}",
            context(ContextKind::InvalidSubcommand).unwrap_or_default()
        ),
        ErrorKind::UnknownArgument => format!("不认识的参数：{arg}{suggestion}"),
        ErrorKind::InvalidValue | ErrorKind::NoEquals if value.is_empty() => {
            format!("参数 {arg} 缺少取值")
        }
        ErrorKind::NoEquals => format!("参数 {arg} 的取值要用 = 连接"),
        ErrorKind::InvalidValue => {
            let valid = context(ContextKind::ValidValue)
                .map(|v| format!("，可选：{v}"))
                .unwrap_or_default();
            format!("参数 {arg} 的取值「{value}」不在允许范围内{valid}{suggestion}")
        }
        ErrorKind::ValueValidation => {
            let cause = std::error::Error::source(e)
                .map(|c| cause_zh(&c.to_string()))
                .unwrap_or_default();
            format!("参数 {arg} 的取值「{value}」不合法{cause}")
        }
        ErrorKind::TooManyValues => format!("参数 {arg} 多给了取值「{value}」"),
        ErrorKind::TooFewValues => format!(
            "参数 {arg} 至少需要 {} 个取值，只给了 {} 个",
            context(ContextKind::MinValues).unwrap_or_default(),
            context(ContextKind::ActualNumValues).unwrap_or_default()
        ),
        ErrorKind::WrongNumberOfValues => format!(
            "参数 {arg} 需要 {} 个取值，给了 {} 个",
            context(ContextKind::ExpectedNumValues).unwrap_or_default(),
            context(ContextKind::ActualNumValues).unwrap_or_default()
        ),
        ErrorKind::ArgumentConflict => match context(ContextKind::PriorArg) {
            Some(prior) if prior != arg => format!("参数 {arg} 不能与 {prior} 同时使用"),
            _ => format!("参数 {arg} 只能写一次"),
        },
        ErrorKind::MissingRequiredArgument => format!("缺少必需的参数：{arg}"),
        ErrorKind::MissingSubcommand => {
            let valid = context(ContextKind::ValidSubcommand)
                .map(|v| format!("，可选：{v}"))
                .unwrap_or_default();
            format!(
                "{} 需要一个子命令{valid}",
                context(ContextKind::InvalidSubcommand).unwrap_or_default()
            )
        }
        ErrorKind::InvalidUtf8 => "参数不是有效的 UTF-8 文本".to_string(),
        _ => format!("命令行参数有误：{}", first_line()),
    }
}

/// Why a value did not parse, in Chinese (the standard parsers say it in English).
fn cause_zh(cause: &str) -> String {
    let zh = if cause.contains("invalid digit") {
        "应为非负整数"
    } else if cause.contains("too large") {
        "数值太大"
    } else if cause.contains("too small") {
        "数值太小"
    } else if cause.contains("empty string") {
        "不能为空"
    } else if cause.contains("invalid float") {
        "应为数字"
    } else if cause.contains("not a boolean") {
        "应为 true 或 false"
    } else if let Some((_, range)) = cause.split_once(" is not in ") {
        return format!("：超出允许范围 {range}");
    } else {
        return format!("：{cause}");
    };
    format!("：{zh}")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every command path of the tree, hidden ones included (`[]` = the tool itself).
    fn paths(cmd: &clap::Command, prefix: Vec<String>, out: &mut Vec<Vec<String>>) {
        out.push(prefix.clone());
        for sub in cmd.get_subcommands() {
            let mut p = prefix.clone();
            p.push(sub.get_name().to_string());
            paths(sub, p, out);
        }
    }

    #[test]
    fn every_help_screen_is_chinese_both_ways() {
        let mut all = Vec::new();
        paths(&Cli::command(), Vec::new(), &mut all);
        assert!(all.len() > 40, "{} commands", all.len());
        assert!(all.contains(&vec!["context".to_string(), "synth".to_string()]));
        for path in all {
            // `novel help X …`
            let via_help = commands::help::run(Cli::command(), &path).unwrap().human;
            // `novel X … --help`
            let mut argv = vec!["novel".to_string()];
            argv.extend(path.iter().cloned());
            argv.push("--help".into());
            let err = Cli::try_parse_from(&argv).unwrap_err();
            assert_eq!(err.kind(), ErrorKind::DisplayHelp, "{argv:?}");
            let via_flag = localize_help(&err.render().to_string());
            assert_eq!(via_help, via_flag, "{argv:?}");
            assert!(via_help.contains("用法："), "{path:?}:\n{via_help}");
            for english in [
                "Usage:",
                "Options:",
                "Arguments:",
                "Commands:",
                "[default:",
                "[possible values:",
                "[aliases:",
                "[env:",
                "Print help",
                "Print version",
            ] {
                assert!(
                    !via_help.contains(english),
                    "{path:?} help has {english:?}:\n{via_help}"
                );
            }
        }
    }

    #[test]
    fn json_is_read_the_way_clap_reads_it() {
        let args = |s: &str| -> Vec<String> {
            std::iter::once("novel")
                .chain(s.split_whitespace())
                .map(str::to_string)
                .collect()
        };
        for (line, want) in [
            ("--json status", true),
            ("--json=true status", true),
            ("--json=yes status", true),
            ("status --json=1", true),
            ("--json=false status", false),
            ("--json=no status", false),
            ("--json --json=off status", false),
            ("--json=maybe status", true),
            ("status -- --json", false),
            ("status", false),
        ] {
            assert_eq!(json_requested(&args(line)), want, "{line}");
            // Where the line parses, clap agrees.
            if let Ok(cli) = Cli::try_parse_from(args(line)) {
                assert_eq!(cli.global.json, want, "{line}");
            }
        }
    }

    #[test]
    fn command_path_names_nested_subcommands() {
        let path = |s: &str| {
            let a: Vec<String> = std::iter::once("novel")
                .chain(s.split_whitespace())
                .map(str::to_string)
                .collect();
            command_path(&a)
        };
        assert_eq!(
            path("--json chapter commit 1"),
            ("chapter commit".into(), true)
        );
        assert_eq!(
            path("--project /p --json=true lock release --token"),
            ("lock release".into(), true)
        );
        assert_eq!(path("chapter frob"), ("chapter".into(), true));
        assert_eq!(path("--json frob"), ("frob".into(), false));
        assert_eq!(path("--json"), (String::new(), true));
    }
}
