/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Faults around the real agent binary: the host going away during a
 * benchmark, the agent killed during a disk benchmark, a benchmark's own
 * process killed under the agent, a disk filling up,
 * unreadable sysfs files, symlinks in the scratch dir, command groups
 * disabled in the config file, and the net benchmark's port lifetime.
 */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <glib/gstdio.h>

#include "harness.h"
#include "gb-test-net.h"

/* Entries of a directory, "lost+found" not counted. */
static guint faults_dir_count(const char *path)
{
	g_autoptr(GDir) dir = g_dir_open(path, 0, NULL);
	const char *name;
	guint n = 0;

	g_assert_nonnull(dir);
	while ((name = g_dir_read_name(dir)) != NULL) {
		if (g_strcmp0(name, "lost+found") != 0)
			n++;
	}
	return n;
}

/* Starts a benchmark and returns its job id. */
static gint64 faults_start(Harness *h, const char *test, const char *params)
{
	g_autofree char *req = g_strdup_printf(
	    "{\"execute\":\"gb-bench-start\",\"arguments\":{\"test\":\"%s\",\"params\":%s}}", test,
	    params);
	g_autoptr(JsonNode) reply = harness_call(h, req);
	JsonObject *ret = json_node_get_object(harness_get_return(reply));

	return json_object_get_int_member(ret, "job");
}

/* The job's status object (owned by *reply). */
static JsonObject *faults_status(Harness *h, gint64 job, JsonNode **reply)
{
	g_autofree char *req = g_strdup_printf(
	    "{\"execute\":\"gb-bench-status\",\"arguments\":{\"job\":%" G_GINT64_FORMAT "}}", job);

	*reply = harness_call(h, req);
	return json_node_get_object(harness_get_return(*reply));
}

/* Polls until the job leaves "running"; returns its final state. */
static char *faults_wait(Harness *h, gint64 job, int timeout_ms, char **error_out)
{
	gint64 deadline = g_get_monotonic_time() + (gint64)timeout_ms * 1000;

	for (;;) {
		g_autoptr(JsonNode) reply = NULL;
		JsonObject *st = faults_status(h, job, &reply);
		const char *state = json_object_get_string_member(st, "state");

		if (g_strcmp0(state, "running") != 0) {
			if (error_out != NULL && json_object_has_member(st, "error"))
				*error_out = g_strdup(json_object_get_string_member(st, "error"));
			return g_strdup(state);
		}
		g_assert_cmpint(g_get_monotonic_time(), <, deadline);
		g_usleep(20 * 1000);
	}
}

/* Polls until a running job has made progress (its phase has begun). */
static void faults_wait_progress(Harness *h, gint64 job)
{
	gint64 deadline = g_get_monotonic_time() + (gint64)HARNESS_TIMEOUT_MS * 1000;

	for (;;) {
		g_autoptr(JsonNode) reply = NULL;
		JsonObject *st = faults_status(h, job, &reply);

		g_assert_cmpstr(json_object_get_string_member(st, "state"), ==, "running");
		if (json_object_get_double_member(st, "progress") > 0)
			return;
		g_assert_cmpint(g_get_monotonic_time(), <, deadline);
		g_usleep(5 * 1000);
	}
}

/* The parent pid of pid from /proc/PID/stat, 0 when it has gone. */
static GPid faults_ppid(GPid pid)
{
	g_autofree char *path = g_strdup_printf("/proc/%d/stat", (int)pid);
	g_autofree char *text = NULL;
	const char *end;
	int ppid = 0;

	if (!g_file_get_contents(path, &text, NULL, NULL))
		return 0;
	/* "PID (COMM) STATE PPID ...": COMM may hold anything, so from its last ')' */
	end = strrchr(text, ')');
	if (end == NULL || sscanf(end + 1, " %*c %d", &ppid) != 1)
		return 0;
	return ppid;
}

/*
 * The process of the running benchmark: the one process under the agent (at
 * any depth) whose argv[0] is guestbench-agent-bench; 0 when there is none.
 */
static GPid faults_bench_pid(GPid agent)
{
	g_autoptr(GDir) dir = g_dir_open("/proc", 0, NULL);
	const char *name;
	GPid found = 0;

	g_assert_nonnull(dir);
	while ((name = g_dir_read_name(dir)) != NULL) {
		g_autofree char *cmdline_path = NULL;
		g_autofree char *cmdline = NULL;
		g_autofree char *base = NULL;
		GPid pid = (GPid)g_ascii_strtoll(name, NULL, 10);
		GPid up;

		if (pid <= 0)
			continue;
		cmdline_path = g_strdup_printf("/proc/%d/cmdline", (int)pid);
		if (!g_file_get_contents(cmdline_path, &cmdline, NULL, NULL) || *cmdline == '\0')
			continue;
		base = g_path_get_basename(cmdline);
		if (g_strcmp0(base, "guestbench-agent-bench") != 0)
			continue;
		for (up = faults_ppid(pid); up > 1 && up != agent; up = faults_ppid(up))
			;
		if (up != agent)
			continue;
		g_assert_cmpint(found, ==, 0);
		found = pid;
	}
	return found;
}

/* Waits until pid has gone (reaped by its parent or by init). */
static void faults_wait_gone(GPid pid)
{
	gint64 deadline = g_get_monotonic_time() + (gint64)HARNESS_TIMEOUT_MS * 1000;
	g_autofree char *path = g_strdup_printf("/proc/%d", (int)pid);

	while (g_file_test(path, G_FILE_TEST_EXISTS)) {
		g_autofree char *stat = g_strdup_printf("/proc/%d/stat", (int)pid);
		g_autofree char *text = NULL;
		const char *end;

		/* a zombie of a dead parent waits for init: it runs no more */
		if (g_file_get_contents(stat, &text, NULL, NULL) &&
		    (end = strrchr(text, ')')) != NULL && end[1] == ' ' && end[2] == 'Z')
			return;
		g_assert_cmpint(g_get_monotonic_time(), <, deadline);
		g_usleep(10 * 1000);
	}
}

/*
 * The benchmark's own process is killed (as the OOM killer would): the agent
 * goes on answering and the job is reported failed with the reason, not lost;
 * the next job runs.
 */
static void test_bench_process_killed(void)
{
	Harness h;
	g_autofree char *state = NULL;
	g_autofree char *error = NULL;
	g_autoptr(JsonNode) list = NULL;
	JsonArray *jobs;
	GPid bench;
	gint64 job;

	harness_init(&h);
	harness_start_agent(&h, NULL);
	job = faults_start(&h, "aes", "{\"sizes\":[16],\"seconds\":30}");
	faults_wait_progress(&h, job);
	bench = faults_bench_pid(harness_pid(h.proc));
	g_assert_cmpint(bench, >, 0);
	/* a process group of its own: a cancel reaches all of it, and nothing of the agent */
	g_assert_cmpint(getpgid(bench), ==, bench);
	g_assert_cmpint(kill(bench, SIGKILL), ==, 0);

	state = faults_wait(&h, job, HARNESS_TIMEOUT_MS, &error);
	g_assert_cmpstr(state, ==, "failed");
	g_assert_cmpstr(error, ==, "Benchmark process killed by signal 9 (Killed)");
	faults_wait_gone(bench);
	{
		g_autoptr(JsonNode) pong = harness_call(&h, "{\"execute\":\"guest-ping\"}");
		harness_get_return(pong);
	}
	/* still listed, with its state */
	list = harness_call(&h, "{\"execute\":\"gb-bench-list\"}");
	jobs = json_object_get_array_member(json_node_get_object(harness_get_return(list)), "jobs");
	g_assert_cmpuint(json_array_get_length(jobs), ==, 1);
	g_assert_cmpstr(
	    json_object_get_string_member(json_array_get_object_element(jobs, 0), "state"), ==,
	    "failed");
	/* the agent is not left busy: the next job runs to its end */
	{
		g_autofree char *next_state = NULL;
		gint64 next = faults_start(&h, "aes", "{\"sizes\":[16],\"seconds\":0.2}");

		g_assert_cmpint(next, ==, job + 1);
		next_state = faults_wait(&h, next, HARNESS_TIMEOUT_MS, NULL);
		g_assert_cmpstr(next_state, ==, "done");
	}
	harness_stop(&h);
}

/* The host goes away and comes back while a benchmark runs: the job carries on. */
static void test_reconnect_during_bench(void)
{
	Harness h;
	g_autofree char *state = NULL;
	g_autoptr(JsonNode) reply = NULL;
	JsonObject *st;
	gint64 job;

	harness_init(&h);
	harness_start_agent(&h, NULL);
	job = faults_start(&h, "aes", "{\"sizes\":[16,64],\"seconds\":0.5}");
	harness_send(h.fd, "{\"execute\":\"gb-bench-st", 23);
	close(h.fd);
	h.fd = -1;
	g_usleep(100 * 1000);
	harness_reconnect(&h);
	/* a new host session starts with stale bytes and a resync, as the CLI does */
	harness_send(h.fd, "garbage\xff", 8);
	{
		g_autofree char *line = harness_read_line(h.fd, h.buf, HARNESS_TIMEOUT_MS);
		g_autoptr(JsonNode) err = harness_parse(line);
		harness_assert_error(err, "GenericError", NULL);
	}
	state = faults_wait(&h, job, HARNESS_TIMEOUT_MS, NULL);
	g_assert_cmpstr(state, ==, "done");
	st = faults_status(&h, job, &reply);
	g_assert_true(json_object_has_member(st, "result"));
	g_assert_cmpuint(json_array_get_length(json_object_get_array_member(
	                     json_object_get_object_member(st, "result"), "metrics")),
	                 ==, 2);
	harness_stop(&h);
}

/* The agent dies by signal during a disk benchmark: nothing is left in the scratch dir. */
static void faults_kill_during_disk(int sig)
{
	Harness h;
	g_autofree char *scratch = NULL;
	const char *extra[] = { "--scratch-dir", NULL, NULL };
	GPid bench;
	gint64 job;

	harness_init(&h);
	scratch = g_build_filename(h.tmpdir, "scratch", NULL);
	g_assert_cmpint(g_mkdir(scratch, 0700), ==, 0);
	extra[1] = scratch;
	harness_start_agent(&h, extra);
	job = faults_start(&h, "disk",
	                   "{\"size\":268435456,\"record_sizes\":[4096],\"direct\":false,"
	                   "\"tests\":[\"write\",\"rewrite\",\"read\"]}");
	faults_wait_progress(&h, job);
	bench = faults_bench_pid(harness_pid(h.proc));
	g_assert_cmpint(bench, >, 0);
	/* O_TMPFILE: the file being written has no name, even now */
	g_assert_cmpuint(faults_dir_count(scratch), ==, 0);
	g_subprocess_send_signal(h.proc, sig);
	g_subprocess_wait(h.proc, NULL, NULL);
	if (sig == SIGTERM) {
		/* the job is cancelled and joined; the agent exits cleanly */
		g_assert_true(g_subprocess_get_if_exited(h.proc));
		g_assert_cmpint(g_subprocess_get_exit_status(h.proc), ==, 0);
	} else {
		g_assert_true(g_subprocess_get_if_signaled(h.proc));
	}
	/* the benchmark's process goes with the agent, however the agent ends */
	faults_wait_gone(bench);
	g_assert_cmpuint(faults_dir_count(scratch), ==, 0);
	harness_stop(&h);
}

static void test_sigterm_during_disk(void)
{
	faults_kill_during_disk(SIGTERM);
}

static void test_sigkill_during_disk(void)
{
	faults_kill_during_disk(SIGKILL);
}

typedef struct {
	char *img;
	char *mnt;
} FaultsLoop;

/* A small ext4 on a loop device; FALSE when this machine cannot mount one. */
static gboolean faults_loop_mount(FaultsLoop *loop, const char *tmpdir, const char *size)
{
	g_autofree char *cmd = NULL;
	int status = 0;

	loop->img = g_build_filename(tmpdir, "fs.img", NULL);
	loop->mnt = g_build_filename(tmpdir, "mnt", NULL);
	g_assert_cmpint(g_mkdir(loop->mnt, 0700), ==, 0);
	cmd = g_strdup_printf("sh -c 'truncate -s %s %s && mkfs.ext4 -q -F %s && mount -o loop "
	                      "%s %s' >/dev/null 2>&1",
	                      size, loop->img, loop->img, loop->img, loop->mnt);
	if (!g_spawn_command_line_sync(cmd, NULL, NULL, &status, NULL) ||
	    !g_spawn_check_wait_status(status, NULL)) {
		g_rmdir(loop->mnt);
		return FALSE;
	}
	return TRUE;
}

static void faults_loop_umount(FaultsLoop *loop)
{
	if (loop->mnt != NULL) {
		umount2(loop->mnt, MNT_DETACH);
		g_rmdir(loop->mnt);
	}
	if (loop->img != NULL)
		g_unlink(loop->img);
	g_free(loop->img);
	g_free(loop->mnt);
}

/* The disk fills up while the benchmark writes: the job fails cleanly, the agent goes on. */
static void test_disk_full(void)
{
	Harness h;
	FaultsLoop loop = { 0 };
	const char *extra[] = { "--scratch-dir", NULL, NULL };
	g_autofree char *filler = NULL;
	g_autofree char *params = NULL;
	g_autofree char *state = NULL;
	g_autofree char *error = NULL;
	struct statvfs svfs;
	guint64 avail;
	gint64 job;
	int fd;

	harness_init(&h);
	if (!faults_loop_mount(&loop, h.tmpdir, "48M")) {
		harness_stop(&h);
		g_test_skip("cannot loop-mount an ext4 image here");
		return;
	}
	extra[1] = loop.mnt;
	harness_start_agent(&h, extra);

	/* too big from the start: refused before anything is written */
	{
		g_autoptr(JsonNode) reply = harness_call(
		    &h, "{\"execute\":\"gb-bench-start\",\"arguments\":{\"test\":\"disk\","
		        "\"params\":{\"size\":1073741824,\"record_sizes\":[4096]}}}");
		JsonObject *ret = json_node_get_object(harness_get_return(reply));
		g_autofree char *err = NULL;
		g_autofree char *st = faults_wait(&h, json_object_get_int_member(ret, "job"),
		                                  HARNESS_TIMEOUT_MS, &err);
		g_assert_cmpstr(st, ==, "failed");
		g_assert_nonnull(strstr(err, "Not enough free space"));
	}

	/* fits when it starts; then the space goes while it writes (O_DIRECT keeps it slow) */
	g_assert_cmpint(statvfs(loop.mnt, &svfs), ==, 0);
	avail = (guint64)svfs.f_bavail * svfs.f_frsize;
	params = g_strdup_printf("{\"size\":%" G_GUINT64_FORMAT ",\"record_sizes\":[4096],"
	                         "\"direct\":true,\"fsync\":true}",
	                         (avail - 2 * 1024 * 1024) & ~(guint64)4095);
	job = faults_start(&h, "disk", params);
	/* after the free-space check at the start: the space must go while it writes */
	faults_wait_progress(&h, job);
	filler = g_build_filename(loop.mnt, "filler", NULL);
	fd = open(filler, O_CREAT | O_WRONLY | O_CLOEXEC, 0600);
	g_assert_cmpint(fd, >=, 0);
	g_assert_cmpint(posix_fallocate(fd, 0, (off_t)(avail / 2)), ==, 0);
	close(fd);
	state = faults_wait(&h, job, 60000, &error);
	g_test_message("job ended %s: %s", state, error);
	g_assert_cmpstr(state, ==, "failed");
	g_assert_nonnull(strstr(error, g_strerror(ENOSPC)));
	/* only the filler is left; the agent still answers */
	g_assert_cmpuint(faults_dir_count(loop.mnt), ==, 1);
	{
		g_autoptr(JsonNode) ping = harness_call(&h, "{\"execute\":\"guest-ping\"}");
		harness_get_return(ping);
	}
	g_unlink(filler);
	harness_stop(&h);
	faults_loop_umount(&loop);
}

/* An unreadable sysfs/procfs file: facts still answer, that member null plus an errors entry. */
static void test_unreadable_file(void)
{
	Harness h;
	g_autofree char *sysroot = NULL;
	g_autofree char *cmd = NULL;
	g_autofree char *meminfo = NULL;
	g_autofree char *text = NULL;
	const char *extra[] = { "--sysroot", NULL, NULL };
	g_autoptr(JsonNode) reply = NULL;
	JsonObject *facts;
	JsonObject *memory;
	JsonArray *errors;
	gboolean named = FALSE;

	harness_init(&h);
	sysroot = g_build_filename(h.tmpdir, "root", NULL);
	cmd = g_strdup_printf("cp -a %s/facts/qemu64 %s", g_getenv("GB_TEST_DATA"), sysroot);
	g_assert_true(g_spawn_command_line_sync(cmd, NULL, NULL, NULL, NULL));
	meminfo = g_build_filename(sysroot, "proc", "meminfo", NULL);
	/* the agent gave up CAP_DAC_OVERRIDE: even as root, mode 000 keeps it out */
	g_assert_cmpint(g_chmod(meminfo, 0), ==, 0);
	extra[1] = sysroot;
	harness_start_agent(&h, extra);
	reply = harness_call(&h, "{\"execute\":\"gb-get-facts\",\"arguments\":{\"sections\":"
	                         "[\"cpu\",\"memory\"],\"steal_window_ms\":0}}");
	facts = json_node_get_object(harness_get_return(reply));
	text = gb_json_to_string(harness_get_return(reply), NULL);
	g_test_message("%s", text);
	/* the rest of the facts are there */
	g_assert_nonnull(json_object_get_object_member(facts, "cpu"));
	memory = json_object_get_object_member(facts, "memory");
	g_assert_nonnull(memory);
	g_assert_true(json_object_has_member(memory, "total_bytes"));
	g_assert_true(JSON_NODE_HOLDS_NULL(json_object_get_member(memory, "total_bytes")));
	errors = json_object_get_array_member(facts, "errors");
	for (guint i = 0; i < json_array_get_length(errors); i++) {
		JsonObject *e = json_array_get_object_element(errors, i);
		const char *reason = json_object_get_string_member(e, "reason");
		if (strstr(reason, "/proc/meminfo") != NULL &&
		    strstr(reason, g_strerror(EACCES)) != NULL)
			named = TRUE;
	}
	g_assert_true(named);
	harness_stop(&h);
}

/* A symlink inside the scratch dir that leads out of it is refused, dry run or not. */
static void test_scratch_symlink(void)
{
	Harness h;
	g_autofree char *scratch = NULL;
	g_autofree char *outside = NULL;
	g_autofree char *link = NULL;
	const char *extra[] = { "--scratch-dir", NULL, NULL };
	const char *const dry[] = { "true", "false" };

	harness_init(&h);
	scratch = g_build_filename(h.tmpdir, "scratch", NULL);
	outside = g_build_filename(h.tmpdir, "outside", NULL);
	link = g_build_filename(scratch, "link", NULL);
	g_assert_cmpint(g_mkdir(scratch, 0700), ==, 0);
	g_assert_cmpint(g_mkdir(outside, 0700), ==, 0);
	g_assert_cmpint(symlink(outside, link), ==, 0);
	extra[1] = scratch;
	harness_start_agent(&h, extra);
	for (guint i = 0; i < G_N_ELEMENTS(dry); i++) {
		g_autofree char *req = g_strdup_printf(
		    "{\"execute\":\"gb-bench-start\",\"arguments\":{\"test\":\"disk\",\"params\":"
		    "{\"dir\":\"%s\",\"size\":65536,\"record_sizes\":[4096],\"direct\":false,"
		    "\"dry_run\":%s}}}",
		    link, dry[i]);
		g_autoptr(JsonNode) reply = harness_call(&h, req);
		JsonObject *obj = json_node_get_object(reply);

		/* refused at validation, or (if validation leaves it to the run) by the job */
		if (json_object_has_member(obj, "error")) {
			harness_assert_error(reply, "GenericError", NULL);
			g_assert_nonnull(
			    strstr(json_object_get_string_member(
			               json_object_get_object_member(obj, "error"), "desc"),
			           "outside the scratch directory"));
		} else {
			JsonObject *ret = json_node_get_object(harness_get_return(reply));
			g_autofree char *err = NULL;
			g_autofree char *st = NULL;

			g_assert_false(json_object_has_member(ret, "dry_run"));
			st = faults_wait(&h, json_object_get_int_member(ret, "job"),
			                 HARNESS_TIMEOUT_MS, &err);
			g_assert_cmpstr(st, ==, "failed");
			g_assert_nonnull(strstr(err, "outside the scratch directory"));
		}
	}
	g_assert_cmpuint(faults_dir_count(outside), ==, 0);
	harness_stop(&h);
}

/* block-rpcs globs in the config file disable a whole command group. */
static void test_config_block_glob(void)
{
	Harness h;
	g_autofree char *conf = NULL;
	const char *extra[] = { "-c", NULL, NULL };
	const char *const blocked[] = { "gb-bench-start", "gb-bench-status", "gb-bench-cancel",
		                        "gb-bench-list" };

	harness_init(&h);
	conf = g_build_filename(h.tmpdir, "agent.conf", NULL);
	g_assert_true(
	    g_file_set_contents(conf, "[general]\nblock-rpcs=gb-bench-*;guest-info\n", -1, NULL));
	extra[1] = conf;
	harness_start_agent(&h, extra);
	for (guint i = 0; i < G_N_ELEMENTS(blocked); i++) {
		g_autofree char *req = g_strdup_printf(
		    "{\"execute\":\"%s\",\"arguments\":{\"job\":1,\"test\":\"aes\"}}", blocked[i]);
		g_autofree char *desc = g_strdup_printf("Command %s has been disabled", blocked[i]);
		g_autoptr(JsonNode) reply = harness_call(&h, req);
		/* qemu-ga's class for a disabled command */
		harness_assert_error(reply, "CommandNotFound", desc);
	}
	{
		g_autoptr(JsonNode) reply = harness_call(&h, "{\"execute\":\"guest-info\"}");
		harness_assert_error(reply, "CommandNotFound",
		                     "Command guest-info has been disabled");
	}
	{
		g_autoptr(JsonNode) reply = harness_call(
		    &h, "{\"execute\":\"gb-get-facts\",\"arguments\":{\"sections\":[\"os\"],"
		        "\"steal_window_ms\":0}}");
		harness_get_return(reply);
	}
	harness_stop(&h);
}

/* TRUE when something accepts TCP connections on 127.0.0.1:port. */
static gboolean faults_port_open(guint16 port)
{
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_port = htons(port) };
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	gboolean open_;

	g_assert_cmpint(fd, >=, 0);
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	open_ = connect(fd, (struct sockaddr *)&sin, sizeof(sin)) == 0;
	if (!open_)
		g_assert_cmpint(errno, ==, ECONNREFUSED);
	close(fd);
	return open_;
}

/* The net benchmark listens only while its job runs. */
static void test_net_port_lifetime(void)
{
	Harness h;
	g_autofree char *params = NULL;
	g_autofree char *state = NULL;
	guint16 port = gb_test_free_port();
	gint64 deadline;
	gint64 job;

	harness_init(&h);
	harness_start_agent(&h, NULL);
	g_assert_false(faults_port_open(port));
	params = g_strdup_printf("{\"mode\":\"listen\",\"address\":\"127.0.0.1\",\"port\":%u,"
	                         "\"seconds\":1,\"omit\":0,\"accept_timeout\":5}",
	                         port);
	job = faults_start(&h, "net", params);
	/* listening while the job waits for the host's streams */
	deadline = g_get_monotonic_time() + 3 * G_USEC_PER_SEC;
	while (!faults_port_open(port)) {
		g_assert_cmpint(g_get_monotonic_time(), <, deadline);
		g_usleep(10 * 1000);
	}
	{
		g_autofree char *req = g_strdup_printf(
		    "{\"execute\":\"gb-bench-cancel\",\"arguments\":{\"job\":%" G_GINT64_FORMAT
		    "}}",
		    job);
		g_autoptr(JsonNode) reply = harness_call(&h, req);
		harness_get_return(reply);
	}
	state = faults_wait(&h, job, HARNESS_TIMEOUT_MS, NULL);
	g_assert_cmpstr(state, ==, "cancelled");
	/* the job is over: so is the listener */
	g_assert_false(faults_port_open(port));
	harness_stop(&h);
}

int main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	if (g_getenv("GB_AGENT") == NULL) {
		g_printerr("GB_AGENT is not set; run through meson test\n");
		return 1;
	}
	g_test_add_func("/faults/reconnect-during-bench", test_reconnect_during_bench);
	g_test_add_func("/faults/sigterm-during-disk", test_sigterm_during_disk);
	g_test_add_func("/faults/sigkill-during-disk", test_sigkill_during_disk);
	g_test_add_func("/faults/bench-process-killed", test_bench_process_killed);
	g_test_add_func("/faults/disk-full", test_disk_full);
	g_test_add_func("/faults/unreadable-file", test_unreadable_file);
	g_test_add_func("/faults/scratch-symlink", test_scratch_symlink);
	g_test_add_func("/faults/config-block-glob", test_config_block_glob);
	g_test_add_func("/faults/net-port-lifetime", test_net_port_lifetime);
	return g_test_run();
}
