-- TPC-C's five transactions as MariaDB stored procedures, one CALL per transaction, as HammerDB
-- runs them on MySQL and MariaDB (docs/tpcc.md). They do what procedures.sql does on PostgreSQL
-- and the client-side SQL of crates/db/src/tpcc/transactions/ does, statement for statement
-- where it matters: money in cents, rates in basis points, dates in microseconds since the Unix
-- epoch (given by the client). Variables are v_*, parameters p_*: no column starts so.
--
-- MariaDB has no UPDATE ... RETURNING: a row is updated (which locks it) and then read; the
-- transaction sees its own change. A CALL in autocommit would commit each statement on its
-- own, so each procedure is one transaction of its own (START TRANSACTION ... COMMIT) and ends
-- with one result set: a single number, as PostgreSQL's functions return one. On any error the
-- handler rolls the transaction back and raises the error again unchanged, so the client sees
-- deadlocks (1213) and lock-wait timeouts (1205) as from a statement and retries, and TPC-C's
-- deliberate New-Order rollback as SQLSTATE TPC01. (A lock-wait timeout undoes only its
-- statement in InnoDB: the ROLLBACK undoes the rest.)

-- A row a transaction needs is missing: the database is not the one loaded.
CREATE OR REPLACE PROCEDURE tpcc_missing(p_what varchar(200))
BEGIN
    DECLARE v_message varchar(400) DEFAULT CONCAT(p_what, ': the TPC-C database does not hold it (loaded with fewer warehouses, or changed?); load it again');
    SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = v_message;
END;

-- The customer named p_last in the district: the one at position n/2 rounded up of those so
-- named, in order of first name (clause 2.5.2.2).
CREATE OR REPLACE PROCEDURE tpcc_customer_by_name(p_w_id bigint, p_d_id bigint,
                                                  p_last varchar(16), OUT p_c_id bigint)
BEGIN
    DECLARE v_named bigint;
    DECLARE v_skip bigint;
    SELECT count(*) INTO v_named FROM customer
     WHERE c_w_id = p_w_id AND c_d_id = p_d_id AND c_last = p_last;
    IF v_named = 0 THEN
        CALL tpcc_missing(CONCAT('customer named ', p_last, ' in warehouse ', p_w_id,
                                 ' district ', p_d_id));
    END IF;
    SET v_skip = (v_named - 1) DIV 2;
    SELECT c_id INTO p_c_id FROM customer
     WHERE c_w_id = p_w_id AND c_d_id = p_d_id AND c_last = p_last
     ORDER BY c_first LIMIT v_skip, 1;
END;

-- New-Order (clause 2.4): line n is item p_items[n] from warehouse p_supply[n], quantity
-- p_quantities[n], each list a JSON array. An item that does not exist raises SQLSTATE TPC01
-- and the whole transaction is rolled back. Returns the order number.
CREATE OR REPLACE PROCEDURE neword(p_w_id bigint, p_d_id bigint, p_c_id bigint,
                                   p_items varchar(400), p_supply varchar(400),
                                   p_quantities varchar(400), p_now bigint)
BEGIN
    DECLARE v_found, v_n, v_lines int;
    DECLARE v_w_tax, v_d_tax, v_o_id, v_discount, v_all_local bigint;
    DECLARE v_item, v_supply, v_quantity, v_price bigint;
    DECLARE v_last varchar(16);
    DECLARE v_credit varchar(2);
    DECLARE v_name, v_dist varchar(24);
    DECLARE v_data, v_s_data varchar(50);
    DECLARE CONTINUE HANDLER FOR NOT FOUND SET v_found = 0;
    DECLARE EXIT HANDLER FOR SQLEXCEPTION BEGIN ROLLBACK; RESIGNAL; END;
    SET v_lines = JSON_LENGTH(p_items);
    START TRANSACTION;
    SET v_found = 1;
    SELECT w_tax INTO v_w_tax FROM warehouse WHERE w_id = p_w_id;
    IF NOT v_found THEN
        CALL tpcc_missing(CONCAT('warehouse ', p_w_id));
    END IF;
    UPDATE district SET d_next_o_id = d_next_o_id + 1 WHERE d_w_id = p_w_id AND d_id = p_d_id;
    SELECT d_tax, d_next_o_id - 1 INTO v_d_tax, v_o_id FROM district
     WHERE d_w_id = p_w_id AND d_id = p_d_id;
    IF NOT v_found THEN
        CALL tpcc_missing(CONCAT('district ', p_d_id, ' of warehouse ', p_w_id));
    END IF;
    SELECT c_discount, c_last, c_credit INTO v_discount, v_last, v_credit FROM customer
     WHERE c_w_id = p_w_id AND c_d_id = p_d_id AND c_id = p_c_id;
    IF NOT v_found THEN
        CALL tpcc_missing(CONCAT('customer ', p_c_id, ' of warehouse ', p_w_id,
                                 ' district ', p_d_id));
    END IF;
    SELECT IF(count(*) = 0, 1, 0) INTO v_all_local
      FROM JSON_TABLE(p_supply, '$[*]' COLUMNS (w bigint PATH '$')) AS s WHERE w <> p_w_id;
    INSERT INTO orders (o_id, o_d_id, o_w_id, o_c_id, o_entry_d, o_carrier_id, o_ol_cnt,
                        o_all_local)
    VALUES (v_o_id, p_d_id, p_w_id, p_c_id, p_now, NULL, v_lines, v_all_local);
    INSERT INTO new_order (no_o_id, no_d_id, no_w_id) VALUES (v_o_id, p_d_id, p_w_id);
    SET v_n = 0;
    WHILE v_n < v_lines DO
        SET v_item = JSON_VALUE(p_items, CONCAT('$[', v_n, ']'));
        SET v_supply = JSON_VALUE(p_supply, CONCAT('$[', v_n, ']'));
        SET v_quantity = JSON_VALUE(p_quantities, CONCAT('$[', v_n, ']'));
        SET v_n = v_n + 1;
        SELECT i_price, i_name, i_data INTO v_price, v_name, v_data FROM item
         WHERE i_id = v_item;
        IF NOT v_found THEN
            SIGNAL SQLSTATE 'TPC01' SET MESSAGE_TEXT =
                'New-Order: an item does not exist (TPC-C rolls back 1 % of New-Orders so)';
        END IF;
        UPDATE stock SET s_quantity = CASE WHEN s_quantity >= v_quantity + 10
                                           THEN s_quantity - v_quantity
                                           ELSE s_quantity - v_quantity + 91 END,
               s_ytd = s_ytd + v_quantity, s_order_cnt = s_order_cnt + 1,
               s_remote_cnt = s_remote_cnt + IF(v_supply = p_w_id, 0, 1)
         WHERE s_w_id = v_supply AND s_i_id = v_item;
        SELECT CASE p_d_id WHEN 1 THEN s_dist_01 WHEN 2 THEN s_dist_02 WHEN 3 THEN s_dist_03
                           WHEN 4 THEN s_dist_04 WHEN 5 THEN s_dist_05 WHEN 6 THEN s_dist_06
                           WHEN 7 THEN s_dist_07 WHEN 8 THEN s_dist_08 WHEN 9 THEN s_dist_09
                           ELSE s_dist_10 END,
               s_data
          INTO v_dist, v_s_data FROM stock WHERE s_w_id = v_supply AND s_i_id = v_item;
        IF NOT v_found THEN
            CALL tpcc_missing(CONCAT('stock of item ', v_item, ' in warehouse ', v_supply));
        END IF;
        INSERT INTO order_line (ol_o_id, ol_d_id, ol_w_id, ol_number, ol_i_id, ol_supply_w_id,
                                ol_delivery_d, ol_quantity, ol_amount, ol_dist_info)
        VALUES (v_o_id, p_d_id, p_w_id, v_n, v_item, v_supply, NULL, v_quantity,
                v_quantity * v_price, v_dist);
    END WHILE;
    COMMIT;
    SELECT v_o_id;
END;

-- Payment (clause 2.5): the customer by number (p_c_id) or, if p_c_last is not null, by last
-- name. A bad-credit customer's C_DATA gets the payment in front, kept to 500 characters.
-- Returns the customer's number.
CREATE OR REPLACE PROCEDURE payment(p_w_id bigint, p_d_id bigint, p_c_w_id bigint,
                                    p_c_d_id bigint, p_c_id bigint, p_c_last varchar(16),
                                    p_amount bigint, p_now bigint)
BEGIN
    DECLARE v_found int;
    DECLARE v_c_id bigint DEFAULT p_c_id;
    DECLARE v_w_name, v_d_name varchar(10);
    DECLARE v_w_street_1, v_w_street_2, v_w_city, v_d_street_1, v_d_street_2, v_d_city,
            v_c_street_1, v_c_street_2, v_c_city varchar(20);
    DECLARE v_w_state, v_d_state, v_c_state, v_c_middle, v_c_credit varchar(2);
    DECLARE v_w_zip, v_d_zip, v_c_zip varchar(9);
    DECLARE v_c_first, v_c_last, v_c_phone varchar(16);
    DECLARE v_c_since, v_c_credit_lim, v_c_discount, v_c_balance bigint;
    DECLARE CONTINUE HANDLER FOR NOT FOUND SET v_found = 0;
    DECLARE EXIT HANDLER FOR SQLEXCEPTION BEGIN ROLLBACK; RESIGNAL; END;
    START TRANSACTION;
    SET v_found = 1;
    UPDATE warehouse SET w_ytd = w_ytd + p_amount WHERE w_id = p_w_id;
    SELECT w_name, w_street_1, w_street_2, w_city, w_state, w_zip
      INTO v_w_name, v_w_street_1, v_w_street_2, v_w_city, v_w_state, v_w_zip
      FROM warehouse WHERE w_id = p_w_id;
    IF NOT v_found THEN
        CALL tpcc_missing(CONCAT('warehouse ', p_w_id));
    END IF;
    UPDATE district SET d_ytd = d_ytd + p_amount WHERE d_w_id = p_w_id AND d_id = p_d_id;
    SELECT d_name, d_street_1, d_street_2, d_city, d_state, d_zip
      INTO v_d_name, v_d_street_1, v_d_street_2, v_d_city, v_d_state, v_d_zip
      FROM district WHERE d_w_id = p_w_id AND d_id = p_d_id;
    IF NOT v_found THEN
        CALL tpcc_missing(CONCAT('district ', p_d_id, ' of warehouse ', p_w_id));
    END IF;
    IF p_c_last IS NOT NULL THEN
        CALL tpcc_customer_by_name(p_c_w_id, p_c_d_id, p_c_last, v_c_id);
    END IF;
    UPDATE customer SET c_balance = c_balance - p_amount,
           c_ytd_payment = c_ytd_payment + p_amount, c_payment_cnt = c_payment_cnt + 1,
           c_data = CASE WHEN c_credit = 'BC'
                         THEN SUBSTR(CONCAT(CONCAT_WS(' ', v_c_id, p_c_d_id, p_c_w_id, p_d_id,
                                                      p_w_id, p_amount, '| '), c_data), 1, 500)
                         ELSE c_data END
     WHERE c_w_id = p_c_w_id AND c_d_id = p_c_d_id AND c_id = v_c_id;
    SELECT c_first, c_middle, c_last, c_street_1, c_street_2, c_city, c_state, c_zip,
           c_phone, c_since, c_credit, c_credit_lim, c_discount, c_balance
      INTO v_c_first, v_c_middle, v_c_last, v_c_street_1, v_c_street_2, v_c_city, v_c_state,
           v_c_zip, v_c_phone, v_c_since, v_c_credit, v_c_credit_lim, v_c_discount, v_c_balance
      FROM customer WHERE c_w_id = p_c_w_id AND c_d_id = p_c_d_id AND c_id = v_c_id;
    IF NOT v_found THEN
        CALL tpcc_missing(CONCAT('customer ', v_c_id, ' of warehouse ', p_c_w_id,
                                 ' district ', p_c_d_id));
    END IF;
    INSERT INTO history (h_c_id, h_c_d_id, h_c_w_id, h_d_id, h_w_id, h_date, h_amount, h_data)
    VALUES (v_c_id, p_c_d_id, p_c_w_id, p_d_id, p_w_id, p_now, p_amount,
            SUBSTR(CONCAT(v_w_name, '    ', v_d_name), 1, 24));
    COMMIT;
    SELECT v_c_id;
END;

-- Order-Status (clause 2.6): the customer (by number, or by last name if p_c_last is not
-- null), their latest order and its lines. Returns the lines read (0: no order).
CREATE OR REPLACE PROCEDURE ostat(p_w_id bigint, p_d_id bigint, p_c_id bigint,
                                  p_c_last varchar(16))
BEGIN
    DECLARE v_found int;
    DECLARE v_c_id bigint DEFAULT p_c_id;
    DECLARE v_balance, v_o_id, v_entry_d, v_carrier_id bigint;
    DECLARE v_lines bigint DEFAULT 0;
    DECLARE v_first, v_last varchar(16);
    DECLARE v_middle varchar(2);
    DECLARE CONTINUE HANDLER FOR NOT FOUND SET v_found = 0;
    DECLARE EXIT HANDLER FOR SQLEXCEPTION BEGIN ROLLBACK; RESIGNAL; END;
    START TRANSACTION;
    IF p_c_last IS NOT NULL THEN
        CALL tpcc_customer_by_name(p_w_id, p_d_id, p_c_last, v_c_id);
    END IF;
    SET v_found = 1;
    SELECT c_balance, c_first, c_middle, c_last INTO v_balance, v_first, v_middle, v_last
      FROM customer WHERE c_w_id = p_w_id AND c_d_id = p_d_id AND c_id = v_c_id;
    IF NOT v_found THEN
        CALL tpcc_missing(CONCAT('customer ', v_c_id, ' of warehouse ', p_w_id,
                                 ' district ', p_d_id));
    END IF;
    SELECT o_id, o_entry_d, o_carrier_id INTO v_o_id, v_entry_d, v_carrier_id FROM orders
     WHERE o_w_id = p_w_id AND o_d_id = p_d_id AND o_c_id = v_c_id ORDER BY o_id DESC LIMIT 1;
    IF v_found THEN
        -- The lines are the clustered index's records: counting them reads what the
        -- client-side statement reads.
        SELECT count(*) INTO v_lines FROM order_line
         WHERE ol_w_id = p_w_id AND ol_d_id = p_d_id AND ol_o_id = v_o_id;
    END IF;
    COMMIT;
    SELECT v_lines;
END;

-- Delivery (clause 2.7): the oldest undelivered order of each of the warehouse's 10 districts
-- (a district without one, or whose oldest another terminal took meanwhile, is skipped), in
-- one transaction. Returns the orders delivered.
CREATE OR REPLACE PROCEDURE delivery(p_w_id bigint, p_carrier_id bigint, p_now bigint)
BEGIN
    DECLARE v_found int;
    DECLARE v_d bigint DEFAULT 1;
    DECLARE v_delivered bigint DEFAULT 0;
    DECLARE v_o_id, v_c_id, v_total, v_deleted bigint;
    DECLARE CONTINUE HANDLER FOR NOT FOUND SET v_found = 0;
    DECLARE EXIT HANDLER FOR SQLEXCEPTION BEGIN ROLLBACK; RESIGNAL; END;
    START TRANSACTION;
    WHILE v_d <= 10 DO
        SET v_found = 1;
        -- FOR UPDATE: the latest rows, not the snapshot, which after waiting for another
        -- Delivery would hold only orders it took (dialect.rs, latest_for_update).
        SELECT no_o_id INTO v_o_id FROM new_order WHERE no_w_id = p_w_id AND no_d_id = v_d
         ORDER BY no_o_id LIMIT 1 FOR UPDATE;
        SET v_deleted = 0;
        IF v_found THEN
            DELETE FROM new_order WHERE no_w_id = p_w_id AND no_d_id = v_d AND no_o_id = v_o_id;
            SET v_deleted = ROW_COUNT();
        END IF;
        IF v_deleted > 0 THEN
            UPDATE orders SET o_carrier_id = p_carrier_id
             WHERE o_w_id = p_w_id AND o_d_id = v_d AND o_id = v_o_id;
            SELECT o_c_id INTO v_c_id FROM orders
             WHERE o_w_id = p_w_id AND o_d_id = v_d AND o_id = v_o_id;
            IF NOT v_found THEN
                CALL tpcc_missing(CONCAT('order ', v_o_id, ' of warehouse ', p_w_id,
                                         ' district ', v_d));
            END IF;
            UPDATE order_line SET ol_delivery_d = p_now
             WHERE ol_w_id = p_w_id AND ol_d_id = v_d AND ol_o_id = v_o_id;
            SELECT CAST(coalesce(sum(ol_amount), 0) AS SIGNED) INTO v_total FROM order_line
             WHERE ol_w_id = p_w_id AND ol_d_id = v_d AND ol_o_id = v_o_id;
            UPDATE customer SET c_balance = c_balance + v_total,
                   c_delivery_cnt = c_delivery_cnt + 1
             WHERE c_w_id = p_w_id AND c_d_id = v_d AND c_id = v_c_id;
            SET v_delivered = v_delivered + 1;
        END IF;
        SET v_d = v_d + 1;
    END WHILE;
    COMMIT;
    SELECT v_delivered;
END;

-- Stock-Level (clause 2.8): the distinct items of the district's last 20 orders whose stock
-- is below p_threshold.
CREATE OR REPLACE PROCEDURE slev(p_w_id bigint, p_d_id bigint, p_threshold bigint)
BEGIN
    DECLARE v_found int DEFAULT 1;
    DECLARE v_next, v_low bigint;
    DECLARE CONTINUE HANDLER FOR NOT FOUND SET v_found = 0;
    DECLARE EXIT HANDLER FOR SQLEXCEPTION BEGIN ROLLBACK; RESIGNAL; END;
    START TRANSACTION;
    SELECT d_next_o_id INTO v_next FROM district WHERE d_w_id = p_w_id AND d_id = p_d_id;
    IF NOT v_found THEN
        CALL tpcc_missing(CONCAT('district ', p_d_id, ' of warehouse ', p_w_id));
    END IF;
    SELECT count(DISTINCT s_i_id) INTO v_low FROM order_line, stock
     WHERE ol_w_id = p_w_id AND ol_d_id = p_d_id AND ol_o_id < v_next AND ol_o_id >= v_next - 20
       AND s_w_id = p_w_id AND s_i_id = ol_i_id AND s_quantity < p_threshold;
    COMMIT;
    SELECT v_low;
END;
