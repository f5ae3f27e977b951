/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* Where a rendered document goes, and in which format it was rendered. */

typedef enum {
	CLI_FORMAT_TABLE,
	CLI_FORMAT_JSON,
	CLI_FORMAT_CSV,
	CLI_FORMAT_PROM,
	CLI_FORMAT_HTML,
} CliFormat;

/* A set of formats, for what a command can write. */
#define CLI_FORMAT_BIT(format) (1u << (format))

const char *cli_format_to_string(CliFormat format);

typedef enum {
	CLI_COLOR_AUTO,
	CLI_COLOR_ALWAYS,
	CLI_COLOR_NEVER,
} CliColor;

/* Whether table output gets colour: --color, else only to a terminal and not to -o FILE. */
gboolean cli_output_use_color(CliColor color, const char *path, gboolean stdout_is_tty);
/* Writes doc to path (atomically: temp file + rename) or, when path is NULL, to stdout. */
gboolean cli_output_write_doc(const char *path, const GString *doc, GError **error);

G_END_DECLS
