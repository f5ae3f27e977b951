/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"

#include <string.h>

#include "analysis/rules.h"

/*
 * The audit: one row in rules[] and one function each (rules-cpu.c,
 * rules-io.c, rules-system.c). The facts are read once into a CliFacts; a
 * rule says which members it needs (cli_rule_need*()), and whatever it
 * needed but could not read is reported by FACTS-ERRORS at the end, so a
 * broken or hostile facts document is audited as far as possible, never
 * silently and never with a crash.
 */

typedef struct {
	CliAuditRuleInfo info;
	void (*func)(CliAuditCtx *ctx);
} CliAuditRule;

typedef struct {
	char *path;
	GString *rules; /* "CPU-NO-AESNI, CPU-MISSING-SIMD" */
} CliRuleUnknown;

static void cli_rule_unknown_free(gpointer data)
{
	CliRuleUnknown *unknown = data;
	g_free(unknown->path);
	g_string_free(unknown->rules, TRUE);
	g_free(unknown);
}

static char *path_join(const char *prefix, const char *member)
{
	if (prefix == NULL || prefix[0] == '\0')
		return g_strdup(member);
	return g_strdup_printf("%s.%s", prefix, member);
}

/*
 * The agent's error members, to find whether one covers a path. A guest
 * chooses how many errors it sends and how long a name (so a path) is, and a
 * path is covered by its prefix at any '.' or '['. Each prefix is looked up
 * by a hash carried along as the path is read once, so a path costs its
 * length, whatever the number of errors or of prefixes. The hash is a
 * polynomial modulo 2^31 - 1 in two bases drawn at random, so a guest cannot
 * make strings collide in it.
 */
#define REPORTED_PRIME G_GUINT64_CONSTANT(2147483647)

typedef struct {
	const char *str; /* borrowed from the facts */
	gsize len;
	guint64 hash;
} ReportedKey;

typedef struct {
	guint64 h1, h2;
} ReportedHash;

static guint64 reported_bases[2];

static void reported_hash_step(ReportedHash *h, guchar c)
{
	h->h1 = (h->h1 * reported_bases[0] + c + 1) % REPORTED_PRIME;
	h->h2 = (h->h2 * reported_bases[1] + c + 1) % REPORTED_PRIME;
}

static guint64 reported_hash_value(const ReportedHash *h)
{
	return h->h1 << 32 | h->h2;
}

static guint reported_key_hash(gconstpointer data)
{
	const ReportedKey *key = data;
	return (guint)(key->hash ^ (key->hash >> 32));
}

static gboolean reported_key_equal(gconstpointer a, gconstpointer b)
{
	const ReportedKey *x = a;
	const ReportedKey *y = b;
	return x->hash == y->hash && x->len == y->len && memcmp(x->str, y->str, x->len) == 0;
}

static GHashTable *reported_new(void)
{
	static gsize once = 0;

	if (g_once_init_enter(&once)) {
		reported_bases[0] = (guint64)g_random_int_range(1 << 16, G_MAXINT32);
		reported_bases[1] = (guint64)g_random_int_range(1 << 16, G_MAXINT32);
		g_once_init_leave(&once, 1);
	}
	return g_hash_table_new_full(reported_key_hash, reported_key_equal, g_free, NULL);
}

static void reported_add(GHashTable *reported, const char *member)
{
	ReportedKey *key = g_new0(ReportedKey, 1);
	ReportedHash h = { 0, 0 };

	key->str = member;
	key->len = strlen(member);
	for (gsize i = 0; i < key->len; i++)
		reported_hash_step(&h, (guchar)member[i]);
	key->hash = reported_hash_value(&h);
	/*
	 * An empty member covers nothing, and a member named twice is kept once.
	 * Not g_hash_table_add()'s return value: on a repeat it has already put
	 * the new key in the table (freeing the old one), so it is not ours to free.
	 */
	if (key->len == 0 || g_hash_table_contains(reported, key)) {
		g_free(key);
		return;
	}
	g_hash_table_add(reported, key);
}

/* An agent error on "memory" covers "memory.thp"; one on "block[1]" covers "block[1].bus". */
static gboolean ctx_path_reported(CliAuditCtx *ctx, const char *path)
{
	ReportedHash h = { 0, 0 };

	if (g_hash_table_size(ctx->reported) == 0)
		return FALSE;
	for (gsize i = 0;; i++) {
		char c = path[i];

		if (i > 0 && (c == '\0' || c == '.' || c == '[')) {
			ReportedKey key = { path, i, reported_hash_value(&h) };
			if (g_hash_table_contains(ctx->reported, &key))
				return TRUE;
		}
		if (c == '\0')
			return FALSE;
		reported_hash_step(&h, (guchar)c);
	}
}

/* The agent names a disk's member "block[2].bus", "block.vda.bus" or "block/vda.bus". */
static gboolean ctx_fact_reported(CliAuditCtx *ctx, const CliFact *fact)
{
	g_autofree char *path = cli_fact_path(fact);
	g_autofree char *alias = NULL;
	char *dot;

	if (ctx_path_reported(ctx, path))
		return TRUE;
	if (fact->member == NULL || fact->parent == NULL || fact->parent->alias == NULL)
		return FALSE;
	alias = path_join(fact->parent->alias, fact->member);
	if (ctx_path_reported(ctx, alias))
		return TRUE;
	dot = strchr(alias, '.');
	if (dot != NULL)
		*dot = '/';
	return ctx_path_reported(ctx, alias);
}

static void ctx_add_unknown(CliAuditCtx *ctx, const char *path)
{
	CliRuleUnknown *unknown = g_hash_table_lookup(ctx->unknown_by_path, path);
	if (unknown == NULL) {
		unknown = g_new0(CliRuleUnknown, 1);
		unknown->path = g_strdup(path);
		unknown->rules = g_string_new(NULL);
		g_ptr_array_add(ctx->unknown, unknown);
		g_hash_table_insert(ctx->unknown_by_path, unknown->path, unknown);
	}
	if (strstr(unknown->rules->str, ctx->rule->id) == NULL) {
		if (unknown->rules->len > 0)
			g_string_append(unknown->rules, ", ");
		g_string_append(unknown->rules, ctx->rule->id);
	}
}

/*
 * null is the agent's way of saying "could not read, see errors": when an
 * errors entry covers the member, that entry is the better report. A wrong
 * type is always noted.
 */
static void ctx_note_unknown(CliAuditCtx *ctx, const CliFact *fact, gboolean wrong_type)
{
	g_autofree char *path = NULL;

	if (!wrong_type && ctx_fact_reported(ctx, fact))
		return;
	path = cli_fact_path(fact);
	ctx_add_unknown(ctx, path);
}

void cli_rule_note(CliAuditCtx *ctx, const CliFact *fact)
{
	ctx_note_unknown(ctx, fact, FALSE);
}

gboolean cli_rule_need(CliAuditCtx *ctx, const CliFact *fact, gboolean nullable)
{
	switch (fact->state) {
	case CLI_FACT_OK:
		return TRUE;
	case CLI_FACT_ABSENT:
	case CLI_FACT_NULL:
		if (!nullable)
			ctx_note_unknown(ctx, fact, FALSE);
		return FALSE;
	case CLI_FACT_WRONG_TYPE:
		ctx_note_unknown(ctx, fact, TRUE);
		return FALSE;
	case CLI_FACT_NO_PARENT:
	default:
		/* the object it lives in was noted */
		return FALSE;
	}
}

gboolean cli_rule_need_int(CliAuditCtx *ctx, const CliFactInt *fact, gboolean nullable, gint64 min,
                           gint64 max, gint64 *out)
{
	if (!cli_rule_need(ctx, &fact->fact, nullable))
		return FALSE;
	if (fact->value < min || fact->value > max) {
		ctx_note_unknown(ctx, &fact->fact, TRUE);
		return FALSE;
	}
	*out = fact->value;
	return TRUE;
}

gboolean cli_rule_need_double(CliAuditCtx *ctx, const CliFactDouble *fact, gboolean nullable,
                              double min, double max, double *out)
{
	if (!cli_rule_need(ctx, &fact->fact, nullable))
		return FALSE;
	if (fact->value < min || fact->value > max) {
		ctx_note_unknown(ctx, &fact->fact, TRUE);
		return FALSE;
	}
	*out = fact->value;
	return TRUE;
}

gboolean cli_rule_need_int_array(CliAuditCtx *ctx, const CliFactIntArray *fact, gint64 min,
                                 gint64 max)
{
	if (!cli_rule_need(ctx, &fact->fact, FALSE))
		return FALSE;
	for (guint i = 0; i < fact->value->len; i++) {
		gint64 value = g_array_index(fact->value, gint64, i);
		if (value < min || value > max) {
			ctx_note_unknown(ctx, &fact->fact, TRUE);
			return FALSE;
		}
	}
	return TRUE;
}

guint cli_rule_need_items(CliAuditCtx *ctx, const CliFactsList *list, gboolean nullable,
                          gssize name_offset, guint *n_bad)
{
	guint n_ok = 0;

	if (n_bad != NULL)
		*n_bad = 0;
	if (!cli_rule_need(ctx, &list->fact, nullable)) {
		if (n_bad != NULL && list->fact.state == CLI_FACT_WRONG_TYPE)
			*n_bad = 1;
		return 0;
	}
	for (guint i = 0; i < list->items->len; i++) {
		gpointer item = g_ptr_array_index(list->items, i);
		const CliFactsNode *node = item;

		if (!cli_fact_ok(&node->fact)) {
			ctx_add_unknown(ctx, node->path);
			if (n_bad != NULL)
				(*n_bad)++;
			continue;
		}
		n_ok++;
		if (name_offset >= 0)
			cli_rule_need(ctx, G_STRUCT_MEMBER_P(item, name_offset), FALSE);
	}
	return n_ok;
}

char *cli_rule_item_subject(const CliFactsNode *node, const CliFactString *name,
                            const char *section)
{
	if (cli_fact_ok(&name->fact) && name->value[0] != '\0')
		return g_strdup_printf("%s/%s", section, name->value);
	return g_strdup(node->path);
}

void cli_rule_emit(CliAuditCtx *ctx, CliLevel level, const char *subject, const char *detail,
                   const char *hint)
{
	g_ptr_array_add(ctx->findings,
	                cli_finding_new(ctx->rule->id, level, subject, detail, hint));
}

void cli_rule_fire(CliAuditCtx *ctx, const char *subject, const char *detail, const char *hint)
{
	cli_rule_emit(ctx, ctx->rule->level, subject, detail, hint);
}

void cli_rule_pass(CliAuditCtx *ctx, const char *subject, const char *detail)
{
	cli_rule_emit(ctx, CLI_LEVEL_PASS, subject, detail, NULL);
}

gboolean cli_rule_strv_has(char *const *strv, const char *str)
{
	return strv != NULL && g_strv_contains((const char *const *)strv, str);
}

gboolean cli_rule_str_in(const char *str, const char *const *list)
{
	return str != NULL && g_strv_contains(list, str);
}

gboolean cli_rule_need_hypervisor(CliAuditCtx *ctx, gboolean *present, const char **vendor_out)
{
	const CliFactsHypervisor *hv = &ctx->facts->cpu.hypervisor;
	const char *vendor = NULL;
	const char *signature = NULL;

	if (vendor_out != NULL)
		*vendor_out = NULL;
	cli_rule_need(ctx, &ctx->facts->cpu.node.fact, FALSE);
	cli_rule_need(ctx, &hv->node.fact, FALSE);
	if (!cli_rule_need(ctx, &hv->present.fact, FALSE))
		return FALSE;
	*present = hv->present.value;
	if (!*present)
		return TRUE;
	if (cli_rule_need(ctx, &hv->vendor.fact, TRUE))
		vendor = hv->vendor.value;
	if (cli_rule_need(ctx, &hv->signature.fact, TRUE))
		signature = hv->signature.value;
	if (vendor_out != NULL)
		*vendor_out = vendor != NULL ? vendor : signature;
	return TRUE;
}

/* FACTS-ERRORS runs last: it reports what the rules before it could not read. */
static void rule_facts_errors(CliAuditCtx *ctx)
{
	const CliFactsList *errors = &ctx->facts->errors;
	guint n_notes = 0;

	cli_rule_need_items(ctx, errors, TRUE, -1, NULL);
	for (guint i = 0; errors->items != NULL && i < errors->items->len; i++) {
		const CliFactsError *entry = g_ptr_array_index(errors->items, i);
		g_autofree char *detail = NULL;

		if (!cli_fact_ok(&entry->node.fact))
			continue;
		/* a reason may be null; a member the agent could not name is no report */
		if (!cli_fact_ok(&entry->member.fact) ||
		    entry->reason.fact.state == CLI_FACT_WRONG_TYPE) {
			ctx_add_unknown(ctx, entry->node.path);
			continue;
		}
		detail = g_strdup_printf("the agent could not read %s: %s", entry->member.value,
		                         cli_fact_string_or(&entry->reason, "no reason given"));
		cli_rule_fire(ctx, entry->member.value, detail, NULL);
		n_notes++;
	}
	for (guint i = 0; i < ctx->unknown->len; i++) {
		CliRuleUnknown *unknown = g_ptr_array_index(ctx->unknown, i);
		g_autofree char *detail = NULL;

		detail = g_strdup_printf("unknown: %s missing or of the wrong type (needed by %s)",
		                         unknown->path, unknown->rules->str);
		cli_rule_fire(
		    ctx, unknown->path, detail,
		    "check the agent version; facts from a newer or older agent may differ");
		n_notes++;
	}
	if (n_notes == 0)
		cli_rule_pass(ctx, "facts", "every member the rules need was read");
}

static const CliAuditRule rules[] = {
	{ { "CPU-LEGACY-MODEL", CLI_LEVEL_FAIL,
	    "legacy CPU model (qemu64, kvm64, ...) hides AES-NI and more" },
	  cli_rule_cpu_legacy_model },
	{ { "CPU-NO-AESNI", CLI_LEVEL_FAIL,
	    "no aes or pclmulqdq (aarch64: aes or pmull) in the CPU flags" },
	  cli_rule_cpu_no_aesni },
	{ { "CPU-MISSING-SIMD", CLI_LEVEL_NOTE, "no avx2, vaes or sha_ni" },
	  cli_rule_cpu_missing_simd },
	{ { "CPU-NESTED-EXPOSED", CLI_LEVEL_NOTE, "vmx or svm visible (nested virtualisation)" },
	  cli_rule_cpu_nested_exposed },
	{ { "CPU-HYPERVISOR", CLI_LEVEL_WARN,
	    "hypervisor: TCG (no acceleration) warns, none or unknown is noted" },
	  cli_rule_cpu_hypervisor },
	{ { "CPU-ISA-LEVEL", CLI_LEVEL_NOTE,
	    "x86-64 ISA level (v1..v4), aarch64 Armv8.x/Armv9.x; FAIL below --require-level" },
	  cli_rule_cpu_isa_level },
	{ { "CPU-REQUIRED-FLAGS", CLI_LEVEL_FAIL, "a CPU flag of --require-flags is missing" },
	  cli_rule_cpu_required_flags },
	{ { "CPU-VULNERABLE", CLI_LEVEL_WARN,
	    "the guest kernel reports a vulnerability the CPU model leaves unmitigated" },
	  cli_rule_cpu_vulnerable },
	{ { "DISK-EMULATED", CLI_LEVEL_WARN, "disk on an emulated controller (IDE, AHCI, LSI)" },
	  cli_rule_disk_emulated },
	{ { "DISK-WRITE-THROUGH", CLI_LEVEL_WARN, "paravirtual disk with a write-through cache" },
	  cli_rule_disk_write_through },
	{ { "DISK-SCHEDULER", CLI_LEVEL_NOTE, "virtio-blk/nvme disk not on scheduler none" },
	  cli_rule_disk_scheduler },
	{ { "NIC-EMULATED", CLI_LEVEL_WARN, "emulated NIC (e1000, rtl8139, vmxnet3 on KVM, ...)" },
	  cli_rule_nic_emulated },
	{ { "NIC-SINGLE-QUEUE", CLI_LEVEL_NOTE, "virtio-net with fewer queues than vCPUs" },
	  cli_rule_nic_single_queue },
	{ { "CLOCK-SOURCE", CLI_LEVEL_WARN, "slow clocksource (hpet, acpi_pm, jiffies, pit)" },
	  cli_rule_clock_source },
	{ { "NUMA-MEMORYLESS-NODE", CLI_LEVEL_WARN,
	    "NUMA node with CPUs and no memory, or "
	    "the reverse" },
	  cli_rule_numa_memoryless_node },
	{ { "NUMA-SPAN", CLI_LEVEL_NOTE, "guest spans more than one NUMA node" },
	  cli_rule_numa_span },
	{ { "HUGEPAGES", CLI_LEVEL_NOTE, "over 8 GiB with no static huge pages and THP never" },
	  cli_rule_hugepages },
	{ { "STEAL-TIME", CLI_LEVEL_WARN, "steal time above 5 %" }, cli_rule_steal_time },
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

/* The "member" of every well-formed agent errors entry, which covers what it names. */
static void ctx_collect_reported(CliAuditCtx *ctx)
{
	const CliFactsList *errors = &ctx->facts->errors;

	if (!cli_fact_ok(&errors->fact))
		return;
	for (guint i = 0; i < errors->items->len; i++) {
		const CliFactsError *entry = g_ptr_array_index(errors->items, i);
		if (cli_fact_ok(&entry->node.fact) && cli_fact_ok(&entry->member.fact))
			reported_add(ctx->reported, entry->member.value);
	}
}

GPtrArray *cli_audit_run_facts(const CliFacts *facts)
{
	return cli_audit_run_require(facts, NULL);
}

GPtrArray *cli_audit_run_require(const CliFacts *facts, const CliAuditRequire *require)
{
	static const CliAuditRequire nothing = { 0 };
	CliAuditCtx ctx = {
		.facts = facts,
		.require = require != NULL ? require : &nothing,
		.findings = g_ptr_array_new_with_free_func((GDestroyNotify)cli_finding_free),
		.reported = reported_new(),
		.unknown = g_ptr_array_new_with_free_func(cli_rule_unknown_free),
		.unknown_by_path = g_hash_table_new(g_str_hash, g_str_equal),
	};

	ctx_collect_reported(&ctx);
	for (guint i = 0; i < G_N_ELEMENTS(rules); i++) {
		ctx.rule = &rules[i].info;
		rules[i].func(&ctx);
	}
	g_hash_table_unref(ctx.unknown_by_path);
	g_ptr_array_unref(ctx.unknown);
	g_hash_table_unref(ctx.reported);
	return ctx.findings;
}

GPtrArray *cli_audit_run(JsonObject *facts)
{
	g_autoptr(CliFacts) model = cli_facts_new(facts);
	return cli_audit_run_facts(model);
}
