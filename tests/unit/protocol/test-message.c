/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"

#include <string.h>

#include "guestbench-protocol.h"

static char *node_text(JsonNode *node)
{
	return node != NULL ? gb_json_to_string(node, NULL) : g_strdup("(none)");
}

static GbRequest *request_parse_str(const char *text, JsonNode **id_out, GError **error)
{
	return gb_request_parse(text, strlen(text), id_out, error);
}

/* A request must fail with this code and text, copying this id (or none). */
static void assert_request_error(const char *text, gint code, const char *message, const char *id)
{
	g_autoptr(GError) error = NULL;
	g_autoptr(JsonNode) id_out = NULL;
	g_autoptr(GbRequest) req = request_parse_str(text, &id_out, &error);
	g_autofree char *id_text = NULL;

	g_assert_null(req);
	g_assert_error(error, GB_ERROR, code);
	if (message != NULL)
		g_assert_cmpstr(error->message, ==, message);
	else
		g_assert_true(g_str_has_prefix(error->message, "JSON parse error, "));
	g_assert_cmpstr(gb_error_wire_class(error), ==, "GenericError");
	id_text = node_text(id_out);
	g_assert_cmpstr(id_text, ==, id != NULL ? id : "(none)");
}

static void test_request_valid(void)
{
	g_autoptr(GError) error = NULL;
	g_autoptr(JsonNode) id_out = NULL;
	g_autoptr(GbRequest) req = NULL;
	g_autofree char *id_text = NULL;
	gint64 val = 0;

	req = request_parse_str("{\"execute\":\"guest-ping\",\"id\":\"abc\"}", &id_out, &error);
	g_assert_no_error(error);
	g_assert_nonnull(req);
	g_assert_cmpstr(req->execute, ==, "guest-ping");
	g_assert_null(req->arguments);
	id_text = node_text(req->id);
	g_assert_cmpstr(id_text, ==, "\"abc\"");
	g_assert_null(id_out); /* only set on failure; req->id has it */
	g_clear_pointer(&req, gb_request_free);

	req = request_parse_str("{\"arguments\":{\"id\":7},\"execute\":\"guest-sync\"}", NULL,
	                        &error);
	g_assert_no_error(error);
	g_assert_cmpstr(req->execute, ==, "guest-sync");
	g_assert_null(req->id);
	g_assert_true(gb_json_get_int(req->arguments, "id", 0, G_MININT64, G_MAXINT64, &val, NULL));
	g_assert_cmpint(val, ==, 7);
	g_clear_pointer(&req, gb_request_free);

	/* any JSON type is a valid id, null included (qemu-ga copies it too) */
	req = request_parse_str("{\"execute\":\"x\",\"id\":{\"a\":[1,null]}}", NULL, &error);
	g_assert_no_error(error);
	g_clear_pointer(&id_text, g_free);
	id_text = node_text(req->id);
	g_assert_cmpstr(id_text, ==, "{\"a\":[1,null]}");
	g_clear_pointer(&req, gb_request_free);
	req = request_parse_str("{\"execute\":\"x\",\"id\":null}", NULL, &error);
	g_assert_no_error(error);
	g_assert_nonnull(req->id);
	g_assert_true(JSON_NODE_HOLDS_NULL(req->id));
}

static void test_request_errors(void)
{
	const gint inv = GB_ERROR_INVALID_REQUEST;

	assert_request_error("[1,2]", inv, "QMP input must be a JSON object", NULL);
	assert_request_error("123", inv, "QMP input must be a JSON object", NULL);
	assert_request_error("\"str\"", inv, "QMP input must be a JSON object", NULL);
	assert_request_error("null", inv, "QMP input must be a JSON object", NULL);
	assert_request_error("true", inv, "QMP input must be a JSON object", NULL);
	assert_request_error("abc", GB_ERROR_PARSE, NULL, NULL);
	assert_request_error("}", GB_ERROR_PARSE, NULL, NULL);
	assert_request_error("]", GB_ERROR_PARSE, NULL, NULL);
	assert_request_error(",", GB_ERROR_PARSE, NULL, NULL);
	assert_request_error(":", GB_ERROR_PARSE, NULL, NULL);
	assert_request_error("{]", GB_ERROR_PARSE, NULL, NULL);
	assert_request_error("{\"execute\":\"a\",\"execute\":\"b\"}", GB_ERROR_PARSE,
	                     "JSON parse error, duplicate key", NULL);
	assert_request_error("{\"foo\":1}", inv, "QMP input member 'foo' is unexpected", NULL);
	assert_request_error("{\"execute\":1}", inv, "QMP input member 'execute' must be a string",
	                     NULL);
	assert_request_error("{\"execute\":null}", inv,
	                     "QMP input member 'execute' must be a string", NULL);
	assert_request_error("{\"execute\":[\"guest-ping\"]}", inv,
	                     "QMP input member 'execute' must be a string", NULL);
	assert_request_error("{\"execute\":\"guest-ping\",\"x\":1,\"id\":5}", inv,
	                     "QMP input member 'x' is unexpected", "5");
	assert_request_error("{\"execute\":\"guest-ping\",\"arguments\":[]}", inv,
	                     "QMP input member 'arguments' must be an object", NULL);
	assert_request_error("{\"execute\":\"guest-ping\",\"arguments\":null,\"id\":\"q\"}", inv,
	                     "QMP input member 'arguments' must be an object", "\"q\"");
	assert_request_error("{}", inv, "QMP input lacks member 'execute'", NULL);
	assert_request_error("{\"id\":[1]}", inv, "QMP input lacks member 'execute'", "[1]");
	assert_request_error("{\"arguments\":{}}", inv, "QMP input lacks member 'execute'", NULL);
	/* members in the order sent: the first bad one is named */
	assert_request_error("{\"x\":1,\"execute\":2}", inv, "QMP input member 'x' is unexpected",
	                     NULL);
	assert_request_error("{\"execute\":2,\"x\":1}", inv,
	                     "QMP input member 'execute' must be a string", NULL);
	assert_request_error("{\"exec-oob\":\"guest-ping\"}", inv,
	                     "QMP input member 'exec-oob' is unexpected", NULL);
	/* the id is copied whatever its type, before the members are judged */
	assert_request_error("{\"id\":{\"deep\":[true]},\"execute\":false}", inv,
	                     "QMP input member 'execute' must be a string", "{\"deep\":[true]}");
	assert_request_error("{\"execute\":\"x\",\"id\":18446744073709551615,\"y\":0}", inv,
	                     "QMP input member 'y' is unexpected", "1.8446744073709552e+19");
}

static void test_request_hostile(void)
{
	g_autoptr(GString) long_name = g_string_new("{\"");
	const char nul[] = "{\"execute\":\"guest\0ping\"}";
	const char bad_utf8[] = "{\"execute\":\"\xff\xfe\"}";

	for (guint i = 0; i < 100000; i++)
		g_string_append_c(long_name, 'n');
	g_string_append(long_name, "\":1}");
	{
		g_autoptr(GError) error = NULL;
		g_autoptr(GbRequest) req =
		    gb_request_parse(long_name->str, long_name->len, NULL, &error);

		g_assert_null(req);
		g_assert_error(error, GB_ERROR, GB_ERROR_INVALID_REQUEST);
		g_assert_cmpuint(strlen(error->message), <, 200);
	}
	{
		g_autoptr(GError) error = NULL;
		g_autoptr(GbRequest) req = gb_request_parse(nul, sizeof(nul) - 1, NULL, &error);

		g_assert_null(req);
		g_assert_error(error, GB_ERROR, GB_ERROR_PARSE);
	}
	{
		g_autoptr(GError) error = NULL;
		g_autoptr(GbRequest) req =
		    gb_request_parse(bad_utf8, sizeof(bad_utf8) - 1, NULL, &error);

		g_assert_null(req);
		g_assert_error(error, GB_ERROR, GB_ERROR_PARSE);
	}
	{
		g_autoptr(GError) error = NULL;
		g_autoptr(GbRequest) req = gb_request_parse("", 0, NULL, &error);

		g_assert_null(req);
		g_assert_error(error, GB_ERROR, GB_ERROR_PARSE);
	}
}

static void test_request_build(void)
{
	g_autoptr(JsonObject) args = json_object_new();
	g_autoptr(JsonNode) id = json_node_init_int(json_node_alloc(), 42);
	g_autoptr(GString) line = NULL;
	g_autoptr(GString) bare = NULL;
	g_autoptr(GbRequest) req = NULL;
	g_autoptr(GError) error = NULL;
	g_autofree char *id_text = NULL;

	json_object_set_int_member(args, "id", 99);
	line = gb_request_build("guest-sync-delimited", args, id);
	g_assert_cmpstr(line->str, ==,
	                "{\"execute\":\"guest-sync-delimited\",\"arguments\":{\"id\":99},"
	                "\"id\":42}\n");
	/* not consumed: still usable */
	g_assert_cmpint(json_object_get_int_member(args, "id"), ==, 99);
	g_assert_cmpint(json_node_get_int(id), ==, 42);
	/* round trip */
	req = gb_request_parse(line->str, line->len - 1, NULL, &error);
	g_assert_no_error(error);
	g_assert_cmpstr(req->execute, ==, "guest-sync-delimited");
	id_text = node_text(req->id);
	g_assert_cmpstr(id_text, ==, "42");
	bare = gb_request_build("guest-ping", NULL, NULL);
	g_assert_cmpstr(bare->str, ==, "{\"execute\":\"guest-ping\"}\n");
}

static void test_reply_builders(void)
{
	g_autoptr(JsonNode) id = json_node_init_string(json_node_alloc(), "abc");
	g_autoptr(JsonNode) val = json_node_init_int(json_node_alloc(), 123);
	g_autoptr(JsonNode) id_obj = NULL;
	g_autoptr(GString) r1 = gb_reply_return(NULL, NULL);
	g_autoptr(GString) r2 = gb_reply_return(NULL, id);
	g_autoptr(GString) r3 = gb_reply_return(val, NULL);
	g_autoptr(GString) r4 = gb_reply_return_delimited(val, NULL);
	g_autoptr(GString) r5 = NULL;

	g_assert_cmpstr(r1->str, ==, "{\"return\":{}}\n");
	g_assert_cmpstr(r2->str, ==, "{\"return\":{},\"id\":\"abc\"}\n");
	g_assert_cmpstr(r3->str, ==, "{\"return\":123}\n");
	g_assert_cmpuint(r4->len, ==, r3->len + 1);
	g_assert_cmpint((guchar)r4->str[0], ==, 0xff);
	g_assert_cmpstr(r4->str + 1, ==, r3->str);
	/* an id of any type is copied verbatim */
	id_obj = gb_json_parse("{\"k\":[1,\"x\",null]}", 18, NULL);
	g_assert_nonnull(id_obj);
	r5 = gb_reply_return(val, id_obj);
	g_assert_cmpstr(r5->str, ==, "{\"return\":123,\"id\":{\"k\":[1,\"x\",null]}}\n");
	/* not consumed */
	g_assert_cmpint(json_node_get_int(val), ==, 123);
}

static void test_reply_errors(void)
{
	g_autoptr(JsonNode) id = json_node_init_int(json_node_alloc(), 5);
	g_autoptr(GError) nf = g_error_new(GB_ERROR, GB_ERROR_COMMAND_NOT_FOUND,
	                                   "The command %s has not been found", "nope");
	g_autoptr(GError) dis = g_error_new_literal(GB_ERROR, GB_ERROR_COMMAND_DISABLED,
	                                            "Command guest-exec has been disabled");
	g_autoptr(GError) inv =
	    g_error_new_literal(GB_ERROR, GB_ERROR_INVALID_ARGUMENT, "Parameter 'id' is missing");
	g_autoptr(GError) other =
	    g_error_new_literal(G_FILE_ERROR, G_FILE_ERROR_NOENT, "No such file \"x\"\n\t\\");
	g_autoptr(GError) bad = g_error_new_literal(GB_ERROR, GB_ERROR_FAILED, "bad \xff byte");
	g_autoptr(GString) l1 = gb_reply_error(nf, NULL);
	g_autoptr(GString) l2 = gb_reply_error(dis, id);
	g_autoptr(GString) l3 = gb_reply_error(inv, NULL);
	g_autoptr(GString) l4 = gb_reply_error(other, NULL);
	g_autoptr(GString) l5 = gb_reply_error(bad, NULL);
	g_autoptr(JsonNode) back = NULL;

	g_assert_cmpstr(l1->str, ==,
	                "{\"error\":{\"class\":\"CommandNotFound\","
	                "\"desc\":\"The command nope has not been found\"}}\n");
	g_assert_cmpstr(l2->str, ==,
	                "{\"error\":{\"class\":\"CommandNotFound\","
	                "\"desc\":\"Command guest-exec has been disabled\"},\"id\":5}\n");
	g_assert_cmpstr(l3->str, ==,
	                "{\"error\":{\"class\":\"GenericError\","
	                "\"desc\":\"Parameter 'id' is missing\"}}\n");
	g_assert_cmpstr(l4->str, ==,
	                "{\"error\":{\"class\":\"GenericError\","
	                "\"desc\":\"No such file \\\"x\\\"\\n\\t\\\\\"}}\n");
	/* one line each: newlines in a desc are escaped */
	g_assert_true(strchr(l4->str, '\n') == l4->str + l4->len - 1);
	/* invalid UTF-8 never reaches the wire */
	g_assert_true(g_utf8_validate(l5->str, (gssize)l5->len, NULL));
	back = gb_json_parse(l5->str, l5->len - 1, NULL);
	g_assert_nonnull(back);

	g_assert_cmpstr(gb_error_wire_class(nf), ==, "CommandNotFound");
	g_assert_cmpstr(gb_error_wire_class(dis), ==, "CommandNotFound");
	g_assert_cmpstr(gb_error_wire_class(inv), ==, "GenericError");
	g_assert_cmpstr(gb_error_wire_class(other), ==, "GenericError");
	g_assert_cmpstr(gb_error_wire_class(NULL), ==, "GenericError");
	{
		/* another domain with a code equal to GB_ERROR_COMMAND_NOT_FOUND */
		g_autoptr(GError) same_code =
		    g_error_new_literal(G_FILE_ERROR, GB_ERROR_COMMAND_NOT_FOUND, "x");

		g_assert_cmpstr(gb_error_wire_class(same_code), ==, "GenericError");
	}
}

/* The domain's name shows in GError dumps and G_DEBUG output; it must read as one word. */
static void test_error_quark(void)
{
	g_assert_cmpstr(g_quark_to_string(GB_ERROR), ==, "guestbench-error-quark");
}

static JsonNode *reply_parse_str(const char *text, JsonNode **id_out, GError **error)
{
	return gb_reply_parse(text, strlen(text), id_out, error);
}

static void assert_reply_error(const char *text, gint code, const char *message)
{
	g_autoptr(GError) error = NULL;
	g_autoptr(JsonNode) node = reply_parse_str(text, NULL, &error);

	g_assert_null(node);
	g_assert_error(error, GB_ERROR, code);
	if (message != NULL)
		g_assert_cmpstr(error->message, ==, message);
}

static void test_reply_parse(void)
{
	g_autoptr(GError) error = NULL;
	g_autoptr(JsonNode) id = NULL;
	g_autoptr(JsonNode) val = NULL;
	g_autofree char *text = NULL;

	val = reply_parse_str("{\"return\": {\"version\": \"1\"}, \"id\": 77}", &id, &error);
	g_assert_no_error(error);
	text = node_text(val);
	g_assert_cmpstr(text, ==, "{\"version\":\"1\"}");
	g_assert_nonnull(id);
	g_assert_cmpint(json_node_get_int(id), ==, 77);
	g_clear_pointer(&val, json_node_unref);
	g_clear_pointer(&id, json_node_unref);

	/* {"return": null} is a return, not an error */
	val = reply_parse_str("{\"return\":null}", &id, &error);
	g_assert_no_error(error);
	g_assert_nonnull(val);
	g_assert_true(JSON_NODE_HOLDS_NULL(val));
	g_assert_null(id);
	g_clear_pointer(&val, json_node_unref);

	/* errors, with the id still handed back */
	val = reply_parse_str("{\"error\":{\"class\":\"CommandNotFound\",\"desc\":\"The command "
	                      "nope has not been found\"},\"id\":\"s\"}",
	                      &id, &error);
	g_assert_null(val);
	g_assert_error(error, GB_ERROR, GB_ERROR_COMMAND_NOT_FOUND);
	g_assert_cmpstr(error->message, ==, "The command nope has not been found");
	g_assert_nonnull(id);
	g_assert_cmpstr(json_node_get_string(id), ==, "s");
	g_clear_error(&error);
	assert_reply_error("{\"error\":{\"class\":\"GenericError\",\"desc\":\"boom\"}}",
	                   GB_ERROR_REMOTE, "boom");
	assert_reply_error("{\"error\":{\"class\":\"SomethingNew\",\"desc\":\"x\"}}",
	                   GB_ERROR_REMOTE, "x");
}

static void test_reply_parse_roundtrip(void)
{
	g_autoptr(GError) nf = g_error_new_literal(GB_ERROR, GB_ERROR_COMMAND_DISABLED,
	                                           "Command guest-exec has been disabled");
	g_autoptr(GString) line = gb_reply_error(nf, NULL);
	g_autoptr(GError) error = NULL;
	g_autoptr(JsonNode) val = gb_reply_parse(line->str, line->len, NULL, &error);

	/* a disabled command reads back as not found: the wire has one class */
	g_assert_null(val);
	g_assert_error(error, GB_ERROR, GB_ERROR_COMMAND_NOT_FOUND);
	g_assert_cmpstr(error->message, ==, "Command guest-exec has been disabled");
}

static void test_reply_parse_hostile(void)
{
	const gint inv = GB_ERROR_INVALID_REQUEST;
	const char bad_utf8[] = "{\"return\":\"\xc3\x28\"}";
	g_autoptr(GString) huge =
	    g_string_new("{\"error\":{\"class\":\"GenericError\",\"desc\":\"");

	assert_reply_error("[1]", inv, "Invalid reply: not a JSON object");
	assert_reply_error("\"return\"", inv, "Invalid reply: not a JSON object");
	assert_reply_error("{}", inv, "Invalid reply: neither 'return' nor 'error'");
	assert_reply_error("{\"id\":1}", inv, "Invalid reply: neither 'return' nor 'error'");
	assert_reply_error("{\"return\":1,\"error\":{}}", inv,
	                   "Invalid reply: both 'return' and 'error'");
	assert_reply_error("{\"error\":\"boom\"}", inv,
	                   "Invalid reply: member 'error' must be an object");
	assert_reply_error("{\"error\":null}", inv,
	                   "Invalid reply: member 'error' must be an object");
	assert_reply_error("{\"error\":{\"class\":1,\"desc\":\"x\"}}", inv,
	                   "Invalid error reply: Invalid parameter type for 'class', expected: "
	                   "string");
	assert_reply_error("{\"error\":{\"class\":\"GenericError\"}}", inv,
	                   "Invalid error reply: Parameter 'desc' is missing");
	assert_reply_error("{\"error\":{\"class\":\"GenericError\",\"desc\":[\"x\"]}}", inv,
	                   "Invalid error reply: Invalid parameter type for 'desc', expected: "
	                   "string");
	assert_reply_error("{\"error\":{}}", inv,
	                   "Invalid error reply: Parameter 'class' is missing");
	assert_reply_error("garbage", GB_ERROR_PARSE, NULL);
	assert_reply_error("{\"return\":1,\"return\":2}", GB_ERROR_PARSE,
	                   "JSON parse error, duplicate key");
	{
		g_autoptr(GError) error = NULL;
		g_autoptr(JsonNode) val =
		    gb_reply_parse(bad_utf8, sizeof(bad_utf8) - 1, NULL, &error);

		g_assert_null(val);
		g_assert_error(error, GB_ERROR, GB_ERROR_PARSE);
	}
	/* terminal escapes and other control characters in a remote desc are neutralised */
	assert_reply_error("{\"error\":{\"class\":\"GenericError\","
	                   "\"desc\":\"red\\u001b[31m\\r\\nline\\u0007\\u007f\"}}",
	                   GB_ERROR_REMOTE, "red?[31m??line??");
	/* and a huge one is cut */
	for (guint i = 0; i < 100000; i++)
		g_string_append(huge, "\xc3\xa9");
	g_string_append(huge, "\"}}");
	{
		g_autoptr(GError) error = NULL;
		g_autoptr(JsonNode) val = gb_reply_parse(huge->str, huge->len, NULL, &error);

		g_assert_null(val);
		g_assert_error(error, GB_ERROR, GB_ERROR_REMOTE);
		g_assert_cmpuint(strlen(error->message), <=, 4096 + 8);
		g_assert_true(g_str_has_suffix(error->message, "..."));
		g_assert_true(g_utf8_validate(error->message, -1, NULL));
	}
}

int main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	g_test_add_func("/message/request/valid", test_request_valid);
	g_test_add_func("/message/request/errors", test_request_errors);
	g_test_add_func("/message/request/hostile", test_request_hostile);
	g_test_add_func("/message/request/build", test_request_build);
	g_test_add_func("/message/reply/builders", test_reply_builders);
	g_test_add_func("/message/reply/errors", test_reply_errors);
	g_test_add_func("/message/error/quark", test_error_quark);
	g_test_add_func("/message/reply/parse", test_reply_parse);
	g_test_add_func("/message/reply/parse-roundtrip", test_reply_parse_roundtrip);
	g_test_add_func("/message/reply/parse-hostile", test_reply_parse_hostile);
	return g_test_run();
}
