/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"

#include <errno.h>
#include <glib-unix.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>
#include <linux/vm_sockets.h>

#include "transport/reply-budget.h"
#include "transport/stream.h"
#include "transport/virt.h"

/* A unix socket with a full backlog answers EAGAIN instead of queueing the connect. */
#define CLI_STREAM_CONNECT_RETRY_MS 50
#define CLI_STREAM_READ_SIZE 65536
/*
 * A message may carry one value per CLI_REPLY_BYTES_PER_VALUE bytes of its size limit. Real
 * replies take more: the agent's facts about 16 bytes a value, a bench result
 * 10 to 20 (a net interval {"second", "bytes", "omitted"} is 45 bytes for 4),
 * QMP's CPU model properties about 20. A parsed value costs about 100 bytes
 * in memory, so a reply's tree stays within about 12 times its size limit,
 * where 1 MiB of "0," would cost 50 MiB.
 */

struct _CliStream {
	CliAddress *address;
	GMainContext *context;
	const CliStreamFuncs *funcs;
	gpointer user_data;
	int fd;
	gboolean connected;
	gboolean stopped; /* failed or freed: no more I/O, no more callbacks */
	gboolean freed;   /* freed while dispatching: the dispatcher frees */
	guint dispatching;
	GSource *in_source;
	GSource *out_source;
	GSource *retry_source;
	GbFramer *framer;
	GByteArray *outbuf;
	gint64 peer_pid;    /* SO_PEERCRED of a unix socket, 0 when unknown */
	CliVirtOp *virt_op; /* CLI_ADDRESS_LIBVIRT: the channel being opened */
	char *open_error;   /* CLI_STREAM_FAILED_OPEN: why */
};

static void cli_stream_connect_now(CliStream *stream);
static void cli_stream_flush(CliStream *stream);

static void cli_stream_destroy_source(GSource **source)
{
	if (*source == NULL)
		return;
	g_source_destroy(*source);
	g_source_unref(*source);
	*source = NULL;
}

static void cli_stream_stop(CliStream *stream)
{
	stream->stopped = TRUE;
	cli_stream_destroy_source(&stream->in_source);
	cli_stream_destroy_source(&stream->out_source);
	cli_stream_destroy_source(&stream->retry_source);
	cli_virt_op_cancel(stream->virt_op);
	stream->virt_op = NULL;
	if (stream->fd >= 0) {
		close(stream->fd);
		stream->fd = -1;
	}
}

static void cli_stream_release(CliStream *stream)
{
	gb_framer_free(stream->framer);
	g_byte_array_unref(stream->outbuf);
	cli_address_free(stream->address);
	g_main_context_unref(stream->context);
	g_free(stream->open_error);
	g_free(stream);
}

void cli_stream_free(CliStream *stream)
{
	if (stream == NULL)
		return;
	cli_stream_stop(stream);
	if (stream->dispatching > 0) {
		stream->freed = TRUE;
		return;
	}
	cli_stream_release(stream);
}

/* Callbacks run between these two: the owner may free the stream meanwhile. */
static void cli_stream_enter(CliStream *stream)
{
	stream->dispatching++;
}

/* FALSE when the stream is gone (then it must not be touched again). */
static gboolean cli_stream_leave(CliStream *stream)
{
	if (--stream->dispatching > 0 || !stream->freed)
		return TRUE;
	cli_stream_release(stream);
	return FALSE;
}

static void cli_stream_fail(CliStream *stream, CliStreamFailure what, int errsv)
{
	if (stream->stopped)
		return;
	cli_stream_stop(stream);
	cli_stream_enter(stream);
	stream->funcs->failed(what, errsv, stream->user_data);
	cli_stream_leave(stream);
}

/*
 * One recv() of up to CLI_STREAM_READ_SIZE bytes, framed: bytes handled, 0 when
 * nothing was there or the stream stopped. Call between enter and leave.
 */
static gsize cli_stream_read_chunk(CliStream *stream)
{
	guint8 buf[CLI_STREAM_READ_SIZE];
	gssize n;

	if (stream->stopped)
		return 0;
	n = recv(stream->fd, buf, sizeof(buf), MSG_DONTWAIT);
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return 0;
	/* the source goes with the stop in cli_stream_fail() */
	if (n < 0) {
		cli_stream_fail(stream, CLI_STREAM_FAILED_READ, errno);
		return 0;
	}
	if (n == 0) {
		cli_stream_fail(stream, CLI_STREAM_FAILED_CLOSED, 0);
		return 0;
	}
	if (stream->funcs->received != NULL)
		stream->funcs->received((gsize)n, stream->user_data);
	if (!stream->stopped)
		gb_framer_push(stream->framer, buf, (gsize)n, stream->funcs->message,
		               stream->user_data);
	if (!stream->stopped && stream->funcs->buffered != NULL)
		stream->funcs->buffered(gb_framer_get_buffered(stream->framer), stream->user_data);
	return (gsize)n;
}

/*
 * One chunk per main-loop iteration: every guest's socket gets its turn, and
 * what one guest costs per turn is bounded by a chunk plus at most the parse of
 * one message of the size limit in force.
 */
static gboolean cli_stream_in_cb(int fd, GIOCondition condition, gpointer user_data)
{
	CliStream *stream = user_data;

	cli_stream_enter(stream);
	cli_stream_read_chunk(stream);
	/* a stream stopped meanwhile has destroyed this source already */
	cli_stream_leave(stream);
	return G_SOURCE_CONTINUE;
}

void cli_stream_read_pending(CliStream *stream)
{
	gsize budget;
	gsize n;

	if (stream == NULL || !stream->connected || stream->stopped)
		return;
	/* enough to finish one message at the limit in force, not a peer that never stops */
	budget = gb_framer_get_max_size(stream->framer) + CLI_STREAM_READ_SIZE;
	cli_stream_enter(stream);
	do {
		n = cli_stream_read_chunk(stream);
		budget -= MIN(n, budget);
	} while (n > 0 && budget > 0 && !stream->stopped);
	cli_stream_leave(stream);
}

void cli_stream_set_max_message_size(CliStream *stream, gsize max_message_size)
{
	if (stream == NULL)
		return;
	gb_framer_set_max_size(stream->framer, max_message_size);
	gb_framer_set_max_values(stream->framer, gb_framer_get_max_size(stream->framer) /
	                                             CLI_REPLY_BYTES_PER_VALUE);
}

static gboolean cli_stream_out_cb(int fd, GIOCondition condition, gpointer user_data)
{
	cli_stream_flush(user_data);
	return G_SOURCE_CONTINUE;
}

static void cli_stream_watch_out(CliStream *stream, gboolean enable)
{
	if (!enable) {
		cli_stream_destroy_source(&stream->out_source);
		return;
	}
	if (stream->out_source != NULL)
		return;
	stream->out_source = g_unix_fd_source_new(stream->fd, G_IO_OUT);
	g_source_set_callback(stream->out_source, G_SOURCE_FUNC(cli_stream_out_cb), stream, NULL);
	g_source_attach(stream->out_source, stream->context);
}

static void cli_stream_flush(CliStream *stream)
{
	if (!stream->connected || stream->stopped)
		return;
	while (stream->outbuf->len > 0) {
		gssize n = send(stream->fd, stream->outbuf->data, stream->outbuf->len,
		                MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN) {
				cli_stream_watch_out(stream, TRUE);
				return;
			}
			cli_stream_fail(stream, CLI_STREAM_FAILED_WRITE, errno);
			return;
		}
		g_byte_array_remove_range(stream->outbuf, 0, (guint)n);
	}
	cli_stream_watch_out(stream, FALSE);
}

void cli_stream_write(CliStream *stream, const void *data, gsize len)
{
	if (stream == NULL || stream->stopped)
		return;
	g_byte_array_append(stream->outbuf, data, (guint)len);
	cli_stream_flush(stream);
}

static void cli_stream_connected(CliStream *stream)
{
	struct ucred cred = { 0 };
	socklen_t len = sizeof(cred);

	stream->connected = TRUE;
	/* a libvirt channel's socket pair has this very process at its other end */
	if (stream->address->kind == CLI_ADDRESS_UNIX &&
	    getsockopt(stream->fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) == 0 && cred.pid > 0)
		stream->peer_pid = cred.pid;
	stream->in_source = g_unix_fd_source_new(stream->fd, G_IO_IN | G_IO_HUP | G_IO_ERR);
	g_source_set_callback(stream->in_source, G_SOURCE_FUNC(cli_stream_in_cb), stream, NULL);
	g_source_attach(stream->in_source, stream->context);
	cli_stream_enter(stream);
	stream->funcs->connected(stream->user_data);
	if (cli_stream_leave(stream))
		cli_stream_flush(stream);
}

static gboolean cli_stream_connect_done_cb(int fd, GIOCondition condition, gpointer user_data)
{
	CliStream *stream = user_data;
	int err = 0;
	socklen_t len = sizeof(err);

	cli_stream_destroy_source(&stream->out_source);
	if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) < 0)
		err = errno;
	if (err != 0)
		cli_stream_fail(stream, CLI_STREAM_FAILED_CONNECT, err);
	else
		cli_stream_connected(stream);
	return G_SOURCE_REMOVE;
}

/* The first attempt, and each one after a full backlog. */
static gboolean cli_stream_retry_cb(gpointer user_data)
{
	CliStream *stream = user_data;

	cli_stream_destroy_source(&stream->retry_source);
	cli_stream_connect_now(stream);
	return G_SOURCE_REMOVE;
}

/* CLI_ADDRESS_LIBVIRT: libvirt opened the channel, or says why not. */
static void cli_stream_channel_cb(int fd, const GError *error, gpointer user_data)
{
	CliStream *stream = user_data;

	stream->virt_op = NULL;
	if (fd < 0) {
		stream->open_error = g_strdup(error->message);
		cli_stream_fail(stream, CLI_STREAM_FAILED_OPEN, 0);
		return;
	}
	stream->fd = fd;
	cli_stream_connected(stream);
}

static void cli_stream_connect_now(CliStream *stream)
{
	union {
		struct sockaddr sa;
		struct sockaddr_un un;
		struct sockaddr_vm vm;
	} addr;
	socklen_t addrlen;
	int family = stream->address->kind == CLI_ADDRESS_VSOCK ? AF_VSOCK : AF_UNIX;

	if (stream->address->kind == CLI_ADDRESS_LIBVIRT) {
		stream->virt_op = cli_virt_open_channel(
		    stream->address->uri, stream->address->domain, CLI_VIRT_CHANNEL,
		    stream->context, cli_stream_channel_cb, stream);
		return;
	}
	memset(&addr, 0, sizeof(addr));
	if (family == AF_VSOCK) {
		addr.vm.svm_family = AF_VSOCK;
		addr.vm.svm_cid = stream->address->cid;
		addr.vm.svm_port = stream->address->port;
		addrlen = sizeof(addr.vm);
	} else {
		/* the owner checked that the path fits */
		addr.un.sun_family = AF_UNIX;
		g_strlcpy(addr.un.sun_path, stream->address->path, sizeof(addr.un.sun_path));
		addrlen = sizeof(addr.un);
	}
	if (stream->fd < 0) {
		stream->fd = socket(family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
		if (stream->fd < 0) {
			cli_stream_fail(stream, CLI_STREAM_FAILED_SOCKET, errno);
			return;
		}
	}
	if (connect(stream->fd, &addr.sa, addrlen) == 0) {
		cli_stream_connected(stream);
		return;
	}
	if (errno == EINPROGRESS || errno == EINTR) {
		stream->out_source = g_unix_fd_source_new(stream->fd, G_IO_OUT);
		g_source_set_callback(stream->out_source, G_SOURCE_FUNC(cli_stream_connect_done_cb),
		                      stream, NULL);
		g_source_attach(stream->out_source, stream->context);
		return;
	}
	if (errno == EAGAIN && family == AF_UNIX) {
		stream->retry_source = g_timeout_source_new(CLI_STREAM_CONNECT_RETRY_MS);
		g_source_set_callback(stream->retry_source, cli_stream_retry_cb, stream, NULL);
		g_source_attach(stream->retry_source, stream->context);
		return;
	}
	cli_stream_fail(stream, CLI_STREAM_FAILED_CONNECT, errno);
}

CliStream *cli_stream_connect(const CliAddress *address, GMainContext *context,
                              gsize max_message_size, const CliStreamFuncs *funcs,
                              gpointer user_data)
{
	CliStream *stream = g_new0(CliStream, 1);

	stream->address = cli_address_copy(address);
	stream->context = g_main_context_ref(context);
	stream->funcs = funcs;
	stream->user_data = user_data;
	stream->fd = -1;
	stream->framer = gb_framer_new(max_message_size, GB_FRAMER_DEFAULT_MAX_DEPTH);
	cli_stream_set_max_message_size(stream, max_message_size);
	stream->outbuf = g_byte_array_new();
	/* from the main loop: no callback runs before the owner holds the stream */
	stream->retry_source = g_timeout_source_new(0);
	g_source_set_callback(stream->retry_source, cli_stream_retry_cb, stream, NULL);
	g_source_attach(stream->retry_source, stream->context);
	return stream;
}

const char *cli_stream_get_open_error(const CliStream *stream)
{
	return stream->open_error;
}

gint64 cli_stream_get_peer_pid(const CliStream *stream)
{
	return stream->peer_pid;
}
