/*
 * fuzz.h: what every fuzz target in tests/fuzz/ shares.  A target is one
 * LLVMFuzzerTestOneInput() that feeds the bytes to one parser of libsaop
 * and checks properties of what comes back; a broken property aborts, so
 * libFuzzer (make fuzz) and the plain replay driver (replay.c, make check)
 * both report it.  Nothing here depends on libFuzzer.
 */
#ifndef SAOP_FUZZ_H
#define SAOP_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

/* The entry point libFuzzer and replay.c call: 0, or abort on a bug. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/*
 * Report a broken property (what, at file:line) on stderr and abort: the
 * abort is the crash libFuzzer saves and the replay test fails on.
 */
static inline void
fuzz_fail(const char *file, int line, const char *what)
{
	fprintf(stderr, "%s:%d: property broken: %s\n", file, line, what);
	fflush(stderr);
	abort();
}

/* Abort naming cond unless it holds; works with NDEBUG too. */
#define FUZZ_CHECK(cond) do { \
	if (!(cond)) \
		fuzz_fail(__FILE__, __LINE__, #cond); \
} while (0)

/*
 * A small deterministic generator (xorshift64*), seeded from the input so
 * a crash file replays the same chunk splits and cut points.
 */
struct fuzz_rng {
	uint64_t s;
};

/* Seed r from the bytes (FNV-1a); the seed is never 0. */
static inline void
fuzz_rng_seed(struct fuzz_rng *r, const uint8_t *data, size_t size)
{
	uint64_t h = 1469598103934665603ULL;
	size_t i;

	for (i = 0; i < size; i++) {
		h ^= data[i];
		h *= 1099511628211ULL;
	}
	r->s = h != 0 ? h : 1;
}

/* The next number of r. */
static inline uint64_t
fuzz_rng_next(struct fuzz_rng *r)
{
	r->s ^= r->s >> 12;
	r->s ^= r->s << 25;
	r->s ^= r->s >> 27;
	return r->s * 2685821657736338717ULL;
}

/* A number in [0, n) (0 when n is 0). */
static inline size_t
fuzz_rng_below(struct fuzz_rng *r, size_t n)
{
	return n == 0 ? 0 : (size_t)(fuzz_rng_next(r) % n);
}

/*
 * The size of the next chunk of a random split of left bytes: mostly
 * small (1..16), sometimes larger, sometimes empty (len 0 is allowed by
 * every feed call).
 */
static inline size_t
fuzz_chunk(struct fuzz_rng *r, size_t left)
{
	size_t k;

	switch (fuzz_rng_below(r, 8)) {
	case 0:
		k = 0;
		break;
	case 1:
		k = 1 + fuzz_rng_below(r, 512);
		break;
	default:
		k = 1 + fuzz_rng_below(r, 16);
		break;
	}
	return k < left ? k : left;
}

#endif /* SAOP_FUZZ_H */
