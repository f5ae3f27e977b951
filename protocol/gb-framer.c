/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"

#include "gb-error.h"
#include "gb-framer.h"

/* After a message larger than this, the buffer is given back. */
#define GB_FRAMER_KEEP_ALLOC (64 * 1024)
#define GB_FRAMER_MIN_ALLOC 256

typedef enum {
	GB_FRAMER_IDLE,      /* between messages */
	GB_FRAMER_CONTAINER, /* inside an object or array */
	GB_FRAMER_STRING,    /* a top-level string scalar */
	GB_FRAMER_BAREWORD,  /* a top-level run such as 123 or abc */
} GbFramerMode;

struct _GbFramer {
	gsize max_size;
	guint max_depth;
	gsize max_values; /* 0: no limit */
	gsize values;     /* of the message in progress: containers, then one per comma */
	GbFramerMode mode;
	gboolean skipping; /* over a limit: track the message, store nothing */
	gboolean in_string;
	gboolean escape;
	gsize depth;
	guint8 *buf;
	gsize len;
	gsize alloc;
};

void gb_framer_set_max_size(GbFramer *framer, gsize max_size)
{
	g_return_if_fail(framer != NULL);
	/* 0 means "the default"; the cap keeps len + 1 from overflowing */
	framer->max_size = max_size > 0 ? MIN(max_size, G_MAXSIZE / 2) : GB_FRAMER_DEFAULT_MAX_SIZE;
	/* between messages a buffer kept from a larger limit goes at once */
	if (framer->len == 0 && framer->alloc > framer->max_size + 1) {
		g_clear_pointer(&framer->buf, g_free);
		framer->alloc = 0;
	}
}

gsize gb_framer_get_max_size(const GbFramer *framer)
{
	return framer->max_size;
}

void gb_framer_set_max_values(GbFramer *framer, gsize max_values)
{
	g_return_if_fail(framer != NULL);
	framer->max_values = max_values;
}

GbFramer *gb_framer_new(gsize max_size, guint max_depth)
{
	GbFramer *framer = g_new0(GbFramer, 1);

	gb_framer_set_max_size(framer, max_size);
	framer->max_depth = max_depth > 0 ? max_depth : GB_FRAMER_DEFAULT_MAX_DEPTH;
	return framer;
}

void gb_framer_free(GbFramer *framer)
{
	if (framer == NULL)
		return;
	g_free(framer->buf);
	g_free(framer);
}

static void gb_framer_clear(GbFramer *framer)
{
	framer->mode = GB_FRAMER_IDLE;
	framer->skipping = FALSE;
	framer->in_string = FALSE;
	framer->escape = FALSE;
	framer->depth = 0;
	framer->values = 0;
	framer->len = 0;
}

void gb_framer_reset(GbFramer *framer)
{
	gb_framer_clear(framer);
}

gboolean gb_framer_is_partial(const GbFramer *framer)
{
	return framer->len > 0;
}

gsize gb_framer_get_buffered(const GbFramer *framer)
{
	return framer->len;
}

gsize gb_framer_get_allocated(const GbFramer *framer)
{
	return framer->alloc;
}

static gboolean gb_framer_is_reset_byte(guint8 c)
{
	return c == 0xff || (c < 0x20 && c != '\t' && c != '\r' && c != '\n');
}

static gboolean gb_framer_is_ws(guint8 c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

static gboolean gb_framer_is_structural(guint8 c)
{
	return c == '{' || c == '}' || c == '[' || c == ']' || c == ',' || c == ':';
}

static gboolean gb_framer_report(GbFramer *framer, GbFramerFunc func, gpointer user_data, gint code,
                                 const char *message)
{
	g_autoptr(GError) error = g_error_new_literal(GB_ERROR, code, message);

	return func(NULL, 0, error, user_data);
}

/* Goes over a limit: one error, then the rest of the message is skipped. */
static gboolean gb_framer_overflow(GbFramer *framer, GbFramerFunc func, gpointer user_data,
                                   gint code)
{
	g_autofree char *message = NULL;

	if (code == GB_ERROR_TOO_LARGE && framer->max_values > 0 &&
	    framer->values > framer->max_values)
		message = g_strdup_printf("JSON message has more than %" G_GSIZE_FORMAT " values",
		                          framer->max_values);
	else if (code == GB_ERROR_TOO_LARGE)
		message = g_strdup_printf("JSON message exceeds %" G_GSIZE_FORMAT " bytes",
		                          framer->max_size);
	else
		message = g_strdup_printf("JSON nesting exceeds %u levels", framer->max_depth);
	framer->skipping = TRUE;
	framer->len = 0;
	return gb_framer_report(framer, func, user_data, code, message);
}

/* Appends one byte; FALSE when that would go over max_size. */
static gboolean gb_framer_store(GbFramer *framer, guint8 c)
{
	if (framer->skipping)
		return TRUE;
	if (framer->len >= framer->max_size)
		return FALSE;
	/* +1 for the NUL handed to the callback */
	if (framer->len + 1 >= framer->alloc) {
		gsize alloc = MAX(framer->alloc * 2, GB_FRAMER_MIN_ALLOC);

		framer->alloc = MIN(alloc, framer->max_size + 1);
		framer->buf = g_realloc(framer->buf, framer->alloc);
	}
	framer->buf[framer->len++] = c;
	return TRUE;
}

/* The message is complete (or its skip is over): hand it out, go idle. */
static gboolean gb_framer_finish(GbFramer *framer, GbFramerFunc func, gpointer user_data)
{
	gboolean skipped = framer->skipping;
	gsize len = framer->len;
	gboolean ret = TRUE;

	gb_framer_clear(framer);
	if (!skipped && framer->buf != NULL) {
		framer->buf[len] = '\0';
		ret = func((const char *)framer->buf, len, NULL, user_data);
	}
	if (framer->alloc > GB_FRAMER_KEEP_ALLOC && framer->len == 0) {
		g_clear_pointer(&framer->buf, g_free);
		framer->alloc = 0;
	}
	return ret;
}

/* Starts a message with byte c; FALSE if func asked to stop. */
static gboolean gb_framer_start(GbFramer *framer, guint8 c, GbFramerFunc func, gpointer user_data)
{
	if (gb_framer_is_ws(c))
		return TRUE;
	if (c == '{' || c == '[') {
		framer->mode = GB_FRAMER_CONTAINER;
		framer->depth = 1;
		framer->values = 1;
	} else if (c == '"') {
		framer->mode = GB_FRAMER_STRING;
		framer->in_string = TRUE;
	} else if (gb_framer_is_structural(c)) {
		/* a stray } ] , or : is a message of its own, for the parser to refuse */
		gb_framer_store(framer, c);
		return gb_framer_finish(framer, func, user_data);
	} else {
		framer->mode = GB_FRAMER_BAREWORD;
	}
	if (framer->depth > framer->max_depth)
		return gb_framer_overflow(framer, func, user_data, GB_ERROR_TOO_DEEP);
	if (!gb_framer_store(framer, c))
		return gb_framer_overflow(framer, func, user_data, GB_ERROR_TOO_LARGE);
	return TRUE;
}

/* One byte inside an object, array or top-level string. */
static gboolean gb_framer_quoted_or_nested(GbFramer *framer, guint8 c, GbFramerFunc func,
                                           gpointer user_data)
{
	gboolean complete = FALSE;

	if (framer->in_string) {
		if (framer->escape) {
			framer->escape = FALSE;
		} else if (c == '\\') {
			framer->escape = TRUE;
		} else if (c == '"') {
			framer->in_string = FALSE;
			complete = framer->mode == GB_FRAMER_STRING;
		}
	} else if (c == '"') {
		framer->in_string = TRUE;
	} else if (c == '{' || c == '[' || c == ',') {
		if (c != ',')
			framer->depth++;
		if (framer->depth > framer->max_depth && !framer->skipping)
			return gb_framer_overflow(framer, func, user_data, GB_ERROR_TOO_DEEP);
		framer->values++;
		if (framer->max_values > 0 && framer->values > framer->max_values &&
		    !framer->skipping)
			return gb_framer_overflow(framer, func, user_data, GB_ERROR_TOO_LARGE);
	} else if (c == '}' || c == ']') {
		framer->depth--;
		complete = framer->depth == 0;
	}
	if (!gb_framer_store(framer, c)) {
		gboolean ret = gb_framer_overflow(framer, func, user_data, GB_ERROR_TOO_LARGE);

		/* the byte over the limit may also be the last one: nothing to skip */
		if (complete)
			gb_framer_clear(framer);
		return ret;
	}
	if (complete)
		return gb_framer_finish(framer, func, user_data);
	return TRUE;
}

gsize gb_framer_push(GbFramer *framer, const guint8 *data, gsize len, GbFramerFunc func,
                     gpointer user_data)
{
	g_return_val_if_fail(framer != NULL, 0);
	g_return_val_if_fail(func != NULL, 0);
	g_return_val_if_fail(data != NULL || len == 0, 0);

	for (gsize i = 0; i < len; i++) {
		guint8 c = data[i];

		if (gb_framer_is_reset_byte(c)) {
			gboolean lost = framer->len > 0 && !framer->skipping;

			/* a bareword ends at a reset: it is complete, not lost */
			if (framer->mode == GB_FRAMER_BAREWORD && lost) {
				if (!gb_framer_finish(framer, func, user_data))
					return i;
				continue;
			}
			gb_framer_clear(framer);
			if (lost && !gb_framer_report(framer, func, user_data, GB_ERROR_PARSE,
			                              "JSON parse error, message cut short by a "
			                              "0xFF or control byte"))
				return i + 1;
			continue;
		}

		switch (framer->mode) {
		case GB_FRAMER_IDLE:
			if (!gb_framer_start(framer, c, func, user_data))
				return i + 1;
			break;
		case GB_FRAMER_BAREWORD:
			if (gb_framer_is_ws(c) || gb_framer_is_structural(c)) {
				/* the terminator is not part of the word: leave it
				 * unconsumed if func stops us, else start on it */
				if (!gb_framer_finish(framer, func, user_data))
					return i;
				if (!gb_framer_start(framer, c, func, user_data))
					return i + 1;
			} else if (!gb_framer_store(framer, c)) {
				if (!gb_framer_overflow(framer, func, user_data,
				                        GB_ERROR_TOO_LARGE))
					return i + 1;
			}
			break;
		case GB_FRAMER_CONTAINER:
		case GB_FRAMER_STRING:
		default:
			if (!gb_framer_quoted_or_nested(framer, c, func, user_data))
				return i + 1;
			break;
		}
	}
	return len;
}
