/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"

#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <gio/gio.h>
#include <glib/gstdio.h>
#include <json-glib/json-glib.h>

#include "bench.h"
#include "gb-error.h"
#include "gb-json.h"
#include "job.h"

/* each job runs in the built guestbench-agent-bench, as in the agent */
static AgentConfig test_config = {
	.sysroot = (char *)"/",
	.max_bench_seconds = 60,
	.max_bench_file_size = 1024 * 1024 * 1024,
	.bench_worker = (char *)GB_TEST_BENCH_WORKER,
};

static JsonObject *test_obj(const char *json)
{
	g_autoptr(GError) error = NULL;
	g_autoptr(JsonNode) node = json_from_string(json, &error);
	g_assert_no_error(error);
	return json_object_ref(json_node_get_object(node));
}

static JsonNode *test_call(AgentContext *agent, AgentCommandFunc func, const char *json,
                           GError **error)
{
	g_autoptr(JsonObject) args = json != NULL ? test_obj(json) : NULL;
	return func(agent, args, error);
}

static gint64 test_start(AgentContext *agent, const char *json)
{
	g_autoptr(GError) error = NULL;
	g_autoptr(JsonNode) ret = test_call(agent, agent_cmd_bench_start, json, &error);
	g_assert_no_error(error);
	return json_object_get_int_member(json_node_get_object(ret), "job");
}

static JsonObject *test_status(AgentContext *agent, gint64 id)
{
	g_autoptr(GError) error = NULL;
	g_autofree char *json = g_strdup_printf("{\"job\": %" G_GINT64_FORMAT "}", id);
	g_autoptr(JsonNode) ret = test_call(agent, agent_cmd_bench_status, json, &error);
	g_assert_no_error(error);
	return json_object_ref(json_node_get_object(ret));
}

/*
 * Polls until the job leaves "running"; checks progress only grows on the way.
 * The waits here have no bound of their own: meson's timeout is the bound,
 * as how fast a loaded machine runs the job is not what is tested.
 */
static JsonObject *test_wait(AgentContext *agent, gint64 id)
{
	double last = -1;

	for (;;) {
		g_autoptr(JsonObject) st = test_status(agent, id);
		double progress = json_object_get_double_member(st, "progress");
		g_assert_cmpfloat(progress, >=, last);
		g_assert_cmpfloat(progress, <=, 1.0);
		last = progress;
		if (g_strcmp0(json_object_get_string_member(st, "state"), "running") != 0)
			return g_steal_pointer(&st);
		g_usleep(5000);
	}
}

static void test_job_lifecycle(void)
{
	AgentContext agent = { .config = &test_config };
	g_autoptr(JsonObject) st = NULL;
	JsonObject *result;
	JsonObject *params;
	JsonArray *metrics;
	gint64 id;

	id = test_start(
	    &agent, "{\"test\": \"aes\", \"params\": {\"seconds\": 0.1, \"sizes\": [16, 1024]}}");
	g_assert_cmpint(id, ==, 1);
	st = test_wait(&agent, id);
	g_assert_cmpstr(json_object_get_string_member(st, "state"), ==, "done");
	g_assert_cmpstr(json_object_get_string_member(st, "test"), ==, "aes");
	g_assert_cmpfloat(json_object_get_double_member(st, "progress"), ==, 1.0);
	g_assert_false(json_object_has_member(st, "error"));
	result = json_object_get_object_member(st, "result");
	g_assert_nonnull(result);
	g_assert_cmpstr(json_object_get_string_member(result, "test"), ==, "aes");
	g_assert_cmpstr(json_object_get_string_member(result, "agent_version"), ==, GB_VERSION);
	g_assert_nonnull(json_object_get_string_member(result, "timestamp"));
	g_assert_nonnull(json_object_get_object_member(result, "facts"));
	g_assert_cmpint(json_object_get_int_member(result, "runs"), ==, 1);
	params = json_object_get_object_member(result, "params");
	g_assert_cmpstr(json_object_get_string_member(params, "cipher"), ==, "aes-128-gcm");
	g_assert_cmpint(json_object_get_int_member(params, "runs"), ==, 1);
	metrics = json_object_get_array_member(result, "metrics");
	g_assert_cmpint(json_array_get_length(metrics), ==, 2);
	g_assert_true(json_object_has_member(result, "known_answer_test"));

	/* a finished job cannot be cancelled */
	{
		g_autoptr(GError) error = NULL;
		g_autoptr(JsonNode) ret =
		    test_call(&agent, agent_cmd_bench_cancel, "{\"job\": 1}", &error);
		g_assert_null(ret);
		g_assert_error(error, GB_ERROR, GB_ERROR_FAILED);
		g_assert_cmpstr(error->message, ==, "Job 1 has already finished");
	}
	agent_jobs_shutdown(&agent);
	g_assert_null(agent.jobs);
}

static void test_job_busy_and_cancel(void)
{
	AgentContext agent = { .config = &test_config };
	g_autoptr(GError) error = NULL;
	g_autoptr(JsonNode) ret = NULL;
	g_autoptr(JsonNode) ping = NULL;
	g_autoptr(JsonObject) st = NULL;
	gint64 id;
	gint64 t0;

	id = test_start(&agent,
	                "{\"test\": \"aes\", \"params\": {\"seconds\": 10, \"sizes\": [16384]}}");
	ret = test_call(&agent, agent_cmd_bench_start,
	                "{\"test\": \"aes\", \"params\": {\"seconds\": 0.1}}", &error);
	g_assert_null(ret);
	g_assert_error(error, GB_ERROR, GB_ERROR_BUSY);
	g_assert_cmpstr(error->message, ==, "A benchmark is already running (job 1, aes)");
	g_clear_error(&error);

	/* a dry run is only validation: allowed while a job runs */
	ret = test_call(&agent, agent_cmd_bench_start,
	                "{\"test\": \"aes\", \"params\": {\"seconds\": 0.1, \"dry_run\": true}}",
	                &error);
	g_assert_no_error(error);
	g_assert_true(json_object_get_boolean_member(json_node_get_object(ret), "dry_run"));
	g_assert_false(json_object_has_member(json_node_get_object(ret), "job"));

	/* the list shows it running */
	ping = test_call(&agent, agent_cmd_bench_list, NULL, &error);
	g_assert_no_error(error);
	{
		JsonArray *jobs = json_object_get_array_member(json_node_get_object(ping), "jobs");
		JsonObject *job;
		g_assert_cmpint(json_array_get_length(jobs), ==, 1);
		job = json_array_get_object_element(jobs, 0);
		g_assert_cmpstr(json_object_get_string_member(job, "state"), ==, "running");
		g_assert_false(json_object_has_member(job, "result"));
		/* how long ago it started: it was started just now */
		g_assert_true(json_object_has_member(job, "age"));
		g_assert_cmpfloat(json_object_get_double_member(job, "age"), >=, 0.0);
		g_assert_cmpfloat(json_object_get_double_member(job, "age"), <, 5.0);
	}

	g_usleep(200 * 1000);
	g_clear_pointer(&ret, json_node_unref);
	t0 = g_get_monotonic_time();
	ret = test_call(&agent, agent_cmd_bench_cancel, "{\"job\": 1}", &error);
	g_assert_no_error(error);
	for (;;) {
		g_clear_pointer(&st, json_object_unref);
		st = test_status(&agent, id);
		if (g_strcmp0(json_object_get_string_member(st, "state"), "running") != 0)
			break;
		g_usleep(1000);
	}
	/* the documented bound: cancel takes effect within 100 ms (protocol/BENCH.md) */
	g_assert_cmpint(g_get_monotonic_time() - t0, <, 100 * 1000);
	g_assert_cmpstr(json_object_get_string_member(st, "state"), ==, "cancelled");
	/* the 200 ms it ran are in its age */
	g_assert_cmpfloat(json_object_get_double_member(st, "age"), >=, 0.2);
	g_assert_cmpstr(json_object_get_string_member(st, "error"), ==, "Benchmark cancelled");
	g_assert_false(json_object_has_member(st, "result"));

	/* the next job may start now */
	id = test_start(&agent,
	                "{\"test\": \"aes\", \"params\": {\"seconds\": 0.1, \"sizes\": [16]}}");
	g_assert_cmpint(id, ==, 2);
	agent_jobs_shutdown(&agent);
}

static void test_job_runs(void)
{
	AgentContext agent = { .config = &test_config };
	g_autoptr(JsonObject) st = NULL;
	JsonObject *result;
	JsonObject *sample;
	JsonArray *runs;
	double mean;
	gint64 id;

	id = test_start(&agent, "{\"test\": \"aes\", \"params\": "
	                        "{\"seconds\": 0.1, \"sizes\": [16], \"runs\": 3}}");
	st = test_wait(&agent, id);
	g_assert_cmpstr(json_object_get_string_member(st, "state"), ==, "done");
	result = json_object_get_object_member(st, "result");
	g_assert_cmpint(json_object_get_int_member(result, "runs"), ==, 3);
	g_assert_cmpint(
	    json_object_get_int_member(json_object_get_object_member(result, "params"), "runs"), ==,
	    3);
	sample = json_array_get_object_element(json_object_get_array_member(result, "metrics"), 0);
	runs = json_object_get_array_member(sample, "runs");
	g_assert_cmpint(json_array_get_length(runs), ==, 3);
	mean = (json_array_get_double_element(runs, 0) + json_array_get_double_element(runs, 1) +
	        json_array_get_double_element(runs, 2)) /
	       3;
	g_assert_cmpfloat_with_epsilon(json_object_get_double_member(sample, "mean"), mean,
	                               mean * 1e-9);
	g_assert_cmpfloat(json_object_get_double_member(sample, "value"), ==,
	                  json_object_get_double_member(sample, "mean"));
	g_assert_cmpfloat(json_object_get_double_member(sample, "stddev"), >=, 0);
	g_assert_cmpfloat(json_object_get_double_member(sample, "cv"), ==,
	                  json_object_get_double_member(sample, "stddev") / mean);
	g_assert_cmpstr(json_object_get_string_member(sample, "unit"), ==, "B/s");
	agent_jobs_shutdown(&agent);
}

/* Polls until the phase holds want; returns the last status (still running). */
static JsonObject *test_wait_phase(AgentContext *agent, gint64 id, const char *want)
{
	for (;;) {
		g_autoptr(JsonObject) st = test_status(agent, id);
		g_assert_cmpstr(json_object_get_string_member(st, "state"), ==, "running");
		if (strstr(json_object_get_string_member(st, "phase"), want) != NULL)
			return g_steal_pointer(&st);
		g_usleep(2000);
	}
}

static JsonObject *test_cancel_and_wait(AgentContext *agent, gint64 id)
{
	g_autoptr(GError) error = NULL;
	g_autofree char *json = g_strdup_printf("{\"job\": %" G_GINT64_FORMAT "}", id);
	g_autoptr(JsonNode) ret = test_call(agent, agent_cmd_bench_cancel, json, &error);

	g_assert_no_error(error);
	return test_wait(agent, id);
}

/* A live rate while a phase runs; a cancel keeps what finished, marked partial. */
static void test_job_partial(void)
{
	AgentContext agent = { .config = &test_config };
	g_autoptr(JsonObject) st = NULL;
	g_autoptr(JsonObject) running = NULL;
	JsonObject *result;
	JsonArray *metrics;
	gint64 id;
	gboolean rate_seen = FALSE;

	id = test_start(&agent, "{\"test\": \"aes\", \"params\": "
	                        "{\"seconds\": 1, \"sizes\": [16, 16384]}}");
	running = test_wait_phase(&agent, id, "16 bytes");
	for (guint i = 0; i < 200 && !rate_seen; i++) {
		g_autoptr(JsonObject) now = test_status(&agent, id);
		rate_seen = json_object_has_member(now, "rate");
		if (rate_seen) {
			g_assert_cmpfloat(json_object_get_double_member(now, "rate"), >, 0);
			g_assert_cmpstr(json_object_get_string_member(now, "rate_unit"), ==, "B/s");
		}
		g_usleep(10 * 1000);
	}
	g_assert_true(rate_seen);
	g_clear_pointer(&running, json_object_unref);
	running = test_wait_phase(&agent, id, "16384 bytes");
	st = test_cancel_and_wait(&agent, id);
	g_assert_cmpstr(json_object_get_string_member(st, "state"), ==, "cancelled");
	g_assert_false(json_object_has_member(st, "rate"));
	result = json_object_get_object_member(st, "result");
	g_assert_nonnull(result);
	g_assert_true(json_object_get_boolean_member(result, "partial"));
	g_assert_cmpint(json_object_get_int_member(result, "runs"), ==, 1);
	metrics = json_object_get_array_member(result, "metrics");
	g_assert_cmpint(json_array_get_length(metrics), ==, 1);
	g_assert_cmpstr(
	    json_object_get_string_member(
	        json_object_get_object_member(json_array_get_object_element(metrics, 0), "labels"),
	        "block_size"),
	    ==, "16");
	g_clear_pointer(&st, json_object_unref);
	g_clear_pointer(&running, json_object_unref);

	/* runs: the finished runs are the partial result, not the one cut short */
	id = test_start(&agent, "{\"test\": \"aes\", \"params\": "
	                        "{\"seconds\": 0.3, \"sizes\": [16, 64], \"runs\": 3}}");
	running = test_wait_phase(&agent, id, "run 2/3: aes-128-gcm 64");
	st = test_cancel_and_wait(&agent, id);
	result = json_object_get_object_member(st, "result");
	g_assert_true(json_object_get_boolean_member(result, "partial"));
	g_assert_cmpint(json_object_get_int_member(result, "runs"), ==, 1);
	g_assert_cmpint(json_array_get_length(json_object_get_array_member(result, "metrics")), ==,
	                2);
	agent_jobs_shutdown(&agent);
}

/*
 * Waits via gb-bench-list, which does not count as reading the result. How
 * long the job takes is not what is tested (under qemu-user on a loaded
 * machine it took over 15 s): meson's timeout is the bound.
 */
static void test_wait_unread(AgentContext *agent, gint64 id)
{
	for (;;) {
		g_autoptr(GError) error = NULL;
		g_autoptr(JsonNode) ret = test_call(agent, agent_cmd_bench_list, "{}", &error);
		JsonArray *jobs = json_object_get_array_member(json_node_get_object(ret), "jobs");
		for (guint j = 0; j < json_array_get_length(jobs); j++) {
			JsonObject *job = json_array_get_object_element(jobs, j);
			if (json_object_get_int_member(job, "job") == id &&
			    g_strcmp0(json_object_get_string_member(job, "state"), "running") != 0)
				return;
		}
		g_usleep(5000);
	}
}

static gboolean test_job_exists(AgentContext *agent, gint64 id)
{
	g_autoptr(GError) error = NULL;
	g_autofree char *json = g_strdup_printf("{\"job\": %" G_GINT64_FORMAT "}", id);
	g_autoptr(JsonNode) ret = test_call(agent, agent_cmd_bench_status, json, &error);
	if (ret == NULL) {
		g_autofree char *msg = g_strdup_printf("No such job: %" G_GINT64_FORMAT, id);
		g_assert_cmpstr(error->message, ==, msg);
		return FALSE;
	}
	return TRUE;
}

static void test_job_history(void)
{
	AgentContext agent = { .config = &test_config };
	const char *json = "{\"test\": \"aes\", \"params\": {\"seconds\": 0.1, \"sizes\": [16]}}";
	g_autoptr(GError) error = NULL;
	g_autoptr(JsonNode) list = NULL;
	gint64 last = AGENT_JOBS_HISTORY + 2;

	for (gint64 id = 1; id <= last; id++) {
		g_assert_cmpint(test_start(&agent, json), ==, id);
		if (id == 1) {
			g_autoptr(JsonObject) st = test_wait(&agent, id); /* read */
		} else {
			test_wait_unread(&agent, id);
		}
		if (id == 5) {
			g_autoptr(JsonObject) st = test_status(&agent, 5); /* read */
		}
	}
	/* job 1 (read) went first, then job 5 (read) rather than the older unread job 2 */
	list = test_call(&agent, agent_cmd_bench_list, NULL, &error);
	g_assert_no_error(error);
	g_assert_cmpint(
	    json_array_get_length(json_object_get_array_member(json_node_get_object(list), "jobs")),
	    ==, AGENT_JOBS_HISTORY);
	g_assert_false(test_job_exists(&agent, 1));
	g_assert_false(test_job_exists(&agent, 5));
	g_assert_true(test_job_exists(&agent, 2));
	g_assert_true(test_job_exists(&agent, 3));
	g_assert_true(test_job_exists(&agent, last));
	agent_jobs_shutdown(&agent);
}

/* A memfd holding text, as the resident process keeps the job history. */
static int test_state_fd(const char *text)
{
	int fd = memfd_create("test-jobs", MFD_CLOEXEC);

	g_assert_cmpint(fd, >=, 0);
	g_assert_cmpint(write(fd, text, strlen(text)), ==, (ssize_t)strlen(text));
	return fd;
}

/* What one session saves, the next one loads: the same status, list and next id. */
static void test_job_history_handover(void)
{
	AgentContext first = { .config = &test_config };
	AgentContext second = { .config = &test_config };
	const char *json = "{\"test\": \"aes\", \"params\": {\"seconds\": 0.1, \"sizes\": [16]}}";
	g_autoptr(GError) error = NULL;
	g_autoptr(JsonObject) done = NULL;
	g_autoptr(JsonObject) again = NULL;
	g_autofree char *result1 = NULL;
	g_autofree char *result2 = NULL;
	int fd = test_state_fd("");

	/* an empty history (the first session) is no error */
	g_assert_true(agent_jobs_load(&first, fd, &error));
	g_assert_no_error(error);
	g_assert_cmpint(test_start(&first, json), ==, 1);
	done = test_wait(&first, 1);
	g_assert_true(agent_jobs_save(&first, fd, &error));
	g_assert_no_error(error);
	agent_jobs_shutdown(&first);

	g_assert_true(agent_jobs_load(&second, fd, &error));
	g_assert_no_error(error);
	again = test_status(&second, 1);
	g_assert_cmpstr(json_object_get_string_member(again, "state"), ==, "done");
	g_assert_cmpstr(json_object_get_string_member(again, "test"), ==, "aes");
	result1 = gb_json_to_string(json_object_get_member(done, "result"), NULL);
	result2 = gb_json_to_string(json_object_get_member(again, "result"), NULL);
	g_assert_cmpstr(result1, ==, result2);
	g_assert_cmpint(test_start(&second, json), ==, 2);
	{
		g_autoptr(JsonObject) st = test_wait(&second, 2);
	}
	agent_jobs_shutdown(&second);
	close(fd);
}

/* A history that is not what a session wrote: an error that names what is wrong. */
static void test_job_history_bad(void)
{
	const struct {
		const char *text;
		const char *expect;
	} cases[] = {
		{ "not json", "job history" },
		{ "[]", "job history" },
		{ "{\"next_id\": 0, \"jobs\": []}", "next_id" },
		{ "{\"next_id\": 3}", "jobs" },
		{ "{\"next_id\": 3, \"jobs\": [1]}", "entry 0" },
		{ "{\"next_id\": 3, \"jobs\": [{\"job\": 1}]}", "test" },
		{ "{\"next_id\": 3, \"jobs\": [{\"job\": 1, \"test\": \"nope\", \"state\": "
		  "\"done\", \"progress\": 1, \"phase\": \"\", \"started_us\": 1, \"read\": "
		  "true}]}",
		  "unknown test 'nope'" },
		{ "{\"next_id\": 3, \"jobs\": [{\"job\": 1, \"test\": \"aes\", \"state\": "
		  "\"running\", \"progress\": 1, \"phase\": \"\", \"started_us\": 1, \"read\": "
		  "true}]}",
		  "not a finished one" },
		{ "{\"next_id\": 3, \"jobs\": [{\"job\": 1, \"test\": \"aes\", \"state\": "
		  "\"done\", \"progress\": 2, \"phase\": \"\", \"started_us\": 1, \"read\": "
		  "true}]}",
		  "progress" },
		{ "{\"next_id\": 3, \"jobs\": [{\"job\": 1, \"test\": \"aes\", \"state\": "
		  "\"done\", \"progress\": 1, \"phase\": \"\", \"started_us\": 1, \"read\": true, "
		  "\"extra\": 1}]}",
		  "extra" },
	};

	for (gsize i = 0; i < G_N_ELEMENTS(cases); i++) {
		AgentContext agent = { .config = &test_config };
		g_autoptr(GError) error = NULL;
		int fd = test_state_fd(cases[i].text);

		g_assert_false(agent_jobs_load(&agent, fd, &error));
		g_assert_nonnull(error);
		g_test_message("%s -> %s", cases[i].text, error->message);
		g_assert_nonnull(strstr(error->message, cases[i].expect));
		agent_jobs_shutdown(&agent);
		close(fd);
	}
}

static void test_job_bad_args(void)
{
	AgentContext agent = { .config = &test_config };
	struct {
		AgentCommandFunc func;
		const char *json;
		const char *expect;
	} cases[] = {
		{ agent_cmd_bench_start, NULL, "Parameter 'test' is missing" },
		{ agent_cmd_bench_start, "{}", "Parameter 'test' is missing" },
		{ agent_cmd_bench_start, "{\"test\": 1}", "'test'" },
		{ agent_cmd_bench_start, "{\"test\": \"gpu\"}",
		  "Unknown benchmark 'gpu' (known: aes, disk, mem, net)" },
		{ agent_cmd_bench_start, "{\"test\": \"aes\", \"x\": 1}",
		  "Parameter 'x' is unexpected" },
		{ agent_cmd_bench_start, "{\"test\": \"aes\", \"params\": []}", "'params'" },
		{ agent_cmd_bench_start, "{\"test\": \"aes\", \"params\": {\"runs\": 0}}",
		  "'runs'" },
		{ agent_cmd_bench_start, "{\"test\": \"aes\", \"params\": {\"runs\": 101}}",
		  "1..100" },
		{ agent_cmd_bench_start, "{\"test\": \"aes\", \"params\": {\"runs\": \"2\"}}",
		  "'runs'" },
		{ agent_cmd_bench_start, "{\"test\": \"aes\", \"params\": {\"dry_run\": 1}}",
		  "'dry_run'" },
		{ agent_cmd_bench_start, "{\"test\": \"aes\", \"params\": {\"seconds\": 0}}",
		  "'seconds'" },
		{ agent_cmd_bench_start,
		  "{\"test\": \"aes\", \"params\": {\"dry_run\": true, \"sizes\": [0]}}",
		  "'sizes" },
		{ agent_cmd_bench_start, "{\"test\": \"mem\", \"params\": {\"size\": 3}}",
		  "'size'" },
		{ agent_cmd_bench_status, NULL, "Parameter 'job' is missing" },
		{ agent_cmd_bench_status, "{\"job\": \"1\"}", "'job'" },
		{ agent_cmd_bench_status, "{\"job\": 0}", "'job'" },
		{ agent_cmd_bench_status, "{\"job\": 9}", "No such job: 9" },
		{ agent_cmd_bench_status, "{\"job\": 9, \"x\": 1}", "Parameter 'x' is unexpected" },
		{ agent_cmd_bench_cancel, "{\"job\": 9}", "No such job: 9" },
		{ agent_cmd_bench_cancel, "{\"job\": null}", "'job'" },
		{ agent_cmd_bench_list, "{\"x\": 1}", "Parameter 'x' is unexpected" },
	};

	for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
		g_autoptr(GError) error = NULL;
		g_autoptr(JsonNode) ret = test_call(&agent, cases[i].func, cases[i].json, &error);
		g_assert_null(ret);
		g_assert_nonnull(error);
		g_test_message("%s: %s", cases[i].json, error->message);
		g_assert_nonnull(strstr(error->message, cases[i].expect));
	}
	/* nothing was started by any of them */
	{
		g_autoptr(GError) error = NULL;
		g_autoptr(JsonNode) list = test_call(&agent, agent_cmd_bench_list, NULL, &error);
		g_assert_cmpint(json_array_get_length(json_object_get_array_member(
		                    json_node_get_object(list), "jobs")),
		                ==, 0);
	}
	agent_jobs_shutdown(&agent);
}

static void test_job_shutdown_running(void)
{
	AgentContext agent = { .config = &test_config };
	gint64 t0;

	test_start(&agent, "{\"test\": \"aes\", \"params\": {\"seconds\": 10, \"sizes\": [16]}}");
	g_usleep(50 * 1000);
	t0 = g_get_monotonic_time();
	agent_jobs_shutdown(&agent);
	g_assert_cmpint(g_get_monotonic_time() - t0, <, 1000 * 1000);
	g_assert_null(agent.jobs);
	/* shutting down twice, or with no jobs at all, is harmless */
	agent_jobs_shutdown(&agent);
}

static void test_job_mem(void)
{
	AgentContext agent = { .config = &test_config };
	g_autoptr(JsonObject) st = NULL;
	JsonObject *result;
	gint64 id;

	id = test_start(&agent, "{\"test\": \"mem\", \"params\": {\"size\": 16777216, "
	                        "\"pages\": [\"4k\", \"hugetlb\"], \"runs\": 2}}");
	st = test_wait(&agent, id);
	g_assert_cmpstr(json_object_get_string_member(st, "state"), ==, "done");
	result = json_object_get_object_member(st, "result");
	g_assert_cmpint(json_array_get_length(json_object_get_array_member(result, "metrics")), ==,
	                10);
	agent_jobs_shutdown(&agent);
}

/*
 * A cross build runs this test under qemu-user (gb-test-emulated.h), where a
 * spawned target binary does not start without binfmt_misc: the worker then
 * runs through the same wrapper as this test, from a script in dir.
 */
static char *test_wrap_worker(char **dir)
{
	const char *wrapper = g_getenv("MESON_EXE_WRAPPER");
	g_autoptr(GError) error = NULL;
	g_autofree char *script = NULL;
	char *path;

	if (g_strcmp0(g_getenv("GB_TEST_EMULATED"), "1") != 0 || wrapper == NULL ||
	    wrapper[0] == '\0')
		return NULL;
	*dir = g_dir_make_tmp("gb-bench-worker-XXXXXX", &error);
	g_assert_no_error(error);
	path = g_build_filename(*dir, "guestbench-agent-bench", NULL);
	/* meson quotes the wrapper for a shell; the worker's path has no quote */
	script = g_strdup_printf("#!/bin/sh\nexec %s '%s' \"$@\"\n", wrapper, GB_TEST_BENCH_WORKER);
	g_file_set_contents(path, script, -1, &error);
	g_assert_no_error(error);
	g_assert_cmpint(g_chmod(path, 0755), ==, 0);
	return path;
}

int main(int argc, char **argv)
{
	g_autofree char *wrap_dir = NULL;
	g_autofree char *wrapped = NULL;
	int status;

	g_test_init(&argc, &argv, NULL);
	wrapped = test_wrap_worker(&wrap_dir);
	if (wrapped != NULL)
		test_config.bench_worker = wrapped;
	g_test_add_func("/bench/job/lifecycle", test_job_lifecycle);
	g_test_add_func("/bench/job/busy-and-cancel", test_job_busy_and_cancel);
	g_test_add_func("/bench/job/runs", test_job_runs);
	g_test_add_func("/bench/job/partial", test_job_partial);
	g_test_add_func("/bench/job/history", test_job_history);
	g_test_add_func("/bench/job/history-handover", test_job_history_handover);
	g_test_add_func("/bench/job/history-bad", test_job_history_bad);
	g_test_add_func("/bench/job/bad-args", test_job_bad_args);
	g_test_add_func("/bench/job/shutdown-running", test_job_shutdown_running);
	g_test_add_func("/bench/job/mem", test_job_mem);
	status = g_test_run();
	if (wrapped != NULL) {
		g_unlink(wrapped);
		g_rmdir(wrap_dir);
	}
	return status;
}
