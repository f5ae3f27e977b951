/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * guestbench-agent-bench: runs one benchmark job for guestbench-agent, in a
 * process of its own (agent/bench/job.h says what goes in and out). Not a
 * command for people: the agent starts it for each gb-bench-start.
 */
#include "config.h"

#include <stdio.h>

#include "job.h"

int main(int argc, char **argv)
{
	if (argc != 1) {
		fprintf(stderr, "guestbench-agent-bench: runs a benchmark job for "
		                "guestbench-agent, which starts it; it takes no arguments\n");
		return 2;
	}
	return agent_bench_worker_main();
}
