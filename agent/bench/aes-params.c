/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The aes benchmark's parameters: what gb-bench-start checks in the agent
 * itself. The benchmark (aes.c) runs in guestbench-agent-bench and is the
 * only code that needs libcrypto, so the agent does not link it.
 */
#include "config.h"

#include <gio/gio.h>

#include "bench.h"
#include "gb-bench-limits.h"
#include "gb-error.h"
#include "gb-json.h"

#define AES_DEFAULT_SECONDS GB_BENCH_AES_DEFAULT_SECONDS
#define AES_MIN_SECONDS GB_BENCH_AES_MIN_SECONDS

const char *const agent_bench_aes_ciphers[] = { "aes-128-gcm", "aes-256-gcm", "chacha20-poly1305",
	                                        NULL };

/*
 * "aead" (default): one whole message per operation, the loop the OpenSSL
 * 3.0.x on Debian 12 (3.0.22 checked with callgrind) runs for
 * `openssl speed -evp` with an AEAD cipher: set the IV length, re-key with
 * key and IV, encrypt the payload, finalise (the tag). With "aad": true a
 * 13-byte AAD goes first, as `openssl speed -aead` does.
 * "stream": EVP_Update_loop of OpenSSL 3.0.0-3.0.x before that change: one
 * context encrypting block after block without re-keying (much faster for
 * small blocks; numbers from older openssl builds compare with this one).
 */
const char *const agent_bench_aes_loops[] = { "aead", "stream", NULL };

static gboolean aes_strv_contains(const char *const *list, const char *value)
{
	return g_strv_contains(list, value);
}

JsonObject *agent_bench_aes_validate(const AgentConfig *config, JsonObject *params, GError **error)
{
	static const char *const allowed[] = { "cipher", "sizes", "seconds", "threads",
		                               "loop",   "aad",   NULL };
	const char *cipher = AGENT_BENCH_AES_DEFAULT_CIPHER;
	const char *loop = agent_bench_aes_loops[0];
	double seconds = AES_DEFAULT_SECONDS;
	double max_seconds = (double)config->max_bench_seconds;
	gint64 threads = 1;
	gint64 max_threads = MIN((gint64)g_get_num_processors(), GB_BENCH_AES_MAX_THREADS);
	gboolean aad = FALSE;
	g_autoptr(GArray) sizes = NULL;
	g_autoptr(JsonObject) out = json_object_new();
	JsonArray *sizes_out;

	if (!gb_json_check_members(params, allowed, error))
		return NULL;
	if (!gb_json_get_string(params, "cipher", GB_JSON_OPTIONAL, &cipher, error))
		return NULL;
	if (!aes_strv_contains(agent_bench_aes_ciphers, cipher)) {
		g_autofree char *list = g_strjoinv(", ", (char **)agent_bench_aes_ciphers);
		g_set_error(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT,
		            "Parameter 'cipher' must be one of: %s", list);
		return NULL;
	}
	if (!gb_json_get_int_array(params, "sizes", GB_JSON_OPTIONAL, G_MININT64, G_MAXINT64,
	                           &sizes, error))
		return NULL;
	if (sizes == NULL) {
		sizes = g_array_new(FALSE, FALSE, sizeof(gint64));
		g_array_append_vals(sizes, gb_bench_aes_default_sizes,
		                    G_N_ELEMENTS(gb_bench_aes_default_sizes));
	}
	if (!gb_bench_check_aes_sizes((const gint64 *)(gpointer)sizes->data, sizes->len, error)) {
		g_prefix_error(error, "Parameter 'sizes': ");
		return NULL;
	}
	if (max_seconds < AES_MIN_SECONDS) {
		g_set_error(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT,
		            "Benchmarks are limited to max-bench-seconds=%" G_GINT64_FORMAT
		            ", below the aes minimum of %.1f s",
		            config->max_bench_seconds, AES_MIN_SECONDS);
		return NULL;
	}
	if (!gb_json_get_double(params, "seconds", GB_JSON_OPTIONAL, -G_MAXDOUBLE, G_MAXDOUBLE,
	                        &seconds, error))
		return NULL;
	if (!gb_bench_check_aes_seconds(seconds, error)) {
		g_prefix_error(error, "Parameter 'seconds': ");
		return NULL;
	}
	/* the agent's own cap, which only the guest knows */
	if (!gb_json_get_double(params, "seconds", GB_JSON_OPTIONAL, AES_MIN_SECONDS, max_seconds,
	                        &seconds, error))
		return NULL;
	if (seconds * sizes->len > max_seconds) {
		g_set_error(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT,
		            "Parameters 'seconds' and 'sizes' ask for %g s (%u sizes x %g s), "
		            "over the limit max-bench-seconds=%" G_GINT64_FORMAT,
		            seconds * sizes->len, sizes->len, seconds, config->max_bench_seconds);
		return NULL;
	}
	if (!gb_json_get_int(params, "threads", GB_JSON_OPTIONAL, 1, max_threads, &threads, error))
		return NULL;
	if (!gb_json_get_string(params, "loop", GB_JSON_OPTIONAL, &loop, error))
		return NULL;
	if (!aes_strv_contains(agent_bench_aes_loops, loop)) {
		g_set_error_literal(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT,
		                    "Parameter 'loop' must be one of: aead, stream");
		return NULL;
	}
	if (!gb_json_get_bool(params, "aad", GB_JSON_OPTIONAL, &aad, error))
		return NULL;
	if (aad && g_str_equal(loop, "stream")) {
		g_set_error_literal(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT,
		                    "Parameter 'aad' needs loop 'aead'");
		return NULL;
	}

	json_object_set_string_member(out, "cipher", cipher);
	sizes_out = json_array_sized_new(sizes->len);
	for (guint i = 0; i < sizes->len; i++)
		json_array_add_int_element(sizes_out, g_array_index(sizes, gint64, i));
	json_object_set_array_member(out, "sizes", sizes_out);
	json_object_set_double_member(out, "seconds", seconds);
	json_object_set_int_member(out, "threads", threads);
	json_object_set_string_member(out, "loop", loop);
	json_object_set_boolean_member(out, "aad", aad);
	return g_steal_pointer(&out);
}

const char *const agent_bench_aes_fact_sections[] = { "cpu", NULL };

/* The aes row of the agent's table (bench.c): validate only, run is aes.c's. */
const AgentBench agent_bench_aes_params = {
	.name = "aes",
	.validate = agent_bench_aes_validate,
	.run = NULL,
	.fact_sections = agent_bench_aes_fact_sections,
};
