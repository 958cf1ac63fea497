-- `ai_assistant.conversations` read versions per tenant
-- (core_tenant_read_versions): every write to a tenant's conversations or
-- their participants (a shared conversation is in its participants' lists)
-- bumps its version once per statement, so `GET /ai_assistant/ai/conversations`
-- keeps its answer (read_cache) only while nothing it lists changed.
CREATE TRIGGER ai_chat_conversations_read_version_insert AFTER INSERT ON ai_chat_conversations
    REFERENCING NEW TABLE AS stoa_new
    FOR EACH STATEMENT EXECUTE FUNCTION stoa_bump_tenant_read_version('ai_assistant.conversations');
CREATE TRIGGER ai_chat_conversations_read_version_update AFTER UPDATE ON ai_chat_conversations
    REFERENCING OLD TABLE AS stoa_old NEW TABLE AS stoa_new
    FOR EACH STATEMENT EXECUTE FUNCTION stoa_bump_tenant_read_version('ai_assistant.conversations');
CREATE TRIGGER ai_chat_conversations_read_version_delete AFTER DELETE ON ai_chat_conversations
    REFERENCING OLD TABLE AS stoa_old
    FOR EACH STATEMENT EXECUTE FUNCTION stoa_bump_tenant_read_version('ai_assistant.conversations');
CREATE TRIGGER ai_chat_conversation_participants_read_version_insert AFTER INSERT ON ai_chat_conversation_participants
    REFERENCING NEW TABLE AS stoa_new
    FOR EACH STATEMENT EXECUTE FUNCTION stoa_bump_tenant_read_version('ai_assistant.conversations');
CREATE TRIGGER ai_chat_conversation_participants_read_version_update AFTER UPDATE ON ai_chat_conversation_participants
    REFERENCING OLD TABLE AS stoa_old NEW TABLE AS stoa_new
    FOR EACH STATEMENT EXECUTE FUNCTION stoa_bump_tenant_read_version('ai_assistant.conversations');
CREATE TRIGGER ai_chat_conversation_participants_read_version_delete AFTER DELETE ON ai_chat_conversation_participants
    REFERENCING OLD TABLE AS stoa_old
    FOR EACH STATEMENT EXECUTE FUNCTION stoa_bump_tenant_read_version('ai_assistant.conversations');
