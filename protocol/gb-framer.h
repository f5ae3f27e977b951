/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/*
 * Streaming framer: bytes in, complete JSON messages out.
 *
 * A message is an object or array that ends when the {/[ depth returns to 0
 * outside strings (escapes handled), or a top-level scalar (a string, or a run
 * of non-whitespace bytes up to whitespace or a structural character) so that
 * the request decoder can answer it as qemu-ga does ("QMP input must be a JSON
 * object" / "JSON parse error"). Whitespace between messages is skipped.
 *
 * A 0xFF byte, or a raw control byte other than TAB/CR/LF, resets the framer
 * anywhere, also inside an unterminated string. A reset that throws away a
 * partial message reports one GB_ERROR_PARSE; a reset between messages is
 * silent (it is the resync signal of guest-sync-delimited).
 *
 * Over the size, values or depth limit: one GB_ERROR_TOO_LARGE/GB_ERROR_TOO_DEEP, then
 * everything is skipped up to the next reset byte or the end of that message
 * (depth back to 0), whichever comes first. Memory held is bounded by the
 * size limit.
 */
typedef struct _GbFramer GbFramer;

#define GB_FRAMER_DEFAULT_MAX_SIZE (1024 * 1024)
#define GB_FRAMER_DEFAULT_MAX_DEPTH 64

/*
 * Called once per complete message (msg != NULL, len bytes, NUL-terminated,
 * valid only during the call) or once per framing error (msg == NULL, error set).
 * Return FALSE to stop: gb_framer_push() then returns at once, having
 * consumed the bytes up to and including this message.
 */
typedef gboolean (*GbFramerFunc)(const char *msg, gsize len, const GError *error,
                                 gpointer user_data);

/* 0 for either limit means its default. */
GbFramer *gb_framer_new(gsize max_size, guint max_depth);
void gb_framer_free(GbFramer *framer);
/* Forget any partial message (e.g. when a new client attaches). */
void gb_framer_reset(GbFramer *framer);
/* TRUE when bytes of an unfinished message are held. */
gboolean gb_framer_is_partial(const GbFramer *framer);
/* Bytes of the unfinished message held now (0 between messages and while skipping). */
gsize gb_framer_get_buffered(const GbFramer *framer);
/* Bytes of buffer allocated now: never more than max_size + 1 (after a lowered
 * limit, that of the message in progress). */
gsize gb_framer_get_allocated(const GbFramer *framer);
/*
 * Changes the size limit (0: the default) for what is stored from now on: a
 * partial message already over it is skipped from its next byte, with one
 * GB_ERROR_TOO_LARGE. Lets a caller fit the limit to the reply it waits for.
 */
void gb_framer_set_max_size(GbFramer *framer, gsize max_size);
/* The size limit in force. */
gsize gb_framer_get_max_size(const GbFramer *framer);
/*
 * Limits the values of a message (0: no limit, the default): its objects and
 * arrays plus one per comma, what a parser builds a node for. A message over
 * it is one GB_ERROR_TOO_LARGE and skipped as over the size limit. The bytes
 * do not bound a parsed tree well: 1 MiB of "0," is half a million nodes.
 */
void gb_framer_set_max_values(GbFramer *framer, gsize max_values);
/* Feeds len bytes; returns how many were consumed (len unless func returned FALSE). */
gsize gb_framer_push(GbFramer *framer, const guint8 *data, gsize len, GbFramerFunc func,
                     gpointer user_data);

G_DEFINE_AUTOPTR_CLEANUP_FUNC(GbFramer, gb_framer_free)

G_END_DECLS
