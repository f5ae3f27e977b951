/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/*
 * GBNET1, the stream protocol of the net benchmark (protocol/BENCH-disk-net.md,
 * "The stream protocol"): the 16-byte header the connecting side sends,
 * the go byte the accepting side answers, and the receiver's 24-byte GBRES1
 * report. The agent and the host CLI both speak it, so it is encoded and
 * checked here only, and run on sockets by gb-netbench-stream.h. All
 * integers big-endian.
 */

#define GB_NETBENCH_MAGIC "GBNET1"
#define GB_NETBENCH_REPORT_MAGIC "GBRES1"
#define GB_NETBENCH_MAGIC_LEN 6
#define GB_NETBENCH_HEADER_LEN 16
#define GB_NETBENCH_REPORT_LEN 24
/* The accepting side sends this one byte on every stream once all have a valid header. */
#define GB_NETBENCH_GO 'G'
/* Seconds either end waits past the agreed end (omit + seconds) before giving up. */
#define GB_NETBENCH_GRACE_S 10
/* The stream index is one byte on the wire. */
#define GB_NETBENCH_MAX_STREAMS 255
#define GB_NETBENCH_NS_PER_S G_GINT64_CONSTANT(1000000000)

/* Byte 6 of the header; also 1 + the per-direction array index both sides use. */
typedef enum {
	GB_NETBENCH_DIR_H2G = 1, /* host-to-guest: the host sends, the agent receives */
	GB_NETBENCH_DIR_G2H = 2, /* guest-to-host: the agent sends, the host receives */
} GbNetbenchDirection;

typedef struct {
	GbNetbenchDirection direction;
	guint index;   /* 0 .. streams-1, per direction */
	guint streams; /* per direction, 1 .. GB_NETBENCH_MAX_STREAMS */
	guint seconds; /* >= 1 */
	guint omit;    /* warm-up seconds not counted, 0 .. G_MAXUINT16 */
} GbNetbenchHeader;

/* What the accepting side agreed to run; a header must match it. */
typedef struct {
	gboolean h2g;
	gboolean g2h;
	guint streams;
	guint seconds;
	guint omit;
} GbNetbenchParams;

typedef struct {
	guint64 bytes; /* counted by the receiver after the omitted warm-up */
	guint64 ns;    /* the receiver's time from the end of the warm-up to EOF */
} GbNetbenchReport;

/* "host-to-guest" or "guest-to-host". */
const char *gb_netbench_direction_to_string(GbNetbenchDirection direction);

/* CLOCK_MONOTONIC in nanoseconds: the clock both ends time the transfer with. */
gint64 gb_netbench_now_ns(void);

/*
 * The transfer buffer of either end: len bytes of random data from seed (a
 * compressing or deduplicating path must not flatter the result), page
 * aligned. malloc puts a 128 KiB block 16 bytes into its first page; with
 * such a buffer the receiver's kernel copy (_copy_to_iter) was 32 % of all
 * perf samples of a one-stream loopback run here (AMD EPYC), 10.6 % with
 * this one, 8 % for iperf3, whose buffer is page aligned. Free with
 * gb_netbench_buffer_free(). Never NULL (aborts like g_malloc).
 */
typedef guint8 GbNetbenchBuffer;
GbNetbenchBuffer *gb_netbench_buffer_new(gsize len, guint32 seed);
void gb_netbench_buffer_free(GbNetbenchBuffer *buf);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(GbNetbenchBuffer, gb_netbench_buffer_free)

/*
 * Called by either end on each stream socket when the transfer starts.
 * The go byte is data sent right after data was received, so Linux marks
 * the accepting side's connection interactive ("pingpong") and delays its
 * ACKs. For the receiver of a bulk stream that is wrong: with BBR on
 * loopback (kernel 6.18) a one-stream run read about 20 % less than the
 * same stream without a reply on it, until the receiver left that mode.
 * TCP_QUICKACK=1 ends it. Best effort: a socket that refuses the option
 * only runs as it did before.
 */
void gb_netbench_stream_started(int fd);

/* Encodes hdr (fields are truncated to their wire width; parse refuses what is out of range). */
void gb_netbench_header_build(const GbNetbenchHeader *hdr, guint8 out[GB_NETBENCH_HEADER_LEN]);
/*
 * Decodes and checks what any valid header satisfies: len is exactly
 * GB_NETBENCH_HEADER_LEN, the magic, a known direction, streams and seconds in
 * range and index below streams. GB_ERROR_PARSE for a malformed header,
 * GB_ERROR_INVALID_ARGUMENT for a value out of range.
 */
gboolean gb_netbench_header_parse(const guint8 *buf, gsize len, GbNetbenchHeader *hdr,
                                  GError **error);
/*
 * The accepting side's check of a parsed header against its own job: a
 * direction it asked for, the same streams, seconds and omit. peer and self
 * name the two ends in the error ("host", "agent"). GB_ERROR_INVALID_ARGUMENT.
 */
gboolean gb_netbench_header_match(const GbNetbenchHeader *hdr, const GbNetbenchParams *params,
                                  const char *peer, const char *self, GError **error);

void gb_netbench_report_build(const GbNetbenchReport *report, guint8 out[GB_NETBENCH_REPORT_LEN]);
/*
 * Decodes a report from peer ("host", "agent": named in the error): len is
 * exactly GB_NETBENCH_REPORT_LEN and the magic is right, else GB_ERROR_PARSE.
 */
gboolean gb_netbench_report_parse(const guint8 *buf, gsize len, const char *peer,
                                  GbNetbenchReport *report, GError **error);
/*
 * The sender's check of the receiver's report: no more bytes than were sent,
 * a time above zero and not beyond omit + seconds + GB_NETBENCH_GRACE_S.
 * GB_ERROR_PARSE when implausible.
 */
gboolean gb_netbench_report_check(const GbNetbenchReport *report, const char *peer,
                                  guint64 bytes_sent, guint omit, guint seconds, GError **error);

G_END_DECLS
