/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"

#include <math.h>

#include "gb-bench-limits.h"
#include "gb-error.h"

const gint64 gb_bench_aes_default_sizes[6] = { 16, 64, 256, 1024, 8192, 16384 };

const gint64 gb_bench_disk_default_records[3] = { 4096, G_GINT64_CONSTANT(4) * 1024 * 1024,
	                                          G_GINT64_CONSTANT(16) * 1024 * 1024 };

char *gb_bench_format_size(guint64 bytes)
{
	if (bytes >= (G_GUINT64_CONSTANT(1) << 30) && bytes % (G_GUINT64_CONSTANT(1) << 30) == 0)
		return g_strdup_printf("%" G_GUINT64_FORMAT "G", bytes >> 30);
	if (bytes >= (G_GUINT64_CONSTANT(1) << 20) && bytes % (G_GUINT64_CONSTANT(1) << 20) == 0)
		return g_strdup_printf("%" G_GUINT64_FORMAT "M", bytes >> 20);
	if (bytes >= 1024 && bytes % 1024 == 0)
		return g_strdup_printf("%" G_GUINT64_FORMAT "k", bytes >> 10);
	return g_strdup_printf("%" G_GUINT64_FORMAT, bytes);
}

/* "1048576 (1M)" when the short form differs, so both spellings of a limit can be found. */
static char *gb_bench_show_size(gint64 bytes)
{
	g_autofree char *text = NULL;

	if (bytes < 0)
		return g_strdup_printf("%" G_GINT64_FORMAT, bytes);
	text = gb_bench_format_size((guint64)bytes);
	if (g_ascii_string_to_signed(text, 10, G_MININT64, G_MAXINT64, NULL, NULL))
		return g_steal_pointer(&text);
	return g_strdup_printf("%" G_GINT64_FORMAT " (%s)", bytes, text);
}

gboolean gb_bench_check_aes_sizes(const gint64 *sizes, guint n_sizes, GError **error)
{
	if (n_sizes == 0 || n_sizes > GB_BENCH_AES_MAX_SIZES) {
		g_set_error(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT,
		            "%u block sizes given (allowed 1..%d)", n_sizes,
		            GB_BENCH_AES_MAX_SIZES);
		return FALSE;
	}
	for (guint i = 0; i < n_sizes; i++) {
		if (sizes[i] < 1 || sizes[i] > GB_BENCH_AES_MAX_SIZE) {
			g_autofree char *shown = gb_bench_show_size(sizes[i]);
			g_set_error(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT,
			            "block size %s is out of range (allowed 1..%d)", shown,
			            GB_BENCH_AES_MAX_SIZE);
			return FALSE;
		}
	}
	return TRUE;
}

gboolean gb_bench_check_aes_seconds(double seconds, GError **error)
{
	if (!isfinite(seconds) || seconds < GB_BENCH_AES_MIN_SECONDS ||
	    seconds > GB_BENCH_MAX_SECONDS) {
		g_set_error(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT,
		            "%g seconds is out of range (allowed %g..%d)", seconds,
		            GB_BENCH_AES_MIN_SECONDS, GB_BENCH_MAX_SECONDS);
		return FALSE;
	}
	return TRUE;
}

gboolean gb_bench_check_disk_size(gint64 size, GError **error)
{
	if (size < GB_BENCH_DISK_MIN_SIZE) {
		g_autofree char *shown = gb_bench_show_size(size);
		g_set_error(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT,
		            "file size %s is too small (at least 4k)", shown);
		return FALSE;
	}
	return TRUE;
}

gboolean gb_bench_check_disk_records(const gint64 *records, guint n_records, gint64 size,
                                     gboolean size_given, GError **error)
{
	if (n_records == 0 || n_records > GB_BENCH_DISK_MAX_RECORDS) {
		g_set_error(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT,
		            "%u record sizes given (allowed 1..%d)", n_records,
		            GB_BENCH_DISK_MAX_RECORDS);
		return FALSE;
	}
	for (guint i = 0; i < n_records; i++) {
		gint64 rec = records[i];
		g_autofree char *shown = gb_bench_show_size(rec);

		if (rec < GB_BENCH_DISK_MIN_RECORD || rec > GB_BENCH_DISK_MAX_RECORD ||
		    rec % GB_BENCH_DISK_MIN_RECORD != 0) {
			g_set_error(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT,
			            "record size %s is not a multiple of 512 bytes from 512 to 64M",
			            shown);
			return FALSE;
		}
		if (rec > size) {
			g_autofree char *size_shown = gb_bench_show_size(size);
			g_set_error(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT,
			            "record size %s is larger than the %sfile size %s", shown,
			            size_given ? "" : "default ", size_shown);
			return FALSE;
		}
		for (guint j = 0; j < i; j++) {
			if (records[j] == rec) {
				g_set_error(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT,
				            "record size %s is given twice", shown);
				return FALSE;
			}
		}
	}
	return TRUE;
}

gboolean gb_bench_check_mem_size(gint64 size, GError **error)
{
	g_autofree char *shown = gb_bench_show_size(size);

	if (size < GB_BENCH_MEM_MIN_SIZE) {
		g_set_error(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT,
		            "buffer size %s is too small (at least 1M)", shown);
		return FALSE;
	}
	if (size % GB_BENCH_MEM_PAGE != 0) {
		g_set_error(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT,
		            "buffer size %s is not a multiple of 4096 bytes", shown);
		return FALSE;
	}
	return TRUE;
}
