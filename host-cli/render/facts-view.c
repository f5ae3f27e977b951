/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"

#include <string.h>

#include "analysis/units.h"
#include "render/escape.h"
#include "render/facts-view.h"
#include "render/table.h"
#include "render/csv.h"

/*
 * Facts views: a compact per-guest block and CSV rows, drawn from the facts
 * model (analysis/facts.h); whatever is missing, null or of the wrong type is
 * shown as "unknown" (the audit's FACTS-ERRORS says why).
 */

#define CLI_UNKNOWN "unknown"
#define CLI_COLOR_BOLD "\033[1m"
#define CLI_COLOR_GREEN "\033[32m"
#define CLI_COLOR_YELLOW "\033[33m"
#define CLI_COLOR_RESET "\033[0m"

/* Formatting to plain strings (not yet escaped). */

static char *fmt_int_unit(const CliFactInt *value, const char *unit)
{
	if (!cli_fact_ok(&value->fact))
		return g_strdup(CLI_UNKNOWN);
	if (unit == NULL)
		return g_strdup_printf("%" G_GINT64_FORMAT, value->value);
	return g_strdup_printf("%" G_GINT64_FORMAT " %s", value->value, unit);
}

static char *fmt_bytes(const CliFactInt *value)
{
	if (!cli_fact_ok(&value->fact) || value->value < 0)
		return g_strdup(CLI_UNKNOWN);
	return cli_format_bytes((guint64)value->value);
}

static char *fmt_string(const CliFactString *value)
{
	return g_strdup(cli_fact_string_or(value, CLI_UNKNOWN));
}

/* "0-3,8": the kernel's own cpulist notation, short even for many CPUs. */
static char *fmt_cpulist(GArray *cpus)
{
	GString *out = g_string_new(NULL);
	guint i = 0;

	while (i < cpus->len) {
		gint64 first = g_array_index(cpus, gint64, i);
		gint64 last = first;
		while (i + 1 < cpus->len && g_array_index(cpus, gint64, i + 1) == last + 1) {
			last++;
			i++;
		}
		if (out->len > 0)
			g_string_append_c(out, ',');
		if (last == first)
			g_string_append_printf(out, "%" G_GINT64_FORMAT, first);
		else
			g_string_append_printf(out, "%" G_GINT64_FORMAT "-%" G_GINT64_FORMAT, first,
			                       last);
		i++;
	}
	return g_string_free(out, FALSE);
}

static char *fmt_strv(const CliFactStrv *strv)
{
	if (!cli_fact_ok(&strv->fact))
		return g_strdup(CLI_UNKNOWN);
	if (strv->value[0] == NULL)
		return g_strdup("none");
	return g_strjoinv(" ", strv->value);
}

/* table */

#define CLI_LABEL_WIDTH 12

/* Guest text in both: capped and cut as the cells and lines of a table. */
static void table_line(GString *out, const char *label, const char *value)
{
	g_autofree char *label_cell = cli_table_escape_cell(label, CLI_TABLE_CELL_MAX);
	g_autofree char *value_cell = cli_table_escape_cell(value, CLI_TABLE_LAST_CELL_MAX);
	gsize start = out->len;

	g_string_append(out, "  ");
	g_string_append(out, label_cell);
	while (cli_text_width(out->str + start) < CLI_LABEL_WIDTH + 2)
		g_string_append_c(out, ' ');
	g_string_append_c(out, ' ');
	g_string_append(out, value_cell);
	cli_table_end_line(out, start);
}

static void table_flags(GString *out, const CliFactStrv *flags, gboolean arm64, gboolean color)
{
	const char *const x86[] = {
		"aes", "pclmulqdq", "avx2", "vaes", "sha_ni", "vmx", "svm", NULL
	};
	/* AES-GCM needs aes and pmull; sve2 marks Armv9 */
	const char *const arm[] = {
		"aes", "pmull", "sha2", "sha512", "atomics", "sve", "sve2", NULL
	};
	const char *const *shown = arm64 ? arm : x86;
	gsize start = out->len;

	g_string_append(out, "  flags        ");
	if (!cli_fact_ok(&flags->fact)) {
		g_string_append(out, CLI_UNKNOWN "\n");
		return;
	}
	for (guint i = 0; shown[i] != NULL; i++) {
		gboolean has = g_strv_contains((const char *const *)flags->value, shown[i]);
		if (i > 0)
			g_string_append_c(out, ' ');
		g_string_append_printf(out, "%s:", shown[i]);
		if (color)
			g_string_append(out, has ? CLI_COLOR_GREEN : CLI_COLOR_YELLOW);
		g_string_append(out, has ? "present" : "absent");
		if (color)
			g_string_append(out, CLI_COLOR_RESET);
	}
	cli_table_end_line(out, start);
}

static char *fmt_hypervisor(const CliFactsHypervisor *hv)
{
	const char *vendor = cli_fact_string_or(&hv->vendor, NULL);
	const char *signature = cli_fact_string_or(&hv->signature, NULL);
	const char *source = cli_fact_string_or(&hv->source, NULL);
	GString *str;

	if (!cli_fact_ok(&hv->present.fact))
		return g_strdup(CLI_UNKNOWN);
	if (!hv->present.value)
		return g_strdup("none detected");
	str = g_string_new(vendor != NULL ? vendor : "present, vendor unknown");
	if (signature != NULL || source != NULL) {
		g_string_append(str, " (");
		if (signature != NULL)
			g_string_append_printf(str, "signature %s", signature);
		if (signature != NULL && source != NULL)
			g_string_append(str, ", ");
		if (source != NULL)
			g_string_append_printf(str, "from %s", source);
		g_string_append_c(str, ')');
	}
	return g_string_free(str, FALSE);
}

static char *fmt_midr(const CliFactsCpu *cpu)
{
	g_autofree char *implementer = fmt_string(&cpu->midr.implementer);
	g_autofree char *variant = fmt_string(&cpu->midr.variant);
	g_autofree char *part = fmt_string(&cpu->midr.part);
	g_autofree char *revision = fmt_int_unit(&cpu->midr.revision, NULL);
	g_autofree char *source = fmt_string(&cpu->midr.source);

	if (!cli_fact_ok(&cpu->midr.node.fact))
		return g_strdup(CLI_UNKNOWN);
	return g_strdup_printf("implementer %s, variant %s, part %s, revision %s (from %s)",
	                       implementer, variant, part, revision, source);
}

static void table_cpu(GString *out, const CliFactsCpu *cpu, gboolean color)
{
	g_autofree char *model = fmt_string(&cpu->model_name);
	g_autofree char *vendor = fmt_string(&cpu->vendor);
	g_autofree char *arch = fmt_string(&cpu->architecture);
	g_autofree char *count = fmt_int_unit(&cpu->count, "vCPUs");
	g_autofree char *line = g_strdup_printf("%s, %s, %s, %s", model, vendor, arch, count);
	g_autofree char *hv = fmt_hypervisor(&cpu->hypervisor);

	table_line(out, "cpu", line);
	/* the identity behind vendor and model on aarch64; x86 has none */
	if (cli_facts_cpu_is_arm64(cpu)) {
		g_autofree char *midr = fmt_midr(cpu);

		table_line(out, "midr", midr);
	}
	table_flags(out, &cpu->flags, cli_facts_cpu_is_arm64(cpu), color);
	table_line(out, "hypervisor", hv);
}

static void table_memory(GString *out, const CliFactsMemory *memory)
{
	const CliFactsList *nodes = &memory->numa.nodes;
	g_autofree char *total = fmt_bytes(&memory->total_bytes);
	g_autofree char *page = fmt_bytes(&memory->page_size_bytes);
	g_autofree char *htotal = fmt_int_unit(&memory->hugepages.total, "pages");
	g_autofree char *hfree = fmt_int_unit(&memory->hugepages.free, NULL);
	g_autofree char *hsize = fmt_bytes(&memory->hugepages.size_bytes);
	g_autofree char *thp = fmt_string(&memory->thp);
	g_autofree char *hline =
	    g_strdup_printf("%s of %s (%s free), THP %s", htotal, hsize, hfree, thp);

	table_line(out, "memory", total);
	table_line(out, "page size", page);
	table_line(out, "hugepages", hline);
	if (!cli_fact_ok(&nodes->fact)) {
		table_line(out, "numa", CLI_UNKNOWN);
		return;
	}
	for (guint i = 0; i < nodes->items->len; i++) {
		const CliFactsNumaNode *node = g_ptr_array_index(nodes->items, i);
		GArray *cpus = cli_fact_ok(&node->cpus.fact) ? node->cpus.value : NULL;
		g_autofree char *cpulist = cpus != NULL ? fmt_cpulist(cpus) : NULL;
		g_autofree char *mem = fmt_bytes(&node->memory_bytes);
		g_autofree char *id = fmt_int_unit(&node->id, NULL);
		g_autofree char *label = g_strdup_printf("numa node %s", id);
		g_autofree char *line = NULL;

		if (cpus == NULL)
			line = g_strdup_printf("cpus %s, memory %s", CLI_UNKNOWN, mem);
		else
			line = g_strdup_printf("cpus %s (%u vCPUs), memory %s",
			                       cpus->len > 0 ? cpulist : "none", cpus->len, mem);
		table_line(out, label, line);
	}
}

static void table_clocksource(GString *out, const CliFactsClocksource *clock)
{
	g_autofree char *current = fmt_string(&clock->current);
	g_autofree char *avail = fmt_strv(&clock->available);
	g_autofree char *cline = g_strdup_printf("%s (available: %s)", current, avail);

	table_line(out, "clocksource", cline);
}

static void table_steal(GString *out, const CliFactsSteal *steal)
{
	g_autofree char *window = fmt_int_unit(&steal->window_ms, "ms");
	g_autofree char *sline = NULL;

	if (cli_fact_ok(&steal->percent.fact))
		sline = g_strdup_printf("%.1f %% over %s", steal->percent.value, window);
	else
		sline = g_strdup(CLI_UNKNOWN);
	table_line(out, "steal", sline);
}

static void table_block(GString *out, const CliFactsList *block)
{
	if (!cli_fact_ok(&block->fact)) {
		table_line(out, "disks", CLI_UNKNOWN);
		return;
	}
	if (block->items->len == 0)
		table_line(out, "disks", "none");
	for (guint i = 0; i < block->items->len; i++) {
		const CliFactsDisk *disk = g_ptr_array_index(block->items, i);
		g_autofree char *name = fmt_string(&disk->name);
		g_autofree char *bus = fmt_string(&disk->bus);
		g_autofree char *driver = fmt_string(&disk->driver);
		g_autofree char *sched = fmt_string(&disk->scheduler);
		g_autofree char *cache = fmt_string(&disk->write_cache);
		g_autofree char *size = fmt_bytes(&disk->size_bytes);
		g_autofree char *lbs = fmt_int_unit(&disk->logical_block_size, "B");
		g_autofree char *pbs = fmt_int_unit(&disk->physical_block_size, "B");
		g_autofree char *label = g_strdup_printf("disk %s", name);
		g_autofree char *line = NULL;
		gboolean cdrom = cli_fact_ok(&disk->cdrom.fact) && disk->cdrom.value;

		line = g_strdup_printf("%s, %s, scheduler %s, %s, %s, blocks %s/%s%s", bus, driver,
		                       sched, cache, size, lbs, pbs, cdrom ? ", cdrom" : "");
		table_line(out, label, line);
	}
}

static void table_net(GString *out, const CliFactsList *net)
{
	if (!cli_fact_ok(&net->fact)) {
		table_line(out, "nics", CLI_UNKNOWN);
		return;
	}
	if (net->items->len == 0)
		table_line(out, "nics", "none");
	for (guint i = 0; i < net->items->len; i++) {
		const CliFactsNic *nic = g_ptr_array_index(net->items, i);
		g_autofree char *name = fmt_string(&nic->name);
		g_autofree char *driver = fmt_string(&nic->driver);
		g_autofree char *rxq = fmt_int_unit(&nic->rx_queues, NULL);
		g_autofree char *txq = fmt_int_unit(&nic->tx_queues, NULL);
		g_autofree char *mtu = fmt_int_unit(&nic->mtu, "B");
		g_autofree char *label = g_strdup_printf("nic %s", name);
		g_autofree char *speed = NULL;
		g_autofree char *line = NULL;

		if (cli_fact_ok(&nic->speed_mbps.fact))
			speed = g_strdup_printf("%" G_GINT64_FORMAT " Mb/s", nic->speed_mbps.value);
		else
			speed = g_strdup("speed unknown");
		line = g_strdup_printf("%s, queues %s rx/%s tx, MTU %s, %s", driver, rxq, txq, mtu,
		                       speed);
		table_line(out, label, line);
	}
}

void cli_facts_view_table(GString *out, const char *guest, const CliFacts *facts,
                          CliFactsSections sections, gboolean color)
{
	g_autofree char *pretty = fmt_string(&facts->os.pretty_name);
	g_autofree char *kernel = fmt_string(&facts->os.kernel_release);
	g_autofree char *osline = g_strdup_printf("%s, kernel %s", pretty, kernel);
	g_autofree char *agent = fmt_string(&facts->agent_version);
	guint n_errors = cli_fact_ok(&facts->errors.fact) ? facts->errors.items->len : 0;
	gsize start = out->len;

	if (color)
		g_string_append(out, CLI_COLOR_BOLD);
	cli_escape_append(out, guest);
	if (color)
		g_string_append(out, CLI_COLOR_RESET);
	cli_table_end_line(out, start);
	if (sections & CLI_FACTS_SECTION_CPU)
		table_cpu(out, &facts->cpu, color);
	if (sections & CLI_FACTS_SECTION_MEMORY)
		table_memory(out, &facts->memory);
	if (sections & CLI_FACTS_SECTION_CLOCKSOURCE)
		table_clocksource(out, &facts->clocksource);
	if (sections & CLI_FACTS_SECTION_STEAL)
		table_steal(out, &facts->steal);
	if (sections & CLI_FACTS_SECTION_BLOCK)
		table_block(out, &facts->block);
	if (sections & CLI_FACTS_SECTION_NET)
		table_net(out, &facts->net);
	if (sections & CLI_FACTS_SECTION_OS)
		table_line(out, "os", osline);
	table_line(out, "agent", agent);
	if (n_errors > 0) {
		g_autofree char *line = g_strdup_printf("%u member%s could not be read (see audit)",
		                                        n_errors, n_errors == 1 ? "" : "s");
		table_line(out, "errors", line);
	}
}

void cli_facts_render_table(GString *out, const char *guest, JsonObject *facts, gboolean color)
{
	g_autoptr(CliFacts) model = cli_facts_new(facts);
	cli_facts_view_table(out, guest, model, CLI_FACTS_SECTION_ALL, color);
}

/* CSV */

void cli_facts_render_csv_header(GString *out)
{
	g_string_append(out, "guest,section,item,key,value\n");
}

static void csv_row(GString *out, const char *guest, const char *section, const char *item,
                    const char *key, const char *value)
{
	const char *fields[] = { guest, section, item, key, value };
	for (guint i = 0; i < G_N_ELEMENTS(fields); i++) {
		if (i > 0)
			g_string_append_c(out, ',');
		cli_csv_append_text(out, fields[i]);
	}
	g_string_append_c(out, '\n');
}

/*
 * One row per member. A member that could not be read, or is of another type
 * than the contract's, is written as "" like null, so a column never mixes
 * types.
 */
typedef struct {
	GString *out;
	const char *guest;
	const char *section;
	const char *item;
} CliCsvPlace;

static void csv_string(const CliCsvPlace *at, const char *key, const CliFactString *value)
{
	csv_row(at->out, at->guest, at->section, at->item, key, cli_fact_string_or(value, ""));
}

static void csv_int(const CliCsvPlace *at, const char *key, const CliFactInt *value)
{
	g_autofree char *text = cli_fact_ok(&value->fact)
	                            ? g_strdup_printf("%" G_GINT64_FORMAT, value->value)
	                            : g_strdup("");
	csv_row(at->out, at->guest, at->section, at->item, key, text);
}

static void csv_double(const CliCsvPlace *at, const char *key, const CliFactDouble *value)
{
	char buf[G_ASCII_DTOSTR_BUF_SIZE];
	const char *text = "";

	if (cli_fact_ok(&value->fact))
		text = g_ascii_formatd(buf, sizeof(buf), "%.6g", value->value);
	csv_row(at->out, at->guest, at->section, at->item, key, text);
}

static void csv_bool(const CliCsvPlace *at, const char *key, const CliFactBool *value)
{
	const char *text = "";

	if (cli_fact_ok(&value->fact))
		text = value->value ? "true" : "false";
	csv_row(at->out, at->guest, at->section, at->item, key, text);
}

static void csv_strv(const CliCsvPlace *at, const char *key, const CliFactStrv *value)
{
	g_autofree char *text =
	    cli_fact_ok(&value->fact) ? g_strjoinv(" ", value->value) : g_strdup("");
	csv_row(at->out, at->guest, at->section, at->item, key, text);
}

static void csv_cpu(GString *out, const char *guest, const CliFactsCpu *cpu)
{
	const CliFactsHypervisor *hv = &cpu->hypervisor;
	CliCsvPlace at = { out, guest, "cpu", "" };
	CliCsvPlace at_hv = { out, guest, "cpu", "hypervisor" };

	csv_string(&at, "architecture", &cpu->architecture);
	csv_string(&at, "model_name", &cpu->model_name);
	csv_string(&at, "vendor", &cpu->vendor);
	csv_int(&at, "count", &cpu->count);
	csv_strv(&at, "flags", &cpu->flags);
	csv_bool(&at_hv, "present", &hv->present);
	csv_string(&at_hv, "vendor", &hv->vendor);
	csv_string(&at_hv, "signature", &hv->signature);
	csv_string(&at_hv, "source", &hv->source);
}

static void csv_memory(GString *out, const char *guest, const CliFactsMemory *memory)
{
	const CliFactsList *nodes = &memory->numa.nodes;
	CliCsvPlace at = { out, guest, "memory", "" };
	CliCsvPlace at_huge = { out, guest, "memory", "hugepages" };

	csv_int(&at, "total_bytes", &memory->total_bytes);
	csv_string(&at, "thp", &memory->thp);
	csv_int(&at_huge, "total", &memory->hugepages.total);
	csv_int(&at_huge, "free", &memory->hugepages.free);
	csv_int(&at_huge, "size_bytes", &memory->hugepages.size_bytes);
	for (guint i = 0; cli_fact_ok(&nodes->fact) && i < nodes->items->len; i++) {
		const CliFactsNumaNode *node = g_ptr_array_index(nodes->items, i);
		g_autofree char *item =
		    cli_fact_ok(&node->id.fact)
		        ? g_strdup_printf("node%" G_GINT64_FORMAT, node->id.value)
		        : g_strdup("node?");
		g_autofree char *cpulist =
		    cli_fact_ok(&node->cpus.fact) ? fmt_cpulist(node->cpus.value) : g_strdup("");
		CliCsvPlace at_node = { out, guest, "numa", item };

		csv_row(out, guest, "numa", item, "cpus", cpulist);
		csv_int(&at_node, "memory_bytes", &node->memory_bytes);
	}
}

static void csv_block(GString *out, const char *guest, const CliFactsList *block)
{
	for (guint i = 0; cli_fact_ok(&block->fact) && i < block->items->len; i++) {
		const CliFactsDisk *disk = g_ptr_array_index(block->items, i);
		g_autofree char *item = cli_fact_ok(&disk->name.fact) ? g_strdup(disk->name.value)
		                                                      : g_strdup_printf("[%u]", i);
		CliCsvPlace at = { out, guest, "block", item };

		csv_string(&at, "bus", &disk->bus);
		csv_string(&at, "driver", &disk->driver);
		csv_string(&at, "scheduler", &disk->scheduler);
		csv_string(&at, "write_cache", &disk->write_cache);
		csv_int(&at, "logical_block_size", &disk->logical_block_size);
		csv_int(&at, "physical_block_size", &disk->physical_block_size);
		csv_int(&at, "size_bytes", &disk->size_bytes);
		csv_bool(&at, "rotational", &disk->rotational);
		csv_bool(&at, "removable", &disk->removable);
		csv_bool(&at, "cdrom", &disk->cdrom);
		csv_string(&at, "model", &disk->model);
		csv_strv(&at, "schedulers", &disk->schedulers);
	}
}

static void csv_net(GString *out, const char *guest, const CliFactsList *net)
{
	for (guint i = 0; cli_fact_ok(&net->fact) && i < net->items->len; i++) {
		const CliFactsNic *nic = g_ptr_array_index(net->items, i);
		g_autofree char *item = cli_fact_ok(&nic->name.fact) ? g_strdup(nic->name.value)
		                                                     : g_strdup_printf("[%u]", i);
		CliCsvPlace at = { out, guest, "net", item };

		csv_string(&at, "driver", &nic->driver);
		csv_int(&at, "mtu", &nic->mtu);
		csv_int(&at, "rx_queues", &nic->rx_queues);
		csv_int(&at, "tx_queues", &nic->tx_queues);
		csv_int(&at, "speed_mbps", &nic->speed_mbps);
	}
}

void cli_facts_view_csv_rows(GString *out, const char *guest, const CliFacts *facts,
                             CliFactsSections sections)
{
	const CliFactsSteal *steal = &facts->steal;
	CliCsvPlace at_clock = { out, guest, "clocksource", "" };
	CliCsvPlace at_steal = { out, guest, "steal", "" };
	CliCsvPlace at_os = { out, guest, "os", "" };
	CliCsvPlace at_agent = { out, guest, "agent", "" };

	if (sections & CLI_FACTS_SECTION_CPU)
		csv_cpu(out, guest, &facts->cpu);
	if (sections & CLI_FACTS_SECTION_MEMORY)
		csv_memory(out, guest, &facts->memory);
	if (sections & CLI_FACTS_SECTION_CLOCKSOURCE) {
		csv_string(&at_clock, "current", &facts->clocksource.current);
		csv_strv(&at_clock, "available", &facts->clocksource.available);
	}
	if (sections & CLI_FACTS_SECTION_STEAL) {
		csv_double(&at_steal, "percent", &steal->percent);
		csv_int(&at_steal, "window_ms", &steal->window_ms);
		csv_int(&at_steal, "steal_ticks", &steal->steal_ticks);
		csv_int(&at_steal, "total_ticks", &steal->total_ticks);
		csv_int(&at_steal, "user_hz", &steal->user_hz);
	}
	if (sections & CLI_FACTS_SECTION_BLOCK)
		csv_block(out, guest, &facts->block);
	if (sections & CLI_FACTS_SECTION_NET)
		csv_net(out, guest, &facts->net);
	if (sections & CLI_FACTS_SECTION_OS) {
		csv_string(&at_os, "kernel_release", &facts->os.kernel_release);
		csv_string(&at_os, "pretty_name", &facts->os.pretty_name);
	}
	csv_string(&at_agent, "agent_version", &facts->agent_version);
}

void cli_facts_render_csv_rows(GString *out, const char *guest, JsonObject *facts)
{
	g_autoptr(CliFacts) model = cli_facts_new(facts);
	cli_facts_view_csv_rows(out, guest, model, CLI_FACTS_SECTION_ALL);
}
