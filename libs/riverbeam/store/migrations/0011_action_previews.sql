-- Approval previews (issue 13): what a held git_push or write_file would do, computed by the
-- sandbox when the call was held (NULL: a tool without previews).
ALTER TABLE actions ADD COLUMN preview jsonb;
