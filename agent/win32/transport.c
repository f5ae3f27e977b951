/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"

#include <windows.h>

#include "dispatch.h"
#include "transport.h"

/* Output queued beyond this pauses reading until the host reads (backpressure). */
#define WIN_OUTPUT_LIMIT (1024 * 1024)
#define WIN_READ_SIZE 4096
/* How long the I/O thread waits before opening a port again that failed. */
#define WIN_REOPEN_MS 1000

struct _AgentWinTransport {
	char *method;
	wchar_t *path;
	GMainContext *context;
	AgentWinHandler handler;
	gpointer user_data;
	GbFramer *framer; /* main context only */
	GThread *thread;
	HANDLE stop;    /* manual reset: the thread ends */
	HANDLE wake;    /* auto reset: output was queued */
	GMutex lock;    /* guards the members below */
	GByteArray *in; /* read, not yet framed */
	GByteArray *out;
	guint generation; /* bumped per (re)open: stale input is dropped */
	guint in_generation;
	gboolean delivering; /* an idle callback is scheduled */
};

static gboolean win_is_pipe(const AgentWinTransport *t)
{
	return g_strcmp0(t->method, "pipe-listen") == 0;
}

static gboolean win_is_com(const AgentWinTransport *t)
{
	return g_strcmp0(t->method, "isa-serial") == 0;
}

/* Main context: frames what the thread read and queues the replies. */
static gboolean win_deliver_cb(gpointer user_data);

static gboolean win_framer_cb(const char *msg, gsize len, const GError *error, gpointer user_data)
{
	AgentWinTransport *t = user_data;
	g_autoptr(GString) reply = t->handler(msg, len, error, t->user_data);

	if (reply != NULL) {
		g_mutex_lock(&t->lock);
		g_byte_array_append(t->out, (const guint8 *)reply->str, (guint)reply->len);
		g_mutex_unlock(&t->lock);
		SetEvent(t->wake);
	}
	return TRUE;
}

static gboolean win_deliver_cb(gpointer user_data)
{
	AgentWinTransport *t = user_data;
	g_autoptr(GByteArray) data = NULL;
	gboolean reset;

	g_mutex_lock(&t->lock);
	data = t->in;
	t->in = g_byte_array_new();
	reset = t->in_generation != t->generation;
	t->in_generation = t->generation;
	t->delivering = FALSE;
	g_mutex_unlock(&t->lock);
	if (reset)
		gb_framer_reset(t->framer);
	gb_framer_push(t->framer, data->data, data->len, win_framer_cb, t);
	return G_SOURCE_REMOVE;
}

static void win_queue_input(AgentWinTransport *t, const guint8 *buf, DWORD n)
{
	gboolean schedule;

	g_mutex_lock(&t->lock);
	g_byte_array_append(t->in, buf, n);
	schedule = !t->delivering;
	t->delivering = TRUE;
	g_mutex_unlock(&t->lock);
	if (schedule)
		g_main_context_invoke(t->context, win_deliver_cb, t);
}

/* Waits on the stop event for ms; TRUE when the thread must end. */
static gboolean win_stopped_within(AgentWinTransport *t, DWORD ms)
{
	return WaitForSingleObject(t->stop, ms) == WAIT_OBJECT_0;
}

static void win_log_error(AgentWinTransport *t, const char *what, DWORD code)
{
	g_autofree char *msg = g_win32_error_message((gint)code);
	g_autofree char *path = g_utf16_to_utf8((const gunichar2 *)t->path, -1, NULL, NULL, NULL);

	g_debug("%s %s: %s", what, path != NULL ? path : "(path)", msg);
}

/*
 * The port's handle, or INVALID_HANDLE_VALUE after a failure (logged once
 * per kind, not once a second). For pipe-listen, waits for a client.
 */
static HANDLE win_open(AgentWinTransport *t, DWORD *last_error)
{
	HANDLE h;

	if (!win_is_pipe(t)) {
		h = CreateFileW(t->path, GENERIC_READ | GENERIC_WRITE, 0, NULL, OPEN_EXISTING,
		                FILE_FLAG_OVERLAPPED, NULL);
		if (h == INVALID_HANDLE_VALUE) {
			DWORD code = GetLastError();
			if (code != *last_error)
				win_log_error(t, "cannot open", code);
			*last_error = code;
			return h;
		}
		if (win_is_com(t)) {
			/* a read returns at once with what is there; EV_RXCHAR says when
			 * there is something (win_serve) */
			COMMTIMEOUTS timeouts = { .ReadIntervalTimeout = MAXDWORD };
			if (!SetCommTimeouts(h, &timeouts) || !SetCommMask(h, EV_RXCHAR)) {
				win_log_error(t, "cannot set up the COM port", GetLastError());
				CloseHandle(h);
				return INVALID_HANDLE_VALUE;
			}
		}
		g_debug("port open");
		*last_error = 0;
		return h;
	}
	h = CreateNamedPipeW(t->path, PIPE_ACCESS_DUPLEX | FILE_FLAG_OVERLAPPED,
	                     PIPE_TYPE_BYTE | PIPE_READMODE_BYTE | PIPE_WAIT |
	                         PIPE_REJECT_REMOTE_CLIENTS,
	                     1, WIN_READ_SIZE, WIN_READ_SIZE, 0, NULL);
	if (h == INVALID_HANDLE_VALUE) {
		DWORD code = GetLastError();
		if (code != *last_error)
			win_log_error(t, "cannot create pipe", code);
		*last_error = code;
		return h;
	}
	*last_error = 0;
	{
		OVERLAPPED ov = { .hEvent = CreateEventW(NULL, TRUE, FALSE, NULL) };
		HANDLE waits[2] = { ov.hEvent, t->stop };
		BOOL ok = ConnectNamedPipe(h, &ov);
		DWORD code = ok ? ERROR_PIPE_CONNECTED : GetLastError();
		DWORD n;

		if (code == ERROR_IO_PENDING) {
			if (WaitForMultipleObjects(2, waits, FALSE, INFINITE) != WAIT_OBJECT_0) {
				CancelIo(h);
				GetOverlappedResult(h, &ov, &n, TRUE);
				code = ERROR_OPERATION_ABORTED;
			} else {
				code = GetOverlappedResult(h, &ov, &n, FALSE) ? ERROR_PIPE_CONNECTED
				                                              : GetLastError();
			}
		}
		CloseHandle(ov.hEvent);
		if (code != ERROR_PIPE_CONNECTED) {
			CloseHandle(h);
			return INVALID_HANDLE_VALUE;
		}
	}
	g_debug("pipe client connected");
	return h;
}

typedef struct {
	OVERLAPPED ov;
	gboolean pending;
	guint8 buf[WIN_READ_SIZE];
	DWORD len;
} WinIo;

/* Serves one open handle until it fails or the thread is stopped; TRUE = stopped. */
static gboolean win_serve(AgentWinTransport *t, HANDLE h)
{
	WinIo rd = { 0 };
	WinIo wr = { 0 };
	/*
	 * COM: the port's timeouts make a read return at once, with 0 bytes when
	 * nothing is there (Windows; wine's reads wait for a byte instead). After
	 * an empty read the next one waits for EV_RXCHAR, without polling.
	 */
	OVERLAPPED ev = { 0 };
	gboolean ev_pending = FALSE;
	gboolean rd_empty = FALSE;
	DWORD ev_mask = 0;
	gboolean stopped = FALSE;

	rd.ov.hEvent = CreateEventW(NULL, TRUE, FALSE, NULL);
	wr.ov.hEvent = CreateEventW(NULL, TRUE, FALSE, NULL);
	ev.hEvent = CreateEventW(NULL, TRUE, FALSE, NULL);
	for (;;) {
		HANDLE waits[5];
		DWORD nwaits = 0;
		DWORD which;
		DWORD n = 0;
		gsize queued;

		g_mutex_lock(&t->lock);
		queued = t->out->len;
		if (!wr.pending && queued > 0) {
			wr.len = (DWORD)MIN(queued, sizeof(wr.buf));
			memcpy(wr.buf, t->out->data, wr.len);
			g_byte_array_remove_range(t->out, 0, wr.len);
		}
		g_mutex_unlock(&t->lock);
		if (!wr.pending && wr.len > 0) {
			ResetEvent(wr.ov.hEvent);
			if (!WriteFile(h, wr.buf, wr.len, NULL, &wr.ov) &&
			    GetLastError() != ERROR_IO_PENDING) {
				win_log_error(t, "cannot write to", GetLastError());
				break;
			}
			wr.pending = TRUE;
		}
		if (rd_empty && !ev_pending) {
			COMSTAT stat = { 0 };
			DWORD errors = 0;
			ResetEvent(ev.hEvent);
			if (!WaitCommEvent(h, &ev_mask, &ev) &&
			    GetLastError() != ERROR_IO_PENDING) {
				win_log_error(t, "cannot wait on", GetLastError());
				break;
			}
			ev_pending = TRUE;
			/* a byte that came before the wait was armed: read it now */
			if (ClearCommError(h, &errors, &stat) && stat.cbInQue > 0)
				rd_empty = FALSE;
		}
		/* backpressure: no new input while the host does not read */
		if (!rd.pending && !rd_empty && queued < WIN_OUTPUT_LIMIT) {
			ResetEvent(rd.ov.hEvent);
			if (!ReadFile(h, rd.buf, sizeof(rd.buf), NULL, &rd.ov) &&
			    GetLastError() != ERROR_IO_PENDING) {
				win_log_error(t, "cannot read from", GetLastError());
				break;
			}
			rd.pending = TRUE;
		}
		waits[nwaits++] = t->stop;
		waits[nwaits++] = t->wake;
		if (rd.pending)
			waits[nwaits++] = rd.ov.hEvent;
		if (wr.pending)
			waits[nwaits++] = wr.ov.hEvent;
		if (ev_pending)
			waits[nwaits++] = ev.hEvent;
		which = WaitForMultipleObjects(nwaits, waits, FALSE, INFINITE);
		if (which == WAIT_OBJECT_0) {
			stopped = TRUE;
			break;
		}
		if (which == WAIT_OBJECT_0 + 1 || which == WAIT_FAILED)
			continue;
		if (waits[which - WAIT_OBJECT_0] == ev.hEvent) {
			ev_pending = FALSE; /* EV_RXCHAR: the next turn reads */
			rd_empty = FALSE;
			if (!GetOverlappedResult(h, &ev, &n, FALSE)) {
				win_log_error(t, "wait failed on", GetLastError());
				break;
			}
		} else if (waits[which - WAIT_OBJECT_0] == rd.ov.hEvent) {
			rd.pending = FALSE;
			if (!GetOverlappedResult(h, &rd.ov, &n, FALSE)) {
				win_log_error(t, "read failed on", GetLastError());
				break;
			}
			if (n > 0) {
				win_queue_input(t, rd.buf, n);
			} else if (win_is_com(t)) {
				rd_empty = TRUE;
			} else if (win_is_pipe(t)) {
				break; /* the client closed its end */
			} else if (win_stopped_within(t, 100)) {
				stopped = TRUE; /* a port with no host: nothing to read */
				break;
			}
		} else {
			wr.pending = FALSE;
			if (!GetOverlappedResult(h, &wr.ov, &n, FALSE)) {
				win_log_error(t, "write failed on", GetLastError());
				break;
			}
			/* a short write: the rest goes first next time */
			if (n < wr.len) {
				g_mutex_lock(&t->lock);
				g_byte_array_prepend(t->out, wr.buf + n, wr.len - n);
				g_mutex_unlock(&t->lock);
			}
			wr.len = 0;
		}
	}
	if (rd.pending || wr.pending || ev_pending) {
		DWORD n;
		CancelIo(h);
		if (rd.pending)
			GetOverlappedResult(h, &rd.ov, &n, TRUE);
		if (wr.pending)
			GetOverlappedResult(h, &wr.ov, &n, TRUE);
		if (ev_pending)
			GetOverlappedResult(h, &ev, &n, TRUE);
	}
	CloseHandle(rd.ov.hEvent);
	CloseHandle(wr.ov.hEvent);
	CloseHandle(ev.hEvent);
	return stopped;
}

static gpointer win_thread(gpointer user_data)
{
	AgentWinTransport *t = user_data;
	DWORD last_error = 0;

	for (;;) {
		HANDLE h = win_open(t, &last_error);
		gboolean stopped;

		if (h == INVALID_HANDLE_VALUE) {
			if (win_stopped_within(t, WIN_REOPEN_MS))
				return NULL;
			continue;
		}
		/* a new connection: nothing of the old one is answered or sent */
		g_mutex_lock(&t->lock);
		t->generation++;
		g_byte_array_set_size(t->out, 0);
		g_mutex_unlock(&t->lock);
		stopped = win_serve(t, h);
		if (win_is_pipe(t))
			DisconnectNamedPipe(h);
		CloseHandle(h);
		if (stopped || win_stopped_within(t, win_is_pipe(t) ? 0 : WIN_REOPEN_MS))
			return NULL;
		g_debug("port closed, opening it again");
	}
}

AgentWinTransport *agent_win_transport_new(const AgentConfig *config, AgentWinHandler handler,
                                           gpointer user_data, GError **error)
{
	g_autoptr(GError) local = NULL;
	AgentWinTransport *t;
	const char *path = config->path;
	g_autofree char *fallback = NULL;
	gunichar2 *wpath;

	if (path == NULL) /* virtio-serial: the vioserial driver's name for our port */
		path = fallback = g_strdup("\\\\.\\Global\\" GB_AGENT_PORT_NAME);
	else if (g_strcmp0(config->method, "isa-serial") == 0 && !g_str_has_prefix(path, "\\\\"))
		path = fallback = g_strdup_printf("\\\\.\\%s", path); /* COM10 and above need it */
	wpath = g_utf8_to_utf16(path, -1, NULL, NULL, &local);
	if (wpath == NULL) {
		g_set_error(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT, "bad path: %s",
		            local->message);
		return NULL;
	}
	t = g_new0(AgentWinTransport, 1);
	t->method = g_strdup(config->method);
	t->path = (wchar_t *)wpath;
	t->context = g_main_context_ref_thread_default();
	t->handler = handler;
	t->user_data = user_data;
	t->framer = gb_framer_new(config->max_message_size, config->max_depth);
	t->stop = CreateEventW(NULL, TRUE, FALSE, NULL);
	t->wake = CreateEventW(NULL, FALSE, FALSE, NULL);
	g_mutex_init(&t->lock);
	t->in = g_byte_array_new();
	t->out = g_byte_array_new();
	t->thread = g_thread_new("port", win_thread, t);
	return t;
}

void agent_win_transport_free(AgentWinTransport *t)
{
	if (t == NULL)
		return;
	SetEvent(t->stop);
	g_thread_join(t->thread);
	/* an idle callback may still be scheduled: run it against nothing */
	while (g_main_context_iteration(t->context, FALSE))
		;
	CloseHandle(t->stop);
	CloseHandle(t->wake);
	g_mutex_clear(&t->lock);
	g_byte_array_unref(t->in);
	g_byte_array_unref(t->out);
	gb_framer_free(t->framer);
	g_main_context_unref(t->context);
	g_free(t->path);
	g_free(t->method);
	g_free(t);
}
