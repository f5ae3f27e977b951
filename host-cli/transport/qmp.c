/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"

#include <errno.h>
#include <gio/gio.h>
#include <glib-unix.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "guestbench-protocol.h"

#include "transport/qmp.h"
#include "transport/stream.h"
#include "transport/virt.h"

/* How much of an unexpected message an error quotes. */
#define CLI_QMP_EXCERPT 60
/* The id of qmp_capabilities; calls count up from 1. */
#define CLI_QMP_CAPABILITIES_ID 0

typedef enum {
	CLI_QMP_CONNECTING,
	CLI_QMP_GREETING,
	CLI_QMP_CAPABILITIES,
	CLI_QMP_OPEN,
	CLI_QMP_FAILED,
	CLI_QMP_CLOSED,
} CliQmpState;

typedef struct {
	char *execute;
	char *line;
	gint64 id;
	CliQmpReplyFunc func;
	gpointer user_data;
} CliQmpCall;

struct _CliQmp {
	grefcount refcount;
	CliQmpState state;
	char *path;   /* socket path, or NULL over libvirt */
	char *domain; /* libvirt domain, or NULL */
	char *uri;    /* its libvirt connection, NULL for the default */
	char *version;
	GMainContext *context;
	double timeout;
	CliStream *stream;
	GSource *timer;
	GSource *notify_source;
	CliVirtOp *op; /* the call in progress through libvirt */
	gint64 next_id;
	GQueue calls; /* CliQmpCall; the head is on the wire when call_sent */
	gboolean call_sent;
	gboolean open_reported;
	CliQmpOpenFunc open_func;
	gpointer user_data;
	GError *error;
	gint64 pid;
	guint n_events;
};

static void cli_qmp_send_next(CliQmp *qmp);

static void cli_qmp_call_free(CliQmpCall *call)
{
	g_free(call->execute);
	g_free(call->line);
	g_free(call);
}

static CliQmp *cli_qmp_ref(CliQmp *qmp)
{
	g_ref_count_inc(&qmp->refcount);
	return qmp;
}

static void cli_qmp_destroy_source(GSource **source)
{
	if (*source == NULL)
		return;
	g_source_destroy(*source);
	g_source_unref(*source);
	*source = NULL;
}

static void cli_qmp_teardown(CliQmp *qmp)
{
	cli_stream_free(g_steal_pointer(&qmp->stream));
	cli_qmp_destroy_source(&qmp->timer);
	/* a call through libvirt that hangs reports to nobody after the timeout */
	cli_virt_op_cancel(g_steal_pointer(&qmp->op));
}

static void cli_qmp_unref(CliQmp *qmp)
{
	CliQmpCall *call;

	if (!g_ref_count_dec(&qmp->refcount))
		return;
	cli_qmp_teardown(qmp);
	cli_qmp_destroy_source(&qmp->notify_source);
	while ((call = g_queue_pop_head(&qmp->calls)) != NULL)
		cli_qmp_call_free(call);
	g_clear_error(&qmp->error);
	g_free(qmp->path);
	g_free(qmp->domain);
	g_free(qmp->uri);
	g_free(qmp->version);
	g_main_context_unref(qmp->context);
	g_free(qmp);
}

static gboolean cli_qmp_is_active(const CliQmp *qmp)
{
	return qmp->state != CLI_QMP_FAILED && qmp->state != CLI_QMP_CLOSED;
}

/* Reports the failure (or, over libvirt, the opening) to whoever waits. */
static void cli_qmp_notify(CliQmp *qmp)
{
	GQueue calls = G_QUEUE_INIT;
	CliQmpCall *call;

	cli_qmp_ref(qmp);
	if (!qmp->open_reported && qmp->state != CLI_QMP_CLOSED) {
		qmp->open_reported = TRUE;
		if (qmp->open_func != NULL)
			qmp->open_func(qmp, qmp->error, qmp->user_data);
	}
	if (qmp->state == CLI_QMP_OPEN)
		cli_qmp_send_next(qmp);
	if (qmp->state == CLI_QMP_FAILED) {
		while ((call = g_queue_pop_head(&qmp->calls)) != NULL)
			g_queue_push_tail(&calls, call);
		while ((call = g_queue_pop_head(&calls)) != NULL) {
			if (qmp->state == CLI_QMP_FAILED)
				call->func(qmp, NULL, qmp->error, call->user_data);
			cli_qmp_call_free(call);
		}
	}
	cli_qmp_unref(qmp);
}

static gboolean cli_qmp_notify_cb(gpointer user_data)
{
	CliQmp *qmp = user_data;

	g_source_unref(qmp->notify_source);
	qmp->notify_source = NULL;
	cli_qmp_notify(qmp);
	return G_SOURCE_REMOVE;
}

static void cli_qmp_schedule_notify(CliQmp *qmp)
{
	if (qmp->notify_source != NULL)
		return;
	qmp->notify_source = g_idle_source_new();
	g_source_set_callback(qmp->notify_source, cli_qmp_notify_cb, qmp, NULL);
	g_source_attach(qmp->notify_source, qmp->context);
}

/* Takes ownership of error; waiters hear of it from the main loop, never re-entrantly. */
static void cli_qmp_fail(CliQmp *qmp, GError *error)
{
	if (!cli_qmp_is_active(qmp)) {
		g_error_free(error);
		return;
	}
	g_prefix_error(&error, "QMP %s: ", qmp->domain != NULL ? qmp->domain : qmp->path);
	g_debug("%s", error->message);
	cli_qmp_teardown(qmp);
	qmp->state = CLI_QMP_FAILED;
	qmp->error = error;
	qmp->call_sent = FALSE;
	cli_qmp_schedule_notify(qmp);
}

static const char *cli_qmp_waiting_for(const CliQmp *qmp)
{
	CliQmpCall *call = g_queue_peek_head((GQueue *)&qmp->calls);

	if (qmp->state == CLI_QMP_CONNECTING)
		return "the connection";
	if (qmp->state == CLI_QMP_GREETING)
		return "the QMP greeting";
	if (qmp->state == CLI_QMP_CAPABILITIES)
		return "the reply to qmp_capabilities";
	return call != NULL ? call->execute : "nothing";
}

static gboolean cli_qmp_timeout_cb(gpointer user_data)
{
	CliQmp *qmp = user_data;
	const char *what = cli_qmp_waiting_for(qmp);
	GError *error;

	if (qmp->state == CLI_QMP_OPEN)
		error = g_error_new(GB_ERROR, GB_ERROR_TIMEOUT, "no reply to %s within %.1f s",
		                    what, qmp->timeout);
	else
		error = g_error_new(GB_ERROR, GB_ERROR_TIMEOUT, "no %s within %.1f s",
		                    what + strlen("the "), qmp->timeout);
	cli_qmp_fail(qmp, error);
	return G_SOURCE_REMOVE;
}

/* Each wait (greeting, each reply) gets the full timeout; events do not extend it. */
static void cli_qmp_arm_timer(CliQmp *qmp)
{
	cli_qmp_destroy_source(&qmp->timer);
	qmp->timer = g_timeout_source_new((guint)MAX(1, qmp->timeout * 1000));
	g_source_set_callback(qmp->timer, cli_qmp_timeout_cb, qmp, NULL);
	g_source_attach(qmp->timer, qmp->context);
}

/*
 * An excerpt of a message from the monitor, for error messages: valid UTF-8,
 * cut by characters. Not escaped: whoever shows the error does that.
 */
static char *cli_qmp_excerpt(const char *msg, gsize len)
{
	g_autofree char *valid = g_utf8_make_valid(msg, (gssize)len);

	if (g_utf8_strlen(valid, -1) > CLI_QMP_EXCERPT) {
		g_autofree char *cut = g_utf8_substring(valid, 0, CLI_QMP_EXCERPT);
		return g_strdup_printf("%s…", cut);
	}
	return g_steal_pointer(&valid);
}

static void cli_qmp_write(CliQmp *qmp, const char *line)
{
	cli_stream_write(qmp->stream, line, strlen(line));
}

static void cli_qmp_libvirt_done_cb(const char *reply, const GError *op_error, gpointer user_data);

/*
 * libvirt: one virDomainQemuMonitorCommand per call. libvirt numbers the
 * requests itself and refuses one that carries an "id".
 */
static void cli_qmp_libvirt_send(CliQmp *qmp, CliQmpCall *call)
{
	g_autofree char *line = g_strstrip(g_strdup(call->line));

	/* bounded by the call's timer: its end closes the monitor and cancels the call */
	qmp->op = cli_virt_monitor_command(qmp->uri, qmp->domain, line, qmp->context,
	                                   cli_qmp_libvirt_done_cb, qmp);
}

static void cli_qmp_send_next(CliQmp *qmp)
{
	CliQmpCall *call;

	if (qmp->state != CLI_QMP_OPEN || qmp->call_sent)
		return;
	call = g_queue_peek_head(&qmp->calls);
	if (call == NULL) {
		cli_qmp_destroy_source(&qmp->timer);
		return;
	}
	qmp->call_sent = TRUE;
	cli_qmp_arm_timer(qmp);
	if (qmp->domain != NULL)
		cli_qmp_libvirt_send(qmp, call);
	else
		cli_qmp_write(qmp, call->line);
}

/* Hands a reply (or its error) to the head call and moves on. */
static void cli_qmp_complete(CliQmp *qmp, JsonNode *ret, GError *error_in)
{
	CliQmpCall *call = g_queue_pop_head(&qmp->calls);
	g_autoptr(GError) error = error_in;

	qmp->call_sent = FALSE;
	cli_qmp_ref(qmp);
	if (ret != NULL) {
		call->func(qmp, ret, NULL, call->user_data);
	} else {
		g_prefix_error(&error, "%s: ", call->execute);
		call->func(qmp, NULL, error, call->user_data);
	}
	cli_qmp_call_free(call);
	cli_qmp_send_next(qmp);
	cli_qmp_unref(qmp);
}

static void cli_qmp_libvirt_done_cb(const char *reply, const GError *op_error, gpointer user_data)
{
	CliQmp *qmp = cli_qmp_ref(user_data);
	g_autoptr(GError) error = NULL;
	g_autoptr(JsonNode) ret = NULL;

	qmp->op = NULL;
	if (qmp->state != CLI_QMP_OPEN)
		goto out;
	if (op_error != NULL) {
		cli_qmp_fail(qmp, g_error_copy(op_error));
		goto out;
	}
	/* libvirt sets its own id: one call at a time is what pairs reply and call here */
	ret = gb_reply_parse(reply, strlen(reply), NULL, &error);
	if (ret == NULL && !g_error_matches(error, GB_ERROR, GB_ERROR_REMOTE) &&
	    !g_error_matches(error, GB_ERROR, GB_ERROR_COMMAND_NOT_FOUND)) {
		g_autofree char *what = cli_qmp_excerpt(reply, strlen(reply));
		cli_qmp_fail(qmp, g_error_new(GB_ERROR, GB_ERROR_PARSE,
		                              "invalid reply through libvirt (%s): %s",
		                              error->message, what));
		goto out;
	}
	cli_qmp_complete(qmp, ret, g_steal_pointer(&error));
out:
	cli_qmp_unref(qmp);
}

static gboolean cli_qmp_id_is(JsonNode *id, gint64 expected)
{
	gint64 val = 0;

	return id != NULL && gb_json_node_get_int(id, "id", G_MININT64, G_MAXINT64, &val, NULL) &&
	       val == expected;
}

static void cli_qmp_handle_greeting(CliQmp *qmp, JsonObject *obj, const char *msg, gsize len)
{
	JsonObject *greeting = NULL;
	JsonObject *version = NULL;
	JsonObject *qemu = NULL;
	gint64 major = 0, minor = 0, micro = 0;
	g_autoptr(GError) error = NULL;
	g_autoptr(JsonNode) id = json_node_new(JSON_NODE_VALUE);
	g_autoptr(GString) line = NULL;

	if (!gb_json_get_object(obj, "QMP", GB_JSON_REQUIRED, &greeting, &error)) {
		g_autofree char *what = cli_qmp_excerpt(msg, len);
		cli_qmp_fail(qmp, g_error_new(GB_ERROR, GB_ERROR_INVALID_REQUEST,
		                              "expected the QMP greeting, got %s", what));
		return;
	}
	/* the version is informative only: a monitor without it is still QMP */
	if (gb_json_get_object(greeting, "version", GB_JSON_REQUIRED, &version, NULL) &&
	    gb_json_get_object(version, "qemu", GB_JSON_REQUIRED, &qemu, NULL) &&
	    gb_json_get_int(qemu, "major", GB_JSON_REQUIRED, 0, 9999, &major, NULL) &&
	    gb_json_get_int(qemu, "minor", GB_JSON_REQUIRED, 0, 9999, &minor, NULL) &&
	    gb_json_get_int(qemu, "micro", GB_JSON_REQUIRED, 0, 9999, &micro, NULL)) {
		qmp->version =
		    g_strdup_printf("%" G_GINT64_FORMAT ".%" G_GINT64_FORMAT ".%" G_GINT64_FORMAT,
		                    major, minor, micro);
	}
	json_node_set_int(id, CLI_QMP_CAPABILITIES_ID);
	line = gb_request_build("qmp_capabilities", NULL, id);
	qmp->state = CLI_QMP_CAPABILITIES;
	cli_qmp_arm_timer(qmp);
	cli_qmp_write(qmp, line->str);
}

static void cli_qmp_handle_message(CliQmp *qmp, const char *msg, gsize len)
{
	g_autoptr(GError) error = NULL;
	g_autoptr(JsonNode) root = gb_json_parse(msg, len, &error);
	g_autoptr(JsonNode) id = NULL;
	g_autoptr(JsonNode) ret = NULL;
	CliQmpCall *call;
	JsonObject *obj;

	if (root == NULL || !JSON_NODE_HOLDS_OBJECT(root)) {
		g_autofree char *what = cli_qmp_excerpt(msg, len);
		cli_qmp_fail(qmp,
		             g_error_new(GB_ERROR, GB_ERROR_PARSE, "not a QMP message (%s): %s",
		                         error != NULL ? error->message : "not an object", what));
		return;
	}
	obj = json_node_get_object(root);
	if (json_object_has_member(obj, "event")) {
		qmp->n_events++;
		return;
	}
	if (qmp->state == CLI_QMP_GREETING) {
		cli_qmp_handle_greeting(qmp, obj, msg, len);
		return;
	}
	ret = gb_reply_parse(msg, len, &id, &error);
	if (ret == NULL && !g_error_matches(error, GB_ERROR, GB_ERROR_REMOTE) &&
	    !g_error_matches(error, GB_ERROR, GB_ERROR_COMMAND_NOT_FOUND)) {
		g_autofree char *what = cli_qmp_excerpt(msg, len);
		cli_qmp_fail(qmp, g_error_new(GB_ERROR, GB_ERROR_INVALID_REQUEST, "%s: %s",
		                              error->message, what));
		return;
	}
	if (qmp->state == CLI_QMP_CAPABILITIES) {
		if (!cli_qmp_id_is(id, CLI_QMP_CAPABILITIES_ID) || ret == NULL) {
			g_autofree char *what = cli_qmp_excerpt(msg, len);
			cli_qmp_fail(qmp, g_error_new(GB_ERROR, GB_ERROR_INVALID_REQUEST,
			                              "qmp_capabilities failed: %s", what));
			return;
		}
		qmp->state = CLI_QMP_OPEN;
		cli_qmp_destroy_source(&qmp->timer);
		qmp->open_reported = TRUE;
		cli_qmp_ref(qmp);
		if (qmp->open_func != NULL)
			qmp->open_func(qmp, NULL, qmp->user_data);
		cli_qmp_send_next(qmp);
		cli_qmp_unref(qmp);
		return;
	}
	call = g_queue_peek_head(&qmp->calls);
	/* one call at a time: a reply to anything else means the stream is not ours */
	if (call == NULL || !qmp->call_sent || !cli_qmp_id_is(id, call->id)) {
		g_autofree char *what = cli_qmp_excerpt(msg, len);
		cli_qmp_fail(qmp, g_error_new(GB_ERROR, GB_ERROR_INVALID_REQUEST,
		                              "a reply nobody asked for: %s", what));
		return;
	}
	cli_qmp_complete(qmp, ret, g_steal_pointer(&error));
}

static gboolean cli_qmp_framer_cb(const char *msg, gsize len, const GError *error,
                                  gpointer user_data)
{
	CliQmp *qmp = user_data;

	if (error != NULL) {
		GError *copy = g_error_copy(error);
		g_prefix_error(&copy, "garbage while waiting for %s: ", cli_qmp_waiting_for(qmp));
		cli_qmp_fail(qmp, copy);
		return FALSE;
	}
	cli_qmp_handle_message(qmp, msg, len);
	return cli_qmp_is_active(qmp);
}

/* ---- the stream ---------------------------------------------------------------------- */

static void cli_qmp_stream_connected(gpointer user_data)
{
	CliQmp *qmp = user_data;

	/* the pid behind the socket is QEMU itself when it listens locally */
	qmp->pid = cli_stream_get_peer_pid(qmp->stream);
	qmp->state = CLI_QMP_GREETING;
	cli_qmp_arm_timer(qmp);
}

/* Keeps the monitor alive while a reply's callback may close it. */
static gboolean cli_qmp_stream_message(const char *msg, gsize len, const GError *error,
                                       gpointer user_data)
{
	CliQmp *qmp = cli_qmp_ref(user_data);
	gboolean active = cli_qmp_framer_cb(msg, len, error, qmp);

	cli_qmp_unref(qmp);
	return active;
}

static void cli_qmp_stream_failed(CliStreamFailure what, int errsv, gpointer user_data)
{
	CliQmp *qmp = user_data;

	switch (what) {
	case CLI_STREAM_FAILED_SOCKET:
		cli_qmp_fail(qmp, g_error_new(GB_ERROR, GB_ERROR_IO, "cannot create a socket: %s",
		                              g_strerror(errsv)));
		break;
	case CLI_STREAM_FAILED_CONNECT:
		cli_qmp_fail(qmp, g_error_new(GB_ERROR, GB_ERROR_IO, "cannot connect: %s",
		                              g_strerror(errsv)));
		break;
	case CLI_STREAM_FAILED_WRITE:
		cli_qmp_fail(qmp,
		             g_error_new(GB_ERROR, GB_ERROR_CLOSED,
		                         "cannot write to the monitor: %s", g_strerror(errsv)));
		break;
	case CLI_STREAM_FAILED_READ:
	case CLI_STREAM_FAILED_CLOSED:
	default:
		cli_qmp_fail(qmp, g_error_new(GB_ERROR, GB_ERROR_CLOSED,
		                              "the monitor closed the connection while waiting for "
		                              "%s%s%s",
		                              cli_qmp_waiting_for(qmp), errsv != 0 ? ": " : "",
		                              errsv != 0 ? g_strerror(errsv) : ""));
		break;
	}
}

static const CliStreamFuncs cli_qmp_stream_funcs = {
	.connected = cli_qmp_stream_connected,
	.message = cli_qmp_stream_message,
	.failed = cli_qmp_stream_failed,
};

/* A unix socket path that fits sockaddr_un; the stream does the rest. */
static void cli_qmp_connect(CliQmp *qmp)
{
	struct sockaddr_un addr;
	CliAddress address = { .kind = CLI_ADDRESS_UNIX, .text = qmp->path, .path = qmp->path };

	if (qmp->path[0] == '\0' || strlen(qmp->path) >= sizeof(addr.sun_path)) {
		cli_qmp_fail(qmp, g_error_new_literal(GB_ERROR, GB_ERROR_INVALID_ARGUMENT,
		                                      "not a usable unix socket path"));
		return;
	}
	cli_qmp_arm_timer(qmp);
	qmp->stream = cli_stream_connect(&address, qmp->context, CLI_QMP_MAX_MESSAGE,
	                                 &cli_qmp_stream_funcs, qmp);
}

CliQmp *cli_qmp_open(const char *path, GMainContext *context, double timeout_seconds,
                     CliQmpOpenFunc func, gpointer user_data)
{
	return cli_qmp_open_full(path, NULL, context, timeout_seconds, func, user_data);
}

CliQmp *cli_qmp_open_full(const char *path, const char *uri, GMainContext *context,
                          double timeout_seconds, CliQmpOpenFunc func, gpointer user_data)
{
	CliQmp *qmp = g_new0(CliQmp, 1);

	g_ref_count_init(&qmp->refcount);
	qmp->state = CLI_QMP_CONNECTING;
	qmp->context = g_main_context_ref(context);
	qmp->timeout = timeout_seconds > 0 ? timeout_seconds : 10.0;
	qmp->next_id = CLI_QMP_CAPABILITIES_ID + 1;
	qmp->open_func = func;
	qmp->user_data = user_data;
	g_queue_init(&qmp->calls);

	if (g_str_has_prefix(path, "libvirt:")) {
		qmp->domain = g_strdup(path + strlen("libvirt:"));
		qmp->path = g_strdup(path);
		qmp->uri = g_strdup(uri);
		if (qmp->domain[0] == '\0') {
			cli_qmp_fail(qmp, g_error_new_literal(GB_ERROR, GB_ERROR_INVALID_ARGUMENT,
			                                      "no domain name after libvirt:"));
		} else if (!cli_virt_is_built()) {
			g_autoptr(GError) error = NULL;
			cli_virt_connect(NULL, &error);
			cli_qmp_fail(qmp, g_steal_pointer(&error));
		} else {
			/* no greeting to wait for: libvirt negotiated capabilities already */
			qmp->state = CLI_QMP_OPEN;
			cli_qmp_schedule_notify(qmp);
		}
		return qmp;
	}
	qmp->path = g_strdup(g_str_has_prefix(path, "unix:") ? path + strlen("unix:") : path);
	cli_qmp_connect(qmp);
	return qmp;
}

void cli_qmp_call(CliQmp *qmp, const char *execute, JsonObject *arguments, CliQmpReplyFunc func,
                  gpointer user_data)
{
	CliQmpCall *call;
	g_autoptr(JsonNode) id = json_node_new(JSON_NODE_VALUE);
	g_autoptr(GString) line = NULL;

	if (qmp->state == CLI_QMP_CLOSED)
		return;
	call = g_new0(CliQmpCall, 1);
	call->execute = g_strdup(execute);
	call->id = qmp->next_id++;
	call->func = func;
	call->user_data = user_data;
	json_node_set_int(id, call->id);
	/* libvirt numbers the requests itself and refuses one with an "id" */
	line = gb_request_build(execute, arguments, qmp->domain != NULL ? NULL : id);
	call->line = g_strdup(line->str);
	g_queue_push_tail(&qmp->calls, call);
	if (qmp->state == CLI_QMP_FAILED)
		cli_qmp_schedule_notify(qmp);
	else if (qmp->open_reported)
		cli_qmp_send_next(qmp);
}

gint64 cli_qmp_get_pid(const CliQmp *qmp)
{
	return qmp->pid;
}

const char *cli_qmp_get_domain(const CliQmp *qmp)
{
	return qmp->domain;
}

guint cli_qmp_get_n_events(const CliQmp *qmp)
{
	return qmp->n_events;
}

const char *cli_qmp_get_version(const CliQmp *qmp)
{
	return qmp->version;
}

void cli_qmp_close(CliQmp *qmp)
{
	if (qmp == NULL)
		return;
	cli_qmp_teardown(qmp);
	cli_qmp_destroy_source(&qmp->notify_source);
	qmp->state = CLI_QMP_CLOSED;
	cli_qmp_unref(qmp);
}
