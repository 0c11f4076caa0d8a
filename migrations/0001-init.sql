-- 0001-init: tasks and their events.
CREATE TABLE IF NOT EXISTS tasks (
	task_id    TEXT PRIMARY KEY,
	status     TEXT NOT NULL CHECK (status IN ('IN_PROGRESS',
	    'PAUSED_FOR_INTERVENTION', 'USER_ESCALATION', 'DONE')),
	reason     TEXT,
	updated_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS events (
	id      INTEGER PRIMARY KEY,
	time    TEXT NOT NULL,
	task_id TEXT,
	turn    INTEGER,
	event   TEXT NOT NULL,
	data    TEXT NOT NULL DEFAULT '{}'
);
CREATE INDEX IF NOT EXISTS events_task ON events (task_id, turn);
