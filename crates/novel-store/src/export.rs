//! `novel export`: which committed chapters a range names, the book's facts (title, author,
//! volumes, a fixed date), the EPUB 3 package, and where the result is written.
//!
//! Only committed chapters count: `chapters/chapter-NNN.md` up to the checkpoint's
//! `last_completed_chapter`, never `staging/`. Volumes come from [`crate::next::volume_span`],
//! the resolver `novel status` uses. The EPUB is built by `epub-builder` (OPF, nav, NCX); its
//! dates, identifier and zip entry times are fixed from the project (the checkpoint's time, the
//! title and the range), so the same chapters always give the same bytes.
//!
//! Besides the chapters it reads the book's extras (`extras/*.md`: 楔子、番外, the preface, a
//! volume's own text — each says where it stands in its front matter) and what each volume's
//! heading is (`storyline-schedule.json` `volume_heading` as an import wrote it, or its
//! `volume_title`, or the outline's `# 第 2 卷 · 标题`). Putting it all in reading order and laying
//! out the text is `novel_text::export`'s; [`crate::epub`] packs the pieces.
//!
//! Layer: commands — the work behind a command (stages, volumes, spec, reviews, import, export, the
//! guard); the top.

use novel_core::model::{Checkpoint, Settings};

use crate::error::StoreError;
use crate::{Project, io, layout, select};

/// The chapters an export covers, as the author asked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Range {
    /// Every committed chapter.
    All,
    /// The committed chapters of `[a, b]`.
    Chapters([u32; 2]),
    /// The committed chapters of volume `v` (its span by `volume_span`).
    Volume(u32),
}

/// Why an export cannot run.
#[derive(Debug, thiserror::Error)]
pub enum ExportError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("还没有已提交的章节（chapters/ 中没有断点记录的已完成章节）")]
    NoneCommitted,
    #[error("第 {}–{} 章中没有已提交的章节（已提交到第 {last} 章）", range[0], range[1])]
    NoneInRange { range: [u32; 2], last: u32 },
    #[error("不知道第 {volume} 卷从哪一章到哪一章：{}", if problems.is_empty() { "没有调度、大纲、契约，novel.json 也没有 chapters_per_volume".to_string() } else { problems.join("；") })]
    VolumeRange { volume: u32, problems: Vec<String> },
    #[error("生成 EPUB 失败：{0}")]
    Epub(String),
}

impl ExportError {
    pub fn code(&self) -> &'static str {
        match self {
            ExportError::Store(e) => e.code(),
            ExportError::NoneCommitted | ExportError::NoneInRange { .. } => "E_NO_CHAPTER",
            ExportError::VolumeRange { .. } => "E_VOLUME_RANGE",
            ExportError::Epub(_) => "E_EXPORT_EPUB",
        }
    }

    pub fn hint(&self) -> String {
        match self {
            ExportError::Store(e) => e.hint(),
            ExportError::NoneCommitted => "章节提交后再导出：novel status 查看进度".into(),
            ExportError::NoneInRange { .. } => {
                "novel status 查看已提交到第几章；不带 --chapters、--volume 时导出全部已提交章节".into()
            }
            ExportError::VolumeRange { .. } => "在 volumes/vol-NN/storyline-schedule.json 写 chapter_range，或在 novel.json 设 chapters_per_volume；也可以改用 --chapters A..B".into(),
            ExportError::Epub(_) => "这是程序的缺陷：请改用 --format txt 或 md 导出，并把这一行报告给插件维护者".into(),
        }
    }
}

/// A committed chapter to export.
#[derive(Debug, Clone)]
pub struct SourceChapter {
    pub number: u32,
    /// `chapters/chapter-NNN.md`.
    pub rel: String,
    pub text: String,
    /// The volume whose span holds the chapter, when one is known.
    pub volume: Option<u32>,
}

/// An extra of the book (`extras/NN-名称.md`).
#[derive(Debug, Clone)]
pub struct SourceExtra {
    /// `extras/01-楔子.md`.
    pub rel: String,
    /// The file name without `.md` (`01-楔子`).
    pub stem: String,
    pub text: String,
}

/// What a volume's heading is, as far as the project knows.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct VolumeFacts {
    /// The heading as written (an imported `第一卷 风起`), or `第N卷 标题` from a title.
    pub heading: Option<String>,
    /// The volume was planned in the project (not imported): a plain `第N卷` may be printed
    /// when the book has several volumes.
    pub generic: bool,
}

/// What an export reads: the book's facts and its chapters in order.
#[derive(Debug, Clone)]
pub struct Gathered {
    /// `novel.json` `title`, else the project directory's name.
    pub title: String,
    /// `novel.json` `author`, when set.
    pub author: Option<String>,
    /// Seconds since the epoch the book is dated by: the checkpoint's time, else `novel.json`
    /// `created_at`, else 2000-01-01.
    pub dated: u64,
    /// The volume asked for (`--volume`).
    pub volume: Option<u32>,
    pub chapters: Vec<SourceChapter>,
    /// Chapters of the range up to the last completed one with no committed file.
    pub missing: Vec<u32>,
    /// Files that could not be read while placing chapters in volumes (the rest still runs).
    pub problems: Vec<String>,
    /// Every extra of the book, in file-name order (the export picks those of its range).
    pub extras: Vec<SourceExtra>,
    /// The known volumes' headings.
    pub volumes: std::collections::BTreeMap<u32, VolumeFacts>,
    /// The first and last committed chapters of the whole book.
    pub book: [u32; 2],
}

/// The author an EPUB names when neither `--author` nor `novel.json` gives one.
pub const UNKNOWN_AUTHOR: &str = "佚名";

impl Gathered {
    /// The author to print: `given` (the command's `--author`) when not blank, else
    /// `novel.json` `author`, else [`UNKNOWN_AUTHOR`].
    pub fn author_or(&self, given: Option<&str>) -> String {
        given
            .map(str::trim)
            .filter(|a| !a.is_empty())
            .map(str::to_string)
            .or_else(|| self.author.clone())
            .unwrap_or_else(|| UNKNOWN_AUTHOR.to_string())
    }
}

/// Where a character first appears in the chapters exported: the chapter file, and the line and
/// column (1-based, the column counted in characters) in it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Located {
    pub character: String,
    pub file: String,
    pub line: usize,
    pub column: usize,
}

/// The first place of each of `chars` in `chapters` (a character found nowhere — it came from
/// no file — is left out).
pub fn locate(chars: &[char], chapters: &[SourceChapter]) -> Vec<Located> {
    chars
        .iter()
        .filter_map(|ch| {
            chapters.iter().find_map(|c| {
                c.text.lines().enumerate().find_map(|(i, line)| {
                    let col = line.chars().position(|x| x == *ch)?;
                    Some(Located {
                        character: ch.to_string(),
                        file: c.rel.clone(),
                        line: i + 1,
                        column: col + 1,
                    })
                })
            })
        })
        .collect()
}

/// 2000-01-01T00:00:00Z: the date of a project that records none.
const FALLBACK_DATE: u64 = 946_684_800;

/// Reads the committed chapters `range` names, with the facts the book needs.
pub fn gather(project: &Project, range: Range) -> Result<Gathered, ExportError> {
    let checkpoint: Checkpoint = io::read_json(&project.path(layout::CHECKPOINT), "断点文件")?;
    let settings = crate::settings::load(project)?;
    let last = checkpoint.last_completed_chapter;
    let mut problems = Vec::new();
    let (span, volume) = range_span(project, range, last, &mut problems)?;
    let committed: Vec<(u32, String)> = select::committed_chapters(project)?
        .into_iter()
        .filter(|(n, _)| *n <= last && *n > 0)
        .collect();
    let book = [
        committed.first().map_or(0, |c| c.0),
        committed.last().map_or(0, |c| c.0),
    ];
    let wanted: Vec<(u32, String)> = committed
        .into_iter()
        .filter(|(n, _)| *n >= span[0] && *n <= span[1])
        .collect();
    if wanted.is_empty() {
        return Err(match range {
            Range::All => ExportError::NoneCommitted,
            _ => ExportError::NoneInRange { range: span, last },
        });
    }
    let known = crate::volumes::Volumes::load(
        project,
        Some(checkpoint.current_volume.max(volume.unwrap_or(1))),
        &mut problems,
    );
    let chapters = read_chapters(project, wanted, &known)?;
    let extras = read_extras(project)?;
    let volumes = known
        .spans
        .iter()
        .map(|(v, _)| (*v, volume_facts(project, *v)))
        .collect();
    let present: std::collections::BTreeSet<u32> = chapters.iter().map(|c| c.number).collect();
    let first = chapters.first().map_or(span[0], |c| c.number);
    let missing = (first..=span[1].min(last))
        .filter(|n| !present.contains(n))
        .collect();
    Ok(Gathered {
        title: book_title(project, &settings),
        author: book_author(&settings),
        dated: book_date(&checkpoint, &settings),
        volume,
        chapters,
        missing,
        problems,
        extras,
        volumes,
        book,
    })
}

/// Every `extras/*.md` file (not hidden), by name.
fn read_extras(project: &Project) -> Result<Vec<SourceExtra>, ExportError> {
    let mut out = Vec::new();
    for input in select::extra_inputs(project)? {
        let text = io::read_text(&input.path)?;
        let stem = input
            .shown
            .rsplit('/')
            .next()
            .unwrap_or_default()
            .trim_end_matches(".md")
            .to_string();
        out.push(SourceExtra {
            rel: input.shown,
            stem,
            text,
        });
    }
    Ok(out)
}

/// Volume `v`'s heading: the schedule's `volume_heading` (an import's, as written) or
/// `volume_title`, else the outline's first heading when it names the volume (`# 第 2 卷 · 标题`).
fn volume_facts(project: &Project, v: u32) -> VolumeFacts {
    let dir = layout::volume_dir(v);
    let schedule: Option<serde_json::Value> =
        io::read_text(&project.path(&format!("{dir}/storyline-schedule.json")))
            .ok()
            .and_then(|t| serde_json::from_str(&t).ok());
    let field = |k: &str| {
        schedule
            .as_ref()
            .and_then(|s| s.get(k))
            .and_then(|x| x.as_str())
            .map(str::trim)
            .filter(|x| !x.is_empty())
            .map(str::to_string)
    };
    let imported = schedule
        .as_ref()
        .and_then(|s| s.get("imported"))
        .and_then(serde_json::Value::as_bool)
        .unwrap_or(false);
    if imported {
        return VolumeFacts {
            heading: field("volume_heading"),
            generic: false,
        };
    }
    let outline = io::read_text(&project.path(&format!("{dir}/outline.md")))
        .ok()
        .and_then(|t| {
            t.lines()
                .map(str::trim)
                .find(|l| l.starts_with('#'))
                .map(|l| l.trim_start_matches('#').trim().to_string())
        })
        .filter(|h| {
            h.strip_prefix('第').is_some_and(|r| {
                let r = r.trim_start();
                novel_core::numerals::leading_u32(r)
                    .is_some_and(|(n, len)| n == v && r[len..].trim_start().starts_with('卷'))
            })
        });
    let heading = field("volume_heading")
        .or_else(|| field("volume_title").map(|t| format!("第{v}卷 {t}")))
        .or(outline);
    VolumeFacts {
        heading,
        generic: true,
    }
}

/// The chapters `range` covers (everything up to the last completed chapter, the given ones,
/// or the volume's span) and the volume asked for; a volume whose span is unknown is an error.
fn range_span(
    project: &Project,
    range: Range,
    last: u32,
    problems: &mut Vec<String>,
) -> Result<([u32; 2], Option<u32>), ExportError> {
    match range {
        Range::All => Ok(([1, last.max(1)], None)),
        Range::Chapters(r) => Ok((r, None)),
        Range::Volume(v) => match crate::next::volume_span(project, v, problems) {
            Some(s) => Ok((s.range, Some(v))),
            None => Err(ExportError::VolumeRange {
                volume: v,
                problems: std::mem::take(problems),
            }),
        },
    }
}

/// The text of each wanted chapter, placed in the volume whose span holds it
/// ([`crate::volumes::Volumes::holding`]: the one rule of which volume a chapter is in).
fn read_chapters(
    project: &Project,
    wanted: Vec<(u32, String)>,
    volumes: &crate::volumes::Volumes,
) -> Result<Vec<SourceChapter>, ExportError> {
    let mut chapters = Vec::with_capacity(wanted.len());
    for (number, rel) in wanted {
        let text = io::read_text(&project.path(&rel))?;
        let volume = volumes.holding(number);
        chapters.push(SourceChapter {
            number,
            rel,
            text,
            volume,
        });
    }
    Ok(chapters)
}

/// `novel.json` `title`, else the project directory's name.
fn book_title(project: &Project, settings: &Settings) -> String {
    settings
        .title
        .clone()
        .filter(|t| !t.trim().is_empty())
        .unwrap_or_else(|| project_dir_name(project))
}

/// `novel.json` `author`, when set.
fn book_author(settings: &Settings) -> Option<String> {
    settings
        .extra
        .get("author")
        .and_then(|v| v.as_str())
        .map(str::trim)
        .filter(|a| !a.is_empty())
        .map(str::to_string)
}

/// The checkpoint's time, else `novel.json` `created_at`, else [`FALLBACK_DATE`].
fn book_date(checkpoint: &Checkpoint, settings: &Settings) -> u64 {
    [
        checkpoint.last_checkpoint_time.as_deref(),
        settings.created_at.as_deref(),
    ]
    .into_iter()
    .flatten()
    .find_map(crate::time::parse_iso)
    .unwrap_or(FALLBACK_DATE)
}

fn project_dir_name(project: &Project) -> String {
    project
        .root
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "未命名".to_string())
}

/// The export's default file inside the project: `export/<书名>-<范围>.<ext>`, the range
/// `第V卷` for a volume, else `第A-B章` (`第A章` for one chapter).
pub fn default_file(title: &str, volume: Option<u32>, first: u32, last: u32, ext: &str) -> String {
    let range = match volume {
        Some(v) => format!("第{v}卷"),
        None if first == last => format!("第{first}章"),
        None => format!("第{first}-{last}章"),
    };
    format!("export/{}-{range}.{ext}", file_safe(title))
}

/// A title usable as a file name on every system: path separators, reserved and control
/// characters become `_`, leading and trailing dots and spaces go.
pub fn file_safe(title: &str) -> String {
    let cleaned: String = title
        .chars()
        .map(|c| {
            if c.is_control() || "/\\:*?\"<>|".contains(c) {
                '_'
            } else {
                c
            }
        })
        .collect();
    let trimmed = cleaned.trim_matches(|c: char| c == '.' || c.is_whitespace());
    if trimmed.is_empty() {
        "未命名".to_string()
    } else {
        trimmed.to_string()
    }
}

/// Writes an export atomically, creating its directory.
pub fn write(path: &std::path::Path, bytes: &[u8]) -> Result<(), StoreError> {
    if let Some(why) = crate::guard::output_refusal(path) {
        return Err(StoreError::OutputTarget {
            path: path.to_path_buf(),
            shown: crate::guard::shown(path),
            why,
        });
    }
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        io::create_dir_all(dir)?;
    }
    io::write_atomic(path, bytes)
}
