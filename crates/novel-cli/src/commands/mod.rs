//! One subcommand = one module. Each `run` takes parsed arguments and returns a report or an
//! error; printing and exit codes are `output`'s job.

pub mod blacklist;
pub mod chapter;
pub mod check;
pub mod context;
pub mod count;
pub mod demo;
pub mod help;
pub mod hook;
pub mod init;
pub mod lint;
pub mod lock;
pub mod memory;
pub mod next;
pub mod ops;
pub mod pending;
pub mod prefs;
pub mod quickstart;
pub mod retire;
pub mod review;
pub mod revision;
pub mod spec;
pub mod state;
pub mod status;
pub mod style;
pub mod validate;
pub mod volume;

use std::path::Path;

use novel_store::Project;

use crate::cli::GlobalArgs;
use crate::output::CliError;

/// The project of this invocation: `--project DIR`, or found from the working directory.
pub fn project(global: &GlobalArgs) -> Result<Project, CliError> {
    let found = match &global.project {
        Some(dir) => Project::open(dir),
        None => {
            Project::discover(&std::env::current_dir().unwrap_or_else(|_| Path::new(".").into()))
        }
    };
    Ok(found?)
}
