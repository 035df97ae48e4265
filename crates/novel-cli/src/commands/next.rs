//! `novel next`: the recommended next step — the same decision the SessionStart hook
//! announces ([`novel_core::next::recommend`]), for skills to obey between steps.

use serde_json::json;

use novel_store::context::session_facts;

use crate::cli::GlobalArgs;
use crate::output::{CliError, Exit, Report};

pub fn run(global: &GlobalArgs) -> Result<Report, CliError> {
    let project = super::project(global)?;
    let facts = session_facts(&project, None);
    let Some(cp) = facts.checkpoint.as_ref() else {
        return Err(CliError::new(
            "E_CHECKPOINT",
            format!(
                ".checkpoint.json 无法读取：{}",
                facts.checkpoint_problem.as_deref().unwrap_or("未知原因")
            ),
            "运行 novel validate 查看问题；断点文件损坏时按提示修复后再继续",
            Exit::Usage,
        ));
    };
    let r = novel_core::next::recommend(cp, &facts.disk);
    let mut human = format!(
        "下一步：{}\n原因：{}\n之后：{}\n",
        r.command, r.reason, r.then
    );
    for n in &r.notes {
        human.push_str(&format!("注意：{n}\n"));
    }
    for p in &facts.problems {
        human.push_str(&format!("文件问题：{p}\n"));
    }
    Ok(Report {
        data: json!({
            "recommendation": r,
            "skipped_deltas": facts.disk.skipped_deltas,
            "recommend_rebuild":
                facts.disk.skipped_deltas.len() >= novel_core::ops::SKIPPED_REBUILD_THRESHOLD,
            "problems": facts.problems,
        }),
        human,
    })
}
