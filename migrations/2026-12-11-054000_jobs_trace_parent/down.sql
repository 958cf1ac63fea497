ALTER TABLE job_queue DROP COLUMN trace_parent;
