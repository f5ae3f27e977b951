/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The memory and os sections on Windows, and the sections the Windows agent
 * does not collect yet: those are null, with the reason in "errors", never
 * guessed (PROTOCOL.md, "Windows guests").
 */
#include <windows.h>

#include "common.h"

/*
 * memory.numa.nodes: each node's CPUs from GetLogicalProcessorInformationEx
 * (RelationNumaNode; GetNumaNodeProcessorMaskEx is missing under wine), CPU
 * numbers counting 64 per processor group as Windows numbers them (a node
 * spanning groups, Windows 11 and Server 2022, shows its first group's).
 * Windows tells a node's free memory, not its size: with one node, the node
 * holds all of it (total); with several, memory_bytes is null with the reason.
 */
static void memory_win_add_numa(AgentFactsContext *ctx, JsonBuilder *builder, gint64 total)
{
	g_autofree char *buf = NULL;
	DWORD len = 0;
	guint n_nodes = 0;

	json_builder_set_member_name(builder, "numa");
	GetLogicalProcessorInformationEx(RelationNumaNode, NULL, &len);
	if (len > 0) {
		buf = g_malloc(len);
		if (!GetLogicalProcessorInformationEx(RelationNumaNode, (void *)buf, &len))
			len = 0;
	}
	/* entries are as long as their Size says, shorter than the struct's union */
	for (DWORD off = 0; off + 8 <= len;) {
		const SYSTEM_LOGICAL_PROCESSOR_INFORMATION_EX *e = (const void *)(buf + off);
		if (e->Size < 8 || e->Size > len - off)
			break;
		if (e->Relationship == RelationNumaNode)
			n_nodes++;
		off += e->Size;
	}
	if (n_nodes == 0) {
		json_builder_add_null_value(builder);
		agent_facts_add_error(ctx, "memory.numa",
		                      "GetLogicalProcessorInformationEx reported no NUMA node");
		return;
	}
	json_builder_begin_object(builder);
	json_builder_set_member_name(builder, "nodes");
	json_builder_begin_array(builder);
	for (DWORD off = 0; off + 8 <= len;) {
		const SYSTEM_LOGICAL_PROCESSOR_INFORMATION_EX *e = (const void *)(buf + off);
		const GROUP_AFFINITY *aff = &e->NumaNode.GroupMask;

		if (e->Size < 8 || e->Size > len - off)
			break;
		off += e->Size;
		if (e->Relationship != RelationNumaNode)
			continue;
		json_builder_begin_object(builder);
		json_builder_set_member_name(builder, "id");
		json_builder_add_int_value(builder, e->NumaNode.NodeNumber);
		json_builder_set_member_name(builder, "cpus");
		json_builder_begin_array(builder);
		for (guint bit = 0; bit < 64; bit++) {
			if (aff->Mask & ((KAFFINITY)1 << bit))
				json_builder_add_int_value(builder, (gint64)aff->Group * 64 + bit);
		}
		json_builder_end_array(builder);
		json_builder_set_member_name(builder, "memory_bytes");
		if (n_nodes == 1 && total > 0) {
			json_builder_add_int_value(builder, total);
		} else {
			g_autofree char *member = g_strdup_printf(
			    "memory.numa.node%lu", (unsigned long)e->NumaNode.NodeNumber);
			json_builder_add_null_value(builder);
			agent_facts_add_error(
			    ctx, member, "Windows reports a NUMA node's free memory, not its size");
		}
		json_builder_end_object(builder);
	}
	json_builder_end_array(builder);
	json_builder_end_object(builder);
}

JsonNode *agent_facts_collect_memory(AgentFactsContext *ctx)
{
	g_autoptr(JsonBuilder) builder = json_builder_new();
	MEMORYSTATUSEX status = { .dwLength = sizeof(status) };
	SYSTEM_INFO info;
	SIZE_T large = GetLargePageMinimum();
	BOOL have_total;

	GetSystemInfo(&info);
	json_builder_begin_object(builder);
	json_builder_set_member_name(builder, "total_bytes");
	have_total = GlobalMemoryStatusEx(&status);
	if (have_total) {
		json_builder_add_int_value(builder, (gint64)status.ullTotalPhys);
	} else {
		json_builder_add_null_value(builder);
		agent_facts_add_error(ctx, "memory.total_bytes", "GlobalMemoryStatusEx failed");
	}
	/* Windows' large pages: allocated on demand by holders of the lock-pages
	 * privilege, never reserved ahead, so there is no total or free count. */
	json_builder_set_member_name(builder, "hugepages");
	json_builder_begin_object(builder);
	json_builder_set_member_name(builder, "total");
	json_builder_add_null_value(builder);
	json_builder_set_member_name(builder, "free");
	json_builder_add_null_value(builder);
	json_builder_set_member_name(builder, "size_bytes");
	if (large > 0)
		json_builder_add_int_value(builder, (gint64)large);
	else
		json_builder_add_null_value(builder);
	json_builder_set_member_name(builder, "sizes_bytes");
	json_builder_begin_array(builder);
	if (large > 0)
		json_builder_add_int_value(builder, (gint64)large);
	json_builder_end_array(builder);
	json_builder_end_object(builder);
	agent_facts_add_error(ctx, "memory.hugepages.total",
	                      "Windows allocates large pages on demand: no pool to count");
	json_builder_set_member_name(builder, "page_size_bytes");
	json_builder_add_int_value(builder, (gint64)info.dwPageSize);
	json_builder_set_member_name(builder, "thp");
	json_builder_add_null_value(builder);
	agent_facts_add_error(ctx, "memory.thp", "no transparent huge pages on Windows");
	memory_win_add_numa(ctx, builder, have_total ? (gint64)status.ullTotalPhys : 0);
	json_builder_end_object(builder);
	return json_builder_get_root(builder);
}

/* RtlGetVersion tells the truth where GetVersionEx answers per manifest. */
typedef LONG(WINAPI *RtlGetVersionFunc)(OSVERSIONINFOW *info);

static gboolean os_win_version(OSVERSIONINFOW *info)
{
	HMODULE ntdll = GetModuleHandleW(L"ntdll.dll");
	RtlGetVersionFunc get;

	if (ntdll == NULL)
		return FALSE;
	get = (RtlGetVersionFunc)(void (*)(void))GetProcAddress(ntdll, "RtlGetVersion");
	memset(info, 0, sizeof(*info));
	info->dwOSVersionInfoSize = sizeof(*info);
	return get != NULL && get(info) == 0;
}

/* A REG_SZ under HKLM\SOFTWARE\Microsoft\Windows NT\CurrentVersion, as UTF-8. */
static char *os_win_registry_string(const wchar_t *name)
{
	wchar_t buf[256];
	DWORD len = sizeof(buf) - sizeof(wchar_t);
	DWORD type = 0;
	LSTATUS rc =
	    RegGetValueW(HKEY_LOCAL_MACHINE, L"SOFTWARE\\Microsoft\\Windows NT\\CurrentVersion",
	                 name, RRF_RT_REG_SZ, &type, buf, &len);

	if (rc != ERROR_SUCCESS)
		return NULL;
	buf[len / sizeof(wchar_t) < G_N_ELEMENTS(buf) ? len / sizeof(wchar_t) : 0] = L'\0';
	return g_utf16_to_utf8((const gunichar2 *)buf, -1, NULL, NULL, NULL);
}

JsonNode *agent_facts_collect_os(AgentFactsContext *ctx)
{
	g_autoptr(JsonBuilder) builder = json_builder_new();
	g_autofree char *release = NULL;
	g_autofree char *product = os_win_registry_string(L"ProductName");
	g_autofree char *display = os_win_registry_string(L"DisplayVersion");
	g_autofree char *pretty = NULL;
	OSVERSIONINFOW info;

	if (os_win_version(&info))
		release = g_strdup_printf("%lu.%lu.%lu", (unsigned long)info.dwMajorVersion,
		                          (unsigned long)info.dwMinorVersion,
		                          (unsigned long)info.dwBuildNumber);
	else
		agent_facts_add_error(ctx, "os.kernel_release", "RtlGetVersion failed");
	if (product != NULL && display != NULL)
		pretty = g_strdup_printf("%s %s", product, display);
	else if (product != NULL)
		pretty = g_strdup(product);
	else
		agent_facts_add_error(ctx, "os.pretty_name", "no ProductName in the registry");
	json_builder_begin_object(builder);
	agent_facts_builder_add_string(builder, "kernel_release", release);
	agent_facts_builder_add_string(builder, "pretty_name", pretty);
	json_builder_end_object(builder);
	return json_builder_get_root(builder);
}

static JsonNode *facts_win_absent(AgentFactsContext *ctx, const char *member, const char *reason)
{
	agent_facts_add_error(ctx, member, reason);
	return json_node_new(JSON_NODE_NULL);
}

JsonNode *agent_facts_collect_clocksource(AgentFactsContext *ctx)
{
	return facts_win_absent(ctx, "clocksource", "Windows has no clocksource to read");
}

JsonNode *agent_facts_collect_steal(AgentFactsContext *ctx)
{
	return facts_win_absent(ctx, "steal", "Windows does not report steal time");
}
