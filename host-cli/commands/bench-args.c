/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"

#include <math.h>
#include <string.h>

#include "guestbench-protocol.h"

#include "commands/bench-args.h"
#include "render/bench-view.h"
#include "render/escape.h"
#include "transport/reply-limit.h"

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

/* A whole number in min..max, for --runs, --threads, --streams, --omit. */
gboolean cli_bench_parse_uint(const char *option, const char *text, guint64 min, guint64 max,
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

gboolean cli_bench_parse_seconds(const char *text, double min, double max, double *out,
                                 GError **error)
{
	char *end = NULL;
	double value;

	value = g_ascii_strtod(text, &end);
	if (text[0] == '\0' || g_ascii_isspace(text[0]) || end == NULL || *end != '\0' ||
	    !isfinite(value) || value < min || value > max) {
		/* without an upper bound the caller checks the range against the shared limits */
		if (isinf(max))
			g_set_error(
			    error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT,
			    "invalid value '%s' for --seconds (expected a number of seconds)",
			    text);
		else
			g_set_error(
			    error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT,
			    "invalid value '%s' for --seconds (expected seconds from %g to %g)",
			    text, min, max);
		return FALSE;
	}
	*out = value;
	return TRUE;
}

JsonArray *cli_bench_sizes_to_json(GArray *sizes)
{
	JsonArray *array = json_array_new();

	for (guint i = 0; i < sizes->len; i++)
		json_array_add_int_element(array, (gint64)g_array_index(sizes, guint64, i));
	return array;
}

JsonArray *cli_bench_strv_to_json(GStrv strv)
{
	JsonArray *array = json_array_new();

	for (guint i = 0; strv[i] != NULL; i++)
		json_array_add_string_element(array, strv[i]);
	return array;
}

/* The length of an array param, or def when the param is absent. */
static double cli_bench_param_count(JsonObject *params, const char *member, double def)
{
	JsonArray *array = NULL;

	if (!gb_json_get_array(params, member, GB_JSON_OPTIONAL, &array, NULL) || array == NULL)
		return def;
	return json_array_get_length(array);
}

static double cli_bench_param_number(JsonObject *params, const char *member, double def)
{
	double value = def;

	if (!gb_json_get_double(params, member, GB_JSON_OPTIONAL, 0, G_MAXDOUBLE, &value, NULL))
		return def;
	return value;
}

double cli_bench_job_bound(const char *test, JsonObject *params, double *work)
{
	double runs = cli_bench_param_number(params, "runs", 1);
	double per_run = 0;

	if (g_strcmp0(test, "aes") == 0) {
		per_run = cli_bench_param_count(params, "sizes",
		                                G_N_ELEMENTS(gb_bench_aes_default_sizes)) *
		          cli_bench_param_number(params, "seconds", GB_BENCH_AES_DEFAULT_SECONDS);
	} else if (g_strcmp0(test, "disk") == 0) {
		g_auto(GStrv) tests = NULL;
		/* write, rewrite, read, reread, randread, randwrite */
		double passes = 6;

		if (gb_json_get_strv(params, "tests", GB_JSON_OPTIONAL, &tests, NULL) &&
		    tests != NULL)
			passes = g_strv_length(tests) +
			         (g_strv_contains((const char *const *)tests, "write") ? 0 : 1);
		per_run = cli_bench_param_count(params, "record_sizes",
		                                G_N_ELEMENTS(gb_bench_disk_default_records)) *
		          passes *
		          cli_bench_param_number(params, "size", GB_BENCH_DISK_DEFAULT_SIZE) /
		          CLI_BENCH_BOUND_DISK_RATE;
	} else if (g_strcmp0(test, "mem") == 0) {
		/* 4k, thp, hugetlb */
		per_run = cli_bench_param_count(params, "pages", 3) *
		          (GB_BENCH_MEM_SECONDS_PER_KIND +
		           cli_bench_param_number(params, "size", GB_BENCH_MEM_DEFAULT_SIZE) /
		               CLI_BENCH_BOUND_MEM_RATE);
	} else if (g_strcmp0(test, "net") == 0) {
		per_run = cli_bench_param_number(params, "accept_timeout",
		                                 GB_BENCH_NET_DEFAULT_ACCEPT_TIMEOUT) +
		          cli_bench_param_number(params, "omit", GB_BENCH_NET_DEFAULT_OMIT) +
		          cli_bench_param_number(params, "seconds", GB_BENCH_NET_DEFAULT_SECONDS);
	}
	if (work != NULL)
		*work = runs * per_run;
	return ceil(2.0 * runs * per_run + CLI_BENCH_BOUND_MARGIN);
}

gsize cli_bench_result_limit(const char *test, JsonObject *params, gsize cap)
{
	double runs = cli_bench_param_number(params, "runs", 1);
	double entries = 16;
	double limit;

	if (g_strcmp0(test, "aes") == 0) {
		entries = cli_bench_param_count(params, "sizes",
		                                G_N_ELEMENTS(gb_bench_aes_default_sizes));
	} else if (g_strcmp0(test, "disk") == 0) {
		entries = cli_bench_param_count(params, "record_sizes",
		                                G_N_ELEMENTS(gb_bench_disk_default_records)) *
		          6 * 4;
	} else if (g_strcmp0(test, "mem") == 0) {
		entries = cli_bench_param_count(params, "pages", 3) * 16;
	} else if (g_strcmp0(test, "net") == 0) {
		entries =
		    2 * (cli_bench_param_number(params, "omit", GB_BENCH_NET_DEFAULT_OMIT) +
		         cli_bench_param_number(params, "seconds", GB_BENCH_NET_DEFAULT_SECONDS)) +
		    16;
	}
	limit = (double)cli_reply_limit("gb-get-facts", cap) + CLI_BENCH_RESULT_OVERHEAD +
	        (runs + 1) * entries * CLI_BENCH_RESULT_ENTRY_SIZE;
	return limit >= (double)cap ? cap : (gsize)limit;
}
