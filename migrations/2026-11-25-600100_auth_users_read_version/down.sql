DROP TRIGGER users_read_version_truncate ON users;
DROP TRIGGER users_read_version ON users;
