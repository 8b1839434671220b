-- The execution records and memory. Runs with search_path set to the store's schema.
-- Ids are text: the store keeps what the pipeline gives it; the router validates UUIDs.

CREATE TABLE sessions (
    session_id     text PRIMARY KEY,
    user_id        text,
    profile_id     text,
    org_id         text,
    metadata       jsonb,
    -- The last message sequence number allocated in this session: bumped in the same
    -- transaction that inserts the messages, so numbers are dense and never reused.
    last_seq       bigint NOT NULL DEFAULT 0 CHECK (last_seq >= 0),
    created_at     timestamptz NOT NULL DEFAULT now(),
    last_active_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX sessions_last_active_idx ON sessions (last_active_at);

CREATE TABLE interactions (
    interaction_id text PRIMARY KEY,
    session_id     text NOT NULL
        CONSTRAINT interactions_session_id_fkey REFERENCES sessions ON DELETE CASCADE,
    agent_name     text NOT NULL,
    status         text NOT NULL
        CHECK (status IN ('in_progress', 'completed', 'failed', 'cancelled')),
    created_at     timestamptz NOT NULL DEFAULT now(),
    updated_at     timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX interactions_session_idx ON interactions (session_id);

CREATE TABLE runs (
    run_id           text PRIMARY KEY,
    interaction_id   text NOT NULL
        CONSTRAINT runs_interaction_id_fkey REFERENCES interactions ON DELETE CASCADE,
    session_id       text NOT NULL
        CONSTRAINT runs_session_id_fkey REFERENCES sessions ON DELETE CASCADE,
    agent_name       text NOT NULL,
    status           text NOT NULL
        CHECK (status IN ('running', 'completed', 'failed', 'interrupted', 'cancelled')),
    request_id       text CONSTRAINT runs_request_id_key UNIQUE,
    started_at       timestamptz NOT NULL DEFAULT now(),
    finished_at      timestamptz,
    error_code       text,
    error_message    text,
    token_usage      jsonb,
    model_used       text,
    lease_owner      text,
    lease_expires_at timestamptz,
    result           jsonb
);
CREATE INDEX runs_interaction_idx ON runs (interaction_id, started_at);
-- The exclusive-run check and the reaper only look at running runs.
CREATE INDEX runs_running_session_idx ON runs (session_id) WHERE status = 'running';
CREATE INDEX runs_running_lease_idx ON runs (lease_expires_at) WHERE status = 'running';

CREATE TABLE messages (
    message_id     text PRIMARY KEY,
    session_id     text NOT NULL
        CONSTRAINT messages_session_id_fkey REFERENCES sessions ON DELETE CASCADE,
    seq            bigint NOT NULL CHECK (seq > 0),
    interaction_id text
        CONSTRAINT messages_interaction_id_fkey REFERENCES interactions ON DELETE CASCADE,
    run_id         text
        CONSTRAINT messages_run_id_fkey REFERENCES runs ON DELETE CASCADE,
    role           text NOT NULL CHECK (role IN ('system', 'human', 'ai', 'tool')),
    type           text NOT NULL CHECK (type IN ('message', 'action_result', 'tool_result')),
    content        jsonb NOT NULL DEFAULT '[]',
    tool_call_id   text,
    tool_name      text,
    tool_args      jsonb,
    tool_result    jsonb,
    metadata       jsonb,
    created_at     timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT messages_session_seq_key UNIQUE (session_id, seq)
);
CREATE INDEX messages_interaction_idx ON messages (interaction_id);
CREATE INDEX messages_run_idx ON messages (run_id);

CREATE TABLE actions (
    -- Insertion order: the approval inbox is listed (and paginated) by it.
    pos            bigint GENERATED ALWAYS AS IDENTITY CONSTRAINT actions_pos_key UNIQUE,
    action_id      text PRIMARY KEY,
    session_id     text NOT NULL
        CONSTRAINT actions_session_id_fkey REFERENCES sessions ON DELETE CASCADE,
    interaction_id text NOT NULL
        CONSTRAINT actions_interaction_id_fkey REFERENCES interactions ON DELETE CASCADE,
    run_id         text NOT NULL
        CONSTRAINT actions_run_id_fkey REFERENCES runs ON DELETE CASCADE,
    kind           text NOT NULL,
    tool           text NOT NULL,
    args           jsonb NOT NULL DEFAULT '{}',
    tool_call_id   text,
    status         text NOT NULL CHECK (status IN ('pending', 'resolved', 'cancelled')),
    -- The ledger: approved_unknown (approved, the tool has not reported back), approved_ran,
    -- approved_failed, declined (nothing ran).
    outcome        text
        CHECK (outcome IN ('approved_unknown', 'approved_ran', 'approved_failed', 'declined')),
    response       jsonb,
    result         jsonb,
    error          text,
    agent_name     text,
    user_id        text,
    created_at     timestamptz NOT NULL DEFAULT now(),
    resolved_at    timestamptz
);
CREATE INDEX actions_interaction_idx ON actions (interaction_id);
CREATE INDEX actions_run_idx ON actions (run_id);
CREATE INDEX actions_pending_idx ON actions (pos) WHERE status = 'pending';
CREATE INDEX actions_pending_user_idx ON actions (user_id, pos) WHERE status = 'pending';

CREATE TABLE memory_entries (
    pos        bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    entry_id   text NOT NULL CONSTRAINT memory_entries_entry_id_key UNIQUE,
    scope_name text NOT NULL CHECK (length(scope_name) BETWEEN 1 AND 128),
    scope_id   text NOT NULL CHECK (length(scope_id) BETWEEN 1 AND 256),
    content    text NOT NULL,
    metadata   jsonb,
    created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX memory_entries_scope_idx ON memory_entries (scope_name, scope_id, pos DESC);
