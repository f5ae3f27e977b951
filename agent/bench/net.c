/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The net benchmark, agent side: TCP throughput between the host and this
 * guest over 1..64 parallel streams, with the guest's CPU use and TCP
 * retransmits during the transfer. The wire format both ends speak is
 * documented in protocol/BENCH-disk-net.md ("net: the stream protocol").
 */

#include "config.h"

#include <gio/gio.h>
#include <string.h>
#include <unistd.h>

#include "bench.h"
#include "guestbench-protocol.h"

#define NET_RATE_NS (100 * 1000 * 1000)
#define NET_MAX_STREAMS GB_BENCH_NET_MAX_STREAMS
#define NET_DEFAULT_PORT 5201
#define NET_DEFAULT_SECS GB_BENCH_NET_DEFAULT_SECONDS
#define NET_MAX_OMIT GB_BENCH_NET_MAX_OMIT
#define NET_MAX_ACCEPT 600
#define NET_DEFAULT_ACCEPT GB_BENCH_NET_DEFAULT_ACCEPT_TIMEOUT
#define NET_MAX_RUNS GB_BENCH_MAX_RUNS

/* ---- parameters -------------------------------------------------------- */

typedef struct {
	gboolean listen;
	const char *address;
	guint port;
	GbNetbenchParams run; /* directions, streams, seconds, omit: what the header says */
	guint accept_timeout;
} NetParams;

static gboolean net_parse_address(const char *address, gboolean listen, GError **error)
{
	g_autoptr(GInetAddress) addr = g_inet_address_new_from_string(address);

	/* numeric only: the agent never resolves names (no DNS from a benchmark) */
	if (addr == NULL) {
		g_set_error(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT,
		            "Parameter 'address' must be a numeric IPv4 or IPv6 address: %s",
		            address);
		return FALSE;
	}
	if (!listen && g_inet_address_get_is_any(addr)) {
		g_set_error(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT,
		            "Parameter 'address' %s is the wildcard address; mode 'connect' needs "
		            "the host's address",
		            address);
		return FALSE;
	}
	return TRUE;
}

static gboolean net_params_read(const AgentConfig *config, JsonObject *params, NetParams *p,
                                gint64 *runs, GError **error)
{
	const char *mode = "listen";
	const char *direction = "host-to-guest";
	gint64 port = NET_DEFAULT_PORT;
	gint64 streams = 1;
	gint64 seconds = NET_DEFAULT_SECS;
	gint64 omit = GB_BENCH_NET_DEFAULT_OMIT;
	gint64 accept_timeout = NET_DEFAULT_ACCEPT;

	if (!gb_json_get_string(params, "mode", GB_JSON_OPTIONAL, &mode, error))
		return FALSE;
	if (g_strcmp0(mode, "listen") == 0) {
		p->listen = TRUE;
	} else if (g_strcmp0(mode, "connect") == 0) {
		p->listen = FALSE;
	} else {
		g_set_error(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT,
		            "Parameter 'mode' must be \"listen\" or \"connect\", not \"%s\"", mode);
		return FALSE;
	}
	p->address = p->listen ? "0.0.0.0" : NULL;
	if (!gb_json_get_string(params, "address", p->listen ? GB_JSON_OPTIONAL : GB_JSON_REQUIRED,
	                        &p->address, error))
		return FALSE;
	if (!net_parse_address(p->address, p->listen, error))
		return FALSE;
	if (!gb_json_get_int(params, "port", GB_JSON_OPTIONAL, 1, 65535, &port, error))
		return FALSE;
	if (!gb_json_get_string(params, "direction", GB_JSON_OPTIONAL, &direction, error))
		return FALSE;
	if (g_strcmp0(direction, "host-to-guest") == 0) {
		p->run.h2g = TRUE;
	} else if (g_strcmp0(direction, "guest-to-host") == 0) {
		p->run.g2h = TRUE;
	} else if (g_strcmp0(direction, "both") == 0) {
		p->run.h2g = TRUE;
		p->run.g2h = TRUE;
	} else {
		g_set_error(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT,
		            "Parameter 'direction' must be \"host-to-guest\", \"guest-to-host\" "
		            "or \"both\", not \"%s\"",
		            direction);
		return FALSE;
	}
	if (!gb_json_get_int(params, "streams", GB_JSON_OPTIONAL, 1, NET_MAX_STREAMS, &streams,
	                     error))
		return FALSE;
	if (!gb_json_get_int(params, "seconds", GB_JSON_OPTIONAL, GB_BENCH_NET_MIN_SECONDS,
	                     G_MAXINT32, &seconds, error))
		return FALSE;
	if (seconds > config->max_bench_seconds) {
		g_set_error(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT,
		            "Parameter 'seconds' is out of range: %" G_GINT64_FORMAT
		            " is over the agent's max_bench_seconds (%" G_GINT64_FORMAT ")",
		            seconds, config->max_bench_seconds);
		return FALSE;
	}
	if (!gb_json_get_int(params, "omit", GB_JSON_OPTIONAL, 0, NET_MAX_OMIT, &omit, error))
		return FALSE;
	if (!gb_json_get_int(params, "accept_timeout", GB_JSON_OPTIONAL, 1, NET_MAX_ACCEPT,
	                     &accept_timeout, error))
		return FALSE;
	if (!gb_json_get_int(params, "runs", GB_JSON_OPTIONAL, 1, NET_MAX_RUNS, runs, error))
		return FALSE;
	p->port = (guint)port;
	p->run.streams = (guint)streams;
	p->run.seconds = (guint)seconds;
	p->run.omit = (guint)omit;
	p->accept_timeout = (guint)accept_timeout;
	return TRUE;
}

static JsonObject *net_validate(const AgentConfig *config, JsonObject *params, GError **error)
{
	const char *const allowed[] = { "mode",    "address", "port", "direction",      "streams",
		                        "seconds", "omit",    "runs", "accept_timeout", NULL };
	NetParams p = { 0 };
	gint64 runs = 1;
	JsonObject *out;

	if (params != NULL && !gb_json_check_members(params, allowed, error))
		return NULL;
	if (!net_params_read(config, params, &p, &runs, error))
		return NULL;
	out = json_object_new();
	json_object_set_string_member(out, "mode", p.listen ? "listen" : "connect");
	json_object_set_string_member(out, "address", p.address);
	json_object_set_int_member(out, "port", p.port);
	json_object_set_string_member(
	    out, "direction",
	    p.run.h2g && p.run.g2h ? "both"
	                           : gb_netbench_direction_to_string(
	                                 p.run.h2g ? GB_NETBENCH_DIR_H2G : GB_NETBENCH_DIR_G2H));
	json_object_set_int_member(out, "streams", p.run.streams);
	json_object_set_int_member(out, "seconds", p.run.seconds);
	json_object_set_int_member(out, "omit", p.run.omit);
	json_object_set_int_member(out, "accept_timeout", p.accept_timeout);
	return out;
}

/* ---- /proc sampling ---------------------------------------------------- */

/* The aggregate "cpu" line of /proc/stat: user nice system idle iowait irq softirq steal. */
static gboolean net_read_cpu(const char *sysroot, guint64 v[8], GError **error)
{
	g_autofree char *path = g_build_filename(sysroot, "proc", "stat", NULL);
	g_autofree char *contents = NULL;
	g_auto(GStrv) fields = NULL;
	char *eol;
	guint n = 0;

	if (!g_file_get_contents(path, &contents, NULL, error))
		return FALSE;
	eol = strchr(contents, '\n');
	if (eol != NULL)
		*eol = '\0';
	fields = g_strsplit_set(contents, " \t", -1);
	if (g_strcmp0(fields[0], "cpu") != 0) {
		g_set_error(error, GB_ERROR, GB_ERROR_PARSE,
		            "%s does not start with the aggregate \"cpu\" line", path);
		return FALSE;
	}
	for (guint i = 1; fields[i] != NULL && n < 8; i++) {
		if (fields[i][0] == '\0')
			continue;
		if (!g_ascii_string_to_unsigned(fields[i], 10, 0, G_MAXUINT64, &v[n], NULL)) {
			g_set_error(error, GB_ERROR, GB_ERROR_PARSE,
			            "%s: field %u of the \"cpu\" line is not a number: %s", path,
			            n + 1, fields[i]);
			return FALSE;
		}
		n++;
	}
	if (n < 8) {
		g_set_error(error, GB_ERROR, GB_ERROR_PARSE,
		            "%s: the \"cpu\" line has %u fields, expected at least 8", path, n);
		return FALSE;
	}
	return TRUE;
}

/* Tcp RetransSegs from /proc/net/snmp (a header line then a value line). */
static gboolean net_read_retrans(const char *sysroot, guint64 *out, GError **error)
{
	g_autofree char *path = g_build_filename(sysroot, "proc", "net", "snmp", NULL);
	g_autofree char *contents = NULL;
	g_auto(GStrv) lines = NULL;

	if (!g_file_get_contents(path, &contents, NULL, error))
		return FALSE;
	lines = g_strsplit(contents, "\n", -1);
	for (guint i = 0; lines[i] != NULL && lines[i + 1] != NULL; i++) {
		g_auto(GStrv) names = NULL;
		g_auto(GStrv) values = NULL;

		if (!g_str_has_prefix(lines[i], "Tcp: ") ||
		    !g_str_has_prefix(lines[i + 1], "Tcp: "))
			continue;
		names = g_strsplit(lines[i], " ", -1);
		values = g_strsplit(lines[i + 1], " ", -1);
		for (guint j = 1; names[j] != NULL; j++) {
			if (g_strcmp0(names[j], "RetransSegs") != 0)
				continue;
			if (j >= g_strv_length(values) ||
			    !g_ascii_string_to_unsigned(values[j], 10, 0, G_MAXUINT64, out, NULL)) {
				g_set_error(error, GB_ERROR, GB_ERROR_PARSE,
				            "%s: Tcp RetransSegs has no numeric value", path);
				return FALSE;
			}
			return TRUE;
		}
		break;
	}
	g_set_error(error, GB_ERROR, GB_ERROR_PARSE, "%s has no Tcp RetransSegs counter", path);
	return FALSE;
}

typedef struct {
	gboolean cpu_ok;
	guint64 cpu[8];
	char *cpu_error;
	gboolean retrans_ok;
	guint64 retrans;
	char *retrans_error;
} NetSample;

static void net_sample_clear(NetSample *s)
{
	g_clear_pointer(&s->cpu_error, g_free);
	g_clear_pointer(&s->retrans_error, g_free);
}

static void net_sample_take(const char *sysroot, NetSample *s)
{
	g_autoptr(GError) error_cpu = NULL;
	g_autoptr(GError) error_snmp = NULL;

	net_sample_clear(s);
	s->cpu_ok = net_read_cpu(sysroot, s->cpu, &error_cpu);
	if (!s->cpu_ok)
		s->cpu_error = g_strdup(error_cpu->message);
	s->retrans_ok = net_read_retrans(sysroot, &s->retrans, &error_snmp);
	if (!s->retrans_ok)
		s->retrans_error = g_strdup(error_snmp->message);
}

static void net_add_cpu_metrics(JsonArray *metrics, const NetSample *a, const NetSample *b)
{
	const char *const kinds[] = { "user", "system", "irq", "softirq", "total" };
	guint64 d[8];
	guint64 total = 0;
	const char *reason = a->cpu_error != NULL ? a->cpu_error : b->cpu_error;

	if (reason == NULL) {
		for (guint i = 0; i < 8; i++) {
			d[i] = b->cpu[i] >= a->cpu[i] ? b->cpu[i] - a->cpu[i] : 0;
			total += d[i];
		}
		if (total == 0)
			reason = "/proc/stat did not advance during the transfer";
	}
	for (guint k = 0; k < G_N_ELEMENTS(kinds); k++) {
		double busy;

		if (reason != NULL) {
			json_array_add_element(
			    metrics, agent_bench_sample_new_unavailable(
			                 "guest-cpu-busy", "%", reason, "kind", kinds[k], NULL));
			continue;
		}
		switch (k) {
		case 0:
			busy = (double)(d[0] + d[1]); /* user + nice */
			break;
		case 1:
			busy = (double)d[2];
			break;
		case 2:
			busy = (double)d[5];
			break;
		case 3:
			busy = (double)d[6];
			break;
		default:
			busy = (double)(total - d[3] - d[4]); /* all but idle and iowait */
			break;
		}
		json_array_add_element(
		    metrics, agent_bench_sample_new("guest-cpu-busy", 100.0 * busy / (double)total,
		                                    "%", "kind", kinds[k], NULL));
	}
}

/* ---- streams ----------------------------------------------------------- */

typedef struct {
	AgentBenchContext *ctx;
	NetParams p;
	GbNetbenchEnd end;
	const char *sysroot;
	GArray *intervals[2]; /* guint64 bytes per second since t0, per direction */
	guint max_intervals;
	double last_fraction;
	gint64 rate_ns;
	gboolean sampled;
	NetSample *before;
} NetRun;

static void net_progress(NetRun *r, double fraction, const char *phase)
{
	fraction = MAX(fraction, r->last_fraction);
	r->last_fraction = fraction;
	agent_bench_progress(r->ctx, fraction, phase);
}

static gboolean net_hook_cancel(gpointer data, GError **error)
{
	NetRun *r = data;

	return agent_bench_check_cancel(r->ctx, error);
}

/* Each wake-up of the transfer: the /proc sample at the end of the warm-up, progress, rate. */
static void net_hook_tick(gpointer data, gint64 now)
{
	NetRun *r = data;
	const GbNetbenchEnd *end = &r->end;

	if (!r->sampled && now >= end->omit_end) {
		net_sample_take(r->sysroot, r->before);
		r->sampled = TRUE;
	}
	/* past send_end the host may still be draining (up to the grace):
	 * stay below the 1.0 of "done" */
	net_progress(r,
	             0.99 * MIN(1.0, (double)(now - end->t0) / (double)(end->send_end - end->t0)),
	             now < end->omit_end ? "warm-up (omitted)" : "transfer");
	/* both directions' payload so far over the time so far, warm-up included */
	if (now - r->rate_ns >= NET_RATE_NS) {
		guint64 moved = 0;

		for (guint i = 0; i < end->n_streams; i++)
			moved += end->streams[i].bytes;
		agent_bench_rate(r->ctx, (double)moved * 1e9 / (double)MAX(now - end->t0, 1),
		                 "B/s");
		r->rate_ns = now;
	}
}

static void net_hook_moved(gpointer data, GbNetbenchDirection dir, gint64 now, guint64 bytes)
{
	NetRun *r = data;
	GArray *iv = r->intervals[dir - 1];
	guint sec = (guint)MIN((guint64)MAX(now - r->end.t0, 0) / (guint64)GB_NETBENCH_NS_PER_S,
	                       (guint64)r->max_intervals - 1);

	if (iv->len <= sec)
		g_array_set_size(iv, sec + 1);
	g_array_index(iv, guint64, sec) += bytes;
}

static NetRun *net_run_new(AgentBenchContext *ctx, const NetParams *p)
{
	NetRun *r = g_new0(NetRun, 1);
	const GbNetbenchHooks hooks = {
		.check_cancel = net_hook_cancel,
		.tick = net_hook_tick,
		.moved = net_hook_moved,
		.data = r,
	};

	r->ctx = ctx;
	r->sysroot = ctx->sysroot != NULL ? ctx->sysroot : "/";
	r->p = *p;
	for (guint d = 0; d < 2; d++)
		r->intervals[d] = g_array_new(FALSE, TRUE, sizeof(guint64));
	/* slots up to the end of the grace period; a peer overrunning it lands in the last */
	r->max_intervals = p->run.omit + p->run.seconds + GB_NETBENCH_GRACE_S + 1;
	gb_netbench_end_init(&r->end, &p->run, FALSE, &hooks);
	return r;
}

static void net_run_free(NetRun *r)
{
	gb_netbench_end_clear(&r->end);
	for (guint d = 0; d < 2; d++)
		g_clear_pointer(&r->intervals[d], g_array_unref);
	g_free(r);
}

G_DEFINE_AUTOPTR_CLEANUP_FUNC(NetRun, net_run_free)

/* ---- handshake ----------------------------------------------------------- */

static gboolean net_handshake_listen(NetRun *r, GError **error)
{
	g_autofree char *phase = NULL;
	gboolean ok;
	int listen_fd =
	    gb_netbench_listen(r->p.address, r->p.port, NET_MAX_STREAMS * 2, NULL, error);

	if (listen_fd < 0)
		return FALSE;
	phase = g_strdup_printf("waiting for the host on %s port %u", r->p.address, r->p.port);
	net_progress(r, 0.0, phase);
	ok = gb_netbench_end_accept(&r->end, listen_fd, r->p.address, r->p.port,
	                            r->p.accept_timeout, "accept_timeout", error);
	/* the port is open only while streams are being set up */
	close(listen_fd);
	return ok;
}

static gboolean net_handshake_connect(NetRun *r, GError **error)
{
	g_autofree char *phase =
	    g_strdup_printf("connecting to %s port %u", r->p.address, r->p.port);

	net_progress(r, 0.0, phase);
	/* no retries: the host listens before it starts the job */
	return gb_netbench_end_connect(&r->end, r->p.address, r->p.port, r->p.accept_timeout,
	                               "accept_timeout", 0, error);
}

/* ---- transfer ---------------------------------------------------------- */

static gboolean net_transfer(NetRun *r, NetSample *before, NetSample *after, GError **error)
{
	r->before = before;
	r->sampled = FALSE;
	r->rate_ns = gb_netbench_now_ns();
	if (!gb_netbench_end_transfer(&r->end, error))
		return FALSE;
	if (!r->sampled)
		net_sample_take(r->sysroot, before);
	net_sample_take(r->sysroot, after);
	return TRUE;
}

/* ---- result ------------------------------------------------------------ */

static JsonObject *net_direction_result(NetRun *r, GbNetbenchDirection dir, JsonArray *metrics)
{
	JsonObject *o = json_object_new();
	JsonArray *iv = json_array_new();
	guint64 bytes = 0;
	guint64 ns = 0;
	double secs;
	g_autofree char *streams = g_strdup_printf("%u", r->p.run.streams);

	for (guint i = 0; i < r->end.n_streams; i++) {
		const GbNetbenchStream *s = &r->end.streams[i];

		if (s->dir != dir)
			continue;
		bytes += s->result.bytes;
		ns = MAX(ns, s->result.ns);
	}
	secs = (double)MAX(ns, 1) / 1e9;
	json_object_set_int_member(o, "bytes", (gint64)bytes);
	json_object_set_double_member(o, "seconds", secs);
	json_object_set_string_member(o, "receiver", dir == GB_NETBENCH_DIR_H2G ? "guest" : "host");
	json_object_set_string_member(o, "intervals_side",
	                              dir == GB_NETBENCH_DIR_H2G ? "receiver" : "sender");
	for (guint k = 0; k < r->intervals[dir - 1]->len; k++) {
		JsonObject *e = json_object_new();

		json_object_set_int_member(e, "second", k);
		json_object_set_int_member(
		    e, "bytes", (gint64)g_array_index(r->intervals[dir - 1], guint64, k));
		json_object_set_boolean_member(e, "omitted", k < r->p.run.omit);
		json_array_add_object_element(iv, e);
	}
	json_object_set_array_member(o, "intervals", iv);
	json_array_add_element(
	    metrics,
	    agent_bench_sample_new("tcp-throughput", (double)bytes / secs, "B/s", "direction",
	                           gb_netbench_direction_to_string(dir), "streams", streams, NULL));
	return o;
}

static JsonNode *net_run(AgentBenchContext *ctx, JsonObject *params, GError **error)
{
	NetParams p = { 0 };
	gint64 runs = 1;
	g_autoptr(NetRun) r = NULL;
	g_autoptr(JsonObject) result = json_object_new();
	JsonObject *transfer = json_object_new();
	JsonArray *metrics = json_array_new();
	NetSample before = { 0 };
	NetSample after = { 0 };
	gboolean ok;

	json_object_set_array_member(result, "metrics", metrics);
	json_object_set_object_member(result, "transfer", transfer);
	if (!net_params_read(ctx->config, params, &p, &runs, error))
		return NULL;
	r = net_run_new(ctx, &p);
	ok = p.listen ? net_handshake_listen(r, error) : net_handshake_connect(r, error);
	if (ok)
		ok = net_transfer(r, &before, &after, error);
	if (ok) {
		if (p.run.h2g)
			json_object_set_object_member(
			    transfer, "host-to-guest",
			    net_direction_result(r, GB_NETBENCH_DIR_H2G, metrics));
		if (p.run.g2h)
			json_object_set_object_member(
			    transfer, "guest-to-host",
			    net_direction_result(r, GB_NETBENCH_DIR_G2H, metrics));
		net_add_cpu_metrics(metrics, &before, &after);
		if (before.retrans_ok && after.retrans_ok) {
			json_array_add_element(
			    metrics,
			    agent_bench_sample_new("tcp-retransmits",
			                           (double)(after.retrans - before.retrans),
			                           "segments", NULL));
		} else {
			json_array_add_element(metrics, agent_bench_sample_new_unavailable(
			                                    "tcp-retransmits", "segments",
			                                    before.retrans_error != NULL
			                                        ? before.retrans_error
			                                        : after.retrans_error,
			                                    NULL));
		}
		net_progress(r, 1.0, "done");
	}
	net_sample_clear(&before);
	net_sample_clear(&after);
	if (!ok)
		return NULL;
	return json_node_init_object(json_node_alloc(), result);
}

static const char *const net_fact_sections[] = { "net", "cpu", NULL };

const AgentBench agent_bench_net = {
	.name = "net",
	.validate = net_validate,
	.run = net_run,
	.fact_sections = net_fact_sections,
};
