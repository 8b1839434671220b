-- A compaction summary is a message of its own type (role system, type summary): the
-- agent layer's context compaction stores one, and later turns reuse it (docs/agents.md).
ALTER TABLE messages DROP CONSTRAINT IF EXISTS messages_type_check;
ALTER TABLE messages ADD CONSTRAINT messages_type_check
    CHECK (type IN ('message', 'action_result', 'tool_result', 'summary'));
