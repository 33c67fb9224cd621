//! Numbers and units as Nsight Compute prints them.
//!
//! Values carry thousands separators (`"5,318,969,728.00"`), `n/a` for a metric the
//! GPU cannot collect, and `;`-separated lists for per-instruction metrics; units are
//! SI-prefixed (`Kbyte` = 1000 bytes: ncu scales by powers of 1000), sometimes per
//! block, per second or per cycle.

/// What a metric measures, as far as conversion is concerned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Kind {
    /// Bytes (byte, Kbyte, ..., sector = 32 bytes, also per block).
    Bytes,
    /// A duration, converted to milliseconds.
    TimeMs,
    /// Events per second (hz, Ghz, cycle/second), converted to per second.
    PerSecond,
    /// A count (inst, cycle, warp, block, thread, ...; also per cycle or per thread).
    Count,
    /// A percentage, kept in percent.
    Percent,
}

/// Largest count (instructions, bytes, sectors, cycles) one launch can have: the
/// runs contract's bound for counts (`gpucast_runs::columns::upper_bound`, 1e21). A
/// day of the largest GPU issuing every lane every cycle is about 3e18 thread
/// instructions, and a day at 8 TB/s about 7e17 bytes.
const MAX_COUNT: f64 = 1e21;
/// Longest duration one launch can have, ms: the runs contract's bound for times
/// (1e7 ms, about 3 hours).
const MAX_TIME_MS: f64 = 1e7;
/// Shortest non-zero duration, ms: 1 ns, the resolution of the GPU timer ncu reads
/// (`gpu__time_duration` is in whole nanoseconds); no launch takes less than a
/// microsecond.
const MIN_TIME_MS: f64 = 1e-6;
/// Highest rate, per second: 1e16 (a clock is at most a few GHz, a bandwidth at most
/// about 1e13 bytes/s, an instruction rate about 4e13/s).
const MAX_PER_SECOND: f64 = 1e16;

/// `x` in scientific notation to 6 significant digits, without the unit
/// conversion's last-digit noise (1e-300 ns, not 1.0000000000000018e-300).
fn short(x: f64) -> String {
    let s = format!("{x:.5e}");
    match s.split_once('e') {
        Some((m, e)) if m.contains('.') => {
            format!("{}e{e}", m.trim_end_matches('0').trim_end_matches('.'))
        }
        _ => s,
    }
}

/// `value` (in the base unit of `kind`) when one launch can have it: a count or rate
/// no GPU reaches, or a duration shorter than the timer's resolution, is a damaged
/// or hand-edited export. Negative values are left to the callers' own checks.
pub(super) fn plausible(value: f64, kind: Kind) -> Result<f64, String> {
    let (max, what) = match kind {
        Kind::Bytes | Kind::Count => (MAX_COUNT, "is more than any launch counts"),
        Kind::TimeMs => (MAX_TIME_MS, "ms is longer than any launch takes"),
        Kind::PerSecond => (MAX_PER_SECOND, "per second is faster than any GPU runs"),
        Kind::Percent => return Ok(value),
    };
    if value.abs() > max {
        return Err(format!("{} {what} ({max:e})", short(value)));
    }
    if kind == Kind::TimeMs && value > 0.0 && value < MIN_TIME_MS {
        return Err(format!(
            "a duration of {} ns is shorter than the GPU timer's resolution (1 ns)",
            short(value * 1e6)
        ));
    }
    Ok(value)
}

/// Bytes per L2/L1/DRAM sector on every NVIDIA GPU since Maxwell.
pub(super) const SECTOR_BYTES: f64 = 32.0;

/// A cell's number: `None` for an empty cell, `n/a` or a list (not one number).
/// `Err` carries what is wrong with a cell that is none of those.
pub(super) fn parse_number(text: &str) -> Result<Option<f64>, String> {
    let t = text.trim();
    if t.is_empty() || t.eq_ignore_ascii_case("n/a") || t.contains(';') {
        return Ok(None);
    }
    let cleaned: String = t.chars().filter(|&c| c != ',').collect();
    match cleaned.parse::<f64>() {
        Ok(v) if v.is_finite() => Ok(Some(v)),
        _ => Err(format!("cannot read '{t}' as a number")),
    }
}

/// SI prefix factor; ncu writes K (kilo) and also k for hertz.
fn prefix_factor(p: &str) -> Option<f64> {
    Some(match p {
        "" => 1.0,
        "K" | "k" => 1e3,
        "M" => 1e6,
        "G" => 1e9,
        "T" => 1e12,
        "P" => 1e15,
        "m" => 1e-3,
        "u" => 1e-6,
        "n" => 1e-9,
        _ => return None,
    })
}

/// Base units, longest first so that `nsecond` is not read as `nsecon` + `d`.
const BASES: [&str; 13] = [
    "register", "cluster", "second", "sector", "thread", "cycle", "block", "byte", "inst", "warp",
    "hz", "s", "%",
];

/// (prefix factor, base) of a unit's numerator, e.g. `Mbyte` -> (1e6, "byte").
fn split_unit(numerator: &str) -> Option<(f64, &'static str)> {
    let lower = numerator.to_ascii_lowercase();
    for base in BASES {
        if lower.ends_with(base) {
            let prefix = &numerator[..numerator.len() - base.len()];
            return prefix_factor(prefix).map(|f| (f, base));
        }
    }
    None
}

/// Convert `value` printed in `unit` to the base unit of `kind` (bytes, ms, 1/s, count,
/// percent). An empty unit means the base unit, except for durations and rates, where
/// nanoseconds and microseconds cannot be told apart.
pub(super) fn to_base(value: f64, unit: &str, kind: Kind) -> Result<f64, String> {
    let unit = unit.trim();
    let bad = || format!("unit '{unit}' is not a {} unit", kind_name(kind));
    if unit.is_empty() {
        return match kind {
            Kind::Bytes | Kind::Count | Kind::Percent => Ok(value),
            Kind::TimeMs | Kind::PerSecond => Err(format!(
                "no unit given for a {}; cannot tell its scale",
                kind_name(kind)
            )),
        };
    }
    let (num, per) = match unit.split_once('/') {
        Some((n, d)) => (n, Some(d)),
        None => (unit, None),
    };
    let (factor, base) = split_unit(num).ok_or_else(bad)?;
    let per_second = per.is_some_and(|d| matches!(split_unit(d), Some((_, "second" | "s"))));
    match kind {
        // byte/block (shared memory per block) and sector counts are still bytes.
        Kind::Bytes => match (base, per) {
            ("byte", None | Some("block")) => Ok(value * factor),
            ("sector", None) => Ok(value * factor * SECTOR_BYTES),
            _ => Err(bad()),
        },
        Kind::TimeMs => match (base, per) {
            ("second" | "s", None) => Ok(value * factor * 1e3),
            _ => Err(bad()),
        },
        Kind::PerSecond => match base {
            "hz" if per.is_none() => Ok(value * factor),
            "cycle" | "byte" | "inst" if per_second => {
                let d = per.and_then(split_unit).map_or(1.0, |(f, _)| f);
                Ok(value * factor / d)
            }
            _ => Err(bad()),
        },
        Kind::Count => match base {
            "%" | "second" | "s" | "hz" | "byte" => Err(bad()),
            _ if per_second => Err(bad()),
            _ => Ok(value * factor),
        },
        Kind::Percent => match (base, per) {
            ("%", None) => Ok(value),
            _ => Err(bad()),
        },
    }
}

fn kind_name(kind: Kind) -> &'static str {
    match kind {
        Kind::Bytes => "byte",
        Kind::TimeMs => "time",
        Kind::PerSecond => "per-second",
        Kind::Count => "count",
        Kind::Percent => "percent",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // SYNTHETIC values; the unit spellings are the ones real ncu exports use.
    #[test]
    fn numbers_with_separators_na_and_lists() {
        assert_eq!(
            parse_number("\t5,318,969,728.00 "),
            Ok(Some(5_318_969_728.0))
        );
        assert_eq!(parse_number("n/a"), Ok(None));
        assert_eq!(parse_number(""), Ok(None));
        assert_eq!(parse_number("32.00; 32.00"), Ok(None));
        assert!(parse_number("12x").unwrap_err().contains("'12x'"));
    }

    #[test]
    fn bytes_times_and_rates_reach_base_units() {
        let b = |v, u| to_base(v, u, Kind::Bytes).unwrap();
        assert_eq!(b(2.33, "Mbyte"), 2_330_000.0);
        assert_eq!(b(32.77, "Kbyte"), 32_770.0);
        assert_eq!(b(1.5, "Gbyte"), 1.5e9);
        assert_eq!(b(7.0, "Kbyte/block"), 7000.0);
        assert_eq!(b(12_484.0, "sector"), 399_488.0);
        assert_eq!(b(64.0, ""), 64.0);
        let t = |v, u| to_base(v, u, Kind::TimeMs).unwrap();
        let near = |a: f64, b: f64| assert!((a - b).abs() <= 1e-12 * b, "{a} != {b}");
        near(t(2720.0, "nsecond"), 0.00272);
        near(t(6.75, "us"), 0.00675);
        near(t(6.75, "usecond"), 0.00675);
        near(t(687_488.0, "ns"), 0.687488);
        assert_eq!(t(3.0, "msecond"), 3.0);
        assert_eq!(t(3.0, "ms"), 3.0);
        assert_eq!(t(2.0, "second"), 2000.0);
        let r = |v, u| to_base(v, u, Kind::PerSecond).unwrap();
        assert_eq!(r(1.5, "Ghz"), 1.5e9);
        assert_eq!(r(765.0, "cycle/second"), 765.0);
        assert_eq!(r(345.0, "Gbyte/s"), 3.45e11);
        assert_eq!(r(2.0, "Mhz"), 2e6);
    }

    #[test]
    fn counts_and_durations_beyond_physics_are_errors() {
        assert_eq!(plausible(5e9, Kind::Count), Ok(5e9));
        assert_eq!(plausible(0.004, Kind::TimeMs), Ok(0.004));
        assert_eq!(plausible(0.0, Kind::TimeMs), Ok(0.0));
        let e = plausible(1e300, Kind::Count).unwrap_err();
        assert_eq!(e, "1e300 is more than any launch counts (1e21)");
        let e = plausible(1e-306, Kind::TimeMs).unwrap_err();
        assert_eq!(
            e,
            "a duration of 1e-300 ns is shorter than the GPU timer's resolution (1 ns)"
        );
        assert_eq!(short(1.0000000000000018e-300), "1e-300");
        assert_eq!(short(2.5e21), "2.5e21");
        assert!(plausible(1e8, Kind::TimeMs).is_err());
        assert!(plausible(1e17, Kind::PerSecond).is_err());
        assert_eq!(plausible(250.0, Kind::Percent), Ok(250.0));
    }

    #[test]
    fn units_of_the_wrong_kind_are_errors() {
        assert!(to_base(1.0, "%", Kind::Bytes).is_err());
        assert!(to_base(1.0, "byte", Kind::TimeMs).is_err());
        assert!(to_base(1.0, "", Kind::TimeMs)
            .unwrap_err()
            .contains("no unit"));
        assert!(to_base(1.0, "cycle/second", Kind::Count).is_err());
        assert!(to_base(1.0, "furlong", Kind::Count).is_err());
        assert_eq!(to_base(11.32, "%", Kind::Percent), Ok(11.32));
        assert_eq!(to_base(8.0, "register/thread", Kind::Count), Ok(8.0));
        assert_eq!(to_base(0.019393, "inst/cycle", Kind::Count), Ok(0.019393));
    }
}
