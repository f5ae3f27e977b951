/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"

#include <stdio.h>

#include "gb-error.h"

#include "commands/cmd-discover.h"
#include "commands/commands.h"
#include "fleet/libvirt.h"
#include "render/escape.h"

/*
 * discover reads libvirt's live domain XML itself and contacts no guest: one
 * CliGuest per domain carries what was found (status ok with the socket, or
 * error saying why the domain cannot be used), so --format json and -o work
 * as for every other command.
 */

typedef struct {
	gboolean broken; /* the XML could not be read or parsed (not just "no channel") */
} CliDiscoverDomain;

gboolean cli_discover_prepare(CliApp *app, GPtrArray *args, GError **error)
{
	for (guint i = 0; i < args->len; i++) {
		if (!cli_libvirt_check_name(g_ptr_array_index(args, i), error))
			return FALSE;
	}
	return TRUE;
}

/* GKeyFile value escaping, so that any socket path reads back exactly. */
static void cli_discover_append_value(GString *out, const char *value)
{
	for (const char *p = value; *p != '\0'; p++) {
		if (p == value && *p == ' ')
			g_string_append(out, "\\s");
		else if (*p == '\\')
			g_string_append(out, "\\\\");
		else if (*p == '\n')
			g_string_append(out, "\\n");
		else if (*p == '\t')
			g_string_append(out, "\\t");
		else if (*p == '\r')
			g_string_append(out, "\\r");
		else
			g_string_append_c(out, *p);
	}
}

/* A comment line must stay one line whatever a hostile XML put into a message. */
static void cli_discover_append_comment(GString *out, const char *text)
{
	g_autofree char *valid = g_utf8_make_valid(text, -1);

	g_string_append(out, "#   ");
	for (const char *p = valid; *p != '\0'; p++)
		g_string_append_c(out, g_ascii_iscntrl(*p) ? ' ' : *p);
	g_string_append_c(out, '\n');
}

GString *cli_discover_render_inventory(const CliResults *results)
{
	GString *out = g_string_new(NULL);
	guint n_skipped = 0;

	g_string_append(out,
	                "# guestbench inventory of the libvirt domains with a guestbench channel,\n"
	                "# written by 'guestbench discover'. Use it with\n"
	                "#   guestbench ping @FILE   or   guestbench audit --inventory FILE\n");
	for (guint i = 0; results->guests != NULL && i < results->guests->len; i++) {
		const CliResult *guest = g_ptr_array_index(results->guests, i);

		if (guest->status != CLI_GUEST_OK) {
			n_skipped++;
			continue;
		}
		g_string_append_printf(out, "\n[guest %s]\ntarget=", guest->name);
		cli_discover_append_value(out, guest->target);
		g_string_append(out, "\ntags=libvirt\n");
	}
	if (n_skipped == 0)
		return out;
	g_string_append(out, "\n# Domains left out, and why:\n");
	for (guint i = 0; i < results->guests->len; i++) {
		const CliResult *guest = g_ptr_array_index(results->guests, i);
		if (guest->status != CLI_GUEST_OK)
			cli_discover_append_comment(out, guest->error);
	}
	g_string_append(out,
	                "#\n# To give a domain its guestbench port, add this inside <devices>\n"
	                "# (virsh edit DOMAIN), then run discover again:\n");
	{
		g_auto(GStrv) lines = g_strsplit(cli_libvirt_channel_snippet(), "\n", -1);
		for (guint i = 0; lines[i] != NULL; i++) {
			if (lines[i][0] != '\0')
				cli_discover_append_comment(out, lines[i]);
		}
	}
	return out;
}

GString *cli_discover_render_text(const CliResults *results, gboolean color)
{
	return cli_discover_render_inventory(results);
}

static JsonNode *cli_discover_result(const CliLibvirtDomain *domain)
{
	g_autoptr(JsonBuilder) builder = json_builder_new();

	json_builder_begin_object(builder);
	json_builder_set_member_name(builder, "domain");
	json_builder_add_string_value(builder, domain->name);
	json_builder_set_member_name(builder, "state");
	if (domain->state != NULL)
		json_builder_add_string_value(builder, domain->state);
	else
		json_builder_add_null_value(builder);
	json_builder_set_member_name(builder, "socket");
	if (domain->socket != NULL)
		json_builder_add_string_value(builder, domain->socket);
	else
		json_builder_add_null_value(builder);
	json_builder_set_member_name(builder, "qga_socket");
	if (domain->qga_socket != NULL)
		json_builder_add_string_value(builder, domain->qga_socket);
	else
		json_builder_add_null_value(builder);
	json_builder_end_object(builder);
	return json_builder_get_root(builder);
}

/* Fills the guest without the runner: nothing is contacted, so nothing is drawn either. */
static void cli_discover_set(CliGuest *guest, JsonNode *result, const char *error)
{
	guest->status = error == NULL ? CLI_GUEST_OK : CLI_GUEST_ERROR;
	guest->error = error != NULL ? g_utf8_make_valid(error, -1) : NULL;
	guest->result = result;
}

int cli_discover_run(CliApp *app, GError **error)
{
	const char *dir = app->opts.libvirt_dir;
	g_autoptr(GPtrArray) names = NULL;
	g_autoptr(GPtrArray) domains =
	    g_ptr_array_new_with_free_func((GDestroyNotify)cli_libvirt_domain_free);
	g_autoptr(GPtrArray) errors = g_ptr_array_new_with_free_func(g_free);
	g_autofree char *source = NULL;
	guint n_broken = 0;
	guint n_ok = 0;

	if (app->args->len > 0) {
		names = g_ptr_array_new_with_free_func(g_free);
		for (guint i = 0; i < app->args->len; i++)
			g_ptr_array_add(names, g_strdup(g_ptr_array_index(app->args, i)));
	} else {
		names = cli_libvirt_list_domains(dir, &source, error);
		if (names == NULL)
			return CLI_EXIT_GUEST;
	}
	app->targets = g_ptr_array_new_with_free_func((GDestroyNotify)cli_target_free);
	for (guint i = 0; i < names->len; i++) {
		const char *name = g_ptr_array_index(names, i);
		g_autoptr(GError) error_local = NULL;
		CliLibvirtDomain *domain = NULL;
		CliTarget *target = g_new0(CliTarget, 1);
		const char *socket = NULL;

		target->scheme = CLI_TARGET_UNIX;
		target->name = g_strdup(name);
		target->tags = g_new0(char *, 1);
		domain = cli_libvirt_domain_load(dir, name, &error_local);
		if (domain != NULL)
			socket = cli_libvirt_domain_get_socket(domain, &error_local);
		if (socket != NULL) {
			target->path = g_strdup(socket);
			target->text = g_strdup_printf("unix:%s", socket);
		} else {
			target->text = g_strdup_printf("libvirt:%s", name);
			/* a missing channel is a finding; unreadable XML is a failure */
			if (domain == NULL)
				n_broken++;
		}
		g_ptr_array_add(errors,
		                error_local != NULL ? g_strdup(error_local->message) : NULL);
		g_ptr_array_add(domains, domain);
		g_ptr_array_add(app->targets, target);
	}
	cli_app_add_guests(app);
	for (guint i = 0; i < app->guests->len; i++) {
		CliLibvirtDomain *domain = g_ptr_array_index(domains, i);
		const char *msg = g_ptr_array_index(errors, i);

		if (msg == NULL)
			n_ok++;
		cli_discover_set(g_ptr_array_index(app->guests, i),
		                 domain != NULL ? cli_discover_result(domain) : NULL, msg);
	}
	if (!cli_app_write_output(app, error))
		return CLI_EXIT_USAGE;
	if (!app->opts.quiet) {
		g_autofree char *from =
		    cli_escape_terminal(source != NULL ? source : "the named domains");
		g_printerr("guestbench: %u domain(s) from %s: %u with a guestbench channel, %u "
		           "without, %u unreadable\n",
		           app->guests->len, from, n_ok, app->guests->len - n_ok - n_broken,
		           n_broken);
		for (guint i = 0; i < app->guests->len; i++) {
			const char *msg = g_ptr_array_index(errors, i);
			g_autofree char *esc = NULL;
			if (msg == NULL)
				continue;
			esc = cli_escape_terminal(msg);
			g_printerr("guestbench: %s\n", esc);
		}
	}
	return n_broken > 0 ? CLI_EXIT_GUEST : CLI_EXIT_OK;
}

static const CliCompletion cli_discover_completions[] = {
	{ NULL, CLI_COMPLETE_DOMAIN, NULL },
	{ NULL },
};

const CliCommand cli_cmd_discover = {
	.name = "discover",
	.parameter_string = "discover [DOMAIN...]",
	.summary = "Find libvirt domains with a guestbench channel; print an inventory",
	.description = CLI_DISCOVER_DESCRIPTION,
	.prepare = cli_discover_prepare,
	.common_options = CLI_OPTIONS_LIBVIRT,
	.completions = cli_discover_completions,
	.render_text = cli_discover_render_text,
	.run = cli_discover_run,
};
