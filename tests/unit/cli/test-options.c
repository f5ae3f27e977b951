/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"

#include <glib/gstdio.h>

#include "gb-error.h"

#include "commands/app.h"
#include "commands/commands.h"

/* Parses a command line given as one string (split on spaces); NULL app on failure. */
static CliApp *parse(const char *cmdline, GError **error)
{
	g_autoptr(CliApp) app = cli_app_new();
	g_autofree char *full =
	    cmdline[0] != '\0' ? g_strdup_printf("guestbench %s", cmdline) : g_strdup("guestbench");
	g_auto(GStrv) argv = g_strsplit(full, " ", -1);

	if (!cli_app_parse(app, (const char *const *)argv, error))
		return NULL;
	return g_steal_pointer(&app);
}

static void assert_usage_error(const char *cmdline, const char *needle)
{
	g_autoptr(GError) error = NULL;
	g_autoptr(CliApp) app = parse(cmdline, &error);

	g_assert_null(app);
	g_assert_nonnull(error);
	g_test_message("'%s': %s", cmdline, error->message);
	g_assert_nonnull(strstr(error->message, needle));
}

static void test_options_before_after(void)
{
	const char *cmdlines[] = {
		"--format json -j 4 --timeout 2.5 -q ping /a unix:/b",
		"ping --format json -j 4 --timeout 2.5 -q /a unix:/b",
		"ping /a --format=json unix:/b -j4 --timeout=2.5 --quiet",
		"-qj 4 ping --format json /a --timeout 2.5 unix:/b",
		"--format json -- ping -j 4 /a --timeout 2.5 -q unix:/b",
	};

	for (guint i = 0; i < G_N_ELEMENTS(cmdlines); i++) {
		g_autoptr(GError) error = NULL;
		g_autoptr(CliApp) app = parse(cmdlines[i], &error);
		CliTarget *target;

		g_test_message("%s", cmdlines[i]);
		g_assert_no_error(error);
		g_assert_nonnull(app);
		g_assert_cmpint(app->action, ==, CLI_ACTION_RUN);
		g_assert_cmpstr(app->command->name, ==, "ping");
		g_assert_cmpint(app->opts.format, ==, CLI_FORMAT_JSON);
		g_assert_cmpuint(app->opts.jobs, ==, 4);
		g_assert_cmpfloat_with_epsilon(app->opts.timeout, 2.5, 1e-9);
		g_assert_true(app->opts.quiet);
		g_assert_cmpuint(app->targets->len, ==, 2);
		target = g_ptr_array_index(app->targets, 0);
		g_assert_cmpstr(target->path, ==, "/a");
		target = g_ptr_array_index(app->targets, 1);
		g_assert_cmpstr(target->text, ==, "unix:/b");
	}
}

static void test_options_defaults(void)
{
	g_autoptr(GError) error = NULL;
	g_autoptr(CliApp) app = parse("info /a", &error);

	g_assert_no_error(error);
	g_assert_cmpstr(app->command->name, ==, "info");
	g_assert_cmpint(app->opts.format, ==, CLI_FORMAT_TABLE);
	g_assert_cmpuint(app->opts.jobs, ==, CLI_DEFAULT_JOBS);
	g_assert_cmpfloat_with_epsilon(app->opts.timeout, CLI_DEFAULT_TIMEOUT, 1e-9);
	g_assert_cmpint(app->opts.color, ==, CLI_COLOR_AUTO);
	g_assert_false(app->opts.quiet);
	g_assert_null(app->opts.output);
}

static void test_options_bad_values(void)
{
	assert_usage_error("--format xml ping /a", "unknown format 'xml'");
	assert_usage_error("ping --format html /a", "'ping' cannot write --format html");
	assert_usage_error("ping --format= /a", "unknown format ''");
	assert_usage_error("ping --format", "Missing argument");
	assert_usage_error("ping -j 0 /a", "invalid value '0' for --jobs");
	assert_usage_error("ping -j 10001 /a", "invalid value '10001' for --jobs");
	assert_usage_error("ping -j -3 /a", "for --jobs");
	assert_usage_error("ping -j 4x /a", "invalid value '4x'");
	assert_usage_error("ping -j 99999999999999999999 /a", "for --jobs");
	assert_usage_error("ping --timeout 0 /a", "invalid value '0' for --timeout");
	assert_usage_error("ping --timeout -1 /a", "for --timeout");
	assert_usage_error("ping --timeout nan /a", "for --timeout");
	assert_usage_error("ping --timeout inf /a", "for --timeout");
	assert_usage_error("ping --timeout 1e9 /a", "for --timeout");
	assert_usage_error("ping --timeout 2s /a", "invalid value '2s'");
	assert_usage_error("ping --timeout= /a", "for --timeout");
	assert_usage_error("ping --color sometimes /a", "unknown value 'sometimes' for --color");
	assert_usage_error("ping --no-such-option /a", "no-such-option");
	assert_usage_error("ping -o /nonexistent-dir/out.json /a", "does not exist");
	assert_usage_error("ping -o / /a", "is a directory");
	assert_usage_error("ping --output= /a", "needs a file name");
}

static void test_options_commands(void)
{
	assert_usage_error("", "no command given");
	assert_usage_error("--format json", "no command given");
	assert_usage_error("frobnicate /a", "unknown command 'frobnicate'");
	assert_usage_error("ping", "no targets given for 'ping'");
	assert_usage_error("ping --format json", "no targets given");
	assert_usage_error("ping /a /b unix:/a", "duplicate target 'unix:/a'");
	assert_usage_error("ping nope:x", "unknown scheme 'nope:'");
	assert_usage_error("ping unix:", "empty socket path");
	assert_usage_error("help frobnicate", "unknown command 'frobnicate'");
	assert_usage_error("help ping info", "at most one");
}

static void test_options_help_version(void)
{
	g_autoptr(GError) error = NULL;
	g_autoptr(CliApp) app = NULL;

	app = parse("--help", &error);
	g_assert_no_error(error);
	g_assert_cmpint(app->action, ==, CLI_ACTION_HELP);
	g_assert_nonnull(strstr(app->help_text, "ping"));
	g_assert_nonnull(strstr(app->help_text, "info"));
	g_assert_nonnull(strstr(app->help_text, "--timeout"));
	g_clear_pointer(&app, cli_app_free);

	app = parse("ping --help", &error);
	g_assert_no_error(error);
	g_assert_cmpint(app->action, ==, CLI_ACTION_HELP);
	g_assert_nonnull(strstr(app->help_text, "round-trip"));
	g_assert_nonnull(strstr(app->help_text, "--jobs"));
	g_clear_pointer(&app, cli_app_free);

	/* --help wins over everything else that is wrong on the line, except bad values */
	app = parse("-h info", &error);
	g_assert_no_error(error);
	g_assert_cmpint(app->action, ==, CLI_ACTION_HELP);
	g_assert_nonnull(strstr(app->help_text, "enabled"));
	g_clear_pointer(&app, cli_app_free);

	app = parse("help ping", &error);
	g_assert_no_error(error);
	g_assert_cmpint(app->action, ==, CLI_ACTION_RUN);
	g_assert_cmpstr(app->command->name, ==, "help");
	g_assert_cmpuint(app->args->len, ==, 1);
	g_clear_pointer(&app, cli_app_free);

	app = parse("-V", &error);
	g_assert_no_error(error);
	g_assert_cmpint(app->action, ==, CLI_ACTION_VERSION);
	g_clear_pointer(&app, cli_app_free);
}

static void test_options_output_color(void)
{
	g_autoptr(GError) error = NULL;
	g_autoptr(CliApp) app = NULL;
	g_autofree char *dir = g_dir_make_tmp("gb-cli-XXXXXX", &error);
	g_autofree char *cmdline = NULL;

	g_assert_no_error(error);
	cmdline = g_strdup_printf("ping -o %s/out.json --color never /a", dir);
	app = parse(cmdline, &error);
	g_assert_no_error(error);
	g_assert_nonnull(app->opts.output);
	g_assert_true(g_str_has_suffix(app->opts.output, "/out.json"));
	g_assert_cmpint(app->opts.color, ==, CLI_COLOR_NEVER);
	g_assert_false(cli_app_use_color(app));
	app->opts.color = CLI_COLOR_ALWAYS;
	g_assert_true(cli_app_use_color(app));
	/* auto: never into a file, even when stdout is a terminal */
	app->opts.color = CLI_COLOR_AUTO;
	app->stdout_is_tty = TRUE;
	g_assert_false(cli_app_use_color(app));
	g_clear_pointer(&app->opts.output, g_free);
	g_assert_true(cli_app_use_color(app));
	app->stdout_is_tty = FALSE;
	g_assert_false(cli_app_use_color(app));
	g_rmdir(dir);
}

/* A typo or a misplaced option gets a message that says what to type instead. */
static void test_options_did_you_mean(void)
{
	const struct {
		const char *cmdline;
		const char *message;
	} cases[] = {
		{ "pnig /a", "unknown command 'pnig' (did you mean 'ping'?)" },
		{ "audt /a", "unknown command 'audt' (did you mean 'audit'?)" },
		{ "frobnicate /a", "unknown command 'frobnicate'" },
		{ "--fromat json ping /a", "unknown option --fromat (did you mean --format?)" },
		{ "ping --fromat json /a", "Unknown option --fromat (did you mean --format?)" },
		{ "bench aes --sizs 16 /a", "Unknown option --sizs (did you mean --sizes?)" },
		{ "--runs 0 bench aes /a",
		  "--runs is an option of 'bench': put it after the command "
		  "('guestbench bench ... --runs 0')" },
	};

	for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
		g_autoptr(GError) error = NULL;
		g_autoptr(CliApp) app = parse(cases[i].cmdline, &error);

		g_assert_null(app);
		g_assert_nonnull(error);
		g_assert_cmpstr(error->message, ==, cases[i].message);
	}
}

/* report writes HTML and needs no --format html; another format is refused. */
static void test_options_report_html(void)
{
	g_autoptr(GError) error = NULL;
	g_autoptr(CliApp) app = parse("report a.json b.json", &error);
	g_autoptr(CliApp) json = NULL;

	g_assert_no_error(error);
	g_assert_cmpint(app->opts.format, ==, CLI_FORMAT_HTML);
	json = parse("--format json report a.json b.json", &error);
	g_assert_null(json);
	g_assert_cmpstr(error->message, ==, "'report' cannot write --format json (it writes html)");
}

/* Whether the help text has an option line for long (e.g. "--jobs"). */
static gboolean help_lists(const char *help, const char *long_name)
{
	g_autofree char *with_value = g_strdup_printf("%s=", long_name);
	g_auto(GStrv) lines = g_strsplit(help, "\n", -1);

	for (guint i = 0; lines[i] != NULL; i++) {
		g_auto(GStrv) words = g_strsplit(g_strstrip(lines[i]), " ", -1);

		for (guint w = 0; words[w] != NULL && words[w][0] == '-'; w++) {
			g_strdelimit(words[w], ",", '\0');
			if (g_strcmp0(words[w], long_name) == 0 ||
			    g_str_has_prefix(words[w], with_value))
				return TRUE;
		}
	}
	return FALSE;
}

/* A command's help shows its formats and only the common options it takes. */
static void test_options_help_per_command(void)
{
	const struct {
		const char *command;
		const char *formats;      /* the --format line */
		const char *const *shown; /* options its help lists */
		const char *const *hidden;
	} cases[] = {
		{ "results", "Output format: table (default), json or csv",
		  (const char *const[]){ "--format", "--output", "--quiet", NULL },
		  (const char *const[]){ "--jobs", "--timeout", "--inventory", "--qmp", "--hosts",
		                         "--libvirt-dir", "--deadline", NULL } },
		{ "compare", "Output format: table (default), json or csv",
		  (const char *const[]){ "--by", "--format", NULL },
		  (const char *const[]){ "--jobs", "--tag", "--host-sysroot", NULL } },
		{ "report", "Output format: html (the only one)",
		  (const char *const[]){ "--by", "--output", NULL },
		  (const char *const[]){ "--jobs", "--inventory", NULL } },
		{ "merge", "Output format: table (default), json, csv or prom",
		  (const char *const[]){ "--format", NULL },
		  (const char *const[]){ "--timeout", "--name", NULL } },
		{ "host-check", "Output format: table (default), json or prom",
		  (const char *const[]){ "--host-sysroot", NULL },
		  (const char *const[]){ "--jobs", "--qmp", "--inventory", NULL } },
		{ "discover", "Output format: table (default) or json",
		  (const char *const[]){ "--libvirt-dir", NULL },
		  (const char *const[]){ "--jobs", "--qmp", "--hosts", NULL } },
		{ "bench", "Output format: table (default), json, csv or prom",
		  (const char *const[]){ "--runs", "--jobs", "--inventory", "--libvirt-dir",
		                         "--hosts", "--deadline", NULL },
		  (const char *const[]){ "--qmp", "--host-sysroot", NULL } },
		{ "audit", "Output format: table (default), json, csv or prom",
		  (const char *const[]){ "--list-rules", "--qmp", "--host-sysroot", "--jobs",
		                         NULL },
		  (const char *const[]){ "--runs", NULL } },
		{ "facts", "Output format: table (default), json, csv or prom",
		  (const char *const[]){ "--sections", "--jobs", NULL },
		  (const char *const[]){ "--qmp", NULL } },
	};

	for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
		g_autoptr(CliApp) app = cli_app_new();
		g_autofree char *help =
		    cli_app_get_command_help(app, cli_command_find(cases[i].command));

		g_test_message("%s", help);
		g_assert_nonnull(strstr(help, cases[i].formats));
		for (guint j = 0; cases[i].shown[j] != NULL; j++)
			g_assert_true(help_lists(help, cases[i].shown[j]));
		for (guint j = 0; cases[i].hidden[j] != NULL; j++)
			g_assert_false(help_lists(help, cases[i].hidden[j]));
		/* the targets paragraph belongs to commands that take targets */
		g_assert_true((strstr(help, "Targets:") != NULL) ==
		              (strstr(help, "--jobs") != NULL));
	}
	/* guestbench --help lists every common option */
	{
		g_autoptr(CliApp) app = cli_app_new();
		g_autofree char *help = cli_app_get_main_help(app);
		const char *all[] = { "--format",      "--jobs",  "--qmp",       "--host-sysroot",
			              "--libvirt-dir", "--hosts", "--inventory", NULL };

		for (guint j = 0; all[j] != NULL; j++)
			g_assert_true(help_lists(help, all[j]));
		g_assert_nonnull(strstr(help, "table (default), json, csv, prom or html"));
	}
}

/* A common option a command does not take is a usage error that says so, before or after. */
static void test_options_not_applying(void)
{
	assert_usage_error(
	    "results --inventory fleet.ini",
	    "--inventory does not apply to 'results' (see 'guestbench help results')");
	assert_usage_error("-j 4 results", "-j does not apply to 'results'");
	assert_usage_error("compare --timeout 3 a.json b.json",
	                   "--timeout does not apply to 'compare'");
	assert_usage_error("merge --qmp /q a.json", "--qmp does not apply to 'merge'");
	assert_usage_error("host-check --jobs=2", "--jobs does not apply to 'host-check'");
	assert_usage_error("facts --qmp /q /a", "--qmp does not apply to 'facts'");
	assert_usage_error("discover --timeout 2", "--timeout does not apply to 'discover'");
	assert_usage_error(
	    "host-check --format csv",
	    "'host-check' cannot write --format csv (it writes table, json or prom)");
	assert_usage_error(
	    "ping --format html /a",
	    "'ping' cannot write --format html (it writes table, json, csv or prom)");
	/* what they do take still parses */
	{
		g_autoptr(GError) error = NULL;
		g_autoptr(CliApp) a = parse("host-check --format prom --host-sysroot /", &error);
		g_autoptr(CliApp) b = parse("--libvirt-dir /nonexistent discover", &error);
		g_autoptr(CliApp) c = parse("audit --qmp /q --host-sysroot / /a", &error);

		g_assert_no_error(error);
		g_assert_cmpint(a->opts.format, ==, CLI_FORMAT_PROM);
		g_assert_cmpstr(b->opts.libvirt_dir, ==, "/nonexistent");
		g_assert_cmpstr(c->opts.qmp, ==, "/q");
	}
}

/* Whether command (NULL: the common options) has a long option name that takes a value. */
static gboolean has_value_option(const CliCommand *command, const char *name)
{
	g_autoptr(GArray) entries = cli_app_get_option_entries(command);

	for (guint i = 0; i < entries->len; i++) {
		const GOptionEntry *e = &g_array_index(entries, GOptionEntry, i);

		if (g_strcmp0(e->long_name, name) == 0)
			return e->arg != G_OPTION_ARG_NONE &&
			       (e->flags & G_OPTION_FLAG_NO_ARG) == 0;
	}
	return FALSE;
}

static void check_completions(const CliCommand *command, const CliCompletion *rows)
{
	for (guint i = 0; rows != NULL && rows[i].kind != CLI_COMPLETE_NONE; i++) {
		g_test_message("%s: %s", command != NULL ? command->name : "common",
		               rows[i].option != NULL ? rows[i].option : "(operand)");
		if (rows[i].option != NULL)
			g_assert_true(has_value_option(command, rows[i].option));
		if (rows[i].kind == CLI_COMPLETE_WORD || rows[i].kind == CLI_COMPLETE_LIST)
			g_assert_true(rows[i].words != NULL && rows[i].words[0] != NULL);
	}
}

/* What completion offers names options that exist, and the spec lists every command. */
static void test_options_completions(void)
{
	guint n = 0;
	const CliCommand *const *commands = cli_commands_get(&n);
	g_autoptr(GError) error = NULL;
	const char *spec_args[] = { "spec", NULL };
	const char *bad_args[] = { "spec", "extra", NULL };
	g_autofree char *spec = cli_complete_dump(spec_args, &error);
	g_autofree char *bad = NULL;

	check_completions(NULL, cli_app_get_common_completions());
	for (guint i = 0; i < n; i++)
		check_completions(commands[i], commands[i]->completions);
	g_assert_no_error(error);
	for (guint i = 0; i < n; i++) {
		g_autofree char *line = g_strdup_printf("command\t%s\n", commands[i]->name);
		g_assert_nonnull(strstr(spec, line));
	}
	g_assert_nonnull(strstr(spec, "operand\tbench\tword\taes,disk,mem,net\n"
	                              "operand\tbench\ttarget\t-\n"));
	g_assert_nonnull(
	    strstr(spec, "option\tresults\t--format\t-\tvalue\tword\ttable,json,csv\n"));
	g_assert_null(strstr(spec, "option\tresults\t--jobs"));
	g_assert_nonnull(strstr(spec, "option\tping\t--jobs\t-j\tvalue\tnone\t-\n"));
	g_assert_nonnull(strstr(spec, "option\tping\t--inventory\t-\tvalue\tfile\t-\n"));
	bad = cli_complete_dump(bad_args, &error);
	g_assert_null(bad);
	g_assert_error(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT);
}

int main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	g_test_add_func("/cli/options/before-after", test_options_before_after);
	g_test_add_func("/cli/options/defaults", test_options_defaults);
	g_test_add_func("/cli/options/bad-values", test_options_bad_values);
	g_test_add_func("/cli/options/commands", test_options_commands);
	g_test_add_func("/cli/options/did-you-mean", test_options_did_you_mean);
	g_test_add_func("/cli/options/report-html", test_options_report_html);
	g_test_add_func("/cli/options/help-version", test_options_help_version);
	g_test_add_func("/cli/options/help-per-command", test_options_help_per_command);
	g_test_add_func("/cli/options/not-applying", test_options_not_applying);
	g_test_add_func("/cli/options/completions", test_options_completions);
	g_test_add_func("/cli/options/output-color", test_options_output_color);
	return g_test_run();
}
