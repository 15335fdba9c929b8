//! bakeoff's [`Value`]s on PostgreSQL's wire: bound to whatever type the server inferred for a
//! `$n` (an integer to `int4` or `numeric` as well as `bigint`), read from the binary types a
//! query returns (`sum(bigint)` is `numeric`; a `date` is ISO-8601 text, as SQLite keeps
//! dates), and written as `COPY` text fields.

use crate::backend::Value;
use bytes::{BufMut, BytesMut};
use postgres::types::{to_sql_checked, FromSql, IsNull, ToSql, Type};
use std::error::Error;

type BoxError = Box<dyn Error + Sync + Send>;

/// A value bound to a parameter of whatever type the server inferred.
#[derive(Debug)]
pub(super) struct Param<'a>(pub &'a Value);

impl ToSql for Param<'_> {
    fn to_sql(&self, ty: &Type, out: &mut BytesMut) -> Result<IsNull, BoxError> {
        match (self.0, ty.clone()) {
            (Value::Null, _) => Ok(IsNull::Yes),
            (Value::Int(i), Type::INT8) => i.to_sql(ty, out),
            (Value::Int(i), Type::INT4) => i32::try_from(*i)?.to_sql(ty, out),
            (Value::Int(i), Type::INT2) => i16::try_from(*i)?.to_sql(ty, out),
            (Value::Int(i), Type::OID) => u32::try_from(*i)?.to_sql(ty, out),
            (Value::Int(i), Type::FLOAT8) => (*i as f64).to_sql(ty, out),
            (Value::Int(i), Type::FLOAT4) => (*i as f32).to_sql(ty, out),
            (Value::Int(i), Type::BOOL) => (*i != 0).to_sql(ty, out),
            (Value::Int(i), Type::NUMERIC) => {
                put_numeric(*i, out);
                Ok(IsNull::No)
            }
            (Value::Float(f), Type::FLOAT8) => f.to_sql(ty, out),
            (Value::Float(f), Type::FLOAT4) => (*f as f32).to_sql(ty, out),
            (Value::Text(t), _) if <&str as ToSql>::accepts(ty) => t.as_str().to_sql(ty, out),
            (v, _) => Err(format!("cannot bind {v:?} to a parameter of type {ty}").into()),
        }
    }

    fn accepts(_: &Type) -> bool {
        true // each value decides in to_sql, where it knows both
    }

    to_sql_checked!();
}

/// An integer as PostgreSQL's binary `numeric`: base-10000 digits, most significant first.
fn put_numeric(value: i64, out: &mut BytesMut) {
    let mut rest = value.unsigned_abs();
    let mut digits = Vec::new();
    while rest > 0 {
        digits.push((rest % 10_000) as i16);
        rest /= 10_000;
    }
    digits.reverse();
    let weight = digits.len().saturating_sub(1) as i16;
    out.put_i16(digits.len() as i16);
    out.put_i16(weight);
    out.put_u16(if value < 0 { 0x4000 } else { 0 });
    out.put_u16(0); // display scale: an integer
    for d in digits {
        out.put_i16(d);
    }
}

impl<'a> FromSql<'a> for Value {
    fn from_sql(ty: &Type, raw: &'a [u8]) -> Result<Value, BoxError> {
        Ok(match ty.clone() {
            Type::INT8 => Value::Int(i64::from_sql(ty, raw)?),
            Type::INT4 => Value::Int(i32::from_sql(ty, raw)?.into()),
            Type::INT2 => Value::Int(i16::from_sql(ty, raw)?.into()),
            Type::OID => Value::Int(u32::from_sql(ty, raw)?.into()),
            Type::BOOL => Value::Int(bool::from_sql(ty, raw)?.into()),
            Type::FLOAT8 => Value::Float(f64::from_sql(ty, raw)?),
            Type::FLOAT4 => Value::Float(f32::from_sql(ty, raw)?.into()),
            Type::NUMERIC => numeric(raw)?,
            Type::DATE => Value::Text(time::Date::from_sql(ty, raw)?.to_string()),
            _ if <&str as FromSql>::accepts(ty) => Value::Text(<&str>::from_sql(ty, raw)?.into()),
            _ => return Err(format!("bakeoff cannot read a column of type {ty}").into()),
        })
    }

    fn from_sql_null(_: &Type) -> Result<Value, BoxError> {
        Ok(Value::Null)
    }

    fn accepts(_: &Type) -> bool {
        true
    }
}

/// A binary `numeric`: an integer when it has no fraction and fits, else a double.
fn numeric(raw: &[u8]) -> Result<Value, BoxError> {
    let word = |i: usize| -> Result<i16, BoxError> {
        let b = raw
            .get(2 * i..2 * i + 2)
            .ok_or("a numeric value is cut short")?;
        Ok(i16::from_be_bytes([b[0], b[1]]))
    };
    let (ndigits, weight, sign, dscale) = (word(0)?, word(1)?, word(2)? as u16, word(3)?);
    match sign {
        0xC000 => return Ok(Value::Float(f64::NAN)),
        0xD000 => return Ok(Value::Float(f64::INFINITY)),
        0xF000 => return Ok(Value::Float(f64::NEG_INFINITY)),
        _ => {}
    }
    // Digit j is worth 10000^(weight - j): those up to `weight` are the integer part, the rest
    // (and zero groups when the weight is below -1) the fraction.
    let digit = |j: i32| match j >= 0 && j < i32::from(ndigits) {
        true => word(4 + j as usize),
        false => Ok(0),
    };
    let mut whole = String::new();
    for j in 0..=i32::from(weight) {
        match j {
            0 => whole.push_str(&digit(j)?.to_string()),
            _ => whole.push_str(&format!("{:04}", digit(j)?)),
        }
    }
    let mut fraction = String::new();
    for j in i32::from(weight) + 1..i32::from(ndigits) {
        fraction.push_str(&format!("{:04}", digit(j)?));
    }
    let sign = if sign == 0x4000 { "-" } else { "" };
    let whole = if whole.is_empty() { "0".into() } else { whole };
    if dscale == 0 && fraction.trim_end_matches('0').is_empty() {
        if let Ok(i) = format!("{sign}{whole}").parse::<i64>() {
            return Ok(Value::Int(i));
        }
    }
    Ok(Value::Float(format!("{sign}{whole}.{fraction}0").parse()?))
}

/// Appends `value` as one field of `COPY ... FROM STDIN` text format: `\N` for NULL, and
/// backslash, newline, carriage return and tab escaped in text (they would end the field or row).
pub(super) fn copy_field(value: &Value, out: &mut String) {
    match value {
        Value::Null => out.push_str("\\N"),
        Value::Int(i) => out.push_str(&i.to_string()),
        Value::Float(f) if f.is_nan() => out.push_str("NaN"),
        Value::Float(f) if f.is_infinite() => {
            out.push_str(if *f > 0.0 { "Infinity" } else { "-Infinity" })
        }
        Value::Float(f) => out.push_str(&format!("{f:?}")),
        Value::Text(t) => {
            for c in t.chars() {
                match c {
                    '\\' => out.push_str("\\\\"),
                    '\n' => out.push_str("\\n"),
                    '\r' => out.push_str("\\r"),
                    '\t' => out.push_str("\\t"),
                    c => out.push(c),
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn numeric_bytes(ndigits: i16, weight: i16, sign: u16, dscale: u16, digits: &[i16]) -> Vec<u8> {
        let mut out = BytesMut::new();
        out.put_i16(ndigits);
        out.put_i16(weight);
        out.put_u16(sign);
        out.put_u16(dscale);
        digits.iter().for_each(|d| out.put_i16(*d));
        out.to_vec()
    }

    #[test]
    fn integers_go_to_numeric_and_back() {
        for i in [
            0,
            1,
            -1,
            9_999,
            10_000,
            123_456_789,
            -40_000,
            i64::MAX,
            i64::MIN,
        ] {
            let mut out = BytesMut::new();
            put_numeric(i, &mut out);
            assert_eq!(numeric(&out).unwrap(), Value::Int(i), "{i}");
        }
    }

    #[test]
    fn numeric_fractions_and_specials_are_doubles() {
        let n = |w, s, scale, d: &[i16]| numeric(&numeric_bytes(d.len() as i16, w, s, scale, d));
        assert_eq!(n(0, 0, 1, &[12, 5000]).unwrap(), Value::Float(12.5));
        assert_eq!(n(0, 0x4000, 2, &[3, 1200]).unwrap(), Value::Float(-3.12));
        assert_eq!(n(-1, 0, 4, &[1]).unwrap(), Value::Float(0.0001));
        assert_eq!(n(-2, 0, 8, &[1]).unwrap(), Value::Float(0.00000001));
        assert_eq!(
            n(1, 0, 2, &[2]).unwrap(),
            Value::Float(20000.0),
            "scale 2: not an integer"
        );
        assert_eq!(
            n(1, 0, 0, &[2]).unwrap(),
            Value::Int(20000),
            "a trailing zero group"
        );
        assert_eq!(
            n(5, 0, 0, &[9999]).unwrap(),
            Value::Float(9.999e23),
            "beyond i64"
        );
        assert!(matches!(n(0, 0xC000, 0, &[]).unwrap(), Value::Float(f) if f.is_nan()));
        assert!(numeric(&[0, 2, 0, 0]).is_err(), "cut short");
    }

    #[test]
    fn a_date_reads_as_iso_text() {
        // PostgreSQL's binary date: days since 2000-01-01.
        let days = |d: i32| Value::from_sql(&Type::DATE, &d.to_be_bytes()).unwrap();
        assert_eq!(days(0), Value::Text("2000-01-01".into()));
        assert_eq!(days(-2_556), Value::Text("1993-01-01".into()));
        assert_eq!(days(-1_022), Value::Text("1997-03-15".into()));
    }

    #[test]
    fn copy_fields_escape_what_would_end_a_field_or_a_row() {
        let field = |v: Value| {
            let mut out = String::new();
            copy_field(&v, &mut out);
            out
        };
        assert_eq!(field(Value::Null), "\\N");
        assert_eq!(field(Value::Int(-42)), "-42");
        assert_eq!(field(Value::Float(0.1)), "0.1");
        assert_eq!(field(Value::Float(f64::NEG_INFINITY)), "-Infinity");
        assert_eq!(
            field(Value::Text("a\tb\nc\\d\re \\N".into())),
            "a\\tb\\nc\\\\d\\re \\\\N"
        );
    }

    #[test]
    fn a_value_binds_to_the_type_the_server_inferred_or_says_why_not() {
        let bind = |v: Value, ty: Type| {
            let mut out = BytesMut::new();
            Param(&v).to_sql(&ty, &mut out).map(|_| out.to_vec())
        };
        assert_eq!(bind(Value::Int(7), Type::INT4).unwrap(), 7i32.to_be_bytes());
        assert_eq!(bind(Value::Int(7), Type::INT8).unwrap(), 7i64.to_be_bytes());
        assert!(
            bind(Value::Int(1 << 40), Type::INT4).is_err(),
            "out of int4's range"
        );
        assert_eq!(bind(Value::Text("x".into()), Type::VARCHAR).unwrap(), b"x");
        let err = bind(Value::Text("x".into()), Type::INT8).unwrap_err();
        assert!(err.to_string().contains("type int8"), "{err}");
    }
}
