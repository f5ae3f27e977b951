/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* Appends one RFC 4180 field: quoted when it holds a comma, quote, CR or LF. */
void cli_csv_append_field(GString *out, const char *field);

G_END_DECLS
