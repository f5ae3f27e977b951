/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"

#include <string.h>

#include "analysis/rules.h"

/* The CPU rules: model, flags, CPUID, hypervisor. */

typedef enum {
	CLI_ARCH_X86,
	CLI_ARCH_ARM,
	CLI_ARCH_OTHER,
} CliArch;

static CliArch cpu_arch(CliAuditCtx *ctx)
{
	const CliFactString *arch = &ctx->facts->cpu.architecture;
	const char *name;

	/* absent/null: the cpuid block only exists on x86, so assume x86 */
	if (!cli_rule_need(ctx, &arch->fact, TRUE))
		return CLI_ARCH_X86;
	name = arch->value;
	if (g_strcmp0(name, "x86_64") == 0 || g_strcmp0(name, "amd64") == 0 ||
	    g_strcmp0(name, "x86") == 0 ||
	    (strlen(name) == 4 && name[0] == 'i' && g_str_has_suffix(name, "86")))
		return CLI_ARCH_X86;
	if (g_str_has_prefix(name, "aarch64") || g_str_has_prefix(name, "arm"))
		return CLI_ARCH_ARM;
	return CLI_ARCH_OTHER;
}

/* cpu.flags (borrowed), or NULL (noted) when absent, null, not strings or empty. */
static char **cpu_flags(CliAuditCtx *ctx)
{
	const CliFactStrv *flags = &ctx->facts->cpu.flags;

	if (!cli_rule_need(ctx, &flags->fact, FALSE))
		return NULL;
	if (flags->value[0] == NULL) {
		/* no CPU has no flags: the agent could not read them */
		cli_rule_note(ctx, &flags->fact);
		return NULL;
	}
	return flags->value;
}

static const char *const legacy_model_names[] = {
	"QEMU Virtual CPU version",
	"Common KVM processor",
	"Common 32-bit KVM processor",
};
static const char *const legacy_model_tokens[] = { "kvm32", "kvm64", "qemu32", "qemu64", NULL };

static gboolean model_is_legacy(const char *model)
{
	g_autofree char *lower = g_ascii_strdown(model, -1);
	g_auto(GStrv) words = NULL;

	for (guint i = 0; i < G_N_ELEMENTS(legacy_model_names); i++) {
		g_autofree char *needle = g_ascii_strdown(legacy_model_names[i], -1);
		if (strstr(lower, needle) != NULL)
			return TRUE;
	}
	/* whole words only: "kvm64" but not "xkvm640" */
	words = g_strsplit_set(lower, " \t,()/", -1);
	for (guint i = 0; words[i] != NULL; i++) {
		if (cli_rule_str_in(words[i], legacy_model_tokens))
			return TRUE;
	}
	return FALSE;
}

void cli_rule_cpu_legacy_model(CliAuditCtx *ctx)
{
	const CliFactsCpu *cpu = &ctx->facts->cpu;
	const char *model;
	g_autofree char *detail = NULL;

	cli_rule_need(ctx, &cpu->node.fact, FALSE);
	if (!cli_rule_need(ctx, &cpu->model_name.fact, TRUE))
		return;
	model = cpu->model_name.value;
	if (!model_is_legacy(model)) {
		detail = g_strdup_printf("CPU model '%s' is not a legacy model", model);
		cli_rule_pass(ctx, "cpu", detail);
		return;
	}
	detail = g_strdup_printf("legacy CPU model '%s' hides the host's features "
	                         "(AES-NI, AVX, ...)",
	                         model);
	cli_rule_fire(ctx, "cpu", detail,
	              "use -cpu host (libvirt <cpu mode='host-passthrough'/>) or "
	              "<cpu mode='host-model'/> when the guest must migrate");
}

/* "; CPUID reports aes but ..." for each of aes, pclmulqdq where the two disagree, else "". */
static char *cpuid_disagreement(CliAuditCtx *ctx, char **flags)
{
	const CliFactsCpuid *cpuid = &ctx->facts->cpu.cpuid;
	const struct {
		const char *name;
		const CliFactBool *bit;
	} bits[] = { { "aes", &cpuid->aes }, { "pclmulqdq", &cpuid->pclmulqdq } };
	g_autoptr(GString) str = g_string_new(NULL);

	if (!cli_rule_need(ctx, &cpuid->node.fact, TRUE))
		return g_strdup("");
	for (guint i = 0; i < G_N_ELEMENTS(bits); i++) {
		gboolean flagged = cli_rule_strv_has(flags, bits[i].name);
		if (!cli_rule_need(ctx, &bits[i].bit->fact, FALSE) || bits[i].bit->value == flagged)
			continue;
		if (bits[i].bit->value)
			g_string_append_printf(str,
			                       "; CPUID reports %s but /proc/cpuinfo does not "
			                       "list it",
			                       bits[i].name);
		else
			g_string_append_printf(str,
			                       "; /proc/cpuinfo lists %s but CPUID does not "
			                       "report it",
			                       bits[i].name);
	}
	return g_string_free(g_steal_pointer(&str), FALSE);
}

void cli_rule_cpu_no_aesni(CliAuditCtx *ctx)
{
	char **flags;
	g_autoptr(GString) missing = g_string_new(NULL);
	g_autofree char *disagree = NULL;
	g_autofree char *detail = NULL;
	CliArch arch;
	const char *const x86_flags[] = { "aes", "pclmulqdq", NULL };
	const char *const arm_flags[] = { "aes", "pmull", NULL };
	const char *const *needed;

	cli_rule_need(ctx, &ctx->facts->cpu.node.fact, FALSE);
	arch = cpu_arch(ctx);
	needed = arch == CLI_ARCH_ARM ? arm_flags : x86_flags;
	if (arch == CLI_ARCH_OTHER)
		return;
	flags = cpu_flags(ctx);
	if (flags == NULL)
		return;
	for (guint i = 0; needed[i] != NULL; i++) {
		if (cli_rule_strv_has(flags, needed[i]))
			continue;
		if (missing->len > 0)
			g_string_append(missing, ", ");
		g_string_append(missing, needed[i]);
	}
	disagree = arch == CLI_ARCH_X86 ? cpuid_disagreement(ctx, flags) : g_strdup("");
	if (missing->len == 0) {
		detail = g_strdup_printf("AES acceleration visible (%s, %s)%s", needed[0],
		                         needed[1], disagree);
		cli_rule_pass(ctx, "cpu", detail);
		return;
	}
	detail = g_strdup_printf("no %s in the CPU flags: AES-GCM runs about 2x slower%s",
	                         missing->str, disagree);
	cli_rule_fire(ctx, "cpu", detail,
	              "use -cpu host (libvirt <cpu mode='host-passthrough'/> or host-model), or a "
	              "named model with +aes,+pclmulqdq");
}

void cli_rule_cpu_missing_simd(CliAuditCtx *ctx)
{
	char **flags;
	g_autoptr(GString) missing = g_string_new(NULL);
	g_autofree char *detail = NULL;
	const char *const wanted[] = { "avx2", "vaes", "sha_ni" };

	cli_rule_need(ctx, &ctx->facts->cpu.node.fact, FALSE);
	/* these are x86 names; other architectures have other extensions */
	if (cpu_arch(ctx) != CLI_ARCH_X86)
		return;
	flags = cpu_flags(ctx);
	if (flags == NULL)
		return;
	for (guint i = 0; i < G_N_ELEMENTS(wanted); i++) {
		if (cli_rule_strv_has(flags, wanted[i]))
			continue;
		if (missing->len > 0)
			g_string_append(missing, ", ");
		g_string_append(missing, wanted[i]);
	}
	if (missing->len == 0) {
		cli_rule_pass(ctx, "cpu", "avx2, vaes and sha_ni visible");
		return;
	}
	detail = g_strdup_printf("missing %s (the host may lack them, or the CPU model hides "
	                         "them)",
	                         missing->str);
	cli_rule_fire(ctx, "cpu", detail,
	              "if the host has them, -cpu host (libvirt <cpu mode='host-passthrough'/>) "
	              "exposes them");
}

void cli_rule_cpu_nested_exposed(CliAuditCtx *ctx)
{
	char **flags;
	g_autofree char *detail = NULL;
	const char *ext = NULL;

	cli_rule_need(ctx, &ctx->facts->cpu.node.fact, FALSE);
	if (cpu_arch(ctx) != CLI_ARCH_X86)
		return;
	flags = cpu_flags(ctx);
	if (flags == NULL)
		return;
	if (cli_rule_strv_has(flags, "vmx"))
		ext = "vmx";
	else if (cli_rule_strv_has(flags, "svm"))
		ext = "svm";
	if (ext == NULL) {
		cli_rule_pass(ctx, "cpu", "no vmx/svm: nested virtualisation not exposed");
		return;
	}
	detail = g_strdup_printf("%s visible: the guest can run its own VMs (nested "
	                         "virtualisation)",
	                         ext);
	cli_rule_fire(ctx, "cpu", detail,
	              "if the guest does not need nested VMs, hide it: -cpu host,-vmx,-svm or "
	              "libvirt <feature policy='disable' name='vmx'/>");
}

void cli_rule_cpu_hypervisor(CliAuditCtx *ctx)
{
	const char *vendor = NULL;
	gboolean present = FALSE;
	g_autofree char *detail = NULL;

	/* unreadable: FACTS-ERRORS says what could not be read */
	if (!cli_rule_need_hypervisor(ctx, &present, &vendor))
		return;
	if (!present) {
		cli_rule_emit(
		    ctx, CLI_LEVEL_NOTE, "cpu",
		    "no hypervisor detected (bare metal, or the hypervisor bit is hidden)", NULL);
		return;
	}
	switch (ctx->facts->cpu.hypervisor.kind) {
	case CLI_HYPERVISOR_TCG:
		cli_rule_emit(
		    ctx, CLI_LEVEL_WARN, "cpu",
		    "hypervisor TCG: no hardware acceleration, every instruction is "
		    "emulated",
		    "run QEMU with -accel kvm (libvirt <domain type='kvm'>) on a host with "
		    "/dev/kvm");
		return;
	case CLI_HYPERVISOR_UNKNOWN:
		if (vendor == NULL) {
			cli_rule_emit(ctx, CLI_LEVEL_NOTE, "cpu",
			              "hypervisor present, vendor unknown", NULL);
			return;
		}
		detail = g_strdup_printf("unrecognised hypervisor '%s'", vendor);
		cli_rule_emit(ctx, CLI_LEVEL_NOTE, "cpu", detail, NULL);
		return;
	case CLI_HYPERVISOR_KVM:
	case CLI_HYPERVISOR_VMWARE:
	case CLI_HYPERVISOR_HYPERV:
	case CLI_HYPERVISOR_XEN:
	case CLI_HYPERVISOR_OTHER:
	default:
		detail = g_strdup_printf("hardware-accelerated hypervisor %s",
		                         vendor != NULL ? vendor : "(unnamed)");
		cli_rule_pass(ctx, "cpu", detail);
		return;
	}
}
