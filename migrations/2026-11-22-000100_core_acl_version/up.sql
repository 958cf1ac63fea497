-- One counter that every change to access-control data bumps (roles, role and
-- user ACLs, memberships, the organization tree). Each server process caches
-- resolved ACLs tagged with the counter it saw; the per-request session check
-- reads the counter in the same round trip, so a change made through any
-- process invalidates every process's cache at once.
CREATE TABLE acl_version (
    id smallint PRIMARY KEY CHECK (id = 1),
    version bigint NOT NULL
);
INSERT INTO acl_version (id, version) VALUES (1, 1);

-- Statement-level trigger function: one bump per statement, whatever it touched.
CREATE FUNCTION stoa_bump_acl_version() RETURNS trigger AS $$
BEGIN
    UPDATE acl_version SET version = version + 1 WHERE id = 1;
    RETURN NULL;
END;
$$ LANGUAGE plpgsql;
