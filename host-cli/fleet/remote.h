/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include "fleet/app.h"

G_BEGIN_DECLS

/*
 * --hosts HOST[,HOST...]: the same command line runs on each hypervisor over
 * OpenSSH ("ssh -o BatchMode=yes HOST guestbench --format json ..."), all
 * hosts at once, and the documents are merged as 'guestbench merge' does:
 * every guest gains its host. $GUESTBENCH_SSH replaces "ssh" (split like a
 * shell would, without expansions: "ssh -F /etc/guestbench/ssh_config").
 * Targets and inventories name files on the remote hosts, so none is resolved
 * here.
 */
#define CLI_REMOTE_SSH_ENV "GUESTBENCH_SSH"
/* ssh's SSH_ASKPASS (with SSH_ASKPASS_REQUIRE=force): answers no prompt. */
#define CLI_REMOTE_ASKPASS "/bin/false"
/* ssh's exit status when ssh itself failed (connect, authentication, host key). */
#define CLI_REMOTE_SSH_FAILED 255
#define CLI_REMOTE_MAX_HOSTS 1000
/* --host-jobs: ssh sessions at once (pdsh's fanout is 32, Ansible's forks 5). */
#define CLI_REMOTE_DEFAULT_JOBS 16
/* Largest document read back from one host: more is an error, and its ssh is ended. */
#define CLI_REMOTE_MAX_OUTPUT (256 * 1024 * 1024)
/* stderr kept from one host: its last bytes, where the message is. */
#define CLI_REMOTE_MAX_ERR (64 * 1024)

/* The --hosts option callback (data is the CliApp); checks each host name. */
gboolean cli_remote_option_cb(const char *option_name, const char *value, gpointer data,
                              GError **error);
/* --host-jobs N (1..CLI_REMOTE_MAX_HOSTS). */
gboolean cli_remote_jobs_option_cb(const char *option_name, const char *value, gpointer data,
                                   GError **error);
/* Whether HOST is usable on an ssh command line (not an option, no blanks or controls). */
gboolean cli_remote_check_host(const char *host, GError **error);
/*
 * The arguments the remote guestbench gets, from the local argv (argv[0] is
 * the program): --hosts, -o/--output, --format and --color are dropped and
 * "--format json" leads. Fails for a short-option cluster that holds -o.
 */
GPtrArray *cli_remote_build_args(const char *const *argv, GError **error);
/* Called by cli_app_parse() when --hosts is given: only guest commands fan out. */
gboolean cli_remote_prepare(CliApp *app, GError **error);
/* Runs the command on every host and writes the merged output; the exit status. */
int cli_remote_run(CliApp *app);

G_END_DECLS
