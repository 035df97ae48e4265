//! `novel spec snapshot|propagate`: the deterministic half of the 更新设定 flow (seed `000`
//! steps 2 and 4–5). The snapshot is taken before the WorldBuilder / CharacterWeaver update,
//! the propagation after it.

use clap::{Args, Subcommand};
use serde::Serialize;

use novel_core::spec::propagate::{Hit, Propagation};
use novel_store::spec::{PropagateOutcome, propagate_project, take_snapshot};
use novel_store::time;
use novel_text::keyphrase;

use super::spec_error;
use crate::args::GlobalArgs;
use crate::output::{CliError, Report};

/// The help layout of `cli.rs` (kept in step with it).
use crate::args::HELP_TEMPLATE;

#[derive(Debug, Subcommand)]
pub enum SpecCommand {
    /// 更新设定前拍快照：world/rules.json、world/*.md 摘要、全部在场角色档案与契约（同一时间只有一份）
    #[command(help_template = HELP_TEMPLATE, next_help_heading = "选项")]
    Snapshot(SpecSnapshotArgs),
    /// 更新设定后做差异分析：变更的规则与角色、受影响的 L2 角色契约与 L3 章节契约，写入一条 spec_propagation 待处理事项
    #[command(help_template = HELP_TEMPLATE, next_help_heading = "选项")]
    Propagate,
}

#[derive(Debug, Args)]
pub struct SpecSnapshotArgs {
    /// 丢弃尚未处理的旧快照，重新拍一份
    #[arg(long)]
    pub replace: bool,
}

/// The envelope name of a `spec` subcommand.
pub fn command_name(cmd: &SpecCommand) -> &'static str {
    match cmd {
        SpecCommand::Snapshot(_) => "spec snapshot",
        SpecCommand::Propagate => "spec propagate",
    }
}

/// `novel spec snapshot`'s `--json` data: what the snapshot holds.
#[derive(Serialize)]
struct SnapshotData<'a> {
    snapshot_id: &'a str,
    created_at: &'a str,
    path: &'static str,
    world_rules: bool,
    world_docs: Vec<&'a str>,
    characters: Vec<&'a str>,
}

pub fn run(global: &GlobalArgs, cmd: SpecCommand) -> Result<Report, CliError> {
    let project = super::project(global)?;
    let now = time::now_iso();
    match cmd {
        SpecCommand::Snapshot(a) => {
            let s = take_snapshot(&project, &now, a.replace).map_err(spec_error)?;
            let human = format!(
                "已拍设定快照 {}：world/rules.json{}，{} 个世界观文档，{} 个角色档案。\n下一步：让世界观设定师、角色设定师完成更新，然后运行 novel spec propagate。\n",
                s.id,
                if s.world_rules.is_some() {
                    ""
                } else {
                    "（尚不存在）"
                },
                s.world_docs.len(),
                s.characters.len()
            );
            let data = SnapshotData {
                snapshot_id: &s.id,
                created_at: &s.created_at,
                path: novel_store::spec::SNAPSHOT,
                world_rules: s.world_rules.is_some(),
                world_docs: s.world_docs.iter().map(|d| d.path.as_str()).collect(),
                characters: s.characters.iter().map(|c| c.path.as_str()).collect(),
            };
            Report::new(&data, human)
        }
        SpecCommand::Propagate => {
            let stale = super::stale_after(&project)?;
            // jieba loads its dictionary on the first sentence it segments: only here.
            let out = propagate_project(&project, &now, stale, &keyphrase::extract_texts)
                .map_err(spec_error)?;
            if !global.json {
                for w in &out.propagation.warnings {
                    crate::output::err(&format!("提示：{w}\n"));
                }
            }
            Report::new(&out, render(&out))
        }
    }
}

fn hit_line(h: &Hit) -> String {
    let via = match (&h.rule_id, &h.character) {
        (Some(r), _) => format!("（{r}）"),
        (None, Some(c)) => format!("（{c}）"),
        _ => String::new(),
    };
    format!(
        "{}{via}「{}」 {}: {}",
        h.reason.label(),
        h.evidence.matched,
        h.evidence.file,
        h.evidence.pointer
    )
}

fn render(out: &PropagateOutcome) -> String {
    let p: &Propagation = &out.propagation;
    let mut s = String::new();
    if p.is_empty() {
        push_unchanged(&mut s, out);
        return s;
    }
    s.push_str("设定变更传播摘要\n");
    push_changes(&mut s, p);
    push_affected(&mut s, p);
    push_follow_up(&mut s, out);
    s
}

/// Nothing to propagate; changed world documents are only pointed out.
fn push_unchanged(s: &mut String, out: &PropagateOutcome) {
    s.push_str("设定快照之后，世界规则与角色契约都没有变化，无需传播。\n");
    if !out.world_docs_changed.is_empty() {
        s.push_str(&format!(
            "世界观文档有改动（{}）：若其中的规则应进入 world/rules.json，请让世界观设定师抽取。\n",
            out.world_docs_changed.join("、")
        ));
    }
}

/// The rule changes with their key phrases, and the character changes.
fn push_changes(s: &mut String, p: &Propagation) {
    for r in &p.rule_changes {
        s.push_str(&format!("  {} {}", r.kind.label(), r.id));
        if !r.fields.is_empty() {
            s.push_str(&format!("（{}）", r.fields.join("、")));
        }
        s.push('\n');
        if let Some(d) = &r.text_diff {
            s.push_str(&format!("      {d}\n"));
        } else if let Some(t) = r.after.as_ref().or(r.before.as_ref()) {
            s.push_str(&format!("      {t}\n"));
        }
    }
    for kp in &p.key_phrases {
        if kp.phrases.is_empty() {
            s.push_str(&format!("  {} 关键短语：（未抽出，见提示）\n", kp.rule_id));
        } else {
            s.push_str(&format!(
                "  {} 关键短语：{}\n",
                kp.rule_id,
                kp.phrases.join(" / ")
            ));
        }
    }
    for c in &p.character_changes {
        let ids: Vec<String> = c
            .contracts
            .iter()
            .map(|k| format!("{}{}", k.kind.label(), k.id))
            .collect();
        s.push_str(&format!(
            "  角色{} {}（{}）：{}\n",
            c.kind.label(),
            c.display_name,
            c.id,
            if ids.is_empty() {
                "名称或别名变更".to_string()
            } else {
                ids.join("、")
            }
        ));
    }
}

/// The L2 character contracts and L3 chapter contracts hit, with the evidence.
fn push_affected(s: &mut String, p: &Propagation) {
    s.push_str(&format!(
        "受影响的 L2 角色契约：{} 条\n",
        p.affected_character_contracts.len()
    ));
    for a in &p.affected_character_contracts {
        s.push_str(&format!(
            "  {} {}（{}）\n",
            a.contract_id, a.display_name, a.file
        ));
        for h in &a.hits {
            s.push_str(&format!("      {}\n", hit_line(h)));
        }
    }
    s.push_str(&format!(
        "受影响的 L3 章节契约（本卷及以后）：{} 个\n",
        p.affected_chapter_contracts.len()
    ));
    for a in &p.affected_chapter_contracts {
        s.push_str(&format!("  第 {} 章（{}）\n", a.chapter, a.file));
        for h in &a.hits {
            s.push_str(&format!("      {}\n", hit_line(h)));
        }
    }
}

/// Files that could not be checked, the pending action written, and what to do next.
fn push_follow_up(s: &mut String, out: &PropagateOutcome) {
    if !out.unreadable.is_empty() {
        s.push_str("以下文件无法解析，未做检查，请人工核对：\n");
        for (f, why) in &out.unreadable {
            s.push_str(&format!("  {f}：{why}\n"));
        }
    }
    if let Some(a) = &out.pending {
        s.push_str(&format!(
            "已写入待处理事项 {}（type: spec_propagation）。\n",
            a.id
        ));
    }
    s.push_str("建议：回到卷规划，让角色设定师、大纲策划重新生成或审核上述契约后再继续写作；处理完用 novel pending resolve ID 关闭。\n");
}
