/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"

#include <glib/gstdio.h>
#include <math.h>
#include <string.h>
#include <sys/stat.h>

#include "guestbench-protocol.h"

#include "analysis/units.h"

#include "analysis/compare.h"
#include "analysis/runs.h"
#include "analysis/stats.h"

/* A saved document bigger than this is not one `guestbench bench` wrote. */
#define CLI_COMPARE_MAX_FILE_SIZE (256 * 1024 * 1024)

/* ---- lifetime ------------------------------------------------------------------------ */

static void cli_compare_column_free(CliCompareColumn *col)
{
	if (col == NULL)
		return;
	g_free(col->label);
	g_free(col->source);
	g_free(col->given);
	g_free(col->guest);
	g_free(col->test);
	g_free(col->error);
	g_free(col->timestamp);
	g_free(col->agent_version);
	if (col->params != NULL)
		json_object_unref(col->params);
	if (col->facts != NULL)
		json_object_unref(col->facts);
	if (col->result != NULL)
		json_object_unref(col->result);
	g_free(col);
}

static void cli_compare_row_free(CliCompareRow *row, guint n_columns)
{
	g_free(row->test);
	g_free(row->metric);
	g_free(row->unit);
	g_free(row->labels_key);
	g_free(row->labels_text);
	g_strfreev(row->label_names);
	g_strfreev(row->label_values);
	for (guint i = 0; i < n_columns; i++)
		g_free(row->cells[i].unavailable);
	g_free(row->cells);
	g_free(row->ratios);
	g_free(row->significance);
	g_free(row);
}

static void cli_compare_mismatch_free(CliCompareMismatch *mm)
{
	g_free(mm->test);
	g_free(mm->param);
	for (guint o = 0; o < mm->n_values; o++)
		g_free(mm->values[o]);
	g_free(mm->values);
	g_free(mm);
}

CliComparison *cli_comparison_new(CliCompareBy by)
{
	CliComparison *cmp = g_new0(CliComparison, 1);

	cmp->by = by;
	cmp->columns = g_ptr_array_new_with_free_func((GDestroyNotify)cli_compare_column_free);
	cmp->rows = g_ptr_array_new();
	cmp->pairs = g_ptr_array_new_with_free_func(g_free);
	cmp->mismatches = g_ptr_array_new_with_free_func((GDestroyNotify)cli_compare_mismatch_free);
	cmp->docs = g_ptr_array_new_with_free_func((GDestroyNotify)json_node_unref);
	return cmp;
}

static void cli_comparison_clear_rows(CliComparison *cmp)
{
	for (guint i = 0; i < cmp->rows->len; i++)
		cli_compare_row_free(g_ptr_array_index(cmp->rows, i), cmp->columns->len);
	g_ptr_array_set_size(cmp->rows, 0);
	cmp->n_empty_rows = 0;
	for (guint c = 0; c < cmp->columns->len; c++)
		((CliCompareColumn *)g_ptr_array_index(cmp->columns, c))->n_runs = 0;
	g_ptr_array_set_size(cmp->pairs, 0);
	g_ptr_array_set_size(cmp->mismatches, 0);
}

void cli_comparison_free(CliComparison *cmp)
{
	if (cmp == NULL)
		return;
	cli_comparison_clear_rows(cmp);
	g_ptr_array_unref(cmp->rows);
	g_ptr_array_unref(cmp->pairs);
	g_ptr_array_unref(cmp->mismatches);
	g_ptr_array_unref(cmp->columns);
	g_ptr_array_unref(cmp->docs);
	g_free(cmp);
}

/* ---- loading ------------------------------------------------------------------------- */

char *cli_compare_resolve(const char *arg, const char *results_dir, GError **error)
{
	g_autofree char *dir = NULL;
	g_autofree char *name = NULL;
	g_autofree char *path = NULL;

	if (arg == NULL || arg[0] == '\0') {
		g_set_error_literal(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT,
		                    "an empty file name");
		return NULL;
	}
	if (g_file_test(arg, G_FILE_TEST_EXISTS) || strchr(arg, '/') != NULL ||
	    g_str_has_suffix(arg, ".json") || g_strcmp0(arg, ".") == 0 || g_strcmp0(arg, "..") == 0)
		return g_strdup(arg);
	/* a saved run's id: never a path, so it cannot walk out of the results directory */
	dir = results_dir != NULL
	          ? g_strdup(results_dir)
	          : g_build_filename(g_get_user_data_dir(), "guestbench", "results", NULL);
	name = g_strdup_printf("%s.json", arg);
	path = g_build_filename(dir, name, NULL);
	if (!g_file_test(path, G_FILE_TEST_EXISTS)) {
		g_set_error(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT,
		            "%s: no such file, and no saved result %s in %s", arg, name, dir);
		return NULL;
	}
	return g_steal_pointer(&path);
}

/* One metric sample into a cell; what = "guests[0].result.metrics[3]" for errors. */
static gboolean cli_compare_parse_sample(JsonObject *sample, CliCompareCell *cell, GError **error)
{
	JsonArray *runs = NULL;
	const char *unavailable = NULL;
	double value = 0;

	if (!gb_json_get_string(sample, "unavailable", GB_JSON_OPTIONAL, &unavailable, error) ||
	    !gb_json_get_array(sample, "runs", GB_JSON_OPTIONAL, &runs, error))
		return FALSE;
	cell->n_runs = 1;
	if (runs != NULL) {
		guint n = json_array_get_length(runs);
		gboolean complete = n > 0;
		double sum = 0, sumsq = 0;

		for (guint r = 0; r < n; r++) {
			JsonNode *node = json_array_get_element(runs, r);
			g_autofree char *what = g_strdup_printf("runs[%u]", r);
			double v = 0;

			/* a run without a value (null) makes the whole sample have none */
			if (JSON_NODE_HOLDS_NULL(node)) {
				complete = FALSE;
				continue;
			}
			if (!gb_json_node_get_double(node, what, &v, error))
				return FALSE;
			sum += v;
		}
		if (complete) {
			double mean = sum / n;
			for (guint r = 0; r < n; r++) {
				double d = json_array_get_double_element(runs, r) - mean;
				sumsq += d * d;
			}
			/* recomputed from the raw runs: the saved mean/stddev are not trusted */
			cell->present = TRUE;
			cell->n_runs = n;
			cell->mean = mean;
			cell->value = mean;
			cell->stddev = n > 1 ? sqrt(sumsq / (n - 1)) : 0.0;
		}
	}
	if (!cell->present && (runs == NULL || gb_json_has(sample, "value"))) {
		if (!gb_json_get_double(sample, "value", GB_JSON_OPTIONAL, -G_MAXDOUBLE,
		                        G_MAXDOUBLE, &value, error))
			return FALSE;
		if (gb_json_has(sample, "value")) {
			cell->present = TRUE;
			cell->n_runs = 1;
			cell->value = value;
			cell->mean = value;
			cell->stddev = 0;
		}
	}
	if (!cell->present)
		cell->unavailable = g_strdup(unavailable != NULL ? unavailable : "no value");
	return TRUE;
}

static char *cli_compare_sample_id(const char *test, const char *metric, const char *unit,
                                   JsonObject *labels);

/*
 * Checks a result's metrics: each sample well-typed, labels all strings, and
 * no sample twice (same metric, unit and labels but the run labels): a guest
 * that repeats one has no single value for that row.
 */
static gboolean cli_compare_check_metrics(JsonObject *result, const char *test, GError **error)
{
	g_autoptr(GHashTable) seen = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
	JsonArray *metrics = NULL;

	if (!gb_json_get_array(result, "metrics", GB_JSON_REQUIRED, &metrics, error))
		return FALSE;
	for (guint i = 0; i < json_array_get_length(metrics); i++) {
		g_autofree char *what = g_strdup_printf("metrics[%u]", i);
		CliCompareCell cell = { 0 };
		JsonObject *sample = NULL;
		JsonObject *labels = NULL;
		const char *metric = NULL;
		const char *unit = NULL;
		const char *str = NULL;
		char *id;

		if (!gb_json_node_get_object(json_array_get_element(metrics, i), what, &sample,
		                             error))
			return FALSE;
		if (!gb_json_get_string(sample, "metric", GB_JSON_REQUIRED, &metric, error) ||
		    !gb_json_get_string(sample, "unit", GB_JSON_REQUIRED, &unit, error) ||
		    !gb_json_get_object(sample, "labels", GB_JSON_OPTIONAL, &labels, error) ||
		    !cli_compare_parse_sample(sample, &cell, error)) {
			g_free(cell.unavailable);
			g_prefix_error(error, "%s: ", what);
			return FALSE;
		}
		g_free(cell.unavailable);
		if (labels != NULL) {
			g_autoptr(GList) names = json_object_get_members(labels);
			for (GList *l = names; l != NULL; l = l->next) {
				if (!gb_json_get_string(labels, l->data, GB_JSON_REQUIRED, &str,
				                        error)) {
					g_prefix_error(error, "%s.labels: ", what);
					return FALSE;
				}
			}
		}
		id = cli_compare_sample_id(test, metric, unit, labels);
		if (g_hash_table_contains(seen, id)) {
			g_set_error(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT,
			            "%s: %s {%s} appears twice", what, metric,
			            strrchr(id, '\x1f') + 1);
			g_free(id);
			return FALSE;
		}
		g_hash_table_add(seen, id);
	}
	return TRUE;
}

gboolean cli_compare_check_result(JsonObject *result, GError **error)
{
	const char *test = NULL;
	const char *str = NULL;
	JsonObject *obj = NULL;
	gint64 concurrent = 0;

	if (!gb_json_get_string(result, "test", GB_JSON_REQUIRED, &test, error) ||
	    !gb_json_get_object(result, "params", GB_JSON_REQUIRED, &obj, error) ||
	    !gb_json_get_object(result, "facts", GB_JSON_OPTIONAL, &obj, error) ||
	    !gb_json_get_string(result, "timestamp", GB_JSON_OPTIONAL, &str, error) ||
	    !gb_json_get_string(result, "agent_version", GB_JSON_OPTIONAL, &str, error) ||
	    !gb_json_get_object(result, "labels", GB_JSON_OPTIONAL, &obj, error) ||
	    !gb_json_get_int(obj, "concurrent", GB_JSON_OPTIONAL, 1, G_MAXINT32, &concurrent,
	                     error) ||
	    !cli_compare_check_metrics(result, test, error))
		return FALSE;
	return TRUE;
}

/*
 * One guest of a document into col. FALSE (with error) when the guest's entry
 * cannot be read; col then names the guest as far as it could be read.
 */
static gboolean cli_compare_parse_guest(JsonObject *guest, CliCompareColumn *col, GError **error)
{
	const char *name = NULL;
	const char *status = NULL;
	const char *guest_error = NULL;
	const char *str = NULL;
	JsonObject *result = NULL;
	JsonObject *labels = NULL;

	if (!gb_json_get_string(guest, "name", GB_JSON_REQUIRED, &name, error))
		return FALSE;
	col->guest = g_strdup(name);
	if (!gb_json_get_string(guest, "status", GB_JSON_REQUIRED, &status, error) ||
	    !gb_json_get_string(guest, "error", GB_JSON_OPTIONAL, &guest_error, error))
		return FALSE;
	if (g_strcmp0(status, "ok") != 0) {
		/* a guest that failed is shown as a column of "—", not dropped */
		col->error = g_strdup_printf("%s%s%s", status, guest_error != NULL ? ": " : "",
		                             guest_error != NULL ? guest_error : "");
		return TRUE;
	}
	if (!gb_json_get_object(guest, "result", GB_JSON_REQUIRED, &result, error))
		return FALSE;
	if (!cli_compare_check_result(result, error)) {
		g_prefix_error(error, "result: ");
		return FALSE;
	}
	/* checked above */
	gb_json_get_string(result, "test", GB_JSON_REQUIRED, &str, NULL);
	col->test = g_strdup(str);
	gb_json_get_string(result, "timestamp", GB_JSON_OPTIONAL, &str, NULL);
	col->timestamp = g_strdup(str);
	str = NULL;
	gb_json_get_string(result, "agent_version", GB_JSON_OPTIONAL, &str, NULL);
	col->agent_version = g_strdup(str);
	gb_json_get_object(result, "labels", GB_JSON_OPTIONAL, &labels, NULL);
	gb_json_get_int(labels, "concurrent", GB_JSON_OPTIONAL, 1, G_MAXINT32, &col->concurrent,
	                NULL);
	col->params = json_object_ref(json_object_get_object_member(result, "params"));
	col->facts = gb_json_has(result, "facts")
	                 ? json_object_ref(json_object_get_object_member(result, "facts"))
	                 : NULL;
	col->result = json_object_ref(result);
	return TRUE;
}

gboolean cli_comparison_add_data(CliComparison *cmp, const char *source, const char *label,
                                 const char *data, gsize len, GError **error)
{
	g_autoptr(JsonNode) root = NULL;
	g_autoptr(GPtrArray) cols = NULL;
	g_autoptr(GError) first_bad = NULL;
	JsonObject *doc = NULL;
	JsonArray *guests = NULL;
	const char *version = NULL;
	const char *command = NULL;
	guint n, n_bad = 0;

	root = gb_json_parse(data, len, error);
	if (root == NULL) {
		g_prefix_error(error, "%s: ", source);
		return FALSE;
	}
	if (!cli_document_open(root, &doc, &version, error) ||
	    !gb_json_get_string(doc, "command", GB_JSON_REQUIRED, &command, error) ||
	    !gb_json_get_array(doc, "guests", GB_JSON_REQUIRED, &guests, error)) {
		g_prefix_error(error, "%s: ", source);
		return FALSE;
	}
	if (g_strcmp0(command, "bench") != 0) {
		g_set_error(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT,
		            "%s: member 'command' is '%s': not a saved 'guestbench bench' result",
		            source, command);
		return FALSE;
	}
	n = json_array_get_length(guests);
	if (n == 0) {
		g_set_error(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT,
		            "%s: member 'guests' is empty: nothing to compare", source);
		return FALSE;
	}
	/*
	 * Guest by guest: one guest's unreadable entry (a guest's result is what
	 * the guest chose to send) becomes a column without values that says why,
	 * and the others are compared. A document with no readable guest fails
	 * whole, and cmp is left as it was.
	 */
	cols = g_ptr_array_new_with_free_func((GDestroyNotify)cli_compare_column_free);
	for (guint i = 0; i < n; i++) {
		g_autofree char *what = g_strdup_printf("guests[%u]", i);
		g_autoptr(GError) bad = NULL;
		CliCompareColumn *col = g_new0(CliCompareColumn, 1);
		JsonObject *guest = NULL;

		g_ptr_array_add(cols, col);
		col->source = g_strdup(source);
		if (!gb_json_node_get_object(json_array_get_element(guests, i), what, &guest,
		                             &bad) ||
		    !cli_compare_parse_guest(guest, col, &bad)) {
			g_prefix_error(&bad, "%s: %s: ", source, what);
			if (col->guest == NULL)
				col->guest = g_strdup(what);
			col->error = g_strdup_printf("unreadable entry: %s", bad->message);
			g_clear_pointer(&col->test, g_free);
			n_bad++;
			if (first_bad == NULL)
				first_bad = g_steal_pointer(&bad);
		}
		if (cmp->by == CLI_COMPARE_BY_GUEST)
			col->label = g_strdup(col->guest);
		else if (n == 1)
			col->label = g_strdup(label);
		else
			col->label = g_strdup_printf("%s/%s", label, col->guest);
	}
	if (n_bad == n) {
		g_propagate_error(error, g_steal_pointer(&first_bad));
		return FALSE;
	}
	for (guint i = 0; i < cols->len; i++)
		g_ptr_array_add(cmp->columns, g_steal_pointer(&g_ptr_array_index(cols, i)));
	g_ptr_array_set_size(cols, 0);
	g_ptr_array_add(cmp->docs, g_steal_pointer(&root));
	return TRUE;
}

gboolean cli_comparison_add_file(CliComparison *cmp, const char *path, const char *label,
                                 GError **error)
{
	g_autofree char *data = NULL;
	gsize len = 0;
	GStatBuf st;

	/* refuse a FIFO or a huge file before reading it */
	if (g_stat(path, &st) == 0 &&
	    (!S_ISREG(st.st_mode) || st.st_size > CLI_COMPARE_MAX_FILE_SIZE)) {
		g_set_error(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT,
		            "%s: not a regular file of at most %d MiB", path,
		            CLI_COMPARE_MAX_FILE_SIZE / (1024 * 1024));
		return FALSE;
	}
	if (!g_file_get_contents(path, &data, &len, error)) {
		g_prefix_error(error, "cannot read %s: ", path);
		return FALSE;
	}
	return cli_comparison_add_data(cmp, path, label, data, len, error);
}

/* ---- significance (analysis/stats.c) ------------------------------------------------ */

static CliSignificance cli_compare_cells_significance(const CliCompareCell *a,
                                                      const CliCompareCell *b)
{
	double p;

	if (!a->present || !b->present)
		return CLI_SIGNIFICANCE_UNKNOWN;
	if (a->n_runs >= 2 && b->n_runs >= 2)
		p = cli_stats_welch_p(a->mean, a->stddev, a->n_runs, b->mean, b->stddev, b->n_runs);
	else if (a->n_runs >= 2)
		p = cli_stats_single_p(b->value, a->mean, a->stddev, a->n_runs);
	else if (b->n_runs >= 2)
		p = cli_stats_single_p(a->value, b->mean, b->stddev, b->n_runs);
	else
		return CLI_SIGNIFICANCE_UNKNOWN;
	return p < CLI_COMPARE_ALPHA ? CLI_SIGNIFICANCE_YES : CLI_SIGNIFICANCE_NO;
}

/* ---- what each benchmark measures ---------------------------------------------------- */

/* The headline metrics of each test: the summary is built from these only. */
static const struct {
	const char *test;
	const char *metric; /* NULL: any metric in this unit (aes names its metric by the cipher) */
	const char *unit;
} cli_compare_headlines[] = {
	{ "aes", NULL, "B/s" },               /* throughput per block size */
	{ "disk", "disk-throughput", "B/s" }, /* per phase and record size */
	{ "mem", "page-fault", "ns" },        /* first-touch time per 4 KiB, per page kind */
	{ "mem", "memory-bandwidth", "B/s" }, /* read, write, copy per page kind */
	{ "net", "tcp-throughput", "B/s" },   /* per direction */
};

/*
 * Labels that repeat a parameter of the whole run rather than tell rows of one
 * run apart: they stay out of the row key, so runs that differ in that
 * parameter line up (the parameter is listed as differing instead).
 */
static const struct {
	const char *test;
	const char *label;
} cli_compare_run_labels[] = {
	{ "net", "streams" },
};

/* Parameters that do not change what is measured: not listed as differing. */
static const struct {
	const char *test; /* NULL: every test */
	const char *param;
} cli_compare_plumbing_params[] = {
	{ NULL, "runs" }, /* changes the noise estimate, not what is measured */
	{ "net", "port" },
};

gboolean cli_compare_is_headline(const char *test, const char *metric, const char *unit)
{
	for (guint i = 0; i < G_N_ELEMENTS(cli_compare_headlines); i++) {
		if (g_strcmp0(cli_compare_headlines[i].test, test) == 0 &&
		    (cli_compare_headlines[i].metric == NULL ||
		     g_strcmp0(cli_compare_headlines[i].metric, metric) == 0) &&
		    g_strcmp0(cli_compare_headlines[i].unit, unit) == 0)
			return TRUE;
	}
	return FALSE;
}

static gboolean cli_compare_is_run_label(const char *test, const char *label)
{
	for (guint i = 0; i < G_N_ELEMENTS(cli_compare_run_labels); i++) {
		if (g_strcmp0(cli_compare_run_labels[i].test, test) == 0 &&
		    g_strcmp0(cli_compare_run_labels[i].label, label) == 0)
			return TRUE;
	}
	return FALSE;
}

static gboolean cli_compare_is_plumbing_param(const char *test, const char *param)
{
	for (guint i = 0; i < G_N_ELEMENTS(cli_compare_plumbing_params); i++) {
		if ((cli_compare_plumbing_params[i].test == NULL ||
		     g_strcmp0(cli_compare_plumbing_params[i].test, test) == 0) &&
		    g_strcmp0(cli_compare_plumbing_params[i].param, param) == 0)
			return TRUE;
	}
	return FALSE;
}

/* ---- rows ---------------------------------------------------------------------------- */

static gboolean cli_compare_unit_lower_is_better(const char *unit)
{
	static const char *const lower[] = { "ns", "us", "µs", "ms", "s", "%", "segments", NULL };
	return g_strv_contains(lower, unit);
}

static gboolean cli_compare_label_is_bytes(const char *name)
{
	return g_strcmp0(name, "block_size") == 0 || g_strcmp0(name, "record_size") == 0 ||
	       g_strcmp0(name, "size") == 0;
}

static char *cli_compare_label_value_text(const char *name, const char *value)
{
	guint64 bytes = 0;

	if (cli_compare_label_is_bytes(name) &&
	    g_ascii_string_to_unsigned(value, 10, 0, G_MAXUINT64, &bytes, NULL))
		return cli_format_bytes(bytes);
	if (g_strcmp0(name, "quantile") == 0) {
		double q = g_ascii_strtod(value, NULL);
		if (q > 0 && q < 1)
			return g_strdup_printf("p%g", q * 100);
	}
	if (g_strcmp0(name, "streams") == 0)
		return g_strdup_printf("%s stream%s", value, g_strcmp0(value, "1") == 0 ? "" : "s");
	return g_strdup(value);
}

static gint cli_compare_label_cmp(gconstpointer a, gconstpointer b)
{
	return g_strcmp0(*(const char *const *)a, *(const char *const *)b);
}

/* The labels that tell a sample's row apart (not the run labels), sorted by name. */
static GPtrArray *cli_compare_row_label_names(const char *test, JsonObject *labels)
{
	GPtrArray *names = g_ptr_array_new();

	if (labels != NULL) {
		g_autoptr(GList) members = json_object_get_members(labels);
		for (GList *l = members; l != NULL; l = l->next) {
			if (!cli_compare_is_run_label(test, l->data))
				g_ptr_array_add(names, l->data);
		}
	}
	g_ptr_array_sort(names, cli_compare_label_cmp);
	return names;
}

static CliCompareRow *cli_compare_row_new(const char *test, const char *metric, const char *unit,
                                          JsonObject *labels, guint n_columns)
{
	CliCompareRow *row = g_new0(CliCompareRow, 1);
	g_autoptr(GPtrArray) names = cli_compare_row_label_names(test, labels);
	g_autoptr(GString) key = g_string_new(NULL);
	g_autoptr(GString) text = g_string_new(NULL);

	row->test = g_strdup(test);
	row->metric = g_strdup(metric);
	row->unit = g_strdup(unit);
	row->lower_is_better = cli_compare_unit_lower_is_better(unit);
	row->headline = cli_compare_is_headline(test, metric, unit);
	row->label_names = g_new0(char *, names->len + 1);
	row->label_values = g_new0(char *, names->len + 1);
	for (guint i = 0; i < names->len; i++) {
		const char *name = g_ptr_array_index(names, i);
		const char *value = NULL;
		g_autofree char *value_text = NULL;

		/* checked by cli_compare_check_metrics() */
		gb_json_get_string(labels, name, GB_JSON_REQUIRED, &value, NULL);
		row->label_names[i] = g_strdup(name);
		row->label_values[i] = g_strdup(value);
		g_string_append_printf(key, "%s%s=%s", i > 0 ? "," : "", name, value);
		value_text = cli_compare_label_value_text(name, value);
		/* the disk test reads best first: "randread 4 KiB p99" */
		if (g_strcmp0(name, "test") == 0)
			g_string_prepend(text, text->len > 0 ? " " : "");
		if (g_strcmp0(name, "test") == 0)
			g_string_prepend(text, value_text);
		else
			g_string_append_printf(text, "%s%s", text->len > 0 ? " " : "", value_text);
	}
	row->labels_key = g_string_free(g_steal_pointer(&key), FALSE);
	row->labels_text = g_string_free(g_steal_pointer(&text), FALSE);
	row->cells = g_new0(CliCompareCell, n_columns);
	row->ratios = g_new0(double, n_columns);
	row->significance = g_new0(CliSignificance, n_columns);
	return row;
}

static char *cli_compare_row_id(const char *test, const char *metric, const char *unit,
                                const char *labels_key)
{
	/* \x1f cannot occur in a label key: a separator that never collides */
	return g_strdup_printf("%s\x1f%s\x1f%s\x1f%s", test, metric, unit, labels_key);
}

static char *cli_compare_sample_id(const char *test, const char *metric, const char *unit,
                                   JsonObject *labels)
{
	g_autoptr(GPtrArray) names = cli_compare_row_label_names(test, labels);
	g_autoptr(GString) key = g_string_new(NULL);

	for (guint i = 0; i < names->len; i++) {
		const char *name = g_ptr_array_index(names, i);
		const char *value = NULL;

		gb_json_get_string(labels, name, GB_JSON_REQUIRED, &value, NULL);
		g_string_append_printf(key, "%s%s=%s", i > 0 ? "," : "", name, value);
	}
	return cli_compare_row_id(test, metric, unit, key->str);
}

static gboolean cli_compare_add_rows(CliComparison *cmp, guint c, GHashTable *index, GError **error)
{
	CliCompareColumn *col = g_ptr_array_index(cmp->columns, c);
	JsonArray *metrics = NULL;

	if (col->test == NULL)
		return TRUE;
	/* checked by cli_compare_check_result() when the column was read */
	gb_json_get_array(col->result, "metrics", GB_JSON_REQUIRED, &metrics, NULL);
	for (guint i = 0; i < json_array_get_length(metrics); i++) {
		JsonObject *sample = NULL;
		JsonObject *labels = NULL;
		const char *metric = NULL;
		const char *unit = NULL;
		CliCompareRow *row;
		g_autofree char *id = NULL;

		gb_json_node_get_object(json_array_get_element(metrics, i), "sample", &sample,
		                        NULL);
		gb_json_get_string(sample, "metric", GB_JSON_REQUIRED, &metric, NULL);
		gb_json_get_string(sample, "unit", GB_JSON_REQUIRED, &unit, NULL);
		gb_json_get_object(sample, "labels", GB_JSON_OPTIONAL, &labels, NULL);
		/* a column has each row once at most: cli_compare_check_metrics() */
		id = cli_compare_sample_id(col->test, metric, unit, labels);
		row = g_hash_table_lookup(index, id);
		if (row == NULL) {
			row =
			    cli_compare_row_new(col->test, metric, unit, labels, cmp->columns->len);
			g_ptr_array_add(cmp->rows, row);
			g_hash_table_insert(index, g_steal_pointer(&id), row);
		}
		if (!cli_compare_parse_sample(sample, &row->cells[c], error))
			return FALSE;
	}
	return TRUE;
}

static void cli_compare_find_mismatches(CliComparison *cmp)
{
	guint n = cmp->columns->len;

	for (guint c = 0; c < n; c++) {
		CliCompareColumn *base = g_ptr_array_index(cmp->columns, c);
		g_autoptr(GHashTable) names = NULL;
		g_autoptr(GList) keys = NULL;
		gboolean first = TRUE;

		if (base->test == NULL)
			continue;
		/* the first column of each test is its baseline */
		for (guint p = 0; p < c; p++) {
			CliCompareColumn *prev = g_ptr_array_index(cmp->columns, p);
			if (g_strcmp0(prev->test, base->test) == 0)
				first = FALSE;
		}
		if (!first)
			continue;
		names = g_hash_table_new(g_str_hash, g_str_equal);
		for (guint o = c; o < n; o++) {
			CliCompareColumn *col = g_ptr_array_index(cmp->columns, o);
			g_autoptr(GList) members = NULL;
			if (g_strcmp0(col->test, base->test) != 0)
				continue;
			members = json_object_get_members(col->params);
			for (GList *l = members; l != NULL; l = l->next)
				g_hash_table_add(names, l->data);
		}
		keys = g_hash_table_get_keys(names);
		keys = g_list_sort(keys, (GCompareFunc)g_strcmp0);
		for (GList *l = keys; l != NULL; l = l->next) {
			const char *param = l->data;
			g_auto(GStrv) values = g_new0(char *, n + 1);
			gboolean differ = FALSE;
			const char *first_value = NULL;

			if (cli_compare_is_plumbing_param(base->test, param))
				continue;
			for (guint o = 0; o < n; o++) {
				CliCompareColumn *col = g_ptr_array_index(cmp->columns, o);
				JsonNode *node;
				if (g_strcmp0(col->test, base->test) != 0)
					continue;
				node = json_object_get_member(col->params, param);
				values[o] =
				    node != NULL ? cli_format_json_value(node) : g_strdup("absent");
				if (first_value == NULL)
					first_value = values[o];
				else if (g_strcmp0(first_value, values[o]) != 0)
					differ = TRUE;
			}
			if (differ) {
				CliCompareMismatch *mm = g_new0(CliCompareMismatch, 1);
				mm->test = g_strdup(base->test);
				mm->param = g_strdup(param);
				/* keep the per-column slots, NULL for columns of other tests */
				mm->values = g_new0(char *, n + 1);
				mm->n_values = n;
				for (guint o = 0; o < n; o++)
					mm->values[o] = g_strdup(values[o]);
				g_ptr_array_add(cmp->mismatches, mm);
			}
			/* values has NULL holes: free each slot, not as a vector */
			for (guint o = 0; o < n; o++)
				g_clear_pointer(&values[o], g_free);
		}
	}
}

static void cli_compare_sort_rows(CliComparison *cmp);

/* A row without a value in any column says nothing: it is neither shown nor counted. */
static void cli_compare_drop_empty_rows(CliComparison *cmp)
{
	guint kept = 0;

	for (guint r = 0; r < cmp->rows->len; r++) {
		CliCompareRow *row = g_ptr_array_index(cmp->rows, r);
		gboolean any = FALSE;

		for (guint c = 0; c < cmp->columns->len; c++) {
			CliCompareColumn *col = g_ptr_array_index(cmp->columns, c);
			if (row->cells[c].present) {
				any = TRUE;
				col->n_runs = MAX(col->n_runs, row->cells[c].n_runs);
			}
		}
		if (!any) {
			cli_compare_row_free(row, cmp->columns->len);
			cmp->n_empty_rows++;
			continue;
		}
		cmp->rows->pdata[kept++] = row;
	}
	g_ptr_array_set_size(cmp->rows, kept);
}

static void cli_compare_summarize(CliComparison *cmp)
{
	for (guint c = 1; c < cmp->columns->len; c++) {
		CliComparePair *pair = g_new0(CliComparePair, 1);
		double sum_log = 0, best = -INFINITY, worst = INFINITY;

		pair->column = c;
		pair->best_row = -1;
		pair->worst_row = -1;
		for (guint r = 0; r < cmp->rows->len; r++) {
			CliCompareRow *row = g_ptr_array_index(cmp->rows, r);
			double perf;

			if (!row->headline)
				continue;
			if (row->significance[c] == CLI_SIGNIFICANCE_NO)
				pair->n_not_significant++;
			/* a ratio of zero or a negative value has no logarithm */
			if (isnan(row->ratios[c]) || !(row->ratios[c] > 0) || isinf(row->ratios[c]))
				continue;
			perf = row->lower_is_better ? 1.0 / row->ratios[c] : row->ratios[c];
			sum_log += log(perf);
			pair->n_rows++;
			if (perf > best) {
				best = perf;
				pair->best_row = r;
			}
			if (perf < worst) {
				worst = perf;
				pair->worst_row = r;
			}
		}
		pair->geomean = pair->n_rows > 0 ? exp(sum_log / pair->n_rows) : NAN;
		g_ptr_array_add(cmp->pairs, pair);
	}
}

gboolean cli_comparison_compute(CliComparison *cmp, GError **error)
{
	g_autoptr(GHashTable) index = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
	guint n = cmp->columns->len;

	cli_comparison_clear_rows(cmp);
	if (n < 2) {
		g_set_error(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT,
		            "nothing to compare: %u column%s (give two or more documents, or "
		            "one document with several guests)",
		            n, n == 1 ? "" : "s");
		return FALSE;
	}
	for (guint c = 1; c < n; c++) {
		CliCompareColumn *col = g_ptr_array_index(cmp->columns, c);
		for (guint p = 0; p < c && col->test != NULL; p++) {
			CliCompareColumn *prev = g_ptr_array_index(cmp->columns, p);
			if (prev->test == NULL || g_strcmp0(prev->test, col->test) == 0)
				continue;
			g_set_error(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT,
			            "cannot compare different benchmarks: %s ran %s, %s ran %s "
			            "(compare runs of one test)",
			            prev->label, prev->test, col->label, col->test);
			return FALSE;
		}
	}
	for (guint c = 0; c < n; c++) {
		if (!cli_compare_add_rows(cmp, c, index, error))
			return FALSE;
	}
	cli_compare_drop_empty_rows(cmp);
	cli_compare_sort_rows(cmp);
	for (guint r = 0; r < cmp->rows->len; r++) {
		CliCompareRow *row = g_ptr_array_index(cmp->rows, r);
		const CliCompareCell *base = &row->cells[0];

		for (guint c = 0; c < n; c++) {
			const CliCompareCell *cell = &row->cells[c];
			row->ratios[c] = base->present && cell->present && base->value != 0
			                     ? cell->value / base->value
			                     : NAN;
			row->significance[c] = c == 0 ? CLI_SIGNIFICANCE_UNKNOWN
			                              : cli_compare_cells_significance(base, cell);
		}
	}
	cli_compare_find_mismatches(cmp);
	cli_compare_summarize(cmp);
	return TRUE;
}

/* ---- rows of one metric ------------------------------------------------------------- */

/* Rows of one (test, metric, unit) follow each other: [first, end). */
guint cli_compare_group_end(CliComparison *cmp, guint first)
{
	CliCompareRow *head = g_ptr_array_index(cmp->rows, first);
	guint end = first + 1;

	while (end < cmp->rows->len) {
		CliCompareRow *row = g_ptr_array_index(cmp->rows, end);
		if (g_strcmp0(row->test, head->test) != 0 ||
		    g_strcmp0(row->metric, head->metric) != 0 ||
		    g_strcmp0(row->unit, head->unit) != 0)
			break;
		end++;
	}
	return end;
}

/* Rows of one metric may come from several columns in any order: keep groups together. */
static void cli_compare_sort_rows(CliComparison *cmp)
{
	g_autoptr(GPtrArray) sorted = g_ptr_array_new();
	g_autofree gboolean *taken = g_new0(gboolean, cmp->rows->len);

	for (guint r = 0; r < cmp->rows->len; r++) {
		CliCompareRow *head = g_ptr_array_index(cmp->rows, r);
		if (taken[r])
			continue;
		for (guint o = r; o < cmp->rows->len; o++) {
			CliCompareRow *row = g_ptr_array_index(cmp->rows, o);
			if (taken[o] || g_strcmp0(row->test, head->test) != 0 ||
			    g_strcmp0(row->metric, head->metric) != 0 ||
			    g_strcmp0(row->unit, head->unit) != 0)
				continue;
			taken[o] = TRUE;
			g_ptr_array_add(sorted, row);
		}
	}
	for (guint r = 0; r < sorted->len; r++)
		cmp->rows->pdata[r] = sorted->pdata[r];
}
