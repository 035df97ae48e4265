//! Timestamps without a date crate: ISO-8601 UTC from the system clock.
//!
//! Layer: ground — files, paths, errors, the checkpoint, the lock, the journal and its transaction;
//! below everything that reads the book.

use std::time::{SystemTime, UNIX_EPOCH};

/// Now, as `2026-11-22T05:30:00Z`.
pub fn now_iso() -> String {
    format_utc(now_secs())
}

/// Seconds since the Unix epoch. Debug builds honour `NOVEL_NOW` (epoch seconds) so tests
/// can compare whole projects byte for byte; release builds never read it.
pub fn now_secs() -> u64 {
    #[cfg(debug_assertions)]
    if let Some(fixed) = std::env::var("NOVEL_NOW").ok().and_then(|v| v.parse().ok()) {
        return fixed;
    }
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

/// Seconds since the Unix epoch to the minute, for a reader: `2026-12-02 02:48（UTC）`.
pub fn minute_utc(secs: u64) -> String {
    let iso = format_utc(secs);
    format!("{} {}（UTC）", &iso[..10], &iso[11..16])
}

/// Formats seconds since the Unix epoch as ISO-8601 UTC.
pub fn format_utc(secs: u64) -> String {
    let days = (secs / 86_400) as i64;
    let rem = secs % 86_400;
    let (y, m, d) = civil_from_days(days);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        (rem % 3600) / 60,
        rem % 60
    )
}

/// Parses an ISO-8601 / RFC 3339 time (`2026-11-22T05:30:00Z`, `…+08:00`, fractional seconds,
/// a space instead of `T`) into seconds since the Unix epoch. `None` when it is not one.
pub fn parse_iso(text: &str) -> Option<u64> {
    let t = text.trim();
    let b = t.as_bytes();
    if b.len() < 19 || b[4] != b'-' || b[7] != b'-' || !matches!(b[10], b'T' | b't' | b' ') {
        return None;
    }
    if b[13] != b':' || b[16] != b':' {
        return None;
    }
    let num = |r: std::ops::Range<usize>| -> Option<i64> {
        let s = t.get(r)?;
        s.bytes()
            .all(|c| c.is_ascii_digit())
            .then(|| s.parse().ok())?
    };
    let (y, mo, d) = (num(0..4)?, num(5..7)?, num(8..10)?);
    let (h, mi, s) = (num(11..13)?, num(14..16)?, num(17..19)?);
    if !(1..=12).contains(&mo) || !(1..=31).contains(&d) || h > 23 || mi > 59 || s > 60 {
        return None;
    }
    let mut rest = &t[19..];
    if let Some(frac) = rest.strip_prefix('.') {
        let digits = frac.bytes().take_while(u8::is_ascii_digit).count();
        if digits == 0 {
            return None;
        }
        rest = &frac[digits..];
    }
    let offset = match rest {
        "" | "Z" | "z" => 0,
        _ => {
            let sign = match rest.as_bytes()[0] {
                b'+' => 1,
                b'-' => -1,
                _ => return None,
            };
            let hm = rest[1..].replace(':', "");
            if hm.len() != 4 || !hm.bytes().all(|c| c.is_ascii_digit()) {
                return None;
            }
            let (oh, om): (i64, i64) = (hm[..2].parse().ok()?, hm[2..].parse().ok()?);
            sign * (oh * 3600 + om * 60)
        }
    };
    let days = days_from_civil(y, mo as u32, d as u32);
    let secs = days * 86_400 + h * 3600 + mi * 60 + s - offset;
    u64::try_from(secs).ok()
}

/// Howard Hinnant's civil-to-days algorithm (inverse of [`civil_from_days`]).
fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y.rem_euclid(400);
    let mp = i64::from(if m > 2 { m - 3 } else { m + 9 });
    let doy = (153 * mp + 2) / 5 + i64::from(d) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// Howard Hinnant's days-to-civil algorithm.
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (if m <= 2 { y + 1 } else { y }, m, d)
}

#[cfg(test)]
mod tests {
    #[test]
    fn known_dates() {
        assert_eq!(super::format_utc(0), "1970-01-01T00:00:00Z");
        assert_eq!(super::format_utc(951_782_400), "2000-02-29T00:00:00Z");
        assert_eq!(super::format_utc(1_795_325_400), "2026-11-22T05:30:00Z");
    }

    #[test]
    fn parse_iso_table() {
        use super::{format_utc, parse_iso};
        for secs in [0, 951_782_400, 1_795_325_400, 4_102_444_799] {
            assert_eq!(parse_iso(&format_utc(secs)), Some(secs), "{secs}");
        }
        let cases = [
            ("2026-11-22T13:30:00+08:00", Some(1_795_325_400)),
            ("2026-11-22T05:30:00.123Z", Some(1_795_325_400)),
            ("2026-11-22 05:30:00", Some(1_795_325_400)),
            ("2026-11-22T00:30:00-0500", Some(1_795_325_400)),
            ("2026-11-22", None),
            ("2026-13-22T05:30:00Z", None),
            ("2026-11-22T05:30:00 UTC", None),
            ("昨天", None),
            ("", None),
        ];
        for (text, want) in cases {
            assert_eq!(parse_iso(text), want, "{text}");
        }
    }
}
