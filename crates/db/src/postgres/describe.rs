//! What `postgres --describe-config` says about every setting (one line each, tab-separated:
//! name, context, group, type, boot value, minimum, maximum, short and long description), parsed
//! without running anything, and the checks a value must pass before any file is written: the
//! key exists, a boolean is a boolean, a number is a number within the range when it has no
//! unit. The server itself then checks what this output does not say (enum values, units):
//! see `settings.rs`.
//!
//! The boot-value column is not used: PostgreSQL prints it before initialising the settings,
//! so it shows `0` and `FALSE` for most of them.

use std::collections::BTreeMap;

/// The type of a setting and, for numbers, its range in the setting's own unit.
#[derive(Clone, Debug, PartialEq)]
pub enum ParamType {
    /// `on`/`off` and PostgreSQL's other spellings.
    Bool,
    /// An integer, maybe with a unit (`8MB`, `30s`).
    Integer {
        /// Smallest value.
        min: f64,
        /// Largest value.
        max: f64,
    },
    /// A floating-point number.
    Real {
        /// Smallest value.
        min: f64,
        /// Largest value.
        max: f64,
    },
    /// One of a list of words the output does not give (the server checks it).
    Enum,
    /// Any text.
    String,
}

/// One setting as `postgres --describe-config` describes it.
#[derive(Clone, Debug, PartialEq)]
pub struct ParamDoc {
    /// Name (lower case).
    pub name: String,
    /// When it can change: `postmaster` (at start), `sighup`, `user`, ...
    pub context: String,
    /// Its group in postgresql.conf (`Resource Usage / Memory`).
    pub group: String,
    /// Type and range.
    pub kind: ParamType,
    /// The short description.
    pub description: String,
}

/// Every setting, by name.
pub type Catalog = BTreeMap<String, ParamDoc>;

/// Parses the whole output; lines that are not a setting's description are an error naming
/// the line (another program, or a format this version of bakeoff does not know).
pub fn parse_describe_config(text: &str) -> Result<Catalog, String> {
    let mut catalog = Catalog::new();
    for (n, line) in text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
    {
        let doc = parse_line(line).ok_or_else(|| {
            format!(
                "line {} of `postgres --describe-config` is not a setting: {line:?}",
                n + 1
            )
        })?;
        catalog.insert(doc.name.clone(), doc);
    }
    if catalog.is_empty() {
        return Err("`postgres --describe-config` printed no settings".into());
    }
    Ok(catalog)
}

fn parse_line(line: &str) -> Option<ParamDoc> {
    let f: Vec<&str> = line.split('\t').collect();
    if f.len() < 8 || f[0].is_empty() {
        return None;
    }
    let range = || Some((f[5].trim().parse().ok()?, f[6].trim().parse().ok()?));
    let kind = match f[3] {
        "BOOLEAN" => ParamType::Bool,
        "INTEGER" => range().map(|(min, max)| ParamType::Integer { min, max })?,
        "REAL" => range().map(|(min, max)| ParamType::Real { min, max })?,
        "ENUM" => ParamType::Enum,
        "STRING" => ParamType::String,
        _ => return None,
    };
    Some(ParamDoc {
        name: f[0].to_ascii_lowercase(),
        context: f[1].to_string(),
        group: f[2].to_string(),
        kind,
        description: f[7].to_string(),
    })
}

/// The units PostgreSQL accepts after a number (memory, then time).
const UNITS: [&str; 11] = [
    "B", "kB", "MB", "GB", "TB", "us", "ms", "s", "min", "h", "d",
];

/// Why `value` cannot be `doc`'s value, as far as the description tells; `Ok` when it may be.
pub fn check_value(doc: &ParamDoc, value: &str) -> Result<(), String> {
    let v = value.trim();
    match &doc.kind {
        ParamType::Bool if parses_as_bool(v) => Ok(()),
        ParamType::Bool => Err("a boolean: on or off (also true/false, yes/no, 1/0)".into()),
        ParamType::Integer { min, max } => check_number(v, *min, *max, "an integer"),
        ParamType::Real { min, max } => check_number(v, *min, *max, "a number"),
        ParamType::Enum if !v.is_empty() => Ok(()),
        ParamType::Enum => Err("one of the setting's words, not empty".into()),
        ParamType::String => Ok(()),
    }
}

/// PostgreSQL's `parse_bool`: the words, case-insensitive, or an unambiguous prefix of them.
fn parses_as_bool(v: &str) -> bool {
    let v = v.to_ascii_lowercase();
    if v.is_empty() {
        return false;
    }
    let prefix_of = |word: &str, least: usize| v.len() >= least && word.starts_with(&v);
    prefix_of("true", 1)
        || prefix_of("false", 1)
        || prefix_of("yes", 1)
        || prefix_of("no", 1)
        || prefix_of("on", 2)
        || prefix_of("off", 2)
        || v == "1"
        || v == "0"
}

/// A number, optionally followed by one of [`UNITS`]; without a unit, within `min ..= max`
/// (with one, only the server knows the setting's own unit and checks the range).
fn check_number(v: &str, min: f64, max: f64, what: &str) -> Result<(), String> {
    let body = v.len() - v.trim_start_matches(['-', '+']).len();
    let hex = v[body..].to_ascii_lowercase().starts_with("0x");
    let split = match hex {
        true => {
            let digits = &v[body + 2..];
            let end = digits.find(|c: char| !c.is_ascii_hexdigit());
            body + 2 + end.unwrap_or(digits.len())
        }
        false => v
            .find(|c: char| c.is_ascii_alphabetic() && c != 'e' && c != 'E')
            .unwrap_or(v.len()),
    };
    let (number, unit) = (v[..split].trim(), v[split..].trim());
    let allowed = || {
        format!(
            "{what} from {} to {} (in the setting's own unit unless one such as MB or s is given)",
            fmt(min),
            fmt(max)
        )
    };
    let parsed = parse_number(number).ok_or_else(allowed)?;
    if unit.is_empty() {
        return match (min..=max).contains(&parsed) {
            true => Ok(()),
            false => Err(allowed()),
        };
    }
    match UNITS.contains(&unit) {
        true => Ok(()),
        false => Err(format!(
            "{what} with one of the units {}, not {unit:?}",
            UNITS.join(", ")
        )),
    }
}

/// A decimal (or `0x` hexadecimal) number; PostgreSQL rounds a fraction given to an integer.
fn parse_number(text: &str) -> Option<f64> {
    let (sign, digits) = match text.strip_prefix('-') {
        Some(rest) => (-1.0, rest),
        None => (1.0, text.strip_prefix('+').unwrap_or(text)),
    };
    if let Some(hex) = digits
        .strip_prefix("0x")
        .or_else(|| digits.strip_prefix("0X"))
    {
        return i64::from_str_radix(hex, 16).ok().map(|n| sign * n as f64);
    }
    let n: f64 = digits.parse().ok()?;
    n.is_finite().then_some(sign * n)
}

/// A range bound as PostgreSQL prints it: integers without a fraction.
fn fmt(bound: f64) -> String {
    if bound.fract() == 0.0 && bound.abs() < 1e15 {
        format!("{}", bound as i64)
    } else {
        format!("{bound}")
    }
}

/// The known setting nearest to `key` by edit distance, if one is close.
pub fn nearest<'a>(catalog: &'a Catalog, key: &str) -> Option<&'a str> {
    catalog
        .keys()
        .map(|k| (strsim::levenshtein(k, key), k))
        .filter(|(d, _)| *d <= 3.max(key.len() / 4))
        .min()
        .map(|(_, k)| k.as_str())
}

#[cfg(test)]
mod tests {
    use super::*;

    const CAPTURED: &str = include_str!("fixtures/describe-config-15.txt");

    fn catalog() -> Catalog {
        parse_describe_config(CAPTURED).unwrap()
    }

    #[test]
    fn every_captured_line_parses_with_its_type_and_range() {
        let c = catalog();
        assert_eq!(c.len(), CAPTURED.lines().count());
        let sb = &c["shared_buffers"];
        assert_eq!(sb.context, "postmaster");
        assert_eq!(sb.group, "Resource Usage / Memory");
        assert_eq!(
            sb.kind,
            ParamType::Integer {
                min: 16.0,
                max: 1073741823.0
            }
        );
        assert_eq!(c["fsync"].kind, ParamType::Bool);
        assert_eq!(c["wal_level"].kind, ParamType::Enum);
        assert_eq!(c["listen_addresses"].kind, ParamType::String);
        assert_eq!(
            c["random_page_cost"].kind,
            ParamType::Real {
                min: 0.0,
                max: 1.79769e308
            }
        );
        assert!(c["work_mem"].description.contains("query workspaces"));
    }

    #[test]
    fn other_output_is_refused_with_the_line() {
        let err = parse_describe_config("work_mem\tuser\n").unwrap_err();
        assert!(err.contains("line 1") && err.contains("work_mem"), "{err}");
        assert!(parse_describe_config("").is_err());
        let odd_type = "x\tuser\tg\tCOMPLEX\t0\t\t\td\t\n";
        assert!(parse_describe_config(odd_type).is_err());
    }

    #[test]
    fn values_are_checked_by_type_and_unitless_range() {
        let c = catalog();
        let ok = |k: &str, v: &str| check_value(&c[k], v);
        for (k, v) in [
            ("fsync", "off"),
            ("fsync", "TRUE"),
            ("fsync", "y"),
            ("fsync", "0"),
            ("work_mem", "8MB"),
            ("work_mem", "65536"),
            ("work_mem", "1.5GB"),
            ("checkpoint_timeout", "5min"),
            ("log_min_duration_statement", "-1"),
            ("max_connections", "0x20"),
            ("max_connections", "0xff"),
            ("random_page_cost", "1.1"),
            ("random_page_cost", "4e0"),
            ("wal_level", "minimal"),
            ("listen_addresses", "anything at all"),
        ] {
            assert_eq!(ok(k, v), Ok(()), "{k}={v}");
        }
        let refused = |k: &str, v: &str| ok(k, v).unwrap_err();
        assert!(refused("fsync", "o").contains("a boolean"));
        assert!(refused("fsync", "maybe").contains("on or off"));
        let range = refused("max_connections", "0");
        assert!(range.contains("an integer from 1 to 262143"), "{range}");
        assert!(refused("work_mem", "lots").contains("an integer"));
        let unit = refused("work_mem", "8XB");
        assert!(
            unit.contains("units B, kB, MB, GB, TB, us, ms, s, min, h, d, not \"XB\""),
            "{unit}"
        );
        assert!(refused("random_page_cost", "-1").contains("a number from 0"));
        assert!(refused("wal_level", " ").contains("not empty"));
    }

    #[test]
    fn a_misspelt_key_finds_its_nearest_setting() {
        let c = catalog();
        assert_eq!(nearest(&c, "work_mme"), Some("work_mem"));
        assert_eq!(nearest(&c, "shared_buffer"), Some("shared_buffers"));
        assert_eq!(nearest(&c, "colour_scheme"), None);
    }
}
