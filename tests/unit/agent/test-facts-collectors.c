/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <glib/gstdio.h>
#include <string.h>
#include <unistd.h>

#include "facts-test.h"
#include "gb-isa.h"

static const char *const fixtures[] = {
	"kvm-host-model", "qemu64",      "cpu-host",       "virtio-scsi",    "nvme",
	"numa",           "cdrom",       "aarch64",        "broken-missing", "broken-garbage",
	"arm-qemu-max",   "arm-a57-xen", "arm-midr-sysfs", "arm-broken",
};

/* The whole reply against TREE.expected.json: every member, every error. */
static void test_golden(gconstpointer data)
{
	const char *tree = data;
	g_autofree char *name = g_strdup_printf("%s.expected.json", tree);
	g_autofree char *path = facts_fixture_path(name);
	g_autoptr(JsonParser) parser = json_parser_new();
	g_autoptr(GError) error = NULL;
	g_autoptr(JsonNode) node = facts_run(tree, NULL, NULL);

	json_parser_load_from_file(parser, path, &error);
	g_assert_no_error(error);
	if (!json_node_equal(json_parser_get_root(parser), node)) {
		g_autofree char *got = facts_to_string(node);
		g_autofree char *want = facts_to_string(json_parser_get_root(parser));
		g_test_message("got:  %s", got);
		g_test_message("want: %s", want);
		g_test_fail();
	}
}

static void test_cpu(void)
{
	struct {
		const char *tree;
		const char *model;
		const char *vendor;
		gint64 count;
		const char *hv_vendor; /* NULL: hypervisor.vendor is null */
		const char *hv_signature;
		const char *hv_source;
		const char *cpuid; /* the cpuid members that are true, or NULL for a null cpuid */
	} cases[] = {
		{ "qemu64", "QEMU Virtual CPU version 2.5+", "AuthenticAMD", 2, "TCG",
		  "TCGTCGTCGTCG", "cpuid", "hypervisor,svm" },
		{ "cpu-host", "Intel(R) Xeon(R) Gold 6338 CPU @ 2.00GHz", "GenuineIntel", 4, "KVM",
		  "KVMKVMKVM", "cpuid",
		  "hypervisor,aes,pclmulqdq,avx,avx2,vaes,vpclmulqdq,sha,vmx" },
		{ "virtio-scsi", "AMD EPYC 7713 64-Core Processor", "AuthenticAMD", 2, "KVM",
		  "KVMKVMKVM", "cpuid", "hypervisor,aes,avx,avx2" },
		{ "kvm-host-model", "AMD EPYC", "AuthenticAMD", 2, "bhyve", "bhyve bhyve ", "cpuid",
		  "hypervisor,aes,pclmulqdq,avx,avx2,vaes,vpclmulqdq,sha" },
		{ "aarch64", "Neoverse-N1", "ARM", 2, "KVM", NULL, "dmi", NULL },
		{ "arm-qemu-max", "QEMU max", "0x00", 2, "QEMU", NULL, "device-tree", NULL },
		{ "arm-a57-xen", "Cortex-A57", "ARM", 1, "Xen", NULL, "device-tree", NULL },
		{ "broken-missing", NULL, NULL, -1, NULL, NULL, "cpuid", "hypervisor" },
		{ "broken-garbage", NULL, NULL, -1, "Evil\\x01Hv\\x5c\\x7f",
		  "Evil\\x01Hv\\x5c\\x7f", "cpuid", "hypervisor,aes" },
	};
	const char *const bits[] = { "hypervisor", "aes",        "pclmulqdq", "avx", "avx2",
		                     "vaes",       "vpclmulqdq", "sha",       "vmx", "svm" };

	for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
		g_autoptr(JsonNode) cpu = facts_run(cases[i].tree, agent_facts_collect_cpu, NULL);
		g_autoptr(GString) truthy = g_string_new(NULL);

		g_test_message("%s", cases[i].tree);
		if (cases[i].model != NULL)
			g_assert_cmpstr(facts_get_str(cpu, "model_name"), ==, cases[i].model);
		else
			g_assert_true(facts_is_null(cpu, "model_name"));
		if (cases[i].vendor != NULL)
			g_assert_cmpstr(facts_get_str(cpu, "vendor"), ==, cases[i].vendor);
		else
			g_assert_true(facts_is_null(cpu, "vendor"));
		if (cases[i].count > 0)
			g_assert_cmpint(facts_get_int(cpu, "count"), ==, cases[i].count);
		else
			g_assert_true(facts_is_null(cpu, "count"));
		g_assert_true(facts_get_bool(cpu, "hypervisor.present"));
		if (cases[i].hv_vendor != NULL)
			g_assert_cmpstr(facts_get_str(cpu, "hypervisor.vendor"), ==,
			                cases[i].hv_vendor);
		else
			g_assert_true(facts_is_null(cpu, "hypervisor.vendor"));
		if (cases[i].hv_signature != NULL)
			g_assert_cmpstr(facts_get_str(cpu, "hypervisor.signature"), ==,
			                cases[i].hv_signature);
		else
			g_assert_true(facts_is_null(cpu, "hypervisor.signature"));
		g_assert_cmpstr(facts_get_str(cpu, "hypervisor.source"), ==, cases[i].hv_source);
		if (cases[i].cpuid == NULL) {
			g_assert_true(facts_is_null(cpu, "cpuid"));
			continue;
		}
		for (guint j = 0; j < G_N_ELEMENTS(bits); j++) {
			g_autofree char *member = g_strdup_printf("cpuid.%s", bits[j]);
			if (facts_get_bool(cpu, member))
				g_string_append_printf(truthy, "%s%s", truthy->len ? "," : "",
				                       bits[j]);
		}
		g_assert_cmpstr(truthy->str, ==, cases[i].cpuid);
	}
}

static void test_cpu_flags(void)
{
	g_autoptr(JsonNode) qemu = facts_run("qemu64", agent_facts_collect_cpu, NULL);
	g_autoptr(JsonNode) host = facts_run("cpu-host", agent_facts_collect_cpu, NULL);
	g_autoptr(JsonNode) arm = facts_run("aarch64", agent_facts_collect_cpu, NULL);
	g_autofree char *qflags = facts_get_joined(qemu, "flags");
	g_autofree char *aflags = facts_get_joined(arm, "flags");
	g_autofree char *hflags = facts_get_joined(host, "flags");

	/* All of them, as listed: the legacy model lacks AES-NI and PCLMULQDQ. */
	g_assert_cmpstr(qflags, ==,
	                "fpu,de,pse,tsc,msr,pae,mce,cx8,apic,sep,mtrr,pge,mca,cmov,pat,pse36,"
	                "clflush,mmx,fxsr,sse,sse2,syscall,nx,lm,rep_good,nopl,cpuid,extd_apicid,"
	                "pni,cx16,hypervisor,lahf_lm,svm,3dnowprefetch,vmmcall");
	g_assert_cmpstr(aflags, ==,
	                "fp,asimd,evtstrm,aes,pmull,sha1,sha2,crc32,atomics,cpuid,asimdrdm,"
	                "lrcpc,dcpop,asimddp");
	g_assert_nonnull(strstr(hflags, ",aes,"));
	g_assert_nonnull(strstr(hflags, ",sha_ni,"));
	g_assert_cmpuint(json_array_get_length(json_node_get_array(facts_get(host, "flags"))), ==,
	                 95);
	g_assert_cmpstr(facts_get_str(arm, "architecture"), ==, "aarch64");
	g_assert_cmpstr(facts_get_str(qemu, "architecture"), ==, "x86_64");
}

/* A programmable CPUID for the hypervisor scan. */
typedef struct {
	guint32 max_basic;
	guint32 ecx1;
	guint32 ebx7;
	const char *sigs[4]; /* at 0x40000000 + 0x100 * i; NULL = zeros */
} ScanCpuid;

static gboolean scan_cpuid(guint32 leaf, guint32 subleaf, guint32 regs[4], gpointer user_data)
{
	ScanCpuid *s = user_data;

	memset(regs, 0, sizeof(guint32) * 4);
	if (leaf == 0)
		regs[0] = s->max_basic;
	else if (leaf == 1)
		regs[2] = s->ecx1;
	else if (leaf == 7)
		regs[1] = s->ebx7;
	else if (leaf >= 0x40000000 && leaf <= 0x40000300 && (leaf & 0xff) == 0 &&
	         s->sigs[(leaf - 0x40000000) >> 8] != NULL) {
		char sig[12] = { 0 };
		memcpy(sig, s->sigs[(leaf - 0x40000000) >> 8],
		       MIN(strlen(s->sigs[(leaf - 0x40000000) >> 8]), sizeof(sig)));
		regs[0] = leaf + 1;
		memcpy(&regs[1], sig, 4);
		memcpy(&regs[2], sig + 4, 4);
		memcpy(&regs[3], sig + 8, 4);
	}
	return TRUE;
}

static JsonNode *run_scan(ScanCpuid *s, const char *sysroot)
{
	g_autoptr(JsonArray) errors = json_array_new();
	AgentFactsContext ctx = {
		.sysroot = sysroot,
		.cpuid = scan_cpuid,
		.cpuid_data = s,
		.errors = errors,
	};
	return agent_facts_collect_cpu(&ctx);
}

static void test_cpu_hypervisor_scan(void)
{
	g_autofree char *aarch64 = facts_fixture_path("aarch64");
	g_autofree char *missing = facts_fixture_path("broken-missing");
	struct {
		ScanCpuid cpuid;
		const char *sysroot;
		gboolean present;
		const char *vendor;
		const char *source;
	} cases[] = {
		/* The highest known signature wins, unknown ones in between are ignored. */
		{ { 0xd, 1u << 31, 0, { "Microsoft Hv", "???", "KVMKVMKVM", NULL } },
		  missing,
		  TRUE,
		  "KVM",
		  "cpuid" },
		{ { 0xd, 1u << 31, 0, { "VMwareVMware", NULL, NULL, NULL } },
		  missing,
		  TRUE,
		  "VMware",
		  "cpuid" },
		{ { 0xd, 1u << 31, 0, { "XenVMMXenVMM", NULL, NULL, "bhyve bhyve " } },
		  missing,
		  TRUE,
		  "bhyve",
		  "cpuid" },
		{ { 0xd, 1u << 31, 0, { " lrpepyh  vr", NULL, NULL, NULL } },
		  missing,
		  TRUE,
		  "Parallels",
		  "cpuid" },
		{ { 0xd, 1u << 31, 0, { "VBoxVBoxVBox", NULL, NULL, NULL } },
		  missing,
		  TRUE,
		  "VirtualBox",
		  "cpuid" },
		{ { 0xd, 1u << 31, 0, { "ACRNACRNACRN", NULL, NULL, NULL } },
		  missing,
		  TRUE,
		  "ACRN",
		  "cpuid" },
		{ { 0xd, 1u << 31, 0, { " QNXQVMBSQG ", NULL, NULL, NULL } },
		  missing,
		  TRUE,
		  "QNX",
		  "cpuid" },
		/* Unknown only: the raw signature of the first leaf. */
		{ { 0xd, 1u << 31, 0, { "NewHypervsr", NULL, NULL, NULL } },
		  missing,
		  TRUE,
		  "NewHypervsr",
		  "cpuid" },
		/* No hypervisor bit: the 0x4000xxxx leaves are not looked at. */
		{ { 0xd, 0, 0, { "KVMKVMKVM", NULL, NULL, NULL } }, missing, FALSE, NULL, "cpuid" },
		/* Bit set, leaves empty: the firmware names it. */
		{ { 0xd, 1u << 31, 0, { NULL, NULL, NULL, NULL } }, aarch64, TRUE, "KVM", "dmi" },
	};
	for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
		g_autoptr(JsonNode) cpu = run_scan(&cases[i].cpuid, cases[i].sysroot);

		g_test_message("case %u", i);
		g_assert_cmpint(facts_get_bool(cpu, "hypervisor.present"), ==, cases[i].present);
		if (cases[i].vendor != NULL)
			g_assert_cmpstr(facts_get_str(cpu, "hypervisor.vendor"), ==,
			                cases[i].vendor);
		else
			g_assert_true(facts_is_null(cpu, "hypervisor.vendor"));
		g_assert_cmpstr(facts_get_str(cpu, "hypervisor.source"), ==, cases[i].source);
	}
}

static void test_cpu_max_leaf(void)
{
	/* AVX2 and SHA bits in leaf 7 do not count when the CPU says its max leaf is 1. */
	ScanCpuid low = { 1, 0, (1u << 5) | (1u << 29), { NULL } };
	ScanCpuid high = { 7, 0, (1u << 5) | (1u << 29), { NULL } };
	g_autofree char *root = facts_fixture_path("qemu64");
	g_autoptr(JsonNode) a = run_scan(&low, root);
	g_autoptr(JsonNode) b = run_scan(&high, root);

	g_assert_false(facts_get_bool(a, "cpuid.avx2"));
	g_assert_false(facts_get_bool(a, "cpuid.sha"));
	g_assert_true(facts_get_bool(b, "cpuid.avx2"));
	g_assert_true(facts_get_bool(b, "cpuid.sha"));
	g_assert_false(facts_get_bool(b, "hypervisor.present"));
}

static void test_memory(void)
{
	g_autoptr(JsonNode) numa = facts_run("numa", agent_facts_collect_memory, NULL);
	g_autoptr(JsonNode) qemu = facts_run("qemu64", agent_facts_collect_memory, NULL);
	g_autofree char *c0 = facts_get_joined(numa, "numa.nodes.0.cpus");
	g_autofree char *c1 = facts_get_joined(numa, "numa.nodes.1.cpus");
	g_autofree char *c2 = facts_get_joined(numa, "numa.nodes.2.cpus");

	g_assert_cmpint(facts_get_int(numa, "total_bytes"), ==, 16303200LL * 1024);
	g_assert_cmpint(facts_get_int(numa, "hugepages.total"), ==, 512);
	g_assert_cmpint(facts_get_int(numa, "hugepages.free"), ==, 500);
	g_assert_cmpint(facts_get_int(numa, "hugepages.size_bytes"), ==, 2 * 1024 * 1024);
	g_assert_cmpstr(facts_get_str(numa, "thp"), ==, "never");
	/* Sorted by number (node10 after node1), memoryless and CPU-less nodes kept. */
	g_assert_cmpint(facts_get_int(numa, "numa.nodes.0.id"), ==, 0);
	g_assert_cmpint(facts_get_int(numa, "numa.nodes.1.id"), ==, 1);
	g_assert_cmpint(facts_get_int(numa, "numa.nodes.2.id"), ==, 10);
	g_assert_null(facts_get(numa, "numa.nodes.3"));
	g_assert_cmpstr(c0, ==, "0,1");
	g_assert_cmpstr(c1, ==, "2,3");
	g_assert_cmpstr(c2, ==, "");
	g_assert_cmpint(facts_get_int(numa, "numa.nodes.0.memory_bytes"), ==, 8151600LL * 1024);
	g_assert_cmpint(facts_get_int(numa, "numa.nodes.1.memory_bytes"), ==, 0);

	g_assert_cmpstr(facts_get_str(qemu, "thp"), ==, "always");
	g_assert_cmpint(facts_get_int(qemu, "hugepages.total"), ==, 0);
}

static void test_clocksource_and_os(void)
{
	g_autoptr(JsonNode) qc = facts_run("qemu64", agent_facts_collect_clocksource, NULL);
	g_autoptr(JsonNode) hc = facts_run("cpu-host", agent_facts_collect_clocksource, NULL);
	g_autoptr(JsonNode) os = facts_run("cpu-host", agent_facts_collect_os, NULL);
	g_autoptr(JsonNode) arm = facts_run("aarch64", agent_facts_collect_os, NULL);
	g_autofree char *qa = facts_get_joined(qc, "available");
	g_autofree char *ha = facts_get_joined(hc, "available");

	g_assert_cmpstr(facts_get_str(qc, "current"), ==, "tsc");
	g_assert_cmpstr(qa, ==, "tsc,hpet,acpi_pm");
	g_assert_cmpstr(facts_get_str(hc, "current"), ==, "kvm-clock");
	g_assert_cmpstr(ha, ==, "kvm-clock,tsc,acpi_pm");
	/* /etc/os-release is a relative link to ../usr/lib/os-release, as on Debian. */
	g_assert_cmpstr(facts_get_str(os, "pretty_name"), ==, "Debian GNU/Linux 12 (bookworm)");
	g_assert_cmpstr(facts_get_str(os, "kernel_release"), ==, "6.1.0-26-cloud-amd64");
	g_assert_cmpstr(facts_get_str(arm, "kernel_release"), ==, "6.1.0-26-arm64");
}

static void test_steal(void)
{
	g_autoptr(JsonNode) once = facts_run("qemu64", agent_facts_collect_steal, NULL);
	g_autofree char *root = facts_fixture_path("qemu64");
	g_autoptr(JsonArray) errors = json_array_new();
	AgentFactsContext ctx = { .sysroot = root, .steal_window_ms = 20, .errors = errors };
	g_autoptr(JsonNode) twice = agent_facts_collect_steal(&ctx);

	/* One read: counters since boot, no percentage. */
	g_assert_true(facts_is_null(once, "percent"));
	g_assert_cmpint(facts_get_int(once, "steal_ticks"), ==, 1544);
	g_assert_cmpint(facts_get_int(once, "total_ticks"), ==,
	                10132 + 12 + 5120 + 881234 + 301 + 0 + 87 + 1544);
	g_assert_cmpint(facts_get_int(once, "user_hz"), ==, sysconf(_SC_CLK_TCK));
	g_assert_cmpint(facts_get_int(once, "window_ms"), ==, 0);

	/* A frozen file: deltas of 0, and no percentage out of no ticks. */
	g_assert_cmpint(facts_get_int(twice, "window_ms"), ==, 20);
	g_assert_cmpint(facts_get_int(twice, "steal_ticks"), ==, 0);
	g_assert_cmpint(facts_get_int(twice, "total_ticks"), ==, 0);
	g_assert_true(facts_is_null(twice, "percent"));
	g_assert_cmpstr(facts_error_for(errors, "steal.percent"), ==,
	                "/proc/stat: no CPU ticks elapsed in the window");
}

/*
 * Without steal_window_ms the window runs from an earlier sample of the
 * process. Requests that come faster than the window must still find one a
 * whole window old instead of each sleeping a window (the old behaviour:
 * every request replaced the only sample kept, so the next one, a few
 * milliseconds later, found none old enough and slept).
 */
static void test_steal_since_previous(void)
{
	g_autofree char *root = facts_fixture_path("cpu-host");
	const guint window_ms = 300;
	gint64 t0;

	agent_facts_steal_prime(root);
	for (guint i = 0; i < 6; i++) {
		g_autoptr(JsonArray) errors = json_array_new();
		AgentFactsContext ctx = { .sysroot = root,
			                  .steal_window_ms = window_ms,
			                  .steal_since_previous = TRUE,
			                  .errors = errors };
		g_autoptr(JsonNode) node = NULL;

		/* the first request comes right after the prime: it has to wait */
		t0 = g_get_monotonic_time();
		node = agent_facts_collect_steal(&ctx);
		g_assert_cmpint(facts_get_int(node, "window_ms"), >=, window_ms);
		if (i > 0) {
			/* no sleep: far less than a window, even under valgrind */
			g_assert_cmpint(g_get_monotonic_time() - t0, <, window_ms * 1000 / 2);
			/* and not some stale sample from long ago either */
			g_assert_cmpint(facts_get_int(node, "window_ms"), <, 4 * window_ms);
		}
	}
}

/* Rewrites PROOT/proc/stat with later counters 50 ms into the window. */
static gpointer cpu_load_advance(gpointer data)
{
	g_autofree char *path = g_build_filename(data, "proc", "stat", NULL);

	g_usleep(50000);
	g_assert_true(g_file_set_contents(path, "cpu  150 0 150 800 100 0 0 100\n", -1, NULL));
	return NULL;
}

/* The idle check a benchmark job makes first: busy and steal % of all ticks. */
static void test_cpu_load(void)
{
	g_autofree char *frozen = facts_fixture_path("qemu64");
	g_autofree char *garbage = facts_fixture_path("broken-garbage");
	g_autofree char *root = g_dir_make_tmp("gb-load-XXXXXX", NULL);
	g_autofree char *proc = g_build_filename(root, "proc", NULL);
	g_autofree char *stat = g_build_filename(proc, "stat", NULL);
	g_autoptr(GError) error = NULL;
	GThread *thread;
	double busy = -1;
	double steal = -1;
	gint cancel = 1;
	gint64 t0;

	/* ticks between the reads: user+system 100, idle 100, steal 100 of 300 */
	g_assert_no_errno(g_mkdir(proc, 0700));
	g_assert_true(g_file_set_contents(stat, "cpu  100 0 100 700 100 0 0 0\n", -1, NULL));
	thread = g_thread_new("advance", cpu_load_advance, root);
	g_assert_true(agent_facts_cpu_load(root, 200, NULL, &busy, &steal, &error));
	g_thread_join(thread);
	g_assert_no_error(error);
	g_assert_cmpfloat_with_epsilon(busy, 200.0 / 3.0, 1e-9);
	g_assert_cmpfloat_with_epsilon(steal, 100.0 / 3.0, 1e-9);

	/* counters that went back (a bad file) */
	g_assert_true(g_file_set_contents(stat, "cpu  200 0 200 900 100 0 0 200\n", -1, NULL));
	thread = g_thread_new("advance", cpu_load_advance, root);
	g_assert_false(agent_facts_cpu_load(root, 200, NULL, &busy, &steal, &error));
	g_thread_join(thread);
	g_assert_cmpstr(error->message, ==, "/proc/stat: counters went backwards");
	g_clear_error(&error);

	/* nothing elapsed, a broken line, a cancel: no numbers, the reason */
	g_assert_false(agent_facts_cpu_load(frozen, 20, NULL, &busy, &steal, &error));
	g_assert_cmpstr(error->message, ==, "/proc/stat: no CPU ticks elapsed in the window");
	g_clear_error(&error);
	g_assert_false(agent_facts_cpu_load(garbage, 20, NULL, &busy, &steal, &error));
	g_assert_cmpstr(error->message, ==,
	                "/proc/stat: 'cpu' line has 4 fields, steal is field 8");
	g_clear_error(&error);
	t0 = g_get_monotonic_time();
	g_assert_false(agent_facts_cpu_load(root, 5000, &cancel, &busy, &steal, &error));
	g_assert_cmpstr(error->message, ==, "cancelled");
	g_assert_cmpint(g_get_monotonic_time() - t0, <, G_USEC_PER_SEC);
	g_clear_error(&error);

	/* this machine's own */
	g_assert_true(agent_facts_cpu_load(NULL, 100, NULL, &busy, &steal, &error));
	g_assert_no_error(error);
	g_assert_cmpfloat(busy, >=, 0.0);
	g_assert_cmpfloat(busy, <=, 100.0);
	g_assert_cmpfloat(steal, >=, 0.0);
	g_assert_cmpfloat(steal, <=, busy);

	g_assert_no_errno(g_remove(stat));
	g_assert_no_errno(g_rmdir(proc));
	g_assert_no_errno(g_rmdir(root));
}

static void test_block(void)
{
	struct {
		const char *tree;
		guint index;
		const char *name, *bus, *driver, *sched, *scheds, *cache;
		gint64 lbs, pbs, size;
		gboolean rot, rem, cdrom;
		const char *model;
	} cases[] = {
		{ "qemu64", 0, "sda", "ata", "ata_piix", "mq-deadline", "mq-deadline,none",
		  "write through", 512, 512, 10737418240LL, TRUE, FALSE, FALSE, "QEMU HARDDISK" },
		{ "cpu-host", 0, "vda", "virtio-blk", "virtio_blk", "none", "none,mq-deadline",
		  "write back", 512, 4096, 21474836480LL, TRUE, FALSE, FALSE, NULL },
		{ "kvm-host-model", 0, "vda", "virtio-blk", "virtio_blk", "mq-deadline",
		  "none,mq-deadline,kyber,bfq", "write back", 512, 4096, 274877906944LL, TRUE,
		  FALSE, FALSE, NULL },
		{ "virtio-scsi", 0, "sda", "virtio-scsi", "virtio_scsi", "mq-deadline",
		  "mq-deadline,kyber,bfq,none", "write back", 512, 4096, 53687091200LL, FALSE,
		  FALSE, FALSE, "QEMU HARDDISK" },
		{ "nvme", 0, "nvme0n1", "nvme", "nvme", "none", "none,mq-deadline", "write back",
		  512, 512, 107374182400LL, FALSE, FALSE, FALSE, "QEMU NVMe Ctrl" },
		{ "cdrom", 0, "sda", "sata", "ahci", "mq-deadline", "mq-deadline,none",
		  "write back", 512, 512, 17179869184LL, TRUE, FALSE, FALSE, "QEMU HARDDISK" },
		{ "cdrom", 1, "sr0", "sata", "ahci", "mq-deadline", "mq-deadline,none",
		  "write through", 2048, 2048, 0, TRUE, TRUE, TRUE, "QEMU DVD-ROM" },
		{ "aarch64", 0, "vda", "virtio-blk", "virtio_blk", "none", "none,mq-deadline",
		  "write back", 512, 512, 10737418240LL, TRUE, FALSE, FALSE, NULL },
	};
	for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
		g_autoptr(JsonArray) errors = NULL;
		g_autoptr(JsonNode) all =
		    facts_run(cases[i].tree, agent_facts_collect_block, &errors);
		JsonNode *d = facts_get(all, cases[i].index == 0 ? "0" : "1");
		g_autofree char *scheds = NULL;

		g_test_message("%s %s", cases[i].tree, cases[i].name);
		g_assert_nonnull(d);
		g_assert_cmpuint(json_array_get_length(errors), ==, 0);
		g_assert_cmpstr(facts_get_str(d, "name"), ==, cases[i].name);
		g_assert_cmpstr(facts_get_str(d, "bus"), ==, cases[i].bus);
		g_assert_cmpstr(facts_get_str(d, "driver"), ==, cases[i].driver);
		g_assert_cmpstr(facts_get_str(d, "scheduler"), ==, cases[i].sched);
		scheds = facts_get_joined(d, "schedulers");
		g_assert_cmpstr(scheds, ==, cases[i].scheds);
		g_assert_cmpstr(facts_get_str(d, "write_cache"), ==, cases[i].cache);
		g_assert_cmpint(facts_get_int(d, "logical_block_size"), ==, cases[i].lbs);
		g_assert_cmpint(facts_get_int(d, "physical_block_size"), ==, cases[i].pbs);
		g_assert_cmpint(facts_get_int(d, "size_bytes"), ==, cases[i].size);
		g_assert_cmpint(facts_get_bool(d, "rotational"), ==, cases[i].rot);
		g_assert_cmpint(facts_get_bool(d, "removable"), ==, cases[i].rem);
		g_assert_cmpint(facts_get_bool(d, "cdrom"), ==, cases[i].cdrom);
		if (cases[i].model != NULL)
			g_assert_cmpstr(facts_get_str(d, "model"), ==, cases[i].model);
		else
			g_assert_true(facts_is_null(d, "model"));
	}
}

static void test_block_skips_virtual(void)
{
	/* The live capture has loop0-7 and zram0 next to vda: only vda is reported. */
	g_autoptr(JsonNode) all = facts_run("kvm-host-model", agent_facts_collect_block, NULL);

	g_assert_cmpuint(json_array_get_length(json_node_get_array(all)), ==, 1);
	g_assert_cmpstr(facts_get_str(all, "0.name"), ==, "vda");
}

static void test_net(void)
{
	g_autoptr(JsonNode) qemu = facts_run("qemu64", agent_facts_collect_net, NULL);
	g_autoptr(JsonNode) host = facts_run("cpu-host", agent_facts_collect_net, NULL);
	g_autoptr(JsonNode) live = facts_run("kvm-host-model", agent_facts_collect_net, NULL);

	/* lo is left out. */
	g_assert_cmpuint(json_array_get_length(json_node_get_array(qemu)), ==, 1);
	g_assert_cmpstr(facts_get_str(qemu, "0.name"), ==, "ens4");
	g_assert_cmpstr(facts_get_str(qemu, "0.driver"), ==, "vmxnet3");
	g_assert_cmpint(facts_get_int(qemu, "0.mtu"), ==, 1500);
	g_assert_cmpint(facts_get_int(qemu, "0.rx_queues"), ==, 2);
	g_assert_cmpint(facts_get_int(qemu, "0.tx_queues"), ==, 2);
	g_assert_cmpint(facts_get_int(qemu, "0.speed_mbps"), ==, 10000);

	/* virtio_net says -1 for its speed: unknown, not an error. */
	g_assert_cmpstr(facts_get_str(host, "0.driver"), ==, "virtio_net");
	g_assert_cmpint(facts_get_int(host, "0.rx_queues"), ==, 4);
	g_assert_cmpint(facts_get_int(host, "0.tx_queues"), ==, 4);
	g_assert_true(facts_is_null(host, "0.speed_mbps"));

	/* Virtual NICs (ifb) have no device: driver null. The speed file was unreadable. */
	g_assert_cmpuint(json_array_get_length(json_node_get_array(live)), ==, 3);
	g_assert_cmpstr(facts_get_str(live, "0.name"), ==, "eth0");
	g_assert_cmpstr(facts_get_str(live, "0.driver"), ==, "virtio_net");
	g_assert_cmpint(facts_get_int(live, "0.mtu"), ==, 1400);
	g_assert_true(facts_is_null(live, "0.speed_mbps"));
	g_assert_cmpstr(facts_get_str(live, "1.name"), ==, "ifb0");
	g_assert_true(facts_is_null(live, "1.driver"));
}

/* Every member of the broken trees is null (or left out) with a reason, none crash. */
static void test_broken(void)
{
	struct {
		const char *tree;
		const char *members;
	} cases[] = {
		{ "broken-missing",
		  "block.sdb.bus block.sdb.logical_block_size block.sdb.physical_block_size "
		  "block.sdb.removable block.sdb.rotational block.sdb.scheduler "
		  "block.sdb.schedulers block.sdb.size_bytes block.sdb.write_cache "
		  "block.vda.logical_block_size block.vda.physical_block_size "
		  "block.vda.removable block.vda.rotational block.vda.scheduler "
		  "block.vda.schedulers block.vda.size_bytes block.vda.write_cache "
		  "clocksource.available clocksource.current cpu.architecture cpu.count "
		  "cpu.flags cpu.isa_level cpu.model_name cpu.topology cpu.vendor "
		  "cpu.vulnerabilities memory.hugepages.free "
		  "memory.hugepages.size_bytes memory.hugepages.total memory.numa.nodes "
		  "memory.page_size_bytes memory.thp memory.total_bytes net.eth0.driver "
		  "net.eth0.mtu net.eth0.rx_queues "
		  "net.eth0.tx_queues os.kernel_release os.pretty_name steal" },
		{ "broken-garbage",
		  "block.abs block.evil block.vda.logical_block_size block.vda.model "
		  "block.vda.physical_block_size block.vda.removable block.vda.rotational "
		  "block.vda.scheduler block.vda.schedulers block.vda.size_bytes "
		  "block.vda.write_cache clocksource.available clocksource.current "
		  "cpu.architecture cpu.count cpu.flags cpu.isa_level cpu.model_name cpu.topology "
		  "cpu.vendor cpu.vulnerabilities.a_directory cpu.vulnerabilities.huge "
		  "cpu.vulnerabilities.mds cpu.vulnerabilities.two_lines memory.hugepages.free "
		  "memory.hugepages.size_bytes memory.hugepages.total "
		  "memory.numa.node0.cpus memory.numa.node0.memory_bytes memory.page_size_bytes "
		  "memory.thp "
		  "memory.total_bytes net.eth0.mtu net.eth0.rx_queues net.eth0.speed_mbps "
		  "net.eth0.tx_queues net.loop1 net.loop2 os.kernel_release os.pretty_name "
		  "steal" },
	};
	for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
		g_autoptr(JsonArray) errors = NULL;
		g_autoptr(JsonNode) all = facts_run(cases[i].tree, NULL, &errors);
		g_autofree char *members = facts_error_members(errors);

		g_assert_cmpstr(members, ==, cases[i].members);
		g_assert_true(facts_is_null(all, "cpu.model_name"));
		g_assert_true(facts_is_null(all, "memory.total_bytes"));
		g_assert_true(facts_is_null(all, "memory.thp"));
		g_assert_true(facts_is_null(all, "clocksource.current"));
		g_assert_true(facts_is_null(all, "steal.steal_ticks"));
		g_assert_true(facts_is_null(all, "os.kernel_release"));
		g_assert_true(facts_is_null(all, "os.pretty_name"));
		g_assert_true(facts_is_null(all, "block.0.scheduler"));
		g_assert_true(facts_is_null(all, "net.0.mtu"));
	}
}

static void test_broken_reasons(void)
{
	g_autoptr(JsonArray) errors = NULL;
	g_autoptr(JsonNode) all = facts_run("broken-garbage", NULL, &errors);

	g_assert_cmpstr(facts_error_for(errors, "block.evil"), ==,
	                "/sys/block/evil: a symlink escapes the sysroot");
	g_assert_cmpstr(facts_error_for(errors, "memory.hugepages.total"), ==,
	                "/proc/meminfo: HugePages_Total: invalid number '99999999999999999999'");
	g_assert_cmpstr(facts_error_for(errors, "block.vda.scheduler"), ==,
	                "/sys/block/vda/queue/scheduler: no active entry in brackets");
	g_assert_cmpstr(facts_error_for(errors, "block.vda.write_cache"), ==,
	                "/sys/block/vda/queue/write_cache: unknown mode 'write sideways'");
	g_assert_cmpstr(facts_error_for(errors, "cpu.model_name"), ==,
	                "/proc/cpuinfo: binary data");
	g_assert_cmpstr(facts_error_for(errors, "os.kernel_release"), ==,
	                "/proc/sys/kernel/osrelease: Is a directory");
	g_assert_cmpstr(facts_error_for(errors, "steal"), ==,
	                "/proc/stat: 'cpu' line has 4 fields, steal is field 8");
	/* Vulnerability files the kernel would never write: each null with why, the rest kept. */
	g_assert_cmpstr(facts_error_for(errors, "cpu.vulnerabilities.mds"), ==,
	                "/sys/devices/system/cpu/vulnerabilities/mds: binary data");
	g_assert_cmpstr(facts_error_for(errors, "cpu.vulnerabilities.huge"), ==,
	                "/sys/devices/system/cpu/vulnerabilities/huge: longer than a sysfs page "
	                "(4096 bytes)");
	g_assert_cmpstr(facts_error_for(errors, "cpu.vulnerabilities.two_lines"), ==,
	                "/sys/devices/system/cpu/vulnerabilities/two_lines: more than one line");
	g_assert_cmpstr(facts_error_for(errors, "cpu.vulnerabilities.a_directory"), ==,
	                "/sys/devices/system/cpu/vulnerabilities/a_directory: Is a directory");
	g_assert_true(facts_is_null(all, "cpu.vulnerabilities.mds"));
	g_assert_cmpstr(facts_get_str(all, "cpu.vulnerabilities.spectre_v1"), ==,
	                "Mitigation: __user pointer sanitization");
	/* What could be classified still is. */
	g_assert_cmpstr(facts_get_str(all, "block.0.bus"), ==, "virtio-blk");
	g_assert_true(facts_get_bool(all, "cpu.hypervisor.present"));
}

/* A kernel without the vulnerabilities directory (before 4.15): null, with why. */
static void test_vulnerabilities_missing(void)
{
	g_autoptr(JsonArray) errors = NULL;
	g_autoptr(JsonNode) cpu = facts_run("broken-missing", agent_facts_collect_cpu, &errors);

	g_assert_true(facts_is_null(cpu, "vulnerabilities"));
	g_assert_cmpstr(facts_error_for(errors, "cpu.vulnerabilities"), ==,
	                "/sys/devices/system/cpu/vulnerabilities: No such file or directory");
}

/* What the fixtures' guests say: qemu64 hides ssbd and md-clear, the host model does not. */
static void test_cpu_new_members(void)
{
	g_autoptr(JsonNode) q = facts_run("qemu64", agent_facts_collect_cpu, NULL);
	g_autoptr(JsonNode) h = facts_run("cpu-host", agent_facts_collect_cpu, NULL);
	g_autofree char *q_missing = facts_get_joined(q, "isa_missing");

	g_assert_cmpstr(facts_get_str(q, "isa_level"), ==, "x86-64-v1");
	g_assert_cmpstr(q_missing, ==, "sse4_1,sse4_2,ssse3");
	g_assert_cmpstr(facts_get_str(q, "vulnerabilities.spec_store_bypass"), ==, "Vulnerable");
	g_assert_cmpstr(facts_get_str(h, "isa_level"), ==, "x86-64-v4");
	/* Both hypervisor leaves are listed, lowest first. */
	g_assert_cmpstr(facts_get_str(h, "hypervisor.signatures.0.leaf"), ==, "0x40000000");
	g_assert_cmpstr(facts_get_str(h, "hypervisor.signatures.0.vendor"), ==, "Microsoft Hv");
	g_assert_cmpstr(facts_get_str(h, "hypervisor.signatures.1.leaf"), ==, "0x40000100");
	g_assert_cmpstr(facts_get_str(h, "hypervisor.signatures.1.signature"), ==, "KVMKVMKVM");
	/* the leaf past KVM's range repeats other data: not listed */
	g_assert_null(facts_get(h, "hypervisor.signatures.2"));
	g_assert_cmpstr(facts_get_str(h, "hypervisor.kernel.vendor"), ==, "KVM");
	g_assert_cmpstr(facts_get_str(h, "hypervisor.kernel.evidence"), ==,
	                "clocksource kvm-clock");
	/* Under TCG with the tsc clocksource nothing tells which interface the kernel took. */
	g_assert_true(facts_is_null(q, "hypervisor.kernel.vendor"));
	g_assert_cmpint(facts_get_int(h, "topology.sockets"), ==, 1);
	g_assert_cmpint(facts_get_int(h, "topology.cores_per_socket"), ==, 2);
	g_assert_cmpint(facts_get_int(h, "topology.threads_per_core"), ==, 2);
	g_assert_cmpint(facts_get_int(h, "topology.caches.2.shared_by"), ==, 2);
	g_assert_cmpint(facts_get_int(h, "topology.caches.3.size_bytes"), ==, 16 * 1024 * 1024);
}

/* Builds a throwaway sysroot holding one os-release. */
static char *os_tree(const char *etc, const char *usr_lib)
{
	g_autoptr(GError) error = NULL;
	char *root = g_dir_make_tmp("gb-facts-os-XXXXXX", &error);
	g_autofree char *etc_dir = g_build_filename(root, "etc", NULL);
	g_autofree char *lib_dir = g_build_filename(root, "usr", "lib", NULL);
	g_autofree char *etc_file = g_build_filename(etc_dir, "os-release", NULL);
	g_autofree char *lib_file = g_build_filename(lib_dir, "os-release", NULL);

	g_assert_no_error(error);
	g_assert_cmpint(g_mkdir_with_parents(etc_dir, 0755), ==, 0);
	g_assert_cmpint(g_mkdir_with_parents(lib_dir, 0755), ==, 0);
	if (etc != NULL)
		g_file_set_contents(etc_file, etc, -1, &error);
	g_assert_no_error(error);
	if (usr_lib != NULL)
		g_file_set_contents(lib_file, usr_lib, -1, &error);
	g_assert_no_error(error);
	return root;
}

static void os_tree_remove(const char *root)
{
	const char *files[] = { "etc/os-release", "usr/lib/os-release", "usr/lib", "usr", "etc" };

	for (guint i = 0; i < G_N_ELEMENTS(files); i++) {
		g_autofree char *p = g_build_filename(root, files[i], NULL);
		g_remove(p);
	}
	g_rmdir(root);
}

static void test_os_release_quoting(void)
{
	struct {
		const char *etc;
		const char *usr_lib;
		const char *pretty; /* NULL: null with an error */
	} cases[] = {
		{ "PRETTY_NAME=\"Debian GNU/Linux 12 (bookworm)\"\n", NULL,
		  "Debian GNU/Linux 12 (bookworm)" },
		{ "PRETTY_NAME='Fedora Linux 39 (Cloud Edition)'\n", NULL,
		  "Fedora Linux 39 (Cloud Edition)" },
		{ "PRETTY_NAME=\"A \\\"quoted\\\" \\$name \\\\ \\`x\\`\"\n", NULL,
		  "A \"quoted\" $name \\ `x`" },
		{ "PRETTY_NAME=Alpine\\ Linux\\ v3.19\n", NULL, "Alpine Linux v3.19" },
		{ "PRETTY_NAME='it'\\''s'\n", NULL, "it's" },
		{ "NAME=x\nPRETTY_NAME=\"first\"\nPRETTY_NAME=\"second\"\n", NULL, "second" },
		{ "# PRETTY_NAME=\"comment\"\nPRETTY_NAME=\"real\"\n", NULL, "real" },
		{ "PRETTY_NAME=\"Ubuntu 22.04.4 LTS\"", NULL, "Ubuntu 22.04.4 LTS" },
		/* /usr/lib only counts when /etc/os-release does not exist. */
		{ NULL, "PRETTY_NAME=\"from usr\"\n", "from usr" },
		{ "NAME=x\n", "PRETTY_NAME=\"from usr\"\n", NULL },
		{ "PRETTY_NAME=\"unterminated\n", NULL, NULL },
		{ "PRETTY_NAME=\"\"\n", NULL, NULL },
		/* Inside double quotes a backslash before other characters stays. */
		{ "PRETTY_NAME=\"tab\\there\"\n", NULL, "tab\\there" },
		{ "PRETTY_NAME=\"real\ttab\"\n", NULL, NULL },
		{ "PRETTY_NAME=\"bell\x07\"\n", NULL, NULL },
		{ "", NULL, NULL },
		{ NULL, NULL, NULL },
	};
	for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
		g_autofree char *root = os_tree(cases[i].etc, cases[i].usr_lib);
		g_autoptr(JsonArray) errors = json_array_new();
		AgentFactsContext ctx = { .sysroot = root, .errors = errors };
		g_autoptr(JsonNode) os = agent_facts_collect_os(&ctx);

		g_test_message("case %u", i);
		if (cases[i].pretty != NULL) {
			g_assert_cmpstr(facts_get_str(os, "pretty_name"), ==, cases[i].pretty);
			g_assert_null(facts_error_for(errors, "os.pretty_name"));
		} else {
			g_assert_true(facts_is_null(os, "pretty_name"));
			g_assert_nonnull(facts_error_for(errors, "os.pretty_name"));
		}
		os_tree_remove(root);
	}
}

static void test_sections(void)
{
	g_autofree char *root = facts_fixture_path("qemu64");
	AgentFactsContext ctx = { .sysroot = root };
	const char *const some[] = { "os", "clocksource", "os", NULL };
	const char *const bad[] = { "cpu", "gpu", NULL };
	const char *const none[] = { NULL };
	g_autoptr(GError) error = NULL;
	g_autoptr(JsonNode) a = agent_facts_collect(&ctx, some, &error);
	g_autoptr(JsonNode) b = NULL;
	g_autoptr(JsonNode) c = NULL;
	g_autoptr(GList) members = NULL;

	g_assert_no_error(error);
	members = json_object_get_members(json_node_get_object(a));
	/* Table order, each once, plus the version and the errors. */
	g_assert_cmpuint(g_list_length(members), ==, 4);
	g_assert_cmpstr(facts_get_str(a, "agent_version"), ==, "0.1.0");
	g_assert_cmpstr(facts_get_str(a, "os.kernel_release"), ==, "6.1.0-26-cloud-amd64");
	g_assert_cmpstr(facts_get_str(a, "clocksource.current"), ==, "tsc");
	g_assert_null(facts_get(a, "cpu"));
	g_assert_nonnull(facts_get(a, "errors"));
	g_assert_null(ctx.errors);

	b = agent_facts_collect(&ctx, bad, &error);
	g_assert_null(b);
	g_assert_error(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT);
	g_assert_cmpstr(error->message, ==,
	                "Parameter 'sections[1]': unknown section 'gpu' (known: cpu, memory, "
	                "clocksource, steal, block, net, os)");
	g_clear_error(&error);

	c = agent_facts_collect(&ctx, none, &error);
	g_assert_no_error(error);
	g_assert_cmpuint(json_object_get_size(json_node_get_object(c)), ==, 2);
}

/* One CPUID table per level boundary: each level complete, then one feature short. */
static void test_isa_level(void)
{
	/* leaf 1 EDX baseline: fpu cx8 cmov mmx fxsr sse sse2. */
	const guint32 edx_v1 =
	    (1u << 0) | (1u << 8) | (1u << 15) | (1u << 23) | (1u << 24) | (1u << 25) | (1u << 26);
	/* sse3 ssse3 cx16 sse4_1 sse4_2 popcnt; lahf_lm in 0x80000001 ECX. */
	const guint32 ecx_v2 =
	    (1u << 0) | (1u << 9) | (1u << 13) | (1u << 19) | (1u << 20) | (1u << 23);
	/* fma movbe osxsave avx f16c; bmi1 avx2 bmi2; lzcnt; XCR0 SSE|YMM. */
	const guint32 ecx_v3 =
	    ecx_v2 | (1u << 12) | (1u << 22) | (1u << 27) | (1u << 28) | (1u << 29);
	const guint32 ebx_v3 = (1u << 3) | (1u << 5) | (1u << 8);
	const guint32 ebx_v4 =
	    ebx_v3 | (1u << 16) | (1u << 17) | (1u << 28) | (1u << 30) | (1u << 31);
	struct {
		GbIsaInput in;
		guint level;
		const char *missing;
	} cases[] = {
		{ { 0, 0, 0, 0, 0 }, 0, "cmov,cx8,fpu,fxsr,mmx,sse,sse2" },
		{ { 0, edx_v1 & ~(1u << 26), 0, 0, 0 }, 0, "sse2" },
		/* qemu64: sse3 cx16 lahf_lm, nothing newer. */
		{ { (1u << 0) | (1u << 13), edx_v1, 0, 1, 0 }, 1, "popcnt,sse4_1,sse4_2,ssse3" },
		{ { ecx_v2, edx_v1, 0, 0, 0 }, 1, "lahf_lm" },
		{ { ecx_v2, edx_v1, 0, 1, 0 },
		  2,
		  "avx,avx2,bmi1,bmi2,f16c,fma,abm,movbe,osxsave,xcr0-ymm" },
		/* Every v3 bit but LZCNT: /proc/cpuinfo names it abm. */
		{ { ecx_v3, edx_v1, ebx_v3, 1, 0x7 }, 2, "abm" },
		/* The CPU has AVX but the OS does not save the YMM state. */
		{ { ecx_v3, edx_v1, ebx_v3, 1 | (1u << 5), 0x3 }, 2, "xcr0-ymm" },
		{ { ecx_v3, edx_v1, ebx_v3, 1 | (1u << 5), 0x7 },
		  3,
		  "avx512f,avx512bw,avx512cd,avx512dq,avx512vl,xcr0-zmm" },
		{ { ecx_v3, edx_v1, ebx_v4 & ~(1u << 31), 1 | (1u << 5), 0xe7 }, 3, "avx512vl" },
		{ { ecx_v3, edx_v1, ebx_v4, 1 | (1u << 5), 0x7 }, 3, "xcr0-zmm" },
		{ { ecx_v3, edx_v1, ebx_v4, 1 | (1u << 5), 0xe7 }, 4, "" },
		/* v4 bits without v3's BMI2: the levels are cumulative. */
		{ { ecx_v3, edx_v1, ebx_v4 & ~(1u << 8), 1 | (1u << 5), 0xe7 }, 2, "bmi2" },
	};

	for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
		g_autoptr(GPtrArray) missing = NULL;
		g_autofree char *joined = NULL;
		guint level = gb_isa_level(&cases[i].in, &missing);

		g_ptr_array_add(missing, NULL);
		joined = g_strjoinv(",", (char **)missing->pdata);
		g_test_message("case %u: level %u missing %s", i, level, joined);
		g_assert_cmpuint(level, ==, cases[i].level);
		g_assert_cmpstr(joined, ==, cases[i].missing);
	}
}

int main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	for (guint i = 0; i < G_N_ELEMENTS(fixtures); i++) {
		g_autofree char *name = g_strdup_printf("/facts/golden/%s", fixtures[i]);
		g_test_add_data_func(name, fixtures[i], test_golden);
	}
	g_test_add_func("/facts/cpu/fixtures", test_cpu);
	g_test_add_func("/facts/cpu/flags", test_cpu_flags);
	g_test_add_func("/facts/cpu/hypervisor-scan", test_cpu_hypervisor_scan);
	g_test_add_func("/facts/cpu/max-leaf", test_cpu_max_leaf);
	g_test_add_func("/facts/memory", test_memory);
	g_test_add_func("/facts/clocksource-and-os", test_clocksource_and_os);
	g_test_add_func("/facts/os/quoting", test_os_release_quoting);
	g_test_add_func("/facts/steal", test_steal);
	g_test_add_func("/facts/cpu-load", test_cpu_load);
	g_test_add_func("/facts/steal/since-previous", test_steal_since_previous);
	g_test_add_func("/facts/block/fixtures", test_block);
	g_test_add_func("/facts/block/skips-virtual", test_block_skips_virtual);
	g_test_add_func("/facts/net", test_net);
	g_test_add_func("/facts/broken/members", test_broken);
	g_test_add_func("/facts/broken/reasons", test_broken_reasons);
	g_test_add_func("/facts/sections", test_sections);
	g_test_add_func("/facts/isa-level", test_isa_level);
	g_test_add_func("/facts/cpu/new-members", test_cpu_new_members);
	g_test_add_func("/facts/cpu/vulnerabilities-missing", test_vulnerabilities_missing);
	return g_test_run();
}
