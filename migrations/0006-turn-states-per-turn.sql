-- 0006-turn-states-per-turn: one saved row per suspended turn, not per
-- task (the key is the task, the turn and the stage that saved it), and
-- the claim of the process working on it: host, pid, the process's start
-- ("<boot id>:<start ticks>") and the end of its lease (ms since the
-- epoch, UTC).  A NULL claim_host: nobody holds the turn.  The rows of
-- 0005 are moved: turn from $.record.turn (-1 when the text is not JSON
-- or the turn is no whole number), stage from $.stage (else
-- saop-suspend).  turn_state_json is written in the verbatim form of
-- saop(7) (values jansson cannot hold as their own text).
CREATE TABLE agent_turn_states_0006 (
	task_id         TEXT NOT NULL,
	turn            INTEGER NOT NULL,
	stage           TEXT NOT NULL,
	turn_state_json TEXT NOT NULL,
	saved_at        TEXT NOT NULL,
	claim_host      TEXT,
	claim_pid       INTEGER,
	claim_start     TEXT,
	claim_until     INTEGER,
	PRIMARY KEY (task_id, turn, stage)
);
INSERT OR REPLACE INTO agent_turn_states_0006 (task_id, turn, stage,
    turn_state_json, saved_at)
SELECT task_id,
    CASE WHEN json_valid(turn_state_json) AND
	json_type(turn_state_json, '$.record.turn') = 'integer'
	THEN json_extract(turn_state_json, '$.record.turn') ELSE -1 END,
    CASE WHEN json_valid(turn_state_json) AND
	json_type(turn_state_json, '$.stage') = 'text'
	THEN json_extract(turn_state_json, '$.stage') ELSE 'saop-suspend' END,
    turn_state_json, saved_at
FROM agent_turn_states;
DROP TABLE agent_turn_states;
ALTER TABLE agent_turn_states_0006 RENAME TO agent_turn_states;
CREATE INDEX IF NOT EXISTS agent_turn_states_claim
    ON agent_turn_states (claim_host, claim_pid, claim_start);
