/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <glib/gstdio.h>
#include <string.h>
#include <unistd.h>

#include "guestbench-protocol.h"

#include "analysis/runs.h"

/* Saved documents are the CLI's own output, but a user may drop anything in the dir. */
#define CLI_RESULTS_MAX_FILE_SIZE (64 * 1024 * 1024)
/* Names tried before giving up: more runs in one second than this is a runaway loop. */
#define CLI_RESULTS_MAX_SUFFIX 1000

char *cli_runs_default_dir(void)
{
	return g_build_filename(g_get_user_data_dir(), "guestbench", "results", NULL);
}

char *cli_runs_file_name(GDateTime *when, const char *command, guint n)
{
	g_autofree char *stamp = g_date_time_format(when, "%Y-%m-%dT%H-%M-%SZ");
	g_autofree char *safe = g_strdup(command != NULL && command[0] != '\0' ? command : "run");

	/* the name is a path component: no '/', no spaces, nothing a shell trips over */
	for (char *p = safe; *p != '\0'; p++) {
		if (!g_ascii_isalnum(*p) && *p != '.' && *p != '_' && *p != '-')
			*p = '-';
	}
	if (safe[0] == '.')
		safe[0] = '-';
	if (n > 1)
		return g_strdup_printf("%s-%s-%u.json", stamp, safe, n);
	return g_strdup_printf("%s-%s.json", stamp, safe);
}

static gboolean cli_results_write_all(int fd, const char *data, gsize len, GError **error)
{
	while (len > 0) {
		ssize_t n = write(fd, data, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			g_set_error(error, GB_ERROR, GB_ERROR_IO, "write failed: %s",
			            g_strerror(errno));
			return FALSE;
		}
		data += n;
		len -= (gsize)n;
	}
	return TRUE;
}

char *cli_runs_save(const char *dir, GDateTime *when, const char *command, const char *doc,
                    gsize len, GError **error)
{
	g_autofree char *tmp = g_build_filename(dir, ".save-XXXXXX", NULL);
	g_autoptr(GDateTime) utc = g_date_time_to_utc(when);
	int fd;

	if (g_mkdir_with_parents(dir, 0700) != 0) {
		g_set_error(error, GB_ERROR, GB_ERROR_IO, "cannot create %s: %s", dir,
		            g_strerror(errno));
		return NULL;
	}
	fd = g_mkstemp_full(tmp, O_WRONLY | O_CLOEXEC, 0600);
	if (fd < 0) {
		g_set_error(error, GB_ERROR, GB_ERROR_IO, "cannot create a file in %s: %s", dir,
		            g_strerror(errno));
		return NULL;
	}
	if (!cli_results_write_all(fd, doc, len, error) || fsync(fd) != 0) {
		if (error != NULL && *error == NULL)
			g_set_error(error, GB_ERROR, GB_ERROR_IO, "fsync failed: %s",
			            g_strerror(errno));
		g_prefix_error(error, "cannot write %s: ", tmp);
		close(fd);
		g_unlink(tmp);
		return NULL;
	}
	close(fd);
	/* link() refuses an existing name: the complete file appears under a name no run had */
	for (guint n = 1; n <= CLI_RESULTS_MAX_SUFFIX; n++) {
		g_autofree char *name = cli_runs_file_name(utc, command, n);
		g_autofree char *path = g_build_filename(dir, name, NULL);

		if (link(tmp, path) == 0) {
			g_unlink(tmp);
			return g_steal_pointer(&path);
		}
		if (errno != EEXIST) {
			g_set_error(error, GB_ERROR, GB_ERROR_IO, "cannot create %s: %s", path,
			            g_strerror(errno));
			g_unlink(tmp);
			return NULL;
		}
	}
	g_set_error(error, GB_ERROR, GB_ERROR_IO, "cannot save in %s: %u runs in the same second",
	            dir, CLI_RESULTS_MAX_SUFFIX);
	g_unlink(tmp);
	return NULL;
}

void cli_run_entry_free(CliRunEntry *entry)
{
	if (entry == NULL)
		return;
	g_free(entry->id);
	g_free(entry->path);
	g_free(entry->date);
	g_free(entry->command);
	g_strfreev(entry->guests);
	g_free(entry->error);
	g_free(entry);
}

/* "2026-12-02T11-40-05Z-..." -> "2026-12-02T11:40:05Z", or NULL. */
static char *cli_results_id_to_date(const char *id)
{
	static const char pattern[] = "dddd-dd-ddTdd-dd-ddZ";
	g_autofree char *date = NULL;

	if (strlen(id) < sizeof(pattern) - 1)
		return NULL;
	for (guint i = 0; i < sizeof(pattern) - 1; i++) {
		if (pattern[i] == 'd' ? !g_ascii_isdigit(id[i]) : id[i] != pattern[i])
			return NULL;
	}
	date = g_strndup(id, sizeof(pattern) - 1);
	date[13] = ':';
	date[16] = ':';
	return g_steal_pointer(&date);
}

/* Reads the document's command and guest names with the typed accessors only. */
static gboolean cli_results_read(CliRunEntry *entry, GError **error)
{
	g_autofree char *data = NULL;
	g_autoptr(JsonNode) root = NULL;
	g_autoptr(GPtrArray) names = g_ptr_array_new_with_free_func(g_free);
	GStatBuf st;
	JsonObject *doc = NULL;
	JsonArray *guests = NULL;
	const char *command = NULL;
	const char *test = NULL;
	gsize len = 0;

	if (g_stat(entry->path, &st) != 0) {
		g_set_error(error, GB_ERROR, GB_ERROR_IO, "%s", g_strerror(errno));
		return FALSE;
	}
	if (st.st_size > CLI_RESULTS_MAX_FILE_SIZE) {
		g_set_error(error, GB_ERROR, GB_ERROR_TOO_LARGE, "larger than %d MiB",
		            CLI_RESULTS_MAX_FILE_SIZE / (1024 * 1024));
		return FALSE;
	}
	if (!g_file_get_contents(entry->path, &data, &len, error))
		return FALSE;
	root = gb_json_parse(data, len, error);
	if (root == NULL)
		return FALSE;
	if (!gb_json_node_get_object(root, "document", &doc, error) ||
	    !gb_json_get_string(doc, "command", GB_JSON_REQUIRED, &command, error) ||
	    !gb_json_get_array(doc, "guests", GB_JSON_REQUIRED, &guests, error))
		return FALSE;
	for (guint i = 0; i < json_array_get_length(guests); i++) {
		g_autofree char *what = g_strdup_printf("guests[%u]", i);
		JsonObject *guest = NULL;
		JsonObject *result = NULL;
		const char *name = NULL;

		if (!gb_json_node_get_object(json_array_get_element(guests, i), what, &guest,
		                             error) ||
		    !gb_json_get_string(guest, "name", GB_JSON_REQUIRED, &name, error)) {
			g_prefix_error(error, "%s: ", what);
			return FALSE;
		}
		g_ptr_array_add(names, g_strdup(name));
		/* the benchmark's name is in each ok guest's result; a broken one is no reason to
		 * fail
		 */
		if (test == NULL &&
		    gb_json_get_object(guest, "result", GB_JSON_OPTIONAL, &result, NULL) &&
		    result != NULL)
			(void)gb_json_get_string(result, "test", GB_JSON_OPTIONAL, &test, NULL);
	}
	g_ptr_array_add(names, NULL);
	entry->guests = (GStrv)g_ptr_array_free(g_steal_pointer(&names), FALSE);
	entry->command = test != NULL ? g_strdup_printf("%s %s", command, test) : g_strdup(command);
	return TRUE;
}

static gint cli_results_compare(gconstpointer a, gconstpointer b)
{
	const CliRunEntry *ea = *(const CliRunEntry *const *)a;
	const CliRunEntry *eb = *(const CliRunEntry *const *)b;

	return strcmp(ea->id, eb->id);
}

GPtrArray *cli_runs_list(const char *dir, GError **error)
{
	g_autoptr(GPtrArray) entries =
	    g_ptr_array_new_with_free_func((GDestroyNotify)cli_run_entry_free);
	g_autoptr(GDir) gdir = NULL;
	g_autoptr(GError) error_local = NULL;
	const char *name;

	gdir = g_dir_open(dir, 0, &error_local);
	if (gdir == NULL) {
		if (g_error_matches(error_local, G_FILE_ERROR, G_FILE_ERROR_NOENT))
			return g_steal_pointer(&entries);
		g_set_error(error, GB_ERROR, GB_ERROR_IO, "cannot read %s: %s", dir,
		            error_local->message);
		return NULL;
	}
	while ((name = g_dir_read_name(gdir)) != NULL) {
		g_autoptr(CliRunEntry) entry = NULL;
		g_autoptr(GError) error_read = NULL;

		/* ".save-XXXXXX" is a run being written right now */
		if (name[0] == '.' || !g_str_has_suffix(name, ".json"))
			continue;
		entry = g_new0(CliRunEntry, 1);
		entry->id = g_strndup(name, strlen(name) - strlen(".json"));
		entry->path = g_build_filename(dir, name, NULL);
		entry->date = cli_results_id_to_date(entry->id);
		if (!cli_results_read(entry, &error_read))
			entry->error = g_utf8_make_valid(error_read->message, -1);
		g_ptr_array_add(entries, g_steal_pointer(&entry));
	}
	g_ptr_array_sort(entries, cli_results_compare);
	return g_steal_pointer(&entries);
}

gboolean cli_document_open(JsonNode *root, JsonObject **doc, const char **version, GError **error)
{
	JsonObject *obj = NULL;

	if (root == NULL || !JSON_NODE_HOLDS_OBJECT(root) ||
	    !gb_json_has((obj = json_node_get_object(root)), "guestbench")) {
		g_set_error_literal(
		    error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT,
		    "not a guestbench document (no \"guestbench\" member at the top)");
		return FALSE;
	}
	if (!gb_json_get_string(obj, "guestbench", GB_JSON_REQUIRED, version, error))
		return FALSE;
	*doc = obj;
	return TRUE;
}
