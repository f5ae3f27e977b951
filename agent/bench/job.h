/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include "bench.h"

G_BEGIN_DECLS

/* Finished jobs kept for gb-bench-status; the oldest already-read ones go first. */
#define AGENT_JOBS_HISTORY 16
/* Upper bound of the "runs" parameter every benchmark takes. */
#define AGENT_JOBS_MAX_RUNS GB_BENCH_MAX_RUNS

G_END_DECLS
