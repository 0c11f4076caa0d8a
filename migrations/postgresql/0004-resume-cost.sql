-- 0004-resume-cost (PostgreSQL): what each resume cost (NULL when no
-- provider reported it).
ALTER TABLE partial_completion_log ADD COLUMN IF NOT EXISTS sent_bytes BIGINT;
ALTER TABLE partial_completion_log ADD COLUMN IF NOT EXISTS received_bytes BIGINT;
ALTER TABLE partial_completion_log ADD COLUMN IF NOT EXISTS prompt_tokens BIGINT;
ALTER TABLE partial_completion_log ADD COLUMN IF NOT EXISTS completion_tokens BIGINT;
