/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <glib.h>

#include "render/results.h"

G_BEGIN_DECLS

/*
 * Prometheus text exposition format (0.0.4), as node_exporter's textfile
 * collector reads it: per family one "# HELP" and one "# TYPE" line, then its
 * samples "name{label="value",...} VALUE\n". Every metric of one family must
 * be written together, after its HELP/TYPE lines.
 */

/*
 * Label value escaping: what a terminal must not get (controls, bidi marks,
 * invalid bytes) is written as cli_escape_terminal() shows it, then backslash
 * and double quote are escaped; the value never holds a raw newline.
 */
char *cli_prom_escape_label(const char *value);
/* Metric and label names: [a-zA-Z_:][a-zA-Z0-9_:]* (labels: no ':'). */
gboolean cli_prom_is_metric_name(const char *name);
gboolean cli_prom_is_label_name(const char *name);
/* "# HELP name help" (help escaped: backslash and newline) and "# TYPE name type". */
void cli_prom_family(GString *out, const char *name, const char *type, const char *help);
/*
 * One sample line. The variadic labels: label name, value, name, value, ...,
 * NULL (values are escaped here; a NULL value is written as ""); samplev
 * takes the same pairs as an array, NULL-terminated, values not NULL. NaN
 * and the infinities are written as Prometheus spells them.
 */
void cli_prom_sample(GString *out, const char *name, double value, ...) G_GNUC_NULL_TERMINATED;
void cli_prom_samplev(GString *out, const char *name, const char *const *labels, double value);
/*
 * Removes every sample line whose series (name and labels) appeared on an
 * earlier line: node_exporter refuses a whole file with a duplicated series.
 * Guests can repeat a disk, a NIC or a sample; the first one stays.
 */
void cli_prom_drop_duplicates(GString *doc);
/*
 * The "guestbench_up" family (1 for every guest that is ok, 0 for error and
 * timeout, no sample for a busy guest) and "guestbench_busy" (1 for a busy
 * guest, 0 for the others).
 */
void cli_prom_append_up(GString *out, const CliResults *results);

G_END_DECLS
