/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The benchmark job runner: one job at a time on a dedicated worker thread,
 * so the main loop keeps answering (guest-ping during a benchmark answers at
 * once), and results kept after the client that started them has gone.
 */
#include "config.h"

#include <gio/gio.h>
#include <math.h>

#include "bench.h"
#include "gb-bench-limits.h"
#include "facts.h"
#include "gb-error.h"
#include "gb-json.h"
#include "job.h"

typedef enum {
	AGENT_JOB_RUNNING,
	AGENT_JOB_DONE,
	AGENT_JOB_FAILED,
	AGENT_JOB_CANCELLED,
} AgentJobState;

static const char *const agent_job_state_names[] = { "running", "done", "failed", "cancelled" };

typedef struct _AgentJobs AgentJobs;

typedef struct {
	AgentJobs *jobs;
	AgentBenchContext bctx; /* bctx.job points back here */
	gint64 id;
	const AgentBench *bench;
	JsonObject *params; /* normalised, as the benchmark takes them */
	gint64 runs;
	gint64 current_run; /* worker thread only */
	gint64 started_us;  /* monotonic: how long ago it started, whatever the wall clock does */
	JsonNode *idle;     /* worker thread only: the idle check before the run (result "idle") */
	GThread *thread;    /* until joined */
	/* protected by jobs->mutex */
	AgentJobState state;
	double progress;
	char *phase;
	double rate; /* of the current phase, NAN when the benchmark gave none */
	char *rate_unit;
	JsonNode *result;
	char *error;
	gboolean read;
} AgentJob;

struct _AgentJobs {
	GMutex mutex;
	GPtrArray *jobs; /* AgentJob, oldest first */
	gint64 next_id;
	AgentJob *running;
};

static void agent_job_free(AgentJob *job)
{
	if (job->thread != NULL)
		g_thread_join(job->thread);
	if (job->params != NULL)
		json_object_unref(job->params);
	if (job->result != NULL)
		json_node_unref(job->result);
	if (job->idle != NULL)
		json_node_unref(job->idle);
	g_free(job->phase);
	g_free(job->rate_unit);
	g_free(job->error);
	if (job->bctx.partial != NULL)
		json_array_unref(job->bctx.partial);
	g_free(job);
}

static AgentJobs *agent_jobs_get(AgentContext *agent)
{
	AgentJobs *jobs = agent->jobs;

	if (jobs == NULL) {
		jobs = g_new0(AgentJobs, 1);
		g_mutex_init(&jobs->mutex);
		jobs->jobs = g_ptr_array_new_with_free_func((GDestroyNotify)agent_job_free);
		jobs->next_id = 1;
		agent->jobs = jobs;
	}
	return jobs;
}

/* Joins the threads of finished jobs so that none lingers. Called with the lock held. */
static void agent_jobs_reap(AgentJobs *jobs)
{
	for (guint i = 0; i < jobs->jobs->len; i++) {
		AgentJob *job = g_ptr_array_index(jobs->jobs, i);
		/* the worker sets the final state as its last step under the lock */
		if (job->state != AGENT_JOB_RUNNING && job->thread != NULL) {
			g_thread_join(job->thread);
			job->thread = NULL;
		}
	}
}

/* Makes room for one more finished job. Called with the lock held. */
static void agent_jobs_trim(AgentJobs *jobs)
{
	for (;;) {
		guint finished = 0;
		gint oldest = -1;
		gint oldest_read = -1;

		for (guint i = 0; i < jobs->jobs->len; i++) {
			AgentJob *job = g_ptr_array_index(jobs->jobs, i);
			if (job->state == AGENT_JOB_RUNNING)
				continue;
			finished++;
			if (oldest < 0)
				oldest = (gint)i;
			if (oldest_read < 0 && job->read)
				oldest_read = (gint)i;
		}
		if (finished < AGENT_JOBS_HISTORY)
			return;
		g_ptr_array_remove_index(jobs->jobs,
		                         (guint)(oldest_read >= 0 ? oldest_read : oldest));
	}
}

static AgentJob *agent_jobs_find(AgentJobs *jobs, gint64 id, GError **error)
{
	for (guint i = 0; i < jobs->jobs->len; i++) {
		AgentJob *job = g_ptr_array_index(jobs->jobs, i);
		if (job->id == id)
			return job;
	}
	g_set_error(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT, "No such job: %" G_GINT64_FORMAT,
	            id);
	return NULL;
}

/* A node owning obj (json_node_init_object() would add a reference instead). */
static JsonNode *agent_job_node_take(JsonObject *obj)
{
	JsonNode *node = json_node_new(JSON_NODE_OBJECT);
	json_node_take_object(node, obj);
	return node;
}

/* Called with the lock held. */
static JsonNode *agent_job_to_json(AgentJob *job, gboolean with_result)
{
	JsonObject *obj = json_object_new();

	json_object_set_int_member(obj, "job", job->id);
	json_object_set_string_member(obj, "test", job->bench->name);
	json_object_set_string_member(obj, "state", agent_job_state_names[job->state]);
	json_object_set_double_member(obj, "progress", job->progress);
	json_object_set_string_member(obj, "phase", job->phase != NULL ? job->phase : "");
	json_object_set_double_member(obj, "age", (g_get_monotonic_time() - job->started_us) / 1e6);
	if (job->state == AGENT_JOB_RUNNING && isfinite(job->rate) && job->rate_unit != NULL) {
		json_object_set_double_member(obj, "rate", job->rate);
		json_object_set_string_member(obj, "rate_unit", job->rate_unit);
	}
	if (job->error != NULL)
		json_object_set_string_member(obj, "error", job->error);
	if (with_result && job->result != NULL)
		json_object_set_member(obj, "result", json_node_copy(job->result));
	return agent_job_node_take(obj);
}

/* ---- the worker thread ---- */

static void agent_job_progress(AgentBenchContext *bctx, double fraction, const char *phase)
{
	AgentJob *job = bctx->job;
	g_autoptr(GMutexLocker) locker = NULL;
	double total;

	if (!isfinite(fraction))
		return;
	total = ((double)job->current_run + CLAMP(fraction, 0.0, 1.0)) / (double)job->runs;
	locker = g_mutex_locker_new(&job->jobs->mutex);
	/* progress only ever grows, whatever the benchmark reports */
	if (total > job->progress)
		job->progress = MIN(total, 1.0);
	if (phase != NULL) {
		/* a rate belongs to its phase */
		if (g_strcmp0(phase, job->phase) != 0)
			job->rate = NAN;
		g_free(job->phase);
		if (job->runs > 1) {
			job->phase =
			    g_strdup_printf("run %" G_GINT64_FORMAT "/%" G_GINT64_FORMAT ": %s",
			                    job->current_run + 1, job->runs, phase);
		} else {
			job->phase = g_strdup(phase);
		}
	}
}

static void agent_job_rate(AgentBenchContext *bctx, double value, const char *unit)
{
	AgentJob *job = bctx->job;
	g_autoptr(GMutexLocker) G_GNUC_UNUSED locker = g_mutex_locker_new(&job->jobs->mutex);

	job->rate = isfinite(value) && value >= 0 ? value : NAN;
	if (g_strcmp0(job->rate_unit, unit) != 0) {
		g_free(job->rate_unit);
		job->rate_unit = g_strdup(unit);
	}
}

/* The key that matches a sample across runs: metric name plus labels. */
static char *agent_job_sample_key(JsonObject *sample)
{
	const char *metric = "";
	JsonObject *labels = NULL;
	g_autoptr(JsonNode) node = NULL;
	g_autofree char *labels_str = NULL;

	if (!gb_json_get_string(sample, "metric", GB_JSON_OPTIONAL, &metric, NULL))
		metric = "";
	if (gb_json_get_object(sample, "labels", GB_JSON_OPTIONAL, &labels, NULL) &&
	    labels != NULL) {
		node = json_node_init_object(json_node_alloc(), labels);
		labels_str = gb_json_to_string(node, NULL);
	}
	return g_strdup_printf("%s\n%s", metric, labels_str != NULL ? labels_str : "");
}

static JsonObject *agent_job_find_sample(JsonArray *metrics, const char *key)
{
	for (guint i = 0; i < json_array_get_length(metrics); i++) {
		JsonObject *sample = NULL;
		g_autofree char *k = NULL;

		if (!gb_json_node_get_object(json_array_get_element(metrics, i), "metrics", &sample,
		                             NULL))
			continue;
		k = agent_job_sample_key(sample);
		if (g_strcmp0(k, key) == 0)
			return sample;
	}
	return NULL;
}

/*
 * runs > 1: each sample of the first run gathers the same sample (same metric
 * and labels) of every run: "runs" holds the raw values, "value" the mean.
 */
static JsonArray *agent_job_aggregate(GPtrArray *run_metrics, GError **error)
{
	JsonArray *first = g_ptr_array_index(run_metrics, 0);
	g_autoptr(JsonArray) out = json_array_new();

	for (guint i = 0; i < json_array_get_length(first); i++) {
		JsonObject *sample = NULL;
		JsonObject *agg;
		JsonArray *raw = json_array_new();
		g_autofree char *key = NULL;
		gboolean complete = TRUE;
		double sum = 0;
		double sumsq = 0;
		double mean;
		double stddev;
		guint n = run_metrics->len;

		if (!gb_json_node_get_object(json_array_get_element(first, i), "metrics", &sample,
		                             error)) {
			json_array_unref(raw);
			return NULL;
		}
		key = agent_job_sample_key(sample);
		for (guint r = 0; r < n; r++) {
			JsonObject *s =
			    agent_job_find_sample(g_ptr_array_index(run_metrics, r), key);
			double v = 0;

			if (s == NULL || !gb_json_has(s, "value") ||
			    !gb_json_get_double(s, "value", GB_JSON_REQUIRED, -G_MAXDOUBLE,
			                        G_MAXDOUBLE, &v, NULL)) {
				json_array_add_null_element(raw);
				complete = FALSE;
				continue;
			}
			json_array_add_double_element(raw, v);
			sum += v;
		}
		agg = json_object_new();
		{
			g_autoptr(GList) members = json_object_get_members(sample);
			for (GList *l = members; l != NULL; l = l->next) {
				json_object_set_member(
				    agg, l->data,
				    json_node_copy(json_object_get_member(sample, l->data)));
			}
		}
		json_object_set_array_member(agg, "runs", raw);
		if (!complete) {
			/* an unavailable or missing value has no mean: never invent one */
			json_object_set_null_member(agg, "value");
			json_object_set_null_member(agg, "mean");
			json_object_set_null_member(agg, "stddev");
			json_object_set_null_member(agg, "cv");
			json_array_add_object_element(out, agg);
			continue;
		}
		mean = sum / n;
		for (guint r = 0; r < n; r++) {
			double d = json_array_get_double_element(raw, r) - mean;
			sumsq += d * d;
		}
		/* sample standard deviation: the runs are a sample of what the guest can do */
		stddev = sqrt(sumsq / (n - 1));
		json_object_set_double_member(agg, "value", mean);
		json_object_set_double_member(agg, "mean", mean);
		json_object_set_double_member(agg, "stddev", stddev);
		if (mean != 0)
			json_object_set_double_member(agg, "cv", stddev / fabs(mean));
		else
			json_object_set_null_member(agg, "cv");
		json_array_add_object_element(out, agg);
	}
	return g_steal_pointer(&out);
}

/*
 * The guest's CPU busy and steal % over the second before the run: a figure taken
 * while something else ran in the guest, or the host gave its CPUs to others, is
 * not the guest's. A load that cannot be read is null with the reason.
 */
static JsonNode *agent_job_idle_check(AgentJob *job)
{
	g_autoptr(JsonBuilder) builder = json_builder_new();
	g_autoptr(GError) error = NULL;
	double busy = 0;
	double steal = 0;
	gboolean ok;

	agent_job_progress(&job->bctx, 0.0, "idle check");
	ok = agent_facts_cpu_load(job->bctx.sysroot, GB_BENCH_IDLE_WINDOW_MS, &job->bctx.cancel,
	                          &busy, &steal, &error);
	json_builder_begin_object(builder);
	json_builder_set_member_name(builder, "busy_percent");
	if (ok)
		json_builder_add_double_value(builder, busy);
	else
		json_builder_add_null_value(builder);
	json_builder_set_member_name(builder, "steal_percent");
	if (ok)
		json_builder_add_double_value(builder, steal);
	else
		json_builder_add_null_value(builder);
	json_builder_set_member_name(builder, "window_ms");
	json_builder_add_int_value(builder, GB_BENCH_IDLE_WINDOW_MS);
	if (!ok) {
		json_builder_set_member_name(builder, "unavailable");
		json_builder_add_string_value(builder, error->message);
	}
	json_builder_end_object(builder);
	return json_builder_get_root(builder);
}

/*
 * The members every result holds about its job: test, params (runs included), version,
 * when it started and finished, the idle check.
 */
static void agent_job_describe(AgentJob *job, JsonObject *envelope, const char *timestamp)
{
	g_autoptr(GDateTime) now = g_date_time_new_now_utc();
	g_autofree char *finished = g_date_time_format_iso8601(now);
	JsonObject *params_out = json_object_new();
	g_autoptr(GList) members = json_object_get_members(job->params);

	for (GList *l = members; l != NULL; l = l->next)
		json_object_set_member(
		    params_out, l->data,
		    json_node_copy(json_object_get_member(job->params, l->data)));
	json_object_set_int_member(params_out, "runs", job->runs);
	json_object_set_string_member(envelope, "test", job->bench->name);
	json_object_set_object_member(envelope, "params", params_out);
	json_object_set_string_member(envelope, "agent_version", GB_VERSION);
	json_object_set_string_member(envelope, "timestamp", timestamp);
	json_object_set_string_member(envelope, "finished", finished);
	if (job->idle != NULL)
		json_object_set_member(envelope, "idle", json_node_copy(job->idle));
}

/*
 * After a cancel: the runs that finished, or else what the cut-short run had
 * measured, marked "partial"; NULL when nothing was measured.
 */
static JsonNode *agent_job_partial(AgentJob *job, GPtrArray *run_metrics, JsonNode *facts,
                                   const char *timestamp)
{
	JsonObject *envelope;
	JsonArray *metrics = NULL;
	gint64 runs_done = (gint64)run_metrics->len;

	if (runs_done > 1)
		metrics = agent_job_aggregate(run_metrics, NULL);
	else if (runs_done == 1)
		metrics = json_array_ref(g_ptr_array_index(run_metrics, 0));
	else if (job->bctx.partial != NULL && json_array_get_length(job->bctx.partial) > 0)
		metrics = json_array_ref(job->bctx.partial);
	if (metrics == NULL)
		return NULL;
	envelope = json_object_new();
	agent_job_describe(job, envelope, timestamp);
	if (facts != NULL)
		json_object_set_member(envelope, "facts", json_node_copy(facts));
	json_object_set_array_member(envelope, "metrics", metrics);
	json_object_set_int_member(envelope, "runs", MAX(runs_done, 1));
	json_object_set_boolean_member(envelope, "partial", TRUE);
	return agent_job_node_take(envelope);
}

static JsonNode *agent_job_execute(AgentJob *job, JsonNode **partial, GError **error)
{
	AgentFactsContext fctx = {
		.sysroot = job->bctx.sysroot,
		.steal_window_ms = 0,
	};
	g_autoptr(JsonArray) fact_errors = json_array_new();
	g_autoptr(JsonNode) facts = NULL;
	g_autoptr(GPtrArray) results =
	    g_ptr_array_new_with_free_func((GDestroyNotify)json_node_unref);
	g_autoptr(GPtrArray) run_metrics = g_ptr_array_new();
	g_autoptr(GDateTime) now = g_date_time_new_now_utc();
	g_autofree char *timestamp = g_date_time_format_iso8601(now);
	g_autoptr(JsonObject) envelope = json_object_new();
	JsonObject *last = NULL;
	JsonArray *metrics;

	job->idle = agent_job_idle_check(job);
	if (!agent_bench_check_cancel(&job->bctx, error))
		return NULL;
	/* the facts that explain the numbers, taken as the benchmark starts */
	agent_job_progress(&job->bctx, 0.0, "collecting facts");
	fctx.errors = fact_errors;
	facts = agent_facts_collect(&fctx, job->bench->fact_sections, error);
	if (facts == NULL) {
		g_prefix_error(error, "Cannot collect facts: ");
		return NULL;
	}

	for (job->current_run = 0; job->current_run < job->runs; job->current_run++) {
		JsonNode *res;
		JsonObject *obj = NULL;
		JsonArray *m = NULL;

		if (!agent_bench_check_cancel(&job->bctx, error)) {
			*partial = agent_job_partial(job, run_metrics, facts, timestamp);
			return NULL;
		}
		if (job->bctx.partial != NULL) {
			json_array_unref(job->bctx.partial);
			job->bctx.partial = NULL;
		}
		res = job->bench->run(&job->bctx, job->params, error);
		if (res == NULL) {
			if (agent_bench_cancelled(&job->bctx))
				*partial = agent_job_partial(job, run_metrics, facts, timestamp);
			return NULL;
		}
		g_ptr_array_add(results, res);
		if (!gb_json_node_get_object(res, "result", &obj, error) ||
		    !gb_json_get_array(obj, "metrics", GB_JSON_REQUIRED, &m, error)) {
			g_prefix_error(error,
			               "Benchmark %s returned a bad result: ", job->bench->name);
			return NULL;
		}
		g_ptr_array_add(run_metrics, m);
		last = obj;
		agent_job_progress(&job->bctx, 1.0, NULL);
	}

	/* members the benchmark added besides metrics (e.g. its known-answer test) */
	{
		g_autoptr(GList) members = json_object_get_members(last);
		for (GList *l = members; l != NULL; l = l->next) {
			if (g_strcmp0(l->data, "metrics") == 0)
				continue;
			json_object_set_member(
			    envelope, l->data,
			    json_node_copy(json_object_get_member(last, l->data)));
		}
	}
	agent_job_describe(job, envelope, timestamp);
	json_object_set_member(envelope, "facts", g_steal_pointer(&facts));
	if (job->runs > 1) {
		metrics = agent_job_aggregate(run_metrics, error);
		if (metrics == NULL)
			return NULL;
	} else {
		metrics = json_array_ref(g_ptr_array_index(run_metrics, 0));
	}
	json_object_set_array_member(envelope, "metrics", metrics);
	json_object_set_int_member(envelope, "runs", job->runs);
	return json_node_init_object(json_node_alloc(), envelope);
}

static gpointer agent_job_thread(gpointer data)
{
	AgentJob *job = data;
	AgentJobs *jobs = job->jobs;
	g_autoptr(GError) error = NULL;
	g_autoptr(JsonNode) partial = NULL;
	JsonNode *result = agent_job_execute(job, &partial, &error);

	{
		g_autoptr(GMutexLocker) G_GNUC_UNUSED locker = g_mutex_locker_new(&jobs->mutex);

		if (result != NULL) {
			job->state = AGENT_JOB_DONE;
			job->result = result;
			job->progress = 1.0;
			g_free(job->phase);
			job->phase = g_strdup("done");
		} else if (agent_bench_cancelled(&job->bctx) ||
		           g_error_matches(error, G_IO_ERROR, G_IO_ERROR_CANCELLED)) {
			job->state = AGENT_JOB_CANCELLED;
			job->error = g_strdup("Benchmark cancelled");
			/* what was measured before the cancel, marked partial */
			job->result = g_steal_pointer(&partial);
		} else {
			job->state = AGENT_JOB_FAILED;
			job->error = g_strdup(error != NULL ? error->message : "Benchmark failed");
		}
		if (jobs->running == job)
			jobs->running = NULL;
	}
	/* nothing touches the job after this point: the main thread may join and free it */
	return NULL;
}

/* ---- command handlers ---- */

/* A copy of params without the members the job runner itself takes. */
static JsonObject *agent_job_bench_params(JsonObject *params)
{
	JsonObject *copy = json_object_new();
	g_autoptr(GList) members = NULL;

	if (params == NULL)
		return copy;
	members = json_object_get_members(params);
	for (GList *l = members; l != NULL; l = l->next) {
		if (g_strcmp0(l->data, "runs") == 0 || g_strcmp0(l->data, "dry_run") == 0)
			continue;
		json_object_set_member(copy, l->data,
		                       json_node_copy(json_object_get_member(params, l->data)));
	}
	return copy;
}

static char *agent_bench_names(void)
{
	static const char *const names[] = { "aes", "disk", "mem", "net" };
	g_autoptr(GString) str = g_string_new(NULL);

	for (guint i = 0; i < G_N_ELEMENTS(names); i++) {
		if (agent_bench_lookup(names[i]) == NULL)
			continue;
		if (str->len > 0)
			g_string_append(str, ", ");
		g_string_append(str, names[i]);
	}
	return g_string_free(g_steal_pointer(&str), FALSE);
}

JsonNode *agent_cmd_bench_start(AgentContext *agent, JsonObject *args, GError **error)
{
	static const char *const allowed[] = { "test", "params", NULL };
	AgentJobs *jobs = agent_jobs_get(agent);
	const char *test = NULL;
	const AgentBench *bench;
	JsonObject *params = NULL;
	gint64 runs = 1;
	gboolean dry_run = FALSE;
	g_autoptr(JsonObject) bench_params = NULL;
	g_autoptr(JsonObject) normalised = NULL;
	AgentJob *job;
	JsonObject *ret = NULL;

	if (!gb_json_check_members(args, allowed, error))
		return NULL;
	if (!gb_json_get_string(args, "test", GB_JSON_REQUIRED, &test, error))
		return NULL;
	bench = agent_bench_lookup(test);
	if (bench == NULL) {
		g_autofree char *names = agent_bench_names();
		g_set_error(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT,
		            "Unknown benchmark '%s' (known: %s)", test, names);
		return NULL;
	}
	if (!gb_json_get_object(args, "params", GB_JSON_OPTIONAL, &params, error))
		return NULL;
	if (!gb_json_get_int(params, "runs", GB_JSON_OPTIONAL, 1, AGENT_JOBS_MAX_RUNS, &runs,
	                     error))
		return NULL;
	if (!gb_json_get_bool(params, "dry_run", GB_JSON_OPTIONAL, &dry_run, error))
		return NULL;
	bench_params = agent_job_bench_params(params);
	normalised = bench->validate(agent->config, bench_params, error);
	if (normalised == NULL)
		return NULL;

	if (dry_run) {
		JsonObject *p = json_object_ref(normalised);
		ret = json_object_new();
		json_object_set_string_member(ret, "test", bench->name);
		json_object_set_boolean_member(ret, "dry_run", TRUE);
		json_object_set_int_member(p, "runs", runs);
		json_object_set_object_member(ret, "params", p);
		return agent_job_node_take(ret);
	}

	{
		g_autoptr(GMutexLocker) G_GNUC_UNUSED locker = g_mutex_locker_new(&jobs->mutex);

		agent_jobs_reap(jobs);
		if (jobs->running != NULL) {
			g_set_error(error, GB_ERROR, GB_ERROR_BUSY,
			            "A benchmark is already running (job %" G_GINT64_FORMAT ", %s)",
			            jobs->running->id, jobs->running->bench->name);
			return NULL;
		}
		agent_jobs_trim(jobs);

		job = g_new0(AgentJob, 1);
		job->jobs = jobs;
		job->id = jobs->next_id;
		job->started_us = g_get_monotonic_time();
		job->bench = bench;
		job->params = g_steal_pointer(&normalised);
		job->runs = runs;
		job->state = AGENT_JOB_RUNNING;
		job->phase = g_strdup("starting");
		job->bctx.config = agent->config;
		job->bctx.sysroot = agent->config->sysroot != NULL ? agent->config->sysroot : "/";
		job->bctx.progress = agent_job_progress;
		job->bctx.rate = agent_job_rate;
		job->bctx.keeps_partial = TRUE;
		job->rate = NAN;
		job->bctx.job = job;
		job->thread = g_thread_try_new("gb-bench", agent_job_thread, job, error);
		if (job->thread != NULL) {
			jobs->next_id++;
			jobs->running = job;
			g_ptr_array_add(jobs->jobs, job);
			ret = json_object_new();
			json_object_set_int_member(ret, "job", job->id);
		}
	}
	if (ret == NULL) {
		/* no thread, and never in the list: no one else can see the job */
		agent_job_free(job);
		g_prefix_error(error, "Cannot start the benchmark thread: ");
		return NULL;
	}
	return agent_job_node_take(ret);
}

static gboolean agent_job_args(JsonObject *args, gint64 *id, GError **error)
{
	static const char *const allowed[] = { "job", NULL };

	if (!gb_json_check_members(args, allowed, error))
		return FALSE;
	return gb_json_get_int(args, "job", GB_JSON_REQUIRED, 1, G_MAXINT64, id, error);
}

JsonNode *agent_cmd_bench_status(AgentContext *agent, JsonObject *args, GError **error)
{
	AgentJobs *jobs = agent_jobs_get(agent);
	g_autoptr(GMutexLocker) locker = NULL;
	AgentJob *job;
	gint64 id = 0;

	if (!agent_job_args(args, &id, error))
		return NULL;
	locker = g_mutex_locker_new(&jobs->mutex);
	agent_jobs_reap(jobs);
	job = agent_jobs_find(jobs, id, error);
	if (job == NULL)
		return NULL;
	if (job->state != AGENT_JOB_RUNNING)
		job->read = TRUE;
	return agent_job_to_json(job, TRUE);
}

JsonNode *agent_cmd_bench_cancel(AgentContext *agent, JsonObject *args, GError **error)
{
	AgentJobs *jobs = agent_jobs_get(agent);
	g_autoptr(GMutexLocker) locker = NULL;
	AgentJob *job;
	gint64 id = 0;

	if (!agent_job_args(args, &id, error))
		return NULL;
	locker = g_mutex_locker_new(&jobs->mutex);
	agent_jobs_reap(jobs);
	job = agent_jobs_find(jobs, id, error);
	if (job == NULL)
		return NULL;
	if (job->state != AGENT_JOB_RUNNING) {
		g_set_error(error, GB_ERROR, GB_ERROR_FAILED,
		            "Job %" G_GINT64_FORMAT " has already finished", id);
		return NULL;
	}
	/* the worker sees the flag within 10 ms of work and ends the job as cancelled */
	g_atomic_int_set(&job->bctx.cancel, 1);
	return agent_job_node_take(json_object_new());
}

JsonNode *agent_cmd_bench_list(AgentContext *agent, JsonObject *args, GError **error)
{
	static const char *const allowed[] = { NULL };
	AgentJobs *jobs = agent_jobs_get(agent);
	JsonArray *arr;
	JsonObject *ret;

	if (!gb_json_check_members(args, allowed, error))
		return NULL;
	arr = json_array_new();
	{
		g_autoptr(GMutexLocker) G_GNUC_UNUSED locker = g_mutex_locker_new(&jobs->mutex);

		agent_jobs_reap(jobs);
		for (guint i = 0; i < jobs->jobs->len; i++)
			json_array_add_element(
			    arr, agent_job_to_json(g_ptr_array_index(jobs->jobs, i), FALSE));
	}
	ret = json_object_new();
	json_object_set_array_member(ret, "jobs", arr);
	return agent_job_node_take(ret);
}

void agent_jobs_shutdown(AgentContext *agent)
{
	AgentJobs *jobs = agent->jobs;

	if (jobs == NULL)
		return;
	{
		g_autoptr(GMutexLocker) G_GNUC_UNUSED locker = g_mutex_locker_new(&jobs->mutex);

		if (jobs->running != NULL)
			g_atomic_int_set(&jobs->running->bctx.cancel, 1);
	}
	/* agent_job_free() joins each thread; the worker needs the lock to finish */
	g_ptr_array_unref(jobs->jobs);
	g_mutex_clear(&jobs->mutex);
	g_free(jobs);
	agent->jobs = NULL;
}
