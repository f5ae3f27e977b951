/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"

#include <math.h>
#include <string.h>

#include "render/escape.h"
#include "render/prom.h"

char *cli_prom_escape_label(const char *value)
{
	/* controls, bidi marks and invalid UTF-8 first become visible text (\x1b,
	 * \u202e, as on a terminal: the file is also read by people, with cat) */
	g_autofree char *shown = cli_escape_terminal(value != NULL ? value : "");
	GString *out = g_string_sized_new(strlen(shown) + 2);

	for (const char *p = shown; *p != '\0'; p++) {
		if (*p == '\\')
			g_string_append(out, "\\\\");
		else if (*p == '"')
			g_string_append(out, "\\\"");
		else
			g_string_append_c(out, *p);
	}
	return g_string_free(out, FALSE);
}

static gboolean cli_prom_is_name(const char *name, gboolean colon)
{
	if (name == NULL || name[0] == '\0' || g_ascii_isdigit(name[0]))
		return FALSE;
	for (const char *p = name; *p != '\0'; p++) {
		if (!g_ascii_isalnum(*p) && *p != '_' && !(colon && *p == ':'))
			return FALSE;
	}
	return TRUE;
}

gboolean cli_prom_is_metric_name(const char *name)
{
	return cli_prom_is_name(name, TRUE);
}

gboolean cli_prom_is_label_name(const char *name)
{
	return cli_prom_is_name(name, FALSE) && !g_str_has_prefix(name, "__");
}

void cli_prom_family(GString *out, const char *name, const char *type, const char *help)
{
	g_string_append_printf(out, "# HELP %s ", name);
	/* HELP text escapes only backslash and newline (quotes stay as they are) */
	for (const char *p = help; p != NULL && *p != '\0'; p++) {
		if (*p == '\\')
			g_string_append(out, "\\\\");
		else if (*p == '\n')
			g_string_append(out, "\\n");
		else
			g_string_append_c(out, *p);
	}
	g_string_append_printf(out, "\n# TYPE %s %s\n", name, type);
}

static void cli_prom_append_value(GString *out, double value)
{
	char buf[G_ASCII_DTOSTR_BUF_SIZE];

	if (isnan(value))
		g_string_append(out, "NaN");
	else if (isinf(value))
		g_string_append(out, value > 0 ? "+Inf" : "-Inf");
	else
		g_string_append(out, g_ascii_dtostr(buf, sizeof(buf), value));
}

void cli_prom_samplev(GString *out, const char *name, const char *const *labels, double value)
{
	g_string_append(out, name);
	if (labels != NULL && labels[0] != NULL) {
		g_string_append_c(out, '{');
		for (guint i = 0; labels[i] != NULL; i += 2) {
			g_autofree char *esc = cli_prom_escape_label(labels[i + 1]);
			g_string_append_printf(out, "%s%s=\"%s\"", i > 0 ? "," : "", labels[i],
			                       esc);
		}
		g_string_append_c(out, '}');
	}
	g_string_append_c(out, ' ');
	cli_prom_append_value(out, value);
	g_string_append_c(out, '\n');
}

void cli_prom_sample(GString *out, const char *name, double value, ...)
{
	g_autoptr(GPtrArray) labels = g_ptr_array_new();
	va_list ap;

	/* pairs: a NULL label name ends the list, a NULL value is an empty one */
	va_start(ap, value);
	for (const char *key = va_arg(ap, const char *); key != NULL;
	     key = va_arg(ap, const char *)) {
		const char *val = va_arg(ap, const char *);
		g_ptr_array_add(labels, (gpointer)key);
		g_ptr_array_add(labels, (gpointer)(val != NULL ? val : ""));
	}
	va_end(ap);
	g_ptr_array_add(labels, NULL);
	cli_prom_samplev(out, name, (const char *const *)labels->pdata, value);
}

void cli_prom_append_up(GString *out, const CliResults *results)
{
	cli_prom_family(out, "guestbench_up", "gauge",
	                "Whether the guest's agent answered (1) or not (0: error or timeout); "
	                "absent while the guest is busy.");
	for (guint i = 0; i < results->guests->len; i++) {
		const CliResult *guest = g_ptr_array_index(results->guests, i);

		/* not asked: nothing is known of its agent, and it is not down */
		if (guest->status == CLI_GUEST_BUSY)
			continue;
		cli_prom_sample(out, "guestbench_up", guest->status == CLI_GUEST_OK ? 1.0 : 0.0,
		                "guest", guest->name, "target", guest->target, NULL);
	}
	cli_prom_family(out, "guestbench_busy", "gauge",
	                "Whether another guestbench process was using the guest (1: not asked).");
	for (guint i = 0; i < results->guests->len; i++) {
		const CliResult *guest = g_ptr_array_index(results->guests, i);

		cli_prom_sample(out, "guestbench_busy", guest->status == CLI_GUEST_BUSY ? 1.0 : 0.0,
		                "guest", guest->name, "target", guest->target, NULL);
	}
}

void cli_prom_drop_duplicates(GString *doc)
{
	g_autoptr(GHashTable) seen = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
	gsize in = 0;
	gsize out = 0;

	while (in < doc->len) {
		const char *line = doc->str + in;
		const char *nl = memchr(line, '\n', doc->len - in);
		gsize len = nl != NULL ? (gsize)(nl - line) + 1 : doc->len - in;
		gboolean keep = TRUE;

		if (line[0] != '#' && line[0] != '\n') {
			/* the series is everything before the value */
			const char *space = g_strrstr_len(line, nl != NULL ? nl - line : -1, " ");
			g_autofree char *series =
			    g_strndup(line, space != NULL ? (gsize)(space - line) : len);

			keep = g_hash_table_add(seen, g_steal_pointer(&series));
		}
		if (keep) {
			memmove(doc->str + out, line, len);
			out += len;
		}
		in += len;
	}
	g_string_truncate(doc, out);
}
