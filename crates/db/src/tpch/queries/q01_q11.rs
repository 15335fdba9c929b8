//! Queries 1 to 11 (clauses 2.4.1 to 2.4.11) with their validation parameters.

use super::Writer;

/// Pricing Summary Report: DELTA = 90.
pub(super) fn q1(d: &Writer) -> String {
    format!(
        "SELECT l_returnflag, l_linestatus,
            sum(l_quantity) AS sum_qty,
            sum(l_extendedprice) AS sum_base_price,
            sum(l_extendedprice * (1 - l_discount)) AS sum_disc_price,
            sum(l_extendedprice * (1 - l_discount) * (1 + l_tax)) AS sum_charge,
            avg(l_quantity) AS avg_qty,
            avg(l_extendedprice) AS avg_price,
            avg(l_discount) AS avg_disc,
            count(*) AS count_order
        FROM lineitem
        WHERE l_shipdate <= {}
        GROUP BY l_returnflag, l_linestatus
        ORDER BY l_returnflag, l_linestatus",
        d.shift("1998-12-01", -90, "day")
    )
}

/// Minimum Cost Supplier: SIZE = 15, TYPE = BRASS, REGION = EUROPE.
pub(super) fn q2(_: &Writer) -> String {
    "SELECT s_acctbal, s_name, n_name, p_partkey, p_mfgr, s_address, s_phone, s_comment
    FROM part, supplier, partsupp, nation, region
    WHERE p_partkey = ps_partkey AND s_suppkey = ps_suppkey
        AND p_size = 15 AND p_type LIKE '%BRASS'
        AND s_nationkey = n_nationkey AND n_regionkey = r_regionkey AND r_name = 'EUROPE'
        AND ps_supplycost = (
            SELECT min(ps_supplycost)
            FROM partsupp, supplier, nation, region
            WHERE p_partkey = ps_partkey AND s_suppkey = ps_suppkey
                AND s_nationkey = n_nationkey AND n_regionkey = r_regionkey
                AND r_name = 'EUROPE')
    ORDER BY s_acctbal DESC, n_name, s_name, p_partkey
    LIMIT 100"
        .into()
}

/// Shipping Priority: SEGMENT = BUILDING, DATE = 1995-03-15.
pub(super) fn q3(d: &Writer) -> String {
    let date = d.date("1995-03-15");
    format!(
        "SELECT l_orderkey, sum(l_extendedprice * (1 - l_discount)) AS revenue,
            o_orderdate, o_shippriority
        FROM customer, orders, lineitem
        WHERE c_mktsegment = 'BUILDING' AND c_custkey = o_custkey AND l_orderkey = o_orderkey
            AND o_orderdate < {date} AND l_shipdate > {date}
        GROUP BY l_orderkey, o_orderdate, o_shippriority
        ORDER BY revenue DESC, o_orderdate
        LIMIT 10"
    )
}

/// Order Priority Checking: DATE = 1993-07-01.
pub(super) fn q4(d: &Writer) -> String {
    format!(
        "SELECT o_orderpriority, count(*) AS order_count
        FROM orders
        WHERE o_orderdate >= {} AND o_orderdate < {}
            AND EXISTS (
                SELECT * FROM lineitem
                WHERE l_orderkey = o_orderkey AND l_commitdate < l_receiptdate)
        GROUP BY o_orderpriority
        ORDER BY o_orderpriority",
        d.date("1993-07-01"),
        d.shift("1993-07-01", 3, "month")
    )
}

/// Local Supplier Volume: REGION = ASIA, DATE = 1994-01-01.
pub(super) fn q5(d: &Writer) -> String {
    format!(
        "SELECT n_name, sum(l_extendedprice * (1 - l_discount)) AS revenue
        FROM customer, orders, lineitem, supplier, nation, region
        WHERE c_custkey = o_custkey AND l_orderkey = o_orderkey AND l_suppkey = s_suppkey
            AND c_nationkey = s_nationkey AND s_nationkey = n_nationkey
            AND n_regionkey = r_regionkey AND r_name = 'ASIA'
            AND o_orderdate >= {} AND o_orderdate < {}
        GROUP BY n_name
        ORDER BY revenue DESC",
        d.date("1994-01-01"),
        d.shift("1994-01-01", 1, "year")
    )
}

/// Forecasting Revenue Change: DATE = 1994-01-01, DISCOUNT = 0.06, QUANTITY = 24. The
/// discount's bounds (0.06 ± 0.01) are written out: in SQLite's doubles 0.06 + 0.01 is just
/// below 0.07 and would leave out the discounts of 0.07.
pub(super) fn q6(d: &Writer) -> String {
    format!(
        "SELECT sum(l_extendedprice * l_discount) AS revenue
        FROM lineitem
        WHERE l_shipdate >= {} AND l_shipdate < {}
            AND l_discount BETWEEN 0.05 AND 0.07 AND l_quantity < 24",
        d.date("1994-01-01"),
        d.shift("1994-01-01", 1, "year")
    )
}

/// Volume Shipping: NATION1 = FRANCE, NATION2 = GERMANY.
pub(super) fn q7(d: &Writer) -> String {
    format!(
        "SELECT supp_nation, cust_nation, l_year, sum(volume) AS revenue
        FROM (
            SELECT n1.n_name AS supp_nation, n2.n_name AS cust_nation,
                {} AS l_year, l_extendedprice * (1 - l_discount) AS volume
            FROM supplier, lineitem, orders, customer, nation n1, nation n2
            WHERE s_suppkey = l_suppkey AND o_orderkey = l_orderkey AND c_custkey = o_custkey
                AND s_nationkey = n1.n_nationkey AND c_nationkey = n2.n_nationkey
                AND ((n1.n_name = 'FRANCE' AND n2.n_name = 'GERMANY')
                    OR (n1.n_name = 'GERMANY' AND n2.n_name = 'FRANCE'))
                AND l_shipdate BETWEEN {} AND {}
        ) AS shipping
        GROUP BY supp_nation, cust_nation, l_year
        ORDER BY supp_nation, cust_nation, l_year",
        d.year("l_shipdate"),
        d.date("1995-01-01"),
        d.date("1996-12-31")
    )
}

/// National Market Share: NATION = BRAZIL, REGION = AMERICA, TYPE = ECONOMY ANODIZED STEEL.
pub(super) fn q8(d: &Writer) -> String {
    format!(
        "SELECT o_year,
            sum(CASE WHEN nation = 'BRAZIL' THEN volume ELSE 0 END) / sum(volume) AS mkt_share
        FROM (
            SELECT {} AS o_year, l_extendedprice * (1 - l_discount) AS volume,
                n2.n_name AS nation
            FROM part, supplier, lineitem, orders, customer, nation n1, nation n2, region
            WHERE p_partkey = l_partkey AND s_suppkey = l_suppkey AND l_orderkey = o_orderkey
                AND o_custkey = c_custkey AND c_nationkey = n1.n_nationkey
                AND n1.n_regionkey = r_regionkey AND r_name = 'AMERICA'
                AND s_nationkey = n2.n_nationkey
                AND o_orderdate BETWEEN {} AND {}
                AND p_type = 'ECONOMY ANODIZED STEEL'
        ) AS all_nations
        GROUP BY o_year
        ORDER BY o_year",
        d.year("o_orderdate"),
        d.date("1995-01-01"),
        d.date("1996-12-31")
    )
}

/// Product Type Profit Measure: COLOR = green.
pub(super) fn q9(d: &Writer) -> String {
    format!(
        "SELECT nation, o_year, sum(amount) AS sum_profit
        FROM (
            SELECT n_name AS nation, {} AS o_year,
                l_extendedprice * (1 - l_discount) - ps_supplycost * l_quantity AS amount
            FROM part, supplier, lineitem, partsupp, orders, nation
            WHERE s_suppkey = l_suppkey AND ps_suppkey = l_suppkey AND ps_partkey = l_partkey
                AND p_partkey = l_partkey AND o_orderkey = l_orderkey
                AND s_nationkey = n_nationkey AND p_name LIKE '%green%'
        ) AS profit
        GROUP BY nation, o_year
        ORDER BY nation, o_year DESC",
        d.year("o_orderdate")
    )
}

/// Returned Item Reporting: DATE = 1993-10-01.
pub(super) fn q10(d: &Writer) -> String {
    format!(
        "SELECT c_custkey, c_name, sum(l_extendedprice * (1 - l_discount)) AS revenue,
            c_acctbal, n_name, c_address, c_phone, c_comment
        FROM customer, orders, lineitem, nation
        WHERE c_custkey = o_custkey AND l_orderkey = o_orderkey
            AND o_orderdate >= {} AND o_orderdate < {}
            AND l_returnflag = 'R' AND c_nationkey = n_nationkey
        GROUP BY c_custkey, c_name, c_acctbal, c_phone, n_name, c_address, c_comment
        ORDER BY revenue DESC
        LIMIT 20",
        d.date("1993-10-01"),
        d.shift("1993-10-01", 3, "month")
    )
}

/// Important Stock Identification: NATION = GERMANY, FRACTION = 0.0001 / SF.
pub(super) fn q11(d: &Writer) -> String {
    format!(
        "SELECT ps_partkey, sum(ps_supplycost * ps_availqty) AS value
        FROM partsupp, supplier, nation
        WHERE ps_suppkey = s_suppkey AND s_nationkey = n_nationkey AND n_name = 'GERMANY'
        GROUP BY ps_partkey
        HAVING sum(ps_supplycost * ps_availqty) > (
            SELECT sum(ps_supplycost * ps_availqty) * {:.10}
            FROM partsupp, supplier, nation
            WHERE ps_suppkey = s_suppkey AND s_nationkey = n_nationkey AND n_name = 'GERMANY')
        ORDER BY value DESC",
        0.0001 / d.sf
    )
}
