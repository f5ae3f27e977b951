/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <string.h>

#include "analysis/audit.h"
#include "gb-json.h"

/*
 * Audit rules: one row in rules[] and one function each. A rule reads the
 * facts only through the ctx_get_*() helpers below, which record whatever it
 * needed but could not read; FACTS-ERRORS reports those at the end, so a
 * broken or hostile facts document is audited as far as possible, never
 * silently and never with a crash.
 */

#define GIB ((gint64)1024 * 1024 * 1024)
#define STEAL_WARN_PERCENT 5.0
#define HUGEPAGES_MIN_BYTES (8 * GIB)

typedef struct _CliAuditCtx CliAuditCtx;
typedef void (*CliAuditRuleFunc)(CliAuditCtx *ctx);

typedef struct {
	CliAuditRuleInfo info;
	CliAuditRuleFunc func;
} CliAuditRule;

typedef struct {
	char *path;
	GString *rules; /* "CPU-NO-AESNI, CPU-MISSING-SIMD" */
} CliUnknown;

struct _CliAuditCtx {
	JsonObject *facts;
	GPtrArray *findings;
	GPtrArray *reported; /* "member" of each agent "errors" entry (borrowed) */
	GPtrArray *unknown;  /* CliUnknown, in the order first met */
	GHashTable *unknown_by_path;
	const CliAuditRule *rule; /* the rule running now */
};

/* Where a member lives: the object and its path ("cpu.hypervisor", "block[2]"). */
typedef struct {
	JsonObject *obj; /* NULL when the parent itself could not be read */
	char *path;      /* "" for the top level */
	char *alias;     /* "block.vda" for "block[2]", so agent errors either way match */
	char *subject;   /* "block/vda" */
} CliScope;

static void cli_unknown_free(gpointer data)
{
	CliUnknown *unknown = data;
	g_free(unknown->path);
	g_string_free(unknown->rules, TRUE);
	g_free(unknown);
}

static void cli_scope_free(CliScope *scope)
{
	if (scope == NULL)
		return;
	g_free(scope->path);
	g_free(scope->alias);
	g_free(scope->subject);
	g_free(scope);
}
G_DEFINE_AUTOPTR_CLEANUP_FUNC(CliScope, cli_scope_free)

static CliScope *cli_scope_new(JsonObject *obj, const char *path, const char *alias,
                               const char *subject)
{
	CliScope *scope = g_new0(CliScope, 1);
	scope->obj = obj;
	scope->path = g_strdup(path);
	scope->alias = g_strdup(alias);
	scope->subject = g_strdup(subject != NULL ? subject : path);
	return scope;
}

static char *path_join(const char *prefix, const char *member)
{
	if (prefix == NULL || prefix[0] == '\0')
		return g_strdup(member);
	return g_strdup_printf("%s.%s", prefix, member);
}

/* An agent error on "memory" covers "memory.thp"; one on "block[1]" covers "block[1].bus". */
static gboolean path_is_covered_by(const char *path, const char *member)
{
	gsize len = strlen(member);
	if (len == 0 || strncmp(path, member, len) != 0)
		return FALSE;
	return path[len] == '\0' || path[len] == '.' || path[len] == '[';
}

static gboolean ctx_path_reported(CliAuditCtx *ctx, const char *path)
{
	for (guint i = 0; i < ctx->reported->len; i++) {
		if (path_is_covered_by(path, g_ptr_array_index(ctx->reported, i)))
			return TRUE;
	}
	return FALSE;
}

static gboolean ctx_scope_reported(CliAuditCtx *ctx, CliScope *scope, const char *member)
{
	g_autofree char *path = path_join(scope->path, member);
	if (ctx_path_reported(ctx, path))
		return TRUE;
	if (scope->alias != NULL) {
		g_autofree char *alias = path_join(scope->alias, member);
		g_autofree char *slashed = NULL;
		char *dot;
		if (ctx_path_reported(ctx, alias))
			return TRUE;
		/* "block/vda.bus" is the third spelling an agent might use */
		slashed = g_strdup(alias);
		dot = strchr(slashed, '.');
		if (dot != NULL)
			*dot = '/';
		if (ctx_path_reported(ctx, slashed))
			return TRUE;
	}
	return FALSE;
}

static void ctx_add_unknown(CliAuditCtx *ctx, const char *path)
{
	CliUnknown *unknown = g_hash_table_lookup(ctx->unknown_by_path, path);
	if (unknown == NULL) {
		unknown = g_new0(CliUnknown, 1);
		unknown->path = g_strdup(path);
		unknown->rules = g_string_new(NULL);
		g_ptr_array_add(ctx->unknown, unknown);
		g_hash_table_insert(ctx->unknown_by_path, unknown->path, unknown);
	}
	if (strstr(unknown->rules->str, ctx->rule->info.id) == NULL) {
		if (unknown->rules->len > 0)
			g_string_append(unknown->rules, ", ");
		g_string_append(unknown->rules, ctx->rule->info.id);
	}
}

/*
 * A member the rule needs is absent, null or of the wrong type. null is the
 * agent's way of saying "could not read, see errors": when an errors entry
 * covers it, that entry is the better report. A wrong type is always noted.
 */
static void ctx_note_unknown(CliAuditCtx *ctx, CliScope *scope, const char *member,
                             gboolean wrong_type)
{
	g_autofree char *path = path_join(scope->path, member);
	if (!wrong_type && ctx_scope_reported(ctx, scope, member))
		return;
	ctx_add_unknown(ctx, path);
}

/*
 * Each getter returns TRUE with a value, or FALSE after noting why not.
 * nullable: null/absent is a normal answer (e.g. "model_name": null on
 * aarch64), so it is not noted as unknown; a wrong type still is.
 */
static gboolean ctx_present(CliAuditCtx *ctx, CliScope *scope, const char *member,
                            gboolean nullable)
{
	if (scope->obj == NULL)
		return FALSE;
	if (gb_json_has(scope->obj, member))
		return TRUE;
	if (!nullable)
		ctx_note_unknown(ctx, scope, member, FALSE);
	return FALSE;
}

static gboolean ctx_get_string(CliAuditCtx *ctx, CliScope *scope, const char *member,
                               gboolean nullable, const char **out)
{
	g_autoptr(GError) error = NULL;
	if (!ctx_present(ctx, scope, member, nullable))
		return FALSE;
	if (!gb_json_get_string(scope->obj, member, GB_JSON_REQUIRED, out, &error)) {
		ctx_note_unknown(ctx, scope, member, TRUE);
		return FALSE;
	}
	return TRUE;
}

static gboolean ctx_get_int(CliAuditCtx *ctx, CliScope *scope, const char *member,
                            gboolean nullable, gint64 min, gint64 max, gint64 *out)
{
	g_autoptr(GError) error = NULL;
	if (!ctx_present(ctx, scope, member, nullable))
		return FALSE;
	if (!gb_json_get_int(scope->obj, member, GB_JSON_REQUIRED, min, max, out, &error)) {
		ctx_note_unknown(ctx, scope, member, TRUE);
		return FALSE;
	}
	return TRUE;
}

static gboolean ctx_get_double(CliAuditCtx *ctx, CliScope *scope, const char *member,
                               gboolean nullable, double min, double max, double *out)
{
	g_autoptr(GError) error = NULL;
	if (!ctx_present(ctx, scope, member, nullable))
		return FALSE;
	if (!gb_json_get_double(scope->obj, member, GB_JSON_REQUIRED, min, max, out, &error)) {
		ctx_note_unknown(ctx, scope, member, TRUE);
		return FALSE;
	}
	return TRUE;
}

static gboolean ctx_get_bool(CliAuditCtx *ctx, CliScope *scope, const char *member,
                             gboolean nullable, gboolean *out)
{
	g_autoptr(GError) error = NULL;
	if (!ctx_present(ctx, scope, member, nullable))
		return FALSE;
	if (!gb_json_get_bool(scope->obj, member, GB_JSON_REQUIRED, out, &error)) {
		ctx_note_unknown(ctx, scope, member, TRUE);
		return FALSE;
	}
	return TRUE;
}

static gboolean ctx_get_strv(CliAuditCtx *ctx, CliScope *scope, const char *member,
                             gboolean nullable, char ***out)
{
	g_autoptr(GError) error = NULL;
	if (!ctx_present(ctx, scope, member, nullable))
		return FALSE;
	if (!gb_json_get_strv(scope->obj, member, GB_JSON_REQUIRED, out, &error)) {
		ctx_note_unknown(ctx, scope, member, TRUE);
		return FALSE;
	}
	return TRUE;
}

static gboolean ctx_get_int_array(CliAuditCtx *ctx, CliScope *scope, const char *member, gint64 min,
                                  gint64 max, GArray **out)
{
	g_autoptr(GError) error = NULL;
	if (!ctx_present(ctx, scope, member, FALSE))
		return FALSE;
	if (!gb_json_get_int_array(scope->obj, member, GB_JSON_REQUIRED, min, max, out, &error)) {
		ctx_note_unknown(ctx, scope, member, TRUE);
		return FALSE;
	}
	return TRUE;
}

/* A child object as a new scope (obj NULL when it could not be read). */
static CliScope *ctx_get_scope(CliAuditCtx *ctx, CliScope *scope, const char *member,
                               gboolean nullable)
{
	g_autoptr(GError) error = NULL;
	g_autofree char *path = path_join(scope->path, member);
	g_autofree char *alias = scope->alias != NULL ? path_join(scope->alias, member) : NULL;
	JsonObject *obj = NULL;

	if (ctx_present(ctx, scope, member, nullable) &&
	    !gb_json_get_object(scope->obj, member, GB_JSON_REQUIRED, &obj, &error)) {
		ctx_note_unknown(ctx, scope, member, TRUE);
		obj = NULL;
	}
	return cli_scope_new(obj, path, alias, path);
}

/*
 * The elements of a list section ("block", "net") as scopes. Elements that
 * are not objects are noted and left out; one without a usable "name" gets
 * the subject "block[N]".
 */
static GPtrArray *ctx_get_items(CliAuditCtx *ctx, CliScope *scope, const char *member,
                                gboolean nullable, const char *name_member, guint *n_bad)
{
	g_autoptr(GError) error = NULL;
	g_autofree char *prefix = path_join(scope->path, member);
	GPtrArray *items = g_ptr_array_new_with_free_func((GDestroyNotify)cli_scope_free);
	JsonArray *array = NULL;

	if (n_bad != NULL)
		*n_bad = 0;
	if (!ctx_present(ctx, scope, member, nullable))
		return items;
	if (!gb_json_get_array(scope->obj, member, GB_JSON_REQUIRED, &array, &error)) {
		ctx_note_unknown(ctx, scope, member, TRUE);
		if (n_bad != NULL)
			*n_bad = 1;
		return items;
	}
	for (guint i = 0; i < json_array_get_length(array); i++) {
		g_autoptr(GError) error_local = NULL;
		g_autofree char *path = g_strdup_printf("%s[%u]", prefix, i);
		JsonObject *obj = NULL;
		CliScope *item;
		const char *name = NULL;

		if (!gb_json_node_get_object(json_array_get_element(array, i), path, &obj,
		                             &error_local)) {
			ctx_add_unknown(ctx, path);
			if (n_bad != NULL)
				(*n_bad)++;
			continue;
		}
		item = cli_scope_new(obj, path, NULL, path);
		if (name_member != NULL && ctx_get_string(ctx, item, name_member, FALSE, &name) &&
		    name[0] != '\0') {
			item->alias = g_strdup_printf("%s.%s", prefix, name);
			g_free(item->subject);
			item->subject = g_strdup_printf("%s/%s", member, name);
		}
		g_ptr_array_add(items, item);
	}
	return items;
}

static CliScope *ctx_root(CliAuditCtx *ctx)
{
	return cli_scope_new(ctx->facts, "", NULL, "facts");
}

static CliScope *ctx_section(CliAuditCtx *ctx, const char *member)
{
	g_autoptr(CliScope) root = ctx_root(ctx);
	return ctx_get_scope(ctx, root, member, FALSE);
}

static void ctx_emit(CliAuditCtx *ctx, CliLevel level, const char *subject, const char *detail,
                     const char *hint)
{
	g_ptr_array_add(ctx->findings,
	                cli_finding_new(ctx->rule->info.id, level, subject, detail, hint));
}

/* The rule fires at its table level. */
static void ctx_fire(CliAuditCtx *ctx, const char *subject, const char *detail, const char *hint)
{
	ctx_emit(ctx, ctx->rule->info.level, subject, detail, hint);
}

static void ctx_pass(CliAuditCtx *ctx, const char *subject, const char *detail)
{
	ctx_emit(ctx, CLI_LEVEL_PASS, subject, detail, NULL);
}

static gboolean strv_has(char **strv, const char *str)
{
	return strv != NULL && g_strv_contains((const char *const *)strv, str);
}

static gboolean str_in(const char *str, const char *const *list)
{
	return str != NULL && g_strv_contains(list, str);
}

/* cpu helpers */

typedef enum {
	CLI_ARCH_X86,
	CLI_ARCH_ARM,
	CLI_ARCH_OTHER,
} CliArch;

static CliArch cpu_arch(CliAuditCtx *ctx, CliScope *cpu)
{
	const char *arch = NULL;
	/* absent/null: the cpuid block only exists on x86, so assume x86 */
	if (!ctx_get_string(ctx, cpu, "architecture", TRUE, &arch))
		return CLI_ARCH_X86;
	if (g_strcmp0(arch, "x86_64") == 0 || g_strcmp0(arch, "amd64") == 0 ||
	    g_strcmp0(arch, "x86") == 0 ||
	    (strlen(arch) == 4 && arch[0] == 'i' && g_str_has_suffix(arch, "86")))
		return CLI_ARCH_X86;
	if (g_str_has_prefix(arch, "aarch64") || g_str_has_prefix(arch, "arm"))
		return CLI_ARCH_ARM;
	return CLI_ARCH_OTHER;
}

/* cpu.flags, or NULL (noted) when absent, null, not strings or empty. */
static char **cpu_flags(CliAuditCtx *ctx, CliScope *cpu)
{
	char **flags = NULL;
	if (!ctx_get_strv(ctx, cpu, "flags", FALSE, &flags))
		return NULL;
	if (flags[0] == NULL) {
		/* no CPU has no flags: the agent could not read them */
		ctx_note_unknown(ctx, cpu, "flags", FALSE);
		g_strfreev(flags);
		return NULL;
	}
	return flags;
}

typedef enum {
	CLI_HV_NONE,
	CLI_HV_KVM,
	CLI_HV_TCG,
	CLI_HV_VMWARE,
	CLI_HV_HYPERV,
	CLI_HV_XEN,
	CLI_HV_OTHER_HW,   /* bhyve, ACRN, QNX, Parallels, VirtualBox */
	CLI_HV_UNKNOWN,    /* present, vendor not known */
	CLI_HV_UNREADABLE, /* cpu.hypervisor could not be read (noted) */
} CliHypervisor;

static const struct {
	const char *vendor;
	const char *signature; /* CPUID 0x40000000 as the agent reports it */
	CliHypervisor kind;
} hypervisors[] = {
	{ "KVM", "KVMKVMKVM", CLI_HV_KVM },
	{ "TCG", "TCGTCGTCGTCG", CLI_HV_TCG },
	{ "Microsoft Hv", "Microsoft Hv", CLI_HV_HYPERV },
	{ "VMware", "VMwareVMware", CLI_HV_VMWARE },
	{ "Xen", "XenVMMXenVMM", CLI_HV_XEN },
	{ "bhyve", "bhyve bhyve ", CLI_HV_OTHER_HW },
	{ "ACRN", "ACRNACRNACRN", CLI_HV_OTHER_HW },
	{ "QNX", "QNXQVMBSQG", CLI_HV_OTHER_HW },
	{ "Parallels", " lrpepyh  vr", CLI_HV_OTHER_HW },
	{ "VirtualBox", "VBoxVBoxVBox", CLI_HV_OTHER_HW },
};

/* Signatures are padded to 12 bytes with spaces or NULs: compare them stripped. */
static gboolean signature_equal(const char *a, const char *b)
{
	g_autofree char *sa = g_strstrip(g_strdup(a));
	g_autofree char *sb = g_strstrip(g_strdup(b));
	return g_strcmp0(sa, sb) == 0;
}

static CliHypervisor hypervisor_kind(const char *vendor, const char *signature)
{
	for (guint i = 0; i < G_N_ELEMENTS(hypervisors); i++) {
		if (vendor != NULL && g_ascii_strcasecmp(vendor, hypervisors[i].vendor) == 0)
			return hypervisors[i].kind;
	}
	/* an agent that did not know the vendor passes the raw signature on */
	for (guint i = 0; i < G_N_ELEMENTS(hypervisors); i++) {
		if ((vendor != NULL && signature_equal(vendor, hypervisors[i].signature)) ||
		    (signature != NULL && signature_equal(signature, hypervisors[i].signature)))
			return hypervisors[i].kind;
	}
	return CLI_HV_UNKNOWN;
}

/* Reads cpu.hypervisor; *vendor_out (borrowed) is the vendor or signature, if any. */
static CliHypervisor cpu_hypervisor(CliAuditCtx *ctx, const char **vendor_out)
{
	g_autoptr(CliScope) cpu = ctx_section(ctx, "cpu");
	g_autoptr(CliScope) hv = ctx_get_scope(ctx, cpu, "hypervisor", FALSE);
	gboolean present = FALSE;
	const char *vendor = NULL;
	const char *signature = NULL;

	if (vendor_out != NULL)
		*vendor_out = NULL;
	if (!ctx_get_bool(ctx, hv, "present", FALSE, &present))
		return CLI_HV_UNREADABLE;
	if (!present)
		return CLI_HV_NONE;
	ctx_get_string(ctx, hv, "vendor", TRUE, &vendor);
	ctx_get_string(ctx, hv, "signature", TRUE, &signature);
	if (vendor_out != NULL)
		*vendor_out = vendor != NULL ? vendor : signature;
	return hypervisor_kind(vendor, signature);
}

/* rules */

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
		if (str_in(words[i], legacy_model_tokens))
			return TRUE;
	}
	return FALSE;
}

static void rule_cpu_legacy_model(CliAuditCtx *ctx)
{
	g_autoptr(CliScope) cpu = ctx_section(ctx, "cpu");
	const char *model = NULL;
	g_autofree char *detail = NULL;

	if (!ctx_get_string(ctx, cpu, "model_name", TRUE, &model))
		return;
	if (!model_is_legacy(model)) {
		detail = g_strdup_printf("CPU model '%s' is not a legacy model", model);
		ctx_pass(ctx, "cpu", detail);
		return;
	}
	detail = g_strdup_printf("legacy CPU model '%s' hides the host's features "
	                         "(AES-NI, AVX, ...)",
	                         model);
	ctx_fire(ctx, "cpu", detail,
	         "use -cpu host (libvirt <cpu mode='host-passthrough'/>) or "
	         "<cpu mode='host-model'/> when the guest must migrate");
}

/* " (CPUID reports aes, the kernel does not)" when the two disagree, else "". */
static char *cpuid_disagreement(CliAuditCtx *ctx, CliScope *cpu, char **flags,
                                const char *const *names, const char *const *cpuid_names)
{
	g_autoptr(CliScope) cpuid = ctx_get_scope(ctx, cpu, "cpuid", TRUE);
	g_autoptr(GString) str = g_string_new(NULL);

	if (cpuid->obj == NULL)
		return g_strdup("");
	for (guint i = 0; names[i] != NULL; i++) {
		gboolean has = FALSE;
		gboolean flagged = strv_has(flags, names[i]);
		if (!ctx_get_bool(ctx, cpuid, cpuid_names[i], FALSE, &has) || has == flagged)
			continue;
		if (has)
			g_string_append_printf(str,
			                       "; CPUID reports %s but /proc/cpuinfo does not "
			                       "list it",
			                       cpuid_names[i]);
		else
			g_string_append_printf(str,
			                       "; /proc/cpuinfo lists %s but CPUID does not "
			                       "report it",
			                       cpuid_names[i]);
	}
	return g_string_free(g_steal_pointer(&str), FALSE);
}

static void rule_cpu_no_aesni(CliAuditCtx *ctx)
{
	g_autoptr(CliScope) cpu = ctx_section(ctx, "cpu");
	g_auto(GStrv) flags = NULL;
	g_autoptr(GString) missing = g_string_new(NULL);
	g_autofree char *disagree = NULL;
	g_autofree char *detail = NULL;
	CliArch arch = cpu_arch(ctx, cpu);
	const char *const x86_flags[] = { "aes", "pclmulqdq", NULL };
	const char *const arm_flags[] = { "aes", "pmull", NULL };
	const char *const *needed = arch == CLI_ARCH_ARM ? arm_flags : x86_flags;

	if (arch == CLI_ARCH_OTHER)
		return;
	flags = cpu_flags(ctx, cpu);
	if (flags == NULL)
		return;
	for (guint i = 0; needed[i] != NULL; i++) {
		if (strv_has(flags, needed[i]))
			continue;
		if (missing->len > 0)
			g_string_append(missing, ", ");
		g_string_append(missing, needed[i]);
	}
	disagree = arch == CLI_ARCH_X86 ? cpuid_disagreement(ctx, cpu, flags, x86_flags, x86_flags)
	                                : g_strdup("");
	if (missing->len == 0) {
		detail = g_strdup_printf("AES acceleration visible (%s, %s)%s", needed[0],
		                         needed[1], disagree);
		ctx_pass(ctx, "cpu", detail);
		return;
	}
	detail = g_strdup_printf("no %s in the CPU flags: AES-GCM runs about 2x slower%s",
	                         missing->str, disagree);
	ctx_fire(ctx, "cpu", detail,
	         "use -cpu host (libvirt <cpu mode='host-passthrough'/> or host-model), or a "
	         "named model with +aes,+pclmulqdq");
}

static void rule_cpu_missing_simd(CliAuditCtx *ctx)
{
	g_autoptr(CliScope) cpu = ctx_section(ctx, "cpu");
	g_auto(GStrv) flags = NULL;
	g_autoptr(GString) missing = g_string_new(NULL);
	g_autofree char *detail = NULL;
	const char *const wanted[] = { "avx2", "vaes", "sha_ni" };

	/* these are x86 names; other architectures have other extensions */
	if (cpu_arch(ctx, cpu) != CLI_ARCH_X86)
		return;
	flags = cpu_flags(ctx, cpu);
	if (flags == NULL)
		return;
	for (guint i = 0; i < G_N_ELEMENTS(wanted); i++) {
		if (strv_has(flags, wanted[i]))
			continue;
		if (missing->len > 0)
			g_string_append(missing, ", ");
		g_string_append(missing, wanted[i]);
	}
	if (missing->len == 0) {
		ctx_pass(ctx, "cpu", "avx2, vaes and sha_ni visible");
		return;
	}
	detail = g_strdup_printf("missing %s (the host may lack them, or the CPU model hides "
	                         "them)",
	                         missing->str);
	ctx_fire(ctx, "cpu", detail,
	         "if the host has them, -cpu host (libvirt <cpu mode='host-passthrough'/>) "
	         "exposes them");
}

static void rule_cpu_nested_exposed(CliAuditCtx *ctx)
{
	g_autoptr(CliScope) cpu = ctx_section(ctx, "cpu");
	g_auto(GStrv) flags = NULL;
	g_autofree char *detail = NULL;
	const char *ext = NULL;

	if (cpu_arch(ctx, cpu) != CLI_ARCH_X86)
		return;
	flags = cpu_flags(ctx, cpu);
	if (flags == NULL)
		return;
	if (strv_has(flags, "vmx"))
		ext = "vmx";
	else if (strv_has(flags, "svm"))
		ext = "svm";
	if (ext == NULL) {
		ctx_pass(ctx, "cpu", "no vmx/svm: nested virtualisation not exposed");
		return;
	}
	detail = g_strdup_printf("%s visible: the guest can run its own VMs (nested "
	                         "virtualisation)",
	                         ext);
	ctx_fire(ctx, "cpu", detail,
	         "if the guest does not need nested VMs, hide it: -cpu host,-vmx,-svm or "
	         "libvirt <feature policy='disable' name='vmx'/>");
}

static void rule_cpu_hypervisor(CliAuditCtx *ctx)
{
	const char *vendor = NULL;
	g_autofree char *detail = NULL;
	CliHypervisor kind = cpu_hypervisor(ctx, &vendor);

	switch (kind) {
	case CLI_HV_UNREADABLE:
		/* FACTS-ERRORS says what could not be read */
		return;
	case CLI_HV_TCG:
		ctx_emit(ctx, CLI_LEVEL_WARN, "cpu",
		         "hypervisor TCG: no hardware acceleration, every instruction is emulated",
		         "run QEMU with -accel kvm (libvirt <domain type='kvm'>) on a host with "
		         "/dev/kvm");
		return;
	case CLI_HV_NONE:
		ctx_emit(ctx, CLI_LEVEL_NOTE, "cpu",
		         "no hypervisor detected (bare metal, or the hypervisor bit is hidden)",
		         NULL);
		return;
	case CLI_HV_UNKNOWN:
		if (vendor == NULL) {
			ctx_emit(ctx, CLI_LEVEL_NOTE, "cpu", "hypervisor present, vendor unknown",
			         NULL);
			return;
		}
		detail = g_strdup_printf("unrecognised hypervisor '%s'", vendor);
		ctx_emit(ctx, CLI_LEVEL_NOTE, "cpu", detail, NULL);
		return;
	case CLI_HV_KVM:
	case CLI_HV_VMWARE:
	case CLI_HV_HYPERV:
	case CLI_HV_XEN:
	case CLI_HV_OTHER_HW:
	default:
		detail = g_strdup_printf("hardware-accelerated hypervisor %s",
		                         vendor != NULL ? vendor : "(unnamed)");
		ctx_pass(ctx, "cpu", detail);
		return;
	}
}

/* block helpers */

static gboolean disk_is_cdrom(CliAuditCtx *ctx, CliScope *disk)
{
	gboolean cdrom = FALSE;
	const char *name = NULL;
	/* older agents may not say; sr* is the kernel's name for optical drives */
	if (ctx_get_bool(ctx, disk, "cdrom", TRUE, &cdrom))
		return cdrom;
	if (gb_json_has(disk->obj, "name") &&
	    gb_json_get_string(disk->obj, "name", GB_JSON_REQUIRED, &name, NULL))
		return g_str_has_prefix(name, "sr");
	return FALSE;
}

static const char *const emulated_disk_drivers[] = {
	"ata_piix",     "ahci",          "pata_acpi", "ata_generic", "mptspi",
	"mptsas",       "mptscsih",      "sym53c8xx", "lsi",         "megaraid",
	"megaraid_sas", "megaraid_mbox", "BusLogic",  "am53c974",    NULL,
};
static const char *const emulated_disk_buses[] = { "ata", "sata", NULL };
static const char *const paravirt_disk_buses[] = { "virtio-blk", "virtio-scsi", "nvme",
	                                           "xen",        "hyperv",      NULL };

static void rule_disk_emulated(CliAuditCtx *ctx)
{
	g_autoptr(CliScope) root = ctx_root(ctx);
	g_autoptr(GPtrArray) disks = ctx_get_items(ctx, root, "block", FALSE, "name", NULL);

	for (guint i = 0; i < disks->len; i++) {
		CliScope *disk = g_ptr_array_index(disks, i);
		const char *bus = NULL;
		const char *driver = NULL;
		g_autofree char *detail = NULL;

		if (disk_is_cdrom(ctx, disk))
			continue;
		if (!ctx_get_string(ctx, disk, "bus", FALSE, &bus))
			continue;
		ctx_get_string(ctx, disk, "driver", TRUE, &driver);
		if (str_in(bus, emulated_disk_buses) || str_in(driver, emulated_disk_drivers)) {
			detail = g_strdup_printf("emulated storage: bus %s, driver %s (4 KiB I/O "
			                         "5-7x slower than virtio-blk)",
			                         bus, driver != NULL ? driver : "unknown");
			ctx_fire(
			    ctx, disk->subject, detail,
			    "use virtio-blk: -drive if=virtio (libvirt <target bus='virtio'/>)");
		} else if (str_in(bus, paravirt_disk_buses)) {
			detail = g_strdup_printf("paravirtual storage: bus %s", bus);
			ctx_pass(ctx, disk->subject, detail);
		}
	}
}

static const char *const cached_disk_buses[] = { "virtio-blk", "virtio-scsi", "scsi", "nvme",
	                                         NULL };

static void rule_disk_write_through(CliAuditCtx *ctx)
{
	g_autoptr(CliScope) root = ctx_root(ctx);
	g_autoptr(GPtrArray) disks = ctx_get_items(ctx, root, "block", FALSE, "name", NULL);

	for (guint i = 0; i < disks->len; i++) {
		CliScope *disk = g_ptr_array_index(disks, i);
		const char *bus = NULL;
		const char *cache = NULL;
		g_autofree char *detail = NULL;

		if (disk_is_cdrom(ctx, disk))
			continue;
		if (!ctx_get_string(ctx, disk, "bus", FALSE, &bus) ||
		    !str_in(bus, cached_disk_buses))
			continue;
		if (!ctx_get_string(ctx, disk, "write_cache", TRUE, &cache))
			continue;
		if (g_strcmp0(cache, "write through") == 0) {
			detail = g_strdup_printf("%s disk with a write-through cache: every write "
			                         "waits for the host's disk",
			                         bus);
			ctx_fire(ctx, disk->subject, detail,
			         "use cache=none with io=native (libvirt <driver cache='none' "
			         "io='native'/>)");
		} else {
			detail = g_strdup_printf("write cache '%s'", cache);
			ctx_pass(ctx, disk->subject, detail);
		}
	}
}

static void rule_disk_scheduler(CliAuditCtx *ctx)
{
	g_autoptr(CliScope) root = ctx_root(ctx);
	g_autoptr(GPtrArray) disks = ctx_get_items(ctx, root, "block", FALSE, "name", NULL);
	const char *const fast_buses[] = { "virtio-blk", "nvme", NULL };

	for (guint i = 0; i < disks->len; i++) {
		CliScope *disk = g_ptr_array_index(disks, i);
		const char *bus = NULL;
		const char *name = NULL;
		const char *sched = NULL;
		g_autofree char *detail = NULL;
		g_autofree char *hint = NULL;

		if (!ctx_get_string(ctx, disk, "bus", FALSE, &bus) || !str_in(bus, fast_buses))
			continue;
		if (!ctx_get_string(ctx, disk, "scheduler", TRUE, &sched))
			continue;
		if (g_strcmp0(sched, "none") == 0) {
			ctx_pass(ctx, disk->subject, "I/O scheduler none");
			continue;
		}
		if (!gb_json_get_string(disk->obj, "name", GB_JSON_OPTIONAL, &name, NULL) ||
		    name == NULL)
			name = "DISK";
		detail = g_strdup_printf("%s disk on I/O scheduler '%s': the host schedules "
		                         "already, 'none' saves CPU",
		                         bus, sched);
		hint = g_strdup_printf("echo none > /sys/block/%s/queue/scheduler, and a udev "
		                       "rule to keep it",
		                       name);
		ctx_fire(ctx, disk->subject, detail, hint);
	}
}

/* net */

static const char *const emulated_nic_drivers[] = {
	"e1000", "e1000e", "8139cp", "8139too", "ne2k_pci", "pcnet32", NULL,
};

static void rule_nic_emulated(CliAuditCtx *ctx)
{
	g_autoptr(CliScope) root = ctx_root(ctx);
	g_autoptr(GPtrArray) nics = ctx_get_items(ctx, root, "net", FALSE, "name", NULL);
	CliHypervisor hv = CLI_HV_UNKNOWN;

	if (nics->len > 0)
		hv = cpu_hypervisor(ctx, NULL);
	for (guint i = 0; i < nics->len; i++) {
		CliScope *nic = g_ptr_array_index(nics, i);
		const char *driver = NULL;
		g_autofree char *detail = NULL;
		const char *hint;

		/* no driver: a virtual interface (bridge, veth, ...) */
		if (!ctx_get_string(ctx, nic, "driver", TRUE, &driver))
			continue;
		switch (hv) {
		case CLI_HV_VMWARE:
			hint = "use vmxnet3 (ethernet0.virtualDev = \"vmxnet3\")";
			break;
		case CLI_HV_HYPERV:
			hint = "use a synthetic network adapter (hv_netvsc)";
			break;
		case CLI_HV_XEN:
			hint = "use a paravirtual vif (xen-netfront)";
			break;
		default:
			hint = "use virtio-net: -device virtio-net-pci (libvirt <model "
			       "type='virtio'/>)";
			break;
		}
		if (str_in(driver, emulated_nic_drivers) ||
		    (g_strcmp0(driver, "vmxnet3") == 0 && (hv == CLI_HV_KVM || hv == CLI_HV_TCG))) {
			detail = g_strdup_printf("emulated NIC (driver %s): throughput capped by "
			                         "one host thread",
			                         driver);
			ctx_fire(ctx, nic->subject, detail, hint);
		} else {
			detail = g_strdup_printf("driver %s is not an emulated NIC model", driver);
			ctx_pass(ctx, nic->subject, detail);
		}
	}
}

static void rule_nic_single_queue(CliAuditCtx *ctx)
{
	g_autoptr(CliScope) root = ctx_root(ctx);
	g_autoptr(GPtrArray) nics = ctx_get_items(ctx, root, "net", FALSE, "name", NULL);
	g_autoptr(CliScope) cpu = NULL;
	gint64 count = 0;
	gboolean have_count = FALSE;

	for (guint i = 0; i < nics->len; i++) {
		CliScope *nic = g_ptr_array_index(nics, i);
		const char *driver = NULL;
		const char *name = NULL;
		gint64 rxq = 0;
		g_autofree char *detail = NULL;
		g_autofree char *hint = NULL;

		if (!ctx_get_string(ctx, nic, "driver", TRUE, &driver) ||
		    g_strcmp0(driver, "virtio_net") != 0)
			continue;
		if (cpu == NULL) {
			cpu = ctx_section(ctx, "cpu");
			have_count = ctx_get_int(ctx, cpu, "count", FALSE, 1, G_MAXINT32, &count);
		}
		if (!have_count)
			return;
		if (!ctx_get_int(ctx, nic, "rx_queues", FALSE, 0, G_MAXINT32, &rxq))
			continue;
		if (count <= 1 || rxq >= count) {
			detail = g_strdup_printf(
			    "%" G_GINT64_FORMAT " rx queue%s for %" G_GINT64_FORMAT " vCPU%s", rxq,
			    rxq == 1 ? "" : "s", count, count == 1 ? "" : "s");
			ctx_pass(ctx, nic->subject, detail);
			continue;
		}
		if (!gb_json_get_string(nic->obj, "name", GB_JSON_OPTIONAL, &name, NULL) ||
		    name == NULL)
			name = "eth0";
		detail = g_strdup_printf("%" G_GINT64_FORMAT " rx queue%s for %" G_GINT64_FORMAT
		                         " vCPUs: receive work lands on %s",
		                         rxq, rxq == 1 ? "" : "s", count,
		                         rxq == 1 ? "one CPU" : "fewer CPUs");
		hint =
		    g_strdup_printf("libvirt <driver name='vhost' queues='%" G_GINT64_FORMAT
		                    "'/> or -device virtio-net-pci,mq=on,vectors=%" G_GINT64_FORMAT
		                    ", then ethtool -L %s combined %" G_GINT64_FORMAT,
		                    count, 2 * count + 2, name, count);
		ctx_fire(ctx, nic->subject, detail, hint);
	}
}

/* clock, memory, steal */

static void rule_clock_source(CliAuditCtx *ctx)
{
	g_autoptr(CliScope) clock = ctx_section(ctx, "clocksource");
	g_auto(GStrv) available = NULL;
	g_autofree char *detail = NULL;
	g_autofree char *hint = NULL;
	const char *current = NULL;
	const char *const slow[] = { "hpet", "acpi_pm", "jiffies", "refined-jiffies", "pit", NULL };
	const char *const good[] = {
		"kvm-clock", "tsc", "hyperv_clocksource_tsc_page", "xen", "arch_sys_counter", NULL
	};
	const char *better = NULL;

	if (!ctx_get_string(ctx, clock, "current", FALSE, &current))
		return;
	if (!str_in(current, slow)) {
		detail = g_strdup_printf("clocksource %s", current);
		ctx_pass(ctx, "clocksource", detail);
		return;
	}
	ctx_get_strv(ctx, clock, "available", TRUE, &available);
	for (guint i = 0; good[i] != NULL && better == NULL; i++) {
		if (strv_has(available, good[i]))
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
	ctx_fire(ctx, "clocksource", detail, hint);
}

static void rule_numa_memoryless_node(CliAuditCtx *ctx)
{
	g_autoptr(CliScope) memory = ctx_section(ctx, "memory");
	g_autoptr(CliScope) numa = ctx_get_scope(ctx, memory, "numa", FALSE);
	g_autoptr(GPtrArray) nodes = ctx_get_items(ctx, numa, "nodes", FALSE, NULL, NULL);
	gboolean any_bad = FALSE;
	guint n_checked = 0;

	for (guint i = 0; i < nodes->len; i++) {
		CliScope *node = g_ptr_array_index(nodes, i);
		g_autoptr(GArray) cpus = NULL;
		g_autofree char *subject = NULL;
		g_autofree char *detail = NULL;
		gint64 id = i;
		gint64 mem = 0;
		gboolean ok = TRUE;

		/* read all three so that every bad one is reported */
		if (!ctx_get_int(ctx, node, "id", FALSE, 0, G_MAXINT32, &id))
			id = i;
		else
			/* the agent names nodes "memory.numa.node1" in its errors */
			node->alias = g_strdup_printf("memory.numa.node%" G_GINT64_FORMAT, id);
		if (!ctx_get_int_array(ctx, node, "cpus", 0, G_MAXINT32, &cpus))
			ok = FALSE;
		if (!ctx_get_int(ctx, node, "memory_bytes", FALSE, 0, G_MAXINT64, &mem))
			ok = FALSE;
		if (!ok)
			continue;
		n_checked++;
		subject = g_strdup_printf("numa/node%" G_GINT64_FORMAT, id);
		if (cpus->len > 0 && mem == 0) {
			detail = g_strdup_printf("node %" G_GINT64_FORMAT " has %u CPU%s and no "
			                         "memory: every access from them is remote",
			                         id, cpus->len, cpus->len == 1 ? "" : "s");
		} else if (cpus->len == 0 && mem > 0) {
			detail = g_strdup_printf("node %" G_GINT64_FORMAT " has memory and no "
			                         "CPUs: its memory is remote to every vCPU",
			                         id);
		}
		if (detail == NULL)
			continue;
		any_bad = TRUE;
		ctx_fire(ctx, subject, detail,
		         "give every guest NUMA cell both vCPUs and memory (libvirt <numa><cell "
		         "cpus='...' memory='...'/>, -numa node,cpus=...,memdev=...)");
	}
	if (!any_bad && n_checked > 0)
		ctx_pass(ctx, "numa", "every NUMA node has CPUs and memory");
}

static void rule_numa_span(CliAuditCtx *ctx)
{
	g_autoptr(CliScope) memory = ctx_section(ctx, "memory");
	g_autoptr(CliScope) numa = ctx_get_scope(ctx, memory, "numa", FALSE);
	guint n_bad = 0;
	g_autoptr(GPtrArray) nodes = ctx_get_items(ctx, numa, "nodes", FALSE, NULL, &n_bad);
	g_autofree char *detail = NULL;

	/* a node that could not be read would make the count wrong */
	if (nodes->len == 0 || n_bad > 0)
		return;
	if (nodes->len == 1) {
		ctx_pass(ctx, "numa", "one NUMA node");
		return;
	}
	detail = g_strdup_printf("the guest spans %u NUMA nodes", nodes->len);
	ctx_fire(ctx, "numa", detail,
	         "pin vCPUs and memory to matching host nodes (libvirt <numatune>, "
	         "<vcpupin>), or keep the guest on one node");
}

static void rule_hugepages(CliAuditCtx *ctx)
{
	g_autoptr(CliScope) memory = ctx_section(ctx, "memory");
	g_autoptr(CliScope) huge = NULL;
	g_autofree char *total_str = NULL;
	g_autofree char *detail = NULL;
	const char *thp = NULL;
	gint64 total = 0;
	gint64 pages = 0;

	if (!ctx_get_int(ctx, memory, "total_bytes", FALSE, 0, G_MAXINT64, &total))
		return;
	total_str = g_strdup_printf("%.1f GiB", (double)total / (double)GIB);
	if (total <= HUGEPAGES_MIN_BYTES) {
		detail = g_strdup_printf("%s of memory: huge pages matter little at 8 GiB or less",
		                         total_str);
		ctx_pass(ctx, "memory", detail);
		return;
	}
	huge = ctx_get_scope(ctx, memory, "hugepages", FALSE);
	if (!ctx_get_int(ctx, huge, "total", FALSE, 0, G_MAXINT64, &pages))
		return;
	ctx_get_string(ctx, memory, "thp", TRUE, &thp);
	if (pages > 0 || g_strcmp0(thp, "always") == 0 || g_strcmp0(thp, "madvise") == 0) {
		detail = g_strdup_printf("%" G_GINT64_FORMAT " static huge pages, THP %s", pages,
		                         thp != NULL ? thp : "unavailable");
		ctx_pass(ctx, "memory", detail);
		return;
	}
	detail = g_strdup_printf("%s of memory, no static huge pages and THP %s: every TLB miss "
	                         "walks 4 KiB pages",
	                         total_str, thp != NULL ? thp : "unavailable");
	ctx_fire(ctx, "memory", detail,
	         "reserve huge pages (vm.nr_hugepages, hugepagesz= on the kernel command line) or "
	         "echo madvise > /sys/kernel/mm/transparent_hugepage/enabled");
}

static void rule_steal_time(CliAuditCtx *ctx)
{
	g_autoptr(CliScope) steal = ctx_section(ctx, "steal");
	g_autofree char *detail = NULL;
	double percent = 0;
	gint64 window = 0;

	if (!ctx_get_double(ctx, steal, "percent", TRUE, 0.0, 100.0, &percent))
		return;
	if (!gb_json_get_int(steal->obj, "window_ms", GB_JSON_OPTIONAL, 0, G_MAXINT32, &window,
	                     NULL))
		window = 0;
	if (percent <= STEAL_WARN_PERCENT) {
		detail = g_strdup_printf("steal time %.1f %% over %" G_GINT64_FORMAT " ms", percent,
		                         window);
		ctx_pass(ctx, "steal", detail);
		return;
	}
	detail = g_strdup_printf("steal time %.1f %% over %" G_GINT64_FORMAT " ms (above %.0f %%): "
	                         "the host is overcommitted",
	                         percent, window, STEAL_WARN_PERCENT);
	ctx_fire(ctx, "steal", detail,
	         "give the guest dedicated host CPUs (libvirt <vcpupin>, <emulatorpin>) or move "
	         "load off the host");
}

/* FACTS-ERRORS runs last: it reports what the rules before it could not read. */
static void rule_facts_errors(CliAuditCtx *ctx)
{
	g_autoptr(CliScope) root = ctx_root(ctx);
	g_autoptr(GPtrArray) errors = ctx_get_items(ctx, root, "errors", TRUE, NULL, NULL);
	guint n_notes = 0;

	for (guint i = 0; i < errors->len; i++) {
		CliScope *entry = g_ptr_array_index(errors, i);
		const char *member = NULL;
		const char *reason = NULL;
		g_autofree char *detail = NULL;

		if (!gb_json_get_string(entry->obj, "member", GB_JSON_REQUIRED, &member, NULL) ||
		    !gb_json_get_string(entry->obj, "reason", GB_JSON_OPTIONAL, &reason, NULL)) {
			ctx_add_unknown(ctx, entry->path);
			continue;
		}
		detail = g_strdup_printf("the agent could not read %s: %s", member,
		                         reason != NULL ? reason : "no reason given");
		ctx_fire(ctx, member, detail, NULL);
		n_notes++;
	}
	for (guint i = 0; i < ctx->unknown->len; i++) {
		CliUnknown *unknown = g_ptr_array_index(ctx->unknown, i);
		g_autofree char *detail = NULL;

		detail = g_strdup_printf("unknown: %s missing or of the wrong type (needed by %s)",
		                         unknown->path, unknown->rules->str);
		ctx_fire(ctx, unknown->path, detail,
		         "check the agent version; facts from a newer or older agent may differ");
		n_notes++;
	}
	if (n_notes == 0)
		ctx_pass(ctx, "facts", "every member the rules need was read");
}

static const CliAuditRule rules[] = {
	{ { "CPU-LEGACY-MODEL", CLI_LEVEL_FAIL,
	    "legacy CPU model (qemu64, kvm64, ...) hides AES-NI and more" },
	  rule_cpu_legacy_model },
	{ { "CPU-NO-AESNI", CLI_LEVEL_FAIL, "no aes or pclmulqdq in the CPU flags" },
	  rule_cpu_no_aesni },
	{ { "CPU-MISSING-SIMD", CLI_LEVEL_NOTE, "no avx2, vaes or sha_ni" },
	  rule_cpu_missing_simd },
	{ { "CPU-NESTED-EXPOSED", CLI_LEVEL_NOTE, "vmx or svm visible (nested virtualisation)" },
	  rule_cpu_nested_exposed },
	{ { "CPU-HYPERVISOR", CLI_LEVEL_WARN,
	    "hypervisor: TCG (no acceleration) warns, none or unknown is noted" },
	  rule_cpu_hypervisor },
	{ { "DISK-EMULATED", CLI_LEVEL_WARN, "disk on an emulated controller (IDE, AHCI, LSI)" },
	  rule_disk_emulated },
	{ { "DISK-WRITE-THROUGH", CLI_LEVEL_WARN, "paravirtual disk with a write-through cache" },
	  rule_disk_write_through },
	{ { "DISK-SCHEDULER", CLI_LEVEL_NOTE, "virtio-blk/nvme disk not on scheduler none" },
	  rule_disk_scheduler },
	{ { "NIC-EMULATED", CLI_LEVEL_WARN, "emulated NIC (e1000, rtl8139, vmxnet3 on KVM, ...)" },
	  rule_nic_emulated },
	{ { "NIC-SINGLE-QUEUE", CLI_LEVEL_NOTE, "virtio-net with fewer queues than vCPUs" },
	  rule_nic_single_queue },
	{ { "CLOCK-SOURCE", CLI_LEVEL_WARN, "slow clocksource (hpet, acpi_pm, jiffies, pit)" },
	  rule_clock_source },
	{ { "NUMA-MEMORYLESS-NODE", CLI_LEVEL_WARN,
	    "NUMA node with CPUs and no memory, or "
	    "the reverse" },
	  rule_numa_memoryless_node },
	{ { "NUMA-SPAN", CLI_LEVEL_NOTE, "guest spans more than one NUMA node" }, rule_numa_span },
	{ { "HUGEPAGES", CLI_LEVEL_NOTE, "over 8 GiB with no static huge pages and THP never" },
	  rule_hugepages },
	{ { "STEAL-TIME", CLI_LEVEL_WARN, "steal time above 5 %" }, rule_steal_time },
	{ { "FACTS-ERRORS", CLI_LEVEL_NOTE, "facts the agent or the rules could not read" },
	  rule_facts_errors },
};

const CliAuditRuleInfo *cli_audit_rules(guint *n_rules)
{
	static CliAuditRuleInfo infos[G_N_ELEMENTS(rules)];
	static gsize once = 0;

	if (g_once_init_enter(&once)) {
		for (guint i = 0; i < G_N_ELEMENTS(rules); i++)
			infos[i] = rules[i].info;
		g_once_init_leave(&once, 1);
	}
	if (n_rules != NULL)
		*n_rules = G_N_ELEMENTS(rules);
	return infos;
}

/* Collects the "member" of every well-formed agent errors entry, quietly. */
static void ctx_collect_reported(CliAuditCtx *ctx)
{
	JsonArray *errors = NULL;

	if (!gb_json_get_array(ctx->facts, "errors", GB_JSON_OPTIONAL, &errors, NULL) ||
	    errors == NULL)
		return;
	for (guint i = 0; i < json_array_get_length(errors); i++) {
		JsonObject *entry = NULL;
		const char *member = NULL;
		if (!gb_json_node_get_object(json_array_get_element(errors, i), "errors[]", &entry,
		                             NULL))
			continue;
		if (gb_json_get_string(entry, "member", GB_JSON_REQUIRED, &member, NULL))
			g_ptr_array_add(ctx->reported, (gpointer)member);
	}
}

GPtrArray *cli_audit_run(JsonObject *facts)
{
	/* no document at all audits like an empty one: every section unknown */
	g_autoptr(JsonObject) empty = facts == NULL ? json_object_new() : NULL;
	CliAuditCtx ctx = {
		.facts = facts != NULL ? facts : empty,
		.findings = g_ptr_array_new_with_free_func((GDestroyNotify)cli_finding_free),
		.reported = g_ptr_array_new(),
		.unknown = g_ptr_array_new_with_free_func(cli_unknown_free),
		.unknown_by_path = g_hash_table_new(g_str_hash, g_str_equal),
	};

	ctx_collect_reported(&ctx);
	for (guint i = 0; i < G_N_ELEMENTS(rules); i++) {
		ctx.rule = &rules[i];
		rules[i].func(&ctx);
	}
	g_hash_table_unref(ctx.unknown_by_path);
	g_ptr_array_unref(ctx.unknown);
	g_ptr_array_unref(ctx.reported);
	return ctx.findings;
}
