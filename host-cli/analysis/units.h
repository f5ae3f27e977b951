/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* "512 B", "2 MiB", "7.8 GiB": binary units, one decimal when not whole. */
char *cli_format_bytes(guint64 bytes);

/* "812 B/s", "16.3 MB/s", "1.21 GB/s": a rate with an SI prefix, three significant digits. */
char *cli_format_rate(double value, const char *unit);

G_END_DECLS
