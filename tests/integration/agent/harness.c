/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <glib/gstdio.h>

#include "harness.h"

void harness_init(Harness *h)
{
	g_autoptr(GError) error = NULL;

	memset(h, 0, sizeof(*h));
	h->fd = -1;
	h->tmpdir = g_dir_make_tmp("gb-agent-test-XXXXXX", &error);
	g_assert_no_error(error);
	h->sock = g_build_filename(h->tmpdir, "sock", NULL);
	h->buf = g_byte_array_new();
}

int harness_connect(const char *path)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	g_assert_cmpint(fd, >=, 0);
	g_assert_cmpuint(strlen(path), <, sizeof(sun.sun_path));
	memcpy(sun.sun_path, path, strlen(path));
	if (connect(fd, (struct sockaddr *)&sun, sizeof(sun)) != 0) {
		close(fd);
		return -1;
	}
	return fd;
}

static void harness_child_setup(gpointer user_data)
{
	prctl(PR_SET_PDEATHSIG, SIGKILL);
}

void harness_start(Harness *h, const char *const *argv)
{
	g_autoptr(GSubprocessLauncher) launcher = NULL;
	g_autoptr(GPtrArray) args = g_ptr_array_new_with_free_func(g_free);
	g_autoptr(GError) error = NULL;
	gint64 deadline = g_get_monotonic_time() + HARNESS_TIMEOUT_MS * 1000;

	for (guint i = 0; argv[i] != NULL; i++) {
		if (g_strcmp0(argv[i], "@SOCK@") == 0)
			g_ptr_array_add(args, g_strdup(h->sock));
		else if (g_strcmp0(argv[i], "@DIR@") == 0)
			g_ptr_array_add(args, g_strdup(h->tmpdir));
		else
			g_ptr_array_add(args, g_strdup(argv[i]));
	}
	g_ptr_array_add(args, NULL);
	launcher = g_subprocess_launcher_new(G_SUBPROCESS_FLAGS_NONE);
	/* a test that aborts before harness_stop() must not leave its agent behind */
	g_subprocess_launcher_set_child_setup(launcher, harness_child_setup, NULL, NULL);
	h->proc = g_subprocess_launcher_spawnv(launcher, (const char *const *)args->pdata, &error);
	g_assert_no_error(error);

	/* the socket exists before listen(): retry until a connect succeeds */
	while ((h->fd = harness_connect(h->sock)) < 0) {
		g_assert_cmpint(g_get_monotonic_time(), <, deadline);
		/* an agent that exited (bad arguments, bind failure) fails here, not by timeout */
		g_assert_nonnull(g_subprocess_get_identifier(h->proc));
		g_usleep(10 * 1000);
	}
}

void harness_start_agent(Harness *h, const char *const *extra)
{
	g_autoptr(GPtrArray) args = g_ptr_array_new();
	const char *agent = g_getenv("GB_AGENT");

	g_assert_nonnull(agent);
	g_ptr_array_add(args, (gpointer)agent);
	g_ptr_array_add(args, (gpointer) "-m");
	g_ptr_array_add(args, (gpointer) "unix-listen");
	g_ptr_array_add(args, (gpointer) "-p");
	g_ptr_array_add(args, (gpointer) "@SOCK@");
	for (guint i = 0; extra != NULL && extra[i] != NULL; i++)
		g_ptr_array_add(args, (gpointer)extra[i]);
	g_ptr_array_add(args, NULL);
	harness_start(h, (const char *const *)args->pdata);
}

static void harness_rm_rf(const char *path)
{
	g_autoptr(GDir) dir = g_dir_open(path, 0, NULL);
	const char *name;

	while (dir != NULL && (name = g_dir_read_name(dir)) != NULL) {
		g_autofree char *fn = g_build_filename(path, name, NULL);
		if (g_file_test(fn, G_FILE_TEST_IS_DIR) && !g_file_test(fn, G_FILE_TEST_IS_SYMLINK))
			harness_rm_rf(fn);
		else
			g_unlink(fn);
	}
	g_rmdir(path);
}

void harness_stop(Harness *h)
{
	if (h->fd >= 0)
		close(h->fd);
	h->fd = -1;
	if (h->proc != NULL) {
		g_subprocess_force_exit(h->proc);
		g_subprocess_wait(h->proc, NULL, NULL);
		g_clear_object(&h->proc);
	}
	if (h->tmpdir != NULL)
		harness_rm_rf(h->tmpdir);
	g_clear_pointer(&h->tmpdir, g_free);
	g_clear_pointer(&h->sock, g_free);
	g_clear_pointer(&h->buf, g_byte_array_unref);
}

void harness_reconnect(Harness *h)
{
	if (h->fd >= 0)
		close(h->fd);
	g_byte_array_set_size(h->buf, 0);
	h->fd = harness_connect(h->sock);
	g_assert_cmpint(h->fd, >=, 0);
}

void harness_send(int fd, const void *data, gsize len)
{
	const guint8 *p = data;

	while (len > 0) {
		ssize_t n = send(fd, p, len, MSG_NOSIGNAL);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == ENOTSOCK)
			n = write(fd, p, len);
		g_assert_cmpint(n, >, 0);
		p += n;
		len -= (gsize)n;
	}
}

char *harness_read_line(int fd, GByteArray *buf, int timeout_ms)
{
	gint64 deadline = g_get_monotonic_time() + (gint64)timeout_ms * 1000;

	for (;;) {
		guint8 tmp[65536];
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		gint64 left;
		ssize_t n;
		/* an empty GByteArray's data is NULL, which memchr must not get */
		guint8 *nl = buf->len > 0 ? memchr(buf->data, '\n', buf->len) : NULL;

		if (nl != NULL) {
			gsize len = (gsize)(nl - buf->data);
			char *line = g_strndup((const char *)buf->data, len);
			g_byte_array_remove_range(buf, 0, (guint)len + 1);
			return line;
		}
		left = (deadline - g_get_monotonic_time()) / 1000;
		if (left <= 0)
			return NULL;
		if (poll(&pfd, 1, (int)left) <= 0)
			continue;
		n = read(fd, tmp, sizeof(tmp));
		if (n < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (n <= 0)
			return NULL;
		g_byte_array_append(buf, tmp, (guint)n);
	}
}

JsonNode *harness_parse(const char *line)
{
	g_autoptr(GError) error = NULL;
	JsonNode *node;

	g_assert_nonnull(line);
	node = gb_json_parse(line, strlen(line), &error);
	g_assert_no_error(error);
	g_assert_nonnull(node);
	g_assert_true(JSON_NODE_HOLDS_OBJECT(node));
	return node;
}

JsonNode *harness_call(Harness *h, const char *json)
{
	g_autofree char *line = NULL;

	harness_send(h->fd, json, strlen(json));
	harness_send(h->fd, "\n", 1);
	line = harness_read_line(h->fd, h->buf, HARNESS_TIMEOUT_MS);
	if (line == NULL)
		g_error("no reply to %s", json);
	return harness_parse(line);
}

JsonNode *harness_get_return(JsonNode *reply)
{
	JsonObject *obj = json_node_get_object(reply);
	g_autofree char *text = gb_json_to_string(reply, NULL);

	if (!json_object_has_member(obj, "return"))
		g_error("expected a return, got %s", text);
	g_assert_false(json_object_has_member(obj, "error"));
	return json_object_get_member(obj, "return");
}

void harness_assert_error(JsonNode *reply, const char *klass, const char *desc)
{
	g_autoptr(GError) error = NULL;
	g_autofree char *text = gb_json_to_string(reply, NULL);
	JsonObject *obj = json_node_get_object(reply);
	JsonObject *err = NULL;
	const char *val = NULL;

	if (!gb_json_get_object(obj, "error", GB_JSON_REQUIRED, &err, &error))
		g_error("expected an error, got %s", text);
	g_assert_false(json_object_has_member(obj, "return"));
	g_assert_true(gb_json_get_string(err, "class", GB_JSON_REQUIRED, &val, &error));
	g_assert_cmpstr(val, ==, klass);
	g_assert_true(gb_json_get_string(err, "desc", GB_JSON_REQUIRED, &val, &error));
	if (desc != NULL)
		g_assert_cmpstr(val, ==, desc);
}

char *harness_get_id(JsonNode *reply)
{
	JsonObject *obj = json_node_get_object(reply);

	if (!json_object_has_member(obj, "id"))
		return NULL;
	return gb_json_to_string(json_object_get_member(obj, "id"), NULL);
}

GPid harness_pid(GSubprocess *proc)
{
	const char *id = g_subprocess_get_identifier(proc);

	g_assert_nonnull(id);
	return (GPid)g_ascii_strtoll(id, NULL, 10);
}

/* The parent pid from /proc/PID/stat; 0 when pid has gone. */
static GPid harness_ppid(GPid pid)
{
	g_autofree char *fn = g_strdup_printf("/proc/%d/stat", (int)pid);
	g_autofree char *contents = NULL;
	const char *rest;
	int ppid = 0;

	if (!g_file_get_contents(fn, &contents, NULL, NULL))
		return 0;
	/* the command name may hold anything: fields start after the last ')' */
	rest = strrchr(contents, ')');
	if (rest == NULL || sscanf(rest + 1, " %*c %d", &ppid) != 1)
		return 0;
	return ppid;
}

GPid harness_find_session(GPid agent)
{
	g_autoptr(GDir) dir = g_dir_open("/proc", 0, NULL);
	const char *name;

	g_assert_nonnull(dir);
	while ((name = g_dir_read_name(dir)) != NULL) {
		GPid pid = (GPid)g_ascii_strtoll(name, NULL, 10);
		g_autofree char *fn = NULL;
		g_autofree char *cmdline = NULL;
		g_autofree char *base = NULL;

		if (pid <= 0 || harness_ppid(pid) != agent)
			continue;
		fn = g_strdup_printf("/proc/%d/cmdline", (int)pid);
		if (!g_file_get_contents(fn, &cmdline, NULL, NULL) || *cmdline == '\0')
			continue;
		base = g_path_get_basename(cmdline);
		if (g_strcmp0(base, "guestbench-agent-session") == 0)
			return pid;
	}
	return 0;
}

GPid harness_session_pid(GPid agent)
{
	gint64 deadline = g_get_monotonic_time() + (gint64)HARNESS_TIMEOUT_MS * 1000;
	GPid pid;

	while ((pid = harness_find_session(agent)) == 0) {
		g_assert_cmpint(g_get_monotonic_time(), <, deadline);
		g_usleep(10 * 1000);
	}
	return pid;
}

guint64 harness_proc_cpu_ticks(GPid pid)
{
	g_autofree char *fn = g_strdup_printf("/proc/%d/stat", pid);
	g_autofree char *contents = NULL;
	g_auto(GStrv) fields = NULL;
	const char *rest;

	g_assert_true(g_file_get_contents(fn, &contents, NULL, NULL));
	/* the command name may hold spaces: fields start after the last ')' */
	rest = strrchr(contents, ')');
	g_assert_nonnull(rest);
	fields = g_strsplit(rest + 2, " ", -1);
	/* fields[0] is field 3 (state); utime and stime are fields 14 and 15 */
	g_assert_cmpuint(g_strv_length(fields), >, 13);
	g_assert_cmpstr(fields[0], !=, "Z");
	return g_ascii_strtoull(fields[11], NULL, 10) + g_ascii_strtoull(fields[12], NULL, 10);
}

guint64 harness_proc_rss_kib(GPid pid)
{
	g_autofree char *fn = g_strdup_printf("/proc/%d/status", pid);
	g_autofree char *contents = NULL;
	const char *p;

	g_assert_true(g_file_get_contents(fn, &contents, NULL, NULL));
	p = strstr(contents, "\nVmRSS:");
	g_assert_nonnull(p);
	return g_ascii_strtoull(p + strlen("\nVmRSS:"), NULL, 10);
}

guint64 harness_proc_status_kib(GPid pid, const char *field)
{
	g_autofree char *fn = g_strdup_printf("/proc/%d/status", pid);
	g_autofree char *contents = NULL;
	g_autofree char *key = g_strdup_printf("\n%s:", field);
	const char *p;

	g_assert_true(g_file_get_contents(fn, &contents, NULL, NULL));
	p = strstr(contents, key);
	g_assert_nonnull(p);
	return g_ascii_strtoull(p + strlen(key), NULL, 10);
}

void harness_send_reading(int fd, const void *data, gsize len, GByteArray *buf)
{
	const guint8 *p = data;
	gint64 deadline = g_get_monotonic_time() + (gint64)HARNESS_TIMEOUT_MS * 1000;

	while (len > 0) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN | POLLOUT };
		guint8 tmp[65536];

		g_assert_cmpint(g_get_monotonic_time(), <, deadline);
		if (poll(&pfd, 1, 100) <= 0)
			continue;
		if (pfd.revents & POLLIN) {
			ssize_t n = recv(fd, tmp, sizeof(tmp), MSG_DONTWAIT);
			if (n > 0) {
				g_byte_array_append(buf, tmp, (guint)n);
				deadline =
				    g_get_monotonic_time() + (gint64)HARNESS_TIMEOUT_MS * 1000;
			}
		}
		if (pfd.revents & POLLOUT) {
			ssize_t n = send(fd, p, MIN(len, 65536), MSG_NOSIGNAL | MSG_DONTWAIT);
			if (n < 0 && (errno == EAGAIN || errno == EINTR))
				continue;
			g_assert_cmpint(n, >, 0);
			p += n;
			len -= (gsize)n;
			deadline = g_get_monotonic_time() + (gint64)HARNESS_TIMEOUT_MS * 1000;
		}
		g_assert_false(pfd.revents & (POLLERR | POLLNVAL));
	}
}

int harness_run_agent(const char *const *argv, const char *stdin_data, char **out, char **err)
{
	g_autoptr(GPtrArray) args = g_ptr_array_new();
	g_autoptr(GSubprocess) proc = NULL;
	g_autoptr(GError) error = NULL;
	const char *agent = g_getenv("GB_AGENT");

	g_assert_nonnull(agent);
	g_ptr_array_add(args, (gpointer)agent);
	for (guint i = 0; argv[i] != NULL; i++)
		g_ptr_array_add(args, (gpointer)argv[i]);
	g_ptr_array_add(args, NULL);
	proc = g_subprocess_newv((const char *const *)args->pdata,
	                         G_SUBPROCESS_FLAGS_STDIN_PIPE | G_SUBPROCESS_FLAGS_STDOUT_PIPE |
	                             G_SUBPROCESS_FLAGS_STDERR_PIPE,
	                         &error);
	g_assert_no_error(error);
	g_subprocess_communicate_utf8(proc, stdin_data != NULL ? stdin_data : "", NULL, out, err,
	                              &error);
	g_assert_no_error(error);
	g_assert_true(g_subprocess_get_if_exited(proc));
	return g_subprocess_get_exit_status(proc);
}

gboolean harness_sanitized(void)
{
	return g_strcmp0(g_getenv("GB_SANITIZED"), "1") == 0;
}
