/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"

#include <errno.h>
#include <gio/gio.h>
#include <netinet/in.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "gb-error.h"
#include "gb-netbench-stream.h"

#define GB_NETBENCH_NS_PER_MS G_GINT64_CONSTANT(1000000)

void gb_netbench_end_init(GbNetbenchEnd *end, const GbNetbenchParams *params, gboolean host,
                          const GbNetbenchHooks *hooks)
{
	guint i = 0;

	memset(end, 0, sizeof(*end));
	end->params = *params;
	end->host = host;
	end->self = host ? "host" : "agent";
	end->peer = host ? "agent" : "host";
	end->hooks = *hooks;
	end->n_streams = params->streams * ((params->h2g ? 1 : 0) + (params->g2h ? 1 : 0));
	end->streams = g_new0(GbNetbenchStream, MAX(end->n_streams, 1));
	for (guint d = GB_NETBENCH_DIR_H2G; d <= GB_NETBENCH_DIR_G2H; d++) {
		if ((d == GB_NETBENCH_DIR_H2G && !params->h2g) ||
		    (d == GB_NETBENCH_DIR_G2H && !params->g2h))
			continue;
		for (guint k = 0; k < params->streams; k++, i++) {
			GbNetbenchStream *s = &end->streams[i];

			s->fd = -1;
			s->dir = (GbNetbenchDirection)d;
			s->index = k;
			s->sender = (d == GB_NETBENCH_DIR_H2G) == host;
		}
	}
}

static void gb_netbench_stream_close(GbNetbenchStream *s)
{
	if (s->fd >= 0)
		close(s->fd);
	s->fd = -1;
}

void gb_netbench_end_close(GbNetbenchEnd *end)
{
	for (guint i = 0; i < end->n_streams; i++)
		gb_netbench_stream_close(&end->streams[i]);
}

void gb_netbench_end_clear(GbNetbenchEnd *end)
{
	gb_netbench_end_close(end);
	g_clear_pointer(&end->streams, g_free);
	g_clear_pointer(&end->where, g_free);
	g_clear_pointer(&end->last_problem, g_free);
	end->n_streams = 0;
}

guint gb_netbench_end_count_ready(const GbNetbenchEnd *end)
{
	guint n = 0;

	for (guint i = 0; i < end->n_streams; i++)
		n += end->streams[i].state == GB_NETBENCH_STREAM_READY ? 1 : 0;
	return n;
}

static void gb_netbench_end_set_problem(GbNetbenchEnd *end, const char *problem)
{
	g_free(end->last_problem);
	end->last_problem = g_strdup(problem);
	g_debug("net benchmark, %s end: %s", end->self, problem);
}

static void gb_netbench_end_start_setup(GbNetbenchEnd *end, const char *address, guint port)
{
	g_free(end->where);
	end->where = g_strdup_printf("%s port %u", address, port);
	g_clear_pointer(&end->last_problem, g_free);
	for (guint i = 0; i < end->n_streams; i++) {
		GbNetbenchStream *s = &end->streams[i];

		gb_netbench_stream_close(s);
		s->state = GB_NETBENCH_STREAM_IDLE;
		s->retry_at = 0;
		s->hdr_len = 0;
	}
}

static gboolean gb_netbench_sockaddr(const char *address, guint port, struct sockaddr_storage *ss,
                                     socklen_t *len, GError **error)
{
	g_autoptr(GInetAddress) inet = NULL;
	g_autoptr(GSocketAddress) sa = NULL;

	if (address == NULL)
		address = "";
	inet = g_inet_address_new_from_string(address);
	if (inet == NULL) {
		g_set_error(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT,
		            "'%s' is not a numeric IPv4 or IPv6 address", address);
		return FALSE;
	}
	sa = g_inet_socket_address_new(inet, (guint16)port);
	*len = (socklen_t)g_socket_address_get_native_size(sa);
	return g_socket_address_to_native(sa, ss, sizeof(*ss), error);
}

static int gb_netbench_socket(int family, GError **error)
{
	int fd = socket(family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);

	if (fd < 0)
		g_set_error(error, GB_ERROR, GB_ERROR_IO, "cannot create a socket: %s",
		            g_strerror(errno));
	return fd;
}

/* Waits up to GB_NETBENCH_POLL_MS for events; EINTR counts as a quiet wake-up. */
static gboolean gb_netbench_poll(struct pollfd *fds, guint n, GError **error)
{
	if (poll(fds, n, GB_NETBENCH_POLL_MS) < 0 && errno != EINTR) {
		g_set_error(error, GB_ERROR, GB_ERROR_IO, "poll failed: %s", g_strerror(errno));
		return FALSE;
	}
	return TRUE;
}

int gb_netbench_listen(const char *address, guint port, int backlog, guint *bound_port,
                       GError **error)
{
	struct sockaddr_storage ss;
	socklen_t len = 0;
	int one = 1;
	int fd;

	if (!gb_netbench_sockaddr(address, port, &ss, &len, error))
		return -1;
	fd = gb_netbench_socket(ss.ss_family, error);
	if (fd < 0)
		return -1;
	(void)setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&ss, len) < 0 || listen(fd, backlog) < 0) {
		g_set_error(error, GB_ERROR, GB_ERROR_IO, "cannot listen on %s port %u: %s",
		            address, port, g_strerror(errno));
		close(fd);
		return -1;
	}
	len = sizeof(ss);
	if (bound_port != NULL) {
		*bound_port = port;
		if (getsockname(fd, (struct sockaddr *)&ss, &len) < 0)
			return fd;
		if (ss.ss_family == AF_INET)
			*bound_port = ntohs(((struct sockaddr_in *)&ss)->sin_port);
		else if (ss.ss_family == AF_INET6)
			*bound_port = ntohs(((struct sockaddr_in6 *)&ss)->sin6_port);
	}
	return fd;
}

static GError *gb_netbench_setup_timeout(GbNetbenchEnd *end, const char *what, guint timeout_s,
                                         const char *timeout_name, const char *problem_kind)
{
	g_autofree char *limit = timeout_name != NULL
	                             ? g_strdup_printf("%s (%u s)", timeout_name, timeout_s)
	                             : g_strdup_printf("%u s", timeout_s);

	return g_error_new(GB_ERROR, GB_ERROR_TIMEOUT,
	                   "%s within %s: %u of %u streams started%s%s%s", what, limit,
	                   gb_netbench_end_count_ready(end), end->n_streams,
	                   end->last_problem != NULL ? "; last " : "",
	                   end->last_problem != NULL ? problem_kind : "",
	                   end->last_problem != NULL ? end->last_problem : "");
}

static gboolean gb_netbench_stream_fail(const GbNetbenchStream *s, const char *what, int err,
                                        GError **error)
{
	g_set_error(error, GB_ERROR, GB_ERROR_IO, "stream %u of %s: %s: %s", s->index,
	            gb_netbench_direction_to_string(s->dir), what,
	            err != 0 ? g_strerror(err) : "connection closed");
	return FALSE;
}

/* ---- the connecting side -------------------------------------------------------------- */

/*
 * One step of a connecting stream after poll said revents. FALSE with error
 * when the connection failed (the caller retries or gives up).
 */
static gboolean gb_netbench_connect_step(GbNetbenchEnd *end, GbNetbenchStream *s, short revents,
                                         GError **error)
{
	if (s->state == GB_NETBENCH_STREAM_CONNECTING) {
		g_autofree char *what = NULL;
		int err = 0;
		socklen_t len = sizeof(err);
		GbNetbenchHeader hdr = {
			.direction = s->dir,
			.index = s->index,
			.streams = end->params.streams,
			.seconds = end->params.seconds,
			.omit = end->params.omit,
		};

		if (getsockopt(s->fd, SOL_SOCKET, SO_ERROR, &err, &len) < 0)
			err = errno;
		if (err == EINPROGRESS)
			return TRUE;
		if (err != 0) {
			what = g_strdup_printf("cannot connect to the %s at %s", end->peer,
			                       end->where);
			return gb_netbench_stream_fail(s, what, err, error);
		}
		gb_netbench_header_build(&hdr, s->hdr);
		s->hdr_len = 0;
		s->state = GB_NETBENCH_STREAM_HEADER;
	}
	if (s->state == GB_NETBENCH_STREAM_HEADER) {
		ssize_t n = send(s->fd, s->hdr + s->hdr_len, GB_NETBENCH_HEADER_LEN - s->hdr_len,
		                 MSG_NOSIGNAL | MSG_DONTWAIT);
		g_autofree char *what = NULL;

		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			return TRUE;
		if (n < 0) {
			what = g_strdup_printf("cannot send the header to the %s at %s", end->peer,
			                       end->where);
			return gb_netbench_stream_fail(s, what, errno, error);
		}
		s->hdr_len += (gsize)n;
		if (s->hdr_len == GB_NETBENCH_HEADER_LEN)
			s->state = GB_NETBENCH_STREAM_WAIT_GO;
		return TRUE;
	}
	if (s->state == GB_NETBENCH_STREAM_WAIT_GO &&
	    (revents & (POLLIN | POLLHUP | POLLERR)) != 0) {
		guint8 go = 0;
		ssize_t n = recv(s->fd, &go, 1, MSG_DONTWAIT);

		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			return TRUE;
		if (n == 1 && go == GB_NETBENCH_GO) {
			s->state = GB_NETBENCH_STREAM_READY;
			return TRUE;
		}
		g_set_error(error, GB_ERROR, GB_ERROR_IO,
		            "stream %u of %s: the %s at %s did not start it (%s); did it reject "
		            "the header?",
		            s->index, gb_netbench_direction_to_string(s->dir), end->peer,
		            end->where,
		            n == 0  ? "connection closed"
		            : n < 0 ? g_strerror(errno)
		                    : "unexpected byte");
		return FALSE;
	}
	return TRUE;
}

/* A failed connection: the error, or with retry_ms a new attempt later. */
static gboolean gb_netbench_connect_failed(GbNetbenchEnd *end, GbNetbenchStream *s, guint retry_ms,
                                           GError *failure, GError **error)
{
	if (retry_ms == 0) {
		g_propagate_error(error, failure);
		return FALSE;
	}
	gb_netbench_end_set_problem(end, failure->message);
	g_error_free(failure);
	gb_netbench_stream_close(s);
	s->state = GB_NETBENCH_STREAM_IDLE;
	s->hdr_len = 0;
	s->retry_at = gb_netbench_now_ns() + (gint64)retry_ms * GB_NETBENCH_NS_PER_MS;
	return TRUE;
}

gboolean gb_netbench_end_connect(GbNetbenchEnd *end, const char *address, guint port,
                                 guint timeout_s, const char *timeout_name, guint retry_ms,
                                 GError **error)
{
	g_autofree struct pollfd *fds = g_new0(struct pollfd, MAX(end->n_streams, 1));
	struct sockaddr_storage ss;
	socklen_t len = 0;
	gint64 deadline = gb_netbench_now_ns() + (gint64)timeout_s * GB_NETBENCH_NS_PER_S;

	if (!gb_netbench_sockaddr(address, port, &ss, &len, error))
		return FALSE;
	gb_netbench_end_start_setup(end, address, port);
	while (gb_netbench_end_count_ready(end) < end->n_streams) {
		gint64 now = gb_netbench_now_ns();

		if (!end->hooks.check_cancel(end->hooks.data, error))
			return FALSE;
		if (now > deadline) {
			g_autofree char *what =
			    g_strdup_printf("the %s at %s did not accept and start all %u streams",
			                    end->peer, end->where, end->n_streams);

			g_propagate_error(error,
			                  gb_netbench_setup_timeout(end, what, timeout_s,
			                                            timeout_name, "problem: "));
			return FALSE;
		}
		for (guint i = 0; i < end->n_streams; i++) {
			GbNetbenchStream *s = &end->streams[i];

			if (s->state != GB_NETBENCH_STREAM_IDLE || s->retry_at > now)
				continue;
			s->fd = gb_netbench_socket(ss.ss_family, error);
			if (s->fd < 0)
				return FALSE;
			s->state = GB_NETBENCH_STREAM_CONNECTING;
			if (connect(s->fd, (struct sockaddr *)&ss, len) < 0 &&
			    errno != EINPROGRESS) {
				g_autofree char *what = g_strdup_printf(
				    "cannot connect to the %s at %s", end->peer, end->where);
				GError *failure = NULL;

				gb_netbench_stream_fail(s, what, errno, &failure);
				if (!gb_netbench_connect_failed(end, s, retry_ms, failure, error))
					return FALSE;
			}
		}
		for (guint i = 0; i < end->n_streams; i++) {
			GbNetbenchStream *s = &end->streams[i];

			fds[i].fd = s->state == GB_NETBENCH_STREAM_IDLE ||
			                    s->state == GB_NETBENCH_STREAM_READY
			                ? -1
			                : s->fd;
			fds[i].events = s->state == GB_NETBENCH_STREAM_WAIT_GO ? POLLIN : POLLOUT;
			fds[i].revents = 0;
		}
		if (!gb_netbench_poll(fds, end->n_streams, error))
			return FALSE;
		for (guint i = 0; i < end->n_streams; i++) {
			GError *failure = NULL;

			if (fds[i].revents == 0 ||
			    gb_netbench_connect_step(end, &end->streams[i], fds[i].revents,
			                             &failure))
				continue;
			if (!gb_netbench_connect_failed(end, &end->streams[i], retry_ms, failure,
			                                error))
				return FALSE;
		}
	}
	return TRUE;
}

/* ---- the accepting side --------------------------------------------------------------- */

typedef struct {
	int fd;
	guint8 hdr[GB_NETBENCH_HEADER_LEN];
	gsize len;
} GbNetbenchPending;

static void gb_netbench_pending_free(gpointer data)
{
	GbNetbenchPending *p = data;

	if (p->fd >= 0)
		close(p->fd);
	g_free(p);
}

/* A complete header: the connection takes its stream's slot, or is dropped. */
static void gb_netbench_pending_complete(GbNetbenchEnd *end, GbNetbenchPending *p)
{
	g_autoptr(GError) error_local = NULL;
	g_autofree char *why = NULL;
	GbNetbenchHeader hdr = { 0 };
	GbNetbenchStream *s;
	guint slot;

	if (!gb_netbench_header_parse(p->hdr, p->len, &hdr, &error_local) ||
	    !gb_netbench_header_match(&hdr, &end->params, end->peer, end->self, &error_local)) {
		gb_netbench_end_set_problem(end, error_local->message);
		return;
	}
	/* host-to-guest streams first, then guest-to-host (gb_netbench_end_init) */
	slot = hdr.direction == GB_NETBENCH_DIR_G2H && end->params.h2g
	           ? end->params.streams + hdr.index
	           : hdr.index;
	s = &end->streams[slot];
	if (s->state != GB_NETBENCH_STREAM_IDLE) {
		why = g_strdup_printf("stream %u of %s connected twice", hdr.index,
		                      gb_netbench_direction_to_string(hdr.direction));
		gb_netbench_end_set_problem(end, why);
		return;
	}
	s->fd = p->fd;
	p->fd = -1;
	s->state = GB_NETBENCH_STREAM_READY;
}

gboolean gb_netbench_end_accept(GbNetbenchEnd *end, int listen_fd, const char *address, guint port,
                                guint timeout_s, const char *timeout_name, GError **error)
{
	g_autoptr(GPtrArray) pending = g_ptr_array_new_with_free_func(gb_netbench_pending_free);
	struct pollfd fds[GB_NETBENCH_MAX_PENDING + 1];
	gint64 deadline = gb_netbench_now_ns() + (gint64)timeout_s * GB_NETBENCH_NS_PER_S;

	gb_netbench_end_start_setup(end, address, port);
	while (gb_netbench_end_count_ready(end) < end->n_streams) {
		if (!end->hooks.check_cancel(end->hooks.data, error))
			return FALSE;
		if (gb_netbench_now_ns() > deadline) {
			g_autofree char *what =
			    g_strdup_printf("the %s did not connect all %u streams to %s",
			                    end->peer, end->n_streams, end->where);

			g_propagate_error(error,
			                  gb_netbench_setup_timeout(end, what, timeout_s,
			                                            timeout_name, "rejected: "));
			return FALSE;
		}
		/* a full pending list leaves further connections in the backlog */
		fds[0].fd = pending->len < GB_NETBENCH_MAX_PENDING ? listen_fd : -1;
		fds[0].events = POLLIN;
		fds[0].revents = 0;
		for (guint i = 0; i < pending->len; i++) {
			GbNetbenchPending *p = g_ptr_array_index(pending, i);

			fds[i + 1].fd = p->fd;
			fds[i + 1].events = POLLIN;
			fds[i + 1].revents = 0;
		}
		if (!gb_netbench_poll(fds, pending->len + 1, error))
			return FALSE;
		/* pending connections first: indexes into fds follow the array before it grows */
		for (guint i = pending->len; i > 0; i--) {
			GbNetbenchPending *p = g_ptr_array_index(pending, i - 1);
			ssize_t n;

			if (fds[i].revents == 0)
				continue;
			n = recv(p->fd, p->hdr + p->len, GB_NETBENCH_HEADER_LEN - p->len,
			         MSG_DONTWAIT);
			if (n < 0 && (errno == EAGAIN || errno == EINTR))
				continue;
			if (n <= 0) {
				g_autofree char *why =
				    g_strdup_printf("a connection closed before its header: %s",
				                    n < 0 ? g_strerror(errno) : "end of stream");

				gb_netbench_end_set_problem(end, why);
				g_ptr_array_remove_index(pending, i - 1);
				continue;
			}
			p->len += (gsize)n;
			if (p->len == GB_NETBENCH_HEADER_LEN) {
				gb_netbench_pending_complete(end, p);
				g_ptr_array_remove_index(pending, i - 1);
			}
		}
		if (fds[0].revents != 0) {
			int fd = accept4(listen_fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);

			if (fd >= 0) {
				GbNetbenchPending *p = g_new0(GbNetbenchPending, 1);

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
		GbNetbenchStream *s = &end->streams[i];
		guint8 go = GB_NETBENCH_GO;

		if (send(s->fd, &go, 1, MSG_NOSIGNAL | MSG_DONTWAIT) != 1)
			return gb_netbench_stream_fail(s, "cannot start it", errno, error);
	}
	return TRUE;
}

/* ---- the transfer --------------------------------------------------------------------- */

/* This end receives: read until EOF, then send the report. */
static gboolean gb_netbench_step_receiver(GbNetbenchEnd *end, GbNetbenchStream *s, guint8 *buf,
                                          GError **error)
{
	if (s->state == GB_NETBENCH_STREAM_RUN) {
		for (guint k = 0; k < GB_NETBENCH_BURST; k++) {
			ssize_t n = recv(s->fd, buf, GB_NETBENCH_CHUNK, MSG_DONTWAIT);
			gint64 now;

			if (n < 0 && (errno == EAGAIN || errno == EINTR))
				return TRUE;
			if (n < 0)
				return gb_netbench_stream_fail(s, "receiving failed", errno, error);
			now = gb_netbench_now_ns();
			if (n == 0) {
				if (now <= end->omit_end) {
					g_set_error(error, GB_ERROR, GB_ERROR_IO,
					            "stream %u of %s ended during the omitted "
					            "warm-up",
					            s->index,
					            gb_netbench_direction_to_string(s->dir));
					return FALSE;
				}
				s->result.bytes = s->counted;
				s->result.ns = (guint64)(now - end->omit_end);
				gb_netbench_report_build(&s->result, s->report);
				s->report_len = 0;
				s->state = GB_NETBENCH_STREAM_REPORT;
				break;
			}
			s->bytes += (guint64)n;
			if (now > end->omit_end)
				s->counted += (guint64)n;
			if (end->hooks.moved != NULL)
				end->hooks.moved(end->hooks.data, s->dir, now, (guint64)n);
		}
	}
	if (s->state == GB_NETBENCH_STREAM_REPORT) {
		ssize_t n =
		    send(s->fd, s->report + s->report_len, GB_NETBENCH_REPORT_LEN - s->report_len,
		         MSG_NOSIGNAL | MSG_DONTWAIT);

		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			return TRUE;
		if (n < 0)
			return gb_netbench_stream_fail(s, "sending the report failed", errno,
			                               error);
		s->report_len += (gsize)n;
		if (s->report_len == GB_NETBENCH_REPORT_LEN) {
			gb_netbench_stream_close(s);
			s->state = GB_NETBENCH_STREAM_DONE;
		}
	}
	return TRUE;
}

/* This end sends: write until the end, half-close, then read the peer's report. */
static gboolean gb_netbench_step_sender(GbNetbenchEnd *end, GbNetbenchStream *s, const guint8 *buf,
                                        GError **error)
{
	if (s->state == GB_NETBENCH_STREAM_RUN) {
		for (guint k = 0; k < GB_NETBENCH_BURST; k++) {
			gint64 now = gb_netbench_now_ns();
			ssize_t n;

			if (now >= end->send_end) {
				if (shutdown(s->fd, SHUT_WR) < 0)
					return gb_netbench_stream_fail(s, "shutdown failed", errno,
					                               error);
				s->state = GB_NETBENCH_STREAM_REPORT;
				s->report_len = 0;
				break;
			}
			n = send(s->fd, buf + s->chunk_off, GB_NETBENCH_CHUNK - s->chunk_off,
			         MSG_NOSIGNAL | MSG_DONTWAIT);
			if (n < 0 && (errno == EAGAIN || errno == EINTR))
				return TRUE;
			if (n < 0)
				return gb_netbench_stream_fail(s, "sending failed", errno, error);
			s->bytes += (guint64)n;
			s->chunk_off = (s->chunk_off + (gsize)n) % GB_NETBENCH_CHUNK;
			if (end->hooks.moved != NULL)
				end->hooks.moved(end->hooks.data, s->dir, now, (guint64)n);
		}
		return TRUE;
	}
	if (s->state == GB_NETBENCH_STREAM_REPORT) {
		ssize_t n = recv(s->fd, s->report + s->report_len,
		                 GB_NETBENCH_REPORT_LEN - s->report_len, MSG_DONTWAIT);

		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			return TRUE;
		if (n <= 0) {
			g_autofree char *what =
			    g_strdup_printf("reading the %s's report failed", end->peer);

			return gb_netbench_stream_fail(s, what, n < 0 ? errno : 0, error);
		}
		s->report_len += (gsize)n;
		if (s->report_len < GB_NETBENCH_REPORT_LEN)
			return TRUE;
		if (!gb_netbench_report_parse(s->report, s->report_len, end->peer, &s->result,
		                              error) ||
		    !gb_netbench_report_check(&s->result, end->peer, s->bytes, end->params.omit,
		                              end->params.seconds, error)) {
			g_prefix_error(error, "stream %u of %s: ", s->index,
			               gb_netbench_direction_to_string(s->dir));
			return FALSE;
		}
		gb_netbench_stream_close(s);
		s->state = GB_NETBENCH_STREAM_DONE;
	}
	return TRUE;
}

gboolean gb_netbench_end_transfer(GbNetbenchEnd *end, GError **error)
{
	/* each end its own data, so that neither sees its own bytes come back */
	g_autoptr(GbNetbenchBuffer) buf =
	    gb_netbench_buffer_new(GB_NETBENCH_CHUNK, end->host ? 0x67626e68u : 0x67626e74u);
	g_autofree struct pollfd *fds = g_new0(struct pollfd, MAX(end->n_streams, 1));
	gint64 deadline;

	end->t0 = gb_netbench_now_ns();
	end->omit_end = end->t0 + (gint64)end->params.omit * GB_NETBENCH_NS_PER_S;
	end->send_end = end->omit_end + (gint64)end->params.seconds * GB_NETBENCH_NS_PER_S;
	deadline = end->send_end + GB_NETBENCH_GRACE_S * GB_NETBENCH_NS_PER_S;
	for (guint i = 0; i < end->n_streams; i++) {
		GbNetbenchStream *s = &end->streams[i];

		s->state = GB_NETBENCH_STREAM_RUN;
		s->bytes = 0;
		s->counted = 0;
		s->chunk_off = 0;
		s->report_len = 0;
		s->result = (GbNetbenchReport){ 0 };
		gb_netbench_stream_started(s->fd);
	}
	for (;;) {
		gint64 now = gb_netbench_now_ns();
		guint active = 0;

		if (!end->hooks.check_cancel(end->hooks.data, error))
			return FALSE;
		if (now > deadline) {
			g_set_error(error, GB_ERROR, GB_ERROR_TIMEOUT,
			            "the %s did not finish the transfer within %d s of the agreed "
			            "end",
			            end->peer, GB_NETBENCH_GRACE_S);
			return FALSE;
		}
		if (end->hooks.tick != NULL)
			end->hooks.tick(end->hooks.data, now);
		for (guint i = 0; i < end->n_streams; i++) {
			GbNetbenchStream *s = &end->streams[i];

			fds[i].fd = s->state == GB_NETBENCH_STREAM_DONE ? -1 : s->fd;
			fds[i].revents = 0;
			if (s->state == GB_NETBENCH_STREAM_RUN)
				fds[i].events = s->sender ? POLLOUT : POLLIN;
			else
				fds[i].events = s->sender ? POLLIN : POLLOUT;
			active += s->state == GB_NETBENCH_STREAM_DONE ? 0 : 1;
		}
		if (active == 0)
			break;
		if (!gb_netbench_poll(fds, end->n_streams, error))
			return FALSE;
		now = gb_netbench_now_ns();
		for (guint i = 0; i < end->n_streams; i++) {
			GbNetbenchStream *s = &end->streams[i];
			gboolean ok;

			/* a sender must notice the end even while its socket stays full */
			if (fds[i].revents == 0 &&
			    !(s->sender && s->state == GB_NETBENCH_STREAM_RUN &&
			      now >= end->send_end))
				continue;
			if (s->sender)
				ok = gb_netbench_step_sender(end, s, buf, error);
			else
				ok = gb_netbench_step_receiver(end, s, buf, error);
			if (!ok)
				return FALSE;
		}
	}
	return TRUE;
}
