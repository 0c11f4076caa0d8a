#!/bin/sh
# saop-suspend: write, then forget.  kill -9, SIGTERM and SIGINT at random
# moments of saop-suspend and of --resume, over $ROUNDS rounds of four
# turns each, stdout to a file: afterwards every turn the server answered
# is in the output or saved, and once --resume has run, every one of them
# is in an output exactly once and nothing is left saved.  The one
# exception is the window saop-suspend(1) documents: a kill -9 after a
# record was written and before its turn was forgotten makes that turn
# come twice; so a turn may come twice only when it is the last record a
# process killed with KILL wrote.
. "$top_srcdir/tests/cli/lib.sh"
. "$top_srcdir/tests/cli/suspend-lib.sh"

ROUNDS=${SAOP_KILL_ROUNDS:-100}
# The server is never away here: a --resume that finds it gone (it ran
# past its own end) fails the test in two minutes, not in MAX_WAIT.
SAOP_MAX_WAIT=2m
export SAOP_MAX_WAIT
TURNS=4
sse_openai "$tmp/a.sse" '{"ok": ' 'true}'
# Every call answered after about 4 ms: a kill lands before, during or
# after a call, or between a record's write and its forgetting.
srv_start 'body=@a.sse delay=4'

# rnd N: a random whole number from 0 to N-1.
rnd() {
	echo $(($(od -An -N2 -tu2 /dev/urandom | tr -d ' ') % $1))
}

# run_killed SIG OUT CMD...: start CMD with stdout to OUT, send SIG after a
# random 0-79 ms, wait for it.
run_killed() {
	_sig=$1 _out=$2
	shift 2
	"$@" >"$_out" 2>>"$tmp/stderr" &
	_p=$!
	sleep "0.0$(rnd 8)$(rnd 10)"
	kill -s "$_sig" "$_p" 2>/dev/null || true
	wait "$_p" 2>/dev/null || true
}

# delivered FILE...: "task turn" of every answered record in the FILEs
# (the records are written compact, task_id and turn first; no jq here:
# it would cost more than the rounds themselves).
delivered() {
	cat "$@" | grep '"raw":' | sed -n 's/^{"task_id":"\(r[0-9]*\)","turn":\([0-9]*\),.*/\1 \2/p'
}

# saved R: "task turn" of the saved turns of round R.
saved() {
	if [ -s "$SAOP_DB" ]; then
		sql "SELECT task_id || ' ' || turn FROM agent_turn_states WHERE
		    task_id = 'r$1'" | sort
	fi
}

# answered R: "task turn" of every turn of round R the server answered
# whole (flaky-http saves a body once its answer is sent).
answered() {
	grep -ho "\"q r$1/[0-9]*\"" "$SRV_SAVE"/*.body 2>/dev/null |
	    sed 's/"q \(r[0-9]*\)\/\([0-9]*\)"/\1 \2/' | sort -u
}

sigs="KILL TERM INT"
killed=0 kept=0 resumed_kills=0 windows=0
r=0
while [ "$r" -lt "$ROUNDS" ]; do
	r=$((r + 1))
	: >"$tmp/in"
	i=0
	while [ "$i" -lt "$TURNS" ]; do
		i=$((i + 1))
		printf '{"task_id":"r%s","turn":%s,"request":{"messages":[{"role":"user","content":"q r%s/%s"}]}}\n' \
		    "$r" "$i" "$r" "$i" >>"$tmp/in"
	done
	sig=$(echo $sigs | cut -d' ' -f$(($(rnd 3) + 1)))
	run_killed "$sig" "$tmp/out.$r" saop-suspend "$tmp/in"
	killed=$((killed + 1))
	: >"$tmp/window"
	[ "$sig" != KILL ] || delivered "$tmp/out.$r" | tail -n 1 >>"$tmp/window"
	# 1. Every answered turn is in the output or saved.
	answered "$r" >"$tmp/ans"
	delivered "$tmp/out.$r" | sort >"$tmp/del"
	saved "$r" >"$tmp/saved"
	lost=$(sort -u "$tmp/del" "$tmp/saved" | comm -23 "$tmp/ans" -)
	[ -z "$lost" ] || fail "round $r ($sig): answered, neither written nor saved: $lost"
	kept=$((kept + $(wc -l <"$tmp/saved")))
	# 2. Every other round, a --resume killed too, then one that ends.
	if [ $((r % 2)) -eq 0 ] && [ -s "$tmp/saved" ]; then
		sig=$(echo $sigs | cut -d' ' -f$(($(rnd 3) + 1)))
		run_killed "$sig" "$tmp/res.$r.a" saop-suspend --resume "r$r"
		resumed_kills=$((resumed_kills + 1))
		[ "$sig" != KILL ] ||
		    delivered "$tmp/res.$r.a" | tail -n 1 >>"$tmp/window"
	fi
	: >>"$tmp/res.$r.a"
	saop-suspend --resume "r$r" >"$tmp/res.$r.b" 2>>"$tmp/stderr" ||
	    fail "round $r: --resume: $(tail -n 3 "$tmp/stderr")"
	[ -z "$(saved "$r")" ] || fail "round $r: still saved after --resume"
	# 3. Once resumed: each answered turn exactly once, none twice but
	# the last record of a process killed with KILL.
	delivered "$tmp/out.$r" "$tmp/res.$r.a" "$tmp/res.$r.b" | sort >"$tmp/all"
	sort -u "$tmp/window" >"$tmp/window.s"
	twice=$(uniq -d "$tmp/all" | comm -23 - "$tmp/window.s")
	[ -z "$twice" ] || fail "round $r: delivered twice: $twice"
	thrice=$(uniq -c "$tmp/all" | awk '$1 > 2 { print $2, $3 }')
	[ -z "$thrice" ] || fail "round $r: delivered more than twice: $thrice"
	windows=$((windows + $(uniq -d "$tmp/all" | wc -l)))
	lost=$(answered "$r" | comm -23 - "$tmp/all")
	[ -z "$lost" ] || fail "round $r: answered but never delivered: $lost"
	# Whatever was delivered is whole.
	! cat "$tmp/out.$r" "$tmp/res.$r.a" "$tmp/res.$r.b" | grep '"raw":' |
	    grep -v '"raw":"{\\"ok\\": true}"' || fail "round $r: a record is not whole"
done
echo "suspend-interrupt: $ROUNDS rounds, $killed saop-suspend and" \
    "$resumed_kills --resume processes signalled; $kept turns found saved;" \
    "$windows turns twice through the kill -9 window" >&2
[ "$kept" -gt 0 ] || fail "no round left a turn saved: the kills came too late"
exit 0
