/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <glib/gstdio.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gb-error.h"
#include "gb-json.h"

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

gboolean cli_output_is_stdout(const char *path)
{
	return path == NULL || g_strcmp0(path, "-") == 0;
}

gboolean cli_output_use_color(CliColor color, const char *path, gboolean stdout_is_tty)
{
	const char *no_color = g_getenv("NO_COLOR");

	if (color == CLI_COLOR_ALWAYS)
		return TRUE;
	if (color == CLI_COLOR_NEVER)
		return FALSE;
	/* no-color.org: NO_COLOR set and not empty; a terminal that says it is dumb */
	if ((no_color != NULL && no_color[0] != '\0') || g_strcmp0(g_getenv("TERM"), "dumb") == 0)
		return FALSE;
	return cli_output_is_stdout(path) && stdout_is_tty;
}

gsize cli_output_terminal_columns(int fd)
{
	const char *env = g_getenv("COLUMNS");
	guint64 cols = 0;
	struct winsize ws;

	if (env != NULL && g_ascii_string_to_unsigned(env, 10, 1, 100000, &cols, NULL))
		return (gsize)cols;
	if (ioctl(fd, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0)
		return ws.ws_col;
	return 80;
}

/* Whether a file can be created in dir: the way an atomic replace will need to. */
static gboolean cli_output_probe_dir(const char *path, const char *dir, GError **error)
{
	g_autofree char *probe = g_build_filename(dir, ".guestbench-XXXXXX", NULL);
	int fd = g_mkstemp_full(probe, O_WRONLY | O_CLOEXEC, 0600);

	if (fd < 0) {
		int errsv = errno;

		g_set_error(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT,
		            "--output %s: cannot create a file in %s: %s", path, dir,
		            g_strerror(errsv));
		return FALSE;
	}
	close(fd);
	g_unlink(probe);
	return TRUE;
}

gboolean cli_output_check(const char *path, GError **error)
{
	struct stat st;
	g_autofree char *dir = NULL;

	if (cli_output_is_stdout(path))
		return TRUE;
	/* stat() follows symlinks: what is written is what the link points to */
	if (stat(path, &st) == 0) {
		g_autofree char *real = NULL;

		if (S_ISDIR(st.st_mode)) {
			g_set_error(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT,
			            "--output %s is a directory", path);
			return FALSE;
		}
		if (!S_ISREG(st.st_mode)) {
			/* a device, a FIFO, /dev/fd/N: written in place, never replaced */
			if (access(path, W_OK) != 0) {
				int errsv = errno;

				g_set_error(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT,
				            "--output %s: %s", path, g_strerror(errsv));
				return FALSE;
			}
			return TRUE;
		}
		real = realpath(path, NULL);
		if (real == NULL) {
			int errsv = errno;

			g_set_error(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT, "--output %s: %s",
			            path, g_strerror(errsv));
			return FALSE;
		}
		dir = g_path_get_dirname(real);
		return cli_output_probe_dir(path, dir, error);
	}
	if (errno != ENOENT) {
		int errsv = errno;

		g_set_error(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT, "--output %s: %s", path,
		            g_strerror(errsv));
		return FALSE;
	}
	dir = g_path_get_dirname(path);
	if (!g_file_test(dir, G_FILE_TEST_IS_DIR)) {
		g_set_error(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT,
		            "--output %s: directory %s does not exist", path, dir);
		return FALSE;
	}
	return cli_output_probe_dir(path, dir, error);
}

static gboolean cli_output_write_fd(int fd, const GString *doc, GError **error)
{
	gsize done = 0;

	while (done < doc->len) {
		gssize n = write(fd, doc->str + done, doc->len - done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			int errsv = errno;

			g_set_error(error, GB_ERROR, GB_ERROR_IO, "%s", g_strerror(errsv));
			return FALSE;
		}
		done += (gsize)n;
	}
	return TRUE;
}

/*
 * A device, a FIFO or a pipe (/dev/fd/N): opened and written as it is, like a
 * shell's >. flags adds O_CREAT | O_TRUNC for a symlink to a file not made yet.
 */
static gboolean cli_output_write_in_place(const char *path, int flags, const GString *doc,
                                          GError **error)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC | O_NOCTTY | flags, 0666);
	gboolean ok;

	if (fd < 0) {
		int errsv = errno;

		g_set_error(error, GB_ERROR, GB_ERROR_IO, "cannot write %s: %s", path,
		            g_strerror(errsv));
		return FALSE;
	}
	ok = cli_output_write_fd(fd, doc, error);
	if (close(fd) != 0 && ok) {
		int errsv = errno;

		g_set_error(error, GB_ERROR, GB_ERROR_IO, "%s", g_strerror(errsv));
		ok = FALSE;
	}
	if (!ok)
		g_prefix_error(error, "cannot write %s: ", path);
	return ok;
}

gboolean cli_output_write_doc(const char *path, const GString *doc, GError **error)
{
	struct stat st;
	g_autofree char *real = NULL;

	if (cli_output_is_stdout(path)) {
		if (fwrite(doc->str, 1, doc->len, stdout) != doc->len || fflush(stdout) != 0) {
			/* the reader went away (| head): like any filter, say nothing */
			if (errno == EPIPE)
				return TRUE;
			g_set_error(error, GB_ERROR, GB_ERROR_IO, "cannot write to stdout: %s",
			            g_strerror(errno));
			return FALSE;
		}
		return TRUE;
	}
	if (stat(path, &st) == 0 && !S_ISREG(st.st_mode))
		return cli_output_write_in_place(path, 0, doc, error);
	/* a symlink is written through: the file it points to is replaced, not the link */
	real = realpath(path, NULL);
	if (real == NULL && lstat(path, &st) == 0 && S_ISLNK(st.st_mode))
		/* a link to a file not made yet: created through the link */
		return cli_output_write_in_place(path, O_CREAT | O_TRUNC, doc, error);
	/* CONSISTENT: a temp file in the same directory, fsync, rename: never half a file */
	if (!g_file_set_contents_full(real != NULL ? real : path, doc->str, doc->len,
	                              G_FILE_SET_CONTENTS_CONSISTENT, 0666, error)) {
		g_prefix_error(error, "cannot write %s: ", path);
		return FALSE;
	}
	return TRUE;
}

GString *cli_output_json_document(JsonNode *root)
{
	gsize len = 0;
	g_autofree char *text = gb_json_to_string_pretty(root, &len);
	GString *out = g_string_sized_new(len + 1);

	g_string_append_len(out, text, len);
	g_string_append_c(out, '\n');
	return out;
}
