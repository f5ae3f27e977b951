/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"

#include "guestbench-protocol.h"

#include "commands/commands.h"
#include "render/csv.h"
#include "render/prom.h"

/* Rebuilds guest-info from checked members only: the JSON document never echoes junk. */
static JsonNode *cli_info_parse(JsonNode *ret, GError **error)
{
	JsonObject *obj = NULL;
	JsonArray *cmds = NULL;
	const char *version = NULL;
	g_autoptr(JsonBuilder) builder = json_builder_new();

	if (!gb_json_node_get_object(ret, "return", &obj, error))
		return NULL;
	if (!gb_json_get_string(obj, "version", GB_JSON_REQUIRED, &version, error))
		return NULL;
	if (!gb_json_get_array(obj, "supported_commands", GB_JSON_REQUIRED, &cmds, error))
		return NULL;

	json_builder_begin_object(builder);
	json_builder_set_member_name(builder, "version");
	json_builder_add_string_value(builder, version);
	json_builder_set_member_name(builder, "supported_commands");
	json_builder_begin_array(builder);
	for (guint i = 0; i < json_array_get_length(cmds); i++) {
		g_autofree char *what = g_strdup_printf("supported_commands[%u]", i);
		JsonObject *cmd = NULL;
		const char *name = NULL;
		gboolean enabled = TRUE;
		gboolean success_response = TRUE;

		if (!gb_json_node_get_object(json_array_get_element(cmds, i), what, &cmd, error))
			return NULL;
		if (!gb_json_get_string(cmd, "name", GB_JSON_REQUIRED, &name, error) ||
		    !gb_json_get_bool(cmd, "enabled", GB_JSON_OPTIONAL, &enabled, error) ||
		    !gb_json_get_bool(cmd, "success-response", GB_JSON_OPTIONAL, &success_response,
		                      error)) {
			g_prefix_error(error, "%s: ", what);
			return NULL;
		}
		json_builder_begin_object(builder);
		json_builder_set_member_name(builder, "name");
		json_builder_add_string_value(builder, name);
		json_builder_set_member_name(builder, "enabled");
		json_builder_add_boolean_value(builder, enabled);
		json_builder_set_member_name(builder, "success-response");
		json_builder_add_boolean_value(builder, success_response);
		json_builder_end_object(builder);
	}
	json_builder_end_array(builder);
	json_builder_end_object(builder);
	return json_builder_get_root(builder);
}

static void cli_info_reply_cb(CliSession *session, JsonNode *ret, const GError *error,
                              gpointer user_data)
{
	CliGuest *guest = user_data;
	g_autoptr(GError) error_local = NULL;
	JsonNode *result;

	if (error != NULL) {
		cli_guest_finish(guest, NULL, error);
		return;
	}
	result = cli_info_parse(ret, &error_local);
	if (result == NULL) {
		g_prefix_error(&error_local, "invalid guest-info reply: ");
		cli_guest_finish(guest, NULL, error_local);
		return;
	}
	cli_guest_finish(guest, result, NULL);
}

static void cli_info_start(CliGuest *guest, CliSession *session)
{
	cli_session_call(session, "guest-info", NULL, cli_info_reply_cb, guest);
}

/* "VERSION" and "N/M enabled: a, b, ..." from our own rebuilt result. */
static void cli_info_summarize(const CliResult *guest, char **version_out, char **detail_out)
{
	JsonObject *obj = NULL;
	JsonArray *cmds = NULL;
	const char *version = "";
	g_autoptr(GString) names = g_string_new(NULL);
	guint n_enabled = 0;
	guint n_total = 0;

	if (gb_json_node_get_object(guest->result, "result", &obj, NULL)) {
		gb_json_get_string(obj, "version", GB_JSON_OPTIONAL, &version, NULL);
		gb_json_get_array(obj, "supported_commands", GB_JSON_OPTIONAL, &cmds, NULL);
	}
	n_total = cmds != NULL ? json_array_get_length(cmds) : 0;
	for (guint i = 0; i < n_total; i++) {
		JsonObject *cmd = NULL;
		const char *name = NULL;
		gboolean enabled = FALSE;

		if (!gb_json_node_get_object(json_array_get_element(cmds, i), "command", &cmd,
		                             NULL) ||
		    !gb_json_get_string(cmd, "name", GB_JSON_REQUIRED, &name, NULL) ||
		    !gb_json_get_bool(cmd, "enabled", GB_JSON_REQUIRED, &enabled, NULL) || !enabled)
			continue;
		n_enabled++;
		g_string_append_printf(names, "%s%s", names->len > 0 ? ", " : "", name);
	}
	*version_out = g_strdup(version);
	*detail_out = g_strdup_printf("%u/%u enabled: %s", n_enabled, n_total, names->str);
}

static CliTable *cli_info_render_table(const CliResults *results)
{
	CliTable *table = cli_table_new("GUEST", "STATUS", "VERSION", "DETAIL", NULL);

	for (guint i = 0; i < results->guests->len; i++) {
		const CliResult *guest = g_ptr_array_index(results->guests, i);
		g_autofree char *version = NULL;
		g_autofree char *detail = NULL;

		if (guest->status == CLI_GUEST_OK) {
			cli_info_summarize(guest, &version, &detail);
		} else {
			detail = g_strdup(guest->error != NULL ? guest->error : "not run");
		}
		cli_table_add_row(table, guest->name, cli_guest_status_to_string(guest->status),
		                  version, detail);
	}
	return table;
}

/* The enabled command names of an ok guest, ';'-separated (for the CSV cell). */
static char *cli_info_enabled_names(const CliResult *guest)
{
	JsonObject *obj = NULL;
	JsonArray *cmds = NULL;
	g_autoptr(GString) names = g_string_new(NULL);

	if (!gb_json_node_get_object(guest->result, "result", &obj, NULL) ||
	    !gb_json_get_array(obj, "supported_commands", GB_JSON_REQUIRED, &cmds, NULL))
		return g_strdup("");
	for (guint i = 0; i < json_array_get_length(cmds); i++) {
		JsonObject *cmd = NULL;
		const char *name = NULL;
		gboolean enabled = FALSE;

		if (!gb_json_node_get_object(json_array_get_element(cmds, i), "command", &cmd,
		                             NULL) ||
		    !gb_json_get_string(cmd, "name", GB_JSON_REQUIRED, &name, NULL) ||
		    !gb_json_get_bool(cmd, "enabled", GB_JSON_REQUIRED, &enabled, NULL) || !enabled)
			continue;
		g_string_append_printf(names, "%s%s", names->len > 0 ? ";" : "", name);
	}
	return g_string_free(g_steal_pointer(&names), FALSE);
}

static GString *cli_info_render_csv(const CliResults *results)
{
	GString *out = g_string_new("guest,target,status,version,enabled_commands,error\n");

	for (guint i = 0; i < results->guests->len; i++) {
		const CliResult *guest = g_ptr_array_index(results->guests, i);
		g_autofree char *version = NULL;
		g_autofree char *detail = NULL;
		g_autofree char *names = NULL;

		if (guest->status == CLI_GUEST_OK) {
			cli_info_summarize(guest, &version, &detail);
			names = cli_info_enabled_names(guest);
		}
		cli_csv_append_field(out, guest->name);
		g_string_append_c(out, ',');
		cli_csv_append_field(out, guest->target);
		g_string_append_printf(out, ",%s,", cli_guest_status_to_string(guest->status));
		cli_csv_append_text(out, version);
		g_string_append_c(out, ',');
		cli_csv_append_text(out, names);
		g_string_append_c(out, ',');
		cli_csv_append_text(out, guest->error);
		g_string_append_c(out, '\n');
	}
	return out;
}

static GString *cli_info_render_prom(const CliResults *results)
{
	GString *out = g_string_new(NULL);

	cli_prom_append_up(out, results);
	cli_prom_family(out, "guestbench_agent_info", "gauge",
	                "The agent's version as a label (guests that answered).");
	for (guint i = 0; i < results->guests->len; i++) {
		const CliResult *guest = g_ptr_array_index(results->guests, i);
		g_autofree char *version = NULL;
		g_autofree char *detail = NULL;

		if (guest->status != CLI_GUEST_OK)
			continue;
		cli_info_summarize(guest, &version, &detail);
		cli_prom_sample(out, "guestbench_agent_info", 1.0, "guest", guest->name, "version",
		                version, NULL);
	}
	return out;
}

const CliCommand cli_cmd_info = {
	.name = "info",
	.parameter_string = "info TARGET...",
	.summary = "Agent version and the commands it has enabled",
	.start = cli_info_start,
	.render_table = cli_info_render_table,
	.render_csv = cli_info_render_csv,
	.render_prom = cli_info_render_prom,
};
