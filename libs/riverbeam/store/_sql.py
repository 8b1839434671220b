"""The SQL of the Postgres store, qualified with its schema.

Every write that touches more than one row runs in one transaction (see _postgres.py). JSON is
passed as text and cast to jsonb in SQL, so the store works on any pool, whatever codecs its
connections have.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Statements", "column_slices"]

SESSION_COLS = (
    "session_id, user_id, profile_id, org_id, metadata, last_seq, created_at, last_active_at,"
    " config"
)
INTERACTION_COLS = (
    "interaction_id, session_id, agent_name, status, created_at, updated_at, agent_version"
)
RUN_COLS = (
    "run_id, interaction_id, session_id, agent_name, status, request_id, started_at, finished_at,"
    " error_code, error_message, token_usage, model_used, lease_owner, lease_expires_at, result,"
    " lease_epoch, agent_version, options, holders, parent_run_id"
)
MESSAGE_COLS = (
    "message_id, session_id, interaction_id, run_id, seq, role, type, content, tool_call_id,"
    " tool_name, tool_args, tool_result, metadata, created_at"
)
ACTION_COLS = (
    "pos, action_id, session_id, interaction_id, run_id, kind, tool, args, tool_call_id, status,"
    " created_at, resolved_at, response, outcome, result, error, agent_name, user_id, expires_at,"
    " preview, child"
)
MEMORY_COLS = "pos, entry_id, org_id, scope_name, scope_id, content, metadata, created_at"


def _prefixed(cols: str, alias: str) -> str:
    return ", ".join(f"{alias}.{c.strip()}" for c in cols.split(","))


_LIVE_RUN = "status = 'running' AND lease_expires_at > now()"


def column_slices(flat: str, count: str, columns: range) -> list[str]:
    """Arguments cut from one text[] parameter `flat` that holds columns of `count` values
    each, one after the other: column i is (flat)[i * count + 1 : (i + 1) * count].

    asyncpg encodes every array parameter on its own, and a step's arrays are short (one
    value each, for a turn's one message): one array of nine values costs the store process
    a fraction of nine arrays of one. The slices give the step functions their arrays as
    before, so their signatures (migrations 0013 and 0014) stay.
    """
    return [f"({flat}::text[])[{i} * {count}::int + 1:{i + 1} * {count}::int]" for i in columns]


@dataclass(frozen=True, slots=True)
class Statements:
    """Every statement of the store, for one schema (already quoted)."""

    get_session: str
    session_exists: str
    get_interaction: str
    interaction_exists: str
    get_run: str
    get_run_by_request: str
    list_runs: str
    get_action: str
    list_messages: str
    list_pending: str
    session_busy: str
    expire_actions: str
    resume_interaction: str
    resolve_action: str
    action_state: str
    finish_run: str
    record_outcome: str
    append_message: str
    renew_lease: str
    reap: str
    take_over: str
    run_fence: str
    remember: str
    recall: str
    delete_idle: str
    begin_open: str
    begin_write: str
    finish_step: str

    @classmethod
    def for_schema(cls, q: str) -> Statements:
        insert_message_cols = (
            "message_id, session_id, interaction_id, run_id, seq, role, type, content, tool_call_id,"
            " tool_name, tool_args, tool_result, metadata"
        )
        return cls(
            get_session=f"SELECT {SESSION_COLS} FROM {q}.sessions WHERE session_id = $1",
            session_exists=f"SELECT EXISTS (SELECT 1 FROM {q}.sessions WHERE session_id = $1)",
            get_interaction=f"SELECT {INTERACTION_COLS} FROM {q}.interactions WHERE interaction_id = $1",
            interaction_exists=f"SELECT EXISTS (SELECT 1 FROM {q}.interactions WHERE interaction_id = $1)",
            get_run=f"SELECT {RUN_COLS} FROM {q}.runs WHERE run_id = $1",
            get_run_by_request=f"SELECT {RUN_COLS} FROM {q}.runs WHERE request_id = $1",
            list_runs=(
                f"SELECT {RUN_COLS} FROM {q}.runs WHERE interaction_id = $1 ORDER BY started_at, run_id"
            ),
            get_action=f"SELECT {ACTION_COLS} FROM {q}.actions WHERE action_id = $1",
            list_messages=(
                f"SELECT {MESSAGE_COLS} FROM {q}.messages WHERE session_id = $1 AND seq > $2"
                " ORDER BY seq LIMIT $3"
            ),
            list_pending=(
                f"SELECT {ACTION_COLS} FROM {q}.actions WHERE status = 'pending' AND pos > $1"
                " AND (expires_at IS NULL OR expires_at > now())"
                " AND ($2::text IS NULL OR session_id = $2) AND ($3::text IS NULL OR user_id = $3)"
                " ORDER BY pos LIMIT $4"
            ),
            # The sweeper: expired pending actions become `expired` (SKIP LOCKED: a resume
            # holding one, or another sweeper, is not waited for).
            expire_actions=(
                f"WITH due AS (SELECT action_id FROM {q}.actions WHERE status = 'pending'"
                " AND expires_at <= COALESCE($1::timestamptz, now())"
                " ORDER BY pos LIMIT $2 FOR UPDATE SKIP LOCKED)"
                f" UPDATE {q}.actions a SET status = 'expired', resolved_at = now()"
                f" FROM due WHERE a.action_id = due.action_id RETURNING {_prefixed(ACTION_COLS, 'a')}"
            ),
            session_busy=(
                f"SELECT run_id, request_id FROM {q}.runs"
                f" WHERE session_id = $1 AND {_LIVE_RUN} LIMIT 1"
            ),
            resume_interaction=(
                f"UPDATE {q}.interactions SET status = 'in_progress', updated_at = now()"
                f" WHERE interaction_id = $1 AND session_id = $2 RETURNING {INTERACTION_COLS}"
            ),
            # The compare-and-set: of concurrent resolvers only one sees the row still pending.
            resolve_action=(
                f"UPDATE {q}.actions SET status = $3, outcome = $4, response = $5::jsonb,"
                " resolved_at = now()"
                f" WHERE action_id = $1 AND interaction_id = $2 AND status = 'pending'"
                " AND (expires_at IS NULL OR expires_at > now())"
                f" RETURNING {ACTION_COLS}"
            ),
            action_state=(
                f"SELECT interaction_id, status, expires_at <= now() AS expired"
                f" FROM {q}.actions WHERE action_id = $1"
            ),
            # The compare-and-set that closes a run: only from running, only by its lease owner.
            finish_run=(
                f"UPDATE {q}.runs SET status = $3, finished_at = now(), error_code = $4,"
                " error_message = $5, token_usage = $6::jsonb, model_used = $7, result = $8::jsonb"
                f" WHERE run_id = $1 AND lease_owner = $2 AND status = 'running'"
                f" AND ($9::bigint IS NULL OR lease_epoch = $9::bigint) RETURNING {RUN_COLS}"
            ),
            record_outcome=(
                f"UPDATE {q}.actions SET outcome = $2, result = $3::jsonb, error = $4"
                " WHERE action_id = $1 AND status = 'resolved' AND outcome = 'approved_unknown'"
                f" RETURNING {ACTION_COLS}"
            ),
            # One statement, so one implicit transaction: the bump and the insert, or neither.
            append_message=(
                f"WITH bumped AS (UPDATE {q}.sessions SET last_seq = last_seq + 1, last_active_at = now()"
                " WHERE session_id = $1 RETURNING last_seq)"
                f" INSERT INTO {q}.messages ({insert_message_cols})"
                " SELECT $2, $1, $3, $4, bumped.last_seq, $5, $6, $7::jsonb, $8, $9, $10::jsonb,"
                " $11::jsonb, $12::jsonb FROM bumped"
                f" RETURNING {MESSAGE_COLS}"
            ),
            renew_lease=(
                f"UPDATE {q}.runs SET lease_expires_at = now() + $3::interval"
                " WHERE run_id = $1 AND lease_owner = $2 AND status = 'running'"
                " AND ($4::bigint IS NULL OR lease_epoch = $4::bigint)"
            ),
            # SKIP LOCKED: concurrent reapers (and a finishing runner holding the row) never
            # both take one run.
            reap=(
                f"WITH expired AS (SELECT run_id FROM {q}.runs"
                " WHERE status = 'running' AND lease_expires_at < COALESCE($1::timestamptz, now())"
                " ORDER BY lease_expires_at LIMIT $2 FOR UPDATE SKIP LOCKED),"
                f" failed AS (UPDATE {q}.runs r SET status = 'failed', finished_at = now(),"
                " error_code = $3, error_message = $4, lease_epoch = r.lease_epoch + 1"
                " FROM expired WHERE r.run_id = expired.run_id"
                f" RETURNING {_prefixed(RUN_COLS, 'r')}),"
                f" closed AS (UPDATE {q}.interactions i SET status = 'failed', updated_at = now()"
                " FROM failed WHERE i.interaction_id = failed.interaction_id)"
                " SELECT * FROM failed ORDER BY lease_expires_at, run_id"
            ),
            # The takeover compare-and-set: the epoch moves on under the row lock, so of
            # concurrent takers (SKIP LOCKED) one gets each run, and the old holder's fenced
            # writes (WHERE lease_epoch = its epoch) match nothing from then on.
            take_over=(
                f"WITH expired AS (SELECT run_id, lease_owner AS previous_owner FROM {q}.runs"
                " WHERE status = 'running' AND lease_expires_at < COALESCE($1::timestamptz, now())"
                " AND NOT (run_id = ANY($5::text[]))"
                " ORDER BY lease_expires_at LIMIT $2 FOR UPDATE SKIP LOCKED),"
                f" taken AS (UPDATE {q}.runs r SET lease_epoch = r.lease_epoch + 1,"
                " lease_owner = $3, lease_expires_at = now() + $4::interval,"
                # The runners that held it: the first holder, then each taker.
                " holders = (CASE WHEN cardinality(r.holders) = 0"
                " THEN ARRAY[COALESCE(expired.previous_owner, '')] ELSE r.holders END) || $3::text"
                " FROM expired WHERE r.run_id = expired.run_id"
                f" RETURNING {_prefixed(RUN_COLS, 'r')}, expired.previous_owner)"
                " SELECT * FROM taken ORDER BY started_at, run_id"
            ),
            # Read under a share lock: a takeover (an UPDATE of the row) waits for the step.
            run_fence=(
                f"SELECT status, lease_owner, lease_epoch FROM {q}.runs WHERE run_id = $1 FOR SHARE"
            ),
            remember=(
                f"INSERT INTO {q}.memory_entries"
                " (entry_id, scope_name, scope_id, content, metadata, org_id)"
                f" VALUES ($1, $2, $3, $4, $5::jsonb, $6) RETURNING {MEMORY_COLS}"
            ),
            recall=(
                f"SELECT {MEMORY_COLS} FROM {q}.memory_entries WHERE org_id = $4"
                " AND (scope_name, scope_id) IN (SELECT * FROM unnest($1::text[], $2::text[]))"
                " ORDER BY pos DESC LIMIT $3"
            ),
            delete_idle=(
                f"WITH gone AS (DELETE FROM {q}.sessions s WHERE s.last_active_at < now() - $1::interval"
                f" AND NOT EXISTS (SELECT 1 FROM {q}.runs r WHERE r.session_id = s.session_id"
                " AND r.status = 'running' AND r.lease_expires_at > now()) RETURNING 1)"
                " SELECT count(*) FROM gone"
            ),
            # begin_open and begin_write: begin_run statement by statement, for a resume and
            # a narrowing session configuration (_pg_begin.py); every other begin_run is one
            # call of the begin_step function (migration 0013), which does what they do.
            # begin_run's first statement: the request-id check, the session upsert and, with
            # $12, the new interaction. The upsert creates the session or locks it; the first
            # non-null owner ids stick, and $5 sequence numbers are allocated for the messages
            # begin_run saves. With $6 (the required owner) an existing session of another
            # user, or of none, is locked but not updated and comes back null: the owner is
            # checked under the row lock, after any concurrent creator has committed. An
            # interaction id is reused only within its own session. Nothing is written when
            # the request id was used; no interaction when the session is refused.
            begin_open=(
                f"WITH used AS (SELECT $8::text IS NOT NULL AND EXISTS"
                f" (SELECT 1 FROM {q}.runs WHERE request_id = $8::text) AS used),"
                f" s AS (INSERT INTO {q}.sessions AS t (session_id, user_id, profile_id, org_id, last_seq)"
                " SELECT $1, $2, $3, $4, $5 FROM used WHERE NOT used.used"
                " ON CONFLICT (session_id) DO UPDATE SET"
                " user_id = COALESCE(t.user_id, EXCLUDED.user_id),"
                " profile_id = COALESCE(t.profile_id, EXCLUDED.profile_id),"
                " org_id = COALESCE(t.org_id, EXCLUDED.org_id),"
                " last_seq = t.last_seq + EXCLUDED.last_seq, last_active_at = now()"
                " WHERE $6::text IS NULL OR (t.user_id = $6::text"
                " AND ($7::text IS NULL OR t.org_id IS NULL OR t.org_id = $7::text))"
                " RETURNING t AS row),"
                f" i AS (INSERT INTO {q}.interactions AS t (interaction_id, session_id, agent_name,"
                " status, agent_version) SELECT $9, $1, $10, 'in_progress', $11 FROM s WHERE $12::bool"
                " ON CONFLICT (interaction_id) DO UPDATE SET status = 'in_progress', updated_at = now()"
                " WHERE t.session_id = EXCLUDED.session_id RETURNING t AS row)"
                " SELECT used.used, (SELECT row FROM s) AS session, (SELECT row FROM i) AS interaction"
                " FROM used"
            ),
            # begin_run's second statement, after the first locked the session row (so its
            # snapshot holds every run and message of the session committed before the lock):
            # with $9 the busy check, then the run (its options $16) and its messages (numbered
            # from $10; their columns in $15, $17 values each: column_slices) only when not
            # busy, and the history: the newest $12 messages numbered up to $11, oldest first,
            # leaving out those up to $13 when the message at $13 has the id $14 (the caller
            # holds them); `known` is $13 then, else 0.
            begin_write=(
                f"WITH busy AS (SELECT run_id, request_id FROM {q}.runs"
                f" WHERE $9::bool AND session_id = $3 AND {_LIVE_RUN} LIMIT 1),"
                f" r AS (INSERT INTO {q}.runs (run_id, interaction_id, session_id, agent_name, status,"
                " request_id, lease_owner, lease_expires_at, agent_version, options)"
                " SELECT $1, $2, $3, $4, 'running', $5, $6, now() + $7::interval, $8, $16::jsonb"
                f" WHERE NOT EXISTS (SELECT 1 FROM busy) RETURNING {RUN_COLS}),"
                f" m AS (INSERT INTO {q}.messages AS x ({insert_message_cols})"
                " SELECT u.message_id, r.session_id, r.interaction_id, r.run_id, $10::bigint + u.n - 1,"
                " u.role, u.type, u.content::jsonb, u.tool_call_id, u.tool_name, u.tool_args::jsonb,"
                " u.tool_result::jsonb, u.metadata::jsonb"
                f" FROM r, unnest({', '.join(column_slices('$15', '$17', range(9)))}) WITH ORDINALITY"
                " AS u(message_id, role, type, content, tool_call_id, tool_name, tool_args,"
                " tool_result, metadata, n)"
                " RETURNING x AS row, x.seq),"
                f" known AS (SELECT COALESCE((SELECT x.seq FROM {q}.messages x WHERE x.session_id = $3"
                " AND x.seq = $13::bigint AND x.seq <= $11::bigint AND x.message_id = $14::text), 0)"
                " AS seq),"
                f" h AS (SELECT x AS row, x.seq FROM {q}.messages x WHERE x.session_id = $3"
                " AND x.seq <= $11::bigint"
                " AND x.seq > GREATEST($11::bigint - $12::bigint, (SELECT seq FROM known))"
                " ORDER BY x.seq DESC LIMIT $12)"
                " SELECT r.*, b.run_id AS busy_run_id, b.request_id AS busy_request_id,"
                " (SELECT seq FROM known) AS known,"
                " ARRAY(SELECT row FROM m ORDER BY seq) AS saved,"
                " ARRAY(SELECT row FROM h ORDER BY seq) AS history"
                " FROM (SELECT 1) AS one LEFT JOIN r ON true LEFT JOIN busy b ON true"
            ),
            # finish_run in one statement: a call of the finish_step function (migration 0014)
            # with the compare-and-set of finish_run, then (only when it took the row) the
            # session's next $10 numbers, the messages, the interaction's status ($12) and the
            # pending actions with their previews and child links; rows locked run -> session ->
            # interaction, as every other step does (a resume holds the session and then
            # updates the interaction; taking the interaction before the session here would
            # deadlock with it). The finished run, or no row.
            # The message columns come in $11 ($15 values each), the action columns in $13
            # ($16 each): column_slices.
            finish_step=(
                f"SELECT {RUN_COLS} FROM {q}.finish_step("
                + ", ".join(
                    [f"${i}" for i in range(1, 11)]
                    + column_slices("$11", "$15", range(9))
                    + ["$12"]
                    + column_slices("$13", "$16", range(5))
                    + ["$14"]
                    + column_slices("$13", "$16", range(5, 7))
                )
                + ")"
            ),
        )
