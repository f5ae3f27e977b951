/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"

#include <errno.h>
#include <unistd.h>

#include "agent-config.h"
#include "options.h"

void agent_options_init(AgentOptions *opts)
{
	*opts = (AgentOptions){ .linger = -1, .config_fd = -1, .endpoint_fd = -1, .state_fd = -1 };
}

void agent_options_clear(AgentOptions *opts)
{
	g_free(opts->method);
	g_free(opts->path);
	g_free(opts->config);
	g_free(opts->sysroot);
	g_free(opts->scratch_dir);
	g_strfreev(opts->allow_rpcs);
	g_strfreev(opts->block_rpcs);
	g_free(opts->oneshot);
	g_strfreev(opts->steal_prime);
	agent_options_init(opts);
}

int agent_usage_error(const char *message)
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

char *agent_find_program(const char *name)
{
	g_autofree char *self = g_file_read_link("/proc/self/exe", NULL);
	g_autofree char *dir = self != NULL ? g_path_get_dirname(self) : NULL;
	g_autofree char *beside = dir != NULL ? g_build_filename(dir, name, NULL) : NULL;

	if (beside != NULL && g_file_test(beside, G_FILE_TEST_IS_EXECUTABLE))
		return g_steal_pointer(&beside);
	return g_build_filename(GB_AGENT_LIBEXECDIR, name, NULL);
}

static gboolean agent_options_set_dir(char **dst, const char *value, const char *option,
                                      GError **error)
{
	if (value == NULL)
		return TRUE;
	if (*value == '\0') {
		g_set_error(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT, "%s must not be empty",
		            option);
		return FALSE;
	}
	g_free(*dst);
	*dst = g_strdup(value);
	return TRUE;
}

gboolean agent_options_apply(AgentOptions *opts, AgentConfig *config, GError **error)
{
	if (opts->method != NULL) {
		g_free(config->method);
		config->method = g_strdup(opts->method);
	}
	if (!agent_options_set_dir(&config->path, opts->path, "--path", error) ||
	    !agent_options_set_dir(&config->sysroot, opts->sysroot, "--sysroot", error) ||
	    !agent_options_set_dir(&config->scratch_dir, opts->scratch_dir, "--scratch-dir", error))
		return FALSE;
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
	if (opts->linger >= 0) {
		if (opts->linger < AGENT_MIN_LINGER_SECONDS ||
		    opts->linger > AGENT_MAX_LINGER_SECONDS) {
			g_set_error(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT,
			            "--linger must be %d to %d seconds", AGENT_MIN_LINGER_SECONDS,
			            AGENT_MAX_LINGER_SECONDS);
			return FALSE;
		}
		config->linger_seconds = opts->linger;
	}
	if (opts->verbose)
		config->verbose = TRUE;
	return TRUE;
}

GOptionContext *agent_options_context(AgentOptions *opts, gboolean session)
{
	const GOptionEntry entries[] = {
		{ "method", 'm', 0, G_OPTION_ARG_STRING, &opts->method,
		  "Transport: virtio-serial (default), unix-listen, vsock-listen or stdio",
		  "METHOD" },
		{ "path", 'p', 0, G_OPTION_ARG_STRING, &opts->path,
		  "virtio-serial: port device (default: the port named " GB_AGENT_PORT_NAME
		  "); unix-listen: socket path; vsock-listen: CID:PORT (CID -1 or any = all)",
		  "PATH" },
		{ "config", 'c', 0, G_OPTION_ARG_FILENAME, &opts->config,
		  "Config file (default " GB_AGENT_DEFAULT_CONFIG ", used if it exists)", "FILE" },
		{ "sysroot", 0, 0, G_OPTION_ARG_FILENAME, &opts->sysroot,
		  "Read facts from /proc and /sys under DIR instead of / (default /)", "DIR" },
		{ "scratch-dir", 0, 0, G_OPTION_ARG_FILENAME, &opts->scratch_dir,
		  "The only directory a disk benchmark may write to "
		  "(default " GB_AGENT_DEFAULT_SCRATCH ")",
		  "DIR" },
		{ "allow-rpcs", 'a', 0, G_OPTION_ARG_STRING_ARRAY, &opts->allow_rpcs,
		  "Comma list of commands to enable (globs allowed); all others are disabled",
		  "LIST" },
		{ "block-rpcs", 'b', 0, G_OPTION_ARG_STRING_ARRAY, &opts->block_rpcs,
		  "Comma list of commands to disable (globs allowed, e.g. gb-bench-*); wins over "
		  "--allow-rpcs",
		  "LIST" },
		{ "linger", 0, 0, G_OPTION_ARG_INT64, &opts->linger,
		  "Seconds the session process that answers a host stays after its last request "
		  "(default 10)",
		  "SECONDS" },
		{ "oneshot", 0, 0, G_OPTION_ARG_STRING, &opts->oneshot,
		  "Run the one request JSON, print its reply to stdout and exit", "JSON" },
		{ "verbose", 'v', 0, G_OPTION_ARG_NONE, &opts->verbose,
		  "Log debug messages (each request, client and host events) to stderr", NULL },
		{ "version", 0, 0, G_OPTION_ARG_NONE, &opts->version, "Print the version and exit",
		  NULL },
		{ NULL },
	};
	const GOptionEntry hidden[] = {
		{ "config-fd", 0, G_OPTION_FLAG_HIDDEN, G_OPTION_ARG_INT, &opts->config_fd, NULL,
		  NULL },
		{ "endpoint-fd", 0, G_OPTION_FLAG_HIDDEN, G_OPTION_ARG_INT, &opts->endpoint_fd,
		  NULL, NULL },
		{ "state-fd", 0, G_OPTION_FLAG_HIDDEN, G_OPTION_ARG_INT, &opts->state_fd, NULL,
		  NULL },
		{ "steal-prime", 0, G_OPTION_FLAG_HIDDEN, G_OPTION_ARG_STRING_ARRAY,
		  &opts->steal_prime, NULL, NULL },
		{ NULL },
	};
	GOptionContext *context = g_option_context_new("- guestbench guest agent");

	g_option_context_add_main_entries(context, entries, NULL);
	if (session)
		g_option_context_add_main_entries(context, hidden, NULL);
	g_option_context_set_description(
	    context,
	    "Answers guestbench (and any QEMU guest agent client) on a virtio-serial port:\n"
	    "facts about the guest and benchmarks run inside it.\n"
	    "\n"
	    "This process only holds the port (or socket) and waits. When a host sends a\n"
	    "request (or connects), it starts a session process (guestbench-agent-session)\n"
	    "that answers, and that ends once no host has asked anything for --linger\n"
	    "seconds and no benchmark runs; finished benchmark jobs are kept across them.\n"
	    "\n"
	    "The config file is a key file with one group [general] and the keys method,\n"
	    "path, sysroot, scratch-dir, allow-rpcs, block-rpcs (lists separated by ',' or\n"
	    "';'), verbose (true/false), max-message-size (bytes, default 1048576),\n"
	    "max-bench-seconds (default 600), max-bench-file-size (bytes, default 8 GiB)\n"
	    "and linger-seconds (default 10).\n"
	    "Options on the command line override the file.\n"
	    "\n"
	    "Exit status: 0 on success (also after SIGTERM/SIGINT), 1 on a runtime error,\n"
	    "2 on a usage or configuration error.");
	return context;
}

int agent_options_parse(AgentOptions *opts, GOptionContext *context, int *argc, char ***argv)
{
	g_autoptr(GError) error = NULL;
	int rc = -1;

	if (!g_option_context_parse(context, argc, argv, &error)) {
		rc = agent_usage_error(error->message);
	} else if (*argc > 1) {
		g_autofree char *msg = g_strdup_printf("unexpected argument '%s'", (*argv)[1]);
		rc = agent_usage_error(msg);
	} else if (opts->version) {
		g_print("guestbench-agent %s\n", GB_VERSION);
		rc = AGENT_EXIT_OK;
	}
	if (rc >= 0)
		agent_options_clear(opts);
	return rc;
}

gboolean agent_read_fd(int fd, gsize max, GByteArray *out, GError **error)
{
	guint8 chunk[16384];

	if (lseek(fd, 0, SEEK_SET) != 0) {
		g_set_error(error, GB_ERROR, GB_ERROR_IO, "fd %d: %s", fd, g_strerror(errno));
		return FALSE;
	}
	for (;;) {
		ssize_t n = read(fd, chunk, sizeof(chunk));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			g_set_error(error, GB_ERROR, GB_ERROR_IO, "fd %d: %s", fd,
			            g_strerror(errno));
			return FALSE;
		}
		if (n == 0)
			return TRUE;
		if (out->len + (gsize)n > max) {
			g_set_error(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT,
			            "fd %d: more than %" G_GSIZE_FORMAT " bytes", fd, max);
			return FALSE;
		}
		g_byte_array_append(out, chunk, (guint)n);
	}
}
