-- Approvals inside a called agent (issue 14): a held call of a child run is the caller's
-- pending action; `child` says which call of the run it belongs to (agent, run_id of the
-- interrupted child run, parent_tool, parent_tool_call_id). NULL: the run's own call.
ALTER TABLE actions ADD COLUMN child jsonb;
