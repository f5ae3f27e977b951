/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"

#include <glib/gstdio.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "guestbench-protocol.h"

#include "commands/app.h"
#include "commands/commands.h"
#include "fleet/runner.h"
#include "fleet/resolve.h"

/*
 * Commands written the way fleet/app.h says a command is written (poll loops,
 * re-armed deadlines, cancel on Ctrl-C), run in process against a real peer.
 */

static char *tmpdir;
static char *peer_path;
static GSubprocess *peer;

typedef struct {
	guint polls;
	guint want_polls;
	guint interval_ms;
	gboolean rearm;
	gboolean raise_sigint;
	gboolean cancel_answers;
	GArray *order;
} Flow;

static Flow flow;

static void poll_reply_cb(CliSession *session, JsonNode *ret, const GError *error,
                          gpointer user_data);

static gboolean poll_cb(gpointer user_data)
{
	CliGuest *guest = user_data;
	cli_session_call(guest->session, "guest-ping", NULL, poll_reply_cb, guest);
	return G_SOURCE_REMOVE;
}

static gboolean raise_cb(gpointer user_data)
{
	raise(SIGINT);
	return G_SOURCE_REMOVE;
}

static void poll_reply_cb(CliSession *session, JsonNode *ret, const GError *error,
                          gpointer user_data)
{
	CliGuest *guest = user_data;
	g_autoptr(JsonBuilder) builder = NULL;

	if (error != NULL) {
		cli_guest_finish(guest, NULL, error);
		return;
	}
	flow.polls++;
	cli_guest_set_progress(guest, (double)flow.polls / MAX(flow.want_polls, 1), "polling");
	if (flow.rearm)
		cli_guest_set_deadline(guest, guest->app->opts.timeout);
	if (flow.want_polls == 0 || flow.polls < flow.want_polls) {
		cli_guest_add_timeout(guest, flow.interval_ms, poll_cb, guest);
		if (flow.raise_sigint && flow.polls == 2)
			cli_guest_add_timeout(guest, 1, raise_cb, NULL);
		return;
	}
	builder = json_builder_new();
	json_builder_begin_object(builder);
	json_builder_set_member_name(builder, "polls");
	json_builder_add_int_value(builder, flow.polls);
	json_builder_end_object(builder);
	cli_guest_finish(guest, json_builder_get_root(builder), NULL);
}

static void order_cb(CliSession *session, JsonNode *ret, const GError *error, gpointer user_data)
{
	gint n = GPOINTER_TO_INT(user_data);
	g_assert_no_error(error);
	g_array_append_val(flow.order, n);
}

static void flow_start(CliGuest *guest, CliSession *session)
{
	/* queued calls go out one at a time, answered in the order issued */
	for (gint i = 1; i <= 3; i++)
		cli_session_call(session, "guest-info", NULL, order_cb, GINT_TO_POINTER(i));
	cli_session_call(session, "guest-ping", NULL, poll_reply_cb, guest);
}

static void cancel_reply_cb(CliSession *session, JsonNode *ret, const GError *error,
                            gpointer user_data)
{
	g_autoptr(GError) cancelled = g_error_new_literal(GB_ERROR, GB_ERROR_FAILED, "cancelled");
	cli_guest_finish(user_data, NULL, error != NULL ? error : cancelled);
}

static void flow_cancel(CliGuest *guest, CliSession *session)
{
	/* a real bench would send gb-bench-cancel; the shape of the flow is the same */
	if (flow.cancel_answers)
		cli_session_call(session, "guest-ping", NULL, cancel_reply_cb, guest);
}

static const CliCommand flow_command = {
	.name = "flow",
	.summary = "test flow",
	.start = flow_start,
	.cancel = flow_cancel,
};

static CliApp *run_flow(double timeout)
{
	CliApp *app = cli_app_new();
	const char *targets[] = { peer_path, NULL };
	g_autoptr(GError) error = NULL;

	app->command = &flow_command;
	app->opts.timeout = timeout;
	app->targets = cli_targets_parse(targets, &error);
	g_assert_no_error(error);
	g_array_set_size(flow.order, 0);
	flow.polls = 0;
	cli_runner_run(app);
	return app;
}

static void test_runner_poll(void)
{
	g_autoptr(CliApp) app = NULL;
	CliGuest *guest;
	gint64 polls = 0;
	JsonObject *obj = NULL;

	flow.want_polls = 4;
	flow.interval_ms = 20;
	flow.rearm = FALSE;
	flow.raise_sigint = FALSE;
	app = run_flow(5);
	guest = g_ptr_array_index(app->guests, 0);
	g_assert_cmpstr(guest->error, ==, NULL);
	g_assert_cmpint(guest->status, ==, CLI_GUEST_OK);
	g_assert_true(gb_json_node_get_object(guest->result, "result", &obj, NULL));
	g_assert_true(gb_json_get_int(obj, "polls", 0, 0, 100, &polls, NULL));
	g_assert_cmpint(polls, ==, 4);
	g_assert_cmpuint(flow.order->len, ==, 3);
	for (guint i = 0; i < 3; i++)
		g_assert_cmpint(g_array_index(flow.order, gint, i), ==, i + 1);
	g_assert_cmpfloat(guest->progress, ==, 1.0);
	g_assert_cmpint(cli_app_get_exit_status(app), ==, 0);
}

static void test_runner_deadline(void)
{
	g_autoptr(CliApp) app = NULL;
	g_autoptr(CliApp) app2 = NULL;
	CliGuest *guest;

	/* six polls 100 ms apart outlast a 0.3 s timeout unless each step re-arms it */
	flow.want_polls = 6;
	flow.interval_ms = 100;
	flow.rearm = TRUE;
	flow.raise_sigint = FALSE;
	app = run_flow(0.3);
	guest = g_ptr_array_index(app->guests, 0);
	g_assert_cmpint(guest->status, ==, CLI_GUEST_OK);

	flow.rearm = FALSE;
	app2 = run_flow(0.3);
	guest = g_ptr_array_index(app2->guests, 0);
	g_assert_cmpint(guest->status, ==, CLI_GUEST_TIMEOUT);
	g_assert_nonnull(strstr(guest->error, "timed out after 0.3 s"));
	g_assert_cmpint(cli_app_get_exit_status(app2), ==, CLI_EXIT_GUEST);
}

static void test_runner_cancel(void)
{
	g_autoptr(CliApp) app = NULL;
	g_autoptr(CliApp) app2 = NULL;
	CliGuest *guest;
	gint64 start;

	/* Ctrl-C in the middle of an endless poll: the cancel hook answers */
	flow.want_polls = 0;
	flow.interval_ms = 20;
	flow.rearm = TRUE;
	flow.raise_sigint = TRUE;
	flow.cancel_answers = TRUE;
	app = run_flow(5);
	guest = g_ptr_array_index(app->guests, 0);
	g_assert_cmpint(guest->status, ==, CLI_GUEST_ERROR);
	g_assert_cmpstr(guest->error, ==, "cancelled");
	g_assert_cmpint(app->signal_received, ==, SIGINT);
	g_assert_cmpint(cli_app_get_exit_status(app), ==, 130);

	/* a cancel hook that never finishes: dropped after the grace period */
	flow.cancel_answers = FALSE;
	start = g_get_monotonic_time();
	app2 = run_flow(5);
	guest = g_ptr_array_index(app2->guests, 0);
	g_assert_cmpint(guest->status, ==, CLI_GUEST_ERROR);
	g_assert_nonnull(strstr(guest->error, "cancelling took longer than 2 s"));
	g_assert_cmpint(g_get_monotonic_time() - start, <, 4 * G_USEC_PER_SEC);
}

static void peer_child_setup(gpointer user_data)
{
	prctl(PR_SET_PDEATHSIG, SIGKILL);
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

/* Our agent, or qemu-ga when the agent cannot start (both answer guest-ping/guest-info). */
static void peer_start(void)
{
	g_autoptr(GSubprocessLauncher) launcher =
	    g_subprocess_launcher_new(G_SUBPROCESS_FLAGS_STDOUT_SILENCE);
	g_autofree char *statedir = g_build_filename(tmpdir, "qga", NULL);
	g_autofree char *pidfile = g_build_filename(tmpdir, "qga.pid", NULL);
	const char *agent_argv[] = {
		g_getenv("GB_AGENT"), "-m", "unix-listen", "-p", peer_path, NULL
	};
	const char *qga_argv[] = { g_getenv("GB_QEMU_GA"),
		                   "-m",
		                   "unix-listen",
		                   "-p",
		                   peer_path,
		                   "-t",
		                   statedir,
		                   "-f",
		                   pidfile,
		                   NULL };
	const char *const *candidates[] = { agent_argv, qga_argv };

	g_subprocess_launcher_set_child_setup(launcher, peer_child_setup, NULL, NULL);
	g_mkdir(statedir, 0700);
	for (guint c = 0; c < G_N_ELEMENTS(candidates) && peer == NULL; c++) {
		if (candidates[c][0] == NULL)
			continue;
		peer = g_subprocess_launcher_spawnv(launcher, candidates[c], NULL);
		for (guint i = 0; peer != NULL && i < 100; i++) {
			if (socket_accepts(peer_path))
				return;
			g_usleep(50 * 1000);
		}
		if (peer != NULL) {
			g_subprocess_force_exit(peer);
			g_subprocess_wait(peer, NULL, NULL);
			g_clear_object(&peer);
		}
		g_unlink(peer_path);
	}
	g_assert_nonnull(peer);
}

int main(int argc, char **argv)
{
	g_autoptr(GError) error = NULL;
	g_autofree char *statedir = NULL;
	g_autofree char *pidfile = NULL;
	int rc;

	g_test_init(&argc, &argv, NULL);
	tmpdir = g_dir_make_tmp("gbrun-XXXXXX", &error);
	g_assert_no_error(error);
	peer_path = g_build_filename(tmpdir, "peer.sock", NULL);
	flow.order = g_array_new(FALSE, FALSE, sizeof(gint));
	peer_start();

	g_test_add_func("/cli/runner/poll", test_runner_poll);
	g_test_add_func("/cli/runner/deadline", test_runner_deadline);
	g_test_add_func("/cli/runner/cancel", test_runner_cancel);
	rc = g_test_run();

	g_subprocess_send_signal(peer, SIGTERM);
	g_subprocess_wait(peer, NULL, NULL);
	g_object_unref(peer);
	statedir = g_build_filename(tmpdir, "qga", NULL);
	pidfile = g_build_filename(tmpdir, "qga.pid", NULL);
	g_unlink(peer_path);
	g_unlink(pidfile);
	g_rmdir(statedir);
	g_rmdir(tmpdir);
	g_array_unref(flow.order);
	g_free(peer_path);
	g_free(tmpdir);
	return rc;
}
