/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <termios.h>
#include <unistd.h>
#include <linux/vm_sockets.h>

#include <glib-unix.h>
#include <glib/gstdio.h>

#include "transport.h"

#define AGENT_TRANSPORT_READ_SIZE (64 * 1024)
/* Input resumes once the output queue has drained to this. */
#define AGENT_TRANSPORT_OUTPUT_LOW_WATER (AGENT_TRANSPORT_OUTPUT_LIMIT / 2)

typedef enum {
	AGENT_TRANSPORT_VIRTIO_SERIAL,
	AGENT_TRANSPORT_UNIX_LISTEN,
	AGENT_TRANSPORT_VSOCK_LISTEN,
	AGENT_TRANSPORT_STDIO,
} AgentTransportKind;

struct _AgentTransport {
	AgentTransportKind kind;
	char *path;
	AgentTransportHandler handler;
	AgentTransportClosedFunc closed;
	gpointer user_data;
	GbFramer *framer;

	/* unix-listen / vsock-listen */
	int listen_fd;
	guint listen_watch;
	gboolean unlink_socket;
	dev_t socket_dev;
	ino_t socket_ino;

	/* the current peer: a client socket, the port, or stdin/stdout */
	int in_fd;
	int out_fd;
	guint in_watch;
	guint out_watch;
	GByteArray *inbuf; /* read but not yet framed, kept while throttled */
	GByteArray *outq;
	gboolean throttled;
	gboolean eof;      /* stdio: stdin ended */
	gboolean finished; /* stdio: closed() was called */
	int stdin_flags;   /* stdio: restored on free */
	int stdout_flags;

	/* virtio-serial */
	int sigio_fd;
	guint sigio_watch;
	gboolean host_connected;
};

static void agent_transport_pump(AgentTransport *t);

static void agent_transport_remove_source(guint *id)
{
	if (*id != 0) {
		g_source_remove(*id);
		*id = 0;
	}
}

static void agent_transport_close_fd(int *fd)
{
	if (*fd >= 0) {
		g_close(*fd, NULL);
		*fd = -1;
	}
}

static gboolean agent_transport_set_nonblock(int fd, int *old_flags, GError **error)
{
	int flags = fcntl(fd, F_GETFL);
	if (flags < 0 || fcntl(fd, F_SETFL, flags | O_NONBLOCK) < 0) {
		g_set_error(error, GB_ERROR, GB_ERROR_IO, "cannot make fd %d non-blocking: %s", fd,
		            g_strerror(errno));
		return FALSE;
	}
	if (old_flags != NULL)
		*old_flags = flags;
	return TRUE;
}

/* Forget the current exchange: partial input and unsent output belong to a peer that left. */
static void agent_transport_reset_stream(AgentTransport *t)
{
	gb_framer_reset(t->framer);
	g_byte_array_set_size(t->inbuf, 0);
	g_byte_array_set_size(t->outq, 0);
	t->throttled = FALSE;
	agent_transport_remove_source(&t->out_watch);
}

static void agent_transport_finish(AgentTransport *t, const GError *error)
{
	if (t->finished)
		return;
	t->finished = TRUE;
	agent_transport_remove_source(&t->in_watch);
	agent_transport_remove_source(&t->out_watch);
	if (t->closed != NULL)
		t->closed(error, t->user_data);
}

static gboolean agent_transport_in_cb(gint fd, GIOCondition cond, gpointer user_data);
static gboolean agent_transport_listen_cb(gint fd, GIOCondition cond, gpointer user_data);

static void agent_transport_watch_input(AgentTransport *t)
{
	if (t->in_watch != 0 || t->in_fd < 0 || t->throttled || t->eof || t->finished)
		return;
	t->in_watch =
	    g_unix_fd_add(t->in_fd, G_IO_IN | G_IO_HUP | G_IO_ERR, agent_transport_in_cb, t);
}

/*
 * virtio-serial without a host.
 *
 * While no host has the port open, poll() on it reports POLLHUP at once and
 * forever, so a G_IO_IN watch would spin (qemu-ga sleeps 100 ms per wake-up
 * instead, which is still 10 wake-ups a second). So on HUP we remove the
 * watch. To learn when a host attaches without polling, the port is opened
 * with O_ASYNC and F_SETOWN(getpid()): the virtio_console driver then sends
 * SIGIO when the host opens or closes its end (send_sigio_to_port() on
 * VIRTIO_CONSOLE_PORT_OPEN) and when data arrives. SIGIO is blocked in every
 * thread and read from a signalfd; on each one we poll() the port with a zero
 * timeout and re-add the watch once HUP has cleared. The same check runs
 * right after the watch is removed, so a host that attached in between is
 * not missed. Idle without a host thus means no wake-ups at all.
 */
static void agent_transport_virtio_check_host(AgentTransport *t)
{
	struct pollfd pfd = { .fd = t->in_fd, .events = POLLIN };
	int rc;

	if (t->host_connected || t->in_fd < 0)
		return;
	do {
		rc = poll(&pfd, 1, 0);
	} while (rc < 0 && errno == EINTR);
	if (rc < 0) {
		g_warning("poll on %s failed: %s", t->path, g_strerror(errno));
		return;
	}
	if (pfd.revents & (POLLHUP | POLLERR | POLLNVAL))
		return;
	g_debug("host attached to %s", t->path);
	t->host_connected = TRUE;
	/* stale bytes of an earlier session are the host's to resync (0xFF) */
	agent_transport_reset_stream(t);
	agent_transport_watch_input(t);
}

static void agent_transport_virtio_host_gone(AgentTransport *t)
{
	if (t->host_connected)
		g_debug("host detached from %s", t->path);
	t->host_connected = FALSE;
	agent_transport_remove_source(&t->in_watch);
	agent_transport_reset_stream(t);
	agent_transport_virtio_check_host(t);
}

static gboolean agent_transport_sigio_cb(gint fd, GIOCondition cond, gpointer user_data)
{
	AgentTransport *t = user_data;
	struct signalfd_siginfo info;

	/* drain: several SIGIOs may have been merged or queued */
	while (read(fd, &info, sizeof(info)) == sizeof(info))
		;
	agent_transport_virtio_check_host(t);
	return G_SOURCE_CONTINUE;
}

/* The peer left or its fd failed: what happens next depends on the transport. */
static void agent_transport_lost(AgentTransport *t, int errsv)
{
	switch (t->kind) {
	case AGENT_TRANSPORT_VIRTIO_SERIAL:
		agent_transport_virtio_host_gone(t);
		break;
	case AGENT_TRANSPORT_UNIX_LISTEN:
	case AGENT_TRANSPORT_VSOCK_LISTEN:
		g_debug("client on %s went away%s%s", t->path, errsv != 0 ? ": " : "",
		        errsv != 0 ? g_strerror(errsv) : "");
		agent_transport_remove_source(&t->in_watch);
		agent_transport_reset_stream(t);
		agent_transport_close_fd(&t->in_fd);
		t->out_fd = -1;
		/* one client at a time, like qemu-ga: now take the next one */
		if (t->listen_watch == 0)
			t->listen_watch =
			    g_unix_fd_add(t->listen_fd, G_IO_IN, agent_transport_listen_cb, t);
		break;
	case AGENT_TRANSPORT_STDIO: {
		g_autoptr(GError) error = NULL;
		if (errsv != 0)
			g_set_error(&error, GB_ERROR, GB_ERROR_IO, "stdio: %s", g_strerror(errsv));
		agent_transport_finish(t, error);
		break;
	}
	}
}

static gboolean agent_transport_framer_cb(const char *msg, gsize len, const GError *error,
                                          gpointer user_data)
{
	AgentTransport *t = user_data;
	g_autoptr(GString) reply = t->handler(msg, len, error, t->user_data);

	if (reply != NULL)
		g_byte_array_append(t->outq, (const guint8 *)reply->str, reply->len);
	if (t->outq->len > AGENT_TRANSPORT_OUTPUT_LIMIT) {
		/* stop reading until the peer takes its replies: memory stays bounded */
		t->throttled = TRUE;
		agent_transport_remove_source(&t->in_watch);
		return FALSE;
	}
	return TRUE;
}

static void agent_transport_process_input(AgentTransport *t)
{
	while (t->inbuf->len > 0 && !t->throttled) {
		gsize n = gb_framer_push(t->framer, t->inbuf->data, t->inbuf->len,
		                         agent_transport_framer_cb, t);
		if (n == 0 && !t->throttled)
			break;
		g_byte_array_remove_range(t->inbuf, 0, n);
	}
}

static gboolean agent_transport_out_cb(gint fd, GIOCondition cond, gpointer user_data)
{
	AgentTransport *t = user_data;

	if ((cond & (G_IO_HUP | G_IO_ERR)) && !(cond & G_IO_OUT)) {
		agent_transport_lost(t, 0);
		return G_SOURCE_CONTINUE;
	}
	agent_transport_pump(t);
	return G_SOURCE_CONTINUE;
}

/* Writes what the fd takes now; FALSE when the peer was lost. */
static gboolean agent_transport_flush(AgentTransport *t)
{
	while (t->outq->len > 0) {
		ssize_t n;
		if (t->kind == AGENT_TRANSPORT_UNIX_LISTEN ||
		    t->kind == AGENT_TRANSPORT_VSOCK_LISTEN)
			n = send(t->out_fd, t->outq->data, t->outq->len, MSG_NOSIGNAL);
		else
			n = write(t->out_fd, t->outq->data, t->outq->len);
		if (n > 0) {
			g_byte_array_remove_range(t->outq, 0, (guint)n);
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			/* never spin on EAGAIN: wait for the fd to become writable */
			if (t->out_watch == 0)
				t->out_watch =
				    g_unix_fd_add(t->out_fd, G_IO_OUT | G_IO_HUP | G_IO_ERR,
				                  agent_transport_out_cb, t);
			return TRUE;
		}
		agent_transport_lost(t, n < 0 ? errno : EPIPE);
		return FALSE;
	}
	agent_transport_remove_source(&t->out_watch);
	return TRUE;
}

static void agent_transport_pump(AgentTransport *t)
{
	for (;;) {
		if (t->out_fd < 0 || t->finished)
			return;
		if (!agent_transport_flush(t))
			return;
		if (!t->throttled || t->outq->len > AGENT_TRANSPORT_OUTPUT_LOW_WATER)
			break;
		t->throttled = FALSE;
		agent_transport_process_input(t);
	}
	agent_transport_watch_input(t);

	/* stdio: after EOF, answer a truncated last message, send everything, then stop */
	if (t->eof && t->inbuf->len == 0 && !t->throttled) {
		if (gb_framer_is_partial(t->framer)) {
			g_autoptr(GError) error = g_error_new_literal(
			    GB_ERROR, GB_ERROR_PARSE, "JSON parse error, unexpected end of input");
			gb_framer_reset(t->framer);
			agent_transport_framer_cb(NULL, 0, error, t);
			agent_transport_pump(t);
			return;
		}
		if (t->outq->len == 0)
			agent_transport_finish(t, NULL);
	}
}

static gboolean agent_transport_in_cb(gint fd, GIOCondition cond, gpointer user_data)
{
	AgentTransport *t = user_data;
	guint8 buf[AGENT_TRANSPORT_READ_SIZE];
	ssize_t n;

	do {
		n = read(fd, buf, sizeof(buf));
	} while (n < 0 && errno == EINTR);

	if (n > 0) {
		g_byte_array_append(t->inbuf, buf, (guint)n);
		agent_transport_process_input(t);
		agent_transport_pump(t);
		return G_SOURCE_CONTINUE;
	}
	if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
		/* a virtio port without host says HUP with nothing to read */
		if ((cond & (G_IO_HUP | G_IO_ERR)) && t->kind == AGENT_TRANSPORT_VIRTIO_SERIAL)
			agent_transport_virtio_host_gone(t);
		return G_SOURCE_CONTINUE;
	}
	if (t->kind == AGENT_TRANSPORT_STDIO && n == 0) {
		g_debug("end of input on stdin");
		t->eof = TRUE;
		agent_transport_remove_source(&t->in_watch);
		/* a trailing top-level scalar ends at whitespace: supply it */
		g_byte_array_append(t->inbuf, (const guint8 *)"\n", 1);
		agent_transport_process_input(t);
		agent_transport_pump(t);
		return G_SOURCE_CONTINUE;
	}
	/* EOF or an error (EIO from a hung-up tty, ECONNRESET, ...) */
	agent_transport_lost(t, n < 0 ? errno : 0);
	return G_SOURCE_CONTINUE;
}

static gboolean agent_transport_listen_cb(gint fd, GIOCondition cond, gpointer user_data)
{
	AgentTransport *t = user_data;
	int client = accept4(fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);

	if (client < 0) {
		if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR &&
		    errno != ECONNABORTED)
			g_warning("accept on %s failed: %s", t->path, g_strerror(errno));
		return G_SOURCE_CONTINUE;
	}
	g_debug("client attached to %s", t->path);
	/* one client at a time: the next waits in the backlog until this one leaves */
	t->listen_watch = 0;
	t->in_fd = client;
	t->out_fd = client;
	agent_transport_reset_stream(t);
	agent_transport_watch_input(t);
	return G_SOURCE_REMOVE;
}

gboolean agent_transport_parse_vsock(const char *addr, guint32 *cid, guint32 *port, GError **error)
{
	g_auto(GStrv) parts = NULL;
	guint64 val = 0;

	if (addr == NULL || (parts = g_strsplit(addr, ":", -1)) == NULL ||
	    g_strv_length(parts) != 2) {
		g_set_error(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT,
		            "invalid vsock address '%s': expected CID:PORT (CID may be -1 or any)",
		            addr != NULL ? addr : "");
		return FALSE;
	}
	if (g_strcmp0(parts[0], "-1") == 0 || g_ascii_strcasecmp(parts[0], "any") == 0) {
		*cid = VMADDR_CID_ANY;
	} else if (g_ascii_string_to_unsigned(parts[0], 10, 0, G_MAXUINT32 - 1, &val, NULL)) {
		*cid = (guint32)val;
	} else {
		g_set_error(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT,
		            "invalid vsock CID '%s' in '%s': expected a number or -1/any", parts[0],
		            addr);
		return FALSE;
	}
	if (!g_ascii_string_to_unsigned(parts[1], 10, 0, G_MAXUINT32 - 1, &val, NULL)) {
		g_set_error(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT,
		            "invalid vsock port '%s' in '%s': expected 0..%u", parts[1], addr,
		            G_MAXUINT32 - 1);
		return FALSE;
	}
	*port = (guint32)val;
	return TRUE;
}

char *agent_transport_find_virtio_port(const char *name, const char *devdir, const char *sysdir,
                                       GError **error)
{
	g_autofree char *link = g_build_filename(devdir, name, NULL);
	g_autoptr(GDir) dir = NULL;
	const char *entry;

	/* a dangling udev link still names the port: open() then says what is wrong */
	if (g_file_test(link, G_FILE_TEST_EXISTS | G_FILE_TEST_IS_SYMLINK))
		return g_steal_pointer(&link);

	/* no udev link (minimal initramfs): find the vportNpM whose name matches */
	dir = g_dir_open(sysdir, 0, NULL);
	while (dir != NULL && (entry = g_dir_read_name(dir)) != NULL) {
		g_autofree char *fn = g_build_filename(sysdir, entry, "name", NULL);
		g_autofree char *contents = NULL;
		if (!g_file_get_contents(fn, &contents, NULL, NULL))
			continue;
		if (g_strcmp0(g_strchomp(contents), name) == 0)
			return g_build_filename("/dev", entry, NULL);
	}
	g_set_error(error, GB_ERROR, GB_ERROR_NOT_SUPPORTED,
	            "virtio-serial port %s not found: no %s and no %s/*/name naming it "
	            "(add a virtserialport named %s to the VM, or use -p PATH)",
	            name, link, sysdir, name);
	return NULL;
}

void agent_transport_block_sigio(void)
{
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGIO);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
}

static gboolean agent_transport_open_virtio(AgentTransport *t, const char *path, GError **error)
{
	sigset_t set;
	int flags;

	if (path != NULL) {
		t->path = g_strdup(path);
	} else {
		t->path = agent_transport_find_virtio_port(GB_AGENT_PORT_NAME, "/dev/virtio-ports",
		                                           "/sys/class/virtio-ports", error);
		if (t->path == NULL)
			return FALSE;
	}
	t->in_fd = open(t->path, O_RDWR | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	if (t->in_fd < 0) {
		g_set_error(error, GB_ERROR, GB_ERROR_IO, "cannot open virtio-serial port %s: %s",
		            t->path, g_strerror(errno));
		return FALSE;
	}
	t->out_fd = t->in_fd;

	/* a tty standing in for the port (a serial line, a pty in tests) must pass bytes raw */
	if (isatty(t->in_fd)) {
		struct termios tio;
		if (tcgetattr(t->in_fd, &tio) == 0) {
			cfmakeraw(&tio);
			if (tcsetattr(t->in_fd, TCSANOW, &tio) != 0)
				g_warning("cannot set %s to raw mode: %s", t->path,
				          g_strerror(errno));
		}
	}

	/* see agent_transport_virtio_check_host() for why SIGIO */
	agent_transport_block_sigio();
	sigemptyset(&set);
	sigaddset(&set, SIGIO);
	t->sigio_fd = signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
	if (t->sigio_fd < 0) {
		g_set_error(error, GB_ERROR, GB_ERROR_IO, "signalfd: %s", g_strerror(errno));
		return FALSE;
	}
	flags = fcntl(t->in_fd, F_GETFL);
	if (fcntl(t->in_fd, F_SETOWN, getpid()) < 0 || flags < 0 ||
	    fcntl(t->in_fd, F_SETFL, flags | O_ASYNC) < 0) {
		g_set_error(error, GB_ERROR, GB_ERROR_IO, "cannot enable SIGIO on %s: %s", t->path,
		            g_strerror(errno));
		return FALSE;
	}
	t->sigio_watch = g_unix_fd_add(t->sigio_fd, G_IO_IN, agent_transport_sigio_cb, t);
	agent_transport_virtio_check_host(t);
	if (!t->host_connected)
		g_message("waiting for the host to open %s", t->path);
	return TRUE;
}

/* A socket file left by a dead agent is removed; a live one or a non-socket is an error. */
static gboolean agent_transport_remove_stale_socket(const char *path, GError **error)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	struct stat st;
	int fd;
	int rc;
	int errsv;

	if (lstat(path, &st) != 0) {
		if (errno == ENOENT)
			return TRUE;
		g_set_error(error, GB_ERROR, GB_ERROR_IO, "cannot stat %s: %s", path,
		            g_strerror(errno));
		return FALSE;
	}
	if (!S_ISSOCK(st.st_mode)) {
		g_set_error(error, GB_ERROR, GB_ERROR_IO,
		            "%s exists and is not a socket; not removing it", path);
		return FALSE;
	}
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		g_set_error(error, GB_ERROR, GB_ERROR_IO, "socket: %s", g_strerror(errno));
		return FALSE;
	}
	memcpy(sun.sun_path, path, strlen(path));
	rc = connect(fd, (struct sockaddr *)&sun, sizeof(sun));
	errsv = errno;
	g_close(fd, NULL);
	if (rc == 0) {
		g_set_error(error, GB_ERROR, GB_ERROR_IO,
		            "%s is in use: another process is listening on it", path);
		return FALSE;
	}
	if (errsv != ECONNREFUSED) {
		g_set_error(error, GB_ERROR, GB_ERROR_IO, "cannot probe %s: %s", path,
		            g_strerror(errsv));
		return FALSE;
	}
	g_debug("removing stale socket %s", path);
	if (unlink(path) != 0 && errno != ENOENT) {
		g_set_error(error, GB_ERROR, GB_ERROR_IO, "cannot remove stale socket %s: %s", path,
		            g_strerror(errno));
		return FALSE;
	}
	return TRUE;
}

static gboolean agent_transport_listen_unix(AgentTransport *t, const char *path, GError **error)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	struct stat st;

	if (path == NULL || *path == '\0') {
		g_set_error_literal(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT,
		                    "unix-listen needs a socket path (-p PATH)");
		return FALSE;
	}
	if (strlen(path) >= sizeof(sun.sun_path)) {
		g_set_error(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT,
		            "socket path %s is too long (at most %zu bytes)", path,
		            sizeof(sun.sun_path) - 1);
		return FALSE;
	}
	t->path = g_strdup(path);
	if (!agent_transport_remove_stale_socket(path, error))
		return FALSE;
	memcpy(sun.sun_path, path, strlen(path));
	t->listen_fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (t->listen_fd < 0) {
		g_set_error(error, GB_ERROR, GB_ERROR_IO, "socket: %s", g_strerror(errno));
		return FALSE;
	}
	if (bind(t->listen_fd, (struct sockaddr *)&sun, sizeof(sun)) != 0) {
		g_set_error(error, GB_ERROR, GB_ERROR_IO, "cannot bind %s: %s", path,
		            g_strerror(errno));
		return FALSE;
	}
	/* remember which file is ours, so exit never unlinks somebody else's */
	if (stat(path, &st) == 0) {
		t->unlink_socket = TRUE;
		t->socket_dev = st.st_dev;
		t->socket_ino = st.st_ino;
	}
	if (listen(t->listen_fd, 1) != 0) {
		g_set_error(error, GB_ERROR, GB_ERROR_IO, "cannot listen on %s: %s", path,
		            g_strerror(errno));
		return FALSE;
	}
	return TRUE;
}

static gboolean agent_transport_listen_vsock(AgentTransport *t, const char *addr, GError **error)
{
	struct sockaddr_vm svm = { .svm_family = AF_VSOCK };
	guint32 cid = 0;
	guint32 port = 0;

	if (!agent_transport_parse_vsock(addr, &cid, &port, error))
		return FALSE;
	svm.svm_cid = cid;
	svm.svm_port = port;
	t->path = g_strdup(addr);
	t->listen_fd = socket(AF_VSOCK, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (t->listen_fd < 0) {
		g_set_error(error, GB_ERROR, GB_ERROR_NOT_SUPPORTED, "vsock socket: %s",
		            g_strerror(errno));
		return FALSE;
	}
	if (bind(t->listen_fd, (struct sockaddr *)&svm, sizeof(svm)) != 0 ||
	    listen(t->listen_fd, 1) != 0) {
		g_set_error(error, GB_ERROR, GB_ERROR_IO, "cannot listen on vsock %s: %s", addr,
		            g_strerror(errno));
		return FALSE;
	}
	return TRUE;
}

AgentTransport *agent_transport_new(const AgentConfig *config, AgentTransportHandler handler,
                                    AgentTransportClosedFunc closed, gpointer user_data,
                                    GError **error)
{
	g_autoptr(AgentTransport) t = NULL;

	g_return_val_if_fail(config != NULL, NULL);
	g_return_val_if_fail(handler != NULL, NULL);

	t = g_new0(AgentTransport, 1);
	t->handler = handler;
	t->closed = closed;
	t->user_data = user_data;
	t->framer = gb_framer_new(config->max_message_size, config->max_depth);
	t->inbuf = g_byte_array_new();
	t->outq = g_byte_array_new();
	t->listen_fd = -1;
	t->in_fd = -1;
	t->out_fd = -1;
	t->sigio_fd = -1;
	t->stdin_flags = -1;
	t->stdout_flags = -1;

	if (g_strcmp0(config->method, "virtio-serial") == 0) {
		t->kind = AGENT_TRANSPORT_VIRTIO_SERIAL;
		if (!agent_transport_open_virtio(t, config->path, error))
			return NULL;
	} else if (g_strcmp0(config->method, "unix-listen") == 0) {
		t->kind = AGENT_TRANSPORT_UNIX_LISTEN;
		if (!agent_transport_listen_unix(t, config->path, error))
			return NULL;
	} else if (g_strcmp0(config->method, "vsock-listen") == 0) {
		t->kind = AGENT_TRANSPORT_VSOCK_LISTEN;
		if (!agent_transport_listen_vsock(t, config->path, error))
			return NULL;
	} else if (g_strcmp0(config->method, "stdio") == 0) {
		t->kind = AGENT_TRANSPORT_STDIO;
		t->path = g_strdup("stdio");
		if (!agent_transport_set_nonblock(STDIN_FILENO, &t->stdin_flags, error) ||
		    !agent_transport_set_nonblock(STDOUT_FILENO, &t->stdout_flags, error))
			return NULL;
		t->in_fd = STDIN_FILENO;
		t->out_fd = STDOUT_FILENO;
		agent_transport_watch_input(t);
	} else {
		g_set_error(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT, "unknown method '%s'",
		            config->method);
		return NULL;
	}
	if (t->listen_fd >= 0) {
		t->listen_watch =
		    g_unix_fd_add(t->listen_fd, G_IO_IN, agent_transport_listen_cb, t);
		g_message("listening on %s", t->path);
	}
	return g_steal_pointer(&t);
}

void agent_transport_free(AgentTransport *t)
{
	if (t == NULL)
		return;
	agent_transport_remove_source(&t->in_watch);
	agent_transport_remove_source(&t->out_watch);
	agent_transport_remove_source(&t->listen_watch);
	agent_transport_remove_source(&t->sigio_watch);
	if (t->kind == AGENT_TRANSPORT_STDIO) {
		/* stdin/stdout are shared with whoever started us: put their flags back */
		if (t->stdin_flags >= 0)
			fcntl(STDIN_FILENO, F_SETFL, t->stdin_flags);
		if (t->stdout_flags >= 0)
			fcntl(STDOUT_FILENO, F_SETFL, t->stdout_flags);
	} else {
		if (t->out_fd != t->in_fd)
			agent_transport_close_fd(&t->out_fd);
		agent_transport_close_fd(&t->in_fd);
	}
	agent_transport_close_fd(&t->listen_fd);
	agent_transport_close_fd(&t->sigio_fd);
	if (t->unlink_socket) {
		struct stat st;
		if (stat(t->path, &st) == 0 && st.st_dev == t->socket_dev &&
		    st.st_ino == t->socket_ino)
			g_unlink(t->path);
	}
	if (t->framer != NULL)
		gb_framer_free(t->framer);
	if (t->inbuf != NULL)
		g_byte_array_unref(t->inbuf);
	if (t->outq != NULL)
		g_byte_array_unref(t->outq);
	g_free(t->path);
	g_free(t);
}
