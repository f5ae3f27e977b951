/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The job's process on Windows (../bench/job-proc.h): guestbench-agent-bench.exe
 * with its stdin and stdout on anonymous pipes, in a Job Object that kills it
 * when the agent's handle to the job closes (the agent ended, however it did),
 * without a console window. Cancelling sets a manual-reset event the process
 * inherited (--cancel-event=HANDLE), which its own thread waits on and turns
 * into the cancel flag SIGTERM sets on Linux. Killing terminates the Job
 * Object: the process and anything it started.
 */
#include "config.h"

#include <windows.h>

#include "gb-error.h"
#include "job-proc.h"

/* The exit code of a process the agent killed. */
#define AGENT_JOB_PROC_KILLED_CODE 137

struct _AgentJobProc {
	HANDLE process; /* NULL once reaped */
	DWORD pid;      /* 0 once reaped */
	HANDLE job;     /* the Job Object it runs in (kill on close) */
	HANDLE cancel;  /* the event it waits on: set = cancel */
	HANDLE in;      /* the write end of its stdin, until the input is written */
	HANDLE out;     /* the read end of its stdout */
	gint killed;    /* atomic: the agent terminated it */
};

static void agent_job_proc_close(HANDLE *h)
{
	if (*h != NULL && *h != INVALID_HANDLE_VALUE)
		CloseHandle(*h);
	*h = NULL;
}

static void agent_job_proc_set_error(GError **error, const char *what)
{
	DWORD code = GetLastError();
	g_autofree char *msg = g_win32_error_message((gint)code);

	g_set_error(error, GB_ERROR, GB_ERROR_FAILED, "%s: %s (error %lu)", what, msg,
	            (unsigned long)code);
}

/* A Job Object whose members die when its last handle closes. */
static HANDLE agent_job_proc_new_job(GError **error)
{
	JOBOBJECT_EXTENDED_LIMIT_INFORMATION limits = { 0 };
	HANDLE job = CreateJobObjectW(NULL, NULL);

	if (job == NULL) {
		agent_job_proc_set_error(error, "CreateJobObject");
		return NULL;
	}
	limits.BasicLimitInformation.LimitFlags = JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE;
	if (!SetInformationJobObject(job, JobObjectExtendedLimitInformation, &limits,
	                             sizeof(limits))) {
		agent_job_proc_set_error(error, "SetInformationJobObject");
		CloseHandle(job);
		return NULL;
	}
	return job;
}

/* An inheritable handle for the process's stderr: the agent's own, else NUL. */
static HANDLE agent_job_proc_stderr(SECURITY_ATTRIBUTES *inherit)
{
	HANDLE mine = GetStdHandle(STD_ERROR_HANDLE);
	HANDLE h = NULL;

	if (mine != NULL && mine != INVALID_HANDLE_VALUE &&
	    DuplicateHandle(GetCurrentProcess(), mine, GetCurrentProcess(), &h, 0, TRUE,
	                    DUPLICATE_SAME_ACCESS))
		return h;
	h = CreateFileW(L"NUL", GENERIC_WRITE, FILE_SHARE_READ | FILE_SHARE_WRITE, inherit,
	                OPEN_EXISTING, 0, NULL);
	return h == INVALID_HANDLE_VALUE ? NULL : h;
}

AgentJobProc *agent_job_proc_spawn(const char *program, GError **error)
{
	SECURITY_ATTRIBUTES inherit = { sizeof(inherit), NULL, TRUE };
	g_autofree AgentJobProc *proc = g_new0(AgentJobProc, 1);
	g_autofree char *cmdline = NULL;
	g_autofree gunichar2 *wcmdline = NULL;
	g_autofree gunichar2 *wprogram = NULL;
	g_autofree guint8 *attrs_buf = NULL;
	LPPROC_THREAD_ATTRIBUTE_LIST attrs = NULL;
	STARTUPINFOEXW si = { 0 };
	PROCESS_INFORMATION pi = { 0 };
	HANDLE child_in = NULL;
	HANDLE child_out = NULL;
	HANDLE child_err = NULL;
	HANDLE handles[4];
	SIZE_T attrs_size = 0;
	gboolean ok = FALSE;

	proc->job = agent_job_proc_new_job(error);
	if (proc->job == NULL)
		return NULL;
	proc->cancel = CreateEventW(&inherit, TRUE, FALSE, NULL);
	if (proc->cancel == NULL) {
		agent_job_proc_set_error(error, "CreateEvent");
		goto out;
	}
	/* the child's ends are inheritable, the agent's are not */
	if (!CreatePipe(&child_in, &proc->in, &inherit, 0) ||
	    !CreatePipe(&proc->out, &child_out, &inherit, 0) ||
	    !SetHandleInformation(proc->in, HANDLE_FLAG_INHERIT, 0) ||
	    !SetHandleInformation(proc->out, HANDLE_FLAG_INHERIT, 0)) {
		agent_job_proc_set_error(error, "CreatePipe");
		goto out;
	}
	child_err = agent_job_proc_stderr(&inherit);
	if (child_err == NULL) {
		agent_job_proc_set_error(error, "cannot open NUL for the benchmark's stderr");
		goto out;
	}
	/* a path has no '"' on Windows: quoting is enough */
	cmdline = g_strdup_printf("\"%s\" --cancel-event=%" G_GUINT64_FORMAT, program,
	                          (guint64)(guintptr)proc->cancel);
	wcmdline = g_utf8_to_utf16(cmdline, -1, NULL, NULL, error);
	wprogram = g_utf8_to_utf16(program, -1, NULL, NULL, error);
	if (wcmdline == NULL || wprogram == NULL)
		goto out;

	/* it inherits these four handles and no other the agent may have made inheritable */
	handles[0] = child_in;
	handles[1] = child_out;
	handles[2] = child_err;
	handles[3] = proc->cancel;
	si.StartupInfo.cb = sizeof(si);
	if (!InitializeProcThreadAttributeList(NULL, 1, 0, &attrs_size) && attrs_size > 0) {
		attrs_buf = g_malloc0(attrs_size);
		attrs = (LPPROC_THREAD_ATTRIBUTE_LIST)attrs_buf;
		if (!InitializeProcThreadAttributeList(attrs, 1, 0, &attrs_size)) {
			attrs = NULL;
		} else if (!UpdateProcThreadAttribute(attrs, 0, PROC_THREAD_ATTRIBUTE_HANDLE_LIST,
		                                      handles, sizeof(handles), NULL, NULL)) {
			DeleteProcThreadAttributeList(attrs);
			attrs = NULL;
		}
	}
	si.lpAttributeList = attrs;
	si.StartupInfo.dwFlags = STARTF_USESTDHANDLES;
	si.StartupInfo.hStdInput = child_in;
	si.StartupInfo.hStdOutput = child_out;
	si.StartupInfo.hStdError = child_err;
	/* suspended until it is in the Job Object: nothing it does escapes the job */
	if (!CreateProcessW((const wchar_t *)wprogram, (wchar_t *)wcmdline, NULL, NULL, TRUE,
	                    CREATE_NO_WINDOW | CREATE_SUSPENDED | CREATE_UNICODE_ENVIRONMENT |
	                        (attrs != NULL ? EXTENDED_STARTUPINFO_PRESENT : 0),
	                    NULL, NULL, &si.StartupInfo, &pi)) {
		g_autofree char *what = g_strdup_printf("CreateProcess %s", program);
		agent_job_proc_set_error(error, what);
		goto out;
	}
	proc->process = pi.hProcess;
	proc->pid = pi.dwProcessId;
	if (!AssignProcessToJobObject(proc->job, pi.hProcess)) {
		agent_job_proc_set_error(error, "AssignProcessToJobObject");
		TerminateProcess(pi.hProcess, AGENT_JOB_PROC_KILLED_CODE);
		WaitForSingleObject(pi.hProcess, INFINITE);
		CloseHandle(pi.hThread);
		agent_job_proc_close(&proc->process);
		proc->pid = 0;
		goto out;
	}
	ResumeThread(pi.hThread);
	CloseHandle(pi.hThread);
	ok = TRUE;
out:
	if (attrs != NULL)
		DeleteProcThreadAttributeList(attrs);
	agent_job_proc_close(&child_in);
	agent_job_proc_close(&child_out);
	agent_job_proc_close(&child_err);
	if (!ok) {
		agent_job_proc_free(g_steal_pointer(&proc));
		return NULL;
	}
	return g_steal_pointer(&proc);
}

gint64 agent_job_proc_id(AgentJobProc *proc)
{
	return proc->pid;
}

void agent_job_proc_write_input(AgentJobProc *proc, const char *data, gsize len)
{
	gsize done = 0;

	while (done < len && proc->in != NULL) {
		DWORD n = 0;

		/* a process that died at once: its end says why */
		if (!WriteFile(proc->in, data + done, (DWORD)MIN(len - done, 1024 * 1024), &n,
		               NULL) ||
		    n == 0)
			break;
		done += n;
	}
	agent_job_proc_close(&proc->in);
}

gssize agent_job_proc_read(AgentJobProc *proc, void *buf, gsize len, guint timeout_ms)
{
	gint64 until = g_get_monotonic_time() + (gint64)timeout_ms * 1000;

	if (proc->out == NULL)
		return 0;
	/* an anonymous pipe has no overlapped reads: look, and sleep in short slices */
	for (;;) {
		DWORD avail = 0;
		DWORD n = 0;
		gint64 left;

		if (!PeekNamedPipe(proc->out, NULL, 0, NULL, &avail, NULL))
			return 0; /* broken: the process closed its end or ended */
		if (avail > 0) {
			if (!ReadFile(proc->out, buf, (DWORD)MIN((gsize)avail, len), &n, NULL))
				return 0;
			return (gssize)n;
		}
		left = until - g_get_monotonic_time();
		if (left <= 0)
			return -1;
		Sleep((DWORD)MIN(left / 1000 + 1, 10));
	}
}

void agent_job_proc_close_output(AgentJobProc *proc)
{
	agent_job_proc_close(&proc->out);
}

void agent_job_proc_cancel(AgentJobProc *proc)
{
	if (proc->process != NULL && !SetEvent(proc->cancel)) {
		g_autofree char *msg = g_win32_error_message((gint)GetLastError());
		g_warning("cannot cancel benchmark process %lu: %s", (unsigned long)proc->pid, msg);
	}
}

void agent_job_proc_kill(AgentJobProc *proc)
{
	if (proc->process == NULL)
		return;
	g_atomic_int_set(&proc->killed, 1);
	if (!TerminateJobObject(proc->job, AGENT_JOB_PROC_KILLED_CODE) &&
	    !TerminateProcess(proc->process, AGENT_JOB_PROC_KILLED_CODE)) {
		g_autofree char *msg = g_win32_error_message((gint)GetLastError());
		g_warning("cannot kill benchmark process %lu: %s", (unsigned long)proc->pid, msg);
	}
}

gboolean agent_job_proc_wait(AgentJobProc *proc, gint timeout_ms)
{
	if (proc->process == NULL)
		return TRUE;
	/* a wait that fails has nothing to wait for */
	return WaitForSingleObject(proc->process, timeout_ms < 0 ? INFINITE : (DWORD)timeout_ms) !=
	       WAIT_TIMEOUT;
}

char *agent_job_proc_reap(AgentJobProc *proc)
{
	DWORD code = 0;
	gboolean have_code;
	char *why;

	if (proc->process == NULL)
		return g_strdup("Benchmark process ended without a result");
	WaitForSingleObject(proc->process, INFINITE);
	have_code = GetExitCodeProcess(proc->process, &code);
	/* whatever it started goes with it */
	TerminateJobObject(proc->job, AGENT_JOB_PROC_KILLED_CODE);
	if (g_atomic_int_get(&proc->killed))
		why =
		    g_strdup("Benchmark process was killed (TerminateJobObject) without a result");
	else if (!have_code)
		why = g_strdup("Benchmark process ended without a result");
	else if (code >= 0xC0000000UL)
		why = g_strdup_printf("Benchmark process ended with exception 0x%08lX without a "
		                      "result",
		                      (unsigned long)code);
	else
		why = g_strdup_printf("Benchmark process exited with status %lu without a result",
		                      (unsigned long)code);
	agent_job_proc_close(&proc->process);
	proc->pid = 0;
	return why;
}

void agent_job_proc_free(AgentJobProc *proc)
{
	if (proc == NULL)
		return;
	if (proc->process != NULL) {
		agent_job_proc_kill(proc);
		g_free(agent_job_proc_reap(proc));
	}
	agent_job_proc_close(&proc->in);
	agent_job_proc_close(&proc->out);
	agent_job_proc_close(&proc->cancel);
	/* kill on close: nothing of the job outlives this */
	agent_job_proc_close(&proc->job);
	g_free(proc);
}
