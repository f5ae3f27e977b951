/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <glib.h>
#include <json-glib/json-glib.h>

#include "agent.h"

G_BEGIN_DECLS

/*
 * Reads CPUID leaf/subleaf into regs (eax, ebx, ecx, edx). Returns FALSE when
 * CPUID is not available (not x86). Tests pass a fake built from a fixture.
 */
typedef gboolean (*AgentCpuidFunc)(guint32 leaf, guint32 subleaf, guint32 regs[4],
                                   gpointer user_data);

typedef struct {
	const char *sysroot;  /* every file is read under this root */
	AgentCpuidFunc cpuid; /* NULL = the real instruction */
	gpointer cpuid_data;
	guint steal_window_ms; /* /proc/stat is sampled twice this far apart; 0 = once */
	/*
	 * Instead of sleeping steal_window_ms, measure from the previous sample of
	 * this process (agent_facts_steal_prime() or an earlier request) when it is
	 * at least steal_window_ms old, so a request does not stall the main loop.
	 */
	gboolean steal_since_previous;
	JsonArray *errors; /* collectors append {"member", "reason"} here */
} AgentFactsContext;

/*
 * One collector per file (cpu.c, memory.c, clock.c, block.c, net.c, os.c).
 * Returns the member's value (owned, never NULL: a json null on total failure)
 * and records every degraded sub-member in ctx->errors. Never fails the call.
 */
typedef JsonNode *(*AgentFactsCollector)(AgentFactsContext *ctx);

JsonNode *agent_facts_collect_cpu(AgentFactsContext *ctx);
JsonNode *agent_facts_collect_memory(AgentFactsContext *ctx);
JsonNode *agent_facts_collect_clocksource(AgentFactsContext *ctx);
JsonNode *agent_facts_collect_steal(AgentFactsContext *ctx);
/* Takes the first steal sample at start-up (under sysroot); errors are ignored. */
void agent_facts_steal_prime(const char *sysroot);
/*
 * The same from a sample another process took: line is the first line of
 * /proc/stat under sysroot, read at taken_us (g_get_monotonic_time(), which
 * all processes share). FALSE with an error for a line that is not one.
 */
gboolean agent_facts_steal_prime_line(const char *sysroot, const char *line, gint64 taken_us,
                                      GError **error);
/*
 * The CPU load of the whole system over window_ms from now (sleeps that long, in
 * 10 ms slices that stop early once the atomic *cancel, if given, is set): busy (not
 * idle nor iowait) and steal, in % of all ticks, from /proc/stat under sysroot.
 */
gboolean agent_facts_cpu_load(const char *sysroot, guint window_ms, gint *cancel,
                              double *busy_percent, double *steal_percent, GError **error);
JsonNode *agent_facts_collect_block(AgentFactsContext *ctx);
JsonNode *agent_facts_collect_net(AgentFactsContext *ctx);
JsonNode *agent_facts_collect_os(AgentFactsContext *ctx);

/*
 * Runs the collectors named in sections (NULL = all) and returns the facts
 * object (owned) with an "errors" array. Fails only on an unknown section name.
 */
JsonNode *agent_facts_collect(AgentFactsContext *ctx, const char *const *sections, GError **error);

/* The gb-get-facts command handler. */
JsonNode *agent_cmd_get_facts(AgentContext *agent, JsonObject *args, GError **error);

G_END_DECLS
