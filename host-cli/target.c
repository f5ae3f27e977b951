/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"

#include <sys/un.h>

#include "gb-error.h"
#include "target.h"

/* Schemes that are planned; named here so users get "not supported yet", not "unknown". */
static const char *const cli_target_planned_schemes[] = { "qga", "libvirt", NULL };

void cli_target_free(CliTarget *target)
{
	if (target == NULL)
		return;
	g_free(target->text);
	g_free(target->name);
	g_free(target->path);
	g_free(target);
}

/* Decimal, no sign, no spaces, fits 32 bits: strtoul would accept " -1" and wrap it. */
static gboolean cli_target_parse_u32(const char *text, const char *what, const char *target,
                                     guint32 *out, GError **error)
{
	guint64 val = 0;
	g_autoptr(GError) error_local = NULL;

	if (text[0] == '\0') {
		g_set_error(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT,
		            "invalid target '%s': %s is empty (expected vsock:CID:PORT)", target,
		            what);
		return FALSE;
	}
	if (!g_ascii_string_to_unsigned(text, 10, 0, G_MAXUINT32, &val, &error_local)) {
		g_set_error(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT,
		            "invalid target '%s': %s '%s' is not a number in 0..%u", target, what,
		            text, G_MAXUINT32);
		return FALSE;
	}
	*out = (guint32)val;
	return TRUE;
}

static gboolean cli_target_parse_vsock(CliTarget *target, const char *rest, GError **error)
{
	const char *colon = strchr(rest, ':');
	g_autofree char *cid = NULL;

	if (colon == NULL) {
		g_set_error(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT,
		            "invalid target '%s': expected vsock:CID:PORT", target->text);
		return FALSE;
	}
	cid = g_strndup(rest, colon - rest);
	if (!cli_target_parse_u32(cid, "CID", target->text, &target->cid, error))
		return FALSE;
	if (!cli_target_parse_u32(colon + 1, "PORT", target->text, &target->port, error))
		return FALSE;
	/* 0 is the hypervisor and -1 is VMADDR_CID_ANY: neither is a guest to connect to */
	if (target->cid == 0 || target->cid == G_MAXUINT32) {
		g_set_error(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT,
		            "invalid target '%s': CID %u cannot be connected to", target->text,
		            target->cid);
		return FALSE;
	}
	if (target->port == G_MAXUINT32) {
		g_set_error(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT,
		            "invalid target '%s': PORT %u cannot be connected to", target->text,
		            target->port);
		return FALSE;
	}
	return TRUE;
}

static gboolean cli_target_parse_unix(CliTarget *target, const char *path, GError **error)
{
	struct sockaddr_un sun;

	if (path[0] == '\0') {
		g_set_error(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT,
		            "invalid target '%s': empty socket path", target->text);
		return FALSE;
	}
	/* the kernel cannot address longer paths; say so now rather than at connect time */
	if (strlen(path) >= sizeof(sun.sun_path)) {
		g_set_error(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT,
		            "invalid target '%s': socket path longer than %zu bytes", target->text,
		            sizeof(sun.sun_path) - 1);
		return FALSE;
	}
	target->scheme = CLI_TARGET_UNIX;
	target->path = g_strdup(path);
	return TRUE;
}

/* "word:" where word is lower-case letters, digits, '-' or '+': a scheme, not a path. */
static char *cli_target_get_scheme(const char *text)
{
	const char *p;

	for (p = text; *p != '\0' && *p != ':'; p++) {
		if (!g_ascii_islower(*p) && !g_ascii_isdigit(*p) && *p != '-' && *p != '+')
			return NULL;
	}
	if (*p != ':' || p == text)
		return NULL;
	return g_strndup(text, p - text);
}

CliTarget *cli_target_parse(const char *text, GError **error)
{
	g_autoptr(CliTarget) target = g_new0(CliTarget, 1);
	g_autofree char *scheme = NULL;

	if (text == NULL || text[0] == '\0') {
		g_set_error_literal(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT,
		                    "invalid target '': empty");
		return NULL;
	}
	if (!g_utf8_validate(text, -1, NULL)) {
		g_set_error_literal(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT,
		                    "invalid target: not valid UTF-8");
		return NULL;
	}
	target->text = g_strdup(text);
	target->name = g_strdup(text);

	if (text[0] == '@') {
		g_set_error(error, GB_ERROR, GB_ERROR_NOT_SUPPORTED,
		            "invalid target '%s': inventory files (@FILE) are not supported yet",
		            text);
		return NULL;
	}
	/* absolute and ./relative paths may contain ':' and are never a scheme */
	if (text[0] == '/' || text[0] == '.') {
		if (!cli_target_parse_unix(target, text, error))
			return NULL;
		return g_steal_pointer(&target);
	}
	scheme = cli_target_get_scheme(text);
	if (scheme == NULL) {
		if (!cli_target_parse_unix(target, text, error))
			return NULL;
		return g_steal_pointer(&target);
	}
	if (g_strcmp0(scheme, "unix") == 0) {
		if (!cli_target_parse_unix(target, text + strlen("unix:"), error))
			return NULL;
		return g_steal_pointer(&target);
	}
	if (g_strcmp0(scheme, "vsock") == 0) {
		target->scheme = CLI_TARGET_VSOCK;
		if (!cli_target_parse_vsock(target, text + strlen("vsock:"), error))
			return NULL;
		return g_steal_pointer(&target);
	}
	if (g_strv_contains(cli_target_planned_schemes, scheme)) {
		g_set_error(error, GB_ERROR, GB_ERROR_NOT_SUPPORTED,
		            "invalid target '%s': scheme '%s:' is not supported yet", text, scheme);
		return NULL;
	}
	g_set_error(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT,
	            "invalid target '%s': unknown scheme '%s:' (expected unix:PATH, "
	            "vsock:CID:PORT or a path)",
	            text, scheme);
	return NULL;
}

char *cli_target_to_key(const CliTarget *target)
{
	switch (target->scheme) {
	case CLI_TARGET_UNIX:
		return g_strdup_printf("unix:%s", target->path);
	case CLI_TARGET_VSOCK:
		return g_strdup_printf("vsock:%u:%u", target->cid, target->port);
	default:
		break;
	}
	return g_strdup(target->text);
}

GPtrArray *cli_targets_parse(const char *const *texts, GError **error)
{
	g_autoptr(GPtrArray) targets =
	    g_ptr_array_new_with_free_func((GDestroyNotify)cli_target_free);
	g_autoptr(GHashTable) seen = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);

	for (guint i = 0; texts != NULL && texts[i] != NULL; i++) {
		g_autoptr(CliTarget) target = cli_target_parse(texts[i], error);
		g_autofree char *key = NULL;
		const char *first;

		if (target == NULL)
			return NULL;
		key = cli_target_to_key(target);
		first = g_hash_table_lookup(seen, key);
		if (first != NULL) {
			g_set_error(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT,
			            "duplicate target '%s' (same guest as '%s')", texts[i], first);
			return NULL;
		}
		g_hash_table_insert(seen, g_steal_pointer(&key), (gpointer)texts[i]);
		g_ptr_array_add(targets, g_steal_pointer(&target));
	}
	return g_steal_pointer(&targets);
}
