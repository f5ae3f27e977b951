/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <glib.h>
#include <json-glib/json-glib.h>

G_BEGIN_DECLS

/*
 * The host end of "bench net": the GBNET1 streams of
 * protocol/BENCH-disk-net.md (protocol/gb-netbench-stream.h, as the agent's
 * end), run on a worker thread of its own so the CLI's main loop keeps
 * polling the job and drawing progress. The agent repeats the whole exchange
 * (setup, transfer, reports) once per run; so does this end.
 */

typedef enum {
	CLI_NET_HOST_CONNECTS, /* the agent listens ("listen" mode), the host connects */
	CLI_NET_HOST_LISTENS,  /* the host listens, the agent connects ("connect" mode) */
} CliNetRole;

typedef struct {
	CliNetRole role;
	char *address; /* numeric IPv4/IPv6: where the host connects to, or listens on */
	guint port;
	gboolean h2g;
	gboolean g2h;
	guint streams;
	guint seconds;
	guint omit;
	guint runs;
	guint setup_timeout; /* seconds per run to get every stream started */
} CliNetConfig;

/*
 * "ADDR:PORT" or "[IPV6]:PORT" with a numeric address (no names: nothing is
 * looked up); with port_only, a bare "PORT" too (*address NULL). Port 1..65535.
 */
gboolean cli_net_parse_host_port(const char *text, gboolean port_only, char **address, guint *port,
                                 GError **error);

typedef struct _CliNetEnd CliNetEnd;

/* Copies config. */
CliNetEnd *cli_net_end_new(const CliNetConfig *config);
/*
 * CLI_NET_HOST_LISTENS: binds and listens now, so that a port in use is an
 * error before the agent is told to connect. Port 0 picks a free port (see
 * cli_net_end_get_port()). Does nothing for CLI_NET_HOST_CONNECTS.
 */
gboolean cli_net_end_listen(CliNetEnd *end, GError **error);
guint cli_net_end_get_port(CliNetEnd *end);
/* Starts the worker thread. */
gboolean cli_net_end_start(CliNetEnd *end, GError **error);
/*
 * Non-blocking: FALSE while the worker runs. Once it has finished, joins it
 * and returns TRUE, with error set when it failed.
 */
gboolean cli_net_end_check(CliNetEnd *end, GError **error);
/* Stops the worker (within 100 ms) and waits for it. */
void cli_net_end_stop(CliNetEnd *end);
/*
 * What the host measured, per run and direction: {"role", "address", "port",
 * "runs": [{"host-to-guest": {...}, "guest-to-host": {...}}]}; see
 * BENCH-disk-net.md "The host end".
 */
JsonNode *cli_net_end_to_json(CliNetEnd *end);
/* Stops the worker if it still runs. */
void cli_net_end_free(CliNetEnd *end);

G_DEFINE_AUTOPTR_CLEANUP_FUNC(CliNetEnd, cli_net_end_free)

G_END_DECLS
