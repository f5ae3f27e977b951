/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The aes benchmark: what `openssl speed -elapsed -evp CIPHER` measures, with
 * the same block sizes, the same loops and the same wall-clock timing, so the
 * numbers can be put next to the ones in field report 1.
 */
#include "config.h"

#include <gio/gio.h>
#include <openssl/evp.h>
#include <openssl/rand.h>
#include <string.h>

#include "bench.h"
#include "gb-bench-limits.h"
#include "gb-error.h"
#include "gb-json.h"

G_DEFINE_AUTOPTR_CLEANUP_FUNC(EVP_CIPHER_CTX, EVP_CIPHER_CTX_free)
G_DEFINE_AUTOPTR_CLEANUP_FUNC(EVP_CIPHER, EVP_CIPHER_free)

#define AES_DEFAULT_SECONDS GB_BENCH_AES_DEFAULT_SECONDS
#define AES_MIN_SECONDS GB_BENCH_AES_MIN_SECONDS
#define AES_MAX_SIZE GB_BENCH_AES_MAX_SIZE
#define AES_TAG_LEN 16
/* Each batch of operations between two clock reads stays under about 1 ms. */
#define AES_BATCH_TARGET_US 500
#define AES_BATCH_MAX (1 << 20)
#define AES_PROGRESS_US (50 * 1000)

/* openssl speed's lengths_list */

static const AgentAesKat aes_kats[] = {
	{
	    .cipher = "aes-128-gcm",
	    .source = "NIST CAVP gcmEncryptExtIV128.rsp, Keylen 128 IVlen 96 PTlen 128 "
	              "AADlen 128 Taglen 128 Count 0",
	    .key = "c939cc13397c1d37de6ae0e1cb7c423c",
	    .iv = "b3d8cc017cbb89b39e0f67e2",
	    .aad = "24825602bd12a984e0092d3e448eda5f",
	    .plaintext = "c3b3c41f113a31b73d9a5cd432103069",
	    .ciphertext = "93fe7d9e9bfd10348a5606e5cafa7354",
	    .tag = "0032a1dc85f1c9786925a2e71d8272dd",
	},
	{
	    .cipher = "aes-256-gcm",
	    .source = "NIST GCM specification (McGrew/Viega) test case 16",
	    .key = "feffe9928665731c6d6a8f9467308308feffe9928665731c6d6a8f9467308308",
	    .iv = "cafebabefacedbaddecaf888",
	    .aad = "feedfacedeadbeeffeedfacedeadbeefabaddad2",
	    .plaintext = "d9313225f88406e5a55909c5aff5269a86a7a9531534f7da2e4c303d8a318a72"
	                 "1c3c0c95956809532fcf0e2449a6b525b16aedf5aa0de657ba637b39",
	    .ciphertext = "522dc1f099567d07f47f37a32a84427d643a8cdcbfe5c0c97598a2bd2555d1aa"
	                  "8cb08e48590dbb3da7b08b1056828838c5f61e6393ba7a0abcc9f662",
	    .tag = "76fc6ece0f4e1768cddf8853bb2d551b",
	},
	{
	    .cipher = "chacha20-poly1305",
	    .source = "RFC 8439 section 2.8.2",
	    .key = "808182838485868788898a8b8c8d8e8f909192939495969798999a9b9c9d9e9f",
	    .iv = "070000004041424344454647",
	    .aad = "50515253c0c1c2c3c4c5c6c7",
	    .plaintext = "4c616469657320616e642047656e746c656d656e206f662074686520636c6173"
	                 "73206f66202739393a204966204920636f756c64206f6666657220796f75206f"
	                 "6e6c79206f6e652074697020666f7220746865206675747572652c2073756e73"
	                 "637265656e20776f756c642062652069742e",
	    .ciphertext = "d31a8d34648e60db7b86afbc53ef7ec2a4aded51296e08fea9e2b5a736ee62d6"
	                  "3dbea45e8ca9671282fafb69da92728b1a71de0a9e060b2905d6a5b67ecd3b36"
	                  "92ddbd7f2d778b8c9803aee328091b58fab324e4fad675945585808b4831d7bc"
	                  "3ff4def08e4b7a9de576d26586cec64b6116",
	    .tag = "1ae10b594f09e26a7e902ecbd0600691",
	},
};

const AgentAesKat *agent_bench_aes_kat_lookup(const char *cipher)
{
	for (guint i = 0; i < G_N_ELEMENTS(aes_kats); i++) {
		if (g_strcmp0(aes_kats[i].cipher, cipher) == 0)
			return &aes_kats[i];
	}
	return NULL;
}

static GBytes *aes_hex_decode(const char *hex, const char *what, GError **error)
{
	gsize len = hex != NULL ? strlen(hex) : 0;
	g_autofree guint8 *buf = NULL;

	if (hex == NULL || len % 2 != 0) {
		g_set_error(error, GB_ERROR, GB_ERROR_FAILED, "%s is not a hex string", what);
		return NULL;
	}
	buf = g_malloc(len / 2 + 1);
	for (gsize i = 0; i < len / 2; i++) {
		gint hi = g_ascii_xdigit_value(hex[2 * i]);
		gint lo = g_ascii_xdigit_value(hex[2 * i + 1]);
		if (hi < 0 || lo < 0) {
			g_set_error(error, GB_ERROR, GB_ERROR_FAILED, "%s is not a hex string",
			            what);
			return NULL;
		}
		buf[i] = (guint8)(hi << 4 | lo);
	}
	return g_bytes_new_take(g_steal_pointer(&buf), len / 2);
}

static EVP_CIPHER *aes_cipher_fetch(const char *name, GError **error)
{
	EVP_CIPHER *cipher = EVP_CIPHER_fetch(NULL, name, NULL);
	if (cipher == NULL) {
		g_set_error(error, GB_ERROR, GB_ERROR_NOT_SUPPORTED,
		            "OpenSSL has no cipher %s here", name);
		return NULL;
	}
	return cipher;
}

/* Sets key and nonce on a fresh context; enc = 1 to encrypt, 0 to decrypt. */
static gboolean aes_kat_init(EVP_CIPHER_CTX *ctx, EVP_CIPHER *cipher, GBytes *key, GBytes *iv,
                             int enc, GError **error)
{
	if (g_bytes_get_size(key) != (gsize)EVP_CIPHER_get_key_length(cipher)) {
		g_set_error(error, GB_ERROR, GB_ERROR_FAILED,
		            "key is %" G_GSIZE_FORMAT " bytes, the cipher takes %d",
		            g_bytes_get_size(key), EVP_CIPHER_get_key_length(cipher));
		return FALSE;
	}
	if (EVP_CipherInit_ex(ctx, cipher, NULL, NULL, NULL, enc) != 1 ||
	    EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_SET_IVLEN, (int)g_bytes_get_size(iv), NULL) !=
	        1 ||
	    EVP_CipherInit_ex(ctx, NULL, NULL, g_bytes_get_data(key, NULL),
	                      g_bytes_get_data(iv, NULL), enc) != 1) {
		g_set_error_literal(error, GB_ERROR, GB_ERROR_FAILED, "cannot set key and nonce");
		return FALSE;
	}
	return TRUE;
}

static gboolean aes_kat_check_inner(const AgentAesKat *kat, GError **error)
{
	g_autoptr(GBytes) key = NULL;
	g_autoptr(GBytes) iv = NULL;
	g_autoptr(GBytes) aad = NULL;
	g_autoptr(GBytes) pt = NULL;
	g_autoptr(GBytes) ct = NULL;
	g_autoptr(GBytes) tag = NULL;
	g_autoptr(EVP_CIPHER) cipher = NULL;
	g_autoptr(EVP_CIPHER_CTX) ctx = NULL;
	g_autofree guint8 *out = NULL;
	guint8 got_tag[AES_TAG_LEN];
	int outl = 0;
	int finl = 0;

	key = aes_hex_decode(kat->key, "key", error);
	if (key == NULL)
		return FALSE;
	iv = aes_hex_decode(kat->iv, "nonce", error);
	if (iv == NULL)
		return FALSE;
	aad = aes_hex_decode(kat->aad, "aad", error);
	if (aad == NULL)
		return FALSE;
	pt = aes_hex_decode(kat->plaintext, "plaintext", error);
	if (pt == NULL)
		return FALSE;
	ct = aes_hex_decode(kat->ciphertext, "ciphertext", error);
	if (ct == NULL)
		return FALSE;
	tag = aes_hex_decode(kat->tag, "tag", error);
	if (tag == NULL)
		return FALSE;
	if (g_bytes_get_size(tag) != AES_TAG_LEN || g_bytes_get_size(iv) == 0) {
		g_set_error_literal(error, GB_ERROR, GB_ERROR_FAILED,
		                    "the vector's tag or nonce has the wrong length");
		return FALSE;
	}
	cipher = aes_cipher_fetch(kat->cipher, error);
	if (cipher == NULL)
		return FALSE;

	/* encrypt: ciphertext and tag must come out bit for bit */
	ctx = EVP_CIPHER_CTX_new();
	if (!aes_kat_init(ctx, cipher, key, iv, 1, error))
		return FALSE;
	out = g_malloc0(g_bytes_get_size(pt) + AES_TAG_LEN);
	if (EVP_EncryptUpdate(ctx, NULL, &outl, g_bytes_get_data(aad, NULL),
	                      (int)g_bytes_get_size(aad)) != 1 ||
	    EVP_EncryptUpdate(ctx, out, &outl, g_bytes_get_data(pt, NULL),
	                      (int)g_bytes_get_size(pt)) != 1 ||
	    EVP_EncryptFinal_ex(ctx, out + outl, &finl) != 1 ||
	    EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_GET_TAG, AES_TAG_LEN, got_tag) != 1) {
		g_set_error_literal(error, GB_ERROR, GB_ERROR_FAILED, "encryption failed");
		return FALSE;
	}
	if ((gsize)(outl + finl) != g_bytes_get_size(ct) ||
	    memcmp(out, g_bytes_get_data(ct, NULL), g_bytes_get_size(ct)) != 0) {
		g_set_error_literal(error, GB_ERROR, GB_ERROR_FAILED, "ciphertext mismatch");
		return FALSE;
	}
	if (memcmp(got_tag, g_bytes_get_data(tag, NULL), AES_TAG_LEN) != 0) {
		g_set_error_literal(error, GB_ERROR, GB_ERROR_FAILED, "tag mismatch");
		return FALSE;
	}

	/* decrypt: the tag must verify and the plaintext come back */
	EVP_CIPHER_CTX_reset(ctx);
	if (!aes_kat_init(ctx, cipher, key, iv, 0, error))
		return FALSE;
	memcpy(got_tag, g_bytes_get_data(tag, NULL), AES_TAG_LEN);
	if (EVP_DecryptUpdate(ctx, NULL, &outl, g_bytes_get_data(aad, NULL),
	                      (int)g_bytes_get_size(aad)) != 1 ||
	    EVP_DecryptUpdate(ctx, out, &outl, g_bytes_get_data(ct, NULL),
	                      (int)g_bytes_get_size(ct)) != 1 ||
	    EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_SET_TAG, AES_TAG_LEN, got_tag) != 1 ||
	    EVP_DecryptFinal_ex(ctx, out + outl, &finl) != 1) {
		g_set_error_literal(error, GB_ERROR, GB_ERROR_FAILED,
		                    "decryption did not verify the tag");
		return FALSE;
	}
	if ((gsize)(outl + finl) != g_bytes_get_size(pt) ||
	    memcmp(out, g_bytes_get_data(pt, NULL), g_bytes_get_size(pt)) != 0) {
		g_set_error_literal(error, GB_ERROR, GB_ERROR_FAILED, "plaintext mismatch");
		return FALSE;
	}
	return TRUE;
}

gboolean agent_bench_aes_kat_check(const AgentAesKat *kat, GError **error)
{
	if (!aes_kat_check_inner(kat, error)) {
		g_prefix_error(error, "Known-answer test for %s failed (%s): ", kat->cipher,
		               kat->source);
		return FALSE;
	}
	return TRUE;
}

/* ---- parameters ---- */

/* ---- timing ---- */

typedef struct {
	AgentBenchContext *ctx;
	EVP_CIPHER *cipher; /* shared, read-only */
	gboolean aead_loop;
	gboolean aad;
	gsize size;
	double seconds;
	guint8 key[EVP_MAX_KEY_LENGTH];
	/* worker 0 reports progress as base + span * elapsed / seconds */
	gboolean report_progress;
	gboolean report_rate; /* the only worker: its rate is the rate */
	double progress_base;
	double progress_span;
	const char *phase;
	/* out */
	guint64 count;
	gint64 elapsed_us;
	GError *error;
} AesWorker;

static void aes_worker_clear(AesWorker *w)
{
	g_clear_error(&w->error);
}

/* openssl speed's zero IVs (static arrays there): 16 bytes for stream, 12 for aead */
static const guint8 aes_iv[16] = { 0 };
static const guint8 aes_aead_iv[12] = { 0 };

static gboolean aes_worker_setup(AesWorker *w, EVP_CIPHER_CTX *ctx, GError **error)
{
	int keylen;

	/* the same steps as openssl speed: cipher + IV, no padding, random key */
	if (EVP_CipherInit_ex(ctx, w->cipher, NULL, NULL, aes_iv, 1) != 1) {
		g_set_error_literal(error, GB_ERROR, GB_ERROR_FAILED, "EVP_CipherInit_ex failed");
		return FALSE;
	}
	EVP_CIPHER_CTX_set_padding(ctx, 0);
	keylen = EVP_CIPHER_CTX_get_key_length(ctx);
	if (keylen <= 0 || keylen > (int)sizeof(w->key)) {
		g_set_error_literal(error, GB_ERROR, GB_ERROR_FAILED, "cipher has no key length");
		return FALSE;
	}
	if (EVP_CIPHER_CTX_rand_key(ctx, w->key) != 1 ||
	    EVP_CipherInit_ex(ctx, NULL, NULL, w->key, NULL, -1) != 1) {
		g_set_error_literal(error, GB_ERROR, GB_ERROR_FAILED, "cannot set a random key");
		return FALSE;
	}
	return TRUE;
}

/* One message: IV length, key and IV, [13-byte AAD,] payload, final (the tag). */
static gboolean aes_op_aead(AesWorker *w, EVP_CIPHER_CTX *ctx, guint8 *buf, int len)
{
	static const guint8 aad[13] = { 0xcc };
	int outl = 0;

	if (EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_SET_IVLEN, sizeof(aes_aead_iv), NULL) != 1 ||
	    EVP_CipherInit_ex(ctx, NULL, NULL, w->key, aes_aead_iv, -1) != 1)
		return FALSE;
	if (w->aad && EVP_EncryptUpdate(ctx, NULL, &outl, aad, sizeof(aad)) != 1)
		return FALSE;
	return EVP_EncryptUpdate(ctx, buf, &outl, buf, len) == 1 &&
	       EVP_EncryptFinal_ex(ctx, buf + outl, &outl) == 1;
}

static gboolean aes_worker_loop(AesWorker *w, GError **error)
{
	g_autoptr(EVP_CIPHER_CTX) ctx = EVP_CIPHER_CTX_new();
	g_autofree guint8 *buf = NULL;
	gint64 start;
	gint64 now;
	gint64 last = 0;
	gint64 last_progress;
	gint64 deadline;
	guint64 batch = 1;
	int len = (int)w->size;
	int outl = 0;

	if (ctx == NULL) {
		g_set_error_literal(error, GB_ERROR, GB_ERROR_FAILED, "EVP_CIPHER_CTX_new failed");
		return FALSE;
	}
	if (!aes_worker_setup(w, ctx, error))
		return FALSE;
	/* room for the tag EVP_Update_loop_aead's Final may write after the payload */
	buf = g_malloc0(w->size + AES_TAG_LEN);

	start = g_get_monotonic_time();
	last_progress = start;
	deadline = start + (gint64)(w->seconds * G_USEC_PER_SEC);
	for (;;) {
		for (guint64 i = 0; i < batch; i++) {
			if (w->aead_loop) {
				if (!aes_op_aead(w, ctx, buf, len)) {
					g_set_error_literal(error, GB_ERROR, GB_ERROR_FAILED,
					                    "encryption failed");
					return FALSE;
				}
			} else if (EVP_EncryptUpdate(ctx, buf, &outl, buf, len) != 1) {
				/* as openssl speed: restart the IV on counter overflow */
				if (EVP_CipherInit_ex(ctx, NULL, NULL, NULL, aes_iv, -1) != 1) {
					g_set_error_literal(error, GB_ERROR, GB_ERROR_FAILED,
					                    "encryption failed");
					return FALSE;
				}
			}
		}
		w->count += batch;
		now = g_get_monotonic_time();
		/* grow the batch until one takes about AES_BATCH_TARGET_US */
		if (now - (last != 0 ? last : start) < AES_BATCH_TARGET_US && batch < AES_BATCH_MAX)
			batch *= 2;
		last = now;
		if (!agent_bench_check_cancel(w->ctx, error))
			return FALSE;
		if (now >= deadline)
			break;
		if (w->report_progress && now - last_progress >= AES_PROGRESS_US) {
			double frac = (double)(now - start) / (double)(deadline - start);
			agent_bench_progress(w->ctx, w->progress_base + w->progress_span * frac,
			                     w->phase);
			/* one worker's count is its own: a live rate only for one thread */
			if (w->report_rate && now > start)
				agent_bench_rate(w->ctx,
				                 (double)w->count * (double)w->size *
				                     G_USEC_PER_SEC / (double)(now - start),
				                 "B/s");
			last_progress = now;
		}
	}
	w->elapsed_us = now - start;
	if (!w->aead_loop)
		(void)EVP_EncryptFinal_ex(ctx, buf, &outl);
	OPENSSL_cleanse(w->key, sizeof(w->key));
	return TRUE;
}

static gpointer aes_worker_thread(gpointer data)
{
	AesWorker *w = data;
	(void)aes_worker_loop(w, &w->error);
	return NULL;
}

/* One block size: threads workers at once, their rates summed (openssl speed -multi). */
static gboolean aes_measure(AgentBenchContext *ctx, EVP_CIPHER *cipher, gboolean aead_loop,
                            gboolean aad, gsize size, double seconds, guint nthreads,
                            double progress_base, double progress_span, const char *phase,
                            double *rate, GError **error)
{
	g_autofree AesWorker *workers = g_new0(AesWorker, nthreads);
	g_autofree GThread **threads = g_new0(GThread *, nthreads);
	double sum = 0;
	gboolean ok = TRUE;

	for (guint i = 0; i < nthreads; i++) {
		workers[i].ctx = ctx;
		workers[i].cipher = cipher;
		workers[i].aead_loop = aead_loop;
		workers[i].aad = aad;
		workers[i].size = size;
		workers[i].seconds = seconds;
		workers[i].report_progress = i == 0;
		workers[i].report_rate = nthreads == 1;
		workers[i].progress_base = progress_base;
		workers[i].progress_span = progress_span;
		workers[i].phase = phase;
	}
	if (nthreads == 1) {
		(void)aes_worker_loop(&workers[0], &workers[0].error);
	} else {
		for (guint i = 0; i < nthreads; i++) {
			threads[i] = g_thread_try_new("gb-aes", aes_worker_thread, &workers[i],
			                              &workers[i].error);
		}
		for (guint i = 0; i < nthreads; i++) {
			if (threads[i] != NULL)
				g_thread_join(threads[i]);
		}
	}
	for (guint i = 0; i < nthreads; i++) {
		if (workers[i].error != NULL) {
			if (ok)
				g_propagate_error(error, g_steal_pointer(&workers[i].error));
			ok = FALSE;
		} else if (workers[i].elapsed_us > 0) {
			sum += (double)workers[i].count * (double)size * G_USEC_PER_SEC /
			       (double)workers[i].elapsed_us;
		}
		aes_worker_clear(&workers[i]);
	}
	if (!ok)
		return FALSE;
	*rate = sum;
	return TRUE;
}

/*
 * OpenSSL picks its AES-GCM code from the CPU's capabilities, masked by
 * OPENSSL_ia32cap on x86 (AES-NI, PCLMULQDQ) and OPENSSL_armcap on aarch64
 * (0 leaves only the portable C code, without the ARMv8 AES and PMULL
 * instructions). The flags in the facts say what the CPU has; these say
 * whether OpenSSL was told not to use it, so a software-path run is visible
 * as such. Each variable set in the agent's environment, as written (only
 * printable ASCII, at most 256 bytes: anything else is not a mask OpenSSL
 * parses).
 */
static JsonObject *aes_openssl_capabilities(void)
{
	static const char *const names[] = { "OPENSSL_ia32cap", "OPENSSL_armcap" };
	JsonObject *obj = json_object_new();

	for (guint i = 0; i < G_N_ELEMENTS(names); i++) {
		const char *value = g_getenv(names[i]);
		gboolean printable = value != NULL && strlen(value) <= 256;

		for (const char *c = value; printable && *c != '\0'; c++)
			printable = g_ascii_isprint(*c);
		if (value == NULL)
			continue;
		if (printable)
			json_object_set_string_member(obj, names[i], value);
		else
			json_object_set_null_member(obj, names[i]);
	}
	return obj;
}

static JsonNode *aes_run(AgentBenchContext *ctx, JsonObject *params, GError **error)
{
	const char *cipher_name = AGENT_BENCH_AES_DEFAULT_CIPHER;
	const char *loop = agent_bench_aes_loops[0];
	double seconds = AES_DEFAULT_SECONDS;
	gint64 threads = 1;
	gboolean aad = FALSE;
	g_autoptr(GArray) sizes = NULL;
	g_autoptr(EVP_CIPHER) cipher = NULL;
	const AgentAesKat *kat;
	g_autoptr(JsonObject) result = json_object_new();
	JsonArray *metrics = json_array_new();
	JsonObject *kat_obj;

	json_object_set_array_member(result, "metrics", metrics);
	agent_bench_keep_partial(ctx, metrics);
	if (!gb_json_get_string(params, "cipher", GB_JSON_OPTIONAL, &cipher_name, error) ||
	    !gb_json_get_string(params, "loop", GB_JSON_OPTIONAL, &loop, error) ||
	    !gb_json_get_double(params, "seconds", GB_JSON_OPTIONAL, AES_MIN_SECONDS, G_MAXDOUBLE,
	                        &seconds, error) ||
	    !gb_json_get_int(params, "threads", GB_JSON_OPTIONAL, 1, G_MAXINT, &threads, error) ||
	    !gb_json_get_bool(params, "aad", GB_JSON_OPTIONAL, &aad, error) ||
	    !gb_json_get_int_array(params, "sizes", GB_JSON_REQUIRED, 1, AES_MAX_SIZE, &sizes,
	                           error))
		return NULL;

	/* a cipher that does not encrypt correctly gives no number at all */
	agent_bench_progress(ctx, 0.0, "known-answer test");
	kat = agent_bench_aes_kat_lookup(cipher_name);
	if (kat == NULL) {
		g_set_error(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT,
		            "No known-answer test for cipher %s", cipher_name);
		return NULL;
	}
	if (!agent_bench_aes_kat_check(kat, error))
		return NULL;
	kat_obj = json_object_new();
	json_object_set_string_member(kat_obj, "vector", kat->source);
	json_object_set_boolean_member(kat_obj, "passed", TRUE);
	json_object_set_object_member(result, "known_answer_test", kat_obj);
	json_object_set_object_member(result, "openssl_capability_env", aes_openssl_capabilities());

	cipher = aes_cipher_fetch(cipher_name, error);
	if (cipher == NULL)
		return NULL;
	for (guint i = 0; i < sizes->len; i++) {
		gint64 size = g_array_index(sizes, gint64, i);
		g_autofree char *phase =
		    g_strdup_printf("%s %" G_GINT64_FORMAT " bytes", cipher_name, size);
		g_autofree char *label = g_strdup_printf("%" G_GINT64_FORMAT, size);
		double rate = 0;

		agent_bench_progress(ctx, (double)i / sizes->len, phase);
		if (!aes_measure(ctx, cipher, g_strcmp0(loop, "aead") == 0, aad, (gsize)size,
		                 seconds, (guint)threads, (double)i / sizes->len, 1.0 / sizes->len,
		                 phase, &rate, error))
			return NULL;
		json_array_add_element(metrics, agent_bench_sample_new(cipher_name, rate, "B/s",
		                                                       "block_size", label, NULL));
	}
	agent_bench_progress(ctx, 1.0, "done");
	return json_node_init_object(json_node_alloc(), result);
}

const AgentBench agent_bench_aes = {
	.name = "aes",
	.validate = agent_bench_aes_validate,
	.run = aes_run,
	.fact_sections = agent_bench_aes_fact_sections,
};
