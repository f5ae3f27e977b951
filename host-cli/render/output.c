/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"

#include <errno.h>
#include <stdio.h>

#include "gb-error.h"

#include "render/output.h"

const char *cli_format_to_string(CliFormat format)
{
	switch (format) {
	case CLI_FORMAT_TABLE:
		return "table";
	case CLI_FORMAT_JSON:
		return "json";
	case CLI_FORMAT_CSV:
		return "csv";
	case CLI_FORMAT_PROM:
		return "prom";
	case CLI_FORMAT_HTML:
		return "html";
	}
	return "unknown";
}

gboolean cli_output_use_color(CliColor color, const char *path, gboolean stdout_is_tty)
{
	if (color == CLI_COLOR_ALWAYS)
		return TRUE;
	if (color == CLI_COLOR_NEVER)
		return FALSE;
	return path == NULL && stdout_is_tty;
}

gboolean cli_output_write_doc(const char *path, const GString *doc, GError **error)
{
	if (path != NULL) {
		/* CONSISTENT: a temp file in the same directory, fsync, rename: never half a file
		 */
		if (!g_file_set_contents_full(path, doc->str, doc->len,
		                              G_FILE_SET_CONTENTS_CONSISTENT, 0666, error)) {
			g_prefix_error(error, "cannot write %s: ", path);
			return FALSE;
		}
		return TRUE;
	}
	if (fwrite(doc->str, 1, doc->len, stdout) != doc->len || fflush(stdout) != 0) {
		g_set_error(error, GB_ERROR, GB_ERROR_IO, "cannot write to stdout: %s",
		            g_strerror(errno));
		return FALSE;
	}
	return TRUE;
}
