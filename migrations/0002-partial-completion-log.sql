-- 0002-partial-completion-log: one row per resumed turn (saop-resume).
CREATE TABLE IF NOT EXISTS partial_completion_log (
	id                   INTEGER PRIMARY KEY,
	task_id              TEXT NOT NULL,
	turn_number          INTEGER NOT NULL,
	truncation_index     INTEGER NOT NULL,
	initial_chunk_length INTEGER NOT NULL,
	resume_attempts      INTEGER NOT NULL CHECK (resume_attempts >= 0),
	final_status         TEXT NOT NULL CHECK (final_status IN ('RESOLVED', 'EXHAUSTED')),
	timestamp            TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS partial_completion_log_task
    ON partial_completion_log (task_id, turn_number);
