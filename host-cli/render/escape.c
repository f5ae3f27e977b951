/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"

#include <string.h>

#include "render/escape.h"

/* Characters that change how following text is shown although they print nothing. */
gboolean cli_unichar_is_format_control(gunichar c)
{
	return c == 0x061c || (c >= 0x200e && c <= 0x200f) || (c >= 0x2028 && c <= 0x202e) ||
	       (c >= 0x2066 && c <= 0x2069);
}

void cli_escape_append(GString *out, const char *text)
{
	if (text == NULL)
		return;
	for (const char *p = text; *p != '\0';) {
		gunichar c = g_utf8_get_char_validated(p, -1);

		if (c == (gunichar)-1 || c == (gunichar)-2) {
			g_string_append_printf(out, "\\x%02x", (guint)(guchar)*p);
			p++;
			continue;
		}
		if (c == '\n') {
			g_string_append(out, "\\n");
		} else if (c == '\r') {
			g_string_append(out, "\\r");
		} else if (c == '\t') {
			g_string_append(out, "\\t");
		} else if (c < 0x20 || c == 0x7f) {
			g_string_append_printf(out, "\\x%02x", c);
		} else if ((c >= 0x80 && c < 0xa0) || cli_unichar_is_format_control(c)) {
			/* C1 controls (U+009B is CSI where 8-bit controls are honoured) and
			 * the bidi controls that would reorder the line */
			g_string_append_printf(out, "\\u%04x", c);
		} else {
			g_string_append_len(out, p, g_utf8_next_char(p) - p);
		}
		p = g_utf8_next_char(p);
	}
}

char *cli_escape_terminal(const char *text)
{
	GString *str = g_string_sized_new(text != NULL ? strlen(text) : 0);

	cli_escape_append(str, text);
	return g_string_free(str, FALSE);
}

gsize cli_text_width(const char *text)
{
	gsize width = 0;

	for (const char *p = text; *p != '\0'; p = g_utf8_next_char(p)) {
		gunichar c = g_utf8_get_char(p);
		if (g_unichar_iszerowidth(c))
			continue;
		width += g_unichar_iswide(c) ? 2 : 1;
	}
	return width;
}

char *cli_text_truncate(const char *text, gsize width)
{
	GString *out;
	gsize used = 0;

	if (cli_text_width(text) <= width)
		return g_strdup(text);
	out = g_string_new(NULL);
	/* one column stays free for the ellipsis */
	for (const char *p = text; *p != '\0' && width > 0; p = g_utf8_next_char(p)) {
		gunichar c = g_utf8_get_char(p);
		gsize w = g_unichar_iszerowidth(c) ? 0 : g_unichar_iswide(c) ? 2 : 1;

		if (used + w > width - 1)
			break;
		g_string_append_unichar(out, c);
		used += w;
	}
	if (width > 0)
		g_string_append(out, "\u2026");
	return g_string_free(out, FALSE);
}

char *cli_text_truncate_start(const char *text, gsize width)
{
	const char *start = text + strlen(text);
	gsize used = 0;

	if (cli_text_width(text) <= width)
		return g_strdup(text);
	if (width == 0)
		return g_strdup("");
	/* walk back from the end while the characters fit beside the ellipsis */
	while (start > text) {
		const char *prev = g_utf8_find_prev_char(text, start);
		gunichar c = g_utf8_get_char(prev);
		gsize w = g_unichar_iszerowidth(c) ? 0 : g_unichar_iswide(c) ? 2 : 1;

		if (used + w > width - 1)
			break;
		used += w;
		start = prev;
	}
	return g_strconcat("\u2026", start, NULL);
}

void cli_escape_printerr(const char *prefix, const char *message)
{
	g_autofree char *esc = cli_escape_terminal(message != NULL ? message : "");

	g_printerr("guestbench: %s%s\n", prefix != NULL ? prefix : "", esc);
}
