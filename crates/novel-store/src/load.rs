//! Loading a whole project (or some of its files) into a [`ProjectView`] for validation.
//! Unreadable or unparseable files become findings; nothing is skipped silently.

use std::path::Path;

use novel_core::validate::{Finding, JsonDoc, MarkdownDoc, ProjectView, Severity, parse_json};
use walkdir::WalkDir;

use crate::io::read_text;
use crate::layout::{self, Entry};
use crate::project::Project;

/// Directories whose JSON files the engine owns; an unrecognised JSON file there is reported.
const DATA_DIRS: [&str; 9] = [
    "state",
    "world",
    "characters",
    "storylines",
    "volumes",
    "foreshadowing",
    "evaluations",
    "logs",
    "staging",
];

fn finding(file: &str, code: &'static str, severity: Severity, message: String) -> Finding {
    Finding {
        file: file.to_string(),
        pointer: String::new(),
        severity,
        code,
        message,
    }
}

/// Reads every file of the project that the engine interprets.
pub fn load_project(project: &Project) -> ProjectView {
    let mut view = ProjectView::default();
    let walker = WalkDir::new(&project.root)
        .sort_by_file_name()
        .into_iter()
        .filter_entry(|e| {
            // Skip VCS and tool directories and the lock; keep `.checkpoint.json`.
            let name = e.file_name().to_string_lossy();
            e.depth() == 0
                || !(name.starts_with('.') && e.file_type().is_dir())
                    && name != "node_modules"
                    && name != "target"
        });
    for entry in walker {
        let entry = match entry {
            Ok(e) => e,
            Err(e) => {
                let file = e
                    .path()
                    .and_then(|p| project.relative(p))
                    .unwrap_or_default();
                view.preexisting.push(finding(
                    &file,
                    "E_IO",
                    Severity::Error,
                    format!("无法读取：{e}"),
                ));
                continue;
            }
        };
        let Some(rel) = project.relative(entry.path()) else {
            continue;
        };
        if entry.file_type().is_dir() {
            if let ["storylines", dir] = rel.split('/').collect::<Vec<_>>().as_slice() {
                view.storyline_dirs.push((*dir).to_string());
            }
            continue;
        }
        load_file(project.root.as_path(), &rel, &mut view);
    }
    view
}

/// Loads one project-relative file into the view.
pub fn load_file(root: &Path, rel: &str, view: &mut ProjectView) {
    let path = layout::join(root, rel);
    let name = rel.rsplit('/').next().unwrap_or(rel);
    if name.starts_with('.') && name != layout::CHECKPOINT {
        return; // temp files of an atomic write, editor swap files
    }
    match layout::classify(rel) {
        Entry::Json {
            kind,
            chapter,
            volume,
            slug,
        } => match read_text(&path) {
            Ok(text) => match parse_json(&text) {
                Ok(value) => view.docs.push(JsonDoc {
                    file: rel.to_string(),
                    kind,
                    value,
                    chapter_in_name: chapter,
                    volume_in_path: volume,
                    slug_in_name: slug,
                }),
                Err(e) => {
                    view.preexisting
                        .push(finding(rel, "E_JSON", Severity::Error, e.to_string()))
                }
            },
            Err(e) => view
                .preexisting
                .push(finding(rel, e.code(), Severity::Error, e.to_string())),
        },
        Entry::JsonLines(kind) => match read_text(&path) {
            Ok(text) => {
                for (i, line) in text.lines().enumerate() {
                    if line.trim().is_empty() {
                        continue;
                    }
                    let file = format!("{rel}:{}", i + 1);
                    match parse_json(line) {
                        Ok(value) => view.docs.push(JsonDoc {
                            file,
                            kind,
                            value,
                            chapter_in_name: None,
                            volume_in_path: None,
                            slug_in_name: None,
                        }),
                        Err(e) => view.preexisting.push(finding(
                            &file,
                            "E_JSON",
                            Severity::Error,
                            format!("JSON 格式错误（第 {} 列）：{}", e.column, e.message),
                        )),
                    }
                }
            }
            Err(e) => view
                .preexisting
                .push(finding(rel, e.code(), Severity::Error, e.to_string())),
        },
        Entry::ChapterText { chapter } | Entry::Summary { chapter } => {
            let is_summary = matches!(layout::classify(rel), Entry::Summary { .. });
            match read_text(&path) {
                Ok(text) => view.markdown.push(MarkdownDoc {
                    file: rel.to_string(),
                    chapter_in_name: Some(chapter),
                    head: text.lines().take(12).collect::<Vec<_>>().join("\n"),
                    is_summary,
                }),
                Err(e) => {
                    view.preexisting
                        .push(finding(rel, e.code(), Severity::Error, e.to_string()))
                }
            }
        }
        Entry::Misnamed { expected } => view.preexisting.push(finding(
            rel,
            "E_FILE_NAME",
            Severity::Error,
            format!("文件名不符合约定，应为 {expected}（N 为章节号，至少 3 位，如 chapter-048）"),
        )),
        Entry::Backup => {}
        Entry::Other => {
            let top = rel.split('/').next().unwrap_or("");
            if name.ends_with(".json") && DATA_DIRS.contains(&top) {
                view.preexisting.push(finding(
                    rel,
                    "E_UNKNOWN_FILE",
                    Severity::Warning,
                    "未识别的 JSON 文件（不在项目约定的位置），未做校验".to_string(),
                ));
            }
        }
    }
}
