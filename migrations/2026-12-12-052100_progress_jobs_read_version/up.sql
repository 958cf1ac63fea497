-- `progress.jobs` read versions per tenant (core_tenant_read_versions):
-- every write to a tenant's jobs (create, progress, finish, cancel) bumps its
-- version once per statement, so `GET /progress/jobs` keeps its answer
-- (read_cache) only while no job of the tenant changed.
CREATE TRIGGER progress_jobs_read_version_insert AFTER INSERT ON progress_jobs
    REFERENCING NEW TABLE AS stoa_new
    FOR EACH STATEMENT EXECUTE FUNCTION stoa_bump_tenant_read_version('progress.jobs');
CREATE TRIGGER progress_jobs_read_version_update AFTER UPDATE ON progress_jobs
    REFERENCING OLD TABLE AS stoa_old NEW TABLE AS stoa_new
    FOR EACH STATEMENT EXECUTE FUNCTION stoa_bump_tenant_read_version('progress.jobs');
CREATE TRIGGER progress_jobs_read_version_delete AFTER DELETE ON progress_jobs
    REFERENCING OLD TABLE AS stoa_old
    FOR EACH STATEMENT EXECUTE FUNCTION stoa_bump_tenant_read_version('progress.jobs');
