/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/*
 * cpu.vulnerabilities on Windows, in the Linux agent's names and wording
 * (so that the audit's CPU-VULNERABLE rule reads both): what Windows says of
 * its speculative-execution mitigations through NtQuerySystemInformation,
 * SystemSpeculationControlInformation (the flags word) and
 * SystemKernelVaShadowInformation. Only what the flags say is written:
 *   spectre_v2          branch prediction barrier (IBRS/IBPB) on, enhanced
 *                       IBRS, retpolines; or why it is off
 *   spec_store_bypass   SSBD required, on system-wide or for the kernel
 *   mds                 hardware protected, or buffers cleared
 *   meltdown            KVA shadow required, on
 * A member whose flags are not reported is left out.
 */
typedef struct {
	gboolean have_spec; /* SystemSpeculationControlInformation answered */
	guint32 spec;
	gboolean have_kva; /* SystemKernelVaShadowInformation answered */
	guint32 kva;
} AgentWinMitigations;

/* Name, value pairs (a NULL-terminated list of 2n strings), or NULL when neither answered. */
char **agent_win_mitigations_decode(const AgentWinMitigations *m);

/* Asks Windows; FALSE with why in *reason (g_free) when it answers neither. */
gboolean agent_win_mitigations_query(AgentWinMitigations *m, char **reason);

G_END_DECLS
