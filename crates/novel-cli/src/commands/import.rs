//! `novel import SOURCE [--into DIR] [--dry-run] [--renumber]` and `novel import backfill
//! [--done N]` (`docs/orchestration.md` §8c): a manuscript decoded (`novel_text::decode`), split
//! (`novel_text::chapters`), planned (`novel_core::import`) and written all or nothing
//! (`novel_store::import`); then the Summarizer's backfill, chapter by chapter.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};

use clap::{Args, Subcommand};
use serde::Serialize;

use novel_core::import::{
    Action, Plan, Problem, Row, Section, SectionKind, VolumeHeading, VolumeRange,
};
use novel_core::model::OrchestratorState;
use novel_store::Project;
use novel_store::import::{BackfillStep, ImportError, Written};
use novel_text::chapters::{folder_rank, folder_warnings, split, split_file};

use crate::cli::{GlobalArgs, HELP_TEMPLATE, chapter_number};
use crate::output::{CliError, Exit, Report};

/// `novel import`'s `--json` data: the plan, then what was written (`null` until written).
#[derive(Serialize)]
struct ImportData<'a> {
    source: SourceData<'a>,
    dry_run: bool,
    renumber: bool,
    project: Option<String>,
    new_project: bool,
    rows: &'a [Row],
    problems: &'a [Problem],
    imported: &'a [u32],
    skipped: &'a [u32],
    volumes: &'a [VolumeRange],
    chars: CharsData,
    written: Option<WrittenData<'a>>,
    orchestrator_state: Option<&'a OrchestratorState>,
    last_completed_chapter: Option<u32>,
    backfill: Option<BackfillAction<'a>>,
}

#[derive(Serialize)]
struct SourceData<'a> {
    path: String,
    files: &'a [SourceFileData],
}

/// One file of the manuscript and how it was decoded.
#[derive(Serialize)]
struct SourceFileData {
    file: String,
    encoding: &'static str,
    found_by: &'static str,
    malformed: bool,
}

/// 字数 of the whole manuscript and of the chapters imported.
#[derive(Serialize)]
struct CharsData {
    source: usize,
    imported: usize,
}

#[derive(Serialize)]
struct WrittenData<'a> {
    files: usize,
    schedules: &'a [u32],
    kept_volumes: &'a [u32],
}

/// The backfill pending action the import opened.
#[derive(Serialize)]
struct BackfillAction<'a> {
    id: &'a str,
    #[serde(rename = "type")]
    kind: &'a str,
    chapters: Vec<u32>,
    next: Option<u32>,
}

/// `novel import backfill --done N`'s `--json` data.
#[derive(Serialize)]
struct BackfillDone {
    done: u32,
    left: usize,
    next: Option<u32>,
    finished: bool,
}

/// `novel import backfill`'s `--json` data.
#[derive(Serialize)]
struct BackfillProgress<'a> {
    pending: bool,
    left: usize,
    chapters: &'a [u32],
    next: Option<u32>,
    step: Option<&'a BackfillStep>,
}

#[derive(Debug, Args)]
#[command(
    args_conflicts_with_subcommands = true,
    subcommand_negates_reqs = true,
    after_help = "识别的章节标题：第12章、第一百二十三章、第两千零五章、第十二回、第12节、Chapter 12（标题可跟在空格、全角空格、：、:、、、. 之后）；卷标题：第一卷 …、卷一 …（对应 vol-NN）；序章、楔子、引子、番外、尾声、后记保留为附录（extras/NN-名称.md），不编号；第一个标题之前的文字保留为「前言」。编码：UTF-8（可带 BOM）、GB18030/GBK、UTF-16（带或不带 BOM）。缺章、重号、顺序颠倒时拒绝导入（退出码 1，E_IMPORT_ORDER），加 --renumber 按出现顺序重新编号；空章节拒绝（E_IMPORT_EMPTY）。已有的章节从不覆盖，列为跳过。导入后用 novel import backfill 逐章补全摘要、状态与故事线记忆。"
)]
pub struct ImportArgs {
    #[command(subcommand)]
    pub command: Option<ImportCommand>,
    /// 书稿：一个 .txt/.md 文件，或放着章节文件（001.txt、第12章 标题.txt …）的文件夹
    #[arg(value_name = "书稿", help_heading = "参数", required = true)]
    pub source: Option<PathBuf>,
    /// 导入到这个目录（默认当前目录；没有项目时先按 novel init 新建）
    #[arg(long, value_name = "目录")]
    pub into: Option<PathBuf>,
    /// 只列出分章结果（章号、标题、字数、出处）与问题，不写任何文件
    #[arg(long)]
    pub dry_run: bool,
    /// 按出现顺序重新编号（1..N，已有项目则接在最后一章之后），忽略书稿里的章号
    #[arg(long)]
    pub renumber: bool,
    /// 新项目的书名（默认取书稿文件名）
    #[arg(long, value_name = "书名")]
    pub title: Option<String>,
    /// 新项目的题材（如 玄幻、都市）
    #[arg(long, value_name = "题材")]
    pub genre: Option<String>,
}

#[derive(Debug, Subcommand)]
pub enum ImportCommand {
    /// 导入章节的补全进度：下一章缺什么（摘要、状态增量）；--done N 标记第 N 章已补全
    #[command(help_template = HELP_TEMPLATE, next_help_heading = "选项")]
    Backfill(BackfillArgs),
}

#[derive(Debug, Args)]
pub struct BackfillArgs {
    /// 标记第 N 章已补全（须是下一个待补章节，摘要已写、变更日志已有该章）
    #[arg(long, value_name = "章", value_parser = chapter_number)]
    pub done: Option<u32>,
}

/// The envelope name.
pub fn command_name(args: &ImportArgs) -> &'static str {
    match args.command {
        Some(ImportCommand::Backfill(_)) => "import backfill",
        None => "import",
    }
}

pub fn run(global: &GlobalArgs, args: ImportArgs) -> Result<Report, CliError> {
    match &args.command {
        Some(ImportCommand::Backfill(b)) => backfill(global, b),
        None => import(global, &args),
    }
}

fn import_error(e: ImportError) -> CliError {
    let exit = match e.exit_kind() {
        1 => Exit::Problems,
        3 => Exit::Conflict,
        _ => Exit::Usage,
    };
    if let ImportError::Lock(l) = e {
        return super::lock_error(l);
    }
    CliError::new(e.code(), e.to_string(), e.hint(), exit)
}

/// The manuscript, decoded and split.
struct Manuscript {
    sections: Vec<Section>,
    volumes: Vec<VolumeHeading>,
    chars: Vec<usize>,
    warnings: Vec<Problem>,
    files: Vec<SourceFileData>,
}

fn read_manuscript(path: &Path) -> Result<Manuscript, CliError> {
    let mut files = novel_store::import::read_source(path).map_err(import_error)?;
    let folder = path.is_dir();
    if folder {
        files.sort_by_key(|f| (folder_rank(&f.stem), f.shown.clone()));
    }
    let mut m = Manuscript {
        sections: Vec::new(),
        volumes: Vec::new(),
        chars: Vec::new(),
        warnings: Vec::new(),
        files: Vec::new(),
    };
    for f in &files {
        let d = novel_text::decode::decode(&f.bytes);
        m.files.push(SourceFileData {
            file: f.shown.clone(),
            encoding: d.encoding,
            found_by: d.found_by,
            malformed: d.malformed,
        });
        let part = if folder {
            split_file(&d.text, &f.shown, &f.stem)
        } else {
            split(&d.text, &f.shown)
        };
        if folder {
            m.warnings
                .extend(folder_warnings(&f.stem, &f.shown, &part.sections));
        }
        m.sections.extend(part.sections);
        m.volumes.extend(part.volumes);
    }
    m.chars = m
        .sections
        .iter()
        .map(|s| novel_text::count::count(&s.body).chars)
        .collect();
    Ok(m)
}

fn import(global: &GlobalArgs, args: &ImportArgs) -> Result<Report, CliError> {
    let source = args.source.clone().unwrap_or_default();
    let m = read_manuscript(&source)?;
    let dir = args
        .into
        .clone()
        .or_else(|| global.project.clone())
        .unwrap_or_else(|| ".".into());
    let existing = Project::open(&dir).ok();
    let target = novel_store::import::target_for(existing.as_ref()).map_err(import_error)?;
    let fresh = target.new_project;
    let mut plan =
        novel_core::import::plan(&m.sections, &m.chars, &m.volumes, &target, args.renumber);
    plan.problems.extend(m.warnings.iter().cloned());
    let mut data = plan_data(&plan, &source, &m, args, fresh);
    let human = plan_human(&plan);
    if let Some(code) = plan.refusal() {
        return Err(refusal(code, &plan, args).with_report(&data, human));
    }
    if args.dry_run {
        let mut human = human;
        human.push_str(&format!(
            "（试运行，没有写任何文件）将导入 {} 章、跳过 {} 章。\n",
            plan.imported.len(),
            plan.skipped.len()
        ));
        return Report::new(&data, human);
    }
    let project = match existing {
        Some(p) => p,
        None => create_project(&dir, &source, args)?,
    };
    let bar = progress(global, &plan);
    let stale = super::stale_after(&project)?;
    let written = novel_store::import::write(
        &project,
        &plan,
        &m.sections,
        data.new_project,
        stale,
        &|| bar.inc(1),
    );
    bar.finish_and_clear();
    let written = written.map_err(import_error)?;
    data.project = Some(project.root.display().to_string());
    let human = human + &written_human(&plan, written.as_ref(), &mut data);
    Report::new(&data, human)
}

fn create_project(dir: &Path, source: &Path, args: &ImportArgs) -> Result<Project, CliError> {
    let stem = source
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .filter(|s| !s.is_empty() && s != ".");
    novel_store::init::init_project(
        dir,
        &novel_store::init::InitOptions {
            title: args.title.clone().or(stem),
            genre: args.genre.clone(),
            style: None,
        },
    )?;
    Ok(Project::open(dir)?)
}

/// A bar on stderr while the files are prepared and written; hidden with `--json` or when
/// stderr is not a terminal.
fn progress(global: &GlobalArgs, plan: &Plan) -> indicatif::ProgressBar {
    let n = plan
        .rows
        .iter()
        .filter(|r| r.action == Action::Import)
        .count() as u64;
    if global.json || !std::io::stderr().is_terminal() {
        return indicatif::ProgressBar::hidden();
    }
    let bar =
        indicatif::ProgressBar::with_draw_target(Some(n), indicatif::ProgressDrawTarget::stderr());
    if let Ok(style) =
        indicatif::ProgressStyle::with_template("导入 {bar:30} {pos}/{len} 章节与附录")
    {
        bar.set_style(style);
    }
    bar
}

fn refusal(code: &'static str, plan: &Plan, args: &ImportArgs) -> CliError {
    let n = plan
        .problems
        .iter()
        .filter(|p| p.finding.code == code)
        .count();
    let (message, hint) = match code {
        "E_IMPORT_ORDER" => (
            format!("书稿的章号有 {n} 处问题（缺章、重号或顺序颠倒），没有导入任何内容"),
            if args.renumber {
                "检查书稿：补上缺的章节，或删去重复的章节".to_string()
            } else {
                "核对上面的列表：修正书稿里的章号后重新导入，或加 --renumber 按出现顺序重新编号"
                    .to_string()
            },
        ),
        "E_IMPORT_EMPTY" => (
            format!("书稿中有 {n} 个没有正文的章节，没有导入任何内容"),
            "常见原因是书稿开头的目录被当成了章节：删去目录或空章节后重新导入".to_string(),
        ),
        _ => (
            format!("书稿的卷序有 {n} 处问题，没有导入任何内容"),
            "卷号应逐卷递增，且不早于项目当前的卷：修正书稿里的卷标题后重新导入".to_string(),
        ),
    };
    CliError::new(code, message, hint, Exit::Problems)
}

fn plan_data<'a>(
    plan: &'a Plan,
    source: &Path,
    m: &'a Manuscript,
    args: &ImportArgs,
    new: bool,
) -> ImportData<'a> {
    let imported_chars: usize = plan
        .rows
        .iter()
        .filter(|r| r.action == Action::Import)
        .map(|r| r.chars)
        .sum();
    ImportData {
        source: SourceData {
            path: source.display().to_string(),
            files: &m.files,
        },
        dry_run: args.dry_run,
        renumber: args.renumber,
        project: None,
        new_project: new,
        rows: &plan.rows,
        problems: &plan.problems,
        imported: &plan.imported,
        skipped: &plan.skipped,
        volumes: &plan.volumes,
        chars: CharsData {
            source: plan.source_chars,
            imported: imported_chars,
        },
        written: None,
        orchestrator_state: None,
        last_completed_chapter: None,
        backfill: None,
    }
}

fn row_label(r: &novel_core::import::Row) -> String {
    let name = match (r.kind, r.chapter) {
        (SectionKind::Chapter, Some(n)) => format!("第{n}章"),
        _ => r.name.clone(),
    };
    let renumbered = match (r.chapter, r.source_number) {
        (Some(n), Some(s)) if n != s => format!("（原第{s}章）"),
        _ => String::new(),
    };
    format!("{name}{renumbered}")
}

fn plan_human(plan: &Plan) -> String {
    let mut out = String::from("章节\t标题\t字数\t出处\n");
    for r in &plan.rows {
        let skip = if r.action == Action::Skip {
            format!("\t跳过：{}", r.reason)
        } else {
            String::new()
        };
        out.push_str(&format!(
            "{}\t{}\t{}\t{}:{}{skip}\n",
            row_label(r),
            if r.title.is_empty() { "—" } else { &r.title },
            r.chars,
            r.file,
            r.line
        ));
    }
    out.push_str(&format!(
        "合计：{} 个章节与附录，{} 字\n",
        plan.rows.len(),
        plan.source_chars
    ));
    for p in &plan.problems {
        out.push_str(&p.finding.render());
    }
    out
}

fn written_human<'a>(
    plan: &Plan,
    written: Option<&'a Written>,
    data: &mut ImportData<'a>,
) -> String {
    let Some(w) = written else {
        return format!(
            "没有要导入的内容：{} 章都已在项目中，未写任何文件。\n",
            plan.skipped.len()
        );
    };
    let cp = &w.checkpoint;
    data.written = Some(WrittenData {
        files: w.files,
        schedules: &w.schedules,
        kept_volumes: &w.kept,
    });
    data.orchestrator_state = Some(&cp.orchestrator_state);
    data.last_completed_chapter = Some(cp.last_completed_chapter);
    data.backfill = novel_core::import::backfill_action(cp).map(|a| {
        let chapters = novel_core::import::backfill_chapters(a);
        BackfillAction {
            id: &a.id,
            kind: &a.kind,
            next: chapters.first().copied(),
            chapters,
        }
    });
    let mut out = format!(
        "已导入 {} 章（第 {}–{} 章）",
        plan.imported.len(),
        plan.imported.first().copied().unwrap_or(0),
        plan.imported.last().copied().unwrap_or(0)
    );
    if !plan.skipped.is_empty() {
        out.push_str(&format!("，跳过已有的 {} 章", plan.skipped.len()));
    }
    out.push_str(&format!(
        "；共写入 {} 个文件。最后完成的章节：第 {} 章。\n下一步：在 Claude Code 中运行 /novel:start，逐章补全摘要、状态与故事线记忆（novel import backfill 查看进度）。\n",
        w.files, cp.last_completed_chapter
    ));
    out
}

fn backfill(global: &GlobalArgs, args: &BackfillArgs) -> Result<Report, CliError> {
    let project = super::project(global)?;
    if let Some(n) = args.done {
        let stale = super::stale_after(&project)?;
        let left = novel_store::import::backfill_done(&project, n, stale).map_err(import_error)?;
        let human = match left.first() {
            Some(next) => format!(
                "第 {n} 章已补全；还有 {} 章，下一章第 {next} 章。\n",
                left.len()
            ),
            None => format!("第 {n} 章已补全：导入的章节全部补全，待处理事项已关闭。\n"),
        };
        let data = BackfillDone {
            done: n,
            left: left.len(),
            next: left.first().copied(),
            finished: left.is_empty(),
        };
        return Report::new(&data, human);
    }
    let status = novel_store::import::backfill_status(&project).map_err(import_error)?;
    let Some((left, step)) = status else {
        let data = BackfillProgress {
            pending: false,
            left: 0,
            chapters: &[],
            next: None,
            step: None,
        };
        return Report::new(&data, "没有待补全的导入章节。\n");
    };
    let mut human = format!(
        "待补全 {} 章，下一章第 {} 章（摘要 {}，状态增量写到 {}）。\n",
        left.len(),
        step.chapter,
        step.summary,
        step.delta
    );
    for m in &step.missing {
        human.push_str(&format!("  缺：{m}\n"));
    }
    if step.missing.is_empty() {
        human.push_str(&format!(
            "  已齐：运行 novel import backfill --done {}\n",
            step.chapter
        ));
    }
    let data = BackfillProgress {
        pending: true,
        left: left.len(),
        chapters: &left,
        next: Some(step.chapter),
        step: Some(&step),
    };
    Report::new(&data, human)
}
