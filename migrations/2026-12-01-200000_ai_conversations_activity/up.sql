-- The conversation list orders by COALESCE(last_message_at, created_at),
-- id within one tenant and organization (owner and sharing are filters):
-- one index serves the order, the keyset cursor and the capped count.
DROP INDEX IF EXISTS ai_chat_conversations_recent;
CREATE INDEX ai_chat_conversations_activity ON ai_chat_conversations
    (tenant_id, organization_id, (COALESCE(last_message_at, created_at)) DESC, id DESC)
    WHERE deleted_at IS NULL;
-- The usage prune deletes per-step rows by age across tenants.
CREATE INDEX ai_token_usage_events_created ON ai_token_usage_events (created_at);
