/* unit.c: what the check unit tests share (see unit.h). */
#include "config.h"

#include <stdlib.h>

#include "unit.h"

/* See unit.h.  Returns EXIT_SUCCESS or EXIT_FAILURE. */
int
unit_run(Suite *s)
{
	SRunner *sr = srunner_create(s);
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
