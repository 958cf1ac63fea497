-- The AI assistant: per-tenant runtime settings and agent overrides, the
-- approval gate's pending actions, token usage, chat conversations, session
-- tokens for tool calls and input-moderation flags. Every row belongs to a
-- tenant and (optionally) an organization; both are bound and indexed.

CREATE TABLE ai_agent_runtime_overrides (
    id uuid PRIMARY KEY,
    tenant_id uuid NOT NULL REFERENCES tenants (id),
    organization_id uuid REFERENCES organizations (id),
    -- NULL: the tenant-wide default.
    agent_id text,
    provider_id text,
    model_id text,
    base_url text,
    -- A provider key stored for the tenant (KeyRing ciphertext, never returned).
    api_key_encrypted text,
    allowed_override_providers jsonb,
    allowed_override_models_by_provider jsonb NOT NULL DEFAULT '{}'::jsonb,
    input_moderation boolean,
    loop_disabled boolean,
    loop_max_steps integer,
    loop_max_tool_calls integer,
    loop_max_wall_clock_ms integer,
    loop_max_tokens integer,
    loop_stop_when_json jsonb,
    loop_active_tools_json jsonb,
    updated_by_user_id uuid,
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now(),
    UNIQUE NULLS NOT DISTINCT (tenant_id, organization_id, agent_id)
);
CREATE INDEX ai_agent_runtime_overrides_organization ON ai_agent_runtime_overrides (organization_id)
    WHERE organization_id IS NOT NULL;

CREATE TABLE ai_agent_mutation_policy_overrides (
    id uuid PRIMARY KEY,
    tenant_id uuid NOT NULL REFERENCES tenants (id),
    organization_id uuid REFERENCES organizations (id),
    agent_id text NOT NULL,
    mutation_policy text NOT NULL,
    notes text,
    created_by_user_id uuid,
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now(),
    UNIQUE NULLS NOT DISTINCT (tenant_id, organization_id, agent_id)
);
CREATE INDEX ai_agent_mutation_policy_overrides_organization ON ai_agent_mutation_policy_overrides (organization_id)
    WHERE organization_id IS NOT NULL;

CREATE TABLE ai_agent_prompt_overrides (
    id uuid PRIMARY KEY,
    tenant_id uuid NOT NULL REFERENCES tenants (id),
    organization_id uuid REFERENCES organizations (id),
    agent_id text NOT NULL,
    version integer NOT NULL,
    sections jsonb NOT NULL,
    notes text,
    created_by_user_id uuid,
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now(),
    UNIQUE NULLS NOT DISTINCT (tenant_id, organization_id, agent_id, version)
);
CREATE INDEX ai_agent_prompt_overrides_organization ON ai_agent_prompt_overrides (organization_id)
    WHERE organization_id IS NOT NULL;

CREATE TABLE ai_tenant_model_allowlists (
    id uuid PRIMARY KEY,
    tenant_id uuid NOT NULL REFERENCES tenants (id),
    organization_id uuid REFERENCES organizations (id),
    allowed_providers jsonb,
    allowed_models_by_provider jsonb NOT NULL DEFAULT '{}'::jsonb,
    updated_by_user_id uuid,
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now(),
    UNIQUE NULLS NOT DISTINCT (tenant_id, organization_id)
);
CREATE INDEX ai_tenant_model_allowlists_organization ON ai_tenant_model_allowlists (organization_id)
    WHERE organization_id IS NOT NULL;

CREATE TABLE ai_pending_actions (
    id uuid PRIMARY KEY,
    tenant_id uuid NOT NULL REFERENCES tenants (id),
    organization_id uuid REFERENCES organizations (id),
    agent_id text NOT NULL,
    tool_name text NOT NULL,
    conversation_id text,
    target_entity_type text,
    target_record_id text,
    normalized_input jsonb NOT NULL,
    field_diff jsonb NOT NULL DEFAULT '[]'::jsonb,
    record_version text,
    idempotency_key text NOT NULL,
    created_by_user_id uuid,
    status text NOT NULL DEFAULT 'pending'
        CHECK (status IN ('pending', 'confirmed', 'executing', 'failed', 'cancelled', 'expired')),
    execution_result jsonb,
    created_at timestamptz NOT NULL DEFAULT now(),
    expires_at timestamptz NOT NULL,
    resolved_at timestamptz,
    resolved_by_user_id uuid,
    UNIQUE NULLS NOT DISTINCT (tenant_id, organization_id, idempotency_key)
);
CREATE INDEX ai_pending_actions_organization ON ai_pending_actions (organization_id)
    WHERE organization_id IS NOT NULL;
CREATE INDEX ai_pending_actions_due ON ai_pending_actions (expires_at) WHERE status = 'pending';

CREATE TABLE ai_token_usage_events (
    id uuid PRIMARY KEY,
    tenant_id uuid NOT NULL REFERENCES tenants (id),
    organization_id uuid REFERENCES organizations (id),
    user_id uuid,
    agent_id text NOT NULL,
    module_id text NOT NULL,
    session_id uuid NOT NULL,
    turn_id uuid NOT NULL,
    step_index integer NOT NULL,
    provider_id text NOT NULL,
    model_id text NOT NULL,
    input_tokens bigint NOT NULL DEFAULT 0,
    output_tokens bigint NOT NULL DEFAULT 0,
    cached_input_tokens bigint,
    reasoning_tokens bigint,
    finish_reason text,
    loop_abort_reason text,
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX ai_token_usage_events_session ON ai_token_usage_events (tenant_id, session_id, created_at, step_index);
CREATE INDEX ai_token_usage_events_tenant_created ON ai_token_usage_events (tenant_id, created_at);
CREATE INDEX ai_token_usage_events_organization ON ai_token_usage_events (organization_id)
    WHERE organization_id IS NOT NULL;

CREATE TABLE ai_token_usage_daily (
    id uuid PRIMARY KEY,
    tenant_id uuid NOT NULL REFERENCES tenants (id),
    organization_id uuid REFERENCES organizations (id),
    day date NOT NULL,
    agent_id text NOT NULL,
    model_id text NOT NULL,
    provider_id text NOT NULL,
    input_tokens bigint NOT NULL DEFAULT 0,
    output_tokens bigint NOT NULL DEFAULT 0,
    cached_input_tokens bigint NOT NULL DEFAULT 0,
    reasoning_tokens bigint NOT NULL DEFAULT 0,
    step_count bigint NOT NULL DEFAULT 0,
    turn_count bigint NOT NULL DEFAULT 0,
    session_count bigint NOT NULL DEFAULT 0,
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now(),
    UNIQUE NULLS NOT DISTINCT (tenant_id, day, agent_id, model_id, organization_id)
);
CREATE INDEX ai_token_usage_daily_organization ON ai_token_usage_daily (organization_id)
    WHERE organization_id IS NOT NULL;

CREATE TABLE ai_chat_conversations (
    id uuid PRIMARY KEY,
    tenant_id uuid NOT NULL REFERENCES tenants (id),
    organization_id uuid REFERENCES organizations (id),
    conversation_id text NOT NULL,
    agent_id text NOT NULL,
    owner_user_id uuid NOT NULL,
    title text,
    status text NOT NULL DEFAULT 'open' CHECK (status IN ('open', 'closed')),
    visibility text NOT NULL DEFAULT 'private' CHECK (visibility IN ('private', 'shared', 'organization')),
    page_context jsonb,
    last_message_at timestamptz,
    imported_from_local_at timestamptz,
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now(),
    deleted_at timestamptz
);
CREATE UNIQUE INDEX ai_chat_conversations_key ON ai_chat_conversations (tenant_id, organization_id, conversation_id)
    NULLS NOT DISTINCT WHERE deleted_at IS NULL;
CREATE INDEX ai_chat_conversations_recent ON ai_chat_conversations
    (tenant_id, owner_user_id, last_message_at DESC NULLS LAST, created_at DESC) WHERE deleted_at IS NULL;
CREATE INDEX ai_chat_conversations_organization ON ai_chat_conversations (organization_id)
    WHERE organization_id IS NOT NULL;

CREATE TABLE ai_chat_conversation_participants (
    id uuid PRIMARY KEY,
    tenant_id uuid NOT NULL REFERENCES tenants (id),
    organization_id uuid REFERENCES organizations (id),
    conversation_id uuid NOT NULL REFERENCES ai_chat_conversations (id),
    user_id uuid NOT NULL,
    role text NOT NULL CHECK (role IN ('owner', 'viewer', 'commenter')),
    last_read_at timestamptz,
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now(),
    deleted_at timestamptz,
    UNIQUE (conversation_id, user_id)
);
CREATE INDEX ai_chat_conversation_participants_tenant ON ai_chat_conversation_participants (tenant_id, user_id);
CREATE INDEX ai_chat_conversation_participants_organization ON ai_chat_conversation_participants (organization_id)
    WHERE organization_id IS NOT NULL;

CREATE TABLE ai_chat_messages (
    id uuid PRIMARY KEY,
    tenant_id uuid NOT NULL REFERENCES tenants (id),
    organization_id uuid REFERENCES organizations (id),
    conversation_id uuid NOT NULL REFERENCES ai_chat_conversations (id),
    client_message_id text,
    role text NOT NULL,
    content text NOT NULL,
    ui_parts jsonb,
    attachment_ids jsonb,
    files_metadata jsonb,
    model text,
    metadata jsonb,
    created_by_user_id uuid,
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now(),
    deleted_at timestamptz
);
CREATE UNIQUE INDEX ai_chat_messages_client_id ON ai_chat_messages (conversation_id, client_message_id)
    WHERE deleted_at IS NULL AND client_message_id IS NOT NULL;
CREATE INDEX ai_chat_messages_conversation ON ai_chat_messages (conversation_id, created_at);
CREATE INDEX ai_chat_messages_tenant ON ai_chat_messages (tenant_id);
CREATE INDEX ai_chat_messages_organization ON ai_chat_messages (organization_id)
    WHERE organization_id IS NOT NULL;

CREATE TABLE ai_session_tokens (
    id uuid PRIMARY KEY,
    tenant_id uuid NOT NULL REFERENCES tenants (id),
    organization_id uuid REFERENCES organizations (id),
    user_id uuid NOT NULL,
    token_hash text NOT NULL UNIQUE,
    expires_at timestamptz NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX ai_session_tokens_tenant ON ai_session_tokens (tenant_id, user_id);
CREATE INDEX ai_session_tokens_organization ON ai_session_tokens (organization_id)
    WHERE organization_id IS NOT NULL;

CREATE TABLE ai_moderation_flags (
    id uuid PRIMARY KEY,
    tenant_id uuid NOT NULL REFERENCES tenants (id),
    organization_id uuid REFERENCES organizations (id),
    agent_id text NOT NULL,
    user_id uuid,
    provider_id text NOT NULL,
    model_id text NOT NULL,
    categories jsonb NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX ai_moderation_flags_tenant ON ai_moderation_flags (tenant_id, created_at DESC);
CREATE INDEX ai_moderation_flags_organization ON ai_moderation_flags (organization_id)
    WHERE organization_id IS NOT NULL;
