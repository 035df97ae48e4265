//! Bytes of a manuscript to text (`novel import`): the encoding found from a BOM, else a
//! BOM-less UTF-16 by its NUL bytes, else UTF-8 when the bytes are valid UTF-8, else the guess
//! of `chardetng` (GBK is decoded as its superset GB18030); decoding by `encoding_rs`. Then line
//! endings become `\n` and the text is put in Unicode NFC, the form every other command reads.

use encoding_rs::{Encoding, GB18030, GBK, UTF_8, UTF_16BE, UTF_16LE};
use unicode_normalization::{IsNormalized, UnicodeNormalization, is_nfc_quick};

/// A decoded manuscript.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decoded {
    pub text: String,
    /// The encoding's WHATWG name (`UTF-8`, `GB18030`, `UTF-16LE` …).
    pub encoding: &'static str,
    /// How it was found: `bom`, `nul_bytes` (UTF-16 without BOM), `valid_utf8`, `detected`.
    pub found_by: &'static str,
    /// Some bytes could not be decoded and became U+FFFD.
    pub malformed: bool,
}

/// Decodes `bytes` (see the module note).
pub fn decode(bytes: &[u8]) -> Decoded {
    let (encoding, skip, found_by) = if let Some((enc, len)) = Encoding::for_bom(bytes) {
        (enc, len, "bom")
    } else if let Some(enc) = utf16_by_nul_bytes(bytes) {
        (enc, 0, "nul_bytes")
    } else if std::str::from_utf8(bytes).is_ok() {
        (UTF_8, 0, "valid_utf8")
    } else {
        let mut detector = chardetng::EncodingDetector::new(chardetng::Iso2022JpDetection::Deny);
        detector.feed(detection_sample(bytes), true);
        let guess = detector.guess(Some(b"cn"), chardetng::Utf8Detection::Allow);
        (if guess == GBK { GB18030 } else { guess }, 0, "detected")
    };
    let (text, malformed) = encoding.decode_without_bom_handling(&bytes[skip..]);
    Decoded {
        text: normalize(&text),
        encoding: encoding.name(),
        found_by,
        malformed,
    }
}

/// What the detector reads: the first 256 KB, cut after its last line break (no candidate
/// encoding — GBK, Big5, Shift_JIS, EUC — uses the byte 0x0A inside a character), or all of a
/// shorter file. The encoding shows in the first pages; reading all of a 9 MB manuscript cost
/// over a second.
fn detection_sample(bytes: &[u8]) -> &[u8] {
    const SAMPLE: usize = 256 * 1024;
    if bytes.len() <= SAMPLE {
        return bytes;
    }
    let head = &bytes[..SAMPLE];
    match head.iter().rposition(|b| *b == b'\n') {
        Some(i) => &head[..=i],
        None => head,
    }
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
fn normalize(text: &str) -> String {
    let unified = if text.contains('\r') {
        text.replace("\r\n", "\n").replace('\r', "\n")
    } else {
        text.to_string()
    };
    match is_nfc_quick(unified.chars()) {
        IsNormalized::Yes => unified,
        _ => unified.nfc().collect(),
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

    #[test]
    fn every_encoding_of_a_manuscript_reads_the_same() {
        let want = "第一章 雪夜\n　　风雪压城，林枫推门而入。\n";
        let (gbk, _, _) = GBK.encode(TEXT);
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
            let d = decode(&bytes);
            assert_eq!(
                (d.text.as_str(), d.encoding, d.found_by, d.malformed),
                (want, enc, how, false)
            );
        }
    }

    #[test]
    fn a_long_gbk_manuscript_is_detected_from_its_first_pages_and_decoded_whole() {
        let para = "　　风雪压城，林枫推门而入，案上的油灯跳了一下。\n";
        let text: String = std::iter::repeat_n(para, 20_000).collect::<String>() + "完。\n";
        let (gbk, _, _) = GBK.encode(&text);
        assert!(gbk.len() > 2 * 256 * 1024);
        let sample = detection_sample(&gbk);
        assert!(sample.len() <= 256 * 1024 && sample.ends_with(b"\n"));
        let d = decode(&gbk);
        assert_eq!(
            (d.encoding, d.found_by, d.malformed),
            ("gb18030", "detected", false)
        );
        assert_eq!(d.text, text);
    }

    #[test]
    fn text_is_put_in_nfc() {
        // "é" as e + combining acute.
        assert_eq!(decode("Cafe\u{301}\r".as_bytes()).text, "Caf\u{e9}\n");
    }
}
