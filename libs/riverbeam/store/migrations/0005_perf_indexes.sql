-- Deleting a session (retention, delete_idle_sessions) cascades to its runs and actions by
-- session_id. runs had only a partial index on session_id (running runs) and actions none, so
-- each deleted session cost a sequential scan of both tables: ~14 ms a session at 20,000 runs,
-- growing with every run stored (EXPLAIN of the cascade: Seq Scan on runs). These indexes
-- make the cascade an index scan. (perf: issue 16)
CREATE INDEX runs_session_idx ON runs (session_id);
CREATE INDEX actions_session_idx ON actions (session_id);
