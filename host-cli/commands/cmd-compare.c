/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"

#include <errno.h>
#include <stdio.h>

#include "guestbench-protocol.h"

#include "commands/cmd-compare.h"
#include "commands/commands.h"
#include "render/report.h"
#include "render/compare-view.h"
#include "render/escape.h"
#include "render/output.h"

/*
 * --by is parsed into this: CliApp has no slot for command options, and the
 * run() that reads it resets it, so a second parse in the same process starts
 * from the default again.
 */
static CliCompareBy cli_compare_by = CLI_COMPARE_BY_DOCUMENT;
/* --label, in the order given (every --label's comma-separated list, one after the other) */
static GPtrArray *cli_compare_labels;

/* Long enough for "kvm64-6.1" or "before", short enough to keep the table narrow. */
#define CLI_COMPARE_LABEL_MAX 16

static gboolean cli_compare_by_cb(const char *option_name, const char *value, gpointer data,
                                  GError **error)
{
	if (g_strcmp0(value, "document") == 0 || g_strcmp0(value, "run") == 0) {
		cli_compare_by = CLI_COMPARE_BY_DOCUMENT;
	} else if (g_strcmp0(value, "guest") == 0) {
		cli_compare_by = CLI_COMPARE_BY_GUEST;
	} else {
		g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
		            "unknown value '%s' for --by (expected document or guest)", value);
		return FALSE;
	}
	return TRUE;
}

static gboolean cli_compare_label_cb(const char *option_name, const char *value, gpointer data,
                                     GError **error)
{
	g_auto(GStrv) parts = g_strsplit(value, ",", -1);

	if (cli_compare_labels == NULL)
		cli_compare_labels = g_ptr_array_new_with_free_func(g_free);
	if (parts[0] == NULL) {
		g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
		            "--label '': an empty label (give one label per column, e.g. --label "
		            "before,after)");
		return FALSE;
	}
	for (guint i = 0; parts[i] != NULL; i++) {
		const char *label = parts[i];
		gboolean printable = g_utf8_validate(label, -1, NULL);
		gboolean blank = TRUE;

		for (const char *p = label; printable && *p != '\0'; p = g_utf8_next_char(p)) {
			gunichar ch = g_utf8_get_char(p);
			printable = g_unichar_isgraph(ch) || ch == ' ';
			blank = blank && ch == ' ';
		}
		if (printable && blank) {
			g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
			            "--label '%s': an empty label (give one label per column, "
			            "e.g. --label before,after)",
			            value);
			return FALSE;
		}
		if (!printable) {
			g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
			            "--label: a label with control or invalid characters");
			return FALSE;
		}
		if (g_utf8_strlen(label, -1) > CLI_COMPARE_LABEL_MAX) {
			g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
			            "--label '%s' is %ld characters long (at most %d)", label,
			            g_utf8_strlen(label, -1), CLI_COMPARE_LABEL_MAX);
			return FALSE;
		}
		for (guint o = 0; o < cli_compare_labels->len; o++) {
			if (g_strcmp0(g_ptr_array_index(cli_compare_labels, o), label) == 0) {
				g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
				            "--label '%s' is given twice: columns need distinct "
				            "labels",
				            label);
				return FALSE;
			}
		}
		g_ptr_array_add(cli_compare_labels, g_strdup(label));
	}
	return TRUE;
}

static const char *const cli_compare_by_words[] = { "document", "guest", NULL };

/* Saved run ids (or paths) for every operand, and --by's values. */
static const CliCompletion cli_compare_completions[] = {
	{ "by", CLI_COMPLETE_WORD, cli_compare_by_words },
	{ NULL, CLI_COMPLETE_RUN, NULL },
	{ NULL },
};

const GOptionEntry cli_compare_entries[] = {
	{ "by", '\0', 0, G_OPTION_ARG_CALLBACK, cli_compare_by_cb,
	  "Columns: document (default, one per file) or guest (the guests of one file)",
	  "document|guest" },
	{ "label", '\0', 0, G_OPTION_ARG_CALLBACK, cli_compare_label_cb,
	  "Column labels, one per column in order (comma-separated or repeated; at most 16 "
	  "characters each)",
	  "A,B,..." },
	{ NULL },
};

static gboolean cli_compare_check_args(CliApp *app, GPtrArray *args, GError **error)
{
	if (args->len == 0) {
		g_set_error(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT,
		            "no result files given for '%s'", app->command->name);
		return FALSE;
	}
	if (cli_compare_by == CLI_COMPARE_BY_GUEST && args->len != 1) {
		g_set_error(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT,
		            "--by guest compares the guests within one document, not %u",
		            args->len);
		return FALSE;
	}
	if (cli_compare_by == CLI_COMPARE_BY_DOCUMENT && args->len < 2) {
		/* one document alone: its guests are the only columns there are */
		cli_compare_by = CLI_COMPARE_BY_GUEST;
	}
	return TRUE;
}

gboolean cli_compare_prepare(CliApp *app, GPtrArray *args, GError **error)
{
	if (app->opts.format == CLI_FORMAT_HTML) {
		g_set_error_literal(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT,
		                    "compare writes table, json or csv; for HTML use 'report'");
		return FALSE;
	}
	return cli_compare_check_args(app, args, error);
}

gboolean cli_report_prepare(CliApp *app, GPtrArray *args, GError **error)
{
	return cli_compare_check_args(app, args, error);
}

/* The document id for column headers: "kvm64" for kvm64.json or a saved run's id. */
static char *cli_compare_doc_label(const char *path)
{
	g_autofree char *base = g_path_get_basename(path);

	if (g_str_has_suffix(base, ".json") && strlen(base) > 5)
		base[strlen(base) - 5] = '\0';
	return g_steal_pointer(&base);
}

static CliComparison *cli_compare_load(CliApp *app, GError **error)
{
	g_autoptr(CliComparison) cmp = cli_comparison_new(cli_compare_by);

	for (guint i = 0; i < app->args->len; i++) {
		const char *arg = g_ptr_array_index(app->args, i);
		g_autofree char *path = cli_compare_resolve(arg, NULL, error);
		g_autofree char *label = NULL;
		guint first = cmp->columns->len;

		if (path == NULL)
			return NULL;
		label = cli_compare_doc_label(path);
		if (!cli_comparison_add_file(cmp, path, label, error))
			return NULL;
		for (guint c = first; c < cmp->columns->len; c++) {
			CliCompareColumn *col = g_ptr_array_index(cmp->columns, c);
			col->given = g_strdup(arg);
		}
	}
	if (cli_compare_labels != NULL) {
		if (cli_compare_labels->len != cmp->columns->len) {
			g_set_error(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT,
			            "--label gives %u label%s for %u column%s",
			            cli_compare_labels->len,
			            cli_compare_labels->len == 1 ? "" : "s", cmp->columns->len,
			            cmp->columns->len == 1 ? "" : "s");
			return NULL;
		}
		for (guint c = 0; c < cmp->columns->len; c++) {
			CliCompareColumn *col = g_ptr_array_index(cmp->columns, c);
			g_free(col->label);
			col->label = g_strdup(g_ptr_array_index(cli_compare_labels, c));
		}
	}
	/* the same file twice, or two docs with equal names: keep the columns apart */
	for (guint c = 1; c < cmp->columns->len; c++) {
		CliCompareColumn *col = g_ptr_array_index(cmp->columns, c);
		for (guint p = 0; p < c; p++) {
			CliCompareColumn *prev = g_ptr_array_index(cmp->columns, p);
			if (g_strcmp0(prev->label, col->label) == 0) {
				char *label = g_strdup_printf("%s#%u", col->label, c + 1);
				g_free(col->label);
				col->label = label;
				break;
			}
		}
	}
	if (!cli_comparison_compute(cmp, error))
		return NULL;
	return g_steal_pointer(&cmp);
}

static GString *cli_compare_render(CliApp *app, CliComparison *cmp)
{
	switch (app->opts.format) {
	case CLI_FORMAT_JSON: {
		g_autoptr(JsonNode) root = cli_comparison_to_json(cmp);

		return cli_output_json_document(root);
	}
	case CLI_FORMAT_CSV:
		return cli_comparison_render_csv(cmp);
	case CLI_FORMAT_HTML:
		return cli_report_render_html(cmp);
	case CLI_FORMAT_TABLE:
	case CLI_FORMAT_PROM:
	default:
		return cli_comparison_render_text(cmp);
	}
}

int cli_compare_run(CliApp *app, GError **error)
{
	g_autoptr(CliComparison) cmp = cli_compare_load(app, error);
	g_autoptr(GString) doc = NULL;

	cli_compare_by = CLI_COMPARE_BY_DOCUMENT;
	g_clear_pointer(&cli_compare_labels, g_ptr_array_unref);
	if (cmp == NULL)
		return CLI_EXIT_USAGE;
	/* CSV has no place for them: the table and JSON carry them */
	if (app->opts.format == CLI_FORMAT_CSV) {
		g_autoptr(GPtrArray) warnings = cli_comparison_warnings(cmp, NULL);

		for (guint w = 0; w < warnings->len; w++) {
			g_autofree char *text = cli_escape_terminal(g_ptr_array_index(warnings, w));
			g_printerr("guestbench: warning: %s\n", text);
		}
	}
	doc = cli_compare_render(app, cmp);
	if (!cli_app_write_doc(app, doc, error))
		return CLI_EXIT_USAGE;
	return CLI_EXIT_OK;
}

int cli_report_run(CliApp *app, GError **error)
{
	return cli_compare_run(app, error);
}

const CliCommand cli_cmd_compare = {
	.name = "compare",
	.parameter_string = "compare FILE FILE... | compare --by guest FILE",
	.summary = "Saved bench results side by side: ratios, noise, geometric mean",
	.description = CLI_COMPARE_DESCRIPTION,
	.entries = cli_compare_entries,
	.prepare = cli_compare_prepare,
	.formats = CLI_FORMAT_BIT(CLI_FORMAT_TABLE) | CLI_FORMAT_BIT(CLI_FORMAT_JSON) |
	           CLI_FORMAT_BIT(CLI_FORMAT_CSV),
	.completions = cli_compare_completions,
	.run = cli_compare_run,
};

const CliCommand cli_cmd_report = {
	.name = "report",
	.parameter_string = "report FILE... [-o FILE]",
	.summary = "Saved bench results as one HTML page with charts and facts",
	.description = CLI_REPORT_DESCRIPTION,
	.entries = cli_compare_entries,
	.prepare = cli_report_prepare,
	/* HTML is all report writes: it needs no --format html */
	.formats = CLI_FORMAT_BIT(CLI_FORMAT_HTML),
	.default_format = CLI_FORMAT_HTML,
	.completions = cli_compare_completions,
	.run = cli_report_run,
};
