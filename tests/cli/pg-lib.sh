# pg-lib.sh: a PostgreSQL server of the test's own, sourced after lib.sh.
# pg_start runs initdb and pg_ctl in a fresh directory, as an
# unprivileged user (nobody, through runuser, when the tests run as
# root), listening on a Unix socket there and on 127.0.0.1 at a free
# port, with TLS there; the server is stopped when the test ends.
# Without the PostgreSQL binaries (or openssl) the test is skipped (77),
# or fails when SAOP_REQUIRE_ALL is set (CI installs them:
# scripts/deps).
#
#   pg_start             start it; sets pg_dir, pg_port, pg_bin, pg_password
#                        (with SAOP_TEST_PG="dir port bin" set, by
#                        tests/cli/store-both.sh, that server is used)
#   pg_newdb NAME        create database NAME; prints its URI (socket, trust)
#   pg_tcp_uri NAME PW   the URI of NAME over 127.0.0.1 with password PW
#   pg_stop / pg_again  stop the server (-m immediate) / start it again
#   pg_sql URI QUERY     one query, rows as sqlite3 prints them (a|b)
#   pg_free_port         a port of 127.0.0.1 with nothing listening

# pg_need WHAT: WHAT is missing: skip, or fail under SAOP_REQUIRE_ALL.
pg_need() {
	if [ -n "${SAOP_REQUIRE_ALL:-}" ]; then
		fail "no $1 (SAOP_REQUIRE_ALL is set; apt-get install postgresql)"
	fi
	skip "no $1: apt-get install postgresql to run the PostgreSQL tests"
}

# pg_as CMD...: run CMD as the server's user (nobody when we are root).
pg_as() {
	if [ "$(id -u)" -eq 0 ]; then
		runuser -u nobody -- "$@"
	else
		"$@"
	fi
}

# pg_free_port: a TCP port of 127.0.0.1 nobody listens on (now).
pg_free_port() {
	"$PYTHON3" -c 'import socket; s = socket.socket();
s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

pg_start() {
	if [ -n "${SAOP_TEST_PG:-}" ]; then
		# shellcheck disable=SC2086
		set -- $SAOP_TEST_PG
		pg_dir=$1 pg_port=$2 pg_bin=$3
		PGHOST=$pg_dir PGPORT=$pg_port PGUSER=saop
		export PGHOST PGPORT PGUSER
		return 0
	fi
	pg_bin=
	for _d in "$(dirname "$(command -v initdb 2>/dev/null || echo /x/x)")" \
	    /usr/lib/postgresql/*/bin; do
		if [ -x "$_d/initdb" ] && [ -x "$_d/pg_ctl" ] && [ -x "$_d/postgres" ]; then
			pg_bin=$_d
			break
		fi
	done
	[ -n "$pg_bin" ] || pg_need "PostgreSQL server (initdb, pg_ctl)"
	command -v psql >/dev/null 2>&1 || pg_need "psql"
	if [ "$(id -u)" -eq 0 ]; then
		command -v runuser >/dev/null 2>&1 || pg_need "runuser"
		id nobody >/dev/null 2>&1 || pg_need "user nobody"
	fi
	# A short path: a socket's path must fit in 107 bytes.
	pg_dir=$(mktemp -d /tmp/saop-pg.XXXXXX)
	at_exit "pg_stop; rm -rf '$pg_dir'"
	pg_password=$(od -An -N12 -tx1 /dev/urandom | tr -d ' \n')
	printf '%s\n' "$pg_password" >"$pg_dir/pw"
	[ "$(id -u)" -eq 0 ] && chown -R nobody "$pg_dir"
	pg_as "$pg_bin/initdb" -D "$pg_dir/data" -U saop -E UTF8 --no-sync \
	    --auth-local=trust --auth-host=scram-sha-256 \
	    --pwfile="$pg_dir/pw" >"$pg_dir/initdb.log" 2>&1 ||
	    fail "initdb: $(tail -5 "$pg_dir/initdb.log")"
	pg_port=$(pg_free_port)
	# TLS on 127.0.0.1, as Debian's own clusters have it (libpq's
	# default sslmode=prefer then takes it): a TCP URI goes through
	# OpenSSL in libpq, as a fleet's does.
	command -v openssl >/dev/null 2>&1 || pg_need "openssl"
	openssl req -new -x509 -days 2 -nodes -subj /CN=localhost \
	    -keyout "$pg_dir/data/server.key" -out "$pg_dir/data/server.crt" \
	    >"$pg_dir/openssl.log" 2>&1 || fail "openssl: $(cat "$pg_dir/openssl.log")"
	chmod 600 "$pg_dir/data/server.key"
	[ "$(id -u)" -eq 0 ] && chown nobody "$pg_dir/data/server.key" "$pg_dir/data/server.crt"
	pg_again
	PGHOST=$pg_dir PGPORT=$pg_port PGUSER=saop
	export PGHOST PGPORT PGUSER
	unset PGPASSWORD PGDATABASE PGSERVICE 2>/dev/null || true
}

# pg_again: start the server of pg_start (again), waiting until it answers.
pg_again() {
	pg_as "$pg_bin/pg_ctl" -D "$pg_dir/data" -l "$pg_dir/log" -w -t 120 \
	    -o "-k $pg_dir -p $pg_port -h 127.0.0.1 -c fsync=off -c max_connections=60 -c ssl=on" \
	    start >/dev/null 2>&1 || fail "pg_ctl start: $(tail -5 "$pg_dir/log")"
}

# pg_stop: stop the server at once (connections cut).
pg_stop() {
	[ -n "${SAOP_TEST_PG:-}" ] && return 0
	pg_as "$pg_bin/pg_ctl" -D "$pg_dir/data" -m immediate -w stop \
	    >/dev/null 2>&1 || true
}

pg_newdb() {
	# A server shared by several tests: names made unique.
	[ -n "${SAOP_TEST_PG:-}" ] && set -- "$1_$$_$(od -An -N4 -tx1 /dev/urandom | tr -d ' \n')"
	psql -XAtq -v ON_ERROR_STOP=1 -d postgres -c "CREATE DATABASE \"$1\"" \
	    >/dev/null || fail "cannot create database $1"
	# What the tests' queries use of SQLite's SQL, for PostgreSQL.
	psql -XAtq -v ON_ERROR_STOP=1 -d "$1" >/dev/null <<'EOF' || fail "shims"
CREATE FUNCTION json_extract(t text, p text) RETURNS text LANGUAGE sql
    IMMUTABLE AS $$ SELECT t::jsonb #>> string_to_array(substr(p, 3), '.') $$;
CREATE FUNCTION gc_step(a text, b anyelement, sep text) RETURNS text
    LANGUAGE sql IMMUTABLE AS $$ SELECT CASE WHEN b IS NULL THEN a
    WHEN a IS NULL THEN b::text ELSE a || sep || b::text END $$;
CREATE FUNCTION gc_step(a text, b anyelement) RETURNS text
    LANGUAGE sql IMMUTABLE AS $$ SELECT gc_step(a, b, ',') $$;
CREATE AGGREGATE group_concat(anyelement) (SFUNC = gc_step, STYPE = text);
CREATE AGGREGATE group_concat(anyelement, text) (SFUNC = gc_step, STYPE = text);
EOF
	echo "postgresql:///$1?host=$pg_dir&port=$pg_port&user=saop"
}

pg_tcp_uri() {
	echo "postgresql://saop:$2@127.0.0.1:$pg_port/$1"
}

pg_sql() {
	psql -XAtq -v ON_ERROR_STOP=1 -d "$1" -c "$2"
}
