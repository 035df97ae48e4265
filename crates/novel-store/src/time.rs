//! Timestamps without a date crate: ISO-8601 UTC from the system clock.

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
}
