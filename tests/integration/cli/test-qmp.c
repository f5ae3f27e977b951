/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The QMP client and host view against a real QEMU (TCG, paused with -S, no
 * kernel): four drives with different cache modes, two NUMA nodes backed by
 * memory-backend-ram. QEMU dies with the test (PR_SET_PDEATHSIG) and is
 * killed in every teardown.
 */
#include <glib/gstdio.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "guestbench-protocol.h"
#include "analysis/host-rules.h"
#include "commands/app.h"
#include "fleet/host-files.h"
#include "fleet/hostview.h"
#include "transport/qmp.h"

static const char *const cache_modes[] = { "none", "writeback", "unsafe", "directsync" };

typedef struct {
	char *dir;
	char *sock;
	GPid pid;
} Qemu;

static void qemu_child_setup(gpointer user_data)
{
	/* a test that aborts must not leave QEMU behind */
	prctl(PR_SET_PDEATHSIG, SIGKILL);
}

static void qemu_setup(Qemu *q, gconstpointer data)
{
	g_autoptr(GError) error = NULL;
	g_autoptr(GPtrArray) argv = g_ptr_array_new_with_free_func(g_free);
	g_autofree char *qemu = g_find_program_in_path("qemu-system-x86_64");
	g_autofree char *qmp_arg = NULL;

	memset(q, 0, sizeof(*q));
	if (qemu == NULL) {
		g_test_skip("qemu-system-x86_64 is not installed");
		return;
	}
	q->dir = g_dir_make_tmp("gb-qemu-XXXXXX", &error);
	g_assert_no_error(error);
	q->sock = g_build_filename(q->dir, "qmp.sock", NULL);
	qmp_arg = g_strdup_printf("unix:%s,server=on,wait=off", q->sock);
	g_ptr_array_add(argv, g_strdup(qemu));
	for (const char *const *a =
	         (const char *const[]){ "-machine", "pc", "-accel", "tcg", "-S", "-nodefaults",
	                                "-display", "none", "-smp", "2", "-m", "256M", NULL };
	     *a != NULL; a++)
		g_ptr_array_add(argv, g_strdup(*a));
	g_ptr_array_add(argv, g_strdup("-qmp"));
	g_ptr_array_add(argv, g_strdup(qmp_arg));
	g_ptr_array_add(argv, g_strdup("-object"));
	g_ptr_array_add(argv, g_strdup("memory-backend-ram,id=m0,size=128M"));
	g_ptr_array_add(argv, g_strdup("-object"));
	g_ptr_array_add(argv, g_strdup("memory-backend-ram,id=m1,size=128M"));
	g_ptr_array_add(argv, g_strdup("-numa"));
	g_ptr_array_add(argv, g_strdup("node,nodeid=0,cpus=0,memdev=m0"));
	g_ptr_array_add(argv, g_strdup("-numa"));
	g_ptr_array_add(argv, g_strdup("node,nodeid=1,cpus=1,memdev=m1"));
	for (guint i = 0; i < G_N_ELEMENTS(cache_modes); i++) {
		g_autofree char *img_name = g_strdup_printf("%s.img", cache_modes[i]);
		g_autofree char *img = g_build_filename(q->dir, img_name, NULL);
		g_autofree char *zeros = g_malloc0(1024 * 1024);

		g_assert_true(g_file_set_contents(img, zeros, 1024 * 1024, NULL));
		g_ptr_array_add(argv, g_strdup("-drive"));
		g_ptr_array_add(argv, g_strdup_printf("file=%s,format=raw,if=none,id=d%u,cache=%s",
		                                      img, i, cache_modes[i]));
		g_ptr_array_add(argv, g_strdup("-device"));
		g_ptr_array_add(argv, g_strdup_printf("virtio-blk-pci,drive=d%u", i));
	}
	g_ptr_array_add(argv, NULL);
	g_assert_true(g_spawn_async(NULL, (char **)argv->pdata, NULL,
	                            G_SPAWN_DO_NOT_REAP_CHILD | G_SPAWN_STDOUT_TO_DEV_NULL,
	                            qemu_child_setup, NULL, &q->pid, &error));
	g_assert_no_error(error);
	for (guint i = 0; i < 200 && !g_file_test(q->sock, G_FILE_TEST_EXISTS); i++)
		g_usleep(50 * 1000);
	g_assert_true(g_file_test(q->sock, G_FILE_TEST_EXISTS));
}

static void qemu_teardown(Qemu *q, gconstpointer data)
{
	if (q->pid > 0) {
		kill(q->pid, SIGKILL);
		waitpid(q->pid, NULL, 0);
		g_spawn_close_pid(q->pid);
	}
	for (guint i = 0; q->dir != NULL && i < G_N_ELEMENTS(cache_modes); i++) {
		g_autofree char *img_name = g_strdup_printf("%s.img", cache_modes[i]);
		g_autofree char *img = g_build_filename(q->dir, img_name, NULL);
		g_unlink(img);
	}
	if (q->sock != NULL)
		g_unlink(q->sock);
	if (q->dir != NULL)
		g_rmdir(q->dir);
	g_free(q->sock);
	g_free(q->dir);
}

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

static void wait_done(GMainContext *ctx, gboolean *done)
{
	gint64 end = g_get_monotonic_time() + 30 * G_USEC_PER_SEC;

	while (!*done && g_get_monotonic_time() < end)
		g_main_context_iteration(ctx, TRUE);
	g_assert_true(*done);
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

static CliFinding *find(GPtrArray *findings, const char *rule, const char *subject)
{
	for (guint i = 0; i < findings->len; i++) {
		CliFinding *f = g_ptr_array_index(findings, i);
		if (g_strcmp0(f->rule, rule) == 0 && g_strcmp0(f->subject, subject) == 0)
			return f;
	}
	g_test_message("no %s for %s", rule, subject);
	g_assert_not_reached();
	return NULL;
}

static void test_real_view(Qemu *q, gconstpointer data)
{
	g_autoptr(GMainContext) ctx = g_main_context_new();
	g_autoptr(GPtrArray) findings = NULL;
	Collected col = { 0 };
	CliHostviewJob *job;
	JsonObject *view;
	JsonArray *vcpus = NULL;
	JsonArray *mem = NULL;
	const char *accel = NULL;
	gint64 pid = 0;

	if (q->pid == 0)
		return;
	job = cli_hostview_job_new(q->sock, "/", ctx, 10, collected_cb, &col);
	wait_done(ctx, &col.done);
	g_assert_no_error(col.error);
	view = json_node_get_object(col.view);
	/* SO_PEERCRED found QEMU itself */
	g_assert_true(gb_json_get_int(view, "pid", GB_JSON_REQUIRED, 1, G_MAXINT32, &pid, NULL));
	g_assert_cmpint(pid, ==, q->pid);
	g_assert_true(gb_json_get_string(view, "accel", GB_JSON_REQUIRED, &accel, NULL));
	g_assert_cmpstr(accel, ==, "tcg");
	for (guint i = 0; i < G_N_ELEMENTS(cache_modes); i++) {
		g_autofree char *dev = g_strdup_printf("d%u", i);
		JsonObject *blk = find_by(view, "block", "device", dev);
		const char *mode = NULL;

		g_assert_nonnull(blk);
		g_assert_true(gb_json_get_string(blk, "cache", GB_JSON_REQUIRED, &mode, NULL));
		g_assert_cmpstr(mode, ==, cache_modes[i]);
	}
	/* the vCPU threads and their affinity, read from the real /proc */
	g_assert_true(gb_json_get_array(view, "vcpus", GB_JSON_REQUIRED, &vcpus, NULL));
	g_assert_cmpuint(json_array_get_length(vcpus), ==, 2);
	for (guint i = 0; i < 2; i++) {
		JsonObject *vcpu = NULL;
		g_autoptr(GArray) allowed = NULL;
		g_assert_true(
		    gb_json_node_get_object(json_array_get_element(vcpus, i), "vcpu", &vcpu, NULL));
		g_assert_true(gb_json_get_int_array(vcpu, "cpus_allowed", GB_JSON_REQUIRED, 0,
		                                    G_MAXINT32, &allowed, NULL));
		g_assert_cmpuint(allowed->len, >=, 1);
	}
	g_assert_true(gb_json_get_array(view, "memory_nodes", GB_JSON_REQUIRED, &mem, NULL));
	g_assert_cmpuint(json_array_get_length(mem), >=, 1);
	g_assert_nonnull(find_by(view, "memdevs", "id", "m0"));
	{
		const char *backend = NULL;
		g_assert_true(gb_json_get_string(find_by(view, "memdevs", "id", "m1"), "backend",
		                                 GB_JSON_REQUIRED, &backend, NULL));
		g_assert_cmpstr(backend, ==, "memory-backend-ram");
	}

	/* joined into findings: the three modes told apart */
	findings = cli_host_rules_run(NULL, view);
	g_assert_cmpint(find(findings, "HOST-CACHE-UNSAFE", "host-block/d2")->level, ==,
	                CLI_LEVEL_FAIL);
	g_assert_cmpint(find(findings, "HOST-CACHE-UNSAFE", "host-block/d0")->level, ==,
	                CLI_LEVEL_PASS);
	g_assert_cmpint(find(findings, "HOST-CACHE-NOT-DIRECT", "host-block/d1")->level, ==,
	                CLI_LEVEL_NOTE);
	g_assert_cmpint(find(findings, "HOST-CACHE-NOT-DIRECT", "host-block/d0")->level, ==,
	                CLI_LEVEL_PASS);
	g_assert_cmpint(find(findings, "HOST-CACHE-NOT-DIRECT", "host-block/d3")->level, ==,
	                CLI_LEVEL_PASS);
	cli_hostview_job_free(job);
	json_node_unref(col.view);
}

typedef struct {
	guint n;
	gboolean failed;
} Count;

static void count_cb(CliQmp *qmp, JsonNode *ret, const GError *error, gpointer user_data)
{
	Count *c = user_data;

	c->n++;
	if (error != NULL)
		c->failed = TRUE;
}

/* cont/stop make QEMU emit RESUME/STOP events between the replies. */
static void test_real_events(Qemu *q, gconstpointer data)
{
	g_autoptr(GMainContext) ctx = g_main_context_new();
	Count c = { 0 };
	CliQmp *qmp;
	gint64 end = g_get_monotonic_time() + 30 * G_USEC_PER_SEC;

	if (q->pid == 0)
		return;
	qmp = cli_qmp_open(q->sock, ctx, 10, NULL, NULL);
	cli_qmp_call(qmp, "cont", NULL, count_cb, &c);
	cli_qmp_call(qmp, "stop", NULL, count_cb, &c);
	cli_qmp_call(qmp, "query-status", NULL, count_cb, &c);
	while (c.n < 3 && g_get_monotonic_time() < end)
		g_main_context_iteration(ctx, TRUE);
	g_assert_cmpuint(c.n, ==, 3);
	g_assert_false(c.failed);
	g_assert_cmpuint(cli_qmp_get_n_events(qmp), >=, 1);
	cli_qmp_close(qmp);
}

typedef struct {
	gboolean done;
	JsonNode *view;
} AppCollected;

static void app_collected_cb(JsonNode *view, const GError *error, gpointer user_data)
{
	AppCollected *col = user_data;

	g_assert_no_error(error);
	col->done = TRUE;
	col->view = json_node_copy(view);
}

/* The command-side entry point, as audit uses it: --qmp of the single target. */
static void test_real_collect_async(Qemu *q, gconstpointer data)
{
	g_autoptr(GError) error = NULL;
	AppCollected col = { 0 };
	const char *argv[] = { "guestbench",
		               "--qmp",
		               q->sock,
		               "--timeout",
		               "10",
		               "audit",
		               "unix:/nonexistent/agent.sock",
		               NULL };
	CliApp *app;
	CliGuest *guest;

	if (q->pid == 0)
		return;
	app = cli_app_new();
	g_assert_true(cli_app_parse(app, argv, &error));
	g_assert_no_error(error);
	cli_app_add_guests(app);
	guest = g_ptr_array_index(app->guests, 0);
	g_assert_cmpstr(cli_hostview_get_qmp_path(app, guest), ==, q->sock);
	cli_hostview_collect_async(app, guest, cli_hostview_get_qmp_path(app, guest),
	                           app_collected_cb, &col);
	wait_done(app->context, &col.done);
	g_assert_nonnull(col.view);
	json_node_unref(col.view);

	/* freeing the app while a collection runs stops it: no callback, no leak */
	memset(&col, 0, sizeof(col));
	cli_hostview_collect_async(app, guest, q->sock, app_collected_cb, &col);
	g_main_context_iteration(app->context, FALSE);
	cli_app_free(app);
	g_assert_false(col.done);
}

int main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	g_test_add("/qmp-real/view", Qemu, NULL, qemu_setup, test_real_view, qemu_teardown);
	g_test_add("/qmp-real/events", Qemu, NULL, qemu_setup, test_real_events, qemu_teardown);
	g_test_add("/qmp-real/collect-async", Qemu, NULL, qemu_setup, test_real_collect_async,
	           qemu_teardown);
	return g_test_run();
}
