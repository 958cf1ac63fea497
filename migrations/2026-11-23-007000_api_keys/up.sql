-- API keys. Only the first 12 characters of a secret (`keyPrefix`, unique over
-- all rows, deleted ones included) and the SHA-256 of the whole secret are
-- stored; the secret itself is shown once, in the creation response.
--
-- `created_by` is whoever created the key: a user, or an API key (the
-- reference records the key id there). `creator_user_id` is the user at the
-- root of that chain, whose current grants bound the key's on every request;
-- `creator_key_ids` lists the keys in the chain (the creating key last).
-- Neither references `users` with a foreign key: deleting a user must not be
-- blocked by the keys it made (those keys stop working instead).
CREATE TABLE api_keys (
    id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    name text NOT NULL,
    description text,
    tenant_id uuid NOT NULL REFERENCES tenants (id),
    organization_id uuid REFERENCES organizations (id),
    key_prefix text NOT NULL,
    key_hash text NOT NULL,
    role_ids uuid[] NOT NULL DEFAULT '{}',
    created_by uuid NOT NULL,
    creator_user_id uuid NOT NULL,
    creator_key_ids uuid[] NOT NULL DEFAULT '{}',
    last_used_at timestamptz,
    expires_at timestamptz,
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now(),
    deleted_at timestamptz,
    CONSTRAINT api_keys_prefix_format CHECK (key_prefix ~ '^omk_[0-9a-f]{8}$'),
    CONSTRAINT api_keys_hash_format CHECK (key_hash ~ '^[0-9a-f]{64}$')
);

-- The per-request lookup, and the prefix's uniqueness.
CREATE UNIQUE INDEX api_keys_key_prefix ON api_keys (key_prefix);
-- The list: live keys of a tenant, newest first.
CREATE INDEX api_keys_tenant_created ON api_keys (tenant_id, created_at DESC, id DESC)
    WHERE deleted_at IS NULL;
-- The organization filter of the list (and the foreign key).
CREATE INDEX api_keys_organization ON api_keys (organization_id, created_at DESC)
    WHERE deleted_at IS NULL;
-- Keys made by a user (what a user deletion disables).
CREATE INDEX api_keys_creator_user ON api_keys (creator_user_id);
-- Keys made through a key (deleting a key deletes them too).
CREATE INDEX api_keys_creator_keys ON api_keys USING gin (creator_key_ids)
    WHERE deleted_at IS NULL;
