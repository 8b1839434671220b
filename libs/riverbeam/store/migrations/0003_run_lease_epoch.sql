-- Fencing: every run's lease carries an epoch, 1 at begin-run and bumped by each takeover
-- (the reaper, a recovering replica). Writes made under an older epoch are refused.
ALTER TABLE runs ADD COLUMN lease_epoch bigint NOT NULL DEFAULT 1 CHECK (lease_epoch >= 1);
