/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"

#include <errno.h>
#include <gio/gio.h>
#include <glib/gstdio.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "guestbench-protocol.h"

/*
 * A fleet: dozens of real agents on unix sockets plus misbehaving fake guests,
 * all named in one inventory and driven through the real guestbench binary.
 */

#define N_AGENTS 40

typedef enum {
	FAKE_HUNG,     /* accepts, never answers */
	FAKE_GARBAGE,  /* answers bytes that are not JSON */
	FAKE_SLOW,     /* answers correctly, 300 ms late each time */
	FAKE_CLOSE,    /* closes right after accept */
	FAKE_MIDREPLY, /* starts the sync reply, closes half-way */
	FAKE_HUGE,     /* a 100 MiB reply */
	FAKE_LAST,
} FakeMode;

static const char *const fake_names[] = { "hung", "garbage", "slow", "close", "midreply", "huge" };

typedef struct {
	FakeMode mode;
	char *path;
	int lfd;
	GThread *thread;
} Fake;

static char *tmpdir;
static char *inventory;
static GSubprocess *agents[N_AGENTS];
static Fake fakes[FAKE_LAST];

static void write_all(int fd, const void *data, gsize len)
{
	const guint8 *p = data;

	while (len > 0) {
		gssize n = send(fd, p, len, MSG_NOSIGNAL);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return;
		p += n;
		len -= n;
	}
}

typedef struct {
	Fake *fake;
	int fd;
	gboolean closed;
} Conn;

static gboolean fake_message_cb(const char *msg, gsize len, const GError *error, gpointer user_data)
{
	Conn *conn = user_data;
	g_autoptr(GbRequest) req = NULL;
	g_autoptr(GString) reply = NULL;

	if (error != NULL)
		return TRUE;
	req = gb_request_parse(msg, len, NULL, NULL);
	if (req == NULL)
		return TRUE;
	if (conn->fake->mode == FAKE_SLOW)
		g_usleep(300 * 1000);
	if (g_strcmp0(req->execute, "guest-sync-delimited") == 0) {
		reply =
		    gb_reply_return_delimited(json_object_get_member(req->arguments, "id"), NULL);
		if (conn->fake->mode == FAKE_MIDREPLY) {
			write_all(conn->fd, reply->str, reply->len / 2);
			shutdown(conn->fd, SHUT_RDWR);
			conn->closed = TRUE;
			return FALSE;
		}
	} else {
		reply = gb_reply_return(NULL, req->id);
	}
	write_all(conn->fd, reply->str, reply->len);
	return TRUE;
}

static void fake_serve(Fake *fake, int fd)
{
	g_autoptr(GbFramer) framer = gb_framer_new(GB_FRAMER_DEFAULT_MAX_SIZE, 64);
	Conn conn = { fake, fd, FALSE };
	guint8 buf[4096];

	if (fake->mode == FAKE_CLOSE)
		return;
	if (fake->mode == FAKE_HUGE) {
		gsize chunk = 1024 * 1024;
		g_autofree char *big = g_malloc(chunk);
		memset(big, 'A', chunk);
		write_all(fd, "{\"return\": \"", 12);
		for (guint i = 0; i < 100; i++)
			write_all(fd, big, chunk);
		write_all(fd, "\"}\n", 3);
	}
	for (;;) {
		gssize n = recv(fd, buf, sizeof(buf), 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0 || conn.closed)
			return;
		if (fake->mode == FAKE_HUNG || fake->mode == FAKE_HUGE)
			continue;
		if (fake->mode == FAKE_GARBAGE) {
			write_all(fd, "not json }}} \x01\x02\n", 17);
			continue;
		}
		gb_framer_push(framer, buf, n, fake_message_cb, &conn);
	}
}

static gpointer fake_thread(gpointer user_data)
{
	Fake *fake = user_data;

	for (;;) {
		int fd = accept(fake->lfd, NULL, NULL);
		if (fd < 0) {
			if (errno == EINTR)
				continue;
			return NULL;
		}
		fake_serve(fake, fd);
		close(fd);
	}
}

static void fake_start(Fake *fake, FakeMode mode)
{
	struct sockaddr_un addr = { .sun_family = AF_UNIX };

	fake->mode = mode;
	fake->path = g_strdup_printf("%s/fake-%s.sock", tmpdir, fake_names[mode]);
	g_strlcpy(addr.sun_path, fake->path, sizeof(addr.sun_path));
	fake->lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	g_assert_cmpint(bind(fake->lfd, (struct sockaddr *)&addr, sizeof(addr)), ==, 0);
	g_assert_cmpint(listen(fake->lfd, 64), ==, 0);
	fake->thread = g_thread_new(fake_names[mode], fake_thread, fake);
}

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

/* An agent must not outlive a crashed test. */
static void child_setup(gpointer user_data)
{
	prctl(PR_SET_PDEATHSIG, SIGKILL);
}

static void agents_start(void)
{
	g_autoptr(GSubprocessLauncher) launcher =
	    g_subprocess_launcher_new(G_SUBPROCESS_FLAGS_STDOUT_SILENCE);

	g_subprocess_launcher_set_child_setup(launcher, child_setup, NULL, NULL);
	/* all at once, then wait: starting them one by one would take N times as long */
	for (guint i = 0; i < N_AGENTS; i++) {
		g_autoptr(GError) error = NULL;
		g_autofree char *path = g_strdup_printf("%s/agent%02u.sock", tmpdir, i);
		const char *argv[] = {
			g_getenv("GB_AGENT"), "-m", "unix-listen", "-p", path, NULL
		};
		agents[i] = g_subprocess_launcher_spawnv(launcher, argv, &error);
		g_assert_no_error(error);
	}
	for (guint i = 0; i < N_AGENTS; i++) {
		g_autofree char *path = g_strdup_printf("%s/agent%02u.sock", tmpdir, i);
		guint tries = 0;
		while (!socket_accepts(path) && tries++ < 200)
			g_usleep(50 * 1000);
		g_assert_true(socket_accepts(path));
	}
}

static void write_inventory(void)
{
	g_autoptr(GString) ini = g_string_new("# the test fleet\n");

	for (guint i = 0; i < N_AGENTS; i++) {
		/* relative to the inventory's directory */
		g_string_append_printf(ini,
		                       "[guest agent%02u]\ntarget=agent%02u.sock\ntags=real;%s\n\n",
		                       i, i, i % 2 == 0 ? "even" : "odd");
	}
	for (guint i = 0; i < FAKE_LAST; i++) {
		g_string_append_printf(ini, "[guest fake-%s]\ntarget=unix:%s\ntags=fake\n\n",
		                       fake_names[i], fakes[i].path);
	}
	inventory = g_build_filename(tmpdir, "fleet.ini", NULL);
	g_assert_true(g_file_set_contents(inventory, ini->str, ini->len, NULL));
}

typedef struct {
	int status;
	char *out;
	char *err;
	double elapsed;
} Run;

static void run_free(Run *run)
{
	g_free(run->out);
	g_free(run->err);
	g_free(run);
}
G_DEFINE_AUTOPTR_CLEANUP_FUNC(Run, run_free)

static Run *cli_run(const char *first, ...)
{
	Run *run = g_new0(Run, 1);
	g_autoptr(GPtrArray) argv = g_ptr_array_new();
	g_autoptr(GError) error = NULL;
	gint64 start = g_get_monotonic_time();
	int wait_status = 0;
	va_list ap;

	g_ptr_array_add(argv, (gpointer)g_getenv("GB_CLI"));
	va_start(ap, first);
	for (const char *a = first; a != NULL; a = va_arg(ap, const char *))
		g_ptr_array_add(argv, (gpointer)a);
	va_end(ap);
	g_ptr_array_add(argv, NULL);
	g_assert_true(g_spawn_sync(NULL, (char **)argv->pdata, NULL, G_SPAWN_DEFAULT, NULL, NULL,
	                           &run->out, &run->err, &wait_status, &error));
	g_assert_no_error(error);
	run->elapsed = (g_get_monotonic_time() - start) / 1e6;
	run->status = WIFEXITED(wait_status) ? WEXITSTATUS(wait_status) : -1;
	g_test_message("exit %d after %.2f s\nstderr:\n%s", run->status, run->elapsed, run->err);
	return run;
}

/* name -> status from the JSON document; also checks the document's shape */
static GHashTable *statuses(const char *out, guint expect_n)
{
	g_autoptr(JsonNode) root = gb_json_parse(out, strlen(out), NULL);
	GHashTable *map = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
	JsonObject *obj = NULL;
	JsonArray *guests = NULL;

	g_assert_true(gb_json_node_get_object(root, "document", &obj, NULL));
	g_assert_true(gb_json_get_array(obj, "guests", GB_JSON_REQUIRED, &guests, NULL));
	g_assert_cmpuint(json_array_get_length(guests), ==, expect_n);
	for (guint i = 0; i < json_array_get_length(guests); i++) {
		JsonObject *g = NULL;
		const char *name = NULL;
		const char *status = NULL;
		const char *err = NULL;
		g_assert_true(
		    gb_json_node_get_object(json_array_get_element(guests, i), "guest", &g, NULL));
		g_assert_true(gb_json_get_string(g, "name", GB_JSON_REQUIRED, &name, NULL));
		g_assert_true(gb_json_get_string(g, "status", GB_JSON_REQUIRED, &status, NULL));
		g_assert_true(gb_json_get_string(g, "error", GB_JSON_OPTIONAL, &err, NULL));
		g_test_message("%s: %s %s", name, status, err != NULL ? err : "");
		g_hash_table_insert(map, g_strdup(name), g_strdup(status));
	}
	return map;
}

static void test_fleet_inventory(void)
{
	g_autoptr(Run) run = NULL;
	g_autoptr(GHashTable) map = NULL;
	g_autofree char *at = g_strdup_printf("@%s", inventory);

	run = cli_run("ping", "--timeout", "2", "--format", "json", at, NULL);
	g_assert_cmpint(run->status, ==, 3);
	/* the bad guests cost one timeout together, not one each */
	g_assert_cmpfloat(run->elapsed, <, 5.0);
	map = statuses(run->out, N_AGENTS + FAKE_LAST);
	for (guint i = 0; i < N_AGENTS; i++) {
		g_autofree char *name = g_strdup_printf("agent%02u", i);
		g_assert_cmpstr(g_hash_table_lookup(map, name), ==, "ok");
	}
	g_assert_cmpstr(g_hash_table_lookup(map, "fake-hung"), ==, "timeout");
	g_assert_cmpstr(g_hash_table_lookup(map, "fake-garbage"), ==, "timeout");
	g_assert_cmpstr(g_hash_table_lookup(map, "fake-slow"), ==, "ok");
	g_assert_cmpstr(g_hash_table_lookup(map, "fake-close"), ==, "error");
	g_assert_cmpstr(g_hash_table_lookup(map, "fake-midreply"), ==, "error");
	g_assert_cmpstr(g_hash_table_lookup(map, "fake-huge"), !=, "ok");
}

static void test_fleet_selection(void)
{
	g_autoptr(Run) run = NULL;
	g_autoptr(Run) none = NULL;
	g_autoptr(Run) csv = NULL;
	g_autoptr(GHashTable) map = NULL;

	run = cli_run("ping", "--format", "json", "--inventory", inventory, "--tag", "even",
	              "--name", "agent0*", NULL);
	g_assert_cmpint(run->status, ==, 0);
	map = statuses(run->out, 5); /* agent00, 02, 04, 06, 08 */
	g_assert_cmpstr(g_hash_table_lookup(map, "agent08"), ==, "ok");

	none = cli_run("ping", "--inventory", inventory, "--tag", "nope", NULL);
	g_assert_cmpint(none->status, ==, 2);
	g_assert_nonnull(strstr(none->err, "no inventory guest matches --tag 'nope'"));

	csv =
	    cli_run("info", "--format", "csv", "--inventory", inventory, "--name", "agent1?", NULL);
	g_assert_cmpint(csv->status, ==, 0);
	g_assert_true(g_str_has_prefix(csv->out, "guest,target,status,version,enabled_commands,"
	                                         "error\nagent10,agent10.sock,ok,"));
}

static void test_fleet_prom(void)
{
	g_autoptr(Run) run = NULL;
	g_autofree char *prom = g_build_filename(tmpdir, "fleet.prom", NULL);
	g_autofree char *text = NULL;

	run = cli_run("ping", "--format", "prom", "-o", prom, "--timeout", "1", "--inventory",
	              inventory, "--name", "agent00", "--name", "fake-close", NULL);
	g_assert_cmpint(run->status, ==, 3);
	g_assert_true(g_file_get_contents(prom, &text, NULL, NULL));
	g_assert_nonnull(strstr(text, "# TYPE guestbench_up gauge\n"));
	g_assert_nonnull(
	    strstr(text, "guestbench_up{guest=\"agent00\",target=\"agent00.sock\"} 1\n"));
	g_assert_nonnull(strstr(text, "guestbench_up{guest=\"fake-close\""));
	g_assert_nonnull(strstr(text, "} 0\n"));
	g_unlink(prom);
}

static void test_fleet_deadline(void)
{
	g_autoptr(Run) run = NULL;
	g_autoptr(GHashTable) map = NULL;

	/* -j 1 in inventory order: the hung guest holds the only slot until the deadline */
	run = cli_run("ping", "-j", "1", "--timeout", "30", "--deadline", "1", "--format", "json",
	              "--inventory", inventory, "--name", "agent00", "--name", "fake-hung",
	              "--name", "fake-slow", NULL);
	g_assert_cmpint(run->status, ==, 3);
	g_assert_cmpfloat(run->elapsed, <, 4.0);
	map = statuses(run->out, 3);
	g_assert_cmpstr(g_hash_table_lookup(map, "agent00"), ==, "ok");
	g_assert_cmpstr(g_hash_table_lookup(map, "fake-hung"), ==, "timeout");
	g_assert_cmpstr(g_hash_table_lookup(map, "fake-slow"), ==, "error");
	g_assert_nonnull(strstr(run->out, "not started (deadline)"));
	g_assert_nonnull(strstr(run->out, "overall deadline of 1 s"));
}

static void test_fleet_bad_inventory(void)
{
	g_autofree char *bad = g_build_filename(tmpdir, "bad.ini", NULL);
	g_autofree char *at = g_strdup_printf("@%s", bad);
	g_autoptr(Run) run = NULL;
	g_autofree char *want = g_strdup_printf("%s:2: unknown key 'tag'", bad);

	g_assert_true(g_file_set_contents(bad, "[guest a]\ntag=x\n", -1, NULL));
	run = cli_run("ping", at, NULL);
	g_assert_cmpint(run->status, ==, 2);
	g_assert_nonnull(strstr(run->err, want));
	g_assert_cmpstr(run->out, ==, "");
	g_unlink(bad);
}

int main(int argc, char **argv)
{
	int rc;

	g_test_init(&argc, &argv, NULL);
	tmpdir = g_dir_make_tmp("gb-fleet-XXXXXX", NULL);
	for (guint i = 0; i < FAKE_LAST; i++)
		fake_start(&fakes[i], i);
	agents_start();
	write_inventory();

	g_test_add_func("/fleet/inventory", test_fleet_inventory);
	g_test_add_func("/fleet/selection", test_fleet_selection);
	g_test_add_func("/fleet/prom", test_fleet_prom);
	g_test_add_func("/fleet/deadline", test_fleet_deadline);
	g_test_add_func("/fleet/bad-inventory", test_fleet_bad_inventory);
	rc = g_test_run();

	for (guint i = 0; i < N_AGENTS; i++) {
		g_subprocess_send_signal(agents[i], SIGTERM);
		g_subprocess_wait(agents[i], NULL, NULL);
		g_clear_object(&agents[i]);
	}
	{
		g_autoptr(GDir) dir = g_dir_open(tmpdir, 0, NULL);
		const char *name;
		while (dir != NULL && (name = g_dir_read_name(dir)) != NULL) {
			g_autofree char *path = g_build_filename(tmpdir, name, NULL);
			g_unlink(path);
		}
		g_rmdir(tmpdir);
	}
	return rc;
}
