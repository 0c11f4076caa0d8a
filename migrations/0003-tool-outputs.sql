-- 0003-tool-outputs: raw tool outputs kept when saop-prune summarises them.
-- raw_content comes last: SQLite reads the columns before a large blob
-- without walking its overflow pages (saop-prune --list stays cheap).
-- content_hash is a 64-bit hash of raw_content; equal hashes are compared
-- byte for byte before a row is reused, so it need not be unique.
CREATE TABLE IF NOT EXISTS tool_outputs (
	id           INTEGER PRIMARY KEY,
	task_id      TEXT NOT NULL,
	tool_name    TEXT,
	tool_call_id TEXT,
	byte_size    INTEGER NOT NULL,
	turn_age     INTEGER NOT NULL,
	captured_at  TEXT NOT NULL,
	stored_at    TEXT NOT NULL,
	content_hash INTEGER NOT NULL,
	raw_content  BLOB NOT NULL
);
CREATE INDEX IF NOT EXISTS tool_outputs_hash
    ON tool_outputs (task_id, content_hash);
CREATE INDEX IF NOT EXISTS tool_outputs_tool
    ON tool_outputs (tool_name, captured_at);
