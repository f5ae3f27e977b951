/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The disk benchmark on a real filesystem under /var/tmp, with small sizes:
 * mechanics only, never speed.
 */

#include "config.h"

#include <errno.h>
#include <gio/gio.h>
#include <glib/gstdio.h>
#include <linux/magic.h>
#include <math.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <signal.h>
#include <sys/statfs.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"
#include "gb-test-emulated.h"
#include "guestbench-protocol.h"

/* qemu 7.2 user mode leaves statx's stx_dio_*_align at 0: "no O_DIRECT". */
#define NO_DIRECT_EMULATED "qemu-user gives no statx direct I/O alignment"

#define MIB (1024 * 1024)

typedef struct {
	AgentConfig config;
	char *scratch;
	char *mnt; /* loop mount to unmount in teardown, if any */
	char *img;
	GMutex lock;
	double last_fraction;
	gboolean monotonic;
	guint progress_calls;
} Fixture;

static void fixture_setup(Fixture *f, gconstpointer data)
{
	/* not $TMPDIR: the disk tests want a real disk, /var/tmp */
	f->scratch = g_strdup("/var/tmp/gb-test-disk-XXXXXX");
	g_assert_nonnull(g_mkdtemp(f->scratch));
	f->config.scratch_dir = f->scratch;
	f->config.max_bench_seconds = 120;
	f->config.max_bench_file_size = 64 * MIB;
	f->monotonic = TRUE;
	f->last_fraction = -1;
	g_mutex_init(&f->lock);
}

static void fixture_teardown(Fixture *f, gconstpointer data)
{
	if (f->mnt != NULL) {
		umount2(f->mnt, MNT_DETACH);
		g_rmdir(f->mnt);
		g_free(f->mnt);
	}
	if (f->img != NULL) {
		g_unlink(f->img);
		g_free(f->img);
	}
	g_rmdir(f->scratch);
	g_free(f->scratch);
	g_mutex_clear(&f->lock);
}

static JsonObject *params_from(const char *json)
{
	g_autoptr(GError) error = NULL;
	g_autoptr(JsonNode) node = NULL;

	if (json == NULL)
		return NULL;
	node = json_from_string(json, &error);
	g_assert_no_error(error);
	g_assert_true(JSON_NODE_HOLDS_OBJECT(node));
	return json_object_ref(json_node_get_object(node));
}

static void progress_cb(AgentBenchContext *ctx, double fraction, const char *phase)
{
	Fixture *f = ctx->job;

	g_mutex_lock(&f->lock);
	if (fraction < f->last_fraction || fraction < 0 || fraction > 1)
		f->monotonic = FALSE;
	f->last_fraction = fraction;
	f->progress_calls++;
	g_mutex_unlock(&f->lock);
	g_assert_nonnull(phase);
}

static void ctx_init(Fixture *f, AgentBenchContext *ctx)
{
	memset(ctx, 0, sizeof(*ctx));
	ctx->config = &f->config;
	ctx->sysroot = "/";
	ctx->progress = progress_cb;
	ctx->job = f;
}

static guint dir_count(const char *path)
{
	g_autoptr(GDir) dir = g_dir_open(path, 0, NULL);
	guint n = 0;

	g_assert_nonnull(dir);
	while (g_dir_read_name(dir) != NULL)
		n++;
	return n;
}

static JsonNode *run_disk(Fixture *f, AgentBenchContext *ctx, const char *json, GError **error)
{
	g_autoptr(JsonObject) params = params_from(json);
	g_autoptr(JsonObject) norm = agent_bench_disk.validate(&f->config, params, error);

	if (norm == NULL)
		return NULL;
	return agent_bench_disk.run(ctx, norm, error);
}

static gboolean on_tmpfs(const char *path)
{
	struct statfs sfs;

	return statfs(path, &sfs) == 0 && sfs.f_type == TMPFS_MAGIC;
}

/* ---- histogram --------------------------------------------------------- */

static void test_histogram_exact(void)
{
	g_autoptr(AgentHistogram) h = agent_histogram_new();

	g_assert_cmpuint(agent_histogram_count(h), ==, 0);
	g_assert_cmpuint(agent_histogram_quantile(h, 0.5), ==, 0);
	for (guint64 v = 1; v <= 100; v++)
		agent_histogram_record(h, v);
	g_assert_cmpuint(agent_histogram_count(h), ==, 100);
	/* below 256 every value has its own bucket: nearest rank is exact */
	g_assert_cmpuint(agent_histogram_quantile(h, 0.5), ==, 50);
	g_assert_cmpuint(agent_histogram_quantile(h, 0.99), ==, 99);
	g_assert_cmpuint(agent_histogram_quantile(h, 0.999), ==, 100);
	g_assert_cmpuint(agent_histogram_quantile(h, 0.0), ==, 1);
	g_assert_cmpuint(agent_histogram_quantile(h, 1.0), ==, 100);
	g_assert_cmpuint(agent_histogram_quantile(h, NAN), ==, 1);
}

static int cmp_u64(gconstpointer a, gconstpointer b)
{
	guint64 x = *(const guint64 *)a;
	guint64 y = *(const guint64 *)b;

	return x < y ? -1 : x > y ? 1 : 0;
}

static void test_histogram_loglinear(void)
{
	g_autoptr(AgentHistogram) h = agent_histogram_new();
	g_autoptr(GRand) rand = g_rand_new_with_seed(7);
	g_autoptr(GArray) vals = g_array_new(FALSE, FALSE, sizeof(guint64));
	const double qs[] = { 0.01, 0.25, 0.5, 0.9, 0.99, 0.999 };

	/* latencies from 1 µs to ~10 s, spread over many powers of two */
	for (guint i = 0; i < 20000; i++) {
		guint64 v = (guint64)exp(g_rand_double_range(rand, log(1000.0), log(1e10)));
		g_array_append_val(vals, v);
		agent_histogram_record(h, v);
	}
	g_array_sort(vals, cmp_u64);
	for (guint i = 0; i < G_N_ELEMENTS(qs); i++) {
		guint64 rank = (guint64)ceil(qs[i] * vals->len);
		guint64 exact = g_array_index(vals, guint64, rank - 1);
		guint64 got = agent_histogram_quantile(h, qs[i]);

		g_assert_cmpfloat(fabs((double)got - (double)exact) / (double)exact, <=, 0.01);
	}
	g_assert_cmpuint(agent_histogram_quantile(h, 1.0), ==,
	                 g_array_index(vals, guint64, vals->len - 1));
}

static void test_histogram_extremes(void)
{
	g_autoptr(AgentHistogram) h = agent_histogram_new();

	agent_histogram_record(h, 0);
	agent_histogram_record(h, G_MAXUINT64);
	agent_histogram_record(h, 255);
	agent_histogram_record(h, 256);
	g_assert_cmpuint(agent_histogram_quantile(h, 0.25), ==, 0);
	g_assert_cmpuint(agent_histogram_quantile(h, 0.5), ==, 255);
	g_assert_cmpuint(agent_histogram_quantile(h, 0.75), ==, 256);
	g_assert_cmpuint(agent_histogram_quantile(h, 1.0), ==, G_MAXUINT64);
	/* the top bucket's middle is below the max; p99 must stay within 1% of it */
	g_assert_cmpfloat((double)agent_histogram_quantile(h, 0.99), >=,
	                  0.99 * (double)G_MAXUINT64);
}

/* ---- validation -------------------------------------------------------- */

static void test_validate_defaults(Fixture *f, gconstpointer data)
{
	g_autoptr(GError) error = NULL;
	g_autoptr(JsonObject) norm = NULL;
	JsonArray *arr;

	f->config.max_bench_file_size = 1024 * MIB;
	norm = agent_bench_disk.validate(&f->config, NULL, &error);
	g_assert_no_error(error);
	g_assert_nonnull(norm);
	g_assert_cmpint(json_object_get_int_member(norm, "size"), ==, 100 * MIB);
	arr = json_object_get_array_member(norm, "record_sizes");
	g_assert_cmpuint(json_array_get_length(arr), ==, 3);
	g_assert_cmpint(json_array_get_int_element(arr, 0), ==, 4096);
	g_assert_cmpint(json_array_get_int_element(arr, 1), ==, 4096 * 1024);
	g_assert_cmpint(json_array_get_int_element(arr, 2), ==, 16384 * 1024);
	arr = json_object_get_array_member(norm, "tests");
	g_assert_cmpuint(json_array_get_length(arr), ==, 6);
	g_assert_cmpstr(json_array_get_string_element(arr, 0), ==, "write");
	g_assert_cmpstr(json_array_get_string_element(arr, 5), ==, "randwrite");
	g_assert_true(json_object_get_boolean_member(norm, "direct"));
	g_assert_true(json_object_get_boolean_member(norm, "fsync"));
	g_assert_false(json_object_has_member(norm, "runs"));
	g_assert_nonnull(json_object_get_string_member(norm, "dir"));

	/* the default size is refused, naming the limit, when the cap is lower */
	f->config.max_bench_file_size = 8 * MIB;
	g_clear_pointer(&norm, json_object_unref);
	norm = agent_bench_disk.validate(&f->config, NULL, &error);
	g_assert_error(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT);
	g_assert_nonnull(strstr(error->message, "max_bench_file_size"));
	g_assert_null(norm);
}

static void test_validate_bad(Fixture *f, gconstpointer data)
{
	g_autofree char *outside = g_strdup("/var/tmp/gb-test-outside-XXXXXX");
	g_autofree char *link = g_build_filename(f->scratch, "escape", NULL);
	g_autofree char *sub = g_build_filename(f->scratch, "sub", NULL);
	struct {
		const char *json;
		const char *want;
	} cases[] = {
		{ "{\"bogus\": 1}", "bogus" },
		{ "{\"size\": \"8M\"}", "size" },
		{ "{\"size\": 1.5}", "size" },
		{ "{\"size\": 1024}", "size" },
		{ "{\"size\": -1}", "size" },
		{ "{\"size\": 2147483648}", "max_bench_file_size" },
		{ "{\"size\": 9223372036854775807}", "max_bench_file_size" },
		{ "{\"record_sizes\": 4096}", "record_sizes" },
		{ "{\"record_sizes\": [\"4k\"]}", "record_sizes" },
		{ "{\"record_sizes\": [4096, null]}", "record_sizes" },
		{ "{\"record_sizes\": []}", "record_sizes" },
		{ "{\"record_sizes\": [1000]}", "multiple of 512" },
		{ "{\"record_sizes\": [0]}", "record_sizes" },
		{ "{\"record_sizes\": [134217728]}", "record_sizes" },
		{ "{\"size\": 8388608, \"record_sizes\": [16777216]}",
		  "larger than the file size" },
		{ "{\"record_sizes\": [4096, 4096]}", "twice" },
		{ "{\"record_sizes\": [512,1024,1536,2048,2560,3072,3584,4096,4608,5120,5632,6144,"
		  "6656,7168,7680,8192,8704]}",
		  "1..16" },
		{ "{\"tests\": \"write\"}", "tests" },
		{ "{\"tests\": []}", "at least one" },
		{ "{\"tests\": [\"write\", \"erase\"]}", "erase" },
		{ "{\"tests\": [\"read\", \"read\"]}", "twice" },
		{ "{\"tests\": [1]}", "tests" },
		{ "{\"direct\": \"yes\"}", "direct" },
		{ "{\"direct\": 1}", "direct" },
		{ "{\"fsync\": []}", "fsync" },
		{ "{\"runs\": 0}", "runs" },
		{ "{\"runs\": 1000}", "runs" },
		{ "{\"dir\": 5}", "dir" },
		{ "{\"dir\": \"relative/path\"}", "absolute" },
		{ "{\"dir\": \"/etc\"}", "outside the scratch directory" },
		{ "{\"dir\": \"/nonexistent-gb-dir\"}", "No such file" },
		{ NULL, NULL }, /* dir with .. (built below) */
		{ NULL, NULL }, /* symlink in scratch pointing elsewhere */
		{ NULL, NULL }, /* a path under scratch that does not exist */
	};
	g_autofree char *base = g_path_get_basename(f->scratch);
	g_autofree char *dotdot = g_strdup_printf("{\"dir\": \"%s/../%s\"}", f->scratch, base);
	g_autofree char *viasym = g_strdup_printf("{\"dir\": \"%s\"}", link);
	g_autofree char *missing = g_strdup_printf("{\"dir\": \"%s\"}", sub);
	guint n = G_N_ELEMENTS(cases);

	/* large enough for the default size, so each case fails for its own reason */
	f->config.max_bench_file_size = 1024 * MIB;

	/* the .. case resolves back into scratch: refused anyway, by rule */
	cases[n - 3].json = dotdot;
	cases[n - 3].want = "'..'";
	g_assert_nonnull(g_mkdtemp(outside));
	g_assert_cmpint(symlink(outside, link), ==, 0);
	cases[n - 2].json = viasym;
	cases[n - 2].want = "outside the scratch directory";
	cases[n - 1].json = missing;
	cases[n - 1].want = "No such file";

	for (guint i = 0; i < n; i++) {
		g_autoptr(GError) error = NULL;
		g_autoptr(JsonObject) params = params_from(cases[i].json);
		g_autoptr(JsonObject) norm = NULL;

		g_test_message("case %s", cases[i].json);
		norm = agent_bench_disk.validate(&f->config, params, &error);
		g_assert_null(norm);
		g_assert_nonnull(error);
		g_assert_true(error->domain == GB_ERROR);
		g_test_message("error: %s (want '%s')", error->message, cases[i].want);
		g_assert_nonnull(strstr(error->message, cases[i].want));
	}
	g_unlink(link);

	/* the scratch directory itself a symlink: refused, wherever it points */
	{
		g_autoptr(GError) error = NULL;
		g_autoptr(JsonObject) params = params_from("{}");
		char *real_scratch = f->config.scratch_dir; /* the fixture's */
		g_autofree char *scratch_link = g_strdup_printf("%s.link", outside);
		g_autoptr(JsonObject) norm = NULL;

		g_assert_cmpint(symlink(real_scratch, scratch_link), ==, 0);
		f->config.scratch_dir = scratch_link;
		norm = agent_bench_disk.validate(&f->config, params, &error);
		f->config.scratch_dir = real_scratch;
		g_unlink(scratch_link);
		g_assert_null(norm);
		g_assert_nonnull(error);
		g_assert_nonnull(strstr(error->message, "is a symlink"));
	}
	g_rmdir(outside);
}

/* ---- runs -------------------------------------------------------------- */

static guint count_metric(JsonArray *metrics, const char *name, const char *test,
                          const char *record)
{
	guint n = 0;

	for (guint i = 0; i < json_array_get_length(metrics); i++) {
		JsonObject *m = json_array_get_object_element(metrics, i);
		JsonObject *labels = json_object_get_object_member(m, "labels");

		if (g_strcmp0(json_object_get_string_member(m, "metric"), name) != 0)
			continue;
		if (test != NULL && g_strcmp0(json_object_get_string_member(labels, "test"), test))
			continue;
		if (record != NULL &&
		    g_strcmp0(json_object_get_string_member(labels, "record_size"), record) != 0)
			continue;
		g_assert_cmpfloat(json_object_get_double_member(m, "value"), >, 0);
		n++;
	}
	return n;
}

/* one entry per record size, in order: a page is a page; above it, a whole
 * number of huge pages, and why not when the kernel would not give them */
static void check_buffers(JsonObject *res, gint64 rec0, gint64 rec1)
{
	JsonArray *bufs = json_object_get_array_member(res, "buffers");
	const gint64 recs[] = { rec0, rec1 };
	gint64 page = sysconf(_SC_PAGESIZE);

	g_assert_nonnull(bufs);
	g_assert_cmpuint(json_array_get_length(bufs), ==, rec1 > 0 ? 2 : 1);
	for (guint i = 0; i < json_array_get_length(bufs); i++) {
		JsonObject *b = json_array_get_object_element(bufs, i);
		const char *pages = json_object_get_string_member(b, "pages");
		gint64 bytes = json_object_get_int_member(b, "bytes");

		g_assert_cmpint(json_object_get_int_member(b, "record_size"), ==, recs[i]);
		g_assert_cmpint(bytes, >=, recs[i]);
		g_assert_cmpint(bytes % page, ==, 0);
		if (recs[i] <= page) {
			g_assert_cmpstr(pages, ==, "base");
			g_assert_false(json_object_has_member(b, "why"));
			continue;
		}
		g_assert_cmpint(bytes % (2 * 1024 * 1024), ==, 0);
		if (g_strcmp0(pages, "huge") == 0) {
			g_assert_false(json_object_has_member(b, "why"));
		} else {
			g_assert_true(g_strcmp0(pages, "base") == 0 ||
			              g_strcmp0(pages, "unknown") == 0);
			g_assert_nonnull(json_object_get_string_member(b, "why"));
		}
	}
}

static void test_run_full(Fixture *f, gconstpointer data)
{
	AgentBenchContext ctx;
	g_autoptr(GError) error = NULL;
	g_autoptr(JsonNode) node = NULL;
	const char *tests[] = { "write", "rewrite", "read", "reread", "randread", "randwrite" };
	JsonObject *res;
	JsonArray *metrics;
	JsonObject *align;

	if (on_tmpfs(f->scratch)) {
		g_test_skip("/var/tmp is tmpfs here");
		return;
	}
	if (gb_test_skip_if_emulated(NO_DIRECT_EMULATED))
		return;
	ctx_init(f, &ctx);
	node = run_disk(
	    f, &ctx, "{\"size\": 8388608, \"record_sizes\": [4096, 1048576], \"runs\": 1}", &error);
	g_assert_no_error(error);
	g_assert_nonnull(node);
	res = json_node_get_object(node);
	metrics = json_object_get_array_member(res, "metrics");
	for (guint i = 0; i < G_N_ELEMENTS(tests); i++) {
		g_assert_cmpuint(count_metric(metrics, "disk-throughput", tests[i], "4096"), ==, 1);
		g_assert_cmpuint(count_metric(metrics, "disk-throughput", tests[i], "1048576"), ==,
		                 1);
	}
	g_assert_cmpuint(count_metric(metrics, "disk-iops", "randread", NULL), ==, 2);
	g_assert_cmpuint(count_metric(metrics, "disk-iops", "randwrite", NULL), ==, 2);
	g_assert_cmpuint(count_metric(metrics, "disk-iops", "read", NULL), ==, 0);
	g_assert_cmpuint(count_metric(metrics, "disk-latency", "randread", "4096"), ==, 3);
	g_assert_cmpuint(count_metric(metrics, "disk-latency", "randwrite", "1048576"), ==, 3);
	g_assert_cmpuint(json_array_get_length(metrics), ==, 12 + 4 + 12);

	g_assert_true(json_object_get_boolean_member(res, "direct"));
	g_assert_true(json_object_get_boolean_member(res, "fsync"));
	g_assert_nonnull(json_object_get_string_member(res, "filesystem"));
	g_assert_true(json_object_has_member(res, "block_device"));
	align = json_object_get_object_member(res, "alignment");
	g_assert_nonnull(align);
	g_assert_cmpint(json_object_get_int_member(align, "offset"), >=, 1);
	g_assert_nonnull(json_object_get_string_member(align, "source"));
	g_assert_nonnull(json_object_get_string_member(res, "file"));
	check_buffers(res, 4096, 1048576);

	g_assert_true(f->monotonic);
	g_assert_cmpfloat(f->last_fraction, ==, 1.0);
	g_assert_cmpuint(dir_count(f->scratch), ==, 0);
}

static void test_run_subset_buffered(Fixture *f, gconstpointer data)
{
	AgentBenchContext ctx;
	g_autoptr(GError) error = NULL;
	g_autoptr(JsonNode) node = NULL;
	g_autofree char *sub = g_build_filename(f->scratch, "sub", NULL);
	g_autofree char *json = NULL;
	JsonObject *res;
	JsonArray *metrics;

	g_assert_cmpint(g_mkdir(sub, 0700), ==, 0);
	json = g_strdup_printf("{\"dir\": \"%s\", \"size\": 1048576, \"record_sizes\": [65536], "
	                       "\"tests\": [\"randread\"], \"direct\": false, \"fsync\": false}",
	                       sub);
	ctx_init(f, &ctx);
	node = run_disk(f, &ctx, json, &error);
	g_assert_no_error(error);
	res = json_node_get_object(node);
	metrics = json_object_get_array_member(res, "metrics");
	/* randread alone: the file was still filled first (untimed) */
	g_assert_cmpuint(json_array_get_length(metrics), ==, 5);
	g_assert_cmpuint(count_metric(metrics, "disk-latency", "randread", "65536"), ==, 3);
	g_assert_false(json_object_get_boolean_member(res, "direct"));
	g_assert_true(json_object_get_null_member(res, "alignment"));
	check_buffers(res, 65536, 0);
	g_assert_true(f->monotonic);
	g_assert_cmpuint(dir_count(sub), ==, 0);
	g_rmdir(sub);
}

/* THP disabled for the process: the buffer says it got base pages, and why */
static void test_buffer_no_thp(Fixture *f, gconstpointer data)
{
	AgentBenchContext ctx;
	g_autoptr(GError) error = NULL;
	g_autoptr(JsonNode) node = NULL;
	JsonObject *b;

	if (on_tmpfs(f->scratch)) {
		g_test_skip("/var/tmp is tmpfs here");
		return;
	}
	if (gb_test_skip_if_emulated(NO_DIRECT_EMULATED))
		return;
	g_assert_cmpint(prctl(PR_SET_THP_DISABLE, 1, 0, 0, 0), ==, 0);
	ctx_init(f, &ctx);
	node = run_disk(f, &ctx,
	                "{\"size\": 2097152, \"record_sizes\": [1048576], \"tests\": [\"read\"]}",
	                &error);
	g_assert_cmpint(prctl(PR_SET_THP_DISABLE, 0, 0, 0, 0), ==, 0);
	g_assert_no_error(error);
	check_buffers(json_node_get_object(node), 1048576, 0);
	b = json_array_get_object_element(
	    json_object_get_array_member(json_node_get_object(node), "buffers"), 0);
	g_assert_cmpstr(json_object_get_string_member(b, "pages"), ==, "base");
	g_assert_nonnull(strstr(json_object_get_string_member(b, "why"), "PR_SET_THP_DISABLE"));
	g_assert_cmpuint(dir_count(f->scratch), ==, 0);
}

static void test_tmpfs_refused(Fixture *f, gconstpointer data)
{
	AgentBenchContext ctx;
	g_autoptr(GError) error = NULL;
	g_autoptr(JsonNode) node = NULL;
	g_autofree char *shm = g_strdup("/dev/shm/gb-test-disk-XXXXXX");

	if (!on_tmpfs("/dev/shm") || g_mkdtemp(shm) == NULL) {
		g_test_skip("/dev/shm is not a writable tmpfs here");
		return;
	}
	f->config.scratch_dir = shm;
	ctx_init(f, &ctx);
	node = run_disk(f, &ctx, "{\"size\": 1048576, \"record_sizes\": [4096]}", &error);
	g_assert_error(error, GB_ERROR, GB_ERROR_NOT_SUPPORTED);
	g_assert_nonnull(strstr(error->message, "tmpfs"));
	g_assert_null(node);
	g_assert_cmpuint(dir_count(shm), ==, 0);

	/* buffered I/O on tmpfs is allowed: it does not pretend to be direct */
	g_clear_error(&error);
	node = run_disk(f, &ctx,
	                "{\"size\": 65536, \"record_sizes\": [4096], \"direct\": false, "
	                "\"tests\": [\"write\"]}",
	                &error);
	g_assert_no_error(error);
	g_assert_cmpstr(json_object_get_string_member(json_node_get_object(node), "filesystem"), ==,
	                "tmpfs");
	g_assert_cmpuint(dir_count(shm), ==, 0);
	g_rmdir(shm);
	f->config.scratch_dir = f->scratch;
}

/* The directory is swapped for a symlink between validate and run. */
static void test_symlink_swap(Fixture *f, gconstpointer data)
{
	AgentBenchContext ctx;
	g_autoptr(GError) error = NULL;
	g_autoptr(JsonNode) node = NULL;
	g_autofree char *sub = g_build_filename(f->scratch, "sub", NULL);
	g_autofree char *outside = g_strdup("/var/tmp/gb-test-outside-XXXXXX");
	g_autofree char *json = NULL;
	g_autoptr(JsonObject) params = NULL;
	g_autoptr(JsonObject) norm = NULL;

	g_assert_nonnull(g_mkdtemp(outside));
	g_assert_cmpint(g_mkdir(sub, 0700), ==, 0);
	json = g_strdup_printf("{\"dir\": \"%s\", \"size\": 65536, \"record_sizes\": [4096], "
	                       "\"direct\": false}",
	                       sub);
	params = params_from(json);
	norm = agent_bench_disk.validate(&f->config, params, &error);
	g_assert_no_error(error);
	g_assert_cmpint(g_rmdir(sub), ==, 0);
	g_assert_cmpint(symlink(outside, sub), ==, 0);
	ctx_init(f, &ctx);
	node = agent_bench_disk.run(&ctx, norm, &error);
	g_assert_error(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT);
	g_assert_nonnull(strstr(error->message, "outside the scratch directory"));
	g_assert_null(node);
	g_assert_cmpuint(dir_count(outside), ==, 0);
	g_unlink(sub);
	g_rmdir(outside);
}

typedef struct {
	Fixture *f;
	AgentBenchContext ctx;
	const char *json;
	GError *error;
	JsonNode *node;
	gint64 end_us;
} RunThread;

static gpointer run_thread(gpointer data)
{
	RunThread *t = data;

	t->node = run_disk(t->f, &t->ctx, t->json, &t->error);
	t->end_us = g_get_monotonic_time();
	return NULL;
}

static void test_cancel(Fixture *f, gconstpointer data)
{
	RunThread t = { 0 };
	GThread *thread;
	gint64 cancel_us;
	gboolean started = FALSE;

	t.f = f;
	ctx_init(f, &t.ctx);
	t.json = "{\"size\": 67108864, \"record_sizes\": [4096], \"direct\": true}";
	if (on_tmpfs(f->scratch)) {
		g_test_skip("/var/tmp is tmpfs here");
		return;
	}
	if (gb_test_skip_if_emulated(NO_DIRECT_EMULATED))
		return;
	thread = g_thread_new("disk", run_thread, &t);
	/* wait until the write pass is under way, then cancel */
	for (guint i = 0; i < 5000 && !started; i++) {
		g_usleep(1000);
		g_mutex_lock(&f->lock);
		started = f->last_fraction > 0;
		g_mutex_unlock(&f->lock);
	}
	g_assert_true(started);
	cancel_us = g_get_monotonic_time();
	g_atomic_int_set(&t.ctx.cancel, 1);
	g_thread_join(thread);
	g_assert_error(t.error, G_IO_ERROR, G_IO_ERROR_CANCELLED);
	g_assert_null(t.node);
	g_test_message("cancel took %" G_GINT64_FORMAT " µs", t.end_us - cancel_us);
	g_assert_cmpint(t.end_us - cancel_us, <, 100000);
	g_assert_cmpuint(dir_count(f->scratch), ==, 0);
	g_clear_error(&t.error);
}

static void test_duration_cap(Fixture *f, gconstpointer data)
{
	AgentBenchContext ctx;
	g_autoptr(GError) error = NULL;
	g_autoptr(JsonNode) node = NULL;

	f->config.max_bench_seconds = 0;
	ctx_init(f, &ctx);
	node = run_disk(f, &ctx, "{\"size\": 1048576, \"record_sizes\": [4096], \"direct\": false}",
	                &error);
	g_assert_error(error, GB_ERROR, GB_ERROR_TIMEOUT);
	g_assert_nonnull(strstr(error->message, "max_bench_seconds"));
	g_assert_null(node);
	g_assert_cmpuint(dir_count(f->scratch), ==, 0);
}

static const char *self_exe;

/* The child of test_sigkill: runs write tests until it is killed. */
static int sigkill_child(const char *dir)
{
	Fixture f = { 0 };
	AgentBenchContext ctx;

	f.scratch = (char *)dir;
	f.config.scratch_dir = f.scratch;
	f.config.max_bench_seconds = 120;
	f.config.max_bench_file_size = 64 * MIB;
	g_mutex_init(&f.lock);
	ctx_init(&f, &ctx);
	for (;;) {
		g_autoptr(GError) error = NULL;
		g_autoptr(JsonNode) node = run_disk(
		    &f, &ctx,
		    "{\"size\": 16777216, \"record_sizes\": [4096], \"tests\": [\"write\", "
		    "\"randwrite\"]}",
		    &error);

		if (node == NULL) {
			g_printerr("child: %s\n", error->message);
			return 1;
		}
	}
	return 0;
}

/* Has pid an open file under dir that was unlinked (the O_TMPFILE)? */
static gboolean has_tmpfile_open(GPid pid, const char *dir)
{
	g_autofree char *fddir = g_strdup_printf("/proc/%d/fd", (int)pid);
	g_autoptr(GDir) d = g_dir_open(fddir, 0, NULL);
	const char *name;

	if (d == NULL)
		return FALSE;
	while ((name = g_dir_read_name(d)) != NULL) {
		g_autofree char *path = g_build_filename(fddir, name, NULL);
		g_autofree char *target = g_file_read_link(path, NULL);

		if (target != NULL && g_str_has_prefix(target, dir) &&
		    g_str_has_suffix(target, "(deleted)"))
			return TRUE;
	}
	return FALSE;
}

/* SIGKILL in the middle of a run leaves nothing behind (O_TMPFILE). */
static void test_sigkill(Fixture *f, gconstpointer data)
{
	g_autoptr(GError) error = NULL;
	const char *argv[] = { self_exe, NULL };
	g_auto(GStrv) envp =
	    g_environ_setenv(g_get_environ(), "GB_TEST_DISK_CHILD", f->scratch, TRUE);
	GPid pid = 0;
	gboolean seen = FALSE;
	int status = 0;

	if (on_tmpfs(f->scratch)) {
		g_test_skip("/var/tmp is tmpfs here");
		return;
	}
	if (gb_test_skip_if_emulated("a spawned aarch64 child needs binfmt_misc"))
		return;
	g_spawn_async(NULL, (char **)argv, envp, G_SPAWN_DO_NOT_REAP_CHILD, NULL, NULL, &pid,
	              &error);
	g_assert_no_error(error);
	for (guint i = 0; i < 5000 && !seen; i++) {
		seen = has_tmpfile_open(pid, f->scratch);
		if (!seen)
			g_usleep(1000);
	}
	kill(pid, SIGKILL);
	g_assert_cmpint(waitpid(pid, &status, 0), ==, pid);
	g_spawn_close_pid(pid);
	g_assert_true(seen);
	g_assert_true(WIFSIGNALED(status));
	g_assert_cmpuint(dir_count(f->scratch), ==, 0);
}

/* A 4 MiB ext4 on a loop device: too small for the file, refused up front. */
static void test_no_space(Fixture *f, gconstpointer data)
{
	AgentBenchContext ctx;
	g_autoptr(GError) error = NULL;
	g_autoptr(JsonNode) node = NULL;
	g_autofree char *cmd = NULL;
	g_autofree char *json = NULL;
	int status = 0;

	f->img = g_strdup_printf("%s.img", f->scratch);
	f->mnt = g_build_filename(f->scratch, "mnt", NULL);
	g_assert_cmpint(g_mkdir(f->mnt, 0700), ==, 0);
	cmd = g_strdup_printf("sh -c 'truncate -s 4M %s && mkfs.ext4 -q -F %s && mount -o loop "
	                      "%s %s' >/dev/null 2>&1",
	                      f->img, f->img, f->img, f->mnt);
	if (!g_spawn_command_line_sync(cmd, NULL, NULL, &status, NULL) ||
	    !g_spawn_check_wait_status(status, NULL)) {
		g_rmdir(f->mnt);
		g_clear_pointer(&f->mnt, g_free);
		g_test_skip("cannot loop-mount an ext4 image here");
		return;
	}
	json = g_strdup_printf("{\"dir\": \"%s\", \"size\": 8388608, \"record_sizes\": [4096]}",
	                       f->mnt);
	ctx_init(f, &ctx);
	node = run_disk(f, &ctx, json, &error);
	g_assert_error(error, GB_ERROR, GB_ERROR_IO);
	g_assert_nonnull(strstr(error->message, "need 8388608 bytes"));
	g_assert_null(node);
	/* ext4's lost+found is the only entry */
	g_assert_cmpuint(dir_count(f->mnt), ==, 1);
}

int main(int argc, char **argv)
{
	if (g_getenv("GB_TEST_DISK_CHILD") != NULL)
		return sigkill_child(g_getenv("GB_TEST_DISK_CHILD"));
	self_exe = argv[0];
	g_test_init(&argc, &argv, NULL);
	g_test_add_func("/bench/disk/histogram/exact", test_histogram_exact);
	g_test_add_func("/bench/disk/histogram/loglinear", test_histogram_loglinear);
	g_test_add_func("/bench/disk/histogram/extremes", test_histogram_extremes);
#define ADD(path, fn) g_test_add(path, Fixture, NULL, fixture_setup, fn, fixture_teardown)
	ADD("/bench/disk/validate/defaults", test_validate_defaults);
	ADD("/bench/disk/validate/bad", test_validate_bad);
	ADD("/bench/disk/run/full", test_run_full);
	ADD("/bench/disk/run/subset-buffered", test_run_subset_buffered);
	ADD("/bench/disk/buffer/no-thp", test_buffer_no_thp);
	ADD("/bench/disk/tmpfs-refused", test_tmpfs_refused);
	ADD("/bench/disk/symlink-swap", test_symlink_swap);
	ADD("/bench/disk/cancel", test_cancel);
	ADD("/bench/disk/duration-cap", test_duration_cap);
	ADD("/bench/disk/sigkill", test_sigkill);
	ADD("/bench/disk/no-space", test_no_space);
#undef ADD
	return g_test_run();
}
