-- Durable runs (issue 13): the agent version an interaction is pinned to and each run was
-- made by; approvals that expire (NULL: never).
ALTER TABLE interactions ADD COLUMN agent_version text;
ALTER TABLE runs ADD COLUMN agent_version text;
ALTER TABLE actions ADD COLUMN expires_at timestamptz;
-- The sweeper marks an expired pending action `expired`.
ALTER TABLE actions DROP CONSTRAINT actions_status_check;
ALTER TABLE actions ADD CONSTRAINT actions_status_check
    CHECK (status IN ('pending', 'resolved', 'cancelled', 'expired'));
