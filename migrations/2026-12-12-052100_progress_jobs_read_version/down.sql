DROP TRIGGER progress_jobs_read_version_delete ON progress_jobs;
DROP TRIGGER progress_jobs_read_version_update ON progress_jobs;
DROP TRIGGER progress_jobs_read_version_insert ON progress_jobs;
DELETE FROM read_versions WHERE name = 'progress.jobs' OR starts_with(name, 'progress.jobs@');
