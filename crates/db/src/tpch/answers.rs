//! The answers the 22 queries must give, to check a run's against: at SF 1 TPC-H's own
//! reference answers for the validation parameters (as `tpchgen` ships them); at any other scale
//! factor the answers SQLite gives on a copy of the same generated data loaded outside the run
//! (computed by `expected`). The generator is deterministic for a scale factor, so the copy
//! holds the rows the run's database should hold: a wrong row on the stack, a lost write or a
//! wrong plan shows as a different answer.

use super::queries::{QueryReport, NAMES, QUERIES};
use crate::backend::{Row, Value};

/// One cell of an answer: a number, text without `char(n)` padding, or NULL.
#[derive(Clone, Debug, PartialEq)]
pub enum Cell {
    /// Any number (integers and decimals alike: PostgreSQL's `numeric` and SQLite's doubles).
    Number(f64),
    /// Text, trailing blanks removed.
    Text(String),
    /// NULL.
    Null,
}

impl Cell {
    fn of(v: &Value) -> Cell {
        match v {
            Value::Int(i) => Cell::Number(*i as f64),
            Value::Float(f) => Cell::Number(*f),
            Value::Text(t) => Cell::Text(t.trim_end().to_string()),
            Value::Null => Cell::Null,
        }
    }
}

/// Where the expected answers come from, which sets how closely numbers must agree.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Source {
    /// TPC-H's reference answers at SF 1: numbers rounded to the cent, averages and ratios to
    /// two places.
    Reference,
    /// SQLite on a copy of the same data: sums in doubles, within 1e-9 relative of exact.
    Sqlite,
}

impl Source {
    /// How the source is named in an error.
    pub fn describe(self) -> &'static str {
        match self {
            Source::Reference => "TPC-H's reference answer at SF 1",
            Source::Sqlite => "SQLite's answer on a copy of the same generated data",
        }
    }
}

/// The expected answers of the 22 queries.
#[derive(Clone, Debug)]
pub struct Answers {
    source: Source,
    /// Query n's rows at n − 1.
    queries: Vec<Vec<Vec<Cell>>>,
}

fn cells(rows: &[Row]) -> Vec<Vec<Cell>> {
    rows.iter()
        .map(|row| row.iter().map(Cell::of).collect())
        .collect()
}

impl Answers {
    /// SQLite's answers on a copy of the data: query n's rows at n − 1.
    pub(super) fn from_sqlite(answers: &[Vec<Row>]) -> Answers {
        Answers {
            source: Source::Sqlite,
            queries: answers.iter().map(|rows| cells(rows)).collect(),
        }
    }

    /// TPC-H's reference answers at SF 1 for the validation parameters, as `tpchgen` ships
    /// them: a header line, then `|`-separated rows.
    pub fn reference_sf1() -> Answers {
        let parse = |field: &str| match field.trim().parse::<f64>() {
            Ok(x) => Cell::Number(x),
            Err(_) => Cell::Text(field.trim().to_string()),
        };
        let queries = (1..=QUERIES)
            .map(|n| {
                let text = tpchgen::q_and_a::answers_sf1::answer(i32::from(n)).unwrap_or("");
                (text.lines().filter(|l| !l.trim().is_empty()).skip(1))
                    .map(|line| line.split('|').map(parse).collect())
                    .collect()
            })
            .collect();
        Answers {
            source: Source::Reference,
            queries,
        }
    }

    /// Where they come from.
    pub fn source(&self) -> Source {
        self.source
    }

    /// `None` if `report`'s answer is the expected one; else what differs (row count, or the
    /// first row that differs with both versions).
    pub fn difference(&self, report: &QueryReport) -> Option<String> {
        let n = report.number;
        let expected = self.queries.get(usize::from(n).checked_sub(1)?)?;
        let answer = cells(&report.answer);
        if answer.len() != expected.len() {
            return Some(format!(
                "{} rows where {} has {}",
                answer.len(),
                self.source.describe(),
                expected.len()
            ));
        }
        let (i, (got, want)) = (answer.iter().zip(expected).enumerate())
            .find(|(_, (a, e))| !self.row_alike(n, a, e))?;
        Some(format!(
            "row {} is {got:?} where {} has {want:?}",
            i + 1,
            self.source.describe()
        ))
    }

    fn row_alike(&self, n: u8, answer: &[Cell], expected: &[Cell]) -> bool {
        answer.len() == expected.len()
            && (answer.iter().zip(expected).enumerate())
                .all(|(column, (a, e))| self.alike(n, column, a, e))
    }

    /// One cell against the expected one. Against the reference: numbers within the cent it
    /// rounds to, and Q11's part keys by the first digits `tpchgen`'s copy keeps (`1297` for
    /// 129760). Against SQLite: numbers within 1e-9 relative (its doubles against PostgreSQL's
    /// exact decimals).
    fn alike(&self, n: u8, column: usize, answer: &Cell, expected: &Cell) -> bool {
        match (self.source, answer, expected) {
            (Source::Reference, Cell::Number(x), Cell::Number(y)) if n == 11 && column == 0 => {
                x.to_string().starts_with(&y.to_string())
            }
            (Source::Reference, Cell::Number(x), Cell::Number(y)) => {
                (x - y).abs() <= 0.05 + 1e-9 * y.abs()
            }
            (Source::Reference, Cell::Text(x), Cell::Number(y)) => {
                x.trim().parse::<f64>().is_ok_and(|x| x == *y)
            }
            (_, Cell::Number(x), Cell::Number(y)) => {
                (x - y).abs() <= 1e-9 * x.abs().max(y.abs()).max(1.0)
            }
            (_, Cell::Text(x), Cell::Text(y)) => x.trim() == y.trim(),
            (_, Cell::Null, Cell::Null) => true,
            _ => false,
        }
    }
}

/// A query whose answer was not the expected one.
#[derive(Clone, Debug, PartialEq)]
pub struct WrongAnswer {
    /// 1 to 22.
    pub number: u8,
    /// What differs.
    pub difference: String,
}

impl std::fmt::Display for WrongAnswer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let name = NAMES[usize::from(self.number).saturating_sub(1) % NAMES.len()];
        write!(f, "Q{} ({name}): {}", self.number, self.difference)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn report(number: u8, answer: Vec<Row>) -> QueryReport {
        QueryReport {
            number,
            rows: answer.len() as u64,
            elapsed: Duration::ZERO,
            answer,
        }
    }

    #[test]
    fn the_reference_at_sf_1_has_every_query_and_takes_cents_and_padding() {
        let reference = Answers::reference_sf1();
        assert!(reference.queries.iter().all(|q| !q.is_empty()));
        // Q6 at SF 1: one row, revenue 123141078.23.
        let q6 = |x: f64| report(6, vec![vec![Value::Float(x)]]);
        assert_eq!(reference.difference(&q6(123_141_078.228_8)), None);
        let off = reference.difference(&q6(123_141_079.23)).unwrap();
        assert!(
            off.starts_with("row 1 is") && off.contains("reference"),
            "{off}"
        );
        let none = reference.difference(&report(6, vec![])).unwrap();
        assert!(none.starts_with("0 rows where"), "{none}");
    }

    #[test]
    fn computed_answers_compare_numbers_to_1e_9_and_text_without_padding() {
        let expected = Answers {
            source: Source::Sqlite,
            queries: vec![vec![vec![Cell::Text("A".into()), Cell::Number(1e6)]]; 22],
        };
        let row = |t: &str, x: f64| vec![vec![Value::Text(t.into()), Value::Float(x)]];
        assert_eq!(
            expected.difference(&report(3, row("A   ", 1e6 + 1e-4))),
            None
        );
        assert!(expected
            .difference(&report(3, row("A", 1e6 + 0.01)))
            .is_some());
        assert!(expected.difference(&report(3, row("B", 1e6))).is_some());
        let wrong = WrongAnswer {
            number: 3,
            difference: "x".into(),
        };
        assert_eq!(wrong.to_string(), "Q3 (Shipping Priority): x");
    }
}
