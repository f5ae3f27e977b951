/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * guestbench-agent-bench: runs one benchmark job for guestbench-agent, in a
 * process of its own (agent/bench/job.h says what goes in and out). Not a
 * command for people: the agent starts it for each gb-bench-start.
 */
#include "config.h"

#include <glib.h>
#include <stdio.h>
#ifdef G_OS_WIN32
#include <windows.h>
#endif

#include "job.h"

#ifdef G_OS_WIN32
/* Waits for the agent's cancel event: what SIGTERM is on Linux. */
static DWORD WINAPI bench_worker_cancel_thread(LPVOID data)
{
	if (WaitForSingleObject((HANDLE)data, INFINITE) == WAIT_OBJECT_0)
		agent_bench_worker_cancel();
	return 0;
}

/* --cancel-event=HANDLE: the inherited event's handle value. */
static gboolean bench_worker_watch_cancel(const char *arg)
{
	static const char prefix[] = "--cancel-event=";
	guint64 value = 0;
	HANDLE thread;

	if (!g_str_has_prefix(arg, prefix) ||
	    !g_ascii_string_to_unsigned(arg + sizeof(prefix) - 1, 10, 1, G_MAXUINT64, &value, NULL))
		return FALSE;
	thread =
	    CreateThread(NULL, 0, bench_worker_cancel_thread, (HANDLE)(guintptr)value, 0, NULL);
	if (thread == NULL)
		return FALSE;
	CloseHandle(thread);
	return TRUE;
}
#endif

int main(int argc, char **argv)
{
#ifdef G_OS_WIN32
	if (argc > 2 || (argc == 2 && !bench_worker_watch_cancel(argv[1]))) {
		fprintf(stderr, "guestbench-agent-bench: runs a benchmark job for "
		                "guestbench-agent, which starts it; it takes no argument but "
		                "--cancel-event=HANDLE\n");
		return 2;
	}
#else
	if (argc != 1) {
		fprintf(stderr, "guestbench-agent-bench: runs a benchmark job for "
		                "guestbench-agent, which starts it; it takes no arguments\n");
		return 2;
	}
#endif
	return agent_bench_worker_main();
}
