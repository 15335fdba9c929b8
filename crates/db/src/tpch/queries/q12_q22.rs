//! Queries 12 to 22 (clauses 2.4.12 to 2.4.22) with their validation parameters.

use super::Writer;

/// Shipping Modes and Order Priority: SHIPMODE1 = MAIL, SHIPMODE2 = SHIP, DATE = 1994-01-01.
pub(super) fn q12(d: &Writer) -> String {
    format!(
        "SELECT l_shipmode,
            sum(CASE WHEN o_orderpriority = '1-URGENT' OR o_orderpriority = '2-HIGH'
                THEN 1 ELSE 0 END) AS high_line_count,
            sum(CASE WHEN o_orderpriority <> '1-URGENT' AND o_orderpriority <> '2-HIGH'
                THEN 1 ELSE 0 END) AS low_line_count
        FROM orders, lineitem
        WHERE o_orderkey = l_orderkey AND l_shipmode IN ('MAIL', 'SHIP')
            AND l_commitdate < l_receiptdate AND l_shipdate < l_commitdate
            AND l_receiptdate >= {} AND l_receiptdate < {}
        GROUP BY l_shipmode
        ORDER BY l_shipmode",
        d.date("1994-01-01"),
        d.shift("1994-01-01", 1, "year")
    )
}

/// Customer Distribution: WORD1 = special, WORD2 = requests. (The derived table's columns are
/// named inside it: SQLite takes no column list after a subquery's alias.)
pub(super) fn q13(_: &Writer) -> String {
    "SELECT c_count, count(*) AS custdist
    FROM (
        SELECT c_custkey, count(o_orderkey) AS c_count
        FROM customer LEFT OUTER JOIN orders
            ON c_custkey = o_custkey AND o_comment NOT LIKE '%special%requests%'
        GROUP BY c_custkey
    ) AS c_orders
    GROUP BY c_count
    ORDER BY custdist DESC, c_count DESC"
        .into()
}

/// Promotion Effect: DATE = 1995-09-01.
pub(super) fn q14(d: &Writer) -> String {
    format!(
        "SELECT 100.00 * sum(CASE WHEN p_type LIKE 'PROMO%'
                THEN l_extendedprice * (1 - l_discount) ELSE 0 END)
            / sum(l_extendedprice * (1 - l_discount)) AS promo_revenue
        FROM lineitem, part
        WHERE l_partkey = p_partkey AND l_shipdate >= {} AND l_shipdate < {}",
        d.date("1995-09-01"),
        d.shift("1995-09-01", 1, "month")
    )
}

/// Top Supplier: DATE = 1996-01-01. The view `revenue0` is a common table expression (clause
/// 2.2.3.3 allows it), so the query needs no DDL and leaves nothing behind.
pub(super) fn q15(d: &Writer) -> String {
    format!(
        "WITH revenue0 AS (
            SELECT l_suppkey AS supplier_no,
                sum(l_extendedprice * (1 - l_discount)) AS total_revenue
            FROM lineitem
            WHERE l_shipdate >= {} AND l_shipdate < {}
            GROUP BY l_suppkey)
        SELECT s_suppkey, s_name, s_address, s_phone, total_revenue
        FROM supplier, revenue0
        WHERE s_suppkey = supplier_no
            AND total_revenue = (SELECT max(total_revenue) FROM revenue0)
        ORDER BY s_suppkey",
        d.date("1996-01-01"),
        d.shift("1996-01-01", 3, "month")
    )
}

/// Parts/Supplier Relationship: BRAND = Brand#45, TYPE = MEDIUM POLISHED, SIZE1 to SIZE8 =
/// 49, 14, 23, 45, 19, 3, 36, 9.
pub(super) fn q16(_: &Writer) -> String {
    "SELECT p_brand, p_type, p_size, count(DISTINCT ps_suppkey) AS supplier_cnt
    FROM partsupp, part
    WHERE p_partkey = ps_partkey AND p_brand <> 'Brand#45'
        AND p_type NOT LIKE 'MEDIUM POLISHED%'
        AND p_size IN (49, 14, 23, 45, 19, 3, 36, 9)
        AND ps_suppkey NOT IN (
            SELECT s_suppkey FROM supplier WHERE s_comment LIKE '%Customer%Complaints%')
    GROUP BY p_brand, p_type, p_size
    ORDER BY supplier_cnt DESC, p_brand, p_type, p_size"
        .into()
}

/// Small-Quantity-Order Revenue: BRAND = Brand#23, CONTAINER = MED BOX.
pub(super) fn q17(_: &Writer) -> String {
    "SELECT sum(l_extendedprice) / 7.0 AS avg_yearly
    FROM lineitem, part
    WHERE p_partkey = l_partkey AND p_brand = 'Brand#23' AND p_container = 'MED BOX'
        AND l_quantity < (
            SELECT 0.2 * avg(l_quantity) FROM lineitem WHERE l_partkey = p_partkey)"
        .into()
}

/// Large Volume Customer: QUANTITY = 300.
pub(super) fn q18(_: &Writer) -> String {
    "SELECT c_name, c_custkey, o_orderkey, o_orderdate, o_totalprice, sum(l_quantity)
    FROM customer, orders, lineitem
    WHERE o_orderkey IN (
            SELECT l_orderkey FROM lineitem
            GROUP BY l_orderkey HAVING sum(l_quantity) > 300)
        AND c_custkey = o_custkey AND o_orderkey = l_orderkey
    GROUP BY c_name, c_custkey, o_orderkey, o_orderdate, o_totalprice
    ORDER BY o_totalprice DESC, o_orderdate
    LIMIT 100"
        .into()
}

/// Discounted Revenue: QUANTITY1 = 1, QUANTITY2 = 10, QUANTITY3 = 20, BRAND1 = Brand#12,
/// BRAND2 = Brand#23, BRAND3 = Brand#34.
pub(super) fn q19(_: &Writer) -> String {
    let branch = |brand: &str, size: &str, containers: &str, quantity: u32| {
        format!(
            "(p_partkey = l_partkey AND p_brand = '{brand}'
                AND p_container IN ({containers})
                AND l_quantity >= {quantity} AND l_quantity <= {quantity} + 10
                AND p_size BETWEEN 1 AND {size}
                AND l_shipmode IN ('AIR', 'AIR REG')
                AND l_shipinstruct = 'DELIVER IN PERSON')"
        )
    };
    format!(
        "SELECT sum(l_extendedprice * (1 - l_discount)) AS revenue
        FROM lineitem, part
        WHERE {}
            OR {}
            OR {}",
        branch(
            "Brand#12",
            "5",
            "'SM CASE', 'SM BOX', 'SM PACK', 'SM PKG'",
            1
        ),
        branch(
            "Brand#23",
            "10",
            "'MED BAG', 'MED BOX', 'MED PKG', 'MED PACK'",
            10
        ),
        branch(
            "Brand#34",
            "15",
            "'LG CASE', 'LG BOX', 'LG PACK', 'LG PKG'",
            20
        )
    )
}

/// Potential Part Promotion: COLOR = forest, DATE = 1994-01-01, NATION = CANADA.
pub(super) fn q20(d: &Writer) -> String {
    format!(
        "SELECT s_name, s_address
        FROM supplier, nation
        WHERE s_suppkey IN (
                SELECT ps_suppkey FROM partsupp
                WHERE ps_partkey IN (SELECT p_partkey FROM part WHERE p_name LIKE 'forest%')
                    AND ps_availqty > (
                        SELECT 0.5 * sum(l_quantity) FROM lineitem
                        WHERE l_partkey = ps_partkey AND l_suppkey = ps_suppkey
                            AND l_shipdate >= {} AND l_shipdate < {}))
            AND s_nationkey = n_nationkey AND n_name = 'CANADA'
        ORDER BY s_name",
        d.date("1994-01-01"),
        d.shift("1994-01-01", 1, "year")
    )
}

/// Suppliers Who Kept Orders Waiting: NATION = SAUDI ARABIA.
pub(super) fn q21(_: &Writer) -> String {
    "SELECT s_name, count(*) AS numwait
    FROM supplier, lineitem l1, orders, nation
    WHERE s_suppkey = l1.l_suppkey AND o_orderkey = l1.l_orderkey AND o_orderstatus = 'F'
        AND l1.l_receiptdate > l1.l_commitdate
        AND EXISTS (
            SELECT * FROM lineitem l2
            WHERE l2.l_orderkey = l1.l_orderkey AND l2.l_suppkey <> l1.l_suppkey)
        AND NOT EXISTS (
            SELECT * FROM lineitem l3
            WHERE l3.l_orderkey = l1.l_orderkey AND l3.l_suppkey <> l1.l_suppkey
                AND l3.l_receiptdate > l3.l_commitdate)
        AND s_nationkey = n_nationkey AND n_name = 'SAUDI ARABIA'
    GROUP BY s_name
    ORDER BY numwait DESC, s_name
    LIMIT 100"
        .into()
}

/// Global Sales Opportunity: I1 to I7 = 13, 31, 23, 29, 30, 18, 17. (`substr` is the
/// spec's `substring(c_phone from 1 for 2)` in a form both databases take.)
pub(super) fn q22(_: &Writer) -> String {
    let codes = "('13', '31', '23', '29', '30', '18', '17')";
    format!(
        "SELECT cntrycode, count(*) AS numcust, sum(c_acctbal) AS totacctbal
        FROM (
            SELECT substr(c_phone, 1, 2) AS cntrycode, c_acctbal
            FROM customer
            WHERE substr(c_phone, 1, 2) IN {codes}
                AND c_acctbal > (
                    SELECT avg(c_acctbal) FROM customer
                    WHERE c_acctbal > 0.00 AND substr(c_phone, 1, 2) IN {codes})
                AND NOT EXISTS (SELECT * FROM orders WHERE o_custkey = c_custkey)
        ) AS custsale
        GROUP BY cntrycode
        ORDER BY cntrycode"
    )
}
