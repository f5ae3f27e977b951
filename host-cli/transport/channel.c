/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"

#include <errno.h>
#include <glib-unix.h>
#include <linux/vm_sockets.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "guestbench-protocol.h"

#include "transport/channel.h"

/* A unix socket with a full backlog answers EAGAIN instead of queueing the connect. */
#define CLI_SESSION_CONNECT_RETRY_MS 50
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
	int fd;
	GSource *in_source;
	GSource *out_source;
	GSource *retry_source;
	GSource *notify_source;
	GbFramer *framer;
	GByteArray *outbuf;
	gint64 sync_id;
	gint64 next_id;
	GQueue calls; /* CliSessionCall; the head is on the wire when call_sent */
	gboolean call_sent;
	gboolean open_reported;
	CliSessionOpenFunc open_func;
	gpointer user_data;
	GError *error;
	guint64 bytes_received;
	guint64 bytes_discarded;
	guint n_discarded;
	char *last_discard;
};

static void cli_channel_connect(CliChannel *session);
static void cli_channel_flush(CliChannel *session);

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
	cli_channel_destroy_source(&session->in_source);
	cli_channel_destroy_source(&session->out_source);
	cli_channel_destroy_source(&session->retry_source);
	if (session->fd >= 0) {
		close(session->fd);
		session->fd = -1;
	}
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
	if (session->framer != NULL)
		gb_framer_free(session->framer);
	g_byte_array_unref(session->outbuf);
	g_clear_error(&session->error);
	cli_address_free(session->address);
	g_free(session->last_discard);
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
	g_byte_array_append(session->outbuf, (const guint8 *)call->line->str, call->line->len);
	session->call_sent = TRUE;
	cli_channel_flush(session);
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
	g_autoptr(JsonNode) ret = gb_reply_parse(msg, len, NULL, &error);

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

	if (call == NULL || !session->call_sent) {
		cli_channel_discard(session, len, "a message nobody asked for");
		return;
	}
	ret = gb_reply_parse(msg, len, &id, &error);
	if (!cli_channel_id_equals(id, call->id)) {
		cli_channel_discard(session, len,
		                    error != NULL ? error->message : "a reply with another id");
		return;
	}
	g_queue_pop_head(&session->calls);
	session->call_sent = FALSE;
	if (ret != NULL) {
		call->func(&session->parent, ret, NULL, call->user_data);
	} else {
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

static gboolean cli_channel_in_cb(int fd, GIOCondition condition, gpointer user_data)
{
	CliChannel *session = user_data;
	guint8 buf[16384];
	gssize n;
	gboolean active;

	n = recv(fd, buf, sizeof(buf), 0);
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return G_SOURCE_CONTINUE;
	if (n < 0 && errno != ECONNRESET) {
		cli_channel_fail(session,
		                 g_error_new(GB_ERROR, GB_ERROR_IO, "cannot read from guest: %s",
		                             g_strerror(errno)));
		return G_SOURCE_REMOVE;
	}
	if (n <= 0) {
		cli_channel_fail(session, cli_channel_closed_error(session));
		return G_SOURCE_REMOVE;
	}
	session->bytes_received += n;
	cli_channel_ref(session);
	gb_framer_push(session->framer, buf, n, cli_channel_framer_cb, session);
	active = cli_channel_is_active(session);
	cli_channel_unref(session);
	return active ? G_SOURCE_CONTINUE : G_SOURCE_REMOVE;
}

static gboolean cli_channel_out_cb(int fd, GIOCondition condition, gpointer user_data)
{
	CliChannel *session = user_data;

	cli_channel_flush(session);
	return G_SOURCE_CONTINUE;
}

static void cli_channel_watch_out(CliChannel *session, gboolean enable)
{
	if (!enable) {
		cli_channel_destroy_source(&session->out_source);
		return;
	}
	if (session->out_source != NULL)
		return;
	session->out_source = g_unix_fd_source_new(session->fd, G_IO_OUT);
	g_source_set_callback(session->out_source, G_SOURCE_FUNC(cli_channel_out_cb), session,
	                      NULL);
	g_source_attach(session->out_source, session->context);
}

/* Write failures: a peer that hung up is "closed", like a read that got EOF. */
static GError *cli_channel_write_error(CliChannel *session, int errsv)
{
	if (errsv == EPIPE || errsv == ECONNRESET)
		return cli_channel_closed_error(session);
	return g_error_new(GB_ERROR, GB_ERROR_IO, "cannot send to guest: %s", g_strerror(errsv));
}

static void cli_channel_flush(CliChannel *session)
{
	while (session->outbuf->len > 0) {
		gssize n = send(session->fd, session->outbuf->data, session->outbuf->len,
		                MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN) {
				cli_channel_watch_out(session, TRUE);
				return;
			}
			cli_channel_fail(session, cli_channel_write_error(session, errno));
			return;
		}
		g_byte_array_remove_range(session->outbuf, 0, n);
	}
	cli_channel_watch_out(session, FALSE);
}

static void cli_channel_connected(CliChannel *session)
{
	g_autoptr(JsonObject) args = json_object_new();
	GString *line;
	const guint8 delimiter = 0xFF;

	session->state = CLI_SESSION_SYNCING;
	json_object_set_int_member(args, "id", session->sync_id);
	line = gb_request_build("guest-sync-delimited", args, NULL);
	/* 0xFF first: it resets the agent's framer whatever an earlier client left half-sent */
	g_byte_array_append(session->outbuf, &delimiter, 1);
	g_byte_array_append(session->outbuf, (const guint8 *)line->str, line->len);
	g_string_free(line, TRUE);

	session->in_source = g_unix_fd_source_new(session->fd, G_IO_IN | G_IO_HUP | G_IO_ERR);
	g_source_set_callback(session->in_source, G_SOURCE_FUNC(cli_channel_in_cb), session, NULL);
	g_source_attach(session->in_source, session->context);
	cli_channel_flush(session);
}

static gboolean cli_channel_connect_done_cb(int fd, GIOCondition condition, gpointer user_data)
{
	CliChannel *session = user_data;
	int err = 0;
	socklen_t len = sizeof(err);

	cli_channel_destroy_source(&session->out_source);
	if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) < 0)
		err = errno;
	if (err != 0) {
		cli_channel_fail(session,
		                 g_error_new(GB_ERROR, GB_ERROR_IO, "cannot connect to %s: %s",
		                             session->address->text, g_strerror(err)));
		return G_SOURCE_REMOVE;
	}
	cli_channel_connected(session);
	return G_SOURCE_REMOVE;
}

static gboolean cli_channel_retry_cb(gpointer user_data)
{
	CliChannel *session = user_data;

	cli_channel_destroy_source(&session->retry_source);
	cli_channel_connect(session);
	return G_SOURCE_REMOVE;
}

static void cli_channel_connect(CliChannel *session)
{
	union {
		struct sockaddr sa;
		struct sockaddr_un un;
		struct sockaddr_vm vm;
	} addr;
	socklen_t addrlen;
	int family = session->address->kind == CLI_ADDRESS_VSOCK ? AF_VSOCK : AF_UNIX;

	memset(&addr, 0, sizeof(addr));
	if (session->address->kind == CLI_ADDRESS_VSOCK) {
		addr.vm.svm_family = AF_VSOCK;
		addr.vm.svm_cid = session->address->cid;
		addr.vm.svm_port = session->address->port;
		addrlen = sizeof(addr.vm);
	} else {
		/* fleet/target.c rejected paths that do not fit */
		addr.un.sun_family = AF_UNIX;
		g_strlcpy(addr.un.sun_path, session->address->path, sizeof(addr.un.sun_path));
		addrlen = sizeof(addr.un);
	}
	if (session->fd < 0) {
		session->fd = socket(family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
		if (session->fd < 0) {
			cli_channel_fail(session, g_error_new(GB_ERROR, GB_ERROR_IO,
			                                      "cannot create a %s socket: %s",
			                                      family == AF_VSOCK ? "vsock" : "unix",
			                                      g_strerror(errno)));
			return;
		}
	}
	if (connect(session->fd, &addr.sa, addrlen) == 0) {
		cli_channel_connected(session);
		return;
	}
	if (errno == EINPROGRESS || errno == EINTR) {
		session->out_source = g_unix_fd_source_new(session->fd, G_IO_OUT);
		g_source_set_callback(session->out_source,
		                      G_SOURCE_FUNC(cli_channel_connect_done_cb), session, NULL);
		g_source_attach(session->out_source, session->context);
		return;
	}
	if (errno == EAGAIN && family == AF_UNIX) {
		session->retry_source = g_timeout_source_new(CLI_SESSION_CONNECT_RETRY_MS);
		g_source_set_callback(session->retry_source, cli_channel_retry_cb, session, NULL);
		g_source_attach(session->retry_source, session->context);
		return;
	}
	cli_channel_fail(session, g_error_new(GB_ERROR, GB_ERROR_IO, "cannot connect to %s: %s",
	                                      session->address->text, g_strerror(errno)));
}

CliSession *cli_channel_open(const CliAddress *address, GMainContext *context, gsize max_reply_size,
                             CliSessionOpenFunc func, gpointer user_data)
{
	CliChannel *session = g_new0(CliChannel, 1);

	session->parent.backend = &cli_channel_backend;
	g_ref_count_init(&session->refcount);
	session->state = CLI_SESSION_CONNECTING;
	session->address = cli_address_copy(address);
	session->context = g_main_context_ref(context);
	session->fd = -1;
	session->framer = gb_framer_new(max_reply_size, GB_FRAMER_DEFAULT_MAX_DEPTH);
	session->outbuf = g_byte_array_new();
	/* random and positive: a stale reply to an earlier client's sync cannot match */
	session->sync_id = g_random_int_range(1, G_MAXINT32);
	session->next_id = session->sync_id + 1;
	session->open_func = func;
	session->user_data = user_data;
	g_queue_init(&session->calls);
	cli_channel_connect(session);
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
	.close = cli_channel_close,
};
