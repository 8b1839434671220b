-- The tool-execution ledger (issue 13, docs/durability.md): one row per tool call of a run.
-- pos orders reads (call order within a run, runs in order within an interaction).
CREATE TABLE tool_executions (
    pos            bigserial NOT NULL,
    execution_id   text PRIMARY KEY,
    run_id         text NOT NULL
        CONSTRAINT tool_executions_run_id_fkey REFERENCES runs ON DELETE CASCADE,
    interaction_id text NOT NULL
        CONSTRAINT tool_executions_interaction_id_fkey REFERENCES interactions ON DELETE CASCADE,
    -- No key of its own to sessions: deleting a session deletes its runs, and so these.
    session_id     text NOT NULL,
    seq            bigint NOT NULL CHECK (seq > 0),
    tool_call_id   text,
    tool           text NOT NULL,
    args           jsonb NOT NULL,
    status         text NOT NULL CHECK (status IN ('requested', 'started', 'succeeded',
        'failed', 'cancelled', 'unknown', 'denied', 'held')),
    read_only      boolean NOT NULL DEFAULT false,
    idempotent     boolean NOT NULL DEFAULT false,
    action_id      text,
    result_digest  text,
    result_preview text CHECK (char_length(result_preview) <= 2048),
    error_code     text,
    error_message  text,
    runner_id      text,
    lease_epoch    bigint,
    requested_at   timestamptz NOT NULL,
    started_at     timestamptz,
    finished_at    timestamptz
);
CREATE UNIQUE INDEX tool_executions_pos_idx ON tool_executions (pos);
CREATE INDEX tool_executions_run_idx ON tool_executions (run_id, pos);
CREATE INDEX tool_executions_interaction_idx ON tool_executions (interaction_id, pos);
-- A takeover settles the unfinished entries of the runs it takes.
CREATE INDEX tool_executions_open_idx ON tool_executions (run_id)
    WHERE status IN ('requested', 'started');
