/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"

#include <gio/gio.h>
#include <signal.h>
#include <string.h>

#include "guestbench-protocol.h"

#include "transport/channel.h"
#include "transport/qga-exec.h"
#include "transport/qga.h"
#include "transport/reply-limit.h"
#include "transport/virt.h"

/* Room for the guest-exec-status envelope around the base64 output. */
#define CLI_QGA_ENVELOPE_SIZE (64 * 1024)
/* libvirt waits this long for qemu-ga per call (guest-exec, guest-exec-status answer at once). */
#define CLI_QGA_LIBVIRT_TIMEOUT_S 30

typedef enum {
	CLI_QGA_CONNECTING, /* connect + guest-sync-delimited (the inner session) */
	CLI_QGA_CHECKING,   /* guest-info */
	CLI_QGA_OPEN,
	CLI_QGA_FAILED,
	CLI_QGA_CLOSED,
} CliQgaState;

typedef struct {
	char *execute;
	JsonObject *arguments; /* a reference, NULL when none */
	CliSessionReplyFunc func;
	gpointer user_data;
} CliQgaCall;

typedef struct _CliQga CliQga;

static const CliSessionBackend cli_qga_backend;

struct _CliQga {
	CliSession parent; /* first: a CliQga is a CliSession */
	grefcount refcount;
	CliQgaState state;
	CliSession *inner; /* the session with qemu-ga, NULL through libvirt */
	/* libvirt:DOMAIN: each call is one virDomainQemuAgentCommand of uri (NULL: default) */
	char *domain;
	char *uri;
	CliVirtOp *op;      /* the call in progress through libvirt */
	CliVirtOp *kill_op; /* the call that signals a one-shot agent (cli_qga_interrupt()) */
	CliSessionReplyFunc libvirt_func;
	char *libvirt_execute;
	GMainContext *context;
	char *text;
	char *agent_path;
	gsize max_reply_size;
	GHashTable *reply_limits; /* the command's own (cli_reply_limit_set()), or NULL */
	CliSessionOpenFunc open_func;
	gpointer user_data;
	gboolean open_reported;
	CliSessionWaitFunc wait_func;
	gpointer wait_data;
	GQueue calls; /* CliQgaCall; the head is in progress when busy */
	gboolean busy;
	gint64 pid; /* the head's guest-exec pid, 0 until guest-exec answered */
	guint poll_ms;
	gint64 exec_started_us;
	GSource *poll_source;
	GSource *idle_source;
	GError *error;          /* why the session failed */
	GHashTable *jobs;       /* gint64 job id -> JsonNode, the final status of a one-shot job */
	gint64 interrupted_pid; /* the one-shot agent cli_qga_interrupt() sent SIGTERM */
	gboolean interrupt_wanted; /* interrupted before guest-exec said which pid to signal */
};

static void cli_qga_process_next(CliQga *qga);

static void cli_qga_call_free(CliQgaCall *call)
{
	g_free(call->execute);
	if (call->arguments != NULL)
		json_object_unref(call->arguments);
	g_free(call);
}

static CliQga *cli_qga_ref(CliQga *qga)
{
	g_ref_count_inc(&qga->refcount);
	return qga;
}

static void cli_qga_destroy_source(GSource **source)
{
	if (*source == NULL)
		return;
	g_source_destroy(*source);
	g_source_unref(*source);
	*source = NULL;
}

static void cli_qga_teardown(CliQga *qga)
{
	cli_qga_destroy_source(&qga->poll_source);
	/* a call through libvirt still under way reports to nobody */
	cli_virt_op_cancel(g_steal_pointer(&qga->op));
	cli_virt_op_cancel(g_steal_pointer(&qga->kill_op));
	if (qga->inner != NULL) {
		cli_channel_close(qga->inner);
		qga->inner = NULL;
	}
}

static void cli_qga_unref(CliQga *qga)
{
	CliQgaCall *call;

	if (!g_ref_count_dec(&qga->refcount))
		return;
	cli_qga_teardown(qga);
	cli_qga_destroy_source(&qga->idle_source);
	while ((call = g_queue_pop_head(&qga->calls)) != NULL)
		cli_qga_call_free(call);
	g_clear_error(&qga->error);
	g_hash_table_unref(qga->jobs);
	g_main_context_unref(qga->context);
	g_free(qga->text);
	g_free(qga->agent_path);
	if (qga->reply_limits != NULL)
		g_hash_table_unref(qga->reply_limits);
	g_free(qga->domain);
	g_free(qga->uri);
	g_free(qga->libvirt_execute);
	g_free(qga);
}

/* ---- the session -------------------------------------------------------------------- */

static gboolean cli_qga_notify_cb(gpointer user_data);

static void cli_qga_schedule_idle(CliQga *qga)
{
	if (qga->idle_source != NULL)
		return;
	qga->idle_source = g_idle_source_new();
	g_source_set_callback(qga->idle_source, cli_qga_notify_cb, qga, NULL);
	g_source_attach(qga->idle_source, qga->context);
}

/* Takes ownership of error: qemu-ga is gone or speaks nonsense, every call fails. */
static void cli_qga_fail(CliQga *qga, GError *error)
{
	if (qga->state == CLI_QGA_FAILED || qga->state == CLI_QGA_CLOSED) {
		g_error_free(error);
		return;
	}
	g_debug("%s: %s", qga->text, error->message);
	cli_qga_teardown(qga);
	qga->state = CLI_QGA_FAILED;
	qga->error = error;
	qga->busy = FALSE;
	qga->pid = 0;
	cli_qga_schedule_idle(qga);
}

static gboolean cli_qga_is_local_job_call(CliQga *qga, CliQgaCall *call, gint64 *job)
{
	if (g_strcmp0(call->execute, "gb-bench-status") != 0 &&
	    g_strcmp0(call->execute, "gb-bench-cancel") != 0)
		return FALSE;
	if (!gb_json_get_int(call->arguments, "job", GB_JSON_REQUIRED, 1, G_MAXINT64, job, NULL))
		return FALSE;
	return g_hash_table_contains(qga->jobs, job);
}

/* Ends the call in progress; ret and error are owned. Callers hold a reference. */
static void cli_qga_finish_head(CliQga *qga, JsonNode *ret_owned, GError *error_owned)
{
	g_autoptr(JsonNode) ret = ret_owned;
	g_autoptr(GError) error = error_owned;
	CliQgaCall *call = g_queue_pop_head(&qga->calls);

	qga->busy = FALSE;
	qga->pid = 0;
	qga->interrupt_wanted = FALSE;
	cli_qga_destroy_source(&qga->poll_source);
	if (call == NULL)
		return;
	call->func(&qga->parent, error == NULL ? ret : NULL, error, call->user_data);
	cli_qga_call_free(call);
	if (qga->state == CLI_QGA_OPEN)
		cli_qga_process_next(qga);
}

/* The one-shot job's final status answers the poll that commands send after a start. */
static void cli_qga_answer_local(CliQga *qga)
{
	CliQgaCall *call = g_queue_peek_head(&qga->calls);
	gint64 job = 0;
	JsonNode *status;

	if (!cli_qga_is_local_job_call(qga, call, &job))
		return;
	status = g_hash_table_lookup(qga->jobs, &job);
	if (g_strcmp0(call->execute, "gb-bench-status") == 0) {
		cli_qga_finish_head(qga, json_node_copy(status), NULL);
		return;
	}
	/* what the agent answers for a job that has already finished */
	cli_qga_finish_head(
	    qga, NULL,
	    g_error_new(GB_ERROR, GB_ERROR_REMOTE,
	                "gb-bench-cancel: Job %" G_GINT64_FORMAT " has already finished", job));
}

static gboolean cli_qga_notify_cb(gpointer user_data)
{
	CliQga *qga = user_data;
	CliQgaCall *call;
	GQueue calls = G_QUEUE_INIT;

	g_source_unref(qga->idle_source);
	qga->idle_source = NULL;
	cli_qga_ref(qga);
	if (qga->state == CLI_QGA_OPEN && qga->busy) {
		cli_qga_answer_local(qga);
	} else if (qga->state == CLI_QGA_FAILED) {
		if (!qga->open_reported) {
			qga->open_reported = TRUE;
			if (qga->open_func != NULL)
				qga->open_func(&qga->parent, qga->error, qga->user_data);
		}
		/* calls queued from inside these callbacks are answered on the next round */
		while ((call = g_queue_pop_head(&qga->calls)) != NULL)
			g_queue_push_tail(&calls, call);
		while ((call = g_queue_pop_head(&calls)) != NULL) {
			if (qga->state == CLI_QGA_FAILED)
				call->func(&qga->parent, NULL, qga->error, call->user_data);
			cli_qga_call_free(call);
		}
	}
	cli_qga_unref(qga);
	return G_SOURCE_REMOVE;
}

static void cli_qga_libvirt_done_cb(const char *reply, const GError *op_error, gpointer user_data)
{
	CliQga *qga = cli_qga_ref(user_data);
	g_autoptr(GError) error = NULL;
	g_autoptr(JsonNode) ret = NULL;
	g_autofree char *execute = g_steal_pointer(&qga->libvirt_execute);

	qga->op = NULL;
	if (qga->state == CLI_QGA_CLOSED || qga->state == CLI_QGA_FAILED) {
		cli_qga_unref(qga);
		return;
	}
	if (op_error != NULL) {
		/* libvirt says why: the agent is not connected, or the command failed */
		error =
		    g_error_new(GB_ERROR, GB_ERROR_REMOTE, "%s: %s", execute, op_error->message);
	} else {
		/* libvirt answers with the agent's reply line; it rewrites the id */
		ret = gb_reply_parse(reply, strlen(reply), NULL, &error);
		if (ret == NULL)
			g_prefix_error(&error, "%s: ", execute);
	}
	qga->libvirt_func(NULL, ret, error, qga);
	cli_qga_unref(qga);
}

/* A request as one line for libvirt, which adds nothing but its own id. */
static char *cli_qga_request_line(const char *execute, JsonObject *args)
{
	g_autoptr(GString) line = gb_request_build(execute, args, NULL);

	g_strstrip(line->str);
	return g_strdup(line->str);
}

/* One call to qemu-ga: over its socket, or through libvirt for a libvirt domain. */
static void cli_qga_raw_call(CliQga *qga, const char *execute, JsonObject *args,
                             CliSessionReplyFunc func)
{
	g_autofree char *line = NULL;

	if (qga->domain == NULL) {
		cli_channel_call(qga->inner, execute, args, func, qga);
		return;
	}
	line = cli_qga_request_line(execute, args);
	qga->libvirt_func = func;
	g_free(qga->libvirt_execute);
	qga->libvirt_execute = g_strdup(execute);
	/* libvirt's own bound; the owner's deadline closes the session before it if shorter */
	qga->op = cli_virt_agent_command(qga->uri, qga->domain, line, CLI_QGA_LIBVIRT_TIMEOUT_S,
	                                 qga->context, cli_qga_libvirt_done_cb, qga);
}

/* An error from the inner session: a remote error reply, or the end of the session. */
static gboolean cli_qga_inner_failed(CliQga *qga, const GError *error)
{
	/* through libvirt every call stands alone: its error is that call's */
	if (qga->domain != NULL)
		return FALSE;
	if (qga->inner != NULL && cli_channel_is_open(qga->inner))
		return FALSE;
	cli_qga_fail(qga, g_error_copy(error));
	return TRUE;
}

static void cli_qga_arm_poll(CliQga *qga);
static void cli_qga_interrupt(CliSession *session);

static void cli_qga_status_cb(CliSession *inner, JsonNode *ret, const GError *error,
                              gpointer user_data)
{
	CliQga *qga = user_data;
	CliQgaCall *call = g_queue_peek_head(&qga->calls);
	g_autoptr(CliQgaExecStatus) status = NULL;
	g_autoptr(GError) error_local = NULL;
	JsonNode *reply;

	if (error != NULL) {
		if (cli_qga_inner_failed(qga, error))
			return;
		cli_qga_ref(qga);
		cli_qga_finish_head(qga, NULL, g_error_copy(error));
		cli_qga_unref(qga);
		return;
	}
	status = cli_qga_parse_exec_status(ret, &error_local);
	if (status == NULL) {
		g_prefix_error(&error_local, "invalid guest-exec-status reply: ");
		cli_qga_fail(qga, g_steal_pointer(&error_local));
		return;
	}
	if (!status->exited) {
		double elapsed = (g_get_monotonic_time() - qga->exec_started_us) / 1e6;
		/* a benchmark may run for minutes: each answer shows the guest still works */
		gboolean keepalive = g_strcmp0(call->execute, "gb-bench-start") == 0;

		cli_qga_ref(qga);
		if (qga->wait_func != NULL)
			qga->wait_func(&qga->parent, call->execute, elapsed, keepalive,
			               qga->wait_data);
		if (qga->state == CLI_QGA_OPEN)
			cli_qga_arm_poll(qga);
		cli_qga_unref(qga);
		return;
	}
	if (status->signal == SIGTERM && qga->pid == qga->interrupted_pid &&
	    g_strcmp0(call->execute, "gb-bench-start") == 0) {
		/* our SIGTERM came before the agent was ready to turn it into a cancel */
		cli_qga_ref(qga);
		cli_qga_finish_head(qga, NULL,
		                    g_error_new_literal(GB_ERROR, GB_ERROR_FAILED,
		                                        "cancelled (before the job had started)"));
		cli_qga_unref(qga);
		return;
	}
	/* a one-shot gb-bench-start prints the job's final status, result and all */
	reply = cli_qga_decode_reply(
	    status, call->execute, qga->agent_path,
	    cli_reply_limit_lookup(
	        qga->reply_limits,
	        g_strcmp0(call->execute, "gb-bench-start") == 0 ? "gb-bench-status" : call->execute,
	        qga->max_reply_size),
	    &error_local);
	if (reply != NULL && g_strcmp0(call->execute, "gb-bench-start") == 0) {
		gint64 job = 0;

		/* the job's final status answers the polls that follow (cli_qga_answer_local) */
		if (!cli_qga_check_final_status(reply, &job, &error_local))
			g_clear_pointer(&reply, json_node_unref);
		else if (job > 0)
			g_hash_table_insert(qga->jobs, g_memdup2(&job, sizeof(job)),
			                    json_node_copy(reply));
	}
	cli_qga_ref(qga);
	cli_qga_finish_head(qga, reply, g_steal_pointer(&error_local));
	cli_qga_unref(qga);
}

static gboolean cli_qga_poll_cb(gpointer user_data)
{
	CliQga *qga = user_data;
	g_autoptr(JsonObject) args = json_object_new();

	g_source_unref(qga->poll_source);
	qga->poll_source = NULL;
	json_object_set_int_member(args, "pid", qga->pid);
	cli_qga_raw_call(qga, "guest-exec-status", args, cli_qga_status_cb);
	return G_SOURCE_REMOVE;
}

static void cli_qga_arm_poll(CliQga *qga)
{
	cli_qga_destroy_source(&qga->poll_source);
	qga->poll_source = g_timeout_source_new(qga->poll_ms);
	g_source_set_callback(qga->poll_source, cli_qga_poll_cb, qga, NULL);
	g_source_attach(qga->poll_source, qga->context);
	qga->poll_ms = MIN(qga->poll_ms * 2, CLI_QGA_POLL_MAX_MS);
}

static void cli_qga_exec_cb(CliSession *inner, JsonNode *ret, const GError *error,
                            gpointer user_data)
{
	CliQga *qga = user_data;
	g_autoptr(GError) error_local = NULL;
	JsonObject *obj = NULL;

	if (error != NULL) {
		if (cli_qga_inner_failed(qga, error))
			return;
		cli_qga_ref(qga);
		cli_qga_finish_head(qga, NULL, cli_qga_exec_error(error, qga->agent_path));
		cli_qga_unref(qga);
		return;
	}
	if (!gb_json_node_get_object(ret, "guest-exec reply", &obj, &error_local) ||
	    !gb_json_get_int(obj, "pid", GB_JSON_REQUIRED, 1, G_MAXINT64, &qga->pid,
	                     &error_local)) {
		g_prefix_error(&error_local, "invalid guest-exec reply: ");
		cli_qga_fail(qga, g_steal_pointer(&error_local));
		return;
	}
	qga->poll_ms = CLI_QGA_POLL_FIRST_MS;
	cli_qga_arm_poll(qga);
	/* Ctrl-C came while qemu-ga was starting the agent: now there is a pid to signal */
	if (qga->interrupt_wanted) {
		qga->interrupt_wanted = FALSE;
		cli_qga_interrupt(&qga->parent);
	}
}

static void cli_qga_process_next(CliQga *qga)
{
	CliQgaCall *call;
	g_autoptr(JsonObject) args = NULL;
	gint64 job = 0;

	if (qga->state != CLI_QGA_OPEN || qga->busy)
		return;
	call = g_queue_peek_head(&qga->calls);
	if (call == NULL)
		return;
	qga->busy = TRUE;
	qga->pid = 0;
	qga->exec_started_us = g_get_monotonic_time();
	if (cli_qga_is_local_job_call(qga, call, &job)) {
		/* from the main loop: callbacks never run inside cli_session_call() */
		cli_qga_schedule_idle(qga);
		return;
	}
	args = cli_qga_build_exec_args(qga->agent_path, call->execute, call->arguments);
	g_debug("%s: %s through guest-exec of %s", qga->text, call->execute, qga->agent_path);
	cli_qga_raw_call(qga, "guest-exec", args, cli_qga_exec_cb);
}

static void cli_qga_info_cb(CliSession *inner, JsonNode *ret, const GError *error,
                            gpointer user_data)
{
	CliQga *qga = user_data;
	g_autoptr(GError) error_local = NULL;

	if (error != NULL) {
		cli_qga_fail(qga, g_error_copy(error));
		return;
	}
	if (!cli_qga_check_info(ret, &error_local)) {
		cli_qga_fail(qga, g_steal_pointer(&error_local));
		return;
	}
	qga->state = CLI_QGA_OPEN;
	qga->open_reported = TRUE;
	cli_qga_ref(qga);
	if (qga->open_func != NULL)
		qga->open_func(&qga->parent, NULL, qga->user_data);
	cli_qga_process_next(qga);
	cli_qga_unref(qga);
}

static void cli_qga_inner_open_cb(CliSession *inner, const GError *error, gpointer user_data)
{
	CliQga *qga = user_data;

	if (error != NULL) {
		cli_qga_fail(qga, g_error_copy(error));
		return;
	}
	qga->state = CLI_QGA_CHECKING;
	cli_qga_raw_call(qga, "guest-info", NULL, cli_qga_info_cb);
}

CliSession *cli_qga_open(const CliAddress *address, GMainContext *context, gsize max_reply_size,
                         CliSessionOpenFunc open_func, gpointer user_data)
{
	CliQga *qga = g_new0(CliQga, 1);
	/* the inner session is a plain one to qemu-ga's socket */
	CliAddress inner = {
		.kind = CLI_ADDRESS_UNIX,
		.text = address->text,
		.path = address->path,
	};

	qga->parent.backend = &cli_qga_backend;
	g_ref_count_init(&qga->refcount);
	qga->state = CLI_QGA_CONNECTING;
	qga->context = g_main_context_ref(context);
	qga->text = g_strdup(address->text);
	qga->agent_path = g_strdup(cli_qga_get_agent_path(address));
	qga->max_reply_size = max_reply_size;
	qga->open_func = open_func;
	qga->user_data = user_data;
	g_queue_init(&qga->calls);
	qga->jobs = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free,
	                                  (GDestroyNotify)json_node_unref);
	if (address->kind == CLI_ADDRESS_QGA_DOMAIN) {
		qga->domain = g_strdup(address->domain);
		qga->uri = g_strdup(address->uri);
		qga->state = CLI_QGA_CHECKING;
		cli_qga_raw_call(qga, "guest-info", NULL, cli_qga_info_cb);
		return &qga->parent;
	}
	/* guest-exec-status carries the output in base64: 4/3 of the reply, plus its envelope */
	qga->inner =
	    cli_channel_open(&inner, context, max_reply_size / 3 * 4 + 4 + CLI_QGA_ENVELOPE_SIZE,
	                     cli_qga_inner_open_cb, qga);
	return &qga->parent;
}

static void cli_qga_call(CliSession *session, const char *execute, JsonObject *arguments,
                         CliSessionReplyFunc func, gpointer user_data)
{
	CliQga *qga = (CliQga *)session;
	CliQgaCall *call;

	if (qga->state == CLI_QGA_CLOSED)
		return;
	call = g_new0(CliQgaCall, 1);
	call->execute = g_strdup(execute);
	call->arguments = arguments != NULL ? json_object_ref(arguments) : NULL;
	call->func = func;
	call->user_data = user_data;
	g_queue_push_tail(&qga->calls, call);
	if (qga->state == CLI_QGA_FAILED) {
		cli_qga_schedule_idle(qga);
		return;
	}
	cli_qga_process_next(qga);
}

static void cli_qga_kill_cb(CliSession *inner, JsonNode *ret, const GError *error,
                            gpointer user_data)
{
	CliQga *qga = user_data;

	/* the signal is sent: look at the agent soon rather than at the next slow poll
	 * (now when no poll is on the wire, one guest-exec-status at a time; else right
	 * after the one that is) */
	if (qga->state != CLI_QGA_OPEN || !qga->busy || qga->pid != qga->interrupted_pid)
		return;
	qga->poll_ms = CLI_QGA_POLL_FIRST_MS;
	if (qga->poll_source != NULL)
		cli_qga_arm_poll(qga);
}

/* Through libvirt the signal goes beside the call that is polling: libvirt queues both. */
static void cli_qga_kill_libvirt_cb(const char *reply, const GError *error, gpointer user_data)
{
	CliQga *qga = user_data;

	qga->kill_op = NULL;
	if (error != NULL)
		g_debug("%s: signalling the one-shot agent through libvirt failed: %s", qga->text,
		        error->message);
	cli_qga_kill_cb(NULL, NULL, error, qga);
}

static void cli_qga_interrupt(CliSession *session)
{
	CliQga *qga = (CliQga *)session;
	CliQgaCall *call = g_queue_peek_head(&qga->calls);
	g_autoptr(JsonObject) args = NULL;
	g_autofree char *line = NULL;
	JsonArray *argv;
	char pid[24];

	if (qga->state != CLI_QGA_OPEN || !qga->busy || call == NULL ||
	    g_strcmp0(call->execute, "gb-bench-start") != 0)
		return;
	if (qga->pid <= 0) {
		qga->interrupt_wanted = TRUE;
		return;
	}
	if (qga->interrupted_pid == qga->pid)
		return;
	qga->interrupted_pid = qga->pid;
	g_snprintf(pid, sizeof(pid), "%" G_GINT64_FORMAT, qga->pid);
	args = json_object_new();
	/* kill is a builtin of every sh: nothing else needs to be installed */
	json_object_set_string_member(args, "path", "/bin/sh");
	argv = json_array_new();
	json_array_add_string_element(argv, "-c");
	json_array_add_string_element(argv, "kill -TERM \"$1\"");
	json_array_add_string_element(argv, "sh");
	json_array_add_string_element(argv, pid);
	json_object_set_array_member(args, "arg", argv);
	if (qga->domain == NULL) {
		cli_channel_call(qga->inner, "guest-exec", args, cli_qga_kill_cb, qga);
		return;
	}
	line = cli_qga_request_line("guest-exec", args);
	cli_virt_op_cancel(qga->kill_op);
	qga->kill_op =
	    cli_virt_agent_command(qga->uri, qga->domain, line, CLI_QGA_LIBVIRT_TIMEOUT_S,
	                           qga->context, cli_qga_kill_libvirt_cb, qga);
}

static gboolean cli_qga_is_open(const CliSession *session)
{
	const CliQga *qga = (const CliQga *)session;

	return qga->state == CLI_QGA_OPEN;
}

static char *cli_qga_describe_wait(const CliSession *session)
{
	const CliQga *qga = (const CliQga *)session;
	CliQgaCall *call = g_queue_peek_head((GQueue *)&qga->calls);
	g_autofree char *inner = NULL;

	switch (qga->state) {
	case CLI_QGA_CONNECTING:
	case CLI_QGA_CHECKING:
		if (qga->inner == NULL)
			return g_strdup_printf("waiting for guest-info from qemu-ga of libvirt "
			                       "domain '%s'",
			                       qga->domain);
		inner = cli_channel_describe_wait(qga->inner);
		return g_strdup_printf("%s (qemu-ga)", inner);
	case CLI_QGA_OPEN:
		if (call == NULL || !qga->busy)
			return g_strdup("waiting for nothing (qemu-ga)");
		if (qga->pid == 0)
			return g_strdup_printf("waiting for qemu-ga to start %s for %s",
			                       qga->agent_path, call->execute);
		return g_strdup_printf(
		    "waiting for %s through qemu-ga (%s, guest pid %" G_GINT64_FORMAT
		    ", running %.1f s)",
		    call->execute, qga->agent_path, qga->pid,
		    (g_get_monotonic_time() - qga->exec_started_us) / 1e6);
	case CLI_QGA_FAILED:
		return g_strdup(qga->error->message);
	case CLI_QGA_CLOSED:
	default:
		break;
	}
	return g_strdup("closed");
}

static void cli_qga_set_wait_func(CliSession *session, CliSessionWaitFunc func, gpointer user_data)
{
	CliQga *qga = (CliQga *)session;

	qga->wait_func = func;
	qga->wait_data = user_data;
}

/* What qemu-ga sent and the loop has not read: a guest-exec-status may be there. */
static void cli_qga_read_pending(CliSession *session)
{
	CliQga *qga = (CliQga *)session;

	if (qga->inner == NULL)
		return;
	cli_qga_ref(qga);
	cli_channel_read_pending(qga->inner);
	cli_qga_unref(qga);
}

static void cli_qga_close(CliSession *session)
{
	CliQga *qga = (CliQga *)session;
	CliQgaCall *call;

	if (qga == NULL || qga->state == CLI_QGA_CLOSED)
		return;
	cli_qga_teardown(qga);
	cli_qga_destroy_source(&qga->idle_source);
	qga->state = CLI_QGA_CLOSED;
	while ((call = g_queue_pop_head(&qga->calls)) != NULL)
		cli_qga_call_free(call);
	cli_qga_unref(qga);
}

static void cli_qga_set_reply_limit(CliSession *base, const char *execute, gsize limit)
{
	cli_reply_limit_set(&((CliQga *)base)->reply_limits, execute, limit);
}

static const CliSessionBackend cli_qga_backend = {
	.call = cli_qga_call,
	.is_open = cli_qga_is_open,
	.describe_wait = cli_qga_describe_wait,
	.interrupt = cli_qga_interrupt,
	.set_wait_func = cli_qga_set_wait_func,
	.read_pending = cli_qga_read_pending,
	.set_reply_limit = cli_qga_set_reply_limit,
	.close = cli_qga_close,
};
