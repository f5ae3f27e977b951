/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The benchmark job runner: one job at a time, each in a process of its own
 * (guestbench-agent-bench, job-run.c; job.h says what goes in and out), so
 * that a crash or an out-of-memory in a benchmark cannot take the agent
 * down and the agent returns to its idle size when the job ends. A thread
 * per job feeds the process its spec, reads its events and waits for it, so
 * the main loop keeps answering (guest-ping during a benchmark answers at
 * once), and results are kept after the client that started them has gone.
 */
#include "config.h"

#include <errno.h>
#include <gio/gio.h>
#include <math.h>
#include <string.h>
#ifndef G_OS_WIN32
#include <unistd.h>
#endif

#include "bench.h"
#include "gb-bench-limits.h"
#include "gb-error.h"
#include "gb-json.h"
#include "job-proc.h"
#include "job.h"
#ifndef G_OS_WIN32
#include "options.h"
#endif

/* How often the job's thread looks at a cancel or the deadline while it waits for events. */
#define AGENT_JOB_POLL_MS 100
/* Beyond runs x max-bench-seconds: the idle check, collecting facts, start and end. */
#define AGENT_JOB_DEADLINE_SLACK_S 120

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
	gint64 id;
	const AgentBench *bench;
	JsonObject *params; /* normalised, as the benchmark takes them */
	gint64 runs;
	gint64 started_us; /* monotonic: how long ago it started, whatever the wall clock does */
	gint64 deadline_us;
	char *spec;         /* what goes to the process's stdin */
	AgentJobProc *proc; /* the process (job-proc.h); reaped under the lock */
	GThread *thread;    /* until joined */
	gint cancel;        /* atomic: gb-bench-cancel or shutdown asked */
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
	agent_job_proc_free(job->proc);
	if (job->params != NULL)
		json_object_unref(job->params);
	if (job->result != NULL)
		json_node_unref(job->result);
	g_free(job->spec);
	g_free(job->phase);
	g_free(job->rate_unit);
	g_free(job->error);
	g_free(job);
}

G_DEFINE_AUTOPTR_CLEANUP_FUNC(AgentJob, agent_job_free)

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

/* ---- the job's thread: its process's events ---- */

/*
 * One event line (job.h). Returns TRUE when it was the outcome, which is kept
 * aside until the process has been reaped: the job stays "running" till then,
 * so that a gb-bench-start right after "done" never finds it busy. Takes the lock.
 */
static gboolean agent_job_event(AgentJob *job, const char *line, gsize len, AgentJobState *state,
                                JsonNode **result, char **error_out)
{
	AgentJobs *jobs = job->jobs;
	g_autoptr(GError) error = NULL;
	g_autoptr(JsonNode) node = gb_json_parse(line, len, &error);
	g_autoptr(GMutexLocker) G_GNUC_UNUSED locker = g_mutex_locker_new(&jobs->mutex);
	JsonObject *ev = NULL;
	double progress = 0;
	const char *phase = NULL;
	const char *message = NULL;

	if (node == NULL || !gb_json_node_get_object(node, "event", &ev, &error)) {
		g_warning("benchmark process %" G_GINT64_FORMAT " sent a bad event: %s",
		          agent_job_proc_id(job->proc), error->message);
		return FALSE;
	}
	if (json_object_has_member(ev, "done")) {
		*state = AGENT_JOB_DONE;
		*result = json_node_copy(json_object_get_member(ev, "done"));
		return TRUE;
	}
	if (json_object_has_member(ev, "cancelled")) {
		JsonNode *partial = json_object_get_member(ev, "cancelled");

		*state = AGENT_JOB_CANCELLED;
		*error_out = g_strdup("Benchmark cancelled");
		/* what was measured before the cancel, marked partial */
		if (JSON_NODE_HOLDS_OBJECT(partial))
			*result = json_node_copy(partial);
		return TRUE;
	}
	if (json_object_has_member(ev, "failed")) {
		*state = AGENT_JOB_FAILED;
		if (!gb_json_get_string(ev, "failed", GB_JSON_REQUIRED, &message, NULL))
			message = "Benchmark failed";
		*error_out = g_strdup(message);
		return TRUE;
	}
	if (gb_json_get_double(ev, "progress", GB_JSON_OPTIONAL, 0.0, 1.0, &progress, NULL) &&
	    json_object_has_member(ev, "progress") && progress > job->progress)
		job->progress = progress;
	if (gb_json_get_string(ev, "phase", GB_JSON_OPTIONAL, &phase, NULL) && phase != NULL &&
	    g_strcmp0(phase, job->phase) != 0) {
		/* a rate belongs to its phase */
		job->rate = NAN;
		g_free(job->phase);
		job->phase = g_strdup(phase);
	}
	if (json_object_has_member(ev, "rate")) {
		double rate = NAN;
		const char *unit = NULL;

		if (!gb_json_has(ev, "rate") ||
		    !gb_json_get_double(ev, "rate", GB_JSON_REQUIRED, 0, G_MAXDOUBLE, &rate, NULL))
			rate = NAN;
		if (!gb_json_get_string(ev, "rate_unit", GB_JSON_OPTIONAL, &unit, NULL))
			unit = NULL;
		job->rate = rate;
		if (g_strcmp0(job->rate_unit, unit) != 0) {
			g_free(job->rate_unit);
			job->rate_unit = g_strdup(unit);
		}
	}
	return FALSE;
}

static gpointer agent_job_thread(gpointer data)
{
	AgentJob *job = data;
	AgentJobs *jobs = job->jobs;
	g_autoptr(GByteArray) buf = g_byte_array_new();
	g_autofree char *killed_why = NULL;
	g_autofree char *outcome_error = NULL;
	g_autofree char *ended = NULL;
	g_autoptr(JsonNode) outcome_result = NULL;
	AgentJobState outcome_state = AGENT_JOB_FAILED;
	gboolean outcome = FALSE;
	gboolean term_sent = FALSE;
	gint64 kill_at = 0;

	agent_job_proc_write_input(job->proc, job->spec, strlen(job->spec));
	for (;;) {
		gint64 now = g_get_monotonic_time();
		guint8 chunk[16384];
		gssize n;
		guint8 *nl;

		if (g_atomic_int_get(&job->cancel) && !term_sent) {
			agent_job_proc_cancel(job->proc);
			term_sent = TRUE;
			kill_at = now + (gint64)AGENT_JOB_CANCEL_GRACE_MS * 1000;
		}
		if (killed_why == NULL && now > job->deadline_us) {
			killed_why = g_strdup_printf(
			    "Benchmark process ran past its limit of %" G_GINT64_FORMAT
			    " s and was killed",
			    (job->deadline_us - job->started_us) / G_USEC_PER_SEC);
			agent_job_proc_kill(job->proc);
		}
		if (kill_at != 0 && now > kill_at) {
			agent_job_proc_kill(job->proc);
			kill_at = 0;
		}
		n = agent_job_proc_read(job->proc, chunk, sizeof(chunk), AGENT_JOB_POLL_MS);
		if (n < 0)
			continue;
		if (n == 0)
			break;
		g_byte_array_append(buf, chunk, (guint)n);
		while (!outcome && (nl = memchr(buf->data, '\n', buf->len)) != NULL) {
			gsize len = (gsize)(nl - buf->data);

			outcome = agent_job_event(job, (const char *)buf->data, len, &outcome_state,
			                          &outcome_result, &outcome_error);
			g_byte_array_remove_range(buf, 0, (guint)len + 1);
		}
		if (!outcome && buf->len > AGENT_JOB_EVENT_MAX && killed_why == NULL) {
			killed_why = g_strdup("Benchmark process sent an oversized event and was "
			                      "killed");
			agent_job_proc_kill(job->proc);
		}
		if (outcome)
			break;
	}
	agent_job_proc_close_output(job->proc);
	/*
	 * After its outcome the process only exits; one that closed its stdout
	 * without an outcome is asked to stop, then killed. An ended process is
	 * not reaped until the lock is held (job-proc.h), so that gb-bench-cancel
	 * never signals a stranger.
	 */
	while (!agent_job_proc_wait(job->proc, AGENT_JOB_POLL_MS)) {
		gint64 now = g_get_monotonic_time();

		if (!term_sent && !outcome && killed_why == NULL) {
			agent_job_proc_cancel(job->proc);
			term_sent = TRUE;
			kill_at = now + (gint64)AGENT_JOB_CANCEL_GRACE_MS * 1000;
		} else if (kill_at == 0 && killed_why == NULL && outcome) {
			/* it sent its outcome: it has a grace to exit, as after a cancel */
			kill_at = now + (gint64)AGENT_JOB_CANCEL_GRACE_MS * 1000;
		} else if (kill_at != 0 && now > kill_at) {
			agent_job_proc_kill(job->proc);
			kill_at = 0;
		}
	}
	{
		g_autoptr(GMutexLocker) G_GNUC_UNUSED locker = g_mutex_locker_new(&jobs->mutex);

		ended = agent_job_proc_reap(job->proc);
		if (outcome) {
			job->state = outcome_state;
			job->result = g_steal_pointer(&outcome_result);
			job->error = g_steal_pointer(&outcome_error);
			if (outcome_state == AGENT_JOB_DONE) {
				job->progress = 1.0;
				g_free(job->phase);
				job->phase = g_strdup("done");
			}
		} else {
			if (killed_why != NULL) {
				job->state = AGENT_JOB_FAILED;
				job->error = g_steal_pointer(&killed_why);
			} else if (g_atomic_int_get(&job->cancel)) {
				job->state = AGENT_JOB_CANCELLED;
				job->error = g_strdup("Benchmark cancelled");
			} else {
				job->state = AGENT_JOB_FAILED;
				job->error = g_steal_pointer(&ended);
			}
			g_debug("job %" G_GINT64_FORMAT ": %s", job->id, job->error);
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

/* The spec the process reads (job.h). */
static char *agent_job_spec(AgentJob *job, const AgentConfig *config)
{
	g_autoptr(JsonObject) obj = json_object_new();
	g_autoptr(JsonNode) node = json_node_new(JSON_NODE_OBJECT);

	json_object_set_string_member(obj, "test", job->bench->name);
	json_object_set_object_member(obj, "params", json_object_ref(job->params));
	json_object_set_int_member(obj, "runs", job->runs);
	json_object_set_string_member(obj, "sysroot",
	                              config->sysroot != NULL ? config->sysroot : "/");
	json_object_set_string_member(obj, "scratch_dir",
	                              config->scratch_dir != NULL ? config->scratch_dir : "");
	json_object_set_int_member(obj, "max_bench_seconds", config->max_bench_seconds);
	json_object_set_int_member(obj, "max_bench_file_size", config->max_bench_file_size);
	json_node_set_object(node, obj);
	return gb_json_to_string(node, NULL);
}

/* Starts the job's process; FALSE with error when it cannot be started. */
static gboolean agent_job_spawn(AgentJob *job, const AgentConfig *config, GError **error)
{
	if (config->bench_worker == NULL) {
		g_set_error_literal(error, GB_ERROR, GB_ERROR_FAILED,
		                    "no benchmark program (guestbench-agent-bench) is configured");
		return FALSE;
	}
	job->spec = agent_job_spec(job, config);
	job->proc = agent_job_proc_spawn(config->bench_worker, error);
	return job->proc != NULL;
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
		job->deadline_us = job->started_us + (runs * agent->config->max_bench_seconds +
		                                      AGENT_JOB_DEADLINE_SLACK_S) *
		                                         G_USEC_PER_SEC;
		job->bench = bench;
		job->params = g_steal_pointer(&normalised);
		job->runs = runs;
		job->state = AGENT_JOB_RUNNING;
		job->phase = g_strdup("starting");
		job->rate = NAN;
		if (!agent_job_spawn(job, agent->config, error)) {
			g_prefix_error(error, "Cannot start the benchmark process: ");
		} else {
			job->thread = g_thread_try_new("gb-bench", agent_job_thread, job, error);
			if (job->thread == NULL) {
				/* agent_job_free() kills and reaps it */
				g_prefix_error(error, "Cannot start the benchmark thread: ");
			}
		}
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
	/* the benchmark stops within 10 ms of work; the job's thread kills it after a grace */
	g_atomic_int_set(&job->cancel, 1);
	agent_job_proc_cancel(job->proc);
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

		if (jobs->running != NULL) {
			g_atomic_int_set(&jobs->running->cancel, 1);
			agent_job_proc_cancel(jobs->running->proc);
		}
	}
	/* agent_job_free() joins each thread; it needs the lock to finish */
	g_ptr_array_unref(jobs->jobs);
	g_mutex_clear(&jobs->mutex);
	g_free(jobs);
	agent->jobs = NULL;
}

gboolean agent_jobs_busy(AgentContext *agent)
{
	AgentJobs *jobs = agent->jobs;
	gboolean busy;

	if (jobs == NULL)
		return FALSE;
	g_mutex_lock(&jobs->mutex);
	busy = jobs->running != NULL;
	g_mutex_unlock(&jobs->mutex);
	return busy;
}

#ifndef G_OS_WIN32
/* ---- finished jobs across session processes (the Windows agent is one process) ---- */

static JsonNode *agent_job_save_one(AgentJob *job)
{
	g_autoptr(JsonNode) node = agent_job_to_json(job, TRUE);
	JsonObject *obj = json_node_get_object(node);

	json_object_remove_member(obj, "age");
	json_object_set_int_member(obj, "started_us", job->started_us);
	json_object_set_boolean_member(obj, "read", job->read);
	return g_steal_pointer(&node);
}

gboolean agent_jobs_save(AgentContext *agent, int fd, GError **error)
{
	AgentJobs *jobs = agent_jobs_get(agent);
	g_autoptr(JsonNode) root = NULL;
	g_autofree char *text = NULL;
	JsonObject *obj = json_object_new();
	JsonArray *arr = json_array_new();
	gsize len = 0;
	gsize done = 0;

	{
		g_autoptr(GMutexLocker) G_GNUC_UNUSED locker = g_mutex_locker_new(&jobs->mutex);

		agent_jobs_reap(jobs);
		for (guint i = 0; i < jobs->jobs->len; i++) {
			AgentJob *job = g_ptr_array_index(jobs->jobs, i);
			if (job->state != AGENT_JOB_RUNNING)
				json_array_add_element(arr, agent_job_save_one(job));
		}
		json_object_set_int_member(obj, "next_id", jobs->next_id);
	}
	json_object_set_array_member(obj, "jobs", arr);
	root = agent_job_node_take(obj);
	text = gb_json_to_string(root, &len);
	if (ftruncate(fd, 0) != 0 || lseek(fd, 0, SEEK_SET) != 0) {
		g_set_error(error, GB_ERROR, GB_ERROR_IO, "cannot rewrite the job history: %s",
		            g_strerror(errno));
		return FALSE;
	}
	while (done < len) {
		ssize_t n = write(fd, text + done, len - done);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			g_set_error(error, GB_ERROR, GB_ERROR_IO,
			            "cannot write the job history: %s",
			            n < 0 ? g_strerror(errno) : "short write");
			return FALSE;
		}
		done += (gsize)n;
	}
	return TRUE;
}

static AgentJob *agent_job_load_one(AgentJobs *jobs, JsonNode *node, GError **error)
{
	static const char *const allowed[] = { "job",   "test",   "state",      "progress", "phase",
		                               "error", "result", "started_us", "read",     NULL };
	g_autoptr(AgentJob) job = g_new0(AgentJob, 1);
	JsonObject *obj = NULL;
	JsonNode *result = NULL;
	const char *test = NULL;
	const char *state = NULL;
	const char *phase = NULL;
	const char *err = NULL;
	gboolean read = FALSE;

	job->jobs = jobs;
	job->rate = NAN;
	if (!gb_json_node_get_object(node, "job", &obj, error) ||
	    !gb_json_check_members(obj, allowed, error) ||
	    !gb_json_get_int(obj, "job", GB_JSON_REQUIRED, 1, G_MAXINT64 - 1, &job->id, error) ||
	    !gb_json_get_string(obj, "test", GB_JSON_REQUIRED, &test, error) ||
	    !gb_json_get_string(obj, "state", GB_JSON_REQUIRED, &state, error) ||
	    !gb_json_get_double(obj, "progress", GB_JSON_REQUIRED, 0, 1, &job->progress, error) ||
	    !gb_json_get_string(obj, "phase", GB_JSON_REQUIRED, &phase, error) ||
	    !gb_json_get_string(obj, "error", GB_JSON_OPTIONAL, &err, error) ||
	    !gb_json_get_int(obj, "started_us", GB_JSON_REQUIRED, 0, G_MAXINT64, &job->started_us,
	                     error) ||
	    !gb_json_get_bool(obj, "read", GB_JSON_REQUIRED, &read, error))
		return NULL;
	job->bench = agent_bench_lookup(test);
	if (job->bench == NULL) {
		g_set_error(error, GB_ERROR, GB_ERROR_PARSE, "unknown test '%s'", test);
		return NULL;
	}
	job->state = AGENT_JOB_RUNNING;
	for (guint i = AGENT_JOB_DONE; i < G_N_ELEMENTS(agent_job_state_names); i++)
		if (g_strcmp0(state, agent_job_state_names[i]) == 0)
			job->state = (AgentJobState)i;
	if (job->state == AGENT_JOB_RUNNING) {
		g_set_error(error, GB_ERROR, GB_ERROR_PARSE, "state '%s' is not a finished one",
		            state);
		return NULL;
	}
	job->read = read;
	job->phase = g_strdup(phase);
	job->error = g_strdup(err);
	result = json_object_get_member(obj, "result");
	if (result != NULL && !JSON_NODE_HOLDS_NULL(result))
		job->result = json_node_copy(result);
	return g_steal_pointer(&job);
}

gboolean agent_jobs_load(AgentContext *agent, int fd, GError **error)
{
	AgentJobs *jobs = agent_jobs_get(agent);
	g_autoptr(GByteArray) buf = g_byte_array_new();
	g_autoptr(JsonNode) root = NULL;
	JsonObject *obj = NULL;
	JsonArray *arr = NULL;
	g_autoptr(GPtrArray) loaded = NULL;
	gint64 next_id = 1;
	gboolean ok = TRUE;

	if (!agent_read_fd(fd, AGENT_JOB_EVENT_MAX, buf, error)) {
		g_prefix_error(error, "cannot read the job history: ");
		return FALSE;
	}
	/* the first session finds it empty */
	if (buf->len == 0)
		return TRUE;
	root = gb_json_parse((const char *)buf->data, buf->len, error);
	if (root == NULL || !gb_json_node_get_object(root, "job history", &obj, error) ||
	    !gb_json_get_int(obj, "next_id", GB_JSON_REQUIRED, 1, G_MAXINT64, &next_id, error) ||
	    !gb_json_get_array(obj, "jobs", GB_JSON_REQUIRED, &arr, error)) {
		g_prefix_error(error, "job history: ");
		return FALSE;
	}
	/* all or nothing: a history that fails half-way leaves none of it */
	loaded = g_ptr_array_new_with_free_func((GDestroyNotify)agent_job_free);
	for (guint i = 0; ok && i < json_array_get_length(arr); i++) {
		AgentJob *job = agent_job_load_one(jobs, json_array_get_element(arr, i), error);
		if (job == NULL) {
			g_prefix_error(error, "job history, entry %u: ", i);
			ok = FALSE;
			break;
		}
		next_id = MAX(next_id, job->id + 1);
		g_ptr_array_add(loaded, job);
	}
	if (ok) {
		g_mutex_lock(&jobs->mutex);
		g_ptr_array_extend_and_steal(jobs->jobs, g_steal_pointer(&loaded));
		jobs->next_id = next_id;
		g_mutex_unlock(&jobs->mutex);
	}
	return ok;
}
#endif
