/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"

#include <errno.h>
#include <glib-unix.h>
#include <signal.h>
#include <sys/resource.h>
#include <stdio.h>
#include <unistd.h>

#include "gb-error.h"
#include "gb-json.h"

#include "fleet/runner.h"
#include "transport/qga.h"
#include "transport/reply-budget.h"
#include "analysis/units.h"
#include "render/escape.h"
#include "render/output.h"

/* Redraw the live progress line at most this often. */
#define CLI_RUNNER_PROGRESS_INTERVAL_MS 250

static void cli_runner_draw_progress(CliApp *app, gboolean final);

static void cli_guest_source_free(gpointer data)
{
	GSource *source = data;
	g_source_destroy(source);
	g_source_unref(source);
}

CliGuest *cli_guest_new(CliApp *app, const CliTarget *target, guint index)
{
	CliGuest *guest = g_new0(CliGuest, 1);
	guest->app = app;
	guest->target = target;
	guest->index = index;
	guest->status = CLI_GUEST_PENDING;
	guest->timers = g_ptr_array_new_with_free_func(cli_guest_source_free);
	return guest;
}

static void cli_guest_close_session(CliGuest *guest)
{
	if (guest->session != NULL) {
		cli_session_close(guest->session);
		guest->session = NULL;
	}
}

/* Everything that could call back into this guest goes away here. */
static void cli_guest_release(CliGuest *guest)
{
	if (guest->deadline != NULL) {
		cli_guest_source_free(guest->deadline);
		guest->deadline = NULL;
	}
	g_ptr_array_set_size(guest->timers, 0);
	cli_guest_close_session(guest);
	/* only once the connection is closed may the next client have the port */
	g_clear_pointer(&guest->lock, cli_lock_release);
	if (guest->data_destroy != NULL && guest->data != NULL)
		guest->data_destroy(guest->data);
	guest->data = NULL;
	guest->data_destroy = NULL;
}

void cli_guest_free(CliGuest *guest)
{
	if (guest == NULL)
		return;
	cli_guest_release(guest);
	g_ptr_array_unref(guest->timers);
	g_clear_error(&guest->cancel_reason);
	g_free(guest->error);
	g_free(guest->progress_text);
	g_free(guest->busy_holder);
	if (guest->result != NULL)
		json_node_unref(guest->result);
	cli_reply_budget_release(&guest->result_hold);
	g_free(guest);
}

gboolean cli_guest_is_done(const CliGuest *guest)
{
	return guest->status != CLI_GUEST_PENDING && guest->status != CLI_GUEST_RUNNING;
}

static void cli_guest_finish_as(CliGuest *guest, JsonNode *result, const GError *error,
                                CliGuestStatus status)
{
	g_autoptr(JsonNode) result_owned = result;
	g_autoptr(GError) error_reason = NULL;
	g_autoptr(GError) error_budget = NULL;
	CliApp *app = guest->app;

	if (cli_guest_is_done(guest)) {
		g_debug("%s: already finished", guest->target->name);
		return;
	}
	/* cancelled for the deadline: that is why it ended, and the cancel says how */
	if (guest->cancel_reason != NULL && error != NULL) {
		error_reason = g_error_new(GB_ERROR, guest->cancel_reason->code, "%s (%s)",
		                           guest->cancel_reason->message, error->message);
		error = error_reason;
	}
	/*
	 * The session's message still arriving gives back its hold first: the reply
	 * kept takes the guest's share.
	 */
	cli_guest_close_session(guest);
	/*
	 * Kept until the output is written, so it counts against the fleet's reply
	 * budget; one that does not fit is dropped here, and the guest fails (or keeps
	 * its own error).
	 */
	if (result_owned != NULL) {
		gsize values = 0;
		gsize text = gb_json_measure(result_owned, &values);
		guint64 cost = cli_reply_budget_cost(text, values);

		if (!cli_reply_budget_take(cost, &guest->result_hold,
		                           error == NULL ? &error_budget : NULL)) {
			g_clear_pointer(&result_owned, json_node_unref);
			if (error == NULL) {
				error = error_budget;
				status = CLI_GUEST_ERROR;
			}
		}
	}
	if (guest->status == CLI_GUEST_RUNNING && app->n_running > 0)
		app->n_running--;
	app->n_done++;
	guest->status = status;
	/* the text ends up in the JSON document, which must be valid UTF-8 */
	if (error != NULL)
		guest->error = g_utf8_make_valid(error->message, -1);
	/* a failing command may still hand over what it got (e.g. a partial result) */
	guest->result = g_steal_pointer(&result_owned);
	guest->finished_us = g_get_monotonic_time();
	/* raw: main.c's log writer escapes what it prints */
	g_debug("%s: %s%s%s", guest->target->name, cli_guest_status_to_string(guest->status),
	        error != NULL ? ": " : "", guest->error != NULL ? guest->error : "");
	cli_guest_release(guest);
	cli_runner_draw_progress(app, FALSE);
}

void cli_guest_finish(CliGuest *guest, JsonNode *result, const GError *error)
{
	CliGuestStatus status = CLI_GUEST_OK;

	if (error != NULL) {
		/* cancelled for the deadline: the guest timed out, whatever the cancel said */
		const GError *why = guest->cancel_reason != NULL ? guest->cancel_reason : error;

		status = g_error_matches(why, GB_ERROR, GB_ERROR_TIMEOUT) ? CLI_GUEST_TIMEOUT
		                                                          : CLI_GUEST_ERROR;
	}
	cli_guest_finish_as(guest, result, error, status);
}

void cli_guest_finish_busy(CliGuest *guest, const GError *error)
{
	cli_guest_finish_as(guest, NULL, error, CLI_GUEST_BUSY);
}

void cli_guest_set_data(CliGuest *guest, gpointer data, GDestroyNotify destroy)
{
	if (guest->data_destroy != NULL && guest->data != NULL)
		guest->data_destroy(guest->data);
	guest->data = data;
	guest->data_destroy = destroy;
}

gpointer cli_guest_get_data(CliGuest *guest)
{
	return guest->data;
}

void cli_guest_add_timeout(CliGuest *guest, guint interval_ms, GSourceFunc func, gpointer user_data)
{
	GSource *source;

	if (cli_guest_is_done(guest))
		return;
	/* drop timers that already fired for good, so that polling does not pile them up */
	for (guint i = guest->timers->len; i > 0; i--) {
		if (g_source_is_destroyed(g_ptr_array_index(guest->timers, i - 1)))
			g_ptr_array_remove_index_fast(guest->timers, i - 1);
	}
	source = g_timeout_source_new(interval_ms);
	g_source_set_callback(source, func, user_data, NULL);
	g_source_attach(source, guest->app->context);
	g_ptr_array_add(guest->timers, source);
}

static gboolean cli_guest_deadline_cb(gpointer user_data)
{
	CliGuest *guest = user_data;
	GSource *deadline = guest->deadline;
	g_autoptr(GError) error = NULL;
	g_autofree char *wait = NULL;

	/* a reply that came in time while the loop was busy elsewhere counts */
	if (guest->session != NULL) {
		cli_session_read_pending(guest->session);
		if (cli_guest_is_done(guest) || guest->deadline != deadline)
			return G_SOURCE_REMOVE;
	}
	if (guest->session != NULL)
		wait = cli_session_describe_wait(guest->session);
	if (guest->cancelling) {
		error = g_error_new(GB_ERROR, GB_ERROR_FAILED,
		                    guest->cancel_reason != NULL
		                        ? "cancelling took longer than %g s"
		                        : "interrupted (cancelling took longer than %g s)",
		                    CLI_CANCEL_GRACE_SECONDS);
	} else if (guest->target->vmid != 0 && guest->session != NULL &&
	           !cli_session_is_open(guest->session)) {
		/*
		 * A PVE VM's socket serves one client: PVE's backup freezes file
		 * systems through VMID.qga, qm and the API use it too. Silence before
		 * the session is open is that other client, or nothing in the guest.
		 */
		error = g_error_new(GB_ERROR, GB_ERROR_BUSY,
		                    "busy: %s did not answer within %g s: another client holds it "
		                    "(QEMU serves one at a time: a PVE backup, qm or the API), or "
		                    "nothing answers in the guest; try again later",
		                    guest->target->path, guest->deadline_seconds);
		cli_guest_finish_as(guest, NULL, error, CLI_GUEST_BUSY);
		return G_SOURCE_REMOVE;
	} else {
		error = g_error_new(GB_ERROR, GB_ERROR_TIMEOUT, "timed out after %g s%s%s",
		                    guest->deadline_seconds, wait != NULL ? " " : "",
		                    wait != NULL ? wait : "");
	}
	cli_guest_finish(guest, NULL, error);
	return G_SOURCE_REMOVE;
}

void cli_guest_set_deadline(CliGuest *guest, double seconds)
{
	/* after Ctrl-C the grace period is the deadline: a poll loop must not extend it */
	if (cli_guest_is_done(guest) || (guest->cancelling && guest->deadline != NULL))
		return;
	if (guest->deadline != NULL) {
		cli_guest_source_free(guest->deadline);
		guest->deadline = NULL;
	}
	guest->deadline_seconds = seconds;
	/* ms resolution; at least 1 ms so that a tiny timeout still runs the loop once */
	guest->deadline = g_timeout_source_new(MAX((guint)(seconds * 1000.0), 1));
	g_source_set_callback(guest->deadline, cli_guest_deadline_cb, guest, NULL);
	g_source_attach(guest->deadline, guest->app->context);
}

typedef struct {
	CliGuest *guest;
	double seconds;
	char *why;
} CliGuestBound;

static void cli_guest_bound_free(gpointer data)
{
	CliGuestBound *bound = data;

	g_free(bound->why);
	g_free(bound);
}

static gboolean cli_runner_cancel_guest(CliApp *app, CliGuest *guest, const GError *reason);

static gboolean cli_guest_bound_cb(gpointer user_data)
{
	CliGuestBound *bound = user_data;
	CliGuest *guest = bound->guest;
	g_autoptr(GError) error = NULL;

	/* already cancelling (Ctrl-C, --deadline): that cancel and its grace go on */
	if (cli_guest_is_done(guest) || guest->cancelling)
		return G_SOURCE_REMOVE;
	error =
	    g_error_new(GB_ERROR, GB_ERROR_TIMEOUT, "the job ran past its bound of %.0f s%s%s%s",
	                bound->seconds, bound->why != NULL ? " (" : "",
	                bound->why != NULL ? bound->why : "", bound->why != NULL ? ")" : "");
	if (!cli_runner_cancel_guest(guest->app, guest, error))
		cli_guest_finish(guest, NULL, error);
	return G_SOURCE_REMOVE;
}

void cli_guest_set_job_bound(CliGuest *guest, double seconds, const char *why)
{
	CliGuestBound *bound;
	GSource *source;

	if (cli_guest_is_done(guest))
		return;
	bound = g_new0(CliGuestBound, 1);
	bound->guest = guest;
	bound->seconds = seconds;
	bound->why = g_strdup(why);
	/* beyond what a timeout in ms holds (49 days), whole seconds */
	if (seconds * 1000.0 < (double)G_MAXUINT)
		source = g_timeout_source_new(MAX((guint)(seconds * 1000.0), 1));
	else
		source = g_timeout_source_new_seconds((guint)MIN(seconds, (double)G_MAXUINT));
	g_source_set_callback(source, cli_guest_bound_cb, bound, cli_guest_bound_free);
	g_source_attach(source, guest->app->context);
	/* removed with the guest's other timers when it finishes */
	g_ptr_array_add(guest->timers, source);
}

void cli_guest_set_progress(CliGuest *guest, double fraction, const char *text)
{
	g_free(guest->progress_text);
	guest->progress = CLAMP(fraction, 0.0, 1.0);
	guest->progress_text = text != NULL ? cli_escape_terminal(text) : NULL;
	cli_runner_draw_progress(guest->app, FALSE);
}

void cli_app_add_guests(CliApp *app)
{
	if (app->guests != NULL)
		return;
	app->guests = g_ptr_array_new_with_free_func((GDestroyNotify)cli_guest_free);
	for (guint i = 0; app->targets != NULL && i < app->targets->len; i++)
		g_ptr_array_add(app->guests,
		                cli_guest_new(app, g_ptr_array_index(app->targets, i), i));
}

/* Only on a TTY stderr, and -q means no chatter at all. */
static gboolean cli_runner_shows_progress(CliApp *app)
{
	return app->stderr_is_tty && !app->opts.quiet && app->guests != NULL;
}

/* ---- the per-hypervisor schedule (CliSchedule) ---- */

/* At most this many guests of one hypervisor at once: per_host, else --jobs. */
static guint cli_runner_per_host(CliApp *app)
{
	return app->schedule.per_host > 0 ? app->schedule.per_host : MAX(app->opts.jobs, 1);
}

/*
 * The rounds the schedule takes (its largest hypervisor's guests over per_host),
 * how many hypervisors there are, and the round the run is in (of the hypervisor
 * furthest on).
 */
static guint cli_runner_count_rounds(CliApp *app, guint *n_hypervisors, guint *round_now)
{
	g_autoptr(GHashTable) total = g_hash_table_new(g_str_hash, g_str_equal);
	g_autoptr(GHashTable) started = g_hash_table_new(g_str_hash, g_str_equal);
	guint per = cli_runner_per_host(app);
	guint most = 0;
	guint most_started = 0;

	for (guint i = 0; i < app->guests->len; i++) {
		const CliGuest *guest = g_ptr_array_index(app->guests, i);
		const char *hv = cli_target_get_hypervisor(guest->target);
		guint n = GPOINTER_TO_UINT(g_hash_table_lookup(total, hv)) + 1;

		g_hash_table_insert(total, (gpointer)hv, GUINT_TO_POINTER(n));
		most = MAX(most, n);
		if (guest->status != CLI_GUEST_PENDING) {
			n = GPOINTER_TO_UINT(g_hash_table_lookup(started, hv)) + 1;
			g_hash_table_insert(started, (gpointer)hv, GUINT_TO_POINTER(n));
			most_started = MAX(most_started, n);
		}
	}
	if (n_hypervisors != NULL)
		*n_hypervisors = g_hash_table_size(total);
	if (round_now != NULL)
		*round_now = (most_started + per - 1) / per;
	return (most + per - 1) / per;
}

/*
 * Before the run: how the guests are spread and how long that takes, from what one
 * guest's job asked for, e.g. "4 guests on 1 hypervisor, one at a time on each: 4
 * rounds of about 4 s, about 16 s in all".
 */
static void cli_runner_print_estimate(CliApp *app)
{
	const CliSchedule *sched = &app->schedule;
	g_autofree char *each = NULL;
	g_autofree char *all = NULL;
	g_autofree char *then = NULL;
	g_autofree char *how = NULL;
	guint n_hv = 0;
	guint rounds;

	/* one guest has nothing to schedule */
	if (sched->job_seconds <= 0 || app->opts.quiet || app->guests->len < 2)
		return;
	rounds = cli_runner_count_rounds(app, &n_hv, NULL);
	each = cli_format_duration(sched->job_seconds);
	all = cli_format_duration(rounds * sched->job_seconds + sched->then_seconds);
	if (sched->then_seconds > 0) {
		g_autofree char *more = cli_format_duration(sched->then_seconds);
		then = g_strdup_printf(", then all at once for about %s", more);
	}
	if (sched->per_host == 0)
		how = g_strdup("all at once on each");
	else if (sched->per_host == 1)
		how = g_strdup("one at a time on each");
	else
		how = g_strdup_printf("at most %u at a time on each", sched->per_host);
	fprintf(
	    stderr,
	    "%s%s%u guest%s on %u hypervisor%s, %s: %u round%s of about %s%s, about %s in all\n",
	    sched->pass != NULL ? sched->pass : "", sched->pass != NULL ? ": " : "",
	    app->guests->len, app->guests->len == 1 ? "" : "s", n_hv, n_hv == 1 ? "" : "s", how,
	    rounds, rounds == 1 ? "" : "s", each, then != NULL ? then : "", all);
	fflush(stderr);
}

static void cli_runner_draw_progress(CliApp *app, gboolean final)
{
	g_autoptr(GString) line = NULL;
	g_autofree char *fit = NULL;
	const CliGuest *latest = NULL;
	const CliGuest *slowest = NULL;
	guint n_failed = 0;
	gint64 now = g_get_monotonic_time();
	gsize columns;

	if (!cli_runner_shows_progress(app))
		return;
	if (final) {
		if (app->progress_visible)
			fputs("\r\033[K", stderr);
		app->progress_visible = FALSE;
		return;
	}
	if (now - app->progress_drawn_us < CLI_RUNNER_PROGRESS_INTERVAL_MS * 1000)
		return;
	app->progress_drawn_us = now;
	line = g_string_new(NULL);
	for (guint i = 0; i < app->guests->len; i++) {
		const CliGuest *guest = g_ptr_array_index(app->guests, i);
		if (guest->status == CLI_GUEST_ERROR || guest->status == CLI_GUEST_TIMEOUT ||
		    guest->status == CLI_GUEST_BUSY)
			n_failed++;
		if (guest->status != CLI_GUEST_RUNNING)
			continue;
		if (guest->progress_text != NULL)
			latest = guest;
		if (slowest == NULL || guest->started_us < slowest->started_us)
			slowest = guest;
	}
	/* one guest: its name and what it does, no fleet counts, no rounds */
	if (app->guests->len > 1 && app->schedule.per_host > 0) {
		guint round_now = 0;
		guint rounds = cli_runner_count_rounds(app, NULL, &round_now);

		g_string_append_printf(line, "round %u/%u, ", round_now, rounds);
	}
	if (app->guests->len > 1)
		g_string_append_printf(line, "%u/%u done, %u failed, %u running; ", app->n_done,
		                       app->guests->len, n_failed, app->n_running);
	/* the guest everyone is waiting for, when one is dragging on, named once */
	if (slowest != NULL && slowest != latest && now - slowest->started_us >= G_USEC_PER_SEC) {
		g_autofree char *name = cli_escape_terminal(slowest->target->name);
		g_string_append_printf(line, "%s%s (%.0f s); ",
		                       app->guests->len > 1 ? "slowest " : "", name,
		                       (now - slowest->started_us) / (double)G_USEC_PER_SEC);
	}
	/* one column short of the edge: an update rewrites this line and never wraps */
	columns = cli_output_terminal_columns(STDERR_FILENO);
	columns = columns > 1 ? columns - 1 : 1;
	if (latest != NULL) {
		g_autofree char *name = cli_escape_terminal(latest->target->name);
		gsize rest = cli_text_width(line->str) + 2 + cli_text_width(latest->progress_text);

		/* a long name gives way first (keeping its end, e.g. the socket's file name),
		 * so that the rate and the ETA stay in sight */
		if (rest + cli_text_width(name) > columns && rest + 12 <= columns) {
			g_autofree char *cut = cli_text_truncate_start(name, columns - rest);
			g_free(name);
			name = g_steal_pointer(&cut);
		}
		g_string_append_printf(line, "%s: %s", name, latest->progress_text);
	}
	if (line->len >= 2 && g_str_has_suffix(line->str, "; "))
		g_string_truncate(line, line->len - 2);
	fit = cli_text_truncate(line->str, columns);
	fprintf(stderr, "\r\033[K%s", fit);
	fflush(stderr);
	app->progress_visible = TRUE;
}

static gboolean cli_runner_progress_cb(gpointer user_data)
{
	cli_runner_draw_progress(user_data, FALSE);
	return G_SOURCE_CONTINUE;
}

static void cli_runner_open_cb(CliSession *session, const GError *error, gpointer user_data)
{
	CliGuest *guest = user_data;

	if (error != NULL) {
		cli_guest_finish(guest, NULL, error);
		return;
	}
	guest->app->command->start(guest, session);
}

/* A qga: guest runs each call as a process: show how long; a benchmark re-arms --timeout
 * (its job's bound, cli_guest_set_job_bound(), still ends it). */
static void cli_runner_session_wait_cb(CliSession *session, const char *execute, double elapsed,
                                       gboolean keepalive, gpointer user_data)
{
	CliGuest *guest = user_data;
	g_autofree char *text = g_strdup_printf("%s via qemu-ga, %.0f s", execute, elapsed);

	if (keepalive)
		cli_guest_set_deadline(guest, guest->app->opts.timeout);
	cli_guest_set_progress(guest, guest->progress, text);
}

static void cli_runner_connect(CliApp *app, CliGuest *guest, const CliAddress *address)
{
	/* one deadline for connect + sync + reply, from when the port is ours */
	cli_guest_set_deadline(guest, app->opts.timeout);
	guest->session =
	    cli_session_open(address, app->context, CLI_MAX_REPLY_SIZE, cli_runner_open_cb, guest);
	cli_session_set_wait_func(guest->session, cli_runner_session_wait_cb, guest);
}

static void cli_runner_lock_guest(CliApp *app, CliGuest *guest);

/*
 * flock(2) has no descriptor to wait on: while --wait-busy lasts, the lock is
 * tried again on a timer (the main loop keeps serving the other guests).
 */
#define CLI_RUNNER_BUSY_RETRY_MS 100

static gboolean cli_runner_lock_retry_cb(gpointer user_data)
{
	CliGuest *guest = user_data;

	cli_runner_lock_guest(guest->app, guest);
	return G_SOURCE_REMOVE;
}

/* Takes the guest's port for this process, then connects; or waits, or ends busy. */
static void cli_runner_lock_guest(CliApp *app, CliGuest *guest)
{
	g_autoptr(GError) error = NULL;
	g_autoptr(CliLockHolder) holder = NULL;
	g_autofree char *key = NULL;
	g_autofree char *who = NULL;
	CliAddress address;

	cli_target_get_address(guest->target, &address);
	if (app->lock_dir == NULL) {
		error = g_error_new(GB_ERROR, GB_ERROR_FAILED,
		                    "cannot coordinate with other guestbench processes: %s",
		                    app->lock_dir_error->message);
		cli_guest_finish(guest, NULL, error);
		return;
	}
	key = cli_lock_key_for_address(&address);
	guest->lock =
	    cli_lock_try(app->lock_dir, key, (const char *const *)app->argv, &holder, &error);
	if (guest->lock != NULL) {
		cli_runner_connect(app, guest, &address);
		return;
	}
	if (holder == NULL) {
		g_prefix_error(&error, "cannot lock the guest: ");
		cli_guest_finish(guest, NULL, error);
		return;
	}
	who = cli_lock_holder_describe(holder);
	if (g_get_monotonic_time() < guest->busy_until_us) {
		g_autofree char *text = g_strdup_printf("busy, waiting for %s", who);

		g_free(guest->busy_holder);
		guest->busy_holder = g_strdup(who);
		cli_guest_set_progress(guest, 0.0, text);
		cli_guest_add_timeout(guest, CLI_RUNNER_BUSY_RETRY_MS, cli_runner_lock_retry_cb,
		                      guest);
		return;
	}
	if (app->opts.wait_busy > 0)
		error = g_error_new(GB_ERROR, GB_ERROR_BUSY,
		                    "in use by %s; still after waiting %g s (--wait-busy)", who,
		                    app->opts.wait_busy);
	else
		error = g_error_new(
		    GB_ERROR, GB_ERROR_BUSY,
		    "in use by %s (one client at a time; --wait-busy SECONDS waits)", who);
	cli_guest_finish_as(guest, NULL, error, CLI_GUEST_BUSY);
}

static void cli_runner_start_guest(CliApp *app, CliGuest *guest)
{
	guest->status = CLI_GUEST_RUNNING;
	guest->started_us = g_get_monotonic_time();
	app->n_running++;
	/* e.g. a libvirt domain without the channel: its own error, nothing to connect to */
	if (guest->target->error != NULL) {
		g_autoptr(GError) error =
		    g_error_new_literal(GB_ERROR, GB_ERROR_FAILED, guest->target->error);
		cli_guest_finish(guest, NULL, error);
		return;
	}
	guest->busy_until_us = guest->started_us + (gint64)(app->opts.wait_busy * G_USEC_PER_SEC);
	cli_runner_lock_guest(app, guest);
}

/* With a per-hypervisor schedule: the next pending guests whose hypervisor has room. */
static void cli_runner_start_scheduled(CliApp *app)
{
	g_autoptr(GHashTable) running = g_hash_table_new(g_str_hash, g_str_equal);

	for (guint i = 0; i < app->guests->len; i++) {
		const CliGuest *guest = g_ptr_array_index(app->guests, i);
		const char *hv = cli_target_get_hypervisor(guest->target);

		if (guest->status == CLI_GUEST_RUNNING)
			g_hash_table_insert(
			    running, (gpointer)hv,
			    GUINT_TO_POINTER(GPOINTER_TO_UINT(g_hash_table_lookup(running, hv)) +
			                     1));
	}
	for (guint i = 0; i < app->guests->len && app->n_running < app->opts.jobs &&
	                  !g_cancellable_is_cancelled(app->cancellable);
	     i++) {
		CliGuest *guest = g_ptr_array_index(app->guests, i);
		const char *hv = cli_target_get_hypervisor(guest->target);
		guint n = GPOINTER_TO_UINT(g_hash_table_lookup(running, hv));

		if (guest->status != CLI_GUEST_PENDING || n >= app->schedule.per_host)
			continue;
		g_hash_table_insert(running, (gpointer)hv, GUINT_TO_POINTER(n + 1));
		app->n_started++;
		cli_runner_start_guest(app, guest);
	}
}

static void cli_runner_start_more(CliApp *app)
{
	if (app->schedule.per_host > 0) {
		cli_runner_start_scheduled(app);
		return;
	}
	while (app->n_running < app->opts.jobs && app->n_started < app->guests->len &&
	       !g_cancellable_is_cancelled(app->cancellable)) {
		CliGuest *guest = g_ptr_array_index(app->guests, app->n_started++);
		if (guest->status == CLI_GUEST_PENDING)
			cli_runner_start_guest(app, guest);
	}
}

guint cli_runner_get_concurrent(CliApp *app, const CliGuest *guest)
{
	const char *hv = cli_target_get_hypervisor(guest->target);
	guint most = 0;

	if (guest->started_us == 0)
		return 0;
	/* the most running at once is reached at one of their starts within this run */
	for (guint i = 0; i < app->guests->len; i++) {
		const CliGuest *at = g_ptr_array_index(app->guests, i);
		gint64 t = MAX(at->started_us, guest->started_us);
		guint n = 0;

		if (at->started_us == 0 ||
		    g_strcmp0(cli_target_get_hypervisor(at->target), hv) != 0 ||
		    t >= guest->finished_us || (at->finished_us != 0 && at->finished_us <= t))
			continue;
		for (guint j = 0; j < app->guests->len; j++) {
			const CliGuest *other = g_ptr_array_index(app->guests, j);

			if (other->started_us != 0 && other->started_us <= t &&
			    (other->finished_us == 0 || other->finished_us > t) &&
			    g_strcmp0(cli_target_get_hypervisor(other->target), hv) == 0)
				n++;
		}
		most = MAX(most, n);
	}
	return most;
}

GPtrArray *cli_runner_run_again(CliApp *app)
{
	GPtrArray *previous = g_steal_pointer(&app->guests);

	app->n_started = 0;
	app->n_running = 0;
	app->n_done = 0;
	cli_runner_run(app);
	return previous;
}

/*
 * Lets the command of a running guest cancel its work in the guest (a benchmark job)
 * within CLI_CANCEL_GRACE_SECONDS; reason (may be NULL) is what the guest then ends
 * with. FALSE when the command cannot: the caller ends the guest itself.
 */
static gboolean cli_runner_cancel_guest(CliApp *app, CliGuest *guest, const GError *reason)
{
	if (guest->cancelling || app->command->cancel == NULL || guest->session == NULL ||
	    !cli_session_is_open(guest->session))
		return FALSE;
	cli_guest_set_deadline(guest, CLI_CANCEL_GRACE_SECONDS);
	guest->cancelling = TRUE;
	if (reason != NULL)
		guest->cancel_reason = g_error_copy(reason);
	app->command->cancel(guest, guest->session);
	return TRUE;
}

static void cli_runner_interrupt(CliApp *app, int signum)
{
	gboolean force = app->signal_received != 0;
	const char *signame = signum == SIGINT ? "SIGINT" : "SIGTERM";

	if (app->signal_received == 0)
		app->signal_received = signum;
	g_cancellable_cancel(app->cancellable);
	for (guint i = 0; i < app->guests->len; i++) {
		CliGuest *guest = g_ptr_array_index(app->guests, i);
		g_autoptr(GError) error = NULL;

		if (guest->status == CLI_GUEST_PENDING) {
			error = g_error_new(GB_ERROR, GB_ERROR_FAILED,
			                    "not started (interrupted by %s)", signame);
			cli_guest_finish(guest, NULL, error);
			continue;
		}
		if (guest->status != CLI_GUEST_RUNNING)
			continue;
		/* the first signal lets a job be cancelled in the guest; a second one does not wait
		 */
		if (!force && cli_runner_cancel_guest(app, guest, NULL))
			continue;
		error = g_error_new(GB_ERROR, GB_ERROR_FAILED, "interrupted by %s", signame);
		cli_guest_finish(guest, NULL, error);
	}
}

/*
 * --deadline: whatever is not done by then ends now, except that a running job is
 * cancelled in the guest first, as on Ctrl-C; what is done keeps its result.
 */
static gboolean cli_runner_deadline_cb(gpointer user_data)
{
	CliApp *app = user_data;

	for (guint i = 0; i < app->guests->len; i++) {
		CliGuest *guest = g_ptr_array_index(app->guests, i);
		g_autoptr(GError) error = NULL;

		if (guest->status == CLI_GUEST_PENDING) {
			error = g_error_new_literal(GB_ERROR, GB_ERROR_FAILED,
			                            "not started (deadline)");
		} else if (guest->status == CLI_GUEST_RUNNING && guest->lock == NULL &&
		           guest->busy_holder != NULL) {
			/* still waiting for --wait-busy: it was busy all along, not slow */
			error = g_error_new(GB_ERROR, GB_ERROR_BUSY,
			                    "in use by %s; still at the overall deadline of %g s",
			                    guest->busy_holder, app->opts.deadline);
			cli_guest_finish_as(guest, NULL, error, CLI_GUEST_BUSY);
			continue;
		} else if (guest->status == CLI_GUEST_RUNNING) {
			error = g_error_new(GB_ERROR, GB_ERROR_TIMEOUT,
			                    "timed out: overall deadline of %g s reached",
			                    app->opts.deadline);
			if (cli_runner_cancel_guest(app, guest, error))
				continue;
		} else {
			continue;
		}
		cli_guest_finish(guest, NULL, error);
	}
	return G_SOURCE_REMOVE;
}

static gboolean cli_runner_sigint_cb(gpointer user_data)
{
	cli_runner_interrupt(user_data, SIGINT);
	return G_SOURCE_CONTINUE;
}

static gboolean cli_runner_sigterm_cb(gpointer user_data)
{
	cli_runner_interrupt(user_data, SIGTERM);
	return G_SOURCE_CONTINUE;
}

static GSource *cli_runner_attach(CliApp *app, GSource *source, GSourceFunc func)
{
	g_source_set_callback(source, func, app, NULL);
	g_source_attach(source, app->context);
	return source;
}

/* -j 1000 needs 1000 sockets: lift the soft fd limit towards the hard one if it is lower. */
static void cli_runner_raise_fd_limit(CliApp *app)
{
	struct rlimit rl;
	rlim_t want = (rlim_t)MIN(app->opts.jobs, app->guests->len) + 64;

	if (getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur >= want)
		return;
	rl.rlim_cur = rl.rlim_max == RLIM_INFINITY ? want : MIN(want, rl.rlim_max);
	if (setrlimit(RLIMIT_NOFILE, &rl) != 0)
		g_debug("cannot raise the open file limit: %s", g_strerror(errno));
}

void cli_runner_run(CliApp *app)
{
	g_autoptr(GPtrArray) sources = g_ptr_array_new_with_free_func(cli_guest_source_free);

	cli_app_add_guests(app);
	/* a later pass (bench --contention) shares what the first left */
	if (app->opts.reply_budget > 0)
		cli_reply_budget_set(app->opts.reply_budget, app->guests->len);
	cli_runner_raise_fd_limit(app);
	app->lock_dir = cli_lock_dir_open_default(&app->lock_dir_error);
	g_ptr_array_add(sources, cli_runner_attach(app, g_unix_signal_source_new(SIGINT),
	                                           cli_runner_sigint_cb));
	g_ptr_array_add(sources, cli_runner_attach(app, g_unix_signal_source_new(SIGTERM),
	                                           cli_runner_sigterm_cb));
	if (app->opts.deadline > 0) {
		g_ptr_array_add(
		    sources,
		    cli_runner_attach(
		        app, g_timeout_source_new(MAX((guint)(app->opts.deadline * 1000.0), 1)),
		        cli_runner_deadline_cb));
	}
	cli_runner_print_estimate(app);
	if (cli_runner_shows_progress(app)) {
		g_ptr_array_add(
		    sources,
		    cli_runner_attach(app, g_timeout_source_new(CLI_RUNNER_PROGRESS_INTERVAL_MS),
		                      cli_runner_progress_cb));
	}
	while (app->n_done < app->guests->len) {
		cli_runner_start_more(app);
		if (app->n_done >= app->guests->len)
			break;
		g_main_context_iteration(app->context, TRUE);
	}
	cli_runner_draw_progress(app, TRUE);
	g_clear_pointer(&app->lock_dir, cli_lock_dir_free);
	g_clear_error(&app->lock_dir_error);
}
