DROP INDEX IF EXISTS ai_token_usage_events_created;
DROP INDEX IF EXISTS ai_chat_conversations_activity;
CREATE INDEX ai_chat_conversations_recent ON ai_chat_conversations
    (tenant_id, owner_user_id, last_message_at DESC NULLS LAST, created_at DESC) WHERE deleted_at IS NULL;
