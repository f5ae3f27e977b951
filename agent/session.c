/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#include <glib-unix.h>

#include "agent-config.h"
#include "bench.h"
#include "dispatch.h"
#include "endpoint.h"
#include "facts.h"
#include "oneshot.h"
#include "options.h"
#include "privilege.h"
#include "transport.h"

/* The most a session reads from --config-fd. */
#define AGENT_SESSION_CONFIG_MAX (1024 * 1024)

typedef struct {
	AgentContext ctx;
	GMainLoop *loop;
	int exit_code;
	/* a session of the resident process (--endpoint-fd): it ends when idle */
	AgentTransport *transport;
	gint64 last_request_us;
	guint idle_source;
} AgentMain;

static GString *agent_main_handle(const char *msg, gsize len, const GError *error,
                                  gpointer user_data)
{
	AgentMain *self = user_data;

	self->last_request_us = g_get_monotonic_time();
	if (msg == NULL)
		return agent_dispatch_framing_error(error);
	return agent_dispatch_message(&self->ctx, msg, len);
}

static void agent_main_closed(const GError *error, gpointer user_data)
{
	AgentMain *self = user_data;

	if (error != NULL) {
		g_warning("%s", error->message);
		self->exit_code = AGENT_EXIT_ERROR;
	}
	g_main_loop_quit(self->loop);
}

static gboolean agent_main_quit_cb(gpointer user_data)
{
	AgentMain *self = user_data;

	g_debug("signal received, quitting");
	g_main_loop_quit(self->loop);
	return G_SOURCE_CONTINUE;
}

/* Up to AGENT_ONESHOT_JOB_POLL_MS for SIGTERM/SIGINT (blocked): TRUE when one came. */
static gboolean agent_oneshot_signalled(gpointer user_data)
{
	const sigset_t *signals = user_data;
	struct timespec ts = { 0, AGENT_ONESHOT_JOB_POLL_MS * 1000L * 1000L };

	return sigtimedwait(signals, NULL, &ts) > 0;
}

/* --oneshot: the request comes from argv, the reply goes to stdout. */
static int agent_run_oneshot(AgentMain *self, const char *request)
{
	g_autoptr(GError) error = NULL;
	g_autoptr(GString) reply = NULL;
	gboolean bench_start = agent_oneshot_is_bench_start(request);
	sigset_t signals;

	/* blocked before the job's thread exists, so that only sigtimedwait() sees them */
	sigemptyset(&signals);
	sigaddset(&signals, SIGTERM);
	sigaddset(&signals, SIGINT);
	if (bench_start)
		pthread_sigmask(SIG_BLOCK, &signals, NULL);
	reply = agent_oneshot_reply(&self->ctx, request, &error);
	if (reply == NULL)
		return agent_usage_error(error->message);
	if (bench_start)
		reply = agent_oneshot_wait_job(&self->ctx, g_steal_pointer(&reply),
		                               agent_oneshot_signalled, &signals);
	if (fwrite(reply->str, 1, reply->len, stdout) != reply->len) {
		g_printerr("guestbench-agent: cannot write the reply to stdout\n");
		return AGENT_EXIT_ERROR;
	}
	if (fflush(stdout) != 0)
		return AGENT_EXIT_ERROR;
	return AGENT_EXIT_OK;
}

/*
 * A session ends once nothing has happened for linger seconds: no request,
 * no job running, nothing half-read or unsent, no client connected. The
 * resident process starts the next one when a host talks again. Checked every
 * linger seconds, so it ends between linger and twice that after the last
 * request. While a client holds its socket the session cannot end, so the
 * check stops (no wake-ups for a silent client, as before the split) until
 * the client leaves.
 */
static gboolean agent_session_idle_cb(gpointer user_data)
{
	AgentMain *self = user_data;
	gint64 linger_us = self->ctx.config->linger_seconds * G_USEC_PER_SEC;

	if (agent_transport_has_client(self->transport)) {
		self->idle_source = 0;
		return G_SOURCE_REMOVE;
	}
	if (g_get_monotonic_time() - self->last_request_us < linger_us ||
	    !agent_transport_is_idle(self->transport) || agent_jobs_busy(&self->ctx))
		return G_SOURCE_CONTINUE;
	g_debug("no request for %" G_GINT64_FORMAT " s: session ends",
	        self->ctx.config->linger_seconds);
	agent_transport_hold(self->transport);
	g_main_loop_quit(self->loop);
	return G_SOURCE_CONTINUE;
}

static void agent_session_arm_idle(AgentMain *self)
{
	self->last_request_us = g_get_monotonic_time();
	if (self->idle_source == 0)
		self->idle_source = g_timeout_add_seconds((guint)self->ctx.config->linger_seconds,
		                                          agent_session_idle_cb, self);
}

static void agent_session_client_gone(gpointer user_data)
{
	agent_session_arm_idle(user_data);
}

/* The settings of the resident process, as it wrote them (--config-fd): nothing else. */
static AgentConfig *agent_session_config(const AgentOptions *opts, GError **error)
{
	g_autoptr(AgentConfig) config = agent_config_new();
	g_autoptr(GByteArray) data = g_byte_array_new();

	if (!agent_read_fd(opts->config_fd, AGENT_SESSION_CONFIG_MAX, data, error) ||
	    !agent_config_load_data(config, (const char *)data->data, data->len,
	                            "from the resident process", error) ||
	    !agent_config_check(config, error))
		return NULL;
	close(opts->config_fd);
	return g_steal_pointer(&config);
}

/* "US LINE": the resident process's /proc/stat sample and when it took it. */
static void agent_session_prime_steal(const AgentConfig *config, const char *prime)
{
	g_autoptr(GError) error = NULL;
	char *end = NULL;
	gint64 us = g_ascii_strtoll(prime, &end, 10);

	if (end == prime || *end != ' ' ||
	    !agent_facts_steal_prime_line(config->sysroot, end + 1, us, &error))
		g_debug("no steal sample from the resident process: %s",
		        error != NULL ? error->message : "malformed");
}

int main(int argc, char **argv)
{
	AgentOptions opts;
	AgentMain self = { .exit_code = AGENT_EXIT_OK };
	g_autoptr(GOptionContext) context = NULL;
	g_autoptr(GError) error = NULL;
	g_autoptr(AgentConfig) config = NULL;
	g_autoptr(AgentTransport) transport = NULL;
	gboolean session;
	sigset_t quit_signals;
	int rc;

	/* before anything can start a thread: SIGIO must stay blocked in all of them */
	agent_endpoint_block_sigio();
	/* a peer that vanishes mid-write is an EPIPE to handle, not a reason to die */
	signal(SIGPIPE, SIG_IGN);
	/* stdout may carry replies (stdio, --oneshot): logs go to stderr only */
	g_log_writer_default_set_use_stderr(TRUE);

	agent_options_init(&opts);
	context = agent_options_context(&opts, TRUE);
	rc = agent_options_parse(&opts, context, &argc, &argv);
	if (rc >= 0)
		return rc;
	session = opts.endpoint_fd >= 0;
	if (session != (opts.config_fd >= 0) || session != (opts.state_fd >= 0)) {
		agent_options_clear(&opts);
		return agent_usage_error("--endpoint-fd, --config-fd and --state-fd go together "
		                         "(guestbench-agent passes them)");
	}

	if (session) {
		/* the resident process holds the port: without it there is nobody to serve */
		if (prctl(PR_SET_PDEATHSIG, SIGTERM, 0, 0, 0) != 0 || getppid() == 1) {
			agent_options_clear(&opts);
			return AGENT_EXIT_ERROR;
		}
		config = agent_session_config(&opts, &error);
		if (config == NULL) {
			agent_options_clear(&opts);
			return agent_usage_error(error->message);
		}
	} else {
		config = agent_config_new();
		if (!agent_config_load_file(
		        config, opts.config != NULL ? opts.config : GB_AGENT_DEFAULT_CONFIG,
		        opts.config != NULL, &error) ||
		    !agent_options_apply(&opts, config, &error) ||
		    !agent_config_check(config, &error)) {
			agent_options_clear(&opts);
			return agent_usage_error(error->message);
		}
	}
	if (config->verbose)
		g_log_set_debug_enabled(TRUE);
	config->bench_worker = agent_find_program("guestbench-agent-bench");
	self.ctx.config = config;

	if (opts.oneshot != NULL) {
		/* nothing to open: drop at once (SECURITY.md) */
		if (!agent_privilege_drop(&error)) {
			g_printerr("guestbench-agent: cannot drop privileges: %s\n",
			           error->message);
			agent_options_clear(&opts);
			return AGENT_EXIT_ERROR;
		}
		rc = agent_run_oneshot(&self, opts.oneshot);
		agent_jobs_shutdown(&self.ctx);
		agent_options_clear(&opts);
		return rc;
	}

	self.loop = g_main_loop_new(NULL, FALSE);
	/*
	 * A client may signal us as soon as it can connect: hold SIGTERM/SIGINT
	 * from before the socket exists until their sources are in place. Those
	 * sources start GLib's worker thread, and capabilities are per thread, so
	 * the privileges go first (SECURITY.md).
	 */
	sigemptyset(&quit_signals);
	sigaddset(&quit_signals, SIGTERM);
	sigaddset(&quit_signals, SIGINT);
	pthread_sigmask(SIG_BLOCK, &quit_signals, NULL);
	if (session) {
		if (!agent_jobs_load(&self.ctx, opts.state_fd, &error)) {
			/* a session must not die of its predecessor's history: start afresh */
			g_warning("%s; starting with no finished jobs", error->message);
			g_clear_error(&error);
		}
		for (guint i = 0; opts.steal_prime != NULL && opts.steal_prime[i] != NULL; i++)
			agent_session_prime_steal(config, opts.steal_prime[i]);
		transport = agent_transport_adopt(config, opts.endpoint_fd, agent_main_handle,
		                                  agent_main_closed, &self, &error);
	} else {
		/* the first gb-get-facts measures steal since start-up instead of sleeping */
		agent_facts_steal_prime(config->sysroot);
		transport = agent_transport_new(config, agent_main_handle, agent_main_closed, &self,
		                                &error);
	}
	if (transport == NULL) {
		g_printerr("guestbench-agent: %s\n", error->message);
		g_main_loop_unref(self.loop);
		agent_options_clear(&opts);
		return AGENT_EXIT_ERROR;
	}
	/* the port is open: from here on nothing needs a capability */
	if (!agent_privilege_drop(&error)) {
		g_printerr("guestbench-agent: cannot drop privileges: %s\n", error->message);
		g_clear_pointer(&transport, agent_transport_free);
		g_main_loop_unref(self.loop);
		agent_options_clear(&opts);
		return AGENT_EXIT_ERROR;
	}
	g_unix_signal_add(SIGTERM, agent_main_quit_cb, &self);
	g_unix_signal_add(SIGINT, agent_main_quit_cb, &self);
	if (session) {
		self.transport = transport;
		agent_transport_on_client_gone(transport, agent_session_client_gone);
		agent_session_arm_idle(&self);
	}
	pthread_sigmask(SIG_UNBLOCK, &quit_signals, NULL);
	g_main_loop_run(self.loop);

	/* stop a running benchmark before its context goes away */
	if (session) {
		/* for the next session: the finished jobs (one still running ends with us) */
		if (!agent_jobs_save(&self.ctx, opts.state_fd, &error)) {
			g_warning("%s", error->message);
			g_clear_error(&error);
		}
	}
	agent_jobs_shutdown(&self.ctx);
	g_clear_pointer(&transport, agent_transport_free);
	g_main_loop_unref(self.loop);
	agent_options_clear(&opts);
	return self.exit_code;
}
