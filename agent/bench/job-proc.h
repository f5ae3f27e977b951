/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/*
 * The process layer of the job runner (job.c): what differs between Linux
 * (job-proc-posix.c: a process group, signals, waitid) and Windows
 * (win32/job-proc.c: a Job Object, an event, TerminateProcess). job.c keeps
 * the job's state, the command handlers and the event parsing.
 *
 * A process is started with its stdin and stdout on pipes; asking it to
 * cancel and killing it are safe from any thread until it is reaped, and do
 * nothing after: a reaped process's id is never signalled (the caller
 * serialises agent_job_proc_reap() with them, job.c under its lock).
 */

#include <glib.h>

G_BEGIN_DECLS

typedef struct _AgentJobProc AgentJobProc;

/* Starts program (guestbench-agent-bench) with no argument of the caller's. */
AgentJobProc *agent_job_proc_spawn(const char *program, GError **error);
/* The process's id, for messages; 0 once reaped. */
gint64 agent_job_proc_id(AgentJobProc *proc);
/*
 * Writes data to the process's stdin and closes it. A process that died at
 * once is no error here: how it ended says why.
 */
void agent_job_proc_write_input(AgentJobProc *proc, const char *data, gsize len);
/*
 * Reads what the process wrote to stdout, waiting at most timeout_ms:
 * > 0 bytes read, 0 at its end (closed or broken), -1 when nothing came.
 */
gssize agent_job_proc_read(AgentJobProc *proc, void *buf, gsize len, guint timeout_ms);
/* Closes the read end of stdout (after the outcome, or at its end). */
void agent_job_proc_close_output(AgentJobProc *proc);
/* Asks the process to cancel its job (SIGTERM; the cancel event on Windows). */
void agent_job_proc_cancel(AgentJobProc *proc);
/* Kills it, and whatever it started that went with it. */
void agent_job_proc_kill(AgentJobProc *proc);
/*
 * Whether the process has ended, waiting at most timeout_ms (-1: until it
 * does). An ended process is not reaped yet: its id stays its own.
 */
gboolean agent_job_proc_wait(AgentJobProc *proc, gint timeout_ms);
/*
 * Waits for the process, kills what it left behind and reaps it. Returns how
 * it ended, for a job that got no outcome from it ("... exited with status N
 * without a result", "... killed by ...").
 */
char *agent_job_proc_reap(AgentJobProc *proc);
/* Closes what is left (a process not reaped yet is killed and reaped first). */
void agent_job_proc_free(AgentJobProc *proc);

G_END_DECLS
