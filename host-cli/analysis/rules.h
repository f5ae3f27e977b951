/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include "analysis/audit.h"
#include "analysis/facts.h"

G_BEGIN_DECLS

/*
 * What the audit rules share (rules.c and rules-*.c; nothing outside them
 * includes this). A rule reads ctx->facts, and says through cli_rule_need*()
 * which members it needs: a needed member that is absent, null without an
 * agent error, or of the wrong type is noted, and FACTS-ERRORS reports it
 * with the rules that needed it.
 */

typedef struct _CliAuditCtx CliAuditCtx;

struct _CliAuditCtx {
	const CliFacts *facts;
	GPtrArray *findings;
	GHashTable *reported; /* "member" of each agent "errors" entry (rules.c) */
	GPtrArray *unknown;   /* CliRuleUnknown, in the order first met */
	GHashTable *unknown_by_path;
	const CliAuditRuleInfo *rule;   /* the rule running now */
	const CliAuditRequire *require; /* never NULL */
};

/*
 * TRUE when the member holds a value. nullable: absent or null is a normal
 * answer (e.g. "model_name": null on aarch64) and not noted; a wrong type
 * always is. A member under an unreadable object is not noted again.
 */
gboolean cli_rule_need(CliAuditCtx *ctx, const CliFact *fact, gboolean nullable);
/* The same, and a value outside min..max is noted like a wrong type. */
gboolean cli_rule_need_int(CliAuditCtx *ctx, const CliFactInt *fact, gboolean nullable, gint64 min,
                           gint64 max, gint64 *out);
gboolean cli_rule_need_double(CliAuditCtx *ctx, const CliFactDouble *fact, gboolean nullable,
                              double min, double max, double *out);
/* Not nullable; every element within min..max. */
gboolean cli_rule_need_int_array(CliAuditCtx *ctx, const CliFactIntArray *fact, gint64 min,
                                 gint64 max);
/* A member that was read but cannot be right (no CPU has no flags): noted unless reported. */
void cli_rule_note(CliAuditCtx *ctx, const CliFact *fact);

/*
 * Needs a list section: the list itself, each element as an object (an
 * element that is not one is always noted) and, when name_offset >= 0, each
 * element's name (the CliFactString at that offset of the element struct).
 * Returns how many elements are objects; *n_bad (may be NULL) is set to the
 * number that are not, or 1 when the list itself is of the wrong type.
 */
guint cli_rule_need_items(CliAuditCtx *ctx, const CliFactsList *list, gboolean nullable,
                          gssize name_offset, guint *n_bad);
/* "block/vda" for a named element, else its path "block[2]". */
char *cli_rule_item_subject(const CliFactsNode *node, const CliFactString *name,
                            const char *section);

void cli_rule_emit(CliAuditCtx *ctx, CliLevel level, const char *subject, const char *detail,
                   const char *hint);
/* The rule fires at its table level. */
void cli_rule_fire(CliAuditCtx *ctx, const char *subject, const char *detail, const char *hint);
void cli_rule_pass(CliAuditCtx *ctx, const char *subject, const char *detail);

gboolean cli_rule_strv_has(char *const *strv, const char *str);
gboolean cli_rule_str_in(const char *str, const char *const *list);

/* Reads cpu.hypervisor (noting what cannot be read): FALSE when unreadable. */
gboolean cli_rule_need_hypervisor(CliAuditCtx *ctx, gboolean *present, const char **vendor_out);

/* The rules, by area (rules-cpu.c, rules-io.c, rules-system.c); the table is in rules.c. */
void cli_rule_cpu_legacy_model(CliAuditCtx *ctx);
void cli_rule_cpu_no_aesni(CliAuditCtx *ctx);
void cli_rule_cpu_missing_simd(CliAuditCtx *ctx);
void cli_rule_cpu_nested_exposed(CliAuditCtx *ctx);
void cli_rule_cpu_hypervisor(CliAuditCtx *ctx);
void cli_rule_cpu_isa_level(CliAuditCtx *ctx);
void cli_rule_cpu_required_flags(CliAuditCtx *ctx);
void cli_rule_cpu_vulnerable(CliAuditCtx *ctx);
void cli_rule_disk_emulated(CliAuditCtx *ctx);
void cli_rule_disk_write_through(CliAuditCtx *ctx);
void cli_rule_disk_scheduler(CliAuditCtx *ctx);
void cli_rule_nic_emulated(CliAuditCtx *ctx);
void cli_rule_nic_single_queue(CliAuditCtx *ctx);
void cli_rule_clock_source(CliAuditCtx *ctx);
void cli_rule_numa_memoryless_node(CliAuditCtx *ctx);
void cli_rule_numa_span(CliAuditCtx *ctx);
void cli_rule_hugepages(CliAuditCtx *ctx);
void cli_rule_steal_time(CliAuditCtx *ctx);

G_END_DECLS
