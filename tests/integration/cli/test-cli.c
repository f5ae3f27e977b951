/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"

#include <errno.h>
#include <gio/gio.h>
#include <glib/gstdio.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "guestbench-protocol.h"

/*
 * Three real peers and a row of misbehaving fake guests, all on unix sockets
 * in one temporary directory, driven through the real guestbench binary.
 */

#define N_PEERS 3

typedef enum {
	FAKE_SILENT,       /* accepts, never answers */
	FAKE_GARBAGE,      /* answers bytes that are not JSON, then nothing */
	FAKE_CLOSE,        /* closes right after accept */
	FAKE_STALE,        /* stale replies, errors and a half message before the sync reply */
	FAKE_REMOTE_ERROR, /* syncs, then answers every call with an error */
	FAKE_WRONG_ID,     /* syncs, then answers calls with someone else's id */
	FAKE_HUGE,         /* syncs, then answers with a reply over the CLI's 16 MiB cap */
	FAKE_LAST,
} FakeMode;

static const char *const fake_names[] = { "silent",       "garbage",  "close", "stale",
	                                  "remote-error", "wrong-id", "huge" };

typedef struct {
	FakeMode mode;
	char *path;
	int lfd;
	gint accepted;
	GThread *thread;
} FakeGuest;

typedef struct {
	char *path;
	GSubprocess *proc;
} Peer;

static char *tmpdir;
static Peer peers[N_PEERS];
static FakeGuest fakes[FAKE_LAST];
static const char *peer_kind = "guestbench-agent";

/* ---- fake guests ------------------------------------------------------------------- */

static void write_all(int fd, const void *data, gsize len)
{
	const guint8 *p = data;

	while (len > 0) {
		gssize n = send(fd, p, len, MSG_NOSIGNAL);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return; /* the CLI went away: fine for a fake */
		p += n;
		len -= n;
	}
}

typedef struct {
	FakeGuest *fake;
	int fd;
} FakeConn;

static gboolean fake_message_cb(const char *msg, gsize len, const GError *error, gpointer user_data)
{
	FakeConn *conn = user_data;
	g_autoptr(GbRequest) req = NULL;
	g_autoptr(GError) error_local = NULL;
	g_autoptr(GString) reply = NULL;

	if (error != NULL)
		return TRUE; /* the leading 0xFF of a sync: nothing to answer */
	req = gb_request_parse(msg, len, NULL, &error_local);
	if (req == NULL)
		return TRUE;
	if (g_strcmp0(req->execute, "guest-sync-delimited") == 0) {
		JsonNode *id = json_object_get_member(req->arguments, "id");
		if (conn->fake->mode == FAKE_STALE) {
			/* an earlier client's leftovers: none of it may be taken for our reply */
			const char stale[] = "{\"return\": 12345}\n"
			                     "{\"return\": {}, \"id\": 1}\n"
			                     "{\"error\": {\"class\": \"GenericError\", \"desc\": "
			                     "\"JSON parse error, stale\"}}\n"
			                     "[1, 2, 3]\n"
			                     "{\"return\": \"half a message";
			write_all(conn->fd, stale, sizeof(stale) - 1);
		}
		reply = gb_reply_return_delimited(id, NULL);
		write_all(conn->fd, reply->str, reply->len);
		return TRUE;
	}
	if (conn->fake->mode == FAKE_REMOTE_ERROR && g_strcmp0(req->execute, "guest-info") == 0) {
		/* valid, but with terminal escapes where the table prints them */
		const char *info =
		    "{\"version\": \"6.6.6\\u001b[2J\\nfake row\", "
		    "\"supported_commands\": [{\"name\": \"guest-ping\\u001b]0;x\\u0007\", "
		    "\"enabled\": true, \"success-response\": true}]}";
		g_autoptr(JsonNode) value = gb_json_parse(info, strlen(info), NULL);
		reply = gb_reply_return(value, req->id);
	} else if (conn->fake->mode == FAKE_REMOTE_ERROR) {
		error_local =
		    g_error_new(GB_ERROR, GB_ERROR_FAILED,
		                "Command %s has been disabled \033[31mby policy", req->execute);
		reply = gb_reply_error(error_local, req->id);
	} else if (conn->fake->mode == FAKE_HUGE) {
		gsize size = 17 * 1024 * 1024;
		g_autofree char *big = g_malloc(size);
		memset(big, 'A', size);
		reply = g_string_new("{\"return\": \"");
		g_string_append_len(reply, big, size);
		g_string_append(reply, "\"}\n");
	} else if (conn->fake->mode == FAKE_WRONG_ID) {
		g_autoptr(JsonNode) other = json_node_init_int(json_node_alloc(), 7);
		reply = gb_reply_return(NULL, other);
	} else {
		reply = gb_reply_return(NULL, req->id);
	}
	write_all(conn->fd, reply->str, reply->len);
	return TRUE;
}

static void fake_serve(FakeGuest *fake, int fd)
{
	g_autoptr(GbFramer) framer = gb_framer_new(GB_FRAMER_DEFAULT_MAX_SIZE, 64);
	FakeConn conn = { fake, fd };
	gboolean answered = FALSE;
	guint8 buf[4096];

	if (fake->mode == FAKE_CLOSE)
		return;
	for (;;) {
		gssize n = recv(fd, buf, sizeof(buf), 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return;
		if (fake->mode == FAKE_SILENT)
			continue;
		if (fake->mode == FAKE_GARBAGE) {
			const char garbage[] =
			    "this is not json\n\x01\x02 }}}] \xc3\x28 \"\xc3\" {\"x\": [1, 2,\n";
			if (!answered)
				write_all(fd, garbage, sizeof(garbage) - 1);
			answered = TRUE;
			continue;
		}
		gb_framer_push(framer, buf, n, fake_message_cb, &conn);
	}
}

static gpointer fake_thread(gpointer user_data)
{
	FakeGuest *fake = user_data;

	for (;;) {
		int fd = accept(fake->lfd, NULL, NULL);
		if (fd < 0) {
			if (errno == EINTR)
				continue;
			return NULL;
		}
		g_atomic_int_inc(&fake->accepted);
		fake_serve(fake, fd);
		close(fd);
	}
}

static void fake_start(FakeGuest *fake, FakeMode mode)
{
	struct sockaddr_un addr = { .sun_family = AF_UNIX };

	fake->mode = mode;
	fake->path = g_strdup_printf("%s/fake-%s.sock", tmpdir, fake_names[mode]);
	g_strlcpy(addr.sun_path, fake->path, sizeof(addr.sun_path));
	fake->lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	g_assert_cmpint(fake->lfd, >=, 0);
	g_assert_cmpint(bind(fake->lfd, (struct sockaddr *)&addr, sizeof(addr)), ==, 0);
	g_assert_cmpint(listen(fake->lfd, 16), ==, 0);
	fake->thread = g_thread_new(fake_names[mode], fake_thread, fake);
}

/* ---- real peers ---------------------------------------------------------------------- */

static gboolean socket_accepts(const char *path)
{
	struct sockaddr_un addr = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	gboolean ok;

	g_strlcpy(addr.sun_path, path, sizeof(addr.sun_path));
	ok = connect(fd, (struct sockaddr *)&addr, sizeof(addr)) == 0;
	close(fd);
	return ok;
}

/* A peer must not outlive a test that crashed: it would hold the test's output pipes open. */
static void peer_child_setup(gpointer user_data)
{
	prctl(PR_SET_PDEATHSIG, SIGKILL);
}

static GSubprocess *peer_spawn(const char *const *argv, const char *path)
{
	g_autoptr(GError) error = NULL;
	g_autoptr(GSubprocess) proc = NULL;
	g_autoptr(GSubprocessLauncher) launcher =
	    g_subprocess_launcher_new(G_SUBPROCESS_FLAGS_STDOUT_SILENCE);

	g_subprocess_launcher_set_child_setup(launcher, peer_child_setup, NULL, NULL);
	proc = g_subprocess_launcher_spawnv(launcher, argv, &error);
	if (proc == NULL) {
		g_test_message("cannot start %s: %s", argv[0], error->message);
		return NULL;
	}
	for (guint i = 0; i < 100; i++) {
		if (socket_accepts(path))
			return g_steal_pointer(&proc);
		g_usleep(50 * 1000);
	}
	g_test_message("%s did not listen on %s", argv[0], path);
	g_subprocess_force_exit(proc);
	g_subprocess_wait(proc, NULL, NULL);
	return NULL;
}

/* Our agent; qemu-ga speaks the same protocol for ping/info if the agent cannot start. */
static void peer_start(Peer *peer, guint i)
{
	const char *agent = g_getenv("GB_AGENT");
	const char *qga = g_getenv("GB_QEMU_GA");

	peer->path = g_strdup_printf("%s/peer%u.sock", tmpdir, i);
	if (agent != NULL && g_strcmp0(peer_kind, "guestbench-agent") == 0) {
		const char *argv[] = { agent, "-m", "unix-listen", "-p", peer->path, NULL };
		peer->proc = peer_spawn(argv, peer->path);
		if (peer->proc != NULL)
			return;
	}
	g_assert_nonnull(qga);
	peer_kind = "qemu-ga";
	{
		g_autofree char *statedir = g_strdup_printf("%s/qga%u", tmpdir, i);
		g_autofree char *pidfile = g_strdup_printf("%s/qga%u.pid", tmpdir, i);
		const char *argv[] = { qga,  "-m",     "unix-listen", "-p",    peer->path,
			               "-t", statedir, "-f",          pidfile, NULL };
		g_mkdir(statedir, 0700);
		g_unlink(peer->path);
		peer->proc = peer_spawn(argv, peer->path);
	}
	g_assert_nonnull(peer->proc);
}

static void peer_stop(Peer *peer)
{
	if (peer->proc == NULL)
		return;
	g_subprocess_send_signal(peer->proc, SIGTERM);
	g_subprocess_wait(peer->proc, NULL, NULL);
	g_clear_object(&peer->proc);
}

/* ---- running the CLI --------------------------------------------------------------- */

typedef struct {
	int status; /* exit status, or -1 when killed by a signal */
	char *out;
	char *err;
	double elapsed;
} CliRun;

static void cli_run_free(CliRun *run)
{
	g_free(run->out);
	g_free(run->err);
	g_free(run);
}
G_DEFINE_AUTOPTR_CLEANUP_FUNC(CliRun, cli_run_free)

static CliRun *cli_runv(GPtrArray *args)
{
	CliRun *run = g_new0(CliRun, 1);
	g_autoptr(GError) error = NULL;
	g_autoptr(GPtrArray) argv = g_ptr_array_new();
	gint64 start = g_get_monotonic_time();
	int wait_status = 0;

	g_ptr_array_add(argv, (gpointer)g_getenv("GB_CLI"));
	for (guint i = 0; i < args->len; i++)
		g_ptr_array_add(argv, g_ptr_array_index(args, i));
	g_ptr_array_add(argv, NULL);
	g_assert_true(g_spawn_sync(NULL, (char **)argv->pdata, NULL, G_SPAWN_DEFAULT, NULL, NULL,
	                           &run->out, &run->err, &wait_status, &error));
	g_assert_no_error(error);
	run->elapsed = (g_get_monotonic_time() - start) / 1e6;
	run->status = WIFEXITED(wait_status) ? WEXITSTATUS(wait_status) : -1;
	g_test_message("exit %d after %.2f s\nstdout:\n%s\nstderr:\n%s", run->status, run->elapsed,
	               run->out, run->err);
	return run;
}

static CliRun *cli_run(const char *first, ...)
{
	g_autoptr(GPtrArray) args = g_ptr_array_new();
	va_list ap;

	va_start(ap, first);
	for (const char *a = first; a != NULL; a = va_arg(ap, const char *))
		g_ptr_array_add(args, (gpointer)a);
	va_end(ap);
	return cli_runv(args);
}

/* Parses the --format json document and checks its contract shape. */
static JsonArray *parse_document(const char *out, const char *command, JsonNode **root_out)
{
	g_autoptr(GError) error = NULL;
	JsonNode *root = gb_json_parse(out, strlen(out), &error);
	JsonObject *obj = NULL;
	JsonArray *guests = NULL;
	const char *str = NULL;

	g_assert_no_error(error);
	g_assert_true(g_str_has_suffix(out, "}\n"));
	g_assert_true(gb_json_node_get_object(root, "document", &obj, &error));
	g_assert_true(gb_json_get_string(obj, "guestbench", 0, &str, &error));
	g_assert_cmpstr(str, ==, GB_VERSION);
	g_assert_true(gb_json_get_string(obj, "command", 0, &str, &error));
	g_assert_cmpstr(str, ==, command);
	g_assert_true(gb_json_get_array(obj, "guests", 0, &guests, &error));
	*root_out = root;
	return guests;
}

static JsonObject *document_guest(JsonArray *guests, guint i, const char *target,
                                  const char *status)
{
	g_autoptr(GError) error = NULL;
	JsonObject *g = NULL;
	const char *str = NULL;

	g_assert_cmpuint(i, <, json_array_get_length(guests));
	g_assert_true(
	    gb_json_node_get_object(json_array_get_element(guests, i), "guest", &g, &error));
	g_assert_true(gb_json_get_string(g, "name", 0, &str, &error));
	g_assert_cmpstr(str, ==, target);
	g_assert_true(gb_json_get_string(g, "target", 0, &str, &error));
	g_assert_cmpstr(str, ==, target);
	g_assert_true(gb_json_get_string(g, "status", 0, &str, &error));
	g_assert_cmpstr(str, ==, status);
	g_assert_true(json_object_has_member(g, "result"));
	g_assert_cmpint(json_object_has_member(g, "error"), ==, g_strcmp0(status, "ok") != 0);
	return g;
}

static const char *guest_error(JsonObject *g)
{
	const char *str = NULL;
	g_assert_true(gb_json_get_string(g, "error", 0, &str, NULL));
	return str;
}

/* ---- tests --------------------------------------------------------------------------- */

static void test_ping_fleet(void)
{
	g_autofree char *missing = g_strdup_printf("%s/nobody.sock", tmpdir);
	g_autoptr(CliRun) run = NULL;
	g_auto(GStrv) lines = NULL;

	run = cli_run("ping", peers[0].path, peers[1].path, missing, peers[2].path, NULL);
	g_assert_cmpint(run->status, ==, 3);
	lines = g_strsplit(run->out, "\n", -1);
	g_assert_cmpuint(g_strv_length(lines), ==, 6);
	g_assert_true(g_str_has_prefix(lines[0], "GUEST"));
	g_assert_true(g_str_has_prefix(lines[1], peers[0].path));
	g_assert_nonnull(strstr(lines[1], " ok "));
	g_assert_true(g_str_has_suffix(lines[1], " ms"));
	g_assert_true(g_str_has_prefix(lines[2], peers[1].path));
	g_assert_nonnull(strstr(lines[2], " ok "));
	g_assert_true(g_str_has_prefix(lines[3], missing));
	g_assert_nonnull(strstr(lines[3], " error "));
	g_assert_nonnull(strstr(lines[3], "No such file or directory"));
	g_assert_true(g_str_has_prefix(lines[4], peers[2].path));
	g_assert_nonnull(strstr(lines[4], " ok "));
	/* not a terminal: no colour, no progress line */
	g_assert_null(strchr(run->out, '\033'));
	g_assert_cmpstr(run->err, ==, "");
}

/* A path that is not a socket at all is named so, not "Connection refused". */
static void test_not_a_socket(void)
{
	g_autofree char *dir = g_strdup_printf("%s/a-directory", tmpdir);
	g_autofree char *file = g_strdup_printf("%s/a-file", tmpdir);
	g_autoptr(CliRun) run = NULL;

	g_assert_cmpint(g_mkdir(dir, 0700), ==, 0);
	g_assert_true(g_file_set_contents(file, "not a socket", -1, NULL));
	run = cli_run("ping", dir, file, NULL);
	g_assert_cmpint(run->status, ==, 3);
	g_assert_nonnull(strstr(run->out, "not a socket but a directory"));
	g_assert_nonnull(strstr(run->out, "not a socket but a regular file"));
	g_assert_null(strstr(run->out, "Connection refused"));
	g_rmdir(dir);
	g_unlink(file);
}

static void test_ping_json(void)
{
	g_autofree char *missing = g_strdup_printf("unix:%s/nobody.sock", tmpdir);
	g_autoptr(CliRun) run = NULL;
	g_autoptr(JsonNode) root = NULL;
	JsonArray *guests;
	JsonObject *g;
	JsonObject *result = NULL;
	double rtt = -1;

	/* common options after the command name */
	run = cli_run("ping", "--format", "json", peers[0].path, missing, peers[1].path, NULL);
	g_assert_cmpint(run->status, ==, 3);
	guests = parse_document(run->out, "ping", &root);
	g_assert_cmpuint(json_array_get_length(guests), ==, 3);
	g = document_guest(guests, 0, peers[0].path, "ok");
	g_assert_true(gb_json_get_object(g, "result", 0, &result, NULL));
	g_assert_true(gb_json_get_double(result, "rtt_ms", 0, 0, 10000, &rtt, NULL));
	g_assert_cmpfloat(rtt, >, 0);
	g = document_guest(guests, 1, missing, "error");
	g_assert_nonnull(strstr(guest_error(g), "No such file"));
	document_guest(guests, 2, peers[1].path, "ok");
}

static void test_ping_all_ok(void)
{
	g_autoptr(CliRun) run = NULL;
	g_autoptr(JsonNode) root = NULL;
	JsonArray *guests;

	/* common options before the command name, -j 1: one guest at a time, same order */
	run = cli_run("--format", "json", "-j", "1", "ping", peers[2].path, peers[0].path,
	              peers[1].path, NULL);
	g_assert_cmpint(run->status, ==, 0);
	guests = parse_document(run->out, "ping", &root);
	document_guest(guests, 0, peers[2].path, "ok");
	document_guest(guests, 1, peers[0].path, "ok");
	document_guest(guests, 2, peers[1].path, "ok");
}

static void test_info(void)
{
	g_autoptr(CliRun) run = NULL;
	g_autoptr(CliRun) table = NULL;
	g_autoptr(JsonNode) root = NULL;
	JsonArray *guests;
	JsonArray *cmds = NULL;
	JsonObject *result = NULL;
	const char *version = NULL;
	gboolean found = FALSE;

	run = cli_run("info", "--format=json", peers[0].path, NULL);
	g_assert_cmpint(run->status, ==, 0);
	guests = parse_document(run->out, "info", &root);
	g_assert_true(gb_json_get_object(document_guest(guests, 0, peers[0].path, "ok"), "result",
	                                 0, &result, NULL));
	g_assert_true(gb_json_get_string(result, "version", 0, &version, NULL));
	g_assert_cmpstr(version, !=, "");
	g_assert_true(gb_json_get_array(result, "supported_commands", 0, &cmds, NULL));
	for (guint i = 0; i < json_array_get_length(cmds); i++) {
		JsonObject *cmd = NULL;
		const char *name = NULL;
		gboolean enabled = FALSE;

		g_assert_true(
		    gb_json_node_get_object(json_array_get_element(cmds, i), "cmd", &cmd, NULL));
		g_assert_true(gb_json_get_string(cmd, "name", 0, &name, NULL));
		g_assert_true(gb_json_get_bool(cmd, "enabled", 0, &enabled, NULL));
		if (g_strcmp0(name, "guest-ping") == 0) {
			g_assert_true(enabled);
			found = TRUE;
		}
	}
	g_assert_true(found);

	table = cli_run("info", peers[1].path, NULL);
	g_assert_cmpint(table->status, ==, 0);
	g_assert_nonnull(strstr(table->out, "VERSION"));
	g_assert_nonnull(strstr(table->out, "guest-ping"));
}

static void test_fake_guests(void)
{
	g_autoptr(CliRun) run = NULL;
	g_autoptr(JsonNode) root = NULL;
	JsonArray *guests;
	JsonObject *g;
	const char *err;

	run = cli_run("ping", "--timeout", "1", "--format", "json", peers[0].path,
	              fakes[FAKE_SILENT].path, fakes[FAKE_GARBAGE].path, fakes[FAKE_CLOSE].path,
	              fakes[FAKE_STALE].path, fakes[FAKE_REMOTE_ERROR].path,
	              fakes[FAKE_WRONG_ID].path, peers[1].path, NULL);
	g_assert_cmpint(run->status, ==, 3);
	/* every guest runs at once: the slow ones cost one timeout, not one each */
	g_assert_cmpfloat(run->elapsed, <, 3.0);
	g_assert_cmpfloat(run->elapsed, >=, 0.9);
	guests = parse_document(run->out, "ping", &root);
	g_assert_cmpuint(json_array_get_length(guests), ==, 8);
	document_guest(guests, 0, peers[0].path, "ok");

	g = document_guest(guests, 1, fakes[FAKE_SILENT].path, "timeout");
	err = guest_error(g);
	g_assert_nonnull(strstr(err, "timed out after 1 s"));
	g_assert_nonnull(strstr(err, "guest-sync-delimited"));
	g_assert_nonnull(strstr(err, "nothing received"));

	g = document_guest(guests, 2, fakes[FAKE_GARBAGE].path, "timeout");
	err = guest_error(g);
	g_assert_nonnull(strstr(err, "guest-sync-delimited"));
	g_assert_nonnull(strstr(err, "discarded"));

	g = document_guest(guests, 3, fakes[FAKE_CLOSE].path, "error");
	g_assert_nonnull(strstr(guest_error(g), "connection closed by guest"));

	document_guest(guests, 4, fakes[FAKE_STALE].path, "ok");

	g = document_guest(guests, 5, fakes[FAKE_REMOTE_ERROR].path, "error");
	g_assert_nonnull(
	    strstr(guest_error(g), "guest-ping: Command guest-ping has been disabled"));

	g = document_guest(guests, 6, fakes[FAKE_WRONG_ID].path, "timeout");
	g_assert_nonnull(strstr(guest_error(g), "waiting for guest-ping"));

	document_guest(guests, 7, peers[1].path, "ok");
}

static void test_fake_huge(void)
{
	g_autoptr(CliRun) run = NULL;
	g_autoptr(JsonNode) root = NULL;
	JsonArray *guests;
	JsonObject *g;

	run = cli_run("ping", "--format", "json", fakes[FAKE_HUGE].path, peers[0].path, NULL);
	g_assert_cmpint(run->status, ==, 3);
	guests = parse_document(run->out, "ping", &root);
	g = document_guest(guests, 0, fakes[FAKE_HUGE].path, "error");
	/* a ping's reply has a limit of its own, far below the cap */
	g_assert_cmpstr(guest_error(g), ==,
	                "reply to guest-ping over its size limit: JSON message exceeds 4096 bytes");
	document_guest(guests, 1, peers[0].path, "ok");
}

/* -j bounds the guests in flight: two that each use their whole timeout take twice as long. */
static void test_jobs_limit(void)
{
	g_autoptr(CliRun) serial = NULL;
	g_autoptr(CliRun) parallel = NULL;

	serial = cli_run("ping", "-j", "1", "--timeout", "1", fakes[FAKE_SILENT].path,
	                 fakes[FAKE_WRONG_ID].path, peers[0].path, NULL);
	g_assert_cmpint(serial->status, ==, 3);
	g_assert_cmpfloat(serial->elapsed, >=, 2.0);
	parallel = cli_run("ping", "-j", "3", "--timeout", "1", fakes[FAKE_SILENT].path,
	                   fakes[FAKE_WRONG_ID].path, peers[0].path, NULL);
	g_assert_cmpint(parallel->status, ==, 3);
	g_assert_cmpfloat(parallel->elapsed, >=, 1.0);
	/* compared with each other, so that a slow start (valgrind) does not matter */
	g_assert_cmpfloat(serial->elapsed - parallel->elapsed, >, 0.5);
}

/* No vsock peer exists here: what matters is a clean per-guest failure naming the target. */
static void test_vsock_unreachable(void)
{
	g_autoptr(CliRun) run = NULL;
	g_autoptr(JsonNode) root = NULL;
	JsonArray *guests;
	JsonObject *g = NULL;
	const char *status = NULL;

	run = cli_run("ping", "--timeout", "0.5", "--format", "json", "vsock:1:9", peers[0].path,
	              NULL);
	g_assert_cmpint(run->status, ==, 3);
	g_assert_cmpfloat(run->elapsed, <, 5.0);
	guests = parse_document(run->out, "ping", &root);
	g_assert_true(
	    gb_json_node_get_object(json_array_get_element(guests, 0), "guest", &g, NULL));
	g_assert_true(gb_json_get_string(g, "status", 0, &status, NULL));
	g_assert_true(g_strcmp0(status, "error") == 0 || g_strcmp0(status, "timeout") == 0);
	g_assert_nonnull(strstr(guest_error(g), "vsock"));
	document_guest(guests, 1, peers[0].path, "ok");
}

static void test_fake_table_escapes(void)
{
	g_autoptr(CliRun) run = NULL;
	g_autoptr(CliRun) run2 = NULL;
	g_auto(GStrv) lines = NULL;

	/* the remote error carried an ESC: the table shows something, the terminal gets no ESC */
	run = cli_run("ping", "--color", "always", fakes[FAKE_REMOTE_ERROR].path, peers[0].path,
	              NULL);
	g_assert_cmpint(run->status, ==, 3);
	g_assert_null(strstr(run->out, "\033[31mby policy"));
	g_assert_nonnull(strstr(run->out, "[31mby policy"));
	g_assert_nonnull(strstr(run->out, "\033[31merror\033[0m"));
	g_assert_nonnull(strstr(run->out, "\033[32mok\033[0m"));

	/* guest strings in a result: escaped, one line per guest */
	run2 = cli_run("info", fakes[FAKE_REMOTE_ERROR].path, NULL);
	g_assert_cmpint(run2->status, ==, 0);
	g_assert_null(strchr(run2->out, '\033'));
	g_assert_null(strchr(run2->out, '\007'));
	g_assert_nonnull(strstr(run2->out, "6.6.6\\x1b[2J\\nfake row"));
	g_assert_nonnull(strstr(run2->out, "guest-ping\\x1b]0;x\\x07"));
	lines = g_strsplit(run2->out, "\n", -1);
	g_assert_cmpuint(g_strv_length(lines), ==, 3);
}

static void test_output_file(void)
{
	g_autofree char *path = g_strdup_printf("%s/out.json", tmpdir);
	g_autofree char *bad = g_strdup_printf("%s/no/such/dir/out.json", tmpdir);
	g_autofree char *contents = NULL;
	g_autoptr(CliRun) run = NULL;
	g_autoptr(CliRun) run2 = NULL;
	g_autoptr(JsonNode) root = NULL;
	JsonArray *guests;

	run = cli_run("-o", path, "ping", "--format", "json", peers[0].path, NULL);
	g_assert_cmpint(run->status, ==, 0);
	g_assert_cmpstr(run->out, ==, "");
	g_assert_true(g_file_get_contents(path, &contents, NULL, NULL));
	guests = parse_document(contents, "ping", &root);
	document_guest(guests, 0, peers[0].path, "ok");

	run2 = cli_run("ping", "--output", bad, peers[0].path, NULL);
	g_assert_cmpint(run2->status, ==, 2);
	g_assert_nonnull(strstr(run2->err, "does not exist"));
	g_assert_false(g_file_test(bad, G_FILE_TEST_EXISTS));
	g_unlink(path);
}

static void test_usage(void)
{
	struct {
		const char *args[5];
		int status;
		const char *out;
		const char *err;
	} cases[] = {
		{ { "--help" }, 0, "ping", NULL },
		{ { "help" }, 0, "Commands:", NULL },
		{ { "ping", "--help" }, 0, "--timeout", NULL },
		{ { "help", "info" }, 0, "enabled", NULL },
		{ { "--version" }, 0, GB_VERSION, NULL },
		{ { "frobnicate", "/a" }, 2, "", "unknown command 'frobnicate'" },
		{ {}, 2, "", "no command given" },
		{ { "ping" }, 2, "", "no targets given" },
		{ { "ping", "--format", "xml", "/a" }, 2, "", "unknown format 'xml'" },
		{ { "ping", "-j", "0", "/a" }, 2, "", "--jobs" },
		{ { "ping", "--timeout", "soon", "/a" }, 2, "", "--timeout" },
		{ { "ping", "/a", "unix:/a" }, 2, "", "duplicate target" },
		{ { "ping", "vsock:x:1" }, 2, "", "CID 'x'" },
		{ { "ping", "qga:" }, 2, "", "empty socket path" },
		{ { "ping", "--qga-agent", "bin/agent", "qga:/x" }, 2, "", "not an absolute path" },
		{ { "ping", "--qga-agent", "/bin/agent", "/x" }, 2, "", "no target is reached" },
	};

	for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
		g_autoptr(GPtrArray) args = g_ptr_array_new();
		g_autoptr(CliRun) run = NULL;

		for (guint j = 0; cases[i].args[j] != NULL; j++)
			g_ptr_array_add(args, (gpointer)cases[i].args[j]);
		run = cli_runv(args);
		g_assert_cmpint(run->status, ==, cases[i].status);
		g_assert_nonnull(strstr(run->out, cases[i].out));
		if (cases[i].err != NULL) {
			g_assert_nonnull(strstr(run->err, cases[i].err));
			g_assert_nonnull(strstr(run->err, "--help"));
		} else {
			g_assert_cmpstr(run->err, ==, "");
		}
	}
}

static void test_sigint(void)
{
	g_autoptr(GError) error = NULL;
	g_autoptr(GSubprocess) proc = NULL;
	g_autofree char *out = NULL;
	g_autofree char *err = NULL;
	g_autoptr(JsonNode) root = NULL;
	JsonArray *guests;
	JsonObject *g;
	gint before = g_atomic_int_get(&fakes[FAKE_SILENT].accepted);
	gint64 start = g_get_monotonic_time();

	proc = g_subprocess_new(G_SUBPROCESS_FLAGS_STDOUT_PIPE | G_SUBPROCESS_FLAGS_STDERR_PIPE,
	                        &error, g_getenv("GB_CLI"), "ping", "--format", "json", "-j", "2",
	                        "--timeout", "60", peers[0].path, fakes[FAKE_SILENT].path,
	                        peers[1].path, fakes[FAKE_GARBAGE].path, NULL);
	g_assert_no_error(error);
	/* the silent guest accepted: the CLI is inside its runner, signals are handled */
	while (g_atomic_int_get(&fakes[FAKE_SILENT].accepted) == before) {
		g_assert_cmpint(g_get_monotonic_time() - start, <, 10 * G_USEC_PER_SEC);
		g_usleep(10 * 1000);
	}
	g_usleep(200 * 1000);
	g_subprocess_send_signal(proc, SIGINT);
	g_assert_true(g_subprocess_communicate_utf8(proc, NULL, NULL, &out, &err, &error));
	g_assert_no_error(error);
	g_test_message("stdout:\n%s\nstderr:\n%s", out, err);
	g_assert_true(g_subprocess_get_if_exited(proc));
	g_assert_cmpint(g_subprocess_get_exit_status(proc), ==, 130);
	g_assert_cmpint(g_get_monotonic_time() - start, <, 10 * G_USEC_PER_SEC);
	guests = parse_document(out, "ping", &root);
	document_guest(guests, 0, peers[0].path, "ok");
	g = document_guest(guests, 1, fakes[FAKE_SILENT].path, "error");
	g_assert_cmpstr(guest_error(g), ==, "interrupted by SIGINT");
	/* -j 2: the garbage guest may or may not have started by then */
	g = document_guest(guests, 3, fakes[FAKE_GARBAGE].path, "error");
	g_assert_nonnull(strstr(guest_error(g), "interrupted by SIGINT"));
}

static void rm_rf(const char *path)
{
	g_autoptr(GDir) dir = g_dir_open(path, 0, NULL);
	const char *name;

	if (dir != NULL) {
		while ((name = g_dir_read_name(dir)) != NULL) {
			g_autofree char *child = g_build_filename(path, name, NULL);
			rm_rf(child);
		}
	}
	g_remove(path);
}

int main(int argc, char **argv)
{
	g_autoptr(GError) error = NULL;
	int rc;

	g_test_init(&argc, &argv, NULL);
	if (g_getenv("GB_CLI") == NULL) {
		g_printerr("GB_CLI is not set\n");
		return 1;
	}
	/* short: sun_path holds 107 bytes */
	tmpdir = g_dir_make_tmp("gbcli-XXXXXX", &error);
	g_assert_no_error(error);
	for (guint i = 0; i < N_PEERS; i++)
		peer_start(&peers[i], i);
	g_test_message("peers are %s", peer_kind);
	for (guint i = 0; i < FAKE_LAST; i++)
		fake_start(&fakes[i], i);

	g_test_add_func("/cli/ping/fleet", test_ping_fleet);
	g_test_add_func("/cli/ping/json", test_ping_json);
	g_test_add_func("/cli/ping/not-a-socket", test_not_a_socket);
	g_test_add_func("/cli/ping/all-ok", test_ping_all_ok);
	g_test_add_func("/cli/info", test_info);
	g_test_add_func("/cli/fake-guests", test_fake_guests);
	g_test_add_func("/cli/fake-table-escapes", test_fake_table_escapes);
	g_test_add_func("/cli/fake-huge", test_fake_huge);
	g_test_add_func("/cli/jobs-limit", test_jobs_limit);
	g_test_add_func("/cli/vsock-unreachable", test_vsock_unreachable);
	g_test_add_func("/cli/output-file", test_output_file);
	g_test_add_func("/cli/usage", test_usage);
	g_test_add_func("/cli/sigint", test_sigint);
	rc = g_test_run();

	for (guint i = 0; i < N_PEERS; i++)
		peer_stop(&peers[i]);
	/* fake threads block in accept(): the process exit ends them */
	rm_rf(tmpdir);
	return rc;
}
