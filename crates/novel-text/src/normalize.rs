//! The one place text is normalised for matching: Unicode NFC, then full-width ASCII variants
//! (U+FF01–U+FF5E) folded to ASCII and the half-width CJK forms (U+FF61–U+FF64) folded to their
//! full forms. Chapter text, blacklist phrases, whitelist entries, names and pattern regexes all
//! pass through here, so `ＡＩ` matches `AI` and `这，就是` matches `这,就是`.
//!
//! Positions survive normalisation: [`Normalized::orig`] maps every normalised character back to
//! the original character it came from, so findings point into the file as the author sees it.
//!
//! Layer: ground — decoding, Markdown, normalisation, 字数, sentences, names; below every check.

use unicode_normalization::UnicodeNormalization;
use unicode_normalization::char::canonical_combining_class;

/// Folds one character's width: full-width ASCII → ASCII, half-width CJK punctuation → full.
pub fn fold_width(c: char) -> char {
    match c {
        '\u{FF01}'..='\u{FF5E}' => char::from_u32(c as u32 - 0xFEE0).unwrap_or(c),
        '\u{FF61}' => '。',
        '\u{FF62}' => '「',
        '\u{FF63}' => '」',
        '\u{FF64}' => '、',
        _ => c,
    }
}

/// Normalises a short string (a phrase, a name): NFC, then width folding.
pub fn normalize_str(s: &str) -> String {
    s.nfc().map(fold_width).collect()
}

/// Normalises a regex source the way the text is normalised, without changing its meaning:
/// a full-width character that folds to a regex metacharacter (`（` → `(`) is escaped.
pub fn normalize_regex(src: &str) -> String {
    let mut out = String::with_capacity(src.len());
    for c in src.nfc() {
        let f = fold_width(c);
        if f != c && regex_syntax_meta(f) {
            out.push('\\');
        }
        out.push(f);
    }
    out
}

fn regex_syntax_meta(c: char) -> bool {
    matches!(
        c,
        '\\' | '.'
            | '+'
            | '*'
            | '?'
            | '('
            | ')'
            | '|'
            | '['
            | ']'
            | '{'
            | '}'
            | '^'
            | '$'
            | '#'
            | '&'
            | '-'
            | '~'
    )
}

/// A normalised text and the way back to the original's character positions.
#[derive(Debug, Clone)]
pub struct Normalized {
    pub text: String,
    /// Original character index of each normalised character (plus one past the end), or
    /// `None` when NFC changed nothing and the indexes coincide (the usual case).
    pub orig: Option<Vec<u32>>,
}

/// Characters that are NFC and start a cluster whatever surrounds them: ASCII and Latin-1,
/// general punctuation, CJK symbols, kana (without the combining voicing marks), CJK unified
/// ideographs, and the half-/full-width forms. Chinese prose is almost all of these, so the full
/// NFC check runs only on texts that hold something else.
fn nfc_safe(c: char) -> bool {
    let u = c as u32;
    u < 0x300
        || (0x2010..=0x2027).contains(&u)
        || ((0x3000..=0x9FFF).contains(&u) && u != 0x3099 && u != 0x309A)
        || (0xFF00..=0xFFEF).contains(&u)
}

fn needs_fold(c: char) -> bool {
    matches!(c as u32, 0xFF01..=0xFF5E | 0xFF61..=0xFF64)
}

/// Normalises a whole text, keeping the map back to original character positions.
pub fn normalize(s: &str) -> Normalized {
    // One pass: copy unchanged stretches, fold full-width forms, and note whether any
    // character needs the real NFC check.
    let mut text = String::with_capacity(s.len());
    let mut last = 0;
    let mut all_safe = true;
    for (i, c) in s.char_indices() {
        if needs_fold(c) {
            text.push_str(&s[last..i]);
            text.push(fold_width(c));
            last = i + c.len_utf8();
        } else if !nfc_safe(c) {
            all_safe = false;
        }
    }
    text.push_str(&s[last..]);
    if all_safe || unicode_normalization::is_nfc(s) {
        // Width folding is one character for one character: indexes are unchanged.
        return Normalized { text, orig: None };
    }
    // Normalise cluster by cluster (a starter and the combining marks after it), recording for
    // every output character the original index of its cluster. Hangul jamo vowels and finals
    // (which compose with the starter before them) stay in the cluster too.
    let chars: Vec<char> = s.chars().collect();
    let mut text = String::with_capacity(s.len());
    let mut orig = Vec::with_capacity(chars.len() + 1);
    let mut i = 0;
    while i < chars.len() {
        let start = i;
        i += 1;
        while i < chars.len() && joins_previous(chars[i]) {
            i += 1;
        }
        for c in chars[start..i].iter().copied().nfc() {
            text.push(fold_width(c));
            orig.push(start as u32);
        }
    }
    orig.push(chars.len() as u32);
    Normalized {
        text,
        orig: Some(orig),
    }
}

fn joins_previous(c: char) -> bool {
    canonical_combining_class(c) != 0 || ('\u{1161}'..='\u{11C2}').contains(&c)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn width_folding_table() {
        let cases = [
            ("ＡＩ味", "AI味"),
            ("这，就是", "这,就是"),
            ("１２３章", "123章"),
            ("好！？", "好!?"),
            ("｢半角｣", "「半角」"),
            ("汉字不变。「」“”", "汉字不变。「」“”"),
            ("　全角空格保留", "　全角空格保留"),
        ];
        for (input, want) in cases {
            assert_eq!(normalize_str(input), want, "{input}");
            assert_eq!(normalize(input).text, want, "{input}");
        }
    }

    #[test]
    fn nfc_composes_and_keeps_positions() {
        // e + combining acute → é; the following 字 keeps original index 2.
        let n = normalize("e\u{301}字");
        assert_eq!(n.text, "é字");
        assert_eq!(n.orig.as_deref(), Some(&[0, 2, 3][..]));
        // CJK compatibility ideograph folds to the unified one.
        assert_eq!(normalize_str("\u{F900}"), "\u{8C48}");
        // Already NFC: no map needed.
        assert!(normalize("嘴角微微上扬").orig.is_none());
    }

    #[test]
    fn regex_metachar_from_full_width_is_escaped() {
        assert_eq!(normalize_regex("（笑）"), r"\(笑\)");
        assert_eq!(normalize_regex("[，,]"), "[,,]");
        assert_eq!(normalize_regex("(?:不是|并非)"), "(?:不是|并非)");
        let re = regex::Regex::new(&normalize_regex("（笑）")).unwrap();
        assert!(re.is_match(&normalize_str("他说（笑）")));
    }
}
