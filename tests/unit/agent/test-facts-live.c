/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

#include "cpu-x86.h"
#include "facts-test.h"
#include "gb-test-emulated.h"

/* The first value of KEY in /proc/cpuinfo, read here without the agent's code. */
static char *cpuinfo_value(const char *text, const char *key)
{
	g_auto(GStrv) lines = g_strsplit(text, "\n", -1);

	for (guint i = 0; lines[i] != NULL; i++) {
		char *colon = strchr(lines[i], ':');
		g_autofree char *k = NULL;
		if (colon == NULL)
			continue;
		k = g_strstrip(g_strndup(lines[i], colon - lines[i]));
		if (g_strcmp0(k, key) == 0)
			return g_strstrip(g_strdup(colon + 1));
	}
	return NULL;
}

static gboolean array_has_name(JsonNode *arr, const char *name)
{
	JsonArray *a = json_node_get_array(arr);

	for (guint i = 0; i < json_array_get_length(a); i++) {
		JsonObject *o = json_array_get_object_element(a, i);
		if (g_strcmp0(json_object_get_string_member(o, "name"), name) == 0)
			return TRUE;
	}
	return FALSE;
}

static void test_live(void)
{
	g_autoptr(JsonArray) unused = json_array_new();
	AgentFactsContext ctx = { .sysroot = "/", .steal_window_ms = 100, .errors = unused };
	g_autoptr(GError) error = NULL;
	g_autoptr(JsonNode) facts = agent_facts_collect(&ctx, NULL, &error);
	JsonArray *errors;
	g_autofree char *cpuinfo = NULL;
	g_autofree char *meminfo = NULL;
	g_autofree char *clock = NULL;
	g_autofree char *model = NULL;
	g_autofree char *flags = NULL;
	g_auto(GStrv) flag_list = NULL;
	guint nflags = 0;
	guint nproc = 0;
	const char *mt;
	gint64 memtotal_kb = 0;
	struct utsname uts;
	GDir *dir;
	const char *name;

	g_assert_no_error(error);
	errors = json_object_get_array_member(json_node_get_object(facts), "errors");
	if (g_test_verbose()) {
		g_autofree char *s = facts_to_string(facts);
		g_test_message("%s", s);
	}
	/* Shown to help read a failure; members checked below must have none. */
	for (guint i = 0; i < json_array_get_length(errors); i++) {
		JsonObject *e = json_array_get_object_element(errors, i);
		g_test_message("error: %s: %s", json_object_get_string_member(e, "member"),
		               json_object_get_string_member(e, "reason"));
	}

	/* CPU, from /proc/cpuinfo read here. */
	g_assert_true(g_file_get_contents("/proc/cpuinfo", &cpuinfo, NULL, NULL));
	model = cpuinfo_value(cpuinfo, "model name");
	if (model != NULL)
		g_assert_cmpstr(facts_get_str(facts, "cpu.model_name"), ==, model);
	flags = cpuinfo_value(cpuinfo, "flags");
	if (flags == NULL)
		flags = cpuinfo_value(cpuinfo, "Features");
	if (flags != NULL) {
		flag_list = g_strsplit_set(flags, " \t", -1);
		for (guint i = 0; flag_list[i] != NULL; i++)
			nflags += flag_list[i][0] != '\0';
		g_assert_cmpuint(
		    json_array_get_length(json_node_get_array(facts_get(facts, "cpu.flags"))), ==,
		    nflags);
	}
	{
		g_auto(GStrv) lines = g_strsplit(cpuinfo, "\n", -1);
		for (guint i = 0; lines[i] != NULL; i++) {
			if (g_str_has_prefix(lines[i], "processor") &&
			    strchr(" \t:", lines[i][strlen("processor")]) != NULL)
				nproc++;
		}
	}
	g_assert_cmpint(facts_get_int(facts, "cpu.count"), ==, nproc);
	g_assert_null(facts_error_for(errors, "cpu.flags"));
	g_assert_null(facts_error_for(errors, "cpu.count"));

#if defined(__x86_64__) || defined(__i386__)
	{
		guint32 a, b, c, d, max;
		guint32 ecx1, ebx7 = 0, ecx7 = 0, ecx81 = 0;
		char sig[13] = { 0 };
		gboolean hv_flag = g_strv_contains((const char *const *)flag_list, "hypervisor");

		__cpuid(0, max, b, c, d);
		__cpuid(1, a, b, ecx1, d);
		if (max >= 7)
			__cpuid_count(7, 0, a, ebx7, ecx7, d);
		__cpuid(0x80000000, a, b, c, d);
		if (a >= 0x80000001)
			__cpuid(0x80000001, a, b, ecx81, d);
		/* What CPUID says, bit for bit. */
		g_assert_cmpint(facts_get_bool(facts, "cpu.cpuid.hypervisor"), ==,
		                (ecx1 >> 31) & 1);
		g_assert_cmpint(facts_get_bool(facts, "cpu.cpuid.aes"), ==, (ecx1 >> 25) & 1);
		g_assert_cmpint(facts_get_bool(facts, "cpu.cpuid.pclmulqdq"), ==, (ecx1 >> 1) & 1);
		g_assert_cmpint(facts_get_bool(facts, "cpu.cpuid.avx"), ==, (ecx1 >> 28) & 1);
		g_assert_cmpint(facts_get_bool(facts, "cpu.cpuid.vmx"), ==, (ecx1 >> 5) & 1);
		g_assert_cmpint(facts_get_bool(facts, "cpu.cpuid.avx2"), ==, (ebx7 >> 5) & 1);
		g_assert_cmpint(facts_get_bool(facts, "cpu.cpuid.sha"), ==, (ebx7 >> 29) & 1);
		g_assert_cmpint(facts_get_bool(facts, "cpu.cpuid.vaes"), ==, (ecx7 >> 9) & 1);
		g_assert_cmpint(facts_get_bool(facts, "cpu.cpuid.vpclmulqdq"), ==,
		                (ecx7 >> 10) & 1);
		g_assert_cmpint(facts_get_bool(facts, "cpu.cpuid.svm"), ==, (ecx81 >> 2) & 1);
		g_assert_cmpint(facts_get_bool(facts, "cpu.hypervisor.present"), ==,
		                (ecx1 >> 31) & 1);

		__cpuid(0x40000000, a, b, c, d);
		memcpy(sig, &b, 4);
		memcpy(sig + 4, &c, 4);
		memcpy(sig + 8, &d, 4);
		g_test_message("hypervisor flag %d, CPUID 0x40000000 '%s'", hv_flag, sig);
		if (hv_flag && memcmp(sig, "KVMKVMKVM\0\0\0", 12) == 0)
			g_assert_cmpstr(facts_get_str(facts, "cpu.hypervisor.vendor"), ==, "KVM");
		else if (hv_flag && g_strcmp0(sig, "bhyve bhyve ") == 0)
			g_assert_cmpstr(facts_get_str(facts, "cpu.hypervisor.vendor"), ==, "bhyve");
	}
#endif

	/* Memory. */
	g_assert_true(g_file_get_contents("/proc/meminfo", &meminfo, NULL, NULL));
	mt = strstr(meminfo, "MemTotal:");
	g_assert_nonnull(mt);
	memtotal_kb = g_ascii_strtoll(mt + strlen("MemTotal:"), NULL, 10);
	g_assert_cmpint(facts_get_int(facts, "memory.total_bytes"), ==, memtotal_kb * 1024);
	/* the running kernel's base page size, as the loader hands it to every process */
	g_assert_cmpint(facts_get_int(facts, "memory.page_size_bytes"), ==, getpagesize());
	if (g_file_test("/sys/kernel/mm/hugepages/hugepages-2048kB", G_FILE_TEST_IS_DIR)) {
		g_autofree char *sizes = facts_get_joined(facts, "memory.hugepages.sizes_bytes");
		g_assert_nonnull(strstr(sizes, "2097152"));
	}

	/* Clocksource. */
	if (g_file_get_contents("/sys/devices/system/clocksource/clocksource0/current_clocksource",
	                        &clock, NULL, NULL))
		g_assert_cmpstr(facts_get_str(facts, "clocksource.current"), ==, g_strstrip(clock));

	/* Steal: a real window has ticks in it. */
	g_assert_cmpint(facts_get_int(facts, "steal.window_ms"), ==, 100);
	g_assert_cmpint(facts_get_int(facts, "steal.total_ticks"), >, 0);
	if (!facts_is_null(facts, "steal.percent")) {
		double pct = json_node_get_double(facts_get(facts, "steal.percent"));
		g_assert_cmpfloat(pct, >=, 0.0);
		g_assert_cmpfloat(pct, <=, 100.0);
	}

	/* Every disk and NIC the kernel lists, bar the ones left out on purpose. */
	dir = g_dir_open("/sys/block", 0, NULL);
	g_assert_nonnull(dir);
	while ((name = g_dir_read_name(dir)) != NULL) {
		if (g_str_has_prefix(name, "loop") || g_str_has_prefix(name, "ram") ||
		    g_str_has_prefix(name, "zram"))
			continue;
		g_test_message("block %s", name);
		g_assert_true(array_has_name(facts_get(facts, "block"), name));
	}
	g_dir_close(dir);
	dir = g_dir_open("/sys/class/net", 0, NULL);
	g_assert_nonnull(dir);
	while ((name = g_dir_read_name(dir)) != NULL) {
		if (g_strcmp0(name, "lo") == 0)
			continue;
		g_test_message("net %s", name);
		g_assert_true(array_has_name(facts_get(facts, "net"), name));
	}
	g_dir_close(dir);
	g_assert_false(array_has_name(facts_get(facts, "net"), "lo"));

	/* OS. */
	g_assert_cmpint(uname(&uts), ==, 0);
	g_assert_cmpstr(facts_get_str(facts, "os.kernel_release"), ==, uts.release);
	if (g_file_test("/etc/os-release", G_FILE_TEST_EXISTS))
		g_assert_false(facts_is_null(facts, "os.pretty_name"));

	/* The caller's errors array is put back. */
	g_assert_true(ctx.errors == unused);
	g_assert_cmpuint(json_array_get_length(unused), ==, 0);
}

static JsonNode *live_cpu(void)
{
	g_autoptr(JsonArray) errors = json_array_new();
	AgentFactsContext ctx = { .sysroot = "/", .errors = errors };

	return agent_facts_collect_cpu(&ctx);
}

/* The highest "x86-64-vN (supported, searched)" of the loader's --help. */
static char *ldso_highest_level(void)
{
	const char *const argv[] = { "/lib64/ld-linux-x86-64.so.2", "--help", NULL };
	g_autofree char *out = NULL;
	g_auto(GStrv) lines = NULL;

	if (!g_file_test(argv[0], G_FILE_TEST_EXISTS))
		return NULL;
	g_assert_true(g_spawn_sync(NULL, (char **)argv, NULL, G_SPAWN_STDERR_TO_DEV_NULL, NULL,
	                           NULL, &out, NULL, NULL, NULL));
	lines = g_strsplit(out, "\n", -1);
	for (guint i = 0; lines[i] != NULL; i++) {
		g_autofree char *l = g_strstrip(g_strdup(lines[i]));
		if (g_str_has_prefix(l, "x86-64-v") && strstr(l, "(supported") != NULL)
			return g_strndup(l, strlen("x86-64-vN"));
	}
	return g_strdup("x86-64-v1");
}

/* Ground truth: glibc's loader on this very machine. */
/*
 * The flags decoded from CPUID (what the Windows agent reports) against the
 * kernel's own decoding in /proc/cpuinfo on this machine. The kernel adds
 * synthetic flags, clears some by policy (TSX, MPX) and sets x2apic when it
 * runs in x2APIC mode: the flags the audit reads must agree, and nearly all
 * the others.
 */
/* /proc/cpuinfo, to hold CPUID's decoding to; NULL (the test skipped) where CPUID is not the
 * kernel's. */
static char *live_cpuinfo_for_cpuid(void)
{
	char *text = NULL;

	if (gb_test_skip_if_emulated("qemu-user's CPUID is not the kernel's"))
		return NULL;
#if !defined(__x86_64__)
	g_test_skip("not x86-64");
	return NULL;
#endif
	g_assert_true(g_file_get_contents("/proc/cpuinfo", &text, NULL, NULL));
	return text;
}

static void test_live_cpuid_flags(void)
{
	const char *const key[] = { "fpu",     "sse",    "sse2",       "pni",       "ssse3",
		                    "sse4_1",  "sse4_2", "aes",        "pclmulqdq", "avx",
		                    "avx2",    "popcnt", "hypervisor", "vmx",       "svm",
		                    "lm",      "nx",     "sha_ni",     "vaes",      "vpclmulqdq",
		                    "avx512f", "bmi1",   "bmi2",       "fma",       "f16c",
		                    "rdrand",  "adx",    NULL };
	g_autofree char *text = NULL;
	g_autofree char *value = NULL;
	g_auto(GStrv) kernel = NULL;
	g_auto(GStrv) decoded = NULL;
	AgentFactsContext ctx = { .sysroot = "/" };
	guint agree = 0;

	text = live_cpuinfo_for_cpuid();
	if (text == NULL)
		return;
	value = cpuinfo_value(text, "flags");
	g_assert_nonnull(value);
	kernel = g_strsplit(value, " ", -1);
	decoded = agent_cpu_x86_flags(&ctx);
	g_assert_nonnull(decoded);
	for (guint i = 0; key[i] != NULL; i++) {
		gboolean k = g_strv_contains((const char *const *)kernel, key[i]);
		gboolean d = g_strv_contains((const char *const *)decoded, key[i]);
		if (k != d)
			g_test_message("%s: kernel %d, CPUID %d", key[i], k, d);
		g_assert_cmpint(k, ==, d);
	}
	for (guint i = 0; decoded[i] != NULL; i++) {
		if (g_strv_contains((const char *const *)kernel, decoded[i]))
			agree++;
		else
			g_test_message("CPUID has %s, the kernel does not show it", decoded[i]);
	}
	g_assert_cmpuint(agree * 10, >=, g_strv_length(decoded) * 9);
}

/* CPUID's vendor (what the Windows agent reports) is the kernel's vendor_id. */
static void test_live_cpuid_vendor(void)
{
	g_autofree char *text = NULL;
	g_autofree char *kernel = NULL;
	g_autofree char *decoded = NULL;
	AgentFactsContext ctx = { .sysroot = "/" };

	text = live_cpuinfo_for_cpuid();
	if (text == NULL)
		return;
	kernel = cpuinfo_value(text, "vendor_id");
	decoded = agent_cpu_x86_vendor(&ctx);
	g_assert_nonnull(kernel);
	g_assert_cmpstr(decoded, ==, kernel);
}

static void test_live_isa_level(void)
{
	g_autofree char *want = NULL;
	g_autoptr(JsonNode) cpu = NULL;

	if (gb_test_skip_if_emulated("the build machine's loader says nothing of the emulated CPU"))
		return;
	want = ldso_highest_level();
	if (want == NULL) {
		g_test_skip("no x86-64 ld.so here");
		return;
	}
	cpu = live_cpu();
	g_assert_cmpstr(facts_get_str(cpu, "isa_level"), ==, want);
	if (g_strcmp0(want, "x86-64-v4") == 0)
		g_assert_cmpuint(
		    json_array_get_length(json_node_get_array(facts_get(cpu, "isa_missing"))), ==,
		    0);
}

static void test_live_vulnerabilities(void)
{
	const char *dir = "/sys/devices/system/cpu/vulnerabilities";
	g_autoptr(JsonNode) cpu = live_cpu();
	g_autoptr(GDir) d = g_dir_open(dir, 0, NULL);
	const char *name;
	guint n = 0;

	if (d == NULL) {
		g_assert_true(facts_is_null(cpu, "vulnerabilities"));
		return;
	}
	while ((name = g_dir_read_name(d)) != NULL) {
		g_autofree char *path = g_build_filename(dir, name, NULL);
		g_autofree char *text = NULL;
		g_autofree char *member = g_strdup_printf("vulnerabilities.%s", name);
		g_assert_true(g_file_get_contents(path, &text, NULL, NULL));
		g_strchomp(text);
		g_assert_cmpstr(facts_get_str(cpu, member), ==, text);
		n++;
	}
	g_assert_cmpuint(
	    json_object_get_size(json_node_get_object(facts_get(cpu, "vulnerabilities"))), ==, n);
}

static void test_live_topology(void)
{
	g_autoptr(JsonNode) cpu = live_cpu();
	gint64 cpus = facts_get_int(cpu, "topology.cpus");

	g_assert_cmpint(cpus, ==, facts_get_int(cpu, "count"));
	g_assert_cmpint(facts_get_int(cpu, "topology.sockets") *
	                    facts_get_int(cpu, "topology.cores_per_socket") *
	                    facts_get_int(cpu, "topology.threads_per_core"),
	                ==, cpus);
	/* Some hypervisors give no cache leaves, and the kernel then no cache directory. */
	if (g_file_test("/sys/devices/system/cpu/cpu0/cache", G_FILE_TEST_IS_DIR))
		g_assert_cmpuint(
		    json_array_get_length(json_node_get_array(facts_get(cpu, "topology.caches"))),
		    >, 0);
	else
		g_assert_true(facts_is_null(cpu, "topology.caches"));
}

int main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	g_test_add_func("/facts/live", test_live);
	g_test_add_func("/facts/live/isa-level", test_live_isa_level);
	g_test_add_func("/facts/live/cpuid-flags", test_live_cpuid_flags);
	g_test_add_func("/facts/live/cpuid-vendor", test_live_cpuid_vendor);
	g_test_add_func("/facts/live/vulnerabilities", test_live_vulnerabilities);
	g_test_add_func("/facts/live/topology", test_live_topology);
	return g_test_run();
}
