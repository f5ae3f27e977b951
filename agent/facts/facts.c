/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"

#include "util.h"

/* The longest steal sample gb-get-facts blocks the agent's main loop for. */
#define FACTS_MAX_STEAL_WINDOW_MS 5000
#define FACTS_DEFAULT_STEAL_WINDOW_MS 200

/* One row per section: the member name in the reply and its collector. */
static const struct {
	const char *name;
	AgentFactsCollector func;
} facts_sections[] = {
	{ "cpu", agent_facts_collect_cpu },
	{ "memory", agent_facts_collect_memory },
	{ "clocksource", agent_facts_collect_clocksource },
	{ "steal", agent_facts_collect_steal },
	{ "block", agent_facts_collect_block },
	{ "net", agent_facts_collect_net },
	{ "os", agent_facts_collect_os },
};

static gint facts_section_index(const char *name)
{
	for (guint i = 0; i < G_N_ELEMENTS(facts_sections); i++) {
		if (g_strcmp0(facts_sections[i].name, name) == 0)
			return (gint)i;
	}
	return -1;
}

static char *facts_known_sections(void)
{
	g_autoptr(GString) str = g_string_new(NULL);

	for (guint i = 0; i < G_N_ELEMENTS(facts_sections); i++) {
		if (i > 0)
			g_string_append(str, ", ");
		g_string_append(str, facts_sections[i].name);
	}
	return g_string_free(g_steal_pointer(&str), FALSE);
}

static gboolean facts_check_sections(const char *const *sections, gboolean wanted[], GError **error)
{
	for (guint i = 0; i < G_N_ELEMENTS(facts_sections); i++)
		wanted[i] = sections == NULL;
	for (guint i = 0; sections != NULL && sections[i] != NULL; i++) {
		gint idx = facts_section_index(sections[i]);
		if (idx < 0) {
			g_autofree char *known = facts_known_sections();
			g_autofree char *escaped = g_strescape(sections[i], NULL);
			g_set_error(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT,
			            "Parameter 'sections[%u]': unknown section '%.64s' (known: %s)",
			            i, escaped, known);
			return FALSE;
		}
		wanted[idx] = TRUE;
	}
	return TRUE;
}

JsonNode *agent_facts_collect(AgentFactsContext *ctx, const char *const *sections, GError **error)
{
	g_autoptr(JsonArray) errors = json_array_new();
	g_autoptr(JsonObject) result = json_object_new();
	JsonArray *saved_errors = ctx->errors;
	gboolean wanted[G_N_ELEMENTS(facts_sections)];
	JsonNode *root;

	if (!facts_check_sections(sections, wanted, error))
		return NULL;

	json_object_set_string_member(result, "agent_version", GB_VERSION);
	ctx->errors = errors;
	/* Table order, whatever order the caller asked in. */
	for (guint i = 0; i < G_N_ELEMENTS(facts_sections); i++) {
		if (!wanted[i])
			continue;
		json_object_set_member(result, facts_sections[i].name, facts_sections[i].func(ctx));
	}
	ctx->errors = saved_errors;
	json_object_set_array_member(result, "errors", json_array_ref(errors));

	root = json_node_new(JSON_NODE_OBJECT);
	json_node_set_object(root, result);
	return root;
}

/*
 * Under a --sysroot other than /, the files describe another system (a
 * fixture, a mounted image): the live CPUID of this machine would contradict
 * them, so CPUID counts as unavailable and the hypervisor comes from the tree.
 */
static gboolean agent_facts_no_cpuid(guint32 leaf, guint32 subleaf, guint32 regs[4],
                                     gpointer user_data)
{
	return FALSE;
}

JsonNode *agent_cmd_get_facts(AgentContext *agent, JsonObject *args, GError **error)
{
	const char *const allowed[] = { "sections", "steal_window_ms", NULL };
	g_auto(GStrv) sections = NULL;
	gint64 window = FACTS_DEFAULT_STEAL_WINDOW_MS;
	AgentFactsContext ctx = { 0 };

	if (!gb_json_check_members(args, allowed, error))
		return NULL;
	if (!gb_json_get_strv(args, "sections", GB_JSON_OPTIONAL, &sections, error))
		return NULL;
	if (!gb_json_get_int(args, "steal_window_ms", GB_JSON_OPTIONAL, 0,
	                     FACTS_MAX_STEAL_WINDOW_MS, &window, error))
		return NULL;

	ctx.sysroot = agent != NULL && agent->config != NULL && agent->config->sysroot != NULL
	                  ? agent->config->sysroot
	                  : "/";
	ctx.steal_window_ms = (guint)window;
	/* not asked for a window: measure since the previous sample rather than stall */
	ctx.steal_since_previous = !gb_json_has(args, "steal_window_ms");
	if (g_strcmp0(ctx.sysroot, "/") != 0)
		ctx.cpuid = agent_facts_no_cpuid;
	return agent_facts_collect(&ctx, (const char *const *)sections, error);
}
