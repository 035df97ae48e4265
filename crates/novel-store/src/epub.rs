//! The EPUB 3 package of `novel export --format epub`: a title page, one XHTML file per volume
//! divider (its heading as written, or `第N卷`: a level-1 entry of the table of contents, with
//! the volume's own text), per chapter and per extra (楔子、番外: level 2 under their volume,
//! level 1 outside any), a CSS that works in horizontal and `writing-mode: vertical-rl`
//! readers, `zh-CN` metadata. The text is escaped for XML and nothing else: every line of a
//! chapter is a paragraph as written (`*2`, `**`, a line-start `- ` stay).
//!
//! Deterministic: the identifier is derived from the title, author and chapter range, the
//! modification date and every zip entry's time come from [`EpubBook::dated`]. `epub-builder`
//! stamps zip entries with the clock, so the archive is copied once more, compressed data as is,
//! with the fixed time.
//!
//! Layer: commands — the work behind a command (stages, volumes, spec, reviews, import, export, the
//! guard); the top.

use std::io::{Cursor, Read, Write};

use epub_builder::{EpubBuilder, EpubContent, EpubVersion, ReferenceType, ZipLibrary};

use crate::export::ExportError;

/// The stylesheet: no fixed widths or physical page geometry, so it holds in vertical layout;
/// a CJK font stack; paragraphs indented by two characters.
pub const CSS: &str = r#"@charset "utf-8";
html, body { margin: 0; padding: 0; }
body {
  font-family: "Noto Serif CJK SC", "Source Han Serif SC", "Songti SC", "STSong", "SimSun", serif;
  line-height: 1.8;
  text-align: justify;
  word-wrap: break-word;
}
h1, h2 { font-weight: bold; line-height: 1.4; text-align: center; text-indent: 0; margin: 1.5em 0; }
h1 { font-size: 1.6em; }
h2 { font-size: 1.3em; }
p { text-indent: 2em; margin: 0; white-space: pre-wrap; }
p.indented { text-indent: 0; }
p.center { text-indent: 0; text-align: center; }
"#;

/// What a page of the book is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PageKind {
    /// A volume divider (its heading, then the volume's own text, if any).
    Volume,
    Chapter,
    Extra,
}

/// A page of the book, in reading order.
#[derive(Debug, Clone)]
pub struct EpubPage {
    pub kind: PageKind,
    /// The heading as written (`第一回 …`, `第一卷 风起`, `楔子 风雪夜`), or a name for text
    /// without one (前言).
    pub title: String,
    /// The text's lines (blank ones are left out of the page).
    pub lines: Vec<String>,
    /// The chapter number (chapters).
    pub number: Option<u32>,
    /// The volume it falls in.
    pub volume: Option<u32>,
}

/// What the package says about the book.
#[derive(Debug, Clone)]
pub struct EpubBook {
    pub title: String,
    pub author: String,
    /// Seconds since the epoch: `dcterms:modified` and the zip entries' time.
    pub dated: u64,
    pub pages: Vec<EpubPage>,
}

fn err(e: impl std::fmt::Display) -> ExportError {
    ExportError::Epub(e.to_string())
}

/// Escapes text for XHTML content and attributes.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c if is_xml_char(c) => out.push(c),
            _ => {}
        }
    }
    out
}

/// Characters XML 1.0 allows (control characters other than tab and newlines are not).
fn is_xml_char(c: char) -> bool {
    matches!(c, '\t' | '\n' | '\r' | '\u{20}'..='\u{D7FF}' | '\u{E000}'..='\u{FFFD}' | '\u{10000}'..)
}

/// One XHTML document: `heading` as an `<h1>`/`<h2>`, then each non-blank line of `lines` as a
/// `<p>` (class `indented` when it opens with its own spaces, which are kept).
pub fn xhtml(title: &str, level: u8, class: Option<&str>, lines: &[String]) -> String {
    let size: usize = lines.iter().map(|p| p.len() + 9).sum();
    let mut out = String::with_capacity(size + 512);
    let title = escape(title);
    out.push_str("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<!DOCTYPE html>\n");
    out.push_str("<html xmlns=\"http://www.w3.org/1999/xhtml\" xmlns:epub=\"http://www.idpf.org/2007/ops\" xml:lang=\"zh-CN\" lang=\"zh-CN\">\n");
    out.push_str(&format!(
        "<head>\n<meta charset=\"utf-8\" />\n<title>{title}</title>\n<link rel=\"stylesheet\" type=\"text/css\" href=\"stylesheet.css\" />\n</head>\n<body>\n"
    ));
    out.push_str(&format!("<h{level}>{title}</h{level}>\n"));
    for line in lines {
        if line.chars().all(|c| c.is_whitespace() || c == '\u{3000}') {
            continue;
        }
        let class = match class {
            Some(c) => Some(c),
            None if line.starts_with([' ', '\t', '\u{3000}']) => Some("indented"),
            None => None,
        };
        match class {
            Some(c) => out.push_str(&format!("<p class=\"{c}\">")),
            None => out.push_str("<p>"),
        }
        out.push_str(&escape(line));
        out.push_str("</p>\n");
    }
    out.push_str("</body>\n</html>\n");
    out
}

/// The file of chapter `n` in the package (`chapter-001.xhtml`).
pub fn chapter_file(n: u32) -> String {
    format!("{}.xhtml", novel_core::naming::chapter_stem(n))
}

/// Builds the EPUB of `book`.
pub fn build(book: &EpubBook) -> Result<Vec<u8>, ExportError> {
    let mut builder = EpubBuilder::new(ZipLibrary::new().map_err(err)?).map_err(err)?;
    builder.epub_version(EpubVersion::V30);
    builder.set_title(book.title.as_str());
    builder.add_author(book.author.as_str());
    builder.set_languages(vec!["zh-CN".to_string()]);
    builder.set_toc_name("目录");
    builder.set_generator("novel");
    builder.set_uuid(identifier(book));
    builder.set_modified_date(chrono_time(book.dated));
    builder.stylesheet(CSS.as_bytes()).map_err(err)?;
    let title_page = xhtml(
        &book.title,
        1,
        Some("center"),
        std::slice::from_ref(&book.author),
    );
    builder
        .add_content(
            EpubContent::new("title.xhtml", title_page.as_bytes())
                .reftype(ReferenceType::TitlePage),
        )
        .map_err(err)?;
    let mut in_volume = false;
    let mut first = true;
    let mut extra_no = 0;
    for page in &book.pages {
        let (file, level, h) = match page.kind {
            PageKind::Volume => {
                in_volume = true;
                let v = page.volume.unwrap_or_default();
                (
                    format!("{}.xhtml", novel_core::naming::volume_stem(v)),
                    1,
                    1,
                )
            }
            PageKind::Chapter => (
                chapter_file(page.number.unwrap_or_default()),
                if in_volume && page.volume.is_some() {
                    2
                } else {
                    1
                },
                2,
            ),
            PageKind::Extra => {
                extra_no += 1;
                (
                    format!("extra-{extra_no:02}.xhtml"),
                    if in_volume && page.volume.is_some() {
                        2
                    } else {
                        1
                    },
                    2,
                )
            }
        };
        let doc = xhtml(&page.title, h, None, &page.lines);
        let mut content = EpubContent::new(file, doc.as_bytes())
            .title(page.title.as_str())
            .level(level);
        if first && page.kind != PageKind::Volume {
            content = content.reftype(ReferenceType::Text);
            first = false;
        }
        builder.add_content(content).map_err(err)?;
    }
    let mut raw = Vec::new();
    builder.generate(&mut raw).map_err(err)?;
    restamp(raw, book.dated)
}

/// A stable identifier: two FNV-1a hashes of title, author and chapter range, as a version-8
/// (custom) UUID.
fn identifier(book: &EpubBook) -> uuid::Uuid {
    let mut numbers = book.pages.iter().filter_map(|p| p.number);
    let first = numbers.next().unwrap_or(0);
    let last = numbers.next_back().unwrap_or(first);
    let key = format!("{}\u{0}{}\u{0}{first}\u{0}{last}", book.title, book.author);
    let fnv = |seed: u64| {
        key.bytes().fold(seed, |h, b| {
            (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
        })
    };
    let mut bytes = [0u8; 16];
    bytes[..8].copy_from_slice(&fnv(0xcbf2_9ce4_8422_2325).to_be_bytes());
    bytes[8..].copy_from_slice(&fnv(0x6c62_272e_07bb_0142).to_be_bytes());
    bytes[6] = (bytes[6] & 0x0f) | 0x80;
    bytes[8] = (bytes[8] & 0x3f) | 0x80;
    uuid::Uuid::from_bytes(bytes)
}

fn chrono_time(secs: u64) -> chrono::DateTime<chrono::Utc> {
    chrono::DateTime::from_timestamp(i64::try_from(secs).unwrap_or(0), 0).unwrap_or_default()
}

/// The archive again with every entry dated `secs` (zip times start in 1980: earlier dates
/// become 1980-01-01), compressed data copied as is — except `content.opf`, where
/// `epub-builder` 0.8 gives the first `dc:language` and the first `dc:creator` the same id
/// (`epub-creator-0`, which epubcheck rejects): the language gets its own id.
fn restamp(raw: Vec<u8>, secs: u64) -> Result<Vec<u8>, ExportError> {
    let stamp = zip_time(secs);
    let mut source = zip::ZipArchive::new(Cursor::new(raw)).map_err(err)?;
    let mut out = zip::ZipWriter::new(Cursor::new(Vec::new()));
    for i in 0..source.len() {
        if source.name_for_index(i) == Some(OPF) {
            let mut opf = String::new();
            source
                .by_index(i)
                .map_err(err)?
                .read_to_string(&mut opf)
                .map_err(err)?;
            let opf = opf.replace(
                "<dc:language id=\"epub-creator-",
                "<dc:language id=\"epub-language-",
            );
            let options = zip::write::SimpleFileOptions::default()
                .compression_method(zip::CompressionMethod::Deflated)
                .last_modified_time(stamp)
                .unix_permissions(0o644);
            out.start_file(OPF, options).map_err(err)?;
            out.write_all(opf.as_bytes()).map_err(err)?;
            continue;
        }
        let file = source.by_index_raw(i).map_err(err)?;
        out.raw_copy_file_touch(file, stamp, Some(0o644))
            .map_err(err)?;
    }
    let mut cursor = out.finish().map_err(err)?;
    cursor.flush().map_err(err)?;
    Ok(cursor.into_inner())
}

const OPF: &str = "OEBPS/content.opf";

fn zip_time(secs: u64) -> zip::DateTime {
    let iso = crate::time::format_utc(secs);
    let part =
        |r: std::ops::Range<usize>| iso.get(r).and_then(|s| s.parse::<u16>().ok()).unwrap_or(0);
    zip::DateTime::from_date_and_time(
        part(0..4),
        part(5..7) as u8,
        part(8..10) as u8,
        part(11..13) as u8,
        part(14..16) as u8,
        part(17..19) as u8,
    )
    .unwrap_or_default()
}
