//! `novel validate [PATH…] [--kind KIND]`: every schema error and cross-file problem of the
//! project (or of the given files), each a [`Diagnostic`] rendered as `file: /json/pointer:
//! code[级别]: message`.

use std::path::{Path, PathBuf};

use serde::Serialize;

use novel_core::FileKind;
use novel_core::diagnostic::{Counts, Diagnostic, counts, render_all};
use novel_core::validate::check_project;
use novel_store::Project;
use novel_store::layout;
use novel_store::load::load_project;

use crate::args::{GlobalArgs, ValidateArgs};
use crate::output::{CliError, Exit, Report};

pub fn run(global: &GlobalArgs, args: ValidateArgs) -> Result<Report, CliError> {
    let forced_kind = match &args.kind {
        Some(name) => Some(FileKind::from_name(name).ok_or_else(|| {
            let all: Vec<&str> = FileKind::ALL.iter().map(|k| k.name()).collect();
            CliError::new(
                "E_USAGE",
                format!("不认识的文件类型：{name}"),
                format!("可选：{}", all.join("、")),
                Exit::Usage,
            )
        })?),
        None => None,
    };
    for p in &args.paths {
        if !p.exists() {
            return Err(CliError::new(
                "E_IO",
                format!("找不到 {}", p.display()),
                "检查路径是否写对（相对路径从当前目录算起）",
                Exit::Usage,
            ));
        }
    }

    let (findings, checked) = if args.paths.is_empty() {
        let project = super::project(global)?;
        let view = load_project(&project);
        let checked = view.docs.len() + view.markdown.len() + view.outlines.len();
        let mut findings = check_project(&view);
        findings.extend(judged(&project));
        findings.extend(empty_chapters(&project));
        findings.sort();
        (findings, checked)
    } else {
        validate_paths(global, &args.paths, forced_kind)?
    };
    if checked == 0 && !args.paths.is_empty() {
        // A path of no known kind: saying "0 files, passed" would read as a pass.
        return Err(CliError::new(
            "E_USAGE",
            format!(
                "没有可校验的文件：{} 不是项目约定的数据文件",
                args.paths
                    .iter()
                    .map(|p| p.display().to_string())
                    .collect::<Vec<_>>()
                    .join("、")
            ),
            "校验整个项目时不带路径；单个文件可用 --kind 指定类型，如 --kind state-delta",
            Exit::Usage,
        ));
    }
    render(findings, checked)
}

/// Chapters with no text (an empty chapter an import kept under its number): listed until the
/// author writes them. Only small files are read: a chapter with text is longer.
fn empty_chapters(project: &Project) -> Vec<Diagnostic> {
    let Ok(chapters) = novel_store::select::committed_chapters(project) else {
        return Vec::new();
    };
    chapters
        .into_iter()
        .filter_map(|(n, rel)| {
            let path = project.path(&rel);
            if std::fs::metadata(&path).ok()?.len() > 1024 {
                return None;
            }
            let text = novel_store::io::read_text(&path).ok()?;
            (novel_text::count::count(&text).chars == 0).then(|| {
                let mut d = Diagnostic::new(
                    "E_CHAPTER_EMPTY",
                    novel_core::diagnostic::Severity::Warning,
                    &rel,
                    format!("第 {n} 章没有正文"),
                    "",
                );
                d.chapter = Some(n);
                d
            })
        })
        .collect()
}

/// The in-flight chapter's staged evaluations held to the judge's contract (quotes from the
/// staged text, high rows in `violations`, objective rows, fixes, the fix review).
fn judged(project: &Project) -> Vec<Diagnostic> {
    novel_store::judging::check_inflight(project, &novel_text::normalize::normalize_str)
}

fn find_project(global: &GlobalArgs, paths: &[PathBuf]) -> Result<Option<Project>, CliError> {
    if global.project.is_some() {
        return super::project(global).map(Some);
    }
    if let Ok(cwd) = std::env::current_dir()
        && let Ok(p) = Project::discover(&cwd)
    {
        return Ok(Some(p));
    }
    Ok(paths.first().and_then(|p| {
        let start = if p.is_dir() {
            p.as_path()
        } else {
            p.parent().unwrap_or(Path::new("."))
        };
        Project::discover(start).ok()
    }))
}

fn validate_paths(
    global: &GlobalArgs,
    paths: &[PathBuf],
    forced: Option<FileKind>,
) -> Result<(Vec<Diagnostic>, usize), CliError> {
    let project = find_project(global, paths)?;
    let mut inside: Vec<String> = Vec::new();
    let mut outside: Vec<&PathBuf> = Vec::new();
    for p in paths {
        match project.as_ref().and_then(|proj| proj.relative(p)) {
            Some(rel) if forced.is_none() => inside.push(rel),
            _ => outside.push(p),
        }
    }
    let mut findings = Vec::new();
    let mut checked = 0;
    if let Some(proj) = &project
        && !inside.is_empty()
    {
        // Cross-file checks need the whole project; report only what concerns the given paths.
        let view = load_project(proj);
        let concerns = |file: &str| inside.iter().any(|rel| layout::within(file, rel));
        checked += view
            .docs
            .iter()
            .map(|d| d.file.as_str())
            .chain(view.markdown.iter().map(|m| m.file.as_str()))
            .chain(view.outlines.iter().map(String::as_str))
            .filter(|file| concerns(file))
            .count();
        findings.extend(
            check_project(&view)
                .into_iter()
                .chain(judged(proj))
                .filter(|f| concerns(&f.file)),
        );
    }
    for p in outside {
        checked += 1;
        findings.extend(validate_standalone(p, forced)?);
    }
    findings.sort();
    Ok((findings, checked))
}

/// A file outside any project: its kind comes from `--kind` or from its trailing path.
fn validate_standalone(path: &Path, forced: Option<FileKind>) -> Result<Vec<Diagnostic>, CliError> {
    let shown = path.display().to_string();
    let kind = forced.or_else(|| layout::kind_by_tail(path));
    let Some(kind) = kind else {
        return Err(CliError::new(
            "E_USAGE",
            format!("无法从文件名判断 {shown} 的类型"),
            "用 --kind 指定类型，如 --kind state-delta",
            Exit::Usage,
        ));
    };
    if path.is_dir() {
        return Err(CliError::new(
            "E_USAGE",
            format!("{shown} 是目录，且不在小说项目中"),
            "在项目中运行，或用 --project 指定项目",
            Exit::Usage,
        ));
    }
    Ok(novel_store::load::check_standalone(path, &shown, kind)?)
}

/// `novel validate`'s `--json` data.
#[derive(Serialize)]
struct ValidateData {
    files_checked: usize,
    errors: usize,
    warnings: usize,
    findings: Vec<Diagnostic>,
}

fn render(findings: Vec<Diagnostic>, checked: usize) -> Result<Report, CliError> {
    let Counts {
        error: errors,
        warning: warnings,
    } = counts(&findings);
    let mut human = render_all(&findings);
    let data = ValidateData {
        files_checked: checked,
        errors,
        warnings,
        findings,
    };
    if errors > 0 {
        let err = CliError::new(
            "E_VALIDATION",
            format!("校验未通过：{errors} 个错误，{warnings} 个警告（共检查 {checked} 个文件）"),
            "",
            Exit::Problems,
        );
        return Err(err.with_report(&data, human));
    }
    human.push_str(&format!(
        "校验通过：检查了 {checked} 个文件，0 个错误，{warnings} 个警告。\n"
    ));
    Report::new(&data, human)
}
