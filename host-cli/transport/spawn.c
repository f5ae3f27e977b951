/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"

#include <string.h>

#include "gb-error.h"

#include "transport/spawn.h"

struct _CliSpawn {
	GSubprocess *proc;
	GCancellable *cancellable;
	GSource *timer;
	char *what; /* the command line, for messages */
	double timeout;
	gboolean timed_out;
	CliSpawnFunc func; /* NULL once cancelled */
	gpointer user_data;
	GDestroyNotify destroy; /* of user_data, when the spawn goes */
};

void cli_spawn_result_clear(CliSpawnResult *result)
{
	g_clear_pointer(&result->out, g_free);
	g_clear_pointer(&result->err, g_free);
	result->out_len = 0;
}

char *cli_spawn_describe(const char *const *argv)
{
	g_autofree char *base = g_path_get_basename(argv[0]);
	GString *str = g_string_new(base);

	for (guint i = 1; argv[i] != NULL; i++)
		g_string_append_printf(str, " %s", argv[i]);
	return g_string_free(str, FALSE);
}

static void cli_spawn_free(CliSpawn *spawn)
{
	if (spawn->destroy != NULL)
		spawn->destroy(spawn->user_data);
	if (spawn->timer != NULL) {
		g_source_destroy(spawn->timer);
		g_source_unref(spawn->timer);
	}
	g_clear_object(&spawn->cancellable);
	g_clear_object(&spawn->proc);
	g_free(spawn->what);
	g_free(spawn);
}

static void cli_spawn_kill(CliSpawn *spawn)
{
	/* GLib's child watch reaps it: no zombie is left behind */
	g_subprocess_force_exit(spawn->proc);
	g_cancellable_cancel(spawn->cancellable);
}

static gboolean cli_spawn_timeout_cb(gpointer user_data)
{
	CliSpawn *spawn = user_data;

	spawn->timed_out = TRUE;
	cli_spawn_kill(spawn);
	return G_SOURCE_REMOVE;
}

static void cli_spawn_done_cb(GObject *source, GAsyncResult *res, gpointer user_data)
{
	CliSpawn *spawn = user_data;
	g_autoptr(GBytes) out = NULL;
	g_autoptr(GBytes) err = NULL;
	g_autoptr(GError) error = NULL;
	CliSpawnResult result = { 0 };

	if (!g_subprocess_communicate_finish(spawn->proc, res, &out, &err, &error)) {
		if (spawn->func != NULL && spawn->timed_out) {
			g_autoptr(GError) timeout = g_error_new(GB_ERROR, GB_ERROR_TIMEOUT,
			                                        "'%s' did not answer within %g s",
			                                        spawn->what, spawn->timeout);
			spawn->func(NULL, timeout, spawn->user_data);
		} else if (spawn->func != NULL) {
			g_autoptr(GError) io = g_error_new(GB_ERROR, GB_ERROR_IO, "'%s' failed: %s",
			                                   spawn->what, error->message);
			spawn->func(NULL, io, spawn->user_data);
		}
		cli_spawn_free(spawn);
		return;
	}
	if (spawn->func != NULL) {
		gsize len = 0;
		const char *data = out != NULL ? g_bytes_get_data(out, &len) : NULL;

		result.exited = g_subprocess_get_if_exited(spawn->proc);
		result.exit_status = result.exited ? g_subprocess_get_exit_status(spawn->proc) : -1;
		result.out = g_malloc(len + 1);
		if (len > 0)
			memcpy(result.out, data, len);
		result.out[len] = '\0';
		result.out_len = len;
		data = err != NULL ? g_bytes_get_data(err, &len) : NULL;
		result.err = g_strstrip(
		    g_utf8_make_valid(data != NULL ? data : "", data != NULL ? (gssize)len : 0));
		spawn->func(&result, NULL, spawn->user_data);
		cli_spawn_result_clear(&result);
	}
	cli_spawn_free(spawn);
}

CliSpawn *cli_spawn_start(const char *const *argv, double timeout, GMainContext *context,
                          CliSpawnFunc func, gpointer user_data, GDestroyNotify destroy,
                          GError **error)
{
	CliSpawn *spawn;
	g_autoptr(GSubprocess) proc = NULL;
	g_autoptr(GError) error_local = NULL;

	proc = g_subprocess_newv(
	    argv, G_SUBPROCESS_FLAGS_STDOUT_PIPE | G_SUBPROCESS_FLAGS_STDERR_PIPE, &error_local);
	if (proc == NULL) {
		g_autofree char *name = g_path_get_basename(argv[0]);

		g_set_error(error, GB_ERROR, GB_ERROR_IO, "cannot run %s: %s", name,
		            error_local->message);
		return NULL;
	}
	spawn = g_new0(CliSpawn, 1);
	spawn->proc = g_steal_pointer(&proc);
	spawn->cancellable = g_cancellable_new();
	spawn->what = cli_spawn_describe(argv);
	spawn->timeout = timeout;
	spawn->func = func;
	spawn->user_data = user_data;
	spawn->destroy = destroy;
	if (timeout > 0) {
		spawn->timer = g_timeout_source_new((guint)MIN(timeout * 1000, G_MAXUINT));
		g_source_set_callback(spawn->timer, cli_spawn_timeout_cb, spawn, NULL);
		g_source_attach(spawn->timer, context);
	}
	/* the async result is delivered on the context that is thread-default now */
	g_main_context_push_thread_default(context);
	g_subprocess_communicate_async(spawn->proc, NULL, spawn->cancellable, cli_spawn_done_cb,
	                               spawn);
	g_main_context_pop_thread_default(context);
	return spawn;
}

void cli_spawn_cancel(CliSpawn *spawn)
{
	if (spawn == NULL)
		return;
	spawn->func = NULL;
	cli_spawn_kill(spawn);
}

typedef struct {
	gboolean done;
	CliSpawnResult *result;
	GError *error;
} CliSpawnWait;

static void cli_spawn_sync_cb(const CliSpawnResult *result, const GError *error, gpointer user_data)
{
	CliSpawnWait *wait = user_data;

	wait->done = TRUE;
	if (error != NULL) {
		wait->error = g_error_copy(error);
		return;
	}
	*wait->result = *result;
	/* the caller owns the strings now */
	wait->result->out = g_memdup2(result->out, result->out_len + 1);
	wait->result->err = g_strdup(result->err);
}

gboolean cli_spawn_run_sync(const char *const *argv, double timeout, CliSpawnResult *result,
                            GError **error)
{
	g_autoptr(GMainContext) context = g_main_context_new();
	CliSpawnWait wait = { .result = result };

	memset(result, 0, sizeof(*result));
	if (cli_spawn_start(argv, timeout, context, cli_spawn_sync_cb, &wait, NULL, error) == NULL)
		return FALSE;
	while (!wait.done)
		g_main_context_iteration(context, TRUE);
	if (wait.error != NULL) {
		g_propagate_error(error, wait.error);
		return FALSE;
	}
	return TRUE;
}
