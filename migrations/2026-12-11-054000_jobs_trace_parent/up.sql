-- The W3C `traceparent` of the request that queued a job, kept while traces
-- are exported (stoa_core::traces), so the worker's spans of the job join the
-- request's trace. NULL when traces were off; nothing reads it otherwise.
ALTER TABLE job_queue ADD COLUMN trace_parent text;
