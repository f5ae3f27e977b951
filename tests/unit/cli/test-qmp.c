/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The QMP client and the host view collector against a scripted monitor: a
 * thread that plays recorded real QEMU replies (tests/data/qmp/) or hostile
 * ones, over a real unix socket. libvirt:DOMAIN (virDomainQemuMonitorCommand) is
 * covered by the libvirt lab (tests/e2e/libvirt_hostview.py) against a real libvirtd.
 */
#include <errno.h>
#include <glib/gstdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "guestbench-protocol.h"
#include "fleet/host-files.h"
#include "fleet/hostview.h"
#include "transport/qmp.h"
#include "transport/virt.h"

typedef struct _Server Server;
typedef void (*ServerScript)(Server *srv, int fd);

struct _Server {
	char *dir;
	char *path;
	int listen_fd;
	GThread *thread;
	ServerScript script;
	const char *fixture; /* tests/data/qmp/NAME for the replay script */
	guint n_events;      /* events the replay script sends before each reply */
};

static char *data_path(const char *first, ...) G_GNUC_NULL_TERMINATED;

static char *data_path(const char *first, ...)
{
	va_list args;
	g_autoptr(GPtrArray) parts = g_ptr_array_new();
	const char *part;

	g_ptr_array_add(parts, (gpointer)g_getenv("GB_TEST_DATA"));
	g_ptr_array_add(parts, (gpointer) "qmp");
	va_start(args, first);
	for (part = first; part != NULL; part = va_arg(args, const char *))
		g_ptr_array_add(parts, (gpointer)part);
	va_end(args);
	g_ptr_array_add(parts, NULL);
	return g_build_filenamev((char **)parts->pdata);
}

static void srv_send(int fd, const char *text)
{
	gsize done = 0;

	while (done < strlen(text)) {
		gssize n = send(fd, text + done, strlen(text) - done, MSG_NOSIGNAL);
		if (n <= 0)
			return; /* the client hung up: the test checks what it saw */
		done += n;
	}
}

/* One request line; NULL on EOF. */
static char *srv_read_line(int fd)
{
	GString *line = g_string_new(NULL);
	char c;

	while (read(fd, &c, 1) == 1) {
		if (c == '\n')
			return g_string_free(line, FALSE);
		g_string_append_c(line, c);
	}
	g_string_free(line, TRUE);
	return NULL;
}

/* execute and id of a request line (owned), or FALSE on EOF. */
static gboolean srv_read_request(int fd, char **execute, gint64 *id, JsonNode **args_out)
{
	g_autofree char *line = srv_read_line(fd);
	g_autoptr(GbRequest) req = NULL;
	g_autoptr(GError) error = NULL;

	if (line == NULL)
		return FALSE;
	req = gb_request_parse(line, strlen(line), NULL, &error);
	g_assert_no_error(error);
	*execute = g_strdup(req->execute);
	g_assert_nonnull(req->id);
	g_assert_true(gb_json_node_get_int(req->id, "id", 0, G_MAXINT64, id, NULL));
	if (args_out != NULL)
		*args_out = req->arguments != NULL
		                ? json_node_init_object(json_node_alloc(), req->arguments)
		                : NULL;
	return TRUE;
}

/* A recorded reply with its id replaced by id. */
static char *srv_fixture_reply(Server *srv, const char *name, gint64 id)
{
	g_autofree char *file = g_strdup_printf("%s.json", name);
	g_autofree char *path = data_path(srv->fixture, file, NULL);
	g_autofree char *text = NULL;
	g_autoptr(GError) error = NULL;
	g_autoptr(JsonNode) node = NULL;
	g_autofree char *out = NULL;

	g_assert_true(g_file_get_contents(path, &text, NULL, &error));
	node = gb_json_parse(text, strlen(text), &error);
	g_assert_no_error(error);
	json_object_set_int_member(json_node_get_object(node), "id", id);
	out = gb_json_to_string(node, NULL);
	return g_strdup_printf("%s\n", out);
}

static void srv_send_events(Server *srv, int fd)
{
	for (guint i = 0; i < srv->n_events; i++) {
		srv_send(fd, "{\"timestamp\": {\"seconds\": 1700000000, \"microseconds\": 1}, "
		             "\"event\": \"RTC_CHANGE\", \"data\": {\"offset\": 0}}\n");
	}
}

/* Plays the recorded session of srv->fixture, whatever the client asks, in its order. */
static void script_replay(Server *srv, int fd)
{
	g_autofree char *greeting = srv_fixture_reply(srv, "greeting", 0);
	char *execute = NULL;
	gint64 id = 0;
	JsonNode *args = NULL;

	/* the greeting has no id: strip the one srv_fixture_reply() added */
	g_free(greeting);
	{
		g_autofree char *path = data_path(srv->fixture, "greeting.json", NULL);
		g_assert_true(g_file_get_contents(path, &greeting, NULL, NULL));
	}
	srv_send(fd, greeting);
	while (srv_read_request(fd, &execute, &id, &args)) {
		g_autofree char *name = NULL;
		g_autofree char *reply = NULL;

		if (g_strcmp0(execute, "qom-get") == 0) {
			JsonObject *obj = json_node_get_object(args);
			const char *path = json_object_get_string_member(obj, "path");
			const char *prop = json_object_get_string_member(obj, "property");
			name = g_strdup_printf("qom-get-%s-%s", path + strlen("/objects/"), prop);
		} else if (g_strcmp0(execute, "query-cpu-model-expansion") == 0) {
			name = g_strdup("query-cpu-model-expansion-max");
		} else {
			name = g_strdup(execute);
		}
		if (g_strcmp0(execute, "qmp_capabilities") != 0)
			srv_send_events(srv, fd);
		reply = srv_fixture_reply(srv, name, id);
		srv_send(fd, reply);
		g_free(execute);
		if (args != NULL)
			json_node_unref(args);
		args = NULL;
	}
}

static gpointer server_thread(gpointer user_data)
{
	Server *srv = user_data;
	int fd = accept(srv->listen_fd, NULL, NULL);

	if (fd < 0)
		return NULL;
	srv->script(srv, fd);
	close(fd);
	return NULL;
}

static Server *server_new(ServerScript script)
{
	Server *srv = g_new0(Server, 1);
	struct sockaddr_un addr = { .sun_family = AF_UNIX };
	g_autoptr(GError) error = NULL;

	srv->dir = g_dir_make_tmp("gb-qmp-XXXXXX", &error);
	g_assert_no_error(error);
	srv->path = g_build_filename(srv->dir, "qmp.sock", NULL);
	srv->script = script;
	srv->fixture = "tcg-4drives";
	srv->listen_fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	g_assert_cmpint(srv->listen_fd, >=, 0);
	g_strlcpy(addr.sun_path, srv->path, sizeof(addr.sun_path));
	g_assert_cmpint(bind(srv->listen_fd, (struct sockaddr *)&addr, sizeof(addr)), ==, 0);
	g_assert_cmpint(listen(srv->listen_fd, 4), ==, 0);
	return srv;
}

static void server_start(Server *srv)
{
	srv->thread = g_thread_new("qmp-server", server_thread, srv);
}

static void server_free(Server *srv)
{
	/* wakes an accept() that never got a client */
	shutdown(srv->listen_fd, SHUT_RDWR);
	if (srv->thread != NULL)
		g_thread_join(srv->thread);
	close(srv->listen_fd);
	g_unlink(srv->path);
	g_rmdir(srv->dir);
	g_free(srv->path);
	g_free(srv->dir);
	g_free(srv);
}

G_DEFINE_AUTOPTR_CLEANUP_FUNC(Server, server_free)

/* ---- the client ---------------------------------------------------------------------- */

typedef struct {
	gboolean opened;
	GError *open_error;
	guint n_replies;
	GPtrArray *rets;   /* JsonNode */
	GPtrArray *errors; /* GError */
	gboolean close_in_callback;
	CliQmp *qmp;
} Client;

static void client_init(Client *c)
{
	memset(c, 0, sizeof(*c));
	c->rets = g_ptr_array_new_with_free_func((GDestroyNotify)json_node_unref);
	c->errors = g_ptr_array_new_with_free_func((GDestroyNotify)g_error_free);
}

static void client_clear(Client *c)
{
	g_clear_error(&c->open_error);
	g_ptr_array_unref(c->rets);
	g_ptr_array_unref(c->errors);
}

static void open_cb(CliQmp *qmp, const GError *error, gpointer user_data)
{
	Client *c = user_data;

	c->opened = TRUE;
	if (error != NULL)
		c->open_error = g_error_copy(error);
}

static void reply_cb(CliQmp *qmp, JsonNode *ret, const GError *error, gpointer user_data)
{
	Client *c = user_data;

	c->n_replies++;
	if (ret != NULL)
		g_ptr_array_add(c->rets, json_node_copy(ret));
	else
		g_ptr_array_add(c->errors, g_error_copy(error));
	if (c->close_in_callback && c->qmp != NULL) {
		cli_qmp_close(c->qmp);
		c->qmp = NULL;
	}
}

static void iterate_until(GMainContext *ctx, gboolean *flag, guint *counter, guint want)
{
	gint64 end = g_get_monotonic_time() + 40 * G_USEC_PER_SEC;

	while ((flag != NULL ? !*flag : *counter < want) && g_get_monotonic_time() < end)
		g_main_context_iteration(ctx, TRUE);
	if (flag != NULL)
		g_assert_true(*flag);
	else
		g_assert_cmpuint(*counter, ==, want);
}

static void test_qmp_replay(void)
{
	g_autoptr(Server) srv = server_new(script_replay);
	g_autoptr(GMainContext) ctx = g_main_context_new();
	Client c;
	CliQmp *qmp;
	JsonObject *kvm = NULL;
	gboolean enabled = TRUE;

	srv->n_events = 3;
	server_start(srv);
	client_init(&c);
	qmp = cli_qmp_open(srv->path, ctx, 5, open_cb, &c);
	/* calls queued before the greeting wait for capabilities */
	cli_qmp_call(qmp, "query-kvm", NULL, reply_cb, &c);
	cli_qmp_call(qmp, "no-such-command", NULL, reply_cb, &c);
	cli_qmp_call(qmp, "query-block", NULL, reply_cb, &c);
	iterate_until(ctx, NULL, &c.n_replies, 3);
	g_assert_true(c.opened);
	g_assert_no_error(c.open_error);
	g_assert_cmpstr(cli_qmp_get_version(qmp), ==, "7.2.22");
	g_assert_cmpint(cli_qmp_get_pid(qmp), ==, getpid());
	/* 3 events before each of the 3 replies, all skipped */
	g_assert_cmpuint(cli_qmp_get_n_events(qmp), ==, 9);
	g_assert_cmpuint(c.rets->len, ==, 2);
	g_assert_cmpuint(c.errors->len, ==, 1);
	/* an error reply fails that call only, and says what QEMU said */
	g_assert_error((GError *)g_ptr_array_index(c.errors, 0), GB_ERROR,
	               GB_ERROR_COMMAND_NOT_FOUND);
	g_assert_nonnull(
	    strstr(((GError *)g_ptr_array_index(c.errors, 0))->message, "has not been found"));
	g_assert_true(gb_json_node_get_object(g_ptr_array_index(c.rets, 0), "ret", &kvm, NULL));
	g_assert_true(gb_json_get_bool(kvm, "enabled", GB_JSON_REQUIRED, &enabled, NULL));
	g_assert_false(enabled);
	g_assert_true(JSON_NODE_HOLDS_ARRAY((JsonNode *)g_ptr_array_index(c.rets, 1)));
	cli_qmp_close(qmp);
	client_clear(&c);
}

/* hostile monitors: each script and the error the client must end with */

static void script_silent(Server *srv, int fd)
{
	g_autofree char *line = srv_read_line(fd); /* until the client gives up */
}

static void script_garbage_greeting(Server *srv, int fd)
{
	srv_send(fd, "HTTP/1.1 400 Bad Request\r\n\r\n");
	g_free(srv_read_line(fd));
}

static void script_not_qmp_greeting(Server *srv, int fd)
{
	srv_send(fd, "{\"return\": {}}\n");
	g_free(srv_read_line(fd));
}

static void srv_greet(int fd)
{
	char *execute = NULL;
	gint64 id = 0;
	g_autofree char *reply = NULL;

	srv_send(fd, "{\"QMP\": {\"version\": {\"qemu\": {\"micro\": 0, \"minor\": 2, "
	             "\"major\": 7}, \"package\": \"\"}, \"capabilities\": [\"oob\"]}}\n");
	g_assert_true(srv_read_request(fd, &execute, &id, NULL));
	g_assert_cmpstr(execute, ==, "qmp_capabilities");
	g_free(execute);
	reply = g_strdup_printf("{\"return\": {}, \"id\": %" G_GINT64_FORMAT "}\n", id);
	srv_send(fd, reply);
}

static void script_caps_refused(Server *srv, int fd)
{
	char *execute = NULL;
	gint64 id = 0;
	g_autofree char *reply = NULL;

	srv_send(fd, "{\"QMP\": {\"version\": {}, \"capabilities\": []}}\n");
	g_assert_true(srv_read_request(fd, &execute, &id, NULL));
	g_free(execute);
	reply =
	    g_strdup_printf("{\"error\": {\"class\": \"GenericError\", \"desc\": \"Capabilities "
	                    "negotiation is already complete\"}, \"id\": %" G_GINT64_FORMAT "}\n",
	                    id);
	srv_send(fd, reply);
	g_free(srv_read_line(fd));
}

static void script_garbage_reply(Server *srv, int fd)
{
	char *execute = NULL;
	gint64 id = 0;

	srv_greet(fd);
	g_assert_true(srv_read_request(fd, &execute, &id, NULL));
	g_free(execute);
	srv_send(fd, "{\"return\": [1, 2,\x01 garbage\n");
	g_free(srv_read_line(fd));
}

static void script_closes(Server *srv, int fd)
{
	char *execute = NULL;
	gint64 id = 0;

	srv_greet(fd);
	g_assert_true(srv_read_request(fd, &execute, &id, NULL));
	g_free(execute);
	srv_send(fd, "{\"return\": [");
	/* and hangs up halfway through the reply */
}

static void script_no_reply(Server *srv, int fd)
{
	srv_greet(fd);
	/* reads the call, then the client's hang-up */
	g_free(srv_read_line(fd));
	g_free(srv_read_line(fd));
}

static void script_wrong_id(Server *srv, int fd)
{
	char *execute = NULL;
	gint64 id = 0;
	g_autofree char *reply = NULL;

	srv_greet(fd);
	g_assert_true(srv_read_request(fd, &execute, &id, NULL));
	g_free(execute);
	reply = g_strdup_printf("{\"return\": {}, \"id\": %" G_GINT64_FORMAT "}\n", id + 100);
	srv_send(fd, reply);
	g_free(srv_read_line(fd));
}

static void script_event_flood(Server *srv, int fd)
{
	char *execute = NULL;
	gint64 id = 0;
	g_autofree char *reply = NULL;

	srv_greet(fd);
	g_assert_true(srv_read_request(fd, &execute, &id, NULL));
	g_free(execute);
	srv->n_events = 5000;
	srv_send_events(srv, fd);
	reply = g_strdup_printf("{\"return\": {\"running\": false, \"status\": \"prelaunch\"}, "
	                        "\"id\": %" G_GINT64_FORMAT "}\n",
	                        id);
	srv_send(fd, reply);
	g_free(srv_read_line(fd));
}

static void script_huge(Server *srv, int fd)
{
	char *execute = NULL;
	gint64 id = 0;
	g_autofree char *big = g_strnfill(CLI_QMP_MAX_MESSAGE + 10, 'a');

	srv_greet(fd);
	g_assert_true(srv_read_request(fd, &execute, &id, NULL));
	g_free(execute);
	srv_send(fd, "{\"return\": \"");
	srv_send(fd, big);
	srv_send(fd, "\"}\n");
	g_free(srv_read_line(fd));
}

typedef struct {
	const char *name;
	ServerScript script;
	gboolean fails_open;
	gint code;
	const char *message; /* a part of the error message */
} HostileCase;

static const HostileCase hostile_cases[] = {
	{ "no-greeting", script_silent, TRUE, GB_ERROR_TIMEOUT, "no QMP greeting within" },
	{ "garbage-greeting", script_garbage_greeting, TRUE, GB_ERROR_PARSE, "not a QMP message" },
	{ "not-a-greeting", script_not_qmp_greeting, TRUE, GB_ERROR_INVALID_REQUEST,
	  "expected the QMP greeting" },
	{ "capabilities-refused", script_caps_refused, TRUE, GB_ERROR_INVALID_REQUEST,
	  "qmp_capabilities failed" },
	{ "garbage-reply", script_garbage_reply, FALSE, GB_ERROR_PARSE,
	  "garbage while waiting for query-status" },
	{ "closes", script_closes, FALSE, GB_ERROR_CLOSED, "closed the connection" },
	{ "no-reply", script_no_reply, FALSE, GB_ERROR_TIMEOUT, "no reply to query-status" },
	{ "wrong-id", script_wrong_id, FALSE, GB_ERROR_INVALID_REQUEST, "nobody asked for" },
	{ "huge", script_huge, FALSE, GB_ERROR_TOO_LARGE, "" },
};

static void test_qmp_hostile(gconstpointer data)
{
	const HostileCase *hc = data;
	g_autoptr(Server) srv = server_new(hc->script);
	g_autoptr(GMainContext) ctx = g_main_context_new();
	Client c;
	CliQmp *qmp;
	GError *error;

	server_start(srv);
	client_init(&c);
	qmp = cli_qmp_open(srv->path, ctx, 0.5, open_cb, &c);
	cli_qmp_call(qmp, "query-status", NULL, reply_cb, &c);
	iterate_until(ctx, NULL, &c.n_replies, 1);
	g_assert_true(c.opened);
	if (hc->fails_open) {
		g_assert_nonnull(c.open_error);
		g_assert_error(c.open_error, GB_ERROR, hc->code);
		g_assert_nonnull(strstr(c.open_error->message, hc->message));
	} else {
		g_assert_no_error(c.open_error);
	}
	/* the pending call hears the same error */
	g_assert_cmpuint(c.errors->len, ==, 1);
	error = g_ptr_array_index(c.errors, 0);
	g_assert_error(error, GB_ERROR, hc->code);
	g_assert_nonnull(strstr(error->message, hc->message));
	g_assert_true(g_str_has_prefix(error->message, "QMP "));
	/* a call after the failure fails too, from the main loop */
	cli_qmp_call(qmp, "query-kvm", NULL, reply_cb, &c);
	g_assert_cmpuint(c.n_replies, ==, 1);
	iterate_until(ctx, NULL, &c.n_replies, 2);
	cli_qmp_close(qmp);
	client_clear(&c);
}

static void test_qmp_event_flood(void)
{
	g_autoptr(Server) srv = server_new(script_event_flood);
	g_autoptr(GMainContext) ctx = g_main_context_new();
	Client c;
	CliQmp *qmp;

	server_start(srv);
	client_init(&c);
	/* events do not extend the wait: leave room for a slow run (valgrind) */
	qmp = cli_qmp_open(srv->path, ctx, 20, open_cb, &c);
	cli_qmp_call(qmp, "query-status", NULL, reply_cb, &c);
	iterate_until(ctx, NULL, &c.n_replies, 1);
	g_assert_cmpuint(c.rets->len, ==, 1);
	g_assert_cmpuint(cli_qmp_get_n_events(qmp), ==, 5000);
	cli_qmp_close(qmp);
	client_clear(&c);
}

/* Not a greeting: a JSON object whose string holds 100 RIGHT-TO-LEFT OVERRIDEs (U+202E). */
static void script_bidi_greeting(Server *srv, int fd)
{
	srv_send(fd, "{\"x\": \"");
	for (guint i = 0; i < 100; i++)
		srv_send(fd, "\xe2\x80\xae");
	srv_send(fd, "\"}\n");
	g_free(srv_read_line(fd));
}

/*
 * The excerpt of what the monitor sent is raw (valid UTF-8), cut at 60
 * characters of that text, not of its escaped form (where each override
 * takes 6): escaping is for whoever shows the message.
 */
static void test_qmp_excerpt_raw(void)
{
	g_autoptr(Server) srv = server_new(script_bidi_greeting);
	g_autoptr(GMainContext) ctx = g_main_context_new();
	g_autoptr(GString) want = g_string_new("{\"x\": \"");
	Client c;
	CliQmp *qmp;
	const char *excerpt;

	server_start(srv);
	client_init(&c);
	qmp = cli_qmp_open(srv->path, ctx, 5, open_cb, &c);
	iterate_until(ctx, &c.opened, NULL, 0);
	g_assert_error(c.open_error, GB_ERROR, GB_ERROR_INVALID_REQUEST);
	g_assert_true(g_utf8_validate(c.open_error->message, -1, NULL));
	excerpt = strstr(c.open_error->message, "expected the QMP greeting, got ");
	g_assert_nonnull(excerpt);
	excerpt += strlen("expected the QMP greeting, got ");
	while (g_utf8_strlen(want->str, -1) < 60)
		g_string_append(want, "\xe2\x80\xae");
	g_string_append(want, "…");
	g_assert_cmpstr(excerpt, ==, want->str);
	cli_qmp_close(qmp);
	client_clear(&c);
}

static void test_qmp_no_socket(void)
{
	g_autoptr(GMainContext) ctx = g_main_context_new();
	Client c;
	CliQmp *qmp;

	client_init(&c);
	qmp = cli_qmp_open("unix:/nonexistent/gb-qmp.sock", ctx, 1, open_cb, &c);
	/* never from inside open */
	g_assert_false(c.opened);
	iterate_until(ctx, &c.opened, NULL, 0);
	g_assert_error(c.open_error, GB_ERROR, GB_ERROR_IO);
	g_assert_nonnull(strstr(c.open_error->message, "/nonexistent/gb-qmp.sock"));
	cli_qmp_close(qmp);
	client_clear(&c);

	client_init(&c);
	qmp = cli_qmp_open("", ctx, 1, open_cb, &c);
	iterate_until(ctx, &c.opened, NULL, 0);
	g_assert_error(c.open_error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT);
	cli_qmp_close(qmp);
	client_clear(&c);
}

static void test_qmp_close_in_callback(void)
{
	g_autoptr(Server) srv = server_new(script_replay);
	g_autoptr(GMainContext) ctx = g_main_context_new();
	Client c;

	server_start(srv);
	client_init(&c);
	c.close_in_callback = TRUE;
	c.qmp = cli_qmp_open(srv->path, ctx, 5, open_cb, &c);
	cli_qmp_call(c.qmp, "query-kvm", NULL, reply_cb, &c);
	cli_qmp_call(c.qmp, "query-block", NULL, reply_cb, &c);
	iterate_until(ctx, NULL, &c.n_replies, 1);
	/* the second call is dropped silently with the client */
	for (guint i = 0; i < 20; i++)
		g_main_context_iteration(ctx, FALSE);
	g_assert_cmpuint(c.n_replies, ==, 1);
	g_assert_null(c.qmp);
	client_clear(&c);
}

/* ---- the collector --------------------------------------------------------------------- */

typedef struct {
	gboolean done;
	JsonNode *view;
	GError *error;
} Collected;

static void collected_cb(JsonNode *view, const GError *error, gpointer user_data)
{
	Collected *col = user_data;

	col->done = TRUE;
	if (view != NULL)
		col->view = json_node_copy(view);
	if (error != NULL)
		col->error = g_error_copy(error);
}

static JsonObject *find_by(JsonObject *view, const char *array, const char *key, const char *val)
{
	JsonArray *arr = NULL;

	g_assert_true(gb_json_get_array(view, array, GB_JSON_REQUIRED, &arr, NULL));
	for (guint i = 0; i < json_array_get_length(arr); i++) {
		JsonObject *obj = NULL;
		const char *s = NULL;
		g_assert_true(
		    gb_json_node_get_object(json_array_get_element(arr, i), array, &obj, NULL));
		if (gb_json_get_string(obj, key, GB_JSON_REQUIRED, &s, NULL) &&
		    g_strcmp0(s, val) == 0)
			return obj;
	}
	return NULL;
}

static void assert_member_string(JsonObject *obj, const char *member, const char *want)
{
	const char *got = NULL;

	g_assert_nonnull(obj);
	g_assert_true(gb_json_get_string(obj, member, GB_JSON_REQUIRED, &got, NULL));
	g_assert_cmpstr(got, ==, want);
}

static void test_hostview_job_replay(void)
{
	g_autoptr(Server) srv = server_new(script_replay);
	g_autoptr(GMainContext) ctx = g_main_context_new();
	g_autofree char *sysroot = data_path("hosts", "numa-split", NULL);
	Collected col = { 0 };
	CliHostviewJob *job;
	JsonObject *view;
	JsonObject *offer = NULL;
	g_auto(GStrv) flags = NULL;
	g_auto(GStrv) errors = NULL;
	const char *accel = NULL;

	srv->n_events = 2;
	server_start(srv);
	job = cli_hostview_job_new(srv->path, sysroot, ctx, 5, collected_cb, &col);
	iterate_until(ctx, &col.done, NULL, 0);
	g_assert_no_error(col.error);
	view = json_node_get_object(col.view);
	g_assert_true(gb_json_get_string(view, "accel", GB_JSON_REQUIRED, &accel, NULL));
	g_assert_cmpstr(accel, ==, "tcg");
	assert_member_string(view, "qemu_version", "7.2.22");
	/* the four cache modes of the recording, told apart */
	assert_member_string(find_by(view, "block", "device", "d0"), "cache", "none");
	assert_member_string(find_by(view, "block", "device", "d1"), "cache", "writeback");
	assert_member_string(find_by(view, "block", "device", "d2"), "cache", "unsafe");
	assert_member_string(find_by(view, "block", "device", "d3"), "cache", "directsync");
	/* qom-get told the backends apart */
	assert_member_string(find_by(view, "memdevs", "id", "m0"), "backend", "memory-backend-ram");
	assert_member_string(find_by(view, "memdevs", "id", "m1"), "backend",
	                     "memory-backend-file");
	assert_member_string(find_by(view, "memdevs", "id", "m1"), "mem_path",
	                     "/var/lib/guestbench-rec");
	/* TCG: the max model's offer */
	g_assert_true(gb_json_get_object(view, "cpu_offer", GB_JSON_REQUIRED, &offer, NULL));
	assert_member_string(offer, "model", "max");
	g_assert_true(gb_json_get_strv(offer, "flags", GB_JSON_REQUIRED, &flags, NULL));
	g_assert_true(g_strv_contains((const char *const *)flags, "aes"));
	/* our own pid has no vCPU threads in the crafted tree: said, not hidden */
	g_assert_true(gb_json_get_strv(view, "errors", GB_JSON_REQUIRED, &errors, NULL));
	g_assert_cmpuint(g_strv_length(errors), >, 0);
	cli_hostview_job_free(job);
	json_node_unref(col.view);
}

static void test_hostview_job_unreachable(void)
{
	g_autoptr(GMainContext) ctx = g_main_context_new();
	Collected col = { 0 };
	CliHostviewJob *job;

	job = cli_hostview_job_new("/nonexistent/qmp.sock", "/", ctx, 1, collected_cb, &col);
	iterate_until(ctx, &col.done, NULL, 0);
	g_assert_error(col.error, GB_ERROR, GB_ERROR_IO);
	g_assert_null(col.view);
	cli_hostview_job_free(job);
	g_error_free(col.error);

	/* freed before it finishes: no callback, nothing left behind */
	memset(&col, 0, sizeof(col));
	job = cli_hostview_job_new("/nonexistent/qmp.sock", "/", ctx, 1, collected_cb, &col);
	cli_hostview_job_free(job);
	for (guint i = 0; i < 10; i++)
		g_main_context_iteration(ctx, FALSE);
	g_assert_false(col.done);
}

/* ---- libvirt:DOMAIN ------------------------------------------------------------------ */

/*
 * libvirt:DOMAIN goes through libvirt's client library, never virsh nor
 * libvirtd's files: a real libvirtd is needed for more, which the e2e lab has
 * (tests/e2e/libvirt_hostview.py). Here only what needs no libvirtd.
 */
static void test_hostview_libvirt_bad(void)
{
	g_autoptr(GMainContext) ctx = g_main_context_new();
	Collected col = { 0 };
	CliHostviewJob *job;

	job = cli_hostview_job_new_full("libvirt:", "test:///default", "/", ctx, 1, collected_cb,
	                                &col);
	iterate_until(ctx, &col.done, NULL, 0);
	g_assert_error(col.error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT);
	g_assert_nonnull(strstr(col.error->message, "no domain name"));
	cli_hostview_job_free(job);
	g_clear_error(&col.error);

	if (cli_virt_is_built())
		return;
	memset(&col, 0, sizeof(col));
	job = cli_hostview_job_new_full("libvirt:vm1", NULL, "/", ctx, 1, collected_cb, &col);
	iterate_until(ctx, &col.done, NULL, 0);
	g_assert_error(col.error, GB_ERROR, GB_ERROR_NOT_SUPPORTED);
	cli_hostview_job_free(job);
	g_clear_error(&col.error);
}

int main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	g_test_add_func("/qmp/replay", test_qmp_replay);
	g_test_add_func("/qmp/event-flood", test_qmp_event_flood);
	g_test_add_func("/qmp/no-socket", test_qmp_no_socket);
	g_test_add_func("/qmp/excerpt-raw", test_qmp_excerpt_raw);
	g_test_add_func("/qmp/close-in-callback", test_qmp_close_in_callback);
	for (guint i = 0; i < G_N_ELEMENTS(hostile_cases); i++) {
		g_autofree char *name = g_strdup_printf("/qmp/hostile/%s", hostile_cases[i].name);
		g_test_add_data_func(name, &hostile_cases[i], test_qmp_hostile);
	}
	g_test_add_func("/hostview/job-replay", test_hostview_job_replay);
	g_test_add_func("/hostview/job-unreachable", test_hostview_job_unreachable);
	g_test_add_func("/hostview/libvirt-bad", test_hostview_libvirt_bad);
	return g_test_run();
}
