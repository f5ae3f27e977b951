/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* Appends one RFC 4180 field: quoted when it holds a comma, quote, CR or LF. */
void cli_csv_append_field(GString *out, const char *field);
/*
 * The same for text from a guest or a transport (error messages, audit
 * details, models, disk names, labels): every control character, CR and LF
 * too, is escaped (render/escape.h), so a CSV shown on a terminal cannot move
 * the cursor or draw a fake row; and a field a spreadsheet would
 * take as a formula (starting with =, +, -, @, TAB or CR, longer than that
 * character) gets a leading "'" (OWASP's rule for CSV injection). NULL
 * appends an empty field.
 */
void cli_csv_append_text(GString *out, const char *text);

G_END_DECLS
