/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The net benchmark, agent side: TCP throughput between the host and this
 * guest over 1..64 parallel streams, with the guest's CPU use and TCP
 * retransmits during the transfer. The wire format both ends speak is
 * documented in protocol/BENCH-disk-net.md ("net: the stream protocol").
 */

#include "config.h"

#include <errno.h>
#include <gio/gio.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "bench.h"
#include "guestbench-protocol.h"

#define NET_CHUNK (128 * 1024)
#define NET_POLL_MS 20 /* cancel and deadlines are checked at least this often */
#define NET_RATE_NS (100 * 1000 * 1000)
#define NET_MAX_STREAMS GB_BENCH_NET_MAX_STREAMS
#define NET_MAX_PENDING 16 /* accepted connections whose header has not arrived yet */
#define NET_BURST 16       /* reads/writes per stream per wake-up, for fairness */
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
	gboolean h2g;
	gboolean g2h;
	guint streams;
	guint seconds;
	guint omit;
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
		p->h2g = TRUE;
	} else if (g_strcmp0(direction, "guest-to-host") == 0) {
		p->g2h = TRUE;
	} else if (g_strcmp0(direction, "both") == 0) {
		p->h2g = TRUE;
		p->g2h = TRUE;
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
	p->streams = (guint)streams;
	p->seconds = (guint)seconds;
	p->omit = (guint)omit;
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
	json_object_set_string_member(out, "direction",
	                              p.h2g && p.g2h
	                                  ? "both"
	                                  : gb_netbench_direction_to_string(
	                                        p.h2g ? GB_NETBENCH_DIR_H2G : GB_NETBENCH_DIR_G2H));
	json_object_set_int_member(out, "streams", p.streams);
	json_object_set_int_member(out, "seconds", p.seconds);
	json_object_set_int_member(out, "omit", p.omit);
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

typedef enum {
	NET_ST_HANDSHAKE, /* header being read/written, or waiting for the go byte */
	NET_ST_READY,     /* handshake complete, waiting for the others */
	NET_ST_RUN,       /* moving data */
	NET_ST_REPORT,    /* receiver: sending the report; sender: reading it */
	NET_ST_DONE,
} NetState;

typedef struct {
	int fd;
	GbNetbenchDirection dir;
	guint index;
	NetState state;
	gboolean connecting; /* connect mode: non-blocking connect() in flight */
	guint8 hdr[GB_NETBENCH_HEADER_LEN];
	gsize hdr_len; /* bytes of hdr read (acceptor) or written (connector) */
	gsize chunk_off;
	guint64 bytes;         /* all payload bytes moved */
	guint64 bytes_counted; /* receiver: bytes after the omitted warm-up */
	gint64 end_ns;         /* receiver: EOF time */
	guint8 report[GB_NETBENCH_REPORT_LEN];
	gsize report_len;
	GbNetbenchReport result; /* the receiver's figures (local or from the peer's report) */
} NetStream;

typedef struct {
	AgentBenchContext *ctx;
	NetParams p;
	NetStream *streams;
	guint n_streams;
	int listen_fd;
	gint64 t0;
	const char *sysroot;
	GArray *intervals[2]; /* guint64 bytes per second since t0, per direction */
	guint max_intervals;
	char *last_reject;
	double last_fraction;
} NetRun;

/* Checks a header from the host against this job's parameters. */
static gboolean net_header_check(const NetParams *p, const guint8 *buf, GbNetbenchHeader *hdr,
                                 GError **error)
{
	GbNetbenchParams want = {
		.h2g = p->h2g,
		.g2h = p->g2h,
		.streams = p->streams,
		.seconds = p->seconds,
		.omit = p->omit,
	};

	return gb_netbench_header_parse(buf, GB_NETBENCH_HEADER_LEN, hdr, error) &&
	       gb_netbench_header_match(hdr, &want, "host", "agent", error);
}

static void net_stream_close(NetStream *s)
{
	if (s->fd >= 0)
		close(s->fd);
	s->fd = -1;
}

static void net_run_clear(NetRun *r)
{
	for (guint i = 0; i < r->n_streams; i++)
		net_stream_close(&r->streams[i]);
	g_clear_pointer(&r->streams, g_free);
	if (r->listen_fd >= 0)
		close(r->listen_fd);
	r->listen_fd = -1;
	g_clear_pointer(&r->last_reject, g_free);
	for (guint d = 0; d < 2; d++)
		g_clear_pointer(&r->intervals[d], g_array_unref);
}

static NetRun *net_run_new(AgentBenchContext *ctx, const NetParams *p)
{
	NetRun *r = g_new0(NetRun, 1);
	guint i = 0;

	r->ctx = ctx;
	r->sysroot = ctx->sysroot != NULL ? ctx->sysroot : "/";
	r->p = *p;
	for (guint d = 0; d < 2; d++)
		r->intervals[d] = g_array_new(FALSE, TRUE, sizeof(guint64));
	/* slots up to the end of the grace period; a peer overrunning it lands in the last */
	r->max_intervals = p->omit + p->seconds + GB_NETBENCH_GRACE_S + 1;
	r->listen_fd = -1;
	r->n_streams = p->streams * ((p->h2g ? 1 : 0) + (p->g2h ? 1 : 0));
	r->streams = g_new0(NetStream, r->n_streams);
	for (guint d = GB_NETBENCH_DIR_H2G; d <= GB_NETBENCH_DIR_G2H; d++) {
		if ((d == GB_NETBENCH_DIR_H2G && !p->h2g) || (d == GB_NETBENCH_DIR_G2H && !p->g2h))
			continue;
		for (guint k = 0; k < p->streams; k++, i++) {
			r->streams[i].fd = -1;
			r->streams[i].dir = (GbNetbenchDirection)d;
			r->streams[i].index = k;
		}
	}
	return r;
}

static void net_run_free(NetRun *r)
{
	net_run_clear(r);
	g_free(r);
}

G_DEFINE_AUTOPTR_CLEANUP_FUNC(NetRun, net_run_free)

static void net_progress(NetRun *r, double fraction, const char *phase)
{
	fraction = MAX(fraction, r->last_fraction);
	r->last_fraction = fraction;
	agent_bench_progress(r->ctx, fraction, phase);
}

static gboolean net_sockaddr(const NetParams *p, struct sockaddr_storage *ss, socklen_t *len,
                             GError **error)
{
	g_autoptr(GInetAddress) addr = g_inet_address_new_from_string(p->address);
	g_autoptr(GSocketAddress) sa = NULL;

	if (addr == NULL) {
		g_set_error(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT, "Bad address %s",
		            p->address);
		return FALSE;
	}
	sa = g_inet_socket_address_new(addr, (guint16)p->port);
	*len = (socklen_t)g_socket_address_get_native_size(sa);
	return g_socket_address_to_native(sa, ss, sizeof(*ss), error);
}

static int net_socket(int family, GError **error)
{
	int fd = socket(family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);

	if (fd < 0)
		g_set_error(error, GB_ERROR, GB_ERROR_IO, "Cannot create a socket: %s",
		            g_strerror(errno));
	return fd;
}

/* Waits up to NET_POLL_MS for events; EINTR counts as a quiet wake-up. */
static gboolean net_poll(struct pollfd *fds, guint n, GError **error)
{
	if (poll(fds, n, NET_POLL_MS) < 0 && errno != EINTR) {
		g_set_error(error, GB_ERROR, GB_ERROR_IO, "poll failed: %s", g_strerror(errno));
		return FALSE;
	}
	return TRUE;
}

/* ---- handshake: listen mode -------------------------------------------- */

static void net_reject(NetRun *r, int fd, const char *why)
{
	g_free(r->last_reject);
	r->last_reject = g_strdup(why);
	g_debug("net benchmark: rejected a connection: %s", why);
	close(fd);
}

/* Files a pending connection whose header is complete into its stream slot. */
static void net_pending_complete(NetRun *r, int fd, const guint8 *buf)
{
	g_autoptr(GError) error_local = NULL;
	GbNetbenchHeader hdr = { 0 };

	if (!net_header_check(&r->p, buf, &hdr, &error_local)) {
		net_reject(r, fd, error_local->message);
		return;
	}
	for (guint i = 0; i < r->n_streams; i++) {
		NetStream *s = &r->streams[i];

		if (s->dir != hdr.direction || s->index != hdr.index)
			continue;
		if (s->fd >= 0) {
			g_autofree char *why =
			    g_strdup_printf("stream %u of %s connected twice", hdr.index,
			                    gb_netbench_direction_to_string(hdr.direction));
			net_reject(r, fd, why);
			return;
		}
		s->fd = fd;
		s->state = NET_ST_READY;
		return;
	}
}

static gboolean net_listen_open(NetRun *r, GError **error)
{
	struct sockaddr_storage ss;
	socklen_t len = 0;
	int one = 1;

	if (!net_sockaddr(&r->p, &ss, &len, error))
		return FALSE;
	r->listen_fd = net_socket(ss.ss_family, error);
	if (r->listen_fd < 0)
		return FALSE;
	(void)setsockopt(r->listen_fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(r->listen_fd, (struct sockaddr *)&ss, len) < 0 ||
	    listen(r->listen_fd, NET_MAX_STREAMS * 2) < 0) {
		g_set_error(error, GB_ERROR, GB_ERROR_IO, "Cannot listen on %s port %u: %s",
		            r->p.address, r->p.port, g_strerror(errno));
		return FALSE;
	}
	return TRUE;
}

static guint net_count_ready(NetRun *r)
{
	guint n = 0;

	for (guint i = 0; i < r->n_streams; i++)
		n += r->streams[i].state == NET_ST_READY ? 1 : 0;
	return n;
}

static gboolean net_handshake_listen(NetRun *r, GError **error)
{
	int pending[NET_MAX_PENDING];
	guint8 hdrs[NET_MAX_PENDING][GB_NETBENCH_HEADER_LEN];
	gsize hdr_len[NET_MAX_PENDING];
	guint n_pending = 0;
	gint64 deadline = gb_netbench_now_ns() + (gint64)r->p.accept_timeout * GB_NETBENCH_NS_PER_S;
	g_autofree char *phase = NULL;
	gboolean ok = FALSE;

	if (!net_listen_open(r, error))
		return FALSE;
	phase = g_strdup_printf("waiting for the host on %s port %u", r->p.address, r->p.port);
	net_progress(r, 0.0, phase);
	while (net_count_ready(r) < r->n_streams) {
		struct pollfd fds[1 + NET_MAX_PENDING];

		if (!agent_bench_check_cancel(r->ctx, error))
			break;
		if (gb_netbench_now_ns() > deadline) {
			g_set_error(
			    error, GB_ERROR, GB_ERROR_TIMEOUT,
			    "No complete connection set from the host within accept_timeout "
			    "(%u s) on %s port %u: %u of %u streams arrived%s%s",
			    r->p.accept_timeout, r->p.address, r->p.port, net_count_ready(r),
			    r->n_streams, r->last_reject != NULL ? "; last rejected: " : "",
			    r->last_reject != NULL ? r->last_reject : "");
			break;
		}
		fds[0].fd = r->listen_fd;
		fds[0].events = POLLIN;
		fds[0].revents = 0;
		for (guint i = 0; i < n_pending; i++) {
			fds[1 + i].fd = pending[i];
			fds[1 + i].events = POLLIN;
			fds[1 + i].revents = 0;
		}
		if (!net_poll(fds, 1 + n_pending, error))
			break;
		/* headers first: completing one frees a pending slot */
		for (guint i = n_pending; i > 0; i--) {
			guint k = i - 1;
			ssize_t n;

			if (fds[1 + k].revents == 0)
				continue;
			n = recv(pending[k], hdrs[k] + hdr_len[k],
			         GB_NETBENCH_HEADER_LEN - hdr_len[k], MSG_DONTWAIT);
			if (n < 0 && (errno == EAGAIN || errno == EINTR))
				continue;
			if (n <= 0) {
				net_reject(r, pending[k],
				           n == 0 ? "closed before sending its header"
				                  : g_strerror(errno));
			} else {
				hdr_len[k] += (gsize)n;
				if (hdr_len[k] < GB_NETBENCH_HEADER_LEN)
					continue;
				net_pending_complete(r, pending[k], hdrs[k]);
			}
			n_pending--;
			pending[k] = pending[n_pending];
			hdr_len[k] = hdr_len[n_pending];
			memcpy(hdrs[k], hdrs[n_pending], GB_NETBENCH_HEADER_LEN);
		}
		if (fds[0].revents != 0) {
			int fd = accept4(r->listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);

			if (fd >= 0 && n_pending >= NET_MAX_PENDING) {
				net_reject(r, fd, "too many connections without a header");
			} else if (fd >= 0) {
				pending[n_pending] = fd;
				hdr_len[n_pending] = 0;
				n_pending++;
			}
		}
	}
	ok = net_count_ready(r) == r->n_streams;
	for (guint i = 0; i < n_pending; i++)
		close(pending[i]);
	/* the port is open only while streams are being set up */
	close(r->listen_fd);
	r->listen_fd = -1;
	if (!ok)
		return FALSE;
	for (guint i = 0; i < r->n_streams; i++) {
		guint8 go = GB_NETBENCH_GO;

		if (send(r->streams[i].fd, &go, 1, MSG_NOSIGNAL | MSG_DONTWAIT) != 1) {
			g_set_error(error, GB_ERROR, GB_ERROR_IO,
			            "Cannot start stream %u of %s: %s", r->streams[i].index,
			            gb_netbench_direction_to_string(r->streams[i].dir),
			            g_strerror(errno));
			return FALSE;
		}
	}
	return TRUE;
}

/* ---- handshake: connect mode ------------------------------------------- */

static gboolean net_connect_step(NetRun *r, NetStream *s, short revents, GError **error)
{
	if (s->connecting) {
		int err = 0;
		socklen_t len = sizeof(err);
		GbNetbenchHeader hdr = { 0 };

		if (getsockopt(s->fd, SOL_SOCKET, SO_ERROR, &err, &len) < 0)
			err = errno;
		if (err == EINPROGRESS)
			return TRUE;
		if (err != 0) {
			g_set_error(error, GB_ERROR, GB_ERROR_IO,
			            "Cannot connect to %s port %u: %s", r->p.address, r->p.port,
			            g_strerror(err));
			return FALSE;
		}
		s->connecting = FALSE;
		hdr.direction = s->dir;
		hdr.index = s->index;
		hdr.streams = r->p.streams;
		hdr.seconds = r->p.seconds;
		hdr.omit = r->p.omit;
		gb_netbench_header_build(&hdr, s->hdr);
	}
	if (s->hdr_len < GB_NETBENCH_HEADER_LEN) {
		ssize_t n = send(s->fd, s->hdr + s->hdr_len, GB_NETBENCH_HEADER_LEN - s->hdr_len,
		                 MSG_NOSIGNAL | MSG_DONTWAIT);

		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			return TRUE;
		if (n < 0) {
			g_set_error(error, GB_ERROR, GB_ERROR_IO,
			            "Cannot send the header of stream %u to %s port %u: %s",
			            s->index, r->p.address, r->p.port, g_strerror(errno));
			return FALSE;
		}
		s->hdr_len += (gsize)n;
		return TRUE;
	}
	if ((revents & (POLLIN | POLLHUP | POLLERR)) != 0) {
		guint8 go = 0;
		ssize_t n = recv(s->fd, &go, 1, MSG_DONTWAIT);

		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			return TRUE;
		if (n == 1 && go == GB_NETBENCH_GO) {
			s->state = NET_ST_READY;
			return TRUE;
		}
		g_set_error(error, GB_ERROR, GB_ERROR_IO,
		            "The host at %s port %u did not start stream %u of %s (%s); did it "
		            "reject the header?",
		            r->p.address, r->p.port, s->index,
		            gb_netbench_direction_to_string(s->dir),
		            n == 0  ? "connection closed"
		            : n < 0 ? g_strerror(errno)
		                    : "unexpected byte");
		return FALSE;
	}
	return TRUE;
}

static gboolean net_handshake_connect(NetRun *r, GError **error)
{
	g_autofree struct pollfd *fds = g_new0(struct pollfd, r->n_streams);
	struct sockaddr_storage ss;
	socklen_t len = 0;
	gint64 deadline = gb_netbench_now_ns() + (gint64)r->p.accept_timeout * GB_NETBENCH_NS_PER_S;
	g_autofree char *phase = NULL;

	if (!net_sockaddr(&r->p, &ss, &len, error))
		return FALSE;
	phase = g_strdup_printf("connecting to %s port %u", r->p.address, r->p.port);
	net_progress(r, 0.0, phase);
	for (guint i = 0; i < r->n_streams; i++) {
		NetStream *s = &r->streams[i];

		s->fd = net_socket(ss.ss_family, error);
		if (s->fd < 0)
			return FALSE;
		if (connect(s->fd, (struct sockaddr *)&ss, len) < 0 && errno != EINPROGRESS) {
			g_set_error(error, GB_ERROR, GB_ERROR_IO,
			            "Cannot connect to %s port %u: %s", r->p.address, r->p.port,
			            g_strerror(errno));
			return FALSE;
		}
		s->connecting = TRUE;
	}
	while (net_count_ready(r) < r->n_streams) {
		if (!agent_bench_check_cancel(r->ctx, error))
			return FALSE;
		if (gb_netbench_now_ns() > deadline) {
			g_set_error(
			    error, GB_ERROR, GB_ERROR_TIMEOUT,
			    "The host at %s port %u did not accept and start all %u streams "
			    "within accept_timeout (%u s); %u ready",
			    r->p.address, r->p.port, r->n_streams, r->p.accept_timeout,
			    net_count_ready(r));
			return FALSE;
		}
		for (guint i = 0; i < r->n_streams; i++) {
			NetStream *s = &r->streams[i];

			fds[i].fd = s->state == NET_ST_READY ? -1 : s->fd;
			fds[i].events =
			    s->connecting || s->hdr_len < GB_NETBENCH_HEADER_LEN ? POLLOUT : POLLIN;
			fds[i].revents = 0;
		}
		if (!net_poll(fds, r->n_streams, error))
			return FALSE;
		for (guint i = 0; i < r->n_streams; i++) {
			if (fds[i].revents == 0)
				continue;
			if (!net_connect_step(r, &r->streams[i], fds[i].revents, error))
				return FALSE;
		}
	}
	return TRUE;
}

/* ---- transfer ---------------------------------------------------------- */

static void net_interval_add(NetRun *r, GbNetbenchDirection dir, gint64 now, guint64 bytes)
{
	GArray *iv = r->intervals[dir - 1];
	guint sec = (guint)MIN((guint64)MAX(now - r->t0, 0) / (guint64)GB_NETBENCH_NS_PER_S,
	                       (guint64)r->max_intervals - 1);

	if (iv->len <= sec)
		g_array_set_size(iv, sec + 1);
	g_array_index(iv, guint64, sec) += bytes;
}

static gboolean net_stream_fail(NetStream *s, const char *what, int err, GError **error)
{
	g_set_error(error, GB_ERROR, GB_ERROR_IO, "Stream %u of %s: %s: %s", s->index,
	            gb_netbench_direction_to_string(s->dir), what,
	            err != 0 ? g_strerror(err) : "connection closed");
	return FALSE;
}

/* Agent is the receiver: read until EOF, then send the report. */
static gboolean net_step_receiver(NetRun *r, NetStream *s, guint8 *buf, gint64 omit_end,
                                  GError **error)
{
	if (s->state == NET_ST_RUN) {
		for (guint k = 0; k < NET_BURST; k++) {
			ssize_t n = recv(s->fd, buf, NET_CHUNK, MSG_DONTWAIT);
			gint64 now;

			if (n < 0 && (errno == EAGAIN || errno == EINTR))
				return TRUE;
			if (n < 0)
				return net_stream_fail(s, "receiving failed", errno, error);
			now = gb_netbench_now_ns();
			if (n == 0) {
				if (now <= omit_end) {
					g_set_error(error, GB_ERROR, GB_ERROR_IO,
					            "Stream %u of %s ended during the omitted "
					            "warm-up",
					            s->index,
					            gb_netbench_direction_to_string(s->dir));
					return FALSE;
				}
				s->end_ns = now;
				s->result.bytes = s->bytes_counted;
				s->result.ns = (guint64)(now - omit_end);
				gb_netbench_report_build(&s->result, s->report);
				s->report_len = 0;
				s->state = NET_ST_REPORT;
				break;
			}
			s->bytes += (guint64)n;
			if (now > omit_end)
				s->bytes_counted += (guint64)n;
			net_interval_add(r, s->dir, now, (guint64)n);
		}
	}
	if (s->state == NET_ST_REPORT) {
		ssize_t n =
		    send(s->fd, s->report + s->report_len, GB_NETBENCH_REPORT_LEN - s->report_len,
		         MSG_NOSIGNAL | MSG_DONTWAIT);

		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			return TRUE;
		if (n < 0)
			return net_stream_fail(s, "sending the report failed", errno, error);
		s->report_len += (gsize)n;
		if (s->report_len == GB_NETBENCH_REPORT_LEN) {
			net_stream_close(s);
			s->state = NET_ST_DONE;
		}
	}
	return TRUE;
}

/* Agent is the sender: write until the end, half-close, then read the peer's report. */
static gboolean net_step_sender(NetRun *r, NetStream *s, const guint8 *buf, gint64 send_end,
                                GError **error)
{
	if (s->state == NET_ST_RUN) {
		for (guint k = 0; k < NET_BURST; k++) {
			gint64 now = gb_netbench_now_ns();
			ssize_t n;

			if (now >= send_end) {
				if (shutdown(s->fd, SHUT_WR) < 0)
					return net_stream_fail(s, "shutdown failed", errno, error);
				s->state = NET_ST_REPORT;
				s->report_len = 0;
				break;
			}
			n = send(s->fd, buf + s->chunk_off, NET_CHUNK - s->chunk_off,
			         MSG_NOSIGNAL | MSG_DONTWAIT);
			if (n < 0 && (errno == EAGAIN || errno == EINTR))
				return TRUE;
			if (n < 0)
				return net_stream_fail(s, "sending failed", errno, error);
			s->bytes += (guint64)n;
			s->chunk_off = (s->chunk_off + (gsize)n) % NET_CHUNK;
			net_interval_add(r, s->dir, now, (guint64)n);
		}
		return TRUE;
	}
	if (s->state == NET_ST_REPORT) {
		ssize_t n = recv(s->fd, s->report + s->report_len,
		                 GB_NETBENCH_REPORT_LEN - s->report_len, MSG_DONTWAIT);

		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			return TRUE;
		if (n <= 0)
			return net_stream_fail(s, "reading the host's report failed",
			                       n < 0 ? errno : 0, error);
		s->report_len += (gsize)n;
		if (s->report_len < GB_NETBENCH_REPORT_LEN)
			return TRUE;
		if (!gb_netbench_report_parse(s->report, s->report_len, "host", &s->result,
		                              error) ||
		    !gb_netbench_report_check(&s->result, "host", s->bytes, r->p.omit, r->p.seconds,
		                              error)) {
			g_prefix_error(error, "Stream %u of %s: ", s->index,
			               gb_netbench_direction_to_string(s->dir));
			return FALSE;
		}
		net_stream_close(s);
		s->state = NET_ST_DONE;
	}
	return TRUE;
}

static gboolean net_transfer(NetRun *r, NetSample *before, NetSample *after, GError **error)
{
	g_autoptr(GbNetbenchBuffer) buf = gb_netbench_buffer_new(NET_CHUNK, 0x67626e74u);
	g_autofree struct pollfd *fds = g_new0(struct pollfd, r->n_streams);
	gint64 omit_end;
	gint64 send_end;
	gint64 deadline;
	gboolean sampled = FALSE;
	gint64 rate_ns;

	r->t0 = gb_netbench_now_ns();
	rate_ns = r->t0;
	omit_end = r->t0 + (gint64)r->p.omit * GB_NETBENCH_NS_PER_S;
	send_end = omit_end + (gint64)r->p.seconds * GB_NETBENCH_NS_PER_S;
	deadline = send_end + GB_NETBENCH_GRACE_S * GB_NETBENCH_NS_PER_S;
	for (guint i = 0; i < r->n_streams; i++) {
		r->streams[i].state = NET_ST_RUN;
		gb_netbench_stream_started(r->streams[i].fd);
	}
	for (;;) {
		gint64 now = gb_netbench_now_ns();
		guint active = 0;

		if (!sampled && now >= omit_end) {
			net_sample_take(r->sysroot, before);
			sampled = TRUE;
		}
		if (!agent_bench_check_cancel(r->ctx, error))
			return FALSE;
		if (now > deadline) {
			g_set_error(
			    error, GB_ERROR, GB_ERROR_TIMEOUT,
			    "The host did not finish the transfer within %d s of the agreed "
			    "end",
			    GB_NETBENCH_GRACE_S);
			return FALSE;
		}
		/* past send_end the host may still be draining (up to the grace):
		 * stay below the 1.0 of "done" */
		net_progress(r, 0.99 * MIN(1.0, (double)(now - r->t0) / (double)(send_end - r->t0)),
		             now < omit_end ? "warm-up (omitted)" : "transfer");
		/* both directions' payload so far over the time so far, warm-up included */
		if (now - rate_ns >= NET_RATE_NS) {
			guint64 moved = 0;

			for (guint i = 0; i < r->n_streams; i++)
				moved += r->streams[i].bytes;
			agent_bench_rate(r->ctx, (double)moved * 1e9 / (double)(now - r->t0),
			                 "B/s");
			rate_ns = now;
		}
		for (guint i = 0; i < r->n_streams; i++) {
			NetStream *s = &r->streams[i];
			gboolean sending = s->dir == GB_NETBENCH_DIR_G2H;

			fds[i].fd = s->state == NET_ST_DONE ? -1 : s->fd;
			fds[i].revents = 0;
			if (s->state == NET_ST_RUN)
				fds[i].events = sending ? POLLOUT : POLLIN;
			else
				fds[i].events = sending ? POLLIN : POLLOUT;
			active += s->state == NET_ST_DONE ? 0 : 1;
		}
		if (active == 0)
			break;
		if (!net_poll(fds, r->n_streams, error))
			return FALSE;
		for (guint i = 0; i < r->n_streams; i++) {
			NetStream *s = &r->streams[i];
			gboolean ok;

			/* senders must notice the end even when the socket stays full */
			if (fds[i].revents == 0 && !(s->dir == GB_NETBENCH_DIR_G2H &&
			                             s->state == NET_ST_RUN && now >= send_end))
				continue;
			if (s->dir == GB_NETBENCH_DIR_G2H)
				ok = net_step_sender(r, s, buf, send_end, error);
			else
				ok = net_step_receiver(r, s, buf, omit_end, error);
			if (!ok)
				return FALSE;
		}
	}
	if (!sampled)
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
	g_autofree char *streams = g_strdup_printf("%u", r->p.streams);

	for (guint i = 0; i < r->n_streams; i++) {
		NetStream *s = &r->streams[i];

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
		json_object_set_boolean_member(e, "omitted", k < r->p.omit);
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
		if (p.h2g)
			json_object_set_object_member(
			    transfer, "host-to-guest",
			    net_direction_result(r, GB_NETBENCH_DIR_H2G, metrics));
		if (p.g2h)
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
