/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Hostile wire input against the real agent binary on a unix socket: wrong
 * types and out-of-range values for every argument of every command, broken
 * UTF-8, NUL and control bytes, a 100 MiB message, 100 000-deep nesting,
 * 10 000 pipelined requests, clients that vanish mid-request and mid-reply,
 * and 20 000 bad requests with memory staying flat. Also what the agent gives
 * up once its port is open (capabilities, no_new_privs).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <glib/gstdio.h>

#include "harness.h"

static void hostile_start(Harness *h, const char *const *extra)
{
	harness_init(h);
	harness_start_agent(h, extra);
}

/* The agent still answers: it neither died nor lost the stream. */
static void hostile_assert_alive(Harness *h)
{
	g_autoptr(JsonNode) reply = harness_call(h, "{\"execute\":\"guest-sync\","
	                                            "\"arguments\":{\"id\":424242}}");
	g_assert_cmpint(json_node_get_int(harness_get_return(reply)), ==, 424242);
}

/* The desc of an error reply (borrowed from reply). */
static const char *hostile_error_desc(JsonNode *reply)
{
	JsonObject *obj = json_node_get_object(reply);
	JsonObject *err;

	g_assert_true(json_object_has_member(obj, "error"));
	err = json_object_get_object_member(obj, "error");
	return json_object_get_string_member(err, "desc");
}

typedef struct {
	const char *request;
	const char *desc_part; /* a substring the error must hold (names what is wrong) */
} HostileArg;

/*
 * Every argument of every command, with wrong types and values just outside
 * the documented ranges. gb-bench-start rows go through dry_run where the
 * row is otherwise valid, so that nothing runs: a row that was wrongly
 * accepted returns a dry-run result and fails the test.
 */
static const HostileArg hostile_args[] = {
	/* guest-sync / guest-sync-delimited: id */
	{ "{\"execute\":\"guest-sync\"}", "'id'" },
	{ "{\"execute\":\"guest-sync\",\"arguments\":{}}", "'id'" },
	{ "{\"execute\":\"guest-sync\",\"arguments\":{\"id\":\"1\"}}", "'id'" },
	{ "{\"execute\":\"guest-sync\",\"arguments\":{\"id\":1.5}}", "'id'" },
	{ "{\"execute\":\"guest-sync\",\"arguments\":{\"id\":true}}", "'id'" },
	{ "{\"execute\":\"guest-sync\",\"arguments\":{\"id\":null}}", "'id'" },
	{ "{\"execute\":\"guest-sync\",\"arguments\":{\"id\":[1]}}", "'id'" },
	{ "{\"execute\":\"guest-sync\",\"arguments\":{\"id\":{}}}", "'id'" },
	{ "{\"execute\":\"guest-sync\",\"arguments\":{\"id\":9223372036854775808}}", "'id'" },
	{ "{\"execute\":\"guest-sync\",\"arguments\":{\"id\":1e400}}", "" },
	{ "{\"execute\":\"guest-sync\",\"arguments\":{\"id\":1,\"x\":1}}", "'x'" },
	{ "{\"execute\":\"guest-sync\",\"arguments\":[1]}", "arguments" },
	{ "{\"execute\":\"guest-sync-delimited\",\"arguments\":{\"id\":\"x\"}}", "'id'" },
	{ "{\"execute\":\"guest-sync-delimited\",\"arguments\":{\"id\":-1e300}}", "'id'" },
	/* commands without arguments */
	{ "{\"execute\":\"guest-ping\",\"arguments\":{\"a\":1}}", "'a'" },
	{ "{\"execute\":\"guest-info\",\"arguments\":{\"verbose\":true}}", "'verbose'" },
	{ "{\"execute\":\"gb-bench-list\",\"arguments\":{\"job\":1}}", "'job'" },
	{ "{\"execute\":\"guest-ping\",\"arguments\":\"x\"}", "arguments" },
	/* gb-get-facts: sections, steal_window_ms, and nothing path-like */
	{ "{\"execute\":\"gb-get-facts\",\"arguments\":{\"sections\":\"cpu\"}}", "'sections'" },
	{ "{\"execute\":\"gb-get-facts\",\"arguments\":{\"sections\":[1]}}", "'sections" },
	{ "{\"execute\":\"gb-get-facts\",\"arguments\":{\"sections\":[null]}}", "'sections" },
	{ "{\"execute\":\"gb-get-facts\",\"arguments\":{\"sections\":[\"cpu\",[]]}}", "'sections" },
	{ "{\"execute\":\"gb-get-facts\",\"arguments\":{\"sections\":{}}}", "'sections'" },
	{ "{\"execute\":\"gb-get-facts\",\"arguments\":{\"sections\":[\"nope\"]}}", "nope" },
	{ "{\"execute\":\"gb-get-facts\",\"arguments\":{\"sections\":[\"/etc/shadow\"]}}",
	  "unknown section" },
	{ "{\"execute\":\"gb-get-facts\",\"arguments\":{\"sections\":[\"../../../etc/passwd\"]}}",
	  "unknown section" },
	{ "{\"execute\":\"gb-get-facts\",\"arguments\":{\"sections\":[\"cpu\\u0000x\"]}}",
	  "\\u0000 is not supported" },
	{ "{\"execute\":\"gb-get-facts\",\"arguments\":{\"path\":\"/etc/passwd\"}}", "'path'" },
	{ "{\"execute\":\"gb-get-facts\",\"arguments\":{\"sysroot\":\"/\"}}", "'sysroot'" },
	{ "{\"execute\":\"gb-get-facts\",\"arguments\":{\"steal_window_ms\":-1}}",
	  "'steal_window_ms'" },
	{ "{\"execute\":\"gb-get-facts\",\"arguments\":{\"steal_window_ms\":5001}}",
	  "'steal_window_ms'" },
	{ "{\"execute\":\"gb-get-facts\",\"arguments\":{\"steal_window_ms\":\"10\"}}",
	  "'steal_window_ms'" },
	{ "{\"execute\":\"gb-get-facts\",\"arguments\":{\"steal_window_ms\":1.5}}",
	  "'steal_window_ms'" },
	{ "{\"execute\":\"gb-get-facts\",\"arguments\":{\"steal_window_ms\":1e20}}",
	  "'steal_window_ms'" },
	{ "{\"execute\":\"gb-get-facts\",\"arguments\":{\"steal_window_ms\":{}}}",
	  "'steal_window_ms'" },
	/* gb-bench-start: test, params, runs, dry_run */
	{ "{\"execute\":\"gb-bench-start\"}", "'test'" },
	{ "{\"execute\":\"gb-bench-start\",\"arguments\":{\"test\":1}}", "'test'" },
	{ "{\"execute\":\"gb-bench-start\",\"arguments\":{\"test\":\"nope\"}}", "nope" },
	{ "{\"execute\":\"gb-bench-start\",\"arguments\":{\"test\":\"/bin/sh\"}}", "Unknown" },
	{ "{\"execute\":\"gb-bench-start\",\"arguments\":{\"test\":\"aes\",\"params\":1}}",
	  "'params'" },
	{ "{\"execute\":\"gb-bench-start\",\"arguments\":{\"test\":\"aes\",\"params\":[]}}",
	  "'params'" },
	{ "{\"execute\":\"gb-bench-start\",\"arguments\":{\"test\":\"aes\",\"x\":{}}}", "'x'" },
	{ "{\"execute\":\"gb-bench-start\",\"arguments\":{\"test\":\"aes\",\"params\":"
	  "{\"runs\":0,\"dry_run\":true}}}",
	  "'runs'" },
	{ "{\"execute\":\"gb-bench-start\",\"arguments\":{\"test\":\"aes\",\"params\":"
	  "{\"runs\":101,\"dry_run\":true}}}",
	  "'runs'" },
	{ "{\"execute\":\"gb-bench-start\",\"arguments\":{\"test\":\"aes\",\"params\":"
	  "{\"runs\":\"2\",\"dry_run\":true}}}",
	  "'runs'" },
	{ "{\"execute\":\"gb-bench-start\",\"arguments\":{\"test\":\"aes\",\"params\":"
	  "{\"dry_run\":\"yes\"}}}",
	  "'dry_run'" },
	{ "{\"execute\":\"gb-bench-start\",\"arguments\":{\"test\":\"aes\",\"params\":"
	  "{\"dry_run\":1}}}",
	  "'dry_run'" },
	/* aes */
	{ "{\"execute\":\"gb-bench-start\",\"arguments\":{\"test\":\"aes\",\"params\":"
	  "{\"dry_run\":true,\"cipher\":\"des\"}}}",
	  "cipher" },
	{ "{\"execute\":\"gb-bench-start\",\"arguments\":{\"test\":\"aes\",\"params\":"
	  "{\"dry_run\":true,\"cipher\":1}}}",
	  "cipher" },
	{ "{\"execute\":\"gb-bench-start\",\"arguments\":{\"test\":\"aes\",\"params\":"
	  "{\"dry_run\":true,\"sizes\":[]}}}",
	  "sizes" },
	{ "{\"execute\":\"gb-bench-start\",\"arguments\":{\"test\":\"aes\",\"params\":"
	  "{\"dry_run\":true,\"sizes\":[0]}}}",
	  "sizes" },
	{ "{\"execute\":\"gb-bench-start\",\"arguments\":{\"test\":\"aes\",\"params\":"
	  "{\"dry_run\":true,\"sizes\":[1048577]}}}",
	  "sizes" },
	{ "{\"execute\":\"gb-bench-start\",\"arguments\":{\"test\":\"aes\",\"params\":"
	  "{\"dry_run\":true,\"sizes\":\"16\"}}}",
	  "sizes" },
	{ "{\"execute\":\"gb-bench-start\",\"arguments\":{\"test\":\"aes\",\"params\":"
	  "{\"dry_run\":true,\"sizes\":[1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17]}}}",
	  "sizes" },
	{ "{\"execute\":\"gb-bench-start\",\"arguments\":{\"test\":\"aes\",\"params\":"
	  "{\"dry_run\":true,\"seconds\":0}}}",
	  "seconds" },
	{ "{\"execute\":\"gb-bench-start\",\"arguments\":{\"test\":\"aes\",\"params\":"
	  "{\"dry_run\":true,\"seconds\":-1}}}",
	  "seconds" },
	{ "{\"execute\":\"gb-bench-start\",\"arguments\":{\"test\":\"aes\",\"params\":"
	  "{\"dry_run\":true,\"seconds\":1e9}}}",
	  "seconds" },
	{ "{\"execute\":\"gb-bench-start\",\"arguments\":{\"test\":\"aes\",\"params\":"
	  "{\"dry_run\":true,\"seconds\":\"3\"}}}",
	  "seconds" },
	{ "{\"execute\":\"gb-bench-start\",\"arguments\":{\"test\":\"aes\",\"params\":"
	  "{\"dry_run\":true,\"threads\":0}}}",
	  "threads" },
	{ "{\"execute\":\"gb-bench-start\",\"arguments\":{\"test\":\"aes\",\"params\":"
	  "{\"dry_run\":true,\"threads\":100000}}}",
	  "threads" },
	{ "{\"execute\":\"gb-bench-start\",\"arguments\":{\"test\":\"aes\",\"params\":"
	  "{\"dry_run\":true,\"loop\":\"x\"}}}",
	  "loop" },
	{ "{\"execute\":\"gb-bench-start\",\"arguments\":{\"test\":\"aes\",\"params\":"
	  "{\"dry_run\":true,\"aad\":\"yes\"}}}",
	  "aad" },
	{ "{\"execute\":\"gb-bench-start\",\"arguments\":{\"test\":\"aes\",\"params\":"
	  "{\"dry_run\":true,\"aad\":true,\"loop\":\"stream\"}}}",
	  "aad" },
	{ "{\"execute\":\"gb-bench-start\",\"arguments\":{\"test\":\"aes\",\"params\":"
	  "{\"dry_run\":true,\"bogus\":1}}}",
	  "bogus" },
	/* mem */
	{ "{\"execute\":\"gb-bench-start\",\"arguments\":{\"test\":\"mem\",\"params\":"
	  "{\"dry_run\":true,\"size\":4096}}}",
	  "size" },
	{ "{\"execute\":\"gb-bench-start\",\"arguments\":{\"test\":\"mem\",\"params\":"
	  "{\"dry_run\":true,\"size\":1048577}}}",
	  "size" },
	{ "{\"execute\":\"gb-bench-start\",\"arguments\":{\"test\":\"mem\",\"params\":"
	  "{\"dry_run\":true,\"size\":9223372036854775807}}}",
	  "size" },
	{ "{\"execute\":\"gb-bench-start\",\"arguments\":{\"test\":\"mem\",\"params\":"
	  "{\"dry_run\":true,\"size\":\"1M\"}}}",
	  "size" },
	{ "{\"execute\":\"gb-bench-start\",\"arguments\":{\"test\":\"mem\",\"params\":"
	  "{\"dry_run\":true,\"pages\":[\"1g\"]}}}",
	  "pages" },
	{ "{\"execute\":\"gb-bench-start\",\"arguments\":{\"test\":\"mem\",\"params\":"
	  "{\"dry_run\":true,\"pages\":[\"4k\",\"4k\"]}}}",
	  "pages" },
	{ "{\"execute\":\"gb-bench-start\",\"arguments\":{\"test\":\"mem\",\"params\":"
	  "{\"dry_run\":true,\"pages\":\"4k\"}}}",
	  "pages" },
	/* disk */
	{ "{\"execute\":\"gb-bench-start\",\"arguments\":{\"test\":\"disk\",\"params\":"
	  "{\"dry_run\":true,\"dir\":\"relative\"}}}",
	  "dir" },
	{ "{\"execute\":\"gb-bench-start\",\"arguments\":{\"test\":\"disk\",\"params\":"
	  "{\"dry_run\":true,\"dir\":\"/etc\"}}}",
	  "dir" },
	{ "{\"execute\":\"gb-bench-start\",\"arguments\":{\"test\":\"disk\",\"params\":"
	  "{\"dry_run\":true,\"dir\":\"@SCRATCH@/../..\"}}}",
	  "dir" },
	{ "{\"execute\":\"gb-bench-start\",\"arguments\":{\"test\":\"disk\",\"params\":"
	  "{\"dry_run\":true,\"dir\":1}}}",
	  "dir" },
	{ "{\"execute\":\"gb-bench-start\",\"arguments\":{\"test\":\"disk\",\"params\":"
	  "{\"dry_run\":true,\"size\":4095}}}",
	  "size" },
	{ "{\"execute\":\"gb-bench-start\",\"arguments\":{\"test\":\"disk\",\"params\":"
	  "{\"dry_run\":true,\"size\":9223372036854775807}}}",
	  "size" },
	{ "{\"execute\":\"gb-bench-start\",\"arguments\":{\"test\":\"disk\",\"params\":"
	  "{\"dry_run\":true,\"record_sizes\":[511]}}}",
	  "record_sizes" },
	{ "{\"execute\":\"gb-bench-start\",\"arguments\":{\"test\":\"disk\",\"params\":"
	  "{\"dry_run\":true,\"record_sizes\":[1000]}}}",
	  "record_sizes" },
	{ "{\"execute\":\"gb-bench-start\",\"arguments\":{\"test\":\"disk\",\"params\":"
	  "{\"dry_run\":true,\"record_sizes\":[]}}}",
	  "record_sizes" },
	{ "{\"execute\":\"gb-bench-start\",\"arguments\":{\"test\":\"disk\",\"params\":"
	  "{\"dry_run\":true,\"tests\":[\"format\"]}}}",
	  "tests" },
	{ "{\"execute\":\"gb-bench-start\",\"arguments\":{\"test\":\"disk\",\"params\":"
	  "{\"dry_run\":true,\"tests\":[\"write\",\"write\"]}}}",
	  "tests" },
	{ "{\"execute\":\"gb-bench-start\",\"arguments\":{\"test\":\"disk\",\"params\":"
	  "{\"dry_run\":true,\"direct\":\"no\"}}}",
	  "direct" },
	{ "{\"execute\":\"gb-bench-start\",\"arguments\":{\"test\":\"disk\",\"params\":"
	  "{\"dry_run\":true,\"fsync\":0}}}",
	  "fsync" },
	/* net */
	{ "{\"execute\":\"gb-bench-start\",\"arguments\":{\"test\":\"net\",\"params\":"
	  "{\"dry_run\":true,\"mode\":\"x\"}}}",
	  "mode" },
	{ "{\"execute\":\"gb-bench-start\",\"arguments\":{\"test\":\"net\",\"params\":"
	  "{\"dry_run\":true,\"mode\":\"connect\"}}}",
	  "address" },
	{ "{\"execute\":\"gb-bench-start\",\"arguments\":{\"test\":\"net\",\"params\":"
	  "{\"dry_run\":true,\"mode\":\"connect\",\"address\":\"localhost\"}}}",
	  "address" },
	{ "{\"execute\":\"gb-bench-start\",\"arguments\":{\"test\":\"net\",\"params\":"
	  "{\"dry_run\":true,\"mode\":\"connect\",\"address\":\"0.0.0.0\"}}}",
	  "address" },
	{ "{\"execute\":\"gb-bench-start\",\"arguments\":{\"test\":\"net\",\"params\":"
	  "{\"dry_run\":true,\"port\":0}}}",
	  "port" },
	{ "{\"execute\":\"gb-bench-start\",\"arguments\":{\"test\":\"net\",\"params\":"
	  "{\"dry_run\":true,\"port\":65536}}}",
	  "port" },
	{ "{\"execute\":\"gb-bench-start\",\"arguments\":{\"test\":\"net\",\"params\":"
	  "{\"dry_run\":true,\"direction\":\"sideways\"}}}",
	  "direction" },
	{ "{\"execute\":\"gb-bench-start\",\"arguments\":{\"test\":\"net\",\"params\":"
	  "{\"dry_run\":true,\"streams\":0}}}",
	  "streams" },
	{ "{\"execute\":\"gb-bench-start\",\"arguments\":{\"test\":\"net\",\"params\":"
	  "{\"dry_run\":true,\"streams\":65}}}",
	  "streams" },
	{ "{\"execute\":\"gb-bench-start\",\"arguments\":{\"test\":\"net\",\"params\":"
	  "{\"dry_run\":true,\"seconds\":0}}}",
	  "seconds" },
	{ "{\"execute\":\"gb-bench-start\",\"arguments\":{\"test\":\"net\",\"params\":"
	  "{\"dry_run\":true,\"omit\":61}}}",
	  "omit" },
	{ "{\"execute\":\"gb-bench-start\",\"arguments\":{\"test\":\"net\",\"params\":"
	  "{\"dry_run\":true,\"accept_timeout\":0}}}",
	  "accept_timeout" },
	{ "{\"execute\":\"gb-bench-start\",\"arguments\":{\"test\":\"net\",\"params\":"
	  "{\"dry_run\":true,\"accept_timeout\":601}}}",
	  "accept_timeout" },
	/* gb-bench-status / gb-bench-cancel: job */
	{ "{\"execute\":\"gb-bench-status\"}", "'job'" },
	{ "{\"execute\":\"gb-bench-status\",\"arguments\":{\"job\":0}}", "'job'" },
	{ "{\"execute\":\"gb-bench-status\",\"arguments\":{\"job\":-1}}", "'job'" },
	{ "{\"execute\":\"gb-bench-status\",\"arguments\":{\"job\":\"1\"}}", "'job'" },
	{ "{\"execute\":\"gb-bench-status\",\"arguments\":{\"job\":1.5}}", "'job'" },
	{ "{\"execute\":\"gb-bench-status\",\"arguments\":{\"job\":null}}", "'job'" },
	{ "{\"execute\":\"gb-bench-status\",\"arguments\":{\"job\":9999}}", "No such job" },
	{ "{\"execute\":\"gb-bench-status\",\"arguments\":{\"job\":1,\"all\":true}}", "'all'" },
	{ "{\"execute\":\"gb-bench-cancel\"}", "'job'" },
	{ "{\"execute\":\"gb-bench-cancel\",\"arguments\":{\"job\":0}}", "'job'" },
	{ "{\"execute\":\"gb-bench-cancel\",\"arguments\":{\"job\":[1]}}", "'job'" },
	{ "{\"execute\":\"gb-bench-cancel\",\"arguments\":{\"job\":9223372036854775807}}",
	  "No such job" },
	{ NULL, NULL },
};

static void test_args(void)
{
	Harness h;
	g_autofree char *scratch = NULL;
	g_autofree char *scratch_arg = NULL;
	const char *extra[] = { "--scratch-dir", NULL, NULL };

	harness_init(&h);
	scratch = g_build_filename(h.tmpdir, "scratch", NULL);
	g_assert_cmpint(g_mkdir(scratch, 0700), ==, 0);
	extra[1] = scratch;
	harness_start_agent(&h, extra);
	for (guint i = 0; hostile_args[i].request != NULL; i++) {
		g_autoptr(GString) req = g_string_new(hostile_args[i].request);
		g_autoptr(JsonNode) reply = NULL;
		const char *desc;

		g_string_replace(req, "@SCRATCH@", scratch, 0);
		reply = harness_call(&h, req->str);
		harness_assert_error(reply, "GenericError", NULL);
		desc = hostile_error_desc(reply);
		g_test_message("%s -> %s", req->str, desc);
		g_assert_cmpstr(desc, !=, "");
		if (strstr(desc, hostile_args[i].desc_part) == NULL)
			g_error("%s: '%s' does not name '%s'", req->str, desc,
			        hostile_args[i].desc_part);
	}
	/* nothing was started by any of them */
	{
		g_autoptr(JsonNode) list = harness_call(&h, "{\"execute\":\"gb-bench-list\"}");
		JsonObject *ret = json_node_get_object(harness_get_return(list));
		g_assert_cmpuint(json_array_get_length(json_object_get_array_member(ret, "jobs")),
		                 ==, 0);
	}
	hostile_assert_alive(&h);
	harness_stop(&h);
}

/* Each valid dry run answers its normalised parameters and starts nothing. */
static void test_dry_run(void)
{
	Harness h;
	g_autofree char *scratch = NULL;
	const char *extra[] = { "--scratch-dir", NULL, NULL };
	const char *const tests[] = { "aes", "mem", "disk", "net" };

	harness_init(&h);
	scratch = g_build_filename(h.tmpdir, "scratch", NULL);
	g_assert_cmpint(g_mkdir(scratch, 0700), ==, 0);
	extra[1] = scratch;
	harness_start_agent(&h, extra);
	for (guint i = 0; i < G_N_ELEMENTS(tests); i++) {
		g_autofree char *req = g_strdup_printf(
		    "{\"execute\":\"gb-bench-start\",\"arguments\":{\"test\":\"%s\","
		    "\"params\":{\"dry_run\":true}}}",
		    tests[i]);
		g_autoptr(JsonNode) reply = harness_call(&h, req);
		JsonObject *ret = json_node_get_object(harness_get_return(reply));
		g_assert_true(json_object_get_boolean_member(ret, "dry_run"));
		g_assert_cmpstr(json_object_get_string_member(ret, "test"), ==, tests[i]);
		g_assert_true(json_object_has_member(ret, "params"));
		g_assert_false(json_object_has_member(ret, "job"));
	}
	{
		g_autoptr(JsonNode) list = harness_call(&h, "{\"execute\":\"gb-bench-list\"}");
		JsonObject *ret = json_node_get_object(harness_get_return(list));
		g_assert_cmpuint(json_array_get_length(json_object_get_array_member(ret, "jobs")),
		                 ==, 0);
	}
	/* the scratch dir saw nothing */
	{
		g_autoptr(GDir) dir = g_dir_open(scratch, 0, NULL);
		g_assert_nonnull(dir);
		g_assert_null(g_dir_read_name(dir));
	}
	harness_stop(&h);
}

/* Reads one reply line and asserts it is a GenericError with valid UTF-8 throughout. */
static void hostile_expect_error_line(Harness *h)
{
	g_autofree char *line = harness_read_line(h->fd, h->buf, HARNESS_TIMEOUT_MS);
	g_autoptr(JsonNode) reply = NULL;

	g_assert_nonnull(line);
	g_assert_true(g_utf8_validate(line, -1, NULL));
	reply = harness_parse(line);
	harness_assert_error(reply, "GenericError", NULL);
}

static void test_invalid_utf8(void)
{
	Harness h;
	/* a lone continuation byte, a truncated sequence, an overlong '/', a surrogate, > U+10FFFF
	 */
	const char *const bad[] = {
		"{\"execute\":\"guest-ping\",\"id\":\"\x80\"}",
		"{\"execute\":\"guest-ping\",\"id\":\"\xc3\x28\"}",
		"{\"execute\":\"guest-ping\",\"id\":\"\xc0\xaf\"}",
		"{\"execute\":\"guest-ping\",\"id\":\"\xed\xa0\x80\"}",
		"{\"execute\":\"guest-ping\",\"id\":\"\xf4\x90\x80\x80\"}",
		"{\"execute\":\"guest-\xe2\x82\"}",
		"{\"exec\xc3\x28ute\":\"guest-ping\"}",
		"{\"execute\":\"gb-get-facts\",\"arguments\":{\"sections\":[\"cpu\xfe\"]}}",
	};

	hostile_start(&h, NULL);
	for (guint i = 0; i < G_N_ELEMENTS(bad); i++) {
		g_test_message("request %u", i);
		harness_send(h.fd, bad[i], strlen(bad[i]));
		harness_send(h.fd, "\n", 1);
		hostile_expect_error_line(&h);
	}
	/* numbers json-glib would print as "1e+20.0" (found by fuzz-dispatch) echo as valid JSON */
	{
		g_autoptr(JsonNode) reply =
		    harness_call(&h, "{\"execute\":\"guest-ping\",\"id\":[4E-70,1e20,-1E+22]}");
		g_autofree char *id = harness_get_id(reply);
		harness_get_return(reply);
		g_assert_cmpstr(id, ==, "[4e-70,1e+20,-1e+22]");
	}
	/* escaped lone surrogates are valid JSON text but not a valid string */
	{
		g_autoptr(JsonNode) reply =
		    harness_call(&h, "{\"execute\":\"guest-ping\",\"id\":\"\\ud800x\"}");
		g_autoptr(JsonNode) pair =
		    harness_call(&h, "{\"execute\":\"guest-ping\",\"id\":\"\\ud83d\\ude00\"}");
		g_autofree char *id = harness_get_id(pair);
		harness_assert_error(reply, "GenericError",
		                     "JSON parse error, lone UTF-16 surrogate in a string");
		g_assert_cmpstr(id, ==, "\"\xf0\x9f\x98\x80\"");
	}
	hostile_assert_alive(&h);
	harness_stop(&h);
}

static void test_control_bytes(void)
{
	Harness h;

	hostile_start(&h, NULL);
	/* a raw NUL or control byte inside a message resets the framer: one error, then on */
	for (guint c = 0; c < 0x20; c++) {
		char req[64];
		int n;

		if (c == '\t' || c == '\n' || c == '\r')
			continue;
		n = g_snprintf(req, sizeof(req), "{\"execute\":\"guest-ping\",\"id\":\"a%c", c);
		g_assert_cmpint(n, ==, 32);
		harness_send(h.fd, req, (gsize)n);
		hostile_expect_error_line(&h);
		hostile_assert_alive(&h);
	}
	/* between messages they are silent */
	harness_send(h.fd, "\x01\x02\x00\x1b", 4);
	hostile_assert_alive(&h);
	/* an escaped ESC travels inside a string and comes back escaped; an escaped NUL is refused
	 */
	{
		g_autoptr(JsonNode) reply =
		    harness_call(&h, "{\"execute\":\"guest-ping\",\"id\":\"a\\u001b[2J\"}");
		g_autofree char *id = harness_get_id(reply);
		harness_get_return(reply);
		g_assert_cmpstr(id, ==, "\"a\\u001b[2J\"");
	}
	{
		g_autoptr(JsonNode) reply =
		    harness_call(&h, "{\"execute\":\"guest-\\u0000ping\",\"id\":1}");
		harness_assert_error(reply, "GenericError",
		                     "JSON parse error, \\u0000 is not supported");
	}
	harness_stop(&h);
}

/* 100 MiB in one message: one error, memory bounded by the 1 MiB limit, not the input. */
static void test_huge_message(void)
{
	Harness h;
	const gsize total = 100 * 1024 * 1024;
	g_autofree char *chunk = g_malloc(1024 * 1024);
	guint64 hwm_before;
	guint64 hwm_after;
	GPid pid;
	gsize sent = 0;

	hostile_start(&h, NULL);
	/* the session process answers: its memory is what a client can grow */
	pid = harness_session_pid(harness_pid(h.proc));
	hostile_assert_alive(&h);
	hwm_before = harness_proc_status_kib(pid, "VmHWM");
	memset(chunk, 'x', 1024 * 1024);
	harness_send(h.fd, "{\"execute\":\"guest-ping\",\"id\":\"", 30);
	while (sent < total) {
		harness_send_reading(h.fd, chunk, 1024 * 1024, h.buf);
		sent += 1024 * 1024;
	}
	harness_send(h.fd, "\"}", 2);
	hostile_expect_error_line(&h);
	/* exactly one error: the next line is the answer to the next request */
	hostile_assert_alive(&h);
	hwm_after = harness_proc_status_kib(pid, "VmHWM");
	g_test_message("agent VmHWM %" G_GUINT64_FORMAT " KiB -> %" G_GUINT64_FORMAT " KiB",
	               hwm_before, hwm_after);
	if (!harness_sanitized()) /* ASan's quarantine holds freed memory */
		g_assert_cmpuint(hwm_after, <, hwm_before + 8 * 1024);
	harness_stop(&h);
}

static void test_deep_nesting(void)
{
	Harness h;
	const guint depth = 100000;
	g_autoptr(GString) deep = g_string_sized_new(2 * depth + 64);

	hostile_start(&h, NULL);
	/* arrays, closed: one error, then the stream goes on after the last ']' */
	for (guint i = 0; i < depth; i++)
		g_string_append_c(deep, '[');
	for (guint i = 0; i < depth; i++)
		g_string_append_c(deep, ']');
	harness_send_reading(h.fd, deep->str, deep->len, h.buf);
	hostile_expect_error_line(&h);
	hostile_assert_alive(&h);

	/* objects and strings, never closed: a 0xFF resync ends them */
	g_string_truncate(deep, 0);
	for (guint i = 0; i < depth; i++)
		g_string_append(deep, "{\"a\":");
	harness_send_reading(h.fd, deep->str, deep->len, h.buf);
	harness_send(h.fd, "\xff", 1);
	hostile_expect_error_line(&h);
	hostile_assert_alive(&h);
	harness_stop(&h);
}

/* 10 000 requests in one write, good and bad mixed: all answered, in order. */
static void test_pipelined_10000(void)
{
	Harness h;
	g_autoptr(GString) batch = g_string_new(NULL);
	const guint n = 10000;

	hostile_start(&h, NULL);
	for (guint i = 0; i < n; i++) {
		if (i % 3 == 1)
			g_string_append_printf(batch,
			                       "{\"execute\":\"guest-sync\",\"arguments\":"
			                       "{\"id\":\"bad\"},\"id\":%u}",
			                       i);
		else if (i % 3 == 2)
			g_string_append_printf(batch, "{\"execute\":\"nope\",\"id\":%u}", i);
		else
			g_string_append_printf(
			    batch,
			    "{\"execute\":\"guest-sync\",\"arguments\":{\"id\":%u},"
			    "\"id\":%u}",
			    i, i);
	}
	harness_send_reading(h.fd, batch->str, batch->len, h.buf);
	for (guint i = 0; i < n; i++) {
		g_autofree char *line = harness_read_line(h.fd, h.buf, HARNESS_TIMEOUT_MS);
		g_autoptr(JsonNode) reply = harness_parse(line);
		g_autofree char *id = harness_get_id(reply);
		g_autofree char *want = g_strdup_printf("%u", i);

		g_assert_cmpstr(id, ==, want);
		if (i % 3 == 1)
			harness_assert_error(reply, "GenericError", NULL);
		else if (i % 3 == 2)
			harness_assert_error(reply, "CommandNotFound", NULL);
		else
			g_assert_cmpint(json_node_get_int(harness_get_return(reply)), ==, i);
	}
	harness_stop(&h);
}

/* Clients vanish mid-request and mid-reply, many times: the agent serves the next one. */
static void test_disconnects(void)
{
	Harness h;
	g_autoptr(GString) big = g_string_new(NULL);
	guint64 rss_first = 0;
	GPid pid;

	hostile_start(&h, NULL);
	/* the session process answers: its memory is what a client can grow */
	pid = harness_session_pid(harness_pid(h.proc));
	/* 2000 requests with 4 KiB ids: 8 MiB of replies, far more than a socket buffer */
	for (guint i = 0; i < 2000; i++) {
		g_string_append(big, "{\"execute\":\"guest-ping\",\"id\":\"");
		for (guint j = 0; j < 128; j++)
			g_string_append(big, "zzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzz");
		g_string_append(big, "\"}");
	}
	for (guint round = 0; round < 20; round++) {
		char tmp[4096];
		ssize_t n;

		/* mid-request: half a message, then gone */
		harness_send(h.fd, "{\"execute\":\"guest-sync\",\"argum", 31);
		harness_reconnect(&h);
		hostile_assert_alive(&h);

		/* mid-reply: send what we can without reading, read a little, then gone */
		{
			int flags = fcntl(h.fd, F_GETFL);
			gsize off = 0;
			g_assert_cmpint(fcntl(h.fd, F_SETFL, flags | O_NONBLOCK), ==, 0);
			while (off < big->len) {
				struct pollfd pfd = { .fd = h.fd, .events = POLLOUT };
				n = send(h.fd, big->str + off, big->len - off, MSG_NOSIGNAL);
				if (n > 0) {
					off += (gsize)n;
					continue;
				}
				if (poll(&pfd, 1, 200) == 0)
					break;
			}
			n = recv(h.fd, tmp, sizeof(tmp), 0);
			g_assert_cmpint(n, >, 0);
		}
		harness_reconnect(&h);
		hostile_assert_alive(&h);
		if (round == 1)
			rss_first = harness_proc_rss_kib(pid);
	}
	/* what the vanished clients left behind was freed */
	{
		guint64 rss_last = harness_proc_rss_kib(pid);
		g_test_message("agent VmRSS after round 2: %" G_GUINT64_FORMAT
		               " KiB, after round 20: %" G_GUINT64_FORMAT " KiB",
		               rss_first, rss_last);
		if (!harness_sanitized()) /* ASan's quarantine holds freed memory */
			g_assert_cmpuint(rss_last, <, rss_first + 4 * 1024);
	}
	harness_stop(&h);
}

/* Sends count bad requests of every kind and reads all count error replies. */
static void hostile_send_bad_batch(Harness *h, guint first, guint count)
{
	const char *const kinds[] = {
		"{\"execute\":\"guest-sync\",\"arguments\":{\"id\":\"s@N@\"}}",
		"{\"execute\":\"nope@N@\"}",
		"{\"execute\":\"gb-get-facts\",\"arguments\":{\"sections\":[\"x@N@\"]}}",
		"{\"execute\":\"gb-bench-start\",\"arguments\":{\"test\":\"aes\",\"params\":"
		"{\"sizes\":[0],\"x\":@N@}}}",
		"{\"execute\":\"gb-bench-status\",\"arguments\":{\"job\":@N@}}",
		"{\"execute\":\"guest-ping\",\"x\":@N@}",
		"[@N@]",
		"{\"execute\":\"guest-ping\",\"id\":@N@,}",
	};
	g_autoptr(GString) batch = g_string_new(NULL);

	for (guint i = first; i < first + count; i++) {
		g_autoptr(GString) one = g_string_new(kinds[i % G_N_ELEMENTS(kinds)]);
		g_autofree char *num = g_strdup_printf("%u", i + 1);

		g_string_replace(one, "@N@", num, 0);
		g_string_append_len(batch, one->str, (gssize)one->len);
		g_string_append_c(batch, '\n');
	}
	harness_send_reading(h->fd, batch->str, batch->len, h->buf);
	for (guint i = 0; i < count; i++) {
		g_autofree char *line = harness_read_line(h->fd, h->buf, HARNESS_TIMEOUT_MS);
		g_autoptr(JsonNode) reply = harness_parse(line);
		g_assert_true(json_object_has_member(json_node_get_object(reply), "error"));
	}
}

static void test_bad_requests_flat(void)
{
	Harness h;
	guint64 rss_2000;
	guint64 rss_20000;
	GPid pid;

	hostile_start(&h, NULL);
	/* the session process answers: its memory is what a client can grow */
	pid = harness_session_pid(harness_pid(h.proc));
	hostile_send_bad_batch(&h, 0, 2000);
	rss_2000 = harness_proc_rss_kib(pid);
	for (guint i = 1; i < 10; i++)
		hostile_send_bad_batch(&h, i * 2000, 2000);
	rss_20000 = harness_proc_rss_kib(pid);
	g_test_message("agent VmRSS after 2000 bad requests: %" G_GUINT64_FORMAT
	               " KiB, after 20000: %" G_GUINT64_FORMAT " KiB",
	               rss_2000, rss_20000);
	/* a leak of even 50 bytes per request would show as 900 KiB */
	if (!harness_sanitized()) /* ASan's quarantine holds freed memory */
		g_assert_cmpuint(rss_20000, <, rss_2000 + 512);
	hostile_assert_alive(&h);
	harness_stop(&h);
}

/* gb-get-facts takes no path from the wire: its reply never holds a file it was pointed at. */
static void test_facts_no_paths(void)
{
	Harness h;
	g_autofree char *secret = NULL;
	g_autofree char *sysroot = NULL;
	const char *extra[] = { "--sysroot", NULL, NULL };
	const char *const reqs[] = {
		"{\"execute\":\"gb-get-facts\",\"arguments\":{\"sections\":[\"@SECRET@\"]}}",
		"{\"execute\":\"gb-get-facts\",\"arguments\":{\"path\":\"@SECRET@\"}}",
		"{\"execute\":\"gb-get-facts\",\"arguments\":{\"sysroot\":\"@DIR@\"}}",
		"{\"execute\":\"gb-get-facts\",\"arguments\":{\"sections\":[\"os\"],\"file\":"
		"\"@SECRET@\"}}",
	};

	harness_init(&h);
	secret = g_build_filename(h.tmpdir, "secret", NULL);
	g_assert_true(g_file_set_contents(secret, "TOPSECRET-CONTENT\n", -1, NULL));
	sysroot = g_build_filename(g_getenv("GB_TEST_DATA"), "facts", "qemu64", NULL);
	extra[1] = sysroot;
	harness_start_agent(&h, extra);
	for (guint i = 0; i < G_N_ELEMENTS(reqs); i++) {
		g_autoptr(GString) req = g_string_new(reqs[i]);
		g_autoptr(JsonNode) reply = NULL;
		g_autofree char *text = NULL;

		g_string_replace(req, "@SECRET@", secret, 0);
		g_string_replace(req, "@DIR@", h.tmpdir, 0);
		reply = harness_call(&h, req->str);
		harness_assert_error(reply, "GenericError", NULL);
		text = gb_json_to_string(reply, NULL);
		g_assert_null(strstr(text, "TOPSECRET"));
	}
	/* the valid call reads the fixture, not the host and not the secret */
	{
		g_autoptr(JsonNode) reply = harness_call(
		    &h, "{\"execute\":\"gb-get-facts\",\"arguments\":{\"steal_window_ms\":0}}");
		g_autofree char *text = gb_json_to_string(harness_get_return(reply), NULL);
		g_assert_null(strstr(text, "TOPSECRET"));
		g_assert_nonnull(strstr(text, "QEMU Virtual CPU"));
	}
	harness_stop(&h);
}

/* Every thread of pid has no capability and no_new_privs set; returns how many. */
static guint hostile_assert_no_privileges(GPid pid)
{
	g_autofree char *taskdir = g_strdup_printf("/proc/%d/task", (int)pid);
	g_autoptr(GDir) dir = g_dir_open(taskdir, 0, NULL);
	const char *name;
	guint threads = 0;

	g_assert_nonnull(dir);
	while ((name = g_dir_read_name(dir)) != NULL) {
		g_autofree char *fn = g_build_filename(taskdir, name, "status", NULL);
		g_autofree char *contents = NULL;
		const char *const fields[] = { "\nCapInh:", "\nCapPrm:", "\nCapEff:", "\nCapBnd:",
			                       "\nCapAmb:" };
		const char *nnp;

		g_assert_true(g_file_get_contents(fn, &contents, NULL, NULL));
		for (guint i = 0; i < G_N_ELEMENTS(fields); i++) {
			const char *p = strstr(contents, fields[i]);
			g_assert_nonnull(p);
			p += strlen(fields[i]);
			/* the bounding set only empties when the agent started with CAP_SETPCAP */
			if (i == 3 && geteuid() != 0)
				continue;
			if (g_ascii_strtoull(p, NULL, 16) != 0)
				g_error("process %d thread %s: %s not empty: %.40s", (int)pid, name,
				        fields[i] + 1, p);
		}
		nnp = strstr(contents, "\nNoNewPrivs:");
		g_assert_nonnull(nnp);
		g_assert_cmpint(g_ascii_strtoll(nnp + strlen("\nNoNewPrivs:"), NULL, 10), ==, 1);
		threads++;
	}
	return threads;
}

/*
 * Once the port is open: no capability in any thread, no_new_privs set, in
 * the resident process and in the session process that answers.
 */
static void test_privileges(void)
{
	Harness h;
	GPid agent;

	hostile_start(&h, NULL);
	/*
	 * The socket accepts from listen() on, a moment before the drop: an answer
	 * comes only from the main loop, which runs after it.
	 */
	hostile_assert_alive(&h);
	agent = harness_pid(h.proc);
	g_assert_cmpuint(hostile_assert_no_privileges(agent), ==, 1);
	g_assert_cmpuint(hostile_assert_no_privileges(harness_session_pid(agent)), >=, 1);
	hostile_assert_alive(&h);
	harness_stop(&h);
}

int main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	if (g_getenv("GB_AGENT") == NULL) {
		g_printerr("GB_AGENT is not set; run through meson test\n");
		return 1;
	}
	g_test_add_func("/hostile/args", test_args);
	g_test_add_func("/hostile/dry-run", test_dry_run);
	g_test_add_func("/hostile/invalid-utf8", test_invalid_utf8);
	g_test_add_func("/hostile/control-bytes", test_control_bytes);
	g_test_add_func("/hostile/huge-message", test_huge_message);
	g_test_add_func("/hostile/deep-nesting", test_deep_nesting);
	g_test_add_func("/hostile/pipelined-10000", test_pipelined_10000);
	g_test_add_func("/hostile/disconnects", test_disconnects);
	g_test_add_func("/hostile/bad-requests-flat", test_bad_requests_flat);
	g_test_add_func("/hostile/facts-no-paths", test_facts_no_paths);
	g_test_add_func("/hostile/privileges", test_privileges);
	return g_test_run();
}
