-- 0006-turn-states-per-turn (PostgreSQL): as migrations/0006: a row per
-- suspended turn (task, turn, stage) and the claim of the process working
-- on it.  The rows of 0005 are moved the same way: turn from
-- $.record.turn when it is a whole number, else -1; stage from $.stage
-- when a string, else saop-suspend (a text jsonb refuses counts as no
-- JSON).  turn_state_json stays text: jsonb would rewrite it.
CREATE FUNCTION pg_temp.saop_jsonb(t text) RETURNS jsonb LANGUAGE plpgsql
    AS $$ BEGIN RETURN t::jsonb; EXCEPTION WHEN others THEN RETURN NULL; END $$;
CREATE TABLE agent_turn_states_0006 (
	task_id         TEXT NOT NULL,
	turn            BIGINT NOT NULL,
	stage           TEXT NOT NULL,
	turn_state_json TEXT NOT NULL,
	saved_at        TEXT NOT NULL,
	claim_host      TEXT,
	claim_pid       BIGINT,
	claim_start     TEXT,
	claim_until     BIGINT,
	PRIMARY KEY (task_id, turn, stage)
);
INSERT INTO agent_turn_states_0006 (task_id, turn, stage, turn_state_json,
    saved_at)
SELECT task_id,
    CASE WHEN jsonb_typeof(j #> '{record,turn}') = 'number' AND
	(j #>> '{record,turn}') ~ '^-?[0-9]{1,18}$'
	THEN (j #>> '{record,turn}')::bigint ELSE -1 END,
    CASE WHEN jsonb_typeof(j -> 'stage') = 'string'
	THEN j ->> 'stage' ELSE 'saop-suspend' END,
    turn_state_json, saved_at
FROM (SELECT *, pg_temp.saop_jsonb(turn_state_json) AS j
    FROM agent_turn_states) AS old
ON CONFLICT (task_id, turn, stage) DO UPDATE SET
    turn_state_json = excluded.turn_state_json, saved_at = excluded.saved_at;
DROP TABLE agent_turn_states;
ALTER TABLE agent_turn_states_0006 RENAME TO agent_turn_states;
CREATE INDEX IF NOT EXISTS agent_turn_states_claim
    ON agent_turn_states (claim_host, claim_pid, claim_start);
