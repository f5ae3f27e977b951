/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * An inventory file (--inventory FILE, @FILE): a key file with one
 * [guest NAME] group per guest. libvirt: targets are looked up in a
 * directory that does not exist, so that no input reaches the host's libvirt.
 */
#include "config.h"

#include <stdlib.h>

#include "fuzz.h"
#include "guestbench-protocol.h"
#include "fleet/inventory.h"
#include "fleet/libvirt.h"
#include "fleet/target.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	g_autoptr(GError) error = NULL;
	g_autoptr(GPtrArray) guests = NULL;
	const char *const tags[] = { "web", NULL };
	CliTargetOptions opts = { 0 };

	g_setenv(CLI_LIBVIRT_DIR_ENV, "/nonexistent/guestbench-fuzz", TRUE);
	/* virsh is the fallback for libvirt: targets: never run it from a fuzzer */
	g_setenv("PATH", "/nonexistent/guestbench-fuzz", TRUE);
	if (size > 1024 * 1024)
		return 0;
	guests = cli_inventory_parse("/inventory.ini", (const char *)data, size, NULL, &error);
	if (guests == NULL) {
		if (error == NULL || !g_utf8_validate(error->message, -1, NULL))
			abort();
		return 0;
	}
	opts.tags = tags;
	for (guint i = 0; i < guests->len; i++) {
		CliTarget *target = g_ptr_array_index(guests, i);
		g_autofree char *key = cli_target_to_key(target);
		g_autoptr(CliTarget) copy = cli_target_copy(target);

		if (key == NULL || copy == NULL)
			abort();
		cli_inventory_guest_selected(target, &opts);
	}
	return 0;
}
