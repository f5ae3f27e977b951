/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <glib-unix.h>
#include <glib/gstdio.h>

#include "endpoint.h"
#include "transport.h"

#define AGENT_TRANSPORT_READ_SIZE (64 * 1024)
/* Input resumes once the output queue has drained to this. */
#define AGENT_TRANSPORT_OUTPUT_LOW_WATER (AGENT_TRANSPORT_OUTPUT_LIMIT / 2)

struct _AgentTransport {
	AgentEndpoint *ep; /* its kind, path and the port or listening socket */
	AgentTransportHandler handler;
	AgentTransportClosedFunc closed;
	gpointer user_data;
	GbFramer *framer;

	/* unix-listen / vsock-listen */
	guint listen_watch;

	/* the current peer: a client socket, the port, or stdin/stdout */
	int in_fd;
	int out_fd;
	guint in_watch;
	guint out_watch;
	GByteArray *inbuf; /* read but not yet framed, kept while throttled */
	GByteArray *outq;
	gboolean throttled;
	gboolean eof;      /* stdio: stdin ended */
	gboolean finished; /* stdio: closed() was called */
	int stdin_flags;   /* stdio: restored on free */
	int stdout_flags;

	/* a client left (unix-listen, vsock-listen): for the session's idle timer */
	void (*client_gone)(gpointer user_data);

	/* virtio-serial */
	int sigio_fd;
	guint sigio_watch;
	gboolean host_connected;
};

static void agent_transport_pump(AgentTransport *t);

static void agent_transport_remove_source(guint *id)
{
	if (*id != 0) {
		g_source_remove(*id);
		*id = 0;
	}
}

static void agent_transport_close_fd(int *fd)
{
	if (*fd >= 0) {
		g_close(*fd, NULL);
		*fd = -1;
	}
}

static gboolean agent_transport_set_nonblock(int fd, int *old_flags, GError **error)
{
	int flags = fcntl(fd, F_GETFL);
	if (flags < 0 || fcntl(fd, F_SETFL, flags | O_NONBLOCK) < 0) {
		g_set_error(error, GB_ERROR, GB_ERROR_IO, "cannot make fd %d non-blocking: %s", fd,
		            g_strerror(errno));
		return FALSE;
	}
	if (old_flags != NULL)
		*old_flags = flags;
	return TRUE;
}

/* Forget the current exchange: partial input and unsent output belong to a peer that left. */
static void agent_transport_reset_stream(AgentTransport *t)
{
	gb_framer_reset(t->framer);
	g_byte_array_set_size(t->inbuf, 0);
	g_byte_array_set_size(t->outq, 0);
	t->throttled = FALSE;
	agent_transport_remove_source(&t->out_watch);
}

static void agent_transport_finish(AgentTransport *t, const GError *error)
{
	if (t->finished)
		return;
	t->finished = TRUE;
	agent_transport_remove_source(&t->in_watch);
	agent_transport_remove_source(&t->out_watch);
	if (t->closed != NULL)
		t->closed(error, t->user_data);
}

static gboolean agent_transport_in_cb(gint fd, GIOCondition cond, gpointer user_data);
static gboolean agent_transport_listen_cb(gint fd, GIOCondition cond, gpointer user_data);

static void agent_transport_watch_input(AgentTransport *t)
{
	if (t->in_watch != 0 || t->in_fd < 0 || t->throttled || t->eof || t->finished)
		return;
	t->in_watch =
	    g_unix_fd_add(t->in_fd, G_IO_IN | G_IO_HUP | G_IO_ERR, agent_transport_in_cb, t);
}

/*
 * virtio-serial without a host.
 *
 * While no host has the port open, poll() on it reports POLLHUP at once and
 * forever, so a G_IO_IN watch would spin (qemu-ga sleeps 100 ms per wake-up
 * instead, which is still 10 wake-ups a second). So on HUP we remove the
 * watch. To learn when a host attaches without polling, the port is opened
 * with O_ASYNC and F_SETOWN(getpid()): the virtio_console driver then sends
 * SIGIO when the host opens or closes its end (send_sigio_to_port() on
 * VIRTIO_CONSOLE_PORT_OPEN) and when data arrives. SIGIO is blocked in every
 * thread and read from a signalfd; on each one we poll() the port with a zero
 * timeout and re-add the watch once HUP has cleared. The same check runs
 * right after the watch is removed, so a host that attached in between is
 * not missed. Idle without a host thus means no wake-ups at all.
 */
static void agent_transport_virtio_check_host(AgentTransport *t)
{
	if (t->host_connected || t->in_fd < 0 || !agent_endpoint_host_connected(t->ep))
		return;
	g_debug("host attached to %s", t->ep->path);
	t->host_connected = TRUE;
	/* stale bytes of an earlier session are the host's to resync (0xFF) */
	agent_transport_reset_stream(t);
	agent_transport_watch_input(t);
}

static void agent_transport_virtio_host_gone(AgentTransport *t)
{
	if (t->host_connected)
		g_debug("host detached from %s", t->ep->path);
	t->host_connected = FALSE;
	agent_transport_remove_source(&t->in_watch);
	agent_transport_reset_stream(t);
	agent_transport_virtio_check_host(t);
}

static gboolean agent_transport_sigio_cb(gint fd, GIOCondition cond, gpointer user_data)
{
	AgentTransport *t = user_data;
	struct signalfd_siginfo info;

	/* drain: several SIGIOs may have been merged or queued */
	while (read(fd, &info, sizeof(info)) == sizeof(info))
		;
	agent_transport_virtio_check_host(t);
	return G_SOURCE_CONTINUE;
}

/* The peer left or its fd failed: what happens next depends on the transport. */
static void agent_transport_lost(AgentTransport *t, int errsv)
{
	switch (t->ep->kind) {
	case AGENT_ENDPOINT_VIRTIO_SERIAL:
		agent_transport_virtio_host_gone(t);
		break;
	case AGENT_ENDPOINT_UNIX_LISTEN:
	case AGENT_ENDPOINT_VSOCK_LISTEN:
		g_debug("client on %s went away%s%s", t->ep->path, errsv != 0 ? ": " : "",
		        errsv != 0 ? g_strerror(errsv) : "");
		agent_transport_remove_source(&t->in_watch);
		agent_transport_reset_stream(t);
		agent_transport_close_fd(&t->in_fd);
		t->out_fd = -1;
		if (t->client_gone != NULL)
			t->client_gone(t->user_data);
		/* one client at a time, like qemu-ga: now take the next one */
		if (t->listen_watch == 0)
			t->listen_watch =
			    g_unix_fd_add(t->ep->fd, G_IO_IN, agent_transport_listen_cb, t);
		break;
	case AGENT_ENDPOINT_STDIO: {
		g_autoptr(GError) error = NULL;
		if (errsv != 0)
			g_set_error(&error, GB_ERROR, GB_ERROR_IO, "stdio: %s", g_strerror(errsv));
		agent_transport_finish(t, error);
		break;
	}
	}
}

static gboolean agent_transport_framer_cb(const char *msg, gsize len, const GError *error,
                                          gpointer user_data)
{
	AgentTransport *t = user_data;
	g_autoptr(GString) reply = t->handler(msg, len, error, t->user_data);

	if (reply != NULL)
		g_byte_array_append(t->outq, (const guint8 *)reply->str, reply->len);
	if (t->outq->len > AGENT_TRANSPORT_OUTPUT_LIMIT) {
		/* stop reading until the peer takes its replies: memory stays bounded */
		t->throttled = TRUE;
		agent_transport_remove_source(&t->in_watch);
		return FALSE;
	}
	return TRUE;
}

static void agent_transport_process_input(AgentTransport *t)
{
	while (t->inbuf->len > 0 && !t->throttled) {
		gsize n = gb_framer_push(t->framer, t->inbuf->data, t->inbuf->len,
		                         agent_transport_framer_cb, t);
		if (n == 0 && !t->throttled)
			break;
		g_byte_array_remove_range(t->inbuf, 0, n);
	}
}

static gboolean agent_transport_out_cb(gint fd, GIOCondition cond, gpointer user_data)
{
	AgentTransport *t = user_data;

	if ((cond & (G_IO_HUP | G_IO_ERR)) && !(cond & G_IO_OUT)) {
		agent_transport_lost(t, 0);
		return G_SOURCE_CONTINUE;
	}
	agent_transport_pump(t);
	return G_SOURCE_CONTINUE;
}

/* Writes what the fd takes now; FALSE when the peer was lost. */
static gboolean agent_transport_flush(AgentTransport *t)
{
	while (t->outq->len > 0) {
		ssize_t n;
		if (t->ep->kind == AGENT_ENDPOINT_UNIX_LISTEN ||
		    t->ep->kind == AGENT_ENDPOINT_VSOCK_LISTEN)
			n = send(t->out_fd, t->outq->data, t->outq->len, MSG_NOSIGNAL);
		else
			n = write(t->out_fd, t->outq->data, t->outq->len);
		if (n > 0) {
			g_byte_array_remove_range(t->outq, 0, (guint)n);
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			/* never spin on EAGAIN: wait for the fd to become writable */
			if (t->out_watch == 0)
				t->out_watch =
				    g_unix_fd_add(t->out_fd, G_IO_OUT | G_IO_HUP | G_IO_ERR,
				                  agent_transport_out_cb, t);
			return TRUE;
		}
		agent_transport_lost(t, n < 0 ? errno : EPIPE);
		return FALSE;
	}
	agent_transport_remove_source(&t->out_watch);
	return TRUE;
}

static void agent_transport_pump(AgentTransport *t)
{
	for (;;) {
		if (t->out_fd < 0 || t->finished)
			return;
		if (!agent_transport_flush(t))
			return;
		if (!t->throttled || t->outq->len > AGENT_TRANSPORT_OUTPUT_LOW_WATER)
			break;
		t->throttled = FALSE;
		agent_transport_process_input(t);
	}
	agent_transport_watch_input(t);

	/* stdio: after EOF, answer a truncated last message, send everything, then stop */
	if (t->eof && t->inbuf->len == 0 && !t->throttled) {
		if (gb_framer_is_partial(t->framer)) {
			g_autoptr(GError) error = g_error_new_literal(
			    GB_ERROR, GB_ERROR_PARSE, "JSON parse error, unexpected end of input");
			gb_framer_reset(t->framer);
			agent_transport_framer_cb(NULL, 0, error, t);
			agent_transport_pump(t);
			return;
		}
		if (t->outq->len == 0)
			agent_transport_finish(t, NULL);
	}
}

static gboolean agent_transport_in_cb(gint fd, GIOCondition cond, gpointer user_data)
{
	AgentTransport *t = user_data;
	guint8 buf[AGENT_TRANSPORT_READ_SIZE];
	ssize_t n;

	do {
		n = read(fd, buf, sizeof(buf));
	} while (n < 0 && errno == EINTR);

	if (n > 0) {
		g_byte_array_append(t->inbuf, buf, (guint)n);
		agent_transport_process_input(t);
		agent_transport_pump(t);
		return G_SOURCE_CONTINUE;
	}
	if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
		/* a virtio port without host says HUP with nothing to read */
		if ((cond & (G_IO_HUP | G_IO_ERR)) && t->ep->kind == AGENT_ENDPOINT_VIRTIO_SERIAL)
			agent_transport_virtio_host_gone(t);
		return G_SOURCE_CONTINUE;
	}
	if (t->ep->kind == AGENT_ENDPOINT_STDIO && n == 0) {
		g_debug("end of input on stdin");
		t->eof = TRUE;
		agent_transport_remove_source(&t->in_watch);
		/* a trailing top-level scalar ends at whitespace: supply it */
		g_byte_array_append(t->inbuf, (const guint8 *)"\n", 1);
		agent_transport_process_input(t);
		agent_transport_pump(t);
		return G_SOURCE_CONTINUE;
	}
	/* EOF or an error (EIO from a hung-up tty, ECONNRESET, ...) */
	agent_transport_lost(t, n < 0 ? errno : 0);
	return G_SOURCE_CONTINUE;
}

static gboolean agent_transport_listen_cb(gint fd, GIOCondition cond, gpointer user_data)
{
	AgentTransport *t = user_data;
	int client = accept4(fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);

	if (client < 0) {
		if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR &&
		    errno != ECONNABORTED)
			g_warning("accept on %s failed: %s", t->ep->path, g_strerror(errno));
		return G_SOURCE_CONTINUE;
	}
	g_debug("client attached to %s", t->ep->path);
	/* one client at a time: the next waits in the backlog until this one leaves */
	t->listen_watch = 0;
	t->in_fd = client;
	t->out_fd = client;
	agent_transport_reset_stream(t);
	agent_transport_watch_input(t);
	return G_SOURCE_REMOVE;
}

/* see agent_transport_virtio_check_host() for why SIGIO */
static gboolean agent_transport_start_virtio(AgentTransport *t, GError **error)
{
	sigset_t set;

	t->in_fd = t->ep->fd;
	t->out_fd = t->ep->fd;
	agent_endpoint_block_sigio();
	sigemptyset(&set);
	sigaddset(&set, SIGIO);
	t->sigio_fd = signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
	if (t->sigio_fd < 0) {
		g_set_error(error, GB_ERROR, GB_ERROR_IO, "signalfd: %s", g_strerror(errno));
		return FALSE;
	}
	if (!agent_endpoint_own_sigio(t->ep, error))
		return FALSE;
	t->sigio_watch = g_unix_fd_add(t->sigio_fd, G_IO_IN, agent_transport_sigio_cb, t);
	agent_transport_virtio_check_host(t);
	if (!t->host_connected)
		g_message("waiting for the host to open %s", t->ep->path);
	return TRUE;
}

static AgentTransport *agent_transport_start(const AgentConfig *config, AgentEndpoint *ep_owned,
                                             AgentTransportHandler handler,
                                             AgentTransportClosedFunc closed, gpointer user_data,
                                             GError **error)
{
	g_autoptr(AgentTransport) t = g_new0(AgentTransport, 1);

	t->ep = ep_owned;
	t->handler = handler;
	t->closed = closed;
	t->user_data = user_data;
	t->framer = gb_framer_new(config->max_message_size, config->max_depth);
	t->inbuf = g_byte_array_new();
	t->outq = g_byte_array_new();
	t->in_fd = -1;
	t->out_fd = -1;
	t->sigio_fd = -1;
	t->stdin_flags = -1;
	t->stdout_flags = -1;

	switch (t->ep->kind) {
	case AGENT_ENDPOINT_VIRTIO_SERIAL:
		if (!agent_transport_start_virtio(t, error))
			return NULL;
		break;
	case AGENT_ENDPOINT_UNIX_LISTEN:
	case AGENT_ENDPOINT_VSOCK_LISTEN:
		t->listen_watch = g_unix_fd_add(t->ep->fd, G_IO_IN, agent_transport_listen_cb, t);
		g_debug("listening on %s", t->ep->path);
		break;
	case AGENT_ENDPOINT_STDIO:
		if (!agent_transport_set_nonblock(STDIN_FILENO, &t->stdin_flags, error) ||
		    !agent_transport_set_nonblock(STDOUT_FILENO, &t->stdout_flags, error))
			return NULL;
		t->in_fd = STDIN_FILENO;
		t->out_fd = STDOUT_FILENO;
		agent_transport_watch_input(t);
		break;
	}
	return g_steal_pointer(&t);
}

AgentTransport *agent_transport_new(const AgentConfig *config, AgentTransportHandler handler,
                                    AgentTransportClosedFunc closed, gpointer user_data,
                                    GError **error)
{
	AgentEndpoint *ep;

	g_return_val_if_fail(config != NULL, NULL);
	g_return_val_if_fail(handler != NULL, NULL);

	ep = agent_endpoint_open(config, error);
	if (ep == NULL)
		return NULL;
	if (ep->kind == AGENT_ENDPOINT_UNIX_LISTEN || ep->kind == AGENT_ENDPOINT_VSOCK_LISTEN)
		g_message("listening on %s", ep->path);
	return agent_transport_start(config, ep, handler, closed, user_data, error);
}

AgentTransport *agent_transport_adopt(const AgentConfig *config, int fd,
                                      AgentTransportHandler handler,
                                      AgentTransportClosedFunc closed, gpointer user_data,
                                      GError **error)
{
	AgentEndpoint *ep;

	g_return_val_if_fail(config != NULL, NULL);
	g_return_val_if_fail(handler != NULL, NULL);

	ep = agent_endpoint_adopt(config, fd, error);
	if (ep == NULL)
		return NULL;
	return agent_transport_start(config, ep, handler, closed, user_data, error);
}

void agent_transport_on_client_gone(AgentTransport *t, void (*func)(gpointer user_data))
{
	t->client_gone = func;
}

gboolean agent_transport_has_client(AgentTransport *t)
{
	return (t->ep->kind == AGENT_ENDPOINT_UNIX_LISTEN ||
	        t->ep->kind == AGENT_ENDPOINT_VSOCK_LISTEN) &&
	       t->in_fd >= 0;
}

void agent_transport_hold(AgentTransport *t)
{
	agent_transport_remove_source(&t->listen_watch);
	agent_transport_remove_source(&t->in_watch);
}

gboolean agent_transport_is_idle(AgentTransport *t)
{
	if (t->inbuf->len > 0 || t->outq->len > 0 || gb_framer_is_partial(t->framer))
		return FALSE;
	/* a connected client keeps its socket: only this process can answer it */
	if (t->ep->kind == AGENT_ENDPOINT_UNIX_LISTEN || t->ep->kind == AGENT_ENDPOINT_VSOCK_LISTEN)
		return t->in_fd < 0;
	return TRUE;
}

void agent_transport_free(AgentTransport *t)
{
	if (t == NULL)
		return;
	agent_transport_remove_source(&t->in_watch);
	agent_transport_remove_source(&t->out_watch);
	agent_transport_remove_source(&t->listen_watch);
	agent_transport_remove_source(&t->sigio_watch);
	if (t->ep != NULL && t->ep->kind == AGENT_ENDPOINT_STDIO) {
		/* stdin/stdout are shared with whoever started us: put their flags back */
		if (t->stdin_flags >= 0)
			fcntl(STDIN_FILENO, F_SETFL, t->stdin_flags);
		if (t->stdout_flags >= 0)
			fcntl(STDOUT_FILENO, F_SETFL, t->stdout_flags);
	} else if (t->ep != NULL && t->ep->kind != AGENT_ENDPOINT_VIRTIO_SERIAL) {
		/* a client socket; the port itself is the endpoint's */
		agent_transport_close_fd(&t->in_fd);
	}
	agent_transport_close_fd(&t->sigio_fd);
	agent_endpoint_free(t->ep);
	if (t->framer != NULL)
		gb_framer_free(t->framer);
	if (t->inbuf != NULL)
		g_byte_array_unref(t->inbuf);
	if (t->outq != NULL)
		g_byte_array_unref(t->outq);
	g_free(t);
}
