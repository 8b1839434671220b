-- begin_run of a new interaction in one round trip (issue 16): the request-id check, the
-- session upsert, the interaction, the busy check, the run, its messages and the history read,
-- called as one SELECT (its own transaction, or inside the step's transaction when a test hook
-- is set). Under READ COMMITTED each statement of a VOLATILE PL/pgSQL function takes a fresh
-- snapshot, so the busy check, which runs after the upsert has waited for the session row
-- lock, sees every run committed by the lock's previous holder.
--
-- A refusal raises, which rolls back everything the call wrote; the SQLSTATE says which:
--   RB001 the request id was used            RB002 the session is another owner's
--   RB003 the interaction is another session's  RB004 the session is busy (DETAIL: a JSON
--   object with the running run's run_id and request_id)
-- Parameters follow _sql.py's begin_open and begin_write; p_after is the history_after the
-- caller holds up to (when p_after_id names the message there), `known` is it then, else 0.
-- With p_config_set the session's configuration becomes p_config (a replacing one; a
-- narrowing one depends on the stored one and takes the statement-by-statement path).
-- The tables are named with the store's schema (the migration runs with it as the search
-- path): a SET search_path clause on the function would cost every call a configuration change.

DO $do$ BEGIN EXECUTE format($create$
CREATE FUNCTION %1$I.begin_step(
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
    IF p_request_id IS NOT NULL AND EXISTS (SELECT 1 FROM %1$I.runs WHERE request_id = p_request_id)
    THEN
        RAISE EXCEPTION USING ERRCODE = 'RB001', MESSAGE = 'request id already used';
    END IF;
    -- Creates the session or locks it; the first non-null owner ids stick. With a required
    -- owner, an existing session of another user (or of none) is locked but not updated.
    INSERT INTO %1$I.sessions AS t (session_id, user_id, profile_id, org_id, last_seq, config)
    VALUES (p_session_id, p_user_id, p_profile_id, p_org_id, p_n,
        CASE WHEN p_config_set THEN p_config::jsonb END)
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
    IF p_exclusive THEN
        SELECT r.run_id, r.request_id INTO v_busy FROM %1$I.runs r
        WHERE r.session_id = p_session_id AND r.status = 'running' AND r.lease_expires_at > now()
        LIMIT 1;
        IF FOUND THEN
            RAISE EXCEPTION USING ERRCODE = 'RB004', MESSAGE = 'session busy',
                DETAIL = json_build_object('run_id', v_busy.run_id,
                                           'request_id', v_busy.request_id)::text;
        END IF;
    END IF;
    INSERT INTO %1$I.runs AS t (run_id, interaction_id, session_id, agent_name, status, request_id,
        lease_owner, lease_expires_at, agent_version, options)
    VALUES (p_run_id, p_interaction_id, p_session_id, p_agent_name, 'running', p_request_id,
        p_lease_owner, now() + p_ttl, p_agent_version, p_options::jsonb)
    RETURNING t.* INTO o_run;
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
    IF p_limit > 0 THEN
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
