/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <json-glib/json-glib.h>

#include "analysis/facts.h"

G_BEGIN_DECLS

/*
 * A compact block per guest: CPU, flags that matter, hypervisor, memory,
 * hugepages, THP, NUMA, clocksource, steal, each disk, each NIC, OS.
 * Every number has its unit; what cannot be read shows as "unknown". The
 * view_ functions show the given sections only (the agent version and the
 * count of errors always); the render_ ones show all.
 */
void cli_facts_render_table(GString *out, const char *guest, JsonObject *facts, gboolean color);
void cli_facts_view_table(GString *out, const char *guest, const CliFacts *facts,
                          CliFactsSections sections, gboolean color);

/* CSV: header "guest,section,item,key,value", then one row per guest per fact. */
void cli_facts_render_csv_header(GString *out);
void cli_facts_render_csv_rows(GString *out, const char *guest, JsonObject *facts);
void cli_facts_view_csv_rows(GString *out, const char *guest, const CliFacts *facts,
                             CliFactsSections sections);

G_END_DECLS
