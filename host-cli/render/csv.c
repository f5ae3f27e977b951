/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"

#include <string.h>

#include "render/csv.h"
#include "render/escape.h"

void cli_csv_append_field(GString *out, const char *field)
{
	if (field == NULL)
		return;
	if (strpbrk(field, ",\"\r\n") == NULL) {
		g_string_append(out, field);
		return;
	}
	g_string_append_c(out, '"');
	for (const char *p = field; *p != '\0'; p++) {
		if (*p == '"')
			g_string_append_c(out, '"');
		g_string_append_c(out, *p);
	}
	g_string_append_c(out, '"');
}

void cli_csv_append_text(GString *out, const char *text)
{
	g_autoptr(GString) field = g_string_new(NULL);

	/* what a spreadsheet would evaluate is shown as text ("-" alone is not) */
	if (text != NULL && text[0] != '\0' && strchr("=+-@\t\r", text[0]) != NULL &&
	    text[1] != '\0')
		g_string_append_c(field, '\'');
	/* one line: a CR or LF on a terminal could draw a fake row */
	cli_escape_append(field, text);
	cli_csv_append_field(out, field->str);
}
