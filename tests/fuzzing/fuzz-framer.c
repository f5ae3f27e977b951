/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The agent's input path: bytes -> framer -> request decoder -> reply.
 * The first byte picks the chunk size, so that splits are fuzzed too.
 */
#include "config.h"

#include <stdlib.h>

#include "fuzz.h"
#include "guestbench-protocol.h"

#define FUZZ_MAX_SIZE 512
#define FUZZ_MAX_DEPTH 8

typedef struct {
	GbFramer *framer;
	guint messages;
} FuzzFramer;

static gboolean fuzz_framer_cb(const char *msg, gsize len, const GError *error, gpointer user_data)
{
	FuzzFramer *ctx = user_data;
	g_autoptr(GError) error_local = NULL;
	g_autoptr(JsonNode) id = NULL;
	g_autoptr(GbRequest) req = NULL;
	g_autoptr(GString) reply = NULL;

	/* the memory bound is the framer's promise: break it loudly */
	if (gb_framer_get_allocated(ctx->framer) > FUZZ_MAX_SIZE + 1)
		abort();
	if (msg == NULL) {
		if (error == NULL || error->domain != GB_ERROR)
			abort();
		reply = gb_reply_error(error, NULL);
		return TRUE;
	}
	if (len == 0 || len > FUZZ_MAX_SIZE || msg[len] != '\0')
		abort();
	ctx->messages++;
	req = gb_request_parse(msg, len, &id, &error_local);
	if (req == NULL) {
		if (error_local == NULL)
			abort();
		reply = gb_reply_error(error_local, id);
	} else {
		reply = gb_reply_return(NULL, req->id);
	}
	/* what we send must read back as a reply */
	{
		g_autoptr(GError) error_reply = NULL;
		g_autoptr(JsonNode) back =
		    gb_reply_parse(reply->str, reply->len, NULL, &error_reply);

		if (back == NULL && error_reply->code != GB_ERROR_REMOTE)
			abort();
	}
	/* an odd message count stops the push, to fuzz the resume path too */
	return ctx->messages % 7 != 3;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	g_autoptr(GbFramer) framer = gb_framer_new(FUZZ_MAX_SIZE, FUZZ_MAX_DEPTH);
	FuzzFramer ctx = { .framer = framer, .messages = 0 };
	gsize chunk;
	gsize off = 1;

	if (size < 1)
		return 0;
	chunk = (data[0] % 64) + 1;
	/* half the inputs also under a values limit, as the CLI's streams are */
	if (data[0] & 0x80)
		gb_framer_set_max_values(framer, (data[0] % 16) + 1);
	while (off < size) {
		gsize n = MIN(chunk, size - off);
		gsize done = gb_framer_push(framer, data + off, n, fuzz_framer_cb, &ctx);

		if (done > n)
			abort();
		off += done;
	}
	if (gb_framer_get_buffered(framer) > FUZZ_MAX_SIZE)
		abort();
	return 0;
}
