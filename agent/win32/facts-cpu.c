/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The cpu section on Windows: everything x86 from CPUID (cpu-x86.c, shared
 * with Linux), the counts from GetLogicalProcessorInformationEx. Member names
 * and order are those of the Linux collector (PROTOCOL.md, "Windows guests").
 * And the CPU load a benchmark job's idle check takes (facts.h).
 */
#include <windows.h>

#include <math.h>

#include "cpu-x86.h"
#include "gb-error.h"
#include "mitigations.h"

static const char *cpu_win_architecture(void)
{
	SYSTEM_INFO info;

	GetNativeSystemInfo(&info);
	switch (info.wProcessorArchitecture) {
	case PROCESSOR_ARCHITECTURE_AMD64:
		return "x86_64";
	case PROCESSOR_ARCHITECTURE_ARM64:
		return "aarch64";
	case PROCESSOR_ARCHITECTURE_INTEL:
		return "i686";
	default:
		return NULL;
	}
}

/* Packages and cores as Windows counts them; FALSE when it does not say. */
static gboolean cpu_win_count_relation(LOGICAL_PROCESSOR_RELATIONSHIP rel, guint *count)
{
	g_autofree guint8 *buf = NULL;
	DWORD len = 0;
	DWORD off = 0;

	*count = 0;
	if (GetLogicalProcessorInformationEx(rel, NULL, &len) ||
	    GetLastError() != ERROR_INSUFFICIENT_BUFFER || len == 0)
		return FALSE;
	buf = g_malloc(len);
	if (!GetLogicalProcessorInformationEx(rel, (PSYSTEM_LOGICAL_PROCESSOR_INFORMATION_EX)buf,
	                                      &len))
		return FALSE;
	while (off + sizeof(DWORD) * 2 <= len) {
		PSYSTEM_LOGICAL_PROCESSOR_INFORMATION_EX item =
		    (PSYSTEM_LOGICAL_PROCESSOR_INFORMATION_EX)(buf + off);
		if (item->Size == 0 || off + item->Size > len)
			return FALSE;
		if (item->Relationship == rel)
			(*count)++;
		off += item->Size;
	}
	return *count > 0;
}

static void cpu_win_add_topology(AgentFactsContext *ctx, JsonBuilder *builder, guint cpus)
{
	guint sockets = 0;
	guint cores = 0;
	gboolean have_sockets = cpu_win_count_relation(RelationProcessorPackage, &sockets);
	gboolean have_cores = cpu_win_count_relation(RelationProcessorCore, &cores);

	json_builder_set_member_name(builder, "topology");
	json_builder_begin_object(builder);
	agent_facts_builder_add_int_or_null(builder, "cpus", cpus > 0, cpus);
	agent_facts_builder_add_int_or_null(builder, "sockets", have_sockets, sockets);
	agent_facts_builder_add_int_or_null(builder, "dies", FALSE, 0);
	agent_facts_builder_add_int_or_null(builder, "cores_per_socket",
	                                    have_sockets && have_cores && cores % sockets == 0,
	                                    sockets > 0 ? cores / sockets : 0);
	agent_facts_builder_add_int_or_null(builder, "threads_per_core",
	                                    have_cores && cpus > 0 && cpus % cores == 0,
	                                    cores > 0 ? cpus / cores : 0);
	json_builder_set_member_name(builder, "caches");
	json_builder_add_null_value(builder);
	json_builder_end_object(builder);
	if (!have_sockets || !have_cores)
		agent_facts_add_error(ctx, "cpu.topology",
		                      "GetLogicalProcessorInformationEx gave no packages or cores");
	agent_facts_add_error(ctx, "cpu.topology.dies", "not reported on Windows");
	agent_facts_add_error(ctx, "cpu.topology.caches", "not collected on Windows yet");
}

static void cpu_win_add_vulnerabilities(AgentFactsContext *ctx, JsonBuilder *builder)
{
	AgentWinMitigations m;
	g_autofree char *reason = NULL;
	g_auto(GStrv) pairs = NULL;

	json_builder_set_member_name(builder, "vulnerabilities");
	if (!agent_win_mitigations_query(&m, &reason)) {
		json_builder_add_null_value(builder);
		agent_facts_add_error(ctx, "cpu.vulnerabilities", reason);
		return;
	}
	pairs = agent_win_mitigations_decode(&m);
	json_builder_begin_object(builder);
	for (guint i = 0; pairs[i] != NULL && pairs[i + 1] != NULL; i += 2)
		agent_facts_builder_add_string(builder, pairs[i], pairs[i + 1]);
	json_builder_end_object(builder);
}

JsonNode *agent_facts_collect_cpu(AgentFactsContext *ctx)
{
	g_autoptr(JsonBuilder) builder = json_builder_new();
	g_autofree char *model = agent_cpu_x86_model_name(ctx);
	g_autofree char *vendor = agent_cpu_x86_vendor(ctx);
	g_auto(GStrv) flags = agent_cpu_x86_flags(ctx);
	guint cpus = (guint)GetActiveProcessorCount(ALL_PROCESSOR_GROUPS);
	CpuHypervisor hv = { 0 };
	gboolean have_cpuid = flags != NULL;

	json_builder_begin_object(builder);
	agent_facts_builder_add_string(builder, "architecture", cpu_win_architecture());
	agent_facts_builder_add_string(builder, "model_name", model);
	agent_facts_builder_add_string(builder, "vendor", vendor);
	json_builder_set_member_name(builder, "midr");
	json_builder_add_null_value(builder);
	agent_facts_builder_add_int_or_null(builder, "count", cpus > 0, cpus);
	agent_facts_builder_add_strv(builder, "flags", flags);
	if (flags == NULL)
		agent_facts_add_error(ctx, "cpu.flags", "no CPUID on this processor");

	if (have_cpuid)
		agent_cpu_hypervisor_scan(ctx, &hv);
	json_builder_set_member_name(builder, "hypervisor");
	json_builder_begin_object(builder);
	agent_cpu_hypervisor_write(builder, &hv, have_cpuid);
	/* Linux says which interface its kernel took; Windows is not asked (yet) */
	json_builder_set_member_name(builder, "kernel");
	json_builder_begin_object(builder);
	agent_facts_builder_add_string(builder, "vendor", NULL);
	agent_facts_builder_add_string(builder, "evidence", "not read on Windows");
	json_builder_end_object(builder);
	json_builder_end_object(builder);
	agent_cpu_hypervisor_clear(&hv);

	agent_cpu_add_cpuid(ctx, builder);
	agent_cpu_add_isa_level(ctx, builder);
	cpu_win_add_vulnerabilities(ctx, builder);
	cpu_win_add_topology(ctx, builder, cpus);
	json_builder_end_object(builder);
	return json_builder_get_root(builder);
}

static gboolean cpu_win_system_times(FILETIME *idle, FILETIME *kernel, FILETIME *user,
                                     GError **error)
{
	if (GetSystemTimes(idle, kernel, user))
		return TRUE;
	g_set_error(error, GB_ERROR, GB_ERROR_FAILED, "GetSystemTimes failed (error %lu)",
	            (unsigned long)GetLastError());
	return FALSE;
}

static guint64 cpu_win_ticks(const FILETIME *t)
{
	return (guint64)t->dwHighDateTime << 32 | t->dwLowDateTime;
}

/*
 * The load over window_ms from GetSystemTimes (all CPUs, 100 ns units): busy
 * is what was not idle. Windows does not report steal time: *steal_percent is
 * NAN, which the idle check makes null.
 */
gboolean agent_facts_cpu_load(const char *sysroot, guint window_ms, gint *cancel,
                              double *busy_percent, double *steal_percent, GError **error)
{
	FILETIME idle[2];
	FILETIME kernel[2];
	FILETIME user[2];
	guint64 total;
	guint64 idle_ticks;

	if (!cpu_win_system_times(&idle[0], &kernel[0], &user[0], error))
		return FALSE;
	if (!agent_facts_wait_window(window_ms, cancel, error))
		return FALSE;
	if (!cpu_win_system_times(&idle[1], &kernel[1], &user[1], error))
		return FALSE;
	/* kernel time includes idle time */
	total = (cpu_win_ticks(&kernel[1]) - cpu_win_ticks(&kernel[0])) +
	        (cpu_win_ticks(&user[1]) - cpu_win_ticks(&user[0]));
	idle_ticks = cpu_win_ticks(&idle[1]) - cpu_win_ticks(&idle[0]);
	if (cpu_win_ticks(&kernel[1]) < cpu_win_ticks(&kernel[0]) ||
	    cpu_win_ticks(&user[1]) < cpu_win_ticks(&user[0]) ||
	    cpu_win_ticks(&idle[1]) < cpu_win_ticks(&idle[0])) {
		g_set_error_literal(error, GB_ERROR, GB_ERROR_PARSE,
		                    "GetSystemTimes: counters went backwards");
		return FALSE;
	}
	if (total == 0) {
		g_set_error_literal(error, GB_ERROR, GB_ERROR_PARSE,
		                    "GetSystemTimes: no CPU time elapsed in the window");
		return FALSE;
	}
	*busy_percent = 100.0 * (double)(total - MIN(idle_ticks, total)) / (double)total;
	*steal_percent = NAN;
	return TRUE;
}
