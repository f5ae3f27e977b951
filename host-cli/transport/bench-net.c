/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"

#include <errno.h>
#include <gio/gio.h>
#include <netinet/in.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "guestbench-protocol.h"

#include "transport/bench-net.h"

#define NET_CHUNK (128 * 1024)
/* Poll interval: the bound on how late a cancel or the sender's end is noticed. */
#define NET_POLL_MS 20
/* A refused or dropped connection is tried again after this long (the agent may not listen yet). */
#define NET_RETRY_MS 100
/* Reads or writes per stream per wake-up, so one fast stream cannot starve the others. */
#define NET_BURST 16
#define NET_MAX_PENDING 64

typedef enum {
	NET_ST_IDLE, /* connect role: no socket, (re)connect at retry_at; listen role: empty slot */
	NET_ST_CONNECTING, /* non-blocking connect() in flight */
	NET_ST_HEADER,     /* writing the header */
	NET_ST_WAIT_GO,    /* header sent, waiting for 'G' */
	NET_ST_READY,      /* set up, waiting for the transfer */
	NET_ST_RUN,
	NET_ST_REPORT, /* receiver: sending the report; sender: reading it */
	NET_ST_DONE,
} NetState;

typedef struct {
	int fd;
	guint dir;
	guint index;
	NetState state;
	gint64 retry_at;
	guint8 hdr[CLI_NET_HEADER_LEN];
	gsize hdr_len;
	gsize chunk_off;
	guint64 bytes;   /* payload moved by the host */
	guint64 counted; /* host as receiver: bytes after the warm-up */
	guint8 report[CLI_NET_REPORT_LEN];
	gsize report_len;
	guint64 report_bytes; /* the receiver's figure (ours or the agent's) */
	guint64 report_ns;
} NetStream;

typedef struct {
	int fd;
	guint8 hdr[CLI_NET_HEADER_LEN];
	gsize len;
} NetPending;

/* What one run moved, per direction (index dir - 1). */
typedef struct {
	guint64 host_bytes[2];
	guint64 counted[2];
	guint64 ns[2];
} NetRound;

struct _CliNetEnd {
	CliNetConfig cfg;
	struct sockaddr_storage ss;
	socklen_t ss_len;
	gboolean addr_ok;
	int listen_fd;
	guint bound_port;
	GThread *thread;
	gint cancel; /* atomic */
	GMutex mutex;
	gboolean finished; /* under mutex */
	GError *error;     /* under mutex, set before finished */
	gboolean joined;
	GArray *rounds; /* NetRound; the worker's until joined */
	NetStream *streams;
	guint n_streams;
	char *last_problem; /* worker: why the last setup attempt failed, for the timeout */
};

/* bench-net.h's wire constants are those of the shared codec. */
G_STATIC_ASSERT(CLI_NET_HEADER_LEN == GB_NETBENCH_HEADER_LEN);
G_STATIC_ASSERT(CLI_NET_REPORT_LEN == GB_NETBENCH_REPORT_LEN);
G_STATIC_ASSERT(CLI_NET_DIR_H2G == GB_NETBENCH_DIR_H2G);
G_STATIC_ASSERT(CLI_NET_DIR_G2H == GB_NETBENCH_DIR_G2H);
G_STATIC_ASSERT(CLI_NET_GRACE_S == GB_NETBENCH_GRACE_S);

/* ---- parsing and the wire formats ---------------------------------------------------- */

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

/* bench-net.h's codec entry points (tests use them): CliNetConfig adapted to gb-netbench.h. */
void cli_net_header_build(guint8 *hdr, guint dir, guint index, guint streams, guint seconds,
                          guint omit)
{
	GbNetbenchHeader h = {
		.direction = (GbNetbenchDirection)dir,
		.index = index,
		.streams = streams,
		.seconds = seconds,
		.omit = omit,
	};

	gb_netbench_header_build(&h, hdr);
}

gboolean cli_net_header_check(const guint8 *hdr, const CliNetConfig *config, guint *dir,
                              guint *index, GError **error)
{
	GbNetbenchParams want = {
		.h2g = config->h2g,
		.g2h = config->g2h,
		.streams = config->streams,
		.seconds = config->seconds,
		.omit = config->omit,
	};
	GbNetbenchHeader h = { 0 };

	if (!gb_netbench_header_parse(hdr, CLI_NET_HEADER_LEN, &h, error) ||
	    !gb_netbench_header_match(&h, &want, "agent", "host", error))
		return FALSE;
	*dir = h.direction;
	*index = h.index;
	return TRUE;
}

void cli_net_report_build(guint8 *report, guint64 bytes, guint64 ns)
{
	GbNetbenchReport r = { .bytes = bytes, .ns = ns };

	gb_netbench_report_build(&r, report);
}

gboolean cli_net_report_parse(const guint8 *report, const CliNetConfig *config, guint64 bytes_sent,
                              guint64 *bytes, guint64 *ns, GError **error)
{
	GbNetbenchReport r = { 0 };

	if (!gb_netbench_report_parse(report, CLI_NET_REPORT_LEN, "agent", &r, error) ||
	    !gb_netbench_report_check(&r, "agent", bytes_sent, config->omit, config->seconds,
	                              error))
		return FALSE;
	*bytes = r.bytes;
	*ns = r.ns;
	return TRUE;
}

/* ---- the end ------------------------------------------------------------------------- */

CliNetEnd *cli_net_end_new(const CliNetConfig *config)
{
	CliNetEnd *end = g_new0(CliNetEnd, 1);

	end->cfg = *config;
	end->cfg.address = g_strdup(config->address);
	end->cfg.runs = MAX(config->runs, 1);
	end->listen_fd = -1;
	end->bound_port = config->port;
	g_mutex_init(&end->mutex);
	end->rounds = g_array_new(FALSE, TRUE, sizeof(NetRound));
	end->n_streams = (config->h2g ? config->streams : 0) + (config->g2h ? config->streams : 0);
	end->streams = g_new0(NetStream, MAX(end->n_streams, 1));
	for (guint i = 0; i < end->n_streams; i++)
		end->streams[i].fd = -1;
	return end;
}

static gboolean net_end_sockaddr(CliNetEnd *end, GError **error)
{
	g_autoptr(GInetAddress) inet = NULL;
	g_autoptr(GSocketAddress) sa = NULL;

	if (end->addr_ok)
		return TRUE;
	inet = g_inet_address_new_from_string(end->cfg.address != NULL ? end->cfg.address : "");
	if (inet == NULL) {
		g_set_error(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT,
		            "'%s' is not a numeric address",
		            end->cfg.address != NULL ? end->cfg.address : "");
		return FALSE;
	}
	sa = g_inet_socket_address_new(inet, (guint16)end->cfg.port);
	end->ss_len = (socklen_t)g_socket_address_get_native_size(sa);
	if (!g_socket_address_to_native(sa, &end->ss, sizeof(end->ss), error))
		return FALSE;
	end->addr_ok = TRUE;
	return TRUE;
}

gboolean cli_net_end_listen(CliNetEnd *end, GError **error)
{
	struct sockaddr_storage bound;
	socklen_t len = sizeof(bound);
	int one = 1;

	if (end->cfg.role != CLI_NET_HOST_LISTENS || end->listen_fd >= 0)
		return TRUE;
	if (!net_end_sockaddr(end, error))
		return FALSE;
	end->listen_fd = socket(end->ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (end->listen_fd < 0) {
		g_set_error(error, GB_ERROR, GB_ERROR_IO, "cannot create a socket: %s",
		            g_strerror(errno));
		return FALSE;
	}
	/* a rerun right after the last one must not fail on a port in TIME_WAIT */
	setsockopt(end->listen_fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(end->listen_fd, (struct sockaddr *)&end->ss, end->ss_len) != 0 ||
	    listen(end->listen_fd, NET_MAX_PENDING) != 0) {
		g_set_error(error, GB_ERROR, GB_ERROR_IO, "cannot listen on %s port %u: %s",
		            end->cfg.address, end->cfg.port, g_strerror(errno));
		close(end->listen_fd);
		end->listen_fd = -1;
		return FALSE;
	}
	if (getsockname(end->listen_fd, (struct sockaddr *)&bound, &len) == 0) {
		if (bound.ss_family == AF_INET)
			end->bound_port = ntohs(((struct sockaddr_in *)&bound)->sin_port);
		else if (bound.ss_family == AF_INET6)
			end->bound_port = ntohs(((struct sockaddr_in6 *)&bound)->sin6_port);
	}
	return TRUE;
}

guint cli_net_end_get_port(CliNetEnd *end)
{
	return end->bound_port;
}

static gboolean net_check_cancel(CliNetEnd *end, GError **error)
{
	if (g_atomic_int_get(&end->cancel) == 0)
		return TRUE;
	g_set_error_literal(error, G_IO_ERROR, G_IO_ERROR_CANCELLED, "stopped");
	return FALSE;
}

static void net_stream_close(NetStream *s)
{
	if (s->fd >= 0)
		close(s->fd);
	s->fd = -1;
}

static void net_set_problem(CliNetEnd *end, const char *fmt, ...) G_GNUC_PRINTF(2, 3);

static void net_set_problem(CliNetEnd *end, const char *fmt, ...)
{
	va_list ap;

	g_free(end->last_problem);
	va_start(ap, fmt);
	end->last_problem = g_strdup_vprintf(fmt, ap);
	va_end(ap);
}

static gboolean net_poll(struct pollfd *fds, guint n, int timeout_ms, GError **error)
{
	if (poll(fds, n, timeout_ms) < 0 && errno != EINTR) {
		g_set_error(error, GB_ERROR, GB_ERROR_IO, "poll failed: %s", g_strerror(errno));
		return FALSE;
	}
	return TRUE;
}

/* Connect role: a failure before the go byte is normal while the agent is not listening yet. */
static void net_retry(CliNetEnd *end, NetStream *s, const char *what, int err)
{
	net_set_problem(end, "stream %u of %s: %s: %s", s->index,
	                gb_netbench_direction_to_string(s->dir), what,
	                err != 0 ? g_strerror(err) : "connection closed");
	net_stream_close(s);
	s->state = NET_ST_IDLE;
	s->hdr_len = 0;
	s->retry_at = gb_netbench_now_ns() + NET_RETRY_MS * G_GINT64_CONSTANT(1000000);
}

static void net_connect_step(CliNetEnd *end, NetStream *s, short revents)
{
	if (s->state == NET_ST_CONNECTING) {
		int err = 0;
		socklen_t len = sizeof(err);

		if (getsockopt(s->fd, SOL_SOCKET, SO_ERROR, &err, &len) < 0)
			err = errno;
		if (err == EINPROGRESS)
			return;
		if (err != 0) {
			net_retry(end, s, "connect", err);
			return;
		}
		s->state = NET_ST_HEADER;
		cli_net_header_build(s->hdr, s->dir, s->index, end->cfg.streams, end->cfg.seconds,
		                     end->cfg.omit);
		s->hdr_len = 0;
	}
	if (s->state == NET_ST_HEADER) {
		ssize_t n = send(s->fd, s->hdr + s->hdr_len, CLI_NET_HEADER_LEN - s->hdr_len,
		                 MSG_NOSIGNAL | MSG_DONTWAIT);

		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			return;
		if (n < 0) {
			net_retry(end, s, "sending the header", errno);
			return;
		}
		s->hdr_len += (gsize)n;
		if (s->hdr_len == CLI_NET_HEADER_LEN)
			s->state = NET_ST_WAIT_GO;
		return;
	}
	if (s->state == NET_ST_WAIT_GO && (revents & (POLLIN | POLLHUP | POLLERR)) != 0) {
		guint8 go = 0;
		ssize_t n = recv(s->fd, &go, 1, MSG_DONTWAIT);

		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			return;
		if (n == 1 && go == GB_NETBENCH_GO) {
			s->state = NET_ST_READY;
			return;
		}
		if (n == 1) {
			net_retry(end, s, "waiting for the start", EPROTO);
			return;
		}
		net_retry(end, s, "waiting for the start", n < 0 ? errno : 0);
	}
}

static guint net_count_ready(CliNetEnd *end)
{
	guint n = 0;

	for (guint i = 0; i < end->n_streams; i++)
		n += end->streams[i].state == NET_ST_READY ? 1 : 0;
	return n;
}

static GError *net_setup_timeout(CliNetEnd *end, const char *what)
{
	return g_error_new(GB_ERROR, GB_ERROR_TIMEOUT,
	                   "%s within %u s (%u of %u streams started)%s%s", what,
	                   end->cfg.setup_timeout, net_count_ready(end), end->n_streams,
	                   end->last_problem != NULL ? "; last problem: " : "",
	                   end->last_problem != NULL ? end->last_problem : "");
}

static gboolean net_setup_connect(CliNetEnd *end, GError **error)
{
	g_autofree struct pollfd *fds = g_new0(struct pollfd, end->n_streams);
	gint64 deadline =
	    gb_netbench_now_ns() + (gint64)end->cfg.setup_timeout * GB_NETBENCH_NS_PER_S;

	if (!net_end_sockaddr(end, error))
		return FALSE;
	for (guint i = 0; i < end->n_streams; i++) {
		end->streams[i].state = NET_ST_IDLE;
		end->streams[i].retry_at = 0;
	}
	while (net_count_ready(end) < end->n_streams) {
		gint64 now = gb_netbench_now_ns();

		if (!net_check_cancel(end, error))
			return FALSE;
		if (now > deadline) {
			g_autofree char *what =
			    g_strdup_printf("the agent did not accept on %s port %u",
			                    end->cfg.address, end->cfg.port);
			g_propagate_error(error, net_setup_timeout(end, what));
			return FALSE;
		}
		for (guint i = 0; i < end->n_streams; i++) {
			NetStream *s = &end->streams[i];

			if (s->state != NET_ST_IDLE || s->retry_at > now)
				continue;
			s->fd = socket(end->ss.ss_family,
			               SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
			if (s->fd < 0) {
				g_set_error(error, GB_ERROR, GB_ERROR_IO,
				            "cannot create a socket: %s", g_strerror(errno));
				return FALSE;
			}
			if (connect(s->fd, (struct sockaddr *)&end->ss, end->ss_len) == 0 ||
			    errno == EINPROGRESS)
				s->state = NET_ST_CONNECTING;
			else
				net_retry(end, s, "connect", errno);
		}
		for (guint i = 0; i < end->n_streams; i++) {
			NetStream *s = &end->streams[i];

			fds[i].fd =
			    s->state == NET_ST_IDLE || s->state == NET_ST_READY ? -1 : s->fd;
			fds[i].events = s->state == NET_ST_WAIT_GO ? POLLIN : POLLOUT;
			fds[i].revents = 0;
		}
		if (!net_poll(fds, end->n_streams, NET_POLL_MS, error))
			return FALSE;
		for (guint i = 0; i < end->n_streams; i++) {
			if (fds[i].revents != 0)
				net_connect_step(end, &end->streams[i], fds[i].revents);
		}
	}
	return TRUE;
}

/* The slot of a stream: host-to-guest streams first, then guest-to-host. */
static guint net_slot(CliNetEnd *end, guint dir, guint index)
{
	if (dir == CLI_NET_DIR_G2H && end->cfg.h2g)
		return end->cfg.streams + index;
	return index;
}

static void net_pending_free(gpointer data)
{
	NetPending *p = data;

	if (p->fd >= 0)
		close(p->fd);
	g_free(p);
}

/* A complete header: the connection takes its slot, or is dropped (the agent retries nothing). */
static void net_pending_complete(CliNetEnd *end, NetPending *p)
{
	g_autoptr(GError) error_local = NULL;
	guint dir = 0;
	guint index = 0;
	NetStream *s;

	if (!cli_net_header_check(p->hdr, &end->cfg, &dir, &index, &error_local)) {
		net_set_problem(end, "dropped a connection: %s", error_local->message);
		return;
	}
	s = &end->streams[net_slot(end, dir, index)];
	if (s->state != NET_ST_IDLE) {
		net_set_problem(end, "dropped a second connection for stream %u of %s", index,
		                gb_netbench_direction_to_string(dir));
		return;
	}
	s->fd = p->fd;
	p->fd = -1;
	s->state = NET_ST_READY;
}

static gboolean net_setup_listen(CliNetEnd *end, GError **error)
{
	g_autoptr(GPtrArray) pending = g_ptr_array_new_with_free_func(net_pending_free);
	g_autofree struct pollfd *fds = g_new0(struct pollfd, NET_MAX_PENDING + 1);
	gint64 deadline =
	    gb_netbench_now_ns() + (gint64)end->cfg.setup_timeout * GB_NETBENCH_NS_PER_S;

	if (!cli_net_end_listen(end, error))
		return FALSE;
	for (guint i = 0; i < end->n_streams; i++)
		end->streams[i].state = NET_ST_IDLE;
	while (net_count_ready(end) < end->n_streams) {
		if (!net_check_cancel(end, error))
			return FALSE;
		if (gb_netbench_now_ns() > deadline) {
			g_autofree char *what =
			    g_strdup_printf("the agent did not connect to %s port %u",
			                    end->cfg.address, end->bound_port);
			g_propagate_error(error, net_setup_timeout(end, what));
			return FALSE;
		}
		fds[0].fd = pending->len < NET_MAX_PENDING ? end->listen_fd : -1;
		fds[0].events = POLLIN;
		fds[0].revents = 0;
		for (guint i = 0; i < pending->len; i++) {
			NetPending *p = g_ptr_array_index(pending, i);
			fds[i + 1].fd = p->fd;
			fds[i + 1].events = POLLIN;
			fds[i + 1].revents = 0;
		}
		if (!net_poll(fds, pending->len + 1, NET_POLL_MS, error))
			return FALSE;
		/* pending connections first: indexes into fds follow the array before it grows */
		for (guint i = pending->len; i > 0; i--) {
			NetPending *p = g_ptr_array_index(pending, i - 1);
			ssize_t n;

			if (fds[i].revents == 0)
				continue;
			n = recv(p->fd, p->hdr + p->len, CLI_NET_HEADER_LEN - p->len, MSG_DONTWAIT);
			if (n < 0 && (errno == EAGAIN || errno == EINTR))
				continue;
			if (n <= 0) {
				net_set_problem(end, "a connection closed before its header: %s",
				                n < 0 ? g_strerror(errno) : "end of stream");
				g_ptr_array_remove_index(pending, i - 1);
				continue;
			}
			p->len += (gsize)n;
			if (p->len == CLI_NET_HEADER_LEN) {
				net_pending_complete(end, p);
				g_ptr_array_remove_index(pending, i - 1);
			}
		}
		if (fds[0].revents != 0) {
			int fd = accept4(end->listen_fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);

			if (fd >= 0) {
				NetPending *p = g_new0(NetPending, 1);
				p->fd = fd;
				g_ptr_array_add(pending, p);
			} else if (errno != EAGAIN && errno != EINTR && errno != ECONNABORTED) {
				g_set_error(error, GB_ERROR, GB_ERROR_IO, "accept failed: %s",
				            g_strerror(errno));
				return FALSE;
			}
		}
	}
	/* every stream is there: the go byte on each is the start */
	for (guint i = 0; i < end->n_streams; i++) {
		NetStream *s = &end->streams[i];
		guint8 go = GB_NETBENCH_GO;

		if (send(s->fd, &go, 1, MSG_NOSIGNAL | MSG_DONTWAIT) != 1) {
			g_set_error(error, GB_ERROR, GB_ERROR_IO,
			            "cannot start stream %u of %s: %s", s->index,
			            gb_netbench_direction_to_string(s->dir), g_strerror(errno));
			return FALSE;
		}
	}
	return TRUE;
}

static gboolean net_stream_fail(NetStream *s, const char *what, int err, GError **error)
{
	g_set_error(error, GB_ERROR, GB_ERROR_IO, "stream %u of %s: %s: %s", s->index,
	            gb_netbench_direction_to_string(s->dir), what,
	            err != 0 ? g_strerror(err) : "connection closed");
	return FALSE;
}

/* The host receives (guest-to-host): read until EOF, then send the report. */
static gboolean net_step_receiver(NetStream *s, guint8 *buf, gint64 omit_end, GError **error)
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
					g_set_error(
					    error, GB_ERROR, GB_ERROR_IO,
					    "stream %u of %s ended during the omitted warm-up",
					    s->index, gb_netbench_direction_to_string(s->dir));
					return FALSE;
				}
				s->report_bytes = s->counted;
				s->report_ns = (guint64)(now - omit_end);
				cli_net_report_build(s->report, s->report_bytes, s->report_ns);
				s->report_len = 0;
				s->state = NET_ST_REPORT;
				break;
			}
			s->bytes += (guint64)n;
			if (now > omit_end)
				s->counted += (guint64)n;
		}
	}
	if (s->state == NET_ST_REPORT) {
		ssize_t n = send(s->fd, s->report + s->report_len,
		                 CLI_NET_REPORT_LEN - s->report_len, MSG_NOSIGNAL | MSG_DONTWAIT);

		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			return TRUE;
		if (n < 0)
			return net_stream_fail(s, "sending the report failed", errno, error);
		s->report_len += (gsize)n;
		if (s->report_len == CLI_NET_REPORT_LEN) {
			net_stream_close(s);
			s->state = NET_ST_DONE;
		}
	}
	return TRUE;
}

/* The host sends (host-to-guest): write until the end, half-close, read the agent's report. */
static gboolean net_step_sender(CliNetEnd *end, NetStream *s, const guint8 *buf, gint64 send_end,
                                GError **error)
{
	if (s->state == NET_ST_RUN) {
		for (guint k = 0; k < NET_BURST; k++) {
			ssize_t n;

			if (gb_netbench_now_ns() >= send_end) {
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
		}
		return TRUE;
	}
	if (s->state == NET_ST_REPORT) {
		ssize_t n = recv(s->fd, s->report + s->report_len,
		                 CLI_NET_REPORT_LEN - s->report_len, MSG_DONTWAIT);

		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			return TRUE;
		if (n <= 0)
			return net_stream_fail(s, "reading the agent's report failed",
			                       n < 0 ? errno : 0, error);
		s->report_len += (gsize)n;
		if (s->report_len < CLI_NET_REPORT_LEN)
			return TRUE;
		if (!cli_net_report_parse(s->report, &end->cfg, s->bytes, &s->report_bytes,
		                          &s->report_ns, error)) {
			g_prefix_error(error, "stream %u of %s: ", s->index,
			               gb_netbench_direction_to_string(s->dir));
			return FALSE;
		}
		net_stream_close(s);
		s->state = NET_ST_DONE;
	}
	return TRUE;
}

static gboolean net_transfer(CliNetEnd *end, GError **error)
{
	g_autoptr(GbNetbenchBuffer) buf = gb_netbench_buffer_new(NET_CHUNK, 0x67626e68u);
	g_autofree struct pollfd *fds = g_new0(struct pollfd, end->n_streams);
	gint64 t0 = gb_netbench_now_ns();
	gint64 omit_end = t0 + (gint64)end->cfg.omit * GB_NETBENCH_NS_PER_S;
	gint64 send_end = omit_end + (gint64)end->cfg.seconds * GB_NETBENCH_NS_PER_S;
	gint64 deadline = send_end + GB_NETBENCH_GRACE_S * GB_NETBENCH_NS_PER_S;

	for (guint i = 0; i < end->n_streams; i++) {
		NetStream *s = &end->streams[i];
		s->state = NET_ST_RUN;
		s->bytes = 0;
		s->counted = 0;
		s->chunk_off = 0;
		s->report_len = 0;
		gb_netbench_stream_started(s->fd);
	}
	for (;;) {
		gint64 now = gb_netbench_now_ns();
		guint active = 0;

		if (!net_check_cancel(end, error))
			return FALSE;
		if (now > deadline) {
			g_set_error(
			    error, GB_ERROR, GB_ERROR_TIMEOUT,
			    "the agent did not finish the transfer within %d s of the agreed "
			    "end",
			    GB_NETBENCH_GRACE_S);
			return FALSE;
		}
		for (guint i = 0; i < end->n_streams; i++) {
			NetStream *s = &end->streams[i];
			gboolean sending = s->dir == CLI_NET_DIR_H2G;

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
		if (!net_poll(fds, end->n_streams, NET_POLL_MS, error))
			return FALSE;
		now = gb_netbench_now_ns();
		for (guint i = 0; i < end->n_streams; i++) {
			NetStream *s = &end->streams[i];
			gboolean ok;

			/* a sender must notice the end even while its socket stays full */
			if (fds[i].revents == 0 && !(s->dir == CLI_NET_DIR_H2G &&
			                             s->state == NET_ST_RUN && now >= send_end))
				continue;
			if (s->dir == CLI_NET_DIR_H2G)
				ok = net_step_sender(end, s, buf, send_end, error);
			else
				ok = net_step_receiver(s, buf, omit_end, error);
			if (!ok)
				return FALSE;
		}
	}
	return TRUE;
}

static void net_round_record(CliNetEnd *end)
{
	NetRound round = { 0 };

	for (guint i = 0; i < end->n_streams; i++) {
		NetStream *s = &end->streams[i];
		guint d = s->dir - 1;

		round.host_bytes[d] += s->bytes;
		round.counted[d] += s->report_bytes;
		round.ns[d] = MAX(round.ns[d], s->report_ns);
	}
	g_array_append_val(end->rounds, round);
}

static gboolean net_run(CliNetEnd *end, GError **error)
{
	for (guint i = 0; i < end->n_streams; i++) {
		gboolean g2h = end->cfg.h2g ? i >= end->cfg.streams : TRUE;
		end->streams[i].dir = g2h ? CLI_NET_DIR_G2H : CLI_NET_DIR_H2G;
		end->streams[i].index = g2h && end->cfg.h2g ? i - end->cfg.streams : i;
	}
	for (guint r = 0; r < end->cfg.runs; r++) {
		gboolean ok;

		g_clear_pointer(&end->last_problem, g_free);
		ok = end->cfg.role == CLI_NET_HOST_CONNECTS ? net_setup_connect(end, error)
		                                            : net_setup_listen(end, error);
		if (ok)
			ok = net_transfer(end, error);
		for (guint i = 0; i < end->n_streams; i++)
			net_stream_close(&end->streams[i]);
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
	if (end->n_streams == 0 || end->cfg.streams > 255) {
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
	json_builder_add_string_value(b, dir == CLI_NET_DIR_H2G ? "guest" : "host");
	json_builder_set_member_name(b, dir == CLI_NET_DIR_H2G ? "bytes_sent" : "bytes_received");
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
			net_json_direction(b, round, CLI_NET_DIR_H2G);
		if (end->cfg.g2h)
			net_json_direction(b, round, CLI_NET_DIR_G2H);
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
	for (guint i = 0; i < end->n_streams; i++)
		net_stream_close(&end->streams[i]);
	if (end->listen_fd >= 0)
		close(end->listen_fd);
	if (end->error != NULL)
		g_error_free(end->error);
	g_array_unref(end->rounds);
	g_free(end->streams);
	g_free(end->last_problem);
	g_free(end->cfg.address);
	g_mutex_clear(&end->mutex);
	g_free(end);
}
