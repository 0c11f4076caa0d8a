/*
 * unit.h: what the check unit tests share (tests/unit/unit.c), so that a
 * test file holds its cases and nothing else: the run of a suite.
 */
#ifndef SAOP_UNIT_H
#define SAOP_UNIT_H

#include <check.h>

/*
 * Run every case of the suite s (taken: freed with its runner), each in
 * a process of its own as check does by default, and report as check
 * does.  Returns main()'s status: EXIT_SUCCESS when none failed, else
 * EXIT_FAILURE.
 */
int unit_run(Suite *s);

#endif
