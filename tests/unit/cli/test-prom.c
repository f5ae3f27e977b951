/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"

#include <math.h>

#include "guestbench-protocol.h"

#include "commands/app.h"
#include "commands/commands.h"
#include "render/prom.h"

/* ---- a small validator of the text exposition format ---------------------------------- */

static gboolean is_name_char(char c, gboolean first, gboolean colon)
{
	return g_ascii_isalpha(c) || c == '_' || (colon && c == ':') ||
	       (!first && g_ascii_isdigit(c));
}

static const char *parse_name(const char *p, gboolean colon)
{
	if (!is_name_char(*p, TRUE, colon))
		return NULL;
	while (is_name_char(*p, FALSE, colon))
		p++;
	return p;
}

static gboolean parse_value(const char *p)
{
	char *end = NULL;

	if (g_strcmp0(p, "NaN") == 0 || g_strcmp0(p, "+Inf") == 0 || g_strcmp0(p, "-Inf") == 0)
		return TRUE;
	if (*p == '\0' || g_ascii_isspace(*p))
		return FALSE;
	g_ascii_strtod(p, &end);
	return end != NULL && *end == '\0';
}

/* Fails the test at the first line that node_exporter's parser would reject. */
static void assert_exposition(const char *text)
{
	g_auto(GStrv) lines = NULL;
	g_autoptr(GHashTable) typed = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
	g_autofree char *current = NULL;

	g_assert_true(g_str_has_suffix(text, "\n"));
	g_assert_true(g_utf8_validate(text, -1, NULL));
	lines = g_strsplit(text, "\n", -1);
	for (guint i = 0; lines[i + 1] != NULL; i++) {
		const char *p = lines[i];
		const char *end;
		g_autofree char *name = NULL;

		g_test_message("line %u: %s", i + 1, p);
		if (g_str_has_prefix(p, "# HELP ")) {
			end = parse_name(p + 7, TRUE);
			g_assert_nonnull(end);
			g_assert_true(*end == ' ');
			/* help escapes: only \\ and \n */
			for (const char *c = end + 1; *c != '\0'; c++) {
				if (*c == '\\') {
					c++;
					g_assert_true(*c == '\\' || *c == 'n');
				}
			}
			continue;
		}
		if (g_str_has_prefix(p, "# TYPE ")) {
			end = parse_name(p + 7, TRUE);
			g_assert_nonnull(end);
			name = g_strndup(p + 7, end - (p + 7));
			g_assert_true(*end == ' ');
			g_assert_true(g_strcmp0(end + 1, "gauge") == 0 ||
			              g_strcmp0(end + 1, "counter") == 0 ||
			              g_strcmp0(end + 1, "untyped") == 0);
			/* a family appears once */
			g_assert_false(g_hash_table_contains(typed, name));
			g_hash_table_add(typed, g_strdup(name));
			g_free(current);
			current = g_steal_pointer(&name);
			continue;
		}
		g_assert_false(p[0] == '#');
		end = parse_name(p, TRUE);
		g_assert_nonnull(end);
		name = g_strndup(p, end - p);
		/* samples follow their own TYPE line, all together */
		g_assert_cmpstr(name, ==, current);
		p = end;
		if (*p == '{') {
			p++;
			while (*p != '}') {
				end = parse_name(p, FALSE);
				g_assert_nonnull(end);
				g_assert_true(end[0] == '=' && end[1] == '"');
				p = end + 2;
				while (*p != '"') {
					g_assert_true(*p != '\0' && *p != '\n');
					if (*p == '\\') {
						p++;
						g_assert_true(*p == '\\' || *p == '"' || *p == 'n');
					}
					p++;
				}
				p++;
				if (*p == ',')
					p++;
				else
					g_assert_true(*p == '}');
			}
			p++;
		}
		g_assert_true(*p == ' ');
		g_assert_true(parse_value(p + 1));
	}
}

/* ---- the helpers ------------------------------------------------------------------------ */

static void test_prom_escape(void)
{
	struct {
		const char *in;
		const char *out;
	} cases[] = {
		{ "plain", "plain" },
		{ "a\\b", "a\\\\b" },
		{ "say \"hi\"", "say \\\"hi\\\"" },
		/* a newline is shown as \n, then its backslash is escaped */
		{ "two\nlines", "two\\\\nlines" },
		{ "\\\"\n", "\\\\\\\"\\\\n" },
		/* what a terminal obeys: ESC, BEL, CR, C1 CSI, bidi override, U+061C */
		{ "\x1b[2J\x07\r", "\\\\x1b[2J\\\\x07\\\\r" },
		{ "\xc2\x9b\xe2\x80\xae\xd8\x9c", "\\\\u009b\\\\u202e\\\\u061c" },
		{ "", "" },
		{ "ünï", "ünï" },
		{ "bad\xff", "bad\\\\xff" },
	};

	for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
		g_autofree char *esc = cli_prom_escape_label(cases[i].in);
		g_assert_cmpstr(esc, ==, cases[i].out);
	}
	{
		g_autofree char *esc = cli_prom_escape_label(NULL);
		g_assert_cmpstr(esc, ==, "");
	}
	g_assert_true(cli_prom_is_metric_name("guestbench_up"));
	g_assert_true(cli_prom_is_metric_name("a:b_c1"));
	g_assert_false(cli_prom_is_metric_name("1abc"));
	g_assert_false(cli_prom_is_metric_name("a-b"));
	g_assert_false(cli_prom_is_metric_name(""));
	g_assert_true(cli_prom_is_label_name("guest"));
	g_assert_false(cli_prom_is_label_name("a:b"));
	g_assert_false(cli_prom_is_label_name("__reserved"));
}

static void test_prom_duplicates(void)
{
	g_autoptr(GString) doc = g_string_new("# HELP a x\n# TYPE a gauge\n"
	                                      "a{disk=\"vda\"} 1\n"
	                                      "a{disk=\"vdb\"} 2\n"
	                                      "a{disk=\"vda\"} 3\n"
	                                      "# HELP b x\n# TYPE b gauge\n"
	                                      "b 1\n"
	                                      "b 2\n"
	                                      "a_x{disk=\"vda\"} 4\n");

	cli_prom_drop_duplicates(doc);
	g_assert_cmpstr(doc->str, ==,
	                "# HELP a x\n# TYPE a gauge\n"
	                "a{disk=\"vda\"} 1\n"
	                "a{disk=\"vdb\"} 2\n"
	                "# HELP b x\n# TYPE b gauge\n"
	                "b 1\n"
	                "a_x{disk=\"vda\"} 4\n");
	g_string_assign(doc, "");
	cli_prom_drop_duplicates(doc);
	g_assert_cmpstr(doc->str, ==, "");
	g_string_assign(doc, "c 1\nc 1");
	cli_prom_drop_duplicates(doc);
	g_assert_cmpstr(doc->str, ==, "c 1\n");
}

static void test_prom_samples(void)
{
	g_autoptr(GString) out = g_string_new(NULL);

	cli_prom_family(out, "gb_test", "gauge",
	                "Help with a \\ backslash,\na newline and \"quotes\".");
	cli_prom_sample(out, "gb_test", 1.0, "guest", "a\"b\\c\nd", "target", "unix:/x", NULL);
	cli_prom_sample(out, "gb_test", 0.25, NULL);
	cli_prom_sample(out, "gb_test", NAN, "guest", NULL, NULL);
	cli_prom_sample(out, "gb_test", INFINITY, "guest", "inf", NULL);
	cli_prom_sample(out, "gb_test", -INFINITY, "guest", "-inf", NULL);
	cli_prom_sample(out, "gb_test", 1e300, "guest", "big", NULL);
	g_test_message("%s", out->str);
	g_assert_cmpstr(out->str, ==,
	                "# HELP gb_test Help with a \\\\ backslash,\\na newline and \"quotes\".\n"
	                "# TYPE gb_test gauge\n"
	                "gb_test{guest=\"a\\\"b\\\\c\\\\nd\",target=\"unix:/x\"} 1\n"
	                "gb_test 0.25\n"
	                "gb_test{guest=\"\"} NaN\n"
	                "gb_test{guest=\"inf\"} +Inf\n"
	                "gb_test{guest=\"-inf\"} -Inf\n"
	                "gb_test{guest=\"big\"} 1.0000000000000001e+300\n");
	assert_exposition(out->str);
}

/* ---- ping and info renderers on a finished app --------------------------------------- */

static const char *const hostile_names[] = {
	"plain", "with,comma", "with \"quotes\"", "two\nlines", "back\\slash", "ünïcödé",
};

static CliApp *make_app(const char *command)
{
	CliApp *app = cli_app_new();
	g_autoptr(GError) error = NULL;

	app->command = cli_command_find(command);
	app->targets = g_ptr_array_new_with_free_func((GDestroyNotify)cli_target_free);
	for (guint i = 0; i < G_N_ELEMENTS(hostile_names); i++) {
		g_autofree char *text = g_strdup_printf("/run/g%u.sock", i);
		CliTarget *t = cli_target_parse(text, &error);
		g_assert_no_error(error);
		g_free(t->name);
		t->name = g_strdup(hostile_names[i]);
		g_ptr_array_add(app->targets, t);
	}
	cli_app_add_guests(app);
	for (guint i = 0; i < app->guests->len; i++) {
		CliGuest *guest = g_ptr_array_index(app->guests, i);
		g_autoptr(GError) err = NULL;
		const char *json =
		    g_strcmp0(command, "ping") == 0
		        ? "{\"rtt_ms\": 1.5}"
		        : "{\"version\": \"1.0 \\\"beta\\\",\\nx\", \"supported_commands\": "
		          "[{\"name\": \"guest-ping\", \"enabled\": true}, {\"name\": "
		          "\"gb-get-facts\", \"enabled\": true}, {\"name\": \"off\", "
		          "\"enabled\": false}]}";

		if (i % 2 == 1) {
			err = g_error_new(GB_ERROR, i == 3 ? GB_ERROR_TIMEOUT : GB_ERROR_FAILED,
			                  "broke, \"badly\"\non line two");
			cli_guest_finish(guest, NULL, err);
			continue;
		}
		cli_guest_finish(guest, gb_json_parse(json, strlen(json), NULL), NULL);
	}
	return app;
}

/* The app's results as its command renders them in format. */
static GString *render(CliApp *app, CliFormat format)
{
	g_autoptr(CliResults) results = cli_app_get_results(app);

	return cli_command_render(app->command, results, format, FALSE);
}

/* Splits RFC 4180 text into records of fields; asserts it is well-formed. */
static GPtrArray *parse_csv(const char *text)
{
	GPtrArray *rows = g_ptr_array_new_with_free_func((GDestroyNotify)g_ptr_array_unref);
	GPtrArray *row = g_ptr_array_new_with_free_func(g_free);
	GString *field = g_string_new(NULL);
	const char *p = text;

	while (*p != '\0') {
		if (*p == '"') {
			p++;
			for (;;) {
				g_assert_true(*p != '\0');
				if (*p == '"' && p[1] == '"') {
					g_string_append_c(field, '"');
					p += 2;
				} else if (*p == '"') {
					p++;
					break;
				} else {
					g_string_append_c(field, *p++);
				}
			}
			g_assert_true(*p == ',' || *p == '\n');
		}
		if (*p == ',' || *p == '\n') {
			g_ptr_array_add(row, g_string_free(field, FALSE));
			field = g_string_new(NULL);
			if (*p == '\n') {
				g_ptr_array_add(rows, row);
				row = g_ptr_array_new_with_free_func(g_free);
			}
			p++;
			continue;
		}
		g_assert_true(*p != '"');
		g_string_append_c(field, *p++);
	}
	g_assert_cmpuint(field->len, ==, 0); /* the text ends with a newline */
	g_string_free(field, TRUE);
	g_ptr_array_unref(row);
	return rows;
}

static const char *cell(GPtrArray *rows, guint r, guint c)
{
	GPtrArray *row = g_ptr_array_index(rows, r);
	return g_ptr_array_index(row, c);
}

static void test_prom_ping_info_csv(void)
{
	g_autoptr(CliApp) ping = make_app("ping");
	g_autoptr(CliApp) info = make_app("info");
	g_autoptr(GString) ping_csv = render(ping, CLI_FORMAT_CSV);
	g_autoptr(GString) info_csv = render(info, CLI_FORMAT_CSV);
	g_autoptr(GPtrArray) rows = NULL;
	g_autoptr(GPtrArray) info_rows = NULL;

	g_test_message("%s\n%s", ping_csv->str, info_csv->str);
	rows = parse_csv(ping_csv->str);
	g_assert_cmpuint(rows->len, ==, 1 + G_N_ELEMENTS(hostile_names));
	g_assert_cmpstr(cell(rows, 0, 0), ==, "guest");
	g_assert_cmpstr(cell(rows, 0, 3), ==, "rtt_ms");
	for (guint i = 0; i < G_N_ELEMENTS(hostile_names); i++) {
		GPtrArray *row = g_ptr_array_index(rows, i + 1);
		g_assert_cmpuint(row->len, ==, 5);
		g_assert_cmpstr(cell(rows, i + 1, 0), ==, hostile_names[i]);
		if (i % 2 == 0) {
			g_assert_cmpstr(cell(rows, i + 1, 2), ==, "ok");
			g_assert_cmpstr(cell(rows, i + 1, 3), ==, "1.500");
			g_assert_cmpstr(cell(rows, i + 1, 4), ==, "");
		} else {
			g_assert_cmpstr(cell(rows, i + 1, 2), ==, i == 3 ? "timeout" : "error");
			g_assert_cmpstr(cell(rows, i + 1, 4), ==, "broke, \"badly\"\\non line two");
		}
	}
	info_rows = parse_csv(info_csv->str);
	g_assert_cmpuint(info_rows->len, ==, 1 + G_N_ELEMENTS(hostile_names));
	g_assert_cmpstr(cell(info_rows, 0, 4), ==, "enabled_commands");
	g_assert_cmpstr(cell(info_rows, 1, 3), ==, "1.0 \"beta\",\\nx");
	g_assert_cmpstr(cell(info_rows, 1, 4), ==, "guest-ping;gb-get-facts");
	g_assert_cmpstr(cell(info_rows, 2, 3), ==, "");
}

/* An error text with terminal controls (a qemu-ga stderr excerpt, kept raw by transport/). */
static void test_prom_csv_error_escaped(void)
{
	g_autoptr(CliResults) results = cli_results_new("ping");
	g_autoptr(GString) csv = NULL;
	g_autoptr(GPtrArray) rows = NULL;

	cli_results_add(results,
	                cli_result_new("g", "/g.sock", CLI_GUEST_ERROR,
	                               "qga: \033]0;pwned\007\033[2Jgone\nline two", NULL));
	csv = cli_command_render(cli_command_find("ping"), results, CLI_FORMAT_CSV, FALSE);
	g_assert_null(strchr(csv->str, '\033'));
	g_assert_null(strchr(csv->str, '\007'));
	rows = parse_csv(csv->str);
	g_assert_cmpstr(cell(rows, 1, 4), ==, "qga: \\x1b]0;pwned\\x07\\x1b[2Jgone\\nline two");
}

static void test_prom_ping_info_prom(void)
{
	g_autoptr(CliApp) ping = make_app("ping");
	g_autoptr(CliApp) info = make_app("info");
	g_autoptr(GString) ping_prom = render(ping, CLI_FORMAT_PROM);
	g_autoptr(GString) info_prom = render(info, CLI_FORMAT_PROM);

	g_test_message("%s\n%s", ping_prom->str, info_prom->str);
	assert_exposition(ping_prom->str);
	assert_exposition(info_prom->str);
	g_assert_nonnull(
	    strstr(ping_prom->str, "guestbench_up{guest=\"plain\",target=\"/run/g0.sock\"} 1\n"));
	g_assert_nonnull(strstr(
	    ping_prom->str, "guestbench_up{guest=\"two\\\\nlines\",target=\"/run/g3.sock\"} 0\n"));
	g_assert_nonnull(strstr(ping_prom->str,
	                        "guestbench_ping_rtt_seconds{guest=\"with "
	                        "\\\"quotes\\\"\",target=\"/run/g2.sock\"} 0.0015\n"));
	g_assert_nonnull(strstr(info_prom->str, "guestbench_agent_info{guest=\"back\\\\slash\","
	                                        "version=\"1.0 \\\"beta\\\",\\\\nx\"} 1\n"));
	/* only guests that answered have an info sample */
	g_assert_null(strstr(info_prom->str, "guestbench_agent_info{guest=\"with,comma\""));
}

int main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	g_test_add_func("/prom/escape", test_prom_escape);
	g_test_add_func("/prom/samples", test_prom_samples);
	g_test_add_func("/prom/duplicates", test_prom_duplicates);
	g_test_add_func("/prom/ping-info-csv", test_prom_ping_info_csv);
	g_test_add_func("/prom/ping-info-prom", test_prom_ping_info_prom);
	g_test_add_func("/prom/csv-error-escaped", test_prom_csv_error_escaped);
	return g_test_run();
}
