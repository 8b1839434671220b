-- Memory is keyed by organisation as well as scope (issue 11, section 2): equal scopes of two
-- organisations ("user"/"alice" of acme and of other) never share entries. '' is the
-- unscoped organisation of single-tenant deployments (callers without an org id).
ALTER TABLE memory_entries
    ADD COLUMN org_id text NOT NULL DEFAULT '' CHECK (length(org_id) <= 256);

-- Existing entries had no organisation. Each gets the one it can be proven to belong to:
-- 1. a "session" scope: the organisation of that session;
UPDATE memory_entries m SET org_id = s.org_id
  FROM sessions s
 WHERE m.scope_name = 'session' AND s.session_id = m.scope_id AND s.org_id IS NOT NULL;
-- 2. a scope naming a user id that has sessions in exactly one organisation: that one;
UPDATE memory_entries m SET org_id = u.org_id
  FROM (SELECT user_id, min(org_id) AS org_id FROM sessions
         WHERE user_id IS NOT NULL AND org_id IS NOT NULL
         GROUP BY user_id HAVING count(DISTINCT org_id) = 1) u
 WHERE m.org_id = '' AND m.scope_name <> 'session' AND m.scope_id = u.user_id;
-- 3. a scope naming an organisation (the sanitiser let backends use the org id): that one.
UPDATE memory_entries m SET org_id = m.scope_id
 WHERE m.org_id = '' AND m.scope_name <> 'session'
   AND EXISTS (SELECT 1 FROM sessions s WHERE s.org_id = m.scope_id);
-- Anything else (a user id known in several organisations, or in none) stays unscoped (''):
-- readable by unscoped callers as before, by no organisation's caller, since which tenant
-- wrote it cannot be told. docs/store.md says how an operator reassigns such entries.

DROP INDEX memory_entries_scope_idx;
CREATE INDEX memory_entries_org_scope_idx
    ON memory_entries (org_id, scope_name, scope_id, pos DESC);
