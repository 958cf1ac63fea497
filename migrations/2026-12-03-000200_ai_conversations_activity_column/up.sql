-- The conversation list's sort key as a column of its own: the last
-- message's time, else the creation time.
--
-- Why not the expression index of 2026-12-01-200000: under row-level
-- security a condition with COALESCE counts as leaky (the planner only
-- lets leakproof functions and a few node kinds run before the policy), so
-- the keyset cursor `COALESCE(...) < $1` was no index condition and a deep
-- page filtered half the tenant's conversations (15-30 ms over 100k). A
-- plain column compares with timestamptz's leakproof `<`.
ALTER TABLE ai_chat_conversations
    ADD COLUMN activity_at timestamptz
    GENERATED ALWAYS AS (COALESCE(last_message_at, created_at)) STORED;
DROP INDEX ai_chat_conversations_activity;
CREATE INDEX ai_chat_conversations_activity ON ai_chat_conversations
    (tenant_id, organization_id, activity_at DESC, id DESC)
    WHERE deleted_at IS NULL;
