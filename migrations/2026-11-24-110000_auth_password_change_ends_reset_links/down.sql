DROP TRIGGER IF EXISTS users_password_changed_invalidate_resets ON users;
DROP FUNCTION IF EXISTS auth_password_changed_invalidate_resets();
