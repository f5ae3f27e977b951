/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "gb-error.h"
#include "fleet/host-files.h"
#include "analysis/audit.h"
#include "fleet/inventory.h"

static const char *const cli_inventory_keys[] = {
	"target",        "tags",          "qmp",  "agent_path", "connect",
	"require_level", "require_flags", "host", NULL,
};
static const char *const cli_inventory_hypervisor_keys[] = { "connect", "tags", NULL };

/* ---- the line scan: what GKeyFile accepts silently or without a line number ---------- */

typedef struct {
	char *name;
	gboolean hypervisor; /* [hypervisor NAME]: every running guest of connect= */
	guint line;
	GHashTable *key_lines; /* key -> line (GUINT_TO_POINTER) */
} CliInventoryGroup;

static void cli_inventory_group_free(CliInventoryGroup *group)
{
	g_free(group->name);
	g_hash_table_unref(group->key_lines);
	g_free(group);
}

static gboolean cli_inventory_check_name(const char *name)
{
	gsize len = strlen(name);

	if (len == 0 || g_ascii_isspace(name[0]) || g_ascii_isspace(name[len - 1]))
		return FALSE;
	/* GKeyFile refuses '[' and ']' in group names */
	for (const char *c = name; *c != '\0'; c = g_utf8_next_char(c)) {
		gunichar u = g_utf8_get_char(c);
		if (g_unichar_iscntrl(u) || u == '[' || u == ']')
			return FALSE;
	}
	return TRUE;
}

/* 1-based line of byte offset off. */
static guint cli_inventory_line_of(const char *data, gsize off)
{
	guint line = 1;
	for (gsize i = 0; i < off; i++) {
		if (data[i] == '\n')
			line++;
	}
	return line;
}

static GPtrArray *cli_inventory_scan(const char *path, const char *data, gsize len, GError **error)
{
	g_autoptr(GPtrArray) groups =
	    g_ptr_array_new_with_free_func((GDestroyNotify)cli_inventory_group_free);
	g_autoptr(GHashTable) seen = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
	g_auto(GStrv) lines = NULL;
	g_autofree char *text = NULL;
	const char *invalid = NULL;
	CliInventoryGroup *group = NULL;

	if (memchr(data, '\0', len) != NULL) {
		g_set_error(
		    error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT, "%s:%u: contains a NUL byte", path,
		    cli_inventory_line_of(data, (const char *)memchr(data, '\0', len) - data));
		return NULL;
	}
	if (!g_utf8_validate_len(data, len, &invalid)) {
		g_set_error(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT, "%s:%u: not valid UTF-8",
		            path, cli_inventory_line_of(data, invalid - data));
		return NULL;
	}
	text = g_strndup(data, len);
	lines = g_strsplit(text, "\n", -1);
	for (guint i = 0; lines[i] != NULL; i++) {
		guint lineno = i + 1;
		char *line = g_strstrip(lines[i]); /* also drops a CR of CRLF files */
		const char *eq;
		g_autofree char *key = NULL;

		if (line[0] == '\0' || line[0] == '#')
			continue;
		if (line[0] == '[') {
			gsize n = strlen(line);
			CliInventoryGroup *first;

			if (line[n - 1] != ']') {
				g_set_error(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT,
				            "%s:%u: group header '%s' does not end with ']'", path,
				            lineno, line);
				return NULL;
			}
			line[n - 1] = '\0';
			{
				gboolean hv = g_str_has_prefix(line + 1, "hypervisor ");
				const char *name =
				    line + 1 + (hv ? strlen("hypervisor ") : strlen("guest "));

				if ((!hv && !g_str_has_prefix(line + 1, "guest ")) ||
				    !cli_inventory_check_name(name)) {
					g_set_error(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT,
					            "%s:%u: group [%s] is not [guest NAME] or "
					            "[hypervisor NAME]",
					            path, lineno, line + 1);
					return NULL;
				}
				group = g_new0(CliInventoryGroup, 1);
				group->name = g_strdup(name);
				group->hypervisor = hv;
				group->line = lineno;
				group->key_lines =
				    g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
				g_ptr_array_add(groups, group);
			}
			first = g_hash_table_lookup(seen, line + 1);
			if (first != NULL) {
				g_set_error(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT,
				            "%s:%u: duplicate %s '%s' (first at line %u)", path,
				            lineno, group->hypervisor ? "hypervisor" : "guest",
				            group->name, first->line);
				return NULL;
			}
			g_hash_table_insert(seen, g_strdup(line + 1), group);
			continue;
		}
		eq = strchr(line, '=');
		if (eq == NULL) {
			g_set_error(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT,
			            "%s:%u: not a [guest NAME] group, a key=value or a # comment",
			            path, lineno);
			return NULL;
		}
		key = g_strstrip(g_strndup(line, eq - line));
		if (group == NULL) {
			g_set_error(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT,
			            "%s:%u: key '%s' before the first [guest NAME] group", path,
			            lineno, key);
			return NULL;
		}
		if (group->hypervisor && !g_strv_contains(cli_inventory_hypervisor_keys, key)) {
			g_set_error(
			    error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT,
			    "%s:%u: unknown key '%s' in [hypervisor %s] (expected connect or "
			    "tags)",
			    path, lineno, key, group->name);
			return NULL;
		}
		if (!group->hypervisor && !g_strv_contains(cli_inventory_keys, key)) {
			g_set_error(
			    error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT,
			    "%s:%u: unknown key '%s' in [guest %s] (expected target, tags, qmp, "
			    "agent_path, connect, require_level, require_flags or host)",
			    path, lineno, key, group->name);
			return NULL;
		}
		if (g_hash_table_contains(group->key_lines, key)) {
			g_set_error(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT,
			            "%s:%u: key '%s' given twice in [%s %s] (first at line %u)",
			            path, lineno, key, group->hypervisor ? "hypervisor" : "guest",
			            group->name,
			            GPOINTER_TO_UINT(g_hash_table_lookup(group->key_lines, key)));
			return NULL;
		}
		g_hash_table_insert(group->key_lines, g_steal_pointer(&key),
		                    GUINT_TO_POINTER(lineno));
	}
	if (groups->len == 0) {
		g_set_error(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT,
		            "%s: no [guest NAME] or [hypervisor NAME] groups", path);
		return NULL;
	}
	return g_steal_pointer(&groups);
}

/* ---- building the targets ------------------------------------------------------------ */

/* A relative socket path is relative to the inventory, not to wherever the CLI runs. */
static char *cli_inventory_anchor(const char *dir, const char *path, GError **error)
{
	struct sockaddr_un sun;
	g_autofree char *full =
	    g_path_is_absolute(path) ? g_strdup(path) : g_build_filename(dir, path, NULL);

	if (strlen(full) >= sizeof(sun.sun_path)) {
		g_set_error(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT,
		            "socket path %s longer than %zu bytes", full, sizeof(sun.sun_path) - 1);
		return NULL;
	}
	return g_steal_pointer(&full);
}

static gboolean cli_inventory_check_tags(char **tags, GError **error)
{
	for (guint i = 0; tags[i] != NULL; i++) {
		if (tags[i][0] == '\0') {
			g_set_error_literal(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT,
			                    "empty tag in tags=");
			return FALSE;
		}
		for (const char *c = tags[i]; *c != '\0'; c = g_utf8_next_char(c)) {
			gunichar u = g_utf8_get_char(c);
			if (g_unichar_isspace(u) || g_unichar_iscntrl(u) || u == ',') {
				g_set_error(
				    error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT,
				    "tag '%s' contains a space, a comma or a control character "
				    "(tags are separated by ';')",
				    tags[i]);
				return FALSE;
			}
		}
	}
	return TRUE;
}

/*
 * g_key_file_get_string() returns a value AND sets an error when the value has
 * an invalid escape (such as \4): take the value only when no error was set.
 */
static char *cli_inventory_get_string(GKeyFile *kf, const char *kf_group, const char *key,
                                      GError **error)
{
	g_autoptr(GError) error_local = NULL;
	g_autofree char *value = g_key_file_get_string(kf, kf_group, key, &error_local);

	if (error_local != NULL) {
		g_set_error(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT,
		            "%s= cannot be read (an invalid escape such as \\4?): %s", key,
		            error_local->message);
		return NULL;
	}
	return g_steal_pointer(&value);
}

/* connect=URI: a libvirt URI, not empty, one line. */
static char *cli_inventory_get_connect(GKeyFile *kf, const char *kf_group, GError **error)
{
	g_autofree char *uri = cli_inventory_get_string(kf, kf_group, "connect", error);

	if (uri == NULL)
		return NULL;
	if (uri[0] == '\0' || strpbrk(uri, " \t\r\n") != NULL) {
		g_set_error(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT,
		            "connect= must be one libvirt URI such as qemu+ssh://HOST/system, not "
		            "'%s'",
		            uri);
		return NULL;
	}
	return g_steal_pointer(&uri);
}

/* [hypervisor NAME]: its running guests, each with host NAME and the group's tags. */
static GPtrArray *cli_inventory_build_hypervisor(GKeyFile *kf, CliInventoryGroup *group,
                                                 GError **error)
{
	g_autofree char *kf_group = g_strdup_printf("hypervisor %s", group->name);
	g_autofree char *connect = NULL;
	g_auto(GStrv) tags = NULL;
	const char *uris[2] = { NULL, NULL };
	GPtrArray *targets;

	if (!g_hash_table_contains(group->key_lines, "connect")) {
		g_set_error_literal(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT, "no connect=");
		return NULL;
	}
	connect = cli_inventory_get_connect(kf, kf_group, error);
	if (connect == NULL)
		return NULL;
	if (g_hash_table_contains(group->key_lines, "tags")) {
		tags = g_key_file_get_string_list(kf, kf_group, "tags", NULL, error);
		if (tags == NULL || !cli_inventory_check_tags(tags, error))
			return NULL;
	}
	uris[0] = connect;
	targets = cli_targets_from_libvirt(uris, error);
	for (guint i = 0; targets != NULL && i < targets->len; i++) {
		CliTarget *target = g_ptr_array_index(targets, i);
		g_free(target->host);
		target->host = g_strdup(group->name);
		if (tags != NULL) {
			g_strfreev(target->tags);
			target->tags = g_strdupv(tags);
		}
	}
	return targets;
}

static CliTarget *cli_inventory_build(GKeyFile *kf, const char *dir, CliInventoryGroup *group,
                                      const CliTargetOptions *opts, GError **error)
{
	g_autofree char *kf_group = g_strdup_printf("guest %s", group->name);
	g_autofree char *text = NULL;
	g_autofree char *qmp = NULL;
	g_autofree char *connect = NULL;
	const char *connect_list[2] = { NULL, NULL };
	CliTargetOptions guest_opts = { 0 };
	g_autoptr(CliTarget) target = NULL;

	if (!g_hash_table_contains(group->key_lines, "target")) {
		g_set_error_literal(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT, "no target=");
		return NULL;
	}
	text = cli_inventory_get_string(kf, kf_group, "target", error);
	if (text == NULL)
		return NULL;
	if (text[0] == '@') {
		g_set_error(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT,
		            "target '%s' is an inventory: an inventory cannot include another",
		            text);
		return NULL;
	}
	if (g_hash_table_contains(group->key_lines, "connect")) {
		connect = cli_inventory_get_connect(kf, kf_group, error);
		if (connect == NULL)
			return NULL;
		if (!g_str_has_prefix(text, "libvirt:")) {
			g_set_error(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT,
			            "connect= is for target=libvirt:DOMAIN, not '%s'", text);
			return NULL;
		}
		/* this guest is looked up on its own connection only */
		if (opts != NULL)
			guest_opts = *opts;
		connect_list[0] = connect;
		guest_opts.connect = connect_list;
		guest_opts.libvirt_dir = NULL;
		opts = &guest_opts;
	}
	target = cli_target_parse_full(text, opts, error);
	if (target == NULL)
		return NULL;
	if ((target->scheme == CLI_TARGET_UNIX || target->scheme == CLI_TARGET_QGA) &&
	    target->path != NULL && !g_path_is_absolute(target->path)) {
		char *path = cli_inventory_anchor(dir, target->path, error);
		if (path == NULL)
			return NULL;
		g_free(target->path);
		target->path = path;
	}
	g_free(target->name);
	target->name = g_strdup(group->name);
	if (g_hash_table_contains(group->key_lines, "tags")) {
		g_strfreev(target->tags);
		target->tags = g_key_file_get_string_list(kf, kf_group, "tags", NULL, error);
		if (target->tags == NULL)
			return NULL;
		if (!cli_inventory_check_tags(target->tags, error))
			return NULL;
	}
	if (g_hash_table_contains(group->key_lines, "qmp")) {
		qmp = cli_inventory_get_string(kf, kf_group, "qmp", error);
		if (qmp == NULL)
			return NULL;
		if (qmp[0] == '\0') {
			g_set_error_literal(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT,
			                    "empty qmp=");
			return NULL;
		}
		/* libvirt:DOMAIN: the monitor libvirt holds, on the guest's connection */
		if (g_str_has_prefix(qmp, "libvirt:"))
			target->qmp = g_strdup(qmp);
		else
			target->qmp = cli_inventory_anchor(
			    dir, g_str_has_prefix(qmp, "unix:") ? qmp + 5 : qmp, error);
		if (target->qmp == NULL)
			return NULL;
	}
	if (g_hash_table_contains(group->key_lines, "agent_path")) {
		target->agent_path = cli_inventory_get_string(kf, kf_group, "agent_path", error);
		if (target->agent_path == NULL)
			return NULL;
		/* a path inside the guest: no directory here to make it relative to */
		if (!g_path_is_absolute(target->agent_path)) {
			g_set_error(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT,
			            "agent_path '%s' is not an absolute path", target->agent_path);
			return NULL;
		}
	}
	if (g_hash_table_contains(group->key_lines, "require_level")) {
		g_autofree char *level =
		    cli_inventory_get_string(kf, kf_group, "require_level", error);
		if (level == NULL || !cli_require_level_parse(level, &target->require_level,
		                                              &target->require_arm_level, error)) {
			g_prefix_error(error, "require_level: ");
			return NULL;
		}
	}
	if (g_hash_table_contains(group->key_lines, "require_flags")) {
		g_autofree char *flags =
		    cli_inventory_get_string(kf, kf_group, "require_flags", error);
		if (flags != NULL)
			target->require_flags = cli_cpu_flags_parse(flags, error);
		if (target->require_flags == NULL) {
			g_prefix_error(error, "require_flags: ");
			return NULL;
		}
	}
	/* the hypervisor it runs on: benchmarks there are scheduled together */
	if (g_hash_table_contains(group->key_lines, "host")) {
		g_autofree char *host = cli_inventory_get_string(kf, kf_group, "host", error);

		if (host == NULL || !cli_target_check_hypervisor_name(host, error)) {
			g_prefix_error(error, "host: ");
			return NULL;
		}
		g_free(target->host);
		target->host = g_steal_pointer(&host);
	}
	return g_steal_pointer(&target);
}

GPtrArray *cli_inventory_parse(const char *path, const char *data, gsize len,
                               const CliTargetOptions *opts, GError **error)
{
	g_autoptr(GPtrArray) groups = NULL;
	g_autoptr(GPtrArray) targets =
	    g_ptr_array_new_with_free_func((GDestroyNotify)cli_target_free);
	g_autoptr(GKeyFile) kf = g_key_file_new();
	g_autoptr(GError) error_local = NULL;
	g_autofree char *abs = NULL;
	g_autofree char *dir = NULL;

	groups = cli_inventory_scan(path, data, len, error);
	if (groups == NULL)
		return NULL;
	if (!g_key_file_load_from_data(kf, data, len, G_KEY_FILE_NONE, &error_local)) {
		g_set_error(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT, "%s: %s", path,
		            error_local->message);
		return NULL;
	}
	abs = g_canonicalize_filename(path, NULL);
	dir = g_path_get_dirname(abs);
	for (guint i = 0; i < groups->len; i++) {
		CliInventoryGroup *group = g_ptr_array_index(groups, i);
		CliTarget *target;

		if (group->hypervisor) {
			g_autoptr(GPtrArray) guests =
			    cli_inventory_build_hypervisor(kf, group, &error_local);
			if (guests == NULL) {
				g_set_error(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT,
				            "%s:%u: [hypervisor %s]: %s", path, group->line,
				            group->name, error_local->message);
				return NULL;
			}
			for (guint j = 0; j < guests->len; j++)
				g_ptr_array_add(targets, g_steal_pointer(&guests->pdata[j]));
			continue;
		}
		target = cli_inventory_build(kf, dir, group, opts, &error_local);
		if (target == NULL) {
			g_set_error(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT,
			            "%s:%u: [guest %s]: %s", path, group->line, group->name,
			            error_local->message);
			return NULL;
		}
		target->origin = g_strdup_printf("%s:%u", path, group->line);
		g_ptr_array_add(targets, target);
	}
	return g_steal_pointer(&targets);
}

GPtrArray *cli_inventory_load(const char *path, const CliTargetOptions *opts, GError **error)
{
	g_autofree char *data = NULL;
	g_autoptr(GError) error_local = NULL;
	gsize len = 0;

	if (!cli_read_regular_file(path, CLI_INVENTORY_MAX_SIZE, &data, &len, &error_local)) {
		g_set_error(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT, "inventory %s",
		            error_local->message);
		return NULL;
	}
	return cli_inventory_parse(path, data, len, opts, error);
}

gboolean cli_inventory_guest_selected(const CliTarget *target, const CliTargetOptions *opts)
{
	gboolean tag_ok = TRUE;
	gboolean name_ok = TRUE;

	if (opts == NULL)
		return TRUE;
	if (opts->tags != NULL && opts->tags[0] != NULL) {
		tag_ok = FALSE;
		for (guint i = 0; !tag_ok && target->tags != NULL && target->tags[i] != NULL; i++)
			tag_ok = g_strv_contains(opts->tags, target->tags[i]);
	}
	if (opts->names != NULL && opts->names[0] != NULL) {
		name_ok = FALSE;
		for (guint i = 0; !name_ok && opts->names[i] != NULL; i++)
			name_ok = g_pattern_match_simple(opts->names[i], target->name);
	}
	return tag_ok && name_ok;
}

char *cli_inventory_describe_selection(const CliTargetOptions *opts)
{
	GString *str = g_string_new(NULL);

	for (guint i = 0; opts != NULL && opts->tags != NULL && opts->tags[i] != NULL; i++)
		g_string_append_printf(str, "%s--tag '%s'", str->len > 0 ? " " : "", opts->tags[i]);
	for (guint i = 0; opts != NULL && opts->names != NULL && opts->names[i] != NULL; i++)
		g_string_append_printf(str, "%s--name '%s'", str->len > 0 ? " " : "",
		                       opts->names[i]);
	return g_string_free(str, FALSE);
}
