/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <json-glib/json-glib.h>

G_BEGIN_DECLS

/*
 * Saved result documents: every benchmark run is kept as the --format json
 * document it printed, one file per run, under
 * $XDG_DATA_HOME/guestbench/results/ (mode 0700), named
 * DATE-COMMAND.json, e.g. 2026-12-02T11-40-05Z-bench-aes.json, with -2, -3,
 * ... before ".json" when two runs start in the same second.
 */

/* $XDG_DATA_HOME/guestbench/results (g_get_user_data_dir()). */
char *cli_runs_default_dir(void);

/*
 * The file name for a run: "2026-12-02T11-40-05Z-bench-aes.json" for
 * command "bench-aes" at that UTC time; n > 1 adds "-N" before ".json".
 * Characters other than [A-Za-z0-9._-] in command become '-'.
 */
char *cli_runs_file_name(GDateTime *when, const char *command, guint n);

/*
 * Writes doc to a new file in dir (created with mode 0700 when missing):
 * written to a temporary file, synced, then linked to the first free name, so
 * a reader never sees half a document and no earlier run is overwritten.
 * Returns the path of the new file.
 */
char *cli_runs_save(const char *dir, GDateTime *when, const char *command, const char *doc,
                    gsize len, GError **error);

typedef struct {
	char *id;      /* the file name without ".json" */
	char *path;    /* full path */
	char *date;    /* from the id, ISO 8601 ("2026-12-02T11:40:05Z"); NULL if unparsable */
	char *command; /* the document's "command" plus the benchmark's "test" when present */
	GStrv guests;  /* guest names, in document order */
	char *error;   /* why the file could not be read; the other members may be NULL */
} CliRunEntry;

void cli_run_entry_free(CliRunEntry *entry);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(CliRunEntry, cli_run_entry_free)

/*
 * Every *.json file in dir, oldest first (by id). A file that cannot be read
 * or is not a guestbench document is listed with its error set. A missing dir
 * is an empty list, not an error.
 */
GPtrArray *cli_runs_list(const char *dir, GError **error);

/*
 * The top of a saved guestbench document (what --format json printed): its
 * object and its "guestbench" version. A JSON file that is something else
 * fails with "not a guestbench document" rather than a member name.
 */
gboolean cli_document_open(JsonNode *root, JsonObject **doc, const char **version, GError **error);

G_END_DECLS
