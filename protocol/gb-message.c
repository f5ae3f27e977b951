/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"

#include <string.h>

#include "gb-error.h"
#include "gb-json.h"
#include "gb-message.h"

/* A remote error text longer than this is cut (a reply is not a document). */
#define GB_REPLY_DESC_MAX 4096
/* Member names from the wire are cut to this many characters in messages. */
#define GB_MESSAGE_NAME_MAX 64

void gb_request_free(GbRequest *req)
{
	if (req == NULL)
		return;
	g_free(req->execute);
	if (req->arguments != NULL)
		json_object_unref(req->arguments);
	if (req->id != NULL)
		json_node_unref(req->id);
	g_free(req);
}

static char *gb_message_short_name(const char *name)
{
	if (g_utf8_strlen(name, GB_MESSAGE_NAME_MAX * 4 + 1) <= GB_MESSAGE_NAME_MAX)
		return g_strdup(name);
	return g_strdup_printf(
	    "%.*s...", (int)(g_utf8_offset_to_pointer(name, GB_MESSAGE_NAME_MAX) - name), name);
}

/* Member by member in the order sent, then the missing execute, as qemu-ga's
 * qmp_dispatch_check_obj() does. */
static gboolean gb_request_check_members(JsonObject *obj, GbRequest *req, GError **error)
{
	g_autoptr(GList) members = json_object_get_members(obj);

	for (GList *l = members; l != NULL; l = l->next) {
		const char *name = l->data;
		JsonNode *node = json_object_get_member(obj, name);

		if (g_strcmp0(name, "execute") == 0) {
			if (node == NULL || !JSON_NODE_HOLDS_VALUE(node) ||
			    json_node_get_value_type(node) != G_TYPE_STRING) {
				g_set_error_literal(error, GB_ERROR, GB_ERROR_INVALID_REQUEST,
				                    "QMP input member 'execute' must be a string");
				return FALSE;
			}
			req->execute = g_strdup(json_node_get_string(node));
		} else if (g_strcmp0(name, "arguments") == 0) {
			if (node == NULL || !JSON_NODE_HOLDS_OBJECT(node)) {
				g_set_error_literal(
				    error, GB_ERROR, GB_ERROR_INVALID_REQUEST,
				    "QMP input member 'arguments' must be an object");
				return FALSE;
			}
			req->arguments = json_object_ref(json_node_get_object(node));
		} else if (g_strcmp0(name, "id") != 0) {
			g_autofree char *shown = gb_message_short_name(name);

			g_set_error(error, GB_ERROR, GB_ERROR_INVALID_REQUEST,
			            "QMP input member '%s' is unexpected", shown);
			return FALSE;
		}
	}
	if (req->execute == NULL) {
		g_set_error_literal(error, GB_ERROR, GB_ERROR_INVALID_REQUEST,
		                    "QMP input lacks member 'execute'");
		return FALSE;
	}
	return TRUE;
}

GbRequest *gb_request_parse(const char *msg, gsize len, JsonNode **id_out, GError **error)
{
	g_autoptr(JsonNode) root = NULL;
	g_autoptr(GbRequest) req = g_new0(GbRequest, 1);
	JsonObject *obj;
	JsonNode *id;

	root = gb_json_parse(msg, len, error);
	if (root == NULL)
		return NULL;
	if (!JSON_NODE_HOLDS_OBJECT(root)) {
		g_set_error_literal(error, GB_ERROR, GB_ERROR_INVALID_REQUEST,
		                    "QMP input must be a JSON object");
		return NULL;
	}
	obj = json_node_get_object(root);
	id = json_object_get_member(obj, "id");
	if (id != NULL)
		req->id = json_node_copy(id);
	if (!gb_request_check_members(obj, req, error)) {
		/* qemu-ga copies the id into the error reply too */
		if (id_out != NULL && req->id != NULL)
			*id_out = g_steal_pointer(&req->id);
		return NULL;
	}
	return g_steal_pointer(&req);
}

static GString *gb_message_line(JsonObject *obj)
{
	g_autoptr(JsonNode) root = json_node_init_object(json_node_alloc(), obj);
	gsize len = 0;
	g_autofree char *text = gb_json_to_string(root, &len);
	GString *line = g_string_sized_new(len + 2);

	g_string_append_len(line, text, len);
	g_string_append_c(line, '\n');
	return line;
}

static void gb_message_set_id(JsonObject *obj, JsonNode *id)
{
	if (id != NULL)
		json_object_set_member(obj, "id", json_node_copy(id));
}

GString *gb_request_build(const char *execute, JsonObject *arguments, JsonNode *id)
{
	g_autoptr(JsonObject) obj = json_object_new();

	json_object_set_string_member(obj, "execute", execute);
	if (arguments != NULL)
		json_object_set_member(obj, "arguments",
		                       json_node_init_object(json_node_alloc(), arguments));
	gb_message_set_id(obj, id);
	return gb_message_line(obj);
}

GString *gb_reply_return(JsonNode *value, JsonNode *id)
{
	g_autoptr(JsonObject) obj = json_object_new();

	if (value != NULL)
		json_object_set_member(obj, "return", json_node_copy(value));
	else
		json_object_set_object_member(obj, "return", json_object_new());
	gb_message_set_id(obj, id);
	return gb_message_line(obj);
}

GString *gb_reply_error(const GError *error, JsonNode *id)
{
	g_autoptr(JsonObject) obj = json_object_new();
	g_autoptr(JsonObject) err = json_object_new();
	const char *message = error != NULL ? error->message : "Unknown error";
	/* error texts may quote system data: never put invalid UTF-8 on the wire */
	g_autofree char *desc = g_utf8_make_valid(message != NULL ? message : "", -1);

	json_object_set_string_member(err, "class", gb_error_wire_class(error));
	json_object_set_string_member(err, "desc", desc);
	json_object_set_object_member(obj, "error", g_steal_pointer(&err));
	gb_message_set_id(obj, id);
	return gb_message_line(obj);
}

GString *gb_reply_return_delimited(JsonNode *value, JsonNode *id)
{
	GString *line = gb_reply_return(value, id);

	g_string_prepend_c(line, (char)0xff);
	return line;
}

/* A remote error text, made safe to print: control characters (terminal
 * escapes included) become '?', and the length is capped. */
static char *gb_reply_clean_desc(const char *desc)
{
	g_autoptr(GString) str = g_string_new(NULL);
	const char *p = desc;

	while (*p != '\0' && str->len < GB_REPLY_DESC_MAX) {
		gunichar ch = g_utf8_get_char(p);
		const char *next = g_utf8_next_char(p);

		if (g_unichar_iscntrl(ch))
			g_string_append_c(str, '?');
		else
			g_string_append_len(str, p, next - p);
		p = next;
	}
	if (*p != '\0')
		g_string_append(str, "...");
	return g_string_free(g_steal_pointer(&str), FALSE);
}

static void gb_reply_set_error(JsonObject *err, GError **error)
{
	const char *klass = NULL;
	const char *desc = NULL;
	g_autoptr(GError) error_local = NULL;
	g_autofree char *clean = NULL;

	if (!gb_json_get_string(err, "class", GB_JSON_REQUIRED, &klass, &error_local) ||
	    !gb_json_get_string(err, "desc", GB_JSON_REQUIRED, &desc, &error_local)) {
		g_set_error(error, GB_ERROR, GB_ERROR_INVALID_REQUEST, "Invalid error reply: %s",
		            error_local->message);
		return;
	}
	clean = gb_reply_clean_desc(desc);
	g_set_error_literal(error, GB_ERROR,
	                    g_strcmp0(klass, "CommandNotFound") == 0 ? GB_ERROR_COMMAND_NOT_FOUND
	                                                             : GB_ERROR_REMOTE,
	                    clean);
}

JsonNode *gb_reply_parse(const char *msg, gsize len, JsonNode **id_out, GError **error)
{
	g_autoptr(JsonNode) root = NULL;
	JsonObject *obj;
	JsonNode *id;
	JsonNode *ret;
	JsonNode *err;

	root = gb_json_parse(msg, len, error);
	if (root == NULL)
		return NULL;
	if (!JSON_NODE_HOLDS_OBJECT(root)) {
		g_set_error_literal(error, GB_ERROR, GB_ERROR_INVALID_REQUEST,
		                    "Invalid reply: not a JSON object");
		return NULL;
	}
	obj = json_node_get_object(root);
	id = json_object_get_member(obj, "id");
	if (id != NULL && id_out != NULL)
		*id_out = json_node_copy(id);
	ret = json_object_get_member(obj, "return");
	err = json_object_get_member(obj, "error");
	if (ret != NULL && err != NULL) {
		g_set_error_literal(error, GB_ERROR, GB_ERROR_INVALID_REQUEST,
		                    "Invalid reply: both 'return' and 'error'");
		return NULL;
	}
	if (ret != NULL)
		return json_node_copy(ret);
	if (err == NULL) {
		g_set_error_literal(error, GB_ERROR, GB_ERROR_INVALID_REQUEST,
		                    "Invalid reply: neither 'return' nor 'error'");
		return NULL;
	}
	if (!JSON_NODE_HOLDS_OBJECT(err)) {
		g_set_error_literal(error, GB_ERROR, GB_ERROR_INVALID_REQUEST,
		                    "Invalid reply: member 'error' must be an object");
		return NULL;
	}
	gb_reply_set_error(json_node_get_object(err), error);
	return NULL;
}
