/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The census (analysis/census.c) on fixture fleets: groups, baselines, outliers, problems. */
#include <string.h>

#include "analysis/census.h"
#include "gb-error.h"
#include "gb-json.h"

static JsonNode *load_fixture(const char *name)
{
	const char *dir = g_getenv("GB_TEST_DATA");
	g_autofree char *path = NULL;
	g_autofree char *data = NULL;
	g_autoptr(GError) error = NULL;
	gsize len = 0;
	JsonNode *node;

	g_assert_nonnull(dir);
	path = g_build_filename(dir, "census", name, NULL);
	g_assert_true(g_file_get_contents(path, &data, &len, &error));
	node = gb_json_parse(data, len, &error);
	g_assert_no_error(error);
	return node;
}

/* Every guest of a saved facts document; the tag is the name's part before '-'. */
static void census_add_fixture(CliCensus *census, const char *fixture, gboolean tags)
{
	g_autoptr(JsonNode) root = load_fixture(fixture);
	JsonArray *guests = NULL;

	g_assert_true(gb_json_get_array(json_node_get_object(root), "guests", GB_JSON_REQUIRED,
	                                &guests, NULL));
	for (guint i = 0; i < json_array_get_length(guests); i++) {
		JsonObject *g = json_array_get_object_element(guests, i);
		const char *name = json_object_get_string_member(g, "name");
		JsonNode *result = json_object_get_member(g, "result");
		g_autofree char *tag = g_strndup(name, strcspn(name, "-"));
		const char *tag_list[] = { tag, NULL };

		if (!JSON_NODE_HOLDS_OBJECT(result)) {
			cli_census_add_problem(census, name, fixture, "down");
			continue;
		}
		cli_census_add(census, name, fixture, tags ? tag_list : NULL,
		               json_node_get_object(result));
	}
}

static CliCensus *census_of(const char *fixture, gboolean tags)
{
	CliCensus *census = cli_census_new();

	census_add_fixture(census, fixture, tags);
	return census;
}

static CliCensusGuest *find_guest(CliCensus *c, const char *name)
{
	for (guint i = 0; i < c->guests->len; i++) {
		CliCensusGuest *g = g_ptr_array_index(c->guests, i);

		if (strcmp(g->name, name) == 0)
			return g;
	}
	g_assert_not_reached();
	return NULL;
}

static gboolean has(char **strv, const char *s)
{
	return g_strv_contains((const char *const *)strv, s);
}

static void test_census_groups(void)
{
	g_autoptr(CliCensus) c = census_of("fleet12.json", FALSE);
	const CliCensusGroup *g;

	cli_census_finish(c, FALSE, NULL);
	g_assert_cmpuint(c->n_counted, ==, 12);
	g_assert_cmpuint(c->n_problems, ==, 0);
	/* three models; web-6 lacks ssbd and is a group of its own */
	g_assert_cmpuint(c->groups->len, ==, 4);
	g = g_ptr_array_index(c->groups, 0);
	g_assert_cmpstr(g->model, ==, "Intel Xeon Processor (Icelake)");
	g_assert_cmpuint(g->guests->len, ==, 5);
	g_assert_cmpuint(g->isa_level, ==, 4);
	g_assert_cmpstr(g->hypervisor, ==, "KVM");
	g_assert_cmpuint(g_strv_length(g->lacks), ==, 2); /* virt_ssbd ibpb of the EPYCs */
	g = g_ptr_array_index(c->groups, 1);
	g_assert_cmpstr(g->model, ==, "AMD EPYC-Rome Processor");
	g_assert_cmpuint(g->guests->len, ==, 4);
	g_assert_true(has(g->lacks, "avx512f") && !has(g->lacks, "avx2"));
	g = g_ptr_array_index(c->groups, 2);
	g_assert_cmpstr(g->model, ==, "QEMU Virtual CPU version 2.5+");
	g_assert_cmpuint(g->guests->len, ==, 2);
	g_assert_true(has(g->lacks, "sse4_2") && has(g->lacks, "avx2") && has(g->lacks, "ssbd"));
	g = g_ptr_array_index(c->groups, 3);
	g_assert_cmpuint(g->guests->len, ==, 1);
	g_assert_cmpstr(((CliCensusGuest *)g_ptr_array_index(g->guests, 0))->name, ==, "web-6");
	g_assert_true(has(g->lacks, "ssbd"));
	/* the baseline is what the qemu64 guests have: everything else is missing somewhere */
	g_assert_cmpuint(g_strv_length(c->baseline), ==, 30);
	g_assert_true(has(c->baseline, "sse2") && !has(c->baseline, "cx16"));
	g_assert_true(has(c->all_flags, "avx512f") && has(c->all_flags, "virt_ssbd"));
	/* lowest level and who holds the fleet there */
	g_assert_cmpuint(c->lowest_level, ==, 1);
	g_assert_cmpuint(c->lowest->len, ==, 2);
	g_assert_cmpstr(((CliCensusGuest *)g_ptr_array_index(c->lowest, 0))->name, ==, "legacy-1");
	/* no model holds a majority of the fleet: no outlier without tags */
	g_assert_cmpuint(c->n_outliers, ==, 0);
	g_assert_cmpuint(c->scopes->len, ==, 1);
}

static void test_census_outlier_by_tag(void)
{
	g_autoptr(CliCensus) c = census_of("fleet12.json", TRUE);
	CliCensusGuest *web6;

	cli_census_finish(c, TRUE, NULL);
	g_assert_cmpuint(c->n_outliers, ==, 1);
	web6 = find_guest(c, "web-6");
	g_assert_nonnull(web6->outlier);
	g_assert_nonnull(strstr(web6->outlier, "tag web"));
	g_assert_nonnull(strstr(web6->outlier, "-ssbd"));
	g_assert_null(find_guest(c, "web-1")->outlier);
	/* the fleet and one scope per tag, each with its own baseline */
	g_assert_cmpuint(c->scopes->len, ==, 4);
	for (guint i = 1; i < c->scopes->len; i++) {
		const CliCensusScope *s = g_ptr_array_index(c->scopes, i);

		if (g_strcmp0(s->tag, "web") == 0) {
			g_assert_cmpuint(s->n_guests, ==, 6);
			g_assert_true(has(s->baseline, "avx512f") && !has(s->baseline, "ssbd"));
			g_assert_cmpuint(s->n_majority, ==, 5);
		} else if (g_strcmp0(s->tag, "db") == 0) {
			g_assert_cmpuint(s->n_guests, ==, 4);
			g_assert_true(has(s->baseline, "virt_ssbd"));
		} else {
			g_assert_cmpstr(s->tag, ==, "legacy");
			g_assert_cmpuint(s->n_guests, ==, 2);
		}
	}
}

/* A fleet without tags: one guest on another model among four alike. */
static void test_census_outlier_fleet(void)
{
	g_autoptr(JsonNode) root = load_fixture("fleet12.json");
	JsonArray *guests = json_object_get_array_member(json_node_get_object(root), "guests");
	g_autoptr(CliCensus) c = cli_census_new();
	CliCensusGuest *odd;

	/* db-1..db-4 and legacy-1 */
	for (guint i = 6; i < 11; i++) {
		JsonObject *g = json_array_get_object_element(guests, i);

		cli_census_add(c, json_object_get_string_member(g, "name"), "f", NULL,
		               json_object_get_object_member(g, "result"));
	}
	cli_census_finish(c, FALSE, NULL);
	g_assert_cmpuint(c->n_outliers, ==, 1);
	odd = find_guest(c, "legacy-1");
	g_assert_nonnull(strstr(odd->outlier, "model differs from the majority of the fleet"));
	g_assert_nonnull(strstr(odd->outlier, "EPYC-Rome"));
}

static void test_census_require(void)
{
	g_autoptr(CliCensus) c = census_of("fleet12.json", FALSE);
	g_auto(GStrv) flags = cli_cpu_flags_parse("ssbd,aes", NULL);
	CliAuditRequire require = { .isa_level = 2, .flags = flags };

	cli_census_finish(c, FALSE, &require);
	/* legacy-1, legacy-2 (level, ssbd, aes) and web-6 (ssbd) */
	g_assert_cmpuint(c->n_require_failed, ==, 3);
	g_assert_nonnull(
	    strstr(find_guest(c, "legacy-1")->require, "below the required x86-64-v2"));
	g_assert_nonnull(strstr(find_guest(c, "legacy-1")->require, "lacks ssbd; lacks aes"));
	g_assert_cmpstr(find_guest(c, "web-6")->require, ==, "lacks ssbd");
	g_assert_null(find_guest(c, "db-1")->require);
}

static void test_census_problems(void)
{
	g_autoptr(CliCensus) c = census_of("fleet-broken.json", FALSE);

	cli_census_finish(c, FALSE, NULL);
	g_assert_cmpuint(c->n_counted, ==, 1);
	g_assert_cmpuint(c->n_problems, ==, 6);
	g_assert_null(find_guest(c, "fine")->problem);
	g_assert_cmpstr(find_guest(c, "no-isa")->problem, ==, "cpu.isa_level absent");
	g_assert_cmpstr(find_guest(c, "bad-flags")->problem, ==, "cpu.flags of the wrong type");
	g_assert_cmpstr(find_guest(c, "no-cpu")->problem, ==, "cpu null");
	g_assert_cmpstr(find_guest(c, "two-missing")->problem, ==,
	                "cpu.model_name absent, cpu.flags null");
	g_assert_cmpstr(find_guest(c, "bad-level")->problem, ==,
	                "cpu.isa_level is not x86-64-v1..x86-64-v4");
	g_assert_cmpstr(find_guest(c, "down")->problem, ==, "down");
	/* the census still runs over the rest */
	g_assert_cmpuint(c->groups->len, ==, 1);
	g_assert_cmpuint(c->lowest_level, ==, 3);
	g_assert_true(has(c->baseline, "virt_ssbd"));
}

static void test_census_empty(void)
{
	g_autoptr(CliCensus) c = cli_census_new();

	cli_census_add(c, "nothing", "f", NULL, NULL);
	cli_census_finish(c, TRUE, NULL);
	g_assert_cmpuint(c->n_counted, ==, 0);
	g_assert_cmpstr(find_guest(c, "nothing")->problem, ==, "cpu absent");
	g_assert_cmpuint(c->lowest_level, ==, 0);
	g_assert_cmpuint(g_strv_length(c->baseline), ==, 0);
}

static void test_census_qemu_flag_names(void)
{
	static const struct {
		const char *qemu;
		const char *linux_name; /* NULL: never in /proc/cpuinfo */
	} cases[] = {
		{ "sse4.2", "sse4_2" },
		{ "sse4.1", "sse4_1" },
		{ "pclmulqdq", "pclmulqdq" },
		{ "lahf-lm", "lahf_lm" },
		{ "md-clear", "md_clear" },
		{ "spec-ctrl", "spec_ctrl" },
		{ "arch-capabilities", "arch_capabilities" },
		{ "tsc-deadline", "tsc_deadline_timer" },
		{ "avx512vnni", "avx512_vnni" },
		{ "avx512-vpopcntdq", "avx512_vpopcntdq" },
		{ "xstore", "rng" },
		{ "vmx-ept", NULL },
		{ "kvmclock", NULL },
		{ "kvm-pv-eoi", NULL },
		{ "hv-relaxed", NULL },
		{ "mds-no", NULL },
		{ "skip-l1dfl-vmentry", NULL },
	};

	for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
		g_autofree char *name = cli_census_flag_from_qemu(cases[i].qemu);

		g_assert_cmpstr(name, ==, cases[i].linux_name);
	}
}

/* The QEMU 7.2 capture (-machine none under TCG): definitions and static expansions. */
static void census_set_qemu_capture(CliCensus *c, void (*spoil)(JsonObject *capture))
{
	g_autoptr(JsonNode) root = load_fixture("qemu-7.2-tcg.json");
	JsonObject *capture = json_node_get_object(root);

	if (spoil != NULL)
		spoil(capture);
	cli_census_set_qemu(c, json_object_get_member(capture, "query-cpu-definitions"),
	                    json_object_get_object_member(capture, "query-cpu-model-expansion"));
}

static const CliCensusScope *find_scope(CliCensus *c, const char *tag)
{
	for (guint i = 0; i < c->scopes->len; i++) {
		const CliCensusScope *s = g_ptr_array_index(c->scopes, i);

		if (g_strcmp0(s->tag, tag) == 0)
			return s;
	}
	g_assert_not_reached();
	return NULL;
}

static void test_census_qemu_models(void)
{
	g_autoptr(CliCensus) c = census_of("fleet12.json", TRUE);
	g_autoptr(JsonNode) root = load_fixture("qemu-7.2-tcg.json");
	g_auto(GStrv) candidates = NULL;
	const CliCensusScope *s;

	/* named, migration-safe models only: no alias, no host, max or base */
	candidates = cli_census_qemu_candidates(
	    json_object_get_member(json_node_get_object(root), "query-cpu-definitions"), NULL);
	g_assert_nonnull(candidates);
	g_assert_cmpuint(g_strv_length(candidates), ==, 9);
	g_assert_true(has(candidates, "Haswell-v4"));
	g_assert_false(has(candidates, "Haswell-noTSX-IBRS"));
	g_assert_false(has(candidates, "max"));
	g_assert_false(has(candidates, "base"));

	census_set_qemu_capture(c, NULL);
	cli_census_finish(c, TRUE, NULL);
	g_assert_null(c->qemu_error);
	g_assert_cmpuint(c->qemu_models->len, ==, 9);
	/* the fleet's baseline has no cx16 (legacy): of the runnable models only Opteron_G1 */
	s = find_scope(c, NULL);
	g_assert_cmpstr(s->qemu_model, ==, "Opteron_G1-v1");
	g_assert_cmpuint(g_strv_length(s->qemu_beyond), ==, 0);
	/*
	 * The Icelake pool: Haswell and Skylake are not runnable under TCG (pcid,
	 * x2apic, tsc-deadline...), Westmere needs arat, which the pool lacks;
	 * Nehalem it is, and the pool has aes, avx2... beyond it.
	 */
	s = find_scope(c, "web");
	g_assert_cmpstr(s->qemu_model, ==, "Nehalem-v1");
	g_assert_true(has(s->qemu_beyond, "aes"));
	g_assert_true(has(s->qemu_beyond, "avx2"));
	g_assert_true(has(s->qemu_beyond, "spec_ctrl"));
	/* kernel-made flags are no QEMU features */
	g_assert_false(has(s->qemu_beyond, "rep_good"));
	g_assert_false(has(s->qemu_beyond, "sse4_2"));
	s = find_scope(c, "legacy");
	g_assert_nonnull(s->qemu_model);
}

static void test_census_qemu_none_covers(void)
{
	g_autoptr(CliCensus) c = cli_census_new();
	const char *doc = "{\"cpu\": {\"model_name\": \"Bare\", \"isa_level\": \"x86-64-v1\", "
	                  "\"flags\": [\"fpu\", \"tsc\"], \"hypervisor\": {\"present\": false}}}";
	g_autoptr(JsonNode) facts = gb_json_parse(doc, strlen(doc), NULL);

	g_assert_nonnull(facts);
	cli_census_add(c, "bare", "f", NULL, json_node_get_object(facts));
	census_set_qemu_capture(c, NULL);
	cli_census_finish(c, FALSE, NULL);
	g_assert_cmpuint(c->n_counted, ==, 1);
	g_assert_null(find_scope(c, NULL)->qemu_model);
	g_assert_null(find_scope(c, NULL)->qemu_beyond);
}

static void spoil_expansions(JsonObject *capture)
{
	JsonObject *exp = json_object_get_object_member(capture, "query-cpu-model-expansion");

	json_object_remove_member(exp, "Nehalem-v1");
	json_object_set_string_member(exp, "Westmere-v1", "garbage");
	json_object_set_object_member(exp, "qemu64-v1", json_object_new());
}

static void spoil_definitions(JsonObject *capture)
{
	json_object_set_string_member(capture, "query-cpu-definitions", "not a list");
}

static void test_census_qemu_malformed(void)
{
	g_autoptr(CliCensus) c = census_of("fleet12.json", TRUE);
	g_autoptr(CliCensus) c2 = census_of("fleet12.json", FALSE);
	g_autoptr(GError) error = NULL;
	g_autoptr(JsonNode) bad = gb_json_parse("[{\"name\": 5}]", strlen("[{\"name\": 5}]"), NULL);

	/* each bad model named, the others still used */
	census_set_qemu_capture(c, spoil_expansions);
	cli_census_finish(c, TRUE, NULL);
	g_assert_cmpuint(c->qemu_models->len, ==, 6);
	g_assert_nonnull(strstr(c->qemu_error, "model Nehalem-v1: no expansion"));
	g_assert_nonnull(strstr(c->qemu_error, "model Westmere-v1: "));
	g_assert_nonnull(strstr(c->qemu_error, "model qemu64-v1: "));
	g_assert_cmpstr(find_scope(c, NULL)->qemu_model, ==, "Opteron_G1-v1");
	g_assert_cmpstr(find_scope(c, "web")->qemu_model, ==, "kvm64-v1");

	census_set_qemu_capture(c2, spoil_definitions);
	cli_census_finish(c2, FALSE, NULL);
	g_assert_cmpstr(c2->qemu_error, ==, "query-cpu-definitions did not return a list");
	g_assert_null(find_scope(c2, NULL)->qemu_model);
	g_assert_cmpuint(c2->n_counted, ==, 12);

	g_assert_null(cli_census_qemu_candidates(bad, &error));
	g_assert_error(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT);
	g_assert_nonnull(strstr(error->message, "name"));
}

/* x86 and arm64 guests in one census: nothing compared across architectures. */
static void test_census_mixed(void)
{
	g_autoptr(CliCensus) c = census_of("fleet-mixed.json", TRUE);
	const CliAuditRequire require = { .isa_level = 3 };
	const CliCensusArch *x86, *arm;
	const CliCensusGroup *g;

	cli_census_finish(c, FALSE, &require);
	g_assert_cmpuint(c->n_counted, ==, 9);
	g_assert_cmpuint(c->n_problems, ==, 0);
	g_assert_cmpuint(c->archs->len, ==, 2);
	/* most guests first: arm-5 says arm64, the same architecture */
	arm = g_ptr_array_index(c->archs, 0);
	x86 = g_ptr_array_index(c->archs, 1);
	g_assert_cmpstr(arm->arch, ==, "aarch64");
	g_assert_cmpuint(arm->n_guests, ==, 5);
	g_assert_cmpstr(x86->arch, ==, "x86_64");
	g_assert_cmpuint(x86->n_guests, ==, 4);
	/* baselines per architecture, not the (empty) intersection of both */
	g_assert_true(has(arm->baseline, "pmull") && has(arm->baseline, "crc32"));
	g_assert_false(has(arm->baseline, "atomics"));
	g_assert_true(has(x86->baseline, "sse4_2") && !has(x86->baseline, "avx2"));
	g_assert_false(has(c->baseline, "aes") && has(c->baseline, "pmull"));
	/* lowest per architecture; no fleet-wide level */
	g_assert_cmpuint(arm->lowest_level, ==, 80);
	g_assert_cmpuint(arm->lowest->len, ==, 1);
	g_assert_cmpstr(((CliCensusGuest *)g_ptr_array_index(arm->lowest, 0))->name, ==, "arm-4");
	g_assert_cmpuint(x86->lowest_level, ==, 2);
	g_assert_cmpstr(((CliCensusGuest *)g_ptr_array_index(x86->lowest, 0))->name, ==, "web-4");
	g_assert_cmpuint(c->lowest_level, ==, 0);
	g_assert_cmpuint(c->lowest->len, ==, 0);
	/* a group lacks only what its own architecture has */
	g = g_ptr_array_index(c->groups, 0);
	g_assert_cmpstr(g->model, ==, "Neoverse-N1");
	g_assert_cmpuint(g->guests->len, ==, 4);
	g_assert_cmpuint(g_strv_length(g->lacks), ==, 0);
	for (guint i = 0; i < c->groups->len; i++) {
		g = g_ptr_array_index(c->groups, i);
		if (g_str_equal(g->model, "Westmere")) {
			g_autofree char *lacks = g_strjoinv(" ", g->lacks);
			g_assert_cmpstr(lacks, ==, "avx avx2");
		}
	}
	/* outliers within each architecture's majority */
	g_assert_cmpstr(find_guest(c, "arm-4")->outlier, ==,
	                "model differs from the majority of the fleet's aarch64 guests "
	                "(Neoverse-N1)");
	g_assert_cmpstr(find_guest(c, "web-4")->outlier, ==,
	                "model differs from the majority of the fleet's x86_64 guests "
	                "(Intel Xeon Processor (Icelake))");
	g_assert_null(find_guest(c, "arm-1")->outlier);
	/* x86-64-v3 is required of x86 guests only */
	g_assert_cmpstr(find_guest(c, "web-4")->require, ==,
	                "x86-64-v2 is below the required x86-64-v3");
	g_assert_null(find_guest(c, "arm-4")->require);
	g_assert_cmpuint(c->n_require_failed, ==, 1);
	/* one scope per architecture */
	g_assert_cmpuint(c->scopes->len, ==, 2);
	g_assert_cmpstr(((CliCensusScope *)g_ptr_array_index(c->scopes, 0))->arch, ==, "aarch64");
}

/* An x86-64 and an Arm level required together: each of its own architecture's guests. */
static void test_census_require_arm(void)
{
	const struct {
		guint arm_level;
		const char *arm1, *arm4;
		guint failed;
	} cases[] = {
		{ 82, NULL,
		  "armv8-a does not reach the required armv8.2-a (lacks atomics, asimdrdm, dcpop)",
		  2 },
		{ 83,
		  "armv8.2-a does not reach the required armv8.3-a (lacks jscvt, fcma, paca, pacg)",
		  "armv8-a does not reach the required armv8.3-a (lacks atomics, asimdrdm, dcpop, "
		  "jscvt, fcma, lrcpc, paca, pacg)",
		  6 },
		{ 80, NULL, NULL, 1 },
	};

	for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
		g_autoptr(CliCensus) c = census_of("fleet-mixed.json", TRUE);
		const CliAuditRequire require = { .isa_level = 3, .arm_level = cases[i].arm_level };

		cli_census_finish(c, FALSE, &require);
		g_assert_cmpstr(find_guest(c, "arm-1")->require, ==, cases[i].arm1);
		g_assert_cmpstr(find_guest(c, "arm-4")->require, ==, cases[i].arm4);
		/* the x86 level still judges the x86 guests, and only them */
		g_assert_cmpstr(find_guest(c, "web-4")->require, ==,
		                "x86-64-v2 is below the required x86-64-v3");
		g_assert_null(find_guest(c, "web-1")->require);
		g_assert_cmpuint(c->n_require_failed, ==, cases[i].failed);
	}
}

/* Arm levels are no chain: the lowest is what every guest reaches, maybe held by none. */
static void test_census_arm_meet(void)
{
	const char *const levels[] = { "armv8.6-a", "armv9-a", "armv9.1-a" };
	g_autoptr(CliCensus) c = cli_census_new();
	const CliCensusArch *arm;
	g_autofree char *name85 = cli_census_level_name(85);

	for (guint i = 0; i < G_N_ELEMENTS(levels); i++) {
		g_autofree char *name = g_strdup_printf("g%u", i);
		g_autofree char *doc = g_strdup_printf(
		    "{\"cpu\": {\"architecture\": \"aarch64\", \"model_name\": \"m\", "
		    "\"isa_level\": \"%s\", \"flags\": [\"fp\"]}}",
		    levels[i]);
		g_autoptr(JsonNode) node = gb_json_parse(doc, strlen(doc), NULL);

		cli_census_add(c, name, "test", NULL, json_node_get_object(node));
	}
	cli_census_finish(c, FALSE, NULL);
	arm = g_ptr_array_index(c->archs, 0);
	g_assert_cmpuint(c->n_counted, ==, 3);
	g_assert_cmpuint(arm->lowest_level, ==, 85);
	g_assert_cmpuint(arm->lowest->len, ==, 0);
	g_assert_cmpuint(c->lowest_level, ==, 85);
	g_assert_cmpstr(name85, ==, "armv8.5-a");
	/* nor is a required level: armv9-a does not reach armv8.6-a, armv9.1-a does */
	for (guint required = 86; required <= 90; required += 4) {
		g_autoptr(CliCensus) r = cli_census_new();
		const CliAuditRequire require = { .arm_level = required };

		for (guint i = 0; i < G_N_ELEMENTS(levels); i++) {
			g_autofree char *name = g_strdup_printf("g%u", i);
			g_autofree char *doc = g_strdup_printf(
			    "{\"cpu\": {\"architecture\": \"aarch64\", \"model_name\": \"m\", "
			    "\"isa_level\": \"%s\", \"flags\": [\"fp\"]}}",
			    levels[i]);
			g_autoptr(JsonNode) node = gb_json_parse(doc, strlen(doc), NULL);

			cli_census_add(r, name, "test", NULL, json_node_get_object(node));
		}
		cli_census_finish(r, FALSE, &require);
		g_assert_cmpuint(r->n_require_failed, ==, 1);
		if (required == 86) {
			g_assert_null(find_guest(r, "g0")->require);
			g_assert_true(
			    g_str_has_prefix(find_guest(r, "g1")->require,
			                     "armv9-a does not reach the required armv8.6-a"));
		} else {
			g_assert_true(
			    g_str_has_prefix(find_guest(r, "g0")->require,
			                     "armv8.6-a does not reach the required armv9-a"));
			g_assert_null(find_guest(r, "g1")->require);
		}
		g_assert_null(find_guest(r, "g2")->require);
	}
}

/* Levels and architectures the census cannot place: a problem each, not a guess. */
static void test_census_arch_problems(void)
{
	struct {
		const char *arch, *level, *problem;
	} cases[] = {
		{ "aarch64", "armv8.9-a", "cpu.isa_level is not armv8-a..armv9.3-a" },
		{ "aarch64", "x86-64-v3", "cpu.isa_level is not armv8-a..armv9.3-a" },
		{ "x86_64", "armv8-a", "cpu.isa_level is not x86-64-v1..x86-64-v4" },
		{ "riscv64", "rv64gc",
		  "cpu.architecture riscv64 has no ISA levels known to the census" },
	};

	for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
		g_autoptr(CliCensus) c = cli_census_new();
		g_autofree char *doc =
		    g_strdup_printf("{\"cpu\": {\"architecture\": \"%s\", \"model_name\": \"m\", "
		                    "\"isa_level\": \"%s\", \"flags\": [\"fp\"]}}",
		                    cases[i].arch, cases[i].level);
		g_autoptr(JsonNode) node = gb_json_parse(doc, strlen(doc), NULL);

		cli_census_add(c, "g", "test", NULL, json_node_get_object(node));
		cli_census_finish(c, FALSE, NULL);
		g_assert_cmpuint(c->n_problems, ==, 1);
		g_assert_cmpstr(find_guest(c, "g")->problem, ==, cases[i].problem);
	}
}

/* The host's QEMU models are x86's: a mixed fleet's aarch64 scopes get none. */
static void test_census_qemu_mixed(void)
{
	/* fleet12's x86 guests (a model covers their baseline), fleet-mixed's arm ones */
	g_autoptr(CliCensus) c = census_of("fleet12.json", FALSE);
	g_autoptr(JsonNode) root = load_fixture("fleet-mixed.json");
	JsonArray *guests = json_object_get_array_member(json_node_get_object(root), "guests");
	guint x86 = 0, arm = 0;

	for (guint i = 0; i < json_array_get_length(guests); i++) {
		JsonObject *g = json_array_get_object_element(guests, i);
		const char *name = json_object_get_string_member(g, "name");

		if (g_str_has_prefix(name, "arm-"))
			cli_census_add(c, name, "fleet-mixed.json", NULL,
			               json_object_get_object_member(g, "result"));
	}
	census_set_qemu_capture(c, NULL);
	cli_census_finish(c, FALSE, NULL);
	g_assert_cmpuint(c->scopes->len, ==, 2);
	for (guint i = 0; i < c->scopes->len; i++) {
		const CliCensusScope *s = g_ptr_array_index(c->scopes, i);

		if (g_strcmp0(s->arch, "x86_64") == 0) {
			g_assert_nonnull(s->qemu_model);
			x86++;
		} else {
			g_assert_cmpstr(s->arch, ==, "aarch64");
			g_assert_null(s->qemu_model);
			g_assert_null(s->qemu_beyond);
			arm++;
		}
	}
	g_assert_cmpuint(x86, ==, 1);
	g_assert_cmpuint(arm, ==, 1);
}

int main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	g_test_add_func("/census/groups", test_census_groups);
	g_test_add_func("/census/outlier-by-tag", test_census_outlier_by_tag);
	g_test_add_func("/census/outlier-fleet", test_census_outlier_fleet);
	g_test_add_func("/census/require", test_census_require);
	g_test_add_func("/census/problems", test_census_problems);
	g_test_add_func("/census/empty", test_census_empty);
	g_test_add_func("/census/qemu/flag-names", test_census_qemu_flag_names);
	g_test_add_func("/census/qemu/models", test_census_qemu_models);
	g_test_add_func("/census/qemu/none-covers", test_census_qemu_none_covers);
	g_test_add_func("/census/qemu/malformed", test_census_qemu_malformed);
	g_test_add_func("/census/mixed", test_census_mixed);
	g_test_add_func("/census/arm-meet", test_census_arm_meet);
	g_test_add_func("/census/require-arm", test_census_require_arm);
	g_test_add_func("/census/arch-problems", test_census_arch_problems);
	g_test_add_func("/census/qemu/mixed", test_census_qemu_mixed);
	return g_test_run();
}
