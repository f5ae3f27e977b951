/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The facts parsers on fuzzed bytes. The first byte picks one file of a
 * fixture sysroot (a private copy of tests/data/facts/qemu64), the rest
 * becomes that file's contents and the collector that reads it runs; the
 * file is restored afterwards. The same bytes also go straight to the small
 * parsers of util.h (bracketed lists, CPU lists, integers, tokens).
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <glib/gstdio.h>

#include "facts.h"
#include "fuzz.h"
#include "util.h"

static const struct {
	const char *path;
	AgentFactsCollector collect;
} fuzz_facts_files[] = {
	{ "/proc/cpuinfo", agent_facts_collect_cpu },
	{ "/sys/devices/system/cpu/online", agent_facts_collect_cpu },
	{ "/sys/class/dmi/id/sys_vendor", agent_facts_collect_cpu },
	{ "/proc/meminfo", agent_facts_collect_memory },
	{ "/sys/kernel/mm/transparent_hugepage/enabled", agent_facts_collect_memory },
	{ "/sys/devices/system/node/node0/meminfo", agent_facts_collect_memory },
	{ "/sys/devices/system/node/node0/cpulist", agent_facts_collect_memory },
	{ "/sys/devices/system/clocksource/clocksource0/current_clocksource",
	  agent_facts_collect_clocksource },
	{ "/sys/devices/system/clocksource/clocksource0/available_clocksource",
	  agent_facts_collect_clocksource },
	{ "/proc/stat", agent_facts_collect_steal },
	{ "/sys/block/sda/queue/scheduler", agent_facts_collect_block },
	{ "/sys/block/sda/queue/write_cache", agent_facts_collect_block },
	{ "/sys/block/sda/queue/logical_block_size", agent_facts_collect_block },
	{ "/sys/block/sda/size", agent_facts_collect_block },
	{ "/sys/block/sda/queue/rotational", agent_facts_collect_block },
	{ "/sys/class/net/ens4/mtu", agent_facts_collect_net },
	{ "/sys/class/net/ens4/speed", agent_facts_collect_net },
	{ "/etc/os-release", agent_facts_collect_os },
	{ "/usr/lib/os-release", agent_facts_collect_os },
	{ "/proc/sys/kernel/osrelease", agent_facts_collect_os },
};

static char *fuzz_facts_root;

/* Rewrites a file in place: g_file_set_contents() would fsync on every run. */
static gboolean fuzz_facts_write(const char *path, const char *data, gsize len)
{
	FILE *f = fopen(path, "wb");
	gboolean ok;

	if (f == NULL)
		return FALSE;
	ok = fwrite(data, 1, len, f) == len;
	return fclose(f) == 0 && ok;
}

/* The fixture describes another machine: the live CPUID would contradict it. */
static gboolean fuzz_facts_no_cpuid(guint32 leaf, guint32 subleaf, guint32 regs[4],
                                    gpointer user_data)
{
	return FALSE;
}

static void fuzz_facts_cleanup(void)
{
	g_autofree char *cmd = NULL;

	if (fuzz_facts_root == NULL)
		return;
	cmd = g_strdup_printf("rm -rf '%s'", fuzz_facts_root);
	if (system(cmd) != 0)
		g_printerr("cannot remove %s\n", fuzz_facts_root);
	g_clear_pointer(&fuzz_facts_root, g_free);
}

/* A private copy of the fixture, so that rewriting files never touches the source tree. */
static const char *fuzz_facts_sysroot(void)
{
	g_autoptr(GError) error = NULL;
	g_autofree char *dir = NULL;
	g_autofree char *cmd = NULL;

	if (fuzz_facts_root != NULL)
		return fuzz_facts_root;
	dir = g_dir_make_tmp("gb-fuzz-facts-XXXXXX", &error);
	if (dir == NULL)
		abort();
	cmd = g_strdup_printf("cp -a '%s/.' '%s'", FUZZ_FACTS_SYSROOT, dir);
	if (system(cmd) != 0)
		abort();
	fuzz_facts_root = g_steal_pointer(&dir);
	atexit(fuzz_facts_cleanup);
	return fuzz_facts_root;
}

static void fuzz_facts_check_result(JsonNode *node, JsonArray *errors)
{
	g_autofree char *text = NULL;

	/* a collector never fails the call: a value or a json null */
	if (node == NULL)
		abort();
	text = json_to_string(node, FALSE);
	if (text == NULL || !g_utf8_validate(text, -1, NULL))
		abort();
	for (guint i = 0; i < json_array_get_length(errors); i++) {
		JsonNode *e = json_array_get_element(errors, i);
		if (!JSON_NODE_HOLDS_OBJECT(e))
			abort();
	}
}

static void fuzz_facts_parsers(const char *str)
{
	g_auto(GStrv) all = NULL;
	g_autofree char *active = NULL;
	g_autoptr(GArray) cpus = NULL;
	gint64 val = 0;

	active = agent_facts_parse_bracketed(str, &all, NULL);
	if (active != NULL && all == NULL)
		abort();
	cpus = agent_facts_parse_cpulist(str, NULL);
	for (guint i = 1; cpus != NULL && i < cpus->len; i++) {
		/* sorted, as promised */
		if (g_array_index(cpus, guint32, i - 1) > g_array_index(cpus, guint32, i))
			abort();
	}
	if (agent_facts_parse_int(str, -1000, 1000, &val, NULL) && (val < -1000 || val > 1000))
		abort();
	agent_facts_is_token(str);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *sysroot = fuzz_facts_sysroot();
	g_autoptr(GError) error = NULL;
	g_autofree char *guest = NULL;
	g_autofree char *host = NULL;
	g_autofree char *orig = NULL;
	g_autofree char *str = NULL;
	g_autoptr(JsonNode) node = NULL;
	g_autoptr(JsonArray) errors = json_array_new();
	AgentFactsContext ctx = { 0 };
	gsize orig_len = 0;
	guint idx;

	if (size < 1 || size > 256 * 1024)
		return 0;
	idx = data[0] % G_N_ELEMENTS(fuzz_facts_files);
	str = g_strndup((const char *)data + 1, size - 1);
	fuzz_facts_parsers(str);

	guest = agent_facts_resolve(sysroot, fuzz_facts_files[idx].path, &error);
	if (guest == NULL)
		abort();
	host = agent_facts_host_path(sysroot, guest);
	if (!g_file_get_contents(host, &orig, &orig_len, NULL))
		abort();
	if (!fuzz_facts_write(host, (const char *)data + 1, size - 1))
		abort();

	ctx.sysroot = sysroot;
	ctx.errors = errors;
	ctx.cpuid = fuzz_facts_no_cpuid;
	node = fuzz_facts_files[idx].collect(&ctx);
	fuzz_facts_check_result(node, errors);

	if (!fuzz_facts_write(host, orig, orig_len))
		abort();
	return 0;
}
