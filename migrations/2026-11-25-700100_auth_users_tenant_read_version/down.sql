DROP TRIGGER users_read_version_delete ON users;
DROP TRIGGER users_read_version_update ON users;
DROP TRIGGER users_read_version_insert ON users;
CREATE TRIGGER users_read_version AFTER INSERT OR UPDATE OR DELETE ON users
    FOR EACH STATEMENT EXECUTE FUNCTION stoa_bump_read_version('auth.users');
