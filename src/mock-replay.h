/* mock-replay.h: saop-mock's --replay, recorded answers served raw. */
#ifndef SAOP_MOCK_REPLAY_H
#define SAOP_MOCK_REPLAY_H

#include <microhttpd.h>

/* One recorded answer: a body file, its status and headers. */
struct recorded;

/*
 * Read the recorded answers of path (a directory: its *.sse, *.ndjson
 * and *.json files in name order, not *.headers.json nor *.request.json;
 * or one such file).  Exits 66 when path cannot be read, 65 when it
 * holds no answer or a headers file is not {"status", "headers"}.
 */
void replay_load(const char *path);

/*
 * The answer for a request of model (NULL: any), under the caller's
 * lock: the next one in name order or, with by_model, the first one not
 * served yet whose model is model's; when none is left, the last one
 * served (the last one matching with by_model) when repeat, else NULL.
 * *matched is 0 when by_model and no answer is recorded for model at all.
 */
const struct recorded *replay_pick(const char *model, int by_model,
    int repeat, int *matched);

/*
 * The recording of the body file path (its headers and request files
 * beside it), as replay_load() reads one, kept until replay_free().
 * Exits 66 when it cannot be read, 65 when its headers file is bad.
 */
const struct recorded *replay_load_file(const char *path);

/* The file name of rec (no directory). */
const char *replay_name(const struct recorded *rec);

/* The number of rec in name order, from 1. */
long replay_number(const struct recorded *rec);

/*
 * A new MHD response of rec: its body raw (chunked for a stream), its
 * recorded headers but those of the transfer; *status its status.
 * Returns NULL when out of memory.
 */
struct MHD_Response *replay_response(const struct recorded *rec,
    unsigned *status);

/*
 * The recorded body of rec (*len bytes), whether it is a stream (sent
 * chunked) and its status.
 */
const char *replay_body(const struct recorded *rec, size_t *len,
    int *stream, unsigned *status);

/* Add rec's recorded headers to resp (but the transfer's), a type. */
void replay_headers(const struct recorded *rec, struct MHD_Response *resp);

/* Free what replay_load() read. */
void replay_free(void);

#endif
