-- 0003-tool-outputs: raw tool outputs kept when saop-prune summarises them.
CREATE TABLE IF NOT EXISTS tool_outputs (
	id           INTEGER PRIMARY KEY,
	task_id      TEXT NOT NULL,
	tool_name    TEXT,
	tool_call_id TEXT,
	raw_content  BLOB NOT NULL,
	byte_size    INTEGER NOT NULL,
	turn_age     INTEGER NOT NULL,
	captured_at  TEXT NOT NULL,
	stored_at    TEXT NOT NULL,
	sha256       TEXT NOT NULL
);
CREATE UNIQUE INDEX IF NOT EXISTS tool_outputs_hash ON tool_outputs (task_id, sha256);
CREATE INDEX IF NOT EXISTS tool_outputs_tool ON tool_outputs (tool_name, captured_at);
