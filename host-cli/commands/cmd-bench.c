/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * "guestbench bench aes|disk|mem|net" and "guestbench results": one agent
 * job per guest (gb-bench-start, gb-bench-status polls, gb-bench-cancel on
 * Ctrl-C), the tables that put the numbers next to the field reports, csv and
 * prom, and the saved result documents.
 */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "guestbench-protocol.h"

#include "analysis/audit.h"
#include "commands/bench-net.h"
#include "commands/cmd-bench.h"
#include "render/output.h"
#include "analysis/results.h"

#define CLI_BENCH_POLL_MS 250
/* After the agent says done, how often to look whether the host end of net has closed. */
#define CLI_BENCH_NET_JOIN_MS 20
#define CLI_BENCH_MAX_LIST 64
/* The largest size anyone means: beyond it a typo is likelier than a wish. */
#define CLI_BENCH_MAX_SIZE (G_GUINT64_CONSTANT(1) << 50)

/* ---- options ------------------------------------------------------------------------- */

static struct {
	char *runs;
	char *cipher;
	char *sizes;
	char *seconds;
	char *threads;
	char *loop;
	char *dir;
	char *size;
	char *record;
	char *tests;
	char *pages;
	char *guest_listen;
	char *connect;
	char *host_listen;
	char *guest_connect;
	char *direction;
	char *streams;
	char *omit;
	gboolean no_direct;
	gboolean no_fsync;
	gboolean no_save;
} cli_bench_opts;

const GOptionEntry cli_bench_entries[] = {
	{ "runs", 0, 0, G_OPTION_ARG_STRING, &cli_bench_opts.runs,
	  "Repeat the benchmark N times (1..100); tables show mean ± stddev", "N" },
	{ "no-save", 0, 0, G_OPTION_ARG_NONE, &cli_bench_opts.no_save,
	  "Do not save the result document", NULL },
	{ "cipher", 0, 0, G_OPTION_ARG_STRING, &cli_bench_opts.cipher,
	  "aes: aes-128-gcm (default), aes-256-gcm or chacha20-poly1305", "CIPHER" },
	{ "sizes", 0, 0, G_OPTION_ARG_STRING, &cli_bench_opts.sizes,
	  "aes: block sizes (default 16,64,256,1k,8k,16k)", "LIST" },
	{ "seconds", 0, 0, G_OPTION_ARG_STRING, &cli_bench_opts.seconds,
	  "aes: seconds per block size (default 3); net: measured seconds (default 10)", "S" },
	{ "threads", 0, 0, G_OPTION_ARG_STRING, &cli_bench_opts.threads,
	  "aes: threads, rates summed like openssl speed -multi (default 1)", "N" },
	{ "loop", 0, 0, G_OPTION_ARG_STRING, &cli_bench_opts.loop,
	  "aes: aead (default, as openssl speed -evp) or stream", "LOOP" },
	{ "dir", 0, 0, G_OPTION_ARG_STRING, &cli_bench_opts.dir,
	  "disk: directory inside the agent's scratch-dir (default: scratch-dir)", "DIR" },
	{ "size", 0, 0, G_OPTION_ARG_STRING, &cli_bench_opts.size,
	  "disk: file size (default 100M); mem: buffer size (default 256M)", "SIZE" },
	{ "record", 0, 0, G_OPTION_ARG_STRING, &cli_bench_opts.record,
	  "disk: record sizes (default 4k,4M,16M)", "LIST" },
	{ "tests", 0, 0, G_OPTION_ARG_STRING, &cli_bench_opts.tests,
	  "disk: any of write,rewrite,read,reread,randread,randwrite (default all)", "LIST" },
	{ "no-direct", 0, 0, G_OPTION_ARG_NONE, &cli_bench_opts.no_direct,
	  "disk: buffered I/O instead of O_DIRECT", NULL },
	{ "no-fsync", 0, 0, G_OPTION_ARG_NONE, &cli_bench_opts.no_fsync,
	  "disk: no fsync at the end of the write tests", NULL },
	{ "pages", 0, 0, G_OPTION_ARG_STRING, &cli_bench_opts.pages,
	  "mem: any of 4k,thp,hugetlb (default all)", "LIST" },
	{ "guest-listen", 0, 0, G_OPTION_ARG_STRING, &cli_bench_opts.guest_listen,
	  "net: the agent listens on [ADDR:]PORT (default address 0.0.0.0)", "[ADDR:]PORT" },
	{ "connect", 0, 0, G_OPTION_ARG_STRING, &cli_bench_opts.connect,
	  "net: with --guest-listen, where the CLI reaches that port", "ADDR:PORT" },
	{ "host-listen", 0, 0, G_OPTION_ARG_STRING, &cli_bench_opts.host_listen,
	  "net: the CLI listens on ADDR:PORT and the agent connects", "ADDR:PORT" },
	{ "guest-connect", 0, 0, G_OPTION_ARG_STRING, &cli_bench_opts.guest_connect,
	  "net: with --host-listen, the address the agent connects to (default: the same)",
	  "ADDR:PORT" },
	{ "direction", 0, 0, G_OPTION_ARG_STRING, &cli_bench_opts.direction,
	  "net: host-to-guest (default), guest-to-host or both", "DIR" },
	{ "streams", 0, 0, G_OPTION_ARG_STRING, &cli_bench_opts.streams,
	  "net: parallel TCP streams per direction (default 1)", "N" },
	{ "omit", 0, 0, G_OPTION_ARG_STRING, &cli_bench_opts.omit,
	  "net: warm-up seconds not counted (default 1)", "S" },
	{ NULL },
};

/* What prepare() worked out; one benchmark per process. */
static struct {
	char *test;
	JsonObject *params; /* what every guest gets; net adds its per-guest address */
	gint64 runs;
	/* net */
	CliNetRole role;
	char *host_address; /* where the CLI connects to or listens on */
	guint host_port;
	char *agent_address; /* the agent's listen address or the address it connects to */
	guint agent_port;
	gboolean h2g;
	gboolean g2h;
	guint streams;
	guint seconds;
	guint omit;
} cli_bench;

/* ---- parsing helpers ----------------------------------------------------------------- */

gboolean cli_bench_parse_size(const char *text, guint64 max, guint64 *out, GError **error)
{
	guint64 value = 0;
	guint64 mult = 1;
	gsize len;
	gsize digits = 0;

	if (text == NULL || text[0] == '\0') {
		g_set_error_literal(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT, "an empty size");
		return FALSE;
	}
	len = strlen(text);
	switch (text[len - 1]) {
	case 'k':
	case 'K':
		mult = G_GUINT64_CONSTANT(1) << 10;
		len--;
		break;
	case 'm':
	case 'M':
		mult = G_GUINT64_CONSTANT(1) << 20;
		len--;
		break;
	case 'g':
	case 'G':
		mult = G_GUINT64_CONSTANT(1) << 30;
		len--;
		break;
	default:
		break;
	}
	for (gsize i = 0; i < len; i++) {
		if (!g_ascii_isdigit(text[i])) {
			g_set_error(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT,
			            "'%s' is not a size (digits with an optional k, M or G)", text);
			return FALSE;
		}
		if (value > (G_MAXUINT64 - 9) / 10) {
			g_set_error(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT,
			            "size '%s' is too large", text);
			return FALSE;
		}
		value = value * 10 + (guint64)(text[i] - '0');
		digits++;
	}
	if (digits == 0) {
		g_set_error(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT,
		            "'%s' is not a size (digits with an optional k, M or G)", text);
		return FALSE;
	}
	if (value == 0) {
		g_set_error(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT, "size '%s' is zero", text);
		return FALSE;
	}
	if (value > max / mult) {
		g_autofree char *max_text = cli_bench_format_size(max);
		g_set_error(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT,
		            "size '%s' is too large (at most %s)", text, max_text);
		return FALSE;
	}
	*out = value * mult;
	return TRUE;
}

gboolean cli_bench_parse_size_list(const char *text, guint64 max, GArray **out, GError **error)
{
	g_auto(GStrv) items = NULL;
	g_autoptr(GArray) sizes = g_array_new(FALSE, FALSE, sizeof(guint64));

	if (text == NULL || text[0] == '\0') {
		g_set_error_literal(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT, "an empty list");
		return FALSE;
	}
	items = g_strsplit(text, ",", -1);
	if (g_strv_length(items) > CLI_BENCH_MAX_LIST) {
		g_set_error(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT,
		            "more than %d sizes in '%s'", CLI_BENCH_MAX_LIST, text);
		return FALSE;
	}
	for (guint i = 0; items[i] != NULL; i++) {
		guint64 size = 0;

		if (!cli_bench_parse_size(items[i], max, &size, error)) {
			g_prefix_error(error, "in '%s': ", text);
			return FALSE;
		}
		g_array_append_val(sizes, size);
	}
	*out = g_steal_pointer(&sizes);
	return TRUE;
}

gboolean cli_bench_parse_word_list(const char *text, const char *const *allowed, GStrv *out,
                                   GError **error)
{
	g_auto(GStrv) items = NULL;

	if (text == NULL || text[0] == '\0') {
		g_set_error_literal(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT, "an empty list");
		return FALSE;
	}
	items = g_strsplit(text, ",", -1);
	for (guint i = 0; items[i] != NULL; i++) {
		if (!g_strv_contains(allowed, items[i])) {
			g_autofree char *names = g_strjoinv(", ", (char **)allowed);
			g_autofree char *shown = cli_escape_terminal(items[i]);
			g_set_error(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT,
			            "unknown item '%s' (expected %s)", shown, names);
			return FALSE;
		}
		for (guint j = 0; j < i; j++) {
			if (g_strcmp0(items[i], items[j]) == 0) {
				g_set_error(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT,
				            "'%s' is named twice", items[i]);
				return FALSE;
			}
		}
	}
	*out = g_steal_pointer(&items);
	return TRUE;
}

char *cli_bench_format_size(guint64 bytes)
{
	if (bytes >= (G_GUINT64_CONSTANT(1) << 30) && bytes % (G_GUINT64_CONSTANT(1) << 30) == 0)
		return g_strdup_printf("%" G_GUINT64_FORMAT "G", bytes >> 30);
	if (bytes >= (G_GUINT64_CONSTANT(1) << 20) && bytes % (G_GUINT64_CONSTANT(1) << 20) == 0)
		return g_strdup_printf("%" G_GUINT64_FORMAT "M", bytes >> 20);
	if (bytes >= 1024 && bytes % 1024 == 0)
		return g_strdup_printf("%" G_GUINT64_FORMAT "k", bytes >> 10);
	return g_strdup_printf("%" G_GUINT64_FORMAT, bytes);
}

/* A whole number in min..max, for --runs, --threads, --streams, --omit. */
static gboolean cli_bench_parse_uint(const char *option, const char *text, guint64 min, guint64 max,
                                     guint64 *out, GError **error)
{
	if (!g_ascii_string_to_unsigned(text, 10, min, max, out, NULL)) {
		g_set_error(
		    error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT,
		    "invalid value '%s' for --%s (expected a whole number from %" G_GUINT64_FORMAT
		    " to %" G_GUINT64_FORMAT ")",
		    text, option, min, max);
		return FALSE;
	}
	return TRUE;
}

static gboolean cli_bench_parse_seconds(const char *text, double min, double max, double *out,
                                        GError **error)
{
	char *end = NULL;
	double value;

	value = g_ascii_strtod(text, &end);
	if (text[0] == '\0' || g_ascii_isspace(text[0]) || end == NULL || *end != '\0' ||
	    !isfinite(value) || value < min || value > max) {
		g_set_error(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT,
		            "invalid value '%s' for --seconds (expected seconds from %g to %g)",
		            text, min, max);
		return FALSE;
	}
	*out = value;
	return TRUE;
}

static JsonArray *cli_bench_sizes_to_json(GArray *sizes)
{
	JsonArray *array = json_array_new();

	for (guint i = 0; i < sizes->len; i++)
		json_array_add_int_element(array, (gint64)g_array_index(sizes, guint64, i));
	return array;
}

static JsonArray *cli_bench_strv_to_json(GStrv strv)
{
	JsonArray *array = json_array_new();

	for (guint i = 0; strv[i] != NULL; i++)
		json_array_add_string_element(array, strv[i]);
	return array;
}

/* ---- prepare ------------------------------------------------------------------------- */

typedef struct {
	const char *name;
	const char *value; /* the option's value, NULL when not given */
	gboolean flag;
	const char *tests; /* the benchmarks it applies to, e.g. "aes net" */
} CliBenchOptionUse;

static gboolean cli_bench_check_applies(const char *test, GError **error)
{
	const CliBenchOptionUse uses[] = {
		{ "cipher", cli_bench_opts.cipher, FALSE, "aes" },
		{ "sizes", cli_bench_opts.sizes, FALSE, "aes" },
		{ "seconds", cli_bench_opts.seconds, FALSE, "aes net" },
		{ "threads", cli_bench_opts.threads, FALSE, "aes" },
		{ "loop", cli_bench_opts.loop, FALSE, "aes" },
		{ "dir", cli_bench_opts.dir, FALSE, "disk" },
		{ "size", cli_bench_opts.size, FALSE, "disk mem" },
		{ "record", cli_bench_opts.record, FALSE, "disk" },
		{ "tests", cli_bench_opts.tests, FALSE, "disk" },
		{ "no-direct", NULL, cli_bench_opts.no_direct, "disk" },
		{ "no-fsync", NULL, cli_bench_opts.no_fsync, "disk" },
		{ "pages", cli_bench_opts.pages, FALSE, "mem" },
		{ "guest-listen", cli_bench_opts.guest_listen, FALSE, "net" },
		{ "connect", cli_bench_opts.connect, FALSE, "net" },
		{ "host-listen", cli_bench_opts.host_listen, FALSE, "net" },
		{ "guest-connect", cli_bench_opts.guest_connect, FALSE, "net" },
		{ "direction", cli_bench_opts.direction, FALSE, "net" },
		{ "streams", cli_bench_opts.streams, FALSE, "net" },
		{ "omit", cli_bench_opts.omit, FALSE, "net" },
	};

	for (guint i = 0; i < G_N_ELEMENTS(uses); i++) {
		g_auto(GStrv) tests = NULL;

		if (uses[i].value == NULL && !uses[i].flag)
			continue;
		tests = g_strsplit(uses[i].tests, " ", -1);
		if (!g_strv_contains((const char *const *)tests, test)) {
			g_set_error(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT,
			            "--%s does not apply to 'bench %s' (only to bench %s)",
			            uses[i].name, test, uses[i].tests);
			return FALSE;
		}
	}
	return TRUE;
}

static gboolean cli_bench_prepare_aes(JsonObject *params, GError **error)
{
	static const char *const ciphers[] = { "aes-128-gcm", "aes-256-gcm", "chacha20-poly1305",
		                               NULL };
	static const char *const loops[] = { "aead", "stream", NULL };

	if (cli_bench_opts.cipher != NULL) {
		if (!g_strv_contains(ciphers, cli_bench_opts.cipher)) {
			g_set_error(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT,
			            "unknown cipher '%s' (expected aes-128-gcm, aes-256-gcm or "
			            "chacha20-poly1305)",
			            cli_bench_opts.cipher);
			return FALSE;
		}
		json_object_set_string_member(params, "cipher", cli_bench_opts.cipher);
	}
	if (cli_bench_opts.sizes != NULL) {
		g_autoptr(GArray) sizes = NULL;
		if (!cli_bench_parse_size_list(cli_bench_opts.sizes, 1024 * 1024, &sizes, error)) {
			g_prefix_error(error, "--sizes: ");
			return FALSE;
		}
		json_object_set_array_member(params, "sizes", cli_bench_sizes_to_json(sizes));
	}
	if (cli_bench_opts.seconds != NULL) {
		double seconds = 0;
		if (!cli_bench_parse_seconds(cli_bench_opts.seconds, 0.001, CLI_MAX_TIMEOUT,
		                             &seconds, error))
			return FALSE;
		json_object_set_double_member(params, "seconds", seconds);
	}
	if (cli_bench_opts.threads != NULL) {
		guint64 threads = 0;
		if (!cli_bench_parse_uint("threads", cli_bench_opts.threads, 1, 4096, &threads,
		                          error))
			return FALSE;
		json_object_set_int_member(params, "threads", (gint64)threads);
	}
	if (cli_bench_opts.loop != NULL) {
		if (!g_strv_contains(loops, cli_bench_opts.loop)) {
			g_set_error(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT,
			            "unknown loop '%s' (expected aead or stream)",
			            cli_bench_opts.loop);
			return FALSE;
		}
		json_object_set_string_member(params, "loop", cli_bench_opts.loop);
	}
	return TRUE;
}

static gboolean cli_bench_prepare_disk(JsonObject *params, GError **error)
{
	static const char *const tests[] = { "write",    "rewrite",   "read", "reread",
		                             "randread", "randwrite", NULL };

	if (cli_bench_opts.dir != NULL) {
		if (!g_path_is_absolute(cli_bench_opts.dir)) {
			g_set_error(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT,
			            "--dir must be an absolute path in the guest, not '%s'",
			            cli_bench_opts.dir);
			return FALSE;
		}
		json_object_set_string_member(params, "dir", cli_bench_opts.dir);
	}
	if (cli_bench_opts.size != NULL) {
		guint64 size = 0;
		if (!cli_bench_parse_size(cli_bench_opts.size, CLI_BENCH_MAX_SIZE, &size, error)) {
			g_prefix_error(error, "--size: ");
			return FALSE;
		}
		json_object_set_int_member(params, "size", (gint64)size);
	}
	if (cli_bench_opts.record != NULL) {
		g_autoptr(GArray) sizes = NULL;
		if (!cli_bench_parse_size_list(cli_bench_opts.record, CLI_BENCH_MAX_SIZE, &sizes,
		                               error)) {
			g_prefix_error(error, "--record: ");
			return FALSE;
		}
		json_object_set_array_member(params, "record_sizes",
		                             cli_bench_sizes_to_json(sizes));
	}
	if (cli_bench_opts.tests != NULL) {
		g_auto(GStrv) names = NULL;
		if (!cli_bench_parse_word_list(cli_bench_opts.tests, tests, &names, error)) {
			g_prefix_error(error, "--tests: ");
			return FALSE;
		}
		json_object_set_array_member(params, "tests", cli_bench_strv_to_json(names));
	}
	if (cli_bench_opts.no_direct)
		json_object_set_boolean_member(params, "direct", FALSE);
	if (cli_bench_opts.no_fsync)
		json_object_set_boolean_member(params, "fsync", FALSE);
	return TRUE;
}

static gboolean cli_bench_prepare_mem(JsonObject *params, GError **error)
{
	static const char *const pages[] = { "4k", "thp", "hugetlb", NULL };

	if (cli_bench_opts.size != NULL) {
		guint64 size = 0;
		if (!cli_bench_parse_size(cli_bench_opts.size, CLI_BENCH_MAX_SIZE, &size, error)) {
			g_prefix_error(error, "--size: ");
			return FALSE;
		}
		json_object_set_int_member(params, "size", (gint64)size);
	}
	if (cli_bench_opts.pages != NULL) {
		g_auto(GStrv) names = NULL;
		if (!cli_bench_parse_word_list(cli_bench_opts.pages, pages, &names, error)) {
			g_prefix_error(error, "--pages: ");
			return FALSE;
		}
		json_object_set_array_member(params, "pages", cli_bench_strv_to_json(names));
	}
	return TRUE;
}

static gboolean cli_bench_prepare_net(guint n_targets, JsonObject *params, GError **error)
{
	guint64 value = 0;
	guint max_port;

	if ((cli_bench_opts.guest_listen != NULL) == (cli_bench_opts.host_listen != NULL)) {
		g_set_error_literal(
		    error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT,
		    "bench net needs either --guest-listen [ADDR:]PORT with --connect "
		    "ADDR:PORT, or --host-listen ADDR:PORT");
		return FALSE;
	}
	if (cli_bench_opts.guest_listen != NULL) {
		cli_bench.role = CLI_NET_HOST_CONNECTS;
		if (cli_bench_opts.guest_connect != NULL) {
			g_set_error_literal(
			    error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT,
			    "--guest-connect goes with --host-listen, not --guest-listen");
			return FALSE;
		}
		if (cli_bench_opts.connect == NULL) {
			g_set_error_literal(
			    error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT,
			    "--guest-listen needs --connect ADDR:PORT: where the CLI "
			    "reaches the agent's port");
			return FALSE;
		}
		if (!cli_net_parse_host_port(cli_bench_opts.guest_listen, TRUE,
		                             &cli_bench.agent_address, &cli_bench.agent_port,
		                             error)) {
			g_prefix_error(error, "--guest-listen: ");
			return FALSE;
		}
		if (!cli_net_parse_host_port(cli_bench_opts.connect, FALSE, &cli_bench.host_address,
		                             &cli_bench.host_port, error)) {
			g_prefix_error(error, "--connect: ");
			return FALSE;
		}
		json_object_set_string_member(params, "mode", "listen");
	} else {
		cli_bench.role = CLI_NET_HOST_LISTENS;
		if (cli_bench_opts.connect != NULL) {
			g_set_error_literal(
			    error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT,
			    "--connect goes with --guest-listen, not --host-listen");
			return FALSE;
		}
		if (!cli_net_parse_host_port(cli_bench_opts.host_listen, FALSE,
		                             &cli_bench.host_address, &cli_bench.host_port,
		                             error)) {
			g_prefix_error(error, "--host-listen: ");
			return FALSE;
		}
		if (cli_bench_opts.guest_connect != NULL) {
			if (!cli_net_parse_host_port(cli_bench_opts.guest_connect, FALSE,
			                             &cli_bench.agent_address,
			                             &cli_bench.agent_port, error)) {
				g_prefix_error(error, "--guest-connect: ");
				return FALSE;
			}
		} else {
			g_autoptr(GInetAddress) inet =
			    g_inet_address_new_from_string(cli_bench.host_address);
			if (inet != NULL && g_inet_address_get_is_any(inet)) {
				g_set_error_literal(
				    error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT,
				    "--host-listen on a wildcard address needs --guest-connect "
				    "ADDR:PORT: the address the agent connects to");
				return FALSE;
			}
			cli_bench.agent_address = g_strdup(cli_bench.host_address);
			cli_bench.agent_port = cli_bench.host_port;
		}
		json_object_set_string_member(params, "mode", "connect");
	}
	/* guest N uses PORT + N: every port must stay a port for the last guest */
	max_port = MAX(cli_bench.host_port, cli_bench.agent_port);
	if (n_targets > 0 && max_port + n_targets - 1 > 65535) {
		g_set_error(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT,
		            "%u guests need ports up to %u, beyond 65535 (guest N uses PORT + N)",
		            n_targets, max_port + n_targets - 1);
		return FALSE;
	}
	cli_bench.h2g = TRUE;
	cli_bench.g2h = FALSE;
	if (cli_bench_opts.direction != NULL) {
		if (g_strcmp0(cli_bench_opts.direction, "host-to-guest") == 0) {
			cli_bench.h2g = TRUE;
		} else if (g_strcmp0(cli_bench_opts.direction, "guest-to-host") == 0) {
			cli_bench.h2g = FALSE;
			cli_bench.g2h = TRUE;
		} else if (g_strcmp0(cli_bench_opts.direction, "both") == 0) {
			cli_bench.g2h = TRUE;
		} else {
			g_set_error(
			    error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT,
			    "unknown direction '%s' (expected host-to-guest, guest-to-host or "
			    "both)",
			    cli_bench_opts.direction);
			return FALSE;
		}
		json_object_set_string_member(params, "direction", cli_bench_opts.direction);
	}
	cli_bench.streams = 1;
	if (cli_bench_opts.streams != NULL) {
		if (!cli_bench_parse_uint("streams", cli_bench_opts.streams, 1, 64, &value, error))
			return FALSE;
		cli_bench.streams = (guint)value;
		json_object_set_int_member(params, "streams", (gint64)value);
	}
	/* the defaults of protocol/BENCH-disk-net.md: both ends must agree on them */
	cli_bench.seconds = 10;
	if (cli_bench_opts.seconds != NULL) {
		if (!cli_bench_parse_uint("seconds", cli_bench_opts.seconds, 1, 86400, &value,
		                          error))
			return FALSE;
		cli_bench.seconds = (guint)value;
	}
	cli_bench.omit = 1;
	if (cli_bench_opts.omit != NULL) {
		if (!cli_bench_parse_uint("omit", cli_bench_opts.omit, 0, 60, &value, error))
			return FALSE;
		cli_bench.omit = (guint)value;
	}
	json_object_set_int_member(params, "seconds", cli_bench.seconds);
	json_object_set_int_member(params, "omit", cli_bench.omit);
	return TRUE;
}

gboolean cli_bench_prepare(CliApp *app, GPtrArray *args, GError **error)
{
	static const char *const tests[] = { "aes", "disk", "mem", "net", NULL };
	g_autoptr(JsonObject) params = json_object_new();
	const char *test;
	gboolean ok = FALSE;

	if (args->len == 0) {
		g_set_error_literal(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT,
		                    "bench needs a benchmark: aes, disk, mem or net");
		return FALSE;
	}
	test = g_ptr_array_index(args, 0);
	if (!g_strv_contains(tests, test)) {
		g_autofree char *shown = cli_escape_terminal(test);
		g_set_error(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT,
		            "unknown benchmark '%s' (expected aes, disk, mem or net)", shown);
		return FALSE;
	}
	if (!cli_bench_check_applies(test, error))
		return FALSE;
	cli_bench.runs = 1;
	if (cli_bench_opts.runs != NULL) {
		guint64 runs = 0;
		if (!cli_bench_parse_uint("runs", cli_bench_opts.runs, 1, 100, &runs, error))
			return FALSE;
		cli_bench.runs = (gint64)runs;
		json_object_set_int_member(params, "runs", cli_bench.runs);
	}
	if (g_strcmp0(test, "aes") == 0)
		ok = cli_bench_prepare_aes(params, error);
	else if (g_strcmp0(test, "disk") == 0)
		ok = cli_bench_prepare_disk(params, error);
	else if (g_strcmp0(test, "mem") == 0)
		ok = cli_bench_prepare_mem(params, error);
	else
		ok = cli_bench_prepare_net(args->len - 1, params, error);
	if (!ok)
		return FALSE;
	g_free(cli_bench.test);
	cli_bench.test = g_strdup(test);
	if (cli_bench.params != NULL)
		json_object_unref(cli_bench.params);
	cli_bench.params = g_steal_pointer(&params);
	g_ptr_array_remove_index(args, 0);
	return TRUE;
}

/* ---- one guest's job ----------------------------------------------------------------- */

typedef struct {
	CliGuest *guest;
	gint64 job; /* 0 until gb-bench-start answered */
	gint64 started_us;
	CliNetEnd *net;
	JsonNode *result; /* the agent's result, kept while the host end of net closes */
	gboolean cancel_sent;
	char *host_error; /* the host end of net failed: the job is being cancelled for it */
} CliBenchGuest;

static void cli_bench_guest_free(CliBenchGuest *bg)
{
	/* stops and joins the host end of net: no thread outlives its guest */
	cli_net_end_free(bg->net);
	if (bg->result != NULL)
		json_node_unref(bg->result);
	g_free(bg->host_error);
	g_free(bg);
}

static void cli_bench_finish_error(CliGuest *guest, GbError code, const char *fmt, ...)
    G_GNUC_PRINTF(3, 4);

static void cli_bench_finish_error(CliGuest *guest, GbError code, const char *fmt, ...)
{
	g_autoptr(GError) error = NULL;
	g_autofree char *msg = NULL;
	va_list ap;

	va_start(ap, fmt);
	msg = g_strdup_vprintf(fmt, ap);
	va_end(ap);
	error = g_error_new_literal(GB_ERROR, code, msg);
	cli_guest_finish(guest, NULL, error);
}

static JsonObject *cli_bench_job_args(gint64 job)
{
	JsonObject *args = json_object_new();

	json_object_set_int_member(args, "job", job);
	return args;
}

static void cli_bench_cancel_reply_cb(CliSession *session, JsonNode *ret, const GError *error,
                                      gpointer user_data)
{
	CliGuest *guest = user_data;
	CliBenchGuest *bg = cli_guest_get_data(guest);

	if (bg != NULL && bg->host_error != NULL) {
		cli_bench_finish_error(guest, GB_ERROR_FAILED, "host end of bench net: %s",
		                       bg->host_error);
		return;
	}
	/* a job that finished just before the cancel arrived was still not wanted */
	cli_bench_finish_error(guest, GB_ERROR_FAILED, "cancelled");
}

static void cli_bench_send_cancel(CliGuest *guest, CliSession *session)
{
	CliBenchGuest *bg = cli_guest_get_data(guest);
	g_autoptr(JsonObject) args = NULL;

	if (bg == NULL || bg->job == 0 || bg->cancel_sent)
		return;
	bg->cancel_sent = TRUE;
	args = cli_bench_job_args(bg->job);
	cli_session_call(session, "gb-bench-cancel", args, cli_bench_cancel_reply_cb, guest);
}

void cli_bench_cancel(CliGuest *guest, CliSession *session)
{
	CliBenchGuest *bg = cli_guest_get_data(guest);

	if (bg != NULL && bg->net != NULL)
		cli_net_end_stop(bg->net);
	/* without a job id yet, the start reply sends the cancel; through qemu-ga that
	 * reply only comes when the job is over, so the one-shot agent gets SIGTERM */
	if (bg != NULL && bg->job == 0)
		cli_session_interrupt(session);
	cli_bench_send_cancel(guest, session);
}

/* "aes: 1024 bytes, ETA 12 s" (the runner adds the percentage). */
static char *cli_bench_progress_text(CliBenchGuest *bg, double progress, const char *phase)
{
	double elapsed = (g_get_monotonic_time() - bg->started_us) / 1e6;
	GString *text = g_string_new(cli_bench.test);

	if (phase != NULL && phase[0] != '\0')
		g_string_append_printf(text, ": %s", phase);
	/* the rate so far is the best guess for the rest; too early, it is noise */
	if (progress >= 0.02 && progress < 1.0 && elapsed > 0.5) {
		double eta = elapsed * (1.0 - progress) / progress;
		if (eta >= 60)
			g_string_append_printf(text, ", ETA %.0f min %02.0f s", floor(eta / 60),
			                       fmod(eta, 60));
		else
			g_string_append_printf(text, ", ETA %.0f s", ceil(eta));
	}
	return g_string_free(text, FALSE);
}

static void cli_bench_poll_status(CliBenchGuest *bg);

/* The agent is done; for net, wait for the host end to close before taking the result. */
static gboolean cli_bench_complete_cb(gpointer user_data)
{
	CliBenchGuest *bg = user_data;
	CliGuest *guest = bg->guest;
	g_autoptr(JsonNode) result = NULL;

	if (bg->net != NULL) {
		g_autoptr(GError) error_net = NULL;
		JsonObject *obj = json_node_get_object(bg->result);

		if (!cli_net_end_check(bg->net, &error_net)) {
			cli_guest_add_timeout(guest, CLI_BENCH_NET_JOIN_MS, cli_bench_complete_cb,
			                      bg);
			return G_SOURCE_REMOVE;
		}
		json_object_set_member(obj, "host_end", cli_net_end_to_json(bg->net));
		if (error_net != NULL)
			json_object_set_string_member(obj, "host_end_error", error_net->message);
	}
	result = g_steal_pointer(&bg->result);
	cli_guest_finish(guest, g_steal_pointer(&result), NULL);
	return G_SOURCE_REMOVE;
}

static gboolean cli_bench_poll_cb(gpointer user_data)
{
	cli_bench_poll_status(user_data);
	return G_SOURCE_REMOVE;
}

static void cli_bench_status_reply_cb(CliSession *session, JsonNode *ret, const GError *error,
                                      gpointer user_data)
{
	CliGuest *guest = user_data;
	CliBenchGuest *bg = cli_guest_get_data(guest);
	g_autoptr(GError) error_local = NULL;
	g_autofree char *text = NULL;
	JsonObject *obj = NULL;
	JsonObject *result = NULL;
	JsonArray *metrics = NULL;
	const char *state = NULL;
	const char *phase = NULL;
	const char *job_error = NULL;
	double progress = 0;

	if (error != NULL) {
		cli_guest_finish(guest, NULL, error);
		return;
	}
	if (!gb_json_node_get_object(ret, "return", &obj, &error_local) ||
	    !gb_json_get_string(obj, "state", GB_JSON_REQUIRED, &state, &error_local) ||
	    !gb_json_get_double(obj, "progress", GB_JSON_OPTIONAL, 0.0, 1.0, &progress,
	                        &error_local) ||
	    !gb_json_get_string(obj, "phase", GB_JSON_OPTIONAL, &phase, &error_local) ||
	    !gb_json_get_string(obj, "error", GB_JSON_OPTIONAL, &job_error, &error_local)) {
		g_prefix_error(&error_local, "invalid gb-bench-status reply: ");
		cli_guest_finish(guest, NULL, error_local);
		return;
	}
	/* each successful poll is a step: --timeout bounds the step, not the whole job */
	cli_guest_set_deadline(guest, guest->app->opts.timeout);
	text = cli_bench_progress_text(bg, progress, phase);
	cli_guest_set_progress(guest, progress, text);

	if (g_strcmp0(state, "running") == 0) {
		if (bg->host_error != NULL)
			return; /* the cancel is on its way; its reply finishes the guest */
		cli_guest_add_timeout(guest, CLI_BENCH_POLL_MS, cli_bench_poll_cb, bg);
		return;
	}
	if (g_strcmp0(state, "done") == 0) {
		if (!gb_json_get_object(obj, "result", GB_JSON_REQUIRED, &result, &error_local) ||
		    !gb_json_get_array(result, "metrics", GB_JSON_REQUIRED, &metrics,
		                       &error_local)) {
			g_prefix_error(&error_local, "invalid gb-bench-status reply: ");
			cli_guest_finish(guest, NULL, error_local);
			return;
		}
		bg->result = json_node_copy(json_object_get_member(obj, "result"));
		cli_bench_complete_cb(bg);
		return;
	}
	if (g_strcmp0(state, "cancelled") == 0) {
		cli_bench_finish_error(guest, GB_ERROR_FAILED, "cancelled");
		return;
	}
	if (g_strcmp0(state, "failed") == 0) {
		cli_bench_finish_error(guest, GB_ERROR_FAILED, "%s",
		                       job_error != NULL ? job_error : "the benchmark failed");
		return;
	}
	cli_bench_finish_error(guest, GB_ERROR_FAILED,
	                       "invalid gb-bench-status reply: unknown state '%s'", state);
}

static void cli_bench_poll_status(CliBenchGuest *bg)
{
	CliGuest *guest = bg->guest;
	g_autoptr(JsonObject) args = NULL;
	g_autoptr(GError) error_net = NULL;

	if (guest->session == NULL || cli_guest_is_done(guest))
		return;
	/* the host end of net gave up (bad report, agent unreachable): stop the job too */
	if (bg->net != NULL && bg->host_error == NULL && cli_net_end_check(bg->net, &error_net) &&
	    error_net != NULL) {
		/* the cancel's reply finishes the guest with this error */
		bg->host_error = g_strdup(error_net->message);
		cli_bench_send_cancel(guest, guest->session);
		return;
	}
	args = cli_bench_job_args(bg->job);
	cli_session_call(guest->session, "gb-bench-status", args, cli_bench_status_reply_cb, guest);
}

static void cli_bench_start_reply_cb(CliSession *session, JsonNode *ret, const GError *error,
                                     gpointer user_data)
{
	CliGuest *guest = user_data;
	CliBenchGuest *bg = cli_guest_get_data(guest);
	g_autoptr(GError) error_local = NULL;
	JsonObject *obj = NULL;

	if (error != NULL) {
		cli_guest_finish(guest, NULL, error);
		return;
	}
	if (!gb_json_node_get_object(ret, "return", &obj, &error_local) ||
	    !gb_json_get_int(obj, "job", GB_JSON_REQUIRED, 1, G_MAXINT64, &bg->job, &error_local)) {
		g_prefix_error(&error_local, "invalid gb-bench-start reply: ");
		cli_guest_finish(guest, NULL, error_local);
		return;
	}
	if (guest->cancelling) {
		cli_bench_send_cancel(guest, session);
		return;
	}
	cli_guest_set_deadline(guest, guest->app->opts.timeout);
	cli_guest_add_timeout(guest, CLI_BENCH_POLL_MS, cli_bench_poll_cb, bg);
}

/* net: this guest's ports (PORT + index) and, when the CLI listens, its listener. */
static gboolean cli_bench_start_net(CliBenchGuest *bg, JsonObject *params, GError **error)
{
	guint index = bg->guest->index;
	CliNetConfig cfg = {
		.role = cli_bench.role,
		.address = cli_bench.host_address,
		.port = cli_bench.host_port + index,
		.h2g = cli_bench.h2g,
		.g2h = cli_bench.g2h,
		.streams = cli_bench.streams,
		.seconds = cli_bench.seconds,
		.omit = cli_bench.omit,
		.runs = (guint)cli_bench.runs,
		/* longer than the agent's accept_timeout (30 s), so its error, which names
		 * the reason, arrives first */
		.setup_timeout = 35,
	};

	if (cfg.port > 65535 || cli_bench.agent_port + index > 65535) {
		g_set_error(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT,
		            "guest %u has no port left (guest N uses PORT + N, at most 65535)",
		            index);
		return FALSE;
	}
	bg->net = cli_net_end_new(&cfg);
	if (!cli_net_end_listen(bg->net, error))
		return FALSE;
	if (cli_bench.agent_address != NULL)
		json_object_set_string_member(params, "address", cli_bench.agent_address);
	json_object_set_int_member(params, "port", cli_bench.agent_port + index);
	return TRUE;
}

void cli_bench_start(CliGuest *guest, CliSession *session)
{
	CliBenchGuest *bg = g_new0(CliBenchGuest, 1);
	g_autoptr(JsonObject) args = json_object_new();
	g_autoptr(GError) error = NULL;
	JsonObject *params = json_object_new();

	bg->guest = guest;
	bg->started_us = g_get_monotonic_time();
	cli_guest_set_data(guest, bg, (GDestroyNotify)cli_bench_guest_free);
	/* a copy per guest: net adds the guest's own port */
	if (cli_bench.params != NULL) {
		g_autoptr(GList) members = json_object_get_members(cli_bench.params);
		for (GList *l = members; l != NULL; l = l->next) {
			json_object_set_member(
			    params, l->data,
			    json_node_copy(json_object_get_member(cli_bench.params, l->data)));
		}
	}
	json_object_set_string_member(args, "test", cli_bench.test);
	json_object_set_object_member(args, "params", params);
	if (g_strcmp0(cli_bench.test, "net") == 0 && !cli_bench_start_net(bg, params, &error)) {
		g_prefix_error(&error, "host end of bench net: ");
		cli_guest_finish(guest, NULL, error);
		return;
	}
	cli_guest_set_progress(guest, 0.0, cli_bench.test);
	/*
	 * The host end of net starts with the request, not with its reply: through
	 * qemu-ga the agent runs one-shot and answers gb-bench-start only when the
	 * job is over, so the host end must already be connecting (it retries until
	 * the agent listens) or accepting. Its own setup timeout bounds the wait.
	 */
	if (bg->net != NULL && !cli_net_end_start(bg->net, &error)) {
		g_prefix_error(&error, "host end of bench net: ");
		cli_guest_finish(guest, NULL, error);
		return;
	}
	cli_session_call(session, "gb-bench-start", args, cli_bench_start_reply_cb, guest);
}

/* ---- reading results ----------------------------------------------------------------- */

/* One sample of an ok guest's result; strings and labels borrowed from guest->result. */
typedef struct {
	const char *metric;
	const char *unit;
	JsonObject *labels; /* NULL when none */
	double value;       /* NAN when null (unavailable, or a run without a value) */
	double mean;        /* NAN when absent */
	double stddev;      /* NAN when absent */
	guint n_runs;       /* length of "runs", 0 when not repeated */
	const char *unavailable;
} CliBenchSample;

/* Every well-formed sample of the guest's result, read with the typed accessors only. */
static GArray *cli_bench_samples(CliGuest *guest, gint64 *runs_out)
{
	GArray *samples = g_array_new(FALSE, TRUE, sizeof(CliBenchSample));
	JsonObject *result = NULL;
	JsonArray *metrics = NULL;
	gint64 runs = 1;

	if (runs_out != NULL)
		*runs_out = 1;
	if (guest->status != CLI_GUEST_OK || guest->result == NULL ||
	    !gb_json_node_get_object(guest->result, "result", &result, NULL) ||
	    !gb_json_get_array(result, "metrics", GB_JSON_REQUIRED, &metrics, NULL))
		return samples;
	if (gb_json_get_int(result, "runs", GB_JSON_OPTIONAL, 1, G_MAXINT32, &runs, NULL) &&
	    runs_out != NULL)
		*runs_out = runs;
	for (guint i = 0; i < json_array_get_length(metrics); i++) {
		CliBenchSample s = { .value = NAN, .mean = NAN, .stddev = NAN };
		JsonObject *obj = NULL;
		JsonArray *raw = NULL;
		g_autoptr(GError) error = NULL;

		if (!gb_json_node_get_object(json_array_get_element(metrics, i), "sample", &obj,
		                             &error) ||
		    !gb_json_get_string(obj, "metric", GB_JSON_REQUIRED, &s.metric, &error) ||
		    !gb_json_get_string(obj, "unit", GB_JSON_OPTIONAL, &s.unit, &error) ||
		    !gb_json_get_object(obj, "labels", GB_JSON_OPTIONAL, &s.labels, &error) ||
		    !gb_json_get_double(obj, "value", GB_JSON_OPTIONAL, -G_MAXDOUBLE, G_MAXDOUBLE,
		                        &s.value, &error) ||
		    !gb_json_get_double(obj, "mean", GB_JSON_OPTIONAL, -G_MAXDOUBLE, G_MAXDOUBLE,
		                        &s.mean, &error) ||
		    !gb_json_get_double(obj, "stddev", GB_JSON_OPTIONAL, 0, G_MAXDOUBLE, &s.stddev,
		                        &error) ||
		    !gb_json_get_array(obj, "runs", GB_JSON_OPTIONAL, &raw, &error) ||
		    !gb_json_get_string(obj, "unavailable", GB_JSON_OPTIONAL, &s.unavailable,
		                        &error)) {
			g_debug("%s: sample %u ignored: %s", guest->target->name, i,
			        error->message);
			continue;
		}
		s.n_runs = raw != NULL ? json_array_get_length(raw) : 0;
		g_array_append_val(samples, s);
	}
	return samples;
}

static const char *cli_bench_label(const CliBenchSample *s, const char *key)
{
	const char *value = NULL;

	if (s->labels == NULL ||
	    !gb_json_get_string(s->labels, key, GB_JSON_OPTIONAL, &value, NULL))
		return NULL;
	return value;
}

/* The first sample of metric whose labels match the given pairs (NULL key: not checked). */
static const CliBenchSample *cli_bench_find(GArray *samples, const char *metric, const char *k1,
                                            const char *v1, const char *k2, const char *v2)
{
	for (guint i = 0; i < samples->len; i++) {
		const CliBenchSample *s = &g_array_index(samples, CliBenchSample, i);

		if (g_strcmp0(s->metric, metric) != 0)
			continue;
		if (k1 != NULL && g_strcmp0(cli_bench_label(s, k1), v1) != 0)
			continue;
		if (k2 != NULL && g_strcmp0(cli_bench_label(s, k2), v2) != 0)
			continue;
		return s;
	}
	return NULL;
}

/* "123.45", "123.45 ± 1.20" when repeated, "n/a" without a value, "-" when not measured. */
static char *cli_bench_cell(const CliBenchSample *s, double scale, int decimals)
{
	if (s == NULL)
		return g_strdup("-");
	if (!isfinite(s->value))
		return g_strdup("n/a");
	if (s->n_runs > 1 && isfinite(s->stddev))
		return g_strdup_printf("%.*f ± %.*f", decimals, s->value * scale, decimals,
		                       s->stddev * scale);
	return g_strdup_printf("%.*f", decimals, s->value * scale);
}

/* Sorted distinct numeric values of one label over the samples of metric. */
static GArray *cli_bench_label_values(GArray *samples, const char *metric, const char *key)
{
	GArray *values = g_array_new(FALSE, FALSE, sizeof(guint64));

	for (guint i = 0; i < samples->len; i++) {
		const CliBenchSample *s = &g_array_index(samples, CliBenchSample, i);
		const char *text = metric == NULL || g_strcmp0(s->metric, metric) == 0
		                       ? cli_bench_label(s, key)
		                       : NULL;
		guint64 v = 0;
		gboolean seen = FALSE;

		if (text == NULL || !g_ascii_string_to_unsigned(text, 10, 0, G_MAXUINT64, &v, NULL))
			continue;
		for (guint j = 0; j < values->len && !seen; j++)
			seen = g_array_index(values, guint64, j) == v;
		if (!seen)
			g_array_append_val(values, v);
	}
	for (guint i = 1; i < values->len; i++) {
		for (guint j = i; j > 0 && g_array_index(values, guint64, j - 1) >
		                               g_array_index(values, guint64, j);
		     j--) {
			guint64 t = g_array_index(values, guint64, j);
			g_array_index(values, guint64, j) = g_array_index(values, guint64, j - 1);
			g_array_index(values, guint64, j - 1) = t;
		}
	}
	return values;
}

/* ---- tables -------------------------------------------------------------------------- */

void cli_bench_openssl_header(GString *out, const guint64 *sizes, guint n)
{
	/* openssl speed's own header, one column narrower than its rows, as it prints it */
	g_string_append(out, "type        ");
	for (guint i = 0; i < n; i++)
		g_string_append_printf(out, "%7" G_GUINT64_FORMAT " bytes", sizes[i]);
	g_string_append_c(out, '\n');
}

void cli_bench_openssl_row(GString *out, const char *type, const double *values, guint n)
{
	g_string_append_printf(out, "%-13s", type);
	for (guint i = 0; i < n; i++) {
		if (!isfinite(values[i]))
			g_string_append_printf(out, " %11s ", "n/a");
		else if (values[i] > 10000)
			g_string_append_printf(out, " %11.2fk", values[i] / 1e3);
		else
			g_string_append_printf(out, " %11.2f ", values[i]);
	}
	/* no trailing blanks on a line */
	while (out->len > 0 && out->str[out->len - 1] == ' ')
		g_string_truncate(out, out->len - 1);
	g_string_append_c(out, '\n');
}

static void cli_bench_pad(GString *out, const char *text, gsize width)
{
	g_autofree char *escaped = cli_escape_terminal(text);
	gsize w = cli_text_width(escaped);

	g_string_append(out, escaped);
	for (; w < width; w++)
		g_string_append_c(out, ' ');
}

static void cli_bench_render_aes(CliApp *app, GString *out)
{
	g_autoptr(GArray) sizes = g_array_new(FALSE, FALSE, sizeof(guint64));
	g_autoptr(GString) header = g_string_new(NULL);
	gsize width = strlen("GUEST");
	gboolean any = FALSE;

	for (guint i = 0; i < app->guests->len; i++) {
		CliGuest *guest = g_ptr_array_index(app->guests, i);
		g_autoptr(GArray) samples = cli_bench_samples(guest, NULL);
		g_autoptr(GArray) mine = cli_bench_label_values(samples, NULL, "block_size");
		g_autofree char *name = NULL;

		if (guest->status != CLI_GUEST_OK)
			continue;
		any = TRUE;
		name = cli_escape_terminal(guest->target->name);
		width = MAX(width, cli_text_width(name));
		for (guint j = 0; j < mine->len; j++) {
			guint64 v = g_array_index(mine, guint64, j);
			guint k = 0;
			while (k < sizes->len && g_array_index(sizes, guint64, k) < v)
				k++;
			if (k == sizes->len || g_array_index(sizes, guint64, k) != v)
				g_array_insert_val(sizes, k, v);
		}
	}
	if (!any || app->opts.quiet)
		return;
	g_string_append(out, "The 'numbers' are in 1000s of bytes per second processed.\n");
	cli_bench_pad(out, "GUEST", width + 2);
	cli_bench_openssl_header(out, (const guint64 *)sizes->data, sizes->len);
	for (guint i = 0; i < app->guests->len; i++) {
		CliGuest *guest = g_ptr_array_index(app->guests, i);
		g_autoptr(GArray) samples = NULL;
		g_autofree double *values = NULL;
		g_autofree double *stddevs = NULL;
		g_autofree char *cipher = NULL;
		gboolean repeated = FALSE;

		if (guest->status != CLI_GUEST_OK)
			continue;
		samples = cli_bench_samples(guest, NULL);
		values = g_new(double, MAX(sizes->len, 1));
		stddevs = g_new(double, MAX(sizes->len, 1));
		for (guint j = 0; j < sizes->len; j++) {
			g_autofree char *bs =
			    g_strdup_printf("%" G_GUINT64_FORMAT, g_array_index(sizes, guint64, j));
			const CliBenchSample *s = NULL;

			for (guint k = 0; k < samples->len && s == NULL; k++) {
				const CliBenchSample *c =
				    &g_array_index(samples, CliBenchSample, k);
				if (g_strcmp0(cli_bench_label(c, "block_size"), bs) == 0 &&
				    g_strcmp0(c->unit, "B/s") == 0)
					s = c;
			}
			values[j] = s != NULL ? s->value : NAN;
			stddevs[j] = s != NULL && s->n_runs > 1 ? s->stddev : NAN;
			repeated |= s != NULL && s->n_runs > 1;
			if (s != NULL && cipher == NULL)
				cipher = cli_escape_terminal(s->metric);
		}
		cli_bench_pad(out, guest->target->name, width + 2);
		cli_bench_openssl_row(out, cipher != NULL ? cipher : "?", values, sizes->len);
		if (repeated) {
			cli_bench_pad(out, "", width + 2);
			cli_bench_openssl_row(out, "± stddev", stddevs, sizes->len);
		}
	}
}

static void cli_bench_render_disk(CliApp *app, CliTable *table)
{
	static const char *const tests[] = { "write",    "rewrite",   "read", "reread",
		                             "randread", "randwrite", NULL };

	for (guint i = 0; i < app->guests->len; i++) {
		CliGuest *guest = g_ptr_array_index(app->guests, i);
		g_autoptr(GArray) samples = NULL;
		g_autoptr(GArray) records = NULL;

		if (guest->status != CLI_GUEST_OK)
			continue;
		samples = cli_bench_samples(guest, NULL);
		records = cli_bench_label_values(samples, "disk-throughput", "record_size");
		for (guint r = 0; r < records->len; r++) {
			guint64 rs = g_array_index(records, guint64, r);
			g_autofree char *rs_label = g_strdup_printf("%" G_GUINT64_FORMAT, rs);
			g_autoptr(GPtrArray) cells = g_ptr_array_new_with_free_func(g_free);

			g_ptr_array_add(cells, g_strdup(guest->target->name));
			g_ptr_array_add(cells, cli_bench_format_size(rs));
			for (guint t = 0; tests[t] != NULL; t++) {
				const CliBenchSample *s =
				    cli_bench_find(samples, "disk-throughput", "test", tests[t],
				                   "record_size", rs_label);
				g_ptr_array_add(cells, cli_bench_cell(s, 1e-6, 2));
			}
			g_ptr_array_add(cells, NULL);
			cli_table_add_rowv(table, (const char *const *)cells->pdata);
		}
	}
}

static void cli_bench_render_mem(CliApp *app, CliTable *table, GString *notes)
{
	static const char *const kinds[] = { "4k", "thp", "hugetlb", NULL };

	for (guint i = 0; i < app->guests->len; i++) {
		CliGuest *guest = g_ptr_array_index(app->guests, i);
		g_autoptr(GArray) samples = NULL;

		if (guest->status != CLI_GUEST_OK)
			continue;
		samples = cli_bench_samples(guest, NULL);
		for (guint k = 0; kinds[k] != NULL; k++) {
			const CliBenchSample *fault =
			    cli_bench_find(samples, "page-fault", "pages", kinds[k], NULL, NULL);
			const CliBenchSample *lat = cli_bench_find(samples, "memory-latency",
			                                           "pages", kinds[k], NULL, NULL);
			const char *ops[] = { "read", "write", "copy" };
			g_autoptr(GPtrArray) cells = g_ptr_array_new_with_free_func(g_free);

			if (fault == NULL && lat == NULL)
				continue;
			g_ptr_array_add(cells, g_strdup(guest->target->name));
			g_ptr_array_add(cells, g_strdup(kinds[k]));
			g_ptr_array_add(cells, cli_bench_cell(fault, 1.0, 1));
			for (guint o = 0; o < G_N_ELEMENTS(ops); o++) {
				const CliBenchSample *bw = cli_bench_find(
				    samples, "memory-bandwidth", "pages", kinds[k], "op", ops[o]);
				g_ptr_array_add(cells, cli_bench_cell(bw, 1e-6, 0));
			}
			g_ptr_array_add(cells, cli_bench_cell(lat, 1.0, 1));
			g_ptr_array_add(cells, NULL);
			cli_table_add_rowv(table, (const char *const *)cells->pdata);
			if (fault != NULL && fault->unavailable != NULL) {
				g_autofree char *name = cli_escape_terminal(guest->target->name);
				g_autofree char *why = cli_escape_terminal(fault->unavailable);
				g_string_append_printf(notes, "%s %s: %s\n", name, kinds[k], why);
			}
		}
	}
}

static void cli_bench_render_net(CliApp *app, CliTable *table)
{
	for (guint i = 0; i < app->guests->len; i++) {
		CliGuest *guest = g_ptr_array_index(app->guests, i);
		g_autoptr(GArray) samples = NULL;
		gboolean first = TRUE;

		if (guest->status != CLI_GUEST_OK)
			continue;
		samples = cli_bench_samples(guest, NULL);
		for (guint j = 0; j < samples->len; j++) {
			const CliBenchSample *s = &g_array_index(samples, CliBenchSample, j);
			g_autoptr(GPtrArray) cells = g_ptr_array_new_with_free_func(g_free);
			const char *dir = cli_bench_label(s, "direction");
			const char *streams = cli_bench_label(s, "streams");

			if (g_strcmp0(s->metric, "tcp-throughput") != 0)
				continue;
			g_ptr_array_add(cells, g_strdup(guest->target->name));
			g_ptr_array_add(cells, g_strdup(dir != NULL ? dir : "?"));
			g_ptr_array_add(cells, g_strdup(streams != NULL ? streams : "?"));
			g_ptr_array_add(cells, cli_bench_cell(s, 8e-6, 1));
			g_ptr_array_add(cells, cli_bench_cell(s, 1e-6, 1));
			/* CPU and retransmits are the guest's over the whole transfer: once per
			 * guest */
			if (first) {
				g_ptr_array_add(
				    cells,
				    cli_bench_cell(cli_bench_find(samples, "guest-cpu-busy", "kind",
				                                  "total", NULL, NULL),
				                   1.0, 1));
				g_ptr_array_add(
				    cells,
				    cli_bench_cell(cli_bench_find(samples, "guest-cpu-busy", "kind",
				                                  "softirq", NULL, NULL),
				                   1.0, 1));
				g_ptr_array_add(
				    cells,
				    cli_bench_cell(cli_bench_find(samples, "guest-cpu-busy", "kind",
				                                  "system", NULL, NULL),
				                   1.0, 1));
				g_ptr_array_add(
				    cells, cli_bench_cell(cli_bench_find(samples, "tcp-retransmits",
				                                         NULL, NULL, NULL, NULL),
				                          1.0, 0));
			} else {
				for (guint k = 0; k < 4; k++)
					g_ptr_array_add(cells, g_strdup(""));
			}
			first = FALSE;
			g_ptr_array_add(cells, NULL);
			cli_table_add_rowv(table, (const char *const *)cells->pdata);
		}
	}
}

/* The guests that are not ok, as the default table shows them. */
static void cli_bench_render_errors(CliApp *app, GString *out, gboolean color)
{
	g_autoptr(CliTable) table = cli_table_new("GUEST", "STATUS", "DETAIL", NULL);

	for (guint i = 0; i < app->guests->len; i++) {
		CliGuest *guest = g_ptr_array_index(app->guests, i);

		if (guest->status == CLI_GUEST_OK)
			continue;
		cli_table_add_row(table, guest->target->name,
		                  cli_guest_status_to_string(guest->status),
		                  guest->error != NULL ? guest->error : "not run");
	}
	if (cli_table_get_n_rows(table) == 0)
		return;
	if (out->len > 0)
		g_string_append_c(out, '\n');
	cli_table_render(table, color, out);
}

GString *cli_bench_render_text(CliApp *app, gboolean color)
{
	GString *out = g_string_new(NULL);
	g_autoptr(CliTable) table = NULL;
	g_autoptr(GString) notes = g_string_new(NULL);
	const char *title = NULL;

	if (g_strcmp0(cli_bench.test, "aes") == 0) {
		cli_bench_render_aes(app, out);
	} else if (g_strcmp0(cli_bench.test, "disk") == 0) {
		title = "disk throughput in MB/s (1 MB = 1000000 bytes), per record size\n";
		table = cli_table_new("GUEST", "RECORD", "WRITE", "REWRITE", "READ", "REREAD",
		                      "RANDREAD", "RANDWRITE", NULL);
		cli_bench_render_disk(app, table);
	} else if (g_strcmp0(cli_bench.test, "mem") == 0) {
		title = "page-fault ns per 4 KiB, bandwidth in MB/s (1 MB = 1000000 bytes), "
		        "latency ns per dependent load\n";
		table = cli_table_new("GUEST", "PAGES", "FAULT ns/4k", "READ MB/s", "WRITE MB/s",
		                      "COPY MB/s", "LATENCY ns", NULL);
		cli_bench_render_mem(app, table, notes);
	} else {
		title = "TCP throughput (receiver's bytes over receiver's time); guest CPU busy "
		        "% of all CPUs and TCP retransmits during the transfer\n";
		table = cli_table_new("GUEST", "DIRECTION", "STREAMS", "Mbit/s", "MB/s", "CPU %",
		                      "SOFTIRQ %", "SYSTEM %", "RETRANS", NULL);
		cli_bench_render_net(app, table);
	}
	if (table != NULL && cli_table_get_n_rows(table) > 0 && !app->opts.quiet) {
		g_string_append(out, title);
		cli_table_render(table, color, out);
		if (notes->len > 0)
			g_string_append_printf(out, "unavailable:\n%s", notes->str);
	}
	cli_bench_render_errors(app, out, color);
	return out;
}

/* ---- csv and prom -------------------------------------------------------------------- */

static void cli_bench_escape_kv(GString *out, const char *text)
{
	for (const char *p = text; *p != '\0'; p++) {
		if (*p == '\\' || *p == ';' || *p == '=')
			g_string_append_c(out, '\\');
		g_string_append_c(out, *p);
	}
}

char *cli_bench_labels_to_string(JsonObject *labels)
{
	GString *out = g_string_new(NULL);
	g_autoptr(GList) members = NULL;

	if (labels == NULL)
		return g_string_free(out, FALSE);
	members = json_object_get_members(labels);
	for (GList *l = members; l != NULL; l = l->next) {
		const char *value = NULL;

		/* a label that is not a string is not a label; the JSON keeps it */
		if (!gb_json_get_string(labels, l->data, GB_JSON_OPTIONAL, &value, NULL) ||
		    value == NULL)
			continue;
		if (out->len > 0)
			g_string_append_c(out, ';');
		cli_bench_escape_kv(out, l->data);
		g_string_append_c(out, '=');
		cli_bench_escape_kv(out, value);
	}
	return g_string_free(out, FALSE);
}

static void cli_bench_append_number(GString *out, double value)
{
	char buf[G_ASCII_DTOSTR_BUF_SIZE];

	if (isfinite(value))
		g_string_append(out, g_ascii_dtostr(buf, sizeof(buf), value));
}

GString *cli_bench_render_csv(CliApp *app)
{
	GString *out = g_string_new("guest,metric,value,unit,labels,runs,mean,stddev\n");

	for (guint i = 0; i < app->guests->len; i++) {
		CliGuest *guest = g_ptr_array_index(app->guests, i);
		gint64 runs = 1;
		g_autoptr(GArray) samples = cli_bench_samples(guest, &runs);

		for (guint j = 0; j < samples->len; j++) {
			const CliBenchSample *s = &g_array_index(samples, CliBenchSample, j);
			g_autofree char *labels = cli_bench_labels_to_string(s->labels);
			g_autofree char *n = g_strdup_printf(
			    "%" G_GINT64_FORMAT, s->n_runs > 0 ? (gint64)s->n_runs : runs);

			cli_csv_append_field(out, guest->target->name);
			g_string_append_c(out, ',');
			cli_csv_append_field(out, s->metric);
			g_string_append_c(out, ',');
			cli_bench_append_number(out, s->value);
			g_string_append_c(out, ',');
			cli_csv_append_field(out, s->unit != NULL ? s->unit : "");
			g_string_append_c(out, ',');
			cli_csv_append_field(out, labels);
			g_string_append_c(out, ',');
			g_string_append(out, n);
			g_string_append_c(out, ',');
			cli_bench_append_number(out, s->mean);
			g_string_append_c(out, ',');
			cli_bench_append_number(out, s->stddev);
			g_string_append_c(out, '\n');
		}
	}
	return out;
}

void cli_bench_prom_append_value(GString *out, const char *value)
{
	g_string_append_c(out, '"');
	for (const char *p = value; p != NULL && *p != '\0'; p++) {
		if (*p == '\\')
			g_string_append(out, "\\\\");
		else if (*p == '"')
			g_string_append(out, "\\\"");
		else if (*p == '\n')
			g_string_append(out, "\\n");
		else
			g_string_append_c(out, *p);
	}
	g_string_append_c(out, '"');
}

char *cli_bench_prom_label_name(const char *name)
{
	GString *out = g_string_new(NULL);

	/* [a-zA-Z_][a-zA-Z0-9_]*; names starting with "__" are Prometheus' own */
	if (name == NULL || name[0] == '\0' || g_ascii_isdigit(name[0]) ||
	    g_str_has_prefix(name, "__"))
		g_string_append(out, "label_");
	for (const char *p = name; p != NULL && *p != '\0'; p++)
		g_string_append_c(out, g_ascii_isalnum(*p) || *p == '_' ? *p : '_');
	return g_string_free(out, FALSE);
}

static void cli_bench_prom_series(GString *out, const char *family, CliGuest *guest,
                                  const CliBenchSample *s, double value)
{
	g_autoptr(GList) members = NULL;

	g_string_append_printf(out, "%s{guest=", family);
	cli_bench_prom_append_value(out, guest->target->name);
	g_string_append(out, ",metric=");
	cli_bench_prom_append_value(out, s->metric);
	g_string_append(out, ",unit=");
	cli_bench_prom_append_value(out, s->unit != NULL ? s->unit : "");
	if (s->labels != NULL)
		members = json_object_get_members(s->labels);
	for (GList *l = members; l != NULL; l = l->next) {
		const char *v = NULL;
		g_autofree char *name = NULL;

		if (!gb_json_get_string(s->labels, l->data, GB_JSON_OPTIONAL, &v, NULL) ||
		    v == NULL)
			continue;
		name = cli_bench_prom_label_name(l->data);
		/* our own labels win: a guest label cannot pose as another guest */
		if (g_strcmp0(name, "guest") == 0 || g_strcmp0(name, "metric") == 0 ||
		    g_strcmp0(name, "unit") == 0) {
			g_autofree char *renamed = g_strdup_printf("label_%s", name);
			g_free(name);
			name = g_steal_pointer(&renamed);
		}
		g_string_append_printf(out, ",%s=", name);
		cli_bench_prom_append_value(out, v);
	}
	g_string_append(out, "} ");
	cli_bench_append_number(out, value);
	g_string_append_c(out, '\n');
}

GString *cli_bench_render_prom(CliApp *app)
{
	GString *out = g_string_new(NULL);
	g_autoptr(GString) stddevs = g_string_new(NULL);

	g_string_append(out, "# HELP guestbench_bench_value A guestbench benchmark sample (the "
	                     "mean when repeated); the unit label gives its unit.\n"
	                     "# TYPE guestbench_bench_value gauge\n");
	for (guint i = 0; i < app->guests->len; i++) {
		CliGuest *guest = g_ptr_array_index(app->guests, i);
		g_autoptr(GArray) samples = cli_bench_samples(guest, NULL);

		for (guint j = 0; j < samples->len; j++) {
			const CliBenchSample *s = &g_array_index(samples, CliBenchSample, j);

			/* a measurement the guest could not make has no number to give */
			if (!isfinite(s->value))
				continue;
			cli_bench_prom_series(out, "guestbench_bench_value", guest, s, s->value);
			if (s->n_runs > 1 && isfinite(s->stddev))
				cli_bench_prom_series(stddevs, "guestbench_bench_stddev", guest, s,
				                      s->stddev);
		}
	}
	if (stddevs->len > 0) {
		g_string_append(out,
		                "# HELP guestbench_bench_stddev Sample standard deviation over "
		                "the runs of a repeated benchmark.\n"
		                "# TYPE guestbench_bench_stddev gauge\n");
		g_string_append(out, stddevs->str);
	}
	return out;
}

/* ---- saving -------------------------------------------------------------------------- */

void cli_bench_finished(CliApp *app)
{
	g_autoptr(GString) doc = NULL;
	g_autoptr(GDateTime) now = NULL;
	g_autoptr(GError) error = NULL;
	g_autofree char *dir = NULL;
	g_autofree char *command = NULL;
	g_autofree char *path = NULL;
	gboolean any_ok = FALSE;

	if (cli_bench_opts.no_save || app->guests == NULL)
		return;
	for (guint i = 0; i < app->guests->len; i++) {
		CliGuest *guest = g_ptr_array_index(app->guests, i);
		any_ok |= guest->status == CLI_GUEST_OK;
	}
	/* a run where no guest measured anything has nothing worth keeping */
	if (!any_ok)
		return;
	doc = cli_output_render_json(app);
	now = g_date_time_new_now_utc();
	dir = cli_results_default_dir();
	command = g_strdup_printf("bench-%s", cli_bench.test);
	path = cli_results_save(dir, now, command, doc->str, doc->len, &error);
	if (path == NULL) {
		g_printerr("guestbench: cannot save the result: %s\n", error->message);
		return;
	}
	if (!app->opts.quiet)
		g_printerr("saved: %s\n", path);
}

/* ---- results ------------------------------------------------------------------------- */

gboolean cli_results_prepare(CliApp *app, GPtrArray *args, GError **error)
{
	if (args->len > 0) {
		g_set_error_literal(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT,
		                    "results takes no targets");
		return FALSE;
	}
	return TRUE;
}

static GString *cli_results_render_json(const char *dir, GPtrArray *entries)
{
	g_autoptr(JsonBuilder) b = json_builder_new();
	g_autoptr(JsonGenerator) gen = json_generator_new();
	g_autoptr(JsonNode) root = NULL;
	g_autofree char *text = NULL;
	GString *out;

	json_builder_begin_object(b);
	json_builder_set_member_name(b, "guestbench");
	json_builder_add_string_value(b, GB_VERSION);
	json_builder_set_member_name(b, "command");
	json_builder_add_string_value(b, "results");
	json_builder_set_member_name(b, "directory");
	json_builder_add_string_value(b, dir);
	json_builder_set_member_name(b, "results");
	json_builder_begin_array(b);
	for (guint i = 0; i < entries->len; i++) {
		CliResultEntry *e = g_ptr_array_index(entries, i);

		json_builder_begin_object(b);
		json_builder_set_member_name(b, "id");
		json_builder_add_string_value(b, e->id);
		json_builder_set_member_name(b, "path");
		json_builder_add_string_value(b, e->path);
		json_builder_set_member_name(b, "date");
		if (e->date != NULL)
			json_builder_add_string_value(b, e->date);
		else
			json_builder_add_null_value(b);
		json_builder_set_member_name(b, "command");
		if (e->command != NULL)
			json_builder_add_string_value(b, e->command);
		else
			json_builder_add_null_value(b);
		json_builder_set_member_name(b, "guests");
		json_builder_begin_array(b);
		for (guint j = 0; e->guests != NULL && e->guests[j] != NULL; j++)
			json_builder_add_string_value(b, e->guests[j]);
		json_builder_end_array(b);
		if (e->error != NULL) {
			json_builder_set_member_name(b, "error");
			json_builder_add_string_value(b, e->error);
		}
		json_builder_end_object(b);
	}
	json_builder_end_array(b);
	json_builder_end_object(b);
	root = json_builder_get_root(b);
	json_generator_set_root(gen, root);
	json_generator_set_pretty(gen, TRUE);
	json_generator_set_indent(gen, 2);
	text = json_generator_to_data(gen, NULL);
	out = g_string_new(text);
	g_string_append_c(out, '\n');
	return out;
}

static GString *cli_results_render_table(CliApp *app, GPtrArray *entries)
{
	g_autoptr(CliTable) table = cli_table_new("ID", "DATE", "COMMAND", "GUESTS", NULL);
	GString *out = g_string_new(NULL);

	for (guint i = 0; i < entries->len; i++) {
		CliResultEntry *e = g_ptr_array_index(entries, i);
		g_autoptr(GString) guests = g_string_new(NULL);
		guint n = e->guests != NULL ? g_strv_length(e->guests) : 0;

		if (e->error != NULL) {
			g_string_append_printf(guests, "unreadable: %s", e->error);
		} else {
			g_string_append_printf(guests, "%u", n);
			for (guint j = 0; j < n && j < 3; j++)
				g_string_append_printf(guests, "%s%s", j == 0 ? ": " : ", ",
				                       e->guests[j]);
			if (n > 3)
				g_string_append(guests, ", ...");
		}
		cli_table_add_row(table, e->id, e->date != NULL ? e->date : "?",
		                  e->command != NULL ? e->command : "?", guests->str);
	}
	cli_table_render(table, cli_output_use_color(app), out);
	return out;
}

int cli_results_run(CliApp *app, GError **error)
{
	g_autofree char *dir = cli_results_default_dir();
	g_autoptr(GPtrArray) entries = cli_results_list(dir, error);
	g_autoptr(GString) doc = NULL;

	if (entries == NULL)
		return CLI_EXIT_GUEST;
	if (app->opts.format == CLI_FORMAT_JSON)
		doc = cli_results_render_json(dir, entries);
	else
		doc = cli_results_render_table(app, entries);
	if (entries->len == 0 && app->opts.format != CLI_FORMAT_JSON && !app->opts.quiet)
		g_printerr("no saved runs in %s\n", dir);
	return cli_output_write_doc(app, doc, error) ? CLI_EXIT_OK : CLI_EXIT_USAGE;
}
