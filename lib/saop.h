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

#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdint.h>
#include <jansson.h>

#include "saop-version.h"	/* SAOP_VERSION, made by configure */

#ifdef __cplusplus
extern "C" {
#endif

/* ---- Constants of the protocols (saop(7)), named once. ---- */
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
/*
 * Deepest nesting of schemas in one validation ($ref, applicators): a value
 * that needs more is invalid, with one "limit" error where it stopped.
 */
#define SAOP_MAX_EVAL_DEPTH		2000

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
	SAOP_EBADREQ = 15,	/* the endpoint said the request is wrong (69) */
	SAOP_EBUSY = 16,	/* a saved turn is held by another process
				   (75) */
	SAOP_EBUDGET = 17	/* a call would pass --max-cost (3) */
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
 * Settings: the environment over the configuration file (lib/settings.c).
 * ====================================================================== */

/*
 * Where a setting in force came from: the variable env, or the file's
 * line (profile: its [profile NAME], NULL for the default section); all
 * zero when it is not set.  cmd: the key is api_key_cmd's output.
 */
struct saop_setting_from {
	const char *env;
	const char *file;
	long line;
	const char *profile;
	int cmd;
};

/*
 * Read the configuration file path (NULL: $XDG_CONFIG_HOME/saop/config,
 * else ~/.config/saop/config, which may be missing) with the profile
 * named (NULL: $SAOP_PROFILE; none: the default section alone), in place
 * of any read before.  Until it is called, settings come from the
 * environment alone.  Call it before any thread is started.  The file is
 * refused when another user owns it, when others may write it, or when
 * it holds an api_key and others may read it.  Returns 0, or
 * -SAOP_ECONFIG (naming the file, and its line when the fault is in one:
 * an unknown key or section, a key given twice, a named profile not in
 * it) or -SAOP_ENOMEM.
 */
int saop_settings_load(const char *path, const char *profile,
    struct saop_err *e);

/* Forget the file read (the key wiped): the environment alone again. */
void saop_settings_free(void);

/*
 * The setting key (a file's key: an environment variable's name in lower
 * case without SAOP_, e.g. "api_base" for SAOP_API_BASE) in force: the
 * environment's, else the file's profile's, else its default section's;
 * where from in *from when not NULL.  Returns it borrowed (valid until
 * the next saop_settings_load() or saop_settings_free()), or NULL when
 * none sets it (the reader's built-in default holds).
 */
const char *saop_setting(const char *key, struct saop_setting_from *from);

/* The i-th key of the file, from 0, or NULL past the last. */
const char *saop_setting_key(size_t i);

/*
 * The key in force: $SAOP_API_KEY, else the file's api_key or the output
 * of its api_key_cmd (the profile's before the default section's; the
 * command, run with sh -c and /dev/null as its input, once per process,
 * and again by saop_llm_call() when a call is refused with HTTP 401,
 * its last line breaks cut),
 * where from in *from when not NULL.  *key is borrowed (NULL: none; the
 * provider's own variables, OPENAI_API_KEY..., are read after it by
 * saop_llm_config_from_env()).  Returns 0, or -SAOP_ECONFIG (the command
 * failed or wrote no key: its output never in the message) or
 * -SAOP_ENOMEM.
 */
int saop_settings_api_key(const char **key, struct saop_setting_from *from,
    struct saop_err *e);

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
 * over the limit, SAOP_EIO, SAOP_ENOMEM.  Blank lines are skipped.  After
 * an EDATA or ELIMIT, or an ENOMEM naming the line (e->line: read whole,
 * but no memory to parse it; handed on as a line that is not a record),
 * the reader goes on with the next line.  A valid JSON object is
 * never refused for jansson's limits: a member value jansson cannot hold
 * (an integer beyond 64 bits, a real beyond double, nesting past 2048) is
 * kept verbatim (saop_record_verbatim()) and written back as it came.
 */
int saop_reader_next(struct saop_reader *r, json_t **rec, struct saop_err *e);

/*
 * Hand every line that is not a record (not JSON, not an object, not
 * UTF-8, over the limit) on to out unchanged, LF-terminated, as it is met;
 * NULL (the default) drops them.  The error is still returned.
 */
void saop_reader_pass(struct saop_reader *r, FILE *out);

/*
 * Call wait(arg) before each read that would wait for input not there
 * yet (a program flushes what it wrote there, so that a record fed in
 * alone comes out at once while input that streams in fast is still
 * written in blocks).  NULL (the default): only the stream of
 * saop_reader_pass() is flushed; the library touches no other stream.
 */
void saop_reader_on_wait(struct saop_reader *r, void (*wait)(void *arg),
    void *arg);

/*
 * The bytes of input taken by the lines read so far, their LFs included
 * (for progress: how far into a file of known size the reader is).
 */
unsigned long long saop_reader_consumed(const struct saop_reader *r);

/* The line number of the record last returned (from 1). */
long saop_reader_line(const struct saop_reader *r);

/* Close r and free it. */
void saop_reader_close(struct saop_reader *r);

/*
 * Read all of f (to the end) into a new NUL-terminated buffer *buf (free
 * with free()), *len bytes; at most max bytes (0: SAOP_MAX_RECORD_BYTES),
 * else SAOP_ELIMIT.  For -R, raw input.
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

/*
 * The record's verdict, its "state" (saop(7)); saop_state_name() is the
 * one table of the words.  SAOP_STATE_NONE: no state yet, or a word saop
 * does not know.
 */
enum saop_state {
	SAOP_STATE_NONE = 0,
	SAOP_STATE_OK,
	SAOP_STATE_TRUNCATED,
	SAOP_STATE_INVALID,
	SAOP_STATE_RESUME_EXHAUSTED,
	SAOP_STATE_USER_ESCALATION,
	SAOP_STATE_PAUSED_FOR_INTERVENTION
};

/* The word of state s ("OK", ...); NULL for SAOP_STATE_NONE. */
const char *saop_state_name(enum saop_state s);

/* The state named word (NULL allowed); SAOP_STATE_NONE when none is. */
enum saop_state saop_state_of(const char *word);

/* rec's state (borrowed rec); SAOP_STATE_NONE when it has none. */
enum saop_state saop_record_state(const json_t *rec);

/* Set rec.state to s (not NONE).  Returns 0, or -SAOP_ENOMEM. */
int saop_record_set_state(json_t *rec, enum saop_state s);

/*
 * The top-level members of a record, one each, in saop(7)'s order
 * ("The record on the pipe").  lib/record.c alone names them; everything
 * else reads and writes them through the accessors below.
 */
enum saop_record_member {
	SAOP_RECORD_TASK_ID = 0,
	SAOP_RECORD_TURN,
	SAOP_RECORD_REQUEST,
	SAOP_RECORD_RAW,
	SAOP_RECORD_FINISH_REASON,
	SAOP_RECORD_TOOL_CALL,
	SAOP_RECORD_TOOL_CALLS,
	SAOP_RECORD_TEXT,
	SAOP_RECORD_CHOICES,
	SAOP_RECORD_SERVER_TOOLS,
	SAOP_RECORD_REFUSAL,
	SAOP_RECORD_USAGE,
	SAOP_RECORD_SUSPEND,
	SAOP_RECORD_DETECT,
	SAOP_RECORD_RESUME,
	SAOP_RECORD_VALIDATE,
	SAOP_RECORD_ENVELOPE,
	SAOP_RECORD_STRUCTURED_OUTPUT,
	SAOP_RECORD_COST,
	SAOP_RECORD_STATE,
	SAOP_RECORD_ERROR,
	SAOP_RECORD_MEMBERS	/* how many there are */
};

/* The name of member m ("task_id", ...), or NULL when m is out of range. */
const char *saop_record_member_name(enum saop_record_member m);

/* 1 when rec has member m, of any type (JSON null too), else 0. */
int saop_record_has(const json_t *rec, enum saop_record_member m);

/* Remove member m from rec (nothing when it has none). */
void saop_record_del(json_t *rec, enum saop_record_member m);

/*
 * Reading a member.  Each takes a borrowed record and returns a borrowed
 * value of the type saop(7) gives the member, or the "none" it names when
 * the member is absent or of another type.
 *  - saop_record_task_id(): the task id as text (a string, or a number's
 *    decimal digits written into buf), else NULL.
 *  - saop_record_task_id_value(): task_id as it is, of any type (a
 *    number, a value kept verbatim), else NULL.
 *  - saop_record_turn(): turn, or -1 when it is not an integer >= 0.
 *  - saop_record_finish_reason(), saop_record_refusal(),
 *    saop_record_state_word() (state as written, a word of the caller's
 *    own too): the string, else NULL.
 *  - saop_record_text(): text (length in *len when len is not NULL; it
 *    may hold NUL bytes), else NULL and 0.  saop_record_raw() is the same
 *    for raw.
 *  - request, tool_call, usage, suspend, detect (saop_record_detect_info(),
 *    for saop_record_detect() scans), resume, validate, structured_output,
 *    cost, error: the object, else NULL.  tool_calls, choices,
 *    server_tools: the
 *    array, else NULL.  envelope: the value, any (JSON null too), else
 *    NULL.  The value may be changed in place (it stays rec's).
 */
const char *saop_record_task_id(const json_t *rec, char buf[32]);
const json_t *saop_record_task_id_value(const json_t *rec);
long saop_record_turn(const json_t *rec);
json_t *saop_record_request(const json_t *rec);
const char *saop_record_finish_reason(const json_t *rec);
json_t *saop_record_tool_call(const json_t *rec);
json_t *saop_record_tool_calls(const json_t *rec);
const char *saop_record_text(const json_t *rec, size_t *len);
json_t *saop_record_choices(const json_t *rec);
json_t *saop_record_server_tools(const json_t *rec);
const char *saop_record_refusal(const json_t *rec);
json_t *saop_record_usage(const json_t *rec);
json_t *saop_record_suspend(const json_t *rec);
json_t *saop_record_detect_info(const json_t *rec);
json_t *saop_record_resume(const json_t *rec);
json_t *saop_record_validate(const json_t *rec);
json_t *saop_record_envelope(const json_t *rec);
json_t *saop_record_structured_output(const json_t *rec);
json_t *saop_record_cost(const json_t *rec);
const char *saop_record_state_word(const json_t *rec);
json_t *saop_record_error(const json_t *rec);

struct saop_llm_cost;

/*
 * Writing a member: each replaces the member (or adds it, at the end).
 * Returns 0, -SAOP_ENOMEM, -SAOP_EDATA for text that is not UTF-8, or
 * -SAOP_EINTERNAL for a value of another type than the member's.
 *  - saop_record_set_task_id(), saop_record_set_refusal(): a string.
 *  - saop_record_set_turn(): turn >= 0.
 *  - saop_record_set_finish_reason(): the word, or JSON null for NULL.
 *  - saop_record_set_text(): the n bytes at text (UTF-8); see
 *    saop_record_set_raw() for raw.
 *  - The others take a new reference to v (stolen, even on failure; NULL
 *    is -SAOP_ENOMEM, so a json_pack() can be passed as it is): request,
 *    tool_call, usage, suspend, detect, resume, validate,
 *    structured_output, cost an object; tool_calls, choices,
 *    server_tools an array; envelope any value.  state:
 *    saop_record_set_state(); error: saop_record_set_error().
 */
int saop_record_set_task_id(json_t *rec, const char *id);
int saop_record_set_turn(json_t *rec, long turn);
int saop_record_set_request(json_t *rec, json_t *v);
int saop_record_set_finish_reason(json_t *rec, const char *why);
int saop_record_set_tool_call(json_t *rec, json_t *v);
int saop_record_set_tool_calls(json_t *rec, json_t *v);
int saop_record_set_text(json_t *rec, const char *text, size_t n);
int saop_record_set_choices(json_t *rec, json_t *v);
int saop_record_set_server_tools(json_t *rec, json_t *v);
int saop_record_set_refusal(json_t *rec, const char *s);
int saop_record_set_usage(json_t *rec, json_t *v);
int saop_record_set_suspend(json_t *rec, json_t *v);
int saop_record_set_detect(json_t *rec, json_t *v);
int saop_record_set_resume(json_t *rec, json_t *v);
int saop_record_set_validate(json_t *rec, json_t *v);
int saop_record_set_envelope(json_t *rec, json_t *v);
int saop_record_set_structured_output(json_t *rec, json_t *v);
int saop_record_set_cost(json_t *rec, json_t *v);

/*
 * Add what the calls c counted cost to rec's cost.part (part "answer": the
 * turn's own call; "recovery": resume attempts, correction turns,
 * suspension retries), the cost object made when rec has none (with
 * recovery 0).  A part that is absent becomes c's cost; one that is null
 * (not known) stays null; c with a call not priced makes it null.  c with
 * no call changes nothing but the object's making.  Returns 0, or
 * -SAOP_ENOMEM.
 */
int saop_record_add_cost(json_t *rec, const char *part,
    const struct saop_llm_cost *c);

/*
 * Scan raw (len bytes, rec's raw or a text that replaces it) as rec's
 * answer: tool-call arguments (rec has a tool_call) bare, a text answer
 * by the wrapper rule (saop_detect_text()); a top-level number at the end
 * of an answer cut at its limit (finish_reason "length") is cut
 * (saop_detect_mark_cut()).  Returns 0 with res filled, or -SAOP_ENOMEM.
 */
struct saop_detect_result;
int saop_record_detect(const json_t *rec, const char *raw, size_t len,
    size_t max_depth, struct saop_detect_result *res);

/*
 * Set rec.raw to the n bytes at raw (UTF-8).  Returns 0, -SAOP_EDATA when
 * they are not UTF-8, or -SAOP_ENOMEM.
 */
int saop_record_set_raw(json_t *rec, const char *raw, size_t n);

/*
 * Set rec.error from e and the name of the program that met it:
 * {program, message, line, byte, field, status} (saop(7)).  Returns 0 or
 * -SAOP_ENOMEM.
 */
int saop_record_set_error(json_t *rec, const char *program,
    const struct saop_err *e);

/*
 * The length of the longest prefix of s (n bytes) that is strict UTF-8:
 * n when all of it is, else the offset of the first byte that is not.
 */
size_t saop_utf8_valid(const char *s, size_t n);

/*
 * A streaming JSON string escaper (lib/escape.c): bytes fed in any chunks
 * come out through write() as the inside of a JSON string, strict UTF-8
 * as it is with the escapes JSON needs (\" \\ \b \f \n \r \t, \u00XX
 * for other controls), a character split between chunks joined again,
 * and each byte that is not part of strict UTF-8 as U+FFFD, counted.
 * saop_escaper_new() returns a new escaper (free with saop_escaper_free())
 * or NULL when out of memory; write(p, n, arg) returns 0 or a nonzero
 * failure.  saop_escaper_feed() and saop_escaper_end() (after the last
 * chunk: an unfinished character becomes U+FFFD, the rest is written)
 * return 0 or write()'s failure, after which nothing more is written.
 * saop_escaper_replaced() counts the U+FFFD written.
 */
struct saop_escaper;
struct saop_escaper *saop_escaper_new(int (*write)(const char *p, size_t n,
    void *arg), void *arg);
int saop_escaper_feed(struct saop_escaper *x, const void *p, size_t len);
int saop_escaper_end(struct saop_escaper *x);
unsigned long long saop_escaper_replaced(const struct saop_escaper *x);
void saop_escaper_free(struct saop_escaper *x);

/*
 * 1 when v is a value the reader kept verbatim because jansson cannot
 * hold it (it reads as a string here; saop_record_write() writes its
 * original text), else 0.
 */
int saop_record_verbatim(const json_t *v);

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
	char *closing;		/* what makes the text up to close_index valid
				   JSON; NULL when nothing received determines
				   a value (empty input, a lone '-') */
	uint64_t resume_index;	/* where a continuation goes on: all of it
				   but a cut escape or UTF-8 character */
	uint64_t close_index;	/* the closing follows the text up to here */
	int has_close;		/* closing is set */
	/* INVALID: */
	uint64_t error_offset;	/* byte offset of the first invalid byte */
	long error_line;	/* its line, from 1 */
	long error_column;	/* its column in bytes, from 1 */
	char error[128];	/* why, in words */
	/* Where the JSON begins in a wrapped answer (saop_detect_text()):
	 * every index above counts in the whole text; 0 and 0 when bare. */
	uint64_t json_start;	/* byte offset of the JSON value */
	uint64_t json_end;	/* COMPLETE: where the value ends (before
				   a closing fence or trailing prose) */
	unsigned wrapper;	/* SAOP_WRAP_* bits: what came before it */
};

/* What wraps the JSON of an answer (struct saop_detect_result.wrapper). */
#define SAOP_WRAP_FENCE	1u	/* an opening code fence (```, ~~~) */
#define SAOP_WRAP_PROSE	2u	/* leading prose */
#define SAOP_WRAP_THINK	4u	/* a leading <think> or <reasoning> block */

struct saop_detector;

/*
 * A new scanner that follows nesting up to max_depth containers (0:
 * SAOP_MAX_DEPTH); deeper input is invalid ("nesting deeper than N").
 * It holds O(depth) memory and never recurses.  Returns new detector
 * (free with saop_detector_free()), or NULL when out of memory.
 */
struct saop_detector *saop_detector_new(size_t max_depth);

/*
 * Scan len more bytes of the input (chunks of any size, len 0 allowed).
 * Returns the verdict so far: SAOP_COMPLETE, SAOP_TRUNCATED, or
 * SAOP_INVALID (from then on further input is counted but not scanned);
 * -SAOP_ENOMEM when the container stack could not grow.
 */
int saop_detector_feed(struct saop_detector *d, const char *buf, size_t len);

/*
 * The verdict on all input fed so far, into *res (new strings: free with
 * saop_detect_result_free()).  The detector may go on being fed.  Returns
 * 0, or -SAOP_ENOMEM (then *res holds nothing to free).
 */
int saop_detector_finish(struct saop_detector *d,
    struct saop_detect_result *res);

/* Free d; NULL is a no-op. */
void saop_detector_free(struct saop_detector *d);

/*
 * Scan one whole buffer: saop_detector_new(max_depth), feed, finish, free.
 * Returns 0 or -SAOP_ENOMEM.
 */
int saop_detect_buffer(const char *buf, size_t len, size_t max_depth,
    struct saop_detect_result *res);

/*
 * Scan a model's text answer by the wrapper rule of saop-detect(1): as
 * saop_detect_buffer() when the text scans as JSON (complete or cut);
 * else the one JSON value inside its wrapper (an opening code fence, a
 * leading <think>/<reasoning> block, leading prose before a '{' or '['
 * that begins a line or follows ": "), whose verdict res gets with
 * json_start, json_end and wrapper set and every index counted in the
 * whole text.  A text with no single reading is INVALID, error saying
 * why.  Returns 0, or -SAOP_ENOMEM.
 */
int saop_detect_text(const char *buf, size_t len, size_t max_depth,
    struct saop_detect_result *res);

/*
 * When the answer is known to be cut (finish_reason length, a cut
 * stream), a top-level number that res (the scan of buf, len bytes) calls
 * complete is a cut prefix of a longer one: res becomes TRUNCATED there
 * (resume and close at the end, nothing before it complete).  Returns 1
 * when res changed, 0 when not, -SAOP_ENOMEM.
 */
int saop_detect_mark_cut(struct saop_detect_result *res, const char *buf,
    size_t len);

/* The words of wrapper bits w: "fence", "prose+fence", "think+prose"...;
 * NULL for 0 (static). */
const char *saop_detect_wrapper_name(unsigned w);

/* Free the strings of res (not res itself) and zero it. */
void saop_detect_result_free(struct saop_detect_result *res);

/*
 * The record's "detect" object for res, always with the same keys:
 * complete, truncated, empty, bom (booleans), length, truncation_index
 * and resume_index (null unless truncated), last_valid_token (string or
 * null), open (array of "{" and "[", outermost first), expected (string
 * or null), close_index and closing (null unless truncated with a
 * closing: the text up to close_index followed by closing is complete
 * JSON), closing_bytes (always an empty array: kept for readers of
 * earlier output), error (null, or {offset, line, column, message}).
 * Returns a new reference, or NULL when out of memory.
 */
json_t *saop_detect_result_json(const struct saop_detect_result *res);

/* The verdict as a record state: "OK", "TRUNCATED" or "INVALID". */
const char *saop_verdict_state(enum saop_verdict v);


/* ======================================================================
 * Store: state.sqlite, migrations, tasks and events (lib/store.c).
 * ====================================================================== */

struct saop_store;

/*
 * The state database a run uses (lib/config.c, the one rule): given when
 * it is not NULL or empty (--db), else $SAOP_DB when set and not empty,
 * else .saop/state.sqlite under the working directory.  Returns a
 * borrowed string (given, the environment's, or a constant).
 */
const char *saop_config_db(const char *given);

/*
 * 1 when a state database is named, by given (--db) or by $SAOP_DB (not
 * empty), rather than left to the default: for a program that stores
 * only when asked (saop-detect's events).  Else 0.
 */
int saop_config_db_named(const char *given);

/*
 * Open (creating when missing) the state database at path; NULL means
 * $SAOP_DB, else .saop/state.sqlite under the working directory.  A
 * missing directory is made with mode 0700 and the file with 0600.  WAL
 * mode, busy timeout, foreign keys; every migration not yet applied is
 * applied.  Returns new store (saop_store_close()), or NULL and SAOP_EDB
 * or SAOP_EIO.
 */
struct saop_store *saop_store_open(const char *path, struct saop_err *e);

/*
 * A store for path (as saop_store_open()) that opens nothing yet: the
 * database is opened, made and migrated on its first use, so a program
 * that never has anything to store never touches it.  A use that cannot
 * open it fails as saop_store_open() would, and the next use tries again.
 * Returns new store (saop_store_close()), or NULL and SAOP_ENOMEM.
 */
struct saop_store *saop_store_new(const char *path, struct saop_err *e);

/* Close s; NULL is a no-op. */
void saop_store_close(struct saop_store *s);

/* The path or URI s was opened at, a URI's password masked as "***"
 * (borrowed: valid until saop_store_close()). */
const char *saop_store_path(const struct saop_store *s);

/*
 * Copy every row of from (tasks, events, partial_completion_log,
 * tool_outputs, agent_turn_states) into to, ids kept, in one transaction
 * of to: all of it or nothing.  to is migrated first and must hold no
 * rows yet.  The way from a state.sqlite to PostgreSQL (saop-report
 * --copy-to), or back.  Returns the number of rows copied, or a negative
 * code with e filled (SAOP_EDATA: to is not empty).
 */
long long saop_store_copy(struct saop_store *from, struct saop_store *to,
    struct saop_err *e);

/* 1 when target (a --db value or $SAOP_DB) names a database server, a
 * postgresql:// or postgres:// URI (lib/db-pg.c); 0 for a SQLite file. */
int saop_store_is_server(const char *target);

/* The schema version: the number of the last migration applied. */
int saop_store_version(struct saop_store *s);

/*
 * Also append every event as an NDJSON line to path ("-": stderr).  NULL
 * stops it.  The file is opened on the first event, created with mode
 * 0600.  Returns 0 or SAOP_ENOMEM.
 */
int saop_store_set_log(struct saop_store *s, const char *path,
    struct saop_err *e);

/*
 * Record one event: a row in events (time, task_id, turn, event, data)
 * and, with a log, one NDJSON line.  turn < 0 means none.  data may be
 * NULL (borrowed).  An event is a log: failing to write it must never
 * stop the work it describes, so this returns 0 always; the first
 * failure (SAOP_EDB, SAOP_EIO, SAOP_ENOMEM) is kept in s for
 * saop_store_error().  e is cleared.
 */
int saop_event(struct saop_store *s, const char *task_id, long turn,
    const char *event, const json_t *data, struct saop_err *e);

/*
 * Take the first event failure kept in s since the last call: returns 1
 * and fills e, or 0 (e cleared) when every event was written.  s may be
 * NULL.
 */
int saop_store_error(struct saop_store *s, struct saop_err *e);

/* The events of state.sqlite's events table and --log (saop(7)). */
#define SAOP_EVENT_PARTIAL_COMPLETION_DETECTED	"PARTIAL_COMPLETION_DETECTED"
#define SAOP_EVENT_RESUME_SUCCEEDED	"RESUME_SUCCEEDED"
#define SAOP_EVENT_RESUME_FAILED	"RESUME_FAILED"
#define SAOP_EVENT_MALFORMED_RESPONSE	"MALFORMED_RESPONSE"
#define SAOP_EVENT_MAX_RETRIES_EXCEEDED	"MAX_RETRIES_EXCEEDED"
/* After each correction answer: attempt and what that call cost. */
#define SAOP_EVENT_CORRECTION_ANSWERED	"CORRECTION_ANSWERED"
#define SAOP_EVENT_NETWORK_LOST		"NETWORK_LOST"
#define SAOP_EVENT_NETWORK_RESTORED	"NETWORK_RESTORED"
#define SAOP_EVENT_TURN_RESUMED		"TURN_RESUMED"
#define SAOP_EVENT_TURN_SUSPENDED	"TURN_SUSPENDED"
#define SAOP_EVENT_TOOL_OUTPUT_PRUNED	"TOOL_OUTPUT_PRUNED"

/*
 * Record event for the record rec (its task id and turn; fallback_task
 * when it has no task id) with data (borrowed, may be NULL), as
 * saop_event() does: a failure is kept in s, never returned.  s may be
 * NULL (nothing is written).  Returns 0.
 */
int saop_record_event(struct saop_store *s, const json_t *rec,
    const char *fallback_task, const char *event, const json_t *data);

/* A task's status in the tasks table; saop_task_status_name() words it. */
enum saop_task_status {
	SAOP_TASK_IN_PROGRESS = 0,
	SAOP_TASK_PAUSED_FOR_INTERVENTION,
	SAOP_TASK_USER_ESCALATION,
	SAOP_TASK_DONE
};

/* Why a task is in its status (the tasks table's reason). */
#define SAOP_REASON_NETWORK_LOSS	"NETWORK_LOSS"
#define SAOP_REASON_MAX_RETRIES_EXCEEDED	"MAX_RETRIES_EXCEEDED"
#define SAOP_REASON_MAX_COST_EXCEEDED	"MAX_COST_EXCEEDED"

/* The word of status st ("IN_PROGRESS", ...), or NULL when unknown. */
const char *saop_task_status_name(enum saop_task_status st);

/*
 * Set the task's status and reason (may be NULL), creating the row;
 * SAOP_TASK_DONE replaces only IN_PROGRESS (see saop_suspend_forget()).
 * Returns 0, or -SAOP_EDB / -SAOP_EIO, or -SAOP_EINTERNAL for a status
 * outside the enum.
 */
int saop_task_set_status(struct saop_store *s, const char *task_id,
    enum saop_task_status status, const char *reason, struct saop_err *e);

/* The current UTC time as ISO 8601 with milliseconds, into buf[32]. */
void saop_now_iso8601(char buf[32]);

/* ======================================================================
 * LLM: the model client (lib/llm-config.c: configuration and the key;
 * lib/llm-request.c: the wire body; lib/llm-answer.c: the answer parser;
 * lib/llm.c: the transfer over libcurl and the failure classification).
 * ====================================================================== */

enum saop_provider {
	SAOP_PROVIDER_OPENAI = 0,	/* OpenAI-compatible chat completions */
	SAOP_PROVIDER_ANTHROPIC = 1,	/* Anthropic Messages */
	SAOP_PROVIDER_RESPONSES = 2,	/* OpenAI Responses (openai-responses) */
	SAOP_PROVIDER_GEMINI = 3,	/* Google Gemini generateContent */
	SAOP_PROVIDER_BEDROCK = 4	/* Amazon Bedrock Converse(Stream) */
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
	 * Amazon Bedrock (lib/llm-config.c): the region, and the AWS
	 * credentials libcurl signs with (SigV4) when no key (a Bedrock API
	 * key, a bearer token) is set.  Secrets: never printed, logged or
	 * stored; wiped by saop_llm_config_free().  Owned; NULL when unset.
	 */
	char *aws_region, *aws_id, *aws_secret, *aws_token;
	/*
	 * Google Vertex AI (SAOP_PROVIDER vertex-gemini or vertex-anthropic:
	 * provider SAOP_PROVIDER_GEMINI or SAOP_PROVIDER_ANTHROPIC, vertex 1):
	 * the project and the location of the path ($SAOP_VERTEX_PROJECT,
	 * $SAOP_VERTEX_LOCATION); the key is sent as a bearer token.  Owned;
	 * NULL when unset.
	 */
	int vertex;
	char *vertex_project, *vertex_location;
	/*
	 * 1 when the key is the output of the file's api_key_cmd: a call
	 * refused with HTTP 401 runs the command again (an expired token)
	 * and is made once more.
	 */
	int key_cmd;
	/*
	 * Headers sent with every call, "Name: value" each ($SAOP_HEADERS,
	 * one a line, then saop_llm_config_add_header()); one named as a
	 * header saop sends itself replaces it.  Owned by the config.
	 */
	char **headers;
	size_t nheaders;
	/*
	 * The header that carries the key ($SAOP_AUTH_HEADER): NULL for the
	 * provider's own (Authorization: Bearer, x-api-key); another name
	 * (Azure OpenAI: api-key) carries the key alone.  Owned.
	 */
	char *auth_header;
	/*
	 * The seam for saop-suspend: when not NULL, called after a failed
	 * call classified SAOP_ENETWORK or SAOP_ERATELIMIT with the error and
	 * the number of the attempt (from 1).  Return 1 to call again, 0 to
	 * give up.  NULL: no retry.
	 */
	int (*on_failure)(void *arg, const struct saop_err *e, int attempt);
	void *on_failure_arg;
	/*
	 * When not NULL: called with each piece of the answer's text (choice
	 * 0, as raw grows) as it arrives, in order, before the call returns,
	 * for a caller that shows the answer as it comes (saop-suspend on a
	 * terminal).  A call that then fails has given its pieces too.
	 */
	void (*on_text)(void *arg, const char *s, size_t n);
	void *on_text_arg;
	/*
	 * Why the environment cannot reach the model (an unknown
	 * SAOP_PROVIDER, a bad SAOP_TIMEOUT_MS), or NULL.  Set by
	 * saop_llm_config_from_env(); saop_llm_call() and saop_llm_dry_run()
	 * fail with it (SAOP_ECONFIG), so that only a program that calls the
	 * model fails.  Owned by the config.
	 */
	char *problem;
	/*
	 * The user's schema (lib/llm-schema.c): the JSON Schema document
	 * (borrowed, saop_schema_document()) the request body carries in the
	 * provider's structured-output field (SAOP_SCHEMA_NATIVE) or in its
	 * system prompt (SAOP_SCHEMA_PROMPT); NULL or SAOP_SCHEMA_OFF:
	 * nothing.  schema_name (borrowed, may be NULL) names it where the
	 * field wants a name.  schema_refused is set by saop_schema_model()
	 * once a server refused the field: it is not sent again.
	 */
	const json_t *schema;
	const char *schema_name;
	int schema_mode;	/* enum saop_schema_mode */
	int schema_refused;
};

/*
 * Fill cfg from SAOP_PROVIDER, SAOP_API_BASE, the key
 * (saop_settings_api_key(), else OPENAI_API_KEY / ANTHROPIC_API_KEY /
 * GEMINI_API_KEY; for an unknown provider either of the first two),
 * SAOP_MODEL, SAOP_TIMEOUT_MS, SAOP_HEADERS (a bad line is kept in
 * cfg->problem) and SAOP_AUTH_HEADER, each the environment's or the
 * configuration file's (saop_setting()).  Returns 0, or SAOP_ENOMEM.  An
 * unknown provider, a bad timeout or a failed api_key_cmd is not an error
 * here: it is kept in cfg->problem for the first call.  A missing key is not an error either
 * (saop_llm_configured() tells).
 */
int saop_llm_config_from_env(struct saop_llm_config *cfg, struct saop_err *e);

/*
 * Add the header line "Name: value" (borrowed, copied) to cfg's headers.
 * Returns 0, -SAOP_EUSAGE when it is not one (no colon, a name that is
 * not an HTTP token, a CR or LF anywhere), or -SAOP_ENOMEM.
 */
int saop_llm_config_add_header(struct saop_llm_config *cfg,
    const char *line, struct saop_err *e);

/* 1 when cfg has a key (or an explicit SAOP_API_BASE): a model to call. */
int saop_llm_configured(const struct saop_llm_config *cfg);

/* Free the strings of cfg (not cfg itself). */
void saop_llm_config_free(struct saop_llm_config *cfg);

/* A normalised answer.  Strings owned by it (saop_llm_answer_free()). */
struct saop_llm_answer {
	char *raw;		/* the text received, NUL-terminated; never NULL after a call */
	size_t raw_len;
	char finish_reason[16];	/* stop, length, tool_calls, refusal, error; "" if none came */
	int broken;		/* the stream ended without a finish reason */
	long prompt_tokens;	/* -1 when not reported */
	long completion_tokens;
	long cached_tokens;	/* of prompt_tokens, read from the provider's
				 * cache; -1 when not reported */
	long reasoning_tokens;	/* of completion_tokens, the model's
				 * reasoning; -1 when not reported */
	/*
	 * What the call cost in USD at the price table's prices (lib/price.c)
	 * when priced is 1; 0 leaves it unknown (a model the table does not
	 * price, or no usage reported): never a cost of 0.
	 */
	int priced;
	double cost;
	int http_status;
	json_t *tool_calls;	/* OpenAI-style tool calls, or NULL */
	/*
	 * 1 + the index in tool_calls of the call the answer was cut in
	 * (its arguments unfinished); 0 when the answer was not cut inside
	 * a call.
	 */
	size_t open_call;
	/* The other choices (n > 1, candidateCount > 1): [{index, raw,
	 * finish_reason, tool_calls}], or NULL. */
	json_t *choices;
	/* Tools the provider ran itself (Anthropic server_tool_use and its
	 * result blocks, Responses web_search_call..., Gemini
	 * executableCode...): the blocks as they came, or NULL. */
	json_t *server_tools;
	/* finish_reason refusal: what the model said instead (may be ""),
	 * else NULL. */
	char *refusal;
};

/* Free what a holds and zero it. */
void saop_llm_answer_free(struct saop_llm_answer *a);

/*
 * What model calls cost, summed call by call: the one sum of a call's
 * cost, for the resume ("resume"), the correction turns ("validate") and
 * the suspend policy ("usage").
 */
struct saop_llm_cost {
	int calls;		/* answers counted */
	size_t sent_bytes;	/* the text sent */
	size_t received_bytes;	/* the answers' raw text */
	long prompt_tokens;	/* summed usage; -1 while no call reported it */
	long completion_tokens;
	double usd;		/* the priced calls' cost summed */
	int unpriced;		/* calls whose cost is not known */
};

/* Make c empty: no call, no bytes, token counts -1 (none reported). */
void saop_llm_cost_init(struct saop_llm_cost *c);

/*
 * Add to c one call that sent sent bytes and got a: its raw text's
 * length, and each token count a reports (>= 0).
 */
void saop_llm_cost_add(struct saop_llm_cost *c, size_t sent,
    const struct saop_llm_answer *a);

/*
 * Set c on obj as it goes on a record or in an event: sent_bytes,
 * received_bytes, prompt_tokens, completion_tokens (a count not reported
 * null) and cost (USD; null when a call's cost is not known, 0 only when
 * no call was made), after obj's other members.  Returns 0, or -1 when
 * obj is not an object or out of memory.
 */
int saop_llm_cost_put(json_t *obj, const struct saop_llm_cost *c);

/*
 * The cost of c as it goes on a record: USD, or null when a call of c is
 * not priced (0 only when c counts no call).  Returns a new reference, or
 * NULL out of memory.
 */
json_t *saop_llm_cost_usd(const struct saop_llm_cost *c);

/*
 * The budget of one record's recovery (--max-cost, SAOP_MAX_COST; the
 * calls of lib/price.c): what its recovery calls (resume attempts,
 * correction turns, saop-suspend's retries) have cost, and the limit no
 * call may take it past.  A call is priced before it is made at worst:
 * every byte of the request a token of input, and max_tokens (else
 * SAOP_LLM_DEFAULT_MAX_TOKENS) of output.  A model without a price is not
 * limited.
 */
struct saop_budget {
	double max_usd;		/* the limit in USD; < 0: none */
	enum saop_provider provider;	/* whose models are priced first */
	const char *model;	/* for a request naming none (borrowed) */
	double spent;		/* the record's recovery so far (USD) */
	double worst;		/* the last call checked, at worst; -1 none */
	int unpriced;		/* a call of a model without price was let
				 * through (the caller warns, once) */
};

/*
 * Whether the user's price table ($SAOP_PRICES, or the configuration
 * file's prices: a JSON file of data/prices.json's shape, searched before
 * the embedded table) can be read, when one is set.  Returns 0, or
 * -SAOP_ECONFIG with e naming the setting and the file.
 */
int saop_prices_check(struct saop_err *e);

/*
 * Start b on record rec: spent is what rec's cost.recovery says (earlier
 * programs' recovery), else 0.
 */
void saop_budget_record(struct saop_budget *b, const json_t *rec);

/*
 * Whether request (a provider-neutral request, as sent) may be sent
 * under b.  Returns 0 (within the limit, or not limited: b->unpriced set
 * for a model without price), or -SAOP_EBUDGET with e naming the limit,
 * what was spent and what the call could cost.
 */
int saop_budget_check(struct saop_budget *b, const json_t *request,
    struct saop_err *e);

/*
 * Count answer a of the call last checked into b->spent: its cost, else
 * (priced model, usage not reported) that call's worst.
 */
void saop_budget_spend(struct saop_budget *b,
    const struct saop_llm_answer *a);

/*
 * Send request (a record's provider-neutral "request": model, messages,
 * max_tokens, system, tools...; borrowed) and fill a.  Returns 0 when the
 * model answered with a finish reason.  Else a negative code, with
 * whatever text arrived still in a->raw: SAOP_ENETWORK (connection,
 * timeout, 5xx, 529, a stream cut before its finish reason),
 * SAOP_ERATELIMIT (429 that waiting fixes; e->retry_after_ms),
 * SAOP_EREFUSED (401, 403, 404, quota, x-should-retry: false),
 * SAOP_EPREFILL (the model refuses assistant prefill), SAOP_EBADREQ
 * (another 400), SAOP_EPROTO (not the protocol: an answer that is not
 * the protocol, or an SSE event or NDJSON line of it that does not parse
 * or has no known shape, named by number and byte offset; a->raw is then
 * empty, nothing of a damaged answer is kept), SAOP_ECONFIG (no key,
 * cfg->problem).  The key never appears in e, not even 8 characters of
 * it, and a URL in e shows no userinfo and no query values.
 */
int saop_llm_call(const struct saop_llm_config *cfg, const json_t *request,
    struct saop_llm_answer *a, struct saop_err *e);

/*
 * Write to f what saop_llm_call() would send, the key masked: the method
 * and URL (without its userinfo and query values), the headers, a blank
 * line and the JSON body.  For --dry-run.  SAOP_ECONFIG for
 * cfg->problem, before anything is written.
 */
int saop_llm_dry_run(FILE *f, const struct saop_llm_config *cfg,
    const json_t *request, struct saop_err *e);

/*
 * The model-call seam: one call of the model, as every protocol makes it
 * (saop_resume_record(), saop_validate_record(), saop_suspend_turn()).
 * call sends request (borrowed) and fills a as saop_llm_call() does: it
 * returns 0, or a negative code with e filled and the text that came in
 * a->raw.  arg is the caller's.  saop_llm_model() gives the real model, a
 * test a stand-in, and saop_suspend_model() puts the suspend policy in
 * front of another model.
 */
struct saop_model {
	int (*call)(void *arg, const json_t *request,
	    struct saop_llm_answer *a, struct saop_err *e);
	void *arg;
};

/* The model saop_llm_call() reaches through cfg (borrowed: it must
 * outlive the model). */
struct saop_model saop_llm_model(struct saop_llm_config *cfg);

/* Make one call of m: what m->call returns (see struct saop_model). */
int saop_model_call(const struct saop_model *m, const json_t *request,
    struct saop_llm_answer *a, struct saop_err *e);

/* ---- The user's schema on the wire (lib/llm-schema.c) ---- */

/* Where --schema goes in a request (saop-suspend --schema-mode). */
enum saop_schema_mode {
	SAOP_SCHEMA_NATIVE = 0,	/* the provider's structured-output field */
	SAOP_SCHEMA_PROMPT = 1,	/* the system prompt (no such field) */
	SAOP_SCHEMA_OFF = 2	/* nowhere: only saop-validate checks it */
};

/* Above this size (compact JSON) a schema is not put whole into a
 * correction turn: only the parts its errors point at. */
#define SAOP_CORRECTION_SCHEMA_MAX	4096

/* The system-prompt text of SAOP_SCHEMA_PROMPT, before the schema. */
#define SAOP_SCHEMA_PROMPT_HEAD \
	"Answer with JSON only: one value that follows this JSON Schema.\n\n" \
	"```json\n"
#define SAOP_SCHEMA_PROMPT_TAIL "\n```"

/* After a server refused the structured-output field (saop(7)). */
#define SAOP_EVENT_STRUCTURED_OUTPUT_REFUSED	"STRUCTURED_OUTPUT_REFUSED"

/*
 * The mode named word ("native", "prompt", "off").  Returns 0 with *mode
 * set, or -1 for another word.
 */
int saop_schema_mode_parse(const char *word, enum saop_schema_mode *mode);

/*
 * The structured-output field of cfg's wire format, as the page names it
 * ("response_format", "output_config.format"...).  A static string.
 */
const char *saop_schema_field(const struct saop_llm_config *cfg);

/*
 * Would OpenAI take schema (borrowed) with "strict": true?  1 when it
 * keeps to the strict subset of JSON Schema (saop-suspend(1)), else 0.
 */
int saop_schema_openai_strict(const json_t *schema);

/*
 * The model-call seam with the structured-output fallback: calls go to
 * inner; a call whose body carried cfg's structured-output field and that
 * a server answered 400 naming the field is made once more without it,
 * and cfg->schema_refused is set so that later calls go without it too.
 * Fill inner and cfg, then take saop_schema_model().
 */
struct saop_schema_guard {
	struct saop_model inner;
	struct saop_llm_config *cfg;	/* borrowed */
	/* Since the last saop_schema_note(): */
	int refused;		/* a call was refused the field (and made
				   again without it) */
	int sent;		/* a call carried the field */
	int refusals;		/* calls refused the field, in all */
	char why[300];		/* the server's words for the refusal */
};

/* The model whose calls go through g (see above).  Returns it. */
struct saop_model saop_schema_model(struct saop_schema_guard *g);

/*
 * Say on rec what the calls of g since the last note did with the schema
 * (then count again from nothing): rec's
 * "structured_output" becomes {"mode", "field", "sent", "refused"} (the
 * server's words in "refused" when it refused the field; "own" true when
 * the request carried its own field) and, when the field was refused, the
 * STRUCTURED_OUTPUT_REFUSED event goes to store (may be NULL).  Nothing
 * when cfg has no schema.  Returns 1 when the field was refused on this
 * call (the caller warns), 0, or -SAOP_ENOMEM.
 */
int saop_schema_note(struct saop_schema_guard *g, json_t *rec,
    struct saop_store *store, struct saop_err *e);

/*
 * What saop_llm_call() does beyond the declarations above:
 *  - URL: cfg->base + "/chat/completions" (openai), "/messages"
 *    (anthropic), "/responses" (openai-responses) or
 *    "/models/MODEL:streamGenerateContent?alt=sse" (gemini;
 *    ":generateContent" when not streaming); headers Authorization:
 *    Bearer / x-api-key (with anthropic-version: 2023-06-01) /
 *    x-goog-api-key: the key is never in the URL.
 *  - Body: the request's model, else cfg->model (neither: SAOP_ECONFIG).
 *    OpenAI: "system" becomes the first message, "stop_sequences" becomes
 *    "stop", other fields pass as they are, and a stream asks for
 *    stream_options.include_usage.  Anthropic: "system" and system
 *    messages go top-level, "stop" becomes "stop_sequences", max_tokens
 *    defaults to SAOP_LLM_DEFAULT_MAX_TOKENS, OpenAI-style tool calls and
 *    "tool" messages become tool_use / tool_result blocks, and only
 *    temperature, top_p, top_k, metadata, thinking and service_tier pass
 *    (the API refuses unknown fields).  "tools" and "tool_choice" are
 *    converted either way.  Responses and Gemini: see
 *    lib/llm-request.c's body_responses() and body_gemini().
 *  - Answer: SSE, one JSON body or Ollama NDJSON, whatever the server
 *    sends.  raw is the text only; tool calls (with partial arguments
 *    when cut) are in a->tool_calls as
 *    [{"id", "type": "function", "function": {"name", "arguments"}}].
 *    finish_reason: stop (end_turn, stop_sequence, STOP), length
 *    (max_tokens, model_context_window_exceeded, MAX_TOKENS,
 *    max_output_tokens, done_reason length), tool_calls (tool_use),
 *    refusal (refusal text, content_filter, SAFETY...: the call then
 *    returns SAOP_EREFUSED with a->refusal), error (an error inside the
 *    stream).  Choice 0 is the answer, the others in a->choices; tools
 *    the provider ran in a->server_tools; a call whose end came with no
 *    arguments has "{}"; a->open_call names the call a cut is in.
 *    A finished answer needs a finish reason and then either the end
 *    marker ([DONE], message_stop, done: true) or a clean end of the
 *    body; a transfer that breaks before the end marker is SAOP_ENETWORK
 *    with a->broken set and the text kept.
 *  - Limits: connect SAOP_LLM_CONNECT_TIMEOUT_MS (at most the whole-call
 *    limit), whole call cfg->timeout_ms, less than 1 byte/s for
 *    SAOP_LLM_LOW_SPEED_TIME_S seconds; an answer over
 *    SAOP_MAX_RECORD_BYTES is SAOP_ELIMIT.  TLS is always verified.
 */
#define SAOP_LLM_DEFAULT_MAX_TOKENS	4096
#define SAOP_LLM_CONNECT_TIMEOUT_MS	10000
#define SAOP_LLM_LOW_SPEED_TIME_S	300


/* ======================================================================
 * Resume: the partial-completion resume protocol (lib/resume.c).
 * ====================================================================== */

/*
 * The resume prompt (saop-resume(1)).  The request carries it followed by
 * SAOP_RESUME_TOKEN_LABEL and the last valid token, verbatim.
 */
#define SAOP_RESUME_PROMPT "Continue the JSON payload from the last " \
	"valid token. Output ONLY the remaining JSON. Do not repeat any " \
	"content before the last valid token."
#define SAOP_RESUME_TOKEN_LABEL "\n\nLast valid token: "
/* In the user-turn form, between the prompt and the quoted partial output. */
#define SAOP_RESUME_PARTIAL_LABEL "\n\nYour partial output so far:\n\n"
/* With --context tail, between the token and what was received after it
 * (white space and the partial token), when there is such a thing. */
#define SAOP_RESUME_TAIL_LABEL "\n\nYour output after it so far:\n\n"

/* After an answer that could be read two ways (saop_resume_join()), the
 * next attempt's user turn has this after the last valid token, before
 * the partial output (which still ends the turn, or is the prefill: the
 * model is shown the same text as its own, and its answer is merged onto
 * that text). */
#define SAOP_RESUME_AGAIN_LABEL "\n\nYour last continuation could be " \
	"read two ways. Do not repeat anything already written: go on " \
	"right after the last character of your partial output."

/* How the partial output reaches the model. */
enum saop_resume_form {
	SAOP_RESUME_AUTO = 0,	/* anthropic: prefill, then user on refusal;
				   openai: user */
	SAOP_RESUME_PREFILL = 1, /* the model's own unfinished turn */
	SAOP_RESUME_USER = 2	/* quoted in a user turn */
};

/* How much of the partial output is sent. */
enum saop_resume_context {
	SAOP_RESUME_FULL = 0,	/* all of it, up to the last valid token */
	SAOP_RESUME_TAIL = 1	/* only the last valid token */
};

/* What became of one record (resume.status). */
enum saop_resume_status {
	SAOP_RESUME_SKIPPED = 0,	/* complete, invalid, or not called */
	SAOP_RESUME_RESOLVED = 1,	/* merged into complete JSON */
	SAOP_RESUME_EXHAUSTED = 2,	/* still not complete after the attempts */
	SAOP_RESUME_SUSPENDED = 3	/* the call failed; progress kept */
};

/* The word of status s: "SKIPPED", "RESOLVED", ... (static). */
const char *saop_resume_status_name(enum saop_resume_status s);

/*
 * Build the continuation request (new reference, or NULL and ENOMEM /
 * EDATA): a copy of request (borrowed; may be NULL) whose messages end
 * with the resume turn(s).  prefix (len bytes) is the partial output up to
 * its resume point (detect's resume_index); token is its last valid token
 * (may be NULL: taken as "").  PREFILL: a user turn with the prompt and
 * token, then an assistant turn holding prefix with its trailing white
 * space stripped.  USER: one user turn with the prompt, token,
 * SAOP_RESUME_PARTIAL_LABEL and prefix (all of it).  With SAOP_RESUME_TAIL
 * nothing before the last valid token is sent: one user turn with the
 * prompt and token and, when prefix ends inside a token, then
 * SAOP_RESUME_TAIL_LABEL and what follows the last valid token, whatever
 * the form.  form must not be SAOP_RESUME_AUTO.
 */
json_t *saop_resume_request(const json_t *request, const char *prefix,
    size_t len, const char *token, enum saop_resume_form form,
    enum saop_resume_context context, struct saop_err *e);

/*
 * Join prefix (plen bytes: a partial output up to its resume point,
 * exactly the text the request for cont showed the model as its own) and
 * a model's continuation cont (clen bytes), keeping every byte of prefix, by
 * the most likely reading of cont (saop-resume(1), "How the pieces are
 * joined"): as it came (mid-token if the cut was); its leading blank
 * lines dropped where white space cannot be content; a repeat of the tail
 * of prefix dropped (the open token restarted with or without its quote,
 * a cut escape or character written whole), as likely as the answer as it
 * came but for an open string written again from its start after 8 bytes
 * or more of its text (a text that does not repeat itself), which is
 * read before it; each reading
 * of cont (as it is, then the body of a code fence, after a sentence
 * around the JSON); words after the completed value cut.  Each candidate
 * is scanned (as the JSON at opt->json_start after opt->wrapper): complete
 * beats truncated beats invalid, then the more likely.  When two
 * candidates as good and as likely hold different values, none is taken:
 * opt->ambiguous is set and *out is prefix.  On success *out is a new
 * NUL-terminated buffer (free()) of *outlen bytes, res (when not NULL)
 * holds its scan (saop_detect_result_free()), and the verdict is returned:
 * SAOP_COMPLETE, SAOP_TRUNCATED or SAOP_INVALID.  Else a negative code
 * (ENOMEM).
 */
struct saop_resume_join {
	size_t unseen;		/* trailing white space of prefix the model
				   was not shown (prefill strips it) */
	size_t json_start;	/* where prefix's JSON begins (detect) */
	unsigned wrapper;	/* what wraps it (SAOP_WRAP_*) */
	size_t max_depth;	/* scanner nesting limit; 0: SAOP_MAX_DEPTH */
	int cut;		/* cont was cut too (finish_reason length, a
				   cut stream): complete and truncated
				   readings are as good, and two as likely
				   with two texts are ambiguous too */
	int ambiguous;		/* out: two readings, two values */
};
int saop_resume_join(const char *prefix, size_t plen, const char *cont,
    size_t clen, struct saop_resume_join *opt, char **out, size_t *outlen,
    struct saop_detect_result *res, struct saop_err *e);

/* saop_resume_join() of a bare prefix, all of it seen, max_depth as
 * given; an ambiguous answer leaves *out prefix (TRUNCATED). */
int saop_resume_merge(const char *prefix, size_t plen, const char *cont,
    size_t clen, size_t max_depth, char **out, size_t *outlen,
    struct saop_detect_result *res, struct saop_err *e);

/* How to resume. */
struct saop_resume_opts {
	int max_attempts;	/* continuation calls per record; 0: 2 */
	enum saop_resume_form form;
	enum saop_resume_context context;
	enum saop_provider provider;	/* decides what AUTO means */
	size_t max_depth;	/* scanner nesting limit; 0: SAOP_MAX_DEPTH */
	struct saop_model model;	/* the continuation calls */
	int no_call;		/* 1: call nothing; truncated records are
				   marked SUSPENDED with 0 attempts */
	struct saop_store *store;	/* log rows and events; NULL: none */
	const char *task_id;	/* for records without one; may be NULL */
	/* The record's recovery budget (--max-cost), started on each
	 * record; NULL: none.  Over it, no further attempt: EXHAUSTED,
	 * and SAOP_EBUDGET returned. */
	struct saop_budget *budget;
};

/* What one saop_resume_record() did. */
struct saop_resume_outcome {
	enum saop_resume_status status;
	enum saop_state state;	/* the record's state after it */
	int attempts;		/* continuation calls answered or failed */
	enum saop_verdict verdict;	/* the scan of the raw written */
	int prefill_refused;	/* AUTO fell back to the user form */
	int ambiguous;		/* answers not taken: two readings, two
				   values (resume.ambiguous) */
	/* What the resume cost, over all its calls (resume.sent_bytes...):
	 * the resume turns sent, the answers received, the usage. */
	struct saop_llm_cost cost;
};

/*
 * Run the partial-completion resume protocol on rec (a turn record,
 * changed in place): scan its raw; when truncated, call the model up to
 * opts->max_attempts times, merging each continuation, and write "raw",
 * "detect", "resume" and "state" (read once, before, and written once,
 * after); one partial_completion_log row and the
 * PARTIAL_COMPLETION_DETECTED / RESUME_SUCCEEDED / RESUME_FAILED events go
 * to opts->store.  Complete records get resume.status SKIPPED; invalid
 * ones also state INVALID.  AUTO that met SAOP_EPREFILL switches
 * opts->form to SAOP_RESUME_USER for the rest of the run.  Returns 0 with
 * out filled, or a negative code: EDATA (no string raw), ENOMEM, EDB, or
 * the code of a failed call (ENETWORK, ERATELIMIT, EREFUSED, EBADREQ,
 * EPROTO, ECONFIG), in which case rec still holds the progress made
 * (resume.status SUSPENDED, raw the best merge so far) and out too.
 */
int saop_resume_record(json_t *rec, struct saop_resume_opts *opts,
    struct saop_resume_outcome *out, struct saop_err *e);

/*
 * What saop_resume_record() would send first for rec: 1 and, when request
 * is not NULL, *request a new reference to the first continuation request;
 * 0 when rec needs no call (complete or invalid); or a negative code
 * (EDATA: no string raw, a request that is not an object).  For --dry-run
 * and for knowing beforehand that a model is needed.
 */
int saop_resume_plan(const json_t *rec, const struct saop_resume_opts *opts,
    json_t **request, struct saop_err *e);

/* ======================================================================
 * Suspend: graceful suspension of model calls (lib/suspend.c).
 * ====================================================================== */

/* What the suspend policy does with a failed call (saop_suspend_classify). */
enum saop_suspend_class {
	SAOP_SUSPEND_NONE = 0,	/* not a call failure: passed on as it is */
	SAOP_SUSPEND_LOST = 1,	/* network lost (refused, reset, DNS, timeout,
				   a cut stream, 5xx, 529): save, wait, resume */
	SAOP_SUSPEND_WAIT = 2,	/* 429 that waiting fixes: wait Retry-After,
				   not a loss */
	SAOP_SUSPEND_REFUSE = 3	/* no waiting fixes it: give up (69, 76, 78) */
};

/*
 * The class of the failure e (code and HTTP status): the one list of the
 * model failures that end a call (every one not SAOP_SUSPEND_NONE).
 */
enum saop_suspend_class saop_suspend_classify(const struct saop_err *e);

/* How to call, wait and resume. */
struct saop_suspend_opts {
	struct saop_store *store;	/* turn states, tasks, events */
	const char *stage;	/* the program calling, e.g. "saop-suspend" */
	int max_resumes;	/* automatic resumptions per turn (>= 0) */
	long poll_ms;		/* connectivity poll interval (> 0) */
	long long max_wait_ms;	/* longest wait for the endpoint; -1: no end */
	/*
	 * The longest wait for an endpoint that never answered this
	 * process, for a turn not saved before (a wrong SAOP_API_BASE
	 * costs this, not max_wait_ms); 0: max_wait_ms alone.
	 */
	long long first_contact_ms;
	size_t max_answer;	/* longest answer (--max-record); 0: none */
	int no_wait;		/* 1: suspend at once (exit 75), no waiting */
	enum saop_resume_form form;	/* continuation form; AUTO as resume */
	enum saop_provider provider;
	struct saop_model model;	/* the calls the policy guards */
	/*
	 * The connectivity check: 1 when the endpoint answers a TCP connect,
	 * 0 when not.  NULL: saop_suspend_probe() on endpoint.
	 */
	int (*probe)(void *arg);
	void *probe_arg;
	const char *endpoint;	/* base URL probed when probe is NULL */
	/* Set (by a signal handler) to stop waiting: the turn stays saved. */
	volatile sig_atomic_t *stop;
	/* Set to 1 while waiting, 0 while calling (for the handler). */
	volatile sig_atomic_t *waiting;
	/*
	 * The record's recovery budget (--max-cost; NULL: none): the
	 * turn's calls after its first, past it, are not made; the turn
	 * stays saved (let go), suspend.limit "max-cost", state
	 * USER_ESCALATION, and SAOP_EBUDGET is returned.
	 */
	struct saop_budget *budget;
};

/* What one saop_suspend_turn() did. */
struct saop_suspend_outcome {
	int calls;		/* model calls made */
	int resumes;		/* automatic resumptions (after a loss) */
	int rate_waits;		/* 429s waited out */
	size_t received;	/* answer bytes received over all calls */
	int suspended;		/* 1: the turn is saved, paused (exit 75) */
	/* What ended a suspension: "max-wait", "never-answered" (the
	 * endpoint never answered this process: first_contact_ms),
	 * "max-resumes", "no-wait", "signal" (NULL when not suspended). */
	const char *limit;
};

/*
 * The key of a saved turn in agent_turn_states: one row per turn of a
 * task per stage.  task_id: a string task_id as it is, any other JSON
 * value as its compact JSON text (saop_turn_task()); turn: the record's
 * whole-number turn, -1 when it has none; stage: the program that saved
 * it ("saop-suspend", "saop-resume", "saop-validate").
 */
struct saop_turn_key {
	const char *task_id;
	long turn;
	const char *stage;
};

/* The lease of a claim on a saved turn (ms; $SAOP_CLAIM_LEASE_MS). */
#define SAOP_CLAIM_LEASE_MS		60000
/* How long the monitor waits for a lost endpoint (ms; --max-wait). */
#define SAOP_MAX_WAIT_MS		(30L * 60 * 1000)
/* How long it waits for one never reached (ms; unless SAOP_MAX_WAIT). */
#define SAOP_FIRST_CONTACT_MS		(20L * 1000)

/*
 * The task of rec as text: its string task_id, or the compact JSON of any
 * other task_id value (42, null).  Returns new text (free()), or NULL
 * when rec has no task_id (or out of memory).
 */
char *saop_turn_task(const json_t *rec);

/*
 * Save turn state (borrowed) as k's row of agent_turn_states (upsert,
 * synchronous=FULL), saved_at now, written in the verbatim form (any
 * value reads back byte for byte).  claim 1: the row is claimed by this
 * process (host, pid, start; the lease renewed by a thread while the
 * process lives); 0: saved unclaimed.  A row held by a live claim of
 * another process is not touched: SAOP_EBUSY naming the holder.  Returns
 * 0, or a negative code (SAOP_EBUSY, SAOP_EDB, SAOP_ENOMEM).
 */
int saop_turn_state_save(struct saop_store *s, const struct saop_turn_key *k,
    const json_t *state, int claim, struct saop_err *e);

/*
 * Claim k's saved turn for this process, in one transaction: taken when
 * it is unclaimed, claimed by this process, its lease ran out, or its
 * claimer was a process of this host that is gone.  Returns 1 with
 * *state the row as it is now (new reference), 0 when there is no such
 * row (done meanwhile), or a negative code: SAOP_EBUSY naming the live
 * holder, SAOP_EDATA for a row that cannot be read (claim not taken),
 * SAOP_EDB.
 */
int saop_turn_state_claim(struct saop_store *s, const struct saop_turn_key *k,
    json_t **state, struct saop_err *e);

/*
 * End this process's claims: stop the thread that renews their leases
 * (started by the first claim) after the statement it is in, close its
 * connection and wait for it.  The claims then live out their lease (on
 * this host, until the process is gone).  A program that saved or
 * claimed a turn calls it before it ends: exit() runs other libraries'
 * cleanups (OpenSSL's, under libpq's TLS connections), which must never
 * meet that thread in the middle of a call.  A later claim starts the
 * thread again.  Returns nothing.
 */
void saop_turn_claims_end(void);

/* Drop this process's claim on k's row.  Returns 0, or a negative code. */
int saop_turn_state_release(struct saop_store *s,
    const struct saop_turn_key *k, struct saop_err *e);

/*
 * Load k's saved turn: 1 and *state (new reference), 0 when there is none
 * (*state NULL), or a negative code (SAOP_EDB, SAOP_EDATA).
 */
int saop_turn_state_load(struct saop_store *s, const struct saop_turn_key *k,
    json_t **state, struct saop_err *e);

/*
 * Delete k's saved turn unless another live process holds it: 1 deleted,
 * 0 none (or held), or a negative code.
 */
int saop_turn_state_delete(struct saop_store *s,
    const struct saop_turn_key *k, struct saop_err *e);

/*
 * Delete every saved turn of task_id whoever holds it (--clear).  Returns
 * how many, or a negative code.
 */
int saop_turn_state_clear(struct saop_store *s, const char *task_id,
    struct saop_err *e);

/* One saved turn, as saop_turn_state_each() hands it over (borrowed). */
struct saop_turn_row {
	struct saop_turn_key key;
	const char *saved_at;
	json_t *state;		/* NULL: the row cannot be read (error says) */
	const char *error;	/* why state is NULL, else NULL */
	const char *claim_host;	/* NULL: unclaimed */
	long claim_pid;
	long long claim_until;	/* lease end, ms since the epoch */
	int claim_live;		/* 1: held by a live process (not this one) */
	int claim_mine;		/* 1: held by this process */
};

/*
 * Call each(arg, row) for every saved turn (or only task_id's when not
 * NULL), oldest first; row is borrowed for the call.  A row that cannot
 * be read comes with state NULL and its error: one bad row never stops
 * the others.  Stops at a non-zero return of each and returns it; else
 * 0, or a negative code (SAOP_EDB).
 */
int saop_turn_state_each(struct saop_store *s, const char *task_id,
    int (*each)(void *arg, const struct saop_turn_row *row), void *arg,
    struct saop_err *e);

/*
 * (lib/config.c) Parse a DURATION ("90s", "30m", "2h", "500ms", a bare
 * number of seconds, "inf") into *ms (-1 for inf).  Returns 0, or -1 when it is
 * not one.
 */
int saop_duration_parse(const char *text, long long *ms);

/*
 * 1 when a TCP connection to the endpoint of base (a URL), or to the proxy
 * libcurl would use for it, is accepted within timeout_ms; else 0.
 */
int saop_suspend_probe(const char *base, long timeout_ms);

/*
 * Run one turn under the suspend policy: rec (a record with a "request";
 * changed in place) is saved in agent_turn_states (its row: task, turn,
 * opts->stage), claimed by this process, and its task set IN_PROGRESS
 * before each call; on success "raw" (the text, or a tool call's
 * arguments), "finish_reason", "usage", "tool_call" (id, name) and
 * "tool_calls" (when several) are set and the row is left for the caller
 * to forget once the record is written (saop_suspend_forget()).  A lost
 * network saves the part received, pauses the task (NETWORK_LOSS, event
 * NETWORK_LOST), waits for the endpoint (a probe every opts->poll_ms, for
 * at most opts->max_wait_ms) and resumes (NETWORK_RESTORED,
 * TURN_RESUMED), continuing a partial answer through the resume protocol;
 * at most opts->max_resumes times.  When it gives up, the row is saved
 * unclaimed, rec gets "suspend" {resumes, received, limit} and the event
 * TURN_SUSPENDED says which limit ended it.  state, when not NULL, is a
 * saved turn state to start from (borrowed; the caller claimed its row).
 * Returns 0, or a negative code: SAOP_ENETWORK / SAOP_ERATELIMIT when
 * the turn is suspended (saved; out->suspended, out->limit, rec.state
 * PAUSED_FOR_INTERVENTION), SAOP_EBUSY when another live process holds
 * the turn's row (not called), the code of a refusal (the row kept,
 * unclaimed, when something was received or state was given, else
 * deleted: the record carries the request), or SAOP_EDB / SAOP_ENOMEM.
 */
int saop_suspend_turn(json_t *rec, const json_t *state,
    struct saop_suspend_opts *opts, struct saop_suspend_outcome *out,
    struct saop_err *e);

/*
 * Forget rec's saved turn of opts->stage once its record is written and
 * flushed (write, then forget: an interrupt in between leaves the turn
 * saved, never lost); its task, IN_PROGRESS, becomes DONE (a task paused
 * or escalated meanwhile keeps that status).  Returns 1 deleted, 0 none,
 * or a negative code.
 */
int saop_suspend_forget(const struct saop_suspend_opts *opts,
    const json_t *rec, struct saop_err *e);

/*
 * Where the connectivity monitor's lines go ("... endpoint URL is
 * unreachable; waiting", "... reachable again", "... --max-wait
 * reached", "... rate limited by URL (HTTP 429): waiting"): say(line)
 * for each (a program prints it on stderr); NULL: nowhere.
 */
void saop_suspend_set_notice(void (*say)(const char *line));

/*
 * The suspend policy at the model-call seam, for the programs that call
 * the model inside another protocol (saop-resume, saop-validate): fill
 * opts (model: the calls to guard; stage: the program, e.g.
 * "saop-resume"), point rec at the record being worked on before each
 * record, and hand saop_suspend_model() to the protocol.  A guarded call
 * that meets a lost network saves rec (as it stands when the call is
 * made) as its task's turn state, with the stage, pauses the task
 * (NETWORK_LOSS, event NETWORK_LOST), waits for the endpoint and calls
 * again (NETWORK_RESTORED, TURN_RESUMED), at most opts.max_resumes times
 * per call; a 429 is waited out as saop_suspend_turn() does.  Past that,
 * with opts.no_wait, or stopped by a signal, the call fails with the
 * loss's code (SAOP_ENETWORK, SAOP_ERATELIMIT; out.suspended set) and the
 * turn stays saved.  A call that succeeds deletes the turn state this
 * stage saved for the task, in this run or an earlier one.  A record
 * without a string task_id is called without the policy.
 */
struct saop_suspend_guard {
	struct saop_suspend_opts opts;
	json_t *rec;		/* borrowed: the record at hand */
	struct saop_suspend_outcome out;	/* added to by every call */
};

/* The model whose calls go through g's policy (g borrowed). */
struct saop_model saop_suspend_model(struct saop_suspend_guard *g);

/*
 * (lib/config.c) Set o->max_resumes from SAOP_MAX_AUTO_RESUME (0 to 1000), o->poll_ms
 * from SAOP_NETWORK_POLL_INTERVAL_MS (1 to 86400000) and o->max_wait_ms
 * from SAOP_MAX_WAIT (a duration, saop_duration_parse()), each to its
 * default when unset or empty; o->first_contact_ms to
 * SAOP_FIRST_CONTACT_MS, 0 when SAOP_MAX_WAIT is set.  Returns 0, or SAOP_ECONFIG naming the variable.
 */
int saop_suspend_opts_from_env(struct saop_suspend_opts *o,
    struct saop_err *e);

/*
 * For a program whose stage (its name) calls the model of cfg (borrowed,
 * for as long as o is used): set o's stage, provider, model and
 * endpoint.  The library installs no signal handler: a program that
 * wants a signal to stop the wait points o->stop and o->waiting at the
 * flags its handler sets (src/cli.c's cli_catch_signals()).
 */
void saop_suspend_opts_for(struct saop_suspend_opts *o, const char *stage,
    struct saop_llm_config *cfg);

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
 * schema location that is wrong.  A $ref loop that never goes into the
 * value ({"$ref": "#"}, $defs that refer to each other through $ref,
 * allOf, not...) is wrong: the message names the document's URI and the
 * JSON Pointer of the $ref (or subschema) that closes the loop.
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
 * Validate instance (borrowed).  Returns 1 valid, 0 invalid, or
 * -SAOP_ENOMEM / -SAOP_EINTERNAL.  When invalid and errors is not NULL,
 * *errors is a new array of every error: {"path": JSON Pointer in the
 * instance, "keyword": the keyword, "schema_path": JSON Pointer in the
 * schema, "message": words a model can act on}.  An instance whose
 * validation nests more than SAOP_MAX_EVAL_DEPTH schemas deep is invalid
 * with exactly one error, keyword "limit", path where validation stopped.
 */
int saop_schema_validate(const struct saop_schema *s, const json_t *instance,
    json_t **errors, struct saop_err *e);

/* Free s; NULL is a no-op. */
void saop_schema_free(struct saop_schema *s);

/*
 * 1 when text (len bytes) is one JSON array whose root schema in s judges
 * it item by item (type, items, minItems, maxItems) and every item is
 * valid: each item is parsed, checked and dropped, no tree of the whole
 * is made.  0 means "not known" (another schema, another text, an item
 * not valid): validate the whole value to learn the verdict and errors.
 */
int saop_schema_valid_items(const struct saop_schema *s, const char *text,
    size_t len);

/*
 * The schema document s was compiled from (borrowed: valid while s is).
 * Returns it, or NULL when s is NULL.
 */
const json_t *saop_schema_document(const struct saop_schema *s);

/* The $id of the SAOP envelope v1 (lib/envelope-v1.json). */
#define SAOP_ENVELOPE_V1_ID	"https://saop.dev/schema/envelope-v1.json"

/* 1 when s is the SAOP envelope v1 (its $id), else 0. */
int saop_schema_is_envelope(const struct saop_schema *s);


/* ======================================================================
 * Repair and validate: local repair and the correction protocol
 * (lib/repair.c, lib/validate.c).
 * ====================================================================== */

/*
 * Repair a model's output text (len bytes, may hold NUL) when the local fix
 * has a single reading; every repair is named (saop-validate(1) lists
 * them: "bom", "think_block", "code_fence", "prose", "jsonp", "comment",
 * "trailing_comma", "extra_comma", "missing_comma", "missing_colon",
 * "single_quotes", "typographic_quotes", "backticks",
 * "missing_closing_quote", "missing_opening_quote", "unescaped_quote",
 * "unquoted_key", "unquoted_string", "python_literal", "literal_case",
 * "not_json_value", "invalid_escape", "number_form", "control_character",
 * "unicode_space", "mismatched_bracket", "surplus_bracket",
 * "string_concatenation", "concatenated_values", "schema_choice",
 * "closed").  The readings that need the fewest repairs are kept; when
 * they give different values, the schema picks the only one that fits.
 * Returns 1 with *out a new NUL-terminated text (free()), *out_len bytes,
 * and *repairs a new array of the names applied (json_decref()); 0 when the
 * text stays as it is (valid JSON, or no single reading), *out and *repairs
 * NULL; or -SAOP_ENOMEM.  saop_repair() is saop_repair_with() with no
 * options.
 */
int saop_repair(const char *text, size_t len, char **out, size_t *out_len,
    json_t **repairs, struct saop_err *e);

/* How saop_repair_with() repairs. */
struct saop_repair_opts {
	const struct saop_schema *schema;	/* judges readings; NULL: none */
	int close;	/* last resort: close a cut value by saop-detect's
			   closing rules ("closed") */
};

/*
 * saop_repair() with o (NULL: none); when no reading is taken because
 * several give different values, *readings (when readings is not NULL)
 * is a new array of their texts, else NULL.
 */
int saop_repair_with(const char *text, size_t len,
    const struct saop_repair_opts *o, char **out, size_t *out_len,
    json_t **repairs, json_t **readings, struct saop_err *e);

/* The formatting-correction prompt (saop-validate(1)), around the errors. */
#define SAOP_CORRECTION_PROMPT_HEAD \
	"Your previous response was not valid SAOP JSON. Errors: "
#define SAOP_CORRECTION_PROMPT_TAIL \
	". Please restate your complete response starting from '{'."
/*
 * The correction prompt for a schema other than the envelope: the head,
 * the errors, the tail, then what the answer starts with when the
 * schema's root fixes a type (" starting from '['"...) and a full stop;
 * after the error list, the schema (or the parts its errors point at,
 * SAOP_CORRECTION_SCHEMA_MAX bytes at most).
 */
#define SAOP_CORRECTION_SCHEMA_HEAD \
	"Your previous response does not follow the JSON Schema it must " \
	"follow. Errors: "
#define SAOP_CORRECTION_SCHEMA_TAIL \
	". Please restate your complete response"
/* After the prompt, the structured error list as a fenced JSON array. */
#define SAOP_CORRECTION_LIST_HEAD "\n\n```json\n"
#define SAOP_CORRECTION_LIST_TAIL "\n```"

/*
 * Check one answer text: repair it (unless no_repair), parse it, validate
 * it against s.  Returns 1 valid (*value the parsed value, new), 0 invalid
 * (*value NULL), or a negative code.  *errors is a new array (empty when valid) of
 * {"path", "keyword", "message"}: schema errors, or one "syntax" error
 * naming the line, column and byte (of the text as given: a BOM counts),
 * or one "limit" error naming the jansson limit (nesting, 64-bit integers,
 * \u0000 in a key) that keeps a tree from being built, or the schema's
 * SAOP_MAX_EVAL_DEPTH.  *repairs is a new array of the repairs made.
 */
int saop_validate_text(const struct saop_schema *s, int no_repair,
    const char *text, size_t len, json_t **value, json_t **errors,
    json_t **repairs, struct saop_err *e);

/*
 * One error as a line: "path: message", "(root): message" for the whole
 * value, or the message alone when it begins with its path already.  New
 * string (free()), or NULL when out of memory.
 */
char *saop_validate_error_text(const json_t *err);

/*
 * The <errors> of the correction prompt: every error as
 * saop_validate_error_text() writes it, joined by "; ", without a full
 * stop at the end.  New string (free()), or NULL when out of memory.
 */
char *saop_validate_errors_text(const json_t *errors);

/*
 * The correction request (new reference): a copy of request (borrowed; may
 * be NULL) whose messages end with the answer raw as the assistant's turn
 * and a user turn of SAOP_CORRECTION_PROMPT_HEAD, the errors text,
 * SAOP_CORRECTION_PROMPT_TAIL, then the error list as compact JSON between
 * SAOP_CORRECTION_LIST_HEAD and _TAIL.  NULL and ENOMEM / EDATA.
 */
json_t *saop_correction_request(const json_t *request, const char *raw,
    size_t raw_len, const json_t *errors, struct saop_err *e);

/*
 * The text of the correction turn for errors (borrowed) under schema s
 * (NULL or the envelope: SAOP_CORRECTION_PROMPT_HEAD's words; another:
 * SAOP_CORRECTION_SCHEMA_HEAD's, no "SAOP" in it), then the error list
 * and, for another schema, the schema.  New string (free()), or NULL out
 * of memory.
 */
char *saop_correction_text(const struct saop_schema *s, const json_t *errors);

/* The user's checks (saop-validate --check, lib/check.c). */

/* A failed check's standard error is kept up to this many bytes. */
#define SAOP_CHECK_STDERR_MAX	2000

/*
 * Can the check cmd run: is its first word a path to an executable file,
 * or a program found on $PATH?  Returns 0, or -SAOP_ECONFIG naming the
 * command.
 */
int saop_check_runnable(const char *cmd, struct saop_err *e);

/*
 * Run cmd with /bin/sh -c, text (len bytes: the answer's JSON) on its
 * standard input, SAOP_TASK_ID (task_id, when not NULL) and SAOP_TURN
 * (turn, when >= 0) in its environment, its standard output thrown away.
 * Returns 1 when it exits 0; 0 when it fails, with *msg a new string
 * (free()): its standard error, trailing white space off, clipped to
 * SAOP_CHECK_STDERR_MAX bytes (whole characters, "..." after), or "exited
 * with status N" / "killed by signal N" when it wrote none; or
 * -SAOP_ECONFIG when the shell could not run it, -SAOP_EIO, -SAOP_ENOMEM.
 * A check that stops reading its input does not end the caller: SIGPIPE
 * is held back in the calling thread while the text is written, and the
 * one a write raised is taken back; the caller's handlers, dispositions
 * and signal mask are left as they were (the check inherits them).
 */
int saop_check_run(const char *cmd, const char *task_id, long turn,
    const char *text, size_t len, char **msg, struct saop_err *e);

/* How saop_validate_record() works. */
struct saop_validate_opts {
	const struct saop_schema *schema;	/* borrowed */
	int no_repair;
	int max_retries;	/* correction turns per record */
	/* The correction calls; model.call NULL: only validate. */
	struct saop_model model;
	/* The record's recovery budget (--max-cost), started on each
	 * record; NULL: none.  Over it, no further correction turn:
	 * USER_ESCALATION, and SAOP_EBUDGET returned. */
	struct saop_budget *budget;
	struct saop_store *store;	/* events and tasks; needed with a
					   model */
	size_t max_answer;	/* longest answer (0: SAOP_MAX_RECORD_BYTES) */
	/*
	 * 1: nobody reads the record after (saop-validate -q with no
	 * model): the same verdict, errors, state and return, but a valid
	 * record gets no "envelope", so the value need not be kept and a
	 * large top-level array is checked an item at a time.
	 */
	int no_envelope;
	/*
	 * 1 (--close): a cut answer is closed locally when nothing else
	 * reads (saop_repair_with()); validate.closed says whether it was.
	 * Never for a record with a tool_call: it goes on to correction.
	 */
	int close;
	/*
	 * The user's checks (borrowed; ncheck of them), run in order on an
	 * answer the schema passed (saop_check_run()): the first that fails
	 * is the answer's one error, {"path": "check:N" (from 1), "keyword":
	 * "check", "message": its words}, corrected and escalated as a
	 * schema error is.
	 */
	const char *const *checks;
	size_t nchecks;
};

/* What one saop_validate_record() did: what it wrote on the record. */
struct saop_validate_outcome {
	enum saop_state state;	/* the record's state after it: OK,
				   INVALID, TRUNCATED, USER_ESCALATION */
	int valid;		/* validate.valid */
	int attempts;		/* correction turns answered
				   (validate.attempts) */
	size_t repairs;		/* local repairs of the answer judged
				   last (validate.repairs) */
	int closed;		/* closed locally under close
				   (validate.closed) */
	const json_t *errors;	/* validate.errors (borrowed from the
				   record), NULL when valid */
	struct saop_llm_cost cost;	/* what the correction turns
					   cost, over the calls answered
					   (validate.sent_bytes...) */
};

/*
 * Validate the record rec (changed in place) and run the correction
 * protocol on it.  The record is read once, before, and written once,
 * after: "validate", "state" and, when valid, "envelope"; a corrected
 * answer replaces "raw" (the first one is kept as
 * validate.original_raw).  Each correction turn answered is logged as
 * CORRECTION_ANSWERED with what its call cost, and their sum goes on
 * validate.sent_bytes, received_bytes, prompt_tokens, completion_tokens
 * (null tokens when none was reported).  A record in state TRUNCATED is
 * only validated.
 * Returns 0 with out filled (out->state OK, or INVALID / TRUNCATED:
 * flagged, or USER_ESCALATION), or a negative code when a call failed
 * (the record and out then hold what was known: valid false, attempts
 * the turns answered) or a store write did; out of memory
 * (-SAOP_ENOMEM) rec stays as it came (out: its state, no errors), never
 * half written.  Whatever rec's answer holds
 * (no raw, not JSON, past jansson's or the schema's limits), 0 comes with
 * "validate" and "state" set.
 */
int saop_validate_record(json_t *rec, const struct saop_validate_opts *o,
    struct saop_validate_outcome *out, struct saop_err *e);

/*
 * For --dry-run: the correction request rec would need (new reference in
 * *request), 1; or 0 when its answer is valid, or negative.
 */
int saop_validate_plan(const json_t *rec, const struct saop_validate_opts *o,
    json_t **request, struct saop_err *e);

/* ======================================================================
 * Prune: tool-output pruning (lib/prune.c).
 * ====================================================================== */

/* One tool output that was pruned (or, with dry_run, would be). */
struct saop_prune_item {
	const char *task_id;	/* borrowed: valid during the callback */
	const char *tool_name;	/* may be NULL */
	const char *tool_call_id;	/* may be NULL */
	const char *field;	/* JSON Pointer of the output in its record */
	size_t byte_size;	/* of the raw output */
	long turn_age;
	long long id;		/* its row in tool_outputs; 0 with dry_run */
	int reused;		/* the same raw output was stored before */
};

/*
 * How to prune.  saop_prune_opts_init() sets DESIGN's constants and no
 * store; everything else is optional.
 */
struct saop_prune_opts {
	size_t threshold;	/* prune outputs larger than this (bytes) */
	long min_age;		/* ... whose turn age is at least this */
	size_t keep;		/* characters of the raw kept in the summary */
	int dry_run;		/* store nothing, change nothing */
	const char *task_id;	/* rows and events of outputs without one */
	long turn;		/* the record's turn for events, or -1 */
	const char *field;	/* JSON Pointer of the messages (errors) */
	long line;		/* input line (errors), or 0 */
	/* The state database; when NULL, open_store(store_arg) is asked
	 * for it the first time an output is to be stored. */
	struct saop_store *store;
	struct saop_store *(*open_store)(void *arg, struct saop_err *e);
	void *store_arg;
	/* When not NULL, told of every output pruned, after its commit. */
	void (*on_output)(void *arg, const struct saop_prune_item *it);
	void *on_output_arg;
};

/* Tallies, added to by each call. */
struct saop_prune_stats {
	unsigned long outputs;	/* tool outputs seen */
	unsigned long pruned;	/* replaced by a summary now */
	unsigned long stored;	/* new rows in tool_outputs */
	unsigned long already;	/* summaries of an earlier run, left alone */
	unsigned long long bytes_in;	/* of the outputs seen */
	unsigned long long bytes_out;	/* of the same outputs afterwards */
};

/* Fill o with SAOP_LARGE_OUTPUT_THRESHOLD_BYTES, SAOP_PRUNE_MIN_TURN_AGE,
 * SAOP_SUMMARY_CHARS, turn -1 and nothing else. */
void saop_prune_opts_init(struct saop_prune_opts *o);

/*
 * Prune the conversation messages (an array, borrowed and changed in
 * place).  Tool outputs are OpenAI-style messages of role "tool" (or
 * "function") and Anthropic-style "tool_result" blocks in the content of
 * a user message; their content is a string or an array of text parts.
 * The turn age of an output is 1 plus the number of assistant messages
 * after it.  Every output with turn age >= o->min_age and more than
 * o->threshold bytes is stored in tool_outputs (an equal raw output of the
 * same task is reused), all of them in one durable transaction, and only
 * then replaced by saop_prune_summary().  Returns 0; SAOP_EDATA naming
 * the field of a message that is not one; SAOP_EDB / SAOP_EIO when the
 * store failed: then nothing is replaced, except when only the event
 * TOOL_OUTPUT_PRUNED could not be recorded after the commit.
 */
int saop_prune_messages(json_t *messages, const struct saop_prune_opts *o,
    struct saop_prune_stats *st, struct saop_err *e);

/*
 * Prune n tool-output entries (objects with raw_content, turn_age,
 * tool_name, tool_call_id, captured_at, byte_size, task_id; borrowed and
 * changed in place) as saop_prune_messages() prunes messages, with the
 * turn age the entry states, all in one transaction.  A pruned entry gets
 * "stored_id".  lines (may be NULL) holds each entry's input line, for
 * errors.
 */
int saop_prune_entries(json_t *const *entries, const long *lines, size_t n,
    const struct saop_prune_opts *o, struct saop_prune_stats *st,
    struct saop_err *e);

/*
 * The summary of a raw output of len bytes stored as row id: its first
 * keep whole UTF-8 characters, then "\n\n[... N bytes total \u2014 full
 * output in state.sqlite, id ID]".  Returns a new string (free()), its
 * length in *out_len, or NULL when out of memory.
 */
char *saop_prune_summary(const char *raw, size_t len, size_t keep,
    long long id, size_t *out_len);

/*
 * 1 when s (len bytes) ends with the marker of saop_prune_summary(), and
 * then the total and the id it names; else 0.
 */
int saop_prune_is_summary(const char *s, size_t len,
    unsigned long long *bytes, long long *id);

/*
 * Write the raw output stored as row id to f, byte for byte.  Returns 0,
 * 1 when there is no such row, or SAOP_EDB / SAOP_EIO.
 */
int saop_tool_output_get(struct saop_store *s, long long id, FILE *f,
    struct saop_err *e);

/*
 * The id of the most recently captured output of tool (of task, when not
 * NULL) in *id.  Returns 0, 1 when there is none, or SAOP_EDB.
 */
int saop_tool_output_latest(struct saop_store *s, const char *tool,
    const char *task, long long *id, struct saop_err *e);

/*
 * Write the table of stored outputs (of task, when not NULL) to f: a
 * header, then one tab-separated line per row, oldest first.  Returns 0,
 * or SAOP_EDB / SAOP_EIO.
 */
int saop_tool_output_list(struct saop_store *s, const char *task, FILE *f,
    struct saop_err *e);


/* ======================================================================
 * Report: what happened to each task (lib/report.c, saop-report).
 * ====================================================================== */

/*
 * A new report read from s (NULL: none), of task when not NULL: per task
 * its status and reason (tasks), turns with a trace, truncations
 * (detected; resumed and exhausted with the resume attempts, from
 * partial_completion_log), correction turns (MALFORMED_RESPONSE),
 * escalations (MAX_RETRIES_EXCEEDED), suspensions (NETWORK_LOST, those
 * followed by NETWORK_RESTORED, the milliseconds down, turns still saved),
 * pruned outputs and their bytes (TOOL_OUTPUT_PRUNED), and what recovery
 * cost (bytes and tokens of resumes, from partial_completion_log and, for
 * a resume a failed call ended, RESUME_FAILED with status SUSPENDED; of
 * the correction turns answered, a refused one too, from
 * CORRECTION_ANSWERED).
 * Returns 0 with *report new (json_decref()), or SAOP_EDB / SAOP_ENOMEM.
 */
int saop_report_new(struct saop_store *s, const char *task, json_t **report,
    struct saop_err *e);

/*
 * Count record rec (borrowed; skipped unless its task_id is task, when
 * task is not NULL) in report: records, final states, local repairs by
 * kind (validate.repairs), saop-suspend's tokens (usage, a refused
 * answer's too), and money (the record's cost: answer and recovery in USD
 * into money.answer, money.recovery, money.total; a part not known, null,
 * counted in money.unpriced).  Returns 0 or SAOP_ENOMEM.
 */
int saop_report_add_record(json_t *report, const json_t *rec,
    const char *task, struct saop_err *e);

/*
 * Give report its final shape: {"tasks": [TASK, ... sorted by task_id],
 * "overall": the sums, with "tasks" their number}.  turns is the number
 * of records when records were counted.  Returns 0 or SAOP_ENOMEM.
 */
int saop_report_finish(json_t *report, struct saop_err *e);

#ifdef __cplusplus
}
#endif

#endif /* SAOP_H */
