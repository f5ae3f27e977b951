/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"

#include <math.h>
#include <string.h>

#include "gb-error.h"
#include "gb-json.h"

/* Names taken from the wire are cut to this many characters in messages. */
#define GB_JSON_NAME_MAX 64

static gboolean gb_json_node_is_value(JsonNode *node, GType type)
{
	return node != NULL && JSON_NODE_HOLDS_VALUE(node) &&
	       json_node_get_value_type(node) == type;
}

static gboolean gb_json_type_error(const char *name, const char *expected, GError **error)
{
	g_set_error(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT,
	            "Invalid parameter type for '%s', expected: %s", name, expected);
	return FALSE;
}

static gboolean gb_json_missing_error(const char *name, GError **error)
{
	g_set_error(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT, "Parameter '%s' is missing", name);
	return FALSE;
}

/* A wire-supplied name, shortened so that an error reply stays small. */
static char *gb_json_short_name(const char *name)
{
	if (!g_utf8_validate(name, -1, NULL))
		return g_strdup("(invalid UTF-8)");
	if (g_utf8_strlen(name, GB_JSON_NAME_MAX * 4 + 1) <= GB_JSON_NAME_MAX)
		return g_strdup(name);
	return g_strdup_printf(
	    "%.*s...", (int)(g_utf8_offset_to_pointer(name, GB_JSON_NAME_MAX) - name), name);
}

/*
 * Looks a member up. Returns FALSE on error; sets *node NULL (and returns
 * TRUE) when the member is absent or null and that is allowed.
 */
static gboolean gb_json_lookup(JsonObject *obj, const char *member, GbJsonFlags flags,
                               JsonNode **node, GError **error)
{
	JsonNode *tmp = obj != NULL ? json_object_get_member(obj, member) : NULL;
	gboolean absent = tmp == NULL || JSON_NODE_HOLDS_NULL(tmp);

	*node = NULL;
	if (absent && (flags & GB_JSON_OPTIONAL))
		return TRUE;
	if (tmp == NULL)
		return gb_json_missing_error(member, error);
	/* a null for a required member goes on to the type check, which fails
	 * with "expected: TYPE", as in qemu-ga */
	*node = tmp;
	return TRUE;
}

gboolean gb_json_has(JsonObject *obj, const char *member)
{
	JsonNode *node;

	if (obj == NULL || member == NULL)
		return FALSE;
	node = json_object_get_member(obj, member);
	return node != NULL && !JSON_NODE_HOLDS_NULL(node);
}

gboolean gb_json_node_get_int(JsonNode *node, const char *name, gint64 min, gint64 max, gint64 *out,
                              GError **error)
{
	gint64 val;

	if (node == NULL)
		return gb_json_missing_error(name, error);
	/* a double is a type error even when integral, as in qemu-ga */
	if (!gb_json_node_is_value(node, G_TYPE_INT64))
		return gb_json_type_error(name, "integer", error);
	val = json_node_get_int(node);
	if (val < min || val > max) {
		g_set_error(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT,
		            "Parameter '%s' is out of range: %" G_GINT64_FORMAT
		            " (allowed %" G_GINT64_FORMAT "..%" G_GINT64_FORMAT ")",
		            name, val, min, max);
		return FALSE;
	}
	*out = val;
	return TRUE;
}

static gboolean gb_json_node_get_double_range(JsonNode *node, const char *name, double min,
                                              double max, double *out, GError **error)
{
	double val;

	if (node == NULL)
		return gb_json_missing_error(name, error);
	if (gb_json_node_is_value(node, G_TYPE_INT64))
		val = (double)json_node_get_int(node);
	else if (gb_json_node_is_value(node, G_TYPE_DOUBLE))
		val = json_node_get_double(node);
	else
		return gb_json_type_error(name, "number", error);
	if (!isfinite(val))
		return gb_json_type_error(name, "number", error);
	if (val < min || val > max) {
		g_set_error(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT,
		            "Parameter '%s' is out of range: %g (allowed %g..%g)", name, val, min,
		            max);
		return FALSE;
	}
	*out = val;
	return TRUE;
}

gboolean gb_json_node_get_double(JsonNode *node, const char *name, double *out, GError **error)
{
	return gb_json_node_get_double_range(node, name, -G_MAXDOUBLE, G_MAXDOUBLE, out, error);
}

gboolean gb_json_node_get_string(JsonNode *node, const char *name, const char **out, GError **error)
{
	const char *val;

	if (node == NULL)
		return gb_json_missing_error(name, error);
	if (!gb_json_node_is_value(node, G_TYPE_STRING))
		return gb_json_type_error(name, "string", error);
	val = json_node_get_string(node);
	/* nodes built in-process (not parsed) carry no UTF-8 guarantee */
	if (val == NULL || !g_utf8_validate(val, -1, NULL)) {
		g_set_error(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT,
		            "Parameter '%s' is not valid UTF-8", name);
		return FALSE;
	}
	*out = val;
	return TRUE;
}

gboolean gb_json_node_get_object(JsonNode *node, const char *name, JsonObject **out, GError **error)
{
	if (node == NULL)
		return gb_json_missing_error(name, error);
	if (!JSON_NODE_HOLDS_OBJECT(node))
		return gb_json_type_error(name, "object", error);
	*out = json_node_get_object(node);
	return TRUE;
}

static gboolean gb_json_node_get_array(JsonNode *node, const char *name, JsonArray **out,
                                       GError **error)
{
	if (node == NULL)
		return gb_json_missing_error(name, error);
	if (!JSON_NODE_HOLDS_ARRAY(node))
		return gb_json_type_error(name, "array", error);
	*out = json_node_get_array(node);
	return TRUE;
}

gboolean gb_json_get_int(JsonObject *obj, const char *member, GbJsonFlags flags, gint64 min,
                         gint64 max, gint64 *out, GError **error)
{
	JsonNode *node = NULL;

	if (!gb_json_lookup(obj, member, flags, &node, error))
		return FALSE;
	if (node == NULL)
		return TRUE;
	return gb_json_node_get_int(node, member, min, max, out, error);
}

gboolean gb_json_get_double(JsonObject *obj, const char *member, GbJsonFlags flags, double min,
                            double max, double *out, GError **error)
{
	JsonNode *node = NULL;

	if (!gb_json_lookup(obj, member, flags, &node, error))
		return FALSE;
	if (node == NULL)
		return TRUE;
	return gb_json_node_get_double_range(node, member, min, max, out, error);
}

gboolean gb_json_get_bool(JsonObject *obj, const char *member, GbJsonFlags flags, gboolean *out,
                          GError **error)
{
	JsonNode *node = NULL;

	if (!gb_json_lookup(obj, member, flags, &node, error))
		return FALSE;
	if (node == NULL)
		return TRUE;
	if (!gb_json_node_is_value(node, G_TYPE_BOOLEAN))
		return gb_json_type_error(member, "boolean", error);
	*out = json_node_get_boolean(node);
	return TRUE;
}

gboolean gb_json_get_string(JsonObject *obj, const char *member, GbJsonFlags flags,
                            const char **out, GError **error)
{
	JsonNode *node = NULL;

	if (!gb_json_lookup(obj, member, flags, &node, error))
		return FALSE;
	if (node == NULL)
		return TRUE;
	return gb_json_node_get_string(node, member, out, error);
}

gboolean gb_json_get_object(JsonObject *obj, const char *member, GbJsonFlags flags,
                            JsonObject **out, GError **error)
{
	JsonNode *node = NULL;

	if (!gb_json_lookup(obj, member, flags, &node, error))
		return FALSE;
	if (node == NULL)
		return TRUE;
	return gb_json_node_get_object(node, member, out, error);
}

gboolean gb_json_get_array(JsonObject *obj, const char *member, GbJsonFlags flags, JsonArray **out,
                           GError **error)
{
	JsonNode *node = NULL;

	if (!gb_json_lookup(obj, member, flags, &node, error))
		return FALSE;
	if (node == NULL)
		return TRUE;
	return gb_json_node_get_array(node, member, out, error);
}

gboolean gb_json_get_int_array(JsonObject *obj, const char *member, GbJsonFlags flags, gint64 min,
                               gint64 max, GArray **out, GError **error)
{
	JsonArray *arr = NULL;
	g_autoptr(GArray) vals = NULL;
	guint n;

	if (!gb_json_get_array(obj, member, flags, &arr, error))
		return FALSE;
	if (arr == NULL)
		return TRUE;
	n = json_array_get_length(arr);
	vals = g_array_sized_new(FALSE, FALSE, sizeof(gint64), n);
	for (guint i = 0; i < n; i++) {
		JsonNode *node = json_array_get_element(arr, i);
		gint64 val = 0;

		/* the element's name is made for the error only: most arrays are read whole */
		if (!gb_json_node_get_int(node, member, min, max, &val, NULL)) {
			g_autofree char *name = g_strdup_printf("%s[%u]", member, i);

			return gb_json_node_get_int(node, name, min, max, &val, error);
		}
		g_array_append_val(vals, val);
	}
	*out = g_steal_pointer(&vals);
	return TRUE;
}

gboolean gb_json_get_strv(JsonObject *obj, const char *member, GbJsonFlags flags, char ***out,
                          GError **error)
{
	JsonArray *arr = NULL;
	g_autoptr(GPtrArray) vals = NULL;
	guint n;

	if (!gb_json_get_array(obj, member, flags, &arr, error))
		return FALSE;
	if (arr == NULL)
		return TRUE;
	n = json_array_get_length(arr);
	vals = g_ptr_array_new_full(n + 1, g_free);
	for (guint i = 0; i < n; i++) {
		JsonNode *node = json_array_get_element(arr, i);
		const char *val = NULL;

		if (!gb_json_node_get_string(node, member, &val, NULL)) {
			g_autofree char *name = g_strdup_printf("%s[%u]", member, i);

			return gb_json_node_get_string(node, name, &val, error);
		}
		g_ptr_array_add(vals, g_strdup(val));
	}
	g_ptr_array_add(vals, NULL);
	*out = (char **)g_ptr_array_steal(vals, NULL);
	return TRUE;
}

gboolean gb_json_check_members(JsonObject *obj, const char *const *allowed, GError **error)
{
	g_autoptr(GList) members = NULL;

	if (obj == NULL)
		return TRUE;
	/* json-glib keeps insertion order, so the first stray member of the
	 * request is the one named */
	members = json_object_get_members(obj);
	for (GList *l = members; l != NULL; l = l->next) {
		const char *name = l->data;

		if (allowed == NULL || !g_strv_contains(allowed, name)) {
			g_autofree char *shown = gb_json_short_name(name);

			g_set_error(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT,
			            "Parameter '%s' is unexpected", shown);
			return FALSE;
		}
	}
	return TRUE;
}

/* Printable rendering of an offending token for a parse error. */
static char *gb_json_token_for_error(const char *tok, gsize len)
{
	g_autoptr(GString) str = g_string_new(NULL);

	for (gsize i = 0; i < len && i < 32; i++) {
		guchar c = (guchar)tok[i];

		if (c >= 0x20 && c < 0x7f)
			g_string_append_c(str, (char)c);
		else
			g_string_append_printf(str, "\\x%02x", c);
	}
	if (len > 32)
		g_string_append(str, "...");
	return g_string_free(g_steal_pointer(&str), FALSE);
}

/* Strict JSON number grammar: -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)? */
static gboolean gb_json_number_valid(const char *tok, gsize len, gboolean *is_int)
{
	gsize i = 0;

	*is_int = TRUE;
	if (i < len && tok[i] == '-')
		i++;
	if (i >= len || !g_ascii_isdigit(tok[i]))
		return FALSE;
	if (tok[i] == '0') {
		i++;
	} else {
		while (i < len && g_ascii_isdigit(tok[i]))
			i++;
	}
	if (i < len && tok[i] == '.') {
		*is_int = FALSE;
		i++;
		if (i >= len || !g_ascii_isdigit(tok[i]))
			return FALSE;
		while (i < len && g_ascii_isdigit(tok[i]))
			i++;
	}
	if (i < len && (tok[i] == 'e' || tok[i] == 'E')) {
		*is_int = FALSE;
		i++;
		if (i < len && (tok[i] == '+' || tok[i] == '-'))
			i++;
		if (i >= len || !g_ascii_isdigit(tok[i]))
			return FALSE;
		while (i < len && g_ascii_isdigit(tok[i]))
			i++;
	}
	return i == len;
}

/* TRUE when a valid integer token does not fit a gint64. */
static gboolean gb_json_int_overflows(const char *tok, gsize len)
{
	gboolean neg = tok[0] == '-';
	const char *digits = neg ? tok + 1 : tok;
	gsize ndigits = neg ? len - 1 : len;
	const char *limit = neg ? "9223372036854775808" : "9223372036854775807";

	if (ndigits != 19)
		return ndigits > 19;
	return memcmp(digits, limit, 19) > 0;
}

static gboolean gb_json_is_ws(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

static gboolean gb_json_is_structural(char c)
{
	return c == '{' || c == '}' || c == '[' || c == ']' || c == ',' || c == ':' || c == '"';
}

/*
 * One pass over the raw bytes before json-glib sees them, for what json-glib
 * 1.6 gets wrong: it wraps integers beyond gint64 silently (2^64-1 becomes -1),
 * turns 1e400 into inf (and prints it back as the non-JSON "inf.0"), accepts
 * hex numbers, comments and single quotes, ignores a second object after the
 * first, and recurses without limit (a stack overflow near 100000 levels).
 * Integers beyond gint64 are rewritten as doubles, as qemu-ga treats them
 * ("expected: integer"). Returns the text to parse: data itself or *rewritten.
 */
/* The value of 4 hex digits at p, or G_MAXUINT when there are not 4. */
static guint gb_json_hex4(const char *p, gsize avail)
{
	guint v = 0;

	if (avail < 4)
		return G_MAXUINT;
	for (guint k = 0; k < 4; k++) {
		if (!g_ascii_isxdigit(p[k]))
			return G_MAXUINT;
		v = v * 16 + (guint)g_ascii_xdigit_value(p[k]);
	}
	return v;
}

/*
 * members: one count per object, in the order the objects open in the text,
 * of the members written in it (its ':'), for gb_json_check_counts().
 */
static const char *gb_json_prescan(const char *data, gsize len, GString **rewritten, gsize *out_len,
                                   GArray *members, GError **error)
{
	/* per open container: its index in members, or -1 for an array */
	g_autoptr(GArray) open = g_array_new(FALSE, FALSE, sizeof(gint));
	gsize depth = 0;
	gboolean in_string = FALSE;
	gboolean escape = FALSE;
	gboolean done = FALSE; /* one complete top-level value seen */
	gsize copied = 0;

	for (gsize i = 0; i < len; i++) {
		char c = data[i];
		gsize start;
		gboolean is_int = FALSE;

		if (in_string) {
			/* json-glib would cut the string at an escaped NUL, silently:
			 * "a\u0000b" would read as "a". Refused rather than misread. */
			if (escape && c == 'u' && len - i > 4 &&
			    memcmp(data + i + 1, "0000", 4) == 0) {
				g_set_error_literal(error, GB_ERROR, GB_ERROR_PARSE,
				                    "JSON parse error, \\u0000 is not supported");
				return NULL;
			}
			/* json-glib's scanner also takes C escapes such as "\640" (octal),
			 * which decode to bytes that are not UTF-8 (found by fuzz-reply):
			 * JSON allows only these */
			if (escape && strchr("\"\\/bfnrtu", c) == NULL) {
				g_set_error(error, GB_ERROR, GB_ERROR_PARSE,
				            "JSON parse error, invalid escape '\\%c' in a string",
				            g_ascii_isprint(c) ? c : '?');
				return NULL;
			}
			/* json-glib turns a lone surrogate into bytes that are not UTF-8
			 * (found by test-hostile): only a high+low pair is a character */
			if (escape && c == 'u') {
				guint hi = gb_json_hex4(data + i + 1, len - i - 1);

				/* json-glib reads "\u20" followed by other bytes as
				 * U+2000 plus those bytes' own pieces, which is not
				 * UTF-8 (found by fuzz-request): JSON wants four digits */
				if (hi == G_MAXUINT) {
					g_set_error_literal(error, GB_ERROR, GB_ERROR_PARSE,
					                    "JSON parse error, \\u escape without "
					                    "four hex digits in a string");
					return NULL;
				}
				if (hi >= 0xd800 && hi <= 0xdbff && len - i > 10 &&
				    data[i + 5] == '\\' && data[i + 6] == 'u') {
					guint lo = gb_json_hex4(data + i + 7, len - i - 7);
					if (lo >= 0xdc00 && lo <= 0xdfff) {
						i += 10;
						escape = FALSE;
						continue;
					}
				}
				if (hi >= 0xd800 && hi <= 0xdfff) {
					g_set_error_literal(
					    error, GB_ERROR, GB_ERROR_PARSE,
					    "JSON parse error, lone UTF-16 surrogate "
					    "in a string");
					return NULL;
				}
			}
			if (escape)
				escape = FALSE;
			else if (c == '\\')
				escape = TRUE;
			else if (c == '"') {
				in_string = FALSE;
				if (depth == 0)
					done = TRUE;
			}
			continue;
		}
		if (gb_json_is_ws(c))
			continue;
		if (done) {
			g_set_error_literal(
			    error, GB_ERROR, GB_ERROR_PARSE,
			    "JSON parse error, unexpected data after the JSON value");
			return NULL;
		}
		if (c == '"') {
			in_string = TRUE;
			continue;
		}
		if (c == '{' || c == '[') {
			gint index = c == '{' ? (gint)members->len : -1;

			if (++depth > GB_JSON_PARSE_MAX_DEPTH) {
				g_set_error(error, GB_ERROR, GB_ERROR_PARSE,
				            "JSON parse error, nesting exceeds %u levels",
				            (guint)GB_JSON_PARSE_MAX_DEPTH);
				return NULL;
			}
			if (c == '{')
				g_array_set_size(members, members->len + 1);
			g_array_set_size(open, depth);
			g_array_index(open, gint, depth - 1) = index;
			continue;
		}
		if (c == '}' || c == ']') {
			/* a stray closer is json-glib's to report */
			if (depth > 0 && --depth == 0)
				done = TRUE;
			continue;
		}
		if (c == ':' && depth > 0 && g_array_index(open, gint, depth - 1) >= 0)
			g_array_index(members, guint, g_array_index(open, gint, depth - 1))++;
		if (c == ',' || c == ':')
			continue;

		/* a bare token: literal, number or garbage */
		start = i;
		while (i + 1 < len && !gb_json_is_ws(data[i + 1]) &&
		       !gb_json_is_structural(data[i + 1]))
			i++;
		if (depth == 0)
			done = TRUE;
		if (g_ascii_isalpha(c) || (guchar)c >= 0x80)
			continue; /* true/false/null, or an identifier json-glib rejects */
		if (!gb_json_number_valid(data + start, i + 1 - start, &is_int)) {
			g_autofree char *shown =
			    gb_json_token_for_error(data + start, i + 1 - start);

			g_set_error(error, GB_ERROR, GB_ERROR_PARSE,
			            "JSON parse error, invalid token '%s'", shown);
			return NULL;
		}
		if (!is_int || gb_json_int_overflows(data + start, i + 1 - start)) {
			g_autofree char *tok = g_strndup(data + start, i + 1 - start);

			if (!isfinite(g_ascii_strtod(tok, NULL))) {
				g_autofree char *shown = gb_json_token_for_error(tok, strlen(tok));

				g_set_error(error, GB_ERROR, GB_ERROR_PARSE,
				            "JSON parse error, number out of range '%s'", shown);
				return NULL;
			}
			if (is_int) {
				if (*rewritten == NULL)
					*rewritten = g_string_sized_new(len + 16);
				g_string_append_len(*rewritten, data + copied, i + 1 - copied);
				g_string_append(*rewritten, ".0");
				copied = i + 1;
			}
		}
	}
	if (*rewritten != NULL) {
		g_string_append_len(*rewritten, data + copied, len - copied);
		*out_len = (*rewritten)->len;
		return (*rewritten)->str;
	}
	*out_len = len;
	return data;
}

/*
 * json-glib keeps the last of duplicate keys silently; qemu-ga refuses them.
 * An object holds fewer members than its text wrote exactly when a key was
 * repeated. The objects are visited in the order they open in the text
 * (depth first, members in order): up to the first object with a repeated
 * key, no subtree was dropped, so the counts of members line up with them.
 * (Counting in the text and comparing after is a fraction of the cost of
 * json-glib's object-member signal, emitted for every member.)
 */
static gboolean gb_json_check_counts(JsonNode *node, GArray *members, guint *next)
{
	if (JSON_NODE_HOLDS_OBJECT(node)) {
		JsonObject *obj = json_node_get_object(node);
		JsonObjectIter iter;
		const char *name;
		JsonNode *child;

		if (*next >= members->len ||
		    g_array_index(members, guint, *next) != json_object_get_size(obj))
			return FALSE;
		(*next)++;
		json_object_iter_init_ordered(&iter, obj);
		while (json_object_iter_next_ordered(&iter, &name, &child)) {
			if (!gb_json_check_counts(child, members, next))
				return FALSE;
		}
	} else if (JSON_NODE_HOLDS_ARRAY(node)) {
		JsonArray *array = json_node_get_array(node);

		for (guint i = 0; i < json_array_get_length(array); i++) {
			if (!gb_json_check_counts(json_array_get_element(array, i), members, next))
				return FALSE;
		}
	}
	return TRUE;
}

JsonNode *gb_json_parse(const char *data, gsize len, GError **error)
{
	g_autoptr(JsonParser) parser = NULL;
	g_autoptr(GString) rewritten = NULL;
	g_autoptr(GArray) members = g_array_new(FALSE, TRUE, sizeof(guint));
	g_autoptr(GError) error_local = NULL;
	guint next = 0;
	const char *text;
	gsize text_len = 0;
	JsonNode *root;

	if (data == NULL && len > 0) {
		g_set_error_literal(error, GB_ERROR, GB_ERROR_PARSE, "JSON parse error, no data");
		return NULL;
	}
	if (len > G_MAXSSIZE) {
		g_set_error_literal(error, GB_ERROR, GB_ERROR_PARSE,
		                    "JSON parse error, message too large");
		return NULL;
	}
	text =
	    gb_json_prescan(data != NULL ? data : "", len, &rewritten, &text_len, members, error);
	if (text == NULL)
		return NULL;

	parser = json_parser_new();
	if (!json_parser_load_from_data(parser, text, (gssize)text_len, &error_local)) {
		/* json-glib quotes the offending input, which may be any bytes */
		g_autofree char *msg = g_utf8_make_valid(error_local->message, -1);
		guint64 line = 0, column = 0;
		char *p = NULL;

		/* "<data>:4:0: Parse error: why": say where in plain words, not "<data>" */
		if (g_str_has_prefix(msg, "<data>:") &&
		    (line = g_ascii_strtoull(msg + strlen("<data>:"), &p, 10), *p == ':') &&
		    (column = g_ascii_strtoull(p + 1, &p, 10), g_str_has_prefix(p, ": "))) {
			p += 2;
			if (g_str_has_prefix(p, "Parse error: "))
				p += strlen("Parse error: ");
			g_set_error(error, GB_ERROR, GB_ERROR_PARSE,
			            "JSON parse error, line %" G_GUINT64_FORMAT
			            ", column %" G_GUINT64_FORMAT ": %s",
			            line, column, p);
			return NULL;
		}
		g_set_error(error, GB_ERROR, GB_ERROR_PARSE, "JSON parse error, %s", msg);
		return NULL;
	}
	root = json_parser_steal_root(parser);
	if (root == NULL) {
		g_set_error_literal(error, GB_ERROR, GB_ERROR_PARSE,
		                    "JSON parse error, empty input");
		return NULL;
	}
	if (!gb_json_check_counts(root, members, &next)) {
		json_node_unref(root);
		g_set_error_literal(error, GB_ERROR, GB_ERROR_PARSE,
		                    "JSON parse error, duplicate key");
		return NULL;
	}
	return root;
}

/*
 * json-glib 1.6 prints a double with "%.17g" and appends ".0" when there is
 * no '.', also after an exponent: 1e+20 comes out as "1e+20.0", which is not
 * JSON (found by fuzz-dispatch echoing the id 4E-70). Outside strings, a ".0"
 * right after exponent digits is always that artefact: drop it in place.
 */
static gsize gb_json_fix_exponents(char *text, gsize len)
{
	gboolean in_string = FALSE;
	gsize out = 0;

	for (gsize i = 0; i < len; i++) {
		char c = text[i];

		text[out++] = c;
		if (in_string) {
			if (c == '\\' && i + 1 < len)
				text[out++] = text[++i];
			else if (c == '"')
				in_string = FALSE;
			continue;
		}
		if (c == '"') {
			in_string = TRUE;
			continue;
		}
		if ((c == 'e' || c == 'E') && out >= 2 && g_ascii_isdigit(text[out - 2])) {
			gsize j = i + 1;

			if (j < len && (text[j] == '+' || text[j] == '-'))
				text[out++] = text[j++];
			while (j < len && g_ascii_isdigit(text[j]))
				text[out++] = text[j++];
			if (j + 1 < len && text[j] == '.' && text[j + 1] == '0' &&
			    (j + 2 >= len || !g_ascii_isdigit(text[j + 2])))
				j += 2;
			i = j - 1;
		}
	}
	text[out] = '\0';
	return out;
}

/*
 * Characters that are valid raw in a JSON string but that a terminal obeys or
 * that reorder text around them: DEL, the C1 controls (U+0080..U+009F; U+009B
 * is CSI), the bidi marks, embeddings, overrides and isolates (U+061C,
 * U+200E/F, U+202A..U+202E, U+2066..U+2069) and the line and paragraph
 * separators (U+2028/9, not allowed raw in JavaScript strings). They are written
 * as \uXXXX, which every JSON parser reads back as the same character. json-glib
 * already escapes U+0000..U+001F. These are multi-byte sequences (or DEL) that
 * only occur inside strings, since JSON outside strings is ASCII.
 */
static char *gb_json_escape_invisible(char *text, gsize *len)
{
	const guchar *in = (const guchar *)text;
	GString *out = NULL;
	gsize copied = 0;

	for (gsize i = 0; i < *len;) {
		gunichar c = 0;
		gsize n = 1;

		if (in[i] == 0x7f) {
			c = 0x7f;
		} else if (in[i] == 0xc2 && i + 1 < *len && in[i + 1] >= 0x80 &&
		           in[i + 1] <= 0x9f) {
			c = in[i + 1];
			n = 2;
		} else if (in[i] == 0xd8 && i + 1 < *len && in[i + 1] == 0x9c) {
			c = 0x061c;
			n = 2;
		} else if (in[i] == 0xe2 && i + 2 < *len) {
			gunichar u = ((gunichar)(in[i + 1] & 0x3f) << 6) | (in[i + 2] & 0x3f);

			u |= 0x2000;
			if ((in[i + 1] == 0x80 || in[i + 1] == 0x81) &&
			    ((u >= 0x200e && u <= 0x200f) || (u >= 0x2028 && u <= 0x202e) ||
			     (u >= 0x2066 && u <= 0x2069))) {
				c = u;
				n = 3;
			}
		}
		if (c == 0) {
			i++;
			continue;
		}
		if (out == NULL)
			out = g_string_sized_new(*len + 16);
		g_string_append_len(out, text + copied, i - copied);
		g_string_append_printf(out, "\\u%04x", c);
		i += n;
		copied = i;
	}
	if (out == NULL)
		return text;
	g_string_append_len(out, text + copied, *len - copied);
	g_free(text);
	*len = out->len;
	return g_string_free(out, FALSE);
}

static char *gb_json_write(JsonNode *node, gboolean pretty, gsize *len)
{
	g_autoptr(JsonGenerator) gen = json_generator_new();
	gsize n = 0;
	char *text;

	json_generator_set_pretty(gen, pretty);
	if (pretty)
		json_generator_set_indent(gen, 2);
	json_generator_set_root(gen, node);
	text = json_generator_to_data(gen, &n);
	n = gb_json_fix_exponents(text, n);
	text = gb_json_escape_invisible(text, &n);
	if (len != NULL)
		*len = n;
	return text;
}

char *gb_json_to_string(JsonNode *node, gsize *len)
{
	return gb_json_write(node, FALSE, len);
}

char *gb_json_to_string_pretty(JsonNode *node, gsize *len)
{
	return gb_json_write(node, TRUE, len);
}

static gsize gb_json_measure_digits(guint64 value)
{
	gsize digits = 1;

	while (value >= 10) {
		value /= 10;
		digits++;
	}
	return digits;
}

gsize gb_json_measure(JsonNode *node, gsize *values)
{
	char buf[G_ASCII_DTOSTR_BUF_SIZE];
	gsize bytes = 0;

	if (values != NULL)
		(*values)++;
	switch (node != NULL ? json_node_get_node_type(node) : JSON_NODE_NULL) {
	case JSON_NODE_OBJECT: {
		JsonObjectIter iter;
		const char *name = NULL;
		JsonNode *member = NULL;

		bytes = 2; /* {} */
		json_object_iter_init(&iter, json_node_get_object(node));
		while (json_object_iter_next(&iter, &name, &member))
			bytes += strlen(name) + 4 + gb_json_measure(member, values); /* "": and , */
		return bytes;
	}
	case JSON_NODE_ARRAY: {
		JsonArray *array = json_node_get_array(node);
		guint n = json_array_get_length(array);

		bytes = 2; /* [] */
		for (guint i = 0; i < n; i++)
			bytes += 1 + gb_json_measure(json_array_get_element(array, i), values);
		return bytes;
	}
	case JSON_NODE_VALUE:
		switch (json_node_get_value_type(node)) {
		case G_TYPE_INT64: {
			gint64 v = json_node_get_int(node);

			return v < 0 ? 1 + gb_json_measure_digits(-(guint64)v)
			             : gb_json_measure_digits((guint64)v);
		}
		case G_TYPE_DOUBLE:
			return strlen(g_ascii_dtostr(buf, sizeof(buf), json_node_get_double(node)));
		case G_TYPE_BOOLEAN:
			return json_node_get_boolean(node) ? 4 : 5;
		case G_TYPE_STRING:
			return strlen(json_node_get_string(node)) + 2;
		default:
			return 4;
		}
	case JSON_NODE_NULL:
	default:
		return 4;
	}
}
