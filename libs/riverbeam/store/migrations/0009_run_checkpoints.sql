-- Durable runs (issue 13): each run's newest checkpoint (its progress after the last completed
-- step, written in the step's own transaction, fenced by the lease epoch), and the runners that
-- held a run that was taken over.
CREATE TABLE run_checkpoints (
    run_id text PRIMARY KEY REFERENCES runs (run_id) ON DELETE CASCADE,
    lease_epoch bigint NOT NULL,
    step integer NOT NULL CHECK (step >= 1),
    state jsonb NOT NULL,
    saved_at timestamptz NOT NULL DEFAULT now()
);
ALTER TABLE runs ADD COLUMN holders text[] NOT NULL DEFAULT '{}';
