-- 0004-resume-cost: what each resume cost (saop-resume): the bytes of the
-- resume turns sent, the bytes of the answers received, and the tokens
-- the providers reported (NULL when none did, and in rows written before
-- this step).  Applied once (PRAGMA user_version), inside a transaction.
ALTER TABLE partial_completion_log ADD COLUMN sent_bytes INTEGER;
ALTER TABLE partial_completion_log ADD COLUMN received_bytes INTEGER;
ALTER TABLE partial_completion_log ADD COLUMN prompt_tokens INTEGER;
ALTER TABLE partial_completion_log ADD COLUMN completion_tokens INTEGER;
