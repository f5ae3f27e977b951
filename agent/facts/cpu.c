/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <string.h>
#include <sys/utsname.h>

#if defined(__aarch64__)
#include <sys/auxv.h>
#endif

#include "cpu-x86.h"
#include "gb-isa.h"
#include "util.h"

#define CPUINFO_PATH "/proc/cpuinfo"
/* A sysfs attribute is at most a page: anything longer is not the kernel's. */
#define CPU_SYSFS_PAGE 4096

/* What /proc/cpuinfo says: the first value of each key, and the processor count. */
typedef struct {
	GHashTable *first; /* key -> value of its first occurrence */
	guint processors;
} CpuInfo;

static void cpu_info_clear(CpuInfo *info)
{
	g_clear_pointer(&info->first, g_hash_table_unref);
}

G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC(CpuInfo, cpu_info_clear)

static void cpu_info_parse(CpuInfo *info, const char *text)
{
	g_auto(GStrv) lines = g_strsplit(text, "\n", -1);

	info->first = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
	info->processors = 0;
	for (guint i = 0; lines[i] != NULL; i++) {
		const char *colon = strchr(lines[i], ':');
		g_autofree char *key = NULL;
		g_autofree char *value = NULL;

		if (colon == NULL)
			continue;
		key = g_strstrip(g_strndup(lines[i], colon - lines[i]));
		value = g_strstrip(g_strdup(colon + 1));
		if (g_strcmp0(key, "processor") == 0) {
			gint64 id = 0;
			/* Old ARM kernels also have "Processor : ARMv7 ...": not a CPU entry. */
			if (agent_facts_parse_int(value, 0, G_MAXINT32, &id, NULL))
				info->processors++;
		}
		if (!g_hash_table_contains(info->first, key))
			g_hash_table_insert(info->first, g_steal_pointer(&key),
			                    g_steal_pointer(&value));
	}
}

static const char *cpu_info_get(CpuInfo *info, const char *key)
{
	if (info->first == NULL)
		return NULL;
	return g_hash_table_lookup(info->first, key);
}

/* The DMI strings a hypervisor's firmware sets, for guests without CPUID. */
static const char *cpu_dmi_vendor(const char *sys_vendor, const char *product)
{
	/* "KVM" (old x86 QEMU), "KVM Virtual Machine" (arm64 virt under KVM). */
	if (product != NULL && g_str_has_prefix(product, "KVM"))
		return "KVM";
	if (g_strcmp0(sys_vendor, "QEMU") == 0)
		return "QEMU";
	if (g_strcmp0(sys_vendor, "Microsoft Corporation") == 0 &&
	    g_strcmp0(product, "Virtual Machine") == 0)
		return "Microsoft Hv";
	if (g_strcmp0(sys_vendor, "VMware, Inc.") == 0)
		return "VMware";
	if (g_strcmp0(sys_vendor, "Xen") == 0)
		return "Xen";
	if (g_strcmp0(product, "VirtualBox") == 0)
		return "VirtualBox";
	if (sys_vendor != NULL && g_str_has_prefix(sys_vendor, "Parallels"))
		return "Parallels";
	if (g_strcmp0(product, "BHYVE") == 0)
		return "bhyve";
	/* EC2's Nitro instances (its hypervisor is KVM-based); "*.metal" ones have none */
	if (g_strcmp0(sys_vendor, "Amazon EC2") == 0 && product != NULL &&
	    !g_str_has_suffix(product, ".metal"))
		return "Amazon EC2";
	return NULL;
}

static void cpu_hypervisor_from_dmi(AgentFactsContext *ctx, CpuHypervisor *hv)
{
	g_autofree char *sys_vendor =
	    agent_facts_read_line(ctx->sysroot, "/sys/class/dmi/id/sys_vendor", NULL);
	g_autofree char *product =
	    agent_facts_read_line(ctx->sysroot, "/sys/class/dmi/id/product_name", NULL);
	const char *vendor = cpu_dmi_vendor(sys_vendor, product);

	if (vendor == NULL)
		return;
	hv->present = TRUE;
	hv->vendor = vendor;
	hv->source = "dmi";
}

#define CPU_DT_BASE "/sys/firmware/devicetree/base"

/* A device-tree "compatible" property: NUL-separated strings; NULL unless each is a token. */
static char **cpu_dt_compatible(AgentFactsContext *ctx, const char *path)
{
	g_autoptr(GBytes) bytes = agent_facts_read_bytes(ctx->sysroot, path, NULL);
	g_autoptr(GStrvBuilder) builder = g_strv_builder_new();
	const char *data;
	gsize size = 0;
	gsize start = 0;

	if (bytes == NULL)
		return NULL;
	data = g_bytes_get_data(bytes, &size);
	/* a property is a few strings; a page is far more than any real one */
	if (size == 0 || size > CPU_SYSFS_PAGE || data[size - 1] != '\0')
		return NULL;
	for (gsize i = 0; i < size; i++) {
		g_autofree char *entry = NULL;
		if (data[i] != '\0')
			continue;
		entry = g_strndup(data + start, i - start);
		if (!agent_facts_is_token(entry))
			return NULL;
		g_strv_builder_add(builder, entry);
		start = i + 1;
	}
	return g_strv_builder_end(builder);
}

/*
 * Without CPUID (arm64) and without DMI (a device-tree boot): the tree's
 * hypervisor node (Xen puts one there), /sys/hypervisor/type, and QEMU's virt
 * board, whose root is "linux,dummy-virt". That last one proves a QEMU virt
 * machine, not which accelerator (KVM or TCG) runs it.
 */
static void cpu_hypervisor_from_devicetree(AgentFactsContext *ctx, CpuHypervisor *hv)
{
	g_auto(GStrv) node = cpu_dt_compatible(ctx, CPU_DT_BASE "/hypervisor/compatible");
	g_auto(GStrv) root = NULL;
	g_autofree char *type = NULL;

	if (node != NULL && node[0] != NULL) {
		hv->present = TRUE;
		hv->source = "device-tree";
		if (g_str_has_prefix(node[0], "xen,")) {
			hv->vendor = "Xen";
		} else {
			hv->name = g_strdup(node[0]);
			hv->vendor = hv->name;
		}
		return;
	}
	type = agent_facts_read_line(ctx->sysroot, "/sys/hypervisor/type", NULL);
	if (type != NULL && agent_facts_is_token(type)) {
		hv->present = TRUE;
		hv->source = "sysfs";
		if (g_ascii_strcasecmp(type, "xen") == 0) {
			hv->vendor = "Xen";
		} else {
			hv->name = g_steal_pointer(&type);
			hv->vendor = hv->name;
		}
		return;
	}
	root = cpu_dt_compatible(ctx, CPU_DT_BASE "/compatible");
	if (root != NULL && g_strv_contains((const char *const *)root, "linux,dummy-virt")) {
		hv->present = TRUE;
		hv->vendor = "QEMU";
		hv->source = "device-tree";
	}
}

static gboolean cpu_flags_have(char **flags, const char *flag)
{
	return flags != NULL && g_strv_contains((const char *const *)flags, flag);
}

/*
 * Which hypervisor interface the guest kernel took. The kernel logs it
 * ("Hypervisor detected: ...") but the log is not readable here, so only what
 * it left in sysfs decides: /sys/hypervisor/type (Xen) or a paravirtual
 * clocksource in use; otherwise the vendor is null and the evidence says why.
 */
static void cpu_add_hypervisor_kernel(AgentFactsContext *ctx, JsonBuilder *builder,
                                      gboolean present)
{
	static const struct {
		const char *clocksource;
		const char *vendor;
	} paravirt[] = {
		{ "kvm-clock", "KVM" },
		{ "hyperv_clocksource_tsc_page", "Microsoft Hv" },
		{ "hyperv_clocksource_msr", "Microsoft Hv" },
		{ "xen", "Xen" },
	};
	g_autofree char *type = agent_facts_read_line(ctx->sysroot, "/sys/hypervisor/type", NULL);
	g_autofree char *clock = agent_facts_read_line(
	    ctx->sysroot, "/sys/devices/system/clocksource/clocksource0/current_clocksource", NULL);
	g_autofree char *evidence = NULL;
	const char *vendor = NULL;

	if (type != NULL && g_ascii_strcasecmp(type, "xen") == 0) {
		vendor = "Xen";
		evidence = g_strdup("/sys/hypervisor/type: xen");
	}
	for (guint i = 0; vendor == NULL && clock != NULL && i < G_N_ELEMENTS(paravirt); i++) {
		if (g_strcmp0(clock, paravirt[i].clocksource) == 0) {
			vendor = paravirt[i].vendor;
			evidence = g_strdup_printf("clocksource %s", clock);
		}
	}
	if (vendor == NULL && !present)
		evidence = g_strdup("no hypervisor");
	else if (vendor == NULL && type != NULL && agent_facts_is_token(type))
		evidence = g_strdup_printf(
		    "unknown: /sys/hypervisor/type says %s, and clocksource "
		    "%s is not paravirtual",
		    type, clock != NULL && agent_facts_is_token(clock) ? clock : "(none)");
	else if (vendor == NULL && clock != NULL && agent_facts_is_token(clock))
		evidence =
		    g_strdup_printf("unknown: clocksource %s is not paravirtual and there is "
		                    "no /sys/hypervisor/type",
		                    clock);
	else if (vendor == NULL)
		evidence = g_strdup("unknown: no current clocksource and no /sys/hypervisor/type");
	json_builder_set_member_name(builder, "kernel");
	json_builder_begin_object(builder);
	agent_facts_builder_add_string(builder, "vendor", vendor);
	agent_facts_builder_add_string(builder, "evidence", evidence);
	json_builder_end_object(builder);
}

static void cpu_add_hypervisor(AgentFactsContext *ctx, JsonBuilder *builder, gboolean have_cpuid,
                               char **flags)
{
	CpuHypervisor hv = { 0 };

	if (have_cpuid)
		agent_cpu_hypervisor_scan(ctx, &hv);
	/* CPUID said "hypervisor" but left the vendor leaves empty: ask the firmware. */
	if (!have_cpuid || (hv.present && hv.vendor == NULL)) {
		CpuHypervisor dmi = { 0 };
		cpu_hypervisor_from_dmi(ctx, &dmi);
		if (dmi.present) {
			hv.present = TRUE;
			hv.vendor = dmi.vendor;
			hv.source = "dmi";
		}
	}
	if (!have_cpuid && !hv.present)
		cpu_hypervisor_from_devicetree(ctx, &hv);
	if (!hv.present && !have_cpuid && cpu_flags_have(flags, "hypervisor")) {
		hv.present = TRUE;
		hv.source = "cpuinfo";
	}
	json_builder_set_member_name(builder, "hypervisor");
	json_builder_begin_object(builder);
	agent_cpu_hypervisor_write(builder, &hv, have_cpuid);
	cpu_add_hypervisor_kernel(ctx, builder, hv.present);
	json_builder_end_object(builder);
	agent_cpu_hypervisor_clear(&hv);
}

/* Armv8.x/Armv9.x from the hwcaps: a lower bound (gb-isa.h, PROTOCOL.md). */
static void cpu_add_isa_level_arm(AgentFactsContext *ctx, JsonBuilder *builder, char **flags)
{
	g_autoptr(GPtrArray) missing = NULL;
	g_autofree char *name = NULL;

	if (flags == NULL) {
		agent_facts_builder_add_string(builder, "isa_level", NULL);
		agent_facts_builder_add_string(builder, "isa_missing", NULL);
		agent_facts_add_error(ctx, "cpu.isa_level",
		                      "no Features line (hwcaps) to tell the Arm level from");
		return;
	}
	name = gb_isa_arm_level_name(gb_isa_arm_level((const char *const *)flags, &missing));
	agent_facts_builder_add_string(builder, "isa_level", name);
	json_builder_set_member_name(builder, "isa_missing");
	json_builder_begin_array(builder);
	for (guint i = 0; i < missing->len; i++)
		json_builder_add_string_value(builder, g_ptr_array_index(missing, i));
	json_builder_end_array(builder);
}

#define CPU_VULN_DIR "/sys/devices/system/cpu/vulnerabilities"

/* "32K", "1024K", "8M" or plain bytes, as cache/indexN/size says. */
static gboolean cpu_parse_cache_size(const char *text, gint64 *bytes)
{
	g_autofree char *digits = g_strdup(text);
	gsize len = strlen(digits);
	gint64 mult = 1;

	if (len > 0 &&
	    (digits[len - 1] == 'K' || digits[len - 1] == 'M' || digits[len - 1] == 'G')) {
		mult = digits[len - 1] == 'K'   ? 1024
		       : digits[len - 1] == 'M' ? 1024 * 1024
		                                : 1024 * 1024 * 1024;
		digits[len - 1] = '\0';
	}
	if (!agent_facts_parse_int(digits, 0, G_MAXINT64 / (1024 * 1024 * 1024), bytes, NULL))
		return FALSE;
	*bytes *= mult;
	return TRUE;
}

static void cpu_add_caches(AgentFactsContext *ctx, JsonBuilder *builder, guint32 cpu)
{
	g_autofree char *dir = g_strdup_printf("/sys/devices/system/cpu/cpu%u/cache", cpu);
	g_autoptr(GError) error = NULL;
	g_autoptr(GPtrArray) names = agent_facts_list_dir(ctx->sysroot, dir, &error);

	json_builder_set_member_name(builder, "caches");
	if (names == NULL) {
		json_builder_add_null_value(builder);
		agent_facts_add_error(ctx, "cpu.topology.caches", error->message);
		return;
	}
	json_builder_begin_array(builder);
	for (guint i = 0; i < names->len; i++) {
		const char *name = g_ptr_array_index(names, i);
		g_autofree char *base = g_strdup_printf("%s/%s", dir, name);
		g_autofree char *p_level = g_strdup_printf("%s/level", base);
		g_autofree char *p_type = g_strdup_printf("%s/type", base);
		g_autofree char *p_size = g_strdup_printf("%s/size", base);
		g_autofree char *p_shared = g_strdup_printf("%s/shared_cpu_list", base);
		g_autofree char *type = NULL;
		g_autofree char *size = NULL;
		g_autofree char *shared = NULL;
		g_autoptr(GArray) shared_cpus = NULL;
		gint64 level = 0, bytes = 0;

		if (!g_str_has_prefix(name, "index"))
			continue;
		json_builder_begin_object(builder);
		json_builder_set_member_name(builder, "level");
		if (agent_facts_read_int(ctx->sysroot, p_level, 0, 9, &level, NULL))
			json_builder_add_int_value(builder, level);
		else
			json_builder_add_null_value(builder);
		type = agent_facts_read_line(ctx->sysroot, p_type, NULL);
		if (type != NULL && !agent_facts_is_token(type))
			g_clear_pointer(&type, g_free);
		agent_facts_builder_add_string(builder, "type", type);
		size = agent_facts_read_line(ctx->sysroot, p_size, NULL);
		json_builder_set_member_name(builder, "size_bytes");
		if (size != NULL && cpu_parse_cache_size(size, &bytes))
			json_builder_add_int_value(builder, bytes);
		else
			json_builder_add_null_value(builder);
		shared = agent_facts_read_line(ctx->sysroot, p_shared, NULL);
		if (shared != NULL)
			shared_cpus = agent_facts_parse_cpulist(shared, NULL);
		json_builder_set_member_name(builder, "shared_by");
		if (shared_cpus != NULL && shared_cpus->len > 0)
			json_builder_add_int_value(builder, shared_cpus->len);
		else
			json_builder_add_null_value(builder);
		json_builder_end_object(builder);
		if (type == NULL || size == NULL || shared_cpus == NULL || level == 0) {
			g_autofree char *member = g_strdup_printf("cpu.topology.caches.%s", name);
			agent_facts_add_error(ctx, member,
			                      "level, type, size or shared_cpu_list "
			                      "missing or unreadable");
		}
	}
	json_builder_end_array(builder);
}

static gboolean cpu_topology_id(AgentFactsContext *ctx, guint32 cpu, const char *file, gint64 *id)
{
	g_autofree char *path =
	    g_strdup_printf("/sys/devices/system/cpu/cpu%u/topology/%s", cpu, file);
	return agent_facts_read_int(ctx->sysroot, path, -1, G_MAXINT32, id, NULL);
}

/* Sockets, dies, cores and threads as lscpu counts them: distinct ids over the online CPUs. */
static void cpu_add_topology(AgentFactsContext *ctx, JsonBuilder *builder)
{
	g_autoptr(GError) error = NULL;
	g_autofree char *online =
	    agent_facts_read_line(ctx->sysroot, "/sys/devices/system/cpu/online", &error);
	g_autoptr(GArray) cpus = online != NULL ? agent_facts_parse_cpulist(online, &error) : NULL;
	g_autoptr(GHashTable) sockets = g_hash_table_new(g_int64_hash, g_int64_equal);
	g_autoptr(GHashTable) dies = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
	g_autoptr(GHashTable) cores = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
	g_autoptr(GArray) keys = g_array_new(FALSE, FALSE, sizeof(gint64));
	gboolean ids_ok = TRUE;

	json_builder_set_member_name(builder, "topology");
	if (cpus == NULL || cpus->len == 0) {
		json_builder_add_null_value(builder);
		agent_facts_add_error(ctx, "cpu.topology",
		                      error != NULL ? error->message
		                                    : "/sys/devices/system/cpu/online: empty");
		return;
	}
	g_array_set_size(keys, cpus->len);
	for (guint i = 0; i < cpus->len && ids_ok; i++) {
		guint32 cpu = g_array_index(cpus, guint32, i);
		gint64 pkg = 0, die = 0, core = 0;

		ids_ok = cpu_topology_id(ctx, cpu, "physical_package_id", &pkg) &&
		         cpu_topology_id(ctx, cpu, "core_id", &core);
		/* die_id came with Linux 5.2; older kernels have one die per socket. */
		if (!cpu_topology_id(ctx, cpu, "die_id", &die))
			die = 0;
		g_array_index(keys, gint64, i) = pkg;
		g_hash_table_add(sockets, &g_array_index(keys, gint64, i));
		g_hash_table_add(
		    dies, g_strdup_printf("%" G_GINT64_FORMAT ":%" G_GINT64_FORMAT, pkg, die));
		g_hash_table_add(cores, g_strdup_printf("%" G_GINT64_FORMAT ":%" G_GINT64_FORMAT
		                                        ":%" G_GINT64_FORMAT,
		                                        pkg, die, core));
	}
	json_builder_begin_object(builder);
	if (!ids_ok)
		agent_facts_add_error(ctx, "cpu.topology.sockets",
		                      "cpuN/topology/physical_package_id or core_id unreadable");
	agent_facts_builder_add_int_or_null(builder, "cpus", TRUE, cpus->len);
	agent_facts_builder_add_int_or_null(builder, "sockets", ids_ok, g_hash_table_size(sockets));
	agent_facts_builder_add_int_or_null(builder, "dies", ids_ok, g_hash_table_size(dies));
	agent_facts_builder_add_int_or_null(
	    builder, "cores_per_socket", ids_ok,
	    ids_ok ? g_hash_table_size(cores) / g_hash_table_size(sockets) : 0);
	agent_facts_builder_add_int_or_null(builder, "threads_per_core", ids_ok,
	                                    ids_ok ? cpus->len / g_hash_table_size(cores) : 0);
	cpu_add_caches(ctx, builder, g_array_index(cpus, guint32, 0));
	json_builder_end_object(builder);
}

/* Each file of the directory as name -> the kernel's text (its line, trimmed). */
static void cpu_add_vulnerabilities(AgentFactsContext *ctx, JsonBuilder *builder)
{
	g_autoptr(GError) error = NULL;
	g_autoptr(GPtrArray) names = agent_facts_list_dir(ctx->sysroot, CPU_VULN_DIR, &error);

	json_builder_set_member_name(builder, "vulnerabilities");
	if (names == NULL) {
		json_builder_add_null_value(builder);
		agent_facts_add_error(ctx, "cpu.vulnerabilities", error->message);
		return;
	}
	json_builder_begin_object(builder);
	for (guint i = 0; i < names->len; i++) {
		const char *name = g_ptr_array_index(names, i);
		g_autofree char *path = g_strdup_printf(CPU_VULN_DIR "/%s", name);
		g_autoptr(GError) error_file = NULL;
		g_autofree char *text = NULL;

		if (!agent_facts_is_token(name))
			continue;
		text = agent_facts_read_line(ctx->sysroot, path, &error_file);
		if (text != NULL && strlen(text) > CPU_SYSFS_PAGE) {
			g_clear_pointer(&text, g_free);
			g_set_error(&error_file, GB_ERROR, GB_ERROR_PARSE,
			            "%s: longer than a sysfs page (%d bytes)", path,
			            CPU_SYSFS_PAGE);
		} else if (text != NULL && strchr(text, '\n') != NULL) {
			g_clear_pointer(&text, g_free);
			g_set_error(&error_file, GB_ERROR, GB_ERROR_PARSE, "%s: more than one line",
			            path);
		}
		agent_facts_builder_add_string(builder, name, text);
		if (text == NULL) {
			g_autofree char *member = g_strdup_printf("cpu.vulnerabilities.%s", name);
			agent_facts_add_error(ctx, member, error_file->message);
		}
	}
	json_builder_end_object(builder);
}

/* MIDR_EL1 as arm64 /proc/cpuinfo spells it, or as sysfs gives the register. */
typedef struct {
	gboolean present;
	guint implementer; /* [31:24] */
	guint variant;     /* [23:20] */
	guint part;        /* [15:4] */
	guint revision;    /* [3:0] */
	const char *source;
} CpuMidr;

#define CPU_MIDR_PATH "/sys/devices/system/cpu/cpu0/regs/identification/midr_el1"

/* Implementer codes (arch/arm64/include/asm/cputype.h). */
static const struct {
	guint code;
	const char *name;
} cpu_arm_implementers[] = {
	{ 0x41, "ARM" },       { 0x42, "Broadcom" }, { 0x43, "Cavium" }, { 0x46, "Fujitsu" },
	{ 0x48, "HiSilicon" }, { 0x4e, "NVIDIA" },   { 0x50, "APM" },    { 0x51, "Qualcomm" },
	{ 0x61, "Apple" },     { 0xc0, "Ampere" },
};

/* Part names as lscpu prints them (util-linux sys-utils/lscpu-arm.c). */
static const struct {
	guint implementer;
	guint part;
	const char *name;
} cpu_arm_parts[] = {
	/* implementer 0 is reserved for software: QEMU's TCG "max" CPU says 'Q' */
	{ 0x00, 0x051, "QEMU max" },       { 0x41, 0xd03, "Cortex-A53" },
	{ 0x41, 0xd04, "Cortex-A35" },     { 0x41, 0xd05, "Cortex-A55" },
	{ 0x41, 0xd07, "Cortex-A57" },     { 0x41, 0xd08, "Cortex-A72" },
	{ 0x41, 0xd09, "Cortex-A73" },     { 0x41, 0xd0a, "Cortex-A75" },
	{ 0x41, 0xd0b, "Cortex-A76" },     { 0x41, 0xd0c, "Neoverse-N1" },
	{ 0x41, 0xd0d, "Cortex-A77" },     { 0x41, 0xd40, "Neoverse-V1" },
	{ 0x41, 0xd41, "Cortex-A78" },     { 0x41, 0xd44, "Cortex-X1" },
	{ 0x41, 0xd46, "Cortex-A510" },    { 0x41, 0xd47, "Cortex-A710" },
	{ 0x41, 0xd48, "Cortex-X2" },      { 0x41, 0xd49, "Neoverse-N2" },
	{ 0x41, 0xd4a, "Neoverse-E1" },    { 0x41, 0xd4f, "Neoverse-V2" },
	{ 0x41, 0xd84, "Neoverse-V3" },    { 0x41, 0xd8e, "Neoverse-N3" },
	{ 0x43, 0x0a1, "ThunderX 88XX" },  { 0x43, 0x0af, "ThunderX2 99xx" },
	{ 0x46, 0x001, "A64FX" },          { 0x48, 0xd01, "Kunpeng-920" },
	{ 0x4e, 0x004, "Carmel" },         { 0x50, 0x000, "X-Gene" },
	{ 0x51, 0x800, "Falkor V1/Kryo" }, { 0x51, 0x801, "Kryo V2" },
	{ 0x51, 0x802, "Kryo 3XX Gold" },  { 0x51, 0x803, "Kryo 3XX Silver" },
	{ 0x51, 0x804, "Kryo 4XX Gold" },  { 0x51, 0x805, "Kryo 4XX Silver" },
	{ 0x51, 0xc00, "Falkor" },         { 0x51, 0xc01, "Saphira" },
	{ 0x61, 0x022, "M1 Icestorm" },    { 0x61, 0x023, "M1 Firestorm" },
	{ 0x61, 0x032, "M2 Blizzard" },    { 0x61, 0x033, "M2 Avalanche" },
	{ 0xc0, 0xac3, "Ampere-1" },       { 0xc0, 0xac4, "Ampere-1a" },
};

/* The implementer's name, else its code as the kernel prints it ("0x99"). */
static char *cpu_arm_vendor(const CpuMidr *midr)
{
	for (guint i = 0; i < G_N_ELEMENTS(cpu_arm_implementers); i++) {
		if (cpu_arm_implementers[i].code == midr->implementer)
			return g_strdup(cpu_arm_implementers[i].name);
	}
	return g_strdup_printf("0x%02x", midr->implementer);
}

/* The part's name, else "VENDOR part 0xNNN". */
static char *cpu_arm_model(const CpuMidr *midr)
{
	g_autofree char *vendor = NULL;

	for (guint i = 0; i < G_N_ELEMENTS(cpu_arm_parts); i++) {
		if (cpu_arm_parts[i].implementer == midr->implementer &&
		    cpu_arm_parts[i].part == midr->part)
			return g_strdup(cpu_arm_parts[i].name);
	}
	vendor = cpu_arm_vendor(midr);
	return g_strdup_printf("%s part 0x%03x", vendor, midr->part);
}

/* "0x" and 1..8 hex digits, at most max. */
static gboolean cpu_parse_hex(const char *text, guint64 max, guint64 *out)
{
	if (text == NULL || !g_str_has_prefix(text, "0x") || strlen(text) < 3 ||
	    strlen(text) > 2 + 16)
		return FALSE;
	return g_ascii_string_to_unsigned(text + 2, 16, 0, max, out, NULL);
}

static gboolean cpu_midr_from_cpuinfo(CpuInfo *info, CpuMidr *midr, GError **error)
{
	static const struct {
		const char *key;
		guint64 max;
		gboolean decimal; /* the kernel prints the revision with %d */
	} fields[] = {
		{ "CPU implementer", 0xff, FALSE },
		{ "CPU variant", 0xf, FALSE },
		{ "CPU part", 0xfff, FALSE },
		{ "CPU revision", 0xf, TRUE },
	};
	guint64 values[G_N_ELEMENTS(fields)] = { 0 };

	for (guint i = 0; i < G_N_ELEMENTS(fields); i++) {
		const char *text = cpu_info_get(info, fields[i].key);
		gboolean ok =
		    text != NULL &&
		    (fields[i].decimal
		         ? g_ascii_string_to_unsigned(text, 10, 0, fields[i].max, &values[i], NULL)
		         : cpu_parse_hex(text, fields[i].max, &values[i]));
		if (text == NULL) {
			g_set_error(error, GB_ERROR, GB_ERROR_PARSE, CPUINFO_PATH ": no '%s' line",
			            fields[i].key);
			return FALSE;
		}
		if (!ok) {
			g_autofree char *shown = g_strescape(text, NULL);
			if (strlen(shown) > 64)
				shown[64] = '\0';
			g_set_error(
			    error, GB_ERROR, GB_ERROR_PARSE,
			    CPUINFO_PATH ": '%s' is not %s up to 0x%" G_GINT64_MODIFIER "x: '%s'",
			    fields[i].key, fields[i].decimal ? "a number" : "a 0x hex number",
			    fields[i].max, shown);
			return FALSE;
		}
	}
	midr->present = TRUE;
	midr->implementer = (guint)values[0];
	midr->variant = (guint)values[1];
	midr->part = (guint)values[2];
	midr->revision = (guint)values[3];
	midr->source = "cpuinfo";
	return TRUE;
}

/* The register as sysfs shows it: "0x00000000410fd0c1" (the upper half is RES0). */
static gboolean cpu_midr_from_sysfs(AgentFactsContext *ctx, CpuMidr *midr, GError **error)
{
	g_autofree char *text = agent_facts_read_line(ctx->sysroot, CPU_MIDR_PATH, error);
	guint64 value = 0;

	if (text == NULL)
		return FALSE;
	if (!cpu_parse_hex(text, G_MAXUINT32, &value)) {
		g_autofree char *shown = g_strescape(text, NULL);
		if (strlen(shown) > 64)
			shown[64] = '\0';
		g_set_error(error, GB_ERROR, GB_ERROR_PARSE,
		            CPU_MIDR_PATH ": not a 32-bit register in 0x hex: '%s'", shown);
		return FALSE;
	}
	midr->present = TRUE;
	midr->implementer = (guint)(value >> 24) & 0xff;
	midr->variant = (guint)(value >> 20) & 0xf;
	midr->part = (guint)(value >> 4) & 0xfff;
	midr->revision = (guint)value & 0xf;
	midr->source = "midr_el1";
	return TRUE;
}

/* cpuinfo first (what lscpu reads), the sysfs register when cpuinfo has no usable lines. */
static void cpu_midr_read(AgentFactsContext *ctx, CpuInfo *info, CpuMidr *midr)
{
	g_autoptr(GError) error_info = NULL;
	g_autoptr(GError) error_sysfs = NULL;
	g_autofree char *reason = NULL;

	if (cpu_midr_from_cpuinfo(info, midr, &error_info) ||
	    cpu_midr_from_sysfs(ctx, midr, &error_sysfs))
		return;
	reason = g_strdup_printf("%s; %s", error_info->message, error_sysfs->message);
	agent_facts_add_error(ctx, "cpu.midr", reason);
}

static void cpu_add_midr(JsonBuilder *builder, const CpuMidr *midr)
{
	g_autofree char *implementer = NULL;
	g_autofree char *variant = NULL;
	g_autofree char *part = NULL;

	json_builder_set_member_name(builder, "midr");
	if (!midr->present) {
		json_builder_add_null_value(builder);
		return;
	}
	implementer = g_strdup_printf("0x%02x", midr->implementer);
	variant = g_strdup_printf("0x%x", midr->variant);
	part = g_strdup_printf("0x%03x", midr->part);
	json_builder_begin_object(builder);
	agent_facts_builder_add_string(builder, "implementer", implementer);
	agent_facts_builder_add_string(builder, "variant", variant);
	agent_facts_builder_add_string(builder, "part", part);
	json_builder_set_member_name(builder, "revision");
	json_builder_add_int_value(builder, midr->revision);
	agent_facts_builder_add_string(builder, "source", midr->source);
	json_builder_end_object(builder);
}

static char **cpu_flags_from_hwcap(void)
{
#if defined(__aarch64__)
	/* Bit order of arch/arm64/include/uapi/asm/hwcap.h. */
	static const char *const names[] = {
		"fp",      "asimd", "evtstrm", "aes",   "pmull",    "sha1",   "sha2", "crc32",
		"atomics", "fphp",  "asimdhp", "cpuid", "asimdrdm", "jscvt",  "fcma", "lrcpc",
		"dcpop",   "sha3",  "sm3",     "sm4",   "asimddp",  "sha512", "sve",  "asimdfhm",
		"dit",     "uscat", "ilrcpc",  "flagm", "ssbs",     "sb",     "paca", "pacg",
	};
	unsigned long hwcap = getauxval(AT_HWCAP);
	g_autoptr(GStrvBuilder) builder = g_strv_builder_new();

	for (guint i = 0; i < G_N_ELEMENTS(names); i++) {
		if (hwcap & (1UL << i))
			g_strv_builder_add(builder, names[i]);
	}
	return g_strv_builder_end(builder);
#else
	return NULL;
#endif
}

static char **cpu_split_flags(const char *value)
{
	g_auto(GStrv) tokens = g_strsplit_set(value, " \t", -1);
	g_autoptr(GStrvBuilder) builder = g_strv_builder_new();

	for (guint i = 0; tokens[i] != NULL; i++) {
		if (tokens[i][0] == '\0')
			continue;
		if (!agent_facts_is_token(tokens[i]))
			return NULL;
		g_strv_builder_add(builder, tokens[i]);
	}
	return g_strv_builder_end(builder);
}

static char *cpu_architecture(AgentFactsContext *ctx, CpuInfo *info, gboolean have_info)
{
	g_autofree char *arch = agent_facts_read_line(ctx->sysroot, "/proc/sys/kernel/arch", NULL);
	struct utsname uts;

	if (arch != NULL && agent_facts_is_token(arch))
		return g_steal_pointer(&arch);
	if (g_strcmp0(ctx->sysroot, "/") == 0 && uname(&uts) == 0)
		return g_strdup(uts.machine);
	if (!have_info)
		return NULL;
	/* Older kernels have no kernel.arch: tell from the shape of cpuinfo. */
	if (cpu_info_get(info, "flags") != NULL) {
		g_auto(GStrv) flags = cpu_split_flags(cpu_info_get(info, "flags"));
		return g_strdup(cpu_flags_have(flags, "lm") ? "x86_64" : "i686");
	}
	if (cpu_info_get(info, "CPU implementer") != NULL)
		return g_strdup("aarch64");
	return NULL;
}

static gboolean cpu_count_from_sysfs(AgentFactsContext *ctx, guint *count, GError **error)
{
	g_autofree char *text =
	    agent_facts_read_line(ctx->sysroot, "/sys/devices/system/cpu/online", error);
	g_autoptr(GArray) cpus = NULL;

	if (text == NULL)
		return FALSE;
	cpus = agent_facts_parse_cpulist(text, error);
	if (cpus == NULL) {
		g_prefix_error(error, "/sys/devices/system/cpu/online: ");
		return FALSE;
	}
	if (cpus->len == 0) {
		g_set_error_literal(error, GB_ERROR, GB_ERROR_PARSE,
		                    "/sys/devices/system/cpu/online: empty");
		return FALSE;
	}
	*count = cpus->len;
	return TRUE;
}

static void cpu_add_info_string(AgentFactsContext *ctx, JsonBuilder *builder, const char *member,
                                const char *value, const char *what, const char *info_error)
{
	g_autofree char *err_member = g_strdup_printf("cpu.%s", member);

	agent_facts_builder_add_string(builder, member, value);
	if (value != NULL)
		return;
	if (info_error != NULL) {
		agent_facts_add_error(ctx, err_member, info_error);
	} else {
		g_autofree char *reason = g_strdup_printf(CPUINFO_PATH ": no '%s' line", what);
		agent_facts_add_error(ctx, err_member, reason);
	}
}

JsonNode *agent_facts_collect_cpu(AgentFactsContext *ctx)
{
	g_autoptr(JsonBuilder) builder = json_builder_new();
	g_autoptr(GError) error_info = NULL;
	g_autofree char *text = agent_facts_read_text(ctx->sysroot, CPUINFO_PATH, &error_info);
	g_auto(CpuInfo) info = { 0 };
	g_autofree char *arch = NULL;
	g_autofree char *model = NULL;
	g_auto(GStrv) flags = NULL;
	const char *info_reason = NULL;
	g_autofree char *vendor = NULL;
	const char *flags_raw = NULL;
	guint32 regs[4] = { 0 };
	gboolean have_cpuid;
	gboolean arm;
	CpuMidr midr = { 0 };
	guint count = 0;

	if (text != NULL)
		cpu_info_parse(&info, text);
	else
		info_reason = error_info->message;
	have_cpuid = agent_facts_cpuid(ctx, 0, 0, regs);

	json_builder_begin_object(builder);

	arch = cpu_architecture(ctx, &info, text != NULL);
	agent_facts_builder_add_string(builder, "architecture", arch);
	if (arch == NULL)
		agent_facts_add_error(ctx, "cpu.architecture",
		                      "no /proc/sys/kernel/arch and nothing in " CPUINFO_PATH
		                      " tells the architecture");

	/* arm64 names its CPU only by MIDR_EL1 codes: no "model name", no "vendor_id" */
	arm = g_strcmp0(arch, "aarch64") == 0 || cpu_info_get(&info, "CPU implementer") != NULL;
	if (arm)
		cpu_midr_read(ctx, &info, &midr);

	model = g_strdup(cpu_info_get(&info, "model name"));
	if (model == NULL && midr.present)
		model = cpu_arm_model(&midr);
	if (model != NULL && model[0] == '\0')
		g_clear_pointer(&model, g_free);
	if (arm && !midr.present && info_reason == NULL)
		info_reason = "no MIDR_EL1 to name the CPU from (see cpu.midr)";
	cpu_add_info_string(ctx, builder, "model_name", model, "model name", info_reason);

	vendor = g_strdup(cpu_info_get(&info, "vendor_id"));
	if (vendor == NULL && midr.present)
		vendor = cpu_arm_vendor(&midr);
	if (vendor != NULL && vendor[0] == '\0')
		g_clear_pointer(&vendor, g_free);
	cpu_add_info_string(ctx, builder, "vendor", vendor, "vendor_id", info_reason);
	cpu_add_midr(builder, &midr);

	json_builder_set_member_name(builder, "count");
	if (info.processors > 0) {
		count = info.processors;
	} else {
		g_autoptr(GError) error_local = NULL;
		if (!cpu_count_from_sysfs(ctx, &count, &error_local))
			agent_facts_add_error(ctx, "cpu.count", error_local->message);
	}
	if (count > 0)
		json_builder_add_int_value(builder, count);
	else
		json_builder_add_null_value(builder);

	/* x86 says "flags", arm64 "Features"; both list the first CPU's. */
	flags_raw = cpu_info_get(&info, "flags");
	if (flags_raw == NULL)
		flags_raw = cpu_info_get(&info, "Features");
	if (flags_raw != NULL) {
		flags = cpu_split_flags(flags_raw);
		if (flags == NULL)
			agent_facts_add_error(ctx, "cpu.flags",
			                      CPUINFO_PATH ": flags hold non-printable bytes");
	} else if (g_strcmp0(ctx->sysroot, "/") == 0) {
		flags = cpu_flags_from_hwcap();
	}
	if (flags == NULL && flags_raw == NULL)
		agent_facts_add_error(ctx, "cpu.flags",
		                      text == NULL ? error_info->message
		                      : arm        ? CPUINFO_PATH ": no 'Features' line"
		                                   : CPUINFO_PATH ": no 'flags' line");
	agent_facts_builder_add_strv(builder, "flags", flags);

	cpu_add_hypervisor(ctx, builder, have_cpuid, flags);
	agent_cpu_add_cpuid(ctx, builder);
	if (arm && !have_cpuid)
		cpu_add_isa_level_arm(ctx, builder, flags);
	else
		agent_cpu_add_isa_level(ctx, builder);
	cpu_add_vulnerabilities(ctx, builder);
	cpu_add_topology(ctx, builder);

	json_builder_end_object(builder);
	return json_builder_get_root(builder);
}
