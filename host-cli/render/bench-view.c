/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"

#include <math.h>
#include <string.h>

#include "guestbench-protocol.h"

#include "analysis/compare.h"
#include "analysis/units.h"
#include "render/bench-view.h"
#include "render/csv.h"
#include "render/escape.h"
#include "render/prom.h"
#include "render/table.h"

char *cli_bench_format_size(guint64 bytes)
{
	return gb_bench_format_size(bytes);
}

/* ---- reading results ----------------------------------------------------------------- */

/* A result marked partial: the job was cancelled after measuring some of it. */
static gboolean cli_bench_is_partial(const CliResult *guest)
{
	JsonObject *result = NULL;
	gboolean partial = FALSE;

	return guest->result != NULL &&
	       gb_json_node_get_object(guest->result, "result", &result, NULL) &&
	       gb_json_get_bool(result, "partial", GB_JSON_OPTIONAL, &partial, NULL) && partial;
}

/* Ok guests, and interrupted ones with a partial result, have numbers to show. */
static gboolean cli_bench_has_numbers(const CliResult *guest)
{
	return guest->status == CLI_GUEST_OK || cli_bench_is_partial(guest);
}

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
static GArray *cli_bench_samples(const CliResult *guest, gint64 *runs_out)
{
	GArray *samples = g_array_new(FALSE, TRUE, sizeof(CliBenchSample));
	JsonObject *result = NULL;
	JsonArray *metrics = NULL;
	gint64 runs = 1;

	if (runs_out != NULL)
		*runs_out = 1;
	if (!cli_bench_has_numbers(guest) || guest->result == NULL ||
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
			g_debug("%s: sample %u ignored: %s", guest->name, i, error->message);
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

/*
 * Samples by the values of one or two labels, for lookups in O(1): a guest
 * chooses how many block or record sizes it reports. The first sample of each
 * pair of values wins, as in cli_bench_find(); metric and unit (NULL: any)
 * filter the samples, and a sample without either label is left out.
 */
static char *cli_bench_index_key(const char *v1, const char *v2)
{
	/* the length makes the pair unambiguous whatever the values hold */
	return g_strdup_printf("%zu:%s:%s", strlen(v1), v1, v2 != NULL ? v2 : "");
}

static GHashTable *cli_bench_index(GArray *samples, const char *metric, const char *unit,
                                   const char *k1, const char *k2)
{
	GHashTable *index = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);

	for (guint i = 0; i < samples->len; i++) {
		CliBenchSample *s = &g_array_index(samples, CliBenchSample, i);
		const char *v1 = cli_bench_label(s, k1);
		const char *v2 = k2 != NULL ? cli_bench_label(s, k2) : NULL;
		char *key;

		if ((metric != NULL && g_strcmp0(s->metric, metric) != 0) ||
		    (unit != NULL && g_strcmp0(s->unit, unit) != 0) || v1 == NULL ||
		    (k2 != NULL && v2 == NULL))
			continue;
		key = cli_bench_index_key(v1, v2);
		if (g_hash_table_contains(index, key))
			g_free(key);
		else
			g_hash_table_insert(index, key, s);
	}
	return index;
}

static const CliBenchSample *cli_bench_index_find(GHashTable *index, const char *v1, const char *v2)
{
	g_autofree char *key = cli_bench_index_key(v1, v2);

	return g_hash_table_lookup(index, key);
}

static gint cli_bench_compare_u64(gconstpointer a, gconstpointer b)
{
	guint64 x = *(const guint64 *)a;
	guint64 y = *(const guint64 *)b;

	return x < y ? -1 : x > y;
}

/* Sorts values and drops repeats, in O(n log n). */
static void cli_bench_sort_distinct(GArray *values)
{
	guint n = 0;

	g_array_sort(values, cli_bench_compare_u64);
	for (guint i = 0; i < values->len; i++) {
		guint64 v = g_array_index(values, guint64, i);

		if (n == 0 || g_array_index(values, guint64, n - 1) != v)
			g_array_index(values, guint64, n++) = v;
	}
	g_array_set_size(values, n);
}

/* Appends the numeric values of one label over the samples of metric (NULL: any). */
static void cli_bench_add_label_values(GArray *values, GArray *samples, const char *metric,
                                       const char *key)
{
	for (guint i = 0; i < samples->len; i++) {
		const CliBenchSample *s = &g_array_index(samples, CliBenchSample, i);
		const char *text = metric == NULL || g_strcmp0(s->metric, metric) == 0
		                       ? cli_bench_label(s, key)
		                       : NULL;
		guint64 v = 0;

		if (text != NULL && g_ascii_string_to_unsigned(text, 10, 0, G_MAXUINT64, &v, NULL))
			g_array_append_val(values, v);
	}
}

/* Sorted distinct numeric values of one label over the samples of metric. */
static GArray *cli_bench_label_values(GArray *samples, const char *metric, const char *key)
{
	GArray *values = g_array_new(FALSE, FALSE, sizeof(guint64));

	cli_bench_add_label_values(values, samples, metric, key);
	cli_bench_sort_distinct(values);
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

static void cli_bench_render_aes(const CliResults *results, GString *out)
{
	g_autoptr(GArray) sizes = g_array_new(FALSE, FALSE, sizeof(guint64));
	g_autoptr(GString) header = g_string_new(NULL);
	gsize width = strlen("GUEST");
	gboolean any = FALSE;

	for (guint i = 0; i < results->guests->len; i++) {
		const CliResult *guest = g_ptr_array_index(results->guests, i);
		g_autoptr(GArray) samples = cli_bench_samples(guest, NULL);
		g_autofree char *name = NULL;

		if (!cli_bench_has_numbers(guest))
			continue;
		any = TRUE;
		name = cli_escape_terminal(guest->name);
		width = MAX(width, cli_text_width(name));
		cli_bench_add_label_values(sizes, samples, NULL, "block_size");
	}
	if (!any)
		return;
	cli_bench_sort_distinct(sizes);
	g_string_append(out, "The 'numbers' are in 1000s of bytes per second processed.\n");
	cli_bench_pad(out, "GUEST", width + 2);
	cli_bench_openssl_header(out, (const guint64 *)sizes->data, sizes->len);
	for (guint i = 0; i < results->guests->len; i++) {
		const CliResult *guest = g_ptr_array_index(results->guests, i);
		g_autoptr(GArray) samples = NULL;
		g_autoptr(GHashTable) by_size = NULL;
		g_autofree double *values = NULL;
		g_autofree double *stddevs = NULL;
		g_autofree char *cipher = NULL;
		gboolean repeated = FALSE;

		if (!cli_bench_has_numbers(guest))
			continue;
		samples = cli_bench_samples(guest, NULL);
		by_size = cli_bench_index(samples, NULL, "B/s", "block_size", NULL);
		values = g_new(double, MAX(sizes->len, 1));
		stddevs = g_new(double, MAX(sizes->len, 1));
		for (guint j = 0; j < sizes->len; j++) {
			g_autofree char *bs =
			    g_strdup_printf("%" G_GUINT64_FORMAT, g_array_index(sizes, guint64, j));
			const CliBenchSample *s = cli_bench_index_find(by_size, bs, NULL);

			values[j] = s != NULL ? s->value : NAN;
			stddevs[j] = s != NULL && s->n_runs > 1 ? s->stddev : NAN;
			repeated |= s != NULL && s->n_runs > 1;
			if (s != NULL && cipher == NULL)
				cipher = cli_escape_terminal(s->metric);
		}
		cli_bench_pad(out, guest->name, width + 2);
		cli_bench_openssl_row(out, cipher != NULL ? cipher : "?", values, sizes->len);
		if (repeated) {
			cli_bench_pad(out, "", width + 2);
			cli_bench_openssl_row(out, "± stddev", stddevs, sizes->len);
		}
	}
}

static void cli_bench_render_disk(const CliResults *results, CliTable *table)
{
	static const char *const tests[] = { "write",    "rewrite",   "read", "reread",
		                             "randread", "randwrite", NULL };

	for (guint i = 0; i < results->guests->len; i++) {
		const CliResult *guest = g_ptr_array_index(results->guests, i);
		g_autoptr(GArray) samples = NULL;
		g_autoptr(GArray) records = NULL;
		g_autoptr(GHashTable) by_test = NULL;

		if (!cli_bench_has_numbers(guest))
			continue;
		samples = cli_bench_samples(guest, NULL);
		records = cli_bench_label_values(samples, "disk-throughput", "record_size");
		by_test = cli_bench_index(samples, "disk-throughput", NULL, "test", "record_size");
		for (guint r = 0; r < records->len; r++) {
			guint64 rs = g_array_index(records, guint64, r);
			g_autofree char *rs_label = g_strdup_printf("%" G_GUINT64_FORMAT, rs);
			g_autoptr(GPtrArray) cells = g_ptr_array_new_with_free_func(g_free);

			g_ptr_array_add(cells, g_strdup(guest->name));
			g_ptr_array_add(cells, cli_bench_format_size(rs));
			for (guint t = 0; tests[t] != NULL; t++) {
				const CliBenchSample *s =
				    cli_bench_index_find(by_test, tests[t], rs_label);
				g_ptr_array_add(cells, cli_bench_cell(s, 1e-6, 2));
			}
			g_ptr_array_add(cells, NULL);
			cli_table_add_rowv(table, (const char *const *)cells->pdata);
		}
	}
}

static void cli_bench_render_mem(const CliResults *results, CliTable *table, GString *notes)
{
	static const char *const kinds[] = { "4k", "thp", "hugetlb", NULL };

	for (guint i = 0; i < results->guests->len; i++) {
		const CliResult *guest = g_ptr_array_index(results->guests, i);
		g_autoptr(GArray) samples = NULL;

		if (!cli_bench_has_numbers(guest))
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
			g_ptr_array_add(cells, g_strdup(guest->name));
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
				g_autofree char *name = cli_escape_terminal(guest->name);
				g_autofree char *why = cli_escape_terminal(fault->unavailable);
				g_string_append_printf(notes, "%s %s: %s\n", name, kinds[k], why);
			}
		}
	}
}

/*
 * The agent measures CPU and retransmits over the whole transfer, and with
 * --direction both the two directions run at the same time: the same figures
 * belong to each direction's row, and a note says they are shared.
 */
static void cli_bench_render_net(const CliResults *results, CliTable *table, GString *notes)
{
	gboolean shared = FALSE;

	for (guint i = 0; i < results->guests->len; i++) {
		const CliResult *guest = g_ptr_array_index(results->guests, i);
		g_autoptr(GArray) samples = NULL;
		const char *const kinds[] = { "total", "softirq", "system" };
		const CliBenchSample *cpu[G_N_ELEMENTS(kinds)];
		const CliBenchSample *retrans = NULL;
		guint n_rows = 0;

		if (!cli_bench_has_numbers(guest))
			continue;
		samples = cli_bench_samples(guest, NULL);
		/* the same on every row: looked up once, however many rows the guest sends */
		for (guint k = 0; k < G_N_ELEMENTS(kinds); k++)
			cpu[k] =
			    cli_bench_find(samples, "guest-cpu-busy", "kind", kinds[k], NULL, NULL);
		retrans = cli_bench_find(samples, "tcp-retransmits", NULL, NULL, NULL, NULL);
		for (guint j = 0; j < samples->len; j++) {
			const CliBenchSample *s = &g_array_index(samples, CliBenchSample, j);
			g_autoptr(GPtrArray) cells = g_ptr_array_new_with_free_func(g_free);
			const char *dir = cli_bench_label(s, "direction");
			const char *streams = cli_bench_label(s, "streams");

			if (g_strcmp0(s->metric, "tcp-throughput") != 0)
				continue;
			g_ptr_array_add(cells, g_strdup(guest->name));
			g_ptr_array_add(cells, g_strdup(dir != NULL ? dir : "?"));
			g_ptr_array_add(cells, g_strdup(streams != NULL ? streams : "?"));
			g_ptr_array_add(cells, cli_bench_cell(s, 8e-6, 1));
			g_ptr_array_add(cells, cli_bench_cell(s, 1e-6, 1));
			for (guint k = 0; k < G_N_ELEMENTS(kinds); k++)
				g_ptr_array_add(cells, cli_bench_cell(cpu[k], 1.0, 1));
			g_ptr_array_add(cells, cli_bench_cell(retrans, 1.0, 0));
			g_ptr_array_add(cells, NULL);
			cli_table_add_rowv(table, (const char *const *)cells->pdata);
			n_rows++;
		}
		if (n_rows > 1)
			shared = TRUE;
	}
	if (shared)
		g_string_append(notes,
		                "both directions ran at once: CPU % and RETRANS cover the whole "
		                "transfer (the same on each row)\n");
}

/* Says which rows hold only what finished before an interrupt. */
static void cli_bench_render_partial(const CliResults *results, GString *out)
{
	for (guint i = 0; i < results->guests->len; i++) {
		const CliResult *guest = g_ptr_array_index(results->guests, i);
		g_autofree char *name = NULL;

		if (guest->status == CLI_GUEST_OK || !cli_bench_is_partial(guest))
			continue;
		name = cli_escape_terminal(guest->name);
		g_string_append_printf(out,
		                       "PARTIAL: %s was interrupted; its rows hold only what "
		                       "finished before.\n",
		                       name);
	}
}

/* The guests that are not ok, as the default table shows them. */
static void cli_bench_render_errors(const CliResults *results, GString *out, gboolean color)
{
	g_autoptr(CliTable) table = cli_table_new("GUEST", "STATUS", "DETAIL", NULL);

	for (guint i = 0; i < results->guests->len; i++) {
		const CliResult *guest = g_ptr_array_index(results->guests, i);

		if (guest->status == CLI_GUEST_OK)
			continue;
		cli_table_add_row(table, guest->name, cli_guest_status_to_string(guest->status),
		                  guest->error != NULL ? guest->error : "not run");
	}
	if (cli_table_get_n_rows(table) == 0)
		return;
	if (out->len > 0)
		g_string_append_c(out, '\n');
	cli_table_render(table, color, out);
}

/* ---- the schedule: idle check, neighbours, contention --------------------------------- */

/*
 * Each guest whose CPUs were not idle before its run (the agent's idle check), and
 * each that shared its hypervisor with other benchmarks (labels.concurrent > 1) but
 * not on purpose (--contention has its own table).
 */
static void cli_bench_render_neighbours(const CliResults *results, GString *out)
{
	for (guint i = 0; i < results->guests->len; i++) {
		const CliResult *guest = g_ptr_array_index(results->guests, i);
		g_autofree char *name = NULL;
		JsonObject *result = NULL;
		JsonObject *idle = NULL;
		JsonObject *labels = NULL;
		double busy = NAN;
		double steal = NAN;
		gint64 concurrent = 0;
		const char *hypervisor = NULL;

		if (!cli_bench_has_numbers(guest) ||
		    !gb_json_node_get_object(guest->result, "result", &result, NULL))
			continue;
		name = cli_escape_terminal(guest->name);
		if (gb_json_get_object(result, "idle", GB_JSON_OPTIONAL, &idle, NULL) &&
		    gb_json_get_double(idle, "busy_percent", GB_JSON_OPTIONAL, 0, 100, &busy,
		                       NULL) &&
		    gb_json_get_double(idle, "steal_percent", GB_JSON_OPTIONAL, 0, 100, &steal,
		                       NULL) &&
		    busy > CLI_BENCH_IDLE_MAX_BUSY)
			g_string_append_printf(
			    out,
			    "NOT IDLE: %s was %.0f %% busy (steal %.0f %%) in the "
			    "second before its run (more than %.0f %%): its figures "
			    "share the CPUs with that load.\n",
			    name, busy, isnan(steal) ? 0.0 : steal, CLI_BENCH_IDLE_MAX_BUSY);
		if (!gb_json_has(result, "contention") &&
		    gb_json_get_object(result, "labels", GB_JSON_OPTIONAL, &labels, NULL) &&
		    gb_json_get_int(labels, "concurrent", GB_JSON_OPTIONAL, 0, G_MAXINT32,
		                    &concurrent, NULL) &&
		    gb_json_get_string(labels, "hypervisor", GB_JSON_OPTIONAL, &hypervisor, NULL) &&
		    concurrent > 1) {
			g_autofree char *hv =
			    cli_escape_terminal(hypervisor != NULL ? hypervisor : "?");

			g_string_append_printf(out,
			                       "SHARED: %s ran alongside up to %" G_GINT64_FORMAT
			                       " other benchmark%s on hypervisor %s: its figures "
			                       "include their load.\n",
			                       name, concurrent - 1, concurrent == 2 ? "" : "s",
			                       hv);
		}
	}
}

static char *cli_bench_contention_cell(double value, const char *unit)
{
	return isnan(value) ? g_strdup("—") : cli_format_rate(value, unit);
}

/* bench --contention: each guest's headline figures alone, loaded, and their ratio. */
static void cli_bench_render_contention(const CliResults *results, gboolean color, GString *out)
{
	g_autoptr(CliTable) table =
	    cli_table_new("GUEST", "METRIC", "LABELS", "SOLO", "LOADED", "RATIO", NULL);

	for (guint i = 0; i < results->guests->len; i++) {
		const CliResult *guest = g_ptr_array_index(results->guests, i);
		JsonObject *result = NULL;
		JsonObject *contention = NULL;
		JsonArray *samples = NULL;
		const char *test = NULL;

		if (guest->status != CLI_GUEST_OK ||
		    !gb_json_node_get_object(guest->result, "result", &result, NULL) ||
		    !gb_json_get_string(result, "test", GB_JSON_OPTIONAL, &test, NULL) ||
		    !gb_json_get_object(result, "contention", GB_JSON_OPTIONAL, &contention,
		                        NULL) ||
		    !gb_json_get_array(contention, "samples", GB_JSON_OPTIONAL, &samples, NULL) ||
		    samples == NULL)
			continue;
		for (guint j = 0; j < json_array_get_length(samples); j++) {
			JsonObject *sample = NULL;
			JsonObject *labels = NULL;
			const char *metric = NULL;
			const char *unit = NULL;
			double solo = NAN;
			double loaded = NAN;
			double ratio = NAN;
			g_autofree char *labels_text = NULL;
			g_autofree char *solo_text = NULL;
			g_autofree char *loaded_text = NULL;
			g_autofree char *ratio_text = NULL;

			if (!gb_json_node_get_object(json_array_get_element(samples, j), "sample",
			                             &sample, NULL) ||
			    !gb_json_get_string(sample, "metric", GB_JSON_REQUIRED, &metric,
			                        NULL) ||
			    !gb_json_get_string(sample, "unit", GB_JSON_REQUIRED, &unit, NULL) ||
			    !gb_json_get_object(sample, "labels", GB_JSON_OPTIONAL, &labels,
			                        NULL) ||
			    !gb_json_get_double(sample, "solo", GB_JSON_OPTIONAL, -G_MAXDOUBLE,
			                        G_MAXDOUBLE, &solo, NULL) ||
			    !gb_json_get_double(sample, "loaded", GB_JSON_OPTIONAL, -G_MAXDOUBLE,
			                        G_MAXDOUBLE, &loaded, NULL) ||
			    !gb_json_get_double(sample, "ratio", GB_JSON_OPTIONAL, -G_MAXDOUBLE,
			                        G_MAXDOUBLE, &ratio, NULL) ||
			    !cli_compare_is_headline(test, metric, unit))
				continue;
			labels_text = cli_bench_labels_to_string(labels);
			solo_text = cli_bench_contention_cell(solo, unit);
			loaded_text = cli_bench_contention_cell(loaded, unit);
			ratio_text = isnan(ratio) ? g_strdup("—") : g_strdup_printf("%.2f", ratio);
			cli_table_add_row(table, guest->name, metric, labels_text, solo_text,
			                  loaded_text, ratio_text);
		}
	}
	if (cli_table_get_n_rows(table) == 0)
		return;
	if (out->len > 0)
		g_string_append_c(out, '\n');
	g_string_append(out,
	                "contention: each guest alone on its hypervisor (SOLO), then with all "
	                "of that hypervisor's guests at once (LOADED); RATIO = LOADED / SOLO\n");
	cli_table_render(table, color, out);
}

GString *cli_bench_view_render_text(const CliResults *results, const char *test, gboolean color)
{
	GString *out = g_string_new(NULL);
	g_autoptr(CliTable) table = NULL;
	g_autoptr(GString) notes = g_string_new(NULL);
	g_autoptr(GString) net_notes = g_string_new(NULL);
	const char *title = NULL;

	if (g_strcmp0(test, "aes") == 0) {
		cli_bench_render_aes(results, out);
	} else if (g_strcmp0(test, "disk") == 0) {
		title = "disk throughput in MB/s (1 MB = 1000000 bytes), per record size\n";
		table = cli_table_new("GUEST", "RECORD", "WRITE", "REWRITE", "READ", "REREAD",
		                      "RANDREAD", "RANDWRITE", NULL);
		cli_bench_render_disk(results, table);
	} else if (g_strcmp0(test, "mem") == 0) {
		title = "page-fault ns per 4 KiB, bandwidth in MB/s (1 MB = 1000000 bytes), "
		        "latency ns per dependent load\n";
		table = cli_table_new("GUEST", "PAGES", "FAULT ns/4k", "READ MB/s", "WRITE MB/s",
		                      "COPY MB/s", "LATENCY ns", NULL);
		cli_bench_render_mem(results, table, notes);
	} else {
		title = "TCP throughput (receiver's bytes over receiver's time); guest CPU busy "
		        "% of all CPUs and TCP retransmits during the transfer\n";
		table = cli_table_new("GUEST", "DIRECTION", "STREAMS", "Mbit/s", "MB/s", "CPU %",
		                      "SOFTIRQ %", "SYSTEM %", "RETRANS", NULL);
		cli_bench_render_net(results, table, net_notes);
	}
	if (table != NULL && cli_table_get_n_rows(table) > 0) {
		g_string_append(out, title);
		cli_table_render(table, color, out);
		if (notes->len > 0)
			g_string_append_printf(out, "unavailable:\n%s", notes->str);
		g_string_append_len(out, net_notes->str, net_notes->len);
	}
	cli_bench_render_contention(results, color, out);
	cli_bench_render_neighbours(results, out);
	cli_bench_render_partial(results, out);
	cli_bench_render_errors(results, out, color);
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

/* The status and error cells that end every row: "ok," or "error,MESSAGE". */
static void cli_bench_csv_status(GString *out, const CliResult *guest)
{
	cli_csv_append_field(out, cli_guest_status_to_string(guest->status));
	g_string_append_c(out, ',');
	if (guest->status != CLI_GUEST_OK)
		cli_csv_append_text(out, guest->error != NULL ? guest->error : "not run");
	g_string_append_c(out, '\n');
}

GString *cli_bench_view_render_csv(const CliResults *results)
{
	GString *out =
	    g_string_new("guest,metric,value,unit,labels,runs,mean,stddev,status,error\n");

	for (guint i = 0; i < results->guests->len; i++) {
		const CliResult *guest = g_ptr_array_index(results->guests, i);
		gint64 runs = 1;
		g_autoptr(GArray) samples = cli_bench_samples(guest, &runs);

		/* a guest without samples (unreachable, failed) is a row too: nothing goes missing
		 */
		if (samples->len == 0) {
			cli_csv_append_field(out, guest->name);
			g_string_append(out, ",,,,,,,,");
			cli_bench_csv_status(out, guest);
			continue;
		}
		for (guint j = 0; j < samples->len; j++) {
			const CliBenchSample *s = &g_array_index(samples, CliBenchSample, j);
			g_autofree char *labels = cli_bench_labels_to_string(s->labels);
			g_autofree char *n = g_strdup_printf(
			    "%" G_GINT64_FORMAT, s->n_runs > 0 ? (gint64)s->n_runs : runs);

			cli_csv_append_field(out, guest->name);
			g_string_append_c(out, ',');
			cli_csv_append_text(out, s->metric);
			g_string_append_c(out, ',');
			cli_bench_append_number(out, s->value);
			g_string_append_c(out, ',');
			cli_csv_append_text(out, s->unit);
			g_string_append_c(out, ',');
			cli_csv_append_text(out, labels);
			g_string_append_c(out, ',');
			g_string_append(out, n);
			g_string_append_c(out, ',');
			cli_bench_append_number(out, s->mean);
			g_string_append_c(out, ',');
			cli_bench_append_number(out, s->stddev);
			g_string_append_c(out, ',');
			cli_bench_csv_status(out, guest);
		}
	}
	return out;
}

void cli_bench_prom_append_value(GString *out, const char *value)
{
	g_autofree char *esc = cli_prom_escape_label(value);

	g_string_append_printf(out, "\"%s\"", esc);
}

/*
 * The label names of the agent's samples (protocol/BENCH.md, BENCH-disk-net.md).
 * Only these become Prometheus label names: a guest chooses label values, never
 * names, so it cannot write a name Prometheus reserves ("__..."), one that
 * collides with ours (guest, metric, unit, and merge's host) or two that clean
 * up to the same name, any of which makes node_exporter drop or refuse the file.
 */
static const char *const cli_bench_prom_labels[] = {
	"block_size", "direction",   "kind",    "op",   "pages",
	"quantile",   "record_size", "streams", "test",
};

gboolean cli_bench_prom_is_label(const char *name)
{
	for (guint i = 0; i < G_N_ELEMENTS(cli_bench_prom_labels); i++) {
		if (g_strcmp0(name, cli_bench_prom_labels[i]) == 0)
			return TRUE;
	}
	return FALSE;
}

static void cli_bench_prom_series(GString *out, const char *family, const CliResult *guest,
                                  const CliBenchSample *s, double value)
{
	g_autoptr(GList) members = NULL;
	g_autoptr(JsonObject) other = json_object_new();

	g_string_append_printf(out, "%s{guest=", family);
	cli_bench_prom_append_value(out, guest->name);
	g_string_append(out, ",metric=");
	cli_bench_prom_append_value(out, s->metric);
	g_string_append(out, ",unit=");
	cli_bench_prom_append_value(out, s->unit != NULL ? s->unit : "");
	if (s->labels != NULL)
		members = json_object_get_members(s->labels);
	for (GList *l = members; l != NULL; l = l->next) {
		const char *v = NULL;

		if (!gb_json_get_string(s->labels, l->data, GB_JSON_OPTIONAL, &v, NULL) ||
		    v == NULL)
			continue;
		if (!cli_bench_prom_is_label(l->data)) {
			json_object_set_string_member(other, l->data, v);
			continue;
		}
		g_string_append_printf(out, ",%s=", (const char *)l->data);
		cli_bench_prom_append_value(out, v);
	}
	/* any other label still tells series apart, as one value: "k=v;k=v" */
	if (json_object_get_size(other) > 0) {
		g_autofree char *rest = cli_bench_labels_to_string(other);

		g_string_append(out, ",other_labels=");
		cli_bench_prom_append_value(out, rest);
	}
	g_string_append(out, "} ");
	cli_bench_append_number(out, value);
	g_string_append_c(out, '\n');
}

GString *cli_bench_view_render_prom(const CliResults *results)
{
	GString *out = g_string_new(NULL);
	g_autoptr(GString) stddevs = g_string_new(NULL);

	/* every guest asked, answered or not: a failed one is guestbench_up 0, not a gap */
	cli_prom_append_up(out, results);
	g_string_append(out, "# HELP guestbench_bench_value A guestbench benchmark sample (the "
	                     "mean when repeated); the unit label gives its unit.\n"
	                     "# TYPE guestbench_bench_value gauge\n");
	for (guint i = 0; i < results->guests->len; i++) {
		const CliResult *guest = g_ptr_array_index(results->guests, i);
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
