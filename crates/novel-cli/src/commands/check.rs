//! `novel check names`: near-miss variants of registered names (林枫 → 林峰) and unregistered
//! person-like names in chapter text (PRD M3, NER 一致性), each with its lines as evidence.
//! Exit 1 when something is found. `novel check leak --chapter N`: names that belong only to
//! other storylines in a chapter that is not their convergence (PRD §6.6.7 Layer 3), graded
//! `leak_risk: none|low|high` with evidence; exit 1 when high (LS-005 forces a revision).
//!
//! For the in-flight chapter the leak result is also written to
//! `staging/logs/chapter-NNN-leak.json` (`novel_store::leak::record`) for the gate to read.
//!
//! The rules are elsewhere: which files and names are read is `novel_store::names`,
//! `novel_store::leak` and `novel_store::select`; what is a suspicious name or a leak is
//! `novel_text::names` and `novel_text::leak::assess`. This module wires them and renders.
//!
//! `novel check craft`: the craft of a chapter (`super::craft`).
//!
//! `novel check continuity [--chapter N | --volume V]`: the L3 contracts against the replayed
//! state, against each other and against retirements (`novel_core::plan::continuity`); exit 1
//! when a finding is an error.

use clap::{Args, Subcommand};

use novel_store::plan::Scope;
use novel_store::select::Selection;
use novel_text::leak::{EntityKind, LeakAssessment, LeakRisk};

use novel_core::diagnostic::render_all;

use super::{names_report, plan_error, select_error};
use crate::args::{
    ChapterSelection, ChapterSpan, GlobalArgs, HELP_TEMPLATE, chapter_number, chapter_span,
};
use crate::output::{CliError, Exit, Report};

#[derive(Debug, Subcommand)]
pub enum CheckCommand {
    /// 人名一致性：登记名字的同音/形近误写（林枫→林峰）、同姓异名、反复出现的未登记人名
    #[command(help_template = HELP_TEMPLATE, next_help_heading = "选项", after_help = "登记的名字来自 characters/active 与 characters/retired 中每个角色的 display_name 与 aliases，以及 storylines.json 中写成中文的 POV 角色与势力。别名永远不算问题。已知的非人名（地点、势力、物品、设定名词）也不算，并且不会被读成人名：state/current-state.json 中 items/locations/factions 各条目的中文键与 name/display_name/aliases、characters 各条目的 location；world/rules.json 规则文本中用「」『』《》括起的名词；world/*.md 的标题、**加粗**词与「」『』《》括起的名词（2–12 字，不含句读）。变体：与登记名等长、只差一个字、且这两个字同音（不计声调）或形近，并处在名字的位置（前后是标点、说/道/看……或 对/向/叫……）；改了姓的两字名，新字须仍是姓或与原字形近；拼成常用词（方圆、林风）或没有姓的别名的变体，须有人在场的迹象（后接 说：/笑道/点头……，或前后有称谓）。同姓异名出现 2 次、其他未登记人名出现 3 次才报告，且名字须由常见名字用字组成；与登记名等长、同姓、只改了名字中一个字的（林桦之于林枫），在有人在场的位置（后接 说/笑道/点头……、前后有称谓、问/叫/找……之后句子结束）出现 1 次就报告，称呼（林伯、林叔）与常用词（林子、林间）除外；在句首、后接任何动词（孟大山一拳、风姐听了）也算有人在场。词的边界由分词器（jieba，只在这里加载）判断：从词里切出来的不算（行李里的「李里」、不觉大笑的「觉大」、宋情愿的「宋情」）；词典里有、又不是人名的词（燕京、金刚、云云）须有人在场；紧挨登记名之前的（宋将关胜）不算。没有姓的别名（金桂之于夏金桂、云丫头之于史湘云）不定义姓；姓后接称谓、头衔、排行称呼的（林妹妹、宋先锋、杨制使、薛大姑娘、公孙二先生）与钱币（万元、马克）不是人名。每条发现给出依据（同音/形近、同姓、未登记）与把握 confidence（high：有人在场；medium：处在名字的位置；low：只是反复出现）。发现问题时退出码为 1。")]
    Names(NamesArgs),
    /// 防串线：本章出现只属于其他故事线的人物、势力、记忆中的名字（交汇章除外），给出 leak_risk
    #[command(help_template = HELP_TEMPLATE, next_help_heading = "选项", after_help = "本章故事线取自章节契约（volumes/vol-NN/chapter-contracts/chapter-NNN.json）的 storyline_id，其次是摘要 front matter 的 storyline_id，也可用 --storyline 指定。其他故事线的 POV 角色（含别名）与 storylines/<id>/memory.md 中出现的登记人名视为外线实体；本线也有的（本线 POV、本线记忆、storylines.json 中 bridges.shared_characters）与本章所在交汇事件涉及的故事线不算。本章自己的计划提到的都不算外线：章节契约、大纲本节、卷调度里本章的交汇事件与本线的 arc_goal、计划里出现的角色的档案与状态（契约里 POV 要去的城市、本章角色所属宗门的外门）。其他故事线的 affiliated_factions（势力、地点）只是挂靠，不等于独占：本线也挂靠的、另有一条线挂靠的、本线记忆里提到的、本线或第三条线的章节计划（契约、大纲）里出现的、设定里已有的（state/current-state.json 的地点、势力、物品，world/ 的名词）都是共享的，不算串线；只有别处都没提到的才算外线势力。匹配取最长的已知名字（本线的苏婉儿不会被当成外线的苏婉），两字的名字须处在名字的位置（山林枫树中的林枫不算名字，只记为 low）。每条发现有自己的风险：外线 POV 角色或势力出现在叙述中的名字位置为 high，两个及以上外线人物出现在叙述中的名字位置也为 high，其余（只在对话里、不在名字位置、一个记忆中的人名）为 low；leak_risk 取最高的一条，只有 high 拦门控。每条给出它属于哪条故事线、在哪里定义（storylines.json 的指针或 memory.md 的行）、那条线在哪一章的计划里写到它。检查的是正在写的章节时，结果同时写入 staging/logs/chapter-NNN-leak.json 供门控读取。high 时退出码为 1。")]
    Leak(LeakArgs),
    /// 章节契约的衔接：前置条件对照回放到上一章的状态、上一章契约的后置条件，已提交章节的承诺变化是否记入状态，已退场或已死亡的角色是否被后面的契约用到
    #[command(help_template = HELP_TEMPLATE, next_help_heading = "选项", after_help = "规则：precondition_vs_state（第 N 章契约的 preconditions.character_states 对照回放到第 N−1 章的状态，只查到已完成章节 + 1）；chain_break（第 N−1 章契约的 postconditions.state_changes 对照第 N 章的 preconditions.character_states）；unrecorded_change（已提交章节的契约承诺了地点、状态或持有物的变化，但这一章没有任何已应用的 op 记录它）；retired_required（已退场或状态为死亡的角色出现在后面章节的契约里）。契约里的显示名、别名经 characters/ 中的档案对应到 slug；字段按同名比较，地点/状态/持有物也认中文键（位置、状态、持有……）。状态里没有的字段不算矛盾。每条发现给出契约文件与 JSON 指针，以及对照的另一个文件（上一章契约、变更日志中设置该值的那一行——指针把 state/changelog.jsonl 看作按行的数组——或退场角色的档案）。未写的章节为 error，已提交的为 warning；有 error 时退出码 1。不带参数时检查下一章所在的卷。")]
    Continuity(ContinuityArgs),
    /// 章法：开篇前 300 字有没有本章的问题、章末有没有钩子及其类型、上一章的钩子接没接、钩子类型有没有变化、注水段落、惊讶标记/比喻/「他知道，」是否超过上限
    #[command(help_template = HELP_TEMPLATE, next_help_heading = "选项")]
    Craft(super::craft::CraftArgs),
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
    #[arg(long, value_name = "N", value_parser = chapter_number)]
    pub chapter: u32,
    /// 本章所属故事线 id（默认读章节契约或摘要的 storyline_id）
    #[arg(long, value_name = "ID")]
    pub storyline: Option<String>,
}

#[derive(Debug, Args)]
pub struct NamesArgs {
    #[command(flatten)]
    pub select: ChapterSelection,
    /// 已提交章节的区间，如 1..20（含两端；也可只写一章）
    #[arg(long, value_name = "A..B", value_parser = chapter_span, conflicts_with_all = ["files", "chapter", "all"])]
    pub chapters: Option<ChapterSpan>,
}

/// The command name in the JSON envelope.
pub fn command_name(command: &CheckCommand) -> &'static str {
    match command {
        CheckCommand::Names(_) => "check names",
        CheckCommand::Leak(_) => "check leak",
        CheckCommand::Continuity(_) => "check continuity",
        CheckCommand::Craft(_) => "check craft",
    }
}

pub fn run(global: &GlobalArgs, command: CheckCommand) -> Result<Report, CliError> {
    match command {
        CheckCommand::Names(a) => names(global, a),
        CheckCommand::Leak(a) => leak(global, a),
        CheckCommand::Continuity(a) => continuity(global, &a),
        CheckCommand::Craft(a) => super::craft::run(global, a),
    }
}

fn names(global: &GlobalArgs, args: NamesArgs) -> Result<Report, CliError> {
    let (project, inputs) = match &args.chapters {
        &Some(ChapterSpan(a, b)) => {
            let proj = super::project(global)?;
            let inputs = novel_store::select::resolve(Some(&proj), Selection::Committed([a, b]))
                .map_err(select_error)?;
            (Some(proj), inputs)
        }
        None => super::resolve_inputs(global, &args.select)?,
    };
    let (data, mut human) = names_report(project.as_ref(), &inputs)?;
    let found = data.findings.len();
    if found > 0 {
        let err = CliError::new(
            "E_NAMES",
            format!("发现 {found} 个可疑人名（{} 个文件）", inputs.len()),
            "",
            Exit::Problems,
        );
        return Err(err.with_report(&data, human));
    }
    human.push_str(&format!(
        "人名检查通过：{} 个文件，{} 个登记名字。\n",
        inputs.len(),
        data.known_names
    ));
    Report::new(&data, human)
}

fn leak(global: &GlobalArgs, args: LeakArgs) -> Result<Report, CliError> {
    let proj = super::project(global)?;
    let n = args.chapter;
    let sources = novel_store::leak::sources(&proj, n, args.storyline)
        .map_err(|e| CliError::new(e.code(), e.to_string(), e.hint(), Exit::Usage))?;
    let assessment = novel_text::leak::assess(&sources);
    novel_store::leak::record(
        &proj,
        &sources,
        assessment.leak_risk,
        &assessment.cross_references,
    )?;
    let human = render_leak(&assessment);
    if assessment.leak_risk == LeakRisk::High {
        let err = CliError::new(
            "E_LEAK",
            format!("第 {n} 章串线风险高：出现了只属于其他故事线的实体"),
            "删去或改写外线实体；确需跨线的信息要有信使、书信、偶遇等叙事机制（LS-005），交汇章请在卷调度的 convergence_events 中登记",
            Exit::Problems,
        );
        return Err(err.with_report(&assessment, human));
    }
    Report::new(&assessment, human)
}

/// The human lines of a leak check: the verdict, then one line per foreign name.
pub(crate) fn render_leak(a: &LeakAssessment) -> String {
    let risk_label = match a.leak_risk {
        LeakRisk::None => "none（无串线）",
        LeakRisk::Low => "low（轻微，多为对话中提及）",
        LeakRisk::High => "high（外线实体进入叙述，须修正）",
    };
    let converging = if a.converging_with.is_empty() {
        String::new()
    } else {
        format!("，与 {} 交汇", a.converging_with.join("、"))
    };
    let (n, rel) = (a.chapter, &a.path);
    let mut human = format!(
        "第 {n} 章（{rel}，故事线 {}{converging}）：leak_risk = {risk_label}\n",
        a.storyline_id
    );
    for f in &a.cross_references {
        let kind = match f.kind {
            EntityKind::PovCharacter => "POV 角色",
            EntityKind::Faction => "势力/地点",
            EntityKind::MemoryName => "记忆中的人名",
        };
        let rule = f.kind.rule();
        let risk = match f.risk {
            LeakRisk::High => "高",
            _ => "低",
        };
        let (line, col) = f.evidence.first().map_or((0, 0), |e| (e.line, e.col));
        let unbounded = f.count - f.at_boundary;
        let planned = f
            .planned_in
            .as_ref()
            .map(|p| format!("，该线计划见 {}", p.shown()))
            .unwrap_or_default();
        human.push_str(&format!(
            "{rel}:{line}:{col}: {rule}[{risk}]: 「{}」是故事线 {} 的{kind}（{} 次，叙述中 {} 次{}；定义于 {}{planned}）\n",
            f.name,
            f.storyline,
            f.count,
            f.in_narration,
            if unbounded > 0 {
                format!("；{unbounded} 次不在名字位置，可能只是字面相同")
            } else {
                String::new()
            },
            f.defined_in.shown(),
        ));
    }
    human
}

fn continuity(global: &GlobalArgs, args: &ContinuityArgs) -> Result<Report, CliError> {
    let proj = super::project(global)?;
    let scope = match (args.chapter, args.volume) {
        (Some(n), _) => Scope::Chapter(n),
        (None, Some(v)) => Scope::Volume(v),
        (None, None) => Scope::next_volume(&proj)?,
    };
    let report = novel_store::plan::continuity(&proj, scope).map_err(plan_error)?;
    let what = match (report.chapter, report.volume, report.range) {
        (Some(n), _, _) => format!("第 {n} 章的契约"),
        (_, Some(v), Some([a, b])) => format!("第 {v} 卷（第 {a}–{b} 章）的契约"),
        (_, Some(v), None) => format!("第 {v} 卷的契约"),
        _ => "契约".to_string(),
    };
    let mut human = render_all(&report.findings);
    if report.counts.error > 0 {
        let err = CliError::new(
            "E_CONTINUITY",
            format!(
                "{what}有 {} 处衔接错误、{} 处提醒",
                report.counts.error, report.counts.warning
            ),
            "",
            Exit::Problems,
        );
        return Err(err.with_report(&report, human));
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
    Report::new(&report, human)
}
