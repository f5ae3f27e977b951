/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include "analysis/audit.h"
#include "analysis/facts.h"

G_BEGIN_DECLS

/*
 * A Proxmox VE VM's audit: its config (the host view's "pve" member, see
 * fleet/pve.h cli_pve_vm_to_json()) joined with what the guest sees. Every
 * finding that a config change fixes gets that change in PVE's words (qm set
 * VMID ..., a cpu-models.conf entry), and PVE-* findings are added:
 *   PVE-CPU-AES-NO-PCLMUL  the type gives aes but not pclmulqdq (x86-64-v2-AES):
 *                          GHASH in software; replaces CPU-NO-AESNI for that case
 *   PVE-DISK-IOTHREAD      a disk without its own I/O thread
 *   PVE-NUMA               several vCPUs on a NUMA host without numa: 1
 *   PVE-CPU-TYPE           the CPU type as PVE resolves it (kvm64 when unset)
 * Pure: reads JSON through gb_json_*; malformed input is skipped, never a crash.
 * Does nothing when view has no "pve" member.
 */
void cli_pve_rules_apply(GPtrArray *findings, const CliFacts *facts, JsonObject *view);

/* The PVE-* rules, for --list-rules; *n_rules is set to its length. */
const CliAuditRuleInfo *cli_pve_rules(guint *n_rules);

G_END_DECLS
