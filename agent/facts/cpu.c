/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <string.h>
#include <sys/utsname.h>

#if defined(__aarch64__)
#include <sys/auxv.h>
#endif

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
	json_builder_end_object(builder);
	g_free(hv.raw);
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

	json_builder_end_object(builder);
	return json_builder_get_root(builder);
}
