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
	g_auto(GStrv) lines = g_strsplit(text != NULL ? text : "", "\n", -1);

	/* CR and LF stay (the field is quoted); every other control is escaped */
	for (guint i = 0; lines[i] != NULL; i++) {
		g_auto(GStrv) parts = g_strsplit(lines[i], "\r", -1);
		if (i > 0)
			g_string_append_c(field, '\n');
		for (guint j = 0; parts[j] != NULL; j++) {
			if (j > 0)
				g_string_append_c(field, '\r');
			cli_escape_append(field, parts[j]);
		}
	}
	cli_csv_append_field(out, field->str);
}
