/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The real guestbench-agent binary over a unix socket (and stdio, a pty
 * standing in for a virtio-serial port, --oneshot), speaking the wire protocol.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <termios.h>
#include <unistd.h>
#include <linux/vm_sockets.h>

#include <glib/gstdio.h>

#include "harness.h"
#include "endpoint.h"

/* Starts an agent with extra arguments and hands the harness to the test. */
static void test_with_agent(Harness *h, const char *const *extra)
{
	harness_init(h);
	harness_start_agent(h, extra);
}

static void test_ping(void)
{
	Harness h;
	g_autoptr(JsonNode) reply = NULL;
	g_autoptr(JsonNode) reply2 = NULL;
	g_autofree char *id = NULL;
	JsonNode *ret;

	test_with_agent(&h, NULL);
	reply = harness_call(&h, "{\"execute\": \"guest-ping\"}");
	ret = harness_get_return(reply);
	g_assert_true(JSON_NODE_HOLDS_OBJECT(ret));
	g_assert_cmpuint(json_object_get_size(json_node_get_object(ret)), ==, 0);
	g_assert_null(harness_get_id(reply));

	/* any JSON id comes back as it was sent */
	reply2 = harness_call(&h, "{\"execute\": \"guest-ping\", \"id\": {\"a\": [1, \"x\"]}}");
	harness_get_return(reply2);
	id = harness_get_id(reply2);
	g_assert_cmpstr(id, ==, "{\"a\":[1,\"x\"]}");
	harness_stop(&h);
}

static void test_sync(void)
{
	Harness h;
	g_autoptr(JsonNode) reply = NULL;
	g_autoptr(JsonNode) missing = NULL;
	g_autoptr(JsonNode) badtype = NULL;
	g_autoptr(JsonNode) extra = NULL;
	g_autoptr(JsonNode) negative = NULL;
	g_autofree char *id = NULL;
	JsonNode *ret;

	test_with_agent(&h, NULL);
	reply = harness_call(&h, "{\"execute\": \"guest-sync\", \"arguments\": {\"id\": "
	                         "9007199254740993}, \"id\": 7}");
	ret = harness_get_return(reply);
	g_assert_cmpint(json_node_get_int(ret), ==, G_GINT64_CONSTANT(9007199254740993));
	id = harness_get_id(reply);
	g_assert_cmpstr(id, ==, "7");

	negative = harness_call(&h, "{\"execute\": \"guest-sync\", \"arguments\": {\"id\": -5}}");
	g_assert_cmpint(json_node_get_int(harness_get_return(negative)), ==, -5);

	missing = harness_call(&h, "{\"execute\": \"guest-sync\", \"id\": 8}");
	harness_assert_error(missing, "GenericError", "Parameter 'id' is missing");
	badtype = harness_call(&h, "{\"execute\": \"guest-sync\", \"arguments\": {\"id\": \"a\"}}");
	harness_assert_error(badtype, "GenericError",
	                     "Invalid parameter type for 'id', expected: integer");
	extra =
	    harness_call(&h, "{\"execute\": \"guest-sync\", \"arguments\": {\"id\": 1, \"z\": 2}}");
	harness_assert_error(extra, "GenericError", "Parameter 'z' is unexpected");
	harness_stop(&h);
}

static void test_sync_delimited(void)
{
	Harness h;
	g_autofree char *line = NULL;
	g_autoptr(JsonNode) reply = NULL;
	const char req[] = "\xff{\"execute\": \"guest-sync-delimited\", \"arguments\": {\"id\": "
	                   "4242}, \"id\": \"s\"}\n";

	test_with_agent(&h, NULL);
	harness_send(h.fd, req, sizeof(req) - 1);
	line = harness_read_line(h.fd, h.buf, HARNESS_TIMEOUT_MS);
	g_assert_nonnull(line);
	/* the 0xFF sentinel comes first, then the reply on the same line */
	g_assert_cmpint((guint8)line[0], ==, 0xff);
	reply = harness_parse(line + 1);
	g_assert_cmpint(json_node_get_int(harness_get_return(reply)), ==, 4242);
	harness_stop(&h);
}

/* Returns name -> enabled from a guest-info reply and checks its shape. */
static GHashTable *test_info_commands(JsonNode *reply)
{
	g_autoptr(GError) error = NULL;
	GHashTable *map = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
	JsonObject *ret = json_node_get_object(harness_get_return(reply));
	JsonArray *cmds = NULL;
	const char *version = NULL;
	const char *prev = "";

	g_assert_true(gb_json_get_string(ret, "version", GB_JSON_REQUIRED, &version, &error));
	g_assert_cmpstr(version, ==, GB_VERSION);
	g_assert_true(
	    gb_json_get_array(ret, "supported_commands", GB_JSON_REQUIRED, &cmds, &error));
	for (guint i = 0; i < json_array_get_length(cmds); i++) {
		JsonObject *cmd = NULL;
		const char *name = NULL;
		gboolean enabled = FALSE;
		gboolean success = FALSE;
		g_assert_true(
		    gb_json_node_get_object(json_array_get_element(cmds, i), "cmd", &cmd, &error));
		g_assert_true(gb_json_get_string(cmd, "name", GB_JSON_REQUIRED, &name, &error));
		g_assert_true(gb_json_get_bool(cmd, "enabled", GB_JSON_REQUIRED, &enabled, &error));
		g_assert_true(
		    gb_json_get_bool(cmd, "success-response", GB_JSON_REQUIRED, &success, &error));
		g_assert_true(success);
		/* sorted by name */
		g_assert_cmpint(g_strcmp0(prev, name), <, 0);
		prev = name;
		g_hash_table_insert(map, g_strdup(name), GINT_TO_POINTER(enabled ? 1 : 2));
	}
	return map;
}

static gboolean test_enabled(GHashTable *map, const char *name)
{
	gint val = GPOINTER_TO_INT(g_hash_table_lookup(map, name));
	g_assert_cmpint(val, !=, 0);
	return val == 1;
}

static const char *const test_all_commands[] = {
	"gb-bench-cancel", "gb-bench-list",
	"gb-bench-start",  "gb-bench-status",
	"gb-get-facts",    "guest-info",
	"guest-ping",      "guest-sync-delimited",
	"guest-sync",      NULL,
};

static void test_info(void)
{
	Harness h;
	g_autoptr(JsonNode) reply = NULL;
	g_autoptr(GHashTable) map = NULL;

	test_with_agent(&h, NULL);
	reply = harness_call(&h, "{\"execute\": \"guest-info\"}");
	map = test_info_commands(reply);
	g_assert_cmpuint(g_hash_table_size(map), ==, g_strv_length((char **)test_all_commands));
	for (guint i = 0; test_all_commands[i] != NULL; i++)
		g_assert_true(test_enabled(map, test_all_commands[i]));
	harness_stop(&h);
}

static void test_unknown_command(void)
{
	Harness h;
	g_autoptr(JsonNode) reply = NULL;
	g_autofree char *id = NULL;

	test_with_agent(&h, NULL);
	reply = harness_call(&h, "{\"execute\": \"guest-exec\", \"id\": \"u1\"}");
	harness_assert_error(reply, "CommandNotFound", "The command guest-exec has not been found");
	id = harness_get_id(reply);
	g_assert_cmpstr(id, ==, "\"u1\"");
	harness_stop(&h);
}

static void test_block_rpcs(void)
{
	Harness h;
	const char *const extra[] = { "-b", "gb-get-facts,guest-sync", NULL };
	g_autoptr(JsonNode) reply = NULL;
	g_autoptr(JsonNode) reply2 = NULL;
	g_autoptr(JsonNode) info = NULL;
	g_autoptr(JsonNode) ping = NULL;
	g_autoptr(GHashTable) map = NULL;
	g_autofree char *id = NULL;

	test_with_agent(&h, extra);
	reply = harness_call(&h, "{\"execute\": \"gb-get-facts\", \"id\": 3}");
	harness_assert_error(reply, "CommandNotFound", "Command gb-get-facts has been disabled");
	id = harness_get_id(reply);
	g_assert_cmpstr(id, ==, "3");
	reply2 = harness_call(&h, "{\"execute\": \"guest-sync\", \"arguments\": {\"id\": 1}}");
	harness_assert_error(reply2, "CommandNotFound", "Command guest-sync has been disabled");
	ping = harness_call(&h, "{\"execute\": \"guest-ping\"}");
	harness_get_return(ping);
	info = harness_call(&h, "{\"execute\": \"guest-info\"}");
	map = test_info_commands(info);
	g_assert_false(test_enabled(map, "gb-get-facts"));
	g_assert_false(test_enabled(map, "guest-sync"));
	g_assert_true(test_enabled(map, "guest-sync-delimited"));
	g_assert_true(test_enabled(map, "gb-bench-list"));
	harness_stop(&h);
}

static void test_allow_rpcs(void)
{
	Harness h;
	/* repeated -a and both separators accumulate */
	const char *const extra[] = { "-a", "guest-ping", "-a", "guest-info,guest-sync-*", NULL };
	g_autoptr(JsonNode) ping = NULL;
	g_autoptr(JsonNode) sync = NULL;
	g_autoptr(JsonNode) facts = NULL;
	g_autoptr(JsonNode) info = NULL;
	g_autoptr(GHashTable) map = NULL;

	test_with_agent(&h, extra);
	ping = harness_call(&h, "{\"execute\": \"guest-ping\"}");
	harness_get_return(ping);
	/* as in qemu-ga, an allow list disables guest-sync too unless it names it */
	sync = harness_call(&h, "{\"execute\": \"guest-sync\", \"arguments\": {\"id\": 1}}");
	harness_assert_error(sync, "CommandNotFound", "Command guest-sync has been disabled");
	facts = harness_call(&h, "{\"execute\": \"gb-get-facts\"}");
	harness_assert_error(facts, "CommandNotFound", "Command gb-get-facts has been disabled");
	info = harness_call(&h, "{\"execute\": \"guest-info\"}");
	map = test_info_commands(info);
	for (guint i = 0; test_all_commands[i] != NULL; i++) {
		gboolean want = g_str_equal(test_all_commands[i], "guest-ping") ||
		                g_str_equal(test_all_commands[i], "guest-info") ||
		                g_str_equal(test_all_commands[i], "guest-sync-delimited");
		g_assert_cmpint(test_enabled(map, test_all_commands[i]), ==, want);
	}
	harness_stop(&h);
}

static void test_block_glob(void)
{
	Harness h;
	const char *const extra[] = { "--block-rpcs", "gb-bench-*", NULL };
	g_autoptr(JsonNode) reply = NULL;
	g_autoptr(JsonNode) info = NULL;
	g_autoptr(GHashTable) map = NULL;

	test_with_agent(&h, extra);
	reply = harness_call(&h, "{\"execute\": \"gb-bench-list\"}");
	harness_assert_error(reply, "CommandNotFound", "Command gb-bench-list has been disabled");
	info = harness_call(&h, "{\"execute\": \"guest-info\"}");
	map = test_info_commands(info);
	g_assert_false(test_enabled(map, "gb-bench-start"));
	g_assert_false(test_enabled(map, "gb-bench-status"));
	g_assert_false(test_enabled(map, "gb-bench-cancel"));
	g_assert_true(test_enabled(map, "gb-get-facts"));
	harness_stop(&h);
}

typedef struct {
	const char *request;
	const char *klass;
	const char *desc; /* NULL: class checked only */
	const char *id;   /* NULL: the reply must carry none */
} TestShape;

/* Requests qemu-ga rejects before running anything, with its exact texts. */
static const TestShape test_shapes[] = {
	{ "[1, 2]", "GenericError", "QMP input must be a JSON object", NULL },
	{ "\"str\"", "GenericError", "QMP input must be a JSON object", NULL },
	{ "42", "GenericError", "QMP input must be a JSON object", NULL },
	{ "{\"id\": 3}", "GenericError", "QMP input lacks member 'execute'", "3" },
	{ "{}", "GenericError", "QMP input lacks member 'execute'", NULL },
	{ "{\"execute\": 3, \"id\": 4}", "GenericError",
	  "QMP input member 'execute' must be a string", "4" },
	{ "{\"execute\": \"guest-ping\", \"arguments\": [1], \"id\": 6}", "GenericError",
	  "QMP input member 'arguments' must be an object", "6" },
	{ "{\"execute\": \"guest-ping\", \"foo\": 1, \"id\": 2}", "GenericError",
	  "QMP input member 'foo' is unexpected", "2" },
	{ "{\"execute\": \"guest-ping\", \"arguments\": {\"z\": 1}, \"id\": 1}", "GenericError",
	  "Parameter 'z' is unexpected", "1" },
	{ "{\"execute\": \"guest-info\", \"arguments\": {\"z\": 1}}", "GenericError",
	  "Parameter 'z' is unexpected", NULL },
	{ "{\"execute\": \"nope\", \"id\": [true]}", "CommandNotFound",
	  "The command nope has not been found", "[true]" },
	{ "nul", "GenericError", NULL, NULL },
	{ "{\"execute\": \"guest-ping\",}", "GenericError", NULL, NULL },
	{ "{\"execute\": \"guest-ping\", \"id\": 1} ", NULL, NULL, "1" },
	{ NULL },
};

static void test_request_shapes(void)
{
	Harness h;

	test_with_agent(&h, NULL);
	for (guint i = 0; test_shapes[i].request != NULL; i++) {
		g_autoptr(JsonNode) reply = harness_call(&h, test_shapes[i].request);
		g_autofree char *id = harness_get_id(reply);
		g_test_message("request %s", test_shapes[i].request);
		if (test_shapes[i].klass != NULL)
			harness_assert_error(reply, test_shapes[i].klass, test_shapes[i].desc);
		else
			harness_get_return(reply);
		g_assert_cmpstr(id, ==, test_shapes[i].id);
	}
	harness_stop(&h);
}

static void test_pipelined(void)
{
	Harness h;
	g_autoptr(GString) batch = g_string_new(NULL);
	const guint n = 1000;

	test_with_agent(&h, NULL);
	for (guint i = 0; i < n; i++)
		g_string_append_printf(batch,
		                       "{\"execute\":\"guest-sync\",\"arguments\":{\"id\":%u},"
		                       "\"id\":%u}",
		                       i, i + 100000);
	/* one write: replies must come in order, one per request */
	harness_send(h.fd, batch->str, batch->len);
	for (guint i = 0; i < n; i++) {
		g_autofree char *line = harness_read_line(h.fd, h.buf, HARNESS_TIMEOUT_MS);
		g_autoptr(JsonNode) reply = harness_parse(line);
		g_autofree char *id = harness_get_id(reply);
		g_autofree char *want = g_strdup_printf("%u", i + 100000);
		g_assert_cmpint(json_node_get_int(harness_get_return(reply)), ==, i);
		g_assert_cmpstr(id, ==, want);
	}
	harness_stop(&h);
}

static void test_byte_at_a_time(void)
{
	Harness h;
	const char req[] = " \r\n\t{\"execute\" : \"guest-sync\", \"arguments\": {\"id\": 77}, "
	                   "\"id\": \"b}{\\\"\"}";
	g_autofree char *line = NULL;
	g_autoptr(JsonNode) reply = NULL;
	g_autofree char *id = NULL;

	test_with_agent(&h, NULL);
	for (gsize i = 0; i < sizeof(req) - 1; i++) {
		harness_send(h.fd, &req[i], 1);
		/* let each byte arrive on its own */
		if (i % 8 == 0)
			g_usleep(1000);
	}
	line = harness_read_line(h.fd, h.buf, HARNESS_TIMEOUT_MS);
	reply = harness_parse(line);
	g_assert_cmpint(json_node_get_int(harness_get_return(reply)), ==, 77);
	id = harness_get_id(reply);
	g_assert_cmpstr(id, ==, "\"b}{\\\"\"");
	harness_stop(&h);
}

static void test_oversize(void)
{
	Harness h;
	g_autoptr(GString) big = g_string_new("{\"execute\": \"guest-ping\", \"id\": \"");
	g_autofree char *line = NULL;
	g_autoptr(JsonNode) reply = NULL;
	g_autoptr(JsonNode) ping = NULL;

	test_with_agent(&h, NULL);
	/* 1.5 MiB: over the default 1 MiB limit */
	while (big->len < 1536 * 1024)
		g_string_append(big,
		                "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx");
	g_string_append(big, "\"}");
	harness_send(h.fd, big->str, big->len);
	line = harness_read_line(h.fd, h.buf, HARNESS_TIMEOUT_MS);
	reply = harness_parse(line);
	harness_assert_error(reply, "GenericError", NULL);
	g_assert_null(harness_get_id(reply));
	/* then the agent carries on */
	ping = harness_call(&h, "{\"execute\": \"guest-ping\", \"id\": 2}");
	harness_get_return(ping);
	harness_stop(&h);
}

static void test_overdepth(void)
{
	Harness h;
	g_autoptr(GString) deep = g_string_new("{\"execute\": \"guest-ping\", \"arguments\": ");
	g_autoptr(JsonNode) reply = NULL;
	g_autoptr(JsonNode) ping = NULL;

	test_with_agent(&h, NULL);
	for (guint i = 0; i < 100; i++)
		g_string_append(deep, "[");
	for (guint i = 0; i < 100; i++)
		g_string_append(deep, "]");
	g_string_append(deep, "}");
	reply = harness_call(&h, deep->str);
	harness_assert_error(reply, "GenericError", NULL);
	ping = harness_call(&h, "{\"execute\": \"guest-ping\"}");
	harness_get_return(ping);
	harness_stop(&h);
}

static void test_resync(void)
{
	Harness h;
	const char req[] =
	    "{\"execute\": \"guest-ping\", \"arguments\": {\"x\": \"abc"
	    "\xff{\"execute\": \"guest-sync-delimited\", \"arguments\": {\"id\": 5}}\n";
	g_autofree char *line1 = NULL;
	g_autofree char *line2 = NULL;
	g_autoptr(JsonNode) err = NULL;
	g_autoptr(JsonNode) reply = NULL;

	test_with_agent(&h, NULL);
	harness_send(h.fd, req, sizeof(req) - 1);
	/* the cut-off message is reported once, then the sync is answered */
	line1 = harness_read_line(h.fd, h.buf, HARNESS_TIMEOUT_MS);
	err = harness_parse(line1);
	harness_assert_error(err, "GenericError", NULL);
	line2 = harness_read_line(h.fd, h.buf, HARNESS_TIMEOUT_MS);
	g_assert_nonnull(line2);
	g_assert_cmpint((guint8)line2[0], ==, 0xff);
	reply = harness_parse(line2 + 1);
	g_assert_cmpint(json_node_get_int(harness_get_return(reply)), ==, 5);
	harness_stop(&h);
}

static void test_reconnect(void)
{
	Harness h;
	g_autoptr(JsonNode) reply = NULL;
	g_autoptr(JsonNode) reply2 = NULL;
	int second;

	test_with_agent(&h, NULL);
	/* the first client leaves half a message behind ... */
	harness_send(h.fd, "{\"execute\": \"guest-pi", 21);
	/* ... a second one queues in the backlog meanwhile */
	second = harness_connect(h.sock);
	g_assert_cmpint(second, >=, 0);
	close(h.fd);
	h.fd = second;
	/* the new client starts clean: nothing of the old half message */
	reply = harness_call(&h, "{\"execute\": \"guest-ping\", \"id\": 1}");
	harness_get_return(reply);
	harness_reconnect(&h);
	reply2 = harness_call(&h, "{\"execute\": \"guest-ping\", \"id\": 2}");
	harness_get_return(reply2);
	harness_stop(&h);
}

static void test_slow_reader(void)
{
	Harness h;
	g_autoptr(GString) req = g_string_new("{\"execute\":\"guest-ping\",\"id\":\"");
	g_autoptr(JsonNode) reply = NULL;
	const guint total = 20000;
	guint sent = 0;
	guint64 rss_before;
	guint64 rss_after;
	GPid pid;
	int flags;

	test_with_agent(&h, NULL);
	/* the session process reads and answers: its memory is what must stay bounded */
	pid = harness_session_pid(harness_pid(h.proc));
	rss_before = harness_proc_rss_kib(pid);
	/* a 4 KiB id makes each reply 4 KiB: unbounded, 20000 of them are 80 MiB */
	while (req->len < 4096)
		g_string_append(req, "yyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyy");
	g_string_append(req, "\"}");
	flags = fcntl(h.fd, F_GETFL);
	g_assert_cmpint(fcntl(h.fd, F_SETFL, flags | O_NONBLOCK), ==, 0);
	while (sent < total) {
		gsize off = 0;
		while (off < req->len) {
			struct pollfd pfd = { .fd = h.fd, .events = POLLOUT };
			ssize_t n = send(h.fd, req->str + off, req->len - off, MSG_NOSIGNAL);
			if (n > 0) {
				off += (gsize)n;
				continue;
			}
			g_assert_true(n < 0 && (errno == EAGAIN || errno == EINTR));
			/* the agent stopped reading: that is the backpressure under test */
			if (poll(&pfd, 1, 2000) == 0)
				break;
		}
		if (off < req->len)
			break;
		sent++;
	}
	g_test_message("sent %u requests before the agent stopped reading", sent);
	g_assert_cmpuint(sent, <, total);
	rss_after = harness_proc_rss_kib(pid);
	g_test_message("agent VmRSS %" G_GUINT64_FORMAT " KiB -> %" G_GUINT64_FORMAT " KiB",
	               rss_before, rss_after);
	if (!harness_sanitized()) /* ASan's quarantine holds freed memory */
		g_assert_cmpuint(rss_after, <, rss_before + 16 * 1024);

	/* the stuck client goes; the next one is served */
	harness_reconnect(&h);
	reply = harness_call(&h, "{\"execute\": \"guest-ping\", \"id\": 9}");
	harness_get_return(reply);
	harness_stop(&h);
}

static void test_sigterm(void)
{
	Harness h;
	g_autoptr(GError) error = NULL;

	test_with_agent(&h, NULL);
	g_assert_true(g_file_test(h.sock, G_FILE_TEST_EXISTS));
	g_subprocess_send_signal(h.proc, SIGTERM);
	g_subprocess_wait(h.proc, NULL, &error);
	g_assert_no_error(error);
	g_assert_true(g_subprocess_get_if_exited(h.proc));
	g_assert_cmpint(g_subprocess_get_exit_status(h.proc), ==, 0);
	g_assert_false(g_file_test(h.sock, G_FILE_TEST_EXISTS));
	harness_stop(&h);
}

static void test_stale_socket(void)
{
	Harness h;
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	g_autoptr(JsonNode) reply = NULL;
	int fd;

	harness_init(&h);
	/* a socket file nobody listens on: what a killed agent leaves */
	fd = socket(AF_UNIX, SOCK_STREAM, 0);
	memcpy(sun.sun_path, h.sock, strlen(h.sock));
	g_assert_cmpint(bind(fd, (struct sockaddr *)&sun, sizeof(sun)), ==, 0);
	close(fd);
	harness_start_agent(&h, NULL);
	reply = harness_call(&h, "{\"execute\": \"guest-ping\"}");
	harness_get_return(reply);
	harness_stop(&h);
}

static void test_socket_in_use(void)
{
	Harness h;
	g_autofree char *out = NULL;
	g_autofree char *err = NULL;
	g_autofree char *regular = NULL;
	int rc;

	test_with_agent(&h, NULL);
	/* a live agent's socket is not stolen */
	{
		const char *const argv[] = { "-m", "unix-listen", "-p", h.sock, NULL };
		rc = harness_run_agent(argv, NULL, &out, &err);
		g_assert_cmpint(rc, ==, 1);
		g_assert_nonnull(strstr(err, "another process is listening"));
	}
	/* nor is a file that is not a socket */
	regular = g_build_filename(h.tmpdir, "file", NULL);
	g_assert_true(g_file_set_contents(regular, "keep me", -1, NULL));
	{
		const char *const argv[] = { "-m", "unix-listen", "-p", regular, NULL };
		g_clear_pointer(&out, g_free);
		g_clear_pointer(&err, g_free);
		rc = harness_run_agent(argv, NULL, &out, &err);
		g_assert_cmpint(rc, ==, 1);
		g_assert_nonnull(strstr(err, "is not a socket"));
		g_assert_true(g_file_test(regular, G_FILE_TEST_IS_REGULAR));
	}
	harness_stop(&h);
}

static char *test_write_config(Harness *h, const char *contents)
{
	char *fn = g_build_filename(h->tmpdir, "agent.conf", NULL);
	g_assert_true(g_file_set_contents(fn, contents, -1, NULL));
	return fn;
}

typedef struct {
	const char *contents;
	const char *expect; /* substring of stderr */
} TestBadConfig;

static void test_config_errors(void)
{
	Harness h;
	const TestBadConfig cases[] = {
		{ "[general]\nbogus=1\n", "[general] unknown key 'bogus'" },
		{ "[general]\n[other]\nmethod=stdio\n", "unknown group [other]" },
		{ "[general]\nverbose=maybe\n", "[general] verbose: expected a boolean" },
		{ "[general]\nmax-message-size=big\n", "[general] max-message-size: expected" },
		{ "[general]\nmax-message-size=-1\n", "[general] max-message-size: expected" },
		{ "[general]\nmax-message-size=1\n", "[general] max-message-size: expected" },
		{ "[general]\nmax-bench-seconds=0\n", "[general] max-bench-seconds: expected" },
		{ "[general]\nlinger-seconds=0\n", "[general] linger-seconds: expected" },
		{ "[general]\nlinger-seconds=86401\n", "[general] linger-seconds: expected" },
		{ "[general]\nmax-bench-file-size=12x\n", "[general] max-bench-file-size" },
		{ "[general]\nmethod=carrier-pigeon\n", "[general] method: unknown method" },
		{ "[general]\nsysroot=\n", "[general] sysroot: expected a directory" },
		{ "method=stdio\n", "agent.conf" },
		{ "[general\n", "agent.conf" },
		{ NULL },
	};

	harness_init(&h);
	for (guint i = 0; cases[i].contents != NULL; i++) {
		g_autofree char *fn = test_write_config(&h, cases[i].contents);
		g_autofree char *out = NULL;
		g_autofree char *err = NULL;
		const char *const argv[] = { "-c", fn, "--oneshot", "{\"execute\":\"guest-ping\"}",
			                     NULL };
		int rc = harness_run_agent(argv, NULL, &out, &err);
		g_test_message("config %s -> %s", cases[i].contents, err);
		g_assert_cmpint(rc, ==, 2);
		g_assert_nonnull(strstr(err, cases[i].expect));
		/* every message names the file */
		g_assert_nonnull(strstr(err, fn));
		g_assert_cmpstr(out, ==, "");
	}
	harness_stop(&h);
}

static void test_config_missing(void)
{
	g_autofree char *out = NULL;
	g_autofree char *err = NULL;
	const char *const argv[] = { "-c", "/nonexistent/agent.conf", "--oneshot",
		                     "{\"execute\":\"guest-ping\"}", NULL };
	int rc = harness_run_agent(argv, NULL, &out, &err);

	g_assert_cmpint(rc, ==, 2);
	g_assert_nonnull(strstr(err, "/nonexistent/agent.conf"));
}

static void test_config_applied(void)
{
	Harness h;
	g_autofree char *fn = NULL;
	g_autoptr(GString) big = g_string_new("{\"execute\": \"guest-ping\", \"id\": \"");
	g_autoptr(JsonNode) reply = NULL;
	g_autoptr(JsonNode) info = NULL;
	g_autoptr(JsonNode) ping = NULL;
	g_autoptr(GHashTable) map = NULL;
	const char *extra[] = { "-c", NULL, NULL };

	harness_init(&h);
	/* a small message limit and a block list from the file; -m/-p come from the command line */
	fn = test_write_config(&h, "# comment\n[general]\nmethod=stdio\nmax-message-size=1024\n"
	                           "block-rpcs = gb-bench-start ; gb-get-facts\nverbose=false\n"
	                           "max-bench-seconds=30\nmax-bench-file-size=1048576\n");
	extra[1] = fn;
	harness_start_agent(&h, extra);
	while (big->len < 2000)
		g_string_append(big, "z");
	g_string_append(big, "\"}");
	reply = harness_call(&h, big->str);
	harness_assert_error(reply, "GenericError", NULL);
	info = harness_call(&h, "{\"execute\": \"guest-info\"}");
	map = test_info_commands(info);
	g_assert_false(test_enabled(map, "gb-bench-start"));
	g_assert_false(test_enabled(map, "gb-get-facts"));
	g_assert_true(test_enabled(map, "gb-bench-list"));
	ping = harness_call(&h, "{\"execute\": \"guest-ping\"}");
	harness_get_return(ping);
	harness_stop(&h);
}

/* The shipped example, every key uncommented, must load and take effect. */
static void test_config_example(void)
{
	Harness h;
	g_autofree char *contents = NULL;
	g_autofree char *uncommented = NULL;
	g_autofree char *fn = NULL;
	g_autofree char *out = NULL;
	g_autofree char *err = NULL;
	g_autoptr(GRegex) regex = g_regex_new("^#([a-z-]+=)", G_REGEX_MULTILINE, 0, NULL);
	g_autoptr(JsonNode) reply = NULL;
	g_autoptr(GHashTable) map = NULL;
	int rc;

	g_assert_true(g_file_get_contents(AGENT_CONF_EXAMPLE, &contents, NULL, NULL));
	uncommented = g_regex_replace(regex, contents, -1, 0, "\\1", 0, NULL);
	g_assert_nonnull(strstr(uncommented, "\nmax-bench-file-size="));
	harness_init(&h);
	fn = test_write_config(&h, uncommented);
	{
		const char *const argv[] = {
			"-c", fn, "-v", "--oneshot", "{\"execute\": \"guest-info\"}", NULL
		};
		rc = harness_run_agent(argv, NULL, &out, &err);
	}
	g_assert_cmpint(rc, ==, 0);
	/* -v logs go to stderr only: stdout is the one reply */
	g_assert_nonnull(strstr(err, "running guest-info"));
	g_assert_true(strchr(out, '\n') == out + strlen(out) - 1);
	reply = harness_parse(out);
	map = test_info_commands(reply);
	g_assert_true(test_enabled(map, "gb-get-facts"));
	g_assert_true(test_enabled(map, "guest-ping"));
	g_assert_false(test_enabled(map, "gb-bench-start"));
	g_assert_false(test_enabled(map, "gb-bench-list"));
	harness_stop(&h);
}

typedef struct {
	const char *argv[6];
	const char *expect;
} TestBadArgs;

static void test_cli_errors(void)
{
	const TestBadArgs cases[] = {
		{ { "--no-such-option", NULL }, "Unknown option" },
		{ { "-m", "carrier-pigeon", NULL }, "unknown method 'carrier-pigeon'" },
		{ { "-m", NULL }, "Missing argument" },
		{ { "stray", NULL }, "unexpected argument 'stray'" },
		{ { "-m", "vsock-listen", NULL }, "needs an address" },
		{ { "-m", "vsock-listen", "-p", "3", NULL }, "expected CID:PORT" },
		{ { "-m", "vsock-listen", "-p", "x:1", NULL }, "invalid vsock CID" },
		{ { "-m", "vsock-listen", "-p", "2:99999999999", NULL }, "invalid vsock port" },
		{ { "-m", "unix-listen", NULL }, "needs a socket path" },
		{ { "-p", "", NULL }, "--path must not be empty" },
		{ { "--sysroot", "", NULL }, "--sysroot must not be empty" },
		{ { "-a", ",", NULL }, "--allow-rpcs needs" },
		{ { "--linger", "0", NULL }, "--linger must be 1 to 86400 seconds" },
		{ { "--linger", "x", NULL }, "Cannot parse integer value" },
		{ { "--endpoint-fd", "3", NULL }, "Unknown option" },
		{ { "--oneshot", "", NULL }, "--oneshot needs a request" },
		{ { "--oneshot", "{\"execute\":\"guest-ping\"}{\"execute\":\"guest-ping\"}", NULL },
		  "exactly one request" },
		{ { NULL } },
	};

	for (guint i = 0; cases[i].argv[0] != NULL; i++) {
		g_autofree char *out = NULL;
		g_autofree char *err = NULL;
		int rc = harness_run_agent(cases[i].argv, NULL, &out, &err);
		g_test_message("%s -> %s", cases[i].argv[0], err);
		g_assert_cmpint(rc, ==, 2);
		g_assert_nonnull(strstr(err, cases[i].expect));
		g_assert_nonnull(strstr(err, "--help"));
	}
}

static void test_version_help(void)
{
	g_autofree char *out = NULL;
	g_autofree char *err = NULL;
	g_autofree char *out2 = NULL;
	g_autofree char *err2 = NULL;
	const char *const version[] = { "--version", NULL };
	const char *const help[] = { "--help", NULL };
	const char *const options[] = { "--method",     "--path",        "--config",
		                        "--sysroot",    "--scratch-dir", "--allow-rpcs",
		                        "--block-rpcs", "--linger",      "--oneshot",
		                        "--verbose",    "--version",     NULL };

	g_assert_cmpint(harness_run_agent(version, NULL, &out, &err), ==, 0);
	g_assert_cmpstr(out, ==, "guestbench-agent " GB_VERSION "\n");
	g_assert_cmpint(harness_run_agent(help, NULL, &out2, &err2), ==, 0);
	for (guint i = 0; options[i] != NULL; i++)
		g_assert_nonnull(strstr(out2, options[i]));
	g_assert_nonnull(strstr(out2, "[general]"));
}

static void test_oneshot(void)
{
	g_autofree char *out = NULL;
	g_autofree char *err = NULL;
	g_autofree char *out2 = NULL;
	g_autofree char *err2 = NULL;
	g_autofree char *out3 = NULL;
	g_autofree char *err3 = NULL;
	g_autoptr(JsonNode) reply = NULL;
	g_autoptr(JsonNode) reply2 = NULL;
	g_autoptr(JsonNode) reply3 = NULL;
	const char *const ping[] = { "--oneshot", "{\"execute\": \"guest-ping\", \"id\": 1}",
		                     NULL };
	const char *const bad[] = { "--oneshot", "{\"execute\": \"guest-ping\"", NULL };
	const char *const unknown[] = { "--oneshot", "{\"execute\": \"x\"}", NULL };

	g_assert_cmpint(harness_run_agent(ping, NULL, &out, &err), ==, 0);
	g_assert_true(g_str_has_suffix(out, "\n"));
	/* exactly one line */
	g_assert_true(strchr(out, '\n') == out + strlen(out) - 1);
	reply = harness_parse(out);
	harness_get_return(reply);

	/* a bad request is a reply, not a usage error */
	g_assert_cmpint(harness_run_agent(bad, NULL, &out2, &err2), ==, 0);
	reply2 = harness_parse(out2);
	harness_assert_error(reply2, "GenericError", NULL);
	g_assert_cmpint(harness_run_agent(unknown, NULL, &out3, &err3), ==, 0);
	reply3 = harness_parse(out3);
	harness_assert_error(reply3, "CommandNotFound", "The command x has not been found");
}

static void test_stdio(void)
{
	g_autofree char *out = NULL;
	g_autofree char *err = NULL;
	g_auto(GStrv) lines = NULL;
	g_autoptr(JsonNode) r0 = NULL;
	g_autoptr(JsonNode) r1 = NULL;
	g_autoptr(JsonNode) r2 = NULL;
	g_autoptr(JsonNode) r3 = NULL;
	const char *const argv[] = { "-m", "stdio", NULL };
	const char *input = "{\"execute\": \"guest-ping\", \"id\": 1}\n"
	                    "{\"execute\": \"guest-sync\", \"arguments\": {\"id\": 3}}"
	                    "{\"execute\": \"nope\"}\n"
	                    "{\"execute\": \"guest-ping\"";

	g_assert_cmpint(harness_run_agent(argv, input, &out, &err), ==, 0);
	lines = g_strsplit(out, "\n", -1);
	g_assert_cmpuint(g_strv_length(lines), ==, 5);
	g_assert_cmpstr(lines[4], ==, "");
	r0 = harness_parse(lines[0]);
	harness_get_return(r0);
	r1 = harness_parse(lines[1]);
	g_assert_cmpint(json_node_get_int(harness_get_return(r1)), ==, 3);
	r2 = harness_parse(lines[2]);
	harness_assert_error(r2, "CommandNotFound", NULL);
	/* input ended inside a message */
	r3 = harness_parse(lines[3]);
	harness_assert_error(r3, "GenericError", NULL);
}

static void test_stdio_empty(void)
{
	g_autofree char *out = NULL;
	g_autofree char *err = NULL;
	const char *const argv[] = { "-m", "stdio", NULL };

	g_assert_cmpint(harness_run_agent(argv, "", &out, &err), ==, 0);
	g_assert_cmpstr(out, ==, "");
}

static void test_virtio_pty(void)
{
	g_autoptr(GSubprocess) proc = NULL;
	g_autoptr(GError) error = NULL;
	g_autoptr(GByteArray) buf = g_byte_array_new();
	g_autoptr(JsonNode) reply = NULL;
	g_autofree char *line = NULL;
	struct termios tio;
	const char *agent = g_getenv("GB_AGENT");
	const char req[] = "{\"execute\": \"guest-sync\", \"arguments\": {\"id\": 31}}\n";
	const char *slave;
	guint64 before;
	guint64 after;
	GPid pid;
	GPid session;
	int master;

	master = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (master < 0) {
		g_test_skip("no pseudo-terminals here");
		return;
	}
	g_assert_cmpint(grantpt(master), ==, 0);
	g_assert_cmpint(unlockpt(master), ==, 0);
	slave = ptsname(master);
	g_assert_nonnull(slave);
	/* raw before the agent starts, so the request is not echoed or line-edited */
	g_assert_cmpint(tcgetattr(master, &tio), ==, 0);
	cfmakeraw(&tio);
	g_assert_cmpint(tcsetattr(master, TCSANOW, &tio), ==, 0);

	proc = g_subprocess_new(G_SUBPROCESS_FLAGS_NONE, &error, agent, "-m", "virtio-serial", "-p",
	                        slave, NULL);
	g_assert_no_error(error);
	harness_send(master, req, sizeof(req) - 1);
	line = harness_read_line(master, buf, HARNESS_TIMEOUT_MS);
	reply = harness_parse(line);
	g_assert_cmpint(json_node_get_int(harness_get_return(reply)), ==, 31);

	/* the "host" goes away: the agent must neither spin nor exit */
	pid = harness_pid(proc);
	session = harness_session_pid(pid);
	close(master);
	g_usleep(200 * 1000);
	before = harness_proc_cpu_ticks(pid) + harness_proc_cpu_ticks(session);
	g_usleep(G_USEC_PER_SEC);
	after = harness_proc_cpu_ticks(pid) + harness_proc_cpu_ticks(session);
	g_test_message("CPU ticks over 1 s without a host: %" G_GUINT64_FORMAT, after - before);
	g_assert_cmpuint(after - before, <, 5);
	g_assert_nonnull(g_subprocess_get_identifier(proc));

	g_subprocess_send_signal(proc, SIGTERM);
	g_subprocess_wait(proc, NULL, &error);
	g_assert_no_error(error);
	g_assert_true(g_subprocess_get_if_exited(proc));
	g_assert_cmpint(g_subprocess_get_exit_status(proc), ==, 0);
}

static void test_virtio_missing(void)
{
	g_autofree char *out = NULL;
	g_autofree char *err = NULL;
	g_autofree char *out2 = NULL;
	g_autofree char *err2 = NULL;
	const char *const argv[] = { "-m", "virtio-serial", NULL };
	const char *const argv2[] = { "-p", "/nonexistent/vport9p9", NULL };

	if (g_file_test("/dev/virtio-ports/" GB_AGENT_PORT_NAME, G_FILE_TEST_EXISTS)) {
		g_test_skip("this machine has the port");
		return;
	}
	g_assert_cmpint(harness_run_agent(argv, NULL, &out, &err), ==, 1);
	g_assert_nonnull(strstr(err, "port " GB_AGENT_PORT_NAME " not found"));
	g_assert_cmpint(harness_run_agent(argv2, NULL, &out2, &err2), ==, 1);
	g_assert_nonnull(strstr(err2, "/nonexistent/vport9p9"));
}

static void test_find_port(void)
{
	g_autoptr(GError) error = NULL;
	g_autofree char *tmp = g_dir_make_tmp("gb-port-XXXXXX", NULL);
	g_autofree char *devdir = g_build_filename(tmp, "virtio-ports", NULL);
	g_autofree char *sysdir = g_build_filename(tmp, "sys", NULL);
	g_autofree char *p1 = g_build_filename(sysdir, "vport0p1", NULL);
	g_autofree char *p2 = g_build_filename(sysdir, "vport1p3", NULL);
	g_autofree char *p3 = g_build_filename(sysdir, "vport2p1", NULL);
	g_autofree char *n1 = g_build_filename(p1, "name", NULL);
	g_autofree char *n2 = g_build_filename(p2, "name", NULL);
	g_autofree char *link = g_build_filename(devdir, GB_AGENT_PORT_NAME, NULL);
	g_autofree char *found = NULL;
	g_autofree char *found2 = NULL;
	g_autofree char *none = NULL;
	g_autofree char *nodir = NULL;

	g_assert_nonnull(tmp);
	g_assert_cmpint(g_mkdir_with_parents(p1, 0755), ==, 0);
	g_assert_cmpint(g_mkdir_with_parents(p2, 0755), ==, 0);
	/* a port without a name file, one with another name, then ours */
	g_assert_cmpint(g_mkdir_with_parents(p3, 0755), ==, 0);
	g_assert_true(g_file_set_contents(n1, "org.qemu.guest_agent.0\n", -1, NULL));
	g_assert_true(g_file_set_contents(n2, GB_AGENT_PORT_NAME "\n", -1, NULL));
	found = agent_endpoint_find_virtio_port(GB_AGENT_PORT_NAME, devdir, sysdir, &error);
	g_assert_no_error(error);
	g_assert_cmpstr(found, ==, "/dev/vport1p3");

	/* the udev link wins */
	g_assert_cmpint(g_mkdir_with_parents(devdir, 0755), ==, 0);
	g_assert_cmpint(symlink("../vport1p3", link), ==, 0);
	found2 = agent_endpoint_find_virtio_port(GB_AGENT_PORT_NAME, devdir, sysdir, &error);
	g_assert_no_error(error);
	g_assert_cmpstr(found2, ==, link);

	none = agent_endpoint_find_virtio_port("org.example.none", devdir, sysdir, &error);
	g_assert_null(none);
	g_assert_nonnull(error);
	g_assert_nonnull(strstr(error->message, "org.example.none"));
	g_clear_error(&error);
	nodir = agent_endpoint_find_virtio_port("x", "/nonexistent", "/nonexistent", &error);
	g_assert_null(nodir);
	g_assert_nonnull(error);

	unlink(link);
	unlink(n1);
	unlink(n2);
	g_rmdir(devdir);
	g_rmdir(p1);
	g_rmdir(p2);
	g_rmdir(p3);
	g_rmdir(sysdir);
	g_rmdir(tmp);
}

static void test_vsock(void)
{
	g_autoptr(GSubprocess) proc = NULL;
	g_autoptr(GError) error = NULL;
	g_autoptr(GByteArray) buf = g_byte_array_new();
	g_autoptr(JsonNode) reply = NULL;
	g_autofree char *line = NULL;
	g_autofree char *addr = NULL;
	struct sockaddr_vm svm = { .svm_family = AF_VSOCK, .svm_cid = VMADDR_CID_LOCAL };
	const char *agent = g_getenv("GB_AGENT");
	const char req[] = "{\"execute\": \"guest-ping\", \"id\": 1}\n";
	gint64 deadline = g_get_monotonic_time() + HARNESS_TIMEOUT_MS * 1000;
	guint32 port = 20000 + (guint32)g_random_int_range(0, 20000);
	int fd = socket(AF_VSOCK, SOCK_STREAM | SOCK_CLOEXEC, 0);

	/* vsock loopback (CID 1) needs the vsock_loopback module */
	if (fd < 0) {
		g_test_skip("no AF_VSOCK here");
		return;
	}
	close(fd);
	addr = g_strdup_printf("%u:%u", VMADDR_CID_LOCAL, port);
	proc = g_subprocess_new(G_SUBPROCESS_FLAGS_STDERR_SILENCE, &error, agent, "-m",
	                        "vsock-listen", "-p", addr, NULL);
	g_assert_no_error(error);
	svm.svm_port = port;
	for (;;) {
		fd = socket(AF_VSOCK, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (connect(fd, (struct sockaddr *)&svm, sizeof(svm)) == 0)
			break;
		close(fd);
		if (g_subprocess_get_identifier(proc) == NULL ||
		    g_get_monotonic_time() > deadline) {
			g_subprocess_force_exit(proc);
			g_subprocess_wait(proc, NULL, NULL);
			g_test_skip("vsock loopback is not usable here");
			return;
		}
		g_usleep(20 * 1000);
	}
	harness_send(fd, req, sizeof(req) - 1);
	line = harness_read_line(fd, buf, HARNESS_TIMEOUT_MS);
	reply = harness_parse(line);
	harness_get_return(reply);
	close(fd);
	g_subprocess_send_signal(proc, SIGTERM);
	g_subprocess_wait(proc, NULL, NULL);
	g_assert_cmpint(g_subprocess_get_exit_status(proc), ==, 0);
}

/* Good and bad input through stdio under valgrind: no invalid access, no definite leak. */
static void test_valgrind(void)
{
	g_autofree char *valgrind = g_find_program_in_path("valgrind");
	g_autoptr(GSubprocess) proc = NULL;
	g_autoptr(GError) error = NULL;
	g_autoptr(GBytes) input = NULL;
	g_autoptr(GBytes) out = NULL;
	const char data[] =
	    "{\"execute\":\"guest-ping\",\"id\":1}{\"execute\":\"guest-info\"}"
	    "{\"execute\":\"nope\",\"id\":[1]}[1]\"s\" 42 nul "
	    "{\"execute\":\"guest-sync\",\"arguments\":{\"id\":\"x\"}}"
	    "{\"execute\":\"guest-ping\",\"arguments\":{\"z\":1}}"
	    "{\"execute\":\"gb-get-facts\"}{\"execute\":\"guest-ping\",\"x\":1}"
	    "\xff{\"execute\":\"guest-sync-delimited\",\"arguments\":{\"id\":5}}"
	    "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]"
	    "{\"execute\":\"guest-ping\",";

	if (valgrind == NULL) {
		g_test_skip("valgrind is not installed");
		return;
	}
	if (harness_sanitized()) {
		g_test_skip("the agent is built with sanitizers, which valgrind cannot run");
		return;
	}
	proc = g_subprocess_new(G_SUBPROCESS_FLAGS_STDIN_PIPE | G_SUBPROCESS_FLAGS_STDOUT_PIPE,
	                        &error, valgrind, "-q", "--error-exitcode=9", "--leak-check=full",
	                        "--errors-for-leak-kinds=definite", "--trace-children=yes",
	                        g_getenv("GB_AGENT"), "-m", "stdio", "-b", "gb-get-facts", NULL);
	g_assert_no_error(error);
	input = g_bytes_new_static(data, sizeof(data) - 1);
	g_assert_true(g_subprocess_communicate(proc, input, NULL, &out, NULL, &error));
	g_assert_no_error(error);
	g_assert_true(g_subprocess_get_if_exited(proc));
	g_assert_cmpint(g_subprocess_get_exit_status(proc), ==, 0);
	g_assert_cmpuint(g_bytes_get_size(out), >, 0);
}

int main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	if (g_getenv("GB_AGENT") == NULL) {
		g_printerr("GB_AGENT is not set; run through meson test\n");
		return 1;
	}
	g_test_add_func("/agent/ping", test_ping);
	g_test_add_func("/agent/sync", test_sync);
	g_test_add_func("/agent/sync-delimited", test_sync_delimited);
	g_test_add_func("/agent/info", test_info);
	g_test_add_func("/agent/unknown-command", test_unknown_command);
	g_test_add_func("/agent/rpcs/block", test_block_rpcs);
	g_test_add_func("/agent/rpcs/allow", test_allow_rpcs);
	g_test_add_func("/agent/rpcs/block-glob", test_block_glob);
	g_test_add_func("/agent/request-shapes", test_request_shapes);
	g_test_add_func("/agent/framing/pipelined", test_pipelined);
	g_test_add_func("/agent/framing/byte-at-a-time", test_byte_at_a_time);
	g_test_add_func("/agent/framing/oversize", test_oversize);
	g_test_add_func("/agent/framing/overdepth", test_overdepth);
	g_test_add_func("/agent/framing/resync", test_resync);
	g_test_add_func("/agent/clients/reconnect", test_reconnect);
	g_test_add_func("/agent/clients/slow-reader", test_slow_reader);
	g_test_add_func("/agent/lifecycle/sigterm", test_sigterm);
	g_test_add_func("/agent/lifecycle/stale-socket", test_stale_socket);
	g_test_add_func("/agent/lifecycle/socket-in-use", test_socket_in_use);
	g_test_add_func("/agent/config/errors", test_config_errors);
	g_test_add_func("/agent/config/missing", test_config_missing);
	g_test_add_func("/agent/config/applied", test_config_applied);
	g_test_add_func("/agent/config/example", test_config_example);
	g_test_add_func("/agent/cli/errors", test_cli_errors);
	g_test_add_func("/agent/cli/version-help", test_version_help);
	g_test_add_func("/agent/oneshot", test_oneshot);
	g_test_add_func("/agent/stdio", test_stdio);
	g_test_add_func("/agent/stdio-empty", test_stdio_empty);
	g_test_add_func("/agent/virtio/pty", test_virtio_pty);
	g_test_add_func("/agent/virtio/missing", test_virtio_missing);
	g_test_add_func("/agent/virtio/find-port", test_find_port);
	g_test_add_func("/agent/vsock", test_vsock);
	g_test_add_func("/agent/valgrind", test_valgrind);
	return g_test_run();
}
