-- Statistics for the deals list's value range filter, which compares
-- `(value_amount * 10000)::bigint` (stoa_core::money::Money::e4_sql).
--
-- Why not `value_amount` itself: under row-level security the planner
-- withholds column statistics from operators that are not leakproof, and
-- numeric's comparisons are not. A numeric range then got a default 0.5%
-- selectivity, the filtered list over 1M deals was planned for one row
-- (a bitmap of the whole stage and a sort: 165 ms instead of 4 ms).
-- bigint's comparisons are leakproof, and these statistics give the
-- expression a histogram.
CREATE STATISTICS customer_deals_value_e4 ON ((value_amount * 10000)::bigint)
    FROM customer_deals;
