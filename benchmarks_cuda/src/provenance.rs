//! Date and project commit for every output row.

/// Today's UTC date, YYYY-MM-DD.
pub fn utc_date() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    date_from_days((secs / 86_400) as i64)
}

/// Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
pub fn date_from_days(z: i64) -> String {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = if m <= 2 { y + 1 } else { y };
    format!("{y:04}-{m:02}-{d:02}")
}

/// The project commit: $GPUCAST_COMMIT at run time, else the one recorded at build time.
pub fn commit() -> String {
    std::env::var("GPUCAST_COMMIT")
        .ok()
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| env!("GPUCAST_BUILD_COMMIT").to_string())
}

#[cfg(test)]
mod tests {
    #[test]
    fn dates() {
        assert_eq!(super::date_from_days(0), "1970-01-01");
        assert_eq!(super::date_from_days(11_016), "2000-02-29");
        assert_eq!(super::date_from_days(20_454), "2026-01-01");
        assert_eq!(super::utc_date().len(), 10);
    }
}
