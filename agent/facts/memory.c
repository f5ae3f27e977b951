/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <string.h>
#include <unistd.h>

#include "util.h"

#define MEMINFO_PATH "/proc/meminfo"
#define THP_PATH "/sys/kernel/mm/transparent_hugepage/enabled"
#define NODE_DIR "/sys/devices/system/node"
#define HUGEPAGES_DIR "/sys/kernel/mm/hugepages"

/* kB values above this (an exbibyte) are garbage, and bytes would overflow. */
#define MEMORY_MAX_KB (G_MAXINT64 / 1024)

/*
 * Finds "KEY: VALUE [kB]" in a meminfo-style text (prefix is "" for
 * /proc/meminfo, "Node N " for a node's meminfo). Sets *out to the value,
 * multiplied by 1024 when the unit is kB.
 */
static gboolean memory_lookup(const char *text, const char *path, const char *prefix,
                              const char *key, gint64 *out, GError **error)
{
	g_autofree char *want = g_strdup_printf("%s%s:", prefix, key);
	gsize want_len = strlen(want);
	const char *next;

	/* walks the lines in place: a facts request looks up a dozen keys */
	for (const char *line = text; line != NULL && *line != '\0'; line = next) {
		const char *end = strchr(line, '\n');
		g_autofree char *rest = NULL;
		g_auto(GStrv) words = NULL;
		gint64 val = 0;
		guint n;

		next = end != NULL ? end + 1 : NULL;
		if (end == NULL)
			end = line + strlen(line);
		if ((gsize)(end - line) < want_len || strncmp(line, want, want_len) != 0)
			continue;
		rest = g_strndup(line + want_len, (gsize)(end - line) - want_len);
		words = g_strsplit_set(rest, " \t", -1);
		n = 0;
		for (guint j = 0; words[j] != NULL; j++) {
			if (words[j][0] != '\0')
				words[n++] = words[j];
			else
				g_free(words[j]);
		}
		words[n] = NULL;
		if (n == 0 || n > 2 || (n == 2 && g_strcmp0(words[1], "kB") != 0) ||
		    !agent_facts_parse_int(words[0], 0, MEMORY_MAX_KB, &val, error)) {
			if (error != NULL && *error == NULL)
				g_set_error(error, GB_ERROR, GB_ERROR_PARSE, "unexpected '%s' line",
				            key);
			g_prefix_error(error, "%s: %s: ", path, key);
			return FALSE;
		}
		*out = n == 2 ? val * 1024 : val;
		return TRUE;
	}
	g_set_error(error, GB_ERROR, GB_ERROR_PARSE, "%s: no '%s' line", path, key);
	return FALSE;
}

static void memory_add_lookup(AgentFactsContext *ctx, JsonBuilder *builder, const char *text,
                              const char *text_error, const char *key, const char *member,
                              const char *err_member)
{
	g_autoptr(GError) error_local = NULL;
	gint64 val = 0;

	json_builder_set_member_name(builder, member);
	if (text == NULL) {
		json_builder_add_null_value(builder);
		agent_facts_add_error(ctx, err_member, text_error);
		return;
	}
	if (!memory_lookup(text, MEMINFO_PATH, "", key, &val, &error_local)) {
		json_builder_add_null_value(builder);
		agent_facts_add_error(ctx, err_member, error_local->message);
		return;
	}
	json_builder_add_int_value(builder, val);
}

static void memory_add_thp(AgentFactsContext *ctx, JsonBuilder *builder)
{
	g_autoptr(GError) error_local = NULL;
	g_autofree char *text = agent_facts_read_text(ctx->sysroot, THP_PATH, &error_local);
	g_autofree char *active = NULL;

	json_builder_set_member_name(builder, "thp");
	if (text != NULL) {
		active = agent_facts_parse_bracketed(text, NULL, &error_local);
		if (active == NULL)
			g_prefix_error(&error_local, THP_PATH ": ");
	}
	if (active != NULL && g_strcmp0(active, "always") != 0 &&
	    g_strcmp0(active, "madvise") != 0 && g_strcmp0(active, "never") != 0) {
		g_set_error(&error_local, GB_ERROR, GB_ERROR_PARSE, THP_PATH ": unknown mode '%s'",
		            active);
		g_clear_pointer(&active, g_free);
	}
	if (active == NULL) {
		json_builder_add_null_value(builder);
		agent_facts_add_error(ctx, "memory.thp", error_local->message);
		return;
	}
	json_builder_add_string_value(builder, active);
}

static gint memory_cmp_node(gconstpointer a, gconstpointer b)
{
	gint64 x = *(const gint64 *)a;
	gint64 y = *(const gint64 *)b;
	return x < y ? -1 : (x > y ? 1 : 0);
}

static void memory_add_node(AgentFactsContext *ctx, JsonBuilder *builder, gint64 id)
{
	g_autofree char *cpulist_path =
	    g_strdup_printf(NODE_DIR "/node%" G_GINT64_FORMAT "/cpulist", id);
	g_autofree char *meminfo_path =
	    g_strdup_printf(NODE_DIR "/node%" G_GINT64_FORMAT "/meminfo", id);
	g_autofree char *prefix = g_strdup_printf("Node %" G_GINT64_FORMAT " ", id);
	g_autoptr(GError) error_cpus = NULL;
	g_autoptr(GError) error_mem = NULL;
	g_autofree char *cpulist = agent_facts_read_text(ctx->sysroot, cpulist_path, &error_cpus);
	g_autofree char *meminfo = agent_facts_read_text(ctx->sysroot, meminfo_path, &error_mem);
	g_autoptr(GArray) cpus = NULL;
	gint64 mem = 0;

	json_builder_begin_object(builder);
	json_builder_set_member_name(builder, "id");
	json_builder_add_int_value(builder, id);

	json_builder_set_member_name(builder, "cpus");
	if (cpulist != NULL) {
		cpus = agent_facts_parse_cpulist(cpulist, &error_cpus);
		if (cpus == NULL)
			g_prefix_error(&error_cpus, "%s: ", cpulist_path);
	}
	if (cpus != NULL) {
		json_builder_begin_array(builder);
		for (guint i = 0; i < cpus->len; i++)
			json_builder_add_int_value(builder, g_array_index(cpus, guint32, i));
		json_builder_end_array(builder);
	} else {
		g_autofree char *member =
		    g_strdup_printf("memory.numa.node%" G_GINT64_FORMAT ".cpus", id);
		json_builder_add_null_value(builder);
		agent_facts_add_error(ctx, member, error_cpus->message);
	}

	json_builder_set_member_name(builder, "memory_bytes");
	if (meminfo != NULL &&
	    memory_lookup(meminfo, meminfo_path, prefix, "MemTotal", &mem, &error_mem)) {
		json_builder_add_int_value(builder, mem);
	} else {
		g_autofree char *member =
		    g_strdup_printf("memory.numa.node%" G_GINT64_FORMAT ".memory_bytes", id);
		json_builder_add_null_value(builder);
		agent_facts_add_error(ctx, member, error_mem->message);
	}
	json_builder_end_object(builder);
}

/*
 * A kernel built without NUMA has no node directory: that is not an error,
 * the answer is simply "no NUMA nodes" (an empty list). A node directory that
 * exists but cannot be listed is an error.
 */
static void memory_add_numa(AgentFactsContext *ctx, JsonBuilder *builder)
{
	g_autoptr(GError) error_local = NULL;
	g_autoptr(GPtrArray) names = NULL;
	g_autoptr(GArray) ids = g_array_new(FALSE, FALSE, sizeof(gint64));

	if (agent_facts_exists(ctx->sysroot, NODE_DIR)) {
		names = agent_facts_list_dir(ctx->sysroot, NODE_DIR, &error_local);
		if (names == NULL)
			agent_facts_add_error(ctx, "memory.numa.nodes", error_local->message);
	}
	for (guint i = 0; names != NULL && i < names->len; i++) {
		const char *name = g_ptr_array_index(names, i);
		gint64 id = 0;

		if (!g_str_has_prefix(name, "node") || name[4] == '\0' ||
		    !g_ascii_isdigit(name[4]) ||
		    !agent_facts_parse_int(name + 4, 0, G_MAXINT32, &id, NULL))
			continue;
		g_array_append_val(ids, id);
	}
	g_array_sort(ids, memory_cmp_node);

	json_builder_set_member_name(builder, "numa");
	json_builder_begin_object(builder);
	json_builder_set_member_name(builder, "nodes");
	json_builder_begin_array(builder);
	for (guint i = 0; i < ids->len; i++)
		memory_add_node(ctx, builder, g_array_index(ids, gint64, i));
	json_builder_end_array(builder);
	json_builder_end_object(builder);
}

static gint memory_cmp_size(gconstpointer a, gconstpointer b)
{
	gint64 x = *(const gint64 *)a, y = *(const gint64 *)b;
	return x < y ? -1 : x > y;
}

/*
 * Every huge page size the kernel offers, one "hugepages-NkB" directory each
 * (x86: 2M 1G; arm64 with 4K pages: 64K 2M 32M 1G, with 64K pages: 2M 512M
 * 16G). No directory: a kernel without hugetlbfs, so no sizes.
 */
static void memory_add_hugepage_sizes(AgentFactsContext *ctx, JsonBuilder *builder)
{
	g_autoptr(GError) error_local = NULL;
	g_autoptr(GPtrArray) names = NULL;
	g_autoptr(GArray) sizes = g_array_new(FALSE, FALSE, sizeof(gint64));

	json_builder_set_member_name(builder, "sizes_bytes");
	if (agent_facts_exists(ctx->sysroot, HUGEPAGES_DIR)) {
		names = agent_facts_list_dir(ctx->sysroot, HUGEPAGES_DIR, &error_local);
		if (names == NULL) {
			json_builder_add_null_value(builder);
			agent_facts_add_error(ctx, "memory.hugepages.sizes_bytes",
			                      error_local->message);
			return;
		}
	}
	for (guint i = 0; names != NULL && i < names->len; i++) {
		const char *name = g_ptr_array_index(names, i);
		g_autofree char *digits = NULL;
		gint64 kb = 0;

		if (!g_str_has_prefix(name, "hugepages-") || !g_str_has_suffix(name, "kB"))
			continue;
		digits = g_strndup(name + strlen("hugepages-"),
		                   strlen(name) - strlen("hugepages-") - strlen("kB"));
		if (digits[0] == '\0' || !g_ascii_isdigit(digits[0]) ||
		    !agent_facts_parse_int(digits, 1, MEMORY_MAX_KB, &kb, NULL)) {
			g_autofree char *reason =
			    g_strdup_printf(HUGEPAGES_DIR "/%s: not hugepages-<N>kB", name);
			agent_facts_add_error(ctx, "memory.hugepages.sizes_bytes", reason);
			continue;
		}
		kb *= 1024;
		g_array_append_val(sizes, kb);
	}
	g_array_sort(sizes, memory_cmp_size);
	json_builder_begin_array(builder);
	for (guint i = 0; i < sizes->len; i++)
		json_builder_add_int_value(builder, g_array_index(sizes, gint64, i));
	json_builder_end_array(builder);
}

/*
 * The base page size (4K, 16K or 64K on arm64) is a property of the running
 * kernel that no file states: sysconf on the live system, null under a sysroot.
 */
static void memory_add_page_size(AgentFactsContext *ctx, JsonBuilder *builder)
{
	long size = g_strcmp0(ctx->sysroot, "/") == 0 ? sysconf(_SC_PAGESIZE) : -1;

	json_builder_set_member_name(builder, "page_size_bytes");
	if (size > 0) {
		json_builder_add_int_value(builder, size);
		return;
	}
	json_builder_add_null_value(builder);
	agent_facts_add_error(ctx, "memory.page_size_bytes",
	                      g_strcmp0(ctx->sysroot, "/") == 0
	                          ? "sysconf(_SC_PAGESIZE) failed"
	                          : "the page size of the kernel is only known on the live "
	                            "system (sysconf), not under a sysroot");
}

JsonNode *agent_facts_collect_memory(AgentFactsContext *ctx)
{
	g_autoptr(JsonBuilder) builder = json_builder_new();
	g_autoptr(GError) error_local = NULL;
	g_autofree char *text = agent_facts_read_text(ctx->sysroot, MEMINFO_PATH, &error_local);
	const char *text_error = text == NULL ? error_local->message : NULL;

	json_builder_begin_object(builder);
	memory_add_lookup(ctx, builder, text, text_error, "MemTotal", "total_bytes",
	                  "memory.total_bytes");

	json_builder_set_member_name(builder, "hugepages");
	json_builder_begin_object(builder);
	memory_add_lookup(ctx, builder, text, text_error, "HugePages_Total", "total",
	                  "memory.hugepages.total");
	memory_add_lookup(ctx, builder, text, text_error, "HugePages_Free", "free",
	                  "memory.hugepages.free");
	memory_add_lookup(ctx, builder, text, text_error, "Hugepagesize", "size_bytes",
	                  "memory.hugepages.size_bytes");
	memory_add_hugepage_sizes(ctx, builder);
	json_builder_end_object(builder);
	memory_add_page_size(ctx, builder);

	memory_add_thp(ctx, builder);
	memory_add_numa(ctx, builder);
	json_builder_end_object(builder);
	return json_builder_get_root(builder);
}
