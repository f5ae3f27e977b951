/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * One benchmark job, run in a process of its own (guestbench-agent-bench,
 * started by the agent's job runner in job.c): a crash or an out-of-memory in
 * a benchmark ends this process, never the agent, and the agent returns to
 * its idle size when the job ends. The job spec comes as one JSON object on
 * stdin; progress, rate and the outcome go to stdout as one JSON object per
 * line (job.h). SIGTERM or SIGINT (on Windows, the cancel event
 * bench-worker.c waits on) cancels the job the way gb-bench-cancel did
 * in-process: the benchmark stops within 10 ms of work and what it had
 * measured is reported as a partial result.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <gio/gio.h>
#include <math.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>
#ifdef G_OS_WIN32
#include <io.h>
#endif

#include "agent-config.h"
#include "bench.h"
#include "facts.h"
#include "gb-bench-limits.h"
#include "gb-error.h"
#include "gb-json.h"
#include "job.h"

/* Progress and rate of one phase are sent at most this often (the last one always). */
#define AGENT_JOB_RUN_EVENT_US (10 * 1000)

typedef struct {
	AgentBenchContext bctx; /* bctx.job points back here */
	const AgentBench *bench;
	JsonObject *params; /* normalised, as the benchmark takes them */
	gint64 runs;
	gint64 current_run;
	JsonNode *idle; /* the idle check before the run (result "idle") */
	int out_fd;
	gboolean out_broken; /* an event could not be written: the agent has gone */
	/* benchmarks may report from several threads: one event line at a time */
	GMutex mutex;
	double progress; /* the last one sent: progress only ever grows */
	char *phase;     /* the last phase sent */
	gint64 progress_sent_us;
	gint64 rate_sent_us;
	char *rate_unit;
} AgentJobRun;

/* A node owning obj (json_node_init_object() would add a reference instead). */
static JsonNode *agent_job_node_take(JsonObject *obj)
{
	JsonNode *node = json_node_new(JSON_NODE_OBJECT);
	json_node_take_object(node, obj);
	return node;
}

/*
 * The job's cancel flag, set by agent_bench_worker_cancel(); a cancel that
 * comes before the job has its flag is kept in agent_job_run_cancel_early.
 */
static gint *agent_job_run_cancel_flag;
static gint agent_job_run_cancel_early;

void agent_bench_worker_cancel(void)
{
	gint *flag;

	g_atomic_int_set(&agent_job_run_cancel_early, 1);
	flag = g_atomic_pointer_get(&agent_job_run_cancel_flag);
	if (flag != NULL)
		g_atomic_int_set(flag, 1);
}

#ifndef G_OS_WIN32
static void agent_job_run_on_signal(int sig)
{
	agent_bench_worker_cancel();
}
#endif

/*
 * Events go to a private copy of stdout (*out_fd); anything else written to
 * stdout goes to stderr. Both byte streams: no "\r\n" on Windows.
 */
static gboolean agent_job_run_setup_stdio(int *out_fd)
{
#ifdef G_OS_WIN32
	if (_setmode(STDIN_FILENO, _O_BINARY) < 0)
		return FALSE;
	*out_fd = _dup(STDOUT_FILENO);
	return *out_fd >= 0 && _setmode(*out_fd, _O_BINARY) >= 0 &&
	       _dup2(STDERR_FILENO, STDOUT_FILENO) == 0;
#else
	*out_fd = fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 3);
	return *out_fd >= 0 && dup2(STDERR_FILENO, STDOUT_FILENO) >= 0;
#endif
}

/* Writes one event line; a parent that has gone (EPIPE) cancels the job. Lock held. */
static void agent_job_run_emit(AgentJobRun *job, JsonObject *event_owned)
{
	g_autoptr(JsonNode) node = json_node_new(JSON_NODE_OBJECT);
	g_autofree char *text = NULL;
	gsize len = 0;
	gsize done = 0;

	json_node_take_object(node, event_owned);
	text = gb_json_to_string(node, &len);
	text = g_realloc(text, len + 1);
	text[len++] = '\n';
	while (done < len) {
		ssize_t n = write(job->out_fd, text + done, len - done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			g_atomic_int_set(&job->bctx.cancel, 1);
			job->out_broken = TRUE;
			return;
		}
		done += (gsize)n;
	}
}

static void agent_job_progress(AgentBenchContext *bctx, double fraction, const char *phase)
{
	AgentJobRun *job = bctx->job;
	g_autoptr(GMutexLocker) locker = NULL;
	g_autofree char *full = NULL;
	gboolean new_phase;
	gint64 now = g_get_monotonic_time();
	double total;
	JsonObject *event;

	if (!isfinite(fraction))
		return;
	total = ((double)job->current_run + CLAMP(fraction, 0.0, 1.0)) / (double)job->runs;
	total = MIN(total, 1.0);
	if (phase != NULL && job->runs > 1)
		full = g_strdup_printf("run %" G_GINT64_FORMAT "/%" G_GINT64_FORMAT ": %s",
		                       job->current_run + 1, job->runs, phase);
	else if (phase != NULL)
		full = g_strdup(phase);
	locker = g_mutex_locker_new(&job->mutex);
	new_phase = full != NULL && g_strcmp0(full, job->phase) != 0;
	if (!new_phase &&
	    (total <= job->progress || now - job->progress_sent_us < AGENT_JOB_RUN_EVENT_US))
		return;
	job->progress = MAX(job->progress, total);
	job->progress_sent_us = now;
	event = json_object_new();
	json_object_set_double_member(event, "progress", job->progress);
	if (new_phase) {
		g_free(job->phase);
		job->phase = g_steal_pointer(&full);
		json_object_set_string_member(event, "phase", job->phase);
	}
	agent_job_run_emit(job, event);
}

static void agent_job_rate(AgentBenchContext *bctx, double value, const char *unit)
{
	AgentJobRun *job = bctx->job;
	g_autoptr(GMutexLocker) G_GNUC_UNUSED locker = g_mutex_locker_new(&job->mutex);
	gint64 now = g_get_monotonic_time();
	JsonObject *event;

	if (g_strcmp0(unit, job->rate_unit) == 0 &&
	    now - job->rate_sent_us < AGENT_JOB_RUN_EVENT_US)
		return;
	g_free(job->rate_unit);
	job->rate_unit = g_strdup(unit);
	job->rate_sent_us = now;
	event = json_object_new();
	if (isfinite(value) && value >= 0)
		json_object_set_double_member(event, "rate", value);
	else
		json_object_set_null_member(event, "rate");
	if (unit != NULL)
		json_object_set_string_member(event, "rate_unit", unit);
	else
		json_object_set_null_member(event, "rate_unit");
	agent_job_run_emit(job, event);
}

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
static JsonNode *agent_job_idle_check(AgentJobRun *job)
{
	g_autoptr(JsonBuilder) builder = json_builder_new();
	g_autoptr(GError) error = NULL;
	double busy = 0;
	double steal = 0;
	gboolean ok;

	agent_job_progress(&job->bctx, 0.0, "idle check");
	ok = agent_facts_cpu_load(job->bctx.sysroot, GB_BENCH_IDLE_WINDOW_MS, &job->bctx.cancel,
	                          &busy, &steal, &error);
	/* a system that does not report steal time (Windows) has no figure for it */
	json_builder_begin_object(builder);
	json_builder_set_member_name(builder, "busy_percent");
	if (ok)
		json_builder_add_double_value(builder, busy);
	else
		json_builder_add_null_value(builder);
	json_builder_set_member_name(builder, "steal_percent");
	if (ok && isfinite(steal))
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
static void agent_job_describe(AgentJobRun *job, JsonObject *envelope, const char *timestamp)
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
static JsonNode *agent_job_partial(AgentJobRun *job, GPtrArray *run_metrics, JsonNode *facts,
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

static JsonNode *agent_job_execute(AgentJobRun *job, JsonNode **partial, GError **error)
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

/* The runners: the same benchmarks as bench.c's table, with their run(). */
static const AgentBench *agent_job_run_lookup(const char *name)
{
	static const AgentBench *const runners[] = {
		&agent_bench_aes,
		&agent_bench_mem,
#ifndef G_OS_WIN32
		&agent_bench_disk,
		&agent_bench_net,
#endif
	};

	for (guint i = 0; i < G_N_ELEMENTS(runners); i++) {
		if (g_strcmp0(runners[i]->name, name) == 0)
			return runners[i];
	}
	return NULL;
}

/* Reads fd to its end (at most max bytes). */
static GString *agent_job_run_read_all(int fd, gsize max, GError **error)
{
	g_autoptr(GString) buf = g_string_new(NULL);
	char chunk[4096];

	for (;;) {
		ssize_t n = read(fd, chunk, sizeof(chunk));

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			int errsv = errno;
			g_set_error(error, GB_ERROR, GB_ERROR_IO, "cannot read the job: %s",
			            g_strerror(errsv));
			return NULL;
		}
		if (n == 0)
			return g_steal_pointer(&buf);
		if (buf->len + (gsize)n > max) {
			g_set_error(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT,
			            "the job is over %" G_GSIZE_FORMAT " bytes", max);
			return NULL;
		}
		g_string_append_len(buf, chunk, n);
	}
}

/* The job spec that job.c writes (job.h); fills job and config. */
static gboolean agent_job_run_parse(AgentJobRun *job, AgentConfig *config, JsonNode *spec,
                                    GError **error)
{
	static const char *const allowed[] = { "test",
		                               "params",
		                               "runs",
		                               "sysroot",
		                               "scratch_dir",
		                               "max_bench_seconds",
		                               "max_bench_file_size",
		                               NULL };
	JsonObject *obj = NULL;
	JsonObject *params = NULL;
	const char *test = NULL;
	const char *sysroot = NULL;
	const char *scratch = NULL;

	if (!gb_json_node_get_object(spec, "job", &obj, error) ||
	    !gb_json_check_members(obj, allowed, error) ||
	    !gb_json_get_string(obj, "test", GB_JSON_REQUIRED, &test, error) ||
	    !gb_json_get_object(obj, "params", GB_JSON_REQUIRED, &params, error) ||
	    !gb_json_get_int(obj, "runs", GB_JSON_REQUIRED, 1, AGENT_JOBS_MAX_RUNS, &job->runs,
	                     error) ||
	    !gb_json_get_string(obj, "sysroot", GB_JSON_REQUIRED, &sysroot, error) ||
	    !gb_json_get_string(obj, "scratch_dir", GB_JSON_REQUIRED, &scratch, error) ||
	    !gb_json_get_int(obj, "max_bench_seconds", GB_JSON_REQUIRED, 1, AGENT_MAX_BENCH_SECONDS,
	                     &config->max_bench_seconds, error) ||
	    !gb_json_get_int(obj, "max_bench_file_size", GB_JSON_REQUIRED,
	                     AGENT_MIN_BENCH_FILE_SIZE, G_MAXINT64, &config->max_bench_file_size,
	                     error))
		return FALSE;
	job->bench = agent_job_run_lookup(test);
	if (job->bench == NULL) {
		g_set_error(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT, "Unknown benchmark '%s'",
		            test);
		return FALSE;
	}
	g_free(config->sysroot);
	config->sysroot = g_strdup(sysroot);
	g_free(config->scratch_dir);
	config->scratch_dir = g_strdup(scratch);
	job->params = json_object_ref(params);
	return TRUE;
}

int agent_bench_worker_main(void)
{
	g_autoptr(GError) error = NULL;
	g_autoptr(AgentConfig) config = agent_config_new();
	g_autoptr(GString) text = NULL;
	g_autoptr(JsonNode) spec = NULL;
	g_autoptr(JsonNode) partial = NULL;
	g_autoptr(JsonNode) result = NULL;
	AgentJobRun job = { .runs = 1, .progress = 0 };
	JsonObject *event;

	if (!agent_job_run_setup_stdio(&job.out_fd)) {
		g_printerr("guestbench-agent-bench: cannot set up its output: %s\n",
		           g_strerror(errno));
		return 1;
	}
#ifndef G_OS_WIN32
	/* on Windows, GLib has started a thread of its own by now, which this
	 * asserts against: there, stdout already is stderr for the C runtime */
	g_log_writer_default_set_use_stderr(TRUE);
#endif
	g_mutex_init(&job.mutex);
	g_atomic_pointer_set(&agent_job_run_cancel_flag, &job.bctx.cancel);
	if (g_atomic_int_get(&agent_job_run_cancel_early))
		g_atomic_int_set(&job.bctx.cancel, 1);
#ifndef G_OS_WIN32
	{
		struct sigaction sa = { .sa_handler = agent_job_run_on_signal };

		signal(SIGPIPE, SIG_IGN);
		sigemptyset(&sa.sa_mask);
		sigaction(SIGTERM, &sa, NULL);
		sigaction(SIGINT, &sa, NULL);
	}
#endif

	text = agent_job_run_read_all(STDIN_FILENO, AGENT_JOB_SPEC_MAX, &error);
	if (text != NULL)
		spec = gb_json_parse(text->str, text->len, &error);
	if (spec == NULL || !agent_job_run_parse(&job, config, spec, &error)) {
		event = json_object_new();
		json_object_set_string_member(event, "failed", error->message);
		agent_job_run_emit(&job, event);
		return 1;
	}
	job.bctx.config = config;
	job.bctx.sysroot = config->sysroot;
	job.bctx.progress = agent_job_progress;
	job.bctx.rate = agent_job_rate;
	job.bctx.keeps_partial = TRUE;
	job.bctx.job = &job;

	result = agent_job_execute(&job, &partial, &error);
	event = json_object_new();
	g_mutex_lock(&job.mutex);
	if (result != NULL) {
		json_object_set_member(event, "done", g_steal_pointer(&result));
	} else if (agent_bench_cancelled(&job.bctx) ||
	           g_error_matches(error, G_IO_ERROR, G_IO_ERROR_CANCELLED)) {
		if (partial != NULL)
			json_object_set_member(event, "cancelled", g_steal_pointer(&partial));
		else
			json_object_set_null_member(event, "cancelled");
	} else {
		json_object_set_string_member(event, "failed",
		                              error != NULL ? error->message : "Benchmark failed");
	}
	agent_job_run_emit(&job, event);
	g_mutex_unlock(&job.mutex);

	g_atomic_pointer_set(&agent_job_run_cancel_flag, NULL);
	if (job.params != NULL)
		json_object_unref(job.params);
	if (job.idle != NULL)
		json_node_unref(job.idle);
	if (job.bctx.partial != NULL)
		json_array_unref(job.bctx.partial);
	g_free(job.phase);
	g_free(job.rate_unit);
	g_mutex_clear(&job.mutex);
	close(job.out_fd);
	/* no one got the outcome: not a success */
	return job.out_broken ? 1 : 0;
}
