-- A password change of any kind (reset confirmation, profile, an
-- administrator's edit, anything later) ends every reset or invitation link
-- the user still holds: an older link must not open the account after a newer
-- password.
CREATE FUNCTION auth_password_changed_invalidate_resets() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    UPDATE password_resets SET used_at = now()
    WHERE user_id = NEW.id AND used_at IS NULL;
    RETURN NULL;
END;
$$;

CREATE TRIGGER users_password_changed_invalidate_resets
AFTER UPDATE OF password_hash ON users
FOR EACH ROW
WHEN (OLD.password_hash IS DISTINCT FROM NEW.password_hash)
EXECUTE FUNCTION auth_password_changed_invalidate_resets();
