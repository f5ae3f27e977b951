/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"

#include <string.h>

#include "guestbench-protocol.h"

#include "analysis/runs.h"
#include "fleet/merge.h"
#include "render/csv.h"
#include "render/escape.h"
#include "render/output.h"
#include "render/prom.h"

/*
 * merge reads documents that came from other machines: every member is read
 * through the gb_json_* accessors, and a guest's "result" is handed to the
 * command's own renderers, which read it through them too. Nothing is
 * contacted. Per host, the guests become one CliResults (as if that host had
 * run the command), so table/csv/prom are exactly the command's own output,
 * with the host added.
 */

/* Host names end up in labels, CSV cells and headings: printable text, bounded. */

typedef struct {
	char *name;
	CliResults *results; /* the guests of this host, as that host would render them */
	GPtrArray *sources;  /* char *, parallel to results->guests: where each guest came from */
} CliMergeHost;

struct _CliMerge {
	CliCommandFindFunc find; /* the command of a document, by name; NULL: only command */
	const CliCommand *command;
	char *command_source; /* the first document, for the "mixes commands" message */
	GPtrArray *hosts;     /* CliMergeHost, in order of first appearance */
};

static void cli_merge_host_free(CliMergeHost *host)
{
	g_free(host->name);
	cli_results_free(host->results);
	g_ptr_array_unref(host->sources);
	g_free(host);
}

CliMerge *cli_merge_new(CliCommandFindFunc find)
{
	CliMerge *merge = g_new0(CliMerge, 1);

	merge->find = find;
	merge->hosts = g_ptr_array_new_with_free_func((GDestroyNotify)cli_merge_host_free);
	return merge;
}

CliMerge *cli_merge_new_for_command(const CliCommand *command)
{
	CliMerge *merge = cli_merge_new(NULL);

	merge->command = command;
	merge->command_source = g_strdup("the command line");
	return merge;
}

void cli_merge_free(CliMerge *merge)
{
	if (merge == NULL)
		return;
	g_ptr_array_unref(merge->hosts);
	g_free(merge->command_source);
	g_free(merge);
}

static CliMergeHost *cli_merge_get_host(CliMerge *merge, const char *name)
{
	CliMergeHost *host;

	for (guint i = 0; i < merge->hosts->len; i++) {
		host = g_ptr_array_index(merge->hosts, i);
		if (g_strcmp0(host->name, name) == 0)
			return host;
	}
	host = g_new0(CliMergeHost, 1);
	host->name = g_strdup(name);
	host->results = cli_results_new(merge->command != NULL ? merge->command->name : NULL);
	host->sources = g_ptr_array_new_with_free_func(g_free);
	g_ptr_array_add(merge->hosts, host);
	return host;
}

/* Checks one guest of a document and adds it to its host. */
static gboolean cli_merge_add_guest(CliMerge *merge, JsonNode *node, const char *source,
                                    const char *doc_host, GError **error)
{
	JsonObject *obj = NULL;
	const char *name = NULL;
	const char *text = NULL;
	const char *status_text = NULL;
	const char *message = NULL;
	const char *host_name = doc_host;
	CliGuestStatus status = CLI_GUEST_OK;
	CliMergeHost *host;

	if (!gb_json_node_get_object(node, "guest", &obj, error) ||
	    !gb_json_get_string(obj, "name", GB_JSON_REQUIRED, &name, error) ||
	    !gb_json_get_string(obj, "target", GB_JSON_REQUIRED, &text, error) ||
	    !gb_json_get_string(obj, "status", GB_JSON_REQUIRED, &status_text, error) ||
	    !gb_json_get_string(obj, "error", GB_JSON_OPTIONAL, &message, error) ||
	    !gb_json_get_string(obj, "host", GB_JSON_OPTIONAL, &host_name, error))
		return FALSE;
	if (!cli_guest_status_from_string(status_text, &status)) {
		g_autofree char *esc = cli_escape_terminal(status_text);

		g_set_error(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT,
		            "Parameter 'status' is '%s', expected ok, error, timeout or busy", esc);
		return FALSE;
	}
	if (status != CLI_GUEST_OK && message == NULL) {
		g_set_error(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT,
		            "Parameter 'error' is missing (status %s)", status_text);
		return FALSE;
	}
	if (!cli_target_check_hypervisor_name(host_name, error)) {
		g_prefix_error(error, "host: ");
		return FALSE;
	}
	host = cli_merge_get_host(merge, host_name);
	/* one guest twice on one host would be two series with the same labels */
	for (guint i = 0; i < host->results->guests->len; i++) {
		const CliResult *other = g_ptr_array_index(host->results->guests, i);

		if (g_strcmp0(other->name, name) == 0) {
			g_autofree char *esc_name = cli_escape_terminal(name);
			g_autofree char *esc_host = cli_escape_terminal(host_name);

			g_set_error(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT,
			            "guest '%s' of host '%s' is also in %s", esc_name, esc_host,
			            (const char *)g_ptr_array_index(host->sources, i));
			return FALSE;
		}
	}

	g_ptr_array_add(host->sources, g_strdup(source));
	cli_results_add(host->results, cli_result_new(name, text, status, message,
	                                              gb_json_has(obj, "result")
	                                                  ? json_object_get_member(obj, "result")
	                                                  : NULL));
	return TRUE;
}

void cli_merge_add_failure(CliMerge *merge, const char *host_name, const char *target_text,
                           const char *message)
{
	CliMergeHost *host = cli_merge_get_host(merge, host_name);
	g_autofree char *valid = g_utf8_make_valid(message, -1);

	g_ptr_array_add(host->sources, g_strdup(target_text));
	cli_results_add(host->results,
	                cli_result_new(target_text, target_text, CLI_GUEST_ERROR, valid, NULL));
}

gboolean cli_merge_add_data(CliMerge *merge, const char *source, const char *host_fallback,
                            const char *data, gsize len, GError **error)
{
	g_autoptr(JsonNode) root = gb_json_parse(data, len, error);

	if (root == NULL) {
		g_prefix_error(error, "%s: ", source);
		return FALSE;
	}
	return cli_merge_add_document(merge, source, host_fallback, root, error);
}

gboolean cli_merge_add_document(CliMerge *merge, const char *source, const char *host_fallback,
                                JsonNode *root, GError **error)
{
	JsonObject *doc = NULL;
	JsonArray *guests = NULL;
	const char *version = NULL;
	const char *command_name = NULL;
	const char *doc_host = host_fallback;
	const CliCommand *command;

	if (!cli_document_open(root, &doc, &version, error) ||
	    !gb_json_get_string(doc, "command", GB_JSON_REQUIRED, &command_name, error) ||
	    !gb_json_get_string(doc, "host", GB_JSON_OPTIONAL, &doc_host, error) ||
	    !gb_json_get_array(doc, "guests", GB_JSON_REQUIRED, &guests, error)) {
		g_prefix_error(error, "%s: ", source);
		return FALSE;
	}
	if (merge->command != NULL && g_strcmp0(merge->command->name, command_name) == 0)
		command = merge->command;
	else
		command = merge->find != NULL ? merge->find(command_name) : NULL;
	/* only commands that ran in guests have per-guest results to merge */
	if (command == NULL || command->start == NULL) {
		g_autofree char *esc = cli_escape_terminal(command_name);

		g_set_error(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT,
		            "%s: command '%s' is not one whose documents can be merged", source,
		            esc);
		return FALSE;
	}
	if (command == NULL) {
		/* a merge for one command (--hosts) got another's document */
		g_autofree char *esc = cli_escape_terminal(command_name);

		g_set_error(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT,
		            "%s is a '%s' document, %s a '%s' one: they cannot be merged", source,
		            esc, merge->command_source, merge->command->name);
		return FALSE;
	}
	if (merge->command != NULL && merge->command != command) {
		g_set_error(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT,
		            "%s is a '%s' document, %s a '%s' one: they cannot be merged", source,
		            command->name, merge->command_source, merge->command->name);
		return FALSE;
	}
	if (merge->command == NULL) {
		merge->command = command;
		merge->command_source = g_strdup(source);
	}
	if (doc_host == NULL) {
		g_set_error(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT,
		            "%s: no 'host' member and no file name to name the host", source);
		return FALSE;
	}
	if (!cli_target_check_hypervisor_name(doc_host, error)) {
		g_prefix_error(error, "%s: host: ", source);
		return FALSE;
	}
	for (guint i = 0; i < json_array_get_length(guests); i++) {
		if (!cli_merge_add_guest(merge, json_array_get_element(guests, i), source, doc_host,
		                         error)) {
			g_prefix_error(error, "%s: guests[%u]: ", source, i);
			return FALSE;
		}
	}
	return TRUE;
}

gboolean cli_merge_add_file(CliMerge *merge, const char *path, GError **error)
{
	g_autoptr(GFile) file = g_file_new_for_path(path);
	g_autoptr(GFileInfo) info = NULL;
	g_autofree char *data = NULL;
	g_autofree char *display = g_filename_display_name(path);
	g_autofree char *stem = g_filename_display_basename(path);
	gsize len = 0;

	info = g_file_query_info(file,
	                         G_FILE_ATTRIBUTE_STANDARD_SIZE "," G_FILE_ATTRIBUTE_STANDARD_TYPE,
	                         G_FILE_QUERY_INFO_NONE, NULL, error);
	if (info == NULL) {
		g_prefix_error(error, "%s: ", display);
		return FALSE;
	}
	if (g_file_info_get_file_type(info) == G_FILE_TYPE_DIRECTORY) {
		g_set_error(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT, "%s: is a directory",
		            display);
		return FALSE;
	}
	/* a regular file's size; a pipe says 0 and is bounded by the read below */
	if (g_file_info_get_size(info) > CLI_MERGE_MAX_FILE_SIZE) {
		g_set_error(error, GB_ERROR, GB_ERROR_TOO_LARGE,
		            "%s: larger than %d MiB, not a guestbench document", display,
		            CLI_MERGE_MAX_FILE_SIZE / (1024 * 1024));
		return FALSE;
	}
	if (!g_file_get_contents(path, &data, &len, error)) {
		g_prefix_error(error, "cannot read %s: ", display);
		return FALSE;
	}
	if (len > CLI_MERGE_MAX_FILE_SIZE) {
		g_set_error(error, GB_ERROR, GB_ERROR_TOO_LARGE,
		            "%s: larger than %d MiB, not a guestbench document", display,
		            CLI_MERGE_MAX_FILE_SIZE / (1024 * 1024));
		return FALSE;
	}
	if (g_str_has_suffix(stem, ".json"))
		stem[strlen(stem) - strlen(".json")] = '\0';
	return cli_merge_add_data(merge, display, stem[0] != '\0' ? stem : NULL, data, len, error);
}

/* ---- json ------------------------------------------------------------------------------- */

static JsonNode *cli_merge_guest_to_json(const char *host, const CliResult *guest)
{
	g_autoptr(JsonBuilder) builder = json_builder_new();

	json_builder_begin_object(builder);
	json_builder_set_member_name(builder, "host");
	json_builder_add_string_value(builder, host);
	json_builder_set_member_name(builder, "name");
	json_builder_add_string_value(builder, guest->name);
	json_builder_set_member_name(builder, "target");
	json_builder_add_string_value(builder, guest->target);
	json_builder_set_member_name(builder, "status");
	json_builder_add_string_value(builder, cli_guest_status_to_string(guest->status));
	if (guest->error != NULL) {
		json_builder_set_member_name(builder, "error");
		json_builder_add_string_value(builder, guest->error);
	}
	json_builder_set_member_name(builder, "result");
	if (guest->result != NULL)
		json_builder_add_value(builder, json_node_copy(guest->result));
	else
		json_builder_add_null_value(builder);
	json_builder_end_object(builder);
	return json_builder_get_root(builder);
}

JsonNode *cli_merge_to_json(CliMerge *merge)
{
	g_autoptr(JsonBuilder) builder = json_builder_new();

	json_builder_begin_object(builder);
	json_builder_set_member_name(builder, "guestbench");
	json_builder_add_string_value(builder, GB_VERSION);
	json_builder_set_member_name(builder, "command");
	if (merge->command != NULL)
		json_builder_add_string_value(builder, merge->command->name);
	else
		json_builder_add_null_value(builder);
	json_builder_set_member_name(builder, "guests");
	json_builder_begin_array(builder);
	for (guint i = 0; i < merge->hosts->len; i++) {
		CliMergeHost *host = g_ptr_array_index(merge->hosts, i);

		for (guint j = 0; j < host->results->guests->len; j++) {
			json_builder_add_value(
			    builder, cli_merge_guest_to_json(
			                 host->name, g_ptr_array_index(host->results->guests, j)));
		}
	}
	json_builder_end_array(builder);
	json_builder_end_object(builder);
	return json_builder_get_root(builder);
}

/* ---- table, csv, prom ------------------------------------------------------------------- */

/* Splits CSV into records: a newline inside a quoted field does not end one. */
static GPtrArray *cli_merge_csv_records(const char *text)
{
	GPtrArray *records = g_ptr_array_new_with_free_func(g_free);
	gboolean quoted = FALSE;
	const char *start = text;

	for (const char *p = text; *p != '\0'; p++) {
		if (*p == '"')
			quoted = !quoted;
		else if (*p == '\n' && !quoted) {
			g_ptr_array_add(records, g_strndup(start, p - start));
			start = p + 1;
		}
	}
	if (*start != '\0')
		g_ptr_array_add(records, g_strdup(start));
	return records;
}

static void cli_merge_render_csv_host(GString *out, const CliCommand *command, CliMergeHost *host,
                                      gboolean with_header)
{
	g_autoptr(GString) doc = command->render_csv(host->results);
	g_autoptr(GPtrArray) records = cli_merge_csv_records(doc->str);

	/* the command's first record is its header; the others are rows */
	for (guint i = 0; i < records->len; i++) {
		if (i == 0) {
			if (with_header)
				g_string_append_printf(out, "host,%s\n",
				                       (const char *)g_ptr_array_index(records, 0));
			continue;
		}
		cli_csv_append_field(out, host->name);
		g_string_append_printf(out, ",%s\n", (const char *)g_ptr_array_index(records, i));
	}
}

typedef struct {
	char *name;
	const CliMergeHost
	    *declared_by; /* every host declares it: the first one's lines are kept */
	GString *meta;    /* its HELP and TYPE lines */
	GString *samples; /* from every host */
} CliMergeFamily;

static void cli_merge_family_free(CliMergeFamily *family)
{
	g_free(family->name);
	g_string_free(family->meta, TRUE);
	g_string_free(family->samples, TRUE);
	g_free(family);
}

static CliMergeFamily *cli_merge_get_family(GPtrArray *families, const char *name)
{
	CliMergeFamily *family;

	for (guint i = 0; i < families->len; i++) {
		family = g_ptr_array_index(families, i);
		if (g_strcmp0(family->name, name) == 0)
			return family;
	}
	family = g_new0(CliMergeFamily, 1);
	family->name = g_strdup(name);
	family->meta = g_string_new(NULL);
	family->samples = g_string_new(NULL);
	g_ptr_array_add(families, family);
	return family;
}

/*
 * Adds one host's exposition text to the families: each sample gains
 * host="NAME" as its first label. A family's samples must stay together in the
 * output, so they are collected per family across hosts and written at the end.
 */
static void cli_merge_prom_host(GPtrArray *families, const CliCommand *command, CliMergeHost *host)
{
	g_autoptr(GString) doc = command->render_prom(host->results);
	g_auto(GStrv) lines = g_strsplit(doc->str, "\n", -1);
	g_autofree char *label = cli_prom_escape_label(host->name);
	CliMergeFamily *current = NULL;

	for (guint i = 0; lines[i] != NULL; i++) {
		const char *line = lines[i];
		gsize name_len;

		if (g_str_has_prefix(line, "# HELP ") || g_str_has_prefix(line, "# TYPE ")) {
			g_auto(GStrv) words = g_strsplit(line, " ", 4);

			if (g_strv_length(words) < 3)
				continue;
			current = cli_merge_get_family(families, words[2]);
			if (current->declared_by == NULL)
				current->declared_by = host;
			if (current->declared_by == host)
				g_string_append_printf(current->meta, "%s\n", line);
			continue;
		}
		if (line[0] == '\0' || line[0] == '#')
			continue;
		name_len = strcspn(line, "{ ");
		if (current == NULL) {
			g_autofree char *name = g_strndup(line, name_len);

			current = cli_merge_get_family(families, name);
		}
		g_string_append_len(current->samples, line, name_len);
		g_string_append_printf(current->samples, "{host=\"%s\"", label);
		if (line[name_len] == '{') {
			if (line[name_len + 1] != '}')
				g_string_append_c(current->samples, ',');
			g_string_append_printf(current->samples, "%s\n", line + name_len + 1);
		} else {
			g_string_append_printf(current->samples, "}%s\n", line + name_len);
		}
	}
}

static GString *cli_merge_render_prom_doc(CliMerge *merge)
{
	g_autoptr(GPtrArray) families =
	    g_ptr_array_new_with_free_func((GDestroyNotify)cli_merge_family_free);
	GString *out = g_string_new(NULL);

	for (guint i = 0; i < merge->hosts->len; i++)
		cli_merge_prom_host(families, merge->command, g_ptr_array_index(merge->hosts, i));
	for (guint i = 0; i < families->len; i++) {
		CliMergeFamily *family = g_ptr_array_index(families, i);

		g_string_append_len(out, family->meta->str, family->meta->len);
		g_string_append_len(out, family->samples->str, family->samples->len);
	}
	cli_prom_drop_duplicates(out);
	return out;
}

void cli_merge_keep_failed(CliMerge *merge)
{
	for (guint i = 0; i < merge->hosts->len; i++) {
		CliMergeHost *host = g_ptr_array_index(merge->hosts, i);
		CliResults *failed = cli_results_filter_failed(host->results);
		GPtrArray *sources = g_ptr_array_new_with_free_func(g_free);

		for (guint j = 0; j < host->results->guests->len; j++) {
			const CliResult *guest = g_ptr_array_index(host->results->guests, j);

			if (guest->status != CLI_GUEST_OK)
				g_ptr_array_add(sources,
				                g_strdup(g_ptr_array_index(host->sources, j)));
		}
		cli_results_free(host->results);
		host->results = failed;
		g_ptr_array_unref(host->sources);
		host->sources = sources;
	}
}

static GString *cli_merge_render_text_doc(CliMerge *merge, gboolean color)
{
	GString *out = g_string_new(NULL);

	for (guint i = 0; i < merge->hosts->len; i++) {
		CliMergeHost *host = g_ptr_array_index(merge->hosts, i);
		g_autofree char *esc = cli_escape_terminal(host->name);
		g_autoptr(GString) part = NULL;

		part = cli_command_render(merge->command, host->results, CLI_FORMAT_TABLE, color);
		/* a host with nothing to report (--failed-only) gets no heading either */
		if (part->len == 0)
			continue;
		if (out->len > 0)
			g_string_append_c(out, '\n');
		g_string_append_printf(out, "%s== host %s ==%s\n", color ? "\033[1m" : "", esc,
		                       color ? "\033[0m" : "");
		g_string_append_len(out, part->str, part->len);
	}
	return out;
}

GString *cli_merge_render(CliMerge *merge, CliFormat format, gboolean color, GError **error)
{
	const CliCommand *command = merge->command;
	GString *out = NULL;

	if (format == CLI_FORMAT_JSON) {
		g_autoptr(JsonNode) root = cli_merge_to_json(merge);

		return cli_output_json_document(root);
	}
	if (command == NULL)
		return g_string_new(NULL);
	if ((format == CLI_FORMAT_CSV && command->render_csv == NULL) ||
	    (format == CLI_FORMAT_PROM && command->render_prom == NULL) ||
	    format == CLI_FORMAT_HTML) {
		g_set_error(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT,
		            "'%s' documents cannot be merged into --format %s", command->name,
		            cli_format_to_string(format));
		return NULL;
	}
	switch (format) {
	case CLI_FORMAT_CSV:
		out = g_string_new(NULL);
		for (guint i = 0; i < merge->hosts->len; i++)
			cli_merge_render_csv_host(out, command, g_ptr_array_index(merge->hosts, i),
			                          i == 0);
		break;
	case CLI_FORMAT_PROM:
		out = cli_merge_render_prom_doc(merge);
		break;
	case CLI_FORMAT_TABLE:
	default:
		out = cli_merge_render_text_doc(merge, color);
		break;
	}
	return out;
}

/*
 * Guests of several hypervisors (remote libvirt connections, [hypervisor]
 * inventory groups) are rendered per hypervisor, as --hosts and merge do:
 * each guest goes to its host's results, hosts in order of first appearance.
 */
static GString *cli_merge_render_app(CliApp *app, GError **error)
{
	g_autoptr(CliMerge) merge = cli_merge_new_for_command(app->command);

	for (guint i = 0; i < app->guests->len; i++) {
		const CliGuest *guest = g_ptr_array_index(app->guests, i);
		const char *name = cli_target_get_hypervisor(guest->target);
		CliMergeHost *host = cli_merge_get_host(merge, name);

		g_ptr_array_add(host->sources, g_strdup(name));
		cli_results_add(host->results,
		                cli_result_new(guest->target->name, guest->target->text,
		                               guest->status, guest->error, guest->result));
	}
	if (app->opts.failed_only)
		cli_merge_keep_failed(merge);
	return cli_merge_render(merge, app->opts.format, cli_app_use_color(app), error);
}

static gboolean cli_merge_app_has_remote_guests(const CliApp *app)
{
	for (guint i = 0; app->guests != NULL && i < app->guests->len; i++) {
		const CliGuest *guest = g_ptr_array_index(app->guests, i);
		if (guest->target->host != NULL)
			return TRUE;
	}
	return FALSE;
}

gboolean cli_merge_write_app_output(CliApp *app, GError **error)
{
	g_autoptr(GString) doc = NULL;

	if (!cli_merge_app_has_remote_guests(app))
		return cli_app_write_output(app, error);
	doc = cli_merge_render_app(app, error);
	return doc != NULL && cli_app_write_doc(app, doc, error);
}
