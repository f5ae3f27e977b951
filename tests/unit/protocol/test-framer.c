/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"

#include <string.h>

#include "guestbench-protocol.h"

/* What the framer handed out, in order: messages as-is, errors as "ERR <code>: <text>". */
typedef struct {
	GPtrArray *items;
	guint stop_after; /* return FALSE once this many items were seen; 0: never */
	GbFramer *framer; /* to check the memory bound from inside the callback */
	gsize max_allocated;
} Collect;

static gboolean collect_cb(const char *msg, gsize len, const GError *error, gpointer user_data)
{
	Collect *c = user_data;

	if (msg != NULL) {
		g_assert_no_error(error);
		g_assert_cmpuint(strlen(msg), ==, len); /* NUL-terminated, no NUL inside */
		g_ptr_array_add(c->items, g_strndup(msg, len));
	} else {
		g_assert_nonnull(error);
		g_assert_true(error->domain == GB_ERROR);
		g_ptr_array_add(c->items,
		                g_strdup_printf("ERR %d: %s", error->code, error->message));
	}
	if (c->framer != NULL)
		c->max_allocated = MAX(c->max_allocated, gb_framer_get_allocated(c->framer));
	return c->stop_after == 0 || c->items->len < c->stop_after;
}

static void collect_init(Collect *c)
{
	memset(c, 0, sizeof(*c));
	c->items = g_ptr_array_new_with_free_func(g_free);
}

static void collect_clear(Collect *c)
{
	g_ptr_array_unref(c->items);
}

static void push_all(GbFramer *framer, const char *data, gsize len, Collect *c)
{
	gsize done = gb_framer_push(framer, (const guint8 *)data, len, collect_cb, c);

	g_assert_cmpuint(done, ==, len);
}

static void assert_items(Collect *c, const char *const *expected)
{
	guint n = g_strv_length((char **)expected);

	for (guint i = 0; i < MIN(n, c->items->len); i++)
		g_assert_cmpstr(g_ptr_array_index(c->items, i), ==, expected[i]);
	g_assert_cmpuint(c->items->len, ==, n);
}

/* Every message here is complete and valid; each one is delivered byte-exact. */
static const char *const valid_messages[] = {
	"{\"execute\":\"guest-ping\"}",
	"{}",
	"[]",
	"[1,2,3]",
	"{\"a\":{\"b\":[{\"c\":{}}]},\"d\":[[[]]]}",
	"{\"s\":\"a}b{c]d[e\"}",
	"{\"s\":\"quote \\\" inside } \"}",
	"{\"s\":\"ends in a backslash \\\\\"}",
	"{\"s\":\"\\\\\\\"\"}",
	"[\"]\",\"[\",\"\\\\\",\"\\\"\",\"{\"]",
	"{\"u\":\"\\u00e9\\ud83d\\ude00\\u007d\"}",
	"{\"utf8\":\"\xc3\xa9\xf0\x9f\x98\x80\xe2\x82\xac}\"}",
	"{\"execute\":\"guest-sync\",\"arguments\":{\"id\":123456789},\"id\":\"x\"}",
	"\"a top-level string with } and { and \\\"\"",
	"{\"tab\":\"a\tb\",\"nl\":\"c\\nd\"}",
	NULL,
};

static GString *valid_stream(void)
{
	GString *str = g_string_new(NULL);

	for (guint i = 0; valid_messages[i] != NULL; i++) {
		g_string_append(str, valid_messages[i]);
		/* vary the separators: none, spaces, newlines, CRLF, tabs */
		g_string_append(str, (const char *[]){ "", " ", "\n", "\r\n", "\t \n" }[i % 5]);
	}
	return str;
}

static void test_framer_valid_whole(void)
{
	g_autoptr(GbFramer) framer = gb_framer_new(0, 0);
	g_autoptr(GString) stream = valid_stream();
	Collect c;

	collect_init(&c);
	push_all(framer, stream->str, stream->len, &c);
	assert_items(&c, valid_messages);
	g_assert_false(gb_framer_is_partial(framer));
	collect_clear(&c);
}

static void test_framer_valid_split(void)
{
	g_autoptr(GString) stream = valid_stream();

	/* two chunks, split at every byte boundary */
	for (gsize cut = 0; cut <= stream->len; cut++) {
		g_autoptr(GbFramer) framer = gb_framer_new(0, 0);
		Collect c;

		collect_init(&c);
		push_all(framer, stream->str, cut, &c);
		push_all(framer, stream->str + cut, stream->len - cut, &c);
		assert_items(&c, valid_messages);
		collect_clear(&c);
	}
}

static void test_framer_valid_bytewise(void)
{
	g_autoptr(GbFramer) framer = gb_framer_new(0, 0);
	g_autoptr(GString) stream = valid_stream();
	Collect c;

	collect_init(&c);
	for (gsize i = 0; i < stream->len; i++)
		push_all(framer, stream->str + i, 1, &c);
	assert_items(&c, valid_messages);
	collect_clear(&c);
}

static void test_framer_each_message_split(void)
{
	/* each message alone, split in three at every pair of boundaries */
	for (guint m = 0; valid_messages[m] != NULL; m++) {
		const char *msg = valid_messages[m];
		gsize len = strlen(msg);

		for (gsize a = 0; a <= len; a++) {
			for (gsize b = a; b <= len; b++) {
				g_autoptr(GbFramer) framer = gb_framer_new(0, 0);
				const char *expected[] = { msg, NULL };
				Collect c;

				collect_init(&c);
				push_all(framer, msg, a, &c);
				push_all(framer, msg + a, b - a, &c);
				push_all(framer, msg + b, len - b, &c);
				assert_items(&c, expected);
				collect_clear(&c);
			}
		}
	}
}

static void test_framer_scalars(void)
{
	g_autoptr(GbFramer) framer = gb_framer_new(0, 0);
	const char input[] = "123 abc}\"str\" 4.5,true:null\n-7\xff"
	                     "\xc3\xa9x {\"a\":1}";
	const char *expected[] = { "123", "abc",  "}",  "\"str\"",   "4.5",       ",", "true",
		                   ":",   "null", "-7", "\xc3\xa9x", "{\"a\":1}", NULL };
	Collect c;

	collect_init(&c);
	push_all(framer, input, sizeof(input) - 1, &c);
	assert_items(&c, expected);
	collect_clear(&c);
}

static void test_framer_stray_and_mismatched(void)
{
	g_autoptr(GbFramer) framer = gb_framer_new(0, 0);
	const char input[] = "} ] {] [}";
	const char *expected[] = { "}", "]", "{]", "[}", NULL };
	Collect c;

	collect_init(&c);
	push_all(framer, input, sizeof(input) - 1, &c);
	assert_items(&c, expected);
	collect_clear(&c);
}

static void test_framer_whitespace_only(void)
{
	g_autoptr(GbFramer) framer = gb_framer_new(0, 0);
	const char input[] = " \r\n\t  \n\n";
	Collect c;

	collect_init(&c);
	push_all(framer, input, sizeof(input) - 1, &c);
	g_assert_cmpuint(c.items->len, ==, 0);
	g_assert_false(gb_framer_is_partial(framer));
	collect_clear(&c);
}

static void test_framer_reset_between_silent(void)
{
	g_autoptr(GbFramer) framer = gb_framer_new(0, 0);
	const char input[] = "\xff{\"a\":1}\xff\xff \n\xff{\"b\":2}\xff";
	const char *expected[] = { "{\"a\":1}", "{\"b\":2}", NULL };
	Collect c;

	collect_init(&c);
	push_all(framer, input, sizeof(input) - 1, &c);
	assert_items(&c, expected);
	collect_clear(&c);
}

static void test_framer_garbage_then_reset(void)
{
	g_autoptr(GbFramer) framer = gb_framer_new(0, 0);
	const char input[] = "garbage {\"a\": [1, \xff{\"execute\":\"guest-ping\"}";
	const char *expected[] = {
		"garbage",
		"ERR 1: JSON parse error, message cut short by a 0xFF or control byte",
		"{\"execute\":\"guest-ping\"}",
		NULL,
	};
	Collect c;

	collect_init(&c);
	push_all(framer, input, sizeof(input) - 1, &c);
	assert_items(&c, expected);
	collect_clear(&c);
}

static void test_framer_reset_in_string(void)
{
	g_autoptr(GbFramer) framer = gb_framer_new(0, 0);
	/* an unterminated string would swallow everything without the reset */
	const char input[] = "{\"a\":\"never closed } \xff{\"b\":1}\"x\xff\"y\"";
	const char *expected[] = {
		"ERR 1: JSON parse error, message cut short by a 0xFF or control byte",
		"{\"b\":1}",
		"ERR 1: JSON parse error, message cut short by a 0xFF or control byte",
		"\"y\"",
		NULL,
	};
	Collect c;

	collect_init(&c);
	push_all(framer, input, sizeof(input) - 1, &c);
	assert_items(&c, expected);
	collect_clear(&c);
}

static void test_framer_control_byte(void)
{
	g_autoptr(GbFramer) framer = gb_framer_new(0, 0);
	/* a raw control byte inside a string resets too; the tail is junk */
	const char input[] = "{\"a\":\"x\x01y\"} {\"b\":\"\x00\"}\x1b{\"c\":3}";
	const char *expected[] = {
		"ERR 1: JSON parse error, message cut short by a 0xFF or control byte",
		"y\"",
		"}",
		"ERR 1: JSON parse error, message cut short by a 0xFF or control byte",
		"ERR 1: JSON parse error, message cut short by a 0xFF or control byte",
		"{\"c\":3}",
		NULL,
	};
	Collect c;

	collect_init(&c);
	push_all(framer, input, sizeof(input) - 1, &c);
	assert_items(&c, expected);
	collect_clear(&c);
}

static void test_framer_oversize_small(void)
{
	g_autoptr(GbFramer) framer = gb_framer_new(16, 8);
	/* closers inside the skipped string must not end the skip early */
	const char input[] = "{\"a\":\"}}}}]]]]}}}}]]]]\",\"b\":[{}]}  {\"b\":1}"
	                     "{\"a\":\"12345678\"}"  /* exactly 16 bytes: fine */
	                     "{\"a\":\"123456789\"}" /* 17: the last byte is over */
	                     "[1]"
	                     "12345678901234567890 [2]"
	                     "\"0123456789abcdefgh\" [3]";
	const char *expected[] = {
		"ERR 2: JSON message exceeds 16 bytes",
		"{\"b\":1}",
		"{\"a\":\"12345678\"}",
		"ERR 2: JSON message exceeds 16 bytes",
		"[1]",
		"ERR 2: JSON message exceeds 16 bytes",
		"[2]",
		"ERR 2: JSON message exceeds 16 bytes",
		"[3]",
		NULL,
	};
	Collect c;

	collect_init(&c);
	c.framer = framer;
	push_all(framer, input, sizeof(input) - 1, &c);
	assert_items(&c, expected);
	g_assert_cmpuint(c.max_allocated, <=, 17);
	collect_clear(&c);
}

/*
 * The values limit: containers plus commas outside strings; a message over it
 * is one error and skipped to its end, the next one is whole again.
 */
static void test_framer_max_values(void)
{
	g_autoptr(GbFramer) framer = gb_framer_new(1024, 8);
	const char input[] = "[0,0,0,0]"             /* 1 + 3 commas: 4 values, fine */
	                     "[0,0,0,0,0]"           /* 5: over */
	                     "{\"a\":\"x,y,z,w,v\"}" /* commas in a string: 1 */
	                     "{\"a\":[[]],\"b\":1}"  /* 3 containers + 1 comma: 4 */
	                     "{\"a\":[[[],{}]]}"     /* 5: over, skipped to the end */
	                     "[1] \"a,b,c,d,e\"";
	const char *expected[] = {
		"[0,0,0,0]",
		"ERR 2: JSON message has more than 4 values",
		"{\"a\":\"x,y,z,w,v\"}",
		"{\"a\":[[]],\"b\":1}",
		"ERR 2: JSON message has more than 4 values",
		"[1]",
		"\"a,b,c,d,e\"",
		NULL,
	};
	Collect c;

	gb_framer_set_max_values(framer, 4);
	collect_init(&c);
	c.framer = framer;
	push_all(framer, input, sizeof(input) - 1, &c);
	assert_items(&c, expected);
	collect_clear(&c);

	/* 0: no limit */
	gb_framer_set_max_values(framer, 0);
	collect_init(&c);
	push_all(framer, "[0,0,0,0,0,0]", 13, &c);
	assert_items(&c, (const char *const[]){ "[0,0,0,0,0,0]", NULL });
	collect_clear(&c);
}

/* The limit can change between messages and inside one: what is stored from then on obeys it. */
static void test_framer_set_max_size(void)
{
	g_autoptr(GbFramer) framer = gb_framer_new(1024, 8);
	g_autoptr(GString) big = g_string_new("[");
	const char *expected_big[] = { "ERR 2: JSON message exceeds 16 bytes", "[1]", NULL };
	const char *expected_cut[] = { "ERR 2: JSON message exceeds 8 bytes", "[2]", NULL };
	Collect c;

	g_assert_cmpuint(gb_framer_get_max_size(framer), ==, 1024);
	/* a large message under the large limit, then the buffer goes with a lower one */
	for (guint i = 0; i < 300; i++)
		g_string_append(big, "0,");
	g_string_append(big, "0]");
	collect_init(&c);
	push_all(framer, big->str, big->len, &c);
	g_assert_cmpuint(c.items->len, ==, 1);
	g_assert_cmpuint(gb_framer_get_allocated(framer), >, 17);
	collect_clear(&c);
	gb_framer_set_max_size(framer, 16);
	g_assert_cmpuint(gb_framer_get_max_size(framer), ==, 16);
	g_assert_cmpuint(gb_framer_get_allocated(framer), <=, 17);

	/* the same message is now over the limit, skipped without being stored */
	collect_init(&c);
	c.framer = framer;
	push_all(framer, big->str, big->len, &c);
	push_all(framer, "[1]", 3, &c);
	assert_items(&c, expected_big);
	g_assert_cmpuint(c.max_allocated, <=, 17);
	collect_clear(&c);

	/* lowered in the middle of a message that is already longer: skipped from there */
	collect_init(&c);
	push_all(framer, "[1,2,3,4,5,6", 12, &c);
	gb_framer_set_max_size(framer, 8);
	push_all(framer, ",7]  [2]", 8, &c);
	assert_items(&c, expected_cut);
	collect_clear(&c);

	/* 0: back to the default */
	gb_framer_set_max_size(framer, 0);
	g_assert_cmpuint(gb_framer_get_max_size(framer), ==, GB_FRAMER_DEFAULT_MAX_SIZE);
}

static void test_framer_oversize_reset(void)
{
	g_autoptr(GbFramer) framer = gb_framer_new(8, 8);
	/* a reset ends a skip at once, silently */
	const char input[] = "{\"a\":\"xxxxxxxxxxxx\xff{\"b\":1}";
	const char *expected[] = { "ERR 2: JSON message exceeds 8 bytes", "{\"b\":1}", NULL };
	Collect c;

	collect_init(&c);
	push_all(framer, input, sizeof(input) - 1, &c);
	assert_items(&c, expected);
	collect_clear(&c);
}

static void test_framer_overdepth_small(void)
{
	g_autoptr(GbFramer) framer = gb_framer_new(1024, 4);
	const char input[] =
	    "[[[[1]]]] [[[[[1]]]]] {\"a\":{\"b\":{\"c\":{\"d\":{}}}}} [[[[\"[[[[[\"]]]]";
	const char *expected[] = {
		"[[[[1]]]]",
		"ERR 3: JSON nesting exceeds 4 levels",
		"ERR 3: JSON nesting exceeds 4 levels",
		"[[[[\"[[[[[\"]]]]",
		NULL,
	};
	Collect c;

	collect_init(&c);
	push_all(framer, input, sizeof(input) - 1, &c);
	assert_items(&c, expected);
	collect_clear(&c);
}

static void test_framer_default_limits(void)
{
	g_autoptr(GbFramer) framer = gb_framer_new(0, 0);
	g_autoptr(GString) deep_ok = g_string_new(NULL);
	g_autoptr(GString) deep_bad = g_string_new(NULL);
	const char *expected[] = { NULL, "ERR 3: JSON nesting exceeds 64 levels", NULL };
	Collect c;

	for (guint i = 0; i < 64; i++)
		g_string_append_c(deep_ok, '[');
	for (guint i = 0; i < 64; i++)
		g_string_append_c(deep_ok, ']');
	for (guint i = 0; i < 65; i++)
		g_string_append_c(deep_bad, '{');
	expected[0] = deep_ok->str;
	collect_init(&c);
	push_all(framer, deep_ok->str, deep_ok->len, &c);
	push_all(framer, deep_bad->str, deep_bad->len, &c);
	assert_items(&c, expected);
	collect_clear(&c);
}

static void test_framer_huge_message(void)
{
	g_autoptr(GbFramer) framer = gb_framer_new(0, 0);
	g_autoptr(GString) big = g_string_new("{\"a\":\"");
	const char *expected[] = { "ERR 2: JSON message exceeds 1048576 bytes",
		                   "{\"execute\":\"guest-ping\"}", NULL };
	const char next[] = " {\"execute\":\"guest-ping\"}";
	Collect c;

	while (big->len < 2 * 1024 * 1024)
		g_string_append(big, "{[\\\"x]}");
	g_string_append(big, "\"}");
	collect_init(&c);
	c.framer = framer;
	for (gsize off = 0; off < big->len; off += 4096) {
		push_all(framer, big->str + off, MIN(4096, big->len - off), &c);
		/* the buffer never grows past the limit (+1 for the NUL) */
		g_assert_cmpuint(gb_framer_get_allocated(framer), <=,
		                 GB_FRAMER_DEFAULT_MAX_SIZE + 1);
		g_assert_cmpuint(gb_framer_get_buffered(framer), <=, GB_FRAMER_DEFAULT_MAX_SIZE);
	}
	push_all(framer, next, sizeof(next) - 1, &c);
	assert_items(&c, expected);
	/* a large message's buffer is not kept once it is over */
	g_assert_cmpuint(gb_framer_get_allocated(framer), <, 64 * 1024);
	collect_clear(&c);
}

static void test_framer_huge_deep(void)
{
	g_autoptr(GbFramer) framer = gb_framer_new(0, 0);
	g_autoptr(GString) deep = g_string_new(NULL);
	const char *expected[] = { "ERR 3: JSON nesting exceeds 64 levels", "{\"b\":1}", NULL };
	Collect c;

	for (guint i = 0; i < 100000; i++)
		g_string_append_c(deep, '[');
	for (guint i = 0; i < 100000; i++)
		g_string_append_c(deep, ']');
	g_string_append(deep, "{\"b\":1}");
	collect_init(&c);
	c.framer = framer;
	push_all(framer, deep->str, deep->len, &c);
	assert_items(&c, expected);
	g_assert_cmpuint(c.max_allocated, <=, 4096);
	collect_clear(&c);
}

static void test_framer_stop(void)
{
	g_autoptr(GbFramer) framer = gb_framer_new(0, 0);
	const char input[] = "{\"a\":1}{\"b\":2} abc {\"c\":3}";
	gsize off = 0;
	gsize done;
	Collect c;

	collect_init(&c);
	c.stop_after = 1;
	/* one message per push: each returns right after the message */
	done = gb_framer_push(framer, (const guint8 *)input, sizeof(input) - 1, collect_cb, &c);
	g_assert_cmpuint(done, ==, 7);
	off += done;
	c.stop_after = 2;
	done = gb_framer_push(framer, (const guint8 *)input + off, sizeof(input) - 1 - off,
	                      collect_cb, &c);
	g_assert_cmpuint(done, ==, 7);
	off += done;
	/* a bare word ends at the space, which stays unconsumed */
	c.stop_after = 3;
	done = gb_framer_push(framer, (const guint8 *)input + off, sizeof(input) - 1 - off,
	                      collect_cb, &c);
	g_assert_cmpstr(input + off + done, ==, " {\"c\":3}");
	off += done;
	c.stop_after = 0;
	push_all(framer, input + off, sizeof(input) - 1 - off, &c);
	{
		const char *expected[] = { "{\"a\":1}", "{\"b\":2}", "abc", "{\"c\":3}", NULL };

		assert_items(&c, expected);
	}
	collect_clear(&c);
}

static void test_framer_stop_on_error(void)
{
	g_autoptr(GbFramer) framer = gb_framer_new(4, 0);
	const char input[] = "[1,2,3,4] [5]";
	const char *expected[] = { "ERR 2: JSON message exceeds 4 bytes", "[5]", NULL };
	gsize done;
	Collect c;

	collect_init(&c);
	c.stop_after = 1;
	done = gb_framer_push(framer, (const guint8 *)input, sizeof(input) - 1, collect_cb, &c);
	g_assert_cmpuint(done, ==, 5); /* up to and including the byte over the limit */
	c.stop_after = 0;
	push_all(framer, input + done, sizeof(input) - 1 - done, &c);
	assert_items(&c, expected);
	collect_clear(&c);
}

static void test_framer_partial_and_reset(void)
{
	g_autoptr(GbFramer) framer = gb_framer_new(0, 0);
	const char *expected[] = { "{\"b\":2}", NULL };
	Collect c;

	collect_init(&c);
	g_assert_false(gb_framer_is_partial(framer));
	push_all(framer, "{\"a\":\"}", 7, &c);
	g_assert_true(gb_framer_is_partial(framer));
	g_assert_cmpuint(gb_framer_get_buffered(framer), ==, 7);
	/* an explicit reset (new client) is silent */
	gb_framer_reset(framer);
	g_assert_false(gb_framer_is_partial(framer));
	push_all(framer, "{\"b\":2}", 7, &c);
	assert_items(&c, expected);
	collect_clear(&c);
}

/* Framing must not depend on how the stream is chunked, whatever the bytes. */
static void test_framer_random_chunking(void)
{
	for (guint round = 0; round < 200; round++) {
		g_autoptr(GbFramer) whole = gb_framer_new(64, 6);
		g_autoptr(GbFramer) chunked = gb_framer_new(64, 6);
		static const char alphabet[] = "{}[]\"\\ ,:a1\n\xff\x01\xc3";
		guint8 data[2048];
		Collect c1;
		Collect c2;

		for (guint i = 0; i < sizeof(data); i++)
			data[i] = (guint8)alphabet[g_test_rand_int_range(0, sizeof(alphabet) - 1)];
		collect_init(&c1);
		collect_init(&c2);
		c2.framer = chunked;
		g_assert_cmpuint(gb_framer_push(whole, data, sizeof(data), collect_cb, &c1), ==,
		                 sizeof(data));
		for (gsize off = 0; off < sizeof(data);) {
			/* not inside MIN(): it would draw twice */
			gsize want = (gsize)g_test_rand_int_range(1, 40);
			gsize n = MIN(want, sizeof(data) - off);

			g_assert_cmpuint(gb_framer_push(chunked, data + off, n, collect_cb, &c2),
			                 ==, n);
			off += n;
		}
		for (guint i = 0; i < MIN(c1.items->len, c2.items->len); i++)
			g_assert_cmpstr(g_ptr_array_index(c1.items, i), ==,
			                g_ptr_array_index(c2.items, i));
		g_assert_cmpuint(c1.items->len, ==, c2.items->len);
		g_assert_cmpuint(c2.max_allocated, <=, 65);
		collect_clear(&c1);
		collect_clear(&c2);
	}
}

int main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	g_test_add_func("/framer/valid-whole", test_framer_valid_whole);
	g_test_add_func("/framer/valid-split", test_framer_valid_split);
	g_test_add_func("/framer/valid-bytewise", test_framer_valid_bytewise);
	g_test_add_func("/framer/each-message-split", test_framer_each_message_split);
	g_test_add_func("/framer/scalars", test_framer_scalars);
	g_test_add_func("/framer/stray-and-mismatched", test_framer_stray_and_mismatched);
	g_test_add_func("/framer/whitespace-only", test_framer_whitespace_only);
	g_test_add_func("/framer/reset-between-silent", test_framer_reset_between_silent);
	g_test_add_func("/framer/garbage-then-reset", test_framer_garbage_then_reset);
	g_test_add_func("/framer/reset-in-string", test_framer_reset_in_string);
	g_test_add_func("/framer/control-byte", test_framer_control_byte);
	g_test_add_func("/framer/oversize-small", test_framer_oversize_small);
	g_test_add_func("/framer/set-max-size", test_framer_set_max_size);
	g_test_add_func("/framer/max-values", test_framer_max_values);
	g_test_add_func("/framer/oversize-reset", test_framer_oversize_reset);
	g_test_add_func("/framer/overdepth-small", test_framer_overdepth_small);
	g_test_add_func("/framer/default-limits", test_framer_default_limits);
	g_test_add_func("/framer/huge-message", test_framer_huge_message);
	g_test_add_func("/framer/huge-deep", test_framer_huge_deep);
	g_test_add_func("/framer/stop", test_framer_stop);
	g_test_add_func("/framer/stop-on-error", test_framer_stop_on_error);
	g_test_add_func("/framer/partial-and-reset", test_framer_partial_and_reset);
	g_test_add_func("/framer/random-chunking", test_framer_random_chunking);
	return g_test_run();
}
