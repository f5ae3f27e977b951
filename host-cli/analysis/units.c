/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"

#include <math.h>

#include "analysis/units.h"
#include "gb-json.h"

char *cli_format_bytes(guint64 bytes)
{
	const char *const units[] = { "KiB", "MiB", "GiB", "TiB", "PiB", "EiB" };
	double value = (double)bytes;
	guint unit = 0;

	if (bytes < 1024)
		return g_strdup_printf("%" G_GUINT64_FORMAT " B", bytes);
	value /= 1024.0;
	while (value >= 1024.0 && unit + 1 < G_N_ELEMENTS(units)) {
		value /= 1024.0;
		unit++;
	}
	/* whole numbers stay whole ("2 MiB"); others get one decimal ("7.8 GiB") */
	if (bytes % (G_GUINT64_CONSTANT(1) << (10 * (unit + 1))) == 0)
		return g_strdup_printf("%.0f %s", value, units[unit]);
	return g_strdup_printf("%.1f %s", value, units[unit]);
}

/* The fewest significant digits (%g style) that read back as exactly value. */
static void format_double_shortest(GString *out, double value)
{
	char buf[G_ASCII_DTOSTR_BUF_SIZE];

	if (!isfinite(value)) {
		g_string_append(out, "null");
		return;
	}
	for (int precision = 1; precision <= 17; precision++) {
		char format[8];

		g_snprintf(format, sizeof(format), "%%.%dg", precision);
		g_ascii_formatd(buf, sizeof(buf), format, value);
		if (g_ascii_strtod(buf, NULL) == value)
			break;
	}
	g_string_append(out, buf);
}

static void format_json_value(GString *out, JsonNode *node)
{
	if (JSON_NODE_HOLDS_VALUE(node) && json_node_get_value_type(node) == G_TYPE_DOUBLE) {
		format_double_shortest(out, json_node_get_double(node));
	} else if (JSON_NODE_HOLDS_ARRAY(node)) {
		JsonArray *array = json_node_get_array(node);

		g_string_append_c(out, '[');
		for (guint i = 0; i < json_array_get_length(array); i++) {
			if (i > 0)
				g_string_append_c(out, ',');
			format_json_value(out, json_array_get_element(array, i));
		}
		g_string_append_c(out, ']');
	} else {
		g_autofree char *text = gb_json_to_string(node, NULL);
		g_string_append(out, text);
	}
}

char *cli_format_json_value(JsonNode *node)
{
	GString *out = g_string_new(NULL);

	format_json_value(out, node);
	return g_string_free(out, FALSE);
}

char *cli_format_rate(double value, const char *unit)
{
	const char *const prefixes[] = { "", "k", "M", "G", "T", "P" };
	guint i = 0;

	while (value >= 999.5 && i + 1 < G_N_ELEMENTS(prefixes)) {
		value /= 1000.0;
		i++;
	}
	/* the unit's own prefix goes first: "B/s" -> "MB/s", "IO/s" -> "kIO/s" */
	if (value >= 99.5 || i == 0)
		return g_strdup_printf("%.0f %s%s", value, prefixes[i], unit);
	if (value >= 9.95)
		return g_strdup_printf("%.1f %s%s", value, prefixes[i], unit);
	return g_strdup_printf("%.2f %s%s", value, prefixes[i], unit);
}

char *cli_format_duration(double seconds)
{
	double s = ceil(MAX(seconds, 0.0));

	if (s < 60)
		return g_strdup_printf("%.0f s", s);
	if (s < 3600)
		return g_strdup_printf("%.0fm%02.0fs", floor(s / 60), fmod(s, 60));
	s = ceil(s / 60) * 60;
	return g_strdup_printf("%.0fh%02.0fm", floor(s / 3600), floor(fmod(s, 3600) / 60));
}
