/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"

#include <string.h>

#include "render/csv.h"

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
