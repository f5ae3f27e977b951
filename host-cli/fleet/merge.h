/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include "fleet/app.h"

G_BEGIN_DECLS

/* Largest document merge reads (a facts document of 10000 guests stays far below). */
#define CLI_MERGE_MAX_FILE_SIZE (256 * 1024 * 1024)

typedef struct _CliMerge CliMerge;

/*
 * The merged fleet: documents are added one by one, then rendered. Every error
 * names the source and the member ("a.json: guests[2]: Parameter 'status' is
 * missing") and is GB_ERROR_INVALID_ARGUMENT. find names the command of a
 * document (the command table lives above the fleet).
 */
CliMerge *cli_merge_new(CliCommandFindFunc find);
/* A merge whose documents must be of command (--hosts knows it before any arrives). */
CliMerge *cli_merge_new_for_command(const CliCommand *command);
void cli_merge_free(CliMerge *merge);
/* source names the document in messages; host_fallback names the host when it has no "host". */
gboolean cli_merge_add_data(CliMerge *merge, const char *source, const char *host_fallback,
                            const char *data, gsize len, GError **error);
/* The same with the document parsed already (gb_json_parse()); it is referenced, not taken. */
gboolean cli_merge_add_document(CliMerge *merge, const char *source, const char *host_fallback,
                                JsonNode *root, GError **error);
/* Reads FILE; the fallback host name is its base name without ".json". */
gboolean cli_merge_add_file(CliMerge *merge, const char *path, GError **error);
/*
 * A host whose document could not be had (ssh failed): one guest named target,
 * status error with message, so that the host is not silently missing.
 */
void cli_merge_add_failure(CliMerge *merge, const char *host, const char *target,
                           const char *message);
/* The merged contract document (NULL command when no document was added). */
JsonNode *cli_merge_to_json(CliMerge *merge);
/*
 * The documents' command's own rendering with the host added: per host a
 * section (table), a leading "host" column (csv) or a host label (prom).
 * Fails when that command has no such format.
 */
GString *cli_merge_render(CliMerge *merge, CliFormat format, gboolean color, GError **error);
/* --failed-only: drops every guest that is ok, so that every format lists only the others. */
void cli_merge_keep_failed(CliMerge *merge);

/*
 * cli_app_write_output(), except that guests of several hypervisors (remote
 * libvirt connections, [hypervisor] inventory groups) are rendered per
 * hypervisor, as --hosts and merge render theirs.
 */
gboolean cli_merge_write_app_output(CliApp *app, GError **error);

G_DEFINE_AUTOPTR_CLEANUP_FUNC(CliMerge, cli_merge_free)

G_END_DECLS
