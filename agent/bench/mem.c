/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The mem benchmark (field report 4): what a page fault costs with 4 KiB
 * pages, transparent hugepages and hugetlbfs pages, and the bandwidth and
 * latency of memory behind each. A kind of page the guest cannot have is
 * reported as unavailable with the reason, never as a number.
 */
#include "config.h"

#include <errno.h>
#include <gio/gio.h>
#include <string.h>
#ifdef G_OS_WIN32
#include <windows.h>
#else
#include <sys/mman.h>
#endif

#include "bench.h"
#include "gb-bench-limits.h"
#include "gb-error.h"
#include "gb-json.h"

#define MEM_PAGE GB_BENCH_MEM_PAGE
#define MEM_LINE 64
#define MEM_MIB (1024 * 1024)
#define MEM_DEFAULT_SIZE GB_BENCH_MEM_DEFAULT_SIZE
#define MEM_MIN_SIZE GB_BENCH_MEM_MIN_SIZE
/* each bandwidth operation and the latency chase run this long */
#define MEM_PHASE_US (250 * 1000)
/* a generous guess of one page kind's duration, to check against max-bench-seconds */
#define MEM_SECONDS_PER_KIND GB_BENCH_MEM_SECONDS_PER_KIND
#define MEM_CHUNK ((gsize)1 * MEM_MIB)
#define MEM_CHASE_BATCH 4096

static const char *const mem_page_kinds[] = { "4k", "thp", "hugetlb", NULL };

/* keeps the read loop from being optimised away */
static volatile guint64 mem_sink;

/* ---- what the system offers ---- */

char *agent_bench_mem_thp_mode(const char *sysroot, GError **error)
{
	g_autofree char *path = g_build_filename(
	    sysroot != NULL ? sysroot : "/", "sys/kernel/mm/transparent_hugepage/enabled", NULL);
	g_autofree char *contents = NULL;
	const char *open_br;
	const char *close_br;

	if (!g_file_get_contents(path, &contents, NULL, error)) {
		g_prefix_error(error, "transparent hugepages are not supported here: ");
		return NULL;
	}
	/* "always [madvise] never": the active mode is bracketed */
	open_br = strchr(contents, '[');
	close_br = open_br != NULL ? strchr(open_br, ']') : NULL;
	if (close_br == NULL || close_br == open_br + 1) {
		g_set_error(error, GB_ERROR, GB_ERROR_FAILED, "cannot parse %s: no [active] mode",
		            path);
		return NULL;
	}
	return g_strndup(open_br + 1, close_br - open_br - 1);
}

/* Reads one "Name:   value [kB]" line of /proc/meminfo; FALSE when absent or malformed. */
static gboolean mem_meminfo_value(const char *contents, const char *name, guint64 *out)
{
	g_auto(GStrv) lines = g_strsplit(contents, "\n", -1);
	gsize name_len = strlen(name);

	for (guint i = 0; lines[i] != NULL; i++) {
		const char *p = lines[i];
		char *end = NULL;
		guint64 v;

		if (strncmp(p, name, name_len) != 0 || p[name_len] != ':')
			continue;
		p += name_len + 1;
		while (*p == ' ' || *p == '\t')
			p++;
		if (!g_ascii_isdigit(*p))
			return FALSE;
		errno = 0;
		v = g_ascii_strtoull(p, &end, 10);
		if (errno != 0 || end == p)
			return FALSE;
		while (*end == ' ')
			end++;
		if (g_str_equal(end, "kB")) {
			if (v > G_MAXUINT64 / 1024)
				return FALSE;
			v *= 1024;
		} else if (*end != '\0') {
			return FALSE;
		}
		*out = v;
		return TRUE;
	}
	return FALSE;
}

static char *mem_meminfo_read(const char *sysroot, GError **error)
{
	g_autofree char *path =
	    g_build_filename(sysroot != NULL ? sysroot : "/", "proc/meminfo", NULL);
	char *contents = NULL;

	if (!g_file_get_contents(path, &contents, NULL, error))
		return NULL;
	return contents;
}

char *agent_bench_mem_hugetlb_unavailable(const char *sysroot, gsize size)
{
	g_autoptr(GError) error = NULL;
	g_autofree char *contents = mem_meminfo_read(sysroot, &error);
	guint64 total = 0;
	guint64 free_pages = 0;
	guint64 page_size = 0;
	guint64 need;

	if (contents == NULL)
		return g_strdup_printf("cannot read /proc/meminfo: %s", error->message);
	if (!mem_meminfo_value(contents, "HugePages_Total", &total) ||
	    !mem_meminfo_value(contents, "HugePages_Free", &free_pages) ||
	    !mem_meminfo_value(contents, "Hugepagesize", &page_size) || page_size == 0)
		return g_strdup("the kernel reports no hugetlb pages in /proc/meminfo");
	if (total == 0)
		return g_strdup("no hugepages are reserved (HugePages_Total is 0)");
	need = (size + page_size - 1) / page_size;
	if (free_pages < need) {
		return g_strdup_printf("%" G_GUINT64_FORMAT " hugepages of %" G_GUINT64_FORMAT
		                       " kB are free, %" G_GUINT64_FORMAT " needed",
		                       free_pages, page_size / 1024, need);
	}
	return NULL;
}

static gsize mem_hugetlb_page_size(const char *sysroot)
{
	g_autofree char *contents = mem_meminfo_read(sysroot, NULL);
	guint64 page_size = 0;

	if (contents == NULL || !mem_meminfo_value(contents, "Hugepagesize", &page_size))
		return 2 * MEM_MIB;
	return (gsize)page_size;
}

/* Why a kind of page cannot be had here, or NULL. */
static char *mem_kind_unavailable(const char *sysroot, const char *kind, gsize size)
{
#ifdef G_OS_WIN32
	/* VirtualAlloc's pages are 4 KiB; large pages need a privilege the agent removed */
	if (g_str_equal(kind, "thp"))
		return g_strdup("Windows has no transparent huge pages");
	if (g_str_equal(kind, "hugetlb"))
		return g_strdup("large pages (MEM_LARGE_PAGES) need SeLockMemoryPrivilege, which "
		                "the agent does not hold: it runs with every privilege removed");
	return NULL;
#else
	if (g_str_equal(kind, "thp")) {
		g_autoptr(GError) error = NULL;
		g_autofree char *mode = agent_bench_mem_thp_mode(sysroot, &error);
		if (mode == NULL)
			return g_strdup(error->message);
		if (g_str_equal(mode, "never"))
			return g_strdup("transparent hugepages are disabled "
			                "(/sys/kernel/mm/transparent_hugepage/enabled is never)");
		return NULL;
	}
	if (g_str_equal(kind, "hugetlb"))
		return agent_bench_mem_hugetlb_unavailable(sysroot, size);
	return NULL;
#endif
}

/* ---- parameters ---- */

static JsonObject *mem_validate(const AgentConfig *config, JsonObject *params, GError **error)
{
	static const char *const allowed[] = { "size", "pages", NULL };
	g_autoptr(GError) error_local = NULL;
	g_autofree char *meminfo = NULL;
	g_auto(GStrv) pages = NULL;
	g_autoptr(JsonObject) out = json_object_new();
	JsonArray *pages_out;
	guint64 available = 0;
	gint64 max_size;
	gint64 size = MEM_DEFAULT_SIZE;
	guint n_pages;

	if (!gb_json_check_members(params, allowed, error))
		return NULL;

	/* the buffer is really allocated: the cap is half of what the guest has free now */
	meminfo = mem_meminfo_read("/", &error_local);
	if (meminfo == NULL || !mem_meminfo_value(meminfo, "MemAvailable", &available)) {
		g_set_error(error, GB_ERROR, GB_ERROR_FAILED,
		            "Cannot read MemAvailable from /proc/meminfo%s%s",
		            error_local != NULL ? ": " : "",
		            error_local != NULL ? error_local->message : "");
		return NULL;
	}
	max_size = (gint64)MIN(available / 2, (guint64)G_MAXINT64);
	if (max_size < MEM_MIN_SIZE) {
		g_set_error(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT,
		            "Too little memory for the mem benchmark: half of MemAvailable is "
		            "%" G_GINT64_FORMAT " bytes, the minimum size is %" G_GINT64_FORMAT,
		            max_size, MEM_MIN_SIZE);
		return NULL;
	}
	if (gb_json_has(params, "size")) {
		if (!gb_json_get_int(params, "size", GB_JSON_REQUIRED, G_MININT64, G_MAXINT64,
		                     &size, error))
			return NULL;
		if (!gb_bench_check_mem_size(size, error)) {
			g_prefix_error(error, "Parameter 'size': ");
			return NULL;
		}
		if (!gb_json_get_int(params, "size", GB_JSON_REQUIRED, MEM_MIN_SIZE, max_size,
		                     &size, error)) {
			g_prefix_error(error, "(the limit is half of MemAvailable) ");
			return NULL;
		}
	} else if (size > max_size) {
		g_set_error(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT,
		            "The default size %" G_GINT64_FORMAT " bytes is over half of "
		            "MemAvailable (%" G_GINT64_FORMAT "); give a smaller 'size'",
		            size, max_size);
		return NULL;
	}

	if (!gb_json_get_strv(params, "pages", GB_JSON_OPTIONAL, &pages, error))
		return NULL;
	if (pages == NULL)
		pages = g_strdupv((char **)mem_page_kinds);
	n_pages = g_strv_length(pages);
	if (n_pages == 0) {
		g_set_error_literal(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT,
		                    "Parameter 'pages' is empty (allowed: 4k, thp, hugetlb)");
		return NULL;
	}
	for (guint i = 0; i < n_pages; i++) {
		if (!g_strv_contains(mem_page_kinds, pages[i])) {
			g_set_error(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT,
			            "Parameter 'pages' has '%s' (allowed: 4k, thp, hugetlb)",
			            pages[i]);
			return NULL;
		}
		for (guint j = 0; j < i; j++) {
			if (g_str_equal(pages[i], pages[j])) {
				g_set_error(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT,
				            "Parameter 'pages' names '%s' twice", pages[i]);
				return NULL;
			}
		}
	}
	if ((gint64)n_pages * MEM_SECONDS_PER_KIND > config->max_bench_seconds) {
		g_set_error(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT,
		            "Parameter 'pages' asks for about %d s (%u kinds x %d s), over the "
		            "limit max-bench-seconds=%" G_GINT64_FORMAT,
		            (int)n_pages * MEM_SECONDS_PER_KIND, n_pages, MEM_SECONDS_PER_KIND,
		            config->max_bench_seconds);
		return NULL;
	}

	json_object_set_int_member(out, "size", size);
	pages_out = json_array_new();
	for (guint i = 0; i < n_pages; i++)
		json_array_add_string_element(pages_out, pages[i]);
	json_object_set_array_member(out, "pages", pages_out);
	return g_steal_pointer(&out);
}

/* ---- measurements ---- */

typedef struct {
	AgentBenchContext *ctx;
	const char *kind;
	guint8 *buf;
	gsize size;     /* bytes measured */
	gsize map_size; /* bytes mapped (rounded up to the hugetlb page size) */
	double progress_base;
	double progress_span;
} MemRun;

static void mem_progress(MemRun *run, double fraction, const char *what)
{
	g_autofree char *phase = g_strdup_printf("%s (%s pages)", what, run->kind);
	agent_bench_progress(run->ctx, run->progress_base + run->progress_span * fraction, phase);
}

/* ns per 4 KiB page on first touch: the fault, zeroing and mapping of each page */
static gboolean mem_page_faults(MemRun *run, double *ns, GError **error)
{
	gsize pages = run->size / MEM_PAGE;
	gint64 start = g_get_monotonic_time();
	gint64 elapsed;

	for (gsize i = 0; i < pages; i++) {
		run->buf[i * MEM_PAGE] = 1;
		/* 1024 faults take well under 10 ms even under emulation */
		if (i % 1024 == 1023 && !agent_bench_check_cancel(run->ctx, error))
			return FALSE;
	}
	elapsed = g_get_monotonic_time() - start;
	*ns = (double)elapsed * 1000.0 / (double)pages;
	return TRUE;
}

typedef enum {
	MEM_OP_READ,
	MEM_OP_WRITE,
	MEM_OP_COPY,
} MemOp;

static const char *const mem_op_names[] = { "read", "write", "copy" };

/* Bytes per second of one operation over the whole buffer, repeated for MEM_PHASE_US. */
static gboolean mem_bandwidth(MemRun *run, MemOp op, double *rate, GError **error)
{
	gsize span = op == MEM_OP_COPY ? run->size / 2 : run->size;
	guint64 bytes = 0;
	guint64 sum = 0;
	gint64 start = g_get_monotonic_time();
	gint64 now = start;
	guint pass = 0;

	do {
		for (gsize off = 0; off < span; off += MEM_CHUNK) {
			gsize len = MIN(MEM_CHUNK, span - off);
			guint8 *p = run->buf + off;

			if (op == MEM_OP_READ) {
				const guint64 *w = (const guint64 *)(gpointer)p;
				for (gsize i = 0; i < len / sizeof(guint64); i++)
					sum += w[i];
			} else if (op == MEM_OP_WRITE) {
				memset(p, (int)(pass & 0xff), len);
			} else {
				memcpy(run->buf + span + off, p, len);
			}
			bytes += len;
			if (!agent_bench_check_cancel(run->ctx, error))
				return FALSE;
		}
		pass++;
		now = g_get_monotonic_time();
	} while (now - start < MEM_PHASE_US);
	mem_sink += sum;
	*rate = (double)bytes * G_USEC_PER_SEC / (double)(now - start);
	return TRUE;
}

/* ns per dependent load, chasing pointers through every cache line in random order */
static gboolean mem_latency(MemRun *run, double *ns, GError **error)
{
	gsize lines = run->size / MEM_LINE;
	g_autofree guint32 *order = NULL;
	g_autoptr(GRand) rand = g_rand_new_with_seed(0x67623165);
	void **p;
	guint64 steps = 0;
	gint64 start;
	gint64 now;

	if (lines < 2 || lines > G_MAXUINT32) {
		g_set_error(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT,
		            "buffer of %" G_GSIZE_FORMAT " bytes cannot hold a pointer chase",
		            run->size);
		return FALSE;
	}
	/* Sattolo's shuffle: one cycle through all lines, so the chase visits each */
	order = g_new(guint32, lines);
	for (gsize i = 0; i < lines; i++)
		order[i] = (guint32)i;
	for (gsize i = lines - 1; i > 0; i--) {
		gsize j = (gsize)g_rand_int_range(rand, 0, (gint32)MIN(i, (gsize)G_MAXINT32));
		guint32 tmp = order[i];
		order[i] = order[j];
		order[j] = tmp;
		if (i % (1024 * 1024) == 0 && !agent_bench_check_cancel(run->ctx, error))
			return FALSE;
	}
	for (gsize i = 0; i < lines; i++) {
		void **from = (void **)(gpointer)(run->buf + (gsize)order[i] * MEM_LINE);
		void **to =
		    (void **)(gpointer)(run->buf + (gsize)order[(i + 1) % lines] * MEM_LINE);
		*from = to;
	}

	p = (void **)(gpointer)(run->buf + (gsize)order[0] * MEM_LINE);
	start = g_get_monotonic_time();
	do {
		for (guint i = 0; i < MEM_CHASE_BATCH; i++)
			p = *p;
		steps += MEM_CHASE_BATCH;
		now = g_get_monotonic_time();
		if (!agent_bench_check_cancel(run->ctx, error))
			return FALSE;
	} while (now - start < MEM_PHASE_US);
	mem_sink += GPOINTER_TO_SIZE(p);
	*ns = (double)(now - start) * 1000.0 / (double)steps;
	return TRUE;
}

static void mem_add_unavailable(JsonArray *metrics, const char *kind, const char *reason)
{
	json_array_add_element(metrics, agent_bench_sample_new_unavailable(
	                                    "page-fault", "ns", reason, "pages", kind, NULL));
	for (guint i = 0; i < G_N_ELEMENTS(mem_op_names); i++) {
		json_array_add_element(metrics, agent_bench_sample_new_unavailable(
		                                    "memory-bandwidth", "B/s", reason, "op",
		                                    mem_op_names[i], "pages", kind, NULL));
	}
	json_array_add_element(metrics, agent_bench_sample_new_unavailable(
	                                    "memory-latency", "ns", reason, "pages", kind, NULL));
}

#ifdef G_OS_WIN32
/* Windows: committed private pages of 4 KiB, touched for the first time by the fault test. */
static guint8 *mem_map(MemRun *run, char **reason, GError **error)
{
	void *buf = VirtualAlloc(NULL, run->map_size, MEM_RESERVE | MEM_COMMIT, PAGE_READWRITE);

	if (buf == NULL) {
		g_autofree char *msg = g_win32_error_message((gint)GetLastError());
		g_set_error(error, GB_ERROR, GB_ERROR_FAILED,
		            "Cannot allocate %" G_GSIZE_FORMAT " bytes: %s", run->map_size, msg);
		return NULL;
	}
	return buf;
}

static void mem_unmap(MemRun *run)
{
	VirtualFree(run->buf, 0, MEM_RELEASE);
}
#else
static void mem_unmap(MemRun *run)
{
	munmap(run->buf, run->map_size);
}

/* Maps the buffer for one kind of page; NULL with *reason set when the kind is unavailable. */
static guint8 *mem_map(MemRun *run, char **reason, GError **error)
{
	int flags = MAP_PRIVATE | MAP_ANONYMOUS;
	void *buf;

	if (g_str_equal(run->kind, "hugetlb"))
		flags |= MAP_HUGETLB;
	buf = mmap(NULL, run->map_size, PROT_READ | PROT_WRITE, flags, -1, 0);
	if (buf == MAP_FAILED) {
		int errsv = errno;
		if (g_str_equal(run->kind, "hugetlb")) {
			*reason = g_strdup_printf("mmap(MAP_HUGETLB) of %" G_GSIZE_FORMAT
			                          " bytes failed: %s",
			                          run->map_size, g_strerror(errsv));
			return NULL;
		}
		g_set_error(error, GB_ERROR, GB_ERROR_FAILED,
		            "Cannot map %" G_GSIZE_FORMAT " bytes: %s", run->map_size,
		            g_strerror(errsv));
		return NULL;
	}
	if (g_str_equal(run->kind, "4k") && madvise(buf, run->map_size, MADV_NOHUGEPAGE) != 0) {
		int errsv = errno;
		munmap(buf, run->map_size);
		g_set_error(error, GB_ERROR, GB_ERROR_FAILED, "madvise(MADV_NOHUGEPAGE) failed: %s",
		            g_strerror(errsv));
		return NULL;
	}
	if (g_str_equal(run->kind, "thp") && madvise(buf, run->map_size, MADV_HUGEPAGE) != 0) {
		int errsv = errno;
		munmap(buf, run->map_size);
		*reason = g_strdup_printf("madvise(MADV_HUGEPAGE) failed: %s", g_strerror(errsv));
		return NULL;
	}
	return buf;
}
#endif

/* The three measurements on a mapped buffer. */
static gboolean mem_measure(MemRun *run, double *fault_ns, double *rates, double *latency_ns,
                            GError **error)
{
	mem_progress(run, 0.0, "page faults");
	if (!mem_page_faults(run, fault_ns, error))
		return FALSE;
	for (guint i = 0; i < G_N_ELEMENTS(mem_op_names); i++) {
		g_autofree char *what = g_strdup_printf("%s bandwidth", mem_op_names[i]);
		mem_progress(run, 0.2 + 0.2 * i, what);
		if (!mem_bandwidth(run, (MemOp)i, &rates[i], error))
			return FALSE;
	}
	mem_progress(run, 0.8, "latency");
	return mem_latency(run, latency_ns, error);
}

static gboolean mem_run_kind(MemRun *run, JsonArray *metrics, GError **error)
{
	g_autofree char *reason = mem_kind_unavailable(run->ctx->sysroot, run->kind, run->size);
	double fault_ns = 0;
	double latency_ns = 0;
	double rates[G_N_ELEMENTS(mem_op_names)] = { 0 };
	gboolean ok;

	if (reason == NULL) {
		run->map_size = run->size;
		if (g_str_equal(run->kind, "hugetlb")) {
			gsize hps = mem_hugetlb_page_size(run->ctx->sysroot);
			run->map_size = (run->size + hps - 1) / hps * hps;
		}
		run->buf = mem_map(run, &reason, error);
		if (run->buf == NULL && reason == NULL)
			return FALSE;
	}
	if (reason != NULL) {
		mem_add_unavailable(metrics, run->kind, reason);
		return TRUE;
	}

	ok = mem_measure(run, &fault_ns, rates, &latency_ns, error);
	mem_unmap(run);
	run->buf = NULL;
	if (!ok)
		return FALSE;

	json_array_add_element(metrics, agent_bench_sample_new("page-fault", fault_ns, "ns",
	                                                       "pages", run->kind, NULL));
	for (guint i = 0; i < G_N_ELEMENTS(mem_op_names); i++) {
		json_array_add_element(metrics, agent_bench_sample_new("memory-bandwidth", rates[i],
		                                                       "B/s", "op", mem_op_names[i],
		                                                       "pages", run->kind, NULL));
	}
	json_array_add_element(metrics, agent_bench_sample_new("memory-latency", latency_ns, "ns",
	                                                       "pages", run->kind, NULL));
	return TRUE;
}

static JsonNode *mem_run(AgentBenchContext *ctx, JsonObject *params, GError **error)
{
	g_auto(GStrv) pages = NULL;
	gint64 size = 0;
	g_autoptr(JsonObject) result = json_object_new();
	JsonArray *metrics = json_array_new();
	guint n;

	json_object_set_array_member(result, "metrics", metrics);
	agent_bench_keep_partial(ctx, metrics);
	if (!gb_json_get_int(params, "size", GB_JSON_REQUIRED, MEM_MIN_SIZE, G_MAXINT64, &size,
	                     error) ||
	    !gb_json_get_strv(params, "pages", GB_JSON_REQUIRED, &pages, error))
		return NULL;
	n = g_strv_length(pages);
	for (guint i = 0; i < n; i++) {
		MemRun run = {
			.ctx = ctx,
			.kind = pages[i],
			.size = (gsize)size,
			.progress_base = (double)i / n,
			.progress_span = 1.0 / n,
		};
		if (!mem_run_kind(&run, metrics, error))
			return NULL;
	}
	agent_bench_progress(ctx, 1.0, "done");
	return json_node_init_object(json_node_alloc(), result);
}

static const char *const mem_fact_sections[] = { "cpu", "memory", NULL };

const AgentBench agent_bench_mem = {
	.name = "mem",
	.validate = mem_validate,
	.run = mem_run,
	.fact_sections = mem_fact_sections,
};
