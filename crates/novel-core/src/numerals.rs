//! Numbers as authors write them in headings: Arabic digits (half- or full-width) and Chinese
//! numerals — 十二, 一百零三, 两千零五, 一万二千; the short forms of old editions (一百十 = 110,
//! 一百十一 = 111, 一百一 = 101, 百 = 100); 廿 (20), 卅 (30), 卌 (40); the financial forms
//! (壹贰叁, 拾佰仟); and digit by digit (一〇五, 一一零). The one reader of every chapter number:
//! `novel import`'s splitter, `novel validate`'s chapter headings, the outline parser and the
//! export's titles all call [`leading_numeral`].
//!
//! Layer: ground (the lowest: no file model, no rules).

/// Half- and full-width Arabic digits.
pub fn arabic_digit(c: char) -> Option<u32> {
    match c {
        '0'..='9' => c.to_digit(10),
        '０'..='９' => Some(c as u32 - '０' as u32),
        _ => None,
    }
}

/// 零〇一二两三四五六七八九 (and 壹贰叁肆伍陆柒捌玖, 兩) as a digit.
pub fn chinese_digit(c: char) -> Option<u64> {
    let d = match c {
        '零' | '〇' | '○' => 0,
        '一' | '壹' => 1,
        '二' | '两' | '兩' | '贰' | '貳' => 2,
        '三' | '叁' | '參' => 3,
        '四' | '肆' => 4,
        '五' | '伍' => 5,
        '六' | '陆' | '陸' => 6,
        '七' | '柒' => 7,
        '八' | '捌' => 8,
        '九' | '玖' => 9,
        _ => return None,
    };
    Some(d)
}

/// 十百千万 (and 拾佰仟萬) as its value.
pub fn chinese_unit(c: char) -> Option<u64> {
    match c {
        '十' | '拾' => Some(10),
        '百' | '佰' => Some(100),
        '千' | '仟' => Some(1000),
        '万' | '萬' => Some(10_000),
        _ => None,
    }
}

/// 廿 (20), 卅 (30), 卌 (40): a digit and 十 in one character.
fn chinese_tens(c: char) -> Option<u64> {
    match c {
        '廿' => Some(2),
        '卅' => Some(3),
        '卌' => Some(4),
        _ => None,
    }
}

/// Whether `c` can be part of a Chinese numeral.
pub fn is_chinese_numeral(c: char) -> bool {
    chinese_digit(c).is_some() || chinese_unit(c).is_some() || chinese_tens(c).is_some()
}

/// A number in Chinese numerals (see the module note), or `None` when the characters do not
/// make one number (十十, 百一千, 二三十).
pub fn chinese_number(s: &str) -> Option<u64> {
    if s.chars().any(|c| c.is_ascii_digit()) {
        return None;
    }
    // 廿一 = 二十一: the tens characters spelled out first (their digit as an ASCII digit).
    let mut chars: Vec<char> = Vec::with_capacity(s.len());
    for c in s.chars() {
        match chinese_tens(c) {
            Some(d) => chars.extend([char::from_digit(d as u32, 10)?, '十']),
            None => chars.push(c),
        }
    }
    let digit = |c: char| chinese_digit(c).or_else(|| c.to_digit(10).map(u64::from));
    if chars.is_empty() {
        return None;
    }
    if chars.iter().all(|c| digit(*c).is_some()) {
        return chars
            .iter()
            .try_fold(0u64, |acc, c| acc.checked_mul(10)?.checked_add(digit(*c)?));
    }
    let mut total = 0u64; // the part above 万
    let mut section = 0u64; // the part below 万
    let mut pending: Option<u64> = None; // a digit waiting for its unit
    let mut zero = false; // a 零 since the last unit
    let mut last_unit = u64::MAX; // units inside a section go down: 千 > 百 > 十
    for &c in &chars {
        if let Some(d) = digit(c) {
            if pending.is_some() {
                return None; // 二三 inside a number with units
            }
            if d == 0 {
                if zero && last_unit == u64::MAX {
                    return None;
                }
                zero = true;
            } else {
                pending = Some(d);
            }
        } else if let Some(unit) = chinese_unit(c) {
            if unit == 10_000 {
                if total != 0 || zero && pending.is_none() {
                    return None;
                }
                total = (section + pending.unwrap_or(0)).checked_mul(unit)?;
                if total == 0 {
                    return None;
                }
                section = 0;
                last_unit = u64::MAX;
            } else {
                if unit >= last_unit {
                    return None;
                }
                let d = match pending {
                    Some(d) => d,
                    // 十二 = 12, 一百十 = 110, 一千零十 = 1010, 百 = 100 (第百章).
                    None if zero && section == 0 && total == 0 => return None,
                    None if unit == 10 || (section == 0 && total == 0) => 1,
                    None => return None,
                };
                section += d * unit;
                last_unit = unit;
            }
            pending = None;
            zero = false;
        } else {
            return None;
        }
    }
    // 一百一 = 101 in the editions that write 一百十 for 110 (三国演义 第一百一回).
    total.checked_add(section + pending.unwrap_or(0))
}

/// What a run of numeral characters at the start of a text says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Numeral {
    /// A number (not checked against any range: 4294967296 is a number).
    Value(u64),
    /// Numeral characters that make no number (十十, an Arabic number beyond u64).
    Unreadable,
}

/// The number at the start of `s` and how many bytes it takes: a run of Arabic digits (half-
/// or full-width), or of Chinese numeral characters. `None` when `s` does not start with one.
pub fn leading_numeral(s: &str) -> Option<(Numeral, usize)> {
    let first = s.chars().next()?;
    if arabic_digit(first).is_some() {
        let len: usize = s
            .chars()
            .take_while(|c| arabic_digit(*c).is_some())
            .map(char::len_utf8)
            .sum();
        let value = s[..len].chars().try_fold(0u64, |acc, c| {
            acc.checked_mul(10)?
                .checked_add(u64::from(arabic_digit(c)?))
        });
        return Some((value.map_or(Numeral::Unreadable, Numeral::Value), len));
    }
    if !is_chinese_numeral(first) {
        return None;
    }
    let len: usize = s
        .chars()
        .take_while(|c| is_chinese_numeral(*c))
        .map(char::len_utf8)
        .sum();
    let value = chinese_number(&s[..len]);
    Some((value.map_or(Numeral::Unreadable, Numeral::Value), len))
}

/// `leading_numeral` read as a `u32`, or `None` (no numeral, unreadable, too big).
pub fn leading_u32(s: &str) -> Option<(u32, usize)> {
    match leading_numeral(s)? {
        (Numeral::Value(n), len) => Some((u32::try_from(n).ok()?, len)),
        (Numeral::Unreadable, _) => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numerals_as_authors_write_them() {
        for (s, n) in [
            ("一", 1),
            ("十", 10),
            ("十二", 12),
            ("二十", 20),
            ("一百零二", 102),
            ("一百二十三", 123),
            ("两千零五", 2005),
            ("一万零一", 10_001),
            ("三万五千", 35_000),
            ("一万二千", 12_000),
            ("一〇五", 105),
            ("一二〇", 120),
            ("一一零", 110),
            // The short forms of old editions.
            ("一百十", 110),
            ("一百十一", 111),
            ("一百一", 101),
            ("一千零十", 1010),
            ("百", 100),
            ("百二十", 120),
            ("千", 1000),
            ("廿", 20),
            ("廿一", 21),
            ("卅", 30),
            ("卅五", 35),
            ("卌", 40),
            ("一百廿", 120),
            ("壹佰贰拾叁", 123),
            ("拾", 10),
        ] {
            assert_eq!(chinese_number(s), Some(n), "{s}");
        }
        for s in [
            "",
            "十十",
            "百一千",
            "一二万万万万万",
            "二三十",
            "万",
            "零十",
            "廿廿",
            "一千百",
            "零零万",
        ] {
            assert_eq!(chinese_number(s), None, "{s}");
        }
        assert_eq!(arabic_digit('７'), Some(7));
        assert!(is_chinese_numeral('两') && is_chinese_numeral('廿') && !is_chinese_numeral('章'));
    }

    #[test]
    fn a_leading_numeral_says_how_far_it_reaches() {
        assert_eq!(
            leading_numeral("一百十回 史太君"),
            Some((Numeral::Value(110), "一百十".len()))
        );
        assert_eq!(leading_numeral("１２章"), Some((Numeral::Value(12), 6)));
        assert_eq!(
            leading_numeral("4294967296章"),
            Some((Numeral::Value(4_294_967_296), 10))
        );
        assert_eq!(
            leading_numeral("99999999999999999999999章"),
            Some((Numeral::Unreadable, 23))
        );
        assert_eq!(leading_numeral("十十章"), Some((Numeral::Unreadable, 6)));
        assert_eq!(leading_numeral("章"), None);
        assert_eq!(leading_u32("4294967296章"), None);
        assert_eq!(leading_u32("4294967295章"), Some((u32::MAX, 10)));
    }
}
