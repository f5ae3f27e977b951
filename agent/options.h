/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <glib.h>

#include "agent.h"

G_BEGIN_DECLS

#define AGENT_EXIT_OK 0
#define AGENT_EXIT_ERROR 1
#define AGENT_EXIT_USAGE 2

/* The command line of guestbench-agent, which its session process also takes. */
typedef struct {
	char *method;
	char *path;
	char *config;
	char *sysroot;
	char *scratch_dir;
	char **allow_rpcs;
	char **block_rpcs;
	char *oneshot;
	gint64 linger;
	gboolean verbose;
	gboolean version;
	/* the session process only (hidden): what the resident process hands it */
	int config_fd;
	int endpoint_fd;
	int state_fd;
	char **steal_prime; /* "US LINE" /proc/stat samples, oldest first */
} AgentOptions;

/* An options struct with nothing given (fds -1). */
void agent_options_init(AgentOptions *opts);
void agent_options_clear(AgentOptions *opts);
/*
 * The option parser with --help's text; session adds the hidden options of
 * the session process. Free with g_option_context_free().
 */
GOptionContext *agent_options_context(AgentOptions *opts, gboolean session);
/*
 * Parses argv: -1 to go on, else the exit code to return at once (a usage
 * error, a stray argument, --version), with opts cleared.
 */
int agent_options_parse(AgentOptions *opts, GOptionContext *context, int *argc, char ***argv);
/* Command line values override the config file. */
gboolean agent_options_apply(AgentOptions *opts, AgentConfig *config, GError **error);
/* Prints "guestbench-agent: MESSAGE" and the --help hint; returns AGENT_EXIT_USAGE. */
int agent_usage_error(const char *message);
/*
 * A program of the agent's own (guestbench-agent-session, -bench): beside
 * this binary when it is there (the build tree), else in GB_AGENT_LIBEXECDIR
 * where the packages install it.
 */
char *agent_find_program(const char *name);

/* All of fd from its start (a memfd one process of the agent hands the other), at most max. */
gboolean agent_read_fd(int fd, gsize max, GByteArray *out, GError **error);

G_END_DECLS
