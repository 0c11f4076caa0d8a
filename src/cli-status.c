/*
 * cli-status.c: the exit status (see cli.h): the worse of two, and the
 * status a record's state stands for.  Owns nothing else.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>

#include "cli.h"

/*
 * The worse of two statuses (see cli.h).  Returns 3 over 1 over 0; any
 * other (a sysexits code) over those, a over b when both are.
 */
int
cli_worse(int a, int b)
{
	/* Order: 0 < 1 < 3; anything else (a sysexits code) wins. */
	static const int rank[] = { 0, 1, -1, 2 };
	int ra = a >= 0 && a <= 3 ? rank[a] : 9;
	int rb = b >= 0 && b <= 3 ? rank[b] : 9;

	return rb > ra ? b : a;
}

/*
 * The exit status a protocol's outcome stands for: the state it left its
 * record in (see cli.h).  Returns CLI_OK for OK (or none), CLI_ESCALATE
 * for USER_ESCALATION, EX_TEMPFAIL for PAUSED_FOR_INTERVENTION, else
 * CLI_FLAGGED.
 */
int
cli_status(enum saop_state s)
{
	switch (s) {
	case SAOP_STATE_NONE:	/* none, or a word of the caller's own */
	case SAOP_STATE_OK:
		return CLI_OK;
	case SAOP_STATE_USER_ESCALATION:
		return CLI_ESCALATE;
	case SAOP_STATE_PAUSED_FOR_INTERVENTION:
		return EX_TEMPFAIL;
	default:		/* TRUNCATED, INVALID, RESUME_EXHAUSTED */
		return CLI_FLAGGED;
	}
}

/* The exit status of a record whose state is the word state (cli_status()). */
int
cli_state_status(const char *state)
{
	return cli_status(saop_state_of(state));
}
