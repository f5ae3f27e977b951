/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"

#include <math.h>

#include "guestbench-protocol.h"

#include "analysis/compare.h"
#include "commands/bench-contention.h"
#include "render/results.h"

static void cli_bench_contention_add_value(JsonBuilder *builder, const char *name, gboolean present,
                                           double value)
{
	json_builder_set_member_name(builder, name);
	if (present && isfinite(value))
		json_builder_add_double_value(builder, value);
	else
		json_builder_add_null_value(builder);
}

gboolean cli_bench_contention_attach(JsonNode *loaded, JsonNode *solo, GError **error)
{
	g_autoptr(CliResults) results = cli_results_new("bench");
	g_autoptr(CliComparison) cmp = cli_comparison_new(CLI_COMPARE_BY_GUEST);
	g_autoptr(JsonBuilder) builder = json_builder_new();
	g_autoptr(GString) doc = NULL;
	g_autoptr(JsonNode) contention = NULL;
	JsonObject *obj = NULL;

	if (!gb_json_node_get_object(loaded, "result", &obj, error))
		return FALSE;
	/* the two as one document of two guests: compare reads and matches them */
	cli_results_add(results, cli_result_new("solo", "solo", CLI_GUEST_OK, NULL, solo));
	cli_results_add(results, cli_result_new("loaded", "loaded", CLI_GUEST_OK, NULL, loaded));
	doc = cli_results_render_json(results);
	if (!cli_comparison_add_data(cmp, "contention", "contention", doc->str, doc->len, error) ||
	    !cli_comparison_compute(cmp, error))
		return FALSE;
	json_builder_begin_object(builder);
	json_builder_set_member_name(builder, "solo");
	json_builder_add_value(builder, json_node_copy(solo));
	json_builder_set_member_name(builder, "samples");
	json_builder_begin_array(builder);
	for (guint r = 0; r < cmp->rows->len; r++) {
		const CliCompareRow *row = g_ptr_array_index(cmp->rows, r);

		json_builder_begin_object(builder);
		json_builder_set_member_name(builder, "metric");
		json_builder_add_string_value(builder, row->metric);
		json_builder_set_member_name(builder, "unit");
		json_builder_add_string_value(builder, row->unit);
		json_builder_set_member_name(builder, "labels");
		json_builder_begin_object(builder);
		for (guint i = 0; row->label_names != NULL && row->label_names[i] != NULL; i++) {
			json_builder_set_member_name(builder, row->label_names[i]);
			json_builder_add_string_value(builder, row->label_values[i]);
		}
		json_builder_end_object(builder);
		cli_bench_contention_add_value(builder, "solo", row->cells[0].present,
		                               row->cells[0].value);
		cli_bench_contention_add_value(builder, "loaded", row->cells[1].present,
		                               row->cells[1].value);
		cli_bench_contention_add_value(builder, "ratio", TRUE, row->ratios[1]);
		json_builder_end_object(builder);
	}
	json_builder_end_array(builder);
	json_builder_end_object(builder);
	contention = json_builder_get_root(builder);
	json_object_set_member(obj, "contention", g_steal_pointer(&contention));
	return TRUE;
}
