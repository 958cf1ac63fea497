-- Self-service onboarding: one sign-up request per e-mail while it is
-- pending. The verification token is stored only as its SHA-256 (hex); the
-- password only as an argon2id hash, cleared once the first user holds it.
-- A verified request keeps the tenant, organization and user it created,
-- and the progress job preparing the workspace's demo data.
CREATE TABLE onboarding_requests (
    id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    email text NOT NULL,
    token_hash text NOT NULL UNIQUE,
    status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'completed')),
    first_name text NOT NULL,
    last_name text NOT NULL,
    organization_name text NOT NULL,
    locale text,
    marketing_consent boolean NOT NULL DEFAULT false,
    client_ip text,
    password_hash text,
    expires_at timestamptz NOT NULL,
    last_email_sent_at timestamptz NOT NULL DEFAULT now(),
    completed_at timestamptz,
    tenant_id uuid REFERENCES tenants (id) ON DELETE CASCADE,
    organization_id uuid REFERENCES organizations (id) ON DELETE CASCADE,
    user_id uuid REFERENCES users (id) ON DELETE SET NULL,
    progress_job_id uuid,
    preparation_completed_at timestamptz,
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now()
);
-- One pending request per e-mail (a repeat refreshes it).
CREATE UNIQUE INDEX onboarding_requests_pending_email
    ON onboarding_requests (email) WHERE status = 'pending';
-- The status page looks a request up by its tenant.
CREATE INDEX onboarding_requests_tenant ON onboarding_requests (tenant_id);
CREATE INDEX onboarding_requests_organization ON onboarding_requests (organization_id);
-- The prune job finds expired pending requests.
CREATE INDEX onboarding_requests_pending_expiry
    ON onboarding_requests (expires_at) WHERE status = 'pending';
