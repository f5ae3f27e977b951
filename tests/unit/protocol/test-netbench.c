/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gio/gio.h>

#include "guestbench-protocol.h"

/* The header of BENCH-disk-net.md for host-to-guest, index 1, streams 2, seconds 10, omit 1. */
static const guint8 doc_header[GB_NETBENCH_HEADER_LEN] = { 'G', 'B', 'N', 'E', 'T', '1', 1, 1,
	                                                   0,   2,   0,   0,   0,   10,  0, 1 };

static void test_header_layout(void)
{
	GbNetbenchHeader hdr = {
		.direction = GB_NETBENCH_DIR_H2G, .index = 1, .streams = 2, .seconds = 10, .omit = 1
	};
	guint8 buf[GB_NETBENCH_HEADER_LEN + 4];

	/* nothing is written past the 16 bytes */
	memset(buf, 0xAA, sizeof(buf));
	gb_netbench_header_build(&hdr, buf);
	g_assert_cmpmem(buf, GB_NETBENCH_HEADER_LEN, doc_header, sizeof(doc_header));
	for (guint i = GB_NETBENCH_HEADER_LEN; i < sizeof(buf); i++)
		g_assert_cmpuint(buf[i], ==, 0xAA);
}

static void test_header_round_trip(void)
{
	const GbNetbenchHeader cases[] = {
		{ GB_NETBENCH_DIR_H2G, 0, 1, 1, 0 },
		{ GB_NETBENCH_DIR_G2H, 63, 64, 3600, 60 },
		/* every field at the top of its wire width */
		{ GB_NETBENCH_DIR_G2H, GB_NETBENCH_MAX_STREAMS - 1, GB_NETBENCH_MAX_STREAMS,
		  G_MAXUINT32, G_MAXUINT16 },
	};

	for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
		guint8 buf[GB_NETBENCH_HEADER_LEN];
		GbNetbenchHeader out = { 0 };
		g_autoptr(GError) error = NULL;

		gb_netbench_header_build(&cases[i], buf);
		g_assert_true(gb_netbench_header_parse(buf, sizeof(buf), &out, &error));
		g_assert_no_error(error);
		g_assert_cmpint(out.direction, ==, cases[i].direction);
		g_assert_cmpuint(out.index, ==, cases[i].index);
		g_assert_cmpuint(out.streams, ==, cases[i].streams);
		g_assert_cmpuint(out.seconds, ==, cases[i].seconds);
		g_assert_cmpuint(out.omit, ==, cases[i].omit);
	}
}

static void test_header_out_of_range(void)
{
	/* one field changed at a time in the documented header */
	const struct {
		guint off;
		guint8 val;
		gint code;
		const char *message;
	} bad[] = {
		{ 6, 0, GB_ERROR_PARSE, "unknown direction 0" },
		{ 6, 3, GB_ERROR_PARSE, "unknown direction 3" },
		{ 6, 255, GB_ERROR_PARSE, "unknown direction 255" },
		{ 7, 2, GB_ERROR_INVALID_ARGUMENT, "stream index 2 is not below streams 2" },
		{ 7, 255, GB_ERROR_INVALID_ARGUMENT, "stream index 255 is not below streams 2" },
		{ 9, 0, GB_ERROR_INVALID_ARGUMENT, "streams 0 is out of range (1..255)" },
		{ 8, 1, GB_ERROR_INVALID_ARGUMENT, "streams 258 is out of range (1..255)" },
		{ 13, 0, GB_ERROR_INVALID_ARGUMENT, "seconds 0 is out of range (at least 1)" },
	};

	for (guint i = 0; i < G_N_ELEMENTS(bad); i++) {
		guint8 buf[GB_NETBENCH_HEADER_LEN];
		GbNetbenchHeader out = { 0 };
		g_autoptr(GError) error = NULL;

		memcpy(buf, doc_header, sizeof(buf));
		buf[bad[i].off] = bad[i].val;
		g_assert_false(gb_netbench_header_parse(buf, sizeof(buf), &out, &error));
		g_assert_error(error, GB_ERROR, bad[i].code);
		g_assert_cmpstr(error->message, ==, bad[i].message);
	}
	{
		/* 256 streams cannot be addressed with a one-byte index */
		guint8 buf[GB_NETBENCH_HEADER_LEN];
		GbNetbenchHeader out = { 0 };
		g_autoptr(GError) error = NULL;

		memcpy(buf, doc_header, sizeof(buf));
		buf[8] = 1;
		buf[9] = 0;
		g_assert_false(gb_netbench_header_parse(buf, sizeof(buf), &out, &error));
		g_assert_error(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT);
	}
}

static void test_header_bad_magic(void)
{
	for (guint i = 0; i < GB_NETBENCH_MAGIC_LEN; i++) {
		guint8 buf[GB_NETBENCH_HEADER_LEN];
		GbNetbenchHeader out = { 0 };
		g_autoptr(GError) error = NULL;

		memcpy(buf, doc_header, sizeof(buf));
		buf[i] ^= 0x20;
		g_assert_false(gb_netbench_header_parse(buf, sizeof(buf), &out, &error));
		g_assert_error(error, GB_ERROR, GB_ERROR_PARSE);
		g_assert_cmpstr(error->message, ==, "not a guestbench net stream (bad magic)");
	}
	{
		/* a report is not a header */
		guint8 buf[GB_NETBENCH_HEADER_LEN];
		GbNetbenchHeader out = { 0 };
		g_autoptr(GError) error = NULL;

		memcpy(buf, doc_header, sizeof(buf));
		memcpy(buf, GB_NETBENCH_REPORT_MAGIC, GB_NETBENCH_MAGIC_LEN);
		g_assert_false(gb_netbench_header_parse(buf, sizeof(buf), &out, &error));
		g_assert_error(error, GB_ERROR, GB_ERROR_PARSE);
	}
}

static void test_header_short(void)
{
	guint8 buf[GB_NETBENCH_HEADER_LEN + 1];

	memcpy(buf, doc_header, GB_NETBENCH_HEADER_LEN);
	buf[GB_NETBENCH_HEADER_LEN] = 0;
	/* every length but 16, including 0 with no buffer at all */
	for (gsize len = 0; len <= sizeof(buf); len++) {
		GbNetbenchHeader out = { 0 };
		g_autoptr(GError) error = NULL;

		if (len == GB_NETBENCH_HEADER_LEN)
			continue;
		g_assert_false(gb_netbench_header_parse(len == 0 ? NULL : buf, len, &out, &error));
		g_assert_error(error, GB_ERROR, GB_ERROR_PARSE);
		g_assert_nonnull(strstr(error->message, "is 16 bytes"));
	}
}

static void test_header_match(void)
{
	GbNetbenchParams params = {
		.h2g = TRUE, .g2h = FALSE, .streams = 2, .seconds = 10, .omit = 1
	};
	GbNetbenchHeader hdr = { 0 };
	g_autoptr(GError) error = NULL;

	g_assert_true(gb_netbench_header_parse(doc_header, sizeof(doc_header), &hdr, &error));
	g_assert_true(gb_netbench_header_match(&hdr, &params, "host", "agent", &error));
	g_assert_no_error(error);

	/* a direction the job did not ask for */
	hdr.direction = GB_NETBENCH_DIR_G2H;
	g_assert_false(gb_netbench_header_match(&hdr, &params, "host", "agent", &error));
	g_assert_error(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT);
	g_assert_cmpstr(error->message, ==, "direction guest-to-host was not asked for");
	g_clear_error(&error);
	params.g2h = TRUE;
	g_assert_true(gb_netbench_header_match(&hdr, &params, "host", "agent", &error));

	/* each of streams, seconds, omit differing; the error names both ends' figures */
	hdr.streams = 3;
	g_assert_false(gb_netbench_header_match(&hdr, &params, "agent", "host", &error));
	g_assert_error(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT);
	g_assert_cmpstr(error->message, ==,
	                "parameters differ: agent has streams 3, seconds 10, omit 1; host has 2, "
	                "10, 1");
	g_clear_error(&error);
	hdr.streams = 2;
	hdr.seconds = 5;
	g_assert_false(gb_netbench_header_match(&hdr, &params, "host", "agent", &error));
	g_assert_cmpstr(error->message, ==,
	                "parameters differ: host has streams 2, seconds 5, omit 1; agent has 2, "
	                "10, 1");
	g_clear_error(&error);
	hdr.seconds = 10;
	hdr.omit = 0;
	g_assert_false(gb_netbench_header_match(&hdr, &params, "host", "agent", &error));
	g_assert_error(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT);
}

static void test_report_round_trip(void)
{
	const GbNetbenchReport cases[] = {
		{ 0, 1 },
		{ 1000, 2000000000 },
		{ G_MAXUINT64, G_MAXUINT64 },
	};
	guint8 buf[GB_NETBENCH_REPORT_LEN + 4];
	GbNetbenchReport doc = { .bytes = 0x0102030405060708, .ns = 0x1112131415161718 };

	/* the layout of BENCH-disk-net.md, big-endian, nothing written past 24 bytes */
	memset(buf, 0xAA, sizeof(buf));
	gb_netbench_report_build(&doc, buf);
	g_assert_cmpmem(buf, GB_NETBENCH_REPORT_LEN,
	                "GBRES1\0\0"
	                "\x01\x02\x03\x04\x05\x06\x07\x08"
	                "\x11\x12\x13\x14\x15\x16\x17\x18",
	                GB_NETBENCH_REPORT_LEN);
	for (guint i = GB_NETBENCH_REPORT_LEN; i < sizeof(buf); i++)
		g_assert_cmpuint(buf[i], ==, 0xAA);
	for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
		GbNetbenchReport out = { 0 };
		g_autoptr(GError) error = NULL;

		gb_netbench_report_build(&cases[i], buf);
		g_assert_true(
		    gb_netbench_report_parse(buf, GB_NETBENCH_REPORT_LEN, "agent", &out, &error));
		g_assert_no_error(error);
		g_assert_cmpuint(out.bytes, ==, cases[i].bytes);
		g_assert_cmpuint(out.ns, ==, cases[i].ns);
	}
}

static void test_report_bad(void)
{
	GbNetbenchReport rep = { .bytes = 10, .ns = 5 };
	guint8 buf[GB_NETBENCH_REPORT_LEN + 1] = { 0 };

	gb_netbench_report_build(&rep, buf);
	for (guint i = 0; i < GB_NETBENCH_MAGIC_LEN; i++) {
		guint8 bad[GB_NETBENCH_REPORT_LEN];
		GbNetbenchReport out = { 0 };
		g_autoptr(GError) error = NULL;

		memcpy(bad, buf, sizeof(bad));
		bad[i] = 'X';
		g_assert_false(gb_netbench_report_parse(bad, sizeof(bad), "agent", &out, &error));
		g_assert_error(error, GB_ERROR, GB_ERROR_PARSE);
		g_assert_cmpstr(error->message, ==, "the agent's report has a bad magic");
	}
	{
		/* a header is not a report */
		GbNetbenchReport out = { 0 };
		g_autoptr(GError) error = NULL;
		guint8 bad[GB_NETBENCH_REPORT_LEN] = { 0 };

		memcpy(bad, doc_header, sizeof(doc_header));
		g_assert_false(gb_netbench_report_parse(bad, sizeof(bad), "host", &out, &error));
		g_assert_cmpstr(error->message, ==, "the host's report has a bad magic");
	}
	for (gsize len = 0; len <= sizeof(buf); len++) {
		GbNetbenchReport out = { 0 };
		g_autoptr(GError) error = NULL;

		if (len == GB_NETBENCH_REPORT_LEN)
			continue;
		g_assert_false(
		    gb_netbench_report_parse(len == 0 ? NULL : buf, len, "agent", &out, &error));
		g_assert_error(error, GB_ERROR, GB_ERROR_PARSE);
		g_assert_nonnull(strstr(error->message, "bytes, not 24"));
	}
}

static void test_report_check(void)
{
	/* omit 1 + seconds 2 + grace: the longest time a receiver can have taken */
	guint64 max_ns = (guint64)(1 + 2 + GB_NETBENCH_GRACE_S) * 1000000000;
	const struct {
		guint64 bytes;
		guint64 ns;
		gboolean ok;
	} cases[] = {
		{ 1000, 2000000000, TRUE },
		{ 0, 1, TRUE },
		{ 1000, max_ns, TRUE },
		{ 1001, 2000000000, FALSE }, /* more than was sent */
		{ 10, 0, FALSE },
		{ 10, max_ns + 1, FALSE },
		{ G_MAXUINT64, G_MAXUINT64, FALSE },
	};

	for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
		GbNetbenchReport rep = { .bytes = cases[i].bytes, .ns = cases[i].ns };
		g_autoptr(GError) error = NULL;
		gboolean ok = gb_netbench_report_check(&rep, "agent", 1000, 1, 2, &error);

		g_assert_cmpint(ok, ==, cases[i].ok);
		if (!ok)
			g_assert_error(error, GB_ERROR, GB_ERROR_PARSE);
	}
	{
		GbNetbenchReport rep = { .bytes = 1001, .ns = 5 };
		g_autoptr(GError) error = NULL;

		g_assert_false(gb_netbench_report_check(&rep, "host", 1000, 1, 2, &error));
		g_assert_cmpstr(error->message, ==,
		                "the host's report is implausible (1001 bytes in 5 ns; 1000 bytes "
		                "were sent)");
	}
}

static void test_misc(void)
{
	gint64 a = gb_netbench_now_ns();
	gint64 b = gb_netbench_now_ns();

	g_assert_cmpint(a, >, 0);
	g_assert_cmpint(b, >=, a);
	g_assert_cmpstr(gb_netbench_direction_to_string(GB_NETBENCH_DIR_H2G), ==, "host-to-guest");
	g_assert_cmpstr(gb_netbench_direction_to_string(GB_NETBENCH_DIR_G2H), ==, "guest-to-host");
}

/* The transfer buffer: page aligned (the kernel copies into it), random, reproducible. */
static void test_buffer(void)
{
	const gsize len = 128 * 1024;
	g_autoptr(GbNetbenchBuffer) a = gb_netbench_buffer_new(len, 7);
	g_autoptr(GbNetbenchBuffer) b = gb_netbench_buffer_new(len, 7);
	g_autoptr(GbNetbenchBuffer) c = gb_netbench_buffer_new(len, 8);
	g_autoptr(GbNetbenchBuffer) odd = gb_netbench_buffer_new(1001, 7);
	g_autoptr(GbNetbenchBuffer) empty = gb_netbench_buffer_new(0, 7);
	guint counts[256] = { 0 };

	g_assert_cmpuint((guintptr)a % (guintptr)sysconf(_SC_PAGESIZE), ==, 0);
	g_assert_cmpuint((guintptr)odd % (guintptr)sysconf(_SC_PAGESIZE), ==, 0);
	g_assert_nonnull(empty);
	g_assert_cmpmem(a, len, b, len);
	g_assert_true(memcmp(a, c, len) != 0);
	/* a length that is not a multiple of 4 is filled to its end from the same sequence */
	g_assert_cmpmem(odd, 1001, a, 1001);
	/* incompressible: every byte value occurs, none more than twice its share */
	for (gsize i = 0; i < len; i++)
		counts[a[i]]++;
	for (guint v = 0; v < 256; v++) {
		g_assert_cmpuint(counts[v], >, 0);
		g_assert_cmpuint(counts[v], <, 2 * len / 256);
	}
}

static int quickack_of(int fd)
{
	int val = -1;
	socklen_t len = sizeof(val);

	g_assert_cmpint(getsockopt(fd, IPPROTO_TCP, TCP_QUICKACK, &val, &len), ==, 0);
	return val;
}

/*
 * The go byte is a reply sent right after the header arrived, which puts the
 * accepting side in the kernel's interactive (delayed-ACK) mode; the helper
 * every end calls when the transfer starts must take it out again.
 */
static void test_stream_started(void)
{
	struct sockaddr_in addr = { .sin_family = AF_INET };
	socklen_t len = sizeof(addr);
	guint8 hdr[GB_NETBENCH_HEADER_LEN] = { 0 };
	guint8 go = GB_NETBENCH_GO;
	int pipefd[2];
	int lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	int cfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	int afd;

	addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	g_assert_cmpint(bind(lfd, (struct sockaddr *)&addr, sizeof(addr)), ==, 0);
	g_assert_cmpint(listen(lfd, 1), ==, 0);
	g_assert_cmpint(getsockname(lfd, (struct sockaddr *)&addr, &len), ==, 0);
	g_assert_cmpint(connect(cfd, (struct sockaddr *)&addr, sizeof(addr)), ==, 0);
	afd = accept(lfd, NULL, NULL);
	g_assert_cmpint(afd, >=, 0);
	g_assert_cmpint(send(cfd, hdr, sizeof(hdr), MSG_NOSIGNAL), ==, sizeof(hdr));
	g_assert_cmpint(recv(afd, hdr, sizeof(hdr), MSG_WAITALL), ==, sizeof(hdr));
	g_assert_cmpint(send(afd, &go, 1, MSG_NOSIGNAL), ==, 1);
	g_assert_cmpint(recv(cfd, &go, 1, MSG_WAITALL), ==, 1);
	if (quickack_of(afd) != 0) {
		/* older kernels need three such replies before they switch */
		g_test_skip("this kernel did not delay ACKs after one reply");
	} else {
		gb_netbench_stream_started(afd);
		g_assert_cmpint(quickack_of(afd), ==, 1);
	}
	gb_netbench_stream_started(cfd);
	g_assert_cmpint(quickack_of(cfd), ==, 1);
	/* best effort: not a TCP socket is no error and no crash */
	g_assert_cmpint(pipe(pipefd), ==, 0);
	gb_netbench_stream_started(pipefd[0]);
	close(pipefd[0]);
	close(pipefd[1]);
	close(afd);
	close(cfd);
	close(lfd);
}

/* ---- the shared stream: one end against the other ------------------------------------- */

typedef struct {
	GbNetbenchEnd end;
	gboolean listen; /* accept on listen_fd, else connect to port */
	int listen_fd;
	guint port;
	gint cancel;
	guint64 moved[2];
	GError *error;
} EndThread;

static gboolean end_thread_cancel(gpointer data, GError **error)
{
	EndThread *t = data;

	if (g_atomic_int_get(&t->cancel) == 0)
		return TRUE;
	g_set_error_literal(error, G_IO_ERROR, G_IO_ERROR_CANCELLED, "stopped");
	return FALSE;
}

static void end_thread_moved(gpointer data, GbNetbenchDirection dir, gint64 now, guint64 n)
{
	EndThread *t = data;

	(void)now;
	t->moved[dir - 1] += n;
}

static void end_thread_init(EndThread *t, const GbNetbenchParams *params, gboolean host)
{
	const GbNetbenchHooks hooks = { .check_cancel = end_thread_cancel,
		                        .moved = end_thread_moved,
		                        .data = t };

	memset(t, 0, sizeof(*t));
	t->listen_fd = -1;
	gb_netbench_end_init(&t->end, params, host, &hooks);
}

static gpointer end_thread_run(gpointer data)
{
	EndThread *t = data;
	gboolean ok;

	if (t->listen)
		ok = gb_netbench_end_accept(&t->end, t->listen_fd, "127.0.0.1", t->port, 10,
		                            "accept_timeout", &t->error);
	else
		ok =
		    gb_netbench_end_connect(&t->end, "127.0.0.1", t->port, 10, NULL, 50, &t->error);
	if (ok)
		gb_netbench_end_transfer(&t->end, &t->error);
	gb_netbench_end_close(&t->end);
	return NULL;
}

/*
 * The host's end connects (retrying until the agent's end listens) and the
 * agent's end accepts; both directions, two streams each. Every byte one end
 * sent the other counted, and each sender holds the receiver's report.
 */
static void test_end_both_ways(void)
{
	const GbNetbenchParams params = { .h2g = TRUE, .g2h = TRUE, .streams = 2, .seconds = 1 };
	g_autoptr(GError) error = NULL;
	EndThread host;
	EndThread agent;
	GThread *ht;
	GThread *at;
	guint port = 0;
	int lfd;

	/* a free port, then nobody listening on it for a moment: the host retries */
	lfd = gb_netbench_listen("127.0.0.1", 0, 16, &port, &error);
	g_assert_no_error(error);
	close(lfd);
	end_thread_init(&host, &params, TRUE);
	end_thread_init(&agent, &params, FALSE);
	g_assert_cmpuint(host.end.n_streams, ==, 4);
	host.port = port;
	ht = g_thread_new("host", end_thread_run, &host);
	g_usleep(200000);
	agent.listen = TRUE;
	agent.port = port;
	agent.listen_fd = gb_netbench_listen("127.0.0.1", port, 16, NULL, &error);
	g_assert_no_error(error);
	at = g_thread_new("agent", end_thread_run, &agent);
	g_thread_join(ht);
	g_thread_join(at);
	close(agent.listen_fd);
	g_assert_no_error(host.error);
	g_assert_no_error(agent.error);
	for (guint i = 0; i < host.end.n_streams; i++) {
		const GbNetbenchStream *h = &host.end.streams[i];
		const GbNetbenchStream *a = &agent.end.streams[i];

		g_assert_cmpint(h->dir, ==, a->dir);
		g_assert_cmpuint(h->index, ==, a->index);
		g_assert_true(h->sender == (h->dir == GB_NETBENCH_DIR_H2G));
		g_assert_true(h->sender != a->sender);
		g_assert_cmpint(h->state, ==, GB_NETBENCH_STREAM_DONE);
		g_assert_cmpint(a->state, ==, GB_NETBENCH_STREAM_DONE);
		g_assert_cmpuint(h->bytes, >, 0);
		g_assert_cmpuint(h->bytes, ==, a->bytes);
		/* omit 0: the receiver counted everything, and both hold its report */
		g_assert_cmpuint(h->result.bytes, ==, h->bytes);
		g_assert_cmpuint(h->result.bytes, ==, a->result.bytes);
		g_assert_cmpuint(h->result.ns, ==, a->result.ns);
		/* each end starts its clock when it sees the start, so the receiver's
		 * second can be a little short of the sender's */
		g_assert_cmpuint(h->result.ns, >, GB_NETBENCH_NS_PER_S / 2);
	}
	g_assert_cmpuint(host.moved[0], ==, agent.moved[0]);
	g_assert_cmpuint(host.moved[1], ==, agent.moved[1]);
	gb_netbench_end_clear(&host.end);
	gb_netbench_end_clear(&agent.end);
}

/* The accepting end drops a header that does not match, keeps waiting, and keeps why. */
static void test_end_accept_drops(void)
{
	const GbNetbenchParams params = { .h2g = TRUE, .streams = 1, .seconds = 5, .omit = 1 };
	const GbNetbenchHeader wrong = {
		.direction = GB_NETBENCH_DIR_H2G, .index = 0, .streams = 1, .seconds = 6, .omit = 1
	};
	g_autoptr(GError) error = NULL;
	struct sockaddr_in sin = { .sin_family = AF_INET };
	guint8 hdr[GB_NETBENCH_HEADER_LEN];
	EndThread agent;
	GThread *at;
	int fd;

	end_thread_init(&agent, &params, FALSE);
	agent.listen = TRUE;
	agent.listen_fd = gb_netbench_listen("127.0.0.1", 0, 16, &agent.port, &error);
	g_assert_no_error(error);
	at = g_thread_new("agent", end_thread_run, &agent);
	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	sin.sin_port = htons((guint16)agent.port);
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	g_assert_cmpint(connect(fd, (struct sockaddr *)&sin, sizeof(sin)), ==, 0);
	gb_netbench_header_build(&wrong, hdr);
	g_assert_cmpint(write(fd, hdr, sizeof(hdr)), ==, sizeof(hdr));
	g_usleep(200000);
	g_atomic_int_set(&agent.cancel, 1);
	g_thread_join(at);
	g_assert_error(agent.error, G_IO_ERROR, G_IO_ERROR_CANCELLED);
	g_assert_cmpstr(agent.end.last_problem, !=, NULL);
	g_assert_nonnull(strstr(agent.end.last_problem, "parameters differ"));
	g_clear_error(&agent.error);
	close(fd);
	close(agent.listen_fd);
	gb_netbench_end_clear(&agent.end);
}

int main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	g_test_add_func("/protocol/netbench/header-layout", test_header_layout);
	g_test_add_func("/protocol/netbench/header-round-trip", test_header_round_trip);
	g_test_add_func("/protocol/netbench/header-out-of-range", test_header_out_of_range);
	g_test_add_func("/protocol/netbench/header-bad-magic", test_header_bad_magic);
	g_test_add_func("/protocol/netbench/header-short", test_header_short);
	g_test_add_func("/protocol/netbench/header-match", test_header_match);
	g_test_add_func("/protocol/netbench/report-round-trip", test_report_round_trip);
	g_test_add_func("/protocol/netbench/report-bad", test_report_bad);
	g_test_add_func("/protocol/netbench/report-check", test_report_check);
	g_test_add_func("/protocol/netbench/misc", test_misc);
	g_test_add_func("/protocol/netbench/buffer", test_buffer);
	g_test_add_func("/protocol/netbench/stream-started", test_stream_started);
	g_test_add_func("/protocol/netbench/end-both-ways", test_end_both_ways);
	g_test_add_func("/protocol/netbench/end-accept-drops", test_end_accept_drops);
	return g_test_run();
}
