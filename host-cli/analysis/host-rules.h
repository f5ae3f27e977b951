/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include "analysis/audit.h"

G_BEGIN_DECLS

/*
 * HOST-* findings: what only the host can see about a guest, joined with the
 * guest's own facts. Pure functions over JSON: host_view is the object from
 * cli_hostview_build() (hostview.h), guest_facts the gb-get-facts result (may
 * be NULL: rules that need it are skipped). Both are read through gb_json_*
 * only, so anything malformed is a HOST-VIEW-ERRORS note, never a crash.
 * Returns a new array of CliFinding (never NULL; element free func set).
 *
 * One finding uses the guest rule id CPU-NO-AESNI: the same finding as the
 * guest audit's, upgraded with what the host offers (see cli_host_rules_merge()).
 */
GPtrArray *cli_host_rules_run(JsonObject *guest_facts, JsonObject *host_view);
/* The same on guest facts already read (cli_facts_new(); an empty document when there are none). */
GPtrArray *cli_host_rules_run_facts(const CliFacts *guest_facts, JsonObject *host_view);

/*
 * The speculation-control flags a named CPU model may hide from a guest, as
 * /proc/cpuinfo names them (QEMU's properties spell them with '-'),
 * NULL-terminated. The host view offers them and HOST-CPU-HIDDEN lists them.
 */
extern const char *const cli_host_spec_ctrl_flags[];

/* The HOST-* rules table, in run order; *n_rules is set to its length. */
const CliAuditRuleInfo *cli_host_rules(guint *n_rules);

/*
 * Joins host findings into the guest audit's findings: a host finding whose
 * rule and subject equal an existing one replaces it in place (the upgraded
 * CPU-NO-AESNI), the others are appended. host_findings is emptied.
 */
void cli_host_rules_merge(GPtrArray *findings, GPtrArray *host_findings);

G_END_DECLS
