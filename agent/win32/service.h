/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <glib.h>

#include "agent.h"

G_BEGIN_DECLS

#define AGENT_WIN_SERVICE_NAME L"guestbench-agent"

#define AGENT_EXIT_OK 0
#define AGENT_EXIT_ERROR 1
#define AGENT_EXIT_USAGE 2

/* Serves the port until agent_win_quit() (or Ctrl-C on a console); an exit status. */
int agent_win_serve(AgentConfig *config);
/* Ends agent_win_serve() from any thread. */
void agent_win_quit(void);

/*
 * --service run: hands the process to the service control manager, which
 * calls agent_win_serve() and stops it; logs go to log_path. Takes config.
 */
int agent_win_service_dispatch(AgentConfig *config, const char *log_path);
/* --service install|uninstall: registers (auto start) or removes the service. */
int agent_win_service_manage(const char *action, const char *config_path);

G_END_DECLS
