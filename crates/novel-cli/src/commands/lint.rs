//! `novel lint [FILE…] [--chapter N | --all]`: AI clichés (the project's `ai-blacklist.json`
//! and the style profile's forbidden words), structural patterns and sentence-pattern
//! repetition, with a pass/fail summary against `novel.json` → `lint` (PRD §7 Layer 4).
//! Exit 1 when a chapter is over a threshold.
//!
//! Also home of what the text commands share (`count`, `style`): which chapter files a command
//! reads, and the project's settings, blacklist and style profile.

use std::path::{Path, PathBuf};

use clap::Args;
use serde::Serialize;
use serde_json::json;

use novel_core::model::{AiBlacklist, Checkpoint, StyleProfile};
use novel_store::layout::{self, Entry};
use novel_store::settings;
use novel_store::{Project, StoreError, io};
use novel_text::finding::Finding;
use novel_text::lint::{LintSummary, Linter};
use novel_text::segment::Document;

use crate::cli::GlobalArgs;
use crate::output::{CliError, Exit, Report};

/// The help layout of the top-level commands, for the subcommands defined beside their work.
pub(crate) use crate::cli::HELP_TEMPLATE;

/// Which chapter files a text command reads.
#[derive(Debug, Clone, Default, Args)]
pub struct ChapterSelection {
    /// 章节文件（默认：正在写的章节，即 staging/chapters/ 中断点 inflight_chapter 那一章）
    #[arg(value_name = "文件", help_heading = "参数")]
    pub files: Vec<PathBuf>,
    /// 第 N 章（chapters/chapter-NNN.md；未提交时用 staging 中的稿子）
    #[arg(long, value_name = "N", conflicts_with_all = ["files", "all"])]
    pub chapter: Option<u32>,
    /// 全部已提交章节（chapters/ 下的 chapter-NNN.md）
    #[arg(long, conflicts_with = "files")]
    pub all: bool,
}

#[derive(Debug, Args)]
#[command(
    after_help = "规则：黑名单短语（最长优先、不重复计数；narration_only 的短语在「」“”『』对话内不计，paragraph_start_only 的只在段首计）、句式规则（各有每千字上限）、句式重复（相邻 5 句中同句架的重复须少于 2 句；同一句首在相邻 5 句中出现 3 次才算重复，两句以同一人名开头不算；连续 3 句同句首或同句架）。密度 = 命中数 ÷（非空白字符数 ÷ 1000），黑名单须低于 novel.json 的 lint.blacklist_per_1000（默认 3）。超标时退出码为 1。"
)]
pub struct LintArgs {
    #[command(flatten)]
    pub select: ChapterSelection,
}

/// A chapter file to read: where it is and how to show it.
pub(crate) struct Input {
    pub path: PathBuf,
    pub shown: String,
}

/// The project of this invocation, if there is one (`--project` must be one).
pub(crate) fn find_project(global: &GlobalArgs) -> Result<Option<Project>, CliError> {
    match &global.project {
        Some(_) => super::project(global).map(Some),
        None => Ok(std::env::current_dir()
            .ok()
            .and_then(|cwd| Project::discover(&cwd).ok())),
    }
}

fn no_chapter(message: String, hint: &str) -> CliError {
    CliError::new("E_NO_CHAPTER", message, hint, Exit::Usage)
}

/// Resolves the selection to files, in chapter order for `--all`.
pub(crate) fn resolve_inputs(
    global: &GlobalArgs,
    select: &ChapterSelection,
) -> Result<(Option<Project>, Vec<Input>), CliError> {
    let project = find_project(global)?;
    let shown_of = |path: &Path| match project.as_ref().and_then(|p| p.relative(path)) {
        Some(rel) if !rel.is_empty() => rel,
        _ => path.display().to_string(),
    };
    if !select.files.is_empty() {
        let mut inputs = Vec::new();
        for f in &select.files {
            if !f.is_file() {
                return Err(
                    StoreError::io(f, std::io::Error::from(std::io::ErrorKind::NotFound)).into(),
                );
            }
            inputs.push(Input {
                path: f.clone(),
                shown: shown_of(f),
            });
        }
        return Ok((project, inputs));
    }
    // Without files the chapters come from the project: not finding it is the error.
    let proj = match project {
        Some(p) => p,
        None => super::project(global)?,
    };
    let inputs = if let Some(n) = select.chapter {
        let committed = layout::chapter_file(n);
        let staged = format!("staging/{committed}");
        let rel = [committed.clone(), staged]
            .into_iter()
            .find(|rel| proj.path(rel).is_file())
            .ok_or_else(|| {
                no_chapter(
                    format!("找不到第 {n} 章：{committed} 不存在，staging 中也没有"),
                    "检查章节号；novel lint --all 检查全部已提交章节",
                )
            })?;
        vec![Input {
            path: proj.path(&rel),
            shown: rel,
        }]
    } else if select.all {
        let files = committed_chapters(&proj)?;
        if files.is_empty() {
            return Err(no_chapter(
                "chapters/ 中还没有已提交的章节".into(),
                "章节提交后再检查，或直接指定文件",
            ));
        }
        files
            .into_iter()
            .map(|(_, rel)| Input {
                path: proj.path(&rel),
                shown: rel,
            })
            .collect()
    } else {
        let checkpoint: Checkpoint = io::read_json(&proj.path(layout::CHECKPOINT), "断点文件")?;
        let Some(n) = checkpoint.inflight_chapter else {
            return Err(no_chapter(
                "现在没有正在写的章节（断点中 inflight_chapter 为空）".into(),
                "指定文件，或用 --chapter N、--all 检查已提交的章节",
            ));
        };
        let rel = format!("staging/{}", layout::chapter_file(n));
        if !proj.path(&rel).is_file() {
            return Err(no_chapter(
                format!("第 {n} 章的暂存稿 {rel} 还不存在"),
                "等 ChapterWriter 写出初稿后再检查，或用 --chapter N 指定其他章节",
            ));
        }
        vec![Input {
            path: proj.path(&rel),
            shown: rel,
        }]
    };
    Ok((Some(proj), inputs))
}

/// `chapters/chapter-NNN.md` files of the project as (chapter, relative path), in order.
pub(crate) fn committed_chapters(proj: &Project) -> Result<Vec<(u32, String)>, CliError> {
    let dir = proj.path("chapters");
    let mut out = Vec::new();
    let entries = match std::fs::read_dir(&dir) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(out),
        Err(e) => return Err(StoreError::io(&dir, e).into()),
    };
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let rel = format!("chapters/{name}");
        if let Entry::ChapterText { chapter } = layout::classify(&rel) {
            out.push((chapter, rel));
        }
    }
    out.sort();
    Ok(out)
}

/// The project's `ai-blacklist.json`, or the shipped template outside a project.
pub(crate) fn load_blacklist(project: Option<&Project>) -> Result<(AiBlacklist, String), CliError> {
    match project {
        Some(p) if p.path(layout::AI_BLACKLIST).is_file() => Ok((
            io::read_json(&p.path(layout::AI_BLACKLIST), "AI 用语黑名单")?,
            layout::AI_BLACKLIST.to_string(),
        )),
        _ => {
            let list = serde_json::from_str(novel_store::init::AI_BLACKLIST_TEMPLATE)
                .expect("the shipped blacklist template parses");
            Ok((list, "内置模板 templates/ai-blacklist.json".to_string()))
        }
    }
}

/// The project's `style-profile.json`, if there is one.
pub(crate) fn load_profile(project: Option<&Project>) -> Result<Option<StyleProfile>, CliError> {
    match project {
        Some(p) if p.path(layout::STYLE_PROFILE).is_file() => Ok(Some(io::read_json(
            &p.path(layout::STYLE_PROFILE),
            "风格指纹",
        )?)),
        _ => Ok(None),
    }
}

/// A finding with the file it is in (the JSON shape of DESIGN.md).
#[derive(Serialize)]
struct FileFinding<'a> {
    path: &'a str,
    #[serde(flatten)]
    finding: &'a Finding,
}

pub fn run(global: &GlobalArgs, args: LintArgs) -> Result<Report, CliError> {
    let (project, inputs) = resolve_inputs(global, &args.select)?;
    let settings = settings::load_or_default(project.as_ref())?;
    let (list, source) = load_blacklist(project.as_ref())?;
    let forbidden = load_profile(project.as_ref())?
        .map(|p| p.forbidden_words)
        .unwrap_or_default();
    let linter = Linter::new(&list, &forbidden, settings.lint.clone()).map_err(|e| {
        CliError::new(
            "E_SCHEMA",
            format!("{source}：{e}"),
            "修正该句式规则的 regex（Rust 正则语法），或删去这条规则",
            Exit::Usage,
        )
    })?;

    let mut human = String::new();
    let mut files = Vec::new();
    let mut all_findings: Vec<serde_json::Value> = Vec::new();
    let mut failed = 0;
    for input in &inputs {
        let text = io::read_text(&input.path)?;
        let report = linter.lint(&Document::new(&text));
        for f in &report.findings {
            human.push_str(&format!(
                "{}:{}:{}: {}: {}\n    {}\n",
                input.shown, f.line, f.col, f.rule, f.message, f.excerpt
            ));
            all_findings.push(
                serde_json::to_value(FileFinding {
                    path: &input.shown,
                    finding: f,
                })
                .expect("findings serialise"),
            );
        }
        human.push_str(&summary_line(&input.shown, &report.summary));
        if !report.summary.pass {
            failed += 1;
        }
        files.push(
            json!({"path": input.shown, "pass": report.summary.pass, "summary": report.summary}),
        );
    }
    let data = json!({
        "pass": failed == 0,
        "blacklist_source": source,
        "files": files,
        "findings": all_findings,
    });
    if failed > 0 {
        let err = CliError::new(
            "E_LINT",
            format!(
                "{failed} 个文件未通过 AI 痕迹检查（共 {} 个）",
                inputs.len()
            ),
            "按 文件:行:列 逐条改写（StyleRefiner 可据此润色）；确认无误的短语可用 novel blacklist whitelist 加入白名单",
            Exit::Problems,
        );
        return Err(err.with_details(data, human));
    }
    human.push_str(&format!("检查通过：{} 个文件。\n", inputs.len()));
    Ok(Report { data, human })
}

fn summary_line(shown: &str, s: &LintSummary) -> String {
    let patterns: usize = s.patterns.iter().map(|p| p.hits).sum();
    let mut line = format!(
        "{shown}：{} 字符，黑名单 {} 次（{:.2} 次/千字，须低于 {}），句式 {} 次，句式重复 {} 处",
        s.chars,
        s.blacklist.hits,
        s.blacklist.per_1000,
        s.blacklist.limit,
        patterns,
        s.repetition.violations
    );
    if s.pass {
        line.push_str("：通过\n");
    } else {
        line.push_str(&format!("：未通过（{}）\n", s.failures.join("；")));
    }
    line
}
