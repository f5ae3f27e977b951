/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The Windows agent's main loop, as a console program or as the service
 * "guestbench-agent" (what the MSI registers, or --service install).
 */
#include "config.h"

#include <stdio.h>
#include <windows.h>

#include <glib/gstdio.h>

#include "agent-config.h"
#include "bench.h"
#include "dispatch.h"
#include "privilege.h"
#include "service.h"
#include "transport.h"

typedef struct {
	AgentContext ctx;
	GMainLoop *loop;
} AgentWin;

/* The loop agent_win_quit() ends; set while agent_win_serve() runs. */
static GMainLoop *agent_win_loop;
static GMutex agent_win_lock;

static GString *agent_win_handle(const char *msg, gsize len, const GError *error,
                                 gpointer user_data)
{
	AgentWin *self = user_data;

	if (msg == NULL)
		return agent_dispatch_framing_error(error);
	return agent_dispatch_message(&self->ctx, msg, len);
}

static gboolean agent_win_quit_cb(gpointer user_data)
{
	g_debug("stop requested, quitting");
	g_main_loop_quit(user_data);
	g_main_loop_unref(user_data);
	return G_SOURCE_REMOVE;
}

void agent_win_quit(void)
{
	g_mutex_lock(&agent_win_lock);
	if (agent_win_loop != NULL)
		g_main_context_invoke(g_main_loop_get_context(agent_win_loop), agent_win_quit_cb,
		                      g_main_loop_ref(agent_win_loop));
	g_mutex_unlock(&agent_win_lock);
}

/* Ctrl-C, Ctrl-Break, the console closing, a shutdown. */
static BOOL WINAPI agent_win_console_cb(DWORD type)
{
	agent_win_quit();
	return TRUE;
}

int agent_win_serve(AgentConfig *config)
{
	guint removed = 0;
	g_autoptr(GError) error = NULL;
	g_autoptr(AgentWinTransport) transport = NULL;
	AgentWin self = { .ctx.config = config };

	/* as on Linux: nothing the agent does needs a privilege (privilege.h) */
	if (!agent_win_privilege_drop(&removed, &error)) {
		g_warning("%s", error->message);
		return AGENT_EXIT_ERROR;
	}
	g_message("privileges removed: %u; kept: SeChangeNotifyPrivilege", removed);
	self.loop = g_main_loop_new(NULL, FALSE);
	transport = agent_win_transport_new(config, agent_win_handle, &self, &error);
	if (transport == NULL) {
		g_warning("%s", error->message);
		g_main_loop_unref(self.loop);
		return AGENT_EXIT_USAGE;
	}
	g_mutex_lock(&agent_win_lock);
	agent_win_loop = self.loop;
	g_mutex_unlock(&agent_win_lock);
	SetConsoleCtrlHandler(agent_win_console_cb, TRUE);
	g_debug("serving %s", config->method);
	g_main_loop_run(self.loop);
	SetConsoleCtrlHandler(agent_win_console_cb, FALSE);
	/* a running job is cancelled, and killed if it does not end in its grace */
	agent_jobs_shutdown(&self.ctx);
	g_mutex_lock(&agent_win_lock);
	agent_win_loop = NULL;
	g_mutex_unlock(&agent_win_lock);
	g_clear_pointer(&transport, agent_win_transport_free);
	g_main_loop_unref(self.loop);
	return AGENT_EXIT_OK;
}

/* The service. */

static SERVICE_STATUS_HANDLE agent_svc_handle;
static SERVICE_STATUS agent_svc_status;
static AgentConfig *agent_svc_config;
static FILE *agent_svc_log;

static void agent_svc_set_state(DWORD state, DWORD exit_code)
{
	agent_svc_status.dwServiceType = SERVICE_WIN32_OWN_PROCESS;
	agent_svc_status.dwCurrentState = state;
	agent_svc_status.dwControlsAccepted =
	    state == SERVICE_RUNNING ? SERVICE_ACCEPT_STOP | SERVICE_ACCEPT_SHUTDOWN : 0;
	agent_svc_status.dwWin32ExitCode = exit_code;
	agent_svc_status.dwWaitHint = state == SERVICE_STOP_PENDING ? 5000 : 0;
	SetServiceStatus(agent_svc_handle, &agent_svc_status);
}

static DWORD WINAPI agent_svc_control(DWORD control, DWORD type, LPVOID data, LPVOID context)
{
	switch (control) {
	case SERVICE_CONTROL_STOP:
	case SERVICE_CONTROL_SHUTDOWN:
		agent_svc_set_state(SERVICE_STOP_PENDING, NO_ERROR);
		agent_win_quit();
		return NO_ERROR;
	case SERVICE_CONTROL_INTERROGATE:
		return NO_ERROR;
	default:
		return ERROR_CALL_NOT_IMPLEMENTED;
	}
}

static void WINAPI agent_svc_main(DWORD argc, LPWSTR *argv)
{
	int rc;

	agent_svc_handle =
	    RegisterServiceCtrlHandlerExW(AGENT_WIN_SERVICE_NAME, agent_svc_control, NULL);
	if (agent_svc_handle == NULL)
		return;
	agent_svc_set_state(SERVICE_RUNNING, NO_ERROR);
	g_message("service started (%s)", GB_VERSION);
	rc = agent_win_serve(agent_svc_config);
	g_message("service stopped");
	agent_svc_set_state(SERVICE_STOPPED,
	                    rc == AGENT_EXIT_OK ? NO_ERROR : ERROR_SERVICE_SPECIFIC_ERROR);
}

/* A service has no console: log lines go to a file, with the time. */
static GLogWriterOutput agent_svc_log_writer(GLogLevelFlags level, const GLogField *fields,
                                             gsize n_fields, gpointer user_data)
{
	g_autoptr(GDateTime) now = g_date_time_new_now_local();
	g_autofree char *stamp = g_date_time_format_iso8601(now);
	const char *message = NULL;

	if ((level & G_LOG_LEVEL_DEBUG) && !g_log_get_debug_enabled())
		return G_LOG_WRITER_HANDLED;
	for (gsize i = 0; i < n_fields; i++) {
		if (g_strcmp0(fields[i].key, "MESSAGE") == 0)
			message = fields[i].value;
	}
	if (agent_svc_log == NULL || message == NULL)
		return G_LOG_WRITER_UNHANDLED;
	fprintf(agent_svc_log, "%s %s\n", stamp, message);
	fflush(agent_svc_log);
	return G_LOG_WRITER_HANDLED;
}

int agent_win_service_dispatch(AgentConfig *config, const char *log_path)
{
	SERVICE_TABLE_ENTRYW table[] = {
		{ (LPWSTR)AGENT_WIN_SERVICE_NAME, agent_svc_main },
		{ NULL, NULL },
	};
	g_autofree char *dir = g_path_get_dirname(log_path);
	int rc = AGENT_EXIT_OK;

	g_mkdir_with_parents(dir, 0700);
	agent_svc_log = g_fopen(log_path, "a");
	g_log_set_writer_func(agent_svc_log_writer, NULL, NULL);
	agent_svc_config = config;
	if (!StartServiceCtrlDispatcherW(table)) {
		g_autofree char *msg = g_win32_error_message((gint)GetLastError());
		g_printerr(
		    "guestbench-agent: --service run is for the service control manager: %s\n",
		    msg);
		rc = AGENT_EXIT_ERROR;
	}
	agent_svc_config = NULL;
	agent_config_free(config);
	if (agent_svc_log != NULL)
		fclose(agent_svc_log);
	return rc;
}

static int agent_svc_fail(const char *what)
{
	g_autofree char *msg = g_win32_error_message((gint)GetLastError());

	g_printerr("guestbench-agent: %s: %s\n", what, msg);
	return AGENT_EXIT_ERROR;
}

static int agent_svc_install(SC_HANDLE scm, const char *config_path)
{
	wchar_t exe[MAX_PATH];
	g_autofree char *exe8 = NULL;
	g_autofree char *cmd = NULL;
	g_autofree gunichar2 *wcmd = NULL;
	static wchar_t description[] = L"Answers guestbench on the org.guestbench.agent.0 "
	                               L"port: facts about this guest.";
	SERVICE_DESCRIPTIONW desc = { .lpDescription = description };
	SC_HANDLE svc;

	if (GetModuleFileNameW(NULL, exe, G_N_ELEMENTS(exe)) == 0)
		return agent_svc_fail("cannot find this program's path");
	exe8 = g_utf16_to_utf8((const gunichar2 *)exe, -1, NULL, NULL, NULL);
	cmd = config_path != NULL
	          ? g_strdup_printf("\"%s\" --service run -c \"%s\"", exe8, config_path)
	          : g_strdup_printf("\"%s\" --service run", exe8);
	wcmd = g_utf8_to_utf16(cmd, -1, NULL, NULL, NULL);
	svc = CreateServiceW(scm, AGENT_WIN_SERVICE_NAME, L"guestbench agent", SERVICE_ALL_ACCESS,
	                     SERVICE_WIN32_OWN_PROCESS, SERVICE_AUTO_START, SERVICE_ERROR_NORMAL,
	                     (LPCWSTR)wcmd, NULL, NULL, NULL, NULL, NULL);
	if (svc == NULL)
		return agent_svc_fail("cannot create the service");
	ChangeServiceConfig2W(svc, SERVICE_CONFIG_DESCRIPTION, &desc);
	CloseServiceHandle(svc);
	g_print("service guestbench-agent installed: %s\n", cmd);
	return AGENT_EXIT_OK;
}

static int agent_svc_uninstall(SC_HANDLE scm)
{
	SERVICE_STATUS status;
	SC_HANDLE svc = OpenServiceW(scm, AGENT_WIN_SERVICE_NAME, SERVICE_STOP | DELETE);

	if (svc == NULL)
		return agent_svc_fail("cannot open the service");
	ControlService(svc, SERVICE_CONTROL_STOP, &status);
	if (!DeleteService(svc)) {
		CloseServiceHandle(svc);
		return agent_svc_fail("cannot delete the service");
	}
	CloseServiceHandle(svc);
	g_print("service guestbench-agent removed\n");
	return AGENT_EXIT_OK;
}

int agent_win_service_manage(const char *action, const char *config_path)
{
	SC_HANDLE scm = OpenSCManagerW(NULL, NULL, SC_MANAGER_ALL_ACCESS);
	int rc;

	if (scm == NULL)
		return agent_svc_fail("cannot open the service control manager");
	if (g_strcmp0(action, "install") == 0)
		rc = agent_svc_install(scm, config_path);
	else
		rc = agent_svc_uninstall(scm);
	CloseServiceHandle(scm);
	return rc;
}
