//! fio's unit grammar: sizes (`4k`, `1m`, `2g`, `4KiB`), durations (`500us`, `30s`, `10m`) and
//! booleans. Sizes use base 1024 like fio's default `kb_base`; a bare number is bytes. A bare
//! duration is seconds, as in fio's `runtime`.

use crate::settings::echo;
use std::time::Duration;

/// `text`, trimmed, split where its number (digits and points) ends: `("1.5", "g")`.
fn number_and_unit(text: &str) -> (&str, &str) {
    let t = text.trim();
    let end = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    t.split_at(end)
}

/// Parses a byte size such as `8k`, `1m`, `4KiB`, `1.5g` or `4096`.
pub fn parse_size(text: &str) -> Result<u64, String> {
    let shown = echo(text);
    let (num, suffix) = number_and_unit(text);
    if num.is_empty() {
        return Err(format!(
            "'{shown}' is not a size (expected e.g. 4k, 8k, 1m, 2g)"
        ));
    }
    let mult: u64 = match suffix.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "k" | "kb" | "kib" => 1 << 10,
        "m" | "mb" | "mib" => 1 << 20,
        "g" | "gb" | "gib" => 1 << 30,
        "t" | "tb" | "tib" => 1 << 40,
        other => {
            return Err(format!(
                "'{shown}': unknown size unit '{}' (use k, m, g or t, base 1024)",
                echo(other)
            ))
        }
    };
    let value: f64 = num
        .parse()
        .map_err(|_| format!("'{shown}' is not a size (expected e.g. 4k, 8k, 1m, 2g)"))?;
    let bytes = value * mult as f64;
    if !bytes.is_finite() || bytes > u64::MAX as f64 {
        return Err(format!("'{shown}' is too large"));
    }
    if bytes.fract() != 0.0 {
        return Err(format!("'{shown}' is not a whole number of bytes"));
    }
    Ok(bytes as u64)
}

/// Parses a duration such as `500us`, `10ms`, `30s`, `2m`, `1h`; a bare number is seconds.
pub fn parse_duration(text: &str) -> Result<Duration, String> {
    let shown = echo(text);
    let (num, suffix) = number_and_unit(text);
    let value: f64 = num
        .parse()
        .map_err(|_| format!("'{shown}' is not a duration (expected e.g. 500us, 30s, 2m)"))?;
    let nanos_per: f64 = match suffix.trim().to_ascii_lowercase().as_str() {
        "ns" => 1.0,
        "us" | "µs" => 1e3,
        "ms" => 1e6,
        "" | "s" | "sec" => 1e9,
        "m" | "min" => 60e9,
        "h" => 3600e9,
        other => {
            return Err(format!(
                "'{shown}': unknown time unit '{}' (use ns, us, ms, s, m or h)",
                echo(other)
            ))
        }
    };
    let nanos = value * nanos_per;
    if !nanos.is_finite() || nanos > 1e18 {
        return Err(format!("'{shown}' is too long"));
    }
    Ok(Duration::from_nanos(nanos as u64))
}

/// Parses `true/false`, `1/0`, `yes/no`, `on/off`.
pub fn parse_bool(text: &str) -> Result<bool, String> {
    let shown = echo(text);
    match text.trim().to_ascii_lowercase().as_str() {
        "1" | "true" | "yes" | "on" => Ok(true),
        "0" | "false" | "no" | "off" => Ok(false),
        _ => Err(format!("'{shown}' is not a boolean (use true or false)")),
    }
}

/// Formats bytes with a binary unit: `8 KiB`, `1.5 MiB`.
pub fn format_bytes(bytes: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut value = bytes as f64;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    if unit == 0 || value.fract() == 0.0 {
        format!("{value:.0} {}", UNITS[unit])
    } else {
        format!("{value:.1} {}", UNITS[unit])
    }
}

/// Formats a count or rate: thousands separators from 100 up (`12,345`), one decimal below
/// (`12.5`). The one rate grammar of every human-readable output.
pub fn format_rate(v: f64) -> String {
    if v >= 100.0 {
        format_count(v.round() as u64)
    } else {
        format!("{v:.1}")
    }
}

/// A whole count with thousands separators: `12,345`.
pub fn format_count(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// A duration in seconds, in the grammar of [`format_nanos`]: `2.50 s`, `310 ms`.
pub fn format_secs(secs: f64) -> String {
    format_nanos(secs * 1e9)
}

/// Formats a duration given in nanoseconds with three significant digits and the unit after
/// a space: `812 ns`, `45.2 µs`, `310 µs`, `2.26 ms`, `1.20 s`. The one duration grammar of
/// every human-readable output (`bakeoff_report`'s `fmt` module uses it; parsers accept it).
pub fn format_nanos(nanos: f64) -> String {
    let nanos = nanos.max(0.0);
    let (value, unit) = if nanos < 999.5 {
        (nanos, "ns")
    } else if nanos < 999_500.0 {
        (nanos / 1e3, "µs")
    } else if nanos < 999_500_000.0 {
        (nanos / 1e6, "ms")
    } else {
        (nanos / 1e9, "s")
    };
    format!("{} {unit}", three_digits(value, unit))
}

/// `2.26`, `45.2`, `310`: three significant digits for values from 1 to 999 (whole numbers
/// of nanoseconds: `812 ns`, `3 ns`).
fn three_digits(v: f64, unit: &str) -> String {
    if unit == "ns" || v >= 99.95 {
        format!("{v:.0}")
    } else if v >= 9.995 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    }
}

/// A `Duration` in JSON as whole nanoseconds (fields named `..._ns`):
/// `#[serde(with = "crate::units::duration_ns")]`.
pub(crate) mod duration_ns {
    use serde::{Deserialize, Deserializer, Serializer};
    use std::time::Duration;

    pub fn serialize<S: Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_u64(d.as_nanos() as u64)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Duration, D::Error> {
        Ok(Duration::from_nanos(u64::deserialize(d)?))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn sizes_follow_fio_base_1024() {
        assert_eq!(parse_size("4k"), Ok(4096));
        assert_eq!(parse_size("8K"), Ok(8192));
        assert_eq!(parse_size("1m"), Ok(1 << 20));
        assert_eq!(parse_size("4KiB"), Ok(4096));
        assert_eq!(parse_size("1.5g"), Ok(3 << 29));
        assert_eq!(parse_size("512"), Ok(512));
        assert!(parse_size("4q").unwrap_err().contains("unknown size unit"));
        assert!(parse_size("").is_err());
        assert!(parse_size("k").is_err());
        assert!(parse_size("0.3").is_err());
    }

    #[test]
    fn durations_default_to_seconds() {
        assert_eq!(parse_duration("30"), Ok(Duration::from_secs(30)));
        assert_eq!(parse_duration("500us"), Ok(Duration::from_micros(500)));
        assert_eq!(parse_duration("2m"), Ok(Duration::from_secs(120)));
        assert_eq!(parse_duration("1.5s"), Ok(Duration::from_millis(1500)));
        assert!(parse_duration("3 weeks").is_err());
    }

    #[test]
    fn formats_are_readable() {
        assert_eq!(format_bytes(8192), "8 KiB");
        assert_eq!(format_bytes(1536 * 1024), "1.5 MiB");
        assert_eq!(format_nanos(45_200.0), "45.2 µs");
        assert_eq!(format_nanos(310_000.0), "310 µs");
        assert_eq!(format_nanos(2_261_000.0), "2.26 ms");
        assert_eq!(format_nanos(812.0), "812 ns");
        assert_eq!(format_nanos(999_700.0), "1.00 ms");
        assert_eq!(format_nanos(1.2e9), "1.20 s");
        assert_eq!(format_nanos(30e9), "30.0 s");
        assert_eq!(format_nanos(12e6), "12.0 ms");
        assert_eq!(format_secs(2.5), "2.50 s");
        assert_eq!(format_rate(12_910.4), "12,910");
        assert_eq!(format_rate(1_234_567.0), "1,234,567");
        assert_eq!(format_rate(99.94), "99.9");
        assert_eq!(format_count(100), "100");
    }

    proptest! {
        #[test]
        fn size_roundtrips_through_k_suffix(k in 0u64..1_000_000) {
            prop_assert_eq!(parse_size(&format!("{k}k")), Ok(k * 1024));
        }

        #[test]
        fn parse_size_never_panics(s in ".{0,12}") {
            let _ = parse_size(&s);
            let _ = parse_duration(&s);
        }
    }
}
