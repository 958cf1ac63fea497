-- The library's other two orders from an index (issue 52): sorted by file
-- name or size, a page of 10,000 files was a top-N sort of every row of the
-- tenant (11 ms of Postgres against 0.6 ms for the default order, which
-- attachments_library_tenant serves). The organization filter of a
-- restricted caller stays a filter on the ordered scan, as for that order.
CREATE INDEX attachments_library_name ON attachments (tenant_id, file_name, id);
CREATE INDEX attachments_library_size ON attachments (tenant_id, file_size, id);
