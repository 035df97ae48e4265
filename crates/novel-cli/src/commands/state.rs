//! `novel state rebuild|at|history`: the state as the changelog says it is.

use serde::Serialize;
use serde_json::{Map, Value};

use novel_core::ops::{self, Difference, NameIndex, entity_history, find_entity};
use novel_store::rebuild::{Replay, UnusableGlobal};
use novel_store::{Project, layout};

use crate::args::{GlobalArgs, RebuildArgs, StateCommand};
use crate::output::{CliError, Exit, Report};

use super::{ops_error, with_state_lock};

/// `novel state at`'s `--json` data: the whole state after `chapter`.
#[derive(Serialize)]
struct StateAt<'a, S> {
    chapter: u32,
    state: &'a S,
}

/// `novel state at --entity`'s `--json` data: the entity under each root it appears in.
#[derive(Serialize)]
struct EntityAt<'a> {
    chapter: u32,
    entity: &'a str,
    state: Map<String, Value>,
}

/// `novel state history`'s `--json` data.
#[derive(Serialize)]
struct EntityHistory<'a, C> {
    entity: &'a str,
    query: &'a str,
    changes: &'a [C],
}

/// The envelope name of a `state` subcommand.
pub fn command_name(cmd: &StateCommand) -> &'static str {
    match cmd {
        StateCommand::Rebuild(_) => "state rebuild",
        StateCommand::At(_) => "state at",
        StateCommand::History(_) => "state history",
    }
}

pub fn run(global: &GlobalArgs, cmd: StateCommand) -> Result<Report, CliError> {
    let project = super::project(global)?;
    match cmd {
        StateCommand::Rebuild(a) if a.write => {
            with_state_lock(&project, |held| rebuild(&project, &a, Some(held)))
        }
        StateCommand::Rebuild(a) => rebuild(&project, &a, None),
        StateCommand::At(a) => at(&project, a.chapter, a.entity.as_deref()),
        StateCommand::History(a) => history(&project, &a.entity),
    }
}

/// `held` is the project lock when `--write` (the journal of the write releases it).
fn rebuild(
    project: &Project,
    args: &RebuildArgs,
    held: Option<&mut novel_store::lock::Held<'_>>,
) -> Result<Report, CliError> {
    let r =
        novel_store::rebuild::rebuild(project, args.until_chapter, held).map_err(|e| match e {
            novel_store::rebuild::RebuildError::Store(s) => CliError::from(s),
            novel_store::rebuild::RebuildError::Ops(o) => ops_error(o),
            e @ novel_store::rebuild::RebuildError::ChangelogLost { .. } => CliError::new(
                "E_CHANGELOG_LOST",
                e.to_string(),
                "从 state/backups/ 或版本库找回 state/changelog.jsonl（以及 state/ 下的其他文件）再重建；找不回时不要用 --write，把状态文件从备份放回。确认这本书确实还没有记录过任何一章（状态文件是被改错的）时，先把状态文件移走再重建",
                crate::output::Exit::Usage,
            ),
        })?;
    let human = render_rebuild(&r, args.write);
    if r.differs() && !args.write {
        let what = match &r.state_file_problem {
            Some(p) => format!("current-state 无法使用（{p}）"),
            None => format!("current-state {} 处", r.state_differences.len()),
        };
        return Err(CliError::new(
            "E_STATE_DIFFERS",
            format!(
                "重建结果与磁盘不同：{what}，伏笔 {} 处{}",
                r.foreshadowing_differences.len(),
                if r.truncate {
                    "，且变更日志需要截断"
                } else {
                    ""
                }
            ),
            "",
            Exit::Problems,
        )
        .with_report(&r, human));
    }
    Report::new(&r, human)
}

fn render_rebuild(r: &novel_store::rebuild::RebuildReport, write: bool) -> String {
    let mut human = match r.until_chapter {
        Some(n) => format!(
            "回放变更日志到第 {n} 章（前 {} / {} 行）：state_version {}。\n",
            r.entries_replayed, r.entries_total, r.state_version
        ),
        None => format!(
            "回放变更日志 {} 行：state_version {}。\n",
            r.entries_total, r.state_version
        ),
    };
    let files = [
        (
            layout::CURRENT_STATE,
            &r.state_file_problem,
            &r.state_differences,
        ),
        (
            layout::FORESHADOWING_GLOBAL,
            &r.foreshadowing_file_problem,
            &r.foreshadowing_differences,
        ),
    ];
    for (file, problem, _) in files {
        if let Some(p) = problem {
            human.push_str(&format!(
                "  {file}: {p}——整份文件视为差异，--write 会写入重建结果（原文件先备份）\n"
            ));
        }
    }
    for (file, problem, d) in files {
        if problem.is_none() {
            human.push_str(&render_differences(file, d));
        }
    }
    if !r.dropped_threads.is_empty() {
        human.push_str(&format!(
            "  伏笔 {} 在第 {} 章之后才由变更日志创建，重建结果里没有它们：它们在 {} 中手写的字段（描述、额外的键）不会保留，之后重新应用相关章节时只从卷伏笔计划补全{}\n",
            r.dropped_threads.join("、"),
            r.until_chapter.unwrap_or(0),
            layout::FORESHADOWING_GLOBAL,
            if write {
                "（原文件见下面的备份）"
            } else {
                "（--write 时原文件会先备份）"
            }
        ));
    }
    if r.written {
        human.push_str(&if r.backups.is_empty() {
            "已写入重建结果。\n".to_string()
        } else {
            format!("已写入重建结果；原文件备份在：{}\n", r.backups.join("、"))
        });
    } else if !r.differs() {
        human.push_str("磁盘上的状态与变更日志一致。\n");
    }
    human
}

/// Up to 50 differences of one file, one line each.
fn render_differences(file: &str, d: &[Difference]) -> String {
    let mut out = String::new();
    for x in d.iter().take(50) {
        out.push_str(&format!(
            "  {file}: {}: 重建为 {}，磁盘上为 {}\n",
            if x.pointer.is_empty() {
                "/"
            } else {
                &x.pointer
            },
            x.expected
                .as_ref()
                .map_or("（无）".into(), Value::to_string),
            x.actual.as_ref().map_or("（无）".into(), Value::to_string)
        ));
    }
    if d.len() > 50 {
        out.push_str(&format!("  {file}: 另有 {} 处差异\n", d.len() - 50));
    }
    out
}

/// What the author typed as a known slug ([`ops::resolve_entity`]); an unknown one is a finding
/// (exit 1) that names the closest known ids.
fn resolve_entity(query: &str, known: &[String], names: &NameIndex) -> Result<String, CliError> {
    ops::resolve_entity(query, known, names).map_err(|close| {
        let hint = if close.is_empty() {
            "用实体的 slug（如 lu-chen）或角色的显示名、别名；novel state at --chapter N 可列出状态里的全部实体".to_string()
        } else {
            format!(
                "是不是：{}？用实体的 slug，或角色的显示名、别名",
                close.join("、")
            )
        };
        CliError::new(
            "E_NO_ENTITY",
            format!("项目里没有「{query}」这个实体（角色、物品、地点、势力或伏笔）"),
            hint,
            Exit::Problems,
        )
    })
}

fn at(project: &Project, chapter: u32, entity: Option<&str>) -> Result<Report, CliError> {
    // Looking back repairs nothing: an unusable foreshadowing file is an error here.
    let replay = Replay::load(project, UnusableGlobal::Refuse)?;
    let replayed = replay.run(Some(chapter)).map_err(ops_error)?;
    let Some(query) = entity else {
        let text = novel_store::state::render(&replayed.state);
        let data = StateAt {
            chapter,
            state: &replayed.state,
        };
        return Report::new(&data, format!("第 {chapter} 章完成后的状态：\n{text}"));
    };
    let slug = resolve_entity(query, &replay.known_entities(), &replay.names)?;
    let found = find_entity(&replayed.state, &slug);
    if found.is_empty() {
        return Err(CliError::new(
            "E_NO_ENTITY",
            format!("第 {chapter} 章完成时，状态里没有「{slug}」"),
            format!("novel state history --entity {slug} 可看它何时出现"),
            Exit::Problems,
        ));
    }
    let mut human = format!("第 {chapter} 章完成时的「{slug}」：\n");
    let mut state = Map::new();
    for (root, v) in found {
        human.push_str(&format!("[{root}]\n{}", novel_store::state::render(v)));
        state.insert(root.to_string(), v.clone());
    }
    let data = EntityAt {
        chapter,
        entity: &slug,
        state,
    };
    Report::new(&data, human)
}

fn history(project: &Project, query: &str) -> Result<Report, CliError> {
    // The ids are only recognised: an unusable foreshadowing file just makes fewer known.
    let replay = Replay::load(project, UnusableGlobal::Repair)?;
    let slug = resolve_entity(query, &replay.known_entities(), &replay.names)?;
    let changes = entity_history(&replay.log, &slug);
    let shown = if slug == query {
        slug.clone()
    } else {
        format!("{slug}（{query}）")
    };
    let mut human = format!("「{shown}」的变更记录（{} 条）：\n", changes.len());
    let mut last = None;
    for c in &changes {
        if last != Some(c.chapter) {
            human.push_str(&format!(
                "第 {} 章（state_version {}）\n",
                c.chapter, c.state_version
            ));
            last = Some(c.chapter);
        }
        let op = serde_json::to_value(c.op.op).unwrap_or_default();
        let detail =
            c.op.detail
                .as_deref()
                .map(|d| format!(" —— {d}"))
                .unwrap_or_default();
        human.push_str(&format!(
            "  {} {} {}{detail}\n",
            op.as_str().unwrap_or(""),
            c.op.path,
            c.op.value
        ));
    }
    let data = EntityHistory {
        entity: &slug,
        query,
        changes: &changes,
    };
    Report::new(&data, human)
}
