/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"

#include <stdio.h>

#include "guestbench-protocol.h"

#include "commands/cmd-discover.h"
#include "commands/commands.h"
#include "fleet/libvirt.h"
#include "fleet/pve.h"
#include "fleet/resolve.h"
#include "render/escape.h"

/*
 * discover asks libvirt for every domain of each connection (--connect, else
 * the default; or reads libvirt's state files with --libvirt-dir) and
 * contacts no guest: one CliGuest per domain carries what was found (status
 * ok when it can be reached now, through its guestbench channel or only
 * qemu-ga's; error saying why not: not running, no channel), so --format
 * json and -o work as for every other command. The inventory names each
 * domain as libvirt:NAME with its URI, which stays true across restarts.
 */

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

/* The result's string member, NULL when absent (the document is discover's own). */
static const char *cli_discover_member(const CliResult *guest, const char *member)
{
	JsonObject *obj = NULL;
	const char *value = NULL;

	if (guest->result == NULL || !gb_json_node_get_object(guest->result, "result", &obj, NULL))
		return NULL;
	if (!gb_json_get_string(obj, member, GB_JSON_OPTIONAL, &value, NULL))
		return NULL;
	return value;
}

GString *cli_discover_render_inventory(const CliResults *results)
{
	GString *out = g_string_new(NULL);
	guint n_skipped = 0;

	g_string_append(out,
	                "# guestbench inventory of the libvirt domains with a guestbench channel\n"
	                "# (or qemu-ga's), written by 'guestbench discover'. Use it with\n"
	                "#   guestbench ping @FILE   or   guestbench audit --inventory FILE\n");
	for (guint i = 0; results->guests != NULL && i < results->guests->len; i++) {
		const CliResult *guest = g_ptr_array_index(results->guests, i);
		const char *reach = cli_discover_member(guest, "reach");
		const char *uri = cli_discover_member(guest, "uri");
		const char *state = cli_discover_member(guest, "state");

		if (reach == NULL) {
			n_skipped++;
			continue;
		}
		g_string_append_printf(out, "\n[guest %s]\n", guest->name);
		if (cli_discover_member(guest, "node") != NULL) {
			/* a Proxmox VE VM: what PVE calls it, where, and how it is reached */
			const char *vm_name = cli_discover_member(guest, "name");
			g_autofree char *note = g_strdup_printf(
			    "VM %s%s%s on node %s, %s, through %s", guest->name + strlen("pve:"),
			    vm_name != NULL ? " " : "", vm_name != NULL ? vm_name : "",
			    cli_discover_member(guest, "node"), state != NULL ? state : "?",
			    g_strcmp0(reach, "qga") == 0 ? "qemu-ga (VMID.qga)"
			                                 : "our port (args:)");
			cli_discover_append_comment(out, note);
		}
		if (guest->status != CLI_GUEST_OK && state != NULL) {
			g_autofree char *note = g_strdup_printf("%s now", state);
			cli_discover_append_comment(out, note);
		}
		g_string_append(out, "target=");
		cli_discover_append_value(out, guest->target);
		if (uri != NULL) {
			/* libvirt:NAME on its URI: stable across restarts, unlike the socket path
			 */
			g_string_append(out, "\nconnect=");
			cli_discover_append_value(out, uri);
			g_string_append(out, "\nqmp=");
			cli_discover_append_value(out, guest->target);
		}
		if (cli_discover_member(guest, "node") != NULL)
			g_string_append(out, g_strcmp0(reach, "qga") == 0 ? "\ntags=pve;qga\n"
			                                                  : "\ntags=pve\n");
		else
			g_string_append(out, g_strcmp0(reach, "qga") == 0 ? "\ntags=libvirt;qga\n"
			                                                  : "\ntags=libvirt\n");
	}
	if (n_skipped == 0)
		return out;
	g_string_append(out, "\n# Domains left out, and why:\n");
	for (guint i = 0; i < results->guests->len; i++) {
		const CliResult *guest = g_ptr_array_index(results->guests, i);
		if (cli_discover_member(guest, "reach") == NULL && guest->error != NULL)
			cli_discover_append_comment(out, guest->error);
	}
	if (n_skipped > 0 &&
	    cli_discover_member(g_ptr_array_index(results->guests, 0), "node") != NULL) {
		g_string_append(out,
		                "#\n# To give a VM our port (root only; it takes effect after a "
		                "cold restart):\n#   qm set VMID --args '-chardev socket,...' "
		                "(guestbench host-check prints the line)\n");
		return out;
	}
	g_string_append(out,
	                "#\n# To give a domain its guestbench port, add this inside <devices>\n"
	                "# (virsh edit DOMAIN; it takes effect at the next start):\n");
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

static void cli_discover_add_string(JsonBuilder *builder, const char *member, const char *value)
{
	json_builder_set_member_name(builder, member);
	if (value != NULL)
		json_builder_add_string_value(builder, value);
	else
		json_builder_add_null_value(builder);
}

/* reach: "channel" (the guestbench channel), "qga" (qemu-ga's only), NULL (neither). */
static JsonNode *cli_discover_result(const char *name, const char *state, const char *uri,
                                     const char *reach, const CliLibvirtDomain *domain)
{
	g_autoptr(JsonBuilder) builder = json_builder_new();

	json_builder_begin_object(builder);
	cli_discover_add_string(builder, "domain", name);
	cli_discover_add_string(builder, "state", state);
	cli_discover_add_string(builder, "uri", uri);
	cli_discover_add_string(builder, "reach", reach);
	cli_discover_add_string(builder, "socket", domain != NULL ? domain->socket : NULL);
	cli_discover_add_string(builder, "qga_socket", domain != NULL ? domain->qga_socket : NULL);
	json_builder_end_object(builder);
	return json_builder_get_root(builder);
}

typedef struct {
	GPtrArray *results; /* JsonNode or NULL, per target */
	GPtrArray *errors;  /* char * or NULL, per target */
	guint n_channel;
	guint n_qga;
	guint n_neither;
	guint n_off;
	guint n_broken;
} CliDiscovery;

static void cli_discover_add(CliApp *app, CliDiscovery *d, CliTarget *target, JsonNode *result,
                             const char *error)
{
	g_ptr_array_add(app->targets, target);
	g_ptr_array_add(d->results, result);
	g_ptr_array_add(d->errors, g_strdup(error));
}

/* One domain found through libvirt: what it is, and how (whether) it is reached. */
static void cli_discover_domain(CliApp *app, CliDiscovery *d, CliVirtConn *conn,
                                const CliVirtDomain *domain)
{
	CliTarget *target = g_new0(CliTarget, 1);
	g_autoptr(CliLibvirtDomain) parsed = cli_libvirt_domain_parse(domain->xml, -1, NULL);
	const char *reach = NULL;
	const char *uri = cli_virt_conn_get_uri(conn);
	g_autofree char *error = NULL;

	target->text = g_strdup_printf("libvirt:%s", domain->name);
	target->name = g_strdup(domain->name);
	target->tags = g_new0(char *, 1);
	cli_target_set_libvirt(target, conn, domain);
	/* the inactive XML has no socket path yet: the channel's target name tells */
	if (parsed != NULL && (domain->active ? parsed->socket != NULL : parsed->has_channel))
		reach = "channel";
	else if (parsed != NULL && parsed->problem == NULL &&
	         (parsed->qga_socket != NULL || (!domain->active && parsed->has_qga_channel)))
		reach = "qga";
	if (!domain->active)
		d->n_off++;
	else if (target->error != NULL && parsed == NULL)
		d->n_broken++;
	else if (g_strcmp0(reach, "channel") == 0)
		d->n_channel++;
	else if (reach != NULL)
		d->n_qga++;
	else
		d->n_neither++;
	error = g_strdup(target->error);
	cli_discover_add(app, d, target,
	                 cli_discover_result(domain->name, domain->state, uri, reach, parsed),
	                 error);
}

/* A connection, or a named domain, that could not be read: one row of its own. */
static void cli_discover_failure(CliApp *app, CliDiscovery *d, const char *name, const char *uri,
                                 const char *message)
{
	CliTarget *target = g_new0(CliTarget, 1);

	target->text = g_strdup_printf("libvirt:%s", name);
	target->name = g_strdup(name);
	target->tags = g_new0(char *, 1);
	target->uri = g_strdup(uri);
	d->n_broken++;
	cli_discover_add(app, d, target, NULL, message);
}

static void cli_discover_api(CliApp *app, CliDiscovery *d)
{
	const char *const default_uris[] = { NULL, NULL };
	const char *const *uris =
	    app->opts.connect != NULL ? (const char *const *)app->opts.connect : default_uris;
	guint n_uris = app->opts.connect != NULL ? g_strv_length(app->opts.connect) : 1;

	for (guint i = 0; i < n_uris; i++) {
		g_autoptr(GError) error = NULL;
		g_autoptr(GPtrArray) domains = NULL;
		CliVirtConn *conn = cli_virt_connect(uris[i], &error);

		if (conn == NULL) {
			cli_discover_failure(app, d, uris[i] != NULL ? uris[i] : "libvirt", uris[i],
			                     error->message);
			continue;
		}
		if (app->args->len == 0) {
			domains = cli_virt_list_domains(conn, &error);
			if (domains == NULL) {
				cli_discover_failure(app, d, cli_virt_conn_get_uri(conn), uris[i],
				                     error->message);
				continue;
			}
			if (domains->len == 0 && !app->opts.quiet) {
				g_autofree char *esc =
				    cli_escape_terminal(cli_virt_conn_get_uri(conn));
				g_printerr("guestbench: %s has no domains%s\n", esc,
				           cli_targets_session_hint(cli_virt_conn_get_uri(conn)));
			}
			for (guint j = 0; j < domains->len; j++)
				cli_discover_domain(app, d, conn, g_ptr_array_index(domains, j));
			continue;
		}
		for (guint j = 0; j < app->args->len; j++) {
			const char *name = g_ptr_array_index(app->args, j);
			g_autoptr(GError) error_domain = NULL;
			g_autoptr(CliVirtDomain) domain =
			    cli_virt_get_domain(conn, name, &error_domain);

			if (domain == NULL) {
				g_autofree char *msg = g_strdup_printf(
				    "%s%s", error_domain->message,
				    cli_targets_session_hint(cli_virt_conn_get_uri(conn)));
				cli_discover_failure(app, d, name, uris[i], msg);
				continue;
			}
			cli_discover_domain(app, d, conn, domain);
		}
	}
}

/* --libvirt-dir: libvirt's state files, read as they are (running domains only). */
static gboolean cli_discover_dir(CliApp *app, CliDiscovery *d, const char *dir, char **source_out,
                                 GError **error)
{
	g_autoptr(GPtrArray) names = NULL;

	if (app->args->len > 0) {
		names = g_ptr_array_new_with_free_func(g_free);
		for (guint i = 0; i < app->args->len; i++)
			g_ptr_array_add(names, g_strdup(g_ptr_array_index(app->args, i)));
	} else {
		names = cli_libvirt_list_domains(dir, source_out, error);
		if (names == NULL)
			return FALSE;
	}
	for (guint i = 0; i < names->len; i++) {
		const char *name = g_ptr_array_index(names, i);
		g_autoptr(GError) error_local = NULL;
		g_autoptr(CliLibvirtDomain) domain =
		    cli_libvirt_domain_load(dir, name, &error_local);
		CliTarget *target = g_new0(CliTarget, 1);
		const char *socket = NULL;
		const char *reach = NULL;

		target->scheme = CLI_TARGET_UNIX;
		target->name = g_strdup(name);
		target->tags = g_new0(char *, 1);
		if (domain != NULL)
			socket = cli_libvirt_domain_get_socket(domain, &error_local);
		if (socket != NULL) {
			target->path = g_strdup(socket);
			target->text = g_strdup_printf("unix:%s", socket);
			reach = "channel";
			d->n_channel++;
		} else if (domain != NULL && domain->socket == NULL && domain->problem == NULL &&
		           domain->qga_socket != NULL) {
			/* qemu-ga's only: reached through libvirt, as libvirt:NAME resolves it */
			target->text = g_strdup_printf("libvirt:%s", name);
			g_clear_error(&error_local);
			reach = "qga";
			d->n_qga++;
		} else {
			target->text = g_strdup_printf("libvirt:%s", name);
			/* a missing channel is a finding; unreadable XML is a failure */
			if (domain == NULL)
				d->n_broken++;
			else
				d->n_neither++;
		}
		cli_discover_add(app, d, target,
		                 domain != NULL
		                     ? cli_discover_result(name, domain->state, NULL, reach, domain)
		                     : NULL,
		                 error_local != NULL ? error_local->message : NULL);
	}
	return TRUE;
}

/* --connect pve:///: every VM of this node, running or not, and how each is reached. */
static void cli_discover_pve(CliApp *app, CliDiscovery *d)
{
	g_autofree char *dir = g_build_filename(cli_pve_get_etc(), "qemu-server", NULL);
	g_autofree char *node = cli_pve_local_node();
	g_autoptr(GError) error = NULL;
	g_autoptr(GArray) vmids = cli_pve_list_vmids(dir, &error);

	if (vmids == NULL) {
		g_autofree char *msg =
		    g_strdup_printf("cannot list this node's VMs: %s (is this a Proxmox VE node? "
		                    "%s and %s point elsewhere)",
		                    error->message, CLI_PVE_ETC_ENV, CLI_PVE_RUN_ENV);
		cli_discover_failure(app, d, "pve:///", NULL, msg);
		return;
	}
	for (guint i = 0; i < vmids->len; i++) {
		guint32 vmid = g_array_index(vmids, guint32, i);
		CliTarget *target = g_new0(CliTarget, 1);
		g_autoptr(CliPveVm) vm = cli_pve_vm_load(vmid, NULL, NULL);
		g_autoptr(JsonBuilder) b = json_builder_new();
		g_autofree char *qga = cli_pve_qga_path(vmid);
		const char *reach[1] = { NULL };
		gboolean running = cli_pve_vm_is_running(vmid);
		const char *state = running ? "running" : "stopped";

		target->text = g_strdup_printf("pve:%u", vmid);
		target->name = g_strdup(target->text);
		target->tags = g_new0(char *, 1);
		cli_target_set_pve(target, vmid, reach);
		if (!running)
			d->n_off++;
		else if (vm == NULL)
			d->n_broken++;
		else if (reach[0] == NULL)
			d->n_neither++;
		else if (g_strcmp0(reach[0], "qga") == 0)
			d->n_qga++;
		else
			d->n_channel++;
		/* a stopped VM is listed with the path it will have when it runs */
		if (!running && vm != NULL && vm->args_problem == NULL)
			reach[0] = vm->port_socket != NULL ? "port" : vm->agent ? "qga" : NULL;
		json_builder_begin_object(b);
		json_builder_set_member_name(b, "vmid");
		json_builder_add_int_value(b, vmid);
		cli_discover_add_string(b, "name", vm != NULL ? vm->name : NULL);
		cli_discover_add_string(b, "node", node);
		cli_discover_add_string(b, "state", state);
		cli_discover_add_string(b, "uri", NULL);
		cli_discover_add_string(b, "reach", reach[0]);
		cli_discover_add_string(b, "socket", vm != NULL ? vm->port_socket : NULL);
		cli_discover_add_string(b, "qga_socket", vm != NULL && vm->agent ? qga : NULL);
		json_builder_end_object(b);
		{
			g_autofree char *msg = g_strdup(target->error);
			cli_discover_add(app, d, target, json_builder_get_root(b), msg);
		}
	}
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
	const char *dir = cli_libvirt_get_dir(app->opts.libvirt_dir);
	g_autoptr(GPtrArray) results = g_ptr_array_new();
	g_autoptr(GPtrArray) errors = g_ptr_array_new_with_free_func(g_free);
	g_autofree char *source = NULL;
	CliDiscovery d = { results, errors, 0, 0, 0, 0, 0 };

	app->targets = g_ptr_array_new_with_free_func((GDestroyNotify)cli_target_free);
	if (app->opts.connect != NULL && cli_pve_is_uri(app->opts.connect[0])) {
		if (g_strv_length(app->opts.connect) > 1 || app->args->len > 0) {
			g_set_error_literal(
			    error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT,
			    "discover --connect pve:/// takes no other connection and "
			    "no DOMAIN");
			return CLI_EXIT_USAGE;
		}
		if (!cli_pve_check_uri(app->opts.connect[0], error))
			return CLI_EXIT_USAGE;
		source = g_strdup("Proxmox VE");
		cli_discover_pve(app, &d);
	} else if (dir != NULL) {
		if (!cli_discover_dir(app, &d, dir, &source, error))
			return CLI_EXIT_GUEST;
	} else {
		cli_virt_set_timeout(app->opts.timeout);
		cli_discover_api(app, &d);
	}
	cli_app_add_guests(app);
	for (guint i = 0; i < app->guests->len; i++)
		cli_discover_set(g_ptr_array_index(app->guests, i), g_ptr_array_index(results, i),
		                 g_ptr_array_index(errors, i));
	if (!cli_app_write_output(app, error))
		return CLI_EXIT_USAGE;
	if (!app->opts.quiet) {
		g_autofree char *from = cli_escape_terminal(source != NULL ? source
		                                            : dir != NULL  ? "the named domains"
		                                                           : "libvirt");
		g_printerr(
		    "guestbench: %u domain(s) from %s: %u with a guestbench channel, %u with "
		    "only qemu-ga's, %u with neither, %u not running, %u unreadable\n",
		    app->guests->len, from, d.n_channel, d.n_qga, d.n_neither, d.n_off, d.n_broken);
		for (guint i = 0; i < app->guests->len; i++) {
			const char *msg = g_ptr_array_index(errors, i);
			g_autofree char *esc = NULL;
			if (msg == NULL)
				continue;
			esc = cli_escape_terminal(msg);
			g_printerr("guestbench: %s\n", esc);
		}
	}
	return d.n_broken > 0 ? CLI_EXIT_GUEST : CLI_EXIT_OK;
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
