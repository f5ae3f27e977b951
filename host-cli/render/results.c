/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"

#include "render/output.h"
#include "render/results.h"

const char *cli_guest_status_to_string(CliGuestStatus status)
{
	switch (status) {
	case CLI_GUEST_PENDING:
		return "pending";
	case CLI_GUEST_RUNNING:
		return "running";
	case CLI_GUEST_OK:
		return "ok";
	case CLI_GUEST_ERROR:
		return "error";
	case CLI_GUEST_TIMEOUT:
		return "timeout";
	case CLI_GUEST_BUSY:
		return "busy";
	default:
		break;
	}
	return "unknown";
}

gboolean cli_guest_status_from_string(const char *text, CliGuestStatus *status)
{
	if (g_strcmp0(text, "ok") == 0)
		*status = CLI_GUEST_OK;
	else if (g_strcmp0(text, "error") == 0)
		*status = CLI_GUEST_ERROR;
	else if (g_strcmp0(text, "timeout") == 0)
		*status = CLI_GUEST_TIMEOUT;
	else if (g_strcmp0(text, "busy") == 0)
		*status = CLI_GUEST_BUSY;
	else
		return FALSE;
	return TRUE;
}

CliResult *cli_result_new(const char *name, const char *target, CliGuestStatus status,
                          const char *error, JsonNode *result)
{
	CliResult *res = g_new0(CliResult, 1);

	res->name = g_strdup(name);
	res->target = g_strdup(target);
	res->status = status;
	res->error = g_strdup(error);
	res->result = result != NULL ? json_node_ref(result) : NULL;
	return res;
}

void cli_result_free(CliResult *result)
{
	if (result == NULL)
		return;
	g_free(result->name);
	g_free(result->target);
	g_free(result->error);
	if (result->result != NULL)
		json_node_unref(result->result);
	g_free(result);
}

CliResults *cli_results_new(const char *command)
{
	CliResults *results = g_new0(CliResults, 1);

	results->command = g_strdup(command);
	results->guests = g_ptr_array_new_with_free_func((GDestroyNotify)cli_result_free);
	return results;
}

void cli_results_free(CliResults *results)
{
	if (results == NULL)
		return;
	g_free(results->command);
	g_ptr_array_unref(results->guests);
	g_free(results);
}

void cli_results_add(CliResults *results, CliResult *result)
{
	g_ptr_array_add(results->guests, result);
}

CliResults *cli_results_filter_failed(const CliResults *results)
{
	CliResults *failed = cli_results_new(results->command);

	for (guint i = 0; i < results->guests->len; i++) {
		const CliResult *guest = g_ptr_array_index(results->guests, i);

		if (guest->status != CLI_GUEST_OK)
			cli_results_add(failed,
			                cli_result_new(guest->name, guest->target, guest->status,
			                               guest->error, guest->result));
	}
	return failed;
}

GString *cli_results_render_json(const CliResults *results)
{
	g_autoptr(JsonBuilder) builder = json_builder_new();
	g_autoptr(JsonNode) root = NULL;

	json_builder_begin_object(builder);
	json_builder_set_member_name(builder, "guestbench");
	json_builder_add_string_value(builder, GB_VERSION);
	json_builder_set_member_name(builder, "command");
	json_builder_add_string_value(builder, results->command != NULL ? results->command : "");
	json_builder_set_member_name(builder, "guests");
	json_builder_begin_array(builder);
	for (guint i = 0; i < results->guests->len; i++) {
		const CliResult *guest = g_ptr_array_index(results->guests, i);

		json_builder_begin_object(builder);
		json_builder_set_member_name(builder, "name");
		json_builder_add_string_value(builder, guest->name);
		json_builder_set_member_name(builder, "target");
		json_builder_add_string_value(builder, guest->target);
		json_builder_set_member_name(builder, "status");
		json_builder_add_string_value(builder, cli_guest_status_to_string(guest->status));
		if (guest->status != CLI_GUEST_OK) {
			json_builder_set_member_name(builder, "error");
			json_builder_add_string_value(builder, guest->error != NULL ? guest->error
			                                                            : "not run");
		}
		json_builder_set_member_name(builder, "result");
		if (guest->result != NULL)
			json_builder_add_value(builder, json_node_copy(guest->result));
		else
			json_builder_add_null_value(builder);
		json_builder_end_object(builder);
	}
	json_builder_end_array(builder);
	json_builder_end_object(builder);

	root = json_builder_get_root(builder);
	return cli_output_json_document(root);
}

CliTable *cli_results_default_table(const CliResults *results, CliResultDescribeFunc describe)
{
	CliTable *table = cli_table_new("GUEST", "STATUS", "DETAIL", NULL);

	for (guint i = 0; i < results->guests->len; i++) {
		const CliResult *guest = g_ptr_array_index(results->guests, i);
		g_autofree char *detail = NULL;

		if (guest->status == CLI_GUEST_OK && describe != NULL)
			detail = describe(guest);
		else if (guest->status != CLI_GUEST_OK)
			detail = g_strdup(guest->error != NULL ? guest->error : "not run");
		cli_table_add_row(table, guest->name, cli_guest_status_to_string(guest->status),
		                  detail);
	}
	return table;
}
