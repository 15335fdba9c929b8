//! TPC-H's data as rows of [`Value`]s, straight from the `tpchgen` crate (a Rust port of
//! dbgen that generates the same rows): per table and part an iterator, so loaders stream
//! each part into the database's bulk path with no interim file. And the rows each table
//! holds at a scale factor, which the load is checked against.

use super::schema::Table;
use crate::backend::{Row, Value};
use tpchgen::decimal::TPCHDecimal;
use tpchgen::generators::{
    CustomerGenerator, LineItemGenerator, NationGenerator, OrderGenerator, PartGenerator,
    PartSuppGenerator, RegionGenerator, SupplierGenerator,
};

/// A table's rows of one part.
pub type Rows = Box<dyn Iterator<Item = Row>>;

/// Rows a load job generates at most: big tables are cut into parts of about this many so
/// that loaders share them (LINEITEM at SF 1 is 30 parts).
const ROWS_PER_PART: i64 = 200_000;

/// Suppliers per part (PARTSUPP has four rows per PART row).
const SUPPLIERS_PER_PART: i64 = 4;

fn int(v: impl Into<i64>) -> Value {
    Value::Int(v.into())
}

fn text(v: impl ToString) -> Value {
    Value::Text(v.to_string())
}

/// A decimal: cents as a double, exact to the cent (PostgreSQL's COPY reads it into
/// `numeric(15,2)` exactly; SQLite stores the double).
fn decimal(v: TPCHDecimal) -> Value {
    Value::Float(v.as_f64())
}

/// Generates the text pool every generator draws comments from (dbgen's: 300 MiB, built once
/// per process) and returns its size in bytes. The first load does this by itself; calling it
/// first charges that memory where the process is now, not to a memory cgroup it joins later.
pub fn init_generator() -> usize {
    tpchgen::text::TextPool::get_or_init_default().size() as usize
}

/// The rows `table` holds at scale factor `sf`, as the generator makes them: clause 4.2.5's
/// cardinalities with the scaled ones truncated to whole rows (`(base × sf) as i64`, as dbgen
/// does), and LINEITEM's exactly (the sum of every order's line count, which the generator
/// draws from its own seed: 60,175 at SF 0.01).
pub fn expected_rows(table: Table, sf: f64) -> i64 {
    match table {
        Table::Region => 5,
        Table::Nation => 25,
        Table::Supplier => SupplierGenerator::calculate_row_count(sf, 1, 1),
        Table::Part => PartGenerator::calculate_row_count(sf, 1, 1),
        Table::PartSupp => SUPPLIERS_PER_PART * PartSuppGenerator::calculate_row_count(sf, 1, 1),
        Table::Customer => CustomerGenerator::calculate_row_count(sf, 1, 1),
        Table::Orders => OrderGenerator::calculate_row_count(sf, 1, 1),
        Table::LineItem => {
            let mut lines = OrderGenerator::create_line_count_random();
            (0..OrderGenerator::calculate_row_count(sf, 1, 1))
                .map(|_| {
                    let n = lines.next_value();
                    lines.row_finished();
                    i64::from(n)
                })
                .sum()
        }
    }
}

/// How many parts `table` is generated in at `sf` (PARTSUPP and LINEITEM are cut along
/// PART's and ORDERS' rows, as the generator splits them).
pub fn parts(table: Table, sf: f64) -> i32 {
    let (along, per_row) = match table {
        Table::Region | Table::Nation => return 1,
        Table::PartSupp => (expected_rows(Table::Part, sf), SUPPLIERS_PER_PART),
        Table::LineItem => (expected_rows(Table::Orders, sf), 4),
        other => (expected_rows(other, sf), 1),
    };
    // Every part needs a row of the table it is cut along.
    let wanted = ((along * per_row + ROWS_PER_PART - 1) / ROWS_PER_PART).clamp(1, along.max(1));
    i32::try_from(wanted).unwrap_or(i32::MAX)
}

/// The rows of `table` in part `part` (1-based) of `parts` at `sf`.
pub fn rows(table: Table, sf: f64, part: i32, parts: i32) -> Rows {
    match table {
        Table::Region => Box::new(
            RegionGenerator::new(sf, part, parts)
                .iter()
                .map(|r| vec![int(r.r_regionkey), text(r.r_name), text(r.r_comment)]),
        ),
        Table::Nation => Box::new(NationGenerator::new(sf, part, parts).iter().map(|n| {
            vec![
                int(n.n_nationkey),
                text(n.n_name),
                int(n.n_regionkey),
                text(n.n_comment),
            ]
        })),
        Table::Supplier => Box::new(SupplierGenerator::new(sf, part, parts).iter().map(|s| {
            vec![
                int(s.s_suppkey),
                text(s.s_name),
                text(s.s_address),
                int(s.s_nationkey),
                text(s.s_phone),
                decimal(s.s_acctbal),
                Value::Text(s.s_comment),
            ]
        })),
        Table::Part => Box::new(PartGenerator::new(sf, part, parts).iter().map(|p| {
            vec![
                int(p.p_partkey),
                text(p.p_name),
                text(p.p_mfgr),
                text(p.p_brand),
                text(p.p_type),
                int(p.p_size),
                text(p.p_container),
                decimal(p.p_retailprice),
                text(p.p_comment),
            ]
        })),
        Table::PartSupp => Box::new(PartSuppGenerator::new(sf, part, parts).iter().map(|ps| {
            vec![
                int(ps.ps_partkey),
                int(ps.ps_suppkey),
                int(ps.ps_availqty),
                decimal(ps.ps_supplycost),
                text(ps.ps_comment),
            ]
        })),
        Table::Customer => Box::new(CustomerGenerator::new(sf, part, parts).iter().map(|c| {
            vec![
                int(c.c_custkey),
                text(c.c_name),
                text(c.c_address),
                int(c.c_nationkey),
                text(c.c_phone),
                decimal(c.c_acctbal),
                text(c.c_mktsegment),
                text(c.c_comment),
            ]
        })),
        Table::Orders => Box::new(OrderGenerator::new(sf, part, parts).iter().map(|o| {
            vec![
                int(o.o_orderkey),
                int(o.o_custkey),
                text(o.o_orderstatus),
                decimal(o.o_totalprice),
                text(o.o_orderdate),
                text(o.o_orderpriority),
                text(o.o_clerk),
                int(o.o_shippriority),
                text(o.o_comment),
            ]
        })),
        Table::LineItem => Box::new(LineItemGenerator::new(sf, part, parts).iter().map(|l| {
            vec![
                int(l.l_orderkey),
                int(l.l_partkey),
                int(l.l_suppkey),
                int(l.l_linenumber),
                int(l.l_quantity),
                decimal(l.l_extendedprice),
                decimal(l.l_discount),
                decimal(l.l_tax),
                text(l.l_returnflag),
                text(l.l_linestatus),
                text(l.l_shipdate),
                text(l.l_commitdate),
                text(l.l_receiptdate),
                text(l.l_shipinstruct),
                text(l.l_shipmode),
                text(l.l_comment),
            ]
        })),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_generator_makes_the_rows_expected_at_sf_001_in_every_part() {
        let sf = 0.01;
        let want = [5, 25, 100, 2_000, 8_000, 1_500, 15_000, 60_175];
        for (table, want) in Table::ALL.into_iter().zip(want) {
            assert_eq!(expected_rows(table, sf), want, "{table:?}");
            let generated: usize = (1..=3)
                .map(|part| rows(table, sf, part, 3).count())
                .sum::<usize>();
            let parts = if matches!(table, Table::Region | Table::Nation) {
                3 * want as usize // these ignore the part and make the whole table
            } else {
                want as usize
            };
            assert_eq!(generated, parts, "{table:?}");
        }
    }

    #[test]
    fn rows_have_one_value_per_column_and_exact_decimals() {
        for table in Table::ALL {
            let row = rows(table, 0.01, 1, 1).next().unwrap();
            assert_eq!(row.len(), table.columns().len(), "{table:?}");
        }
        // dbgen's first line item: 1|155190|7706|1|17|21168.23|0.04|0.02|N|O|1996-03-13|...
        let first = rows(Table::LineItem, 1.0, 1, 1).next().unwrap();
        assert_eq!(
            first[0..5],
            [int(1), int(155_190), int(7_706), int(1), int(17)]
        );
        assert_eq!(first[5], Value::Float(21168.23));
        assert_eq!(first[10], text("1996-03-13"));
    }

    #[test]
    fn big_tables_are_cut_into_parts_small_ones_are_not() {
        assert_eq!(parts(Table::Nation, 1.0), 1);
        assert_eq!(parts(Table::LineItem, 0.01), 1);
        assert_eq!(parts(Table::LineItem, 1.0), 30);
        assert_eq!(parts(Table::PartSupp, 1.0), 4);
        assert_eq!(parts(Table::Customer, 1.0), 1);
    }
}
