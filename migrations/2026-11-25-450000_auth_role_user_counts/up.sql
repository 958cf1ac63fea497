-- Live users holding each role, maintained by triggers so the role list reads
-- a page's counts in O(page) instead of counting every membership per request.
-- A side table (not a column of `roles`): counter updates must not touch
-- `roles.updated_at` or bump the ACL version.
CREATE TABLE role_user_counts (
    role_id uuid PRIMARY KEY REFERENCES roles (id) ON DELETE CASCADE,
    users_count bigint NOT NULL DEFAULT 0
);

INSERT INTO role_user_counts (role_id, users_count)
SELECT r.id, (SELECT count(*) FROM user_roles ur JOIN users u ON u.id = ur.user_id
              WHERE ur.role_id = r.id AND u.deleted_at IS NULL)
FROM roles r;

-- Adds `delta` per role; a role without a row gets one.
CREATE FUNCTION stoa_role_user_counts_add(role_ids uuid[], deltas bigint[]) RETURNS void
LANGUAGE sql AS $$
    INSERT INTO role_user_counts AS c (role_id, users_count)
    SELECT d.role_id, d.delta FROM unnest(role_ids, deltas) AS d(role_id, delta)
    JOIN roles r ON r.id = d.role_id
    ORDER BY d.role_id
    ON CONFLICT (role_id) DO UPDATE SET users_count = c.users_count + EXCLUDED.users_count
$$;

CREATE FUNCTION stoa_role_user_counts_roles() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO role_user_counts (role_id) SELECT id FROM new_rows ON CONFLICT DO NOTHING;
    RETURN NULL;
END $$;
CREATE TRIGGER roles_user_counts AFTER INSERT ON roles
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT
    EXECUTE FUNCTION stoa_role_user_counts_roles();

-- Memberships of live users count; a membership removed together with its
-- user (hard delete) was already uncounted by users_role_counts_delete.
CREATE FUNCTION stoa_role_user_counts_added() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM stoa_role_user_counts_add(array_agg(role_id), array_agg(n)) FROM (
        SELECT m.role_id, count(*) AS n FROM new_rows m
        JOIN users u ON u.id = m.user_id AND u.deleted_at IS NULL GROUP BY m.role_id
    ) d HAVING count(*) > 0;
    RETURN NULL;
END $$;
CREATE FUNCTION stoa_role_user_counts_removed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM stoa_role_user_counts_add(array_agg(role_id), array_agg(-n)) FROM (
        SELECT m.role_id, count(*) AS n FROM old_rows m
        JOIN users u ON u.id = m.user_id AND u.deleted_at IS NULL GROUP BY m.role_id
    ) d HAVING count(*) > 0;
    RETURN NULL;
END $$;
CREATE FUNCTION stoa_role_user_counts_moved() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM stoa_role_user_counts_add(array_agg(role_id), array_agg(n)) FROM (
        SELECT m.role_id, sum(m.delta)::bigint AS n FROM (
            SELECT role_id, user_id, 1 AS delta FROM new_rows
            UNION ALL SELECT role_id, user_id, -1 FROM old_rows
        ) m JOIN users u ON u.id = m.user_id AND u.deleted_at IS NULL
        GROUP BY m.role_id HAVING sum(m.delta) <> 0
    ) d HAVING count(*) > 0;
    RETURN NULL;
END $$;
CREATE TRIGGER user_roles_counts_insert AFTER INSERT ON user_roles
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT
    EXECUTE FUNCTION stoa_role_user_counts_added();
CREATE TRIGGER user_roles_counts_delete AFTER DELETE ON user_roles
    REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT
    EXECUTE FUNCTION stoa_role_user_counts_removed();
CREATE TRIGGER user_roles_counts_update AFTER UPDATE ON user_roles
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT
    EXECUTE FUNCTION stoa_role_user_counts_moved();

-- A user's soft delete (or restore) removes (or adds) it from its roles' counts.
CREATE FUNCTION stoa_role_user_counts_users() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM stoa_role_user_counts_add(array_agg(role_id), array_agg(n)) FROM (
        SELECT ur.role_id,
               sum(CASE WHEN n.deleted_at IS NULL THEN 1 ELSE -1 END)::bigint AS n
        FROM old_rows o JOIN new_rows n ON n.id = o.id
        JOIN user_roles ur ON ur.user_id = n.id
        WHERE (o.deleted_at IS NULL) <> (n.deleted_at IS NULL)
        GROUP BY ur.role_id
    ) d HAVING count(*) > 0;
    RETURN NULL;
END $$;
CREATE TRIGGER users_role_counts_update AFTER UPDATE ON users
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT
    EXECUTE FUNCTION stoa_role_user_counts_users();

-- A live user's hard delete: uncount its memberships before the cascade
-- removes them (the membership trigger then no longer finds the user).
CREATE FUNCTION stoa_role_user_counts_user_gone() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF OLD.deleted_at IS NULL THEN
        PERFORM stoa_role_user_counts_add(array_agg(role_id), array_agg(-1::bigint))
        FROM user_roles WHERE user_id = OLD.id HAVING count(*) > 0;
    END IF;
    RETURN OLD;
END $$;
CREATE TRIGGER users_role_counts_delete BEFORE DELETE ON users
    FOR EACH ROW EXECUTE FUNCTION stoa_role_user_counts_user_gone();
