/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <string.h>
#include <sys/utsname.h>

#if defined(__aarch64__)
#include <sys/auxv.h>
#endif

#include "gb-isa.h"
#include "util.h"

#define CPUINFO_PATH "/proc/cpuinfo"

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

/* Renders a 12-byte CPUID signature; trailing NULs dropped, non-printables as \xNN. */
static char *cpu_signature_escape(const char sig[12])
{
	g_autoptr(GString) str = g_string_new(NULL);
	guint len = 12;

	while (len > 0 && sig[len - 1] == '\0')
		len--;
	for (guint i = 0; i < len; i++) {
		guchar c = (guchar)sig[i];
		if (c >= 0x20 && c < 0x7f && c != '\\')
			g_string_append_c(str, (char)c);
		else
			g_string_append_printf(str, "\\x%02x", c);
	}
	return g_string_free(g_steal_pointer(&str), FALSE);
}

static const char *cpu_signature_vendor(const char sig[12])
{
	struct {
		const char *sig;
		const char *vendor;
	} known[] = {
		{ "KVMKVMKVM\0\0\0", "KVM" },       { "TCGTCGTCGTCG", "TCG" },
		{ "Microsoft Hv", "Microsoft Hv" }, { "VMwareVMware", "VMware" },
		{ "XenVMMXenVMM", "Xen" },          { "bhyve bhyve ", "bhyve" },
		{ " lrpepyh  vr", "Parallels" },    { " lrpepyh vr\0", "Parallels" },
		{ "VBoxVBoxVBox", "VirtualBox" },   { "ACRNACRNACRN", "ACRN" },
		{ " QNXQVMBSQG ", "QNX" },
	};
	for (guint i = 0; i < G_N_ELEMENTS(known); i++) {
		if (memcmp(sig, known[i].sig, 12) == 0)
			return known[i].vendor;
	}
	return NULL;
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
	return NULL;
}

static void cpu_regs_to_signature(const guint32 regs[4], char sig[12])
{
	memcpy(sig, &regs[1], 4);
	memcpy(sig + 4, &regs[2], 4);
	memcpy(sig + 8, &regs[3], 4);
}

typedef struct {
	gboolean present;
	const char *vendor; /* static string, or raw_vendor */
	char *raw;          /* escaped signature */
	const char *source;
	/* Each non-empty leaf as three strings: "0x4000XX00", escaped signature, vendor or "". */
	GPtrArray *leaves;
} CpuHypervisor;

static void cpu_hypervisor_from_cpuid(AgentFactsContext *ctx, CpuHypervisor *hv)
{
	char sig[12];
	guint32 regs[4] = { 0 };
	gboolean any = FALSE;

	hv->source = "cpuid";
	if (!agent_facts_cpuid(ctx, 1, 0, regs))
		return;
	hv->present = (regs[2] >> 31) & 1;
	if (!hv->present)
		return;
	/* Several hypervisors stack interfaces (KVM with Hyper-V enlightenments
	 * shows "Microsoft Hv" first): the highest known leaf names the host. */
	for (guint32 base = 0x40000000; base <= 0x4000FF00; base += 0x100) {
		const char *vendor;
		memset(regs, 0, sizeof(guint32) * 4);
		if (!agent_facts_cpuid(ctx, base, 0, regs))
			break;
		cpu_regs_to_signature(regs, sig);
		vendor = cpu_signature_vendor(sig);
		/* A hypervisor's leaf says in EAX how far its own range goes; past the
		 * range some CPUs (TCG's max model) repeat other leaves' data. */
		if (regs[0] >= base && regs[0] <= base + 0xff &&
		    memcmp(sig, "\0\0\0\0\0\0\0\0\0\0\0\0", 12) != 0) {
			g_autofree char *esc = cpu_signature_escape(sig);
			if (hv->leaves == NULL)
				hv->leaves = g_ptr_array_new_with_free_func(g_free);
			g_ptr_array_add(hv->leaves, g_strdup_printf("0x%08x", base));
			g_ptr_array_add(hv->leaves, g_steal_pointer(&esc));
			g_ptr_array_add(hv->leaves, g_strdup(vendor != NULL ? vendor : ""));
		}
		if (vendor != NULL) {
			hv->vendor = vendor;
			g_free(hv->raw);
			hv->raw = cpu_signature_escape(sig);
			any = TRUE;
		}
	}
	if (any)
		return;
	memset(regs, 0, sizeof(guint32) * 4);
	if (!agent_facts_cpuid(ctx, 0x40000000, 0, regs))
		return;
	cpu_regs_to_signature(regs, sig);
	hv->raw = cpu_signature_escape(sig);
	if (hv->raw[0] == '\0')
		g_clear_pointer(&hv->raw, g_free);
	hv->vendor = hv->raw;
}

/*
 * The scan above is 256 CPUID instructions, each a VM exit: 1.5 us on an
 * idle host, far more on a busy one, which made it most of a facts request.
 * A VM's CPUID is fixed when it is created (QEMU's -cpu), live migration
 * included, so the live instruction is scanned once per process. Injected
 * CPUID (tests, fixtures) is scanned every time.
 */
static void cpu_hypervisor_scan(AgentFactsContext *ctx, CpuHypervisor *hv)
{
	static gsize once;
	static CpuHypervisor cached;

	if (ctx->cpuid != NULL) {
		cpu_hypervisor_from_cpuid(ctx, hv);
		return;
	}
	if (g_once_init_enter(&once)) {
		cpu_hypervisor_from_cpuid(ctx, &cached);
		g_once_init_leave(&once, 1);
	}
	*hv = cached;
	hv->raw = g_strdup(cached.raw);
	hv->leaves = cached.leaves != NULL
	                 ? g_ptr_array_copy(cached.leaves, (GCopyFunc)g_strdup, NULL)
	                 : NULL;
	if (cached.vendor != NULL && cached.vendor == cached.raw)
		hv->vendor = hv->raw;
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
		cpu_hypervisor_scan(ctx, &hv);
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
	if (!hv.present && !have_cpuid && cpu_flags_have(flags, "hypervisor")) {
		hv.present = TRUE;
		hv.source = "cpuinfo";
	}
	json_builder_set_member_name(builder, "hypervisor");
	json_builder_begin_object(builder);
	json_builder_set_member_name(builder, "present");
	json_builder_add_boolean_value(builder, hv.present);
	agent_facts_builder_add_string(builder, "vendor", hv.present ? hv.vendor : NULL);
	agent_facts_builder_add_string(builder, "signature", hv.present ? hv.raw : NULL);
	agent_facts_builder_add_string(builder, "source",
	                               hv.present || have_cpuid ? hv.source : NULL);
	json_builder_set_member_name(builder, "signatures");
	json_builder_begin_array(builder);
	for (guint i = 0; hv.leaves != NULL && i + 2 < hv.leaves->len; i += 3) {
		const char *vendor = g_ptr_array_index(hv.leaves, i + 2);
		json_builder_begin_object(builder);
		agent_facts_builder_add_string(builder, "leaf", g_ptr_array_index(hv.leaves, i));
		agent_facts_builder_add_string(builder, "signature",
		                               g_ptr_array_index(hv.leaves, i + 1));
		agent_facts_builder_add_string(builder, "vendor",
		                               vendor[0] != '\0' ? vendor : NULL);
		json_builder_end_object(builder);
	}
	json_builder_end_array(builder);
	cpu_add_hypervisor_kernel(ctx, builder, hv.present);
	json_builder_end_object(builder);
	g_free(hv.raw);
	g_clear_pointer(&hv.leaves, g_ptr_array_unref);
}

static void cpu_add_bit(JsonBuilder *builder, const char *name, guint32 reg, guint bit)
{
	json_builder_set_member_name(builder, name);
	json_builder_add_boolean_value(builder, (reg >> bit) & 1);
}

static void cpu_add_cpuid(AgentFactsContext *ctx, JsonBuilder *builder)
{
	guint32 l0[4] = { 0 };
	guint32 l1[4] = { 0 };
	guint32 l7[4] = { 0 };
	guint32 x0[4] = { 0 };
	guint32 x1[4] = { 0 };

	json_builder_set_member_name(builder, "cpuid");
	if (!agent_facts_cpuid(ctx, 0, 0, l0)) {
		json_builder_add_null_value(builder);
		return;
	}
	if (l0[0] >= 1)
		agent_facts_cpuid(ctx, 1, 0, l1);
	if (l0[0] >= 7)
		agent_facts_cpuid(ctx, 7, 0, l7);
	agent_facts_cpuid(ctx, 0x80000000, 0, x0);
	if (x0[0] >= 0x80000001 && x0[0] <= 0x8000ffff)
		agent_facts_cpuid(ctx, 0x80000001, 0, x1);

	json_builder_begin_object(builder);
	cpu_add_bit(builder, "hypervisor", l1[2], 31);
	cpu_add_bit(builder, "aes", l1[2], 25);
	cpu_add_bit(builder, "pclmulqdq", l1[2], 1);
	cpu_add_bit(builder, "avx", l1[2], 28);
	cpu_add_bit(builder, "avx2", l7[1], 5);
	cpu_add_bit(builder, "vaes", l7[2], 9);
	cpu_add_bit(builder, "vpclmulqdq", l7[2], 10);
	cpu_add_bit(builder, "sha", l7[1], 29);
	cpu_add_bit(builder, "vmx", l1[2], 5);
	cpu_add_bit(builder, "svm", x1[2], 2);
	json_builder_end_object(builder);
}

static gboolean cpu_cpuid_adapter(guint32 leaf, guint32 subleaf, guint32 regs[4],
                                  gpointer user_data)
{
	return agent_facts_cpuid(user_data, leaf, subleaf, regs);
}

static void cpu_add_isa_level(AgentFactsContext *ctx, JsonBuilder *builder)
{
	g_autoptr(GPtrArray) missing = NULL;
	g_autofree char *name = NULL;
	GbIsaInput in;

	if (!gb_isa_input_read(cpu_cpuid_adapter, ctx, ctx->cpuid == NULL, &in)) {
		agent_facts_builder_add_string(builder, "isa_level", NULL);
		agent_facts_builder_add_string(builder, "isa_missing", NULL);
		agent_facts_add_error(ctx, "cpu.isa_level",
		                      "no CPUID (not x86, or facts read under a sysroot)");
		return;
	}
	name = gb_isa_level_name(gb_isa_level(&in, &missing));
	agent_facts_builder_add_string(builder, "isa_level", name);
	if (name == NULL)
		agent_facts_add_error(ctx, "cpu.isa_level", "CPUID lacks the x86-64 baseline");
	json_builder_set_member_name(builder, "isa_missing");
	json_builder_begin_array(builder);
	for (guint i = 0; i < missing->len; i++)
		json_builder_add_string_value(builder, g_ptr_array_index(missing, i));
	json_builder_end_array(builder);
}

#define CPU_VULN_DIR "/sys/devices/system/cpu/vulnerabilities"
/* A sysfs attribute is at most a page: anything longer is not the kernel's. */
#define CPU_SYSFS_PAGE 4096

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

static void cpu_add_int_or_null(JsonBuilder *builder, const char *member, gboolean ok, gint64 v)
{
	json_builder_set_member_name(builder, member);
	if (ok)
		json_builder_add_int_value(builder, v);
	else
		json_builder_add_null_value(builder);
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
	cpu_add_int_or_null(builder, "cpus", TRUE, cpus->len);
	cpu_add_int_or_null(builder, "sockets", ids_ok, g_hash_table_size(sockets));
	cpu_add_int_or_null(builder, "dies", ids_ok, g_hash_table_size(dies));
	cpu_add_int_or_null(builder, "cores_per_socket", ids_ok,
	                    ids_ok ? g_hash_table_size(cores) / g_hash_table_size(sockets) : 0);
	cpu_add_int_or_null(builder, "threads_per_core", ids_ok,
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

/* CPU implementer codes of arm64 /proc/cpuinfo (arch/arm64/include/asm/cputype.h). */
static const char *cpu_arm_implementer(const char *code)
{
	struct {
		const char *code;
		const char *name;
	} known[] = {
		{ "0x41", "ARM" },     { "0x42", "Broadcom" },  { "0x43", "Cavium" },
		{ "0x46", "Fujitsu" }, { "0x48", "HiSilicon" }, { "0x4e", "NVIDIA" },
		{ "0x50", "APM" },     { "0x51", "Qualcomm" },  { "0x61", "Apple" },
		{ "0xc0", "Ampere" },
	};
	for (guint i = 0; i < G_N_ELEMENTS(known); i++) {
		if (g_ascii_strcasecmp(code, known[i].code) == 0)
			return known[i].name;
	}
	return code;
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
	const char *vendor = NULL;
	const char *flags_raw = NULL;
	guint32 regs[4] = { 0 };
	gboolean have_cpuid;
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

	model = g_strdup(cpu_info_get(&info, "model name"));
	if (model != NULL && model[0] == '\0')
		g_clear_pointer(&model, g_free);
	cpu_add_info_string(ctx, builder, "model_name", model, "model name", info_reason);

	vendor = cpu_info_get(&info, "vendor_id");
	if (vendor == NULL && cpu_info_get(&info, "CPU implementer") != NULL)
		vendor = cpu_arm_implementer(cpu_info_get(&info, "CPU implementer"));
	if (vendor != NULL && vendor[0] == '\0')
		vendor = NULL;
	cpu_add_info_string(ctx, builder, "vendor", vendor, "vendor_id", info_reason);

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
		                      info_reason != NULL ? info_reason
		                                          : CPUINFO_PATH ": no 'flags' line");
	json_builder_set_member_name(builder, "flags");
	if (flags != NULL) {
		json_builder_begin_array(builder);
		for (guint i = 0; flags[i] != NULL; i++)
			json_builder_add_string_value(builder, flags[i]);
		json_builder_end_array(builder);
	} else {
		json_builder_add_null_value(builder);
	}

	cpu_add_hypervisor(ctx, builder, have_cpuid, flags);
	cpu_add_cpuid(ctx, builder);
	cpu_add_isa_level(ctx, builder);
	cpu_add_vulnerabilities(ctx, builder);
	cpu_add_topology(ctx, builder);

	json_builder_end_object(builder);
	return json_builder_get_root(builder);
}
