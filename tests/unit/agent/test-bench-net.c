/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The net benchmark, agent side, over loopback only. The test plays the host
 * end from protocol/BENCH-disk-net.md, written here independently of net.c.
 */

#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <gio/gio.h>
#include <glib/gstdio.h>
#include <netinet/in.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "bench.h"
#include "guestbench-protocol.h"

#define H2G 1
#define G2H 2

/* ---- the host end, as documented --------------------------------------- */

typedef struct {
	guint port;
	int fd; /* connect mode: accepted by the test's listener */
	guint8 dir;
	guint8 index;
	guint streams;
	guint seconds;
	guint omit;
	const char *magic; /* "GBNET1" unless a test sends garbage */
	guint64 sent;
	guint64 received;
	guint64 report_bytes; /* what the agent reported (host sends) */
	gboolean ok;
} HostStream;

static void put_be(guint8 *p, guint64 v, guint n)
{
	for (guint i = 0; i < n; i++)
		p[i] = (guint8)(v >> (8 * (n - 1 - i)));
}

static guint64 get_be(const guint8 *p, guint n)
{
	guint64 v = 0;

	for (guint i = 0; i < n; i++)
		v = (v << 8) | p[i];
	return v;
}

static gboolean read_all(int fd, guint8 *buf, gsize len)
{
	gsize got = 0;

	while (got < len) {
		ssize_t n = recv(fd, buf + got, len - got, 0);

		if (n <= 0)
			return FALSE;
		got += (gsize)n;
	}
	return TRUE;
}

static int connect_loopback(guint port)
{
	struct sockaddr_in sin = { 0 };

	sin.sin_family = AF_INET;
	sin.sin_port = htons((guint16)port);
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	/* the agent's listener may not be up yet: retry for up to 5 s */
	for (guint i = 0; i < 500; i++) {
		int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

		g_assert_cmpint(fd, >=, 0);
		if (connect(fd, (struct sockaddr *)&sin, sizeof(sin)) == 0)
			return fd;
		close(fd);
		g_usleep(10000);
	}
	return -1;
}

static void build_header(HostStream *h, guint8 hdr[16])
{
	memcpy(hdr, h->magic != NULL ? h->magic : "GBNET1", 6);
	hdr[6] = h->dir;
	hdr[7] = h->index;
	put_be(hdr + 8, h->streams, 2);
	put_be(hdr + 10, h->seconds, 4);
	put_be(hdr + 14, h->omit, 2);
}

/* After the handshake: move the data the documented way. */
static void host_transfer(HostStream *h)
{
	g_autofree guint8 *buf = g_malloc0(128 * 1024);
	guint8 report[24];

	if (h->dir == H2G) {
		gint64 end = g_get_monotonic_time() + (gint64)(h->omit + h->seconds) * 1000000;

		while (g_get_monotonic_time() < end) {
			ssize_t n = send(h->fd, buf, 128 * 1024, MSG_NOSIGNAL);
			if (n <= 0)
				return;
			h->sent += (guint64)n;
		}
		shutdown(h->fd, SHUT_WR);
		if (!read_all(h->fd, report, sizeof(report)))
			return;
		if (memcmp(report, "GBRES1", 6) != 0)
			return;
		h->report_bytes = get_be(report + 8, 8);
		h->ok = get_be(report + 16, 8) > 0;
	} else {
		gint64 t0 = g_get_monotonic_time();
		gint64 omit_end = t0 + (gint64)h->omit * 1000000;
		gint64 last = t0;
		guint64 counted = 0;

		for (;;) {
			ssize_t n = recv(h->fd, buf, 128 * 1024, 0);

			if (n < 0)
				return;
			last = g_get_monotonic_time();
			if (n == 0)
				break;
			h->received += (guint64)n;
			if (last > omit_end)
				counted += (guint64)n;
		}
		memcpy(report, "GBRES1\0\0", 8);
		put_be(report + 8, counted, 8);
		put_be(report + 16, (guint64)MAX(last - omit_end, 1) * 1000, 8);
		h->received = counted;
		h->ok = send(h->fd, report, sizeof(report), MSG_NOSIGNAL) == sizeof(report);
	}
}

/* Listen mode: the host connects, sends the header, waits for 'G'. */
static gpointer host_connect_thread(gpointer data)
{
	HostStream *h = data;
	guint8 hdr[16];
	guint8 go = 0;

	h->fd = connect_loopback(h->port);
	if (h->fd < 0)
		return NULL;
	build_header(h, hdr);
	if (send(h->fd, hdr, sizeof(hdr), MSG_NOSIGNAL) != sizeof(hdr))
		return NULL;
	if (!read_all(h->fd, &go, 1) || go != 'G')
		return NULL;
	host_transfer(h);
	close(h->fd);
	return NULL;
}

/* Connect mode: the host accepted h->fd; check the header, start, transfer. */
static gpointer host_accepted_thread(gpointer data)
{
	HostStream *h = data;

	host_transfer(h);
	close(h->fd);
	return NULL;
}

static int listen_loopback(guint *port)
{
	struct sockaddr_in sin = { 0 };
	socklen_t len = sizeof(sin);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	sin.sin_family = AF_INET;
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	g_assert_cmpint(bind(fd, (struct sockaddr *)&sin, sizeof(sin)), ==, 0);
	g_assert_cmpint(listen(fd, 128), ==, 0);
	g_assert_cmpint(getsockname(fd, (struct sockaddr *)&sin, &len), ==, 0);
	*port = ntohs(sin.sin_port);
	return fd;
}

static guint free_port(void)
{
	guint port = 0;
	int fd = listen_loopback(&port);

	close(fd);
	return port;
}

/* ---- the agent side, on a thread --------------------------------------- */

typedef struct {
	AgentConfig config;
	AgentBenchContext ctx;
	JsonObject *params;
	JsonNode *node;
	GError *error;
	gint64 end_us;
	GMutex lock;
	double last_fraction;
	gboolean monotonic;
} Agent;

static void progress_cb(AgentBenchContext *ctx, double fraction, const char *phase)
{
	Agent *a = ctx->job;

	g_mutex_lock(&a->lock);
	if (fraction < a->last_fraction || fraction < 0 || fraction > 1)
		a->monotonic = FALSE;
	a->last_fraction = fraction;
	g_mutex_unlock(&a->lock);
}

static gpointer agent_thread(gpointer data)
{
	Agent *a = data;

	a->node = agent_bench_net.run(&a->ctx, a->params, &a->error);
	a->end_us = g_get_monotonic_time();
	return NULL;
}

static JsonObject *params_from(const char *json)
{
	g_autoptr(GError) error = NULL;
	g_autoptr(JsonNode) node = json_from_string(json, &error);

	g_assert_no_error(error);
	return json_object_ref(json_node_get_object(node));
}

static void agent_init(Agent *a, const char *json)
{
	g_autoptr(JsonObject) params = params_from(json);

	memset(a, 0, sizeof(*a));
	a->config.max_bench_seconds = 60;
	a->config.max_bench_file_size = 1024 * 1024;
	a->ctx.config = &a->config;
	a->ctx.sysroot = "/";
	a->ctx.progress = progress_cb;
	a->ctx.job = a;
	a->monotonic = TRUE;
	a->last_fraction = -1;
	g_mutex_init(&a->lock);
	a->params = agent_bench_net.validate(&a->config, params, &a->error);
	g_assert_no_error(a->error);
	g_assert_nonnull(a->params);
}

static void agent_clear(Agent *a)
{
	g_clear_pointer(&a->params, json_object_unref);
	g_clear_pointer(&a->node, json_node_unref);
	g_clear_error(&a->error);
	g_mutex_clear(&a->lock);
}

static JsonObject *find_metric(JsonObject *res, const char *metric, const char *key,
                               const char *val)
{
	JsonArray *metrics = json_object_get_array_member(res, "metrics");

	for (guint i = 0; i < json_array_get_length(metrics); i++) {
		JsonObject *m = json_array_get_object_element(metrics, i);
		JsonObject *labels = json_object_get_object_member(m, "labels");

		if (g_strcmp0(json_object_get_string_member(m, "metric"), metric) != 0)
			continue;
		if (key != NULL && g_strcmp0(json_object_get_string_member(labels, key), val) != 0)
			continue;
		return m;
	}
	return NULL;
}

static void check_common(JsonObject *res)
{
	const char *kinds[] = { "user", "system", "irq", "softirq", "total" };

	for (guint i = 0; i < G_N_ELEMENTS(kinds); i++) {
		JsonObject *m = find_metric(res, "guest-cpu-busy", "kind", kinds[i]);

		g_assert_nonnull(m);
		g_assert_cmpstr(json_object_get_string_member(m, "unit"), ==, "%");
		g_assert_cmpfloat(json_object_get_double_member(m, "value"), >=, 0);
		g_assert_cmpfloat(json_object_get_double_member(m, "value"), <=, 100);
	}
	g_assert_nonnull(find_metric(res, "tcp-retransmits", NULL, NULL));
}

/* ---- tests ------------------------------------------------------------- */

static void test_validate_defaults(void)
{
	AgentConfig config = { .max_bench_seconds = 60 };
	g_autoptr(GError) error = NULL;
	g_autoptr(JsonObject) norm = agent_bench_net.validate(&config, NULL, &error);

	g_assert_no_error(error);
	g_assert_cmpstr(json_object_get_string_member(norm, "mode"), ==, "listen");
	g_assert_cmpstr(json_object_get_string_member(norm, "address"), ==, "0.0.0.0");
	g_assert_cmpint(json_object_get_int_member(norm, "port"), ==, 5201);
	g_assert_cmpstr(json_object_get_string_member(norm, "direction"), ==, "host-to-guest");
	g_assert_cmpint(json_object_get_int_member(norm, "streams"), ==, 1);
	g_assert_cmpint(json_object_get_int_member(norm, "seconds"), ==, 10);
	g_assert_cmpint(json_object_get_int_member(norm, "omit"), ==, 1);
	g_assert_cmpint(json_object_get_int_member(norm, "accept_timeout"), ==, 30);
	g_assert_false(json_object_has_member(norm, "runs"));
}

static void test_validate_bad(void)
{
	AgentConfig config = { .max_bench_seconds = 60 };
	const struct {
		const char *json;
		const char *want;
	} cases[] = {
		{ "{\"bogus\": true}", "bogus" },
		{ "{\"mode\": \"serve\"}", "mode" },
		{ "{\"mode\": 1}", "mode" },
		{ "{\"mode\": \"connect\"}", "'address' is missing" },
		{ "{\"mode\": \"connect\", \"address\": \"0.0.0.0\"}", "wildcard" },
		{ "{\"mode\": \"connect\", \"address\": \"::\"}", "wildcard" },
		{ "{\"address\": \"example.com\"}", "numeric" },
		{ "{\"address\": \"127.0.0.1:80\"}", "numeric" },
		{ "{\"address\": \"\"}", "numeric" },
		{ "{\"address\": []}", "address" },
		{ "{\"port\": 0}", "port" },
		{ "{\"port\": 65536}", "port" },
		{ "{\"port\": \"5201\"}", "port" },
		{ "{\"direction\": \"up\"}", "direction" },
		{ "{\"direction\": null, \"streams\": 0}", "streams" },
		{ "{\"streams\": 65}", "streams" },
		{ "{\"streams\": 2.5}", "streams" },
		{ "{\"seconds\": 0}", "seconds" },
		{ "{\"seconds\": 61}", "max_bench_seconds" },
		{ "{\"seconds\": 99999999999}", "seconds" },
		{ "{\"omit\": -1}", "omit" },
		{ "{\"omit\": 61}", "omit" },
		{ "{\"accept_timeout\": 0}", "accept_timeout" },
		{ "{\"accept_timeout\": 601}", "accept_timeout" },
		{ "{\"runs\": 0}", "runs" },
		{ "{\"runs\": false}", "runs" },
	};

	for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
		g_autoptr(GError) error = NULL;
		g_autoptr(JsonObject) params = params_from(cases[i].json);
		g_autoptr(JsonObject) norm = agent_bench_net.validate(&config, params, &error);

		g_test_message("case %s: %s", cases[i].json, error != NULL ? error->message : "-");
		g_assert_null(norm);
		g_assert_error(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT);
		g_assert_nonnull(strstr(error->message, cases[i].want));
	}
}

/* Listen mode, both directions, two streams each: the host opens four connections. */
static void run_listen(const char *direction, guint streams, const char *sysroot,
                       JsonObject **res_out, Agent *a)
{
	g_autofree char *json = NULL;
	HostStream hs[2 * 64] = { 0 };
	GThread *threads[2 * 64];
	GThread *at;
	guint port = free_port();
	guint n = 0;
	gboolean h2g = g_strcmp0(direction, "guest-to-host") != 0;
	gboolean g2h = g_strcmp0(direction, "host-to-guest") != 0;

	json = g_strdup_printf("{\"mode\": \"listen\", \"address\": \"127.0.0.1\", \"port\": %u, "
	                       "\"direction\": \"%s\", \"streams\": %u, \"seconds\": 1, "
	                       "\"omit\": 0, \"accept_timeout\": 10}",
	                       port, direction, streams);
	agent_init(a, json);
	a->ctx.sysroot = sysroot;
	at = g_thread_new("agent", agent_thread, a);
	for (guint8 d = H2G; d <= G2H; d++) {
		if ((d == H2G && !h2g) || (d == G2H && !g2h))
			continue;
		for (guint k = 0; k < streams; k++, n++) {
			hs[n].port = port;
			hs[n].dir = d;
			hs[n].index = (guint8)k;
			hs[n].streams = streams;
			hs[n].seconds = 1;
			hs[n].omit = 0;
			threads[n] = g_thread_new("host", host_connect_thread, &hs[n]);
		}
	}
	g_thread_join(at);
	for (guint i = 0; i < n; i++)
		g_thread_join(threads[i]);
	g_assert_no_error(a->error);
	g_assert_nonnull(a->node);
	*res_out = json_node_get_object(a->node);
	for (guint i = 0; i < n; i++) {
		JsonObject *transfer = json_object_get_object_member(*res_out, "transfer");
		JsonObject *dir = json_object_get_object_member(
		    transfer, hs[i].dir == H2G ? "host-to-guest" : "guest-to-host");
		guint64 want = 0;

		g_assert_true(hs[i].ok);
		for (guint j = 0; j < n; j++) {
			if (hs[j].dir == hs[i].dir)
				want += hs[i].dir == H2G ? hs[j].sent : hs[j].received;
		}
		/* receiver bytes: what the guest counted, or what the host reported */
		g_assert_cmpint(json_object_get_int_member(dir, "bytes"), ==, (gint64)want);
		g_assert_cmpint(want, >, 0);
		if (hs[i].dir == H2G)
			g_assert_cmpuint(hs[i].report_bytes, ==, hs[i].sent);
	}
}

static void test_listen_h2g(void)
{
	Agent a;
	JsonObject *res = NULL;
	JsonObject *m;
	JsonArray *iv;

	run_listen("host-to-guest", 1, "/", &res, &a);
	m = find_metric(res, "tcp-throughput", "direction", "host-to-guest");
	g_assert_nonnull(m);
	g_assert_cmpstr(json_object_get_string_member(m, "unit"), ==, "B/s");
	g_assert_cmpfloat(json_object_get_double_member(m, "value"), >, 0);
	g_assert_cmpstr(
	    json_object_get_string_member(json_object_get_object_member(m, "labels"), "streams"),
	    ==, "1");
	g_assert_null(find_metric(res, "tcp-throughput", "direction", "guest-to-host"));
	iv = json_object_get_array_member(
	    json_object_get_object_member(json_object_get_object_member(res, "transfer"),
	                                  "host-to-guest"),
	    "intervals");
	g_assert_cmpuint(json_array_get_length(iv), >=, 1);
	check_common(res);
	g_assert_true(a.monotonic);
	g_assert_cmpfloat(a.last_fraction, ==, 1.0);
	agent_clear(&a);
}

static void test_listen_both_streams2(void)
{
	Agent a;
	JsonObject *res = NULL;

	run_listen("both", 2, "/", &res, &a);
	g_assert_nonnull(find_metric(res, "tcp-throughput", "direction", "host-to-guest"));
	g_assert_nonnull(find_metric(res, "tcp-throughput", "direction", "guest-to-host"));
	check_common(res);
	agent_clear(&a);
}

static void test_connect_g2h(void)
{
	Agent a;
	g_autofree char *json = NULL;
	HostStream hs[2] = { 0 };
	GThread *threads[2];
	GThread *at;
	guint port = 0;
	int lfd = listen_loopback(&port);
	JsonObject *res;
	JsonObject *dir;
	guint64 total = 0;

	json = g_strdup_printf("{\"mode\": \"connect\", \"address\": \"127.0.0.1\", \"port\": %u, "
	                       "\"direction\": \"guest-to-host\", \"streams\": 2, \"seconds\": 1, "
	                       "\"omit\": 0, \"accept_timeout\": 10}",
	                       port);
	agent_init(&a, json);
	at = g_thread_new("agent", agent_thread, &a);
	/* the host accepts both streams and checks their headers before starting either */
	for (guint i = 0; i < 2; i++) {
		guint8 hdr[16];
		int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);

		g_assert_cmpint(fd, >=, 0);
		g_assert_true(read_all(fd, hdr, sizeof(hdr)));
		g_assert_cmpmem(hdr, 6, "GBNET1", 6);
		g_assert_cmpuint(hdr[6], ==, G2H);
		g_assert_cmpuint(hdr[7], <, 2);
		g_assert_cmpuint(get_be(hdr + 8, 2), ==, 2);
		g_assert_cmpuint(get_be(hdr + 10, 4), ==, 1);
		g_assert_cmpuint(get_be(hdr + 14, 2), ==, 0);
		hs[hdr[7]].fd = fd;
		hs[hdr[7]].dir = G2H;
		hs[hdr[7]].omit = 0;
	}
	close(lfd);
	for (guint i = 0; i < 2; i++) {
		guint8 go = 'G';

		g_assert_cmpint(send(hs[i].fd, &go, 1, MSG_NOSIGNAL), ==, 1);
		threads[i] = g_thread_new("host", host_accepted_thread, &hs[i]);
	}
	g_thread_join(at);
	for (guint i = 0; i < 2; i++) {
		g_thread_join(threads[i]);
		g_assert_true(hs[i].ok);
		total += hs[i].received;
	}
	g_assert_no_error(a.error);
	res = json_node_get_object(a.node);
	dir = json_object_get_object_member(json_object_get_object_member(res, "transfer"),
	                                    "guest-to-host");
	g_assert_cmpint(json_object_get_int_member(dir, "bytes"), ==, (gint64)total);
	g_assert_cmpstr(json_object_get_string_member(dir, "receiver"), ==, "host");
	g_assert_nonnull(find_metric(res, "tcp-throughput", "streams", "2"));
	check_common(res);
	agent_clear(&a);
}

static void test_connect_refused(void)
{
	Agent a;
	g_autofree char *json = g_strdup_printf(
	    "{\"mode\": \"connect\", \"address\": \"127.0.0.1\", \"port\": %u}", free_port());

	agent_init(&a, json);
	agent_thread(&a);
	g_assert_error(a.error, GB_ERROR, GB_ERROR_IO);
	g_assert_nonnull(strstr(a.error->message, "refused"));
	g_assert_null(a.node);
	agent_clear(&a);
}

/* Nobody connects: a clear error after accept_timeout, and the port is closed again. */
static void test_accept_timeout(void)
{
	Agent a;
	guint port = free_port();
	g_autofree char *json = g_strdup_printf(
	    "{\"address\": \"127.0.0.1\", \"port\": %u, \"accept_timeout\": 1}", port);
	gint64 t0 = g_get_monotonic_time();
	int fd;

	agent_init(&a, json);
	agent_thread(&a);
	g_assert_error(a.error, GB_ERROR, GB_ERROR_TIMEOUT);
	g_assert_nonnull(strstr(a.error->message, "accept_timeout (1 s)"));
	g_assert_nonnull(strstr(a.error->message, "0 of 1 streams"));
	g_assert_cmpint(a.end_us - t0, >=, 1000000);
	g_assert_cmpint(a.end_us - t0, <, 2000000);
	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	{
		struct sockaddr_in sin = { .sin_family = AF_INET,
			                   .sin_port = htons((guint16)port),
			                   .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
		g_assert_cmpint(connect(fd, (struct sockaddr *)&sin, sizeof(sin)), <, 0);
		g_assert_cmpint(errno, ==, ECONNREFUSED);
	}
	close(fd);
	agent_clear(&a);
}

/* A stranger with a wrong header is turned away; the error says why. */
static void test_bad_header(void)
{
	Agent a;
	guint port = free_port();
	g_autofree char *json = g_strdup_printf(
	    "{\"address\": \"127.0.0.1\", \"port\": %u, \"accept_timeout\": 1}", port);
	HostStream bad = {
		.port = port, .dir = H2G, .streams = 1, .seconds = 10, .omit = 1, .magic = "HTTP/1"
	};
	HostStream mismatch = { .port = port, .dir = H2G, .streams = 1, .seconds = 5, .omit = 1 };
	GThread *at;
	GThread *h1;
	GThread *h2;

	agent_init(&a, json);
	at = g_thread_new("agent", agent_thread, &a);
	h1 = g_thread_new("bad", host_connect_thread, &bad);
	g_thread_join(h1);
	h2 = g_thread_new("mismatch", host_connect_thread, &mismatch);
	g_thread_join(h2);
	g_thread_join(at);
	g_assert_error(a.error, GB_ERROR, GB_ERROR_TIMEOUT);
	g_assert_nonnull(strstr(a.error->message, "last rejected: parameters differ"));
	g_assert_false(bad.ok);
	g_assert_false(mismatch.ok);
	agent_clear(&a);
}

static void test_cancel_waiting(void)
{
	Agent a;
	g_autofree char *json = g_strdup_printf(
	    "{\"address\": \"127.0.0.1\", \"port\": %u, \"accept_timeout\": 30}", free_port());
	GThread *at;
	gint64 t_cancel;

	agent_init(&a, json);
	at = g_thread_new("agent", agent_thread, &a);
	g_usleep(200000);
	t_cancel = g_get_monotonic_time();
	g_atomic_int_set(&a.ctx.cancel, 1);
	g_thread_join(at);
	g_assert_error(a.error, G_IO_ERROR, G_IO_ERROR_CANCELLED);
	g_assert_cmpint(a.end_us - t_cancel, <, 100000);
	agent_clear(&a);
}

static void test_cancel_transfer(void)
{
	Agent a;
	guint port = free_port();
	g_autofree char *json = g_strdup_printf(
	    "{\"address\": \"127.0.0.1\", \"port\": %u, \"direction\": \"both\", \"seconds\": 20, "
	    "\"omit\": 0}",
	    port);
	HostStream hs[2] = { { .port = port, .dir = H2G, .streams = 1, .seconds = 20 },
		             { .port = port, .dir = G2H, .streams = 1, .seconds = 20 } };
	GThread *threads[2];
	GThread *at;
	gint64 t_cancel;
	gboolean running = FALSE;

	agent_init(&a, json);
	at = g_thread_new("agent", agent_thread, &a);
	for (guint i = 0; i < 2; i++)
		threads[i] = g_thread_new("host", host_connect_thread, &hs[i]);
	for (guint i = 0; i < 5000 && !running; i++) {
		g_usleep(1000);
		g_mutex_lock(&a.lock);
		running = a.last_fraction > 0.01;
		g_mutex_unlock(&a.lock);
	}
	g_assert_true(running);
	t_cancel = g_get_monotonic_time();
	g_atomic_int_set(&a.ctx.cancel, 1);
	g_thread_join(at);
	g_assert_error(a.error, G_IO_ERROR, G_IO_ERROR_CANCELLED);
	g_test_message("cancel took %" G_GINT64_FORMAT " µs", a.end_us - t_cancel);
	g_assert_cmpint(a.end_us - t_cancel, <, 100000);
	/* the host ends see the connections go away and stop; the sending one gets no report */
	for (guint i = 0; i < 2; i++)
		g_thread_join(threads[i]);
	g_assert_false(hs[0].ok);
	agent_clear(&a);
}

static void test_port_in_use(void)
{
	Agent a;
	guint port = 0;
	int lfd = listen_loopback(&port);
	g_autofree char *json = g_strdup_printf(
	    "{\"address\": \"127.0.0.1\", \"port\": %u, \"accept_timeout\": 1}", port);

	agent_init(&a, json);
	agent_thread(&a);
	g_assert_error(a.error, GB_ERROR, GB_ERROR_IO);
	g_assert_nonnull(strstr(a.error->message, "cannot listen on 127.0.0.1 port"));
	close(lfd);
	agent_clear(&a);
}

/* Unreadable or garbled /proc files degrade to "unavailable" samples, not a failure. */
static void test_proc_ugly(void)
{
	g_autoptr(GError) error = NULL;
	g_autofree char *root = g_dir_make_tmp("gb-test-net-XXXXXX", &error);
	g_autofree char *proc = g_build_filename(root, "proc", NULL);
	g_autofree char *stat = g_build_filename(proc, "stat", NULL);
	const char *bad_stat[] = {
		"",
		"intr 1 2 3\ncpu  1 2 3 4 5 6 7 8\n",
		"cpu  1 2 3 x 5 6 7 8\n",
		"cpu  1 2 3\n",
		"cpu  1 2 3 4 5 6 7 8 0 0\n", /* valid, but never advances */
	};
	const char *want[] = { "aggregate", "aggregate", "not a number", "expected at least 8",
		               "did not advance" };

	g_assert_no_error(error);
	g_assert_cmpint(g_mkdir(proc, 0700), ==, 0);
	for (guint i = 0; i < G_N_ELEMENTS(bad_stat); i++) {
		Agent a;
		JsonObject *res = NULL;
		JsonObject *m;
		JsonObject *r;

		g_assert_true(g_file_set_contents(stat, bad_stat[i], -1, NULL));
		run_listen("host-to-guest", 1, root, &res, &a);
		m = find_metric(res, "guest-cpu-busy", "kind", "total");
		g_assert_nonnull(m);
		g_assert_true(json_object_get_null_member(m, "value"));
		g_test_message("unavailable: %s", json_object_get_string_member(m, "unavailable"));
		g_assert_nonnull(strstr(json_object_get_string_member(m, "unavailable"), want[i]));
		/* no proc/net/snmp in this root */
		r = find_metric(res, "tcp-retransmits", NULL, NULL);
		g_assert_true(json_object_get_null_member(r, "value"));
		agent_clear(&a);
	}
	g_unlink(stat);
	g_rmdir(proc);
	g_rmdir(root);
}

int main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	g_test_add_func("/bench/net/validate/defaults", test_validate_defaults);
	g_test_add_func("/bench/net/validate/bad", test_validate_bad);
	g_test_add_func("/bench/net/listen/host-to-guest", test_listen_h2g);
	g_test_add_func("/bench/net/listen/both-streams2", test_listen_both_streams2);
	g_test_add_func("/bench/net/connect/guest-to-host", test_connect_g2h);
	g_test_add_func("/bench/net/connect/refused", test_connect_refused);
	g_test_add_func("/bench/net/accept-timeout", test_accept_timeout);
	g_test_add_func("/bench/net/bad-header", test_bad_header);
	g_test_add_func("/bench/net/cancel/waiting", test_cancel_waiting);
	g_test_add_func("/bench/net/cancel/transfer", test_cancel_transfer);
	g_test_add_func("/bench/net/port-in-use", test_port_in_use);
	g_test_add_func("/bench/net/proc-ugly", test_proc_ugly);
	return g_test_run();
}
