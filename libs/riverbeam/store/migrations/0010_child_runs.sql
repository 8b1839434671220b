-- Multi-agent composition (issue 14): a child run (an agent called by another agent, or the
-- target of a handoff) names the run that called it. It has no lease of its own (NULL
-- lease_expires_at: never busy, never reaped or taken over by itself); its writes are fenced
-- by the parent's lease owner and epoch.
ALTER TABLE runs ADD COLUMN parent_run_id text
    CONSTRAINT runs_parent_run_id_fkey REFERENCES runs ON DELETE CASCADE;
-- Backs the foreign key (deleting a run finds its children) and the children-of-a-run read.
CREATE INDEX runs_parent_idx ON runs (parent_run_id);
