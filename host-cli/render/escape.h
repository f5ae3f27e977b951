/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/*
 * Makes text safe to print on a terminal: C0/C1 control characters, DEL,
 * bidirectional overrides and invalid UTF-8 become visible escapes (\n, \x1b,
 * \u202e), so a hostile guest cannot move the cursor or recolour the screen.
 */
char *cli_escape_terminal(const char *text);
/*
 * Prints "guestbench: ", prefix (the caller's own text, may be NULL), then
 * message escaped and a newline on stderr: error messages quote guest data
 * and file contents.
 */
void cli_escape_printerr(const char *prefix, const char *message);
/* The same, appended to out; NULL appends nothing. */
void cli_escape_append(GString *out, const char *text);
/*
 * Bidirectional marks, embeddings, overrides and isolates (U+061C, U+200E/F,
 * U+2028..U+202E, U+2066..U+2069): they print nothing but reorder the text
 * after them, so a guest could make "FAIL" read as "PASS"; the escaper
 * shows them as \uNNNN.
 */
gboolean cli_unichar_is_format_control(gunichar c);
/* Columns a string takes on a terminal (wide characters count two). */
gsize cli_text_width(const char *text);
/* text cut to at most width columns, ending in "…" when it was cut. */
char *cli_text_truncate(const char *text, gsize width);
/* The same keeping the end ("…/vm.sock"), for paths whose last part tells them apart. */
char *cli_text_truncate_start(const char *text, gsize width);

G_END_DECLS
