//! The token estimate every packet section carries, calibrated for Chinese web-novel text.
//!
//! No tokenizer ships with the binary (it would be large and model-specific), so the estimate
//! counts characters by class and weights them in tenths of a token:
//!
//! | class | tokens | why |
//! |---|---|---|
//! | Han character, kana, hangul | 1.5 | `003` §8.4 budgets a ~3,000-字 chapter at ~4.5K tokens |
//! | CJK / full-width punctuation (，。「」…) | 1.0 | one token each in practice |
//! | ASCII word (run of `A-Z a-z 0-9 _`) | max(1.3, length ÷ 4) | English ≈ 0.75 words per token; long ids ≈ 4 characters per token |
//! | other ASCII symbol (`{ } : " - #` …) | 0.5 | they often merge with a neighbour |
//! | whitespace | 0 | |
//! | anything else (accented Latin, emoji …) | 1.0 | |
//!
//! The sum is rounded up. The estimate is additive over text joined by whitespace, so a
//! section's estimate is the sum of its parts. It errs high for Chinese prose, which is the
//! safe side for a budget.
//!
//! Layer: model — the project files' types and what is read straight off them; below every rule.

/// Tenths of a token per Han character (1.5 tokens).
pub const HAN_TENTHS: u64 = 15;
/// Tenths of a token per CJK or full-width punctuation mark.
pub const CJK_PUNCT_TENTHS: u64 = 10;
/// Minimum tenths of a token per ASCII word.
pub const ASCII_WORD_MIN_TENTHS: u64 = 13;
/// Tenths of a token per other ASCII symbol.
pub const ASCII_SYMBOL_TENTHS: u64 = 5;
/// Tenths of a token per other character.
pub const OTHER_TENTHS: u64 = 10;

/// Estimated tokens of `text` (see the module note for the weights).
pub fn estimate(text: &str) -> u32 {
    let mut tenths: u64 = 0;
    let mut run: u64 = 0;
    for c in text.chars() {
        if c.is_ascii_alphanumeric() || c == '_' {
            run += 1;
            continue;
        }
        if run > 0 {
            tenths += word_tenths(run);
            run = 0;
        }
        tenths += char_tenths(c);
    }
    if run > 0 {
        tenths += word_tenths(run);
    }
    u32::try_from(tenths.div_ceil(10)).unwrap_or(u32::MAX)
}

fn word_tenths(len: u64) -> u64 {
    (len * 10).div_ceil(4).max(ASCII_WORD_MIN_TENTHS)
}

fn char_tenths(c: char) -> u64 {
    if c.is_whitespace() {
        0
    } else if c.is_ascii() {
        ASCII_SYMBOL_TENTHS
    } else if is_han(c) {
        HAN_TENTHS
    } else if is_cjk_punct(c) {
        CJK_PUNCT_TENTHS
    } else {
        OTHER_TENTHS
    }
}

/// Han ideographs (with extensions and compatibility forms), kana and hangul syllables.
pub fn is_han(c: char) -> bool {
    matches!(c as u32,
        0x4E00..=0x9FFF
        | 0x3400..=0x4DBF
        | 0x20000..=0x3134F
        | 0xF900..=0xFAFF
        | 0x3040..=0x30FF
        | 0xAC00..=0xD7AF)
}

/// CJK symbols and punctuation, full-width forms, and the general punctuation Chinese text
/// uses (“” ‘’ … —).
pub fn is_cjk_punct(c: char) -> bool {
    matches!(c as u32, 0x3000..=0x303F | 0xFF00..=0xFFEF | 0x2010..=0x2027 | 0xFE30..=0xFE4F)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn weights() {
        assert_eq!(estimate(""), 0);
        assert_eq!(estimate("陆尘"), 3);
        assert_eq!(estimate("，。"), 2);
        assert_eq!(estimate("the cat"), 3); // 1.3 + 1.3 → 2.6 → 3
        assert_eq!(estimate("jiangwang_dao"), 4); // 13 chars → 3.25 → 4 (rounded up)
        assert_eq!(estimate("{}"), 1);
        assert_eq!(estimate(" \n\t　"), 0);
    }

    #[test]
    fn additive_over_whitespace_joins() {
        let a = "陆尘看了一眼 W-001 的规则。";
        let b = "main_arc：主线";
        // Parts are rounded up separately: the sum of the parts is never below the whole, and
        // at most one token above it per part.
        assert!(estimate(&format!("{a}\n{b}")) <= estimate(a) + estimate(b));
        assert!(estimate(&format!("{a}\n{b}")) + 1 >= estimate(a) + estimate(b));
    }

    #[test]
    fn a_chapter_of_3000_han_is_about_4500_tokens() {
        let text = "字".repeat(3000);
        assert_eq!(estimate(&text), 4500);
    }
}
