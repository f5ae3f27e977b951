/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"

#include "analysis/rules.h"

/* The clock, NUMA, memory and steal time rules. */

#define GIB ((gint64)1024 * 1024 * 1024)
#define STEAL_WARN_PERCENT 5.0
#define HUGEPAGES_MIN_BYTES (8 * GIB)

void cli_rule_clock_source(CliAuditCtx *ctx)
{
	const CliFactsClocksource *clock = &ctx->facts->clocksource;
	char **available = NULL;
	g_autofree char *detail = NULL;
	g_autofree char *hint = NULL;
	const char *current;
	const char *const slow[] = { "hpet", "acpi_pm", "jiffies", "refined-jiffies", "pit", NULL };
	const char *const good[] = {
		"kvm-clock", "tsc", "hyperv_clocksource_tsc_page", "xen", "arch_sys_counter", NULL
	};
	const char *better = NULL;

	cli_rule_need(ctx, &clock->node.fact, FALSE);
	if (!cli_rule_need(ctx, &clock->current.fact, FALSE))
		return;
	current = clock->current.value;
	if (!cli_rule_str_in(current, slow)) {
		detail = g_strdup_printf("clocksource %s", current);
		cli_rule_pass(ctx, "clocksource", detail);
		return;
	}
	if (cli_rule_need(ctx, &clock->available.fact, TRUE))
		available = clock->available.value;
	for (guint i = 0; good[i] != NULL && better == NULL; i++) {
		if (cli_rule_strv_has(available, good[i]))
			better = good[i];
	}
	detail = g_strdup_printf("clocksource %s: every clock read is slow (a trap to the "
	                         "hypervisor or an I/O port)",
	                         current);
	if (better != NULL)
		hint = g_strdup_printf("%s is available: echo %s > "
		                       "/sys/devices/system/clocksource/clocksource0/"
		                       "current_clocksource (clocksource=%s on the kernel "
		                       "command line to keep it)",
		                       better, better, better);
	else
		hint = g_strdup("expose kvm-clock or a stable TSC to the guest (-cpu "
		                "host,+invtsc; libvirt <timer name='kvmclock' present='yes'/>)");
	cli_rule_fire(ctx, "clocksource", detail, hint);
}

/* Needs memory.numa.nodes; returns the list (its elements may not all be objects). */
static const CliFactsList *need_numa_nodes(CliAuditCtx *ctx, guint *n_ok, guint *n_bad)
{
	const CliFactsMemory *memory = &ctx->facts->memory;

	cli_rule_need(ctx, &memory->node.fact, FALSE);
	cli_rule_need(ctx, &memory->numa.node.fact, FALSE);
	*n_ok = cli_rule_need_items(ctx, &memory->numa.nodes, FALSE, -1, n_bad);
	return &memory->numa.nodes;
}

void cli_rule_numa_memoryless_node(CliAuditCtx *ctx)
{
	guint n_ok = 0;
	const CliFactsList *nodes = need_numa_nodes(ctx, &n_ok, NULL);
	gboolean any_bad = FALSE;
	guint n_checked = 0;

	for (guint i = 0; i < nodes->items->len; i++) {
		const CliFactsNumaNode *node = g_ptr_array_index(nodes->items, i);
		g_autofree char *subject = NULL;
		g_autofree char *detail = NULL;
		gint64 id = i;
		gint64 mem = 0;
		guint n_cpus;
		gboolean ok = TRUE;

		if (!cli_fact_ok(&node->node.fact))
			continue;
		/* read all three so that every bad one is reported */
		if (!cli_rule_need_int(ctx, &node->id, FALSE, 0, G_MAXINT32, &id))
			id = i;
		if (!cli_rule_need_int_array(ctx, &node->cpus, 0, G_MAXINT32))
			ok = FALSE;
		if (!cli_rule_need_int(ctx, &node->memory_bytes, FALSE, 0, G_MAXINT64, &mem))
			ok = FALSE;
		if (!ok)
			continue;
		n_checked++;
		n_cpus = node->cpus.value->len;
		subject = g_strdup_printf("numa/node%" G_GINT64_FORMAT, id);
		if (n_cpus > 0 && mem == 0) {
			detail = g_strdup_printf("node %" G_GINT64_FORMAT " has %u CPU%s and no "
			                         "memory: every access from them is remote",
			                         id, n_cpus, n_cpus == 1 ? "" : "s");
		} else if (n_cpus == 0 && mem > 0) {
			detail = g_strdup_printf("node %" G_GINT64_FORMAT " has memory and no "
			                         "CPUs: its memory is remote to every vCPU",
			                         id);
		}
		if (detail == NULL)
			continue;
		any_bad = TRUE;
		cli_rule_fire(
		    ctx, subject, detail,
		    "give every guest NUMA cell both vCPUs and memory (libvirt <numa><cell "
		    "cpus='...' memory='...'/>, -numa node,cpus=...,memdev=...)");
	}
	if (!any_bad && n_checked > 0)
		cli_rule_pass(ctx, "numa", "every NUMA node has CPUs and memory");
}

void cli_rule_numa_span(CliAuditCtx *ctx)
{
	guint n_ok = 0;
	guint n_bad = 0;
	g_autofree char *detail = NULL;

	need_numa_nodes(ctx, &n_ok, &n_bad);
	/* a node that could not be read would make the count wrong */
	if (n_ok == 0 || n_bad > 0)
		return;
	if (n_ok == 1) {
		cli_rule_pass(ctx, "numa", "one NUMA node");
		return;
	}
	detail = g_strdup_printf("the guest spans %u NUMA nodes", n_ok);
	cli_rule_fire(ctx, "numa", detail,
	              "pin vCPUs and memory to matching host nodes (libvirt <numatune>, "
	              "<vcpupin>), or keep the guest on one node");
}

void cli_rule_hugepages(CliAuditCtx *ctx)
{
	const CliFactsMemory *memory = &ctx->facts->memory;
	g_autofree char *total_str = NULL;
	g_autofree char *detail = NULL;
	const char *thp = NULL;
	gint64 total = 0;
	gint64 pages = 0;

	cli_rule_need(ctx, &memory->node.fact, FALSE);
	if (!cli_rule_need_int(ctx, &memory->total_bytes, FALSE, 0, G_MAXINT64, &total))
		return;
	total_str = g_strdup_printf("%.1f GiB", (double)total / (double)GIB);
	if (total <= HUGEPAGES_MIN_BYTES) {
		detail = g_strdup_printf("%s of memory: huge pages matter little at 8 GiB or less",
		                         total_str);
		cli_rule_pass(ctx, "memory", detail);
		return;
	}
	cli_rule_need(ctx, &memory->hugepages.node.fact, FALSE);
	if (!cli_rule_need_int(ctx, &memory->hugepages.total, FALSE, 0, G_MAXINT64, &pages))
		return;
	if (cli_rule_need(ctx, &memory->thp.fact, TRUE))
		thp = memory->thp.value;
	if (pages > 0 || g_strcmp0(thp, "always") == 0 || g_strcmp0(thp, "madvise") == 0) {
		detail = g_strdup_printf("%" G_GINT64_FORMAT " static huge pages, THP %s", pages,
		                         thp != NULL ? thp : "unavailable");
		cli_rule_pass(ctx, "memory", detail);
		return;
	}
	detail = g_strdup_printf("%s of memory, no static huge pages and THP %s: every TLB miss "
	                         "walks 4 KiB pages",
	                         total_str, thp != NULL ? thp : "unavailable");
	cli_rule_fire(
	    ctx, "memory", detail,
	    "reserve huge pages (vm.nr_hugepages, hugepagesz= on the kernel command line) "
	    "or echo madvise > /sys/kernel/mm/transparent_hugepage/enabled");
}

void cli_rule_steal_time(CliAuditCtx *ctx)
{
	const CliFactsSteal *steal = &ctx->facts->steal;
	g_autofree char *detail = NULL;
	double percent = 0;
	gint64 window = 0;

	cli_rule_need(ctx, &steal->node.fact, FALSE);
	if (!cli_rule_need_double(ctx, &steal->percent, TRUE, 0.0, 100.0, &percent))
		return;
	/* only for the wording: a window that cannot be read is shown as 0 */
	if (cli_fact_ok(&steal->window_ms.fact) && steal->window_ms.value >= 0 &&
	    steal->window_ms.value <= G_MAXINT32)
		window = steal->window_ms.value;
	if (percent <= STEAL_WARN_PERCENT) {
		detail = g_strdup_printf("steal time %.1f %% over %" G_GINT64_FORMAT " ms", percent,
		                         window);
		cli_rule_pass(ctx, "steal", detail);
		return;
	}
	detail = g_strdup_printf("steal time %.1f %% over %" G_GINT64_FORMAT " ms (above %.0f %%): "
	                         "the host is overcommitted",
	                         percent, window, STEAL_WARN_PERCENT);
	cli_rule_fire(
	    ctx, "steal", detail,
	    "give the guest dedicated host CPUs (libvirt <vcpupin>, <emulatorpin>) or move "
	    "load off the host");
}
