-- Durable runs (issue 13): the agent version an interaction is pinned to and each run was
-- made by; approvals that expire (NULL: never).
ALTER TABLE interactions ADD COLUMN agent_version text;
ALTER TABLE runs ADD COLUMN agent_version text;
ALTER TABLE actions ADD COLUMN expires_at timestamptz;
