/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <json-glib/json-glib.h>

#include "analysis/facts.h"

G_BEGIN_DECLS

/* Ordered by severity: a bigger value is worse. */
typedef enum {
	CLI_LEVEL_PASS,
	CLI_LEVEL_NOTE,
	CLI_LEVEL_WARN,
	CLI_LEVEL_FAIL,
} CliLevel;
#define CLI_LEVEL_COUNT (CLI_LEVEL_FAIL + 1)

/* One audit finding; all strings owned. subject is e.g. "cpu", "block/vda", "net/eth0". */
typedef struct {
	char *rule;
	CliLevel level;
	char *subject;
	char *detail;
	char *hint; /* NULL when there is nothing to suggest */
} CliFinding;

CliFinding *cli_finding_new(const char *rule, CliLevel level, const char *subject,
                            const char *detail, const char *hint);
void cli_finding_free(CliFinding *finding);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(CliFinding, cli_finding_free)

/* One row of the rules table (rules.c). */
typedef struct {
	const char *id;      /* stable, upper-case, hyphenated */
	CliLevel level;      /* level of the finding when the rule fires */
	const char *summary; /* one line, for --list-rules and docs */
} CliAuditRuleInfo;

/*
 * What the operator requires of every guest (audit --require-level,
 * --require-flags, or the inventory's require_level=, require_flags=).
 */
typedef struct {
	guint isa_level; /* 1..4 for x86-64-v1..v4, of x86 guests; 0: nothing required */
	char **flags;    /* NULL-terminated cpuinfo names, or NULL */
	guint arm_level; /* a gb-isa.h Arm code (80..93) of aarch64 guests; 0: nothing required */
} CliAuditRequire;

/* "x86-64-v3" -> 3; anything else fails naming what is accepted. */
gboolean cli_isa_level_parse(const char *str, guint *level, GError **error);
/*
 * --require-level: a comma list of at most one x86-64 level (-> *isa_level,
 * 1..4) and one Arm level (armv8-a .. armv9.3-a -> *arm_level, a gb-isa.h
 * code); each is 0 when not given. Anything else fails naming what is accepted.
 */
gboolean cli_require_level_parse(const char *list, guint *isa_level, guint *arm_level,
                                 GError **error);
/*
 * Whether an aarch64 guest at level reaches required: has every feature that
 * required makes mandatory. Arm levels are no chain: Armv9.0 reaches Armv8.5
 * but neither Armv8.6 nor Armv9.0 reaches the other (gb_isa_arm_level_meet()).
 */
gboolean cli_arm_level_reaches(guint level, guint required);
/* Every level name --require-level accepts, NULL-terminated (for completion). */
extern const char *const cli_require_level_words[];
/* "avx2,aes" -> a strv of flag names (kernel tokens, no repeats); fails on an empty or bad name. */
char **cli_cpu_flags_parse(const char *list, GError **error);

/* The rules table, in the order the rules run; *n_rules is set to its length. */
const CliAuditRuleInfo *cli_audit_rules(guint *n_rules);

/*
 * Runs every rule on one guest's gb-get-facts result. facts may be NULL or
 * hold anything: what cannot be read is reported as FACTS-ERRORS notes.
 * Returns a new array of CliFinding (never NULL; element free func set).
 */
GPtrArray *cli_audit_run(JsonObject *facts);
/* The same on facts already read (cli_facts_new()). */
GPtrArray *cli_audit_run_facts(const CliFacts *facts);
/* The same with requirements (require may be NULL: nothing required). */
GPtrArray *cli_audit_run_require(const CliFacts *facts, const CliAuditRequire *require);

/* "PASS", "NOTE", "WARN", "FAIL". */
const char *cli_level_to_string(CliLevel level);
/* Case-insensitive; FALSE (out untouched) for anything else. */
gboolean cli_level_from_string(const char *str, CliLevel *out);

/* The worst level in findings; CLI_LEVEL_PASS when there are none. */
CliLevel cli_audit_worst(GPtrArray *findings);

/* A JSON array of {"rule","level","subject","detail","hint"} (hint null when none). */
JsonNode *cli_audit_findings_to_json(GPtrArray *findings);

/*
 * Fleet summary: per rule, how many guests had it at each level (a guest
 * counts once per rule, at its worst level for that rule) and which guests.
 */
typedef struct _CliAuditSummary CliAuditSummary;

/* One rule of the summary: per level, how many guests and which. */
typedef struct {
	char *rule;
	guint counts[CLI_LEVEL_COUNT];
	GPtrArray *guests[CLI_LEVEL_COUNT];
} CliAuditSummaryRule;

/* The summary is read by the renderers (render/audit-view.c). */
struct _CliAuditSummary {
	guint n_guests;         /* audited: their findings are counted */
	GPtrArray *unreachable; /* char *: guests that were not audited (error, timeout) */
	CliLevel worst;
	GPtrArray *rules;  /* CliAuditSummaryRule, in the order first seen */
	GHashTable *by_id; /* rule id -> CliAuditSummaryRule (borrowed) */
};

/* Its rules in table order, then unknown rule ids as first seen (CliAuditSummaryRule). */
GPtrArray *cli_audit_summary_ordered(CliAuditSummary *summary);

CliAuditSummary *cli_audit_summary_new(void);
void cli_audit_summary_free(CliAuditSummary *summary);
void cli_audit_summary_add(CliAuditSummary *summary, const char *guest, GPtrArray *findings);
/* A guest of the fleet that could not be audited: the summary names it, counts nothing of it. */
void cli_audit_summary_add_unreachable(CliAuditSummary *summary, const char *guest);
/*
 * {"guests": N, "worst": LEVEL, "rules": [{"rule", "counts": {"PASS": n, "NOTE": n,
 * "WARN": n, "FAIL": n}, "guests": {"PASS": [...], "NOTE": [...], ...}}]}
 */
JsonNode *cli_audit_summary_to_json(CliAuditSummary *summary);

G_DEFINE_AUTOPTR_CLEANUP_FUNC(CliAuditSummary, cli_audit_summary_free)

G_END_DECLS
