/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"

#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <glib-unix.h>

#include "agent-config.h"
#include "bench.h"
#include "dispatch.h"
#include "facts.h"
#include "privilege.h"
#include "transport.h"

#define AGENT_EXIT_OK 0
#define AGENT_EXIT_ERROR 1
#define AGENT_EXIT_USAGE 2
/* How often a one-shot gb-bench-start looks at its job (and for SIGTERM/SIGINT). */
#define AGENT_ONESHOT_JOB_POLL_MS 20

typedef struct {
	AgentContext ctx;
	GMainLoop *loop;
	int exit_code;
} AgentMain;

typedef struct {
	char *method;
	char *path;
	char *config;
	char *sysroot;
	char *scratch_dir;
	char **allow_rpcs;
	char **block_rpcs;
	char *oneshot;
	gboolean verbose;
	gboolean version;
} AgentOptions;

static void agent_options_clear(AgentOptions *opts)
{
	g_free(opts->method);
	g_free(opts->path);
	g_free(opts->config);
	g_free(opts->sysroot);
	g_free(opts->scratch_dir);
	g_strfreev(opts->allow_rpcs);
	g_strfreev(opts->block_rpcs);
	g_free(opts->oneshot);
}

static int agent_usage_error(const char *message)
{
	g_printerr("guestbench-agent: %s\nTry 'guestbench-agent --help' for more information.\n",
	           message);
	return AGENT_EXIT_USAGE;
}

/* -a/-b may be repeated and each may be a comma list. */
static char **agent_options_merge_lists(char **values)
{
	g_autofree char *joined = NULL;

	if (values == NULL)
		return NULL;
	joined = g_strjoinv(",", values);
	return agent_config_split_list(joined);
}

static GString *agent_main_handle(const char *msg, gsize len, const GError *error,
                                  gpointer user_data)
{
	AgentMain *self = user_data;

	if (msg == NULL)
		return agent_dispatch_framing_error(error);
	return agent_dispatch_message(&self->ctx, msg, len);
}

static void agent_main_closed(const GError *error, gpointer user_data)
{
	AgentMain *self = user_data;

	if (error != NULL) {
		g_warning("%s", error->message);
		self->exit_code = AGENT_EXIT_ERROR;
	}
	g_main_loop_quit(self->loop);
}

static gboolean agent_main_quit_cb(gpointer user_data)
{
	AgentMain *self = user_data;

	g_debug("signal received, quitting");
	g_main_loop_quit(self->loop);
	return G_SOURCE_CONTINUE;
}

typedef struct {
	AgentMain *self;
	GString *reply;
	guint count;
} AgentOneshot;

static gboolean agent_oneshot_cb(const char *msg, gsize len, const GError *error,
                                 gpointer user_data)
{
	AgentOneshot *oneshot = user_data;

	oneshot->count++;
	if (oneshot->count > 1)
		return FALSE;
	oneshot->reply = agent_main_handle(msg, len, error, oneshot->self);
	return TRUE;
}

/*
 * qemu-ga's guest-exec runs one process per request, so a job that a one-shot
 * agent started could never be polled: gb-bench-start waits for its job and
 * answers with the final gb-bench-status reply instead (PROTOCOL.md, "Through
 * qemu-ga"). SIGTERM/SIGINT cancel the job, which then reports "cancelled".
 * Takes reply; returns the reply to print.
 */
static GString *agent_oneshot_wait_job(AgentMain *self, GString *reply_owned,
                                       const sigset_t *signals)
{
	g_autoptr(GString) reply = reply_owned;
	g_autoptr(JsonNode) id = NULL;
	g_autoptr(JsonNode) ret = gb_reply_parse(reply->str, reply->len, &id, NULL);
	g_autoptr(JsonObject) args = json_object_new();
	JsonObject *obj = NULL;
	gint64 job = 0;

	/* an error or a dry run: no job runs */
	if (ret == NULL || !gb_json_node_get_object(ret, "reply", &obj, NULL) ||
	    !gb_json_get_int(obj, "job", GB_JSON_REQUIRED, 1, G_MAXINT64, &job, NULL))
		return g_steal_pointer(&reply);
	json_object_set_int_member(args, "job", job);
	for (;;) {
		g_autoptr(GError) error = NULL;
		g_autoptr(JsonNode) status = agent_cmd_bench_status(&self->ctx, args, &error);
		struct timespec ts = { 0, AGENT_ONESHOT_JOB_POLL_MS * 1000L * 1000L };
		const char *state = NULL;

		if (status == NULL || !gb_json_node_get_object(status, "status", &obj, &error) ||
		    !gb_json_get_string(obj, "state", GB_JSON_REQUIRED, &state, &error))
			return gb_reply_error(error, id);
		if (g_strcmp0(state, "running") != 0)
			return gb_reply_return(status, id);
		if (sigtimedwait(signals, NULL, &ts) > 0) {
			g_autoptr(JsonNode) cancelled =
			    agent_cmd_bench_cancel(&self->ctx, args, NULL);
			g_debug("signal received, cancelling job %" G_GINT64_FORMAT, job);
		}
	}
}

/* --oneshot: the request comes from argv, the reply goes to stdout. */
static int agent_run_oneshot(AgentMain *self, const char *request)
{
	const AgentConfig *config = self->ctx.config;
	g_autoptr(GbFramer) framer = gb_framer_new(config->max_message_size, config->max_depth);
	AgentOneshot oneshot = { .self = self };
	g_autoptr(GString) reply = NULL;
	g_autoptr(GbRequest) req = gb_request_parse(request, strlen(request), NULL, NULL);
	gboolean bench_start = req != NULL && g_strcmp0(req->execute, "gb-bench-start") == 0;
	sigset_t signals;

	/* blocked before the job's thread exists, so that only sigtimedwait() sees them */
	sigemptyset(&signals);
	sigaddset(&signals, SIGTERM);
	sigaddset(&signals, SIGINT);
	if (bench_start)
		pthread_sigmask(SIG_BLOCK, &signals, NULL);
	gb_framer_push(framer, (const guint8 *)request, strlen(request), agent_oneshot_cb,
	               &oneshot);
	/* ends a top-level scalar */
	gb_framer_push(framer, (const guint8 *)"\n", 1, agent_oneshot_cb, &oneshot);
	reply = oneshot.reply;
	if (oneshot.count > 1)
		return agent_usage_error("--oneshot takes exactly one request");
	if (oneshot.count == 0 && gb_framer_is_partial(framer)) {
		g_autoptr(GError) error = g_error_new_literal(
		    GB_ERROR, GB_ERROR_PARSE, "JSON parse error, unexpected end of input");
		reply = agent_dispatch_framing_error(error);
	} else if (oneshot.count == 0) {
		return agent_usage_error("--oneshot needs a request, e.g. "
		                         "'{\"execute\": \"guest-ping\"}'");
	}
	if (bench_start && reply != NULL)
		reply = agent_oneshot_wait_job(self, g_steal_pointer(&reply), &signals);
	if (reply != NULL && fwrite(reply->str, 1, reply->len, stdout) != reply->len) {
		g_printerr("guestbench-agent: cannot write the reply to stdout\n");
		return AGENT_EXIT_ERROR;
	}
	if (fflush(stdout) != 0)
		return AGENT_EXIT_ERROR;
	return AGENT_EXIT_OK;
}

/*
 * A program of the agent's own (guestbench-agent-bench): beside this binary
 * when it is there (the build tree), else in GB_AGENT_LIBEXECDIR where the
 * packages install it.
 */
static char *agent_find_program(const char *name)
{
	g_autofree char *self = g_file_read_link("/proc/self/exe", NULL);
	g_autofree char *dir = self != NULL ? g_path_get_dirname(self) : NULL;
	g_autofree char *beside = dir != NULL ? g_build_filename(dir, name, NULL) : NULL;

	if (beside != NULL && g_file_test(beside, G_FILE_TEST_IS_EXECUTABLE))
		return g_steal_pointer(&beside);
	return g_build_filename(GB_AGENT_LIBEXECDIR, name, NULL);
}

/* Command line values override the config file. */
static gboolean agent_options_apply(AgentOptions *opts, AgentConfig *config, GError **error)
{
	if (opts->method != NULL) {
		g_free(config->method);
		config->method = g_strdup(opts->method);
	}
	if (opts->path != NULL) {
		if (*opts->path == '\0') {
			g_set_error_literal(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT,
			                    "--path must not be empty");
			return FALSE;
		}
		g_free(config->path);
		config->path = g_strdup(opts->path);
	}
	if (opts->sysroot != NULL) {
		if (*opts->sysroot == '\0') {
			g_set_error_literal(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT,
			                    "--sysroot must not be empty");
			return FALSE;
		}
		g_free(config->sysroot);
		config->sysroot = g_strdup(opts->sysroot);
	}
	if (opts->scratch_dir != NULL) {
		if (*opts->scratch_dir == '\0') {
			g_set_error_literal(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT,
			                    "--scratch-dir must not be empty");
			return FALSE;
		}
		g_free(config->scratch_dir);
		config->scratch_dir = g_strdup(opts->scratch_dir);
	}
	if (opts->allow_rpcs != NULL) {
		g_strfreev(config->allow_rpcs);
		config->allow_rpcs = agent_options_merge_lists(opts->allow_rpcs);
		if (config->allow_rpcs == NULL) {
			g_set_error_literal(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT,
			                    "--allow-rpcs needs at least one command name");
			return FALSE;
		}
	}
	if (opts->block_rpcs != NULL) {
		g_strfreev(config->block_rpcs);
		config->block_rpcs = agent_options_merge_lists(opts->block_rpcs);
	}
	if (opts->verbose)
		config->verbose = TRUE;
	return TRUE;
}

int main(int argc, char **argv)
{
	AgentOptions opts = { 0 };
	AgentMain self = { .exit_code = AGENT_EXIT_OK };
	g_autoptr(GOptionContext) context = NULL;
	g_autoptr(GError) error = NULL;
	g_autoptr(AgentConfig) config = NULL;
	g_autoptr(AgentTransport) transport = NULL;
	const GOptionEntry entries[] = {
		{ "method", 'm', 0, G_OPTION_ARG_STRING, &opts.method,
		  "Transport: virtio-serial (default), unix-listen, vsock-listen or stdio",
		  "METHOD" },
		{ "path", 'p', 0, G_OPTION_ARG_STRING, &opts.path,
		  "virtio-serial: port device (default: the port named " GB_AGENT_PORT_NAME
		  "); unix-listen: socket path; vsock-listen: CID:PORT (CID -1 or any = all)",
		  "PATH" },
		{ "config", 'c', 0, G_OPTION_ARG_FILENAME, &opts.config,
		  "Config file (default " GB_AGENT_DEFAULT_CONFIG ", used if it exists)", "FILE" },
		{ "sysroot", 0, 0, G_OPTION_ARG_FILENAME, &opts.sysroot,
		  "Read facts from /proc and /sys under DIR instead of / (default /)", "DIR" },
		{ "scratch-dir", 0, 0, G_OPTION_ARG_FILENAME, &opts.scratch_dir,
		  "The only directory a disk benchmark may write to "
		  "(default " GB_AGENT_DEFAULT_SCRATCH ")",
		  "DIR" },
		{ "allow-rpcs", 'a', 0, G_OPTION_ARG_STRING_ARRAY, &opts.allow_rpcs,
		  "Comma list of commands to enable (globs allowed); all others are disabled",
		  "LIST" },
		{ "block-rpcs", 'b', 0, G_OPTION_ARG_STRING_ARRAY, &opts.block_rpcs,
		  "Comma list of commands to disable (globs allowed, e.g. gb-bench-*); wins over "
		  "--allow-rpcs",
		  "LIST" },
		{ "oneshot", 0, 0, G_OPTION_ARG_STRING, &opts.oneshot,
		  "Run the one request JSON, print its reply to stdout and exit", "JSON" },
		{ "verbose", 'v', 0, G_OPTION_ARG_NONE, &opts.verbose,
		  "Log debug messages (each request, client and host events) to stderr", NULL },
		{ "version", 0, 0, G_OPTION_ARG_NONE, &opts.version, "Print the version and exit",
		  NULL },
		{ NULL },
	};
	sigset_t quit_signals;
	int rc;

	/* before anything can start a thread: SIGIO must stay blocked in all of them */
	agent_transport_block_sigio();
	/* a peer that vanishes mid-write is an EPIPE to handle, not a reason to die */
	signal(SIGPIPE, SIG_IGN);
	/* stdout may carry replies (stdio, --oneshot): logs go to stderr only */
	g_log_writer_default_set_use_stderr(TRUE);

	context = g_option_context_new("- guestbench guest agent");
	g_option_context_add_main_entries(context, entries, NULL);
	g_option_context_set_description(
	    context,
	    "Answers guestbench (and any QEMU guest agent client) on a virtio-serial port:\n"
	    "facts about the guest and benchmarks run inside it.\n"
	    "\n"
	    "The config file is a key file with one group [general] and the keys method,\n"
	    "path, sysroot, scratch-dir, allow-rpcs, block-rpcs (lists separated by ',' or\n"
	    "';'), verbose (true/false), max-message-size (bytes, default 1048576),\n"
	    "max-bench-seconds (default 600) and max-bench-file-size (bytes, default 8 GiB).\n"
	    "Options on the command line override the file.\n"
	    "\n"
	    "Exit status: 0 on success (also after SIGTERM/SIGINT), 1 on a runtime error,\n"
	    "2 on a usage or configuration error.");
	if (!g_option_context_parse(context, &argc, &argv, &error)) {
		rc = agent_usage_error(error->message);
		agent_options_clear(&opts);
		return rc;
	}
	if (argc > 1) {
		g_autofree char *msg = g_strdup_printf("unexpected argument '%s'", argv[1]);
		agent_options_clear(&opts);
		return agent_usage_error(msg);
	}
	if (opts.version) {
		g_print("guestbench-agent %s\n", GB_VERSION);
		agent_options_clear(&opts);
		return AGENT_EXIT_OK;
	}

	config = agent_config_new();
	if (!agent_config_load_file(config,
	                            opts.config != NULL ? opts.config : GB_AGENT_DEFAULT_CONFIG,
	                            opts.config != NULL, &error) ||
	    !agent_options_apply(&opts, config, &error) || !agent_config_check(config, &error)) {
		agent_options_clear(&opts);
		return agent_usage_error(error->message);
	}
	if (config->verbose)
		g_log_set_debug_enabled(TRUE);
	config->bench_worker = agent_find_program("guestbench-agent-bench");
	self.ctx.config = config;

	if (opts.oneshot != NULL) {
		/* nothing to open: drop at once (SECURITY.md) */
		if (!agent_privilege_drop(&error)) {
			g_printerr("guestbench-agent: cannot drop privileges: %s\n",
			           error->message);
			agent_options_clear(&opts);
			return AGENT_EXIT_ERROR;
		}
		rc = agent_run_oneshot(&self, opts.oneshot);
		agent_jobs_shutdown(&self.ctx);
		agent_options_clear(&opts);
		return rc;
	}
	agent_options_clear(&opts);

	self.loop = g_main_loop_new(NULL, FALSE);
	/*
	 * A client may signal us as soon as it can connect: hold SIGTERM/SIGINT
	 * from before the socket exists until their sources are in place. Those
	 * sources start GLib's worker thread, and capabilities are per thread, so
	 * the privileges go first (SECURITY.md).
	 */
	sigemptyset(&quit_signals);
	sigaddset(&quit_signals, SIGTERM);
	sigaddset(&quit_signals, SIGINT);
	pthread_sigmask(SIG_BLOCK, &quit_signals, NULL);
	/* the first gb-get-facts measures steal since start-up instead of sleeping */
	agent_facts_steal_prime(config->sysroot != NULL ? config->sysroot : "/");
	transport =
	    agent_transport_new(config, agent_main_handle, agent_main_closed, &self, &error);
	if (transport == NULL) {
		g_printerr("guestbench-agent: %s\n", error->message);
		g_main_loop_unref(self.loop);
		return AGENT_EXIT_ERROR;
	}
	/* the port is open: from here on nothing needs a capability */
	if (!agent_privilege_drop(&error)) {
		g_printerr("guestbench-agent: cannot drop privileges: %s\n", error->message);
		g_clear_pointer(&transport, agent_transport_free);
		g_main_loop_unref(self.loop);
		return AGENT_EXIT_ERROR;
	}
	g_unix_signal_add(SIGTERM, agent_main_quit_cb, &self);
	g_unix_signal_add(SIGINT, agent_main_quit_cb, &self);
	pthread_sigmask(SIG_UNBLOCK, &quit_signals, NULL);
	g_main_loop_run(self.loop);

	/* stop a running benchmark before its context goes away */
	agent_jobs_shutdown(&self.ctx);
	g_clear_pointer(&transport, agent_transport_free);
	g_main_loop_unref(self.loop);
	return self.exit_code;
}
