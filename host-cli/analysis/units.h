/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <json-glib/json-glib.h>

G_BEGIN_DECLS

/* "512 B", "2 MiB", "7.8 GiB": binary units, one decimal when not whole. */
char *cli_format_bytes(guint64 bytes);

/*
 * A parameter's value as a person reads it: numbers in the shortest form that
 * reads back as the same double ("0.3", not "0.29999999999999999"), strings
 * and everything else as JSON ("\"aes-128-gcm\"", [16,64]). Never NULL.
 */
char *cli_format_json_value(JsonNode *node);
/* "812 B/s", "16.3 MB/s", "1.21 GB/s": a rate with an SI prefix, three significant digits. */
char *cli_format_rate(double value, const char *unit);
/* A duration as people say it: "12 s", "4m05s", "2h10m" (rounded up to what is shown). */
char *cli_format_duration(double seconds);

G_END_DECLS
