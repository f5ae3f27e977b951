/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"

#include "render/report-html.h"

/* Okabe-Ito: tell apart for colour-blind readers, and in greyscale print */
static const char *const cli_report_palette[] = {
	"#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#999933", "#000000",
};

void cli_report_escape(GString *out, const char *text)
{
	g_autofree char *escaped = g_markup_escape_text(text != NULL ? text : "", -1);
	g_string_append(out, escaped);
}

void cli_report_escape_printf(GString *out, const char *format, ...)
{
	va_list args;
	g_autofree char *text = NULL;

	va_start(args, format);
	text = g_strdup_vprintf(format, args);
	va_end(args);
	cli_report_escape(out, text);
}

const char *cli_report_color(guint column)
{
	return cli_report_palette[column % G_N_ELEMENTS(cli_report_palette)];
}
