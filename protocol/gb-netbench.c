/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "gb-error.h"
#include "gb-netbench.h"

static void gb_netbench_put_be(guint8 *p, guint64 v, guint bytes)
{
	for (guint i = 0; i < bytes; i++)
		p[i] = (guint8)(v >> (8 * (bytes - 1 - i)));
}

static guint64 gb_netbench_get_be(const guint8 *p, guint bytes)
{
	guint64 v = 0;

	for (guint i = 0; i < bytes; i++)
		v = (v << 8) | p[i];
	return v;
}

const char *gb_netbench_direction_to_string(GbNetbenchDirection direction)
{
	return direction == GB_NETBENCH_DIR_H2G ? "host-to-guest" : "guest-to-host";
}

gint64 gb_netbench_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (gint64)ts.tv_sec * GB_NETBENCH_NS_PER_S + ts.tv_nsec;
}

void gb_netbench_stream_started(int fd)
{
	int one = 1;

	(void)setsockopt(fd, IPPROTO_TCP, TCP_QUICKACK, &one, sizeof(one));
}

GbNetbenchBuffer *gb_netbench_buffer_new(gsize len, guint32 seed)
{
	g_autoptr(GRand) rand = g_rand_new_with_seed(seed);
	long page = sysconf(_SC_PAGESIZE);
	void *mem = NULL;

	if (posix_memalign(&mem, page > 0 ? (gsize)page : 4096, MAX(len, 1)) != 0)
		g_error("%s: failed to allocate %" G_GSIZE_FORMAT " bytes", G_STRLOC, len);
	for (gsize i = 0; i < len; i += 4) {
		guint32 v = g_rand_int(rand);

		memcpy((guint8 *)mem + i, &v, MIN(4, len - i));
	}
	return mem;
}

void gb_netbench_buffer_free(GbNetbenchBuffer *buf)
{
	free(buf);
}

void gb_netbench_header_build(const GbNetbenchHeader *hdr, guint8 out[GB_NETBENCH_HEADER_LEN])
{
	memcpy(out, GB_NETBENCH_MAGIC, GB_NETBENCH_MAGIC_LEN);
	out[6] = (guint8)hdr->direction;
	out[7] = (guint8)hdr->index;
	gb_netbench_put_be(out + 8, hdr->streams, 2);
	gb_netbench_put_be(out + 10, hdr->seconds, 4);
	gb_netbench_put_be(out + 14, hdr->omit, 2);
}

gboolean gb_netbench_header_parse(const guint8 *buf, gsize len, GbNetbenchHeader *hdr,
                                  GError **error)
{
	guint streams;
	guint seconds;

	if (len != GB_NETBENCH_HEADER_LEN) {
		g_set_error(error, GB_ERROR, GB_ERROR_PARSE,
		            "a net stream header is %d bytes, not %" G_GSIZE_FORMAT,
		            GB_NETBENCH_HEADER_LEN, len);
		return FALSE;
	}
	if (memcmp(buf, GB_NETBENCH_MAGIC, GB_NETBENCH_MAGIC_LEN) != 0) {
		g_set_error_literal(error, GB_ERROR, GB_ERROR_PARSE,
		                    "not a guestbench net stream (bad magic)");
		return FALSE;
	}
	if (buf[6] != GB_NETBENCH_DIR_H2G && buf[6] != GB_NETBENCH_DIR_G2H) {
		g_set_error(error, GB_ERROR, GB_ERROR_PARSE, "unknown direction %u", buf[6]);
		return FALSE;
	}
	streams = (guint)gb_netbench_get_be(buf + 8, 2);
	seconds = (guint)gb_netbench_get_be(buf + 10, 4);
	if (streams < 1 || streams > GB_NETBENCH_MAX_STREAMS) {
		g_set_error(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT,
		            "streams %u is out of range (1..%d)", streams, GB_NETBENCH_MAX_STREAMS);
		return FALSE;
	}
	if (seconds < 1) {
		g_set_error_literal(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT,
		                    "seconds 0 is out of range (at least 1)");
		return FALSE;
	}
	if (buf[7] >= streams) {
		g_set_error(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT,
		            "stream index %u is not below streams %u", buf[7], streams);
		return FALSE;
	}
	hdr->direction = (GbNetbenchDirection)buf[6];
	hdr->index = buf[7];
	hdr->streams = streams;
	hdr->seconds = seconds;
	hdr->omit = (guint)gb_netbench_get_be(buf + 14, 2);
	return TRUE;
}

gboolean gb_netbench_header_match(const GbNetbenchHeader *hdr, const GbNetbenchParams *params,
                                  const char *peer, const char *self, GError **error)
{
	if ((hdr->direction == GB_NETBENCH_DIR_H2G && !params->h2g) ||
	    (hdr->direction == GB_NETBENCH_DIR_G2H && !params->g2h)) {
		g_set_error(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT,
		            "direction %s was not asked for",
		            gb_netbench_direction_to_string(hdr->direction));
		return FALSE;
	}
	if (hdr->streams != params->streams || hdr->seconds != params->seconds ||
	    hdr->omit != params->omit) {
		g_set_error(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT,
		            "parameters differ: %s has streams %u, seconds %u, omit %u; %s has %u, "
		            "%u, %u",
		            peer, hdr->streams, hdr->seconds, hdr->omit, self, params->streams,
		            params->seconds, params->omit);
		return FALSE;
	}
	return TRUE;
}

void gb_netbench_report_build(const GbNetbenchReport *report, guint8 out[GB_NETBENCH_REPORT_LEN])
{
	memcpy(out, GB_NETBENCH_REPORT_MAGIC, GB_NETBENCH_MAGIC_LEN);
	out[6] = 0;
	out[7] = 0;
	gb_netbench_put_be(out + 8, report->bytes, 8);
	gb_netbench_put_be(out + 16, report->ns, 8);
}

gboolean gb_netbench_report_parse(const guint8 *buf, gsize len, const char *peer,
                                  GbNetbenchReport *report, GError **error)
{
	if (len != GB_NETBENCH_REPORT_LEN) {
		g_set_error(error, GB_ERROR, GB_ERROR_PARSE,
		            "the %s's report is %" G_GSIZE_FORMAT " bytes, not %d", peer, len,
		            GB_NETBENCH_REPORT_LEN);
		return FALSE;
	}
	if (memcmp(buf, GB_NETBENCH_REPORT_MAGIC, GB_NETBENCH_MAGIC_LEN) != 0) {
		g_set_error(error, GB_ERROR, GB_ERROR_PARSE, "the %s's report has a bad magic",
		            peer);
		return FALSE;
	}
	report->bytes = gb_netbench_get_be(buf + 8, 8);
	report->ns = gb_netbench_get_be(buf + 16, 8);
	return TRUE;
}

gboolean gb_netbench_report_check(const GbNetbenchReport *report, const char *peer,
                                  guint64 bytes_sent, guint omit, guint seconds, GError **error)
{
	guint64 max_ns =
	    ((guint64)omit + seconds + GB_NETBENCH_GRACE_S) * (guint64)GB_NETBENCH_NS_PER_S;

	/* the receiver cannot have counted more than was sent, nor taken forever */
	if (report->bytes > bytes_sent || report->ns == 0 || report->ns > max_ns) {
		g_set_error(error, GB_ERROR, GB_ERROR_PARSE,
		            "the %s's report is implausible (%" G_GUINT64_FORMAT
		            " bytes in %" G_GUINT64_FORMAT " ns; %" G_GUINT64_FORMAT
		            " bytes were sent)",
		            peer, report->bytes, report->ns, bytes_sent);
		return FALSE;
	}
	return TRUE;
}
