/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <unistd.h>

#include "guestbench-protocol.h"

#include "fleet/remote.h"
#include "commands/bench-args.h"
#include "commands/app.h"
#include "commands/commands.h"
#include "fleet/hostview.h"
#include "fleet/merge.h"
#include "fleet/resolve.h"
#include "fleet/runner.h"
#include "render/escape.h"
#include "transport/reply-budget.h"

/*
 * --failed-only filters what the guests' run (or merge) prints; Prometheus needs
 * every guest's series and the HTML report is of saved runs.
 */
static gboolean cli_app_check_failed_only(CliApp *app, const CliCommand *command, GError **error)
{
	if (!app->opts.failed_only)
		return TRUE;
	if (command->start == NULL && command != &cli_cmd_merge) {
		g_set_error(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT,
		            "--failed-only applies to commands that contact guests and to merge, "
		            "not '%s'",
		            command->name);
		return FALSE;
	}
	if (app->opts.format == CLI_FORMAT_PROM || app->opts.format == CLI_FORMAT_HTML) {
		g_set_error(
		    error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT,
		    "--failed-only applies to --format table, csv and json, not %s%s",
		    cli_format_to_string(app->opts.format),
		    app->opts.format == CLI_FORMAT_PROM
		        ? " (Prometheus needs every guest, with guestbench_up 0 for those down)"
		        : "");
		return FALSE;
	}
	return TRUE;
}

/* ---- options ------------------------------------------------------------------------- */

static gboolean cli_option_format_cb(const char *option_name, const char *value, gpointer data,
                                     GError **error)
{
	CliApp *app = data;

	app->opts.format_given = TRUE;

	if (g_strcmp0(value, "table") == 0) {
		app->opts.format = CLI_FORMAT_TABLE;
		return TRUE;
	}
	if (g_strcmp0(value, "json") == 0) {
		app->opts.format = CLI_FORMAT_JSON;
		return TRUE;
	}
	if (g_strcmp0(value, "csv") == 0) {
		app->opts.format = CLI_FORMAT_CSV;
		return TRUE;
	}
	if (g_strcmp0(value, "prom") == 0) {
		app->opts.format = CLI_FORMAT_PROM;
		return TRUE;
	}
	if (g_strcmp0(value, "html") == 0) {
		app->opts.format = CLI_FORMAT_HTML;
		return TRUE;
	}
	g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
	            "unknown format '%s' for --format (expected table, json, csv, prom or html)",
	            value);
	return FALSE;
}

static gboolean cli_option_output_cb(const char *option_name, const char *value, gpointer data,
                                     GError **error)
{
	CliApp *app = data;

	if (value[0] == '\0') {
		g_set_error_literal(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
		                    "--output needs a file name");
		return FALSE;
	}
	g_free(app->opts.output);
	app->opts.output = g_strdup(value);
	return TRUE;
}

static gboolean cli_option_jobs_cb(const char *option_name, const char *value, gpointer data,
                                   GError **error)
{
	CliApp *app = data;
	guint64 jobs = 0;

	if (!g_ascii_string_to_unsigned(value, 10, 1, CLI_MAX_JOBS, &jobs, NULL)) {
		g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
		            "invalid value '%s' for --jobs (expected a whole number from 1 to %u)",
		            value, CLI_MAX_JOBS);
		return FALSE;
	}
	app->opts.jobs = jobs;
	return TRUE;
}

/* Seconds for --timeout, --deadline and --wait-busy: a plain number from min to CLI_MAX_TIMEOUT. */
static gboolean cli_parse_seconds(const char *option_name, const char *value, double min,
                                  double *seconds, GError **error)
{
	char *end = NULL;
	double parsed = g_ascii_strtod(value, &end);

	if (value[0] == '\0' || g_ascii_isspace(value[0]) || end == NULL || *end != '\0' ||
	    !isfinite(parsed) || parsed < min || parsed > CLI_MAX_TIMEOUT) {
		g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
		            "invalid value '%s' for %s (expected seconds from %g to %.0f)", value,
		            option_name, min, CLI_MAX_TIMEOUT);
		return FALSE;
	}
	*seconds = parsed;
	return TRUE;
}

static gboolean cli_option_timeout_cb(const char *option_name, const char *value, gpointer data,
                                      GError **error)
{
	CliApp *app = data;

	return cli_parse_seconds("--timeout", value, 0.001, &app->opts.timeout, error);
}

/* 0 (the default) does not wait. */
static gboolean cli_option_wait_busy_cb(const char *option_name, const char *value, gpointer data,
                                        GError **error)
{
	CliApp *app = data;

	return cli_parse_seconds("--wait-busy", value, 0, &app->opts.wait_busy, error);
}

/* SIZE in bytes, with an optional k, M or G (binary), from 1 byte to CLI_REPLY_BUDGET_MAX. */
static gboolean cli_option_reply_budget_cb(const char *option_name, const char *value,
                                           gpointer data, GError **error)
{
	CliApp *app = data;
	g_autoptr(GError) local_error = NULL;

	if (!cli_bench_parse_size(value, CLI_REPLY_BUDGET_MAX, &app->opts.reply_budget,
	                          &local_error)) {
		g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
		            "invalid value '%s' for --reply-budget: %s", value,
		            local_error->message);
		return FALSE;
	}
	return TRUE;
}

static gboolean cli_option_color_cb(const char *option_name, const char *value, gpointer data,
                                    GError **error)
{
	CliApp *app = data;

	if (g_strcmp0(value, "auto") == 0) {
		app->opts.color = CLI_COLOR_AUTO;
	} else if (g_strcmp0(value, "always") == 0) {
		app->opts.color = CLI_COLOR_ALWAYS;
	} else if (g_strcmp0(value, "never") == 0) {
		app->opts.color = CLI_COLOR_NEVER;
	} else {
		g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
		            "unknown value '%s' for --color (expected auto, always or never)",
		            value);
		return FALSE;
	}
	return TRUE;
}

/* The fleet options (--connect, --inventory, --tag, --name repeat; --libvirt-dir, --deadline once).
 */
static gboolean cli_option_fleet_cb(const char *option_name, const char *value, gpointer data,
                                    GError **error)
{
	CliApp *app = data;
	char ***list = NULL;
	guint n;

	if (value[0] == '\0') {
		g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE, "%s needs a value",
		            option_name);
		return FALSE;
	}
	if (g_strcmp0(option_name, "--deadline") == 0)
		return cli_parse_seconds(option_name, value, 0.001, &app->opts.deadline, error);
	if (g_strcmp0(option_name, "--libvirt-dir") == 0) {
		g_free(app->opts.libvirt_dir);
		app->opts.libvirt_dir = g_strdup(value);
		return TRUE;
	}
	if (g_strcmp0(option_name, "--connect") == 0 || g_strcmp0(option_name, "-c") == 0)
		list = &app->opts.connect;
	else if (g_strcmp0(option_name, "--inventory") == 0)
		list = &app->opts.inventories;
	else if (g_strcmp0(option_name, "--tag") == 0)
		list = &app->opts.tags;
	else
		list = &app->opts.names;
	n = *list != NULL ? g_strv_length(*list) : 0;
	*list = g_renew(char *, *list, n + 2);
	(*list)[n] = g_strdup(value);
	(*list)[n + 1] = NULL;
	return TRUE;
}

static gboolean cli_option_flag_cb(const char *option_name, const char *value, gpointer data,
                                   GError **error)
{
	CliApp *app = data;

	if (g_strcmp0(option_name, "-q") == 0 || g_strcmp0(option_name, "--quiet") == 0)
		app->opts.quiet = TRUE;
	else if (g_strcmp0(option_name, "--failed-only") == 0)
		app->opts.failed_only = TRUE;
	else if (g_strcmp0(option_name, "-v") == 0 || g_strcmp0(option_name, "--verbose") == 0)
		app->opts.verbose = TRUE;
	else if (g_strcmp0(option_name, "-V") == 0 || g_strcmp0(option_name, "--version") == 0)
		app->opts.version = TRUE;
	else
		app->opts.help = TRUE;
	return TRUE;
}

static gboolean cli_option_remaining_cb(const char *option_name, const char *value, gpointer data,
                                        GError **error)
{
	CliApp *app = data;
	g_ptr_array_add(app->args, g_strdup(value));
	return TRUE;
}

/* What --format says in --help; replaced by the command's own formats (cli_app_translate). */
static const char cli_format_summary[] = "Output format: table (default), json, csv, prom or html";

/*
 * Callbacks, not arg_data: the entries stay static and write into the CliApp of the group.
 * One table per CliCommonOptions bit; a command's --help and parse get those it takes.
 */
static const GOptionEntry cli_general_entries[] = {
	{ "format", '\0', 0, G_OPTION_ARG_CALLBACK, cli_option_format_cb, cli_format_summary,
	  "FORMAT" },
	{ "output", 'o', G_OPTION_FLAG_FILENAME, G_OPTION_ARG_CALLBACK, cli_option_output_cb,
	  "Write the output document to FILE (- for stdout; a regular file atomically)", "FILE" },
	{ "quiet", 'q', G_OPTION_FLAG_NO_ARG, G_OPTION_ARG_CALLBACK, cli_option_flag_cb,
	  "No progress, notes or hints on stderr; the results are printed all the same", NULL },
	{ "failed-only", '\0', G_OPTION_FLAG_NO_ARG, G_OPTION_ARG_CALLBACK, cli_option_flag_cb,
	  "List only the guests that are not ok (table, csv, json)", NULL },
	{ "color", '\0', 0, G_OPTION_ARG_CALLBACK, cli_option_color_cb,
	  "Colour the table: auto (default), always or never", "WHEN" },
	{ "verbose", 'v', G_OPTION_FLAG_NO_ARG, G_OPTION_ARG_CALLBACK, cli_option_flag_cb,
	  "Print debug messages to stderr", NULL },
	{ "version", 'V', G_OPTION_FLAG_NO_ARG, G_OPTION_ARG_CALLBACK, cli_option_flag_cb,
	  "Print the version and exit", NULL },
	{ "help", 'h', G_OPTION_FLAG_NO_ARG, G_OPTION_ARG_CALLBACK, cli_option_flag_cb, "Show help",
	  NULL },
	{ G_OPTION_REMAINING, '\0', 0, G_OPTION_ARG_CALLBACK, cli_option_remaining_cb, NULL, NULL },
	{ NULL },
};

static const GOptionEntry cli_target_entries[] = {
	{ "jobs", 'j', 0, G_OPTION_ARG_CALLBACK, cli_option_jobs_cb,
	  "Guests contacted at once (default 64, 1..10000)", "N" },
	{ "timeout", '\0', 0, G_OPTION_ARG_CALLBACK, cli_option_timeout_cb,
	  "Seconds per guest for connect, sync and reply (default 10)", "SECONDS" },
	{ "qga-agent", '\0', G_OPTION_FLAG_FILENAME, G_OPTION_ARG_CALLBACK, cli_option_qga_agent_cb,
	  "The agent binary inside qga: guests (default " GB_AGENT_DEFAULT_BINARY ")", "PATH" },
	{ "deadline", '\0', 0, G_OPTION_ARG_CALLBACK, cli_option_fleet_cb,
	  "Seconds for the whole run; guests not done time out, jobs cancelled", "SECONDS" },
	{ "wait-busy", '\0', 0, G_OPTION_ARG_CALLBACK, cli_option_wait_busy_cb,
	  "Wait up to SECONDS for a guest another guestbench is using (default 0)", "SECONDS" },
	{ "reply-budget", '\0', 0, G_OPTION_ARG_CALLBACK, cli_option_reply_budget_cb,
	  "Guest replies (and --hosts documents) held, all together (default 1G; k, M, G)",
	  "SIZE" },
	{ "inventory", '\0', G_OPTION_FLAG_FILENAME, G_OPTION_ARG_CALLBACK, cli_option_fleet_cb,
	  "Add the guests of an inventory file, like @FILE (repeatable)", "FILE" },
	{ "tag", '\0', 0, G_OPTION_ARG_CALLBACK, cli_option_fleet_cb,
	  "Only inventory guests with this tag (repeatable: any of them)", "TAG" },
	{ "name", '\0', 0, G_OPTION_ARG_CALLBACK, cli_option_fleet_cb,
	  "Only inventory guests whose name matches GLOB (repeatable: any)", "GLOB" },
	{ NULL },
};

static const GOptionEntry cli_libvirt_entries[] = {
	{ "connect", 'c', 0, G_OPTION_ARG_CALLBACK, cli_option_fleet_cb,
	  "libvirt connection URI, as virsh -c (repeatable; default $LIBVIRT_DEFAULT_URI, else "
	  "libvirt's own), or Proxmox VE's pve:/// (this node), pve+ssh://[USER@]NODE/, "
	  "pve:///cluster; without targets: every running guest of each",
	  "URI" },
	{ "libvirt-dir", '\0', G_OPTION_FLAG_FILENAME, G_OPTION_ARG_CALLBACK, cli_option_fleet_cb,
	  "Read libvirt's state files in DIR instead of asking libvirt (root on the hypervisor)",
	  "DIR" },
	{ NULL },
};

static const GOptionEntry cli_hosts_entries[] = {
	{ "hosts", '\0', 0, G_OPTION_ARG_CALLBACK, cli_remote_option_cb,
	  "Run on these hypervisors over ssh and merge (repeatable)", "HOST,..." },
	{ "host-jobs", '\0', 0, G_OPTION_ARG_CALLBACK, cli_remote_jobs_option_cb,
	  "With --hosts: hypervisors contacted at once (default 16, 1..1000)", "N" },
	{ NULL },
};

static const GOptionEntry cli_qmp_entries[] = {
	{ "qmp", '\0', G_OPTION_FLAG_FILENAME, G_OPTION_ARG_CALLBACK, cli_option_host_cb,
	  "audit: the QEMU monitor (QMP socket or libvirt:DOMAIN) of the single target", "PATH" },
	{ NULL },
};

static const GOptionEntry cli_sysroot_entries[] = {
	{ "host-sysroot", '\0', G_OPTION_FLAG_FILENAME, G_OPTION_ARG_CALLBACK, cli_option_host_cb,
	  "Read host /proc and /sys under DIR (default /)", "DIR" },
	{ NULL },
};

/* Which commands get each table (general: every command), in --help order. */
static const struct {
	guint options; /* CliCommonOptions; 0 for every command */
	const GOptionEntry *entries;
} cli_common_tables[] = {
	{ 0, cli_general_entries },
	{ CLI_OPTIONS_TARGETS, cli_target_entries },
	{ CLI_OPTIONS_TARGETS | CLI_OPTIONS_LIBVIRT, cli_libvirt_entries },
	{ CLI_OPTIONS_QMP, cli_qmp_entries },
	{ CLI_OPTIONS_SYSROOT, cli_sysroot_entries },
	{ CLI_OPTIONS_HOSTS, cli_hosts_entries },
};

static const char *const cli_color_words[] = { "auto", "always", "never", NULL };

/* --connect: the local URIs, and the start of a remote one */
static const char *const cli_connect_words[] = {
	"qemu:///system", "qemu:///session", "qemu+ssh://", "pve:///",
	"pve:///cluster", "pve+ssh://",      NULL
};

/* Completion of the common options' values that their entries do not say. */
static const CliCompletion cli_common_completions[] = {
	{ "format", CLI_COMPLETE_FORMAT, NULL },
	{ "color", CLI_COMPLETE_WORD, cli_color_words },
	{ "connect", CLI_COMPLETE_WORD, cli_connect_words },
	{ NULL },
};

/*
 * The options command takes, NULL-terminated: its own, then the common ones
 * it takes; command NULL: every common option.
 */
GArray *cli_app_get_option_entries(const CliCommand *command)
{
	GArray *entries = g_array_new(TRUE, TRUE, sizeof(GOptionEntry));
	guint options = command != NULL ? cli_command_get_common_options(command) : G_MAXUINT;

	for (guint i = 0;
	     command != NULL && command->entries != NULL && command->entries[i].long_name != NULL;
	     i++)
		g_array_append_val(entries, command->entries[i]);
	for (guint t = 0; t < G_N_ELEMENTS(cli_common_tables); t++) {
		if (cli_common_tables[t].options != 0 &&
		    (cli_common_tables[t].options & options) == 0)
			continue;
		for (guint i = 0; cli_common_tables[t].entries[i].long_name != NULL; i++)
			g_array_append_val(entries, cli_common_tables[t].entries[i]);
	}
	return entries;
}

const CliCompletion *cli_app_get_common_completions(void)
{
	return cli_common_completions;
}

/*
 * Splits "-j4" and "-ofile" into two arguments as getopt would: GOption only
 * takes a short option's value from the next argument. Returns owned strings.
 */
/* ---- did you mean ------------------------------------------------------------------ */

/* Edits (insert, delete, replace, swap two neighbours) from a to b, ASCII. */
static guint cli_edit_distance(const char *a, const char *b)
{
	gsize la = strlen(a), lb = strlen(b);
	g_autofree guint *d = g_new0(guint, (la + 1) * (lb + 1));

#define D(i, j) d[(i) * (lb + 1) + (j)]
	for (gsize i = 0; i <= la; i++)
		D(i, 0) = i;
	for (gsize j = 0; j <= lb; j++)
		D(0, j) = j;
	for (gsize i = 1; i <= la; i++) {
		for (gsize j = 1; j <= lb; j++) {
			guint cost = a[i - 1] == b[j - 1] ? 0 : 1;
			guint best =
			    MIN(MIN(D(i - 1, j) + 1, D(i, j - 1) + 1), D(i - 1, j - 1) + cost);

			if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
				best = MIN(best, D(i - 2, j - 2) + 1);
			D(i, j) = best;
		}
	}
	return D(la, lb);
#undef D
}

/* The candidate nearest to word, if it is near enough to be a typo; else NULL. */
static const char *cli_closest(const char *word, GPtrArray *candidates)
{
	const char *best = NULL;
	guint best_distance = G_MAXUINT;
	/* one edit for short words, two from five letters on */
	guint limit = strlen(word) < 5 ? 1 : 2;

	for (guint i = 0; i < candidates->len; i++) {
		const char *c = g_ptr_array_index(candidates, i);
		guint dist = cli_edit_distance(word, c);

		if (dist < best_distance) {
			best_distance = dist;
			best = c;
		}
	}
	return best_distance <= limit ? best : NULL;
}

/* Long option names that command takes; command NULL: every common option. */
static GPtrArray *cli_long_options(const CliCommand *command)
{
	g_autoptr(GArray) entries = cli_app_get_option_entries(command);
	GPtrArray *names = g_ptr_array_new();

	for (guint i = 0; i < entries->len; i++) {
		const GOptionEntry *e = &g_array_index(entries, GOptionEntry, i);

		if (e->long_name[0] != '\0')
			g_ptr_array_add(names, (gpointer)e->long_name);
	}
	return names;
}

/* The common option named "--long" or "-s" (the arg as given, "=VALUE" cut), or NULL. */
static const GOptionEntry *cli_common_option(const char *arg)
{
	for (guint t = 0; t < G_N_ELEMENTS(cli_common_tables); t++) {
		for (guint i = 0; cli_common_tables[t].entries[i].long_name != NULL; i++) {
			const GOptionEntry *e = &cli_common_tables[t].entries[i];

			if (e->long_name[0] == '\0')
				continue;
			if ((g_str_has_prefix(arg, "--") &&
			     g_strcmp0(arg + 2, e->long_name) == 0) ||
			    (arg[0] == '-' && arg[1] == e->short_name && arg[1] != '\0' &&
			     arg[2] == '\0'))
				return e;
		}
	}
	return NULL;
}

/* Which command has the long option name (without "--"), or NULL. */
static const CliCommand *cli_command_with_option(const char *name)
{
	guint n_commands = 0;
	const CliCommand *const *commands = cli_commands_get(&n_commands);

	for (guint c = 0; c < n_commands; c++) {
		for (guint i = 0;
		     commands[c]->entries != NULL && commands[c]->entries[i].long_name != NULL;
		     i++) {
			if (g_strcmp0(commands[c]->entries[i].long_name, name) == 0)
				return commands[c];
		}
	}
	return NULL;
}

/*
 * "unknown command 'X'": when an option before it is one guestbench does not
 * know there (so X was taken for the command), say so; else the nearest command.
 */
static void cli_set_unknown_command_error(GPtrArray *args, guint cmd_idx, GError **error)
{
	const char *word = g_ptr_array_index(args, cmd_idx);
	const char *prev = cmd_idx > 1 ? g_ptr_array_index(args, cmd_idx - 1) : NULL;

	if (prev != NULL && g_str_has_prefix(prev, "--") && strchr(prev, '=') == NULL) {
		g_autoptr(GPtrArray) globals = cli_long_options(NULL);
		const CliCommand *owner = cli_command_with_option(prev + 2);

		if (owner != NULL) {
			g_set_error(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT,
			            "%s is an option of '%s': put it after the command "
			            "('guestbench %s ... %s %s')",
			            prev, owner->name, owner->name, prev, word);
			return;
		}
		if (!g_ptr_array_find_with_equal_func(globals, prev + 2, g_str_equal, NULL)) {
			const char *near = cli_closest(prev + 2, globals);

			g_set_error(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT,
			            "unknown option %s%s%s%s", prev,
			            near != NULL ? " (did you mean --" : "",
			            near != NULL ? near : "", near != NULL ? "?)" : "");
			return;
		}
	}
	{
		g_autoptr(GPtrArray) names = g_ptr_array_new();
		guint n_commands = 0;
		const CliCommand *const *commands = cli_commands_get(&n_commands);
		const char *near;

		for (guint i = 0; i < n_commands; i++)
			g_ptr_array_add(names, (gpointer)commands[i]->name);
		near = cli_closest(word, names);
		g_set_error(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT,
		            "unknown command '%s'%s%s%s", word,
		            near != NULL ? " (did you mean '" : "", near != NULL ? near : "",
		            near != NULL ? "'?)" : "");
	}
}

/* GOption's "Unknown option --sizs": add the nearest option of this command. */
static void cli_add_option_hint(const CliCommand *command, GError *error)
{
	const char *prefix = "Unknown option --";
	g_autofree char *name = NULL;
	g_autoptr(GPtrArray) known = NULL;
	const CliCommand *owner;
	const char *near;
	char *eq;

	if (error == NULL ||
	    !g_error_matches(error, G_OPTION_ERROR, G_OPTION_ERROR_UNKNOWN_OPTION) ||
	    !g_str_has_prefix(error->message, "Unknown option -"))
		return;
	/* a common option this command does not take: say so, not "unknown" */
	name = g_strdup(error->message + strlen("Unknown option "));
	if ((eq = strchr(name, '=')) != NULL)
		*eq = '\0';
	if (command != NULL && cli_common_option(name) != NULL) {
		char *msg = g_strdup_printf("%s does not apply to '%s' (see 'guestbench help %s')",
		                            name, command->name, command->name);

		g_free(error->message);
		error->message = msg;
		return;
	}
	if (!g_str_has_prefix(error->message, prefix))
		return;
	g_free(name);
	name = g_strdup(error->message + strlen(prefix));
	if ((eq = strchr(name, '=')) != NULL)
		*eq = '\0';
	known = cli_long_options(command);
	near = cli_closest(name, known);
	owner = command == NULL ? cli_command_with_option(name) : NULL;
	if (near != NULL) {
		char *msg = g_strdup_printf("%s (did you mean --%s?)", error->message, near);

		g_free(error->message);
		error->message = msg;
	} else if (owner != NULL) {
		char *msg = g_strdup_printf("%s: an option of '%s', put it after the command",
		                            error->message, owner->name);

		g_free(error->message);
		error->message = msg;
	}
}

static GPtrArray *cli_normalize_args(const char *const *argv)
{
	GPtrArray *args = g_ptr_array_new_with_free_func(g_free);
	gboolean options_done = FALSE;

	for (guint i = 0; argv[i] != NULL; i++) {
		const char *arg = argv[i];

		if (g_strcmp0(arg, "--") == 0)
			options_done = TRUE;
		if (i > 0 && !options_done && arg[0] == '-' && (arg[1] == 'j' || arg[1] == 'o') &&
		    arg[2] != '\0') {
			g_ptr_array_add(args, g_strndup(arg, 2));
			g_ptr_array_add(args, g_strdup(arg + 2));
			continue;
		}
		g_ptr_array_add(args, g_strdup(arg));
	}
	return args;
}

/* Whether a common option entry takes a value. */
static gboolean cli_entry_takes_value(const GOptionEntry *e)
{
	return e->arg != G_OPTION_ARG_NONE && (e->flags & G_OPTION_FLAG_NO_ARG) == 0;
}

/* Common options that take a value in the next argument (for finding the command). */
static gboolean cli_option_takes_value(const char *arg)
{
	const GOptionEntry *e;

	if (arg[1] == '-')
		return strchr(arg, '=') == NULL && (e = cli_common_option(arg)) != NULL &&
		       cli_entry_takes_value(e);
	/* in a cluster like -qj GOption takes the value of j from the next argument */
	for (const char *c = arg + 1; *c != '\0'; c++) {
		char one[3] = { '-', *c, '\0' };

		if ((e = cli_common_option(one)) != NULL && cli_entry_takes_value(e))
			return TRUE;
	}
	return FALSE;
}

/* Index of the command word in args, or 0 when there is none. */
static guint cli_find_command(GPtrArray *args)
{
	for (guint i = 1; i < args->len; i++) {
		const char *arg = g_ptr_array_index(args, i);

		if (g_strcmp0(arg, "--") == 0)
			return i + 1 < args->len ? i + 1 : 0;
		if (arg[0] == '-' && arg[1] != '\0') {
			if (cli_option_takes_value(arg) && i + 1 < args->len)
				i++;
			continue;
		}
		return i;
	}
	return 0;
}

static char *cli_app_get_commands_text(void)
{
	GString *str = g_string_new("Commands:\n");
	guint n_commands = 0;
	const CliCommand *const *commands = cli_commands_get(&n_commands);
	gsize width = 0;

	for (guint i = 0; i < n_commands; i++)
		width = MAX(width, strlen(commands[i]->name));
	for (guint i = 0; i < n_commands; i++) {
		g_string_append_printf(str, "  %-*s  %s\n", (int)width, commands[i]->name,
		                       commands[i]->summary);
	}
	g_string_truncate(str, str->len - 1);
	return g_string_free(str, FALSE);
}

#define CLI_EXIT_DESCRIPTION                                                       \
	"Exit status: 0 all guests ok, 1 a FAIL finding, 2 usage error,\n"         \
	"3 one or more guests unreachable, erroring or timed out,\n"               \
	"4 one or more guests busy (another guestbench uses them), none failed,\n" \
	"130 interrupted by SIGINT, 143 by SIGTERM."

static const char cli_common_description[] =
    "Targets: unix:PATH or PATH (a socket), vsock:CID:PORT, libvirt:DOMAIN,\n"
    "qga:PATH (qemu-ga's socket: the agent runs through guest-exec),\n"
    "@FILE (an inventory: one [guest NAME] group per guest).\n"
    "Options may come before or after the command name.\n"
    "\n" CLI_EXIT_DESCRIPTION;
static const char cli_exit_description[] = "Options may come before or after the command name.\n"
                                           "\n" CLI_EXIT_DESCRIPTION;

/* "table (default), json or csv": the formats command writes, the default marked. */
static char *cli_app_format_list(const CliCommand *command, gboolean mark_default)
{
	GString *str = g_string_new(NULL);
	guint formats = cli_command_get_formats(command);
	guint n = 0, shown = 0;

	for (CliFormat f = CLI_FORMAT_TABLE; f <= CLI_FORMAT_HTML; f++)
		n += (formats & CLI_FORMAT_BIT(f)) != 0;
	for (CliFormat f = CLI_FORMAT_TABLE; f <= CLI_FORMAT_HTML; f++) {
		if ((formats & CLI_FORMAT_BIT(f)) == 0)
			continue;
		if (shown > 0)
			g_string_append(str, shown + 1 == n ? " or " : ", ");
		g_string_append(str, cli_format_to_string(f));
		if (mark_default && f == command->default_format)
			g_string_append(str, n == 1 ? " (the only one)" : " (default)");
		shown++;
	}
	return g_string_free(str, FALSE);
}

static char *cli_app_format_summary(const CliCommand *command)
{
	g_autofree char *list = cli_app_format_list(command, TRUE);

	return g_strdup_printf("Output format: %s", list);
}

/* A format the command cannot render is a usage error, found before any guest is contacted. */
static gboolean cli_app_check_format(CliApp *app, const CliCommand *command, GError **error)
{
	gboolean ok = (cli_command_get_formats(command) & CLI_FORMAT_BIT(app->opts.format)) != 0;

	if (!ok) {
		g_autofree char *formats = cli_app_format_list(command, FALSE);

		g_set_error(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT,
		            "'%s' cannot write --format %s (it writes %s)", command->name,
		            cli_format_to_string(app->opts.format), formats);
	}
	return ok;
}

/* --help of one command: the --format line names the formats it writes (data). */
static const char *cli_app_translate(const char *str, gpointer data)
{
	return str == cli_format_summary ? data : str;
}

static GOptionContext *cli_app_new_context(CliApp *app, const CliCommand *command)
{
	g_autoptr(GArray) entries = NULL;
	GOptionContext *ctx;
	GOptionGroup *group;

	ctx =
	    g_option_context_new(command != NULL ? command->parameter_string : "COMMAND [TARGET…]");
	/* --help is ours: GOption's would print and exit() from inside the parse */
	g_option_context_set_help_enabled(ctx, FALSE);
	group = g_option_group_new("guestbench", "guestbench options", "Show guestbench options",
	                           app, NULL);
	entries = cli_app_get_option_entries(command);
	g_option_group_add_entries(group, (const GOptionEntry *)(void *)entries->data);
	if (command != NULL)
		g_option_group_set_translate_func(group, cli_app_translate,
		                                  cli_app_format_summary(command), g_free);
	g_option_context_set_main_group(ctx, group);
	if (command != NULL) {
		/* the targets paragraph only for commands that take targets */
		const char *common =
		    (cli_command_get_common_options(command) & CLI_OPTIONS_TARGETS) != 0
		        ? cli_common_description
		        : cli_exit_description;
		g_autofree char *description =
		    command->description != NULL
		        ? g_strdup_printf("%s\n\n%s", command->description, common)
		        : g_strdup(common);
		g_option_context_set_summary(ctx, command->summary);
		g_option_context_set_description(ctx, description);
	} else {
		g_autofree char *commands = cli_app_get_commands_text();
		g_autofree char *description =
		    g_strdup_printf("%s\n\nRun 'guestbench help COMMAND' for a command's options.",
		                    cli_common_description);
		g_option_context_set_summary(ctx, commands);
		g_option_context_set_description(ctx, description);
	}
	return ctx;
}

char *cli_app_get_main_help(CliApp *app)
{
	g_autoptr(GOptionContext) ctx = cli_app_new_context(app, NULL);
	return g_option_context_get_help(ctx, TRUE, NULL);
}

char *cli_app_get_command_help(CliApp *app, const CliCommand *command)
{
	g_autoptr(GOptionContext) ctx = cli_app_new_context(app, command);
	return g_option_context_get_help(ctx, TRUE, NULL);
}

/* -o names a file in an existing directory: fail before contacting a thousand guests. */
/*
 * --connect pve+ssh://[USER@]NODE/ or pve:///cluster: those nodes become --hosts,
 * where the remote run is given --connect pve:/// (remote.c). They stand alone:
 * no other --connect and no --hosts beside them.
 */
static gboolean cli_app_connect_pve_hosts(CliApp *app, GError **error)
{
	g_autoptr(GPtrArray) hosts = g_ptr_array_new_with_free_func(g_free);
	guint n_connect = app->opts.connect != NULL ? g_strv_length(app->opts.connect) : 0;

	for (guint i = 0; i < n_connect; i++) {
		g_auto(GStrv) more = NULL;

		if (!cli_pve_is_remote_uri(app->opts.connect[i]))
			continue;
		if (n_connect > 1 || app->opts.hosts != NULL) {
			g_set_error(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT,
			            "--connect %s stands alone: no other --connect or --hosts "
			            "beside it",
			            app->opts.connect[i]);
			return FALSE;
		}
		more = cli_pve_remote_hosts(app->opts.connect[i], error);
		if (more == NULL)
			return FALSE;
		for (guint j = 0; more[j] != NULL; j++) {
			if (!cli_remote_check_host(more[j], error))
				return FALSE;
			g_ptr_array_add(hosts, g_strdup(more[j]));
		}
	}
	if (hosts->len == 0)
		return TRUE;
	g_ptr_array_add(hosts, NULL);
	app->opts.hosts = (char **)g_ptr_array_steal(hosts, NULL);
	return TRUE;
}

gboolean cli_app_parse(CliApp *app, const char *const *argv, GError **error)
{
	g_autoptr(GOptionContext) ctx = NULL;
	g_autoptr(GPtrArray) args = NULL;
	g_autoptr(GPtrArray) parse_args = g_ptr_array_new();
	g_autofree char **argv_copy = NULL;
	char **argv_parse;
	const CliCommand *command = NULL;
	const char *cmd_name = NULL;
	guint cmd_idx;
	int argc;

	if (argv == NULL || argv[0] == NULL) {
		g_set_error_literal(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT, "no arguments");
		return FALSE;
	}
	/* the hidden word the bash completion asks for its tables with */
	if (g_strcmp0(argv[1], CLI_COMPLETE_ARG) == 0) {
		app->action = CLI_ACTION_HELP;
		return (app->help_text = cli_complete_dump(argv + 2, error)) != NULL;
	}
	args = cli_normalize_args(argv);
	g_strfreev(app->argv);
	app->argv = g_strdupv((char **)argv);
	cmd_idx = cli_find_command(args);
	if (cmd_idx > 0) {
		cmd_name = g_ptr_array_index(args, cmd_idx);
		command = cli_command_find(cmd_name);
		if (command == NULL) {
			cli_set_unknown_command_error(args, cmd_idx, error);
			return FALSE;
		}
	}
	/* everything but the command word; GOption rearranges this shallow copy */
	for (guint i = 0; i < args->len; i++) {
		if (i != cmd_idx || cmd_idx == 0)
			g_ptr_array_add(parse_args, g_ptr_array_index(args, i));
	}
	/* a "--" right before the command word would otherwise end option parsing early */
	if (cmd_idx > 1 && g_strcmp0(g_ptr_array_index(args, cmd_idx - 1), "--") == 0)
		g_ptr_array_remove_index(parse_args, cmd_idx - 1);
	argc = parse_args->len;
	g_ptr_array_add(parse_args, NULL);
	argv_copy = (char **)g_ptr_array_free(g_steal_pointer(&parse_args), FALSE);

	app->command = command;
	ctx = cli_app_new_context(app, command);
	argv_parse = argv_copy;
	if (!g_option_context_parse(ctx, &argc, &argv_parse, error)) {
		cli_add_option_hint(command, error != NULL ? *error : NULL);
		return FALSE;
	}
	if (app->opts.help) {
		app->action = CLI_ACTION_HELP;
		app->help_text = g_option_context_get_help(ctx, TRUE, NULL);
		return TRUE;
	}
	if (app->opts.version) {
		app->action = CLI_ACTION_VERSION;
		return TRUE;
	}
	if (command == NULL) {
		g_set_error_literal(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT, "no command given");
		return FALSE;
	}
	app->action = CLI_ACTION_RUN;
	if (!app->opts.format_given)
		app->opts.format = command->default_format;
	if (!cli_app_check_format(app, command, error) ||
	    !cli_app_check_failed_only(app, command, error))
		return FALSE;
	/* an -o that cannot be written is found now, not after a benchmark has run */
	if (!cli_output_check(app->opts.output, error))
		return FALSE;
	if (command->prepare != NULL && !command->prepare(app, app->args, error))
		return FALSE;
	/* pve+ssh:// and pve:///cluster are other nodes: each runs pve:/// itself (--hosts) */
	if (app->action == CLI_ACTION_RUN && command->start != NULL && command->run == NULL &&
	    !cli_app_connect_pve_hosts(app, error))
		return FALSE;
	/* prepare() may answer by itself (audit --list-rules) */
	if (app->action == CLI_ACTION_RUN && app->opts.hosts != NULL)
		return cli_remote_prepare(app, error);
	if (app->opts.host_jobs != 0) {
		g_set_error_literal(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT,
		                    "--host-jobs applies only with --hosts");
		return FALSE;
	}
	if (command->run != NULL || app->action != CLI_ACTION_RUN)
		return TRUE;
	if (app->args->len == 0 && app->opts.inventories == NULL && app->opts.connect == NULL) {
		g_set_error(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT,
		            "no targets given for '%s' (name them, or give --inventory FILE or "
		            "--connect URI)",
		            command->name);
		return FALSE;
	}
	return cli_app_resolve_targets(app, error);
}

/*
 * --connect URI... without targets: pve:/// as this Proxmox VE node's running
 * VMs, then the domains of libvirt's URIs.
 */
static GPtrArray *cli_targets_from_connect(const char *const *uris, GError **error)
{
	g_autoptr(GPtrArray) targets =
	    g_ptr_array_new_with_free_func((GDestroyNotify)cli_target_free);
	g_autoptr(GPtrArray) libvirt = g_ptr_array_new();

	for (guint i = 0; uris[i] != NULL; i++) {
		g_autoptr(GPtrArray) more = NULL;

		if (!cli_pve_is_uri(uris[i])) {
			g_ptr_array_add(libvirt, (gpointer)uris[i]);
			continue;
		}
		if (!cli_pve_check_uri(uris[i], error))
			return NULL;
		more = cli_targets_from_pve(TRUE, error);
		if (more == NULL)
			return NULL;
		g_ptr_array_extend_and_steal(targets, g_steal_pointer(&more));
	}
	if (libvirt->len > 0) {
		g_autoptr(GPtrArray) more = NULL;

		g_ptr_array_add(libvirt, NULL);
		more = cli_targets_from_libvirt((const char *const *)libvirt->pdata, error);
		if (more == NULL)
			return NULL;
		g_ptr_array_extend_and_steal(targets, g_steal_pointer(&more));
	}
	return g_steal_pointer(&targets);
}

gboolean cli_app_resolve_targets(CliApp *app, GError **error)
{
	g_auto(GStrv) targets = NULL;
	CliTargetOptions topts = {
		.connect = (const char *const *)app->opts.connect,
		.libvirt_dir = app->opts.libvirt_dir,
		.inventories = (const char *const *)app->opts.inventories,
		.tags = (const char *const *)app->opts.tags,
		.names = (const char *const *)app->opts.names,
	};

	cli_virt_set_timeout(app->opts.timeout);
	if (app->args->len == 0 && app->opts.inventories == NULL && app->opts.connect != NULL) {
		/* every running guest of each hypervisor */
		app->targets =
		    cli_targets_from_connect((const char *const *)app->opts.connect, error);
	} else {
		targets = g_new0(char *, app->args->len + 1);
		for (guint i = 0; i < app->args->len; i++)
			targets[i] = g_strdup(g_ptr_array_index(app->args, i));
		app->targets = cli_targets_resolve((const char *const *)targets, &topts, error);
	}
	return app->targets != NULL && cli_hostview_check_options(app, error) &&
	       cli_targets_apply_qga_agent(app->targets, app->opts.qga_agent, error);
}

/* ---- the app ------------------------------------------------------------------------- */

CliApp *cli_app_new(void)
{
	CliApp *app = g_new0(CliApp, 1);

	app->opts.format = CLI_FORMAT_TABLE;
	app->opts.jobs = CLI_DEFAULT_JOBS;
	app->opts.reply_budget = CLI_REPLY_BUDGET_DEFAULT;
	app->opts.timeout = CLI_DEFAULT_TIMEOUT;
	app->opts.color = CLI_COLOR_AUTO;
	app->args = g_ptr_array_new_with_free_func(g_free);
	app->context = g_main_context_new();
	app->cancellable = g_cancellable_new();
	return app;
}

void cli_app_free(CliApp *app)
{
	if (app == NULL)
		return;
	/* guests first: they borrow the targets and close sessions on the context */
	if (app->guests != NULL)
		g_ptr_array_unref(app->guests);
	if (app->targets != NULL)
		g_ptr_array_unref(app->targets);
	g_ptr_array_unref(app->args);
	g_free(app->opts.output);
	g_free(app->opts.libvirt_dir);
	g_strfreev(app->opts.connect);
	g_strfreev(app->opts.inventories);
	g_strfreev(app->opts.tags);
	g_strfreev(app->opts.names);
	g_free(app->opts.qmp);
	g_free(app->opts.host_sysroot);
	g_free(app->opts.qga_agent);
	g_strfreev(app->opts.hosts);
	g_strfreev(app->argv);
	g_free(app->help_text);
	g_object_unref(app->cancellable);
	/* let closed sessions' sources go before the context */
	while (g_main_context_iteration(app->context, FALSE))
		;
	g_main_context_unref(app->context);
	g_free(app);
}

int cli_app_get_exit_status(CliApp *app)
{
	gboolean any_busy = FALSE;

	if (app->signal_received != 0)
		return 128 + app->signal_received;
	for (guint i = 0; app->guests != NULL && i < app->guests->len; i++) {
		CliGuest *guest = g_ptr_array_index(app->guests, i);
		if (guest->status == CLI_GUEST_BUSY)
			any_busy = TRUE;
		else if (guest->status != CLI_GUEST_OK)
			return CLI_EXIT_GUEST;
	}
	if (any_busy)
		return CLI_EXIT_BUSY;
	return app->fail_finding ? CLI_EXIT_FINDING : CLI_EXIT_OK;
}

int cli_app_run(CliApp *app)
{
	g_autoptr(GError) error = NULL;

	if (app->opts.hosts != NULL)
		return cli_remote_run(app);
	if (app->command->run != NULL) {
		int rc = app->command->run(app, &error);
		if (error != NULL)
			cli_escape_printerr(NULL, error->message);
		return rc;
	}
	cli_runner_run(app);
	if (app->command->finished != NULL)
		app->command->finished(app);
	if (!cli_merge_write_app_output(app, &error)) {
		cli_escape_printerr(NULL, error->message);
		return CLI_EXIT_USAGE;
	}
	return cli_app_get_exit_status(app);
}
