-- TPC-C's five transactions as PL/pgSQL functions, one call per transaction, as HammerDB runs
-- them on PostgreSQL (docs/tpcc.md). They do what the client-side SQL of
-- crates/db/src/tpcc/transactions/ does, statement for statement where it matters: money in
-- cents, rates in basis points, dates in microseconds since the Unix epoch (given by the client).
-- Variables are v_*, parameters p_*: no column starts so, so none is ambiguous.
-- Serialization failures and deadlocks are not caught: they reach the client, which retries.

-- A row a transaction needs is missing: the database is not the one loaded.
CREATE OR REPLACE FUNCTION tpcc_missing(p_what text) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION '%: the TPC-C database does not hold it (loaded with fewer warehouses, or changed?); load it again', p_what;
END $$;

-- The customer named p_last in the district: the one at position n/2 rounded up of those so
-- named, in order of first name (clause 2.5.2.2).
CREATE OR REPLACE FUNCTION tpcc_customer_by_name(p_w_id bigint, p_d_id bigint, p_last text)
RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
    v_ids bigint[];
BEGIN
    SELECT array_agg(c_id ORDER BY c_first) INTO v_ids FROM customer
     WHERE c_w_id = p_w_id AND c_d_id = p_d_id AND c_last = p_last;
    IF v_ids IS NULL THEN
        PERFORM tpcc_missing(format('customer named %s in warehouse %s district %s',
                                    p_last, p_w_id, p_d_id));
    END IF;
    RETURN v_ids[(cardinality(v_ids) + 1) / 2];
END $$;

-- New-Order (clause 2.4): line n is item p_items[n] from warehouse p_supply[n], quantity
-- p_quantities[n]. An item that does not exist raises SQLSTATE TPC01: the statement, and with
-- it the transaction, is rolled back, and the client counts a rolled-back New-Order.
-- Returns the order number.
CREATE OR REPLACE FUNCTION neword(p_w_id bigint, p_d_id bigint, p_c_id bigint,
                                  p_items bigint[], p_supply bigint[], p_quantities bigint[],
                                  p_now bigint)
RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
    v_w_tax bigint;
    v_d_tax bigint;
    v_o_id bigint;
    v_discount bigint;
    v_last text;
    v_credit text;
    v_price bigint;
    v_name text;
    v_data text;
    v_quantity bigint;
    v_dist text;
    v_s_data text;
    v_lines int := cardinality(p_items);
BEGIN
    SELECT w_tax INTO v_w_tax FROM warehouse WHERE w_id = p_w_id;
    IF NOT FOUND THEN
        PERFORM tpcc_missing(format('warehouse %s', p_w_id));
    END IF;
    UPDATE district SET d_next_o_id = d_next_o_id + 1 WHERE d_w_id = p_w_id AND d_id = p_d_id
    RETURNING d_tax, d_next_o_id - 1 INTO v_d_tax, v_o_id;
    IF NOT FOUND THEN
        PERFORM tpcc_missing(format('district %s of warehouse %s', p_d_id, p_w_id));
    END IF;
    SELECT c_discount, c_last, c_credit INTO v_discount, v_last, v_credit FROM customer
     WHERE c_w_id = p_w_id AND c_d_id = p_d_id AND c_id = p_c_id;
    IF NOT FOUND THEN
        PERFORM tpcc_missing(format('customer %s of warehouse %s district %s',
                                    p_c_id, p_w_id, p_d_id));
    END IF;
    INSERT INTO orders (o_id, o_d_id, o_w_id, o_c_id, o_entry_d, o_carrier_id, o_ol_cnt,
                        o_all_local)
    VALUES (v_o_id, p_d_id, p_w_id, p_c_id, p_now, NULL, v_lines,
            CASE WHEN p_w_id = ALL (p_supply) THEN 1 ELSE 0 END);
    INSERT INTO new_order (no_o_id, no_d_id, no_w_id) VALUES (v_o_id, p_d_id, p_w_id);
    FOR v_n IN 1 .. v_lines LOOP
        SELECT i_price, i_name, i_data INTO v_price, v_name, v_data FROM item
         WHERE i_id = p_items[v_n];
        IF NOT FOUND THEN
            RAISE EXCEPTION 'New-Order: item % does not exist (TPC-C rolls back 1 %% of New-Orders so)',
                p_items[v_n] USING ERRCODE = 'TPC01';
        END IF;
        v_quantity := p_quantities[v_n];
        UPDATE stock SET s_quantity = CASE WHEN s_quantity >= v_quantity + 10
                                           THEN s_quantity - v_quantity
                                           ELSE s_quantity - v_quantity + 91 END,
               s_ytd = s_ytd + v_quantity, s_order_cnt = s_order_cnt + 1,
               s_remote_cnt = s_remote_cnt + CASE WHEN p_supply[v_n] = p_w_id THEN 0 ELSE 1 END
         WHERE s_w_id = p_supply[v_n] AND s_i_id = p_items[v_n]
        RETURNING CASE p_d_id WHEN 1 THEN s_dist_01 WHEN 2 THEN s_dist_02 WHEN 3 THEN s_dist_03
                              WHEN 4 THEN s_dist_04 WHEN 5 THEN s_dist_05 WHEN 6 THEN s_dist_06
                              WHEN 7 THEN s_dist_07 WHEN 8 THEN s_dist_08 WHEN 9 THEN s_dist_09
                              ELSE s_dist_10 END,
                  s_data
             INTO v_dist, v_s_data;
        IF NOT FOUND THEN
            PERFORM tpcc_missing(format('stock of item %s in warehouse %s',
                                        p_items[v_n], p_supply[v_n]));
        END IF;
        INSERT INTO order_line (ol_o_id, ol_d_id, ol_w_id, ol_number, ol_i_id, ol_supply_w_id,
                                ol_delivery_d, ol_quantity, ol_amount, ol_dist_info)
        VALUES (v_o_id, p_d_id, p_w_id, v_n, p_items[v_n], p_supply[v_n], NULL, v_quantity,
                v_quantity * v_price, v_dist);
    END LOOP;
    RETURN v_o_id;
END $$;

-- Payment (clause 2.5): the customer by number (p_c_id) or, if p_c_last is not null, by last
-- name. A bad-credit customer's C_DATA gets the payment in front, kept to 500 characters.
-- Returns the customer's number.
CREATE OR REPLACE FUNCTION payment(p_w_id bigint, p_d_id bigint, p_c_w_id bigint,
                                   p_c_d_id bigint, p_c_id bigint, p_c_last text,
                                   p_amount bigint, p_now bigint)
RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
    v_w record;
    v_d record;
    v_c record;
    v_c_id bigint := p_c_id;
BEGIN
    UPDATE warehouse SET w_ytd = w_ytd + p_amount WHERE w_id = p_w_id
    RETURNING w_name, w_street_1, w_street_2, w_city, w_state, w_zip INTO v_w;
    IF NOT FOUND THEN
        PERFORM tpcc_missing(format('warehouse %s', p_w_id));
    END IF;
    UPDATE district SET d_ytd = d_ytd + p_amount WHERE d_w_id = p_w_id AND d_id = p_d_id
    RETURNING d_name, d_street_1, d_street_2, d_city, d_state, d_zip INTO v_d;
    IF NOT FOUND THEN
        PERFORM tpcc_missing(format('district %s of warehouse %s', p_d_id, p_w_id));
    END IF;
    IF p_c_last IS NOT NULL THEN
        v_c_id := tpcc_customer_by_name(p_c_w_id, p_c_d_id, p_c_last);
    END IF;
    UPDATE customer SET c_balance = c_balance - p_amount,
           c_ytd_payment = c_ytd_payment + p_amount, c_payment_cnt = c_payment_cnt + 1,
           c_data = CASE WHEN c_credit = 'BC'
                         THEN substr(format('%s %s %s %s %s %s | ', v_c_id, p_c_d_id, p_c_w_id,
                                            p_d_id, p_w_id, p_amount) || c_data, 1, 500)
                         ELSE c_data END
     WHERE c_w_id = p_c_w_id AND c_d_id = p_c_d_id AND c_id = v_c_id
    RETURNING c_first, c_middle, c_last, c_street_1, c_street_2, c_city, c_state, c_zip,
              c_phone, c_since, c_credit, c_credit_lim, c_discount, c_balance INTO v_c;
    IF NOT FOUND THEN
        PERFORM tpcc_missing(format('customer %s of warehouse %s district %s',
                                    v_c_id, p_c_w_id, p_c_d_id));
    END IF;
    INSERT INTO history (h_c_id, h_c_d_id, h_c_w_id, h_d_id, h_w_id, h_date, h_amount, h_data)
    VALUES (v_c_id, p_c_d_id, p_c_w_id, p_d_id, p_w_id, p_now, p_amount,
            substr(v_w.w_name || '    ' || v_d.d_name, 1, 24));
    RETURN v_c_id;
END $$;

-- Order-Status (clause 2.6): the customer (by number, or by last name if p_c_last is not
-- null), their latest order and its lines. Returns the lines read (0: no order).
CREATE OR REPLACE FUNCTION ostat(p_w_id bigint, p_d_id bigint, p_c_id bigint, p_c_last text)
RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
    v_c_id bigint := p_c_id;
    v_c record;
    v_o record;
    v_line record;
    v_lines bigint := 0;
BEGIN
    IF p_c_last IS NOT NULL THEN
        v_c_id := tpcc_customer_by_name(p_w_id, p_d_id, p_c_last);
    END IF;
    SELECT c_balance, c_first, c_middle, c_last INTO v_c FROM customer
     WHERE c_w_id = p_w_id AND c_d_id = p_d_id AND c_id = v_c_id;
    IF NOT FOUND THEN
        PERFORM tpcc_missing(format('customer %s of warehouse %s district %s',
                                    v_c_id, p_w_id, p_d_id));
    END IF;
    SELECT o_id, o_entry_d, o_carrier_id INTO v_o FROM orders
     WHERE o_w_id = p_w_id AND o_d_id = p_d_id AND o_c_id = v_c_id ORDER BY o_id DESC LIMIT 1;
    IF NOT FOUND THEN
        RETURN 0;
    END IF;
    FOR v_line IN SELECT ol_i_id, ol_supply_w_id, ol_quantity, ol_amount, ol_delivery_d
                    FROM order_line
                   WHERE ol_w_id = p_w_id AND ol_d_id = p_d_id AND ol_o_id = v_o.o_id LOOP
        v_lines := v_lines + 1;
    END LOOP;
    RETURN v_lines;
END $$;

-- Delivery (clause 2.7): the oldest undelivered order of each of the warehouse's 10 districts
-- (a district without one, or whose oldest another terminal took meanwhile, is skipped), in
-- the caller's one transaction. Returns the orders delivered.
CREATE OR REPLACE FUNCTION delivery(p_w_id bigint, p_carrier_id bigint, p_now bigint)
RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
    v_o_id bigint;
    v_c_id bigint;
    v_total bigint;
    v_delivered bigint := 0;
BEGIN
    FOR v_d IN 1 .. 10 LOOP
        SELECT no_o_id INTO v_o_id FROM new_order WHERE no_w_id = p_w_id AND no_d_id = v_d
         ORDER BY no_o_id LIMIT 1;
        CONTINUE WHEN NOT FOUND;
        DELETE FROM new_order WHERE no_w_id = p_w_id AND no_d_id = v_d AND no_o_id = v_o_id;
        CONTINUE WHEN NOT FOUND;
        UPDATE orders SET o_carrier_id = p_carrier_id
         WHERE o_w_id = p_w_id AND o_d_id = v_d AND o_id = v_o_id
        RETURNING o_c_id INTO v_c_id;
        IF NOT FOUND THEN
            PERFORM tpcc_missing(format('order %s of warehouse %s district %s',
                                        v_o_id, p_w_id, v_d));
        END IF;
        WITH delivered AS (
            UPDATE order_line SET ol_delivery_d = p_now
             WHERE ol_w_id = p_w_id AND ol_d_id = v_d AND ol_o_id = v_o_id
            RETURNING ol_amount)
        SELECT CAST(coalesce(sum(ol_amount), 0) AS bigint) INTO v_total FROM delivered;
        UPDATE customer SET c_balance = c_balance + v_total,
               c_delivery_cnt = c_delivery_cnt + 1
         WHERE c_w_id = p_w_id AND c_d_id = v_d AND c_id = v_c_id;
        v_delivered := v_delivered + 1;
    END LOOP;
    RETURN v_delivered;
END $$;

-- Stock-Level (clause 2.8): the distinct items of the district's last 20 orders whose stock
-- is below p_threshold.
CREATE OR REPLACE FUNCTION slev(p_w_id bigint, p_d_id bigint, p_threshold bigint)
RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
    v_next bigint;
    v_low bigint;
BEGIN
    SELECT d_next_o_id INTO v_next FROM district WHERE d_w_id = p_w_id AND d_id = p_d_id;
    IF NOT FOUND THEN
        PERFORM tpcc_missing(format('district %s of warehouse %s', p_d_id, p_w_id));
    END IF;
    SELECT count(DISTINCT s_i_id) INTO v_low FROM order_line, stock
     WHERE ol_w_id = p_w_id AND ol_d_id = p_d_id AND ol_o_id < v_next AND ol_o_id >= v_next - 20
       AND s_w_id = p_w_id AND s_i_id = ol_i_id AND s_quantity < p_threshold;
    RETURN v_low;
END $$;
