/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"

#include <glib/gstdio.h>

#include "guestbench-protocol.h"

#include "commands/app.h"
#include "commands/commands.h"
#include "render/escape.h"
#include "fleet/resolve.h"

/* An app with parsed targets and one pending guest per target, as the runner makes it. */
static CliApp *make_app(const char *command, const char *const *targets)
{
	CliApp *app = cli_app_new();
	g_autoptr(GError) error = NULL;

	app->command = cli_command_find(command);
	g_assert_nonnull(app->command);
	app->targets = cli_targets_parse(targets, &error);
	g_assert_no_error(error);
	cli_app_add_guests(app);
	return app;
}

/* The app's results as --format json and as the table. */
static GString *render_json(CliApp *app)
{
	g_autoptr(CliResults) results = cli_app_get_results(app);

	return cli_results_render_json(results);
}

static GString *render_table(CliApp *app, gboolean color)
{
	g_autoptr(CliResults) results = cli_app_get_results(app);

	return cli_command_render(app->command, results, CLI_FORMAT_TABLE, color);
}

static CliGuest *guest_at(CliApp *app, guint i)
{
	return g_ptr_array_index(app->guests, i);
}

static JsonNode *ping_result(double rtt)
{
	g_autoptr(JsonBuilder) builder = json_builder_new();
	json_builder_begin_object(builder);
	json_builder_set_member_name(builder, "rtt_ms");
	json_builder_add_double_value(builder, rtt);
	json_builder_end_object(builder);
	return json_builder_get_root(builder);
}

static void finish_three(CliApp *app)
{
	g_autoptr(GError) error_closed = NULL;
	g_autoptr(GError) error_timeout = NULL;

	error_closed = g_error_new_literal(GB_ERROR, GB_ERROR_CLOSED, "connection closed");
	error_timeout = g_error_new_literal(GB_ERROR, GB_ERROR_TIMEOUT, "timed out after 1 s");
	/* finish out of order: the document must keep target order */
	cli_guest_finish(guest_at(app, 2), NULL, error_timeout);
	cli_guest_finish(guest_at(app, 0), ping_result(0.25), NULL);
	cli_guest_finish(guest_at(app, 1), NULL, error_closed);
	/* a second finish is ignored */
	cli_guest_finish(guest_at(app, 0), NULL, error_closed);
}

static void test_output_json_document(void)
{
	const char *targets[] = { "/run/a", "unix:/run/b", "vsock:3:1234", NULL };
	g_autoptr(CliApp) app = make_app("ping", targets);
	g_autoptr(GString) doc = NULL;
	g_autoptr(GError) error = NULL;
	g_autoptr(JsonNode) root = NULL;
	JsonObject *obj = NULL;
	JsonArray *guests = NULL;
	const char *str = NULL;
	const char *want_status[] = { "ok", "error", "timeout" };

	finish_three(app);
	g_assert_cmpint(cli_app_get_exit_status(app), ==, CLI_EXIT_GUEST);
	doc = render_json(app);
	g_assert_true(g_str_has_suffix(doc->str, "}\n"));
	/* pretty-printed: one member per line */
	g_assert_nonnull(strstr(doc->str, "\n  \"guests\""));
	root = gb_json_parse(doc->str, doc->len, &error);
	g_assert_no_error(error);
	g_assert_true(gb_json_node_get_object(root, "root", &obj, &error));
	g_assert_true(gb_json_get_string(obj, "guestbench", 0, &str, &error));
	g_assert_cmpstr(str, ==, GB_VERSION);
	g_assert_true(gb_json_get_string(obj, "command", 0, &str, &error));
	g_assert_cmpstr(str, ==, "ping");
	g_assert_true(gb_json_get_array(obj, "guests", 0, &guests, &error));
	g_assert_cmpuint(json_array_get_length(guests), ==, 3);
	for (guint i = 0; i < 3; i++) {
		JsonObject *g = NULL;
		const char *allowed[] = { "name", "target", "status", "error", "result", NULL };

		g_assert_true(gb_json_node_get_object(json_array_get_element(guests, i), "guest",
		                                      &g, &error));
		g_assert_true(gb_json_check_members(g, allowed, &error));
		g_assert_true(gb_json_get_string(g, "name", 0, &str, &error));
		g_assert_cmpstr(str, ==, targets[i]);
		g_assert_true(gb_json_get_string(g, "target", 0, &str, &error));
		g_assert_cmpstr(str, ==, targets[i]);
		g_assert_true(gb_json_get_string(g, "status", 0, &str, &error));
		g_assert_cmpstr(str, ==, want_status[i]);
		g_assert_true(json_object_has_member(g, "result"));
		/* "error" is absent when ok, a string otherwise */
		g_assert_cmpint(json_object_has_member(g, "error"), ==, i != 0);
		if (i == 0) {
			JsonObject *result = NULL;
			double rtt = 0;
			g_assert_true(gb_json_get_object(g, "result", 0, &result, &error));
			g_assert_true(gb_json_get_double(result, "rtt_ms", 0, 0, 10, &rtt, &error));
			g_assert_cmpfloat_with_epsilon(rtt, 0.25, 1e-9);
		} else {
			g_assert_true(gb_json_get_string(g, "error", 0, &str, &error));
			g_assert_true(JSON_NODE_HOLDS_NULL(json_object_get_member(g, "result")));
		}
	}
	g_assert_no_error(error);
}

static void test_output_invalid_utf8_error(void)
{
	const char *targets[] = { "/a", NULL };
	g_autoptr(CliApp) app = make_app("ping", targets);
	g_autoptr(GError) error = NULL;
	g_autoptr(GString) doc = NULL;
	g_autoptr(JsonNode) root = NULL;

	/* error texts may quote a guest's bytes: the document stays valid UTF-8 JSON */
	error = g_error_new_literal(GB_ERROR, GB_ERROR_PARSE, "JSON parse error, stray '\xc3\x28'");
	cli_guest_finish(guest_at(app, 0), NULL, error);
	g_clear_error(&error);
	doc = render_json(app);
	g_assert_true(g_utf8_validate(doc->str, doc->len, NULL));
	root = gb_json_parse(doc->str, doc->len, &error);
	g_assert_no_error(error);
	g_assert_nonnull(root);
}

static void test_output_exit_status(void)
{
	const char *targets[] = { "/a", "/b", NULL };
	g_autoptr(CliApp) app = make_app("ping", targets);

	cli_guest_finish(guest_at(app, 0), ping_result(1), NULL);
	cli_guest_finish(guest_at(app, 1), ping_result(2), NULL);
	g_assert_cmpint(cli_app_get_exit_status(app), ==, CLI_EXIT_OK);
	app->fail_finding = TRUE;
	g_assert_cmpint(cli_app_get_exit_status(app), ==, CLI_EXIT_FINDING);
	app->signal_received = 2;
	g_assert_cmpint(cli_app_get_exit_status(app), ==, 130);
}

static void test_output_escape(void)
{
	struct {
		const char *in;
		const char *out;
	} cases[] = {
		{ "plain text", "plain text" },
		{ "a\nb\tc\rd", "a\\nb\\tc\\rd" },
		{ "\033[2J\033]0;owned\007", "\\x1b[2J\\x1b]0;owned\\x07" },
		{ "del\x7f", "del\\x7f" },
		{ "c1 \xc2\x9b"
		  "31m",
		  "c1 \\u009b31m" },
		{ "bidi \xe2\x80\xae"
		  "txt",
		  "bidi \\u202etxt" },
		{ "bad \xff utf8", "bad \\xff utf8" },
		{ "truncated \xe2\x80", "truncated \\xe2\\x80" },
		{ "ünïcødé ✓ 漢字", "ünïcødé ✓ 漢字" },
		{ "", "" },
	};

	for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
		g_autofree char *out = cli_escape_terminal(cases[i].in);
		g_assert_cmpstr(out, ==, cases[i].out);
	}
	{
		g_autofree char *out = cli_escape_terminal(NULL);
		g_assert_cmpstr(out, ==, "");
	}
	g_assert_cmpuint(cli_text_width("abc"), ==, 3);
	g_assert_cmpuint(cli_text_width("漢字"), ==, 4);
	g_assert_cmpuint(cli_text_width("é"), ==, 1);
}

static void test_output_table_hostile(void)
{
	const char *targets[] = { "/run/a", "/run/evil\033[31m", NULL };
	g_autoptr(CliApp) app = make_app("ping", targets);
	g_autoptr(GError) error = NULL;
	g_autoptr(GString) plain = NULL;
	g_autoptr(GString) colored = NULL;
	g_auto(GStrv) lines = NULL;

	error = g_error_new_literal(GB_ERROR, GB_ERROR_REMOTE,
	                            "guest-ping: \033[2J\033[Hall good\nfake line");
	cli_guest_finish(guest_at(app, 0), ping_result(0.5), NULL);
	cli_guest_finish(guest_at(app, 1), NULL, error);

	plain = render_table(app, FALSE);
	g_test_message("%s", plain->str);
	g_assert_null(strchr(plain->str, '\033'));
	g_assert_nonnull(strstr(plain->str, "\\x1b[2J\\x1b[Hall good\\nfake line"));
	g_assert_nonnull(strstr(plain->str, "/run/evil\\x1b[31m"));
	g_assert_nonnull(strstr(plain->str, "0.500 ms"));
	lines = g_strsplit(plain->str, "\n", -1);
	/* header, two rows, and the empty string after the final newline */
	g_assert_cmpuint(g_strv_length(lines), ==, 4);
	g_assert_true(g_str_has_prefix(lines[0], "GUEST"));
	/* aligned: STATUS starts in the same column on every line */
	g_assert_cmpint(strstr(lines[0], "STATUS") - lines[0], ==,
	                strstr(lines[1], "ok") - lines[1]);
	g_assert_cmpint(strstr(lines[0], "STATUS") - lines[0], ==,
	                strstr(lines[2], "error") - lines[2]);
	for (guint i = 0; lines[i] != NULL; i++)
		g_assert_false(g_str_has_suffix(lines[i], " "));

	/* colour only around the status word, and the guest's escapes still escaped */
	colored = render_table(app, TRUE);
	g_assert_nonnull(strstr(colored->str, "\033[32mok\033[0m"));
	g_assert_nonnull(strstr(colored->str, "\033[31merror\033[0m"));
	g_assert_nonnull(strstr(colored->str, "\\x1b[2J"));

	/* --failed-only: only guests that are not ok */
	{
		g_autoptr(CliResults) all = cli_app_get_results(app);
		g_autoptr(CliResults) failed = cli_results_filter_failed(all);
		g_autoptr(GString) out =
		    cli_command_render(app->command, failed, CLI_FORMAT_TABLE, FALSE);

		g_assert_cmpuint(failed->guests->len, ==, 1);
		g_assert_null(strstr(out->str, "/run/a "));
		g_assert_nonnull(strstr(out->str, "error"));
	}
}

static void test_output_table_wide(void)
{
	g_autoptr(CliTable) table = cli_table_new("NAME", "STATUS", "X", NULL);
	g_autoptr(GString) out = g_string_new(NULL);
	g_auto(GStrv) lines = NULL;

	cli_table_add_row(table, "漢字漢字漢字", "ok", "1");
	cli_table_add_row(table, "a", "FAIL", NULL);
	g_assert_cmpuint(cli_table_get_n_rows(table), ==, 2);
	cli_table_render(table, FALSE, out);
	lines = g_strsplit(out->str, "\n", -1);
	/* 12 columns for six wide characters, then two spaces */
	g_assert_cmpstr(lines[0], ==, "NAME          STATUS  X");
	g_assert_cmpstr(lines[1], ==, "漢字漢字漢字  ok      1");
	g_assert_cmpstr(lines[2], ==, "a             FAIL");
}

static void test_output_info_table(void)
{
	const char *targets[] = { "/a", "/b", NULL };
	g_autoptr(CliApp) app = make_app("info", targets);
	g_autoptr(GError) error = NULL;
	g_autoptr(JsonNode) result = NULL;
	g_autoptr(GString) out = NULL;
	const char *json =
	    "{\"version\":\"1.2\",\"supported_commands\":["
	    "{\"name\":\"guest-ping\",\"enabled\":true,\"success-response\":true},"
	    "{\"name\":\"guest-exec\",\"enabled\":false,\"success-response\":true},"
	    "{\"name\":\"gb-get-facts\",\"enabled\":true,\"success-response\":true}]}";

	result = gb_json_parse(json, strlen(json), &error);
	g_assert_no_error(error);
	cli_guest_finish(guest_at(app, 0), g_steal_pointer(&result), NULL);
	error = g_error_new_literal(GB_ERROR, GB_ERROR_IO, "cannot connect to /b: refused");
	cli_guest_finish(guest_at(app, 1), NULL, error);
	out = render_table(app, FALSE);
	g_test_message("%s", out->str);
	g_assert_nonnull(strstr(out->str, "VERSION"));
	g_assert_nonnull(strstr(out->str, "1.2"));
	g_assert_nonnull(strstr(out->str, "2/3 enabled: guest-ping, gb-get-facts"));
	g_assert_nonnull(strstr(out->str, "cannot connect to /b: refused"));
}

static void test_output_write_file(void)
{
	const char *targets[] = { "/a", NULL };
	g_autoptr(CliApp) app = make_app("ping", targets);
	g_autoptr(GError) error = NULL;
	g_autofree char *dir = g_dir_make_tmp("gb-cli-XXXXXX", &error);
	g_autofree char *path = g_build_filename(dir, "out.json", NULL);
	g_autofree char *bad = g_build_filename(dir, "missing", "out.json", NULL);
	g_autofree char *contents = NULL;
	g_autoptr(GDir) d = NULL;
	guint n_files = 0;

	g_assert_no_error(error);
	cli_guest_finish(guest_at(app, 0), ping_result(0.1), NULL);
	app->opts.format = CLI_FORMAT_JSON;
	app->opts.output = g_strdup(path);
	/* an old file is replaced whole */
	g_assert_true(g_file_set_contents(path, "old contents that are longer", -1, &error));
	g_assert_true(cli_app_write_output(app, &error));
	g_assert_no_error(error);
	g_assert_true(g_file_get_contents(path, &contents, NULL, &error));
	g_assert_true(g_str_has_prefix(contents, "{\n"));
	g_assert_true(g_str_has_suffix(contents, "}\n"));
	g_assert_null(strstr(contents, "old contents"));

	/* a directory that went away: an error, and nothing left behind */
	g_free(app->opts.output);
	app->opts.output = g_strdup(bad);
	g_assert_false(cli_app_write_output(app, &error));
	g_assert_nonnull(error);
	g_assert_nonnull(strstr(error->message, "cannot write"));
	g_clear_error(&error);
	d = g_dir_open(dir, 0, &error);
	g_assert_no_error(error);
	while (g_dir_read_name(d) != NULL)
		n_files++;
	g_assert_cmpuint(n_files, ==, 1);
	g_unlink(path);
	g_rmdir(dir);
}

/* One table, three formats from the same rows; guest text escaped by each its own way. */
static void test_output_table_formats(void)
{
	g_autoptr(CliTable) table = cli_table_new("GUEST", "FAULT ns/4k", "RUNS", "NOTE", NULL);
	g_autoptr(GString) text = g_string_new(NULL);
	g_autoptr(GString) csv = g_string_new(NULL);
	g_autoptr(JsonNode) json = NULL;
	g_autoptr(JsonGenerator) gen = json_generator_new();
	g_autofree char *json_text = NULL;
	g_autofree char *key = cli_table_header_key("  CPU % (busy)  ");

	g_assert_cmpstr(key, ==, "cpu_busy");
	cli_table_set_column_kind(table, 1, CLI_COLUMN_NUMBER);
	cli_table_set_column_kind(table, 2, CLI_COLUMN_INTEGER);
	cli_table_add_row(table, "vm1", "2058.5", "5", "a,\"b\"", NULL);
	cli_table_add_row(table, "evil\033[2J\xff", "-", "many", "line\nbreak\007", NULL);

	cli_table_render(table, FALSE, text);
	g_assert_cmpstr(text->str, ==,
	                "GUEST            FAULT ns/4k  RUNS  NOTE\n"
	                "vm1              2058.5       5     a,\"b\"\n"
	                "evil\\x1b[2J\\xff  -            many  line\\nbreak\\x07\n");

	cli_table_render_csv(table, csv);
	g_assert_cmpstr(csv->str, ==,
	                "guest,fault_ns_4k,runs,note\n"
	                "vm1,2058.5,5,\"a,\"\"b\"\"\"\n"
	                "evil\\x1b[2J\\xff,-,many,line\\nbreak\\x07\n");

	json = cli_table_to_json(table);
	json_generator_set_root(gen, json);
	json_text = json_generator_to_data(gen, NULL);
	g_assert_cmpstr(
	    json_text, ==,
	    "[{\"guest\":\"vm1\",\"fault_ns_4k\":2058.5,\"runs\":5,\"note\":\"a,\\\"b\\\"\"},"
	    "{\"guest\":\"evil\\u001b[2J\xef\xbf\xbd\",\"fault_ns_4k\":null,\"runs\":null,"
	    "\"note\":\"line\\nbreak\\u0007\"}]");
}

int main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	g_test_add_func("/cli/output/json-document", test_output_json_document);
	g_test_add_func("/cli/output/exit-status", test_output_exit_status);
	g_test_add_func("/cli/output/invalid-utf8-error", test_output_invalid_utf8_error);
	g_test_add_func("/cli/output/escape", test_output_escape);
	g_test_add_func("/cli/output/table-hostile", test_output_table_hostile);
	g_test_add_func("/cli/output/table-wide", test_output_table_wide);
	g_test_add_func("/cli/output/table-formats", test_output_table_formats);
	g_test_add_func("/cli/output/info-table", test_output_info_table);
	g_test_add_func("/cli/output/write-file", test_output_write_file);
	return g_test_run();
}
