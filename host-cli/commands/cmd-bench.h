/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include "commands/bench-args.h"
#include "fleet/app.h"
#include "render/bench-view.h"

G_BEGIN_DECLS

/* The bench command (cmd-bench.c, which defines cli_cmd_bench). */
#define CLI_BENCH_DESCRIPTION                                                          \
	"Runs one benchmark in every guest as an agent job, one guest at a time per\n" \
	"hypervisor (guests that share one compete for its cores, memory and disks;\n" \
	"hypervisors run in parallel; --per-host N allows N at once), and says the\n"  \
	"rounds and about how long first. Each result carries labels.hypervisor,\n"    \
	"labels.concurrent and the guest's CPU busy/steal % over the second before\n"  \
	"(marked NOT IDLE above 20 %). --contention runs each guest alone, then all\n" \
	"of a hypervisor's at once: solo, loaded and their ratio.\n"                   \
	"A job is gb-bench-start,\n"                                                   \
	"then gb-bench-status every 250 ms (live progress on a terminal); --timeout\n" \
	"bounds each step. The whole job is bounded by 2 x the work it asks for\n"     \
	"+ 30 s (aes: sizes x seconds; disk: its passes at 1 MiB/s; mem: 2 s + size\n" \
	"at 64 MiB/s per page kind; net: 30 s + omit + seconds; times runs): then\n"   \
	"it is cancelled and the guest ends as timeout. Ctrl-C cancels the jobs in\n"  \
	"the guests and prints what they had measured, marked partial (exit status\n"  \
	"130).\n"                                                                      \
	"Sizes take k, M, G (binary: 4k = 4096). Each run is saved as its JSON\n"      \
	"document under $XDG_DATA_HOME/guestbench/results/ (see 'results').\n"         \
	"net: either --guest-listen [ADDR:]PORT --connect ADDR:PORT (the agent\n"      \
	"listens, the CLI connects to ADDR:PORT, e.g. a QEMU hostfwd port) or\n"       \
	"--host-listen ADDR:PORT [--guest-connect ADDR:PORT] (the CLI listens, the\n"  \
	"agent connects). With several guests, guest N (0-based, in target order)\n"   \
	"uses each given PORT + N."
extern const GOptionEntry cli_bench_entries[];

gboolean cli_bench_prepare(CliApp *app, GPtrArray *args, GError **error);
void cli_bench_start(CliGuest *guest, CliSession *session);
void cli_bench_cancel(CliGuest *guest, CliSession *session);
GString *cli_bench_render_text(const CliResults *results, gboolean color);
GString *cli_bench_render_csv(const CliResults *results);
GString *cli_bench_render_prom(const CliResults *results);
void cli_bench_finished(CliApp *app);

/* ---- helpers, public for the unit tests ---------------------------------------------- */

G_END_DECLS
