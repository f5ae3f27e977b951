/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"

#include "guestbench-protocol.h"

#include "analysis/runs.h"
#include "commands/commands.h"
#include "transport/virt.h"

/*
 * The bash completion's tables, drawn from the same option tables as --help so
 * that a new option or command completes without touching the script. One
 * line each, fields separated by tabs, "-" for an empty field:
 *
 *	command	NAME
 *	option	COMMAND	--LONG	-S	value|flag	KIND	WORD,WORD,...
 *	operand	COMMAND	KIND	WORD,WORD,...
 *
 * COMMAND "-" is the command line before a command word (every common
 * option). Operands are listed in order; the last one repeats.
 */

static const char *const cli_complete_kinds[] = {
	[CLI_COMPLETE_NONE] = "none",       [CLI_COMPLETE_WORD] = "word",
	[CLI_COMPLETE_LIST] = "list",       [CLI_COMPLETE_FILE] = "file",
	[CLI_COMPLETE_TARGET] = "target",   [CLI_COMPLETE_RUN] = "run",
	[CLI_COMPLETE_COMMAND] = "command", [CLI_COMPLETE_FORMAT] = "word",
	[CLI_COMPLETE_DOMAIN] = "domain",
};

static const CliCompletion *cli_complete_find(const CliCompletion *table, const char *option)
{
	for (guint i = 0; table != NULL && table[i].kind != CLI_COMPLETE_NONE; i++) {
		if (g_strcmp0(table[i].option, option) == 0)
			return &table[i];
	}
	return NULL;
}

static void cli_complete_append_words(GString *out, const CliCompletion *c,
                                      const CliCommand *command)
{
	gboolean any = FALSE;

	if (c != NULL && c->kind == CLI_COMPLETE_FORMAT) {
		guint formats = command != NULL ? cli_command_get_formats(command) : G_MAXUINT;

		for (CliFormat f = CLI_FORMAT_TABLE; f <= CLI_FORMAT_HTML; f++) {
			if ((formats & CLI_FORMAT_BIT(f)) == 0)
				continue;
			g_string_append_printf(out, "%s%s", any ? "," : "",
			                       cli_format_to_string(f));
			any = TRUE;
		}
	}
	for (guint i = 0; c != NULL && c->words != NULL && c->words[i] != NULL; i++) {
		g_string_append_printf(out, "%s%s", any ? "," : "", c->words[i]);
		any = TRUE;
	}
	g_string_append(out, any ? "\n" : "-\n");
}

static void cli_complete_command(GString *out, const CliCommand *command)
{
	const char *name = command != NULL ? command->name : "-";
	g_autoptr(GArray) entries = cli_app_get_option_entries(command);
	const CliCompletion *own = command != NULL ? command->completions : NULL;
	gboolean operands = FALSE;

	for (guint i = 0; i < entries->len; i++) {
		const GOptionEntry *e = &g_array_index(entries, GOptionEntry, i);
		gboolean value =
		    e->arg != G_OPTION_ARG_NONE && (e->flags & G_OPTION_FLAG_NO_ARG) == 0;
		const CliCompletion *c;
		CliCompleteKind kind = CLI_COMPLETE_NONE;

		if (e->long_name[0] == '\0' || (e->flags & G_OPTION_FLAG_HIDDEN) != 0)
			continue;
		c = cli_complete_find(own, e->long_name);
		if (c == NULL)
			c = cli_complete_find(cli_app_get_common_completions(), e->long_name);
		if (c != NULL)
			kind = c->kind;
		else if (value && ((e->flags & G_OPTION_FLAG_FILENAME) != 0 ||
		                   e->arg == G_OPTION_ARG_FILENAME))
			kind = CLI_COMPLETE_FILE;
		g_string_append_printf(out, "option\t%s\t--%s\t", name, e->long_name);
		if (e->short_name != '\0')
			g_string_append_printf(out, "-%c\t", e->short_name);
		else
			g_string_append(out, "-\t");
		g_string_append_printf(out, "%s\t%s\t", value ? "value" : "flag",
		                       cli_complete_kinds[kind]);
		cli_complete_append_words(out, c, command);
	}
	if (command == NULL)
		return;
	for (guint i = 0; own != NULL && own[i].kind != CLI_COMPLETE_NONE; i++) {
		if (own[i].option != NULL)
			continue;
		g_string_append_printf(out, "operand\t%s\t%s\t", name,
		                       cli_complete_kinds[own[i].kind]);
		cli_complete_append_words(out, &own[i], command);
		operands = TRUE;
	}
	if (!operands && command->start != NULL)
		g_string_append_printf(out, "operand\t%s\ttarget\t-\n", name);
}

static char *cli_complete_spec(void)
{
	GString *out = g_string_new(NULL);
	guint n_commands = 0;
	const CliCommand *const *commands = cli_commands_get(&n_commands);

	for (guint i = 0; i < n_commands; i++)
		g_string_append_printf(out, "command\t%s\n", commands[i]->name);
	cli_complete_command(out, NULL);
	for (guint i = 0; i < n_commands; i++)
		cli_complete_command(out, commands[i]);
	return g_string_free(out, FALSE);
}

/* The ids of the saved runs that could be read, oldest first (as 'results' lists them). */
static char *cli_complete_runs(GError **error)
{
	g_autofree char *dir = cli_runs_default_dir();
	g_autoptr(GPtrArray) entries = cli_runs_list(dir, error);
	GString *out;

	if (entries == NULL)
		return NULL;
	out = g_string_new(NULL);
	for (guint i = 0; i < entries->len; i++) {
		const CliRunEntry *entry = g_ptr_array_index(entries, i);

		if (entry->error == NULL)
			g_string_append_printf(out, "%s\n", entry->id);
	}
	return g_string_free(out, FALSE);
}

/* A completion waits for this at most: an unanswering hypervisor offers nothing. */
#define CLI_COMPLETE_VIRT_TIMEOUT_S 3.0

/*
 * The names of the domains of uri (NULL: libvirt's default), as discover
 * finds them; a name with a control character (libvirt allows a newline) is
 * left out, since the list is one name a line.
 */
static char *cli_complete_domains_of(const char *uri, GError **error)
{
	g_autoptr(GPtrArray) domains = NULL;
	CliVirtConn *conn;
	GString *out;

	cli_virt_set_timeout(CLI_COMPLETE_VIRT_TIMEOUT_S);
	conn = cli_virt_connect(uri, error);
	if (conn == NULL)
		return NULL;
	domains = cli_virt_list_domains(conn, error);
	if (domains == NULL)
		return NULL;
	out = g_string_new(NULL);
	for (guint i = 0; i < domains->len; i++) {
		const CliVirtDomain *domain = g_ptr_array_index(domains, i);
		gboolean plain = TRUE;

		for (const char *c = domain->name; *c != '\0'; c++)
			plain = plain && !g_ascii_iscntrl(*c);
		if (plain)
			g_string_append_printf(out, "%s\n", domain->name);
	}
	return g_string_free(out, FALSE);
}

/* The process does nothing else: its connection is closed at once. */
static char *cli_complete_domains(const char *uri, GError **error)
{
	char *names = cli_complete_domains_of(uri, error);

	cli_virt_shutdown();
	return names;
}

char *cli_complete_dump(const char *const *args, GError **error)
{
	guint n = g_strv_length((char **)args);

	if (n == 1 && g_strcmp0(args[0], "spec") == 0)
		return cli_complete_spec();
	if (n == 1 && g_strcmp0(args[0], "runs") == 0)
		return cli_complete_runs(error);
	if ((n == 1 || n == 2) && g_strcmp0(args[0], "domains") == 0)
		return cli_complete_domains(args[1], error);
	g_set_error_literal(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT,
	                    CLI_COMPLETE_ARG " takes 'spec', 'runs' or 'domains [URI]'");
	return NULL;
}
