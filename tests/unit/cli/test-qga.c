/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"

#include "guestbench-protocol.h"

#include "fleet/target.h"
#include "render/escape.h"
#include "transport/qga-exec.h"
#include "transport/qga.h"
#include "fleet/resolve.h"

static JsonNode *parse(const char *json)
{
	g_autoptr(GError) error = NULL;
	JsonNode *node = gb_json_parse(json, strlen(json), &error);

	g_assert_no_error(error);
	return node;
}

/* A guest-exec-status as qemu-ga 7.2 sends it, with out-data holding text. */
static CliQgaExecStatus *status_with_output(const char *out, const char *err, gint64 exitcode)
{
	g_autofree char *out64 = g_base64_encode((const guchar *)out, strlen(out));
	g_autofree char *err64 = g_base64_encode((const guchar *)err, strlen(err));
	g_autofree char *json = g_strdup_printf(
	    "{\"exitcode\": %" G_GINT64_FORMAT ", \"err-data\": \"%s\", \"out-data\": \"%s\", "
	    "\"err-truncated\": false, \"out-truncated\": false, \"exited\": true}",
	    exitcode, err64, out64);
	g_autoptr(JsonNode) node = parse(json);
	g_autoptr(GError) error = NULL;
	CliQgaExecStatus *status = cli_qga_parse_exec_status(node, &error);

	g_assert_no_error(error);
	return status;
}

static void test_qga_info(void)
{
	const char *ok =
	    "{\"version\": \"7.2.22\", \"supported_commands\": ["
	    "{\"enabled\": true, \"name\": \"guest-exec-status\", "
	    "\"success-response\": true},"
	    "{\"enabled\": true, \"name\": \"guest-exec\", \"success-response\": true},"
	    "{\"enabled\": false, \"name\": \"guest-shutdown\", "
	    "\"success-response\": false}]}";
	const char *disabled = "{\"version\": \"7.2.22\", \"supported_commands\": ["
	                       "{\"enabled\": true, \"name\": \"guest-exec-status\"},"
	                       "{\"enabled\": false, \"name\": \"guest-exec\"}]}";
	const char *missing = "{\"version\": \"1.0\", \"supported_commands\": ["
	                      "{\"enabled\": true, \"name\": \"guest-exec\"}]}";
	struct {
		const char *json;
		gint code;
		const char *needle;
	} bad[] = {
		{ disabled, GB_ERROR_COMMAND_DISABLED, "--block-rpcs" },
		{ missing, GB_ERROR_NOT_SUPPORTED, "does not offer guest-exec-status" },
		{ "[]", GB_ERROR_INVALID_ARGUMENT, "invalid guest-info reply" },
		{ "{}", GB_ERROR_INVALID_ARGUMENT, "supported_commands" },
		{ "{\"supported_commands\": {}}", GB_ERROR_INVALID_ARGUMENT, "supported_commands" },
		{ "{\"supported_commands\": [1]}", GB_ERROR_INVALID_ARGUMENT,
		  "invalid guest-info" },
		{ "{\"supported_commands\": [{\"name\": 5, \"enabled\": true}]}",
		  GB_ERROR_INVALID_ARGUMENT, "name" },
		{ "{\"supported_commands\": [{\"name\": \"guest-exec\", \"enabled\": \"yes\"}]}",
		  GB_ERROR_INVALID_ARGUMENT, "enabled" },
		{ "{\"supported_commands\": []}", GB_ERROR_NOT_SUPPORTED, "guest-exec" },
	};
	g_autoptr(JsonNode) node = parse(ok);
	g_autoptr(GError) error = NULL;

	g_assert_true(cli_qga_check_info(node, &error));
	g_assert_no_error(error);
	for (guint i = 0; i < G_N_ELEMENTS(bad); i++) {
		g_autoptr(JsonNode) bad_node = parse(bad[i].json);
		g_autoptr(GError) bad_error = NULL;

		g_assert_false(cli_qga_check_info(bad_node, &bad_error));
		g_assert_error(bad_error, GB_ERROR, bad[i].code);
		g_assert_nonnull(strstr(bad_error->message, bad[i].needle));
	}
}

static void test_qga_disabled_message(void)
{
	g_autoptr(JsonNode) node = parse("{\"supported_commands\": ["
	                                 "{\"enabled\": true, \"name\": \"guest-exec\"},"
	                                 "{\"enabled\": false, \"name\": \"guest-exec-status\"}]}");
	g_autoptr(GError) error = NULL;

	g_assert_false(cli_qga_check_info(node, &error));
	/* names the command and both ways qemu-ga is told to disable it */
	g_assert_nonnull(strstr(error->message, "guest-exec-status disabled"));
	g_assert_nonnull(strstr(error->message, "BLOCK_RPCS"));
	g_assert_nonnull(strstr(error->message, "--allow-rpcs"));
}

static void test_qga_exec_args(void)
{
	g_autoptr(JsonObject) arguments = json_object_new();
	g_autoptr(JsonObject) args = NULL;
	g_autoptr(GbRequest) req = NULL;
	g_autoptr(GError) error = NULL;
	g_auto(GStrv) argv = NULL;
	const char *path = NULL;
	gboolean capture = FALSE;
	gint64 job = 0;

	/* quotes and a newline must survive as one argv element */
	json_object_set_string_member(arguments, "test", "a\"b\n'c");
	json_object_set_int_member(arguments, "job", 3);
	args = cli_qga_build_exec_args("/usr/bin/guestbench-agent", "gb-bench-status", arguments);
	g_assert_true(gb_json_get_string(args, "path", GB_JSON_REQUIRED, &path, &error));
	g_assert_cmpstr(path, ==, "/usr/bin/guestbench-agent");
	g_assert_true(gb_json_get_bool(args, "capture-output", GB_JSON_REQUIRED, &capture, &error));
	g_assert_true(capture);
	g_assert_true(gb_json_get_strv(args, "arg", GB_JSON_REQUIRED, &argv, &error));
	g_assert_no_error(error);
	g_assert_cmpuint(g_strv_length(argv), ==, 2);
	g_assert_cmpstr(argv[0], ==, "--oneshot");
	g_assert_null(strchr(argv[1], '\n'));
	req = gb_request_parse(argv[1], strlen(argv[1]), NULL, &error);
	g_assert_no_error(error);
	g_assert_cmpstr(req->execute, ==, "gb-bench-status");
	g_assert_true(gb_json_get_int(req->arguments, "job", GB_JSON_REQUIRED, 0, 10, &job, NULL));
	g_assert_cmpint(job, ==, 3);
	g_assert_true(gb_json_get_string(req->arguments, "test", GB_JSON_REQUIRED, &path, NULL));
	g_assert_cmpstr(path, ==, "a\"b\n'c");
	g_assert_null(req->id);
}

static void test_qga_exec_args_no_arguments(void)
{
	g_autoptr(JsonObject) args = cli_qga_build_exec_args("/a", "guest-ping", NULL);
	g_autoptr(GbRequest) req = NULL;
	g_auto(GStrv) argv = NULL;

	g_assert_true(gb_json_get_strv(args, "arg", GB_JSON_REQUIRED, &argv, NULL));
	req = gb_request_parse(argv[1], strlen(argv[1]), NULL, NULL);
	g_assert_nonnull(req);
	g_assert_cmpstr(req->execute, ==, "guest-ping");
	g_assert_null(req->arguments);
}

static void test_qga_exec_error(void)
{
	/* qemu-ga 7.2's text for a path that does not exist */
	g_autoptr(GError) missing =
	    g_error_new(GB_ERROR, GB_ERROR_REMOTE,
	                "guest-exec: Guest agent command failed, error was 'Failed to execute "
	                "child process “/opt/gb” (No such file or directory)'");
	g_autoptr(GError) denied =
	    g_error_new(GB_ERROR, GB_ERROR_REMOTE,
	                "guest-exec: Guest agent command failed, error was 'Failed to execute "
	                "child process “/opt/gb” (Permission denied)'");
	g_autoptr(GError) other = g_error_new(GB_ERROR, GB_ERROR_REMOTE, "guest-exec: nope");
	g_autoptr(GError) e1 = cli_qga_exec_error(missing, "/opt/gb");
	g_autoptr(GError) e2 = cli_qga_exec_error(denied, "/opt/gb");
	g_autoptr(GError) e3 = cli_qga_exec_error(other, "/opt/gb");

	g_assert_error(e1, GB_ERROR, GB_ERROR_NOT_SUPPORTED);
	g_assert_nonnull(strstr(e1->message, "not installed in the guest at /opt/gb"));
	g_assert_nonnull(strstr(e1->message, "--qga-agent"));
	g_assert_nonnull(strstr(e1->message, "agent_path="));
	g_assert_nonnull(strstr(e2->message, "cannot run /opt/gb"));
	g_assert_error(e3, GB_ERROR, GB_ERROR_REMOTE);
	g_assert_nonnull(strstr(e3->message, "cannot run /opt/gb in the guest through qemu-ga"));
	g_assert_nonnull(strstr(e3->message, "nope"));
}

static void test_qga_parse_status(void)
{
	g_autoptr(JsonNode) running = parse("{\"exited\": false}");
	g_autoptr(JsonNode) killed = parse("{\"signal\": 9, \"exited\": true}");
	g_autoptr(CliQgaExecStatus) st = NULL;
	g_autoptr(CliQgaExecStatus) st2 = NULL;
	g_autoptr(GError) error = NULL;
	struct {
		const char *json;
		const char *needle;
	} bad[] = {
		{ "[]", "expected: object" },
		{ "{}", "exited" },
		{ "{\"exited\": 1}", "exited" },
		{ "{\"exited\": true, \"exitcode\": \"0\"}", "exitcode" },
		{ "{\"exited\": true, \"exitcode\": 1e20}", "exitcode" },
		{ "{\"exited\": true, \"signal\": -1}", "signal" },
		{ "{\"exited\": true, \"out-data\": 5}", "out-data" },
		{ "{\"exited\": true, \"out-data\": \"abc\"}", "not a multiple of 4" },
		{ "{\"exited\": true, \"out-data\": \"ab$=\"}", "bad byte at offset 2" },
		{ "{\"exited\": true, \"out-data\": \"a===\"}", "bad byte" },
		{ "{\"exited\": true, \"err-data\": \"=abc\"}", "err-data" },
		{ "{\"exited\": true, \"out-truncated\": \"no\"}", "out-truncated" },
	};

	st = cli_qga_parse_exec_status(running, &error);
	g_assert_no_error(error);
	g_assert_false(st->exited);
	g_assert_null(st->out);
	st2 = cli_qga_parse_exec_status(killed, &error);
	g_assert_no_error(error);
	g_assert_true(st2->exited);
	g_assert_cmpint(st2->signal, ==, 9);
	g_assert_false(st2->has_exitcode);
	for (guint i = 0; i < G_N_ELEMENTS(bad); i++) {
		g_autoptr(JsonNode) node = parse(bad[i].json);
		g_autoptr(GError) bad_error = NULL;
		g_autoptr(CliQgaExecStatus) bad_st = cli_qga_parse_exec_status(node, &bad_error);

		g_assert_null(bad_st);
		g_assert_nonnull(bad_error);
		if (strstr(bad_error->message, bad[i].needle) == NULL)
			g_error("%s: '%s' lacks '%s'", bad[i].json, bad_error->message,
			        bad[i].needle);
	}
}

static void test_qga_decode_ok(void)
{
	g_autoptr(CliQgaExecStatus) st = status_with_output("{\"return\": {\"a\": 1}}\n", "", 0);
	g_autoptr(GError) error = NULL;
	g_autoptr(JsonNode) ret = cli_qga_decode_reply(st, "gb-get-facts", "/a", 1024, &error);
	JsonObject *obj = NULL;
	gint64 a = 0;

	g_assert_no_error(error);
	g_assert_true(gb_json_node_get_object(ret, "ret", &obj, NULL));
	g_assert_true(gb_json_get_int(obj, "a", GB_JSON_REQUIRED, 0, 9, &a, NULL));
	g_assert_cmpint(a, ==, 1);
}

static void test_qga_decode_bad(void)
{
	g_autofree char *deep = NULL;
	struct {
		const char *out;
		const char *err;
		gint64 exitcode;
		gint code;
		const char *needle;
	} bad[] = {
		{ "{\"error\": {\"class\": \"GenericError\", \"desc\": \"Parameter 'x' is "
		  "unexpected\"}}\n",
		  "", 0, GB_ERROR_REMOTE, "gb-get-facts: Parameter 'x' is unexpected" },
		{ "{\"error\": {\"class\": \"CommandNotFound\", \"desc\": \"nope\"}}\n", "", 0,
		  GB_ERROR_COMMAND_NOT_FOUND, "gb-get-facts: nope" },
		{ "", "guestbench-agent: unknown option --frob\n", 2, GB_ERROR_FAILED,
		  "/a in the guest exited with status 2: guestbench-agent: unknown option --frob" },
		{ "{\"return\": {}}\n", "", 1, GB_ERROR_FAILED, "exited with status 1" },
		{ "", "", 0, GB_ERROR_FAILED, "printed no reply" },
		{ "  \n", "boom", 0, GB_ERROR_FAILED, "printed no reply: boom" },
		{ "hello world\n", "", 0, GB_ERROR_PARSE, "invalid reply to gb-get-facts" },
		{ "{\"return\": 1}\n{\"return\": 2}\n", "", 0, GB_ERROR_PARSE, "more than one" },
		{ "{\"return\": {\"a\": ", "", 0, GB_ERROR_PARSE, "ends inside a message" },
		{ "{\"return\": 1}{\"ret", "", 0, GB_ERROR_PARSE, "more than one" },
		{ "[1, 2]\n", "", 0, GB_ERROR_INVALID_REQUEST, "invalid reply to gb-get-facts" },
		{ "{\"return\": \"\x1b[2J\"}\n", "", 0, GB_ERROR_PARSE, "invalid reply" },
		{ NULL, "", 0, GB_ERROR_TOO_DEEP, "invalid reply to gb-get-facts" },
	};

	/* deeper than the framer allows: refused like on the agent's own port */
	{
		GString *str = g_string_new("{\"return\": ");
		for (guint i = 0; i < 100; i++)
			g_string_append_c(str, '[');
		for (guint i = 0; i < 100; i++)
			g_string_append_c(str, ']');
		g_string_append(str, "}\n");
		deep = g_string_free(str, FALSE);
	}
	bad[G_N_ELEMENTS(bad) - 1].out = deep;
	for (guint i = 0; i < G_N_ELEMENTS(bad); i++) {
		g_autoptr(CliQgaExecStatus) st =
		    status_with_output(bad[i].out, bad[i].err, bad[i].exitcode);
		g_autoptr(GError) error = NULL;
		g_autoptr(JsonNode) ret =
		    cli_qga_decode_reply(st, "gb-get-facts", "/a", 1024, &error);

		g_assert_null(ret);
		if (error == NULL || error->code != bad[i].code ||
		    strstr(error->message, bad[i].needle) == NULL)
			g_error("case %u: got '%s' (%d), wanted '%s' (%d)", i,
			        error != NULL ? error->message : "(none)",
			        error != NULL ? error->code : -1, bad[i].needle, bad[i].code);
	}
}

static void test_qga_decode_limits(void)
{
	g_autoptr(JsonNode) truncated =
	    parse("{\"exitcode\": 0, \"out-data\": \"e30K\", \"out-truncated\": true, "
	          "\"exited\": true}");
	g_autoptr(JsonNode) killed =
	    parse("{\"signal\": 9, \"exited\": true, \"err-data\": \"G1syShtdMDt4Bw==\"}");
	g_autoptr(CliQgaExecStatus) st1 = cli_qga_parse_exec_status(truncated, NULL);
	g_autoptr(CliQgaExecStatus) st2 = cli_qga_parse_exec_status(killed, NULL);
	g_autoptr(CliQgaExecStatus) st3 =
	    status_with_output("{\"return\": \"0123456789abcdef\"}\n", "", 0);
	g_autoptr(GError) e1 = NULL;
	g_autoptr(GError) e2 = NULL;
	g_autoptr(GError) e3 = NULL;

	g_assert_null(cli_qga_decode_reply(st1, "gb-get-facts", "/a", 1024, &e1));
	g_assert_error(e1, GB_ERROR, GB_ERROR_TOO_LARGE);
	g_assert_nonnull(strstr(e1->message, "truncated by qemu-ga"));
	g_assert_null(cli_qga_decode_reply(st2, "gb-get-facts", "/a", 1024, &e2));
	g_assert_nonnull(strstr(e2->message, "killed by signal 9"));
	/* the guest's stderr arrives raw; whoever shows it escapes it */
	g_assert_nonnull(strstr(e2->message, ": \x1b[2J\x1b]0;x\a"));
	{
		g_autofree char *shown = cli_escape_terminal(e2->message);
		g_assert_nonnull(strstr(shown, ": \\x1b[2J\\x1b]0;x\\x07"));
	}
	g_assert_null(cli_qga_decode_reply(st3, "gb-get-facts", "/a", 16, &e3));
	g_assert_error(e3, GB_ERROR, GB_ERROR_TOO_LARGE);
	g_assert_nonnull(strstr(e3->message, "over the limit of 16"));
}

static void test_qga_stderr_excerpt_cut(void)
{
	g_autofree char *err = g_strnfill(5000, 'x');
	g_autoptr(CliQgaExecStatus) st = status_with_output("", err, 7);
	g_autoptr(GError) error = NULL;

	g_assert_null(cli_qga_decode_reply(st, "guest-ping", "/a", 1024, &error));
	g_assert_nonnull(strstr(error->message, "status 7"));
	g_assert_cmpuint(strlen(error->message), <, 500);
}

/* Cut by characters of the guest's text, before any escaping: 300 of them, then "…". */
static void test_qga_stderr_excerpt_chars(void)
{
	g_autoptr(GString) err = g_string_new(NULL);
	g_autoptr(CliQgaExecStatus) st = NULL;
	g_autoptr(GError) error = NULL;
	g_autofree char *expected = NULL;
	const char *excerpt;

	for (guint i = 0; i < 200; i++)
		g_string_append(err, "\x1b\xc3\xa9"); /* ESC é: 2 characters, 3 bytes */
	st = status_with_output("", err->str, 1);
	g_assert_null(cli_qga_decode_reply(st, "guest-ping", "/a", 1024, &error));
	excerpt = strstr(error->message, "status 1: ");
	g_assert_nonnull(excerpt);
	excerpt += strlen("status 1: ");
	g_assert_true(g_utf8_validate(excerpt, -1, NULL));
	g_assert_cmpuint(g_utf8_strlen(excerpt, -1), ==, 301);
	g_assert_true(g_str_has_suffix(excerpt, "\x1b\xc3\xa9…"));
	expected = g_strndup(err->str, 450);
	g_assert_true(g_str_has_prefix(excerpt, expected));
}

/* Invalid UTF-8 on stderr becomes U+FFFD: error messages are always valid UTF-8. */
static void test_qga_stderr_excerpt_invalid(void)
{
	g_autoptr(CliQgaExecStatus) st = status_with_output("", "bad \xff\xfe byte", 2);
	g_autoptr(GError) error = NULL;

	g_assert_null(cli_qga_decode_reply(st, "guest-ping", "/a", 1024, &error));
	g_assert_true(g_utf8_validate(error->message, -1, NULL));
	g_assert_nonnull(strstr(error->message, "status 2: bad \xef\xbf\xbd"));
	g_assert_nonnull(strstr(error->message, " byte"));
}

static void test_qga_agent_option(void)
{
	const char *texts[] = { "qga:/q1", "/plain", "qga:/q2", NULL };
	g_autoptr(GPtrArray) targets = cli_targets_parse(texts, NULL);
	g_autoptr(GPtrArray) plain = NULL;
	const char *plain_texts[] = { "/plain", NULL };
	g_autoptr(GError) error = NULL;
	CliTarget *t;
	CliAddress address;

	g_assert_nonnull(targets);
	t = g_ptr_array_index(targets, 0);
	cli_target_get_address(t, &address);
	g_assert_cmpstr(cli_qga_get_agent_path(&address), ==, GB_AGENT_DEFAULT_BINARY);
	g_assert_cmpstr(cli_qga_get_agent_path(NULL), ==, GB_AGENT_DEFAULT_BINARY);
	g_assert_true(cli_targets_apply_qga_agent(targets, NULL, &error));
	g_assert_true(cli_targets_apply_qga_agent(targets, "/opt/gb/agent", &error));
	g_assert_no_error(error);
	cli_target_get_address(t, &address);
	g_assert_cmpstr(cli_qga_get_agent_path(&address), ==, "/opt/gb/agent");
	t = g_ptr_array_index(targets, 1);
	g_assert_null(t->agent_path);
	t = g_ptr_array_index(targets, 2);
	g_assert_cmpstr(t->agent_path, ==, "/opt/gb/agent");

	g_assert_false(cli_targets_apply_qga_agent(targets, "agent", &error));
	g_assert_error(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT);
	g_clear_error(&error);
	g_assert_false(cli_targets_apply_qga_agent(targets, "", &error));
	g_assert_error(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT);
	g_clear_error(&error);
	plain = cli_targets_parse(plain_texts, NULL);
	g_assert_false(cli_targets_apply_qga_agent(plain, "/opt/gb/agent", &error));
	g_assert_nonnull(strstr(error->message, "no target is reached through qemu-ga"));
}

/* A one-shot gb-bench-start answers with its job's final status: "running" is an error. */
static void test_qga_final_status(void)
{
	const char *ok[] = {
		"{\"job\": 3, \"state\": \"done\", \"result\": {\"metrics\": []}}",
		"{\"job\": 3, \"state\": \"cancelled\"}",
		"{\"job\": 3, \"state\": \"failed\", \"error\": \"x\"}",
	};

	for (guint i = 0; i < G_N_ELEMENTS(ok); i++) {
		g_autoptr(JsonNode) reply = parse(ok[i]);
		g_autoptr(GError) error = NULL;
		gint64 job = 0;

		g_assert_true(cli_qga_check_final_status(reply, &job, &error));
		g_assert_no_error(error);
		g_assert_cmpint(job, ==, 3);
	}
	{
		/* a dry run has no job */
		g_autoptr(JsonNode) reply = parse("{\"test\": \"aes\", \"dry_run\": true}");
		g_autoptr(GError) error = NULL;
		gint64 job = 7;

		g_assert_true(cli_qga_check_final_status(reply, &job, &error));
		g_assert_no_error(error);
		g_assert_cmpint(job, ==, 0);
	}
	{
		g_autoptr(JsonNode) reply =
		    parse("{\"job\": 1, \"test\": \"aes\", \"state\": \"running\", "
		          "\"progress\": 0.1}");
		g_autoptr(GError) error = NULL;
		gint64 job = 0;

		g_assert_false(cli_qga_check_final_status(reply, &job, &error));
		g_assert_error(error, GB_ERROR, GB_ERROR_PARSE);
		g_assert_cmpstr(
		    error->message, ==,
		    "invalid reply to gb-bench-start: the one-shot agent exited with job 1 "
		    "still running (its answer must be the job's final status)");
	}
}

int main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	g_test_add_func("/cli/qga/info", test_qga_info);
	g_test_add_func("/cli/qga/info-disabled-message", test_qga_disabled_message);
	g_test_add_func("/cli/qga/exec-args", test_qga_exec_args);
	g_test_add_func("/cli/qga/exec-args-no-arguments", test_qga_exec_args_no_arguments);
	g_test_add_func("/cli/qga/exec-error", test_qga_exec_error);
	g_test_add_func("/cli/qga/parse-status", test_qga_parse_status);
	g_test_add_func("/cli/qga/decode-ok", test_qga_decode_ok);
	g_test_add_func("/cli/qga/decode-bad", test_qga_decode_bad);
	g_test_add_func("/cli/qga/decode-limits", test_qga_decode_limits);
	g_test_add_func("/cli/qga/final-status", test_qga_final_status);
	g_test_add_func("/cli/qga/stderr-excerpt-cut", test_qga_stderr_excerpt_cut);
	g_test_add_func("/cli/qga/stderr-excerpt-chars", test_qga_stderr_excerpt_chars);
	g_test_add_func("/cli/qga/stderr-excerpt-invalid", test_qga_stderr_excerpt_invalid);
	g_test_add_func("/cli/qga/agent-option", test_qga_agent_option);
	return g_test_run();
}
