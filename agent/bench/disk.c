/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The disk benchmark: iozone's six tests (write, rewrite, read, reread,
 * random read, random write) with O_DIRECT and fsync inside the timed region,
 * on a nameless file under the configured scratch directory.
 */

#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <gio/gio.h>
#include <linux/magic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"
#include "guestbench-protocol.h"

#define DISK_DEFAULT_SIZE GB_BENCH_DISK_DEFAULT_SIZE
#define DISK_MIN_SIZE GB_BENCH_DISK_MIN_SIZE
#define DISK_MIN_RECORD GB_BENCH_DISK_MIN_RECORD
#define DISK_MAX_RECORD GB_BENCH_DISK_MAX_RECORD
#define DISK_MAX_RUNS GB_BENCH_MAX_RUNS
#define DISK_SHUFFLE_SEED 0x67626e63u /* fixed so that runs visit records in the same order */
#define DISK_PROGRESS_NS (10 * 1000 * 1000)
#define DISK_RATE_NS (100 * 1000 * 1000)
#define DISK_DEFAULT_ALIGN 4096
#define DISK_HUGE_PAGE (2 * 1024 * 1024) /* the PMD size of x86-64 and of 4 KiB-page arm64 */
#ifndef MADV_COLLAPSE
#define MADV_COLLAPSE 25 /* Linux 6.1; older kernels answer EINVAL */
#endif

typedef enum {
	DISK_TEST_WRITE,
	DISK_TEST_REWRITE,
	DISK_TEST_READ,
	DISK_TEST_REREAD,
	DISK_TEST_RANDREAD,
	DISK_TEST_RANDWRITE,
	DISK_TEST_LAST,
} DiskTest;

/* In iozone's order; the index is the DiskTest value. */
static const char *const disk_test_names[] = {
	"write", "rewrite", "read", "reread", "randread", "randwrite", NULL,
};

/* ---- log-linear histogram ---------------------------------------------- */

/*
 * Values below 2^(SUB_BITS+1) get a bucket each; above, every power of two is
 * split into 2^SUB_BITS buckets, so a bucket is at most 1/128 (0.8%) wide.
 */
#define HIST_SUB_BITS 7
#define HIST_SUB (1u << HIST_SUB_BITS)
#define HIST_LINEAR (2u * HIST_SUB)
#define HIST_BUCKETS (HIST_LINEAR + (64u - (HIST_SUB_BITS + 1)) * HIST_SUB)

struct _AgentHistogram {
	guint64 count;
	guint64 min;
	guint64 max;
	guint64 buckets[HIST_BUCKETS];
};

AgentHistogram *agent_histogram_new(void)
{
	AgentHistogram *h = g_new0(AgentHistogram, 1);
	h->min = G_MAXUINT64;
	return h;
}

void agent_histogram_free(AgentHistogram *h)
{
	g_free(h);
}

static guint hist_index(guint64 v)
{
	guint e;
	guint shift;

	if (v < HIST_LINEAR)
		return (guint)v;
	e = 63u - (guint)__builtin_clzll(v);
	shift = e - HIST_SUB_BITS;
	return HIST_LINEAR + (e - (HIST_SUB_BITS + 1)) * HIST_SUB +
	       (guint)((v >> shift) - HIST_SUB);
}

/* The middle of the bucket's value range. */
static guint64 hist_value(guint idx)
{
	guint e;
	guint shift;
	guint64 mant;
	guint64 lo;
	guint64 width;

	if (idx < HIST_LINEAR)
		return idx;
	e = (idx - HIST_LINEAR) / HIST_SUB + HIST_SUB_BITS + 1;
	shift = e - HIST_SUB_BITS;
	mant = HIST_SUB + (idx - HIST_LINEAR) % HIST_SUB;
	lo = mant << shift;
	width = (guint64)1 << shift;
	return lo + (width - 1) / 2;
}

void agent_histogram_record(AgentHistogram *h, guint64 value)
{
	h->buckets[hist_index(value)]++;
	h->count++;
	h->min = MIN(h->min, value);
	h->max = MAX(h->max, value);
}

guint64 agent_histogram_count(const AgentHistogram *h)
{
	return h->count;
}

guint64 agent_histogram_quantile(const AgentHistogram *h, double q)
{
	guint64 rank;
	guint64 seen = 0;

	if (h->count == 0)
		return 0;
	if (!(q > 0.0))
		return h->min;
	if (q >= 1.0)
		return h->max;
	/* nearest-rank: the smallest value with at least q of the samples at or below it */
	rank = (guint64)(q * (double)h->count);
	if ((double)rank < q * (double)h->count)
		rank++;
	rank = CLAMP(rank, 1, h->count);
	for (guint i = 0; i < HIST_BUCKETS; i++) {
		seen += h->buckets[i];
		if (seen >= rank)
			return CLAMP(hist_value(i), h->min, h->max);
	}
	return h->max;
}

/* ---- helpers ----------------------------------------------------------- */

static gint64 disk_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (gint64)ts.tv_sec * G_GINT64_CONSTANT(1000000000) + ts.tv_nsec;
}

static void disk_fd_close(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

static void disk_add_metric(JsonArray *metrics, const char *metric, double value, const char *unit,
                            const char *test, gsize record, const char *quantile)
{
	g_autofree char *rec = g_strdup_printf("%" G_GSIZE_FORMAT, record);

	json_array_add_element(
	    metrics, agent_bench_sample_new(metric, value, unit, "test", test, "record_size", rec,
	                                    quantile != NULL ? "quantile" : NULL, quantile, NULL));
}

static gboolean disk_path_has_dotdot(const char *path)
{
	g_auto(GStrv) parts = g_strsplit(path, "/", -1);

	for (guint i = 0; parts[i] != NULL; i++) {
		if (g_strcmp0(parts[i], "..") == 0)
			return TRUE;
	}
	return FALSE;
}

/*
 * Resolves dir and checks it lies inside the scratch directory (both through
 * realpath, so a symlink inside scratch that points elsewhere is caught).
 */
static char *disk_resolve_dir(const char *scratch, const char *dir, GError **error)
{
	struct stat st;
	g_autofree char *rscratch = NULL;
	g_autofree char *rdir = NULL;
	gsize len;

	if (scratch == NULL || scratch[0] == '\0') {
		g_set_error_literal(error, GB_ERROR, GB_ERROR_FAILED,
		                    "No scratch directory is configured (scratch-dir)");
		return NULL;
	}
	if (!g_path_is_absolute(dir)) {
		g_set_error(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT,
		            "Parameter 'dir' must be an absolute path: %s", dir);
		return NULL;
	}
	if (disk_path_has_dotdot(dir)) {
		g_set_error(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT,
		            "Parameter 'dir' must not contain '..': %s", dir);
		return NULL;
	}
	/*
	 * The scratch directory itself must be the real directory: a symlink there
	 * would move every disk benchmark to wherever it points, so it is refused.
	 */
	if (lstat(scratch, &st) == 0 && S_ISLNK(st.st_mode)) {
		g_set_error(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT,
		            "Scratch directory %s is a symlink: refused (set scratch-dir to the "
		            "directory itself)",
		            scratch);
		return NULL;
	}
	rscratch = realpath(scratch, NULL);
	if (rscratch == NULL) {
		g_set_error(error, GB_ERROR, GB_ERROR_FAILED, "Scratch directory %s: %s", scratch,
		            g_strerror(errno));
		return NULL;
	}
	rdir = realpath(dir, NULL);
	if (rdir == NULL) {
		g_set_error(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT, "Parameter 'dir' %s: %s",
		            dir, g_strerror(errno));
		return NULL;
	}
	len = strlen(rscratch);
	if (g_strcmp0(rscratch, "/") != 0 &&
	    !(strncmp(rdir, rscratch, len) == 0 && (rdir[len] == '\0' || rdir[len] == '/'))) {
		g_set_error(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT,
		            "Parameter 'dir' %s resolves to %s, outside the scratch directory %s",
		            dir, rdir, rscratch);
		return NULL;
	}
	return g_steal_pointer(&rdir);
}

/*
 * Opens an already resolved absolute path one component at a time without
 * following symlinks, so a symlink swapped in after the check cannot
 * redirect the benchmark's writes.
 */
static int disk_open_dir_nofollow(const char *path, GError **error)
{
	g_auto(GStrv) parts = g_strsplit(path, "/", -1);
	int fd = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (fd < 0) {
		g_set_error(error, GB_ERROR, GB_ERROR_IO, "Cannot open /: %s", g_strerror(errno));
		return -1;
	}
	for (guint i = 0; parts[i] != NULL; i++) {
		int next;

		if (parts[i][0] == '\0' || g_strcmp0(parts[i], ".") == 0)
			continue;
		next = openat(fd, parts[i], O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (next < 0) {
			int saved = errno;

			close(fd);
			if (saved == ELOOP || saved == ENOTDIR) {
				g_set_error(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT,
				            "Directory %s changed while opening it: '%s' is no "
				            "longer a plain directory",
				            path, parts[i]);
			} else {
				g_set_error(error, GB_ERROR, GB_ERROR_IO, "Cannot open %s: %s",
				            path, g_strerror(saved));
			}
			return -1;
		}
		close(fd);
		fd = next;
	}
	return fd;
}

/*
 * A nameless file: O_TMPFILE leaves nothing behind whatever happens to the
 * agent. Where the filesystem refuses O_TMPFILE, a random name is created
 * exclusively and unlinked at once (only a SIGKILL in between leaks it).
 */
static int disk_open_data_file(int dirfd, const char *dir, const char **how, GError **error)
{
	int fd = openat(dirfd, ".", O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);

	if (fd >= 0) {
		*how = "O_TMPFILE";
		return fd;
	}
	if (errno != EOPNOTSUPP && errno != EISDIR && errno != EINVAL) {
		g_set_error(error, GB_ERROR, GB_ERROR_IO, "Cannot create a file in %s: %s", dir,
		            g_strerror(errno));
		return -1;
	}
	for (guint attempt = 0; attempt < 64; attempt++) {
		g_autofree char *name =
		    g_strdup_printf(".guestbench-disk-%08x%08x", g_random_int(), g_random_int());

		fd = openat(dirfd, name, O_CREAT | O_EXCL | O_RDWR | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (fd < 0 && errno == EEXIST)
			continue;
		if (fd < 0) {
			g_set_error(error, GB_ERROR, GB_ERROR_IO, "Cannot create a file in %s: %s",
			            dir, g_strerror(errno));
			return -1;
		}
		if (unlinkat(dirfd, name, 0) < 0) {
			int saved = errno;

			close(fd);
			g_set_error(error, GB_ERROR, GB_ERROR_IO, "Cannot unlink %s/%s: %s", dir,
			            name, g_strerror(saved));
			return -1;
		}
		*how = "unlinked";
		return fd;
	}
	g_set_error(error, GB_ERROR, GB_ERROR_IO, "Cannot create a unique file name in %s", dir);
	return -1;
}

static const char *disk_fs_name(unsigned long magic)
{
	static const struct {
		unsigned long magic;
		const char *name;
	} fs_names[] = {
		{ EXT4_SUPER_MAGIC, "ext4" },   { XFS_SUPER_MAGIC, "xfs" },
		{ BTRFS_SUPER_MAGIC, "btrfs" }, { TMPFS_MAGIC, "tmpfs" },
		{ RAMFS_MAGIC, "ramfs" },       { OVERLAYFS_SUPER_MAGIC, "overlay" },
		{ NFS_SUPER_MAGIC, "nfs" },     { 0x65735546, "fuse" },
		{ 0x2fc12fc1, "zfs" },          { F2FS_SUPER_MAGIC, "f2fs" },
		{ MSDOS_SUPER_MAGIC, "vfat" },  { V9FS_MAGIC, "9p" },
		{ 0xff534d42, "cifs" },         { 0xca451a4e, "bcachefs" },
		{ SQUASHFS_MAGIC, "squashfs" },
	};

	for (guint i = 0; i < G_N_ELEMENTS(fs_names); i++) {
		if (fs_names[i].magic == magic)
			return fs_names[i].name;
	}
	return NULL;
}

static char *disk_sys_path(const char *sysroot, const char *rel)
{
	return g_build_filename(sysroot != NULL ? sysroot : "/", rel, NULL);
}

/* The block device (partition or disk) a device number belongs to, or NULL. */
static char *disk_block_name(const char *sysroot, dev_t dev)
{
	g_autofree char *rel = g_strdup_printf("sys/dev/block/%u:%u", major(dev), minor(dev));
	g_autofree char *link = disk_sys_path(sysroot, rel);
	g_autofree char *target = g_file_read_link(link, NULL);

	if (target == NULL)
		return NULL;
	return g_path_get_basename(target);
}

/* The logical block size of the device (or of the disk holding the partition). */
static guint disk_logical_block_size(const char *sysroot, dev_t dev)
{
	const char *const candidates[] = { "queue/logical_block_size",
		                           "../queue/logical_block_size" };

	for (guint i = 0; i < G_N_ELEMENTS(candidates); i++) {
		g_autofree char *rel = g_strdup_printf("sys/dev/block/%u:%u/%s", major(dev),
		                                       minor(dev), candidates[i]);
		g_autofree char *path = disk_sys_path(sysroot, rel);
		g_autofree char *contents = NULL;
		guint64 val = 0;

		if (!g_file_get_contents(path, &contents, NULL, NULL))
			continue;
		g_strstrip(contents);
		if (!g_ascii_string_to_unsigned(contents, 10, 512, 1024 * 1024, &val, NULL))
			continue;
		if ((val & (val - 1)) != 0)
			continue;
		return (guint)val;
	}
	return 0;
}

/* ---- validation -------------------------------------------------------- */

static gboolean disk_get_tests(JsonObject *params, gboolean want[DISK_TEST_LAST], GError **error)
{
	g_auto(GStrv) tests = NULL;

	if (!gb_json_get_strv(params, "tests", GB_JSON_OPTIONAL, &tests, error))
		return FALSE;
	if (tests == NULL) {
		for (guint i = 0; i < DISK_TEST_LAST; i++)
			want[i] = TRUE;
		return TRUE;
	}
	if (tests[0] == NULL) {
		g_set_error_literal(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT,
		                    "Parameter 'tests' must name at least one test");
		return FALSE;
	}
	for (guint i = 0; tests[i] != NULL; i++) {
		gboolean found = FALSE;

		for (guint t = 0; t < DISK_TEST_LAST; t++) {
			if (g_strcmp0(tests[i], disk_test_names[t]) != 0)
				continue;
			if (want[t]) {
				g_set_error(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT,
				            "Parameter 'tests' names '%s' twice", tests[i]);
				return FALSE;
			}
			want[t] = TRUE;
			found = TRUE;
		}
		if (!found) {
			g_autofree char *known = g_strjoinv(", ", (char **)disk_test_names);

			g_set_error(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT,
			            "Parameter 'tests' has unknown test '%s' (known: %s)", tests[i],
			            known);
			return FALSE;
		}
	}
	return TRUE;
}

static JsonObject *disk_validate(const AgentConfig *config, JsonObject *params, GError **error)
{
	const char *const allowed[] = { "dir",    "size",  "record_sizes", "tests",
		                        "direct", "fsync", "runs",         NULL };
	const char *dir = config->scratch_dir;
	gint64 size = DISK_DEFAULT_SIZE;
	gint64 runs = 1;
	gboolean direct = TRUE;
	gboolean do_fsync = TRUE;
	gboolean want[DISK_TEST_LAST] = { FALSE };
	g_autoptr(GArray) records = NULL;
	g_autofree char *rdir = NULL;
	g_autoptr(JsonObject) out = json_object_new();
	JsonArray *arr;

	if (params != NULL && !gb_json_check_members(params, allowed, error))
		return NULL;
	if (!gb_json_get_string(params, "dir", GB_JSON_OPTIONAL, &dir, error))
		return NULL;
	if (!gb_json_get_int(params, "size", GB_JSON_OPTIONAL, G_MININT64, G_MAXINT64, &size,
	                     error))
		return NULL;
	if (!gb_bench_check_disk_size(size, error)) {
		g_prefix_error(error, "Parameter 'size': ");
		return NULL;
	}
	if (size > config->max_bench_file_size) {
		g_set_error(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT,
		            "Parameter 'size' is out of range: %" G_GINT64_FORMAT
		            " is over the agent's max_bench_file_size (%" G_GINT64_FORMAT " bytes)",
		            size, config->max_bench_file_size);
		return NULL;
	}
	if (!gb_json_get_int_array(params, "record_sizes", GB_JSON_OPTIONAL, G_MININT64, G_MAXINT64,
	                           &records, error))
		return NULL;
	if (records == NULL) {
		records = g_array_new(FALSE, FALSE, sizeof(gint64));
		g_array_append_vals(records, gb_bench_disk_default_records,
		                    G_N_ELEMENTS(gb_bench_disk_default_records));
	}
	if (!gb_bench_check_disk_records((const gint64 *)(gpointer)records->data, records->len,
	                                 size, gb_json_has(params, "size"), error)) {
		g_prefix_error(error, "Parameter 'record_sizes': ");
		return NULL;
	}
	if (!disk_get_tests(params, want, error))
		return NULL;
	if (!gb_json_get_bool(params, "direct", GB_JSON_OPTIONAL, &direct, error))
		return NULL;
	if (!gb_json_get_bool(params, "fsync", GB_JSON_OPTIONAL, &do_fsync, error))
		return NULL;
	if (!gb_json_get_int(params, "runs", GB_JSON_OPTIONAL, 1, DISK_MAX_RUNS, &runs, error))
		return NULL;
	if (dir == NULL) {
		g_set_error_literal(error, GB_ERROR, GB_ERROR_FAILED,
		                    "No scratch directory is configured (scratch-dir)");
		return NULL;
	}
	/* refused at start rather than as a failed job; run() checks again */
	rdir = disk_resolve_dir(config->scratch_dir, dir, error);
	if (rdir == NULL)
		return NULL;

	json_object_set_string_member(out, "dir", rdir);
	json_object_set_int_member(out, "size", size);
	arr = json_array_new();
	for (guint i = 0; i < records->len; i++)
		json_array_add_int_element(arr, g_array_index(records, gint64, i));
	json_object_set_array_member(out, "record_sizes", arr);
	arr = json_array_new();
	for (guint t = 0; t < DISK_TEST_LAST; t++) {
		if (want[t])
			json_array_add_string_element(arr, disk_test_names[t]);
	}
	json_object_set_array_member(out, "tests", arr);
	json_object_set_boolean_member(out, "direct", direct);
	json_object_set_boolean_member(out, "fsync", do_fsync);
	return g_steal_pointer(&out);
}

/* ---- running ----------------------------------------------------------- */

typedef struct {
	AgentBenchContext *ctx;
	const char *dir;
	int fd;
	gboolean fsync;
	gint64 deadline_ns;
	gint64 max_seconds;
	guint unit;  /* index of the current (record size, test) pair */
	guint units; /* number of pairs */
	double last_fraction;
	gint64 last_progress_ns;
	char *phase;
} DiskRun;

static void disk_progress(DiskRun *r, double within, gboolean force)
{
	double fraction = ((double)r->unit + CLAMP(within, 0.0, 1.0)) / (double)r->units;
	gint64 now = disk_now_ns();

	/* progress is monotonic and throttled: the callback may take a lock */
	if (fraction < r->last_fraction)
		fraction = r->last_fraction;
	if (!force && now - r->last_progress_ns < DISK_PROGRESS_NS)
		return;
	r->last_fraction = fraction;
	r->last_progress_ns = now;
	if (r->ctx->progress != NULL)
		r->ctx->progress(r->ctx, fraction, r->phase);
}

static gboolean disk_check_stop(DiskRun *r, GError **error)
{
	if (!agent_bench_check_cancel(r->ctx, error))
		return FALSE;
	if (disk_now_ns() > r->deadline_ns) {
		g_set_error(error, GB_ERROR, GB_ERROR_TIMEOUT,
		            "Disk benchmark ran longer than the agent's max_bench_seconds "
		            "(%" G_GINT64_FORMAT " s); use a smaller size or fewer record sizes",
		            r->max_seconds);
		return FALSE;
	}
	return TRUE;
}

static gboolean disk_io(DiskRun *r, gboolean is_write, guint8 *buf, gsize len, guint64 off,
                        GError **error)
{
	gsize done = 0;

	while (done < len) {
		ssize_t n = is_write ? pwrite(r->fd, buf + done, len - done, (off_t)(off + done))
		                     : pread(r->fd, buf + done, len - done, (off_t)(off + done));

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			g_set_error(error, GB_ERROR, GB_ERROR_IO,
			            "%s %" G_GSIZE_FORMAT " bytes at offset %" G_GUINT64_FORMAT
			            " of the benchmark file in %s failed: %s",
			            is_write ? "Writing" : "Reading", len, off, r->dir,
			            g_strerror(errno));
			return FALSE;
		}
		if (n == 0) {
			g_set_error(error, GB_ERROR, GB_ERROR_IO,
			            "Short %s at offset %" G_GUINT64_FORMAT " in %s",
			            is_write ? "write" : "read", off + done, r->dir);
			return FALSE;
		}
		done += (gsize)n;
	}
	return TRUE;
}

/* One timed pass over all records; order NULL = sequential. Returns elapsed ns or -1. */
static gint64 disk_pass(DiskRun *r, gboolean is_write, guint8 *buf, gsize rec, guint64 nrec,
                        const guint64 *order, AgentHistogram *hist, GError **error)
{
	gint64 t0 = disk_now_ns();
	gint64 rate_ns = t0;

	for (guint64 i = 0; i < nrec; i++) {
		guint64 idx = order != NULL ? order[i] : i;
		gint64 op0 = disk_now_ns();

		if (!disk_io(r, is_write, buf, rec, idx * rec, error))
			return -1;
		if (hist != NULL)
			agent_histogram_record(hist, (guint64)(disk_now_ns() - op0));
		if (!disk_check_stop(r, error))
			return -1;
		disk_progress(r, (double)(i + 1) / (double)nrec, FALSE);
		if (op0 - rate_ns >= DISK_RATE_NS) {
			rate_ns = op0;
			agent_bench_rate(
			    r->ctx, (double)((i + 1) * rec) * 1e9 / (double)(op0 - t0 + 1), "B/s");
		}
	}
	if (is_write && r->fsync) {
		/* iozone -e: the flush is part of the measured time */
		if (fsync(r->fd) < 0) {
			g_set_error(error, GB_ERROR, GB_ERROR_IO, "fsync in %s failed: %s", r->dir,
			            g_strerror(errno));
			return -1;
		}
	}
	return MAX(disk_now_ns() - t0, 1);
}

typedef struct {
	guint mem;
	guint offset;
	const char *source;
} DiskAlign;

static gboolean disk_get_alignment(DiskRun *r, const char *sysroot, dev_t dev, DiskAlign *align,
                                   GError **error)
{
#ifdef STATX_DIOALIGN
	struct statx stx = { 0 };

	if (statx(r->fd, "", AT_EMPTY_PATH, STATX_DIOALIGN, &stx) == 0 &&
	    (stx.stx_mask & STATX_DIOALIGN) != 0) {
		if (stx.stx_dio_offset_align == 0) {
			g_set_error(error, GB_ERROR, GB_ERROR_NOT_SUPPORTED,
			            "The filesystem of %s does not support direct I/O (statx "
			            "reports no O_DIRECT alignment); use \"direct\": false",
			            r->dir);
			return FALSE;
		}
		align->mem = stx.stx_dio_mem_align;
		align->offset = stx.stx_dio_offset_align;
		align->source = "statx";
		return TRUE;
	}
#endif
	align->mem = disk_logical_block_size(sysroot, dev);
	if (align->mem != 0) {
		align->offset = align->mem;
		align->source = "logical_block_size";
		return TRUE;
	}
	align->mem = DISK_DEFAULT_ALIGN;
	align->offset = DISK_DEFAULT_ALIGN;
	align->source = "default";
	return TRUE;
}

static void disk_shuffle(guint64 *order, guint64 n)
{
	g_autoptr(GRand) rand = g_rand_new_with_seed(DISK_SHUFFLE_SEED);

	for (guint64 i = 0; i < n; i++)
		order[i] = i;
	for (guint64 i = n; i > 1; i--) {
		guint64 j = (guint64)g_rand_double_range(rand, 0, (double)i);
		guint64 tmp;

		j = MIN(j, i - 1);
		tmp = order[i - 1];
		order[i - 1] = order[j];
		order[j] = tmp;
	}
}

/* Runs the selected tests on the open data file with one record size. */
static gboolean disk_run_tests(DiskRun *r, const gboolean want[DISK_TEST_LAST], guint8 *buf,
                               gsize rec, guint64 nrec, const guint64 *order, JsonArray *metrics,
                               GError **error)
{
	for (guint t = 0; t < DISK_TEST_LAST; t++) {
		gboolean is_write =
		    t == DISK_TEST_WRITE || t == DISK_TEST_REWRITE || t == DISK_TEST_RANDWRITE;
		gboolean random = t == DISK_TEST_RANDREAD || t == DISK_TEST_RANDWRITE;
		g_autoptr(AgentHistogram) hist = NULL;
		gint64 ns;
		double secs;

		/* the fresh file must hold data before anything but write can run */
		if (t == DISK_TEST_WRITE && !want[t]) {
			g_free(r->phase);
			r->phase = g_strdup_printf("prepare %" G_GSIZE_FORMAT, rec);
			if (disk_pass(r, TRUE, buf, rec, nrec, NULL, NULL, error) < 0)
				return FALSE;
			continue;
		}
		if (!want[t])
			continue;
		g_free(r->phase);
		r->phase = g_strdup_printf("%s %" G_GSIZE_FORMAT, disk_test_names[t], rec);
		disk_progress(r, 0.0, TRUE);
		if (random)
			hist = agent_histogram_new();
		ns = disk_pass(r, is_write, buf, rec, nrec, random ? order : NULL, hist, error);
		if (ns < 0)
			return FALSE;
		secs = (double)ns / 1e9;
		disk_add_metric(metrics, "disk-throughput", (double)(nrec * rec) / secs, "B/s",
		                disk_test_names[t], rec, NULL);
		if (random) {
			disk_add_metric(metrics, "disk-iops", (double)nrec / secs, "IO/s",
			                disk_test_names[t], rec, NULL);
			disk_add_metric(metrics, "disk-latency",
			                (double)agent_histogram_quantile(hist, 0.5), "ns",
			                disk_test_names[t], rec, "0.5");
			disk_add_metric(metrics, "disk-latency",
			                (double)agent_histogram_quantile(hist, 0.99), "ns",
			                disk_test_names[t], rec, "0.99");
			disk_add_metric(metrics, "disk-latency",
			                (double)agent_histogram_quantile(hist, 0.999), "ns",
			                disk_test_names[t], rec, "0.999");
		}
		r->unit++;
		disk_progress(r, 0.0, TRUE);
	}
	return TRUE;
}

/* Opens a fresh nameless file (set up for O_DIRECT when asked) into r->fd. */
static gboolean disk_open_for_record(DiskRun *r, gboolean direct, int dirfd, gsize rec,
                                     const char *sysroot, dev_t dev, DiskAlign *align,
                                     JsonObject *info, GError **error)
{
	const char *how = NULL;
	int fl;

	r->fd = disk_open_data_file(dirfd, r->dir, &how, error);
	if (r->fd < 0)
		return FALSE;
	json_object_set_string_member(info, "file", how);
	if (!direct)
		return TRUE;
	fl = fcntl(r->fd, F_GETFL);
	if (fl < 0 || fcntl(r->fd, F_SETFL, fl | O_DIRECT) < 0) {
		g_set_error(error, GB_ERROR, GB_ERROR_NOT_SUPPORTED,
		            "The filesystem of %s refuses O_DIRECT (%s); use \"direct\": false",
		            r->dir, g_strerror(errno));
		return FALSE;
	}
	if (!disk_get_alignment(r, sysroot, dev, align, error))
		return FALSE;
	if (rec % align->offset != 0) {
		g_set_error(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT,
		            "Record size %" G_GSIZE_FORMAT
		            " is not a multiple of the direct I/O alignment %u of %s",
		            rec, align->offset, r->dir);
		return FALSE;
	}
	if (!json_object_has_member(info, "alignment")) {
		JsonObject *a = json_object_new();

		json_object_set_int_member(a, "memory", align->mem);
		json_object_set_int_member(a, "offset", align->offset);
		json_object_set_string_member(a, "source", align->source);
		json_object_set_object_member(info, "alignment", a);
	}
	return TRUE;
}

/* ---- the I/O buffer ------------------------------------------------------ */

/*
 * A direct request reaches the device as one segment per physically
 * contiguous run of its buffer. A buffer of ordinary pages gets whatever the
 * page allocator hands out at that moment: on a virtio disk, fio's 1 MiB read
 * took 0.8 GB/s with its buffer in 256 runs, 1.7 GB/s in 65 and 4.3 GB/s from
 * huge pages, minutes apart (BENCHMARKS.md). So a buffer larger than a page
 * is mapped on a huge-page boundary, advised huge and, once faulted in,
 * collapsed into huge pages (MADV_COLLAPSE, Linux 6.1): the figure is then the
 * device's, not the allocator's. The result says what the buffer got.
 */
typedef struct {
	guint8 *mem;
	gsize len;         /* mapped length, a multiple of the page size */
	const char *pages; /* "huge", "base" or "unknown" */
	char *why;         /* when a buffer above a page is not "huge" */
} DiskBuffer;

/*
 * rec bytes at an alignment of at least align (a power of two): one page, or
 * above a page whole huge pages on a huge-page boundary
 */
static gboolean disk_buffer_map(DiskBuffer *b, gsize rec, gsize align, GError **error)
{
	gsize page = (gsize)sysconf(_SC_PAGESIZE);
	gsize len, span, head;
	guint8 *map;

	align = MAX(align, page);
	len = (rec + page - 1) / page * page;
	if (len > page) {
		align = MAX(align, (gsize)DISK_HUGE_PAGE);
		len = (len + DISK_HUGE_PAGE - 1) / DISK_HUGE_PAGE * DISK_HUGE_PAGE;
	}
	span = len + (align > page ? align : 0);
	map = mmap(NULL, span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (map == MAP_FAILED) {
		g_set_error(error, GB_ERROR, GB_ERROR_FAILED,
		            "Cannot map a %" G_GSIZE_FORMAT " byte buffer: %s", len,
		            g_strerror(errno));
		return FALSE;
	}
	head = (align - (guintptr)map % align) % align;
	if (head > 0)
		munmap(map, head);
	if (span - head - len > 0)
		munmap(map + head + len, span - head - len);
	b->mem = map + head;
	b->len = len;
	b->pages = "base";
	b->why = NULL;
	/* EINVAL: a kernel without THP; the collapse below then says so too */
	if (len > page)
		(void)madvise(b->mem, len, MADV_HUGEPAGE);
	return TRUE;
}

/* after the buffer is faulted in: make its pages huge and record what it got */
static void disk_buffer_settle(DiskBuffer *b)
{
	if (b->len <= (gsize)sysconf(_SC_PAGESIZE))
		return;
	if (madvise(b->mem, b->len, MADV_COLLAPSE) == 0) {
		b->pages = "huge";
		return;
	}
	if (errno == EINVAL && prctl(PR_GET_THP_DISABLE, 0, 0, 0, 0) == 1) {
		b->why = g_strdup("transparent huge pages are disabled for this process "
		                  "(PR_SET_THP_DISABLE)");
	} else if (errno == EINVAL) {
		/* the kernel cannot say: before 6.1, or built without THP */
		b->pages = "unknown";
		b->why =
		    g_strdup("the kernel cannot collapse memory into huge pages (MADV_COLLAPSE "
		             "needs Linux 6.1 with transparent huge pages)");
	} else {
		/* EAGAIN/ENOMEM: ordinary pages, in whatever layout the allocator gave */
		b->why = g_strdup_printf("no huge page could be had (%s)", g_strerror(errno));
	}
}

static void disk_buffer_unmap(DiskBuffer *b)
{
	if (b->mem != NULL)
		munmap(b->mem, b->len);
	b->mem = NULL;
	g_clear_pointer(&b->why, g_free);
}

static void disk_buffer_report(const DiskBuffer *b, gsize rec, JsonObject *info)
{
	JsonArray *arr;
	JsonObject *o = json_object_new();

	if (!json_object_has_member(info, "buffers"))
		json_object_set_array_member(info, "buffers", json_array_new());
	arr = json_object_get_array_member(info, "buffers");
	json_object_set_int_member(o, "record_size", (gint64)rec);
	json_object_set_int_member(o, "bytes", (gint64)b->len);
	json_object_set_string_member(o, "pages", b->pages);
	if (b->why != NULL)
		json_object_set_string_member(o, "why", b->why);
	json_array_add_object_element(arr, o);
}

static gboolean disk_run_record(DiskRun *r, const gboolean want[DISK_TEST_LAST], gboolean direct,
                                int dirfd, gsize rec, guint64 size, const char *sysroot, dev_t dev,
                                JsonArray *metrics, JsonObject *info, GError **error)
{
	guint64 nrec = size / rec;
	g_autofree guint64 *order = g_new(guint64, nrec);
	g_autoptr(GRand) fill = g_rand_new_with_seed(DISK_SHUFFLE_SEED);
	DiskBuffer buf = { 0 };
	DiskAlign align = { 0 };
	gboolean ok;

	if (!disk_open_for_record(r, direct, dirfd, rec, sysroot, dev, &align, info, error) ||
	    !disk_buffer_map(&buf, rec, (gsize)align.mem, error)) {
		disk_fd_close(&r->fd);
		return FALSE;
	}
	/* incompressible, non-zero data so that no layer can shortcut the writes */
	for (gsize i = 0; i + 4 <= rec; i += 4) {
		guint32 v = g_rand_int(fill);
		memcpy(buf.mem + i, &v, 4);
	}
	disk_buffer_settle(&buf);
	disk_buffer_report(&buf, rec, info);
	disk_shuffle(order, nrec);
	ok = disk_run_tests(r, want, buf.mem, rec, nrec, order, metrics, error);
	disk_buffer_unmap(&buf);
	disk_fd_close(&r->fd);
	return ok;
}

static JsonNode *disk_run(AgentBenchContext *ctx, JsonObject *params, GError **error)
{
	const AgentConfig *config = ctx->config;
	g_autofree char *rdir = NULL;
	g_autoptr(GArray) records = NULL;
	gboolean want[DISK_TEST_LAST] = { FALSE };
	gboolean direct = TRUE;
	gboolean do_fsync = TRUE;
	gint64 size = 0;
	const char *dir = NULL;
	g_autofree char *blockdev = NULL;
	g_autoptr(JsonObject) result = json_object_new();
	JsonArray *metrics;
	struct statfs sfs;
	struct statvfs svfs;
	struct stat st;
	guint64 avail;
	const char *fsname;
	int dirfd;
	DiskRun r = { 0 };
	gboolean ok = TRUE;

	if (!gb_json_get_string(params, "dir", GB_JSON_REQUIRED, &dir, error) ||
	    !gb_json_get_int(params, "size", GB_JSON_REQUIRED, DISK_MIN_SIZE, G_MAXINT64, &size,
	                     error) ||
	    !gb_json_get_int_array(params, "record_sizes", GB_JSON_REQUIRED, DISK_MIN_RECORD,
	                           DISK_MAX_RECORD, &records, error) ||
	    !disk_get_tests(params, want, error) ||
	    !gb_json_get_bool(params, "direct", GB_JSON_REQUIRED, &direct, error) ||
	    !gb_json_get_bool(params, "fsync", GB_JSON_REQUIRED, &do_fsync, error))
		return NULL;

	rdir = disk_resolve_dir(config->scratch_dir, dir, error);
	if (rdir == NULL)
		return NULL;
	dirfd = disk_open_dir_nofollow(rdir, error);
	if (dirfd < 0)
		return NULL;
	if (fstatfs(dirfd, &sfs) < 0 || fstatvfs(dirfd, &svfs) < 0 || fstat(dirfd, &st) < 0) {
		g_set_error(error, GB_ERROR, GB_ERROR_IO, "Cannot stat %s: %s", rdir,
		            g_strerror(errno));
		close(dirfd);
		return NULL;
	}
	/* tmpfs accepts O_DIRECT since 6.6 but serves it from RAM: the number would lie */
	if (direct && (sfs.f_type == TMPFS_MAGIC || sfs.f_type == RAMFS_MAGIC)) {
		g_set_error(error, GB_ERROR, GB_ERROR_NOT_SUPPORTED,
		            "%s is on %s, which keeps files in memory: direct I/O there measures "
		            "RAM, not a disk; choose a scratch directory on a disk",
		            rdir, disk_fs_name((unsigned long)sfs.f_type));
		close(dirfd);
		return NULL;
	}
	avail = (guint64)svfs.f_bavail * (guint64)svfs.f_frsize;
	if (avail < (guint64)size) {
		g_set_error(error, GB_ERROR, GB_ERROR_IO,
		            "Not enough free space in %s: need %" G_GINT64_FORMAT
		            " bytes, %" G_GUINT64_FORMAT " available",
		            rdir, size, avail);
		close(dirfd);
		return NULL;
	}

	fsname = disk_fs_name((unsigned long)sfs.f_type);
	if (fsname != NULL) {
		json_object_set_string_member(result, "filesystem", fsname);
	} else {
		g_autofree char *hex = g_strdup_printf("0x%lx", (unsigned long)sfs.f_type);
		json_object_set_string_member(result, "filesystem", hex);
	}
	blockdev = disk_block_name(ctx->sysroot, st.st_dev);
	if (blockdev != NULL)
		json_object_set_string_member(result, "block_device", blockdev);
	else
		json_object_set_null_member(result, "block_device");
	json_object_set_boolean_member(result, "direct", direct);
	json_object_set_boolean_member(result, "fsync", do_fsync);
	metrics = json_array_new();
	json_object_set_array_member(result, "metrics", metrics);
	agent_bench_keep_partial(ctx, metrics);

	r.ctx = ctx;
	r.dir = rdir;
	r.fd = -1;
	r.fsync = do_fsync;
	r.max_seconds = config->max_bench_seconds;
	r.deadline_ns = disk_now_ns() + config->max_bench_seconds * G_GINT64_CONSTANT(1000000000);
	for (guint t = 0; t < DISK_TEST_LAST; t++)
		r.units += want[t] ? 1 : 0;
	r.units *= records->len;
	r.phase = g_strdup("start");
	disk_progress(&r, 0.0, TRUE);
	for (guint i = 0; ok && i < records->len; i++) {
		gsize rec = (gsize)g_array_index(records, gint64, i);

		ok = disk_run_record(&r, want, direct, dirfd, rec, (guint64)size, ctx->sysroot,
		                     st.st_dev, metrics, result, error);
	}
	close(dirfd);
	g_free(r.phase);
	if (!ok)
		return NULL;
	if (!direct)
		json_object_set_null_member(result, "alignment");
	return json_node_init_object(json_node_alloc(), result);
}

static const char *const disk_fact_sections[] = { "block", "os", NULL };

const AgentBench agent_bench_disk = {
	.name = "disk",
	.validate = disk_validate,
	.run = disk_run,
	.fact_sections = disk_fact_sections,
};
