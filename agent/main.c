/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * guestbench-agent: the resident process. It opens the port (or listens),
 * drops its privileges and waits, with no wake-up, until a host talks; then
 * it starts a session process (guestbench-agent-session, session.c) on the
 * same port, which answers until it has been idle for linger seconds, and
 * waits again. It links GLib alone: JSON, GIO, the facts collectors and the
 * job runner live in the session process, so an agent that nobody talks to
 * costs what this file and GLib cost (bench/cost-footprint).
 *
 * What a session needs from here comes as inherited fds: the settings as a
 * key file (--config-fd), the endpoint (--endpoint-fd) and a memfd in which
 * each session leaves its finished benchmark jobs for the next
 * (--state-fd), plus a /proc/stat sample for its first steal figure.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include "agent-config.h"
#include "endpoint.h"
#include "options.h"
#include "privilege.h"

extern char **environ;

/* A session that ends sooner than this (linger is at least 1 s) failed to start. */
#define AGENT_KEEPER_MIN_SESSION_US G_USEC_PER_SEC
/* Waits between failed sessions double up to this. */
#define AGENT_KEEPER_MAX_BACKOFF_S 60
#define AGENT_KEEPER_STAT_LINE_MAX 512

typedef struct {
	AgentConfig *config;
	AgentEndpoint *ep;
	char *session_path;
	int signal_fd;
	int config_fd;
	int state_fd;
	gboolean host_connected; /* virtio-serial */
	gboolean quit;
	guint failures; /* sessions in a row that failed to start */
	/*
	 * The last two /proc/stat samples, newest last: the one taken as a session
	 * ended is too fresh for a request that comes right after, the one before
	 * is a whole session older (steal.c wants one a window old).
	 */
	char stat_line[2][AGENT_KEEPER_STAT_LINE_MAX];
	gint64 stat_us[2]; /* when each was read; 0 = none */
} AgentKeeper;

/* The first line of /proc/stat now, for the next session's first steal figure. */
static void agent_keeper_sample_stat(AgentKeeper *k)
{
	g_autofree char *path = g_build_filename(k->config->sysroot, "proc/stat", NULL);
	char *line = k->stat_line[1];
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;
	char *nl;

	/* the newest becomes the older; the slot of the oldest takes the new one */
	memcpy(k->stat_line[0], k->stat_line[1], sizeof(k->stat_line[0]));
	k->stat_us[0] = k->stat_us[1];
	k->stat_us[1] = 0;
	if (fd < 0)
		return;
	do {
		n = read(fd, line, sizeof(k->stat_line[1]) - 1);
	} while (n < 0 && errno == EINTR);
	close(fd);
	if (n <= 0)
		return;
	line[n] = '\0';
	nl = strchr(line, '\n');
	/* a first line longer than the buffer is not one the session could use */
	if (nl == NULL)
		return;
	*nl = '\0';
	k->stat_us[1] = g_get_monotonic_time();
}

static int agent_keeper_memfd(const char *name, const char *data, gsize len, GError **error)
{
	int fd = memfd_create(name, MFD_CLOEXEC);
	gsize done = 0;

	if (fd < 0) {
		g_set_error(error, GB_ERROR, GB_ERROR_IO, "memfd_create: %s", g_strerror(errno));
		return -1;
	}
	while (done < len) {
		ssize_t n = write(fd, data + done, len - done);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			g_set_error(error, GB_ERROR, GB_ERROR_IO, "cannot write %s: %s", name,
			            n < 0 ? g_strerror(errno) : "short write");
			close(fd);
			return -1;
		}
		done += (gsize)n;
	}
	return fd;
}

/* TRUE for SIGTERM/SIGINT. Reads every pending signal. */
static gboolean agent_keeper_read_signals(AgentKeeper *k)
{
	struct signalfd_siginfo info;
	gboolean quit = FALSE;

	while (read(k->signal_fd, &info, sizeof(info)) == sizeof(info)) {
		if (info.ssi_signo == SIGTERM || info.ssi_signo == SIGINT)
			quit = TRUE;
		else if (info.ssi_signo == SIGIO && k->ep->kind == AGENT_ENDPOINT_VIRTIO_SERIAL)
			k->host_connected = agent_endpoint_host_connected(k->ep);
	}
	return quit;
}

/*
 * Waits for a host: data on the port, or a client connecting. A port without
 * a host reports POLLHUP at once and forever, so it is left out of poll()
 * until SIGIO says the host end changed (transport.c explains). Bytes left by
 * a host that has gone are its to resync when it comes back, not a reason to
 * start a session. FALSE when asked to quit.
 */
static gboolean agent_keeper_wait_host(AgentKeeper *k)
{
	gboolean virtio = k->ep->kind == AGENT_ENDPOINT_VIRTIO_SERIAL;

	for (;;) {
		struct pollfd pfd[2] = { { .fd = k->signal_fd, .events = POLLIN },
			                 { .fd = k->ep->fd, .events = POLLIN } };
		nfds_t n = virtio && !k->host_connected ? 1 : 2;

		if (poll(pfd, n, -1) < 0) {
			if (errno == EINTR)
				continue;
			g_warning("poll: %s", g_strerror(errno));
			return FALSE;
		}
		if ((pfd[0].revents & POLLIN) && agent_keeper_read_signals(k))
			return FALSE;
		if (n < 2 || pfd[1].revents == 0)
			continue;
		if (virtio && (pfd[1].revents & (POLLHUP | POLLERR | POLLNVAL))) {
			g_debug("host detached from %s", k->ep->path);
			k->host_connected = agent_endpoint_host_connected(k->ep);
			continue;
		}
		return TRUE;
	}
}

static void agent_keeper_set_inherit(int fd, gboolean inherit)
{
	int flags = fcntl(fd, F_GETFD);

	if (flags >= 0)
		fcntl(fd, F_SETFD, inherit ? flags & ~FD_CLOEXEC : flags | FD_CLOEXEC);
}

static GPid agent_keeper_spawn(AgentKeeper *k, GError **error)
{
	const int fds[] = { k->config_fd, k->ep->fd, k->state_fd };
	g_autofree char *config_fd = g_strdup_printf("--config-fd=%d", k->config_fd);
	g_autofree char *endpoint_fd = g_strdup_printf("--endpoint-fd=%d", k->ep->fd);
	g_autofree char *state_fd = g_strdup_printf("--state-fd=%d", k->state_fd);
	g_autofree char *prime0 = NULL;
	g_autofree char *prime1 = NULL;
	char **prime[2] = { &prime0, &prime1 };
	const char *argv[7] = { k->session_path, config_fd, endpoint_fd, state_fd, NULL };
	guint argc = 4;
	posix_spawnattr_t attr;
	sigset_t mask;
	pid_t pid = 0;
	int rc;

	/* oldest first, as the session remembers them */
	for (guint i = 0; i < 2; i++) {
		if (k->stat_us[i] > 0) {
			*prime[i] = g_strdup_printf("--steal-prime=%" G_GINT64_FORMAT " %s",
			                            k->stat_us[i], k->stat_line[i]);
			argv[argc++] = *prime[i];
		}
	}
	argv[argc] = NULL;
	/* SIGIO stays blocked across exec: the session takes the port's SIGIO for itself */
	sigemptyset(&mask);
	sigaddset(&mask, SIGIO);
	posix_spawnattr_init(&attr);
	posix_spawnattr_setsigmask(&attr, &mask);
	posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK);
	/* one thread: nothing else can spawn while the three are inheritable */
	for (gsize i = 0; i < G_N_ELEMENTS(fds); i++)
		agent_keeper_set_inherit(fds[i], TRUE);
	rc = posix_spawn(&pid, k->session_path, NULL, &attr, (char *const *)argv, environ);
	for (gsize i = 0; i < G_N_ELEMENTS(fds); i++)
		agent_keeper_set_inherit(fds[i], FALSE);
	posix_spawnattr_destroy(&attr);
	if (rc != 0) {
		g_set_error(error, GB_ERROR, GB_ERROR_IO, "cannot start %s: %s", k->session_path,
		            g_strerror(rc));
		return 0;
	}
	return pid;
}

static char *agent_keeper_describe_exit(int status)
{
	if (WIFEXITED(status))
		return g_strdup_printf("exit status %d", WEXITSTATUS(status));
	if (WIFSIGNALED(status))
		return g_strdup_printf("killed by signal %d (%s)", WTERMSIG(status),
		                       g_strsignal(WTERMSIG(status)));
	return g_strdup_printf("wait status 0x%x", (guint)status);
}

/* Until the session ends; SIGTERM/SIGINT are passed on to it. Returns its wait status. */
static int agent_keeper_wait_session(AgentKeeper *k, GPid pid)
{
	for (;;) {
		struct pollfd pfd = { .fd = k->signal_fd, .events = POLLIN };
		struct signalfd_siginfo info;
		int status = 0;

		if (poll(&pfd, 1, -1) < 0 && errno != EINTR) {
			g_warning("poll: %s", g_strerror(errno));
			return 0;
		}
		while (read(k->signal_fd, &info, sizeof(info)) == sizeof(info)) {
			if (info.ssi_signo == SIGTERM || info.ssi_signo == SIGINT) {
				k->quit = TRUE;
				kill(pid, SIGTERM);
			}
		}
		/* SIGCHLD merges: ask rather than count */
		if (waitpid(pid, &status, WNOHANG) == pid)
			return status;
	}
}

/* After a session that failed to start: wait 1, 2, 4 ... 60 s, or until asked to quit. */
static void agent_keeper_backoff(AgentKeeper *k)
{
	guint shift = MIN(k->failures - 1, 6u);
	gint64 until = g_get_monotonic_time() +
	               MIN((gint64)1 << shift, AGENT_KEEPER_MAX_BACKOFF_S) * G_USEC_PER_SEC;

	g_warning("waiting %" G_GINT64_FORMAT " s before the next session",
	          MIN((gint64)1 << shift, AGENT_KEEPER_MAX_BACKOFF_S));
	while (!k->quit) {
		gint64 left_ms = (until - g_get_monotonic_time()) / 1000;
		struct pollfd pfd = { .fd = k->signal_fd, .events = POLLIN };

		if (left_ms <= 0)
			return;
		if (poll(&pfd, 1, (int)MIN(left_ms, G_MAXINT)) > 0 && agent_keeper_read_signals(k))
			k->quit = TRUE;
	}
}

static void agent_keeper_run_session(AgentKeeper *k)
{
	g_autoptr(GError) error = NULL;
	g_autofree char *how = NULL;
	gint64 started = g_get_monotonic_time();
	GPid pid = agent_keeper_spawn(k, &error);
	int status;

	if (pid == 0) {
		g_warning("%s", error->message);
		k->failures++;
		agent_keeper_backoff(k);
		return;
	}
	g_debug("session process %d started", (int)pid);
	status = agent_keeper_wait_session(k, pid);
	how = agent_keeper_describe_exit(status);
	if (k->ep->kind == AGENT_ENDPOINT_VIRTIO_SERIAL) {
		/* the session took the port's SIGIO: take it back, then look again */
		if (!agent_endpoint_own_sigio(k->ep, &error)) {
			g_warning("%s", error->message);
			g_clear_error(&error);
		}
		k->host_connected = agent_endpoint_host_connected(k->ep);
	}
	agent_keeper_sample_stat(k);
	if (k->quit) {
		g_debug("session process %d ended: %s", (int)pid, how);
		return;
	}
	if (g_get_monotonic_time() - started < AGENT_KEEPER_MIN_SESSION_US || !WIFEXITED(status) ||
	    WEXITSTATUS(status) != 0) {
		g_warning("session process %d ended after %.3f s: %s", (int)pid,
		          (double)(g_get_monotonic_time() - started) / G_USEC_PER_SEC, how);
		if (g_get_monotonic_time() - started < AGENT_KEEPER_MIN_SESSION_US) {
			k->failures++;
			agent_keeper_backoff(k);
			return;
		}
	} else {
		g_debug("session process %d ended: %s", (int)pid, how);
	}
	k->failures = 0;
}

/* Opens the endpoint and everything a session inherits; drops privileges last. */
static gboolean agent_keeper_setup(AgentKeeper *k, GError **error)
{
	g_autofree char *data = NULL;
	sigset_t set;
	gsize len = 0;

	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGCHLD);
	sigaddset(&set, SIGIO);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	k->signal_fd = signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
	if (k->signal_fd < 0) {
		g_set_error(error, GB_ERROR, GB_ERROR_IO, "signalfd: %s", g_strerror(errno));
		return FALSE;
	}
	k->ep = agent_endpoint_open(k->config, error);
	if (k->ep == NULL)
		return FALSE;
	/* the session gets the port found, not the search */
	g_free(k->config->path);
	k->config->path = g_strdup(k->ep->path);
	if (k->ep->kind == AGENT_ENDPOINT_VIRTIO_SERIAL) {
		if (!agent_endpoint_own_sigio(k->ep, error))
			return FALSE;
		k->host_connected = agent_endpoint_host_connected(k->ep);
		if (!k->host_connected)
			g_message("waiting for the host to open %s", k->ep->path);
	} else {
		g_message("listening on %s", k->ep->path);
	}
	data = agent_config_to_data(k->config, &len);
	k->config_fd = agent_keeper_memfd("guestbench-agent-config", data, len, error);
	if (k->config_fd < 0)
		return FALSE;
	k->state_fd = agent_keeper_memfd("guestbench-agent-jobs", "", 0, error);
	if (k->state_fd < 0)
		return FALSE;
	agent_keeper_sample_stat(k);
	/* the port is open: from here on nothing needs a capability (SECURITY.md) */
	if (!agent_privilege_drop(error)) {
		g_prefix_error(error, "cannot drop privileges: ");
		return FALSE;
	}
	return TRUE;
}

static void agent_keeper_clear(AgentKeeper *k)
{
	g_clear_pointer(&k->ep, agent_endpoint_free);
	if (k->signal_fd >= 0)
		close(k->signal_fd);
	if (k->config_fd >= 0)
		close(k->config_fd);
	if (k->state_fd >= 0)
		close(k->state_fd);
	g_free(k->session_path);
}

/* --oneshot and stdio have no port to hold: the session process does it all. */
static int agent_keeper_exec_session(const char *session_path, char **argv)
{
	g_free(argv[0]);
	argv[0] = g_strdup(session_path);
	execv(session_path, argv);
	g_printerr("guestbench-agent: cannot run %s: %s\n", session_path, g_strerror(errno));
	return AGENT_EXIT_ERROR;
}

int main(int argc, char **argv)
{
	AgentOptions opts;
	AgentKeeper k = { .signal_fd = -1, .config_fd = -1, .state_fd = -1 };
	g_autoptr(GOptionContext) context = NULL;
	g_autoptr(GError) error = NULL;
	g_autoptr(AgentConfig) config = NULL;
	g_auto(GStrv) args = g_strdupv(argv);
	int rc;

	/* before anything can start a thread: SIGIO must stay blocked in all of them */
	agent_endpoint_block_sigio();
	g_log_writer_default_set_use_stderr(TRUE);

	agent_options_init(&opts);
	context = agent_options_context(&opts, FALSE);
	rc = agent_options_parse(&opts, context, &argc, &argv);
	if (rc >= 0)
		return rc;
	config = agent_config_new();
	if (!agent_config_load_file(config,
	                            opts.config != NULL ? opts.config : GB_AGENT_DEFAULT_CONFIG,
	                            opts.config != NULL, &error) ||
	    !agent_options_apply(&opts, config, &error) || !agent_config_check(config, &error)) {
		agent_options_clear(&opts);
		return agent_usage_error(error->message);
	}
	if (config->verbose)
		g_log_set_debug_enabled(TRUE);
	k.session_path = agent_find_program("guestbench-agent-session");
	if (opts.oneshot != NULL || g_strcmp0(config->method, "stdio") == 0) {
		agent_options_clear(&opts);
		rc = agent_keeper_exec_session(k.session_path, args);
		agent_keeper_clear(&k);
		return rc;
	}
	agent_options_clear(&opts);

	k.config = config;
	if (!agent_keeper_setup(&k, &error)) {
		g_printerr("guestbench-agent: %s\n", error->message);
		agent_keeper_clear(&k);
		return AGENT_EXIT_ERROR;
	}
	while (!k.quit && agent_keeper_wait_host(&k))
		agent_keeper_run_session(&k);
	g_debug("quitting");
	agent_keeper_clear(&k);
	return AGENT_EXIT_OK;
}
