//! `novel help [COMMAND]`: the Chinese help of the whole tool or of one subcommand.

use clap::CommandFactory;
use serde::Serialize;

use crate::cli::{Cli, localize_help};
use crate::output::{CliError, Exit, Report};

/// `novel help`'s `--json` data.
#[derive(Serialize)]
struct HelpData<'a> {
    command: String,
    text: &'a str,
}

pub fn run(path: &[String]) -> Result<Report, CliError> {
    let mut cmd = Cli::command();
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
