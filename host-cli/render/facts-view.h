/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <json-glib/json-glib.h>

G_BEGIN_DECLS

/*
 * Text that came from a guest is printed through these, so that a hostile
 * guest cannot send terminal escapes: C0 controls, DEL and bytes that are not
 * valid UTF-8 become \xNN, C1 controls (U+0080..U+009F) and bidi controls
 * (U+202E and its kin, see cli_unichar_is_format_control()) become \uNNNN.
 * NULL is treated as "". cli_escape_text() returns a new string.
 */
char *cli_escape_text(const char *text);
void cli_escape_append(GString *out, const char *text);

/* "512 B", "2 MiB", "7.8 GiB": binary units, one decimal when not whole. */
char *cli_format_bytes(guint64 bytes);

/*
 * A compact block per guest: CPU, flags that matter, hypervisor, memory,
 * hugepages, THP, NUMA, clocksource, steal, each disk, each NIC, OS.
 * Every number has its unit; what cannot be read shows as "unknown".
 */
void cli_facts_render_table(GString *out, const char *guest, JsonObject *facts, gboolean color);

/* CSV: header "guest,section,item,key,value", then one row per guest per fact. */
void cli_facts_render_csv_header(GString *out);
void cli_facts_render_csv_rows(GString *out, const char *guest, JsonObject *facts);

G_END_DECLS
