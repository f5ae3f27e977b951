/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * guestbench-agent.exe: the agent for Windows guests. One process serves the
 * port with the same dispatcher, commands and facts document as on Linux
 * (PROTOCOL.md, "Windows guests", says which members Windows fills), on a
 * console or as the service guestbench-agent (service.c).
 */
#include "config.h"

#include <windows.h>

#include <knownfolders.h>
#include <shlobj.h>

#include <fcntl.h>
#include <io.h>
#include <stdio.h>

#include "agent-config.h"
#include "bench.h"
#include "oneshot.h"
#include "privilege.h"
#include "service.h"

typedef struct {
	char *method;
	char *path;
	char *config;
	char *allow;
	char *block;
	char *service;
	char *oneshot;
	gboolean verbose;
	gboolean version;
} AgentWinOptions;

static void agent_win_options_clear(AgentWinOptions *o)
{
	g_free(o->method);
	g_free(o->path);
	g_free(o->config);
	g_free(o->allow);
	g_free(o->block);
	g_free(o->service);
	g_free(o->oneshot);
}

G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC(AgentWinOptions, agent_win_options_clear)

static int agent_win_usage_error(const char *msg)
{
	g_printerr("guestbench-agent: %s\n", msg);
	return AGENT_EXIT_USAGE;
}

/*
 * %ProgramData%\guestbench\NAME. From the known folder, not the environment:
 * a service's environment may name another folder (wine's does).
 */
static char *agent_win_data_path(const char *name)
{
	PWSTR wide = NULL;
	g_autofree char *base = NULL;

	if (SHGetKnownFolderPath(&FOLDERID_ProgramData, 0, NULL, &wide) == S_OK)
		base = g_utf16_to_utf8((const gunichar2 *)wide, -1, NULL, NULL, NULL);
	CoTaskMemFree(wide);
	return g_build_filename(base != NULL ? base : "C:\\ProgramData", "guestbench", name, NULL);
}

/*
 * guestbench-agent-bench.exe beside this program (as the MSI installs it and
 * the build tree has it): each benchmark job runs in it. NULL when it is not
 * there, which gb-bench-start reports.
 */
static char *agent_win_bench_worker(void)
{
	wchar_t self[MAX_PATH];
	DWORD len = GetModuleFileNameW(NULL, self, G_N_ELEMENTS(self));
	g_autofree char *exe = NULL;
	g_autofree char *dir = NULL;
	char *worker;

	if (len == 0 || len >= G_N_ELEMENTS(self))
		return NULL;
	exe = g_utf16_to_utf8((const gunichar2 *)self, len, NULL, NULL, NULL);
	if (exe == NULL)
		return NULL;
	dir = g_path_get_dirname(exe);
	worker = g_build_filename(dir, "guestbench-agent-bench.exe", NULL);
	if (!g_file_test(worker, G_FILE_TEST_IS_REGULAR)) {
		g_debug("no %s: benchmarks cannot run", worker);
		g_free(worker);
		return NULL;
	}
	return worker;
}

static gboolean agent_win_apply(AgentConfig *config, const AgentWinOptions *o, GError **error)
{
	if (o->method != NULL) {
		g_free(config->method);
		config->method = g_strdup(o->method);
	}
	if (o->path != NULL) {
		g_free(config->path);
		config->path = g_strdup(o->path);
	}
	if (o->allow != NULL) {
		g_strfreev(config->allow_rpcs);
		config->allow_rpcs = agent_config_split_list(o->allow);
	}
	if (o->block != NULL) {
		g_strfreev(config->block_rpcs);
		config->block_rpcs = agent_config_split_list(o->block);
	}
	if (o->verbose)
		config->verbose = TRUE;
	return agent_config_check(config, error);
}

/* Set by Ctrl-C or Ctrl-Break while a one-shot job runs: it is cancelled. */
static HANDLE agent_win_oneshot_cancel;

static BOOL WINAPI agent_win_oneshot_ctrl(DWORD type)
{
	SetEvent(agent_win_oneshot_cancel);
	return TRUE;
}

static gboolean agent_win_oneshot_wait(gpointer user_data)
{
	return WaitForSingleObject(agent_win_oneshot_cancel, AGENT_ONESHOT_JOB_POLL_MS) ==
	       WAIT_OBJECT_0;
}

/*
 * --oneshot: the request comes from the command line, the reply goes to
 * stdout, as on Linux; what qemu-ga's guest-exec runs (the host's qga:
 * targets). A gb-bench-start waits for its job (oneshot.h).
 */
static int agent_win_oneshot(AgentConfig *config, const char *request)
{
	AgentContext ctx = { .config = config };
	g_autoptr(GError) error = NULL;
	g_autoptr(GString) reply = NULL;

	if (!agent_win_privilege_drop(NULL, &error)) {
		g_printerr("guestbench-agent: cannot drop privileges: %s\n", error->message);
		return AGENT_EXIT_ERROR;
	}
	reply = agent_oneshot_reply(&ctx, request, &error);
	if (reply == NULL)
		return agent_win_usage_error(error->message);
	if (agent_oneshot_is_bench_start(request)) {
		/* auto-reset: each Ctrl-C is one cancel */
		agent_win_oneshot_cancel = CreateEventW(NULL, FALSE, FALSE, NULL);
		SetConsoleCtrlHandler(agent_win_oneshot_ctrl, TRUE);
		reply = agent_oneshot_wait_job(&ctx, g_steal_pointer(&reply),
		                               agent_win_oneshot_wait, NULL);
		SetConsoleCtrlHandler(agent_win_oneshot_ctrl, FALSE);
	}
	agent_jobs_shutdown(&ctx);
	/* the reply's bytes as they are: no "\r\n" for "\n" */
	_setmode(_fileno(stdout), _O_BINARY);
	if (fwrite(reply->str, 1, reply->len, stdout) != reply->len || fflush(stdout) != 0) {
		g_printerr("guestbench-agent: cannot write the reply to stdout\n");
		return AGENT_EXIT_ERROR;
	}
	return AGENT_EXIT_OK;
}

static const char agent_win_description[] =
    "Answers guestbench (and any QEMU guest agent client) on a virtio-serial port\n"
    "of a Windows guest with facts about the guest, and runs benchmark jobs (aes)\n"
    "in guestbench-agent-bench.exe beside it (guest-info lists the commands).\n"
    "\n"
    "--service install registers the service guestbench-agent (automatic start,\n"
    "as the MSI does), --service uninstall stops and removes it; the service\n"
    "runs --service run and logs to %ProgramData%\\guestbench\\agent.log.\n"
    "\n"
    "The config file is a key file with one group [general] and the keys method,\n"
    "path, allow-rpcs, block-rpcs (lists separated by ',' or ';'), verbose\n"
    "(true/false) and max-message-size (bytes, default 1048576). Options on the\n"
    "command line override the file.\n"
    "\n"
    "Exit status: 0 on success (also after Ctrl-C or a service stop), 1 on a\n"
    "runtime error, 2 on a usage or configuration error.";

int main(int argc, char **argv)
{
	g_auto(AgentWinOptions) o = { 0 };
	const GOptionEntry entries[] = {
		{ "method", 'm', 0, G_OPTION_ARG_STRING, &o.method,
		  "Transport: virtio-serial (default), isa-serial or pipe-listen", "METHOD" },
		{ "path", 'p', 0, G_OPTION_ARG_STRING, &o.path,
		  "virtio-serial: port (default \\\\.\\Global\\" GB_AGENT_PORT_NAME
		  "); isa-serial: COM port (COM5); pipe-listen: pipe (\\\\.\\pipe\\NAME)",
		  "PATH" },
		{ "config", 'c', 0, G_OPTION_ARG_FILENAME, &o.config,
		  "Config file (default %ProgramData%\\guestbench\\agent.conf, used if it exists)",
		  "FILE" },
		{ "allow-rpcs", 'a', 0, G_OPTION_ARG_STRING, &o.allow,
		  "Comma list of commands to enable (globs allowed); all others are disabled",
		  "LIST" },
		{ "block-rpcs", 'b', 0, G_OPTION_ARG_STRING, &o.block,
		  "Comma list of commands to disable (globs allowed); wins over --allow-rpcs",
		  "LIST" },
		{ "oneshot", 0, 0, G_OPTION_ARG_STRING, &o.oneshot,
		  "Run the one request JSON, print its reply to stdout and exit", "JSON" },
		{ "service", 0, 0, G_OPTION_ARG_STRING, &o.service,
		  "install, uninstall, or run (what the service control manager starts)",
		  "ACTION" },
		{ "verbose", 'v', 0, G_OPTION_ARG_NONE, &o.verbose,
		  "Log debug messages (each request, port events)", NULL },
		{ "version", 0, 0, G_OPTION_ARG_NONE, &o.version, "Print the version and exit",
		  NULL },
		{ NULL },
	};
	g_autoptr(GOptionContext) context = g_option_context_new("- guestbench guest agent");
	g_autoptr(GError) error = NULL;
	g_autoptr(AgentConfig) config = agent_config_new();
	g_autofree char *default_config = agent_win_data_path("agent.conf");
	g_auto(GStrv) args = g_win32_get_command_line();

	g_option_context_add_main_entries(context, entries, NULL);
	g_option_context_set_description(context, agent_win_description);
	if (!g_option_context_parse_strv(context, &args, &error))
		return agent_win_usage_error(error->message);
	if (args[1] != NULL) {
		g_autofree char *msg = g_strdup_printf("unexpected argument '%s'", args[1]);
		return agent_win_usage_error(msg);
	}
	if (o.version) {
		g_print("guestbench-agent %s\n", GB_VERSION);
		return AGENT_EXIT_OK;
	}
	if (o.service != NULL && g_strcmp0(o.service, "install") != 0 &&
	    g_strcmp0(o.service, "uninstall") != 0 && g_strcmp0(o.service, "run") != 0) {
		g_autofree char *msg = g_strdup_printf(
		    "--service: unknown action '%s' (expected install, uninstall or run)",
		    o.service);
		return agent_win_usage_error(msg);
	}
	if (!agent_config_load_file(config, o.config != NULL ? o.config : default_config,
	                            o.config != NULL, &error) ||
	    !agent_win_apply(config, &o, &error))
		return agent_win_usage_error(error->message);
	if (config->verbose)
		g_log_set_debug_enabled(TRUE);
	config->bench_worker = agent_win_bench_worker();
	if (g_strcmp0(o.service, "install") == 0 || g_strcmp0(o.service, "uninstall") == 0)
		return agent_win_service_manage(o.service, o.config);
	if (o.oneshot != NULL) {
		if (o.service != NULL)
			return agent_win_usage_error("--oneshot does not go with --service");
		return agent_win_oneshot(config, o.oneshot);
	}
	if (g_strcmp0(o.service, "run") == 0) {
		g_autofree char *log = agent_win_data_path("agent.log");
		return agent_win_service_dispatch(g_steal_pointer(&config), log);
	}
	return agent_win_serve(config);
}
