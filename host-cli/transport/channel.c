/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"

#include <errno.h>
#include <sys/stat.h>
#include <glib-unix.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>
#include <linux/vm_sockets.h>

#include "guestbench-protocol.h"

#include "transport/channel.h"
#include "transport/reply-budget.h"
#include "transport/reply-limit.h"
#include "transport/stream.h"

/* How much of a discarded message is kept to explain a timeout. */
#define CLI_SESSION_DISCARD_EXCERPT 60

typedef enum {
	CLI_SESSION_CONNECTING,
	CLI_SESSION_SYNCING,
	CLI_SESSION_OPEN,
	CLI_SESSION_FAILED,
	CLI_SESSION_CLOSED,
} CliSessionState;

typedef struct {
	char *execute;
	GString *line;
	gint64 id;
	CliSessionReplyFunc func;
	gpointer user_data;
} CliSessionCall;

typedef struct _CliChannel CliChannel;

struct _CliChannel {
	CliSession parent; /* first: a CliChannel is a CliChannel */
	grefcount refcount;
	CliSessionState state;
	CliAddress *address; /* a copy: the session owns what it reads */
	GMainContext *context;
	CliStream *stream;
	gsize max_reply_size;     /* the cap; each reply has its own limit (reply-limit.h) */
	GHashTable *reply_limits; /* the command's own (cli_reply_limit_set()), or NULL */
	GSource *notify_source;
	gint64 sync_id;
	gint64 next_id;
	GQueue calls; /* CliSessionCall; the head is on the wire when call_sent */
	gboolean call_sent;
	gboolean open_reported;
	CliSessionOpenFunc open_func;
	gpointer user_data;
	GError *error;
	CliReplyHold in_flight; /* what the message being received holds of the reply budget */
	guint64 bytes_received;
	guint64 bytes_discarded;
	guint n_discarded;
	char *last_discard;
};

static void cli_channel_call_free(CliSessionCall *call)
{
	g_free(call->execute);
	if (call->line != NULL)
		g_string_free(call->line, TRUE);
	g_free(call);
}

static CliChannel *cli_channel_ref(CliChannel *session)
{
	g_ref_count_inc(&session->refcount);
	return session;
}

static void cli_channel_destroy_source(GSource **source)
{
	if (*source == NULL)
		return;
	g_source_destroy(*source);
	g_source_unref(*source);
	*source = NULL;
}

/* Stops all I/O; the struct stays until the last reference goes. */
static void cli_channel_teardown(CliChannel *session)
{
	/* the framer's buffer goes with the stream */
	cli_stream_free(g_steal_pointer(&session->stream));
	cli_reply_budget_release(&session->in_flight);
}

static void cli_channel_unref(CliChannel *session)
{
	CliSessionCall *call;

	if (!g_ref_count_dec(&session->refcount))
		return;
	cli_channel_teardown(session);
	cli_channel_destroy_source(&session->notify_source);
	while ((call = g_queue_pop_head(&session->calls)) != NULL)
		cli_channel_call_free(call);
	g_clear_error(&session->error);
	cli_address_free(session->address);
	g_free(session->last_discard);
	if (session->reply_limits != NULL)
		g_hash_table_unref(session->reply_limits);
	g_main_context_unref(session->context);
	g_free(session);
}

static gboolean cli_channel_is_active(const CliChannel *session)
{
	return session->state == CLI_SESSION_CONNECTING || session->state == CLI_SESSION_SYNCING ||
	       session->state == CLI_SESSION_OPEN;
}

gboolean cli_channel_is_open(const CliSession *base)
{
	const CliChannel *session = (const CliChannel *)base;

	return session->state == CLI_SESSION_OPEN;
}

/* Reports the failure to whoever waits: the opener first, then every queued call. */
static void cli_channel_notify_failure(CliChannel *session)
{
	GQueue calls = G_QUEUE_INIT;
	CliSessionCall *call;

	if (session->state != CLI_SESSION_FAILED)
		return;
	cli_channel_ref(session);
	if (!session->open_reported) {
		session->open_reported = TRUE;
		if (session->open_func != NULL)
			session->open_func(&session->parent, session->error, session->user_data);
	}
	/* calls queued from inside these callbacks are answered on the next round */
	while ((call = g_queue_pop_head(&session->calls)) != NULL)
		g_queue_push_tail(&calls, call);
	while ((call = g_queue_pop_head(&calls)) != NULL) {
		if (session->state == CLI_SESSION_FAILED)
			call->func(&session->parent, NULL, session->error, call->user_data);
		cli_channel_call_free(call);
	}
	cli_channel_unref(session);
}

static gboolean cli_channel_notify_cb(gpointer user_data)
{
	CliChannel *session = user_data;

	g_source_unref(session->notify_source);
	session->notify_source = NULL;
	cli_channel_notify_failure(session);
	return G_SOURCE_REMOVE;
}

/* Callbacks never run inside cli_channel_open()/cli_channel_call(): the caller is not ready. */
static void cli_channel_schedule_notify(CliChannel *session)
{
	if (session->notify_source != NULL)
		return;
	session->notify_source = g_idle_source_new();
	g_source_set_callback(session->notify_source, cli_channel_notify_cb, session, NULL);
	g_source_attach(session->notify_source, session->context);
}

/* Takes ownership of error; waiters hear of it from the main loop, never re-entrantly. */
static void cli_channel_fail(CliChannel *session, GError *error)
{
	if (!cli_channel_is_active(session)) {
		g_error_free(error);
		return;
	}
	/* raw: main.c's log writer escapes what it prints */
	g_debug("%s: %s", session->address->text, error->message);
	cli_channel_teardown(session);
	session->state = CLI_SESSION_FAILED;
	session->error = error;
	session->call_sent = FALSE;
	cli_channel_schedule_notify(session);
}

static void cli_channel_discard(CliChannel *session, gsize len, const char *reason)
{
	/*
	 * Parse errors quote the guest's bytes: valid UTF-8 here, cut by characters;
	 * escaped only where it is shown (tables, the runner, main.c's log writer).
	 */
	g_autofree char *valid = g_utf8_make_valid(reason, -1);

	session->bytes_discarded += len;
	session->n_discarded++;
	g_free(session->last_discard);
	if (g_utf8_strlen(valid, -1) > CLI_SESSION_DISCARD_EXCERPT) {
		g_autofree char *cut = g_utf8_substring(valid, 0, CLI_SESSION_DISCARD_EXCERPT);
		session->last_discard = g_strdup_printf("%s…", cut);
	} else {
		session->last_discard = g_steal_pointer(&valid);
	}
	g_debug("%s: discarded %" G_GSIZE_FORMAT " bytes: %s", session->address->text, len,
	        session->last_discard);
}

static void cli_channel_send_next(CliChannel *session)
{
	CliSessionCall *call;

	if (session->state != CLI_SESSION_OPEN || session->call_sent)
		return;
	call = g_queue_peek_head(&session->calls);
	if (call == NULL)
		return;
	session->call_sent = TRUE;
	/* before the write: the reply cannot come earlier */
	cli_stream_set_max_message_size(
	    session->stream,
	    cli_reply_limit_lookup(session->reply_limits, call->execute, session->max_reply_size));
	cli_stream_write(session->stream, call->line->str, call->line->len);
}

static gboolean cli_channel_id_equals(JsonNode *node, gint64 expected)
{
	gint64 val = 0;

	if (node == NULL)
		return FALSE;
	if (!gb_json_node_get_int(node, "id", G_MININT64, G_MAXINT64, &val, NULL))
		return FALSE;
	return val == expected;
}

static void cli_channel_handle_sync(CliChannel *session, const char *msg, gsize len)
{
	g_autoptr(GError) error = NULL;
	g_autoptr(JsonNode) ret = NULL;
	char id[24];

	/*
	 * Whatever came before is stale: what is larger than the sync's limit was
	 * skipped by the framer, and a message without our id in its text is not
	 * parsed either.
	 */
	g_snprintf(id, sizeof(id), "%" G_GINT64_FORMAT, session->sync_id);
	if (g_strstr_len(msg, (gssize)len, id) == NULL) {
		cli_channel_discard(session, len, "a reply that is not ours");
		return;
	}
	ret = gb_reply_parse(msg, len, NULL, &error);
	if (ret == NULL) {
		cli_channel_discard(session, len, error->message);
		return;
	}
	if (!cli_channel_id_equals(ret, session->sync_id)) {
		cli_channel_discard(session, len, "a reply that is not ours");
		return;
	}
	session->state = CLI_SESSION_OPEN;
	session->open_reported = TRUE;
	g_debug("%s: session open after discarding %u message(s)", session->address->text,
	        session->n_discarded);
	if (session->open_func != NULL)
		session->open_func(&session->parent, NULL, session->user_data);
	cli_channel_send_next(session);
}

static void cli_channel_handle_reply(CliChannel *session, const char *msg, gsize len)
{
	CliSessionCall *call = g_queue_peek_head(&session->calls);
	g_autoptr(GError) error = NULL;
	g_autoptr(JsonNode) id = NULL;
	g_autoptr(JsonNode) ret = NULL;
	gboolean over_budget;

	if (call == NULL || !session->call_sent) {
		cli_channel_discard(session, len, "a message nobody asked for");
		return;
	}
	/*
	 * What the fleet's reply budget cannot hold is not parsed either (its tree
	 * would cost up to 12 times its bytes): after the sync the stream is ours, so
	 * the message is the call's reply, failed with the budget's error as it is.
	 */
	over_budget = !cli_reply_budget_check(len, &error);
	if (!over_budget) {
		ret = gb_reply_parse(msg, len, &id, &error);
		if (!cli_channel_id_equals(id, call->id)) {
			cli_channel_discard(session, len,
			                    error != NULL ? error->message
			                                  : "a reply with another id");
			return;
		}
	}
	g_queue_pop_head(&session->calls);
	session->call_sent = FALSE;
	/* until the next call: nobody asked for anything */
	cli_stream_set_max_message_size(session->stream, CLI_REPLY_LIMIT_SMALL);
	if (ret != NULL) {
		call->func(&session->parent, ret, NULL, call->user_data);
	} else {
		if (!over_budget)
			g_prefix_error(&error, "%s: ", call->execute);
		call->func(&session->parent, NULL, error, call->user_data);
	}
	cli_channel_call_free(call);
	cli_channel_send_next(session);
}

static gboolean cli_channel_framer_cb(const char *msg, gsize len, const GError *error,
                                      gpointer user_data)
{
	CliChannel *session = user_data;

	if (session->state == CLI_SESSION_SYNCING) {
		if (error != NULL)
			cli_channel_discard(session, 0, error->message);
		else
			cli_channel_handle_sync(session, msg, len);
	} else if (session->state == CLI_SESSION_OPEN) {
		CliSessionCall *call = g_queue_peek_head(&session->calls);

		/* after the sync the stream is ours: a broken message is a broken reply */
		if (error != NULL && call != NULL && session->call_sent) {
			GError *error_copy = g_error_copy(error);
			if (g_error_matches(error, GB_ERROR, GB_ERROR_TOO_LARGE))
				g_prefix_error(&error_copy,
				               "reply to %s over its size limit: ", call->execute);
			else
				g_prefix_error(&error_copy, "invalid reply to %s: ", call->execute);
			cli_channel_fail(session, error_copy);
		} else if (error != NULL) {
			cli_channel_discard(session, 0, error->message);
		} else {
			cli_channel_handle_reply(session, msg, len);
		}
	}
	return session->state == CLI_SESSION_SYNCING || session->state == CLI_SESSION_OPEN;
}

static const char *cli_channel_waiting_for(const CliChannel *session)
{
	CliSessionCall *call = g_queue_peek_head((GQueue *)&session->calls);

	if (session->state == CLI_SESSION_CONNECTING)
		return "connecting";
	if (session->state == CLI_SESSION_SYNCING)
		return "the guest-sync-delimited reply";
	if (call != NULL && session->call_sent)
		return call->execute;
	return "nothing";
}

/* The peer hung up (EOF, ECONNRESET or EPIPE: which one comes first is a race). */
static GError *cli_channel_closed_error(CliChannel *session)
{
	if (session->state == CLI_SESSION_OPEN)
		return g_error_new(GB_ERROR, GB_ERROR_CLOSED,
		                   "connection closed by guest while waiting for %s",
		                   cli_channel_waiting_for(session));
	return g_error_new(GB_ERROR, GB_ERROR_CLOSED,
	                   "connection closed by guest before the session opened "
	                   "(%" G_GUINT64_FORMAT " bytes received)",
	                   session->bytes_received);
}

/* ---- the stream ---------------------------------------------------------------------- */

static void cli_channel_stream_connected(gpointer user_data)
{
	CliChannel *session = user_data;
	g_autoptr(JsonObject) args = json_object_new();
	g_autoptr(GString) line = NULL;

	session->state = CLI_SESSION_SYNCING;
	json_object_set_int_member(args, "id", session->sync_id);
	line = gb_request_build("guest-sync-delimited", args, NULL);
	/* 0xFF first: it resets the agent's framer whatever an earlier client left half-sent */
	g_string_prepend_c(line, (char)0xFF);
	/* one write: a failing one ends the session (and the stream) at once */
	cli_stream_write(session->stream, line->str, line->len);
}

static void cli_channel_stream_received(gsize n, gpointer user_data)
{
	CliChannel *session = user_data;

	session->bytes_received += n;
}

/* Keeps the session alive while a reply's callback may close it. */
static gboolean cli_channel_stream_message(const char *msg, gsize len, const GError *error,
                                           gpointer user_data)
{
	CliChannel *session = cli_channel_ref(user_data);
	gboolean active;

	/* the message is whole (or dropped): what it held gives way to what is kept of it */
	cli_reply_budget_release(&session->in_flight);
	active = cli_channel_framer_cb(msg, len, error, session);

	cli_channel_unref(session);
	return active;
}

/*
 * The bytes of a message still arriving are charged to the fleet's reply budget
 * as they come, in steps: a guest that drips a large reply, or never ends it,
 * holds no more than the budget lets it. One that cannot be held fails the
 * session at once (the stream cannot resync mid-message), its buffer freed.
 */
static void cli_channel_stream_buffered(gsize n, gpointer user_data)
{
	CliChannel *session = user_data;
	GError *error = NULL;

	if (n == 0)
		cli_reply_budget_release(&session->in_flight);
	else if (!cli_reply_budget_grow(&session->in_flight, n, "this guest's reply", &error))
		cli_channel_fail(session, error);
}

/* connect() says "Connection refused" for a path that is not a socket at all: say what it is. */
static const char *cli_channel_connect_reason(CliChannel *session, int errsv)
{
	struct stat st;

	if (session->address->kind == CLI_ADDRESS_UNIX &&
	    (errsv == ECONNREFUSED || errsv == ENOTSOCK) &&
	    stat(session->address->path, &st) == 0 && !S_ISSOCK(st.st_mode)) {
		if (S_ISDIR(st.st_mode))
			return "not a socket but a directory";
		if (S_ISREG(st.st_mode))
			return "not a socket but a regular file";
		return "not a socket";
	}
	return g_strerror(errsv);
}

static void cli_channel_stream_failed(CliStreamFailure what, int errsv, gpointer user_data)
{
	CliChannel *session = user_data;
	GError *error;

	switch (what) {
	case CLI_STREAM_FAILED_SOCKET:
		error = g_error_new(GB_ERROR, GB_ERROR_IO, "cannot create a %s socket: %s",
		                    session->address->kind == CLI_ADDRESS_VSOCK ? "vsock" : "unix",
		                    g_strerror(errsv));
		break;
	case CLI_STREAM_FAILED_CONNECT:
		error =
		    g_error_new(GB_ERROR, GB_ERROR_IO, "cannot connect to %s: %s",
		                session->address->text, cli_channel_connect_reason(session, errsv));
		break;
	case CLI_STREAM_FAILED_READ:
		error = errsv == ECONNRESET
		            ? cli_channel_closed_error(session)
		            : g_error_new(GB_ERROR, GB_ERROR_IO, "cannot read from guest: %s",
		                          g_strerror(errsv));
		break;
	case CLI_STREAM_FAILED_WRITE:
		error = errsv == EPIPE || errsv == ECONNRESET
		            ? cli_channel_closed_error(session)
		            : g_error_new(GB_ERROR, GB_ERROR_IO, "cannot send to guest: %s",
		                          g_strerror(errsv));
		break;
	case CLI_STREAM_FAILED_OPEN:
		error = g_error_new_literal(GB_ERROR, GB_ERROR_IO,
		                            cli_stream_get_open_error(session->stream));
		break;
	case CLI_STREAM_FAILED_CLOSED:
	default:
		error = cli_channel_closed_error(session);
		break;
	}
	cli_channel_fail(session, error);
}

static const CliStreamFuncs cli_channel_stream_funcs = {
	.connected = cli_channel_stream_connected,
	.received = cli_channel_stream_received,
	.message = cli_channel_stream_message,
	.buffered = cli_channel_stream_buffered,
	.failed = cli_channel_stream_failed,
};

CliSession *cli_channel_open(const CliAddress *address, GMainContext *context, gsize max_reply_size,
                             CliSessionOpenFunc func, gpointer user_data)
{
	CliChannel *session = g_new0(CliChannel, 1);

	session->parent.backend = &cli_channel_backend;
	g_ref_count_init(&session->refcount);
	session->state = CLI_SESSION_CONNECTING;
	session->address = cli_address_copy(address);
	session->context = g_main_context_ref(context);
	/* random and positive: a stale reply to an earlier client's sync cannot match */
	session->sync_id = g_random_int_range(1, G_MAXINT32);
	session->next_id = session->sync_id + 1;
	session->open_func = func;
	session->user_data = user_data;
	session->max_reply_size = max_reply_size;
	g_queue_init(&session->calls);
	/* first comes the sync's reply, and stale replies to skip */
	session->stream = cli_stream_connect(
	    address, context, cli_reply_limit("guest-sync-delimited", max_reply_size),
	    &cli_channel_stream_funcs, session);
	return &session->parent;
}

void cli_channel_call(CliSession *base, const char *execute, JsonObject *arguments,
                      CliSessionReplyFunc func, gpointer user_data)
{
	CliChannel *session = (CliChannel *)base;
	CliSessionCall *call;
	g_autoptr(JsonNode) id = NULL;

	if (session->state == CLI_SESSION_CLOSED)
		return;
	call = g_new0(CliSessionCall, 1);
	call->execute = g_strdup(execute);
	call->id = session->next_id++;
	call->func = func;
	call->user_data = user_data;
	id = json_node_init_int(json_node_alloc(), call->id);
	call->line = gb_request_build(execute, arguments, id);
	g_queue_push_tail(&session->calls, call);
	if (session->state == CLI_SESSION_FAILED) {
		cli_channel_schedule_notify(session);
		return;
	}
	cli_channel_send_next(session);
}

char *cli_channel_describe_wait(const CliSession *base)
{
	const CliChannel *session = (const CliChannel *)base;
	GString *str;

	str = g_string_new(NULL);
	switch (session->state) {
	case CLI_SESSION_CONNECTING:
		g_string_append_printf(str, "connecting to %s", session->address->text);
		break;
	case CLI_SESSION_SYNCING:
	case CLI_SESSION_OPEN:
		g_string_append_printf(str, "waiting for %s", cli_channel_waiting_for(session));
		if (session->bytes_received == 0) {
			g_string_append(str, " (nothing received)");
		} else if (session->n_discarded > 0) {
			g_string_append_printf(str,
			                       " (discarded %u message(s), %" G_GUINT64_FORMAT
			                       " bytes received, last: %s)",
			                       session->n_discarded, session->bytes_received,
			                       session->last_discard);
		}
		break;
	case CLI_SESSION_FAILED:
		g_string_append(str, session->error->message);
		break;
	case CLI_SESSION_CLOSED:
	default:
		g_string_append(str, "closed");
		break;
	}
	return g_string_free(str, FALSE);
}

void cli_channel_read_pending(CliSession *base)
{
	CliChannel *session = (CliChannel *)base;

	if (!cli_channel_is_active(session))
		return;
	/* a reply's callback may close the session */
	cli_channel_ref(session);
	cli_stream_read_pending(session->stream);
	cli_channel_unref(session);
}

void cli_channel_set_reply_limit(CliSession *base, const char *execute, gsize limit)
{
	cli_reply_limit_set(&((CliChannel *)base)->reply_limits, execute, limit);
}

void cli_channel_close(CliSession *base)
{
	CliChannel *session = (CliChannel *)base;
	CliSessionCall *call;

	if (session == NULL || session->state == CLI_SESSION_CLOSED)
		return;
	cli_channel_teardown(session);
	cli_channel_destroy_source(&session->notify_source);
	session->state = CLI_SESSION_CLOSED;
	while ((call = g_queue_pop_head(&session->calls)) != NULL)
		cli_channel_call_free(call);
	cli_channel_unref(session);
}

const CliSessionBackend cli_channel_backend = {
	.call = cli_channel_call,
	.is_open = cli_channel_is_open,
	.describe_wait = cli_channel_describe_wait,
	.read_pending = cli_channel_read_pending,
	.set_reply_limit = cli_channel_set_reply_limit,
	.close = cli_channel_close,
};
