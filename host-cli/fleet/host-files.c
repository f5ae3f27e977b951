/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"

#include <stdlib.h>
#include <unistd.h>
#include <sys/stat.h>
#include <fcntl.h>
#include <errno.h>

#include "guestbench-protocol.h"

#include "fleet/host-files.h"

/* Host files bigger than this are not host files (smaps of a huge QEMU stays far below). */
#define CLI_HOST_MAX_FILE (64 * 1024 * 1024)
/* ---- host files ---------------------------------------------------------------------- */

char *cli_host_path(const char *sysroot, const char *path)
{
	if (sysroot == NULL || sysroot[0] == '\0' || g_strcmp0(sysroot, "/") == 0)
		return g_strdup(path);
	return g_build_filename(sysroot, path, NULL);
}

char *cli_host_read(const char *sysroot, const char *path, GError **error)
{
	g_autofree char *full = cli_host_path(sysroot, path);
	g_autofree char *contents = NULL;
	gsize len = 0;

	if (!g_file_get_contents(full, &contents, &len, error))
		return NULL;
	if (len > CLI_HOST_MAX_FILE || memchr(contents, '\0', len) != NULL) {
		g_set_error(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT,
		            "%s is not a text file of a sane size", full);
		return NULL;
	}
	return g_steal_pointer(&contents);
}

gboolean cli_host_parse_uint(const char *text, guint64 max, guint64 *out)
{
	return g_ascii_string_to_unsigned(text, 10, 0, max, out, NULL);
}

static gint cli_host_cmp_uint(gconstpointer a, gconstpointer b)
{
	guint x = *(const guint *)a;
	guint y = *(const guint *)b;
	return x < y ? -1 : x > y;
}

GArray *cli_host_parse_cpulist(const char *text, GError **error)
{
	g_autoptr(GArray) cpus = g_array_new(FALSE, FALSE, sizeof(guint));
	g_autofree char *copy = g_strstrip(g_strdup(text));
	g_auto(GStrv) parts = NULL;

	if (copy[0] == '\0')
		return g_steal_pointer(&cpus);
	parts = g_strsplit(copy, ",", -1);
	for (guint i = 0; parts[i] != NULL; i++) {
		g_auto(GStrv) range = g_strsplit(parts[i], "-", 3);
		guint64 lo = 0, hi = 0;

		/* g_strsplit() of "" is an empty vector */
		if (range[0] == NULL || g_strv_length(range) > 2 ||
		    !cli_host_parse_uint(range[0], CLI_HOST_MAX_CPU, &lo) ||
		    (range[1] != NULL && !cli_host_parse_uint(range[1], CLI_HOST_MAX_CPU, &hi))) {
			g_set_error(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT,
			            "invalid CPU list '%s'", copy);
			return NULL;
		}
		if (range[1] == NULL)
			hi = lo;
		if (hi < lo) {
			g_set_error(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT,
			            "invalid CPU list '%s': range %s is backwards", copy, parts[i]);
			return NULL;
		}
		for (guint64 cpu = lo; cpu <= hi; cpu++) {
			guint val = (guint)cpu;
			g_array_append_val(cpus, val);
		}
	}
	g_array_sort(cpus, cli_host_cmp_uint);
	return g_steal_pointer(&cpus);
}

char **cli_host_read_cpu_flags(const char *sysroot, GError **error)
{
	g_autofree char *text = cli_host_read(sysroot, "/proc/cpuinfo", error);
	g_auto(GStrv) lines = NULL;

	if (text == NULL)
		return NULL;
	lines = g_strsplit(text, "\n", -1);
	for (guint i = 0; lines[i] != NULL; i++) {
		/* x86 says "flags", arm64 "Features" */
		const char *colon = strchr(lines[i], ':');
		g_autofree char *key = NULL;

		if (colon == NULL)
			continue;
		key = g_strstrip(g_strndup(lines[i], colon - lines[i]));
		if (g_strcmp0(key, "flags") == 0 || g_strcmp0(key, "Features") == 0) {
			g_autofree char *value = g_strstrip(g_strdup(colon + 1));
			return g_strsplit_set(value, " \t", -1);
		}
	}
	g_set_error_literal(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT,
	                    "no flags line in /proc/cpuinfo");
	return NULL;
}

gboolean cli_read_regular_file(const char *path, gsize max_size, char **contents, gsize *len,
                               GError **error)
{
	g_autoptr(GString) buf = NULL;
	struct stat st;
	int fd;

	/* O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0) {
		int err = errno;
		g_set_error(error, G_FILE_ERROR, g_file_error_from_errno(err), "cannot read %s: %s",
		            path, g_strerror(err));
		return FALSE;
	}
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_INVAL,
		            "cannot read %s: not a regular file", path);
		return FALSE;
	}
	buf = g_string_sized_new(MIN((gsize)st.st_size, max_size) + 1);
	for (;;) {
		char chunk[65536];
		gssize n = read(fd, chunk, sizeof(chunk));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			int err = errno;
			close(fd);
			g_set_error(error, G_FILE_ERROR, g_file_error_from_errno(err),
			            "cannot read %s: %s", path, g_strerror(err));
			return FALSE;
		}
		if (n == 0)
			break;
		/* checked while reading: the file may grow after fstat() */
		if (buf->len + n > max_size) {
			close(fd);
			g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_FAILED,
			            "cannot read %s: larger than %" G_GSIZE_FORMAT " bytes", path,
			            max_size);
			return FALSE;
		}
		g_string_append_len(buf, chunk, n);
	}
	close(fd);
	*len = buf->len;
	*contents = g_string_free(g_steal_pointer(&buf), FALSE);
	return TRUE;
}
