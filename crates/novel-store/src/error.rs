//! Store errors, each with a stable code and a hint the CLI shows under `hint:`.
//!
//! Layer: ground — files, paths, errors, the checkpoint, the lock, the journal and its transaction;
//! below everything that reads the book.

use std::path::PathBuf;

use novel_core::validate::JsonSyntaxError;

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("这里不是小说项目：从 {start} 向上找不到 .checkpoint.json")]
    NotAProject { start: PathBuf },
    #[error("{dir} 已经有小说项目或同名文件，拒绝覆盖：{}", conflicts.join("、"))]
    ProjectExists {
        dir: PathBuf,
        conflicts: Vec<String>,
    },
    /// `novel init` into a folder that holds the author's own files (hidden entries such as
    /// `.claude/` and `.git/` do not count).
    #[error("{dir} 里已经有别的文件（{}），新书的文件不往它们中间散放", entries.join("、"))]
    FolderNotEmpty { dir: PathBuf, entries: Vec<String> },
    #[error("读写 {path} 失败：{}", io_reason(source))]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{path} 不是合法的 UTF-8 文本")]
    NotUtf8 { path: PathBuf },
    #[error("{path}：{error}")]
    Json {
        path: PathBuf,
        error: JsonSyntaxError,
    },
    #[error("{path} 的内容不符合{what}的格式：{message}")]
    Model {
        path: PathBuf,
        what: &'static str,
        message: String,
    },
    /// A value of the wrong type or shape, located by JSON pointer and, when found, line.
    #[error("{path}{}：{pointer} 不符合{what}的格式：{message}", line.map(|l| format!(" 第 {l} 行")).unwrap_or_default())]
    Field {
        path: PathBuf,
        what: &'static str,
        pointer: String,
        line: Option<usize>,
        message: String,
    },
    #[error("没有名为「{name}」的风格预设（可选：{}）", known.join("、"))]
    UnknownPreset { name: String, known: Vec<String> },
    #[error("「{id}」不能用作路径：{why}")]
    UnsafePath { id: String, why: &'static str },
    #[error(
        "{path} 不是普通文件（是符号链接或目录）：staging 里的文件只按普通文件读取，不跟随链接"
    )]
    NotARegularFile { path: PathBuf },
    /// The in-flight chapter's pipeline log (`staging/logs/chapter-NNN-log.json`) does not
    /// parse: it holds the figures of the stages run so far, so it is never replaced.
    #[error(
        "{path} 第 {line} 行第 {column} 列：流水线日志已损坏（{message}）；它记录着已完成各阶段的用量，不会被覆盖"
    )]
    PipelineLog {
        path: PathBuf,
        line: usize,
        column: usize,
        message: String,
    },
    /// `storylines/storylines.json` cannot be read, so no delta's `storyline_id` can be
    /// checked: never taken as "anything goes".
    #[error(
        "无法读取 {}，因此无法核对增量的 storyline_id：{source}",
        crate::layout::STORYLINES
    )]
    Storylines { source: Box<StoreError> },
    /// The writers' guard or the project lock stood in the way of a write deep inside a store
    /// function (another writer at work, a journal pending): the lock's own error.
    #[error(transparent)]
    Lock(Box<LockError>),
    /// An output (`export -o`, `dashboard -o`) would land on a file of the book.
    #[error("不能输出到 {shown}：{why}")]
    OutputTarget {
        path: PathBuf,
        shown: String,
        why: String,
    },
    #[error(
        "{path} 比未完成的写入记录的长度短（应至少 {expected} 字节，实际 {actual} 字节）：它在中断之后被改动过"
    )]
    Shrank {
        path: PathBuf,
        expected: u64,
        actual: u64,
    },
}

/// An operating system's error in the author's words: its English ("No such file or directory
/// (os error 2)") never reaches the author; a kind without a name here keeps only its number.
pub fn io_reason(e: &std::io::Error) -> String {
    use std::io::ErrorKind as K;
    let said = match e.kind() {
        K::NotFound => "文件或目录不存在",
        K::PermissionDenied => "没有权限",
        K::AlreadyExists => "同名的文件或目录已经存在",
        K::IsADirectory => "这是一个目录，不是文件",
        K::NotADirectory => "路径中有一段不是目录",
        K::DirectoryNotEmpty => "目录不是空的",
        K::StorageFull | K::QuotaExceeded => "磁盘空间不足",
        K::ReadOnlyFilesystem => "所在的磁盘是只读的",
        K::FileTooLarge => "文件太大",
        K::InvalidFilename => "文件名不合法（太长或含有不允许的字符）",
        K::InvalidData => "内容读不出来（不是有效的文本）",
        K::InvalidInput => "路径或参数无效",
        K::UnexpectedEof => "文件比应有的短（可能没写完）",
        K::Interrupted => "操作被中断",
        K::TimedOut | K::WouldBlock => "等待超时",
        K::ResourceBusy => "文件正被别的程序占用",
        K::CrossesDevices => "不能跨磁盘移动",
        K::BrokenPipe => "接收输出的程序已经退出",
        _ => {
            return match e.raw_os_error() {
                Some(n) => format!("系统报错（错误号 {n}）"),
                None => "系统报错".to_string(),
            };
        }
    };
    said.to_string()
}

/// Where a store error is: the file, and the JSON pointer or the line and column (in
/// characters) when known — the place part of a finding, for the error envelope.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Place {
    pub file: PathBuf,
    pub pointer: Option<String>,
    pub line: Option<usize>,
    pub col: Option<usize>,
}

impl StoreError {
    /// The file (and place in it) the error is about, if it is about one.
    pub fn place(&self) -> Option<Place> {
        let at = |file: &PathBuf| Place {
            file: file.clone(),
            pointer: None,
            line: None,
            col: None,
        };
        match self {
            StoreError::Io { path, .. }
            | StoreError::NotUtf8 { path }
            | StoreError::Model { path, .. }
            | StoreError::NotARegularFile { path }
            | StoreError::OutputTarget { path, .. }
            | StoreError::Shrank { path, .. } => Some(at(path)),
            StoreError::Json { path, error } => Some(Place {
                line: Some(error.line),
                col: Some(error.column),
                ..at(path)
            }),
            StoreError::Field {
                path,
                pointer,
                line,
                ..
            } => Some(Place {
                pointer: Some(pointer.clone()),
                line: *line,
                ..at(path)
            }),
            StoreError::PipelineLog {
                path, line, column, ..
            } => Some(Place {
                line: Some(*line),
                col: Some(*column),
                ..at(path)
            }),
            StoreError::Storylines { source } => source.place(),
            StoreError::Lock(_) => None,
            StoreError::NotAProject { .. }
            | StoreError::ProjectExists { .. }
            | StoreError::FolderNotEmpty { .. }
            | StoreError::UnknownPreset { .. }
            | StoreError::UnsafePath { .. } => None,
        }
    }

    /// A conflict with another writer or session (the CLI's exit 3), not a project problem.
    pub fn is_conflict(&self) -> bool {
        matches!(self, StoreError::Lock(e) if e.is_conflict())
    }

    pub fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        StoreError::Io {
            path: path.into(),
            source,
        }
    }

    /// Stable machine code (`E_…`).
    pub fn code(&self) -> &'static str {
        match self {
            StoreError::NotAProject { .. } => "E_NOT_PROJECT",
            StoreError::ProjectExists { .. } => "E_PROJECT_EXISTS",
            StoreError::FolderNotEmpty { .. } => "E_FOLDER_NOT_EMPTY",
            StoreError::Io { .. } => "E_IO",
            StoreError::NotUtf8 { .. } => "E_NOT_UTF8",
            StoreError::Json { .. } => "E_JSON",
            StoreError::Model { .. } | StoreError::Field { .. } => "E_SCHEMA",
            StoreError::UnsafePath { .. } => "E_UNSAFE_PATH",
            StoreError::UnknownPreset { .. } => "E_USAGE",
            StoreError::NotARegularFile { .. } => "E_NOT_REGULAR_FILE",
            StoreError::PipelineLog { .. } => "E_PIPELINE_LOG",
            StoreError::Shrank { .. } => "E_CHANGELOG_SHRANK",
            StoreError::OutputTarget { .. } => "E_OUTPUT_TARGET",
            StoreError::Storylines { .. } => "E_STORYLINES",
            StoreError::Lock(e) => e.code(),
        }
    }

    /// What the author can do about it.
    pub fn hint(&self) -> String {
        match self {
            StoreError::NotAProject { .. } => {
                "在项目目录里运行，或用 --project DIR 指定；新建项目用 novel init DIR".into()
            }
            StoreError::ProjectExists { .. } => {
                "换一个空目录，或先移走上面列出的文件（novel 从不覆盖已有文件）".into()
            }
            StoreError::FolderNotEmpty { dir, .. } => format!(
                "给新书一个子目录：novel init {}/<书名> --title <书名>（会新建这个目录）；或换一个空目录",
                dir.display()
            ),
            StoreError::Io { .. } => "检查路径是否存在、权限与磁盘空间".into(),
            StoreError::NotUtf8 { .. } => "请把文件另存为 UTF-8 编码".into(),
            StoreError::Json { .. } => "按提示的行列修正 JSON 语法后重试".into(),
            StoreError::Model { .. } => "运行 novel validate 查看全部错误".into(),
            StoreError::Field { pointer, .. } => format!(
                "把 {pointer} 改成 schema 要求的类型（templates/schemas/ 中有各文件的 schema 与默认值），或删掉这个键使用默认值；novel validate 列出全部问题"
            ),
            StoreError::UnknownPreset { .. } => {
                "预设文件在插件的 templates/style-presets/ 中；也可以先不指定，之后由文风分析员从样章提取".into()
            }
            StoreError::UnsafePath { .. } => {
                "id 只能用小写英文字母、数字和 - / _（如 lin-feng）".into()
            }
            StoreError::NotARegularFile { .. } => {
                "删除这个链接，让写它的 agent 把内容直接写进这个文件，再重新走评审与门控".into()
            }
            StoreError::PipelineLog { .. } => {
                "按提示的行列修正这个文件后重试；不需要其中的记录时把它移出 staging/logs/（下一次 novel chapter stage 会新建一份），再重试".into()
            }
            StoreError::Shrank { .. } => {
                "从 state/backups/ 或版本库恢复这个文件的原样，再运行 novel chapter recover".into()
            }
            StoreError::OutputTarget { .. } => {
                "换一个文件名：放在项目目录下（不在 chapters/、state/ 等资料目录里）、项目的 export/ 里或项目之外；不写 -o 时输出到默认位置".into()
            }
            StoreError::Storylines { source } => format!(
                "{}；修好后重试（novel validate 可列出全部问题）",
                source.hint()
            ),
            StoreError::Lock(e) => e.hint(),
        }
    }
}

impl From<LockError> for StoreError {
    /// A lock error met inside a store function travels as [`StoreError::Lock`] (a store error
    /// the lock made comes out as itself).
    fn from(e: LockError) -> Self {
        match e {
            LockError::Store(s) => s,
            other => StoreError::Lock(Box::new(other)),
        }
    }
}

/// A `?` on a layout path of an id that is no slug.
impl From<crate::layout::UnsafeId> for StoreError {
    fn from(e: crate::layout::UnsafeId) -> Self {
        StoreError::UnsafePath {
            id: e.id,
            why: e.why,
        }
    }
}

/// What stood in the way of a writer: the project lock, the writers' guard or a pending
/// journal (`crate::lock`). It wraps a [`StoreError`] and travels inside one
/// ([`StoreError::Lock`]), so the two live together.
#[derive(Debug, thiserror::Error)]
pub enum LockError {
    #[error("项目被锁：{holder}")]
    Held {
        holder: String,
        info: Box<crate::lockfile::LockInfo>,
    },
    #[error("锁的持有者不是你（锁令牌不符）")]
    NotOwner,
    #[error("项目没有被锁")]
    NotHeld,
    /// A command given no `--token` found no lock: no chapter is begun (or its lock was
    /// cleared).
    #[error("没有在写的章节：项目锁不在任何会话手里")]
    NoSessionLock,
    /// A command given no `--token` found the lock held, but not by the session it runs in
    /// (another session, or this session's lock broken and taken by another since).
    #[error("项目锁不在本会话手里（{holder}）；没给 --token 时，只有开始这一章的会话能推进它")]
    OtherSession { holder: String },
    /// Another writer held the guard ([`guard`](crate::lock::guard)) for longer than this one waits.
    #[error("另一个 novel 命令正在写入这本书（{}），等了 {waited_secs} 秒仍未结束", writer.as_deref().unwrap_or("本机无法查到是哪个进程"))]
    Busy {
        writer: Option<String>,
        waited_secs: f64,
    },
    /// `--owner-pid` names a process that does not run on this host: a lock owned by it
    /// would be stale the moment it is taken.
    #[error("进程 {pid} 没有在本机运行，不能作为锁的持有者（--owner-pid）")]
    DeadOwner { pid: u32 },
    /// `--owner-pid` names a process that outlives any session (the system's first processes,
    /// or an ancestor of the session such as its terminal): a lock owned by it would never go
    /// stale.
    #[error(
        "进程 {pid} {why}，不能作为锁的持有者（--owner-pid）：它比会话活得久，锁将永远不会失效"
    )]
    UnfitOwner { pid: u32, why: &'static str },
    /// A journal (a commit, a retirement, an `ops apply`, a rebuild) is still on disk: its
    /// writer died half-way. Any other writer would be overwritten when the journal is rolled
    /// forward, so every writer refuses until `novel chapter recover` has finished it.
    #[error("{what}没有完成（日志 {} 仍在）", crate::layout::JOURNAL)]
    JournalPending { what: String },
    #[error(transparent)]
    Store(StoreError),
}

impl From<StoreError> for LockError {
    /// A lock error that travelled inside a store error comes out as itself.
    fn from(e: StoreError) -> Self {
        match e {
            StoreError::Lock(inner) => *inner,
            other => LockError::Store(other),
        }
    }
}

impl LockError {
    pub fn code(&self) -> &'static str {
        match self {
            LockError::Held { .. } => "E_LOCKED",
            LockError::NotOwner => "E_LOCK_OWNER",
            LockError::NotHeld | LockError::NoSessionLock => "E_NOT_LOCKED",
            LockError::OtherSession { .. } => "E_LOCK_OWNER",
            LockError::Busy { .. } => "E_LOCKED",
            LockError::DeadOwner { .. } | LockError::UnfitOwner { .. } => "E_OWNER_PID",
            LockError::JournalPending { .. } => "E_JOURNAL",
            LockError::Store(e) => e.code(),
        }
    }

    /// What to do about it.
    pub fn hint(&self) -> String {
        match self {
            LockError::Held { .. } => "等它完成；若确认那个会话已经不在，运行 novel chapter recover（僵尸锁会被自动清除）或 novel lock clear".into(),
            LockError::NotOwner => "使用 novel chapter begin 或 novel lock acquire 给出的锁令牌；novel lock status 可查看持有者".into(),
            LockError::NotHeld => "无需释放".into(),
            LockError::NoSessionLock => "先运行 novel chapter begin N 开始（或接着写）这一章".into(),
            LockError::OtherSession { .. } => "等那个会话写完；若确认它已经关掉，运行 novel chapter begin N，本会话会清掉失效的锁并接着写".into(),
            LockError::Busy { .. } => format!("等它结束后重试同一条命令；要等得更久，设环境变量 {}=秒数（默认 30）", crate::lockfile::TIMEOUT_VAR),
            LockError::DeadOwner { .. } => "省略 --owner-pid（默认取当前会话的进程），或给出一个正在运行的进程号".into(),
            LockError::UnfitOwner { .. } => "省略 --owner-pid（默认取当前会话的进程），或给出会话本身或它启动的进程".into(),
            LockError::JournalPending { .. } => "先运行 novel chapter recover 补完它，再重试这条命令".into(),
            LockError::Store(e) => e.hint(),
        }
    }

    /// A conflict with another session or process (exit 3), as opposed to a usage or project
    /// problem.
    pub fn is_conflict(&self) -> bool {
        match self {
            LockError::Held { .. }
            | LockError::NotOwner
            | LockError::OtherSession { .. }
            | LockError::Busy { .. }
            | LockError::JournalPending { .. } => true,
            LockError::NotHeld
            | LockError::NoSessionLock
            | LockError::DeadOwner { .. }
            | LockError::UnfitOwner { .. }
            | LockError::Store(_) => false,
        }
    }
}
