/*
 * saop.h: the public interface of libsaop, the library behind the saop
 * tools.  Every public type and call is declared here, with who owns what.
 *
 * Conventions (as in jansson and XZ Utils):
 *  - Calls that can fail take a caller-owned struct saop_err, return 0 (or
 *    a count, or a pointer) on success and a negative enum saop_errcode
 *    (or NULL) on failure, and then fill the struct.  The library never
 *    prints and never exits.
 *  - "new": the caller owns the result and frees it with the named call.
 *    "borrowed": valid until the named event.  "steals": the callee takes
 *    the caller's reference.
 *  - saop_x_free(NULL) is a no-op.
 *
 * Sections, one per concern: errors, records, detect (the scanner), store
 * (state.sqlite and events), llm (the model client), resume, schema,
 * repair, validate, prune.
 */
#ifndef SAOP_H
#define SAOP_H

#include <stddef.h>
#include <stdio.h>
#include <stdint.h>
#include <jansson.h>

#ifdef __cplusplus
extern "C" {
#endif

#define SAOP_VERSION "0.1.0"

/* ---- Constants of the protocols (DESIGN.md), named once. ---- */
#define SAOP_MAX_RESUME_ATTEMPTS	2
#define SAOP_MAX_CORRECTION_RETRIES	2
#define SAOP_MAX_AUTO_RESUME		3
#define SAOP_NETWORK_POLL_INTERVAL_MS	5000
#define SAOP_LARGE_OUTPUT_THRESHOLD_BYTES 51200
#define SAOP_PRUNE_MIN_TURN_AGE		2
#define SAOP_SUMMARY_CHARS		500
/* Longest record line, and longest raw text, read by default (-L). */
#define SAOP_MAX_RECORD_BYTES		((size_t)256 << 20)
/* Deepest nesting the scanner follows by default (--max-depth). */
#define SAOP_MAX_DEPTH			100000

/* ======================================================================
 * Errors
 * ====================================================================== */

/*
 * Error codes.  Functions return the negative of these.  Numbers are only
 * ever appended.  Each names the exit status a tool maps it to.
 */
enum saop_errcode {
	SAOP_OK = 0,
	SAOP_ENOMEM = 1,	/* out of memory (70) */
	SAOP_EINTERNAL = 2,	/* a broken invariant (70) */
	SAOP_EDATA = 3,		/* input is not what the tool reads (65) */
	SAOP_ELIMIT = 4,	/* input over a documented size limit (65) */
	SAOP_ENOINPUT = 5,	/* a named input cannot be opened (66) */
	SAOP_EIO = 6,		/* a file could not be read or written (74) */
	SAOP_EDB = 7,		/* the state database failed (74) */
	SAOP_EUSAGE = 8,	/* bad arguments (64) */
	SAOP_ECONFIG = 9,	/* configuration: key, provider, schema file (78) */
	SAOP_EREFUSED = 10,	/* the endpoint refused for good (69) */
	SAOP_EPROTO = 11,	/* the endpoint spoke no protocol we know (76) */
	SAOP_ENETWORK = 12,	/* the network failed; worth waiting (75) */
	SAOP_ERATELIMIT = 13,	/* 429/503/529 that waiting can fix (75) */
	SAOP_EPREFILL = 14,	/* the model refused assistant prefill (400) */
	SAOP_EBADREQ = 15	/* the endpoint said the request is wrong (69) */
};

/*
 * What went wrong, filled by the library, owned by the caller.  line and
 * offset are 0 when unknown (lines count from 1, offsets from 0 but are
 * then shown only when has_offset is set).  field is a JSON Pointer or "".
 * msg is one line and never holds a secret.
 */
struct saop_err {
	int code;		/* enum saop_errcode, positive */
	int sys_errno;		/* errno when a system call failed, else 0 */
	long line;		/* input line, from 1; 0 when not known */
	long long offset;	/* byte offset in the line or input */
	int has_offset;
	long retry_after_ms;	/* SAOP_ERATELIMIT: the server's wait, or -1 */
	int http_status;	/* the endpoint's status, or 0 */
	char field[256];
	char msg[512];
};

/* Clear e to "no error". */
void saop_err_clear(struct saop_err *e);

/* The exit status (sysexits) a tool returns for error code code. */
int saop_err_exit_status(int code);

/* ======================================================================
 * Records: NDJSON turn records on the pipe.
 * ====================================================================== */

struct saop_reader;

/*
 * Open path ("-" is standard input) to read records, one JSON object per
 * line, each at most max_line bytes (0: SAOP_MAX_RECORD_BYTES).
 * Returns new reader (free with saop_reader_close()), or NULL and
 * SAOP_ENOINPUT.
 */
struct saop_reader *saop_reader_open(const char *path, size_t max_line,
    struct saop_err *e);

/*
 * Read the next record into *rec (new reference).  Returns 1 with a
 * record, 0 at the end of input, or a negative code: SAOP_EDATA naming the
 * line and byte of a line that is not a JSON object, SAOP_ELIMIT for a line
 * over the limit, SAOP_EIO.  Blank lines are skipped.
 */
int saop_reader_next(struct saop_reader *r, json_t **rec, struct saop_err *e);

/* The line number of the record last returned (from 1). */
long saop_reader_line(const struct saop_reader *r);

/* Close r and free it. */
void saop_reader_close(struct saop_reader *r);

/*
 * Read all of f (to the end) into a new NUL-terminated buffer *buf (free
 * with free()), *len bytes; at most max bytes (0: SAOP_MAX_RECORD_BYTES),
 * else SAOP_ELIMIT.  For -r, raw input.
 */
int saop_read_all(FILE *f, char **buf, size_t *len, size_t max,
    struct saop_err *e);

/*
 * Write rec as one compact line (keys in their order, no ASCII escaping of
 * UTF-8) followed by LF.  Returns 0, or SAOP_EIO.
 */
int saop_record_write(FILE *f, const json_t *rec, struct saop_err *e);

/*
 * The raw text of rec: borrowed pointer to its "raw" string and its length
 * (which may hold NUL bytes), or NULL when rec has no string "raw".
 */
const char *saop_record_raw(const json_t *rec, size_t *len);

/* Set rec.state to state (one of the SAOP states).  Returns 0 or ENOMEM. */
int saop_record_set_state(json_t *rec, const char *state);

/* ======================================================================
 * Detect: the streaming scanner (lib/detect.c).
 * ====================================================================== */

enum saop_verdict {
	SAOP_COMPLETE = 0,
	SAOP_TRUNCATED = 1,
	SAOP_INVALID = 2
};

struct saop_detector;

/*
 * The verdict on one input and where it stands.  Strings are owned by the
 * result and freed by saop_detect_result_free().
 */
struct saop_detect_result {
	enum saop_verdict verdict;
	int empty;		/* nothing but white space (verdict TRUNCATED) */
	int bom;		/* a UTF-8 BOM was skipped at the start */
	uint64_t length;	/* bytes scanned */
	/* TRUNCATED: */
	uint64_t truncation_index;	/* end of the last complete token */
	char *last_valid_token;	/* its text (at most 256 bytes: a tail) */
	char *open;		/* open containers, outermost first: "{[{" */
	const char *expected;	/* what could come next, in words */
	char *closing;		/* shortest suffix that makes it valid JSON */
	/* INVALID: */
	uint64_t error_offset;	/* byte offset of the first invalid byte */
	long error_line;	/* its line, from 1 */
	long error_column;	/* its column in bytes, from 1 */
	char error[128];	/* why, in words */
};

struct saop_detector;

/* DETECT-SECTION: further declarations of lib/detect.c go here. */


/* ======================================================================
 * Store: state.sqlite, migrations, tasks and events (lib/store.c).
 * ====================================================================== */

struct saop_store;

/*
 * Open (creating when missing) the state database at path; NULL means
 * $SAOP_DB, else .saop/state.sqlite under the working directory.  A
 * missing directory is made with mode 0700 and the file with 0600.  WAL
 * mode, busy timeout, foreign keys; every migration not yet applied is
 * applied.  Returns new store (saop_store_close()), or NULL and SAOP_EDB
 * or SAOP_EIO.
 */
struct saop_store *saop_store_open(const char *path, struct saop_err *e);

/* Close s; NULL is a no-op. */
void saop_store_close(struct saop_store *s);

/* The path s was opened at (borrowed: valid until saop_store_close()). */
const char *saop_store_path(const struct saop_store *s);

/* The schema version: the number of the last migration applied. */
int saop_store_version(struct saop_store *s);

/*
 * Also append every event as an NDJSON line to path ("-": stderr).  NULL
 * stops it.  Returns 0 or SAOP_EIO.
 */
int saop_store_set_log(struct saop_store *s, const char *path,
    struct saop_err *e);

/*
 * Record one event: a row in events (time, task_id, turn, event, data)
 * and, with a log, one NDJSON line.  turn < 0 means none.  data may be
 * NULL (borrowed).  Returns 0 or SAOP_EDB / SAOP_EIO.
 */
int saop_event(struct saop_store *s, const char *task_id, long turn,
    const char *event, const json_t *data, struct saop_err *e);

/*
 * Set the task's status (IN_PROGRESS, PAUSED_FOR_INTERVENTION,
 * USER_ESCALATION, DONE) and reason (may be NULL), creating the row.
 */
int saop_task_set_status(struct saop_store *s, const char *task_id,
    const char *status, const char *reason, struct saop_err *e);

/* The current UTC time as ISO 8601 with milliseconds, into buf[32]. */
void saop_now_iso8601(char buf[32]);

/* ======================================================================
 * LLM: the model client (lib/llm.c).
 * ====================================================================== */

enum saop_provider {
	SAOP_PROVIDER_OPENAI = 0,	/* OpenAI-compatible chat completions */
	SAOP_PROVIDER_ANTHROPIC = 1	/* Anthropic Messages */
};

/*
 * How to reach the model.  Filled by saop_llm_config_from_env(); the
 * strings are owned by the config (saop_llm_config_free()).
 */
struct saop_llm_config {
	enum saop_provider provider;
	char *base;		/* base URL, e.g. https://api.openai.com/v1 */
	char *key;		/* secret: never printed, logged or stored */
	char *model;		/* when the request names none; may be NULL */
	long timeout_ms;	/* whole call ($SAOP_TIMEOUT_MS, 600000) */
	long connect_timeout_ms;
	int stream;		/* 1: SSE (the default); 0: one JSON body */
	/*
	 * The seam for saop-suspend: when not NULL, called after a failed
	 * call classified SAOP_ENETWORK or SAOP_ERATELIMIT with the error and
	 * the number of the attempt (from 1).  Return 1 to call again, 0 to
	 * give up.  NULL: no retry.
	 */
	int (*on_failure)(void *arg, const struct saop_err *e, int attempt);
	void *on_failure_arg;
};

/*
 * Fill cfg from SAOP_PROVIDER, SAOP_API_BASE, SAOP_API_KEY (else
 * OPENAI_API_KEY / ANTHROPIC_API_KEY), SAOP_MODEL, SAOP_TIMEOUT_MS.
 * Returns 0, or SAOP_ECONFIG for an unknown provider or a bad timeout.  A
 * missing key is not an error here (saop_llm_configured() tells).
 */
int saop_llm_config_from_env(struct saop_llm_config *cfg, struct saop_err *e);

/* 1 when cfg has a key (or an explicit SAOP_API_BASE): a model to call. */
int saop_llm_configured(const struct saop_llm_config *cfg);

/* Free the strings of cfg (not cfg itself). */
void saop_llm_config_free(struct saop_llm_config *cfg);

/* A normalised answer.  Strings owned by it (saop_llm_answer_free()). */
struct saop_llm_answer {
	char *raw;		/* the text received, NUL-terminated; never NULL after a call */
	size_t raw_len;
	char finish_reason[16];	/* stop, length, tool_calls, error; "" if none came */
	int broken;		/* the stream ended without a finish reason */
	long prompt_tokens;	/* -1 when not reported */
	long completion_tokens;
	int http_status;
	json_t *tool_calls;	/* OpenAI-style tool calls, or NULL */
};

/* Free what a holds and zero it. */
void saop_llm_answer_free(struct saop_llm_answer *a);

/*
 * Send request (a record's provider-neutral "request": model, messages,
 * max_tokens, system, tools...; borrowed) and fill a.  Returns 0 when the
 * model answered with a finish reason.  Else a negative code, with
 * whatever text arrived still in a->raw: SAOP_ENETWORK (connection,
 * timeout, 5xx, 529, a stream cut before its finish reason),
 * SAOP_ERATELIMIT (429 that waiting fixes; e->retry_after_ms),
 * SAOP_EREFUSED (401, 403, 404, quota, x-should-retry: false),
 * SAOP_EPREFILL (the model refuses assistant prefill), SAOP_EBADREQ
 * (another 400), SAOP_EPROTO (not the protocol), SAOP_ECONFIG (no key).
 * The key never appears in e.
 */
int saop_llm_call(const struct saop_llm_config *cfg, const json_t *request,
    struct saop_llm_answer *a, struct saop_err *e);

/*
 * Write to f what saop_llm_call() would send, the key masked: the method
 * and URL, the headers, a blank line and the JSON body.  For --dry-run.
 */
int saop_llm_dry_run(FILE *f, const struct saop_llm_config *cfg,
    const json_t *request, struct saop_err *e);

/* LLM-SECTION: further declarations of lib/llm.c go here. */


/* ======================================================================
 * Resume: the partial-completion resume protocol (lib/resume.c).
 * ====================================================================== */

/* RESUME-SECTION: declarations of lib/resume.c go here. */

/* ======================================================================
 * Schema: JSON Schema 2020-12 / draft-07 validation (lib/schema.c).
 * ====================================================================== */

struct saop_schema;

/* How to compile a schema. */
struct saop_schema_opts {
	/* "URI=DIR" pairs: a $ref under URI is read from DIR; NULL-ended. */
	const char *const *ref_dirs;
	int format_assert;	/* assert "format" instead of annotating */
};

/*
 * Compile schema (borrowed) with base URI base (may be NULL).  Returns a
 * new schema (saop_schema_free()), or NULL and SAOP_ECONFIG naming the
 * schema location that is wrong.
 */
struct saop_schema *saop_schema_compile(const json_t *schema,
    const char *base, const struct saop_schema_opts *opts,
    struct saop_err *e);

/* Read and compile the schema file path; SAOP_ECONFIG when unreadable. */
struct saop_schema *saop_schema_load(const char *path,
    const struct saop_schema_opts *opts, struct saop_err *e);

/* The SAOP envelope v1 schema embedded in the library. */
struct saop_schema *saop_schema_envelope_v1(struct saop_err *e);

/*
 * Validate instance (borrowed).  Returns 1 valid, 0 invalid, or a negative
 * code.  When invalid and errors is not NULL, *errors is a new array of
 * every error: {"path": JSON Pointer in the instance, "keyword": the
 * keyword, "schema_path": JSON Pointer in the schema, "message": words a
 * model can act on}.
 */
int saop_schema_validate(const struct saop_schema *s, const json_t *instance,
    json_t **errors, struct saop_err *e);

/* Free s; NULL is a no-op. */
void saop_schema_free(struct saop_schema *s);

/* SCHEMA-SECTION: further declarations of lib/schema.c go here. */


/* ======================================================================
 * Repair and validate: local repair and the correction protocol
 * (lib/repair.c, lib/validate.c).
 * ====================================================================== */

/* VALIDATE-SECTION: declarations of lib/repair.c and lib/validate.c go here. */

/* ======================================================================
 * Prune: tool-output pruning (lib/prune.c).
 * ====================================================================== */

/* PRUNE-SECTION: declarations of lib/prune.c go here. */

#ifdef __cplusplus
}
#endif

#endif /* SAOP_H */
