/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"

#include <errno.h>
#include <glib/gstdio.h>
#include <signal.h>
#include <string.h>

#include "gb-error.h"

#include "transport/spawn.h"

/* Runs real programs (/bin/sh): output, exit status, the time limit, cancelling. */

static void test_spawn_output(void)
{
	const char *argv[] = { "/bin/sh", "-c", "printf 'out\\0put'; printf ' err \\377\\n' >&2",
		               NULL };
	g_autoptr(GError) error = NULL;
	CliSpawnResult result;

	g_assert_true(cli_spawn_run_sync(argv, 10, &result, &error));
	g_assert_no_error(error);
	g_assert_true(result.exited);
	g_assert_cmpint(result.exit_status, ==, 0);
	/* stdout as bytes, NUL included; stderr valid UTF-8 and stripped */
	g_assert_cmpuint(result.out_len, ==, 7);
	g_assert_cmpmem(result.out, 7, "out\0put", 7);
	g_assert_cmpstr(result.err, ==, "err \xef\xbf\xbd");
	cli_spawn_result_clear(&result);
}

static void test_spawn_exit_status(void)
{
	const char *argv[] = { "/bin/sh", "-c", "echo no such domain >&2; exit 3", NULL };
	g_autoptr(GError) error = NULL;
	CliSpawnResult result;

	g_assert_true(cli_spawn_run_sync(argv, 10, &result, &error));
	g_assert_true(result.exited);
	g_assert_cmpint(result.exit_status, ==, 3);
	g_assert_cmpstr(result.err, ==, "no such domain");
	cli_spawn_result_clear(&result);
}

static void test_spawn_not_found(void)
{
	const char *argv[] = { "/nonexistent/virsh", "list", NULL };
	g_autoptr(GError) error = NULL;
	CliSpawnResult result;

	g_assert_false(cli_spawn_run_sync(argv, 10, &result, &error));
	g_assert_error(error, GB_ERROR, GB_ERROR_IO);
	g_assert_true(g_str_has_prefix(error->message, "cannot run virsh: "));
}

/*
 * The pid the script wrote, once it is there: the scripts write it to another
 * name and rename it, since `echo $$ > FILE` creates FILE empty before writing
 * (read then, it gave pid 0, and a test waited 5 s on kill(0, 0)).
 */
static GPid read_pid(const char *path)
{
	g_autofree char *text = NULL;

	GPid pid;

	for (guint i = 0; i < 500 && !g_file_get_contents(path, &text, NULL, NULL); i++)
		g_usleep(10 * 1000);
	g_assert_nonnull(text);
	pid = (GPid)g_ascii_strtoll(text, NULL, 10);
	/* kill(0, 0) would test our own process group: never ESRCH */
	g_assert_cmpint(pid, >, 0);
	return pid;
}

/* A killed child is reaped by GLib's worker: wait until the pid is gone. */
static gboolean pid_gone(GPid pid)
{
	for (guint i = 0; i < 500; i++) {
		if (kill(pid, 0) != 0 && errno == ESRCH)
			return TRUE;
		g_usleep(10 * 1000);
	}
	return FALSE;
}

static void test_spawn_timeout(void)
{
	g_autofree char *dir = g_dir_make_tmp("gb-spawn-XXXXXX", NULL);
	g_autofree char *pidfile = g_build_filename(dir, "pid", NULL);
	g_autofree char *script = g_strdup_printf("echo $$ > %s.new && mv %s.new %s; exec sleep 60",
	                                          pidfile, pidfile, pidfile);
	const char *argv[] = { "/bin/sh", "-c", script, NULL };
	g_autoptr(GError) error = NULL;
	CliSpawnResult result;
	gint64 start = g_get_monotonic_time();

	g_assert_false(cli_spawn_run_sync(argv, 1.5, &result, &error));
	g_assert_error(error, GB_ERROR, GB_ERROR_TIMEOUT);
	g_assert_nonnull(strstr(error->message, "did not answer within 1.5 s"));
	g_assert_cmpint(g_get_monotonic_time() - start, <, 30 * G_USEC_PER_SEC);
	g_assert_true(pid_gone(read_pid(pidfile)));
	g_unlink(pidfile);
	g_rmdir(dir);
}

static void test_spawn_never_called(const CliSpawnResult *result, const GError *error,
                                    gpointer user_data)
{
	g_assert_not_reached();
}

static void test_spawn_destroyed(gpointer user_data)
{
	gboolean *destroyed = user_data;
	*destroyed = TRUE;
}

static void test_spawn_cancel(void)
{
	g_autoptr(GMainContext) context = g_main_context_new();
	g_autofree char *dir = g_dir_make_tmp("gb-spawn-XXXXXX", NULL);
	g_autofree char *pidfile = g_build_filename(dir, "pid", NULL);
	g_autofree char *script = g_strdup_printf("echo $$ > %s.new && mv %s.new %s; exec sleep 60",
	                                          pidfile, pidfile, pidfile);
	const char *argv[] = { "/bin/sh", "-c", script, NULL };
	g_autoptr(GError) error = NULL;
	gboolean destroyed = FALSE;
	CliSpawn *spawn;
	GPid pid;

	spawn = cli_spawn_start(argv, 0, context, test_spawn_never_called, &destroyed,
	                        test_spawn_destroyed, &error);
	g_assert_no_error(error);
	pid = read_pid(pidfile);
	cli_spawn_cancel(spawn);
	/* the callback never runs; user_data is released once the process is gone */
	while (!destroyed)
		g_main_context_iteration(context, TRUE);
	g_assert_true(pid_gone(pid));
	g_unlink(pidfile);
	g_rmdir(dir);
}

int main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	g_test_add_func("/spawn/output", test_spawn_output);
	g_test_add_func("/spawn/exit-status", test_spawn_exit_status);
	g_test_add_func("/spawn/not-found", test_spawn_not_found);
	g_test_add_func("/spawn/timeout", test_spawn_timeout);
	g_test_add_func("/spawn/cancel", test_spawn_cancel);
	return g_test_run();
}
