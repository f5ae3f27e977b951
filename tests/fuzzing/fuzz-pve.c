/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Proxmox VE's files as the CLI reads them: a VM config (VMID.conf, written
 * by whoever may edit the VM, args: by root), cpu-models.conf and .members.
 * The same bytes go to all three parsers.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "guestbench-protocol.h"
#include "fleet/pve.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	g_autoptr(GError) error = NULL;
	g_autoptr(CliPveVm) vm = NULL;
	g_autoptr(GHashTable) models = NULL;
	g_autoptr(CliPveMembers) members = NULL;
	g_autoptr(GError) error_models = NULL;
	g_autoptr(GError) error_members = NULL;

	if (size > CLI_PVE_MAX_FILE_SIZE)
		return 0;
	models = cli_pve_cpu_models_parse((const char *)data, size, &error_models);
	if ((models == NULL) == (error_models == NULL))
		abort();
	vm = cli_pve_vm_parse(100, (const char *)data, size, &error);
	if (vm == NULL) {
		if (error == NULL || !g_utf8_validate(error->message, -1, NULL))
			abort();
	} else {
		g_autoptr(JsonNode) node = cli_pve_vm_to_json(vm, models);
		/* a socket found in args: is absolute, and never beside a problem */
		if (vm->port_socket != NULL &&
		    (vm->port_socket[0] != '/' || vm->args_problem != NULL))
			abort();
		if (node == NULL || vm->cpu_type == NULL)
			abort();
	}
	members = cli_pve_members_parse((const char *)data, size, &error_members);
	if ((members == NULL) == (error_members == NULL))
		abort();
	for (guint i = 0; members != NULL && i < members->nodes->len; i++) {
		const CliPveNode *node = g_ptr_array_index(members->nodes, i);
		if (strchr(node->name, '/') != NULL || node->name[0] == '-')
			abort();
	}
	return 0;
}
