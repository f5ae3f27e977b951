/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <termios.h>
#include <unistd.h>
#include <linux/vm_sockets.h>

#include <glib/gstdio.h>

#include "endpoint.h"

gboolean agent_endpoint_parse_vsock(const char *addr, guint32 *cid, guint32 *port, GError **error)
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

char *agent_endpoint_find_virtio_port(const char *name, const char *devdir, const char *sysdir,
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

void agent_endpoint_block_sigio(void)
{
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGIO);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
}

/* A socket file left by a dead agent is removed; a live one or a non-socket is an error. */
static gboolean agent_endpoint_remove_stale_socket(const char *path, GError **error)
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

static gboolean agent_endpoint_listen_unix(AgentEndpoint *ep, const char *path, GError **error)
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
	ep->path = g_strdup(path);
	if (!agent_endpoint_remove_stale_socket(path, error))
		return FALSE;
	memcpy(sun.sun_path, path, strlen(path));
	ep->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (ep->fd < 0) {
		g_set_error(error, GB_ERROR, GB_ERROR_IO, "socket: %s", g_strerror(errno));
		return FALSE;
	}
	if (bind(ep->fd, (struct sockaddr *)&sun, sizeof(sun)) != 0) {
		g_set_error(error, GB_ERROR, GB_ERROR_IO, "cannot bind %s: %s", path,
		            g_strerror(errno));
		return FALSE;
	}
	/* remember which file is ours, so exit never unlinks somebody else's */
	if (stat(path, &st) == 0) {
		ep->unlink_socket = TRUE;
		ep->socket_dev = st.st_dev;
		ep->socket_ino = st.st_ino;
	}
	if (listen(ep->fd, 1) != 0) {
		g_set_error(error, GB_ERROR, GB_ERROR_IO, "cannot listen on %s: %s", path,
		            g_strerror(errno));
		return FALSE;
	}
	return TRUE;
}

static gboolean agent_endpoint_listen_vsock(AgentEndpoint *ep, const char *addr, GError **error)
{
	struct sockaddr_vm svm = { .svm_family = AF_VSOCK };
	guint32 cid = 0;
	guint32 port = 0;

	if (!agent_endpoint_parse_vsock(addr, &cid, &port, error))
		return FALSE;
	svm.svm_cid = cid;
	svm.svm_port = port;
	ep->path = g_strdup(addr);
	ep->fd = socket(AF_VSOCK, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (ep->fd < 0) {
		g_set_error(error, GB_ERROR, GB_ERROR_NOT_SUPPORTED, "vsock socket: %s",
		            g_strerror(errno));
		return FALSE;
	}
	if (bind(ep->fd, (struct sockaddr *)&svm, sizeof(svm)) != 0 || listen(ep->fd, 1) != 0) {
		g_set_error(error, GB_ERROR, GB_ERROR_IO, "cannot listen on vsock %s: %s", addr,
		            g_strerror(errno));
		return FALSE;
	}
	return TRUE;
}

static gboolean agent_endpoint_kind(const char *method, AgentEndpointKind *kind, GError **error)
{
	static const struct {
		const char *method;
		AgentEndpointKind kind;
	} kinds[] = {
		{ "virtio-serial", AGENT_ENDPOINT_VIRTIO_SERIAL },
		{ "unix-listen", AGENT_ENDPOINT_UNIX_LISTEN },
		{ "vsock-listen", AGENT_ENDPOINT_VSOCK_LISTEN },
		{ "stdio", AGENT_ENDPOINT_STDIO },
	};

	for (gsize i = 0; i < G_N_ELEMENTS(kinds); i++) {
		if (g_strcmp0(method, kinds[i].method) == 0) {
			*kind = kinds[i].kind;
			return TRUE;
		}
	}
	g_set_error(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT, "unknown method '%s'", method);
	return FALSE;
}

static gboolean agent_endpoint_open_virtio(AgentEndpoint *ep, const char *path, GError **error)
{
	if (path != NULL) {
		ep->path = g_strdup(path);
	} else {
		ep->path = agent_endpoint_find_virtio_port(GB_AGENT_PORT_NAME, "/dev/virtio-ports",
		                                           "/sys/class/virtio-ports", error);
		if (ep->path == NULL)
			return FALSE;
	}
	ep->fd = open(ep->path, O_RDWR | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	if (ep->fd < 0) {
		g_set_error(error, GB_ERROR, GB_ERROR_IO, "cannot open virtio-serial port %s: %s",
		            ep->path, g_strerror(errno));
		return FALSE;
	}
	/* a tty standing in for the port (a serial line, a pty in tests) must pass bytes raw */
	if (isatty(ep->fd)) {
		struct termios tio;
		if (tcgetattr(ep->fd, &tio) == 0) {
			cfmakeraw(&tio);
			if (tcsetattr(ep->fd, TCSANOW, &tio) != 0)
				g_warning("cannot set %s to raw mode: %s", ep->path,
				          g_strerror(errno));
		}
	}
	return TRUE;
}

static AgentEndpoint *agent_endpoint_new(const AgentConfig *config, GError **error)
{
	AgentEndpoint *ep = g_new0(AgentEndpoint, 1);

	ep->fd = -1;
	if (!agent_endpoint_kind(config->method, &ep->kind, error)) {
		g_free(ep);
		return NULL;
	}
	return ep;
}

AgentEndpoint *agent_endpoint_open(const AgentConfig *config, GError **error)
{
	g_autoptr(AgentEndpoint) ep = agent_endpoint_new(config, error);
	gboolean ok = FALSE;

	if (ep == NULL)
		return NULL;
	switch (ep->kind) {
	case AGENT_ENDPOINT_VIRTIO_SERIAL:
		ok = agent_endpoint_open_virtio(ep, config->path, error);
		break;
	case AGENT_ENDPOINT_UNIX_LISTEN:
		ok = agent_endpoint_listen_unix(ep, config->path, error);
		break;
	case AGENT_ENDPOINT_VSOCK_LISTEN:
		ok = agent_endpoint_listen_vsock(ep, config->path, error);
		break;
	case AGENT_ENDPOINT_STDIO:
		ep->path = g_strdup("stdio");
		ok = TRUE;
		break;
	}
	return ok ? g_steal_pointer(&ep) : NULL;
}

AgentEndpoint *agent_endpoint_adopt(const AgentConfig *config, int fd, GError **error)
{
	g_autoptr(AgentEndpoint) ep = agent_endpoint_new(config, error);
	struct stat st;

	if (ep == NULL)
		return NULL;
	if (ep->kind == AGENT_ENDPOINT_STDIO || fd < 0 || fstat(fd, &st) != 0) {
		g_set_error(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT,
		            "no endpoint to adopt for method %s on fd %d", config->method, fd);
		return NULL;
	}
	ep->fd = fd;
	ep->path = g_strdup(config->path != NULL ? config->path : "the inherited endpoint");
	if (fcntl(fd, F_SETFD, FD_CLOEXEC) != 0) {
		g_set_error(error, GB_ERROR, GB_ERROR_IO, "fd %d: %s", fd, g_strerror(errno));
		ep->fd = -1;
		return NULL;
	}
	return g_steal_pointer(&ep);
}

void agent_endpoint_free(AgentEndpoint *ep)
{
	if (ep == NULL)
		return;
	if (ep->fd >= 0)
		g_close(ep->fd, NULL);
	if (ep->unlink_socket) {
		struct stat st;
		if (stat(ep->path, &st) == 0 && st.st_dev == ep->socket_dev &&
		    st.st_ino == ep->socket_ino)
			g_unlink(ep->path);
	}
	g_free(ep->path);
	g_free(ep);
}

gboolean agent_endpoint_own_sigio(AgentEndpoint *ep, GError **error)
{
	int flags = fcntl(ep->fd, F_GETFL);

	/* the owner belongs to the open file, shared with the other process of the agent */
	if (flags < 0 || fcntl(ep->fd, F_SETOWN, getpid()) < 0 ||
	    fcntl(ep->fd, F_SETFL, flags | O_ASYNC) < 0) {
		g_set_error(error, GB_ERROR, GB_ERROR_IO, "cannot enable SIGIO on %s: %s", ep->path,
		            g_strerror(errno));
		return FALSE;
	}
	return TRUE;
}

gboolean agent_endpoint_host_connected(AgentEndpoint *ep)
{
	struct pollfd pfd = { .fd = ep->fd, .events = POLLIN };
	int rc;

	do {
		rc = poll(&pfd, 1, 0);
	} while (rc < 0 && errno == EINTR);
	if (rc < 0) {
		g_warning("poll on %s failed: %s", ep->path, g_strerror(errno));
		return FALSE;
	}
	return !(pfd.revents & (POLLHUP | POLLERR | POLLNVAL));
}
