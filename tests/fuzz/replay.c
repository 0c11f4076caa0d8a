/*
 * replay.c: the plain driver of a fuzz target, for make check without
 * clang.  Each argument is a file or a directory of files (a seed corpus,
 * the regressions); every file is fed once to LLVMFuzzerTestOneInput(),
 * whose properties abort on a bug.  Exit 0 when every file replayed, 1
 * when none was found or one could not be read, 64 on usage.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz.h"

/*
 * Read the whole file path into a new buffer *buf (free()), *len bytes.
 * Returns 0, or -1 with a message on stderr.
 */
static int
slurp(const char *path, uint8_t **buf, size_t *len)
{
	FILE *f;
	uint8_t *b = NULL, *nb;
	size_t n = 0, cap = 0, got;

	if ((f = fopen(path, "rb")) == NULL) {
		fprintf(stderr, "replay: %s: %s\n", path, strerror(errno));
		return -1;
	}
	do {
		if (cap - n < 4096) {
			cap = cap ? cap * 2 : 8192;
			if ((nb = realloc(b, cap)) == NULL) {
				fprintf(stderr, "replay: out of memory\n");
				free(b);
				fclose(f);
				return -1;
			}
			b = nb;
		}
		got = fread(b + n, 1, cap - n, f);
		n += got;
	} while (got > 0);
	if (ferror(f)) {
		fprintf(stderr, "replay: %s: read error\n", path);
		free(b);
		fclose(f);
		return -1;
	}
	fclose(f);
	/* A copy of exactly n bytes, so ASan sees a read past the input. */
	if ((nb = malloc(n > 0 ? n : 1)) == NULL) {
		free(b);
		return -1;
	}
	memcpy(nb, b, n);
	free(b);
	*buf = nb;
	*len = n;
	return 0;
}

/* Feed the file path to the target; 0, or -1 when it cannot be read. */
static int
replay_file(const char *path)
{
	uint8_t *buf;
	size_t len;

	if (slurp(path, &buf, &len) != 0)
		return -1;
	if (getenv("SAOP_REPLAY_VERBOSE") != NULL)
		fprintf(stderr, "replay: %s (%zu bytes)\n", path, len);
	LLVMFuzzerTestOneInput(buf, len);
	free(buf);
	return 0;
}

/*
 * Replay path: a file, or every regular file of a directory (not
 * descending; names starting with '.' and README skipped).  Adds the
 * files replayed to *count.  Returns 0, or -1 on a read error.
 */
static int
replay_path(const char *path, unsigned long *count)
{
	struct dirent *de;
	struct stat st;
	char sub[4096];
	DIR *d;
	int rc = 0;

	if (stat(path, &st) != 0) {
		fprintf(stderr, "replay: %s: %s\n", path, strerror(errno));
		return -1;
	}
	if (!S_ISDIR(st.st_mode)) {
		if (replay_file(path) != 0)
			return -1;
		++*count;
		return 0;
	}
	if ((d = opendir(path)) == NULL) {
		fprintf(stderr, "replay: %s: %s\n", path, strerror(errno));
		return -1;
	}
	while (rc == 0 && (de = readdir(d)) != NULL) {
		if (de->d_name[0] == '.' || strcmp(de->d_name, "README") == 0)
			continue;
		if ((size_t)snprintf(sub, sizeof(sub), "%s/%s", path,
		    de->d_name) >= sizeof(sub))
			continue;
		if (stat(sub, &st) != 0 || !S_ISREG(st.st_mode))
			continue;
		if (replay_file(sub) != 0)
			rc = -1;
		else
			++*count;
	}
	closedir(d);
	return rc;
}

/* Replay every argument; print how many files were replayed. */
int
main(int argc, char *argv[])
{
	unsigned long count = 0;
	int i;

	if (argc < 2) {
		fprintf(stderr, "usage: %s file|dir...\n", argv[0]);
		return 64;
	}
	for (i = 1; i < argc; i++)
		if (replay_path(argv[i], &count) != 0)
			return 1;
	printf("%s: %lu inputs replayed, no property broken\n", argv[0],
	    count);
	if (count == 0) {
		fprintf(stderr, "replay: no inputs found\n");
		return 1;
	}
	return 0;
}
