-- Kept user and role lists depend on users (every listed column, and a
-- deleted user leaves the role counts). Logins write last_login_at and with
-- it updated_at, which the user list shows: every update bumps.
CREATE TRIGGER users_read_version AFTER INSERT OR UPDATE OR DELETE ON users
    FOR EACH STATEMENT EXECUTE FUNCTION stoa_bump_read_version('auth.users');
CREATE TRIGGER users_read_version_truncate AFTER TRUNCATE ON users
    FOR EACH STATEMENT EXECUTE FUNCTION stoa_bump_read_version('auth.users');
