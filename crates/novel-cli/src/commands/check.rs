//! `novel check names`: near-miss variants of registered names (林枫 → 林峰) and unregistered
//! person-like names in chapter text (PRD M3, NER 一致性), each with its lines as evidence.
//! Exit 1 when something is found. `novel check leak --chapter N`: names that belong only to
//! other storylines in a chapter that is not their convergence (PRD §6.6.7 Layer 3), graded
//! `leak_risk: none|low|high` with evidence; exit 1 when high (LS-005 forces a revision).
//!
//! For the in-flight chapter the leak result is also written to
//! `staging/logs/chapter-NNN-leak.json` (see [`LEAK_RECORD_VERSION`]) for the gate to read.
//!
//! `novel check continuity [--chapter N | --volume V]`: the L3 contracts against the replayed
//! state, against each other and against retirements (`novel_core::plan::continuity`); exit 1
//! when a finding is an error.

use clap::{Args, Subcommand};
use serde_json::json;

use std::collections::BTreeSet;

use novel_core::model::{ChapterContract, Character, StorylineSchedule, Storylines};
use novel_core::plan::PlanFinding;
use novel_store::plan::Scope;
use novel_store::{Project, io, layout};
use novel_text::leak::{
    EntityKind, ForeignEntity, LeakRisk, LineNames, check_leak, foreign_entities, names_in,
};
use novel_text::names::{KnownName, NameIndex, NameIssueKind, world_terms};
use novel_text::segment::{Document, Span};

use super::lint::{ChapterSelection, HELP_TEMPLATE, committed_chapters, resolve_inputs};
use crate::cli::GlobalArgs;
use crate::output::{CliError, Exit, Report};

#[derive(Debug, Subcommand)]
pub enum CheckCommand {
    /// 人名一致性：登记名字的同音/形近误写（林枫→林峰）、同姓异名、反复出现的未登记人名
    #[command(help_template = HELP_TEMPLATE, next_help_heading = "选项", after_help = "登记的名字来自 characters/active 与 characters/retired 中每个角色的 display_name 与 aliases，以及 storylines.json 中写成中文的 POV 角色与势力。别名永远不算问题。已知的非人名（地点、势力、物品、设定名词）也不算，并且不会被读成人名：state/current-state.json 中 items/locations/factions 各条目的中文键与 name/display_name/aliases、characters 各条目的 location；world/rules.json 规则文本中用「」『』《》括起的名词；world/*.md 的标题、**加粗**词与「」『』《》括起的名词（2–12 字，不含句读）。变体：与登记名等长、只差一个字、且这两个字同音（不计声调）或形近，并处在名字的位置（前后是标点、说/道/看……或 对/向/叫……）；改了姓的两字名，新字须仍是姓或与原字形近；拼成常用词（方圆、林风）或没有姓的别名的变体，须有人在场的迹象（后接 说：/笑道/点头……，或前后有称谓）。同姓异名出现 2 次、其他未登记人名出现 3 次才报告，且名字须由常见名字用字组成；与登记名等长、同姓、只改了名字中一个字的（林桦之于林枫），在有人在场的位置（后接 说/笑道/点头……、前后有称谓、问/叫/找……之后句子结束）出现 1 次就报告，称呼（林伯、林叔）与常用词（林子、林间）除外。发现问题时退出码为 1。")]
    Names(NamesArgs),
    /// 防串线：本章出现只属于其他故事线的人物、势力、记忆中的名字（交汇章除外），给出 leak_risk
    #[command(help_template = HELP_TEMPLATE, next_help_heading = "选项", after_help = "本章故事线取自章节契约（volumes/vol-NN/chapter-contracts/chapter-NNN.json）的 storyline_id，其次是摘要 front matter 的 storyline_id，也可用 --storyline 指定。其他故事线的 POV 角色（含别名）与 storylines/<id>/memory.md 中出现的登记人名视为外线实体；本线也有的（本线 POV、本线记忆、storylines.json 中 bridges.shared_characters）与本章所在交汇事件涉及的故事线不算。其他故事线的 affiliated_factions（势力、地点）只是挂靠，不等于独占：本线也挂靠的、另有一条线挂靠的、本线记忆里提到的、设定里已有的（state/current-state.json 的地点、势力、物品，world/ 的名词）都是共享的，不算串线；只有别处都没提到的才算外线势力。匹配取最长的已知名字（本线的苏婉儿不会被当成外线的苏婉），两字的名字须处在名字的位置（山林枫树中的林枫不算名字，只记为 low）。leak_risk：none 无；high 外线 POV 角色或势力出现在叙述中的名字位置，或处在名字位置的外线实体有两个及以上；其余为 low。检查的是正在写的章节时，结果同时写入 staging/logs/chapter-NNN-leak.json 供门控读取。high 时退出码为 1。")]
    Leak(LeakArgs),
    /// 章节契约的衔接：前置条件对照回放到上一章的状态、上一章契约的后置条件，已提交章节的承诺变化是否记入状态，已退场或已死亡的角色是否被后面的契约用到
    #[command(help_template = HELP_TEMPLATE, next_help_heading = "选项", after_help = "规则：precondition_vs_state（第 N 章契约的 preconditions.character_states 对照回放到第 N−1 章的状态，只查到已完成章节 + 1）；chain_break（第 N−1 章契约的 postconditions.state_changes 对照第 N 章的 preconditions.character_states）；unrecorded_change（已提交章节的契约承诺了地点、状态或持有物的变化，但这一章没有任何已应用的 op 记录它）；retired_required（已退场或状态为死亡的角色出现在后面章节的契约里）。契约里的显示名、别名经 characters/ 中的档案对应到 slug；字段按同名比较，地点/状态/持有物也认中文键（位置、状态、持有……）。状态里没有的字段不算矛盾。每条发现给出契约文件与 JSON 指针，以及对照的另一个文件（上一章契约、变更日志中设置该值的那一行——指针把 state/changelog.jsonl 看作按行的数组——或退场角色的档案）。未写的章节为 error，已提交的为 warning；有 error 时退出码 1。不带参数时检查下一章所在的卷。")]
    Continuity(ContinuityArgs),
}

#[derive(Debug, Args)]
pub struct ContinuityArgs {
    /// 只检查这一章的契约
    #[arg(long, value_name = "N", conflicts_with = "volume", value_parser = clap::value_parser!(u32).range(1..))]
    pub chapter: Option<u32>,
    /// 检查这一卷的全部章节（默认：下一章所在的卷）
    #[arg(long, value_name = "V", value_parser = clap::value_parser!(u32).range(1..))]
    pub volume: Option<u32>,
}

#[derive(Debug, Args)]
pub struct LeakArgs {
    /// 章节号（chapters/ 中的定稿，未提交时用 staging 中的稿子）
    #[arg(long, value_name = "N")]
    pub chapter: u32,
    /// 本章所属故事线 id（默认读章节契约或摘要的 storyline_id）
    #[arg(long, value_name = "ID")]
    pub storyline: Option<String>,
}

#[derive(Debug, Args)]
pub struct NamesArgs {
    #[command(flatten)]
    pub select: ChapterSelection,
    /// 已提交章节的区间，如 1..20（含两端）
    #[arg(long, value_name = "A..B", conflicts_with_all = ["files", "chapter", "all"])]
    pub chapters: Option<String>,
}

/// The command name in the JSON envelope.
pub fn command_name(command: &CheckCommand) -> &'static str {
    match command {
        CheckCommand::Names(_) => "check names",
        CheckCommand::Leak(_) => "check leak",
        CheckCommand::Continuity(_) => "check continuity",
    }
}

pub fn run(global: &GlobalArgs, command: CheckCommand) -> Result<Report, CliError> {
    match command {
        CheckCommand::Names(a) => names(global, a),
        CheckCommand::Leak(a) => leak(global, a),
        CheckCommand::Continuity(a) => continuity(global, &a),
    }
}

fn parse_range(s: &str) -> Option<(u32, u32)> {
    let (a, b) = s.split_once("..")?;
    let (a, b) = (a.trim().parse().ok()?, b.trim().parse().ok()?);
    (a >= 1 && a <= b).then_some((a, b))
}

/// Registered names of the project: characters (display names, aliases) and the Chinese POV
/// characters and factions of the storylines.
pub(crate) fn known_names(proj: &Project) -> Result<Vec<KnownName>, CliError> {
    let mut names = Vec::new();
    for dir in ["characters/active", "characters/retired"] {
        let path = proj.path(dir);
        let Ok(entries) = std::fs::read_dir(&path) else {
            continue;
        };
        let mut files: Vec<_> = entries
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|x| x == "json"))
            .collect();
        files.sort();
        for f in files {
            let c: Character = io::read_json(&f, "角色档案")?;
            for name in std::iter::once(&c.display_name).chain(&c.aliases) {
                names.push(KnownName {
                    name: name.clone(),
                    entity: c.id.clone(),
                    display: c.display_name.clone(),
                });
            }
        }
    }
    let path = proj.path(layout::STORYLINES);
    if path.is_file() {
        let lines: Storylines = io::read_json(&path, "故事线定义")?;
        for s in &lines.storylines {
            for name in s.pov_characters.iter().chain(&s.affiliated_factions) {
                if !novel_core::model::is_slug(name) {
                    names.push(KnownName {
                        name: name.clone(),
                        entity: format!("storyline:{}", s.id),
                        display: name.clone(),
                    });
                }
            }
        }
    }
    Ok(names)
}

/// Known names of things that are not people: places, factions and items of the state, terms
/// of the world documents (the rule is in the help of `check names`).
pub(crate) fn entity_names(proj: &Project) -> Result<Vec<String>, CliError> {
    let mut out: Vec<String> = Vec::new();
    let mut push = |s: &str| {
        let s = s.trim();
        let len = s.chars().count();
        if (2..=12).contains(&len)
            && s.chars().any(novel_text::count::is_han)
            && !out.iter().any(|o| o == s)
        {
            out.push(s.to_string());
        }
    };
    let path = proj.path(layout::CURRENT_STATE);
    if path.is_file() {
        let state = io::read_json_value(&path)?;
        for section in ["items", "locations", "factions"] {
            let Some(map) = state.get(section).and_then(serde_json::Value::as_object) else {
                continue;
            };
            for (key, v) in map {
                push(key);
                match v {
                    serde_json::Value::String(s) => push(s),
                    serde_json::Value::Object(o) => {
                        for k in ["name", "display_name"] {
                            if let Some(s) = o.get(k).and_then(serde_json::Value::as_str) {
                                push(s);
                            }
                        }
                        if let Some(a) = o.get("aliases").and_then(serde_json::Value::as_array) {
                            a.iter()
                                .filter_map(serde_json::Value::as_str)
                                .for_each(&mut push);
                        }
                    }
                    _ => {}
                }
            }
        }
        if let Some(map) = state
            .get("characters")
            .and_then(serde_json::Value::as_object)
        {
            for v in map.values() {
                if let Some(s) = v.get("location").and_then(serde_json::Value::as_str) {
                    push(s);
                }
            }
        }
    }
    let world = proj.path("world");
    let rules = world.join("rules.json");
    if rules.is_file() {
        let rules: novel_core::model::WorldRules = io::read_json(&rules, "L1 世界规则")?;
        for r in &rules.rules {
            // Only the quoted terms of a rule's sentence: it has no headings or bold.
            let quoted: String = r.rule.replace('#', "").replace("**", "");
            for t in world_terms(&quoted) {
                push(&t);
            }
        }
    }
    if let Ok(entries) = std::fs::read_dir(&world) {
        let mut files: Vec<_> = entries
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|x| x == "md"))
            .collect();
        files.sort();
        for f in files {
            for t in world_terms(&io::read_text(&f)?) {
                push(&t);
            }
        }
    }
    Ok(out)
}

fn names(global: &GlobalArgs, args: NamesArgs) -> Result<Report, CliError> {
    let (project, inputs) = match &args.chapters {
        Some(range) => {
            let (a, b) = parse_range(range).ok_or_else(|| {
                CliError::new(
                    "E_USAGE",
                    format!("章节区间写法不对：{range}"),
                    "写成 起..止，如 --chapters 1..20",
                    Exit::Usage,
                )
            })?;
            let proj = super::project(global)?;
            let inputs = chapter_inputs(&proj, a, b)?;
            if inputs.is_empty() {
                return Err(CliError::new(
                    "E_NO_CHAPTER",
                    format!("第 {a}–{b} 章中没有已提交的章节"),
                    "检查区间，或不带参数检查正在写的章节",
                    Exit::Usage,
                ));
            }
            (Some(proj), inputs)
        }
        None => resolve_inputs(global, &args.select)?,
    };
    let (data, mut human, found) = names_report(project.as_ref(), &inputs)?;
    if found > 0 {
        let err = CliError::new(
            "E_NAMES",
            format!("发现 {found} 个可疑人名（{} 个文件）", inputs.len()),
            "逐条核对：笔误就改正文，新人物或别名就登记到 characters/",
            Exit::Problems,
        );
        return Err(err.with_details(data, human));
    }
    human.push_str(&format!(
        "人名检查通过：{} 个文件，{} 个登记名字。\n",
        inputs.len(),
        data["known_names"]
    ));
    Ok(Report { data, human })
}

/// The committed chapters of `[a, b]` as inputs of a text check.
pub(crate) fn chapter_inputs(
    proj: &Project,
    a: u32,
    b: u32,
) -> Result<Vec<super::lint::Input>, CliError> {
    Ok(committed_chapters(proj)?
        .into_iter()
        .filter(|(n, _)| (a..=b).contains(n))
        .map(|(_, rel)| super::lint::Input {
            path: proj.path(&rel),
            shown: rel,
        })
        .collect())
}

/// The names check of `inputs`: the `--json` data (`known_names`, `known_entities`, `files`,
/// `findings`), the human lines, and how many findings. Shared with the reviews.
pub(crate) fn names_report(
    project: Option<&Project>,
    inputs: &[super::lint::Input],
) -> Result<(serde_json::Value, String, usize), CliError> {
    let (known, entities) = match project {
        Some(p) => (known_names(p)?, entity_names(p)?),
        None => (Vec::new(), Vec::new()),
    };
    let index = NameIndex::with_entities(known, entities);

    let mut human = String::new();
    let mut issues_json = Vec::new();
    for input in inputs {
        let doc = Document::new(&io::read_text(&input.path)?);
        for issue in index.check(&doc) {
            let lines: Vec<usize> = issue
                .occurrences
                .iter()
                .map(|s| doc.position(s.start).0)
                .collect();
            let (line, col) = doc.position(issue.occurrences[0].start);
            let count = issue.occurrences.len();
            let mut shown_lines: Vec<String> = lines.iter().map(|l| l.to_string()).collect();
            shown_lines.dedup();
            let (rule, message) = match &issue.kind {
                NameIssueKind::NearMiss { of, why, .. } => (
                    "names/near-miss",
                    format!(
                        "「{}」疑似「{of}」的{why}误写（{count} 次：第 {} 行）；是同一人就改成「{of}」，是另一人就在 characters/ 登记",
                        issue.name,
                        shown_lines.join("、")
                    ),
                ),
                NameIssueKind::SameSurname { like, .. } => (
                    "names/same-surname",
                    format!(
                        "「{}」与「{like}」同姓不同名（{count} 次：第 {} 行）；若是笔误请统一，若是新人物请登记",
                        issue.name,
                        shown_lines.join("、")
                    ),
                ),
                NameIssueKind::Unregistered => (
                    "names/unregistered",
                    format!(
                        "未登记的人名「{}」（{count} 次：第 {} 行）；新人物请在 characters/ 登记，或加为已有角色的别名",
                        issue.name,
                        shown_lines.join("、")
                    ),
                ),
            };
            human.push_str(&format!(
                "{}:{line}:{col}: {rule}: {message}\n",
                input.shown
            ));
            let evidence: Vec<serde_json::Value> = issue
                .occurrences
                .iter()
                .map(|s| evidence(&doc, *s))
                .collect();
            let mut v = json!({
                "path": input.shown,
                "line": line,
                "col": col,
                "rule": rule,
                "severity": "warning",
                "message": message,
                "name": issue.name,
                "evidence": evidence,
            });
            if let Ok(serde_json::Value::Object(kind)) = serde_json::to_value(&issue.kind) {
                v.as_object_mut().expect("object").extend(kind);
            }
            issues_json.push(v);
        }
    }
    let found = issues_json.len();
    let data = json!({
        "known_names": index.names().len(),
        "known_entities": index.entities().len(),
        "files": inputs.iter().map(|i| i.shown.clone()).collect::<Vec<_>>(),
        "findings": issues_json,
    });
    Ok((data, human, found))
}

fn evidence(doc: &Document, span: Span) -> serde_json::Value {
    let (line, col) = doc.position(span.start);
    json!({"line": line, "col": col, "excerpt": doc.excerpt(span, 12)})
}

/// Volume directories of the project (`volumes/vol-NN`), in order.
fn volume_dirs(proj: &Project) -> Vec<std::path::PathBuf> {
    let mut dirs: Vec<_> = std::fs::read_dir(proj.path("volumes"))
        .map(|it| {
            it.flatten()
                .map(|e| e.path())
                .filter(|p| p.is_dir())
                .collect()
        })
        .unwrap_or_default();
    dirs.sort();
    dirs
}

/// The storyline of chapter `n`: its contract, else its summary's front matter.
fn storyline_of(proj: &Project, n: u32) -> Result<Option<String>, CliError> {
    for dir in volume_dirs(proj) {
        let path = dir
            .join("chapter-contracts")
            .join(novel_core::naming::contract_name(n));
        if path.is_file() {
            let c: ChapterContract = io::read_json(&path, "L3 章节契约")?;
            if c.storyline_id.is_some() {
                return Ok(c.storyline_id);
            }
        }
    }
    let summary = layout::summary_file(n);
    for rel in [summary.clone(), format!("staging/{summary}")] {
        let path = proj.path(&rel);
        if !path.is_file() {
            continue;
        }
        let text = io::read_text(&path)?;
        if let Some(id) = novel_core::context::text::summary_parts(&text).storyline {
            return Ok(Some(id));
        }
    }
    Ok(None)
}

fn leak(global: &GlobalArgs, args: LeakArgs) -> Result<Report, CliError> {
    let proj = super::project(global)?;
    let n = args.chapter;
    let out = leak_report(&proj, n, args.storyline)?;
    record_leak(&proj, n, &out.data, &out.text)?;
    if out.risk == LeakRisk::High {
        let err = CliError::new(
            "E_LEAK",
            format!("第 {n} 章串线风险高：出现了只属于其他故事线的实体"),
            "删去或改写外线实体；确需跨线的信息要有信使、书信、偶遇等叙事机制（LS-005），交汇章请在卷调度的 convergence_events 中登记",
            Exit::Problems,
        );
        return Err(err.with_details(out.data, out.human));
    }
    Ok(Report {
        data: out.data,
        human: out.human,
    })
}

/// A leak check's result: the `--json` data, the human lines, the risk and the text checked.
pub(crate) struct LeakOutcome {
    pub data: serde_json::Value,
    pub human: String,
    pub risk: LeakRisk,
    pub text: String,
}

/// The cross-storyline leak check of chapter `n` (committed, else staged), without recording
/// it. Shared with the reviews.
pub(crate) fn leak_report(
    proj: &Project,
    n: u32,
    storyline: Option<String>,
) -> Result<LeakOutcome, CliError> {
    let proj = proj.clone();
    let committed = layout::chapter_file(n);
    let rel = [committed.clone(), format!("staging/{committed}")]
        .into_iter()
        .find(|rel| proj.path(rel).is_file())
        .ok_or_else(|| {
            CliError::new(
                "E_NO_CHAPTER",
                format!("找不到第 {n} 章：{committed} 不存在，staging 中也没有"),
                "检查章节号",
                Exit::Usage,
            )
        })?;
    let current = match storyline {
        Some(s) => s,
        None => storyline_of(&proj, n)?.ok_or_else(|| {
            CliError::new(
                "E_NO_STORYLINE",
                format!("不知道第 {n} 章属于哪条故事线：章节契约与摘要里都没有 storyline_id"),
                "用 --storyline ID 指定，或在章节契约中写上 storyline_id",
                Exit::Usage,
            )
        })?,
    };
    let lines: Storylines = io::read_json(&proj.path(layout::STORYLINES), "故事线定义")?;
    if !lines.storylines.iter().any(|s| s.id == current) {
        let known: Vec<&str> = lines.storylines.iter().map(|s| s.id.as_str()).collect();
        return Err(CliError::new(
            "E_USAGE",
            format!("storylines.json 中没有故事线「{current}」"),
            format!("可选：{}", known.join("、")),
            Exit::Usage,
        ));
    }

    // Names of each character (display name and aliases), by slug and by display name.
    let known = known_names(&proj)?;
    let names_of = |who: &str| -> Vec<String> {
        let ids: BTreeSet<&str> = known
            .iter()
            .filter(|k| k.entity == who || k.display == who || k.name == who)
            .map(|k| k.entity.as_str())
            .collect();
        let mut out: Vec<String> = known
            .iter()
            .filter(|k| ids.contains(k.entity.as_str()) && !k.entity.starts_with("storyline:"))
            .map(|k| k.name.clone())
            .collect();
        if out.is_empty() && !novel_core::model::is_slug(who) {
            out.push(who.to_string());
        }
        out
    };
    let memory_of = |id: &str| -> Result<String, CliError> {
        let Ok(rel) = layout::storyline_memory(id) else {
            return Ok(String::new());
        };
        let path = proj.path(&rel);
        if !path.is_file() {
            return Ok(String::new());
        }
        Ok(io::read_text(&path)?)
    };
    // Longest match first, at a name boundary: 苏婉儿 in a memory is not 苏婉.
    let people: Vec<String> = known
        .iter()
        .filter(|k| !k.entity.starts_with("storyline:"))
        .map(|k| k.name.clone())
        .collect();

    // Lines converging in this chapter are not foreign here.
    let mut converging: BTreeSet<String> = BTreeSet::new();
    for dir in volume_dirs(&proj) {
        let path = dir.join("storyline-schedule.json");
        if !path.is_file() {
            continue;
        }
        let schedule: StorylineSchedule = io::read_json(&path, "卷故事线调度")?;
        for ev in &schedule.convergence_events {
            if (ev.chapter_range[0]..=ev.chapter_range[1]).contains(&n)
                && ev.involved_storylines.contains(&current)
            {
                converging.extend(
                    ev.involved_storylines
                        .iter()
                        .filter(|s| **s != current)
                        .cloned(),
                );
            }
        }
    }

    // What each line names; the rule of what is foreign is novel_text::leak::foreign_entities.
    let mut line_names: Vec<LineNames> = Vec::new();
    for s in &lines.storylines {
        let memory = memory_of(&s.id)?;
        line_names.push(LineNames {
            id: s.id.clone(),
            pov: s
                .pov_characters
                .iter()
                .flat_map(|who| names_of(who))
                .collect(),
            affiliations: s.affiliated_factions.clone(),
            memory_people: names_in(&memory, &people),
            memory,
        });
    }
    let mut shared: Vec<String> = Vec::new();
    for r in &lines.relationships {
        if r.from == current || r.to == current {
            for who in &r.bridges.shared_characters {
                shared.extend(names_of(who));
            }
        }
    }
    let setting = entity_names(&proj)?;
    let converging_ids: Vec<String> = converging.iter().cloned().collect();
    let foreign: Vec<ForeignEntity> =
        foreign_entities(&line_names, &current, &converging_ids, &shared, &setting);
    // Every name that is not foreign takes part in the longest match, so a foreign name
    // inside one of them (苏婉 in 苏婉儿) is not counted.
    let mut others: Vec<String> = line_names
        .iter()
        .flat_map(|l| l.pov.iter().chain(&l.affiliations).chain(&l.memory_people))
        .cloned()
        .collect();
    others.extend(shared);
    others.extend(known.iter().map(|k| k.name.clone()));
    others.extend(setting);
    others.retain(|o| !foreign.iter().any(|f| f.name == *o));
    others.sort();
    others.dedup();

    let text = io::read_text(&proj.path(&rel))?;
    let doc = Document::new(&text);
    let report = check_leak(&doc, &foreign, &others);
    let risk_label = match report.risk {
        LeakRisk::None => "none（无串线）",
        LeakRisk::Low => "low（轻微，多为对话中提及）",
        LeakRisk::High => "high（外线实体进入叙述，须修正）",
    };
    let mut human = format!(
        "第 {n} 章（{rel}，故事线 {current}{}）：leak_risk = {risk_label}\n",
        if converging.is_empty() {
            String::new()
        } else {
            format!(
                "，与 {} 交汇",
                converging.iter().cloned().collect::<Vec<_>>().join("、")
            )
        }
    );
    let mut refs = Vec::new();
    for h in &report.hits {
        let kind = match h.entity.kind {
            EntityKind::PovCharacter => "POV 角色",
            EntityKind::Faction => "势力",
            EntityKind::MemoryName => "记忆中的人名",
        };
        let (line, col) = doc.position(h.occurrences[0].start);
        let unbounded = h.occurrences.len() - h.at_boundary;
        human.push_str(&format!(
            "{rel}:{line}:{col}: leak/{}: 「{}」是故事线 {} 的{kind}（{} 次，叙述中 {} 次{}）\n",
            match h.entity.kind {
                EntityKind::PovCharacter => "pov-character",
                EntityKind::Faction => "faction",
                EntityKind::MemoryName => "memory-name",
            },
            h.entity.name,
            h.entity.storyline,
            h.occurrences.len(),
            h.in_narration,
            if unbounded > 0 {
                format!("；{unbounded} 次不在名字位置，可能只是字面相同")
            } else {
                String::new()
            }
        ));
        refs.push(json!({
            "name": h.entity.name,
            "storyline": h.entity.storyline,
            "kind": h.entity.kind,
            "count": h.occurrences.len(),
            "in_narration": h.in_narration,
            "at_boundary": h.at_boundary,
            "evidence": h.occurrences.iter().map(|s| evidence(&doc, *s)).collect::<Vec<_>>(),
        }));
    }
    let data = json!({
        "chapter": n,
        "path": rel,
        "storyline_id": current,
        "converging_with": converging,
        "leak_risk": report.risk,
        "cross_references": refs,
        "foreign_entities": foreign.len(),
    });
    Ok(LeakOutcome {
        data,
        human,
        risk: report.risk,
        text,
    })
}

fn continuity(global: &GlobalArgs, args: &ContinuityArgs) -> Result<Report, CliError> {
    let proj = super::project(global)?;
    let scope = match (args.chapter, args.volume) {
        (Some(n), _) => Scope::Chapter(n),
        (None, Some(v)) => Scope::Volume(v),
        (None, None) => {
            let cp = novel_store::plan::light_checkpoint(&proj)?;
            Scope::Volume(novel_store::context::volume_of(
                &proj,
                cp.last_completed_chapter + 1,
                cp.current_volume.max(1),
            ))
        }
    };
    let report = novel_store::plan::continuity(&proj, scope).map_err(plan_error)?;
    let what = match (report.chapter, report.volume, report.range) {
        (Some(n), _, _) => format!("第 {n} 章的契约"),
        (_, Some(v), Some([a, b])) => format!("第 {v} 卷（第 {a}–{b} 章）的契约"),
        (_, Some(v), None) => format!("第 {v} 卷的契约"),
        _ => "契约".to_string(),
    };
    let mut human = render_findings(&report.findings);
    let data = serde_json::to_value(&report).expect("serialises");
    if report.counts.error > 0 {
        let err = CliError::new(
            "E_CONTINUITY",
            format!(
                "{what}有 {} 处衔接错误、{} 处提醒",
                report.counts.error, report.counts.warning
            ),
            "按每条的处理建议修改契约、补记状态，或在正文里写出过渡",
            Exit::Problems,
        );
        return Err(err.with_details(data, human));
    }
    human.push_str(&if report.contracts_checked.is_empty() {
        format!("{what}：没有可检查的章节契约。\n")
    } else if report.findings.is_empty() {
        format!(
            "{what}衔接一致（{} 份契约）。\n",
            report.contracts_checked.len()
        )
    } else {
        format!(
            "{what}没有衔接错误，{} 处提醒（已提交的章节）。\n",
            report.counts.warning
        )
    });
    Ok(Report { data, human })
}

/// One line per finding, then its hint.
pub(crate) fn render_findings(findings: &[PlanFinding]) -> String {
    let mut out = String::new();
    for f in findings {
        out.push_str(&f.render());
        out.push('\n');
        if !f.hint.is_empty() {
            out.push_str(&format!("    处理：{}\n", f.hint));
        }
    }
    out
}

/// A plan check that could not run (exit 2: an unreadable changelog or checkpoint).
pub(crate) fn plan_error(e: novel_store::plan::PlanError) -> CliError {
    CliError::new(e.code(), e.to_string(), e.hint(), Exit::Usage)
}

/// Version of the leak record's shape (`staging/logs/chapter-NNN-leak.json`).
pub const LEAK_RECORD_VERSION: u32 = 1;

/// Keeps the result where the gate sees it: for the in-flight chapter, in its own file
/// `staging/logs/chapter-NNN-leak.json` (atomic; rewritten by every check), read as
/// [`novel_core::gate::LeakCheck`]:
///
/// ```json
/// {"version": 1, "chapter": 3, "storyline_id": "main_arc", "path": "staging/chapters/chapter-003.md",
///  "text_digest": "…16 hex digits…", "leak_risk": "none|low|high", "checked_at": "…",
///  "converging_with": [], "findings": [ /* the cross_references of the JSON report */ ]}
/// ```
///
/// `text_digest` ([`novel_core::pipeline::text_digest`] of the text checked) lets the gate
/// ignore a result from before a revision; the commit folds the record into the chapter's
/// pipeline log as `leak_check`.
fn record_leak(
    project: &novel_store::Project,
    n: u32,
    data: &serde_json::Value,
    text: &str,
) -> Result<(), CliError> {
    let Ok(cp) = novel_store::chapter::load_checkpoint(project) else {
        return Ok(());
    };
    if cp.inflight_chapter != Some(n) {
        return Ok(());
    }
    let record = json!({
        "version": LEAK_RECORD_VERSION,
        "chapter": n,
        "storyline_id": data["storyline_id"],
        "path": data["path"],
        "text_digest": novel_core::pipeline::text_digest(text.as_bytes()),
        "leak_risk": data["leak_risk"],
        "checked_at": novel_store::time::now_iso(),
        "converging_with": data["converging_with"],
        "findings": data["cross_references"],
    });
    let path = project.path(&layout::staging_leak(n));
    if let Some(dir) = path.parent() {
        io::create_dir_all(dir)?;
    }
    io::write_json(&path, &record)?;
    Ok(())
}
