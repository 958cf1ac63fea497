DROP INDEX ai_chat_conversations_activity;
ALTER TABLE ai_chat_conversations DROP COLUMN activity_at;
CREATE INDEX ai_chat_conversations_activity ON ai_chat_conversations
    (tenant_id, organization_id, (COALESCE(last_message_at, created_at)) DESC, id DESC)
    WHERE deleted_at IS NULL;
