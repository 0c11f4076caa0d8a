/*
 * suspend-saved.h: saop-suspend's saved turns as rows (suspend-saved.c):
 * each row {task, turn, stage, saved_at, host, pid, until, live, mine}
 * and its state, or an error when the row cannot be read.
 */
#ifndef SAOP_SUSPEND_SAVED_H
#define SAOP_SUSPEND_SAVED_H

#include "cli.h"

/* The saved turns (of task, when not NULL) as a new array; exits on error. */
json_t *saved_turns(const struct cli *o, const char *task);

/* The key of a row of saved_turns() (borrowed from row). */
struct saop_turn_key saved_key(const json_t *row);

/* Say that row cannot be read (it is skipped).  Returns 65. */
int saved_bad(const json_t *row);

/*
 * --list: the saved turns, one line each (task, turn, stage, saved_at,
 * bytes received, claim), or with json one JSON array.  Returns the exit
 * status: 65 when a row cannot be read.
 */
int saved_list(const struct cli *o, int json);

/* --clear TASK: 0 when deleted, 1 when TASK had no saved turn. */
int saved_clear(const struct cli *o, const char *task);

#endif
