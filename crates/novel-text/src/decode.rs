//! Bytes of a manuscript to text (`novel import`), never guessing silently.
//!
//! The encoding is found over the whole file: a BOM; else UTF-16 without a BOM, told by its
//! line breaks (`0A 00` / `00 0A` code units); else UTF-8 when every byte sequence of the file
//! is valid UTF-8; else the legacy Chinese encodings, GB18030 (which reads GBK and GB2312) and
//! Big5, each decoded strictly over the whole file and scored by how much of its text is
//! common characters ([`Decoded::confidence`]: the share of double-byte characters in GB2312's
//! symbols and first level, or Big5's symbols and frequent characters). Mojibake — UTF-8 read
//! as GBK, Big5 as GBK — scores low; real text scores above 0.9.
//!
//! Every doubt is an error ([`DecodeError`]) naming the byte offset, line and column and every
//! encoding tried: a malformed sequence anywhere (one bad byte in a UTF-8 book, a file half
//! UTF-8 and half GBK), a replacement character U+FFFD already in the text (a copy damaged by
//! an earlier conversion), control characters (binary garbage, NUL bytes), a legacy decode
//! that reads as mojibake. `encoding` forces an encoding (`--encoding`); `lossy` accepts
//! replacements and drops control characters, and says how many (`--lossy`).
//!
//! Then line endings become `\n` and the text is put in Unicode NFC, the form every other
//! command reads.
//!
//! Layer: ground — decoding, Markdown, normalisation, 字数, sentences, names; below every check.

use encoding_rs::{BIG5, DecoderResult, Encoding, GB18030, GBK, UTF_8, UTF_16BE, UTF_16LE};
use unicode_normalization::{IsNormalized, UnicodeNormalization, is_nfc_quick};

/// How to decode.
#[derive(Debug, Clone, Copy, Default)]
pub struct Options {
    /// The encoding the author names (`--encoding`): no detection.
    pub encoding: Option<&'static Encoding>,
    /// Accept malformed sequences (as U+FFFD) and drop control characters (`--lossy`).
    pub lossy: bool,
}

/// A decoded manuscript.
#[derive(Debug, Clone, PartialEq)]
pub struct Decoded {
    pub text: String,
    /// The encoding's WHATWG name (`UTF-8`, `gb18030`, `Big5`, `UTF-16LE` …).
    pub encoding: &'static str,
    /// How it was found: `bom`, `nul_bytes` (UTF-16 without BOM), `valid_utf8`, `ascii`,
    /// `detected` (a legacy encoding, scored), `given` (`--encoding`), `empty`.
    pub found_by: &'static str,
    /// How sure the encoding is, 0–1: 1 for a BOM, valid UTF-8 or a given encoding; for a
    /// detected legacy encoding, the share of its characters that are common ones.
    pub confidence: f64,
    /// Characters replaced by U+FFFD (malformed sequences, and U+FFFD already in the file):
    /// non-zero only with `lossy`.
    pub replaced: usize,
    /// Control characters dropped (only with `lossy`).
    pub removed: usize,
    /// NFC changed some characters.
    pub normalized: bool,
}

impl Decoded {
    /// Some bytes could not be decoded, or characters were dropped (`--lossy`).
    pub fn malformed(&self) -> bool {
        self.replaced > 0 || self.removed > 0
    }
}

/// One encoding tried: where it fails (byte offset, 1-based line and column in characters),
/// or, when it reads the whole file, how likely its text is.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Attempt {
    pub encoding: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub offset: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub column: Option<usize>,
    /// The share of common characters when it decodes the whole file.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub confidence: Option<f64>,
}

impl Attempt {
    fn failed(encoding: &'static Encoding, bytes: &[u8], offset: usize) -> Attempt {
        let (line, column) = position(encoding, bytes, offset);
        Attempt {
            encoding: encoding.name(),
            offset: Some(offset),
            line: Some(line),
            column: Some(column),
            confidence: None,
        }
    }

    /// In Chinese: `UTF-8：第 12 行第 3 列（第 345 字节）起不合法` or `GB18030：能读完，但像乱码（常用字 31%）`.
    pub fn describe(&self) -> String {
        match (self.line, self.column, self.offset, self.confidence) {
            (Some(l), Some(c), Some(o), _) => {
                format!(
                    "按 {} 读：第 {l} 行第 {c} 列（第 {o} 字节）起不合法",
                    self.encoding
                )
            }
            (_, _, _, Some(conf)) => format!(
                "按 {} 读：能读完，但像乱码（常用字只占 {:.0}%）",
                self.encoding,
                conf * 100.0
            ),
            _ => format!("按 {} 读：不行", self.encoding),
        }
    }
}

/// Why the bytes were not taken as text.
#[derive(Debug, Clone, PartialEq)]
pub enum DecodeError {
    /// No encoding reads the whole file cleanly and plausibly.
    Undecodable { attempts: Vec<Attempt> },
    /// The text has replacement characters U+FFFD (damaged before it came here).
    Replacement {
        encoding: &'static str,
        line: usize,
        column: usize,
        count: usize,
    },
    /// The text has control characters: not a text file.
    Control {
        encoding: &'static str,
        line: usize,
        column: usize,
        code: u32,
        count: usize,
    },
    /// `--encoding` names no encoding.
    UnknownEncoding { name: String },
}

impl DecodeError {
    /// What went wrong, in Chinese.
    pub fn message(&self) -> String {
        match self {
            DecodeError::Undecodable { attempts } => {
                let tried: Vec<String> = attempts.iter().map(Attempt::describe).collect();
                let mixed = attempts
                    .first()
                    .is_some_and(|a| a.encoding == "UTF-8" && a.line.is_some_and(|l| l > 1));
                let note = if mixed {
                    "；文件开头是 UTF-8，后面不是：可能混用了两种编码"
                } else {
                    ""
                };
                format!("认不出书稿的编码：{}{note}", tried.join("；"))
            }
            DecodeError::Replacement {
                encoding,
                line,
                column,
                count,
            } => format!(
                "书稿（{encoding}）里有 {count} 个替换字符「\u{fffd}」，第一个在第 {line} 行第 {column} 列：文件在之前的转换中已经损坏"
            ),
            DecodeError::Control {
                encoding,
                line,
                column,
                code,
                count,
            } => format!(
                "书稿（按 {encoding} 读）里有 {count} 个控制字符，第一个 U+{code:04X} 在第 {line} 行第 {column} 列：这不像文本文件"
            ),
            DecodeError::UnknownEncoding { name } => format!("不认识编码「{name}」"),
        }
    }

    /// What to do, in Chinese.
    pub fn hint(&self) -> String {
        match self {
            DecodeError::UnknownEncoding { .. } => {
                "写编码的标准名称：utf-8、gbk、gb18030、big5、utf-16le、utf-16be".into()
            }
            DecodeError::Control { .. } => "确认给的是书稿的 .txt/.md 文件；确实是书稿时加 --lossy 去掉控制字符再导入（会报告去掉了多少）".into(),
            _ => "用文本编辑器把书稿另存为 UTF-8 后重新导入；确知编码时加 --encoding（如 --encoding gbk）；接受把坏字节换成「\u{fffd}」时再加 --lossy（会报告替换了多少字）".into(),
        }
    }
}

/// The encoding a name stands for (`gbk`, `GB18030`, `utf8`, `big5` …); GBK reads as GB18030.
pub fn encoding_for(name: &str) -> Result<&'static Encoding, DecodeError> {
    let label = match name.trim().to_ascii_lowercase().as_str() {
        "utf8" => "utf-8".to_string(),
        "utf16le" => "utf-16le".to_string(),
        "utf16be" => "utf-16be".to_string(),
        other => other.to_string(),
    };
    Encoding::for_label(label.as_bytes()).ok_or_else(|| DecodeError::UnknownEncoding {
        name: name.to_string(),
    })
}

/// Decodes `bytes` (see the module note).
pub fn decode(bytes: &[u8], options: Options) -> Result<Decoded, DecodeError> {
    let (encoding, skip, found_by, confidence) = match options.encoding {
        Some(given) => {
            let given = if given == GBK { GB18030 } else { given };
            let skip = match Encoding::for_bom(bytes) {
                Some((enc, len)) if enc == given => len,
                _ => 0,
            };
            (given, skip, "given", 1.0)
        }
        None => detect(bytes, options.lossy)?,
    };
    let body = &bytes[skip..];
    let (text, replaced_bytes) = if options.lossy {
        let (text, had_errors) = encoding.decode_without_bom_handling(body);
        let replaced = if had_errors {
            text.chars().filter(|c| *c == '\u{fffd}').count()
        } else {
            0
        };
        (text.into_owned(), replaced)
    } else {
        match encoding.decode_without_bom_handling_and_without_replacement(body) {
            Some(text) => (text.into_owned(), 0),
            None => {
                let at = first_malformed(encoding, body).unwrap_or(0);
                return Err(DecodeError::Undecodable {
                    attempts: vec![Attempt::failed(encoding, body, at)],
                });
            }
        }
    };
    let (text, removed, replaced) = checked(text, encoding, options.lossy, replaced_bytes)?;
    let (text, normalized) = normalize(text);
    Ok(Decoded {
        text,
        encoding: encoding.name(),
        found_by: if bytes.is_empty() { "empty" } else { found_by },
        confidence,
        replaced,
        removed,
        normalized,
    })
}

/// The encoding of `bytes`, the BOM length to skip, how it was found and how sure.
fn detect(
    bytes: &[u8],
    lossy: bool,
) -> Result<(&'static Encoding, usize, &'static str, f64), DecodeError> {
    if let Some((enc, len)) = Encoding::for_bom(bytes) {
        return Ok((enc, len, "bom", 1.0));
    }
    if let Some(enc) = utf16_by_nul_bytes(bytes) {
        return Ok((enc, 0, "nul_bytes", 1.0));
    }
    let stats = utf8_stats(bytes);
    if stats.invalid == 0 {
        let how = if stats.multibyte == 0 {
            "ascii"
        } else {
            "valid_utf8"
        };
        return Ok((UTF_8, 0, how, 1.0));
    }
    let utf8 = Attempt::failed(UTF_8, bytes, stats.first_invalid);
    // Mostly UTF-8 with a few bad sequences: a damaged UTF-8 file, not another encoding.
    if stats.multibyte >= 20 * stats.invalid {
        if lossy {
            return Ok((UTF_8, 0, "valid_utf8", 1.0));
        }
        return Err(DecodeError::Undecodable {
            attempts: vec![utf8],
        });
    }
    let mut attempts = vec![utf8];
    let mut best: Option<(&'static Encoding, f64)> = None;
    for enc in [GB18030, BIG5] {
        match first_malformed(enc, bytes) {
            Some(at) => attempts.push(Attempt::failed(enc, bytes, at)),
            None => {
                let score = common_share(enc, bytes);
                attempts.push(Attempt {
                    encoding: enc.name(),
                    offset: None,
                    line: None,
                    column: None,
                    confidence: Some(round2(score)),
                });
                if best.is_none_or(|(_, b)| score > b) {
                    best = Some((enc, score));
                }
            }
        }
    }
    match best {
        Some((enc, score)) if score >= MIN_CONFIDENCE => Ok((enc, 0, "detected", round2(score))),
        _ if lossy => Ok((GB18030, 0, "detected", 0.0)),
        _ => Err(DecodeError::Undecodable { attempts }),
    }
}

/// Below this share of common characters a legacy decode is taken for mojibake.
const MIN_CONFIDENCE: f64 = 0.5;

fn round2(x: f64) -> f64 {
    (x * 100.0).round() / 100.0
}

/// UTF-8 validity over the whole file: multi-byte characters, invalid sequences, and where
/// the first invalid one starts.
struct Utf8Stats {
    multibyte: usize,
    invalid: usize,
    first_invalid: usize,
}

fn utf8_stats(bytes: &[u8]) -> Utf8Stats {
    let mut stats = Utf8Stats {
        multibyte: 0,
        invalid: 0,
        first_invalid: 0,
    };
    let mut at = 0;
    loop {
        let rest = &bytes[at..];
        let (valid, error) = match std::str::from_utf8(rest) {
            Ok(s) => (s.len(), None),
            Err(e) => (
                e.valid_up_to(),
                Some(e.error_len().unwrap_or(rest.len() - e.valid_up_to())),
            ),
        };
        stats.multibyte += rest[..valid]
            .iter()
            .filter(|b| (0xC0..0xF8).contains(*b))
            .count();
        match error {
            None => return stats,
            Some(len) => {
                if stats.invalid == 0 {
                    stats.first_invalid = at + valid;
                }
                stats.invalid += 1;
                at += valid + len.max(1);
                if at >= bytes.len() {
                    return stats;
                }
            }
        }
    }
}

/// Where the first malformed sequence of `bytes` in `encoding` starts, if any.
fn first_malformed(encoding: &'static Encoding, bytes: &[u8]) -> Option<usize> {
    let mut decoder = encoding.new_decoder_without_bom_handling();
    let mut out = vec![0u8; 64 * 1024];
    let mut read_total = 0;
    loop {
        let (result, read, _) =
            decoder.decode_to_utf8_without_replacement(&bytes[read_total..], &mut out, true);
        read_total += read;
        match result {
            DecoderResult::InputEmpty => return None,
            DecoderResult::OutputFull => continue,
            DecoderResult::Malformed(bad, extra) => {
                return Some(read_total.saturating_sub(bad as usize + extra as usize));
            }
        }
    }
}

/// 1-based line and column (in characters) of byte `offset`, the prefix read leniently.
fn position(encoding: &'static Encoding, bytes: &[u8], offset: usize) -> (usize, usize) {
    let (prefix, _) = encoding.decode_without_bom_handling(&bytes[..offset.min(bytes.len())]);
    let line = 1 + prefix.matches('\n').count();
    let column = 1 + prefix.rsplit('\n').next().map_or(0, |l| l.chars().count());
    (line, column)
}

/// The share of double-byte characters in the common range: GB2312's symbols (lead A1–A9)
/// and first level (B0–D7) for GB18030; Big5's symbols (A1–A3) and frequent characters
/// (A4–C6). ASCII is not counted; text with no double-byte character scores 1.
fn common_share(encoding: &'static Encoding, bytes: &[u8]) -> f64 {
    let big5 = encoding == BIG5;
    let (mut common, mut all) = (0usize, 0usize);
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        if b < 0x80 {
            i += 1;
            continue;
        }
        if !big5 && bytes.get(i + 1).is_some_and(|n| (0x30..=0x39).contains(n)) {
            all += 1; // a four-byte GB18030 character: outside GBK, rare
            i += 4;
            continue;
        }
        all += 1;
        let is_common = if big5 {
            (0xA1..=0xC6).contains(&b)
        } else {
            (0xA1..=0xA9).contains(&b) || (0xB0..=0xD7).contains(&b)
        };
        if is_common {
            common += 1;
        }
        i += 2;
    }
    if all == 0 {
        1.0
    } else {
        common as f64 / all as f64
    }
}

/// Replacement characters and control characters in decoded text: errors, or (lossy) counted
/// and the controls dropped. Returns the text, the controls dropped and the replacements.
fn checked(
    text: String,
    encoding: &'static Encoding,
    lossy: bool,
    replaced: usize,
) -> Result<(String, usize, usize), DecodeError> {
    let is_control = |c: char| {
        (c.is_control() && !matches!(c, '\n' | '\r' | '\t' | '\u{c}'))
            || c == '\u{fffe}'
            || c == '\u{ffff}'
    };
    let bad_replacement = !lossy && text.contains('\u{fffd}');
    let has_control = text.chars().any(is_control);
    if bad_replacement {
        let (line, column, count) = locate(&text, |c| c == '\u{fffd}');
        return Err(DecodeError::Replacement {
            encoding: encoding.name(),
            line,
            column,
            count,
        });
    }
    if has_control && !lossy {
        let (line, column, count) = locate(&text, is_control);
        let code = text.chars().find(|c| is_control(*c)).map_or(0, u32::from);
        return Err(DecodeError::Control {
            encoding: encoding.name(),
            line,
            column,
            code,
            count,
        });
    }
    let replaced = if lossy {
        text.chars()
            .filter(|c| *c == '\u{fffd}')
            .count()
            .max(replaced)
    } else {
        0
    };
    if !has_control {
        return Ok((text, 0, replaced));
    }
    let before = text.chars().count();
    let kept: String = text.chars().filter(|c| !is_control(*c)).collect();
    let removed = before - kept.chars().count();
    Ok((kept, removed, replaced))
}

/// 1-based line and column of the first character matching `bad`, and how many match.
fn locate(text: &str, bad: impl Fn(char) -> bool) -> (usize, usize, usize) {
    let mut first = None;
    let mut count = 0;
    for (i, line) in text.split('\n').enumerate() {
        for (j, c) in line.chars().enumerate() {
            if bad(c) {
                count += 1;
                first.get_or_insert((i + 1, j + 1));
            }
        }
    }
    let (line, column) = first.unwrap_or((1, 1));
    (line, column, count)
}

/// UTF-16 without a BOM, told by its line breaks: `0A 00` code units (little-endian) or
/// `00 0A` (big-endian) at even offsets, and never the other. UTF-8 and GB18030 text has no
/// NUL byte at all, and a CJK character is never U+0A00 or U+000A, so a manuscript with line
/// breaks is told reliably; one without any falls through to detection.
fn utf16_by_nul_bytes(bytes: &[u8]) -> Option<&'static Encoding> {
    let sample = &bytes[..bytes.len().min(64 * 1024)];
    if !sample.contains(&0) {
        return None;
    }
    let (mut le, mut be) = (0usize, 0usize);
    for unit in sample.chunks_exact(2) {
        match unit {
            [0x0A, 0] => le += 1,
            [0, 0x0A] => be += 1,
            _ => {}
        }
    }
    match (le, be) {
        (l, 0) if l > 0 => Some(UTF_16LE),
        (0, b) if b > 0 => Some(UTF_16BE),
        _ => None,
    }
}

/// `\r\n` and lone `\r` to `\n`; NFC (skipped when the text is already NFC, the usual case).
/// Says whether NFC changed anything.
fn normalize(text: String) -> (String, bool) {
    let unified = if text.contains('\r') {
        text.replace("\r\n", "\n").replace('\r', "\n")
    } else {
        text
    };
    match is_nfc_quick(unified.chars()) {
        IsNormalized::Yes => (unified, false),
        _ => {
            let nfc: String = unified.nfc().collect();
            let changed = nfc != unified;
            (nfc, changed)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEXT: &str = "第一章 雪夜\r\n　　风雪压城，林枫推门而入。\r\n";

    fn utf16(text: &str, big: bool) -> Vec<u8> {
        text.encode_utf16()
            .flat_map(|u| {
                if big {
                    u.to_be_bytes()
                } else {
                    u.to_le_bytes()
                }
            })
            .collect()
    }

    fn auto(bytes: &[u8]) -> Result<Decoded, DecodeError> {
        decode(bytes, Options::default())
    }

    #[test]
    fn every_encoding_of_a_manuscript_reads_the_same() {
        let want = "第一章 雪夜\n　　风雪压城，林枫推门而入。\n";
        let (gbk, _, _) = GBK.encode(TEXT);
        let (big5, _, _) = BIG5.encode("第一章 雪夜\r\n　　風雪壓城，林楓推門而入。\r\n");
        let mut bom8 = vec![0xEF, 0xBB, 0xBF];
        bom8.extend_from_slice(TEXT.as_bytes());
        let mut bom16 = vec![0xFF, 0xFE];
        bom16.extend(utf16(TEXT, false));
        let mut bom16be = vec![0xFE, 0xFF];
        bom16be.extend(utf16(TEXT, true));
        let cases: Vec<(Vec<u8>, &str, &str)> = vec![
            (TEXT.as_bytes().to_vec(), "UTF-8", "valid_utf8"),
            (bom8, "UTF-8", "bom"),
            (gbk.into_owned(), "gb18030", "detected"),
            (bom16, "UTF-16LE", "bom"),
            (bom16be, "UTF-16BE", "bom"),
            (utf16(TEXT, false), "UTF-16LE", "nul_bytes"),
            (utf16(TEXT, true), "UTF-16BE", "nul_bytes"),
        ];
        for (bytes, enc, how) in cases {
            let d = auto(&bytes).unwrap();
            assert_eq!(
                (d.text.as_str(), d.encoding, d.found_by, d.malformed()),
                (want, enc, how, false)
            );
        }
        let d = auto(&big5).unwrap();
        assert_eq!(
            (d.encoding, d.text.as_str()),
            ("Big5", "第一章 雪夜\n　　風雪壓城，林楓推門而入。\n")
        );
        assert!(d.confidence > 0.9, "{}", d.confidence);
    }

    #[test]
    fn a_gbk_manuscript_is_read_whole_with_its_confidence() {
        let para = "　　风雪压城，林枫推门而入，案上的油灯跳了一下。\n";
        let text: String = std::iter::repeat_n(para, 20_000).collect::<String>() + "完。\n";
        let (gbk, _, _) = GBK.encode(&text);
        let d = auto(&gbk).unwrap();
        assert_eq!((d.encoding, d.found_by), ("gb18030", "detected"));
        assert!(d.confidence >= 0.9, "{}", d.confidence);
        assert_eq!(d.text, text);
    }

    #[test]
    fn one_bad_byte_in_a_utf8_book_is_an_error_that_says_where() {
        let mut bytes = "第一章 起\n甲。\n".repeat(50_000).into_bytes();
        let at = 300_000;
        // Keep the line structure: overwrite the first byte of a character.
        let at = (at..).find(|i| bytes[*i] >= 0xE0).unwrap();
        bytes[at..at + 3].copy_from_slice(&[0xFF, b'x', b'y']);
        let e = auto(&bytes).unwrap_err();
        let DecodeError::Undecodable { attempts } = &e else {
            panic!("{e:?}")
        };
        assert_eq!(attempts[0].encoding, "UTF-8");
        assert_eq!(attempts[0].offset, Some(at));
        let line = 1 + bytes[..at].iter().filter(|b| **b == b'\n').count();
        assert_eq!(attempts[0].line, Some(line));
        assert!(
            e.message().contains(&format!("第 {line} 行")),
            "{}",
            e.message()
        );
        // --lossy reads it, counting the replacement.
        let d = decode(
            &bytes,
            Options {
                encoding: None,
                lossy: true,
            },
        )
        .unwrap();
        assert_eq!((d.encoding, d.replaced), ("UTF-8", 1));
    }

    #[test]
    fn a_file_half_utf8_half_gbk_is_refused_naming_both() {
        let half = "　　风雪压城，林枫推门而入，案上的油灯跳了一下。\n".repeat(2_000);
        let mut bytes = half.clone().into_bytes();
        let (gbk, _, _) = GBK.encode(&half);
        bytes.extend_from_slice(&gbk);
        let e = auto(&bytes).unwrap_err();
        let DecodeError::Undecodable { attempts } = &e else {
            panic!("{e:?}")
        };
        let names: Vec<_> = attempts.iter().map(|a| a.encoding).collect();
        assert_eq!(names, ["UTF-8", "gb18030", "Big5"]);
        assert_eq!(attempts[0].line, Some(2_001));
        assert!(e.message().contains("混用"), "{}", e.message());
    }

    #[test]
    fn binary_garbage_nul_bytes_and_old_damage_are_refused() {
        // Pseudo-random bytes (a fixed xorshift).
        let mut x = 0x2545_F491_4F6C_DD1Du64;
        let random: Vec<u8> = (0..1 << 20)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                (x >> 24) as u8
            })
            .collect();
        assert!(matches!(
            auto(&random),
            Err(DecodeError::Undecodable { .. })
        ));
        let nul = vec![0u8; 10_000];
        assert!(matches!(
            auto(&nul),
            Err(DecodeError::Control {
                line: 1,
                column: 1,
                code: 0,
                count: 10_000,
                ..
            })
        ));
        let d = decode(
            &nul,
            Options {
                encoding: None,
                lossy: true,
            },
        )
        .unwrap();
        assert_eq!((d.text.as_str(), d.removed), ("", 10_000));
        let damaged = "第一章\n好\u{fffd}字\n".as_bytes();
        assert!(matches!(
            auto(damaged),
            Err(DecodeError::Replacement {
                line: 2,
                column: 2,
                count: 1,
                ..
            })
        ));
        // UTF-8 read as GBK (forced) is mojibake but decodes; detection never picks it.
        let (gbk_of_utf8, _, _) = GB18030.decode(TEXT.as_bytes());
        assert!(gbk_of_utf8.contains('\u{fffd}') || !gbk_of_utf8.contains("雪夜"));
    }

    #[test]
    fn a_given_encoding_is_used_and_strict() {
        let (gbk, _, _) = GBK.encode(TEXT);
        let d = decode(
            &gbk,
            Options {
                encoding: Some(encoding_for("gbk").unwrap()),
                lossy: false,
            },
        )
        .unwrap();
        assert_eq!((d.encoding, d.found_by), ("gb18030", "given"));
        // UTF-8 bytes named as Big5: refused where Big5 breaks.
        let e = decode(
            TEXT.as_bytes(),
            Options {
                encoding: Some(BIG5),
                lossy: false,
            },
        )
        .unwrap_err();
        assert!(matches!(e, DecodeError::Undecodable { .. }));
        assert!(matches!(
            encoding_for("klingon"),
            Err(DecodeError::UnknownEncoding { .. })
        ));
        assert_eq!(encoding_for("UTF8").unwrap(), UTF_8);
    }

    #[test]
    fn text_is_put_in_nfc_and_says_so() {
        let d = auto("Cafe\u{301}\r".as_bytes()).unwrap();
        assert_eq!((d.text.as_str(), d.normalized), ("Caf\u{e9}\n", true));
        let d = auto(b"").unwrap();
        assert_eq!((d.text.as_str(), d.found_by), ("", "empty"));
    }
}
