/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"

#include <gio/gio.h>
#include <string.h>
#include <unistd.h>

#include "guestbench-protocol.h"

#include "transport/bench-net.h"

/* A refused or dropped connection is tried again after this long (the agent may not listen yet). */
#define NET_RETRY_MS 100
#define NET_BACKLOG 64

/* What one run moved, per direction (index dir - 1). */
typedef struct {
	guint64 host_bytes[2];
	guint64 counted[2];
	guint64 ns[2];
} NetRound;

struct _CliNetEnd {
	CliNetConfig cfg;
	int listen_fd;
	guint bound_port;
	GThread *thread;
	gint cancel; /* atomic */
	GMutex mutex;
	gboolean finished; /* under mutex */
	GError *error;     /* under mutex, set before finished */
	gboolean joined;
	GArray *rounds;    /* NetRound; the worker's until joined */
	GbNetbenchEnd net; /* the worker's */
};

/* ---- parsing ---------------------------------------------------------------------- */

gboolean cli_net_parse_host_port(const char *text, gboolean port_only, char **address, guint *port,
                                 GError **error)
{
	g_autofree char *host = NULL;
	g_autoptr(GInetAddress) inet = NULL;
	const char *port_text = NULL;
	guint64 value = 0;

	if (text == NULL || text[0] == '\0') {
		g_set_error_literal(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT, "an empty address");
		return FALSE;
	}
	if (text[0] == '[') {
		const char *close = strchr(text, ']');
		if (close == NULL || close[1] != ':') {
			g_set_error(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT,
			            "'%s' is not [IPV6]:PORT", text);
			return FALSE;
		}
		host = g_strndup(text + 1, close - text - 1);
		port_text = close + 2;
	} else {
		const char *colon = strrchr(text, ':');
		if (colon == NULL && port_only) {
			port_text = text;
		} else if (colon == NULL || strchr(text, ':') != colon) {
			g_set_error(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT,
			            "'%s' is not ADDR:PORT (write an IPv6 address as [ADDR]:PORT)",
			            text);
			return FALSE;
		} else {
			host = g_strndup(text, colon - text);
			port_text = colon + 1;
		}
	}
	if (host != NULL) {
		inet = g_inet_address_new_from_string(host);
		if (inet == NULL) {
			g_set_error(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT,
			            "'%s' is not a numeric IPv4 or IPv6 address", host);
			return FALSE;
		}
	}
	if (!g_ascii_string_to_unsigned(port_text, 10, 1, 65535, &value, NULL)) {
		g_set_error(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT,
		            "'%s' is not a port number (1..65535)", port_text);
		return FALSE;
	}
	*address = g_steal_pointer(&host);
	*port = (guint)value;
	return TRUE;
}

/* ---- the end ------------------------------------------------------------------------- */

static gboolean net_hook_cancel(gpointer data, GError **error)
{
	CliNetEnd *end = data;

	if (g_atomic_int_get(&end->cancel) == 0)
		return TRUE;
	g_set_error_literal(error, G_IO_ERROR, G_IO_ERROR_CANCELLED, "stopped");
	return FALSE;
}

CliNetEnd *cli_net_end_new(const CliNetConfig *config)
{
	CliNetEnd *end = g_new0(CliNetEnd, 1);
	const GbNetbenchParams params = {
		.h2g = config->h2g,
		.g2h = config->g2h,
		.streams = config->streams,
		.seconds = config->seconds,
		.omit = config->omit,
	};
	const GbNetbenchHooks hooks = { .check_cancel = net_hook_cancel, .data = end };

	end->cfg = *config;
	end->cfg.address = g_strdup(config->address);
	end->cfg.runs = MAX(config->runs, 1);
	end->listen_fd = -1;
	end->bound_port = config->port;
	g_mutex_init(&end->mutex);
	end->rounds = g_array_new(FALSE, TRUE, sizeof(NetRound));
	gb_netbench_end_init(&end->net, &params, TRUE, &hooks);
	return end;
}

gboolean cli_net_end_listen(CliNetEnd *end, GError **error)
{
	if (end->cfg.role != CLI_NET_HOST_LISTENS || end->listen_fd >= 0)
		return TRUE;
	end->listen_fd = gb_netbench_listen(end->cfg.address != NULL ? end->cfg.address : "",
	                                    end->cfg.port, NET_BACKLOG, &end->bound_port, error);
	return end->listen_fd >= 0;
}

guint cli_net_end_get_port(CliNetEnd *end)
{
	return end->bound_port;
}

static void net_round_record(CliNetEnd *end)
{
	NetRound round = { 0 };

	for (guint i = 0; i < end->net.n_streams; i++) {
		const GbNetbenchStream *s = &end->net.streams[i];
		guint d = s->dir - 1;

		round.host_bytes[d] += s->bytes;
		round.counted[d] += s->result.bytes;
		round.ns[d] = MAX(round.ns[d], s->result.ns);
	}
	g_array_append_val(end->rounds, round);
}

static gboolean net_run(CliNetEnd *end, GError **error)
{
	for (guint r = 0; r < end->cfg.runs; r++) {
		gboolean ok;

		if (end->cfg.role == CLI_NET_HOST_CONNECTS)
			ok = gb_netbench_end_connect(&end->net, end->cfg.address, end->cfg.port,
			                             end->cfg.setup_timeout, NULL, NET_RETRY_MS,
			                             error);
		else
			ok = cli_net_end_listen(end, error) &&
			     gb_netbench_end_accept(&end->net, end->listen_fd, end->cfg.address,
			                            end->bound_port, end->cfg.setup_timeout, NULL,
			                            error);
		if (ok)
			ok = gb_netbench_end_transfer(&end->net, error);
		gb_netbench_end_close(&end->net);
		if (!ok) {
			if (end->cfg.runs > 1)
				g_prefix_error(error, "run %u/%u: ", r + 1, end->cfg.runs);
			return FALSE;
		}
		net_round_record(end);
	}
	return TRUE;
}

static gpointer net_thread(gpointer data)
{
	CliNetEnd *end = data;
	GError *error = NULL;

	net_run(end, &error);
	if (end->listen_fd >= 0) {
		close(end->listen_fd);
		end->listen_fd = -1;
	}
	g_mutex_lock(&end->mutex);
	end->error = error;
	end->finished = TRUE;
	g_mutex_unlock(&end->mutex);
	return NULL;
}

gboolean cli_net_end_start(CliNetEnd *end, GError **error)
{
	if (end->net.n_streams == 0 || end->cfg.streams > GB_NETBENCH_MAX_STREAMS) {
		g_set_error_literal(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT,
		                    "no streams to run (1..255 per direction)");
		return FALSE;
	}
	if (end->cfg.role == CLI_NET_HOST_LISTENS && !cli_net_end_listen(end, error))
		return FALSE;
	end->thread = g_thread_try_new("gb-net-host", net_thread, end, error);
	return end->thread != NULL;
}

static void net_end_join(CliNetEnd *end)
{
	if (end->thread != NULL && !end->joined) {
		g_thread_join(end->thread);
		end->thread = NULL;
		end->joined = TRUE;
	}
}

gboolean cli_net_end_check(CliNetEnd *end, GError **error)
{
	gboolean finished;

	g_mutex_lock(&end->mutex);
	finished = end->finished;
	g_mutex_unlock(&end->mutex);
	if (!finished)
		return FALSE;
	net_end_join(end);
	if (end->error != NULL && error != NULL)
		*error = g_error_copy(end->error);
	return TRUE;
}

void cli_net_end_stop(CliNetEnd *end)
{
	g_atomic_int_set(&end->cancel, 1);
	net_end_join(end);
}

static void net_json_direction(JsonBuilder *b, const NetRound *round, guint dir)
{
	guint d = dir - 1;
	double secs = (double)MAX(round->ns[d], 1) / 1e9;

	json_builder_set_member_name(b, gb_netbench_direction_to_string(dir));
	json_builder_begin_object(b);
	json_builder_set_member_name(b, "receiver");
	json_builder_add_string_value(b, dir == GB_NETBENCH_DIR_H2G ? "guest" : "host");
	json_builder_set_member_name(b,
	                             dir == GB_NETBENCH_DIR_H2G ? "bytes_sent" : "bytes_received");
	json_builder_add_int_value(b, (gint64)round->host_bytes[d]);
	json_builder_set_member_name(b, "bytes");
	json_builder_add_int_value(b, (gint64)round->counted[d]);
	json_builder_set_member_name(b, "seconds");
	json_builder_add_double_value(b, secs);
	json_builder_set_member_name(b, "throughput");
	json_builder_add_double_value(b, (double)round->counted[d] / secs);
	json_builder_end_object(b);
}

JsonNode *cli_net_end_to_json(CliNetEnd *end)
{
	g_autoptr(JsonBuilder) b = json_builder_new();

	json_builder_begin_object(b);
	json_builder_set_member_name(b, "role");
	json_builder_add_string_value(b, end->cfg.role == CLI_NET_HOST_CONNECTS ? "connect"
	                                                                        : "listen");
	json_builder_set_member_name(b, "address");
	json_builder_add_string_value(b, end->cfg.address);
	json_builder_set_member_name(b, "port");
	json_builder_add_int_value(b, end->bound_port);
	json_builder_set_member_name(b, "runs");
	json_builder_begin_array(b);
	/* only a joined worker's rounds are stable */
	for (guint i = 0; end->joined && i < end->rounds->len; i++) {
		const NetRound *round = &g_array_index(end->rounds, NetRound, i);

		json_builder_begin_object(b);
		if (end->cfg.h2g)
			net_json_direction(b, round, GB_NETBENCH_DIR_H2G);
		if (end->cfg.g2h)
			net_json_direction(b, round, GB_NETBENCH_DIR_G2H);
		json_builder_end_object(b);
	}
	json_builder_end_array(b);
	json_builder_end_object(b);
	return json_builder_get_root(b);
}

void cli_net_end_free(CliNetEnd *end)
{
	if (end == NULL)
		return;
	cli_net_end_stop(end);
	gb_netbench_end_clear(&end->net);
	if (end->listen_fd >= 0)
		close(end->listen_fd);
	if (end->error != NULL)
		g_error_free(end->error);
	g_array_unref(end->rounds);
	g_free(end->cfg.address);
	g_mutex_clear(&end->mutex);
	g_free(end);
}
