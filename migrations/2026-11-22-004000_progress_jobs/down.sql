DROP TABLE IF EXISTS progress_jobs;
