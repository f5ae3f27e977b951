/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"

#include <stdlib.h>

#include "guestbench-protocol.h"

#include "analysis/host-rules.h"
#include "fleet/host-files.h"
#include "fleet/hostview.h"

/* Flags that matter for guest performance (cpuinfo spelling). */
static const char *const cli_host_interesting_flags[] = {
	"aes", "pclmulqdq", "avx", "avx2", "vaes", "vpclmulqdq", "sha_ni", "avx512f", NULL,
};

/* The flags the host view reports: the ones above, then the speculation-control bits. */
static const char *const *const cli_host_flag_lists[] = {
	cli_host_interesting_flags,
	cli_host_spec_ctrl_flags,
};

static gboolean cli_host_flag_interesting(const char *flag)
{
	for (guint l = 0; l < G_N_ELEMENTS(cli_host_flag_lists); l++) {
		if (g_strv_contains(cli_host_flag_lists[l], flag))
			return TRUE;
	}
	return FALSE;
}

/* ---- what the domain XML says (libvirt) ---------------------------------------------- */

/* Real domain XML nests about 8 deep; this only stops pathological input early. */
#define CLI_HOSTVIEW_XML_MAX_DEPTH 128

typedef struct {
	char *dev;    /* <target dev=>: the name the guest gives the disk ("vda") */
	char *serial; /* <serial> */
	char *alias;  /* <alias name=>: QEMU's device id ("virtio-disk0") */
} CliHostviewDisk;

typedef struct {
	GPtrArray *stack;      /* element names, borrowed from the parser: the path to here */
	GPtrArray *disks;      /* CliHostviewDisk with an alias and a target */
	CliHostviewDisk *disk; /* the <disk> being read */
	GString *serial;       /* text of <serial> while inside it */
	char *numa_mode;
	char *numa_nodeset;
	gboolean hugepages; /* <memoryBacking><hugepages/> */
} CliHostviewXml;

static void cli_hostview_disk_free(CliHostviewDisk *disk)
{
	if (disk == NULL)
		return;
	g_free(disk->dev);
	g_free(disk->serial);
	g_free(disk->alias);
	g_free(disk);
}

static void cli_hostview_xml_clear(CliHostviewXml *x)
{
	g_clear_pointer(&x->stack, g_ptr_array_unref);
	g_clear_pointer(&x->disks, g_ptr_array_unref);
	cli_hostview_disk_free(x->disk);
	if (x->serial != NULL)
		g_string_free(x->serial, TRUE);
	g_free(x->numa_mode);
	g_free(x->numa_nodeset);
}

/* Whether the open elements are exactly path ("domain/devices/disk"). */
static gboolean cli_hostview_xml_at(CliHostviewXml *x, const char *path)
{
	g_auto(GStrv) parts = g_strsplit(path, "/", -1);

	if (g_strv_length(parts) != x->stack->len)
		return FALSE;
	for (guint i = 0; i < x->stack->len; i++) {
		if (g_strcmp0(parts[i], g_ptr_array_index(x->stack, i)) != 0)
			return FALSE;
	}
	return TRUE;
}

static const char *cli_hostview_xml_attr(const char **names, const char **values, const char *name)
{
	for (guint i = 0; names[i] != NULL; i++) {
		if (g_strcmp0(names[i], name) == 0)
			return values[i];
	}
	return NULL;
}

static void cli_hostview_xml_start_cb(GMarkupParseContext *context, const char *element,
                                      const char **names, const char **values, gpointer user_data,
                                      GError **error)
{
	CliHostviewXml *x = user_data;

	(void)context;
	if (x->stack->len >= CLI_HOSTVIEW_XML_MAX_DEPTH) {
		g_set_error(error, G_MARKUP_ERROR, G_MARKUP_ERROR_INVALID_CONTENT,
		            "elements nested deeper than %u", CLI_HOSTVIEW_XML_MAX_DEPTH);
		return;
	}
	g_ptr_array_add(x->stack, (gpointer)element);
	if (x->stack->len == 1 && g_strcmp0(element, "domain") != 0) {
		g_set_error(error, G_MARKUP_ERROR, G_MARKUP_ERROR_INVALID_CONTENT,
		            "root element is <%s>, not <domain>", element);
	} else if (cli_hostview_xml_at(x, "domain/devices/disk")) {
		cli_hostview_disk_free(x->disk);
		x->disk = g_new0(CliHostviewDisk, 1);
	} else if (x->disk != NULL && cli_hostview_xml_at(x, "domain/devices/disk/target")) {
		g_free(x->disk->dev);
		x->disk->dev = g_strdup(cli_hostview_xml_attr(names, values, "dev"));
	} else if (x->disk != NULL && cli_hostview_xml_at(x, "domain/devices/disk/alias")) {
		g_free(x->disk->alias);
		x->disk->alias = g_strdup(cli_hostview_xml_attr(names, values, "name"));
	} else if (x->disk != NULL && cli_hostview_xml_at(x, "domain/devices/disk/serial")) {
		if (x->serial == NULL)
			x->serial = g_string_new(NULL);
	} else if (cli_hostview_xml_at(x, "domain/numatune/memory")) {
		g_free(x->numa_mode);
		g_free(x->numa_nodeset);
		x->numa_mode = g_strdup(cli_hostview_xml_attr(names, values, "mode"));
		x->numa_nodeset = g_strdup(cli_hostview_xml_attr(names, values, "nodeset"));
		/* libvirt's default mode */
		if (x->numa_mode == NULL)
			x->numa_mode = g_strdup("strict");
	} else if (cli_hostview_xml_at(x, "domain/memoryBacking/hugepages")) {
		x->hugepages = TRUE;
	}
}

static void cli_hostview_xml_end_cb(GMarkupParseContext *context, const char *element,
                                    gpointer user_data, GError **error)
{
	CliHostviewXml *x = user_data;

	(void)context;
	(void)element;
	(void)error;
	if (x->serial != NULL && cli_hostview_xml_at(x, "domain/devices/disk/serial")) {
		g_free(x->disk->serial);
		x->disk->serial = g_string_free(g_steal_pointer(&x->serial), FALSE);
	} else if (x->disk != NULL && cli_hostview_xml_at(x, "domain/devices/disk")) {
		if (x->disk->alias != NULL && x->disk->dev != NULL)
			g_ptr_array_add(x->disks, g_steal_pointer(&x->disk));
		else
			g_clear_pointer(&x->disk, cli_hostview_disk_free);
	}
	g_ptr_array_set_size(x->stack, x->stack->len - 1);
}

static void cli_hostview_xml_text_cb(GMarkupParseContext *context, const char *text, gsize len,
                                     gpointer user_data, GError **error)
{
	CliHostviewXml *x = user_data;

	(void)context;
	(void)error;
	if (x->serial != NULL && cli_hostview_xml_at(x, "domain/devices/disk/serial"))
		g_string_append_len(x->serial, text, (gssize)len);
}

static const GMarkupParser cli_hostview_xml_parser = {
	.start_element = cli_hostview_xml_start_cb,
	.end_element = cli_hostview_xml_end_cb,
	.text = cli_hostview_xml_text_cb,
};

/* Reads the disks, <numatune> and <memoryBacking> of a domain XML into x. */
static gboolean cli_hostview_xml_parse(CliHostviewXml *x, const char *xml, GError **error)
{
	g_autoptr(GMarkupParseContext) context = NULL;

	x->stack = g_ptr_array_new();
	x->disks = g_ptr_array_new_with_free_func((GDestroyNotify)cli_hostview_disk_free);
	context = g_markup_parse_context_new(&cli_hostview_xml_parser,
	                                     G_MARKUP_PREFIX_ERROR_POSITION, x, NULL);
	return g_markup_parse_context_parse(context, xml, -1, error) &&
	       g_markup_parse_context_end_parse(context, error);
}

/*
 * The domain disk QMP's block device is: libvirt names the device by the
 * disk's <alias> (qdev "/machine/peripheral/ALIAS/virtio-backend" or "ALIAS"),
 * or the drive "drive-ALIAS" for older -drive command lines.
 */
static const CliHostviewDisk *cli_hostview_xml_find_disk(CliHostviewXml *x, const char *device,
                                                         const char *qdev)
{
	for (guint i = 0; x->disks != NULL && i < x->disks->len; i++) {
		const CliHostviewDisk *disk = g_ptr_array_index(x->disks, i);
		g_auto(GStrv) parts = g_strsplit(qdev != NULL ? qdev : "", "/", -1);
		g_autofree char *drive = g_strdup_printf("drive-%s", disk->alias);

		if (g_strv_contains((const char *const *)parts, disk->alias) ||
		    g_strcmp0(device, drive) == 0)
			return disk;
	}
	return NULL;
}

/* ---- the pure build ------------------------------------------------------------------ */

typedef struct {
	guint id;
	GArray *cpus; /* guint */
} CliHostNode;

static void cli_host_node_free(CliHostNode *node)
{
	g_array_unref(node->cpus);
	g_free(node);
}

typedef struct {
	const char *sysroot;
	gint64 pid;
	JsonBuilder *builder;
	GPtrArray *errors; /* char * */
	GPtrArray *nodes;  /* CliHostNode, by id */
	/* libvirt domains: what libvirt says about it (replies' "libvirt") */
	CliHostviewXml xml;
	/* the hypervisor of a remote connection: none of its files are here to read */
	const char *remote_host;
	gint64 pinned_host_cpus; /* remote: the host's CPU count, from libvirt; -1 unknown */
	char **pinned_vcpus;     /* remote: each vCPU's CPUs from libvirt, or NULL */
	const char *pinned_emulator;
} CliHostviewCtx;

static void ctx_error(CliHostviewCtx *ctx, const char *what, const GError *error)
{
	g_ptr_array_add(ctx->errors, g_strdup_printf("%s: %s", what, error->message));
}

static void ctx_add_uint_array(JsonBuilder *builder, GArray *array)
{
	json_builder_begin_array(builder);
	for (guint i = 0; array != NULL && i < array->len; i++)
		json_builder_add_int_value(builder, g_array_index(array, guint, i));
	json_builder_end_array(builder);
}

static void cli_hostview_read_nodes(CliHostviewCtx *ctx)
{
	g_autofree char *dir_path = cli_host_path(ctx->sysroot, "/sys/devices/system/node");
	g_autoptr(GDir) dir = g_dir_open(dir_path, 0, NULL);
	const char *name;

	if (dir == NULL)
		return; /* a kernel without NUMA: no placement to judge */
	while ((name = g_dir_read_name(dir)) != NULL) {
		g_autofree char *rel = NULL;
		g_autofree char *text = NULL;
		g_autoptr(GError) error = NULL;
		CliHostNode *node;
		guint64 id = 0;

		if (!g_str_has_prefix(name, "node") ||
		    !cli_host_parse_uint(name + 4, CLI_HOST_MAX_CPU, &id))
			continue;
		rel = g_strdup_printf("/sys/devices/system/node/%s/cpulist", name);
		text = cli_host_read(ctx->sysroot, rel, &error);
		node = g_new0(CliHostNode, 1);
		node->id = (guint)id;
		if (text != NULL)
			node->cpus = cli_host_parse_cpulist(text, &error);
		if (node->cpus == NULL) {
			ctx_error(ctx, rel, error);
			node->cpus = g_array_new(FALSE, FALSE, sizeof(guint));
		}
		g_ptr_array_add(ctx->nodes, node);
	}
}

static gint cli_host_node_cmp(gconstpointer a, gconstpointer b)
{
	const CliHostNode *x = *(CliHostNode *const *)a;
	const CliHostNode *y = *(CliHostNode *const *)b;
	return x->id < y->id ? -1 : x->id > y->id;
}

static gboolean cli_host_node_has_cpu(CliHostNode *node, guint cpu)
{
	for (guint i = 0; i < node->cpus->len; i++) {
		if (g_array_index(node->cpus, guint, i) == cpu)
			return TRUE;
	}
	return FALSE;
}

static void cli_hostview_add_nodes(CliHostviewCtx *ctx)
{
	guint n_cpus = 0;

	json_builder_set_member_name(ctx->builder, "host_nodes");
	json_builder_begin_array(ctx->builder);
	for (guint i = 0; i < ctx->nodes->len; i++) {
		CliHostNode *node = g_ptr_array_index(ctx->nodes, i);
		json_builder_begin_object(ctx->builder);
		json_builder_set_member_name(ctx->builder, "id");
		json_builder_add_int_value(ctx->builder, node->id);
		json_builder_set_member_name(ctx->builder, "cpus");
		ctx_add_uint_array(ctx->builder, node->cpus);
		json_builder_end_object(ctx->builder);
		n_cpus += node->cpus->len;
	}
	json_builder_end_array(ctx->builder);
	json_builder_set_member_name(ctx->builder, "host_cpus");
	if (ctx->remote_host == NULL)
		json_builder_add_int_value(ctx->builder, n_cpus);
	else if (ctx->pinned_host_cpus >= 0)
		json_builder_add_int_value(ctx->builder, ctx->pinned_host_cpus);
	else
		json_builder_add_null_value(ctx->builder);
}

static const char *cli_hostview_cache_mode(gboolean writeback, gboolean direct, gboolean no_flush)
{
	/* QEMU's -drive cache= shorthands, from the three bits query-block reports */
	if (no_flush)
		return "unsafe";
	if (writeback)
		return direct ? "none" : "writeback";
	return direct ? "directsync" : "writethrough";
}

static void cli_hostview_add_block(CliHostviewCtx *ctx, JsonObject *replies)
{
	g_autoptr(GError) error = NULL;
	JsonArray *devices = NULL;

	json_builder_set_member_name(ctx->builder, "block");
	json_builder_begin_array(ctx->builder);
	if (!gb_json_get_array(replies, "query-block", GB_JSON_OPTIONAL, &devices, &error))
		ctx_error(ctx, "query-block", error);
	for (guint i = 0; devices != NULL && i < json_array_get_length(devices); i++) {
		g_autoptr(GError) error_local = NULL;
		JsonObject *dev = NULL;
		JsonObject *inserted = NULL;
		JsonObject *cache = NULL;
		const char *device = "";
		const char *qdev = NULL;
		const char *drv = NULL;
		const char *file = NULL;
		const CliHostviewDisk *disk = NULL;
		gboolean writeback = FALSE, direct = FALSE, no_flush = FALSE;

		if (!gb_json_node_get_object(json_array_get_element(devices, i), "query-block[]",
		                             &dev, &error_local) ||
		    !gb_json_get_string(dev, "device", GB_JSON_OPTIONAL, &device, &error_local) ||
		    !gb_json_get_string(dev, "qdev", GB_JSON_OPTIONAL, &qdev, &error_local) ||
		    !gb_json_get_object(dev, "inserted", GB_JSON_OPTIONAL, &inserted,
		                        &error_local)) {
			ctx_error(ctx, "query-block", error_local);
			continue;
		}
		if (inserted == NULL)
			continue; /* an empty CD-ROM drive has no cache to judge */
		if (!gb_json_get_string(inserted, "drv", GB_JSON_REQUIRED, &drv, &error_local) ||
		    !gb_json_get_string(inserted, "file", GB_JSON_REQUIRED, &file, &error_local) ||
		    !gb_json_get_object(inserted, "cache", GB_JSON_REQUIRED, &cache,
		                        &error_local) ||
		    !gb_json_get_bool(cache, "writeback", GB_JSON_REQUIRED, &writeback,
		                      &error_local) ||
		    !gb_json_get_bool(cache, "direct", GB_JSON_REQUIRED, &direct, &error_local) ||
		    !gb_json_get_bool(cache, "no-flush", GB_JSON_REQUIRED, &no_flush,
		                      &error_local)) {
			ctx_error(ctx, "query-block", error_local);
			continue;
		}
		disk = cli_hostview_xml_find_disk(&ctx->xml, device, qdev);
		json_builder_begin_object(ctx->builder);
		/* QMP's name, for reference: findings name the disk as the guest sees it */
		json_builder_set_member_name(ctx->builder, "device");
		json_builder_add_string_value(ctx->builder, device[0] != '\0' ? device
		                                            : qdev != NULL    ? qdev
		                                                              : "unnamed");
		json_builder_set_member_name(ctx->builder, "qdev");
		json_builder_add_string_value(ctx->builder, qdev);
		json_builder_set_member_name(ctx->builder, "disk");
		json_builder_add_string_value(ctx->builder, disk != NULL ? disk->dev : NULL);
		json_builder_set_member_name(ctx->builder, "serial");
		json_builder_add_string_value(ctx->builder, disk != NULL ? disk->serial : NULL);
		json_builder_set_member_name(ctx->builder, "driver");
		json_builder_add_string_value(ctx->builder, drv);
		json_builder_set_member_name(ctx->builder, "file");
		json_builder_add_string_value(ctx->builder, file);
		json_builder_set_member_name(ctx->builder, "cache");
		json_builder_add_string_value(ctx->builder,
		                              cli_hostview_cache_mode(writeback, direct, no_flush));
		json_builder_set_member_name(ctx->builder, "writeback");
		json_builder_add_boolean_value(ctx->builder, writeback);
		json_builder_set_member_name(ctx->builder, "direct");
		json_builder_add_boolean_value(ctx->builder, direct);
		json_builder_set_member_name(ctx->builder, "no_flush");
		json_builder_add_boolean_value(ctx->builder, no_flush);
		json_builder_end_object(ctx->builder);
	}
	json_builder_end_array(ctx->builder);
}

/* Cpus_allowed_list of one vCPU thread, or NULL (error noted). */
static GArray *cli_hostview_read_affinity(CliHostviewCtx *ctx, gint64 tid)
{
	g_autofree char *rel = g_strdup_printf(
	    "/proc/%" G_GINT64_FORMAT "/task/%" G_GINT64_FORMAT "/status", ctx->pid, tid);
	g_autoptr(GError) error = NULL;
	g_autofree char *text = cli_host_read(ctx->sysroot, rel, &error);
	g_auto(GStrv) lines = NULL;

	if (text == NULL) {
		ctx_error(ctx, rel, error);
		return NULL;
	}
	lines = g_strsplit(text, "\n", -1);
	for (guint i = 0; lines[i] != NULL; i++) {
		GArray *cpus;

		if (!g_str_has_prefix(lines[i], "Cpus_allowed_list:"))
			continue;
		cpus = cli_host_parse_cpulist(lines[i] + strlen("Cpus_allowed_list:"), &error);
		if (cpus == NULL)
			ctx_error(ctx, rel, error);
		return cpus;
	}
	g_ptr_array_add(ctx->errors, g_strdup_printf("%s: no Cpus_allowed_list", rel));
	return NULL;
}

/* The CPUs libvirt says vCPU index may run on (remote domains), or NULL (error noted). */
static GArray *cli_hostview_pinned_cpus(CliHostviewCtx *ctx, gint64 index)
{
	g_autoptr(GError) error = NULL;
	GArray *cpus;

	if (ctx->pinned_vcpus == NULL)
		return NULL; /* the pinning could not be read: noted where it failed */
	if (index >= g_strv_length(ctx->pinned_vcpus)) {
		g_ptr_array_add(
		    ctx->errors,
		    g_strdup_printf("libvirt pinning: no vCPU %" G_GINT64_FORMAT, index));
		return NULL;
	}
	cpus = cli_host_parse_cpulist(ctx->pinned_vcpus[index], &error);
	if (cpus == NULL)
		ctx_error(ctx, "libvirt pinning", error);
	return cpus;
}

static void cli_hostview_add_vcpus(CliHostviewCtx *ctx, JsonObject *replies)
{
	g_autoptr(GError) error = NULL;
	JsonArray *cpus = NULL;

	json_builder_set_member_name(ctx->builder, "vcpus");
	json_builder_begin_array(ctx->builder);
	if (!gb_json_get_array(replies, "query-cpus-fast", GB_JSON_OPTIONAL, &cpus, &error))
		ctx_error(ctx, "query-cpus-fast", error);
	for (guint i = 0; cpus != NULL && i < json_array_get_length(cpus); i++) {
		g_autoptr(GError) error_local = NULL;
		g_autoptr(GArray) allowed = NULL;
		JsonObject *cpu = NULL;
		gint64 index = 0, tid = 0;

		if (!gb_json_node_get_object(json_array_get_element(cpus, i), "query-cpus-fast[]",
		                             &cpu, &error_local) ||
		    !gb_json_get_int(cpu, "cpu-index", GB_JSON_REQUIRED, 0, G_MAXINT32, &index,
		                     &error_local) ||
		    !gb_json_get_int(cpu, "thread-id", GB_JSON_REQUIRED, 1, G_MAXINT32, &tid,
		                     &error_local)) {
			ctx_error(ctx, "query-cpus-fast", error_local);
			continue;
		}
		if (ctx->remote_host != NULL)
			allowed = cli_hostview_pinned_cpus(ctx, index);
		else if (ctx->pid > 0)
			allowed = cli_hostview_read_affinity(ctx, tid);
		json_builder_begin_object(ctx->builder);
		json_builder_set_member_name(ctx->builder, "index");
		json_builder_add_int_value(ctx->builder, index);
		json_builder_set_member_name(ctx->builder, "thread_id");
		json_builder_add_int_value(ctx->builder, tid);
		json_builder_set_member_name(ctx->builder, "cpus_allowed");
		if (allowed != NULL)
			ctx_add_uint_array(ctx->builder, allowed);
		else
			json_builder_add_null_value(ctx->builder);
		json_builder_set_member_name(ctx->builder, "nodes");
		json_builder_begin_array(ctx->builder);
		for (guint n = 0; allowed != NULL && n < ctx->nodes->len; n++) {
			CliHostNode *node = g_ptr_array_index(ctx->nodes, n);
			for (guint c = 0; c < allowed->len; c++) {
				if (cli_host_node_has_cpu(node, g_array_index(allowed, guint, c))) {
					json_builder_add_int_value(ctx->builder, node->id);
					break;
				}
			}
		}
		json_builder_end_array(ctx->builder);
		json_builder_end_object(ctx->builder);
	}
	json_builder_end_array(ctx->builder);
}

/* Where QEMU's memory is: per node, pages x page size summed over numa_maps lines. */
static void cli_hostview_add_numa_maps(CliHostviewCtx *ctx)
{
	g_autofree char *rel = g_strdup_printf("/proc/%" G_GINT64_FORMAT "/numa_maps", ctx->pid);
	g_autoptr(GError) error = NULL;
	g_autofree char *text = NULL;
	g_autoptr(GArray) bytes = g_array_new(FALSE, TRUE, sizeof(guint64));
	g_auto(GStrv) lines = NULL;

	json_builder_set_member_name(ctx->builder, "memory_nodes");
	json_builder_begin_array(ctx->builder);
	if (ctx->pid > 0)
		text = cli_host_read(ctx->sysroot, rel, &error);
	if (text == NULL && ctx->pid > 0)
		ctx_error(ctx, rel, error);
	lines = g_strsplit(text != NULL ? text : "", "\n", -1);
	for (guint i = 0; lines[i] != NULL; i++) {
		g_auto(GStrv) tokens = g_strsplit(lines[i], " ", -1);
		guint64 page_kb = 4;
		gboolean bad = FALSE;

		for (guint t = 0; tokens[t] != NULL; t++) {
			if (g_str_has_prefix(tokens[t], "kernelpagesize_kB=") &&
			    !cli_host_parse_uint(tokens[t] + strlen("kernelpagesize_kB="),
			                         16 * 1024 * 1024, &page_kb))
				bad = TRUE;
		}
		for (guint t = 0; tokens[t] != NULL && !bad; t++) {
			const char *eq = strchr(tokens[t], '=');
			g_autofree char *node_str = NULL;
			guint64 node = 0, pages = 0;

			if (tokens[t][0] != 'N' || eq == NULL)
				continue;
			node_str = g_strndup(tokens[t] + 1, eq - tokens[t] - 1);
			if (!cli_host_parse_uint(node_str, 1023, &node) ||
			    !cli_host_parse_uint(eq + 1, G_MAXUINT32, &pages)) {
				bad = TRUE;
				break;
			}
			if (node >= bytes->len)
				g_array_set_size(bytes, node + 1);
			g_array_index(bytes, guint64, node) += pages * page_kb * 1024;
		}
		if (bad) {
			g_ptr_array_add(ctx->errors, g_strdup_printf("%s: line %u is not numa_maps",
			                                             rel, i + 1));
			break;
		}
	}
	for (guint n = 0; n < bytes->len; n++) {
		if (g_array_index(bytes, guint64, n) == 0)
			continue;
		json_builder_begin_object(ctx->builder);
		json_builder_set_member_name(ctx->builder, "node");
		json_builder_add_int_value(ctx->builder, n);
		json_builder_set_member_name(ctx->builder, "bytes");
		json_builder_add_int_value(ctx->builder, (gint64)g_array_index(bytes, guint64, n));
		json_builder_end_object(ctx->builder);
	}
	json_builder_end_array(ctx->builder);
}

/* Bytes of QEMU mappings backed by pages bigger than 4 kB (hugetlbfs), from smaps. */
static guint64 cli_hostview_read_smaps(CliHostviewCtx *ctx)
{
	g_autofree char *rel = g_strdup_printf("/proc/%" G_GINT64_FORMAT "/smaps", ctx->pid);
	g_autoptr(GError) error = NULL;
	g_autofree char *text = NULL;
	g_auto(GStrv) lines = NULL;
	guint64 size_kb = 0;
	guint64 total = 0;

	if (ctx->pid <= 0)
		return 0;
	text = cli_host_read(ctx->sysroot, rel, &error);
	if (text == NULL) {
		ctx_error(ctx, rel, error);
		return 0;
	}
	lines = g_strsplit(text, "\n", -1);
	for (guint i = 0; lines[i] != NULL; i++) {
		g_auto(GStrv) tokens = g_strsplit_set(lines[i], " \t", -1);
		g_autoptr(GPtrArray) words = g_ptr_array_new();
		guint64 val = 0;

		for (guint t = 0; tokens[t] != NULL; t++) {
			if (tokens[t][0] != '\0')
				g_ptr_array_add(words, tokens[t]);
		}
		if (words->len != 3 || g_strcmp0(g_ptr_array_index(words, 2), "kB") != 0 ||
		    !cli_host_parse_uint(g_ptr_array_index(words, 1), G_MAXUINT32 * 1024ULL, &val))
			continue;
		if (g_strcmp0(g_ptr_array_index(words, 0), "Size:") == 0)
			size_kb = val;
		else if (g_strcmp0(g_ptr_array_index(words, 0), "KernelPageSize:") == 0 && val > 4)
			total += size_kb * 1024;
	}
	return total;
}

/* Mount points of hugetlbfs, from SYSROOT/proc/mounts. */
static GPtrArray *cli_hostview_hugetlbfs_mounts(CliHostviewCtx *ctx)
{
	GPtrArray *mounts = g_ptr_array_new_with_free_func(g_free);
	/* a remote host's mounts are not here: its backends are judged by the domain XML */
	g_autofree char *text =
	    ctx->remote_host == NULL ? cli_host_read(ctx->sysroot, "/proc/mounts", NULL) : NULL;
	g_auto(GStrv) lines = g_strsplit(text != NULL ? text : "", "\n", -1);

	for (guint i = 0; lines[i] != NULL; i++) {
		g_auto(GStrv) fields = g_strsplit(lines[i], " ", -1);
		if (g_strv_length(fields) >= 3 && g_strcmp0(fields[2], "hugetlbfs") == 0)
			g_ptr_array_add(mounts, g_strdup(fields[1]));
	}
	return mounts;
}

static gboolean cli_hostview_on_hugetlbfs(GPtrArray *mounts, const char *path)
{
	for (guint i = 0; path != NULL && i < mounts->len; i++) {
		const char *mnt = g_ptr_array_index(mounts, i);
		gsize len = strlen(mnt);
		if (strncmp(path, mnt, len) == 0 && (path[len] == '/' || path[len] == '\0'))
			return TRUE;
	}
	return FALSE;
}

/* Adds "memdevs"; returns TRUE when a backend sits on hugetlbfs. */
static gboolean cli_hostview_add_memdevs(CliHostviewCtx *ctx, JsonObject *replies)
{
	g_autoptr(GError) error = NULL;
	g_autoptr(GPtrArray) mounts = cli_hostview_hugetlbfs_mounts(ctx);
	JsonArray *devs = NULL;
	JsonObject *props_all = NULL;
	gboolean any_huge = FALSE;

	json_builder_set_member_name(ctx->builder, "memdevs");
	json_builder_begin_array(ctx->builder);
	if (!gb_json_get_array(replies, "query-memdev", GB_JSON_OPTIONAL, &devs, &error) ||
	    !gb_json_get_object(replies, "memdev-props", GB_JSON_OPTIONAL, &props_all, &error))
		ctx_error(ctx, "query-memdev", error);
	for (guint i = 0; devs != NULL && i < json_array_get_length(devs); i++) {
		g_autoptr(GError) error_local = NULL;
		g_autoptr(GArray) host_nodes = NULL;
		JsonObject *dev = NULL;
		JsonObject *props = NULL;
		const char *id = NULL;
		const char *policy = "default";
		const char *type = NULL;
		const char *mem_path = NULL;
		gint64 size = 0;
		gboolean huge;

		if (!gb_json_node_get_object(json_array_get_element(devs, i), "query-memdev[]",
		                             &dev, &error_local) ||
		    !gb_json_get_string(dev, "id", GB_JSON_OPTIONAL, &id, &error_local) ||
		    !gb_json_get_int(dev, "size", GB_JSON_REQUIRED, 0, G_MAXINT64, &size,
		                     &error_local) ||
		    !gb_json_get_string(dev, "policy", GB_JSON_OPTIONAL, &policy, &error_local) ||
		    !gb_json_get_int_array(dev, "host-nodes", GB_JSON_OPTIONAL, 0, 1023,
		                           &host_nodes, &error_local)) {
			ctx_error(ctx, "query-memdev", error_local);
			continue;
		}
		if (id != NULL &&
		    (!gb_json_get_object(props_all, id, GB_JSON_OPTIONAL, &props, &error_local) ||
		     !gb_json_get_string(props, "type", GB_JSON_OPTIONAL, &type, &error_local) ||
		     !gb_json_get_string(props, "mem-path", GB_JSON_OPTIONAL, &mem_path,
		                         &error_local))) {
			ctx_error(ctx, "memdev-props", error_local);
			type = NULL;
			mem_path = NULL;
		}
		huge = cli_hostview_on_hugetlbfs(mounts, mem_path);
		any_huge |= huge;
		json_builder_begin_object(ctx->builder);
		json_builder_set_member_name(ctx->builder, "id");
		json_builder_add_string_value(ctx->builder, id);
		json_builder_set_member_name(ctx->builder, "backend");
		json_builder_add_string_value(ctx->builder, type);
		json_builder_set_member_name(ctx->builder, "size");
		json_builder_add_int_value(ctx->builder, size);
		json_builder_set_member_name(ctx->builder, "policy");
		json_builder_add_string_value(ctx->builder, policy);
		json_builder_set_member_name(ctx->builder, "host_nodes");
		json_builder_begin_array(ctx->builder);
		for (guint n = 0; host_nodes != NULL && n < host_nodes->len; n++)
			json_builder_add_int_value(ctx->builder,
			                           g_array_index(host_nodes, gint64, n));
		json_builder_end_array(ctx->builder);
		json_builder_set_member_name(ctx->builder, "mem_path");
		json_builder_add_string_value(ctx->builder, mem_path);
		json_builder_set_member_name(ctx->builder, "hugetlbfs");
		json_builder_add_boolean_value(ctx->builder, huge);
		json_builder_end_object(ctx->builder);
	}
	json_builder_end_array(ctx->builder);
	return any_huge;
}

static void cli_hostview_add_cpu(CliHostviewCtx *ctx, JsonObject *replies)
{
	g_autoptr(GError) error = NULL;
	g_auto(GStrv) host_flags = NULL;
	JsonObject *expansion = NULL;
	JsonObject *model = NULL;
	JsonObject *props = NULL;
	const char *name = NULL;

	/* this host's /proc/cpuinfo says nothing of a remote hypervisor's CPU */
	if (ctx->remote_host == NULL) {
		host_flags = cli_host_read_cpu_flags(ctx->sysroot, &error);
		if (host_flags == NULL)
			ctx_error(ctx, "/proc/cpuinfo", error);
	}
	json_builder_set_member_name(ctx->builder, "host_cpu_flags");
	json_builder_begin_array(ctx->builder);
	for (guint i = 0; host_flags != NULL && host_flags[i] != NULL; i++) {
		if (cli_host_flag_interesting(host_flags[i]))
			json_builder_add_string_value(ctx->builder, host_flags[i]);
	}
	json_builder_end_array(ctx->builder);

	g_clear_error(&error);
	json_builder_set_member_name(ctx->builder, "cpu_offer");
	if (!gb_json_get_object(replies, "query-cpu-model-expansion", GB_JSON_OPTIONAL, &expansion,
	                        &error) ||
	    (expansion != NULL &&
	     (!gb_json_get_object(expansion, "model", GB_JSON_REQUIRED, &model, &error) ||
	      !gb_json_get_string(model, "name", GB_JSON_REQUIRED, &name, &error) ||
	      !gb_json_get_object(model, "props", GB_JSON_REQUIRED, &props, &error)))) {
		ctx_error(ctx, "query-cpu-model-expansion", error);
		props = NULL;
	}
	if (props == NULL) {
		json_builder_add_null_value(ctx->builder);
		return;
	}
	json_builder_begin_object(ctx->builder);
	json_builder_set_member_name(ctx->builder, "model");
	json_builder_add_string_value(ctx->builder, name);
	json_builder_set_member_name(ctx->builder, "flags");
	json_builder_begin_array(ctx->builder);
	for (guint l = 0; l < G_N_ELEMENTS(cli_host_flag_lists); l++) {
		const char *const *flags = cli_host_flag_lists[l];

		for (guint i = 0; flags[i] != NULL; i++) {
			/* QEMU spells sha_ni as sha-ni, md_clear as md-clear */
			g_autofree char *prop = g_strdelimit(g_strdup(flags[i]), "_", '-');
			gboolean on = FALSE;

			if (gb_json_get_bool(props, prop, GB_JSON_OPTIONAL, &on, NULL) && on)
				json_builder_add_string_value(ctx->builder, flags[i]);
		}
	}
	json_builder_end_array(ctx->builder);
	json_builder_end_object(ctx->builder);
}

/* What libvirt said (replies' "libvirt"): the domain XML, the remote host, the pinning. */
static JsonObject *cli_hostview_read_libvirt(CliHostviewCtx *ctx, JsonObject *replies,
                                             char ***pinned_vcpus)
{
	g_autoptr(GError) error = NULL;
	JsonObject *libvirt = NULL;
	JsonObject *pinning = NULL;
	const char *xml = NULL;

	ctx->pinned_host_cpus = -1;
	if (!gb_json_get_object(replies, "libvirt", GB_JSON_OPTIONAL, &libvirt, &error) ||
	    (libvirt != NULL &&
	     (!gb_json_get_string(libvirt, "host", GB_JSON_OPTIONAL, &ctx->remote_host, &error) ||
	      !gb_json_get_string(libvirt, "xml", GB_JSON_OPTIONAL, &xml, &error) ||
	      !gb_json_get_object(libvirt, "pinning", GB_JSON_OPTIONAL, &pinning, &error)))) {
		ctx_error(ctx, "libvirt", error);
		return NULL;
	}
	if (xml != NULL && !cli_hostview_xml_parse(&ctx->xml, xml, &error)) {
		ctx_error(ctx, "domain XML", error);
		/* what was read before the error is not trusted */
		g_ptr_array_set_size(ctx->xml.disks, 0);
		g_clear_pointer(&ctx->xml.numa_mode, g_free);
		g_clear_pointer(&ctx->xml.numa_nodeset, g_free);
		ctx->xml.hugepages = FALSE;
	}
	g_clear_error(&error);
	if (pinning != NULL &&
	    (!gb_json_get_int(pinning, "host_cpus", GB_JSON_REQUIRED, 1, CLI_HOST_MAX_CPU + 1,
	                      &ctx->pinned_host_cpus, &error) ||
	     !gb_json_get_strv(pinning, "vcpus", GB_JSON_REQUIRED, pinned_vcpus, &error) ||
	     !gb_json_get_string(pinning, "emulator", GB_JSON_OPTIONAL, &ctx->pinned_emulator,
	                         &error))) {
		ctx_error(ctx, "libvirt pinning", error);
		ctx->pinned_host_cpus = -1;
		g_clear_pointer(pinned_vcpus, g_strfreev);
		ctx->pinned_emulator = NULL;
	}
	ctx->pinned_vcpus = *pinned_vcpus;
	return libvirt;
}

/*
 * QEMU's pid where no socket peer told it (libvirt holds the monitor): the
 * process of a vCPU thread (its Tgid), if that process is QEMU; 0 otherwise.
 */
static gint64 cli_hostview_qemu_pid(CliHostviewCtx *ctx, JsonObject *replies)
{
	g_autoptr(GError) error = NULL;
	g_autofree char *rel = NULL;
	g_autofree char *text = NULL;
	g_autofree char *comm_rel = NULL;
	g_autofree char *comm = NULL;
	g_auto(GStrv) lines = NULL;
	JsonArray *cpus = NULL;
	JsonObject *cpu = NULL;
	gint64 tid = 0;
	guint64 pid = 0;

	if (!gb_json_get_array(replies, "query-cpus-fast", GB_JSON_OPTIONAL, &cpus, NULL) ||
	    cpus == NULL || json_array_get_length(cpus) == 0 ||
	    !gb_json_node_get_object(json_array_get_element(cpus, 0), "query-cpus-fast[]", &cpu,
	                             NULL) ||
	    !gb_json_get_int(cpu, "thread-id", GB_JSON_REQUIRED, 1, G_MAXINT32, &tid, NULL))
		return 0; /* the vCPU list notes what is wrong with it */
	rel = g_strdup_printf("/proc/%" G_GINT64_FORMAT "/status", tid);
	text = cli_host_read(ctx->sysroot, rel, &error);
	if (text == NULL) {
		ctx_error(ctx, "QEMU's pid", error);
		return 0;
	}
	lines = g_strsplit(text, "\n", -1);
	for (guint i = 0; lines[i] != NULL && pid == 0; i++) {
		if (g_str_has_prefix(lines[i], "Tgid:") &&
		    !cli_host_parse_uint(g_strstrip(lines[i] + strlen("Tgid:")), G_MAXINT32, &pid))
			break;
	}
	if (pid == 0) {
		g_ptr_array_add(
		    ctx->errors,
		    g_strdup_printf("QEMU's pid: %s: no Tgid of vCPU thread %" G_GINT64_FORMAT, rel,
		                    tid));
		return 0;
	}
	/* a recycled thread id would point at some other process: make sure it is QEMU */
	comm_rel = g_strdup_printf("/proc/%" G_GUINT64_FORMAT "/comm", pid);
	comm = cli_host_read(ctx->sysroot, comm_rel, &error);
	if (comm == NULL) {
		ctx_error(ctx, "QEMU's pid", error);
		return 0;
	}
	g_strstrip(comm);
	if (!g_str_has_prefix(comm, "qemu") && !g_str_has_prefix(comm, "kvm")) {
		g_ptr_array_add(ctx->errors,
		                g_strdup_printf("QEMU's pid: vCPU thread %" G_GINT64_FORMAT
		                                " belongs "
		                                "to process %" G_GUINT64_FORMAT " (%s), not QEMU",
		                                tid, pid, comm));
		return 0;
	}
	return (gint64)pid;
}

static void cli_hostview_add_libvirt(CliHostviewCtx *ctx, JsonObject *libvirt)
{
	g_autoptr(GArray) emulator = NULL;
	const char *domain = NULL;

	json_builder_set_member_name(ctx->builder, "libvirt");
	if (libvirt == NULL) {
		json_builder_add_null_value(ctx->builder);
	} else {
		gb_json_get_string(libvirt, "domain", GB_JSON_OPTIONAL, &domain, NULL);
		json_builder_begin_object(ctx->builder);
		json_builder_set_member_name(ctx->builder, "domain");
		json_builder_add_string_value(ctx->builder, domain);
		json_builder_set_member_name(ctx->builder, "numatune");
		if (ctx->xml.numa_mode != NULL) {
			json_builder_begin_object(ctx->builder);
			json_builder_set_member_name(ctx->builder, "mode");
			json_builder_add_string_value(ctx->builder, ctx->xml.numa_mode);
			json_builder_set_member_name(ctx->builder, "nodeset");
			json_builder_add_string_value(ctx->builder, ctx->xml.numa_nodeset);
			json_builder_end_object(ctx->builder);
		} else {
			json_builder_add_null_value(ctx->builder);
		}
		json_builder_set_member_name(ctx->builder, "hugepages");
		json_builder_add_boolean_value(ctx->builder, ctx->xml.hugepages);
		json_builder_set_member_name(ctx->builder, "emulator_cpus");
		if (ctx->pinned_emulator != NULL) {
			g_autoptr(GError) error = NULL;
			emulator = cli_host_parse_cpulist(ctx->pinned_emulator, &error);
			if (emulator == NULL)
				ctx_error(ctx, "libvirt emulator pinning", error);
		}
		if (emulator != NULL)
			ctx_add_uint_array(ctx->builder, emulator);
		else
			json_builder_add_null_value(ctx->builder);
		json_builder_end_object(ctx->builder);
	}
	json_builder_set_member_name(ctx->builder, "remote_host");
	json_builder_add_string_value(ctx->builder, ctx->remote_host);
	json_builder_set_member_name(ctx->builder, "local_only");
	if (ctx->remote_host != NULL) {
		g_autofree char *note = g_strdup_printf(
		    "numa_maps and smaps of the QEMU process and the host CPU flags "
		    "(/proc/cpuinfo) are not available: the domain runs on %s; placement "
		    "comes from libvirt (pinning, <numatune>, <memoryBacking>)",
		    ctx->remote_host);
		json_builder_add_string_value(ctx->builder, note);
	} else {
		json_builder_add_null_value(ctx->builder);
	}
}

JsonNode *cli_hostview_build(JsonObject *replies, const char *qmp_path, gint64 pid,
                             const char *sysroot)
{
	g_autoptr(JsonBuilder) builder = json_builder_new();
	g_autoptr(GPtrArray) errors = g_ptr_array_new_with_free_func(g_free);
	g_autoptr(GPtrArray) nodes =
	    g_ptr_array_new_with_free_func((GDestroyNotify)cli_host_node_free);
	CliHostviewCtx ctx = {
		.sysroot = sysroot, .pid = pid, .builder = builder, .errors = errors, .nodes = nodes
	};
	g_auto(GStrv) pinned_vcpus = NULL;
	g_autoptr(GError) error = NULL;
	JsonObject *libvirt = cli_hostview_read_libvirt(&ctx, replies, &pinned_vcpus);
	JsonObject *kvm = NULL;
	JsonObject *mem = NULL;
	JsonObject *failed = NULL;
	const char *version = NULL;
	gboolean kvm_enabled = FALSE;
	gint64 base = 0, plugged = 0;
	guint64 huge_bytes;
	gboolean huge_backend;

	/* never this host's /proc for a domain that runs on another one */
	if (ctx.remote_host != NULL)
		ctx.pid = 0;
	else if (ctx.pid <= 0)
		ctx.pid = cli_hostview_qemu_pid(&ctx, replies);
	json_builder_begin_object(builder);
	json_builder_set_member_name(builder, "qmp");
	json_builder_add_string_value(builder, qmp_path);
	json_builder_set_member_name(builder, "pid");
	if (ctx.pid > 0)
		json_builder_add_int_value(builder, ctx.pid);
	else
		json_builder_add_null_value(builder);
	if (!gb_json_get_string(replies, "qemu-version", GB_JSON_OPTIONAL, &version, &error))
		ctx_error(&ctx, "qemu-version", error);
	json_builder_set_member_name(builder, "qemu_version");
	json_builder_add_string_value(builder, version);

	g_clear_error(&error);
	json_builder_set_member_name(builder, "accel");
	if (!gb_json_get_object(replies, "query-kvm", GB_JSON_OPTIONAL, &kvm, &error) ||
	    (kvm != NULL &&
	     !gb_json_get_bool(kvm, "enabled", GB_JSON_REQUIRED, &kvm_enabled, &error))) {
		ctx_error(&ctx, "query-kvm", error);
		kvm = NULL;
	}
	if (kvm != NULL)
		json_builder_add_string_value(builder, kvm_enabled ? "kvm" : "tcg");
	else
		json_builder_add_null_value(builder);

	g_clear_error(&error);
	json_builder_set_member_name(builder, "memory_bytes");
	if (!gb_json_get_object(replies, "query-memory-size-summary", GB_JSON_OPTIONAL, &mem,
	                        &error) ||
	    (mem != NULL && (!gb_json_get_int(mem, "base-memory", GB_JSON_REQUIRED, 0,
	                                      G_MAXINT64 / 2, &base, &error) ||
	                     !gb_json_get_int(mem, "plugged-memory", GB_JSON_OPTIONAL, 0,
	                                      G_MAXINT64 / 2, &plugged, &error)))) {
		ctx_error(&ctx, "query-memory-size-summary", error);
		mem = NULL;
	}
	if (mem != NULL)
		json_builder_add_int_value(builder, base + plugged);
	else
		json_builder_add_null_value(builder);

	cli_hostview_add_libvirt(&ctx, libvirt);
	if (ctx.remote_host == NULL)
		cli_hostview_read_nodes(&ctx);
	g_ptr_array_sort(nodes, cli_host_node_cmp);
	cli_hostview_add_nodes(&ctx);
	cli_hostview_add_block(&ctx, replies);
	cli_hostview_add_vcpus(&ctx, replies);
	cli_hostview_add_numa_maps(&ctx);
	huge_backend = cli_hostview_add_memdevs(&ctx, replies) || ctx.xml.hugepages;
	huge_bytes = cli_hostview_read_smaps(&ctx);
	json_builder_set_member_name(builder, "hugepage_bytes");
	json_builder_add_int_value(builder, (gint64)huge_bytes);
	json_builder_set_member_name(builder, "hugepages");
	/* most of guest RAM in huge pages, or a backend on hugetlbfs */
	json_builder_add_boolean_value(builder, huge_backend ||
	                                            (huge_bytes > 0 && mem != NULL &&
	                                             huge_bytes * 2 >= (guint64)(base + plugged)));
	cli_hostview_add_cpu(&ctx, replies);

	/* optional commands the monitor refused (older QEMU, other targets) */
	g_clear_error(&error);
	if (!gb_json_get_object(replies, "errors", GB_JSON_OPTIONAL, &failed, &error))
		ctx_error(&ctx, "errors", error);
	if (failed != NULL) {
		g_autoptr(GList) members = json_object_get_members(failed);
		for (GList *l = members; l != NULL; l = l->next) {
			const char *msg = NULL;
			if (gb_json_get_string(failed, l->data, GB_JSON_REQUIRED, &msg, NULL))
				g_ptr_array_add(
				    errors, g_strdup_printf("%s: %s", (const char *)l->data, msg));
		}
	}
	json_builder_set_member_name(builder, "errors");
	json_builder_begin_array(builder);
	for (guint i = 0; i < errors->len; i++)
		json_builder_add_string_value(builder, g_ptr_array_index(errors, i));
	json_builder_end_array(builder);
	json_builder_end_object(builder);
	cli_hostview_xml_clear(&ctx.xml);
	return json_builder_get_root(builder);
}
