//! Loading a whole project (or some of its files) into a [`ProjectView`] for validation.
//! Unreadable or unparseable files become findings (and are recorded by kind, so nothing that
//! refers into them is misjudged); required files that are absent become `E_MISSING`; nothing
//! is skipped silently.
//!
//! Layer: facts — figures and checks derived from the book (reads only); above the writers.

use novel_core::context::outline::OutlineError;
use std::path::Path;

use novel_core::FileKind;
use novel_core::diagnostic::{Diagnostic, Severity};
use novel_core::validate::{
    FailedDoc, JsonDoc, JsonSyntaxError, MarkdownDoc, ProjectView, check_file, parse_json,
};
use walkdir::WalkDir;

use crate::error::StoreError;
use crate::io::read_text;
use crate::layout::{self, Entry};
use crate::project::Project;

/// Directories whose JSON files the engine owns; an unrecognised JSON file there is reported.
const DATA_DIRS: [&str; 10] = [
    "memory",
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

/// Files a project cannot do without: what `novel init` creates and the engine reads as the
/// project's registries, state and settings (the narrative Markdown under `world/`, the
/// changelogs and storyline memories are the author's and stay optional). With each, how to
/// get it back.
pub const REQUIRED: [(&str, &str); 11] = [
    (
        layout::SETTINGS,
        "写入 {}（全部设置取默认值）即可恢复，再按需填写 title、genre 等",
    ),
    (
        layout::BRIEF,
        "重新写一份创作纲领（格式见 novel init 新建项目中的 brief.md）",
    ),
    (
        layout::STYLE_PROFILE,
        "从备份恢复，或在别处 novel init 一个新项目后复制它的 style-profile.json（之后可重新分析风格）",
    ),
    (
        layout::AI_BLACKLIST,
        "从备份恢复，或在别处 novel init 一个新项目后复制它的 ai-blacklist.json（默认黑名单）",
    ),
    (
        layout::WORLD_RULES,
        "从备份恢复；没有世界规则时写入 {\"rules\": []}",
    ),
    (
        layout::RELATIONSHIPS,
        "从备份恢复；没有人物关系时写入 {\"relationships\": []}",
    ),
    (
        layout::STORYLINES,
        "从备份恢复，或在别处 novel init 一个新项目后复制它的 storylines.json（含默认主线 main_arc）再补回各条故事线",
    ),
    (
        layout::STORYLINE_SPEC,
        "从备份恢复，或在别处 novel init 一个新项目后复制它的 storyline-spec.json（默认 LS-001..LS-005）",
    ),
    (
        layout::CURRENT_STATE,
        "先写入 {\"schema_version\": 1, \"state_version\": 0, \"last_updated_chapter\": 0}，再运行 novel state rebuild --write 从 state/changelog.jsonl 回放出完整状态",
    ),
    (
        layout::CHANGELOG,
        "从备份恢复；确实没有任何变更记录时新建一个空文件",
    ),
    (
        layout::FORESHADOWING_GLOBAL,
        "先写入 {\"foreshadowing\": []}，再运行 novel state rebuild --write 从 state/changelog.jsonl 回放伏笔状态",
    ),
];

fn finding(file: &str, code: &'static str, severity: Severity, message: String) -> Diagnostic {
    Diagnostic::new(code, severity, file, message, "")
}

/// A file outside any project (`novel validate FILE --kind KIND`), shown as `shown`: its
/// syntax, then each of its documents on its own ([`check_file`]); a JSONL file line by line.
pub fn check_standalone(
    path: &Path,
    shown: &str,
    kind: FileKind,
) -> Result<Vec<Diagnostic>, StoreError> {
    let text = read_text(path)?;
    let mut view = ProjectView::default();
    if matches!(kind, FileKind::ChangelogEntry | FileKind::MemoryEntry) {
        load_json_lines(shown, kind, &text, &mut view);
    } else {
        match parse_json(&text) {
            Ok(value) => view.docs.push(JsonDoc::new(shown, None, kind, value)),
            Err(e) => view.preexisting.push(syntax(shown, &e)),
        }
    }
    let mut out = view.preexisting;
    for doc in &view.docs {
        out.extend(
            check_file(&doc.file, doc.kind, &doc.value)
                .into_iter()
                .map(|f| doc.place(f)),
        );
    }
    Ok(out)
}

/// A JSON syntax error, at its line and column.
fn syntax(file: &str, e: &JsonSyntaxError) -> Diagnostic {
    finding(
        file,
        "E_JSON",
        Severity::Error,
        format!("JSON 格式错误：{}", e.message),
    )
    .at(e.line, e.column)
}

/// Reads every file of the project that the engine interprets.
pub fn load_project(project: &Project) -> ProjectView {
    let mut view = ProjectView::default();
    view.preexisting.extend(journal_finding(project));
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
                let cause = e
                    .io_error()
                    .map_or_else(|| e.to_string(), ToString::to_string);
                failed(&mut view, &file, "E_IO", format!("无法读取：{cause}"));
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
    for (rel, restore) in REQUIRED {
        let path = project.path(rel);
        if path.symlink_metadata().is_ok() {
            continue; // present (if unreadable, the walk reported it)
        }
        view.preexisting.push(Diagnostic::new(
            "E_MISSING",
            Severity::Error,
            rel,
            "缺少必需的文件",
            restore.to_string(),
        ));
        if let Some(kind) = json_kind(rel) {
            view.failed.push(FailedDoc {
                file: rel.to_string(),
                kind,
            });
        }
    }
    if let Some(f) = state_edited(project) {
        view.preexisting.push(f);
    }
    view.preexisting.extend(committed_edited(project));
    view
}

/// Committed chapter texts and evaluations that are not what their commit (or `revision
/// apply`) put in place: the chapter's pipeline log records each one's digest
/// (`crate::chapter::COMMITTED_DIGESTS`), and the file now has another, or is gone. Changed
/// outside `novel` — by the author's own hand most likely, which stays possible: a warning,
/// as for a hand-edited state.
fn committed_edited(project: &Project) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    let Ok(read) = std::fs::read_dir(project.path("logs")) else {
        return out;
    };
    let mut logs: Vec<(u32, String)> = read
        .filter_map(Result::ok)
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            novel_core::naming::number_between(&name, "chapter-", "-log.json")
                .map(|n| (n, format!("logs/{name}")))
        })
        .collect();
    logs.sort();
    for (n, rel) in logs {
        let Ok(log) = crate::io::read_json_value(&project.path(&rel)) else {
            continue; // the log's own problems are reported where it is loaded
        };
        let Some(digests) = log
            .get(crate::chapter::COMMITTED_DIGESTS)
            .and_then(|d| d.as_object())
        else {
            continue;
        };
        for (file, digest) in digests {
            let safe = !file
                .split('/')
                .any(|p| p.is_empty() || p == "." || p == "..");
            if !safe {
                continue;
            }
            let now = std::fs::read(project.path(file))
                .ok()
                .map(|b| novel_core::pipeline::text_digest(&b));
            let message = match now {
                None => format!("第 {n} 章提交的这个文件不见了（{rel} 记着它提交时的样子）"),
                Some(d) if Some(d.as_str()) != digest.as_str() => format!(
                    "与第 {n} 章提交时写下的不同（{rel} 记着它的摘要）：它在 novel 之外被改过"
                ),
                Some(_) => continue,
            };
            out.push(finding(
                file,
                "E_CHAPTER_EDITED",
                Severity::Warning,
                message,
            ));
        }
    }
    out
}

/// The finding of a journal on disk: a half-applied commit (or retirement, ops apply,
/// rebuild) leaves the files between two consistent states until it is rolled forward — by its
/// writer, when it is still at work (as `novel next` says), else by `novel chapter recover`.
fn journal_finding(project: &Project) -> Option<Diagnostic> {
    if !project.path(layout::JOURNAL).exists() {
        return None;
    }
    Some(match crate::lock::busy_writer(project) {
        Some(writer) => finding(
            layout::JOURNAL,
            "E_WRITER_BUSY",
            Severity::Warning,
            format!("另一个 novel 命令正在写入这本书（{writer}），还没有写完，项目文件暂时处于半完成状态：稍等几秒再运行 novel validate，不要运行 recover"),
        ),
        None => finding(
            layout::JOURNAL,
            "E_JOURNAL",
            Severity::Error,
            "有一次没有完成的写入（提交日志仍在），项目文件处于半完成状态：运行 novel chapter recover 补完它".to_string(),
        ),
    })
}

/// The state file is not the one the binary last wrote: the changelog's last line records the
/// digest of the state it left (`written`), and the file's bytes have another. Something outside
/// `novel` changed it — a hand edit or an old backup put back. A warning: the state may still
/// agree with its changelog (`state rebuild` says), but nothing the engine did made it so.
fn state_edited(project: &Project) -> Option<Diagnostic> {
    let last = crate::state::changelog_tail(project).ok().flatten()?;
    let recorded = last.written?.state;
    let text = crate::io::read_text(&project.path(layout::CURRENT_STATE)).ok()?;
    let digest = novel_core::pipeline::text_digest(text.as_bytes());
    (digest != recorded).then(|| {
        finding(
            layout::CURRENT_STATE,
            "E_STATE_EDITED",
            Severity::Warning,
            format!(
                "状态文件与程序最后一次写下的不同（变更日志最后一行，第 {} 章，记着它当时的摘要）：它在 novel 之外被改过",
                last.chapter
            ),
        )
    })
}

/// The kind of a JSON (or JSONL) file of the layout.
fn json_kind(rel: &str) -> Option<FileKind> {
    match layout::classify(rel) {
        Entry::Json { kind, .. } | Entry::JsonLines(kind) => Some(kind),
        _ => None,
    }
}

/// A file that could not be read or parsed: reported once, and recorded by kind.
fn failed(view: &mut ProjectView, rel: &str, code: &'static str, message: String) {
    failed_with(view, rel, finding(rel, code, Severity::Error, message));
}

/// A file that could not be read or parsed: its finding, and its kind marked as not loaded.
fn failed_with(view: &mut ProjectView, rel: &str, f: Diagnostic) {
    view.preexisting.push(f);
    if let Some(kind) = json_kind(rel) {
        view.failed.push(FailedDoc {
            file: rel.to_string(),
            kind,
        });
    }
}

/// A read error in words that do not repeat the absolute path (the finding names the file).
fn read_error(e: &StoreError) -> String {
    match e {
        StoreError::NotUtf8 { .. } => {
            "不是合法的 UTF-8 文本，无法读取（请另存为 UTF-8 编码）".into()
        }
        StoreError::Io { source, .. } => {
            format!("无法读取：{}", crate::error::io_reason(source))
        }
        other => other.to_string(),
    }
}

/// The errors of one project file checked alone, as `novel validate` checks it (its kind read
/// off its path, only its own schema compiled, references into other files left unjudged).
pub fn check_file_alone(project: &Project, rel: &str) -> Vec<Diagnostic> {
    let mut view = ProjectView::default();
    load_file(&project.root, rel, &mut view);
    novel_core::validate::check_alone(view)
        .into_iter()
        .filter(|f| f.severity == Severity::Error)
        .collect()
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
                    line: None,
                    kind,
                    value,
                    chapter_in_name: chapter,
                    volume_in_path: volume,
                    slug_in_name: slug,
                }),
                Err(e) => failed_with(view, rel, syntax(rel, &e)),
            },
            Err(e) => failed(view, rel, e.code(), read_error(&e)),
        },
        Entry::JsonLines(kind) => match read_text(&path) {
            Ok(text) => load_json_lines(rel, kind, &text, view),
            Err(e) => failed(view, rel, e.code(), read_error(&e)),
        },
        Entry::ChapterText { chapter } => load_markdown_head(&path, rel, chapter, false, view),
        Entry::Summary { chapter } => load_markdown_head(&path, rel, chapter, true, view),
        Entry::Misnamed { expected } => view.preexisting.push(finding(
            rel,
            "E_FILE_NAME",
            Severity::Error,
            format!("文件名不符合约定，应为 {expected}（N 为章节号，至少 3 位，如 chapter-048）"),
        )),
        Entry::Record => {}
        Entry::Outline { .. } => load_outline(&path, rel, view),
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

/// Each non-blank line of a JSONL file as its own document (`rel:line`); a line that does not
/// parse is a finding of its own.
fn load_json_lines(rel: &str, kind: FileKind, text: &str, view: &mut ProjectView) {
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        match parse_json(line) {
            Ok(value) => view.docs.push(JsonDoc::new(rel, Some(i + 1), kind, value)),
            Err(e) => view
                .preexisting
                .push(syntax(rel, &JsonSyntaxError { line: i + 1, ..e })),
        }
    }
}

/// The head of a chapter or a summary: enough for a heading, and all of the front matter
/// however long.
fn load_markdown_head(
    path: &Path,
    rel: &str,
    chapter: u32,
    is_summary: bool,
    view: &mut ProjectView,
) {
    match read_text(path) {
        Ok(text) => view.markdown.push(MarkdownDoc {
            file: rel.to_string(),
            chapter_in_name: Some(chapter),
            head: text
                .lines()
                .take(12.max(novel_core::frontmatter::parse(&text).map_or(0, |f| f.lines)))
                .collect::<Vec<_>>()
                .join("\n"),
            is_summary,
        }),
        Err(e) => view
            .preexisting
            .push(finding(rel, e.code(), Severity::Error, read_error(&e))),
    }
}

/// A volume outline, read exactly as every `context` call reads it, so validate passes no
/// outline that the packets would reject.
fn load_outline(path: &Path, rel: &str, view: &mut ProjectView) {
    let text = match read_text(path) {
        Ok(text) => text,
        Err(e) => {
            view.preexisting
                .push(finding(rel, e.code(), Severity::Error, read_error(&e)));
            return;
        }
    };
    view.outlines.push(rel.to_string());
    if let Ok(o) = novel_core::context::outline::parse(&text)
        && o.chapters.is_empty()
    {
        view.preexisting.push(finding(
            rel,
            "E_OUTLINE_EMPTY",
            Severity::Error,
            format!(
                "大纲里没有任何章节块：写手取不到任何一章的大纲（章节标题格式：{}）",
                novel_core::context::outline::HEADING_FORMAT
            ),
        ));
    }
    if let Err(e) = novel_core::context::outline::parse(&text) {
        let line = match &e {
            OutlineError::Heading { line, .. } | OutlineError::Duplicate { line, .. } => *line,
        };
        view.preexisting.push(
            finding(
                rel,
                "E_OUTLINE",
                Severity::Error,
                format!(
                    "{e}（章节标题格式：{}）",
                    novel_core::context::outline::HEADING_FORMAT
                ),
            )
            .at_line(line),
        );
    }
}
