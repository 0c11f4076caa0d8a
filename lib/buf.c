/*
 * buf.c: the one growable byte buffer of lib/ (struct saop__buf in
 * saop-private.h): appends that double the room, overflow-checked, the
 * text always NUL-terminated once anything is held.
 */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "saop-private.h"

/* The allocator the buffer grows with: realloc(), or a test's stand-in. */
void *(*saop__buf_realloc)(void *p, size_t n) = realloc;

/* Empty b: no bytes, nothing allocated. */
void
saop__buf_init(struct saop__buf *b)
{
	b->data = NULL;
	b->len = b->cap = 0;
}

/*
 * Make room in b for more bytes after its len and a NUL after them.
 * Returns 0, or -SAOP_ENOMEM when the size would overflow or the memory
 * cannot be had (b unchanged).
 */
int
saop__buf_reserve(struct saop__buf *b, size_t more)
{
	size_t need, cap;
	char *p;

	if (more > SIZE_MAX - 1 - b->len)
		return -SAOP_ENOMEM;
	need = b->len + more + 1;
	if (need <= b->cap)
		return 0;
	cap = b->cap ? b->cap : 64;
	while (cap < need)
		cap = cap > SIZE_MAX / 2 ? need : cap * 2;
	if ((p = saop__buf_realloc(b->data, cap)) == NULL)
		return -SAOP_ENOMEM;
	b->data = p;
	b->cap = cap;
	return 0;
}

/*
 * Append the n bytes at p to b, keeping it NUL-terminated.  Returns 0, or
 * -SAOP_ENOMEM (b unchanged).
 */
int
saop__buf_append(struct saop__buf *b, const void *p, size_t n)
{
	if (saop__buf_reserve(b, n) != 0)
		return -SAOP_ENOMEM;
	if (n > 0)
		memcpy(b->data + b->len, p, n);
	b->len += n;
	b->data[b->len] = '\0';
	return 0;
}

/* Append the byte c to b.  Returns 0, or -SAOP_ENOMEM (b unchanged). */
int
saop__buf_putc(struct saop__buf *b, int c)
{
	unsigned char u = (unsigned char)c;

	return saop__buf_append(b, &u, 1);
}

/*
 * Append the n bytes at p to b unless b would then hold more than max
 * bytes.  Returns 0, -SAOP_ELIMIT past max or -SAOP_ENOMEM (b unchanged
 * either way).
 */
int
saop__buf_append_max(struct saop__buf *b, const void *p, size_t n,
    size_t max)
{
	if (b->len > max || n > max - b->len)
		return -SAOP_ELIMIT;
	return saop__buf_append(b, p, n);
}

/*
 * Take b's bytes (NUL-terminated; their count in *len when len is not
 * NULL) and leave b empty.  Returns a new string to free(), "" when b held
 * nothing, or NULL when out of memory for that "" (b then stays empty).
 */
char *
saop__buf_steal(struct saop__buf *b, size_t *len)
{
	char *p;

	if (len != NULL)
		*len = 0;
	if (b->data == NULL && saop__buf_reserve(b, 0) != 0)
		return NULL;
	if (b->len == 0)
		b->data[0] = '\0';
	p = b->data;
	if (len != NULL)
		*len = b->len;
	saop__buf_init(b);
	return p;
}

/* Free what b holds and leave it empty (reusable); NULL is a no-op. */
void
saop__buf_free(struct saop__buf *b)
{
	if (b == NULL)
		return;
	free(b->data);
	saop__buf_init(b);
}
