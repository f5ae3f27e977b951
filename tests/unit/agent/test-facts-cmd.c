/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <string.h>

#include "facts-test.h"

typedef struct {
	AgentConfig config;
	AgentContext agent;
	char *root;
} Fixture;

static void fixture_setup(Fixture *fx, gconstpointer data)
{
	fx->root = facts_fixture_path("qemu64");
	fx->config.sysroot = fx->root;
	fx->agent.config = &fx->config;
}

static void fixture_teardown(Fixture *fx, gconstpointer data)
{
	g_free(fx->root);
}

static JsonNode *run(Fixture *fx, const char *args_json, GError **error)
{
	g_autoptr(JsonNode) args = NULL;

	if (args_json != NULL) {
		g_autoptr(GError) error_parse = NULL;
		args = json_from_string(args_json, &error_parse);
		g_assert_no_error(error_parse);
	}
	return agent_cmd_get_facts(&fx->agent, args != NULL ? json_node_get_object(args) : NULL,
	                           error);
}

static void test_defaults(Fixture *fx, gconstpointer data)
{
	g_autoptr(GError) error = NULL;
	g_autoptr(JsonNode) all = run(fx, NULL, &error);
	g_autoptr(JsonNode) empty = NULL;
	const char *const members[] = { "agent_version", "cpu", "memory", "clocksource", "steal",
		                        "block",         "net", "os",     "errors" };

	g_assert_no_error(error);
	for (guint i = 0; i < G_N_ELEMENTS(members); i++)
		g_assert_nonnull(facts_get(all, members[i]));
	g_assert_cmpuint(json_object_get_size(json_node_get_object(all)), ==,
	                 G_N_ELEMENTS(members));
	/* Read under the configured sysroot; the default steal window is 200 ms. */
	g_assert_cmpstr(facts_get_str(all, "cpu.model_name"), ==, "QEMU Virtual CPU version 2.5+");
	g_assert_cmpint(facts_get_int(all, "steal.window_ms"), ==, 200);

	/* The tree is another system: this machine's live CPUID must not be mixed in. */
	g_assert_true(facts_is_null(all, "cpu.cpuid"));
	g_assert_cmpstr(facts_get_str(all, "cpu.hypervisor.source"), !=, "cpuid");

	/* right after: from the sample kept by the first call, at least 200 ms old */
	empty = run(fx, "{}", &error);
	g_assert_no_error(error);
	g_assert_cmpint(facts_get_int(empty, "steal.window_ms"), >=, 200);
}

static void test_subset(Fixture *fx, gconstpointer data)
{
	g_autoptr(GError) error = NULL;
	g_autoptr(JsonNode) some =
	    run(fx, "{\"sections\": [\"steal\", \"block\"], \"steal_window_ms\": 0}", &error);
	g_autoptr(JsonNode) nulls = NULL;

	g_assert_no_error(error);
	g_assert_cmpuint(json_object_get_size(json_node_get_object(some)), ==, 4);
	g_assert_cmpint(facts_get_int(some, "steal.window_ms"), ==, 0);
	g_assert_cmpstr(facts_get_str(some, "block.0.name"), ==, "sda");
	g_assert_null(facts_get(some, "cpu"));

	/* null means "not given" for optional members. */
	nulls = run(fx, "{\"sections\": null, \"steal_window_ms\": null}", &error);
	g_assert_no_error(error);
	g_assert_cmpint(facts_get_int(nulls, "steal.window_ms"), >=, 200);
	g_assert_nonnull(facts_get(nulls, "cpu"));
}

static void test_bad_args(Fixture *fx, gconstpointer data)
{
	struct {
		const char *args;
		const char *message; /* NULL: any INVALID_ARGUMENT naming the member */
		const char *member;
	} cases[] = {
		{ "{\"sections\": [\"cpu\", \"x\"]}",
		  "Parameter 'sections[1]': unknown section 'x' (known: cpu, memory, clocksource, "
		  "steal, block, net, os)",
		  NULL },
		{ "{\"sections\": [\"CPU\"]}", NULL, "sections[0]" },
		{ "{\"sections\": [\"\"]}", NULL, "sections[0]" },
		{ "{\"sections\": [\"a\\nb\"]}", NULL, "sections[0]" },
		{ "{\"sections\": \"cpu\"}", NULL, "sections" },
		{ "{\"sections\": {}}", NULL, "sections" },
		{ "{\"sections\": [1]}", NULL, "sections[0]" },
		{ "{\"sections\": [[\"cpu\"]]}", NULL, "sections[0]" },
		{ "{\"sections\": [null]}", NULL, "sections[0]" },
		{ "{\"steal_window_ms\": 5001}",
		  "Parameter 'steal_window_ms' is out of range: 5001 (allowed 0..5000)", NULL },
		{ "{\"steal_window_ms\": -1}", NULL, "steal_window_ms" },
		{ "{\"steal_window_ms\": 99999999999999999999}", NULL, "steal_window_ms" },
		{ "{\"steal_window_ms\": \"100\"}", NULL, "steal_window_ms" },
		{ "{\"steal_window_ms\": 1.5}", NULL, "steal_window_ms" },
		{ "{\"steal_window_ms\": true}", NULL, "steal_window_ms" },
		{ "{\"bogus\": 1}", "Parameter 'bogus' is unexpected", NULL },
		{ "{\"sections\": [\"cpu\"], \"Sections\": []}", NULL, "Sections" },
	};
	for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
		g_autoptr(GError) error = NULL;
		g_autoptr(JsonNode) node = run(fx, cases[i].args, &error);

		g_test_message("%s -> %s", cases[i].args, error != NULL ? error->message : "ok");
		g_assert_null(node);
		g_assert_error(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT);
		if (cases[i].message != NULL) {
			g_assert_cmpstr(error->message, ==, cases[i].message);
		} else {
			g_autofree char *quoted = g_strdup_printf("'%s'", cases[i].member);
			g_assert_nonnull(strstr(error->message, quoted));
		}
	}
}

/*
 * Without an explicit window, steal is measured since the previous sample (the
 * agent primes one at start-up) instead of sleeping on the main loop.
 */
static void test_steal_since_previous(Fixture *fx, gconstpointer data)
{
	g_autoptr(GError) error = NULL;
	g_autoptr(JsonNode) since = NULL;
	g_autoptr(JsonNode) asked = NULL;

	agent_facts_steal_prime(fx->root);
	g_usleep(300 * 1000);
	since = run(fx, "{\"sections\": [\"steal\"]}", &error);
	g_assert_no_error(error);
	/* the window is the time since the prime, not a fresh 200 ms sleep */
	g_assert_cmpint(facts_get_int(since, "steal.window_ms"), >=, 300);
	asked = run(fx, "{\"sections\": [\"steal\"], \"steal_window_ms\": 50}", &error);
	g_assert_no_error(error);
	g_assert_cmpint(facts_get_int(asked, "steal.window_ms"), ==, 50);
}

static void test_default_sysroot(void)
{
	/* No config sysroot: the live root. Only the cheap sections. */
	AgentConfig config = { 0 };
	AgentContext agent = { .config = &config };
	g_autoptr(GError) error = NULL;
	g_autoptr(JsonNode) args = json_from_string("{\"sections\": [\"os\"]}", &error);
	g_autoptr(JsonNode) os = NULL;

	g_assert_no_error(error);
	os = agent_cmd_get_facts(&agent, json_node_get_object(args), &error);
	g_assert_no_error(error);
	g_assert_false(facts_is_null(os, "os.kernel_release"));
}

int main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	g_test_add("/facts/cmd/defaults", Fixture, NULL, fixture_setup, test_defaults,
	           fixture_teardown);
	g_test_add("/facts/cmd/subset", Fixture, NULL, fixture_setup, test_subset,
	           fixture_teardown);
	g_test_add("/facts/cmd/bad-args", Fixture, NULL, fixture_setup, test_bad_args,
	           fixture_teardown);
	g_test_add("/facts/cmd/steal-since-previous", Fixture, NULL, fixture_setup,
	           test_steal_since_previous, fixture_teardown);
	g_test_add_func("/facts/cmd/default-sysroot", test_default_sysroot);
	return g_test_run();
}
