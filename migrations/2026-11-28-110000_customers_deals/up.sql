-- Customer deals, their pipelines and pipeline stages (stoa-customers).
-- Every row belongs to one organization of one tenant. Deals are deleted
-- for good (as the reference's delete command does); undo re-inserts them.
CREATE TABLE customer_pipelines (
    id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    tenant_id uuid NOT NULL REFERENCES tenants (id),
    organization_id uuid NOT NULL REFERENCES organizations (id),
    name text NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
    is_default boolean NOT NULL DEFAULT false,
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX customer_pipelines_scope ON customer_pipelines (tenant_id, organization_id, created_at, id);
CREATE INDEX customer_pipelines_organization ON customer_pipelines (organization_id);
CREATE TRIGGER customer_pipelines_updated_at BEFORE UPDATE ON customer_pipelines
    FOR EACH ROW EXECUTE FUNCTION stoa_set_updated_at();

CREATE TABLE customer_pipeline_stages (
    id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    tenant_id uuid NOT NULL REFERENCES tenants (id),
    organization_id uuid NOT NULL REFERENCES organizations (id),
    -- A pipeline with stages cannot be deleted (409): delete its stages first.
    pipeline_id uuid NOT NULL REFERENCES customer_pipelines (id),
    label text NOT NULL CHECK (length(label) BETWEEN 1 AND 200),
    position integer NOT NULL DEFAULT 0 CHECK (position >= 0),
    color text CHECK (length(color) <= 20),
    icon text CHECK (length(icon) <= 100),
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX customer_pipeline_stages_pipeline ON customer_pipeline_stages (pipeline_id, position, id);
CREATE INDEX customer_pipeline_stages_scope ON customer_pipeline_stages (tenant_id, organization_id);
CREATE INDEX customer_pipeline_stages_organization ON customer_pipeline_stages (organization_id);
CREATE TRIGGER customer_pipeline_stages_updated_at BEFORE UPDATE ON customer_pipeline_stages
    FOR EACH ROW EXECUTE FUNCTION stoa_set_updated_at();

CREATE TABLE customer_deals (
    id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    tenant_id uuid NOT NULL REFERENCES tenants (id),
    organization_id uuid NOT NULL REFERENCES organizations (id),
    title text NOT NULL CHECK (length(title) BETWEEN 1 AND 200),
    description text CHECK (length(description) <= 4000),
    status text NOT NULL DEFAULT 'open' CHECK (length(status) BETWEEN 1 AND 50),
    -- The stage's label, copied when the stage is set (the reference's column).
    pipeline_stage text,
    -- A stage or pipeline in use by a deal cannot be deleted (409).
    pipeline_id uuid REFERENCES customer_pipelines (id),
    pipeline_stage_id uuid REFERENCES customer_pipeline_stages (id),
    value_amount numeric(18, 4) CHECK (value_amount >= 0),
    value_currency text CHECK (value_currency ~ '^[A-Z]{3}$'),
    probability integer CHECK (probability BETWEEN 0 AND 100),
    expected_close_at timestamptz,
    owner_user_id uuid REFERENCES users (id),
    source text CHECK (length(source) <= 150),
    closure_outcome text CHECK (closure_outcome IN ('won', 'lost')),
    loss_notes text CHECK (length(loss_notes) <= 4000),
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now()
);
-- The default list order (newest first) and the filters of the list: each
-- index leads with the tenant and ends with the order, so a filtered page
-- reads its 50 rows (and the capped count its ≤ 1,001) from one index.
CREATE INDEX customer_deals_created ON customer_deals (tenant_id, created_at DESC, id DESC);
CREATE INDEX customer_deals_stage ON customer_deals (tenant_id, pipeline_stage_id, created_at DESC, id DESC);
CREATE INDEX customer_deals_owner ON customer_deals (tenant_id, owner_user_id, created_at DESC, id DESC);
CREATE INDEX customer_deals_pipeline ON customer_deals (tenant_id, pipeline_id, created_at DESC, id DESC);
CREATE INDEX customer_deals_updated ON customer_deals (tenant_id, updated_at DESC, id DESC);
CREATE INDEX customer_deals_close ON customer_deals (tenant_id, expected_close_at, id);
-- Foreign keys: deletions of organizations, stages, pipelines and users.
CREATE INDEX customer_deals_organization ON customer_deals (organization_id);
CREATE INDEX customer_deals_stage_fk ON customer_deals (pipeline_stage_id);
CREATE INDEX customer_deals_pipeline_fk ON customer_deals (pipeline_id);
CREATE INDEX customer_deals_owner_fk ON customer_deals (owner_user_id);
CREATE TRIGGER customer_deals_updated_at BEFORE UPDATE ON customer_deals
    FOR EACH ROW EXECUTE FUNCTION stoa_set_updated_at();
