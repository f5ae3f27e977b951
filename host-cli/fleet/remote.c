/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"

#include <math.h>
#include <signal.h>
#include <string.h>

#include <glib-unix.h>

#include "guestbench-protocol.h"

#include "fleet/merge.h"
#include "fleet/remote.h"
#include "fleet/target.h"
#include "render/escape.h"
#include "transport/reply-budget.h"

gboolean cli_remote_check_host(const char *host, GError **error)
{
	/* a leading '-' would be an ssh option (-oProxyCommand=...), not a host */
	if (host[0] == '\0' || host[0] == '-' || strlen(host) > 255) {
		g_set_error(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT,
		            "--hosts: '%s' is not a host name", host);
		return FALSE;
	}
	for (const char *p = host; *p != '\0'; p++) {
		if (g_ascii_isspace(*p) || g_ascii_iscntrl(*p) || (guchar)*p >= 0x80) {
			g_autofree char *esc = cli_escape_terminal(host);

			g_set_error(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT,
			            "--hosts: '%s' is not a host name", esc);
			return FALSE;
		}
	}
	return TRUE;
}

gboolean cli_remote_option_cb(const char *option_name, const char *value, gpointer data,
                              GError **error)
{
	CliApp *app = data;
	g_auto(GStrv) names = g_strsplit(value, ",", -1);
	g_autoptr(GPtrArray) hosts = g_ptr_array_new_with_free_func(g_free);

	/* g_strsplit() makes no element of "": check it here */
	if (value[0] == '\0') {
		g_set_error_literal(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT,
		                    "--hosts: no host given");
		return FALSE;
	}
	for (guint i = 0; app->opts.hosts != NULL && app->opts.hosts[i] != NULL; i++)
		g_ptr_array_add(hosts, g_strdup(app->opts.hosts[i]));
	for (guint i = 0; names[i] != NULL; i++) {
		if (!cli_remote_check_host(names[i], error))
			return FALSE;
		/* the same host twice would merge its guests twice */
		if (g_ptr_array_find_with_equal_func(hosts, names[i], g_str_equal, NULL)) {
			g_set_error(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT,
			            "--hosts: %s is given twice", names[i]);
			return FALSE;
		}
		g_ptr_array_add(hosts, g_strdup(names[i]));
	}
	if (hosts->len > CLI_REMOTE_MAX_HOSTS) {
		g_set_error(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT,
		            "--hosts: more than %d hosts", CLI_REMOTE_MAX_HOSTS);
		return FALSE;
	}
	g_ptr_array_add(hosts, NULL);
	g_strfreev(app->opts.hosts);
	app->opts.hosts = (char **)g_ptr_array_free(g_steal_pointer(&hosts), FALSE);
	return TRUE;
}

gboolean cli_remote_jobs_option_cb(const char *option_name, const char *value, gpointer data,
                                   GError **error)
{
	CliApp *app = data;
	guint64 jobs = 0;

	if (!g_ascii_string_to_unsigned(value, 10, 1, CLI_REMOTE_MAX_HOSTS, &jobs, NULL)) {
		g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
		            "invalid value '%s' for --host-jobs (expected a whole number from 1 "
		            "to %d)",
		            value, CLI_REMOTE_MAX_HOSTS);
		return FALSE;
	}
	app->opts.host_jobs = (guint)jobs;
	return TRUE;
}

/* Long options whose value is the next argument: copied (or dropped) together with it. */
static gboolean cli_remote_takes_value(const char *name)
{
	static const char *const names[] = { "format",    "output", "jobs",         "timeout",
		                             "color",     "qmp",    "host-sysroot", "deadline",
		                             "inventory", "tag",    "name",         "libvirt-dir",
		                             "qga-agent", "hosts",  "host-jobs",    "wait-busy",
		                             "connect",   NULL };
	return g_strv_contains(names, name);
}

GPtrArray *cli_remote_build_args(const char *const *argv, GError **error)
{
	g_autoptr(GPtrArray) args = g_ptr_array_new_with_free_func(g_free);
	static const char *const dropped[] = { "hosts",  "host-jobs", "output",
		                               "format", "color",     NULL };
	gboolean options_done = FALSE;

	g_ptr_array_add(args, g_strdup("--format"));
	g_ptr_array_add(args, g_strdup("json"));
	for (guint i = 1; argv[i] != NULL; i++) {
		const char *arg = argv[i];
		g_autofree char *name = NULL;
		gboolean has_value;

		if (options_done || arg[0] != '-' || arg[1] == '\0') {
			g_ptr_array_add(args, g_strdup(arg));
			continue;
		}
		if (g_strcmp0(arg, "--") == 0) {
			options_done = TRUE;
			g_ptr_array_add(args, g_strdup(arg));
			continue;
		}
		if (arg[1] == '-') {
			const char *eq = strchr(arg, '=');

			name = eq != NULL ? g_strndup(arg + 2, eq - arg - 2) : g_strdup(arg + 2);
			has_value = eq == NULL && cli_remote_takes_value(name);
		} else if (g_strcmp0(arg, "-c") == 0) {
			name = g_strdup("connect");
			has_value = TRUE;
		} else if (arg[1] == 'o' || arg[1] == 'j') {
			/* -oFILE, -j4 or -o FILE, -j 4 */
			name = g_strdup(arg[1] == 'o' ? "output" : "jobs");
			has_value = arg[2] == '\0';
		} else {
			/* a cluster such as -qv: -o inside it would swallow the next argument */
			if (strchr(arg + 1, 'o') != NULL || strchr(arg + 1, 'j') != NULL) {
				g_set_error(
				    error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT,
				    "with --hosts, give -o and -j on their own, not in '%s'", arg);
				return NULL;
			}
			g_ptr_array_add(args, g_strdup(arg));
			continue;
		}
		/* another node's run is that node's own: pve:/// there */
		if (g_strcmp0(name, "connect") == 0 || g_strcmp0(arg, "-c") == 0) {
			const char *value = arg[1] == '-' && strchr(arg, '=') != NULL
			                        ? strchr(arg, '=') + 1
			                        : argv[i + 1];
			if (cli_pve_is_remote_uri(value)) {
				g_ptr_array_add(args, g_strdup("--connect"));
				g_ptr_array_add(args, g_strdup("pve:///"));
				if (value == argv[i + 1])
					i++;
				continue;
			}
		}
		if (g_strv_contains(dropped, name)) {
			if (has_value && argv[i + 1] != NULL)
				i++;
			continue;
		}
		g_ptr_array_add(args, g_strdup(arg));
		if (has_value && argv[i + 1] != NULL)
			g_ptr_array_add(args, g_strdup(argv[++i]));
	}
	return g_steal_pointer(&args);
}

gboolean cli_remote_prepare(CliApp *app, GError **error)
{
	g_autoptr(GPtrArray) args = NULL;

	if (app->command->start == NULL) {
		g_set_error(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT,
		            "--hosts runs only commands that contact guests, not '%s'",
		            app->command->name);
		return FALSE;
	}
	if (app->opts.format == CLI_FORMAT_HTML) {
		g_set_error_literal(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT,
		                    "--hosts cannot write --format html");
		return FALSE;
	}
	/* a bad command line is found here, not once per host */
	args = cli_remote_build_args((const char *const *)app->argv, error);
	return args != NULL;
}

/* ---- running ---------------------------------------------------------------------------- */

typedef struct {
	CliApp *app;
	const char *host;
	GSubprocess *proc;
	GByteArray *out_buf; /* what came so far, up to CLI_REMOTE_MAX_OUTPUT */
	GByteArray *err_buf; /* its last CLI_REMOTE_MAX_ERR bytes */
	CliReplyHold hold;   /* what its document holds of the reply budget, as read then parsed */
	guint n_pending;     /* the two reads and the wait still running */
	char *out;
	char *err;
	GError *error; /* not started, spawn or communicate failed, cut off */
	gboolean started;
	gboolean done;
	gboolean timed_out; /* force-exited at the deadline */
	int interrupted;    /* SIGINT or SIGTERM sent to it on ours */
} CliRemoteHost;

static void cli_remote_host_free(CliRemoteHost *rh)
{
	g_clear_object(&rh->proc);
	if (rh->out_buf != NULL)
		g_byte_array_unref(rh->out_buf);
	if (rh->err_buf != NULL)
		g_byte_array_unref(rh->err_buf);
	g_free(rh->out);
	g_free(rh->err);
	g_clear_error(&rh->error);
	cli_reply_budget_release(&rh->hold);
	g_free(rh);
}

static const char *cli_remote_signame(int signum)
{
	return signum == SIGINT ? "SIGINT" : "SIGTERM";
}

/* Both streams at their end and the process gone: what it wrote is the host's answer. */
static void cli_remote_finish_output(CliRemoteHost *rh)
{
	g_byte_array_append(rh->out_buf, (const guint8 *)"", 1);
	g_byte_array_append(rh->err_buf, (const guint8 *)"", 1);
	rh->err = g_utf8_make_valid((const char *)rh->err_buf->data, -1);
	if (rh->error == NULL && !g_utf8_validate((const char *)rh->out_buf->data, -1, NULL))
		rh->error = g_error_new_literal(GB_ERROR, GB_ERROR_PARSE,
		                                "the document is not valid UTF-8");
	if (rh->error == NULL)
		rh->out = (char *)g_byte_array_free(g_steal_pointer(&rh->out_buf), FALSE);
	if (rh->timed_out) {
		g_clear_error(&rh->error);
		g_set_error_literal(&rh->error, GB_ERROR, GB_ERROR_TIMEOUT,
		                    "no document within --deadline + 5 s");
	} else if (rh->interrupted != 0) {
		g_clear_error(&rh->error);
		g_set_error(&rh->error, GB_ERROR, GB_ERROR_FAILED, "interrupted by %s",
		            cli_remote_signame(rh->interrupted));
	}
	rh->done = TRUE;
	g_main_context_wakeup(rh->app->context);
}

static void cli_remote_read(CliRemoteHost *rh, GInputStream *stream);

static void cli_remote_pending_done(CliRemoteHost *rh)
{
	if (--rh->n_pending == 0)
		cli_remote_finish_output(rh);
}

/*
 * A hostile or broken host may write without end: stdout stops at
 * CLI_REMOTE_MAX_OUTPUT (an error, and ssh is ended), stderr keeps its last
 * CLI_REMOTE_MAX_ERR bytes, where the message is.
 */
static void cli_remote_read_cb(GObject *source, GAsyncResult *res, gpointer user_data)
{
	CliRemoteHost *rh = user_data;
	GInputStream *stream = G_INPUT_STREAM(source);
	gboolean is_out = stream == g_subprocess_get_stdout_pipe(rh->proc);
	GByteArray *buf = is_out ? rh->out_buf : rh->err_buf;
	g_autoptr(GError) error = NULL;
	g_autoptr(GBytes) bytes = g_input_stream_read_bytes_finish(stream, res, &error);
	gsize n = bytes != NULL ? g_bytes_get_size(bytes) : 0;

	if (bytes == NULL && rh->error == NULL)
		rh->error = g_steal_pointer(&error);
	if (n == 0) {
		cli_remote_pending_done(rh);
		return;
	}
	g_byte_array_append(buf, g_bytes_get_data(bytes, NULL), (guint)n);
	if (is_out) {
		GError *cut = NULL;

		/* charged as it comes: all hosts together stay within the fleet's reply budget */
		if (buf->len > CLI_REMOTE_MAX_OUTPUT)
			cut = g_error_new(GB_ERROR, GB_ERROR_TOO_LARGE,
			                  "the document is larger than %d MiB",
			                  CLI_REMOTE_MAX_OUTPUT / (1024 * 1024));
		else
			cli_reply_budget_grow(&rh->hold, buf->len, "this host's output", &cut);
		if (cut != NULL) {
			if (rh->error == NULL)
				rh->error = cut;
			else
				g_error_free(cut);
			g_byte_array_unref(rh->out_buf);
			rh->out_buf = g_byte_array_new();
			cli_reply_budget_release(&rh->hold);
			g_subprocess_force_exit(rh->proc);
			cli_remote_pending_done(rh);
			return;
		}
	}
	if (!is_out && buf->len > CLI_REMOTE_MAX_ERR)
		g_byte_array_remove_range(buf, 0, buf->len - CLI_REMOTE_MAX_ERR);
	cli_remote_read(rh, stream);
}

static void cli_remote_read(CliRemoteHost *rh, GInputStream *stream)
{
	g_input_stream_read_bytes_async(stream, 65536, G_PRIORITY_DEFAULT, rh->app->cancellable,
	                                cli_remote_read_cb, rh);
}

static void cli_remote_wait_cb(GObject *source, GAsyncResult *res, gpointer user_data)
{
	CliRemoteHost *rh = user_data;
	g_autoptr(GError) error = NULL;

	if (!g_subprocess_wait_finish(G_SUBPROCESS(source), res, &error) && rh->error == NULL)
		rh->error = g_steal_pointer(&error);
	cli_remote_pending_done(rh);
}

/* The run's state that the main loop's sources change. */
typedef struct {
	gboolean deadline_hit;
	int signal; /* the last SIGINT/SIGTERM not acted on yet */
} CliRemoteEvents;

static gboolean cli_remote_deadline_cb(gpointer user_data)
{
	CliRemoteEvents *ev = user_data;

	ev->deadline_hit = TRUE;
	return G_SOURCE_REMOVE;
}

static gboolean cli_remote_sigint_cb(gpointer user_data)
{
	CliRemoteEvents *ev = user_data;

	ev->signal = SIGINT;
	return G_SOURCE_CONTINUE;
}

static gboolean cli_remote_sigterm_cb(gpointer user_data)
{
	CliRemoteEvents *ev = user_data;

	ev->signal = SIGTERM;
	return G_SOURCE_CONTINUE;
}

static GSource *cli_remote_attach(CliApp *app, GSource *source, GSourceFunc func,
                                  CliRemoteEvents *ev)
{
	g_source_set_callback(source, func, ev, NULL);
	g_source_attach(source, app->context);
	return source;
}

/* ssh [GUESTBENCH_SSH words] -o BatchMode=yes -- HOST 'guestbench' '--format' 'json' ... */
static GPtrArray *cli_remote_ssh_argv(CliApp *app, const char *host, GPtrArray *args,
                                      GError **error)
{
	g_autoptr(GPtrArray) argv = g_ptr_array_new_with_free_func(g_free);
	g_autoptr(GString) remote = g_string_new("guestbench");
	const char *ssh = g_getenv(CLI_REMOTE_SSH_ENV);
	g_auto(GStrv) words = NULL;

	if (ssh == NULL || ssh[0] == '\0')
		ssh = "ssh";
	if (!g_shell_parse_argv(ssh, NULL, &words, error)) {
		g_prefix_error(error, "$%s: ", CLI_REMOTE_SSH_ENV);
		return NULL;
	}
	for (guint i = 0; words[i] != NULL; i++)
		g_ptr_array_add(argv, g_strdup(words[i]));
	/* never a password prompt: a host without a key fails instead of hanging */
	g_ptr_array_add(argv, g_strdup("-o"));
	g_ptr_array_add(argv, g_strdup("BatchMode=yes"));
	/*
	 * never a hang: connecting is bounded by --timeout, and a connection whose
	 * peer went silent is dropped after 3 unanswered keepalives 5 s apart
	 */
	g_ptr_array_add(argv, g_strdup("-o"));
	g_ptr_array_add(
	    argv, g_strdup_printf("ConnectTimeout=%u", (guint)MAX(1.0, ceil(app->opts.timeout))));
	g_ptr_array_add(argv, g_strdup("-o"));
	g_ptr_array_add(argv, g_strdup("ServerAliveInterval=5"));
	g_ptr_array_add(argv, g_strdup("-o"));
	g_ptr_array_add(argv, g_strdup("ServerAliveCountMax=3"));
	g_ptr_array_add(argv, g_strdup("--"));
	g_ptr_array_add(argv, g_strdup(host));
	/* ssh joins its arguments into one line for the remote shell: quote each */
	for (guint i = 0; i < args->len; i++) {
		g_autofree char *quoted = g_shell_quote(g_ptr_array_index(args, i));

		g_string_append_printf(remote, " %s", quoted);
	}
	g_ptr_array_add(argv, g_string_free(g_steal_pointer(&remote), FALSE));
	g_ptr_array_add(argv, NULL);
	return g_steal_pointer(&argv);
}

/*
 * The last MAX non-empty lines of stderr, joined by "; ", for the error of a host
 * that failed.
 */
static char *cli_remote_last_lines(const char *text, guint max)
{
	g_auto(GStrv) lines = g_strsplit(text != NULL ? text : "", "\n", -1);
	g_autoptr(GPtrArray) last = g_ptr_array_new();

	for (guint i = g_strv_length(lines); i > 0 && last->len < max; i--) {
		g_strstrip(lines[i - 1]);
		if (lines[i - 1][0] != '\0')
			g_ptr_array_insert(last, 0, lines[i - 1]);
	}
	if (last->len == 0)
		return g_strdup("no message");
	g_ptr_array_add(last, NULL);
	return g_strjoinv("; ", (char **)last->pdata);
}

/*
 * The document of a host that finished: parsed, charged to the reply budget at
 * its cost (its text is freed: the hold of what was read becomes that of the
 * tree), and merged.
 */
static gboolean cli_remote_add_document(CliMerge *merge, CliRemoteHost *rh, const char *source,
                                        GError **error)
{
	g_autoptr(JsonNode) root = NULL;
	gsize values = 0;
	gsize text;

	root = gb_json_parse(rh->out != NULL ? rh->out : "", rh->out != NULL ? strlen(rh->out) : 0,
	                     error);
	g_clear_pointer(&rh->out, g_free);
	if (root == NULL) {
		g_prefix_error(error, "%s: ", source);
		return FALSE;
	}
	text = gb_json_measure(root, &values);
	if (!cli_reply_budget_grow(&rh->hold, cli_reply_budget_cost(text, values),
	                           "this host's document", error))
		return FALSE;
	return cli_merge_add_document(merge, source, rh->host, root, error);
}

/* One host's outcome into the merge; returns that host's exit status. */
static int cli_remote_collect(CliMerge *merge, CliRemoteHost *rh)
{
	g_autoptr(GError) error = NULL;
	g_autofree char *target = g_strdup_printf("ssh:%s", rh->host);
	g_autofree char *message = NULL;
	g_autofree char *source = g_strdup_printf("host %s", rh->host);
	int rc = -1;

	if (rh->error != NULL) {
		message = g_strdup(rh->error->message);
	} else {
		rc = g_subprocess_get_if_exited(rh->proc) ? g_subprocess_get_exit_status(rh->proc)
		                                          : -1;
		/* 0, 1 (FAIL findings), 3 (some guests down), 4 (busy) still print the document */
		if (rc == CLI_EXIT_OK || rc == CLI_EXIT_FINDING || rc == CLI_EXIT_GUEST ||
		    rc == CLI_EXIT_BUSY) {
			if (cli_remote_add_document(merge, rh, source, &error))
				return rc;
			message = g_strdup(error->message);
		} else {
			/*
			 * 255 is ssh's own failure, whose cause may come before its last line
			 * (a ProxyJump's "Permission denied", then "Connection closed");
			 * guestbench's message is its last line
			 */
			g_autofree char *last =
			    cli_remote_last_lines(rh->err, rc == CLI_REMOTE_SSH_FAILED ? 3 : 1);

			message = rc >= 0 ? g_strdup_printf("exit %d: %s", rc, last)
			                  : g_strdup_printf("killed: %s", last);
		}
	}
	{
		g_autofree char *full = g_strdup_printf("%s: %s", source, message);

		cli_merge_add_failure(merge, rh->host, target, full);
	}
	return CLI_EXIT_GUEST;
}

/* Spawns one host's ssh (on the thread-default context); FALSE when it could not start. */
static gboolean cli_remote_start(CliRemoteHost *rh, GSubprocessLauncher *launcher, GPtrArray *args)
{
	g_autoptr(GPtrArray) argv = cli_remote_ssh_argv(rh->app, rh->host, args, &rh->error);

	rh->started = TRUE;
	if (argv != NULL)
		rh->proc = g_subprocess_launcher_spawnv(launcher, (const char *const *)argv->pdata,
		                                        &rh->error);
	if (rh->proc == NULL) {
		rh->done = TRUE;
		return FALSE;
	}
	g_debug("%s: %s", rh->host, (const char *)g_ptr_array_index(argv, argv->len - 2));
	/* empty stdin: ssh must not read the terminal */
	g_output_stream_close(g_subprocess_get_stdin_pipe(rh->proc), NULL, NULL);
	rh->out_buf = g_byte_array_new();
	rh->err_buf = g_byte_array_new();
	rh->n_pending = 3;
	cli_remote_read(rh, g_subprocess_get_stdout_pipe(rh->proc));
	cli_remote_read(rh, g_subprocess_get_stderr_pipe(rh->proc));
	g_subprocess_wait_async(rh->proc, rh->app->cancellable, cli_remote_wait_cb, rh);
	return TRUE;
}

/* A host still waiting for its turn that will not get one; error is taken. */
static void cli_remote_not_started(CliRemoteHost *rh, GError *error)
{
	rh->started = TRUE;
	rh->done = TRUE;
	rh->error = error;
}

/*
 * The first SIGINT/SIGTERM: no more hosts start, the running ssh get the
 * same signal (ssh ends, and with it the remote session) and what finished
 * stays in the document. A second one kills them.
 */
static void cli_remote_interrupt(CliApp *app, GPtrArray *hosts, int signum)
{
	gboolean force = app->signal_received != 0;

	if (app->signal_received == 0)
		app->signal_received = signum;
	for (guint i = 0; i < hosts->len; i++) {
		CliRemoteHost *rh = g_ptr_array_index(hosts, i);

		if (!rh->started) {
			cli_remote_not_started(rh, g_error_new(GB_ERROR, GB_ERROR_FAILED,
			                                       "not started (interrupted by %s)",
			                                       cli_remote_signame(signum)));
			continue;
		}
		if (rh->done || rh->proc == NULL)
			continue;
		if (force) {
			g_subprocess_force_exit(rh->proc);
		} else if (rh->interrupted == 0) {
			rh->interrupted = signum;
			g_subprocess_send_signal(rh->proc, signum);
		}
	}
}

int cli_remote_run(CliApp *app)
{
	g_autoptr(GError) error = NULL;
	g_autoptr(GPtrArray) args = cli_remote_build_args((const char *const *)app->argv, &error);
	g_autoptr(GPtrArray) hosts =
	    g_ptr_array_new_with_free_func((GDestroyNotify)cli_remote_host_free);
	g_autoptr(GPtrArray) sources = g_ptr_array_new();
	g_autoptr(CliMerge) merge = cli_merge_new_for_command(app->command);
	g_autoptr(GSubprocessLauncher) launcher = NULL;
	g_autoptr(GString) doc = NULL;
	CliRemoteEvents ev = { 0 };
	guint max_running =
	    app->opts.host_jobs != 0 ? app->opts.host_jobs : CLI_REMOTE_DEFAULT_JOBS;
	gboolean any_finding = FALSE;
	gboolean any_busy = FALSE;
	gboolean any_failed = FALSE;
	guint next = 0;

	if (args == NULL) {
		cli_escape_printerr(NULL, error->message);
		return CLI_EXIT_USAGE;
	}
	launcher = g_subprocess_launcher_new(G_SUBPROCESS_FLAGS_STDIN_PIPE |
	                                     G_SUBPROCESS_FLAGS_STDOUT_PIPE |
	                                     G_SUBPROCESS_FLAGS_STDERR_PIPE);
	/*
	 * BatchMode=yes reaches only this ssh, not the one a ProxyJump (or ProxyCommand)
	 * starts: without a key for the jump host, that one would prompt on the terminal
	 * and wait there. Every prompt of every ssh goes to an askpass that answers
	 * nothing, so all of them fail at once instead.
	 */
	g_subprocess_launcher_setenv(launcher, "SSH_ASKPASS_REQUIRE", "force", TRUE);
	g_subprocess_launcher_setenv(launcher, "SSH_ASKPASS", CLI_REMOTE_ASKPASS, TRUE);
	/* each host is sure of budget / 2N of it for its document, as each guest is */
	if (app->opts.reply_budget > 0)
		cli_reply_budget_set(app->opts.reply_budget, g_strv_length(app->opts.hosts));
	for (guint i = 0; app->opts.hosts[i] != NULL; i++) {
		CliRemoteHost *rh = g_new0(CliRemoteHost, 1);

		rh->app = app;
		rh->host = app->opts.hosts[i];
		g_ptr_array_add(hosts, rh);
	}
	g_main_context_push_thread_default(app->context);
	g_ptr_array_add(sources, cli_remote_attach(app, g_unix_signal_source_new(SIGINT),
	                                           cli_remote_sigint_cb, &ev));
	g_ptr_array_add(sources, cli_remote_attach(app, g_unix_signal_source_new(SIGTERM),
	                                           cli_remote_sigterm_cb, &ev));
	if (app->opts.deadline > 0) {
		/* the remote runs enforce --deadline themselves; this catches a host that does not
		 */
		g_ptr_array_add(sources,
		                cli_remote_attach(
		                    app,
		                    g_timeout_source_new((guint)((app->opts.deadline + 5) * 1000)),
		                    cli_remote_deadline_cb, &ev));
	}
	for (;;) {
		guint running = 0;
		gboolean all_done = TRUE;

		if (ev.signal != 0) {
			cli_remote_interrupt(app, hosts, ev.signal);
			ev.signal = 0;
		}
		if (ev.deadline_hit) {
			for (guint i = 0; i < hosts->len; i++) {
				CliRemoteHost *rh = g_ptr_array_index(hosts, i);

				if (!rh->started) {
					/* --deadline is for the whole run: too late to start */
					cli_remote_not_started(
					    rh, g_error_new_literal(
					            GB_ERROR, GB_ERROR_TIMEOUT,
					            "not started within --deadline + 5 s "
					            "(see --host-jobs)"));
					continue;
				}
				/* killed, its pipes close and its callback comes at once */
				if (rh->done || rh->timed_out || rh->proc == NULL)
					continue;
				rh->timed_out = TRUE;
				g_subprocess_force_exit(rh->proc);
			}
			ev.deadline_hit = FALSE;
		}
		for (guint i = 0; i < hosts->len; i++) {
			CliRemoteHost *rh = g_ptr_array_index(hosts, i);

			if (rh->started && !rh->done)
				running++;
		}
		/* bounded: at most max_running ssh at once, the next as one ends */
		while (running < max_running && next < hosts->len) {
			CliRemoteHost *rh = g_ptr_array_index(hosts, next++);

			if (!rh->started && cli_remote_start(rh, launcher, args))
				running++;
		}
		/* not all done means an ssh is running: its end wakes the loop */
		for (guint i = 0; i < hosts->len; i++)
			all_done &= ((CliRemoteHost *)g_ptr_array_index(hosts, i))->done;
		if (all_done)
			break;
		g_main_context_iteration(app->context, TRUE);
	}
	for (guint i = 0; i < sources->len; i++) {
		g_source_destroy(g_ptr_array_index(sources, i));
		g_source_unref(g_ptr_array_index(sources, i));
	}
	g_main_context_pop_thread_default(app->context);

	for (guint i = 0; i < hosts->len; i++) {
		int rc = cli_remote_collect(merge, g_ptr_array_index(hosts, i));

		if (rc == CLI_EXIT_FINDING)
			any_finding = TRUE;
		else if (rc == CLI_EXIT_BUSY)
			any_busy = TRUE;
		else if (rc != CLI_EXIT_OK)
			any_failed = TRUE;
	}
	if (app->opts.failed_only)
		cli_merge_keep_failed(merge);
	doc = cli_merge_render(merge, app->opts.format, cli_app_use_color(app), &error);
	if (doc == NULL || !cli_app_write_doc(app, doc, &error)) {
		cli_escape_printerr(NULL, error->message);
		return CLI_EXIT_USAGE;
	}
	if (app->signal_received != 0)
		return 128 + app->signal_received;
	if (any_failed)
		return CLI_EXIT_GUEST;
	if (any_busy)
		return CLI_EXIT_BUSY;
	return any_finding ? CLI_EXIT_FINDING : CLI_EXIT_OK;
}
