/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The benchmarks' parameter limits both ends check with: edges and bad values. */
#include "config.h"

#include <math.h>
#include <string.h>

#include "guestbench-protocol.h"

#define MIB (G_GINT64_CONSTANT(1) << 20)

/* error is read through its address: the call that sets it is an argument too. */
static void assert_refused(gboolean ok, GError **error, const char *want)
{
	g_assert_false(ok);
	g_assert_error(*error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT);
	if (strstr((*error)->message, want) == NULL)
		g_test_message("'%s' lacks '%s'", (*error)->message, want);
	g_assert_nonnull(strstr((*error)->message, want));
	g_clear_error(error);
}

static void test_format_size(void)
{
	struct {
		guint64 bytes;
		const char *want;
	} cases[] = {
		{ 1, "1" },
		{ 512, "512" },
		{ 1000, "1000" },
		{ 1024, "1k" },
		{ 1536, "1536" },
		{ 4096, "4k" },
		{ 1049600, "1025k" },
		{ 1048576, "1M" },
		{ 3 * MIB, "3M" },
		{ 1 << 30, "1G" },
		{ (guint64)100 << 30, "100G" },
	};

	for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
		g_autofree char *text = gb_bench_format_size(cases[i].bytes);
		g_assert_cmpstr(text, ==, cases[i].want);
	}
}

static void test_aes(void)
{
	const gint64 ok_edges[] = { 1, GB_BENCH_AES_MAX_SIZE };
	const gint64 sixteen[16] = {
		16, 16, 16, 16, 16, 16, 16, 16, 16, 16, 16, 16, 16, 16, 16, 16
	};
	const gint64 seventeen[17] = { 16 };
	struct {
		gint64 size;
		const char *want;
	} bad_sizes[] = {
		{ 0, "block size 0 is out of range (allowed 1..1048576)" },
		{ -16, "block size -16 is out of range" },
		{ GB_BENCH_AES_MAX_SIZE + 1, "block size 1048577 is out of range" },
		{ 2 * MIB, "block size 2097152 (2M) is out of range" },
	};
	GError *error = NULL;

	g_assert_true(gb_bench_check_aes_sizes(ok_edges, G_N_ELEMENTS(ok_edges), &error));
	g_assert_true(gb_bench_check_aes_sizes(sixteen, 16, &error));
	g_assert_no_error(error);
	assert_refused(gb_bench_check_aes_sizes(sixteen, 0, &error), &error,
	               "0 block sizes given (allowed 1..16)");
	assert_refused(gb_bench_check_aes_sizes(seventeen, 17, &error), &error,
	               "17 block sizes given (allowed 1..16)");
	for (guint i = 0; i < G_N_ELEMENTS(bad_sizes); i++) {
		assert_refused(gb_bench_check_aes_sizes(&bad_sizes[i].size, 1, &error), &error,
		               bad_sizes[i].want);
	}

	g_assert_true(gb_bench_check_aes_seconds(GB_BENCH_AES_MIN_SECONDS, &error));
	g_assert_true(gb_bench_check_aes_seconds(3, &error));
	g_assert_true(gb_bench_check_aes_seconds(GB_BENCH_MAX_SECONDS, &error));
	g_assert_no_error(error);
	assert_refused(gb_bench_check_aes_seconds(0.05, &error), &error,
	               "0.05 seconds is out of range (allowed 0.1..604800)");
	assert_refused(gb_bench_check_aes_seconds(0.0999, &error), &error, "allowed 0.1..");
	assert_refused(gb_bench_check_aes_seconds(0, &error), &error, "out of range");
	assert_refused(gb_bench_check_aes_seconds(-1, &error), &error, "out of range");
	assert_refused(gb_bench_check_aes_seconds(GB_BENCH_MAX_SECONDS + 1, &error), &error,
	               "out of range");
	assert_refused(gb_bench_check_aes_seconds(NAN, &error), &error, "out of range");
	assert_refused(gb_bench_check_aes_seconds(INFINITY, &error), &error, "out of range");
}

static void test_disk(void)
{
	const gint64 edges[] = { 512, GB_BENCH_DISK_MAX_RECORD };
	const gint64 sixteen[16] = { 512,  1024, 1536, 2048, 2560, 3072, 3584, 4096,
		                     4608, 5120, 5632, 6144, 6656, 7168, 7680, 8192 };
	const gint64 seventeen[17] = { 512 };
	struct {
		gint64 record;
		const char *want;
	} bad_records[] = {
		{ 3, "record size 3 is not a multiple of 512 bytes from 512 to 64M" },
		{ 0, "record size 0 is not a multiple of 512" },
		{ -512, "record size -512 is not a multiple of 512" },
		{ 1000, "record size 1000 is not a multiple of 512" },
		{ 256, "record size 256 is not a multiple of 512" },
		{ GB_BENCH_DISK_MAX_RECORD + 512,
		  "record size 67109376 is not a multiple of 512 bytes from 512 to 64M" },
		{ 128 * MIB, "record size 134217728 (128M) is not a multiple" },
	};
	const gint64 twice[] = { 4096, 8192, 4096 };
	const gint64 big = 16 * MIB;
	GError *error = NULL;

	g_assert_true(gb_bench_check_disk_size(GB_BENCH_DISK_MIN_SIZE, &error));
	g_assert_true(gb_bench_check_disk_size(G_MAXINT64, &error));
	g_assert_no_error(error);
	assert_refused(gb_bench_check_disk_size(1024, &error), &error,
	               "file size 1024 (1k) is too small (at least 4k)");
	assert_refused(gb_bench_check_disk_size(4095, &error), &error,
	               "file size 4095 is too small");
	assert_refused(gb_bench_check_disk_size(0, &error), &error, "too small");

	g_assert_true(
	    gb_bench_check_disk_records(edges, 2, GB_BENCH_DISK_MAX_RECORD, TRUE, &error));
	g_assert_true(gb_bench_check_disk_records(sixteen, 16, 8192, TRUE, &error));
	g_assert_true(gb_bench_check_disk_records(gb_bench_disk_default_records, 3,
	                                          GB_BENCH_DISK_DEFAULT_SIZE, FALSE, &error));
	g_assert_no_error(error);
	for (guint i = 0; i < G_N_ELEMENTS(bad_records); i++) {
		assert_refused(gb_bench_check_disk_records(&bad_records[i].record, 1, G_MAXINT64,
		                                           TRUE, &error),
		               &error, bad_records[i].want);
	}
	assert_refused(gb_bench_check_disk_records(sixteen, 0, G_MAXINT64, TRUE, &error), &error,
	               "0 record sizes given (allowed 1..16)");
	assert_refused(gb_bench_check_disk_records(seventeen, 17, G_MAXINT64, TRUE, &error), &error,
	               "17 record sizes given (allowed 1..16)");
	assert_refused(gb_bench_check_disk_records(twice, 3, G_MAXINT64, TRUE, &error), &error,
	               "record size 4096 (4k) is given twice");
	/* the relation to the file size: equal is fine, one byte less is not */
	g_assert_true(gb_bench_check_disk_records(&big, 1, big, TRUE, &error));
	g_assert_no_error(error);
	assert_refused(gb_bench_check_disk_records(&big, 1, big - 1, TRUE, &error), &error,
	               "record size 16777216 (16M) is larger than the file size 16777215");
	/* --size 1M with the default records */
	assert_refused(
	    gb_bench_check_disk_records(gb_bench_disk_default_records, 3, MIB, TRUE, &error),
	    &error, "record size 4194304 (4M) is larger than the file size 1048576 (1M)");
	assert_refused(gb_bench_check_disk_records(&big, 1, 8 * MIB, FALSE, &error), &error,
	               "larger than the default file size 8388608 (8M)");
}

static void test_mem(void)
{
	GError *error = NULL;

	g_assert_true(gb_bench_check_mem_size(GB_BENCH_MEM_MIN_SIZE, &error));
	g_assert_true(gb_bench_check_mem_size(GB_BENCH_MEM_DEFAULT_SIZE, &error));
	g_assert_true(gb_bench_check_mem_size(MIB + 4096, &error));
	g_assert_no_error(error);
	assert_refused(gb_bench_check_mem_size(1024, &error), &error,
	               "buffer size 1024 (1k) is too small (at least 1M)");
	assert_refused(gb_bench_check_mem_size(MIB - 4096, &error), &error, "too small");
	assert_refused(gb_bench_check_mem_size(MIB + 1024, &error), &error,
	               "buffer size 1049600 (1025k) is not a multiple of 4096 bytes");
	assert_refused(gb_bench_check_mem_size(-MIB, &error), &error, "too small");
}

int main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	g_test_add_func("/bench-limits/format-size", test_format_size);
	g_test_add_func("/bench-limits/aes", test_aes);
	g_test_add_func("/bench-limits/disk", test_disk);
	g_test_add_func("/bench-limits/mem", test_mem);
	return g_test_run();
}
