/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"

#include <string.h>

#include "gb-error.h"

#include "fleet/pve.h"
#include "fleet/target.h"
#include "render/escape.h"

/*
 * pve:VMID, and --connect pve:/// (every VM of this node): the best path to
 * each running VM that exists. Our own port when the VM's args: adds one and
 * its socket is there; else qemu-ga's VMID.qga through the qga: bridge (the
 * agent binary runs through guest-exec); else the VM's error says what is
 * missing and the qm commands that add it. The host view comes from
 * VMID.qmp. Nothing is kept open: each request connects anew, as PVE's own
 * tools do.
 */

static char *cli_pve_describe_vm(guint32 vmid, const CliPveVm *vm)
{
	if (vm != NULL && vm->name != NULL)
		return g_strdup_printf("VM %u (%s)", vmid, vm->name);
	return g_strdup_printf("VM %u", vmid);
}

char *cli_pve_missing_port_hint(guint32 vmid)
{
	g_autofree char *args = cli_pve_port_args(vmid);

	return g_strdup_printf(
	    "add our port: qm set %u --args '%s' (root only), then a cold restart: qm shutdown "
	    "%u && qm start %u; or qemu-ga's: qm set %u --agent 1, install qemu-guest-agent in "
	    "the guest and cold-restart",
	    vmid, args, vmid, vmid, vmid);
}

void cli_target_set_pve(CliTarget *target, guint32 vmid, const char *reach_out[1])
{
	g_autoptr(GError) error = NULL;
	g_autoptr(CliPveVm) vm = NULL;
	g_autofree char *who = NULL;
	g_autofree char *qga = NULL;
	const char *reach = NULL;

	target->vmid = vmid;
	target->scheme = CLI_TARGET_UNIX;
	g_free(target->qmp);
	target->qmp = cli_pve_qmp_path(vmid);
	vm = cli_pve_vm_load(vmid, NULL, &error);
	who = cli_pve_describe_vm(vmid, vm);
	if (vm == NULL) {
		target->error = g_strdup(error->message);
		goto out;
	}
	if (vm->args_problem != NULL) {
		/* a line we refuse is the operator's to look at: not silently bypassed */
		target->error = g_strdup_printf("%s: %s", who, vm->args_problem);
		goto out;
	}
	if (!cli_pve_vm_is_running(vmid)) {
		target->error = g_strdup_printf("%s is not running", who);
		goto out;
	}
	qga = cli_pve_qga_path(vmid);
	if (vm->port_socket != NULL && g_file_test(vm->port_socket, G_FILE_TEST_EXISTS)) {
		target->path = g_strdup(vm->port_socket);
		reach = "port";
		goto out;
	}
	if (vm->agent && g_file_test(qga, G_FILE_TEST_EXISTS)) {
		target->scheme = CLI_TARGET_QGA;
		target->path = g_steal_pointer(&qga);
		reach = "qga";
		goto out;
	}
	if (vm->port_socket != NULL) {
		target->error =
		    g_strdup_printf("%s: args: adds our port on %s, but there is no such socket: "
		                    "args: takes effect "
		                    "after a cold restart (qm shutdown %u && qm start %u)",
		                    who, vm->port_socket, vmid, vmid);
		goto out;
	}
	if (vm->agent) {
		target->error = g_strdup_printf(
		    "%s: agent: 1 is set, but there is no %s: it takes effect after a cold restart "
		    "(qm shutdown %u && qm start %u)",
		    who, qga, vmid, vmid);
		goto out;
	} else {
		g_autofree char *hint = cli_pve_missing_port_hint(vmid);
		target->error = g_strdup_printf(
		    "%s has neither our port (args:) nor qemu-ga (agent: 1): %s", who, hint);
	}
out:
	if (reach_out != NULL)
		reach_out[0] = reach;
}

gboolean cli_target_parse_pve(CliTarget *target, const char *text, GError **error)
{
	guint32 vmid = 0;

	if (!cli_pve_parse_vmid(text, &vmid, error)) {
		g_prefix_error(error, "invalid target '%s': ", target->text);
		return FALSE;
	}
	cli_target_set_pve(target, vmid, NULL);
	return TRUE;
}

gboolean cli_pve_is_uri(const char *uri)
{
	return uri != NULL && (g_str_has_prefix(uri, "pve:") || g_str_has_prefix(uri, "pve+"));
}

gboolean cli_pve_is_remote_uri(const char *uri)
{
	return uri != NULL &&
	       (g_str_has_prefix(uri, "pve+ssh://") || g_strcmp0(uri, "pve:///cluster") == 0);
}

char **cli_pve_remote_hosts(const char *uri, GError **error)
{
	g_autoptr(GPtrArray) hosts = g_ptr_array_new_with_free_func(g_free);

	if (g_str_has_prefix(uri, "pve+ssh://")) {
		g_autofree char *host = g_strdup(uri + strlen("pve+ssh://"));
		gsize n = strlen(host);
		const char *at = strchr(host, '@');

		if (n > 0 && host[n - 1] == '/')
			host[n - 1] = '\0';
		/* a node of PVE's: a host name, optionally USER@ before it, nothing after */
		if (host[0] == '\0' || strchr(host, '/') != NULL || strchr(host, ':') != NULL ||
		    strchr(host, '?') != NULL || (at != NULL && (at == host || at[1] == '\0'))) {
			g_set_error(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT,
			            "--connect %s: expected pve+ssh://[USER@]NODE/", uri);
			return NULL;
		}
		g_ptr_array_add(hosts, g_steal_pointer(&host));
	} else if (g_strcmp0(uri, "pve:///cluster") == 0) {
		g_autoptr(GError) error_local = NULL;
		g_autoptr(CliPveMembers) members = cli_pve_members_load(&error_local);

		if (members == NULL) {
			g_set_error(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT,
			            "--connect pve:///cluster: %s",
			            error_local != NULL ? error_local->message
			                                : "no .members: this node is in no cluster "
			                                  "(pve:/// is this node)");
			return NULL;
		}
		for (guint i = 0; i < members->nodes->len; i++) {
			const CliPveNode *node = g_ptr_array_index(members->nodes, i);
			g_ptr_array_add(hosts, g_strdup(node->name));
		}
		if (hosts->len == 0) {
			g_set_error_literal(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT,
			                    "--connect pve:///cluster: .members lists no node");
			return NULL;
		}
	} else {
		g_set_error(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT,
		            "--connect %s: not a remote Proxmox VE connection", uri);
		return NULL;
	}
	g_ptr_array_add(hosts, NULL);
	return (char **)g_ptr_array_steal(hosts, NULL);
}

gboolean cli_pve_check_uri(const char *uri, GError **error)
{
	if (g_strcmp0(uri, "pve:///") == 0 || g_strcmp0(uri, "pve://") == 0)
		return TRUE;
	g_set_error(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT,
	            "--connect %s: a Proxmox VE connection is pve:/// (this node), "
	            "pve+ssh://[USER@]NODE/ or pve:///cluster",
	            uri);
	return FALSE;
}

/* A node that could not be read: one row, so that it is never silently missing. */
static CliTarget *cli_pve_failed(const char *text, const char *message)
{
	CliTarget *target = g_new0(CliTarget, 1);

	target->scheme = CLI_TARGET_UNIX;
	target->text = g_strdup(text);
	target->name = g_strdup(text);
	target->tags = g_new0(char *, 1);
	target->error = g_strdup(message);
	return target;
}

GPtrArray *cli_targets_from_pve(gboolean running_only, GError **error)
{
	g_autoptr(GPtrArray) targets =
	    g_ptr_array_new_with_free_func((GDestroyNotify)cli_target_free);
	g_autofree char *dir = g_build_filename(cli_pve_get_etc(), "qemu-server", NULL);
	g_autoptr(GError) error_local = NULL;
	g_autoptr(GArray) vmids = cli_pve_list_vmids(dir, &error_local);
	guint n_off = 0;

	if (vmids == NULL) {
		g_autofree char *msg = g_strdup_printf(
		    "cannot list this node's VMs: %s (is this a Proxmox VE node? %s and %s "
		    "point elsewhere)",
		    error_local->message, CLI_PVE_ETC_ENV, CLI_PVE_RUN_ENV);
		g_ptr_array_add(targets, cli_pve_failed("pve:///", msg));
		return g_steal_pointer(&targets);
	}
	for (guint i = 0; i < vmids->len; i++) {
		guint32 vmid = g_array_index(vmids, guint32, i);
		CliTarget *target;

		if (running_only && !cli_pve_vm_is_running(vmid)) {
			n_off++;
			continue;
		}
		target = g_new0(CliTarget, 1);
		target->text = g_strdup_printf("pve:%u", vmid);
		target->name = g_strdup(target->text);
		target->tags = g_new0(char *, 1);
		cli_target_set_pve(target, vmid, NULL);
		g_ptr_array_add(targets, target);
	}
	if (n_off > 0)
		g_printerr("guestbench: pve:///: %u VM(s) not running, left out\n", n_off);
	if (targets->len == 0)
		g_ptr_array_add(targets, cli_pve_failed("pve:///", "no running VM on this node"));
	(void)error;
	return g_steal_pointer(&targets);
}
