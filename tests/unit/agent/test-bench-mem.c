/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"

#include <gio/gio.h>
#include <glib/gstdio.h>
#include <json-glib/json-glib.h>

#include "bench.h"
#include "gb-error.h"

#define TEST_SIZE (16 * 1024 * 1024)

static AgentConfig test_config = {
	.sysroot = (char *)"/",
	.max_bench_seconds = 60,
};

static JsonObject *test_obj(const char *json)
{
	g_autoptr(GError) error = NULL;
	g_autoptr(JsonNode) node = json_from_string(json, &error);
	g_assert_no_error(error);
	return json_object_ref(json_node_get_object(node));
}

/* A sysroot with the two files the mem benchmark reads; NULL content = file absent. */
static char *test_sysroot(const char *thp_enabled, const char *meminfo)
{
	g_autoptr(GError) error = NULL;
	char *root = g_dir_make_tmp("gb-bench-mem-XXXXXX", &error);
	g_autofree char *thp_dir =
	    g_build_filename(root, "sys/kernel/mm/transparent_hugepage", NULL);
	g_autofree char *proc_dir = g_build_filename(root, "proc", NULL);

	g_assert_no_error(error);
	g_assert_cmpint(g_mkdir_with_parents(thp_dir, 0755), ==, 0);
	g_assert_cmpint(g_mkdir_with_parents(proc_dir, 0755), ==, 0);
	if (thp_enabled != NULL) {
		g_autofree char *p = g_build_filename(thp_dir, "enabled", NULL);
		g_assert_true(g_file_set_contents(p, thp_enabled, -1, NULL));
	}
	if (meminfo != NULL) {
		g_autofree char *p = g_build_filename(proc_dir, "meminfo", NULL);
		g_assert_true(g_file_set_contents(p, meminfo, -1, NULL));
	}
	return root;
}

static void test_rm_rf(const char *root)
{
	g_autofree char *cmd = g_strdup_printf("rm -rf '%s'", root);
	g_assert_cmpint(system(cmd), ==, 0);
}

static void test_mem_thp_mode(void)
{
	struct {
		const char *content;
		const char *expect;
	} cases[] = {
		{ "always [madvise] never\n", "madvise" },
		{ "[always] madvise never\n", "always" },
		{ "always madvise [never]\n", "never" },
		{ "always madvise never\n", NULL },
		{ "always [madvise never\n", NULL },
		{ "[]\n", NULL },
		{ "", NULL },
		{ NULL, NULL },
	};

	for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
		g_autoptr(GError) error = NULL;
		g_autofree char *root = test_sysroot(cases[i].content, "");
		g_autofree char *mode = agent_bench_mem_thp_mode(root, &error);
		g_assert_cmpstr(mode, ==, cases[i].expect);
		if (cases[i].expect == NULL)
			g_assert_nonnull(error);
		test_rm_rf(root);
	}
}

static void test_mem_hugetlb(void)
{
	struct {
		const char *meminfo;
		const char *expect; /* NULL = available */
	} cases[] = {
		{ "HugePages_Total:       8\nHugePages_Free:        8\nHugepagesize:       2048 "
		  "kB\n",
		  NULL },
		{ "HugePages_Total:       0\nHugePages_Free:        0\nHugepagesize:       2048 "
		  "kB\n",
		  "HugePages_Total is 0" },
		{ "HugePages_Total:      16\nHugePages_Free:        2\nHugepagesize:       2048 "
		  "kB\n",
		  "2 hugepages of 2048 kB are free, 8 needed" },
		{ "HugePages_Total:      16\nHugePages_Free:     lots\nHugepagesize:       2048 "
		  "kB\n",
		  "no hugetlb pages" },
		{ "HugePages_Total:      16\nHugepagesize:       2048 kB\n", "no hugetlb pages" },
		{ "HugePages_Total:  99999999999999999999999\nHugePages_Free: 1\nHugepagesize: "
		  "2048 kB\n",
		  "no hugetlb pages" },
		{ "HugePages_Total: 1\nHugePages_Free: 1\nHugepagesize: 0 kB\n",
		  "no hugetlb pages" },
		{ "garbage\0\n", "no hugetlb pages" },
		{ NULL, "cannot read /proc/meminfo" },
	};

	for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
		g_autofree char *root = test_sysroot("[never]", cases[i].meminfo);
		g_autofree char *reason = agent_bench_mem_hugetlb_unavailable(root, TEST_SIZE);
		if (cases[i].expect == NULL) {
			g_assert_null(reason);
		} else {
			g_assert_nonnull(reason);
			g_test_message("case %u: %s", i, reason);
			g_assert_nonnull(strstr(reason, cases[i].expect));
		}
		test_rm_rf(root);
	}
}

static void test_mem_validate(void)
{
	struct {
		const char *json;
		const char *expect;
	} cases[] = {
		{ "{\"bogus\": 1}", "Parameter 'bogus' is unexpected" },
		{ "{\"size\": \"16M\"}", "'size'" },
		{ "{\"size\": 1.5}", "'size'" },
		{ "{\"size\": 4096}", "'size'" },
		{ "{\"size\": -1}", "'size'" },
		{ "{\"size\": 1099511627776000}", "MemAvailable" },
		{ "{\"size\": 16777217}", "multiple of 4096" },
		{ "{\"pages\": \"4k\"}", "'pages" },
		{ "{\"pages\": [4]}", "'pages" },
		{ "{\"pages\": []}", "is empty" },
		{ "{\"pages\": [\"1g\"]}", "allowed: 4k, thp, hugetlb" },
		{ "{\"pages\": [\"4k\", \"4k\"]}", "twice" },
	};
	AgentConfig short_config = test_config;

	for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
		g_autoptr(GError) error = NULL;
		g_autoptr(JsonObject) params = test_obj(cases[i].json);
		g_autoptr(JsonObject) out = agent_bench_mem.validate(&test_config, params, &error);
		g_assert_null(out);
		g_assert_error(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT);
		g_test_message("%s: %s", cases[i].json, error->message);
		g_assert_nonnull(strstr(error->message, cases[i].expect));
	}

	/* the duration cap */
	short_config.max_bench_seconds = 1;
	{
		g_autoptr(GError) error = NULL;
		g_autoptr(JsonObject) params = test_obj("{\"size\": 16777216}");
		g_autoptr(JsonObject) out = agent_bench_mem.validate(&short_config, params, &error);
		g_assert_null(out);
		g_assert_error(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT);
		g_assert_nonnull(strstr(error->message, "max-bench-seconds=1"));
	}

	/* defaults */
	{
		g_autoptr(GError) error = NULL;
		g_autoptr(JsonObject) params = test_obj("{\"size\": 16777216}");
		g_autoptr(JsonObject) out = agent_bench_mem.validate(&test_config, params, &error);
		JsonArray *pages;
		g_assert_no_error(error);
		g_assert_cmpint(json_object_get_int_member(out, "size"), ==, TEST_SIZE);
		pages = json_object_get_array_member(out, "pages");
		g_assert_cmpint(json_array_get_length(pages), ==, 3);
		g_assert_cmpstr(json_array_get_string_element(pages, 0), ==, "4k");
	}
}

static JsonObject *test_find(JsonArray *metrics, const char *metric, const char *pages,
                             const char *op)
{
	for (guint i = 0; i < json_array_get_length(metrics); i++) {
		JsonObject *s = json_array_get_object_element(metrics, i);
		JsonObject *labels = json_object_get_object_member(s, "labels");
		if (g_strcmp0(json_object_get_string_member(s, "metric"), metric) != 0)
			continue;
		if (g_strcmp0(json_object_get_string_member(labels, "pages"), pages) != 0)
			continue;
		if (op != NULL && g_strcmp0(json_object_get_string_member(labels, "op"), op) != 0)
			continue;
		return s;
	}
	return NULL;
}

/* Every metric of one kind of page: a positive number, or null with a reason. */
static void test_check_kind(JsonArray *metrics, const char *pages, gboolean expect_available)
{
	const char *names[][2] = {
		{ "page-fault", NULL },          { "memory-bandwidth", "read" },
		{ "memory-bandwidth", "write" }, { "memory-bandwidth", "copy" },
		{ "memory-latency", NULL },
	};

	for (guint i = 0; i < G_N_ELEMENTS(names); i++) {
		JsonObject *s = test_find(metrics, names[i][0], pages, names[i][1]);
		JsonNode *value;
		g_assert_nonnull(s);
		value = json_object_get_member(s, "value");
		g_assert_nonnull(value);
		if (expect_available) {
			g_assert_true(JSON_NODE_HOLDS_VALUE(value));
			g_assert_cmpfloat(json_node_get_double(value), >, 0);
			g_assert_false(json_object_has_member(s, "unavailable"));
		} else {
			g_assert_true(JSON_NODE_HOLDS_NULL(value));
			g_assert_cmpstr(json_object_get_string_member(s, "unavailable"), !=, "");
		}
	}
}

static JsonArray *test_run(const char *sysroot, GError **error)
{
	g_autoptr(JsonObject) params = test_obj("{\"size\": 16777216}");
	g_autoptr(JsonObject) norm = agent_bench_mem.validate(&test_config, params, error);
	AgentBenchContext ctx = { .config = &test_config, .sysroot = sysroot };
	g_autoptr(JsonNode) res = NULL;

	if (norm == NULL)
		return NULL;
	res = agent_bench_mem.run(&ctx, norm, error);
	if (res == NULL)
		return NULL;
	return json_array_ref(json_object_get_array_member(json_node_get_object(res), "metrics"));
}

static void test_mem_run_real(void)
{
	g_autoptr(GError) error = NULL;
	g_autoptr(JsonArray) metrics = test_run("/", &error);
	g_autofree char *thp = NULL;
	g_autofree char *meminfo = NULL;
	gboolean thp_never;
	guint64 free_pages = 0;
	guint64 page_kb = 0;
	const char *p;

	g_assert_no_error(error);
	g_assert_cmpint(json_array_get_length(metrics), ==, 15);
	test_check_kind(metrics, "4k", TRUE);

	/* what the system says, read here independently of the benchmark */
	if (g_file_get_contents("/sys/kernel/mm/transparent_hugepage/enabled", &thp, NULL, NULL))
		thp_never = strstr(thp, "[never]") != NULL;
	else
		thp_never = TRUE;
	if (thp_never) {
		test_check_kind(metrics, "thp", FALSE);
	} else {
		JsonObject *s = test_find(metrics, "page-fault", "thp", NULL);
		/* madvise may still fail (e.g. a seccomp filter): then a reason, never a number */
		test_check_kind(metrics, "thp", !json_object_has_member(s, "unavailable"));
	}
	g_assert_true(g_file_get_contents("/proc/meminfo", &meminfo, NULL, NULL));
	p = strstr(meminfo, "HugePages_Free:");
	if (p != NULL)
		free_pages = g_ascii_strtoull(p + strlen("HugePages_Free:"), NULL, 10);
	p = strstr(meminfo, "Hugepagesize:");
	if (p != NULL)
		page_kb = g_ascii_strtoull(p + strlen("Hugepagesize:"), NULL, 10);
	if (page_kb == 0 || free_pages * page_kb * 1024 < TEST_SIZE) {
		test_check_kind(metrics, "hugetlb", FALSE);
	} else {
		JsonObject *s = test_find(metrics, "page-fault", "hugetlb", NULL);
		test_check_kind(metrics, "hugetlb", !json_object_has_member(s, "unavailable"));
	}
}

static void test_mem_run_fixture(void)
{
	g_autoptr(GError) error = NULL;
	g_autofree char *root = test_sysroot(
	    "always madvise [never]\n",
	    "HugePages_Total:       0\nHugePages_Free:        0\nHugepagesize:       2048 kB\n");
	g_autoptr(JsonArray) metrics = test_run(root, &error);
	JsonObject *s;

	g_assert_no_error(error);
	test_check_kind(metrics, "4k", TRUE);
	test_check_kind(metrics, "thp", FALSE);
	test_check_kind(metrics, "hugetlb", FALSE);
	s = test_find(metrics, "page-fault", "thp", NULL);
	g_assert_nonnull(strstr(json_object_get_string_member(s, "unavailable"), "never"));
	s = test_find(metrics, "memory-latency", "hugetlb", NULL);
	g_assert_nonnull(
	    strstr(json_object_get_string_member(s, "unavailable"), "HugePages_Total is 0"));
	test_rm_rf(root);
}

static void test_mem_cancel(void)
{
	g_autoptr(GError) error = NULL;
	g_autoptr(JsonObject) params = test_obj("{\"size\": 16777216, \"pages\": [\"4k\"]}");
	g_autoptr(JsonObject) norm = agent_bench_mem.validate(&test_config, params, &error);
	AgentBenchContext ctx = { .config = &test_config, .sysroot = "/" };
	g_autoptr(JsonNode) res = NULL;

	g_assert_no_error(error);
	g_atomic_int_set(&ctx.cancel, 1);
	res = agent_bench_mem.run(&ctx, norm, &error);
	g_assert_null(res);
	g_assert_error(error, G_IO_ERROR, G_IO_ERROR_CANCELLED);
}

int main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	g_test_add_func("/bench/mem/thp-mode", test_mem_thp_mode);
	g_test_add_func("/bench/mem/hugetlb", test_mem_hugetlb);
	g_test_add_func("/bench/mem/validate", test_mem_validate);
	g_test_add_func("/bench/mem/run-real", test_mem_run_real);
	g_test_add_func("/bench/mem/run-fixture", test_mem_run_fixture);
	g_test_add_func("/bench/mem/cancel", test_mem_cancel);
	return g_test_run();
}
