/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"

#include <string.h>

#include "gb-isa.h"

#include "analysis/census.h"
#include "analysis/facts.h"
#include "gb-error.h"
#include "gb-json.h"

static void cli_census_guest_free(CliCensusGuest *g)
{
	g_free(g->name);
	g_free(g->source);
	g_strfreev(g->tags);
	g_free(g->problem);
	g_free(g->model);
	g_free(g->arch);
	g_free(g->hypervisor);
	g_strfreev(g->flags);
	g_free(g->outlier);
	g_free(g->require);
	g_free(g);
}

static void cli_census_group_free(CliCensusGroup *g)
{
	g_free(g->model);
	g_free(g->arch);
	g_free(g->hypervisor);
	g_strfreev(g->flags);
	g_strfreev(g->lacks);
	g_ptr_array_unref(g->guests);
	g_free(g);
}

static void cli_census_scope_free(CliCensusScope *s)
{
	g_free(s->tag);
	g_free(s->arch);
	g_strfreev(s->baseline);
	g_free(s->majority);
	g_free(s->qemu_model);
	g_strfreev(s->qemu_beyond);
	g_free(s);
}

static void cli_census_qemu_model_free(CliCensusQemuModel *m)
{
	g_free(m->name);
	g_strfreev(m->flags);
	g_strfreev(m->unavailable);
	g_free(m);
}

static void cli_census_arch_free(CliCensusArch *a)
{
	g_free(a->arch);
	g_strfreev(a->baseline);
	g_strfreev(a->all_flags);
	g_ptr_array_unref(a->lowest);
	g_free(a);
}

CliCensus *cli_census_new(void)
{
	CliCensus *c = g_new0(CliCensus, 1);

	c->guests = g_ptr_array_new_with_free_func((GDestroyNotify)cli_census_guest_free);
	c->archs = g_ptr_array_new_with_free_func((GDestroyNotify)cli_census_arch_free);
	c->groups = g_ptr_array_new_with_free_func((GDestroyNotify)cli_census_group_free);
	c->scopes = g_ptr_array_new_with_free_func((GDestroyNotify)cli_census_scope_free);
	c->lowest = g_ptr_array_new();
	return c;
}

void cli_census_free(CliCensus *census)
{
	if (census == NULL)
		return;
	g_ptr_array_unref(census->lowest);
	g_ptr_array_unref(census->scopes);
	g_ptr_array_unref(census->groups);
	g_ptr_array_unref(census->guests);
	g_ptr_array_unref(census->archs);
	g_strfreev(census->baseline);
	g_strfreev(census->all_flags);
	if (census->qemu_models != NULL)
		g_ptr_array_unref(census->qemu_models);
	g_free(census->qemu_error);
	g_free(census);
}

static int cli_census_strcmp(gconstpointer a, gconstpointer b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* A sorted copy without repeats. */
static char **cli_census_sorted(const char *const *flags)
{
	guint n = flags != NULL ? g_strv_length((char **)flags) : 0;
	char **out = g_new0(char *, n + 1);
	guint k = 0;

	gboolean sorted = TRUE;

	for (guint i = 0; i < n; i++) {
		out[i] = g_strdup(flags[i]);
		sorted = sorted && (i == 0 || strcmp(out[i - 1], out[i]) <= 0);
	}
	/* the agent sends them sorted: no need to sort ten thousand lists again */
	if (!sorted)
		qsort(out, n, sizeof(char *), cli_census_strcmp);
	for (guint i = 0; i < n; i++) {
		if (k > 0 && strcmp(out[k - 1], out[i]) == 0) {
			g_free(out[i]);
			continue;
		}
		out[k++] = out[i];
	}
	out[k] = NULL;
	return out;
}

static const char *cli_census_state(CliFactState state)
{
	switch (state) {
	case CLI_FACT_ABSENT:
	case CLI_FACT_NO_PARENT:
		return "absent";
	case CLI_FACT_NULL:
		return "null";
	case CLI_FACT_WRONG_TYPE:
		return "of the wrong type";
	case CLI_FACT_OK:
	default:
		return "ok";
	}
}

/* Notes one member the census needs and could not read. */
static void cli_census_need(GString *problem, const CliFact *fact)
{
	g_autofree char *path = NULL;

	if (cli_fact_ok(fact))
		return;
	path = cli_fact_path(fact);
	g_string_append_printf(problem, "%s%s %s", problem->len > 0 ? ", " : "", path,
	                       cli_census_state(fact->state));
}

static CliCensusGuest *cli_census_guest_new(const char *name, const char *source,
                                            const char *const *tags)
{
	CliCensusGuest *g = g_new0(CliCensusGuest, 1);

	g->name = g_strdup(name);
	g->source = g_strdup(source);
	g->tags = tags != NULL ? g_strdupv((char **)tags) : g_new0(char *, 1);
	return g;
}

static gboolean cli_census_arch_is(const char *arch, const char *name, const char *alias)
{
	return g_strcmp0(arch, name) == 0 || g_strcmp0(arch, alias) == 0;
}

char *cli_census_level_name(guint level)
{
	if (level >= GB_ISA_ARM_V8)
		return gb_isa_arm_level_name(level);
	return gb_isa_level_name(level);
}

void cli_census_add_problem(CliCensus *census, const char *name, const char *source,
                            const char *problem)
{
	CliCensusGuest *g = cli_census_guest_new(name, source, NULL);

	g->problem = g_strdup(problem);
	g_ptr_array_add(census->guests, g);
}

void cli_census_add(CliCensus *census, const char *name, const char *source,
                    const char *const *tags, JsonObject *facts)
{
	g_autoptr(CliFacts) model = cli_facts_new_sections(facts, CLI_FACTS_SECTION_CPU);
	const CliFactsCpu *cpu = &model->cpu;
	CliCensusGuest *g = cli_census_guest_new(name, source, tags);
	g_autoptr(GString) problem = g_string_new(NULL);

	g_ptr_array_add(census->guests, g);
	if (!cli_fact_ok(&cpu->node.fact)) {
		cli_census_need(problem, &cpu->node.fact);
	} else {
		cli_census_need(problem, &cpu->model_name.fact);
		cli_census_need(problem, &cpu->isa_level.fact);
		cli_census_need(problem, &cpu->flags.fact);
	}
	if (problem->len == 0) {
		const char *arch =
		    cli_fact_ok(&cpu->architecture.fact) ? cpu->architecture.value : "x86_64";
		/* one spelling per architecture, so that groups and scopes key on it */
		if (cli_census_arch_is(arch, "aarch64", "arm64"))
			g->arch = g_strdup("aarch64");
		else if (cli_census_arch_is(arch, "x86_64", "amd64"))
			g->arch = g_strdup("x86_64");
		else
			g_string_append_printf(problem,
			                       "cpu.architecture %s has no ISA levels known "
			                       "to the census",
			                       arch);
	}
	if (problem->len == 0 && g_str_equal(g->arch, "x86_64") &&
	    !cli_isa_level_parse(cpu->isa_level.value, &g->isa_level, NULL))
		g_string_append_printf(problem, "cpu.isa_level is not x86-64-v1..x86-64-v4");
	if (problem->len == 0 && g_str_equal(g->arch, "aarch64") &&
	    !gb_isa_arm_level_parse(cpu->isa_level.value, &g->isa_level))
		g_string_append_printf(problem, "cpu.isa_level is not armv8-a..armv9.3-a");
	if (problem->len > 0) {
		g->problem = g_string_free(g_steal_pointer(&problem), FALSE);
		return;
	}
	g->model = g_strdup(cpu->model_name.value);
	g->flags = cli_census_sorted((const char *const *)cpu->flags.value);
	if (cli_fact_ok(&cpu->hypervisor.vendor.fact))
		g->hypervisor = g_strdup(cpu->hypervisor.vendor.value);
	else if (cli_fact_ok(&cpu->hypervisor.present.fact) && !cpu->hypervisor.present.value)
		g->hypervisor = g_strdup("none");
	else
		g->hypervisor = g_strdup("unknown");
}

void cli_census_take_guests(CliCensus *census, CliCensus *part)
{
	/* the pointers move: part's array must not free them */
	g_ptr_array_set_free_func(part->guests, NULL);
	g_ptr_array_extend(census->guests, part->guests, NULL, NULL);
	g_ptr_array_set_size(part->guests, 0);
	g_ptr_array_set_free_func(part->guests, (GDestroyNotify)cli_census_guest_free);
}

/* ---- the host's QEMU models -----------------------------------------------------------
 */

/* QEMU features whose /proc/cpuinfo name is not the QEMU name with '-' and '.' as '_'. */
static const struct {
	const char *qemu;
	const char *linux_name;
} cli_census_qemu_renames[] = {
	{ "tsc-deadline", "tsc_deadline_timer" },
	{ "avx512vbmi2", "avx512_vbmi2" },
	{ "avx512vnni", "avx512_vnni" },
	{ "avx512bitalg", "avx512_bitalg" },
	{ "cr8legacy", "cr8_legacy" },
	{ "tsx-ldtrk", "tsxldtrk" },
	{ "pause-filter", "pausefilter" },
	{ "sgxlc", "sgx_lc" },
	{ "xstore", "rng" },
	{ "xstore-en", "rng_en" },
	{ "xcrypt", "ace" },
	{ "xcrypt-en", "ace_en" },
};

/*
 * QEMU features a guest kernel never lists in /proc/cpuinfo: bits of
 * IA32_ARCH_CAPABILITIES and IA32_PERF_CAPABILITIES (the parent bit,
 * arch_capabilities, is listed), and bits Linux keeps to itself.
 */
static const char *const cli_census_qemu_unlisted[] = {
	"ibrs-all",
	"mds-no",
	"rdctl-no",
	"ssb-no",
	"taa-no",
	"rsba",
	"pschange-mc-no",
	"skip-l1dfl-vmentry",
	"tsx-ctrl",
	"fb-clear",
	"sbdr-ssdp-no",
	"fbsdp-no",
	"psdp-no",
	"full-width-write",
	"amd-no-ssb",
	"core-capability",
	"split-lock-detect",
	"svme-addr-chk",
	"lmce",
	NULL,
};

char *cli_census_flag_from_qemu(const char *feature)
{
	/* VMX capabilities, KVM's and Hyper-V's enlightenments */
	if (g_str_has_prefix(feature, "vmx-") || g_str_has_prefix(feature, "kvm") ||
	    g_str_has_prefix(feature, "hv-") || g_strv_contains(cli_census_qemu_unlisted, feature))
		return NULL;
	for (guint i = 0; i < G_N_ELEMENTS(cli_census_qemu_renames); i++) {
		if (strcmp(feature, cli_census_qemu_renames[i].qemu) == 0)
			return g_strdup(cli_census_qemu_renames[i].linux_name);
	}
	return g_strdelimit(g_strdup(feature), "-.", '_');
}

/* The name of a definition worth expanding, NULL when it is not one (or malformed: error).
 */
static const char *cli_census_qemu_candidate(JsonNode *node, guint i, JsonObject **def,
                                             GError **error)
{
	g_autofree char *what = g_strdup_printf("query-cpu-definitions[%u]", i);
	const char *name = NULL;
	const char *alias = NULL;
	gboolean safe = FALSE;

	if (!gb_json_node_get_object(node, what, def, error) ||
	    !gb_json_get_string(*def, "name", GB_JSON_REQUIRED, &name, error) ||
	    !gb_json_get_string(*def, "alias-of", GB_JSON_OPTIONAL, &alias, error) ||
	    !gb_json_get_bool(*def, "migration-safe", GB_JSON_OPTIONAL, &safe, error))
		return NULL;
	/* host and max are not migration-safe; base is the empty model static expansion
	 * uses */
	if (alias != NULL || !safe || strcmp(name, "base") == 0)
		return NULL;
	return name;
}

char **cli_census_qemu_candidates(JsonNode *definitions, GError **error)
{
	g_autoptr(GPtrArray) names = g_ptr_array_new_with_free_func(g_free);
	JsonArray *defs;

	if (definitions == NULL || !JSON_NODE_HOLDS_ARRAY(definitions)) {
		g_set_error_literal(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT,
		                    "query-cpu-definitions did not return a list");
		return NULL;
	}
	defs = json_node_get_array(definitions);
	for (guint i = 0; i < json_array_get_length(defs); i++) {
		JsonObject *def = NULL;
		const char *name =
		    cli_census_qemu_candidate(json_array_get_element(defs, i), i, &def, error);

		if (name == NULL && error != NULL && *error != NULL)
			return NULL;
		if (name != NULL)
			g_ptr_array_add(names, g_strdup(name));
	}
	g_ptr_array_add(names, NULL);
	return (char **)g_ptr_array_free(g_steal_pointer(&names), FALSE);
}

/* One model from its definition and the "return" of its static expansion. */
static CliCensusQemuModel *cli_census_qemu_model(const char *name, JsonObject *def,
                                                 JsonNode *expansion, GError **error)
{
	g_autoptr(GPtrArray) flags = g_ptr_array_new_with_free_func(g_free);
	g_auto(GStrv) unavailable = NULL;
	JsonObject *ret = NULL;
	JsonObject *model = NULL;
	JsonObject *props = NULL;
	CliCensusQemuModel *m;
	JsonObjectIter it;
	const char *prop;
	JsonNode *value;

	if (!gb_json_get_strv(def, "unavailable-features", GB_JSON_OPTIONAL, &unavailable, error))
		return NULL;
	if (expansion == NULL) {
		g_set_error_literal(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT, "no expansion");
		return NULL;
	}
	if (!gb_json_node_get_object(expansion, "query-cpu-model-expansion", &ret, error) ||
	    !gb_json_get_object(ret, "model", GB_JSON_REQUIRED, &model, error) ||
	    !gb_json_get_object(model, "props", GB_JSON_REQUIRED, &props, error))
		return NULL;
	json_object_iter_init(&it, props);
	while (json_object_iter_next(&it, &prop, &value)) {
		char *flag;

		/* the features are booleans; family, vendor, model-id... are not */
		if (!JSON_NODE_HOLDS_VALUE(value) ||
		    json_node_get_value_type(value) != G_TYPE_BOOLEAN ||
		    !json_node_get_boolean(value))
			continue;
		flag = cli_census_flag_from_qemu(prop);
		if (flag != NULL)
			g_ptr_array_add(flags, flag);
	}
	g_ptr_array_add(flags, NULL);
	m = g_new0(CliCensusQemuModel, 1);
	m->name = g_strdup(name);
	m->flags = cli_census_sorted((const char *const *)flags->pdata);
	m->unavailable = unavailable != NULL ? g_steal_pointer(&unavailable) : g_new0(char *, 1);
	return m;
}

void cli_census_set_qemu(CliCensus *census, JsonNode *definitions, JsonObject *expansions)
{
	g_autoptr(GError) error = NULL;
	g_autoptr(GString) bad = g_string_new(NULL);
	JsonArray *defs;

	if (census->qemu_models == NULL)
		census->qemu_models =
		    g_ptr_array_new_with_free_func((GDestroyNotify)cli_census_qemu_model_free);
	if (definitions == NULL || !JSON_NODE_HOLDS_ARRAY(definitions)) {
		cli_census_set_qemu_error(census, "query-cpu-definitions did not return a list");
		return;
	}
	defs = json_node_get_array(definitions);
	for (guint i = 0; i < json_array_get_length(defs); i++) {
		JsonObject *def = NULL;
		const char *name =
		    cli_census_qemu_candidate(json_array_get_element(defs, i), i, &def, &error);
		CliCensusQemuModel *m;

		if (name == NULL) {
			if (error != NULL)
				g_string_append_printf(bad, "%s%s", bad->len > 0 ? "; " : "",
				                       error->message);
			g_clear_error(&error);
			continue;
		}
		m = cli_census_qemu_model(
		    name, def, expansions != NULL ? json_object_get_member(expansions, name) : NULL,
		    &error);
		if (m == NULL) {
			g_string_append_printf(bad, "%smodel %s: %s", bad->len > 0 ? "; " : "",
			                       name, error->message);
			g_clear_error(&error);
			continue;
		}
		g_ptr_array_add(census->qemu_models, m);
	}
	if (bad->len > 0)
		cli_census_set_qemu_error(census, bad->str);
}

void cli_census_set_qemu_error(CliCensus *census, const char *why)
{
	if (census->qemu_models == NULL)
		census->qemu_models =
		    g_ptr_array_new_with_free_func((GDestroyNotify)cli_census_qemu_model_free);
	g_free(census->qemu_error);
	census->qemu_error = g_strdup(why);
}

/* Whether every string of sub (sorted) is in set (sorted). */
static gboolean cli_census_subset(char **sub, char **set)
{
	guint j = 0;

	for (guint i = 0; sub[i] != NULL; i++) {
		while (set[j] != NULL && strcmp(set[j], sub[i]) < 0)
			j++;
		if (set[j] == NULL || strcmp(set[j], sub[i]) != 0)
			return FALSE;
	}
	return TRUE;
}

/*
 * The scope's QEMU model: of the models this host can run, the one with the
 * most features among those whose every feature the baseline has (first
 * listed on a tie); and what the baseline has beyond it that QEMU knows.
 */
static void cli_census_scope_qemu(CliCensus *census, CliCensusScope *s, GHashTable *known)
{
	const CliCensusQemuModel *best = NULL;
	g_autoptr(GPtrArray) beyond = g_ptr_array_new();

	for (guint i = 0; i < census->qemu_models->len; i++) {
		const CliCensusQemuModel *m = g_ptr_array_index(census->qemu_models, i);

		if (m->unavailable[0] != NULL || !cli_census_subset(m->flags, s->baseline))
			continue;
		if (best == NULL || g_strv_length(m->flags) > g_strv_length(best->flags))
			best = m;
	}
	if (best == NULL)
		return;
	for (guint i = 0; s->baseline[i] != NULL; i++) {
		if (g_hash_table_contains(known, s->baseline[i]) &&
		    !g_strv_contains((const char *const *)best->flags, s->baseline[i]))
			g_ptr_array_add(beyond, s->baseline[i]);
	}
	g_ptr_array_add(beyond, NULL);
	s->qemu_model = g_strdup(best->name);
	s->qemu_beyond = g_strdupv((char **)beyond->pdata);
}

static void cli_census_finish_qemu(CliCensus *census)
{
	g_autoptr(GHashTable) known = g_hash_table_new(g_str_hash, g_str_equal);

	if (census->qemu_models == NULL)
		return;
	/* the flags some model of this QEMU has: the ones "beyond" can name */
	for (guint i = 0; i < census->qemu_models->len; i++) {
		const CliCensusQemuModel *m = g_ptr_array_index(census->qemu_models, i);

		for (guint j = 0; m->flags[j] != NULL; j++)
			g_hash_table_add(known, m->flags[j]);
	}
	for (guint i = 0; i < census->scopes->len; i++) {
		CliCensusScope *s = g_ptr_array_index(census->scopes, i);
		const char *arch = s->arch;

		/* one architecture: the scope has no arch of its own */
		if (arch == NULL && census->archs->len == 1)
			arch = ((CliCensusArch *)g_ptr_array_index(census->archs, 0))->arch;
		/* the flag names above are x86's: an aarch64 baseline gets no x86 model */
		if (s->n_guests > 0 && g_strcmp0(arch, "x86_64") == 0)
			cli_census_scope_qemu(census, s, known);
	}
}

/* ---- finish ---------------------------------------------------------------------------
 */

/*
 * The flags held by at least min_count guests: sets[i] (sorted strv) is held
 * by weights[i] guests (NULL: one each). Sorted.
 */
static char **cli_census_flags_at_least(char ***sets, const guint *weights, guint n_sets,
                                        guint min_count)
{
	g_autoptr(GHashTable) counts = g_hash_table_new(g_str_hash, g_str_equal);
	g_autoptr(GPtrArray) out = g_ptr_array_new();
	GHashTableIter it;
	gpointer key, value;

	for (guint i = 0; i < n_sets; i++) {
		for (guint j = 0; sets[i][j] != NULL; j++) {
			guint n = GPOINTER_TO_UINT(g_hash_table_lookup(counts, sets[i][j]));
			g_hash_table_insert(
			    counts, sets[i][j],
			    GUINT_TO_POINTER(n + (weights != NULL ? weights[i] : 1)));
		}
	}
	g_hash_table_iter_init(&it, counts);
	while (g_hash_table_iter_next(&it, &key, &value)) {
		if (GPOINTER_TO_UINT(value) >= min_count)
			g_ptr_array_add(out, key);
	}
	g_ptr_array_add(out, NULL);
	return cli_census_sorted((const char *const *)out->pdata);
}

/* The flags every guest of guests has. */
static char **cli_census_baseline_of(GPtrArray *guests)
{
	g_autofree char ***sets = g_new(char **, MAX(guests->len, 1));

	for (guint i = 0; i < guests->len; i++)
		sets[i] = ((CliCensusGuest *)g_ptr_array_index(guests, i))->flags;
	return cli_census_flags_at_least(sets, NULL, guests->len, MAX(guests->len, 1));
}

/* "+a -b": what flags has and ref has not (+), and the other way (-); both sorted. */
static char *cli_census_flags_diff(char **flags, char **ref)
{
	GString *out = g_string_new(NULL);
	guint i = 0, j = 0;

	while (flags[i] != NULL || ref[j] != NULL) {
		int cmp = flags[i] == NULL ? 1 : ref[j] == NULL ? -1 : strcmp(flags[i], ref[j]);

		if (cmp == 0) {
			i++;
			j++;
			continue;
		}
		g_string_append_printf(out, "%s%c%s", out->len > 0 ? " " : "", cmp < 0 ? '+' : '-',
		                       cmp < 0 ? flags[i] : ref[j]);
		if (cmp < 0)
			i++;
		else
			j++;
	}
	return g_string_free(out, FALSE);
}

static gboolean cli_census_same_kind(const CliCensusGuest *a, const CliCensusGuest *b)
{
	return g_strcmp0(a->model, b->model) == 0 &&
	       g_strv_equal((const char *const *)a->flags, (const char *const *)b->flags);
}

/*
 * A scope: its baseline and the guest that holds its most common (model,
 * flags), first seen on a tie; NULL when fewer than three guests or no
 * strict majority, where nobody is an outlier.
 */
static const CliCensusGuest *cli_census_scope(CliCensus *census, const char *tag, const char *arch,
                                              GPtrArray *guests, char **baseline)
{
	CliCensusScope *s = g_new0(CliCensusScope, 1);
	g_autoptr(GHashTable) counts = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
	const CliCensusGuest *best = NULL;
	guint best_n = 0;

	s->tag = g_strdup(tag);
	s->arch = g_strdup(arch);
	s->n_guests = guests->len;
	s->baseline = baseline != NULL ? g_strdupv(baseline) : cli_census_baseline_of(guests);
	g_ptr_array_add(census->scopes, s);
	for (guint i = 0; i < guests->len; i++) {
		const CliCensusGuest *g = g_ptr_array_index(guests, i);
		g_autofree char *flags = g_strjoinv(" ", g->flags);
		char *key = g_strdup_printf("%s\037%s", g->model, flags);
		guint n = GPOINTER_TO_UINT(g_hash_table_lookup(counts, key)) + 1;

		g_hash_table_replace(counts, key, GUINT_TO_POINTER(n));
		if (n > best_n) {
			best_n = n;
			best = g;
		}
	}
	if (best == NULL)
		return NULL;
	s->majority = g_strdup(best->model);
	s->n_majority = best_n;
	return guests->len >= 3 && best_n * 2 > guests->len ? best : NULL;
}

static void cli_census_judge(CliCensusGuest *g, const CliCensusGuest *ref, const char *scope)
{
	g_autofree char *diff = NULL;

	if (ref == NULL || g->outlier != NULL || cli_census_same_kind(g, ref))
		return;
	if (g_strcmp0(g->model, ref->model) != 0) {
		g->outlier = g_strdup_printf("model differs from the majority of %s (%s)", scope,
		                             ref->model);
		return;
	}
	diff = cli_census_flags_diff(g->flags, ref->flags);
	g->outlier = g_strdup_printf("flags differ from the majority of %s: %s", scope, diff);
}

static int cli_census_group_cmp(gconstpointer a, gconstpointer b)
{
	const CliCensusGroup *ga = *(CliCensusGroup *const *)a;
	const CliCensusGroup *gb = *(CliCensusGroup *const *)b;
	const CliCensusGuest *fa = g_ptr_array_index(ga->guests, 0);
	const CliCensusGuest *fb = g_ptr_array_index(gb->guests, 0);

	if (ga->guests->len != gb->guests->len)
		return ga->guests->len > gb->guests->len ? -1 : 1;
	/* first seen first: the first guest's place in the census */
	return fa->group < fb->group ? -1 : fa->group > fb->group;
}

static void cli_census_require(CliCensusGuest *g, const CliAuditRequire *require)
{
	GString *out = g_string_new(NULL);

	/* x86-64-vN says nothing about another architecture */
	if (require->isa_level != 0 && g_str_equal(g->arch, "x86_64") &&
	    g->isa_level < require->isa_level)
		g_string_append_printf(out, "x86-64-v%u is below the required x86-64-v%u",
		                       g->isa_level, require->isa_level);
	/* an Arm level is reached only with all it makes mandatory (no chain) */
	if (require->arm_level != 0 && g_str_equal(g->arch, "aarch64") &&
	    !cli_arm_level_reaches(g->isa_level, require->arm_level)) {
		g_autofree char *have = gb_isa_arm_level_name(g->isa_level);
		g_autofree char *want = gb_isa_arm_level_name(require->arm_level);
		g_autoptr(GPtrArray) lacks =
		    gb_isa_arm_level_lacks((const char *const *)g->flags, require->arm_level);

		g_string_append_printf(out, "%s does not reach the required %s", have, want);
		/* none when the guest's level and flags disagree */
		for (guint i = 0; i < lacks->len; i++)
			g_string_append_printf(out, "%s%s%s", i == 0 ? " (lacks " : ", ",
			                       (const char *)lacks->pdata[i],
			                       i + 1 == lacks->len ? ")" : "");
	}
	for (guint i = 0; require->flags != NULL && require->flags[i] != NULL; i++) {
		if (g_strv_contains((const char *const *)g->flags, require->flags[i]))
			continue;
		g_string_append_printf(out, "%s%s", out->len > 0 ? "; lacks " : "lacks ",
		                       require->flags[i]);
	}
	if (out->len > 0)
		g->require = g_string_free(out, FALSE);
	else
		g_string_free(out, TRUE);
}

/* The guests of arch (all of them when arch is NULL), borrowed. */
static GPtrArray *cli_census_of_arch(GPtrArray *guests, const char *arch)
{
	GPtrArray *out = g_ptr_array_new();

	for (guint i = 0; i < guests->len; i++) {
		CliCensusGuest *g = g_ptr_array_index(guests, i);

		if (arch == NULL || g_str_equal(g->arch, arch))
			g_ptr_array_add(out, g);
	}
	return out;
}

static const CliCensusArch *cli_census_arch_of(CliCensus *census, const char *arch)
{
	for (guint i = 0; i < census->archs->len; i++) {
		const CliCensusArch *a = g_ptr_array_index(census->archs, i);

		if (g_str_equal(a->arch, arch))
			return a;
	}
	/* every group's architecture has an entry: not reached */
	return g_ptr_array_index(census->archs, 0);
}

static int cli_census_arch_cmp(gconstpointer a, gconstpointer b)
{
	const CliCensusArch *aa = *(CliCensusArch *const *)a;
	const CliCensusArch *ab = *(CliCensusArch *const *)b;

	return aa->n_guests > ab->n_guests ? -1 : aa->n_guests < ab->n_guests;
}

/* Baseline, union and lowest level of each architecture, most guests first. */
static void cli_census_archs(CliCensus *census, GPtrArray *counted)
{
	for (guint i = 0; i < counted->len; i++) {
		const CliCensusGuest *g = g_ptr_array_index(counted, i);
		gboolean seen = FALSE;

		for (guint j = 0; j < census->archs->len && !seen; j++)
			seen = g_str_equal(
			    ((CliCensusArch *)g_ptr_array_index(census->archs, j))->arch, g->arch);
		if (!seen) {
			CliCensusArch *a = g_new0(CliCensusArch, 1);
			a->arch = g_strdup(g->arch);
			a->lowest = g_ptr_array_new();
			g_ptr_array_add(census->archs, a);
		}
	}
	for (guint j = 0; j < census->archs->len; j++) {
		CliCensusArch *a = g_ptr_array_index(census->archs, j);
		g_autoptr(GPtrArray) guests = cli_census_of_arch(counted, a->arch);
		g_autofree char ***sets = g_new(char **, MAX(guests->len, 1));
		gboolean arm = g_str_equal(a->arch, "aarch64");

		a->n_guests = guests->len;
		for (guint i = 0; i < guests->len; i++) {
			const CliCensusGuest *g = g_ptr_array_index(guests, i);

			sets[i] = g->flags;
			if (i == 0)
				a->lowest_level = g->isa_level;
			else if (arm)
				a->lowest_level =
				    gb_isa_arm_level_meet(a->lowest_level, g->isa_level);
			else
				a->lowest_level = MIN(a->lowest_level, g->isa_level);
		}
		a->baseline = cli_census_flags_at_least(sets, NULL, guests->len, guests->len);
		a->all_flags = cli_census_flags_at_least(sets, NULL, guests->len, 1);
		for (guint i = 0; i < guests->len; i++) {
			CliCensusGuest *g = g_ptr_array_index(guests, i);

			if (g->isa_level == a->lowest_level)
				g_ptr_array_add(a->lowest, g);
		}
	}
	/* stable: equal counts keep the order first seen */
	g_ptr_array_sort(census->archs, cli_census_arch_cmp);
}

void cli_census_finish(CliCensus *census, gboolean by_tag, const CliAuditRequire *require)
{
	g_autoptr(GHashTable) groups = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
	g_autoptr(GPtrArray) counted = g_ptr_array_new();
	g_autoptr(GHashTable) tags =
	    g_hash_table_new_full(g_str_hash, g_str_equal, NULL, (GDestroyNotify)g_ptr_array_unref);
	g_autoptr(GPtrArray) tag_order = g_ptr_array_new();

	for (guint i = 0; i < census->guests->len; i++) {
		CliCensusGuest *g = g_ptr_array_index(census->guests, i);
		g_autofree char *flags = NULL;
		g_autofree char *key = NULL;
		CliCensusGroup *group = NULL;

		if (g->problem != NULL) {
			census->n_problems++;
			continue;
		}
		g_ptr_array_add(counted, g);
		flags = g_strjoinv(" ", g->flags);
		key = g_strdup_printf("%s\037%s\037%u\037%s\037%s", g->arch, g->model, g->isa_level,
		                      g->hypervisor, flags);
		group = g_hash_table_lookup(groups, key);
		if (group == NULL) {
			group = g_new0(CliCensusGroup, 1);
			group->model = g_strdup(g->model);
			group->arch = g_strdup(g->arch);
			group->isa_level = g->isa_level;
			group->hypervisor = g_strdup(g->hypervisor);
			group->flags = g_strdupv(g->flags);
			group->guests = g_ptr_array_new();
			g_hash_table_insert(groups, g_steal_pointer(&key), group);
			g_ptr_array_add(census->groups, group);
		}
		/* the guest's place, for the order of groups of the same size */
		g->group = i;
		g_ptr_array_add(group->guests, g);
		if (require != NULL)
			cli_census_require(g, require);
		if (g->require != NULL)
			census->n_require_failed++;
		for (guint t = 0; by_tag && g->tags[t] != NULL; t++) {
			GPtrArray *members = g_hash_table_lookup(tags, g->tags[t]);

			if (members == NULL) {
				members = g_ptr_array_new();
				g_hash_table_insert(tags, g->tags[t], members);
				g_ptr_array_add(tag_order, g->tags[t]);
			}
			g_ptr_array_add(members, g);
		}
	}
	census->n_counted = counted->len;
	g_ptr_array_sort(census->groups, cli_census_group_cmp);
	{
		/* over the groups, each counted as many times as it has guests */
		guint n = census->groups->len;
		g_autofree char ***sets = g_new(char **, MAX(n, 1));
		g_autofree guint *weights = g_new(guint, MAX(n, 1));

		for (guint i = 0; i < n; i++) {
			CliCensusGroup *group = g_ptr_array_index(census->groups, i);

			sets[i] = group->flags;
			weights[i] = group->guests->len;
		}
		census->all_flags = cli_census_flags_at_least(sets, weights, n, 1);
		census->baseline =
		    cli_census_flags_at_least(sets, weights, n, MAX(counted->len, 1));
	}
	cli_census_archs(census, counted);
	for (guint i = 0; i < census->groups->len; i++) {
		CliCensusGroup *group = g_ptr_array_index(census->groups, i);
		const CliCensusArch *arch = cli_census_arch_of(census, group->arch);
		g_autoptr(GPtrArray) lacks = g_ptr_array_new();

		for (guint j = 0; arch->all_flags[j] != NULL; j++) {
			if (!g_strv_contains((const char *const *)group->flags, arch->all_flags[j]))
				g_ptr_array_add(lacks, arch->all_flags[j]);
		}
		g_ptr_array_add(lacks, NULL);
		group->lacks = g_strdupv((char **)lacks->pdata);
		for (guint j = 0; j < group->guests->len; j++)
			((CliCensusGuest *)g_ptr_array_index(group->guests, j))->group = i;
	}
	/* one architecture: the fleet's lowest is its lowest; several: none is comparable
	 */
	if (census->archs->len == 1) {
		const CliCensusArch *arch = g_ptr_array_index(census->archs, 0);

		census->lowest_level = arch->lowest_level;
		for (guint i = 0; i < arch->lowest->len; i++)
			g_ptr_array_add(census->lowest, g_ptr_array_index(arch->lowest, i));
	}

	/* a mixed fleet has a scope per architecture wherever it had one */
	for (guint a = 0; a < MAX(census->archs->len, 1); a++) {
		const char *arch =
		    census->archs->len > 1
		        ? ((CliCensusArch *)g_ptr_array_index(census->archs, a))->arch
		        : NULL;
		g_autoptr(GPtrArray) fleet = cli_census_of_arch(counted, arch);
		g_autofree char *fleet_name = arch != NULL
		                                  ? g_strdup_printf("the fleet's %s guests", arch)
		                                  : g_strdup("the fleet");
		const CliCensusGuest *fleet_ref = cli_census_scope(
		    census, NULL, arch, fleet, arch != NULL ? NULL : census->baseline);

		for (guint t = 0; t < tag_order->len; t++) {
			const char *tag = g_ptr_array_index(tag_order, t);
			g_autoptr(GPtrArray) members =
			    cli_census_of_arch(g_hash_table_lookup(tags, tag), arch);
			const CliCensusGuest *ref = NULL;
			g_autofree char *scope = NULL;

			if (members->len == 0)
				continue;
			ref = cli_census_scope(census, tag, arch, members, NULL);
			scope = arch != NULL ? g_strdup_printf("tag %s (%s)", tag, arch)
			                     : g_strdup_printf("tag %s", tag);
			for (guint i = 0; i < members->len; i++)
				cli_census_judge(g_ptr_array_index(members, i), ref, scope);
		}
		for (guint i = 0; i < fleet->len; i++) {
			CliCensusGuest *g = g_ptr_array_index(fleet, i);

			/* a tagged guest is judged within its tags only */
			if (!by_tag || g->tags[0] == NULL)
				cli_census_judge(g, fleet_ref, fleet_name);
		}
	}
	for (guint i = 0; i < counted->len; i++) {
		if (((CliCensusGuest *)g_ptr_array_index(counted, i))->outlier != NULL)
			census->n_outliers++;
	}
	cli_census_finish_qemu(census);
}
