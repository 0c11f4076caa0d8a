/* err.c: filling struct saop_err and mapping codes to exit statuses. */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sysexits.h>

#include "saop-private.h"

/* Clear e (when not NULL) to "no error": zeroes, retry_after_ms -1. */
void
saop_err_clear(struct saop_err *e)
{
	if (e == NULL)
		return;
	memset(e, 0, sizeof(*e));
	e->retry_after_ms = -1;
}

/*
 * Fill e (when not NULL) with the error and the message fmt formats from
 * ap; returns -code.  The format attribute tells compilers (clang's
 * -Wformat-nonliteral) that fmt was checked at the callers.
 */
static int SAOP__PRINTF(7, 0)
vfail(struct saop_err *e, int code, int sys_errno, long line,
    long long offset, int has_offset, const char *fmt, va_list ap)
{
	if (e != NULL) {
		saop_err_clear(e);
		e->code = code;
		e->sys_errno = sys_errno;
		e->line = line;
		e->offset = offset;
		e->has_offset = has_offset;
		vsnprintf(e->msg, sizeof(e->msg), fmt, ap);
	}
	return -code;
}

/*
 * Fill e (when not NULL) with code, sys_errno and the message fmt formats.
 * Returns -code.
 */
int
saop__fail(struct saop_err *e, int code, int sys_errno, const char *fmt, ...)
{
	va_list ap;
	int rc;

	va_start(ap, fmt);
	rc = vfail(e, code, sys_errno, 0, 0, 0, fmt, ap);
	va_end(ap);
	return rc;
}

/*
 * Fill e (when not NULL) as saop__fail does, naming line and byte offset
 * too.  Returns -code.
 */
int
saop__fail_at(struct saop_err *e, int code, long line, long long offset,
    const char *fmt, ...)
{
	va_list ap;
	int rc;

	va_start(ap, fmt);
	rc = vfail(e, code, 0, line, offset, 1, fmt, ap);
	va_end(ap);
	return rc;
}

/*
 * The sysexits status a tool exits with for the error code code (0 for
 * SAOP_OK, EX_SOFTWARE for a code it does not know).
 */
int
saop_err_exit_status(int code)
{
	switch (code) {
	case SAOP_OK:
		return EX_OK;
	case SAOP_EDATA:
	case SAOP_ELIMIT:
		return EX_DATAERR;
	case SAOP_ENOINPUT:
		return EX_NOINPUT;
	case SAOP_EIO:
	case SAOP_EDB:
		return EX_IOERR;
	case SAOP_EUSAGE:
		return EX_USAGE;
	case SAOP_ECONFIG:
		return EX_CONFIG;
	case SAOP_EREFUSED:
	case SAOP_EBADREQ:
	case SAOP_EPREFILL:
		return EX_UNAVAILABLE;
	case SAOP_EPROTO:
		return EX_PROTOCOL;
	case SAOP_ENETWORK:
	case SAOP_ERATELIMIT:
	case SAOP_EBUSY:
		return EX_TEMPFAIL;
	case SAOP_EBUDGET:
		return 3;	/* as an exhausted correction */
	case SAOP_ENOMEM:
	case SAOP_EINTERNAL:
	default:
		return EX_SOFTWARE;
	}
}
