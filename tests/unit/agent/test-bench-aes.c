/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"

#include <gio/gio.h>
#include <json-glib/json-glib.h>

#include "bench.h"
#include "gb-error.h"

static AgentConfig test_config = {
	.sysroot = (char *)"/",
	.max_bench_seconds = 60,
};

static JsonObject *test_obj(const char *json)
{
	g_autoptr(GError) error = NULL;
	g_autoptr(JsonNode) node = json_from_string(json, &error);
	g_assert_no_error(error);
	g_assert_nonnull(node);
	g_assert_true(JSON_NODE_HOLDS_OBJECT(node));
	return json_object_ref(json_node_get_object(node));
}

static void test_aes_kat_builtin(void)
{
	const char *ciphers[] = { "aes-128-gcm", "aes-256-gcm", "chacha20-poly1305" };

	for (guint i = 0; i < G_N_ELEMENTS(ciphers); i++) {
		g_autoptr(GError) error = NULL;
		const AgentAesKat *kat = agent_bench_aes_kat_lookup(ciphers[i]);
		g_assert_nonnull(kat);
		g_assert_true(agent_bench_aes_kat_check(kat, &error));
		g_assert_no_error(error);
	}
	g_assert_null(agent_bench_aes_kat_lookup("des-cbc"));
	g_assert_null(agent_bench_aes_kat_lookup(NULL));
}

/* Flips the last hex digit of a string (the vector's strings are static). */
static char *test_flip_last(const char *hex)
{
	char *copy = g_strdup(hex);
	gsize len = strlen(copy);
	copy[len - 1] = copy[len - 1] == '0' ? '1' : '0';
	return copy;
}

static void test_aes_kat_failure(void)
{
	const AgentAesKat *good = agent_bench_aes_kat_lookup("aes-128-gcm");
	g_autofree char *ct = test_flip_last(good->ciphertext);
	g_autofree char *tag = test_flip_last(good->tag);
	g_autofree char *key = test_flip_last(good->key);
	AgentAesKat kat;

	struct {
		const char *field;
		const char *value;
		const char *expect;
	} cases[] = {
		{ "ciphertext", ct, "ciphertext mismatch" },
		{ "tag", tag, "tag mismatch" },
		{ "key", key, "ciphertext mismatch" },
		{ "key", "zz", "key is not a hex string" },
		{ "key", "abc", "key is not a hex string" },
		{ "key", "00112233", "key is 4 bytes" },
		{ "iv", "", "wrong length" },
		{ "tag", "0011", "wrong length" },
		{ "cipher", "no-such-cipher", "OpenSSL has no cipher" },
	};

	for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
		g_autoptr(GError) error = NULL;
		kat = *good;
		if (g_str_equal(cases[i].field, "ciphertext"))
			kat.ciphertext = cases[i].value;
		else if (g_str_equal(cases[i].field, "tag"))
			kat.tag = cases[i].value;
		else if (g_str_equal(cases[i].field, "key"))
			kat.key = cases[i].value;
		else if (g_str_equal(cases[i].field, "iv"))
			kat.iv = cases[i].value;
		else
			kat.cipher = cases[i].value;
		g_assert_false(agent_bench_aes_kat_check(&kat, &error));
		g_assert_error(error, GB_ERROR, error->code);
		g_assert_nonnull(strstr(error->message, "Known-answer test for"));
		if (strstr(error->message, cases[i].expect) == NULL)
			g_test_message("case %u: '%s' lacks '%s'", i, error->message,
			               cases[i].expect);
		g_assert_nonnull(strstr(error->message, cases[i].expect));
	}
}

static void test_aes_validate_defaults(void)
{
	g_autoptr(GError) error = NULL;
	g_autoptr(JsonObject) params = json_object_new();
	g_autoptr(JsonObject) out = agent_bench_aes.validate(&test_config, params, &error);
	JsonArray *sizes;

	g_assert_no_error(error);
	g_assert_nonnull(out);
	g_assert_cmpstr(json_object_get_string_member(out, "cipher"), ==, "aes-128-gcm");
	g_assert_cmpstr(json_object_get_string_member(out, "loop"), ==, "aead");
	g_assert_false(json_object_get_boolean_member(out, "aad"));
	g_assert_cmpfloat(json_object_get_double_member(out, "seconds"), ==, 3.0);
	g_assert_cmpint(json_object_get_int_member(out, "threads"), ==, 1);
	sizes = json_object_get_array_member(out, "sizes");
	g_assert_cmpint(json_array_get_length(sizes), ==, 6);
	g_assert_cmpint(json_array_get_int_element(sizes, 0), ==, 16);
	g_assert_cmpint(json_array_get_int_element(sizes, 5), ==, 16384);
	/* the agent can never take NULL params: the runner passes {} */
}

static void test_aes_validate_bad(void)
{
	struct {
		const char *json;
		const char *expect;
	} cases[] = {
		{ "{\"bogus\": 1}", "Parameter 'bogus' is unexpected" },
		{ "{\"cipher\": 5}", "'cipher'" },
		{ "{\"cipher\": \"des\"}",
		  "must be one of: aes-128-gcm, aes-256-gcm, chacha20-poly1305" },
		{ "{\"sizes\": \"16\"}", "'sizes" },
		{ "{\"sizes\": [16, \"x\"]}", "'sizes" },
		{ "{\"sizes\": [0]}", "1..1048576" },
		{ "{\"sizes\": [2000000]}", "1..1048576" },
		{ "{\"sizes\": [-16]}", "1..1048576" },
		{ "{\"sizes\": []}", "allowed 1..16" },
		{ "{\"sizes\": [1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17]}", "allowed 1..16" },
		{ "{\"seconds\": \"3\"}", "'seconds'" },
		{ "{\"seconds\": 0.05}", "'seconds'" },
		{ "{\"seconds\": 0}", "'seconds'" },
		{ "{\"seconds\": 61}", "'seconds'" },
		{ "{\"seconds\": 11}", "max-bench-seconds=60" },
		{ "{\"threads\": 0}", "'threads'" },
		{ "{\"threads\": 100000}", "'threads'" },
		{ "{\"threads\": 1.5}", "'threads'" },
		{ "{\"loop\": \"fast\"}", "must be one of: aead, stream" },
		{ "{\"loop\": true}", "'loop'" },
		{ "{\"aad\": 1}", "'aad'" },
		{ "{\"aad\": true, \"loop\": \"stream\"}", "needs loop 'aead'" },
	};

	for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
		g_autoptr(GError) error = NULL;
		g_autoptr(JsonObject) params = test_obj(cases[i].json);
		g_autoptr(JsonObject) out = agent_bench_aes.validate(&test_config, params, &error);
		g_assert_null(out);
		g_assert_error(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT);
		if (strstr(error->message, cases[i].expect) == NULL)
			g_test_message("%s: '%s' lacks '%s'", cases[i].json, error->message,
			               cases[i].expect);
		g_assert_nonnull(strstr(error->message, cases[i].expect));
	}
}

static JsonObject *test_run(const char *json, GError **error)
{
	g_autoptr(JsonObject) params = test_obj(json);
	g_autoptr(JsonObject) norm = agent_bench_aes.validate(&test_config, params, error);
	AgentBenchContext ctx = { .config = &test_config, .sysroot = "/" };
	g_autoptr(JsonNode) res = NULL;

	if (norm == NULL)
		return NULL;
	res = agent_bench_aes.run(&ctx, norm, error);
	if (res == NULL)
		return NULL;
	return json_object_ref(json_node_get_object(res));
}

static void test_aes_check_metrics(JsonObject *res, const char *cipher, guint n)
{
	JsonArray *metrics = json_object_get_array_member(res, "metrics");
	g_assert_cmpint(json_array_get_length(metrics), ==, n);
	for (guint i = 0; i < n; i++) {
		JsonObject *s = json_array_get_object_element(metrics, i);
		JsonObject *labels = json_object_get_object_member(s, "labels");
		g_assert_cmpstr(json_object_get_string_member(s, "metric"), ==, cipher);
		g_assert_cmpstr(json_object_get_string_member(s, "unit"), ==, "B/s");
		g_assert_nonnull(json_object_get_string_member(labels, "block_size"));
		g_assert_cmpfloat(json_object_get_double_member(s, "value"), >, 0);
	}
	g_assert_true(json_object_get_boolean_member(
	    json_object_get_object_member(res, "known_answer_test"), "passed"));
}

static void test_aes_run_small(void)
{
	g_autoptr(GError) error = NULL;
	g_autoptr(JsonObject) res = test_run("{\"seconds\": 0.1, \"sizes\": [16, 1024]}", &error);
	JsonArray *metrics;

	g_assert_no_error(error);
	test_aes_check_metrics(res, "aes-128-gcm", 2);
	metrics = json_object_get_array_member(res, "metrics");
	g_assert_cmpstr(
	    json_object_get_string_member(
	        json_object_get_object_member(json_array_get_object_element(metrics, 1), "labels"),
	        "block_size"),
	    ==, "1024");
}

static void test_aes_run_variants(void)
{
	const char *const cases[][2] = {
		{ "{\"seconds\": 0.1, \"sizes\": [64], \"loop\": \"stream\"}", "aes-128-gcm" },
		{ "{\"seconds\": 0.1, \"sizes\": [31], \"aad\": true}", "aes-128-gcm" },
		{ "{\"seconds\": 0.1, \"sizes\": [16384], \"cipher\": \"aes-256-gcm\"}",
		  "aes-256-gcm" },
		{ "{\"seconds\": 0.1, \"sizes\": [256], \"cipher\": \"chacha20-poly1305\"}",
		  "chacha20-poly1305" },
	};

	for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
		g_autoptr(GError) error = NULL;
		g_autoptr(JsonObject) res = test_run(cases[i][0], &error);
		g_assert_no_error(error);
		test_aes_check_metrics(res, cases[i][1], 1);
	}
	if (g_get_num_processors() >= 2) {
		g_autoptr(GError) error = NULL;
		g_autoptr(JsonObject) res =
		    test_run("{\"seconds\": 0.1, \"sizes\": [1024], \"threads\": 2}", &error);
		g_assert_no_error(error);
		test_aes_check_metrics(res, "aes-128-gcm", 1);
	}
}

static gpointer test_cancel_later(gpointer data)
{
	AgentBenchContext *ctx = data;
	g_usleep(150 * 1000);
	g_atomic_int_set(&ctx->cancel, 1);
	return NULL;
}

static void test_aes_cancel(void)
{
	g_autoptr(GError) error = NULL;
	g_autoptr(JsonObject) params = test_obj("{\"seconds\": 10, \"sizes\": [16384]}");
	g_autoptr(JsonObject) norm = agent_bench_aes.validate(&test_config, params, &error);
	AgentBenchContext ctx = { .config = &test_config, .sysroot = "/" };
	g_autoptr(JsonNode) res = NULL;
	GThread *thread;
	gint64 start;

	g_assert_no_error(error);
	thread = g_thread_new("canceller", test_cancel_later, &ctx);
	start = g_get_monotonic_time();
	res = agent_bench_aes.run(&ctx, norm, &error);
	g_thread_join(thread);
	g_assert_null(res);
	g_assert_error(error, G_IO_ERROR, G_IO_ERROR_CANCELLED);
	/* cancelled after 150 ms: it must not run anywhere near the 10 s asked for */
	g_assert_cmpint(g_get_monotonic_time() - start, <, 150 * 1000 + 100 * 1000);
}

/* The capability masks OpenSSL obeys are reported as the environment sets them. */
static void test_aes_capability_env(void)
{
	struct {
		const char *ia32cap, *armcap;
		const char *want; /* the member as JSON */
	} cases[] = {
		{ NULL, NULL, "{}" },
		{ NULL, "0", "{\"OPENSSL_armcap\":\"0\"}" },
		{ "~0x200000200000000", NULL, "{\"OPENSSL_ia32cap\":\"~0x200000200000000\"}" },
		{ "0x1\x01", "0", "{\"OPENSSL_ia32cap\":null,\"OPENSSL_armcap\":\"0\"}" },
	};
	g_autofree char *huge = g_strnfill(257, '0');

	for (guint i = 0; i < G_N_ELEMENTS(cases) + 1; i++) {
		g_autoptr(GError) error = NULL;
		g_autoptr(JsonObject) res = NULL;
		g_autoptr(JsonNode) node = json_node_new(JSON_NODE_OBJECT);
		g_autofree char *got = NULL;
		const char *ia32 = i < G_N_ELEMENTS(cases) ? cases[i].ia32cap : NULL;
		const char *arm = i < G_N_ELEMENTS(cases) ? cases[i].armcap : huge;

		if (ia32 != NULL)
			g_setenv("OPENSSL_ia32cap", ia32, TRUE);
		else
			g_unsetenv("OPENSSL_ia32cap");
		if (arm != NULL)
			g_setenv("OPENSSL_armcap", arm, TRUE);
		else
			g_unsetenv("OPENSSL_armcap");
		res = test_run("{\"seconds\": 0.1, \"sizes\": [16]}", &error);
		g_assert_no_error(error);
		json_node_set_object(node,
		                     json_object_get_object_member(res, "openssl_capability_env"));
		got = json_to_string(node, FALSE);
		g_test_message("case %u: %s", i, got);
		g_assert_cmpstr(
		    got, ==, i < G_N_ELEMENTS(cases) ? cases[i].want : "{\"OPENSSL_armcap\":null}");
	}
	g_unsetenv("OPENSSL_ia32cap");
	g_unsetenv("OPENSSL_armcap");
}

int main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	g_test_add_func("/bench/aes/kat-builtin", test_aes_kat_builtin);
	g_test_add_func("/bench/aes/kat-failure", test_aes_kat_failure);
	g_test_add_func("/bench/aes/validate-defaults", test_aes_validate_defaults);
	g_test_add_func("/bench/aes/validate-bad", test_aes_validate_bad);
	g_test_add_func("/bench/aes/run-small", test_aes_run_small);
	g_test_add_func("/bench/aes/capability-env", test_aes_capability_env);
	g_test_add_func("/bench/aes/run-variants", test_aes_run_variants);
	g_test_add_func("/bench/aes/cancel", test_aes_cancel);
	return g_test_run();
}
