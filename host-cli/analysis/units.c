/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"

#include "analysis/units.h"

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
