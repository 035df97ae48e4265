//! Numbers as authors write them in headings: Arabic digits (half- or full-width) and Chinese
//! numerals (十二, 一百零三, 两千零五, 一万二千, digit by digit 一〇五). One reader for the
//! outline parser, `novel validate`'s chapter headings and `novel import`'s splitter.

/// Half- and full-width Arabic digits.
pub fn arabic_digit(c: char) -> Option<u32> {
    match c {
        '0'..='9' => c.to_digit(10),
        '０'..='９' => Some(c as u32 - '０' as u32),
        _ => None,
    }
}

/// 零〇一二两三四五六七八九 as a digit.
pub fn chinese_digit(c: char) -> Option<u64> {
    "零一二三四五六七八九"
        .chars()
        .position(|d| d == c)
        .map(|d| d as u64)
        .or(match c {
            '〇' => Some(0),
            '两' => Some(2),
            _ => None,
        })
}

/// 十百千万 as its value.
pub fn chinese_unit(c: char) -> Option<u64> {
    match c {
        '十' => Some(10),
        '百' => Some(100),
        '千' => Some(1000),
        '万' => Some(10_000),
        _ => None,
    }
}

/// A chapter number in Chinese numerals: 十二, 二十, 一百零三, 两千, 一万二千; or digit by digit
/// (一二〇). `None` when the characters do not make one number (十十, 百一千).
pub fn chinese_number(s: &str) -> Option<u64> {
    let chars: Vec<char> = s.chars().collect();
    if chars.is_empty() {
        return None;
    }
    if chars.iter().all(|c| chinese_digit(*c).is_some()) {
        return chars.iter().try_fold(0u64, |acc, c| {
            acc.checked_mul(10)?.checked_add(chinese_digit(*c)?)
        });
    }
    let mut total = 0u64; // the part above 万
    let mut section = 0u64; // the part below 万
    let mut digit: Option<u64> = None;
    let mut last_unit = u64::MAX; // units inside a section must go down: 千 > 百 > 十
    for &c in &chars {
        if let Some(d) = chinese_digit(c) {
            if digit.is_some_and(|p| p != 0) {
                return None; // 二三 inside a number with units
            }
            digit = Some(d);
        } else if let Some(unit) = chinese_unit(c) {
            if unit == 10_000 {
                if total != 0 {
                    return None;
                }
                total = (section + digit.unwrap_or(0)).checked_mul(unit)?;
                if total == 0 {
                    return None;
                }
                section = 0;
                last_unit = u64::MAX;
            } else {
                if unit >= last_unit {
                    return None;
                }
                let d = match digit {
                    Some(0) => return None,
                    Some(d) => d,
                    // 十二 = 12; a bare 百 or 千 is not written
                    None if unit == 10 && section == 0 => 1,
                    None => return None,
                };
                section += d * unit;
                last_unit = unit;
            }
            digit = None;
        } else {
            return None;
        }
    }
    total.checked_add(section + digit.unwrap_or(0))
}

/// Whether `c` can be part of a Chinese numeral.
pub fn is_chinese_numeral(c: char) -> bool {
    chinese_digit(c).is_some() || chinese_unit(c).is_some()
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
        ] {
            assert_eq!(chinese_number(s), Some(n), "{s}");
        }
        for s in [
            "",
            "十十",
            "百一千",
            "一二万万万万万",
            "二三十",
            "百",
            "万",
            "零十",
        ] {
            assert_eq!(chinese_number(s), None, "{s}");
        }
        assert_eq!(arabic_digit('７'), Some(7));
        assert!(is_chinese_numeral('两') && !is_chinese_numeral('章'));
    }
}
