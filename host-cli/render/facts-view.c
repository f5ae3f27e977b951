/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"

#include <string.h>

#include "analysis/units.h"
#include "render/escape.h"
#include "render/facts-view.h"
#include "render/csv.h"
#include "gb-json.h"

/*
 * Facts views: a compact per-guest block and CSV rows. Every value is read
 * with the typed accessors; whatever is missing, null or of the wrong type is
 * shown as "unknown" (the audit's FACTS-ERRORS says why).
 */

#define CLI_UNKNOWN "unknown"
#define CLI_COLOR_BOLD "\033[1m"
#define CLI_COLOR_GREEN "\033[32m"
#define CLI_COLOR_YELLOW "\033[33m"
#define CLI_COLOR_RESET "\033[0m"

/* Small readers: NULL / FALSE when the member is absent, null or of the wrong type. */

static JsonObject *view_object(JsonObject *obj, const char *member)
{
	JsonObject *out = NULL;
	if (obj == NULL || !gb_json_has(obj, member))
		return NULL;
	if (!gb_json_get_object(obj, member, GB_JSON_REQUIRED, &out, NULL))
		return NULL;
	return out;
}

static JsonArray *view_array(JsonObject *obj, const char *member)
{
	JsonArray *out = NULL;
	if (obj == NULL || !gb_json_has(obj, member))
		return NULL;
	if (!gb_json_get_array(obj, member, GB_JSON_REQUIRED, &out, NULL))
		return NULL;
	return out;
}

static const char *view_string(JsonObject *obj, const char *member)
{
	const char *out = NULL;
	if (obj == NULL || !gb_json_has(obj, member))
		return NULL;
	if (!gb_json_get_string(obj, member, GB_JSON_REQUIRED, &out, NULL))
		return NULL;
	return out;
}

static gboolean view_int(JsonObject *obj, const char *member, gint64 *out)
{
	if (obj == NULL || !gb_json_has(obj, member))
		return FALSE;
	return gb_json_get_int(obj, member, GB_JSON_REQUIRED, G_MININT64, G_MAXINT64, out, NULL);
}

static gboolean view_double(JsonObject *obj, const char *member, double *out)
{
	if (obj == NULL || !gb_json_has(obj, member))
		return FALSE;
	return gb_json_get_double(obj, member, GB_JSON_REQUIRED, -G_MAXDOUBLE, G_MAXDOUBLE, out,
	                          NULL);
}

static gboolean view_bool(JsonObject *obj, const char *member, gboolean *out)
{
	if (obj == NULL || !gb_json_has(obj, member))
		return FALSE;
	return gb_json_get_bool(obj, member, GB_JSON_REQUIRED, out, NULL);
}

static char **view_strv(JsonObject *obj, const char *member)
{
	char **out = NULL;
	if (obj == NULL || !gb_json_has(obj, member))
		return NULL;
	if (!gb_json_get_strv(obj, member, GB_JSON_REQUIRED, &out, NULL))
		return NULL;
	return out;
}

static GArray *view_int_array(JsonObject *obj, const char *member)
{
	GArray *out = NULL;
	if (obj == NULL || !gb_json_has(obj, member))
		return NULL;
	if (!gb_json_get_int_array(obj, member, GB_JSON_REQUIRED, G_MININT64, G_MAXINT64, &out,
	                           NULL))
		return NULL;
	return out;
}

static JsonObject *view_element(JsonArray *array, guint i)
{
	JsonObject *out = NULL;
	if (!gb_json_node_get_object(json_array_get_element(array, i), "element", &out, NULL))
		return NULL;
	return out;
}

/* Formatting to plain strings (not yet escaped). */

static char *fmt_int_unit(JsonObject *obj, const char *member, const char *unit)
{
	gint64 value = 0;
	if (!view_int(obj, member, &value))
		return g_strdup(CLI_UNKNOWN);
	if (unit == NULL)
		return g_strdup_printf("%" G_GINT64_FORMAT, value);
	return g_strdup_printf("%" G_GINT64_FORMAT " %s", value, unit);
}

static char *fmt_bytes(JsonObject *obj, const char *member)
{
	gint64 value = 0;
	if (!view_int(obj, member, &value) || value < 0)
		return g_strdup(CLI_UNKNOWN);
	return cli_format_bytes((guint64)value);
}

static char *fmt_string(JsonObject *obj, const char *member)
{
	const char *value = view_string(obj, member);
	return g_strdup(value != NULL ? value : CLI_UNKNOWN);
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

static char *fmt_strv(char **strv)
{
	if (strv == NULL)
		return g_strdup(CLI_UNKNOWN);
	if (strv[0] == NULL)
		return g_strdup("none");
	return g_strjoinv(" ", strv);
}

/* table */

#define CLI_LABEL_WIDTH 12

static void table_line(GString *out, const char *label, const char *value)
{
	gsize start = out->len;
	g_string_append(out, "  ");
	cli_escape_append(out, label);
	while (g_utf8_strlen(out->str + start, -1) < CLI_LABEL_WIDTH + 2)
		g_string_append_c(out, ' ');
	g_string_append_c(out, ' ');
	cli_escape_append(out, value);
	g_string_append_c(out, '\n');
}

static void table_flags(GString *out, JsonObject *cpu, gboolean color)
{
	g_auto(GStrv) flags = view_strv(cpu, "flags");
	const char *const shown[] = { "aes", "pclmulqdq", "avx2", "vaes", "sha_ni", "vmx", "svm" };

	g_string_append(out, "  flags        ");
	if (flags == NULL) {
		g_string_append(out, CLI_UNKNOWN "\n");
		return;
	}
	for (guint i = 0; i < G_N_ELEMENTS(shown); i++) {
		gboolean has = g_strv_contains((const char *const *)flags, shown[i]);
		if (i > 0)
			g_string_append_c(out, ' ');
		g_string_append_printf(out, "%s:", shown[i]);
		if (color)
			g_string_append(out, has ? CLI_COLOR_GREEN : CLI_COLOR_YELLOW);
		g_string_append(out, has ? "present" : "absent");
		if (color)
			g_string_append(out, CLI_COLOR_RESET);
	}
	g_string_append_c(out, '\n');
}

static char *fmt_hypervisor(JsonObject *cpu)
{
	JsonObject *hv = view_object(cpu, "hypervisor");
	gboolean present = FALSE;
	const char *vendor;
	const char *signature;
	const char *source;
	GString *str;

	if (!view_bool(hv, "present", &present))
		return g_strdup(CLI_UNKNOWN);
	if (!present)
		return g_strdup("none detected");
	vendor = view_string(hv, "vendor");
	signature = view_string(hv, "signature");
	source = view_string(hv, "source");
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

static void table_cpu(GString *out, JsonObject *facts, gboolean color)
{
	JsonObject *cpu = view_object(facts, "cpu");
	g_autofree char *model = fmt_string(cpu, "model_name");
	g_autofree char *vendor = fmt_string(cpu, "vendor");
	g_autofree char *arch = fmt_string(cpu, "architecture");
	g_autofree char *count = fmt_int_unit(cpu, "count", "vCPUs");
	g_autofree char *line = g_strdup_printf("%s, %s, %s, %s", model, vendor, arch, count);
	g_autofree char *hv = fmt_hypervisor(cpu);

	table_line(out, "cpu", line);
	table_flags(out, cpu, color);
	table_line(out, "hypervisor", hv);
}

static void table_memory(GString *out, JsonObject *facts)
{
	JsonObject *memory = view_object(facts, "memory");
	JsonObject *huge = view_object(memory, "hugepages");
	JsonObject *numa = view_object(memory, "numa");
	JsonArray *nodes = view_array(numa, "nodes");
	g_autofree char *total = fmt_bytes(memory, "total_bytes");
	g_autofree char *htotal = fmt_int_unit(huge, "total", "pages");
	g_autofree char *hfree = fmt_int_unit(huge, "free", NULL);
	g_autofree char *hsize = fmt_bytes(huge, "size_bytes");
	g_autofree char *thp = fmt_string(memory, "thp");
	g_autofree char *hline =
	    g_strdup_printf("%s of %s (%s free), THP %s", htotal, hsize, hfree, thp);

	table_line(out, "memory", total);
	table_line(out, "hugepages", hline);
	if (nodes == NULL) {
		table_line(out, "numa", CLI_UNKNOWN);
		return;
	}
	for (guint i = 0; i < json_array_get_length(nodes); i++) {
		JsonObject *node = view_element(nodes, i);
		g_autoptr(GArray) cpus = view_int_array(node, "cpus");
		g_autofree char *cpulist = cpus != NULL ? fmt_cpulist(cpus) : NULL;
		g_autofree char *mem = fmt_bytes(node, "memory_bytes");
		g_autofree char *id = fmt_int_unit(node, "id", NULL);
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

static void table_clock_steal(GString *out, JsonObject *facts)
{
	JsonObject *clock = view_object(facts, "clocksource");
	JsonObject *steal = view_object(facts, "steal");
	g_autofree char *current = fmt_string(clock, "current");
	g_auto(GStrv) available = view_strv(clock, "available");
	g_autofree char *avail = fmt_strv(available);
	g_autofree char *cline = g_strdup_printf("%s (available: %s)", current, avail);
	g_autofree char *window = fmt_int_unit(steal, "window_ms", "ms");
	g_autofree char *sline = NULL;
	double percent = 0;

	table_line(out, "clocksource", cline);
	if (view_double(steal, "percent", &percent))
		sline = g_strdup_printf("%.1f %% over %s", percent, window);
	else
		sline = g_strdup(CLI_UNKNOWN);
	table_line(out, "steal", sline);
}

static void table_block(GString *out, JsonObject *facts)
{
	JsonArray *block = view_array(facts, "block");

	if (block == NULL) {
		table_line(out, "disks", CLI_UNKNOWN);
		return;
	}
	if (json_array_get_length(block) == 0)
		table_line(out, "disks", "none");
	for (guint i = 0; i < json_array_get_length(block); i++) {
		JsonObject *disk = view_element(block, i);
		g_autofree char *name = fmt_string(disk, "name");
		g_autofree char *bus = fmt_string(disk, "bus");
		g_autofree char *driver = fmt_string(disk, "driver");
		g_autofree char *sched = fmt_string(disk, "scheduler");
		g_autofree char *cache = fmt_string(disk, "write_cache");
		g_autofree char *size = fmt_bytes(disk, "size_bytes");
		g_autofree char *lbs = fmt_int_unit(disk, "logical_block_size", "B");
		g_autofree char *pbs = fmt_int_unit(disk, "physical_block_size", "B");
		g_autofree char *label = g_strdup_printf("disk %s", name);
		g_autofree char *line = NULL;
		gboolean cdrom = FALSE;

		view_bool(disk, "cdrom", &cdrom);
		line = g_strdup_printf("%s, %s, scheduler %s, %s, %s, blocks %s/%s%s", bus, driver,
		                       sched, cache, size, lbs, pbs, cdrom ? ", cdrom" : "");
		table_line(out, label, line);
	}
}

static void table_net(GString *out, JsonObject *facts)
{
	JsonArray *net = view_array(facts, "net");

	if (net == NULL) {
		table_line(out, "nics", CLI_UNKNOWN);
		return;
	}
	if (json_array_get_length(net) == 0)
		table_line(out, "nics", "none");
	for (guint i = 0; i < json_array_get_length(net); i++) {
		JsonObject *nic = view_element(net, i);
		g_autofree char *name = fmt_string(nic, "name");
		g_autofree char *driver = fmt_string(nic, "driver");
		g_autofree char *rxq = fmt_int_unit(nic, "rx_queues", NULL);
		g_autofree char *txq = fmt_int_unit(nic, "tx_queues", NULL);
		g_autofree char *mtu = fmt_int_unit(nic, "mtu", "B");
		g_autofree char *label = g_strdup_printf("nic %s", name);
		g_autofree char *speed = NULL;
		g_autofree char *line = NULL;
		gint64 mbps = 0;

		if (view_int(nic, "speed_mbps", &mbps))
			speed = g_strdup_printf("%" G_GINT64_FORMAT " Mb/s", mbps);
		else
			speed = g_strdup("speed unknown");
		line = g_strdup_printf("%s, queues %s rx/%s tx, MTU %s, %s", driver, rxq, txq, mtu,
		                       speed);
		table_line(out, label, line);
	}
}

void cli_facts_render_table(GString *out, const char *guest, JsonObject *facts, gboolean color)
{
	JsonObject *os = view_object(facts, "os");
	g_autofree char *pretty = fmt_string(os, "pretty_name");
	g_autofree char *kernel = fmt_string(os, "kernel_release");
	g_autofree char *osline = g_strdup_printf("%s, kernel %s", pretty, kernel);
	g_autofree char *agent = fmt_string(facts, "agent_version");
	JsonArray *errors = view_array(facts, "errors");

	if (color)
		g_string_append(out, CLI_COLOR_BOLD);
	cli_escape_append(out, guest);
	if (color)
		g_string_append(out, CLI_COLOR_RESET);
	g_string_append_c(out, '\n');
	table_cpu(out, facts, color);
	table_memory(out, facts);
	table_clock_steal(out, facts);
	table_block(out, facts);
	table_net(out, facts);
	table_line(out, "os", osline);
	table_line(out, "agent", agent);
	if (errors != NULL && json_array_get_length(errors) > 0) {
		g_autofree char *line = g_strdup_printf(
		    "%u member%s could not be read (see audit)", json_array_get_length(errors),
		    json_array_get_length(errors) == 1 ? "" : "s");
		table_line(out, "errors", line);
	}
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
		g_autofree char *escaped = cli_escape_terminal(fields[i]);
		if (i > 0)
			g_string_append_c(out, ',');
		cli_csv_append_field(out, escaped);
	}
	g_string_append_c(out, '\n');
}

/* value of a scalar member as CSV text: "" for null/absent/wrong type */
/*
 * A scalar member as CSV text. spec is "T:member" with T the contract type
 * (s string, i integer, d number, b boolean): a value of another type is
 * written as "" like null, so a column never mixes types.
 */
static char *csv_scalar(JsonObject *obj, const char *spec)
{
	const char *member = spec + 2;
	const char *str = NULL;
	gint64 i = 0;
	double d = 0;
	gboolean b = FALSE;
	char buf[G_ASCII_DTOSTR_BUF_SIZE];

	switch (spec[0]) {
	case 's':
		str = view_string(obj, member);
		return g_strdup(str != NULL ? str : "");
	case 'i':
		if (view_int(obj, member, &i))
			return g_strdup_printf("%" G_GINT64_FORMAT, i);
		break;
	case 'd':
		if (view_double(obj, member, &d))
			return g_strdup(g_ascii_formatd(buf, sizeof(buf), "%.6g", d));
		break;
	case 'b':
		if (view_bool(obj, member, &b))
			return g_strdup(b ? "true" : "false");
		break;
	default:
		break;
	}
	return g_strdup("");
}

static void csv_members(GString *out, const char *guest, const char *section, const char *item,
                        JsonObject *obj, const char *const *members)
{
	for (guint i = 0; members[i] != NULL; i++) {
		g_autofree char *value = csv_scalar(obj, members[i]);
		csv_row(out, guest, section, item, members[i] + 2, value);
	}
}

static void csv_strv(GString *out, const char *guest, const char *section, const char *item,
                     JsonObject *obj, const char *member)
{
	g_auto(GStrv) strv = view_strv(obj, member);
	g_autofree char *value = strv != NULL ? g_strjoinv(" ", strv) : g_strdup("");
	csv_row(out, guest, section, item, member, value);
}

void cli_facts_render_csv_rows(GString *out, const char *guest, JsonObject *facts)
{
	JsonObject *cpu = view_object(facts, "cpu");
	JsonObject *hv = view_object(cpu, "hypervisor");
	JsonObject *memory = view_object(facts, "memory");
	JsonObject *huge = view_object(memory, "hugepages");
	JsonArray *nodes = view_array(view_object(memory, "numa"), "nodes");
	JsonArray *block = view_array(facts, "block");
	JsonArray *net = view_array(facts, "net");
	const char *const cpu_members[] = { "s:architecture", "s:model_name", "s:vendor", "i:count",
		                            NULL };
	const char *const hv_members[] = { "b:present", "s:vendor", "s:signature", "s:source",
		                           NULL };
	const char *const mem_members[] = { "i:total_bytes", "s:thp", NULL };
	const char *const huge_members[] = { "i:total", "i:free", "i:size_bytes", NULL };
	const char *const clock_members[] = { "s:current", NULL };
	const char *const steal_members[] = { "d:percent",     "i:window_ms", "i:steal_ticks",
		                              "i:total_ticks", "i:user_hz",   NULL };
	const char *const disk_members[] = { "s:bus",
		                             "s:driver",
		                             "s:scheduler",
		                             "s:write_cache",
		                             "i:logical_block_size",
		                             "i:physical_block_size",
		                             "i:size_bytes",
		                             "b:rotational",
		                             "b:removable",
		                             "b:cdrom",
		                             "s:model",
		                             NULL };
	const char *const nic_members[] = { "s:driver",    "i:mtu",        "i:rx_queues",
		                            "i:tx_queues", "i:speed_mbps", NULL };
	const char *const os_members[] = { "s:kernel_release", "s:pretty_name", NULL };

	csv_members(out, guest, "cpu", "", cpu, cpu_members);
	csv_strv(out, guest, "cpu", "", cpu, "flags");
	csv_members(out, guest, "cpu", "hypervisor", hv, hv_members);
	csv_members(out, guest, "memory", "", memory, mem_members);
	csv_members(out, guest, "memory", "hugepages", huge, huge_members);
	for (guint i = 0; nodes != NULL && i < json_array_get_length(nodes); i++) {
		JsonObject *node = view_element(nodes, i);
		g_autoptr(GArray) cpus = view_int_array(node, "cpus");
		g_autofree char *id = csv_scalar(node, "i:id");
		g_autofree char *item = g_strdup_printf("node%s", id[0] != '\0' ? id : "?");
		g_autofree char *cpulist = cpus != NULL ? fmt_cpulist(cpus) : g_strdup("");
		g_autofree char *mem = csv_scalar(node, "i:memory_bytes");

		csv_row(out, guest, "numa", item, "cpus", cpulist);
		csv_row(out, guest, "numa", item, "memory_bytes", mem);
	}
	csv_members(out, guest, "clocksource", "", view_object(facts, "clocksource"),
	            clock_members);
	csv_strv(out, guest, "clocksource", "", view_object(facts, "clocksource"), "available");
	csv_members(out, guest, "steal", "", view_object(facts, "steal"), steal_members);
	for (guint i = 0; block != NULL && i < json_array_get_length(block); i++) {
		JsonObject *disk = view_element(block, i);
		const char *name = view_string(disk, "name");
		g_autofree char *item = name != NULL ? g_strdup(name) : g_strdup_printf("[%u]", i);

		csv_members(out, guest, "block", item, disk, disk_members);
		csv_strv(out, guest, "block", item, disk, "schedulers");
	}
	for (guint i = 0; net != NULL && i < json_array_get_length(net); i++) {
		JsonObject *nic = view_element(net, i);
		const char *name = view_string(nic, "name");
		g_autofree char *item = name != NULL ? g_strdup(name) : g_strdup_printf("[%u]", i);

		csv_members(out, guest, "net", item, nic, nic_members);
	}
	csv_members(out, guest, "os", "", view_object(facts, "os"), os_members);
	csv_members(out, guest, "agent", "", facts,
	            (const char *const[]){ "s:agent_version", NULL });
}
