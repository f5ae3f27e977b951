/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <string.h>

#include "facts-test.h"

void facts_fake_cpuid_free(FactsFakeCpuid *fake)
{
	if (fake == NULL)
		return;
	g_hash_table_unref(fake->leaves);
	g_free(fake);
}

FactsFakeCpuid *facts_fake_cpuid_load(const char *path, GError **error)
{
	g_autoptr(FactsFakeCpuid) fake = g_new0(FactsFakeCpuid, 1);
	g_autofree char *text = NULL;
	g_auto(GStrv) lines = NULL;

	fake->leaves = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, g_free);
	if (!g_file_get_contents(path, &text, NULL, error))
		return NULL;
	lines = g_strsplit(text, "\n", -1);
	for (guint i = 0; lines[i] != NULL; i++) {
		g_auto(GStrv) words = NULL;
		guint64 vals[6];
		gint64 *key;
		guint32 *regs;
		char *line = g_strstrip(lines[i]);

		if (line[0] == '\0' || line[0] == '#')
			continue;
		if (g_strcmp0(line, "unavailable") == 0) {
			fake->unavailable = TRUE;
			continue;
		}
		words = g_strsplit_set(line, " \t", -1);
		if (g_strv_length(words) != 6) {
			g_set_error(error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
			            "%s:%u: expected 6 hex words", path, i + 1);
			return NULL;
		}
		for (guint j = 0; j < 6; j++) {
			if (!g_ascii_string_to_unsigned(words[j], 16, 0, G_MAXUINT32, &vals[j],
			                                error))
				return NULL;
		}
		key = g_new(gint64, 1);
		*key = (gint64)(vals[0] << 32 | vals[1]);
		regs = g_new(guint32, 4);
		for (guint j = 0; j < 4; j++)
			regs[j] = (guint32)vals[2 + j];
		g_hash_table_insert(fake->leaves, key, regs);
	}
	return g_steal_pointer(&fake);
}

gboolean facts_fake_cpuid(guint32 leaf, guint32 subleaf, guint32 regs[4], gpointer user_data)
{
	FactsFakeCpuid *fake = user_data;
	gint64 key = (gint64)((guint64)leaf << 32 | subleaf);
	guint32 *found;

	if (fake->unavailable)
		return FALSE;
	found = g_hash_table_lookup(fake->leaves, &key);
	if (found != NULL)
		memcpy(regs, found, sizeof(guint32) * 4);
	else
		memset(regs, 0, sizeof(guint32) * 4);
	return TRUE;
}

char *facts_fixture_path(const char *name)
{
	const char *data = g_getenv("GB_TEST_DATA");

	g_assert_nonnull(data);
	return g_build_filename(data, "facts", name, NULL);
}

JsonNode *facts_run(const char *tree, AgentFactsCollector func, JsonArray **errors)
{
	g_autofree char *root = facts_fixture_path(tree);
	g_autofree char *cpuid_name = g_strdup_printf("%s.cpuid", tree);
	g_autofree char *cpuid_path = facts_fixture_path(cpuid_name);
	g_autoptr(GError) error = NULL;
	g_autoptr(FactsFakeCpuid) fake = facts_fake_cpuid_load(cpuid_path, &error);
	g_autoptr(JsonArray) errs = json_array_new();
	AgentFactsContext ctx = {
		.sysroot = root,
		.cpuid = facts_fake_cpuid,
		.cpuid_data = fake,
		.steal_window_ms = 0,
		.errors = errs,
	};
	JsonNode *node;

	g_assert_no_error(error);
	g_assert_true(g_file_test(root, G_FILE_TEST_IS_DIR));
	if (func != NULL) {
		node = func(&ctx);
	} else {
		JsonObject *obj;
		node = agent_facts_collect(&ctx, NULL, &error);
		g_assert_no_error(error);
		obj = json_node_get_object(node);
		json_array_unref(errs);
		errs = json_array_ref(json_object_get_array_member(obj, "errors"));
	}
	g_assert_nonnull(node);
	if (g_test_verbose()) {
		g_autofree char *str = facts_to_string(node);
		g_autoptr(JsonNode) enode = json_node_new(JSON_NODE_ARRAY);
		g_autofree char *estr = NULL;
		json_node_set_array(enode, errs);
		estr = facts_to_string(enode);
		g_test_message("%s: %s\nerrors: %s", tree, str, estr);
	}
	if (errors != NULL)
		*errors = g_steal_pointer(&errs);
	return node;
}

JsonNode *facts_get(JsonNode *root, const char *path)
{
	g_auto(GStrv) parts = g_strsplit(path, ".", -1);
	JsonNode *node = root;

	for (guint i = 0; parts[i] != NULL && parts[i][0] != '\0'; i++) {
		if (node == NULL)
			return NULL;
		if (JSON_NODE_HOLDS_OBJECT(node)) {
			JsonObject *obj = json_node_get_object(node);
			if (!json_object_has_member(obj, parts[i]))
				return NULL;
			node = json_object_get_member(obj, parts[i]);
		} else if (JSON_NODE_HOLDS_ARRAY(node)) {
			JsonArray *arr = json_node_get_array(node);
			guint64 idx = 0;
			if (!g_ascii_string_to_unsigned(parts[i], 10, 0, G_MAXUINT, &idx, NULL) ||
			    idx >= json_array_get_length(arr))
				return NULL;
			node = json_array_get_element(arr, (guint)idx);
		} else {
			return NULL;
		}
	}
	return node;
}

static JsonNode *facts_get_value(JsonNode *root, const char *path, GType type)
{
	JsonNode *node = facts_get(root, path);

	if (node == NULL || !JSON_NODE_HOLDS_VALUE(node) ||
	    json_node_get_value_type(node) != type) {
		g_printerr("%s: missing or not of type %s"
		           "\n",
		           path, g_type_name(type));
		g_assert_not_reached();
	}
	return node;
}

const char *facts_get_str(JsonNode *root, const char *path)
{
	return json_node_get_string(facts_get_value(root, path, G_TYPE_STRING));
}

gint64 facts_get_int(JsonNode *root, const char *path)
{
	return json_node_get_int(facts_get_value(root, path, G_TYPE_INT64));
}

gboolean facts_get_bool(JsonNode *root, const char *path)
{
	return json_node_get_boolean(facts_get_value(root, path, G_TYPE_BOOLEAN));
}

gboolean facts_is_null(JsonNode *root, const char *path)
{
	JsonNode *node = facts_get(root, path);

	if (node == NULL) {
		g_printerr("%s: missing"
		           "\n",
		           path);
		g_assert_not_reached();
	}
	return JSON_NODE_HOLDS_NULL(node);
}

char *facts_get_joined(JsonNode *root, const char *path)
{
	JsonNode *node = facts_get(root, path);
	g_autoptr(GString) str = g_string_new(NULL);
	JsonArray *arr;

	if (node == NULL || !JSON_NODE_HOLDS_ARRAY(node)) {
		g_printerr("%s: missing or not an array"
		           "\n",
		           path);
		g_assert_not_reached();
	}
	arr = json_node_get_array(node);
	for (guint i = 0; i < json_array_get_length(arr); i++) {
		JsonNode *el = json_array_get_element(arr, i);
		if (i > 0)
			g_string_append_c(str, ',');
		if (json_node_get_value_type(el) == G_TYPE_STRING)
			g_string_append(str, json_node_get_string(el));
		else
			g_string_append_printf(str, "%" G_GINT64_FORMAT, json_node_get_int(el));
	}
	return g_string_free(g_steal_pointer(&str), FALSE);
}

const char *facts_error_for(JsonArray *errors, const char *member)
{
	for (guint i = 0; i < json_array_get_length(errors); i++) {
		JsonObject *obj = json_array_get_object_element(errors, i);
		if (g_strcmp0(json_object_get_string_member(obj, "member"), member) == 0)
			return json_object_get_string_member(obj, "reason");
	}
	return NULL;
}

static gint facts_cmp_str(gconstpointer a, gconstpointer b)
{
	return g_strcmp0(*(const char *const *)a, *(const char *const *)b);
}

char *facts_error_members(JsonArray *errors)
{
	g_autoptr(GPtrArray) names = g_ptr_array_new();

	for (guint i = 0; i < json_array_get_length(errors); i++) {
		JsonObject *obj = json_array_get_object_element(errors, i);
		g_ptr_array_add(names, (gpointer)json_object_get_string_member(obj, "member"));
	}
	g_ptr_array_sort(names, facts_cmp_str);
	g_ptr_array_add(names, NULL);
	return g_strjoinv(" ", (char **)names->pdata);
}

char *facts_to_string(JsonNode *node)
{
	g_autoptr(JsonGenerator) gen = json_generator_new();

	json_generator_set_root(gen, node);
	return json_generator_to_data(gen, NULL);
}
