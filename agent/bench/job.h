/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include "bench.h"

G_BEGIN_DECLS

/* Finished jobs kept for gb-bench-status; the oldest already-read ones go first. */
#define AGENT_JOBS_HISTORY 16
/* Upper bound of the "runs" parameter every benchmark takes. */
#define AGENT_JOBS_MAX_RUNS GB_BENCH_MAX_RUNS

/*
 * A job runs in a process of its own, guestbench-agent-bench (job-run.c,
 * bench-worker.c), started by the job runner (job.c) in a process group of
 * its own and killed with its parent (PR_SET_PDEATHSIG).
 *
 * Its stdin carries the job spec, one JSON object: "test", "params" (as the
 * benchmark's validate() normalised them), "runs", "sysroot", "scratch_dir",
 * "max_bench_seconds", "max_bench_file_size". Its stdout carries events, one
 * JSON object per line:
 *   {"progress": 0..1, "phase": "..."}    phase only when it changed
 *   {"rate": N|null, "rate_unit": "B/s"}  the current phase's rate so far
 *   {"done": RESULT}                      the job's result document
 *   {"cancelled": PARTIAL|null}           after SIGTERM/SIGINT
 *   {"failed": "message"}
 * and nothing after the last three. A process that ends without one of them
 * (killed, crashed, out of memory) is a failed job whose error says how it
 * ended. SIGTERM or SIGINT cancels.
 *
 * On Windows (agent/win32/job-proc.c) it is guestbench-agent-bench.exe beside
 * the agent, in a Job Object that kills it with the agent; its command line
 * is --cancel-event=HANDLE, an inherited manual-reset event that cancels
 * when set.
 */
#define AGENT_JOB_SPEC_MAX (1024 * 1024)
/* The longest event line the job runner accepts (a result with its facts is far below). */
#define AGENT_JOB_EVENT_MAX (64 * 1024 * 1024)
/* How long a cancelled job's process has to end before it is killed. */
#define AGENT_JOB_CANCEL_GRACE_MS 5000

/* main() of guestbench-agent-bench: runs the job read from stdin (job-run.c). */
int agent_bench_worker_main(void);
/*
 * Cancels the job agent_bench_worker_main() runs, or will run: what SIGTERM
 * does, and on Windows the thread that waits on the agent's cancel event.
 * Async-signal-safe.
 */
void agent_bench_worker_cancel(void);

G_END_DECLS
