/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <glib.h>

#include "gb-netbench.h"

G_BEGIN_DECLS

/*
 * One end of a GBNET1 run (protocol/BENCH-disk-net.md, "The stream
 * protocol"): the streams' state machine, the setup (connect or accept,
 * header, go byte), and the transfer with the receiver's report. The agent
 * and the host CLI both run their end with it; each keeps only its own
 * plumbing (the agent's job progress and /proc samples, the CLI's worker
 * thread and runs) behind GbNetbenchHooks. Blocking: it polls its sockets
 * itself, at least every GB_NETBENCH_POLL_MS, so call it from a thread of its
 * own, never from a main loop.
 */

/* Size of each write, and of each read. */
#define GB_NETBENCH_CHUNK (128 * 1024)
/* Poll interval: the bound on how late a cancel or the sender's end is noticed. */
#define GB_NETBENCH_POLL_MS 20
/* Reads or writes per stream per wake-up, so one fast stream cannot starve the others. */
#define GB_NETBENCH_BURST 16
/* Accepted connections whose header has not arrived yet; more wait in the backlog. */
#define GB_NETBENCH_MAX_PENDING 64

typedef enum {
	GB_NETBENCH_STREAM_IDLE,       /* no socket: to be connected, or a slot to be accepted */
	GB_NETBENCH_STREAM_CONNECTING, /* non-blocking connect() in flight */
	GB_NETBENCH_STREAM_HEADER,     /* connecting side: writing the header */
	GB_NETBENCH_STREAM_WAIT_GO,    /* connecting side: header sent, waiting for the go byte */
	GB_NETBENCH_STREAM_READY,      /* set up, waiting for the others */
	GB_NETBENCH_STREAM_RUN,        /* moving data */
	GB_NETBENCH_STREAM_REPORT,     /* receiver: sending the report; sender: reading it */
	GB_NETBENCH_STREAM_DONE,
} GbNetbenchStreamState;

typedef struct {
	int fd;
	GbNetbenchDirection dir;
	guint index;     /* per direction */
	gboolean sender; /* this end writes the payload of this stream */
	GbNetbenchStreamState state;
	gint64 retry_at; /* connecting side, IDLE: when to connect again */
	guint8 hdr[GB_NETBENCH_HEADER_LEN];
	gsize hdr_len;
	gsize chunk_off;
	guint64 bytes;   /* payload this end moved */
	guint64 counted; /* receiver: bytes read after the omitted warm-up */
	guint8 report[GB_NETBENCH_REPORT_LEN];
	gsize report_len;
	GbNetbenchReport result; /* the receiver's figures: ours, or the peer's checked report */
} GbNetbenchStream;

typedef struct {
	/* Each wake-up of every phase: FALSE with error set stops the end. Required. */
	gboolean (*check_cancel)(gpointer data, GError **error);
	/* Each wake-up of the transfer. Optional. */
	void (*tick)(gpointer data, gint64 now);
	/* n payload bytes moved on a stream of dir at now (after a read, before a write). Optional.
	 */
	void (*moved)(gpointer data, GbNetbenchDirection dir, gint64 now, guint64 n);
	gpointer data;
} GbNetbenchHooks;

typedef struct {
	GbNetbenchParams params;
	gboolean host;    /* this end is the host's: it sends host-to-guest */
	const char *self; /* "host" or "agent", for errors */
	const char *peer;
	/* params.streams per direction asked for: host-to-guest first, then guest-to-host */
	GbNetbenchStream *streams;
	guint n_streams;
	GbNetbenchHooks hooks;
	char *where;        /* "ADDR port PORT" of the last setup, for errors */
	char *last_problem; /* why the last connection was dropped or retried, for the timeout */
	/* the transfer's clock, set when it starts (CLOCK_MONOTONIC ns) */
	gint64 t0;
	gint64 omit_end;
	gint64 send_end;
} GbNetbenchEnd;

/* params->streams 1..GB_NETBENCH_MAX_STREAMS and a direction; hooks are copied. */
void gb_netbench_end_init(GbNetbenchEnd *end, const GbNetbenchParams *params, gboolean host,
                          const GbNetbenchHooks *hooks);
/* Closes the streams and frees what init allocated. */
void gb_netbench_end_clear(GbNetbenchEnd *end);
/* Closes every stream's socket (between runs). */
void gb_netbench_end_close(GbNetbenchEnd *end);
/* Streams in state READY. */
guint gb_netbench_end_count_ready(const GbNetbenchEnd *end);

/*
 * A non-blocking, close-on-exec listening socket on a numeric address
 * (SO_REUSEADDR: a rerun must not fail on a port in TIME_WAIT). Port 0 picks
 * one; *bound_port (may be NULL) gets the port bound. -1 with error set.
 */
int gb_netbench_listen(const char *address, guint port, int backlog, guint *bound_port,
                       GError **error);

/*
 * The connecting side's setup: connects every stream to address:port, sends
 * its header and waits for the go byte. With retry_ms 0 the first failure is
 * the error; else a refused, dropped or refused-header connection is tried
 * again after retry_ms (the peer may not listen yet). GB_ERROR_TIMEOUT after
 * timeout_s, naming the limit as timeout_name ("accept_timeout", may be NULL)
 * and the last problem.
 */
gboolean gb_netbench_end_connect(GbNetbenchEnd *end, const char *address, guint port,
                                 guint timeout_s, const char *timeout_name, guint retry_ms,
                                 GError **error);
/*
 * The accepting side's setup on listen_fd (address and port only name it in
 * errors): accepts connections, files each with a valid header in its
 * stream's slot and drops the others, then sends the go byte on every stream.
 * GB_ERROR_TIMEOUT after timeout_s as for gb_netbench_end_connect().
 */
gboolean gb_netbench_end_accept(GbNetbenchEnd *end, int listen_fd, const char *address, guint port,
                                guint timeout_s, const char *timeout_name, GError **error);
/*
 * The transfer on streams set up by connect or accept: senders write for
 * omit + seconds and read the peer's report, receivers read to EOF and send
 * theirs. Sets TCP_QUICKACK on each stream first. GB_ERROR_TIMEOUT when the
 * peer has not finished GB_NETBENCH_GRACE_S after the agreed end. Each
 * stream's result holds the receiver's figures afterwards.
 */
gboolean gb_netbench_end_transfer(GbNetbenchEnd *end, GError **error);

G_END_DECLS
