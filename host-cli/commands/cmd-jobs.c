/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * "guestbench jobs" and "guestbench cancel": the benchmark jobs an agent holds
 * (gb-bench-list) and stopping one (gb-bench-cancel), for a job whose CLI is
 * gone: killed, or on another terminal.
 */
#include "config.h"

#include <math.h>

#include "guestbench-protocol.h"

#include "commands/bench-args.h"
#include "commands/cmd-jobs.h"
#include "commands/commands.h"
#include "render/csv.h"

/* How often cancel looks whether the job has stopped (the agent: within 100 ms). */
#define CLI_CANCEL_POLL_MS 20

/* ---- a job's status, checked and rebuilt --------------------------------------------- */

/*
 * One job of gb-bench-list or gb-bench-status, rebuilt from checked members
 * only: {"job", "test", "state", "progress", "phase", "age" (null from an
 * agent that does not say), "error" when there is one}.
 */
static JsonNode *cli_jobs_parse_job(JsonNode *node, const char *what, GError **error)
{
	static const char *const states[] = { "running", "done", "failed", "cancelled", NULL };
	g_autoptr(JsonBuilder) builder = json_builder_new();
	JsonObject *obj = NULL;
	gint64 job = 0;
	const char *test = NULL;
	const char *state = NULL;
	const char *phase = NULL;
	const char *job_error = NULL;
	double progress = 0;
	double age = -1;

	if (!gb_json_node_get_object(node, what, &obj, error))
		return NULL;
	if (!gb_json_get_int(obj, "job", GB_JSON_REQUIRED, 1, G_MAXINT64, &job, error) ||
	    !gb_json_get_string(obj, "test", GB_JSON_REQUIRED, &test, error) ||
	    !gb_json_get_string(obj, "state", GB_JSON_REQUIRED, &state, error) ||
	    !gb_json_get_double(obj, "progress", GB_JSON_OPTIONAL, 0.0, 1.0, &progress, error) ||
	    !gb_json_get_string(obj, "phase", GB_JSON_OPTIONAL, &phase, error) ||
	    !gb_json_get_string(obj, "error", GB_JSON_OPTIONAL, &job_error, error) ||
	    !gb_json_get_double(obj, "age", GB_JSON_OPTIONAL, 0.0, G_MAXDOUBLE, &age, error)) {
		g_prefix_error(error, "%s: ", what);
		return NULL;
	}
	if (!g_strv_contains(states, state)) {
		g_set_error(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT, "%s: unknown state '%s'",
		            what, state);
		return NULL;
	}
	json_builder_begin_object(builder);
	json_builder_set_member_name(builder, "job");
	json_builder_add_int_value(builder, job);
	json_builder_set_member_name(builder, "test");
	json_builder_add_string_value(builder, test);
	json_builder_set_member_name(builder, "state");
	json_builder_add_string_value(builder, state);
	json_builder_set_member_name(builder, "progress");
	json_builder_add_double_value(builder, progress);
	json_builder_set_member_name(builder, "phase");
	json_builder_add_string_value(builder, phase != NULL ? phase : "");
	json_builder_set_member_name(builder, "age");
	if (gb_json_has(obj, "age"))
		json_builder_add_double_value(builder, age);
	else
		json_builder_add_null_value(builder);
	if (job_error != NULL) {
		json_builder_set_member_name(builder, "error");
		json_builder_add_string_value(builder, job_error);
	}
	json_builder_end_object(builder);
	return json_builder_get_root(builder);
}

/* Oldest first, as the agent lists them. */
JsonNode *cli_jobs_parse_list(JsonNode *ret, GError **error)
{
	JsonObject *obj = NULL;
	JsonArray *jobs = NULL;
	JsonArray *out = json_array_new();
	JsonObject *result = json_object_new();
	JsonNode *node = json_node_new(JSON_NODE_OBJECT);

	json_object_set_array_member(result, "jobs", out);
	json_node_take_object(node, result);
	if (!gb_json_node_get_object(ret, "return", &obj, error) ||
	    !gb_json_get_array(obj, "jobs", GB_JSON_REQUIRED, &jobs, error)) {
		json_node_unref(node);
		return NULL;
	}
	for (guint i = 0; i < json_array_get_length(jobs); i++) {
		g_autofree char *what = g_strdup_printf("jobs[%u]", i);
		JsonNode *job = cli_jobs_parse_job(json_array_get_element(jobs, i), what, error);

		if (job == NULL) {
			json_node_unref(node);
			return NULL;
		}
		json_array_add_element(out, job);
	}
	return node;
}

/* The jobs of an ok guest's result (ours, rebuilt above); NULL when there are none. */
static JsonArray *cli_jobs_of(const CliResult *guest)
{
	JsonObject *obj = NULL;
	JsonArray *jobs = NULL;

	if (guest->result == NULL ||
	    !gb_json_node_get_object(guest->result, "result", &obj, NULL) ||
	    !gb_json_get_array(obj, "jobs", GB_JSON_REQUIRED, &jobs, NULL) ||
	    json_array_get_length(jobs) == 0)
		return NULL;
	return jobs;
}

/* The cells of one job: its id, test, state, progress and age as text. */
typedef struct {
	char *job;
	const char *test;
	const char *state;
	const char *phase;
	const char *error;
	char *progress; /* "40%" */
	char *age;      /* "12 s", "3 min 05 s", "2 h 01 min"; "" when the agent does not say */
	double age_s;   /* -1 when unknown */
	double progress_fraction;
} CliJobCells;

static void cli_job_cells_clear(CliJobCells *cells)
{
	g_free(cells->job);
	g_free(cells->progress);
	g_free(cells->age);
}
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC(CliJobCells, cli_job_cells_clear)

static char *cli_jobs_format_age(double seconds)
{
	double s = floor(seconds);

	if (s < 60)
		return g_strdup_printf("%.0f s", s);
	if (s < 3600)
		return g_strdup_printf("%.0f min %02.0f s", floor(s / 60), fmod(s, 60));
	return g_strdup_printf("%.0f h %02.0f min", floor(s / 3600), floor(fmod(s, 3600) / 60));
}

static void cli_jobs_cells(JsonObject *job, CliJobCells *cells)
{
	gint64 id = 0;

	gb_json_get_int(job, "job", GB_JSON_REQUIRED, 1, G_MAXINT64, &id, NULL);
	gb_json_get_string(job, "test", GB_JSON_REQUIRED, &cells->test, NULL);
	gb_json_get_string(job, "state", GB_JSON_REQUIRED, &cells->state, NULL);
	gb_json_get_string(job, "phase", GB_JSON_OPTIONAL, &cells->phase, NULL);
	gb_json_get_string(job, "error", GB_JSON_OPTIONAL, &cells->error, NULL);
	cells->progress_fraction = 0;
	gb_json_get_double(job, "progress", GB_JSON_REQUIRED, 0.0, 1.0, &cells->progress_fraction,
	                   NULL);
	cells->age_s = -1;
	if (gb_json_has(job, "age"))
		gb_json_get_double(job, "age", GB_JSON_OPTIONAL, 0.0, G_MAXDOUBLE, &cells->age_s,
		                   NULL);
	cells->job = g_strdup_printf("%" G_GINT64_FORMAT, id);
	cells->progress = g_strdup_printf("%.0f%%", floor(cells->progress_fraction * 100.0));
	cells->age = cells->age_s >= 0 ? cli_jobs_format_age(cells->age_s) : g_strdup("");
}

/* ---- guestbench jobs ----------------------------------------------------------------- */

static void cli_jobs_reply_cb(CliSession *session, JsonNode *ret, const GError *error,
                              gpointer user_data)
{
	CliGuest *guest = user_data;
	g_autoptr(GError) error_local = NULL;
	JsonNode *result;

	if (error != NULL) {
		cli_guest_finish(guest, NULL, error);
		return;
	}
	result = cli_jobs_parse_list(ret, &error_local);
	if (result == NULL) {
		g_prefix_error(&error_local, "invalid gb-bench-list reply: ");
		cli_guest_finish(guest, NULL, error_local);
		return;
	}
	cli_guest_finish(guest, result, NULL);
}

static void cli_jobs_start(CliGuest *guest, CliSession *session)
{
	cli_session_call(session, "gb-bench-list", NULL, cli_jobs_reply_cb, guest);
}

static CliTable *cli_jobs_render_table(const CliResults *results)
{
	CliTable *table = cli_table_new("GUEST", "STATUS", "JOB", "TEST", "STATE", "PROGRESS",
	                                "AGE", "DETAIL", NULL);

	for (guint i = 0; i < results->guests->len; i++) {
		const CliResult *guest = g_ptr_array_index(results->guests, i);
		const char *status = cli_guest_status_to_string(guest->status);
		JsonArray *jobs = NULL;

		if (guest->status != CLI_GUEST_OK) {
			cli_table_add_row(table, guest->name, status, NULL, NULL, NULL, NULL, NULL,
			                  guest->error != NULL ? guest->error : "not run");
			continue;
		}
		jobs = cli_jobs_of(guest);
		if (jobs == NULL) {
			cli_table_add_row(table, guest->name, status, NULL, NULL, NULL, NULL, NULL,
			                  "no jobs");
			continue;
		}
		for (guint j = 0; j < json_array_get_length(jobs); j++) {
			g_auto(CliJobCells) cells = { 0 };

			cli_jobs_cells(json_array_get_object_element(jobs, j), &cells);
			cli_table_add_row(table, guest->name, status, cells.job, cells.test,
			                  cells.state, cells.progress, cells.age,
			                  cells.error != NULL ? cells.error : cells.phase);
		}
	}
	return table;
}

static void cli_jobs_csv_row(GString *out, const CliResult *guest, const CliJobCells *cells)
{
	cli_csv_append_field(out, guest->name);
	g_string_append_c(out, ',');
	cli_csv_append_field(out, guest->target);
	g_string_append_printf(out, ",%s,", cli_guest_status_to_string(guest->status));
	if (cells != NULL) {
		g_string_append_printf(out, "%s,", cells->job);
		cli_csv_append_field(out, cells->test);
		g_string_append_printf(out, ",%s,%g,", cells->state, cells->progress_fraction);
		if (cells->age_s >= 0)
			g_string_append_printf(out, "%.1f", cells->age_s);
		g_string_append_c(out, ',');
		cli_csv_append_text(out, cells->phase);
		g_string_append_c(out, ',');
		cli_csv_append_text(out, cells->error);
	} else {
		g_string_append(out, ",,,,,,");
		cli_csv_append_text(out, guest->error);
	}
	g_string_append_c(out, '\n');
}

/* One line per job; a guest without jobs, or that failed, one line with its status. */
static GString *cli_jobs_render_csv(const CliResults *results)
{
	GString *out =
	    g_string_new("guest,target,status,job,test,state,progress,age_seconds,phase,error\n");

	for (guint i = 0; i < results->guests->len; i++) {
		const CliResult *guest = g_ptr_array_index(results->guests, i);
		JsonArray *jobs = guest->status == CLI_GUEST_OK ? cli_jobs_of(guest) : NULL;

		if (jobs == NULL) {
			cli_jobs_csv_row(out, guest, NULL);
			continue;
		}
		for (guint j = 0; j < json_array_get_length(jobs); j++) {
			g_auto(CliJobCells) cells = { 0 };

			cli_jobs_cells(json_array_get_object_element(jobs, j), &cells);
			cli_jobs_csv_row(out, guest, &cells);
		}
	}
	return out;
}

const CliCommand cli_cmd_jobs = {
	.name = "jobs",
	.parameter_string = "jobs TARGET...",
	.summary = "The benchmark jobs each agent holds: test, state, progress, age",
	.description =
	    "Lists what gb-bench-list returns, oldest first: the running job (at most one) and\n"
	    "the last finished ones. AGE is how long ago the job started, by the guest's clock.\n"
	    "A job outlives the CLI that started it; 'guestbench cancel' stops it.\n"
	    "Through qga: each call is its own agent process, so no job is ever listed there.",
	.start = cli_jobs_start,
	.render_table = cli_jobs_render_table,
	.render_csv = cli_jobs_render_csv,
};

/* ---- guestbench cancel --------------------------------------------------------------- */

static char *cli_cancel_job_opt;
static gint64 cli_cancel_job; /* --job N, 0 for the running job */

static const GOptionEntry cli_cancel_entries[] = {
	{ "job", 0, 0, G_OPTION_ARG_STRING, &cli_cancel_job_opt,
	  "Cancel job N (as 'guestbench jobs' lists it) instead of the running one", "N" },
	{ NULL },
};

static gboolean cli_cancel_prepare(CliApp *app, GPtrArray *args, GError **error)
{
	guint64 job = 0;

	cli_cancel_job = 0;
	if (cli_cancel_job_opt == NULL)
		return TRUE;
	if (!cli_bench_parse_uint("job", cli_cancel_job_opt, 1, G_MAXINT64, &job, error))
		return FALSE;
	cli_cancel_job = (gint64)job;
	return TRUE;
}

static JsonObject *cli_cancel_job_args(gint64 job)
{
	JsonObject *args = json_object_new();

	json_object_set_int_member(args, "job", job);
	return args;
}

static void cli_cancel_poll(CliGuest *guest);

static gboolean cli_cancel_poll_cb(gpointer user_data)
{
	cli_cancel_poll(user_data);
	return G_SOURCE_REMOVE;
}

static void cli_cancel_status_cb(CliSession *session, JsonNode *ret, const GError *error,
                                 gpointer user_data)
{
	CliGuest *guest = user_data;
	g_autoptr(GError) error_local = NULL;
	g_autoptr(JsonNode) status = NULL;
	JsonObject *obj = NULL;
	const char *state = NULL;

	if (error != NULL) {
		cli_guest_finish(guest, NULL, error);
		return;
	}
	status = cli_jobs_parse_job(ret, "return", &error_local);
	if (status == NULL) {
		g_prefix_error(&error_local, "invalid gb-bench-status reply: ");
		cli_guest_finish(guest, NULL, error_local);
		return;
	}
	obj = json_node_get_object(status);
	gb_json_get_string(obj, "state", GB_JSON_REQUIRED, &state, NULL);
	if (g_strcmp0(state, "running") == 0) {
		cli_guest_add_timeout(guest, CLI_CANCEL_POLL_MS, cli_cancel_poll_cb, guest);
		return;
	}
	/* stopped: cancelled, or done/failed if it ended just before the cancel took */
	cli_guest_finish(guest, g_steal_pointer(&status), NULL);
}

static void cli_cancel_poll(CliGuest *guest)
{
	g_autoptr(JsonObject) args = NULL;
	gint64 *job = cli_guest_get_data(guest);

	if (guest->session == NULL || cli_guest_is_done(guest))
		return;
	args = cli_cancel_job_args(*job);
	cli_session_call(guest->session, "gb-bench-status", args, cli_cancel_status_cb, guest);
}

static void cli_cancel_reply_cb(CliSession *session, JsonNode *ret, const GError *error,
                                gpointer user_data)
{
	CliGuest *guest = user_data;

	if (error != NULL) {
		cli_guest_finish(guest, NULL, error);
		return;
	}
	/* the agent stops the job within 100 ms: report it once it has */
	cli_cancel_poll(guest);
}

static void cli_cancel_send(CliGuest *guest, CliSession *session, gint64 job)
{
	g_autoptr(JsonObject) args = cli_cancel_job_args(job);
	gint64 *data = g_new(gint64, 1);

	*data = job;
	cli_guest_set_data(guest, data, g_free);
	cli_session_call(session, "gb-bench-cancel", args, cli_cancel_reply_cb, guest);
}

/* Without --job: the running job, which gb-bench-list names. */
static void cli_cancel_list_cb(CliSession *session, JsonNode *ret, const GError *error,
                               gpointer user_data)
{
	CliGuest *guest = user_data;
	g_autoptr(GError) error_local = NULL;
	g_autoptr(JsonNode) list = NULL;
	JsonArray *jobs = NULL;

	if (error != NULL) {
		cli_guest_finish(guest, NULL, error);
		return;
	}
	list = cli_jobs_parse_list(ret, &error_local);
	if (list == NULL) {
		g_prefix_error(&error_local, "invalid gb-bench-list reply: ");
		cli_guest_finish(guest, NULL, error_local);
		return;
	}
	jobs = json_object_get_array_member(json_node_get_object(list), "jobs");
	for (guint i = 0; i < json_array_get_length(jobs); i++) {
		JsonObject *job = json_array_get_object_element(jobs, i);

		if (g_strcmp0(json_object_get_string_member(job, "state"), "running") == 0) {
			cli_cancel_send(guest, session, json_object_get_int_member(job, "job"));
			return;
		}
	}
	error_local = g_error_new_literal(GB_ERROR, GB_ERROR_FAILED, "no benchmark job is running");
	cli_guest_finish(guest, NULL, error_local);
}

static void cli_cancel_start(CliGuest *guest, CliSession *session)
{
	if (cli_cancel_job > 0) {
		cli_cancel_send(guest, session, cli_cancel_job);
		return;
	}
	cli_session_call(session, "gb-bench-list", NULL, cli_cancel_list_cb, guest);
}

/* "job 37 (aes) cancelled at 40%", or how it ended if it was quicker than the cancel. */
static char *cli_cancel_describe(const CliResult *guest)
{
	JsonObject *obj = NULL;
	g_auto(CliJobCells) cells = { 0 };

	if (!gb_json_node_get_object(guest->result, "result", &obj, NULL))
		return NULL;
	cli_jobs_cells(obj, &cells);
	if (g_strcmp0(cells.state, "cancelled") == 0)
		return g_strdup_printf("job %s (%s) cancelled at %s", cells.job, cells.test,
		                       cells.progress);
	return g_strdup_printf("job %s (%s) had already ended: %s", cells.job, cells.test,
	                       cells.state);
}

static GString *cli_cancel_render_csv(const CliResults *results)
{
	GString *out =
	    g_string_new("guest,target,status,job,test,state,progress,age_seconds,phase,error\n");

	for (guint i = 0; i < results->guests->len; i++) {
		const CliResult *guest = g_ptr_array_index(results->guests, i);
		JsonObject *obj = NULL;
		g_auto(CliJobCells) cells = { 0 };

		if (guest->status != CLI_GUEST_OK ||
		    !gb_json_node_get_object(guest->result, "result", &obj, NULL)) {
			cli_jobs_csv_row(out, guest, NULL);
			continue;
		}
		cli_jobs_cells(obj, &cells);
		cli_jobs_csv_row(out, guest, &cells);
	}
	return out;
}

const CliCommand cli_cmd_cancel = {
	.name = "cancel",
	.parameter_string = "cancel TARGET...",
	.summary = "Cancel the running benchmark job in each guest (or job N)",
	.description =
	    "Sends gb-bench-cancel for the running job (or --job N) and waits until the job\n"
	    "has stopped (the agent stops it within 100 ms). A guest with no job running, or\n"
	    "without job N, or whose job N has already finished, is an error of that guest\n"
	    "(exit status 3); a --job that is not a whole number from 1 is a usage error (2).",
	.entries = cli_cancel_entries,
	.prepare = cli_cancel_prepare,
	.start = cli_cancel_start,
	.describe = cli_cancel_describe,
	.render_csv = cli_cancel_render_csv,
};
