-- 0005-agent-turn-states (PostgreSQL): the turn a model call is working
-- on, saved before each call, deleted once the turn is done.
CREATE TABLE IF NOT EXISTS agent_turn_states (
	task_id         TEXT PRIMARY KEY,
	turn_state_json TEXT NOT NULL,
	saved_at        TEXT NOT NULL
);
