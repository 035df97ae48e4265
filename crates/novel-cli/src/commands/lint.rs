//! `novel lint [FILE…] [--chapter N | --all]`: AI clichés (the project's `ai-blacklist.json`
//! and the style profile's forbidden words), structural patterns and sentence-pattern
//! repetition, with a pass/fail summary against `novel.json` → `lint` (PRD §7 Layer 4).
//! Exit 1 when a chapter is over a threshold. Which files are read is
//! `novel_store::select`'s; the blacklist and the style profile are loaded there too.

use clap::Args;
use serde::Serialize;

use novel_core::diagnostic::Diagnostic;
use novel_store::select::{load_blacklist, load_profile};
use novel_store::{io, settings};
use novel_text::lint::{LintSummary, Linter};
use novel_text::segment::Document;

use crate::args::{ChapterSelection, GlobalArgs};
use crate::output::{CliError, Exit, Report};

#[derive(Debug, Args)]
#[command(
    after_help = "规则：黑名单短语（最长优先、不重复计数；narration_only 的短语在「」“”『』对话内不计，paragraph_start_only 的只在段首计）、句式规则（各有每千字上限）、句式重复（相邻 5 句中同句架的重复须少于 2 句，连续 3 句同句架不行；整整 5 句连着以同一个非人名的句首开头也不行）。同一句首在相邻 5 句中出现 3 次或连续 3 句只是建议（警告，不影响通过）：人名（已登记的角色、本章里说过话的人、姓加名或称谓）开头是正常叙述；列举（年份、第一/第二、有的……）与诗词对句不参与。密度 = 命中数 ÷（非空白字符数 ÷ 1000），黑名单须低于 novel.json 的 lint.blacklist_per_1000（默认 3）。超标时退出码为 1。"
)]
pub struct LintArgs {
    #[command(flatten)]
    pub select: ChapterSelection,
}

/// `novel lint`'s `--json` data.
#[derive(Serialize)]
struct LintData<'a> {
    pass: bool,
    blacklist_source: &'a str,
    files: Vec<FileSummary<'a>>,
    findings: Vec<Diagnostic>,
}

/// One file's result.
#[derive(Serialize)]
struct FileSummary<'a> {
    path: &'a str,
    pass: bool,
    summary: LintSummary,
}

/// The project's linter: its blacklist, the style profile's forbidden words, `novel.json`'s
/// thresholds and the registered names.
fn linter(project: Option<&novel_store::Project>) -> Result<(Linter, String), CliError> {
    let settings = settings::load_or_default(project)?;
    let (list, source) = load_blacklist(project)?;
    let forbidden = load_profile(project)?
        .map(|p| p.forbidden_words)
        .unwrap_or_default();
    let linter = Linter::new(&list, &forbidden, settings.lint.clone())
        .map_err(|e| {
            CliError::new(
                "E_SCHEMA",
                format!("{source}：{e}"),
                "修正该句式规则的 regex（Rust 正则语法），或删去这条规则",
                Exit::Usage,
            )
        })?
        .with_cast(cast(project));
    Ok((linter, source))
}

/// The lint of one text as `novel lint` prints it (its findings, then the summary line), for a
/// packet: at most 20 findings are listed.
pub(crate) fn lint_one(
    project: &novel_store::Project,
    text: &str,
    shown: &str,
) -> Result<String, CliError> {
    let (linter, _) = linter(Some(project))?;
    let report = linter.lint(&Document::new(text));
    let mut out = String::new();
    let total = report.findings.len();
    for f in report.findings.into_iter().take(20) {
        out.push_str(&f.in_file(shown).render());
    }
    if total > 20 {
        out.push_str(&format!("（另有 {} 处未列出）\n", total - 20));
    }
    out.push_str(&summary_line(shown, &report.summary));
    Ok(out)
}

pub fn run(global: &GlobalArgs, args: LintArgs) -> Result<Report, CliError> {
    let (project, inputs) = super::resolve_inputs(global, &args.select)?;
    let (linter, source) = linter(project.as_ref())?;

    let mut human = String::new();
    let mut files = Vec::new();
    let mut all_findings = Vec::new();
    let mut failed = 0;
    for input in &inputs {
        let text = io::read_text(&input.path)?;
        let report = linter.lint(&Document::new(&text));
        for f in report.findings {
            let f = f.in_file(&input.shown);
            human.push_str(&f.render());
            all_findings.push(f);
        }
        human.push_str(&summary_line(&input.shown, &report.summary));
        if !report.summary.pass {
            failed += 1;
        }
        files.push(FileSummary {
            path: &input.shown,
            pass: report.summary.pass,
            summary: report.summary,
        });
    }
    let data = LintData {
        pass: failed == 0,
        blacklist_source: &source,
        files,
        findings: all_findings,
    };
    if failed > 0 {
        let err = CliError::new(
            "E_LINT",
            format!(
                "{failed} 个文件未通过 AI 痕迹检查（共 {} 个）",
                inputs.len()
            ),
            "",
            Exit::Problems,
        );
        return Err(err.with_report(&data, human));
    }
    human.push_str(&format!("检查通过：{} 个文件。\n", inputs.len()));
    Report::new(&data, human)
}

/// The registered names of the project (a sentence opening on one opens on a name). A
/// character file that does not load is `novel validate`'s to report: lint goes on without it.
fn cast(project: Option<&novel_store::Project>) -> Vec<String> {
    project
        .and_then(|p| novel_store::names::name_sources(p).ok())
        .map(|s| {
            novel_text::names::known_names(&s)
                .into_iter()
                .map(|k| k.name)
                .collect()
        })
        .unwrap_or_default()
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
    if s.repetition.advice > 0 {
        line.push_str(&format!("（另有句首重复建议 {} 处）", s.repetition.advice));
    }
    if s.pass {
        line.push_str("：通过\n");
    } else {
        line.push_str(&format!("：未通过（{}）\n", s.failures.join("；")));
    }
    line
}
