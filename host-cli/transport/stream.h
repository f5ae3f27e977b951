/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <glib.h>

#include "guestbench-protocol.h"

#include "transport/address.h"

G_BEGIN_DECLS

/*
 * A non-blocking stream socket on a GMainContext, cut into messages by a
 * GbFramer: what the agent channel and the QMP monitor have in common. It
 * connects (a unix socket whose backlog is full is tried again), queues
 * what is written until the socket takes it, and hands every complete
 * message (or framing error) to its owner. It has no protocol and no
 * timeouts of its own: the owner says what a failure means and when to give
 * up. The owner may free the stream from inside any of its callbacks.
 */
typedef struct _CliStream CliStream;

typedef enum {
	CLI_STREAM_FAILED_SOCKET,  /* socket() failed; errsv says why */
	CLI_STREAM_FAILED_CONNECT, /* connect() failed; errsv says why */
	CLI_STREAM_FAILED_READ,    /* recv() failed (ECONNRESET: the peer reset it) */
	CLI_STREAM_FAILED_WRITE,   /* send() failed (EPIPE, ECONNRESET: the peer went away) */
	CLI_STREAM_FAILED_CLOSED,  /* end of file: the peer closed it; errsv is 0 */
	/* libvirt could not open the channel: cli_stream_get_open_error() says why; errsv is 0 */
	CLI_STREAM_FAILED_OPEN,
} CliStreamFailure;

typedef struct {
	/* connected: writes go out from now on (they were queued before) */
	void (*connected)(gpointer user_data);
	/* n bytes arrived, before they are framed (for the owner's counts); may be NULL */
	void (*received)(gsize n, gpointer user_data);
	/* one message or framing error, as GbFramerFunc: return FALSE to stop reading */
	GbFramerFunc message;
	/*
	 * after each read was framed: the bytes of the unfinished message held now
	 * (gb_framer_get_buffered(), 0 between messages and while one is skipped),
	 * so that the owner can charge them; may be NULL
	 */
	void (*buffered)(gsize n, gpointer user_data);
	/* the stream stopped; nothing is read or written any more */
	void (*failed)(CliStreamFailure what, int errsv, gpointer user_data);
} CliStreamFuncs;

/*
 * Starts connecting to address: CLI_ADDRESS_UNIX or CLI_ADDRESS_VSOCK
 * (path/cid/port), or CLI_ADDRESS_LIBVIRT (the domain's guestbench channel,
 * opened by libvirt: virt.h).
 */
CliStream *cli_stream_connect(const CliAddress *address, GMainContext *context,
                              gsize max_message_size, const CliStreamFuncs *funcs,
                              gpointer user_data);
/* Queues data and sends what the socket takes now; NULL (a stream already gone) is ignored. */
void cli_stream_write(CliStream *stream, const void *data, gsize len);
/* After CLI_STREAM_FAILED_OPEN: libvirt's reason. */
const char *cli_stream_get_open_error(const CliStream *stream);
/*
 * Reads and frames what has arrived and not been read yet (up to one message
 * at the size limit in force), now rather than at the next main-loop turn:
 * before its owner declares a timeout. Callbacks run as from the main loop.
 */
void cli_stream_read_pending(CliStream *stream);
/* The size limit for messages from now on (see gb_framer_set_max_size()); NULL is ignored. */
void cli_stream_set_max_message_size(CliStream *stream, gsize max_message_size);
/* The process behind a connected unix socket (SO_PEERCRED), 0 when unknown. */
gint64 cli_stream_get_peer_pid(const CliStream *stream);
/* Closes the socket; no callback fires afterwards. NULL is ignored. */
void cli_stream_free(CliStream *stream);

G_END_DECLS
