/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"

#include <math.h>
#include <string.h>

#include "guestbench-protocol.h"

static JsonNode *parse_ok(const char *text)
{
	g_autoptr(GError) error = NULL;
	JsonNode *node = gb_json_parse(text, strlen(text), &error);

	g_assert_no_error(error);
	g_assert_nonnull(node);
	return node;
}

/* The object of a parsed text; the node is kept in *holder. */
static JsonObject *parse_obj(const char *text, JsonNode **holder)
{
	*holder = parse_ok(text);
	g_assert_true(JSON_NODE_HOLDS_OBJECT(*holder));
	return json_node_get_object(*holder);
}

static void assert_parse_error(const char *data, gsize len, const char *expected)
{
	g_autoptr(GError) error = NULL;
	g_autoptr(JsonNode) node = gb_json_parse(data, len, &error);

	g_assert_null(node);
	g_assert_error(error, GB_ERROR, GB_ERROR_PARSE);
	g_assert_true(g_str_has_prefix(error->message, "JSON parse error, "));
	if (expected != NULL)
		g_assert_cmpstr(error->message, ==, expected);
}

static void assert_parse_error_str(const char *text, const char *expected)
{
	assert_parse_error(text, strlen(text), expected);
}

static void test_json_parse_valid(void)
{
	g_autoptr(JsonNode) obj = parse_ok(" {\"a\":[1,2.5,true,null,\"x\"],\"b\":{}}\n");
	g_autoptr(JsonNode) arr = parse_ok("[]");
	g_autoptr(JsonNode) num = parse_ok("123");
	g_autoptr(JsonNode) str = parse_ok("\"s\"");
	g_autofree char *text = gb_json_to_string(obj, NULL);

	g_assert_true(JSON_NODE_HOLDS_ARRAY(arr));
	g_assert_true(JSON_NODE_HOLDS_VALUE(num));
	g_assert_true(JSON_NODE_HOLDS_VALUE(str));
	g_assert_cmpstr(text, ==, "{\"a\":[1,2.5,true,null,\"x\"],\"b\":{}}");
	/* the tree is mutable: callers may add members */
	json_object_set_int_member(json_node_get_object(obj), "c", 1);
}

static void test_json_parse_bad(void)
{
	const char *bad[] = {
		"abc",
		"}",
		"{",
		"{]",
		"[1,]",
		"{\"a\":1,}",
		"{a:1}",
		"{\"a\":TRUE}",
		"{\"a\":nan}",
		"{\"a\":inf}",
		"[1 2]",
		"{\"a\" 1}",
		"\"unterminated",
	};

	for (guint i = 0; i < G_N_ELEMENTS(bad); i++)
		assert_parse_error(bad[i], strlen(bad[i]), NULL);
	assert_parse_error_str("", "JSON parse error, empty input");
	assert_parse_error_str(" \n\t ", "JSON parse error, empty input");
	assert_parse_error(NULL, 0, "JSON parse error, empty input");
	assert_parse_error(NULL, 5, "JSON parse error, no data");
	/* json-glib's "<data>:2:6: Parse error: ..." becomes where, in words */
	{
		g_autoptr(GError) error = NULL;
		const char *text = "{\"a\": 1,\n \"b\" 2}";
		g_autoptr(JsonNode) node = gb_json_parse(text, strlen(text), &error);

		g_assert_null(node);
		g_assert_error(error, GB_ERROR, GB_ERROR_PARSE);
		g_assert_true(
		    g_str_has_prefix(error->message, "JSON parse error, line 2, column "));
		g_assert_null(strstr(error->message, "<data>"));
		g_assert_null(strstr(error->message, "Parse error:"));
	}
}

/* What json-glib 1.6 accepts that JSON (and qemu-ga) does not. */
static void test_json_parse_strict(void)
{
	assert_parse_error_str("{\"a\":0x10}", "JSON parse error, invalid token '0x10'");
	assert_parse_error_str("{\"a\":0x1FFFFFFFFFFFFFFFFFFF}", NULL);
	assert_parse_error_str("{\"a\":01}", "JSON parse error, invalid token '01'");
	assert_parse_error_str("{\"a\":.5}", "JSON parse error, invalid token '.5'");
	assert_parse_error_str("{\"a\":+1}", NULL);
	assert_parse_error_str("{\"a\":1.}", NULL);
	assert_parse_error_str("{\"a\":1e}", NULL);
	assert_parse_error_str("{\"a\":-}", NULL);
	assert_parse_error_str("{\"a\":'x'}", "JSON parse error, invalid token ''x''");
	assert_parse_error_str("/* c */ {\"a\":1}", NULL);
	assert_parse_error_str("{\"a\":1} // c", NULL);
	assert_parse_error_str("{\"a\":1}{\"b\":2}",
	                       "JSON parse error, unexpected data after the JSON value");
	assert_parse_error_str("1 2", "JSON parse error, unexpected data after the JSON value");
	assert_parse_error_str("\"a\" \"b\"",
	                       "JSON parse error, unexpected data after the JSON value");
	assert_parse_error_str("{\"a\":1} }",
	                       "JSON parse error, unexpected data after the JSON value");
}

static void test_json_parse_numbers(void)
{
	g_autoptr(JsonNode) holder = NULL;
	JsonObject *obj = parse_obj("{\"max\":9223372036854775807,\"min\":-9223372036854775808,"
	                            "\"over\":9223372036854775808,\"u64\":18446744073709551615,"
	                            "\"under\":-9223372036854775809,\"tiny\":1e-400,"
	                            "\"big\":123456789012345678901234567890,\"neg0\":-0,\"e\":1E2}",
	                            &holder);
	JsonNode *node;

	node = json_object_get_member(obj, "max");
	g_assert_cmpint(json_node_get_value_type(node), ==, G_TYPE_INT64);
	g_assert_cmpint(json_node_get_int(node), ==, G_MAXINT64);
	node = json_object_get_member(obj, "min");
	g_assert_cmpint(json_node_get_value_type(node), ==, G_TYPE_INT64);
	g_assert_cmpint(json_node_get_int(node), ==, G_MININT64);
	/* json-glib alone would wrap these around (2^64-1 -> -1): they become doubles */
	node = json_object_get_member(obj, "over");
	g_assert_cmpint(json_node_get_value_type(node), ==, G_TYPE_DOUBLE);
	g_assert_cmpfloat(json_node_get_double(node), ==, 9223372036854775808.0);
	node = json_object_get_member(obj, "u64");
	g_assert_cmpint(json_node_get_value_type(node), ==, G_TYPE_DOUBLE);
	g_assert_cmpfloat(json_node_get_double(node), ==, 18446744073709551615.0);
	node = json_object_get_member(obj, "under");
	g_assert_cmpint(json_node_get_value_type(node), ==, G_TYPE_DOUBLE);
	g_assert_cmpfloat(json_node_get_double(node), <, 0);
	node = json_object_get_member(obj, "big");
	g_assert_cmpint(json_node_get_value_type(node), ==, G_TYPE_DOUBLE);
	g_assert_cmpfloat(json_node_get_double(node), >, 1e29);
	g_assert_cmpfloat(json_object_get_double_member(obj, "tiny"), ==, 0.0);
	g_assert_cmpint(json_object_get_int_member(obj, "neg0"), ==, 0);
	g_assert_cmpfloat(json_object_get_double_member(obj, "e"), ==, 100.0);

	/* no inf: json-glib would print it back as the non-JSON "inf.0" */
	assert_parse_error_str("{\"a\":1e400}", "JSON parse error, number out of range '1e400'");
	assert_parse_error_str("[-1e400]", NULL);
	{
		g_autoptr(GString) huge = g_string_new("[");

		for (guint i = 0; i < 400; i++)
			g_string_append_c(huge, '9');
		g_string_append_c(huge, ']');
		assert_parse_error(huge->str, huge->len, NULL);
	}
}

static void test_json_parse_duplicate(void)
{
	assert_parse_error_str("{\"a\":1,\"a\":2}", "JSON parse error, duplicate key");
	assert_parse_error_str("{\"x\":{\"a\":1,\"b\":2,\"a\":3}}",
	                       "JSON parse error, duplicate key");
	assert_parse_error_str("[{},{\"a\":{\"a\":1},\"a\":{}}]",
	                       "JSON parse error, duplicate key");
	/* members are counted in the text and compared with the objects json-glib made */
	assert_parse_error_str("[{\"a\":1},{\"b\":{\"c\":[{},{\"d\":1,\"d\":1}]}}]",
	                       "JSON parse error, duplicate key");
	assert_parse_error_str("{\"a\":{\"x\":{\"y\":{}}},\"a\":1,\"b\":{}}",
	                       "JSON parse error, duplicate key");
	assert_parse_error_str("{\"n\":123456789012345678901234,\"n\":1}",
	                       "JSON parse error, duplicate key");
	assert_parse_error_str("{\"k:\":1,\"k:\":{\"a\":\"b:c\"}}",
	                       "JSON parse error, duplicate key");
	{
		/* colons, braces and quotes inside strings are not members */
		g_autoptr(JsonNode) node = parse_ok(
		    "{\"a:b\":\"c:d{\",\"e\":{\"f\":\"::}\",\"g\\\":\":[{\"h\":\"\\\":\"}]},"
		    "\"i\":[[{}],{\"j\":{}}]}");

		g_assert_true(JSON_NODE_HOLDS_OBJECT(node));
		g_assert_cmpuint(json_object_get_size(json_node_get_object(node)), ==, 3);
	}
	{
		/* the same key in sibling objects is fine */
		g_autoptr(JsonNode) node = parse_ok("[{\"a\":1},{\"a\":2},{\"a\":{\"a\":3}}]");

		g_assert_true(JSON_NODE_HOLDS_ARRAY(node));
	}
}

static void test_json_parse_bytes(void)
{
	const char nul_in_string[] = "{\"a\":\"x\0y\"}";
	const char nul_after[] = "{\"a\":1}\0";
	const char bad_utf8[] = "{\"a\":\"\xc3\x28\"}";
	const char overlong[] = "{\"a\":\"\xc0\xaf\"}";
	const char high[] = "{\"a\":\"\xff\"}";
	g_autoptr(JsonNode) holder = NULL;
	JsonObject *obj;

	assert_parse_error(nul_in_string, sizeof(nul_in_string) - 1, NULL);
	assert_parse_error(nul_after, sizeof(nul_after) - 1, NULL);
	assert_parse_error(bad_utf8, sizeof(bad_utf8) - 1, NULL);
	assert_parse_error(overlong, sizeof(overlong) - 1, NULL);
	assert_parse_error(high, sizeof(high) - 1, NULL);
	/* the length given is what counts, not a NUL */
	assert_parse_error("{\"a\":1}", 5, NULL);
	/* json-glib would cut the string at an escaped NUL: refused rather than misread */
	assert_parse_error_str("{\"a\":\"x\\u0000y\"}",
	                       "JSON parse error, \\u0000 is not supported");
	assert_parse_error_str("[\"\\u0000\"]", NULL);
	/* json-glib decodes a short \u escape into bytes that are not UTF-8 */
	assert_parse_error_str("{\"a\\u20\xd8\x9agsx\":1}",
	                       "JSON parse error, \\u escape without four hex digits in a string");
	assert_parse_error_str("[\"\\u12\"]", NULL);
	assert_parse_error_str("[\"\\u", NULL);
	obj = parse_obj("{\"a\":\"x\\\\u0000y\",\"b\":\"\\u00e9\\ud83d\\ude00\"}", &holder);
	/* an escaped backslash then u0000 is just text */
	g_assert_cmpstr(json_object_get_string_member(obj, "a"), ==, "x\\u0000y");
	g_assert_cmpstr(json_object_get_string_member(obj, "b"), ==, "\xc3\xa9\xf0\x9f\x98\x80");
}

static void test_json_parse_deep(void)
{
	g_autoptr(GString) ok = g_string_new(NULL);
	g_autoptr(GString) bad = g_string_new(NULL);
	g_autoptr(JsonNode) node = NULL;

	for (guint i = 0; i < GB_JSON_PARSE_MAX_DEPTH; i++)
		g_string_append_c(ok, '[');
	for (guint i = 0; i < GB_JSON_PARSE_MAX_DEPTH; i++)
		g_string_append_c(ok, ']');
	node = parse_ok(ok->str);
	g_assert_true(JSON_NODE_HOLDS_ARRAY(node));
	/* 100000 levels crash json-glib 1.6 by stack overflow: refused before */
	for (guint i = 0; i < 100000; i++)
		g_string_append(bad, "{\"a\":");
	assert_parse_error(bad->str, bad->len, "JSON parse error, nesting exceeds 1024 levels");
}

static void test_json_to_string(void)
{
	g_autoptr(JsonNode) node = parse_ok("{ \"a\" : [ 1 , \"\\u00e9\" ] , \"b\" : { } }");
	gsize len = 0;
	g_autofree char *text = gb_json_to_string(node, &len);

	g_assert_cmpstr(text, ==, "{\"a\":[1,\"\xc3\xa9\"],\"b\":{}}");
	g_assert_cmpuint(len, ==, strlen(text));
}

/* The measure of a tree: about the length of its compact text, and one value per node. */
static void test_json_measure(void)
{
	const struct {
		const char *doc;
		gsize values;
	} cases[] = {
		{ "{\"a\":[1,\"x\u00e9\"],\"b\":{},\"c\":null,\"d\":true,\"e\":false}", 8 },
		{ "[-9223372036854775808,9223372036854775807,0,-1,1.5,[],[[]]]", 9 },
		{ "\"plain\"", 1 },
		{ "{\"cpus\":[1000000,1000000,1000000]}", 5 },
	};
	g_autoptr(JsonNode) null = json_node_init_null(json_node_alloc());
	gsize values = 3;

	for (gsize i = 0; i < G_N_ELEMENTS(cases); i++) {
		g_autoptr(JsonNode) node = parse_ok(cases[i].doc);
		gsize text_len = 0;
		g_autofree char *text = gb_json_to_string(node, &text_len);
		gsize n = 0;
		gsize measured = gb_json_measure(node, &n);

		/* a comma after the last item of a container too: a few bytes over, never under */
		g_assert_cmpuint(measured, >=, text_len);
		g_assert_cmpuint(measured, <=, text_len + 2);
		g_assert_cmpuint(n, ==, cases[i].values);
	}
	/* added to what *values holds; NULL is fine */
	g_assert_cmpuint(gb_json_measure(null, &values), ==, 4);
	g_assert_cmpuint(values, ==, 4);
	g_assert_cmpuint(gb_json_measure(null, NULL), ==, 4);
}

/* Every text the writer makes parses back to the same values, holds nothing a
 * terminal obeys, and the pretty form is the same document. */
static void test_json_to_string_safe(void)
{
	/* C1 CSI, DEL, bidi override, U+061C, U+2028, U+2066; then what stays */
	const char *input = "{\"s\":\"\\u009b2J\\u007f\\u202e\\u061c\\u2028\\u2066 "
	                    "\\u00e9\\u2030\\u20ac\\u00a0\\u001b\",\"big\":1e308,\"small\":-4e-70,"
	                    "\"n\":[1.5,1e20]}";
	g_autoptr(JsonNode) node = parse_ok(input);
	gsize len = 0;
	gsize plen = 0;
	g_autofree char *text = gb_json_to_string(node, &len);
	g_autofree char *pretty = gb_json_to_string_pretty(node, &plen);
	g_autoptr(JsonNode) back = NULL;
	g_autoptr(JsonNode) back_pretty = NULL;
	const char *s = NULL;
	double big = 0;

	g_assert_cmpuint(len, ==, strlen(text));
	g_assert_cmpuint(plen, ==, strlen(pretty));
	g_assert_nonnull(strstr(text, "\"\\u009b2J\\u007f\\u202e\\u061c\\u2028\\u2066 "
	                              "\xc3\xa9\xe2\x80\xb0\xe2\x82\xac\xc2\xa0\\u001b\""));
	g_assert_null(strstr(text, ".0"));
	g_assert_null(strstr(pretty, "e+308.0"));
	g_assert_nonnull(strstr(pretty, "\n  \"s\" : \""));
	back = parse_ok(text);
	back_pretty = parse_ok(pretty);
	g_assert_true(json_node_equal(back, node));
	g_assert_true(json_node_equal(back_pretty, node));
	g_assert_true(
	    gb_json_get_string(json_node_get_object(back), "s", GB_JSON_REQUIRED, &s, NULL));
	g_assert_cmpstr(s, ==,
	                "\xc2\x9b"
	                "2J\x7f\xe2\x80\xae\xd8\x9c\xe2\x80\xa8\xe2\x81\xa6 "
	                "\xc3\xa9\xe2\x80\xb0\xe2\x82\xac\xc2\xa0\x1b");
	g_assert_true(gb_json_get_double(json_node_get_object(back_pretty), "big", GB_JSON_REQUIRED,
	                                 -G_MAXDOUBLE, G_MAXDOUBLE, &big, NULL));
	g_assert_cmpfloat(big, ==, 1e308);
}

/* One member of every type, to try every getter on every wrong type. */
static const char all_types[] = "{\"int\":5,\"dbl\":2.5,\"intdbl\":3.0,\"bool\":true,"
                                "\"str\":\"hi\",\"obj\":{\"k\":1},\"arr\":[1,2],\"null\":null}";

static void assert_arg_error(GError *error, const char *expected)
{
	g_assert_error(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT);
	g_assert_cmpstr(error->message, ==, expected);
}

static void test_json_get_int(void)
{
	g_autoptr(JsonNode) holder = NULL;
	JsonObject *obj = parse_obj(all_types, &holder);
	const char *wrong[] = { "dbl", "intdbl", "bool", "str", "obj", "arr", "null" };
	gint64 val = 42;

	g_assert_true(gb_json_get_int(obj, "int", GB_JSON_REQUIRED, 0, 10, &val, NULL));
	g_assert_cmpint(val, ==, 5);
	for (guint i = 0; i < G_N_ELEMENTS(wrong); i++) {
		g_autoptr(GError) error = NULL;
		g_autofree char *expected =
		    g_strdup_printf("Invalid parameter type for '%s', expected: integer", wrong[i]);

		val = 42;
		g_assert_false(gb_json_get_int(obj, wrong[i], GB_JSON_REQUIRED, G_MININT64,
		                               G_MAXINT64, &val, &error));
		assert_arg_error(error, expected);
		g_assert_cmpint(val, ==, 42);
	}
	{
		g_autoptr(GError) error = NULL;

		g_assert_false(gb_json_get_int(obj, "nope", GB_JSON_REQUIRED, 0, 10, &val, &error));
		assert_arg_error(error, "Parameter 'nope' is missing");
	}
	{
		g_autoptr(GError) error = NULL;

		g_assert_false(
		    gb_json_get_int(NULL, "nope", GB_JSON_REQUIRED, 0, 10, &val, &error));
		assert_arg_error(error, "Parameter 'nope' is missing");
	}
	/* optional: absent or null leaves the default; a wrong type still fails */
	val = 7;
	g_assert_true(gb_json_get_int(obj, "nope", GB_JSON_OPTIONAL, 0, 10, &val, NULL));
	g_assert_true(gb_json_get_int(obj, "null", GB_JSON_OPTIONAL, 0, 10, &val, NULL));
	g_assert_true(gb_json_get_int(NULL, "nope", GB_JSON_OPTIONAL, 0, 10, &val, NULL));
	g_assert_cmpint(val, ==, 7);
	{
		g_autoptr(GError) error = NULL;

		g_assert_false(gb_json_get_int(obj, "str", GB_JSON_OPTIONAL, 0, 10, &val, &error));
		assert_arg_error(error, "Invalid parameter type for 'str', expected: integer");
	}
}

static void test_json_get_int_range(void)
{
	g_autoptr(JsonNode) holder = NULL;
	JsonObject *obj = parse_obj("{\"max\":9223372036854775807,\"min\":-9223372036854775808,"
	                            "\"five\":5,\"u64\":18446744073709551615}",
	                            &holder);
	gint64 val = 0;

	g_assert_true(gb_json_get_int(obj, "max", 0, G_MININT64, G_MAXINT64, &val, NULL));
	g_assert_cmpint(val, ==, G_MAXINT64);
	g_assert_true(gb_json_get_int(obj, "min", 0, G_MININT64, G_MAXINT64, &val, NULL));
	g_assert_cmpint(val, ==, G_MININT64);
	g_assert_true(gb_json_get_int(obj, "five", 0, 5, 5, &val, NULL));
	g_assert_cmpint(val, ==, 5);
	{
		g_autoptr(GError) error = NULL;

		g_assert_false(gb_json_get_int(obj, "five", 0, 6, 10, &val, &error));
		assert_arg_error(error, "Parameter 'five' is out of range: 5 (allowed 6..10)");
	}
	{
		g_autoptr(GError) error = NULL;

		g_assert_false(gb_json_get_int(obj, "five", 0, -3, 4, &val, &error));
		assert_arg_error(error, "Parameter 'five' is out of range: 5 (allowed -3..4)");
	}
	{
		g_autoptr(GError) error = NULL;

		g_assert_false(gb_json_get_int(obj, "max", 0, 0, G_MAXINT64 - 1, &val, &error));
		assert_arg_error(error, "Parameter 'max' is out of range: 9223372036854775807 "
		                        "(allowed 0..9223372036854775806)");
	}
	{
		g_autoptr(GError) error = NULL;

		g_assert_false(gb_json_get_int(obj, "min", 0, G_MININT64 + 1, 0, &val, &error));
		assert_arg_error(error, "Parameter 'min' is out of range: -9223372036854775808 "
		                        "(allowed -9223372036854775807..0)");
	}
	{
		/* beyond gint64 is not an integer at all, as in qemu-ga */
		g_autoptr(GError) error = NULL;

		g_assert_false(
		    gb_json_get_int(obj, "u64", 0, G_MININT64, G_MAXINT64, &val, &error));
		assert_arg_error(error, "Invalid parameter type for 'u64', expected: integer");
	}
}

static void test_json_get_double(void)
{
	g_autoptr(JsonNode) holder = NULL;
	JsonObject *obj = parse_obj(all_types, &holder);
	const char *wrong[] = { "bool", "str", "obj", "arr", "null" };
	double val = 0;

	g_assert_true(gb_json_get_double(obj, "dbl", 0, 0, 10, &val, NULL));
	g_assert_cmpfloat(val, ==, 2.5);
	g_assert_true(gb_json_get_double(obj, "int", 0, 0, 10, &val, NULL));
	g_assert_cmpfloat(val, ==, 5.0);
	g_assert_true(gb_json_get_double(obj, "dbl", 0, 2.5, 2.5, &val, NULL));
	for (guint i = 0; i < G_N_ELEMENTS(wrong); i++) {
		g_autoptr(GError) error = NULL;
		g_autofree char *expected =
		    g_strdup_printf("Invalid parameter type for '%s', expected: number", wrong[i]);

		g_assert_false(gb_json_get_double(obj, wrong[i], 0, -1e9, 1e9, &val, &error));
		assert_arg_error(error, expected);
	}
	{
		g_autoptr(GError) error = NULL;

		g_assert_false(gb_json_get_double(obj, "dbl", 0, 3, 10, &val, &error));
		assert_arg_error(error, "Parameter 'dbl' is out of range: 2.5 (allowed 3..10)");
	}
	{
		g_autoptr(GError) error = NULL;

		g_assert_false(gb_json_get_double(obj, "nope", 0, 3, 10, &val, &error));
		assert_arg_error(error, "Parameter 'nope' is missing");
	}
	val = 9.5;
	g_assert_true(gb_json_get_double(obj, "null", GB_JSON_OPTIONAL, 0, 1, &val, NULL));
	g_assert_cmpfloat(val, ==, 9.5);
	{
		/* a node made in-process can hold inf/NaN; they are refused */
		g_autoptr(JsonObject) made = json_object_new();
		g_autoptr(GError) error = NULL;

		json_object_set_double_member(made, "inf", INFINITY);
		json_object_set_double_member(made, "nan", NAN);
		g_assert_false(
		    gb_json_get_double(made, "inf", 0, -G_MAXDOUBLE, G_MAXDOUBLE, &val, &error));
		assert_arg_error(error, "Invalid parameter type for 'inf', expected: number");
		g_clear_error(&error);
		g_assert_false(gb_json_node_get_double(json_object_get_member(made, "nan"), "nan",
		                                       &val, &error));
		assert_arg_error(error, "Invalid parameter type for 'nan', expected: number");
	}
}

static void test_json_get_bool_string(void)
{
	g_autoptr(JsonNode) holder = NULL;
	JsonObject *obj = parse_obj(all_types, &holder);
	const char *not_bool[] = { "int", "dbl", "str", "obj", "arr", "null" };
	const char *not_str[] = { "int", "dbl", "bool", "obj", "arr", "null" };
	gboolean b = FALSE;
	const char *s = NULL;

	g_assert_true(gb_json_get_bool(obj, "bool", 0, &b, NULL));
	g_assert_true(b);
	g_assert_true(gb_json_get_string(obj, "str", 0, &s, NULL));
	g_assert_cmpstr(s, ==, "hi");
	for (guint i = 0; i < G_N_ELEMENTS(not_bool); i++) {
		g_autoptr(GError) error = NULL;
		g_autofree char *expected = g_strdup_printf(
		    "Invalid parameter type for '%s', expected: boolean", not_bool[i]);

		g_assert_false(gb_json_get_bool(obj, not_bool[i], 0, &b, &error));
		assert_arg_error(error, expected);
	}
	for (guint i = 0; i < G_N_ELEMENTS(not_str); i++) {
		g_autoptr(GError) error = NULL;
		g_autofree char *expected = g_strdup_printf(
		    "Invalid parameter type for '%s', expected: string", not_str[i]);

		g_assert_false(gb_json_get_string(obj, not_str[i], 0, &s, &error));
		assert_arg_error(error, expected);
	}
	{
		g_autoptr(GError) error = NULL;

		g_assert_false(gb_json_get_bool(obj, "nope", 0, &b, &error));
		assert_arg_error(error, "Parameter 'nope' is missing");
		g_clear_error(&error);
		g_assert_false(gb_json_get_string(obj, "nope", 0, &s, &error));
		assert_arg_error(error, "Parameter 'nope' is missing");
	}
	b = FALSE;
	s = "default";
	g_assert_true(gb_json_get_bool(obj, "nope", GB_JSON_OPTIONAL, &b, NULL));
	g_assert_true(gb_json_get_string(obj, "null", GB_JSON_OPTIONAL, &s, NULL));
	g_assert_false(b);
	g_assert_cmpstr(s, ==, "default");
	{
		/* strings set in-process are not checked by json-glib */
		g_autoptr(JsonObject) made = json_object_new();
		g_autoptr(GError) error = NULL;

		json_object_set_string_member(made, "bad", "\xff\xfe");
		g_assert_false(gb_json_get_string(made, "bad", 0, &s, &error));
		assert_arg_error(error, "Parameter 'bad' is not valid UTF-8");
	}
}

static void test_json_get_object_array(void)
{
	g_autoptr(JsonNode) holder = NULL;
	JsonObject *obj = parse_obj(all_types, &holder);
	const char *not_obj[] = { "int", "dbl", "bool", "str", "arr", "null" };
	const char *not_arr[] = { "int", "dbl", "bool", "str", "obj", "null" };
	JsonObject *o = NULL;
	JsonArray *a = NULL;

	g_assert_true(gb_json_get_object(obj, "obj", 0, &o, NULL));
	g_assert_true(json_object_has_member(o, "k"));
	g_assert_true(gb_json_get_array(obj, "arr", 0, &a, NULL));
	g_assert_cmpuint(json_array_get_length(a), ==, 2);
	for (guint i = 0; i < G_N_ELEMENTS(not_obj); i++) {
		g_autoptr(GError) error = NULL;
		g_autofree char *expected = g_strdup_printf(
		    "Invalid parameter type for '%s', expected: object", not_obj[i]);

		g_assert_false(gb_json_get_object(obj, not_obj[i], 0, &o, &error));
		assert_arg_error(error, expected);
	}
	for (guint i = 0; i < G_N_ELEMENTS(not_arr); i++) {
		g_autoptr(GError) error = NULL;
		g_autofree char *expected =
		    g_strdup_printf("Invalid parameter type for '%s', expected: array", not_arr[i]);

		g_assert_false(gb_json_get_array(obj, not_arr[i], 0, &a, &error));
		assert_arg_error(error, expected);
	}
	o = NULL;
	a = NULL;
	g_assert_true(gb_json_get_object(obj, "null", GB_JSON_OPTIONAL, &o, NULL));
	g_assert_true(gb_json_get_array(obj, "nope", GB_JSON_OPTIONAL, &a, NULL));
	g_assert_null(o);
	g_assert_null(a);
}

static void test_json_get_int_array(void)
{
	g_autoptr(JsonNode) holder = NULL;
	JsonObject *obj = parse_obj("{\"sizes\":[16,64,256,1024],\"bad\":[1,2,\"x\"],"
	                            "\"big\":[1,99],\"dbl\":[1.5],\"empty\":[],\"nul\":[null],"
	                            "\"notarr\":5}",
	                            &holder);
	g_autoptr(GArray) arr = NULL;

	g_assert_true(gb_json_get_int_array(obj, "sizes", 0, 1, 1024, &arr, NULL));
	g_assert_cmpuint(arr->len, ==, 4);
	g_assert_cmpint(g_array_index(arr, gint64, 0), ==, 16);
	g_assert_cmpint(g_array_index(arr, gint64, 3), ==, 1024);
	g_clear_pointer(&arr, g_array_unref);
	g_assert_true(gb_json_get_int_array(obj, "empty", 0, 1, 10, &arr, NULL));
	g_assert_cmpuint(arr->len, ==, 0);
	g_clear_pointer(&arr, g_array_unref);
	{
		g_autoptr(GError) error = NULL;

		g_assert_false(gb_json_get_int_array(obj, "bad", 0, 0, 10, &arr, &error));
		assert_arg_error(error, "Invalid parameter type for 'bad[2]', expected: integer");
		g_assert_null(arr);
	}
	{
		g_autoptr(GError) error = NULL;

		g_assert_false(gb_json_get_int_array(obj, "big", 0, 0, 10, &arr, &error));
		assert_arg_error(error, "Parameter 'big[1]' is out of range: 99 (allowed 0..10)");
	}
	{
		g_autoptr(GError) error = NULL;

		g_assert_false(gb_json_get_int_array(obj, "dbl", 0, 0, 10, &arr, &error));
		assert_arg_error(error, "Invalid parameter type for 'dbl[0]', expected: integer");
	}
	{
		g_autoptr(GError) error = NULL;

		g_assert_false(gb_json_get_int_array(obj, "nul", 0, 0, 10, &arr, &error));
		assert_arg_error(error, "Invalid parameter type for 'nul[0]', expected: integer");
	}
	{
		g_autoptr(GError) error = NULL;

		g_assert_false(gb_json_get_int_array(obj, "notarr", 0, 0, 10, &arr, &error));
		assert_arg_error(error, "Invalid parameter type for 'notarr', expected: array");
	}
	g_assert_true(gb_json_get_int_array(obj, "nope", GB_JSON_OPTIONAL, 0, 10, &arr, NULL));
	g_assert_null(arr);
}

static void test_json_get_strv(void)
{
	g_autoptr(JsonNode) holder = NULL;
	JsonObject *obj =
	    parse_obj("{\"names\":[\"a\",\"\\u00e9\",\"\"],\"bad\":[\"a\",1],\"empty\":[],"
	              "\"str\":\"a\"}",
	              &holder);
	g_auto(GStrv) strv = NULL;

	g_assert_true(gb_json_get_strv(obj, "names", 0, &strv, NULL));
	g_assert_cmpuint(g_strv_length(strv), ==, 3);
	g_assert_cmpstr(strv[1], ==, "\xc3\xa9");
	g_assert_cmpstr(strv[2], ==, "");
	g_clear_pointer(&strv, g_strfreev);
	g_assert_true(gb_json_get_strv(obj, "empty", 0, &strv, NULL));
	g_assert_nonnull(strv);
	g_assert_null(strv[0]);
	g_clear_pointer(&strv, g_strfreev);
	{
		g_autoptr(GError) error = NULL;

		g_assert_false(gb_json_get_strv(obj, "bad", 0, &strv, &error));
		assert_arg_error(error, "Invalid parameter type for 'bad[1]', expected: string");
		g_assert_null(strv);
	}
	{
		g_autoptr(GError) error = NULL;

		g_assert_false(gb_json_get_strv(obj, "str", 0, &strv, &error));
		assert_arg_error(error, "Invalid parameter type for 'str', expected: array");
	}
	{
		g_autoptr(GError) error = NULL;

		g_assert_false(gb_json_get_strv(obj, "nope", 0, &strv, &error));
		assert_arg_error(error, "Parameter 'nope' is missing");
	}
}

static void test_json_node_getters(void)
{
	g_autoptr(JsonNode) holder = NULL;
	JsonObject *obj = parse_obj(all_types, &holder);
	gint64 i = 0;
	double d = 0;
	const char *s = NULL;
	JsonObject *o = NULL;

	g_assert_true(
	    gb_json_node_get_int(json_object_get_member(obj, "int"), "x", 0, 9, &i, NULL));
	g_assert_cmpint(i, ==, 5);
	g_assert_true(gb_json_node_get_double(json_object_get_member(obj, "int"), "x", &d, NULL));
	g_assert_cmpfloat(d, ==, 5.0);
	g_assert_true(gb_json_node_get_string(json_object_get_member(obj, "str"), "x", &s, NULL));
	g_assert_cmpstr(s, ==, "hi");
	g_assert_true(gb_json_node_get_object(json_object_get_member(obj, "obj"), "x", &o, NULL));
	g_assert_nonnull(o);
	{
		g_autoptr(GError) error = NULL;

		g_assert_false(gb_json_node_get_int(NULL, "elem", 0, 9, &i, &error));
		assert_arg_error(error, "Parameter 'elem' is missing");
		g_clear_error(&error);
		g_assert_false(gb_json_node_get_double(NULL, "elem", &d, &error));
		assert_arg_error(error, "Parameter 'elem' is missing");
		g_clear_error(&error);
		g_assert_false(gb_json_node_get_string(NULL, "elem", &s, &error));
		assert_arg_error(error, "Parameter 'elem' is missing");
		g_clear_error(&error);
		g_assert_false(gb_json_node_get_object(NULL, "elem", &o, &error));
		assert_arg_error(error, "Parameter 'elem' is missing");
		g_clear_error(&error);
		g_assert_false(gb_json_node_get_object(json_object_get_member(obj, "arr"), "elem",
		                                       &o, &error));
		assert_arg_error(error, "Invalid parameter type for 'elem', expected: object");
		g_clear_error(&error);
		g_assert_false(gb_json_node_get_string(json_object_get_member(obj, "null"), "elem",
		                                       &s, &error));
		assert_arg_error(error, "Invalid parameter type for 'elem', expected: string");
		g_clear_error(&error);
		g_assert_false(gb_json_node_get_double(json_object_get_member(obj, "str"), "elem",
		                                       &d, &error));
		assert_arg_error(error, "Invalid parameter type for 'elem', expected: number");
	}
}

static void test_json_has_and_members(void)
{
	g_autoptr(JsonNode) holder = NULL;
	JsonObject *obj = parse_obj("{\"id\":1,\"zeta\":2,\"alpha\":3,\"n\":null}", &holder);
	const char *const allowed[] = { "id", "n", NULL };
	const char *const all[] = { "id", "zeta", "alpha", "n", NULL };

	g_assert_true(gb_json_has(obj, "id"));
	g_assert_false(gb_json_has(obj, "n"));
	g_assert_false(gb_json_has(obj, "nope"));
	g_assert_false(gb_json_has(NULL, "id"));
	g_assert_true(gb_json_check_members(obj, all, NULL));
	g_assert_true(gb_json_check_members(NULL, allowed, NULL));
	{
		/* the first stray member in the order sent is named */
		g_autoptr(GError) error = NULL;

		g_assert_false(gb_json_check_members(obj, allowed, &error));
		assert_arg_error(error, "Parameter 'zeta' is unexpected");
	}
	{
		g_autoptr(GError) error = NULL;
		const char *const none[] = { NULL };

		g_assert_false(gb_json_check_members(obj, none, &error));
		assert_arg_error(error, "Parameter 'id' is unexpected");
	}
	{
		/* a hostile member name is shortened in the message */
		g_autoptr(GString) text = g_string_new("{\"");
		g_autoptr(JsonNode) node = NULL;
		g_autoptr(GError) error = NULL;

		for (guint i = 0; i < 10000; i++)
			g_string_append_c(text, 'x');
		g_string_append(text, "\":1}");
		node = parse_ok(text->str);
		g_assert_false(gb_json_check_members(json_node_get_object(node), allowed, &error));
		g_assert_error(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT);
		g_assert_cmpuint(strlen(error->message), <, 120);
		g_assert_true(g_str_has_suffix(error->message, "...' is unexpected"));
	}
}

/* The guest-sync argument checks, as qemu-ga words them (see PROTOCOL.md). */
static void test_json_guest_sync_args(void)
{
	const char *const allowed[] = { "id", NULL };
	const struct {
		const char *args;
		const char *message;
	} cases[] = {
		{ "{\"id\":\"x\"}", "Invalid parameter type for 'id', expected: integer" },
		{ "{\"id\":1.5}", "Invalid parameter type for 'id', expected: integer" },
		{ "{\"id\":18446744073709551615}",
		  "Invalid parameter type for 'id', expected: integer" },
		{ "{\"id\":null}", "Invalid parameter type for 'id', expected: integer" },
		{ "{\"id\":true}", "Invalid parameter type for 'id', expected: integer" },
		{ "{\"id\":1,\"z\":2}", "Parameter 'z' is unexpected" },
		{ "{}", "Parameter 'id' is missing" },
	};

	for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
		g_autoptr(JsonNode) holder = NULL;
		g_autoptr(GError) error = NULL;
		JsonObject *args = parse_obj(cases[i].args, &holder);
		gint64 id = 0;

		if (gb_json_check_members(args, allowed, &error))
			gb_json_get_int(args, "id", GB_JSON_REQUIRED, G_MININT64, G_MAXINT64, &id,
			                &error);
		assert_arg_error(error, cases[i].message);
	}
}

int main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	g_test_add_func("/json/parse/valid", test_json_parse_valid);
	g_test_add_func("/json/parse/bad", test_json_parse_bad);
	g_test_add_func("/json/parse/strict", test_json_parse_strict);
	g_test_add_func("/json/parse/numbers", test_json_parse_numbers);
	g_test_add_func("/json/parse/duplicate", test_json_parse_duplicate);
	g_test_add_func("/json/parse/bytes", test_json_parse_bytes);
	g_test_add_func("/json/parse/deep", test_json_parse_deep);
	g_test_add_func("/json/to-string", test_json_to_string);
	g_test_add_func("/json/get/int", test_json_get_int);
	g_test_add_func("/json/get/int-range", test_json_get_int_range);
	g_test_add_func("/json/get/double", test_json_get_double);
	g_test_add_func("/json/get/bool-string", test_json_get_bool_string);
	g_test_add_func("/json/get/object-array", test_json_get_object_array);
	g_test_add_func("/json/get/int-array", test_json_get_int_array);
	g_test_add_func("/json/get/strv", test_json_get_strv);
	g_test_add_func("/json/node-getters", test_json_node_getters);
	g_test_add_func("/json/has-and-members", test_json_has_and_members);
	g_test_add_func("/json/guest-sync-args", test_json_guest_sync_args);
	g_test_add_func("/json/to-string-safe", test_json_to_string_safe);
	g_test_add_func("/json/measure", test_json_measure);
	return g_test_run();
}
