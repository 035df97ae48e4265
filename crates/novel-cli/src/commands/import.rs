//! `novel import SOURCE [--into DIR] [--dry-run] [--renumber | --start N] [--encoding NAME]
//! [--lossy] [--strip-furniture]` and `novel import backfill [--done N]`
//! (`docs/orchestration.md` §8c): a manuscript decoded (`novel_text::decode`, never guessing
//! silently), split by its heading grammar (`novel_text::chapters`), planned
//! (`novel_core::import`) and written all or nothing (`novel_store::import`); then the
//! Summarizer's backfill, chapter by chapter.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};

use clap::{Args, Subcommand};
use serde::Serialize;

use novel_core::import::{
    Action, Found, Furniture, Numbering, Plan, Problem, Row, Section, SectionKind, Suspect,
    VolumeHeading, VolumeRange,
};
use novel_core::model::OrchestratorState;
use novel_store::Project;
use novel_store::import::{BackfillStep, ImportError, Written};
use novel_text::chapters::{Options, folder_rank, folder_warnings, split, split_file};
use novel_text::decode::{Attempt, DecodeError, Decoded};

use crate::args::{GlobalArgs, HELP_TEMPLATE, chapter_number};
use crate::output::{CliError, Exit, Report};

/// `novel import`'s `--json` data: the plan, then what was written (`null` until written).
#[derive(Serialize)]
struct ImportData<'a> {
    source: SourceData<'a>,
    dry_run: bool,
    renumber: bool,
    start: Option<u32>,
    strip_furniture: bool,
    project: Option<String>,
    new_project: bool,
    rows: &'a [Row],
    problems: &'a [Problem],
    furniture: &'a [Furniture],
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
#[derive(Serialize, Clone)]
struct SourceFileData {
    file: String,
    encoding: &'static str,
    found_by: &'static str,
    /// 0–1: how sure the encoding is.
    confidence: f64,
    /// Characters replaced by U+FFFD (`--lossy` only).
    replaced: usize,
    /// Control characters dropped (`--lossy` only).
    removed: usize,
    /// NFC changed some characters.
    normalized: bool,
    malformed: bool,
}

impl SourceFileData {
    fn of(file: &str, d: &Decoded) -> SourceFileData {
        SourceFileData {
            file: file.to_string(),
            encoding: d.encoding,
            found_by: d.found_by,
            confidence: d.confidence,
            replaced: d.replaced,
            removed: d.removed,
            normalized: d.normalized,
            malformed: d.malformed(),
        }
    }

    /// `UTF-8（整个文件都是合法的 UTF-8）` and the like.
    fn human(&self) -> String {
        let how = match self.found_by {
            "bom" => "文件开头的 BOM 标明".to_string(),
            "nul_bytes" => "按换行符的字节判断".to_string(),
            "valid_utf8" => "整个文件都是合法的 UTF-8".to_string(),
            "ascii" => "只有 ASCII 字符".to_string(),
            "given" => "按 --encoding 指定".to_string(),
            "empty" => "空文件".to_string(),
            _ => format!("自动识别，可信度 {:.0}%", self.confidence * 100.0),
        };
        let mut out = format!("编码：{} {}（{how}）", self.file, self.encoding);
        if self.replaced > 0 {
            out.push_str(&format!(
                "；--lossy：{} 个字换成了「\u{fffd}」",
                self.replaced
            ));
        }
        if self.removed > 0 {
            out.push_str(&format!("；--lossy：去掉了 {} 个控制字符", self.removed));
        }
        if self.normalized {
            out.push_str("；部分字符统一成了 Unicode 标准形式（NFC）");
        }
        out.push('\n');
        out
    }
}

/// The `data` of `E_IMPORT_ENCODING`.
#[derive(Serialize)]
struct EncodingData<'a> {
    source: SourceData<'a>,
    file: &'a str,
    attempts: &'a [Attempt],
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
    /// The side file of the furniture taken out (`--strip-furniture`), if any.
    furniture_file: Option<String>,
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
    after_help = "识别的章节标题：第12章、第 12 章、第一百二十三章、第一百十回（旧版的省略写法）、第廿一回、第百章、第十二回、第12节、第12话、【第十二章】、Chapter 12，前面可以有「正文」、书名或「第一卷 卷名」；标题跟在空格、：、、、. 之后，或直接连写（第九章大团圆）。一行里章号后连着成词（第三回合、第二节课）或带句号逗号的，是正文，不是标题。卷标题：第一卷 …、卷一 …、第一部 …（对应 vol-NN）；序、序言、序章、楔子、引子、前言、番外、尾声、后记、完本感言、上架感言等保留为附录（extras/NN-名称.md），不编号，导出时放回原位；第零章也是附录；第一个标题之前的文字保留为「前言」。开头的目录（连续的空标题，后文又出现；前后有书名、作者、简介行也一样）留在前言里；同一章的分页（第七章（二），或两个标题间没有正文）并成一章，分页标题留在正文里；同一章号又出现一次、中间有正文的不合并：一字不差的只导入一份，内容不同的拒绝导入（--renumber 时作两章）。空章照样导入、章号不变（警告，novel validate 一直列出）。标题照原样保存（第一回 还是 第一回）。编码在整个文件上识别：UTF-8（可带 BOM）、GB18030/GBK、Big5、UTF-16；有坏字节、替换字符「\u{fffd}」或控制字符时拒绝并指出位置，--encoding 指定编码，--lossy 接受替换（会报告个数）。网站广告、网址、翻页导航、「（本章完）」、作者的话（求月票）在分章表后列出行号，--strip-furniture 把它们拿出正文，另存到 logs/import-furniture-*.txt；段落里夹着的网址或广告句只剪掉那一截，正文留着。一章也认不出、章号读不出或超出 99999、缺章、重号、顺序颠倒时拒绝导入（退出码 1），什么也不写；加 --renumber 按出现顺序重新编号；书稿是全书后一部分（从第 108 章开始）时加 --start 108（再加 --renumber 就从第 108 章起按出现顺序编号）。已有的章节从不覆盖，列为跳过。导入后用 novel import backfill 逐章补全摘要、状态与故事线记忆。"
)]
pub struct ImportArgs {
    #[command(subcommand)]
    pub command: Option<ImportCommand>,
    /// 书稿：一个 .txt/.md 文件，或放着章节文件（001.txt、第12章 标题.txt、chapter-012.md …）的文件夹
    #[arg(value_name = "书稿", help_heading = "参数", required = true)]
    pub source: Option<PathBuf>,
    /// 导入到这个目录（默认当前目录；没有项目时先按 novel init 新建）
    #[arg(long, value_name = "目录")]
    pub into: Option<PathBuf>,
    /// 只列出分章结果（章号、标题、字数、出处）、编码与问题，不写任何文件
    #[arg(long)]
    pub dry_run: bool,
    /// 按出现顺序重新编号（1..N，已有项目则接在最后一章之后），忽略书稿里的章号
    #[arg(long)]
    pub renumber: bool,
    /// 书稿是全书的后一部分，从第 N 章开始：新项目按书稿的章号导入（加 --renumber 时从第 N 章起按出现顺序编号）
    #[arg(long, value_name = "章", value_parser = start_chapter)]
    pub start: Option<u32>,
    /// 书稿的编码（utf-8、gbk、gb18030、big5、utf-16le …），不自动识别
    #[arg(long, value_name = "编码")]
    pub encoding: Option<String>,
    /// 接受坏字节（换成「\u{fffd}」）并去掉控制字符，报告个数
    #[arg(long)]
    pub lossy: bool,
    /// 把广告、网址、翻页导航、作者的话等行拿出正文，另存到 logs/import-furniture-*.txt
    #[arg(long)]
    pub strip_furniture: bool,
    /// 新项目的书名（默认取书稿文件名）
    #[arg(long, value_name = "书名")]
    pub title: Option<String>,
    /// 新项目的题材（如 玄幻、都市）
    #[arg(long, value_name = "题材")]
    pub genre: Option<String>,
}

/// `--start N`: a chapter number from 1.
fn start_chapter(s: &str) -> Result<u32, String> {
    match chapter_number(s)? {
        0 => Err("--start 从第 1 章起".to_string()),
        n => Ok(n),
    }
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
    /// Unreadable headings (errors) and a folder's warnings.
    problems: Vec<Problem>,
    furniture: Vec<Furniture>,
    suspects: Vec<Suspect>,
    files: Vec<SourceFileData>,
    /// (file, its first non-blank lines): what a manuscript without a chapter starts with.
    opening: (String, Vec<String>),
}

fn read_manuscript(path: &Path, args: &ImportArgs) -> Result<Manuscript, CliError> {
    let mut files = novel_store::import::read_source(path).map_err(import_error)?;
    let folder = path.is_dir();
    if folder {
        files.sort_by_key(|f| (folder_rank(&f.stem), f.shown.clone()));
    }
    let encoding = match &args.encoding {
        Some(name) => Some(
            novel_text::decode::encoding_for(name)
                .map_err(|e| CliError::new("E_USAGE", e.message(), e.hint(), Exit::Usage))?,
        ),
        None => None,
    };
    let decode_options = novel_text::decode::Options {
        encoding,
        lossy: args.lossy,
    };
    let options = Options {
        strip_furniture: args.strip_furniture,
    };
    let mut m = Manuscript {
        sections: Vec::new(),
        volumes: Vec::new(),
        chars: Vec::new(),
        problems: Vec::new(),
        furniture: Vec::new(),
        suspects: Vec::new(),
        files: Vec::new(),
        opening: (String::new(), Vec::new()),
    };
    for f in &files {
        let d = match novel_text::decode::decode(&f.bytes, decode_options) {
            Ok(d) => d,
            Err(e) => return Err(encoding_error(path, &m.files, &f.shown, &e)),
        };
        m.files.push(SourceFileData::of(&f.shown, &d));
        let text = if f.markdown {
            novel_text::export::unescape_markdown_text(&d.text)
        } else {
            d.text
        };
        if m.opening.1.is_empty() {
            m.opening = (
                f.shown.clone(),
                text.lines()
                    .map(str::trim)
                    .filter(|l| !l.is_empty())
                    .take(5)
                    .map(str::to_string)
                    .collect(),
            );
        }
        m.problems.extend(private_use_warning(&f.shown, &text));
        let part = if folder {
            split_file(&text, &f.shown, &f.stem, options)
        } else {
            split(&text, &f.shown, options)
        };
        if folder {
            m.problems
                .extend(folder_warnings(&f.stem, &f.shown, &part.sections));
        }
        m.problems.extend(part.problems);
        m.furniture.extend(part.furniture);
        m.suspects.extend(part.suspects);
        m.sections.extend(part.sections);
        m.volumes.extend(part.volumes);
    }
    if m.opening.0.is_empty() {
        m.opening.0 = files.first().map(|f| f.shown.clone()).unwrap_or_default();
    }
    m.chars = m
        .sections
        .iter()
        .map(|s| novel_text::count::count(&s.body).chars)
        .collect();
    Ok(m)
}

/// A warning for a file holding private-use characters (a site's scrambled font): where they
/// are, and that they count 0 字.
fn private_use_warning(file: &str, text: &str) -> Option<Problem> {
    let (n, lines) = novel_text::count::private_use_lines(text);
    let first = *lines.first()?;
    let shown: Vec<String> = lines.iter().take(10).map(usize::to_string).collect();
    let more = if lines.len() > 10 { "……" } else { "" };
    Some(Problem::warning(
        novel_core::import::ProblemKind::PrivateUse,
        file,
        first,
        format!(
            "有 {n} 个私用区字符（第 {}{more} 行）：多半是网站防复制的字体，别处显示不出字，不计字数",
            shown.join("、")
        ),
        "用原网站的字形对照把它们换回汉字，或从别的版本导入；不处理也能导入，字照原样保存",
    ))
}

/// `E_IMPORT_ENCODING` (exit 1): the file, what was tried and where it breaks.
fn encoding_error(
    path: &Path,
    decoded: &[SourceFileData],
    file: &str,
    e: &DecodeError,
) -> CliError {
    if let DecodeError::UnknownEncoding { .. } = e {
        return CliError::new("E_USAGE", e.message(), e.hint(), Exit::Usage);
    }
    let attempts: Vec<Attempt> = match e {
        DecodeError::Undecodable { attempts } => attempts.clone(),
        _ => Vec::new(),
    };
    let data = EncodingData {
        source: SourceData {
            path: path.display().to_string(),
            files: decoded,
        },
        file,
        attempts: &attempts,
    };
    CliError::new(
        "E_IMPORT_ENCODING",
        format!("{file}：{}，没有导入任何内容", e.message()),
        e.hint(),
        Exit::Problems,
    )
    .with_report(&data, String::new())
}

fn import(global: &GlobalArgs, args: &ImportArgs) -> Result<Report, CliError> {
    let source = args.source.clone().unwrap_or_default();
    let m = read_manuscript(&source, args)?;
    let dir = args
        .into
        .clone()
        .or_else(|| global.project.clone())
        .unwrap_or_else(|| ".".into());
    let existing = Project::open(&dir).ok();
    let target = novel_store::import::target_for(existing.as_ref()).map_err(import_error)?;
    let fresh = target.new_project;
    let found = Found {
        volumes: &m.volumes,
        suspects: &m.suspects,
        opening: (&m.opening.0, &m.opening.1),
    };
    let numbering = Numbering {
        renumber: args.renumber,
        start: args.start,
    };
    let mut plan = novel_core::import::plan(&m.sections, &m.chars, &found, &target, numbering);
    plan.problems.extend(m.problems.iter().cloned());
    let mut data = plan_data(&plan, &source, &m, args, fresh);
    let human = plan_human(&plan, &m, args);
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
    let bar = progress(global, &plan);
    let stripped: Vec<Furniture> = if args.strip_furniture {
        m.furniture.clone()
    } else {
        Vec::new()
    };
    let new_project = data.new_project;
    let write = |project: &Project| {
        let stale = super::stale_after(project)?;
        novel_store::import::write(
            project,
            &plan,
            &m.sections,
            &stripped,
            new_project,
            stale,
            &|| bar.inc(1),
        )
        .map_err(import_error)
    };
    // Into a new directory, the book appears whole once everything is written, or not at all.
    let (root, written) = match existing {
        Some(p) => {
            let written = write(&p);
            (p.root, written)
        }
        None => match create_project(&dir, &source, args, write) {
            Ok((root, written)) => (root, Ok(written)),
            Err(e) => (dir.clone(), Err(e)),
        },
    };
    bar.finish_and_clear();
    let written = written?;
    data.project = Some(root.display().to_string());
    let side = (!stripped.is_empty()).then(|| novel_store::import::furniture_file(&plan));
    let human = human + &written_human(&plan, written.as_ref(), side, &mut data);
    Report::new(&data, human)
}

/// A new book in `dir` with the manuscript `write`n into it while it is still private: it
/// appears whole, or not at all. Its root and what `write` returned.
fn create_project<T>(
    dir: &Path,
    source: &Path,
    args: &ImportArgs,
    write: impl FnOnce(&Project) -> Result<T, CliError>,
) -> Result<(std::path::PathBuf, T), CliError> {
    let stem = source
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .filter(|s| !s.is_empty() && s != ".");
    let (report, written) = novel_store::init::init_then(
        dir,
        &novel_store::init::InitOptions {
            title: args.title.clone().or(stem),
            genre: args.genre.clone(),
            style: None,
        },
        write,
    )?;
    Ok((report.root, written))
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
    let first = plan.problems.iter().find(|p| p.finding.code == code);
    let (message, hint) = match code {
        "E_IMPORT_NO_CHAPTERS" => (
            first.map_or_else(String::new, |p| p.finding.message.clone()) + "，没有导入任何内容",
            first.map_or_else(String::new, |p| p.finding.hint.clone()),
        ),
        "E_IMPORT_HEADING" => (
            format!("书稿中有 {n} 个像章节标题、却读不出章号的行，没有导入任何内容"),
            "把这些标题的章号改成 1 以上的整数（12 或 十二）；本来就不是标题的，改写这一行的开头"
                .to_string(),
        ),
        "E_IMPORT_NUMBER" => (
            first.map_or_else(String::new, |p| p.finding.message.clone()) + "，没有导入任何内容",
            "一个项目最多 99999 章：把书稿拆开，或检查是不是把别的数字当成了章号".to_string(),
        ),
        "E_IMPORT_ORDER" => (
            format!("书稿的章号有 {n} 处问题（缺章、重号或顺序颠倒），没有导入任何内容"),
            if args.renumber {
                "检查书稿：补上缺的章节，或删去重复的章节".to_string()
            } else if let Some(p) = plan.problems.iter().find(|p| {
                p.finding.code == code
                    && (p.finding.hint.contains("全书的后一部分时加 --start")
                        || p.kind == novel_core::import::ProblemKind::Duplicate)
            }) {
                p.finding.hint.clone()
            } else {
                "核对上面的列表：修正书稿里的章号后重新导入，或加 --renumber 按出现顺序重新编号"
                    .to_string()
            },
        ),
        "E_IMPORT_EMPTY" => (
            format!("书稿中有 {n} 个没有正文、后面又出现一次的章节，没有导入任何内容"),
            "常见原因是书稿开头的目录被当成了章节：删去目录（或目录前后的书名、简介行）后重新导入"
                .to_string(),
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
        start: args.start,
        strip_furniture: args.strip_furniture,
        project: None,
        new_project: new,
        rows: &plan.rows,
        problems: &plan.problems,
        furniture: &m.furniture,
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

fn row_label(r: &Row) -> String {
    match (r.kind, r.chapter) {
        (SectionKind::Chapter, None) => format!("第{}章", r.source_number.unwrap_or(0)),
        (SectionKind::Chapter, Some(n)) if r.source_number == Some(n) => format!("第{n}章"),
        (SectionKind::Chapter, Some(n)) => match r.source_number {
            Some(s) => format!("第{n}章（原第{s}章）"),
            None => format!("第{n}章"),
        },
        _ => r.name.clone(),
    }
}

/// How many furniture lines the human output lists (the JSON has them all).
const FURNITURE_SHOWN: usize = 60;

fn plan_human(plan: &Plan, m: &Manuscript, args: &ImportArgs) -> String {
    let mut out = String::new();
    for f in &m.files {
        out.push_str(&f.human());
    }
    out.push_str("章节\t标题（原文）\t字数\t出处\n");
    for r in &plan.rows {
        let skip = match r.action {
            Action::Skip => format!("\t跳过：{}", r.reason),
            Action::Duplicate => format!("\t不导入（重复）：{}", r.reason),
            Action::Import => String::new(),
        };
        let pages = if r.merged.is_empty() {
            String::new()
        } else {
            format!("（合并了 {} 页）", r.merged.len() + 1)
        };
        let heading = if r.heading.is_empty() {
            "—"
        } else {
            &r.heading
        };
        out.push_str(&format!(
            "{}\t{heading}{pages}\t{}\t{}:{}{skip}\n",
            row_label(r),
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
    if !m.furniture.is_empty() {
        let what = if args.strip_furniture {
            "已拿出正文，导入时另存"
        } else {
            "仍在正文里；加 --strip-furniture 拿出正文并另存"
        };
        out.push_str(&format!(
            "像是网站内容或作者的话的行，共 {} 行（{what}）：\n",
            m.furniture.len()
        ));
        for f in m.furniture.iter().take(FURNITURE_SHOWN) {
            let text: String = f.text.chars().take(40).collect();
            out.push_str(&format!("  {}:{}\t{}\t{text}\n", f.file, f.line, f.label));
        }
        if m.furniture.len() > FURNITURE_SHOWN {
            out.push_str(&format!(
                "  ……另有 {} 行（--json 的 furniture 列出全部）\n",
                m.furniture.len() - FURNITURE_SHOWN
            ));
        }
    }
    for p in &plan.problems {
        out.push_str(&p.finding.render());
    }
    out
}

fn written_human<'a>(
    plan: &Plan,
    written: Option<&'a Written>,
    furniture_file: Option<String>,
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
        furniture_file: furniture_file.clone(),
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
    let extras = plan
        .rows
        .iter()
        .filter(|r| r.kind != SectionKind::Chapter && r.action == Action::Import)
        .count();
    if extras > 0 {
        out.push_str(&format!("和 {extras} 篇附录"));
    }
    if !plan.skipped.is_empty() {
        out.push_str(&format!("，跳过已有的 {} 章", plan.skipped.len()));
    }
    out.push_str(&format!(
        "；共写入 {} 个文件。最后完成的章节：第 {} 章。\n",
        w.files, cp.last_completed_chapter
    ));
    if let Some(f) = furniture_file {
        out.push_str(&format!("拿出正文的行另存在 {f}。\n"));
    }
    out.push_str("下一步：在 Claude Code 中运行 /novel:start，逐章补全摘要、状态与故事线记忆（novel import backfill 查看进度）。\n");
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
