//! `novel help [COMMAND]`: the Chinese help of the whole tool or of one subcommand.

use serde::Serialize;

use crate::args::localize_help;
use crate::output::{CliError, Exit, Report};

/// `novel help`'s `--json` data.
#[derive(Serialize)]
struct HelpData<'a> {
    command: String,
    text: &'a str,
}

/// The help of `path` in the command tree `cmd` (`Cli::command()`, which the caller builds: the
/// tree names every command's arguments, so it sits above the commands).
pub fn run(mut cmd: clap::Command, path: &[String]) -> Result<Report, CliError> {
    cmd.build();
    let mut current = cmd;
    for name in path {
        match current.find_subcommand(name) {
            Some(sub) => current = sub.clone(),
            None => {
                return Err(CliError::new(
                    "E_USAGE",
                    format!("没有这个命令：{name}"),
                    "运行 novel help 查看全部命令",
                    Exit::Usage,
                ));
            }
        }
    }
    let text = localize_help(&current.render_help().to_string());
    let data = HelpData {
        command: path.join(" "),
        text: &text,
    };
    Report::new(&data, text.as_str())
}
