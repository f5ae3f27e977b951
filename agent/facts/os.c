/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <string.h>
#include <sys/utsname.h>

#include "util.h"

#define OSRELEASE_PATH "/proc/sys/kernel/osrelease"

static char *os_kernel_release(AgentFactsContext *ctx, GError **error)
{
	g_autofree char *release = agent_facts_read_line(ctx->sysroot, OSRELEASE_PATH, error);
	struct utsname uts;

	if (release != NULL && !agent_facts_is_token(release)) {
		g_set_error_literal(error, GB_ERROR, GB_ERROR_PARSE,
		                    OSRELEASE_PATH ": not a kernel release");
		return NULL;
	}
	if (release != NULL)
		return g_steal_pointer(&release);
	/* On the live system uname() says the same without procfs. */
	if (g_strcmp0(ctx->sysroot, "/") == 0 && uname(&uts) == 0) {
		g_clear_error(error);
		return g_strdup(uts.release);
	}
	return NULL;
}

/*
 * PRETTY_NAME from an os-release file: shell-like assignments where values
 * may be double-quoted (with \" \\ \$ \` escapes), single-quoted or bare with
 * backslash escapes, as os-release(5) says. The last assignment wins.
 */
static char *os_pretty_name(const char *text, const char *path, GError **error)
{
	g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
	g_autofree char *value = NULL;

	for (guint i = 0; lines[i] != NULL; i++) {
		const char *line = lines[i];
		g_autoptr(GError) error_local = NULL;
		char *unquoted;

		while (*line == ' ' || *line == '\t')
			line++;
		if (!g_str_has_prefix(line, "PRETTY_NAME="))
			continue;
		unquoted = g_shell_unquote(line + strlen("PRETTY_NAME="), &error_local);
		if (unquoted == NULL) {
			g_set_error(error, GB_ERROR, GB_ERROR_PARSE,
			            "%s: PRETTY_NAME has broken quoting", path);
			return NULL;
		}
		g_free(value);
		value = g_strstrip(unquoted);
	}
	if (value == NULL) {
		g_set_error(error, GB_ERROR, GB_ERROR_PARSE, "%s: no PRETTY_NAME", path);
		return NULL;
	}
	if (value[0] == '\0') {
		g_set_error(error, GB_ERROR, GB_ERROR_PARSE, "%s: PRETTY_NAME is empty", path);
		return NULL;
	}
	for (const char *p = value; *p != '\0'; p++) {
		if ((guchar)*p < 0x20 || *p == 0x7f) {
			g_set_error(error, GB_ERROR, GB_ERROR_PARSE,
			            "%s: PRETTY_NAME holds control characters", path);
			return NULL;
		}
	}
	return g_steal_pointer(&value);
}

static char *os_read_pretty_name(AgentFactsContext *ctx, GError **error)
{
	/* os-release(5): /usr/lib/os-release only when /etc/os-release does not exist. */
	const char *path = agent_facts_exists(ctx->sysroot, "/etc/os-release")
	                       ? "/etc/os-release"
	                       : "/usr/lib/os-release";
	g_autofree char *text = agent_facts_read_text(ctx->sysroot, path, error);

	if (text == NULL)
		return NULL;
	return os_pretty_name(text, path, error);
}

JsonNode *agent_facts_collect_os(AgentFactsContext *ctx)
{
	g_autoptr(JsonBuilder) builder = json_builder_new();
	g_autoptr(GError) error_rel = NULL;
	g_autoptr(GError) error_pretty = NULL;
	g_autofree char *release = os_kernel_release(ctx, &error_rel);
	g_autofree char *pretty = os_read_pretty_name(ctx, &error_pretty);

	json_builder_begin_object(builder);
	agent_facts_builder_add_string(builder, "kernel_release", release);
	if (release == NULL)
		agent_facts_add_error(ctx, "os.kernel_release", error_rel->message);
	agent_facts_builder_add_string(builder, "pretty_name", pretty);
	if (pretty == NULL)
		agent_facts_add_error(ctx, "os.pretty_name", error_pretty->message);
	json_builder_end_object(builder);
	return json_builder_get_root(builder);
}
