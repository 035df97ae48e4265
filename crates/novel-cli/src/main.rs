//! `novel` — the deterministic helper of the novel plugin. This crate only parses arguments,
//! wires `novel-store` and `novel-core` together and renders the result (Chinese text or one
//! JSON envelope). See DESIGN.md for the exit codes and the envelope.

mod cli;
mod commands;
mod output;

use clap::error::{ContextKind, ContextValue, ErrorKind};
use clap::{CommandFactory, Parser};
use serde_json::json;

use cli::{Cli, Command, localize_help};
use output::{CliError, Exit, Report, finish};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    std::process::exit(run(args));
}

/// The subcommand name as written (for the envelope), even when parsing fails.
fn command_name(args: &[String]) -> String {
    let mut skip_value = false;
    for a in args.iter().skip(1) {
        if skip_value {
            skip_value = false;
            continue;
        }
        if a == "--project" {
            skip_value = true;
            continue;
        }
        if !a.starts_with('-') {
            return a.clone();
        }
    }
    String::new()
}

fn run(args: Vec<String>) -> i32 {
    // `--json` is honoured even when the rest of the line does not parse.
    let json_mode = args
        .iter()
        .skip(1)
        .take_while(|a| *a != "--")
        .any(|a| a == "--json");
    let cli = match Cli::try_parse_from(&args) {
        Ok(cli) => cli,
        Err(e) => return clap_failure(json_mode, &command_name(&args), e),
    };
    let Some(command) = cli.command else {
        let text = localize_help(&Cli::command().render_help().to_string());
        return finish(
            json_mode,
            "help",
            Ok(Report {
                data: json!({"text": text}),
                human: text,
            }),
        );
    };
    let global = &cli.global;
    match command {
        Command::Init(a) => finish(json_mode, "init", commands::init::run(global, a)),
        Command::Validate(a) => finish(json_mode, "validate", commands::validate::run(global, a)),
        Command::Ops(c) => {
            let name = match &c {
                cli::OpsCommand::Validate(_) => "ops validate",
                cli::OpsCommand::Apply(_) => "ops apply",
                cli::OpsCommand::Skip(_) => "ops skip",
            };
            finish(json_mode, name, commands::ops::run(global, c))
        }
        Command::State(c) => {
            let name = match &c {
                cli::StateCommand::Rebuild(_) => "state rebuild",
                cli::StateCommand::At(_) => "state at",
                cli::StateCommand::History(_) => "state history",
            };
            finish(json_mode, name, commands::state::run(global, c))
        }
        Command::Chapter(c) => {
            let name = match &c {
                cli::ChapterCommand::Begin(_) => "chapter begin",
                cli::ChapterCommand::Stage(_) => "chapter stage",
                cli::ChapterCommand::Gate(_) => "chapter gate",
                cli::ChapterCommand::Commit(_) => "chapter commit",
                cli::ChapterCommand::Recover => "chapter recover",
            };
            finish(json_mode, name, commands::chapter::run(global, c))
        }
        Command::Lock(c) => {
            let name = match &c {
                cli::LockCommand::Status => "lock status",
                cli::LockCommand::Acquire(_) => "lock acquire",
                cli::LockCommand::Release(_) => "lock release",
                cli::LockCommand::Clear => "lock clear",
            };
            finish(json_mode, name, commands::lock::run(global, c))
        }
        Command::Lint(a) => finish(json_mode, "lint", commands::lint::run(global, a)),
        Command::Count(a) => finish(json_mode, "count", commands::count::run(global, a)),
        Command::Style(c) => {
            let name = commands::style::command_name(&c);
            finish(json_mode, name, commands::style::run(global, c))
        }
        Command::Blacklist(c) => {
            let name = commands::blacklist::command_name(&c);
            finish(json_mode, name, commands::blacklist::run(global, c))
        }
        Command::Check(c) => {
            let name = commands::check::command_name(&c);
            finish(json_mode, name, commands::check::run(global, c))
        }
        Command::Spec(c) => {
            let name = commands::spec::command_name(&c);
            finish(json_mode, name, commands::spec::run(global, c))
        }
        Command::Pending(c) => {
            let name = commands::pending::command_name(&c);
            finish(json_mode, name, commands::pending::run(global, c))
        }
        Command::Retire(c) => {
            let name = commands::retire::command_name(&c);
            finish(json_mode, name, commands::retire::run(global, c))
        }
        Command::Context(c) => {
            let name = c.name();
            finish(json_mode, name, commands::context::run(global, c))
        }
        Command::Status => finish(json_mode, "status", commands::status::run(global)),
        Command::Next => finish(json_mode, "next", commands::next::run(global)),
        Command::Help(a) => finish(json_mode, "help", commands::help::run(&a.command)),
    }
}

fn clap_failure(json_mode: bool, command: &str, e: clap::Error) -> i32 {
    match e.kind() {
        ErrorKind::DisplayHelp | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => {
            let text = localize_help(&e.render().to_string());
            finish(
                json_mode,
                if command.is_empty() { "help" } else { command },
                Ok(Report {
                    data: json!({"text": text}),
                    human: text,
                }),
            )
        }
        ErrorKind::DisplayVersion => {
            let version = env!("CARGO_PKG_VERSION");
            finish(
                json_mode,
                "version",
                Ok(Report {
                    data: json!({"version": version}),
                    human: format!("novel {version}\n"),
                }),
            )
        }
        _ => {
            let detail = e.render().to_string();
            let first = detail
                .lines()
                .next()
                .unwrap_or("")
                .trim_start_matches("error: ")
                .to_string();
            let context = |kind| match e.get(kind) {
                Some(ContextValue::String(s)) => Some(s.clone()),
                Some(ContextValue::Strings(v)) => Some(v.join("、")),
                _ => None,
            };
            let message = match e.kind() {
                ErrorKind::InvalidSubcommand => format!(
                    "没有这个命令：{}",
                    context(ContextKind::InvalidSubcommand).unwrap_or(first)
                ),
                ErrorKind::UnknownArgument => format!(
                    "不认识的参数：{}",
                    context(ContextKind::InvalidArg).unwrap_or(first)
                ),
                ErrorKind::NoEquals | ErrorKind::InvalidValue
                    if context(ContextKind::InvalidValue).is_some_and(|v| v.is_empty()) =>
                {
                    format!(
                        "参数 {} 缺少取值",
                        context(ContextKind::InvalidArg).unwrap_or(first)
                    )
                }
                ErrorKind::MissingRequiredArgument => format!("缺少必需的参数：{first}"),
                ErrorKind::InvalidValue | ErrorKind::ValueValidation => {
                    format!("参数值不合法：{first}")
                }
                _ => format!("命令行参数有误：{first}"),
            };
            let hint = if command.is_empty() || e.kind() == ErrorKind::InvalidSubcommand {
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
