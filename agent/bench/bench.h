/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <glib.h>
#include <json-glib/json-glib.h>

#include "agent.h"

G_BEGIN_DECLS

/*
 * What a benchmark sees while it runs on the job's worker thread.
 * Benchmarks check agent_bench_cancelled() at least every 10 ms of work and
 * return NULL with G_IO_ERROR_CANCELLED when it is set.
 */
typedef struct _AgentBenchContext AgentBenchContext;
struct _AgentBenchContext {
	const AgentConfig *config;
	const char *sysroot;
	gint cancel; /* atomic; set by gb-bench-cancel / agent shutdown */
	/* Called from the worker thread; monotonic fraction 0..1 and a short phase text. */
	void (*progress)(AgentBenchContext *ctx, double fraction, const char *phase);
	/* Called from the worker thread: the current phase's rate so far (e.g. B/s). */
	void (*rate)(AgentBenchContext *ctx, double value, const char *unit);
	/*
	 * The current run's metrics array, set by the benchmark with
	 * agent_bench_keep_partial() as it starts filling it: a cancelled job
	 * keeps what it holds as a partial result. Worker thread only; only a
	 * job (keeps_partial) takes it, tests run benchmarks without one.
	 */
	JsonArray *partial;
	gboolean keeps_partial;
	gpointer job;     /* owner's data for progress() */
	gboolean dry_run; /* validate parameters only (fuzzing, --check) */
};

static inline gboolean agent_bench_cancelled(AgentBenchContext *ctx)
{
	return g_atomic_int_get(&ctx->cancel) != 0;
}

/*
 * One benchmark = one file with one entry: validate parses and range-checks
 * params against the config limits (naming the limit on failure; nothing is
 * clamped) and returns the normalised parameters (owned JsonObject, every
 * default filled in); run executes with those normalised parameters and
 * returns the result object holding at least "metrics":
 * [{"metric","value","unit","labels"}]. The job runner adds parameters,
 * version, timestamp, facts and the runs/mean/stddev aggregation.
 */
typedef struct {
	const char *name; /* "aes", "disk", "mem", "net" */
	JsonObject *(*validate)(const AgentConfig *config, JsonObject *params, GError **error);
	JsonNode *(*run)(AgentBenchContext *ctx, JsonObject *params, GError **error);
	/* Fact sections that explain this benchmark's numbers (for the result). */
	const char *const *fact_sections;
} AgentBench;

extern const AgentBench agent_bench_aes;
/* aes with validate() only (aes-params.c): the agent's table, which links no libcrypto. */
extern const AgentBench agent_bench_aes_params;
extern const AgentBench agent_bench_disk;
extern const AgentBench agent_bench_mem;
extern const AgentBench agent_bench_net;

/* The aes benchmark's parameters, shared by aes-params.c and aes.c. */
#define AGENT_BENCH_AES_DEFAULT_CIPHER "aes-128-gcm"
extern const char *const agent_bench_aes_ciphers[];
extern const char *const agent_bench_aes_loops[];
extern const char *const agent_bench_aes_fact_sections[];
JsonObject *agent_bench_aes_validate(const AgentConfig *config, JsonObject *params, GError **error);

/*
 * The table of all benchmarks (bench.c), as gb-bench-start validates them:
 * run may be NULL there, the job's process (job-run.c) has the runners.
 */
const AgentBench *agent_bench_lookup(const char *name);

/* Command handlers for gb-bench-start/-status/-cancel/-list (job.c). */
JsonNode *agent_cmd_bench_start(AgentContext *agent, JsonObject *args, GError **error);
JsonNode *agent_cmd_bench_status(AgentContext *agent, JsonObject *args, GError **error);
JsonNode *agent_cmd_bench_cancel(AgentContext *agent, JsonObject *args, GError **error);
JsonNode *agent_cmd_bench_list(AgentContext *agent, JsonObject *args, GError **error);
/* Cancels a running job and joins its thread (agent shutdown). */
void agent_jobs_shutdown(AgentContext *agent);
/* Whether a job is running (a session process does not end while one is). */
gboolean agent_jobs_busy(AgentContext *agent);
/*
 * The finished jobs and the next id, written over fd (a memfd the resident
 * process keeps) when a session process ends, and read back by the next one,
 * so that gb-bench-status and gb-bench-list answer as if one process had run
 * them all. Loading an empty fd is fine; a malformed one is an error.
 */
gboolean agent_jobs_save(AgentContext *agent, int fd, GError **error);
gboolean agent_jobs_load(AgentContext *agent, int fd, GError **error);

/* Helpers the job runner and the benchmarks share. */

/* Calls ctx->progress when there is one (tests run benchmarks without a job). */
static inline void agent_bench_progress(AgentBenchContext *ctx, double fraction, const char *phase)
{
	if (ctx->progress != NULL)
		ctx->progress(ctx, fraction, phase);
}

/* Calls ctx->rate when there is one. */
static inline void agent_bench_rate(AgentBenchContext *ctx, double value, const char *unit)
{
	if (ctx->rate != NULL)
		ctx->rate(ctx, value, unit);
}

/* The metrics array run() fills as it goes: kept as a partial result if the job is cancelled. */
static inline void agent_bench_keep_partial(AgentBenchContext *ctx, JsonArray *metrics)
{
	if (!ctx->keeps_partial)
		return;
	if (ctx->partial != NULL)
		json_array_unref(ctx->partial);
	ctx->partial = json_array_ref(metrics);
}

/* Sets G_IO_ERROR_CANCELLED ("Benchmark cancelled") and returns FALSE when cancelled. */
gboolean agent_bench_check_cancel(AgentBenchContext *ctx, GError **error);

/*
 * One metric sample {"metric", "value", "unit", "labels"}; the varargs are
 * label key/value string pairs ending with NULL.
 */
JsonNode *agent_bench_sample_new(const char *metric, double value, const char *unit,
                                 ...) G_GNUC_NULL_TERMINATED;
/* A sample the system cannot produce: "value" null plus "unavailable": reason. */
JsonNode *agent_bench_sample_new_unavailable(const char *metric, const char *unit,
                                             const char *reason, ...) G_GNUC_NULL_TERMINATED;

/* A known-answer test vector (hex strings) for the aes benchmark. */
typedef struct {
	const char *cipher; /* "aes-128-gcm", "aes-256-gcm", "chacha20-poly1305" */
	const char *source; /* where the vector comes from, for the error message */
	const char *key;
	const char *iv;
	const char *aad;
	const char *plaintext;
	const char *ciphertext;
	const char *tag;
} AgentAesKat;

/* The built-in vector for a cipher name, or NULL. */
const AgentAesKat *agent_bench_aes_kat_lookup(const char *cipher);
/* Encrypts and decrypts the vector; fails (GB_ERROR_FAILED) on any mismatch. */
gboolean agent_bench_aes_kat_check(const AgentAesKat *kat, GError **error);

/* Mode of transparent hugepages under sysroot ("always"|"madvise"|"never"), or NULL. */
char *agent_bench_mem_thp_mode(const char *sysroot, GError **error);
/*
 * Why hugetlb pages of size bytes cannot be mapped (a reason text), or NULL
 * when enough are free according to sysroot's /proc/meminfo.
 */
char *agent_bench_mem_hugetlb_unavailable(const char *sysroot, gsize size);

/*
 * A log-linear latency histogram (HDR-like, buckets at most 0.8% wide, exact
 * below 256), used by the disk benchmark for its p50/p99/p99.9 (disk.c).
 */
typedef struct _AgentHistogram AgentHistogram;
AgentHistogram *agent_histogram_new(void);
void agent_histogram_free(AgentHistogram *h);
void agent_histogram_record(AgentHistogram *h, guint64 value);
guint64 agent_histogram_count(const AgentHistogram *h);
/* Nearest-rank quantile q (0..1) within one bucket's width; 0 when empty. */
guint64 agent_histogram_quantile(const AgentHistogram *h, double q);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(AgentHistogram, agent_histogram_free)

G_END_DECLS
