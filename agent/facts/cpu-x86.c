/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What CPUID says, on every platform the agent runs on (cpu-x86.h): the
 * hypervisor leaves, the cpuid member, the x86-64 ISA level, and the flags,
 * vendor and model name a guest without /proc/cpuinfo reports from CPUID.
 */
#include <string.h>

#include "cpu-x86.h"
#include "gb-isa.h"

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

const char *agent_cpu_signature_vendor(const char sig[12])
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

static void cpu_regs_to_signature(const guint32 regs[4], char sig[12])
{
	memcpy(sig, &regs[1], 4);
	memcpy(sig + 4, &regs[2], 4);
	memcpy(sig + 8, &regs[3], 4);
}

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
		vendor = agent_cpu_signature_vendor(sig);
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
void agent_cpu_hypervisor_scan(AgentFactsContext *ctx, CpuHypervisor *hv)
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

void agent_cpu_hypervisor_write(JsonBuilder *builder, const CpuHypervisor *hv, gboolean have_cpuid)
{
	json_builder_set_member_name(builder, "present");
	json_builder_add_boolean_value(builder, hv->present);
	agent_facts_builder_add_string(builder, "vendor", hv->present ? hv->vendor : NULL);
	agent_facts_builder_add_string(builder, "signature", hv->present ? hv->raw : NULL);
	agent_facts_builder_add_string(builder, "source",
	                               hv->present || have_cpuid ? hv->source : NULL);
	json_builder_set_member_name(builder, "signatures");
	json_builder_begin_array(builder);
	for (guint i = 0; hv->leaves != NULL && i + 2 < hv->leaves->len; i += 3) {
		const char *vendor = g_ptr_array_index(hv->leaves, i + 2);
		json_builder_begin_object(builder);
		agent_facts_builder_add_string(builder, "leaf", g_ptr_array_index(hv->leaves, i));
		agent_facts_builder_add_string(builder, "signature",
		                               g_ptr_array_index(hv->leaves, i + 1));
		agent_facts_builder_add_string(builder, "vendor",
		                               vendor[0] != '\0' ? vendor : NULL);
		json_builder_end_object(builder);
	}
	json_builder_end_array(builder);
}

void agent_cpu_hypervisor_clear(CpuHypervisor *hv)
{
	g_clear_pointer(&hv->raw, g_free);
	g_clear_pointer(&hv->name, g_free);
	g_clear_pointer(&hv->leaves, g_ptr_array_unref);
}

static void cpu_add_bit(JsonBuilder *builder, const char *name, guint32 reg, guint bit)
{
	json_builder_set_member_name(builder, name);
	json_builder_add_boolean_value(builder, (reg >> bit) & 1);
}

void agent_cpu_add_cpuid(AgentFactsContext *ctx, JsonBuilder *builder)
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

void agent_cpu_add_isa_level(AgentFactsContext *ctx, JsonBuilder *builder)
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

/* One CPUID bit and the name Linux's /proc/cpuinfo gives it. */
typedef struct {
	guint32 leaf;
	guint32 subleaf;
	guint8 reg; /* 0 eax, 1 ebx, 2 ecx, 3 edx */
	guint8 bit;
	const char *name;
} CpuFlagBit;

/*
 * The bits a CPU advertises, named as Linux's cpufeatures.h names them for
 * /proc/cpuinfo (in its order), so that a guest without /proc/cpuinfo reports
 * the flags the audit and the host read. Linux's synthetic flags (what the
 * kernel infers, such as constant_tsc) and the ones it hides are not here.
 */
static const CpuFlagBit cpu_flag_bits[] = {
	{ 1, 0, 3, 0, "fpu" },
	{ 1, 0, 3, 1, "vme" },
	{ 1, 0, 3, 2, "de" },
	{ 1, 0, 3, 3, "pse" },
	{ 1, 0, 3, 4, "tsc" },
	{ 1, 0, 3, 5, "msr" },
	{ 1, 0, 3, 6, "pae" },
	{ 1, 0, 3, 7, "mce" },
	{ 1, 0, 3, 8, "cx8" },
	{ 1, 0, 3, 9, "apic" },
	{ 1, 0, 3, 11, "sep" },
	{ 1, 0, 3, 12, "mtrr" },
	{ 1, 0, 3, 13, "pge" },
	{ 1, 0, 3, 14, "mca" },
	{ 1, 0, 3, 15, "cmov" },
	{ 1, 0, 3, 16, "pat" },
	{ 1, 0, 3, 17, "pse36" },
	{ 1, 0, 3, 18, "pn" },
	{ 1, 0, 3, 19, "clflush" },
	{ 1, 0, 3, 21, "dts" },
	{ 1, 0, 3, 22, "acpi" },
	{ 1, 0, 3, 23, "mmx" },
	{ 1, 0, 3, 24, "fxsr" },
	{ 1, 0, 3, 25, "sse" },
	{ 1, 0, 3, 26, "sse2" },
	{ 1, 0, 3, 27, "ss" },
	{ 1, 0, 3, 28, "ht" },
	{ 1, 0, 3, 29, "tm" },
	{ 1, 0, 3, 30, "ia64" },
	{ 1, 0, 3, 31, "pbe" },
	{ 0x80000001, 0, 3, 11, "syscall" },
	{ 0x80000001, 0, 3, 19, "mp" },
	{ 0x80000001, 0, 3, 20, "nx" },
	{ 0x80000001, 0, 3, 22, "mmxext" },
	{ 0x80000001, 0, 3, 25, "fxsr_opt" },
	{ 0x80000001, 0, 3, 26, "pdpe1gb" },
	{ 0x80000001, 0, 3, 27, "rdtscp" },
	{ 0x80000001, 0, 3, 29, "lm" },
	{ 0x80000001, 0, 3, 30, "3dnowext" },
	{ 0x80000001, 0, 3, 31, "3dnow" },
	{ 1, 0, 2, 0, "pni" },
	{ 1, 0, 2, 1, "pclmulqdq" },
	{ 1, 0, 2, 2, "dtes64" },
	{ 1, 0, 2, 3, "monitor" },
	{ 1, 0, 2, 4, "ds_cpl" },
	{ 1, 0, 2, 5, "vmx" },
	{ 1, 0, 2, 6, "smx" },
	{ 1, 0, 2, 7, "est" },
	{ 1, 0, 2, 8, "tm2" },
	{ 1, 0, 2, 9, "ssse3" },
	{ 1, 0, 2, 10, "cid" },
	{ 1, 0, 2, 11, "sdbg" },
	{ 1, 0, 2, 12, "fma" },
	{ 1, 0, 2, 13, "cx16" },
	{ 1, 0, 2, 14, "xtpr" },
	{ 1, 0, 2, 15, "pdcm" },
	{ 1, 0, 2, 17, "pcid" },
	{ 1, 0, 2, 18, "dca" },
	{ 1, 0, 2, 19, "sse4_1" },
	{ 1, 0, 2, 20, "sse4_2" },
	{ 1, 0, 2, 21, "x2apic" },
	{ 1, 0, 2, 22, "movbe" },
	{ 1, 0, 2, 23, "popcnt" },
	{ 1, 0, 2, 24, "tsc_deadline_timer" },
	{ 1, 0, 2, 25, "aes" },
	{ 1, 0, 2, 26, "xsave" },
	{ 1, 0, 2, 28, "avx" },
	{ 1, 0, 2, 29, "f16c" },
	{ 1, 0, 2, 30, "rdrand" },
	{ 1, 0, 2, 31, "hypervisor" },
	{ 0x80000001, 0, 2, 0, "lahf_lm" },
	{ 0x80000001, 0, 2, 1, "cmp_legacy" },
	{ 0x80000001, 0, 2, 2, "svm" },
	{ 0x80000001, 0, 2, 3, "extapic" },
	{ 0x80000001, 0, 2, 4, "cr8_legacy" },
	{ 0x80000001, 0, 2, 5, "abm" },
	{ 0x80000001, 0, 2, 6, "sse4a" },
	{ 0x80000001, 0, 2, 7, "misalignsse" },
	{ 0x80000001, 0, 2, 8, "3dnowprefetch" },
	{ 0x80000001, 0, 2, 9, "osvw" },
	{ 0x80000001, 0, 2, 10, "ibs" },
	{ 0x80000001, 0, 2, 11, "xop" },
	{ 0x80000001, 0, 2, 12, "skinit" },
	{ 0x80000001, 0, 2, 13, "wdt" },
	{ 0x80000001, 0, 2, 15, "lwp" },
	{ 0x80000001, 0, 2, 16, "fma4" },
	{ 0x80000001, 0, 2, 17, "tce" },
	{ 0x80000001, 0, 2, 19, "nodeid_msr" },
	{ 0x80000001, 0, 2, 21, "tbm" },
	{ 0x80000001, 0, 2, 22, "topoext" },
	{ 0x80000001, 0, 2, 23, "perfctr_core" },
	{ 0x80000001, 0, 2, 24, "perfctr_nb" },
	{ 0x80000001, 0, 2, 26, "bpext" },
	{ 0x80000001, 0, 2, 27, "ptsc" },
	{ 0x80000001, 0, 2, 28, "perfctr_llc" },
	{ 0x80000001, 0, 2, 29, "mwaitx" },
	{ 7, 0, 1, 0, "fsgsbase" },
	{ 7, 0, 1, 1, "tsc_adjust" },
	{ 7, 0, 1, 2, "sgx" },
	{ 7, 0, 1, 3, "bmi1" },
	{ 7, 0, 1, 4, "hle" },
	{ 7, 0, 1, 5, "avx2" },
	{ 7, 0, 1, 7, "smep" },
	{ 7, 0, 1, 8, "bmi2" },
	{ 7, 0, 1, 9, "erms" },
	{ 7, 0, 1, 10, "invpcid" },
	{ 7, 0, 1, 11, "rtm" },
	{ 7, 0, 1, 12, "cqm" },
	{ 7, 0, 1, 14, "mpx" },
	{ 7, 0, 1, 15, "rdt_a" },
	{ 7, 0, 1, 16, "avx512f" },
	{ 7, 0, 1, 17, "avx512dq" },
	{ 7, 0, 1, 18, "rdseed" },
	{ 7, 0, 1, 19, "adx" },
	{ 7, 0, 1, 20, "smap" },
	{ 7, 0, 1, 21, "avx512ifma" },
	{ 7, 0, 1, 23, "clflushopt" },
	{ 7, 0, 1, 24, "clwb" },
	{ 7, 0, 1, 25, "intel_pt" },
	{ 7, 0, 1, 26, "avx512pf" },
	{ 7, 0, 1, 27, "avx512er" },
	{ 7, 0, 1, 28, "avx512cd" },
	{ 7, 0, 1, 29, "sha_ni" },
	{ 7, 0, 1, 30, "avx512bw" },
	{ 7, 0, 1, 31, "avx512vl" },
	{ 0xd, 1, 0, 0, "xsaveopt" },
	{ 0xd, 1, 0, 1, "xsavec" },
	{ 0xd, 1, 0, 2, "xgetbv1" },
	{ 0xd, 1, 0, 3, "xsaves" },
	{ 7, 0, 2, 1, "avx512vbmi" },
	{ 7, 0, 2, 2, "umip" },
	{ 7, 0, 2, 3, "pku" },
	{ 7, 0, 2, 4, "ospke" },
	{ 7, 0, 2, 5, "waitpkg" },
	{ 7, 0, 2, 6, "avx512_vbmi2" },
	{ 7, 0, 2, 8, "gfni" },
	{ 7, 0, 2, 9, "vaes" },
	{ 7, 0, 2, 10, "vpclmulqdq" },
	{ 7, 0, 2, 11, "avx512_vnni" },
	{ 7, 0, 2, 12, "avx512_bitalg" },
	{ 7, 0, 2, 13, "tme" },
	{ 7, 0, 2, 14, "avx512_vpopcntdq" },
	{ 7, 0, 2, 16, "la57" },
	{ 7, 0, 2, 22, "rdpid" },
	{ 7, 0, 2, 24, "bus_lock_detect" },
	{ 7, 0, 2, 25, "cldemote" },
	{ 7, 0, 2, 27, "movdiri" },
	{ 7, 0, 2, 28, "movdir64b" },
	{ 7, 0, 2, 29, "enqcmd" },
	{ 7, 0, 2, 30, "sgx_lc" },
	{ 7, 0, 3, 2, "avx512_4vnniw" },
	{ 7, 0, 3, 3, "avx512_4fmaps" },
	{ 7, 0, 3, 4, "fsrm" },
	{ 7, 0, 3, 8, "avx512_vp2intersect" },
	{ 7, 0, 3, 9, "srbds_ctrl" },
	{ 7, 0, 3, 10, "md_clear" },
	{ 7, 0, 3, 11, "rtm_always_abort" },
	{ 7, 0, 3, 13, "tsx_force_abort" },
	{ 7, 0, 3, 14, "serialize" },
	{ 7, 0, 3, 15, "hybrid_cpu" },
	{ 7, 0, 3, 16, "tsxldtrk" },
	{ 7, 0, 3, 18, "pconfig" },
	{ 7, 0, 3, 19, "arch_lbr" },
	{ 7, 0, 3, 20, "ibt" },
	{ 7, 0, 3, 22, "amx_bf16" },
	{ 7, 0, 3, 23, "avx512_fp16" },
	{ 7, 0, 3, 24, "amx_tile" },
	{ 7, 0, 3, 25, "amx_int8" },
	{ 7, 0, 3, 28, "flush_l1d" },
	{ 7, 0, 3, 29, "arch_capabilities" },
};

/* The highest basic and extended leaves; FALSE without CPUID. */
static gboolean cpu_x86_max_leaves(AgentFactsContext *ctx, guint32 *basic, guint32 *extended)
{
	guint32 regs[4] = { 0 };

	if (!agent_facts_cpuid(ctx, 0, 0, regs))
		return FALSE;
	*basic = regs[0];
	memset(regs, 0, sizeof(regs));
	agent_facts_cpuid(ctx, 0x80000000, 0, regs);
	*extended = regs[0] >= 0x80000000 && regs[0] <= 0x8000ffff ? regs[0] : 0;
	return TRUE;
}

char **agent_cpu_x86_flags(AgentFactsContext *ctx)
{
	g_autoptr(GStrvBuilder) flags = g_strv_builder_new();
	guint32 basic, extended;
	guint32 last_leaf = G_MAXUINT32, last_subleaf = G_MAXUINT32;
	guint32 regs[4] = { 0 };
	gboolean have = FALSE;

	if (!cpu_x86_max_leaves(ctx, &basic, &extended))
		return NULL;
	for (guint i = 0; i < G_N_ELEMENTS(cpu_flag_bits); i++) {
		const CpuFlagBit *f = &cpu_flag_bits[i];
		gboolean ext = f->leaf >= 0x80000000;

		if ((ext && f->leaf > extended) || (!ext && f->leaf > basic))
			continue;
		if (f->leaf != last_leaf || f->subleaf != last_subleaf) {
			memset(regs, 0, sizeof(regs));
			have = agent_facts_cpuid(ctx, f->leaf, f->subleaf, regs);
			last_leaf = f->leaf;
			last_subleaf = f->subleaf;
		}
		if (have && (regs[f->reg] >> f->bit) & 1)
			g_strv_builder_add(flags, f->name);
	}
	return g_strv_builder_end(flags);
}

char *agent_cpu_x86_vendor(AgentFactsContext *ctx)
{
	guint32 regs[4] = { 0 };
	char sig[12];

	if (!agent_facts_cpuid(ctx, 0, 0, regs))
		return NULL;
	/* leaf 0 spells it in EBX, EDX, ECX ("Auth" "enti" "cAMD"); hypervisor leaves in EBX, ECX,
	 * EDX */
	memcpy(sig, &regs[1], 4);
	memcpy(sig + 4, &regs[3], 4);
	memcpy(sig + 8, &regs[2], 4);
	return cpu_signature_escape(sig);
}

char *agent_cpu_x86_model_name(AgentFactsContext *ctx)
{
	guint32 basic, extended;
	char brand[49] = { 0 };

	if (!cpu_x86_max_leaves(ctx, &basic, &extended) || extended < 0x80000004)
		return NULL;
	for (guint32 i = 0; i < 3; i++) {
		guint32 regs[4] = { 0 };
		agent_facts_cpuid(ctx, 0x80000002 + i, 0, regs);
		memcpy(brand + 16 * i, regs, 16);
	}
	for (guint i = 0; i < 48; i++) {
		if (brand[i] != '\0' && !g_ascii_isprint(brand[i]))
			brand[i] = '?';
	}
	g_strstrip(brand);
	return brand[0] != '\0' ? g_strdup(brand) : NULL;
}
