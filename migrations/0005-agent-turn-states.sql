-- 0005-agent-turn-states: the turn a model call is working on, saved
-- before each call and after a lost network, deleted once the turn is
-- done (saop-suspend).  turn_state_json: {"record", "stage", "received",
-- "partial", "resumes", "tool_call"}.
CREATE TABLE IF NOT EXISTS agent_turn_states (
	task_id         TEXT PRIMARY KEY,
	turn_state_json TEXT NOT NULL,
	saved_at        TEXT NOT NULL
);
