/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * "guestbench bench" end to end: the real agent on a unix socket (scratch dir
 * under /var/tmp, where O_DIRECT works) and the real CLI. Net runs on
 * 127.0.0.1 only. No speed is asserted: only shapes, statuses and files.
 */
#include "config.h"

#include <gio/gio.h>
#include <glib/gstdio.h>
#include <netinet/in.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "guestbench-protocol.h"
#include "gb-test-net.h"

static char *tmpdir;
static char *sock;
static char *xdg;
static GSubprocess *agent;

/* ---- the agent --------------------------------------------------------------------- */

static void child_setup(gpointer user_data)
{
	/* an agent must not outlive a test that crashed */
	prctl(PR_SET_PDEATHSIG, SIGKILL);
}

static int unix_connect(const char *path)
{
	struct sockaddr_un addr = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	g_strlcpy(addr.sun_path, path, sizeof(addr.sun_path));
	if (connect(fd, (struct sockaddr *)&addr, sizeof(addr)) != 0) {
		close(fd);
		return -1;
	}
	return fd;
}

static void agent_start(void)
{
	g_autoptr(GError) error = NULL;
	g_autoptr(GSubprocessLauncher) launcher = g_subprocess_launcher_new(
	    G_SUBPROCESS_FLAGS_STDOUT_SILENCE | G_SUBPROCESS_FLAGS_STDERR_SILENCE);
	const char *argv[] = { g_getenv("GB_AGENT"), "-m",   "unix-listen", "-p", sock,
		               "--scratch-dir",      tmpdir, NULL };

	g_unlink(sock);
	g_subprocess_launcher_set_child_setup(launcher, child_setup, NULL, NULL);
	agent = g_subprocess_launcher_spawnv(launcher, argv, &error);
	g_assert_no_error(error);
	for (guint i = 0; i < 200; i++) {
		int fd = unix_connect(sock);
		if (fd >= 0) {
			close(fd);
			return;
		}
		g_usleep(25000);
	}
	g_assert_not_reached();
}

static void agent_stop(void)
{
	if (agent == NULL)
		return;
	g_subprocess_send_signal(agent, SIGTERM);
	g_subprocess_wait(agent, NULL, NULL);
	g_clear_object(&agent);
}

/* One request straight to the agent, the way any QGA client would. */
static JsonNode *agent_call(const char *json)
{
	g_autoptr(GError) error = NULL;
	g_autoptr(GString) line = g_string_new(NULL);
	int fd = unix_connect(sock);
	char c;

	g_assert_cmpint(fd, >=, 0);
	g_assert_cmpint(write(fd, json, strlen(json)), ==, (gssize)strlen(json));
	g_assert_cmpint(write(fd, "\n", 1), ==, 1);
	while (read(fd, &c, 1) == 1 && c != '\n')
		g_string_append_c(line, c);
	close(fd);
	{
		JsonNode *node = gb_json_parse(line->str, line->len, &error);
		g_assert_no_error(error);
		return node;
	}
}

static JsonObject *agent_return(JsonNode *reply)
{
	JsonObject *obj = json_node_get_object(reply);
	g_assert_true(json_object_has_member(obj, "return"));
	return json_object_get_object_member(obj, "return");
}

/* The state of the newest job in gb-bench-list, or NULL when there is none. */
static char *agent_last_job_state(gint64 *job_out)
{
	g_autoptr(JsonNode) reply = agent_call("{\"execute\": \"gb-bench-list\"}");
	JsonArray *jobs = json_object_get_array_member(agent_return(reply), "jobs");
	JsonObject *last;
	guint n = json_array_get_length(jobs);

	if (n == 0)
		return NULL;
	last = json_array_get_object_element(jobs, n - 1);
	if (job_out != NULL)
		*job_out = json_object_get_int_member(last, "job");
	return g_strdup(json_object_get_string_member(last, "state"));
}

/* ---- the CLI ----------------------------------------------------------------------- */

typedef struct {
	int status;
	char *out;
	char *err;
} CliRun;

static void cli_run_free(CliRun *run)
{
	g_free(run->out);
	g_free(run->err);
	g_free(run);
}
G_DEFINE_AUTOPTR_CLEANUP_FUNC(CliRun, cli_run_free)

static CliRun *cli_run_env(const char *data_home, const char *first, ...) G_GNUC_NULL_TERMINATED;

static CliRun *cli_run_env(const char *data_home, const char *first, ...)
{
	CliRun *run = g_new0(CliRun, 1);
	g_autoptr(GPtrArray) argv = g_ptr_array_new();
	g_auto(GStrv) envp = g_environ_setenv(g_get_environ(), "XDG_DATA_HOME", data_home, TRUE);
	g_autoptr(GError) error = NULL;
	int wait_status = 0;
	va_list ap;

	g_ptr_array_add(argv, (gpointer)g_getenv("GB_CLI"));
	va_start(ap, first);
	for (const char *a = first; a != NULL; a = va_arg(ap, const char *))
		g_ptr_array_add(argv, (gpointer)a);
	va_end(ap);
	g_ptr_array_add(argv, NULL);
	g_assert_true(g_spawn_sync(NULL, (char **)argv->pdata, envp, G_SPAWN_DEFAULT, NULL, NULL,
	                           &run->out, &run->err, &wait_status, &error));
	g_assert_no_error(error);
	run->status = WIFEXITED(wait_status) ? WEXITSTATUS(wait_status) : -1;
	g_test_message("exit %d\nstdout:\n%s\nstderr:\n%s", run->status, run->out, run->err);
	return run;
}

#define cli_run(...) cli_run_env(xdg, __VA_ARGS__)

/* The --format json document's only guest (asserts the contract shape). */
static JsonObject *doc_guest(const char *out, JsonNode **root_out)
{
	g_autoptr(GError) error = NULL;
	JsonNode *root = gb_json_parse(out, strlen(out), &error);
	JsonObject *doc;
	JsonArray *guests;

	g_assert_no_error(error);
	*root_out = root;
	doc = json_node_get_object(root);
	g_assert_cmpstr(json_object_get_string_member(doc, "command"), ==, "bench");
	guests = json_object_get_array_member(doc, "guests");
	g_assert_cmpuint(json_array_get_length(guests), ==, 1);
	return json_array_get_object_element(guests, 0);
}

/* The sample of metric with label key=value in an ok guest's result. */
static JsonObject *find_sample(JsonObject *guest, const char *metric, const char *key,
                               const char *value)
{
	JsonObject *result = json_object_get_object_member(guest, "result");
	JsonArray *metrics = json_object_get_array_member(result, "metrics");

	for (guint i = 0; i < json_array_get_length(metrics); i++) {
		JsonObject *s = json_array_get_object_element(metrics, i);
		JsonObject *labels = json_object_get_object_member(s, "labels");

		if (g_strcmp0(json_object_get_string_member(s, "metric"), metric) != 0)
			continue;
		if (key == NULL ||
		    (labels != NULL && json_object_has_member(labels, key) &&
		     g_strcmp0(json_object_get_string_member(labels, key), value) == 0))
			return s;
	}
	return NULL;
}

static guint count_files(const char *dir)
{
	g_autoptr(GDir) d = g_dir_open(dir, 0, NULL);
	guint n = 0;

	while (d != NULL && g_dir_read_name(d) != NULL)
		n++;
	return n;
}

/* ---- tests ------------------------------------------------------------------------- */

static void test_aes(void)
{
	g_autoptr(CliRun) table = cli_run("bench", "aes", "--seconds", "0.2", "--sizes", "16,1024",
	                                  "--no-save", sock, NULL);
	g_autoptr(CliRun) json = NULL;
	g_autoptr(JsonNode) root = NULL;
	g_autoptr(GRegex) row = g_regex_new("^\\S+ +aes-128-gcm +[0-9]+\\.[0-9]{2}k? +"
	                                    "[0-9]+\\.[0-9]{2}k?$",
	                                    G_REGEX_MULTILINE, 0, NULL);
	JsonObject *g;

	g_assert_cmpint(table->status, ==, 0);
	g_assert_nonnull(strstr(table->out, "The 'numbers' are in 1000s of bytes per second"));
	g_assert_nonnull(strstr(table->out, "type             16 bytes   1024 bytes"));
	g_assert_true(g_regex_match(row, table->out, 0, NULL));

	json = cli_run("bench", "aes", "--seconds", "0.2", "--sizes", "16,1024", "--format", "json",
	               "--no-save", sock, NULL);
	g_assert_cmpint(json->status, ==, 0);
	g = doc_guest(json->out, &root);
	g_assert_cmpstr(json_object_get_string_member(g, "status"), ==, "ok");
	g_assert_nonnull(find_sample(g, "aes-128-gcm", "block_size", "16"));
	g_assert_nonnull(find_sample(g, "aes-128-gcm", "block_size", "1024"));
	g_assert_null(find_sample(g, "aes-128-gcm", "block_size", "64"));
	g_assert_cmpstr(
	    json_object_get_string_member(json_object_get_object_member(g, "result"), "test"), ==,
	    "aes");
}

static void test_formats(void)
{
	g_autoptr(CliRun) csv = cli_run("bench", "aes", "--seconds", "0.1", "--sizes", "16",
	                                "--format", "csv", "--no-save", sock, NULL);
	g_autoptr(CliRun) prom = cli_run("bench", "aes", "--seconds", "0.1", "--sizes", "16",
	                                 "--format", "prom", "--no-save", sock, NULL);
	g_autoptr(GRegex) csv_row = g_regex_new(
	    "^[^,]+,aes-128-gcm,[0-9.e+]+,B/s,block_size=16,1,,,ok,$", G_REGEX_MULTILINE, 0, NULL);
	g_autoptr(GRegex) prom_row =
	    g_regex_new("^guestbench_bench_value\\{guest=\"[^\"]+\",metric=\"aes-128-gcm\","
	                "unit=\"B/s\",block_size=\"16\"\\} [0-9.e+]+$",
	                G_REGEX_MULTILINE, 0, NULL);

	g_assert_cmpint(csv->status, ==, 0);
	g_assert_true(g_str_has_prefix(
	    csv->out, "guest,metric,value,unit,labels,runs,mean,stddev,status,error\n"));
	g_assert_true(g_regex_match(csv_row, csv->out, 0, NULL));
	g_assert_cmpint(prom->status, ==, 0);
	g_assert_nonnull(strstr(prom->out, "# HELP guestbench_bench_value "));
	g_assert_nonnull(strstr(prom->out, "# TYPE guestbench_bench_value gauge\n"));
	g_assert_true(g_regex_match(prom_row, prom->out, 0, NULL));
}

static void test_runs(void)
{
	g_autoptr(CliRun) json =
	    cli_run("bench", "aes", "--seconds", "0.1", "--sizes", "16", "--runs", "2", "--format",
	            "json", "--no-save", sock, NULL);
	g_autoptr(CliRun) table = cli_run("bench", "aes", "--seconds", "0.1", "--sizes", "16",
	                                  "--runs", "2", "--no-save", sock, NULL);
	g_autoptr(JsonNode) root = NULL;
	JsonObject *g;
	JsonObject *s;

	g_assert_cmpint(json->status, ==, 0);
	g = doc_guest(json->out, &root);
	s = find_sample(g, "aes-128-gcm", "block_size", "16");
	g_assert_nonnull(s);
	g_assert_true(json_object_has_member(s, "mean"));
	g_assert_true(json_object_has_member(s, "stddev"));
	g_assert_cmpuint(json_array_get_length(json_object_get_array_member(s, "runs")), ==, 2);
	g_assert_cmpint(table->status, ==, 0);
	g_assert_nonnull(strstr(table->out, "± stddev"));
}

static void test_disk(void)
{
	g_autoptr(CliRun) json =
	    cli_run("bench", "disk", "--size", "8M", "--record", "4k,1M", "--dir", tmpdir,
	            "--format", "json", "--no-save", sock, NULL);
	g_autoptr(CliRun) table = NULL;
	g_autoptr(JsonNode) root = NULL;
	const char *tests[] = { "write", "rewrite", "read", "reread", "randread", "randwrite" };
	JsonObject *g;

	g_assert_cmpint(json->status, ==, 0);
	g = doc_guest(json->out, &root);
	g_assert_cmpstr(json_object_get_string_member(g, "status"), ==, "ok");
	for (guint i = 0; i < G_N_ELEMENTS(tests); i++)
		g_assert_nonnull(find_sample(g, "disk-throughput", "test", tests[i]));
	g_assert_nonnull(find_sample(g, "disk-throughput", "record_size", "4096"));
	g_assert_nonnull(find_sample(g, "disk-throughput", "record_size", "1048576"));

	table = cli_run("bench", "disk", "--size", "8M", "--record", "4k,1M", "--dir", tmpdir,
	                "--tests", "write,read", "--no-save", sock, NULL);
	g_assert_cmpint(table->status, ==, 0);
	g_assert_nonnull(strstr(table->out, "MB/s"));
	g_assert_nonnull(strstr(table->out, "RECORD  WRITE"));
	g_assert_nonnull(strstr(table->out, "  4k  "));
	g_assert_nonnull(strstr(table->out, "  1M  "));
}

static void test_mem(void)
{
	g_autoptr(CliRun) json = cli_run("bench", "mem", "--size", "16M", "--pages", "4k",
	                                 "--format", "json", "--no-save", sock, NULL);
	g_autoptr(CliRun) table =
	    cli_run("bench", "mem", "--size", "16M", "--pages", "4k,thp", "--no-save", sock, NULL);
	g_autoptr(JsonNode) root = NULL;
	JsonObject *g;

	g_assert_cmpint(json->status, ==, 0);
	g = doc_guest(json->out, &root);
	g_assert_nonnull(find_sample(g, "page-fault", "pages", "4k"));
	g_assert_nonnull(find_sample(g, "memory-bandwidth", "op", "copy"));
	g_assert_nonnull(find_sample(g, "memory-latency", "pages", "4k"));
	g_assert_cmpint(table->status, ==, 0);
	g_assert_nonnull(strstr(table->out, "FAULT ns/4k"));
	g_assert_nonnull(strstr(table->out, " thp "));
}

static void check_net(const char *out, const char *role, gboolean h2g, gboolean g2h)
{
	g_autoptr(JsonNode) root = NULL;
	JsonObject *g = doc_guest(out, &root);
	JsonObject *result;
	JsonObject *host_end;
	JsonArray *runs;

	g_assert_cmpstr(json_object_get_string_member(g, "status"), ==, "ok");
	result = json_object_get_object_member(g, "result");
	host_end = json_object_get_object_member(result, "host_end");
	g_assert_nonnull(host_end);
	g_assert_cmpstr(json_object_get_string_member(host_end, "role"), ==, role);
	g_assert_false(json_object_has_member(result, "host_end_error"));
	runs = json_object_get_array_member(host_end, "runs");
	g_assert_cmpuint(json_array_get_length(runs), ==, 1);
	g_assert_true((find_sample(g, "tcp-throughput", "direction", "host-to-guest") != NULL) ==
	              h2g);
	g_assert_true((find_sample(g, "tcp-throughput", "direction", "guest-to-host") != NULL) ==
	              g2h);
	g_assert_nonnull(find_sample(g, "guest-cpu-busy", "kind", "total"));
	if (g2h) {
		/* the host's own count is what the agent reports for this direction */
		JsonObject *mine = json_object_get_object_member(
		    json_array_get_object_element(runs, 0), "guest-to-host");
		JsonObject *agents = json_object_get_object_member(
		    json_object_get_object_member(result, "transfer"), "guest-to-host");
		g_assert_cmpint(json_object_get_int_member(mine, "bytes"), ==,
		                json_object_get_int_member(agents, "bytes"));
		g_assert_cmpint(json_object_get_int_member(mine, "bytes"), >, 0);
	}
}

static void test_net_guest_listen(void)
{
	guint port = gb_test_free_port();
	g_autofree char *listen = g_strdup_printf("127.0.0.1:%u", port);
	g_autoptr(CliRun) run = cli_run("bench", "net", "--guest-listen", listen, "--host-connect",
	                                listen, "--seconds", "1", "--omit", "0", "--direction",
	                                "both", "--format", "json", "--no-save", sock, NULL);

	g_assert_cmpint(run->status, ==, 0);
	check_net(run->out, "connect", TRUE, TRUE);
}

/* Both directions at once: each row carries the transfer's CPU % and retransmits. */
static void test_net_both_table(void)
{
	guint port = gb_test_free_port();
	g_autofree char *listen = g_strdup_printf("127.0.0.1:%u", port);
	g_autoptr(CliRun) run =
	    cli_run("bench", "net", "--host-listen", listen, "--seconds", "1", "--omit", "0",
	            "--direction", "both", "--no-save", sock, NULL);
	g_auto(GStrv) lines = NULL;
	guint rows = 0;

	g_assert_cmpint(run->status, ==, 0);
	g_test_message("%s", run->out);
	lines = g_strsplit(run->out, "\n", -1);
	for (guint i = 0; lines[i] != NULL; i++) {
		g_auto(GStrv) cells = NULL;

		if (!g_str_has_prefix(lines[i], sock))
			continue;
		cells = g_strsplit_set(lines[i], " ", -1);
		{
			/* GUEST DIRECTION STREAMS Mbit/s MB/s CPU% SOFTIRQ% SYSTEM% RETRANS */
			g_autoptr(GPtrArray) words = g_ptr_array_new();
			for (guint k = 0; cells[k] != NULL; k++)
				if (cells[k][0] != '\0')
					g_ptr_array_add(words, cells[k]);
			g_assert_cmpuint(words->len, ==, 9);
			for (guint k = 5; k < 9; k++)
				g_assert_true(g_ascii_isdigit(((char *)words->pdata[k])[0]));
		}
		rows++;
	}
	g_assert_cmpuint(rows, ==, 2);
	g_assert_nonnull(strstr(run->out, "both directions ran at once"));
}

static void test_net_host_listen(void)
{
	guint port = gb_test_free_port();
	g_autofree char *listen = g_strdup_printf("127.0.0.1:%u", port);
	g_autoptr(CliRun) run =
	    cli_run("bench", "net", "--host-listen", listen, "--seconds", "1", "--omit", "0",
	            "--direction", "guest-to-host", "--format", "json", "--no-save", sock, NULL);
	g_autoptr(CliRun) table = NULL;

	g_assert_cmpint(run->status, ==, 0);
	check_net(run->out, "listen", FALSE, TRUE);
	table = cli_run("bench", "net", "--host-listen", listen, "--seconds", "1", "--omit", "0",
	                "--no-save", sock, NULL);
	g_assert_cmpint(table->status, ==, 0);
	g_assert_nonnull(strstr(table->out, "Mbit/s"));
	g_assert_nonnull(strstr(table->out, "host-to-guest"));
	g_assert_null(strstr(table->out, "ran at once"));
}

/* The agent runs one benchmark at a time: the CLI shows its refusal for that guest. */
static void test_busy(void)
{
	g_autoptr(JsonNode) started = agent_call(
	    "{\"execute\": \"gb-bench-start\", \"arguments\": {\"test\": \"aes\", \"params\": "
	    "{\"sizes\": [16], \"seconds\": 30}}}");
	gint64 job = json_object_get_int_member(agent_return(started), "job");
	g_autoptr(CliRun) run = cli_run("bench", "aes", "--seconds", "0.1", "--sizes", "16",
	                                "--format", "json", sock, NULL);
	g_autofree char *cancel = g_strdup_printf(
	    "{\"execute\": \"gb-bench-cancel\", \"arguments\": {\"job\": %" G_GINT64_FORMAT "}}",
	    job);
	g_autoptr(JsonNode) cancelled = NULL;
	g_autoptr(JsonNode) root = NULL;
	JsonObject *g;

	g_assert_cmpint(run->status, ==, 3);
	g = doc_guest(run->out, &root);
	g_assert_cmpstr(json_object_get_string_member(g, "status"), ==, "error");
	g_assert_nonnull(
	    strstr(json_object_get_string_member(g, "error"), "A benchmark is already running"));
	/* nothing measured, nothing saved */
	g_assert_null(strstr(run->err, "saved:"));
	cancelled = agent_call(cancel);
	agent_return(cancelled);
	/* the next test starts its own job: wait until this one has really ended */
	for (guint i = 0; i < 500; i++) {
		g_autofree char *state = agent_last_job_state(NULL);

		if (g_strcmp0(state, "running") != 0)
			break;
		g_usleep(10 * 1000);
	}
}

static void test_sigint(void)
{
	g_autoptr(GError) error = NULL;
	g_autoptr(GSubprocessLauncher) launcher = g_subprocess_launcher_new(
	    G_SUBPROCESS_FLAGS_STDOUT_PIPE | G_SUBPROCESS_FLAGS_STDERR_PIPE);
	g_autoptr(GSubprocess) proc = NULL;
	g_autofree char *out = NULL;
	g_autofree char *err = NULL;
	g_autofree char *state = NULL;
	g_autoptr(JsonNode) root = NULL;
	gint64 before = 0;
	gint64 job = 0;
	gint64 start = g_get_monotonic_time();
	JsonObject *g;

	g_free(agent_last_job_state(&before));
	g_subprocess_launcher_setenv(launcher, "XDG_DATA_HOME", xdg, TRUE);
	proc = g_subprocess_launcher_spawn(launcher, &error, g_getenv("GB_CLI"), "bench", "aes",
	                                   "--seconds", "30", "--sizes", "16", "--format", "json",
	                                   sock, NULL);
	g_assert_no_error(error);
	/*
	 * The agent serves one client at a time, so the test cannot ask it while the CLI is
	 * connected; connect, sync and start take milliseconds, a second is plenty.
	 */
	g_usleep(G_USEC_PER_SEC);
	g_subprocess_send_signal(proc, SIGINT);
	g_assert_true(g_subprocess_communicate_utf8(proc, NULL, NULL, &out, &err, &error));
	g_assert_no_error(error);
	g_test_message("stdout:\n%s\nstderr:\n%s", out, err);
	g_assert_true(g_subprocess_get_if_exited(proc));
	g_assert_cmpint(g_subprocess_get_exit_status(proc), ==, 130);
	g_assert_cmpint(g_get_monotonic_time() - start, <, 15 * G_USEC_PER_SEC);
	g = doc_guest(out, &root);
	g_assert_cmpstr(json_object_get_string_member(g, "status"), ==, "error");
	g_assert_cmpstr(json_object_get_string_member(g, "error"), ==, "cancelled");
	/* gb-bench-cancel answers at once; the worker stops within 100 ms (BENCH.md) */
	for (guint i = 0; i < 200; i++) {
		g_free(state);
		state = agent_last_job_state(&job);
		if (g_strcmp0(state, "running") != 0)
			break;
		g_usleep(10 * 1000);
	}
	g_assert_cmpint(job, >, before);
	g_assert_cmpstr(state, ==, "cancelled");
}

static void test_save(void)
{
	g_autofree char *home = g_build_filename(tmpdir, "save-home", NULL);
	g_autofree char *dir = g_build_filename(home, "guestbench", "results", NULL);
	g_autofree char *nosave_home = g_build_filename(tmpdir, "nosave-home", NULL);
	g_autoptr(CliRun) run = cli_run_env(home, "bench", "aes", "--seconds", "0.1", "--sizes",
	                                    "16", "--format", "json", sock, NULL);
	g_autoptr(CliRun) quiet = NULL;
	g_autoptr(CliRun) nosave = NULL;
	g_autoptr(CliRun) list = NULL;
	g_autoptr(GDir) d = NULL;
	g_autoptr(GRegex) name = g_regex_new(
	    "^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}-[0-9]{2}-[0-9]{2}Z-bench-aes(-[0-9]+)?\\.json$",
	    0, 0, NULL);
	g_autofree char *path = NULL;
	g_autofree char *saved = NULL;
	g_autofree char *want = NULL;
	const char *file;
	GStatBuf st;

	g_assert_cmpint(run->status, ==, 0);
	d = g_dir_open(dir, 0, NULL);
	g_assert_nonnull(d);
	file = g_dir_read_name(d);
	g_assert_nonnull(file);
	g_assert_true(g_regex_match(name, file, 0, NULL));
	g_assert_null(g_dir_read_name(d));
	path = g_build_filename(dir, file, NULL);
	want = g_strdup_printf("saved: %s\n", path);
	g_assert_nonnull(strstr(run->err, want));
	/* the saved document is the one --format json printed */
	g_assert_true(g_file_get_contents(path, &saved, NULL, NULL));
	g_assert_cmpstr(saved, ==, run->out);
	g_assert_cmpint(g_stat(dir, &st), ==, 0);
	g_assert_cmpint(st.st_mode & 0777, ==, 0700);

	/* -q: saved all the same, but not said */
	quiet = cli_run_env(home, "bench", "aes", "--seconds", "0.1", "--sizes", "16", "-q", sock,
	                    NULL);
	g_assert_cmpint(quiet->status, ==, 0);
	g_assert_null(strstr(quiet->err, "saved:"));
	g_assert_cmpuint(count_files(dir), ==, 2);

	list = cli_run_env(home, "results", "--format", "json", NULL);
	g_assert_cmpint(list->status, ==, 0);
	{
		g_autoptr(GError) error = NULL;
		g_autoptr(JsonNode) root = gb_json_parse(list->out, strlen(list->out), &error);
		JsonArray *results;
		JsonObject *first;

		g_assert_no_error(error);
		results = json_object_get_array_member(json_node_get_object(root), "results");
		g_assert_cmpuint(json_array_get_length(results), ==, 2);
		first = json_array_get_object_element(results, 0);
		g_assert_cmpstr(json_object_get_string_member(first, "command"), ==, "bench aes");
		g_assert_cmpstr(json_object_get_string_member(first, "path"), ==, path);
	}
	g_clear_pointer(&list, cli_run_free);
	list = cli_run_env(home, "results", NULL);
	g_assert_cmpint(list->status, ==, 0);
	g_assert_nonnull(strstr(list->out, "ID"));
	g_assert_nonnull(strstr(list->out, "bench aes"));
	/* csv: the table's rows and columns, the id first */
	g_clear_pointer(&list, cli_run_free);
	list = cli_run_env(home, "results", "--format", "csv", NULL);
	g_assert_cmpint(list->status, ==, 0);
	g_assert_true(g_str_has_prefix(list->out, "id,date,command,guests\n"));
	{
		g_autofree char *base = g_path_get_basename(path);
		g_autofree char *id = g_strndup(base, strlen(base) - strlen(".json"));
		g_autofree char *row = g_strdup_printf("\n%s,", id);

		g_assert_nonnull(strstr(list->out, row));
		g_assert_nonnull(strstr(list->out, ",bench aes,1: "));
	}

	nosave = cli_run_env(nosave_home, "bench", "aes", "--seconds", "0.1", "--sizes", "16",
	                     "--no-save", sock, NULL);
	g_assert_cmpint(nosave->status, ==, 0);
	g_assert_false(g_file_test(nosave_home, G_FILE_TEST_EXISTS));
	g_assert_null(strstr(nosave->err, "saved:"));
}

static void test_usage(void)
{
	const char *const cases[][8] = {
		{ "bench", NULL },
		{ "bench", "foo", NULL },
		{ "bench", "aes", "--sizes", "0", NULL },
		{ "bench", "aes", "--sizes", "16,abc", NULL },
		{ "bench", "aes", "--sizes", "16,", NULL },
		{ "bench", "aes", "--sizes", "2M", NULL },
		{ "bench", "aes", "--seconds", "fast", NULL },
		{ "bench", "aes", "--cipher", "rot13", NULL },
		{ "bench", "aes", "--runs", "0", NULL },
		{ "bench", "aes", "--size", "8M", NULL },
		{ "bench", "disk", "--size", "8X", NULL },
		{ "bench", "disk", "--size", "0", NULL },
		{ "bench", "disk", "--record", "99999999999999999999G", NULL },
		{ "bench", "disk", "--tests", "write,write", NULL },
		{ "bench", "disk", "--dir", "relative", NULL },
		{ "bench", "mem", "--size", "-16M", NULL },
		{ "bench", "mem", "--pages", "1g", NULL },
		{ "bench", "net", NULL },
		{ "bench", "net", "--guest-listen", "5201", NULL },
		{ "bench", "net", "--host-listen", "localhost:5201", NULL },
		{ "bench", "net", "--host-listen", "0.0.0.0:5201", NULL },
		{ "bench", "net", "--host-listen", "127.0.0.1:5201", "--seconds", "0.5", NULL },
		{ "bench", "net", "--host-listen", "127.0.0.1:65535", "--direction", "up", NULL },
	};

	for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
		g_autoptr(GPtrArray) argv = g_ptr_array_new();
		g_auto(GStrv) envp = g_environ_setenv(g_get_environ(), "XDG_DATA_HOME", xdg, TRUE);
		g_autofree char *out = NULL;
		g_autofree char *err = NULL;
		int wait_status = 0;

		g_ptr_array_add(argv, (gpointer)g_getenv("GB_CLI"));
		for (guint j = 0; cases[i][j] != NULL; j++)
			g_ptr_array_add(argv, (gpointer)cases[i][j]);
		g_ptr_array_add(argv, sock);
		g_ptr_array_add(argv, NULL);
		g_assert_true(g_spawn_sync(NULL, (char **)argv->pdata, envp, G_SPAWN_DEFAULT, NULL,
		                           NULL, &out, &err, &wait_status, NULL));
		g_test_message("case %u: exit %d: %s", i, WEXITSTATUS(wait_status), err);
		g_assert_true(WIFEXITED(wait_status));
		g_assert_cmpint(WEXITSTATUS(wait_status), ==, 2);
		g_assert_cmpstr(err, !=, "");
		g_assert_cmpstr(out, ==, "");
	}
	/* two guests on ports up to 65535: the second would need 65536 */
	{
		g_autoptr(CliRun) run = cli_run("bench", "net", "--host-listen", "127.0.0.1:65535",
		                                sock, "unix:/nonexistent", NULL);
		g_assert_cmpint(run->status, ==, 2);
		g_assert_nonnull(strstr(run->err, "65535"));
	}
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

int main(int argc, char **argv)
{
	g_autoptr(GError) error = NULL;
	int rc;

	g_test_init(&argc, &argv, NULL);
	if (g_getenv("GB_CLI") == NULL || g_getenv("GB_AGENT") == NULL) {
		g_printerr("GB_CLI and GB_AGENT must be set\n");
		return 1;
	}
	/* not /tmp: it may be a tmpfs, where the disk benchmark refuses O_DIRECT */
	tmpdir = g_strdup("/var/tmp/gbbench-XXXXXX");
	g_assert_nonnull(g_mkdtemp(tmpdir));
	sock = g_build_filename(tmpdir, "agent.sock", NULL);
	xdg = g_build_filename(tmpdir, "xdg", NULL);
	agent_start();

	g_test_add_func("/bench/usage", test_usage);
	g_test_add_func("/bench/aes", test_aes);
	g_test_add_func("/bench/formats", test_formats);
	g_test_add_func("/bench/runs", test_runs);
	g_test_add_func("/bench/disk", test_disk);
	g_test_add_func("/bench/mem", test_mem);
	g_test_add_func("/bench/net/guest-listen", test_net_guest_listen);
	g_test_add_func("/bench/net/host-listen", test_net_host_listen);
	g_test_add_func("/bench/net/both-table", test_net_both_table);
	g_test_add_func("/bench/busy", test_busy);
	g_test_add_func("/bench/sigint", test_sigint);
	g_test_add_func("/bench/save", test_save);
	rc = g_test_run();

	agent_stop();
	rm_rf(tmpdir);
	g_free(tmpdir);
	g_free(sock);
	g_free(xdg);
	return rc;
}
