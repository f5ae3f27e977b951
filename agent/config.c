/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"

#include <errno.h>
#include <string.h>

#include "agent-config.h"
#ifndef _WIN32
#include "endpoint.h"
#endif

#define AGENT_CONFIG_GROUP "general"

#ifdef _WIN32
/* The port as Windows' vioserial driver names it, a COM port, a named pipe. */
static const char *const agent_methods[] = {
	"virtio-serial",
	"isa-serial",
	"pipe-listen",
	NULL,
};
#else
static const char *const agent_methods[] = {
	"virtio-serial", "unix-listen", "vsock-listen", "stdio", NULL,
};
#endif

static const char *const agent_config_keys[] = {
	"method",         "path",    "sysroot",          "scratch-dir",       "allow-rpcs",
	"block-rpcs",     "verbose", "max-message-size", "max-bench-seconds", "max-bench-file-size",
	"linger-seconds", NULL,
};

AgentConfig *agent_config_new(void)
{
	AgentConfig *config = g_new0(AgentConfig, 1);
	config->method = g_strdup("virtio-serial");
	config->sysroot = g_strdup("/");
	config->scratch_dir = g_strdup(GB_AGENT_DEFAULT_SCRATCH);
	config->max_message_size = GB_FRAMER_DEFAULT_MAX_SIZE;
	config->max_depth = GB_FRAMER_DEFAULT_MAX_DEPTH;
	config->max_bench_seconds = AGENT_DEFAULT_MAX_BENCH_SECONDS;
	config->max_bench_file_size = AGENT_DEFAULT_MAX_BENCH_FILE_SIZE;
	config->linger_seconds = AGENT_DEFAULT_LINGER_SECONDS;
	return config;
}

void agent_config_free(AgentConfig *config)
{
	if (config == NULL)
		return;
	g_free(config->method);
	g_free(config->path);
	g_free(config->sysroot);
	g_free(config->scratch_dir);
	g_free(config->bench_worker);
	g_strfreev(config->allow_rpcs);
	g_strfreev(config->block_rpcs);
	g_free(config);
}

gboolean agent_config_method_is_valid(const char *method)
{
	return method != NULL && g_strv_contains(agent_methods, method);
}

char **agent_config_split_list(const char *value)
{
	g_autoptr(GPtrArray) items = g_ptr_array_new_with_free_func(g_free);
	g_auto(GStrv) parts = NULL;

	if (value == NULL)
		return NULL;
	parts = g_strsplit_set(value, ",;", -1);
	for (guint i = 0; parts[i] != NULL; i++) {
		char *item = g_strstrip(parts[i]);
		if (*item == '\0')
			continue;
		g_ptr_array_add(items, g_strdup(item));
	}
	if (items->len == 0)
		return NULL;
	g_ptr_array_add(items, NULL);
	return (char **)g_ptr_array_free(g_steal_pointer(&items), FALSE);
}

/* A string value; NULL with error on bad UTF-8 or escapes. */
static char *agent_config_get_string(GKeyFile *kf, const char *key, GError **error)
{
	return g_key_file_get_string(kf, AGENT_CONFIG_GROUP, key, error);
}

static gboolean agent_config_get_uint(GKeyFile *kf, const char *key, guint64 min, guint64 max,
                                      guint64 *out, GError **error)
{
	g_autofree char *raw = g_key_file_get_value(kf, AGENT_CONFIG_GROUP, key, error);
	g_autoptr(GError) error_local = NULL;

	if (raw == NULL)
		return FALSE;
	g_strstrip(raw);
	if (!g_ascii_string_to_unsigned(raw, 10, min, max, out, &error_local)) {
		g_set_error(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT,
		            "expected a whole number of %s from %" G_GUINT64_FORMAT
		            " to %" G_GUINT64_FORMAT ", got '%s'",
		            g_str_has_suffix(key, "seconds") ? "seconds" : "bytes", min, max, raw);
		return FALSE;
	}
	return TRUE;
}

static gboolean agent_config_load_key(AgentConfig *config, GKeyFile *kf, const char *key,
                                      GError **error)
{
	g_autoptr(GError) error_local = NULL;

	if (g_strcmp0(key, "verbose") == 0) {
		gboolean val = g_key_file_get_boolean(kf, AGENT_CONFIG_GROUP, key, &error_local);
		if (error_local != NULL) {
			g_set_error_literal(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT,
			                    "expected a boolean (true or false)");
			return FALSE;
		}
		config->verbose = val;
		return TRUE;
	}
	if (g_strcmp0(key, "max-message-size") == 0) {
		guint64 val = 0;
		if (!agent_config_get_uint(kf, key, AGENT_MIN_MESSAGE_SIZE, AGENT_MAX_MESSAGE_SIZE,
		                           &val, error))
			return FALSE;
		config->max_message_size = (gsize)val;
		return TRUE;
	}
	if (g_strcmp0(key, "max-bench-seconds") == 0) {
		guint64 val = 0;
		if (!agent_config_get_uint(kf, key, 1, AGENT_MAX_BENCH_SECONDS, &val, error))
			return FALSE;
		config->max_bench_seconds = (gint64)val;
		return TRUE;
	}
	if (g_strcmp0(key, "max-bench-file-size") == 0) {
		guint64 val = 0;
		if (!agent_config_get_uint(kf, key, AGENT_MIN_BENCH_FILE_SIZE, G_MAXINT64, &val,
		                           error))
			return FALSE;
		config->max_bench_file_size = (gint64)val;
		return TRUE;
	}
	if (g_strcmp0(key, "linger-seconds") == 0) {
		guint64 val = 0;
		if (!agent_config_get_uint(kf, key, AGENT_MIN_LINGER_SECONDS,
		                           AGENT_MAX_LINGER_SECONDS, &val, error))
			return FALSE;
		config->linger_seconds = (gint64)val;
		return TRUE;
	}

	/* the rest are strings */
	{
		g_autofree char *val = agent_config_get_string(kf, key, &error_local);
		if (val == NULL) {
			g_set_error(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT,
			            "expected a string: %s", error_local->message);
			return FALSE;
		}
		g_strstrip(val);
		if (g_strcmp0(key, "allow-rpcs") == 0) {
			g_strfreev(config->allow_rpcs);
			config->allow_rpcs = agent_config_split_list(val);
		} else if (g_strcmp0(key, "block-rpcs") == 0) {
			g_strfreev(config->block_rpcs);
			config->block_rpcs = agent_config_split_list(val);
		} else if (g_strcmp0(key, "method") == 0) {
			if (!agent_config_method_is_valid(val)) {
				g_autofree char *all = g_strjoinv(", ", (char **)agent_methods);
				g_set_error(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT,
				            "unknown method '%s' (expected one of: %s)", val, all);
				return FALSE;
			}
			g_free(config->method);
			config->method = g_steal_pointer(&val);
		} else if (g_strcmp0(key, "path") == 0) {
			g_free(config->path);
			config->path = *val != '\0' ? g_steal_pointer(&val) : NULL;
		} else if (*val == '\0') {
			/* sysroot and scratch-dir: an empty directory name is a mistake */
			g_set_error_literal(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT,
			                    "expected a directory, got an empty value");
			return FALSE;
		} else if (g_strcmp0(key, "sysroot") == 0) {
			g_free(config->sysroot);
			config->sysroot = g_steal_pointer(&val);
		} else {
			g_free(config->scratch_dir);
			config->scratch_dir = g_steal_pointer(&val);
		}
	}
	return TRUE;
}

/* [general] of a loaded key file into config; filename names it in errors. */
static gboolean agent_config_load_keyfile(AgentConfig *config, GKeyFile *kf, const char *filename,
                                          GError **error)
{
	g_auto(GStrv) groups = NULL;
	g_auto(GStrv) keys = NULL;

	groups = g_key_file_get_groups(kf, NULL);
	for (guint i = 0; groups[i] != NULL; i++) {
		if (g_strcmp0(groups[i], AGENT_CONFIG_GROUP) != 0) {
			g_set_error(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT,
			            "config file %s: unknown group [%s] (only [%s] is allowed)",
			            filename, groups[i], AGENT_CONFIG_GROUP);
			return FALSE;
		}
	}
	if (!g_key_file_has_group(kf, AGENT_CONFIG_GROUP))
		return TRUE;

	keys = g_key_file_get_keys(kf, AGENT_CONFIG_GROUP, NULL, NULL);
	for (guint i = 0; keys != NULL && keys[i] != NULL; i++) {
		if (!g_strv_contains(agent_config_keys, keys[i])) {
			g_set_error(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT,
			            "config file %s: [%s] unknown key '%s'", filename,
			            AGENT_CONFIG_GROUP, keys[i]);
			return FALSE;
		}
	}
	for (guint i = 0; keys != NULL && keys[i] != NULL; i++) {
		if (!agent_config_load_key(config, kf, keys[i], error)) {
			g_prefix_error(error, "config file %s: [%s] %s: ", filename,
			               AGENT_CONFIG_GROUP, keys[i]);
			return FALSE;
		}
	}
	return TRUE;
}

gboolean agent_config_load_file(AgentConfig *config, const char *filename, gboolean required,
                                GError **error)
{
	g_autoptr(GKeyFile) kf = g_key_file_new();
	g_autoptr(GError) error_local = NULL;

	g_return_val_if_fail(config != NULL, FALSE);
	g_return_val_if_fail(filename != NULL, FALSE);

	if (!g_key_file_load_from_file(kf, filename, G_KEY_FILE_NONE, &error_local)) {
		if (!required && g_error_matches(error_local, G_FILE_ERROR, G_FILE_ERROR_NOENT))
			return TRUE;
		g_set_error(error, GB_ERROR,
		            error_local->domain == G_FILE_ERROR ? GB_ERROR_IO
		                                                : GB_ERROR_INVALID_ARGUMENT,
		            "config file %s: %s", filename, error_local->message);
		return FALSE;
	}
	return agent_config_load_keyfile(config, kf, filename, error);
}

gboolean agent_config_load_data(AgentConfig *config, const char *data, gsize len, const char *name,
                                GError **error)
{
	g_autoptr(GKeyFile) kf = g_key_file_new();
	g_autoptr(GError) error_local = NULL;

	if (!g_key_file_load_from_data(kf, data, len, G_KEY_FILE_NONE, &error_local)) {
		g_set_error(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT, "config %s: %s", name,
		            error_local->message);
		return FALSE;
	}
	return agent_config_load_keyfile(config, kf, name, error);
}

char *agent_config_to_data(const AgentConfig *config, gsize *len)
{
	g_autoptr(GKeyFile) kf = g_key_file_new();
	const char *g = AGENT_CONFIG_GROUP;

	g_key_file_set_string(kf, g, "method", config->method);
	if (config->path != NULL)
		g_key_file_set_string(kf, g, "path", config->path);
	g_key_file_set_string(kf, g, "sysroot", config->sysroot);
	g_key_file_set_string(kf, g, "scratch-dir", config->scratch_dir);
	if (config->allow_rpcs != NULL) {
		g_autofree char *list = g_strjoinv(",", config->allow_rpcs);
		g_key_file_set_string(kf, g, "allow-rpcs", list);
	}
	if (config->block_rpcs != NULL) {
		g_autofree char *list = g_strjoinv(",", config->block_rpcs);
		g_key_file_set_string(kf, g, "block-rpcs", list);
	}
	g_key_file_set_boolean(kf, g, "verbose", config->verbose);
	g_key_file_set_uint64(kf, g, "max-message-size", config->max_message_size);
	g_key_file_set_int64(kf, g, "max-bench-seconds", config->max_bench_seconds);
	g_key_file_set_int64(kf, g, "max-bench-file-size", config->max_bench_file_size);
	g_key_file_set_int64(kf, g, "linger-seconds", config->linger_seconds);
	return g_key_file_to_data(kf, len, NULL);
}

gboolean agent_config_check(const AgentConfig *config, GError **error)
{
	if (!agent_config_method_is_valid(config->method)) {
		g_autofree char *all = g_strjoinv(", ", (char **)agent_methods);
		g_set_error(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT,
		            "unknown method '%s' (expected one of: %s)", config->method, all);
		return FALSE;
	}
#ifdef _WIN32
	if (g_strcmp0(config->method, "isa-serial") == 0 && config->path == NULL) {
		g_set_error_literal(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT,
		                    "method isa-serial needs a COM port (-p COM5)");
		return FALSE;
	}
	if (g_strcmp0(config->method, "pipe-listen") == 0 && config->path == NULL) {
		g_set_error_literal(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT,
		                    "method pipe-listen needs a pipe name (-p \\\\.\\pipe\\NAME)");
		return FALSE;
	}
#else
	if (g_strcmp0(config->method, "unix-listen") == 0 && config->path == NULL) {
		g_set_error_literal(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT,
		                    "method unix-listen needs a socket path (-p PATH)");
		return FALSE;
	}
	if (g_strcmp0(config->method, "vsock-listen") == 0) {
		guint32 cid = 0;
		guint32 port = 0;
		if (config->path == NULL) {
			g_set_error_literal(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT,
			                    "method vsock-listen needs an address (-p CID:PORT)");
			return FALSE;
		}
		if (!agent_endpoint_parse_vsock(config->path, &cid, &port, error))
			return FALSE;
	}
#endif
	return TRUE;
}
