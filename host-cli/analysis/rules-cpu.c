/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"

#include <string.h>

#include "gb-error.h"
#include "gb-isa.h"

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
	if (arch == CLI_ARCH_ARM) {
		/* Armv8 Crypto Extensions: OpenSSL's AES-GCM needs both AESE/AESD and PMULL */
		detail = g_strdup_printf("no %s in the CPU flags: AES-GCM runs on OpenSSL's "
		                         "software path",
		                         missing->str);
		cli_rule_fire(ctx, "cpu", detail,
		              "under KVM use -cpu host (libvirt <cpu mode='host-passthrough'/>) on "
		              "a host with the Crypto Extensions; under TCG a model that has them "
		              "(cortex-a57 and later, max)");
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
		if (g_strcmp0(vendor, "QEMU") == 0 && cpu_arch(ctx) == CLI_ARCH_ARM &&
		    g_strcmp0(ctx->facts->cpu.model_name.value, "QEMU max") == 0) {
			/* under KVM (and HVF) -cpu max is the host's CPU, with the host's MIDR */
			cli_rule_emit(
			    ctx, CLI_LEVEL_WARN, "cpu",
			    "hypervisor QEMU with its own 'max' CPU (MIDR implementer 0, "
			    "part 0x051), which only TCG presents: no hardware "
			    "acceleration, every instruction is emulated",
			    "run QEMU with -accel kvm (libvirt <domain type='kvm'>) on an "
			    "arm64 host with /dev/kvm");
			return;
		}
		if (g_strcmp0(vendor, "QEMU") == 0) {
			cli_rule_emit(ctx, CLI_LEVEL_NOTE, "cpu",
			              "hypervisor QEMU (its machine's firmware or device tree); "
			              "whether KVM or TCG runs it is not visible in the guest",
			              NULL);
			return;
		}
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

gboolean cli_isa_level_parse(const char *str, guint *level, GError **error)
{
	guint64 n = 0;

	if (str == NULL || !g_str_has_prefix(str, "x86-64-v") ||
	    !g_ascii_string_to_unsigned(str + strlen("x86-64-v"), 10, 1, GB_ISA_LEVEL_MAX, &n,
	                                NULL)) {
		g_set_error(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT,
		            "invalid ISA level '%s' (expected x86-64-v1, x86-64-v2, x86-64-v3 or "
		            "x86-64-v4)",
		            str != NULL ? str : "");
		return FALSE;
	}
	*level = (guint)n;
	return TRUE;
}

const char *const cli_require_level_words[] = {
	"x86-64-v1", "x86-64-v2", "x86-64-v3", "x86-64-v4", "armv8-a",   "armv8.1-a",
	"armv8.2-a", "armv8.3-a", "armv8.4-a", "armv8.5-a", "armv8.6-a", "armv8.7-a",
	"armv8.8-a", "armv9-a",   "armv9.1-a", "armv9.2-a", "armv9.3-a", NULL,
};

gboolean cli_require_level_parse(const char *list, guint *isa_level, guint *arm_level,
                                 GError **error)
{
	g_auto(GStrv) names = g_strsplit(list != NULL ? list : "", ",", -1);
	const char *x86_name = NULL, *arm_name = NULL;
	guint x86 = 0, arm = 0;

	/* an empty list is one empty name */
	for (guint i = 0; i == 0 || names[i] != NULL; i++) {
		const char *name = names[i] != NULL ? names[i] : "";
		const char **seen = NULL;

		if (cli_isa_level_parse(name, &x86, NULL))
			seen = &x86_name;
		else if (gb_isa_arm_level_parse(name, &arm))
			seen = &arm_name;
		if (seen == NULL) {
			g_set_error(
			    error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT,
			    "invalid ISA level '%s' in '%s' (expected x86-64-v1..x86-64-v4, "
			    "armv8-a, armv8.1-a..armv8.8-a, armv9-a or armv9.1-a..armv9.3-a; "
			    "at most one of each architecture, comma-separated)",
			    name, list != NULL ? list : "");
			return FALSE;
		}
		if (*seen != NULL) {
			g_set_error(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT,
			            "'%s' and '%s' in '%s' are both %s levels (at most one x86-64 "
			            "and one Arm level)",
			            *seen, name, list, seen == &x86_name ? "x86-64" : "Arm");
			return FALSE;
		}
		*seen = name;
	}
	*isa_level = x86_name != NULL ? x86 : 0;
	*arm_level = arm_name != NULL ? arm : 0;
	return TRUE;
}

gboolean cli_arm_level_reaches(guint level, guint required)
{
	return gb_isa_arm_level_meet(level, required) == required;
}

char **cli_cpu_flags_parse(const char *list, GError **error)
{
	g_auto(GStrv) names = g_strsplit(list, ",", -1);
	g_autoptr(GStrvBuilder) builder = g_strv_builder_new();
	g_autoptr(GHashTable) seen = g_hash_table_new(g_str_hash, g_str_equal);

	if (names[0] == NULL) {
		g_set_error_literal(
		    error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT,
		    "invalid CPU flag '' in '' (expected a comma list of /proc/cpuinfo "
		    "flag names such as avx2,aes)");
		return NULL;
	}
	for (guint i = 0; names[i] != NULL; i++) {
		const char *name = g_strstrip(names[i]);
		gboolean ok = name[0] != '\0' && strlen(name) <= 64;

		for (const char *c = name; ok && *c != '\0'; c++)
			ok = g_ascii_isalnum(*c) || *c == '_' || *c == '-' || *c == '.';
		if (!ok) {
			g_set_error(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT,
			            "invalid CPU flag '%s' in '%s' (expected a comma list of "
			            "/proc/cpuinfo flag names such as avx2,aes)",
			            name, list);
			return NULL;
		}
		if (!g_hash_table_add(seen, (gpointer)name))
			continue;
		g_strv_builder_add(builder, name);
	}
	return g_strv_builder_end(builder);
}

/* The named QEMU models (and libvirt's spelling) that reach each level. */
static const char *isa_level_hint(guint level)
{
	switch (level) {
	case 2:
		return "use -cpu host (libvirt <cpu mode='host-passthrough'/>), host-model, or a "
		       "named "
		       "model of x86-64-v2 or newer: Nehalem-v2, EPYC-v1 or later (libvirt <cpu "
		       "mode='custom'><model>Nehalem</model></cpu>); qemu64, kvm64 and qemu32 are "
		       "x86-64-v1";
	case 3:
		return "use -cpu host (libvirt <cpu mode='host-passthrough'/>), host-model, or a "
		       "named "
		       "model of x86-64-v3 or newer: Haswell-v4 (Haswell-noTSX), "
		       "Skylake-Client-v4, "
		       "EPYC-v1 or later (libvirt <cpu "
		       "mode='custom'><model>Haswell-noTSX</model></cpu>)";
	default:
		return "use -cpu host (libvirt <cpu mode='host-passthrough'/>), host-model, or a "
		       "named "
		       "model with AVX-512: Skylake-Server-v4, Cascadelake-Server, Icelake-Server, "
		       "EPYC-Genoa (libvirt <cpu "
		       "mode='custom'><model>Icelake-Server</model></cpu>)";
	}
}

/*
 * The Armv8.x/Armv9.x level: a FAIL when it does not reach the required Arm
 * level, else a NOTE; an x86-64 requirement does not apply.
 */
static void cpu_isa_level_arm(CliAuditCtx *ctx)
{
	const CliFactsCpu *cpu = &ctx->facts->cpu;
	guint required = ctx->require->arm_level;
	g_autofree char *required_name = gb_isa_arm_level_name(required);
	g_autofree char *missing = NULL;
	g_autofree char *next = NULL;
	g_autofree char *unrequired = NULL;
	g_autofree char *detail = NULL;
	guint level = 0;

	if (ctx->require->isa_level > 0)
		unrequired = g_strdup_printf("; the required x86-64-v%u applies to x86 guests only",
		                             ctx->require->isa_level);
	if (!cli_rule_need(ctx, &cpu->isa_level.fact, required == 0) ||
	    !gb_isa_arm_level_parse(cpu->isa_level.value, &level)) {
		if (cli_fact_ok(&cpu->isa_level.fact))
			cli_rule_note(ctx, &cpu->isa_level.fact);
		if (required_name == NULL)
			return;
		/* a requirement that cannot be checked is not met silently */
		detail = g_strdup_printf("ISA level unknown: the required %s cannot be checked",
		                         required_name);
		cli_rule_emit(ctx, CLI_LEVEL_WARN, "cpu", detail,
		              "update guestbench-agent in the guest (cpu.isa_level of aarch64 came "
		              "with this version)");
		return;
	}
	if (required_name != NULL && !cli_arm_level_reaches(level, required)) {
		g_autoptr(GPtrArray) lacks = NULL;

		if (cli_rule_need(ctx, &cpu->flags.fact, TRUE))
			lacks =
			    gb_isa_arm_level_lacks((const char *const *)cpu->flags.value, required);
		if (lacks != NULL && lacks->len > 0) {
			g_ptr_array_add(lacks, NULL);
			missing = g_strjoinv(", ", (char **)lacks->pdata);
		}
		detail = g_strdup_printf("ISA level %s does not reach the required %s: lacks %s",
		                         cpu->isa_level.value, required_name,
		                         missing != NULL ? missing : "(not reported)");
		cli_rule_emit(
		    ctx, CLI_LEVEL_FAIL, "cpu", detail,
		    "use -cpu host (libvirt <cpu mode='host-passthrough'/>) on a host CPU "
		    "of that level, or -cpu max under TCG; QEMU's cortex-a53, cortex-a57 "
		    "and cortex-a72 are armv8-a");
		return;
	}
	if (cli_rule_need(ctx, &cpu->isa_missing.fact, TRUE) && cpu->isa_missing.value[0] != NULL)
		missing = g_strjoinv(", ", cpu->isa_missing.value);
	next = gb_isa_arm_level_name(level + 1);
	if (missing != NULL && next != NULL)
		detail = g_strdup_printf("ISA level %s (%s lacks %s; a lower bound from the "
		                         "Features hwcaps)%s%s%s",
		                         cpu->isa_level.value, next, missing,
		                         required_name != NULL ? "; required " : "",
		                         required_name != NULL ? required_name : "",
		                         unrequired != NULL ? unrequired : "");
	else
		detail = g_strdup_printf(
		    "ISA level %s (a lower bound from the Features hwcaps)%s%s%s",
		    cpu->isa_level.value, required_name != NULL ? "; required " : "",
		    required_name != NULL ? required_name : "",
		    unrequired != NULL ? unrequired : "");
	cli_rule_emit(ctx, CLI_LEVEL_NOTE, "cpu", detail, NULL);
}

void cli_rule_cpu_isa_level(CliAuditCtx *ctx)
{
	const CliFactsCpu *cpu = &ctx->facts->cpu;
	guint required = ctx->require->isa_level;
	g_autofree char *missing = NULL;
	g_autofree char *detail = NULL;
	g_autofree char *required_name = NULL;
	guint level = 0;

	cli_rule_need(ctx, &cpu->node.fact, FALSE);
	if (cpu_arch(ctx) == CLI_ARCH_ARM) {
		cpu_isa_level_arm(ctx);
		return;
	}
	if (cpu_arch(ctx) != CLI_ARCH_X86)
		return;
	/* agents before isa_level do not send it: only a requirement makes it needed */
	required_name = g_strdup_printf("x86-64-v%u", required);
	if (!cli_rule_need(ctx, &cpu->isa_level.fact, required == 0) ||
	    !cli_isa_level_parse(cpu->isa_level.value, &level, NULL)) {
		if (cli_fact_ok(&cpu->isa_level.fact))
			cli_rule_note(ctx, &cpu->isa_level.fact);
		if (required == 0)
			return;
		/* a requirement that cannot be checked is not met silently */
		detail = g_strdup_printf("ISA level unknown: the required %s cannot be checked",
		                         required_name);
		cli_rule_emit(ctx, CLI_LEVEL_WARN, "cpu", detail,
		              "update guestbench-agent in the guest (cpu.isa_level came with this "
		              "version); an agent reading --sysroot has no CPUID");
		return;
	}
	if (cli_rule_need(ctx, &cpu->isa_missing.fact, TRUE) && cpu->isa_missing.value[0] != NULL)
		missing = g_strjoinv(", ", cpu->isa_missing.value);
	if (level < required) {
		detail =
		    g_strdup_printf("ISA level %s is below the required %s: x86-64-v%u lacks %s",
		                    cpu->isa_level.value, required_name, level + 1,
		                    missing != NULL ? missing : "(not reported)");
		cli_rule_emit(ctx, CLI_LEVEL_FAIL, "cpu", detail, isa_level_hint(required));
		return;
	}
	if (missing != NULL)
		detail = g_strdup_printf(
		    "ISA level %s (x86-64-v%u lacks %s)%s%s", cpu->isa_level.value, level + 1,
		    missing, required > 0 ? "; required " : "", required > 0 ? required_name : "");
	else
		detail = g_strdup_printf("ISA level %s%s%s", cpu->isa_level.value,
		                         required > 0 ? "; required " : "",
		                         required > 0 ? required_name : "");
	cli_rule_emit(ctx, CLI_LEVEL_NOTE, "cpu", detail, NULL);
}

void cli_rule_cpu_required_flags(CliAuditCtx *ctx)
{
	char *const *wanted = ctx->require->flags;
	g_autoptr(GString) missing = g_string_new(NULL);
	g_autofree char *detail = NULL;
	g_autofree char *hint = NULL;
	char **flags;

	if (wanted == NULL || wanted[0] == NULL)
		return;
	cli_rule_need(ctx, &ctx->facts->cpu.node.fact, FALSE);
	flags = cpu_flags(ctx);
	if (flags == NULL)
		return;
	for (guint i = 0; wanted[i] != NULL; i++) {
		if (cli_rule_strv_has(flags, wanted[i]))
			continue;
		if (missing->len > 0)
			g_string_append(missing, ",");
		g_string_append(missing, wanted[i]);
	}
	if (missing->len == 0) {
		g_autofree char *all = g_strjoinv(", ", (char **)wanted);
		detail = g_strdup_printf("every required flag visible (%s)", all);
		cli_rule_pass(ctx, "cpu", detail);
		return;
	}
	detail = g_strdup_printf("required CPU flags missing: %s", missing->str);
	/* QEMU spells the cpuinfo names with '-' (sse4_2 -> sse4.2 is the one exception) */
	hint = g_strdup_printf("expose them with -cpu MODEL,+FLAG for each (libvirt <feature "
	                       "policy='require' name='FLAG'/>), or use -cpu host "
	                       "(<cpu mode='host-passthrough'/>) when the host has %s",
	                       missing->str);
	cli_rule_fire(ctx, "cpu", detail, hint);
}

/*
 * The vulnerabilities whose "Vulnerable" in a guest usually means that the
 * CPU model hides the mitigation bit the host has: the bit, and how to expose
 * it. The others depend on the host's microcode or the guest kernel.
 */
static const struct {
	const char *name;
	const char *bit;
	const char *hint;
} vuln_hidden_bits[] = {
	{ "spec_store_bypass", "ssbd",
	  "expose SSBD: -cpu MODEL,+ssbd (AMD: +virt-ssbd) or a model version that has it, e.g. "
	  "Skylake-Server-IBRS / -v2; libvirt <feature policy='require' name='ssbd'/> "
	  "(AMD: name='virt-ssbd')" },
	{ "mds", "md-clear",
	  "expose MD_CLEAR: -cpu MODEL,+md-clear or a model version that has it (e.g. "
	  "Cascadelake-Server-v2, Skylake-Server-v3); libvirt <feature policy='require' "
	  "name='md-clear'/>" },
	{ "tsx_async_abort", "md-clear",
	  "expose MD_CLEAR (and TSX_CTRL through arch-capabilities): -cpu MODEL,+md-clear,"
	  "+arch-capabilities; libvirt <feature policy='require' name='md-clear'/>" },
	{ "mmio_stale_data", "md-clear",
	  "expose MD_CLEAR and ARCH_CAPABILITIES (FB_CLEAR): -cpu MODEL,+md-clear,"
	  "+arch-capabilities; libvirt <feature policy='require' name='arch-capabilities'/>" },
	{ "spectre_v2", "spec-ctrl",
	  "expose IBRS/IBPB: -cpu MODEL,+spec-ctrl (AMD: +ibpb,+amd-stibp) or a -IBRS / -v2 "
	  "model version (Skylake-Client-IBRS); libvirt <feature policy='require' "
	  "name='spec-ctrl'/>" },
	{ "retbleed", "spec-ctrl",
	  "expose IBRS: -cpu MODEL,+spec-ctrl (AMD: +ibpb) or a -IBRS / -v2 model version; "
	  "libvirt <feature policy='require' name='spec-ctrl'/>" },
	{ "l1tf", "flush-l1d",
	  "expose L1D_FLUSH: -cpu MODEL,+flush-l1d (and +arch-capabilities); libvirt <feature "
	  "policy='require' name='flush-l1d'/>" },
	{ "spec_rstack_overflow", "ibpb",
	  "expose IBPB: -cpu MODEL,+ibpb (and +ibpb-brtype on recent QEMU); libvirt <feature "
	  "policy='require' name='ibpb'/>" },
	{ "gather_data_sampling", "arch-capabilities",
	  "expose ARCH_CAPABILITIES so the guest sees GDS_NO/the host's mitigation: -cpu "
	  "MODEL,+arch-capabilities; libvirt <feature policy='require' "
	  "name='arch-capabilities'/>" },
	{ "reg_file_data_sampling", "arch-capabilities",
	  "expose ARCH_CAPABILITIES (RFDS_CLEAR) and MD_CLEAR: -cpu MODEL,+arch-capabilities,"
	  "+md-clear; libvirt <feature policy='require' name='arch-capabilities'/>" },
};

void cli_rule_cpu_vulnerable(CliAuditCtx *ctx)
{
	const CliFactStrMap *vulns = &ctx->facts->cpu.vulnerabilities;
	guint n_vulnerable = 0;
	gboolean x86;

	cli_rule_need(ctx, &ctx->facts->cpu.node.fact, FALSE);
	/* absent from older agents, null on kernels before 4.15 */
	if (!cli_rule_need(ctx, &vulns->fact, TRUE))
		return;
	/* the hidden bits and their QEMU spellings are x86's */
	x86 = cpu_arch(ctx) == CLI_ARCH_X86;
	for (guint i = 0; vulns->names[i] != NULL; i++) {
		const char *name = vulns->names[i];
		const char *text = vulns->texts[i];
		g_autofree char *subject = NULL;
		g_autofree char *detail = NULL;
		gboolean known = FALSE;

		if (text == NULL || !g_str_has_prefix(text, "Vulnerable"))
			continue;
		n_vulnerable++;
		subject = g_strdup_printf("cpu/%s", name);
		for (guint j = 0; x86 && j < G_N_ELEMENTS(vuln_hidden_bits) && !known; j++) {
			if (g_strcmp0(name, vuln_hidden_bits[j].name) != 0)
				continue;
			known = TRUE;
			detail = g_strdup_printf("the guest kernel reports %s: '%s'; the CPU model "
			                         "usually hides the host's %s",
			                         name, text, vuln_hidden_bits[j].bit);
			cli_rule_fire(ctx, subject, detail, vuln_hidden_bits[j].hint);
		}
		if (known)
			continue;
		detail = g_strdup_printf("the guest kernel reports %s: '%s' (no CPU-model cause "
		                         "known)",
		                         name, text);
		cli_rule_emit(ctx, CLI_LEVEL_NOTE, subject, detail,
		              x86 ? "check the host's microcode and kernel; -cpu host "
		                    "(<cpu mode='host-passthrough'/>) passes every mitigation bit "
		                    "the host has"
		                  : "check the host's firmware and kernel; -cpu host "
		                    "(<cpu mode='host-passthrough'/>) passes every mitigation the "
		                    "host's CPU has");
	}
	if (n_vulnerable == 0)
		cli_rule_pass(ctx, "cpu",
		              "the guest kernel reports no vulnerability as Vulnerable");
}
