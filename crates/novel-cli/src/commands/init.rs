//! `novel init [DIR] --title --genre`.

use serde::Serialize;

use novel_store::init::{InitOptions, init_project};

use crate::args::{GlobalArgs, InitArgs};
use crate::output::{CliError, Report};

/// `novel init`'s `--json` data.
#[derive(Serialize)]
struct InitData<'a> {
    root: &'a str,
    files: &'a [String],
    dirs: &'a [String],
    orchestrator_state: novel_core::model::OrchestratorState,
}

pub fn run(global: &GlobalArgs, args: InitArgs) -> Result<Report, CliError> {
    let dir = args
        .dir
        .or_else(|| global.project.clone())
        .unwrap_or_else(|| ".".into());
    let report = init_project(
        &dir,
        &InitOptions {
            title: args.title,
            genre: args.genre,
            style: args.style,
        },
    )?;
    let root = report.root.display().to_string();
    let human = format!(
        "已创建小说项目：{root}\n\
         共 {} 个文件、{} 个目录；当前状态 {}，第 1 卷。\n\
         下一步：在 Claude Code 中运行 /novel:start，按引导完成设定、角色与风格样本。\n",
        report.files.len(),
        report.dirs.len(),
        novel_core::context::session::state_name(report.orchestrator_state)
    );
    let data = InitData {
        root: &root,
        files: &report.files,
        dirs: &report.dirs,
        orchestrator_state: report.orchestrator_state,
    };
    Report::new(&data, human)
}
