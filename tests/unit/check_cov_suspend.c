/*
 * check_cov_suspend.c: where the network probe of the suspension code
 * (lib/suspend.c) connects, which no other test reached (issue 25): to a
 * proxy from the environment as libcurl would (http_proxy, HTTPS_PROXY,
 * all_proxy, a proxy without a port on 1080), straight to the endpoint
 * when NO_PROXY names its host or a domain of it, to an IPv6 literal;
 * and durations out of range.  The endpoints are real sockets on
 * loopback.  (The turn's rarer ways are in check_suspend.c, beside its
 * stand-in model.)
 */
#include "config.h"

#include <arpa/inet.h>
#include <check.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "saop-private.h"
#include "unit.h"

/* ---- The probe: where it connects ---- */

/* The proxy variables libcurl reads, all unset. */
static void
no_proxies(void)
{
	static const char *const v[] = { "http_proxy", "https_proxy",
	    "HTTPS_PROXY", "all_proxy", "ALL_PROXY", "no_proxy", "NO_PROXY",
	    NULL };
	int i;

	for (i = 0; v[i] != NULL; i++)
		unsetenv(v[i]);
}

/* A socket listening on loopback (family AF_INET or AF_INET6), its port
 * in *port; -1 when the family is not there. */
static int
listener(int family, int *port)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);
	int fd = socket(family, SOCK_STREAM, 0);

	if (fd < 0)
		return -1;
	memset(&ss, 0, sizeof(ss));
	if (family == AF_INET) {
		struct sockaddr_in *a = (struct sockaddr_in *)&ss;

		a->sin_family = AF_INET;
		a->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		len = sizeof(*a);
	} else {
		struct sockaddr_in6 *a = (struct sockaddr_in6 *)&ss;

		a->sin6_family = AF_INET6;
		a->sin6_addr = in6addr_loopback;
		len = sizeof(*a);
	}
	if (bind(fd, (struct sockaddr *)&ss, len) != 0 || listen(fd, 8) != 0 ||
	    getsockname(fd, (struct sockaddr *)&ss, &len) != 0) {
		close(fd);
		return -1;
	}
	*port = ntohs(family == AF_INET ? ((struct sockaddr_in *)&ss)->sin_port :
	    ((struct sockaddr_in6 *)&ss)->sin6_port);
	return fd;
}

/* A loopback port nothing listens on (bound, then closed). */
static int
dead_port(void)
{
	int port, fd = listener(AF_INET, &port);

	ck_assert_int_ge(fd, 0);
	close(fd);
	return port;
}

START_TEST(the_probe_goes_through_the_proxy_libcurl_would_take)
{
	char live[64], lives[64], proxy[64];
	int port, fd = listener(AF_INET, &port), dead = dead_port();

	ck_assert_int_ge(fd, 0);
	no_proxies();
	snprintf(live, sizeof(live), "http://127.0.0.1:%d/v1", port);
	snprintf(lives, sizeof(lives), "https://127.0.0.1:%d/v1", port);
	snprintf(proxy, sizeof(proxy), "http://127.0.0.1:%d", dead);
	ck_assert_int_eq(saop_suspend_probe(live, 2000), 1);
	ck_assert_int_eq(saop_suspend_probe(lives, 2000), 1);
	/* A dead proxy: the endpoint is down for the calls too. */
	setenv("http_proxy", proxy, 1);
	ck_assert_int_eq(saop_suspend_probe(live, 2000), 0);
	/* http_proxy is not for https. */
	ck_assert_int_eq(saop_suspend_probe(lives, 2000), 1);
	setenv("HTTPS_PROXY", proxy, 1);
	ck_assert_int_eq(saop_suspend_probe(lives, 2000), 0);
	/* NO_PROXY: the host itself, a domain with or without its dot, or
	 * *: straight to the endpoint; a mere suffix is no match. */
	setenv("no_proxy", "example.com, 127.0.0.1", 1);
	ck_assert_int_eq(saop_suspend_probe(live, 2000), 1);
	setenv("no_proxy", "example.com,*", 1);
	ck_assert_int_eq(saop_suspend_probe(live, 2000), 1);
	setenv("no_proxy", ".0.0.1", 1);
	ck_assert_int_eq(saop_suspend_probe(live, 2000), 1);
	setenv("no_proxy", "27.0.0.1", 1);
	ck_assert_int_eq(saop_suspend_probe(live, 2000), 0);
	setenv("no_proxy", "", 1);
	setenv("NO_PROXY", "other.example", 1);
	ck_assert_int_eq(saop_suspend_probe(live, 2000), 0);
	no_proxies();
	/* A proxy that is no URL: nowhere to connect. */
	setenv("all_proxy", "http:///", 1);
	ck_assert_int_eq(saop_suspend_probe(live, 2000), 0);
	/* The live endpoint as the proxy (for any host): up. */
	snprintf(proxy, sizeof(proxy), "127.0.0.1:%d", port);
	setenv("all_proxy", proxy, 1);
	ck_assert_int_eq(saop_suspend_probe("http://api.invalid/v1", 2000),
	    1);
	no_proxies();
	close(fd);
}
END_TEST

START_TEST(a_proxy_without_a_port_is_on_1080)
{
	struct sockaddr_in a;
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	ck_assert_int_ge(fd, 0);
	memset(&a, 0, sizeof(a));
	a.sin_family = AF_INET;
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	a.sin_port = htons(1080);
	if (bind(fd, (struct sockaddr *)&a, sizeof(a)) != 0) {
		/* Held by another program: nothing to tell 1080 apart. */
		ck_assert_int_eq(errno, EADDRINUSE);
		fprintf(stderr, "port 1080 in use: the default proxy port is "
		    "not checked\n");
		close(fd);
		return;
	}
	ck_assert_int_eq(listen(fd, 8), 0);
	no_proxies();
	/* The endpoint itself answers nowhere: only 1080 does. */
	setenv("http_proxy", "http://127.0.0.1", 1);
	ck_assert_int_eq(saop_suspend_probe("http://127.0.0.1:1/v1", 2000), 1);
	setenv("http_proxy", "127.0.0.1/", 1);
	ck_assert_int_eq(saop_suspend_probe("http://127.0.0.1:1/v1", 2000), 1);
	/* A port given is the port. */
	setenv("http_proxy", "http://127.0.0.1:1", 1);
	ck_assert_int_eq(saop_suspend_probe("http://127.0.0.1:1080/v1", 2000),
	    0);
	no_proxies();
	close(fd);
}
END_TEST

START_TEST(the_probe_reads_ipv6_literals)
{
	char url[64];
	int port, fd = listener(AF_INET6, &port);

	no_proxies();
	/* A bracket never closed: no host. */
	ck_assert_int_eq(saop_suspend_probe("http://[::1/v1", 2000), 0);
	ck_assert_int_eq(saop_suspend_probe("http://[]:80/v1", 2000), 0);
	if (fd < 0) {
		fprintf(stderr, "no IPv6 loopback: the literal's parse only\n");
		return;
	}
	snprintf(url, sizeof(url), "http://[::1]:%d/v1", port);
	ck_assert_int_eq(saop_suspend_probe(url, 2000), 1);
	snprintf(url, sizeof(url), "http://user:pw@[::1]:%d", port);
	ck_assert_int_eq(saop_suspend_probe(url, 2000), 1);
	close(fd);
	/* Closed now. */
	snprintf(url, sizeof(url), "http://[::1]:%d/v1", port);
	ck_assert_int_eq(saop_suspend_probe(url, 2000), 0);
}
END_TEST

START_TEST(durations_too_long_or_out_of_range_are_refused)
{
	long long ms = 7;

	ck_assert_int_eq(saop_duration_parse("9e999s", &ms), -1);
	ck_assert_int_eq(saop_duration_parse("3000000000h", &ms), -1);
	ck_assert_int_eq(ms, 7);
	ck_assert_int_eq(saop_duration_parse("2500000000h", &ms), 0);
	ck_assert_int_eq(ms, 2500000000LL * 3600000);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("cov_suspend");
	TCase *probe_tc = tcase_create("probe");

	tcase_add_test(probe_tc,
	    the_probe_goes_through_the_proxy_libcurl_would_take);
	tcase_add_test(probe_tc, a_proxy_without_a_port_is_on_1080);
	tcase_add_test(probe_tc, the_probe_reads_ipv6_literals);
	tcase_add_test(probe_tc, durations_too_long_or_out_of_range_are_refused);
	suite_add_tcase(s, probe_tc);
	return unit_run(s);
}
