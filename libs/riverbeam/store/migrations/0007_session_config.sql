-- The agent layer (issue 12): the session configuration a request's session_config sets
-- (applied to every later turn until changed), and the per-request options a run was
-- started with (what a resume of its interaction inherits). JSON; NULL: none.
ALTER TABLE sessions ADD COLUMN config jsonb;
ALTER TABLE runs ADD COLUMN options jsonb;
