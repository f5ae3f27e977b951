/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The Windows agent's own parts, run as a Windows program (under wine here):
 * the facts collectors against what this machine is, and the transport over
 * real named pipes with the framing, resync and reconnects of the protocol.
 */
#include "config.h"

#include <windows.h>

#include "agent-config.h"
#include "dispatch.h"
#include "facts.h"
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
	const char *const sections[] = { "clocksource", "steal", "block", "net", NULL };

	for (guint i = 0; sections[i] != NULL; i++) {
		g_assert_true(json_object_has_member(facts, sections[i]));
		g_assert_true(json_object_get_null_member(facts, sections[i]));
		g_assert_true(errors_name(errors, sections[i]));
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
	/* benchmarks are not offered on Windows yet: guest-info does not list them */
	g_assert_null(strstr(reply, "gb-bench-start"));
	g_assert_nonnull(strstr(reply, "gb-get-facts"));
	CloseHandle(h);
}

int main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	g_test_add_func("/win32/facts/cpu", test_facts_cpu);
	g_test_add_func("/win32/facts/memory-os", test_facts_memory_os);
	g_test_add_func("/win32/facts/absent", test_facts_absent);
	g_test_add("/win32/transport/sync-resync", Fixture, NULL, fixture_setup,
	           test_transport_sync_and_resync, fixture_teardown);
	g_test_add("/win32/transport/too-large", Fixture, NULL, fixture_setup,
	           test_transport_too_large, fixture_teardown);
	g_test_add("/win32/transport/reconnect", Fixture, NULL, fixture_setup,
	           test_transport_reconnect, fixture_teardown);
	return g_test_run();
}
