/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <json-glib/json-glib.h>

G_BEGIN_DECLS

/* Ordered by severity: a bigger value is worse. */
typedef enum {
	CLI_LEVEL_PASS,
	CLI_LEVEL_NOTE,
	CLI_LEVEL_WARN,
	CLI_LEVEL_FAIL,
} CliLevel;

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

/* The rules table, in the order the rules run; *n_rules is set to its length. */
const CliAuditRuleInfo *cli_audit_rules(guint *n_rules);

/*
 * Runs every rule on one guest's gb-get-facts result. facts may be NULL or
 * hold anything: what cannot be read is reported as FACTS-ERRORS notes.
 * Returns a new array of CliFinding (never NULL; element free func set).
 */
GPtrArray *cli_audit_run(JsonObject *facts);

/* "PASS", "NOTE", "WARN", "FAIL". */
const char *cli_level_to_string(CliLevel level);
/* Case-insensitive; FALSE (out untouched) for anything else. */
gboolean cli_level_from_string(const char *str, CliLevel *out);

/* The worst level in findings; CLI_LEVEL_PASS when there are none. */
CliLevel cli_audit_worst(GPtrArray *findings);

/* A JSON array of {"rule","level","subject","detail","hint"} (hint null when none). */
JsonNode *cli_audit_findings_to_json(GPtrArray *findings);

/*
 * Aligned text, one line per finding ("guest  LEVEL  RULE  subject  detail"),
 * the hint on an indented line below it. Guest-provided text is escaped.
 * ANSI colours only when color is TRUE. only_warn_fail hides PASS and NOTE.
 */
void cli_audit_render_table(GString *out, const char *guest, GPtrArray *findings, gboolean color,
                            gboolean only_warn_fail);

/* CSV (RFC 4180 quoting, "\n" line ends): the header line, then one row per finding. */
void cli_audit_render_csv_header(GString *out);
void cli_audit_render_csv_rows(GString *out, const char *guest, GPtrArray *findings);

/* Appends one RFC 4180 field: quoted when it holds a comma, quote, CR or LF. */
void cli_csv_append_field(GString *out, const char *field);

/*
 * Fleet summary: per rule, how many guests had it at each level (a guest
 * counts once per rule, at its worst level for that rule) and which guests.
 */
typedef struct _CliAuditSummary CliAuditSummary;

CliAuditSummary *cli_audit_summary_new(void);
void cli_audit_summary_free(CliAuditSummary *summary);
void cli_audit_summary_add(CliAuditSummary *summary, const char *guest, GPtrArray *findings);
/* Rules in table order, then any other rule ids in the order first seen. */
void cli_audit_summary_render_table(CliAuditSummary *summary, GString *out);
/*
 * {"guests": N, "worst": LEVEL, "rules": [{"rule", "counts": {"PASS": n, "NOTE": n,
 * "WARN": n, "FAIL": n}, "guests": {"PASS": [...], "NOTE": [...], ...}}]}
 */
JsonNode *cli_audit_summary_to_json(CliAuditSummary *summary);

G_DEFINE_AUTOPTR_CLEANUP_FUNC(CliAuditSummary, cli_audit_summary_free)

G_END_DECLS
