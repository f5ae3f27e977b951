/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <glib.h>
#include <json-glib/json-glib.h>

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

/* -o: NULL (none) and "-" are standard output. */
gboolean cli_output_is_stdout(const char *path);
/*
 * Whether table output gets colour: --color always/never, else only to a
 * terminal, not to -o FILE, and not when NO_COLOR is set or TERM is dumb.
 */
gboolean cli_output_use_color(CliColor color, const char *path, gboolean stdout_is_tty);
/* A terminal's width: COLUMNS when set (as curses takes it), else fd's, else 80. */
gsize cli_output_terminal_columns(int fd);
/*
 * Before any guest is contacted: whether doc can be written to path, the way
 * cli_output_write_doc() will write it (a file can be made where a regular
 * file is replaced; a device or FIFO is writable). A usage error otherwise.
 */
gboolean cli_output_check(const char *path, GError **error);
/*
 * Writes doc to path, or standard output for NULL or "-". A regular file or a
 * new one is replaced atomically (temp file in its directory, fsync, rename),
 * through a symlink if path is one; a character device, a FIFO or a pipe
 * (/dev/null, /dev/fd/N, >(cmd)) is written in place and never replaced.
 * Standard output closed by its reader (| head) is not an error.
 */
gboolean cli_output_write_doc(const char *path, const GString *doc, GError **error);

/*
 * A JSON document as every --format json output and saved run is written:
 * gb_json_to_string_pretty() (always JSON, no terminal controls) and a newline.
 */
GString *cli_output_json_document(JsonNode *root);

G_END_DECLS
