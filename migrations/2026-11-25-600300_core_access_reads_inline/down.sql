ALTER TABLE access_reads RESET (toast_tuple_target);
