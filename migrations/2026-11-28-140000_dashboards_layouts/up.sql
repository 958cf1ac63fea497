-- Dashboards: a user's layout, and the widgets assigned to roles and users,
-- each per (tenant, organization of the caller's token). Ids are derived from
-- the key (see stoa_dashboards::model::row_id), so a row cleared and written
-- again keeps its id and undo finds it.
CREATE TABLE dashboard_layouts (
    id uuid PRIMARY KEY,
    tenant_id uuid NOT NULL,
    organization_id uuid,
    user_id uuid NOT NULL,
    layout_json jsonb NOT NULL DEFAULT '[]'::jsonb,
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now(),
    UNIQUE NULLS NOT DISTINCT (user_id, tenant_id, organization_id)
);

CREATE TABLE dashboard_role_widgets (
    id uuid PRIMARY KEY,
    tenant_id uuid NOT NULL,
    organization_id uuid,
    role_id uuid NOT NULL,
    widget_ids text[] NOT NULL DEFAULT '{}',
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now(),
    UNIQUE NULLS NOT DISTINCT (role_id, tenant_id, organization_id)
);
CREATE INDEX dashboard_role_widgets_tenant ON dashboard_role_widgets (tenant_id, role_id);

CREATE TABLE dashboard_user_widgets (
    id uuid PRIMARY KEY,
    tenant_id uuid NOT NULL,
    organization_id uuid,
    user_id uuid NOT NULL,
    mode text NOT NULL DEFAULT 'inherit' CHECK (mode IN ('inherit', 'override')),
    widget_ids text[] NOT NULL DEFAULT '{}',
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now(),
    UNIQUE NULLS NOT DISTINCT (user_id, tenant_id, organization_id)
);
