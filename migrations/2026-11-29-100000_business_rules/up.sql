-- Business rules (stoa-business-rules): rules, rule sets and their members,
-- the execution log, and the per-tenant version every process reads to know
-- its cached discovery is stale.
CREATE TABLE business_rules (
    id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    tenant_id uuid NOT NULL REFERENCES tenants (id),
    organization_id uuid NOT NULL REFERENCES organizations (id),
    rule_id text NOT NULL CHECK (length(rule_id) BETWEEN 1 AND 50),
    rule_name text NOT NULL CHECK (length(rule_name) BETWEEN 1 AND 200),
    description text CHECK (length(description) <= 5000),
    rule_type text NOT NULL CHECK (rule_type IN ('GUARD', 'VALIDATION', 'CALCULATION', 'ACTION', 'ASSIGNMENT')),
    rule_category text CHECK (length(rule_category) <= 50),
    entity_type text NOT NULL CHECK (length(entity_type) BETWEEN 1 AND 50),
    event_type text CHECK (length(event_type) <= 50),
    condition_expression jsonb,
    success_actions jsonb,
    failure_actions jsonb,
    enabled boolean NOT NULL DEFAULT true,
    priority integer NOT NULL DEFAULT 100 CHECK (priority BETWEEN 0 AND 9999),
    version integer NOT NULL DEFAULT 1 CHECK (version >= 1),
    effective_from timestamptz,
    effective_to timestamptz,
    created_by uuid,
    updated_by uuid,
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now(),
    deleted_at timestamptz
);
-- A rule id is unique in its tenant among live rules (a duplicate is 409).
CREATE UNIQUE INDEX business_rules_rule_id ON business_rules (tenant_id, rule_id) WHERE deleted_at IS NULL;
-- Discovery: the live rules of one entity type in a tenant.
CREATE INDEX business_rules_discovery ON business_rules (tenant_id, entity_type) WHERE deleted_at IS NULL;
CREATE INDEX business_rules_scope ON business_rules (tenant_id, organization_id);
CREATE INDEX business_rules_organization ON business_rules (organization_id);
CREATE TRIGGER business_rules_updated_at BEFORE UPDATE ON business_rules
    FOR EACH ROW EXECUTE FUNCTION stoa_set_updated_at();

CREATE TABLE business_rule_sets (
    id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    tenant_id uuid NOT NULL REFERENCES tenants (id),
    organization_id uuid NOT NULL REFERENCES organizations (id),
    set_id text NOT NULL CHECK (length(set_id) BETWEEN 1 AND 50),
    set_name text NOT NULL CHECK (length(set_name) BETWEEN 1 AND 200),
    description text CHECK (length(description) <= 5000),
    enabled boolean NOT NULL DEFAULT true,
    created_by uuid,
    updated_by uuid,
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now(),
    deleted_at timestamptz
);
CREATE UNIQUE INDEX business_rule_sets_set_id ON business_rule_sets (tenant_id, set_id) WHERE deleted_at IS NULL;
CREATE INDEX business_rule_sets_scope ON business_rule_sets (tenant_id, organization_id);
CREATE INDEX business_rule_sets_organization ON business_rule_sets (organization_id);
CREATE TRIGGER business_rule_sets_updated_at BEFORE UPDATE ON business_rule_sets
    FOR EACH ROW EXECUTE FUNCTION stoa_set_updated_at();

CREATE TABLE business_rule_set_members (
    id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    tenant_id uuid NOT NULL REFERENCES tenants (id),
    organization_id uuid NOT NULL REFERENCES organizations (id),
    rule_set_id uuid NOT NULL REFERENCES business_rule_sets (id),
    rule_id uuid NOT NULL REFERENCES business_rules (id),
    sequence integer NOT NULL DEFAULT 0 CHECK (sequence >= 0),
    enabled boolean NOT NULL DEFAULT true,
    created_at timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX business_rule_set_members_pair ON business_rule_set_members (rule_set_id, rule_id);
CREATE INDEX business_rule_set_members_rule ON business_rule_set_members (rule_id);
CREATE INDEX business_rule_set_members_scope ON business_rule_set_members (tenant_id, organization_id);
CREATE INDEX business_rule_set_members_organization ON business_rule_set_members (organization_id);

CREATE TABLE business_rule_logs (
    id bigserial PRIMARY KEY,
    rule_id uuid NOT NULL REFERENCES business_rules (id),
    tenant_id uuid NOT NULL REFERENCES tenants (id),
    organization_id uuid REFERENCES organizations (id),
    entity_id text NOT NULL DEFAULT 'unknown',
    entity_type text NOT NULL,
    execution_result text NOT NULL CHECK (execution_result IN ('SUCCESS', 'FAILURE', 'ERROR')),
    input_context jsonb,
    output_context jsonb,
    error_message text,
    execution_time_ms integer NOT NULL DEFAULT 0,
    executed_by text,
    executed_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX business_rule_logs_scope ON business_rule_logs (tenant_id, executed_at DESC, id DESC);
CREATE INDEX business_rule_logs_organization ON business_rule_logs (organization_id);
CREATE INDEX business_rule_logs_rule ON business_rule_logs (rule_id);

-- One version per tenant, bumped by every change of its rules: each process
-- keeps the tenant's discovered rules with the version it read and reloads
-- them when the version moved (the way acl_version reaches every process).
CREATE TABLE business_rule_versions (
    tenant_id uuid PRIMARY KEY REFERENCES tenants (id),
    version bigint NOT NULL DEFAULT 1
);

CREATE FUNCTION business_rules_bump_version() RETURNS trigger AS $$
BEGIN
    INSERT INTO business_rule_versions AS v (tenant_id, version)
    VALUES (CASE WHEN TG_OP = 'DELETE' THEN OLD.tenant_id ELSE NEW.tenant_id END, 1)
    ON CONFLICT (tenant_id) DO UPDATE SET version = v.version + 1;
    RETURN NULL;
END;
$$ LANGUAGE plpgsql;

CREATE TRIGGER business_rules_version AFTER INSERT OR UPDATE OR DELETE ON business_rules
    FOR EACH ROW EXECUTE FUNCTION business_rules_bump_version();
