/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <json-glib/json-glib.h>

G_BEGIN_DECLS

/* A decoded QGA request: {"execute": NAME, "arguments": {...}, "id": ANY}. */
typedef struct {
	char *execute;
	JsonObject *arguments; /* owned reference; NULL when absent */
	JsonNode *id;          /* owned copy; NULL when absent */
} GbRequest;

void gb_request_free(GbRequest *req);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(GbRequest, gb_request_free)

/*
 * Decodes one framed message. On failure returns NULL with
 * GB_ERROR_PARSE or GB_ERROR_INVALID_REQUEST and qemu-ga's exact text:
 *   "QMP input must be a JSON object"
 *   "QMP input lacks member 'execute'"
 *   "QMP input member 'execute' must be a string"
 *   "QMP input member 'arguments' must be an object"
 *   "QMP input member 'NAME' is unexpected"
 * and, when the message was an object with an "id", a copy of it in *id_out
 * so that the error reply can carry it (as qemu-ga does). id_out may be NULL.
 */
GbRequest *gb_request_parse(const char *msg, gsize len, JsonNode **id_out, GError **error);

/* Builds a request line (no 0xFF, trailing "\n"). arguments/id may be NULL; not consumed. */
GString *gb_request_build(const char *execute, JsonObject *arguments, JsonNode *id);

/*
 * Reply builders. Each returns one line ending in "\n": {"return": VALUE} or
 * {"error": {"class": CLASS, "desc": DESC}}, with "id" copied when id != NULL.
 * value and id are not consumed; value NULL means {} (an empty object).
 */
GString *gb_reply_return(JsonNode *value, JsonNode *id);
GString *gb_reply_error(const GError *error, JsonNode *id);
/* guest-sync-delimited: the 0xFF byte, then the return line. */
GString *gb_reply_return_delimited(JsonNode *value, JsonNode *id);

/*
 * Decodes a reply (CLI side). On {"return": V} returns V (owned) and sets
 * *id_out to a copy of the id if any. On {"error": {...}} returns NULL with
 * GB_ERROR_REMOTE (or GB_ERROR_COMMAND_NOT_FOUND for class CommandNotFound)
 * and the remote desc as message, also setting *id_out. Anything else is
 * GB_ERROR_PARSE/GB_ERROR_INVALID_REQUEST naming what is wrong.
 * id_out may be NULL.
 */
JsonNode *gb_reply_parse(const char *msg, gsize len, JsonNode **id_out, GError **error);

G_END_DECLS
