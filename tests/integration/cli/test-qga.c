/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"

#include <gio/gio.h>
#include <glib/gstdio.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "guestbench-protocol.h"
#include "gb-test-net.h"

/*
 * The qga: target against a real qemu-ga on a unix socket, running the real
 * agent through guest-exec (as root here, guest-exec runs on this machine),
 * compared with the same agent on its own socket.
 */

static char *tmpdir;
static char *qga_sock;   /* a qemu-ga with everything enabled */
static char *agent_sock; /* the agent on its own socket */
static GPtrArray *procs; /* GSubprocess, stopped at the end */

/* The children die with us even when an assertion aborts the test. */
static void child_setup(gpointer user_data)
{
	prctl(PR_SET_PDEATHSIG, SIGKILL);
}

static gboolean socket_ready(const char *path)
{
	struct sockaddr_un addr = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	gboolean ok;

	g_strlcpy(addr.sun_path, path, sizeof(addr.sun_path));
	ok = connect(fd, (struct sockaddr *)&addr, sizeof(addr)) == 0;
	close(fd);
	return ok;
}

static void spawn_listener(const char *const *argv, const char *path)
{
	g_autoptr(GSubprocessLauncher) launcher =
	    g_subprocess_launcher_new(G_SUBPROCESS_FLAGS_STDOUT_SILENCE);
	g_autoptr(GError) error = NULL;
	GSubprocess *proc;

	g_subprocess_launcher_set_child_setup(launcher, child_setup, NULL, NULL);
	proc = g_subprocess_launcher_spawnv(launcher, argv, &error);
	g_assert_no_error(error);
	g_ptr_array_add(procs, proc);
	for (guint i = 0; i < 500; i++) {
		if (socket_ready(path))
			return;
		g_usleep(10 * 1000);
	}
	g_error("%s did not listen on %s", argv[0], path);
}

/* qemu-ga -m unix-listen with its own state dir; extra (may be NULL) e.g. "--block-rpcs=X". */
static char *start_qga(const char *name, const char *extra)
{
	const char *qga = g_getenv("GB_QEMU_GA");
	g_autofree char *statedir = g_build_filename(tmpdir, name, NULL);
	g_autofree char *pidfile = g_strdup_printf("%s/%s.pid", tmpdir, name);
	char *sock = g_strdup_printf("%s/%s.sock", tmpdir, name);
	const char *argv[] = { qga,      "-m", "unix-listen", "-p",  sock, "-t",
		               statedir, "-f", pidfile,       extra, NULL };

	g_assert_cmpint(g_mkdir(statedir, 0700), ==, 0);
	spawn_listener(argv, sock);
	return sock;
}

static char *write_script(const char *name, const char *body)
{
	char *path = g_build_filename(tmpdir, name, NULL);
	g_autofree char *text = g_strdup_printf("#!/bin/sh\n%s\n", body);
	g_autoptr(GError) error = NULL;

	g_file_set_contents(path, text, -1, &error);
	g_assert_no_error(error);
	g_assert_cmpint(g_chmod(path, 0755), ==, 0);
	return path;
}

typedef struct {
	int status;
	char *out;
	char *err;
	double elapsed;
	JsonNode *doc;
} CliRun;

static void cli_run_free(CliRun *run)
{
	g_free(run->out);
	g_free(run->err);
	if (run->doc != NULL)
		json_node_unref(run->doc);
	g_free(run);
}
G_DEFINE_AUTOPTR_CLEANUP_FUNC(CliRun, cli_run_free)

/* Runs the CLI with the NULL-terminated arguments; parses stdout when it is JSON. */
static CliRun *cli_run(const char *first, ...)
{
	CliRun *run = g_new0(CliRun, 1);
	g_autoptr(GPtrArray) argv = g_ptr_array_new();
	g_autoptr(GSubprocess) proc = NULL;
	g_autoptr(GSubprocessLauncher) launcher = NULL;
	g_autoptr(GError) error = NULL;
	gint64 start = g_get_monotonic_time();
	va_list ap;

	g_ptr_array_add(argv, (gpointer)g_getenv("GB_CLI"));
	va_start(ap, first);
	for (const char *arg = first; arg != NULL; arg = va_arg(ap, const char *))
		g_ptr_array_add(argv, (gpointer)arg);
	va_end(ap);
	g_ptr_array_add(argv, NULL);
	launcher = g_subprocess_launcher_new(G_SUBPROCESS_FLAGS_STDOUT_PIPE |
	                                     G_SUBPROCESS_FLAGS_STDERR_PIPE);
	proc = g_subprocess_launcher_spawnv(launcher, (const char *const *)argv->pdata, &error);
	g_assert_no_error(error);
	g_subprocess_communicate_utf8(proc, NULL, NULL, &run->out, &run->err, &error);
	g_assert_no_error(error);
	run->status = g_subprocess_get_if_exited(proc) ? g_subprocess_get_exit_status(proc) : -1;
	run->elapsed = (g_get_monotonic_time() - start) / 1e6;
	if (run->out[0] == '{')
		run->doc = gb_json_parse(run->out, strlen(run->out), NULL);
	g_test_message("exit %d after %.2f s; stderr: %s", run->status, run->elapsed, run->err);
	return run;
}

/* guests[i] of the --format json document. */
static JsonObject *doc_guest(CliRun *run, guint i)
{
	JsonObject *doc = NULL;
	JsonArray *guests = NULL;
	JsonObject *guest = NULL;

	g_assert_nonnull(run->doc);
	g_assert_true(gb_json_node_get_object(run->doc, "doc", &doc, NULL));
	g_assert_true(gb_json_get_array(doc, "guests", GB_JSON_REQUIRED, &guests, NULL));
	g_assert_cmpuint(json_array_get_length(guests), >, i);
	g_assert_true(
	    gb_json_node_get_object(json_array_get_element(guests, i), "guest", &guest, NULL));
	return guest;
}

static const char *guest_string(CliRun *run, guint i, const char *member)
{
	const char *val = NULL;

	g_assert_true(gb_json_get_string(doc_guest(run, i), member, GB_JSON_OPTIONAL, &val, NULL));
	return val;
}

static JsonObject *guest_result(CliRun *run, guint i)
{
	JsonObject *result = NULL;

	g_assert_cmpstr(guest_string(run, i, "status"), ==, "ok");
	g_assert_true(
	    gb_json_get_object(doc_guest(run, i), "result", GB_JSON_REQUIRED, &result, NULL));
	return result;
}

static void assert_guest_error(CliRun *run, const char *status, const char *needle)
{
	const char *error = guest_string(run, 0, "error");

	g_assert_cmpint(run->status, ==, 3);
	g_assert_cmpstr(guest_string(run, 0, "status"), ==, status);
	g_assert_nonnull(error);
	if (strstr(error, needle) == NULL)
		g_error("error '%s' lacks '%s'", error, needle);
}

static char *qga_target(const char *sock)
{
	return g_strdup_printf("qga:%s", sock);
}

static void test_qga_facts_equal(void)
{
	g_autofree char *target = qga_target(qga_sock);
	g_autoptr(CliRun) via_qga =
	    cli_run("facts", "--format", "json", "--qga-agent", g_getenv("GB_AGENT"), target, NULL);
	g_autoptr(CliRun) direct = cli_run("facts", "--format", "json", agent_sock, NULL);
	JsonObject *a;
	JsonObject *b;
	g_autoptr(JsonNode) na = NULL;
	g_autoptr(JsonNode) nb = NULL;

	g_assert_cmpint(via_qga->status, ==, 0);
	g_assert_cmpint(direct->status, ==, 0);
	a = guest_result(via_qga, 0);
	b = guest_result(direct, 0);
	g_assert_true(gb_json_has(a, "cpu"));
	g_assert_true(gb_json_has(a, "block"));
	/* steal time is sampled over a window: the only part that differs between two runs */
	json_object_remove_member(a, "steal");
	json_object_remove_member(b, "steal");
	na = json_node_init_object(json_node_alloc(), a);
	nb = json_node_init_object(json_node_alloc(), b);
	g_assert_true(json_node_equal(na, nb));
}

/* Same members with the same types, recursively (values of numbers may differ). */
static void assert_same_shape(JsonNode *a, JsonNode *b, const char *where)
{
	g_assert_cmpint(JSON_NODE_TYPE(a), ==, JSON_NODE_TYPE(b));
	if (JSON_NODE_HOLDS_OBJECT(a)) {
		JsonObject *oa = json_node_get_object(a);
		JsonObject *ob = json_node_get_object(b);
		g_autoptr(GList) members = json_object_get_members(oa);

		g_assert_cmpuint(json_object_get_size(oa), ==, json_object_get_size(ob));
		for (GList *l = members; l != NULL; l = l->next) {
			g_autofree char *sub = g_strdup_printf("%s/%s", where, (char *)l->data);
			if (!json_object_has_member(ob, l->data))
				g_error("%s missing", sub);
			assert_same_shape(json_object_get_member(oa, l->data),
			                  json_object_get_member(ob, l->data), sub);
		}
	} else if (JSON_NODE_HOLDS_ARRAY(a)) {
		JsonArray *aa = json_node_get_array(a);
		JsonArray *ab = json_node_get_array(b);

		g_assert_cmpuint(json_array_get_length(aa), ==, json_array_get_length(ab));
		for (guint i = 0; i < json_array_get_length(aa); i++) {
			g_autofree char *sub = g_strdup_printf("%s/%u", where, i);
			assert_same_shape(json_array_get_element(aa, i),
			                  json_array_get_element(ab, i), sub);
		}
	} else if (JSON_NODE_HOLDS_VALUE(a) && json_node_get_value_type(a) == G_TYPE_STRING &&
	           !g_str_equal(where, "/timestamp") && !g_str_equal(where, "/finished")) {
		/* units, metric names, labels, cipher: the same words both ways */
		if (g_strcmp0(json_node_get_string(a), json_node_get_string(b)) != 0 &&
		    strstr(where, "timestamp") == NULL && strstr(where, "/facts/") == NULL)
			g_error("%s: '%s' vs '%s'", where, json_node_get_string(a),
			        json_node_get_string(b));
	}
}

static void test_qga_bench_aes_shape(void)
{
	g_autofree char *target = qga_target(qga_sock);
	g_autoptr(CliRun) via_qga =
	    cli_run("bench", "aes", "--seconds", "0.2", "--sizes", "16", "--no-save", "--format",
	            "json", "--qga-agent", g_getenv("GB_AGENT"), target, NULL);
	g_autoptr(CliRun) direct = cli_run("bench", "aes", "--seconds", "0.2", "--sizes", "16",
	                                   "--no-save", "--format", "json", agent_sock, NULL);
	JsonObject *a;
	JsonObject *b;
	g_autoptr(JsonNode) na = NULL;
	g_autoptr(JsonNode) nb = NULL;
	JsonArray *metrics = NULL;

	g_assert_cmpint(via_qga->status, ==, 0);
	g_assert_cmpint(direct->status, ==, 0);
	a = guest_result(via_qga, 0);
	b = guest_result(direct, 0);
	g_assert_true(gb_json_get_array(a, "metrics", GB_JSON_REQUIRED, &metrics, NULL));
	g_assert_cmpuint(json_array_get_length(metrics), ==, 1);
	na = json_node_init_object(json_node_alloc(), a);
	nb = json_node_init_object(json_node_alloc(), b);
	assert_same_shape(na, nb, "");
}

/* With --timeout 1 a 2 s benchmark only finishes because each poll re-arms the deadline. */
static void test_qga_bench_keepalive(void)
{
	g_autofree char *target = qga_target(qga_sock);
	g_autoptr(CliRun) run = cli_run("bench", "aes", "--seconds", "0.7", "--sizes", "16,64,256",
	                                "--no-save", "--format", "json", "--timeout", "1",
	                                "--qga-agent", g_getenv("GB_AGENT"), target, NULL);

	g_assert_cmpint(run->status, ==, 0);
	g_assert_cmpfloat(run->elapsed, >, 2.0);
	guest_result(run, 0);
}

/* The figure of one direction, or -1. */
static double net_throughput(JsonObject *result, const char *direction)
{
	JsonArray *metrics = NULL;

	g_assert_true(gb_json_get_array(result, "metrics", GB_JSON_REQUIRED, &metrics, NULL));
	for (guint i = 0; i < json_array_get_length(metrics); i++) {
		JsonObject *m = json_array_get_object_element(metrics, i);
		JsonObject *labels = NULL;
		const char *name = NULL;
		const char *dir = NULL;
		double value = -1;

		if (gb_json_get_string(m, "metric", GB_JSON_REQUIRED, &name, NULL) &&
		    g_strcmp0(name, "tcp-throughput") == 0 &&
		    gb_json_get_object(m, "labels", GB_JSON_REQUIRED, &labels, NULL) &&
		    gb_json_get_string(labels, "direction", GB_JSON_REQUIRED, &dir, NULL) &&
		    g_strcmp0(dir, direction) == 0 &&
		    gb_json_get_double(m, "value", GB_JSON_REQUIRED, 0, G_MAXDOUBLE, &value, NULL))
			return value;
	}
	return -1;
}

/*
 * bench net through qemu-ga: the one-shot agent answers gb-bench-start only
 * when its job is over, so the host end has to run while the request is still
 * out, in both roles.
 */
static void test_qga_bench_net(void)
{
	g_autofree char *target = qga_target(qga_sock);
	guint port = gb_test_free_port();
	g_autofree char *addr = g_strdup_printf("127.0.0.1:%u", port);
	g_autoptr(CliRun) guest_listens = NULL;
	g_autoptr(CliRun) host_listens = NULL;
	JsonObject *result;

	guest_listens =
	    cli_run("bench", "net", "--guest-listen", addr, "--host-connect", addr, "--seconds",
	            "1", "--omit", "0", "--direction", "both", "--no-save", "--format", "json",
	            "--qga-agent", g_getenv("GB_AGENT"), target, NULL);
	if (guest_listens->status != 0)
		g_error("guest-listen through qga: exit %d: %s%s", guest_listens->status,
		        guest_listens->err, guest_listens->out);
	result = guest_result(guest_listens, 0);
	g_assert_cmpfloat(net_throughput(result, "host-to-guest"), >, 0);
	g_assert_cmpfloat(net_throughput(result, "guest-to-host"), >, 0);

	port = gb_test_free_port();
	g_free(addr);
	addr = g_strdup_printf("127.0.0.1:%u", port);
	host_listens = cli_run("bench", "net", "--host-listen", addr, "--seconds", "1", "--omit",
	                       "0", "--direction", "guest-to-host", "--no-save", "--format", "json",
	                       "--qga-agent", g_getenv("GB_AGENT"), target, NULL);
	if (host_listens->status != 0)
		g_error("host-listen through qga: exit %d: %s", host_listens->status,
		        host_listens->err);
	result = guest_result(host_listens, 0);
	g_assert_cmpfloat(net_throughput(result, "guest-to-host"), >, 0);
	g_assert_cmpfloat(net_throughput(result, "host-to-guest"), <, 0);
}

/* The pid of the one-shot agent whose command line holds marker, or 0. */
static gint64 find_oneshot(const char *marker)
{
	g_autoptr(GDir) dir = g_dir_open("/proc", 0, NULL);
	const char *name;

	while (dir != NULL && (name = g_dir_read_name(dir)) != NULL) {
		g_autofree char *path = NULL;
		g_autofree char *cmdline = NULL;
		gsize len = 0;
		gboolean oneshot = FALSE;
		gboolean marked = FALSE;

		if (!g_ascii_isdigit(name[0]))
			continue;
		path = g_strdup_printf("/proc/%s/cmdline", name);
		if (!g_file_get_contents(path, &cmdline, &len, NULL))
			continue;
		for (gsize off = 0; off < len; off += strlen(cmdline + off) + 1) {
			oneshot |= g_strcmp0(cmdline + off, "--oneshot") == 0;
			marked |= strstr(cmdline + off, marker) != NULL;
		}
		if (oneshot && marked)
			return g_ascii_strtoll(name, NULL, 10);
	}
	return 0;
}

/*
 * Ctrl-C while a benchmark runs through qemu-ga: the job id is not known
 * until the one-shot agent is done, so the CLI signals that agent through
 * guest-exec; the job ends as cancelled at once instead of running on in
 * the guest after guestbench has given up on it.
 */
static void test_qga_bench_interrupt(void)
{
	g_autofree char *target = qga_target(qga_sock);
	const char *argv[] = { g_getenv("GB_CLI"),
		               "bench",
		               "aes",
		               "--seconds",
		               "20.25",
		               "--sizes",
		               "16",
		               "--no-save",
		               "--format",
		               "json",
		               "--qga-agent",
		               g_getenv("GB_AGENT"),
		               target,
		               NULL };
	g_autoptr(GSubprocess) proc = NULL;
	g_autoptr(GError) error = NULL;
	g_autofree char *out = NULL;
	g_autoptr(JsonNode) doc = NULL;
	CliRun run = { 0 };
	gint64 pid = 0;

	proc = g_subprocess_newv(argv, G_SUBPROCESS_FLAGS_STDOUT_PIPE, &error);
	g_assert_no_error(error);
	for (guint i = 0; i < 1000 && pid == 0; i++) {
		pid = find_oneshot("20.25");
		if (pid == 0)
			g_usleep(10 * 1000);
	}
	g_assert_cmpint(pid, >, 0);
	g_usleep(300 * 1000); /* the job is running, not starting */
	g_subprocess_send_signal(proc, SIGINT);
	g_subprocess_communicate_utf8(proc, NULL, NULL, &out, NULL, &error);
	g_assert_no_error(error);
	g_assert_true(g_subprocess_get_if_exited(proc));
	g_assert_cmpint(g_subprocess_get_exit_status(proc), ==, 130);
	run.out = out;
	run.doc = doc = gb_json_parse(out, strlen(out), NULL);
	run.status = 3;
	/* not "interrupted (cancelling took longer than 2 s)": the job was cancelled */
	g_assert_cmpstr(guest_string(&run, 0, "error"), ==, "cancelled");
	/* and the agent in the "guest" is gone, long before its 20 s were up */
	for (guint i = 0; i < 500 && find_oneshot("20.25") == pid; i++)
		g_usleep(10 * 1000);
	g_assert_cmpint(find_oneshot("20.25"), ==, 0);
}

static void test_qga_ping_info(void)
{
	g_autofree char *target = qga_target(qga_sock);
	g_autoptr(CliRun) ping =
	    cli_run("ping", "--format", "json", "--qga-agent", g_getenv("GB_AGENT"), target, NULL);
	g_autoptr(CliRun) info = cli_run("info", "--qga-agent", g_getenv("GB_AGENT"), target, NULL);

	g_assert_cmpint(ping->status, ==, 0);
	g_assert_cmpstr(guest_string(ping, 0, "status"), ==, "ok");
	/* the agent's own guest-info, not qemu-ga's: it lists gb-get-facts */
	g_assert_cmpint(info->status, ==, 0);
	g_assert_nonnull(strstr(info->out, GB_VERSION));
}

static void test_qga_blocked(void)
{
	g_autofree char *sock = start_qga("blocked", "--block-rpcs=guest-exec");
	g_autofree char *target = qga_target(sock);
	g_autoptr(CliRun) run =
	    cli_run("facts", "--format", "json", "--qga-agent", g_getenv("GB_AGENT"), target, NULL);

	assert_guest_error(run, "error", "qemu-ga has guest-exec disabled");
	assert_guest_error(run, "error", "--block-rpcs");
}

static void test_qga_missing_agent(void)
{
	g_autofree char *target = qga_target(qga_sock);
	g_autoptr(CliRun) run = cli_run("facts", "--format", "json", "--qga-agent",
	                                "/nonexistent/guestbench-agent", target, NULL);

	assert_guest_error(run, "error",
	                   "guestbench-agent is not installed in the guest at "
	                   "/nonexistent/guestbench-agent");
}

static void test_qga_agent_fails(void)
{
	g_autofree char *script = write_script("fails.sh", "echo 'agent: out of luck' >&2\nexit 3");
	g_autofree char *target = qga_target(qga_sock);
	g_autoptr(CliRun) run =
	    cli_run("facts", "--format", "json", "--qga-agent", script, target, NULL);
	g_autofree char *needle = g_strdup_printf(
	    "gb-get-facts: %s in the guest exited with status 3: agent: out of luck", script);

	assert_guest_error(run, "error", needle);
}

/*
 * The agent's stderr is quoted raw in the error (the JSON document carries it
 * as it is) and escaped where it is shown: the table, and --verbose's log
 * lines (main.c's log writer), which go to stderr: stdout holds only the table.
 */
static void test_qga_agent_escapes(void)
{
	g_autofree char *script =
	    write_script("escapes.sh", "printf '\\033[2J\\033]0;pwned\\007 boom\\n' >&2\nexit 3");
	g_autofree char *target = qga_target(qga_sock);
	g_autoptr(CliRun) json =
	    cli_run("ping", "--format", "json", "--qga-agent", script, target, NULL);
	g_autoptr(CliRun) verbose =
	    cli_run("ping", "--verbose", "--qga-agent", script, target, NULL);
	g_autofree char *want =
	    g_strdup_printf(" %s: error: guest-ping: %s in the guest exited with status 3: "
	                    "\\x1b[2J\\x1b]0;pwned\\x07 boom",
	                    target, script);
	g_auto(GStrv) lines = NULL;
	guint n_debug = 0;

	assert_guest_error(json, "error", "status 3: \x1b[2J\x1b]0;pwned\a boom");
	g_assert_cmpint(verbose->status, ==, 3);
	g_assert_null(strchr(verbose->out, '\x1b'));
	g_assert_null(strchr(verbose->out, '\a'));
	g_assert_null(strchr(verbose->err, '\x1b'));
	/* the table's cell */
	g_assert_nonnull(strstr(verbose->out, "status 3: \\x1b[2J\\x1b]0;pwned\\x07 boom\n"));
	g_assert_null(strstr(verbose->out, "DEBUG"));
	/* the runner's debug line: "** (guestbench:PID): DEBUG: TIME: TARGET: error: ..." */
	lines = g_strsplit(verbose->err, "\n", -1);
	for (guint i = 0; lines[i] != NULL; i++) {
		const char *debug = strstr(lines[i], "DEBUG: ");
		if (debug == NULL || strstr(debug, ": error: guest-ping: ") == NULL)
			continue;
		g_assert_cmpstr(strchr(debug + strlen("DEBUG: "), ' '), ==, want);
		n_debug++;
	}
	g_assert_cmpuint(n_debug, ==, 1);
}

static void test_qga_agent_killed(void)
{
	g_autofree char *script = write_script("killed.sh", "kill -9 $$");
	g_autofree char *target = qga_target(qga_sock);
	g_autoptr(CliRun) run =
	    cli_run("facts", "--format", "json", "--qga-agent", script, target, NULL);

	assert_guest_error(run, "error", "was killed by signal 9");
}

static void test_qga_agent_garbage(void)
{
	g_autofree char *script = write_script("garbage.sh", "printf '{\"return\": {}}{\"ret'");
	g_autofree char *target = qga_target(qga_sock);
	g_autoptr(CliRun) run =
	    cli_run("facts", "--format", "json", "--qga-agent", script, target, NULL);

	assert_guest_error(run, "error", "invalid reply to gb-get-facts");
}

static void test_qga_reply_limit(void)
{
	/* 5,022 bytes: far below qemu-ga's 16 MiB, over a ping's own limit */
	g_autofree char *script =
	    write_script("ping-big.sh", "printf '{\"return\": {\"x\": \"'\n"
	                                "head -c 5000 /dev/zero | tr '\\0' A\n"
	                                "printf '\"}}\\n'");
	g_autofree char *target = qga_target(qga_sock);
	g_autoptr(CliRun) run =
	    cli_run("ping", "--format", "json", "--qga-agent", script, target, NULL);

	assert_guest_error(run, "error",
	                   "invalid reply to guest-ping: 5022 bytes, over the limit of 4096");
}

static void test_qga_truncated(void)
{
	/* qemu-ga keeps 16 MiB of output and flags the rest */
	g_autofree char *script = write_script("big.sh", "head -c 17000000 /dev/zero");
	g_autofree char *target = qga_target(qga_sock);
	g_autoptr(CliRun) run = cli_run("facts", "--format", "json", "--timeout", "30",
	                                "--qga-agent", script, target, NULL);

	assert_guest_error(run, "error", "truncated by qemu-ga");
}

static void test_qga_timeout(void)
{
	g_autofree char *script = write_script("slow.sh", "sleep 3");
	g_autofree char *target = qga_target(qga_sock);
	g_autoptr(CliRun) run = cli_run("facts", "--format", "json", "--timeout", "0.5",
	                                "--qga-agent", script, target, NULL);

	assert_guest_error(run, "timeout", "waiting for gb-get-facts through qemu-ga");
	/* a facts call is not a benchmark: polling does not extend its deadline */
	g_assert_cmpfloat(run->elapsed, <, 2.5);
}

/*
 * A one-shot agent answers gb-bench-start when its job is over: a final status that says
 * "running" is an error at once, not a job to poll (--deadline only guards the test).
 */
static void test_qga_bench_running_final(void)
{
	g_autofree char *script = write_script(
	    "running.sh", "echo '{\"return\": {\"job\": 1, \"test\": \"aes\", \"state\": "
	                  "\"running\", \"progress\": 0.1}}'");
	g_autofree char *target = qga_target(qga_sock);
	g_autoptr(CliRun) run =
	    cli_run("bench", "aes", "--seconds", "0.5", "--no-save", "--format", "json",
	            "--timeout", "2", "--deadline", "20", "--qga-agent", script, target, NULL);

	assert_guest_error(run, "error", "the one-shot agent exited with job 1 still running");
	g_assert_cmpfloat(run->elapsed, <, 10.0);
}

/*
 * guest-exec-status answering {"exited": false} forever (the one-shot agent never ends):
 * each answer re-arms --timeout, the job's bound (2 x 0.5 s + 30 s) ends it, and the
 * agent gets SIGTERM (--deadline only guards the test).
 */
static void test_qga_bench_never_exits(void)
{
	g_autofree char *script = write_script("never.sh", "exec sleep 100");
	g_autofree char *target = qga_target(qga_sock);
	g_autoptr(CliRun) run = cli_run("bench", "aes", "--sizes", "16", "--seconds", "0.5",
	                                "--no-save", "--format", "json", "--timeout", "2",
	                                "--deadline", "60", "--qga-agent", script, target, NULL);

	assert_guest_error(
	    run, "timeout",
	    "the job ran past its bound of 31 s (2 x 0.5 s of work asked for + 30 s)");
	/* the SIGTERM reached it: not "cancelling took longer" */
	assert_guest_error(run, "timeout", "cancelled (before the job had started)");
	g_assert_cmpfloat(run->elapsed, >=, 31.0);
	g_assert_cmpfloat(run->elapsed, <, 31.0 + 2.0 + 6.0);
}

static void test_qga_dead_socket(void)
{
	g_autofree char *target = g_strdup_printf("qga:%s/nobody.sock", tmpdir);
	g_autoptr(CliRun) run = cli_run("facts", "--format", "json", target, NULL);

	assert_guest_error(run, "error", "cannot connect");
}

/* The agent's side: a one-shot gb-bench-start waits for its job; SIGTERM cancels it. */
static void test_qga_oneshot_bench(void)
{
	const char *done_argv[] = { g_getenv("GB_AGENT"), "--oneshot",
		                    "{\"execute\": \"gb-bench-start\", \"id\": 5, \"arguments\": "
		                    "{\"test\": \"aes\", \"params\": {\"seconds\": 0.2, "
		                    "\"sizes\": [16]}}}",
		                    NULL };
	const char *long_argv[] = { g_getenv("GB_AGENT"), "--oneshot",
		                    "{\"execute\": \"gb-bench-start\", \"arguments\": "
		                    "{\"test\": \"aes\", \"params\": {\"seconds\": 30, "
		                    "\"sizes\": [16]}}}",
		                    NULL };
	const char *dry_argv[] = { g_getenv("GB_AGENT"), "--oneshot",
		                   "{\"execute\": \"gb-bench-start\", \"arguments\": "
		                   "{\"test\": \"aes\", \"params\": {\"dry_run\": true}}}",
		                   NULL };
	g_autoptr(GSubprocess) done =
	    g_subprocess_newv(done_argv, G_SUBPROCESS_FLAGS_STDOUT_PIPE, NULL);
	g_autoptr(GSubprocess) cancelled =
	    g_subprocess_newv(long_argv, G_SUBPROCESS_FLAGS_STDOUT_PIPE, NULL);
	g_autoptr(GSubprocess) dry =
	    g_subprocess_newv(dry_argv, G_SUBPROCESS_FLAGS_STDOUT_PIPE, NULL);
	g_autofree char *out = NULL;
	gint64 start = g_get_monotonic_time();

	g_assert_true(g_subprocess_communicate_utf8(done, NULL, NULL, &out, NULL, NULL));
	g_assert_true(g_str_has_prefix(out, "{\"return\":{\"job\":1,"));
	g_assert_nonnull(strstr(out, "\"state\":\"done\""));
	g_assert_nonnull(strstr(out, "\"metrics\":["));
	g_assert_nonnull(strstr(out, "\"id\":5}"));
	g_clear_pointer(&out, g_free);

	g_assert_true(g_subprocess_communicate_utf8(dry, NULL, NULL, &out, NULL, NULL));
	g_assert_nonnull(strstr(out, "\"dry_run\":true"));
	g_assert_null(strstr(out, "\"state\""));
	g_clear_pointer(&out, g_free);

	g_usleep(300 * 1000);
	g_subprocess_send_signal(cancelled, SIGTERM);
	g_assert_true(g_subprocess_communicate_utf8(cancelled, NULL, NULL, &out, NULL, NULL));
	g_assert_nonnull(strstr(out, "\"state\":\"cancelled\""));
	g_assert_true(g_subprocess_get_if_exited(cancelled));
	g_assert_cmpint(g_subprocess_get_exit_status(cancelled), ==, 0);
	/* cancelled within the benchmark's 10 ms check, not after its 30 s */
	g_assert_cmpfloat((g_get_monotonic_time() - start) / 1e6, <, 10.0);
}

static void test_qga_inventory(void)
{
	g_autofree char *inv = g_build_filename(tmpdir, "fleet.ini", NULL);
	g_autofree char *text = g_strdup_printf("[guest via-qga]\ntarget=qga:%s\nagent_path=%s\n\n"
	                                        "[guest direct]\ntarget=%s\n",
	                                        qga_sock, g_getenv("GB_AGENT"), agent_sock);
	g_autofree char *at = g_strdup_printf("@%s", inv);
	g_autoptr(CliRun) run = NULL;
	g_autoptr(CliRun) overridden = NULL;

	g_file_set_contents(inv, text, -1, NULL);
	run = cli_run("ping", "--format", "json", at, NULL);
	g_assert_cmpint(run->status, ==, 0);
	g_assert_cmpstr(guest_string(run, 0, "name"), ==, "via-qga");
	g_assert_cmpstr(guest_string(run, 0, "status"), ==, "ok");
	g_assert_cmpstr(guest_string(run, 1, "status"), ==, "ok");
	/* the command line wins over agent_path= */
	overridden =
	    cli_run("ping", "--format", "json", "--qga-agent", "/nonexistent/agent", at, NULL);
	assert_guest_error(overridden, "error", "/nonexistent/agent");
	g_assert_cmpstr(guest_string(overridden, 1, "status"), ==, "ok");
}

/* The temporary directory: sockets, scripts, qemu-ga's state dirs (one level deep). */
static void rm_rf(const char *path)
{
	g_autoptr(GDir) dir = g_dir_open(path, 0, NULL);
	const char *name;

	while (dir != NULL && (name = g_dir_read_name(dir)) != NULL) {
		g_autofree char *child = g_build_filename(path, name, NULL);
		if (g_file_test(child, G_FILE_TEST_IS_DIR) &&
		    !g_file_test(child, G_FILE_TEST_IS_SYMLINK))
			rm_rf(child);
		else
			g_unlink(child);
	}
	g_rmdir(path);
}

static void stop_all(void)
{
	for (guint i = 0; i < procs->len; i++) {
		GSubprocess *proc = g_ptr_array_index(procs, i);
		g_subprocess_send_signal(proc, SIGTERM);
		g_subprocess_wait(proc, NULL, NULL);
	}
	g_ptr_array_set_size(procs, 0);
}

int main(int argc, char **argv)
{
	g_autoptr(GError) error = NULL;
	int rc;

	g_test_init(&argc, &argv, NULL);
	if (g_getenv("GB_QEMU_GA") == NULL || g_getenv("GB_AGENT") == NULL) {
		g_test_skip("needs GB_QEMU_GA and GB_AGENT");
		return g_test_run();
	}
	/* guest-exec runs processes as qemu-ga's user: the real thing needs root, as in a guest */
	if (geteuid() != 0) {
		g_test_skip("qemu-ga's guest-exec needs root here");
		return g_test_run();
	}
	tmpdir = g_dir_make_tmp("gb-qga-XXXXXX", &error);
	g_assert_no_error(error);
	procs = g_ptr_array_new_with_free_func(g_object_unref);
	qga_sock = start_qga("qga", NULL);
	agent_sock = g_build_filename(tmpdir, "agent.sock", NULL);
	{
		const char *agent_argv[] = { g_getenv("GB_AGENT"), "-m", "unix-listen", "-p",
			                     agent_sock,           NULL };
		spawn_listener(agent_argv, agent_sock);
	}

	g_test_add_func("/qga/facts-equal", test_qga_facts_equal);
	g_test_add_func("/qga/bench-aes-shape", test_qga_bench_aes_shape);
	g_test_add_func("/qga/bench-keepalive", test_qga_bench_keepalive);
	g_test_add_func("/qga/bench-net", test_qga_bench_net);
	g_test_add_func("/qga/bench-interrupt", test_qga_bench_interrupt);
	g_test_add_func("/qga/ping-info", test_qga_ping_info);
	g_test_add_func("/qga/blocked", test_qga_blocked);
	g_test_add_func("/qga/missing-agent", test_qga_missing_agent);
	g_test_add_func("/qga/agent-fails", test_qga_agent_fails);
	g_test_add_func("/qga/agent-escapes", test_qga_agent_escapes);
	g_test_add_func("/qga/agent-killed", test_qga_agent_killed);
	g_test_add_func("/qga/agent-garbage", test_qga_agent_garbage);
	g_test_add_func("/qga/reply-limit", test_qga_reply_limit);
	g_test_add_func("/qga/truncated", test_qga_truncated);
	g_test_add_func("/qga/timeout", test_qga_timeout);
	g_test_add_func("/qga/bench-running-final", test_qga_bench_running_final);
	g_test_add_func("/qga/bench-never-exits", test_qga_bench_never_exits);
	g_test_add_func("/qga/dead-socket", test_qga_dead_socket);
	g_test_add_func("/qga/inventory", test_qga_inventory);
	g_test_add_func("/qga/oneshot-bench", test_qga_oneshot_bench);
	rc = g_test_run();

	stop_all();
	g_ptr_array_unref(procs);
	rm_rf(tmpdir);
	g_free(tmpdir);
	g_free(qga_sock);
	g_free(agent_sock);
	return rc;
}
