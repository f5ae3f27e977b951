/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What an untrusted guest sends the CLI: a byte stream cut by the framer with
 * the CLI's limits, each message through gb_reply_parse() as the session
 * does (a 0xFF-delimited sync reply included), and every returned object
 * through the facts view the CLI prints. The first byte picks the chunk size.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "render/facts-view.h"
#include "render/escape.h"
#include "fuzz.h"
#include "guestbench-protocol.h"

#define FUZZ_REPLY_MAX_SIZE 4096
#define FUZZ_REPLY_MAX_DEPTH 16

typedef struct {
	GbFramer *framer;
	guint replies;
} FuzzReply;

static void fuzz_reply_check_view(JsonObject *obj)
{
	g_autoptr(GString) out = g_string_new(NULL);
	g_autofree char *escaped = NULL;

	cli_facts_render_table(out, "guest", obj, FALSE);
	if (!g_utf8_validate(out->str, (gssize)out->len, NULL))
		abort();
	/* no escape sequence from the guest reaches the terminal */
	if (memchr(out->str, 0x1b, out->len) != NULL)
		abort();
	escaped = cli_escape_terminal(out->str);
	if (escaped == NULL)
		abort();
}

static gboolean fuzz_reply_cb(const char *msg, gsize len, const GError *error, gpointer user_data)
{
	FuzzReply *ctx = user_data;
	g_autoptr(GError) error_local = NULL;
	g_autoptr(JsonNode) id = NULL;
	g_autoptr(JsonNode) ret = NULL;

	if (gb_framer_get_allocated(ctx->framer) > FUZZ_REPLY_MAX_SIZE + 1)
		abort();
	if (msg == NULL) {
		/* the session counts these and carries on (stale bytes after a reconnect) */
		if (error == NULL || error->domain != GB_ERROR)
			abort();
		return TRUE;
	}
	if (len == 0 || msg[len] != '\0')
		abort();
	ctx->replies++;
	ret = gb_reply_parse(msg, len, &id, &error_local);
	if (ret == NULL) {
		if (error_local == NULL || error_local->domain != GB_ERROR)
			abort();
		if (!g_utf8_validate(error_local->message, -1, NULL))
			abort();
		return TRUE;
	}
	if (error_local != NULL)
		abort();
	/* the session matches the sync id as an integer, whatever type it came as */
	if (id != NULL && JSON_NODE_HOLDS_VALUE(id) && json_node_get_value_type(id) == G_TYPE_INT64)
		(void)json_node_get_int(id);
	if (JSON_NODE_HOLDS_OBJECT(ret))
		fuzz_reply_check_view(json_node_get_object(ret));
	return TRUE;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	g_autoptr(GbFramer) framer = gb_framer_new(FUZZ_REPLY_MAX_SIZE, FUZZ_REPLY_MAX_DEPTH);
	FuzzReply ctx = { .framer = framer };
	gsize chunk;
	gsize off = 1;

	if (size < 1)
		return 0;
	chunk = (data[0] % 128) + 1;
	while (off < size) {
		gsize n = MIN(chunk, size - off);
		gsize done = gb_framer_push(framer, data + off, n, fuzz_reply_cb, &ctx);

		if (done != n)
			abort();
		off += done;
	}
	return 0;
}
