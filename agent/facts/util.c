/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gb-isa.h"
#include "util.h"

/* Same limit as the kernel's MAXSYMLINKS. */
#define AGENT_FACTS_MAX_LINKS 40

/*
 * The live system: nothing to confine paths to, so the kernel resolves them
 * as it would for any reader, in one system call instead of one lstat per
 * component (a facts request reads a few hundred sysfs files).
 */
static gboolean agent_facts_is_live(const char *sysroot)
{
	return sysroot == NULL || sysroot[0] == '\0' || g_strcmp0(sysroot, "/") == 0;
}

char *agent_facts_host_path(const char *sysroot, const char *guest_path)
{
	if (agent_facts_is_live(sysroot))
		return g_strdup(guest_path);
	return g_build_filename(sysroot, guest_path, NULL);
}

static char *agent_facts_join_components(GPtrArray *parts)
{
	g_autoptr(GString) str = g_string_new(NULL);

	for (guint i = 0; i < parts->len; i++) {
		g_string_append_c(str, '/');
		g_string_append(str, g_ptr_array_index(parts, i));
	}
	if (str->len == 0)
		g_string_append_c(str, '/');
	return g_string_free(g_steal_pointer(&str), FALSE);
}

/* Pushes the components of path in front of the pending queue (kept reversed). */
static void agent_facts_push_pending(GPtrArray *pending, const char *path)
{
	g_auto(GStrv) split = g_strsplit(path, "/", -1);
	guint n = g_strv_length(split);

	for (guint i = n; i > 0; i--) {
		if (split[i - 1][0] == '\0' || g_strcmp0(split[i - 1], ".") == 0)
			continue;
		g_ptr_array_add(pending, g_strdup(split[i - 1]));
	}
}

char *agent_facts_resolve(const char *sysroot, const char *path, GError **error)
{
	g_autoptr(GPtrArray) done = g_ptr_array_new_with_free_func(g_free);
	g_autoptr(GPtrArray) pending = g_ptr_array_new_with_free_func(g_free);
	guint links = 0;

	agent_facts_push_pending(pending, path);
	while (pending->len > 0) {
		g_autofree char *comp = g_ptr_array_steal_index(pending, pending->len - 1);
		g_autofree char *guest = NULL;
		g_autofree char *host = NULL;
		g_autofree char *target = NULL;
		struct stat st;

		if (g_strcmp0(comp, "..") == 0) {
			if (done->len == 0) {
				g_set_error(error, GB_ERROR, GB_ERROR_IO,
				            "%s: a symlink escapes the sysroot", path);
				return NULL;
			}
			g_ptr_array_remove_index(done, done->len - 1);
			continue;
		}
		g_ptr_array_add(done, g_steal_pointer(&comp));
		guest = agent_facts_join_components(done);
		host = agent_facts_host_path(sysroot, guest);
		if (lstat(host, &st) != 0) {
			int errsv = errno;
			g_set_error(error, GB_ERROR, GB_ERROR_IO, "%s: %s", path,
			            g_strerror(errsv));
			return NULL;
		}
		if (!S_ISLNK(st.st_mode))
			continue;
		if (++links > AGENT_FACTS_MAX_LINKS) {
			g_set_error(error, GB_ERROR, GB_ERROR_IO, "%s: %s", path,
			            g_strerror(ELOOP));
			return NULL;
		}
		target = g_file_read_link(host, NULL);
		if (target == NULL || target[0] == '\0') {
			g_set_error(error, GB_ERROR, GB_ERROR_IO, "%s: unreadable symlink", path);
			return NULL;
		}
		g_ptr_array_remove_index(done, done->len - 1);
		/* An absolute target restarts at the sysroot, as in a chroot. */
		if (target[0] == '/')
			g_ptr_array_set_size(done, 0);
		agent_facts_push_pending(pending, target);
	}
	return agent_facts_join_components(done);
}

GBytes *agent_facts_read_bytes(const char *sysroot, const char *path, GError **error)
{
	g_autofree char *guest = NULL;
	g_autofree char *host = NULL;
	g_autoptr(GByteArray) buf = g_byte_array_new();
	struct stat st;
	int fd;

	if (agent_facts_is_live(sysroot)) {
		fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	} else {
		guest = agent_facts_resolve(sysroot, path, error);
		if (guest == NULL)
			return NULL;
		host = agent_facts_host_path(sysroot, guest);
		/* Resolved already: a link appearing now is a race we refuse to follow. */
		fd = open(host, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
	}
	if (fd < 0) {
		int errsv = errno;
		g_set_error(error, GB_ERROR, GB_ERROR_IO, "%s: %s", path, g_strerror(errsv));
		return NULL;
	}
	if (fstat(fd, &st) != 0) {
		int errsv = errno;
		close(fd);
		g_set_error(error, GB_ERROR, GB_ERROR_IO, "%s: %s", path, g_strerror(errsv));
		return NULL;
	}
	if (!S_ISREG(st.st_mode)) {
		close(fd);
		g_set_error(error, GB_ERROR, GB_ERROR_IO, "%s: %s", path,
		            S_ISDIR(st.st_mode) ? g_strerror(EISDIR) : "not a regular file");
		return NULL;
	}
	/* procfs and sysfs report sizes of 0 or 4096: read until EOF, capped. */
	for (;;) {
		guint8 chunk[4096];
		ssize_t n = read(fd, chunk, sizeof(chunk));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			int errsv = errno;
			close(fd);
			g_set_error(error, GB_ERROR, GB_ERROR_IO, "%s: %s", path,
			            g_strerror(errsv));
			return NULL;
		}
		if (n == 0)
			break;
		if (buf->len + (gsize)n > AGENT_FACTS_MAX_FILE_SIZE) {
			close(fd);
			g_set_error(error, GB_ERROR, GB_ERROR_IO, "%s: larger than %u bytes", path,
			            (guint)AGENT_FACTS_MAX_FILE_SIZE);
			return NULL;
		}
		g_byte_array_append(buf, chunk, (guint)n);
	}
	close(fd);
	return g_byte_array_free_to_bytes(g_steal_pointer(&buf));
}

char *agent_facts_read_text(const char *sysroot, const char *path, GError **error)
{
	g_autoptr(GBytes) bytes = agent_facts_read_bytes(sysroot, path, error);
	const char *data;
	gsize len = 0;

	if (bytes == NULL)
		return NULL;
	data = g_bytes_get_data(bytes, &len);
	if (len > 0 && memchr(data, '\0', len) != NULL) {
		g_set_error(error, GB_ERROR, GB_ERROR_IO, "%s: binary data", path);
		return NULL;
	}
	if (len > 0 && !g_utf8_validate(data, (gssize)len, NULL)) {
		g_set_error(error, GB_ERROR, GB_ERROR_IO, "%s: not valid UTF-8", path);
		return NULL;
	}
	/* An empty GBytes has NULL data. */
	return g_strndup(data != NULL ? data : "", len);
}

char *agent_facts_read_line(const char *sysroot, const char *path, GError **error)
{
	char *text = agent_facts_read_text(sysroot, path, error);

	if (text == NULL)
		return NULL;
	return g_strstrip(text);
}

gboolean agent_facts_parse_int(const char *str, gint64 min, gint64 max, gint64 *out, GError **error)
{
	g_autofree char *copy = g_strstrip(g_strdup(str));
	gint64 val = 0;
	g_autoptr(GError) error_local = NULL;

	if (copy[0] == '\0') {
		g_set_error_literal(error, GB_ERROR, GB_ERROR_PARSE, "empty value");
		return FALSE;
	}
	if (!g_ascii_string_to_signed(copy, 10, min, max, &val, &error_local)) {
		g_autofree char *escaped = g_strescape(copy, NULL);
		if (strlen(escaped) > 40)
			strcpy(escaped + 37, "...");
		g_set_error(error, GB_ERROR, GB_ERROR_PARSE, "invalid number '%s'", escaped);
		return FALSE;
	}
	*out = val;
	return TRUE;
}

gboolean agent_facts_read_int(const char *sysroot, const char *path, gint64 min, gint64 max,
                              gint64 *out, GError **error)
{
	g_autofree char *text = agent_facts_read_text(sysroot, path, error);

	if (text == NULL)
		return FALSE;
	if (!agent_facts_parse_int(text, min, max, out, error)) {
		g_prefix_error(error, "%s: ", path);
		return FALSE;
	}
	return TRUE;
}

static gint agent_facts_cmp_str(gconstpointer a, gconstpointer b)
{
	return g_strcmp0(*(const char *const *)a, *(const char *const *)b);
}

GPtrArray *agent_facts_list_dir(const char *sysroot, const char *path, GError **error)
{
	g_autofree char *guest = NULL;
	g_autofree char *host = NULL;
	g_autoptr(GPtrArray) names = g_ptr_array_new_with_free_func(g_free);
	struct dirent *ent;
	DIR *dir;

	if (agent_facts_is_live(sysroot)) {
		dir = opendir(path);
	} else {
		guest = agent_facts_resolve(sysroot, path, error);
		if (guest == NULL)
			return NULL;
		host = agent_facts_host_path(sysroot, guest);
		dir = opendir(host);
	}
	if (dir == NULL) {
		int errsv = errno;
		g_set_error(error, GB_ERROR, GB_ERROR_IO, "%s: %s", path, g_strerror(errsv));
		return NULL;
	}
	while ((ent = readdir(dir)) != NULL) {
		if (g_strcmp0(ent->d_name, ".") == 0 || g_strcmp0(ent->d_name, "..") == 0)
			continue;
		/* Names end up in JSON: skip what is not valid UTF-8. */
		if (!g_utf8_validate(ent->d_name, -1, NULL))
			continue;
		g_ptr_array_add(names, g_strdup(ent->d_name));
	}
	closedir(dir);
	g_ptr_array_sort(names, agent_facts_cmp_str);
	return g_steal_pointer(&names);
}

char *agent_facts_link_basename(const char *sysroot, const char *path, GError **error)
{
	g_autofree char *guest = agent_facts_resolve(sysroot, path, error);

	if (guest == NULL)
		return NULL;
	return g_path_get_basename(guest);
}

static gint agent_facts_cmp_u32(gconstpointer a, gconstpointer b)
{
	guint32 x = *(const guint32 *)a;
	guint32 y = *(const guint32 *)b;
	return x < y ? -1 : (x > y ? 1 : 0);
}

/* CPU ids above this are garbage: the kernel's NR_CPUS tops out at 8192. */
#define AGENT_FACTS_MAX_CPU_ID 65535

GArray *agent_facts_parse_cpulist(const char *str, GError **error)
{
	g_autoptr(GArray) cpus = g_array_new(FALSE, FALSE, sizeof(guint32));
	g_autofree char *copy = g_strstrip(g_strdup(str));
	g_auto(GStrv) ranges = NULL;

	if (copy[0] == '\0')
		return g_steal_pointer(&cpus);
	ranges = g_strsplit(copy, ",", -1);
	for (guint i = 0; ranges[i] != NULL; i++) {
		g_auto(GStrv) ends = g_strsplit(ranges[i], "-", 3);
		gint64 lo = 0;
		gint64 hi = 0;
		guint n = g_strv_length(ends);

		if (n < 1 || n > 2 ||
		    !agent_facts_parse_int(ends[0], 0, AGENT_FACTS_MAX_CPU_ID, &lo, NULL) ||
		    (n == 2 &&
		     !agent_facts_parse_int(ends[1], 0, AGENT_FACTS_MAX_CPU_ID, &hi, NULL))) {
			g_autofree char *escaped = g_strescape(ranges[i], NULL);
			g_set_error(error, GB_ERROR, GB_ERROR_PARSE, "invalid CPU range '%.40s'",
			            escaped);
			return NULL;
		}
		if (n == 1)
			hi = lo;
		if (hi < lo) {
			g_set_error(error, GB_ERROR, GB_ERROR_PARSE,
			            "invalid CPU range '%s' (end before start)", ranges[i]);
			return NULL;
		}
		for (gint64 c = lo; c <= hi; c++) {
			guint32 v = (guint32)c;
			g_array_append_val(cpus, v);
		}
		if (cpus->len > AGENT_FACTS_MAX_CPU_ID + 1) {
			g_set_error_literal(error, GB_ERROR, GB_ERROR_PARSE, "too many CPUs");
			return NULL;
		}
	}
	g_array_sort(cpus, agent_facts_cmp_u32);
	/* Overlapping ranges ("0-3,2") would count a CPU twice. */
	for (guint i = 1; i < cpus->len; i++) {
		if (g_array_index(cpus, guint32, i) == g_array_index(cpus, guint32, i - 1)) {
			g_set_error(error, GB_ERROR, GB_ERROR_PARSE, "CPU %u listed twice",
			            g_array_index(cpus, guint32, i));
			return NULL;
		}
	}
	return g_steal_pointer(&cpus);
}

gboolean agent_facts_exists(const char *sysroot, const char *path)
{
	g_autofree char *guest = NULL;
	struct stat st;

	if (agent_facts_is_live(sysroot))
		return stat(path, &st) == 0;
	guest = agent_facts_resolve(sysroot, path, NULL);
	return guest != NULL;
}

char *agent_facts_parse_bracketed(const char *str, char ***all, GError **error)
{
	g_auto(GStrv) tokens = g_strsplit_set(str, " \t\n", -1);
	g_autoptr(GStrvBuilder) names = g_strv_builder_new();
	g_autofree char *active = NULL;
	guint n = 0;

	for (guint i = 0; tokens[i] != NULL; i++) {
		char *tok = tokens[i];
		gsize len = strlen(tok);

		if (len == 0)
			continue;
		n++;
		if (len > 2 && tok[0] == '[' && tok[len - 1] == ']') {
			if (active != NULL) {
				g_set_error_literal(error, GB_ERROR, GB_ERROR_PARSE,
				                    "more than one active entry");
				return NULL;
			}
			active = g_strndup(tok + 1, len - 2);
			tok = active;
		}
		if (!agent_facts_is_token(tok) || strchr(tok, '[') != NULL ||
		    strchr(tok, ']') != NULL) {
			g_autofree char *escaped = g_strescape(tokens[i], NULL);
			g_set_error(error, GB_ERROR, GB_ERROR_PARSE, "invalid entry '%.40s'",
			            escaped);
			return NULL;
		}
		g_strv_builder_add(names, tok);
	}
	if (n == 0) {
		g_set_error_literal(error, GB_ERROR, GB_ERROR_PARSE, "empty list");
		return NULL;
	}
	if (active == NULL) {
		/* A lone entry is active without brackets (a queue with only "none"). */
		if (n != 1) {
			g_set_error_literal(error, GB_ERROR, GB_ERROR_PARSE,
			                    "no active entry in brackets");
			return NULL;
		}
		for (guint i = 0; tokens[i] != NULL; i++) {
			if (tokens[i][0] != '\0')
				active = g_strdup(tokens[i]);
		}
	}
	if (all != NULL)
		*all = g_strv_builder_end(names);
	return g_steal_pointer(&active);
}
