/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The job's process on Linux (job-proc.h): a process group of its own, killed
 * with the agent (PR_SET_PDEATHSIG); SIGTERM cancels, SIGKILL kills the
 * group. waitid(WNOWAIT) leaves an ended process a zombie, so that its pid
 * and group stay its own until it is reaped.
 */
#include "config.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "job-proc.h"

struct _AgentJobProc {
	GPid pid;   /* leader of its own group; 0 once reaped */
	int in_fd;  /* its stdin, until the input is written */
	int out_fd; /* its stdout */
};

static void agent_job_proc_close_fd(int *fd)
{
	if (*fd >= 0) {
		close(*fd);
		*fd = -1;
	}
}

/*
 * In the forked child, before exec: a process group of its own, death with
 * the agent, and no signal blocked (the agent blocks SIGIO everywhere, and a
 * one-shot agent SIGTERM/SIGINT, which cancel the job).
 */
static void agent_job_proc_child_setup(gpointer data)
{
	sigset_t none;

	sigemptyset(&none);
	pthread_sigmask(SIG_SETMASK, &none, NULL);
	setpgid(0, 0);
	prctl(PR_SET_PDEATHSIG, SIGKILL);
}

AgentJobProc *agent_job_proc_spawn(const char *program, GError **error)
{
	const char *argv[] = { program, NULL };
	AgentJobProc *proc = g_new0(AgentJobProc, 1);

	proc->in_fd = -1;
	proc->out_fd = -1;
	if (!g_spawn_async_with_pipes_and_fds(
	        NULL, argv, NULL, G_SPAWN_DO_NOT_REAP_CHILD | G_SPAWN_CLOEXEC_PIPES,
	        agent_job_proc_child_setup, NULL, -1, -1, -1, NULL, NULL, 0, &proc->pid,
	        &proc->in_fd, &proc->out_fd, NULL, error)) {
		g_free(proc);
		return NULL;
	}
	return proc;
}

gint64 agent_job_proc_id(AgentJobProc *proc)
{
	return proc->pid;
}

/* Signals the process's group, while it is not reaped. */
static void agent_job_proc_signal(AgentJobProc *proc, int sig)
{
	if (proc->pid > 0 && kill(-proc->pid, sig) != 0 && errno != ESRCH)
		g_warning("cannot signal benchmark process %d: %s", (int)proc->pid,
		          g_strerror(errno));
}

void agent_job_proc_write_input(AgentJobProc *proc, const char *data, gsize len)
{
	gsize done = 0;
	sigset_t pipe_signal;

	/* a process that died at once is an EPIPE here, not a SIGPIPE for the whole program */
	sigemptyset(&pipe_signal);
	sigaddset(&pipe_signal, SIGPIPE);
	pthread_sigmask(SIG_BLOCK, &pipe_signal, NULL);
	while (done < len) {
		ssize_t n = write(proc->in_fd, data + done, len - done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		done += (gsize)n;
	}
	agent_job_proc_close_fd(&proc->in_fd);
}

gssize agent_job_proc_read(AgentJobProc *proc, void *buf, gsize len, guint timeout_ms)
{
	struct pollfd pfd = { .fd = proc->out_fd, .events = POLLIN };
	ssize_t n;

	if (proc->out_fd < 0)
		return 0;
	if (poll(&pfd, 1, (int)timeout_ms) <= 0)
		return -1;
	n = read(proc->out_fd, buf, len);
	if (n < 0 && (errno == EINTR || errno == EAGAIN))
		return -1;
	return n < 0 ? 0 : n;
}

void agent_job_proc_close_output(AgentJobProc *proc)
{
	agent_job_proc_close_fd(&proc->out_fd);
}

void agent_job_proc_cancel(AgentJobProc *proc)
{
	agent_job_proc_signal(proc, SIGTERM);
}

void agent_job_proc_kill(AgentJobProc *proc)
{
	agent_job_proc_signal(proc, SIGKILL);
}

gboolean agent_job_proc_wait(AgentJobProc *proc, gint timeout_ms)
{
	gint64 until = g_get_monotonic_time() + (gint64)MAX(timeout_ms, 0) * 1000;

	if (proc->pid <= 0)
		return TRUE;
	for (;;) {
		siginfo_t info = { 0 };
		int flags = WEXITED | WNOWAIT | (timeout_ms < 0 ? 0 : WNOHANG);
		gint64 left;

		if (waitid(P_PID, (id_t)proc->pid, &info, flags) != 0) {
			if (errno == EINTR)
				continue;
			/* not our child any more: nothing to wait for */
			return TRUE;
		}
		if (info.si_pid != 0)
			return TRUE;
		left = until - g_get_monotonic_time();
		if (left <= 0)
			return FALSE;
		g_usleep((gulong)MIN(left, 10 * 1000));
	}
}

/* How the process ended, for a job that got no outcome from it. */
static char *agent_job_proc_describe_exit(int status)
{
	if (WIFSIGNALED(status))
		return g_strdup_printf("Benchmark process killed by signal %d (%s)",
		                       WTERMSIG(status), g_strsignal(WTERMSIG(status)));
	if (WIFEXITED(status))
		return g_strdup_printf("Benchmark process exited with status %d without a result",
		                       WEXITSTATUS(status));
	return g_strdup("Benchmark process ended without a result");
}

char *agent_job_proc_reap(AgentJobProc *proc)
{
	int status = 0;

	if (proc->pid <= 0)
		return g_strdup("Benchmark process ended without a result");
	/* whatever the process left in its group goes with it */
	agent_job_proc_signal(proc, SIGKILL);
	while (waitpid(proc->pid, &status, 0) < 0 && errno == EINTR)
		;
	proc->pid = 0;
	return agent_job_proc_describe_exit(status);
}

void agent_job_proc_free(AgentJobProc *proc)
{
	if (proc == NULL)
		return;
	if (proc->pid > 0)
		g_free(agent_job_proc_reap(proc));
	agent_job_proc_close_fd(&proc->in_fd);
	agent_job_proc_close_fd(&proc->out_fd);
	g_free(proc);
}
