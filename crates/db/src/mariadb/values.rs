//! Values between bakeoff's [`Value`] and the MariaDB client's.

use crate::backend::Value;

/// A value bound to a parameter.
pub(super) fn to_mysql(v: &Value) -> mysql::Value {
    match v {
        Value::Null => mysql::Value::NULL,
        Value::Int(i) => mysql::Value::Int(*i),
        Value::Float(f) => mysql::Value::Double(*f),
        Value::Text(t) => mysql::Value::Bytes(t.clone().into_bytes()),
    }
}

/// A value read back: integers as integers (an unsigned one past `i64` as text), floating
/// point as `Float`, everything else as text (a `DECIMAL`'s digits, a `DATE` as `YYYY-MM-DD`).
pub(super) fn from_mysql(v: mysql::Value) -> Value {
    use mysql::Value as M;
    match v {
        M::NULL => Value::Null,
        M::Int(i) => Value::Int(i),
        M::UInt(u) => i64::try_from(u).map_or_else(|_| Value::Text(u.to_string()), Value::Int),
        M::Float(f) => Value::Float(f64::from(f)),
        M::Double(f) => Value::Float(f),
        M::Bytes(b) => Value::Text(String::from_utf8_lossy(&b).into_owned()),
        M::Date(y, mo, d, 0, 0, 0, 0) => Value::Text(format!("{y:04}-{mo:02}-{d:02}")),
        M::Date(y, mo, d, h, mi, s, us) => Value::Text(format!(
            "{y:04}-{mo:02}-{d:02} {h:02}:{mi:02}:{s:02}{}",
            fraction(us)
        )),
        M::Time(neg, days, h, mi, s, us) => Value::Text(format!(
            "{}{:02}:{mi:02}:{s:02}{}",
            if neg { "-" } else { "" },
            u64::from(days) * 24 + u64::from(h),
            fraction(us)
        )),
    }
}

fn fraction(us: u32) -> String {
    match us {
        0 => String::new(),
        us => format!(".{us:06}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_read_back_as_bakeoffs() {
        use mysql::Value as M;
        assert_eq!(from_mysql(M::UInt(7)), Value::Int(7));
        assert_eq!(
            from_mysql(M::UInt(u64::MAX)),
            Value::Text(u64::MAX.to_string())
        );
        assert_eq!(
            from_mysql(M::Bytes(b"15.20".to_vec())),
            Value::Text("15.20".into())
        );
        assert_eq!(
            from_mysql(M::Date(2026, 11, 6, 0, 0, 0, 0)),
            Value::Text("2026-11-06".into())
        );
        assert_eq!(
            from_mysql(M::Date(2026, 11, 6, 9, 5, 1, 42)),
            Value::Text("2026-11-06 09:05:01.000042".into())
        );
        assert_eq!(
            from_mysql(M::Time(true, 1, 2, 3, 4, 0)),
            Value::Text("-26:03:04".into())
        );
        assert_eq!(to_mysql(&Value::Float(1.5)), M::Double(1.5));
    }
}
