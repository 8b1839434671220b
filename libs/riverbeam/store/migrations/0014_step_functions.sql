-- The two steps of an invoke with less work in the backend (issue 16). Each statement of a
-- PL/pgSQL function, and each part of a statement, is an executor start and end of its own
-- (the tables and indexes it touches opened and locked, its expressions and CHECK constraints
-- prepared): that setup, not the rows written, is most of what a step costs the backend.
--
-- begin_step (migration 0013) in four statements instead of seven for a new session. What it
-- does, and the order of its refusals, are unchanged:
-- * the request-id check is part of the session upsert (a used id proposes no row, so nothing
--   is written or locked); when the upsert takes no row, the id is looked up again to tell
--   RB001 from RB002;
-- * the busy check is part of the run's insert, reading a snapshot taken after the session row
--   lock as before; the live run is read for RB004's detail only when the insert was refused;
-- * the history (and the caller's history_after) is read only when the session had messages
--   before the step's own (v_last > 0): with none, both are empty whatever the arguments.

DO $do$ BEGIN EXECUTE format($create$
CREATE OR REPLACE FUNCTION %1$I.begin_step(
    p_session_id text, p_user_id text, p_profile_id text, p_org_id text, p_n bigint,
    p_require_owner text, p_require_org text, p_request_id text, p_interaction_id text,
    p_agent_name text, p_agent_version text, p_run_id text, p_lease_owner text,
    p_ttl interval, p_exclusive boolean, p_limit bigint, p_after bigint, p_after_id text,
    p_message_ids text[], p_roles text[], p_types text[], p_contents text[],
    p_tool_call_ids text[], p_tool_names text[], p_tool_args text[], p_tool_results text[],
    p_metadata text[], p_options text, p_config_set boolean, p_config text,
    OUT o_session %1$I.sessions, OUT o_interaction %1$I.interactions, OUT o_run %1$I.runs,
    OUT o_saved %1$I.messages[], OUT o_history %1$I.messages[], OUT o_known bigint
)
LANGUAGE plpgsql VOLATILE
AS $body$
DECLARE
    v_busy record;
    v_last bigint;
BEGIN
    -- Creates the session or locks it, unless the request id was used; the first non-null
    -- owner ids stick. With a required owner, an existing session of another user (or of
    -- none) is locked but not updated.
    INSERT INTO %1$I.sessions AS t (session_id, user_id, profile_id, org_id, last_seq, config)
    SELECT p_session_id, p_user_id, p_profile_id, p_org_id, p_n,
        CASE WHEN p_config_set THEN p_config::jsonb END
    WHERE p_request_id IS NULL
        OR NOT EXISTS (SELECT 1 FROM %1$I.runs WHERE request_id = p_request_id)
    ON CONFLICT (session_id) DO UPDATE SET
        config = CASE WHEN p_config_set THEN p_config::jsonb ELSE t.config END,
        user_id = COALESCE(t.user_id, EXCLUDED.user_id),
        profile_id = COALESCE(t.profile_id, EXCLUDED.profile_id),
        org_id = COALESCE(t.org_id, EXCLUDED.org_id),
        last_seq = t.last_seq + EXCLUDED.last_seq, last_active_at = now()
    WHERE p_require_owner IS NULL OR (t.user_id = p_require_owner
        AND (p_require_org IS NULL OR t.org_id IS NULL OR t.org_id = p_require_org))
    RETURNING t.* INTO o_session;
    IF NOT FOUND THEN
        IF p_request_id IS NOT NULL
            AND EXISTS (SELECT 1 FROM %1$I.runs WHERE request_id = p_request_id)
        THEN
            RAISE EXCEPTION USING ERRCODE = 'RB001', MESSAGE = 'request id already used';
        END IF;
        RAISE EXCEPTION USING ERRCODE = 'RB002', MESSAGE = 'session of another owner';
    END IF;
    -- An interaction id is reused only within its own session.
    INSERT INTO %1$I.interactions AS t (interaction_id, session_id, agent_name, status, agent_version)
    VALUES (p_interaction_id, p_session_id, p_agent_name, 'in_progress', p_agent_version)
    ON CONFLICT (interaction_id) DO UPDATE SET status = 'in_progress', updated_at = now()
    WHERE t.session_id = EXCLUDED.session_id
    RETURNING t.* INTO o_interaction;
    IF NOT FOUND THEN
        RAISE EXCEPTION USING ERRCODE = 'RB003', MESSAGE = 'interaction of another session';
    END IF;
    -- The run, unless the session has a live one (with p_exclusive): the check reads a
    -- snapshot taken after the session row lock, as a statement of its own did. Busy, the
    -- live run is read again for the refusal's detail; when it ended meanwhile the insert
    -- is tried again.
    LOOP
        INSERT INTO %1$I.runs AS t (run_id, interaction_id, session_id, agent_name, status,
            request_id, lease_owner, lease_expires_at, agent_version, options)
        SELECT p_run_id, p_interaction_id, p_session_id, p_agent_name, 'running', p_request_id,
            p_lease_owner, now() + p_ttl, p_agent_version, p_options::jsonb
        WHERE NOT p_exclusive OR NOT EXISTS (SELECT 1 FROM %1$I.runs r
            WHERE r.session_id = p_session_id AND r.status = 'running'
            AND r.lease_expires_at > now())
        RETURNING t.* INTO o_run;
        EXIT WHEN FOUND;
        SELECT r.run_id, r.request_id INTO v_busy FROM %1$I.runs r
        WHERE r.session_id = p_session_id AND r.status = 'running' AND r.lease_expires_at > now()
        LIMIT 1;
        IF FOUND THEN
            RAISE EXCEPTION USING ERRCODE = 'RB004', MESSAGE = 'session busy',
                DETAIL = json_build_object('run_id', v_busy.run_id,
                                           'request_id', v_busy.request_id)::text;
        END IF;
    END LOOP;
    -- The step's messages are numbered after everything before it (the session row is
    -- locked, so no other step numbers messages meanwhile).
    v_last := o_session.last_seq - p_n;
    WITH m AS (
        INSERT INTO %1$I.messages AS x (message_id, session_id, interaction_id, run_id, seq, role,
            type, content, tool_call_id, tool_name, tool_args, tool_result, metadata)
        SELECT u.message_id, p_session_id, p_interaction_id, p_run_id, v_last + u.n, u.role,
            u.type, u.content::jsonb, u.tool_call_id, u.tool_name, u.tool_args::jsonb,
            u.tool_result::jsonb, u.metadata::jsonb
        FROM unnest(p_message_ids, p_roles, p_types, p_contents, p_tool_call_ids, p_tool_names,
            p_tool_args, p_tool_results, p_metadata) WITH ORDINALITY
            AS u(message_id, role, type, content, tool_call_id, tool_name, tool_args,
                 tool_result, metadata, n)
        RETURNING x AS row, x.seq
    )
    SELECT ARRAY(SELECT m.row FROM m ORDER BY m.seq) INTO o_saved;
    o_known := 0;
    o_history := '{}';
    -- Nothing is numbered before the step's own messages in a new session: no reads.
    IF p_limit > 0 AND v_last > 0 THEN
        IF p_after_id IS NOT NULL THEN
            SELECT COALESCE((SELECT x.seq FROM %1$I.messages x WHERE x.session_id = p_session_id
                AND x.seq = p_after AND x.seq <= v_last AND x.message_id = p_after_id), 0)
            INTO o_known;
        END IF;
        -- The newest p_limit messages before the step's own, oldest first, leaving out those
        -- the caller holds.
        SELECT ARRAY(SELECT h.row FROM (SELECT x AS row, x.seq FROM %1$I.messages x
            WHERE x.session_id = p_session_id AND x.seq <= v_last
            AND x.seq > GREATEST(v_last - p_limit, o_known)
            ORDER BY x.seq DESC LIMIT p_limit) h ORDER BY h.seq)
        INTO o_history;
    END IF;
END
$body$
$create$, current_schema()); END $do$;

-- finish_step: the finish step (_sql.py's statement of the same name until now) as a function
-- of the same parameters, so that what a step does not need is not set up: the one statement
-- set up all five of its parts, the pending actions' insert (actions and its seven indexes)
-- even with no actions and the messages' insert with none. Rows are still locked run ->
-- session -> interaction, as every other step does; nothing is written unless the run's
-- compare-and-set (running, this lease owner, this epoch) took the row, and then it returns
-- the finished run, else no row.
DO $do$ BEGIN EXECUTE format($create$
CREATE OR REPLACE FUNCTION %1$I.finish_step(
    p_run_id text, p_lease_owner text, p_status text, p_error_code text, p_error_message text,
    p_token_usage text, p_model_used text, p_result text, p_epoch bigint, p_n bigint,
    p_message_ids text[], p_roles text[], p_types text[], p_contents text[],
    p_tool_call_ids text[], p_tool_names text[], p_tool_args text[], p_tool_results text[],
    p_metadata text[], p_interaction_status text, p_action_ids text[], p_kinds text[],
    p_tools text[], p_args text[], p_action_call_ids text[], p_action_ttl interval,
    p_previews text[], p_children text[]
) RETURNS SETOF %1$I.runs
LANGUAGE plpgsql VOLATILE
AS $body$
DECLARE
    v_run %1$I.runs;
    v_last bigint;
    v_user text;
BEGIN
    UPDATE %1$I.runs AS r SET status = p_status, finished_at = now(), error_code = p_error_code,
        error_message = p_error_message, token_usage = p_token_usage::jsonb,
        model_used = p_model_used, result = p_result::jsonb
    WHERE r.run_id = p_run_id AND r.lease_owner = p_lease_owner AND r.status = 'running'
        AND (p_epoch IS NULL OR r.lease_epoch = p_epoch)
    RETURNING r.* INTO v_run;
    IF NOT FOUND THEN
        RETURN;
    END IF;
    UPDATE %1$I.sessions AS s SET last_seq = s.last_seq + p_n, last_active_at = now()
    WHERE s.session_id = v_run.session_id
    RETURNING s.last_seq, s.user_id INTO v_last, v_user;
    IF p_n > 0 THEN
        INSERT INTO %1$I.messages (message_id, session_id, interaction_id, run_id, seq, role,
            type, content, tool_call_id, tool_name, tool_args, tool_result, metadata)
        SELECT u.message_id, v_run.session_id, v_run.interaction_id, v_run.run_id,
            v_last - p_n + u.n, u.role, u.type, u.content::jsonb, u.tool_call_id, u.tool_name,
            u.tool_args::jsonb, u.tool_result::jsonb, u.metadata::jsonb
        FROM unnest(p_message_ids, p_roles, p_types, p_contents, p_tool_call_ids, p_tool_names,
            p_tool_args, p_tool_results, p_metadata) WITH ORDINALITY
            AS u(message_id, role, type, content, tool_call_id, tool_name, tool_args,
                 tool_result, metadata, n);
    END IF;
    UPDATE %1$I.interactions AS i SET status = p_interaction_status, updated_at = now()
    WHERE i.interaction_id = v_run.interaction_id;
    IF cardinality(p_action_ids) > 0 THEN
        INSERT INTO %1$I.actions (action_id, session_id, interaction_id, run_id, kind, tool, args,
            tool_call_id, status, agent_name, user_id, expires_at, preview, child)
        SELECT u.action_id, v_run.session_id, v_run.interaction_id, v_run.run_id, u.kind, u.tool,
            u.args::jsonb, u.tool_call_id, 'pending', v_run.agent_name, v_user,
            now() + p_action_ttl, u.preview::jsonb, u.child::jsonb
        FROM unnest(p_action_ids, p_kinds, p_tools, p_args, p_action_call_ids, p_previews,
            p_children) WITH ORDINALITY
            AS u(action_id, kind, tool, args, tool_call_id, preview, child, n)
        ORDER BY u.n;
    END IF;
    RETURN NEXT v_run;
END
$body$
$create$, current_schema()); END $do$;
