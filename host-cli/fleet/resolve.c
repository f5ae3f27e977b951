/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"

#include "gb-error.h"

#include "fleet/inventory.h"
#include "fleet/resolve.h"

GPtrArray *cli_targets_parse(const char *const *texts, GError **error)
{
	return cli_targets_resolve(texts, NULL, error);
}

/* How a duplicate is named in messages: the inventory group, or the text as given. */
static char *cli_target_describe(const CliTarget *target)
{
	if (target->origin != NULL)
		return g_strdup_printf("[guest %s] at %s", target->name, target->origin);
	return g_strdup_printf("'%s'", target->text);
}

typedef struct {
	GPtrArray *targets;
	GHashTable *keys;  /* canonical key -> CliTarget (borrowed) */
	GHashTable *names; /* inventory guest name -> CliTarget (borrowed) */
	guint n_inventory;
	guint n_selected;
} CliTargetsBuilder;

static gboolean cli_targets_add(CliTargetsBuilder *b, CliTarget *target_owned, GError **error)
{
	g_autoptr(CliTarget) target = target_owned;
	g_autofree char *key = cli_target_to_key(target);
	const CliTarget *first = g_hash_table_lookup(b->keys, key);

	if (first != NULL) {
		g_autofree char *this = cli_target_describe(target);
		g_autofree char *that = cli_target_describe(first);
		g_set_error(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT,
		            "duplicate target %s (same guest as %s: %s)", this, that, key);
		return FALSE;
	}
	if (target->origin != NULL) {
		first = g_hash_table_lookup(b->names, target->name);
		if (first != NULL) {
			g_set_error(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT,
			            "duplicate guest name '%s' (%s and %s)", target->name,
			            first->origin, target->origin);
			return FALSE;
		}
		g_hash_table_insert(b->names, target->name, target);
	}
	g_hash_table_insert(b->keys, g_steal_pointer(&key), target);
	g_ptr_array_add(b->targets, g_steal_pointer(&target));
	return TRUE;
}

static gboolean cli_targets_add_inventory(CliTargetsBuilder *b, const char *path,
                                          const CliTargetOptions *opts, GError **error)
{
	g_autoptr(GPtrArray) guests = NULL;

	if (path[0] == '\0') {
		g_set_error_literal(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT,
		                    "empty inventory file name");
		return FALSE;
	}
	guests = cli_inventory_load(path, opts, error);
	if (guests == NULL)
		return FALSE;
	b->n_inventory++;
	for (guint i = 0; i < guests->len; i++) {
		CliTarget *target = g_ptr_array_index(guests, i);
		if (!cli_inventory_guest_selected(target, opts))
			continue;
		b->n_selected++;
		if (!cli_targets_add(b, g_steal_pointer(&guests->pdata[i]), error))
			return FALSE;
	}
	return TRUE;
}

GPtrArray *cli_targets_resolve(const char *const *texts, const CliTargetOptions *opts,
                               GError **error)
{
	g_autoptr(GPtrArray) targets =
	    g_ptr_array_new_with_free_func((GDestroyNotify)cli_target_free);
	g_autoptr(GHashTable) keys = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
	g_autoptr(GHashTable) names = g_hash_table_new(g_str_hash, g_str_equal);
	g_autofree char *selection = cli_inventory_describe_selection(opts);
	CliTargetsBuilder b = { targets, keys, names, 0, 0 };

	for (guint i = 0; texts != NULL && texts[i] != NULL; i++) {
		CliTarget *target;

		if (texts[i][0] == '@') {
			if (!cli_targets_add_inventory(&b, texts[i] + 1, opts, error))
				return NULL;
			continue;
		}
		target = cli_target_parse_full(texts[i], opts, error);
		if (target == NULL || !cli_targets_add(&b, target, error))
			return NULL;
	}
	for (guint i = 0; opts != NULL && opts->inventories != NULL && opts->inventories[i] != NULL;
	     i++) {
		if (!cli_targets_add_inventory(&b, opts->inventories[i], opts, error))
			return NULL;
	}
	if (b.n_inventory == 0 && selection[0] != '\0') {
		g_set_error(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT,
		            "%s selects guests of an inventory, but none was given (@FILE or "
		            "--inventory FILE)",
		            selection);
		return NULL;
	}
	if (b.n_inventory > 0 && b.n_selected == 0) {
		g_set_error(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT,
		            "no inventory guest matches %s", selection);
		return NULL;
	}
	return g_steal_pointer(&targets);
}
