# shellcheck shell=bash
# Case 9: TPC-C on MariaDB on tmpfs, 4 warehouses, 8 terminals on this machine's CPUs (issue
# 21): case 7 (`tpcc_case` in tpcc.sh) on MariaDB. The client must not be what is measured (its
# share of the busy CPU <= 15 %), and the load of 4 warehouses takes <= 120 s. The same run with
# the transactions sent statement by statement (procedures=false) is shown beside it.

case_tpccmy() {
    tpcc_case mariadb "9 tpcc mariadb tmpfs" 120
}
