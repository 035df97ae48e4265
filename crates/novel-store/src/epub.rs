//! The EPUB 3 package of `novel export --format epub`: a title page, one XHTML file per volume
//! divider (`第N卷`, a level-1 entry of the table of contents) and per chapter (level 2 under its
//! volume, level 1 when no volume is known), a CSS that works in horizontal and
//! `writing-mode: vertical-rl` readers, `zh-CN` metadata.
//!
//! Deterministic: the identifier is derived from the title, author and chapter range, the
//! modification date and every zip entry's time come from [`EpubBook::dated`]. `epub-builder`
//! stamps zip entries with the clock, so the archive is copied once more, compressed data as is,
//! with the fixed time.

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
p { text-indent: 2em; margin: 0; }
p.center { text-indent: 0; text-align: center; }
"#;

/// A chapter of the book.
#[derive(Debug, Clone)]
pub struct EpubChapter {
    pub number: u32,
    /// `第N章 标题`.
    pub title: String,
    pub paragraphs: Vec<String>,
    pub volume: Option<u32>,
}

/// What the package says about the book.
#[derive(Debug, Clone)]
pub struct EpubBook {
    pub title: String,
    pub author: String,
    /// Seconds since the epoch: `dcterms:modified` and the zip entries' time.
    pub dated: u64,
    pub chapters: Vec<EpubChapter>,
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

/// One XHTML document: `heading` as an `<h1>`/`<h2>`, then `paragraphs` as `<p>`.
pub fn xhtml(title: &str, level: u8, class: Option<&str>, paragraphs: &[String]) -> String {
    let size: usize = paragraphs.iter().map(|p| p.len() + 9).sum();
    let mut out = String::with_capacity(size + 512);
    let title = escape(title);
    out.push_str("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<!DOCTYPE html>\n");
    out.push_str("<html xmlns=\"http://www.w3.org/1999/xhtml\" xmlns:epub=\"http://www.idpf.org/2007/ops\" xml:lang=\"zh-CN\" lang=\"zh-CN\">\n");
    out.push_str(&format!(
        "<head>\n<meta charset=\"utf-8\" />\n<title>{title}</title>\n<link rel=\"stylesheet\" type=\"text/css\" href=\"stylesheet.css\" />\n</head>\n<body>\n"
    ));
    out.push_str(&format!("<h{level}>{title}</h{level}>\n"));
    let open = match class {
        Some(c) => format!("<p class=\"{c}\">"),
        None => "<p>".to_string(),
    };
    for p in paragraphs {
        out.push_str(&open);
        out.push_str(&escape(p));
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
    let mut current_volume = None;
    let mut first = true;
    for chapter in &book.chapters {
        if chapter.volume.is_some() && chapter.volume != current_volume {
            current_volume = chapter.volume;
            let v = chapter.volume.unwrap_or_default();
            let name = format!("第{v}卷");
            let page = xhtml(&name, 1, None, &[]);
            builder
                .add_content(
                    EpubContent::new(
                        format!("{}.xhtml", novel_core::naming::volume_stem(v)),
                        page.as_bytes(),
                    )
                    .title(name)
                    .level(1),
                )
                .map_err(err)?;
        }
        let level = if chapter.volume.is_some() { 2 } else { 1 };
        let page = xhtml(&chapter.title, 2, None, &chapter.paragraphs);
        let mut content = EpubContent::new(chapter_file(chapter.number), page.as_bytes())
            .title(chapter.title.as_str())
            .level(level);
        if first {
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
    let first = book.chapters.first().map_or(0, |c| c.number);
    let last = book.chapters.last().map_or(0, |c| c.number);
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
