/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The bench command's parsers and formatters, the GBNET1 wire helpers and saved results. */
#include "config.h"

#include <glib/gstdio.h>
#include <math.h>
#include <string.h>

#include "guestbench-protocol.h"

#include "transport/bench-net.h"
#include "commands/cmd-bench.h"
#include "commands/bench-args.h"
#include "analysis/runs.h"

static void test_size_ok(void)
{
	const struct {
		const char *text;
		guint64 want;
	} cases[] = {
		{ "1", 1 },           { "512", 512 },
		{ "4k", 4096 },       { "4K", 4096 },
		{ "1M", 1048576 },    { "16m", 16777216 },
		{ "1G", 1073741824 }, { "3g", G_GUINT64_CONSTANT(3221225472) },
		{ "0004k", 4096 },
	};

	for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
		g_autoptr(GError) error = NULL;
		guint64 v = 0;

		g_assert_true(cli_bench_parse_size(cases[i].text, G_MAXUINT64, &v, &error));
		g_assert_no_error(error);
		g_assert_cmpuint(v, ==, cases[i].want);
	}
}

static void test_size_bad(void)
{
	const char *bad[] = { "",
		              "0",
		              "0k",
		              "k",
		              "-4k",
		              "+4k",
		              " 4k",
		              "4k ",
		              "4 k",
		              "4kb",
		              "4KiB",
		              "4T",
		              "1.5M",
		              "0x10",
		              "abc",
		              "4kk",
		              "1e3",
		              "M4",
		              "18446744073709551616",
		              "99999999999999999999999k" };

	for (guint i = 0; i < G_N_ELEMENTS(bad); i++) {
		g_autoptr(GError) error = NULL;
		guint64 v = 77;

		g_assert_false(cli_bench_parse_size(bad[i], G_MAXUINT64, &v, &error));
		g_assert_error(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT);
		g_assert_cmpuint(v, ==, 77);
	}
}

static void test_size_overflow(void)
{
	g_autoptr(GError) error = NULL;
	guint64 v = 0;

	/* 16 Ei in k overflows 64 bits: refused, not wrapped */
	g_assert_false(cli_bench_parse_size("18014398509481984k", G_MAXUINT64, &v, &error));
	g_assert_error(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT);
	g_assert_nonnull(strstr(error->message, "too large"));
	g_clear_error(&error);
	/* the largest that fits */
	g_assert_true(cli_bench_parse_size("18014398509481983k", G_MAXUINT64, &v, &error));
	g_assert_cmpuint(v, ==, G_GUINT64_CONSTANT(18014398509481983) * 1024);
	/* a caller's limit: 1M is fine, 1025k is not */
	g_assert_true(cli_bench_parse_size("1M", 1048576, &v, &error));
	g_assert_false(cli_bench_parse_size("1025k", 1048576, &v, &error));
	g_assert_nonnull(strstr(error->message, "at most 1M"));
}

static void test_size_list(void)
{
	const char *bad[] = { "", ",", "4k,", ",4k", "4k,,1M", "4k;1M", "4k, 1M", "4k,0" };
	g_autoptr(GArray) sizes = NULL;
	g_autoptr(GError) error = NULL;
	g_autoptr(GString) many = g_string_new("1");

	g_assert_true(cli_bench_parse_size_list("4k,1M,16M", G_MAXUINT64, &sizes, &error));
	g_assert_no_error(error);
	g_assert_cmpuint(sizes->len, ==, 3);
	g_assert_cmpuint(g_array_index(sizes, guint64, 0), ==, 4096);
	g_assert_cmpuint(g_array_index(sizes, guint64, 1), ==, 1048576);
	g_assert_cmpuint(g_array_index(sizes, guint64, 2), ==, 16777216);
	for (guint i = 0; i < G_N_ELEMENTS(bad); i++) {
		g_autoptr(GArray) out = NULL;
		g_autoptr(GError) e = NULL;

		g_assert_false(cli_bench_parse_size_list(bad[i], G_MAXUINT64, &out, &e));
		g_assert_error(e, GB_ERROR, GB_ERROR_INVALID_ARGUMENT);
		g_assert_null(out);
	}
	for (guint i = 0; i < 64; i++)
		g_string_append(many, ",1");
	{
		g_autoptr(GArray) out = NULL;
		g_autoptr(GError) e = NULL;
		g_assert_false(cli_bench_parse_size_list(many->str, G_MAXUINT64, &out, &e));
		g_assert_error(e, GB_ERROR, GB_ERROR_INVALID_ARGUMENT);
	}
}

static void test_word_list(void)
{
	static const char *const allowed[] = { "write", "read", "randread", NULL };
	const char *bad[] = { "", ",", "write,", "write,write", "Write", "write,nope", "\x1b[2J" };
	g_auto(GStrv) words = NULL;
	g_autoptr(GError) error = NULL;

	g_assert_true(cli_bench_parse_word_list("read,write", allowed, &words, &error));
	g_assert_no_error(error);
	g_assert_cmpuint(g_strv_length(words), ==, 2);
	g_assert_cmpstr(words[0], ==, "read");
	for (guint i = 0; i < G_N_ELEMENTS(bad); i++) {
		g_auto(GStrv) out = NULL;
		g_autoptr(GError) e = NULL;

		g_assert_false(cli_bench_parse_word_list(bad[i], allowed, &out, &e));
		g_assert_error(e, GB_ERROR, GB_ERROR_INVALID_ARGUMENT);
		/* a hostile word is shown escaped, never raw */
		g_assert_null(strchr(e->message, '\x1b'));
	}
}

static void test_format_size(void)
{
	const struct {
		guint64 bytes;
		const char *want;
	} cases[] = {
		{ 512, "512" },       { 4096, "4k" },      { 4097, "4097" },
		{ 1048576, "1M" },    { 16777216, "16M" }, { 1536 * 1024, "1536k" },
		{ 1073741824, "1G" },
	};

	for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
		g_autofree char *s = cli_bench_format_size(cases[i].bytes);
		g_assert_cmpstr(s, ==, cases[i].want);
	}
}

/* Field report 1's numbers in openssl speed's own layout. */
static void test_openssl_layout(void)
{
	const guint64 sizes[] = { 16, 64, 256, 1024, 8192, 16384 };
	const double kvm64[] = { 77000000.0, 1, 2, 3, 4, 106572000.0 };
	const double small[] = { 9999.0, NAN };
	g_autoptr(GString) out = g_string_new(NULL);

	cli_bench_openssl_header(out, sizes, G_N_ELEMENTS(sizes));
	g_assert_cmpstr(out->str, ==,
	                "type             16 bytes     64 bytes    256 bytes   1024 bytes   8192 "
	                "bytes  16384 bytes\n");
	g_string_truncate(out, 0);
	cli_bench_openssl_row(out, "aes-128-gcm", kvm64, G_N_ELEMENTS(kvm64));
	g_assert_cmpstr(out->str, ==,
	                "aes-128-gcm      77000.00k        1.00         2.00         3.00         "
	                "4.00    106572.00k\n");
	/* at most 10000 B/s: no 'k' and no division, like openssl; NaN as n/a */
	g_string_truncate(out, 0);
	cli_bench_openssl_row(out, "aes-256-gcm", small, G_N_ELEMENTS(small));
	g_assert_cmpstr(out->str, ==, "aes-256-gcm       9999.00          n/a\n");
}

static void test_labels_string(void)
{
	g_autoptr(GError) error = NULL;
	const char *json = "{\"block_size\": \"16\", \"a;b\": \"x=y\\\\z\", \"num\": 3, "
	                   "\"nul\": null}";
	g_autoptr(JsonNode) node = gb_json_parse(json, strlen(json), &error);
	g_autofree char *s = NULL;
	g_autofree char *empty = cli_bench_labels_to_string(NULL);

	g_assert_no_error(error);
	s = cli_bench_labels_to_string(json_node_get_object(node));
	/* non-string labels are left out; separators inside keys and values are escaped */
	g_assert_cmpstr(s, ==, "block_size=16;a\\;b=x\\=y\\\\z");
	g_assert_cmpstr(empty, ==, "");
}

static void test_prom_escaping(void)
{
	g_autoptr(GString) out = g_string_new(NULL);
	const char *known[] = { "block_size", "direction",   "kind",    "op",  "pages",
		                "quantile",   "record_size", "streams", "test" };
	const char *unknown[] = {
		"guest",  "metric", "unit", "host", "__name__", "label_guest", "\xc3\xa9t\xc3\xa9",
		"\t=1+1", "--x",    "_-x",  "9x",   "",         "Test"
	};

	/* the newline is shown as the two characters \n, whose backslash is escaped */
	cli_bench_prom_append_value(out, "a\\b\"c\nd");
	g_assert_cmpstr(out->str, ==, "\"a\\\\b\\\"c\\\\nd\"");
	g_string_truncate(out, 0);
	cli_bench_prom_append_value(out, "");
	g_assert_cmpstr(out->str, ==, "\"\"");
	/* invalid UTF-8 from a guest is shown as escapes, as prom.c's own samples are */
	g_string_truncate(out, 0);
	cli_bench_prom_append_value(out, "ok\xff\xfe");
	g_assert_true(g_utf8_validate(out->str, -1, NULL));
	g_assert_cmpstr(out->str, ==, "\"ok\\\\xff\\\\xfe\"");
	for (guint i = 0; i < G_N_ELEMENTS(known); i++)
		g_assert_true(cli_bench_prom_is_label(known[i]));
	for (guint i = 0; i < G_N_ELEMENTS(unknown); i++)
		g_assert_false(cli_bench_prom_is_label(unknown[i]));
}

static void test_host_port(void)
{
	const char *bad[] = { "",
		              "127.0.0.1",
		              "127.0.0.1:",
		              "127.0.0.1:0",
		              "127.0.0.1:65536",
		              "localhost:80",
		              "::1:80",
		              "[::1]80",
		              "[::1:80",
		              "1.2.3:80",
		              "127.0.0.1:8x",
		              ":80",
		              "127.0.0.1:-1" };
	g_autofree char *addr = NULL;
	g_autofree char *addr6 = NULL;
	g_autofree char *none = NULL;
	guint port = 0;
	g_autoptr(GError) error = NULL;

	g_assert_true(cli_net_parse_host_port("127.0.0.1:5201", FALSE, &addr, &port, &error));
	g_assert_cmpstr(addr, ==, "127.0.0.1");
	g_assert_cmpuint(port, ==, 5201);
	g_assert_true(cli_net_parse_host_port("[::1]:65535", FALSE, &addr6, &port, &error));
	g_assert_cmpstr(addr6, ==, "::1");
	g_assert_cmpuint(port, ==, 65535);
	g_assert_true(cli_net_parse_host_port("5201", TRUE, &none, &port, &error));
	g_assert_null(none);
	g_assert_cmpuint(port, ==, 5201);
	g_assert_false(cli_net_parse_host_port("5201", FALSE, &none, &port, &error));
	g_assert_error(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT);
	for (guint i = 0; i < G_N_ELEMENTS(bad); i++) {
		g_autofree char *a = NULL;
		g_autoptr(GError) e = NULL;

		g_assert_false(cli_net_parse_host_port(bad[i], FALSE, &a, &port, &e));
		g_assert_error(e, GB_ERROR, GB_ERROR_INVALID_ARGUMENT);
		g_assert_null(a);
	}
}

/* The host end against itself would need an agent; here: a listener that nobody reaches. */
static void test_net_end_listen_timeout(void)
{
	CliNetConfig cfg = { .role = CLI_NET_HOST_LISTENS,
		             .address = (char *)"127.0.0.1",
		             .port = 0,
		             .h2g = TRUE,
		             .streams = 1,
		             .seconds = 1,
		             .omit = 0,
		             .runs = 1,
		             .setup_timeout = 1 };
	g_autoptr(CliNetEnd) end = cli_net_end_new(&cfg);
	g_autoptr(CliNetEnd) busy = NULL;
	g_autoptr(GError) error = NULL;
	gint64 start = g_get_monotonic_time();

	g_assert_true(cli_net_end_listen(end, &error));
	g_assert_no_error(error);
	g_assert_cmpuint(cli_net_end_get_port(end), >, 0);
	/* the same port again: a clear error before any agent is told */
	cfg.port = cli_net_end_get_port(end);
	busy = cli_net_end_new(&cfg);
	g_assert_false(cli_net_end_listen(busy, &error));
	g_assert_error(error, GB_ERROR, GB_ERROR_IO);
	g_clear_error(&error);
	g_assert_true(cli_net_end_start(end, &error));
	while (!cli_net_end_check(end, &error)) {
		g_assert_cmpint(g_get_monotonic_time() - start, <, 10 * G_USEC_PER_SEC);
		g_usleep(20000);
	}
	g_assert_error(error, GB_ERROR, GB_ERROR_TIMEOUT);
	g_assert_nonnull(strstr(error->message, "did not connect"));
}

/* A peer that sends a bad header is dropped with the reason kept for the timeout. */
static void test_net_end_bad_peer(void)
{
	CliNetConfig cfg = { .role = CLI_NET_HOST_LISTENS,
		             .address = (char *)"127.0.0.1",
		             .port = 0,
		             .h2g = TRUE,
		             .streams = 1,
		             .seconds = 1,
		             .omit = 0,
		             .runs = 1,
		             .setup_timeout = 1 };
	g_autoptr(CliNetEnd) end = cli_net_end_new(&cfg);
	g_autoptr(GError) error = NULL;
	g_autoptr(GSocketClient) client = g_socket_client_new();
	g_autoptr(GSocketConnection) conn = NULL;
	g_autofree char *where = NULL;

	g_assert_true(cli_net_end_listen(end, &error));
	g_assert_true(cli_net_end_start(end, &error));
	where = g_strdup_printf("127.0.0.1:%u", cli_net_end_get_port(end));
	conn = g_socket_client_connect_to_host(client, where, 0, NULL, &error);
	g_assert_no_error(error);
	g_assert_true(g_output_stream_write_all(g_io_stream_get_output_stream(G_IO_STREAM(conn)),
	                                        "GARBAGE_GARBAGE!", 16, NULL, NULL, &error));
	while (!cli_net_end_check(end, &error))
		g_usleep(20000);
	g_assert_error(error, GB_ERROR, GB_ERROR_TIMEOUT);
	g_assert_nonnull(strstr(error->message, "bad magic"));
}

/* A hostile agent's end of one GBNET1 stream, on its own thread. */
typedef struct {
	guint port;
	guint dir;
	gboolean lie;    /* receiver: report more bytes than were sent */
	gboolean no_end; /* sender: never stop, never half-close */
	gboolean got_go;
} HostilePeer;

static gpointer hostile_peer_run(gpointer data)
{
	HostilePeer *peer = data;
	g_autoptr(GSocketClient) client = g_socket_client_new();
	g_autoptr(GSocketConnection) conn = NULL;
	g_autofree char *where = g_strdup_printf("127.0.0.1:%u", peer->port);
	g_autofree guint8 *chunk = g_malloc0(65536);
	GInputStream *in;
	GOutputStream *out;
	const GbNetbenchHeader header = {
		.direction = peer->dir, .index = 0, .streams = 1, .seconds = 1, .omit = 0
	};
	guint8 hdr[GB_NETBENCH_HEADER_LEN];
	guint8 go = 0;

	conn = g_socket_client_connect_to_host(client, where, 0, NULL, NULL);
	if (conn == NULL)
		return NULL;
	in = g_io_stream_get_input_stream(G_IO_STREAM(conn));
	out = g_io_stream_get_output_stream(G_IO_STREAM(conn));
	gb_netbench_header_build(&header, hdr);
	if (!g_output_stream_write_all(out, hdr, sizeof(hdr), NULL, NULL, NULL) ||
	    g_input_stream_read(in, &go, 1, NULL, NULL) != 1 || go != 'G')
		return NULL;
	peer->got_go = TRUE;
	if (peer->no_end) {
		/* until the host end closes the connection */
		while (g_output_stream_write_all(out, chunk, 65536, NULL, NULL, NULL))
			;
	} else if (peer->lie) {
		const GbNetbenchReport lie = { .bytes = G_MAXUINT64 / 2, .ns = 500000000 };
		guint8 report[GB_NETBENCH_REPORT_LEN];

		while (g_input_stream_read(in, chunk, 65536, NULL, NULL) > 0)
			;

		gb_netbench_report_build(&lie, report);
		g_output_stream_write_all(out, report, sizeof(report), NULL, NULL, NULL);
	}
	return NULL;
}

/*
 * The host end against a hostile peer on real sockets: a sender that never
 * stops is cut off GB_NETBENCH_GRACE_S after the agreed end, a receiver
 * that reports more bytes than it got is refused.
 */
static void test_net_end_hostile_peer(void)
{
	const struct {
		guint dir;
		gboolean lie;
		gboolean no_end;
		const char *message;
		gint code;
	} cases[] = {
		{ GB_NETBENCH_DIR_G2H, FALSE, TRUE, "did not finish the transfer within",
		  GB_ERROR_TIMEOUT },
		{ GB_NETBENCH_DIR_H2G, TRUE, FALSE, "report is implausible", GB_ERROR_PARSE },
	};

	for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
		CliNetConfig cfg = { .role = CLI_NET_HOST_LISTENS,
			             .address = (char *)"127.0.0.1",
			             .port = 0,
			             .h2g = cases[i].dir == GB_NETBENCH_DIR_H2G,
			             .g2h = cases[i].dir == GB_NETBENCH_DIR_G2H,
			             .streams = 1,
			             .seconds = 1,
			             .omit = 0,
			             .runs = 1,
			             .setup_timeout = 10 };
		g_autoptr(CliNetEnd) end = cli_net_end_new(&cfg);
		g_autoptr(GError) error = NULL;
		HostilePeer peer = { .dir = cases[i].dir,
			             .lie = cases[i].lie,
			             .no_end = cases[i].no_end };
		GThread *thread;
		gint64 start = g_get_monotonic_time();

		g_assert_true(cli_net_end_listen(end, &error));
		g_assert_true(cli_net_end_start(end, &error));
		peer.port = cli_net_end_get_port(end);
		thread = g_thread_new("hostile-peer", hostile_peer_run, &peer);
		while (!cli_net_end_check(end, &error)) {
			g_assert_cmpint(g_get_monotonic_time() - start, <,
			                (1 + GB_NETBENCH_GRACE_S + 10) * G_USEC_PER_SEC);
			g_usleep(20000);
		}
		g_test_message("%s", error != NULL ? error->message : "no error");
		g_assert_error(error, GB_ERROR, cases[i].code);
		g_assert_nonnull(strstr(error->message, cases[i].message));
		cli_net_end_stop(end);
		g_clear_pointer(&end, cli_net_end_free);
		g_thread_join(thread);
		g_assert_true(peer.got_go);
	}
}

/* Stopping a host end that waits for connections returns at once. */
static void test_net_end_stop(void)
{
	CliNetConfig cfg = { .role = CLI_NET_HOST_CONNECTS,
		             .address = (char *)"127.0.0.1",
		             .port = 9, /* discard: nothing listens there in a test box */
		             .h2g = TRUE,
		             .g2h = TRUE,
		             .streams = 2,
		             .seconds = 1,
		             .omit = 0,
		             .runs = 3,
		             .setup_timeout = 30 };
	g_autoptr(CliNetEnd) end = cli_net_end_new(&cfg);
	g_autoptr(GError) error = NULL;
	g_autoptr(JsonNode) json = NULL;
	gint64 start;

	g_assert_true(cli_net_end_start(end, &error));
	g_usleep(150000);
	g_assert_false(cli_net_end_check(end, &error));
	start = g_get_monotonic_time();
	cli_net_end_stop(end);
	g_assert_cmpint(g_get_monotonic_time() - start, <, G_USEC_PER_SEC);
	json = cli_net_end_to_json(end);
	g_assert_true(JSON_NODE_HOLDS_OBJECT(json));
	g_assert_cmpuint(
	    json_array_get_length(json_object_get_array_member(json_node_get_object(json), "runs")),
	    ==, 0);
}

static void test_results_name(void)
{
	g_autoptr(GDateTime) when = g_date_time_new_utc(2026, 12, 2, 11, 40, 5);
	g_autofree char *a = cli_runs_file_name(when, "bench-aes", 1);
	g_autofree char *b = cli_runs_file_name(when, "bench-aes", 3);
	g_autofree char *c = cli_runs_file_name(when, "../x y", 1);

	g_assert_cmpstr(a, ==, "2026-12-02T11-40-05Z-bench-aes.json");
	g_assert_cmpstr(b, ==, "2026-12-02T11-40-05Z-bench-aes-3.json");
	g_assert_cmpstr(c, ==, "2026-12-02T11-40-05Z--.-x-y.json");
}

static void rm_rf(const char *path)
{
	g_autoptr(GDir) dir = g_dir_open(path, 0, NULL);
	const char *name;

	while (dir != NULL && (name = g_dir_read_name(dir)) != NULL) {
		g_autofree char *child = g_build_filename(path, name, NULL);
		rm_rf(child);
	}
	g_remove(path);
}

static void test_results_save_list(void)
{
	g_autoptr(GError) error = NULL;
	g_autofree char *tmp = g_dir_make_tmp("gbres-XXXXXX", &error);
	g_autofree char *dir = g_build_filename(tmp, "a", "results", NULL);
	g_autoptr(GDateTime) when = g_date_time_new_utc(2026, 12, 2, 11, 40, 5);
	const char *doc = "{\"guestbench\": \"0.1.0\", \"command\": \"bench\", \"guests\": "
	                  "[{\"name\": \"vm1\", \"result\": {\"test\": \"aes\"}}, {\"name\": "
	                  "\"vm2\", \"result\": null}]}";
	g_autofree char *p1 = NULL;
	g_autofree char *p2 = NULL;
	g_autofree char *junk = g_build_filename(dir, "2026-12-02T11-40-06Z-junk.json", NULL);
	g_autofree char *other = g_build_filename(dir, "notes.txt", NULL);
	g_autofree char *tmpfile = g_build_filename(dir, ".save-abcdef", NULL);
	g_autoptr(GPtrArray) list = NULL;
	GStatBuf st;
	CliRunEntry *e;

	g_assert_no_error(error);
	p1 = cli_runs_save(dir, when, "bench-aes", doc, strlen(doc), &error);
	g_assert_no_error(error);
	p2 = cli_runs_save(dir, when, "bench-aes", doc, strlen(doc), &error);
	g_assert_no_error(error);
	/* same second: a new name, the first run untouched */
	g_assert_true(g_str_has_suffix(p1, "/2026-12-02T11-40-05Z-bench-aes.json"));
	g_assert_true(g_str_has_suffix(p2, "/2026-12-02T11-40-05Z-bench-aes-2.json"));
	g_assert_cmpint(g_stat(dir, &st), ==, 0);
	g_assert_cmpint(st.st_mode & 0777, ==, 0700);
	g_assert_true(g_file_set_contents(junk, "{not json", -1, NULL));
	g_assert_true(g_file_set_contents(other, "x", -1, NULL));
	g_assert_true(g_file_set_contents(tmpfile, "x", -1, NULL));

	list = cli_runs_list(dir, &error);
	g_assert_no_error(error);
	g_assert_cmpuint(list->len, ==, 3);
	e = g_ptr_array_index(list, 0);
	g_assert_cmpstr(e->id, ==, "2026-12-02T11-40-05Z-bench-aes");
	g_assert_cmpstr(e->date, ==, "2026-12-02T11:40:05Z");
	g_assert_cmpstr(e->command, ==, "bench aes");
	g_assert_cmpuint(g_strv_length(e->guests), ==, 2);
	g_assert_cmpstr(e->guests[1], ==, "vm2");
	g_assert_null(e->error);
	e = g_ptr_array_index(list, 2);
	g_assert_cmpstr(e->id, ==, "2026-12-02T11-40-06Z-junk");
	g_assert_nonnull(e->error);

	/* a missing directory is an empty list */
	g_clear_pointer(&list, g_ptr_array_unref);
	list = cli_runs_list("/nonexistent/guestbench/results", &error);
	g_assert_no_error(error);
	g_assert_cmpuint(list->len, ==, 0);

	/* a directory that cannot be made: a clear error, nothing written */
	g_free(p1);
	p1 = cli_runs_save(other, when, "bench-aes", doc, strlen(doc), &error);
	g_assert_null(p1);
	g_assert_error(error, GB_ERROR, GB_ERROR_IO);
	rm_rf(tmp);
}

/* The bound of a job from its params: 2 x work + 30 s, work from the params or defaults. */
static void test_job_bound(void)
{
	const struct {
		const char *test;
		const char *params;
		double work;
	} cases[] = {
		/* 6 default sizes x 3 s */
		{ "aes", "{}", 18 },
		{ "aes", "{\"seconds\": 0.5}", 3 },
		{ "aes", "{\"sizes\": [16, 64], \"seconds\": 0.2, \"runs\": 3}", 1.2 },
		/* 3 default records x 6 tests x 100 MiB at 1 MiB/s */
		{ "disk", "{}", 1800 },
		/* no write: the file is filled first, untimed */
		{ "disk", "{\"size\": 4194304, \"record_sizes\": [4096], \"tests\": [\"read\"]}",
		  8 },
		{ "disk",
		  "{\"size\": 4194304, \"record_sizes\": [4096], \"tests\": [\"write\", "
		  "\"read\"], \"runs\": 2}",
		  16 },
		/* 3 kinds x (2 s + 256 MiB at 64 MiB/s) */
		{ "mem", "{}", 18 },
		{ "mem", "{\"size\": 134217728, \"pages\": [\"4k\"]}", 4 },
		/* accept timeout 30 + omit 1 + seconds 10 */
		{ "net", "{}", 41 },
		{ "net", "{\"seconds\": 5, \"omit\": 0, \"runs\": 2}", 70 },
	};

	for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
		g_autoptr(GError) error = NULL;
		g_autoptr(JsonNode) node =
		    gb_json_parse(cases[i].params, strlen(cases[i].params), &error);
		JsonObject *params = NULL;
		double work = -1;
		double bound;

		g_assert_no_error(error);
		g_assert_true(gb_json_node_get_object(node, "params", &params, NULL));
		bound = cli_bench_job_bound(cases[i].test, params, &work);
		g_test_message("%s %s: work %g s, bound %g s", cases[i].test, cases[i].params, work,
		               bound);
		g_assert_cmpfloat_with_epsilon(work, cases[i].work, 1e-9);
		g_assert_cmpfloat(bound, ==, ceil(2 * cases[i].work + 30));
	}
	/* a disk job of the largest file still has a finite bound */
	{
		g_autoptr(JsonObject) params = json_object_new();

		json_object_set_int_member(params, "size", G_GINT64_CONSTANT(1) << 50);
		json_object_set_int_member(params, "runs", GB_BENCH_MAX_RUNS);
		g_assert_true(isfinite(cli_bench_job_bound("disk", params, NULL)));
	}
}

/* A job's result limit follows what it asks for (the rule: bench-args.h), under the cap. */
static void test_result_limit(void)
{
	const gsize facts = 1024 * 1024;
	const gsize base = facts + CLI_BENCH_RESULT_OVERHEAD;
	const gsize entry = CLI_BENCH_RESULT_ENTRY_SIZE;
	const struct {
		const char *test;
		const char *params;
		gsize limit;
	} cases[] = {
		/* (1 run + its aggregation) x 6 default sizes */
		{ "aes", "{}", base + 2 * 6 * entry },
		{ "aes", "{\"sizes\": [16, 64], \"runs\": 3}", base + 4 * 2 * entry },
		/* 3 default records x 6 tests x 4 */
		{ "disk", "{}", base + 2 * 72 * entry },
		{ "mem", "{\"pages\": [\"4k\"]}", base + 2 * 16 * entry },
		/* 2 directions x (omit 1 + 10 s) + 16 */
		{ "net", "{}", base + 2 * 38 * entry },
		{ "net", "{\"seconds\": 60, \"omit\": 0, \"runs\": 2}", base + 3 * 136 * entry },
		/* a day of net: over the cap, which it keeps */
		{ "net", "{\"seconds\": 86400, \"runs\": 10}", 16 * 1024 * 1024 },
	};

	for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
		g_autoptr(GError) error = NULL;
		g_autoptr(JsonNode) node =
		    gb_json_parse(cases[i].params, strlen(cases[i].params), &error);
		JsonObject *params = NULL;

		g_assert_no_error(error);
		g_assert_true(gb_json_node_get_object(node, "params", &params, NULL));
		g_assert_cmpuint(cli_bench_result_limit(cases[i].test, params, 16 * 1024 * 1024),
		                 ==, cases[i].limit);
	}
}

int main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	g_test_add_func("/bench-cli/size/ok", test_size_ok);
	g_test_add_func("/bench-cli/size/bad", test_size_bad);
	g_test_add_func("/bench-cli/size/overflow", test_size_overflow);
	g_test_add_func("/bench-cli/size/list", test_size_list);
	g_test_add_func("/bench-cli/word-list", test_word_list);
	g_test_add_func("/bench-cli/job-bound", test_job_bound);
	g_test_add_func("/bench-cli/result-limit", test_result_limit);
	g_test_add_func("/bench-cli/format-size", test_format_size);
	g_test_add_func("/bench-cli/openssl-layout", test_openssl_layout);
	g_test_add_func("/bench-cli/labels-string", test_labels_string);
	g_test_add_func("/bench-cli/prom-escaping", test_prom_escaping);
	g_test_add_func("/bench-cli/net/host-port", test_host_port);
	g_test_add_func("/bench-cli/net/listen-timeout", test_net_end_listen_timeout);
	g_test_add_func("/bench-cli/net/bad-peer", test_net_end_bad_peer);
	g_test_add_func("/bench-cli/net/hostile-peer", test_net_end_hostile_peer);
	g_test_add_func("/bench-cli/net/stop", test_net_end_stop);
	g_test_add_func("/bench-cli/results/name", test_results_name);
	g_test_add_func("/bench-cli/results/save-list", test_results_save_list);
	return g_test_run();
}
