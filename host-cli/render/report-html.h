/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* What the HTML report's page and its charts share. */

/* Text as HTML character data (also fine inside attribute values). */
void cli_report_escape(GString *out, const char *text);
void cli_report_escape_printf(GString *out, const char *format, ...) G_GNUC_PRINTF(2, 3);
/* The colour of column (document) n, from a palette colour-blind readers tell apart. */
const char *cli_report_color(guint column);

G_END_DECLS
