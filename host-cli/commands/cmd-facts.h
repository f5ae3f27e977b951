/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include "fleet/app.h"

G_BEGIN_DECLS

/* The facts and audit commands (cmd-facts.c: cli_cmd_facts, cli_cmd_audit). */
#define CLI_FACTS_DESCRIPTION                                                        \
	"Asks each guest's agent for gb-get-facts. The table shows the facts that\n" \
	"decide performance; --format json gives the full document, --format csv\n"  \
	"one row per guest and fact."
#define CLI_AUDIT_DESCRIPTION                                                         \
	"Collects each guest's facts and runs the audit rules on them in the CLI,\n"  \
	"so guests with an older agent are audited by the newest rules. Each\n"       \
	"finding names the rule, the subject (cpu, block/vda, net/eth0, ...), what\n" \
	"was seen and the QEMU option or libvirt XML that fixes it. With more\n"      \
	"than one guest a fleet summary follows. With --qmp (one target) or the\n"    \
	"inventory's qmp= the host view joins in; a monitor that cannot be\n"         \
	"reached makes that guest an error.\n"                                        \
	"Exit status 1 when any guest has a FAIL finding."

extern const GOptionEntry cli_facts_entries[];
extern const GOptionEntry cli_audit_entries[];

gboolean cli_facts_prepare(CliApp *app, GPtrArray *args, GError **error);
void cli_facts_start(CliGuest *guest, CliSession *session);
GString *cli_facts_render_text(const CliResults *results, gboolean color);
GString *cli_facts_render_csv(const CliResults *results);
GString *cli_facts_render_prom(const CliResults *results);

gboolean cli_audit_prepare(CliApp *app, GPtrArray *args, GError **error);
void cli_audit_start(CliGuest *guest, CliSession *session);
GString *cli_audit_render_text(const CliResults *results, gboolean color);
GString *cli_audit_render_csv(const CliResults *results);
GString *cli_audit_render_prom(const CliResults *results);

G_END_DECLS
