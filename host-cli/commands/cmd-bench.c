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

#include "commands/bench-args.h"
#include "commands/bench-contention.h"
#include "fleet/runner.h"
#include "transport/bench-net.h"
#include "commands/cmd-bench.h"
#include "commands/commands.h"
#include "render/bench-view.h"
#include "analysis/runs.h"
#include "analysis/units.h"
#include "render/escape.h"
#include "render/csv.h"

#define CLI_BENCH_POLL_MS 250
/* After the agent says done, how often to look whether the host end of net has closed. */
#define CLI_BENCH_NET_JOIN_MS 20
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
	char *per_host;
	gboolean contention;
} cli_bench_opts;

/* The values the options take, for checking them and for completion. */
static const char *const cli_bench_tests[] = { "aes", "disk", "mem", "net", NULL };
static const char *const cli_bench_ciphers[] = { "aes-128-gcm", "aes-256-gcm", "chacha20-poly1305",
	                                         NULL };
static const char *const cli_bench_loops[] = { "aead", "stream", NULL };
static const char *const cli_bench_disk_tests[] = { "write",    "rewrite",   "read", "reread",
	                                            "randread", "randwrite", NULL };
static const char *const cli_bench_pages[] = { "4k", "thp", "hugetlb", NULL };
static const char *const cli_bench_directions[] = { "host-to-guest", "guest-to-host", "both",
	                                            NULL };

static const CliCompletion cli_bench_completions[] = {
	{ "cipher", CLI_COMPLETE_WORD, cli_bench_ciphers },
	{ "loop", CLI_COMPLETE_WORD, cli_bench_loops },
	{ "tests", CLI_COMPLETE_LIST, cli_bench_disk_tests },
	{ "pages", CLI_COMPLETE_LIST, cli_bench_pages },
	{ "direction", CLI_COMPLETE_WORD, cli_bench_directions },
	{ NULL, CLI_COMPLETE_WORD, cli_bench_tests },
	{ NULL, CLI_COMPLETE_TARGET, NULL },
	{ NULL },
};

const GOptionEntry cli_bench_entries[] = {
	{ "runs", 0, 0, G_OPTION_ARG_STRING, &cli_bench_opts.runs,
	  "Repeat the benchmark N times (1..100); tables show mean ± stddev", "N" },
	{ "no-save", 0, 0, G_OPTION_ARG_NONE, &cli_bench_opts.no_save,
	  "Do not save the result document", NULL },
	{ "per-host", 0, 0, G_OPTION_ARG_STRING, &cli_bench_opts.per_host,
	  "Benchmarks at once per hypervisor (default 1: guests that share one do not "
	  "disturb each other)",
	  "N" },
	{ "contention", 0, 0, G_OPTION_ARG_NONE, &cli_bench_opts.contention,
	  "Run each guest alone, then all of a hypervisor's at once: solo, loaded and ratio",
	  NULL },
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
	{ "host-connect", 0, 0, G_OPTION_ARG_STRING, &cli_bench_opts.connect,
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
	/* sizes as the user typed them: "4194304" -> "4M", for the progress line */
	GHashTable *spellings;
} cli_bench;

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
		{ "host-connect", cli_bench_opts.connect, FALSE, "net" },
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
	if (cli_bench_opts.cipher != NULL) {
		if (!g_strv_contains(cli_bench_ciphers, cli_bench_opts.cipher)) {
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
		if (!cli_bench_parse_size_list(cli_bench_opts.sizes, CLI_BENCH_MAX_SIZE, &sizes,
		                               error) ||
		    !gb_bench_check_aes_sizes((const gint64 *)(gpointer)sizes->data, sizes->len,
		                              error)) {
			g_prefix_error(error, "--sizes: ");
			return FALSE;
		}
		json_object_set_array_member(params, "sizes", cli_bench_sizes_to_json(sizes));
	}
	if (cli_bench_opts.seconds != NULL) {
		double seconds = 0;
		if (!cli_bench_parse_seconds(cli_bench_opts.seconds, -INFINITY, INFINITY, &seconds,
		                             error))
			return FALSE;
		if (!gb_bench_check_aes_seconds(seconds, error)) {
			g_prefix_error(error, "--seconds: ");
			return FALSE;
		}
		json_object_set_double_member(params, "seconds", seconds);
	}
	if (cli_bench_opts.threads != NULL) {
		guint64 threads = 0;
		if (!cli_bench_parse_uint("threads", cli_bench_opts.threads, 1,
		                          GB_BENCH_AES_MAX_THREADS, &threads, error))
			return FALSE;
		json_object_set_int_member(params, "threads", (gint64)threads);
	}
	if (cli_bench_opts.loop != NULL) {
		if (!g_strv_contains(cli_bench_loops, cli_bench_opts.loop)) {
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
	guint64 size = GB_BENCH_DISK_DEFAULT_SIZE;
	g_autoptr(GArray) records = NULL;

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
		if (!cli_bench_parse_size(cli_bench_opts.size, CLI_BENCH_MAX_SIZE, &size, error) ||
		    !gb_bench_check_disk_size((gint64)size, error)) {
			g_prefix_error(error, "--size: ");
			return FALSE;
		}
		json_object_set_int_member(params, "size", (gint64)size);
	}
	if (cli_bench_opts.record != NULL) {
		if (!cli_bench_parse_size_list(cli_bench_opts.record, CLI_BENCH_MAX_SIZE, &records,
		                               error)) {
			g_prefix_error(error, "--record: ");
			return FALSE;
		}
		json_object_set_array_member(params, "record_sizes",
		                             cli_bench_sizes_to_json(records));
	} else {
		records = g_array_new(FALSE, FALSE, sizeof(guint64));
		g_array_append_vals(records, gb_bench_disk_default_records,
		                    G_N_ELEMENTS(gb_bench_disk_default_records));
	}
	/* --size 1M alone is refused here too: the default records go up to 16M */
	if (!gb_bench_check_disk_records((const gint64 *)(gpointer)records->data, records->len,
	                                 (gint64)size, cli_bench_opts.size != NULL, error)) {
		g_autoptr(GString) defaults = g_string_new(NULL);

		for (guint i = 0; i < G_N_ELEMENTS(gb_bench_disk_default_records); i++) {
			g_autofree char *one =
			    gb_bench_format_size((guint64)gb_bench_disk_default_records[i]);
			g_string_append_printf(defaults, "%s%s", i > 0 ? "," : "", one);
		}
		if (cli_bench_opts.record != NULL)
			g_prefix_error(error, "--record: ");
		else
			g_prefix_error(error, "--size: with the default --record %s, ",
			               defaults->str);
		return FALSE;
	}
	if (cli_bench_opts.tests != NULL) {
		g_auto(GStrv) names = NULL;
		if (!cli_bench_parse_word_list(cli_bench_opts.tests, cli_bench_disk_tests, &names,
		                               error)) {
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
	if (cli_bench_opts.size != NULL) {
		guint64 size = 0;
		if (!cli_bench_parse_size(cli_bench_opts.size, CLI_BENCH_MAX_SIZE, &size, error) ||
		    !gb_bench_check_mem_size((gint64)size, error)) {
			g_prefix_error(error, "--size: ");
			return FALSE;
		}
		json_object_set_int_member(params, "size", (gint64)size);
	}
	if (cli_bench_opts.pages != NULL) {
		g_auto(GStrv) names = NULL;
		if (!cli_bench_parse_word_list(cli_bench_opts.pages, cli_bench_pages, &names,
		                               error)) {
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
		    "bench net needs either --guest-listen [ADDR:]PORT with --host-connect "
		    "ADDR:PORT, or --host-listen ADDR:PORT (--connect is a libvirt URI)");
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
			    "--guest-listen needs --host-connect ADDR:PORT: where the CLI "
			    "reaches the agent's port (--connect is a libvirt URI)");
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
			g_prefix_error(error, "--host-connect: ");
			return FALSE;
		}
		json_object_set_string_member(params, "mode", "listen");
	} else {
		cli_bench.role = CLI_NET_HOST_LISTENS;
		if (cli_bench_opts.connect != NULL) {
			g_set_error_literal(
			    error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT,
			    "--host-connect goes with --guest-listen, not --host-listen");
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
		if (!cli_bench_parse_uint("streams", cli_bench_opts.streams, 1,
		                          GB_BENCH_NET_MAX_STREAMS, &value, error))
			return FALSE;
		cli_bench.streams = (guint)value;
		json_object_set_int_member(params, "streams", (gint64)value);
	}
	/* the defaults of protocol/BENCH-disk-net.md: both ends must agree on them */
	cli_bench.seconds = GB_BENCH_NET_DEFAULT_SECONDS;
	if (cli_bench_opts.seconds != NULL) {
		if (!cli_bench_parse_uint("seconds", cli_bench_opts.seconds,
		                          GB_BENCH_NET_MIN_SECONDS, GB_BENCH_MAX_SECONDS, &value,
		                          error))
			return FALSE;
		cli_bench.seconds = (guint)value;
	}
	cli_bench.omit = GB_BENCH_NET_DEFAULT_OMIT;
	if (cli_bench_opts.omit != NULL) {
		if (!cli_bench_parse_uint("omit", cli_bench_opts.omit, 0, GB_BENCH_NET_MAX_OMIT,
		                          &value, error))
			return FALSE;
		cli_bench.omit = (guint)value;
	}
	json_object_set_int_member(params, "seconds", cli_bench.seconds);
	json_object_set_int_member(params, "omit", cli_bench.omit);
	return TRUE;
}

/* "4194304" -> "4M" for each size the user gave; a bad one is refused later, by its option. */
static void cli_bench_keep_spellings(void)
{
	const char *const options[] = { cli_bench_opts.sizes, cli_bench_opts.record,
		                        cli_bench_opts.size };

	if (cli_bench.spellings == NULL)
		cli_bench.spellings =
		    g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
	g_hash_table_remove_all(cli_bench.spellings);
	for (guint i = 0; i < G_N_ELEMENTS(options); i++) {
		g_auto(GStrv) items = NULL;

		if (options[i] == NULL)
			continue;
		items = g_strsplit(options[i], ",", -1);
		for (guint j = 0; items[j] != NULL; j++) {
			guint64 value = 0;

			if (cli_bench_parse_size(items[j], CLI_BENCH_MAX_SIZE, &value, NULL))
				g_hash_table_replace(cli_bench.spellings,
				                     g_strdup_printf("%" G_GUINT64_FORMAT, value),
				                     g_strdup(items[j]));
		}
	}
}

/*
 * The schedule (fleet/app.h, CliSchedule): --per-host guests of one hypervisor at a
 * time (1 unless told), or --contention's solo pass; the estimate from what a job
 * asked for, its idle check included.
 */
static gboolean cli_bench_prepare_schedule(CliApp *app, const char *test, JsonObject *params,
                                           GError **error)
{
	guint64 per_host = 1;
	double work = 0;

	if (cli_bench_opts.per_host != NULL && cli_bench_opts.contention) {
		g_set_error_literal(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT,
		                    "--per-host does not go with --contention (it runs each guest "
		                    "alone, then all of a hypervisor's at once)");
		return FALSE;
	}
	if (cli_bench_opts.per_host != NULL &&
	    !cli_bench_parse_uint("per-host", cli_bench_opts.per_host, 1, CLI_MAX_JOBS, &per_host,
	                          error))
		return FALSE;
	cli_bench_job_bound(test, params, &work);
	app->schedule.per_host = (guint)per_host;
	app->schedule.job_seconds = work + GB_BENCH_IDLE_WINDOW_MS / 1000.0;
	app->schedule.then_seconds = cli_bench_opts.contention ? app->schedule.job_seconds : 0;
	app->schedule.pass = cli_bench_opts.contention ? "solo pass" : NULL;
	return TRUE;
}

gboolean cli_bench_prepare(CliApp *app, GPtrArray *args, GError **error)
{
	g_autoptr(JsonObject) params = json_object_new();
	const char *test;
	gboolean ok = FALSE;

	if (args->len == 0) {
		g_set_error_literal(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT,
		                    "bench needs a benchmark: aes, disk, mem or net");
		return FALSE;
	}
	test = g_ptr_array_index(args, 0);
	if (!g_strv_contains(cli_bench_tests, test)) {
		g_autofree char *shown = cli_escape_terminal(test);
		g_set_error(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT,
		            "unknown benchmark '%s' (expected aes, disk, mem or net)", shown);
		return FALSE;
	}
	if (!cli_bench_check_applies(test, error))
		return FALSE;
	cli_bench_keep_spellings();
	cli_bench.runs = 1;
	if (cli_bench_opts.runs != NULL) {
		guint64 runs = 0;
		if (!cli_bench_parse_uint("runs", cli_bench_opts.runs, 1, GB_BENCH_MAX_RUNS, &runs,
		                          error))
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
	if (!ok || !cli_bench_prepare_schedule(app, test, params, error))
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
	gboolean seen_running; /* a status said running: the job may have measured something */
	char *host_error;      /* the host end of net failed: the job is being cancelled for it */
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

static void cli_bench_poll_status(CliBenchGuest *bg);

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
	/* one more status: what the job measured before it stopped comes back as partial
	 * (a one-shot job through qemu-ga is never polled and has no status to ask for) */
	if (bg != NULL && bg->seen_running && !cli_guest_is_done(guest)) {
		cli_bench_poll_status(bg);
		return;
	}
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

/* The phase with each size in bytes spelled as the user typed it, or short: "write 4M". */
static char *cli_bench_phase_text(const char *phase)
{
	g_auto(GStrv) words = g_strsplit(phase, " ", -1);
	GString *text = g_string_new(NULL);

	for (guint i = 0; words[i] != NULL; i++) {
		const char *word = words[i];
		const char *spelled = NULL;
		g_autofree char *short_form = NULL;
		guint64 value = 0;

		/* only aes, disk and mem name sizes in their phases (net has ports and seconds) */
		if (g_strcmp0(cli_bench.test, "net") != 0 &&
		    g_ascii_string_to_unsigned(word, 10, 1, G_MAXUINT64, &value, NULL)) {
			if (cli_bench.spellings != NULL)
				spelled = g_hash_table_lookup(cli_bench.spellings, word);
			if (spelled == NULL && value >= 1024 && value % 1024 == 0)
				spelled = short_form = gb_bench_format_size(value);
		}
		if (i > 0)
			g_string_append_c(text, ' ');
		g_string_append(text, spelled != NULL ? spelled : word);
		/* "4M bytes" says it twice */
		if (spelled != NULL && g_strcmp0(words[i + 1], "bytes") == 0)
			i++;
	}
	return g_string_free(text, FALSE);
}

/* Like fio: "aes: aes-128-gcm 1M [40%][r=1.21 GB/s][eta 12s]". */
static char *cli_bench_progress_text(CliBenchGuest *bg, double progress, const char *phase,
                                     double rate, const char *rate_unit)
{
	double elapsed = (g_get_monotonic_time() - bg->started_us) / 1e6;
	GString *text = g_string_new(cli_bench.test);

	if (phase != NULL && phase[0] != '\0') {
		g_autofree char *shown = cli_bench_phase_text(phase);
		g_string_append_printf(text, ": %s", shown);
	}
	g_string_append_printf(text, " [%.0f%%]", floor(progress * 100.0));
	if (rate_unit != NULL && isfinite(rate)) {
		g_autofree char *shown = cli_format_rate(rate, rate_unit);
		char *space = strchr(shown, ' ');

		/* fio's compact "[r=1.21GB/s]" */
		if (space != NULL)
			memmove(space, space + 1, strlen(space));
		g_string_append_printf(text, "[r=%s]", shown);
	}
	/* the rate so far is the best guess for the rest; too early, it is noise */
	if (progress >= 0.02 && progress < 1.0 && elapsed > 0.5) {
		double eta = ceil(elapsed * (1.0 - progress) / progress);
		if (eta >= 3600)
			g_string_append_printf(text, "[eta %.0fh%02.0fm]", floor(eta / 3600),
			                       floor(fmod(eta, 3600) / 60));
		else if (eta >= 60)
			g_string_append_printf(text, "[eta %.0fm%02.0fs]", floor(eta / 60),
			                       fmod(eta, 60));
		else
			g_string_append_printf(text, "[eta %.0fs]", eta);
	}
	return g_string_free(text, FALSE);
}

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

/* A cancelled job: its error, with what it measured before, marked partial, when any. */
static void cli_bench_finish_cancelled(CliGuest *guest, JsonObject *status)
{
	g_autoptr(GError) error = NULL;
	JsonObject *result = NULL;
	gboolean partial = FALSE;

	if (!gb_json_get_object(status, "result", GB_JSON_OPTIONAL, &result, NULL) ||
	    result == NULL ||
	    !gb_json_get_bool(result, "partial", GB_JSON_OPTIONAL, &partial, NULL) || !partial ||
	    !gb_json_has(result, "metrics")) {
		cli_bench_finish_error(guest, GB_ERROR_FAILED, "cancelled");
		return;
	}
	error = g_error_new_literal(GB_ERROR, GB_ERROR_FAILED,
	                            "cancelled: partial result, only what finished before");
	cli_guest_finish(guest, json_node_copy(json_object_get_member(status, "result")), error);
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
	const char *rate_unit = NULL;
	double progress = 0;
	double rate = NAN;

	if (error != NULL) {
		cli_guest_finish(guest, NULL, error);
		return;
	}
	if (!gb_json_node_get_object(ret, "return", &obj, &error_local) ||
	    !gb_json_get_string(obj, "state", GB_JSON_REQUIRED, &state, &error_local) ||
	    !gb_json_get_double(obj, "progress", GB_JSON_OPTIONAL, 0.0, 1.0, &progress,
	                        &error_local) ||
	    !gb_json_get_string(obj, "phase", GB_JSON_OPTIONAL, &phase, &error_local) ||
	    !gb_json_get_string(obj, "error", GB_JSON_OPTIONAL, &job_error, &error_local) ||
	    !gb_json_get_double(obj, "rate", GB_JSON_OPTIONAL, 0.0, G_MAXDOUBLE, &rate,
	                        &error_local) ||
	    !gb_json_get_string(obj, "rate_unit", GB_JSON_OPTIONAL, &rate_unit, &error_local)) {
		g_prefix_error(&error_local, "invalid gb-bench-status reply: ");
		cli_guest_finish(guest, NULL, error_local);
		return;
	}
	/* each successful poll is a step: --timeout bounds the step, the job's bound the job */
	cli_guest_set_deadline(guest, guest->app->opts.timeout);
	text = cli_bench_progress_text(bg, progress, phase, rate, rate_unit);
	cli_guest_set_progress(guest, progress, text);

	if (g_strcmp0(state, "running") == 0) {
		bg->seen_running = TRUE;
		if (bg->host_error != NULL)
			return; /* the cancel is on its way; its reply finishes the guest */
		cli_guest_add_timeout(guest, CLI_BENCH_POLL_MS, cli_bench_poll_cb, bg);
		return;
	}
	/* a job that finished just before the cancel arrived was still not wanted */
	if (g_strcmp0(state, "done") == 0 && bg->cancel_sent && bg->host_error == NULL) {
		cli_bench_finish_error(guest, GB_ERROR_FAILED, "cancelled");
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
		cli_bench_finish_cancelled(guest, obj);
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
	g_autofree char *why = NULL;
	JsonObject *params = json_object_new();
	double bound;
	double work = 0;

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
	/* --timeout bounds each step; this bounds the whole job (its rule: bench-args.h) */
	bound = cli_bench_job_bound(cli_bench.test, params, &work);
	why = g_strdup_printf("2 x %g s of work asked for + %g s", work, CLI_BENCH_BOUND_MARGIN);
	g_debug("%s: bench %s bounded to %.0f s (%s)", guest->target->name, cli_bench.test, bound,
	        why);
	cli_guest_set_job_bound(guest, bound, why);
	/* and its result's size (the rule: bench-args.h) */
	cli_session_set_reply_limit(
	    session, "gb-bench-status",
	    cli_bench_result_limit(cli_bench.test, params, CLI_MAX_REPLY_SIZE));
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

/* ---- rendering (render/bench-view.c) ------------------------------------------------- */

GString *cli_bench_render_text(const CliResults *results, gboolean color)
{
	return cli_bench_view_render_text(results, cli_bench.test, color);
}

GString *cli_bench_render_csv(const CliResults *results)
{
	return cli_bench_view_render_csv(results);
}

GString *cli_bench_render_prom(const CliResults *results)
{
	return cli_bench_view_render_prom(results);
}

/* ---- the schedule's outcome ----------------------------------------------------------- */

/*
 * Each result says where it ran and how many ran there with it (labels). labels and
 * contention are the CLI's to write: whatever a guest put there is replaced or dropped.
 */
static void cli_bench_label_results(CliApp *app)
{
	for (guint i = 0; i < app->guests->len; i++) {
		CliGuest *guest = g_ptr_array_index(app->guests, i);
		JsonObject *labels;

		if (guest->result == NULL || !JSON_NODE_HOLDS_OBJECT(guest->result))
			continue;
		if (json_object_has_member(json_node_get_object(guest->result), "contention"))
			json_object_remove_member(json_node_get_object(guest->result),
			                          "contention");
		labels = json_object_new();
		json_object_set_string_member(labels, "hypervisor",
		                              cli_target_get_hypervisor(guest->target));
		json_object_set_int_member(labels, "concurrent",
		                           cli_runner_get_concurrent(app, guest));
		json_object_set_object_member(json_node_get_object(guest->result), "labels",
		                              labels);
	}
}

/*
 * --contention: the solo pass is done (one guest at a time per hypervisor); now all
 * of each hypervisor's guests at once, and each guest's two results side by side.
 * Not after Ctrl-C, nor when --deadline has no time left: what the solo pass got is
 * the answer then.
 */
static void cli_bench_run_loaded(CliApp *app)
{
	g_autoptr(GPtrArray) solo = NULL;
	gint64 first_us = G_MAXINT64;

	if (app->signal_received != 0)
		return;
	if (app->opts.deadline > 0) {
		double left;

		for (guint i = 0; i < app->guests->len; i++) {
			const CliGuest *guest = g_ptr_array_index(app->guests, i);
			if (guest->started_us != 0)
				first_us = MIN(first_us, guest->started_us);
		}
		left = app->opts.deadline -
		       (first_us == G_MAXINT64 ? 0 : (g_get_monotonic_time() - first_us) / 1e6);
		if (left <= 0) {
			if (!app->opts.quiet)
				g_printerr("contention: no loaded pass, the --deadline of %g s was "
				           "reached in the solo pass\n",
				           app->opts.deadline);
			return;
		}
		app->opts.deadline = left;
	}
	app->schedule.per_host = 0;
	app->schedule.then_seconds = 0;
	app->schedule.pass = "loaded pass";
	solo = cli_runner_run_again(app);
	cli_bench_label_results(app);
	for (guint i = 0; i < app->guests->len; i++) {
		CliGuest *guest = g_ptr_array_index(app->guests, i);
		const CliGuest *alone = g_ptr_array_index(solo, i);
		g_autoptr(GError) error = NULL;

		if (guest->status != CLI_GUEST_OK)
			continue;
		/* without its solo figure the guest has no contention to show */
		if (alone->status != CLI_GUEST_OK) {
			guest->status = alone->status;
			guest->error = g_strdup_printf("solo pass: %s", alone->error);
			continue;
		}
		if (!cli_bench_contention_attach(guest->result, alone->result, &error)) {
			guest->status = CLI_GUEST_ERROR;
			guest->error = g_strdup_printf("contention: %s", error->message);
		}
	}
}

/* ---- saving -------------------------------------------------------------------------- */

void cli_bench_finished(CliApp *app)
{
	g_autoptr(CliResults) results = NULL;
	g_autoptr(GString) doc = NULL;
	g_autoptr(GDateTime) now = NULL;
	g_autoptr(GError) error = NULL;
	g_autofree char *dir = NULL;
	g_autofree char *command = NULL;
	g_autofree char *path = NULL;
	gboolean any_ok = FALSE;

	if (app->guests == NULL)
		return;
	cli_bench_label_results(app);
	if (cli_bench_opts.contention)
		cli_bench_run_loaded(app);
	if (cli_bench_opts.no_save)
		return;
	for (guint i = 0; i < app->guests->len; i++) {
		CliGuest *guest = g_ptr_array_index(app->guests, i);
		any_ok |= guest->status == CLI_GUEST_OK;
	}
	/* a run where no guest measured anything has nothing worth keeping */
	if (!any_ok)
		return;
	results = cli_app_get_results(app);
	doc = cli_results_render_json(results);
	now = g_date_time_new_now_utc();
	dir = cli_runs_default_dir();
	command = g_strdup_printf("bench-%s", cli_bench.test);
	path = cli_runs_save(dir, now, command, doc->str, doc->len, &error);
	if (path == NULL) {
		cli_escape_printerr("cannot save the result: ", error->message);
		return;
	}
	if (!app->opts.quiet)
		g_printerr("saved: %s\n", path);
}

const CliCommand cli_cmd_bench = {
	.name = "bench",
	.parameter_string = "bench aes|disk|mem|net TARGET...",
	.summary = "Benchmark jobs in the guests: aes, disk, mem, net; each run is saved",
	.description = CLI_BENCH_DESCRIPTION,
	.entries = cli_bench_entries,
	.completions = cli_bench_completions,
	.prepare = cli_bench_prepare,
	.start = cli_bench_start,
	.cancel = cli_bench_cancel,
	.render_text = cli_bench_render_text,
	.render_csv = cli_bench_render_csv,
	.render_prom = cli_bench_render_prom,
	.finished = cli_bench_finished,
};
