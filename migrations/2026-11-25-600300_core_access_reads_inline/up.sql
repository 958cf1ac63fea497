-- A read of a 50-record page is a ~3 KB row (50 ids as text, 50 entry ids).
-- Past 2 KB Postgres tries to compress the arrays on every insert, which
-- fails on random ids and only costs time (6% of the insert measured);
-- rows up to 8 KB (a 100-record page) stay inline and uncompressed.
ALTER TABLE access_reads SET (toast_tuple_target = 8160);
