//! The guard hooks (`docs/orchestration.md` §9): what Claude Code's `PreToolUse` and
//! `PostToolUse` hooks decide about a file the model is about to write or has just written.
//!
//! - [`OWNED`] is the one table of files the binary owns: a direct write to one of them inside
//!   a novel project is refused, naming the `novel` command that changes it instead.
//! - [`written`] checks a file just written with the same kind detection and the same checks as
//!   `novel validate` (one file alone: only its own schema is compiled), plus the `ops validate`
//!   checks for a state delta.
//!
//! A path is judged by every place a write to it could land: its lexical form (`..` removed,
//! as a client that normalises paths sees it), its physical form (symlinks resolved, as the
//! kernel sees it) and its identity (device and inode: a hard link to an owned file is that
//! file); a write is refused when any is an owned file. A Bash command line is judged by the
//! files [`crate::shell::writes`] sees it write ([`before_bash`]). Outside a novel project nothing
//! is decided; inside one, input that cannot be read at all is refused ([`unreadable_input`]),
//! never let through silently. Reading the hook's stdin and printing the decision is the CLI's
//! job.
//!
//! Layer: commands — the work behind a command (stages, volumes, spec, reviews, import, export, the
//! guard); the top.

use std::path::{Component, Path, PathBuf};

use novel_core::FileKind;

use novel_core::diagnostic::{Diagnostic, Severity};
use serde_json::Value;

use crate::layout;
use crate::load::check_file_alone;
use crate::project::{Project, absolute};
use crate::shell::Reach;
use crate::state::{Trust, load_delta_inputs};

/// The tools whose writes the hooks look at (the `matcher` of `hooks/hooks.json`).
pub const WRITE_TOOLS: [&str; 4] = ["Write", "Edit", "MultiEdit", "NotebookEdit"];

/// The part of a hook's stdin JSON the guards read: `tool_name`, the file(s) of `tool_input`
/// (`file_path` for Write, Edit and MultiEdit; `notebook_path` for NotebookEdit) and `cwd`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ToolCall {
    pub tool_name: Option<String>,
    pub files: Vec<PathBuf>,
    /// `tool_input.command` of a Bash call.
    pub command: Option<String>,
    pub cwd: Option<PathBuf>,
    /// `agent_type` when an agent (not the main conversation) made the call: `novel:<agent>`
    /// for the plugin's agents.
    pub agent: Option<String>,
}

/// The keys of a hook's stdin the guards read, in `tool_input` (files, command) or at the top.
const FILE_KEYS: [&str; 2] = ["file_path", "notebook_path"];

impl ToolCall {
    /// Reads the hook's stdin JSON; anything missing is simply absent.
    pub fn from_json(v: &Value) -> ToolCall {
        let text = |v: Option<&Value>| {
            v.and_then(Value::as_str)
                .filter(|s| !s.is_empty())
                .map(str::to_string)
        };
        let input = v.get("tool_input");
        let files = FILE_KEYS
            .iter()
            .filter_map(|k| text(input.and_then(|i| i.get(k))))
            .map(PathBuf::from)
            .collect();
        ToolCall {
            tool_name: text(v.get("tool_name")),
            files,
            command: text(input.and_then(|i| i.get("command"))),
            cwd: text(v.get("cwd")).map(PathBuf::from),
            agent: text(v.get("agent_type")),
        }
    }

    /// What can still be read from hook input that is not one JSON document (cut short, or
    /// with bytes after it): each key the guards read, taken from the first place it appears
    /// as `"key": "string"`. The keys come before a Write's `content` in what the client sends,
    /// so a cut-off input still names the file.
    pub fn from_fragments(text: &str) -> ToolCall {
        let files = FILE_KEYS
            .iter()
            .filter_map(|k| string_after_key(text, k))
            .map(PathBuf::from)
            .collect();
        ToolCall {
            tool_name: string_after_key(text, "tool_name"),
            files,
            command: string_after_key(text, "command"),
            cwd: string_after_key(text, "cwd").map(PathBuf::from),
            agent: string_after_key(text, "agent_type"),
        }
    }

    /// Whether the guards look at this call: a write tool (or an unnamed tool that carries a
    /// file, to be safe).
    pub fn writes(&self) -> bool {
        self.tool_name
            .as_deref()
            .is_none_or(|t| WRITE_TOOLS.contains(&t))
    }

    /// Whether this is a Bash call with a command line.
    pub fn is_bash(&self) -> bool {
        self.tool_name.as_deref() == Some("Bash") && self.command.is_some()
    }
}

/// The JSON string value of the first `"key":` in `text`, if one follows it whole.
fn string_after_key(text: &str, key: &str) -> Option<String> {
    let needle = format!("\"{key}\"");
    let mut from = 0;
    while let Some(at) = text[from..].find(&needle) {
        let after = from + at + needle.len();
        let rest = text[after..].trim_start();
        if let Some(value) = rest.strip_prefix(':') {
            let value = value.trim_start();
            if value.starts_with('"') {
                let mut stream = serde_json::Deserializer::from_str(value).into_iter::<String>();
                if let Some(Ok(s)) = stream.next() {
                    return Some(s).filter(|s| !s.is_empty());
                }
            }
        }
        from = after;
    }
    None
}

/// How an owned path is recognised (project-relative, `/`-separated).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pattern {
    /// Exactly this path.
    File(&'static str),
    /// Anything below this directory (the directory itself included).
    Under(&'static str),
    /// A top-level name starting with this prefix (the lock's set-aside copies).
    Prefix(&'static str),
    /// A file directly in this directory whose name ends with this suffix.
    Suffix(&'static str, &'static str),
    /// A chapter's file directly in this directory: `chapter-NNN` and this suffix.
    Chapter(&'static str, &'static str),
}

impl Pattern {
    fn matches(self, rel: &str) -> bool {
        match self {
            Pattern::File(f) => rel == f,
            Pattern::Under(d) => {
                rel == d || rel.strip_prefix(d).is_some_and(|r| r.starts_with('/'))
            }
            Pattern::Prefix(p) => rel.starts_with(p) && !rel[p.len()..].is_empty(),
            Pattern::Suffix(d, suffix) => rel
                .strip_prefix(d)
                .and_then(|r| r.strip_prefix('/'))
                .is_some_and(|name| !name.contains('/') && name.ends_with(suffix)),
            Pattern::Chapter(d, suffix) => rel
                .strip_prefix(d)
                .and_then(|r| r.strip_prefix('/'))
                .is_some_and(|name| novel_core::naming::chapter_in_name(name, suffix).is_some()),
        }
    }

    /// The directory (project-relative; empty: the project root) the matching files are in,
    /// or are.
    fn home(self) -> &'static str {
        match self {
            Pattern::File(f) | Pattern::Under(f) => f,
            Pattern::Prefix(_) => "",
            Pattern::Suffix(d, _) | Pattern::Chapter(d, _) => d,
        }
    }
}

/// A file the binary owns (`受保护文件`): what it is and which command changes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Owned {
    pub pattern: Pattern,
    /// What the file is, for the author.
    pub what: &'static str,
    /// The `novel` command(s) to use instead.
    pub instead: &'static str,
}

/// Every file the binary owns. A skill or agent never writes these by hand.
pub const OWNED: [Owned; 17] = [
    Owned {
        pattern: Pattern::File(layout::CHECKPOINT),
        what: "断点文件（流水线阶段、进度、待处理事项）",
        instead: "章节流程用 novel chapter begin / stage / commit / fail，快速起步用 novel quickstart done，待处理事项用 novel pending resolve，新建项目用 novel init",
    },
    Owned {
        pattern: Pattern::File(layout::CURRENT_STATE),
        what: "全局状态",
        instead: "状态增量用 novel ops apply（随章节提交时由 novel chapter commit 合并）；状态有误时用 novel state rebuild --write 从变更日志重建",
    },
    Owned {
        pattern: Pattern::File(layout::CHANGELOG),
        what: "状态变更日志",
        instead: "只由 novel ops apply、novel ops skip 与 novel chapter commit 追加；查看用 novel state history",
    },
    Owned {
        pattern: Pattern::Under("state/history"),
        what: "卷末状态快照",
        instead: "由 novel volume close 在卷收尾时写入；查看某章完成后的状态用 novel state at",
    },
    Owned {
        pattern: Pattern::Under(layout::BACKUPS),
        what: "程序替换文件前留下的备份",
        instead: "备份只供作者查阅，不要改写；恢复状态用 novel state rebuild --write",
    },
    Owned {
        pattern: Pattern::File(crate::spec::SNAPSHOT),
        what: "更新设定前的设定快照",
        instead: "用 novel spec snapshot 拍快照、novel spec propagate 计算影响",
    },
    Owned {
        pattern: Pattern::File(layout::FORESHADOWING_GLOBAL),
        what: "全局伏笔状态",
        instead: "伏笔进展写进状态增量的 foreshadow op，由 novel ops apply / novel chapter commit 合并；有误时用 novel state rebuild --write 重建",
    },
    Owned {
        pattern: Pattern::Under(layout::LOCK_DIR),
        what: "项目锁",
        instead: "查看用 novel lock status；持有者已不在时用 novel lock clear 清除",
    },
    Owned {
        pattern: Pattern::Prefix(".novel.lock."),
        what: "正在清除的项目锁",
        instead: "查看用 novel lock status；清除用 novel lock clear",
    },
    Owned {
        pattern: Pattern::Suffix("chapters", "-revision.json"),
        what: "修订候选（manual_confirm）",
        instead: "保存候选用 novel revision save --chapter N 文件，作者决定后用 novel revision apply / reject",
    },
    Owned {
        pattern: Pattern::Suffix("staging/logs", "-draft.md"),
        what: "润色前的初稿（novel chapter stage refined 拿它量润色的改动量）",
        instead: "由 novel chapter stage drafted 写下；要改初稿就改 staging/chapters 里的正文，再重新 novel chapter stage drafted",
    },
    Owned {
        pattern: Pattern::Chapter("chapters", ".md"),
        what: "已提交的章节正文",
        instead: "要改已提交的章节，走修订候选：把改好的整章写到 staging/candidates/chapter-NNN.md，运行 novel revision save --chapter N staging/candidates/chapter-NNN.md（作者提出的修改加 --note \"改什么\"），作者同意后 novel revision apply --chapter N；正在写的章节写在 staging/chapters/ 里。作者本人可以直接用编辑器改，novel validate 会指出哪些章节在 novel 之外改过",
    },
    Owned {
        pattern: Pattern::Under("evaluations"),
        what: "已提交章节的评估",
        instead: "评估随章节提交由 novel chapter commit 归档，之后不再改写；正在写的章节的评估写在 staging/evaluations/ 里",
    },
    Owned {
        pattern: Pattern::File(layout::PREFERENCES),
        what: "作者偏好",
        instead: "用 novel prefs add / remove；查看用 novel prefs list",
    },
    Owned {
        pattern: Pattern::Under(layout::CHARACTER_MEMORY_DIR),
        what: "角色记忆",
        instead: "章节提交时按状态增量的 character_actions 追加；新角色建档用 novel memory init；查看用 novel memory show",
    },
    Owned {
        pattern: Pattern::File(layout::JOURNAL),
        what: "章节提交的事务日志",
        instead: "提交被打断时用 novel chapter recover 查看并收尾，再 novel chapter commit",
    },
    Owned {
        pattern: Pattern::Prefix(".novel-commit-journal.json."),
        what: "事务日志的临时文件",
        instead: "提交被打断时用 novel chapter recover 查看并收尾",
    },
];

/// The owned file `rel` (project-relative) is, if any.
pub fn owned(rel: &str) -> Option<&'static Owned> {
    OWNED.iter().find(|o| o.pattern.matches(rel))
}

/// A path inside a novel project.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Located {
    pub project: Project,
    /// Project-relative, `/`-separated.
    pub rel: String,
    /// The absolute path this reading of the file names.
    pub path: PathBuf,
}

/// Symlink hops followed before giving up (as the kernel's ELOOP limit).
const MAX_HOPS: usize = 40;

/// `path` with symlinks resolved as far as the file system goes: the longest existing prefix is
/// canonicalised; the rest (not created yet) is appended with `.`/`..` applied; a dangling
/// symlink in the way is followed to where a write through it would land.
pub fn physical(path: &Path) -> Option<PathBuf> {
    physical_hops(path, 0)
}

fn physical_hops(path: &Path, hops: usize) -> Option<PathBuf> {
    if hops > MAX_HOPS {
        return None;
    }
    if let Ok(p) = std::fs::canonicalize(path) {
        return Some(p);
    }
    let parts: Vec<Component<'_>> = path.components().collect();
    // The longest prefix that exists.
    let mut base: Option<(PathBuf, usize)> = None;
    for i in (1..=parts.len()).rev() {
        let prefix: PathBuf = parts[..i].iter().collect();
        if let Ok(p) = std::fs::canonicalize(&prefix) {
            base = Some((p, i));
            break;
        }
    }
    let (mut out, start) = base?;
    for (k, c) in parts[start..].iter().enumerate() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            Component::Normal(name) => {
                let next = out.join(name);
                // A component that does not canonicalise may be a dangling symlink: a write
                // through it creates its target.
                if let Ok(meta) = std::fs::symlink_metadata(&next)
                    && meta.file_type().is_symlink()
                    && let Ok(target) = std::fs::read_link(&next)
                {
                    let mut rest: PathBuf = out.join(target);
                    for c in &parts[start + k + 1..] {
                        rest.push(c.as_os_str());
                    }
                    return physical_hops(&rest, hops + 1);
                }
                out = next;
            }
            Component::RootDir | Component::Prefix(_) => {}
        }
    }
    Some(out)
}

/// The project holding `path` (walking up from its directory) and the path inside it.
fn inside(path: &Path) -> Option<Located> {
    let dir = path.parent()?;
    let project = Project::discover(dir).ok()?;
    let rel = path.strip_prefix(&project.root).ok()?;
    let parts: Vec<String> = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    if parts.is_empty() {
        return None;
    }
    Some(Located {
        rel: parts.join("/"),
        project,
        path: path.to_path_buf(),
    })
}

/// Every reading of `file` that lies inside a novel project: lexical first, then physical
/// (deduplicated). `file` may be relative: it is taken from `cwd` (the hook's `cwd`), else from
/// the process's working directory.
pub fn locate(file: &Path, cwd: Option<&Path>) -> Vec<Located> {
    let joined = match cwd {
        Some(dir) if file.is_relative() => dir.join(file),
        _ => file.to_path_buf(),
    };
    let lexical = absolute(&joined);
    let mut out: Vec<Located> = Vec::new();
    for candidate in [Some(lexical.clone()), physical(&lexical), physical(&joined)]
        .into_iter()
        .flatten()
    {
        if let Some(l) = inside(&candidate)
            && !out.contains(&l)
        {
            out.push(l);
        }
    }
    out
}

/// What `PreToolUse` decides about a write to `file`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Before {
    /// Not a project file the binary owns (or not in a project at all): say nothing.
    Allow,
    /// A file the binary owns.
    Deny {
        /// Project-relative path of the owned file the write would land on.
        rel: String,
        owned: &'static Owned,
    },
}

impl Before {
    /// The refusal, in Chinese, for the model (`permissionDecisionReason`).
    pub fn reason(&self) -> Option<String> {
        match self {
            Before::Allow => None,
            Before::Deny { rel, owned } => Some(format!(
                "{rel} 是{}，由 novel 程序维护，不能直接写入或编辑。{}。",
                owned.what, owned.instead
            )),
        }
    }
}

/// `PreToolUse`: refuses a write that lands on a file of [`OWNED`] under any reading of the path,
/// or on an owned file under another name (a hard link: the same device and inode).
pub fn before_write(file: &Path, cwd: Option<&Path>) -> Before {
    let located = locate(file, cwd);
    for l in &located {
        if let Some(o) = owned(&l.rel) {
            return Before::Deny {
                rel: l.rel.clone(),
                owned: o,
            };
        }
    }
    let joined = match cwd {
        Some(dir) if file.is_relative() => dir.join(file),
        _ => file.to_path_buf(),
    };
    let mut projects: Vec<Project> = located.into_iter().map(|l| l.project).collect();
    if let Some(p) = cwd.and_then(|d| Project::discover(d).ok()) {
        projects.push(p);
    }
    projects.dedup();
    same_file_as_owned(&joined, &projects).unwrap_or(Before::Allow)
}

/// The owned file of one of `projects` that `path` is the same file as (a hard link to it),
/// when `path` exists with more than one link.
fn same_file_as_owned(path: &Path, projects: &[Project]) -> Option<Before> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        let meta = std::fs::metadata(path).ok()?;
        if meta.nlink() < 2 || !meta.is_file() {
            return None;
        }
        let id = (meta.dev(), meta.ino());
        for project in projects {
            for (rel, o) in owned_files(project, "", usize::MAX) {
                if std::fs::metadata(project.path(&rel)).is_ok_and(|m| (m.dev(), m.ino()) == id) {
                    return Some(Before::Deny { rel, owned: o });
                }
            }
        }
        None
    }
    #[cfg(not(unix))]
    {
        let _ = (path, projects);
        None
    }
}

/// The owned files that exist in `project` within `within` (project-relative; empty: the
/// whole project), with their entries of [`OWNED`]; at most `limit` of them.
fn owned_files(project: &Project, within: &str, limit: usize) -> Vec<(String, &'static Owned)> {
    let mut out = Vec::new();
    for o in &OWNED {
        let home = o.pattern.home();
        // Only the tables whose files could lie within `within`.
        if !(layout::within(home, within) || layout::within(within, home)) {
            continue;
        }
        let tops: Vec<String> = match o.pattern {
            Pattern::File(f) | Pattern::Under(f) => vec![f.to_string()],
            Pattern::Prefix(_) | Pattern::Suffix(..) | Pattern::Chapter(..) => {
                let Ok(read) = std::fs::read_dir(project.path(home)) else {
                    continue;
                };
                read.filter_map(Result::ok)
                    .map(|e| {
                        let name = e.file_name().to_string_lossy().into_owned();
                        if home.is_empty() {
                            name
                        } else {
                            format!("{home}/{name}")
                        }
                    })
                    .filter(|rel| o.pattern.matches(rel))
                    .collect()
            }
        };
        for top in tops {
            for e in walkdir::WalkDir::new(project.path(&top))
                .into_iter()
                .filter_map(Result::ok)
                .filter(|e| e.file_type().is_file())
            {
                if let Some(rel) = project.relative(e.path())
                    && layout::within(&rel, within)
                {
                    out.push((rel, o));
                    if out.len() >= limit {
                        return out;
                    }
                }
            }
        }
    }
    out
}

/// A Bash command line's writes to owned files ([`crate::shell::writes`]): refused when the
/// command line visibly writes, removes or moves one (redirections, `tee`, `cp`/`mv`/`ln`/`rm`,
/// `sed -i`, `truncate`, `dd of=` …), or a directory holding one (`rm -rf state`, `mv`, `cp -r`
/// into it, `find -delete`), and when a line it cannot parse names one. What it cannot see (a
/// path made of variables) is allowed. `cwd` is the hook's.
pub fn before_bash(command: &str, cwd: Option<&Path>) -> Option<BashDenial> {
    let writes = crate::shell::writes(command);
    if writes.is_empty() {
        return None;
    }
    let base = cwd.map_or_else(
        || std::env::current_dir().unwrap_or_default(),
        Path::to_path_buf,
    );
    let here = Project::discover(&base).ok();
    for w in writes {
        let mut dir = base.clone();
        for d in &w.cd {
            dir.push(d);
        }
        let joined = dir.join(&w.path);
        let targets = if w.glob {
            expand_glob(&joined)
        } else {
            vec![joined]
        };
        for t in targets {
            if let Some((rel, owned, inside)) = judge(&t, w.reach, here.as_ref()) {
                return Some(BashDenial {
                    rel,
                    owned,
                    how: w.how,
                    inside,
                    blind: w.blind,
                });
            }
        }
    }
    None
}

/// The owned file a write to `target` reaching `reach` lands on, and the directory operand
/// it lies in when it is below `target`.
fn judge(
    target: &Path,
    reach: Reach,
    here: Option<&Project>,
) -> Option<(String, &'static Owned, Option<String>)> {
    let is_dir = target.is_dir();
    if reach == Reach::Into && is_dir {
        return None; // what lands inside is listed apart
    }
    if let Before::Deny { rel, owned } = before_write(target, None) {
        return Some((rel, owned, None));
    }
    // A symlink to a directory is removed or moved as a link; `dir/` follows it.
    let through_link = target.as_os_str().to_string_lossy().ends_with('/');
    let real_dir = std::fs::symlink_metadata(target).is_ok_and(|m| m.is_dir());
    if reach != Reach::Tree || !(real_dir || is_dir && through_link) {
        return None;
    }
    let (rel, owned) = holds_owned(target, here)?;
    Some((rel, owned, Some(shown(target))))
}

/// `path` as the refusal shows it: project-relative inside a project, else as it is.
pub fn shown(path: &Path) -> String {
    let abs = absolute(path);
    Project::discover(&abs)
        .ok()
        .and_then(|p| p.relative(&abs))
        .filter(|r| !r.is_empty())
        .unwrap_or_else(|| abs.display().to_string())
}

/// Directories searched below a directory operand for a novel project, at most.
const PROJECT_SEARCH_DEPTH: usize = 3;
/// Entries looked at in that search, at most.
const PROJECT_SEARCH_ENTRIES: usize = 5_000;

/// An owned file in the directory `dir`, or below it: `dir` lies in a project and holds
/// owned files, or holds a whole project (the hook's own, or one found a few levels down).
fn holds_owned(dir: &Path, here: Option<&Project>) -> Option<(String, &'static Owned)> {
    let lexical = absolute(dir);
    for reading in [Some(lexical.clone()), physical(&lexical)]
        .into_iter()
        .flatten()
    {
        if let Ok(project) = Project::discover(&reading)
            && let Some(rel) = project.relative(&reading)
            && let Some((file, o)) = owned_files(&project, &rel, 1).into_iter().next()
        {
            return Some((file, o));
        }
        // The hook's own project first; a search below only when it is not in there.
        let root = here
            .map(|p| p.root.clone())
            .filter(|r| r.starts_with(&reading))
            .or_else(|| projects_below(&reading).into_iter().next());
        if let Some(root) = root {
            let o = owned(layout::CHECKPOINT)?;
            return Some((root.join(layout::CHECKPOINT).display().to_string(), o));
        }
    }
    None
}

/// The novel projects a few levels below `dir` (bounded: see [`PROJECT_SEARCH_DEPTH`]).
fn projects_below(dir: &Path) -> Vec<PathBuf> {
    walkdir::WalkDir::new(dir)
        .max_depth(PROJECT_SEARCH_DEPTH + 1)
        .into_iter()
        .filter_entry(|e| {
            e.depth() == 0
                || !e.file_name().to_string_lossy().starts_with('.')
                || e.file_name() == layout::CHECKPOINT
        })
        .take(PROJECT_SEARCH_ENTRIES)
        .filter_map(Result::ok)
        .filter(|e| e.file_name() == layout::CHECKPOINT && e.file_type().is_file())
        .filter_map(|e| e.path().parent().map(Path::to_path_buf))
        .collect()
}

/// A Bash command line refused by [`before_bash`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BashDenial {
    pub rel: String,
    pub owned: &'static Owned,
    /// How the command line writes it (`重定向 >`, `cp 的目标` …).
    pub how: String,
    /// The directory operand the owned file lies in, when the line reaches it through a
    /// directory (`rm -rf state`).
    pub inside: Option<String>,
    /// The line (or a script in it) does not parse and names this path.
    pub blind: bool,
}

impl BashDenial {
    /// The refusal, in Chinese, for the model.
    pub fn reason(&self) -> String {
        let what = format!("{} 是{}，由 novel 程序维护", self.rel, self.owned.what);
        if self.blind {
            return format!(
                "novel 的守护钩子解析不了这条命令（引号、括号或语法不完整），看不出它会对 {} 做什么；{what}，不能用 shell 命令直接写入、移动或删除。请用 novel 命令完成这一步（{}）；若只是读取，请把命令写完整后重试。",
                self.inside.as_deref().unwrap_or(&self.rel),
                self.owned.instead
            );
        }
        match &self.inside {
            Some(dir) => format!(
                "这条命令会删除、移动或改写目录 {dir}（{}），其中的 {what}，不能用 shell 命令整个目录地删除或覆盖。{}。",
                self.how, self.owned.instead
            ),
            None => format!(
                "这条命令会改写 {}（{}），它是{}，由 novel 程序维护，不能用 shell 命令直接写入、移动或删除。{}。",
                self.rel, self.how, self.owned.what, self.owned.instead
            ),
        }
    }
}

/// Paths a glob expands to, at most.
const MAX_GLOB_MATCHES: usize = 10_000;

/// The existing files a path with glob characters matches (`*`, `?`, `[…]` as the shell reads
/// them, in any component; an extended glob `@(…)` is taken to match every name).
fn expand_glob(path: &Path) -> Vec<PathBuf> {
    let mut found: Vec<PathBuf> = vec![PathBuf::new()];
    for c in path.components() {
        let part = c.as_os_str().to_string_lossy();
        if !part.contains(['*', '?', '[']) {
            found.iter_mut().for_each(|p| p.push(c.as_os_str()));
            continue;
        }
        let pattern: Vec<char> = part.chars().collect();
        let everything = part.contains('(');
        let mut next = Vec::new();
        for dir in &found {
            let Ok(read) = std::fs::read_dir(dir) else {
                continue;
            };
            for e in read.filter_map(Result::ok) {
                let name: Vec<char> = e.file_name().to_string_lossy().chars().collect();
                // The shell's `*` does not match a leading dot.
                let dot_ok = name.first() != Some(&'.') || pattern.first() == Some(&'.');
                if dot_ok && (everything || wildcard(&pattern, &name)) {
                    next.push(e.path());
                }
            }
        }
        next.truncate(MAX_GLOB_MATCHES);
        found = next;
    }
    found.sort();
    found
}

/// Shell wildcard matching of `name` against `pattern` (`*`, `?`, `[abc]`, `[a-z]`, `[!x]`).
fn wildcard(pattern: &[char], name: &[char]) -> bool {
    match pattern.split_first() {
        None => name.is_empty(),
        Some(('*', rest)) => (0..=name.len()).any(|i| wildcard(rest, &name[i..])),
        Some(('?', rest)) => !name.is_empty() && wildcard(rest, &name[1..]),
        Some(('[', rest)) => {
            let Some(close) = rest.iter().skip(1).position(|c| *c == ']').map(|i| i + 1) else {
                return name.first() == Some(&'[') && wildcard(rest, &name[1..]);
            };
            let (set, after) = (&rest[..close], &rest[close + 1..]);
            let Some(c) = name.first() else {
                return false;
            };
            let (negate, set) = match set.split_first() {
                Some(('!' | '^', s)) => (true, s),
                _ => (false, set),
            };
            let mut hit = false;
            let mut i = 0;
            while i < set.len() {
                if i + 2 < set.len() && set[i + 1] == '-' {
                    hit |= (set[i]..=set[i + 2]).contains(c);
                    i += 3;
                } else {
                    hit |= set[i] == *c;
                    i += 1;
                }
            }
            hit != negate && wildcard(after, &name[1..])
        }
        Some((p, rest)) => name.first() == Some(p) && wildcard(rest, &name[1..]),
    }
}

/// Why the binary must not write one of its outputs (`export -o`, `dashboard -o`) at `path`,
/// if it must not: a directory, a file the binary owns (under any reading of the path, as
/// [`before_write`] judges it), a file of the book's layout (`novel.json`, `brief.md`, …), or
/// anything in the book's data directories (`chapters/`, `state/`, `volumes/`, …). Outputs go
/// to the project root, `export/`, or outside the project. The one check every output path of
/// the binary goes through (`crate::export::write`).
pub fn output_refusal(path: &Path) -> Option<String> {
    if path.is_dir() {
        return Some("这是一个目录".into());
    }
    if let Before::Deny { rel, owned } = before_write(path, None) {
        return Some(format!("{rel} 是{}，由 novel 程序维护", owned.what));
    }
    for l in locate(path, None) {
        let top = l.rel.split('/').next().unwrap_or_default();
        let data_dir = l.rel.contains('/')
            && (top == "memory"
                || layout::DIRS
                    .iter()
                    .any(|d| d.split('/').next() == Some(top)));
        if data_dir {
            return Some(format!(
                "{} 在本书的资料目录 {top}/ 里，输出会混进书的文件",
                l.rel
            ));
        }
        if l.rel == layout::BRIEF || !matches!(layout::classify(&l.rel), layout::Entry::Other) {
            return Some(format!("{} 是本书的文件，输出会把它覆盖", l.rel));
        }
    }
    None
}

/// What `PreToolUse` answers when the hook's input could not be read at all: inside a novel
/// project (the hook's working directory, or `CLAUDE_PROJECT_DIR`) the write is refused with
/// the reason — a guard that cannot see the file must not let it through silently; elsewhere
/// nothing is said.
pub fn unreadable_input(why: &str, dirs: &[&Path]) -> Option<String> {
    let project = dirs.iter().find_map(|d| Project::discover(d).ok())?;
    Some(format!(
        "novel 的守护钩子读不懂这次调用的输入（{why}），无法判断它是否会改写小说项目 {} 中由程序维护的文件，所以拒绝了这次写入。请重新发起同一个调用；若一再出现，请用 novel 命令完成这一步。",
        project.root.display()
    ))
}

/// `PostToolUse`: the errors of a project file just written, checked alone as `novel validate`
/// checks it (its kind read off its path; only its own schema compiled; references into other
/// files left to `novel validate`), plus, for a state delta, what `novel ops validate` would
/// reject. Empty when the file is valid, unknown to the layout, or outside a project.
pub fn written(file: &Path, cwd: Option<&Path>) -> Vec<Diagnostic> {
    // The physical reading is the file that was actually written.
    let Some(l) = locate(file, cwd).pop() else {
        return Vec::new();
    };
    if !l.path.is_file() {
        return Vec::new(); // nothing was written there after all
    }
    let findings = check_file_alone(&l.project, &l.rel);
    let is_delta = matches!(
        layout::classify(&l.rel),
        layout::Entry::Json {
            kind: FileKind::StateDelta,
            ..
        }
    );
    if !findings.is_empty() || !is_delta {
        return findings;
    }
    let delta = crate::io::read_text(&l.path)
        .ok()
        .and_then(|t| serde_json::from_str::<Value>(novel_core::validate::strip_bom(&t)).ok());
    match delta {
        Some(delta) => delta_findings(&l.project, &l.rel, &delta),
        None => findings,
    }
}

/// [`written`], and for a staged evaluation of the chapter in flight that passes its schema,
/// the judge's contract (`crate::judging::check_staged`: quotes from the staged text, high rows
/// in `violations`, objective rows, fixes, the fix review) — so QualityJudge hears of a broken
/// promise as it writes, before `chapter stage judged` refuses. `normalize` is the project's
/// normalisation (`novel_text::normalize::normalize_str` in the binary).
pub fn written_judged(
    file: &Path,
    cwd: Option<&Path>,
    normalize: &dyn Fn(&str) -> String,
) -> Vec<Diagnostic> {
    let findings = written(file, cwd);
    if !findings.is_empty() {
        return findings;
    }
    let Some(l) = locate(file, cwd).pop() else {
        return findings;
    };
    if !l.rel.starts_with("staging/evaluations/") || !l.path.is_file() {
        return findings;
    }
    let Ok(cp) = crate::chapter::load_checkpoint(&l.project) else {
        return findings;
    };
    let Some(n) = cp.inflight_chapter else {
        return findings;
    };
    crate::judging::check_staged(&l.project, &cp, n, normalize)
        .unwrap_or_default()
        .into_iter()
        .filter(|f| f.severity == Severity::Error && f.file == l.rel)
        .collect()
}

/// Errors listed in one block reason at most (the rest are counted).
const MAX_LISTED: usize = 30;

/// The `PostToolUse` block reason for the errors of [`written`], in Chinese, each as
/// [`Diagnostic::render`] puts it (`file: /pointer: code[错误]: message`, and how to fix it);
/// `None` when there are none.
pub fn block_reason(findings: &[Diagnostic]) -> Option<String> {
    let first = findings.first()?;
    let mut text = format!(
        "刚写入的 {} 没有通过 novel 的校验（{} 个错误）。请在这一轮按下列位置修正后重新写入：\n",
        first.file,
        findings.len()
    );
    for f in findings.iter().take(MAX_LISTED) {
        text.push_str(&f.render());
    }
    if findings.len() > MAX_LISTED {
        text.push_str(&format!(
            "……另有 {} 个错误未列出\n",
            findings.len() - MAX_LISTED
        ));
    }
    Some(text.trim_end().to_string())
}

/// What `novel ops validate` would reject in a schema-valid delta. The state files are read
/// without their schemas; when they cannot be read, the delta is not judged here (the files'
/// own problems are `novel validate`'s to report).
fn delta_findings(project: &Project, rel: &str, delta: &Value) -> Vec<Diagnostic> {
    let Ok(inputs) = load_delta_inputs(project, Trust::Typed, delta) else {
        return Vec::new();
    };
    match inputs.check(delta) {
        Ok(check) => check.findings(rel),
        Err(e) => vec![
            Diagnostic::new(e.code(), Severity::Error, rel, e.to_string(), e.hint()).at_pointer(""),
        ],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn owned_table() {
        for (rel, want) in [
            (".checkpoint.json", true),
            ("state/current-state.json", true),
            ("state/changelog.jsonl", true),
            ("state/history/vol-01-final-state.json", true),
            ("state/backups/current-state-1.json", true),
            ("state/.spec-snapshot.json", true),
            ("foreshadowing/global.json", true),
            (".novel.lock", true),
            (".novel.lock/info.json", true),
            (".novel.lock.removed-abc/info.json", true),
            (".novel-commit-journal.json", true),
            ("chapters/chapter-012-revision.json", true),
            ("memory/preferences.json", true),
            ("memory/characters/lin-feng.jsonl", true),
            ("staging/logs/chapter-012-draft.md", true),
            ("staging/logs/chapter-012-changes.md", false),
            ("chapters/sub/chapter-012-revision.json", false),
            ("memory/notes.md", false),
            ("state/current-state.json.bak", false),
            ("state/historyx/a.json", false),
            ("staging/state/chapter-001-delta.json", false),
            ("foreshadowing/notes.md", false),
            ("brief.md", false),
            // Committed text and evaluations go through the revision candidate (issue 42).
            ("chapters/chapter-001.md", true),
            ("evaluations/chapter-001-eval.json", true),
            ("chapters/notes.md", false),
            (".novel.lockfile", false),
        ] {
            assert_eq!(owned(rel).is_some(), want, "{rel}");
        }
    }
}
