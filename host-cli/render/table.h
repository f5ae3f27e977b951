/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/*
 * An aligned text table. Cells are escaped when added. A column whose header
 * is "STATUS" is coloured by value (ok/PASS green, error/FAIL red,
 * timeout/WARN yellow, NOTE blue) when rendered with colour.
 */
typedef struct _CliTable CliTable;

CliTable *cli_table_new(const char *first_header, ...) G_GNUC_NULL_TERMINATED;
void cli_table_free(CliTable *table);
/* Exactly as many cells as headers; NULL cells print as "". */
void cli_table_add_row(CliTable *table, const char *first_cell, ...);
void cli_table_add_rowv(CliTable *table, const char *const *cells);
guint cli_table_get_n_rows(const CliTable *table);
void cli_table_render(const CliTable *table, gboolean color, GString *out);

G_DEFINE_AUTOPTR_CLEANUP_FUNC(CliTable, cli_table_free)

G_END_DECLS
