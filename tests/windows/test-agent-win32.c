/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The Windows agent's own parts, run as a Windows program (under wine here):
 * the facts collectors against what this machine is, the transport over
 * real named pipes with the framing, resync and reconnects of the protocol,
 * and benchmark jobs run by the real guestbench-agent.exe in its
 * guestbench-agent-bench.exe: done, cancelled, killed, unknown.
 */
#include "config.h"

#include <windows.h>

#include <glib/gstdio.h>
#include <tlhelp32.h>

#include "agent-config.h"
#include "dispatch.h"
#include "facts.h"
#include "gb-json.h"
#include "transport.h"

/* Under wine, Z: is the Linux root: the machine's own view, to check against. */
static char *linux_file(const char *path)
{
	g_autofree char *win = g_strdup_printf("Z:%s", path);
	char *text = NULL;

	for (char *p = win; *p != '\0'; p++) {
		if (*p == '/')
			*p = '\\';
	}
	if (!g_file_get_contents(win, &text, NULL, NULL))
		return NULL;
	return text;
}

static char *linux_cpuinfo_flags(void)
{
	g_autofree char *text = linux_file("/proc/cpuinfo");
	g_auto(GStrv) lines = NULL;

	if (text == NULL)
		return NULL;
	lines = g_strsplit(text, "\n", -1);
	for (guint i = 0; lines[i] != NULL; i++) {
		if (g_str_has_prefix(lines[i], "flags")) {
			const char *colon = strchr(lines[i], ':');
			if (colon != NULL)
				return g_strdup(colon + 1);
		}
	}
	return NULL;
}

static JsonObject *collect(const char *section, JsonArray **errors)
{
	const char *sections[] = { section, NULL };
	AgentFactsContext ctx = { .sysroot = "/" };
	g_autoptr(GError) error = NULL;
	g_autoptr(JsonNode) root =
	    agent_facts_collect(&ctx, section != NULL ? sections : NULL, &error);
	JsonObject *obj;

	g_assert_no_error(error);
	obj = json_node_get_object(root);
	if (errors != NULL)
		*errors = json_array_ref(json_object_get_array_member(obj, "errors"));
	return json_object_ref(obj);
}

static gboolean errors_name(JsonArray *errors, const char *member)
{
	for (guint i = 0; i < json_array_get_length(errors); i++) {
		JsonObject *e = json_array_get_object_element(errors, i);
		if (g_strcmp0(json_object_get_string_member(e, "member"), member) == 0)
			return TRUE;
	}
	return FALSE;
}

/* The CPU as CPUID shows it, against the kernel's /proc/cpuinfo of the machine. */
static void test_facts_cpu(void)
{
	g_autoptr(JsonObject) facts = collect("cpu", NULL);
	JsonObject *cpu = json_object_get_object_member(facts, "cpu");
	JsonArray *flags = json_object_get_array_member(cpu, "flags");
	JsonObject *cpuid = json_object_get_object_member(cpu, "cpuid");
	g_autofree char *linux_flags = linux_cpuinfo_flags();
	const char *const key[] = { "sse2",       "aes", "pclmulqdq", "avx", "avx2",
		                    "hypervisor", "vmx", "svm",       "lm",  NULL };

	g_assert_cmpstr(json_object_get_string_member(cpu, "architecture"), ==, "x86_64");
	g_assert_nonnull(json_object_get_string_member(cpu, "vendor"));
	g_assert_cmpint(json_object_get_int_member(cpu, "count"), >=, 1);
	g_assert_cmpint(
	    json_object_get_int_member(cpu, "count"), ==,
	    json_object_get_int_member(json_object_get_object_member(cpu, "topology"), "cpus"));
	g_assert_nonnull(json_object_get_string_member(cpu, "isa_level"));
	g_assert_nonnull(flags);
	if (linux_flags == NULL) {
		g_test_message("no Z:\\proc\\cpuinfo (not under wine): flags not compared");
		return;
	}
	for (guint i = 0; key[i] != NULL; i++) {
		g_autofree char *padded = g_strdup_printf(" %s ", key[i]);
		g_autofree char *hay = g_strdup_printf(" %s ", linux_flags);
		gboolean in_linux = strstr(hay, padded) != NULL;
		gboolean in_flags = FALSE;
		for (guint j = 0; j < json_array_get_length(flags); j++)
			in_flags |= g_strcmp0(json_array_get_string_element(flags, j), key[i]) == 0;
		g_test_message("%s: linux %d, windows agent %d", key[i], in_linux, in_flags);
		g_assert_cmpint(in_linux, ==, in_flags);
		if (json_object_has_member(cpuid, key[i]))
			g_assert_cmpint(json_object_get_boolean_member(cpuid, key[i]), ==,
			                in_linux);
	}
}

static void test_facts_memory_os(void)
{
	g_autoptr(JsonArray) errors = NULL;
	g_autoptr(JsonObject) facts = collect("memory", &errors);
	g_autoptr(JsonObject) os = collect("os", NULL);
	JsonObject *memory = json_object_get_object_member(facts, "memory");
	g_autofree char *meminfo = linux_file("/proc/meminfo");
	const char *release;
	gint64 total = json_object_get_int_member(memory, "total_bytes");

	g_assert_cmpint(total, >, 0);
	g_assert_cmpint(json_object_get_int_member(memory, "page_size_bytes"), ==, 4096);
	g_assert_true(json_object_get_null_member(memory, "thp"));
	g_assert_true(errors_name(errors, "memory.thp"));
	if (meminfo != NULL) {
		/* wine reports the machine's memory: MemTotal, within wine's rounding
		 * (one page was seen) */
		gint64 kib = g_ascii_strtoll(strstr(meminfo, "MemTotal:") + 9, NULL, 10);
		g_test_message("total_bytes %" G_GINT64_FORMAT ", MemTotal %" G_GINT64_FORMAT " kB",
		               total, kib);
		g_assert_cmpint(ABS(total - kib * 1024), <=, 64 * 1024);
	}
	release = json_object_get_string_member(json_object_get_object_member(os, "os"),
	                                        "kernel_release");
	g_assert_nonnull(release);
	g_assert_true(g_regex_match_simple("^[0-9]+\\.[0-9]+\\.[0-9]+$", release, 0, 0));
}

/* What Windows cannot say is null with a reason, never left out. */
static void test_facts_absent(void)
{
	g_autoptr(JsonArray) errors = NULL;
	g_autoptr(JsonObject) facts = collect(NULL, &errors);
	const char *const sections[] = { "clocksource", "steal", NULL };

	for (guint i = 0; sections[i] != NULL; i++) {
		g_assert_true(json_object_has_member(facts, sections[i]));
		g_assert_true(json_object_get_null_member(facts, sections[i]));
		g_assert_true(errors_name(errors, sections[i]));
	}
}

/*
 * The disks: each \\.\PhysicalDriveN Windows has (wine shows one, on its own
 * bus type), by that name; no scheduler (Windows has none), and every null
 * member with its reason in errors.
 */
static void test_facts_block(void)
{
	const char *const members[] = { "bus",         "driver",
		                        "write_cache", "size_bytes",
		                        "rotational",  "logical_block_size",
		                        "removable",   "physical_block_size",
		                        NULL };
	g_autoptr(JsonArray) errors = NULL;
	g_autoptr(JsonObject) facts = collect("block", &errors);
	JsonArray *block = json_object_get_array_member(facts, "block");

	g_assert_nonnull(block);
	for (guint i = 0; i < json_array_get_length(block); i++) {
		JsonObject *disk = json_array_get_object_element(block, i);
		const char *name = json_object_get_string_member(disk, "name");
		g_autofree char *sched = g_strdup_printf("block.%s.scheduler", name);

		g_test_message("%s: bus %s", name,
		               json_object_get_null_member(disk, "bus")
		                   ? "null"
		                   : json_object_get_string_member(disk, "bus"));
		g_assert_true(g_regex_match_simple("^PhysicalDrive[0-9]+$", name, 0, 0));
		g_assert_true(json_object_get_null_member(disk, "scheduler"));
		g_assert_true(json_object_get_null_member(disk, "schedulers"));
		g_assert_true(errors_name(errors, sched));
		g_assert_false(json_object_get_boolean_member(disk, "cdrom"));
		for (guint m = 0; members[m] != NULL; m++) {
			g_autofree char *full = g_strdup_printf("block.%s.%s", name, members[m]);
			g_assert_true(json_object_has_member(disk, members[m]));
			if (json_object_get_null_member(disk, members[m]))
				g_assert_true(errors_name(errors, full));
		}
	}
}

/*
 * The NICs: every adapter but loopback (wine shows the machine's interfaces),
 * each with its name and MTU; what the registry does not hold (no driver
 * service under wine) and what Windows has no count of (transmit queues) is
 * null with its reason. The e2e test checks names and MTUs against
 * /sys/class/net and the registry path with a NetKVM adapter written there.
 */
static void test_facts_net(void)
{
	g_autoptr(JsonArray) errors = NULL;
	g_autoptr(JsonObject) facts = collect("net", &errors);
	JsonArray *net = json_object_get_array_member(facts, "net");

	g_assert_nonnull(net);
	g_assert_cmpuint(json_array_get_length(net), >, 0);
	for (guint i = 0; i < json_array_get_length(net); i++) {
		JsonObject *nic = json_array_get_object_element(net, i);
		const char *name = json_object_get_string_member(nic, "name");
		g_autofree char *tx = g_strdup_printf("net.%s.tx_queues", name);

		g_test_message("%s: mtu %" G_GINT64_FORMAT, name,
		               json_object_get_int_member(nic, "mtu"));
		g_assert_cmpstr(name, !=, "lo");
		g_assert_cmpint(json_object_get_int_member(nic, "mtu"), >, 0);
		g_assert_true(json_object_get_null_member(nic, "tx_queues"));
		g_assert_true(errors_name(errors, tx));
		if (json_object_get_null_member(nic, "driver")) {
			g_autofree char *drv = g_strdup_printf("net.%s.driver", name);
			g_assert_true(errors_name(errors, drv));
		}
	}
}

/* The transport, served on this thread's main context; a client on another. */
typedef struct {
	AgentContext ctx;
	AgentConfig *config;
	AgentWinTransport *transport;
	wchar_t pipe[128];
	char pipe_utf8[128];
} Fixture;

static GString *fixture_handle(const char *msg, gsize len, const GError *error, gpointer data)
{
	Fixture *f = data;

	if (msg == NULL)
		return agent_dispatch_framing_error(error);
	return agent_dispatch_message(&f->ctx, msg, len);
}

static void fixture_setup(Fixture *f, gconstpointer data)
{
	g_autoptr(GError) error = NULL;
	static guint counter;

	g_snprintf(f->pipe_utf8, sizeof(f->pipe_utf8), "\\\\.\\pipe\\gb-test-%lu-%u",
	           (unsigned long)GetCurrentProcessId(), ++counter);
	MultiByteToWideChar(CP_UTF8, 0, f->pipe_utf8, -1, f->pipe, G_N_ELEMENTS(f->pipe));
	f->config = agent_config_new();
	g_free(f->config->method);
	f->config->method = g_strdup("pipe-listen");
	f->config->path = g_strdup(f->pipe_utf8);
	f->config->max_message_size = 4096;
	f->ctx.config = f->config;
	f->transport = agent_win_transport_new(f->config, fixture_handle, f, &error);
	g_assert_no_error(error);
}

static void fixture_teardown(Fixture *f, gconstpointer data)
{
	agent_win_transport_free(f->transport);
	agent_config_free(f->config);
}

/* A client: connects (the pipe appears once the agent's thread created it). */
static HANDLE client_connect(Fixture *f)
{
	for (;;) {
		HANDLE h = CreateFileW(f->pipe, GENERIC_READ | GENERIC_WRITE, 0, NULL,
		                       OPEN_EXISTING, 0, NULL);
		if (h != INVALID_HANDLE_VALUE)
			return h;
		g_assert_cmpuint(GetLastError(), !=, ERROR_ACCESS_DENIED);
		g_main_context_iteration(NULL, FALSE);
		WaitNamedPipeW(f->pipe, 20);
	}
}

typedef struct {
	HANDLE h;
	GString *got;
	gsize want; /* lines */
	gboolean done;
} Reader;

static gpointer reader_thread(gpointer data)
{
	Reader *r = data;
	char buf[4096];
	DWORD n;

	while (!r->done) {
		gsize lines = 0;
		if (!ReadFile(r->h, buf, sizeof(buf), &n, NULL) || n == 0)
			break;
		g_string_append_len(r->got, buf, n);
		for (gsize i = 0; i < r->got->len; i++)
			lines += r->got->str[i] == '\n';
		if (lines >= r->want)
			break;
	}
	g_atomic_int_set(&r->done, TRUE);
	g_main_context_wakeup(NULL); /* the main thread waits in its loop */
	return NULL;
}

/* Sends request bytes and returns the first `lines` reply lines. */
static char *exchange(HANDLE h, const char *request, gsize len, gsize lines)
{
	Reader r = { .h = h, .got = g_string_new(NULL), .want = lines };
	GThread *thread;
	DWORD n;

	/* a synchronous handle serves one call at a time: write, then read (the
	 * agent's I/O thread reads without waiting for this thread's main loop) */
	g_assert_true(WriteFile(h, request, (DWORD)len, &n, NULL));
	g_assert_cmpuint(n, ==, len);
	thread = g_thread_new("reader", reader_thread, &r);
	while (!g_atomic_int_get(&r.done))
		g_main_context_iteration(NULL, TRUE);
	g_thread_join(thread);
	return g_string_free(r.got, FALSE);
}

static void test_transport_sync_and_resync(Fixture *f, gconstpointer data)
{
	HANDLE h = client_connect(f);
	g_autofree char *sync = NULL;
	g_autofree char *resync = NULL;
	static const char garbage[] = "{\"execute\": \"guest-ping\", \"argu\xff"
	                              "{\"execute\":\"guest-ping\",\"id\":7}\n";

	static const char sync_req[] =
	    "{\"execute\":\"guest-sync-delimited\",\"arguments\":{\"id\":42}}";

	sync = exchange(h, sync_req, strlen(sync_req), 1);
	g_assert_cmpint((guchar)sync[0], ==, 0xff);
	g_assert_cmpstr(sync + 1, ==, "{\"return\":42}\n");
	/* a request cut by 0xFF: one parse error, then the next request is answered */
	resync = exchange(h, garbage, sizeof(garbage) - 1, 2);
	g_assert_nonnull(strstr(resync, "\"class\":\"GenericError\""));
	g_assert_nonnull(strstr(resync, "{\"return\":{},\"id\":7}\n"));
	CloseHandle(h);
}

/* Over the size limit: an error, and the port keeps serving. */
static void test_transport_too_large(Fixture *f, gconstpointer data)
{
	HANDLE h = client_connect(f);
	g_autoptr(GString) big =
	    g_string_new("{\"execute\":\"guest-ping\",\"arguments\":{\"x\":\"");
	g_autofree char *reply = NULL;
	g_autofree char *after = NULL;

	while (big->len < 8192)
		g_string_append_c(big, 'a');
	g_string_append(big, "\"}}\n");
	reply = exchange(h, big->str, big->len, 1);
	g_assert_nonnull(strstr(reply, "\"error\""));
	after = exchange(h, "{\"execute\":\"guest-ping\"}\n", 25, 1);
	g_assert_cmpstr(after, ==, "{\"return\":{}}\n");
	CloseHandle(h);
}

/* The host goes away mid-message and comes back: nothing of before is kept. */
static void test_transport_reconnect(Fixture *f, gconstpointer data)
{
	HANDLE h = client_connect(f);
	g_autofree char *reply = NULL;
	DWORD n;

	g_assert_true(WriteFile(h, "{\"execute\":\"guest-pi", 20, &n, NULL));
	CloseHandle(h);
	for (guint round = 0; round < 3; round++) {
		g_autofree char *r = NULL;
		h = client_connect(f);
		r = exchange(h, "{\"execute\":\"guest-ping\",\"id\":1}\n", 32, 1);
		g_assert_cmpstr(r, ==, "{\"return\":{},\"id\":1}\n");
		CloseHandle(h);
	}
	h = client_connect(f);
	reply = exchange(h, "{\"execute\":\"guest-info\"}\n", 25, 1);
	g_assert_nonnull(strstr(reply, "\"version\":\"" GB_VERSION "\""));
	/* the benchmark commands are offered on Windows */
	g_assert_nonnull(strstr(reply, "gb-bench-start"));
	g_assert_nonnull(strstr(reply, "gb-bench-cancel"));
	g_assert_nonnull(strstr(reply, "gb-get-facts"));
	CloseHandle(h);
}

/* ---- benchmark jobs, run by the real agent (guestbench-agent.exe) ---- */

typedef struct {
	PROCESS_INFORMATION pi; /* the agent */
	wchar_t pipe[128];
	HANDLE job; /* the test's: the agent dies with the test */
	HANDLE h;   /* the connection to it */
	GString *buf;
	char *dir; /* its config */
} AgentProc;

/* The build tree's agent, from this test's place in it (tests/windows). */
static char *agent_exe_path(void)
{
	wchar_t self[MAX_PATH];
	DWORD len = GetModuleFileNameW(NULL, self, G_N_ELEMENTS(self));
	g_autofree char *exe = NULL;
	g_autofree char *dir = NULL;

	g_assert_cmpuint(len, >, 0);
	g_assert_cmpuint(len, <, G_N_ELEMENTS(self));
	exe = g_utf16_to_utf8((const gunichar2 *)self, len, NULL, NULL, NULL);
	dir = g_path_get_dirname(exe);
	return g_build_filename(dir, "..", "..", "agent", "win32", "guestbench-agent.exe", NULL);
}

static void agent_proc_setup(AgentProc *a, gconstpointer data)
{
	static guint counter;
	g_autoptr(GError) error = NULL;
	g_autofree char *exe = agent_exe_path();
	g_autofree char *conf = NULL;
	g_autofree char *pipe = NULL;
	g_autofree char *cmdline = NULL;
	g_autofree gunichar2 *wcmdline = NULL;
	SECURITY_ATTRIBUTES inherit = { sizeof(inherit), NULL, TRUE };
	STARTUPINFOW si = { .cb = sizeof(si) };
	g_autofree char *log = NULL;
	JOBOBJECT_EXTENDED_LIMIT_INFORMATION limits = { 0 };
	HANDLE null_in;
	HANDLE log_h;

	g_assert_true(g_file_test(exe, G_FILE_TEST_IS_REGULAR));
	a->dir = g_dir_make_tmp("gb-bench-XXXXXX", &error);
	g_assert_no_error(error);
	conf = g_build_filename(a->dir, "agent.conf", NULL);
	/* the job's deadline (its runs x this + slack) bounds every wait on it */
	g_file_set_contents(conf, "[general]\nmax-bench-seconds=30\n", -1, &error);
	g_assert_no_error(error);
	pipe = g_strdup_printf("\\\\.\\pipe\\gb-bench-%lu-%u", (unsigned long)GetCurrentProcessId(),
	                       ++counter);
	MultiByteToWideChar(CP_UTF8, 0, pipe, -1, a->pipe, G_N_ELEMENTS(a->pipe));
	cmdline = g_strdup_printf("\"%s\" -m pipe-listen -p %s -c \"%s\"", exe, pipe, conf);
	wcmdline = g_utf8_to_utf16(cmdline, -1, NULL, NULL, NULL);
	/*
	 * Its output goes to a log (shown at the end): an agent that outlived a
	 * failed test must not hold the test's output open. And it goes with
	 * this test, however the test ends: a Job Object of the test's own.
	 */
	log = g_build_filename(a->dir, "agent.log", NULL);
	{
		g_autofree gunichar2 *wlog = g_utf8_to_utf16(log, -1, NULL, NULL, NULL);
		log_h = CreateFileW((const wchar_t *)wlog, GENERIC_WRITE,
		                    FILE_SHARE_READ | FILE_SHARE_WRITE, &inherit, CREATE_ALWAYS, 0,
		                    NULL);
	}
	g_assert_true(log_h != INVALID_HANDLE_VALUE);
	null_in = CreateFileW(L"NUL", GENERIC_READ, FILE_SHARE_READ | FILE_SHARE_WRITE, &inherit,
	                      OPEN_EXISTING, 0, NULL);
	si.dwFlags = STARTF_USESTDHANDLES;
	si.hStdInput = null_in;
	si.hStdOutput = log_h;
	si.hStdError = log_h;
	a->job = CreateJobObjectW(NULL, NULL);
	g_assert_nonnull(a->job);
	/* the agent's children are not in it: a job the benchmark process is in is the agent's */
	limits.BasicLimitInformation.LimitFlags =
	    JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE | JOB_OBJECT_LIMIT_SILENT_BREAKAWAY_OK;
	g_assert_true(SetInformationJobObject(a->job, JobObjectExtendedLimitInformation, &limits,
	                                      sizeof(limits)));
	g_assert_true(CreateProcessW(NULL, (wchar_t *)wcmdline, NULL, NULL, TRUE,
	                             CREATE_NO_WINDOW | CREATE_SUSPENDED, NULL, NULL, &si, &a->pi));
	g_assert_true(AssignProcessToJobObject(a->job, a->pi.hProcess));
	ResumeThread(a->pi.hThread);
	CloseHandle(null_in);
	CloseHandle(log_h);
	CloseHandle(a->pi.hThread);
	g_test_message("agent %lu: %s", (unsigned long)a->pi.dwProcessId, cmdline);
	/* connect once it has made the pipe; it must not die meanwhile */
	for (;;) {
		a->h = CreateFileW(a->pipe, GENERIC_READ | GENERIC_WRITE, 0, NULL, OPEN_EXISTING, 0,
		                   NULL);
		if (a->h != INVALID_HANDLE_VALUE)
			break;
		g_assert_cmpuint(WaitForSingleObject(a->pi.hProcess, 0), ==, WAIT_TIMEOUT);
		if (!WaitNamedPipeW(a->pipe, 100))
			Sleep(20);
	}
	a->buf = g_string_new(NULL);
}

static void agent_proc_teardown(AgentProc *a, gconstpointer data)
{
	g_autofree char *conf = g_build_filename(a->dir, "agent.conf", NULL);
	g_autofree char *log = g_build_filename(a->dir, "agent.log", NULL);
	g_autofree char *text = NULL;

	if (a->h != NULL && a->h != INVALID_HANDLE_VALUE)
		CloseHandle(a->h);
	if (a->pi.hProcess != NULL) {
		TerminateProcess(a->pi.hProcess, 0);
		WaitForSingleObject(a->pi.hProcess, INFINITE);
		CloseHandle(a->pi.hProcess);
	}
	if (a->job != NULL)
		CloseHandle(a->job);
	if (g_file_get_contents(log, &text, NULL, NULL))
		g_test_message("agent's log:\n%s", text);
	g_string_free(a->buf, TRUE);
	g_remove(log);
	g_remove(conf);
	g_rmdir(a->dir);
	g_free(a->dir);
}

/* One request, one reply line: the reply object (owned), "return" or "error". */
static JsonObject *agent_call(AgentProc *a, const char *request)
{
	g_autofree char *line = g_strdup_printf("%s\n", request);
	g_autoptr(GError) error = NULL;
	g_autoptr(JsonNode) node = NULL;
	JsonObject *obj = NULL;
	const char *nl;
	DWORD n = 0;

	g_assert_true(WriteFile(a->h, line, (DWORD)strlen(line), &n, NULL));
	g_assert_cmpuint(n, ==, strlen(line));
	while ((nl = memchr(a->buf->str, '\n', a->buf->len)) == NULL) {
		char chunk[65536];

		/* the agent answers or its end breaks the pipe: no other way out */
		g_assert_true(ReadFile(a->h, chunk, sizeof(chunk), &n, NULL));
		g_string_append_len(a->buf, chunk, n);
	}
	node = gb_json_parse(a->buf->str, (gsize)(nl - a->buf->str), &error);
	g_assert_no_error(error);
	g_string_erase(a->buf, 0, nl - a->buf->str + 1);
	g_assert_true(gb_json_node_get_object(node, "reply", &obj, &error));
	return json_object_ref(obj);
}

/* The "return" object of a request that must succeed (owned). */
static JsonObject *agent_call_ok(AgentProc *a, const char *request)
{
	g_autoptr(JsonObject) reply = agent_call(a, request);

	if (json_object_has_member(reply, "error")) {
		JsonObject *err = json_object_get_object_member(reply, "error");
		g_error("%s: %s", request, json_object_get_string_member(err, "desc"));
	}
	return json_object_ref(json_object_get_object_member(reply, "return"));
}

static gint64 bench_start(AgentProc *a, const char *test, const char *params)
{
	g_autofree char *req = g_strdup_printf(
	    "{\"execute\":\"gb-bench-start\",\"arguments\":{\"test\":\"%s\",\"params\":%s}}", test,
	    params);
	g_autoptr(JsonObject) ret = agent_call_ok(a, req);

	return json_object_get_int_member(ret, "job");
}

static JsonObject *bench_status(AgentProc *a, gint64 id)
{
	g_autofree char *req = g_strdup_printf(
	    "{\"execute\":\"gb-bench-status\",\"arguments\":{\"job\":%" G_GINT64_FORMAT "}}", id);

	return agent_call_ok(a, req);
}

/*
 * Asks for the job's status until it has ended (the agent's deadline for
 * the job, runs x max-bench-seconds + slack, bounds it); the last status.
 */
static JsonObject *bench_wait_end(AgentProc *a, gint64 id)
{
	for (;;) {
		g_autoptr(JsonObject) st = bench_status(a, id);

		if (g_strcmp0(json_object_get_string_member(st, "state"), "running") != 0)
			return g_steal_pointer(&st);
		Sleep(50);
	}
}

/* Until the job's phase starts with phase (e.g. the cipher: its process runs aes). */
static void bench_wait_phase(AgentProc *a, gint64 id, const char *phase)
{
	for (;;) {
		g_autoptr(JsonObject) st = bench_status(a, id);
		const char *state = json_object_get_string_member(st, "state");

		g_assert_cmpstr(state, ==, "running");
		if (g_str_has_prefix(json_object_get_string_member(st, "phase"), phase)) {
			g_test_message("measuring: %s, progress %.3f",
			               json_object_get_string_member(st, "phase"),
			               json_object_get_double_member(st, "progress"));
			return;
		}
		Sleep(50);
	}
}

/* The agent's guestbench-agent-bench.exe (by parent and name); 0 when there is none. */
static DWORD find_worker(DWORD agent_pid)
{
	HANDLE snap = CreateToolhelp32Snapshot(TH32CS_SNAPPROCESS, 0);
	PROCESSENTRY32W pe = { .dwSize = sizeof(pe) };
	DWORD found = 0;

	g_assert_true(snap != INVALID_HANDLE_VALUE);
	for (BOOL more = Process32FirstW(snap, &pe); more; more = Process32NextW(snap, &pe)) {
		if (pe.th32ParentProcessID == agent_pid &&
		    _wcsicmp(pe.szExeFile, L"guestbench-agent-bench.exe") == 0) {
			found = pe.th32ProcessID;
			break;
		}
	}
	CloseHandle(snap);
	return found;
}

static void agent_assert_pings(AgentProc *a)
{
	g_autoptr(JsonObject) ret = agent_call_ok(a, "{\"execute\":\"guest-ping\"}");

	g_assert_cmpuint(json_object_get_size(ret), ==, 0);
}

static void test_bench_aes_done(AgentProc *a, gconstpointer data)
{
	gint64 id = bench_start(a, "aes", "{\"sizes\":[16,8192],\"seconds\":0.2}");
	g_autoptr(JsonObject) st = bench_wait_end(a, id);
	g_autoptr(JsonNode) st_node = json_node_init_object(json_node_alloc(), st);
	g_autofree char *text = gb_json_to_string(st_node, NULL);
	JsonObject *result;
	JsonArray *metrics;
	JsonObject *cpu;
	JsonObject *idle;
	const char *const sizes[] = { "16", "8192" };

	g_test_message("gb-bench-status: %s", text);
	g_assert_cmpstr(json_object_get_string_member(st, "state"), ==, "done");
	g_assert_cmpfloat(json_object_get_double_member(st, "progress"), ==, 1.0);
	g_assert_false(json_object_has_member(st, "error"));
	result = json_object_get_object_member(st, "result");
	g_assert_nonnull(result);
	g_assert_cmpstr(json_object_get_string_member(result, "test"), ==, "aes");
	metrics = json_object_get_array_member(result, "metrics");
	g_assert_cmpuint(json_array_get_length(metrics), ==, G_N_ELEMENTS(sizes));
	for (guint i = 0; i < G_N_ELEMENTS(sizes); i++) {
		JsonObject *m = json_array_get_object_element(metrics, i);
		JsonObject *labels = json_object_get_object_member(m, "labels");

		g_assert_cmpstr(json_object_get_string_member(m, "metric"), ==, "aes-128-gcm");
		g_assert_cmpstr(json_object_get_string_member(m, "unit"), ==, "B/s");
		g_assert_cmpstr(json_object_get_string_member(labels, "block_size"), ==, sizes[i]);
		g_assert_cmpfloat(json_object_get_double_member(m, "value"), >, 0);
	}
	/* the facts of the Windows collectors, taken by the job's process */
	cpu = json_object_get_object_member(json_object_get_object_member(result, "facts"), "cpu");
	g_assert_nonnull(cpu);
	g_assert_cmpuint(json_array_get_length(json_object_get_array_member(cpu, "flags")), >, 0);
	/* the idle check from GetSystemTimes; Windows reports no steal time */
	idle = json_object_get_object_member(result, "idle");
	g_assert_nonnull(idle);
	if (json_object_has_member(idle, "unavailable"))
		g_test_message("idle check unavailable: %s",
		               json_object_get_string_member(idle, "unavailable"));
	else
		g_assert_cmpfloat(json_object_get_double_member(idle, "busy_percent"), >=, 0);
	g_assert_true(json_object_get_null_member(idle, "steal_percent"));
	/* its process has gone */
	g_assert_cmpuint(find_worker(a->pi.dwProcessId), ==, 0);
}

static void test_bench_aes_cancel(AgentProc *a, gconstpointer data)
{
	gint64 id = bench_start(a, "aes", "{\"sizes\":[16,8192,16384],\"seconds\":2}");
	g_autofree char *req = g_strdup_printf(
	    "{\"execute\":\"gb-bench-cancel\",\"arguments\":{\"job\":%" G_GINT64_FORMAT "}}", id);
	g_autoptr(JsonObject) cancel_ret = NULL;
	g_autoptr(JsonObject) st = NULL;
	JsonObject *result;

	/* once the first size is measured: what it measured is kept when cancelled */
	bench_wait_phase(a, id, "aes-128-gcm 8192 bytes");
	cancel_ret = agent_call_ok(a, req);
	st = bench_wait_end(a, id);
	g_assert_cmpstr(json_object_get_string_member(st, "state"), ==, "cancelled");
	g_assert_cmpstr(json_object_get_string_member(st, "error"), ==, "Benchmark cancelled");
	/* it reported what it had measured: cancelled by its own flag, not killed */
	result = json_object_get_object_member(st, "result");
	g_assert_nonnull(result);
	g_assert_true(json_object_get_boolean_member(result, "partial"));
	g_assert_cmpuint(json_array_get_length(json_object_get_array_member(result, "metrics")), >=,
	                 1);
	agent_assert_pings(a);
	g_assert_cmpuint(find_worker(a->pi.dwProcessId), ==, 0);
}

static void test_bench_worker_killed(AgentProc *a, gconstpointer data)
{
	gint64 id = bench_start(a, "aes", "{\"sizes\":[16,8192],\"seconds\":5}");
	g_autoptr(JsonObject) st = NULL;
	g_autoptr(JsonObject) again = NULL;
	const char *err;
	DWORD pid;
	HANDLE worker;
	BOOL in_job = FALSE;
	gint64 next;

	bench_wait_phase(a, id, "aes-128-gcm");
	pid = find_worker(a->pi.dwProcessId);
	g_assert_cmpuint(pid, !=, 0);
	worker =
	    OpenProcess(PROCESS_TERMINATE | PROCESS_QUERY_INFORMATION | SYNCHRONIZE, FALSE, pid);
	g_assert_nonnull(worker);
	/* the agent put it in a Job Object (the one that kills it with the agent) */
	if (!IsProcessInJob(worker, NULL, &in_job))
		g_error("IsProcessInJob: error %lu", (unsigned long)GetLastError());
	g_assert_true(in_job);
	g_assert_true(TerminateProcess(worker, 77));
	WaitForSingleObject(worker, INFINITE);
	CloseHandle(worker);
	st = bench_wait_end(a, id);
	err = json_object_get_string_member(st, "error");
	g_test_message("after the kill: %s", err);
	g_assert_cmpstr(json_object_get_string_member(st, "state"), ==, "failed");
	g_assert_cmpstr(err, ==, "Benchmark process exited with status 77 without a result");
	agent_assert_pings(a);
	/* the agent is not left busy: a new job runs */
	next = bench_start(a, "aes", "{\"sizes\":[16],\"seconds\":0.2}");
	g_assert_cmpint(next, ==, id + 1);
	again = bench_wait_end(a, next);
	g_assert_cmpstr(json_object_get_string_member(again, "state"), ==, "done");
}

/* The agent killed mid-job: its Job Object's last handle closes and the process goes. */
static void test_bench_agent_killed(AgentProc *a, gconstpointer data)
{
	gint64 id = bench_start(a, "aes", "{\"sizes\":[16],\"seconds\":30}");
	DWORD pid;
	HANDLE worker;
	DWORD code = 0;

	bench_wait_phase(a, id, "aes-128-gcm");
	pid = find_worker(a->pi.dwProcessId);
	g_assert_cmpuint(pid, !=, 0);
	worker = OpenProcess(PROCESS_QUERY_LIMITED_INFORMATION | SYNCHRONIZE, FALSE, pid);
	g_assert_nonnull(worker);
	g_assert_true(TerminateProcess(a->pi.hProcess, 1));
	WaitForSingleObject(a->pi.hProcess, INFINITE);
	/* it ends, killed with the agent's Job Object or stopping as its output broke */
	WaitForSingleObject(worker, INFINITE);
	g_assert_true(GetExitCodeProcess(worker, &code));
	/* 1 when it saw its output break and stopped on its own; the Job Object
	 * may be first, or not: both end it, so neither is asserted */
	g_test_message("benchmark process after the agent's end: exit code %lu%s",
	               (unsigned long)code,
	               code == 1 ? " (stopped on its own: its output broke)" : "");
	CloseHandle(worker);
}

/*
 * mem on Windows: VirtualAlloc'd 4 KiB pages measured as on Linux (first-touch
 * faults, read/write/copy bandwidth, latency), and thp and hugetlb unavailable,
 * each saying why (no THP on Windows; large pages need the lock-memory
 * privilege the agent removed).
 */
static void test_bench_mem(AgentProc *a, gconstpointer data)
{
	gint64 id =
	    bench_start(a, "mem", "{\"size\":16777216,\"pages\":[\"4k\",\"thp\",\"hugetlb\"]}");
	g_autoptr(JsonObject) st = bench_wait_end(a, id);
	JsonArray *metrics;
	guint measured = 0;
	guint unavailable = 0;

	g_assert_cmpstr(json_object_get_string_member(st, "state"), ==, "done");
	metrics =
	    json_object_get_array_member(json_object_get_object_member(st, "result"), "metrics");
	for (guint i = 0; i < json_array_get_length(metrics); i++) {
		JsonObject *m = json_array_get_object_element(metrics, i);
		const char *pages = json_object_get_string_member(
		    json_object_get_object_member(m, "labels"), "pages");

		if (g_strcmp0(pages, "4k") == 0) {
			g_test_message("4k %s: %g %s", json_object_get_string_member(m, "metric"),
			               json_object_get_double_member(m, "value"),
			               json_object_get_string_member(m, "unit"));
			g_assert_cmpfloat(json_object_get_double_member(m, "value"), >, 0);
			measured++;
		} else {
			const char *why = json_object_get_string_member(m, "unavailable");
			g_assert_true(json_object_get_null_member(m, "value"));
			g_assert_nonnull(why);
			g_assert_nonnull(strstr(why, g_strcmp0(pages, "thp") == 0
			                                 ? "Windows has no transparent huge pages"
			                                 : "SeLockMemoryPrivilege"));
			unavailable++;
		}
	}
	/* page-fault, three bandwidths and latency for each kind */
	g_assert_cmpuint(measured, ==, 5);
	g_assert_cmpuint(unavailable, ==, 10);
	agent_assert_pings(a);
}

static void test_bench_unknown(AgentProc *a, gconstpointer data)
{
	const char *const others[] = { "disk", "net", NULL };

	for (guint i = 0; others[i] != NULL; i++) {
		g_autofree char *req = g_strdup_printf(
		    "{\"execute\":\"gb-bench-start\",\"arguments\":{\"test\":\"%s\"}}", others[i]);
		g_autofree char *want =
		    g_strdup_printf("Unknown benchmark '%s' (known: aes, mem)", others[i]);
		g_autoptr(JsonObject) reply = agent_call(a, req);
		JsonObject *err = json_object_get_object_member(reply, "error");

		g_assert_nonnull(err);
		g_assert_cmpstr(json_object_get_string_member(err, "desc"), ==, want);
	}
	agent_assert_pings(a);
}

/*
 * guestbench-agent.exe --oneshot JSON, as qemu-ga's guest-exec runs it: its
 * stdout (all of it) and exit status; stderr goes to NUL.
 */
static char *oneshot_run(const char *json, DWORD *status)
{
	g_autofree char *exe = agent_exe_path();
	g_autofree char *quoted = g_strescape(json, NULL);
	g_autofree char *cmdline = g_strdup_printf("\"%s\" --oneshot \"%s\"", exe, quoted);
	g_autofree gunichar2 *wcmdline = g_utf8_to_utf16(cmdline, -1, NULL, NULL, NULL);
	SECURITY_ATTRIBUTES inherit = { sizeof(inherit), NULL, TRUE };
	STARTUPINFOW si = { .cb = sizeof(si) };
	PROCESS_INFORMATION pi;
	GString *out = g_string_new(NULL);
	HANDLE rd = NULL;
	HANDLE wr = NULL;
	HANDLE null_h;
	char buf[4096];
	DWORD n;

	g_assert_true(CreatePipe(&rd, &wr, &inherit, 0));
	g_assert_true(SetHandleInformation(rd, HANDLE_FLAG_INHERIT, 0));
	null_h = CreateFileW(L"NUL", GENERIC_READ | GENERIC_WRITE,
	                     FILE_SHARE_READ | FILE_SHARE_WRITE, &inherit, OPEN_EXISTING, 0, NULL);
	si.dwFlags = STARTF_USESTDHANDLES;
	si.hStdInput = null_h;
	si.hStdOutput = wr;
	si.hStdError = null_h;
	g_assert_true(CreateProcessW(NULL, (wchar_t *)wcmdline, NULL, NULL, TRUE, CREATE_NO_WINDOW,
	                             NULL, NULL, &si, &pi));
	CloseHandle(wr);
	CloseHandle(null_h);
	CloseHandle(pi.hThread);
	while (ReadFile(rd, buf, sizeof(buf), &n, NULL) && n > 0)
		g_string_append_len(out, buf, n);
	CloseHandle(rd);
	g_assert_cmpuint(WaitForSingleObject(pi.hProcess, INFINITE), ==, WAIT_OBJECT_0);
	g_assert_true(GetExitCodeProcess(pi.hProcess, status));
	CloseHandle(pi.hProcess);
	return g_string_free(out, FALSE);
}

/*
 * --oneshot, what the host's qga: targets run through guest-exec: the reply's
 * bytes on stdout ("\n", never "\r\n"), a gb-bench-start that answers with its
 * finished job, and usage errors for no request and for two.
 */
static void test_oneshot(void)
{
	DWORD status = 0;
	g_autofree char *ping = oneshot_run("{\"execute\":\"guest-ping\",\"id\":7}", &status);
	g_autofree char *bench = NULL;
	g_autofree char *none = NULL;
	g_autofree char *two = NULL;
	g_autoptr(JsonNode) reply = NULL;
	JsonObject *ret;

	g_assert_cmpuint(status, ==, 0);
	g_assert_cmpstr(ping, ==, "{\"return\":{},\"id\":7}\n");

	bench = oneshot_run("{\"execute\":\"gb-bench-start\",\"arguments\":{\"test\":\"aes\","
	                    "\"params\":{\"sizes\":[16],\"seconds\":0.2}}}",
	                    &status);
	g_assert_cmpuint(status, ==, 0);
	reply = json_from_string(bench, NULL);
	g_assert_nonnull(reply);
	ret = json_object_get_object_member(json_node_get_object(reply), "return");
	g_assert_nonnull(ret);
	g_assert_cmpstr(json_object_get_string_member(ret, "state"), ==, "done");
	g_assert_nonnull(json_object_get_object_member(ret, "result"));

	none = oneshot_run("", &status);
	g_assert_cmpuint(status, ==, 2);
	g_assert_cmpstr(none, ==, "");
	two = oneshot_run("{\"execute\":\"guest-ping\"}{\"execute\":\"guest-ping\"}", &status);
	g_assert_cmpuint(status, ==, 2);
}

int main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	g_test_add_func("/win32/facts/cpu", test_facts_cpu);
	g_test_add_func("/win32/facts/memory-os", test_facts_memory_os);
	g_test_add_func("/win32/facts/absent", test_facts_absent);
	g_test_add_func("/win32/facts/net", test_facts_net);
	g_test_add_func("/win32/facts/block", test_facts_block);
	g_test_add("/win32/transport/sync-resync", Fixture, NULL, fixture_setup,
	           test_transport_sync_and_resync, fixture_teardown);
	g_test_add("/win32/transport/too-large", Fixture, NULL, fixture_setup,
	           test_transport_too_large, fixture_teardown);
	g_test_add("/win32/transport/reconnect", Fixture, NULL, fixture_setup,
	           test_transport_reconnect, fixture_teardown);
	g_test_add("/win32/bench/aes-done", AgentProc, NULL, agent_proc_setup, test_bench_aes_done,
	           agent_proc_teardown);
	g_test_add("/win32/bench/aes-cancel", AgentProc, NULL, agent_proc_setup,
	           test_bench_aes_cancel, agent_proc_teardown);
	g_test_add("/win32/bench/worker-killed", AgentProc, NULL, agent_proc_setup,
	           test_bench_worker_killed, agent_proc_teardown);
	g_test_add("/win32/bench/agent-killed", AgentProc, NULL, agent_proc_setup,
	           test_bench_agent_killed, agent_proc_teardown);
	g_test_add_func("/win32/oneshot", test_oneshot);
	g_test_add("/win32/bench/mem", AgentProc, NULL, agent_proc_setup, test_bench_mem,
	           agent_proc_teardown);
	g_test_add("/win32/bench/unknown", AgentProc, NULL, agent_proc_setup, test_bench_unknown,
	           agent_proc_teardown);
	return g_test_run();
}
