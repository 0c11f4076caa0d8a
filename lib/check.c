/*
 * check.c: the user's own checks of an answer (saop-validate --check CMD):
 * CMD run by /bin/sh with the answer's JSON on its standard input; its
 * exit status is the verdict and its standard error the reason.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "saop-private.h"

/* The shell's statuses for a command it could not run. */
#define SH_NOT_EXECUTABLE	126
#define SH_NOT_FOUND		127

/* Is path a regular file we may execute?  1 or 0. */
static int
executable(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISREG(st.st_mode) &&
	    access(path, X_OK) == 0;
}

/* Is the program name (no '/') an executable file on $PATH?  1 or 0. */
static int
on_path(const char *name)
{
	const char *path = saop__config_path(), *p, *end;
	char full[PATH_MAX];

	for (p = path;; p = end + 1) {
		size_t n;

		end = strchr(p, ':');
		n = end != NULL ? (size_t)(end - p) : strlen(p);
		if (snprintf(full, sizeof(full), "%.*s/%s", (int)n,
		    n > 0 ? p : ".", name) < (int)sizeof(full) &&
		    executable(full))
			return 1;
		if (end == NULL)
			return 0;
	}
}

/*
 * Can cmd run (see saop.h)?  Its first word is a path to an executable
 * file, or a program found on $PATH.  Returns 0, or -SAOP_ECONFIG naming
 * the command.
 */
int
saop_check_runnable(const char *cmd, struct saop_err *e)
{
	char word[PATH_MAX];
	size_t n;

	cmd += strspn(cmd, " \t");
	n = strcspn(cmd, " \t\n;|&<>()");
	if (n == 0)
		return saop__fail(e, SAOP_ECONFIG, 0, "--check: the command "
		    "is empty");
	if (n >= sizeof(word))
		return saop__fail(e, SAOP_ECONFIG, 0, "--check '%.64s...': "
		    "the program name is too long", cmd);
	memcpy(word, cmd, n);
	word[n] = '\0';
	if (strchr(word, '/') != NULL ? executable(word) : on_path(word))
		return 0;
	return saop__fail(e, SAOP_ECONFIG, 0, "--check '%.200s': %s is %s",
	    cmd, word, strchr(word, '/') != NULL ? "not an executable file" :
	    "not a program found on PATH");
}

/*
 * The child's side: stdin, stdout and stderr onto the pipes and
 * /dev/null, the record's task and turn in the environment, then the
 * shell.  Never returns.
 */
static void
child(const char *cmd, const char *task_id, long turn, int in, int err)
{
	int null = open("/dev/null", O_WRONLY);

	if (null < 0 || dup2(in, 0) < 0 || dup2(null, 1) < 0 ||
	    dup2(err, 2) < 0)
		_exit(SH_NOT_EXECUTABLE);
	if (task_id != NULL)
		setenv("SAOP_TASK_ID", task_id, 1);
	else
		unsetenv("SAOP_TASK_ID");
	if (turn >= 0) {
		char num[32];

		snprintf(num, sizeof(num), "%ld", turn);
		setenv("SAOP_TURN", num, 1);
	} else {
		unsetenv("SAOP_TURN");
	}
	execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
	_exit(SH_NOT_EXECUTABLE);
}

/*
 * write(2) of n bytes at p to fd, with SIGPIPE held back in this thread:
 * a check that stops reading its input must not kill the caller, and
 * the caller's handlers and dispositions are not the library's to
 * change.  A SIGPIPE this write raised is taken back (sigwait()); one
 * that was pending already stays.  Returns what write() returned, errno
 * kept.
 */
static ssize_t
write_held(int fd, const void *p, size_t n)
{
	sigset_t pipe_set, old, pending;
	int was_pending, sig, saved;
	ssize_t w;

	sigemptyset(&pipe_set);
	sigaddset(&pipe_set, SIGPIPE);
	sigemptyset(&pending);
	sigpending(&pending);
	was_pending = sigismember(&pending, SIGPIPE);
	pthread_sigmask(SIG_BLOCK, &pipe_set, &old);
	w = write(fd, p, n);
	saved = errno;
	if (w < 0 && saved == EPIPE && !was_pending) {
		sigemptyset(&pending);
		if (sigpending(&pending) == 0 &&
		    sigismember(&pending, SIGPIPE))
			sigwait(&pipe_set, &sig);
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	errno = saved;
	return w;
}

/*
 * Write text to fd w while reading fd r into b (its first max bytes; the
 * rest is read and dropped), until r ends.  w is closed once written, or
 * when the reader stops taking it.  Returns 0, or -1 with errno.
 */
static int
pump(int w, const char *text, size_t len, int r, struct saop__buf *b,
    size_t max)
{
	struct pollfd p[2];
	char chunk[4096];
	size_t done = 0;
	ssize_t n;

	for (;;) {
		nfds_t k = 0;

		p[k].fd = r;
		p[k++].events = POLLIN;
		if (w >= 0) {
			p[k].fd = w;
			p[k++].events = POLLOUT;
		}
		if (poll(p, k, -1) < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		if (w >= 0 && p[1].revents != 0) {
			n = done < len ? write_held(w, text + done, len - done >
			    65536 ? 65536 : len - done) : 0;
			if (n > 0)
				done += (size_t)n;
			/* Written, or the check stopped reading (EPIPE). */
			if (done == len || (n < 0 && errno != EINTR &&
			    errno != EAGAIN)) {
				close(w);
				w = -1;
			}
		}
		if (p[0].revents == 0)
			continue;
		if ((n = read(r, chunk, sizeof(chunk))) < 0) {
			if (errno == EINTR || errno == EAGAIN)
				continue;
			break;
		}
		if (n == 0)
			break;
		if (b->len < max && saop__buf_append(b, chunk,
		    (size_t)n < max - b->len ? (size_t)n : max - b->len) != 0)
			return -1;
	}
	if (w >= 0)
		close(w);
	return 0;
}

/*
 * The message of a failed check from its stderr (b) or its status:
 * trailing white space off, cut at a whole UTF-8 character.  Returns a
 * new string, or NULL on ENOMEM.
 */
static char *
failure_text(struct saop__buf *b, int status, int clipped)
{
	size_t n = b->len, i, k;

	while (n > 0 && (b->data[n - 1] == '\n' || b->data[n - 1] == ' ' ||
	    b->data[n - 1] == '\t' || b->data[n - 1] == '\r'))
		n--;
	if (n == 0) {
		char buf[96];

		if (WIFSIGNALED(status))
			snprintf(buf, sizeof(buf), "killed by signal %d",
			    WTERMSIG(status));
		else
			snprintf(buf, sizeof(buf), "exited with status %d",
			    WEXITSTATUS(status));
		return strdup(buf);
	}
	if (clipped) {
		if (n > SAOP_CHECK_STDERR_MAX)
			n = SAOP_CHECK_STDERR_MAX;
		n -= saop__utf8_tail((const unsigned char *)b->data, n);
	}
	/* Text for a JSON string: a byte that is not UTF-8 becomes '?'. */
	for (i = 0; i < n; i += k > 0 ? k : 1)
		if ((k = saop__utf8_seq((const unsigned char *)b->data + i,
		    n - i)) == 0 || b->data[i] == '\0')
			b->data[i] = '?';
	b->len = n;
	if (clipped && saop__buf_append(b, "...", 3) != 0)
		return NULL;
	return strndup(b->data, b->len);
}

/*
 * Run the check cmd on text (see saop.h).  Returns 1 (exit 0), 0 with *msg
 * (failed), or -SAOP_ECONFIG (cannot run), -SAOP_EIO, -SAOP_ENOMEM.
 */
int
saop_check_run(const char *cmd, const char *task_id, long turn,
    const char *text, size_t len, char **msg, struct saop_err *e)
{
	struct saop__buf b;
	int in[2] = { -1, -1 }, err[2] = { -1, -1 }, status = 0, r;
	pid_t pid;

	*msg = NULL;
	saop__buf_init(&b);
	if (pipe(in) != 0 || pipe(err) != 0) {
		r = saop__fail(e, SAOP_EIO, errno, "--check: pipe: %s",
		    strerror(errno));
		goto out;
	}
	/* A check that does not read its input must not kill us: pump()
	 * writes it with SIGPIPE held back (write_held()). */
	if ((pid = fork()) < 0) {
		r = saop__fail(e, SAOP_EIO, errno, "--check: fork: %s",
		    strerror(errno));
		goto out;
	}
	if (pid == 0) {
		close(in[1]);
		close(err[0]);
		child(cmd, task_id, turn, in[0], err[1]);
	}
	close(in[0]);
	close(err[1]);
	in[0] = err[1] = -1;
	fcntl(in[1], F_SETFL, fcntl(in[1], F_GETFL) | O_NONBLOCK);
	r = pump(in[1], text, len, err[0], &b, SAOP_CHECK_STDERR_MAX + 1);
	in[1] = -1;	/* pump() closed it */
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (r != 0) {
		/* No memory for its standard error is ENOMEM, not EIO. */
		r = saop__fail(e, errno == ENOMEM ? SAOP_ENOMEM : SAOP_EIO,
		    errno, "--check '%.200s': %s", cmd, strerror(errno));
		goto out;
	}
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
		r = 1;
		goto out;
	}
	if (WIFEXITED(status) && (WEXITSTATUS(status) == SH_NOT_FOUND ||
	    WEXITSTATUS(status) == SH_NOT_EXECUTABLE) && b.len > 0 &&
	    strstr(b.data, "sh: ") != NULL) {
		r = saop__fail(e, SAOP_ECONFIG, 0, "--check '%.200s' cannot "
		    "run (status %d)", cmd, WEXITSTATUS(status));
		goto out;
	}
	if ((*msg = failure_text(&b, status, b.len > SAOP_CHECK_STDERR_MAX)) ==
	    NULL)
		r = saop__fail(e, SAOP_ENOMEM, ENOMEM, "out of memory");
	else
		r = 0;
out:
	if (in[0] >= 0)
		close(in[0]);
	if (in[1] >= 0)
		close(in[1]);
	if (err[0] >= 0)
		close(err[0]);
	if (err[1] >= 0)
		close(err[1]);
	saop__buf_free(&b);
	return r;
}
