/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <json-glib/json-glib.h>

G_BEGIN_DECLS

/*
 * Typed accessors: the only way guestbench reads JSON that came from outside.
 * Each checks the node's type before touching it (json-glib's own getters emit
 * criticals on a wrong type) and fails with GB_ERROR_INVALID_ARGUMENT and a
 * message in qemu-ga's words:
 *   "Parameter 'NAME' is missing"
 *   "Invalid parameter type for 'NAME', expected: integer"
 *   "Parameter 'NAME' is out of range: VALUE (allowed MIN..MAX)"
 *   "Parameter 'NAME' is unexpected"
 *
 * With GB_JSON_OPTIONAL, an absent member (or one whose value is null) is not
 * an error: the function returns TRUE and leaves *out untouched, so callers
 * set the default first. obj may be NULL (treated as an empty object).
 */
typedef enum {
	GB_JSON_REQUIRED = 0,
	GB_JSON_OPTIONAL = 1 << 0,
} GbJsonFlags;

gboolean gb_json_has(JsonObject *obj, const char *member); /* present and not null */

gboolean gb_json_get_int(JsonObject *obj, const char *member, GbJsonFlags flags, gint64 min,
                         gint64 max, gint64 *out, GError **error);
/* Accepts integers too; rejects NaN/Inf (json-glib cannot produce them anyway). */
gboolean gb_json_get_double(JsonObject *obj, const char *member, GbJsonFlags flags, double min,
                            double max, double *out, GError **error);
gboolean gb_json_get_bool(JsonObject *obj, const char *member, GbJsonFlags flags, gboolean *out,
                          GError **error);
/* *out is borrowed from obj. Strings must be valid UTF-8 (json-glib guarantees it). */
gboolean gb_json_get_string(JsonObject *obj, const char *member, GbJsonFlags flags,
                            const char **out, GError **error);
/* A new GArray of gint64, each element within min..max. */
gboolean gb_json_get_int_array(JsonObject *obj, const char *member, GbJsonFlags flags, gint64 min,
                               gint64 max, GArray **out, GError **error);
/* A new NULL-terminated string vector. */
gboolean gb_json_get_strv(JsonObject *obj, const char *member, GbJsonFlags flags, char ***out,
                          GError **error);
/* *out is borrowed from obj. */
gboolean gb_json_get_object(JsonObject *obj, const char *member, GbJsonFlags flags,
                            JsonObject **out, GError **error);
gboolean gb_json_get_array(JsonObject *obj, const char *member, GbJsonFlags flags, JsonArray **out,
                           GError **error);
/* Fails naming the first member of obj that is not in the NULL-terminated allowed list. */
gboolean gb_json_check_members(JsonObject *obj, const char *const *allowed, GError **error);

/* The same checks for array elements and bare nodes (name is used in messages). */
gboolean gb_json_node_get_int(JsonNode *node, const char *name, gint64 min, gint64 max, gint64 *out,
                              GError **error);
gboolean gb_json_node_get_double(JsonNode *node, const char *name, double *out, GError **error);
gboolean gb_json_node_get_string(JsonNode *node, const char *name, const char **out,
                                 GError **error);
gboolean gb_json_node_get_object(JsonNode *node, const char *name, JsonObject **out,
                                 GError **error);

/*
 * Parses one complete message (as cut out by GbFramer) with json-glib.
 * Returns the root node (owned) or NULL with GB_ERROR_PARSE
 * ("JSON parse error, ..."). Does not check depth: the framer did.
 * (Only a backstop: json-glib recurses without limit and overflows the stack
 * near 100000 levels, so nesting beyond GB_JSON_PARSE_MAX_DEPTH is refused.)
 * Stricter than json-glib: duplicate keys, non-JSON numbers (hex, leading
 * zeros, 1e400), comments, single quotes and trailing data are parse errors;
 * integers beyond gint64 become doubles, as in qemu-ga.
 */
#define GB_JSON_PARSE_MAX_DEPTH 1024
JsonNode *gb_json_parse(const char *data, gsize len, GError **error);
/*
 * The one JSON writer: compact on one line, or pretty (indent 2); no trailing
 * newline. Unlike json-glib's generator alone, the text is always JSON (no
 * "1e+308.0") and holds no character a terminal obeys (C1 controls, DEL and
 * bidi controls are written as \uXXXX escapes).
 */
char *gb_json_to_string(JsonNode *node, gsize *len);
char *gb_json_to_string_pretty(JsonNode *node, gsize *len);
/*
 * What node costs as a reply, without writing it: about the bytes of its
 * compact JSON text (strings counted unescaped) and, added to *values, its
 * values as GbFramer counts them (every object, array and scalar).
 */
gsize gb_json_measure(JsonNode *node, gsize *values);

G_END_DECLS
